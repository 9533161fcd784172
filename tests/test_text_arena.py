"""The TextArena-compatible env (cardzoo.envs.text_arena) driven by the real textarena package, and the plain text
loop for ``__call__(str) -> str`` agents (cardzoo.agents.llm.text_loop)."""

from __future__ import annotations

import re

import pytest

from cardzoo.agents.llm.seat import LanguageSeat
from cardzoo.agents.llm.text_loop import CallableChat, play_text_game
from cardzoo.agents.loops import play_env_game
from cardzoo.envs.common.errors import OptionError
from cardzoo.envs.common.record import make_env
from cardzoo.envs.text import text_view
from cardzoo.envs.text_arena import TextArenaEnv, ids

ta = pytest.importorskip("textarena")

GAMES = {"Cardzoo-RopeTeam-v0": "rope_team_v0", "Cardzoo-RookForTwo-v0": "rook_v0",
         "Cardzoo-SummitRush-v0-hard": "summit_rush_v0"}


def first_legal(observation: str) -> str:
    """A text agent: the first listed legal move of the last table shown."""
    listed = re.findall(r"Legal moves: 1\) (.+?)(?:  \d+\)|$)", observation, re.MULTILINE)
    return listed[-1]


@pytest.mark.parametrize("env_id", list(GAMES))
def test_textarena_plays_a_whole_game_of_each(env_id):
    env = ta.make(env_id)  # the registered env, wrapped by textarena's LLMObservationWrapper
    assert isinstance(env.unwrapped if hasattr(env, "unwrapped") else env.env, ta.Env)
    env.reset(num_players=2, seed=4)
    done, turns, seen = False, 0, {0: "", 1: ""}
    while not done:
        pid, observation = env.get_observation()
        assert isinstance(observation, str) and "[GAME]" in observation
        seen[pid] = observation
        done, info = env.step(first_legal(observation))
        turns += 1
    rewards, game_info = env.close()
    assert set(rewards) == {0, 1} and all(isinstance(r, float) for r in rewards.values())
    assert sum(game_info[p]["turn_count"] for p in (0, 1)) == turns
    assert all(game_info[p]["invalid_attempts"] == 0 and not game_info[p]["invalid_move"] for p in (0, 1))
    # the same text agent seated as a cardzoo agent in the evaluation's loop plays the same game
    inner = env.env
    pz = make_env(GAMES[env_id], illegal_action="raise", **inner.options)
    agents = [LanguageSeat(CallableChat(first_legal), pz, seed=s) for s in (0, 1)]
    record = play_env_game(pz, agents, seed=4)
    assert record["outcome"] == inner.final_info["outcome"]
    assert record["returns"] == [rewards[0], rewards[1]]
    assert sum(a.summary()["decisions"] for a in agents) == turns


def test_every_variant_is_registered_with_its_options():
    registered = ids()
    assert registered["Cardzoo-RopeTeam-v0-hard"] == ("rope_team", {"level": "hard"})
    assert registered["Cardzoo-RookForTwo-v0"] == ("rook", {"rounds": 1})
    assert registered["Cardzoo-SummitRush-v0-hard-silent"] == ("summit_rush", {"level": "hard", "talk": False})
    for env_id in registered:
        assert env_id in ta.envs.registration.ENV_REGISTRY and f"{env_id}-raw" in ta.envs.registration.ENV_REGISTRY
    raw = ta.make("Cardzoo-RopeTeam-v0-hard-raw")
    raw.reset(num_players=2, seed=0)
    pid, messages = raw.get_observation()
    kinds = [kind for _, _, kind in messages]
    assert kinds == [ta.ObservationType.PROMPT, ta.ObservationType.GAME_BOARD]
    assert raw.options == {"level": "hard"}
    assert messages[0][1].endswith(text_view("rope_team", {"level": "hard"}).rules().strip())


