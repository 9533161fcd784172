"""Rook for Two rules, each in a hand-built position: the deck and the Rook, bidding, the Nest, the draw, scoring."""

from __future__ import annotations

import numpy as np
import pytest

from cardzoo.envs.rook import rules
from cardzoo.envs.rook.rules import (
    BID,
    BID0,
    DISCARD,
    DRAW,
    OVER,
    PASS,
    PLAY,
    ROOK,
    TAKE_HIDDEN,
    TAKE_UP,
    TRUMP,
    TRUMP0,
    bid_action,
)

C, D, H, S = range(4)
DECK_NAMES = [rules.card_name(c) for c in rules.DECK]


def c(name: str) -> int:
    return rules.NAMES[name]


def mask(*names: str) -> int:
    m = 0
    for n in names:
        m |= 1 << c(n)
    return m


def actions(m: int) -> list[int]:
    return [a for a in range(rules.N_ACTIONS) if m >> a & 1]


def build_deck(nest=(), hand0=(), hand1=(), pile=()) -> list[str]:
    """A 45-card deck (strings) with the given cards in place; the rest filled with unused cards, lowest first."""
    used = [*nest, *hand0, *hand1, *pile]
    assert len(set(used)) == len(used)
    free = [n for n in DECK_NAMES if n not in used]
    parts = []
    for given, size in ((nest, rules.NEST), (hand0, rules.HAND), (hand1, rules.HAND)):
        part = list(given)
        while len(part) < size:
            part.append(free.pop(0))
        parts.append(part)
    deck = parts[0] + parts[1] + parts[2] + list(pile) + free
    assert len(deck) == 45 and len(set(deck)) == 45
    return deck


def game(deck: list[str] | None = None, dealer: int = 1, seed: int = 0, **config) -> rules.State:
    rng = np.random.default_rng(seed)
    cards = [c(n) for n in deck] if deck is not None else rules.shuffled_deck(rng)
    return rules.new_game(rules.Config(**config), cards, rng, dealer)


def run(s: rules.State, *acts: int) -> None:
    for a in acts:
        assert rules.legal_actions(s) >> a & 1, f"action {a} is not legal in phase {rules.PHASE_NAMES[s.phase]}"
        rules.apply(s, a)


def to_play(s: rules.State, trumps: int = S, bid: int = 50) -> rules.State:
    """Non-dealer bids ``bid``, dealer passes, trumps named, the first legal cards discarded."""
    run(s, bid_action(bid), PASS, TRUMP0 + trumps)
    while s.phase == DISCARD:
        run(s, actions(rules.legal_actions(s))[0])
    return s


def play_position(hand0: list[str], hand1: list[str], trumps: int, leader: int = 0) -> rules.State:
    """A play-phase position with the given hands, the draw pile used up, player 0 the bidder at 50."""
    s = to_play(game(), trumps)
    s.hands = [mask(*hand0), mask(*hand1)]
    s.known = [0, 0]
    s.pile_pos, s.face_up = rules.PILE, None
    s.leader = s.to_move = leader
    s.bidder = 0
    return s


def random_round(s: rules.State, rng: np.random.Generator) -> None:
    """Random legal actions until the current round is over."""
    start = s.round_no
    while not s.done and s.round_no == start:
        acts = actions(rules.legal_actions(s))
        rules.apply(s, acts[rng.integers(len(acts))])


# ---------------------------------------------------------------- the deck and the Rook
def test_deck_has_45_cards_without_2s_and_3s():
    assert len(rules.DECK) == 45 and len(set(rules.DECK)) == 45
    assert not any(card % 13 < 2 for card in rules.DECK if card != ROOK)
    assert sorted(DECK_NAMES) == sorted(rules.NAMES) and rules.NAMES["XR"] == ROOK == 52
    assert "2C" not in rules.NAMES and "3S" not in rules.NAMES


