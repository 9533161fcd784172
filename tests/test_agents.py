"""The registry, the random and simple Rope Team agents, and the fast loop against the env loop. (No peeking, for
every agent: ``test_no_peeking.py``.)"""

from __future__ import annotations

import numpy as np
import pytest

from cardzoo.agents import Agent, RandomAgent
from cardzoo.agents.loops import _rope_team_bits_game, play_env_game
from cardzoo.agents.registry import agent_names, make_agent
from cardzoo.agents.rope_team_simple import RopeTeamSimple
from cardzoo.envs import OptionError, rope_team_v0
from cardzoo.envs.common.cards import STANDARD_CARDS
from cardzoo.envs.rope_team import rules
from cardzoo.evaluation.matches.runner import Matchup

from .rope_team_helpers import build_deck


def test_registry():
    assert {"random", "simple"} <= set(agent_names("rope_team_v0"))
    assert isinstance(make_agent("simple", "rope_team_v0"), Agent)
    with pytest.raises(OptionError, match="no agent 'genius'"):
        make_agent("genius", "rope_team_v0")


def test_learned_is_the_newest_policy_and_the_ones_it_replaced_stay_reachable_by_name():
    """`learned` plays the v2 policies; `learned_v1` the MaskablePPO policies it replaced (the files `learned` named
    before), `learned_seed1` the same recipe as `learned` with seed 1, `learned_v1_seed1` the old one's."""
    from cardzoo.agents.learned import NumpyPolicy, shipped_policy

    def digests(name, env):
        return {p.digest for p in make_agent(name, env).policies.values()}

    files = {("learned", "rope_team_v0"): ["rope_team_v2"], ("learned_v1", "rope_team_v0"): ["rope_team"],
             ("learned", "summit_rush_v0"): ["summit_rush_normal_v2", "summit_rush_hard_v2"],
             ("learned_v1", "summit_rush_v0"): ["summit_rush_normal", "summit_rush_hard"],
             ("learned", "rook_v0"): ["rook_v2"], ("learned_v1", "rook_v0"): ["rook"],
             ("learned_seed1", "rope_team_v0"): ["rope_team_v2_seed1"],
             ("learned_v1_seed1", "rope_team_v0"): ["rope_team_seed1"]}
    for (name, env), stems in files.items():
        assert digests(name, env) == {NumpyPolicy(shipped_policy(s)).digest for s in stems}, (name, env)
    for env in ("rope_team_v0", "summit_rush_v0", "rook_v0"):
        assert not digests("learned", env) & digests("learned_v1", env)
    assert NumpyPolicy(shipped_policy("rope_team_v2_seed1")).meta["config"]["seed"] == 1
    # the same recipe: the v2 seeds differ in their seed and their wall-time budget alone
    recipe = [{k: v for k, v in NumpyPolicy(shipped_policy(s)).meta["config"].items()
               if k not in ("seed", "out", "minutes")} for s in ("rope_team_v2", "rope_team_v2_seed1")]
    assert recipe[0] == recipe[1]
    for stem in ("summit_rush_normal_v2", "summit_rush_hard_v2"):
        assert NumpyPolicy(shipped_policy(stem)).meta["features"] == "summit_rush_simple_exact"


def test_a_policy_file_is_an_agent_name(tmp_path):
    """``cardzoo train`` output plays by its path (in the runner, ``play`` and ``evaluate``), on its own game only."""
    from cardzoo.agents.learned import LearnedAgent, shipped_policy
    from cardzoo.envs.common.errors import PolicyError

    path = str(shipped_policy("rope_team_plain"))
    agent = make_agent(path, "rope_team_v0", seed=3)
    assert isinstance(agent, LearnedAgent) and agent.policy.digest == LearnedAgent(path).policy.digest
    record = play_env_game(rope_team_v0.env(), [agent, agent], seed=0)
    assert record["outcome"] in ("win", "fall", "out_of_deals")
    with pytest.raises(OptionError, match="trained on rope_team_v0, not rook_v0"):
        make_agent(path, "rook_v0")
    with pytest.raises(PolicyError, match="does not exist"):
        make_agent(str(tmp_path / "missing.npz"), "rope_team_v0")


def test_random_agent_plays_only_legal_moves():
    agent = RandomAgent(seed=1)
    mask = np.zeros(52, dtype=np.int8)
    mask[[3, 7]] = 1
    assert {agent.act(np.zeros(5), mask) for _ in range(50)} == {3, 7}
    with pytest.raises(ValueError, match="no legal action"):
        agent.act(np.zeros(5), np.zeros(52, dtype=np.int8))


@pytest.mark.parametrize("level", sorted(rules.LEVELS))
def test_fast_loop_equals_env_loop(level):
    env = rope_team_v0.env(level=level)
    for seed in range(15):
        agents = [RopeTeamSimple(), RopeTeamSimple()]
        via_env = play_env_game(env, agents, seed)
        fast = _rope_team_bits_game({"level": level}, [RopeTeamSimple(), RopeTeamSimple()], seed)
        assert via_env == fast


def test_simple_agent_never_falls_when_it_can_brake():
    # The worked example's trick 2: from one card off Anna's end, Ben must brake with the 4♣, not the 8♣.
    from .test_rope_team_rules import EXAMPLE_ANNA, EXAMPLE_BEN, EXAMPLE_RIDGE

    env = rope_team_v0.raw_env(level="hard")
    env.reset(seed=0, options={"deck": build_deck(EXAMPLE_RIDGE, EXAMPLE_ANNA, EXAMPLE_BEN, no_suits1="HC")})
    for move in ("KS", "9S", "9C"):
        env.step(STANDARD_CARDS[move])
    obs = env.observe("player_1")
    assert RopeTeamSimple().act(obs["observation"], obs["action_mask"]) == STANDARD_CARDS["4C"]


def test_simple_agent_stops_on_face_down_cards():
    # Following the K♠ from the camp: the 9♠ makes 3 steps onto face-down position 1, the 2♠ makes 2 steps onto
    # position 2, which we turn face up by hand.
    env = rope_team_v0.raw_env(level="hard")
    env.reset(seed=0, options={"deck": build_deck([], ["KS"], ["9S", "2S"], no_suits1="CDH")})
    env.game.up[2] = True
    env.game.uncovered = 1
    env.step(STANDARD_CARDS["KS"])
    obs = env.observe("player_1")
    assert RopeTeamSimple().act(obs["observation"], obs["action_mask"]) == STANDARD_CARDS["9S"]


def test_matchup_key_is_stable():
    a = Matchup.of("rope_team_v0", ["simple"], level="hard", max_deals=2)
    b = Matchup.of("rope_team_v0", ["simple"], max_deals=2, level="hard")
    assert a == b and a.key == b.key and a.key != Matchup.of("rope_team_v0", ["random"], level="hard").key
