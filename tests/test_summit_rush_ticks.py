"""Summit Rush games for evaluation, tick by tick: the same games as the AEC loop, wasted turns counted as defined,
and the message tallies (what the speaker and the listener did in the tick a message is heard); the talking part
of the report on a few games."""

from __future__ import annotations

import re

import numpy as np
import pytest

from cardzoo.agents.loops import play_env_game
from cardzoo.agents.registry import make_agent
from cardzoo.envs.common.record import make_env
from cardzoo.envs.summit_rush import rules
from cardzoo.evaluation.matches.runner import Matchup, run
from cardzoo.evaluation.matches.ticks import play_game
from cardzoo.evaluation.report import Section, Settings

ENV = "summit_rush_v0"


@pytest.mark.parametrize("agent, options", [("simple", {"level": "hard", "talk": False}), ("random", {}),
                                            ("simple_talk", {"players": 3})])
def test_it_plays_the_aec_loops_games(agent, options):
    env = make_env(ENV, illegal_action="raise", **options)
    for seed in range(3):
        agents = [make_agent(agent, ENV, seed=seed + i) for i in range(len(env.possible_agents))]
        record = play_game(env, agents, seed)
        agents = [make_agent(agent, ENV, seed=seed + i) for i in range(len(env.possible_agents))]
        assert {k: record[k] for k in ("outcome", "score", "ticks", "conflicts", "bounced", "returns")} == {
            k: v for k, v in play_env_game(env, agents, seed).items()
            if k in ("outcome", "score", "ticks", "conflicts", "bounced", "returns")}
        assert ("speaker" in record) == (options.get("talk", True))


class Turner:
    """Turns whenever its stock holds a card (and, talking, says "I'll turn"), else waits: wasted turns galore."""

    name = "turner"

    def reset(self, seed=None):
        pass

    def act(self, observation, action_mask):
        n_moves = action_mask.shape[0] // rules.N_MESSAGES
        turn = n_moves - 2
        return rules.SAY_TURN * n_moves + (turn if action_mask[turn] else turn + 1)


def test_wasted_turns_are_turns_while_a_card_fits_and_second_turns():
    env = make_env(ENV, level="hard")
    par = env.unwrapped
    for seed in range(4):
        record = play_game(env, [Turner(), Turner()], seed)
        # Counted again from the observations alone: a card fits iff the mask allows some play.
        obs, _ = par.reset(seed=seed)
        needless = double = 0
        while par.agents:
            turners = sum(1 for a in par.agents if obs[a]["action_mask"][par.TURN])
            if obs[par.agents[0]]["action_mask"][: par.TURN].any():
                needless += turners
            else:
                double += max(turners - 1, 0)
            obs, *_ = par.step({a: Turner().act(obs[a]["observation"], obs[a]["action_mask"]) for a in par.agents})
        assert (record["needless_turns"], record["double_turns"]) == (needless, double)
        assert needless + double > 0 and record["turned"] >= needless + double
        # Every "I'll turn" is followed by the speaker turning or waiting, never a play.
        assert set(record["speaker"]) <= {f"{rules.SAY_TURN}:turn", f"{rules.SAY_TURN}:wait"}


def test_message_tallies_follow_each_message_into_the_tick_it_is_heard():
    records = run(Matchup.of(ENV, ["simple_talk"], level="normal"), 6, workers=1, progress=False)
    for r in records:
        ticks_heard = r["ticks"] - 1  # every tick but the last is followed by one in which it is heard
        assert sum(r["speaker"].values()) == ticks_heard * 2 and sum(r["listener"].values()) == ticks_heard * 2
        for key in r["speaker"]:
            message, what = key.split(":")
            if int(message) >= rules.SAY_TAKING:  # a claim binds its speaker: the claimed card, next tick
                assert what == "named"
            if int(message) == rules.SAY_TURN:
                assert what == "turn"
        for key in r["listener"]:
            message, what = key.split(":")
            assert not (int(message) >= rules.SAY_TAKING and what == "named")  # the listener leaves it
            assert not (int(message) == rules.SAY_TURN and what == "turn")  # and does not turn too
    assert sum(r["speaker"].get(f"{rules.SAY_TAKING + p}:named", 0) for r in records for p in range(28)) > 0


