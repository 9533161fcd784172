"""The one agent protocol every cardzoo agent follows.

An agent acts from its own observation and action mask only, plus whatever it remembers of its own earlier
observations; ``reset`` clears that memory between games. It never receives the env or the game state. (Oracles,
which do see the full state, live in ``cardzoo.agents.oracles`` and are named so.)
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Agent(Protocol):
    def reset(self, seed: int | None = None) -> None:
        """Forget the previous game; ``seed`` seeds any randomness of the agent."""

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """The action to take, one whose ``action_mask`` entry is 1."""
