"""A slow agent is benchmarked a game at a time on one deal key (``--only``), and
``cardzoo.evaluation.protocol.merge`` joins the runs into the result of all the games: the same cells and the same
digest as one run of both, the runs' commands and compute kept; runs that measure different things are refused."""

from __future__ import annotations

import copy
import json

import pytest

from cardzoo.agents.pools import Pool
from cardzoo.envs.common.errors import RecordError
from cardzoo.evaluation.protocol import benchmark, leaderboard, read, write
from cardzoo.evaluation.protocol.merge import main, merge

POOLS = {"rope_team": Pool("tiny", ("simple",), ("simple_wary",), ("random",)),
         "rook": Pool("tiny", ("heuristic",), ("heuristic_timid",), ("random",))}
KEY = "ab" * 32


def _run(games, **kwargs):
    return benchmark("random", games=games, games_per_cell=3, pools=POOLS, deal_key=KEY,
                     command=f"cardzoo benchmark random --only {' '.join(games)}", **kwargs)


@pytest.fixture(scope="module")
def runs():
    return _run(["rope_team"]), _run(["rook"]), _run(["rope_team", "rook"])


def _untimed(headline):
    return {k: v for k, v in headline.items() if k != "cpu_ms_per_decision"}


def test_runs_of_one_game_each_merge_into_the_run_of_both(runs):
    rope, rook, both = runs
    merged = merge([rope, rook], command="merge")
    assert merged["digest"] == both["digest"]
    for game in ("rope_team", "rook"):
        assert [c["wins"] for c in merged["games"][game]["cells"]] == [c["wins"] for c in both["games"][game]["cells"]]
        assert _untimed(merged["games"][game]["headline"]) == _untimed(both["games"][game]["headline"])
    assert [r["games"] for r in merged["runs"]] == [["rope_team"], ["rook"]]
    assert [r["command"] for r in merged["runs"]] == [rope["command"], rook["command"]]
    assert merged["compute"]["agent_cpu_seconds_per_game"] == {**rope["compute"]["agent_cpu_seconds_per_game"],
                                                               **rook["compute"]["agent_cpu_seconds_per_game"]}
    assert merged["compute"]["wall_seconds"] == round(rope["compute"]["wall_seconds"]
                                                      + rook["compute"]["wall_seconds"], 1)
    assert merged["complete"] and merged["skipped"] == {}
    # merged again with another run, it keeps the runs it was made of
    third = {**rook, "games": {"rook_again": rook["games"]["rook"]}}
    assert [r["games"] for r in merge([merged, third])["runs"]] == [["rope_team"], ["rook"], ["rook_again"]]


@pytest.mark.parametrize("field, value", [("agent", "simple"), ("games_per_cell", 4), ("deals", {"key": "cd" * 32}),
                                          ("limits", {"decision_seconds": 1.0}), ("package", "0.0.1"),
                                          ("protocol", "benchmark_v1")])
def test_runs_that_measure_different_things_are_refused_naming_the_difference(runs, field, value):
    rope, rook, _ = runs
    other = {**rook, field: value}
    with pytest.raises(RecordError, match=field):
        merge([rope, other])


def test_a_game_in_two_runs_or_other_pool_parts_are_refused(runs):
    rope, rook, both = runs
    with pytest.raises(RecordError, match="rope_team is in result 2 and an earlier one"):
        merge([rope, both])
    other = copy.deepcopy(rook)
    other["games"]["rook"]["pool"]["played"] = ["dev", "test"]
    with pytest.raises(RecordError, match="different parts"):
        merge([rope, other])
    with pytest.raises(RecordError, match="two results or more"):
        merge([rope])


def test_the_command_writes_the_merged_files_and_the_leaderboard_reads_them(runs, tmp_path, capsys):
    rope, rook, both = runs
    a, b = write(rope, tmp_path / "a", chart=False), write(rook, tmp_path / "b", chart=False)
    assert main([str(a), str(b), "--out", str(tmp_path / "m"), "--name", "random"]) == 0
    merged = read(tmp_path / "m" / "random.json")
    assert set(merged["games"]) == {"rope_team", "rook"}
    assert merged["command"].endswith(f"{b} --out {tmp_path / 'm'} --name random")
    text = (tmp_path / "m" / "random.md").read_text()
    assert rope["command"] in text and rook["command"] in text and "2 runs" in text
    assert leaderboard.game_table([merged], "rook") == leaderboard.game_table([rook], "rook")
    json.dumps(merged)  # JSON-ready
    with pytest.raises(SystemExit):
        main([str(a), str(a), "--out", str(tmp_path / "m")])
    assert "rope_team is in result 2" in capsys.readouterr().err


