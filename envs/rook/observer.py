"""What one Rook for Two player may see, as a labelled 0/1 vector and as a readable dict.

Everything is seen from the viewer's chair: "self" and "opp" (the opponent) replace seat numbers, so one policy can
play either seat. Card pieces have 53 entries: the card ids of :mod:`cardzoo.envs.rook.rules` (``suit * 13 + rank``,
entry 52 the Rook; the entries of the 2s and 3s are always 0).

Never in the vector: the opponent's cards other than those she is known to hold, the face-down draw pile, and,
unless the viewer is the bid winner who has taken it, the Nest and the discards.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ..common.cards import SUIT_NAMES
from ..common.layout import Layout
from .rules import (
    BID_AMOUNTS,
    BID_STEP,
    BID_TRUMP_PHASES,
    MIN_BID,
    N_CARDS,
    PHASE_NAMES,
    ROUND_POINTS,
    TRICKS,
    State,
    card_name,
)  # fmt: skip

N_BIDS = len(BID_AMOUNTS)
POINT_LEVELS = 25  # card points in tricks so far, 0..120 in fives
TOTAL_BITS = 8  # |running total| / 5 in binary, capped at 255 (1275 points)

LAYOUT = Layout(
    ("hand", N_CARDS, "cards in the viewer's hand"),
    ("phase", 5, "the phase: bid, trump, discard, play, draw (all 0 once the episode is over)"),
    ("bids_self", N_BIDS, "amounts 50, 55, ..., 140 the viewer has bid this round"),
    ("bids_opp", N_BIDS, "amounts the opponent has bid this round (bids only rise, so this is the whole history)"),
    ("passed_self", 1, "1 if the viewer passed (ending the bidding)"),
    ("passed_opp", 1, "1 if the opponent passed"),
    ("high_bid", N_BIDS, "the highest bid so far, one-hot over 50..140 (the contract once bidding is over)"),
    ("bidder_self", 1, "1 if the viewer won the bid"),
    ("bidder_opp", 1, "1 if the opponent won the bid"),
    ("trumps", 4, "trumps: clubs, diamonds, hearts, spades (all 0 until named)"),
    ("nest", N_CARDS, "the 3 Nest cards, for the bid winner once she has taken them; zeros for everyone else"),
    ("discards", N_CARDS, "the cards the viewer discarded as bid winner; zeros for the other player"),
    ("face_up", N_CARDS, "the face-up card on the draw pile, if any"),
    ("opp_known", N_CARDS, "cards the opponent is known to hold: face-up cards she took or was given, until played"),
    ("self_known", N_CARDS, "the viewer's cards the opponent knows of (face-up cards the viewer got), until played"),
    ("played_self", N_CARDS, "cards the viewer has played this round"),
    ("played_opp", N_CARDS, "cards the opponent has played this round"),
    ("led", N_CARDS, "the card led to the current trick, if one has been led"),
    ("led_by_self", 1, "1 if the viewer led that card"),
    ("tricks_self", TRICKS + 1, "tricks the viewer has won this round, one-hot 0..21"),
    ("tricks_opp", TRICKS + 1, "tricks the opponent has won this round, one-hot 0..21"),
    ("points_self", POINT_LEVELS, "card points in the viewer's tricks this round, one-hot 0, 5, ..., 120"),
    ("points_opp", POINT_LEVELS, "card points in the opponent's tricks this round, one-hot 0, 5, ..., 120"),
    ("total_self_neg", 1, "1 if the viewer's running total is negative"),
    ("total_self", TOTAL_BITS, "|viewer's running total| / 5 in binary, least significant bit first (max 255)"),
    ("total_opp_neg", 1, "1 if the opponent's running total is negative"),
    ("total_opp", TOTAL_BITS, "|opponent's running total| / 5 in binary, least significant bit first"),
    ("self_dealt", 1, "1 if the viewer dealt this round (the other player opens the bidding)"),
    ("self_to_move", 1, "1 if it is the viewer's turn"),
)

_O = LAYOUT.offsets
_HAND, _NEST, _DISCARDS, _FACE_UP, _OPP_KNOWN, _SELF_KNOWN, _PLAYED_SELF, _PLAYED_OPP, _LED = (
    _O[n] for n in ("hand", "nest", "discards", "face_up", "opp_known", "self_known", "played_self", "played_opp",
                    "led"))
_PHASE, _BIDS_SELF, _BIDS_OPP, _HIGH_BID, _TRUMPS = (_O[n] for n in ("phase", "bids_self", "bids_opp", "high_bid",
                                                                      "trumps"))
_TRICKS_SELF, _TRICKS_OPP, _POINTS_SELF, _POINTS_OPP = (_O[n] for n in ("tricks_self", "tricks_opp", "points_self",
                                                                        "points_opp"))
_TOTAL_SELF, _TOTAL_OPP = _O["total_self"], _O["total_opp"]
_PASSED_SELF, _PASSED_OPP, _BIDDER_SELF, _BIDDER_OPP, _LED_BY_SELF, _SELF_DEALT, _SELF_TO_MOVE = (
    1 << _O[n] for n in ("passed_self", "passed_opp", "bidder_self", "bidder_opp", "led_by_self", "self_dealt",
                         "self_to_move"))
_TOTAL_SELF_NEG, _TOTAL_OPP_NEG = 1 << _O["total_self_neg"], 1 << _O["total_opp_neg"]
_MAX_TOTAL = (1 << TOTAL_BITS) - 1


_CARDS = (1 << N_CARDS) - 1


class Observation(NamedTuple):
    """An observation read back from its bits (:func:`decode`): card pieces as card masks, one-hot pieces as the
    index of their entry (-1 if none is set), bid pieces as masks over the bid amounts' indices, flags as bools."""

    hand: int
    phase: int  # bid, trump, discard, play, draw = 0..4; -1 once the episode is over
    bids_self: int
    bids_opp: int
    passed_self: bool
    passed_opp: bool
    high_bid: int  # index into BID_AMOUNTS
    bidder_self: bool
    bidder_opp: bool
    trumps: int  # suit
    nest: int
    discards: int
    face_up: int  # a card mask (one card or none)
    opp_known: int
    self_known: int
    played_self: int
    played_opp: int
    led: int  # a card mask (one card or none)
    led_by_self: bool
    tricks_self: int
    tricks_opp: int
    points_self: int  # card points / 5
    points_opp: int
    total_self: int  # running total / 5, signed
    total_opp: int
    self_dealt: bool
    self_to_move: bool


