"""Every registry agent plays every level and variant of every game (issue 23, item 6), and a learned agent says
which policy -- or which fallback -- played each setting.

The settings come from the games' own modules: each game's default env, every level in its ``rules.LEVELS`` (for
Summit Rush each player count a level has, 1 being solo, silent and talking), and the options that change what an
agent sees (Summit Rush untimed and without round the corner, Rope Team open hands, Rook single rounds)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from cardzoo.agents.learned import LearnedAgent, shipped_policy
from cardzoo.agents.registry import agent_names, describe, make_agent
from cardzoo.envs import rook_v0, rope_team_v0, summit_rush_v0
from cardzoo.envs.common.errors import OptionError
from cardzoo.envs.rope_team import rules as rope_rules
from cardzoo.envs.summit_rush import rules as summit_rules
from cardzoo.envs.summit_rush.env import make_config
from cardzoo.envs.summit_rush.observer import Observer
from cardzoo.evaluation.matches.runner import Matchup, _Worker

DEFAULT_ENVS = {"rope_team_v0": rope_team_v0.env, "rook_v0": rook_v0.env, "summit_rush_v0": summit_rush_v0.parallel_env}


def settings(game: str) -> list[dict]:
    if game == "summit_rush_v0":
        levels = [{"level": level, "talk": talk, **({"solo": True} if players == 1 else {"players": players})}
                  for level, per_players in summit_rules.LEVELS.items() for players in per_players
                  for talk in (True, False)]
        return levels + [{"time_limit": None}, {"wrap": False}]
    if game == "rope_team_v0":
        return [{"level": level} for level in rope_rules.LEVELS] + [{"open_hands": True}]
    return [{"rounds": 1}]


def _inner(agent):
    return getattr(agent, "agent", agent)  # Muted wraps the agent it silences


@pytest.mark.parametrize("game", sorted(DEFAULT_ENVS))
def test_every_agent_plays_every_level_and_variant_whole_games(game):
    """One strict game (an illegal move raises) per agent and setting through the evaluation runner's loop; every
    policy or fallback a learned agent used is named in its description."""
    for name in agent_names(game):
        text = describe(name, game)
        for i, options in enumerate(settings(game)):
            worker = _Worker(Matchup.of(game, [name], **options))
            record = worker.play(seed=i)
            assert record["outcome"] not in ("illegal", None), (name, options, record)
            for agent in worker.agents:
                chosen = getattr(_inner(agent), "chosen", None)
                if chosen is not None:
                    assert chosen and all(label in text for label in chosen), (name, options, chosen, text)


@pytest.mark.parametrize("game", sorted(DEFAULT_ENVS))
def test_every_agent_plays_the_default_env_object(game):
    """Each game's default env (AEC or parallel as the game is, illegal moves penalised): the agent made from the
    env object itself plays a whole game without a penalty."""
    for name in agent_names(game):
        env = DEFAULT_ENVS[game]()
        agents = {a: make_agent(name, env, seed=k) for k, a in enumerate(env.possible_agents)}
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # an IllegalActionWarning fails the test
            if game == "summit_rush_v0":
                obs, infos = env.reset(seed=5)
                while env.agents:
                    obs, _, _, _, infos = env.step({a: agents[a].act(obs[a]["observation"], obs[a]["action_mask"])
                                                    for a in env.agents})
                outcome = next(iter(infos.values()))["outcome"]
            else:
                env.reset(seed=5)
                for a in env.agent_iter():
                    o, _, term, trunc, info = env.last()
                    env.step(None if term or trunc else agents[a].act(o["observation"], o["action_mask"]))
                outcome = info["outcome"]
        assert outcome != "illegal", (game, name)


def test_learned_names_the_policy_it_plays_in_each_summit_rush_setting():
    expect = {
        (): ("summit_rush_normal_v2 in Normal, 2 players, timed, talking", "saying nothing"),
        (("talk", False),): ("summit_rush_normal_v2 (its own setting", ""),
        (("level", "expert"),): ("summit_rush_hard_v2 in Expert, 2 players, timed, talking", "read as Hard"),
        (("level", "expert"), ("talk", False)): ("summit_rush_hard_v2 in Expert, 2 players, timed, silent",
                                                 "30-tick clock's ticks left on Hard's 40-tick thermometer"),
        (("players", 3),): ("simple agent (fallback, not a trained policy)", ""),
        (("wrap", False),): ("simple agent (fallback, not a trained policy)", ""),
    }
    text = describe("learned", "summit_rush")
    assert "in every other setting: " in text and "no round the corner (wrap=False)" in text
    for options, (label, detail) in expect.items():
        worker = _Worker(Matchup.of("summit_rush_v0", ["learned"], **dict(options)))
        worker.play(seed=3)
        chosen = set().union(*(a.chosen for a in worker.agents))
        assert len(chosen) == 1 and label in chosen.pop() and detail in text, (options, chosen)


def _silent_twin_moves(level: str, seed: int, policy: str) -> int:
    """Play a talking game with ``learned`` and its silent twin (same deal and seat order) in lockstep: at every
    tick and seat, learned's action in the talking game equals the silent policy's on the silent observation (the
    silent observer run on the same state), and its message is nothing. Returns the decisions compared."""
    talking = summit_rush_v0.parallel_env(level=level)
    silent_observer = Observer(make_config(level=level, talk=False))
    learned = make_agent("learned", talking, seed=0)
    own = LearnedAgent(shipped_policy(policy))  # the silent policy alone, no mapping, no fallback
    obs, _ = talking.reset(seed=seed)
    n_moves = talking.n_moves
    compared = 0
    while talking.agents:
        joint = {}
        for seat, a in enumerate(talking.possible_agents):
            action = learned.act(obs[a]["observation"], obs[a]["action_mask"])
            quiet_obs = silent_observer.observe(talking.game, seat)
            quiet_mask = obs[a]["action_mask"][:n_moves]
            if policy == "summit_rush_hard_v2" and level == "expert":  # Expert's clock on Hard's thermometer
                hard = Observer(make_config(level="hard", talk=False))
                split = silent_observer.layout.split(quiet_obs)
                quiet_obs = np.zeros(hard.size, dtype=quiet_obs.dtype)
                for name, piece in split.items():
                    quiet_obs[hard.layout[name].start: hard.layout[name].start + len(piece)] = piece
            assert action == own.act(quiet_obs, quiet_mask), (level, seed, talking.game.tick, a)
            assert action < n_moves  # the message is "say nothing"
            joint[a] = action
            compared += 1
        obs, *_ = talking.step(joint)
    return compared


def test_talking_fallback_plays_exactly_the_silent_policys_moves():
    assert _silent_twin_moves("normal", 11, "summit_rush_normal_v2") > 40
    assert _silent_twin_moves("hard", 12, "summit_rush_hard_v2") > 40
    assert _silent_twin_moves("expert", 13, "summit_rush_hard_v2") > 20


def test_a_policy_file_has_no_fallback_and_says_what_it_cannot_read():
    agent = make_agent(str(shipped_policy("summit_rush_normal_v2")), "summit_rush_v0")
    env = summit_rush_v0.parallel_env(players=3)
    obs, _ = env.reset(seed=0)
    o = obs["player_0"]
    with pytest.raises(OptionError, match=r"no policy for observations of length \d+ with \d+ actions"):
        agent.act(o["observation"], o["action_mask"])
    talking = summit_rush_v0.parallel_env()  # but the talking game it reads, its talk stripped
    obs, _ = talking.reset(seed=0)
    assert agent.act(obs["player_0"]["observation"], obs["player_0"]["action_mask"]) < talking.n_moves


def test_a_policy_file_that_does_not_name_its_levels_plays_its_own_setting(tmp_path):
    """An RLlib export (or a user's file) says no levels in its meta: it plays the setting its lengths fit, as it is."""
    import json

    with np.load(shipped_policy("summit_rush_normal_v2")) as data:
        arrays = {k: data[k] for k in data.files}
    meta = json.loads(str(arrays["meta"]))
    meta.pop("config", None)
    arrays["meta"] = np.array(json.dumps(meta))
    np.savez(tmp_path / "no_levels.npz", **arrays)
    bare, shipped = LearnedAgent(tmp_path / "no_levels.npz"), LearnedAgent(shipped_policy("summit_rush_normal_v2"))
    env = summit_rush_v0.parallel_env(talk=False)
    obs, _ = env.reset(seed=3)
    o = obs["player_0"]
    assert bare.act(o["observation"], o["action_mask"]) == shipped.act(o["observation"], o["action_mask"])
    assert "its own setting" in bare.description


@pytest.mark.parametrize("game", ["rope_team", "rope_team_v0", "summit_rush"])
def test_make_agent_takes_a_game_name_with_or_without_v0(game):
    assert make_agent("random", game) is not None and "learned" in agent_names(game)


def test_make_agent_takes_an_env_object_wrapped_or_not():
    for env in (rope_team_v0.env(), rope_team_v0.raw_env(), summit_rush_v0.parallel_env(), summit_rush_v0.env(),
                rook_v0.env()):
        agent = make_agent("learned", env)
        assert agent.policy.meta["env"] == env.metadata["name"]


@pytest.mark.parametrize("game, message", [
    ("poker", "unknown game 'poker'; games: rook_v0, rope_team_v0, summit_rush_v0 (with or without _v0"),
    ("rope_team_v1", "unknown game 'rope_team_v1'"),
    (42, "expected a game name (rook_v0, rope_team_v0, summit_rush_v0, with or without _v0) or a cardzoo env, got int"),
])
def test_make_agent_refuses_what_is_not_a_game_and_says_what_it_expects(game, message):
    with pytest.raises(OptionError) as err:
        make_agent("learned", game)
    assert message in str(err.value) and "agents for it" not in str(err.value)
