"""Summit Rush's "simple but careful" strategy, for any seat, acting on its own observation only.

The rule document reports win rates of "a simple but careful strategy" without giving it; its tips say what such
a team does, and this agent does exactly that:

- **Look ahead over the face-up cards.** Every tick the agent plans runs from the public table: one chain of
  face-up cards per pile, each card one rank above or below the card before it (round the corner if ``wrap``),
  the chains using different cards. Face-down cards are unknown, so the plan never goes through a card that it
  would uncover; the next tick's observation shows what turned up and the plan is made again.
- **Free the face-down cards first.** Plans are compared by the number of face-down cards they uncover, then by
  the number of cards they play, then by how many cards not yet seen (not on a pile, not face up) would fit the
  piles' tops at the end ("keep the piles one apart": two tops one apart take four ranks). Ties go to the plan
  found first, which is deterministic.
- **Save the stock.** A stock card is turned only when no free card fits either pile, and then by one player
  only: the seat that has turned the fewest stock cards this game, ties to the lower seat. All stocks start
  equal, so that seat has the most cards left; if it has none, nobody has, and the game is already lost as
  stuck. Everyone else waits.

Simultaneous play. Both players act on the same start-of-tick observation and must not reach for the same card or
the same pile. The plan's chains are independent (different cards, different piles, all face up now), so they
split cleanly by seat: **seat p plays the next card of the chain on pile p** (its own pile) and waits if that chain
is empty. Both seats see the same public table and compute the same plan (a pure function of it), so the two
cards of a tick always differ and land on different piles: no conflicts, no bounced cards. A chain on one pile
takes one tick per card, as the rules allow at most one card per pile per tick.

What it reads. Only the observation vector and the action mask. The layout's pieces before ``stock_left`` have
fixed offsets once the number of piles is known (from the mask's length), and ``timed``, ``seat`` and ``wrap`` are
counted from the end, so the agent needs no env options. The stock counts are read from memory instead of the
thermometer (whose split between stocks and clock depends on options the agent is not given): between two
observations, every card that appears on a pile without having been face up in the peaks is a stock card, and it
belongs to the pile whose top it is (or, if a card was played on it the same tick, to this seat if it turned, else
to the partner). ``reset`` clears that memory; a fresh deal in the observation also clears it.

Memory is also used for one shortcut: both seats of a team compute the same plan from the same public table, so
the last few plans are kept in a small module-level cache keyed by the public part of the observation (a memo of
a pure function; it holds nothing either seat could not compute itself).
"""

from __future__ import annotations

from cardzoo.envs.common.errors import PolicyError
from cardzoo.envs.summit_rush.observer import _PILE_RANK, Observation, decode, piles_of  # noqa: F401 (re-exported)
from cardzoo.envs.summit_rush.rules import COVER_MASK, N_PEAKS, neighbours

from .base import BitsAgent

_ALL = (1 << N_PEAKS) - 1
_BIT_INDEX = {1 << i: i for i in range(64)}


def _grank(rank_index: int) -> int:
    """Game rank (A=0, 2=1, ..., K=12) from the observation's rank index (0..12 for 2..A)."""
    return (rank_index + 1) % 13


_NEIGHBOURS = {w: tuple(neighbours(r, w) for r in range(13)) for w in (True, False)}


def decode_table(bits: int, size: int | None, n_actions: int | None) -> Observation:
    """The observer's ``decode``, with a clear error when the lengths (which vary with the options) are missing."""
    if size is None or n_actions is None:
        raise PolicyError("Summit Rush agents need the observation's and the mask's lengths with act_bits (size, "
                          "n_actions): the observation's layout depends on the options")
    return decode(bits, size, n_actions)


class Table:
    """The public table of an observation (decoded by the observer's ``decode``), which a plan can play on."""

    __slots__ = ("piles", "size", "present", "up", "cards", "tops", "on_piles", "seat", "wrap", "public", "heard")

    def __init__(self, obs: Observation):
        self.piles, self.size, self.seat, self.public, self.wrap = obs.piles, obs.size, obs.seat, obs.public, obs.wrap
        self.present, self.up, self.tops, self.on_piles, self.heard = (obs.present, obs.up, obs.tops, obs.on_piles,
                                                                       obs.heard)
        self.cards = obs.cards  # face-up position -> card (a new dict per decode: after() copies it before a change)

    def after(self, plays: dict[int, int]) -> Table:
        """The table once the face-up cards ``{pile: position}`` have gone onto those piles (face-down cards they
        uncover stay unknown). Its ``public`` key names the plays too, so plans of it are cached apart."""
        other = Table.__new__(Table)
        for name in Table.__slots__:
            setattr(other, name, getattr(self, name))
        other.cards = dict(self.cards)
        tops = list(self.tops)
        for pile, pos in plays.items():
            card = other.cards.pop(pos)
            other.present &= ~(1 << pos)
            other.up &= ~(1 << pos)
            other.on_piles |= 1 << card
            tops[pile] = card
        other.tops = tuple(tops)
        other.public = (self.public, tuple(sorted(plays.items())))
        return other


def unseen_by_rank(table: Table) -> list[int]:
    """Cards not yet seen, by game rank (not on a pile, not face up now): what the tops may meet later."""
    unseen = [4] * 13
    on = table.on_piles
    while on:
        low = on & -on
        unseen[(_BIT_INDEX[low] % 13 + 1) % 13] -= 1
        on ^= low
    for card in table.cards.values():
        unseen[(card % 13 + 1) % 13] -= 1
    return unseen