def _one_hot(bits: int, offset: int, size: int) -> int:
    return (bits >> offset & ((1 << size) - 1)).bit_length() - 1


def decode(bits: int) -> Observation:
    """The observation ``bits`` (bit i = entry i of :data:`LAYOUT`) as labelled pieces: what bit-level agents read."""
    bid_mask = (1 << N_BIDS) - 1
    total_mask = (1 << TOTAL_BITS) - 1
    return Observation(
        hand=bits >> _HAND & _CARDS, phase=_one_hot(bits, _PHASE, 5), bids_self=bits >> _BIDS_SELF & bid_mask,
        bids_opp=bits >> _BIDS_OPP & bid_mask, passed_self=bool(bits & _PASSED_SELF),
        passed_opp=bool(bits & _PASSED_OPP), high_bid=_one_hot(bits, _HIGH_BID, N_BIDS),
        bidder_self=bool(bits & _BIDDER_SELF), bidder_opp=bool(bits & _BIDDER_OPP),
        trumps=_one_hot(bits, _TRUMPS, 4), nest=bits >> _NEST & _CARDS, discards=bits >> _DISCARDS & _CARDS,
        face_up=bits >> _FACE_UP & _CARDS, opp_known=bits >> _OPP_KNOWN & _CARDS,
        self_known=bits >> _SELF_KNOWN & _CARDS, played_self=bits >> _PLAYED_SELF & _CARDS,
        played_opp=bits >> _PLAYED_OPP & _CARDS, led=bits >> _LED & _CARDS, led_by_self=bool(bits & _LED_BY_SELF),
        tricks_self=_one_hot(bits, _TRICKS_SELF, TRICKS + 1), tricks_opp=_one_hot(bits, _TRICKS_OPP, TRICKS + 1),
        points_self=_one_hot(bits, _POINTS_SELF, POINT_LEVELS), points_opp=_one_hot(bits, _POINTS_OPP, POINT_LEVELS),
        total_self=(bits >> _TOTAL_SELF & total_mask) * (-1 if bits & _TOTAL_SELF_NEG else 1),
        total_opp=(bits >> _TOTAL_OPP & total_mask) * (-1 if bits & _TOTAL_OPP_NEG else 1),
        self_dealt=bool(bits & _SELF_DEALT), self_to_move=bool(bits & _SELF_TO_MOVE),
    )


