"""What a Summit Rush player may see, as a labelled 0/1 vector and as a readable dict.

Everything on the table is public (the peaks' face-up cards, every pile, how many cards each stock holds, the
clock), so every player's vector is the same except for the ``seat`` piece. Face-down peak cards, unturned stock
cards and the cards set aside never appear. Seats and piles are absolute (pile ``p`` belongs to ``player_p``); the
``seat`` piece tells the viewer which one is theirs.

With talking on, every player also hears every player's last message (its own included) and how many ticks ago it
was said; these pieces are empty (length 0) in the silent variant, so a silent observation is exactly as before.

Counts (stock cards left, ticks left) are thermometers: entry ``i`` of the piece is 1 iff the count exceeds ``i``.
The vector's length depends on the options (players, stock size, number of ticks), so :class:`Observer` builds one
:class:`~cardzoo.envs.common.layout.Layout` per configuration.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ..common.cards import CARD_NAMES, cards_of
from ..common.layout import Layout
from .rules import ALL_PEAKS, MESSAGES, N_MESSAGES, N_PEAKS, Config, State

HEARD_AGES = 10  # ticks since a message was said, one-hot 0..9 (9: nine or more)


def _thermometer(piece: np.ndarray) -> int:
    return int(piece.sum())


class Observer:
    """The observation layout for one configuration, with precomputed bit tables (the observer runs every tick)."""

    def __init__(self, config: Config):
        self.config = config
        n = config.players
        talk = int(config.talk)
        self.stock_len = max(config.stock - 1, 0)
        self.ticks = config.ticks or 0
        self.layout = Layout(
            ("peak_gone", N_PEAKS, "1 if the card at peak position i has been played"),
            ("peak_down", N_PEAKS, "1 if position i holds a face-down card"),
            ("peak_up", N_PEAKS, "1 if position i holds a face-up (free) card"),
            ("peak_rank", N_PEAKS * 13, "rank 2..A of each face-up peak card (13 per position; zeros otherwise)"),
            ("peak_suit", N_PEAKS * 4, "suit C,D,H,S of each face-up peak card (4 per position)"),
            ("pile_rank", n * 13, "rank 2..A of the top card of each pile (13 per pile, pile p = player_p's)"),
            ("pile_suit", n * 4, "suit C,D,H,S of the top card of each pile (4 per pile)"),
            ("on_piles", 52, "every card lying in any waste pile (card c = suit * 13 + rank)"),
            ("stock_left", n * self.stock_len,
             f"cards left in each player's stock, a thermometer of {self.stock_len} per player"),
            ("time_left", self.ticks, f"ticks left on the clock, a thermometer of {self.ticks} (empty if untimed)"),
            ("heard", talk * n * (N_MESSAGES - 1), "each player's last message, one-hot over messages 1..56 (talk)"),
            ("heard_ago", talk * n * HEARD_AGES,
             f"ticks since each said it, one-hot 0..{HEARD_AGES - 1} ({HEARD_AGES - 1}: or more; talk)"),
            ("timed", 1, "1 if the game has a time limit"),
            ("seat", n, "the viewer's seat, one-hot (its pile and stock have the same index)"),
            ("wrap", 1, "1 if round the corner (K-A) is on"),
        )
        o = self.layout.offsets
        self._gone, self._down, self._up = o["peak_gone"], o["peak_down"], o["peak_up"]
        self._on_piles = o["on_piles"]
        self._peak_bits = tuple(
            tuple(1 << (o["peak_rank"] + 13 * pos + c % 13) | 1 << (o["peak_suit"] + 4 * pos + c // 13)
                  for c in range(52))
            for pos in range(N_PEAKS)
        )
        self._pile_bits = tuple(
            tuple(1 << (o["pile_rank"] + 13 * p + c % 13) | 1 << (o["pile_suit"] + 4 * p + c // 13) for c in range(52))
            for p in range(n)
        )
        self._stock_offsets = tuple(o["stock_left"] + p * self.stock_len for p in range(n))
        self._time = o["time_left"]
        self._heard = tuple(o["heard"] + p * (N_MESSAGES - 1) - 1 for p in range(n))  # message m >= 1 at offset + m
        self._heard_ago = tuple(o["heard_ago"] + p * HEARD_AGES for p in range(n))
        self._constant = (1 << o["timed"] if config.ticks is not None else 0) | (1 << o["wrap"] if config.wrap else 0)
        self.seat_entries = tuple(o["seat"] + p for p in range(n))
        self.seat_bits = tuple(1 << e for e in self.seat_entries)
        # The global state (PettingZoo's ``state()``, for centralised critics): the public table, then the cards
        # nobody sees.
        self.state_layout = Layout(
            ("table", self.layout.size, "the public table: the observation layout with the seat piece all zeros"),
            ("down_rank", N_PEAKS * 13, "rank 2..A of each face-down peak card (13 per position)"),
            ("down_suit", N_PEAKS * 4, "suit C,D,H,S of each face-down peak card (4 per position)"),
            ("stock_next", n * 17, "each player's next stock card: rank 13 + suit 4 (zeros if the stock is empty)"),
            ("stock_cards", n * 52, "the cards left in each player's stock (52 per player)"),
            ("aside", 52, "the cards set aside unseen (Hard with three players, solo variants)"),
        )
        so = self.state_layout.offsets
        self._state_down = tuple(
            tuple(1 << (so["down_rank"] + 13 * pos + c % 13) | 1 << (so["down_suit"] + 4 * pos + c // 13)
                  for c in range(52))
            for pos in range(N_PEAKS)
        )
        self._state_next = tuple(
            tuple(1 << (so["stock_next"] + 17 * p + c % 13) | 1 << (so["stock_next"] + 17 * p + 13 + c // 13)
                  for c in range(52))
            for p in range(n)
        )
        self._state_stock = tuple(so["stock_cards"] + 52 * p for p in range(n))
        self._state_aside = so["aside"]

    @property
    def size(self) -> int:
        return self.layout.size

    def public_bits(self, s: State) -> int:
        """Everything but the seat, as one int (bit i = entry i): the same for every viewer."""
        present, up = s.present, s.up
        bits = (ALL_PEAKS & ~present) << self._gone | (present & ~up) << self._down | up << self._up
        bits |= s.on_piles << self._on_piles | self._constant
        peaks, table = s.peaks, self._peak_bits
        while up:
            low = up & -up
            pos = low.bit_length() - 1
            up ^= low
            bits |= table[pos][peaks[pos]]
        for p, top in enumerate(s.tops):
            bits |= self._pile_bits[p][top]
        for off, left in zip(self._stock_offsets, s.stock_left, strict=True):
            bits |= ((1 << left) - 1) << off
        if self.ticks:
            left = max(self.ticks - s.tick, 0)
            bits |= ((1 << left) - 1) << self._time
        if self.config.talk:
            for p, said in enumerate(s.said):
                if said is not None:
                    message, tick = said
                    bits |= 1 << (self._heard[p] + message)
                    bits |= 1 << (self._heard_ago[p] + min(s.tick - 1 - tick, HEARD_AGES - 1))
        return bits

    def observe(self, s: State, seat: int) -> np.ndarray:
        return self.layout.to_array(self.public_bits(s) | self.seat_bits[seat])

    def state(self, s: State) -> np.ndarray:
        """The global state vector (``state_layout``); it holds hidden cards."""
        bits = self.public_bits(s)
        down = s.present & ~s.up
        for pos in cards_of(down):
            bits |= self._state_down[pos][s.peaks[pos]]
        for p in range(self.config.players):
            left = s.stock_left[p]
            if left:
                stock = s.stocks[p]
                bits |= self._state_next[p][stock[len(stock) - left]]
                for c in stock[len(stock) - left:]:
                    bits |= 1 << (self._state_stock[p] + c)
        for c in s.aside:
            bits |= 1 << (self._state_aside + c)
        return self.state_layout.to_array(bits)

    def describe(self, vector: np.ndarray) -> dict[str, Any]:
        """The vector in words: each peak position as a card string, ``"??"`` (face down) or ``None`` (gone)."""
        p = self.layout.split(np.asarray(vector))
        peaks: list[str | None] = []
        for pos in range(N_PEAKS):
            if p["peak_gone"][pos]:
                peaks.append(None)
            elif p["peak_down"][pos]:
                peaks.append("??")
            else:
                r = int(np.flatnonzero(p["peak_rank"][13 * pos : 13 * pos + 13])[0])
                su = int(np.flatnonzero(p["peak_suit"][4 * pos : 4 * pos + 4])[0])
                peaks.append(CARD_NAMES[su * 13 + r])
        n = self.config.players
        piles = []
        for q in range(n):
            r = int(np.flatnonzero(p["pile_rank"][13 * q : 13 * q + 13])[0])
            su = int(np.flatnonzero(p["pile_suit"][4 * q : 4 * q + 4])[0])
            piles.append(CARD_NAMES[su * 13 + r])
        k = self.stock_len
        on_piles = int.from_bytes(np.packbits(p["on_piles"].astype(np.uint8), bitorder="little").tobytes(), "little")
        return {
            "peaks": peaks,
            "free": [pos for pos in range(N_PEAKS) if p["peak_up"][pos]],
            "piles": piles,
            "on_piles": [CARD_NAMES[c] for c in cards_of(on_piles)],
            "stock_left": [_thermometer(p["stock_left"][q * k : q * k + k]) for q in range(n)],
            "time_left": _thermometer(p["time_left"]) if p["timed"][0] else None,
            "seat": int(np.flatnonzero(p["seat"])[0]),
            "wrap": bool(p["wrap"][0]),
            "heard": self._describe_heard(p) if self.config.talk else None,
        }

    def _describe_heard(self, p: dict[str, np.ndarray]) -> list[tuple[str, int] | None]:
        """Each player's last message and how many ticks ago it was said (None before the first)."""
        out: list[tuple[str, int] | None] = []
        for q in range(self.config.players):
            heard = np.flatnonzero(p["heard"][q * (N_MESSAGES - 1) : (q + 1) * (N_MESSAGES - 1)])
            ago = np.flatnonzero(p["heard_ago"][q * HEARD_AGES : (q + 1) * HEARD_AGES])
            out.append((MESSAGES[int(heard[0]) + 1], int(ago[0])) if len(heard) else None)
        return out


