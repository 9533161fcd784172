"""The leaderboard page and the README's benchmark table are written from the committed benchmark results by
``cardzoo.evaluation.protocol.leaderboard`` (a figure typed by hand would drift from them)."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from cardzoo.agents.pools import Pool
from cardzoo.evaluation.protocol import benchmark, leaderboard
from cardzoo.evaluation.protocol.protocol import READABLE, VERSION

ROOT = Path(__file__).resolve().parents[1]
COMMITTED = leaderboard.load()


def test_the_leaderboard_page_is_the_committed_results():
    assert (ROOT / "docs" / "leaderboard.md").read_text() == leaderboard.page(COMMITTED), (
        "docs/leaderboard.md is not the committed results': run python -m cardzoo.evaluation.protocol.leaderboard")


def test_the_readme_table_is_the_committed_results():
    readme = (ROOT / "README.md").read_text()
    assert leaderboard.readme_with_table(readme, COMMITTED) == readme, (
        "README.md's benchmark table is not the committed results': run python -m "
        "cardzoo.evaluation.protocol.leaderboard")


def test_every_shipped_agent_is_on_the_leaderboard():
    agents = {r["agent"] for r in COMMITTED}
    assert {"random", "simple", "heuristic", "learned", "learned_v1", "search"} <= agents, agents
    for result in COMMITTED:
        assert result["protocol"] in READABLE and (ROOT / "evaluation/results/benchmark" /
                                                   f"{result['agent']}.png").is_file()
    ranked, _ = leaderboard.split(COMMITTED)
    assert {r["protocol"] for r in ranked} == {VERSION}
    for result in ranked:  # the ranked entries at the protocol's budget, with the agent's CPU time measured
        assert result["games_per_cell"] >= 500, result["agent"]
        for game in result["games"].values():
            assert game["headline"]["decisions"] > 0 and game["headline"]["cpu_ms_per_decision"] > 0, result["agent"]


def test_older_entries_are_listed_apart_not_ranked(two):
    older = copy.deepcopy(two[0])
    older["protocol"] = "benchmark_v1"
    results = [older, two[1]]
    ranked, apart = leaderboard.split(results)
    assert ranked == [two[1]] and apart == [older]
    page = leaderboard.page(results)
    ranked_part, _, older_part = page.partition("## Not yet played under benchmark_v2")
    assert "| 1 | [`learned`]" in ranked_part and "[`random`]" not in ranked_part
    assert "| [`random`](results/benchmark/random.md) | benchmark_v1 | 4 (custom) |" in older_part
    assert "Not yet played again under benchmark_v2: `random`." in leaderboard.readme_table(results).replace("\n", " ")
    assert "## Not yet played" not in leaderboard.page(two)


def test_an_agent_played_again_in_some_games_is_ranked_there_and_its_older_result_kept_for_the_rest(two):
    """``search`` under v2 in Rope Team and Rook, its v1 result (every game) kept beside it as ``search_v1``: the
    ranked tables hold its v2 games, the older table its v1 rates but for the games played again, and the README
    names the game still waiting."""
    older = {**copy.deepcopy(two[0]), "protocol": "benchmark_v1", "_stem": "random_v1"}
    newer = copy.deepcopy(two[0])
    del newer["games"]["rook"]
    page = leaderboard.page([older, newer, two[1]])
    ranked_part, _, older_part = page.partition("## Not yet played under benchmark_v2")
    assert "[`random`](results/benchmark/random.md)" in ranked_part.split("## Rook for Two")[0]
    assert "[`random`]" not in ranked_part.split("## Rook for Two")[1]
    row = next(line for line in older_part.splitlines() if line.startswith("| [`random`]"))
    assert row.startswith("| [`random`](results/benchmark/random_v1.md) | benchmark_v1 |")
    rook = older["games"]["rook"]["headline"]["cross"]["test"]["rate"]
    assert row.endswith(f"| played again | {100 * rook:.1f}% |"), row
    readme = leaderboard.readme_table([older, newer, two[1]]).replace("\n", " ")
    assert "Not yet played again under benchmark_v2: `random` (Rook for Two)." in readme


def test_a_result_states_its_compute(two):
    compute = two[1]["compute"]
    assert compute["wall_seconds"] > 0 and compute["workers"] == 1 and compute["backend"] == "local"
    rope = two[1]["games"]["rope_team"]["headline"]
    assert compute["agent_cpu_seconds_per_game"]["rope_team"] == round(
        rope["cpu_ms_per_decision"] * rope["decisions"] / 1000, 1)
    row = leaderboard.game_table(two, "rope_team")[2]
    assert f"| {rope['cpu_ms_per_decision'] * rope['decisions'] / 3.6e6:.2g} | 4 (custom) |" in row


POOLS = {"rope_team": Pool("tiny", ("simple",), ("simple_wary",), ("random",)),
         "rook": Pool("tiny", ("heuristic",), ("heuristic_timid",), ("random",))}


@pytest.fixture(scope="module")
def two():
    return [benchmark(agent, games=["rope_team", "rook"], games_per_cell=4, pools=POOLS)
            for agent in ("random", "learned")]


def test_the_tables_follow_the_results(two):
    readme = leaderboard.readme_table(two)
    page = leaderboard.page(two)
    learned = two[1]["games"]["rope_team"]["headline"]
    assert f"{100 * learned['self']['rate']:.1f}%" in readme and "## Rook for Two" in page
    changed = copy.deepcopy(two)
    changed[1]["games"]["rope_team"]["headline"]["self"]["rate"] = 0.123
    changed[1]["games"]["rope_team"]["headline"]["cross"]["test"]["rate"] = 0.321
    row = next(line for line in leaderboard.readme_table(changed).splitlines() if line.startswith("| `learned`"))
    assert row.startswith("| `learned` | 12.3% | 32.1% |")
    # ranked by the test pool: learned first in Rope Team; swap the rates and random leads
    table = leaderboard.game_table(two, "rope_team")
    assert "`learned`" in table[2] and "`random`" in table[3]
    swapped = copy.deepcopy(two)
    a, b = (r["games"]["rope_team"]["headline"]["cross"] for r in swapped)
    a["test"], b["test"] = b["test"], a["test"]
    a["test"]["rate"], b["test"]["rate"] = 0.9, 0.1
    assert "`random`" in leaderboard.game_table(swapped, "rope_team")[2]


def test_the_findings_say_whether_the_self_play_lead_holds(two):
    holds = leaderboard.findings(two, "rope_team")[0]
    assert holds.startswith("`learned` leads in self-play and keeps the lead")
    changed = copy.deepcopy(two)
    changed[0]["games"]["rope_team"]["headline"]["self"]["rate"] = 1.0
    assert "`random` leads in self-play but not with the held-out test pool" in leaderboard.findings(
        changed, "rope_team")[0]
    # then one table, a row per agent: its worst competent partner, with the most common way those games are lost
    table = leaderboard.findings(two, "rope_team")[2:]
    assert table[0].startswith("| agent | worst partner | its rate | most games lost by |") and len(table) == 2 + 2
    row = next(line for line in table if line.startswith("| `learned` |"))
    worst = two[1]["games"]["rope_team"]["headline"]["worst"]
    assert f"| `{worst['partner']}` ({worst['part']}) | {100 * worst['rate']:.1f}% |" in row


def test_the_readme_markers_are_required(two):
    with pytest.raises(ValueError, match="benchmark"):
        leaderboard.readme_with_table("no markers", two)


def test_the_costliest_partner_is_read_against_the_reference_with_the_same_partner(two):
    learned = copy.deepcopy(two[1]["games"]["rope_team"])
    member, mine, ref = leaderboard._relative(learned)
    cells = [c for c in learned["cells"] if c["partner"] == member]
    assert mine == sum(c["wins"] for c in cells) / sum(c["games"] for c in cells)
    assert ref == sum(c["reference_wins"] for c in cells) / sum(c["games"] for c in cells)
    other = next(m for m in ("simple", "simple_wary", "random") if m != member)
    for cell in learned["cells"]:  # the reference now wins every game with the other member
        if cell["partner"] == other:
            cell["reference_wins"] = cell["games"]
    assert leaderboard._relative(learned)[0] == other
    weak = copy.deepcopy(learned)
    for cell in weak["cells"]:  # the reference wins every game with the weak member: still not the costliest
        if cell["partner"] == "random":
            cell["reference_wins"], cell["wins"] = cell["games"], 0
    assert leaderboard._relative(weak)[0] != "random"
    row = next(line for line in leaderboard.findings([two[0], {**two[1], "games": {"rope_team": learned}}],
                                                     "rope_team") if line.startswith("| `learned` |"))
    assert row.split(" | ")[4] == f"`{other}`"  # the costliest partner's column


def test_a_partial_result_is_listed_apart_with_what_it_left_out_not_ranked():
    partial = benchmark("random", games=["rope_team"], games_per_cell=4, pools=POOLS, levels=["hard", "easy"],
                        partners=["simple"])
    whole = benchmark("simple", games=["rope_team"], games_per_cell=4, pools=POOLS)
    both = [partial, whole]
    ranked = leaderboard.game_table(both, "rope_team")
    assert len(ranked) == 3 and "`simple`" in ranked[2]  # the header, its rule, the one whole entry
    apart = leaderboard.partial_table(both, "rope_team")
    assert "| [`random`](results/benchmark/random.md) | only easy, hard; only partners simple |" in apart[-1]
    assert leaderboard.partial_table([whole], "rope_team") == []
    older = {**copy.deepcopy(partial), "protocol": "benchmark_v1", "_stem": "random_v1"}
    assert "played again" not in leaderboard.older_table([older], [partial])[-1]  # only in part: v1 still stands
    assert "played again" in leaderboard.older_table([{**older, "agent": "simple"}], [whole])[-1]
    gap = copy.deepcopy(whole)  # a merge of pieces that left one partner's cell out of one setting
    cells = gap["games"]["rope_team"]["cells"]
    n = len(cells)
    del cells[-1]
    assert leaderboard.left_out(gap, "rope_team") == [f"{n - 1} of its settings' {n} cells"]
    assert "Played in part" in leaderboard.page(both)
    readme = leaderboard.readme_table(both)
    assert "Played in part (on the leaderboard, not here): `random` (Rope Team)." in " ".join(readme.split())
    assert [line for line in readme.splitlines() if line.startswith("| `random`")] == ["| `random` | – | – |"]
