"""Summit Rush's simple strategy for many tables at once, in array operations.

:func:`plan` gives, for every row, what :func:`cardzoo.agents.summit_rush_simple.plan` gives for that row's table:
the first two cards of each pile's planned run. The scalar plan is a depth-first search with a memo; the first best
plan it finds is the lexicographically first of the best-scoring complete plans, ordering each step's options as
the search tries them (end this pile's run; then a card of the rank above the top, then of the rank below, each by
position). Here every row's partial plans grow one step per round, all rows at once: children keep their parents'
order and their options' order, so a round's partial plans stay in that lexicographic order, and two partial plans
that reach the same (pile, cards played, tops) -- the scalar memo's key -- share every completion, so only the
first is kept. Complete plans are then ranked by score, then by their steps.

:class:`Tables` decodes rows of observations (``int8[N, O]``) into the arrays the plan reads, as the observer's
``decode`` reads one.
"""

from __future__ import annotations

import numpy as np

from cardzoo.envs.summit_rush.observer import _PEAK_RANK, _PEAK_SUIT, _PILE_RANK, _UP, piles_of
from cardzoo.envs.summit_rush.rules import COVER_MASK, N_PEAKS

from .summit_rush_simple import _NEIGHBOURS

_POS = np.arange(N_PEAKS, dtype=np.int64)
_POS_BITS = np.int64(1) << _POS
_COVER = np.array(COVER_MASK, np.int64)
# game ranks that fit a top of each game rank, as 13-bit masks, without and with wrap
_FIT = np.array([[sum(1 << r for r in _NEIGHBOURS[w][t]) for t in range(13)] for w in (False, True)], np.int64)
_BLOCK = 4096  # rows planned together (bounds the partial plans held and keeps the memo key in 64 bits)


def _last(piece: np.ndarray) -> np.ndarray:
    """int64[...]: the index of the last 1 along the last axis of a 0/1 piece (at most 126 wide), -1 if none
    (``bit_length() - 1`` of its bits): the largest of (index + 1) over the entries set, less one. Column by
    column: numpy reduces a short last axis several times slower."""
    piece = piece.astype(np.int8, copy=False)
    top = piece[..., 0].copy()
    for k in range(1, piece.shape[-1]):
        np.maximum(top, piece[..., k] * np.int8(k + 1), out=top)
    return top.astype(np.int64) - 1


def _bits(piece: np.ndarray) -> np.ndarray:
    """int64[N]: a 0/1 piece of at most 62 entries as a bit mask."""
    return (piece.astype(np.int64) << np.arange(piece.shape[1], dtype=np.int64)).sum(axis=1)


def _unpack(masks: np.ndarray) -> np.ndarray:
    """bool[N, 28]: the peak positions of each int64 mask."""
    bits = np.unpackbits(np.ascontiguousarray(masks, np.int64).view(np.uint8).reshape(len(masks), 8), axis=1,
                         bitorder="little")
    return bits[:, :N_PEAKS].view(bool)


def _popcount(x: np.ndarray) -> np.ndarray:
    return np.unpackbits(np.ascontiguousarray(x, np.int64).view(np.uint8).reshape(len(x), 8), axis=1).sum(axis=1)


class Tables:
    """The public tables of observation rows, as arrays (absolute piles and seats, game ranks A=0 .. K=12):

    ``present``/``up`` (int64 bit masks of peak positions), ``cards`` (int64[N, 28]: the face-up card at each
    position, -1 elsewhere), ``tops`` (int64[N, piles]: each pile's top card), ``on_piles`` (int8[N, 52]), ``seat``,
    ``wrap`` (bool[N])."""

    def __init__(self, obs: np.ndarray, n_actions: int):
        n = self.piles = piles_of(n_actions)
        size = obs.shape[1]
        self.present = ~_bits(obs[:, :N_PEAKS]) & ((1 << N_PEAKS) - 1)
        self.up = _bits(obs[:, _UP : _UP + N_PEAKS])
        rank = _last(obs[:, _PEAK_RANK : _PEAK_RANK + 13 * N_PEAKS].reshape(-1, N_PEAKS, 13))
        suit = _last(obs[:, _PEAK_SUIT : _PEAK_SUIT + 4 * N_PEAKS].reshape(-1, N_PEAKS, 4))
        self.cards = np.where((self.up[:, None] >> _POS) & 1 == 1, suit * 13 + rank, -1)
        suit_off = _PILE_RANK + 13 * n
        self.tops = (_last(obs[:, suit_off : suit_off + 4 * n].reshape(-1, n, 4)) * 13
                     + _last(obs[:, _PILE_RANK : suit_off].reshape(-1, n, 13)))
        self.on_piles = obs[:, suit_off + 4 * n : suit_off + 4 * n + 52]
        self.seat = _last(obs[:, size - 1 - n : size - 1])
        self.wrap = obs[:, size - 1] == 1

    def rows(self, rows: np.ndarray) -> Tables:
        other = Tables.__new__(Tables)
        other.piles = self.piles
        for name in ("present", "up", "cards", "tops", "on_piles", "seat", "wrap"):
            setattr(other, name, getattr(self, name)[rows])
        return other

    def after(self, plays: np.ndarray) -> Tables:
        """The tables once the face-up cards at ``plays`` (int64[N, piles]: a position per pile, -1 for none) have
        gone onto those piles: ``Table.after``."""
        other = self.rows(np.arange(len(self.seat)))
        for pile in range(self.piles):
            rows = np.flatnonzero(plays[:, pile] >= 0)
            pos = plays[rows, pile]
            card = other.cards[rows, pos]
            other.present[rows] &= ~_POS_BITS[pos]
            other.up[rows] &= ~_POS_BITS[pos]
            other.cards[rows, pos] = -1
            other.on_piles[rows, card] = 1
            other.tops[rows, pile] = card
        return other

    def unseen(self) -> np.ndarray:
        """int64[N, 13]: cards not yet seen by game rank (not on a pile, not face up): ``unseen_by_rank``."""
        seen = self.on_piles.reshape(-1, 4, 13).sum(axis=1).astype(np.int64)  # by rank index 2..A
        up = self.cards >= 0
        np.add.at(seen, (np.nonzero(up)[0], self.cards[up] % 13), 1)
        return 4 - np.roll(seen, 1, axis=1)  # rank index r is game rank (r + 1) % 13


