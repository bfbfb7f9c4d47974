"""A stable-baselines3 ``VecEnv`` of N hands on the compiled core, opponents played in batches.

``BatchedVecEnv`` is the training env (``train.ppo.training_env``). It gives MaskablePPO what
``VecMonitor(DummyVecEnv([SingleAgentEnv, ...]))`` would give it (``envs/single_agent.py``, the
Gymnasium view of one hand and this env's test oracle), with the same semantics, but every hand
lives in one ``envs.batched.BatchedGame`` and no hand is a Python object:

- slot ``i`` is one hand in which the learner sits at ``learner_seat[i]``, drawn uniformly per
  hand, and each other seat is played by an entry of the opponent pool drawn per hand by the
  pool's weights (as ``SingleAgentEnv``); with ``same_table`` (``opponents.same_table``), that
  share of the hands at three or more seats seats one draw in every opponent seat, a table of
  copies;
- ``step(actions)`` plays the learner's action in every slot, then the opponents act, in batches
  over all slots where an opponent of one pool entry is to act, until the learner is to act
  again in every slot. A hand that ends is re-dealt at once by the core (its slot's seeded
  stream, the button one seat on), and the new hand is played up to the learner's first
  decision in the same step;
- the reward is 0 until the hand ends, then the learner's payoff in big bets; the info of that
  step carries ``SingleAgentEnv``'s end-of-hand fields (``payoff``, ``payoffs``, ``showdown``,
  ``learner_showdown``, ``folded``, ``vpip``, ``actions``, ``opponents``, ``illegal_actions``)
  for ``train.callbacks.PokerStats``, plus ``terminal_observation`` and
  ``TimeLimit.truncated=False`` as SB3 expects. The core deals the next hand at once, so the
  terminal state is not kept: ``terminal_observation`` is the learner's observation at its last
  decision of the hand (SB3 reads it only for truncated episodes, and a hand always
  terminates). ``make_batched_vec_env`` wraps it in ``train.vec.EpisodeMonitor`` (SB3's
  ``VecMonitor``) for ``episode`` infos;
- ``env_method("action_masks")`` answers MaskablePPO from the core's mask array; an illegal
  learner id is played as check/fold and counted in ``illegal_actions`` (``SingleAgentEnv``'s
  default; it has no ``illegal_action="raise"``).

Opponents (``set_opponents(pool, weights)``, or ``train.vec.set_pool``): an agent with a batched
form (``Agent.batched(rules)``, an ``agents.base.BatchedPolicy``) is played for all its slots at
once; the env asks the agent, never its class. Those of the project:

============================== ================================================================
``"random"``, ``random``       uniform over the legal ids, vectorised from the masks
                               (``agents.heuristic.BatchedRandom``, the env's generator)
``call``, ``raise``            check or call; the smallest bet or raise when offered, else check
                               or call (``BatchedCall``, ``BatchedRaise``)
``tag``                        the core's port (``agents.heuristic.BatchedTag``)
``equity``                     the core's port (``agents.equity.BatchedEquity``): the same
                               decision as ``EquityAgent.decide`` for each key, the keys drawn
                               from a generator of this env per pool entry (seeded by the
                               env's seed and the entry's index)
``ppo``                        one forward pass over every slot where it acts
                               (``PPOAgent.choose_batch``), on the core's observation of that
                               seat, when its observation pieces (``observation_features``) are
                               this env's (a model with other pieces plays hand by hand)
``arena.lbr.LBRAgent``         with a target the core runs (``LBRAgent.uses_core``: a ``ppo``
                               model with a plain MLP actor): ``arena.lbr.BatchedLBR``, every
                               slot at once, the learner's actions' likelihoods kept as they are
                               played; the same decisions as the hand-by-hand copy below
============================== ================================================================

Any other ``agents.base.Agent`` (``arena.lbr.LBRAgent`` with ``engine="python"`` or another
target, a ``ppo`` model that reads other observation pieces, subclasses of the agents above,
which may decide otherwise...) plays hand by hand at Python speed, as ``SingleAgentEnv`` plays
it, on a reference ``Game`` of the hand built when it is first to act (the core's deck, button
and stacks, then the hand's actions so far, which the env logs) and kept up to date until the
hand ends, with its own copy of the agent for each such hand and seat (re-seeded from the env's
generator: per-hand state such as LBR's range stays with its hand). Pool entries that are not
agents are refused with a ValueError. Random draws (seats, opponents, random and
sampled-policy actions) come from one ``numpy.random.Generator`` seeded by
``seed()``/``reset()``, the decks from the core's per-slot streams seeded from the same seed:
the same seed replays the same hands and actions.
"""