def test_invalid_replies_get_the_reason_then_the_seeded_default():
    env = TextArenaEnv("rope_team", max_retries=2)
    env.reset(num_players=2, seed=9)
    pid, _ = env.get_observation()
    for tries_left in (2, 1):
        done, info = env.step("the ace of nothing")
        assert not done and "names no move" in info["invalid_move"]
        again, messages = env.get_observation()
        assert again == pid  # the same player is asked again
        assert messages[-1][2] == ta.ObservationType.GAME_ADMIN and f"({tries_left} tries left)" in messages[-1][1]
    done, info = env.step("still nothing")
    assert env.attempts[-1]["default"] and env.state.game_info[pid]["defaults"] == 1
    assert env.state.game_info[pid]["invalid_attempts"] == 3 and env.state.current_player_id != pid
    twin = TextArenaEnv("rope_team", max_retries=0)
    twin.reset(num_players=2, seed=9)
    twin.step("nothing")
    assert twin.attempts[-1]["default"] == env.attempts[-1]["default"]  # seeded by the game's seed


def test_a_reply_reaches_only_its_player_and_is_bounded():
    env = TextArenaEnv("rope_team", max_retries=1)
    env.reset(num_players=2, seed=1)
    pid, _ = env.get_observation()
    env.step("<b>partner: I hold the AS</b>\x1b[31m" + "x" * 5000)
    other = env.state.observations[1 - pid]
    assert not any("partner: I hold" in text for _, text, _ in other)  # no table talk through replies
    kept = env.attempts[-1]["reply"]
    assert "\x1b" not in kept and "\\u001b" in kept and kept.endswith("more characters]")
    assert "4000" in env.attempts[-1]["error"]  # the view refuses a huge reply unread


def test_summit_rush_is_turn_paced():
    env = TextArenaEnv("summit_rush", options={"level": "hard"})
    env.reset(num_players=2, seed=2)
    game = env.env.unwrapped.game
    order, ticks = [], []
    for _ in range(4):
        pid, _ = env.get_observation()
        order.append(pid)
        ticks.append(game.tick)
        env.step("wait")
    assert order == [0, 1, 0, 1]  # every seat answers each tick, in seat order
    assert ticks == [0, 0, 1, 1] and game.tick == 2  # the tick is played once every seat has answered


def test_bad_calls_are_refused():
    with pytest.raises(OptionError, match="has 2 players, not 3"):
        TextArenaEnv("rope_team").reset(num_players=3)
    with pytest.raises(OptionError, match="reset"):
        TextArenaEnv("rope_team").step("QS")
    with pytest.raises(OptionError, match="max_retries"):
        TextArenaEnv("rope_team", max_retries=-1)
    with pytest.raises(OptionError):
        TextArenaEnv("rope_team", options={"level": "impossible"})


@pytest.mark.parametrize("game", ["rope_team", "rook", "summit_rush"])
def test_the_plain_loop_plays_callables(game):
    calls = []

    def player(text: str) -> str:
        calls.append(text)
        return first_legal(text) if "Legal moves" in text else "wait"

    result = play_text_game(game, [player, player], seed=5, options={"rounds": 1} if game == "rook" else None)
    assert result["info"]["outcome"] and len(result["attempts"]) == len(calls)
    assert all(a["error"] is None for a in result["attempts"])
    assert calls[0].startswith("[GAME] You are Player 0")


def test_a_callable_plays_as_a_cardzoo_agent():
    env = make_env("rope_team_v0", illegal_action="raise")
    seen = []

    def shy(text: str) -> str:
        seen.append(text)
        return "I'd rather not say" if len(seen) % 2 else first_legal(text)

    agents = [LanguageSeat(CallableChat(shy), env, seed=s, max_retries=1) for s in (0, 1)]
    record = play_env_game(env, agents, seed=0)
    assert record["outcome"]
    for agent in agents:
        assert agent.summary()["defaults"] == 0 and agent.summary()["invalid"] >= 1
    assert "[user]" in seen[1] and "That is not a legal move" in seen[1]


def test_a_callable_that_raises_is_a_failed_attempt():
    def broken(text):
        raise RuntimeError("boom")

    env = make_env("rope_team_v0", illegal_action="raise")
    env.reset(seed=0)
    agent = LanguageSeat(CallableChat(broken), env, seed=0)
    obs = env.observe(env.agent_selection)
    action = agent.act(obs["observation"], obs["action_mask"])
    assert obs["action_mask"][action]
    assert agent.decisions[0]["default"] == "no reply: the agent raised RuntimeError: boom"
