"""A benchmark agent to copy: ``cardzoo benchmark path/to/your_copy.py:make_agent``.

The spec ``file.py:callable`` (or ``package.module:callable`` for an importable module) names a factory. The
benchmark calls it afresh for every game, with the game's name ("rope_team", "summit_rush" or "rook"), the seat
the agent plays (0 is ``player_0``) and a seed (drawn from the run's deal key, the deal and the seat, so a replay
with the key gets the same one), and plays the object it returns, in a worker process of its own:
``act(observation, action_mask)`` must return an int whose mask entry is 1, within the decision time limit.

- An illegal move (an in-range action the mask forbids) loses the game by the env's penalty and is counted.
- An exception, a return value that is not an int in the action range, or a decision past the time limit loses
  that game too and is reported with the deal and the decision; the run stops after that cell unless
  ``--keep-going``.
- ``make_agent.games = ("rope_team",)`` would declare the games it plays (the others are skipped); this one plays
  every game.
- Giving the class an ``act_batch(agents, observations, action_masks)`` static method (one action per game, the
  rows stacked) lets the benchmark ask for many games' moves in one call (docs/benchmark.md, "Many games at once").
- The agent sees its own observations only (the env's ``observation`` vector, described on each game's docs page);
  it must not read the env, the state or another agent.

This one plays a uniformly random legal action (seeded, so a replay is identical); replace ``act``.
"""

from __future__ import annotations

import numpy as np


class MyAgent:
    def __init__(self, game: str, seat: int | None, seed: int | None):
        self.game, self.seat = game, seat
        self.rng = np.random.default_rng(seed)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        return int(self.rng.choice(np.flatnonzero(action_mask)))


def make_agent(game: str, seat: int | None, seed: int | None) -> MyAgent:
    return MyAgent(game, seat, seed)
