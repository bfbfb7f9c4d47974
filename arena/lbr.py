"""Local best response (Lisý and Bowling, 2017): a lower bound on an agent's exploitability in
heads-up games with one face-down card per player (Soko heads-up, ``soko_mini``).

:class:`LBRAgent` plays against one *target* agent whose action probabilities it can ask for
(``Agent.policy``, or one pass over every card for ``ppo`` models). It keeps the target's
*range*: a weight for every card the target's face-down card could be. At each of the target's
decisions every card's weight is multiplied by the probability with which the target, holding
that card, takes the action it took (Bayes; the target's spot is replayed from the log with that
card swapped in). At each of its own decisions LBR compares fold, check/call and each bet or
raise by their value *if both sides only check or call from there on*:

* ``wp``: LBR's expected share of the pot at showdown against the range, exactly on the last
  street (every card of the range) and by seeded roll-outs of the cards to come before it (the
  same roll-outs score every card of the range, :func:`equity_by_hole`; when fewer ordered deals
  remain than ``samples``, they are all enumerated, so ``soko_mini`` is exact throughout);
* fold: 0; check/call: ``wp * pot - (1 - wp) * to_call``;
* bet/raise putting in ``put`` chips, ``extra = put - to_call`` of which the target must call:
  ``fp * pot + (1 - fp) * (wp' * (pot + extra) - (1 - wp') * put)``, where ``fp`` is the
  target's fold probability to that raise over the range (its policy in the spot after the
  raise) and ``wp'`` is ``wp`` against the range that does not fold.

The best of these is played (ties: the lowest id). For a ``ppo`` target with a plain MLP actor
the compiled core computes its policy over the range (:class:`CoreTargetPolicy`,
``engine="auto"`` or ``"core"``; docs/core.md, "Local best response in the core"): the same
decisions as the Python reference (``engine="python"``), several times faster, and
:class:`BatchedLBR` plays every hand slot of the batched training env at once. LBR is a legal
strategy, so what it wins in a duplicate match against the target (``arena.match.play_match``:
both seats, luck correction available) is a lower bound on the target's exploitability, with a
95% interval.

It needs: two players, no wild cards and no Low Chicago, one face-down card each (Follow the
Bitch deals three and more: its range would be tens of thousands of hands, so there only the
learned best response applies, ``train/ppo.py --target``).

>>> from arena.match import play_match
>>> r = play_match("soko_mini", [LBRAgent("call"), "call"], hands=200, seed=0)
>>> r.bb_per_100["lbr:call"] > 0
True
"""

from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np

from agents.base import Agent
from agents.registry import display_name, make_agent
from envs.actions import CHECK_CALL, FIRST_BET, FOLD, action_mask, apply_action
from envs.batched import showdown_shares
from envs.engine.cards import Card
from envs.engine.events import ACTION_KINDS, BET_KINDS, EventKind
from envs.engine.game import Game, PlayerView
from envs.engine.rules import DOWN, Rules, hand_options
from envs.observation import OBSERVER_BATCHES

__all__ = ["LBRAgent", "BatchedLBR", "CoreTargetPolicy", "ENGINES", "core_target_supported", "equity_by_hole",
           "check_rules", "action_id"]

_ONE_CARD = tuple((Card(c),) for c in range(52))
"""The face-down cards ``(card,)`` of each card id, built once (the range's candidates)."""


def check_rules(rules: Rules, num_players: int = 2) -> None:
    """A ValueError of one line unless LBR applies to ``rules`` (see the module docstring)."""
    downs = sum(s.cards.count(DOWN) for s in rules.streets)
    if num_players != 2:
        raise ValueError(f"local best response is heads-up only, not {num_players} players")
    if rules.follow_the_queen or rules.low_chicago:
        raise ValueError(f"local best response needs a game without wild cards or Low Chicago; "
                         f"{rules.name} has them (use the learned best response)")
    if downs != 1:
        raise ValueError(f"local best response needs one face-down card per player; {rules.name} "
                         f"deals {downs} (use the learned best response)")


def action_id(game: Game, event) -> int:
    """The action id (``envs.actions``) of a logged action, in the spot ``game`` is in just
    before it."""
    kind = event.kind
    if kind == EventKind.FOLD:
        return FOLD
    if kind in BET_KINDS:
        return FIRST_BET + game.raise_to_amounts().index(event.round_total)
    return CHECK_CALL


