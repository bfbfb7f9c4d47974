"""Duplicate tournaments between agents: cross-table, ranking against the field, 95% intervals.

    python train/tournament.py --game soko --agents tag equity random call --hands 20000 \\
        --players 2 --seed 0
    python train/tournament.py --game follow_the_bitch --rule low_chicago=true --agents tag random

**Matches.** Heads-up, every pair of agents is a match; with ``--players n > 2`` every set of
``n`` agents is a table. A match plays ``--hands`` hands.

**Duplicate deals.** A match's hands come in *groups*, one per deal: heads-up, the same deck
order is played twice with the agents' seats swapped; at a table of ``n``, it is played ``n``
times, once per rotation of the seating, so every agent holds every seat's cards (the button
stays on seat 0, and the deal follows the engine's order: passes from seat 1 clockwise). The
luck of the cards cancels within a group. In multi-way hands a fold changes who receives the
later cards (the engine deals only to active seats), so there the replay is exact only up to
the first fold. ``--no-duplicate`` keeps the same groups and seatings but gives every hand its
own deck, for comparison.

**Luck correction** (``--luck-correction``, on by default in games without wild cards). The
referee sees every card, so from each seat's result it subtracts, card by card, how much that
card moved the seat's equity share of the pot against the average over every card that could
have come there (``train/luck.py``). Each term has mean zero whatever the agents do, so the
estimate stays unbiased, and the terms sum to zero over the seats; it removes the card luck
duplicate deals leave (when the agents play the same cards differently). For agents whose
action probabilities are known (``Agent.policy``: the random agent), each of their decisions
is corrected the same way, the value after the action taken against the policy's average over
the actions it could have taken, which removes the luck of their own coin flips. These terms,
kept apart per betting round along with the known policies' fold and raise coin flips, are
control variates: each match subtracts the combination of them that leaves the least variance,
its coefficients fitted by least squares on the other folds of groups (``train.luck.control``;
with fewer than 20 groups per coefficient, every term is subtracted whole). The cross-table
and ranking use the corrected results; ``results.json`` keeps the raw ones too. Measured, Soko
heads-up, 20,000 hands a pair: half-widths 1.65-7.3x narrower than plain, for about 2.6 ms of
CPU per hand.

**Reproducibility.** Deck orders and each agent's per-hand generator seed come from
``numpy.random.SeedSequence(seed, spawn_key=(match key, group))``, where the match key is a
CRC-32 of the agents' display names at the table (``agents.registry.display_name``: ``tag``, a
``ppo`` model's run folder, or ``name=...``), so a model gets the same deals whether its path is
written relative or absolute, as a folder or as its ``final_model.zip``; every hand is played from scratch (agents are
re-seeded by ``Agent.reset`` before each hand). In duplicate mode an agent gets the same seed
in every seating of a deal (common random numbers: the random agent's coin flips are replayed
too, which cancels more of its luck); with ``--no-duplicate`` every hand has its own seeds. Work is split into chunks of groups for
``--workers`` processes, and results are put back in group order, so the numbers are identical
for any worker count.

**Statistics.** The sampling unit is the group: an agent's result for a group is its mean
result in big bets over the group's hands (heads-up: over the two seatings). A match reports
the mean over groups, times 100 (big bets per 100 hands, bb/100), with a 95% interval from
Student's t distribution on the groups (``mean_ci``). The cross-table cell (A, B) is, over
the matches where both sit, the mean of half the difference of their group results (heads-up
exactly A's result against B, with the same interval: the degrees of freedom the luck
correction's fitted coefficients cost are taken off here too); the ranking averages an agent's matches, with the standard
errors of the independent matches combined (``combine``).

**Names and checks.** Agents appear under their display names; two different agents with the
same display name are refused (tell them apart with ``name=...``), the same agent given twice is
numbered (``random``, ``random#2``: fills seats at a table). Every spec is checked when the
arguments are parsed (``agents.registry.check_spec``: a ``ppo`` model must exist and have this
game's observation and action sizes); any usage error exits with code 2 and one line.

**Outputs** under ``runs/tournaments/<name>/`` (by default game, rules overrides, players,
scheme, seed and time, e.g. ``follow_the_bitch_low_chicago=true_3p_dup_seed0_<time>``):
``results.json`` (config, rules, the agents' names with their specs as given and canonical
(``ppo`` paths absolute), every match, cross-table, ranking, timing), ``crosstable.csv`` (bb/100 of the row agent against the column
agent, then its result against the field), ``crosstable.png`` (a heat map with the intervals)
and, with ``--histories N``, the first N hand histories of each match in ``histories/``.

Training evaluates checkpoints with :func:`play_match`:

>>> result = play_match("soko", ["call", "random"], hands=40, seed=1)
>>> result.hands, sorted(result.bb_per_100)
(40, ['call', 'random'])
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import itertools
import json
import math
import multiprocessing as mp
import os
import re
import sys
import time
import zlib
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Sequence

import numpy as np

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agents.base import Agent, choose_action  # noqa: E402
from agents.registry import (canonical_spec, check_spec, describe_agents, display_name,  # noqa: E402
                             make_agent, parse_spec)
from envs.actions import action_mask, apply_action  # noqa: E402
from envs.engine.game import Game  # noqa: E402
from envs.engine.rules import RULES, Rules, get_rules  # noqa: E402
from arena.luck import LuckCorrector  # noqa: E402
from arena.luck import control as luck_control, feature_count, value_columns  # noqa: E402
from arena.luck import warm_up as luck_warm_up  # noqa: E402

__all__ = ["TournamentConfig", "MatchResult", "TournamentResult", "play_match", "run_tournament",
           "main", "mean_ci", "combine", "t_quantile"]

# ---------------------------------------------------------------------------------------------
# Statistics


def _t_central_mass(t: float, df: int) -> float:
    """P(|T| <= t) for Student's t with integer ``df`` (Abramowitz & Stegun 26.7.3-4)."""
    theta = math.atan(t / math.sqrt(df))
    c2 = math.cos(theta) ** 2
    s = math.sin(theta)
    if df % 2:
        if df == 1:
            return 2 * theta / math.pi
        term = total = math.cos(theta)
        for k in range(2, df - 1, 2):
            term *= c2 * k / (k + 1)
            total += term
        return 2 / math.pi * (theta + s * total)
    term = total = 1.0
    for k in range(1, df - 2, 2):
        term *= c2 * k / (k + 1)
        total += term
    return s * total


