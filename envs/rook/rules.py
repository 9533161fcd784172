"""Rook for Two rules: state, legal actions, applying an action, scoring a round. Plain Python, no RL.

Cards. The 44 standard cards 4..A of the four suits keep their ``suit * 13 + rank`` ids (see
:mod:`cardzoo.envs.common.cards`; the 2s and 3s, ids with ``rank < 2``, are not in the deck) and the Rook is card
``ROOK = 52``, written ``"XR"``. Card sets are int masks over these 53 bits. Once trumps are named the Rook is the
lowest trump: it ranks as the "3 of trumps", below the trump 4, and it is a trump for following and leading.

Actions. One id space covers every phase (``N_ACTIONS = 79``):

    0..52   play or discard card ``c`` (52 = the Rook; the 2s and 3s are never legal)
    53..71  bid 50, 55, ..., 140 (``BID0 + (amount - 50) // 5``)
    72      pass
    73..76  name trumps: clubs, diamonds, hearts, spades
    77      take the face-up card (the trick winner; the loser gets the top of the draw pile)
    78      take the top of the draw pile (the loser gets the face-up card)

Phases: ``BID`` (the non-dealer opens), ``TRUMP`` and ``DISCARD`` (the bid winner), ``PLAY`` and ``DRAW`` (the trick
winner chooses between the face-up card and the hidden one), then ``OVER`` at the end of the episode.

Deck order for an explicit starting deal (``deck``, 45 card ints): ``deck[0:3]`` the Nest, ``deck[3:14]``
player 0's hand, ``deck[14:25]`` player 1's hand, ``deck[25:45]`` the draw pile from the top down (``deck[25]`` is
turned face up before the first trick). Later rounds shuffle all 45 cards with the game's random generator and split
them in the same order.

See ``seeds/rook_for_two.md`` for the rules in full and the rulings taken where the document is silent.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..common.cards import CARD_NAMES as STANDARD_NAMES
from ..common.cards import SUIT_MASKS
from ..common.cards import card_pretty as standard_pretty
from ..common.seeding import copy_generator

ROOK = 52
N_CARDS = 53
ROOK_BIT = 1 << ROOK
DECK = tuple([c for c in range(52) if c % 13 >= 2] + [ROOK])  # 45 cards, the Rook last
DECK_MASK = sum(1 << c for c in DECK)
ROOK_RANK = 1  # ranks as the 3 of trumps (rank index 1), below the 4 (index 2)

ROOK_NAME = "XR"  # two characters like every card string; neither is a rank or a suit letter
CARD_NAMES = (*STANDARD_NAMES, ROOK_NAME)  # indexed by card id; ids of 2s and 3s name cards not in the deck
NAMES = {CARD_NAMES[c]: c for c in DECK}  # the 45 card strings a deck option may hold


def card_name(card: int) -> str:
    """``"TS"`` for the ten of spades, ``"XR"`` for the Rook."""
    return CARD_NAMES[card]


def card_pretty(card: int) -> str:
    """``"10♠"`` for the ten of spades, ``"Rook"`` for the Rook (for people only)."""
    return "Rook" if card == ROOK else standard_pretty(card)


NEST = 3
HAND = 11
PILE = 20
DISCARDS = 3
TRICKS = HAND + PILE // 2  # 21: an odd number, so "most tricks" never ties
MOST_TRICKS_BONUS = 20
ROUND_POINTS = 140

MIN_BID, MAX_BID, BID_STEP = 50, 140, 5
BID_AMOUNTS = tuple(range(MIN_BID, MAX_BID + 1, BID_STEP))  # 19 amounts

# Action ids.
CARD0 = 0
BID0 = N_CARDS  # 53
PASS = BID0 + len(BID_AMOUNTS)  # 72
TRUMP0 = PASS + 1  # 73
TAKE_UP = TRUMP0 + 4  # 77
TAKE_HIDDEN = TAKE_UP + 1  # 78
N_ACTIONS = TAKE_HIDDEN + 1  # 79

BID_ACTIONS_MASK = ((1 << len(BID_AMOUNTS)) - 1) << BID0
TRUMP_ACTIONS_MASK = 0b1111 << TRUMP0
DRAW_ACTIONS_MASK = 1 << TAKE_UP | 1 << TAKE_HIDDEN

ROUND_LIMIT = "round_limit"  # a game cut off after max_rounds: neither won nor lost

# Phases.
BID, TRUMP, DISCARD, PLAY, DRAW, OVER = range(6)
PHASE_NAMES = ("bid", "trump", "discard", "play", "draw", "over")
BID_TRUMP_PHASES = (BID, TRUMP)  # the Nest is still set aside

# Points per card: 5s 5, 10s 10, Aces 10, the Rook 20.
POINTS = tuple(20 if c == ROOK else {3: 5, 8: 10, 12: 10}.get(c % 13, 0) for c in range(N_CARDS))
POINT_MASK = sum(1 << c for c in range(N_CARDS) if POINTS[c])
# Follow-suit masks per (led suit as it counts, trumps): the trump suit includes the Rook.
_SUIT_WITH_ROOK = tuple(SUIT_MASKS[s] | ROOK_BIT for s in range(4))


def card_points(mask: int) -> int:
    total = 0
    while mask:
        low = mask & -mask
        total += POINTS[low.bit_length() - 1]
        mask ^= low
    return total


@dataclass(frozen=True)
class Config:
    target_score: int = 500  # the game ends when a running total reaches this
    rounds: int | None = None  # episode ends after this many rounds (None: play to target_score)
    max_rounds: int = 200  # a game still going after this many rounds is cut off (see the rulings)


class State:
    """Everything about one game in progress. Mutated in place by :func:`apply`; :meth:`copy` for search."""

    __slots__ = (
        "config", "rng", "round_no", "dealer", "phase", "to_move", "hands", "nest", "discards", "pile", "pile_pos",
        "face_up", "known", "played", "won", "tricks", "points", "led", "leader", "trumps", "bids", "high_bid",
        "passer", "bidder", "totals", "outcome", "winner", "history", "last_trick", "last_round",
    )  # fmt: skip

    def copy(self) -> State:
        other = State.__new__(State)
        for name in State.__slots__:
            setattr(other, name, getattr(self, name))
        for name in ("hands", "pile", "known", "played", "won", "tricks", "points", "bids", "totals", "history"):
            setattr(other, name, list(getattr(self, name)))
        other.rng = None if self.rng is None else copy_generator(self.rng)
        return other

    @property
    def done(self) -> bool:
        return self.outcome is not None

    @property
    def bid(self) -> int | None:
        """The contract (the winning bid) once bidding is over."""
        return self.high_bid if self.bidder is not None else None

    def in_play(self) -> int:
        """Every card currently somewhere in the round, as a mask (45 cards while the round is live)."""
        return (self.hands[0] | self.hands[1] | self.nest_left() | self.discards | self.played[0] | self.played[1]
                | self.pile_mask() | (0 if self.face_up is None else 1 << self.face_up))

    def nest_left(self) -> int:
        """The Nest while it is still set aside (before the bid winner takes it)."""
        return self.nest if self.phase in (BID, TRUMP) else 0

    def pile_mask(self) -> int:
        """Face-down draw pile cards (not the face-up card)."""
        m = 0
        start = self.pile_pos + (1 if self.face_up is not None else 0)
        for c in self.pile[start:]:
            m |= 1 << c
        return m



def shuffled_deck(rng: np.random.Generator) -> list[int]:
    return [DECK[i] for i in rng.permutation(len(DECK)).tolist()]


def deal(config: Config, seed: int | np.random.Generator, dealer: int = 1, deck: list[int] | None = None) -> State:
    """The game ``env.reset(seed=seed)`` starts with ``config``: a generator from ``seed`` (or ``seed`` itself if it
    is one) shuffles the deck, unless ``deck`` is given, and deals the later rounds."""
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    return new_game(config, shuffled_deck(rng) if deck is None else deck, rng, dealer)


def new_game(config: Config, deck: list[int], rng: np.random.Generator | None, dealer: int = 1) -> State:
    """A game whose first round is dealt from ``deck`` (see the module docstring). ``rng`` deals later rounds."""
    s = State()
    s.config = config
    s.rng = rng
    s.totals = [0, 0]
    s.outcome = None
    s.winner = None
    s.history = []
    s.round_no = 0
    s.last_round = None
    _start_round(s, deck, dealer)
    return s


def _start_round(s: State, deck: list[int], dealer: int) -> None:
    s.round_no += 1
    s.dealer = dealer
    s.nest = _mask(deck[:NEST])
    s.hands = [_mask(deck[NEST:NEST + HAND]), _mask(deck[NEST + HAND:NEST + 2 * HAND])]
    s.pile = list(deck[NEST + 2 * HAND:])
    s.pile_pos = 0
    s.face_up = None
    s.discards = 0
    s.known = [0, 0]
    s.played = [0, 0]
    s.won = [0, 0]
    s.tricks = [0, 0]
    s.points = [0, 0]
    s.led = None
    s.leader = None
    s.trumps = -1
    s.bids = []  # (seat, amount) in order; amount None for a pass
    s.high_bid = None
    s.passer = None
    s.bidder = None
    s.last_trick = None
    s.phase = BID
    s.to_move = 1 - dealer


def _mask(cards) -> int:
    m = 0
    for c in cards:
        m |= 1 << c
    return m


def bid_action(amount: int) -> int:
    return BID0 + (amount - MIN_BID) // BID_STEP


def effective_suit(card: int, trumps: int) -> int:
    return trumps if card == ROOK else card // 13


def follow_mask(led: int, trumps: int) -> int:
    """The cards that follow ``led``: its suit, with the Rook counted in the trump suit."""
    s = effective_suit(led, trumps)
    return _SUIT_WITH_ROOK[s] if s == trumps else SUIT_MASKS[s]


def second_wins(led: int, other: int, trumps: int) -> bool:
    """True if ``other`` (the card played second) beats ``led``."""
    ls, os_ = effective_suit(led, trumps), effective_suit(other, trumps)
    if ls == os_:
        lr = ROOK_RANK if led == ROOK else led % 13
        orank = ROOK_RANK if other == ROOK else other % 13
        return orank > lr
    return os_ == trumps  # a card off the led suit wins only as a trump


def legal_actions(s: State) -> int:
    """The legal actions of the player to move, as an int mask over action ids (0 once the game is over)."""
    phase = s.phase
    if phase == PLAY:
        hand = s.hands[s.to_move]
        if s.led is None:
            return hand
        return hand & follow_mask(s.led, s.trumps) or hand
    if phase == DRAW:
        return DRAW_ACTIONS_MASK
    if phase == BID:
        if s.high_bid is None:
            return BID_ACTIONS_MASK  # the opening bid is compulsory (ruling)
        above = ((s.high_bid - MIN_BID) // BID_STEP) + 1
        return (BID_ACTIONS_MASK >> (BID0 + above) << (BID0 + above)) | 1 << PASS
    if phase == DISCARD:
        hand = s.hands[s.to_move]
        return hand & ~POINT_MASK or hand  # point cards only once no other card is left (ruling)
    if phase == TRUMP:
        return TRUMP_ACTIONS_MASK
    return 0


def apply(s: State, action: int) -> list[float] | None:
    """Apply a legal ``action`` for the player to move (the caller has checked it with :func:`legal_actions`).

    Returns the round's score changes ``[d0, d1]`` when the action ends a round, else ``None``.
    """
    phase = s.phase
    p = s.to_move
    if phase == PLAY:
        return _play(s, p, action)
    if phase == DRAW:
        _draw(s, p, action == TAKE_UP)
        return None
    if phase == BID:
        _bid(s, p, action)
    elif phase == TRUMP:
        s.trumps = action - TRUMP0
        s.hands[p] |= s.nest
        s.phase = DISCARD
    elif phase == DISCARD:
        bit = 1 << action
        s.hands[p] &= ~bit
        s.discards |= bit
        if s.discards.bit_count() == DISCARDS:
            s.phase = PLAY
            s.face_up = s.pile[0]
            s.leader = p
    return None


def _bid(s: State, p: int, action: int) -> None:
    if action == PASS:
        s.bids.append((p, None))
        s.passer = p
        s.bidder = 1 - p
        s.phase = TRUMP
        s.to_move = 1 - p
        return
    amount = MIN_BID + (action - BID0) * BID_STEP
    s.bids.append((p, amount))
    s.high_bid = amount
    if amount == MAX_BID:
        s.bidder = p
        s.phase = TRUMP
        return  # the bidder moves again
    s.to_move = 1 - p


def _play(s: State, p: int, card: int) -> list[float] | None:
    bit = 1 << card
    s.hands[p] &= ~bit
    s.known[p] &= ~bit
    s.played[p] |= bit
    if s.led is None:
        s.led = card
        s.to_move = 1 - p
        return None
    led, leader = s.led, s.leader
    winner = p if second_wins(led, card, s.trumps) else leader
    s.won[winner] |= 1 << led | bit
    s.tricks[winner] += 1
    s.points[winner] += POINTS[led] + POINTS[card]
    s.last_trick = (leader, led, card, winner)
    s.led = None
    s.leader = s.to_move = winner
    if s.face_up is not None:
        s.phase = DRAW
        return None
    if s.tricks[0] + s.tricks[1] == TRICKS:
        return _end_round(s, winner)
    return None


def _draw(s: State, p: int, take_up: bool) -> None:
    up, hidden = s.face_up, s.pile[s.pile_pos + 1]
    s.pile_pos += 2
    if take_up:
        s.hands[p] |= 1 << up
        s.hands[1 - p] |= 1 << hidden
        s.known[p] |= 1 << up
    else:
        s.hands[p] |= 1 << hidden
        s.hands[1 - p] |= 1 << up
        s.known[1 - p] |= 1 << up
    s.face_up = s.pile[s.pile_pos] if s.pile_pos < PILE else None
    s.phase = PLAY


def round_points(s: State, last_winner: int) -> list[int]:
    """Each seat's points for the round: cards won, 20 for most tricks, point cards discarded to the last trick."""
    pts = list(s.points)
    pts[0 if s.tricks[0] > s.tricks[1] else 1] += MOST_TRICKS_BONUS
    pts[last_winner] += card_points(s.discards)
    return pts


