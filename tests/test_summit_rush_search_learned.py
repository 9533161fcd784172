"""Summit Rush's search on the learned blueprint (``search_learned``): the batched blueprint plays what the
``learned`` agent plays on the env's own observations, the search keeps the blueprint's move when no deviation
clears the threshold, it decides the same every time, and bad options are refused by name."""

from __future__ import annotations

import copy
import dataclasses
import shutil

import numpy as np
import pytest

from cardzoo.agents import summit_rush_search
from cardzoo.agents.registry import make_agent
from cardzoo.agents.summit_rush_learned_blueprint import LearnedBlueprint
from cardzoo.agents.summit_rush_rollouts import blueprint_moves
from cardzoo.agents.summit_rush_search import SummitRushSearch
from cardzoo.envs import summit_rush_v0
from cardzoo.envs.common.errors import OptionError

from .test_summit_rush_search import play


class Noisy:
    """The learned agent with a third of its moves random: tables two learned players would not reach."""

    def __init__(self, seed: int):
        self.agent, self.rng = make_agent("learned", "summit_rush_v0"), np.random.default_rng(seed)

    def reset(self, seed=None):
        pass

    def act(self, observation, action_mask):
        if self.rng.random() < 1 / 3:
            return int(self.rng.choice(np.flatnonzero(action_mask)))
        return self.agent.act(observation, action_mask)


@pytest.mark.parametrize("level", ["normal", "hard", "expert"])
def test_blueprint_plays_learned_on_the_envs_own_observations(level):
    """At every tick of noisy games: the rollouts' blueprint move at the true state (the engine's rows of each seat)
    is the learned agent's action on that seat's env observation, and the batched policy on the env's rows, all at
    once, is the agent's row by row (Expert: Hard's policy on a mapped clock)."""
    learned, blueprint = make_agent("learned", "summit_rush_v0"), LearnedBlueprint()
    rows, masks, wanted = [], [], []

    def check(env, obs):
        mine = tuple(learned.act(obs[a]["observation"], obs[a]["action_mask"]) for a in env.possible_agents)
        assert blueprint_moves(env.game, blueprint) == mine, f"tick {env.game.tick}"
        for a, action in zip(env.possible_agents, mine, strict=True):
            rows.append(obs[a]["observation"])
            masks.append(obs[a]["action_mask"])
            wanted.append(action)

    for seed in (11, 12):
        play({"level": level, "talk": False}, seed, [Noisy(seed), Noisy(seed + 100)], check)
    env = summit_rush_v0.parallel_env(level=level, talk=False)
    env.reset(seed=0)
    config = env.game.config
    config = dataclasses.replace(config, time_limit=config.ticks, seconds_per_action=1.0)  # the worlds' clock
    policy = blueprint(config)
    assert len(set(wanted)) > 5
    assert policy(np.array(rows), np.array(masks)).tolist() == wanted


def test_true_worlds_and_a_huge_threshold_play_the_blueprint(monkeypatch):
    """With every world the true deal and a threshold no gain clears, a search_learned team plays every tick as
    two learned players do."""
    env_of = {}
    monkeypatch.setattr(summit_rush_search, "sample_world", lambda pub, rng: copy.deepcopy(env_of["env"].game))

    def keep(env, obs):
        env_of["env"] = env

    for level, seed in (("normal", 3), ("hard", 4)):
        summit_rush_search._MEMO.clear()
        team = [SummitRushSearch(worlds=2, z=1e9, blueprint="learned") for _ in range(2)]
        searched, info = play({"level": level, "talk": False}, seed, team, keep)
        learned, info2 = play({"level": level, "talk": False}, seed, [make_agent("learned", "summit_rush_v0")
                                                                       for _ in range(2)])
        assert searched == learned and info == info2
        assert sum(a.searches for a in team) > 5 and sum(a.deviations for a in team) == 0


def test_search_learned_deviates_and_is_deterministic():
    """The registry's search_learned (with a small budget) leaves the blueprint sometimes, and a fresh team on the
    same deal, other agent seeds, decides the same at every tick."""
    logs = []
    for offset in (0, 7):
        summit_rush_search._MEMO.clear()
        team = [make_agent("search_learned", "summit_rush_v0", seed=offset + i) for i in range(2)]
        assert team[0].blueprint == LearnedBlueprint()
        for agent in team:
            agent.worlds, agent.z = 4, 0.0
        logs.append(play({"level": "hard", "talk": False}, 5, team)[0])
        assert sum(a.deviations for a in team) > 0
    assert logs[0] == logs[1]