# ---------------------------------------------------------------------------------------------
# Win probability against every face-down card


def equity_by_hole(rules: Rules, mine: list[int], their_up: list[int], candidates: np.ndarray, *,
                   to_come: tuple[int, int], samples: int, rng: np.random.Generator,
                   unseen: np.ndarray) -> np.ndarray:
    """My expected share of the pot at showdown (1 win, 1/2 tie, 0 loss) against each candidate
    face-down card of the other player, (len(candidates),).

    ``mine``: my cards; ``their_up``: the other's face-up cards; ``to_come``: (my, its) cards
    still to come; ``unseen``: the cards I cannot see (candidates among them). The cards to
    come are every ordered deal from ``unseen`` (when there are at most ``samples``) or
    ``samples`` random ones; for each candidate only the deals without it count, which are
    exactly the deals that can follow it."""
    mine_n, theirs_n = to_come
    k = mine_n + theirs_n
    pool = np.asarray(unseen)
    future, draws = _deals(pool, k, samples, rng)
    if draws is not None:
        # pool[argsort(draws, axis=1)[:, :k]], the first k by a selection in the core instead of
        # a whole sort (the same deals: the draws are distinct)
        from envs import _stud_core

        future = pool[_stud_core.smallest_k(draws, k)]
    return showdown_shares(mine, their_up, candidates, future, mine_n, **hand_options(rules))


def _deals(pool: np.ndarray, k: int, samples: int, rng: np.random.Generator
           ) -> tuple[np.ndarray | None, np.ndarray | None]:
    """The roll-outs' cards to come from ``pool``, as (future, None): every ordered deal of
    ``k`` cards ((deals, k) card ids) when there are at most ``samples``; else (None, draws):
    ``samples`` rows of uniform draws over the pool, whose ``k`` smallest pick each deal."""
    if math.perm(len(pool), k) <= samples:   # (on the last street k = 0: one deal of nothing)
        deals = list(itertools.permutations(np.asarray(pool).tolist(), k))
        return np.array(deals, dtype=np.int64).reshape(len(deals), k), None
    return None, rng.random((samples, len(pool)))


# ---------------------------------------------------------------------------------------------
# The target's policy for every face-down card


class _TargetPolicy:
    """The target's action probabilities in one spot for each candidate face-down card."""

    def __init__(self, target: Agent, rules: Rules) -> None:
        self.target = target
        self.rules = rules
        self.encoder = None
        # The target asked what it can do (agents.base "Capabilities"), not what it is. One that
        # decides from the observation vector (a ppo model): one batched pass over the candidate
        # cards. Its observation differs from card to card in the face-down card's one-hot and in
        # the pieces written from the face-down cards (the observer pieces: hand_class,
        # win_probability, ...), which are written for each candidate into the columns they occupy.
        features = target.observation_features
        if features is not None:
            from envs.backends import make_encoder

            # LBR's own encoder: the target's follows the real game.
            self.encoder = make_encoder(rules, features=features)
            self.hole = self.encoder.layout.slice("hole_cards")
            self.observers = [(p.start, p.size, p.observer, OBSERVER_BATCHES.get(p.name))
                              for p in self.encoder.layout if p.observer is not None]
            self.columns = np.concatenate([np.arange(self.hole.start, self.hole.stop)]
                                          + [np.arange(start, start + size)
                                             for start, size, _, _ in self.observers])

    def __call__(self, game: Game, seat: int, candidates: np.ndarray) -> np.ndarray:
        """(len(candidates), actions): the target's policy in ``game`` (``seat`` to act) if it
        held each candidate card face down."""
        mask = action_mask(game)
        blind = self.target.blind_policy(mask)
        if blind is not None:   # a policy of the legal ids alone says nothing about the cards
            probs = np.asarray(blind, dtype=np.float64)
            return np.broadcast_to(probs, (len(candidates), len(mask)))
        if self.encoder is not None:
            obs = self.encoder.encode(game, seat, observers=not self.observers)   # written per card below
            obs[self.hole] = 0.0
            if not self.observers:
                return self.target.probabilities_with_ones(obs, self.hole.start + candidates, mask)
            values = np.zeros((len(candidates), len(self.columns)), dtype=np.float32)
            values[np.arange(len(candidates)), candidates] = 1.0  # the face-down card's one-hot
            at = 52
            holes = [_ONE_CARD[c] for c in candidates.tolist()]
            for start, size, write, batch in self.observers:
                obs[start:start + size] = 0.0
                if batch is not None:   # every candidate at once (win_probability: one core call)
                    values[:, at:at + size] = batch(self.encoder, game, seat, holes)
                else:
                    for i, hole in enumerate(holes):
                        write(values[i, at:at + size], self.encoder, game, seat, hole)
                at += size
            return self.target.probabilities_with_values(obs, self.columns, values, mask)
        view = game.view(seat)
        log = list(view.log)
        at = next(i for i, e in enumerate(log) if e.kind == EventKind.DEAL and not e.up and e.seat == seat)
        out = np.empty((len(candidates), len(mask)))
        for i, c in enumerate(candidates.tolist()):
            card = Card(c)
            log[at] = log[at]._replace(card=card)
            probs = self.target.policy(dataclasses.replace(view, hole_cards=(card,), log=tuple(log)), mask)
            if probs is None:
                raise ValueError(f"agent {display_name(self.target)!r} does not give its action "
                                 "probabilities (Agent.policy): no local best response (use the "
                                 "learned best response)")
            out[i] = probs
        return out


