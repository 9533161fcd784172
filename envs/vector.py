"""Gymnasium's ``VectorEnv`` view of a batched engine (shared policy: each step is the acting seat's decision).

    from cardzoo.envs.batched import make_batched
    from cardzoo.envs.vector import BatchedVectorEnv
    envs = BatchedVectorEnv(make_batched("rope_team_v0", 1024, level="hard"))
    obs, infos = envs.reset(seed=0)                      # env i plays seed 0 + i, as Gymnasium seeds vector envs
    obs, rewards, terminated, truncated, infos = envs.step(actions)

As ``cardzoo.training.gym_envs.SharedPolicyEnv`` does for one game, every step is the decision of whichever seat
is to move, made from that seat's own observation, and its reward is the reward of the seat that decided (in a
cooperative game, the team's). The mask of the seat to decide is ``infos["action_mask"]`` and ``action_masks()``
(MaskablePPO's name), and ``infos["seat"]`` says which seat it is.

Autoreset is Gymnasium's ``SAME_STEP`` mode (``metadata["autoreset_mode"]``): a game that ends is replaced by the
next game of the engine's seed stream in the same step; ``infos["final_obs"]`` holds the ended game as its last
mover sees it and ``infos["final_info"]["outcome"]`` how it ended (``infos["_final_obs"]`` marks those envs).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from .batched import MAX_SEED, BatchedEnv
from .common.errors import OptionError


class BatchedVectorEnv(VectorEnv):
    """See the module docstring."""

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(self, engine: BatchedEnv):
        self.engine = engine
        self.num_envs = engine.num_envs
        self.single_observation_space = engine.observation_space
        self.single_action_space = engine.action_space
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._slots = np.arange(self.num_envs)
        self._mask = self._seat = None

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        if options:
            raise OptionError(f"reset options are not supported by a batched engine, got {sorted(options)}")
        super().reset(seed=seed)
        first = seed if seed is not None else int(self.np_random.integers(MAX_SEED - self.num_envs))
        obs, self._mask, self._seat = self.engine.reset(seeds=first)
        return obs, {"action_mask": self._mask, "seat": self._seat}

    def step(self, actions):
        if self._mask is None:
            raise OptionError("step() before reset(): call reset() first")
        movers = self._seat
        obs, self._mask, self._seat, rewards, done = self.engine.step(actions)
        truncated = done & self.engine.truncated
        infos: dict[str, Any] = {"action_mask": self._mask, "seat": self._seat}
        if done.any():
            final = np.full(self.num_envs, None, dtype=object)
            outcome = np.full(self.num_envs, None, dtype=object)
            for i in np.flatnonzero(done):
                final[i] = self.engine.final_obs[i].copy()
                outcome[i] = self.engine.outcomes[self.engine.outcome[i]]
            infos.update(final_obs=final, _final_obs=done, final_info={"outcome": outcome, "_outcome": done},
                         _final_info=done)
        return obs, rewards[self._slots, movers], done & ~truncated, truncated, infos

    def action_masks(self) -> np.ndarray:
        """bool[N, A]: the legal actions of the seat to decide in each game."""
        return self._mask.astype(bool)
