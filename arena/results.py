"""The result types of the arena: what a match gives (:class:`MatchResult`), what a tournament
is asked (:class:`TournamentConfig`) and what it gives (:class:`TournamentResult`).

Plain data, below the code that plays (``arena.match``, ``arena.tournament``) and the code that
shows it (``arena.report``), so that neither needs the other.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from arena.stats import Estimate
from envs.engine.rules import Rules

__all__ = ["MatchResult", "TournamentConfig", "TournamentResult"]


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
    luck_fitted: int = 0                  # regressors fitted by arena.luck.control (0: fixed)
    phh_histories: list[str] = field(default_factory=list)  # the same hands in PHH (.phh texts)

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


@dataclass
class TournamentConfig:
    """Everything a tournament run depends on (saved in results.json)."""

    game: str = "soko"
    agents: list[str] = field(default_factory=lambda: ["tag", "equity", "random", "call"])
    against: list[str] = field(default_factory=list)  # when given: every match seats one of
                                   # ``agents`` with players - 1 of these, and no other match
    hands: int = 20000             # per match (pair or table), rounded up to whole groups
    players: int = 2
    seed: int = 0
    rules: dict[str, Any] = field(default_factory=dict)   # overrides of envs.engine.rules.Rules
    duplicate: bool = True
    luck_correction: bool | None = None  # subtract the luck of the cards (arena/luck.py);
                                         # None: on for games without wild cards
    workers: int = 0               # 0: every core
    ray: str | None = None         # play on Ray actors: "" a local instance, else a cluster's address
    engine: str = "reference"      # reference, batched or auto (arena/batched_play.py)
    name: str | None = None        # run folder; default from game, players, scheme, seed and time
    out_dir: str = "runs/tournaments"
    histories: int = 0             # write the first N hands of each match
    progress: bool = True
    write: bool = True


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
                     + ("; luck-corrected (arena/luck.py), raw numbers under \"raw\" and "
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
