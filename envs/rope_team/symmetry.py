"""Rope Team's suit symmetries: relabelling the four suits leaves the game unchanged.

The rules never name a suit: a trick is won by the led suit or by trumps, and trumps are whatever suit the last
uncovered ridge card has (none on Expert); steps depend on the rank alone. So for any permutation ``sigma`` of the
suits (``sigma[s]`` is the new suit of suit ``s``), the game dealt from the relabelled deck, played with the
relabelled cards, is the relabelled game: the same tricks, coin, ropes and outcome, its trumps ``sigma[trumps]``.
Ranks are not symmetric (they are the steps and the order within a suit).

Pure functions over card ints (``suit * 13 + rank``) and over observation vectors, for training with other-play
(``cardzoo.training.otherplay``): a seat that sees the game through ``sigma`` cannot agree with its partner on a
convention that names a suit. ``tests/test_rope_team_symmetry.py`` replays whole games relabelled.
"""

from __future__ import annotations

from itertools import permutations

import numpy as np

from .observer import LAYOUT
from .rules import RIDGE

SUITS = 4
RANKS = 13

# every relabelling of the suits, the identity first
SUIT_PERMUTATIONS: tuple[tuple[int, ...], ...] = tuple(permutations(range(SUITS)))

# the observation pieces indexed by card, and those holding one suit per ridge position
_CARD_PIECES = ("hand", "partner_hand", "played_self", "played_partner", "led")


def permute_card(card: int, sigma) -> int:
    """``card`` with its suit relabelled by ``sigma``."""
    return sigma[card // RANKS] * RANKS + card % RANKS


def card_permutation(sigma) -> np.ndarray:
    """int64[52]: entry ``c`` is card ``c`` relabelled."""
    return np.array([permute_card(c, sigma) for c in range(SUITS * RANKS)], np.int64)


def permute_mask(mask: int, sigma) -> int:
    """A card mask (52-bit int) with every card relabelled."""
    out = 0
    for c in range(SUITS * RANKS):
        if mask >> c & 1:
            out |= 1 << permute_card(c, sigma)
    return out


def permute_suit(suit: int, sigma) -> int:
    """A suit index relabelled; -1 (no trumps) stays -1."""
    return suit if suit < 0 else sigma[suit]


def inverse(sigma) -> tuple[int, ...]:
    out = [0] * SUITS
    for s, t in enumerate(sigma):
        out[t] = s
    return tuple(out)


def observation_index(sigma) -> np.ndarray:
    """int64[LAYOUT.size]: the gather that relabels an observation, ``relabelled = obs[..., index]``.

    Entry ``i`` of the relabelled vector is entry ``index[i]`` of the original: a card piece's entry for card
    ``permute_card(c)`` comes from card ``c``'s, a ridge position's suit entry ``sigma[s]`` from suit ``s``'s, and
    trumps ``1 + sigma[s]`` from ``1 + s`` (entry 0 is "no trumps"). Every other entry is suit-free."""
    index = np.arange(LAYOUT.size)
    offsets = LAYOUT.offsets
    cards = card_permutation(sigma)
    for piece in _CARD_PIECES:
        index[offsets[piece] + cards] = offsets[piece] + np.arange(SUITS * RANKS)
    suits = np.asarray(sigma)
    for pos in range(RIDGE):
        base = offsets["ridge_suit"] + SUITS * pos
        index[base + suits] = base + np.arange(SUITS)
    index[offsets["trumps"] + 1 + suits] = offsets["trumps"] + 1 + np.arange(SUITS)
    return index


def permute_observation(obs: np.ndarray, sigma) -> np.ndarray:
    """An observation vector (or rows of them) as the relabelled game shows it."""
    return np.asarray(obs)[..., observation_index(sigma)]


def permute_action_mask(mask: np.ndarray, sigma) -> np.ndarray:
    """A 52-wide action mask (or rows of them) relabelled: actions are cards."""
    mask = np.asarray(mask)
    out = np.empty_like(mask)
    out[..., card_permutation(sigma)] = mask
    return out


def tables() -> tuple[np.ndarray, np.ndarray]:
    """Every relabelling at once, for array users: int64[24, LAYOUT.size] observation gathers (as
    :func:`observation_index`) and int64[24, 52] card maps (as :func:`card_permutation`), in the order of
    :data:`SUIT_PERMUTATIONS`."""
    return (np.stack([observation_index(s) for s in SUIT_PERMUTATIONS]),
            np.stack([card_permutation(s) for s in SUIT_PERMUTATIONS]))
