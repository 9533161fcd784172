"""Rope Team's rollouts with a pluggable blueprint: the rows' observations and masks are the env's, the simple
strategy as a batched policy on observations plays the simple strategy's cards, and rollouts played by it end as
the built-in fast path's; the search decides the same with either."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cardzoo.agents.rope_team_rollouts import simple_policy
from cardzoo.agents.rope_team_search import RopeTeamSearch
from cardzoo.agents.rope_team_simple import RopeTeamSimple
from cardzoo.envs import rope_team_v0
from cardzoo.envs.common.errors import OptionError, PolicyError
from cardzoo.envs.rope_team import rules
from cardzoo.envs.rope_team.observer import LAYOUT, observe_bits

from .hidden_worlds import rope_team_hidden_variant
from .test_rope_team_search import LEVELS, _batch, _random_position


def _vector(bits: int, size: int) -> np.ndarray:
    return np.array([bits >> i & 1 for i in range(size)], np.int8)


@settings(max_examples=30, deadline=None)
@given(level=st.sampled_from(LEVELS), seed=st.integers(0, 2**31), plays=st.integers(0, 60))
def test_rows_observe_as_the_env_and_the_policy_plays_the_simple_strategy(level, seed, plays):
    """Card by card to the end of the game, a row's observation and mask are the env's (bit for bit) and the
    batched simple policy on them plays the simple strategy's card."""
    s = _random_position(level, seed, plays)
    if s.outcome is not None:
        return
    games = _batch([s])
    simple = RopeTeamSimple()
    while s.outcome is None:
        obs, mask = games.observe()
        bits, legal = observe_bits(s, s.to_move), rules.legal_mask(s)
        assert obs[0].tolist() == _vector(bits, LAYOUT.size).tolist()
        assert mask[0].tolist() == _vector(legal, 52).tolist()
        card = simple.act_bits(bits, legal)
        assert simple_policy(obs, mask).tolist() == [card]
        games.play(np.array([card]))
        rules.play(s, card)


def test_the_policy_decides_rows_that_lead_and_follow_together():
    """One batch of observations from many games, leads and follows mixed: each row gets the simple card."""
    env = rope_team_v0.env(level="hard")
    simple = RopeTeamSimple()
    obs_rows, mask_rows, cards = [], [], []
    for seed in range(6):
        env.reset(seed=seed)
        for _agent in env.agent_iter():
            o, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            card = simple.act(o["observation"], o["action_mask"])
            obs_rows.append(o["observation"])
            mask_rows.append(o["action_mask"])
            cards.append(card)
            env.step(card)
    leads = sum(int(row[LAYOUT.offsets["led"] : LAYOUT.offsets["led"] + 52].any() == 0) for row in obs_rows)
    assert 50 < leads < len(obs_rows) - 50
    assert simple_policy(np.array(obs_rows), np.array(mask_rows)).tolist() == cards


@settings(max_examples=15, deadline=None)
@given(level=st.sampled_from(LEVELS), seed=st.integers(0, 2**31), plays=st.integers(0, 50))
def test_rollouts_by_the_policy_end_as_the_fast_path(level, seed, plays):
    s = _random_position(level, seed, plays)
    if s.outcome is not None:
        return
    rng = np.random.default_rng(seed)
    states = [s] + [rope_team_hidden_variant(s, rng) for _ in range(15)]
    assert _batch(states).play_out(simple_policy).tolist() == _batch(states).play_out().tolist()


def test_a_policy_that_breaks_the_protocol_is_refused_clearly():
    s = _random_position("hard", 3, 10)
    with pytest.raises(PolicyError, match="illegal card"):
        _batch([s]).play_out(lambda obs, mask: np.full(len(obs), 53))
    with pytest.raises(PolicyError, match="one per observation"):
        _batch([s]).play_out(lambda obs, mask: mask.argmax(axis=1).astype(float))
    with pytest.raises(ValueError, match="no legal card"):
        simple_policy(np.zeros((1, LAYOUT.size), np.int8), np.zeros((1, 52), np.int8))


def test_the_search_decides_the_same_with_the_policy_path_on_real_games():
    """At equal worlds, rollouts and seeds, a search whose rollouts are played by the batched policy on observations
    chooses the card the fast path chooses, on every decision of real games (the random streams are the same)."""
    budget = {"worlds": 64, "rollouts": 48, "min_worlds": 8, "z": 0.0, "threshold": 0.0}  # deviate on any gain
    decisions = deviations = 0
    for level, seed in [(level, seed) for seed in range(2) for level in ("easy", "normal", "hard", "expert")]:
        env = rope_team_v0.env(level=level)
        env.reset(seed=seed)
        fast = [RopeTeamSearch(seed * 2 + i, **budget) for i in range(2)]
        policy = [RopeTeamSearch(seed * 2 + i, rollout_policy=simple_policy, **budget) for i in range(2)]
        for agent in env.agent_iter():
            o, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            seat = env.possible_agents.index(agent)
            card = fast[seat].act(o["observation"], o["action_mask"])
            assert policy[seat].act(o["observation"], o["action_mask"]) == card
            decisions += "values" in fast[seat].last
            deviations += card != fast[seat].last["blueprint"]
            env.step(card)
    assert decisions >= 150 and deviations >= 10


def test_a_rollout_policy_that_is_no_policy_is_refused():
    with pytest.raises(OptionError, match="rollout_policy"):
        RopeTeamSearch(rollout_policy="simple")