def t_quantile(confidence: float, df: int) -> float:
    """The two-sided critical value of Student's t: P(|T| <= q) = ``confidence``.

    >>> round(t_quantile(0.95, 4), 4), round(t_quantile(0.95, 30), 4), round(t_quantile(0.95, 10**6), 3)
    (2.7764, 2.0423, 1.96)
    """
    if df < 1:
        return math.nan
    if df > 200:  # Cornish-Fisher expansion around the normal quantile (error < 1e-7 here)
        z = _normal_quantile(0.5 + confidence / 2)
        return (z + (z ** 3 + z) / (4 * df) + (5 * z ** 5 + 16 * z ** 3 + 3 * z) / (96 * df ** 2)
                + (3 * z ** 7 + 19 * z ** 5 + 17 * z ** 3 - 15 * z) / (384 * df ** 3))
    low, high = 0.0, 1.0
    while _t_central_mass(high, df) < confidence:
        high *= 2
    for _ in range(100):
        mid = (low + high) / 2
        if _t_central_mass(mid, df) < confidence:
            low = mid
        else:
            high = mid
    return (low + high) / 2


def _normal_quantile(p: float) -> float:
    """The standard normal quantile, by bisection on erf (exact to double precision)."""
    low, high = -40.0, 40.0
    for _ in range(200):
        mid = (low + high) / 2
        if 0.5 * (1 + math.erf(mid / math.sqrt(2))) < p:
            low = mid
        else:
            high = mid
    return (low + high) / 2


@dataclass(frozen=True)
class Estimate:
    """A mean with its 95% interval: ``mean ± half_width``; ``n`` samples, ``se`` its standard error."""

    mean: float
    half_width: float
    se: float
    n: int
    df: int

    @property
    def low(self) -> float:
        return self.mean - self.half_width

    @property
    def high(self) -> float:
        return self.mean + self.half_width

    def scaled(self, factor: float) -> Estimate:
        return Estimate(self.mean * factor, self.half_width * factor, self.se * factor, self.n, self.df)

    def as_dict(self) -> dict[str, float]:
        return {"mean": self.mean, "ci95_low": self.low, "ci95_high": self.high,
                "half_width": self.half_width, "se": self.se, "groups": self.n, "df": self.df}


def mean_ci(values: Sequence[float], confidence: float = 0.95, fitted: int = 0) -> Estimate:
    """Mean of ``values`` and the half-width of its Student-t interval (sample sd, n - 1 df).

    ``fitted``: regression coefficients fitted on these values besides their mean (the luck
    correction's, ``train.luck.control``); as for regression residuals, they cost that many
    degrees of freedom: the variance is the sum of squares over ``n - 1 - fitted``, and the t
    quantile has ``n - 1 - fitted`` df.

    >>> e = mean_ci([1, 2, 3, 4, 5])
    >>> e.mean, round(e.half_width, 4)     # 2.7764 * sqrt(2.5) / sqrt(5)
    (3.0, 1.9632)
    >>> round(mean_ci([1, 2, 3, 4, 5], fitted=1).half_width, 4)  # 3.1824 * sqrt(10 / 3) / sqrt(5)
    2.5985
    """
    x = np.asarray(values, dtype=np.float64)
    n = len(x)
    df = n - 1 - fitted
    if n == 0:
        return Estimate(math.nan, math.nan, math.nan, 0, 0)
    mean = float(x.mean())
    if df < 1:
        return Estimate(mean, math.nan, math.nan, n, 0)
    se = float(math.sqrt(((x - mean) ** 2).sum() / df / n))
    return Estimate(mean, t_quantile(confidence, df) * se, se, n, df)


def combine(parts: Sequence[Estimate], confidence: float = 0.95) -> Estimate:
    """The average of independent estimates (equal weights): standard errors add in
    quadrature, degrees of freedom add up. One part comes back unchanged."""
    if len(parts) == 1:
        return parts[0]
    m = len(parts)
    mean = sum(p.mean for p in parts) / m
    se = math.sqrt(sum(p.se ** 2 for p in parts)) / m
    df = sum(p.df for p in parts)
    return Estimate(mean, t_quantile(confidence, df) * se, se, sum(p.n for p in parts), df)


# ---------------------------------------------------------------------------------------------
# Playing


@dataclass(frozen=True)
class _Match:
    index: int
    names: tuple[str, ...]       # agent labels in table order (position i): the result keys
    seed_names: tuple[str, ...]  # their display names (agents.registry.display_name), same order

    @property
    def key(self) -> int:
        """The match's seed key: a CRC-32 of the display names at the table, so the deals do
        not depend on how a ``ppo`` path is spelt (relative or absolute, folder or zip)."""
        return zlib.crc32("|".join(self.seed_names).encode())


