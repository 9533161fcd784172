"""Summit Rush rules: the layout, the state, legal plays, resolving one tick, the end. Plain Python, no RL.

Layout. The 28 peak positions are numbered row by row, top to bottom and left to right::

    row 0 (3, face down)       0           1           2
    row 1 (6, face down)     3   4       5   6       7   8
    row 2 (9, face down)   9  10  11  12  13  14  15  16  17
    row 3 (10, face up)  18  19  20  21  22  23  24  25  26  27

The standard TriPeaks overlap: bottom-row positions ``18 + k`` and ``19 + k`` cover row-2 position ``9 + k``
(k = 0..8); row-2 positions ``9 + k`` and ``10 + k`` with ``k = j + j // 2`` cover row-1 position ``3 + j``
(j = 0..5, so the three pyramids share no row-1 card); row-1 positions ``3 + 2i`` and ``4 + 2i`` cover the peak
``i`` (i = 0..2). ``COVERED_BY[pos]`` holds the two covering positions (none for the bottom row).

Piles and seats. Seat ``p`` owns waste pile ``p`` and stock ``p``; solo play has one seat and one pile. Cards are
the ints of :mod:`cardzoo.envs.common.cards` (``suit * 13 + rank``, rank 0..12 for 2..A); the Ace is low in the
game's own order A-2-...-K, and "round the corner" (``wrap``) also joins K and A.

Actions (one per seat and tick), for ``P`` piles: ``pos * P + pile`` plays the free card at peak position ``pos``
onto ``pile``; ``TURN = 28 * P`` turns the seat's own stock onto its own pile; ``WAIT = 28 * P + 1`` does nothing.

Talking (on by default; off is the "silent summit" variant): each tick a player may say one message from
``MESSAGES`` besides their action. Messages are cheap talk: they never change the cards, and none is ever illegal.
A message said during tick ``t`` is heard from tick ``t + 1`` on (speech takes a moment); ``State.said`` keeps
each seat's last message and the tick it was said.

Deck order for an explicit deal (52 card ints): ``deck[0:28]`` the peaks by position, then each seat's stock in
turning order (``deck[28:28 + S]`` seat 0, the next ``S`` seat 1, ...; the first card of each is turned up at the
start), then the cards set aside unseen.

See ``seeds/summit_rush.md`` for the rules in the project's words and every ruling taken.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import permutations

import numpy as np

from ..common.cards import cards_of

N_PEAKS = 28
ROWS = (3, 6, 9, 10)
RANK_NAMES = ("2", "3", "4", "5", "6", "7", "8", "9", "10", "Jack", "Queen", "King", "Ace")  # by rank index


def _messages() -> tuple[str, ...]:
    """The vocabulary, drawn from the document's calls: 0 says nothing."""
    out = ["(nothing)", "I'll turn", "don't turn"]
    out += [f"I need a {r}" for r in RANK_NAMES]
    out += [f"{r} on my pile" for r in RANK_NAMES]
    out += [f"I'm taking position {pos}" for pos in range(28)]
    return tuple(out)


MESSAGES = _messages()
SAY_NOTHING, SAY_TURN, SAY_DONT_TURN = 0, 1, 2
SAY_NEED = 3  # + rank index (0..12 for 2..A)
SAY_ON_PILE = SAY_NEED + 13  # + rank index
SAY_TAKING = SAY_ON_PILE + 13  # + peak position
N_MESSAGES = len(MESSAGES)  # 57
ROW_START = (0, 3, 9, 18)
ALL_PEAKS = (1 << N_PEAKS) - 1
BOTTOM_ROW = tuple(range(18, 28))


