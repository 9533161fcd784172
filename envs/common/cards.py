"""Cards, deck strings and card sets shared by every game.

A card of the standard deck is an int ``suit * 13 + rank`` with rank 0..12 for ``2..A`` (``RANKS``) and suit
0..3 for clubs, diamonds, hearts, spades (``SUITS``). Its text form is two characters, rank then suit: ``"TS"``
is the ten of spades. A set of cards is a Python int used as a 52-bit mask (bit ``c`` set = card ``c`` in the
set): the rules work on these because int bit operations are the cheapest set operations pure Python has.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from .errors import DeckError

RANKS = "23456789TJQKA"
SUITS = "CDHS"
SUIT_SYMBOLS = "♣♦♥♠"
SUIT_NAMES = ("clubs", "diamonds", "hearts", "spades")
N_CARDS = 52
FULL_MASK = (1 << N_CARDS) - 1
SUIT_MASKS = tuple(((1 << 13) - 1) << (13 * s) for s in range(4))

CARD_NAMES = tuple(r + s for s in SUITS for r in RANKS)
STANDARD_CARDS: Mapping[str, int] = {name: i for i, name in enumerate(CARD_NAMES)}

# One row of 8 bits per byte value, least significant bit first: turns a card mask into a 0/1 array with one
# fancy index instead of a Python loop over 52 cards.
_BYTE_BITS = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1, bitorder="little")


def rank(card: int) -> int:
    return card % 13


def suit(card: int) -> int:
    return card // 13


def make_card(rank_index: int, suit_index: int) -> int:
    return suit_index * 13 + rank_index


def card_str(card: int) -> str:
    """``"TS"`` for the ten of spades."""
    return CARD_NAMES[card]


def card_pretty(card: int) -> str:
    """``"10♠"`` for the ten of spades (for people; not accepted by the parsers)."""
    r = RANKS[card % 13]
    return ("10" if r == "T" else r) + SUIT_SYMBOLS[card // 13]


def parse_card(text: str, names: Mapping[str, int] = STANDARD_CARDS) -> int:
    """The card named by a two-character string such as ``"QD"``."""
    if not isinstance(text, str):
        raise DeckError(f"a card must be a string like 'QD', got {text!r} ({type(text).__name__})")
    try:
        return names[text]
    except KeyError:
        raise DeckError(
            f"unknown card {text!r}: a card is a rank from {RANKS!r} followed by a suit from {SUITS!r}, "
            f"e.g. 'TS' for the ten of spades"
        ) from None


def parse_deck(cards: Sequence[str], names: Mapping[str, int] = STANDARD_CARDS) -> list[int]:
    """Check that ``cards`` holds every card of ``names`` exactly once and return them as ints, in order."""
    if isinstance(cards, str) or not isinstance(cards, Sequence):
        raise DeckError(f"a deck must be a list of {len(names)} card strings, got {type(cards).__name__}")
    if len(cards) != len(names):
        raise DeckError(f"a deck must hold {len(names)} cards, got {len(cards)}")
    out = [parse_card(c, names) for c in cards]
    seen: set[int] = set()
    repeated = [c for c, i in zip(cards, out, strict=True) if i in seen or seen.add(i)]
    if repeated:
        inverse = {i: n for n, i in names.items()}
        missing = sorted(inverse[i] for i in set(names.values()) - seen)
        raise DeckError(f"the deck repeats {sorted(set(repeated))} and lacks {missing}")
    return out


def mask_of(cards: Iterable[int]) -> int:
    m = 0
    for c in cards:
        m |= 1 << c
    return m


def cards_of(mask: int) -> list[int]:
    """The cards of a mask, lowest first."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def count(mask: int) -> int:
    return mask.bit_count()


def mask_to_bits(mask: int, n: int = N_CARDS) -> np.ndarray:
    """A card mask as an ``int8`` 0/1 array of length ``n``."""
    raw = np.frombuffer(mask.to_bytes((n + 7) // 8, "little"), dtype=np.uint8)
    return _BYTE_BITS[raw].reshape(-1)[:n].view(np.int8)


def bits_to_mask(bits: np.ndarray) -> int:
    """Inverse of :func:`mask_to_bits`."""
    packed = np.packbits(np.asarray(bits, dtype=np.uint8), bitorder="little")
    return int.from_bytes(packed.tobytes(), "little")


def format_cards(cards: Iterable[int], pretty: bool = True) -> str:
    f = card_pretty if pretty else card_str
    return " ".join(f(c) for c in cards)