# Fixed offsets of the pieces before ``stock_left`` (the pile pieces' lengths depend on the number of piles).
_GONE, _DOWN, _UP, _PEAK_RANK, _PEAK_SUIT, _PILE_RANK = 0, 28, 56, 84, 448, 560
_ALL = ALL_PEAKS
_HEARD_PER_SEAT = N_MESSAGES - 1 + HEARD_AGES


def piles_of(n_actions: int) -> int:
    """The number of piles from the action space's size, silent (``28 P + 2`` moves) or with talking (every move
    with each of the 57 messages)."""
    if n_actions % N_MESSAGES == 0 and (n_actions // N_MESSAGES - 2) % N_PEAKS == 0:
        n_actions //= N_MESSAGES
    return (n_actions - 2) // N_PEAKS


class Observation(NamedTuple):
    """An observation read back from its bits (:func:`decode`). Positions, piles and seats are absolute."""

    piles: int
    talk: bool
    size: int
    seat: int
    public: int  # the bits without the seat piece: the same for every viewer
    wrap: bool
    timed: bool
    present: int  # peak positions still holding a card, bit p = position p
    up: int  # peak positions holding a face-up card
    cards: dict[int, int]  # face-up position -> card
    tops: tuple[int, ...]  # each pile's top card
    on_piles: int  # every card in a pile, as a card mask
    counts: int  # the stock thermometers then the clock's (``count_entries`` entries, see stock_left/time_left)
    count_entries: int
    heard: tuple[tuple[int, int] | None, ...]  # each seat's last message and its age (talk; () when silent)


def decode(bits: int, size: int, n_actions: int) -> Observation:
    """The observation ``bits`` (bit i = entry i) as labelled pieces, from the lengths of the observation and the
    action mask (they vary with the options: players, stock, clock, talk). What bit-level agents read."""
    n = piles_of(n_actions)
    talk = n_actions != N_PEAKS * n + 2
    seat_off = size - 1 - n
    seat = (bits >> seat_off & ((1 << n) - 1)).bit_length() - 1
    up = bits >> _UP & _ALL
    cards = {}
    rest = up
    while rest:
        low = rest & -rest
        pos = low.bit_length() - 1
        rest ^= low
        r = (bits >> (_PEAK_RANK + 13 * pos) & 0x1FFF).bit_length() - 1
        s = (bits >> (_PEAK_SUIT + 4 * pos) & 0xF).bit_length() - 1
        cards[pos] = s * 13 + r
    suit_off = _PILE_RANK + 13 * n
    tops = tuple(((bits >> (suit_off + 4 * p) & 0xF).bit_length() - 1) * 13
                 + (bits >> (_PILE_RANK + 13 * p) & 0x1FFF).bit_length() - 1 for p in range(n))
    counts_off = suit_off + 4 * n + 52
    count_entries = size - counts_off - talk * n * _HEARD_PER_SEAT - 2 - n
    heard: list[tuple[int, int] | None] = []
    if talk:
        said = N_MESSAGES - 1
        ago_off = size - 2 - n - HEARD_AGES * n
        heard_off = ago_off - said * n
        for q in range(n):
            message = bits >> (heard_off + said * q) & ((1 << said) - 1)
            ago = bits >> (ago_off + HEARD_AGES * q) & ((1 << HEARD_AGES) - 1)
            # one-hot over messages 1..56 and ages 0..9
            heard.append((message.bit_length(), ago.bit_length() - 1) if message else None)
    return Observation(
        piles=n, talk=talk, size=size, seat=seat, public=bits & ~(((1 << n) - 1) << seat_off),
        wrap=bool(bits >> (size - 1) & 1), timed=bool(bits >> (size - 2 - n) & 1), present=~bits & _ALL, up=up,
        cards=cards, tops=tops, on_piles=bits >> (suit_off + 4 * n) & ((1 << 52) - 1),
        counts=bits >> counts_off & ((1 << count_entries) - 1), count_entries=count_entries, heard=tuple(heard),
    )