def test_card_points_total_120_plus_20_for_tricks():
    assert rules.card_points(rules.DECK_MASK) == 120
    assert [rules.POINTS[c(n)] for n in ("5C", "TD", "AH", "XR", "KS", "4C", "9H")] == [5, 10, 10, 20, 0, 0, 0]
    assert rules.card_points(rules.DECK_MASK) + rules.MOST_TRICKS_BONUS == rules.ROUND_POINTS == 140


def test_rook_ranks_below_the_trump_4():
    # Hearts trumps: the Rook led, the 4 of hearts played to it wins; led the other way round, the 4 still wins.
    assert rules.second_wins(ROOK, c("4H"), H)
    assert not rules.second_wins(c("4H"), ROOK, H)


def test_rook_is_a_trump_that_beats_any_plain_card():
    assert rules.second_wins(c("AS"), ROOK, H)  # void in spades, the Rook trumps the Ace
    assert not rules.second_wins(ROOK, c("AS"), H)  # the Rook led wins against a plain card
    assert rules.effective_suit(ROOK, D) == D and rules.effective_suit(ROOK, C) == C


def test_highest_trump_wins_else_highest_of_suit_led():
    assert rules.second_wins(c("4S"), c("5S"), H)
    assert not rules.second_wins(c("9S"), c("AD"), H)  # off-suit, not trump: led card wins
    assert rules.second_wins(c("AS"), c("4H"), H)
    assert not rules.second_wins(c("KH"), c("QH"), H)


def test_follow_suit_rook_counts_as_trump():
    # Hearts trumps, hearts led: the Rook is the only "heart" player 1 holds, so it must be played.
    s = play_position(["KH", "4C"], ["XR", "AS"], trumps=H)
    run(s, c("KH"))
    assert actions(rules.legal_actions(s)) == [ROOK]


def test_follow_suit_rook_does_not_follow_a_plain_suit():
    s = play_position(["KS", "4C"], ["XR", "AS", "9D"], trumps=H)
    run(s, c("KS"))
    assert actions(rules.legal_actions(s)) == [c("AS")]  # must follow spades; the Rook is not a spade
    t = play_position(["KC", "4D"], ["XR", "AS", "9D"], trumps=H)
    run(t, c("KC"))
    assert actions(rules.legal_actions(t)) == sorted([ROOK, c("AS"), c("9D")])  # void in clubs: anything


def test_rook_led_calls_for_trumps():
    s = play_position(["XR", "4C"], ["5H", "AS", "9D"], trumps=H)
    run(s, ROOK)
    assert actions(rules.legal_actions(s)) == [c("5H")]
    run(s, c("5H"))
    assert s.last_trick[3] == 1 and s.tricks == [0, 1] and s.points == [0, 25]


def test_leader_may_lead_anything_including_the_rook():
    s = play_position(["XR", "4C", "AS"], ["5H"], trumps=D)
    assert actions(rules.legal_actions(s)) == sorted([ROOK, c("4C"), c("AS")])


# ---------------------------------------------------------------- bidding
def test_opening_bid_is_compulsory():
    s = game(dealer=1)
    assert s.phase == BID and s.to_move == 0  # the non-dealer opens
    legal = actions(rules.legal_actions(s))
    assert legal == list(range(BID0, PASS)) and PASS not in legal
    assert [rules.BID_AMOUNTS[a - BID0] for a in legal] == list(range(50, 145, 5))


def test_jump_bids_allowed_and_bids_must_rise():
    s = game()
    run(s, bid_action(60))
    assert actions(rules.legal_actions(s)) == [*range(bid_action(65), PASS), PASS]
    run(s, bid_action(120))  # a jump of 60
    assert s.high_bid == 120 and s.to_move == 0
    assert actions(rules.legal_actions(s)) == [bid_action(125), bid_action(130), bid_action(135), bid_action(140),
                                               PASS]


def test_pass_ends_bidding_and_other_wins_at_her_bid():
    s = game(dealer=0)
    assert s.to_move == 1
    run(s, bid_action(75), bid_action(80), PASS)
    assert s.phase == TRUMP and s.bidder == 0 and s.high_bid == 80 and s.to_move == 0
    assert s.bids == [(1, 75), (0, 80), (1, None)]