@pytest.mark.parametrize(("options", "named"), [
    ({"blueprint": "greedy"}, "blueprint"), ({"blueprint": ["policy.txt"]}, "blueprint"), ({"blueprint": []},
                                                                                          "blueprint"),
    ({"blueprint": 3}, "blueprint"), ({"blueprint_ticks": -1}, "blueprint_ticks"),
    ({"blueprint_ticks": True}, "blueprint_ticks"), ({"blueprint_ticks": 2.5}, "blueprint_ticks"),
    ({"wins_only": 1}, "wins_only")])
def test_bad_options_are_refused_by_name(options, named):
    with pytest.raises(OptionError, match=named):
        SummitRushSearch(**options)


def test_a_policy_of_another_game_is_refused():
    from cardzoo.agents.learned import shipped_policy

    with pytest.raises(OptionError, match="rope_team_v0"):
        SummitRushSearch(blueprint=[str(shipped_policy("rope_team_v2"))])


def test_wins_only_counts_worlds_won_not_stock_saved(monkeypatch):
    """A move that keeps one more stock card in ten won worlds but loses three the blueprint's move wins clears
    the sign test on scores, and not on wins."""
    env = summit_rush_v0.parallel_env(level="normal", talk=False)
    obs, _ = env.reset(seed=2)
    o = obs["player_0"]
    pub = summit_rush_search.Public(int.from_bytes(np.packbits(o["observation"].view(np.uint8), bitorder="little")
                                                   .tobytes(), "little"), len(o["observation"]), len(o["action_mask"]))
    cands = summit_rush_search.candidates(pub)
    assert len(cands) >= 2

    def rollouts(worlds, joints, *args):
        values = np.full((len(worlds), len(joints)), 1.05)
        values[:10, 1] = 1.06
        values[10:13, 1] = 0.0
        return values

    monkeypatch.setattr(summit_rush_search, "rollout_values", rollouts)
    assert summit_rush_search.search(pub, 16, None, 1.0, 0) == cands[1]
    assert summit_rush_search.search(pub, 16, None, 1.0, 0, wins_only=True) == cands[0]


def test_the_reports_block_is_generated_from_the_committed_study(tmp_path):
    """The committed report's search_learned block is what the committed summary gives (no hand-copied or stale
    figure), and it shows every level's search_learned rate with its deals."""
    from cardzoo.evaluation.report.model import RESULTS, load_result
    from cardzoo.evaluation.studies.search_learned_summit_rush import refresh_report

    committed = RESULTS / "report" / "summary.md"
    copy_ = shutil.copytree(RESULTS / "report", tmp_path / "report")  # with its charts: the page links those there
    refresh_report(copy_)
    for name in ("summary.md", "results.json", "results.csv"):
        assert (copy_ / name).read_text() == (RESULTS / "report" / name).read_text(), name
    data = load_result("summit_rush_search_learned")
    for level, d in data["levels"].items():
        c = d["cells"]["search_learned"]
        assert f"| {level} | {d['seeds']} | {100 * c['rate']:.1f}% [{100 * c['low']:.1f}, {100 * c['high']:.1f}]" \
            in committed.read_text()


def test_both_seats_compute_the_same_joint_move_without_the_memo():
    """Each seat, from its own observation, computes the same joint move and blueprint move (the memo aside: a
    partner in another process has none), at several tables of a game."""
    blueprint, compared = LearnedBlueprint(), []

    def check(env, obs):
        if env.game.tick % 6:
            return
        found = []
        for a in env.possible_agents:
            o = obs[a]
            bits = int.from_bytes(np.packbits(o["observation"].view(np.uint8), bitorder="little").tobytes(), "little")
            pub = summit_rush_search.Public(bits, len(o["observation"]), len(o["action_mask"]))
            found.append(summit_rush_search.search_with_blueprint(pub, 4, None, 0.0, 0, blueprint, None, True))
        assert found[0] == found[1]
        compared.append(found[0][2])

    play({"level": "hard", "talk": False}, 6, [make_agent("learned", "summit_rush_v0") for _ in range(2)], check)
    assert len(compared) >= 3 and any(compared)


