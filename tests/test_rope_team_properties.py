"""Rope Team invariants over random games (hypothesis), and the leak test."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from cardzoo.envs import rope_team_v0
from cardzoo.envs.common.cards import CARD_NAMES, FULL_MASK, STANDARD_CARDS, SUIT_MASKS, cards_of, mask_to_bits
from cardzoo.envs.rope_team import rules

from .rope_team_helpers import QUIET_HAND0, QUIET_HAND1

LEVELS = st.sampled_from(sorted(rules.LEVELS))


def naive_legal(s: rules.State) -> set[int]:
    """Legal plays from the rule text, independent of rules.legal_mask."""
    hand = set(cards_of(s.hands[s.to_move]))
    if s.led is None:
        return hand
    same_suit = {c for c in hand if c // 13 == s.led // 13}
    return same_suit or hand


def check_invariants(s: rules.State, last_uncovered_suit: int) -> None:
    ridge = sum(1 << c for c in s.ridge)
    parts = [ridge, s.hands[0], s.hands[1], s.played[0], s.played[1], s.aside]
    assert sum(p.bit_count() for p in parts) == 52  # every card in exactly one place ...
    assert ridge | s.hands[0] | s.hands[1] | s.played[0] | s.played[1] | s.aside == FULL_MASK  # ... and all there
    assert 0 <= s.coin < rules.RIDGE and s.up[s.coin]  # the coin never leaves the ridge, and rests face up
    assert s.up[rules.CAMP] and sum(s.up) == s.uncovered + 1
    assert s.trumps == (last_uncovered_suit if s.config.trumps else rules.NO_TRUMPS)
    assert 0 <= s.ropes <= s.config.ropes
    if s.outcome is None:
        assert set(cards_of(rules.legal_mask(s))) == naive_legal(s)
        assert s.hands[0].bit_count() + s.hands[1].bit_count() == 26 - 2 * s.trick_no - (s.led is not None)


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), level=LEVELS, data=st.data())
def test_rules_invariants(seed, level, data):
    rng = np.random.default_rng(seed)
    s = rules.new_game(rules.LEVELS[level], rules.shuffled_deck(rng), rng)
    last_suit = rules.NO_TRUMPS
    check_invariants(s, last_suit)
    while s.outcome is None:
        legal = cards_of(rules.legal_mask(s))
        before = list(s.up)
        rules.play(s, data.draw(st.sampled_from(legal)))
        newly = [pos for pos in range(rules.RIDGE) if s.up[pos] and not before[pos]]
        assert len(newly) <= 1
        if newly:
            last_suit = s.ridge[newly[0]] // 13
        check_invariants(s, last_suit)
    assert s.outcome in (rules.WIN, rules.FALL, rules.OUT_OF_DEALS)
    assert (s.outcome == rules.WIN) == (s.uncovered == 8)


@settings(max_examples=100, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), level=LEVELS, open_hands=st.booleans(), data=st.data())
def test_env_mask_equals_legal_plays(seed, level, open_hands, data):
    env = rope_team_v0.raw_env(level=level, open_hands=open_hands)
    env.reset(seed=seed)
    while env.agents and not env.terminations[env.agent_selection]:
        s = env.game
        obs = env.observe(env.agent_selection)
        assert np.array_equal(obs["action_mask"], mask_to_bits(sum(1 << c for c in naive_legal(s))))
        hand = obs["observation"][:52]
        assert set(np.flatnonzero(hand)) == set(cards_of(s.hands[s.to_move]))
        env.step(data.draw(st.sampled_from(list(np.flatnonzero(obs["action_mask"])))))


QUIET = [STANDARD_CARDS[n] for n in QUIET_HAND0 + QUIET_HAND1]
LOUD = [card for card in range(52) if card not in QUIET]


@settings(max_examples=50, deadline=None)
@given(quiet=st.permutations(QUIET), loud=st.permutations(LOUD), seeds=st.lists(st.integers(0, 2**32 - 1),
       min_size=2, max_size=2, unique=True), data=st.data())
def test_seeds_sharing_deal_one_differ_in_deal_two(quiet, loud, seeds, data):
    """Two seeds dealt the same first deal (the same deck) and played alike get different second deals, each a
    shuffle of the 43 cards off the ridge. Hands of 2-7s and one 8 each keep deal 1 from ending the game."""
    deck = loud[:9] + quiet + loud[9:]
    a, b = (rules.new_game(rules.Config(ropes=0), deck, np.random.default_rng(seed)) for seed in seeds)
    while a.deal == 1:
        card = data.draw(st.sampled_from(cards_of(rules.legal_mask(a))))
        rules.play(a, card)
        rules.play(b, card)
    off_ridge = FULL_MASK & ~sum(1 << card for card in loud[:9])
    for s in (a, b):
        assert s.deal == 2 and s.outcome is None and s.played == [0, 0]
        assert s.hands[0] | s.hands[1] | s.aside == off_ridge
        assert [s.hands[0].bit_count(), s.hands[1].bit_count(), s.aside.bit_count()] == [13, 13, 17]
    assert (a.hands, a.aside) != (b.hands, b.aside)


def _unseen_and_slots(s: rules.State, viewer: int, partner_unplayed: int) -> tuple[list[int], list[tuple]]:
    """Cards the viewer never saw in the first deal, and where each sits."""
    slots = [("ridge", pos) for pos in range(rules.RIDGE) if not s.up[pos]]
    slots += [("partner", c) for c in cards_of(partner_unplayed)] + [("aside", c) for c in cards_of(s.aside)]
    cards = [s.ridge[where] if kind == "ridge" else where for kind, where in slots]
    return cards, slots


def _deck_string(ridge, hand0, hand1, aside) -> list[str]:
    return [CARD_NAMES[c] for c in list(ridge) + cards_of(hand0) + cards_of(hand1) + cards_of(aside)]


def first_deal_views(deck: list[str], actions: list[int], viewer: int, seed: int) -> list[np.ndarray] | None:
    """The viewer's observations through the actions, or None if an action is illegal in this deal."""
    env = rope_team_v0.raw_env(level="easy")
    env.reset(seed=seed, options={"deck": deck})
    views = [env.observe(env.possible_agents[viewer])["observation"]]
    for a in actions:
        if not env._is_legal(a):
            return None
        env.step(a)
        views.append(env.observe(env.possible_agents[viewer])["observation"])
    return views


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**31), viewer=st.sampled_from([0, 1]), data=st.data())
def test_leak_resampling(seed, viewer, data):
    """Resampling every card the viewer never saw (keeping what it could infer) leaves its observations identical.

    Unseen: the partner's unplayed cards, the face-down ridge cards and the 17 aside, in the first deal. The only
    thing the viewer can infer about them is that the partner lacks a suit it failed to follow, so the partner
    gets cards of other suits only.
    """
    rng = np.random.default_rng(seed)
    deck = [CARD_NAMES[c] for c in rules.shuffled_deck(rng)]
    env = rope_team_v0.raw_env(level="easy")
    env.reset(seed=seed, options={"deck": deck})
    start = env.game.copy()
    partner = 1 - viewer
    actions, voids = [], set()
    while env.game.outcome is None and len(actions) < 25:  # 25: the deal is not over, nothing reshuffled
        legal = list(np.flatnonzero(env.observe(env.agent_selection)["action_mask"]))
        action = int(data.draw(st.sampled_from(legal)))
        s = env.game
        if s.to_move == partner and s.led is not None and action // 13 != s.led // 13:
            voids.add(s.led // 13)
        actions.append(action)
        env.step(action)
    end = env.game
    partner_unplayed = start.hands[partner] & ~end.played[partner]
    cards, slots = _unseen_and_slots(end, viewer, partner_unplayed)
    n_partner = partner_unplayed.bit_count()
    original = first_deal_views(deck, actions, viewer, seed)
    for _ in range(4):
        pool = np.random.default_rng(data.draw(st.integers(0, 2**31))).permutation(cards).tolist()
        eligible = [c for c in pool if c // 13 not in voids]
        to_partner = eligible[:n_partner]
        rest = [c for c in pool if c not in to_partner]
        ridge, hands, aside = list(start.ridge), list(start.hands), 0
        hands[partner] = (start.hands[partner] & ~partner_unplayed) | sum(1 << c for c in to_partner)
        for (kind, where), card in zip([sl for sl in slots if sl[0] != "partner"], rest, strict=True):
            if kind == "ridge":
                ridge[where] = card
            else:
                aside |= 1 << card
        views = first_deal_views(_deck_string(ridge, hands[0], hands[1], aside), actions, viewer, seed)
        assert views is not None, "a resample consistent with the viewer's information made a move illegal"
        for step, (a, b) in enumerate(zip(original, views, strict=True)):
            assert np.array_equal(a, b), f"observation {step} of player_{viewer} depends on a card it cannot see"


def test_leak_test_has_teeth():
    """With open hands the partner's hand is visible, so resampling it must change the observation."""
    rng = np.random.default_rng(0)
    deck = [CARD_NAMES[c] for c in rules.shuffled_deck(rng)]
    swapped = list(deck)
    swapped[22], swapped[40] = deck[40], deck[22]  # a partner card <-> an aside card
    views = []
    for d in (deck, swapped):
        env = rope_team_v0.raw_env(open_hands=True)
        env.reset(seed=0, options={"deck": d})
        views.append(env.observe("player_0")["observation"])
    assert not np.array_equal(*views)
    closed = []
    for d in (deck, swapped):
        env = rope_team_v0.raw_env()
        env.reset(seed=0, options={"deck": d})
        closed.append(env.observe("player_0")["observation"])
    assert np.array_equal(*closed)


def test_suit_masks_partition_the_deck():
    assert sum(m.bit_count() for m in SUIT_MASKS) == 52 and SUIT_MASKS[0] | SUIT_MASKS[3] != FULL_MASK
