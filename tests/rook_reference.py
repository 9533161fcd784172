"""The Rook search's rollouts as they were before they were batched: one world at a time, ``rules.apply`` and the
rollout policy on Python ints. Kept only as the reference the batched rollouts (:mod:`cardzoo.agents.rook_rollouts`)
are tested against, move for move, and as a search (:class:`PerWorldRookSearch`) whose decisions the batched one
must make."""

from __future__ import annotations

import numpy as np

from cardzoo.agents.rook_heuristic import best_trumps
from cardzoo.agents.rook_search import RookSearch
from cardzoo.envs.common.cards import SUIT_MASKS, cards_of
from cardzoo.envs.rook import rules
from cardzoo.envs.rook.rules import (
    DECK_MASK,
    N_CARDS,
    POINT_MASK,
    POINTS,
    ROOK,
    ROOK_BIT,
    TAKE_HIDDEN,
    TAKE_UP,
    TRICKS,
    TRUMP0,
)

# Rollout policy values, in points (the heuristic's, without its card counting).
_TRICK_VALUE = 6.0  # a trick's worth besides its points: most tricks, the draw choice, the lead
_REPLY = 3.0  # points the opponent adds to a trick she wins over a lead
_RANK = tuple(c % 13 for c in range(N_CARDS))
_SUIT_ROOK = tuple(SUIT_MASKS[s] | ROOK_BIT for s in range(4))
_ABOVE = tuple(SUIT_MASKS[c // 13] & ~((2 << c) - 1) & DECK_MASK if c < 52 else 0 for c in range(N_CARDS))


def _keep_table(trumps: int) -> tuple[float, ...]:
    """What holding each card is worth to the rollout policy, with ``trumps`` named."""
    out = []
    for c in range(N_CARDS):
        if c == ROOK or c // 13 == trumps:
            out.append(8.0 + (0.0 if c == ROOK else 0.4 * (_RANK[c] - 1)))
        else:
            out.append(max(0.0, _RANK[c] - 7.0))
    return tuple(out)


_KEEP = tuple(_keep_table(t) for t in range(4))


# ---------------------------------------------------------------------------- rollout policy
def rollout_action(s: rules.State) -> int:
    """The rollout policy's action in ``s`` (any phase but bidding), reading the sampled world directly."""
    phase = s.phase
    p = s.to_move
    if phase == rules.PLAY:
        hand = s.hands[p]
        trumps = s.trumps
        keep = _KEEP[trumps]
        led = s.led
        most = s.tricks[0] if s.tricks[0] > s.tricks[1] else s.tricks[1]
        trick = 2.0 + (4.0 if 2 * most < TRICKS else 0.0) + (2.0 if s.face_up is not None else 0.0)
        if led is not None:
            legal = hand & rules.follow_mask(led, trumps) or hand
            best, best_score = -1, -1e9
            base = POINTS[led] + trick
            m = legal
            while m:
                low = m & -m
                c = low.bit_length() - 1
                m ^= low
                stake = base + POINTS[c]
                score = (stake if rules.second_wins(led, c, trumps) else -stake) - keep[c]
                if score > best_score:
                    best, best_score = c, score
            return best
        opp = s.hands[1 - p]
        tmask = _SUIT_ROOK[trumps]
        opp_trumps = opp & tmask
        best, best_score = -1, -1e9
        m = hand
        while m:
            low = m & -m
            c = low.bit_length() - 1
            m ^= low
            if tmask >> c & 1:
                above = tmask & ~ROOK_BIT if c == ROOK else _ABOVE[c]
                wins = not opp & above
            else:
                suit = opp & SUIT_MASKS[c // 13]
                wins = not (opp & _ABOVE[c]) if suit else not opp_trumps
            pts = POINTS[c]
            score = (pts + trick if wins else -(pts + _REPLY + trick)) - keep[c]
            if score > best_score:
                best, best_score = c, score
        return best
    if phase == rules.DRAW:
        up = s.face_up
        if POINTS[up] or up == ROOK or up // 13 == s.trumps or _RANK[up] >= 10:
            return TAKE_UP
        return TAKE_HIDDEN
    if phase == rules.DISCARD:
        hand = s.hands[p]
        legal = hand & ~POINT_MASK or hand
        return _discard_order(hand, legal, s.trumps)[0]
    if phase == rules.TRUMP:
        return TRUMP0 + best_trumps(s.hands[p])
    raise ValueError(f"the rollout policy does not bid (phase {rules.PHASE_NAMES[phase]})")


def _discard_order(hand: int, legal: int, trumps: int) -> list[int]:
    """Legal discards, cheapest first: non-trumps before trumps, low ranks and short suits first."""
    tmask = _SUIT_ROOK[trumps]

    def key(c: int) -> tuple[float, int]:
        if tmask >> c & 1:
            return 100.0 + _KEEP[trumps][c], c
        return max(0, _RANK[c] - 7) + 0.3 * (hand & SUIT_MASKS[c // 13]).bit_count() + 0.2 * POINTS[c], c

    return sorted(cards_of(legal), key=key)


def rollout(s: rules.State) -> list[float]:
    """Play the round in ``s`` (mutated) to its end with the rollout policy; the score changes ``[d0, d1]``."""
    while True:
        result = rules.apply(s, rollout_action(s))
        if result is not None:
            return result


class PerWorldRookSearch(RookSearch):
    """The search with its rollouts played one world at a time (as before they were batched)."""

    def _play_out(self, states, first):
        deltas, points = [], []
        for i, state in enumerate(states):
            s = state.copy()
            result = None if first is None else rules.apply(s, first[i])
            if result is None:
                result = rollout(s)
            deltas.append(result)
            points.append(s.last_round["points"])
        return np.array(deltas, np.float64), np.array(points, np.int64)
