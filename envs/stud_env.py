"""Stud poker as PettingZoo AEC environments: ``soko_v0`` and ``follow_the_bitch_v0``.

>>> from envs import soko_v0
>>> env = soko_v0.env(num_players=3)
>>> env.reset(seed=7)
>>> for agent in env.agent_iter():
...     obs, reward, terminated, truncated, info = env.last()
...     env.step(None if terminated or truncated else 1)   # check or call down
>>> sum(env.unwrapped.game.payoffs)
0

This layer decides no rule: the hand is played by a backend (:mod:`envs.backends`), the compiled
core (:mod:`envs.batched`, one hand of ``envs._stud_core``; the default, ``engine="core"``) or
the reference engine's :class:`~envs.engine.game.Game` (``engine="reference"``), which play the
same rules, deal the same hands from the same seed and give the same observations, masks,
rewards and infos (``tests/test_env_engines.py``). The action ids are :mod:`envs.actions`, and
the observation is :mod:`envs.observation`. One episode is one hand.

| | |
|---|---|
| Import | `from envs import soko_v0, follow_the_bitch_v0` |
| Create | `soko_v0.env(num_players=2, render_mode=None, stacks=None, rules=None, reward="big_bets", observation_features=(), engine="core", **rules_fields)` |
| Agents | `player_0` ... `player_{n-1}`: agent `player_i` is seat `i`; 2..8 players (Soko), 2..7 (Follow the Bitch) |
| Actions | `Discrete(2 + sizes)`: 3 in fixed limit, 5 in spread limit, 6 in pot and no limit |
| Observation | `Dict(observation=Box(0, 1, (size,), float32), action_mask=Box(0, 1, (actions,), int8))` |
| Observation size | Soko 606 (fixed limit); Follow the Bitch 590, with Low Chicago 617 (+2 or +3 in other betting) |
| Rewards | at the end of the hand only: net chips / big bet (`reward="chips"`: raw chips); zero-sum |
| Infos | `{}` during the hand; at the end `payoff` (chips), `payoffs` (every seat), `showdown` |
| Episode | one hand; `env.unwrapped.game` is the hand as the engine's `Game` (with the core: replayed on first access, see below) |
| Engine | `engine="core"` (compiled, default) or `"reference"` (the Python `Game`); `env.unwrapped.engine` says which one plays |
| Render modes | `"ansi"` (returns a text table), `"human"` (prints it after each step) |

Keyword arguments: ``num_players`` (2 up to the game's maximum), ``render_mode``, ``stacks``
(chips per seat: one int for every seat or a list), ``rules`` (a preset name of this game, e.g.
``"soko_nordic"`` or ``"follow_the_bitch_low_chicago"``, or a ``Rules`` value), ``reward``
(``"big_bets"`` or ``"chips"``), ``observation_features`` (optional observation pieces, see
"Optional pieces" below; none by default), ``engine`` (``"core"`` or ``"reference"``, see below),
and any field of the rules data as an override (``low_chicago=True``, ``betting="no_limit"``,
``bring_in="highest"``, ...).

``engine``: ``"core"`` (the default) plays the hand on the compiled core, several times faster
(``bench/env_throughput.py``, figures in ``docs/results.md``); ``"reference"`` on the Python
``Game``. Both give the same hand for the same seed and options, step by step. With the core,
``env.unwrapped.game`` is a ``Game`` rebuilt on first access in a hand by replaying the deal
and the actions so far, then kept in step until the next ``reset()`` (so a ``Game`` held across
steps stays current): reading it makes the rest of that hand play at the reference engine's
speed. Read it, don't act on it. The core writes the optional pieces (``observation_features``)
too, with the same values (the switch is ``envs.batched.core_supports``).

``reset(seed=None, options=None)``: ``options`` may hold ``"deck"`` (cards top first, as the
engine takes them: a full order replays a deal exactly, a partial one is dealt first),
``"button"`` (the dealer seat) and ``"stacks"``; whatever is not given comes from the env's
generator, which ``seed`` reseeds. Unknown option keys are ignored.

Actions
-------

| Id | Action |
|---|---|
| 0 | fold (offered only when the player owes chips) |
| 1 | check or call; posts the bring-in when that is the choice |
| 2, 3, ... | bet, complete or raise to the sizes `Game.raise_to_amounts()` offers, ascending (2 is the smallest) |

The action mask marks exactly the engine's legal actions (all zeros for a seat that is not
to act). ``env()`` wraps the raw env in PettingZoo's ``TerminateIllegalWrapper`` (an illegal id
ends the hand with reward -1 for the offender, like ``texas_holdem_v4``),
``AssertOutOfBoundsWrapper`` and ``OrderEnforcingWrapper``; ``raw_env().step`` raises
``ValueError`` with the reference engine's reason instead (on the core too: the refused hand is
replayed on a ``Game`` to say why), and changes nothing. An id is an ``int`` or a NumPy
integer: a float, a string or a bool is a ``TypeError`` (``int()`` would cut ``1.7`` or ``"1"``
to check/call). Once every agent has taken its last (``None``) step, a further ``step()`` warns
and does nothing, as ``OrderEnforcingWrapper`` does.

Observation
-----------

One flat float32 vector of named pieces (:class:`envs.observation.Layout`), values in [0, 1].
Cards are one-hot at ``4 * rank + suit`` (ranks 2..A = 0..12, suits c d h s = 0..3); seats
are relative to the observer (slot 0 is the observer, slot 1 the next seat clockwise) and
padded to the game's maximum players. Chip amounts are scaled as :mod:`envs.observation`
says. Nothing in an agent's observation depends on another seat's face-down cards.

Soko (preset ``soko``, fixed limit):

| Index | Piece | Size | Meaning |
|---|---|---|---|
| 0-51 | `hole_cards` | 52 | own face-down cards (one-hot by card) |
| 52-467 | `up_cards` | 416 | face-up cards of each relative seat (8 x 52, seat-major) |
| 468 | `pot` | 1 | chips in the pot (antes included) |
| 469 | `to_call` | 1 | chips the observer must add to call (0 when not its turn) |
| 470 | `pot_odds` | 1 | to_call / (pot + to_call) |
| 471 | `raise_to_amounts` | 1 | raise-to total of action id 2+i when offered, else 0 |
| 472 | `bet_size` | 1 | this round's bet size / big bet |
| 473 | `raises` | 1 | bets and raises made this round / (1 + max_raises) |
| 474-477 | `street` | 4 | betting round, one-hot |
| 478-485 | `seated` | 8 | relative seat is at the table (0: padding) |
| 486-493 | `to_act` | 8 | relative seat is to act |
| 494-501 | `button` | 8 | relative seat has the button |
| 502-509 | `stack` | 8 | chips behind, per relative seat |
| 510-517 | `committed` | 8 | chips put in this betting round, per relative seat |
| 518-525 | `total_committed` | 8 | chips put in this hand (antes included), per relative seat |
| 526-533 | `folded` | 8 | relative seat has folded |
| 534-541 | `all_in` | 8 | relative seat is all-in |
| 542-605 | `history` | 64 | per relative seat and street (8 x 4 x 2, seat-major): bets/completions/raises, calls (bring-in included) |

Follow the Bitch with Low Chicago (preset ``follow_the_bitch_low_chicago``, fixed limit;
without Low Chicago the two ``chicago_*`` pieces are absent and later pieces move up by 27):

| Index | Piece | Size | Meaning |
|---|---|---|---|
| 0-51 | `hole_cards` | 52 | own face-down cards (one-hot by card) |
| 52-415 | `up_cards` | 364 | face-up cards of each relative seat (7 x 52, seat-major) |
| 416-429 | `wild_rank` | 14 | wild rank in force (2..A), last slot: nothing is wild |
| 430 | `queens_wild` | 1 | 1 when queens are wild (option queens_wild) |
| 431-482 | `wild_cards` | 52 | visible cards (own face-down and all face-up) that are wild now |
| 483-496 | `chicago_hole` | 14 | lowest face-down spade held (A, 2, ..., K), last slot: none |
| 497-509 | `chicago_up` | 13 | spades seen face up (A, 2, ..., K): none of them can win Low Chicago |
| 510 | `pot` | 1 | chips in the pot (antes included) |
| 511 | `to_call` | 1 | chips the observer must add to call (0 when not its turn) |
| 512 | `pot_odds` | 1 | to_call / (pot + to_call) |
| 513 | `raise_to_amounts` | 1 | raise-to total of action id 2+i when offered, else 0 |
| 514 | `bet_size` | 1 | this round's bet size / big bet |
| 515 | `raises` | 1 | bets and raises made this round / (1 + max_raises) |
| 516-518 | `street` | 3 | betting round, one-hot |
| 519-525 | `seated` | 7 | relative seat is at the table (0: padding) |
| 526-532 | `to_act` | 7 | relative seat is to act |
| 533-539 | `button` | 7 | relative seat has the button |
| 540-546 | `stack` | 7 | chips behind, per relative seat |
| 547-553 | `committed` | 7 | chips put in this betting round, per relative seat |
| 554-560 | `total_committed` | 7 | chips put in this hand (antes included), per relative seat |
| 561-567 | `folded` | 7 | relative seat has folded |
| 568-574 | `all_in` | 7 | relative seat is all-in |
| 575-616 | `history` | 42 | per relative seat and street (7 x 3 x 2, seat-major): bets/completions/raises, calls (bring-in included) |

Other betting structures widen ``raise_to_amounts`` (3 slots in spread limit, 4 in pot and no limit)
and shift what follows; ``env.unwrapped.layout.table()`` prints the table of any variant.

Optional pieces (``observation_features=[...]``, off by default; ``envs.observation.FEATURES``):
hand strength, which the network otherwise learns from rewards over one-hot cards. Each one
asked for is appended after ``history``, in this order, whatever order it is asked in (Soko with
all three: 715 values; sizes per game in ``layout.table()``). Categories are
``envs.engine.hands.Category``: high card, pair, four-straight, four-flush, two pair, trips,
straight, flush, full house, quads, straight flush, five of a kind (the Canadian hands only
under ``canadian_hands``).

| Piece | Size | Meaning |
|---|---|---|
| `hand_class` | 12 | made-hand category of the observer's own cards (face-down and face-up, wild cards in force), one-hot |
| `showing_class` | max players x 12 | made-hand category of each relative seat's face-up cards (wild cards in force), one-hot, seat-major |
| `win_probability` | 1 | the observer's expected share of the pot at showdown against uniformly random unseen cards, nobody folding (`envs.engine.equity.win_probability`): exact when the unseen cards fall in at most 2,000 ways (heads-up Soko's last street: 43), else 64 deals from a counter-based generator keyed by the cards the observer sees (`envs.engine.equity.sample_deals`; the compiled core computes the same value, bit for bit); with the follow-the-queen wild rank replayed and Low Chicago's half pot; 0 after folding; once the hand is over, the share of the pot it won |

A trained model remembers its pieces (``env.observation_features`` in its config, stored in the
model zip), and ``ppo:`` agents encode with them.
"""  # noqa: E501 (the generated observation table above: tests/test_observation_layout.py holds it)

