"""The Rook for Two PettingZoo environment: API conformance, observations, errors, seeding, replay, rewards, render."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from pettingzoo.test import api_test, render_test, seed_test

from cardzoo.envs import (
    DeckError,
    GameOverError,
    IllegalActionError,
    IllegalActionWarning,
    OptionError,
    replay,
    rook_v0,
    save,
)
from cardzoo.envs.common.options import UnknownResetOptionWarning
from cardzoo.envs.rook import rules
from cardzoo.envs.rook.observer import LAYOUT, describe
from cardzoo.envs.rook.rules import PASS, TAKE_UP, TRUMP0, bid_action

from .api_warnings import api_warnings
from .test_rook_rules import build_deck, c


def play_random(env, seed: int, policy_seed: int = 0, max_steps: int = 20_000, options=None):
    """Random legal play to the end; returns the list of (agent, reward, info) seen at the end, and steps."""
    rng = np.random.default_rng(policy_seed)
    env.reset(seed=seed, options=options)
    ends, steps = [], 0
    for agent in env.agent_iter(max_steps):
        obs, reward, term, trunc, info = env.last()
        if term or trunc:
            ends.append((agent, reward, info))
            env.step(None)
        else:
            env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
            steps += 1
    return ends, steps


def test_pettingzoo_api():
    assert api_warnings(lambda: api_test(rook_v0.env(), num_cycles=400)) == []
    assert api_warnings(lambda: api_test(rook_v0.env(rounds=1), num_cycles=200)) == []


def test_pettingzoo_seed():
    assert api_warnings(lambda: seed_test(rook_v0.env, num_cycles=300)) == []


def test_pettingzoo_render():
    assert api_warnings(lambda: render_test(rook_v0.env)) == []


def test_spaces_and_docstring_table():
    env = rook_v0.raw_env()
    space = env.observation_space("player_0")
    assert space["observation"].shape == (LAYOUT.size,) == (662,) and space["action_mask"].shape == (79,)
    assert env.action_space("player_1").n == rules.N_ACTIONS == 79
    for line in LAYOUT.table().splitlines():
        assert line in env.__doc__, f"env docstring is missing the slice line {line!r}"
    for name in ("target_score", "rounds", "illegal_action", "render_viewer", "deck", "dealer", "totals"):
        assert name in env.__doc__


def test_action_ids_are_stable():
    assert (rules.BID0, rules.PASS, rules.TRUMP0, rules.TAKE_UP, rules.TAKE_HIDDEN) == (53, 72, 73, 77, 78)
    env = rook_v0.raw_env()
    env.reset(seed=0)
    names = [env.action_name(a) for a in (52, 53, 71, 72, 73, 76, 77, 78)]
    assert names == ["play Rook", "bid 50", "bid 140", "pass", "trumps clubs", "trumps spades",
                     "take the face-up card", "take the hidden card"]


def test_mask_follows_the_phase():
    env = rook_v0.raw_env()
    env.reset(seed=2)
    mask = env.observe("player_0")["action_mask"]
    assert mask.dtype == np.int8 and list(np.flatnonzero(mask)) == list(range(53, 72))
    assert env.observe("player_1")["action_mask"].sum() == 0
    env.step(bid_action(50))
    assert list(np.flatnonzero(env.observe("player_1")["action_mask"])) == [*range(54, 72), PASS]
    env.step(PASS)
    assert env.agent_selection == "player_0"
    assert list(np.flatnonzero(env.observe("player_0")["action_mask"])) == [73, 74, 75, 76]
    env.step(TRUMP0 + 2)
    discard = np.flatnonzero(env.observe("player_0")["action_mask"])
    assert len(discard) and all(a < 53 and rules.POINTS[a] == 0 for a in discard)


def test_observation_is_seat_relative_and_shows_bidding():
    env = rook_v0.raw_env()
    env.reset(seed=3)
    env.step(bid_action(70))
    env.step(bid_action(85))
    a, b = (describe(env.observe(p)["observation"]) for p in ("player_0", "player_1"))
    assert a["bids_self"] == [70] and a["bids_opp"] == [85] and b["bids_self"] == [85] and b["bids_opp"] == [70]
    assert a["high_bid"] == b["high_bid"] == 85 and a["phase"] == b["phase"] == "bid"
    assert a["self_to_move"] and not b["self_to_move"] and b["self_dealt"] and not a["self_dealt"]
    env.step(PASS)
    a, b = (describe(env.observe(p)["observation"]) for p in ("player_0", "player_1"))
    assert a["passed_self"] and b["passed_opp"] and a["bidder"] == "opp" and b["bidder"] == "self"


def test_nest_and_discards_only_for_bidder_after_trumps():
    deck = build_deck(nest=["4D", "6D", "XR"], pile=["9S", "JS"])
    env = rook_v0.raw_env()
    env.reset(seed=0, options={"deck": deck})
    env.step(bid_action(50))
    env.step(PASS)
    assert describe(env.observe("player_0")["observation"])["nest"] == []  # trumps first, as written
    env.step(TRUMP0 + 3)
    bidder, other = (describe(env.observe(p)["observation"]) for p in ("player_0", "player_1"))
    assert bidder["nest"] == ["4D", "6D", "XR"] and other["nest"] == [] and "XR" in bidder["hand"]
    for card in ("4D", "6D"):
        env.step(c(card))
    env.step(int(np.flatnonzero(env.observe("player_0")["action_mask"])[0]))
    bidder, other = (describe(env.observe(p)["observation"]) for p in ("player_0", "player_1"))
    assert len(bidder["discards"]) == 3 and "4D" in bidder["discards"] and other["discards"] == []
    assert bidder["face_up"] == other["face_up"] == "9S" and bidder["phase"] == "play"
    assert bidder["trumps"] == other["trumps"] == "spades"


def test_known_cards_from_the_draw():
    deck = build_deck(nest=["4D", "6D", "7D"], hand0=["KS"], hand1=["4S"], pile=["9H", "JC", "QD"])
    env = rook_v0.raw_env()
    env.reset(seed=0, options={"deck": deck})
    for a in (bid_action(50), PASS, TRUMP0, c("4D"), c("6D"), c("7D"), c("KS"), c("4S")):
        env.step(a)
    assert env.agent_selection == "player_0"
    env.step(TAKE_UP)
    a, b = (describe(env.observe(p)["observation"]) for p in ("player_0", "player_1"))
    assert b["opp_known"] == ["9H"] and a["self_known"] == ["9H"] and a["opp_known"] == []
    assert "JC" not in str(a) and a["face_up"] == "QD" and a["tricks_self"] == 1 and b["tricks_opp"] == 1


def test_no_hidden_card_in_any_observation():
    env = rook_v0.raw_env()
    env.reset(seed=11)
    rng = np.random.default_rng(0)
    for _ in range(120):
        s = env.game
        for seat, agent in enumerate(env.possible_agents):
            view = describe(env.observe(agent)["observation"])
            hidden = (s.hands[1 - seat] & ~s.known[1 - seat]) | s.pile_mask()
            if s.bidder != seat or s.phase in rules.BID_TRUMP_PHASES:
                hidden |= s.nest_left() | s.discards
            shown = set().union(*(v for v in view.values() if isinstance(v, list) and v and isinstance(v[0], str)))
            shown |= {view["face_up"], view["led"]} - {None}
            assert not {rules.card_name(x) for x in range(53) if hidden >> x & 1} & shown
        env.step(int(rng.choice(np.flatnonzero(env.observe(env.agent_selection)["action_mask"]))))


def test_illegal_action_raises_names_alternatives_and_changes_nothing():
    env = rook_v0.env(illegal_action="raise")
    env.reset(seed=0)
    record = env.unwrapped.game_record()
    obs = env.observe("player_0")["observation"].copy()
    with pytest.raises(IllegalActionError, match=r"opening bid is compulsory.*Legal actions: 53 \(bid 50\)"):
        env.step(PASS)
    with pytest.raises(IllegalActionError, match="bid phase"):
        env.step(c("AS"))
    for bad in (79, -1, 3.0, "AS", True, None):
        with pytest.raises(IllegalActionError):
            env.step(bad)
    assert env.unwrapped.game_record() == record and env.agent_selection == "player_0"
    assert np.array_equal(env.observe("player_0")["observation"], obs)
    env.step(bid_action(60))
    with pytest.raises(IllegalActionError, match="higher than 60"):
        env.step(bid_action(60))


def test_illegal_card_messages():
    deck = build_deck(nest=["4D", "6D", "7D"], hand0=["KS", "5H"], hand1=["4S", "XR"])
    env = rook_v0.env(illegal_action="raise")
    env.reset(seed=0, options={"deck": deck})
    for a in (bid_action(50), PASS, TRUMP0 + 2):
        env.step(a)
    with pytest.raises(IllegalActionError, match="point cards"):
        env.step(c("5H"))
    with pytest.raises(IllegalActionError, match="not in the Rook deck"):
        env.step(0)  # the 2 of clubs
    for a in (c("4D"), c("6D"), c("7D"), c("KS")):
        env.step(a)
    with pytest.raises(IllegalActionError, match=r"must follow spades.*play 4♠"):
        env.step(rules.ROOK)
    with pytest.raises(IllegalActionError, match="not in their hand"):
        env.step(c("AS"))


@pytest.mark.parametrize("rounds,penalty", [(None, -1.0), (1, -280.0)])
def test_illegal_move_by_default_ends_game_with_penalty_to_the_mover(rounds, penalty):
    env = rook_v0.env(rounds=rounds)
    env.reset(seed=0)
    with pytest.warns(IllegalActionWarning, match="opening bid is compulsory"):
        env.step(PASS)  # illegal: the opening bid is compulsory
    assert env.unwrapped.rewards == {"player_0": penalty, "player_1": 0.0}
    assert all(env.unwrapped.terminations.values())
    assert env.unwrapped.infos["player_0"]["outcome"] == "illegal"
    assert env.unwrapped.game_record()["actions"] == [PASS]


def test_step_after_end_raises():
    env = rook_v0.env(rounds=1)
    play_random(env, seed=1)
    with pytest.raises(GameOverError):
        env.step(0)
    raw = rook_v0.raw_env(rounds=1)
    play_random(raw, seed=1)
    with pytest.raises(GameOverError):
        raw.step(53)


@pytest.mark.parametrize("deck,match", [
    (["AS"] * 45, "repeats"),
    (build_deck()[:-1], "45 cards"),
    (build_deck()[:-1] + ["2C"], "unknown card '2C'.*'XR'"),
    ("AS KS", "list"),
    (build_deck()[:-1] + [7], "must be a string"),
])
def test_bad_deck_raises_and_keeps_previous_game(deck, match):
    env = rook_v0.raw_env()
    env.reset(seed=4)
    env.step(bid_action(55))
    before = env.game_record()
    with pytest.raises(DeckError, match=match):
        env.reset(options={"deck": deck})
    assert env.game_record() == before and env.game.high_bid == 55


def test_bad_options():
    with pytest.raises(OptionError, match="did you mean 'target_score'"):
        rook_v0.env(target_scor=300)
    with pytest.raises(OptionError, match="target_score"):
        rook_v0.env(target_score=10)
    with pytest.raises(OptionError, match="rounds"):
        rook_v0.env(rounds=0)
    with pytest.raises(OptionError, match="illegal_action"):
        rook_v0.env(illegal_action="ignore")
    env = rook_v0.raw_env()
    with pytest.raises(OptionError, match="dealer"):
        env.reset(options={"dealer": "player_2"})
    with pytest.raises(OptionError, match="totals"):
        env.reset(options={"totals": [500, 0]})
    with pytest.raises(OptionError, match="multiples of 5"):
        env.reset(options={"totals": [3, 0]})
    with pytest.raises(OptionError, match="did you mean 'deck'"):
        env.reset(seed=0, options={"dek": []})
    with pytest.warns(UnknownResetOptionWarning, match="probe"):
        env.reset(seed=0, options={"options": 1})


def test_deck_option_maps_to_nest_hands_and_pile():
    deck = build_deck(nest=["XR", "AH", "4C"], hand0=["KS"], hand1=["JD"], pile=["9C", "8C"])
    env = rook_v0.raw_env()
    env.reset(seed=0, options={"deck": deck, "dealer": "player_0"})
    s = env.game
    assert describe(env.observe("player_0")["observation"])["hand"] == sorted(deck[3:14], key=c)
    assert describe(env.observe("player_1")["observation"])["hand"] == sorted(deck[14:25], key=c)
    assert s.nest == sum(1 << c(n) for n in deck[:3]) and s.pile[0] == c("9C")
    assert env.agent_selection == "player_1"  # player_0 dealt, so player_1 opens


def test_same_seed_same_game_and_later_rounds_from_seed():
    deck = build_deck()
    a, b = rook_v0.raw_env(), rook_v0.raw_env()
    ends_a, n_a = play_random(a, seed=9, options={"deck": deck})
    ends_b, n_b = play_random(b, seed=9, options={"deck": deck})
    assert n_a == n_b and ends_a[0][2]["history"] == ends_b[0][2]["history"]
    c_env = rook_v0.raw_env()
    ends_c, _ = play_random(c_env, seed=10, options={"deck": deck})
    assert ends_c[0][2]["history"][0] != ends_a[0][2]["history"][0] or ends_c[0][2]["history"][1:] != \
        ends_a[0][2]["history"][1:]


SUBPROCESS = """
import numpy as np, json
from cardzoo.envs import rook_v0
env = rook_v0.raw_env(rounds=2)
env.reset(seed=123)
rng = np.random.default_rng(0)
while not any(env.terminations.values()):
    env.step(int(rng.choice(np.flatnonzero(env.observe(env.agent_selection)["action_mask"]))))
