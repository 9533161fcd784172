"""Summit Rush's message channel: on by default, heard from the next tick, cheap talk, recorded and replayed, and
nothing of the hidden cards in what players hear; the silent variant keeps the old spaces and games."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pettingzoo.test import api_test, parallel_api_test, parallel_seed_test

from cardzoo.envs import OptionError, replay, summit_rush_v0
from cardzoo.envs.summit_rush import rules
from cardzoo.envs.summit_rush.observer import HEARD_AGES

from .api_warnings import api_warnings
from .hidden_worlds import summit_rush_resample_hidden as resample_hidden

N_MESSAGES = rules.N_MESSAGES


def test_vocabulary_is_the_documents_calls():
    assert N_MESSAGES == 1 + 1 + 1 + 13 + 13 + 28
    m = rules.MESSAGES
    assert m[rules.SAY_TURN] == "I'll turn" and m[rules.SAY_DONT_TURN] == "don't turn"
    assert m[rules.SAY_NEED + 9] == "I need a Jack" and m[rules.SAY_ON_PILE + 6] == "8 on my pile"
    assert m[rules.SAY_TAKING + 27] == "I'm taking position 27"


def test_talk_is_the_default_and_silent_keeps_the_old_spaces():
    talking, silent = summit_rush_v0.parallel_env(), summit_rush_v0.parallel_env(silent=True)
    assert talking.config.talk and not silent.config.talk
    assert silent.action_space("player_0").n == 58
    assert silent.observation_space("player_0")["observation"].shape == (732,)
    assert talking.action_space("player_0").n == 58 * N_MESSAGES
    assert summit_rush_v0.parallel_env(talk=False).observer.layout.table() == silent.observer.layout.table()
    with pytest.raises(OptionError, match="contradicts"):
        summit_rush_v0.parallel_env(talk=True, silent=True)
    with pytest.raises(OptionError, match="talk must be True or False"):
        summit_rush_v0.parallel_env(talk="yes")


def test_pettingzoo_tests_pass_with_talking_on():
    assert api_warnings(lambda: parallel_api_test(summit_rush_v0.parallel_env(), num_cycles=100)) == []
    assert api_warnings(lambda: parallel_api_test(summit_rush_v0.parallel_env(players=3), num_cycles=50)) == []
    assert api_warnings(lambda: api_test(summit_rush_v0.env(), num_cycles=100)) == []
    assert api_warnings(lambda: parallel_seed_test(lambda: summit_rush_v0.parallel_env(illegal_action="wait"),
                                                   num_cycles=50)) == []


def _heard(env, obs_vector) -> list:
    return env.describe(obs_vector)["heard"]


def test_a_message_is_heard_from_the_next_tick_by_everyone():
    env = summit_rush_v0.parallel_env()
    obs, _ = env.reset(seed=3)
    assert _heard(env, obs["player_1"]["observation"]) == [None, None]
    need_jack = rules.SAY_NEED + 9
    obs, *_ = env.step({"player_0": need_jack * env.n_moves + env.WAIT, "player_1": env.WAIT})
    for agent in env.agents:  # both hear it (the speaker too), said during the last tick
        assert _heard(env, obs[agent]["observation"]) == [("I need a Jack", 0), None]
    for age in range(1, HEARD_AGES + 3):  # it stays the last message, growing older
        obs, *_ = env.step({a: env.WAIT for a in env.agents})
        assert _heard(env, obs["player_1"]["observation"])[0] == ("I need a Jack", min(age, HEARD_AGES - 1))
    obs, *_ = env.step({"player_0": rules.SAY_TURN * env.n_moves + env.WAIT,
                        "player_1": (rules.SAY_TAKING + 20) * env.n_moves + env.WAIT})
    assert _heard(env, obs["player_0"]["observation"]) == [("I'll turn", 0), ("I'm taking position 20", 0)]


def test_messages_are_cheap_talk_and_never_illegal():
    """With the same moves, any messages give the same cards, piles and outcome; every message goes with every legal
    move in the mask."""
    silent, talking = summit_rush_v0.parallel_env(silent=True), summit_rush_v0.parallel_env()
    rng = np.random.default_rng(0)
    obs_s, _ = silent.reset(seed=8)
    obs_t, _ = talking.reset(seed=8)
    n = silent.n_moves
    while silent.agents:
        for agent in talking.agents:
            moves = obs_s[agent]["action_mask"]
            assert np.array_equal(obs_t[agent]["action_mask"], np.tile(moves, N_MESSAGES))
            heard = talking.observer.layout["heard"].start
            tail = talking.observer.layout["heard_ago"].stop
            silent_part = np.concatenate([obs_t[agent]["observation"][:heard], obs_t[agent]["observation"][tail:]])
            assert np.array_equal(silent_part, obs_s[agent]["observation"])
        moves = {a: int(rng.choice(np.flatnonzero(obs_s[a]["action_mask"]))) for a in silent.agents}
        said = {a: int(rng.integers(N_MESSAGES)) for a in silent.agents}
        obs_s, _, _, _, info_s = silent.step(moves)
        obs_t, _, _, _, info_t = talking.step({a: said[a] * n + moves[a] for a in moves})
        assert talking.game.piles == silent.game.piles and talking.game.present == silent.game.present
    assert info_t["player_0"]["outcome"] == info_s["player_0"]["outcome"]
    assert {k: v for k, v in info_t["player_0"].items() if k != "messages"} == info_s["player_0"]


def test_a_silent_players_actions_mean_the_same_in_a_talking_game():
    """Message 0 is "nothing": its actions are the moves themselves, so a talking game whose players say nothing
    plays exactly the silent game, and silent records replay in a silent env as before."""
    silent, talking = summit_rush_v0.parallel_env(talk=False), summit_rush_v0.parallel_env()
    rng = np.random.default_rng(3)
    obs, _ = silent.reset(seed=5)
    talking.reset(seed=5)
    while silent.agents:
        actions = {a: int(rng.choice(np.flatnonzero(obs[a]["action_mask"]))) for a in silent.agents}
        obs, *_ = silent.step(actions)
        talking.step(actions)
    assert talking.game.piles == silent.game.piles and talking.outcome_info["outcome"] == silent.outcome_info["outcome"]
    assert talking.outcome_info["messages"] == 0
    assert replay(silent.game_record()).game.piles == silent.game.piles


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), policy=st.integers(0, 2**32 - 1), players=st.sampled_from([2, 3]))
def test_players_hear_only_what_was_said_and_replays_say_it_again(seed, policy, players):
    """The heard pieces are exactly each player's last message and its age; resampling the hidden cards changes no
    observation (the channel carries nothing of them); the record replays every message."""
    env = summit_rush_v0.parallel_env(players=players)
    rng = np.random.default_rng(policy)
    obs, _ = env.reset(seed=seed)
    last: list = [None] * players
    tick = 0
    while env.agents:
        s = env.game
        other = resample_hidden(s, rng)
        for seat, agent in enumerate(env.possible_agents):
            assert np.array_equal(env.observer.observe(other, seat), obs[agent]["observation"])
            expected = [None if m is None else (rules.MESSAGES[m[0]], min(tick - 1 - m[1], HEARD_AGES - 1))
                        for m in last]
            assert _heard(env, obs[agent]["observation"]) == expected
        actions = {}
        for seat, agent in enumerate(env.agents):
            message = int(rng.integers(N_MESSAGES)) if rng.random() < 0.5 else 0
            move = int(rng.choice(np.flatnonzero(obs[agent]["action_mask"][:env.n_moves])))
            actions[agent] = message * env.n_moves + move
            if message:
                last[seat] = (message, tick)
        obs, *_ = env.step(actions)
        tick += 1
    again = replay(env.game_record())
    assert again.game.said == env.game.said and again.outcome_info == env.outcome_info


def test_action_names_and_illegal_messages_name_the_move():
    env = summit_rush_v0.parallel_env(illegal_action="raise")
    env.reset(seed=1)
    action = rules.SAY_DONT_TURN * env.n_moves + env.WAIT
    assert env.action_name(action) == 'wait, saying "don\'t turn"'
    face_down = rules.SAY_TURN * env.n_moves + 0  # position 0 is face down
    with pytest.raises(Exception, match="position 0 is face down.*every message goes with any legal move"):
        env.step({"player_0": face_down, "player_1": env.WAIT})
