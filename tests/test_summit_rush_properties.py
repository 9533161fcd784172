"""Summit Rush properties over random games: cards conserved, masks equal the legal actions, a card is free iff both
its covers are gone, and no observation leaks a hidden card."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from cardzoo.envs import summit_rush_v0
from cardzoo.envs.common.cards import CARD_NAMES
from cardzoo.envs.summit_rush import rules
from cardzoo.envs.summit_rush.rules import N_PEAKS

from .hidden_worlds import summit_rush_resample_hidden

OPTION_SETS = [
    {},
    {"talk": False},
    {"level": "hard", "talk": False},
    {"players": 3},
    {"players": 3, "level": "hard", "wrap": False, "talk": False},
    {"solo": True},
    {"wrap": False, "time_limit": None, "talk": False},
]

games = st.fixed_dictionaries({
    "options": st.sampled_from(OPTION_SETS),
    "seed": st.integers(0, 2**32 - 1),
    "policy": st.integers(0, 2**32 - 1),
    "wait_bias": st.floats(0.0, 0.9),
})


def neighbours(a: int, b: int, wrap: bool) -> bool:
    """Independent of rules.FITS: A=1 ... K=13 in the game's order."""
    ra, rb = "A23456789TJQK".index(CARD_NAMES[a][0]), "A23456789TJQK".index(CARD_NAMES[b][0])
    d = abs(ra - rb)
    return d == 1 or wrap and d == 12


def oracle_legal(s: rules.State, seat: int) -> set[int]:
    """The legal actions of ``seat``, computed from the cover map directly (not from the up mask)."""
    if s.outcome is not None:
        return set()
    n = s.config.players
    out = {N_PEAKS * n + 1}
    if s.stock_left[seat]:
        out.add(N_PEAKS * n)
    for pos in range(N_PEAKS):
        present = s.present >> pos & 1
        covered = any(s.present >> q & 1 for q in rules.COVERED_BY[pos])
        if present and not covered:
            for pile in range(n):
                if neighbours(s.peaks[pos], s.tops[pile], s.config.wrap):
                    out.add(pos * n + pile)
    return out


def check_invariants(env, obs) -> None:
    s = env.game
    # Cards conserved: 52 distinct cards across peaks, piles, stocks and the aside pile.
    held = rules.cards_in_play(s)
    assert sorted(held) == list(range(52))
    assert sum(len(p) for p in s.piles) == N_PEAKS - s.present.bit_count() + s.turned + s.config.players
    # A card is free (face up) iff it is still there and both cards covering it are gone.
    for pos in range(N_PEAKS):
        free = bool(s.present >> pos & 1) and not any(s.present >> q & 1 for q in rules.COVERED_BY[pos])
        assert bool(s.up >> pos & 1) == free
    # Masks equal the legal actions, for every agent: each legal move with every message (talking games).
    for seat, agent in enumerate(env.possible_agents):
        mask = obs[agent]["action_mask"]
        moves = oracle_legal(s, seat)
        expected = {m * env.n_moves + a for m in range(env.config.n_messages) for a in moves}
        assert set(np.flatnonzero(mask).tolist()) == expected
        for a in range(env.n_moves):
            assert rules.is_legal(s, seat, a) == bool(mask[a])


@settings(max_examples=40, deadline=None)
@given(games)
def test_invariants_over_random_games(g):
    env = summit_rush_v0.parallel_env(**g["options"])
    rng = np.random.default_rng(g["policy"])
    obs, _ = env.reset(seed=g["seed"])
    check_invariants(env, obs)
    while env.agents:
        actions = {}
        for agent in env.agents:
            legal = np.flatnonzero(obs[agent]["action_mask"])
            actions[agent] = env.WAIT if rng.random() < g["wait_bias"] else int(rng.choice(legal))
        obs, rewards, terms, truncs, infos = env.step(actions)
        check_invariants(env, obs)
    info = infos["player_0"]
    assert info["outcome"] in ("win", "time", "stuck", "tick_limit")
    assert rewards["player_0"] == {"win": 1.0, "tick_limit": 0.0}.get(info["outcome"], -1.0)
    assert info["ticks"] == env.game.tick and (env.config.ticks is None or info["ticks"] <= env.config.ticks)
    assert (info["peaks_left"] == 0) == (info["outcome"] == "win")


@settings(max_examples=30, deadline=None)
@given(games)
def test_resampling_hidden_cards_leaves_every_observation_identical(g):
    env = summit_rush_v0.parallel_env(**g["options"])
    rng = np.random.default_rng(g["policy"])
    obs, _ = env.reset(seed=g["seed"])
    changed = 0
    while env.agents:
        s = env.game
        other = summit_rush_resample_hidden(s, rng)
        changed += other.peaks != s.peaks or other.stocks != s.stocks
        for seat in range(env.config.players):
            assert np.array_equal(env.observer.observe(other, seat), env.observer.observe(s, seat))
            assert np.array_equal(env.observer.observe(s, seat), obs[env.possible_agents[seat]]["observation"])
            assert rules.legal_bits(other, seat) == rules.legal_bits(s, seat)
        actions = {a: int(rng.choice(np.flatnonzero(obs[a]["action_mask"]))) for a in env.agents}
        obs, *_ = env.step(actions)
    assert changed  # the resampling did change hidden cards, so the equality above meant something


def test_observation_decodes_to_the_public_table():
    env = summit_rush_v0.parallel_env(players=3, level="hard")
    rng = np.random.default_rng(0)
    obs, _ = env.reset(seed=9)
    while env.agents:
        s = env.game
        view = env.describe(obs["player_2"]["observation"])
        for pos in range(N_PEAKS):
            if not s.present >> pos & 1:
                assert view["peaks"][pos] is None
            elif not s.up >> pos & 1:
                assert view["peaks"][pos] == "??"
            else:
                assert view["peaks"][pos] == CARD_NAMES[s.peaks[pos]]
        assert view["piles"] == [CARD_NAMES[t] for t in s.tops]
        assert view["stock_left"] == s.stock_left and view["time_left"] == s.ticks_left() and view["seat"] == 2
        assert sorted(view["on_piles"]) == sorted(CARD_NAMES[c] for p in s.piles for c in p)
        obs, *_ = env.step({a: int(rng.choice(np.flatnonzero(obs[a]["action_mask"]))) for a in env.agents})
