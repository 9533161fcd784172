"""Rope Team rules: state, legal plays, playing a card, the end of the game. Plain Python, no RL.

Geometry. The ridge has 9 positions, 0..8. Position 0 is ``player_0``'s end, position 8 is ``player_1``'s end and
position 4 is the camp. Winning a trick pulls the coin towards the winner's own end: ``player_0`` pulls it down,
``player_1`` pulls it up.

Seats. Players are 0 and 1. Hands and the cards played are card masks (see :mod:`cardzoo.envs.common.cards`).

Deck order for an explicit starting deal (``deck`` below, 52 card ints): ``deck[0:9]`` is the ridge from
position 0 to 8 (``deck[4]`` is the camp), ``deck[9:22]`` is player 0's hand, ``deck[22:35]`` player 1's hand and
``deck[35:52]`` the 17 cards set aside unseen. Later deals shuffle the 43 cards that are not in the ridge with the
game's random generator and split them in the same order (13 to player 0, 13 to player 1, 17 aside).

See ``seeds/rope_team.md`` for the rules in full and the rulings taken where the document is silent.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..common.cards import SUIT_MASKS, mask_of
from ..common.seeding import copy_generator

RIDGE = 9
CAMP = 4
ENDS = (0, RIDGE - 1)  # each seat's own end
TRICKS_PER_DEAL = 13
HAND = 13
NO_TRUMPS = -1

# Steps per rank 2..A: 2-7 pull 0, 8-J pull 1, Q-A pull 2 (the document's text; its table is missing).
RANK_STEPS = (0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2)
STEPS = tuple(RANK_STEPS[c % 13] for c in range(52))

# Outcomes.
WIN = "win"
FALL = "fall"
OUT_OF_DEALS = "out_of_deals"


@dataclass(frozen=True)
class Config:
    """The variable rules. Levels (see ``LEVELS``) are presets of these."""

    ropes: int = 1  # safety ropes at the start
    trumps: bool = True  # uncovered ridge cards make trumps (False on Expert)
    max_deals: int = 3  # deals before the game is lost
    open_hands: bool = False  # hands visible to the partner (the "open hands" variant)


LEVELS = {
    "easy": Config(ropes=2),
    "normal": Config(ropes=1),
    "hard": Config(ropes=0),
    "expert": Config(ropes=0, trumps=False),
}


class State:
    """Everything about one game in progress. Mutated in place by :func:`play`; :meth:`copy` for search."""

    __slots__ = (
        "config", "rng", "ridge", "up", "coin", "trumps", "ropes", "deal", "dealer", "hands", "aside",
        "played", "trick_no", "leader", "to_move", "led", "outcome", "win_deal", "uncovered", "last_trick",
    )  # fmt: skip

    def copy(self) -> State:
        other = State.__new__(State)
        for name in State.__slots__:
            setattr(other, name, getattr(self, name))
        other.ridge = list(self.ridge)
        other.up = list(self.up)
        other.hands = list(self.hands)
        other.played = list(self.played)
        # The generator is shared state: a copy that deals again must not advance the original's stream.
        other.rng = None if self.rng is None else copy_generator(self.rng)
        return other

    @property
    def done(self) -> bool:
        return self.outcome is not None

    @property
    def ropes_used(self) -> int:
        return self.config.ropes - self.ropes



def new_game(config: Config, deck: list[int], rng: np.random.Generator | None, dealer: int = 1) -> State:
    """A game dealt from ``deck`` (see the module docstring for the order). ``rng`` deals the later deals."""
    s = State()
    s.config = config
    s.rng = rng
    s.ridge = list(deck[:RIDGE])
    s.up = [i == CAMP for i in range(RIDGE)]
    s.coin = CAMP
    s.trumps = NO_TRUMPS
    s.ropes = config.ropes
    s.deal = 1
    s.outcome = None
    s.win_deal = None
    s.uncovered = 0
    _start_deal(s, deck[RIDGE:], dealer)
    return s


def deal(config: Config, seed: int | np.random.Generator, dealer: int = 1, deck: list[int] | None = None) -> State:
    """The game ``env.reset(seed=seed)`` starts with ``config``: a generator from ``seed`` (or ``seed`` itself if it
    is one) shuffles the deck, unless ``deck`` is given, and deals the later deals."""
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    return new_game(config, shuffled_deck(rng) if deck is None else deck, rng, dealer)


def shuffled_deck(rng: np.random.Generator) -> list[int]:
    return rng.permutation(52).tolist()


def _start_deal(s: State, rest: list[int], dealer: int) -> None:
    s.hands = [mask_of(rest[:HAND]), mask_of(rest[HAND : 2 * HAND])]
    s.aside = mask_of(rest[2 * HAND :])
    s.played = [0, 0]
    s.dealer = dealer
    s.leader = s.to_move = 1 - dealer
    s.trick_no = 0
    s.led = None
    s.last_trick = None


def legal_mask(s: State) -> int:
    """The cards the player to move may play, as a card mask (0 once the game is over)."""
    if s.outcome is not None:
        return 0
    hand = s.hands[s.to_move]
    if s.led is None:
        return hand
    follow = hand & SUIT_MASKS[s.led // 13]
    return follow or hand


def trick_winner(led: int, other: int, trumps: int) -> bool:
    """True if ``led`` beats ``other`` (the card played second)."""
    ls, os_ = led // 13, other // 13
    if ls == os_:
        return led > other
    return os_ != trumps  # a card off the led suit wins only as a trump


def play(s: State, card: int) -> None:
    """Play ``card`` for the player to move. The caller has checked it is legal (see :func:`legal_mask`)."""
    p = s.to_move
    s.hands[p] &= ~(1 << card)
    s.played[p] |= 1 << card
    if s.led is None:
        s.led = card
        s.to_move = 1 - p
        return
    led, leader = s.led, s.leader
    winner = leader if trick_winner(led, card, s.trumps) else p
    steps = STEPS[led] + STEPS[card]
    s.last_trick = (leader, led, card, winner)
    s.led = None
    s.trick_no += 1
    s.leader = s.to_move = winner
    _pull(s, winner, steps)
    if s.outcome is None and s.trick_no == TRICKS_PER_DEAL:
        _end_of_deal(s)


def _pull(s: State, winner: int, steps: int) -> None:
    if steps == 0:
        return
    target = s.coin - steps if winner == 0 else s.coin + steps
    if not 0 <= target < RIDGE:
        if s.ropes == 0:
            s.outcome = FALL
            return
        s.ropes -= 1
        target = ENDS[winner]
    s.coin = target
    if not s.up[target]:
        s.up[target] = True
        s.uncovered += 1
        if s.config.trumps:
            s.trumps = s.ridge[target] // 13
        if s.uncovered == RIDGE - 1:
            s.outcome = WIN
            s.win_deal = s.deal


def _end_of_deal(s: State) -> None:
    if s.deal == s.config.max_deals:
        s.outcome = OUT_OF_DEALS
        return
    s.deal += 1
    on_ridge = mask_of(s.ridge)
    rest = [c for c in shuffled_deck(s.rng) if not on_ridge >> c & 1]
    _start_deal(s, rest, 1 - s.dealer)


def summary(s: State) -> dict:
    """The facts of a game that evaluation records: outcome, deal of the win, cards uncovered, ropes used."""
    return {"outcome": s.outcome, "win_deal": s.win_deal, "uncovered": s.uncovered, "ropes_used": s.ropes_used,
            "deals": s.deal, "tricks": (s.deal - 1) * TRICKS_PER_DEAL + s.trick_no}


def rewards(s: State) -> float:
    """The team's reward at the end: +1 for a win, -1 for a loss, 0 while the game goes on."""
    if s.outcome is None:
        return 0.0
    return 1.0 if s.outcome == WIN else -1.0
