"""The document's simulation figures (seeds/summit_rush_figures.json) against a careful policy on our rules.

The document's strategy is not given, so the test does not expect its exact rates: it checks that the figures file
builds valid environments, that a careful untimed policy lands near each figure (within 0.15) and orders the
variants as the document does, and that a careful two-player team needs about the number of ticks the clock
ruling (3 s per action) assumes.
"""

from __future__ import annotations

import numpy as np
import pytest

from cardzoo.envs import summit_rush_v0
from cardzoo.envs.summit_rush import rules
from cardzoo.seeds import figures

GAMES = 300


def load_figures() -> dict:
    return figures("summit_rush")


def _scored_plays(s: rules.State) -> list[tuple[tuple[int, int], int]]:
    """Every legal play, scored by (face-down cards it uncovers, plays possible after it); best first."""
    n = s.config.players
    out = []
    bits = rules.play_bits(s)
    while bits:
        low = bits & -bits
        a = low.bit_length() - 1
        bits ^= low
        pos, pile = divmod(a, n)
        t = s.copy()
        rules.play_card(t, pos, pile)
        out.append((((t.up & ~s.up).bit_count(), rules.play_bits(t).bit_count()), a))
    out.sort(reverse=True)
    return out


def careful_tick(s: rules.State, team: bool) -> list[int]:
    """One tick of a careful policy: play what uncovers most (then what keeps most plays open); turn a stock only
    when nothing fits, from the fullest stock. ``team=False``: one card per tick (the untimed simulation);
    ``team=True``: every player plays a different card onto a different pile."""
    n = s.config.players
    actions = [rules.N_PEAKS * n + 1] * n
    plays = _scored_plays(s)
    if not plays:
        if any(s.stock_left):
            actions[max(range(n), key=lambda p: s.stock_left[p])] = rules.N_PEAKS * n
        return actions
    used_pos, used_pile = set(), set()
    for seat in range(n if team else 1):
        for _, a in plays:
            pos, pile = divmod(a, n)
            if pos not in used_pos and pile not in used_pile:
                actions[seat] = a
                used_pos.add(pos)
                used_pile.add(pile)
                break
    return actions


def play_games(options: dict, games: int, team: bool = False) -> list[rules.State]:
    config = summit_rush_v0.make_config(**options)
    out = []
    for g in range(games):
        s = rules.new_game(config, np.random.default_rng(g).permutation(52).tolist(), g)
        while s.outcome is None:
            rules.play_tick(s, careful_tick(s, team), tuple(range(config.players)))
        out.append(s)
    return out


def test_figures_file_is_complete_and_builds_envs():
    fig = load_figures()
    assert fig["game"] == "summit_rush"
    assert fig["win_rate"] == {"tripeaks": 0.37, "stock_12": 0.62, "stock_10": 0.41, "stock_12_no_wrap": 0.27,
                               "stock_10_no_wrap": 0.15}
    assert set(fig["options"]) == set(fig["win_rate"]) == set(fig["notes"])
    for options in fig["options"].values():
        env = summit_rush_v0.parallel_env(**options)
        assert env.config.ticks is None


@pytest.fixture(scope="module")
def careful_rates() -> dict[str, float]:
    fig = load_figures()
    return {name: float(np.mean([s.outcome == rules.WIN for s in play_games(options, GAMES)]))
            for name, options in fig["options"].items()}


def test_careful_policy_lands_near_each_figure(careful_rates):
    for name, rate in load_figures()["win_rate"].items():
        assert abs(careful_rates[name] - rate) < 0.15, (name, careful_rates[name], rate)


def test_careful_policy_orders_the_variants_like_the_document(careful_rates):
    r = careful_rates
    assert r["stock_10"] < r["stock_12"] and r["stock_10_no_wrap"] < r["stock_12_no_wrap"]
    assert r["stock_12_no_wrap"] < r["stock_12"] and r["stock_10_no_wrap"] < r["stock_10"]
    assert r["tripeaks"] < r["stock_12"]


def test_a_careful_team_needs_about_the_ticks_the_clock_allows():
    """Ruling 5: 3 s per action gives Normal 60 ticks and Hard 40; a careful pair wins in roughly 33-50 ticks."""
    games = play_games({"time_limit": None}, 200, team=True)
    ticks = np.array([s.tick for s in games if s.outcome == rules.WIN])
    assert len(ticks) > 100
    low, high = np.percentile(ticks, [5, 95])
    assert 25 <= low and high <= 55
    assert np.mean(ticks <= 60) > 0.95  # Normal's clock rarely bites
    assert np.mean(ticks <= 40) < 0.7  # Hard's does
    assert all(s.conflicts == s.bounced == 0 for s in games)  # the team never reaches for the same card or pile