from __future__ import annotations

import dataclasses
import difflib
import inspect
import operator
from typing import Any, ClassVar, Sequence

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle, seeding
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers
from pettingzoo.utils.env_logger import EnvLogger

from envs.actions import action_id, num_actions
from envs.backends import ENGINES, make_backend, make_encoder, new_game
from envs.engine.cards import format_cards
from envs.engine.game import Game
from envs.engine.rules import RULES, Rules, check_players, get_rules

__all__ = ["StudEnv", "wrap_env", "make_rules", "check_env_args", "keyword_names", "normalize_stacks",
           "render_text", "new_game", "ENGINES", "REWARD_UNITS", "ActionSpace", "MirroredAECEnv"]

REWARD_UNITS = ("big_bets", "chips")


def make_rules(game: str, presets: tuple[str, ...], rules: Rules | str | None = None, *,
               env_args: Sequence[str] = (), **overrides) -> Rules:
    """The rules an env runs: a preset of ``game`` (default: the one named ``game``) or a Rules
    value, with field overrides. Presets of another game are refused with a clear message, and
    so is a keyword that is neither one of the env's own arguments ``env_args`` nor a rules field
    (the message names both lists, since a typo can be meant for either)."""
    fields = [f.name for f in dataclasses.fields(Rules)]
    unknown = [k for k in overrides if k not in fields]
    if unknown:
        close = [m for k in unknown for m in difflib.get_close_matches(k, [*env_args, *fields], n=1)]
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        raise ValueError(f"unknown rules field or env argument(s) {', '.join(unknown)}{hint}; the {game} "
                         f"env's arguments are {', '.join(env_args)}; "
                         f"the rules fields are {', '.join(fields)}")
    if rules is None:
        rules = game
    if isinstance(rules, str) and rules not in presets:
        others = [name for name in RULES if name not in presets]
        hint = f" ({rules!r} belongs to another env)" if rules in others else ""
        raise ValueError(f"unknown {game} preset {rules!r}{hint}; presets are {', '.join(presets)}")
    return get_rules(rules, **overrides)


