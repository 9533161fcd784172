"""Summit Rush, batched: N games of ``summit_rush_v0`` stepped together with numpy array operations.

The array form of :mod:`cardzoo.envs.summit_rush.rules` (which stays the statement of the rules) and of the observer:
for the same seed (or deck) and the same actions, every observation, mask, reward, termination, truncation and
end-of-game info equals the single env's, bit for bit, in every level and variant (two or three players, solo,
wrap, timed or untimed, ``max_ticks``, talking or silent). Two forms share one engine:

``SummitRushParallel`` — the Parallel game: a step is one tick of every game, every seat acting at once::

    from cardzoo.envs.summit_rush.batched import SummitRushParallel
    eng = SummitRushParallel(4096, level="hard")
    obs, mask = eng.reset(seeds=0)                      # int8[N, P, O], int8[N, P, A]: every seat's
    obs, mask, rewards, done = eng.step(actions)        # actions int[N, P]; rewards float64[N, P]; done bool[N]

``SummitRushBatched`` (``make_batched("summit_rush_v0", ...)``) — the :mod:`cardzoo.envs.batched` protocol, one
decision a step as ``cardzoo.training.gym_envs.TickEnv`` asks it: the seats of a tick are asked one after the
other (``seat``), each from the observation at the start of the tick, and the tick is played with its last seat's
decision; no seat sees another's choice for the same tick.

Both keep the protocol's seed stream (``reset(seeds=s)`` plays games ``s..s+N-1``; a finished game is replaced in
the same step by the next seed of the counter ``next_seed``, in slot order), records (``record(i)``,
``finished_record(i)``, replayable with ``cardzoo.envs.replay``), ``finished_info(i)`` (the single env's final
``infos`` entry), ``outcome``/``truncated``/``final_obs`` after each step and the single env's ``illegal_action``
modes ("penalize", "raise", "wait"). ``SummitRushParallel.reset`` also takes ``decks`` (one per game, ``None`` or 52
card strings, as the single env's ``deck`` reset option). Its arrays are new each step, as the protocol's.

The action space is the single env's: ``message * (28 * P + 2) + move`` (just the move when silent). A talking
mask is the move mask tiled once per message (57 times: 3306 entries a seat with two players), because any message
goes with any legal move. ``SummitRushParallel(..., mask="moves")`` returns the move mask alone,
``int8[N, P, 28 * P + 2]`` — the fast path for a learner that picks its message with a head of its own (actions are
still joint actions); the default ``mask="full"`` is the single env's.

State, one row per game: the peaks' cards ``int8[N, 28]``, the positions still there and the face-up ones as 28-bit
masks (``uint32[N]``), the piles' tops ``int8[N, P]``, the cards on any pile ``int8[N, 52]`` (the observation's
``on_piles`` piece as it is), the stocks ``int8[N, P, S]`` and the cards left in each, the clock, each seat's last
message and when it was said, and the counters the end-of-game info reports. A tick lands the actions in ``P``
passes, one per place in the touch order, each pass on the games whose action in that place is a play or a turn.

Who touches first: each game's order comes from ``random.Random(order_seed)``, ``int(random() * P!)`` each tick,
as ``rules.draw_order``. ``random()`` is two 32-bit outputs of the Mersenne Twister (``a >> 5``, ``b >> 6``), so
one ``getrandbits(64 * k)`` call gives the next ``k`` ticks' numbers at once: the engine draws a block of ticks per
game when it starts (a timed game's whole clock) and the next block if the game outlasts it. Deals come from
:mod:`cardzoo.envs.common.generators` (numpy's ``default_rng(seed)`` for many seeds at once), a block of upcoming
seeds ahead of need.

Speed, the choice of numpy and the cost of the talking mask: ``evaluation/benchmarks/batched.py`` and
``evaluation/results/batched/``.
"""

from __future__ import annotations

import random
import warnings
from typing import Any

import numpy as np

from ..batched import BatchedEnv, SeedBlocks, _as_array
from ..common.cards import CARD_NAMES, parse_deck
from ..common.errors import IllegalActionError, IllegalActionWarning, OptionError
from ..common.generators import PCG64Array, permutations
from ..common.options import one_of, plain, reject_unknown, shown
from . import rules
from .env import _CONFIG_OPTIONS, ENV_OPTIONS, ILLEGAL_ACTION_MODES, make_config
from .observer import HEARD_AGES, Observer

NP = rules.N_PEAKS
OUTCOMES = (rules.WIN, rules.TIME, rules.STUCK, rules.TICK_LIMIT, rules.ILLEGAL)
WIN, TIME, STUCK, TICK_LIMIT, ILLEGAL = range(5)
_REWARD = np.array([1.0, -1.0, -1.0, 0.0, -1.0])  # by outcome code, as rules.rewards and the penalty
OPTIONS = tuple(o for o in ENV_OPTIONS if o != "render_mode")

