"""Games as generators of the moves they need, played one at a time (:func:`drive`) or a chunk at once
(:func:`play`), so that an agent can decide a move in every waiting game with one call (a batched network, a search
over many games' positions at once).

A game is a generator that yields ``(seat, observation, action_mask)`` whenever it needs a move, is sent the move
(or has the agent's exception thrown in at that point) and returns the game's record; the runner's game loops are
written this way (``cardzoo.agents.loops.env_game_steps``, ``ticks.game_steps``), so one-at-a-time
(``agents.loops.drive``) and lockstep play run the same code.

An agent opts in to lockstep play by giving its class an ``act_batch``::

    class MyAgent:
        def act(self, observation, action_mask) -> int: ...

        @staticmethod
        def act_batch(agents, observations, action_masks):
            # agents[i]: the agent of game i (each made for its own game, as for act); observations and action_masks
            # stacked, one row per game; returns one action per game
            ...

        batch_size = 64  # optional: the most games in one call (default: every waiting game of the chunk)

In :func:`play` every game runs until it asks a batching seat for a move (a seat that answers game by game is asked
at once). When every unfinished game waits, each batching seat answers all of its waiting games, in chunk order, in
one call, and the games go on. So a chunk's records equal the game-by-game records whenever ``act_batch`` makes the
moves ``act`` would (tests/test_lockstep.py). A batch call is one decision in each of its games: it runs under one
decision's time limit, its time is shared equally among them, an exception from it loses all of them, and an entry
that is not an action loses its own game.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from cardzoo.agents.isolated import AgentCrash, IsolatedAgent
from cardzoo.agents.loops import Game, Request, ask, drive, step

__all__ = ["Abandoned", "BatchedSeat", "SlotAgent", "drive", "play"]


class Abandoned(Exception):
    """Thrown into a game still waiting when another game of the chunk failed and the run stops on a failure."""


class BatchedSeat:
    """A seat whose agent answers many games at once: ``call(slots, observations, masks)`` returns one entry per
    slot, an action or an exception (that game's failure); an exception it raises fails every game of the call.
    ``fail(problem, error)`` is what a game is handed for an entry that is not an action (``error`` None) or for an
    exception; ``check(entry)`` whether an entry is an action."""

    def __init__(self, call: Callable, batch_size: int | None, clock: Callable[[], float],
                 fail: Callable[[str, BaseException | None], BaseException], check: Callable[[Any], bool]):
        self.call, self.batch_size, self.clock, self.fail, self.check = call, batch_size, clock, fail, check

    def answer(self, waiting: list[tuple[Request, SlotAgent]]) -> list[Any]:
        """The answers to ``waiting`` (request, the game's slot agent) pairs, in order; the slot agents' time and
        decisions are counted."""
        out: list[Any] = []
        size = self.batch_size or len(waiting)
        for start in range(0, len(waiting), size):
            part = waiting[start:start + size]
            slots = [agent.slot for _, agent in part]
            observations = np.stack([np.asarray(request[1]) for request, _ in part])
            masks = np.stack([np.asarray(request[2]) for request, _ in part])
            begun = self.clock()
            try:
                actions = list(self.call(slots, observations, masks))
                if len(actions) != len(part):
                    raise ValueError(f"it returned {len(actions)} actions for {len(part)} games")
            except Exception as err:  # every game of the call lost
                actions = [err] * len(part)
            spent = (self.clock() - begun) / len(part)
            for (_, agent), action in zip(part, actions, strict=True):
                agent.cpu += spent
                agent.decisions += 1
                where = f"decision {agent.decisions}: act_batch ({len(part)} games)"
                if isinstance(action, AgentCrash):  # an isolated agent's: its message says what happened
                    action = self.fail(str(action), action)
                elif isinstance(action, BaseException):
                    action = self.fail(f"{where} raised {type(action).__name__}: {action}", action)
                elif not self.check(action):
                    action = self.fail(f"{where} returned {action!r} for this game, not an action", None)
                out.append(action if isinstance(action, BaseException) else int(action))
        return out


class SlotAgent:
    """A batching seat's agent in one game of a chunk (slot ``slot``): the game's requests to it wait for the
    seat's batch; ``reset`` starts the slot's game; ``cpu`` and ``decisions`` are counted by the batches."""

    def __init__(self, slot: int, reset: Callable[[int | None], None]):
        self.slot, self._reset = slot, reset
        self.cpu, self.decisions = 0.0, 0

    def reset(self, seed: int | None = None) -> None:
        self.cpu, self.decisions = 0.0, 0
        self._reset(seed)


def play(games: list[tuple[Game, Sequence]], seats: dict[int, BatchedSeat],
         stopped: Callable[[], bool] = lambda: False) -> list[Any]:
    """Play every game (a generator, and its agents by seat: a :class:`SlotAgent` for each seat in ``seats``) to
    its end, in lockstep (module docstring). Once ``stopped()`` is true, waiting games get :class:`Abandoned`. The
    games' records, in order."""
    records: list[Any] = [None] * len(games)
    waiting: dict[int, Request] = {}

    def advance(i: int, answer: Any) -> None:
        game, agents = games[i]
        request, record = step(game, answer)
        while request is not None and request[0] not in seats:  # a seat that answers game by game: at once
            request, record = step(game, ask(agents[request[0]], request))
        if request is None:
            records[i] = record
        else:
            waiting[i] = request

    for i in range(len(games)):
        advance(i, None)
    while waiting:
        now = sorted(waiting.items())
        waiting.clear()
        if stopped():
            for i, _ in now:
                advance(i, Abandoned())
            continue
        answers: dict[int, Any] = {}
        for seat in sorted({request[0] for _, request in now}):
            mine = [(i, request) for i, request in now if request[0] == seat]
            pairs = [(request, games[i][1][seat]) for i, request in mine]
            answers.update(zip((i for i, _ in mine), seats[seat].answer(pairs), strict=True))
        for i, _ in now:
            advance(i, answers[i])
    return records


def target(agent):
    """The object whose class may define ``act_batch``: a factory agent's current game object, else the agent."""
    from cardzoo.agents.factory import FactoryAgent

    if isinstance(agent, FactoryAgent):
        if agent.agent is None:
            agent.reset(None)
        return agent.agent
    return agent


def batches(agent) -> bool:
    """Whether an in-process agent (or the game object a factory agent makes) has ``act_batch``."""
    return callable(getattr(type(target(agent)), "act_batch", None))


def batch_size(agent) -> int | None:
    size = getattr(type(target(agent)), "batch_size", None)
    return size if isinstance(size, int) and not isinstance(size, bool) and size > 0 else None


def in_process_call(agents: Sequence) -> Callable:
    """The batch call of in-process agents (``agents[slot]``, each a game's agent or a factory agent holding it):
    ``act_batch`` of the first one's class, with every slot's agent."""

    def call(slots: list[int], observations: np.ndarray, masks: np.ndarray):
        made = [target(agents[s]) for s in slots]
        return type(made[0]).act_batch(made, observations, masks)

    return call


def wall_or_cpu(agent) -> Callable[[], float]:
    """An isolated agent thinks in another process: its wall time is what it spends; else this process's CPU."""
    return time.perf_counter if isinstance(agent, IsolatedAgent) else time.process_time