def core_target_supported(target: Agent) -> bool:
    """Whether the core computes ``target``'s policy over its range (:class:`CoreTargetPolicy`):
    the target gives a network the core runs (``agents.base.Agent.core_network``: a ``ppo``
    model whose actor is a plain MLP). Any other target is asked by :class:`_TargetPolicy`."""
    return target.core_network() is not None


class CoreTargetPolicy:
    """The target's action probabilities for each candidate face-down card in spots of hands
    held by the core (``envs.batched.BatchedGame``), computed by the core (``src/arena/lbr.h``,
    ``LbrTarget``): each candidate's observation encoded by the core with that card as the
    target's face-down card, the network run on it row by row, the masked softmax (a one-hot
    when the model is deterministic), many spots in one call. The same probabilities as
    :class:`_TargetPolicy` up to float32 rounding (``tests/test_lbr_core.py``)."""

    def __init__(self, target: Agent, rules: Rules, win_samples: int | None = None) -> None:
        from envs import _stud_core
        from envs.actions import num_actions
        from envs.observation import WIN_EXACT, WIN_SAMPLES, build_layout

        self.rules = rules
        self.win_samples = WIN_SAMPLES if win_samples is None else win_samples   # win_probability's deals
        layers, deterministic = target.core_network()
        layout = build_layout(rules, target.observation_features)
        self.core = _stud_core.LbrTarget(
            layers, deterministic, [(p.name, p.start, p.size) for p in layout],
            layout.size, rules.max_players, rules.num_streets, num_actions(rules), self.win_samples,
            WIN_EXACT)

    def spots(self, game, slots, seats, actions, candidates: list[np.ndarray]) -> list[np.ndarray | None]:
        """For each spot ``i`` (hand ``slots[i]`` of the ``BatchedGame`` ``game``, after the
        action id ``actions[i]`` of its player to act when it is not -1): the target's policy
        at ``seats[i]`` for each card of ``candidates[i]``, (len, actions), or None when the
        target is not to act there."""
        counts = np.array([len(c) for c in candidates], dtype=np.int64)
        cards = np.concatenate(candidates).astype(np.int64) if len(candidates) else np.zeros(0, np.int64)
        probs, to_act = self.core.policies(game._core, np.asarray(slots, dtype=np.int64),
                                           np.asarray(seats, dtype=np.int64),
                                           np.asarray(actions, dtype=np.int64), cards, counts)
        out, at = [], 0
        for n, here in zip(counts.tolist(), to_act.tolist()):
            out.append(probs[at:at + n] if here else None)
            at += n
        return out

    def __getstate__(self):
        raise TypeError("a CoreTargetPolicy holds the core's network: build it again in the process")


# ---------------------------------------------------------------------------------------------
# The agent


