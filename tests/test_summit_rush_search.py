"""Summit Rush's search agent: it reads only its observation, decides the same in every process, checks its budget,
keeps the team free of collisions, plays talking games by saying nothing, and deviates from the blueprint when the
rollouts show a clear gain."""

from __future__ import annotations

import inspect
import json
import random
import subprocess
import sys

import numpy as np
import pytest

from cardzoo.agents import summit_rush_search
from cardzoo.agents.registry import make_agent
from cardzoo.agents.summit_rush_search import (
    Public,
    SummitRushSearch,
    blueprint_joint,
    sample_world,
)
from cardzoo.envs import summit_rush_v0
from cardzoo.envs.common.cards import CARD_NAMES
from cardzoo.envs.common.errors import OptionError
from cardzoo.envs.summit_rush import rules
from cardzoo.envs.summit_rush.rules import N_PEAKS

from .hidden_worlds import summit_rush_hidden

SMALL = {"worlds": 4, "z": 0.0}  # few worlds, and any gain moves it off the blueprint: every path, often


def bits_of(vector: np.ndarray) -> int:
    return int.from_bytes(np.packbits(vector.view(np.uint8), bitorder="little").tobytes(), "little")


def play(options: dict, seed: int, agents, check=None) -> tuple[list, dict]:
    """A parallel game; returns every tick's actions and the final info. ``check(env, obs)`` sees each tick."""
    env = summit_rush_v0.parallel_env(**options)
    obs, _ = env.reset(seed=seed)
    for i, agent in enumerate(agents):
        agent.reset(seed=seed * 10 + i)
    log, info = [], {}
    while env.agents:
        if check is not None:
            check(env, obs)
        actions = {a: agents[i].act(obs[a]["observation"], obs[a]["action_mask"])
                   for i, a in enumerate(env.possible_agents)}
        log.append(tuple(actions.values()))
        obs, _, _, _, infos = env.step(actions)
        info = infos[env.possible_agents[0]]
    return log, info


def test_registered_and_acts_on_observation_and_mask_only():
    agent = make_agent("search", "summit_rush_v0", seed=3)
    assert isinstance(agent, SummitRushSearch)
    assert list(inspect.signature(agent.act).parameters) == ["observation", "action_mask"]


def test_the_public_table_is_read_right_for_every_level_and_talk():
    """Stock counts and the clock decoded from the observation equal the game's, and a sampled world keeps every
    public fact and deals exactly the unseen cards."""
    for options in [{"level": lvl, "talk": talk, "players": p} for lvl in ("normal", "hard", "expert")
                    for talk in (False, True) for p in (2, 3)] + [{"solo": True}, {"time_limit": None}]:
        env = summit_rush_v0.parallel_env(**options)
        obs, _ = env.reset(seed=4)
        rng = random.Random(0)
        for tick in range(6):
            s = env.game
            o = obs[env.possible_agents[0]]
            pub = Public(bits_of(o["observation"]), o["observation"].shape[0], o["action_mask"].shape[0])
            assert list(pub.stock_left) == s.stock_left, options
            assert pub.ticks_left == s.ticks_left(), options
            world = sample_world(pub, rng)
            assert (world.present, world.up, world.tops, world.stock_left) == (s.present, s.up, s.tops, s.stock_left)
            assert world.ticks_left() == s.ticks_left()
            assert summit_rush_hidden(world) == summit_rush_hidden(s)
            n = s.config.players
            turn = N_PEAKS * n
            # Turn a stock card now and then so the thermometers change.
            obs, *_ = env.step({a: turn if tick % 2 == 0 and s.stock_left[i] else turn + 1
                                for i, a in enumerate(env.possible_agents)})


def test_a_timed_clock_of_no_level_is_refused_clearly():
    env = summit_rush_v0.parallel_env(time_limit=99.0, talk=False)
    obs, _ = env.reset(seed=0)
    o = obs["player_0"]
    with pytest.raises(OptionError, match="clocks of the levels"):
        SummitRushSearch(**SMALL).act(o["observation"], o["action_mask"])


@pytest.mark.parametrize("bad", [{"worlds": 0}, {"worlds": -3}, {"worlds": 2.5}, {"worlds": True},
                                 {"worlds": "8"}, {"depth": -1}, {"depth": 1.5}, {"depth": False},
                                 {"z": -1.0}, {"z": float("nan")}, {"z": "2"}, {"team_seed": 1.0}])
