"""Rook for Two, batched: N games of ``rook_v0`` stepped together with numpy array operations.

The array form of :mod:`cardzoo.envs.rook.rules` (which stays the statement of the rules) and of its observer: for
the same seed and the same actions, every observation, mask, reward and outcome equals the single env's, bit for
bit, in every phase (bidding, trumps, discards, tricks, draws) and over whole games of many rounds. The rule steps
(the deal, legal cards and bids, the trick, a round's score and what it decides) are those of
:mod:`cardzoo.envs.rook.arrays`, for search rollouts to share; this module keeps the games' state, the observation
words, rewards and records. The protocol
(reset, step, the seed stream, records, illegal actions) is :mod:`cardzoo.envs.batched`'s::

    from cardzoo.envs.batched import make_batched
    eng = make_batched("rook_v0", num_envs=4096, rounds=1)      # the single env's options
    obs, mask, seat = eng.reset(seeds=0)                         # int8[N, 662], int8[N, 79], int64[N]
    obs, mask, seat, rewards, done = eng.step(actions)          # rewards float64[N, 2]

Options are the single env's (``target_score``, ``rounds``, ``max_rounds``, ``illegal_action``; the render options
do not apply; the reset options ``deck``, ``dealer`` and ``totals`` are not taken: every game is the single env's
``reset(seed=k)``). Outcomes: ``outcomes[eng.outcome[i]]`` is "win", "bidder_fell", "rounds_done", "round_limit"
(a whole game cut off at ``max_rounds``: ``truncated``) or "illegal". ``finished_info(i)`` is the single env's final
``infos`` entry; its round summaries are rebuilt by replaying the finished record through the rules (a few
milliseconds, asked for one slot at a time), so the engine does not carry a history of every round of every game.

State, one row per game: hands, known cards, played cards, the Nest and the discards as 53-bit masks in ``uint64``
(the rules' Python ints), the round's draw pile as card ids, and small integers for the bidding, trumps, the trick
and the scores. One step plays every game's decision whatever its phase: the card plays and draws (most steps) as
whole-array operations, the rarer phases (bids, trumps, discards, the end of a round) on the rows in them.

Observation: assembled as eleven 64-bit words per game (bit ``i`` = entry ``i``, as the single observer builds one
Python int), word-major so every piece is written into contiguous columns, then unpacked once.

Deals. A game's rounds are dealt from ``np.random.default_rng(seed).permutation(45)``, one permutation per round as
the rules draw them; :mod:`cardzoo.envs.common.generators` computes them for many seeds at once, a block of seeds
ahead of need, ``rounds`` (at most ``DEALS_AHEAD``) per game. A game that outlasts them has its next rounds
computed when it gets there (the generator replayed from its seed).

Speed: ``evaluation/results/batched/`` (``python -m cardzoo.evaluation.benchmarks.batched engine --game rook``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..batched import BatchedEnv, SeedBlocks
from ..common.generators import permutations
from ..common.options import reject_unknown
from . import rules
from .arrays import (
    BID_AMOUNT,
    DECK,
    ONE,
    OUTCOMES,
    POINTS,
    bids_allowed,
    deal,
    discardable,
    game_end,
    playable,
    round_score,
    second_wins,
)
from .env import AGENTS, CONFIG_OPTIONS, final_info, make_config
from .observer import LAYOUT, POINT_LEVELS, TOTAL_BITS

_U = np.uint64
_O = LAYOUT.offsets
_WORDS = (LAYOUT.size + 63) // 64  # 11
DEALS_AHEAD = 12  # rounds dealt when a game starts (random whole games to 500 last about 9)
# the most decisions of one round: 19 bids (18 and a pass, or up to 140), trumps, 3 discards, 42 cards, 10 draws
ROUND_DECISIONS = len(rules.BID_AMOUNTS) + 1 + rules.DISCARDS + 2 * rules.TRICKS + rules.PILE // 2

# the phase, trumps, draw and pass parts of the mask above bit 63
_HI_DRAW = _U(1 << (rules.TAKE_UP - 64) | 1 << (rules.TAKE_HIDDEN - 64))
_HI_TRUMP = _U(0b1111 << (rules.TRUMP0 - 64))
_HI_PASS = _U(1 << (rules.PASS - 64))
_LOW_BIDS = 64 - rules.BID0  # bids 0..10 are bits 53..63, the rest bits 64..71
_POINT_LEVEL = np.minimum(np.arange(rules.ROUND_POINTS + 1) // 5, POINT_LEVELS - 1)
_MAX_TOTAL = (1 << TOTAL_BITS) - 1


def _place(words: np.ndarray, value: np.ndarray, offset: int) -> None:
    """OR the bits of ``value`` (uint64, at most 64 bits used) into ``words`` (uint64[W, k]) from bit ``offset``."""
    word, shift = offset >> 6, offset & 63
    words[word] |= value << _U(shift)
    if shift and word + 1 < len(words):  # (the last piece's high bits would be zero there)
        words[word + 1] |= value >> _U(64 - shift)


def _one_hot(words: np.ndarray, value: np.ndarray, offset: int, size: int, on: np.ndarray | None = None) -> None:
    """Set entry ``offset + value`` in the rows where ``on`` (all rows if None); ``value`` in ``0..size-1``."""
    pos = (value + offset).astype(np.uint64)
    bit = ONE << (pos & _U(63))
    if on is not None:
        bit = np.where(on, bit, _U(0))
    first, last = offset >> 6, (offset + size - 1) >> 6
    if first == last:
        words[first] |= bit
        return
    word = pos >> _U(6)
    for w in range(first, last + 1):
        words[w] |= np.where(word == w, bit, _U(0))


def _flag(words: np.ndarray, on: np.ndarray, offset: int) -> None:
    words[offset >> 6] |= on.astype(np.uint64) << _U(offset & 63)


def _deals(seeds: np.ndarray, count: int) -> np.ndarray:
    """int8[k, count, 45]: the first ``count`` rounds' decks (card ids, the rules' deal order) of each seed."""
    return DECK[permutations(seeds, len(rules.DECK), count)]


class RookBatched(BatchedEnv):
    """See the module docstring."""

    env_name = "rook_v0"
    possible_agents = AGENTS
    observation_size = LAYOUT.size
    num_actions = rules.N_ACTIONS
    outcomes = (*OUTCOMES, "illegal")
    env_options = (*CONFIG_OPTIONS, "illegal_action")
    history_dtype = np.int8  # actions are 0..78; whole games can be long

    def __init__(self, num_envs: int, **options: Any):
        reject_unknown(options, self.env_options, "option")
        self.config = cfg = make_config(**{k: options[k] for k in CONFIG_OPTIONS if k in options})
        rounds = cfg.max_rounds if cfg.rounds is None else min(cfg.rounds, cfg.max_rounds)
        self.max_decisions = rounds * ROUND_DECISIONS
        self.history_width = min(rounds, 4) * ROUND_DECISIONS
        super().__init__(num_envs, options)
        n = self.num_envs
        self._pair = self._slots * 2  # index of seat 0's entry in the flattened [N, 2] arrays
        self.ahead = min(rounds, DEALS_AHEAD)
        self._deal_blocks = SeedBlocks(lambda seeds: _deals(seeds, self.ahead), block=min(max(n, 1024), 8192))
        self.decks = np.zeros((n, self.ahead, len(rules.DECK)), np.int8)
        self.pile = np.zeros((n, rules.PILE), np.int64)
        for name in ("hands", "known", "played", "bids", "tricks", "points", "totals"):
            setattr(self, name, np.zeros((n, 2), np.uint64 if name in ("hands", "known", "played") else np.int64))
        self.passed = np.zeros((n, 2), bool)
        for name in ("nest", "discards"):
            setattr(self, name, np.zeros(n, np.uint64))
        for name in ("discarded", "discard_points", "pile_pos", "face_up", "led", "leader", "trumps", "high",
                     "bidder", "round_no", "dealer", "phase", "to_move", "last_winner"):
            setattr(self, name, np.zeros(n, np.int64))
        self.legal_lo = np.zeros(n, np.uint64)  # the legal actions 0..63 and 64..78 of the seat to move
        self.legal_hi = np.zeros(n, np.uint64)
        self.illegal_penalty = -1.0 if cfg.rounds is None else -2.0 * rules.ROUND_POINTS

    # ----------------------------------------------------------------- dealing
    def _start(self, slots: np.ndarray, seeds: np.ndarray) -> None:
        self.decks[slots] = self._deal_blocks.take(seeds)
        self.totals[slots] = 0
        self.round_no[slots] = 0
        self._start_round(slots, np.ones(len(slots), np.int64))

    def _start_round(self, slots: np.ndarray, dealer: np.ndarray) -> None:
        """rules._start_round: the next round's deal (the slot's next permutation) and a fresh round."""
        number = self.round_no[slots]  # rounds played so far: the index of this round's permutation
        deck = np.empty((len(slots), len(rules.DECK)), np.int8)
        ahead = number < self.ahead
        deck[ahead] = self.decks[slots[ahead], number[ahead]]
        for r in np.unique(number[~ahead]).tolist():  # a game longer than the deals made ahead
            rows = np.flatnonzero(number == r)
            deck[rows] = _deals(self.seeds[slots[rows]], r + 1)[:, r]
        self.round_no[slots] = number + 1
        self.dealer[slots] = dealer
        self.nest[slots], self.hands[slots, 0], self.hands[slots, 1], self.pile[slots] = deal(deck)
        for name in ("known", "played", "bids", "tricks", "points"):
            getattr(self, name)[slots] = 0
        self.passed[slots] = False
        for name in ("discards", "discarded", "discard_points", "pile_pos"):
            getattr(self, name)[slots] = 0
        for name in ("face_up", "led", "trumps", "high", "bidder"):
            getattr(self, name)[slots] = -1
        self.phase[slots] = rules.BID
        self.to_move[slots] = 1 - dealer

    # ----------------------------------------------------------------- playing
    def _legal(self, actions: np.ndarray) -> np.ndarray:
        word = np.where(actions < 64, self.legal_lo, self.legal_hi)
        return (word >> (actions & 63).astype(np.uint64)) & ONE == ONE

    def _play(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        n = self.num_envs
        legal = self._legal(actions)
        if not legal.all():  # games ended by an illegal move: any legal action keeps the array code in range
            actions = actions.copy()
            bad = np.flatnonzero(~legal)
            lo, hi = self.legal_lo[bad], self.legal_hi[bad]
            low = np.where(lo != 0, lo, hi)
            actions[bad] = np.log2((low & (~low + ONE)).astype(np.float64)).astype(np.int64) + np.where(lo != 0, 0, 64)
        rewards = np.zeros((n, 2))
        outcome = np.full(n, -1, np.int8)
        truncated = np.zeros(n, bool)
        phase, p = self.phase, self.to_move
        mover = self._pair + p
        hands, known = self.hands.reshape(-1), self.known.reshape(-1)
        # card plays: every row's action as a card bit (other phases' actions masked to no card)
        playing = phase == rules.PLAY
        card = np.where(playing, actions, 0)
        bit = np.where(playing, ONE << card.astype(np.uint64), _U(0))
        hands[mover] &= ~bit
        known[mover] &= ~bit
        self.played.reshape(-1)[mover] |= bit
        lead = playing & (self.led < 0)
        follow = playing & ~lead
        led = np.maximum(self.led, 0)
        winner = np.where(second_wins(led, card, np.maximum(self.trumps, 0)), p, self.leader)
        rows = np.flatnonzero(follow)
        if len(rows):
            w = winner[rows]
            self.tricks.reshape(-1)[rows * 2 + w] += 1
            self.points.reshape(-1)[rows * 2 + w] += POINTS[led[rows]] + POINTS[card[rows]]
            self.last_winner[rows] = w
        self.leader = np.where(follow, winner, self.leader)
        self.to_move = np.where(follow, winner, np.where(lead, 1 - p, p))
        self.led = np.where(lead, card, np.where(follow, -1, self.led))
        to_draw = follow & (self.face_up >= 0)
        ends = np.flatnonzero(follow & (self.face_up < 0) & (self.tricks.sum(axis=1) == rules.TRICKS))
        # draws: the trick winner takes the face-up card or the hidden one, the other player the other card
        drawing = np.flatnonzero(phase == rules.DRAW)
        if len(drawing):
            self._draw(drawing, p[drawing], actions[drawing] == rules.TAKE_UP)
        self.phase = np.where(to_draw, rules.DRAW, np.where(phase == rules.DRAW, rules.PLAY, phase))
        for ph, step in ((rules.BID, self._bid), (rules.TRUMP, self._trumps), (rules.DISCARD, self._discard)):
            rows = np.flatnonzero(phase == ph)
            if len(rows):
                step(rows, p[rows], actions[rows])
        if len(ends):
            self._end_round(ends, rewards, outcome, truncated)
        return rewards, outcome, truncated

    def _draw(self, rows: np.ndarray, p: np.ndarray, take_up: np.ndarray) -> None:
        at = self.pile_pos[rows]
        up = self.face_up[rows].astype(np.uint64)
        hidden = self.pile[rows, at + 1].astype(np.uint64)
        mine, other = np.where(take_up, up, hidden), np.where(take_up, hidden, up)
        pair = rows * 2
        hands, known = self.hands.reshape(-1), self.known.reshape(-1)
        hands[pair + p] |= ONE << mine
        hands[pair + 1 - p] |= ONE << other
        known[pair + np.where(take_up, p, 1 - p)] |= ONE << up
        at = at + 2
        self.pile_pos[rows] = at
        self.face_up[rows] = np.where(at < rules.PILE, self.pile[rows, np.minimum(at, rules.PILE - 1)], -1)

    def _bid(self, rows: np.ndarray, p: np.ndarray, actions: np.ndarray) -> None:
        passing = actions == rules.PASS
        amount = actions - rules.BID0
        self.passed[rows, p] |= passing
        self.bids.reshape(-1)[rows * 2 + p] |= np.where(passing, 0, 1 << np.where(passing, 0, amount))
        self.high[rows] = np.where(passing, self.high[rows], amount)
        top = ~passing & (amount == len(rules.BID_AMOUNTS) - 1)
        over = passing | top
        self.bidder[rows] = np.where(passing, 1 - p, np.where(top, p, -1))
        self.phase[rows] = np.where(over, rules.TRUMP, rules.BID)
        self.to_move[rows] = np.where(top, p, 1 - p)  # the bidder of 140 moves again

    def _trumps(self, rows: np.ndarray, p: np.ndarray, actions: np.ndarray) -> None:
        self.trumps[rows] = actions - rules.TRUMP0
        self.hands[rows, p] |= self.nest[rows]
        self.phase[rows] = rules.DISCARD

    def _discard(self, rows: np.ndarray, p: np.ndarray, actions: np.ndarray) -> None:
        self.hands[rows, p] &= ~(ONE << actions.astype(np.uint64))
        self.discards[rows] |= ONE << actions.astype(np.uint64)
        self.discard_points[rows] += POINTS[actions]
        self.discarded[rows] += 1
        done = rows[self.discarded[rows] == rules.DISCARDS]
        self.phase[done] = rules.PLAY
        self.face_up[done] = self.pile[done, 0]
        self.leader[done] = self.to_move[done]

    def _end_round(self, rows: np.ndarray, rewards: np.ndarray, outcome: np.ndarray, truncated: np.ndarray) -> None:
        """rules._end_round for ``rows``: score the round, then end the game or deal the next round."""
        cfg = self.config
        b = self.bidder[rows]
        _, delta = round_score(self.points[rows], self.tricks[rows], self.last_winner[rows],
                               self.discard_points[rows], b, BID_AMOUNT[self.high[rows]])
        totals = self.totals[rows] + delta
        self.totals[rows] = totals
        code, winner = game_end(totals, b, self.round_no[rows], cfg)
        ended = code >= 0
        outcome[rows] = code
        truncated[rows] = code == self.outcomes.index(rules.ROUND_LIMIT)
        if cfg.rounds is not None:  # every round pays its difference of score changes
            d = (delta[:, 0] - delta[:, 1]).astype(np.float64)
            rewards[rows] = np.stack([d, -d], axis=1)
        else:
            sign = np.select([winner == 0, winner == 1], [1.0, -1.0], 0.0)
            rewards[rows] = np.stack([sign, -sign], axis=1)
        self.phase[rows[ended]] = rules.OVER
        going = rows[~ended]
        if len(going):
            self._start_round(going, 1 - self.dealer[going])

    def _illegal_rewards(self, seats: np.ndarray) -> np.ndarray:
        out = np.zeros((len(seats), 2))
        out[np.arange(len(seats)), seats] = self.illegal_penalty
        return out

    def _finished_info(self, slot: int) -> dict[str, Any]:
        seeds, history, length = self._finished
        state = rules.deal(self.config, int(seeds[slot]))
        for action in history[slot, : length[slot]].tolist():
            rules.apply(state, action)
        return final_info(state)

    # ----------------------------------------------------------------- observing
    def _observe(self, slots: np.ndarray, seats: np.ndarray) -> np.ndarray:
        """The observer's ``observe_bits`` for ``seats`` in ``slots``, as int8 rows."""
        words = np.zeros((_WORDS, len(slots)), np.uint64)
        own, opp = slots * 2 + seats, slots * 2 + 1 - seats
        words[0] = self.hands.reshape(-1)[own]
        played, known = self.played.reshape(-1), self.known.reshape(-1)
        _place(words, played[own], _O["played_self"])
        _place(words, played[opp], _O["played_opp"])
        _place(words, known[own], _O["self_known"])
        _place(words, known[opp], _O["opp_known"])
        bids = self.bids.reshape(-1)
        _place(words, bids[own].astype(np.uint64), _O["bids_self"])
        _place(words, bids[opp].astype(np.uint64), _O["bids_opp"])
        passed = self.passed.reshape(-1)
        _flag(words, passed[own], _O["passed_self"])
        _flag(words, passed[opp], _O["passed_opp"])
        phase, to_move = self.phase[slots], self.to_move[slots]
        live = phase < rules.OVER
        _one_hot(words, np.minimum(phase, 4), _O["phase"], 5, live)
        _flag(words, live & (to_move == seats), _O["self_to_move"])
        _flag(words, self.dealer[slots] == seats, _O["self_dealt"])
        high = self.high[slots]
        _one_hot(words, np.maximum(high, 0), _O["high_bid"], len(rules.BID_AMOUNTS), high >= 0)
        bidder = self.bidder[slots]
        mine = bidder == seats
        _flag(words, mine, _O["bidder_self"])
        _flag(words, (bidder >= 0) & ~mine, _O["bidder_opp"])
        taken = mine & (phase != rules.BID) & (phase != rules.TRUMP)  # the Nest is in her hand from the discards on
        _place(words, np.where(taken, self.nest[slots], _U(0)), _O["nest"])
        _place(words, np.where(taken, self.discards[slots], _U(0)), _O["discards"])
        trumps = self.trumps[slots]
        _one_hot(words, np.maximum(trumps, 0), _O["trumps"], 4, trumps >= 0)
        face_up = self.face_up[slots]
        _one_hot(words, np.maximum(face_up, 0), _O["face_up"], rules.N_CARDS, face_up >= 0)
        led = self.led[slots]
        _one_hot(words, np.maximum(led, 0), _O["led"], rules.N_CARDS, led >= 0)
        _flag(words, (led >= 0) & (self.leader[slots] == seats), _O["led_by_self"])
        tricks, points, totals = self.tricks.reshape(-1), self.points.reshape(-1), self.totals.reshape(-1)
        for piece, at in (("self", own), ("opp", opp)):
            _one_hot(words, tricks[at], _O[f"tricks_{piece}"], rules.TRICKS + 1)
            _one_hot(words, _POINT_LEVEL[points[at]], _O[f"points_{piece}"], POINT_LEVELS)
            total = totals[at]
            _place(words, np.minimum(np.abs(total) // 5, _MAX_TOTAL).astype(np.uint64), _O[f"total_{piece}"])
            _flag(words, total < 0, _O[f"total_{piece}_neg"])
        rows = np.ascontiguousarray(words.T)
        return np.unpackbits(rows.view(np.uint8), axis=1, count=LAYOUT.size, bitorder="little").view(np.int8)

    def _current(self):
        phase, p = self.phase, self.to_move
        hand = self.hands.reshape(-1)[self._pair + p]
        playing = phase == rules.PLAY
        cards = np.where(phase == rules.DISCARD, discardable(hand), playable(hand, self.led, self.trumps))
        above = bids_allowed(self.high)  # and a pass once a bid stands
        bidding = phase == rules.BID
        lo = np.where(bidding, (above << _U(rules.BID0)),
                      np.where(playing | (phase == rules.DISCARD), cards, _U(0)))
        hi = np.select([bidding, phase == rules.DRAW, phase == rules.TRUMP],
                       [(above >> _U(_LOW_BIDS)) | np.where(self.high >= 0, _HI_PASS, _U(0)), _HI_DRAW, _HI_TRUMP],
                       _U(0))
        self.legal_lo, self.legal_hi = lo, hi
        mask = np.unpackbits(np.stack([lo, hi], axis=1).view(np.uint8), axis=1, count=rules.N_ACTIONS,
                             bitorder="little").view(np.int8)
        return self._observe(self._slots, p), mask, p.copy()
