"""Evaluation: statistics on known cases, reproducible and resumable runs, a tiny end-to-end report."""

from __future__ import annotations

import json
import math
from fractions import Fraction

import pytest

from cardzoo.envs.common import stats
from cardzoo.envs.common.charts import Bar, Level, bar_chart, bar_figure, scaling_chart, scaling_figure
from cardzoo.evaluation.cli import main
from cardzoo.evaluation.matches.runner import Matchup, run


def test_wilson_known_values():
    r = stats.wilson(5, 10)
    assert r.rate == 0.5 and r.low == pytest.approx(0.2366, abs=1e-4) and r.high == pytest.approx(0.7634, abs=1e-4)
    zero = stats.wilson(0, 20)
    assert zero.low == 0.0 and zero.high == pytest.approx(0.1611, abs=1e-4)
    assert stats.wilson(81, 100).low < 0.81 < stats.wilson(81, 100).high


def test_the_old_name_of_the_statistics_still_imports():
    from cardzoo.evaluation import stats as old
    from cardzoo.evaluation.stats import Z95, paired, wilson

    assert (wilson, paired, Z95) == (stats.wilson, stats.paired, stats.Z95) and old.mean_interval is stats.mean_interval


def test_mcnemar_and_paired():
    assert stats.mcnemar_exact(0, 5) == pytest.approx(0.0625)
    assert stats.mcnemar_exact(3, 3) == 1.0
    a = [True] * 30 + [False] * 70
    b = [True] * 10 + [False] * 90
    cmp = stats.paired(a, b)
    assert cmp.only_a == 20 and cmp.only_b == 0 and cmp.difference == pytest.approx(0.2)
    assert cmp.low < 0.2 < cmp.high and cmp.p_value < 1e-5
    with pytest.raises(ValueError, match="same deals"):
        stats.paired(a, b[:5])


def test_paired_interval_known_values():
    # Ten deals: both win 2, only A 3, only B 1, neither 4. The interval is the mean per-deal difference (+1, -1
    # or 0) plus or minus z times the standard error of that mean, worked out here exactly from the differences.
    a = [True] * 2 + [True] * 3 + [False] * 1 + [False] * 4
    b = [True] * 2 + [False] * 3 + [True] * 1 + [False] * 4
    diffs = [int(x) - int(y) for x, y in zip(a, b, strict=True)]
    n = len(diffs)
    mean = Fraction(sum(diffs), n)
    var_of_mean = sum((x - mean) ** 2 for x in diffs) / n / n
    assert (mean, var_of_mean) == (Fraction(1, 5), Fraction(9, 250))  # 0.2 and 0.036, by hand
    half = stats.Z95 * math.sqrt(var_of_mean)
    assert half == pytest.approx(0.371877, abs=1e-6)
    cmp = stats.paired(a, b)
    assert (cmp.games, cmp.only_a, cmp.only_b, cmp.difference) == (10, 3, 1, pytest.approx(0.2))
    assert (cmp.low, cmp.high) == (pytest.approx(0.2 - half, rel=1e-12), pytest.approx(0.2 + half, rel=1e-12))
    # A wins 20 of 100 deals B loses, nothing else: the differences are 0/1 with mean 0.2, so the standard error
    # is sqrt(0.2 * 0.8 / 100) = 0.04.
    one_way = stats.paired([True] * 20 + [False] * 80, [False] * 100)
    assert (one_way.low, one_way.high) == (pytest.approx(0.2 - stats.Z95 * 0.04), pytest.approx(0.2 + stats.Z95 * 0.04))


def test_difference_against_a_reported_rate():
    d = stats.difference(540, 1000, 0.54, 4000)
    assert d.difference == pytest.approx(0.0) and d.low < 0 < d.high
    assert stats.difference(700, 1000, 0.54, 4000).low > 0


def test_mean_interval_known_values():
    # 2, 4, 6, 8: mean 5, sample standard deviation sqrt(20 / 3), standard error sqrt(20 / 3 / 4) = sqrt(5 / 3).
    m = stats.mean_interval([2, 4, 6, 8])
    half = stats.Z95 * math.sqrt(5 / 3)
    assert (m.mean, m.n) == (5, 4) and (m.low, m.high) == (pytest.approx(5 - half), pytest.approx(5 + half))
    assert str(m) == f"5.0 [{5 - half:.1f}, {5 + half:.1f}]"
    assert stats.mean_interval([3]).low == -math.inf and stats.mean_interval([3, 3]).high == 3
    with pytest.raises(ValueError, match="no values"):
        stats.mean_interval([])


