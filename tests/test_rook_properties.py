"""Rook for Two invariants under random play: 45 cards conserved, masks equal to an independent legality oracle,
140 points a round, and no observation depends on a card its viewer cannot see (the leak test)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from cardzoo.envs.rook import rules
from cardzoo.envs.rook.observer import observe_bits
from cardzoo.envs.rook.rules import BID, DISCARD, DRAW, PLAY, TRUMP

from .test_rook_rules import actions, game


def oracle_legal(s: rules.State) -> set[int]:
    """The legal actions, written out from the rules independently of ``rules.legal_actions``."""
    out = set()
    if s.done:
        return out
    for a in range(rules.N_ACTIONS):
        if s.phase == BID:
            if 53 <= a <= 71:
                amount = 50 + 5 * (a - 53)
                out.update([a] if s.high_bid is None or amount > s.high_bid else [])
            elif a == 72 and s.high_bid is not None:
                out.add(a)
        elif s.phase == TRUMP:
            if 73 <= a <= 76:
                out.add(a)
        elif s.phase == DRAW:
            if a in (77, 78):
                out.add(a)
        elif a < 53 and s.hands[s.to_move] >> a & 1:
            hand = [x for x in range(53) if s.hands[s.to_move] >> x & 1]
            if s.phase == DISCARD:
                plain = [x for x in hand if rules.POINTS[x] == 0]
                if not plain or rules.POINTS[a] == 0:
                    out.add(a)
            else:
                def suit_of(x):
                    return s.trumps if x == 52 else x // 13
                if s.led is None or suit_of(a) == suit_of(s.led) or all(suit_of(x) != suit_of(s.led) for x in hand):
                    out.add(a)
    return out


def places(s: rules.State) -> list[int]:
    """Every place a card can be in the current round, as masks."""
    nest = s.nest if s.phase in (BID, TRUMP) else 0
    face_up = 0 if s.face_up is None else 1 << s.face_up
    return [s.hands[0], s.hands[1], nest, s.discards, s.played[0], s.played[1], face_up, s.pile_mask()]


def random_steps(seed: int, steps: int, **config):
    """A game after ``steps`` random legal actions (or its end), with every intermediate state checked."""
    s = game(seed=seed, **config)
    rng = np.random.default_rng(seed + 1)
    for _ in range(steps):
        if s.done:
            break
        legal = rules.legal_actions(s)
        assert set(actions(legal)) == oracle_legal(s)
        a = actions(legal)[rng.integers(legal.bit_count())]
        rules.apply(s, a)
        yield s


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31), steps=st.integers(1, 400))
def test_cards_conserved_and_masks_match_oracle(seed, steps):
    for s in random_steps(seed, steps):
        if s.done:
            break
        ps = places(s)
        union = 0
        for p in ps:
            assert not union & p, "a card is in two places"
            union |= p
        assert union == rules.DECK_MASK and sum(p.bit_count() for p in ps) == 45
        if s.phase == PLAY and s.led is None:
            assert s.hands[0].bit_count() == s.hands[1].bit_count()
        assert not s.known[0] & ~s.hands[0] and not s.known[1] & ~s.hands[1]


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**31))
def test_every_round_deals_140_points(seed):
    t = game(seed=seed)
    rng = np.random.default_rng(seed + 1)
    while not t.done and len(t.history) < 6:
        legal = rules.legal_actions(t)
        rules.apply(t, actions(legal)[rng.integers(legal.bit_count())])
    assert t.history
    for summary in t.history:
        assert sum(summary["points"]) == 140 and sum(summary["tricks"]) == 21
        b = summary["bidder"]
        expected = summary["points"][b] if summary["made"] else -summary["bid"]
        assert summary["score"] == [expected if i == b else summary["points"][i] for i in range(2)]


def hidden_slots(s: rules.State, viewer: int) -> list[int]:
    """The places ``viewer`` cannot see into: opponent's unknown cards, hidden Nest, hidden discards, the pile."""
    opp = 1 - viewer
    return [s.hands[opp] & ~s.known[opp], s.nest if s.phase in (BID, TRUMP) else 0,
            s.discards if s.bidder != viewer else 0, s.pile_mask()]


def resample_hidden(s: rules.State, viewer: int, rng: np.random.Generator | None) -> rules.State:
    """A copy of ``s`` whose cards hidden from ``viewer`` are shuffled among the places ``viewer`` cannot see.

    With ``rng=None`` the hidden cards are rotated by one place instead, which moves a card between places
    whenever two places are not empty."""
    t = s.copy()
    opp = 1 - viewer
    nest_hidden = t.phase in (BID, TRUMP)  # before the Nest is taken nobody has seen it
    discards_hidden = t.bidder != viewer
    start = t.pile_pos + (1 if t.face_up is not None else 0)
    slots = [t.hands[opp] & ~t.known[opp], t.nest if nest_hidden else 0, t.discards if discards_hidden else 0]
    pile_cards = t.pile[start:]
    pool = [c for m in slots for c in range(53) if m >> c & 1] + pile_cards
    order = np.roll(np.arange(len(pool)), 1) if rng is None else rng.permutation(len(pool))
    shuffled = [pool[i] for i in order]
    sizes = [m.bit_count() for m in slots]
    cut = np.cumsum([0, *sizes]).tolist()
    new = [rules._mask(shuffled[cut[i]:cut[i + 1]]) for i in range(3)]
    t.hands[opp] = new[0] | t.known[opp]
    if nest_hidden:
        t.nest = new[1]
    if discards_hidden:
        t.discards = new[2]
        if not nest_hidden and t.bidder == opp:
            t.nest = new[2]  # the bidder may have discarded exactly the Nest: a consistent story
    t.pile = t.pile[:start] + shuffled[cut[3]:]
    return t


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**31), steps=st.integers(0, 150))
def test_leak_observation_ignores_hidden_cards(seed, steps):
    s = game(seed=seed)
    for s in random_steps(seed, steps):  # noqa: B007 - keep the last state
        pass
    if s.done:
        return
    rng = np.random.default_rng(seed)
    for viewer in (0, 1):
        before = observe_bits(s, viewer)
        for r in (rng, rng, rng, None):
            t = resample_hidden(s, viewer, r)
            assert observe_bits(t, viewer) == before
            if s.to_move == viewer:
                assert rules.legal_actions(t) == rules.legal_actions(s)
        if sum(1 for m in hidden_slots(s, viewer) if m) >= 2:
            assert hidden_slots(t, viewer) != hidden_slots(s, viewer)  # cards really moved: the test can fail


def test_leak_resampling_does_change_opponents_view():
    """Sanity for the leak test: the same resampling seen by the other player does change her observation."""
    s = game(seed=7)
    rng = np.random.default_rng(0)
    t = resample_hidden(s, 0, rng)
    assert observe_bits(t, 0) == observe_bits(s, 0)
    assert observe_bits(t, 1) != observe_bits(s, 1)
