"""PPO on the new API stack for cardzoo games: the masked RLModule, the policy mapping and sensible defaults.

``ppo_config("rope_team")`` is ready to ``.build_algo()``: every seat of a cooperative game plays one shared
policy (``"shared"``; parameter sharing, each seat on its own observation); Rook plays one shared policy too
(self-play) or, with ``seat_policies=True``, one policy per seat (``"player_0"``, ``"player_1"``). The module is
RLlib's own action-masking PPO module: illegal actions get a -inf logit before sampling and in the loss.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
from ray.rllib.core.rl_module.rl_module import RLModuleSpec
from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule

from cardzoo.envs.registry import spec

from .env import ENV_IDS, GAMES, env_config, register_envs

SHARED = "shared"


def module_spec(hidden: Sequence[int] = (128, 128), activation: str = "tanh") -> RLModuleSpec:
    """The masked PPO module: separate actor and critic MLPs (``hidden``), a linear action layer (as the numpy
    policy format has it: hidden layers with one activation, then the action layer)."""
    return RLModuleSpec(module_class=ActionMaskingTorchRLModule, model_config={
        "fcnet_hiddens": list(hidden), "fcnet_activation": activation, "head_fcnet_hiddens": [],
        "vf_share_layers": False})


def policy_ids(game: str, seat_policies: bool = False) -> list[str]:
    """The policies of a run: one shared policy, or (Rook with ``seat_policies``) one per seat."""
    if seat_policies:
        if spec(game).cooperative:
            from cardzoo.envs.common.errors import OptionError

            raise OptionError(f"{game} is cooperative: its seats share one policy (seat_policies is for rook)")
        return ["player_0", "player_1"]
    return [SHARED]


def _to_shared(agent_id, episode=None, **kwargs) -> str:
    return SHARED


def _to_seat(agent_id, episode=None, **kwargs) -> str:
    return agent_id


def ppo_config(game: str = "rope_team", *, env: dict[str, Any] | None = None, seat_policies: bool = False,
               env_runners: int = 1, envs_per_runner: int = 1, hidden: Sequence[int] = (128, 128),
               seed: int | None = 0, **training: Any) -> PPOConfig:
    """A PPO config for ``game``. ``env`` overrides the game's env options (``env.GAMES``), ``training`` any
    ``PPOConfig.training`` argument. Defaults: episodes are short and only the outcome counts (gamma 1), batches of
    4,000 decisions, minibatches of 500, 4 epochs, a small entropy bonus."""
    register_envs()
    policies = policy_ids(game, seat_policies)
    settings = {"lr": 3e-4, "gamma": 1.0, "lambda_": 0.95, "train_batch_size_per_learner": 4000,
                "minibatch_size": 500, "num_epochs": 4, "entropy_coeff": 0.01, "clip_param": 0.2,
                "vf_loss_coeff": 0.5, **training}
    return (
        PPOConfig()
        .environment(ENV_IDS[game], env_config=env_config(game, **(env or {})))
        # No sampling timeout: on a busy machine a batch can take longer than RLlib's 60 s, and a late batch is
        # dropped, so the iteration would learn nothing.
        .env_runners(num_env_runners=env_runners, num_envs_per_env_runner=envs_per_runner, sample_timeout_s=None)
        .multi_agent(policies=set(policies), policy_mapping_fn=_to_seat if seat_policies else _to_shared)
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={p: module_spec(hidden) for p in policies}))
        .training(**settings)
        .debugging(seed=seed)
    )


__all__ = ["GAMES", "SHARED", "module_spec", "policy_ids", "ppo_config"]
