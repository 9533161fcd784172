"""Rope Team search agent: belief over the hidden cards from the partner's plays, rollouts of a blueprint.

SPARTA-style single-agent search on a blueprint (Lerer et al., "Improving Policies via Search in Cooperative
Partially Observable Games", 2020). The blueprint (:mod:`.rope_team_blueprints`) is the simple strategy
(:mod:`.rope_team_simple`; the registry's ``search``) or a trained numpy policy (the ``learned`` agent's in the
registry's ``search_learned``, or any ``.npz`` file): it plays the rollouts, it is the partner model, and its card is
the one kept unless another clearly wins more. What follows says "the blueprint" for either; where the two differ,
it says so. The agent acts on its own observation and its memory of earlier observations of the game; it never
sees the env or a state.

Algorithm, at each decision with more than one distinct legal card:

1. History. From its observations the agent rebuilds the order of this deal's plays (whose card, which trick) and
   replays them on a public copy of the table (the rules module, its own frame: itself seat 0, its end at 0). It
   keeps what it has seen off the ridge in every deal (its hands and every card played): those cannot be face down
   on the ridge, which stays the same across deals.
2. Belief. The hidden cards are the partner's hand, the 17 set aside and the face-down ridge cards. ``worlds``
   deals of them are drawn consistent with everything seen: the face-down ridge from the cards never seen off it,
   the partner's hand avoiding the suits it failed to follow this deal. Each world is weighted by the likelihood of
   the partner's plays this deal under the partner model -- the simple strategy, played from the partner's
   observation in that world, with probability ``1 - epsilon`` of playing its card and ``epsilon`` spread over the
   legal cards (so a partner that departs from the blueprint, a search partner or a learned one, never empties the
   belief). Most draws come from a proposal that already leaves out the cards the blueprint would have preferred to
   the one the partner played (exact for its follows, approximate for its leads); a share ``mixture`` ignores them.
   Importance weights (likelihood over the mixture's probability of the draw) keep the belief the exact posterior of
   the model up to sampling. Later deals are unknown: each world draws them (the 43 cards off its ridge, dealt).
   A learned blueprint's model is its probability of the partner's card: in every world at once, the partner's
   observation at each of its plays this deal is rebuilt (that play's public table, my hand then, the world's
   partner hand) and the policy's softmax over the legal cards read at the card played, mixed with ``epsilon`` as
   above. Its preferences cannot be known without the partner's hand, so nothing is left out of the proposal: the
   partner's hand is drawn from every card it may hold and the likelihood weights it (more worlds for that, see
   ``LEARNED_BUDGET``; the study records the effective sample size).
3. Evaluation. ``max(rollouts // candidates, min_worlds)`` worlds are resampled by weight (systematic resampling).
   Each candidate card (one per run of cards that behave identically) is played in each of them and the game is
   played to its end by the blueprint for both seats (:mod:`.rope_team_rollouts`, all rows at once in numpy: the
   simple strategy on the rows' arrays, a learned policy batched over the rows' observations; with the simple
   blueprint, ``rollout_policy`` plays them by any batched policy instead); a card's value is its
   share of won games. The same worlds and later deals serve every card, so the comparison
   is paired.
4. Decision. The blueprint's own card is played unless another card wins more often by more than ``threshold``
   and by more than ``z`` standard errors of the paired difference (a few dozen rollouts are noisy; a departure
   from the blueprint must be worth it, see below).

What each seat assumes of the other. Both seats may run the search. Each assumes that its partner plays the
blueprint (with ``epsilon`` noise): it reads the partner's cards with the blueprint's model, and it rolls out both
seats, the partner's later cards too, with the blueprint -- not with the partner's search. A search partner departs
from the blueprint only where its own search gains more than ``threshold`` (by ``z`` standard errors), so its plays
keep meaning nearly what the blueprint's would, and the two beliefs stay close to right -- SPARTA's way of keeping a
team consistent; neither seat models the other's departures, which are the noise ``epsilon`` covers. The threshold
is therefore a team option as much as a seat's: the lower it is, the more a search partner's cards mean something
the model does not expect. With a partner of another kind the model is exact only for the blueprint itself (the
simple strategy for ``search``, the learned policy for ``search_learned``) and approximate for the others (a
person, another policy), which ``epsilon`` absorbs; the studies' cross-play rows measure the team with the simple
strategy (``search``) and with the learned policy (``search_learned``).

Not modelled: the two-deal variant in deal 1 (the observation says only whether the current deal is the last; the
agent assumes three deals until told otherwise), and what the partner's plays in earlier deals say about the
ridge beyond the cards seen. Open hands: the partner's hand is seen, only the ridge and the aside are sampled.

Budget and time. Deterministic for a given seed (``reset(seed)``): the same observations give the same cards.
The budget is the options of :class:`SearchOptions` (keyword arguments of the constructor, checked: an unknown or
out-of-range option raises ``OptionError``): ``worlds`` drawn and weighted, ``rollouts`` games played out per
decision. The CPU time of a decision with the defaults (mean, the cheap single-card decisions, the 99th
percentile) and the win rates on the report's deals, with their intervals, paired comparisons against the simple
strategy, cross-play and the causes of the losses, are in ``evaluation/results/rope_team_search.json`` (and
``.csv``), made by ``python -m cardzoo.evaluation.studies.search_rope_team``; those of ``search_learned`` (CPU ms,
worlds and rollouts per decision, paired with ``learned`` and ``simple``) in
``evaluation/results/rope_team_search_learned.json``, made by the resumable
``python -m cardzoo.evaluation.studies.search_rope_team_learned``; the report's Rope Team section prints both. A
learned blueprint's CPU time depends on the BLAS library's threads: its matrix products are small, and a
multi-threaded BLAS on a busy machine spins a second core for them (three to five times the CPU time measured here);
the study runs with ``OPENBLAS_NUM_THREADS=1``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

import numpy as np

from cardzoo.envs.common.cards import FULL_MASK, SUIT_MASKS, cards_of
from cardzoo.envs.common.errors import OptionError
from cardzoo.envs.rope_team import rules
from cardzoo.envs.rope_team.observer import Observation as _Observation
from cardzoo.envs.rope_team.observer import decode

from .base import BitsAgent
from .blas import one_blas_thread
from .rope_team_blueprints import make_blueprint
from .rope_team_rollouts import NONE, Games, Policy, best_cards, masks_of, popcount
from .rope_team_simple import RopeTeamSimple

_TIE = tuple(4 * (c % 13) + c // 13 for c in range(52))
_COMB = np.array([[math.comb(n, k) for k in range(rules.HAND + 1)] for n in range(53)], float)
_BIT = np.array([1 << c for c in range(52)] + [0], np.uint64)
ME, PARTNER = 0, 1


@dataclass(frozen=True)
class SearchOptions:
    """The search's budget and partner model."""

    worlds: int = 256  # hidden-card deals drawn and weighted per decision
    rollouts: int = 384  # games played out per decision, shared by the candidate cards (each gets the same worlds)
    min_worlds: int = 16  # worlds per candidate at least, however many candidates
    threshold: float = 0.03  # play another card than the blueprint's only if it wins this much more often...
    z: float = 1.5  # ... and by this many standard errors of the paired difference
    epsilon: float = 0.1  # the partner model's chance of a card other than the blueprint's
    mixture: float = 0.2  # share of worlds drawn without leaving out the cards the blueprint would have preferred