def keyword_names(cls: type) -> list[str]:
    """The named keyword arguments of ``cls.__init__`` (what an env accepts besides rules fields)."""
    params = inspect.signature(cls.__init__).parameters.values()
    return [p.name for p in params if p.name != "self" and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)]


def check_env_args(rules: Rules, num_players, render_mode, reward: str, render_modes) -> None:
    """The keyword arguments every env of ours shares, refused with a sentence when wrong (the
    ``engine`` is checked where it is chosen, :func:`envs.backends.make_backend`)."""
    check_players(rules, num_players)
    if render_mode not in (None, *render_modes):
        raise ValueError(f"render_mode must be None or one of {render_modes}, not {render_mode!r}")
    if reward not in REWARD_UNITS:
        raise ValueError(f"reward must be one of {', '.join(REWARD_UNITS)}, not {reward!r}")


def wrap_env(raw: AECEnv) -> AECEnv:
    """PettingZoo's standard wrappers, in the order the classic card games use.

    A wrapper finds every attribute of the env it wraps through a chain of ``__getattr__``
    calls, one per wrapper; reading ``agent_selection``, ``terminations`` and the rest that way
    costs more than a whole game step. So a :class:`MirroredAECEnv` copies those attributes into the
    wrappers' own ``__dict__`` whenever it assigns them (:func:`mirrored`): the wrappers run
    unchanged and read the same values, without the chain. Before the first ``reset()`` nothing
    is copied, so ``OrderEnforcingWrapper`` still refuses early access.
    """
    wrapped = [wrappers.TerminateIllegalWrapper(raw, illegal_reward=-1)]
    wrapped.append(wrappers.AssertOutOfBoundsWrapper(wrapped[-1]))
    wrapped.append(wrappers.OrderEnforcingWrapper(wrapped[-1]))
    if isinstance(raw, MirroredAECEnv):
        raw.mirror_into(wrapped)
    return wrapped[-1]


