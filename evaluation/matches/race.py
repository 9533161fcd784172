"""Race the record, the Summit Rush document's third variant: play several games in a row and add up the stock
cards left over in the games won.

A *series* is ``length`` games on consecutive deals (series ``k`` of a study is its deals ``k * length`` to
``(k + 1) * length - 1``, so every team races the same series); its *total* is the sum of the scores of the games
won in it, the score of a won game being the cards left in all stocks (``info["score"]``), and a lost or cut-off game
adding nothing. The *record* is the best total of all series. The rulings are in ``seeds/summit_rush.md``.

``cardzoo race`` plays series from the command line; :func:`race` turns the records of a study into totals.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from cardzoo.envs.common.stats import Mean, mean_interval


@dataclass(frozen=True)
class Race:
    """Series totals of one team, their mean (with its 95 % interval) and the record."""

    length: int
    totals: tuple[int, ...]
    first: int = 0  # the deal (game seed) the first series starts with

    @property
    def mean(self) -> Mean:
        return mean_interval(self.totals)

    @property
    def record(self) -> int:
        return max(self.totals)

    @property
    def record_series(self) -> int:
        """The first series whose total is the record."""
        return self.totals.index(self.record)

    def __str__(self) -> str:
        first = self.first + self.record_series * self.length
        return (f"mean total {self.mean} over {len(self.totals)} series of {self.length} games; record "
                f"{self.record} (series {self.record_series}: deals {first}..{first + self.length - 1})")


def race(records: Sequence[dict[str, Any]], length: int = 10) -> Race:
    """The series totals of a study's records (in deal order); the games after the last whole series are left out."""
    if length < 1:
        raise ValueError(f"a series has at least one game, got length {length}")
    series = len(records) // length
    if series == 0:
        raise ValueError(f"{len(records)} games make no series of {length}")
    scores = [r["score"] if r["outcome"] == "win" else 0 for r in records]
    return Race(length, tuple(sum(scores[k * length : (k + 1) * length]) for k in range(series)),
                records[0].get("seed", 0))