# The budget of the registry's ``search_learned`` (the learned blueprint): its rollouts cost about five times the
# simple strategy's, and its partner model draws from every card the partner may hold, so more worlds, fewer games.
LEARNED_BUDGET = {"worlds": 512, "rollouts": 384}

_LIMITS = {  # option -> (kind, low, high, low included)
    "worlds": (int, 1, None, True), "rollouts": (int, 1, None, True), "min_worlds": (int, 2, None, True),
    "threshold": (float, 0.0, None, True), "z": (float, 0.0, None, True), "epsilon": (float, 0.0, 1.0, False),
    "mixture": (float, 0.0, 1.0, True),
}


def _option_problems(options: SearchOptions) -> list[str]:
    """What is wrong with each option (a count that is not a whole number, a share outside its range)."""
    problems = []
    for name, (kind, low, high, low_included) in _LIMITS.items():
        value = getattr(options, name)
        if isinstance(value, bool) or not isinstance(value, int if kind is int else (int, float)):
            problems.append(f"{name}={value!r} is not {'a whole number' if kind is int else 'a number'}")
        elif not math.isfinite(value) or value < low or (value == low and not low_included) or (
                high is not None and value > high):
            bound = f"{'>=' if low_included else '>'} {low}" + (f" and <= {high}" if high is not None else "")
            problems.append(f"{name}={value!r} must be {bound}")
    return problems