MIRRORED = ("agents", "agent_selection", "rewards", "_cumulative_rewards", "terminations",
            "truncations", "infos")
"""The per-step AEC attributes a :class:`MirroredAECEnv` copies into its wrappers (see wrap_env)."""


def mirrored(name: str) -> property:
    """An attribute whose every assignment is copied into the env's wrappers."""

    key = "_value_" + name

    def set(self, value) -> None:
        self.__dict__[key] = value
        for wrapper in self.__dict__.get("_mirrors", ()):
            wrapper.__dict__[name] = value

    # A C-level getter: these attributes are read many times a step. Before reset() it raises
    # AttributeError, and MirroredAECEnv.__getattr__ says what is missing.
    return property(operator.attrgetter(key), set, doc=f"``{name}`` (copied into the wrappers on assignment)")


class ActionSpace(spaces.Discrete):
    """``Discrete(n)`` whose membership test answers a plain ``int`` at once.

    PettingZoo's ``AssertOutOfBoundsWrapper`` asks ``contains`` on every step, and gymnasium's
    version builds ``numpy.iinfo`` and a NumPy scalar for a Python int, which costs about as
    much as the rest of a wrapper step. The answer is the same: an int is in the space when
    ``0 <= x < n``; anything else goes to gymnasium's test.
    """

    def __init__(self, n: int, seed=None) -> None:
        super().__init__(n, seed=seed)
        self._size = int(n)

    def contains(self, x) -> bool:
        if type(x) is int:
            return 0 <= x < self._size
        return super().contains(x)


