"""Summit Rush: who turns a stock card when nothing fits -- the dead-top convention, over any agent's plays.

When no free card fits either pile, one stock card must be turned, and it covers the top of the turner's pile. The
document's tips say only that one of you turns ("I'll turn!"); the simple strategy lets the seat that has turned
fewest do it. But the two tops are not worth the same: a top whose neighbours are already gone (on the piles, or
face up and unplayable) will take few of the cards still to come, while the other may take many. The loss study
(:mod:`cardzoo.evaluation.studies.summit_rush_losses`) found this choice to be the largest cause of a lost deal a
player could have seen coming ("turn -> wait": the deal was still winnable had the partner turned instead).

**The convention.** When nothing fits, the seat whose pile top has the fewest *outs* turns: the cards not yet seen
(not on a pile, not face up) of the ranks one above and one below it. Ties go to the seat that has turned fewest,
then to the lower seat. Everything it reads is public, so two players who keep it agree on the turner without a
word, as simple's rule does.

:class:`DeadTopTurns` puts the convention over another Summit Rush agent: the agent chooses every move, except in a
tick where no play is legal, where the convention says whether this seat turns or waits (the agent's message, in a
talking game, is kept). Strangers keep other rules, so it also:

- does not turn when a partner said "I'll turn" or "don't turn" during the last tick (as ``simple_talk`` listens);
- turns after one tick in which nothing fits and nobody turned, if it can: a partner whose rule named this seat, or
  whose stock is empty, would otherwise wait with it until the clock ran out.

It acts on the observation and mask only: the turns made so far are counted from the observations (as simple's
memory does).

**A short clock.** Two stock cards turned in one tick cost a stock card but save a tick, and when the clock is
short the tick is worth more: ``learned`` turns on both seats in many of its stuck Expert ticks, and holding it to
one turner lost Expert deals it won, while the convention gained at Normal. So in a game whose clock has fewer than
``double_below`` ticks per peak card (by default, of the levels only Expert's), the seat the convention does not
name still turns if its own agent wants to. It is the whole game's clock
that decides, not the ticks left: a rule on the ticks left per card still to clear was tried, and it switched the
doubles off in the middle of Expert games, where they still paid. The clock is read as a level preset's (as the
search agent reads it); a custom clock no preset has, or an untimed game, counts as long. ``double_below=0``
turns this off. The measurements behind the default: ``evaluation/results/summit_rush_turns.json`` (``python -m
cardzoo.evaluation.studies.summit_rush_turns``).
"""

from __future__ import annotations

import numpy as np

from cardzoo.envs.common.errors import OptionError
from cardzoo.envs.common.layout import to_bits
from cardzoo.envs.summit_rush.observer import Observation
from cardzoo.envs.summit_rush.rules import N_PEAKS, SAY_DONT_TURN, SAY_TURN

from .summit_rush_simple import _NEIGHBOURS, SummitRushSimple, Table, _grank, decode_table, unseen_by_rank


def outs(table: Table, pile: int) -> int:
    """How many cards not yet seen would fit the top of ``pile`` (one rank above or below, round the corner if the
    game wraps)."""
    unseen = unseen_by_rank(table)
    return sum(unseen[r] for r in _NEIGHBOURS[table.wrap][_grank(table.tops[pile] % 13)])


DOUBLE_BELOW = 1.25  # the clock's ticks per peak card below which both seats may turn (the module docstring)


def clock_ticks(obs: Observation) -> int | None:
    """The whole game's clock in ticks of a decoded observation, or None for an untimed game or a clock of no
    level preset."""
    from .summit_rush_search import clock_of  # the search reads the clock the same way

    if not obs.timed:
        return None
    try:
        return clock_of(obs.size, obs.piles, obs.talk, timed=True)[1]
    except OptionError:
        return None


def dead_top_turner(table: Table, turned: list[int]) -> int:
    """The seat the convention names to turn: fewest outs on its pile's top, then fewest turned, then lowest."""
    return min(range(table.piles), key=lambda p: (outs(table, p), turned[p], p))


class DeadTopTurns:
    """Another Summit Rush agent's moves, with the dead-top convention for who turns (the module docstring)."""

    def __init__(self, agent, name: str | None = None, double_below: float = DOUBLE_BELOW):
        if isinstance(double_below, bool) or not isinstance(double_below, int | float) or not double_below >= 0:
            raise OptionError(f"double_below must be a number of ticks per card, 0 or more, not {double_below!r}")
        self.double_below = double_below
        self.agent = agent
        self.name = name or f"{getattr(agent, 'name', 'agent')}_turns"
        self.policies = getattr(agent, "policies", None)  # a learned agent's weights name its cached results
        self.memory = SummitRushSimple()  # only its count of each seat's turns is used, fed every observation
        self._idle: tuple[int, int] | None = None  # the table of the last tick if nothing fitted and nobody turned

    @property
    def description(self) -> str:
        inner = getattr(self.agent, "description", getattr(self.agent, "name", "an agent"))
        return f"{inner}; who turns when nothing fits: the dead-top convention (summit_rush_turns)"

    def reset(self, seed: int | None = None) -> None:
        self.agent.reset(seed)
        self.memory.reset(seed)
        self._idle = None

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        if not action_mask.any():
            raise ValueError("the action mask has no legal action: this agent is not to move")
        action = int(self.agent.act(observation, action_mask))
        n_actions = action_mask.shape[0]
        seen = decode_table(to_bits(observation), observation.shape[0], n_actions)
        table = Table(seen)
        memory = self.memory
        memory._remember(table)
        n = table.piles
        n_moves = N_PEAKS * n + 2
        turn, wait = n_moves - 2, n_moves - 1
        legal = to_bits(action_mask[:n_moves])
        message, move = divmod(action, n_moves)
        state = (table.present, table.on_piles)
        if not legal & ((1 << turn) - 1):  # nothing fits: the convention says who turns
            stalled = self._idle == state
            wants = move == turn and self._short_clock(seen)
            move = turn if self._turns(table, anyway=stalled or wants) and legal >> turn & 1 else wait
            self._idle = state if move == wait else None
        else:
            self._idle = None
        memory._i_turned = move == turn
        return message * n_moves + move

    def _short_clock(self, seen: Observation) -> bool:
        ticks = clock_ticks(seen)
        return ticks is not None and ticks < self.double_below * N_PEAKS

    def _turns(self, table: Table, anyway: bool) -> bool:
        """Whether this seat turns: not after a partner's call; else when told to ``anyway`` (a stalled table, or
        its own agent's turn on a short clock) or when the convention names it."""
        me = table.seat
        heard = [m[0] for q, m in enumerate(table.heard) if q != me and m is not None and m[1] == 0]
        if any(m in (SAY_TURN, SAY_DONT_TURN) for m in heard):
            return False
        return anyway or dead_top_turner(table, self.memory.turned) == me