class _Runner:
    """Plays groups of hands for any match; one per process."""

    def __init__(self, rules: Rules, num_players: int, agents: dict[str, Any], *, seed: int,
                 duplicate: bool, histories: int, luck: bool = False) -> None:
        self.rules = rules
        self.n = num_players
        self.agents = {name: make_agent(a) for name, a in agents.items()}
        self.seed = seed
        self.duplicate = duplicate
        self.histories = histories
        self.luck = LuckCorrector(rules) if luck else None

    def play(self, match: _Match, g0: int, g1: int
             ) -> tuple[np.ndarray, np.ndarray | None, list[tuple[int, str]]]:
        """Chips won per (group, rotation, position) for groups g0..g1-1, each position's luck
        features (``LuckCorrector.features``) averaged over the group's hands, (group, position,
        column), or None without the luck correction, and hand histories."""
        n = self.n
        agents = [self.agents[name] for name in match.names]
        chips = np.zeros((g1 - g0, n, n), dtype=np.int64)
        luck = None
        if self.luck is not None:
            luck = np.zeros((g1 - g0, n, feature_count(self.rules)))
        stories: list[tuple[int, str]] = []
        for g in range(g0, g1):
            rng = np.random.default_rng(np.random.SeedSequence(self.seed, spawn_key=(match.key, g)))
            if self.duplicate:
                decks = [rng.permutation(52).tolist()] * n
            else:
                decks = [rng.permutation(52).tolist() for _ in range(n)]
            # Duplicate: an agent draws the same random stream in every seating of a deal
            # (common random numbers); no duplicate: a fresh stream for every hand.
            agent_seeds = rng.integers(0, 2 ** 63, size=(n, n))
            if self.duplicate:
                agent_seeds[:] = agent_seeds[0]
            for r in range(n):
                # Rotation r: the agent at table position i sits in seat (i + r) % n.
                seating = [None] * n
                for i, agent in enumerate(agents):
                    seating[(i + r) % n] = agent
                    agent.reset(int(agent_seeds[r, i]))
                game = Game(self.rules, n, deck=decks[r], button=0, seed=0)
                while game.current_player is not None:
                    agent = seating[game.current_player]
                    apply_action(game, choose_action(agent, game, action_mask(game)))
                for i in range(n):
                    chips[g - g0, r, i] = game.payoffs[(i + r) % n]
                if luck is not None:
                    # Duplicate: the terms of cards dealt before anyone acts cancel over the
                    # group. Agents whose policy is known also get decision and coin-flip terms.
                    features = self.luck.features(game, from_first_action=self.duplicate,
                                                  policies=[_known_policy(a) for a in seating])
                    luck[g - g0] += features[(np.arange(n) + r) % n] / n
                hand = g * n + r
                if hand < self.histories:
                    stories.append((hand, _history(match, game, g, r, hand, self.duplicate)))
        return chips, luck, stories


def _known_policy(agent):
    """``agent.policy`` when its class defines one (``Agent.policy`` says "not known")."""
    method = getattr(type(agent), "policy", None)
    return None if method is None or method is Agent.policy else agent.policy


def _history(match: _Match, game: Game, group: int, rotation: int, hand: int, duplicate: bool) -> str:
    n = game.num_players
    seats = ", ".join(f"seat {(i + rotation) % n}: {name}" for i, name in sorted(
        enumerate(match.names), key=lambda x: (x[0] + rotation) % n))
    deal = f"deal {group + 1} ({'duplicate' if duplicate else 'own deck'}), seating {rotation + 1} of {n}"
    result = ", ".join(f"seat {s} {p:+d}" for s, p in enumerate(game.payoffs))
    return (f"### Hand {hand + 1}: {' vs '.join(match.names)}; {deal}\n"
            f"Seats: {seats}\n{game.history()}\nResult: {result}\n")


_WORKER: _Runner | None = None


def _init_worker(args: tuple) -> None:
    global _WORKER
    rules, n, agents, kwargs = args
    if any(not isinstance(a, str) or a.strip().startswith("ppo") for a in agents.values()):
        try:  # one thread per worker process: the workers already use every core
            import torch

            torch.set_num_threads(1)
        except ImportError:
            pass
    _WORKER = _Runner(rules, n, agents, **kwargs)


def _work(task: tuple[_Match, int, int]) -> tuple[int, int, np.ndarray, np.ndarray | None, list]:
    match, g0, g1 = task
    chips, luck, stories = _WORKER.play(match, g0, g1)
    return match.index, g0, chips, luck, stories


