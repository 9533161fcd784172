"""The README's headline results table is the committed report's, written by ``cardzoo.evaluation.report.headline``
(a figure typed by hand would drift from the report), and the README's quickstart runs as written."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest

from cardzoo.evaluation.report import headline

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
RESULTS = json.loads(headline.RESULTS.read_text())


def test_the_readme_table_is_the_committed_results():
    assert headline.readme_with_table(README, RESULTS) == README, (
        "README.md's results table is not the committed report's: run python -m cardzoo.evaluation.report.headline")


def test_the_table_follows_the_results():
    """A changed result changes its cell (so the comparison above can fail), and each game has its rows."""
    table = headline.table(RESULTS)
    from cardzoo.envs.registry import GAMES

    assert all(spec.title in table for spec in GAMES.values())
    changed = copy.deepcopy(RESULTS)
    row = next(r for r in changed["rows"] if (r["game"], r["setting"], r["source"]) == ("rope_team", "hard", "learned"))
    before = f"{100 * row['rate']:.1f}%"
    row["rate"] = 0.123
    assert before in table and "| 12.3% |" in headline.table(changed)
    assert headline.readme_with_table(README, changed) != README


def test_the_caption_names_rooks_best_agent_only_when_it_is_not_the_columns():
    changed = copy.deepcopy(RESULTS)
    rows = [r for r in changed["rows"] if r["game"] == "rook" and r["setting"] == headline.STUDY]
    mine = next(r for r in rows if r["source"] == "search_learned vs heuristic")
    wide = next((r for r in rows if r["source"] == "search_wide vs heuristic"), None)
    if wide is None:
        wide = {**mine, "source": "search_wide vs heuristic"}
        changed["rows"].append(wide)
    wide.update(rate=mine["rate"] + 0.05, games=1234)
    said = f"Rook's is `search_wide`, the search with more worlds: {100 * wide['rate']:.1f}% of 1,234 single rounds"
    assert said in " ".join(headline.table(changed).split())
    wide["rate"] = mine["rate"] - 0.01
    assert "Rook's is" not in headline.table(changed)


def test_the_markers_are_required():
    with pytest.raises(ValueError, match="results"):
        headline.readme_with_table(README.replace(headline.END, ""), RESULTS)


def test_the_quickstart_runs_as_written(capsys):
    quickstart = README.split("## Quickstart", 1)[1].split("\n## ", 1)[0]
    [code] = re.findall(r"```python\n(.*?)```", quickstart, re.S)
    assert "make_agent(" in code
    exec(compile(code, "README.md quickstart", "exec"), {})
    assert capsys.readouterr().out.strip() in ("win", "fall", "out_of_deals")


def test_the_readmes_links_and_paths_exist_in_a_clone():
    """Every relative link of the README, and every folder or file it names in code, is in the repository (the
    README once pointed at a ``cardzoo/agents/...`` that a clone does not have)."""
    links = re.findall(r"\]\((?!https?:|#)([^)]+)\)", README)
    named = re.findall(r"`((?:agents|envs|evaluation|docs|seeds|training|play)/[\w./-]*\w)`", README)
    missing = [p for p in links + named if not (ROOT / p).exists()]
    assert len(links) > 10 and missing == [], missing


def test_the_first_commands_stated_time_is_the_committed_measurement():
    """The README's minutes for its first command are ``evaluation/results/first_command.json``'s, and that file
    measured the command the README shows."""
    from cardzoo.evaluation.benchmarks import first_command

    measured = json.loads(first_command.RESULT.read_text())
    assert measured["command"] == first_command.first_command(README)
    said = re.search(r"On a fresh clone it took (\d+) minutes on 2\s+otherwise idle cores with a warm package cache, "
                     r"(\d+) of them the report", README)
    assert said, "the README no longer states the first command's measured time"
    assert (int(said.group(1)), int(said.group(2))) == (measured["total_minutes_stated"],
                                                        measured["report_minutes_stated"])
    assert first_command.minutes(measured["total_seconds"]) == measured["total_minutes_stated"]
    assert measured["cpus"] == 2 and all(step["returncode"] == 0 for step in measured["steps"])