def normalize_stacks(stacks, num_players: int):
    """``None``, one int for every seat, or one value per seat (the engine checks them)."""
    if stacks is None:
        return None
    if isinstance(stacks, (int, np.integer)) and not isinstance(stacks, bool):
        return (int(stacks),) * num_players
    return tuple(stacks)


class MirroredAECEnv(AECEnv):
    """An AEC env whose per-step attributes (``MIRRORED``) are copied into the wrappers that
    :func:`wrap_env` puts around it, so the wrappers read them without a ``__getattr__`` chain."""

    agents = mirrored("agents")
    agent_selection = mirrored("agent_selection")
    rewards = mirrored("rewards")
    _cumulative_rewards = mirrored("_cumulative_rewards")
    terminations = mirrored("terminations")
    truncations = mirrored("truncations")
    infos = mirrored("infos")

    def __getattr__(self, name: str):
        # Reached only when normal look-up fails: a per-step attribute before reset().
        bare = name[len("_value_"):] if name.startswith("_value_") else name
        if bare in MIRRORED:
            raise AttributeError(f"{bare} is set by reset()")
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def _start_agents(self) -> None:
        """Every agent back in, with zero rewards, not terminated, empty infos (for reset())."""
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {a: {} for a in self.agents}

    def mirror_into(self, wrappers_: list) -> None:
        """Copy the per-step attributes into ``wrappers_`` from now on (see :func:`wrap_env`)."""
        self.__dict__["_mirrors"] = list(wrappers_)
        for name in MIRRORED:
            value = self.__dict__.get("_value_" + name)
            if value is not None:
                for wrapper in wrappers_:
                    wrapper.__dict__[name] = value


class StudEnv(MirroredAECEnv, EzPickle):
    """The AEC env shared by every stud game; a game module binds ``game_name`` and ``presets``."""

    game_name: ClassVar[str] = ""
    presets: ClassVar[tuple[str, ...]] = ()
    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": ["ansi", "human"],
        "name": "stud_v0",
        "is_parallelizable": False,
        "render_fps": 1,
    }

    def __init__(self, num_players: int = 2, render_mode: str | None = None, stacks=None,
                 rules: Rules | str | None = None, reward: str = "big_bets",
                 observation_features: Sequence[str] = (), engine: str = "core", **overrides) -> None:
        EzPickle.__init__(self, num_players=num_players, render_mode=render_mode, stacks=stacks,
                          rules=rules, reward=reward, observation_features=observation_features,
                          engine=engine, **overrides)
        super().__init__()
        if not self.game_name:
            raise TypeError("StudEnv is shared code: create soko_v0.env() or follow_the_bitch_v0.env()")
        self.rules = r = make_rules(self.game_name, self.presets, rules, env_args=keyword_names(type(self)),
                                    **overrides)
        check_env_args(r, num_players, render_mode, reward, self.metadata["render_modes"])
        self.num_players = num_players
        self.render_mode = render_mode
        self.stacks = normalize_stacks(stacks, num_players)
        self.reward_unit = reward
        self.encoder = make_encoder(r, features=observation_features)
        self.layout = self.encoder.layout
        self.num_actions = num_actions(r)
        self.possible_agents = [f"player_{i}" for i in range(num_players)]
        self._seat_of = {a: i for i, a in enumerate(self.possible_agents)}
        self.observation_spaces = {
            a: spaces.Dict({
                "observation": spaces.Box(0.0, 1.0, (self.layout.size,), np.float32),
                "action_mask": spaces.Box(0, 1, (self.num_actions,), np.int8),
            })
            for a in self.possible_agents
        }
        self.action_spaces = {a: ActionSpace(self.num_actions) for a in self.possible_agents}
        self.np_random: np.random.Generator | None = None
        # What plays the hand (envs.backends): the one place the engine is chosen.
        self._hand = make_backend(engine, r, num_players, stacks=self.stacks, encoder=self.encoder)
        self.engine = self._hand.name

    # ------------------------------------------------------------------------------------
    # PettingZoo API

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        if seed is not None or self.np_random is None:
            self.np_random, _ = seeding.np_random(seed)
        current = self._hand.reset(self.np_random, options)
        self._start_agents()
        if current < 0:  # every seat all-in from the antes: the hand played itself out
            self.agent_selection = self.agents[0]
            self._end_hand()
        else:
            self.agent_selection = self.possible_agents[current]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        obs, mask = self._hand.observe(self._seat_of[agent])
        return {"observation": obs, "action_mask": mask}

    def step(self, action) -> None:
        if not self.agents:  # every agent has taken its last step: as OrderEnforcingWrapper does
            EnvLogger.warn_step_after_terminated_truncated()
            return
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if action is None:
            raise ValueError(f"{agent} is to act: give an action id, not None")
        if type(action) is not int:
            action = action_id(action)  # a NumPy integer is taken; a float or a string is refused
        self._cumulative_rewards[agent] = 0.0  # (rewards come only at the end of the hand)
        current = self._hand.step(action)  # an illegal id raises ValueError with the engine's reason
        if current < 0:
            self._end_hand()
        else:
            self.agent_selection = self.possible_agents[current]
        if self.render_mode == "human":
            self.render()

    def _end_hand(self) -> None:
        payoffs, showdown = self._hand.payoffs, self._hand.showdown
        big = self.rules.big_bet
        for agent, p in zip(self.possible_agents, payoffs):
            self.rewards[agent] = p / big if self.reward_unit == "big_bets" else float(p)
            self.terminations[agent] = True
            self.infos[agent] = {"payoff": p, "payoffs": payoffs, "showdown": showdown}
        self._accumulate_rewards()
        self._deads_step_first()

    @property
    def game(self) -> Game | None:
        """The hand as the engine's :class:`Game` (None before ``reset()``). With the core, it
        is rebuilt on first access in a hand by replaying the deal and the actions so far, and
        from then on kept in step with the core until the next ``reset()``, so a reference held
        across steps stays current (each later step then also plays the Game: slower). Read it,
        don't act on it: the env plays its own actions."""
        return self._hand.game

    def render(self) -> str | None:
        if self.render_mode is None:
            gymnasium.logger.warn("render() was called without a render_mode (choose 'ansi' or 'human')")
            return None
        text = render_text(self.game, self.possible_agents)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        pass


