"""The seed an agent resets with in a game: one rule for the report, the studies, the trainers and the play page, so
every matchup's agents meet the same randomness."""

from __future__ import annotations


def agent_seed(game_seed: int, seat: int) -> int:
    """The seed of the agent in ``seat`` for game ``game_seed``."""
    return (game_seed * 1_000_003 + seat * 7919) % (2**63)
