"""Rope Team's rules as pure numpy functions over many games: the one array core.

:mod:`cardzoo.envs.rope_team.rules` states the rules for one game with Python ints; this module restates the steps
that both array users need -- the batched engine (:mod:`cardzoo.envs.rope_team.batched`) and the search agent's
rollouts (:mod:`cardzoo.agents.rope_team_rollouts`) -- once, for rows of games: who wins a trick and how many steps
it pulls, the pull itself, uncovering a ridge card, what the end of a trick decides, and the next deal's hands.
Neither caller restates them; each keeps only its own bookkeeping (observations and records, or rows and slots).

Cards are ints 0..51 (suit * 13 + rank); index -1 (or 52) is "no card" in the card tables, so a row that has not
led reads suit 4 and 0 steps. Hands and card sets are 52-bit masks in ``uint64``; the face-up ridge is a bit mask
of positions (bit ``p`` = position ``p`` face up) in ``int64``.
"""

from __future__ import annotations

import numpy as np

from ..common.cards import SUIT_MASKS
from . import rules

ONE = np.uint64(1)
NO_CARD = 52
SUIT_OF = np.array([c // 13 for c in range(52)] + [4], np.int64)
RANK_OF = np.array([c % 13 for c in range(52)] + [0], np.int64)
STEPS = np.array([*rules.STEPS, 0], np.int64)
SUIT_MASK = np.array([*SUIT_MASKS, 0], np.uint64)  # by suit; 4 (no card led) and -1 (no trumps): no card
HIGHER = np.array([SUIT_MASKS[c // 13] & ~((2 << c) - 1) for c in range(52)] + [0], np.uint64)  # same suit, above
# A tie between equally valued cards goes to the lowest rank, then the first suit (the simple strategy's order).
TIE = np.array([4 * (c % 13) + c // 13 for c in range(52)] + [1000], np.int64)

_DECK = np.uint64((1 << 52) - 1)
_BYTE_COUNT = np.array([bin(b).count("1") for b in range(256)], np.int64)


def popcount(masks: np.ndarray) -> np.ndarray:
    """int64[...]: the number of cards in each uint64 mask (numpy < 2 has no bitwise_count)."""
    masks = np.ascontiguousarray(masks, np.uint64)
    return _BYTE_COUNT[masks.view(np.uint8).reshape(*masks.shape, 8)].sum(axis=-1)


def card_masks(cards: np.ndarray) -> np.ndarray:
    """uint64[...]: the mask of each row (last axis) of card ints; ``NO_CARD`` entries add nothing."""
    # NO_CARD's bit (52) lies outside the deck: dropped by the final mask (cheaper than testing every entry)
    return np.bitwise_or.reduce(ONE << np.asarray(cards).astype(np.uint64), axis=-1) & _DECK


def legal(hand: np.ndarray, led: np.ndarray) -> np.ndarray:
    """``rules.legal_mask`` for rows: the hand's cards of the suit ``led`` (-1: nothing led) if it holds any, else
    the whole hand (uint64 masks)."""
    follow = hand & SUIT_MASK[np.where(led >= 0, SUIT_OF[np.maximum(led, 0)], 4)]
    return np.where(follow != 0, follow, hand)


def second_wins(led: np.ndarray, card: np.ndarray, trumps: np.ndarray) -> np.ndarray:
    """``not rules.trick_winner`` (broadcasting): whether ``card``, played to ``led``, takes the trick. The higher
    card of the led suit wins, a trump beats any other suit."""
    return np.where(SUIT_OF[led] == SUIT_OF[card], card > led, SUIT_OF[card] == trumps)


def trick(led: np.ndarray, card: np.ndarray, leader: np.ndarray, trumps: np.ndarray
          ) -> tuple[np.ndarray, np.ndarray]:
    """The winner (seat) of each row's trick, ``card`` following ``led``, and how many places the coin moves."""
    return np.where(second_wins(led, card, trumps), 1 - leader, leader), STEPS[led] + STEPS[card]


def pull(coin: np.ndarray, ropes: np.ndarray, winner: np.ndarray, steps: np.ndarray, moving: np.ndarray
         ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``rules._pull``: the winner's side pulls the coin ``steps`` places where ``moving``; past an end a rope
    (taken from ``ropes`` in place) holds it at the last place, with none left the team falls.
    Returns the new coins, the falls and the rows whose coin moved."""
    target = np.where(winner == 0, coin - steps, coin + steps)
    beyond = moving & ((target < 0) | (target >= rules.RIDGE))
    fall = beyond & (ropes == 0)
    caught = beyond & ~fall
    ropes -= caught
    target = np.where(caught, winner * (rules.RIDGE - 1), target)
    moved = moving & ~fall
    return np.where(moved, target, coin), fall, moved


def uncover(up: np.ndarray, coin: np.ndarray, moved: np.ndarray, ridge: np.ndarray, trumps: np.ndarray,
            trumps_rule: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A coin that moved onto a face-down card turns it up, and (``trumps_rule``) its suit becomes trumps: ``up``
    and ``trumps`` are updated in place. ``ridge`` is int[N, 9], every position's card. Returns which rows
    uncovered (bool[N]), their indices and the cards they turned up (few rows turn a card: the callers' own
    bookkeeping of it touches only those)."""
    newly = moved & ((up >> coin) & 1 == 0)
    rows = np.flatnonzero(newly)
    pos = coin[rows]
    cards = ridge[rows, pos]
    up[rows] |= 1 << pos
    if trumps_rule:
        trumps[rows] = SUIT_OF[cards]
    return newly, rows, cards


def end_of_trick(uncovered: np.ndarray, newly: np.ndarray, fall: np.ndarray, trick_no: np.ndarray,
                 deal: np.ndarray, max_deals: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """What a completed trick decides, ``uncovered`` and ``trick_no`` counted after it: the rows that won (the
    last face-down card turned), the rows whose deal ended without a win or a fall, and of those the rows with no
    deal left (lost: out of deals)."""
    win = newly & (uncovered == rules.RIDGE - 1)
    end_of_deal = ~fall & ~win & (trick_no == rules.TRICKS_PER_DEAL)
    return win, end_of_deal, end_of_deal & (deal == max_deals)


def next_cards(perm: np.ndarray, on_ridge: np.ndarray) -> np.ndarray:
    """``rules._end_of_deal``'s reshuffle: int[k, 43], the cards of each permutation (int[k, 52]) that are not on
    the ridge (``on_ridge``: uint64[k] masks), in the permutation's order -- the next deal's dealing order."""
    off_ridge = (on_ridge[:, None] >> perm.astype(np.uint64)) & ONE == 0
    order = np.argsort(~off_ridge, axis=1, kind="stable")[:, : 52 - rules.RIDGE]
    return np.take_along_axis(perm, order, axis=1)


def split_hands(cards: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The masks of the two hands and of the cards set aside, dealt from ``cards`` (int[..., 43], dealing order:
    seat 0's hand, seat 1's hand, the rest)."""
    hand = rules.HAND
    return card_masks(cards[..., :hand]), card_masks(cards[..., hand : 2 * hand]), card_masks(cards[..., 2 * hand :])
