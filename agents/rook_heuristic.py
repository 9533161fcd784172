"""A heuristic Rook for Two player: hand-strength bidding, card counting, cheap wins and cheap losses.

The agent acts on its own observation only (the labelled vector of ``cardzoo.envs.rook.observer``) and keeps no
memory between moves, so the same observation always gives the same action. Everything it knows about the cards
comes from the vector: its hand, the cards both players have played this round, the face-up card, the face-up cards
the opponent is known to hold and, as bid winner, the Nest and its own discards. The cards it cannot place are
*unseen*: the opponent holds some of them, the rest lie in the draw pile (or, for the non-bidder, among the
discards).

**Card values.** Two numbers drive every choice. The *keep value* of a card is what it is worth to still hold it
later: trumps are worth most (they win tricks of any suit and take the points in them), more for higher trumps,
more for the highest trump still out (the *master*) and more when the opponent may hold at least as many trumps;
off-suit cards are worth their rank above the 9, plus a bonus when no unseen card of the suit beats them. The
*draw value* adds half the card's points to the keep value (points in one's own hand tend to end in one's own
tricks).

**Bidding.** For each suit as trumps the agent estimates the points it would take as bid winner (card points plus
the 20 for most tricks) from its eleven cards: a base, plus per trump (the Rook counted), per high trump (J, Q, K,
A), for holding the Rook, per off-suit Ace and per card point in hand. The weights (``BID_WEIGHTS``) are a least
squares fit, by :func:`fit_bid_weights`, on 10,000 heuristic-against-heuristic rounds in which this agent won the
bid at 50 (residual spread about 25 points: the Nest and the twenty drawn cards change a hand a lot). Its *limit*
is that estimate, for the best suit, minus a margin of 10 points, rounded down to a multiple of 5 (margins of 5
and 10 did best in a self-play sweep of 0 to 20; the differences were within noise). It bids the lowest legal
amount while that amount is within the limit and passes above it; the opening bid is compulsory, so with a limit
under 50 it opens at 50. It never jumps.

**Trumps.** The suit with the best score: 1 per card plus 0.35 per rank step above the 9 (so length first, then
high cards). The Rook joins whichever suit is named, so it does not change the choice.

**Discards.** The non-point card with the lowest keep value, counting a trump as worth keeping at any rank and a card
of a short side suit as cheaper to drop (emptying a side suit lets the bid winner trump it later).

**Play.** Every legal card gets a score, the best one is played:

- *second to the trick*: the outcome is certain, so a card that wins scores ``+(points in the trick + trick
  value)`` and one that loses ``-(points in the trick + trick value)``, minus the card's keep value. The *trick
  value* is what winning the trick is worth besides its points: 4 for its share of the 20 for most tricks (until
  a player has 11 of the 21 tricks), 2 for the draw choice (while a face-up card waits) and 2 for the lead. So it
  wins tricks with points cheaply (a point card that wins takes its own points: trumping with the Rook or the
  trump 5 is a favourite), wins in suit with the cheapest card that does it, follows low and without points when
  it cannot win, and throws its cheapest card when it cannot or will not win. It trumps even an empty trick with a
  low trump when void in the suit led (valuing tricks this highly did better in self-play than half as much);
- *leading*: the agent estimates the chance ``p`` that the opponent cannot beat the card from the unseen cards and
  the opponent's hand size (hypergeometric: she holds none of the higher cards of the suit, and is not void in the
  suit with a trump to spare; cards she is known to hold count for sure), and scores ``p (points + trick value)
  - (1 - p) (points + REPLY_POINTS + trick value)`` minus the keep value. So it cashes sure winners with points, leads
  its master trump (more readily when it holds more trumps than are unseen, since trumps are then cheaper to
  keep), never leads the Rook into trumps it cannot see, and otherwise leads its cheapest card, a low one
  without points.

**Draw.** The trick winner takes the face-up card when its draw value is at least the mean draw value of the unseen
cards (what the hidden card is on average), else the hidden card. The choice is symmetric: the opponent gets the
other card.
"""

from __future__ import annotations

import numpy as np

