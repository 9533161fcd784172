"""The report's files: ``summary.md``, ``results.csv`` and ``results.json`` from the sections (see :mod:`.model`)."""

from __future__ import annotations

import csv
import json
import platform
import time
from dataclasses import asdict
from pathlib import Path

from .model import FULL_GAMES, Section, Settings
from .search import summary_lines


def replace_marked(text: str, begin: str, end: str, body: str, what: str) -> str:
    """``text`` with what stands between its markers ``begin`` and ``end`` replaced by ``body`` (the generated parts
    of the README and the docs pages); ``what`` names the page in the error if the markers are not one pair."""
    if text.count(begin) != 1 or text.count(end) != 1 or text.index(begin) > text.index(end):
        raise ValueError(f"{what} needs one {begin} ... {end} pair")
    head, rest = text.split(begin)
    return head + begin + "\n" + body + "\n" + end + rest.split(end, 1)[1]


def refresh_block(path: Path, block: list[str], anchor: str) -> None:
    """Rewrite a study's marked block of a committed page (``block``: its generated lines, a blank line, the begin
    marker, the body, the end marker) without replaying the rest; a page without the block gets it before the one
    line ``anchor``."""
    begin, end = block[1], block[-1]
    text = path.read_text()
    if begin not in text:
        if text.count(anchor) != 1:
            raise ValueError(f"{path} has no {begin} block and no single {anchor!r} to put it before")
        text = text.replace(anchor, f"{begin}\n{end}\n\n{anchor}")
    path.write_text(replace_marked(text, begin, end, "\n".join(block[2:-1]), str(path)))


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
    lines += summary_lines(sections)
    for s in sections:
        lines += [s.markdown.rstrip(), ""]
        lines += [f"![{s.game}]({chart})" for chart in s.charts if (out / chart).exists()] + [""]
        lines += [f"*{s.game}: {s.seconds:.0f} s of wall time.*", ""]
    (out / "summary.md").write_text("\n".join(lines))
    return out / "summary.md"