def _bit_index(x: int) -> int:
    return x.bit_length() - 1


@dataclass
class _PartnerPlay:
    """One of the partner's plays this deal: the public table before it and what the blueprint makes of it."""

    index: int  # its place in the deal's plays
    card: int
    table: rules.State  # the public table before the play (my frame; hidden parts empty)
    played_before: int  # the partner's cards played before it, this deal
    follows: int  # the led suit's mask if the partner had to follow it, else 0 (a lead, or a void)
    better: int  # cards the blueprint would have played instead, had the partner held them (see _PartnerPlay.make)

    @staticmethod
    def make(index: int, card: int, table: rules.State, exclusion: bool = True) -> _PartnerPlay:
        if not exclusion:  # a blueprint whose preferences need the partner's observation: nothing left out
            follows = SUIT_MASKS[table.led // 13] if table.led is not None and card // 13 == table.led // 13 else 0
            return _PartnerPlay(index, card, table.copy(), table.played[PARTNER], follows, 0)
        blueprint = RopeTeamSimple()
        seat_coin = rules.RIDGE - 1 - table.coin  # the partner's view: its end at 0
        up = sum(1 << (rules.RIDGE - 1 - i) for i in range(rules.RIDGE) if table.up[i])
        rows = blueprint.landing_values(seat_coin, up, table.ropes)
        everything = list(range(52))
        if table.led is not None:
            # A follow's values depend only on the table: the cards the partner would have preferred are exact.
            values = dict(blueprint._follow(everything, table.led, table.trumps, rows))
            same = card // 13 == table.led // 13
            follows = SUIT_MASKS[table.led // 13] if same else 0
        else:
            # A lead's values depend on the partner's hand through the cards it has not seen; here everything not
            # known to be elsewhere counts as unseen (the partner's own cards too): an approximation, used only to
            # propose worlds (their weights use the exact values).
            unseen = FULL_MASK & ~(table.played[0] | table.played[1] | _ridge_up(table) | 1 << card)
            values = dict(blueprint._lead(everything, unseen, table.trumps, rows))
            follows = 0
        v, t = values[card], _TIE[card]
        better = sum(1 << c for c in everything if values[c] > v or (values[c] == v and _TIE[c] < t))
        return _PartnerPlay(index, card, table.copy(), table.played[PARTNER], follows, better)


def _ridge_up(s: rules.State) -> int:
    return sum(1 << s.ridge[i] for i in range(rules.RIDGE) if s.up[i])


class RopeTeamSearch(BitsAgent):
    """Belief search on a blueprint for one seat (either; observations are seat-relative)."""

    name = "search"

    def __init__(self, seed: int | None = None, rollout_policy: Policy | None = None, blueprint=None, belief=None,
                 **options):
        """``blueprint``: what the search is on (:mod:`.rope_team_blueprints`): None or ``"simple"``, the simple
        strategy; a numpy policy (:func:`cardzoo.agents.registry.rope_team_policy` ``("learned")``), a ``.npz``
        policy file or a shipped policy's name (``"rope_team_v2"``), that policy (its card, its rollouts, its
        probabilities as the partner model). ``rollout_policy``, with the simple
        blueprint only: a batched policy ``obs[N, 464], mask[N, 52] -> cards[N]`` that plays the rollouts instead
        (None: the simple strategy on the rollouts' arrays, the fast path;
        :func:`cardzoo.agents.rope_team_rollouts.simple_policy` is the same strategy on observations); the partner
        model stays the simple strategy. ``belief``: a learned belief that draws the rollout worlds instead
        of the weighted draws, an object with ``worlds(agent, table, n_worlds)`` returning this class's worlds
        (:class:`cardzoo.agents.rope_team_belief.BeliefNet`; ``worlds``, ``epsilon`` and ``mixture`` then do not
        apply, nor the blueprint's partner model)."""
        if belief is not None and not callable(getattr(belief, "worlds", None)):
            raise OptionError(f"belief must be a learned belief (rope_team_belief.BeliefNet), got {belief!r}")
        self.belief = belief
        if rollout_policy is not None and not callable(rollout_policy):
            raise OptionError(f"rollout_policy must be a batched policy (obs, mask) -> cards, got {rollout_policy!r}")
        self.model = make_blueprint(blueprint, rollout_policy)
        self.blueprint_spec = blueprint
        self.rollout_policy = self.model.rollout_policy
        known = {f.name for f in fields(SearchOptions)}
        unknown = sorted(set(options) - known)
        if unknown:
            raise OptionError(f"unknown search option(s) {unknown}; known: {sorted(known)}")
        self.options = SearchOptions(**options)
        problems = _option_problems(self.options)
        if problems:
            raise OptionError(f"search option(s) out of range: {'; '.join(problems)}")
        self.reset(seed)

    @property
    def digest(self) -> str | None:
        """A learned blueprint's weights (evaluation caches key on them: a retrained policy is another agent)."""
        policy = getattr(self.model, "policy", None)
        return None if policy is None else policy.digest

    def reset(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)
        self.model.reset()
        self.deal = 0
        self.seen_off_ridge = 0  # cards seen in a hand or played, in any deal: never face down on the ridge
        self.start: rules.State | None = None  # the public table at the start of this deal
        self.plays: list[tuple[int, int]] = []  # this deal's plays in order: (ME or PARTNER, card)
        self.partner_plays: list[_PartnerPlay] = []
        self.last: dict = {}  # what the last decision saw and did, for studies of the agent

    # ------------------------------------------------------------------ memory
    def _remember(self, obs: _Observation) -> rules.State:
        """Bring the deal's history up to this observation; the public table now (my frame)."""
        if obs.deal != self.deal:
            self.deal = obs.deal
            max_deals = obs.deal if obs.last_deal else max(obs.deal, 3)
            config = rules.Config(ropes=obs.ropes, trumps=obs.trumps_rule, max_deals=max_deals,
                                  open_hands=obs.open_hands)
            s = rules.State()
            s.config, s.rng = config, None
            s.ridge = [obs.ridge.get(i, -1) for i in range(rules.RIDGE)]
            s.up = [i in obs.ridge for i in range(rules.RIDGE)]
            s.coin, s.trumps, s.ropes, s.deal = obs.coin, obs.trumps, obs.ropes, obs.deal
            s.outcome, s.win_deal, s.uncovered = None, None, len(obs.ridge) - 1
            s.hands, s.aside, s.played = [obs.hand | obs.played_self, 0], 0, [0, 0]
            s.dealer = ME if obs.self_dealt else PARTNER
            s.leader = s.to_move = 1 - s.dealer
            s.trick_no, s.led, s.last_trick = 0, None, None
            self.start = s
            self.plays = [] if obs.led is None else [(PARTNER, obs.led)]
            self.partner_plays = []
        else:
            known = sum(1 << c for who, c in self.plays if who == PARTNER)
            new = obs.played_partner & ~known
            partner_leads = obs.led is not None and not obs.led_by_self
            if len(self.plays) % 2 == 1:  # my last card was a lead: the partner followed it
                follow = new & ~(1 << obs.led) if partner_leads else new
                self.plays.append((PARTNER, _bit_index(follow)))
            if partner_leads:
                self.plays.append((PARTNER, obs.led))
        self.seen_off_ridge |= obs.hand | obs.played_self | obs.played_partner
        # Replay the deal on the public table (cards turned up since are known now).
        s = self.start.copy()
        for pos, card in obs.ridge.items():
            s.ridge[pos] = card
        recorded = {p.index for p in self.partner_plays}
        for i, (who, card) in enumerate(self.plays):
            if who == PARTNER and i not in recorded:
                self.partner_plays.append(_PartnerPlay.make(i, card, s, self.model.exact_exclusion))
            rules.play(s, card)
        if (s.coin, s.trumps, s.ropes, s.trick_no, s.played[ME], s.played[PARTNER], s.led) != (
                obs.coin, obs.trumps, obs.ropes, obs.trick, obs.played_self, obs.played_partner, obs.led):
            raise RuntimeError("search agent: the replayed deal does not match the observation (a missed play?)")
        s.hands[ME] = obs.hand
        return s

    # ------------------------------------------------------------------ decision
    def act_bits(self, bits: int, legal: int, size: int | None = None, n_actions: int | None = None) -> int:
        """The card to play, from the observation's bits and the legal cards' mask."""
        if not legal:
            raise ValueError("no legal card in the mask: this player is not to move")
        with one_blas_thread():  # a learned blueprint's products are small: threads would only wait (see .blas)
            return self._act(bits, legal)

    def _act(self, bits: int, legal: int) -> int:
        obs = decode(bits)
        table = self._remember(obs)
        blueprint = self.model.act_bits(bits, legal)
        candidates = self._candidates(obs, table, legal, blueprint)
        self.last = {"blueprint": blueprint, "candidates": candidates}
        card = blueprint
        if len(candidates) > 1:
            n_worlds = max(self.options.rollouts // len(candidates), self.options.min_worlds)
            worlds = self._belief(obs, table, n_worlds)
            if worlds is not None:
                self.last["worlds"] = len(worlds["partner"])
                wins = self._evaluate(table, worlds, candidates)
                card = self._decide(wins, candidates, blueprint)
        self.plays.append((ME, card))
        return card

    def overrule(self, card: int) -> None:
        """Another policy played ``card`` at this agent's last decision (DAgger labelling: the agent names its
        card, a student plays); its memory of the deal then holds the card that was played."""
        if not self.plays or self.plays[-1][0] != ME:
            raise ValueError("overrule: this agent has not chosen a card since its last observation")
        self.plays[-1] = (ME, card)

    @staticmethod
    def _candidates(obs: _Observation, table: rules.State, legal: int, blueprint: int | None = None) -> list[int]:
        """One legal card per run of cards that play alike: same suit and steps, no card between them that is
        still in play (in my hand or unseen). The lowest of each run stands for it (the simple strategy's
        tie-break), but the ``blueprint`` card stands for its own run (a learned partner may read the card)."""
        gone = table.played[ME] | table.played[PARTNER] | _ridge_up(table)
        if table.led is not None:
            gone &= ~(1 << table.led)  # the card to beat or not: it splits runs like a card in play
        out = []
        previous = -1
        for card in cards_of(legal):
            if previous >= 0 and previous // 13 == card // 13 and rules.STEPS[previous] == rules.STEPS[card]:
                between = ((1 << card) - 1) & ~((2 << previous) - 1)
                if between & ~gone & ~legal == 0:
                    previous = card
                    if card == blueprint:
                        out[-1] = card
                    continue
            out.append(card)
            previous = card
        return out

    def _decide(self, wins: np.ndarray, candidates: list[int], blueprint: int) -> int:
        """The blueprint's card, unless another wins more often by more than the threshold and ``z`` standard
        errors (paired over the worlds: the noise of a few dozen rollouts must not pass for a better card)."""
        r = len(wins)
        gain = wins - wins[:, [candidates.index(blueprint)]]
        mean = gain.mean(axis=0)
        error = gain.std(axis=0, ddof=1) / np.sqrt(r)
        self.last["values"] = dict(zip(candidates, wins.mean(axis=0).tolist(), strict=True))
        better = (mean > self.options.threshold) & (mean > self.options.z * error)
        if not better.any():
            return blueprint
        return candidates[int(np.argmax(np.where(better, mean, -np.inf)))]

    def _belief(self, obs: _Observation, table: rules.State, n_worlds: int) -> dict | None:
        """Worlds drawn and weighted (see the module docstring): the partner's hand, the ridge, the later deals."""
        if self.belief is not None and not obs.open_hands:
            return self.belief.worlds(self, table, n_worlds)
        opt = self.options
        rng = self.rng
        ridge_known = _ridge_up(table)
        unknown = FULL_MASK & ~(obs.hand | obs.played_self | obs.played_partner | ridge_known)
        cards = np.array(cards_of(unknown), np.int64)
        n = len(cards)
        h = rules.HAND - obs.played_partner.bit_count()
        down = [i for i in range(rules.RIDGE) if not table.up[i]]
        k = len(down)
        m = opt.worlds
        # What the partner cannot hold: suits it did not follow (hard), cards the blueprint would have preferred.
        void, excluded = 0, 0
        for p in self.partner_plays:
            led = p.table.led
            if led is not None and p.card // 13 != led // 13:
                void |= SUIT_MASKS[led // 13]
            excluded |= p.better & (p.follows or FULL_MASK)
        bit = _BIT[cards]
        may_ridge = (bit & np.uint64(self.seen_off_ridge)) == 0
        allowed = (bit & np.uint64(void)) == 0
        preferred = allowed & ((bit & np.uint64(excluded)) == 0)
        if obs.open_hands:
            allowed = preferred = (bit & np.uint64(obs.partner_hand)) != 0
        # The ridge first, uniformly from the cards that may lie there; then the partner's hand.
        keys = rng.random((m, n))
        keys[:, ~may_ridge] = 2.0
        order = np.argsort(keys, axis=1)
        ridge_idx = order[:, :k]
        on_ridge = np.zeros((m, n), bool)
        np.put_along_axis(on_ridge, ridge_idx, True, axis=1)
        n_allowed = (allowed & ~on_ridge).sum(axis=1)
        n_preferred = (preferred & ~on_ridge).sum(axis=1)
        proposal2 = (rng.random(m) >= opt.mixture) & (n_preferred >= h)
        pool = np.where(proposal2[:, None], preferred, allowed) & ~on_ridge
        keys = rng.random((m, n))
        keys[~pool] = 2.0
        hand_idx = np.argsort(keys, axis=1)[:, :h]
        valid = n_allowed >= h
        if h:
            valid &= np.take_along_axis(keys, hand_idx[:, -1:], axis=1)[:, 0] < 2.0
        partner = np.bitwise_or.reduce(bit[hand_idx], axis=1) if h else np.zeros(m, np.uint64)
        in_preferred = preferred[hand_idx].all(axis=1) if h else np.ones(m, bool)
        feasible2 = n_preferred >= h
        c1 = _COMB[n_allowed, h]
        c2 = np.where(feasible2, _COMB[n_preferred, h], 1.0)
        q = np.where(feasible2, opt.mixture / np.maximum(c1, 1) + (1 - opt.mixture) * in_preferred / c2,
                     1.0 / np.maximum(c1, 1))
        likelihood = self._likelihood(obs, partner) if not obs.open_hands else np.ones(m)
        weight = np.where(valid, likelihood / q, 0.0)
        total = weight.sum()
        if not total > 0:
            return None
        ridge = np.tile(np.array([table.ridge[i] if table.up[i] else NONE for i in range(rules.RIDGE)]), (m, 1))
        ridge[:, down] = cards[ridge_idx]
        # Systematic resampling down to the rollout worlds.
        r = n_worlds
        cumulative = np.cumsum(weight / total)
        picks = np.minimum(np.searchsorted(cumulative, (rng.random() + np.arange(r)) / r), m - 1)
        self.last["ess"] = float(total * total / (weight * weight).sum())
        return {"partner": partner[picks], "ridge": ridge[picks]}

    def _likelihood(self, obs: _Observation, partner: np.ndarray) -> np.ndarray:
        """The partner model's probability of the partner's plays this deal, in each world (its hand now)."""
        eps = self.options.epsilon
        p_all = np.ones(len(partner))
        played_partner = np.uint64(obs.played_partner)
        for p in self.partner_plays:
            hand = partner | (played_partner & ~np.uint64(p.played_before))  # the partner's hand before the play
            if not self.model.exact_exclusion:
                p_all *= (1 - eps) * self._blueprint_probability(p, hand) + eps / popcount(
                    hand & np.uint64(p.follows) if p.follows else hand)
                continue
            if p.table.led is not None:
                must = np.uint64(p.follows) if p.follows else np.uint64(FULL_MASK)
                legal = hand & must
                agrees = (legal & np.uint64(p.better)) == 0
                n_legal = popcount(legal)
            else:
                n = len(partner)
                hands = np.stack([np.full(n, np.uint64(self._my_hand_at(p))), hand], axis=1)
                ridge = np.tile(np.array(p.table.ridge), (n, 1))
                ridge[ridge < 0] = NONE
                games = Games.start(p.table, hands, ridge, None)
                cards, legal_slots, values = games.values()
                agrees = best_cards(cards, legal_slots, values) == p.card
                n_legal = popcount(hand)
            p_all *= (1 - eps) * agrees + eps / n_legal
        return p_all

    def _blueprint_probability(self, p: _PartnerPlay, hand: np.ndarray) -> np.ndarray:
        """The blueprint's probability of the partner's card ``p`` in every world (``hand``: the partner's hand
        before it): each world's row is the table of that play with my hand then and the world's partner hand, and
        the blueprint reads the partner's observation of it (the mover of every row)."""
        n = len(hand)
        hands = np.stack([np.full(n, np.uint64(self._my_hand_at(p))), hand], axis=1)
        ridge = np.tile(np.array(p.table.ridge), (n, 1))
        ridge[ridge < 0] = NONE
        games = Games.start(p.table, hands, ridge, None)
        return self.model.probabilities(games, np.full(n, p.card, np.int64))

    def _my_hand_at(self, p: _PartnerPlay) -> int:
        """My hand before the partner's play ``p``: my deal's cards less those I had played by then."""
        mine = self.start.hands[ME]
        for who, card in self.plays[: p.index]:
            if who == ME:
                mine &= ~(1 << card)
        return mine

    def _evaluate(self, table: rules.State, worlds: dict, candidates: list[int]) -> np.ndarray:
        """bool[worlds, candidates]: which rollouts are won."""
        partner, ridge = worlds["partner"], worlds["ridge"]
        r, c = len(partner), len(candidates)
        later = table.config.max_deals - table.deal
        future = None
        if later:
            keys = self.rng.random((r, later, 52))
            np.put_along_axis(keys, np.repeat(ridge[:, None, :], later, axis=1), 2.0, axis=2)
            order = np.argsort(keys, axis=2)
            future = np.stack([masks_of(order[:, :, : rules.HAND]), masks_of(order[:, :, rules.HAND : 2 * rules.HAND])],
                              axis=2)
            future = np.repeat(future, c, axis=0)
        hands = np.repeat(np.stack([np.full(r, np.uint64(table.hands[ME])), partner], axis=1), c, axis=0)
        games = Games.start(table, hands, np.repeat(ridge, c, axis=0), future)
        games.play(np.tile(np.array(candidates, np.int64), r))
        results = games.play_out(self.rollout_policy)
        return (results.reshape(r, c) == 1).astype(float)