ENGINES = ("auto", "core", "python")
"""Where the target's policy over the range is computed (``LBRAgent(engine=...)``): ``core`` by
:class:`CoreTargetPolicy` on a core copy of the hand (``ppo`` models with a plain MLP actor),
``python`` by :class:`_TargetPolicy` on a replayed ``Game`` (any target: the reference),
``auto`` the core where it applies."""


def _total(x: np.ndarray) -> float:
    """The sum of ``x`` added first to last. NumPy's sums and dot products add in orders of their
    own (pairwise, by BLAS); the core's local best response (``src/arena/lbr_play.h``) adds in
    this one, so both compare the same floats and make the same decisions."""
    return float(np.add.accumulate(x)[-1]) if len(x) else 0.0


def _bet_value(pot: int, to_call: int, put: int, w: np.ndarray, eq: np.ndarray, fold: np.ndarray | None,
               wp: float) -> float:
    """A bet or raise putting in ``put`` chips: ``fp * pot + (1 - fp) * (wp' * (pot + extra) -
    (1 - wp') * put)`` (the module docstring); ``fold``: the target's fold probability per
    candidate after it (None: it is not to act then)."""
    if fold is None:
        fold = np.zeros(len(w))
    extra = put - to_call
    fp = _total(w * fold)
    stay = w * (1 - fold)
    kept = _total(stay)
    wp_called = _total(stay * eq) / kept if kept > 0 else wp
    return fp * pot + (1 - fp) * (wp_called * (pot + extra) - (1 - wp_called) * put)


def _bayes(weights: np.ndarray, candidates: np.ndarray, likelihood: np.ndarray) -> np.ndarray:
    """The range after an action the target takes with probability ``likelihood`` (per
    candidate card); unchanged if no card explains it (a policy that is not the one it played)."""
    posterior = weights.copy()
    posterior[candidates] *= likelihood
    return posterior if (posterior > 0).any() else weights


