"""A study's figures reach the committed report without replaying it (``writer.refresh_study``), and the report's
block on issue 28's targets is read from the committed results."""

from __future__ import annotations

import json
import shutil

import pytest

from cardzoo.evaluation.report import targets
from cardzoo.evaluation.report.model import RESULTS, Row, Section, load_result
from cardzoo.evaluation.report.writer import refresh_study, rewrite

REPORT = RESULTS / "report"
FILES = ("summary.md", "results.json", "results.csv")


@pytest.fixture
def report(tmp_path):
    """A copy of the committed report folder (its charts too: the page links only the charts that exist)."""
    return shutil.copytree(REPORT, tmp_path / "report")


def test_rewrite_gives_the_committed_page_from_its_results(report):
    # summary.md is generated from results.json alone (nothing typed into it by hand)
    (report / "summary.md").write_text("stale")
    rewrite(report)
    for name in FILES:
        assert (report / name).read_text() == (REPORT / name).read_text(), name


def _block(value: float):
    def block(section: Section) -> list[str]:
        section.rows.append(Row("rook", "single round, toy study", "toy vs heuristic", value, value - 0.1,
                                value + 0.1, 10, note="10 deals, toy_study.json"))
        return ["", "<!-- toy: begin -->", f"toy figure {value}", "<!-- toy: end -->"]
    return block


def test_a_refresh_replaces_the_block_and_the_rows_and_keeps_the_rest(report):
    before = json.loads((report / "results.json").read_text())
    refresh_study(report, "rook", _block(0.5), "toy_study.json")
    refresh_study(report, "rook", _block(0.75), "toy_study.json")  # again: replaced, not added
    after = json.loads((report / "results.json").read_text())
    toy = [r for r in after["rows"] if r["note"].endswith("toy_study.json")]
    assert [r["rate"] for r in toy] == [0.75]
    assert [r for r in after["rows"] if r not in toy] == before["rows"]
    assert after["sections"]["rook"]["markdown"].count("toy figure") == 1
    assert "toy figure 0.75" in after["sections"]["rook"]["markdown"]
    for game in ("rope_team", "summit_rush"):
        assert after["sections"][game] == before["sections"][game]
    page = (report / "summary.md").read_text()
    assert "toy figure 0.75" in page and "toy figure 0.5" not in page
    assert "toy vs heuristic" in (report / "results.csv").read_text()


def test_the_targets_block_states_the_committed_figures_and_verdicts():
    page = (REPORT / "summary.md").read_text()
    assert targets.TITLE in page
    rope = load_result("rope_team_search_learned")
    for level, target in targets.BEST["rope_team"].items():
        team = rope["levels"][level]["teams"]["search_learned+search_learned"]
        verdict = ("reached" if team["low"] >= target else "reached by the point estimate only"
                   if team["rate"] >= target else "not reached")
        assert (f"- Rope Team {level}, `search_learned` (the best agent measured): {100 * team['rate']:.1f}% "
                f"[{100 * team['low']:.1f}, {100 * team['high']:.1f}] of {team['games']} deals") in page
        assert f"target {100 * target:.0f}% -- {verdict}." in page
    rook = load_result("rook_learned_search")
    for opponent, target in targets.BEST["rook"].items():
        for agent in ("search_learned", "search_wide"):  # the blueprint search, and the old one at its compute
            cell = rook["matches"][f"{agent} vs {opponent}"]
            assert (f"against `{opponent}`, `{agent}`: {100 * cell['rate']:.1f}% [{100 * cell['low']:.1f}, "
                    f"{100 * cell['high']:.1f}] of {cell['rounds']} rounds") in page
            assert f"target {100 * target:.0f}% -- {targets.verdict(cell, target)}" in page


def test_a_target_between_the_interval_and_the_point_is_not_called_reached():
    cell = {"rate": 0.66, "low": 0.60, "high": 0.71}
    assert targets.verdict(cell, 0.65) == "reached by the point estimate only"
    assert targets.verdict(cell, 0.59) == "reached"
    assert targets.verdict(cell, 0.67) == "not reached"


def test_figures_on_fewer_deals_than_the_issue_asks_say_so():
    assert targets._deals_note(targets.MIN_DEALS) == ""
    assert "fewer than" in targets._deals_note(targets.MIN_DEALS - 1)


def test_the_targets_block_states_the_benchmarks_cross_play_gap():
    entry = targets._cross_play_results()["rope_team"]
    page = (REPORT / "summary.md").read_text()
    head = entry["result"]["headline"]
    gap = head["gap"]["test"]
    verdict = "reached" if gap <= targets.CROSS_PLAY_GAP else "not reached"
    assert (f"Rope Team cross-play, `search_learned` with the test pool ({entry['protocol']}, "
            f"{entry['games_per_cell']} games per cell, both seats; `{entry['stem']}.json`): "
            f"{100 * head['cross']['test']['rate']:.1f}%") in page
    assert f"a gap of {100 * gap:+.1f} points; target at most 5 -- {verdict}." in page
    assert "Rook for Two cross-play" not in page  # competitive: no self-play to compare with


def test_cross_play_takes_each_game_from_the_newest_result_that_played_all_of_it(tmp_path, monkeypatch):
    """A game the newer protocol has played only in part (one level of four) keeps the older complete figure; once
    complete, the newer one replaces it, game by game."""
    older = json.loads((RESULTS / "benchmark" / "search_learned_v1.json").read_text())
    newer = json.loads(json.dumps(older))
    newer["protocol"] = "benchmark_v2"
    rope = newer["games"]["rope_team"]
    rope["settings"] = rope["settings"][:1]  # only easy: partial
    (tmp_path / "benchmark").mkdir()
    (tmp_path / "benchmark" / "search_learned_v1.json").write_text(json.dumps(older))
    (tmp_path / "benchmark" / "search_learned.json").write_text(json.dumps(newer))
    monkeypatch.setattr(targets, "RESULTS", tmp_path)
    chosen = targets._cross_play_results()
    assert chosen["rope_team"]["stem"] == "search_learned_v1"
    assert chosen["summit_rush"]["stem"] == "search_learned"
    assert "rook" not in chosen
    lines = targets._cross_play()
    assert lines[0].startswith("- Rope Team cross-play, `search_learned` with the test pool (benchmark_v1, 12 games")
    assert "(benchmark_v2, 12 games per cell, both seats; `search_learned.json`)" in lines[1]


def test_a_talking_level_takes_the_silent_figure_only_when_every_checked_deal_was_the_same_game():
    cell = {"games": 1000, "wins": 700, "rate": 0.70, "low": 0.67, "high": 0.73, "ms_per_decision": 40.0}
    check = {"deals": 200, "same_game": 200, "wins": 150, "rate": 0.75, "low": 0.69, "high": 0.80}
    data = {"levels": {"normal": {"cells": {"search_learned": cell}, "talking": check}}}
    same, hard = targets._summit_rush_talking(data)
    assert same.startswith("- Summit Rush normal (timed, talking)")
    assert "70.0% [67.0, 73.0] of 1000 deals" in same and "all 200 deals" in same and "not reached" in same
    assert "hard (timed, talking), `search_learned`: not measured." in hard
    data["levels"]["normal"]["talking"] = {**check, "same_game": 199}
    differs = targets._summit_rush_talking(data)[0]
    assert "75.0% [69.0, 80.0] of 200 deals (fewer than the issue's 1,000)" in differs
    assert "1 of them not as the silent game" in differs