def test_bid_of_140_ends_bidding_at_once():
    s = game()
    run(s, bid_action(140))
    assert s.phase == TRUMP and s.bidder == 0 and s.to_move == 0 and s.bid == 140
    t = game()
    run(t, bid_action(95), bid_action(140))
    assert t.phase == TRUMP and t.bidder == 1 and t.to_move == 1


# ---------------------------------------------------------------- trumps, the Nest, discards
def test_trumps_named_before_the_nest_is_taken():
    deck = build_deck(nest=["AH", "XR", "4D"])
    s = game(deck)
    run(s, bid_action(50), PASS)
    assert s.phase == TRUMP and actions(rules.legal_actions(s)) == list(range(TRUMP0, TRUMP0 + 4))
    assert s.hands[0].bit_count() == 11 and not s.hands[0] & mask("AH", "XR", "4D")
    run(s, TRUMP0 + H)
    assert s.trumps == H and s.phase == DISCARD and s.hands[0].bit_count() == 14
    assert s.hands[0] & mask("AH", "XR", "4D") == mask("AH", "XR", "4D")


def test_discard_only_non_point_cards():
    s = game(build_deck(nest=["AH", "XR", "4D"]))
    run(s, bid_action(50), PASS, TRUMP0 + C)
    legal = actions(rules.legal_actions(s))
    assert legal and all(rules.POINTS[a] == 0 for a in legal)
    assert set(legal) == {card for card in rules.DECK if s.hands[0] >> card & 1 and not rules.POINTS[card]}
    assert not rules.legal_actions(s) >> c("AH") & 1 and not rules.legal_actions(s) >> ROOK & 1


def test_discards_set_aside_and_play_starts_with_bidder_leading():
    deck = build_deck(nest=["4D", "6D", "7D"], pile=["9S", "JS", "QS"])
    s = game(deck, dealer=0)  # player 1 opens
    run(s, bid_action(50), PASS, TRUMP0 + S, c("4D"), c("6D"), c("7D"))
    assert s.discards == mask("4D", "6D", "7D") and s.hands[1].bit_count() == 11
    assert s.phase == PLAY and s.leader == s.to_move == 1 and s.face_up == c("9S")


POINT_CARDS = ["5C", "5D", "5H", "5S", "TC", "TD", "TH", "TS", "AC", "AD", "AH", "AS", "XR"]


def test_forced_point_discard_scores_to_last_trick_winner():
    # Player 0 holds 12 point cards plus the 4 of clubs after taking the Nest (with the 13th point card in it).
    s = game(build_deck(nest=["AS", "XR", "5C"], hand0=["4C", *POINT_CARDS[1:11]]))
    run(s, bid_action(50), PASS, TRUMP0 + H)
    assert actions(rules.legal_actions(s)) == [c("4C")]  # while a non-point card is left, only it
    run(s, c("4C"))
    assert rules.legal_actions(s) == s.hands[0] and s.hands[0] & rules.POINT_MASK == s.hands[0]
    run(s, c("5D"), c("TD"))
    assert s.discards == mask("4C", "5D", "TD") and s.phase == PLAY
    rng = np.random.default_rng(1)
    while not (s.tricks[0] + s.tricks[1] == rules.TRICKS - 1 and s.led is not None):
        acts = actions(rules.legal_actions(s))
        rules.apply(s, acts[rng.integers(len(acts))])
    before = list(s.points)
    led, follow = s.led, actions(rules.legal_actions(s))[0]
    run(s, follow)
    last = s.history[-1]
    winner = last["last_trick_winner"]
    in_tricks = [before[0], before[1]]
    in_tricks[winner] += rules.POINTS[led] + rules.POINTS[follow]
    bonus = [20 if last["tricks"][i] > last["tricks"][1 - i] else 0 for i in range(2)]
    assert last["points"][winner] == in_tricks[winner] + bonus[winner] + 15  # the 5 and 10 of diamonds
    assert last["points"][1 - winner] == in_tricks[1 - winner] + bonus[1 - winner]
    assert sum(last["points"]) == 140