# ----------------------------------------------------------------------------------------
# Text render


def render_text(game: Game | None, names: list[str] | None = None) -> str:
    """A table of the hand: seats, stacks, cards (face-down hidden until shown), wild rank,
    pot, whose turn, then the hand history so far."""
    if game is None:
        return "(no hand: call reset() first)"
    r = game.rules
    n = game.num_players
    names = names or [f"player_{i}" for i in range(n)]
    shown = {e.seat: e.cards for e in game.log if e.kind == "show"}
    if game.is_over:
        state = "hand over"
    else:
        state = (f"betting round {game.street + 1} of {r.num_streets}, bet size {game.bet_size}; "
                 f"to act: seat {game.current_player} ({names[game.current_player]}), "
                 f"{game.to_call} to call")
    lines = [f"{r.name}, {n} players, {r.betting.replace('_', ' ')}: {state}"]
    if r.follow_the_queen:
        wild = ", ".join(game.wild_ranks) or "nothing"
        lines.append(f"Wild: {wild}")
    lines.append(f"Pot: {game.pot}")
    header = f"{'seat':<6}{'agent':<12}{'stack':>7}{'round':>7}{'hand':>7}  cards"
    lines.append(header)
    lines.append("-" * (len(header) + 24))
    stacks, committed, total = game.stacks, game.committed, game.total_committed
    folded, all_in = game.folded, game.all_in
    for s in range(n):
        down = format_cards(shown[s]) if s in shown else " ".join(["??"] * len(game.hole_cards(s)))
        up = format_cards(game.up_cards(s))
        marks = []
        if s == game.button:
            marks.append("button")
        if folded[s]:
            marks.append("folded")
        if all_in[s]:
            marks.append("all-in")
        if s == game.current_player:
            marks.append("<- to act")
        if game.is_over:
            marks.append(f"{game.payoffs[s]:+d}")
        seat = f"{s}"
        lines.append(f"{seat:<6}{names[s]:<12}{stacks[s]:>7}{committed[s]:>7}{total[s]:>7}  "
                     f"[{down}] {up}  {' '.join(marks)}".rstrip())
    lines.append("History:")
    lines.extend("  " + e.describe() for e in game.log if not (e.kind == "deal" and not e.up))
    return "\n".join(lines)