def _play_all(rules: Rules, n: int, agents: dict[str, Any], matches: list[_Match], groups: int, *,
              seed: int, duplicate: bool, workers: int, histories: int, progress: bool,
              luck: bool = False, desc: str = "hands"
              ) -> tuple[list[np.ndarray], list[np.ndarray] | None, list[list[str]], float]:
    """Chips (groups, rotations, positions) per match, luck features (groups, positions,
    columns) per match (None without the luck correction), histories per match, seconds of
    play."""
    for agent in agents.values():  # shared lookup tables, built before any fork
        warm = getattr(make_agent(agent), "warm_up", None)
        if warm is not None:
            warm(rules)
    if luck and workers > 1:  # single-process runs build what they need as they go
        luck_warm_up(rules)
    kwargs = dict(seed=seed, duplicate=duplicate, histories=histories, luck=luck)
    per_chunk = max(1, min(250, math.ceil(groups * len(matches) / max(1, workers) / 16)))
    tasks = [(m, g0, min(groups, g0 + per_chunk)) for m in matches for g0 in range(0, groups, per_chunk)]
    chips = [np.zeros((groups, n, n), dtype=np.int64) for _ in matches]
    features = [np.zeros((groups, n, feature_count(rules))) for _ in matches] if luck else None
    stories: list[list[tuple[int, str]]] = [[] for _ in matches]
    total = groups * n * len(matches)
    from tqdm import tqdm

    bar = None
    start = time.perf_counter()

    def collect(result):
        index, g0, part, feats, hands = result
        chips[index][g0:g0 + len(part)] = part
        if features is not None:
            features[index][g0:g0 + len(part)] = feats
        stories[index].extend(hands)
        if bar is not None:
            bar.update(len(part) * n)

    if workers <= 1:
        runner = _Runner(rules, n, agents, **kwargs)
        bar = tqdm(total=total, unit="hand", desc=desc, disable=not progress, smoothing=0.1)
        for m, g0, g1 in tasks:
            collect((m.index, g0, *runner.play(m, g0, g1)))
    else:
        methods = mp.get_all_start_methods()
        ctx = mp.get_context("fork" if "fork" in methods else "spawn")
        with ctx.Pool(workers, initializer=_init_worker, initargs=((rules, n, agents, kwargs),)) as pool:
            bar = tqdm(total=total, unit="hand", desc=desc, disable=not progress, smoothing=0.1)
            for result in pool.imap_unordered(_work, tasks):
                collect(result)
    seconds = time.perf_counter() - start
    bar.close()
    texts = [[text for _, text in sorted(s)] for s in stories]
    return chips, features, texts, seconds


# ---------------------------------------------------------------------------------------------
# Results


@dataclass
class MatchResult:
    """One match (a pair heads-up, a table of n otherwise)."""

    agents: tuple[str, ...]
    hands: int
    groups: int
    big_bet: int
    group_results: np.ndarray             # (groups, positions): big bets per hand, group means
    estimates: dict[str, Estimate]         # bb/100 per agent (luck-corrected when that is on)
    histories: list[str] = field(default_factory=list)
    seconds: float = 0.0
    luck_correction: bool = False
    raw_group_results: np.ndarray | None = None     # the same without the luck correction
    raw_estimates: dict[str, Estimate] | None = None
    luck_fitted: int = 0                  # regressors fitted by train.luck.control (0: fixed)

    @property
    def bb_per_100(self) -> dict[str, float]:
        return {name: e.mean for name, e in self.estimates.items()}

    @property
    def ci95(self) -> dict[str, tuple[float, float]]:
        return {name: (e.low, e.high) for name, e in self.estimates.items()}

    def as_dict(self) -> dict[str, Any]:
        data = {"agents": list(self.agents), "hands": self.hands, "groups": self.groups,
                "luck_correction": self.luck_correction,
                "bb_per_100": {k: e.as_dict() for k, e in self.estimates.items()}}
        if self.luck_correction:
            data["bb_per_100_raw"] = {k: e.as_dict() for k, e in self.raw_estimates.items()}
            data["luck_fitted_terms"] = self.luck_fitted
        return data


def _match_result(names: tuple[str, ...], chips: np.ndarray, features: np.ndarray | None, rules: Rules,
                  texts: list[str], seconds: float) -> MatchResult:
    """``features``: the luck features per (group, position, column), or None when the luck
    correction is off."""
    groups, rotations, _ = chips.shape
    big_bet = rules.big_bet

    def estimate(values, fitted=0):
        return {name: mean_ci(values[:, i], fitted=fitted).scaled(100.0) for i, name in enumerate(names)}

    raw_values = chips.mean(axis=1) / big_bet  # group means in big bets per hand
    if features is None:
        return MatchResult(names, groups * rotations, groups, big_bet, raw_values, estimate(raw_values),
                           texts, seconds)
    values, fitted = luck_control(raw_values, features / big_bet, value_columns(rules))
    return MatchResult(names, groups * rotations, groups, big_bet, values, estimate(values, fitted), texts,
                       seconds, True, raw_values, estimate(raw_values), fitted)


@dataclass
class TournamentResult:
    config: TournamentConfig
    rules: Rules
    agents: tuple[str, ...]
    matches: list[MatchResult]
    crosstable: dict[str, dict[str, Estimate]]   # row agent -> column agent -> bb/100
    field: dict[str, Estimate]                    # agent -> bb/100 against the field
    seconds: float
    warm_up_seconds: float
    raw_crosstable: dict[str, dict[str, Estimate]] | None = None  # without the luck correction
    raw_field: dict[str, Estimate] | None = None
    specs: dict[str, tuple[Any, str]] = field(default_factory=dict)  # name -> (spec, canonical spec)

    @property
    def hands(self) -> int:
        return sum(m.hands for m in self.matches)

    @property
    def hands_per_second(self) -> float:
        return self.hands / self.seconds if self.seconds else math.nan

    def ranking(self) -> list[str]:
        return sorted(self.agents, key=lambda a: -self.field[a].mean)

    def as_dict(self) -> dict[str, Any]:
        data = {
            "config": dataclasses.asdict(self.config),
            "rules": dataclasses.asdict(self.rules),
            "unit": ("big bets per 100 hands (bb/100); 95% Student-t intervals over groups "
                     + ("(one deal played in every seating)" if self.config.duplicate
                        else "(seatings of independent deals)")
                     + ("; luck-corrected (train/luck.py), raw numbers under \"raw\" and "
                        "\"bb_per_100_raw\"" if self.config.luck_correction else "")),
            "hands": self.hands,
            "seconds": self.seconds,
            "warm_up_seconds": self.warm_up_seconds,
            "hands_per_second": self.hands_per_second,
            "agents": [{"name": a, "spec": str(self.specs[a][0]), "canonical": self.specs[a][1]}
                       if a in self.specs else {"name": a} for a in self.agents],
            "ranking": _ranking_dict(self.agents, self.field),
            "crosstable": _cross_dict(self.crosstable),
            "matches": [m.as_dict() for m in self.matches],
        }
        if self.raw_field is not None:
            data["raw"] = {"ranking": _ranking_dict(self.agents, self.raw_field),
                           "crosstable": _cross_dict(self.raw_crosstable)}
        return data