def test_round_points_give_discarded_points_to_last_trick_winner():
    s = game()
    s.points, s.tricks, s.discards = [50, 50], [11, 10], mask("AS", "5D", "4C")
    assert rules.round_points(s, last_winner=1) == [70, 65]
    assert rules.round_points(s, last_winner=0) == [85, 50]


# ---------------------------------------------------------------- the draw
def test_draw_choice_face_up_or_hidden():
    deck = build_deck(nest=["4D", "6D", "7D"], hand0=["KS"], hand1=["4S"], pile=["9H", "JC", "QD", "8C"])
    s = game(deck)
    run(s, bid_action(50), PASS, TRUMP0 + C, c("4D"), c("6D"), c("7D"))
    assert s.face_up == c("9H")
    run(s, c("KS"), c("4S"))
    assert s.phase == DRAW and s.to_move == 0  # the trick winner chooses
    assert actions(rules.legal_actions(s)) == [TAKE_UP, TAKE_HIDDEN]
    run(s, TAKE_UP)
    assert s.hands[0] >> c("9H") & 1 and s.hands[1] >> c("JC") & 1
    assert s.known == [mask("9H"), 0] and s.face_up == c("QD") and s.phase == PLAY and s.to_move == 0
    assert s.hands[0].bit_count() == s.hands[1].bit_count() == 11


def test_draw_hidden_gives_face_up_card_to_loser():
    deck = build_deck(nest=["4D", "6D", "7D"], hand0=["KS"], hand1=["4S"], pile=["9H", "JC", "QD", "8C"])
    s = game(deck)
    run(s, bid_action(50), PASS, TRUMP0 + C, c("4D"), c("6D"), c("7D"), c("KS"), c("4S"), TAKE_HIDDEN)
    assert s.hands[0] >> c("JC") & 1 and s.hands[1] >> c("9H") & 1 and s.known == [0, mask("9H")]
    # A known card stops being known once played.
    s.to_move = s.leader = 1
    run(s, c("9H"))
    assert s.known == [0, 0]


def test_no_draw_once_pile_is_empty_and_21_tricks():
    s = to_play(game(seed=4))
    rng = np.random.default_rng(0)
    draws = 0
    while s.round_no == 1:
        if s.phase == DRAW:
            draws += 1
        acts = actions(rules.legal_actions(s))
        rules.apply(s, acts[rng.integers(len(acts))])
    assert draws == 10
    summary = s.history[0]
    assert sum(summary["tricks"]) == 21 and summary["tricks"][0] != summary["tricks"][1]


def test_trick_winner_leads_next_trick():
    s = play_position(["4S", "9C"], ["AS", "5C"], trumps=H, leader=0)
    run(s, c("4S"), c("AS"))
    assert s.leader == s.to_move == 1 and s.phase == PLAY


# ---------------------------------------------------------------- scoring and the game's end
def end_of_round(totals, bidder, bid, points, tricks, **config) -> rules.State:
    """A state whose round ends now with the given card points and tricks (no point cards discarded)."""
    s = game(**config)
    s.totals = list(totals)
    s.bidder, s.high_bid, s.trumps = bidder, bid, S
    s.points, s.tricks, s.discards = list(points), list(tricks), 0
    s.bids = [(bidder, bid)]
    rules._end_round(s, last_winner=0)
    return s


def test_most_tricks_bonus():
    s = end_of_round([0, 0], 0, 50, [60, 60], [12, 9])
    assert s.history[0]["points"] == [80, 60]
    t = end_of_round([0, 0], 0, 50, [60, 60], [10, 11])
    assert t.history[0]["points"] == [60, 80]


def test_bidder_who_makes_exactly_her_bid_adds_her_points():
    s = end_of_round([100, 30], bidder=1, bid=80, points=[60, 60], tricks=[10, 11])
    assert s.history[0]["made"] and s.totals == [160, 110] and s.history[0]["score"] == [60, 80]


