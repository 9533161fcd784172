"""Summit Rush convention partners for the benchmark's partner pool: the simple strategy with ONE convention changed.

Each class below is :class:`~cardzoo.agents.summit_rush_simple.SummitRushSimple` (the document's simple but careful
strategy: a joint plan of runs of face-up cards, seat p plays the run on pile p, a stock card is turned only when
nothing fits any pile and then only by the seat that has turned fewest) with exactly one of its conventions
replaced, on purpose. Each is a consistent way to play; a team that mixes conventions pays for it (one card reached
for twice, a run nobody serves, two stock cards turned where one was needed, ticks lost waiting), which is what
cross-play with strangers measures:

======================  ==================  ===================================================================
name                    convention          instead of simple's
======================  ==================  ===================================================================
summit_partner_pile     whose pile          the planned run of the next seat's pile first, then its own
summit_leftmost         which card          no run plan: the leftmost free card that fits its own pile
summit_uncover          which card          no run plan: the fitting card that uncovers most face-down cards now
summit_down             run direction       no run plan: continues its own pile downward (one rank below) first
summit_eager_turn       who turns           turns its stock whenever nothing fits, whoever's turn it is
summit_patient_turn     when to turn        the seat whose turn it is waits two idle ticks before turning
summit_slow             speed               acts every other tick only (waits on the others)
summit_random_card      which card          a uniformly random fitting card onto any pile, no plan
summit_talk_deliver     what a call means   (simple_talk's) "I need a <rank>" asks the partner to deliver it
======================  ==================  ===================================================================

Everything else is simple's: the same observation decoding (observation and mask only, :class:`BitsAgent`), the
same memory of who turned how many stock cards, and in a talking game they say nothing (message 0) and ignore what
they hear -- all but ``summit_talk_deliver``, which is ``simple_talk`` (:mod:`cardzoo.agents.summit_rush_talk`, the
simple strategy saying the document's calls) with one talking convention changed, and silent simple in a silent
game. Only ``summit_random_card`` draws random numbers (its seed, from ``reset``); the others are
deterministic functions of what the seat has observed.
"""

from __future__ import annotations

import numpy as np

from cardzoo.envs.summit_rush.rules import COVER_MASK, N_PEAKS, SAY_NEED, SAY_NOTHING, SAY_ON_PILE

from .summit_rush_simple import _ALL, SummitRushSimple, Table
from .summit_rush_talk import SummitRushSimpleTalk


def _grank(card: int) -> int:
    return (card % 13 + 1) % 13


def fitting(table: Table, legal: int, pile: int) -> list[int]:
    """Positions of the free cards the mask lets this seat play onto ``pile``, left to right."""
    n = table.piles
    return [pos for pos in sorted(table.cards) if legal >> (pos * n + pile) & 1]


def uncovers(table: Table, pos: int) -> int:
    """How many face-down cards taking the card at ``pos`` turns up now (it was the last card covering them)."""
    rest = table.present & ~(1 << pos)
    down = table.present & ~table.up
    return sum(1 for d in range(N_PEAKS) if down >> d & 1 and COVER_MASK[d] >> pos & 1 and not rest & COVER_MASK[d])


class Partner(SummitRushSimple):
    """The simple strategy with one convention changed (a subclass says which); ``start_game`` clears the memory a
    convention keeps, at ``reset`` and when the observation shows a fresh deal."""

    convention = ""

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self._layout = None
        self.start_game()

    def start_game(self) -> None:
        """Forget what this convention remembers of the last game (nothing, unless a subclass remembers)."""

    def _remember(self, table: Table) -> None:
        # A fresh deal: every peak card there and one card on each pile. A tick in which nobody moved looks fresh
        # too, so the face-up cards must differ from the last observation's (a new deal), or there was none.
        layout = (tuple(sorted(table.cards.items())), table.tops)
        fresh = not ~table.present & _ALL and table.on_piles.bit_count() == table.piles
        if self._prev is None or (fresh and layout != self._layout):
            self.start_game()
        self._layout = layout
        super()._remember(table)

    def move(self, table: Table, legal: int, chains: tuple[tuple[int, ...], ...]) -> int:
        """Simple's move while a card fits some pile; this convention's :meth:`turn_or_wait` when none does."""
        if legal & ((1 << N_PEAKS * table.piles) - 1):
            return super().move(table, legal, chains)
        return self.turn_or_wait(table, legal)

    def turn_or_wait(self, table: Table, legal: int) -> int:
        """Nothing fits any pile: simple's rule (the seat that has turned fewest turns, the others wait)."""
        n = table.piles
        turn = N_PEAKS * n
        return turn if self.turner() == table.seat and legal >> turn & 1 else turn + 1