def _ranking_dict(agents: Sequence[str], field_: dict[str, Estimate]) -> list[dict[str, Any]]:
    order = sorted(agents, key=lambda a: -field_[a].mean)
    return [{"rank": i + 1, "agent": a, **field_[a].as_dict()} for i, a in enumerate(order)]


def _cross_dict(cross: dict[str, dict[str, Estimate]]) -> dict[str, dict[str, dict[str, float]]]:
    return {a: {b: e.as_dict() for b, e in row.items()} for a, row in cross.items()}


def _summarize(agents: tuple[str, ...], matches: list[MatchResult], raw: bool = False) -> tuple[dict, dict]:
    """Cross-table and results against the field (``raw``: without the luck correction).

    A cell's interval uses the same degrees of freedom as its matches' own estimates (minus the
    luck correction's fitted coefficients), so heads-up the cell (A, B) is exactly A's match
    estimate: one interval per pair, in the table, the picture and ``matches[]`` alike."""
    cross: dict[str, dict[str, Estimate]] = {a: {} for a in agents}
    for a, b in itertools.permutations(agents, 2):
        parts = []
        for m in matches:
            if a in m.agents and b in m.agents:
                i, j = m.agents.index(a), m.agents.index(b)
                values = m.raw_group_results if raw else m.group_results
                fitted = 0 if raw else m.luck_fitted
                parts.append(mean_ci((values[:, i] - values[:, j]) / 2, fitted=fitted).scaled(100.0))
        if parts:
            cross[a][b] = combine(parts)
    field_ = {a: combine([(m.raw_estimates if raw else m.estimates)[a] for m in matches if a in m.agents])
              for a in agents}
    return cross, field_


# ---------------------------------------------------------------------------------------------
# The API


@dataclass(frozen=True)
class _Seat:
    """One agent of a match or tournament: ``label`` keys its results, ``name`` is its display
    name (the seed key), ``spec`` what was asked for, ``canonical`` one spelling per agent."""

    label: str
    name: str
    spec: str | Agent
    canonical: str


def _number(base: str, taken) -> str:
    name, k = base, 2
    while name in taken:
        name, k = f"{base}#{k}", k + 1
    return name


def _seats(specs: Sequence[str | Agent], *, label_by_spec: bool = False) -> list[_Seat]:
    """The agents with their names. The same agent given twice (the same canonical spec: a
    relative and an absolute path are the same) is numbered ``tag``, ``tag#2``; two different
    agents with the same display name are a ValueError. ``label_by_spec``: results keyed by the
    spec strings as given (``play_match``, for training's evaluation), else by display name."""
    seats: list[_Seat] = []
    owner: dict[str, str] = {}   # display name -> canonical spec
    for spec in specs:
        if isinstance(spec, str):
            canonical = canonical_spec(spec)  # a clear error for a bad spec before any work
        else:
            canonical = f"object:{id(spec)}"
        base = display_name(spec)
        if owner.setdefault(base, canonical) != canonical and not label_by_spec:
            first = next(s.spec for s in seats if s.name == base)
            hint = ("give them different name=..." if "name" in parse_spec(spec)[1]
                    else f"tell them apart with name=..., e.g. {spec.strip()},name={base}-2")
            raise ValueError(f"agents {first!r} and {spec!r} are both named {base!r}; {hint}")
        name = _number(base, {s.name for s in seats})
        label = _number(spec.strip(), {s.label for s in seats}) if label_by_spec and isinstance(spec, str) else name
        seats.append(_Seat(label, name, spec, canonical))
    return seats


def _workers(workers: int) -> int:
    return workers if workers and workers > 0 else (os.cpu_count() or 1)


def play_match(rules: Rules | str, agents: Sequence[str | Agent], *, hands: int, seed: int = 0,
               duplicate: bool = True, luck_correction: bool = False, workers: int = 1,
               histories: int = 0, progress: bool = False, **rule_overrides) -> MatchResult:
    """Play one duplicate match: heads-up for two agents, one table of ``len(agents)`` seats
    otherwise, ``hands`` hands (rounded up to whole groups). Agents are spec strings or
    :class:`Agent` objects (picklable ones when ``workers > 1``).

    Training uses this to evaluate a checkpoint: ``play_match("soko", ["ppo:runs/x/model.zip",
    "tag"], hands=2000).estimates["ppo:runs/x/model.zip"]``: results are keyed by the specs as
    given, the deals by the display names (as in a tournament). ``luck_correction=True``
    subtracts the luck of the cards and of known policies' coin flips (``train/luck.py``;
    narrower intervals for about 2.6 ms more CPU per Soko hand; ``raw_estimates`` keeps the
    plain numbers, ``luck_fitted`` says how many coefficients were fitted). It is off here by
    default so that training's periodic evaluations keep their cost; tournaments turn it on.
    """
    rules = get_rules(rules, **rule_overrides)
    seats = _seats(agents, label_by_spec=True)
    n = len(seats)
    groups = max(1, math.ceil(hands / n))
    match = _Match(0, tuple(s.label for s in seats), tuple(s.name for s in seats))
    chips, features, texts, seconds = _play_all(
        rules, n, {s.label: s.spec for s in seats}, [match], groups, seed=seed, duplicate=duplicate,
        workers=_workers(workers), histories=histories, progress=progress, luck=luck_correction)
    return _match_result(match.names, chips[0], features[0] if luck_correction else None,
                         rules, texts[0], seconds)


