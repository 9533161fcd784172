"""Rook for Two rollouts batched over worlds: every sampled world times every candidate action, played to the end
of the round at once on the batched engine's array core (:class:`cardzoo.envs.rook.batched.RookBatched`).

This is the engine of the search agent (:mod:`cardzoo.agents.rook_search`). One row is one rules state (a sampled
world with a candidate applied, or a world at the trump choice for the bid's simulated hands) loaded into the
engine, which then plays every row's moves in one array step (plays and draws as whole-array operations, trumps
and discards on the rows in them) until every round has ended.

The moves come from the **rollout policy**, batched over the rows:

- ``policy=None`` (the default, the fast path): the search's own rollout policy -- the heuristic's values, read
  from the sampled world itself, so each rollout player knows the world's cards (cheap wins and cheap losses when
  second, points and sure winners when leading, low non-point cards first, short suits discarded; the heuristic's
  trump suit) -- computed for all rows at once from the engine's arrays. It makes the moves the per-world rollout
  policy it replaced made one world at a time (kept in ``tests/rook_reference.py``; the tests compare them move
  for move);
- any batched policy ``policy(obs[N, 662], mask[N, 79]) -> actions[N]`` on the movers' observations and masks (the
  engine's, equal to the single env's): a learned numpy policy, say. It sees what a player sees, not the world.

A row's result is the round's score changes ``[d0, d1]`` (what ``rules.apply`` returns at the end of a round) and
the round's points ``[p0, p1]`` (cards won, the most-tricks bonus, discards to the last trick).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

import numpy as np

from cardzoo.envs.common.cards import SUIT_MASKS
from cardzoo.envs.common.errors import PolicyError
from cardzoo.envs.rook import rules
from cardzoo.envs.rook.batched import RookBatched

from .rook_heuristic import best_trumps

Policy = Callable[[np.ndarray, np.ndarray], np.ndarray]

_U = np.uint64
_CARDS = np.arange(rules.N_CARDS)
_BIT = _U(1) << _CARDS.astype(np.uint64)
_POINTS = np.array(rules.POINTS, np.float64)
_POINTS_INT = np.array(rules.POINTS, np.int64)
_RANK = _CARDS % 13  # the search's rank (the Rook's is 0: it never decides anything there)
_RULE_RANK = np.where(_CARDS == rules.ROOK, rules.ROOK_RANK, _CARDS % 13)
_SUIT = np.where(_CARDS == rules.ROOK, 4, _CARDS // 13)
_SUIT_MASK = np.array([*SUIT_MASKS, 0], np.uint64)  # by suit; 4 (the Rook's): no card
_SUIT_ROOK = np.array([SUIT_MASKS[s] | rules.ROOK_BIT for s in range(4)], np.uint64)
_ABOVE = np.array([SUIT_MASKS[c // 13] & ~((2 << c) - 1) & rules.DECK_MASK if c < 52 else 0
                   for c in range(rules.N_CARDS)], np.uint64)
_NO_POINTS = _U(rules.DECK_MASK & ~rules.POINT_MASK)
_FOLLOW = np.array([[rules.follow_mask(c, t) for t in range(4)] for c in range(rules.N_CARDS)], np.uint64)
_TRICK_VALUE, _REPLY = 6.0, 3.0  # as the search's rollout policy


def _keep_table() -> np.ndarray:
    """float[4, 53]: what holding each card is worth to the rollout policy, by trumps (the heuristic's values
    without its card counting: trumps and the Rook 8 and up, high cards of other suits a little)."""
    out = np.zeros((4, rules.N_CARDS))
    for t in range(4):
        for c in range(rules.N_CARDS):
            if c == rules.ROOK or c // 13 == t:
                out[t, c] = 8.0 + (0.0 if c == rules.ROOK else 0.4 * (c % 13 - 1))
            else:
                out[t, c] = max(0.0, c % 13 - 7.0)
    return out


KEEP = _keep_table()


def _bits(masks: np.ndarray) -> np.ndarray:
    """bool[k, 53]: the cards of each mask."""
    return (masks[:, None] & _BIT) != 0


def _popcount(x: np.ndarray) -> np.ndarray:
    return np.bitwise_count(x) if hasattr(np, "bitwise_count") else np.array([int(v).bit_count() for v in x])


def _first_best(score: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """The lowest card of each row with the highest score among its legal cards."""
    return np.where(legal, score, -np.inf).argmax(axis=1)


class _Rollouts(RookBatched):
    """The engine's rules on arrays for one round of loaded states."""

    def __init__(self, num_envs: int):
        super().__init__(num_envs, rounds=1)

    def _legal(self, actions: np.ndarray) -> np.ndarray:
        # the rollout policy's moves are legal by construction (tested); a plugged policy is checked on its mask
        return np.ones(len(actions), bool)

    def load(self, states: Sequence[rules.State]) -> None:
        """Row ``i`` of the first ``len(states)`` rows is ``states[i]`` (one round, its totals at 0)."""
        k = len(states)
        rows = np.arange(k)
        for name in ("hands", "known", "played", "tricks", "points"):
            getattr(self, name)[rows] = np.array([getattr(s, name) for s in states], getattr(self, name).dtype)
        self.nest[rows] = np.array([s.nest for s in states], np.uint64)
        discards = np.array([s.discards for s in states], np.uint64)
        self.discards[rows] = discards
        self.discarded[rows] = _popcount(discards)
        self.discard_points[rows] = (_bits(discards) * _POINTS_INT).sum(axis=1)
        self.pile[rows] = np.array([(list(s.pile) + [-1] * rules.PILE)[: rules.PILE] for s in states], np.int64)
        def value(s: rules.State, name: str) -> int:
            v = getattr(s, name)
            if name == "high_bid" and v is not None:
                return (v - rules.MIN_BID) // rules.BID_STEP  # the engine keeps the bid's index
            return (0 if name == "leader" else -1) if v is None else v  # a leader is set before it is read

        for name, field in (("pile_pos", "pile_pos"), ("face_up", "face_up"), ("led", "led"), ("leader", "leader"),
                            ("trumps", "trumps"), ("high", "high_bid"), ("bidder", "bidder"), ("dealer", "dealer"),
                            ("phase", "phase"), ("to_move", "to_move")):
            getattr(self, name)[rows] = np.array([value(s, field) for s in states], np.int64)
        self.round_no[rows] = 1
        self.totals[rows] = 0
        # the bidding as the observations show it (a policy in the rollouts reads it; the search's own does not)
        bids = np.zeros((k, 2), self.bids.dtype)
        passed = np.zeros((k, 2), bool)
        for i, s in enumerate(states):
            for who, amount in s.bids:
                if amount is None:
                    passed[i, who] = True
                else:
                    bids[i, who] |= 1 << (amount - rules.MIN_BID) // rules.BID_STEP
        self.bids[rows] = bids
        self.passed[rows] = passed
        self.last_winner[rows] = 0
        self.phase[k:] = rules.OVER  # rows past the states are not played

    # ------------------------------------------------------------------ the rollout policy, batched
    def rollout_actions(self) -> np.ndarray:
        """The search's rollout policy's move in every row still in its round (0 in rows that are over)."""
        n = self.num_envs
        out = np.zeros(n, np.int64)
        phase, p = self.phase, self.to_move
        present = np.bincount(phase, minlength=rules.OVER + 1)
        if present[rules.BID]:
            raise ValueError("the rollout policy does not bid: a row is in the bidding")
        at = np.arange(n)
        hands = self.hands[at, p]
        rows = np.flatnonzero(phase == rules.PLAY) if present[rules.PLAY] < n else at
        if len(rows):
            out[rows] = self._play_card(rows, hands[rows], p[rows])
        if present[rules.DRAW]:
            rows = np.flatnonzero(phase == rules.DRAW)
            up = self.face_up[rows]
            take = (_POINTS[up] > 0) | (up == rules.ROOK) | (up // 13 == self.trumps[rows]) | (_RANK[up] >= 10)
            out[rows] = np.where(take, rules.TAKE_UP, rules.TAKE_HIDDEN)
        if present[rules.DISCARD]:
            rows = np.flatnonzero(phase == rules.DISCARD)
            hand, trumps = hands[rows], self.trumps[rows]
            keep = hand & _NO_POINTS
            legal = _bits(np.where(keep != 0, keep, hand))
            count = _popcount(hand[:, None] & _SUIT_MASK[None, :4])  # [k, 4]
            plain = (np.maximum(0, _RANK - 7) + 0.3 * np.concatenate([count, np.zeros((len(rows), 1), count.dtype)],
                                                                     axis=1)[:, _SUIT] + 0.2 * _POINTS)
            is_trump = _bits(_SUIT_ROOK[trumps])
            key = np.where(is_trump, 100.0 + KEEP[trumps], plain)
            out[rows] = np.where(legal, key, np.inf).argmin(axis=1)
        if present[rules.TRUMP]:  # once per rollout at most: the heuristic's own choice, row by row
            rows = np.flatnonzero(phase == rules.TRUMP)
            out[rows] = [rules.TRUMP0 + best_trumps(h) for h in hands[rows].tolist()]
        return out

    def _play_card(self, rows: np.ndarray, hand: np.ndarray, p: np.ndarray) -> np.ndarray:
        trumps = self.trumps[rows]
        keep = KEEP[trumps]
        led = self.led[rows]
        tricks = self.tricks[rows]
        most = tricks.max(axis=1)
        trick = 2.0 + np.where(2 * most < rules.TRICKS, 4.0, 0.0) + np.where(self.face_up[rows] >= 0, 2.0, 0.0)
        out = np.empty(len(rows), np.int64)
        follow = led >= 0
        f = np.flatnonzero(follow)
        if len(f):
            lf, tf = led[f], trumps[f]
            must = hand[f] & _FOLLOW[lf, tf]
            legal = _bits(np.where(must != 0, must, hand[f]))
            led_suit = np.where(lf == rules.ROOK, tf, _SUIT[lf])
            suit = np.where(_CARDS == rules.ROOK, tf[:, None], _SUIT)
            second = np.where(suit == led_suit[:, None], _RULE_RANK > _RULE_RANK[lf][:, None], suit == tf[:, None])
            stake = (_POINTS[lf] + trick[f])[:, None] + _POINTS
            score = np.where(second, stake, -stake) - keep[f]
            out[f] = _first_best(score, legal)
        lead = np.flatnonzero(~follow)
        if len(lead):
            tl = trumps[lead]
            opp = self.hands[rows[lead], 1 - p[lead]]
            tmask = _SUIT_ROOK[tl]
            is_trump = _bits(tmask)
            above = np.where(_CARDS == rules.ROOK, (tmask & ~_U(rules.ROOK_BIT))[:, None], _ABOVE)
            wins_trump = (opp[:, None] & above) == 0
            has_suit = (opp[:, None] & _SUIT_MASK[_SUIT]) != 0
            wins_plain = np.where(has_suit, (opp[:, None] & _ABOVE) == 0, ((opp & tmask) == 0)[:, None])
            wins = np.where(is_trump, wins_trump, wins_plain)
            t = trick[lead][:, None]
            score = np.where(wins, _POINTS + t, -(_POINTS + _REPLY + t)) - keep[lead]
            out[lead] = _first_best(score, _bits(hand[lead]))
        return out

    def round_points(self, rows: np.ndarray) -> np.ndarray:
        """int[k, 2]: each seat's points of the ended round (``rules.round_points``)."""
        pts = self.points[rows].copy()
        k = np.arange(len(rows))
        tricks = self.tricks[rows]
        pts[k, np.where(tricks[:, 0] > tricks[:, 1], 0, 1)] += rules.MOST_TRICKS_BONUS
        pts[k, self.last_winner[rows]] += self.discard_points[rows]
        return pts


_LOCAL = threading.local()  # engines per thread: the play server runs agents in a thread pool


def _engine(n: int) -> _Rollouts:
    """An engine of ``n`` rows rounded up to a power of two (each step plays every row), kept between calls: its
    tables cost more than a decision's rollouts."""
    engines = _LOCAL.__dict__.setdefault("engines", {})
    size = max(8, 1 << (n - 1).bit_length())
    if size not in engines:
        engines[size] = _Rollouts(size)
    return engines[size]


def _choose(policy: Policy | tuple[Policy, Policy], obs: np.ndarray, mask: np.ndarray, seats: np.ndarray
            ) -> np.ndarray:
    """The moves of ``policy``, or of ``policy[seat]`` in each seat's rows when it is a pair (seat 0's, seat 1's), or
    ``policy.by_seat(obs, mask, seats)`` when it has that (one call for both seats' rows)."""
    by_seat = getattr(policy, "by_seat", None)
    if by_seat is not None:
        return np.asarray(by_seat(obs, mask, seats))
    if not isinstance(policy, tuple):
        return np.asarray(policy(obs, mask))
    out = np.zeros(len(obs), np.int64)
    for seat in (0, 1):
        rows = np.flatnonzero(seats == seat)
        if len(rows):
            chosen = np.asarray(policy[seat](obs[rows], mask[rows]))
            if chosen.shape != (len(rows),) or not np.issubdtype(chosen.dtype, np.integer):
                return chosen  # the caller's check names the fault
            out[rows] = chosen
    return out


def play_out(states: Sequence[rules.State], first: Sequence[int] | None = None,
             policy: Policy | tuple[Policy, Policy] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Play every state's round to its end, all at once: ``first[i]`` (if given) is row ``i``'s first move, then
    the rollout policy (None: the search's, reading the world) or ``policy`` on observations (a pair: seat 0's
    policy and seat 1's; or an object whose ``by_seat(obs, mask, seats)`` moves both). Returns the round's score
    changes float[k, 2] and its points int[k, 2] by row. The states are not changed."""
    k = len(states)
    if not k:
        raise ValueError("rollouts need at least one state")
    eng = _engine(k)
    eng.load(states)
    rows = np.arange(k)
    if first is not None:
        actions = np.zeros(eng.num_envs, np.int64)
        actions[rows] = first
        eng._play(actions)
    while (eng.phase[rows] < rules.OVER).any():
        if policy is None:
            actions = eng.rollout_actions()
        else:
            obs, mask, _ = eng._current()
            live = np.flatnonzero(eng.phase < rules.OVER)
            actions = np.zeros(eng.num_envs, np.int64)
            chosen = _choose(policy, obs[live], mask[live], eng.to_move[live])
            if chosen.shape != (len(live),) or not np.issubdtype(chosen.dtype, np.integer):
                raise PolicyError(f"the rollouts' policy must return int[{len(live)}] actions, one per observation; "
                                  f"it returned {chosen.dtype}{list(chosen.shape)}")
            legal = (chosen >= 0) & (chosen < rules.N_ACTIONS)
            legal[legal] = mask[live[legal], chosen[legal]] == 1
            if not legal.all():
                raise PolicyError(f"the rollouts' policy chose illegal action(s) {chosen[~legal][:5].tolist()}")
            actions[live] = chosen
        eng._play(actions)
    return eng.totals[rows].astype(np.float64), eng.round_points(rows)