from cardzoo.envs.common.cards import SUIT_MASKS, cards_of
from cardzoo.envs.rook.observer import Observation, decode
from cardzoo.envs.rook.rules import (
    BID0,
    BID_STEP,
    DECK_MASK,
    MIN_BID,
    N_CARDS,
    PASS,
    POINT_MASK,
    POINTS,
    ROOK,
    ROOK_BIT,
    TAKE_HIDDEN,
    TAKE_UP,
    TRICKS,
    TRUMP0,
    second_wins,
)  # fmt: skip

from .base import BitsAgent

# Phases as the observation's one-hot "phase" piece gives them.
BID, TRUMP, DISCARD, PLAY, DRAW = range(5)

# Bid estimate: points as bid winner ~ w0 + w1 trumps + w2 high trumps + w3 Rook + w4 off-suit Aces + w5 card
# points in hand, for the best trump suit of the eleven dealt cards: ``fit_bid_weights(10_000)``, rounded.
BID_WEIGHTS = (47.5, 5.2, 5.2, 0.1, 6.3, 0.18)
BID_MARGIN = 10  # points below the estimate where the agent stops bidding

# Play values, in points. Set by hand, then the trick values and SIDE_RANK raised after self-play comparisons.
# Value of winning a trick besides its points: its share of the 20 for most tricks (until a player has 11 tricks),
# the draw choice (while a face-up card waits) and the lead.
TRICK_MOST, TRICK_DRAW, TRICK_LEAD = 4.0, 2.0, 2.0
REPLY_POINTS = 3.0  # points the opponent is expected to add to a trick she wins over the agent's lead
TRUMP_KEEP = 5.0  # keep value of any trump
TRUMP_RANK = 0.4  # per rank step of a trump
MASTER_TRUMP = 2.0  # the highest trump still out
SHORT_OF_TRUMPS = 3.0  # extra keep value of a trump when the unseen trumps are at least as many as the agent's
SIDE_RANK = 1.0  # per rank step above the 9 of a side-suit card
SIDE_MASTER = 1.5  # a side-suit card no unseen card beats

