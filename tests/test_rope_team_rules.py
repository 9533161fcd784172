"""Rope Team rules: the document's worked example and one hand-built position per rule."""

from __future__ import annotations

import pytest

from cardzoo.envs.common.cards import FULL_MASK, SUITS, cards_of
from cardzoo.envs.rope_team import rules
from cardzoo.envs.rope_team.rules import CAMP, Config

from .rope_team_helpers import QUIET_HAND0, QUIET_HAND1, build_deck, c, game, play

HEARTS, DIAMONDS, SPADES, CLUBS = SUITS.index("H"), SUITS.index("D"), SUITS.index("S"), SUITS.index("C")

# The worked example: Anna is player_0 (her end is position 0), Ben is player_1 and dealt.
EXAMPLE_RIDGE = ["QD", "6H", "TS", "5D", "7C", "4S", "2D", "3C", "8D"]  # position 4 (7C) is the camp
EXAMPLE_ANNA = ["KS", "9C", "3H"]
EXAMPLE_BEN = ["9S", "8C", "4C", "KD"]


def example_game(ropes: int = 1) -> rules.State:
    deck = build_deck(EXAMPLE_RIDGE, EXAMPLE_ANNA, EXAMPLE_BEN, no_suits1="HC")  # his clubs: 8♣ 4♣
    return game(deck, Config(ropes=ropes))


def test_steps_match_document_arithmetic():
    # "2 to 7 doesn't move the rope"; sixteen 8-J at 1 step, twelve Q-A at 2 steps; 40 steps in the deck.
    assert [rules.STEPS[c(r + "S")] for r in "234567"] == [0] * 6
    assert [rules.STEPS[c(r + "H")] for r in "89TJ"] == [1] * 4
    assert [rules.STEPS[c(r + "C")] for r in "QKA"] == [2] * 3
    assert sum(rules.STEPS) == 40
    assert sum(1 for s in rules.STEPS if s == 1) == 16 and sum(1 for s in rules.STEPS if s == 2) == 12


def test_worked_example():
    s = example_game()
    assert s.to_move == 0 and s.dealer == 1 and s.trumps == rules.NO_TRUMPS and s.coin == CAMP
    # Trick 1: Anna K♠, Ben 9♠; Anna wins, pulls 3 towards her end onto the 6♥; hearts become trumps.
    play(s, "KS", "9S")
    assert s.coin == 1 and s.up[1] and s.ridge[1] == c("6H") and s.trumps == HEARTS and s.to_move == 0
    # Trick 2: Anna leads 9♣; Ben must follow clubs; the 8♣ would fall, the 4♣ brakes.
    play(s, "9C")
    assert cards_of(rules.legal_mask(s)) == [c("4C"), c("8C")]
    too_hard = s.copy()
    rules.play(too_hard, c("8C"))
    assert too_hard.outcome is None and too_hard.ropes == 0  # with a rope the 8♣ costs the rope ...
    no_rope = example_game(ropes=0)
    play(no_rope, "KS", "9S", "9C", "8C")
    assert no_rope.outcome == rules.FALL  # ... and without one it is a fall: one step too many
    play(s, "4C")
    assert s.coin == 0 and s.up[0] and s.trumps == DIAMONDS and s.to_move == 0
    # Trick 3: Anna leads 3♥; Ben has no hearts and trumps with K♦, pulls 2 onto the 10♠; spades are trumps.
    play(s, "3H")
    assert rules.legal_mask(s) == s.hands[1]  # no hearts: any card
    play(s, "KD")
    assert s.coin == 2 and s.up[2] and s.trumps == SPADES
    assert s.uncovered == 3 and s.to_move == 1 and s.leader == 1 and s.outcome is None


