"""What one Rope Team player may see, as a labelled 0/1 vector and as a readable dict.

Everything is seen from the viewer's side of the table: ridge position 0 is the viewer's own end and 8 the
partner's end, and "self"/"partner" replace seat numbers, so one policy can play either seat.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, NamedTuple

import numpy as np

from ..common.cards import CARD_NAMES, FULL_MASK, SUIT_NAMES, cards_of
from ..common.layout import Layout
from .rules import RIDGE, TRICKS_PER_DEAL, State

MAX_ROPES = 4
MAX_DEALS = 3

LAYOUT = Layout(
    ("hand", 52, "cards in the viewer's hand"),
    ("partner_hand", 52, "cards in the partner's hand (open_hands only; zeros otherwise)"),
    ("played_self", 52, "cards the viewer has played in this deal"),
    ("played_partner", 52, "cards the partner has played in this deal"),
    ("led", 52, "the card led to the current trick, if one has been led"),
    ("led_by_self", 1, "1 if the viewer led that card"),
    ("ridge_up", RIDGE, "face-up ridge cards, from the viewer's end (0) to the partner's end (8)"),
    ("ridge_rank", RIDGE * 13, "rank 2..A of each face-up ridge card (13 per position; zeros if face down)"),
    ("ridge_suit", RIDGE * 4, "suit C,D,H,S of each face-up ridge card (4 per position)"),
    ("coin", RIDGE, "the coin's position, from the viewer's end"),
    ("trumps", 5, "trumps: none, clubs, diamonds, hearts, spades"),
    ("ropes", MAX_ROPES + 1, "safety ropes left: 0..4"),
    ("deal", MAX_DEALS, "the current deal: 1..3"),
    ("last_deal", 1, "1 if this is the last deal allowed"),
    ("trick", TRICKS_PER_DEAL, "tricks completed in this deal: 0..12"),
    ("self_dealt", 1, "1 if the viewer dealt this deal"),
    ("self_leads", 1, "1 if the viewer leads the current trick"),
    ("self_to_move", 1, "1 if it is the viewer's turn"),
    ("trumps_rule", 1, "1 if uncovered cards make trumps (0 on Expert)"),
    ("open_hands", 1, "1 in the open-hands variant"),
)

_O = LAYOUT.offsets
# Constant bits and per-(seat, position, card) ridge bits, computed once: the observer runs every step.
_HAND, _PARTNER, _PLAYED_SELF, _PLAYED_PARTNER, _LED = (
    _O["hand"], _O["partner_hand"], _O["played_self"], _O["played_partner"], _O["led"])
_LED_BY_SELF, _COIN, _TRUMPS, _ROPES, _DEAL, _TRICK = (
    1 << _O["led_by_self"], _O["coin"], _O["trumps"] + 1, _O["ropes"], _O["deal"] - 1, _O["trick"])
_LAST_DEAL, _SELF_DEALT, _SELF_LEADS, _SELF_TO_MOVE, _TRUMPS_RULE, _OPEN_HANDS = (
    1 << _O[n] for n in ("last_deal", "self_dealt", "self_leads", "self_to_move", "trumps_rule", "open_hands"))
_RIDGE_BITS = tuple(
    tuple(
        tuple(
            1 << (_O["ridge_up"] + view) | 1 << (_O["ridge_rank"] + 13 * view + card % 13)
            | 1 << (_O["ridge_suit"] + 4 * view + card // 13)
            for card in range(52)
        )
        for view in (range(RIDGE) if seat == 0 else range(RIDGE - 1, -1, -1))
    )
    for seat in (0, 1)
)


def observe_bits(s: State, seat: int) -> int:
    """The observation of ``seat`` as one int (bit i = entry i of the vector)."""
    partner = 1 - seat
    cfg = s.config
    bits = s.hands[seat] << _HAND | s.played[seat] << _PLAYED_SELF | s.played[partner] << _PLAYED_PARTNER
    if cfg.open_hands:
        bits |= s.hands[partner] << _PARTNER | _OPEN_HANDS
    if s.led is not None:
        bits |= 1 << (_LED + s.led)
        if s.leader == seat:
            bits |= _LED_BY_SELF
    table = _RIDGE_BITS[seat]
    for pos, up in enumerate(s.up):
        if up:
            bits |= table[pos][s.ridge[pos]]
    coin = s.coin if seat == 0 else RIDGE - 1 - s.coin
    bits |= (
        1 << (_COIN + coin) | 1 << (_TRUMPS + s.trumps) | 1 << (_ROPES + s.ropes) | 1 << (_DEAL + s.deal)
        | 1 << (_TRICK + min(s.trick_no, TRICKS_PER_DEAL - 1))
    )
    if s.deal == cfg.max_deals:
        bits |= _LAST_DEAL
    if s.dealer == seat:
        bits |= _SELF_DEALT
    if s.leader == seat:
        bits |= _SELF_LEADS
    if s.to_move == seat and s.outcome is None:
        bits |= _SELF_TO_MOVE
    if cfg.trumps:
        bits |= _TRUMPS_RULE
    return bits


def observe(s: State, seat: int) -> np.ndarray:
    return LAYOUT.to_array(observe_bits(s, seat))


# The global state (PettingZoo's ``state()``, for centralised critics): both players' observations, then what
# neither player sees. Ridge positions here are absolute (0 = player_0's end).
STATE_LAYOUT = Layout(
    ("obs_player_0", LAYOUT.size, "player_0's observation (the layout above)"),
    ("obs_player_1", LAYOUT.size, "player_1's observation"),
    ("ridge_rank", RIDGE * 13, "rank 2..A of every ridge card, face down too (13 per position, from player_0's end)"),
    ("ridge_suit", RIDGE * 4, "suit C,D,H,S of every ridge card (4 per position)"),
    ("aside", 52, "the cards set aside unseen in this deal"),
)
_S = STATE_LAYOUT.offsets
_STATE_RIDGE_BITS = tuple(
    tuple(1 << (_S["ridge_rank"] + 13 * pos + c % 13) | 1 << (_S["ridge_suit"] + 4 * pos + c // 13) for c in range(52))
    for pos in range(RIDGE)
)


def state_bits(s: State) -> int:
    """The global state as one int (bit i = entry i of ``STATE_LAYOUT``)."""
    bits = observe_bits(s, 0) | observe_bits(s, 1) << _S["obs_player_1"] | s.aside << _S["aside"]
    for pos, card in enumerate(s.ridge):
        bits |= _STATE_RIDGE_BITS[pos][card]
    return bits


class Observation(NamedTuple):
    """An observation read back from its bits (:func:`decode`): card sets as 52-bit masks, positions from the
    viewer's end, ``trumps`` -1 for none."""

    hand: int
    partner_hand: int  # 0 unless open_hands
    played_self: int
    played_partner: int
    led: int | None  # the card led to the current trick
    led_by_self: bool
    up: int  # face-up ridge positions, bit p = position p
    ridge: dict[int, int]  # face-up position -> card (shared between decodes: do not modify)
    ridge_cards: int  # the face-up ridge cards as a card mask
    coin: int
    trumps: int
    ropes: int
    deal: int  # 1..3
    last_deal: bool
    trick: int
    self_dealt: bool
    self_leads: bool
    self_to_move: bool
    trumps_rule: bool
    open_hands: bool