print(json.dumps([env.game_record()["actions"], env.game.totals]))
"""


def test_same_seed_same_game_across_processes():
    outs = [subprocess.run([sys.executable, "-c", SUBPROCESS], capture_output=True, text=True, check=True,
                           env={"PYTHONHASHSEED": str(h), "PATH": ""}).stdout for h in (1, 2)]
    assert outs[0] == outs[1] and len(json.loads(outs[0])[0]) > 50


def test_game_record_replays_to_identical_state(tmp_path):
    env = rook_v0.env(rounds=3)
    env.reset(seed=21, options={"dealer": "player_0"})
    rng = np.random.default_rng(3)
    for _ in range(150):
        env.step(int(rng.choice(np.flatnonzero(env.observe(env.agent_selection)["action_mask"]))))
    record = env.unwrapped.game_record()
    assert json.loads(json.dumps(record)) == record and record["env"] == "rook_v0"
    path = tmp_path / "game.json"
    save(env, path)
    for again in (replay(record), replay(path)):
        assert again.agent_selection == env.agent_selection
        for agent in env.possible_agents:
            for key in ("observation", "action_mask"):
                assert np.array_equal(again.observe(agent)[key], env.observe(agent)[key])
        assert again.unwrapped.game.totals == env.unwrapped.game.totals


def test_single_round_reward_is_point_difference():
    env = rook_v0.raw_env(rounds=1)
    ends, _ = play_random(env, seed=5)
    (_, r0, info), (_, r1, _) = ends
    assert r0 == -r1 != 0 or r0 == r1 == 0
    score = info["history"][0]["score"]
    assert r0 in (score[0] - score[1], score[1] - score[0])  # the first agent to leave may be either seat
    assert info["outcome"] == "rounds_done" and info["rounds"] == 1


def test_whole_game_reward_plus_minus_one_and_info():
    env = rook_v0.raw_env()
    rng = np.random.default_rng(0)
    env.reset(seed=6)
    totals_seen = []
    rewards = {a: 0.0 for a in env.possible_agents}
    while env.agents and not all(env.terminations.values()):
        env.step(int(rng.choice(np.flatnonzero(env.observe(env.agent_selection)["action_mask"]))))
        for a in env.possible_agents:
            rewards[a] += env.rewards[a]
        if "last_round" in env.infos["player_0"]:
            totals_seen.append(tuple(env.infos["player_0"]["last_round"]["totals"]))
    info = env.infos["player_0"]
    assert info["outcome"] in ("win", "bidder_fell") and info["winner"] in env.possible_agents
    assert rewards[info["winner"]] == 1.0 and sum(rewards.values()) == 0.0
    assert info["rounds"] == len(info["history"]) > 1 and info["totals"] == info["history"][-1]["totals"]
    assert set(info["history"][0]) >= {"bids", "bidder", "bid", "trumps", "points", "made", "score", "totals"}
    assert tuple(info["history"][0]["totals"]) in totals_seen


def test_totals_reset_option_and_game_end_through_env():
    wins = 0
    for seed in range(12):
        env = rook_v0.raw_env()
        env.reset(seed=seed, options={"totals": [495, -495]})
        obs = describe(env.observe("player_0")["observation"])
        assert obs["total_self"] == 495 and obs["total_opp"] == -495
        rng = np.random.default_rng(seed)
        while env.game.round_no == 1 and not env.game.done:
            env.step(int(rng.choice(np.flatnonzero(env.observe(env.agent_selection)["action_mask"]))))
        first = env.game.history[0]
        reached = max(first["totals"]) >= 500 or first["totals"][first["bidder"]] <= -500
        assert env.game.done == reached
        if reached:
            info = env.infos["player_0"]
            winner = info["winner"]
            assert env.rewards[winner] == 1.0 and sum(env.rewards.values()) == 0.0
            wins += info["outcome"] == "win"
    assert wins > 0


def test_render_text_and_rgb():
    deck = build_deck(nest=["4D", "6D", "7D"], hand0=["XR"], pile=["9H", "JC"])
    env = rook_v0.raw_env(render_mode="ansi", render_viewer="player_0")
    env.reset(seed=0, options={"deck": deck})
    for a in (bid_action(50), PASS, TRUMP0 + 2, c("4D"), c("6D"), c("7D")):
        env.step(a)
    text = env.render()
    assert "Rook" in text and "trumps: ♥ hearts" in text and "face-up card: 9♥" in text
    assert "nest: 4♦ 6♦ 7♦" in text and "player_0 to play" in text
    rgb = rook_v0.raw_env(render_mode="rgb_array")
    rgb.reset(seed=0, options={"deck": deck})
    frame = rgb.render()
    assert frame.dtype == np.uint8 and frame.shape == (300, 420, 3) and len(np.unique(frame.reshape(-1, 3), 0)) > 3
    with pytest.raises(OptionError, match="render_mode"):
        rook_v0.raw_env().render()


def test_bench_entry_follows_rope_team():
    from cardzoo.evaluation.benchmarks.envs import BENCHES

    names = [b.name for b in BENCHES]
    assert names.index("rook_v0") == names.index("rope_team_v0") + 1
    bench = BENCHES[names.index("rook_v0")]
    assert (bench.module, bench.factory, bench.loop.__name__) == ("cardzoo.envs.rook_v0", "env", "aec_loop")


def test_env_mask_equals_rules_legal_actions_through_a_game():
    env = rook_v0.raw_env(rounds=2)
    env.reset(seed=17)
    rng = np.random.default_rng(17)
    steps = 0
    while not all(env.terminations.values()):
        seat = env.possible_agents.index(env.agent_selection)
        mask = env.observe(env.agent_selection)["action_mask"]
        legal = rules.legal_actions(env.game)
        assert [int(a) for a in np.flatnonzero(mask)] == [a for a in range(79) if legal >> a & 1]
        assert not env.observe(env.possible_agents[1 - seat])["action_mask"].any()
        env.step(int(rng.choice(np.flatnonzero(mask))))
        steps += 1
    assert steps > 100 and not env.observe("player_0")["action_mask"].any()


def test_step_before_reset_raises():
    env = rook_v0.env()
    with pytest.raises(GameOverError, match="reset"):
        env.step(53)


def test_text_render_names_the_rook_in_a_trick():
    from cardzoo.envs.common.render import trick_line
    from cardzoo.envs.rook import rules

    assert "Rook" in trick_line(0, rules.ROOK, None, rules.card_pretty)
    assert "won" in trick_line(0, None, (1, rules.ROOK, 5, 1), rules.card_pretty)
