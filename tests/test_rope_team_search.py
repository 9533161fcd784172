"""The Rope Team search agent and its numpy rollouts: same games as the rules and the simple strategy, legal cards,
no peeking, a belief that respects what was seen, a read of the partner that changes a decision, determinism."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cardzoo.agents.oracles.rope_team import later_deals
from cardzoo.agents.rope_team_rollouts import Games
from cardzoo.agents.rope_team_simple import RopeTeamSimple
from cardzoo.envs.rope_team import rules
from cardzoo.envs.rope_team.env import make_config
from cardzoo.envs.rope_team.observer import observe_bits

LEVELS = sorted(rules.LEVELS)


def _random_position(level: str, seed: int, plays: int, noise: float = 0.3) -> rules.State:
    """A game after ``plays`` cards, mostly the simple strategy's, some random (positions the strategy avoids)."""
    rng = np.random.default_rng(seed)
    s = rules.new_game(make_config(level), rules.shuffled_deck(rng), rng, dealer=int(rng.integers(2)))
    simple = RopeTeamSimple()
    for _ in range(plays):
        if s.outcome is not None:
            break
        legal = rules.legal_mask(s)
        cards = [c for c in range(52) if legal >> c & 1]
        card = simple.act_bits(observe_bits(s, s.to_move), legal)
        rules.play(s, cards[rng.integers(len(cards))] if rng.random() < noise else card)
    return s


def _batch(states: list[rules.State]) -> Games:
    """Rows of the states (which share their public table), with their own later deals."""
    future = [[list(later_deals(t)[d][:2]) for d in sorted(later_deals(t))] for t in states]
    return Games.start(states[0], np.array([t.hands for t in states], np.uint64), np.array([t.ridge for t in states]),
                       np.array(future, np.uint64).reshape(len(states), -1, 2) if future[0] else None)


def _hidden_variant(s: rules.State, rng: np.random.Generator) -> rules.State:
    """The same table with player 1's hand, the aside and the face-down ridge dealt afresh among themselves."""
    t = s.copy()
    down = [i for i in range(rules.RIDGE) if not t.up[i]]
    hidden = [c for c in range(52) if (t.hands[1] | t.aside) >> c & 1] + [t.ridge[i] for i in down]
    perm = rng.permutation(hidden).tolist()
    n1 = t.hands[1].bit_count()
    t.hands[1] = sum(1 << c for c in perm[:n1])
    for i, c in zip(down, perm[n1 : n1 + len(down)], strict=True):
        t.ridge[i] = c
    t.aside = sum(1 << c for c in perm[n1 + len(down) :])
    t.rng = np.random.default_rng(int(rng.integers(2**31)))
    return t


@settings(max_examples=40, deadline=None)
@given(level=st.sampled_from(LEVELS), seed=st.integers(0, 2**31), plays=st.integers(0, 60))
def test_rollouts_play_the_simple_strategy_by_the_rules(level, seed, plays):
    """Card by card, one row of the numpy batch plays what the simple strategy plays on the observation, and the
    game ends as the rules end it."""
    s = _random_position(level, seed, plays)
    if s.outcome is not None:
        return
    games = _batch([s])
    simple = RopeTeamSimple()
    while s.outcome is None:
        card = simple.act_bits(observe_bits(s, s.to_move), rules.legal_mask(s))
        assert games.choose().tolist() == [card]
        games.play(np.array([card]))
        rules.play(s, card)
    assert games.results.tolist() == [1 if s.outcome == rules.WIN else -1]
    assert len(games) == 0


@settings(max_examples=25, deadline=None)
@given(level=st.sampled_from(LEVELS), seed=st.integers(0, 2**31), plays=st.integers(0, 50))
def test_rollout_rows_are_independent_games(level, seed, plays):
    """Rows with different hidden cards and later deals, played out together, each end as their own game does."""
    s = _random_position(level, seed, plays)
    if s.outcome is not None:
        return
    rng = np.random.default_rng(seed)
    states = [s] + [_hidden_variant(s, rng) for _ in range(7)]
    results = _batch(states).play_out()
    simple = RopeTeamSimple()
    for row, t in zip(results.tolist(), states, strict=True):
        t = t.copy()
        while t.outcome is None:
            rules.play(t, simple.act_bits(observe_bits(t, t.to_move), rules.legal_mask(t)))
        assert row == (1 if t.outcome == rules.WIN else -1)
