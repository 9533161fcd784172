"""stable-baselines3's ``VecEnv`` view of a batched engine, for MaskablePPO unchanged.

    from sb3_contrib import MaskablePPO
    from cardzoo.envs.batched import make_batched
    from cardzoo.training.batched_vec import BatchedVecEnv
    vec = BatchedVecEnv(make_batched("rope_team_v0", 64, level="hard"))
    MaskablePPO("MlpPolicy", vec, n_steps=128).learn(100_000)

One env of the VecEnv is one game slot of the engine, played as ``SharedPolicyEnv`` plays a game: each step is
the decision of the seat to move, from its own observation, rewarded with that seat's reward. MaskablePPO finds
the masks through ``env_method("action_masks")``. A game that ends is replaced in the same step (SB3's VecEnv
convention), with the ended game's last observation in ``infos[i]["terminal_observation"]`` and how it ended in
``infos[i]["outcome"]``. ``seed(s)`` (MaskablePPO's ``seed=``) makes the next reset play games ``s, s+1, ...``.
``features`` (a name in ``cardzoo.agents.features``) replaces each observation by the features built from it and
its mask, as the Gymnasium views do.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from stable_baselines3.common.vec_env import VecEnv

from cardzoo.envs.batched import MAX_SEED, BatchedEnv
from cardzoo.envs.common.seeding import refuse_benchmark_stream, training_stream_start


class BatchedVecEnv(VecEnv):
    """See the module docstring."""

    def __init__(self, engine: BatchedEnv, features: str | None = None):
        self.engine = engine
        self.render_mode = None
        self.features = None
        space = engine.observation_space
        if features:
            from cardzoo.agents.batched_features import batched
            from cardzoo.agents.features import FEATURES

            self.features, extra = batched(features), FEATURES[features][1]
            space = gym.spaces.Box(-1.0, 1.0, (engine.observation_size + extra,), np.float32)
        super().__init__(engine.num_envs, space, engine.action_space)
        self._slots = np.arange(engine.num_envs)
        self._mask = self._seat = self._actions = None

    def _view(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        return obs if self.features is None else self.features(obs, mask)

    def reset(self):
        first = self._seeds[0]
        if first is None:
            first = training_stream_start(np.random.default_rng(), MAX_SEED - self.num_envs)
        else:
            refuse_benchmark_stream(first, "training (the batched env's seed stream)")
        obs, self._mask, self._seat = self.engine.reset(seeds=first)
        self._reset_seeds()
        return self._view(obs, self._mask)

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions)

    def step_wait(self):
        movers = self._seat
        obs, mask, self._seat, rewards, done = self.engine.step(self._actions)
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        engine = self.engine
        for i in np.flatnonzero(done):
            infos[i] = {"terminal_observation": self._view(engine.final_obs[i : i + 1], np.zeros_like(mask[:1]))[0],
                        "TimeLimit.truncated": bool(engine.truncated[i]),
                        "outcome": engine.outcomes[engine.outcome[i]]}
        self._mask = mask
        reward = rewards[self._slots, movers].astype(np.float32)
        return self._view(obs, mask), reward, done, infos

    def action_masks(self) -> np.ndarray:
        return self._mask.astype(bool)

    def close(self) -> None:
        pass

    # ---------------------------------------------------------------- VecEnv's per-env access
    def _indices(self, indices) -> list[int]:
        if indices is None:
            return list(range(self.num_envs))
        return [indices] if isinstance(indices, int) else list(indices)

    def get_attr(self, attr_name: str, indices=None) -> list[Any]:
        return [getattr(self, attr_name)] * len(self._indices(indices))

    def set_attr(self, attr_name: str, value: Any, indices=None) -> None:
        setattr(self, attr_name, value)

    def env_method(self, method_name: str, *method_args, indices=None, **method_kwargs) -> list[Any]:
        """``action_masks`` per env (what MaskablePPO calls); other methods apply to the whole batch."""
        chosen = self._indices(indices)
        if method_name == "action_masks":
            return list(self.action_masks()[chosen])
        result = getattr(self, method_name)(*method_args, **method_kwargs)
        return [result] * len(chosen)

    def env_is_wrapped(self, wrapper_class, indices=None) -> list[bool]:
        return [False] * len(self._indices(indices))
