"""Summit Rush rollouts batched over worlds: every sampled world times every candidate joint move, played to the end
at once on the batched engine's array core, with the blueprint's decisions batched over the rows too.

This is the engine of the search agent (:mod:`cardzoo.agents.summit_rush_search`). One row is one world with one
candidate joint move played in its first tick; the rows are rules states loaded into
:class:`cardzoo.envs.summit_rush.batched._Engine` (the rules on arrays, lockstep-equal to ``rules.play_tick``),
whose touch order is fixed to seat order, as the search's rollouts always were. After the first tick every seat
acts by the **blueprint**, a batched policy ``policy(obs[N, O], mask[N, A]) -> actions[N]`` on the rows' silent
observations of that seat (the engine's observation, as the single env's with ``talk=False``, for the world's
config: one clock tick a second). The simple strategy's one-step form (:class:`SimpleBlueprint`) is the default;
anything with that signature plugs in (a learned numpy policy reading silent observations, say), built per config
by a factory ``blueprint(config) -> policy``.

Each row plays until its game ends or ``depth`` ticks after the candidate's; the value is that of the search: a
win counts 1 plus the stock cards left / 100, anything else 0.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

import numpy as np

from cardzoo.envs.common.errors import PolicyError
from cardzoo.envs.summit_rush import rules
from cardzoo.envs.summit_rush.batched import WIN, _Engine
from cardzoo.envs.summit_rush.observer import Observer
from cardzoo.envs.summit_rush.rules import COVER_MASK, COVERS, N_PEAKS

from .summit_rush_simple import _NEIGHBOURS

Policy = Callable[[np.ndarray, np.ndarray], np.ndarray]
BlueprintFactory = Callable[[rules.Config], Policy]

_BITS = np.uint32(1) << np.arange(N_PEAKS, dtype=np.uint32)
_BITS64 = np.int64(1) << np.arange(N_PEAKS, dtype=np.int64)
# Each position's (up to two) covered positions, padded with -1, and their cover masks (0 where padded).
_COVERED = np.array([list(c) + [-1] * (2 - len(c)) for c in COVERS], np.int64)
_COVERED_VALID = _COVERED >= 0
_COVERED_MASK = np.where(_COVERED_VALID, np.array(COVER_MASK, np.int64)[np.maximum(_COVERED, 0)], 0)
_RANKS1 = np.arange(1, 14, dtype=np.float32)
_GRANK = (np.arange(13) + 1) % 13  # game rank (A = 0) of the observation's rank index (2..A)


class SimpleBlueprint:
    """The search's rollout policy (the simple strategy's one-step form), batched, from the silent observation.

    For each row, piles in seat order each take the face-up card that fits them and is not taken by an earlier
    pile, scored 4 for each card it uncovers plus 1 if a free card still fits it once it lies on the pile (the
    lowest position on ties); if no pile takes a card, the seat with most stock left (the lowest on ties) turns.
    The row's seat (from the observation) plays its pile's part. It reads only face-up cards, as a player would."""

    def __init__(self, config: rules.Config):
        self.players = p = config.players
        observer = Observer(rules.Config(players=p, stock=config.stock, time_limit=config.time_limit,
                                         seconds_per_action=config.seconds_per_action, wrap=config.wrap))
        self.offsets = observer.layout.offsets
        self.size = observer.size
        self.stock_len = observer.stock_len
        self.turn, self.wait = N_PEAKS * p, N_PEAKS * p + 1
        # the game ranks (bit r) that fit onto a top of game rank r; rank 13 = no card, fits nothing
        self.fit_bits = np.array([sum(1 << q for q in _NEIGHBOURS[config.wrap][r]) for r in range(13)] + [0], np.int64)

    def __call__(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        n = len(obs)
        if obs.ndim != 2 or obs.shape[1] != self.size or mask.shape != (n, self.turn + 2):
            raise ValueError(f"SimpleBlueprint expects obs [N, {self.size}] and mask [N, {self.turn + 2}], got "
                             f"{obs.shape} and {mask.shape}")
        o, p = self.offsets, self.players
        seat = obs[:, o["seat"] : o["seat"] + p].argmax(axis=1)
        return self.joint(obs)[np.arange(n), seat]

    def joint(self, obs: np.ndarray) -> np.ndarray:
        """int64[N, P]: every seat's move of the rows' joint move (any seat's observation of a row will do: they
        differ only in the seat piece)."""
        o, p, n = self.offsets, self.players, len(obs)
        at = np.arange(n)
        # Each position's rank index + 1 (0: not face up) and each top's rank index, from the one-hot entries: a
        # product with the ranks (float32 is exact here, and a matrix-vector product is the fastest numpy reads it)
        ranks = obs[:, o["peak_rank"] : o["peak_rank"] + 13 * N_PEAKS].astype(np.float32).reshape(-1, 13)
        rank1 = (ranks @ _RANKS1).astype(np.int64).reshape(n, N_PEAKS)
        piles = obs[:, o["pile_rank"] : o["pile_rank"] + 13 * p].astype(np.float32).reshape(-1, 13)
        tops = _GRANK[(piles @ _RANKS1).astype(np.int64).reshape(n, p) - 1]
        left = obs[:, o["stock_left"] : o["stock_left"] + p * self.stock_len].reshape(n, p, -1).sum(axis=2)
        gone = np.zeros((n, 32), np.uint8)
        gone[:, :N_PEAKS] = obs[:, o["peak_gone"] : o["peak_gone"] + N_PEAKS]
        present = np.int64(rules.ALL_PEAKS) & ~np.packbits(gone, axis=1, bitorder="little").view("<u4")[:, 0]
        up = rank1 > 0
        grank = np.where(up, _GRANK[rank1 - 1], 13)  # game rank (A = 0) of each face-up card, 13: none
        # What a card uncovers does not depend on the other piles' choices: 4 per covered card left uncovered.
        others = present[:, None] & ~_BITS64
        uncovers = 4 * (((others[:, :, None] & _COVERED_MASK) == 0) & _COVERED_VALID).sum(axis=2)
        rank_bit = np.int64(1) << grank  # bit 13: no card
        fitting = self.fit_bits[grank]  # the game ranks (bits) that fit onto each card once it lies on a pile
        acts = np.full((n, p), self.wait, np.int64)
        free = up.copy()  # face up and not taken by an earlier pile
        for q in range(p):
            cand = free & ((self.fit_bits[tops[:, q], None] >> grank) & 1 == 1)
            free_ranks = np.bitwise_or.reduce(np.where(free, rank_bit, 0), axis=1)
            follow = (fitting & free_ranks[:, None]) != 0  # a free card fits it once played
            score = np.where(cand, uncovers + follow, -1)
            best = score.argmax(axis=1)
            takes = cand.any(axis=1)
            acts[takes, q] = best[takes] * p + q
            free[at[takes], best[takes]] = False
        idle = (acts == self.wait).all(axis=1)
        turner = left.argmax(axis=1)
        turns = idle & (left[at, turner] > 0)
        acts[at[turns], turner[turns]] = self.turn
        return acts


class _Rollouts(_Engine):
    """The engine's rules on arrays with the touch order fixed to seat order (the search's rollouts')."""

    def __init__(self, num_envs: int, config: rules.Config):
        super().__init__(num_envs, config)
        self._in_order = rules.ORDERS[config.players].index(tuple(range(config.players)))

    def _draw_orders(self, slots: np.ndarray) -> None:
        self._order[slots] = self._in_order
        self._order_at[slots] = 0

    def load(self, worlds: Sequence[rules.State], repeat: int) -> None:
        """Every world ``repeat`` times in a row (world ``i`` in rows ``i * repeat ...``), at its tick; rows past
        ``len(worlds) * repeat`` are left as they are (not played)."""
        c, p = self.config, self.players
        k = len(worlds)
        peaks = np.array([w.peaks for w in worlds], np.int8)
        stocks = np.zeros((k, p, c.stock), np.int8)
        for i, w in enumerate(worlds):
            for q in range(p):
                remaining = w.stocks[q][len(w.stocks[q]) - w.stock_left[q]:]
                if remaining:
                    stocks[i, q, c.stock - len(remaining):] = remaining
        on = np.array([w.on_piles for w in worlds], object)
        on_piles = ((on[:, None] >> np.arange(52)) & 1).astype(np.int8)
        by_rank = np.zeros((k, 14), np.uint32)
        np.bitwise_or.at(by_rank, (np.arange(k)[:, None], peaks % 13), _BITS)
        rows = np.arange(k * repeat)
        src = rows // repeat
        self.peaks[rows] = peaks[src]
        self.present[rows] = np.array([w.present for w in worlds], np.uint32)[src]
        self.up[rows] = np.array([w.up for w in worlds], np.uint32)[src]
        self.by_rank[rows] = by_rank[src]
        self.tops[rows] = np.array([w.tops for w in worlds], np.int64)[src]
        self.on_piles[rows] = on_piles[src]
        self.stocks[rows] = stocks[src]
        self.stock_left[rows] = np.array([w.stock_left for w in worlds], np.int64)[src]
        self.tick[rows] = np.array([w.tick for w in worlds], np.int64)[src]
        self.over[rows] = -1
        self.counters[rows] = 0
        self.said[rows] = 0
        self.said_tick[rows] = 0
        if p > 1:
            self._draw_orders(rows)
        self._write(rows)
        self.masks(rows)