from __future__ import annotations

import copy
from typing import Any, Sequence

import numpy as np
from gymnasium import spaces
from stable_baselines3.common.vec_env import VecEnv, VecMonitor

from agents.base import Agent, BatchedPolicy
from agents.heuristic import BatchedRandom
from arena.lbr import BatchedLBR
from envs.actions import CHECK_CALL, FOLD, action_mask, apply_action, choose_action
from envs.batched import BatchedGame
from envs.engine.events import ACTION_KINDS
from envs.engine.game import Game
from envs.engine.rules import Rules, get_rules

__all__ = ["BatchedVecEnv", "make_batched_vec_env", "batched_form", "opponent_unsupported"]

_KIND = {kind: k for k, kind in enumerate(ACTION_KINDS)}
_KIND_NAMES = tuple(str(kind) for kind in ACTION_KINDS)
_VOLUNTARY = np.zeros(len(ACTION_KINDS), dtype=bool)  # VPIP: chips put in by choice on the first round
for _name in ("call", "complete", "bet", "raise"):
    _VOLUNTARY[_KIND[_name]] = True
_FOLD_KIND = _KIND["fold"]
MAX_OPPONENT_ROUNDS = 10_000  # opponent actions in a row in one step before we call it a bug


def batched_form(opponent: Any, rules: Rules, features: Sequence[str]) -> BatchedPolicy | None:
    """The batched form of a pool entry (``"random"``: the env's own random opponent) in an env
    of ``rules`` whose core encodes the observation pieces ``features``, or None: it plays hand
    by hand on a reference copy of the hand (an agent without a batched form, or one whose form
    reads observations with other pieces than the core writes)."""
    if isinstance(opponent, str):
        return BatchedRandom() if opponent == "random" else None
    form = opponent.batched(rules) if isinstance(opponent, Agent) else None
    reads = None if form is None else form.observation_features
    if reads is not None and tuple(reads) != tuple(features):
        return None
    return form


def opponent_unsupported(opponent: Any) -> str | None:
    """Why ``opponent`` (a pool entry) cannot play in :class:`BatchedVecEnv`, or None if it can:
    every agent can (in batches through its batched form, else hand by hand), and ``"random"``."""
    if opponent == "random" or isinstance(opponent, Agent):
        return None
    return f"opponent {opponent!r} is not an agent (agents.base.Agent) or 'random'"