class PartnerPile(Partner):
    """Whose pile: seat p serves the plan's run on the next seat's pile (p + 1, round the table) first, and the run
    on its own pile only when that one is empty; simple serves its own pile's run only and waits when it is empty.
    Beside simple both reach for the same run (one of them touches the card first, the other's tick is spent) until
    it is done."""

    name = "summit_partner_pile"
    convention = "whose pile: serves the plan's run on the next seat's pile first, its own only when that is empty"

    def move(self, table: Table, legal: int, chains: tuple[tuple[int, ...], ...]) -> int:
        n = table.piles
        turn = N_PEAKS * n
        if not legal & ((1 << turn) - 1):
            return self.turn_or_wait(table, legal)
        for pile in ((table.seat + 1) % n, table.seat):
            if chains[pile]:
                return chains[pile][0] * n + pile
        return turn + 1


class Greedy(Partner):
    """No run plan: a free card that fits its own pile, chosen by ``key`` (smallest first); waits when none fits
    its own pile but some card fits another; simple's stock rule when nothing fits anywhere."""

    def key(self, table: Table, pos: int) -> tuple:
        raise NotImplementedError

    def choose(self, table: Table, legal: int, bits: int, n_actions: int) -> tuple[int, int]:
        n = table.piles
        turn = N_PEAKS * n
        if not legal & ((1 << turn) - 1):
            return self.turn_or_wait(table, legal), 0
        mine = fitting(table, legal, table.seat)
        if not mine:
            return turn + 1, 0
        return min(mine, key=lambda pos: self.key(table, pos)) * n + table.seat, 0


class Leftmost(Greedy):
    """Which card: the leftmost free card (lowest position) that fits its own pile, with no look-ahead, where
    simple plays the first card of the run that uncovers most over the whole run."""

    name = "summit_leftmost"
    convention = "which card: the leftmost free card that fits its own pile (no run plan)"

    def key(self, table: Table, pos: int) -> tuple:
        return (pos,)


class Uncover(Greedy):
    """Which card: the fitting card that turns up the most face-down cards at once, ties to the card highest in the
    peaks (lowest position), with no look-ahead."""

    name = "summit_uncover"
    convention = "which card: the fitting card that uncovers most face-down cards now (no run plan)"

    def key(self, table: Table, pos: int) -> tuple:
        return (-uncovers(table, pos), pos)


class Down(Greedy):
    """Run direction: continues its own pile downward -- a card one rank below the top (round the corner) first,
    one rank above only when none below fits; leftmost among equals; no look-ahead."""

    name = "summit_down"
    convention = "run direction: one rank below its pile's top first, then above (no run plan)"

    def key(self, table: Table, pos: int) -> tuple:
        below = (_grank(table.tops[table.seat]) - 1) % 13
        return (_grank(table.cards[pos]) != below, pos)


class EagerTurn(Partner):
    """Who turns: when nothing fits any pile it turns its own stock at once, whoever has turned fewer, where simple
    leaves the turn to the seat that has turned fewest. Beside simple (or itself) two cards come up at once."""

    name = "summit_eager_turn"
    convention = "who turns: turns its stock whenever nothing fits, whoever's turn it is"

    def turn_or_wait(self, table: Table, legal: int) -> int:
        turn = N_PEAKS * table.piles
        return turn if legal >> turn & 1 else turn + 1


