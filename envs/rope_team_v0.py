"""Rope Team, version 0: ``from cardzoo.envs import rope_team_v0; env = rope_team_v0.env()``."""

from .rope_team.env import env, raw_env
from .rope_team.observer import describe

__all__ = ["env", "raw_env", "describe"]