def _weights(rules: Rules, range_: np.ndarray, seen: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """The candidate cards and their normalised weights at a decision: the range without the
    cards seen now, or every unseen card when nothing explains the target's play."""
    weights = range_.copy()
    weights[seen] = 0.0
    if not (weights > 0).any():   # nothing explains its play: back to every unseen card
        weights = np.zeros(52)
        weights[[int(c) for c in rules.deck]] = 1.0
        weights[seen] = 0.0
    candidates = np.flatnonzero(weights)
    return candidates, weights[candidates] / _total(weights[candidates])


def _equity_against(rules: Rules, mine: list[int], their_up: list[int], seen: list[int], samples: int,
                    rng: np.random.Generator) -> np.ndarray:
    """(52,) my showdown share against each card I cannot see as the other's face-down card
    (:func:`equity_by_hole` over every unseen card)."""
    unseen_mask = np.zeros(52, dtype=bool)
    unseen_mask[[int(c) for c in rules.deck]] = True
    unseen_mask[seen] = False
    unseen = np.flatnonzero(unseen_mask)   # sorted, as the roll-outs expect
    total = rules.cards_per_player
    eq = np.zeros(52)
    eq[unseen] = equity_by_hole(rules, mine, their_up, unseen,
                                to_come=(total - len(mine), total - 1 - len(their_up)),
                                samples=samples, rng=rng, unseen=unseen)
    return eq


def _values(action_mask: np.ndarray, pot: int, to_call: int, committed: int, raise_to_amounts, w: np.ndarray,
            eq: np.ndarray, folds: dict[int, np.ndarray | None]) -> dict[int, float]:
    """Each legal action's value if both sides only check or call from there on (the module
    docstring); ``folds``: the target's fold probabilities after each bet or raise id."""
    wp = _total(w * eq)
    values = {FOLD: 0.0, CHECK_CALL: wp * pot - (1 - wp) * to_call}
    for a, fold in folds.items():
        values[a] = _bet_value(pot, to_call, raise_to_amounts[a - FIRST_BET] - committed, w, eq, fold, wp)
    return {a: v for a, v in values.items() if action_mask[a]}


def _best(values: dict[int, float]) -> int:
    """The action of the highest value (ties: the lowest id)."""
    return max(values, key=lambda a: (values[a], -a))


class LBRAgent(Agent):
    """Local best response to ``target`` (an agent or a spec); ``samples`` roll-outs of the
    cards to come per decision before the last street; ``engine``: where the target's policy
    over the range is computed (:data:`ENGINES`; the same decisions either way, up to float32
    rounding of the network's outputs). ``win_samples``: the deals of the target's
    ``win_probability`` piece as this agent computes it when it supposes each card (None: the
    piece's own ``envs.observation.WIN_SAMPLES``, the target's policy as the target plays it);
    fewer model the target less exactly for less time (training's
    ``opponents.self_play.lbr_win_samples``); the core engine only."""

    def __init__(self, target: Agent | str, *, samples: int = 200, engine: str = "auto",
                 win_samples: int | None = None) -> None:
        super().__init__()
        if engine not in ENGINES:
            raise ValueError(f"LBRAgent engine must be one of {', '.join(ENGINES)}, not {engine!r}")
        if win_samples is not None and (type(win_samples) is not int or win_samples < 1):
            raise ValueError(f"LBRAgent win_samples is a whole number of deals from 1, or None, "
                             f"not {win_samples!r}")
        self.target = make_agent(target)
        self.samples = samples
        self.engine = engine
        self.win_samples = win_samples
        self.name = f"lbr:{display_name(self.target)}"
        self._policy: _TargetPolicy | None = None
        self._core: CoreTargetPolicy | None = None
        self._mirror = None   # the core's copy of the hand (envs.batched.BatchedGame, one slot)
        self._range: np.ndarray | None = None
        self._seen_actions = 0
        self._eq_key: tuple | None = None
        self._eq = np.zeros(52)
        self.last_values: dict[int, float] = {}

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        state["_core"] = state["_mirror"] = None   # core objects: built again where it plays
        return state

    def reset(self, seed=None) -> None:
        super().reset(seed)
        self._range = None
        self._seen_actions = 0
        self._eq_key = None

    def uses_core(self, rules: Rules) -> bool:
        """Whether this agent asks the core for the target's policy at ``rules`` (``engine``)."""
        if self.engine == "python":
            return False
        supported = core_target_supported(self.target)
        if self.engine == "core" and not supported:
            raise ValueError(f"LBRAgent(engine='core') needs a ppo target with a plain MLP actor, not "
                             f"{display_name(self.target)!r} (use engine='auto' or 'python')")
        return supported

    def batched_follower(self, game, rules: Rules) -> BatchedLBR | None:
        """:class:`BatchedLBR` in ``game`` when the core runs the target (:meth:`uses_core`)."""
        return BatchedLBR(self, game) if self.uses_core(rules) else None

    def recipe(self) -> tuple:
        """``("lbr", target spec, samples)``; ValueError for a target that has no spec, or for
        ``win_samples`` set (a training opponent's setting, which the recipe does not carry)."""
        if self.win_samples is not None:
            raise ValueError(f"{self.name}: a local best response with win_samples set has no recipe "
                             "to travel as")
        target = self.target.recipe()
        if not isinstance(target, str):
            raise ValueError(f"the target {display_name(self.target)!r} of a local best response has no spec "
                             "to travel as (a local best response to a local best response cannot)")
        return ("lbr", target, int(self.samples))

    def warm_up(self, rules: Rules) -> None:
        """Build the target's hand tables, once per process (the roll-outs need none: the core
        scores them), and the target's policy over the range for ``rules``, which copies of
        this agent share (the batched training env plays a copy per hand)."""
        check_rules(rules)
        self._target_policy(rules)
        warm = getattr(self.target, "warm_up", None)
        if warm is not None:
            warm(rules)

    def _target_policy(self, rules: Rules) -> None:
        if self.uses_core(rules):
            if self._core is None or self._core.rules != rules:
                from envs.batched import BatchedGame

                check_rules(rules)
                self._core = CoreTargetPolicy(self.target, rules, self.win_samples)
                self._mirror = BatchedGame(rules, 2, 1, auto_reset=False)
        elif self.win_samples is not None:
            raise ValueError(f"{self.name}: win_samples needs the core engine (a ppo target with a plain "
                             f"MLP actor, engine 'auto' or 'core'), not engine {self.engine!r}")
        elif self._policy is None or self._policy.rules != rules:
            check_rules(rules)
            self._policy = _TargetPolicy(self.target, rules)

    @property
    def range(self) -> np.ndarray | None:
        """Weights (52,) of the target's face-down card (unnormalised; None before the hand)."""
        return self._range

    def _deck(self, view: PlayerView) -> tuple[list[int], set[int]]:
        """The hand's deal order from ``view`` (the target's face-down card a stand-in, then the
        rest of the deck), and the cards seen; sets the range up at the hand's first decision
        and clears every card seen now from it."""
        rules = view.rules
        if self._range is None:
            self._range = np.zeros(52)
            self._range[[int(c) for c in rules.deck]] = 1.0
            self._range[[int(c) for c in view.hole_cards]] = 0.0
        seen = {int(c) for c in view.hole_cards} | {int(c) for up in view.up_cards for c in up}
        self._range[list(seen)] = 0.0   # a card seen now is not its face-down card
        stand_ins = iter(int(c) for c in rules.deck if int(c) not in seen)
        deck = [int(e.card) if e.card is not None else next(stand_ins)
                for e in view.log if e.kind == EventKind.DEAL]
        dealt = set(deck)
        deck += [int(c) for c in rules.deck if int(c) not in dealt]   # a whole order: no shuffle
        return deck, seen

    def _replay(self, view: PlayerView, other: int):
        """The hand replayed from ``view`` (the target's face-down card a stand-in), updating
        the range at every target action not yet seen: a ``Game``, or with the core the
        one-slot ``BatchedGame`` that holds the hand."""
        self._target_policy(view.rules)
        if self._core is not None and self.uses_core(view.rules):
            return self._replay_core(view, other)
        rules = view.rules
        if view.num_players != 2:
            check_rules(rules, view.num_players)
        deck, _ = self._deck(view)
        stacks = tuple(s + t for s, t in zip(view.stacks, view.total_committed))
        game = Game(rules, view.num_players, stacks=stacks, button=view.button, deck=deck, seed=0)
        actions = 0
        for event in view.log:
            if event.kind not in ACTION_KINDS:
                continue
            if actions >= self._seen_actions and event.seat == other:
                self._update(game, other, action_id(game, event))
            actions += 1
            game.play_logged(event)
        self._seen_actions = actions
        return game

    def _replay_core(self, view: PlayerView, other: int):
        """:meth:`_replay` on the core: the hand dealt and played again in the one-slot
        ``BatchedGame`` (no log there: each action id from the logged event, as ``action_id``)."""
        if view.num_players != 2:
            check_rules(view.rules, view.num_players)
        deck, _ = self._deck(view)
        mirror = self._mirror
        stacks = [s + t for s, t in zip(view.stacks, view.total_committed)]
        mirror.reset(decks=[deck], buttons=[view.button], stacks=[stacks])
        actions = 0
        step = np.zeros(1, dtype=np.int64)
        for event in view.log:
            kind = event.kind
            if kind not in ACTION_KINDS:
                continue
            if kind == EventKind.FOLD:
                a = FOLD
            elif kind in BET_KINDS:
                a = FIRST_BET + mirror.raise_to_amounts(0).index(event.round_total)
            else:
                a = CHECK_CALL
            if actions >= self._seen_actions and event.seat == other:
                candidates = np.flatnonzero(self._range > 0)
                if len(candidates):
                    probs = self._core.spots(mirror, [0], [other], [-1], [candidates])[0]
                    self._range = _bayes(self._range, candidates, probs[:, a])
            actions += 1
            step[0] = a
            mirror.step(step)
        self._seen_actions = actions
        return mirror

    def _update(self, game: Game, other: int, action: int) -> None:
        candidates = np.flatnonzero(self._range > 0)
        if not len(candidates):
            return
        self._range = _bayes(self._range, candidates, self._policy(game, other, candidates)[:, action])

    def act(self, view: PlayerView, action_mask: np.ndarray) -> int:
        legal = np.flatnonzero(action_mask)
        if len(legal) == 1:
            return int(legal[0])   # the range catches up at the next decision
        me, other = view.seat, 1 - view.seat
        game = self._replay(view, other)
        seen = [int(c) for c in view.hole_cards] + [int(c) for up in view.up_cards for c in up]
        candidates, w = _weights(view.rules, self._range, seen)
        eq = self._equity(view, seen)[candidates]
        bets = [int(a) for a in legal if a >= FIRST_BET]
        folds = self._folds_after(game, view, other, bets, candidates) if bets else []
        self.last_values = _values(action_mask, view.pot, view.to_call, view.committed[me],
                                   view.raise_to_amounts, w, eq, dict(zip(bets, folds)))
        return _best(self.last_values)

    def _folds_after(self, game, view: PlayerView, other: int, bets: list[int],
                     candidates: np.ndarray) -> list[np.ndarray | None]:
        """The target's fold probability per candidate in the spot after each bet or raise of
        ``bets`` (None where it is not to act then)."""
        if self._core is not None and game is self._mirror:   # every spot in one core call
            spots = self._core.spots(game, [0] * len(bets), [other] * len(bets), bets,
                                     [candidates] * len(bets))
            return [None if p is None else p[:, FOLD] for p in spots]
        out = []
        for i, a in enumerate(bets):
            # The spot after the raise (the last size raises on this replay, others on a new one).
            after = self._after(game if i == len(bets) - 1 else self._fresh(view, other), other, a)
            out.append(None if after is None else self._policy(after, other, candidates)[:, FOLD])
        return out

    def _equity(self, view: PlayerView, seen: list[int]) -> np.ndarray:
        """(52,) my showdown share against each unseen card as the target's face-down card;
        computed once per street (the cards do not change between decisions of a street)."""
        key = tuple(seen)
        if self._eq_key != key:
            me, other = view.seat, 1 - view.seat
            mine = [int(c) for c in view.hole_cards] + [int(c) for c in view.up_cards[me]]
            their_up = [int(c) for c in view.up_cards[other]]
            self._eq_key, self._eq = key, _equity_against(view.rules, mine, their_up, seen, self.samples,
                                                          self.rng)
        return self._eq

    def _fresh(self, view: PlayerView, other: int) -> Game:
        """Another replay of the hand (the range is up to date already, so nothing changes)."""
        return self._replay(view, other)

    @staticmethod
    def _after(game: Game, other: int, action: int) -> Game | None:
        """``game`` after LBR plays ``action`` (None when the target is not to act then)."""
        apply_action(game, action)
        return game if game.current_player == other else None


# ---------------------------------------------------------------------------------------------
# Every hand of a batch at once


class _Hand:
    """One hand's Python state in :class:`BatchedLBR`: its seat, its seed and, for a hand
    whose roll-outs' draws are made here (no seed the core takes), their generator (the range,
    the likelihoods, the equities and the other draws are the core's, ``LbrPlayer``)."""

    __slots__ = ("seat", "seed", "rng")

    def __init__(self, seat: int) -> None:
        self.seat = seat                 # the local best response's seat
        self.seed: int | None = None     # its generator's seed, given at its first turn
        self.rng: np.random.Generator | None = None


class BatchedLBR:
    """An :class:`LBRAgent` (its target, roll-outs and decisions) playing in many hand slots of
    one core ``envs.batched.BatchedGame`` at once: the batched training env's form of a local
    best response (``train/batched_vec.py``), with no ``Game`` and no log.

    The core keeps each hand's range and decides (``LbrPlayer``, ``src/arena/lbr_play.h``), the
    target's policy over the range from :class:`CoreTargetPolicy`'s network for every slot in
    one call: at each of the target's actions (:meth:`observe`, before the action is played)
    the probability of that action for every card the local best response cannot see, kept
    until its next decision; at each decision (:meth:`act`) the spots after every bet or raise
    of every slot deciding. At a decision the kept likelihoods multiply the range in order,
    exactly as ``LBRAgent._replay`` updates it from the log (each card seen by then cleared
    first, a likelihood that no card explains skipped), and the values are
    :func:`_values`' in the same floats (every sum added in order, :func:`_total`), so the
    decisions are ``LBRAgent``'s for the same hand and seed (``tests/test_lbr_core.py``). The
    roll-outs' random draws come from each hand's own generator, ``default_rng(seed)``: the
    core's copy of it for a hand seeded with an integer below 2**64 (:meth:`seed`), NumPy's,
    made here, for one without a seed.

    Some spots cost no forward pass. A fold, or a check or call that ends the hand, leaves the
    local best response no decision, so its likelihood would never be read. Right after a bet or
    raise of the local best response, the spot is the one it weighed that bet in: the rows
    computed there are these rows (each row is computed on its own, so they are the same
    floats), read when the cards match."""

    def __init__(self, agent: LBRAgent, game) -> None:
        from envs import _stud_core

        rules = game.rules
        check_rules(rules, game.num_players)
        if not agent.uses_core(rules):
            raise ValueError(f"{agent.name}: no batched form for this target (engine {agent.engine!r})")
        self.game = game
        self.samples = agent.samples
        self.core = CoreTargetPolicy(agent.target, rules, agent.win_samples)
        options = hand_options(rules)   # (no wild cards: check_rules)
        self.player = _stud_core.LbrPlayer(
            self.core.core, [int(c) for c in rules.deck], self.samples, rules.cards_per_player,
            options["canadian"], options["double_ace_flush"], options["ace_low_four_straight"])
        self.hands: dict[int, _Hand] = {}

    def start(self, slot: int, seat: int) -> None:
        """A new hand in ``slot``, the local best response at ``seat``."""
        self.hands[slot] = _Hand(seat)
        self.player.start(slot, seat)

    def has(self, slot: int) -> bool:
        """Whether this agent plays the hand in ``slot``."""
        return slot in self.hands

    def seeded(self, slot: int) -> bool:
        """Whether the hand in ``slot`` has had the agent's first turn (its generator's seed)."""
        return self.hands[slot].seed is not None

    def seed(self, slot: int, seed: int) -> None:
        """Seed the generator of the hand in ``slot`` (``Agent.reset``: at the agent's first turn).
        A seed below 2**64 is the core's to draw from (NumPy's ``default_rng(seed)`` to the bit,
        ``src/util/numpy_rng.h``); another is drawn from here."""
        self.hands[slot].seed = seed
        ours = isinstance(seed, (int, np.integer)) and 0 <= seed < 1 << 64
        self.player.seed(slot, int(seed) if ours else None)

    def forget(self, slots) -> None:
        """The hands in ``slots`` ended."""
        slots = np.asarray(slots, dtype=np.int64).reshape(-1)
        for slot in slots.tolist():
            self.hands.pop(slot, None)
        self.player.forget(slots)

    def observe(self, slots, seats, actions) -> None:
        """The target at ``seats`` is about to play ``actions`` in ``slots`` (hands this agent
        plays in, from the other seat): keep the likelihood of each action for every card the
        local best response cannot see."""
        if len(slots):
            self.player.observe(self.game._core, np.asarray(slots, dtype=np.int64),
                                np.asarray(seats, dtype=np.int64), np.asarray(actions, dtype=np.int64))

    def ahead(self) -> None:
        """Start computing, on the core's second thread, the likelihoods the next :meth:`observe`
        will want: the target's policy at every spot of this agent's hands where the target is to
        act now, while the caller goes on (the training env calls it as it hands the learner its
        observations). The next :meth:`observe` reads the rows of each hand still in that spot;
        they are the rows it would compute (each row on its own), so the play is the same.
        Nothing with the core on one thread."""
        self.player.ahead(self.game._core)

    def finish_ahead(self) -> None:
        """Finish the rows :meth:`ahead` started, here, keeping them for :meth:`observe`: before
        the caller gives the core's second thread's core to other work."""
        self.player.finish_ahead()

    def act(self, slots, seats, masks: np.ndarray) -> np.ndarray:
        """The local best response's action ids in ``slots`` (it is to act at ``seats``;
        ``masks`` its legal ids there, one row per slot)."""
        slots = np.asarray(slots, dtype=np.int64)
        seats = np.asarray(seats, dtype=np.int64)
        rows, sizes, restarted = self.player.prepare(self.game._core, slots, seats, masks)
        for row in restarted.tolist():   # a hand begun under another pool: its range from here on
            self.hands[int(slots[row])] = _Hand(int(seats[row]))
        draws = []
        for row, size in zip(rows.tolist(), sizes.tolist()):   # the draws the core does not make
            h = self.hands[int(slots[row])]
            if h.rng is None:
                h.rng = np.random.default_rng(h.seed)   # (None: a fresh seed, as Agent's)
            draws.append(h.rng.random((self.samples, size)))
        return self.player.decide(self.game._core, draws)