def test_race_the_record_adds_up_won_games_in_whole_series():
    from cardzoo.evaluation.matches.race import race

    def game(seed: int, outcome: str, score: int) -> dict:
        return {"seed": seed, "outcome": outcome, "score": score}

    # Scores of lost games are 0 in the records anyway; a "time" game with a score must still add nothing.
    records = [game(5, "win", 4), game(6, "time", 9), game(7, "win", 2),  # series 0: 6
               game(8, "stuck", 0), game(9, "win", 7), game(10, "tick_limit", 3),  # series 1: 7
               game(11, "win", 11)]  # not a whole series: left out
    result = race(records, 3)
    assert result.totals == (6, 7) and result.record == 7 and result.record_series == 1 and result.first == 5
    assert str(result).endswith("over 2 series of 3 games; record 7 (series 1: deals 8..10)")
    assert result.mean.mean == 6.5
    with pytest.raises(ValueError, match="no series"):
        race(records, 8)
    with pytest.raises(ValueError, match="at least one game"):
        race(records, 0)


def test_runs_are_reproducible_and_resumable(tmp_path):
    m = Matchup.of("rope_team_v0", ["random"], level="easy")
    first = run(m, 60, workers=1, cache_dir=tmp_path, chunk=25, progress=False)
    assert [r["seed"] for r in first] == list(range(60))
    chunks = sorted(p.name for p in (tmp_path / m.key).iterdir())
    assert chunks == ["0-24.json", "25-49.json", "50-59.json"]
    # Resuming from the cache (and what happens to a damaged chunk) is tested in test_evaluation_cache.py.
    parallel = run(m, 60, workers=2, chunk=25, progress=False)
    assert parallel == first


def test_charts_are_png_and_svg_with_intervals_and_reported_figures_as_markers(tmp_path):
    groups = {"easy": [Bar("simple", 0.5, 0.4, 0.6), Bar("document", 0.7, reported=True)],
              "hard": [Bar("simple", 0.25, 0.2, 0.3), Bar("document", 0.54, reported=True)]}
    files = bar_chart("Rope Team", groups, tmp_path / "c.png")
    assert [f.name for f in files] == ["c.png", "c.svg"]
    assert files[0].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    svg = files[1].read_text()
    assert "Rope Team" in svg and "document (reported figure)" in svg and "win rate (%)" in svg
    assert bar_chart("Rope Team", groups, tmp_path / "d.png") and (tmp_path / "d.svg").read_text() == svg
    fig = bar_figure("Rope Team", groups)
    ax = fig.axes[0]
    bars = [p for p in ax.patches]
    assert [round(b.get_height(), 6) for b in bars] == [50.0, 25.0]  # the document's figures are not bars
    (markers,) = ax.collections[1:]  # after the error bars: the reported figures, at their values
    assert markers.get_offsets()[:, 1].tolist() == [70.0, 54.0]
    (bar_container,) = [c for c in ax.containers if hasattr(c, "errorbar")]
    (whiskers,) = bar_container.errorbar.lines[2]  # the 95 % intervals, bar by bar
    assert [seg[:, 1].tolist() for seg in whiskers.get_segments()] == [[40.0, 60.0], [20.0, 30.0]]


