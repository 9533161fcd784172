"""The heuristic Rook player's choice (:class:`cardzoo.agents.rook_heuristic.RookHeuristic`) for N observations at
once, in array operations: :func:`choices`.

Card sets are bool[N, 53] (card ids as the rules number them, the Rook 52). Every value the heuristic compares is
computed with the same floating-point operations in the same order as the scalar player (sums of card values
accumulated card by card in ascending order, as its Python loops do), so ties and near-ties fall the same way; the
constants are the player's own (imported, not restated). The tests compare both on thousands of decisions.
"""

from __future__ import annotations

import numpy as np

from cardzoo.envs.rook.observer import LAYOUT
from cardzoo.envs.rook.rules import (
    BID0,
    BID_STEP,
    DECK,
    MIN_BID,
    N_CARDS,
    PASS,
    POINTS,
    ROOK,
    TAKE_HIDDEN,
    TAKE_UP,
    TRICKS,
    TRUMP0,
)  # fmt: skip

from .rook_heuristic import (
    BID,
    BID_MARGIN,
    BID_WEIGHTS,
    DISCARD,
    DRAW,
    MASTER_TRUMP,
    PLAY,
    REPLY_POINTS,
    SHORT_OF_TRUMPS,
    SIDE_MASTER,
    SIDE_RANK,
    TRICK_DRAW,
    TRICK_LEAD,
    TRICK_MOST,
    TRUMP,
    TRUMP_KEEP,
    TRUMP_RANK,
)  # fmt: skip