def plan(tables: Tables) -> tuple[np.ndarray, np.ndarray]:
    """int64[N, piles] twice: the first and the second position of each pile's planned run (-1 if none)."""
    n = len(tables.seat)
    first, second = np.full((n, tables.piles), -1, np.int64), np.full((n, tables.piles), -1, np.int64)
    for begin in range(0, n, _BLOCK):
        rows = np.arange(begin, min(begin + _BLOCK, n))
        first[rows], second[rows] = _plan(tables.rows(rows))
    return first, second


def _plan(t: Tables) -> tuple[np.ndarray, np.ndarray]:
    n_rows, n = len(t.seat), t.piles
    grank = np.where(t.cards >= 0, (t.cards % 13 + 1) % 13, -1)  # [N, 28]
    by_rank = np.zeros((n_rows, 13), np.int64)  # face-up positions of each game rank, as bit masks
    up_rows, up_pos = np.nonzero(t.cards >= 0)
    np.bitwise_or.at(by_rank, (up_rows, grank[up_rows, up_pos]), _POS_BITS[up_pos])
    unseen = t.unseen()
    down = t.present & ~t.up
    wrap = t.wrap.astype(np.int64)

    # the partial plans: their row, pile, positions played, tops (game ranks), steps taken, and each pile's
    # first two positions
    row = np.arange(n_rows)
    q = np.zeros(n_rows, np.int64)
    removed = np.zeros(n_rows, np.int64)
    tops = (t.tops % 13 + 1) % 13
    steps = np.zeros((n_rows, 0), np.int8)
    heads = np.full((n_rows, n, 2), -1, np.int64)
    leaves: list[tuple[np.ndarray, ...]] = []
    while len(row):
        top = tops[np.arange(len(row)), q]
        fits = _FIT[wrap[row], top]  # the two neighbour ranks (up first, as the search tries them)
        above, below = (top + 1) % 13, (top + 12) % 13
        options = np.zeros((len(row), 1 + 2 * N_PEAKS), bool)
        options[:, 0] = q + 1 < n  # end this pile's run (not on the last pile)
        for j, rank in enumerate((above, below)):
            free = np.where((fits >> rank) & 1 == 1, by_rank[row, rank], 0) & ~removed
            options[:, 1 + j * N_PEAKS : 1 + (j + 1) * N_PEAKS] = _unpack(free)
        done = (q == n - 1) & ~options[:, 1:].any(axis=1)
        if done.any():
            leaves.append((row[done], removed[done], tops[done], steps[done], heads[done]))
        parent, option = np.nonzero(options)
        row, q, removed = row[parent], q[parent].copy(), removed[parent].copy()
        tops, heads = tops[parent].copy(), heads[parent].copy()
        steps = np.concatenate([steps[parent], option[:, None].astype(np.int8)], axis=1)
        ext = option > 0
        pos = (option[ext] - 1) % N_PEAKS
        pile = q[ext]
        removed[ext] |= _POS_BITS[pos]
        tops[ext, pile] = grank[row[ext], pos]
        e = np.flatnonzero(ext)
        slot = (heads[e, pile] >= 0).sum(axis=1)  # 0, 1 or 2 positions of this pile's run already kept
        keep = slot < 2
        heads[e[keep], pile[keep], slot[keep]] = pos[keep]
        q[~ext] += 1
        # the memo: one partial plan per (row, pile, positions played, tops), the first in order
        key = (row * n + q) << N_PEAKS | removed
        for k in range(n):
            key = key << 4 | tops[:, k]
        _, kept = np.unique(key, return_index=True)
        kept.sort()
        row, q, removed, tops, steps, heads = row[kept], q[kept], removed[kept], tops[kept], steps[kept], heads[kept]

    width = max(s.shape[1] for *_, s, _ in leaves)
    row, removed, tops, steps, heads = (np.concatenate(parts) for parts in zip(*[
        (r, m, tp, np.pad(s, ((0, 0), (0, width - s.shape[1])), constant_values=-1), h)
        for r, m, tp, s, h in leaves], strict=True))
    # a plan's score: face-down cards it uncovers, cards it plays, unseen cards that fit the tops it leaves
    left = t.present[row] & ~removed
    uncovered = (_unpack(down[row]) & ((left[:, None] & _COVER) == 0)).sum(axis=1)
    fit_ranks = np.bitwise_or.reduce(_FIT[wrap[row][:, None], tops], axis=1)
    fit = (((fit_ranks[:, None] >> np.arange(13)) & 1) * unseen[row]).sum(axis=1)
    score = (uncovered * 64 + _popcount(removed)) * 1024 + fit
    order = np.lexsort([*steps.T[::-1], -score, row])
    best = order[np.unique(row[order], return_index=True)[1]]
    return heads[best, :, 0], heads[best, :, 1]