def test_following_suit():
    s = game(build_deck([], ["AH"], ["2H", "KS"]))
    play(s, "AH")
    legal = cards_of(rules.legal_mask(s))
    assert c("2H") in legal and c("KS") not in legal
    assert all(card // 13 == HEARTS for card in legal)


def test_leader_may_play_anything():
    s = game(build_deck([], ["AH"], []))
    assert rules.legal_mask(s) == s.hands[0]


def test_off_suit_never_wins():
    assert rules.trick_winner(c("2H"), c("AS"), trumps=rules.NO_TRUMPS)
    assert rules.trick_winner(c("2H"), c("AS"), trumps=CLUBS)
    assert not rules.trick_winner(c("2H"), c("3H"), trumps=CLUBS)
    assert not rules.trick_winner(c("AH"), c("2S"), trumps=SPADES)  # the lowest trump beats the led ace
    assert rules.trick_winner(c("AS"), c("KS"), trumps=SPADES)


def test_trump_changes_with_each_uncovered_card():
    # Ridge position 3 (one step towards player_0) is a heart, position 1 a club.
    s = game(build_deck(["2S", "5C", "3S", "6H", "9D"], ["8S", "9S"], ["2D", "3D"]))
    play(s, "8S", "2D")  # 1 step to position 3: hearts
    assert s.coin == 3 and s.trumps == HEARTS
    play(s, "9S", "3D")  # 1 step to position 2: spades
    assert s.coin == 2 and s.trumps == SPADES


def test_camp_is_not_trumps():
    s = game(build_deck(["2S", "3S", "4S", "5S", "AH"], [], []))
    assert s.up[CAMP] and s.ridge[CAMP] == c("AH") and s.trumps == rules.NO_TRUMPS


def test_expert_has_no_trumps():
    deck = build_deck(["2C", "5C", "3C", "6S", "9D"], ["8D", "2H"], ["2D", "AS"], no_suits1="H")
    outcomes = {}
    for trumps in (True, False):
        s = game(deck, Config(ropes=0, trumps=trumps))
        play(s, "8D", "2D")  # 1 step onto the 6♠
        assert s.coin == 3 and s.up[3]
        play(s, "2H", "AS")  # the ace of spades, off-suit: a trump only when uncovered cards make trumps
        outcomes[trumps] = (s.trumps, s.leader)
    assert outcomes[True] == (SPADES, 1)
    assert outcomes[False] == (rules.NO_TRUMPS, 0)


def test_passed_over_cards_stay_down():
    s = game(build_deck([], ["AS"], ["KS"]))
    play(s, "AS", "KS")  # 4 steps, to position 0
    assert s.coin == 0 and s.up == [True, False, False, False, True, False, False, False, False]


def test_zero_steps_on_end_is_safe():
    s = game(build_deck([], ["AS", "2S"], ["KS", "3S"]), Config(ropes=0))
    play(s, "AS", "KS")
    play(s, "2S", "3S")
    assert s.coin == 0 and s.outcome is None


def test_fall_without_rope():
    s = game(build_deck([], ["AS", "QS"], ["KS", "JS"]), Config(ropes=0))
    play(s, "AS", "KS", "QS", "JS")  # 4 then 3 more towards position 0
    assert s.outcome == rules.FALL and s.coin == 0
    assert rules.rewards(s) == -1.0


def test_fall_with_rope():
    s = game(build_deck(["7H"], ["AS", "QS"], ["KS", "JS"]), Config(ropes=1))
    play(s, "AS", "KS")
    play(s, "QS", "JS")
    assert s.outcome is None and s.ropes == 0 and s.coin == 0 and s.ropes_used == 1


def test_rope_catch_uncovers_and_sets_trumps():
    # player_1 wins 1 step (onto position 5), then 4 steps would reach 9: the rope holds the coin on position 8,
    # which was face down, so it is turned up and its suit (hearts) becomes trumps.
    deck = build_deck(["2S", "3S", "4S", "5S", "6S", "7S", "8S", "9S", "TH"], ["2C", "KC"], ["8C", "AC"])
    s = game(deck, Config(ropes=1))
    play(s, "2C", "8C")
    assert s.coin == 5 and s.trumps == SPADES and s.to_move == 1
    play(s, "AC", "KC")
    assert s.outcome is None and s.ropes == 0 and s.coin == 8 and s.up[8] and s.trumps == HEARTS


def test_redeal_and_dealer_alternation():
    # Thirteen 0-step tricks: nothing moves, the second deal starts, player_0 deals it and player_1 leads.
    low = [r + s for s in "CD" for r in "234567"] + ["2H"]
    high = [r + s for s in "HS" for r in "34567"] + ["2S", "8H", "9H"]
    s = game(build_deck([], low, high[:13]))
    for _ in range(13):
        rules.play(s, cards_of(rules.legal_mask(s))[0])
        rules.play(s, cards_of(rules.legal_mask(s))[0])
    assert s.deal == 2 and s.dealer == 0 and s.to_move == 1 and s.leader == 1 and s.trick_no == 0
    assert s.hands[0].bit_count() == 13 and s.hands[1].bit_count() == 13 and s.aside.bit_count() == 17
    ridge = sum(1 << card for card in s.ridge)
    assert (s.hands[0] | s.hands[1] | s.aside) & ridge == 0  # ridge cards never re-enter the deal
    assert s.played == [0, 0]


def test_out_of_deals():
    # Neither player can follow suit and only the 13th trick moves the coin: the only deal ends without a win.
    hand0 = [r + "C" for r in "234567"] + [r + "D" for r in "2345678"]
    hand1 = [r + "H" for r in "234567"] + [r + "S" for r in "2345678"]
    s = game(build_deck([], hand0, hand1), Config(max_deals=1))
    while s.outcome is None:
        rules.play(s, cards_of(rules.legal_mask(s))[0])
    assert s.outcome == rules.OUT_OF_DEALS and s.trick_no == 13 and s.coin == 2 and rules.rewards(s) == -1.0


def test_win_mid_deal():
    s = game(build_deck([], ["8S"], ["2S"]))
    for pos in range(9):
        if pos not in (CAMP, 3):
            s.up[pos] = True
    s.uncovered = 7
    play(s, "8S", "2S")  # 1 step onto position 3, the last hidden card
    assert s.outcome == rules.WIN and s.win_deal == 1 and s.trick_no == 1 and s.uncovered == 8
    assert rules.legal_mask(s) == 0 and rules.rewards(s) == 1.0


def test_levels():
    assert rules.LEVELS["easy"].ropes == 2 and rules.LEVELS["normal"].ropes == 1 and rules.LEVELS["hard"].ropes == 0
    assert rules.LEVELS["expert"] == Config(ropes=0, trumps=False)
    assert all(cfg.max_deals == 3 for cfg in rules.LEVELS.values())


def test_copy_is_independent():
    s = game(build_deck([], [], []))
    t = s.copy()
    rules.play(t, cards_of(rules.legal_mask(t))[0])
    assert s.played == [0, 0] and t.played != [0, 0]
    assert s.rng.integers(1 << 30) == t.rng.integers(1 << 30)


@pytest.mark.parametrize("seed", range(3))
def test_later_deals_are_seeded(seed):
    a, b = game(build_deck([], [], []), seed=seed), game(build_deck([], [], []), seed=seed)
    for s in (a, b):
        while s.deal == 1 and s.outcome is None:
            rules.play(s, cards_of(rules.legal_mask(s))[-1])
    assert a.hands == b.hands and a.outcome == b.outcome


def test_later_deals_reshuffle_the_cards_off_the_ridge():
    # Deal 1 is the same every time; deal 2 must come out of a fresh shuffle of the 43 cards off the ridge, so over
    # many seeds every one of them lands in each hand and aside (a fixed order would keep each card in one place).
    deck = build_deck([], QUIET_HAND0, QUIET_HAND1)
    ridge = sum(1 << c(n) for n in deck[:9])
    places = {card: set() for card in cards_of(FULL_MASK & ~ridge)}
    deals = set()
    for seed in range(200):
        s = game(deck, Config(ropes=0), seed=seed)
        while s.deal == 1:
            rules.play(s, cards_of(rules.legal_mask(s))[0])
        assert s.outcome is None and s.hands[0] | s.hands[1] | s.aside == FULL_MASK & ~ridge
        assert [s.hands[0].bit_count(), s.hands[1].bit_count(), s.aside.bit_count()] == [13, 13, 17]
        for place, mask in enumerate((s.hands[0], s.hands[1], s.aside)):
            for card in cards_of(mask):
                places[card].add(place)
        deals.add((s.hands[0], s.hands[1]))
    assert len(deals) == 200
    assert {card: len(seen) for card, seen in places.items()} == dict.fromkeys(places, 3)
