"""Summit Rush, version 0: ``from cardzoo.envs import summit_rush_v0; par = summit_rush_v0.parallel_env()``."""

from .summit_rush.env import SummitRushEnv, describe, env, make_config, parallel_env, raw_env
from .summit_rush.observer import Observer

__all__ = ["SummitRushEnv", "env", "parallel_env", "raw_env", "describe", "make_config", "Observer"]