# Engines and blueprints are kept per config (their tables cost more than a decision's rollouts), per thread (the
# play server runs agents in a thread pool; an engine holds one batch's state); an engine with more rows than a
# decision needs plays only the first rows.
_LOCAL = threading.local()


def _engine(config: rules.Config, n: int) -> _Rollouts:
    engines = _LOCAL.__dict__.setdefault("engines", {})
    eng = engines.get(config)
    if eng is None or eng.num_envs < n:
        if len(engines) > 8:
            engines.clear()
        eng = engines[config] = _Rollouts(max(n, 2 * eng.num_envs if eng else 256), config)
    return eng


def _policy(blueprint: BlueprintFactory, config: rules.Config) -> Policy:
    policies = _LOCAL.__dict__.setdefault("policies", {})
    key = (blueprint, config)
    if key not in policies:
        if len(policies) > 8:
            policies.clear()
        policies[key] = blueprint(config)
    return policies[key]


def _rules_of(worlds: Sequence[rules.State]) -> rules.Config:
    """The one config the worlds share (their clock and cap as the rules count them); a clear error otherwise."""
    keys = {(w.config.players, w.config.stock, w.config.ticks, w.config.wrap, w.config.max_ticks) for w in worlds}
    if len(keys) != 1:
        raise ValueError(f"rollouts: the worlds of one batch must share players, stock, clock, wrap and tick cap; "
                         f"got {sorted(keys, key=repr)}")
    players, stock, ticks, wrap, max_ticks = keys.pop()
    return rules.Config(players=players, stock=stock, time_limit=ticks, seconds_per_action=1.0, wrap=wrap,
                        max_ticks=max_ticks)