def test_budget_is_validated(bad):
    with pytest.raises(OptionError, match=next(iter(bad))):
        SummitRushSearch(**bad)


def test_budget_options_are_used():
    """A depth of 0 rolls out only the candidate tick; any budget plays legal, collision-free games."""
    for budget in ({"worlds": 1, "depth": 0}, {"worlds": 2, "depth": 3}):
        _, info = play({"level": "hard", "talk": False}, 1, [SummitRushSearch(**budget) for _ in range(2)])
        assert info["conflicts"] == info["bounced"] == info["redirected"] == 0


def _game_log(seed: int) -> list:
    log, _ = play({"level": "hard", "talk": False}, seed, [SummitRushSearch(**SMALL) for _ in range(2)])
    return [list(t) for t in log]


def test_deterministic_within_and_across_processes():
    here = _game_log(2)
    assert _game_log(2) == here
    code = ("import json, sys; sys.path.insert(0, '.'); from tests.test_summit_rush_search import _game_log; "
            "print(json.dumps(_game_log(2)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={"PYTHONHASHSEED": "random", "PATH": ""}, cwd=str(_repo_root()))
    assert json.loads(out.stdout) == here


def _repo_root():
    from pathlib import Path

    return Path(__file__).resolve().parent.parent


def test_team_never_collides_and_each_seat_serves_its_own_pile():
    def check(env, obs):
        s = env.game
        n = s.config.players
        for i, a in enumerate(env.possible_agents):
            action = SummitRushSearch(**SMALL).act(obs[a]["observation"], obs[a]["action_mask"])
            assert action >= N_PEAKS * n or action % n == i  # a play goes onto the seat's own pile

    for options in ({"level": "normal", "talk": False}, {"players": 3, "level": "hard", "talk": False}):
        for seed in range(3):
            _, info = play(options, seed, [SummitRushSearch(**SMALL) for _ in range(options.get("players", 2))],
                           check)
            assert info["conflicts"] == info["bounced"] == info["redirected"] == 0


def test_talking_games_are_played_silently_and_the_same():
    """In a talking game the agent says nothing (message 0, so its actions are the silent moves) and plays the
    very game it plays in the silent variant."""
    for seed in range(2):
        silent, _ = play({"level": "hard", "talk": False}, seed, [SummitRushSearch(**SMALL) for _ in range(2)])
        talking, info = play({"level": "hard"}, seed, [SummitRushSearch(**SMALL) for _ in range(2)])
        assert talking == silent
        assert info.get("messages", 0) == 0


def test_with_a_simple_partner_the_game_stays_legal():
    for seed in range(3):
        _, info = play({"level": "normal", "talk": False, "illegal_action": "raise"}, seed,  # raises on an illegal move
                       [SummitRushSearch(**SMALL), make_agent("simple", "summit_rush_v0")])
        assert info["outcome"] != "illegal"


def test_leaves_the_blueprint_to_beat_the_clock():
    """Hard, one tick left, two free cards left: the 6C and the 7C, with the 5D on pile 0 and the 8D on pile 1. The
    simple strategy plans a run of both on one pile (7C-6C on pile 1), two ticks: too slow. Only
    the joint move 6C onto pile 0 and 7C onto pile 1 wins, in every world: the search team plays it."""
    cfg = rules.Config(players=2, stock=10, time_limit=120.0)
    names = ["6C", "7C", "5D", "8D"]
    rest = [c for c in range(52) if CARD_NAMES[c] not in names]
    deck = rest[:18] + [CARD_NAMES.index("6C"), CARD_NAMES.index("7C")] + rest[18:26] + [
        CARD_NAMES.index("5D")] + rest[26:35] + [CARD_NAMES.index("8D")] + rest[35:]
    s = rules.new_game(cfg, deck, 0)
    s.present = s.up = 1 << 18 | 1 << 19
    s.stock_left = [1, 1]
    s.tick = cfg.ticks - 1
    observer = summit_rush_v0.Observer(cfg)
    wait = N_PEAKS * 2 + 1
    observations = [observer.observe(s, seat) for seat in range(2)]
    masks = [np.array([rules.is_legal(s, seat, a) for a in range(cfg.n_actions)], np.int8) for seat in range(2)]
    pub = Public(bits_of(observations[0]), observations[0].shape[0], cfg.n_actions)
    assert blueprint_joint(pub) == (wait, 19 * 2 + 1)
    summit_rush_search._MEMO.clear()
    agents = [SummitRushSearch(), SummitRushSearch()]
    joint = [agents[seat].act(observations[seat], masks[seat]) for seat in range(2)]
    assert joint == [18 * 2 + 0, 19 * 2 + 1]
    rules.play_tick(s, joint)
    assert s.outcome == rules.WIN


def test_study_writes_paired_results_and_loss_sources(tmp_path):
    from cardzoo.evaluation.studies import search_summit_rush as summit_rush_search_study

    out = tmp_path / "search.json"
    summit_rush_search_study.main(["--games", "3", "--cross", "2", "--worlds", "1", "--levels", "hard",
                                   "--out", str(out)])
    result = json.loads(out.read_text())
    cells = result["levels"]["hard"]
    assert set(cells) == {"+".join(t) for t in summit_rush_search_study.TEAMS}
    for team, cell in cells.items():
        assert len(cell["results"]) == cell["games"] == (3 if team in ("search+search", "simple+simple") else 2)
        assert cell["wins"] == cell["results"].count("W")
        assert cell["wins"] + sum(cell["losses"].values()) == cell["games"]
    sources = cells["search+search"]["loss_sources"]
    assert sum(sum(v.values()) for v in sources.values()) == sum(cells["search+search"]["losses"].values())
    assert "--games 3" in result["command"]
    assert out.with_suffix(".csv").read_text().count("\n") == 1 + 4


def test_study_adds_the_cross_play_with_a_trained_partner_to_the_committed_file(tmp_path):
    from cardzoo.evaluation.studies import search_summit_rush as summit_rush_search_study

    out = tmp_path / "search.json"
    summit_rush_search_study.main(["--games", "3", "--cross", "1", "--worlds", "1", "--levels", "hard",
                                   "--out", str(out)])
    before = json.loads(out.read_text())["levels"]["hard"]
    summit_rush_search_study.main(["--add", "--partner", "learned", "--partner-games", "2", "--levels", "hard",
                                   "--out", str(out)])
    result = json.loads(out.read_text())
    cells = result["levels"]["hard"]
    assert set(cells) == set(before) | {"search+learned", "learned+search", "learned+learned"}
    assert all(cells[k] == v for k, v in before.items())
    assert len(result["commands"]) == 2 and "--add" in result["commands"][1] and "command" not in result
    simple = [c == "W" for c in cells["simple+simple"]["results"][:2]]
    for label in ("search+learned", "learned+search", "learned+learned"):
        won = [c == "W" for c in cells[label]["results"]]
        assert len(won) == 2 and cells[label]["partner_digest"]
        assert cells[label]["vs_simple"]["difference"] == (sum(won) - sum(simple)) / 2
    assert cells["search+learned"]["ms_per_decision"] > 0 and "ms_per_decision" not in cells["learned+learned"]
    assert out.with_suffix(".csv").read_text().count("\n") == 1 + 4 + 3


def test_study_plays_the_documents_untimed_variants_and_the_report_shows_them(tmp_path, monkeypatch):
    from cardzoo.evaluation.report import Section
    from cardzoo.evaluation.report import model as report
    from cardzoo.evaluation.report import search as search_report
    from cardzoo.evaluation.studies import search_summit_rush as summit_rush_search_study

    out = tmp_path / "summit_rush_search.json"
    summit_rush_search_study.main(["--games", "3", "--cross", "1", "--worlds", "1", "--levels", "hard",
                                   "--out", str(out)])
    before = json.loads(out.read_text())
    summit_rush_search_study.main(["--add", "--levels", "--untimed", "stock_10_no_wrap", "--games", "2", "--cross",
                                   "1", "--out", str(out)])
    result = json.loads(out.read_text())
    assert result["levels"] == before["levels"]  # the timed cells stay as they were
    [(variant, data)] = result["untimed"].items()
    assert variant == "stock_10_no_wrap" and data["options"] == summit_rush_search_study.UNTIMED[variant]
    cells = data["teams"]
    assert set(cells) == {"+".join(t) for t in summit_rush_search_study.TEAMS}
    # The variant's own rules were played: the simple team's results are the runner's on that variant.
    from cardzoo.evaluation.matches.runner import Matchup, run

    runner = run(Matchup.of("summit_rush_v0", ["simple"], **summit_rush_search_study.UNTIMED[variant], talk=False),
                 2, workers=1)
    assert cells["simple+simple"]["results"] == "".join("W" if r["outcome"] == "win" else "L" for r in runner)
    assert all(cells["+".join(t)]["games"] == (2 if t[0] == t[1] else 1) for t in summit_rush_search_study.TEAMS)
    assert out.with_suffix(".csv").read_text().count("\n") == 1 + 4 + 4
    with pytest.raises(SystemExit):  # nothing to add
        summit_rush_search_study.main(["--add", "--levels", "--out", str(out)])

    monkeypatch.setattr(report, "RESULTS", tmp_path)
    section = Section("summit_rush")
    text = "\n".join(search_report.summit_rush(section, {}))
    c = cells["search+search"]
    assert f"| stock_10_no_wrap | {100 * c['rate']:.1f}% [" in text
    assert ("summit_rush", variant, "search") in {(r.game, r.setting, r.source) for r in section.rows}
    assert search_report.untimed_cell(variant).startswith(f"{100 * c['rate']:.1f}% of 2; ")
    assert search_report.untimed_cell("tripeaks") == "–"


@pytest.mark.parametrize("search_seat, deal", [(0, 0), (1, 1)])
def test_a_search_seat_with_a_partner_that_turns_by_another_rule_does_not_wait_for_ever(search_seat, deal):
    """Untimed, 12 each (deal 0 with search in seat 0): the search's joint move has the simple partner turn while
    the simple strategy has the search seat turn; each waited for the other until the tick cap. The seat now sees
    that its partner did not play its part (the table did not change) and plays the blueprint's move, then a move
    of its own."""
    from cardzoo.evaluation.matches.runner import agent_seed
    from cardzoo.evaluation.studies import search_summit_rush as study

    env = study.make_env("stock_12")
    search = summit_rush_search.SummitRushSearch()
    agents = [search, make_agent("simple", "summit_rush_v0")][:: 1 if search_seat == 0 else -1]
    obs, _ = env.reset(seed=deal)
    for seat, agent in enumerate(agents):
        agent.reset(agent_seed(deal, seat))
    stalls = 0
    while env.agents:
        actions = {n: agents[i].act(obs[n]["observation"], obs[n]["action_mask"])
                   for i, n in enumerate(env.possible_agents)}
        stalls += search.stalled[search_seat] > 0
        obs, _, _, _, infos = env.step(actions)
    assert infos["player_0"]["outcome"] in ("win", "stuck") and env.game.tick < 200
    assert stalls  # the fallback was what ended the wait


def test_a_search_team_never_takes_its_partner_for_stalled():
    from cardzoo.evaluation.studies import search_summit_rush as study

    for setting in ("stock_12", "hard"):
        env = study.make_env(setting)
        team = [summit_rush_search.SummitRushSearch(worlds=4) for _ in range(2)]
        for seed in range(3):
            obs, _ = env.reset(seed=seed)
            for agent in team:
                agent.reset()
            while env.agents:
                actions = {n: team[i].act(obs[n]["observation"], obs[n]["action_mask"])
                           for i, n in enumerate(env.possible_agents)}
                assert team[0].stalled == {0: 0} and team[1].stalled == {1: 0}
                obs, _, _, _, _ = env.step(actions)


def test_one_search_agent_serving_both_seats_keeps_each_seats_stall_apart():
    """Asked for seat 0 and then seat 1 on the same table (one agent for the team, as some loops use it), the agent
    must not take the second call for a stalled partner; its moves equal those of one agent per seat."""
    from cardzoo.evaluation.studies import search_summit_rush as study

    env = study.make_env("normal")
    shared, own = summit_rush_search.SummitRushSearch(worlds=4), [summit_rush_search.SummitRushSearch(worlds=4)
                                                                  for _ in range(2)]
    obs, _ = env.reset(seed=5)
    while env.agents:
        actions = {}
        for i, name in enumerate(env.possible_agents):
            o, m = obs[name]["observation"], obs[name]["action_mask"]
            actions[name] = shared.act(o, m)
            assert actions[name] == own[i].act(o, m)
        obs, _, _, _, _ = env.step(actions)
    assert shared.stalled == {0: 0, 1: 0}
