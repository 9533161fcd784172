"""Ray RLlib (new API stack) for cardzoo: envs, the masked PPO module and config, export to numpy, training.

    import ray
    from cardzoo.training.rllib import ppo_config

    ray.init()
    algo = ppo_config("rope_team", env_runners=2).build_algo()
    for _ in range(10):
        algo.train()

``cardzoo train GAME --backend rllib`` runs ``cardzoo.training.rllib.train``. Needs the ``rllib`` extra.
"""

from .config import SHARED, module_spec, policy_ids, ppo_config
from .env import ENV_IDS, GAMES, make_env, register_envs
from .export import export_module

__all__ = ["ENV_IDS", "GAMES", "SHARED", "export_module", "make_env", "module_spec", "policy_ids", "ppo_config",
           "register_envs"]
