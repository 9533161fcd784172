"""Agents that play cardzoo games from their own observations. See ``base.Agent`` for the protocol."""

from .base import Agent
from .random_agent import RandomAgent
from .seeding import agent_seed

__all__ = ["Agent", "RandomAgent", "agent_seed"]
