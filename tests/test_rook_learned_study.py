"""The Rook search_learned study: resumable rows, its summary and commands, matches with JSON options, and the
committed report's Rook block generated from the committed summary."""

from __future__ import annotations

import json
import shutil

import pytest

from cardzoo.envs.common.errors import OptionError
from cardzoo.evaluation.studies import search_rook_learned as study


def test_matches_split_outside_the_agents_json_options():
    spec = 'search{"worlds": 84, "bid_worlds": 168} vs heuristic,learned vs search'
    assert study._parse(spec) == [('search{"worlds": 84, "bid_worlds": 168}', "heuristic"), ("learned", "search")]
    with pytest.raises(OptionError, match="'A vs B'"):
        study._parse("learned against heuristic")
    with pytest.raises(OptionError, match="not JSON"):
        study.make('search{"worlds": }')


def test_the_study_resumes_and_keeps_every_command(tmp_path):
    options = study.Options(deals=1, matches="learned vs heuristic", rounds=tmp_path / "r.jsonl",
                            summary=tmp_path / "s.json", plot=False)
    study.main(options, "run one")
    first = options.rounds.read_text().splitlines()
    assert [(json.loads(r)["seed"], json.loads(r)["seat"]) for r in first] == [(0, 0), (0, 1)]
    study.main(study.Options(**{**vars(options), "deals": 2}), "run two")
    rows = [json.loads(r) for r in options.rounds.read_text().splitlines()]
    assert rows[:2] == [json.loads(r) for r in first] and [(r["seed"], r["seat"]) for r in rows[2:]] == [(1, 0), (1, 1)]
    summary = json.loads(options.summary.read_text())
    assert summary["commands"] == ["run one", "run two"]
    cell = summary["matches"]["learned vs heuristic"]
    assert cell["rounds"] == 4 and cell["won"] == sum(r["result"] == "win" for r in rows)
    study.main(study.Options(**{**vars(options), "deals": 2}), "run three")  # nothing to play: not a command
    assert json.loads(options.summary.read_text())["commands"] == ["run one", "run two"]


def test_the_reports_rook_block_is_the_committed_summarys(tmp_path):
    from cardzoo.evaluation.report.model import RESULTS, load_result

    copy_ = shutil.copytree(RESULTS / "report", tmp_path / "report")  # with its charts: the page links those there
    study.refresh_report(copy_)
    for name in ("summary.md", "results.json", "results.csv"):
        assert (copy_ / name).read_text() == (RESULTS / "report" / name).read_text(), name
    page = (RESULTS / "report" / "summary.md").read_text()
    for match, cell in load_result("rook_learned_search")["matches"].items():
        assert f"| {match} | {100 * cell['rate']:.1f}% [{100 * cell['low']:.1f}, {100 * cell['high']:.1f}] | " \
               f"{cell['rounds']} |" in page