def test_what_a_move_was_relative_to_a_message():
    from cardzoo.evaluation.matches.ticks import what

    env = make_env(ENV)
    env.reset(seed=0)
    game = env.unwrapped.game
    pos = rules.free_positions(game)[0]
    rank = game.peaks[pos] % 13
    assert what(game, 56, 0, 1) == "turn" and what(game, 57, rules.SAY_TAKING + pos, 1) == "wait"
    assert what(game, pos * 2 + 1, rules.SAY_TAKING + pos, 0) == "named"  # the claimed card, onto any pile
    assert what(game, pos * 2 + 1, rules.SAY_TAKING + (pos + 1) % 28, 0) == "play"
    assert what(game, pos * 2 + 1, rules.SAY_NEED + rank, 1) == "named"  # the needed rank onto the speaker's pile
    assert what(game, pos * 2 + 0, rules.SAY_NEED + rank, 1) == "play"
    assert what(game, pos * 2 + 1, rules.SAY_NEED + (rank + 1) % 13, 1) == "play"
    assert what(game, pos * 2 + 1, rules.SAY_ON_PILE + 3, 1) == "named" and what(game, pos * 2, rules.SAY_TURN, 0) \
        == "play"


def test_the_talking_part_of_the_report(tmp_path):
    from cardzoo.evaluation.report import play
    from cardzoo.evaluation.report.sections.summit_rush_talk import LEVELS, talk_lines

    settings = Settings(games=20, workers=1, out=tmp_path, progress=False)
    silent = {(lvl, "simple"): play(settings, ENV, ["simple"], level=lvl, talk=False) for lvl in LEVELS}
    out = Section("summit_rush")
    text = "\n".join(talk_lines(settings, out, silent))
    rows = {(r.setting, r.source): r for r in out.rows}
    for level in LEVELS:
        silent_rate = np.mean([r["outcome"] == "win" for r in silent[level, "simple"]])
        assert rows[level, "simple_talk_muted"].rate == silent_rate  # muted, the silent games exactly
        # Claims and turn calls bind the speaker and keep the listener off (shares in %: turn / wait / named / other).
        assert re.search(rf"\| {level} \| simple strategy, talking \| I'm taking <position> \| \d+ \([\d.]+%\) \| "
                         r"0 / 0 / 100 / 0 \| 0 / \d+ / 0 / \d+ \|", text)
        assert re.search(rf"\| {level} \| simple strategy, talking \| I'll turn \| \d+ \([\d.]+%\) \| "
                         r"100 / 0 / 0 / 0 \| 0 / 100 / 0 / 0 \|", text)
        assert re.search(rf"\| {level} \| simple strategy, silent \| [\d.]+ \[[\d.]+, [\d.]+\] \| \d+ \| 2 \|", text)
    assert "it ends 20 of 20 normal deals and 20 of 20 hard deals exactly as the silent strategy does" in text
    assert "Race the record" in text


def test_the_talking_part_alone_writes_its_results_and_chart(tmp_path):
    """``python -m cardzoo.evaluation.report.sections.summit_rush_talk`` plays the silent games too and writes the
    part as report files: rows, the command, the chart; the muted learned team's games carry no message."""
    import json

    from cardzoo.evaluation.report.sections.summit_rush_talk import main

    argv = ["--games", "10", "--workers", "1", "--out", str(tmp_path)]
    main(argv)
    results = json.loads((tmp_path / "results.json").read_text())
    module = "cardzoo.evaluation.report.sections.summit_rush_talk"
    assert results["meta"]["command"] == f"python -m {module} " + " ".join(argv)
    rows = {(r["setting"], r["source"]): r for r in results["rows"]}
    assert rows["hard", "simple"]["note"] == "silent game" and rows["normal", "learned"]["games"] == 10
    assert rows["normal", "learned_talk_muted"]["note"] == "talking game, messages muted"
    assert ("hard", "learned_talk") not in rows  # no policy for Hard's observation
    text = (tmp_path / "summary.md").read_text()
    assert re.search(r"\| normal \(60 ticks\) \| learned with the message channel, muted \| [^|]+ \| [\d.]+ \| "
                     r"[\d.]+ \| [\d.]+ \| 0\.0 \|", text)
    assert re.search(r"\| normal \(60 ticks\) \| learned with the message channel \| [^|]+ \| [\d.]+ \| "
                     r"[\d.]+ \| [\d.]+ \| [1-9][\d.]* \|", text)
    assert "learned with the message channel minus learned with the message channel, muted" in text
    assert "No policy trained in talking games is shipped for: hard." in text
    assert (tmp_path / "summit_rush_talk.png").stat().st_size > 10_000 and (tmp_path / "summit_rush_talk.svg").exists()
    assert "![summit_rush](summit_rush_talk.png)" in text
