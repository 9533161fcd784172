"""Summit Rush's simple strategy, talking: the same plan, said aloud as the document's tips say, and what the
partners say is heard and used.

It plays the silent strategy (:mod:`cardzoo.agents.summit_rush_simple`: the plan of per-pile runs of face-up
cards, seat p on pile p, stock turned only when nothing fits) and adds, each tick, one message (heard by everyone
from the next tick on, so every message is about the tick after the one it is said in):

- **"I'm taking <position>"** -- a claim on the card it will play next tick: the next card of its own run after
  this tick's. A claim binds ("touch it, play it"): next tick the claimant plays it if it is still there and still
  fits the claimant's pile, and every listener plans as if it already lay there (the plan is made again from the
  table with the claimed cards on their claimants' piles). Two claims on one card: the lower seat has it.
- **"I'll turn"** -- said when a stock card must be turned next tick and it is this seat's turn to turn: this
  tick's planned cards uncover nothing and, once they lie, no free card fits any pile. A listener who hears it
  does not turn next tick (whatever its own count of turns says); the speaker turns if nothing fits then.
- **"don't turn"** -- an objection: a partner said "I'll turn" but a free card fits a pile now, so the turn would
  be needless. A listener who hears it does not turn that tick.
- **"<rank> on my pile"** -- after turning a stock card, the card it turned ("Eight on my pile!").
- **"I need a <rank>"** -- when nothing fits its own pile: the neighbour rank of its pile's top with the most
  cards not yet seen ("I need a Jack!").

Priority when several apply: objection, turn, claim, pile, need. What it hears changes what it does: a claimed card
is left to its claimant and the plan is made around it, an announced turn or an objection keeps it from turning,
and its own claims and announcements (it hears itself too) bind it. It reads the messages from the observation's
``heard``/``heard_ago`` pieces (a message is *fresh* when said during the last tick); a claim older than that is
stale and ignored.

Two of these players say only what the other could compute from the same public table (the plan is a function of
it), so talking adds no information to this team; what it changes is that a claimed card is played even if a card
uncovered in the meantime would have made a different plan, and that a partner who plans differently (or not at
all) can still be kept out of the way. In a silent game it is exactly the silent strategy.
"""

from __future__ import annotations

import numpy as np

from cardzoo.envs.summit_rush.observer import HEARD_AGES, decode  # noqa: F401 (HEARD_AGES re-exported)
from cardzoo.envs.summit_rush.rules import (
    COVER_MASK,
    N_MESSAGES,
    N_PEAKS,
    SAY_DONT_TURN,
    SAY_NEED,
    SAY_NOTHING,
    SAY_ON_PILE,
    SAY_TAKING,
    SAY_TURN,
)

from .summit_rush_simple import _NEIGHBOURS, SummitRushSimple, Table, cached_plan, piles_of, unseen_by_rank


def heard(bits: int, size: int, piles: int) -> list[tuple[int, int] | None]:
    """Each seat's last message and how many ticks ago it was said (``None`` before the first), from an observation
    of a talking game (bits as an int, ``size`` entries): the observer's ``decode``."""
    return list(decode(bits, size, (N_PEAKS * piles + 2) * N_MESSAGES).heard)


def _grank(card: int) -> int:
    return (card % 13 + 1) % 13


class SummitRushSimpleTalk(SummitRushSimple):
    """The simple strategy with the document's calls, listening to its partners (see the module docstring)."""

    name = "simple_talk"

    def choose(self, table: Table, legal: int, bits: int, n_actions: int) -> tuple[int, int]:
        n, me = table.piles, table.seat
        if n_actions == N_PEAKS * n + 2:  # the silent variant: nothing to say or hear
            return super().choose(table, legal, bits, n_actions)
        turn, wait = N_PEAKS * n, N_PEAKS * n + 1
        fresh = [m[0] if m is not None and m[1] == 0 else SAY_NOTHING for m in table.heard]
        plays_now = legal & ((1 << turn) - 1)
        # Claims said last tick that still stand: the card is still free and fits its claimant's pile.
        claims: dict[int, int] = {}
        for q in range(n):
            pos = fresh[q] - SAY_TAKING
            if 0 <= pos < N_PEAKS and legal >> (pos * n + q) & 1 and pos not in claims.values():
                claims[q] = pos
        after = table.after(claims) if claims else table
        chains = cached_plan(after)
        # This tick's cards (claims first, then each seat's run) and the card this seat claims for the next tick.
        tick = dict(claims)
        for q in range(n):
            if q not in claims and plays_now and chains[q]:
                tick[q] = chains[q][0]
        mine = chains[me] if me in claims else chains[me][1:]
        if me in tick:
            move = tick[me] * n + me
        elif plays_now:
            move = wait
        else:
            move = turn if self._turns_now(fresh, me) and legal >> turn & 1 else wait
        return move, self._message(table, fresh, plays_now, tick, mine, move == wait)

    def _turns_now(self, fresh: list[int], me: int) -> bool:
        """Nothing fits: whether this seat turns. A partner's announcement or objection heard now keeps it from
        turning; its own announcement binds it; otherwise the silent strategy's turner turns."""
        if any(m in (SAY_TURN, SAY_DONT_TURN) for q, m in enumerate(fresh) if q != me):
            return False
        return fresh[me] == SAY_TURN or self.turner() == me

    def _message(self, table: Table, fresh: list[int], plays_now: int, tick: dict[int, int],
                 mine: tuple[int, ...], idle: bool) -> int:
        me = table.seat
        if plays_now and any(m == SAY_TURN for q, m in enumerate(fresh) if q != me):
            return SAY_DONT_TURN
        if plays_now and self.turner() == me and turn_is_certain(table, tick):
            return SAY_TURN
        if mine:
            return SAY_TAKING + mine[0]
        top = table.tops[me]
        if self._i_turned:  # the card on top of this seat's pile came from its stock last tick
            return SAY_ON_PILE + top % 13
        nb = _NEIGHBOURS[table.wrap][_grank(top)]
        if idle and not any(_grank(c) in nb for c in table.cards.values()):
            unseen = unseen_by_rank(table)
            need = max(nb, key=lambda r: (unseen[r], r))
            return SAY_NEED + (need - 1) % 13  # game rank back to the rank index (2..A)
        return SAY_NOTHING


def turn_is_certain(table: Table, tick: dict[int, int]) -> bool:
    """Once this tick's cards (``{pile: position}``) lie, a stock card must be turned: they uncover no face-down
    card, and no free card left fits any pile's new top."""
    after = table.after(tick)
    for d in range(N_PEAKS):
        if table.present >> d & 1 and not table.up >> d & 1 and not after.present & COVER_MASK[d]:
            return False
    nb = _NEIGHBOURS[table.wrap]
    fitting = {r for top in after.tops for r in nb[_grank(top)]}
    return not any(_grank(c) in fitting for c in after.cards.values())


class Muted:
    """A Summit Rush agent whose messages are never said: each action's message is replaced by nothing, its move
    kept (an ablation: what is a team worth without its words?)."""

    def __init__(self, agent):
        self.agent = agent
        self.name = f"{agent.name}_muted"
        self.policies = getattr(agent, "policies", None)  # a learned agent's weights name its cached results

    def reset(self, seed: int | None = None) -> None:
        self.agent.reset(seed)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        return self.agent.act(observation, action_mask) % (N_PEAKS * piles_of(action_mask.shape[0]) + 2)
