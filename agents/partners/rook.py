"""Rook opponents beside the heuristic, for the benchmark's opponent pool (:mod:`cardzoo.agents.pools`): the
heuristic player (:mod:`cardzoo.agents.rook_heuristic`) with another bidding temper.

The heuristic bids while the amount is within its *limit*: its estimate of the points it would take, less a margin
of 10 points. The margin is its temper, and an opponent's temper is what a bidder must read:

- ``heuristic_bold`` bids up to its whole estimate (margin 0): it wins more bids and goes set more often;
- ``heuristic_timid`` stops 25 points short of it: it lets the other player have the bid cheaply.

Everything else (trumps, discards, play, draws) is the heuristic's. Both act on their observation only and keep no
memory, like the heuristic.
"""

from __future__ import annotations

from cardzoo.envs.rook.rules import BID0, BID_STEP, MIN_BID, PASS

from ..rook_heuristic import RookHeuristic, estimate_points


class _Temper(RookHeuristic):
    bid_margin = 10

    def limit(self, hand: int) -> int:
        """The highest amount it bids with ``hand`` (a multiple of 5)."""
        return int((estimate_points(hand) - self.bid_margin) // BID_STEP) * BID_STEP

    def _bid(self, bits: int, hand: int, legal: int) -> int:
        lowest = next(a for a in range(BID0, PASS + 1) if legal >> a & 1 and a != PASS)
        amount = MIN_BID + (lowest - BID0) * BID_STEP
        if amount <= self.limit(hand) or not legal >> PASS & 1:
            return lowest
        return PASS


class Bold(_Temper):
    """The heuristic, bidding up to its whole estimate."""

    name = "heuristic_bold"
    bid_margin = 0


class Timid(_Temper):
    """The heuristic, stopping 25 points short of its estimate."""

    name = "heuristic_timid"
    bid_margin = 25


OPPONENTS = (Bold, Timid)
