"""One learner seat against opponent policies: a Gymnasium env for stable-baselines3.

>>> env = SingleAgentEnv("soko", num_players=2)
>>> obs, info = env.reset(seed=0)
>>> obs.shape, env.action_masks().dtype
((606,), dtype('bool'))
>>> done = False
>>> while not done:
...     obs, reward, done, truncated, info = env.step(1)   # check or call down
>>> reward == env.game.payoffs[info["learner_seat"]] / env.rules.big_bet
True

Each episode is one hand. The opponents act inside :meth:`SingleAgentEnv.step` (and inside
``reset`` when they act before the learner), so every ``step`` returns the learner's next
decision, and the reward is the learner's own result: 0 until the hand ends, then exactly
``game.payoffs[learner] / big_bet`` (``reward="chips"``: the chips). This is not PettingZoo's SB3
tutorial wrapper, which hands the acting player's reward to the next player. When the learner
folds or is all-in, the opponents play the hand out inside the same ``step``.

Observation: the learner's flat vector of :mod:`envs.observation` (``Box(0, 1, (size,),
float32)``; ``dict_observation=True`` gives PettingZoo's ``Dict(observation, action_mask)``).
Actions: the ids of :mod:`envs.actions`. :meth:`action_masks` returns the legal ids, so
``sb3_contrib.MaskablePPO`` works with ``DummyVecEnv`` and ``SubprocVecEnv``. Any other action
id is played as check/fold (fold when folding is legal, else check, call or the forced
bring-in) and counted in ``info["illegal_actions"]``; ``illegal_action="raise"`` raises
``ValueError`` instead.

Opponents
---------
A pool of policies; each opponent seat draws one per hand (``opponent_weights`` or uniform).
An entry is one of:

- ``"random"``: uniformly random legal actions (``envs.actions.random_action``, as the
  ``random`` agent) drawn from the env's own generator (so ``reset(seed=...)`` replays whole
  hands);
- an agent: an object with ``act(view, action_mask) -> action id``, where ``view`` is the
  engine's ``game.view(seat)``, or ``act_game(game, seat, action_mask)`` (agents from
  ``agents/`` fit here, duck-typed, trained policies included). It plays through
  ``envs.actions.choose_action``, as in a tournament, and ``reset(seed)``, when it has one, is
  called before every hand with a seed drawn from the env's generator;
- any other callable ``policy(observation, action_mask) -> action id`` with that seat's flat
  observation.

``set_opponents(pool, weights=None)`` swaps the pool while training runs (from the next hand
on); under ``SubprocVecEnv`` call it with ``vec_env.env_method("set_opponents", pool)`` (the
pool is pickled to the workers: use module-level functions or picklable objects).

``reset(seed=None, options=None)``: ``options`` as the AEC envs (``"deck"``, ``"button"``,
``"stacks"``) plus ``"learner_seat"`` for this hand. The learner's seat is drawn each hand
unless ``learner_seat`` is fixed. A hand in which the
learner never gets to act (only possible with stacks so short that it is all-in from the
ante) is not an episode: it is played out and a new hand dealt.

Info: every step has ``"action_mask"`` and ``"learner_seat"``; the last step of a hand adds
``"payoff"`` (chips), ``"payoffs"``, ``"showdown"`` (the hand reached a showdown),
``"learner_showdown"`` (the learner took part in it), ``"folded"``, ``"vpip"`` (the learner
called, completed, bet or raised in the first betting round: the bring-in is not voluntary),
``"actions"`` (counts of the learner's fold, check, call, bring_in, complete, bet, raise),
``"opponents"`` (the pool index playing each seat, None for the learner) and
``"illegal_actions"``: what a training script needs for poker/* statistics (fold rate,
showdown rate, aggression, VPIP).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from envs.actions import (
    CHECK_CALL,
    FOLD,
    action_id,
    action_mask,
    apply_action,
    checked_action,
    choose_action,
    is_agent,
    num_actions,
    random_action,
)
from envs.backends import make_encoder
from envs.engine.game import ACTION_KINDS, BET_KINDS, Game
from envs.engine.rules import Rules
from envs.stud_env import check_env_args, keyword_names, make_rules, new_game, normalize_stacks, render_text

GAMES = {
    "soko": ("soko", "soko_nordic", "soko_mini"),
    "follow_the_bitch": ("follow_the_bitch", "follow_the_bitch_low_chicago"),
}
VOLUNTARY = BET_KINDS | {"call"}  # chips put in by choice (VPIP counts them on the first round)
RANDOM = "random"
MAX_SKIPPED_HANDS = 1000


def _check_opponent(opponent: Any) -> None:
    if isinstance(opponent, str):
        if opponent == RANDOM:
            return
    elif is_agent(opponent) or callable(opponent):
        return
    raise ValueError(f"an opponent is 'random', an object with act(view, action_mask), or a callable "
                     f"policy(observation, action_mask); got {opponent!r}")


class SingleAgentEnv(gymnasium.Env):
    """One learner seat of a stud game; the other seats are played by opponent policies."""

    metadata = {"render_modes": ["ansi", "human"], "render_fps": 1}

    def __init__(self, game: str = "soko", *, num_players: int = 2,
                 opponents: Sequence[Any] | None = None, opponent_weights: Sequence[float] | None = None,
                 learner_seat: int | None = None, illegal_action: str = "check_fold",
                 dict_observation: bool = False, render_mode: str | None = None, stacks=None,
                 rules: Rules | str | None = None, reward: str = "big_bets",
                 observation_features: Sequence[str] = (), **overrides) -> None:
        game = game.removesuffix("_v0")
        if game not in GAMES:
            raise ValueError(f"unknown game {game!r}; games are {', '.join(GAMES)}")
        self.rules = r = make_rules(game, GAMES[game], rules, env_args=keyword_names(type(self)), **overrides)
        check_env_args(r, num_players, render_mode, reward, self.metadata["render_modes"])
        if learner_seat is not None and not (type(learner_seat) is int and 0 <= learner_seat < num_players):
            raise ValueError(f"learner_seat must be None (drawn each hand) or a seat 0..{num_players - 1}, "
                             f"not {learner_seat!r}")
        if illegal_action not in ("check_fold", "raise"):
            raise ValueError(f"illegal_action must be 'check_fold' or 'raise', not {illegal_action!r}")
        self.num_players = num_players
        self.learner_seat = learner_seat
        self.illegal_action = illegal_action
        self.dict_observation = dict_observation
        self.render_mode = render_mode
        self.stacks = normalize_stacks(stacks, num_players)
        self.reward_unit = reward
        self.encoder = make_encoder(r, features=observation_features)
        self.layout = self.encoder.layout
        self.num_actions = num_actions(r)
        box = spaces.Box(0.0, 1.0, (self.layout.size,), np.float32)
        if dict_observation:
            self.observation_space = spaces.Dict({
                "observation": box, "action_mask": spaces.Box(0, 1, (self.num_actions,), np.int8)})
        else:
            self.observation_space = box
        self.action_space = spaces.Discrete(self.num_actions)
        self.game: Game | None = None
        self.seat = 0
        self.seat_opponents: list[int | None] = []
        self._mask = np.zeros(self.num_actions, dtype=np.int8)
        self.set_opponents([RANDOM] if opponents is None else opponents, opponent_weights)

    # ------------------------------------------------------------------------------------
    # Opponents

    def set_opponents(self, opponents: Sequence[Any], weights: Sequence[float] | None = None) -> None:
        """Replace the opponent pool (used from the next hand on); ``weights``: draw chances."""
        pool = list(opponents)
        if not pool:
            raise ValueError("the opponent pool is empty: give at least one opponent ('random' will do)")
        for opponent in pool:
            _check_opponent(opponent)
        if weights is None:
            cumulative = None
        else:
            w = [float(x) for x in weights]
            if len(w) != len(pool) or any(not x >= 0 for x in w) or sum(w) <= 0:
                raise ValueError(f"opponent weights must be {len(pool)} non-negative numbers with a "
                                 f"positive sum, not {list(weights)!r}")
            total = sum(w)
            cumulative = list(np.cumsum(w) / total)
        self.opponents = pool
        self._cumulative_weights = cumulative

    def _draw_opponent(self) -> int:
        rng = self.np_random
        if self._cumulative_weights is None:
            return int(rng.integers(len(self.opponents)))
        return min(bisect_right(self._cumulative_weights, rng.random()), len(self.opponents) - 1)

    def _opponent_action(self, seat: int) -> int:
        game = self.game
        mask = action_mask(game, self.num_actions)
        opponent = self.opponents[self.seat_opponents[seat]]
        if isinstance(opponent, str):  # "random", from the env's generator
            return random_action(mask, self.np_random)
        if is_agent(opponent):
            return choose_action(opponent, game, mask)
        action = opponent(self.encoder.encode(game, seat), mask)
        return checked_action(action, mask, agent=opponent, seat=seat)

    def _play_opponents(self) -> None:
        game = self.game
        seat = self.seat
        while not game.is_over and game.current_player != seat:
            apply_action(game, self._opponent_action(game.current_player))

    # ------------------------------------------------------------------------------------
    # Gymnasium API

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        options = dict(options or {})
        fixed = options.pop("learner_seat", self.learner_seat)
        n = self.num_players
        for skipped in range(MAX_SKIPPED_HANDS):
            self.seat = seat = int(self.np_random.integers(n)) if fixed is None else int(fixed)
            self.seat_opponents = [None if s == seat else self._draw_opponent() for s in range(n)]
            for index in sorted({i for i in self.seat_opponents if i is not None}):
                opponent = self.opponents[index]
                if is_agent(opponent) and callable(getattr(opponent, "reset", None)):
                    opponent.reset(int(self.np_random.integers(2**63)))  # agents re-seed per hand
            self.game = new_game(self.rules, n, self.np_random, stacks=self.stacks, options=options)
            self._counts = dict.fromkeys(ACTION_KINDS, 0)
            self._illegal = 0
            self._vpip = False
            self._play_opponents()
            if not self.game.is_over:
                break
            if "deck" in options and fixed is not None:
                raise ValueError(f"in this deal the learner (seat {seat}) never gets to act: the hand "
                                 "is over before its turn, so it cannot be an episode")
        else:
            raise RuntimeError(f"the learner did not get to act in {MAX_SKIPPED_HANDS} hands in a row "
                               "(are its stacks shorter than the ante?)")
        self._skipped = skipped
        obs = self._observe()
        info = {"action_mask": self._mask.copy(), "learner_seat": seat, "skipped_hands": skipped}
        if self.render_mode == "human":
            self.render()
        return obs, info

    def step(self, action):
        game = self.game
        if game is None or game.is_over:
            raise RuntimeError("the hand is over: call reset() before step()")
        action = action_id(action)  # a float or a string is refused, not cut to an id
        mask = self._mask
        if not (0 <= action < self.num_actions and mask[action]):
            if self.illegal_action == "raise":
                raise ValueError(f"action {action} is not legal for the learner (seat {self.seat}); "
                                 f"legal ids: {np.flatnonzero(mask).tolist()}")
            self._illegal += 1
            action = FOLD if mask[FOLD] else CHECK_CALL
        before = len(game.log)
        street = game.street
        apply_action(game, action)
        kind = game.log[before].kind
        self._counts[kind] += 1
        if street == 0 and kind in VOLUNTARY:
            self._vpip = True
        self._play_opponents()
        obs = self._observe()
        info = {"action_mask": self._mask.copy(), "learner_seat": self.seat}
        if game.is_over:
            payoff = game.payoffs[self.seat]
            reward = payoff / self.rules.big_bet if self.reward_unit == "big_bets" else float(payoff)
            info.update(self._episode_info(payoff))
            terminated = True
        else:
            reward = 0.0
            terminated = False
        if self.render_mode == "human":
            self.render()
        return obs, reward, terminated, False, info

    def action_masks(self) -> np.ndarray:
        """The learner's legal action ids as booleans (all False once the hand is over)."""
        return self._mask.astype(bool)

    def render(self) -> str | None:
        if self.render_mode is None:
            gymnasium.logger.warn("render() was called without a render_mode (choose 'ansi' or 'human')")
            return None
        names = [("learner" if s == self.seat else f"opponent{self.seat_opponents[s]}")
                 for s in range(self.num_players)] if self.game is not None else None
        text = render_text(self.game, names)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    # ------------------------------------------------------------------------------------

    def _observe(self):
        obs, self._mask = self.encoder.observe(self.game, self.seat)
        if self.dict_observation:
            return {"observation": obs, "action_mask": self._mask.copy()}
        return obs

    def _episode_info(self, payoff: int) -> dict[str, Any]:
        game = self.game
        showdown = any(e.kind == "show" for e in game.log)
        folded = game.folded[self.seat]
        return {
            "payoff": payoff,
            "payoffs": game.payoffs,
            "showdown": showdown,
            "learner_showdown": showdown and not folded,
            "folded": folded,
            "vpip": self._vpip,
            "actions": dict(self._counts),
            "opponents": tuple(self.seat_opponents),
            "illegal_actions": self._illegal,
        }
