"""Rope Team partners with other conventions on purpose: the simple strategy (:mod:`cardzoo.agents.rope_team_simple`)
changed in one convention each, and a deliberately weak partner, for the benchmark's partner pool
(:mod:`cardzoo.agents.pools`).

The simple strategy gives every legal card a value (where the coin would land) and plays the best one, ties to the
lowest rank. Often several cards are worth nearly the same, and which one a player picks among them is a
*convention*: a partner who expects another choice misreads the hand. Each variant below keeps the values and
changes one such choice, among the cards within :data:`MARGIN` of the best (so it never gives away much on its own):

- ``simple_lead_long`` -- *which card it leads*: from its longest suit (the simple strategy: the lowest rank);
- ``simple_signal`` -- *how it signals with plays*: void in the suit led, it discards from its longest suit ("this
  is my suit"), and leading, it leads the suit its partner last discarded when void ("you asked for it");
- ``simple_high_follow`` -- *which card it follows with*: the highest rank among the equally good cards (the simple
  strategy keeps its high cards and follows with the lowest);
- ``simple_trump_eager`` / ``simple_trump_shy`` -- *when it trumps*: leading, or void in the suit led, it plays a
  trump whenever one is nearly as good as the best card / keeps its trumps whenever another card is (void in the
  suit led, "nearly" is the wider :data:`TRUMP_MARGIN`: taking or giving the trick moves the coin the other way);
- ``simple_trusting`` / ``simple_wary`` -- *what it expects of the partner's reply when leading*: a lead is valued
  by the partner's best reply alone (it trusts the partner to find it) / by the mean over the replies the partner
  may hold (the simple strategy blends the two half and half);
- ``simple_careless`` -- the deliberately weak partner: the simple strategy, but a third of its cards (drawn from
  its seeded generator) are uniformly random legal cards.

Every variant acts on its observation only, as the simple strategy does (``act_bits`` on the observation's bits);
``simple_signal`` also remembers what it saw earlier in the deal (its own lead and the partner's replies), which
``reset`` forgets. Only ``simple_careless`` draws random numbers, from ``numpy.random.default_rng(seed)``.
"""

from __future__ import annotations

import numpy as np

from cardzoo.envs.common.cards import FULL_MASK, SUIT_MASKS, cards_of
from cardzoo.envs.rope_team.observer import Observation, decode

from ..rope_team_simple import RopeTeamSimple

MARGIN = 3.0  # value points (a card and a half of distance to a face-down card): "nearly as good"
TRUMP_MARGIN = 8.0  # void in the suit led: winning and losing the trick differ more
CARELESS = 1 / 3  # share of the weak partner's random cards


class _Variant(RopeTeamSimple):
    """The simple strategy's values, with the choice among the nearly best cards left to :meth:`choose`."""

    name = "simple_variant"

    def act_bits(self, bits: int, legal: int, size: int | None = None, n_actions: int | None = None) -> int:
        if not legal:
            raise ValueError("no legal card in the mask: this player is not to move")
        o = decode(bits)
        values = self.values(o, legal)
        best = max(v for _, v in values)
        return self.choose(o, legal, values, best)

    def values(self, o: Observation, legal: int) -> list[tuple[int, float]]:
        """The simple strategy's value of each legal card (its ``card_values``, from the decoded observation)."""
        table = self.landing_values(o.coin, o.up, o.ropes)
        cards = cards_of(legal)
        if o.led is not None:
            return self._follow(cards, o.led, o.trumps, table)
        unseen = FULL_MASK & ~(o.hand | o.played_self | o.played_partner | o.ridge_cards)
        return self._lead(cards, unseen, o.trumps, table)

    def choose(self, o: Observation, legal: int, values: list[tuple[int, float]], best: float) -> int:
        """The simple strategy's choice: the best value, ties to the lowest rank."""
        return min((c for c, v in values if v == best), key=lambda c: c % 13)


def _near(values: list[tuple[int, float]], best: float) -> list[tuple[int, float]]:
    return [(c, v) for c, v in values if v >= best - MARGIN]


