"""Statistics for win rates: Wilson intervals and paired comparisons of two agents on the same deals;
means of other per-game or per-series figures with a normal interval.

The Wilson interval and the exact McNemar test are a few lines here rather than scipy.stats, so that evaluation
needs no scipy (a core install is numpy, gymnasium and pettingzoo); the tests check they equal scipy's numbers
(``binomtest(...).proportion_ci(method="wilson")`` and ``binomtest(b, b + c, 0.5).pvalue``)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

Z95 = 1.959963984540054


@dataclass(frozen=True)
class Rate:
    wins: int
    games: int
    low: float
    high: float

    @property
    def rate(self) -> float:
        return self.wins / self.games if self.games else float("nan")

    def __str__(self) -> str:
        return f"{100 * self.rate:.1f}% [{100 * self.low:.1f}, {100 * self.high:.1f}]"


def wilson(wins: int, games: int, z: float = Z95) -> Rate:
    """The Wilson score interval for a binomial proportion (95 % by default)."""
    if games == 0:
        return Rate(0, 0, 0.0, 1.0)
    p = wins / games
    denominator = 1 + z * z / games
    centre = (p + z * z / (2 * games)) / denominator
    half = z * math.sqrt(p * (1 - p) / games + z * z / (4 * games * games)) / denominator
    # The interval holds p; rounding alone can leave it a hair short at 0 and 1 wins (a negative error bar).
    return Rate(wins, games, max(0.0, min(p, centre - half)), min(1.0, max(p, centre + half)))


@dataclass(frozen=True)
class PairedComparison:
    """A minus B on the same deals: the difference in win rate with a 95 % interval, and McNemar's test."""

    games: int
    only_a: int  # deals A won and B lost
    only_b: int  # deals B won and A lost
    difference: float
    low: float
    high: float
    p_value: float

    def __str__(self) -> str:
        return (f"{100 * self.difference:+.1f} points [{100 * self.low:+.1f}, {100 * self.high:+.1f}], "
                f"McNemar {format_p(self.p_value)} ({self.only_a} vs {self.only_b} discordant deals)")


def format_p(p: float) -> str:
    return "p < 1e-6" if p < 1e-6 else f"p = {p:.2g}"


@dataclass(frozen=True)
class Difference:
    """Rate A minus rate B from two independent samples, with a 95 % (Wald) interval."""

    difference: float
    low: float
    high: float

    def __str__(self) -> str:
        return f"{100 * self.difference:+.1f} points [{100 * self.low:+.1f}, {100 * self.high:+.1f}]"


def difference(wins_a: int, games_a: int, rate_b: float, games_b: int, z: float = Z95) -> Difference:
    """A measured rate against a reported one (``rate_b`` from ``games_b`` games), both with sampling noise."""
    pa = wins_a / games_a
    se = math.sqrt(pa * (1 - pa) / games_a + rate_b * (1 - rate_b) / games_b)
    d = pa - rate_b
    return Difference(d, d - z * se, d + z * se)


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value: a binomial test of b successes in b + c fair trials."""
    n = b + c
    if n == 0:
        return 1.0
    k = min(b, c)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2**n
    return min(1.0, 2 * tail)


def paired(a: Sequence[bool], b: Sequence[bool], z: float = Z95) -> PairedComparison:
    """Compare two agents' wins on the same deals (``a[i]`` and ``b[i]`` are the results of deal ``i``)."""
    if len(a) != len(b):
        raise ValueError(f"paired results need the same deals: {len(a)} vs {len(b)} games")
    n = len(a)
    only_a = sum(1 for x, y in zip(a, b, strict=True) if x and not y)
    only_b = sum(1 for x, y in zip(a, b, strict=True) if y and not x)
    d = (only_a - only_b) / n
    # Variance of the mean of per-deal differences (each -1, 0 or +1).
    var = ((only_a + only_b) / n - d * d) / n
    half = z * math.sqrt(max(var, 0.0))
    return PairedComparison(n, only_a, only_b, d, d - half, d + half, mcnemar_exact(only_a, only_b))


@dataclass(frozen=True)
class Mean:
    """The mean of ``n`` independent values with a 95 % normal (CLT) interval."""

    mean: float
    low: float
    high: float
    n: int

    def __str__(self) -> str:
        return f"{self.mean:.1f} [{self.low:.1f}, {self.high:.1f}]"


def mean_interval(values: Sequence[float], z: float = Z95) -> Mean:
    """Mean of ``values`` with ``mean ± z * s / sqrt(n)`` (``s`` the sample standard deviation); one value gives
    no spread, so its interval is the whole real line."""
    n = len(values)
    if n == 0:
        raise ValueError("the mean of no values")
    mean = sum(values) / n
    if n == 1:
        return Mean(mean, -math.inf, math.inf, 1)
    half = z * math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1) / n)
    return Mean(mean, mean - half, mean + half, n)
