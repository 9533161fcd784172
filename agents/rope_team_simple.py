"""Rope Team's "simple strategy": each player sees only their own hand, nobody talks.

The rule document reports win rates for "a simple strategy" without spelling it out; its tips say what such a
player does. This agent follows them, scoring every legal card by where the coin would land:

- never fall when it can be avoided (a fall without a rope loses; a rope is worth keeping);
- aim to stop on face-down cards (that is the only way to uncover them), and if the coin cannot uncover now,
  stay away from the ends and near the cards still face down;
- low cards brake: 2-7 add no steps, so near an end they keep the coin still;
- near its own end a player prefers that the partner win the trick, near the partner's end it takes the trick
  itself -- this falls out of the scoring, since the winner pulls the coin towards their own end;
- mind trumps: which card wins is computed with the current trump suit, and the cards still unseen are counted.

Following a trick, the agent knows both cards, so it scores the exact outcome. Leading, it does not know the
partner's reply: it considers every card it has not seen (the partner's hand is among them), grouped by whether
the reply would win and by its steps, and scores the lead by the mean over those replies blended with the best
one (the partner, following the same strategy, picks a good reply when it has one).

The agent acts only on its observation (the labelled vector of ``cardzoo.envs.rope_team.observer``). It is a
:class:`~cardzoo.agents.base.BitsAgent`: it reads the observation as the integer of its bits (``act_bits``, with the
observer's ``decode``), which is what the vector is made from; ``act`` packs the vector into that integer, so both
paths give identical actions.
"""

from __future__ import annotations

from cardzoo.envs.common.cards import FULL_MASK, SUIT_MASKS, cards_of
from cardzoo.envs.rope_team.observer import decode
from cardzoo.envs.rope_team.rules import RIDGE, STEPS, trick_winner

from .base import BitsAgent

_ALL_POSITIONS = (1 << RIDGE) - 1

# Cards of the same suit ranked above each card, and cards by steps: counting unseen replies by category.
HIGHER = tuple(SUIT_MASKS[c // 13] & ~((2 << c) - 1) for c in range(52))
BY_STEPS = tuple(sum(1 << c for c in range(52) if STEPS[c] == k) for k in range(3))

# Scores of a landing. Only their order and rough ratios matter; they follow the document's tips, not a fit.
LOSS = -1000.0  # a fall without a rope: the game is lost
WIN = 1000.0  # uncovering the last face-down card
UNCOVER = 30.0  # stopping on a face-down card
ROPE = 40.0  # spending a safety rope
EDGE = (6.0, 3.0)  # standing on an end card / one card from an end: the next trick may pull over
DISTANCE = 2.0  # per card between the coin and the nearest face-down card
LEAD_MEAN = 0.5  # leading: weight of the mean reply against the best reply


class RopeTeamSimple(BitsAgent):
    """The document's simple strategy for one seat (either; observations are seat-relative)."""

    name = "simple"
    lead_mean = LEAD_MEAN  # a class attribute: the convention partners (agents/partners) change it

    def __init__(self, seed: int | None = None):
        pass

    # ------------------------------------------------------------------ decision
    def act_bits(self, bits: int, legal: int, size: int | None = None, n_actions: int | None = None) -> int:
        """The best-valued legal card; ties go to the lowest rank (high cards keep their pull for later)."""
        best, best_value = -1, -float("inf")
        for card, value in self.card_values(bits, legal):
            if value > best_value or (value == best_value and card % 13 < best % 13):
                best, best_value = card, value
        return best

    def card_values(self, bits: int, legal: int) -> list[tuple[int, float]]:
        """Each legal card with the value the strategy gives it, from the observation's bits."""
        if not legal:
            raise ValueError("no legal card in the mask: this player is not to move")
        o = decode(bits)
        values = self.landing_values(o.coin, o.up, o.ropes)  # [me_wins][steps]
        cards = cards_of(legal)
        if o.led is not None:
            return self._follow(cards, o.led, o.trumps, values)
        unseen = FULL_MASK & ~(o.hand | o.played_self | o.played_partner | o.ridge_cards)
        return self._lead(cards, unseen, o.trumps, values)

    @staticmethod
    def _follow(cards: list[int], led: int, trumps: int, values) -> list[tuple[int, float]]:
        # values[1]: the mover takes the trick; the partner led, and keeps it if its card beats this one
        return [(card, values[not trick_winner(led, card, trumps)][STEPS[led] + STEPS[card]]) for card in cards]

    def _lead(self, cards: list[int], unseen: int, trumps: int, values) -> list[tuple[int, float]]:
        trump_mask = SUIT_MASKS[trumps] if trumps >= 0 else 0
        out = []
        for card in cards:
            suit_unseen = unseen & SUIT_MASKS[card // 13]
            steps = STEPS[card]
            total = weight = 0.0
            top = -float("inf")
            if suit_unseen:  # the partner most likely follows suit: a higher card wins for the partner
                higher = suit_unseen & HIGHER[card]
                groups = ((higher, False), (suit_unseen & ~higher, True))
            elif card // 13 == trumps or not trump_mask:  # a void partner cannot win this trick
                groups = ((unseen, True),)
            else:  # a void partner wins with a trump, loses with anything else
                groups = ((unseen & trump_mask, False), (unseen & ~trump_mask, True))
            for group, leader_wins in groups:
                row = values[leader_wins]
                for k in range(3):
                    n = (group & BY_STEPS[k]).bit_count()
                    if n:
                        v = row[steps + k]
                        total += n * v
                        weight += n
                        top = max(top, v)
            out.append((card, values[True][steps] if weight == 0 else
                        self.lead_mean * total / weight + (1 - self.lead_mean) * top))
        return out

    # ------------------------------------------------------------------ helpers
    @staticmethod
    def _position_value(pos: int, up: int) -> float:
        edge = min(pos, RIDGE - 1 - pos)
        value = -EDGE[edge] if edge < 2 else 0.0
        down = _ALL_POSITIONS & ~up
        if down:
            nearest = min(abs(pos - p) for p in range(RIDGE) if down >> p & 1)
            value -= DISTANCE * nearest
        return value

    def landing_values(self, coin: int, up: int, ropes: int) -> tuple[list[float], list[float]]:
        """Value of the trick's result by who wins (0: partner, 1: me) and total steps 0..4."""
        n_down = RIDGE - up.bit_count()
        stay = self._position_value(coin, up)
        rows = ([stay] * 5, [stay] * 5)
        for me_wins in (False, True):
            row = rows[me_wins]
            for steps in range(1, 5):
                target = coin - steps if me_wins else coin + steps
                value = 0.0
                if not 0 <= target < RIDGE:
                    if ropes == 0:
                        row[steps] = LOSS
                        continue
                    target = 0 if target < 0 else RIDGE - 1
                    value -= ROPE
                after = up
                if not up >> target & 1:
                    if n_down == 1:
                        row[steps] = WIN
                        continue
                    value += UNCOVER
                    after = up | 1 << target
                row[steps] = value + self._position_value(target, after)
        return rows
