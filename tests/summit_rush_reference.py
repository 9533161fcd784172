"""The Summit Rush search's rollouts as they were before they were batched: one world at a time, ``rules.play_tick``
and the simple strategy's one-step form on Python ints. Kept only as the reference the batched rollouts
(:mod:`cardzoo.agents.summit_rush_rollouts`) are tested against, value for value and decision for decision."""

from __future__ import annotations

import random

from cardzoo.agents.summit_rush_search import Public, candidates, sample_world
from cardzoo.agents.summit_rush_simple import _NEIGHBOURS
from cardzoo.envs.summit_rush import rules
from cardzoo.envs.summit_rush.rules import COVER_MASK, COVERS, N_PEAKS

_GRANK = tuple((c % 13 + 1) % 13 for c in range(52))  # game rank of each card


class Blueprint:
    """The rollout policy for one world: the simple strategy's choices, one step at a time, on face-up cards."""

    def __init__(self, s: rules.State):
        self.n = n = s.config.players
        self.turn, self.wait = N_PEAKS * n, N_PEAKS * n + 1
        self.rank = rank = [_GRANK[c] for c in s.peaks]
        of_rank = [0] * 13
        for pos in range(N_PEAKS):
            of_rank[rank[pos]] |= 1 << pos
        nb = _NEIGHBOURS[s.config.wrap]
        # Positions whose card fits a top of game rank r (face up or not: the caller masks with the free cards).
        self.fit = [sum(of_rank[q] for q in nb[r]) for r in range(13)]

    def actions(self, s: rules.State) -> list[int]:
        n, fit, rank = self.n, self.fit, self.rank
        up, present = s.up, s.present
        acts = [self.wait] * n
        taken = 0
        for p in range(n):
            cand = up & fit[_GRANK[s.tops[p]]] & ~taken
            best, best_score = -1, -1
            while cand:
                low = cand & -cand
                cand ^= low
                pos = low.bit_length() - 1
                left = present & ~low
                score = 0
                for q in COVERS[pos]:
                    if not left & COVER_MASK[q]:
                        score += 4
                if up & ~low & ~taken & fit[rank[pos]]:
                    score += 1
                if score > best_score:
                    best, best_score = pos, score
            if best >= 0:
                acts[p] = best * n + p
                taken |= 1 << best
        if not taken:
            left = s.stock_left
            turner = max(range(n), key=lambda q: (left[q], -q))
            if left[turner]:
                acts[turner] = self.turn
        return acts


def rollout(world: rules.State, blueprint: Blueprint, joint: tuple[int, ...], depth: int | None) -> rules.State:
    """Play ``joint`` then the blueprint for at most ``depth`` more ticks (None: to the end) in a copy of ``world``."""
    s = world.copy()
    order = tuple(range(blueprint.n))
    rules.play_tick(s, joint, order)
    ticks = 0
    while s.outcome is None and (depth is None or ticks < depth):
        rules.play_tick(s, blueprint.actions(s), order)
        ticks += 1
    return s


def search_per_world(pub: Public, worlds: int, depth: int | None, z: float, team_seed: int) -> tuple[int, ...]:
    """The search's choice as it was made before the rollouts were batched."""
    cands = candidates(pub)
    if len(cands) == 1:
        return cands[0]
    rng = random.Random(repr((pub.key, team_seed)))  # str seeds hash with SHA-512: the same in every process
    better = [0] * len(cands)  # worlds where candidate i ends better than the blueprint's move (candidate 0)
    worse = [0] * len(cands)
    for _ in range(worlds):
        world = sample_world(pub, rng)
        blueprint = Blueprint(world)
        values = [value(rollout(world, blueprint, joint, depth)) for joint in cands]
        for i, v in enumerate(values):
            better[i] += v > values[0]
            worse[i] += v < values[0]
    # Deviate from the blueprint's move only for a clear gain, a sign test over the worlds: among many noisy
    # candidates the best looks better than it is (the winner's curse), as in SPARTA's deviation threshold.
    best = max(range(len(cands)), key=lambda i: (better[i] - worse[i], -i))
    gain = better[best] - worse[best]
    return cands[best] if gain > 0 and gain >= z * (better[best] + worse[best]) ** 0.5 else cands[0]


def value(end: rules.State) -> float:
    """A rollout's result: a win, then the stock cards left on it (the score); every loss is 0."""
    return 1 + sum(end.stock_left) / 100 if end.outcome == rules.WIN else 0.0


