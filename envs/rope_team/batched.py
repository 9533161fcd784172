"""Rope Team, batched: N games of ``rope_team_v0`` stepped together with numpy array operations.

The array form of :mod:`cardzoo.envs.rope_team.rules` (which stays the statement of the rules) and of the observer:
for the same seed and the same actions, every observation, mask, reward and outcome equals the single env's, bit
for bit. The rule steps themselves (trick, pull, uncover, end of trick, next deal) are those of
:mod:`cardzoo.envs.rope_team.arrays`, shared with the search agent's rollouts; this module keeps the games' state,
the observation words, rewards and records. The protocol (reset, step, the seed stream, records, illegal actions)
is :mod:`cardzoo.envs.batched`'s::

    from cardzoo.envs.batched import make_batched
    eng = make_batched("rope_team_v0", num_envs=4096, level="hard")
    obs, mask, seat = eng.reset(seeds=0)                         # int8[N, 464], int8[N, 52], int64[N]
    obs, mask, seat, rewards, done = eng.step(actions)          # rewards float64[N, 2]

Options are the single env's (``level``, ``ropes``, ``trumps``, ``max_deals``, ``open_hands``, ``shaping``,
``illegal_action``; the render options do not apply). Outcomes: ``outcomes[eng.outcome[i]]`` is "win", "fall",
"out_of_deals" or "illegal"; ``finished_info(i)`` is the single env's final ``infos`` entry for the last game that
ended in slot ``i``. Every step is one card played in every game, by the seat to move.

State. One row per game: hands and played cards as 52-bit masks in ``uint64`` (as the rules' Python ints), the
ridge, the coin, trumps, ropes and the trick in small integer arrays. The observation is assembled as eight 64-bit
words per game (bit ``i`` = entry ``i``, as the single observer builds one Python int) and unpacked once. The
face-up ridge part of each seat's words changes only when a card is uncovered, so it is kept between steps.

Deals. Each game's deals are ``np.random.default_rng(seed).permutation(52)``, drawn once per deal as the rules
draw them (the first is the deck, later ones are reshuffles of the 43 cards off the ridge), computed for many
seeds at once by :mod:`cardzoo.envs.common.generators` a block of seeds ahead of need.

Speed, and numpy over numba or JAX. Decisions per CPU-second against N and against the single env's loop, random
legal play with the observation and mask read at every decision: ``evaluation/results/batched/`` (made by
``python -m cardzoo.evaluation.benchmarks.batched engine``; the speed page of the docs shows them). The step itself
is whole-array numpy operations (play, trick, pull, deal) plus the observation words; numba was measured only where
a per-game loop is unavoidable, the deals' shuffles, where compiled code is an order of magnitude faster per game
and lifted the whole engine in back-to-back runs; so deals use numba when it is installed, and the rest stays
numpy.
JAX was not tried: the whole engine would have to become traced functions, for a CPU-only project.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..batched import BatchedEnv, SeedBlocks
from ..common.generators import permutations
from ..common.options import number, reject_unknown
from . import rules
from .arrays import ONE as _ONE
from .arrays import card_masks, end_of_trick, legal, next_cards, pull, split_hands, trick, uncover
from .env import AGENTS, CONFIG_OPTIONS, make_config
from .observer import LAYOUT

_O = LAYOUT.offsets
_TAIL = _O["coin"]  # the pieces from "coin" on fit in words 6 and 7: built as one 64-bit value
_TAIL_SHIFT = _TAIL - 384
_WORDS = 8


def _ridge_words() -> np.ndarray:
    """uint64[2, 9, 52, 8]: the observation bits (ridge_up, rank, suit) of card c face up at absolute position
    ``pos``, as seat ``s`` sees it (position counted from the viewer's own end)."""
    out = np.zeros((2, rules.RIDGE, 52, _WORDS), np.uint64)
    for seat in (0, 1):
        for pos in range(rules.RIDGE):
            view = pos if seat == 0 else rules.RIDGE - 1 - pos
            for card in range(52):
                for bit in (_O["ridge_up"] + view, _O["ridge_rank"] + 13 * view + card % 13,
                            _O["ridge_suit"] + 4 * view + card // 13):
                    out[seat, pos, card, bit >> 6] |= np.uint64(1 << (bit & 63))
    return out


_RIDGE_WORDS = _ridge_words()


def _place(words: np.ndarray, value: np.ndarray, offset: int) -> None:
    """OR the bits of ``value`` (uint64, at most 64 bits used) into ``words`` from bit ``offset`` on."""
    word, shift = offset >> 6, offset & 63
    words[:, word] |= value << np.uint64(shift)
    if shift:
        words[:, word + 1] |= value >> np.uint64(64 - shift)


def ridge_words(ridge: np.ndarray, up: np.ndarray) -> np.ndarray:
    """uint64[N, 2, 8]: the face-up ridge part of each seat's observation words, from every position's card
    (int[N, 9]) and which are face up (bool[N, 9])."""
    words = _RIDGE_WORDS[:, np.arange(rules.RIDGE), np.where(up, ridge, 0)]  # [2, N, 9, 8]
    return np.bitwise_or.reduce(np.where(up[None, :, :, None], words, np.uint64(0)), axis=2).transpose(1, 0, 2)


def observe(config: rules.Config, seats, hand, partner_hand, played_self, played_partner, ridge_seat_words, led,
            leader, coin, trumps, ropes, deal, trick_no, dealer, to_move, in_play) -> np.ndarray:
    """int8[k, 464]: the observer's ``observe_bits`` of ``seats`` (int[k]) from the game's arrays, one row each:
    the seat's hand and the partner's, each seat's played cards (uint64 masks), the seat's ridge words (see
    :func:`ridge_words`), the card led (-1: none), the trick's leader, the coin (absolute), trumps, ropes, deal,
    trick, dealer, the seat to move and whether the game goes on."""
    k = len(seats)
    words = np.zeros((k, _WORDS), np.uint64)
    _place(words, hand, _O["hand"])
    if config.open_hands:
        _place(words, partner_hand, _O["partner_hand"])
    _place(words, played_self, _O["played_self"])
    _place(words, played_partner, _O["played_partner"])
    has_led = led >= 0
    _place(words, np.where(has_led, _ONE << np.maximum(led, 0).astype(np.uint64), 0), _O["led"])
    words |= ridge_seat_words
    coin = np.where(seats == 0, coin, rules.RIDGE - 1 - coin)
    # the pieces from "coin" on, as one value whose bit 0 is the observation's entry _TAIL
    tail = (_ONE << coin.astype(np.uint64)) | np.uint64(sum(
        1 << (_O[k] - _TAIL) for k, on in (("trumps_rule", config.trumps), ("open_hands", config.open_hands)) if on))
    for piece, value in (("trumps", trumps + 1), ("ropes", ropes), ("deal", deal - 1),
                         ("trick", np.minimum(trick_no, rules.TRICKS_PER_DEAL - 1))):
        tail |= _ONE << (value + (_O[piece] - _TAIL)).astype(np.uint64)
    for piece, on in (("last_deal", deal == config.max_deals), ("self_dealt", dealer == seats),
                      ("self_leads", leader == seats), ("self_to_move", (to_move == seats) & in_play)):
        tail |= on.astype(np.uint64) << np.uint64(_O[piece] - _TAIL)
    _place(words, tail, _TAIL)
    led_by_self = has_led & (leader == seats)
    words[:, _O["led_by_self"] >> 6] |= led_by_self.astype(np.uint64) << np.uint64(_O["led_by_self"] & 63)
    return np.unpackbits(words.view(np.uint8), axis=1, count=LAYOUT.size, bitorder="little").view(np.int8)


class RopeTeamBatched(BatchedEnv):
    """See the module docstring."""

    env_name = "rope_team_v0"
    possible_agents = AGENTS
    observation_size = LAYOUT.size
    num_actions = 52
    max_decisions = 2 * rules.TRICKS_PER_DEAL * 3
    outcomes = (rules.WIN, rules.FALL, rules.OUT_OF_DEALS, "illegal")
    env_options = (*CONFIG_OPTIONS, "shaping", "illegal_action")

    def __init__(self, num_envs: int, **options: Any):
        # the game's options are checked first: the base class copies them all into the records' options
        reject_unknown(options, self.env_options, "option")
        game = {k: options[k] for k in CONFIG_OPTIONS if k in options}
        self.config = cfg = make_config(**game)
        self.shaping = number("shaping", options.get("shaping", 0.0))
        super().__init__(num_envs, options)
        n = self.num_envs
        self._pair = self._slots * 2  # index of seat 0's entry in the flattened [N, 2] arrays
        self.hands = np.zeros((n, 2), np.uint64)
        self.played = np.zeros((n, 2), np.uint64)
        self.aside = np.zeros(n, np.uint64)
        self.ridge = np.zeros((n, rules.RIDGE), np.int64)
        self.on_ridge = np.zeros(n, np.uint64)
        self.up_mask = np.zeros(n, np.int64)  # face-up ridge positions, bit p = position p
        self.ridge_words = np.zeros((n, 2, _WORDS), np.uint64)  # the face-up ridge part of each seat's observation
        self.decks = np.zeros((n, cfg.max_deals, 52), np.int8)  # each game's permutations, one per deal
        for name in ("coin", "trumps", "ropes", "deal", "dealer", "leader", "to_move", "led", "trick_no",
                     "uncovered", "win_deal"):
            setattr(self, name, np.zeros(n, np.int64))
        self.legal_bits = np.zeros(n, np.uint64)
        # the last ended game of each slot: its summary for finished_info()
        self._end = {k: np.zeros(n, np.int64) for k in ("win_deal", "uncovered", "ropes_used", "deals", "tricks")}
        self._decks = SeedBlocks(lambda seeds: permutations(seeds, 52, cfg.max_deals), block=min(max(n, 1024), 8192))
        self.over = np.zeros(n, bool)  # the rules' outcome is set (the game ended by its rules)

    @property
    def up(self) -> np.ndarray:
        """bool[N, 9]: which ridge positions are face up."""
        return (self.up_mask[:, None] >> np.arange(rules.RIDGE)) & 1 == 1

    # ----------------------------------------------------------------- dealing
    def _start(self, slots: np.ndarray, seeds: np.ndarray) -> None:
        decks = self._decks.take(seeds)
        self.decks[slots] = decks
        deck = decks[:, 0].astype(np.int64)
        self.ridge[slots] = deck[:, : rules.RIDGE]
        self.on_ridge[slots] = card_masks(deck[:, : rules.RIDGE])
        self.up_mask[slots] = 1 << rules.CAMP
        self.ridge_words[slots] = _RIDGE_WORDS[[[0], [1]], rules.CAMP, deck[:, rules.CAMP]].transpose(1, 0, 2)
        self.coin[slots] = rules.CAMP
        self.trumps[slots] = rules.NO_TRUMPS
        self.ropes[slots] = self.config.ropes
        self.deal[slots] = 1
        self.uncovered[slots] = 0
        self.over[slots] = False
        self.dealer[slots] = 0  # _deal_hands passes the deal to the other seat: player_1 deals the first
        self._deal_hands(slots, deck[:, rules.RIDGE :])

    def _deal_hands(self, slots: np.ndarray, rest: np.ndarray) -> None:
        """Hand out ``rest`` (int[k, 43], the cards off the ridge in dealing order) and pass the deal on."""
        self.hands[slots, 0], self.hands[slots, 1], self.aside[slots] = split_hands(rest)
        self.played[slots] = 0
        dealer = 1 - self.dealer[slots]
        self.dealer[slots] = dealer
        self.leader[slots] = self.to_move[slots] = 1 - dealer
        self.trick_no[slots] = 0
        self.led[slots] = -1

    def _next_deal(self, slots: np.ndarray) -> None:
        """rules._end_of_deal for games going on: the next permutation, less the ridge's cards, dealt in order."""
        self.deal[slots] += 1
        perm = self.decks[slots, self.deal[slots] - 1].astype(np.int64)
        self._deal_hands(slots, next_cards(perm, self.on_ridge[slots]))

    # ----------------------------------------------------------------- playing
    def _legal(self, actions: np.ndarray) -> np.ndarray:
        return (self.legal_bits >> actions.astype(np.uint64)) & _ONE == 1

    def _play(self, actions: np.ndarray):
        n = self.num_envs
        card = actions
        bit = _ONE << card.astype(np.uint64)
        mover = self.to_move.copy()
        at = self._pair + mover
        hands, played = self.hands.reshape(-1), self.played.reshape(-1)
        hands[at] &= ~bit
        played[at] |= bit
        led = self.led
        lead = led < 0
        # a card led: the other seat follows
        self.to_move[lead] = 1 - mover[lead]
        # a card followed: the trick is decided (rows that led get a winner and steps too, unused)
        winner, steps = trick(led, card, self.leader, self.trumps)
        follow = ~lead
        self.led = np.where(lead, card, -1)
        self.trick_no += follow
        self.leader = np.where(follow, winner, self.leader)
        self.to_move = np.where(follow, winner, self.to_move)
        # the pull (rules._pull): only a trick with steps moves the coin
        self.coin, fall, moved = pull(self.coin, self.ropes, winner, steps, follow & (steps > 0))
        uncovered, newly, ridge_card = uncover(self.up_mask, self.coin, moved, self.ridge, self.trumps,
                                               self.config.trumps)
        if len(newly):
            pos = self.coin[newly]
            self.ridge_words[newly, 0] |= _RIDGE_WORDS[0, pos, ridge_card]
            self.ridge_words[newly, 1] |= _RIDGE_WORDS[1, pos, ridge_card]
        self.uncovered += uncovered
        win, end_of_deal, out_of_deals = end_of_trick(self.uncovered, uncovered, fall, self.trick_no, self.deal,
                                                      self.config.max_deals)
        self.win_deal[win] = self.deal[win]
        outcome = np.full(n, -1, np.int8)
        outcome[win] = 0
        outcome[fall] = 1
        outcome[out_of_deals] = 2
        over = outcome >= 0
        self.over |= over
        self._keep_summary(np.flatnonzero(over), win)
        deal_on = np.flatnonzero(end_of_deal & ~out_of_deals)
        if len(deal_on):
            self._next_deal(deal_on)
        reward = self.shaping * uncovered + np.where(win, 1.0, np.where(over, -1.0, 0.0))
        return np.stack([reward, reward], axis=1), outcome, np.zeros(n, bool)

    def _illegal_rewards(self, seats: np.ndarray) -> np.ndarray:
        return np.full((len(seats), 2), -1.0)  # a cooperative team loses together, as in the single env

    def _keep_summary(self, ended: np.ndarray, win: np.ndarray) -> None:
        end = self._end
        end["win_deal"][ended] = np.where(win[ended], self.win_deal[ended], 0)
        end["uncovered"][ended] = self.uncovered[ended]
        end["ropes_used"][ended] = self.config.ropes - self.ropes[ended]
        end["deals"][ended] = self.deal[ended]
        end["tricks"][ended] = (self.deal[ended] - 1) * rules.TRICKS_PER_DEAL + self.trick_no[ended]

    def _finished_info(self, slot: int) -> dict[str, Any]:
        info = {k: int(v[slot]) for k, v in self._end.items()}
        info["win_deal"] = info["win_deal"] or None
        return info

    # ----------------------------------------------------------------- observing
    def _observe(self, slots: np.ndarray, seats: np.ndarray) -> np.ndarray:
        """The observer's ``observe_bits`` for ``seats`` in ``slots``, as int8 rows."""
        pair = slots * 2
        hands, played = self.hands.reshape(-1), self.played.reshape(-1)
        return observe(self.config, seats, hands[pair + seats], hands[pair + 1 - seats], played[pair + seats],
                       played[pair + 1 - seats], self.ridge_words.reshape(-1, _WORDS)[pair + seats], self.led[slots],
                       self.leader[slots], self.coin[slots], self.trumps[slots], self.ropes[slots], self.deal[slots],
                       self.trick_no[slots], self.dealer[slots], self.to_move[slots], ~self.over[slots])

    def _current(self):
        hand = self.hands.reshape(-1)[self._pair + self.to_move]
        self.legal_bits = legal(hand, self.led)
        mask = np.unpackbits(self.legal_bits[:, None].view(np.uint8), axis=1, count=52,
                             bitorder="little").view(np.int8)
        obs = self._observe(self._slots, self.to_move)
        return obs, mask, self.to_move.copy()
