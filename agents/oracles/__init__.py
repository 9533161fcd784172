"""Oracles: solvers that see the full game state (both hands, hidden cards, later deals).

They are named oracles because they cheat by design: they measure what is possible, they are not players. Nothing
here follows the :class:`cardzoo.agents.base.Agent` protocol, and no oracle receives an observation.
"""

from .rope_team import RopeTeamOracle, Solution, solve

__all__ = ["RopeTeamOracle", "Solution", "solve"]