@dataclass
class TournamentConfig:
    """Everything a tournament run depends on (saved in results.json)."""

    game: str = "soko"
    agents: list[str] = field(default_factory=lambda: ["tag", "equity", "random", "call"])
    hands: int = 20000             # per match (pair or table), rounded up to whole groups
    players: int = 2
    seed: int = 0
    rules: dict[str, Any] = field(default_factory=dict)   # overrides of envs.engine.rules.Rules
    duplicate: bool = True
    luck_correction: bool | None = None  # subtract the luck of the cards (train/luck.py);
                                         # None: on for games without wild cards
    workers: int = 0               # 0: every core
    name: str | None = None        # run folder; default from game, players, scheme, seed and time
    out_dir: str = "runs/tournaments"
    histories: int = 0             # write the first N hands of each match
    progress: bool = True
    write: bool = True


def luck_default(rules: Rules) -> bool:
    """Whether the luck correction is on when not asked: in games without wild cards. In
    Follow the Bitch it scores seven-card hands under changing wild ranks: tables for every
    wild rank built first (about 12 s), then about 6 ms of CPU a hand, some 12 times the cost
    of a hand between cheap agents, for intervals only about 1.25x narrower (tag vs random,
    6,000 hands); there more hands are the better buy, so it is on request only."""
    return not rules.follow_the_queen


def run_tournament(cfg: TournamentConfig) -> TournamentResult:
    """Play every match of ``cfg`` and compute the cross-table and ranking (writes nothing)."""
    rules, seats = check_config(cfg)
    n = cfg.players
    names = [s.name for s in seats]
    agents = {s.name: s.spec for s in seats}
    matches = [_Match(i, t, t) for i, t in enumerate(itertools.combinations(names, n))]
    groups = max(1, math.ceil(cfg.hands / n))
    start = time.perf_counter()
    luck = luck_default(rules) if cfg.luck_correction is None else cfg.luck_correction
    cfg = dataclasses.replace(cfg, luck_correction=luck)  # results.json says what was used
    chips, features, texts, seconds = _play_all(
        rules, n, agents, matches, groups, seed=cfg.seed, duplicate=cfg.duplicate,
        workers=_workers(cfg.workers), histories=cfg.histories, progress=cfg.progress, luck=luck)
    warm = time.perf_counter() - start - seconds
    results = [_match_result(m.names, c, features[k] if luck else None, rules, t, seconds)
               for k, (m, c, t) in enumerate(zip(matches, chips, texts))]
    cross, field_ = _summarize(tuple(names), results)
    raw = _summarize(tuple(names), results, raw=True) if luck else (None, None)
    return TournamentResult(cfg, rules, tuple(names), results, cross, field_, seconds, warm, *raw,
                            specs={s.name: (s.spec, s.canonical) for s in seats})


def check_config(cfg: TournamentConfig) -> tuple[Rules, list[_Seat]]:
    """The rules and the agents of ``cfg``, or a one-line ValueError for anything that cannot
    be played: the rules overrides, the number of players, an agent spec (a ``ppo`` model that
    is missing or was trained for another game: ``agents.registry.check_spec``), two agents
    with the same display name. ``parse_args`` turns these into usage errors (exit code 2)."""
    try:
        rules = get_rules(cfg.game, **cfg.rules)
    except TypeError as exc:  # a field Rules does not have
        raise ValueError(str(exc)) from None
    n = cfg.players
    if not rules.min_players <= n <= rules.max_players:
        raise ValueError(f"{cfg.game} takes {rules.min_players} to {rules.max_players} players, not {n}")
    for spec in cfg.agents:
        check_spec(spec, rules)
    seats = _seats(cfg.agents)
    if len(seats) < n:
        raise ValueError(f"{n} players need at least {n} agents; got {len(seats)} "
                         f"(repeat a spec, e.g. --agents tag random random, to fill seats)")
    return rules, seats


# ---------------------------------------------------------------------------------------------
# Output


def _fmt(e: Estimate | None, width: int = 0) -> str:
    if e is None:
        return ".".center(width)
    return f"{e.mean:+.1f}±{e.half_width:.1f}".rjust(width)


def format_table(result: TournamentResult) -> str:
    """The ranking and the cross-table as plain text."""
    cfg = result.config
    groups = result.matches[0].groups
    n = cfg.players
    scheme = (f"duplicate: {groups} deals x {n} seatings" if cfg.duplicate
              else f"no duplicate: {groups} groups of {n} independent hands")
    lines = [f"{result.rules.name}, {n} players, {result.matches[0].hands} hands per match ({scheme}), "
             f"seed {cfg.seed}",
             "Big bets per 100 hands, 95% Student-t interval over groups"
             + (", luck-corrected" if cfg.luck_correction else ""),
             "", "Ranking against the field"]
    width = max(len(a) for a in result.agents) + 2
    lines.append(f"  #  {'agent'.ljust(width)}{'bb/100':>9}  {'95% CI':>19}  {'hands':>8}")
    for i, a in enumerate(result.ranking()):
        e = result.field[a]
        hands = sum(m.hands for m in result.matches if a in m.agents)
        lines.append(f"  {i + 1:<2} {a.ljust(width)}{e.mean:>+9.1f}  [{e.low:>+8.1f}, {e.high:>+8.1f}]  {hands:>8}")
    lines += ["", "Cross-table: row agent against column agent (bb/100 ± 95% half-width)"]
    lines += _cross_lines(result.agents, result.crosstable)
    if result.raw_crosstable is not None:
        lines += ["", "Without the luck correction (raw results)"]
        lines += _cross_lines(result.agents, result.raw_crosstable)
    lines += ["", f"{result.hands} hands in {result.seconds:.1f} s "
              f"({result.hands_per_second:.0f} hands/s, {_workers(cfg.workers)} workers; "
              f"warm-up {result.warm_up_seconds:.1f} s)"]
    return "\n".join(lines)


