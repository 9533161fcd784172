"""``benchmark_v2``: which games, settings, partners, seats and deals make up the benchmark (docs/benchmark.md says
the same in words; this module is where it is stated).

A *cell* is one setting, one seat arrangement and ``games`` deals: the agent with itself (self-play, cooperative
games), the agent in one seat and a pool member in the other (cross-play; an opponent for Rook), for every member
of the game's pool (``cardzoo.agents.pools``) and both seats. Every cell of a run plays the same deals, ``games``
drawn inside the benchmark's reserved range from the run's secret key (:mod:`.seeds`), so cells and the reference
agent compare deal by deal.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cardzoo.agents.pools import PARTS
from cardzoo.envs.registry import GAMES

VERSION = "benchmark_v2"
READABLE = ("benchmark_v1", VERSION)  # results of these versions are still read (the leaderboard's older entries)
# Games per cell of each budget, and the pool parts it plays. quick: self-play and the held-out test part, the
# headline, whose pooled rate it gives to about +-1 point (minutes for an outside agent at 1 ms a decision:
# evaluation/results/benchmark_time/); full: every part (dev, test and the weak partners' robustness row), cells
# whose Wilson interval is about +-2 points at a 50 % rate. A custom budget (games per cell given) plays every part.
BUDGETS = {"quick": 300, "full": 2000}
BUDGET_PARTS = {"quick": ("test",), "full": PARTS}


@dataclass(frozen=True)
class Setting:
    """A variant of a game the benchmark plays: a name and the env options."""

    name: str
    options: tuple[tuple[str, Any], ...]

    @property
    def label(self) -> str:
        return self.name


def _settings(game: str) -> tuple[Setting, ...]:
    """The registry's benchmark settings of ``game``: its ``benchmark_variants``, else every level (or the one
    default setting of a game without levels) with its ``benchmark_options``."""
    spec = GAMES[game]
    if spec.benchmark_variants:
        return tuple(Setting(name, tuple(sorted(options.items()))) for name, options in spec.benchmark_variants)
    extra = tuple(sorted(spec.benchmark_options.items()))
    if not spec.levels:
        return (Setting("default", extra),)
    return tuple(Setting(level, (("level", level), *extra)) for level in spec.levels)


SETTINGS: dict[str, tuple[Setting, ...]] = {name: _settings(name) for name in GAMES}
SETTING_NAMES = {name: tuple(s.name for s in settings) for name, settings in SETTINGS.items()}


@dataclass(frozen=True)
class Cell:
    """One cell: ``kind`` is "self" (the agent in every seat), "partner" (cooperative) or "opponent" (Rook); ``part``
    the pool part of the other agent ("dev"/"test"; None for self-play); ``seat`` the agent's seat (None: all)."""

    game: str
    setting: Setting
    kind: str
    other: str | None
    part: str | None
    seat: int | None

    def agents(self, agent: str) -> tuple[str, ...]:
        """The spec per seat when ``agent`` is the one benchmarked."""
        if self.kind == "self":
            return (agent, agent)
        return (agent, self.other) if self.seat == 0 else (self.other, agent)

    @property
    def name(self) -> str:
        if self.kind == "self":
            return "self-play"
        return f"{self.other} ({self.part}), agent as player_{self.seat}"


def cells(game: str, pool, settings: tuple[Setting, ...] | None = None,
          parts: tuple[str, ...] = PARTS) -> list[Cell]:
    """Every cell of ``game`` with the ``parts`` of ``pool`` (anything with ``dev``, ``test`` and optionally ``weak``
    tuples of agent specs)."""
    cooperative = GAMES[game].cooperative
    out = []
    for setting in settings or SETTINGS[game]:
        if cooperative:
            out.append(Cell(game, setting, "self", None, None, None))
        for part in parts:
            for other in getattr(pool, part, ()):
                for seat in (0, 1):
                    out.append(Cell(game, setting, "partner" if cooperative else "opponent", other, part, seat))
    return out


def won(game: str, record: Mapping[str, Any], seat: int | None) -> bool:
    """Whether the benchmarked agent won a game: the team's win in a cooperative game; in Rook the agent's seat
    gained more in the round (a tie is no win; an opponent's illegal move, penalised, is one)."""
    spec = GAMES[game]
    if spec.cooperative:
        return record.get("outcome") == spec.win
    if record.get("outcome") == "illegal":
        return record.get("illegal_by") == f"player_{1 - seat}"
    return record.get("winner") == f"player_{seat}"


def agent_seats(cell: Cell) -> tuple[int, ...]:
    return (0, 1) if cell.seat is None else (cell.seat,)


def illegal_by_agent(record: Mapping[str, Any], cell: Cell) -> bool:
    """Whether the game ended by the benchmarked agent's illegal move (penalised by the env)."""
    if record.get("outcome") != "illegal":
        return False
    by = record.get("illegal_by")
    by = by if isinstance(by, list) else [by]
    return any(b == f"player_{s}" for b in by for s in agent_seats(cell))


def error_by_agent(record: Mapping[str, Any], cell: Cell) -> bool:
    return record.get("outcome") == "error" and record.get("error_by") in agent_seats(cell)
