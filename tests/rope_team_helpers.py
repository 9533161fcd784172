"""Building Rope Team positions by hand for the tests."""

from __future__ import annotations

import numpy as np

from cardzoo.envs.common.cards import CARD_NAMES, STANDARD_CARDS
from cardzoo.envs.rope_team import rules


def c(name: str) -> int:
    return STANDARD_CARDS[name]


def build_deck(ridge: list[str], hand0: list[str], hand1: list[str], no_suits1: str = "") -> list[str]:
    """A full 52-card deck string list with the given ridge (9, or fewer from position 0) and partial hands.

    The hands are filled up to 13 with the lowest unused cards; ``no_suits1`` lists suits player 1 must not get.
    """
    used = set(ridge) | set(hand0) | set(hand1)
    free = [n for n in CARD_NAMES if n not in used]
    ridge = list(ridge)
    while len(ridge) < 9:
        ridge.append(free.pop())  # from the top (spades) so low cards stay for the hands
    hand1 = list(hand1)
    for n in list(free):
        if len(hand1) == 13:
            break
        if n[1] not in no_suits1:
            hand1.append(n)
            free.remove(n)
    hand0 = list(hand0)
    while len(hand0) < 13:
        hand0.append(free.pop(0))
    deck = ridge + hand0 + hand1 + free
    assert len(deck) == 52 and len(set(deck)) == 52
    return deck


def game(deck: list[str], config: rules.Config | None = None, dealer: int = 1, seed: int = 0) -> rules.State:
    return rules.new_game(config or rules.Config(), [c(n) for n in deck], np.random.default_rng(seed), dealer)


def play(s: rules.State, *names: str) -> None:
    for n in names:
        card = c(n)
        assert rules.legal_mask(s) >> card & 1, f"{n} is not legal here"
        rules.play(s, card)


# Every 2-7 (no pull) and one 8 (a pull of 1) per hand: deal 1 moves the coin at most two steps from the camp, so
# nobody falls or wins and the game always reaches deal 2, whatever is played.
QUIET_HAND0 = [r + s for s in "CD" for r in "234567"] + ["8H"]
QUIET_HAND1 = [r + s for s in "HS" for r in "234567"] + ["8S"]
