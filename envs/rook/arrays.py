"""Rook for Two's rules as pure numpy functions over many games: the array core.

:mod:`cardzoo.envs.rook.rules` states the rules for one game with Python ints; this module restates the steps an
array user needs -- the batched engine (:mod:`cardzoo.envs.rook.batched`), and search rollouts over many worlds --
once, for rows of games: a round's deal, the legal cards to play or discard and the bids allowed, who wins a trick,
and a round's score and what it decides. Each caller keeps only its own bookkeeping (observations and records, or
worlds).

Cards are the rules' ids 0..52 (52 the Rook); card sets are 53-bit masks in ``uint64``; "no card" (nothing led,
no trumps named) is -1 where a row may hold it, and the functions read it as card 0 / clubs where its value does not
matter.
"""

from __future__ import annotations

import numpy as np

from . import rules

ONE = np.uint64(1)
DECK = np.array(rules.DECK, np.int8)
SUIT = np.array([c // 13 for c in range(52)] + [-1], np.int64)  # -1: the Rook, whose suit is trumps
RANK = np.array([c % 13 for c in range(52)] + [rules.ROOK_RANK], np.int64)
POINTS = np.array(rules.POINTS, np.int64)
# the cards that follow a led card, by (led card, trumps)
FOLLOW = np.array([[rules.follow_mask(c, t) for t in range(4)] for c in range(rules.N_CARDS)], np.uint64)
NO_POINTS = np.uint64(((1 << rules.N_CARDS) - 1) & ~rules.POINT_MASK)
BID_AMOUNT = np.array(rules.BID_AMOUNTS, np.int64)
ALL_BIDS = (1 << len(rules.BID_AMOUNTS)) - 1
HAND_END = rules.NEST + rules.HAND  # deck[NEST:HAND_END] is player 0's hand
OUTCOMES = ("win", "bidder_fell", "rounds_done", rules.ROUND_LIMIT)  # game_end's codes 0..3


def deal(deck: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``rules._start_round``'s split of ``deck`` (int[k, 45], the deal order): the Nest, the two hands (uint64
    masks) and the draw pile (int[k, 20], from the top)."""
    cards = ONE << deck.astype(np.uint64)
    return (np.bitwise_or.reduce(cards[:, : rules.NEST], axis=1),
            np.bitwise_or.reduce(cards[:, rules.NEST : HAND_END], axis=1),
            np.bitwise_or.reduce(cards[:, HAND_END : HAND_END + rules.HAND], axis=1),
            deck[:, HAND_END + rules.HAND :].astype(np.int64))


def playable(hand: np.ndarray, led: np.ndarray, trumps: np.ndarray) -> np.ndarray:
    """``rules.legal_actions`` in the play phase: the cards of ``hand`` that follow ``led`` (-1: none led, any card),
    the whole hand when none does."""
    follow = hand & FOLLOW[np.maximum(led, 0), np.maximum(trumps, 0)]
    return np.where((led >= 0) & (follow != 0), follow, hand)


def discardable(hand: np.ndarray) -> np.ndarray:
    """The cards the bid winner may discard: point cards only once no other card is left (ruling)."""
    keep = hand & NO_POINTS
    return np.where(keep != 0, keep, hand)


def bids_allowed(high: np.ndarray) -> np.ndarray:
    """uint64 masks over the bid amounts' indices: those above ``high`` (-1: no bid yet, every amount)."""
    return np.where(high >= 0, (ALL_BIDS >> (high + 1)) << (high + 1), ALL_BIDS).astype(np.uint64)


def second_wins(led: np.ndarray, card: np.ndarray, trumps: np.ndarray) -> np.ndarray:
    """``rules.second_wins``: whether ``card``, played second, beats ``led`` (trumps named: 0..3)."""
    led_suit = np.where(led == rules.ROOK, trumps, SUIT[led])
    suit = np.where(card == rules.ROOK, trumps, SUIT[card])
    return np.where(suit == led_suit, RANK[card] > RANK[led], suit == trumps)


def round_score(points: np.ndarray, tricks: np.ndarray, last_winner: np.ndarray, discard_points: np.ndarray,
                bidder: np.ndarray, bid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``rules.round_points`` and the contract (``rules._end_round``): each seat's points for the round (int[k, 2]:
    cards won, 20 for most tricks, the discards' points to the last trick's winner) and the change of each total
    (the bidder's points if she made ``bid``, else minus ``bid``)."""
    k = np.arange(len(points))
    pts = points.copy()
    pts[k, np.where(tricks[:, 0] > tricks[:, 1], 0, 1)] += rules.MOST_TRICKS_BONUS
    pts[k, last_winner] += discard_points
    delta = pts.copy()
    delta[k, bidder] = np.where(pts[k, bidder] >= bid, pts[k, bidder], -bid)
    return pts, delta


def game_end(totals: np.ndarray, bidder: np.ndarray, round_no: np.ndarray, config: rules.Config
             ) -> tuple[np.ndarray, np.ndarray]:
    """What ``rules._end_round`` decides after the totals (int[k, 2]) of a round: the outcome (an index into
    ``OUTCOMES``, -1 when the game goes on) and the winner (seat, -1 for none)."""
    k = np.arange(len(totals))
    over0, over1 = totals[:, 0] >= config.target_score, totals[:, 1] >= config.target_score
    won = over0 | over1
    fell = ~won & (totals[k, bidder] <= -config.target_score)
    done_rounds = ~won & ~fell & (config.rounds is not None) & (round_no >= (config.rounds or 0))
    cut = ~won & ~fell & ~done_rounds & (round_no >= config.max_rounds)
    tie = totals[:, 0] == totals[:, 1]
    leading = np.where(totals[:, 0] > totals[:, 1], 0, 1)
    winner = np.select([won, fell, done_rounds & ~tie],
                       [np.where(over0 & over1, bidder, np.where(over0, 0, 1)), 1 - bidder, leading], -1)
    return np.select([won, fell, done_rounds, cut], [0, 1, 2, 3], -1), winner