def _suit_length(hand: int, card: int) -> int:
    return (hand & SUIT_MASKS[card // 13]).bit_count()


def _low(mask: int) -> int:
    return (mask & -mask).bit_length() - 1


def _void_in_led(o: Observation) -> bool:
    return o.led is not None and not o.hand & SUIT_MASKS[o.led // 13]


class LongLead(_Variant):
    """Leads from its longest suit among the nearly best leads (then the best value, then the lowest rank)."""

    name = "simple_lead_long"

    def choose(self, o, legal, values, best):
        if o.led is not None:
            return super().choose(o, legal, values, best)
        return max(_near(values, best), key=lambda cv: (_suit_length(o.hand, cv[0]), cv[1], -(cv[0] % 13)))[0]


class HighFollow(_Variant):
    """Follows with the highest rank among the equally valued best cards (the simple strategy: the lowest)."""

    name = "simple_high_follow"

    def choose(self, o, legal, values, best):
        if o.led is None:
            return super().choose(o, legal, values, best)
        return max((c for c, v in values if v == best), key=lambda c: c % 13)


def _trump_choice(o: Observation, values: list[tuple[int, float]], best: float, trump: bool) -> int | None:
    """Leading (within ``MARGIN``) or void in the suit led (within ``TRUMP_MARGIN``): the best trump (``trump``) or
    the best other card, if one is nearly as good as the best card; None when the convention has no say."""
    if o.trumps < 0 or (o.led is not None and not _void_in_led(o)):
        return None
    margin = MARGIN if o.led is None else TRUMP_MARGIN
    fit = [(c, v) for c, v in values if v >= best - margin and (c // 13 == o.trumps) == trump]
    return max(fit, key=lambda cv: (cv[1], -(cv[0] % 13)))[0] if fit else None


class TrumpEager(_Variant):
    """Plays a trump whenever one is nearly as good as the best card, leading or void in the suit led."""

    name = "simple_trump_eager"

    def choose(self, o, legal, values, best):
        card = _trump_choice(o, values, best, trump=True)
        return super().choose(o, legal, values, best) if card is None else card


class TrumpShy(_Variant):
    """Keeps its trumps whenever another card is nearly as good as the best card, leading or void in the suit led."""

    name = "simple_trump_shy"

    def choose(self, o, legal, values, best):
        card = _trump_choice(o, values, best, trump=False)
        return super().choose(o, legal, values, best) if card is None else card


class Trusting(_Variant):
    """Values a lead by the partner's best reply alone (it expects the partner to hold and find it)."""

    name = "simple_trusting"
    lead_mean = 0.0


class Wary(_Variant):
    """Values a lead by the mean over the replies the partner may hold (it expects no help)."""

    name = "simple_wary"
    lead_mean = 1.0


class Signal(_Variant):
    """Discards from its longest suit when void (the signal), and leads the suit the partner last discarded when
    void in a suit this agent led (the reading), both among the nearly best cards; the partner's signal is
    forgotten at a new deal."""

    name = "simple_signal"

    def __init__(self, seed: int | None = None):
        self.reset(seed)

    def reset(self, seed: int | None = None) -> None:
        self._deal = -1
        self._led = False  # whether it led at its previous decision
        self._self_seen = self._partner_seen = 0  # the cards of this deal each seat was seen to have played
        self.asked = None  # the suit the partner last discarded to this agent's lead

    def _listen(self, o: Observation) -> None:
        """Read the partner's reply to its own previous lead from what changed since its previous decision."""
        if o.deal != self._deal:
            self._deal, self._led, self._self_seen, self._partner_seen, self.asked = o.deal, False, 0, 0, None
        mine = o.played_self & ~self._self_seen
        replies = o.played_partner & ~self._partner_seen
        if o.led is not None and not o.led_by_self:
            replies &= ~(1 << o.led)  # the partner's new lead, not a reply
        if self._led and mine and replies:
            lead_suit = _low(mine) // 13
            for c in cards_of(replies):
                if c // 13 != lead_suit and c // 13 != o.trumps:
                    self.asked = c // 13
        self._self_seen, self._partner_seen = o.played_self, o.played_partner
        self._led = o.led is None

    def choose(self, o, legal, values, best):
        self._listen(o)
        near = _near(values, best)
        if o.led is None:
            card = super().choose(o, legal, values, best)
            asked = [(c, v) for c, v in near if c // 13 == self.asked]
            if asked:
                card = max(asked, key=lambda cv: (cv[1], -(cv[0] % 13)))[0]
            return card
        if _void_in_led(o):
            discards = [(c, v) for c, v in near if c // 13 != o.trumps]
            if discards:
                return max(discards, key=lambda cv: (_suit_length(o.hand, cv[0]), cv[1], -(cv[0] % 13)))[0]
        return super().choose(o, legal, values, best)


class Careless(_Variant):
    """The weak partner: the simple strategy, a third of its cards uniformly random (seeded)."""

    name = "simple_careless"

    def __init__(self, seed: int | None = None):
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    def choose(self, o, legal, values, best):
        if self.rng.random() < CARELESS:
            cards = [c for c, _ in values]
            return cards[int(self.rng.integers(len(cards)))]
        return super().choose(o, legal, values, best)


PARTNERS = (LongLead, Signal, HighFollow, TrumpEager, TrumpShy, Trusting, Wary, Careless)
