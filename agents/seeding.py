"""The seed an agent resets with in a game: one rule for the report, the studies, the trainers and the play page, so
every matchup's agents meet the same randomness."""

from __future__ import annotations

import hashlib
import hmac


def agent_seed(game_seed: int, seat: int) -> int:
    """The seed of the agent in ``seat`` for game ``game_seed``."""
    return (game_seed * 1_000_003 + seat * 7919) % (2**63)


def keyed_agent_seed(key: bytes, game_seed: int, seat: int) -> int:
    """The seed of the agent in ``seat`` for game ``game_seed`` of a run with the secret ``key`` (the benchmark's):
    without the key it says nothing about the game's seed, so an agent cannot deal itself a copy of its game."""
    mac = hmac.new(key, f"agent:{game_seed}:{seat}".encode(), hashlib.sha256).digest()
    return int.from_bytes(mac[:8], "big") >> 1