_RANK = np.eye(13, dtype=np.int8)[np.arange(52) % 13]  # card -> rank one-hot (2..A)
_SUIT = np.eye(4, dtype=np.int8)[np.arange(52) // 13]
# What a card leaving position pos may uncover: the (up to two) positions it covers, padded with position 28.
_COVERS = np.array([list(c) + [NP] * (2 - len(c)) for c in rules.COVERS], np.intp)
_COVER_MASK = np.array([*rules.COVER_MASK, 0], np.uint32)
_BIT = np.array([1 << q for q in range(NP)] + [0], np.uint32)
_ORDERS = {n: np.array(orders, np.intp) for n, orders in rules.ORDERS.items()}
_ORDER_BLOCK = 64  # ticks of touch orders drawn at a time for untimed games
_seed = random.Random.__base__.seed  # the C seeding random.Random.seed ends in, for an int (a third of its time)


def _thermometers(n: int) -> np.ndarray:
    """Row ``k`` is a thermometer of ``n`` entries whose first ``k`` are set (``k = 0..n``)."""
    return (np.arange(n)[None, :] < np.arange(n + 1)[:, None]).astype(np.int8)


def _unpack28(bits: np.ndarray) -> np.ndarray:
    """int8[k, 28]: the low 28 bits of each uint32."""
    return np.unpackbits(bits.view(np.uint8).reshape(-1, 4), axis=1, count=NP, bitorder="little").view(np.int8)


class _Engine:
    """The games' state and the rules on arrays, shared by both forms: deal into slots, check moves, play a tick in
    chosen games. Knows nothing of seed streams, records or automatic reset.

    Observations are kept, not rebuilt: a game's rows (one per seat) are written whole when it is dealt, and a tick
    then writes only what changed — a card leaving the peaks and those it uncovers, the tops of the piles it
    touched, a stock card turned, the clock's entry, what was said."""

    def __init__(self, num_envs: int, config: rules.Config):
        self.config = c = config
        self.num_envs = n = num_envs
        self.players = p = c.players
        self.observer = obs = Observer(c)
        self.n_moves, self.n_messages = c.n_moves, c.n_messages
        self.TURN, self.WAIT = NP * p, NP * p + 1
        self._orders = _ORDERS[p]
        self._clock = c.ticks
        cap = c.max_ticks if c.ticks is None else min(c.max_ticks, c.ticks)
        self._block = min(cap, _ORDER_BLOCK) if c.ticks is None else cap
        self._stock_therm = _thermometers(obs.stock_len)
        self._time_therm = _thermometers(obs.ticks)
        self._heard = np.vstack([np.zeros(rules.N_MESSAGES - 1, np.int8), np.eye(rules.N_MESSAGES - 1, dtype=np.int8)])
        self._ago = np.vstack([np.eye(HEARD_AGES, dtype=np.int8), np.zeros(HEARD_AGES, np.int8)])
        # The ranks next to each card's (natural rank index 0..12 for 2..A; 13 = none, off the end without wrap).
        nb = np.full((52, 2), 13, np.intp)
        for card in range(52):
            fits = sorted({d % 13 for d in range(52) if rules.FITS[c.wrap][card] >> d & 1})
            nb[card, : len(fits)] = fits
        self._neighbours = nb
        self._o = o = obs.layout.offsets
        # _spread[q][v]: the move-mask entries (8 * P of them, pos * P + pile) of pile q's byte of free fitting
        # positions v, for a byte's 8 positions
        bits = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1, bitorder="little").astype(np.int8)
        self._spread = [np.zeros((256, 8 * p), np.int8) for _ in range(p)]
        for q in range(p):
            self._spread[q][:, q::p] = bits
        cards = np.arange(52)
        # observation entries of a card as a pile's top (rank, suit, and its entry in on_piles) and as a face-up
        # peak card (up, rank, suit), by pile or position and card
        self._top_entries = np.stack([o["pile_rank"] + 13 * np.arange(p)[:, None] + cards % 13,
                                      o["pile_suit"] + 4 * np.arange(p)[:, None] + cards // 13,
                                      np.broadcast_to(o["on_piles"] + cards, (p, 52))], axis=2)
        positions = np.arange(NP)[:, None]
        self._peak_entries = np.stack([np.broadcast_to(o["peak_up"] + positions, (NP, 52)),
                                       o["peak_rank"] + 13 * positions + cards % 13,
                                       o["peak_suit"] + 4 * positions + cards // 13], axis=2)
        self._public_end = o["seat"]  # the entries before the seat piece are the same for every seat
        self._size = obs.size
        s = c.stock
        self.peaks = np.zeros((n, NP), np.int8)
        self.present = np.zeros(n, np.uint32)
        self.up = np.zeros(n, np.uint32)
        self.by_rank = np.zeros((n, 14), np.uint32)  # positions whose card has rank r (column 13 stays empty)
        self.tops = np.zeros((n, p), np.int64)
        self.on_piles = np.zeros((n, 52), np.int8)
        self.stocks = np.zeros((n, p, s), np.int8)
        self.stock_left = np.zeros((n, p), np.int64)
        self.aside = np.zeros((n, c.aside), np.int8)
        self.tick = np.zeros(n, np.int64)
        self.over = np.full(n, -1, np.int8)  # outcome code once the game has ended by its rules, -1 before
        # conflicts, redirected, bounced, turned, illegal_waits, messages: the single env's info counters
        self.counters = np.zeros((n, 6), np.int64)
        self.said = np.zeros((n, p), np.int64)  # each seat's last message (0: none yet) and the tick it was said
        self.said_tick = np.zeros((n, p), np.int64)
        # Touch orders: each game's order seed, the next ticks' orders (indices into ORDERS), the tick of the
        # game they start at and the next to use. One generator serves every game: a block after the first is
        # drawn by seeding it again and skipping the ticks drawn before (a Random object per game costs 2.5 kB).
        self._rng = random.Random()
        self._order_seed = np.zeros(n, np.int64)
        self._order = np.zeros((n, self._block), np.int8)
        self._order_from = np.zeros(n, np.int64)
        self._order_at = np.zeros(n, np.int64)
        self.last_order = np.zeros((n, p), np.int64)  # the seat order of each game's last tick (State.last_order)
        self.last_order[:] = np.arange(p)
        self.moves_mask = np.zeros((n, p, self.n_moves), np.int8)  # start-of-tick legal moves of every seat
        # The observation entries before the seat piece, the same for every seat: one row per game.
        self.public = np.zeros((n, self._public_end), np.int8)
        self._flat = self.public.reshape(-1)
        self._row = np.arange(n) * self._public_end  # flat index of each game's row
        # The rest of each seat's observation: the seat's one-hot and the wrap flag.
        self.tail = np.zeros((p, self._size - self._public_end), np.int8)
        self.tail[:, : p] = np.eye(p, dtype=np.int8)
        if c.wrap:
            self.tail[:, o["wrap"] - self._public_end] = 1
        self._rows = np.arange(n)
        self._rank_rows = self._rows * 14  # flat index of each game's row of by_rank

    def _all(self, games: np.ndarray):
        """``games``, or ``slice(None)`` when it is every game in order (views instead of copies)."""
        return slice(None) if len(games) == self.num_envs else games

    def _put(self, games: np.ndarray, entries: np.ndarray, value: int) -> None:
        """Set public entries ``entries`` (int[k] or int[k, j], one row per game) of ``games``."""
        self._flat[self._row[games].reshape((-1,) + (1,) * (entries.ndim - 1)) + entries] = value

    def observe(self, games, seats: np.ndarray | None = None) -> np.ndarray:
        """New arrays: every seat's observation int8[k, P, O] of ``games`` (an index array or ``slice(None)``), or
        with ``seats`` (int[k]) the one of ``seats[j]`` in game ``games[j]``, int8[k, O]."""
        public = self.public[games]
        if seats is None:
            out = np.empty((len(public), self.players, self._size), np.int8)
            out[:, :, : self._public_end] = public[:, None, :]
            out[:, :, self._public_end :] = self.tail
        else:
            out = np.empty((len(public), self._size), np.int8)
            out[:, : self._public_end] = public
            out[:, self._public_end :] = self.tail[seats]
        return out

    # ----------------------------------------------------------------- dealing
    def start(self, slots: np.ndarray, decks: np.ndarray, order_seeds: np.ndarray) -> None:
        """Deal ``decks`` (int[k, 52], the single env's deck order) into ``slots``; ``order_seeds`` seed the touch
        orders. Writes the slots' observations and masks whole."""
        p, s = self.players, self.config.stock
        peaks = decks[:, :NP]
        self.peaks[slots] = peaks
        self.present[slots] = rules.ALL_PEAKS
        self.up[slots] = rules.START_UP
        by_rank = np.zeros((len(slots), 14), np.uint32)
        np.bitwise_or.at(by_rank, (np.arange(len(slots))[:, None], peaks % 13), _BIT[:NP])
        self.by_rank[slots] = by_rank
        stocks = decks[:, NP : NP + p * s].reshape(-1, p, s)
        self.stocks[slots] = stocks
        self.aside[slots] = decks[:, NP + p * s :]
        self.tops[slots] = stocks[:, :, 0]
        on = np.zeros((len(slots), 52), np.int8)
        np.put_along_axis(on, stocks[:, :, 0].astype(np.intp), 1, axis=1)
        self.on_piles[slots] = on
        self.stock_left[slots] = s - 1
        self.tick[slots] = 0
        self.over[slots] = -1
        self.counters[slots] = 0
        self.said[slots] = 0
        self.said_tick[slots] = 0
        if p > 1:  # one seat has one order: nothing to draw
            self._order_seed[slots] = order_seeds
            self._order_from[slots] = 0
            self._draw_orders(slots)
        self._write(slots)
        self.masks(slots)

    def _draw_orders(self, slots: np.ndarray) -> None:
        """The block of ticks' touch orders of ``slots`` from tick ``_order_from`` on (``rules.draw_order``)."""
        k, rng = self._block, self._rng
        raw = []
        for seed, skip in zip(self._order_seed[slots].tolist(), self._order_from[slots].tolist(), strict=True):
            _seed(rng, seed)
            if skip:
                rng.getrandbits(64 * skip)
            raw.append(rng.getrandbits(64 * k).to_bytes(8 * k, "little"))
        raw = b"".join(raw)
        words = np.frombuffer(raw, np.uint32).reshape(len(slots), k, 2)
        # random(): (a >> 5, b >> 6) as a 53-bit fraction, exactly as CPython builds it
        a, b = (words[:, :, 0] >> 5).astype(np.float64), (words[:, :, 1] >> 6).astype(np.float64)
        x = (a * 67108864.0 + b) * (1.0 / 9007199254740992.0)
        self._order[slots] = (x * len(self._orders)).astype(np.int8)
        self._order_at[slots] = 0

    def _write(self, g: np.ndarray) -> None:
        """Write every seat's observation of games ``g`` whole (as ``Observer.public_bits`` and the seat)."""
        o, p = self._o, self.players
        k = len(g)
        view = np.zeros((k, self._public_end), np.int8)
        pb, ub = _unpack28(self.present[g]), _unpack28(self.up[g])
        view[:, o["peak_gone"] : o["peak_gone"] + NP] = 1 - pb
        view[:, o["peak_down"] : o["peak_down"] + NP] = pb - ub
        view[:, o["peak_up"] : o["peak_up"] + NP] = ub
        peaks = self.peaks[g]
        view[:, o["peak_rank"] : o["peak_rank"] + NP * 13] = (_RANK[peaks] * ub[:, :, None]).reshape(k, -1)
        view[:, o["peak_suit"] : o["peak_suit"] + NP * 4] = (_SUIT[peaks] * ub[:, :, None]).reshape(k, -1)
        tops = self.tops[g]
        view[:, o["pile_rank"] : o["pile_rank"] + 13 * p] = _RANK[tops].reshape(k, -1)
        view[:, o["pile_suit"] : o["pile_suit"] + 4 * p] = _SUIT[tops].reshape(k, -1)
        view[:, o["on_piles"] : o["on_piles"] + 52] = self.on_piles[g]
        width = self.observer.stock_len * p
        view[:, o["stock_left"] : o["stock_left"] + width] = self._stock_therm[self.stock_left[g]].reshape(k, -1)
        tick = self.tick[g]
        if self._clock is not None:
            view[:, o["time_left"] : o["time_left"] + self._clock] = self._time_therm[np.maximum(self._clock - tick, 0)]
            view[:, o["timed"]] = 1
        if self.n_messages > 1:
            said = self.said[g]
            view[:, o["heard"] : o["heard"] + p * (rules.N_MESSAGES - 1)] = self._heard[said].reshape(k, -1)
            view[:, o["heard_ago"] : o["heard_ago"] + p * HEARD_AGES] = self._heard_ago(g)
        self.public[g] = view

    def _heard_ago(self, g: np.ndarray) -> np.ndarray:
        said = self.said[g]
        ago = np.where(said > 0, np.minimum(self.tick[g, None] - 1 - self.said_tick[g], HEARD_AGES - 1), HEARD_AGES)
        return self._ago[ago].reshape(len(said), -1)

    def masks(self, g: np.ndarray) -> np.ndarray:
        """Write the move masks of games ``g`` (every seat's); returns bool[k], whether any free card fits any pile
        (the stuck test). A game that is over has none."""
        g = self._all(g)
        p = self.players
        # the free positions whose card fits each pile: the positions holding a neighbour rank of its top card
        near = np.take(self.by_rank, self._rank_rows[g][:, None, None] + self._neighbours[self.tops[g]])
        fit = (near[:, :, 0] | near[:, :, 1]) & self.up[g][:, None]  # uint32[k, P]
        k = len(fit)
        running = self.over[g] < 0
        fit *= running[:, None]
        mask = np.empty((k, self.n_moves), np.int8)
        # pos * P + pile: each byte of a pile's positions looked up as its 8 * P mask entries, piles OR-ed together
        key = fit.view(np.uint8).reshape(k, p, 4)
        spread = self._spread[0][key[:, 0]]
        for q in range(1, p):
            spread |= self._spread[q][key[:, q]]
        mask[:, : self.TURN] = spread.reshape(k, -1)[:, : self.TURN]
        mask[:, self.WAIT] = running
        self.moves_mask[g] = mask[:, None, :]
        self.moves_mask[g, :, self.TURN] = (self.stock_left[g] > 0) & running[:, None]
        return (fit != 0).any(axis=1)

    # ----------------------------------------------------------------- playing
    def legal(self, moves: np.ndarray) -> np.ndarray:
        """bool[N, P]: whether each seat's move (in range) is legal at the start of this tick."""
        return self.moves_mask[self._rows[:, None], np.arange(self.players), moves] == 1

    def tick_games(self, games: np.ndarray, moves: np.ndarray, messages: np.ndarray | None) -> np.ndarray:
        """Play one tick in ``games`` (int[k]) with ``moves`` int[k, P] (legal) and ``messages`` (or None when
        silent), as the single env's step and ``rules.play_tick``; sets ``over`` for the games that end and brings
        observations and masks up to date."""
        p, o = self.players, self._o
        if messages is not None:
            g, q = np.nonzero(messages > 0)
            games_g = games[g]
            heard = o["heard"] - 1 + q * (rules.N_MESSAGES - 1)
            before = self.said[games_g, q]
            spoke = np.flatnonzero(before > 0)
            self._put(games_g[spoke], heard[spoke] + before[spoke], 0)
            said = messages[g, q]
            self._put(games_g, heard + said, 1)
            self.said[games_g, q] = said
            self.said_tick[games_g, q] = self.tick[games_g]
            np.add.at(self.counters[:, 5], games_g, 1)
        if p > 1:
            at = self._order_at[games]
            order = self._orders[self._order[games, at]]
            self.last_order[games] = order
            self._order_at[games] = at + 1
            refill = games[at + 1 == self._block]
            if len(refill):
                self._order_from[refill] += self._block
                self._draw_orders(refill)
        else:
            order = np.zeros((len(games), 1), np.intp)
        local = np.arange(len(games))
        for place in range(p):
            seat = order[:, place]
            move = moves[local, seat]
            alive = self.present[games] != 0  # a game won earlier in this tick: hands off
            turning = np.flatnonzero(alive & (move == self.TURN))
            if len(turning):
                self._turn(games[turning], seat[turning])
            playing = np.flatnonzero(alive & (move < self.TURN))
            if len(playing):
                self._play(games[playing], seat[playing], move[playing])
        sel = self._all(games)
        tick = self.tick[sel]
        if self._clock is not None:  # one entry of the clock's thermometer goes out
            running = np.flatnonzero(tick < self._clock)
            self._put(games[running], o["time_left"] + self._clock - 1 - tick[running], 0)
        self.tick[sel] = tick + 1
        if messages is not None:
            self.public[sel, o["heard_ago"] : o["heard_ago"] + p * HEARD_AGES] = self._heard_ago(sel)
        self._end_checks(games)

    def _set_top(self, g: np.ndarray, pile: np.ndarray, card: np.ndarray) -> None:
        self._put(g, self._top_entries[pile, self.tops[g, pile], :2], 0)  # clear first: a turned card may share a suit
        self._put(g, self._top_entries[pile, card], 1)
        self.tops[g, pile] = card
        self.on_piles[g, card] = 1

    def _turn(self, g: np.ndarray, seat: np.ndarray) -> None:
        left = self.stock_left[g, seat]
        card = self.stocks[g, seat, self.config.stock - left].astype(np.int64)
        self.stock_left[g, seat] = left - 1
        self._put(g, self._o["stock_left"] + seat * self.observer.stock_len + left - 1, 0)
        self._set_top(g, seat, card)
        self.counters[g, 3] += 1

    def _play(self, g: np.ndarray, seat: np.ndarray, move: np.ndarray) -> None:
        p, o = self.players, self._o
        pos, pile = np.divmod(move, p)
        there = (self.present[g] >> pos.astype(np.uint32)) & 1 == 1
        self.counters[g[~there], 0] += 1  # the card is gone: a conflict
        g, seat, pos, pile = g[there], seat[there], pos[there], pile[there]
        card = self.peaks[g, pos].astype(np.int64)
        nb = self._neighbours[self.tops[g]]  # int[k, P, 2]: the ranks each pile takes now
        fits = (nb == (card % 13)[:, None, None]).any(axis=2)  # bool[k, P]
        local = np.arange(len(g))
        stays = fits[local, pile]
        if not stays.all():
            # the first other pile that takes it, from the player's own pile round the seats, or back (bounced)
            others = (seat[:, None] + np.arange(p)) % p
            takes = fits[local[:, None], others] & (others != pile[:, None])
            moved = ~stays & takes.any(axis=1)
            self.counters[g[moved], 1] += 1
            self.counters[g[~stays & ~moved], 2] += 1
            pile = np.where(stays, pile, others[local, takes.argmax(axis=1)])
            lands = stays | moved
            g, pos, pile, card = g[lands], pos[lands], pile[lands], card[lands]
        present = self.present[g] & ~_BIT[pos]
        self._put(g, self._peak_entries[pos, card], 0)
        self._put(g, o["peak_gone"] + pos, 1)
        # the positions this card covered whose other cover is gone too turn face up
        covered = _COVERS[pos]  # int[k, 2], padded with position 28
        turned = ((present[:, None] & _COVER_MASK[covered]) == 0) & (covered < NP)
        self.present[g] = present
        self.up[g] = (self.up[g] & ~_BIT[pos]) | np.bitwise_or.reduce(np.where(turned, _BIT[covered], 0), axis=1)
        i, j = np.nonzero(turned)
        if len(i):
            gt, qt = g[i], covered[i, j]
            self._put(gt, o["peak_down"] + qt, 0)
            self._put(gt, self._peak_entries[qt, self.peaks[gt, qt]], 1)
        self._set_top(g, pile, card)

    def _end_checks(self, games: np.ndarray) -> None:
        """``rules._check_end`` for ``games`` after a tick (win, stuck, time, tick limit, in that order), then the
        masks (none once over)."""
        c = self.config
        plays_any = self.masks(games)
        sel = self._all(games)
        tick = self.tick[sel]
        over = np.full(len(games), -1, np.int8)
        over[tick >= c.max_ticks] = TICK_LIMIT
        if self._clock is not None:
            over[tick >= self._clock] = TIME
        over[(self.stock_left[sel].sum(axis=1) == 0) & ~plays_any] = STUCK
        over[self.present[sel] == 0] = WIN
        self.over[sel] = over
        self.moves_mask[games[over >= 0]] = 0

    def full_mask(self, moves_mask: np.ndarray) -> np.ndarray:
        """The joint (message, move) mask: the move mask tiled once per message."""
        if self.n_messages == 1:
            return moves_mask.copy()
        k, p, m = moves_mask.shape
        out = np.empty((k, p, self.n_messages, m), np.int8)
        out[:] = moves_mask[:, :, None, :]
        return out.reshape(k, p, -1)


def _deals(seeds: np.ndarray) -> np.ndarray:
    """int64[k, 53]: each seed's deck (the single env's ``rng.permutation(52)``) and order seed (its next
    ``rng.integers(2**63)``), as ``SeedBlocks`` keeps them."""
    perms, after = permutations(seeds, 52, 1, then_uint64=True)
    return np.concatenate([perms[:, 0].astype(np.int64), (after >> np.uint64(1)).astype(np.int64)[:, None]], axis=1)


class _SummitBatch(BatchedEnv):
    """What both forms share: options, dealing, records, the end-of-game info."""

    env_name = "summit_rush_v0"
    env_options = OPTIONS
    illegal_action_modes = ILLEGAL_ACTION_MODES
    outcomes = OUTCOMES

    def __init__(self, num_envs: int, **options: Any):
        reject_unknown(options, OPTIONS, "option")
        config = make_config(**{k: options[k] for k in _CONFIG_OPTIONS if k in options})
        self.config = config
        self.possible_agents = tuple(f"player_{p}" for p in range(config.players))
        self.observation_size = Observer(config).size
        self.num_actions = config.n_actions
        cap = config.max_ticks if config.ticks is None else min(config.max_ticks, config.ticks)
        self.max_decisions = cap * config.players
        super().__init__(num_envs, options)
        n = self.num_envs
        self.engine = _Engine(n, config)
        self.n_moves, self.TURN, self.WAIT = config.n_moves, self.engine.TURN, self.engine.WAIT
        self._deals = SeedBlocks(_deals, block=min(max(n, 1024), 8192))
        self._decks: list[list[str] | None] = [None] * n  # an explicit deck of the slot's game, for its record
        self._finished_decks: list[list[str] | None] = [None] * n
        # the last ended game of each slot, for finished_info(): the engine's state then, and who moved illegally
        self._end_ticks = np.zeros(n, np.int64)
        self._end_counters = np.zeros((n, 6), np.int64)
        self._end_present = np.zeros(n, np.uint32)
        self._end_stock = np.zeros(n, np.int64)
        self._end_illegal = np.zeros((n, config.players), bool)
        self._illegal_seats = np.zeros((n, config.players), bool)  # this step's illegal movers (penalize)

    # ----------------------------------------------------------------- dealing
    def _start(self, slots: np.ndarray, seeds: np.ndarray, decks: list | None = None) -> None:
        e = self.engine
        # what finished_info() reports of the game that ended in these slots
        self._end_ticks[slots] = e.tick[slots]
        self._end_counters[slots] = e.counters[slots]
        self._end_present[slots] = e.present[slots]
        self._end_stock[slots] = e.stock_left[slots].sum(axis=1)
        self._end_illegal[slots] = self._illegal_seats[slots]
        self._illegal_seats[slots] = False
        for slot in slots.tolist():
            self._finished_decks[slot] = self._decks[slot]
            self._decks[slot] = None
        dealt = self._deals.take(seeds)
        cards, order_seeds = dealt[:, :52], dealt[:, 52]
        if decks is not None and any(d is not None for d in decks):
            cards = cards.copy()
            given = [j for j, d in enumerate(decks) if d is not None]
            # the order seed is then the generator's first draw: the single env skips the permutation
            first = PCG64Array(seeds[given]).next_uint64() >> np.uint64(1)
            for j, o in zip(given, first.tolist(), strict=True):
                cards[j] = decks[j]
                order_seeds[j] = o
                self._decks[int(slots[j])] = [CARD_NAMES[c] for c in decks[j]]
        e.start(slots, cards, order_seeds)

    # ----------------------------------------------------------------- records and infos
    def _record(self, seed: int, moves: np.ndarray, deck: list[str] | None = None) -> dict[str, Any]:
        p = self.players
        ticks = moves[: len(moves) - len(moves) % p].reshape(-1, p).tolist()
        if len(moves) % p:  # a game ended by an illegal move mid-tick: the seats still to choose waited
            ticks.append(moves[len(moves) - len(moves) % p :].tolist() + [self.WAIT] * (p - len(moves) % p))
        return {"env": self.env_name, "kind": "parallel", "options": plain(self.record_options), "seed": seed,
                "reset_options": {} if deck is None else {"deck": list(deck)},
                "actions": [dict(zip(self.possible_agents, tick, strict=True)) for tick in ticks]}

    def record(self, slot: int) -> dict[str, Any]:
        """The current game of ``slot`` as the single env's ``game_record()``: its ticks played so far."""
        self._check_slot(slot)
        length = self._length[slot] - self._length[slot] % self.players  # a tick half asked is not played yet
        return self._record(int(self.seeds[slot]), self._history[slot, :length], self._decks[slot])

    def finished_record(self, slot: int) -> dict[str, Any]:
        self._check_slot(slot)
        seeds, history, length = self._finished
        if seeds[slot] < 0:
            raise OptionError(f"no game has ended in slot {slot} since reset()")
        return self._record(int(seeds[slot]), history[slot, : length[slot]], self._finished_decks[slot])

    def finished_info(self, slot: int) -> dict[str, Any]:
        """The single env's final ``infos`` entry (the same for every agent) of the last game ended in ``slot``."""
        self.finished_record(slot)  # checks the slot and that a game has ended there
        outcome = OUTCOMES[self._finished_outcome[slot]]
        c = [int(v) for v in self._end_counters[slot]]
        info = {"outcome": outcome, "ticks": int(self._end_ticks[slot]),
                "score": int(self._end_stock[slot]) if outcome == rules.WIN else 0, "conflicts": c[0],
                "redirected": c[1], "bounced": c[2], "turned": c[3],
                "peaks_left": int(self._end_present[slot]).bit_count(), "illegal_waits": c[4]}
        if self.config.talk:
            info["messages"] = c[5]
        if outcome == rules.ILLEGAL:
            info["illegal_by"] = [a for a, bad in zip(self.possible_agents, self._end_illegal[slot], strict=True)
                                  if bad]
        return info

    def _illegal_rewards(self, seats: np.ndarray) -> np.ndarray:
        return np.full((len(seats), self.players), -1.0)  # the team loses together, as in the single env

    # ----------------------------------------------------------------- a tick
    def _tick(self, games: np.ndarray, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Play one tick in ``games`` with joint ``actions`` int[k, P] (legal, or waits under "wait"). Returns the
        outcome codes of the games (-1 going on) and the team rewards."""
        if self.config.talk:
            messages, moves = np.divmod(actions, self.n_moves)
        else:
            messages, moves = None, actions
        self.engine.tick_games(games, moves, messages)
        over = self.engine.over[games]
        return over, np.where(over >= 0, _REWARD[np.maximum(over, 0)], 0.0)

    def _waits_for_illegal(self, actions: np.ndarray, legal: np.ndarray) -> np.ndarray:
        """Under ``illegal_action="wait"``: illegal moves played as waits (the message still said), counted."""
        bad = ~legal
        self.engine.counters[:, 4] += bad.reshape(len(bad), -1).sum(axis=1)
        return np.where(bad, actions - actions % self.n_moves + self.WAIT, actions)


class SummitRushParallel(_SummitBatch):
    """The Parallel form: every seat acts every tick (see the module docstring). ``mask="moves"`` returns the
    move mask alone (``int8[N, P, 28 * P + 2]``) instead of the joint one."""

    def __init__(self, num_envs: int, mask: str = "full", **options: Any):
        self.mask_kind = one_of("mask", mask, ("full", "moves"))
        super().__init__(num_envs, **options)
        self.final_obs = np.zeros((self.num_envs, self.players, self.observation_size), np.int8)

    def reset(self, seeds: int | Any = 0, next_seed: int | None = None, decks: list | None = None):
        """Start N games (``seeds`` an int ``s`` for games ``s..s+N-1``, or N seeds); ``decks`` optionally gives
        game ``i`` the deck ``decks[i]`` (52 card strings, or None for the seed's deal). Returns ``obs, mask``."""
        seeds, after = self._check_reset(seeds, next_seed)
        if decks is not None:
            if isinstance(decks, (str, bytes, dict)) or not hasattr(decks, "__len__"):
                raise OptionError(f"decks must be a list of one deck (or None) per game, got {shown(decks)}")
            if len(decks) != self.num_envs:
                raise OptionError(f"decks must hold one entry per game ({self.num_envs}), got {len(decks)}")
            decks = [None if d is None else np.array(parse_deck(d), np.int64) for d in decks]
        self._reset(seeds, after, decks=decks)
        obs, mask, _ = self._current_arrays()
        return obs, mask

    def _current(self):
        e = self.engine
        mask = e.moves_mask.copy() if self.mask_kind == "moves" else e.full_mask(e.moves_mask)
        return e.observe(slice(None)), mask, np.full(self.num_envs, -1, np.int64)

    def step(self, actions):
        """One tick of every game: ``actions[i, p]`` is seat ``p``'s joint action in game ``i``. Returns ``obs,
        mask, rewards, done``; ``truncated``, ``outcome``, ``final_obs`` (int8[N, P, O]) as the protocol's."""
        self._check_open("step")
        if not self._started:
            raise IllegalActionError("step() before reset(): call reset(seeds) first to start the games")
        n, p = self.num_envs, self.players
        actions = _as_array(actions, "actions", IllegalActionError)
        if actions.shape != (n, p) or not np.issubdtype(actions.dtype, np.integer):
            raise IllegalActionError(f"actions must be integers of shape ({n}, {p}), one per game and seat; got "
                                     f"{actions.dtype} {actions.shape}")
        bad = np.argwhere((actions < 0) | (actions >= self.num_actions))
        if len(bad):
            i, q = bad[0]
            raise IllegalActionError(f"action {actions[i, q]} of game {i}, seat {q} is out of range "
                                     f"0..{self.num_actions - 1} ({len(bad)} out of range)")
        actions = actions.astype(np.int64)
        legal = self.engine.legal(actions % self.n_moves)
        games = self._slots
        all_legal = bool(legal.all())
        if not all_legal:
            illegal = np.argwhere(~legal)
            named = ", ".join(f"game {i} ({self.possible_agents[q]}, action {actions[i, q]})" for i, q in illegal[:5])
            more = f" and {len(illegal) - 5} more" if len(illegal) > 5 else ""
            if self.illegal_action == "raise":
                raise IllegalActionError(f"illegal actions the mask forbids in {named}{more}; nothing was played. "
                                         "Read the mask for the legal actions.")
            if self.illegal_action == "penalize":
                warnings.warn(f"illegal actions in {named}{more}: those games end with the penalty. Read the mask "
                              "for the legal actions, or use illegal_action='raise' to get an error instead.",
                              IllegalActionWarning, stacklevel=2)
                games = np.flatnonzero(legal.all(axis=1))
        with self._undone_on_error():
            played = actions
            if not all_legal:
                if self.illegal_action == "wait":
                    played = self._waits_for_illegal(actions, legal)
                else:
                    self._illegal_seats[:] = ~legal
            at = self._length[:, None] + np.arange(p)
            self._history[self._slots[:, None], at] = actions  # as given: a replay must end the same way
            self._length += p
            outcome = np.full(n, ILLEGAL, np.int8)
            rewards = np.full(n, _REWARD[ILLEGAL])
            outcome[games], rewards[games] = self._tick(games, played[games])
            done = outcome >= 0
            self.outcome, self.truncated = outcome, outcome == TICK_LIMIT
            ended = np.flatnonzero(done)
            if len(ended):
                self.final_obs[ended] = self.engine.observe(ended)
                self._restart(ended, np.zeros(n, np.int64))
            obs, mask, _ = self._current_arrays()
        return obs, mask, np.repeat(rewards[:, None], p, axis=1), done


class SummitRushBatched(_SummitBatch):
    """The :mod:`cardzoo.envs.batched` protocol: one seat's decision a step, ticks as TickEnv plays them (see the
    module docstring). ``seat[i]`` is the seat asked in game ``i``; ``obs``/``mask`` are its start-of-tick ones."""

    def __init__(self, num_envs: int, **options: Any):
        super().__init__(num_envs, **options)
        self._asked = np.zeros(self.num_envs, np.int64)  # the seat asked next in each game
        self._chosen = np.zeros((self.num_envs, self.players), np.int64)  # the tick's decisions so far

    def _start(self, slots: np.ndarray, seeds: np.ndarray, decks: list | None = None) -> None:
        super()._start(slots, seeds)
        self._asked[slots] = 0

    def _legal_moves(self, actions: np.ndarray) -> np.ndarray:
        return self.engine.moves_mask[self._slots, self._asked, actions % self.n_moves] == 1

    def _legal(self, actions: np.ndarray) -> np.ndarray:
        if self.illegal_action == "wait":
            return np.ones(self.num_envs, bool)  # played as waits in _play
        return self._legal_moves(actions)

    def _play(self, actions: np.ndarray):
        n, p = self.num_envs, self.players
        # computed again rather than kept from _legal: a refused step must leave no trace, not even a scratch array
        legal, seat = self._legal_moves(actions), self._asked
        if self.illegal_action == "wait":
            actions = self._waits_for_illegal(actions, legal)
        else:
            self._illegal_seats[self._slots, seat] = ~legal
        self._chosen[self._slots, seat] = actions
        last = seat == p - 1
        games = np.flatnonzero(last & legal) if self.illegal_action != "wait" else np.flatnonzero(last)
        outcome = np.full(n, -1, np.int8)
        team = np.zeros(n)
        if len(games):
            outcome[games], team[games] = self._tick(games, self._chosen[games])
        self._asked = np.where(last, 0, seat + 1)
        return np.repeat(team[:, None], p, axis=1), outcome, outcome == TICK_LIMIT

    def _observe(self, slots: np.ndarray, seats: np.ndarray) -> np.ndarray:
        return self.engine.observe(slots, seats)

    def _current(self):
        e, seat = self.engine, self._asked
        return e.observe(self._slots, seat), e.full_mask(e.moves_mask[self._slots, seat][:, None])[:, 0], seat.copy()