def blueprint_moves(world: rules.State, blueprint: BlueprintFactory) -> tuple[int, ...]:
    """The blueprint's joint move at ``world``'s table: every seat's action on its own observation of it."""
    config = _rules_of([world])
    eng = _engine(config, 1)
    eng.load([world], 1)
    p = config.players
    games, seats = np.zeros(p, np.int64), np.arange(p)
    return tuple(int(a) for a in _decide(_policy(blueprint, config), eng, games, seats))


def _decide(policy: Policy, eng: _Rollouts, games: np.ndarray, seat: np.ndarray) -> np.ndarray:
    """The policy's checked actions for rows (``games[j]``, ``seat[j]``)."""
    mask = eng.moves_mask[games, seat]
    acts = np.asarray(policy(eng.observe(games, seat), mask))
    if acts.shape != (len(games),) or not np.issubdtype(acts.dtype, np.integer):
        raise PolicyError(f"the rollouts' blueprint must return int[{len(games)}] actions, one per "
                          f"observation; it returned {acts.dtype}{list(acts.shape)}")
    legal = (acts >= 0) & (acts < mask.shape[1])
    legal[legal] = mask[np.flatnonzero(legal), acts[legal]] == 1
    if not legal.all():
        raise PolicyError(f"the rollouts' blueprint chose illegal action(s) {acts[~legal][:5].tolist()}")
    return acts


def rollout_values(worlds: Sequence[rules.State], joints: Sequence[Sequence[int]], depth: int | None = None,
                   blueprint: BlueprintFactory = SimpleBlueprint, blueprint_ticks: int | None = None) -> np.ndarray:
    """float[worlds, joints]: each joint move played in each world, then the blueprint for at most ``depth`` more
    ticks (None: to the end), all rows at once; the value of each end (see the module docstring).
    ``blueprint_ticks``: the blueprint plays only that many ticks after the joint move, the simple strategy's
    one-step form the rest (a costly blueprint where it matters most, a cheap one to the end)."""
    if not worlds or not joints:
        raise ValueError("rollouts need at least one world and one joint move")
    config = _rules_of(worlds)
    w, c, p = len(worlds), len(joints), config.players
    n = w * c
    eng = _engine(config, n)
    eng.load(worlds, c)
    policy = _policy(blueprint, config)
    tail = _policy(SimpleBlueprint, config)
    moves = np.tile(np.asarray(joints, np.int64).reshape(c, p), (w, 1))
    alive = np.arange(n)
    eng.tick_games(alive, moves, None)
    ticks = 0
    seats = np.arange(p)
    while True:
        alive = alive[eng.over[alive] < 0]
        if not len(alive) or (depth is not None and ticks >= depth):
            break
        now = policy if blueprint_ticks is None or ticks < blueprint_ticks else tail
        if hasattr(now, "joint"):  # one observation a game: the policy decides for every seat
            acts = now.joint(eng.observe(alive, np.zeros(len(alive), np.int64)))
        else:
            acts = _decide(now, eng, np.repeat(alive, p), np.tile(seats, len(alive))).reshape(len(alive), p)
        eng.tick_games(alive, acts, None)
        ticks += 1
    won = eng.over[:n] == WIN
    return np.where(won, 1 + eng.stock_left[:n].sum(axis=1) / 100, 0.0).reshape(w, c)
