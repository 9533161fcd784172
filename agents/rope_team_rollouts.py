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

Later deals cannot be drawn inside a row (the rules draw them from the game's generator); the caller gives each
row its later hands up front (``future``), which also lets every candidate card of one world meet the same later
deals.
"""

from __future__ import annotations

import numpy as np

from cardzoo.envs.common.cards import FULL_MASK, SUIT_MASKS
from cardzoo.envs.rope_team import rules
from cardzoo.envs.rope_team.batched import pull

from .rope_team_simple import _BY_STEPS, _HIGHER, LEAD_MEAN, RopeTeamSimple

NONE = 52  # an empty hand slot: a card id one past the deck
HAND = rules.HAND
_ONE = np.uint64(1)
_FULL = np.uint64(FULL_MASK)
_SUIT = np.array([c // 13 for c in range(52)] + [4], np.int64)
_STEP = np.array([*rules.STEPS, 0], np.int64)
_SUIT_MASK = np.array([SUIT_MASKS[c // 13] for c in range(52)] + [0], np.uint64)
_ABOVE = np.array([*_HIGHER, 0], np.uint64)  # cards of the same suit ranked above
_BAND = tuple(np.uint64(m) for m in _BY_STEPS)  # cards by steps 0, 1, 2
_TRUMP_MASK = np.array([*SUIT_MASKS, 0], np.uint64)  # by trumps; -1 (none) reads the last entry: no card
# Ties go to the lowest rank, then the first suit (act_bits scans cards in order and keeps a tie only if lower).
_TIE = np.array([4 * (c % 13) + c // 13 for c in range(52)] + [1000], np.int64)
_RANK = np.array([c % 13 for c in range(52)] + [0], np.int64)
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


_BYTE_COUNT = np.array([bin(b).count("1") for b in range(256)], np.int64)


def popcount(masks: np.ndarray) -> np.ndarray:
    """int64[...]: the number of cards in each uint64 mask (numpy < 2 has no bitwise_count)."""
    masks = np.ascontiguousarray(masks, np.uint64)
    return _BYTE_COUNT[masks.view(np.uint8).reshape(*masks.shape, 8)].sum(axis=-1)


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
            _LANDING[key] = _SIMPLE._landing_values(coin, up, ropes)
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
    bits = np.where(cards < NONE, _ONE << np.minimum(cards, 63).astype(np.uint64), np.uint64(0))
    return np.bitwise_or.reduce(bits, axis=-1)


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
        ridge_up = np.bitwise_or.reduce(np.where(np.array(state.up), _ONE << ridge.astype(np.uint64), np.uint64(0)),
                                        axis=1)
        full = lambda v: np.full(n, v, np.int64)  # noqa: E731
        width = rules.TRICKS_PER_DEAL - state.trick_no  # the cards each seat holds at the start of the trick
        slots = np.stack([slots_of(hands[:, 0], width), slots_of(hands[:, 1], width)], axis=1)
        return cls(
            state.config, hands=hands.astype(np.uint64), slots=slots, ridge=ridge.astype(np.int64),
            ridge_up=ridge_up, played=np.full(n, state.played[0] | state.played[1], np.uint64), up=full(up),
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
        n = len(self)
        at = np.arange(n)
        mover = self.mover()
        cards = self.slots[at, mover]
        held = cards < NONE
        coin = np.where(mover == 0, self.coin, rules.RIDGE - 1 - self.coin)
        up = np.where(mover == 0, self.up, _MIRROR[self.up])
        rows = _landing((coin * (1 << rules.RIDGE) + up) * 5 + self.ropes)
        suit = _SUIT[cards]
        if not self.leading:
            led = self.led
            same = suit == _SUIT[led][:, None]
            legal = held & same
            legal |= held & ~legal.any(axis=1)[:, None]
            me_wins = np.where(same, cards > led[:, None], suit == self.trumps[:, None])
            steps = _STEP[led][:, None] + _STEP[cards]
            return cards, legal, rows[at[:, None], me_wins.astype(np.int64), steps]
        hand = self.hands[at, mover]
        unseen = _FULL & ~(hand | self.played | self.ridge_up)
        # Unseen cards of the card's suit above and below it, by steps (the partner's replies that win / lose);
        # a suit with none unseen: all unseen cards, split by whether they trump the card.
        patterns = (unseen[:, None] >> _SUIT_SHIFT) & _SUIT_BITS
        counts = _SPLIT_COUNTS[patterns[at[:, None], np.minimum(suit, 3)], _RANK[cards]]  # [N, 13, 6]
        void = (counts.sum(axis=2) == 0)
        if void.any():
            trump_mask = _TRUMP_MASK[self.trumps]
            split = (self.trumps >= 0)[:, None] & (suit != self.trumps[:, None])
            trumping = _band_counts(unseen & trump_mask)  # [N, 3]
            others = _band_counts(unseen & ~trump_mask)
            everything = trumping + others
            fallback = np.where(split[:, :, None], np.concatenate([trumping, others], axis=1)[:, None, :],
                                np.concatenate([np.zeros_like(everything), everything], axis=1)[:, None, :])
            counts = np.where(void[:, :, None], fallback, counts)
        steps = _STEP[cards]
        flat = rows.reshape(-1)
        index = (at * 10)[:, None, None] + steps[:, :, None] + _K3
        scores = np.concatenate([flat[index], flat[index + 5]], axis=2)  # [N, 13, 6]: partner wins k, me wins k
        weight = counts.sum(axis=2)
        total = (counts * scores).sum(axis=2)
        top = np.where(counts > 0, scores, -np.inf).max(axis=2)
        mean = LEAD_MEAN * total / np.maximum(weight, 1)
        values = np.where(weight == 0, flat[(at * 10 + 5)[:, None] + steps], mean + (1 - LEAD_MEAN) * top)
        return cards, held, values

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
        bit = _ONE << cards.astype(np.uint64)
        self.hands[at, mover] &= ~bit
        self.played |= bit
        self.slots[at, mover, np.argmax(self.slots[at, mover] == cards[:, None], axis=1)] = NONE
        if self.leading:
            self.led = cards.astype(np.int64)
            return
        led, leader = self.led, self.leader
        same = _SUIT[led] == _SUIT[cards]
        leader_wins = np.where(same, led > cards, _SUIT[cards] != self.trumps)
        winner = np.where(leader_wins, leader, 1 - leader)
        steps = _STEP[led] + _STEP[cards]
        self.led = np.full(n, -1, np.int64)
        self.slots = np.sort(self.slots, axis=2)[:, :, :-1]  # both seats hold one card less: drop the empty slot
        self.trick_no += 1
        self.leader = winner
        self.coin, fall, moved = pull(self.coin, self.ropes, winner, steps, steps > 0)
        new = moved & ((self.up >> self.coin) & 1 == 0)
        if new.any():
            card = self.ridge[at, self.coin]
            self.up = np.where(new, self.up | (1 << self.coin), self.up)
            self.ridge_up = np.where(new, self.ridge_up | (_ONE << card.astype(np.uint64)), self.ridge_up)
            if self.config.trumps:
                self.trumps = np.where(new, _SUIT[card], self.trumps)
            self.uncovered += new
        self.outcome[fall] = -1
        self.outcome[self.uncovered == rules.RIDGE - 1] = 1
        if self.trick_no[0] == rules.TRICKS_PER_DEAL:
            self._next_deal()
        if self.outcome.any():
            self.keep(self.outcome == 0)

    def _next_deal(self) -> None:
        going = self.outcome == 0
        if self.deal[0] == self.config.max_deals:
            self.outcome[going] = -1
            return
        hands = self.future[:, self.next_future]
        self.next_future += 1
        self.hands = hands.copy()
        self.slots = np.stack([slots_of(hands[:, 0]), slots_of(hands[:, 1])], axis=1)
        self.played = np.zeros(len(self), np.uint64)
        self.deal += 1
        self.dealer = 1 - self.dealer
        self.leader = 1 - self.dealer
        self.trick_no[:] = 0

    # ------------------------------------------------------------------ rows
    _ROW_ARRAYS = ("hands", "slots", "ridge", "ridge_up", "played", "up", "coin", "trumps", "ropes", "leader", "led",
                   "trick_no", "deal", "dealer", "uncovered", "outcome", "row", "future")

    def keep(self, rows: np.ndarray) -> None:
        """Keep only ``rows`` (a boolean mask or indices); the outcomes of finished rows go to ``results``."""
        done = self.outcome != 0
        self.results[self.row[done]] = self.outcome[done]
        for name in self._ROW_ARRAYS:
            value = getattr(self, name)
            if value is not None:
                setattr(self, name, value[rows])

    def play_out(self) -> np.ndarray:
        """Play every row to its end with the simple strategy; int8[N] of 1 (win) / -1 (loss) by starting row."""
        while len(self):
            self.play(self.choose())
        return self.results


def best_cards(cards: np.ndarray, legal: np.ndarray, values: np.ndarray) -> np.ndarray:
    """The highest-valued legal card of each row, ties to the lowest rank (as ``act_bits``)."""
    masked = np.where(legal, values, -np.inf)
    top = masked.max(axis=1, keepdims=True)
    key = np.where(legal & (masked == top), _TIE[cards], 1 << 20)
    return cards[np.arange(len(cards)), np.argmin(key, axis=1)]