def test_scaling_chart_draws_rate_and_memory_against_n_with_reference_lines(tmp_path):
    rates = {"A, batched": [(1, 1500.0), (16, 16000.0), (4096, 700000.0)], "B, silent": [(1, 900.0), (16, 9000.0)]}
    memory = {"A, batched": [(1, 0.3), (16, 0.3), (4096, 10.3)], "B, silent": [(1, 0.2), (16, 0.4)]}
    levels = [Level("A: single env", 10000.0, series="A, batched"), Level("A: target", 1e6, target=True)]
    files = scaling_chart("Scaling", rates, memory, levels, tmp_path / "s.png")
    assert [f.name for f in files] == ["s.png", "s.svg"] and "A: target: 1,000,000" in files[1].read_text()
    speed, mem = scaling_figure("Scaling", rates, memory, levels).axes
    assert speed.get_xscale() == speed.get_yscale() == mem.get_xscale() == mem.get_yscale() == "log"
    lines = {line.get_label(): line for line in speed.lines}
    assert lines["A, batched"].get_xydata().tolist() == [[1, 1500], [16, 16000], [4096, 700000]]
    single, target = lines["A: single env: 10,000"], speed.lines[-1]
    assert single.get_ydata()[0] == 10000.0 and single.get_color() == lines["A, batched"].get_color()
    assert target.get_ydata()[0] == 1e6 and target.get_label().startswith("_")  # labelled on the chart instead
    assert {line.get_label(): line.get_ydata().tolist() for line in mem.lines} == {
        "A, batched": [0.3, 0.3, 10.3], "B, silent": [0.2, 0.4]}


def test_reports_without_matplotlib_have_no_charts_and_say_so(tmp_path, monkeypatch, capsys):
    from cardzoo.envs.common import charts

    monkeypatch.setattr(charts, "available", lambda: False)
    assert bar_chart("T", {"a": [Bar("x", 0.5)]}, tmp_path / "c.png") == [] and not (tmp_path / "c.png").exists()
    main(["evaluate", "--games", "4", "--only", "rope_team", "--out", str(tmp_path / "r"), "--workers", "1"])
    assert "no charts (matplotlib is not installed" in capsys.readouterr().out
    assert "![rope_team]" not in (tmp_path / "r" / "summary.md").read_text()


def test_evaluate_end_to_end(tmp_path, capsys):
    out = tmp_path / "report"
    main(["evaluate", "--games", "40", "--only", "rope_team", "--out", str(out), "--workers", "1"])
    summary = (out / "summary.md").read_text()
    assert "## Rope Team" in summary and "| hard | 54% |" in summary
    assert "## Search agents against the targets" in summary and "### Search agent" in summary
    rows = json.loads((out / "results.json").read_text())["rows"]
    assert {r["source"] for r in rows} >= {"document", "simple", "random", "search", "search + learned"}
    assert (out / "rope_team.png").is_file() and (out / "results.csv").read_text().startswith("game,")
    again = tmp_path / "again"
    main(["evaluate", "--games", "40", "--only", "rope_team", "--out", str(again), "--workers", "2"])
    assert json.loads((again / "results.json").read_text())["rows"] == rows  # same seeds, same report


def test_only_redoes_its_sections_and_keeps_the_others_of_a_report_of_the_same_size(tmp_path, capsys):
    out = tmp_path / "report"
    main(["evaluate", "--games", "6", "--only", "rope_team", "rook", "--out", str(out), "--workers", "1"])
    first = json.loads((out / "results.json").read_text())
    rook_text = first["sections"]["rook"]["markdown"]
    # Redo Rope Team only: Rook's rows, text and chart stay, in the report's order; Rope Team's are made anew.
    (out / "results.json").write_text(json.dumps({**first, "rows": [
        {**r, "note": "old"} if r["game"] == "rope_team" else r for r in first["rows"]]}))
    main(["evaluate", "--games", "6", "--only", "rope_team", "--out", str(out), "--workers", "1"])
    assert "kept from the report" in capsys.readouterr().out
    second = json.loads((out / "results.json").read_text())
    assert second["rows"] == first["rows"] and list(second["sections"]) == ["rope_team", "rook"]
    summary = (out / "summary.md").read_text()
    assert rook_text.strip() in summary and summary.index("## Rope Team") < summary.index("## Rook for Two")
    assert "![rook](rook.png)" in summary
    assert "- Rook for Two, single rounds vs the heuristic: search" in summary  # its line of the targets, kept too
    # Another size never mixes with it: the other sections are dropped, and the run says so.
    main(["evaluate", "--games", "4", "--only", "rope_team", "--out", str(out), "--workers", "1"])
    assert "not keeping the other sections" in capsys.readouterr().out
    third = json.loads((out / "results.json").read_text())
    assert {r["game"] for r in third["rows"]} == {"rope_team"} and "## Rook" not in (out / "summary.md").read_text()


def test_every_game_has_its_section_registered():
    from cardzoo.evaluation.report import build as report

    report._load_sections()
    assert {name: fn.__name__ for name, fn in report.SECTIONS.items()} == {
        "rope_team": "rope_team", "summit_rush": "summit_rush", "rook": "rook"}