_L = {name: LAYOUT[name] for name in LAYOUT.offsets}
_CARD = np.arange(N_CARDS)
_RANK = _CARD % 13
_SUIT = np.where(_CARD == ROOK, 4, _CARD // 13)  # 4: the Rook, in no suit of its own
_POINTS = np.array(POINTS, np.int64)
_IN_DECK = np.isin(_CARD, DECK)
_SUIT_OF = np.zeros((5, N_CARDS), bool)  # [suit, card]: SUIT_MASKS (the Rook in none)
_SUIT_OF[_SUIT[:52], _CARD[:52]] = True
_HIGH = (_RANK >= 9) & (_CARD < ROOK)  # J, Q, K, A
_ACE = (_RANK == 12) & (_CARD < ROOK)


def _index(piece: np.ndarray) -> np.ndarray:
    """The last set entry of each row, -1 if none (the observer's ``_one_hot``)."""
    width = piece.shape[1]
    hit = piece.astype(bool)
    return np.where(hit.any(axis=1), width - 1 - hit[:, ::-1].argmax(axis=1), -1)


def _above(cards: np.ndarray) -> np.ndarray:
    """bool[N, 53]: whether ``cards`` (bool[N, 53]) hold a card of the same suit ranked above each card (the
    heuristic's ``_ABOVE[c] & cards``; nothing is above the Rook)."""
    suits = (cards[:, :52] & _IN_DECK[:52]).reshape(-1, 4, 13)
    # cards at or above each rank, then shifted one rank down: strictly above
    at_or_above = np.flip(np.cumsum(np.flip(suits, axis=2), axis=2), axis=2) > 0
    above = np.zeros_like(at_or_above)
    above[:, :, :-1] = at_or_above[:, :, 1:]
    return np.concatenate([above.reshape(-1, 52), np.zeros((len(cards), 1), bool)], axis=1)


def _none_held(n: np.ndarray, pool: np.ndarray, drawn: np.ndarray) -> np.ndarray:
    """``rook_heuristic._none_held`` elementwise: the chance that ``drawn`` cards from ``pool`` miss ``n`` ones."""
    p = np.ones(np.broadcast(n, pool, drawn).shape)
    for i in range(int(np.max(drawn, initial=0))):
        active = (n > 0) & (i < drawn) & (pool - i > 0)
        with np.errstate(divide="ignore", invalid="ignore"):
            factor = np.maximum(0.0, (pool - n - i) / (pool - i))
        p = np.where(active, p * factor, p)
    return p


def _best_trumps(hand: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The best trump suit of each hand (``best_trumps``) and the hand's cards in each suit (bool[N, 4, 53])."""
    in_suit = hand[:, None, :] & _SUIT_OF[None, :4]
    score = in_suit.sum(axis=2) + 0.35 * (in_suit * np.maximum(0, _RANK - 7)).sum(axis=2)
    return score.argmax(axis=1), in_suit  # the first best suit: ties to the lower suit


def _bid_limits(hand: np.ndarray) -> np.ndarray:
    """``bid_limit``: the estimate of the points taken with the best trump suit, less the margin, in fives."""
    suit, in_suit = _best_trumps(hand)
    at = np.arange(len(hand))
    trumps = in_suit[at, suit]
    rook = hand[:, ROOK].astype(np.int64)
    off_aces = (hand & _ACE).reshape(len(hand), -1)[:, :52].reshape(-1, 4, 13).any(axis=2)
    off_aces[at, suit] = False
    features = (np.ones(len(hand)), trumps.sum(axis=1) + rook, (trumps & _HIGH).sum(axis=1), rook,
                off_aces.sum(axis=1), (hand * _POINTS).sum(axis=1))
    value = np.zeros(len(hand))
    for weight, feature in zip(BID_WEIGHTS, features, strict=True):  # summed in the scalar's order
        value = value + weight * feature
    return (np.floor_divide(value - BID_MARGIN, BID_STEP) * BID_STEP).astype(np.int64)


class _Views:
    """``rook_heuristic._View`` for rows of observations: the cards by where they are, and the card values."""

    def __init__(self, obs: np.ndarray):
        n = len(obs)
        cards = lambda name: obs[:, _L[name]].astype(bool)  # noqa: E731
        self.hand = hand = cards("hand")
        self.trumps = _index(obs[:, _L["trumps"]])
        self.trump = np.where((self.trumps >= 0)[:, None], _SUIT_OF[self.trumps.clip(0)] | (_CARD == ROOK), False)
        self.led = _index(obs[:, _L["led"]])
        self.face_up = _index(obs[:, _L["face_up"]])
        self.opp_known = opp_known = cards("opp_known")
        played = cards("played_self") | cards("played_opp")
        self.unseen = _IN_DECK & ~(hand | played | cards("discards") | cards("face_up") | opp_known)
        led_by_opp = (self.led >= 0) & (obs[:, _L["led_by_self"]][:, 0] == 0)
        self.opp_hand_size = hand.sum(axis=1) - led_by_opp
        out = (self.unseen | opp_known) & self.trump
        my_trumps = (hand & self.trump).sum(axis=1)
        top = np.where(out[:, :ROOK].any(axis=1), ROOK - 1 - out[:, ROOK - 1 :: -1].argmax(axis=1), -1)
        self.master = hand & self.trump & (_CARD != ROOK) & (_CARD > top[:, None])
        short = out.sum(axis=1) >= my_trumps
        most = np.maximum(_index(obs[:, _L["tricks_self"]]), _index(obs[:, _L["tricks_opp"]]))
        self.trick = (TRICK_LEAD + np.where(2 * most < TRICKS, TRICK_MOST, 0.0)) + np.where(
            self.face_up >= 0, TRICK_DRAW, 0.0)
        # keep values of every card, as ``_View.keep``
        trump_value = TRUMP_KEEP + np.where(_CARD == ROOK, 0.0, TRUMP_RANK * (_RANK - 1))
        trump_value = trump_value + np.where(self.master & (_CARD != ROOK), MASTER_TRUMP, 0.0)
        trump_value = trump_value + np.where(short[:, None], SHORT_OF_TRUMPS, 0.0)
        side_value = SIDE_RANK * np.maximum(0, _RANK - 7) + np.where(_above(self.unseen | opp_known), 0.0,
                                                                     SIDE_MASTER)
        self.keep = np.where(self.trump, trump_value, np.broadcast_to(side_value, (n, N_CARDS)))

    def draw_value(self) -> np.ndarray:
        return self.keep + 0.5 * _POINTS

    def lead_wins(self) -> np.ndarray:
        """float[N, 53]: the chance that the opponent cannot beat each card led now (``_View.lead_wins``)."""
        n = len(self.hand)
        is_trump = self.trump
        pool = self.unseen.sum(axis=1)[:, None]
        drawn = np.maximum(0, self.opp_hand_size - self.opp_known.sum(axis=1))[:, None]
        # the cards above each card: its suit's higher cards; for the Rook as trump, every other trump
        above_unseen = _above_counts(self.unseen)
        above_known = _above(self.opp_known)
        other_trumps_unseen = (self.unseen & self.trump & (_CARD != ROOK)).sum(axis=1)
        other_trumps_known = (self.opp_known & self.trump & (_CARD != ROOK)).any(axis=1)
        rook_trump = is_trump & (_CARD == ROOK)
        above_unseen = np.where(rook_trump, other_trumps_unseen[:, None], above_unseen)
        above_known = np.where(rook_trump, other_trumps_known[:, None], above_known)
        p = _none_held(above_unseen, pool, drawn)
        side = ~is_trump & self.trump.any(axis=1)[:, None]
        suit_unseen = (self.unseen[:, None, :] & _SUIT_OF[None]).sum(axis=2)[:, _SUIT]  # [N, 53]
        suit_known = (self.opp_known[:, None, :] & _SUIT_OF[None]).any(axis=2)[:, _SUIT]
        trumps_unseen = (self.trump & self.unseen).sum(axis=1)[:, None]
        trumps_known = (self.trump & self.opp_known).any(axis=1)[:, None]
        void = _none_held(suit_unseen, pool, drawn)
        has_trump = np.where(trumps_known, 1.0, 1.0 - _none_held(trumps_unseen, pool, drawn))
        p = np.where(side & ~suit_known, p * (1.0 - void * has_trump), p)
        return np.where(above_known, 0.0, np.broadcast_to(p, (n, N_CARDS)))


def _above_counts(cards: np.ndarray) -> np.ndarray:
    """int[N, 53]: how many of ``cards`` are of the same suit and ranked above each card (0 for the Rook)."""
    suits = (cards[:, :52] & _IN_DECK[:52]).reshape(-1, 4, 13).astype(np.int64)
    at_or_above = np.flip(np.cumsum(np.flip(suits, axis=2), axis=2), axis=2)
    above = np.zeros_like(at_or_above)
    above[:, :, :-1] = at_or_above[:, :, 1:]
    return np.concatenate([above.reshape(-1, 52), np.zeros((len(cards), 1), np.int64)], axis=1)


def _first_best(score: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """The first legal card of the highest score in each row (the scalar's strict ``>`` over ascending cards)."""
    return np.where(legal, score, -np.inf).argmax(axis=1)


def choices(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """int64[N]: ``RookHeuristic().act(obs[i], mask[i])`` for every row with a legal action (-1 for the others)."""
    n = len(obs)
    legal = mask.astype(bool)
    out = np.full(n, -1, np.int64)
    phase = _index(obs[:, _L["phase"]])
    deciding = legal.any(axis=1)
    hand = obs[:, _L["hand"]].astype(bool)

    rows = np.flatnonzero(deciding & (phase == BID))
    if len(rows):
        bids = legal[rows].copy()
        bids[:, PASS] = False
        lowest = bids.argmax(axis=1)  # the lowest legal bid (bids come before PASS)
        amount = MIN_BID + (lowest - BID0) * BID_STEP
        out[rows] = np.where((amount <= _bid_limits(hand[rows])) | ~legal[rows, PASS], lowest, PASS)
    rows = np.flatnonzero(deciding & (phase == TRUMP))
    if len(rows):
        out[rows] = TRUMP0 + _best_trumps(hand[rows])[0]
    rows = np.flatnonzero(deciding & np.isin(phase, (DISCARD, PLAY, DRAW)))
    if len(rows):
        out[rows] = _card_choices(obs[rows], legal[rows], phase[rows])
    rows = np.flatnonzero(deciding & (out < 0))  # no phase (not reached): the first legal action
    out[rows] = legal[rows].argmax(axis=1)
    return out


def _card_choices(obs: np.ndarray, legal: np.ndarray, phase: np.ndarray) -> np.ndarray:
    """The choices of rows in the discard, draw and play phases, each phase's rows viewed together."""
    out = np.full(len(obs), -1, np.int64)
    cards = legal[:, :N_CARDS]
    led = _index(obs[:, _L["led"]])
    for rows, choose in ((phase == DISCARD, _discard), (phase == DRAW, _draw), ((phase == PLAY) & (led >= 0), _follow),
                         ((phase == PLAY) & (led < 0), _lead)):
        if rows.any():
            out[rows] = choose(_Views(obs[rows]), cards[rows])
    return out


def _discard(view: _Views, cards: np.ndarray) -> np.ndarray:
    suit_count = (view.hand[:, None, :] & _SUIT_OF[None]).sum(axis=2)[:, _SUIT]  # the Rook: suit 4, none
    side = (view.keep + 0.3 * suit_count) + 0.2 * _POINTS
    keep = np.where(view.trump, 100.0 + view.keep, side)
    return np.where(cards, keep, np.inf).argmin(axis=1)  # ties to the lower card


def _draw(view: _Views, cards: np.ndarray) -> np.ndarray:
    value = view.draw_value()
    pool = view.unseen
    total = np.cumsum(np.where(pool, value, 0.0), axis=1)[:, -1]  # card by card, as the scalar's sum
    count = pool.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = np.where(count > 0, total / count, 0.0)
    up = view.face_up
    take_up = value[np.arange(len(up)), up.clip(0)] >= mean
    return np.where(up < 0, TAKE_HIDDEN, np.where(take_up, TAKE_UP, TAKE_HIDDEN))


def _follow(view: _Views, cards: np.ndarray) -> np.ndarray:
    led = view.led
    trumps = view.trumps
    stake = (_POINTS[led][:, None] + _POINTS[None, :]) + view.trick[:, None]
    led_suit = np.where(led == ROOK, trumps, _SUIT[led])
    card_suit = np.where(_CARD == ROOK, trumps[:, None], _SUIT[None, :])
    rank = lambda c: np.where(c == ROOK, 1, c % 13)  # noqa: E731 (the Rook ranks as the 3 of trumps)
    wins = np.where(card_suit == led_suit[:, None], rank(_CARD)[None, :] > rank(led)[:, None],
                    card_suit == trumps[:, None])
    score = np.where(wins, stake, -stake) - view.keep
    return _first_best(score, cards)


def _lead(view: _Views, cards: np.ndarray) -> np.ndarray:
    p = view.lead_wins()
    t = view.trick[:, None]
    score = (p * (_POINTS + t) - (1.0 - p) * ((_POINTS + REPLY_POINTS) + t)) - view.keep
    return _first_best(score, cards)