# Rank index of each card (2..12 for 4..A; the Rook is handled apart), and the cards above it in its own suit.
_RANK = tuple(c % 13 for c in range(N_CARDS))
_ABOVE = tuple(SUIT_MASKS[c // 13] & ~((2 << c) - 1) & DECK_MASK if c < 52 else 0 for c in range(N_CARDS))
_HIGH_CARDS = tuple(sum(1 << (s * 13 + r) for r in (9, 10, 11, 12)) for s in range(4))  # J Q K A
_ACES = tuple(1 << (s * 13 + 12) for s in range(4))


def _none_held(n_specific: int, pool: int, drawn: int) -> float:
    """Chance that ``drawn`` cards taken at random from ``pool`` include none of ``n_specific`` given ones."""
    if n_specific <= 0:
        return 1.0
    if drawn <= 0:
        return 1.0
    p = 1.0
    for i in range(drawn):
        if pool - i <= 0:
            break
        p *= max(0.0, (pool - n_specific - i) / (pool - i))
        if p == 0.0:
            break
    return p


def trump_score(hand: int, suit: int) -> float:
    """How good a trump suit ``suit`` makes: length first, then high cards."""
    cards = hand & SUIT_MASKS[suit]
    return cards.bit_count() + 0.35 * sum(max(0, _RANK[c] - 7) for c in cards_of(cards))


def best_trumps(hand: int) -> int:
    return max(range(4), key=lambda s: (trump_score(hand, s), -s))


def bid_features(hand: int, suit: int) -> tuple[float, ...]:
    """Features of a dealt hand with ``suit`` as trumps: (1, trumps incl. the Rook, J-A of trumps, Rook, off-suit
    Aces, card points)."""
    trumps = hand & SUIT_MASKS[suit]
    rook = 1 if hand & ROOK_BIT else 0
    off_aces = sum(1 for s in range(4) if s != suit and hand & _ACES[s])
    points = sum(POINTS[c] for c in cards_of(hand & POINT_MASK))
    return (1.0, trumps.bit_count() + rook, (trumps & _HIGH_CARDS[suit]).bit_count(), rook, off_aces, points)


def estimate_points(hand: int) -> float:
    """Points this agent expects to take as bid winner with ``hand`` (best trump suit)."""
    feats = bid_features(hand, best_trumps(hand))
    return sum(w * f for w, f in zip(BID_WEIGHTS, feats, strict=True))


def bid_limit(hand: int) -> int:
    """The highest amount the agent bids with ``hand`` (a multiple of 5; under 50 means it passes when it may)."""
    value = estimate_points(hand) - BID_MARGIN
    return int(value // BID_STEP) * BID_STEP


class RookHeuristic(BitsAgent):
    """The heuristic player for either seat (observations are seat-relative)."""

    name = "heuristic"

    def __init__(self, seed: int | None = None):
        pass

    def reset(self, seed: int | None = None) -> None:
        pass  # no memory and no randomness

    # ------------------------------------------------------------------ decision
    def act_bits(self, bits: int, legal: int, size: int | None = None, n_actions: int | None = None) -> int:
        if not legal:
            raise ValueError("the action mask has no legal action: this agent is not to move")
        obs = decode(bits)
        phase, hand = obs.phase, obs.hand
        if phase == BID:
            return self._bid(bits, hand, legal)
        if phase == TRUMP:
            return TRUMP0 + best_trumps(hand)
        view = _View(obs)
        if phase == DISCARD:
            return self._discard(view, legal)
        if phase == DRAW:
            return self._draw(view)
        if phase == PLAY:
            if view.led >= 0:
                return self._follow(view, legal)
            return self._lead(view, legal)
        return next(cards_of(legal))  # not reached: every phase is handled

    def _bid(self, bits: int, hand: int, legal: int) -> int:
        limit = bid_limit(hand)
        lowest = next(a for a in cards_of(legal) if a != PASS)
        amount = MIN_BID + (lowest - BID0) * BID_STEP
        if amount <= limit or not legal >> PASS & 1:
            return lowest
        return PASS

    def _discard(self, view: _View, legal: int) -> int:
        def keep(c: int) -> float:
            if view.is_trump(c):
                return 100.0 + view.keep(c)
            return view.keep(c) + 0.3 * (view.hand & SUIT_MASKS[c // 13]).bit_count() + 0.2 * POINTS[c]

        return min(cards_of(legal), key=lambda c: (keep(c), c))

    def _draw(self, view: _View) -> int:
        if view.face_up < 0:
            return TAKE_HIDDEN  # not reached: a draw always has a face-up card
        pool = list(cards_of(view.unseen))
        mean = sum(view.draw_value(c) for c in pool) / len(pool) if pool else 0.0
        return TAKE_UP if view.draw_value(view.face_up) >= mean else TAKE_HIDDEN

    def _follow(self, view: _View, legal: int) -> int:
        led = view.led
        trumps = view.trumps
        best, best_score = -1, -float("inf")
        for c in cards_of(legal):
            stake = POINTS[led] + POINTS[c] + view.trick
            score = (stake if second_wins(led, c, trumps) else -stake) - view.keep(c)
            if score > best_score:
                best, best_score = c, score
        return best

    def _lead(self, view: _View, legal: int) -> int:
        best, best_score = -1, -float("inf")
        for c in cards_of(legal):
            p = view.lead_wins(c)
            t = view.trick
            score = p * (POINTS[c] + t) - (1.0 - p) * (POINTS[c] + REPLY_POINTS + t) - view.keep(c)
            if score > best_score:
                best, best_score = c, score
        return best


class _View:
    """What one decision needs from the observation: the cards by where they are, and card values."""

    __slots__ = ("hand", "trumps", "trump_mask", "led", "face_up", "opp_known", "unseen", "opp_hand_size",
                 "my_trumps", "unseen_trumps", "master_trump", "short_of_trumps", "trick")

    def __init__(self, obs: Observation):
        self.hand = hand = obs.hand
        self.trumps = obs.trumps
        self.trump_mask = SUIT_MASKS[self.trumps] | ROOK_BIT if self.trumps >= 0 else 0
        led = obs.led
        self.led = led.bit_length() - 1
        up = obs.face_up
        self.face_up = up.bit_length() - 1
        self.opp_known = obs.opp_known
        played = obs.played_self | obs.played_opp
        discards = obs.discards
        self.unseen = DECK_MASK & ~(hand | played | discards | up | self.opp_known)
        # The opponent holds as many cards as the agent when the agent leads (one fewer when she has led).
        self.opp_hand_size = hand.bit_count() - (1 if led and not obs.led_by_self else 0)
        out = (self.unseen | self.opp_known) & self.trump_mask
        self.my_trumps = (hand & self.trump_mask).bit_count()
        self.unseen_trumps = out.bit_count()
        top = out & ~ROOK_BIT
        self.master_trump = (hand & self.trump_mask & ~ROOK_BIT & ~((1 << (top.bit_length())) - 1)) if top else (
            hand & self.trump_mask)
        self.short_of_trumps = self.unseen_trumps >= self.my_trumps
        most = max(obs.tricks_self, obs.tricks_opp)
        self.trick = TRICK_LEAD + (TRICK_MOST if 2 * most < TRICKS else 0.0) + (TRICK_DRAW if up else 0.0)

    def is_trump(self, c: int) -> bool:
        return bool(self.trump_mask >> c & 1)

    def keep(self, c: int) -> float:
        """What holding ``c`` for later is worth."""
        if self.trump_mask >> c & 1:
            value = TRUMP_KEEP + (0.0 if c == ROOK else TRUMP_RANK * (_RANK[c] - 1))
            if self.master_trump >> c & 1 and c != ROOK:
                value += MASTER_TRUMP
            if self.short_of_trumps:
                value += SHORT_OF_TRUMPS
            return value
        value = SIDE_RANK * max(0, _RANK[c] - 7)
        if not _ABOVE[c] & (self.unseen | self.opp_known):
            value += SIDE_MASTER
        return value

    def draw_value(self, c: int) -> float:
        return self.keep(c) + 0.5 * POINTS[c]

    def lead_wins(self, c: int) -> float:
        """The chance that the opponent cannot beat ``c`` led now."""
        trumps = self.trump_mask
        if trumps >> c & 1:
            above = trumps & ~ROOK_BIT if c == ROOK else _ABOVE[c]  # the Rook is the lowest trump
            suit_cards = trumps
        else:
            above = _ABOVE[c]
            suit_cards = SUIT_MASKS[c // 13]
        if above & self.opp_known:
            return 0.0
        pool = self.unseen.bit_count()
        drawn = max(0, self.opp_hand_size - self.opp_known.bit_count())
        p = _none_held((above & self.unseen).bit_count(), pool, drawn)
        if not trumps >> c & 1 and trumps:
            if suit_cards & self.opp_known:
                return p
            void = _none_held((suit_cards & self.unseen).bit_count(), pool, drawn)
            has_trump = 1.0 if trumps & self.opp_known else 1.0 - _none_held((trumps & self.unseen).bit_count(),
                                                                             pool, drawn)
            p *= 1.0 - void * has_trump
        return p


def fit_bid_weights(rounds: int = 10_000, seed: int = 0) -> tuple[np.ndarray, float]:
    """Refit ``BID_WEIGHTS``: the heuristic plays both seats of single rounds where ``player_0`` opens at 50 and
    ``player_1`` passes; least squares of ``player_0``'s points on :func:`bid_features` of her dealt hand. Returns
    the weights and the residual standard deviation."""
    from cardzoo.envs.rook import rules
    from cardzoo.envs.rook.observer import observe_bits

    agent = RookHeuristic()
    features, points = [], []
    for i in range(rounds):
        s = rules.deal(rules.Config(rounds=1), seed + i)
        hand = s.hands[0]  # player_0's dealt hand, before the bidding
        rules.apply(s, rules.bid_action(MIN_BID))
        rules.apply(s, PASS)
        while s.outcome is None:
            rules.apply(s, agent.act_bits(observe_bits(s, s.to_move), rules.legal_actions(s)))
        features.append(bid_features(hand, best_trumps(hand)))
        points.append(s.history[0]["points"][0])
    x, y = np.array(features), np.array(points, dtype=float)
    weights = np.linalg.lstsq(x, y, rcond=None)[0]
    return weights, float((y - x @ weights).std())
