"""Rook for Two, version 0: ``from cardzoo.envs import rook_v0; env = rook_v0.env()``."""

from .rook.env import env, raw_env
from .rook.observer import describe

__all__ = ["env", "raw_env", "describe"]
