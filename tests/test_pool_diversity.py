"""The pool diversity study (``evaluation/studies/pool_diversity.py``): its games are the evaluation's games, its
shadows see what the seat sees, its figures come from the JSON, and the committed results are of today's pools."""

from __future__ import annotations

import json

import numpy as np

from cardzoo.agents.loops import play
from cardzoo.agents.pools import POOLS
from cardzoo.agents.registry import make_agent
from cardzoo.evaluation.report.model import RESULTS
from cardzoo.evaluation.studies import pool_diversity as study

COMMITTED = RESULTS / "pools"


def test_cross_play_games_are_the_evaluations_games():
    """A cell's wins equal the evaluation loop's on the same deals (deal i = reset(seed=i), agents seeded alike)."""
    _, _, _, _, wins, games = study._cross(("rope_team", "hard", "simple_careless", "learned_v1", 12))
    agents = [make_agent("simple_careless", "rope_team_v0"), make_agent("learned_v1", "rope_team_v0")]
    assert wins == sum(play("hard", seed, agents) for seed in range(12)) and games == 12


def test_summit_rush_cross_play_is_reproducible_and_talking():
    """(The evaluation's Summit Rush loop plays silent games; the study plays the benchmark's talking ones.)"""
    first = study._cross(("summit_rush", "normal", "simple_talk", "summit_slow", 3))
    assert first == study._cross(("summit_rush", "normal", "simple_talk", "summit_slow", 3))
    assert study.settings("summit_rush")["hard"] == {"level": "hard", "players": 2, "talk": True}


class _Recorder:
    """A seat's player that notes its moves at the decisions with a choice."""

    def __init__(self, agent, n_moves: int):
        self.agent, self.n_moves, self.moves = agent, n_moves, []

    def reset(self, seed=None):
        self.agent.reset(seed)

    def act(self, observation, action_mask):
        action = self.agent.act(observation, action_mask)
        if action_mask.reshape(-1, self.n_moves).any(axis=0).sum() > 1:
            self.moves.append(int(action) % self.n_moves)
        return action


def test_shadows_see_the_seats_observations():
    """The shadow of the member in the seat chooses what the seat played; two copies of one member never disagree;
    random does."""
    # members that draw random numbers: the shadow must also be seeded as the seat's player is
    for game, setting, n_moves, member in (("rope_team", "normal", 52, "simple_careless"),
                                           ("summit_rush", "hard", 58, "summit_random_card")):
        shadows = [study._Shadows(game, (member, member, "random")) for _ in range(2)]
        players = [_Recorder(make_agent(member, study.GAMES[game].env_id), n_moves) for _ in range(2)]
        study.PLAY[game](study.settings(game)[setting], 5, players, shadows)
        for seat in (0, 1):
            rows = np.array(shadows[seat].rows)
            assert len(rows) > 5 and shadows[seat].calls >= len(rows)
            assert (rows[:, 0] == rows[:, 1]).all()
            assert (rows[:, 0] != rows[:, 2]).mean() > 0.3
            assert rows[:, 0].tolist() == players[seat].moves


def test_figures_read_both_seatings_and_shares_from_the_json():
    entry = {"members": ["a", "b", "c"], "dev": ["a", "b"], "test": ["c"], "games_per_pair": 10,
             "settings": {"x": {}, "y": {}},
             "wins": {"x": [[10, 4, 0], [2, 8, 0], [0, 0, 0]], "y": [[10, 4, 0], [2, 8, 0], [0, 0, 0]]},
             "disagreements": {"x": [[0, 5, 10], [5, 0, 10], [10, 10, 0]], "y": [[0, 5, 10], [5, 0, 10], [10, 10, 0]]},
             "decisions": {"x": 10, "y": 10}, "seconds": [1.0, 2.0, 3.0], "calls": [1000, 1000, 1000]}
    f = study.figures(entry)
    assert f["cross"][0, 1] == f["cross"][1, 0] == (8 + 4) / 40  # both seatings, both settings
    assert f["cross"][0, 0] == 1.0 and f["disagree"][0, 1] == 0.5 and f["disagree"][0, 2] == 1.0
    rows = {r["member"]: r for r in f["rows"]}
    assert rows["a"]["with_dev"] == 0.3 and rows["a"]["with_test"] == 0.0 and rows["c"]["part"] == "test"
    assert rows["b"]["ms_per_decision"] == 2.0 and f["closest"] == ("a", "b")


def test_the_committed_results_are_of_todays_pools_and_the_page_is_made_from_them(tmp_path):
    result = json.loads((COMMITTED / "diversity.json").read_text())
    for game, entry in result["games"].items():
        assert tuple(entry["dev"]) == POOLS[game].dev and tuple(entry["test"]) == POOLS[game].test, game
        assert tuple(entry["weak"]) == POOLS[game].weak, game
        assert result["pools_version"][game] == POOLS[game].version
        n = len(entry["members"])
        assert all(len(w) == n and sum(map(sum, w)) > 0 for w in entry["wins"].values())
    assert set(result["games"]) == {"rope_team", "summit_rush"}
    rook = result["opponent_pools"]["rook"]
    assert (tuple(rook["dev"]), tuple(rook["test"]), tuple(rook["weak"])) == (POOLS["rook"].dev, POOLS["rook"].test,
                                                                             POOLS["rook"].weak)
    assert set(rook["ms_per_decision"]) == set(rook["won_vs_baseline"]) == set(POOLS["rook"].members())
    assert study.summary(result, tmp_path) + "\n" == (COMMITTED / "summary.md").read_text()
    for game in result["games"]:
        assert (COMMITTED / f"{game}_cross_play.png").is_file() and (COMMITTED / f"{game}_disagreement.png").is_file()


def test_an_opponent_is_timed_over_its_rounds_against_the_baseline():
    game, member, ms, calls, won = study._opponent(("rook", "heuristic_timid", 4))
    assert (game, member) == ("rook", "heuristic_timid") and calls > 20 and ms > 0 and 0 <= won <= 4


def test_the_headline_parts_hold_exactly_the_competent_members_of_the_committed_study():
    """The pools' rule (agents/pools.py) on the committed study: every dev and test member is competent (a partner's
    self-play at least the simple strategy's minus MARGIN; an opponent winning OPPONENT_MIN_WINS of its rounds
    against the heuristic), every weak member is not."""
    result = json.loads((COMMITTED / "diversity.json").read_text())
    for game, entry in result["games"].items():
        rows = study.figures({**entry, "games_per_pair": result["games_per_pair"]})["rows"]
        for r in rows:
            assert r["competent"] == (r["part"] != "weak"), (game, r["member"], r["self_play"])
    competent = study.opponent_competent(result["opponent_pools"]["rook"])
    for member, ok in competent.items():
        assert ok == (member not in POOLS["rook"].weak), member


def test_the_competence_rule_sees_a_weak_member_in_a_headline_part():
    """The rule's own check: a pool study where the weak random partner sits in test is caught."""
    result = json.loads((COMMITTED / "diversity.json").read_text())
    entry = result["games"]["rope_team"]
    planted = {**entry, "test": entry["test"] + ["random"], "weak": [m for m in entry["weak"] if m != "random"],
               "games_per_pair": result["games_per_pair"]}
    row = next(r for r in study.figures(planted)["rows"] if r["member"] == "random")
    assert row["part"] == "test" and not row["competent"]