@pytest.fixture(scope="module")
def levels():
    easy = _run(["rope_team"], levels=["easy", "hard"])
    rest = _run(["rope_team"], levels=["expert", "normal"])
    return easy, rest, _run(["rope_team"])


def test_runs_of_some_levels_each_merge_into_the_run_of_every_level(levels):
    a, b, whole = levels
    assert a["filters"] == {"levels": ["easy", "hard"]}
    merged = merge([b, a])  # in any order: the cells come out in the protocol's
    game, full = merged["games"]["rope_team"], whole["games"]["rope_team"]
    assert [s["name"] for s in game["settings"]] == ["easy", "normal", "hard", "expert"]
    assert game["settings"] == full["settings"]
    assert [(c["setting"], c["partner"], c["seat"], c["deals"]) for c in game["cells"]] == [
        (c["setting"], c["partner"], c["seat"], c["deals"]) for c in full["cells"]]
    assert _untimed(game["headline"]) == _untimed(full["headline"])  # the paired test too, from reference_deals
    assert game["headline"]["vs_reference"]["test"] is not None
    assert merged["filters"] == {} and merged["digest"] == whole["digest"]
    assert merged["compute"]["agent_cpu_seconds_per_game"]["rope_team"] == round(
        a["compute"]["agent_cpu_seconds_per_game"]["rope_team"]
        + b["compute"]["agent_cpu_seconds_per_game"]["rope_team"], 1)


def test_levels_not_yet_played_leave_the_merge_partial_and_a_level_twice_is_refused(levels, runs):
    a, b, whole = levels
    rook = runs[1]
    partial = merge([a, rook])
    assert partial["filters"] == {"levels": ["easy", "hard", "single_round"]}
    for pair in ([a, whole], [whole, a]):  # a piece and the whole: the cells would count twice
        with pytest.raises(RecordError, match="played all of it"):
            merge(pair)
    old = copy.deepcopy(a)
    for cell in old["games"]["rope_team"]["cells"]:
        del cell["reference_deals"]
    with pytest.raises(RecordError, match="reference's deals"):
        merge([old, b])
    other = copy.deepcopy(b)
    other["games"]["rope_team"]["digest"] = "weights:another"
    with pytest.raises(RecordError, match="another digest"):
        merge([a, other])


TEST_PART = ("simple_signal", "simple_high_follow", "simple_trump_shy", "simple_wary", "learned_v1_seed1",
             "learned_seed1")


@pytest.fixture(scope="module")
def partners():
    """The shipped pool's test part at one level, whole and in two runs of different partners."""
    run = lambda **kw: benchmark("random", games=["rope_team"], games_per_cell=3, deal_key=KEY, parts=["test"],  # noqa: E731
                                 levels=["easy"], **kw)
    return run(partners=list(TEST_PART[3:])), run(partners=list(TEST_PART[:3])), run()


def test_runs_of_some_partners_each_merge_into_the_run_of_the_whole_pool(partners):
    late, early, whole = partners
    from cardzoo.agents.pools import pool

    assert pool("rope_team").test == TEST_PART  # the fixture's split is of the shipped pool
    merged = merge([late, early])  # the later members first: the cells come out in the pool's order
    game, full = merged["games"]["rope_team"], whole["games"]["rope_team"]
    key = lambda c: (c["setting"], c["kind"], c["partner"], c["seat"], c["deals"], c["reference_deals"])  # noqa: E731
    assert [key(c) for c in game["cells"]] == [key(c) for c in full["cells"]]  # self-play once, not twice
    assert game["pool"] == full["pool"]
    assert _untimed(game["headline"]) == _untimed(full["headline"])
    assert merged["filters"] == {"levels": ["easy"]} == whole["filters"]  # every partner in: no partners filter
    half = merge([early, _strip_partner(late, TEST_PART[3])])
    assert set(half["filters"]["partners"]) == set(TEST_PART) - {TEST_PART[3]}


def _strip_partner(result, member):
    out = copy.deepcopy(result)
    game = out["games"]["rope_team"]
    game["cells"] = [c for c in game["cells"] if c["partner"] != member]
    game["pool"]["test"] = [m for m in game["pool"]["test"] if m != member]
    return out


def test_a_cell_two_runs_played_differently_is_refused(partners):
    late, early, _ = partners
    other = copy.deepcopy(early)
    cell = other["games"]["rope_team"]["cells"][0]
    assert cell["kind"] == "self"
    cell["deals"] = "".join("W" if ch == "L" else "L" for ch in cell["deals"])
    with pytest.raises(RecordError, match="in two results with other games"):
        merge([late, other])