class BatchedVecEnv(VecEnv):
    """``n`` hands of ``rules`` at ``num_players`` seats, one learner seat each (module docstring).

    The core writes the observation of the player to act only for the learner's seat and the
    seats of opponents that read them (``BatchedPolicy.observation_features``: ``ppo``;
    ``BatchedGame.set_observed_seats``, set for each new hand
    and pool); ``observe_every_seat=True`` writes every seat's, as before (the same values
    where they are read, slower: a benchmark's A/B switch)."""

    render_mode = None  # hands are arrays here; SingleAgentEnv renders one (``render_mode="ansi"``)

    def __init__(self, rules: Rules | str, num_players: int, n: int, *,
                 observation_features: Sequence[str] = (), opponents: Sequence[Any] | None = None,
                 opponent_weights: Sequence[float] | None = None, seed: int = 0, threads: int = 1,
                 observe_every_seat: bool = False, same_table: float = 0.0,
                 checkdown_baseline: float = 0.0) -> None:
        self.rules = rules = get_rules(rules)
        if type(n) is not int or n < 1:
            raise ValueError(f"a BatchedVecEnv needs at least one hand slot, not {n!r}")
        self.features = tuple(observation_features)
        self.game = BatchedGame(rules, num_players, n, observations=True, observation_features=self.features,
                                threads=threads, keep_betting=True)   # strategy tables read it
        self.num_players = num_players
        if not 0 <= same_table <= 1:
            raise ValueError(f"same_table is a share of hands from 0 to 1, not {same_table!r}")
        self.same_table = float(same_table)
        if not 0 <= checkdown_baseline <= 2:
            raise ValueError(f"checkdown_baseline is a weight from 0 to 2, not {checkdown_baseline!r}")
        self.checkdown_baseline = float(checkdown_baseline)
        self.big_bet = rules.big_bet
        size = self.game.observations.shape[1]
        super().__init__(n, spaces.Box(0.0, 1.0, (size,), np.float32), spaces.Discrete(self.game.num_actions))
        self.learner_seat = np.zeros(n, dtype=np.int64)
        self.seat_opponents = np.full((n, num_players), -1, dtype=np.int64)   # pool index; -1: learner
        self._acted = np.zeros(n, dtype=bool)        # the learner has acted in this hand
        self._folded = np.zeros((n, num_players), dtype=bool)
        self._counts = np.zeros((n, len(ACTION_KINDS)), dtype=np.int64)
        self._vpip = np.zeros(n, dtype=bool)
        self._illegal = np.zeros(n, dtype=np.int64)
        self._last_obs = np.zeros((n, size), dtype=np.float32)
        self._potential = np.zeros(n)   # the check-down baseline at each slot's decision (big bets)
        self._seed = seed
        self._rng = np.random.default_rng(seed)
        self._actions: np.ndarray | None = None
        self._forms: list[BatchedPolicy | None] = []   # pool index -> its batched form (None: hand by hand)
        self._key_rngs: dict[int, np.random.Generator] = {}  # pool index -> its keys' generator
        # Hand-by-hand opponents: every step's actions (-1: none) since the oldest hand under
        # way began, and each slot's reference copy of its hand with its agents by seat.
        self._log: list[np.ndarray] = []
        self._log_start = 0                              # the step number of self._log[0]
        self._hand_start = np.zeros(n, dtype=np.int64)   # the step number each slot's hand began at
        self._copies: dict[int, tuple[Game, dict[int, Agent]]] = {}
        # Local best responses on the core (arena.lbr.BatchedLBR): pool index -> its batched
        # form, and those of earlier pools still playing hands begun under them.
        self._lbr: dict[int, BatchedLBR] = {}
        self._lbr_retired: list[BatchedLBR] = []
        self.observe_every_seat = observe_every_seat   # True: the core writes every seat's (as before)
        self.set_opponents(["random"] if opponents is None else opponents, opponent_weights)

    # ------------------------------------------------------------------------------------
    # Opponents

    def set_opponents(self, opponents: Sequence[Any], weights: Sequence[float] | None = None) -> None:
        """Replace the opponent pool (from each slot's next hand on); ``weights``: draw chances."""
        pool = list(opponents)
        if not pool:
            raise ValueError("the opponent pool is empty: give at least one opponent ('random' will do)")
        for opponent in pool:
            reason = opponent_unsupported(opponent)
            if reason:
                raise ValueError(reason)
        if weights is None:
            w = np.ones(len(pool))
        else:
            w = np.array([float(x) for x in weights])
            if len(w) != len(pool) or not (w >= 0).all() or w.sum() <= 0:
                raise ValueError(f"opponent weights must be {len(pool)} non-negative numbers with a "
                                 f"positive sum, not {list(weights)!r}")
        # The hands under way keep their entries' indices, now of this pool; an index past its
        # end (a smaller pool: entries of weight 0 are left out) keeps the earlier pool's entry,
        # never drawn for a new hand.
        self._drawable = len(pool)
        needed = int(self.seat_opponents.max()) + 1
        if needed > len(pool):
            pool += self.opponents[len(pool):needed]
            w = np.concatenate([w, np.zeros(needed - self._drawable)])
        self.opponents = pool
        self._forms = [batched_form(o, self.rules, self.features) for o in pool]   # asked once per pool
        self._cumulative = np.cumsum(w / w.sum())
        # LBR entries whose target the core runs play every slot at once (BatchedLBR); the
        # others (engine="python", targets without an MLP actor) hand by hand. An earlier
        # pool's keep the hands they are playing until those end.
        self._lbr_retired = [b for b in [*self._lbr_retired, *self._lbr.values()] if b.hands]
        followers = [o.batched_follower(self.game, self.rules) if isinstance(o, Agent) else None
                     for o in pool]
        self._lbr = {i: f for i, f in enumerate(followers) if f is not None}
        # Which pool entries read the core's observations (the others decide from the masks or
        # the core's own hands).
        self._reads = np.array([form is not None and form.observation_features is not None
                                for form in self._forms] + [True])  # [-1]: the learner
        self._observe(np.arange(self.num_envs))

    def _observe(self, slots: np.ndarray) -> None:
        """Tell the core whose observations to write in ``slots``: the learner's seat and the
        seats of pool entries that read them (``ppo``), or every seat with
        ``observe_every_seat``. The core skips encoding the others' (the features' Monte-Carlo
        most of all); their rows are zeros, which nobody reads."""
        if self.observe_every_seat:
            seats = np.ones((len(slots), self.num_players), dtype=bool)
        else:
            seats = self._reads[self.seat_opponents[slots]]
        self.game.set_observed_seats(seats, slots)

    def _new_hands(self, slots: np.ndarray) -> None:
        """Draw the learner's seat and the opponents for the hands just dealt in ``slots``."""
        k = len(slots)
        if not k:
            return
        seats = self._rng.integers(self.num_players, size=k)
        drawn = np.minimum(np.searchsorted(self._cumulative, self._rng.random((k, self.num_players)),
                                           side="right"),
                           self._drawable - 1)
        if self.same_table > 0 and self.num_players > 2:   # (heads-up, every table is one already)
            table = np.flatnonzero(self._rng.random(k) < self.same_table)
            # A table of copies: every seat plays the draw of the seat after the learner's.
            drawn[table] = drawn[table, (seats[table] + 1) % self.num_players][:, None]
        drawn[np.arange(k), seats] = -1
        self.learner_seat[slots] = seats
        self.seat_opponents[slots] = drawn
        self._acted[slots] = False
        self._folded[slots] = False
        self._counts[slots] = 0
        self._vpip[slots] = False
        self._illegal[slots] = 0
        if self._lbr or self._lbr_retired:
            for lbr in [*self._lbr_retired, *self._lbr.values()]:
                lbr.forget(slots)
            self._lbr_retired = [b for b in self._lbr_retired if b.hands]
            for index, lbr in self._lbr.items():
                for slot, seat in zip(*(drawn == index).nonzero()):
                    lbr.start(int(slots[slot]), int(seat))
        self._observe(slots)

    def _opponent_actions(self, slots: np.ndarray, seats: np.ndarray) -> np.ndarray:
        """The opponents' action ids in ``slots`` (their player to act at ``seats``)."""
        g = self.game
        out = np.empty(len(slots), dtype=np.int64)
        entries = self.seat_opponents[slots, seats]
        # The entries that act, in increasing order (np.unique's, a few microseconds cheaper).
        for index in np.bincount(entries, minlength=len(self.opponents)).nonzero()[0]:
            pick = entries == index
            rows = slots[pick]
            form = self._forms[index]
            if index in self._lbr:   # every slot at once, on the core
                lbr = self._lbr[int(index)]
                for slot, seat in zip(rows.tolist(), seats[pick].tolist()):
                    if not lbr.has(slot) or lbr.hands[slot].seat != seat:
                        lbr.start(slot, seat)   # (a hand begun under another pool)
                    if not lbr.seeded(slot):    # its first turn: a stream of its own, as a copy's
                        lbr.seed(slot, int(self._keys(-1).integers(2 ** 63)))
                out[pick] = lbr.act(rows, seats[pick], g.action_mask[rows])
            elif form is None:
                out[pick] = [self._hand_by_hand_action(slot, int(index)) for slot in rows.tolist()]
            else:   # every slot of this entry at once (NumPy, the core, or one forward pass)
                out[pick] = form.act_slots(g, rows, rng=self._rng, stream=self._keys(int(index)))
        return out

    def _hand_by_hand_action(self, slot: int, index: int) -> int:
        """Pool entry ``index``'s action in ``slot``, played on the hand's reference copy."""
        if slot not in self._copies:   # its first turn this hand: the hand so far, replayed
            state = self.game.state(slot)
            game = Game(self.rules, self.num_players, deck=state["deck"], button=state["button"],
                        stacks=state["starting_stacks"])
            for actions in self._log[self._hand_start[slot] - self._log_start:]:
                if actions[slot] >= 0:
                    apply_action(game, int(actions[slot]))
            self._copies[slot] = (game, {})
        game, agents = self._copies[slot]
        seat = game.current_player
        if seat != self.game.current_player[slot]:
            raise RuntimeError(f"hand slot {slot}: the reference copy has seat {seat} to act, the core "
                               f"{int(self.game.current_player[slot])}")
        if seat not in agents:
            agents[seat] = copy.copy(self.opponents[index])
            agents[seat].reset(int(self._keys(-1).integers(2 ** 63)))   # a stream of their own
        return choose_action(agents[seat], game, action_mask(game))

    def _keys(self, index: int) -> np.random.Generator:
        """The generator of the simulation keys of pool entry ``index`` (its own stream, so the
        keys do not shift the other draws; seeded by the env's seed at ``reset()``); index -1:
        the seeds of the hand-by-hand opponents' copies."""
        if index not in self._key_rngs:
            spawn = (3,) if index < 0 else (2, index)
            self._key_rngs[index] = np.random.default_rng(np.random.SeedSequence(self._seed, spawn_key=spawn))
        return self._key_rngs[index]

    # ------------------------------------------------------------------------------------
    # Playing

    def _play(self, actions: np.ndarray, learner: bool) -> np.ndarray:
        """Step every slot with ``actions`` (-1: leave it); returns the slots whose hand ended."""
        g = self.game
        playing = actions >= 0
        rows = playing.nonzero()[0]
        folds = rows[actions[rows] == FOLD]
        self._folded[folds, g.current_player[folds]] = True
        if learner:
            kinds, streets = g.action_kinds(actions)
            self._counts[rows, kinds[rows]] += 1
            self._vpip[rows] |= (streets[rows] == 0) & _VOLUNTARY[kinds[rows]]
            self._acted[rows] = True
        for slot, (game, _) in self._copies.items():
            if actions[slot] >= 0:
                apply_action(game, int(actions[slot]))
        if self._lbr or self._lbr_retired:   # the targets' actions, before they are played
            current = g.current_player
            for lbr in [*self._lbr_retired, *self._lbr.values()]:
                mine = [slot for slot in rows.tolist()
                        if slot in lbr.hands and lbr.hands[slot].seat != current[slot]]
                if mine:
                    lbr.observe(np.array(mine), current[mine], actions[mine])
        self._log.append(actions.copy())
        g.step(actions)
        ended = g.dones.nonzero()[0]
        self._hand_start[ended] = self._log_start + len(self._log)   # the next hands begin here
        if self._copies:
            for slot in ended.tolist():
                self._copies.pop(slot, None)
        drop = int(self._hand_start.min()) - self._log_start
        if drop > 0:
            del self._log[:drop]
            self._log_start += drop
        return ended

    def _finish(self, ended: np.ndarray, rewards: np.ndarray, dones: np.ndarray, infos: list) -> None:
        """Book the hands that ended in ``ended`` (episodes if the learner acted) and draw the next."""
        g = self.game
        episodes = ended[self._acted[ended]]
        if len(episodes):
            seats = self.learner_seat[episodes]
            all_payoffs = g.payoffs[episodes]
            payoff = all_payoffs[np.arange(len(episodes)), seats]
            rewards[episodes] = payoff / self.big_bet
            dones[episodes] = True
            folded = self._folded[episodes, seats]
            showdown = (~self._folded[episodes]).sum(axis=1) > 1
            terminal = list(self._last_obs[episodes])   # rows of a fresh array: they stay as they are
            columns = zip(episodes.tolist(), seats.tolist(), map(tuple, all_payoffs.tolist()),
                          payoff.tolist(), folded.tolist(), showdown.tolist(), self._vpip[episodes].tolist(),
                          self._counts[episodes].tolist(), self.seat_opponents[episodes].tolist(),
                          self._illegal[episodes].tolist(), terminal)
            for i, seat, payoffs, mine, fold, shown, vpip, counts, opponents, illegal, obs in columns:
                opponents[seat] = None   # the learner's seat, the only -1 of the row
                infos[i] = {
                    "learner_seat": seat,
                    "payoff": mine,
                    "payoffs": payoffs,
                    "showdown": shown,
                    "learner_showdown": shown and not fold,
                    "folded": fold,
                    "vpip": vpip,
                    "actions": dict(zip(_KIND_NAMES, counts)),
                    "opponents": tuple(opponents),
                    "illegal_actions": illegal,
                    "terminal_observation": obs,
                    "TimeLimit.truncated": False,
                }
        self._new_hands(ended)

    def _play_opponents(self, rewards: np.ndarray, dones: np.ndarray, infos: list) -> None:
        """Opponents act, in batches, until the learner is to act in every slot."""
        g = self.game
        actions = np.full(self.num_envs, -1, dtype=np.int64)
        for _ in range(MAX_OPPONENT_ROUNDS):
            current = g.current_player
            waiting = (current != self.learner_seat).nonzero()[0]
            if not len(waiting):
                return
            stuck = waiting[current[waiting] < 0]
            if len(stuck):
                raise RuntimeError(f"hand slot {int(stuck[0])} has nobody to act "
                                   f"(stacks shorter than the ante?)")
            actions[:] = -1
            actions[waiting] = self._opponent_actions(waiting, current[waiting])
            ended = self._play(actions, learner=False)
            if len(ended):
                self._finish(ended, rewards, dones, infos)
        raise RuntimeError(f"the opponents acted {MAX_OPPONENT_ROUNDS} times in a row "
                           f"without the learner's turn")

    # ------------------------------------------------------------------------------------
    # SB3's VecEnv API

    def reset(self) -> np.ndarray:
        seeds = np.random.SeedSequence(self._seed).generate_state(self.num_envs, dtype=np.uint64)
        self._rng = np.random.default_rng(np.random.SeedSequence(self._seed, spawn_key=(1,)))
        self._key_rngs = {}
        self._log, self._log_start, self._copies = [], 0, {}
        self._hand_start[:] = 0
        self.game.reset(seeds=seeds, buttons=self._rng.integers(self.num_players, size=self.num_envs))
        self._new_hands(np.arange(self.num_envs))
        rewards = np.zeros(self.num_envs, dtype=np.float32)
        dones = np.zeros(self.num_envs, dtype=bool)
        self._play_opponents(rewards, dones, [{} for _ in range(self.num_envs)])
        self.reset_infos = [{} for _ in range(self.num_envs)]
        self._potential = self._checkdown()
        self._last_obs = self.game.observations.copy()
        self._ahead()
        return self._last_obs

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions, dtype=np.int64).reshape(self.num_envs)

    def step_wait(self):
        g = self.game
        actions, self._actions = self._actions, None
        n = self.num_envs
        legal = (actions >= 0) & (actions < g.num_actions)
        legal[legal] = g.action_mask[legal.nonzero()[0], actions[legal]] != 0
        if not legal.all():  # played as check/fold, as SingleAgentEnv does (counted per hand)
            bad = (~legal).nonzero()[0]
            actions = actions.copy()
            actions[bad] = np.where(g.action_mask[bad, FOLD] != 0, FOLD, CHECK_CALL)
            self._illegal[bad] += 1
        rewards = np.zeros(n, dtype=np.float32)
        dones = np.zeros(n, dtype=bool)
        infos: list[dict] = [{} for _ in range(n)]
        ended = self._play(actions, learner=True)
        if len(ended):
            self._finish(ended, rewards, dones, infos)
        self._play_opponents(rewards, dones, infos)
        if self.checkdown_baseline:
            for i in dones.nonzero()[0].tolist():   # the hand's own reward, for the statistics
                infos[i]["hand_reward"] = float(rewards[i])
            # Potential-based shaping (Ng et al. 1999): a step earns the change of the potential,
            # and a hand's last step gives back its decision's potential, so a hand's rewards sum
            # to its payoff minus the potential of its first decision, and each decision's return
            # to go is its payoff minus its own potential: a baseline (the learner's action never
            # changes it, the policy gradient stays unbiased) that knows the cards still to come.
            now = self._checkdown()
            rewards += (np.where(dones, 0.0, now) - self._potential).astype(np.float32)
            self._potential = now
        # The array handed out is kept as the learner's last observation (SB3 copies, never
        # writes it): a finished hand's terminal_observation is its row.
        self._last_obs = g.observations.copy()
        self._ahead()
        return self._last_obs, rewards, dones, infos

    def _ahead(self) -> None:
        """The learner is to act in every slot: its local best responses' likelihoods of its
        next actions, computed on the core's second thread while it picks them."""
        for lbr in self._lbr.values():
            lbr.ahead()

    def finish_ahead(self) -> None:
        """Finish here what :meth:`_ahead` started (the rows are kept for the next step): the
        training calls it when a rollout ends, so that the gradient updates have both cores."""
        for lbr in self._lbr.values():
            lbr.finish_ahead()

    def _checkdown(self) -> np.ndarray:
        """The check-down baseline at every slot's decision (0 when off): ``checkdown_baseline``
        times the learner's payoff in big bets if everyone still in checked or called to the end
        with the real cards still to come (the core's ``checkdown_payoffs``). Only training's
        rewards read it; no observation holds it."""
        if not self.checkdown_baseline:
            return np.zeros(self.num_envs)
        payoffs = self.game.checkdown_payoffs()
        return self.checkdown_baseline * payoffs[np.arange(self.num_envs), self.learner_seat] / self.big_bet

    def action_masks(self) -> np.ndarray:
        """The learner's legal ids in every slot, bool (N, actions)."""
        return self.game.action_mask.astype(bool)

    def seed(self, seed: int | None = None) -> Sequence[None | int]:
        """Seed the next ``reset()`` (decks, seats, opponents and their random draws)."""
        if seed is not None:
            self._seed = int(seed)
        return [self._seed] * self.num_envs

    def close(self) -> None:
        pass

    def get_attr(self, attr_name: str, indices=None) -> list[Any]:
        return [getattr(self, attr_name)] * len(self._indices(indices))

    def set_attr(self, attr_name: str, value: Any, indices=None) -> None:
        if len(self._indices(indices)) != self.num_envs:
            raise ValueError("a BatchedVecEnv's attributes are shared by all its slots: set them for all")
        setattr(self, attr_name, value)

    def env_method(self, method_name: str, *method_args, indices=None, **method_kwargs) -> list[Any]:
        rows = self._indices(indices)
        if method_name == "action_masks":
            masks = self.action_masks()
            return list(masks) if rows == range(self.num_envs) else [masks[i] for i in rows]
        if len(rows) != self.num_envs:
            raise ValueError(f"{method_name}: a BatchedVecEnv's methods act on all its slots at once")
        return [getattr(self, method_name)(*method_args, **method_kwargs)] * len(rows)

    def env_is_wrapped(self, wrapper_class, indices=None) -> list[bool]:
        return [False] * len(self._indices(indices))

    def _indices(self, indices) -> Sequence[int]:
        if indices is None:
            return range(self.num_envs)
        if isinstance(indices, int):
            return [indices]
        return list(indices)


def make_batched_vec_env(env_cfg, *, n_envs: int, seed: int = 0, threads: int = 1,
                         same_table: float = 0.0, checkdown_baseline: float = 0.0) -> VecMonitor:
    """``EpisodeMonitor(BatchedVecEnv)`` for a config's ``env`` table (``train.config.EnvConfig``),
    the core stepping on ``threads`` threads (``ppo.env_threads``); ``same_table``: the share
    of hands at a table of copies (``opponents.same_table``); ``checkdown_baseline``: the
    weight of the check-down baseline in the rewards (``ppo.checkdown_baseline``)."""
    rules = get_rules(env_cfg.game, **env_cfg.rule_overrides())
    from train.vec import EpisodeMonitor

    return EpisodeMonitor(BatchedVecEnv(rules, env_cfg.players, n_envs,
                                    observation_features=env_cfg.observation_features, seed=seed,
                                    threads=threads, same_table=same_table,
                                    checkdown_baseline=checkdown_baseline))