def plan(table: Table) -> tuple[tuple[int, ...], ...]:
    """The best chains of face-up cards, one per pile (positions in play order), by the strategy's order."""
    n, wrap = table.piles, table.wrap
    nb = _NEIGHBOURS[wrap]
    free = [(pos, (card % 13 + 1) % 13) for pos, card in sorted(table.cards.items())]
    by_rank: list[list[int]] = [[] for _ in range(13)]
    for pos, gr in free:
        by_rank[gr].append(pos)
    present = table.present
    down = [COVER_MASK[d] for d in range(N_PEAKS) if present >> d & 1 and not table.up >> d & 1]
    unseen = unseen_by_rank(table)
    rank_of = dict(free)
    memo: dict = {}

    def leaf(removed: int, tops: tuple[int, ...]) -> tuple:
        left = present & ~removed
        uncovered = sum(1 for m in down if not left & m)
        fit_ranks = set()
        for t in tops:
            fit_ranks.update(nb[t])
        fit = sum(unseen[r] for r in fit_ranks)
        return (uncovered, removed.bit_count(), fit)

    def search(q: int, removed: int, tops: tuple[int, ...]) -> tuple[tuple, tuple]:
        """(score, chain of pile q onwards as ((pile, pos), ...)) of the best completion."""
        key = (q, removed, tops)
        hit = memo.get(key)
        if hit is not None:
            return hit
        best: tuple[tuple, tuple] | None = None
        if q + 1 < n:
            best = search(q + 1, removed, tops)
        t = tops[q]
        for r in nb[t]:
            for pos in by_rank[r]:
                if removed >> pos & 1:
                    continue
                score, rest = search(q, removed | 1 << pos, tops[:q] + (rank_of[pos],) + tops[q + 1:])
                if best is None or score > best[0]:
                    best = (score, ((q, pos), *rest))
        if best is None:  # last pile and nothing fits it: the plan ends here
            best = (leaf(removed, tops), ())
        memo[key] = best
        return best

    tops = tuple((c % 13 + 1) % 13 for c in table.tops)
    _, moves = search(0, 0, tops)
    chains: list[list[int]] = [[] for _ in range(n)]
    for pile, pos in moves:
        chains[pile].append(pos)
    return tuple(tuple(c) for c in chains)


_PLAN_CACHE: dict[tuple[int, int, int], tuple[tuple[int, ...], ...]] = {}


def cached_plan(table: Table) -> tuple[tuple[int, ...], ...]:
    key = (table.public, table.piles, table.size)
    hit = _PLAN_CACHE.get(key)
    if hit is None:
        if len(_PLAN_CACHE) > 64:
            _PLAN_CACHE.clear()
        hit = _PLAN_CACHE[key] = plan(table)
    return hit


class SummitRushSimple(BitsAgent):
    """The document's simple but careful strategy for one seat of Summit Rush (solo, two or three players)."""

    name = "simple"

    def __init__(self, seed: int | None = None):
        self.reset(seed)

    def reset(self, seed: int | None = None) -> None:
        self.turned: list[int] | None = None  # stock cards each seat has turned this game
        self._prev: tuple[int, int] | None = None  # (face-up peak cards, cards on piles) at the last observation
        self._i_turned = False

    def act_bits(self, bits: int, legal: int, size: int | None = None, n_actions: int | None = None) -> int:
        """The same decision from the observation and mask as ints (bit i = entry i) and their lengths. In a game
        with talking the mask covers every (message, move) pair: the action is ``message * moves + move``."""
        table = Table(decode_table(bits, size, n_actions))
        n = table.piles
        n_moves = N_PEAKS * n + 2
        legal &= (1 << n_moves) - 1  # the moves (with no message; every message goes with any legal move)
        if not legal:
            raise ValueError("the action mask has no legal action: the game is over")
        self._remember(table)
        move, message = self.choose(table, legal, bits, n_actions)
        if not legal >> move & 1:  # cannot happen for a consistent observation; never play an illegal action
            move = n_moves - 1
        self._i_turned = move == n_moves - 2
        return message * n_moves + move

    def choose(self, table: Table, legal: int, bits: int, n_actions: int) -> tuple[int, int]:
        """This tick's move and message from the decoded table and the legal moves; this strategy says nothing."""
        return self.move(table, legal, cached_plan(table)), 0

    def move(self, table: Table, legal: int, chains: tuple[tuple[int, ...], ...]) -> int:
        """Seat p plays the next card of the chain on pile p, or waits if it is empty; when nothing fits any pile,
        the turner turns and the others wait."""
        n = table.piles
        turn, wait = N_PEAKS * n, N_PEAKS * n + 1
        if legal & ((1 << turn) - 1):
            chain = chains[table.seat]
            return chain[0] * n + table.seat if chain else wait
        return turn if self.turner() == table.seat and legal >> turn & 1 else wait

    def turner(self) -> int:
        """The seat that turns when nothing fits: the one with the most stock left (fewest turned), ties to the
        lower seat."""
        return min(range(len(self.turned)), key=lambda p: (self.turned[p], p))

    def _remember(self, table: Table) -> None:
        """Count stock turns per seat from what changed since the last observation."""
        n = table.piles
        face_up = 0
        for card in table.cards.values():
            face_up |= 1 << card
        fresh = not (~table.present & _ALL) and table.on_piles.bit_count() == n
        if self.turned is None or fresh or self._prev is None:
            self.turned = [0] * n
            self._i_turned = False
        else:
            prev_up, prev_on = self._prev
            new = table.on_piles & ~prev_on & ~prev_up
            mine_left = self._i_turned
            while new:
                low = new & -new
                new ^= low
                card = _BIT_INDEX[low]
                if card in table.tops:
                    owner = table.tops.index(card)
                elif mine_left:
                    owner = table.seat
                else:
                    owner = next(p for p in range(n) if p != table.seat) if n > 1 else 0
                if owner == table.seat:
                    mine_left = False
                self.turned[owner] += 1
        self._prev = (face_up, table.on_piles)