# Per-value bit tables, computed once: the observer runs every step.
_POINTS_SELF_BITS = tuple(1 << (_POINTS_SELF + min(p // 5, POINT_LEVELS - 1)) for p in range(ROUND_POINTS + 1))
_POINTS_OPP_BITS = tuple(1 << (_POINTS_OPP + min(p // 5, POINT_LEVELS - 1)) for p in range(ROUND_POINTS + 1))
_TOTALS_CACHE: dict[tuple[int, int], int] = {}


def _total_bits(total: int, offset: int, neg_bit: int) -> int:
    level = min(abs(total) // 5, _MAX_TOTAL)
    return level << offset | (neg_bit if total < 0 else 0)


def _totals_bits(own: int, opp: int) -> int:
    key = (own, opp)
    bits = _TOTALS_CACHE.get(key)
    if bits is None:
        if len(_TOTALS_CACHE) > 100_000:
            _TOTALS_CACHE.clear()
        bits = _total_bits(own, _TOTAL_SELF, _TOTAL_SELF_NEG) | _total_bits(opp, _TOTAL_OPP, _TOTAL_OPP_NEG)
        _TOTALS_CACHE[key] = bits
    return bits


def observe_bits(s: State, seat: int) -> int:
    """The observation of ``seat`` as one int (bit i = entry i of the vector)."""
    opp = 1 - seat
    bits = (s.hands[seat] << _HAND | s.played[seat] << _PLAYED_SELF | s.played[opp] << _PLAYED_OPP
            | s.known[opp] << _OPP_KNOWN | s.known[seat] << _SELF_KNOWN
            | 1 << (_TRICKS_SELF + s.tricks[seat]) | 1 << (_TRICKS_OPP + s.tricks[opp])
            | _POINTS_SELF_BITS[s.points[seat]] | _POINTS_OPP_BITS[s.points[opp]]
            | _totals_bits(s.totals[seat], s.totals[opp]))
    phase = s.phase
    if phase < 5:
        bits |= 1 << (_PHASE + phase)
        if s.to_move == seat:
            bits |= _SELF_TO_MOVE
    if s.dealer == seat:
        bits |= _SELF_DEALT
    for who, amount in s.bids:
        if amount is None:
            bits |= _PASSED_SELF if who == seat else _PASSED_OPP
        else:
            bits |= 1 << ((_BIDS_SELF if who == seat else _BIDS_OPP) + (amount - MIN_BID) // BID_STEP)
    if s.high_bid is not None:
        bits |= 1 << (_HIGH_BID + (s.high_bid - MIN_BID) // BID_STEP)
    bidder = s.bidder
    if bidder is not None:
        if bidder == seat:
            bits |= _BIDDER_SELF
            if phase not in BID_TRUMP_PHASES:  # the Nest is in her hand from the discard phase on
                bits |= s.nest << _NEST | s.discards << _DISCARDS
        else:
            bits |= _BIDDER_OPP
    if s.trumps >= 0:
        bits |= 1 << (_TRUMPS + s.trumps)
    if s.face_up is not None:
        bits |= 1 << (_FACE_UP + s.face_up)
    if s.led is not None:
        bits |= 1 << (_LED + s.led)
        if s.leader == seat:
            bits |= _LED_BY_SELF
    return bits


def observe(s: State, seat: int) -> np.ndarray:
    return LAYOUT.to_array(observe_bits(s, seat))


# The global state (PettingZoo's ``state()``, for centralised critics): both players' observations, then the cards
# that are hidden from one or both of them.
STATE_LAYOUT = Layout(
    ("obs_player_0", LAYOUT.size, "player_0's observation (the layout above)"),
    ("obs_player_1", LAYOUT.size, "player_1's observation"),
    ("nest", N_CARDS, "the Nest while it is set aside (bidding and naming trumps)"),
    ("discards", N_CARDS, "the bid winner's discards"),
    ("draw_pile", N_CARDS, "the face-down draw pile"),
    ("next_hidden", N_CARDS, "the top card of the face-down draw pile"),
)
_S = STATE_LAYOUT.offsets


def state_bits(s: State) -> int:
    """The global state as one int (bit i = entry i of ``STATE_LAYOUT``)."""
    bits = (observe_bits(s, 0) | observe_bits(s, 1) << _S["obs_player_1"] | s.nest_left() << _S["nest"]
            | s.discards << _S["discards"] | s.pile_mask() << _S["draw_pile"])
    hidden = s.pile_pos + (1 if s.face_up is not None else 0)
    if hidden < len(s.pile):
        bits |= 1 << (_S["next_hidden"] + s.pile[hidden])
    return bits


def _cards(piece: np.ndarray) -> list[str]:
    return [card_name(int(c)) for c in np.flatnonzero(piece)]


def _index(piece: np.ndarray) -> int | None:
    hot = np.flatnonzero(piece)
    return int(hot[0]) if len(hot) else None


def _total(neg: np.ndarray, piece: np.ndarray) -> int:
    value = 5 * sum(1 << int(i) for i in np.flatnonzero(piece))
    return -value if neg[0] else value


def describe(vector: np.ndarray) -> dict[str, Any]:
    """The observation vector in words: card strings ("XR" is the Rook), amounts, flags as bools."""
    p = LAYOUT.split(vector)
    phase = _index(p["phase"])
    trumps = _index(p["trumps"])
    high = _index(p["high_bid"])
    led = _cards(p["led"])
    face_up = _cards(p["face_up"])
    bidder = "self" if p["bidder_self"][0] else "opp" if p["bidder_opp"][0] else None
    return {
        "hand": _cards(p["hand"]),
        "phase": PHASE_NAMES[5 if phase is None else phase],
        "bids_self": [BID_AMOUNTS[i] for i in np.flatnonzero(p["bids_self"])],
        "bids_opp": [BID_AMOUNTS[i] for i in np.flatnonzero(p["bids_opp"])],
        "passed_self": bool(p["passed_self"][0]),
        "passed_opp": bool(p["passed_opp"][0]),
        "high_bid": None if high is None else BID_AMOUNTS[high],
        "bidder": bidder,
        "trumps": None if trumps is None else SUIT_NAMES[trumps],
        "nest": _cards(p["nest"]),
        "discards": _cards(p["discards"]),
        "face_up": face_up[0] if face_up else None,
        "opp_known": _cards(p["opp_known"]),
        "self_known": _cards(p["self_known"]),
        "played_self": _cards(p["played_self"]),
        "played_opp": _cards(p["played_opp"]),
        "led": led[0] if led else None,
        "led_by_self": bool(p["led_by_self"][0]),
        "tricks_self": _index(p["tricks_self"]),
        "tricks_opp": _index(p["tricks_opp"]),
        "points_self": 5 * _index(p["points_self"]),
        "points_opp": 5 * _index(p["points_opp"]),
        "total_self": _total(p["total_self_neg"], p["total_self"]),
        "total_opp": _total(p["total_opp_neg"], p["total_opp"]),
        "self_dealt": bool(p["self_dealt"][0]),
        "self_to_move": bool(p["self_to_move"][0]),
    }
