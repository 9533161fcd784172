"""Ascend, a toy cooperative game for the tests only (the dummy fourth game of tests/test_fourth_game.py).

Six cards, 1 to 6, three to each of two players; players alternate, ``player_0`` first, each playing one card of
their hand onto one pile. The team wins if every card is higher than the one before it, and loses ("fall") the
moment one is lower.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

N_CARDS = 6
HAND = 3


@dataclass(frozen=True)
class Config:
    cards: int = N_CARDS


LEVELS = {"normal": Config()}


@dataclass
class State:
    config: Config
    hands: list[set[int]]
    played: list[int] = field(default_factory=list)
    to_move: int = 0
    outcome: str | None = None


def deal(config: Config, rng) -> State:
    rng = np.random.default_rng(rng) if not isinstance(rng, np.random.Generator) else rng
    order = [int(c) for c in rng.permutation(config.cards)]
    return State(config, [set(order[:HAND]), set(order[HAND:])])


def legal(s: State) -> list[int]:
    return [] if s.outcome is not None else sorted(s.hands[s.to_move])


def play(s: State, card: int) -> None:
    s.hands[s.to_move].remove(card)
    s.played.append(card)
    if len(s.played) >= 2 and s.played[-1] < s.played[-2]:
        s.outcome = "fall"
    elif not any(s.hands):
        s.outcome = "win"
    s.to_move = 1 - s.to_move


def summary(s: State) -> dict:
    return {"outcome": s.outcome, "played": len(s.played)}