_ALL_POSITIONS = (1 << RIDGE) - 1
_TRUMPS_PIECE, _DEAL_PIECE = _O["trumps"], _O["deal"]
_new = tuple.__new__
_RIDGE_PIECES = _O["ridge_up"]
_RIDGE_MASK = (1 << (LAYOUT.sizes["ridge_up"] + LAYOUT.sizes["ridge_rank"] + LAYOUT.sizes["ridge_suit"])) - 1


def _bit_index(x: int) -> int:
    """The position of the single set bit of ``x`` (-1 if none)."""
    return x.bit_length() - 1


@lru_cache(maxsize=1024)
def _ridge(pieces: int) -> tuple[dict[int, int], int]:
    """The face-up ridge from the ridge pieces' bits (they change only when a card turns up: cached)."""
    ridge, cards = {}, 0
    for pos in range(RIDGE):
        if pieces >> pos & 1:
            r = _bit_index(pieces >> (RIDGE + 13 * pos) & 0x1FFF)
            s = _bit_index(pieces >> (14 * RIDGE + 4 * pos) & 0xF)
            ridge[pos] = s * 13 + r
            cards |= 1 << (s * 13 + r)
    return ridge, cards


def decode(bits: int) -> Observation:
    """The observation ``bits`` (bit i = entry i of :data:`LAYOUT`) as labelled pieces: what bit-level agents read."""
    ridge, ridge_cards = _ridge(bits >> _RIDGE_PIECES & _RIDGE_MASK)
    led = bits >> _LED & FULL_MASK
    # positional, through tuple.__new__: decode runs at every decision of the bit-level agents
    return _new(Observation, (
        bits >> _HAND & FULL_MASK, bits >> _PARTNER & FULL_MASK, bits >> _PLAYED_SELF & FULL_MASK,
        bits >> _PLAYED_PARTNER & FULL_MASK, led.bit_length() - 1 if led else None, bits & _LED_BY_SELF != 0,
        bits >> _RIDGE_PIECES & _ALL_POSITIONS, ridge, ridge_cards, (bits >> _COIN & _ALL_POSITIONS).bit_length() - 1,
        (bits >> _TRUMPS_PIECE & 0x1F).bit_length() - 2, (bits >> _ROPES & 0x1F).bit_length() - 1,
        (bits >> _DEAL_PIECE & 0x7).bit_length(), bits & _LAST_DEAL != 0,
        (bits >> _TRICK & 0x1FFF).bit_length() - 1, bits & _SELF_DEALT != 0, bits & _SELF_LEADS != 0,
        bits & _SELF_TO_MOVE != 0, bits & _TRUMPS_RULE != 0, bits & _OPEN_HANDS != 0,
    ))


