"""cardzoo games as RLlib ``MultiAgentEnv``\\s, with the observations RLlib's action-masking module reads.

``make_env("rope_team", level="hard")`` wraps a game in RLlib's own PettingZoo wrapper (``PettingZooEnv`` for the
turn-based AEC games, ``ParallelPettingZooEnv`` for Summit Rush) and converts each observation on the way out:
cardzoo's ``{"observation": int8, "action_mask": int8}`` becomes ``{"observations": float32, "action_mask":
float32}``, the keys and dtype of ``ray.rllib.examples.rl_modules.classes.action_masking_rlm``. The env itself is
unchanged. ``register_envs()`` registers every game under ``ENV_IDS`` for ``PPOConfig.environment(...)``.

The env config holds the game's options (``level``, ``rounds``, ...) and one option of the adapter's,
``reward_scale`` (every reward is multiplied by it; Rook's single rounds pay hundreds of points). RLlib's env check
steps an unmasked random action: the envs' default ``illegal_action="penalize"`` ends that game with the penalty.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from ray.rllib.env.multi_agent_env import MultiAgentEnv
from ray.rllib.env.wrappers.pettingzoo_env import ParallelPettingZooEnv, PettingZooEnv
from ray.tune.registry import register_env

from cardzoo.envs.registry import GAMES as REGISTRY
from cardzoo.envs.registry import GameSpec


def _defaults(game: GameSpec) -> dict[str, Any]:
    """The options a game trains on by default: its default level, silent (as cardzoo's own training), its
    training options and reward scale (Rook: single rounds, the round's point difference scaled)."""
    options: dict[str, Any] = {"level": game.default_level} if game.default_level else {}
    if game.talk:
        options["talk"] = False
    options.update(game.train_options)
    if game.reward_scale != 1.0:
        options["reward_scale"] = game.reward_scale
    return options


# game -> (cardzoo env module, AEC or Parallel form, the options it trains on by default), from the game registry
GAMES: dict[str, tuple[str, str, dict[str, Any]]] = {
    g.name: (g.env_id, "parallel" if g.parallel else "aec", _defaults(g)) for g in REGISTRY.values()}
ENV_IDS = {game: f"cardzoo_{game}" for game in GAMES}


def masked_space(space: gym.spaces.Dict) -> gym.spaces.Dict:
    """A cardzoo observation space as the action-masking module reads it."""
    return gym.spaces.Dict({
        "action_mask": gym.spaces.Box(0.0, 1.0, space["action_mask"].shape, np.float32),
        "observations": gym.spaces.Box(0.0, 1.0, space["observation"].shape, np.float32),
    })


def masked_observation(obs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    return {"action_mask": obs["action_mask"].astype(np.float32),
            "observations": obs["observation"].astype(np.float32)}


class _Masked:
    """Converts the wrapped env's spaces and observations, and scales its rewards."""

    def _convert(self, reward_scale: float) -> None:
        self.reward_scale = float(reward_scale)
        self.observation_spaces = {a: masked_space(s) for a, s in self.observation_space.spaces.items()}
        self.observation_space = gym.spaces.Dict(self.observation_spaces)
        if getattr(self, "action_spaces", None) is None:
            self.action_spaces = dict(self.action_space.spaces)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        obs, infos = super().reset(seed=seed, options=options)
        return {a: masked_observation(o) for a, o in obs.items()}, infos

    def step(self, actions: dict):
        obs, rewards, terminated, truncated, infos = super().step(actions)
        obs = {a: masked_observation(o) for a, o in obs.items()}
        rewards = {a: self.reward_scale * float(r) for a, r in rewards.items()}
        return obs, rewards, terminated, truncated, infos


class AECAdapter(_Masked, PettingZooEnv):
    """A turn-based cardzoo game (AEC) for RLlib: only the agent to move gets an observation."""

    def __init__(self, env, reward_scale: float = 1.0):
        super().__init__(env)
        self._convert(reward_scale)


class ParallelAdapter(_Masked, ParallelPettingZooEnv):
    """A simultaneous cardzoo game (Parallel) for RLlib: every agent acts every step."""

    def __init__(self, env, reward_scale: float = 1.0):
        super().__init__(env)
        self._convert(reward_scale)


def env_config(game: str, **overrides: Any) -> dict[str, Any]:
    """The env config of ``game``: its training defaults (``GAMES``) updated with ``overrides``."""
    if game not in GAMES:
        from cardzoo.envs.common.errors import OptionError

        raise OptionError(f"no game {game!r} for RLlib; games: {', '.join(GAMES)}")
    return {**GAMES[game][2], **overrides}


def make_env(game: str, **config: Any) -> MultiAgentEnv:
    """``game`` as an RLlib ``MultiAgentEnv``; ``config`` holds the game's options and ``reward_scale``, over its
    training defaults (``env_config``)."""
    from importlib import import_module

    options = env_config(game, **config)
    reward_scale = options.pop("reward_scale", 1.0)
    module_name, form, _ = GAMES[game]
    module = import_module(f"cardzoo.envs.{module_name}")
    if form == "parallel":
        return ParallelAdapter(module.parallel_env(**options), reward_scale)
    return AECAdapter(module.env(**options), reward_scale)


def register_envs() -> dict[str, str]:
    """Register every game with RLlib (``ENV_IDS[game]``, e.g. ``"cardzoo_rope_team"``); returns ``ENV_IDS``."""
    for game, env_id in ENV_IDS.items():
        register_env(env_id, lambda config, game=game: make_env(game, **config))
    return ENV_IDS
