"""The README's results tables, generated from committed results so the README never holds a typed figure:
``python -m cardzoo.evaluation.report.headline`` rewrites the part of README.md between the ``<!-- results -->``
markers from the report's ``results.json`` (``tests/test_readme_headline.py`` checks that the README equals what
this writes) and, first, the benchmark's headline table between the ``<!-- benchmark -->`` markers from
``evaluation/results/benchmark/`` (``cardzoo.evaluation.protocol.leaderboard``, checked by tests/test_leaderboard.py).
"""

from __future__ import annotations

import argparse
import json
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "evaluation" / "results" / "report" / "results.json"
README = ROOT / "README.md"
BEGIN, END = "<!-- results -->", "<!-- /results -->"
# Columns of the cooperative games: header -> the report's source name.
COLUMNS = {"document": "document", "simple strategy": "simple", "learned": "learned", "search": "search",
           "search_learned": "search_learned", "random": "random", "ceiling (oracle)": "ceiling"}
# Rook is competitive: a row per opponent, single rounds won (the baseline is its heuristic); column -> (the row's
# setting, its source): search_learned's rounds come from its own study.
ROUND, STUDY = "single round", "single round, search_learned study"
ROOK = {"single rounds won against random": {"simple strategy": (ROUND, "heuristic vs random"),
                                             "learned": (ROUND, "learned vs random")},
        "single rounds won against the heuristic": {"learned": (ROUND, "learned vs heuristic"),
                                                    "search": (ROUND, "search vs heuristic"),
                                                    "search_learned": (STUDY, "search_learned vs heuristic")}}


def _cell(row: dict | None, column: str, full: int) -> str:
    if row is None:
        return "–"
    digits = 2 if column == "ceiling (oracle)" else 1
    text = f"{100 * row['rate']:.{digits}f}%"
    if row["low"] is not None and row["games"] != full:  # fewer games than the report's matchups: say how many
        text += f" ({row['games']:,})"
    return text


def table(results: dict) -> str:
    """The headline table (Markdown) of a report's ``results.json`` content."""
    full = results["meta"]["games_per_matchup"]
    rows = {(r["game"], r["setting"], r["source"]): r for r in results["rows"]}
    caption = (f"Win rates from the committed report: {full:,} games per matchup on the same deals, a cell on "
               "another number of games gives it in parentheses (the search agents are slower and play fewer). The "
               "baseline is each game's simple strategy (Rook: its heuristic); the document column is the rule "
               "document's own figure for its strategy; `search_learned` is the search on the learned policy, "
               "the best agent within 100 ms of CPU per decision.")
    wide = rows.get(("rook", STUDY, "search_wide vs heuristic"))
    mine = rows.get(("rook", STUDY, "search_learned vs heuristic"))
    if wide and mine and wide["rate"] > mine["rate"]:  # Rook's best agent is not the column's: say which is
        caption = caption[:-1] + (f" (Rook's is `search_wide`, the search with more worlds: {100 * wide['rate']:.1f}% "
                                  f"of {wide['games']:,} single rounds against the heuristic).")
    lines = [textwrap.fill(caption, 116), "",
             "| game | setting | " + " | ".join(COLUMNS) + " |", "|---|---|" + "---:|" * len(COLUMNS)]
    from cardzoo.envs.registry import GAMES

    for game in (s.name for s in GAMES.values() if s.cooperative):  # a row per setting the report measured
        settings = dict.fromkeys(s for (g, s, source) in rows if g == game and source in ("document", "learned"))
        for setting in settings:
            cells = [_cell(rows.get((game, setting, source)), column, full) for column, source in COLUMNS.items()]
            lines.append(f"| {GAMES[game].title} | `{setting}` | " + " | ".join(cells) + " |")
    for setting, sources in ROOK.items():
        cells = [_cell(rows.get(("rook", *sources[column])) if column in sources else None, column, full)
                 for column in COLUMNS]
        lines.append(f"| {GAMES['rook'].title} | {setting} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def readme_with_table(readme: str, results: dict) -> str:
    """``readme`` with its marked part replaced by :func:`table`; a README without both markers is an error."""
    from .writer import replace_marked

    return replace_marked(readme, BEGIN, END, table(results), "README.md (around the results table)")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", type=Path, default=RESULTS)
    parser.add_argument("--readme", type=Path, default=README)
    args = parser.parse_args(argv)
    from cardzoo.evaluation.protocol import leaderboard

    results = json.loads(args.results.read_text())
    readme = readme_with_table(args.readme.read_text(), results)
    args.readme.write_text(leaderboard.readme_with_table(readme, leaderboard.load()))


if __name__ == "__main__":
    main()