def _cards(piece: np.ndarray) -> list[str]:
    return [CARD_NAMES[c] for c in np.flatnonzero(piece)]


def _index(piece: np.ndarray) -> int | None:
    hot = np.flatnonzero(piece)
    return int(hot[0]) if len(hot) else None


def describe(vector: np.ndarray) -> dict[str, Any]:
    """The observation vector in words: card strings, positions from the viewer's end, flags as bools."""
    p = LAYOUT.split(vector)
    ridge = []
    for pos in range(RIDGE):
        if p["ridge_up"][pos]:
            r = _index(p["ridge_rank"][13 * pos : 13 * pos + 13])
            s = _index(p["ridge_suit"][4 * pos : 4 * pos + 4])
            ridge.append(CARD_NAMES[s * 13 + r])
        else:
            ridge.append("??")
    trumps = _index(p["trumps"])
    led = _cards(p["led"])
    return {
        "hand": _cards(p["hand"]),
        "partner_hand": _cards(p["partner_hand"]) if p["open_hands"][0] else None,
        "played_self": _cards(p["played_self"]),
        "played_partner": _cards(p["played_partner"]),
        "led": led[0] if led else None,
        "led_by_self": bool(p["led_by_self"][0]),
        "ridge": ridge,
        "coin": _index(p["coin"]),
        "trumps": None if trumps == 0 else SUIT_NAMES[trumps - 1],
        "ropes": _index(p["ropes"]),
        "deal": _index(p["deal"]) + 1,
        "last_deal": bool(p["last_deal"][0]),
        "trick": _index(p["trick"]),
        "self_dealt": bool(p["self_dealt"][0]),
        "self_leads": bool(p["self_leads"][0]),
        "self_to_move": bool(p["self_to_move"][0]),
        "trumps_rule": bool(p["trumps_rule"][0]),
        "open_hands": bool(p["open_hands"][0]),
    }


def hand_cards(vector: np.ndarray) -> list[int]:
    """The viewer's hand as card ints (agents use this instead of decoding the whole vector)."""
    return cards_of(int.from_bytes(np.packbits(vector[LAYOUT["hand"]].astype(np.uint8), bitorder="little").tobytes(),
                                   "little"))