class PatientTurn(Partner):
    """When to turn: the seat whose turn it is waits ``patience`` ticks in which nothing fits before it turns (time
    for a partner to turn first), where simple turns at the first such tick."""

    name = "summit_patient_turn"
    convention = "when to turn: waits two idle ticks before turning its stock"

    def __init__(self, seed: int | None = None, patience: int = 2):
        self.patience = patience
        super().__init__(seed)

    def start_game(self) -> None:
        self.idle = 0  # ticks in a row in which nothing fitted any pile

    def choose(self, table: Table, legal: int, bits: int, n_actions: int) -> tuple[int, int]:
        turn = N_PEAKS * table.piles
        self.idle = 0 if legal & ((1 << turn) - 1) else self.idle + 1
        return super().choose(table, legal, bits, n_actions)

    def turn_or_wait(self, table: Table, legal: int) -> int:
        move = super().turn_or_wait(table, legal)
        turn = N_PEAKS * table.piles
        if move != turn:
            return move
        if self.idle <= self.patience:
            return turn + 1
        self.idle = 0  # the next turn waits again
        return turn


class Slow(Partner):
    """Speed: plays simple's move on its first, third, fifth ... tick of a game and waits on the others (a player
    with half simple's speed), where simple acts every tick."""

    name = "summit_slow"
    convention = "speed: acts every other tick, waits on the others"

    def start_game(self) -> None:
        self.ticks = 0  # decisions so far this game

    def choose(self, table: Table, legal: int, bits: int, n_actions: int) -> tuple[int, int]:
        self.ticks += 1
        if self.ticks % 2 == 0:
            return N_PEAKS * table.piles + 1, 0
        return super().choose(table, legal, bits, n_actions)


class RandomCard(Partner):
    """No plan at all: a uniformly random card among those the mask allows, onto any pile it fits (its seed from
    ``reset``); simple's stock rule when nothing fits. Unlike ``random`` it never wastes a stock card or a tick while
    a card fits, which keeps it within the pools' margin of simple (a test member, agents/pools.py)."""

    name = "summit_random_card"
    convention = "which card: a random fitting card onto any pile (no plan)"

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self.rng = np.random.default_rng(seed)

    def choose(self, table: Table, legal: int, bits: int, n_actions: int) -> tuple[int, int]:
        turn = N_PEAKS * table.piles
        plays = legal & ((1 << turn) - 1)
        if not plays:
            return self.turn_or_wait(table, legal), 0
        moves = [a for a in range(turn) if plays >> a & 1]
        return moves[int(self.rng.integers(len(moves)))], 0


class TalkDeliver(SummitRushSimpleTalk):
    """What a call means: ``simple_talk`` says "I need a <rank>" when nothing fits its pile, and a listener takes
    it as news only. Here the call asks the partner to deliver: a player who hears a partner's fresh "I need a
    <rank>" plays a free card of that rank onto the caller's pile (the leftmost, if one fits there) before anything
    else, and the caller leaves such a card to its partner for that tick (it waits rather than play it itself).
    Either way it says nothing in that tick (its own calls were about the move it no longer makes). Beside
    ``simple_talk`` the caller's partner does not deliver, or both reach for the same card."""

    name = "summit_talk_deliver"
    convention = "what a call means: 'I need a <rank>' asks the partner to play it onto the caller's pile"

    def choose(self, table: Table, legal: int, bits: int, n_actions: int) -> tuple[int, int]:
        move, message = super().choose(table, legal, bits, n_actions)
        n, me = table.piles, table.seat
        if n_actions == N_PEAKS * n + 2:  # silent: nothing is called
            return move, message
        wait = N_PEAKS * n + 1
        needs = [m[0] - SAY_NEED if m is not None and m[1] == 0 and SAY_NEED <= m[0] < SAY_ON_PILE else None
                 for m in table.heard]  # each seat's rank (index 0..12 for 2..A) called last tick
        for q in range(n):
            if q != me and needs[q] is not None:
                for pos in fitting(table, legal, q):
                    if table.cards[pos] % 13 == needs[q]:
                        return pos * n + q, SAY_NOTHING
        if needs[me] is not None and move < N_PEAKS * n and table.cards[move // n] % 13 == needs[me] and n > 1:
            return wait, SAY_NOTHING
        return move, message


PARTNERS: tuple[type[SummitRushSimple], ...] = (PartnerPile, Leftmost, Uncover, Down, EagerTurn, PatientTurn, Slow,
                                                RandomCard, TalkDeliver)