def _cross_lines(agents: Sequence[str], cross: dict[str, dict[str, Estimate]]) -> list[str]:
    """The cross-table's lines: columns headed by the agents' names when every name fits a
    14-character cell, otherwise by numbers that the rows carry in front of the names."""
    cell = 14
    numbered = max(len(a) for a in agents) > cell - 1
    rows = [f"{i + 1:>2} {a}" if numbered else a for i, a in enumerate(agents)]
    heads = [str(i + 1) if numbered else a for i, a in enumerate(agents)]
    width = max(len(r) for r in rows) + 2
    lines = [" " * width + "".join(h.rjust(cell) for h in heads)]
    for a, row in zip(agents, rows):
        lines.append(row.ljust(width) + "".join(_fmt(cross[a].get(b), cell) if a != b else ".".rjust(cell)
                                                for b in agents))
    return lines


def _write_csv(result: TournamentResult, path: Path) -> None:
    agents = result.agents
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["agent"] + list(agents) + ["field", "field_ci95_low", "field_ci95_high"])
        for a in agents:
            row = [a]
            for b in agents:
                e = result.crosstable[a].get(b)
                row.append("" if e is None else f"{e.mean:.3f}")
            fe = result.field[a]
            w.writerow(row + [f"{fe.mean:.3f}", f"{fe.low:.3f}", f"{fe.high:.3f}"])


def _write_png(result: TournamentResult, path: Path) -> None:
    import matplotlib.pyplot as plt

    fig = crosstable_figure(result)
    fig.savefig(path, dpi=150)
    plt.close(fig)


def crosstable_figure(result: TournamentResult):
    """The cross-table as a heat map (a matplotlib Figure, Agg backend). The figure is sized
    from the number of agents and the longest name, and matplotlib's constrained layout places
    the tick labels, the title and the colour bar so that none covers another."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    agents = result.agents
    k = len(agents)
    grid = np.full((k, k), np.nan)
    for i, a in enumerate(agents):
        for j, b in enumerate(agents):
            e = result.crosstable[a].get(b)
            if e is not None:
                grid[i, j] = e.mean
    limit = float(np.nanmax(np.abs(grid))) if np.isfinite(grid).any() else 1.0
    limit = limit or 1.0
    longest = max(len(a) for a in agents)
    label_inches = 0.075 * longest   # 8-point text: about 0.075 inch a character
    cell = 0.95
    fig = plt.figure(figsize=(max(5.0, 1.6 + label_inches + cell * k),
                              max(3.5, 1.3 + 0.7 * label_inches + cell * k)), layout="constrained")
    ax = fig.add_subplot()
    image = ax.imshow(grid, cmap="RdBu", vmin=-limit, vmax=limit)
    for i, a in enumerate(agents):
        for j, b in enumerate(agents):
            e = result.crosstable[a].get(b)
            if e is not None:
                ax.text(j, i, f"{e.mean:+.1f}\n±{e.half_width:.1f}", ha="center", va="center", fontsize=8,
                        color="white" if abs(e.mean) > 0.6 * limit else "black")
    ax.set_xticks(range(k), agents, rotation=45, ha="right", rotation_mode="anchor", fontsize=8)
    ax.set_yticks(range(k), agents, fontsize=8)
    ax.set_xlabel("opponent")
    ax.set_ylabel("agent")
    scheme = "duplicate" if result.config.duplicate else "no duplicate"
    if result.config.luck_correction:
        scheme += ", luck-corrected"
    fig.suptitle(f"{result.rules.name}, {result.config.players} players, {scheme}\n"
                 f"bb/100 of the row agent against the column agent (95% CI)", fontsize=9)
    fig.colorbar(image, ax=ax, label="bb/100", shrink=0.8)
    return fig


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._=-]+", "_", text).strip("_")


def write_outputs(result: TournamentResult, folder: Path, argv: Sequence[str] | None = None) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    data = result.as_dict()
    data["command"] = " ".join(argv) if argv else None
    (folder / "results.json").write_text(json.dumps(data, indent=2, default=str) + "\n")
    _write_csv(result, folder / "crosstable.csv")
    _write_png(result, folder / "crosstable.png")
    if result.config.histories:
        hist = folder / "histories"
        hist.mkdir(exist_ok=True)
        for m in result.matches:
            (hist / f"{_slug('_vs_'.join(m.agents))}.txt").write_text("\n".join(m.histories))


def default_name(cfg: TournamentConfig, when: datetime | None = None) -> str:
    """The run folder's name: game, rules overrides, players, scheme, seed and time.

    >>> default_name(TournamentConfig(game="follow_the_bitch", rules={"low_chicago": True}, players=3,
    ...                               luck_correction=False), datetime(2026, 1, 2, 3, 4, 5))
    'follow_the_bitch_low_chicago=true_3p_dup_seed0_20260102-030405'
    """
    rules = "".join(f"_{_slug(f'{k}={_rule_text(v)}')}" for k, v in sorted(cfg.rules.items()))
    return (f"{cfg.game}{rules}_{cfg.players}p_{'dup' if cfg.duplicate else 'plain'}"
            f"{'_luck' if cfg.luck_correction else ''}_seed{cfg.seed}_{when or datetime.now():%Y%m%d-%H%M%S}")


def _rule_text(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return str(value).lower()
    if isinstance(value, (tuple, list)):
        return ",".join(f"{x:g}" if isinstance(x, float) else str(x) for x in value)
    return str(value)


def main(cfg: TournamentConfig, argv: Sequence[str] | None = None) -> TournamentResult:
    """Run the tournament, print the tables and (``cfg.write``) write the run folder."""
    result = run_tournament(cfg)
    print(format_table(result))
    if cfg.write:
        folder = Path(cfg.out_dir) / (cfg.name or default_name(result.config))
        write_outputs(result, folder, argv)
        print(f"\nWrote {folder}/results.json, crosstable.csv, crosstable.png"
              + (", histories/" if cfg.histories else ""))
    return result


def _rule_value(rules: Rules, key: str, text: str) -> Any:
    """Read ``--rule key=text`` as the type of the field's current value."""
    fields = {f.name for f in dataclasses.fields(rules)}
    if key not in fields:
        raise ValueError(f"unknown rule {key!r}; fields are {', '.join(sorted(fields))}")
    current = getattr(rules, key)
    low = text.strip().lower()
    if isinstance(current, bool):
        if low in ("true", "1", "yes", "on"):
            return True
        if low in ("false", "0", "no", "off"):
            return False
        raise ValueError(f"--rule {key}= takes true or false, not {text!r}")
    if isinstance(current, int):
        try:
            return int(text)
        except ValueError:
            raise ValueError(f"--rule {key}= takes a whole number, not {text!r}") from None
    if isinstance(current, tuple) and key in ("spread_sizes", "pot_fractions"):
        try:
            return tuple(float(x) for x in text.split(","))
        except ValueError:
            raise ValueError(f"--rule {key}= takes numbers separated by commas, not {text!r}") from None
    if low in ("none", "null"):
        return None
    return text


