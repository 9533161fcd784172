"""Ascend's agents (tests only): its baseline plays its lowest card that beats the top card; a stranger plays its
highest; the pool holds one of each."""

from __future__ import annotations

import numpy as np

from cardzoo.agents.pools import Pool

from . import rules


class Lowest:
    name = "ascend_low"

    def reset(self, seed=None) -> None:
        pass

    def act(self, observation, action_mask) -> int:
        n = rules.N_CARDS
        top = np.flatnonzero(observation[n:2 * n])
        legal = np.flatnonzero(action_mask)
        above = [c for c in legal if not len(top) or c > top[0]]
        return int(above[0] if above else legal[0])


class Highest(Lowest):
    name = "ascend_high"

    def act(self, observation, action_mask) -> int:
        return int(np.flatnonzero(action_mask)[-1])


POOL = Pool("tiny", dev=("ascend_low",), test=("ascend_high",), weak=("random",))
