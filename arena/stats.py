"""Interval estimates for tournament results: a mean with its 95% Student-t interval.

**Statistics.** The sampling unit is the group: an agent's result for a group is its mean
result in big bets over the group's hands (heads-up: over the two seatings). A match reports
the mean over groups, times 100 (big bets per 100 hands, bb/100), with a 95% interval from
Student's t distribution on the groups (``mean_ci``). The cross-table cell (A, B) is, over
the matches where both sit, the mean of half the difference of their group results (heads-up
exactly A's result against B, with the same interval: the degrees of freedom the luck
correction's fitted coefficients cost are taken off here too); the ranking averages an agent's
matches, with the standard errors of the independent matches combined (``combine``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
from scipy.special import stdtrit

__all__ = ["Estimate", "mean_ci", "combine", "t_quantile"]


def t_quantile(confidence: float, df: int) -> float:
    """The two-sided critical value of Student's t: P(|T| <= q) = ``confidence``
    (``scipy.special.stdtrit``, the function ``scipy.stats.t.ppf`` calls: the same numbers,
    without importing ``scipy.stats``, half a second of every command that reports an interval);
    NaN below one degree of freedom.

    >>> round(t_quantile(0.95, 4), 4), round(t_quantile(0.95, 30), 4), round(t_quantile(0.95, 10**6), 3)
    (2.7764, 2.0423, 1.96)
    """
    if df < 1:
        return math.nan
    return float(stdtrit(df, 0.5 + confidence / 2))


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
    correction's, ``arena.luck.control``); as for regression residuals, they cost that many
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
