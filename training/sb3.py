"""Stable-Baselines3 / sb3-contrib on cardzoo (``pip install cardzoo[train]``).

``make_vec_env(game, n_envs, **options)`` is a VecEnv of the project's gym views (``gym_envs.make_view``),
ready for ``MaskablePPO("MlpPolicy", vec)``: one shared policy in every seat of Rope Team and Summit Rush, the
learner against ``opponent`` in Rook.

``SuperSuitMasks(venv)`` makes SuperSuit's vector env of a Parallel game (``pettingzoo_env_to_vec_env_v1`` +
``concat_vec_envs_v1(..., base_class="stable_baselines3")``) usable by MaskablePPO: SuperSuit's env has no
``has_attr``/``env_method``/``get_attr``, and its observations are the env's dicts; this wrapper hands the policy the
``observation`` part and MaskablePPO the ``action_mask`` part through ``env_method("action_masks")``.
"""

from __future__ import annotations

import numpy as np
from stable_baselines3.common.vec_env import DummyVecEnv, VecEnv, VecEnvWrapper

from .gym_envs import make_view


def make_vec_env(game: str, n_envs: int = 8, seed: int = 0, opponent: str = "heuristic",
                 vec_env_cls: type[VecEnv] = DummyVecEnv, **options) -> VecEnv:
    """``n_envs`` views of ``game`` ("rope_team", "summit_rush" or "rook") built with the env ``options``; env ``i``
    is seeded ``seed * 1000 + i``. ``opponent`` names the Rook opponent (``cardzoo.agents.registry``)."""
    return vec_env_cls([lambda i=i: make_view(game, seed * 1000 + i, opponent, **options) for i in range(n_envs)])


class SuperSuitMasks(VecEnvWrapper):
    """See the module docstring."""

    def __init__(self, venv: VecEnv):
        super().__init__(venv, observation_space=venv.observation_space["observation"])
        self._masks = None

    def _split(self, obs: dict) -> np.ndarray:
        self._masks = obs["action_mask"].astype(bool)
        return obs["observation"]

    def reset(self) -> np.ndarray:
        return self._split(self.venv.reset())

    def step_wait(self):
        obs, rewards, dones, infos = self.venv.step_wait()
        for info in infos:
            if "terminal_observation" in info:
                info["terminal_observation"] = info["terminal_observation"]["observation"]
        return self._split(obs), rewards, dones, infos

    def get_attr(self, attr_name: str, indices=None) -> list:
        if attr_name != "render_mode":
            raise AttributeError(f"SuperSuit's vector env has no per-env attribute {attr_name!r}")
        return [self.venv.render_mode] * len(self._get_indices(indices))

    def has_attr(self, attr_name: str) -> bool:
        return attr_name == "action_masks"

    def env_method(self, method_name: str, *args, indices=None, **kwargs) -> list:
        if method_name != "action_masks":
            raise AttributeError(f"SuperSuit's vector env has no per-env method {method_name!r}")
        return list(self._masks if indices is None else self._masks[indices])
