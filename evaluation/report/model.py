"""``cardzoo evaluate``: the evaluation report -- every game and level, every agent, beside the documents' figures.

The report folder holds ``summary.md`` (tables and notes), ``results.csv`` and ``results.json`` (every figure,
with its interval and game count) and one PNG chart per game. The documents' figures are read from ``seeds/``.

Each game contributes a *section* (``SECTIONS``): a function that runs its studies with the runner and returns
rows (one per level/variant and source), charts and markdown. ``--games`` sets games per matchup; the quick default
runs in a few minutes on 2 cores, ``--full`` plays 10,000 per matchup.
"""

from __future__ import annotations

import csv
import json
import platform
import time
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import asdict, dataclass, field
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


def _load_sections() -> None:
    # Importing a game's section module registers its section; a game whose module is missing is skipped loudly.
    from .sections import rope_team  # noqa: F401

    for name in ("summit_rush", "rook"):
        module = f"{__package__}.sections.{name}"
        try:
            __import__(module)
        except ModuleNotFoundError as err:
            if err.name != module:
                raise


def write(settings: Settings, sections: list[Section], command: str | None = None) -> Path:
    """The report's files in ``settings.out``; ``command`` is what made them (default: ``cardzoo evaluate``)."""
    out = settings.out
    command = command or ("cardzoo evaluate" + (" --full" if settings.games == FULL_GAMES
                                                else f" --games {settings.games}"))
    out.mkdir(parents=True, exist_ok=True)
    rows = [row for s in sections for row in s.rows]
    with open(out / "results.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(asdict(rows[0]).keys()) if rows else ["game"])
        writer.writeheader()
        for row in rows:
            writer.writerow(asdict(row))
    meta = {"games_per_matchup": settings.games, "command": command, "python": platform.python_version(),
            "date": time.strftime("%Y-%m-%d"), "seconds": {s.game: round(s.seconds, 1) for s in sections}}
    # Each section's text and charts too, so that a later ``--only`` run can keep the sections it does not redo.
    kept = {s.game: {"markdown": s.markdown, "charts": s.charts, "seconds": round(s.seconds, 1), "summary": s.summary}
            for s in sections}
    (out / "results.json").write_text(json.dumps({"meta": meta, "sections": kept,
                                                  "rows": [asdict(r) for r in rows]}, indent=1))
    lines = [
        "# cardzoo evaluation report",
        "",
        f"{settings.games} games per matchup, on the same deals for every agent (duplicate format: game *i* is "
        f"`reset(seed=i)`). Intervals are Wilson 95 %. Produced by `{command}` "
        f"({time.strftime('%Y-%m-%d')}, Python {platform.python_version()}).",
        "",
    ]
    from .search import summary_lines

    lines += summary_lines(sections)
    for s in sections:
        lines += [s.markdown.rstrip(), ""]
        lines += [f"![{s.game}]({chart})" for chart in s.charts if (out / chart).exists()] + [""]
        lines += [f"*{s.game}: {s.seconds:.0f} s of wall time.*", ""]
    (out / "summary.md").write_text("\n".join(lines))
    return out / "summary.md"


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
                             list(text["charts"]), text["seconds"], list(text.get("summary", [])))
    return kept


def main(settings: Settings) -> Path:
    _load_sections()
    chosen = settings.only or list(SECTIONS)
    unknown = [g for g in chosen if g not in SECTIONS]
    if unknown:
        raise SystemExit(f"cardzoo evaluate: no section for {unknown}; sections: {', '.join(SECTIONS)}")
    made = {}
    for game in chosen:
        start = time.time()
        result = SECTIONS[game](settings)
        result.seconds = time.time() - start
        made[game] = result
    kept = previous_sections(settings, exclude=set(made)) if settings.only else {}
    if kept:
        print(f"kept from the report in {settings.out}: {', '.join(kept)} (redone: {', '.join(made)})")
    sections = [made.get(game) or kept[game] for game in SECTIONS if game in made or game in kept]
    path = write(settings, sections)
    from .charts import available

    charts = "charts" if available() else "no charts (matplotlib is not installed: pip install cardzoo[report])"
    print(f"report written: {path} (with results.csv, results.json and {charts} in {settings.out})")
    return path