def test_set_bidder_loses_bid_and_other_still_scores():
    s = end_of_round([100, 30], bidder=0, bid=95, points=[70, 50], tricks=[12, 9])  # 90 < 95
    assert not s.history[0]["made"] and s.totals == [5, 80] and s.history[0]["score"] == [-95, 50]
    assert s.outcome is None and s.phase == BID and s.round_no == 2


def test_negative_totals_allowed():
    s = end_of_round([0, 0], bidder=0, bid=140, points=[30, 90], tricks=[5, 16])
    assert s.totals == [-140, 110] and s.outcome is None and s.phase == BID


def test_set_bidder_falling_to_minus_target_loses():
    s = end_of_round([-440, 0], bidder=0, bid=60, points=[20, 100], tricks=[5, 16])
    assert s.totals == [-500, 120] and s.outcome == "bidder_fell" and s.winner == 1 and s.phase == OVER


def test_game_ends_when_a_total_reaches_target():
    s = end_of_round([420, 100], bidder=0, bid=60, points=[60, 60], tricks=[11, 10])
    assert s.totals == [500, 160] and s.outcome == "win" and s.winner == 0 and s.phase == OVER
    t = end_of_round([300, 490], bidder=0, bid=120, points=[60, 60], tricks=[11, 10])  # non-bidder goes out
    assert t.totals == [180, 550] and t.winner == 1


def test_both_past_target_in_one_round_bidder_wins():
    s = end_of_round([450, 480], bidder=0, bid=60, points=[60, 60], tricks=[11, 10])
    assert s.totals == [530, 540] and s.outcome == "win" and s.winner == 0  # the bidder, though lower
    t = end_of_round([440, 450], bidder=1, bid=70, points=[60, 60], tricks=[10, 11])
    assert t.totals == [500, 530] and t.winner == 1


def test_equal_totals_past_target_bidder_wins():
    s = end_of_round([440, 460], bidder=0, bid=60, points=[80, 40], tricks=[11, 10])
    assert s.totals == [540, 500] and s.winner == 0
    t = end_of_round([460, 440], bidder=1, bid=60, points=[40, 60], tricks=[10, 11])
    assert t.totals == [500, 520] and t.winner == 1
    u = end_of_round([450, 450], bidder=1, bid=50, points=[60, 40], tricks=[10, 11])
    assert u.totals == [510, 510] and u.winner == 1  # a dead heat goes to the bidder too


def test_dealer_alternates_and_non_dealer_opens():
    s = game(dealer=1, seed=3)
    rng = np.random.default_rng(2)
    for expected_dealer in (1, 0, 1):
        assert s.dealer == expected_dealer and s.to_move == 1 - expected_dealer and s.phase == BID
        random_round(s, rng)
        if s.done:
            break
    assert [h["dealer"] for h in s.history[:2]] == [1, 0]


def test_rounds_limit_ends_episode():
    s = game(seed=5, rounds=1)
    random_round(s, np.random.default_rng(0))
    assert s.outcome == "rounds_done" and s.phase == OVER and rules.legal_actions(s) == 0
    totals = s.totals
    assert s.winner == (None if totals[0] == totals[1] else int(totals[1] > totals[0]))


def test_deck_mapping():
    deck = build_deck(nest=["XR", "AH", "4C"], hand0=["KS", "QS"], hand1=["JD"], pile=["9C", "8C"])
    s = game(deck)
    assert s.nest == mask("XR", "AH", "4C")
    assert s.hands[0] == mask(*deck[3:14]) and s.hands[1] == mask(*deck[14:25])
    assert s.pile == [c(n) for n in deck[25:]] and s.pile[:2] == [c("9C"), c("8C")]


@pytest.mark.parametrize("seed", range(3))
def test_copy_is_independent(seed):
    s = to_play(game(seed=seed))
    t = s.copy()
    random_round(t, np.random.default_rng(seed))
    assert s.round_no == 1 and s.phase == PLAY and s.hands[0].bit_count() == 11 and t.round_no == 2
