"""The report's files: ``summary.md``, ``results.csv`` and ``results.json`` from the sections (see :mod:`.model`)."""

from __future__ import annotations

import csv
import json
import platform
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

from .model import FULL_GAMES, Row, Section, Settings
from .search import summary_lines
from .targets import targets_lines


def replace_marked(text: str, begin: str, end: str, body: str, what: str) -> str:
    """``text`` with what stands between its markers ``begin`` and ``end`` replaced by ``body`` (the generated parts
    of the README and the docs pages); ``what`` names the page in the error if the markers are not one pair."""
    if text.count(begin) != 1 or text.count(end) != 1 or text.index(begin) > text.index(end):
        raise ValueError(f"{what} needs one {begin} ... {end} pair")
    head, rest = text.split(begin)
    return head + begin + "\n" + body + "\n" + end + rest.split(end, 1)[1]


def _with_block(text: str, block: list[str], anchor: str | None) -> str:
    """``text`` with the marked ``block`` (its generated lines: a blank line, the begin marker, the body, the end
    marker) replaced, or put before the one line ``anchor`` (at the end without one) if ``text`` lacks it."""
    begin, end = block[1], block[-1]
    if begin not in text:
        if anchor is not None and text.count(anchor) == 1:
            text = text.replace(anchor, f"{begin}\n{end}\n\n{anchor}")
        else:
            text = text.rstrip("\n") + f"\n\n{begin}\n{end}\n"
    return replace_marked(text, begin, end, "\n".join(block[2:-1]), "the report's section")


def refresh_study(folder: Path, game: str, block: Callable[[Section], list[str]], source_file: str,
                  anchor: str | None = None) -> None:
    """Bring a resumable study's figures into the committed report in ``folder`` without replaying the rest: its
    marked block in the game's section (``block`` makes it and adds the study's rows to the section it is given),
    its rows in ``results.json`` (those whose note names ``source_file``; new ones where the old stood), then
    ``summary.md`` and ``results.csv`` written again from ``results.json`` (:func:`rewrite`). A later ``cardzoo
    evaluate --only`` keeps the refreshed section as it is."""
    path = folder / "results.json"
    data = json.loads(path.read_text())
    fresh = Section(game)
    lines = block(fresh)
    stored = data["sections"][game]
    if lines:  # a study with nothing committed has no block
        stored["markdown"] = _with_block(stored["markdown"], lines, anchor)
    rows, at = [], None
    for row in data["rows"]:
        if row["game"] == game and row["note"].endswith(source_file):
            at = len(rows) if at is None else at
        else:
            rows.append(row)
    if at is None:  # first refresh: after the game's other rows
        at = max((i + 1 for i, r in enumerate(rows) if r["game"] == game), default=len(rows))
    data["rows"] = rows[:at] + [asdict(r) for r in fresh.rows] + rows[at:]
    path.write_text(json.dumps(data, indent=1))
    rewrite(folder)


def rewrite(folder: Path) -> Path:
    """``summary.md`` and ``results.csv`` of the report in ``folder`` written again from its ``results.json`` (the
    sections and rows as stored, the run's own command and date), so a study's refresh and a full run give the same
    page."""
    data = json.loads((folder / "results.json").read_text())
    sections = [Section(game, [Row(**r) for r in data["rows"] if r["game"] == game], text["markdown"],
                        list(text["charts"]), text["seconds"], list(text.get("summary", [])),
                        text.get("wall_note", ""))
                for game, text in data["sections"].items()]
    return _write_files(folder, data["meta"], sections)


def write(settings: Settings, sections: list[Section], command: str | None = None) -> Path:
    """The report's files in ``settings.out``; ``command`` is what made them (default: ``cardzoo evaluate``)."""
    command = command or ("cardzoo evaluate" + (" --full" if settings.games == FULL_GAMES
                                                else f" --games {settings.games}"))
    meta = {"games_per_matchup": settings.games, "command": command, "python": platform.python_version(),
            "date": time.strftime("%Y-%m-%d"), "seconds": {s.game: round(s.seconds, 1) for s in sections}}
    return _write_files(settings.out, meta, sections)


def _write_files(out: Path, meta: dict, sections: list[Section]) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    rows = [row for s in sections for row in s.rows]
    with open(out / "results.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(asdict(rows[0]).keys()) if rows else ["game"])
        writer.writeheader()
        for row in rows:
            writer.writerow(asdict(row))
    # Each section's text and charts too, so that a later ``--only`` run can keep the sections it does not redo.
    kept = {s.game: {"markdown": s.markdown, "charts": s.charts, "seconds": round(s.seconds, 1), "summary": s.summary}
            | ({"wall_note": s.wall_note} if s.wall_note else {}) for s in sections}
    (out / "results.json").write_text(json.dumps({"meta": meta, "sections": kept,
                                                  "rows": [asdict(r) for r in rows]}, indent=1))
    lines = [
        "# cardzoo evaluation report",
        "",
        f"{meta['games_per_matchup']} games per matchup, on the same deals for every agent (duplicate format: game "
        f"*i* is `reset(seed=i)`). Intervals are Wilson 95 %. Produced by `{meta['command']}` "
        f"({meta['date']}, Python {meta['python']}).",
        "",
    ]
    lines += summary_lines(sections)
    lines += targets_lines(sections)
    for s in sections:
        lines += [s.markdown.rstrip(), ""]
        lines += [f"![{s.game}]({chart})" for chart in s.charts if (out / chart).exists()] + [""]
        lines += [f"*{s.game}: {s.seconds:.0f} s of wall time{s.wall_note}.*", ""]
    (out / "summary.md").write_text("\n".join(lines))
    return out / "summary.md"
