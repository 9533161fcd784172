"""The report's parts: its settings, a figure (``Row``), a game's ``Section`` and their registry ``SECTIONS``, with
the helpers the sections use to play their matchups and to read committed results.

Each game contributes a *section* (``SECTIONS``, filled by :mod:`.sections`): a function that runs its studies with
the runner and returns rows (one per level/variant and source), charts and markdown. ``--games`` sets games per
matchup; the quick default runs in a few minutes on 2 cores, ``--full`` plays 10,000 per matchup.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass, field
from pathlib import Path

QUICK_GAMES = 2000
FULL_GAMES = 10_000
RESULTS = Path(__file__).resolve().parents[1] / "results"


@dataclass
class Settings:
    games: int = QUICK_GAMES
    workers: int | None = None
    out: Path = Path("reports/quick")
    cache: Path | None = None
    only: list[str] | None = None
    progress: bool = True
    executor: Executor | None = None  # where chunks of games run (default: ``workers`` local processes)


@dataclass
class Row:
    """One figure of the report: a win rate (or another rate) with its 95 % interval."""

    game: str
    setting: str  # level or variant
    source: str  # "document", "simple", "random", "ceiling", "learned", ...
    rate: float
    low: float | None = None
    high: float | None = None
    games: int | None = None
    note: str = ""


@dataclass
class Section:
    game: str
    rows: list[Row] = field(default_factory=list)
    markdown: str = ""
    charts: list[str] = field(default_factory=list)
    seconds: float = 0.0
    summary: list[str] = field(default_factory=list)  # lines for the report's opening summary (the targets)
    wall_note: str = ""  # after the wall time, e.g. that the games were read from an earlier run's cache


SECTIONS: dict[str, Callable[[Settings], Section]] = {}


def play(settings: Settings, env: str, agents: list[str] | tuple[str, ...], games: int | None = None,
         **options) -> list[dict]:
    """Records of ``games`` (default ``settings.games``) games of a matchup, with the report's workers and cache."""
    from ..matches.runner import Matchup, run

    return run(Matchup.of(env, list(agents), **options), settings.games if games is None else games,
               workers=settings.workers, cache_dir=settings.cache, progress=settings.progress,
               executor=settings.executor)


def wins(records: list[dict]) -> list[bool]:
    return [r["outcome"] == "win" for r in records]


def load_result(name: str) -> dict | None:
    """A committed result file ``evaluation/results/<name>.json`` (an oracle's ceilings), if it exists."""
    path = RESULTS / f"{name}.json"
    return json.loads(path.read_text()) if path.is_file() else None


def section(game: str):
    """Register a game's section under ``game``."""

    def register(fn: Callable[[Settings], Section]) -> Callable[[Settings], Section]:
        SECTIONS[game] = fn
        return fn

    return register


def previous_sections(settings: Settings, exclude: set[str]) -> dict[str, Section]:
    """The sections of the report already in ``settings.out`` other than ``exclude``, if it was made with the
    same number of games per matchup (a report never mixes sizes); {} when there is none to keep."""
    path = settings.out / "results.json"
    if not path.is_file():
        return {}
    try:
        old = json.loads(path.read_text())
        size, stored, rows = old["meta"]["games_per_matchup"], old["sections"], old["rows"]
    except (ValueError, KeyError, TypeError):
        print(f"not keeping the sections of {path}: not a report's results.json with its sections")
        return {}
    if size != settings.games:
        print(f"not keeping the other sections of {path}: they have {size} games per matchup, this run "
              f"{settings.games}")
        return {}
    kept = {}
    for game, text in stored.items():
        if game in exclude or game not in SECTIONS:
            continue
        kept[game] = Section(game, [Row(**r) for r in rows if r["game"] == game], text["markdown"],
                             list(text["charts"]), text["seconds"], list(text.get("summary", [])),
                             text.get("wall_note", ""))
    return kept