def test_cache_key_follows_the_learned_weights(monkeypatch, tmp_path):
    from cardzoo.agents import registry

    m = Matchup.of("rope_team_v0", ["learned"], level="hard")
    before = m.key
    monkeypatch.setattr(registry, "fingerprint", lambda name, game: "other-weights")
    assert Matchup.of("rope_team_v0", ["learned"], level="hard").key != before


def test_statistics_equal_scipys():
    """The report's Wilson interval and exact McNemar test are a few lines of numpy-free Python (evaluation needs no
    scipy); they give scipy.stats' numbers."""
    from scipy.stats import binomtest

    for games in (1, 7, 40, 2000, 10_000):
        for wins in sorted({0, 1, games // 3, games // 2, games - 1, games}):
            ci = binomtest(wins, games).proportion_ci(method="wilson")
            rate = stats.wilson(wins, games)
            assert (rate.low, rate.high) == pytest.approx((ci.low, ci.high), abs=1e-12)
    for b in (0, 1, 5, 40, 300):
        for c in (0, 2, 5, 41, 260):
            if b + c:
                assert stats.mcnemar_exact(b, c) == pytest.approx(binomtest(b, b + c, 0.5).pvalue, rel=1e-9)


def test_axis_labels_stay_short_and_the_curve_chart_uses_them(tmp_path):
    from cardzoo.envs.common.charts import line_chart, short_number

    assert [short_number(x) for x in (0, 250, 250_000, 1_250_000, 2_000_000, 3e9)] == [
        "0", "250", "250k", "1.25M", "2M", "3G"]
    written = line_chart("t", {"a": [(0, 0.1), (2_000_000, 0.5)]}, tmp_path / "curve.png", x_label="steps")
    assert sorted(p.name for p in written) == ["curve.png", "curve.svg"]
    svg = (tmp_path / "curve.svg").read_text()
    assert "2M" in svg and "2,000,000" not in svg


def test_wilson_interval_holds_the_rate_at_every_count_and_every_chart_draws_it(tmp_path):
    """At 0 or all wins, rounding used to leave the bound a hair inside the rate: matplotlib then refused the
    negative error bar and a whole report (Rook's heuristic wins every game against random) crashed."""
    from cardzoo.envs.common.stats import wilson

    for games in (40, 250, 2000, 4000, 10_000):
        for wins in range(games + 1):
            rate = wilson(wins, games)
            assert rate.low <= wins / games <= rate.high
    all_won = wilson(2000, 2000)
    assert bar_chart("t", {"g": [Bar("a", all_won.rate, all_won.low, all_won.high)]}, tmp_path / "c.png")


def test_the_committed_search_results_reach_the_report_with_cross_play_times_and_loss_counts():
    from cardzoo.evaluation.report import Section, load_result
    from cardzoo.evaluation.report import search as search_report

    rope, summit, rook = (load_result(f"{g}_search") for g in ("rope_team", "summit_rush", "rook"))
    out = Section("all")
    text = "\n".join(search_report.rope_team(out, {}) + search_report.summit_rush(out, {}) + search_report.rook(out))
    rows = {(r.game, r.setting, r.source): r for r in out.rows}
    for game, data in (("rope_team", rope), ("summit_rush", summit)):
        for level in data["levels"]:
            for source in ("search", "simple (search deals)", "search + learned", "learned + search"):
                assert (game, level, source) in rows, (game, level, source)
            cells = data["levels"][level].get("teams", data["levels"][level])
            assert rows[game, level, "search + learned"].games == cells["search+learned"]["games"]
    assert rows["rook", "single round", "search vs heuristic"].games == rook["rounds"]
    assert f"| hard | {100 * rope['levels']['hard']['teams']['search+search']['rate']:.1f}% [" in text
    assert f"{rope['levels']['hard']['time']['mean_ms']:.0f}; " in text  # the team's CPU ms per decision
    # Every target not reached says so, with the file's loss counts.
    summary = "\n".join(search_report.summary_lines([out]))
    hard = rope["levels"]["hard"]
    lost = hard["teams"]["search+search"]["games"] - hard["teams"]["search+search"]["wins"]
    told = hard["loss_causes"]["counts"].get("read of the partner, fall", 0)
    assert "Rope Team hard: search" in summary and f"Its {lost} losses" in summary
    assert f"{told} of them are won" in summary
    sr = summit["levels"]["hard"]["search+search"]
    assert f"told the true deal, the search wins {sum(sr['loss_sources']['hidden_cards'].values())}" in summary
    assert f"Its {rook['lost']} lost rounds" in summary
    assert sum(line.startswith("- ") for line in summary.splitlines()) == 6  # every target, once


def test_the_committed_rook_search_on_the_learned_blueprint_reaches_the_report():
    from cardzoo.evaluation.report import Section, load_result
    from cardzoo.evaluation.report import search as search_report

    data = load_result("rook_learned_search")
    out = Section("rook")
    text = "\n".join(search_report.rook_learned(out))
    rows = {r.source: r for r in out.rows}
    for match, cell in data["matches"].items():
        assert rows[match].games == cell["rounds"] and rows[match].rate == cell["rate"]
        assert f"| {match} | {100 * cell['rate']:.1f}% [" in text
    assert "search_learned vs heuristic" in data["matches"] and "target 65%" in text
    for name, p in data["paired"].items():
        assert f"{name}: {100 * p['difference']:+.1f} points" in text


def test_a_target_is_reached_or_not_by_the_rate_and_its_interval(tmp_path, monkeypatch):
    from cardzoo.evaluation.report import Section
    from cardzoo.evaluation.report import model as report
    from cardzoo.evaluation.report import search as search_report

    def team(wins, games):
        r = stats.wilson(wins, games)
        return {"wins": wins, "games": games, "rate": r.rate, "low": r.low, "high": r.high, "results": "W" * games}

    for wins, verdict in ((200, "-- reached."), (193, "reached by the point estimate"), (186, "not reached"),
                          (170, "not reached")):  # 186 of 200: 93 %, its interval reaching past 95 %
        data = {"commands": ["x"], "levels": {"normal": {
            "teams": {"search+search": team(wins, 200), "simple+simple": team(150, 200)},
            "time": {"mean_ms": 12.0}, "loss_causes": {"counts": {"read of the partner, fall": 7, "other, fall": 3}}}}}
        (tmp_path / "rope_team_search.json").write_text(json.dumps(data))
        monkeypatch.setattr(report, "RESULTS", tmp_path)
        out = Section("rope_team")
        search_report.rope_team(out, {})
        [line] = out.summary
        assert verdict in line
        assert ("7 of them are won" in line) == (verdict != "-- reached.")  # the causes where the target is missed


def test_cross_play_with_a_retrained_partner_is_reported_as_measured_with_an_earlier_policy(tmp_path, monkeypatch):
    """A study's search + learned rows name the partner's policy digest; when `learned` is retrained, the report
    says those rows measured the earlier policy (and names the teams) instead of passing them off as today's."""
    from cardzoo.agents.registry import fingerprint
    from cardzoo.evaluation.report import Section
    from cardzoo.evaluation.report import model as report
    from cardzoo.evaluation.report import search as search_report

    def team(partner=None, digest=None):
        r = stats.wilson(7, 10)
        cell = {"wins": 7, "games": 10, "rate": r.rate, "low": r.low, "high": r.high, "results": "W" * 7 + "L" * 3}
        return {**cell, "partner": partner, "partner_digest": digest} if partner else cell

    now = fingerprint("learned", "rope_team_v0")
    assert now  # a shipped policy's digest
    monkeypatch.setattr(report, "RESULTS", tmp_path)
    for digest, stale in ((now, False), ("0123456789ab", True)):
        data = {"commands": ["x"], "levels": {"hard": {
            "teams": {"search+search": team(), "simple+simple": team(), "search+learned": team("learned", digest),
                      "learned+search": team("learned", now)},
            "time": {"mean_ms": 12.0}, "loss_causes": {"counts": {}}}}}
        (tmp_path / "rope_team_search.json").write_text(json.dumps(data))
        text = "\n".join(search_report.rope_team(Section("rope_team"), {}))
        assert ("Measured with an earlier policy" in text) == stale
        if stale:
            assert "hard: search+learned)" in text  # only the team played with the other digest
    assert search_report.stale_partners({"a+b": team("learned", now)}, "rope_team_v0") == []
