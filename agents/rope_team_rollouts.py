"""Many Rope Team games played at once with numpy, both seats following the simple strategy.

This is the engine of the search agent (:mod:`cardzoo.agents.rope_team_search`): its rollouts (every sampled world
times every candidate card, played to the end of the game) and its partner model (what the simple strategy would
have played, in every sampled world, at each of the partner's earlier decisions). One row is one game. The rows of
one batch start at the same point of a trick (all about to lead, or all about to follow) and stay in step: every
trick is two plays, every deal thirteen tricks.

Each row follows :func:`cardzoo.envs.rope_team.rules.play` and
:meth:`cardzoo.agents.rope_team_simple.RopeTeamSimple.act_bits` exactly -- the same cards, the same values, the same
ties broken the same way (the tests play whole games both ways and compare every card). The simple strategy's
scores of a landing (where the coin ends, by who wins and by how many steps) come from the strategy itself, computed
once per (coin, face-up ridge, ropes) and kept in a table.

The blueprint is pluggable: :meth:`Games.play_out` takes a batched policy ``policy(obs[N, 464], mask[N, 52]) ->
cards[N]`` and asks it for every row's card from the mover's observation and mask (:meth:`Games.observe`, equal to
the env's bit for bit, built by the batched engine's observation code). :func:`simple_policy` is the simple
strategy in that form (rows leading and following mixed); without a policy the rows play the simple strategy from
their own arrays, the fast path (no observation is built).

Later deals cannot be drawn inside a row (the rules draw them from the game's generator); the caller gives each
row its later hands up front (``future``), which also lets every candidate card of one world meet the same later
deals.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from cardzoo.envs.common.cards import FULL_MASK
from cardzoo.envs.common.errors import PolicyError
from cardzoo.envs.rope_team import rules
from cardzoo.envs.rope_team.arrays import (
    NO_CARD,
    ONE,
    RANK_OF,
    STEPS,
    SUIT_MASK,
    SUIT_OF,
    TIE,
    card_masks,
    end_of_trick,
    legal,
    popcount,
    pull,
    second_wins,
    trick,
    uncover,
)
from cardzoo.envs.rope_team.batched import observe, ridge_words
from cardzoo.envs.rope_team.observer import LAYOUT

from .rope_team_simple import BY_STEPS, LEAD_MEAN, RopeTeamSimple

_O = LAYOUT.offsets

Policy = Callable[[np.ndarray, np.ndarray], np.ndarray]  # obs[N, O], mask[N, A] -> actions[N]

NONE = NO_CARD  # an empty hand slot: a card id one past the deck
HAND = rules.HAND
_FULL = np.uint64(FULL_MASK)
_BAND = tuple(np.uint64(m) for m in BY_STEPS)  # cards by steps 0, 1, 2
_SUIT_SHIFT = np.array([0, 13, 26, 39], np.uint64)
_SUIT_BITS = np.uint64(0x1FFF)
_K3 = np.arange(3)


def _split_counts() -> np.ndarray:
    """int64[8192, 13, 6]: for the unseen ranks of a suit (13 bits) and a card's rank, how many unseen cards of
    0, 1, 2 steps rank above it (they would win the trick for the partner), then below it."""
    ranks = np.arange(13)
    bits = np.array([bin(p).count("1") for p in range(1 << 13)], np.int64)
    band = np.array([sum(1 << r for r in ranks if rules.RANK_STEPS[r] == k) for k in range(3)])
    above = ((1 << 13) - 1) & ~((2 << ranks) - 1)
    below = (1 << ranks) - 1
    sides = np.concatenate([above[:, None] & band, below[:, None] & band], axis=1)  # [13, 6] rank masks
    return bits[np.arange(1 << 13)[:, None, None] & sides[None]]


_SPLIT_COUNTS = _split_counts()


def _band_counts(masks: np.ndarray) -> np.ndarray:
    return np.stack([popcount(masks & b) for b in _BAND], axis=1)


_MIRROR = np.array([int(f"{u:09b}"[::-1], 2) for u in range(1 << rules.RIDGE)], np.int64)

# The simple strategy's landing scores, rows [partner wins, me wins] x steps 0..4, by (coin, face-up ridge, ropes)
# as the player to move sees them (its own end at 0). Filled on first use.
_N_KEYS = rules.RIDGE * (1 << rules.RIDGE) * 5
_LANDING = np.zeros((_N_KEYS, 2, 5))
_FILLED = np.zeros(_N_KEYS, bool)
_SIMPLE = RopeTeamSimple()


def _landing(keys: np.ndarray) -> np.ndarray:
    missing = keys[~_FILLED[keys]]
    if len(missing):
        for key in np.unique(missing).tolist():
            rest, ropes = divmod(key, 5)
            coin, up = divmod(rest, 1 << rules.RIDGE)
            _LANDING[key] = _SIMPLE.landing_values(coin, up, ropes)
            _FILLED[key] = True
    return _LANDING[keys]


def slots_of(masks: np.ndarray, width: int = HAND) -> np.ndarray:
    """int64[N, width]: the cards of each mask (all with the same number of cards), padded with ``NONE``."""
    n = len(masks)
    bits = np.unpackbits(np.ascontiguousarray(masks, np.uint64).view(np.uint8).reshape(n, 8), axis=1,
                         bitorder="little")
    rows, cards = np.nonzero(bits)
    size = len(cards) // n if n else 0
    out = np.full((n, width), NONE, np.int64)
    out[:, :size] = cards.reshape(n, size)
    return out


def masks_of(cards: np.ndarray) -> np.ndarray:
    """uint64[N]: the mask of each row of card ids (``NONE`` entries ignored)."""
    return card_masks(cards)


def _values(cards, hand, seen, coin, up, ropes, trumps, led, leading: bool) -> tuple[np.ndarray, np.ndarray]:
    """The simple strategy's legal cards (bool[N, 13]) and values (float[N, 13]) of the hand slots ``cards``, all
    rows leading or all following ``led``, from the mover's view: its ``hand``, the cards ``seen`` elsewhere this
    deal (played, face up on the ridge), the coin and the face-up positions as it counts them (its end at 0)."""
    at = np.arange(len(cards))
    held = cards < NONE
    rows = _landing((coin * (1 << rules.RIDGE) + up) * 5 + ropes)
    suit = SUIT_OF[cards]
    if not leading:
        allowed = legal(hand, led)[:, None] >> np.minimum(cards, 63).astype(np.uint64) & ONE == ONE
        me_wins = second_wins(led[:, None], cards, trumps[:, None])
        steps = STEPS[led][:, None] + STEPS[cards]
        return held & allowed, rows[at[:, None], me_wins.astype(np.int64), steps]
    unseen = _FULL & ~(hand | seen)
    # Unseen cards of the card's suit above and below it, by steps (the partner's replies that win / lose);
    # a suit with none unseen: all unseen cards, split by whether they trump the card.
    patterns = (unseen[:, None] >> _SUIT_SHIFT) & _SUIT_BITS
    counts = _SPLIT_COUNTS[patterns[at[:, None], np.minimum(suit, 3)], RANK_OF[cards]]  # [N, 13, 6]
    void = (counts.sum(axis=2) == 0)
    if void.any():
        trump_mask = SUIT_MASK[trumps]
        split = (trumps >= 0)[:, None] & (suit != trumps[:, None])
        trumping = _band_counts(unseen & trump_mask)  # [N, 3]
        others = _band_counts(unseen & ~trump_mask)
        everything = trumping + others
        fallback = np.where(split[:, :, None], np.concatenate([trumping, others], axis=1)[:, None, :],
                            np.concatenate([np.zeros_like(everything), everything], axis=1)[:, None, :])
        counts = np.where(void[:, :, None], fallback, counts)
    steps = STEPS[cards]
    flat = rows.reshape(-1)
    index = (at * 10)[:, None, None] + steps[:, :, None] + _K3
    scores = np.concatenate([flat[index], flat[index + 5]], axis=2)  # [N, 13, 6]: partner wins k, me wins k
    weight = counts.sum(axis=2)
    total = (counts * scores).sum(axis=2)
    top = np.where(counts > 0, scores, -np.inf).max(axis=2)
    mean = LEAD_MEAN * total / np.maximum(weight, 1)
    values = np.where(weight == 0, flat[(at * 10 + 5)[:, None] + steps], mean + (1 - LEAD_MEAN) * top)
    return held, values


class Games:
    """A batch of games in step. Build with :meth:`start`; ``play`` a card per row or ``choose`` the simple
    strategy's; ``outcome`` is 1 for a win, -1 for a loss, 0 while a game goes on."""

    def __init__(self, config: rules.Config, **arrays: np.ndarray):
        self.config = config
        for name, value in arrays.items():
            setattr(self, name, value)

    @classmethod
    def start(cls, state: rules.State, hands: np.ndarray, ridge: np.ndarray, future: np.ndarray | None) -> Games:
        """Rows that share ``state``'s public table and differ in the hidden cards: ``hands`` (uint64[N, 2]),
        ``ridge`` (int[N, 9], every position's card) and ``future`` (uint64[N, deals, 2]: the hands of each deal
        after the current one, in order; None if there is none). ``state``'s own hands and ridge are not used."""
        n = len(hands)
        up = sum(1 << i for i in range(rules.RIDGE) if state.up[i])
        ridge_up = np.bitwise_or.reduce(np.where(np.array(state.up), ONE << ridge.astype(np.uint64), np.uint64(0)),
                                        axis=1)
        full = lambda v: np.full(n, v, np.int64)  # noqa: E731
        width = rules.TRICKS_PER_DEAL - state.trick_no  # the cards each seat holds at the start of the trick
        slots = np.stack([slots_of(hands[:, 0], width), slots_of(hands[:, 1], width)], axis=1)
        return cls(
            state.config, hands=hands.astype(np.uint64), slots=slots, ridge=ridge.astype(np.int64),
            ridge_up=ridge_up, played=np.full(n, state.played[0] | state.played[1], np.uint64),
            played_by=np.tile(np.array(state.played, np.uint64), (n, 1)), up=full(up),
            coin=full(state.coin), trumps=full(state.trumps), ropes=full(state.ropes), leader=full(state.leader),
            led=full(-1 if state.led is None else state.led), trick_no=full(state.trick_no), deal=full(state.deal),
            dealer=full(state.dealer), uncovered=full(state.uncovered), outcome=np.zeros(n, np.int8),
            row=np.arange(n), future=future, next_future=0, results=np.zeros(n, np.int8),
        )

    def __len__(self) -> int:
        return len(self.coin)

    @property
    def leading(self) -> bool:
        return len(self.led) == 0 or self.led[0] < 0

    def mover(self) -> np.ndarray:
        return self.leader if self.leading else 1 - self.leader

    # ------------------------------------------------------------------ the simple strategy
    def values(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """For each row, the mover's hand slots (int[N, 13]), which are legal (bool) and the simple strategy's
        value of each (float; meaningless where not legal)."""
        at = np.arange(len(self))
        mover = self.mover()
        cards = self.slots[at, mover]
        coin = np.where(mover == 0, self.coin, rules.RIDGE - 1 - self.coin)
        up = np.where(mover == 0, self.up, _MIRROR[self.up])
        legal, values = _values(cards, self.hands[at, mover], self.played | self.ridge_up, coin, up, self.ropes,
                                self.trumps, self.led, self.leading)
        return cards, legal, values

    # ------------------------------------------------------------------ observations
    def observe(self) -> tuple[np.ndarray, np.ndarray]:
        """The mover's observation (int8[N, 464], as the env's) and action mask (int8[N, 52]) in every row."""
        at = np.arange(len(self))
        mover = self.mover()
        partner = 1 - mover
        hand = self.hands[at, mover]
        up = (self.up[:, None] >> np.arange(rules.RIDGE)) & 1 == 1
        words = ridge_words(self.ridge, up)[at, mover]
        obs = observe(self.config, mover, hand, self.hands[at, partner], self.played_by[at, mover],
                      self.played_by[at, partner], words, self.led, self.leader, self.coin, self.trumps, self.ropes,
                      self.deal, self.trick_no, self.dealer, mover, np.ones(len(at), bool))
        mask = np.unpackbits(legal(hand, self.led)[:, None].view(np.uint8), axis=1, count=52,
                             bitorder="little").view(np.int8)
        return obs, mask

    def choose(self) -> np.ndarray:
        """The simple strategy's card for the mover of every row."""
        cards, legal, values = self.values()
        return best_cards(cards, legal, values)

    # ------------------------------------------------------------------ the rules
    def play(self, cards: np.ndarray) -> None:
        """Play one card in every row (legal, for the mover); finished rows are dropped (see ``row``)."""
        n = len(self)
        at = np.arange(n)
        mover = self.mover()
        bit = ONE << cards.astype(np.uint64)
        self.hands[at, mover] &= ~bit
        self.played |= bit
        self.played_by[at, mover] |= bit
        self.slots[at, mover, np.argmax(self.slots[at, mover] == cards[:, None], axis=1)] = NONE
        if self.leading:
            self.led = cards.astype(np.int64)
            return
        winner, steps = trick(self.led, cards, self.leader, self.trumps)
        self.led = np.full(n, -1, np.int64)
        self.slots = np.sort(self.slots, axis=2)[:, :, :-1]  # both seats hold one card less: drop the empty slot
        self.trick_no += 1
        self.leader = winner
        self.coin, fall, moved = pull(self.coin, self.ropes, winner, steps, steps > 0)
        new, rows, cards = uncover(self.up, self.coin, moved, self.ridge, self.trumps, self.config.trumps)
        if len(rows):
            self.ridge_up[rows] |= ONE << cards.astype(np.uint64)
            self.uncovered += new
        win, end_of_deal, out_of_deals = end_of_trick(self.uncovered, new, fall, self.trick_no, self.deal,
                                                      self.config.max_deals)
        self.outcome[fall | out_of_deals] = -1
        self.outcome[win] = 1
        if (end_of_deal & ~out_of_deals).any():
            self._next_deal()
        if self.outcome.any():
            self.keep(self.outcome == 0)

    def _next_deal(self) -> None:
        """The rows' next hands (``future``): every row is at the same deal; rows that ended are dropped after."""
        hands = self.future[:, self.next_future]
        self.next_future += 1
        self.hands = hands.copy()
        self.slots = np.stack([slots_of(hands[:, 0]), slots_of(hands[:, 1])], axis=1)
        self.played = np.zeros(len(self), np.uint64)
        self.played_by = np.zeros((len(self), 2), np.uint64)
        self.deal += 1
        self.dealer = 1 - self.dealer
        self.leader = 1 - self.dealer
        self.trick_no[:] = 0

    # ------------------------------------------------------------------ rows
    _ROW_ARRAYS = ("hands", "slots", "ridge", "ridge_up", "played", "played_by", "up", "coin", "trumps", "ropes",
                   "leader", "led", "trick_no", "deal", "dealer", "uncovered", "outcome", "row", "future")

    def keep(self, rows: np.ndarray) -> None:
        """Keep only ``rows`` (a boolean mask or indices); the outcomes of finished rows go to ``results``."""
        done = self.outcome != 0
        self.results[self.row[done]] = self.outcome[done]
        for name in self._ROW_ARRAYS:
            value = getattr(self, name)
            if value is not None:
                setattr(self, name, value[rows])

    def play_out(self, policy: Policy | None = None) -> np.ndarray:
        """Play every row to its end, both seats by ``policy`` (a batched policy on the mover's observations and
        masks; None: the simple strategy on the rows' arrays, the fast path); int8[N] of 1 (win) / -1 (loss) by
        starting row."""
        while len(self):
            if policy is None:
                self.play(self.choose())
                continue
            obs, mask = self.observe()
            cards = np.asarray(policy(obs, mask))
            if cards.shape != (len(obs),) or not np.issubdtype(cards.dtype, np.integer):
                raise PolicyError(f"the rollouts' policy must return int[{len(obs)}] cards, one per observation; it "
                                  f"returned {cards.dtype}{list(cards.shape)}")
            legal = (cards >= 0) & (cards < 52)
            legal[legal] = mask[np.flatnonzero(legal), cards[legal]] == 1
            if not legal.all():
                raise PolicyError(f"the rollouts' policy chose illegal card(s) {cards[~legal][:5].tolist()}")
            self.play(cards)
        return self.results


def simple_policy(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """The simple strategy as a batched policy: ``RopeTeamSimple().act_bits`` of each row's observation
    (int8[N, 464]) and mask (int8[N, 52]), rows leading and following mixed."""
    n = len(obs)
    if obs.ndim != 2 or obs.shape[1] != LAYOUT.size or mask.shape != (n, 52):
        raise ValueError(f"simple_policy expects obs [N, {LAYOUT.size}] and mask [N, 52], got {obs.shape} and "
                         f"{mask.shape}")
    if n and not mask.any(axis=1).all():
        raise ValueError("simple_policy: a row's mask has no legal card (that player is not to move)")
    at = np.arange(n)
    hand, played_self, played_partner, led_bits = (_bits(obs, _O[k]) for k in
                                                   ("hand", "played_self", "played_partner", "led"))
    up = obs[:, _O["ridge_up"] : _O["ridge_up"] + rules.RIDGE] == 1
    rank = obs[:, _O["ridge_rank"] : _O["ridge_rank"] + 13 * rules.RIDGE].reshape(n, rules.RIDGE, 13).argmax(axis=2)
    suit = obs[:, _O["ridge_suit"] : _O["ridge_suit"] + 4 * rules.RIDGE].reshape(n, rules.RIDGE, 4).argmax(axis=2)
    ridge_up = np.bitwise_or.reduce(np.where(up, ONE << (13 * suit + rank).astype(np.uint64), np.uint64(0)), axis=1)
    up_bits = (up * (1 << np.arange(rules.RIDGE))).sum(axis=1)
    coin = obs[:, _O["coin"] : _O["coin"] + rules.RIDGE].argmax(axis=1)
    trumps = obs[:, _O["trumps"] : _O["trumps"] + 5].argmax(axis=1) - 1
    ropes = obs[:, LAYOUT["ropes"]].argmax(axis=1)
    leading = led_bits == 0
    led = np.where(leading, -1, obs[:, _O["led"] : _O["led"] + 52].argmax(axis=1))
    legal_bits = np.packbits(mask.view(np.uint8), axis=1, bitorder="little")
    cards = slots_of_any(np.pad(legal_bits, ((0, 0), (0, 1))).view("<u8")[:, 0])
    out = np.empty(n, np.int64)
    for rows, lead in ((np.flatnonzero(leading), True), (np.flatnonzero(~leading), False)):
        if len(rows):
            legal, values = _values(cards[rows], hand[rows], played_self[rows] | played_partner[rows] | ridge_up[rows],
                                    coin[rows], up_bits[rows], ropes[rows], trumps[rows], led[rows], lead)
            # the mask's cards are the legal ones: every held slot here is legal
            out[rows] = best_cards(cards[rows], legal & (cards[rows] < NONE), values)
    return out[at]


def _bits(obs: np.ndarray, offset: int) -> np.ndarray:
    """uint64[N]: the 52 entries of ``obs`` from ``offset`` on as card masks."""
    packed = np.packbits(obs[:, offset : offset + 52].view(np.uint8), axis=1, bitorder="little")  # [N, 7]
    return np.pad(packed, ((0, 0), (0, 1))).view("<u8")[:, 0]


def slots_of_any(masks: np.ndarray) -> np.ndarray:
    """int64[N, 13]: the cards of each mask (at most 13, any number per row), ascending, padded with ``NONE``."""
    bits = np.unpackbits(np.ascontiguousarray(masks, np.uint64).view(np.uint8).reshape(len(masks), 8), axis=1,
                         bitorder="little")[:, :52]
    order = np.argsort(~bits.astype(bool), axis=1, kind="stable")[:, :HAND]
    return np.where(np.take_along_axis(bits, order, axis=1) == 1, order, NONE)


def best_cards(cards: np.ndarray, legal: np.ndarray, values: np.ndarray) -> np.ndarray:
    """The highest-valued legal card of each row, ties to the lowest rank (as ``act_bits``)."""
    masked = np.where(legal, values, -np.inf)
    top = masked.max(axis=1, keepdims=True)
    key = np.where(legal & (masked == top), TIE[cards], 1 << 20)
    return cards[np.arange(len(cards)), np.argmin(key, axis=1)]