class _Parser(argparse.ArgumentParser):
    """Usage errors in one line, ``tournament.py: error: ...``, and exit code 2 (argparse's own
    errors, such as ``--players x``, included)."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message}\n")


def parse_args(argv: Sequence[str] | None = None) -> TournamentConfig:
    """The tournament a command line asks for, checked (:func:`check_config`) before anything
    is played: any usage error (an unknown option or rule, a bad value, a bad agent spec or
    ``ppo`` model, a player count the game or the agents cannot seat) exits with code 2 and one
    line."""
    parser = _Parser(
        prog="tournament.py",
        description="Duplicate tournament between agents.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="agents:\n" + describe_agents() + f"\ngames: {', '.join(RULES)}\n"
               "Usage errors exit with code 2.")
    parser.add_argument("--game", default="soko", choices=sorted(RULES))
    parser.add_argument("--agents", nargs="+", default=["tag", "equity", "random", "call"], metavar="SPEC")
    parser.add_argument("--hands", type=int, default=20000, help="hands per match (default 20000)")
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rule", action="append", default=[], metavar="FIELD=VALUE",
                        help="a rules override, e.g. --rule low_chicago=true (repeatable)")
    parser.add_argument("--no-duplicate", action="store_true", help="independent deals for every hand")
    parser.add_argument("--luck-correction", action=argparse.BooleanOptionalAction, default=None,
                        help="subtract the luck of the cards dealt, an unbiased control variate "
                             "(train/luck.py; the raw numbers are kept too). Default: on for "
                             "games without wild cards (Soko), off for Follow the Bitch (costlier there, "
                             "for less)")
    parser.add_argument("--workers", type=int, default=0, help="processes (default: every core)")
    parser.add_argument("--name", default=None, help="run folder name under --out")
    parser.add_argument("--out", default="runs/tournaments")
    parser.add_argument("--histories", type=int, default=0, metavar="N",
                        help="write the first N hand histories of each match")
    parser.add_argument("--no-progress", action="store_true")
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args(argv)
    base = RULES[args.game]
    overrides: dict[str, Any] = {}
    for item in args.rule:
        key, eq, value = item.partition("=")
        if not eq:
            parser.error(f"--rule takes FIELD=VALUE, not {item!r}")
        try:
            overrides[key.strip()] = _rule_value(base, key.strip(), value)
        except ValueError as exc:
            parser.error(str(exc))
    if args.hands < 1:
        parser.error("--hands must be at least 1")
    if args.histories < 0:
        parser.error("--histories must be at least 0")
    cfg = TournamentConfig(game=args.game, agents=list(args.agents), hands=args.hands,
                           players=args.players, seed=args.seed, rules=overrides,
                           duplicate=not args.no_duplicate, luck_correction=args.luck_correction,
                           workers=args.workers, name=args.name,
                           out_dir=args.out, histories=args.histories,
                           progress=not args.no_progress, write=not args.no_write)
    try:
        check_config(cfg)
    except ValueError as exc:
        parser.error(str(exc))
    return cfg


if __name__ == "__main__":
    config = parse_args()
    try:
        main(config, argv=sys.argv)
    except ValueError as exc:  # not a usage error (those exit 2 above): a failure while playing
        sys.exit(f"tournament.py: {exc}")
