"""Shared pieces: card strings, deck checks, card masks, observation layouts, option checks, the canvas, and the
AEC base class's reward bookkeeping."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cardzoo.envs import rook_v0, rope_team_v0
from cardzoo.envs.common import cards
from cardzoo.envs.common.errors import DeckError, OptionError
from cardzoo.envs.common.layout import Layout
from cardzoo.envs.common.options import int_in, one_of, reject_unknown
from cardzoo.envs.common.render import Canvas


def test_card_strings_round_trip():
    assert cards.parse_card("TS") == cards.make_card(8, 3) == 47
    assert cards.card_str(47) == "TS" and cards.card_pretty(47) == "10♠" and cards.card_pretty(0) == "2♣"
    assert [cards.parse_card(cards.card_str(c)) for c in range(52)] == list(range(52))
    assert cards.rank(cards.parse_card("AH")) == 12 and cards.suit(cards.parse_card("AH")) == 2


@pytest.mark.parametrize("bad", ["10S", "ts", "S", "", "ZZ", 5, None])
def test_unknown_card(bad):
    with pytest.raises(DeckError):
        cards.parse_card(bad)


def test_parse_deck_errors_name_the_problem():
    deck = list(cards.CARD_NAMES)
    assert cards.parse_deck(deck) == list(range(52))
    with pytest.raises(DeckError, match="52 cards, got 3"):
        cards.parse_deck(deck[:3])
    with pytest.raises(DeckError, match=r"repeats \['2C'\] and lacks \['AS'\]"):
        cards.parse_deck(["2C"] + deck[:51])
    with pytest.raises(DeckError, match="unknown card 'XX'"):
        cards.parse_deck(deck[:51] + ["XX"])


@given(st.sets(st.integers(0, 51)))
def test_masks_round_trip(chosen):
    mask = cards.mask_of(chosen)
    assert cards.cards_of(mask) == sorted(chosen) and cards.count(mask) == len(chosen)
    bits = cards.mask_to_bits(mask)
    assert bits.dtype == np.int8 and bits.shape == (52,) and set(np.flatnonzero(bits)) == chosen
    assert cards.bits_to_mask(bits) == mask


def test_layout_slices_and_split():
    layout = Layout(("a", 3, "first"), ("b", 10, "second"))
    assert layout.size == 13 and layout["b"] == slice(3, 13)
    vec = layout.to_array(0b101 | 1 << 12)
    parts = layout.split(vec)
    assert list(parts["a"]) == [1, 0, 1] and list(np.flatnonzero(parts["b"])) == [9]
    assert "   3:13   b                second" in layout.table()
    with pytest.raises(ValueError, match="shape"):
        layout.split(np.zeros(5))


def test_option_checks():
    with pytest.raises(OptionError, match="did you mean 'level'"):
        reject_unknown({"levle": 1}, ["level", "ropes"], "option")
    reject_unknown({"level": 1}, ["level"], "option")
    assert int_in("x", np.int64(3), 0, 4) == 3
    for bad in (True, 2.5, "3"):
        with pytest.raises(OptionError):
            int_in("x", bad, 0, 4)
    with pytest.raises(OptionError, match="not one of"):
        one_of("mode", "fast", ["slow"])


def test_canvas_draws():
    c = Canvas(100, 60)
    before = c.pixels.copy()
    c.card(2, 2, 51)
    c.text(50, 2, "AB 10")
    changed = np.any(c.pixels != before, axis=2)
    assert changed[2:50, 2:36].any() and changed[2:12, 50:90].any() and not changed[55:, :].any()


def rewards_from_last(env, seed: int) -> tuple[dict[str, float], int, dict]:
    """Random legal play through the standard ``agent_iter``/``last()`` loop: the rewards ``last()`` handed each
    agent over the game, how many of them were non-zero before the end, and the final info."""
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    handed = dict.fromkeys(env.possible_agents, 0.0)
    mid_game = 0
    for agent in env.agent_iter():
        obs, reward, term, trunc, info = env.last()
        handed[agent] += reward
        if term or trunc:
            final = info
            env.step(None)
        else:
            mid_game += reward != 0
            env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    return handed, mid_game, final


@pytest.mark.parametrize("options", [{"rounds": 3}, {"rounds": 10, "target_score": 300}])
def test_rewards_from_last_add_up_to_each_rook_players_round_scores(options):
    # With ``rounds`` every round pays mid-game; the truth is the final info's round history: own score minus the
    # opponent's, summed over the rounds.
    paid_mid_game = 0
    for seed in range(4):
        handed, mid_game, info = rewards_from_last(rook_v0.env(**options), seed)
        own = [sum(r["score"][seat] - r["score"][1 - seat] for r in info["history"]) for seat in (0, 1)]
        assert handed == {"player_0": own[0], "player_1": own[1]}
        assert own[0] == info["totals"][0] - info["totals"][1]
        paid_mid_game += mid_game
    assert paid_mid_game > 0


def test_rewards_from_last_add_up_to_rope_team_shaping_and_outcome():
    # Shaping pays both players for every card uncovered, mid-game; the truth is the final info's count of
    # uncovered cards plus the outcome.
    paid_mid_game = 0
    for seed in range(6):
        handed, mid_game, info = rewards_from_last(rope_team_v0.env(level="easy", shaping=0.25), seed)
        true_total = 0.25 * info["uncovered"] + (1.0 if info["outcome"] == "win" else -1.0)
        assert handed == {"player_0": pytest.approx(true_total), "player_1": pytest.approx(true_total)}
        paid_mid_game += mid_game
    assert paid_mid_game > 0