def test_blueprint_ticks_hands_the_rollouts_to_the_simple_tail():
    """blueprint_ticks=0: the rollouts are the simple blueprint's; a count past the game's end: the policy's to
    the end; one tick of the policy, then simple, differs from both somewhere."""
    from cardzoo.agents.summit_rush_rollouts import rollout_values

    env = summit_rush_v0.parallel_env(level="normal", talk=False)
    obs, _ = env.reset(seed=8)
    o = obs["player_0"]
    pub = summit_rush_search.Public(int.from_bytes(np.packbits(o["observation"].view(np.uint8), bitorder="little")
                                                   .tobytes(), "little"), len(o["observation"]), len(o["action_mask"]))
    rng = __import__("random").Random(1)
    worlds = [summit_rush_search.sample_world(pub, rng) for _ in range(12)]
    joints = summit_rush_search.candidates(pub)
    learned = LearnedBlueprint()
    simple = rollout_values(worlds, joints)
    assert (rollout_values(worlds, joints, None, learned, 0) == simple).all()
    full = rollout_values(worlds, joints, None, learned)
    assert (rollout_values(worlds, joints, None, learned, 1000) == full).all()
    assert (full != simple).any()


def test_the_studys_defaults_are_the_registry_agents_settings():
    # The committed rows were played with wins_only; a default that differs from the agent would start a second,
    # unmatched series when the documented command is run again.
    from cardzoo.evaluation.studies.search_learned_summit_rush import parser, settings

    agent = make_agent("search_learned", "summit_rush_v0")
    want = {"worlds": agent.worlds, "z": agent.z, "blueprint_ticks": agent.blueprint_ticks,
            "blueprint": agent.blueprint_spec, "wins_only": agent.wins_only}
    assert settings(parser().parse_args([])) == want


def test_the_old_search_is_paired_on_the_deals_both_played():
    from cardzoo.evaluation.report.model import load_result
    from cardzoo.evaluation.studies.search_learned_summit_rush import old_search

    results = load_result("summit_rush_search")["levels"]["hard"]["search+search"]["results"]
    mine = {0: True, 1: False, 2: results[2] != "W", len(results): True}  # the last deal the old study never played
    old = old_search("hard", mine)
    was = [results[d] == "W" for d in (0, 1, 2)]
    assert old["games"] == 3 and old["wins"] == sum(was)
    cmp = old["search_learned_minus_search"]
    assert cmp["only_this"] == sum(m and not w for m, w in zip((True, False, results[2] != "W"), was, strict=True))
    assert cmp["only_this"] - cmp["only_other"] == pytest.approx(3 * cmp["difference"])


def test_a_search_learned_team_plays_the_talking_game_as_the_silent_one():
    """It says nothing, so two of them hear nothing: the talking game is the silent game move for move (the study
    reports the talking levels from that, checked on the report's deals by ``--talking``)."""
    logs = []
    for talk in (False, True):
        summit_rush_search._MEMO.clear()
        team = [make_agent("search_learned", "summit_rush_v0", seed=i) for i in range(2)]
        for agent in team:
            agent.worlds, agent.z = 4, 0.0  # deviating often: the check covers the search's moves, not only learned's
        logs.append(play({"level": "hard", "talk": talk}, 5, team))
        assert sum(a.deviations for a in team) > 0
    (silent, silent_end), (spoken, spoken_end) = logs
    assert spoken == silent  # a silent move keeps its action number in the talking game
    assert {k: spoken_end[k] for k in ("outcome", "ticks", "score")} == {k: silent_end[k] for k in
                                                                          ("outcome", "ticks", "score")}


def test_the_talking_check_flags_a_deal_whose_game_differs():
    from cardzoo.evaluation.studies.search_learned_summit_rush import summarise

    config = {"worlds": 32}
    game = {"outcome": "win", "ticks": 40, "score": 3, "collisions": 1}
    silent = [{"level": "hard", "seed": s, "settings": config,
               **{t: {**game, "decisions": 80, "cpu": 1.0, "max_ms": 9.0, "searches": 10, "rollouts": 99,
                      "deviations": 1} if t == "search_learned" else game for t in ("search_learned", "learned",
                                                                                    "simple")}}
              for s in range(3)]
    talking = [{"level": "hard", "seed": 0, "settings": config, **game},
               {"level": "hard", "seed": 1, "settings": config, **game, "ticks": 41},  # one tick longer
               {"level": "hard", "seed": 2, "settings": config, **game, "outcome": "stuck"},
               {"level": "hard", "seed": 2, "settings": {"worlds": 8}, **game}]  # another setting: not read
    check = summarise(silent, config, talking)["levels"]["hard"]["talking"]
    assert (check["deals"], check["same_game"], check["different"]) == (3, 1, [1, 2])
    assert (check["wins"], check["silent_wins"]) == (2, 3)