def _end_round(s: State, last_winner: int) -> list[float]:
    pts = round_points(s, last_winner)
    b = s.bidder
    made = pts[b] >= s.high_bid
    delta = [0, 0]
    delta[b] = pts[b] if made else -s.high_bid
    delta[1 - b] = pts[1 - b]
    s.totals[0] += delta[0]
    s.totals[1] += delta[1]
    s.last_round = {
        "round": s.round_no, "dealer": s.dealer,
        "bids": [[seat, amount] for seat, amount in s.bids],
        "bidder": b, "bid": s.high_bid, "trumps": s.trumps, "tricks": list(s.tricks), "points": pts,
        "made": made, "score": delta, "totals": list(s.totals), "last_trick_winner": last_winner,
    }
    s.history.append(s.last_round)
    target = s.config.target_score
    over0, over1 = s.totals[0] >= target, s.totals[1] >= target
    if over0 or over1:
        # Both past the target in one round: the bid winner wins (only she can have made her bid then).
        s.winner = b if over0 and over1 else (0 if over0 else 1)
        s.outcome = "win"
        s.phase = OVER
    elif s.totals[b] <= -target:
        # Only a set bidder loses points: falling to -target loses the game (ruling, as in Five Hundred).
        s.winner = 1 - b
        s.outcome = "bidder_fell"
        s.phase = OVER
    elif s.config.rounds is not None and s.round_no >= s.config.rounds:
        s.outcome = "rounds_done"
        s.winner = None if s.totals[0] == s.totals[1] else (0 if s.totals[0] > s.totals[1] else 1)
        s.phase = OVER
    elif s.round_no >= s.config.max_rounds:
        s.outcome = ROUND_LIMIT
        s.winner = None
        s.phase = OVER
    else:
        _start_round(s, shuffled_deck(s.rng), 1 - s.dealer)
    return [float(delta[0]), float(delta[1])]