def _covered_by() -> tuple[tuple[int, ...], ...]:
    out: list[tuple[int, ...]] = []
    out += [(3 + 2 * i, 4 + 2 * i) for i in range(3)]
    out += [(9 + j + j // 2, 10 + j + j // 2) for j in range(6)]
    out += [(18 + k, 19 + k) for k in range(9)]
    out += [()] * 10
    return tuple(out)


COVERED_BY = _covered_by()
COVER_MASK = tuple(sum(1 << c for c in covers) for covers in COVERED_BY)
# The positions each card covers (one or two, none for the peaks' tops): checked when the card leaves.
COVERS = tuple(tuple(q for q in range(N_PEAKS) if pos in COVERED_BY[q]) for pos in range(N_PEAKS))
START_UP = sum(1 << p for p in BOTTOM_ROW)


def game_rank(card: int) -> int:
    """The rank in the game's own order: A=0, 2=1, ..., K=12."""
    return (card % 13 + 1) % 13


def neighbours(grank: int, wrap: bool) -> tuple[int, ...]:
    """The game ranks that fit onto a top of game rank ``grank``: one above and one below, the King and the Ace
    next to each other only with ``wrap``."""
    out = []
    if grank < 12 or wrap:
        out.append((grank + 1) % 13)
    if grank > 0 or wrap:
        out.append((grank - 1) % 13)
    return tuple(out)


def _fits_table(wrap: bool) -> tuple[int, ...]:
    """``table[top]`` = card mask of the cards that may go onto ``top``."""
    return tuple(sum(1 << c for c in range(52) if game_rank(c) in neighbours(game_rank(top), wrap))
                 for top in range(52))


FITS = {True: _fits_table(True), False: _fits_table(False)}

# Outcomes.
WIN = "win"
TIME = "time"
STUCK = "stuck"
ILLEGAL = "illegal"  # only under illegal_action="penalize" (decided by the env, not the rules)
TICK_LIMIT = "tick_limit"  # cut off after max_ticks (a truncation, not a loss; see the rulings)
MAX_TICKS = 1000  # the default cap on ticks, so a game that only waits still ends


@dataclass(frozen=True)
class Config:
    """The variable rules. Levels (see ``LEVELS``) are presets of these."""

    players: int = 2  # seats; each has a pile and a stock (1 = solo TriPeaks)
    stock: int = 12  # stock cards per seat, the first of which starts the seat's pile
    time_limit: float | None = 180.0  # seconds; None = untimed
    seconds_per_action: float = 3.0  # one tick
    wrap: bool = True  # round the corner: K and A are neighbours
    # Players may say one message a tick. Off here, as messages never change the cards; the env turns it on by
    # default, as the document plays (off is the "silent summit" variant).
    talk: bool = False
    max_ticks: int = MAX_TICKS  # the game is cut off after this many ticks (untimed games would run forever)

    @property
    def ticks(self) -> int | None:
        """Ticks before time runs out (whole actions that fit in the time), None if untimed."""
        if self.time_limit is None:
            return None
        return int(self.time_limit / self.seconds_per_action + 1e-9)

    @property
    def aside(self) -> int:
        return 52 - N_PEAKS - self.players * self.stock

    @property
    def n_moves(self) -> int:
        """Moves per seat and tick: a peak card onto a pile, turn, wait."""
        return N_PEAKS * self.players + 2

    @property
    def n_messages(self) -> int:
        return N_MESSAGES if self.talk else 1

    @property
    def n_actions(self) -> int:
        """A move and a message together: ``message * n_moves + move`` (just the move when silent)."""
        return self.n_moves * self.n_messages


# Level presets per number of players: (stock per seat, seconds). Expert is this project's ruling.
LEVELS = {
    "normal": {1: (24, None), 2: (12, 180.0), 3: (8, 180.0)},
    "hard": {1: (24, None), 2: (10, 120.0), 3: (6, 120.0)},
    "expert": {1: (24, None), 2: (10, 90.0), 3: (6, 90.0)},
}

# Seat orders in which a tick's actions land, one list per player count.
ORDERS = {n: tuple(tuple(p) for p in permutations(range(n))) for n in (1, 2, 3)}


class State:
    """Everything about one game in progress. Mutated in place by :func:`play_tick`; :meth:`copy` for search."""

    __slots__ = (
        "config", "fits", "peaks", "present", "up", "piles", "tops", "on_piles", "stocks", "stock_left",
        "aside", "tick", "outcome", "conflicts", "bounced", "redirected", "turned", "rng", "last_order", "said",
    )  # fmt: skip

    def copy(self) -> State:
        other = State.__new__(State)
        for name in State.__slots__:
            setattr(other, name, getattr(self, name))
        other.peaks = list(self.peaks)
        other.piles = [list(p) for p in self.piles]
        other.tops = list(self.tops)
        other.stocks = [list(st) for st in self.stocks]
        other.stock_left = list(self.stock_left)
        other.said = list(self.said)
        other.rng = random.Random()
        other.rng.setstate(self.rng.getstate())
        return other

    @property
    def done(self) -> bool:
        return self.outcome is not None

    def ticks_left(self) -> int | None:
        ticks = self.config.ticks
        return None if ticks is None else ticks - self.tick

    @property
    def score(self) -> int:
        """Cards left in all stocks on a win (the document's bragging score); 0 for a loss."""
        return sum(self.stock_left) if self.outcome == WIN else 0

    def stock_card(self, seat: int) -> int | None:
        """The next card of ``seat``'s stock (hidden from the players; for tests and search only)."""
        st = self.stocks[seat]
        return st[len(st) - self.stock_left[seat]] if self.stock_left[seat] else None


def new_game(config: Config, deck: Sequence[int], order_seed: int) -> State:
    """A game dealt from ``deck`` (see the module docstring for the order); ``order_seed`` seeds who-touches-first."""
    s = State()
    s.config = config
    s.fits = FITS[config.wrap]
    s.peaks = list(deck[:N_PEAKS])
    s.present = ALL_PEAKS
    s.up = START_UP
    n, k = config.players, config.stock
    s.stocks = [list(deck[N_PEAKS + p * k : N_PEAKS + (p + 1) * k]) for p in range(n)]
    s.aside = list(deck[N_PEAKS + n * k :])
    s.piles = [[st[0]] for st in s.stocks]
    s.tops = [st[0] for st in s.stocks]
    s.on_piles = 0
    for c in s.tops:
        s.on_piles |= 1 << c
    s.stock_left = [k - 1] * n
    s.tick = 0
    s.outcome = None
    s.conflicts = s.bounced = s.redirected = s.turned = 0
    s.rng = random.Random(order_seed)
    s.last_order = ()
    s.said = [None] * n  # per seat: (message, tick said) of the last message, None before the first
    return s


def deal(config: Config, seed: int | np.random.Generator, deck: Sequence[int] | None = None) -> State:
    """The game ``env.reset(seed=seed)`` starts with ``config``: a generator from ``seed`` (or ``seed`` itself if it
    is one) shuffles the deck, unless ``deck`` is given, then draws the seed of the seat orders."""
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    if deck is None:
        deck = rng.permutation(52).tolist()
    return new_game(config, deck, int(rng.integers(2**63)))


def say(s: State, seat: int, message: int) -> None:
    """``seat`` says ``message`` during the current tick (call before :func:`play_tick`); nothing is no message."""
    if message != SAY_NOTHING:
        s.said[seat] = (message, s.tick)


def free_positions(s: State) -> list[int]:
    """Positions of the face-up (free) peak cards, lowest first."""
    return cards_of(s.up)  # the same set-bit walk as for card masks


def play_bits(s: State) -> int:
    """Action bits ``pos * P + pile`` of every free card that fits a pile now (the same for every seat)."""
    if s.outcome is not None:
        return 0
    bits = 0
    n = s.config.players
    fits = [s.fits[t] for t in s.tops]
    peaks = s.peaks
    up = s.up
    while up:
        low = up & -up
        pos = low.bit_length() - 1
        up ^= low
        c = peaks[pos]
        base = pos * n
        for p in range(n):
            if fits[p] >> c & 1:
                bits |= 1 << (base + p)
    return bits


def legal_bits(s: State, seat: int, plays: int | None = None) -> int:
    """Action bits legal for ``seat`` (pass ``plays = play_bits(s)`` to share it between seats). Wait is always
    legal while the game runs; nothing is legal once it is over."""
    if s.outcome is not None:
        return 0
    n = s.config.players
    bits = play_bits(s) if plays is None else plays
    if s.stock_left[seat]:
        bits |= 1 << (N_PEAKS * n)
    return bits | 1 << (N_PEAKS * n + 1)


def is_legal(s: State, seat: int, action: int) -> bool:
    if s.outcome is not None:
        return False
    n = s.config.players
    if action == N_PEAKS * n + 1:
        return True
    if action == N_PEAKS * n:
        return s.stock_left[seat] > 0
    if not 0 <= action < N_PEAKS * n:
        return False
    pos, pile = divmod(action, n)
    return bool(s.up >> pos & 1 and s.fits[s.tops[pile]] >> s.peaks[pos] & 1)


def draw_order(s: State) -> tuple[int, ...]:
    """The seat order in which this tick's actions land (whoever touches first), from the game's generator."""
    orders = ORDERS[s.config.players]
    return orders[int(s.rng.random() * len(orders))]


def play_card(s: State, pos: int, pile: int) -> None:
    """Move the card at ``pos`` onto ``pile`` and turn up what it uncovers (no checks: for ticks and search)."""
    card = s.peaks[pos]
    s.present &= ~(1 << pos)
    s.up &= ~(1 << pos)
    s.piles[pile].append(card)
    s.tops[pile] = card
    s.on_piles |= 1 << card
    present = s.present
    for q in COVERS[pos]:
        if not present & COVER_MASK[q]:
            s.up |= 1 << q


def turn_stock(s: State, seat: int) -> None:
    st = s.stocks[seat]
    card = st[len(st) - s.stock_left[seat]]
    s.stock_left[seat] -= 1
    s.piles[seat].append(card)
    s.tops[seat] = card
    s.on_piles |= 1 << card
    s.turned += 1


def play_tick(s: State, actions: Sequence[int], order: Sequence[int] | None = None) -> None:
    """Resolve one tick. ``actions[seat]`` must each be legal at the start of the tick (the caller checks).

    The actions land one by one in ``order`` (drawn from the game's generator if not given). A play whose card
    is already gone has no effect (a conflict). A play whose pile no longer takes the card goes to the first
    other pile that does, starting from the player's own pile and going round the seats (redirected), or
    otherwise back where it lay (bounced). The game is won the moment the last peak card lands: the actions
    still to land in that tick do not happen. Then the clock advances one tick and the end is checked.
    """
    if order is None:
        order = draw_order(s)
    s.last_order = tuple(order)
    n = s.config.players
    turn = N_PEAKS * n
    fits = s.fits
    for seat in order:
        a = actions[seat]
        if a > turn:  # wait
            continue
        if a == turn:
            turn_stock(s, seat)
            continue
        pos, pile = divmod(a, n)
        if not s.present >> pos & 1:
            s.conflicts += 1
            continue
        card = s.peaks[pos]
        if not fits[s.tops[pile]] >> card & 1:
            for k in range(n):
                q = (seat + k) % n
                if q != pile and fits[s.tops[q]] >> card & 1:
                    pile = q
                    s.redirected += 1
                    break
            else:
                s.bounced += 1
                continue
        play_card(s, pos, pile)
        if not s.present:  # won: hands off, nothing else of this tick lands
            break
    s.tick += 1
    _check_end(s)


def is_stuck(s: State) -> bool:
    """Every stock is empty and no free card fits any pile."""
    return not any(s.stock_left) and not play_bits(s)


def _check_end(s: State) -> None:
    if not s.present:
        s.outcome = WIN
    elif is_stuck(s):
        s.outcome = STUCK
    elif s.config.ticks is not None and s.tick >= s.config.ticks:
        s.outcome = TIME
    elif s.tick >= s.config.max_ticks:
        s.outcome = TICK_LIMIT


def rewards(s: State) -> float:
    """The team's reward at the end: +1 for a win, -1 for any loss, 0 while the game goes on or when it is cut off
    at the tick limit (a truncation: the game was neither won nor lost)."""
    if s.outcome is None or s.outcome == TICK_LIMIT:
        return 0.0
    return 1.0 if s.outcome == WIN else -1.0


def cards_in_play(s: State) -> list[int]:
    """Every card the game holds (peaks still present, piles, unturned stock, aside): always 52 distinct cards."""
    out = [s.peaks[p] for p in range(N_PEAKS) if s.present >> p & 1]
    for pile in s.piles:
        out += pile
    for st, left in zip(s.stocks, s.stock_left, strict=True):
        out += st[len(st) - left :]
    return out + s.aside
