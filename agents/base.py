"""The agent protocols every cardzoo agent follows.

An agent acts from its own observation and action mask only, plus whatever it remembers of its own earlier
observations; ``reset`` clears that memory between games. It never receives the env or the game state. (Oracles,
which do see the full state, live in ``cardzoo.agents.oracles`` and are named so.)

:class:`BitsAgent` is the bit-level form: an agent that decides from the observation and the mask as ints (bit ``i``
= entry ``i``, which is how the observers build them) subclasses it and writes only ``act_bits``; ``act`` packs the
arrays for it. Game loops that already hold the ints (the evaluation's fast loops, the search's own games) call
``act_bits`` directly when ``isinstance(agent, BitsAgent)``. Agents read the ints with the game's
``cardzoo.envs.<game>.observer.decode``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Protocol, runtime_checkable

import numpy as np

from cardzoo.envs.common.layout import to_bits


@runtime_checkable
class Agent(Protocol):
    def reset(self, seed: int | None = None) -> None:
        """Forget the previous game; ``seed`` seeds any randomness of the agent."""

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """The action to take, one whose ``action_mask`` entry is 1."""


class BitsAgent(ABC):
    """An agent that decides from the observation and action mask as ints; see the module docstring."""

    def reset(self, seed: int | None = None) -> None:  # noqa: B027 (a default, not an abstract method)
        """Forget the previous game (nothing to forget unless a subclass remembers)."""

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        return self.act_bits(to_bits(observation), to_bits(action_mask), observation.shape[0], action_mask.shape[0])

    @abstractmethod
    def act_bits(self, bits: int, legal: int, size: int | None = None, n_actions: int | None = None) -> int:
        """The action for the observation ``bits`` and the legal actions ``legal`` (bit ``a`` set: action ``a`` is
        legal). ``size`` and ``n_actions`` are the lengths of the observation and the mask: games whose lengths
        vary with the options (Summit Rush) need them, the others ignore them."""
