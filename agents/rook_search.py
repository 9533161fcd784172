"""A determinized search player for Rook for Two: sampled worlds, rollouts of each legal action, best expected result.

The agent acts from its own observation (the labelled vector of ``cardzoo.envs.rook.observer``) plus what it
remembers of its own earlier observations in the round; it never sees the env or the game state. At each decision
with more than one legal action it:

1. **Samples worlds** consistent with what it has seen: the cards it cannot place (not in its hand, not played, not
   face up, not known to be in the opponent's hand, not its own Nest or discards) are dealt at random to the
   opponent's hand (as many as she holds), to the Nest while it is set aside, to the opponent's discards when she
   won the bid, and to the face-down draw pile in a random order. Worlds that contradict the blueprint -- the
   heuristic player of ``cardzoo.agents.rook_heuristic``, whose logic the agent assumes for its opponent -- are
   rejected:

   - *bids* (until the play starts, while her hand is the one dealt): the heuristic bids the lowest legal amount
     while it is within ``bid_limit`` of its eleven dealt cards and passes above it, so each bid she made says her
     limit was at least that amount (the compulsory opening excepted) and a pass says it was below the amount she
     declined;
   - *discards*: she lays aside no point card and no trump while she has other cards (the heuristic's order);
   - *voids*: when she did not follow a suit the agent led, she held none of it; the draw pile can refill a suit,
     so her sampled hand holds at most as many cards of it as she has drawn since.

   Discards and voids are respected by construction (her discards are drawn from the cards allowed, and her hand
   is dealt skipping cards of a void suit once she has as many as she can have drawn). Bids are checked: up to
   ``tries`` candidate worlds are drawn per world kept, and if too few agree, those that miss by the least fill
   the sample, so an opponent who is not the heuristic never stalls it.
2. **Evaluates each legal action** in every world (the same worlds for every action): the action is applied to the
   sampled state and the round is played out, every world x action at once on the batched engine
   (:mod:`cardzoo.agents.rook_rollouts`), by a fast rollout policy for both players, batched over the rows -- the
   heuristic's values (cheap wins and cheap losses when second, points and sure winners when leading, low non-point
   cards first, short suits discarded), computed from the sampled state itself, so each rollout player knows the
   world's cards. The value of an action is the mean over the worlds of the round's result for the agent:
   ``objective="score"`` the change of its total minus the opponent's (the single-round reward), ``objective="win"``
   1 for a won round, 0.5 for a tie, plus 1/1000 of that score to break ties.
3. **Bids by simulated hands.** In each world it rolls out the round twice from the trump choice: once with
   itself as bid winner, once with the opponent (trumps by the heuristic's choice). Every bid limit ``M`` (a
   multiple of 5, or "pass now") is then scored by running the rest of the auction in every world -- the agent
   bids the lowest legal amount up to ``M``, the opponent up to her own ``bid_limit`` in that world -- and scoring
   the contract that results against the rolled-out points. The agent bids the lowest legal amount if it is within
   the best limit, else passes. Naming trumps rolls out each of the four suits; each discard rolls out the
   ``discard_candidates`` cheapest cards by the rollout policy's order.

A decision with a single legal action is taken at once. Randomness comes from ``random.Random`` seeded with the
agent's seed and the observation, so the same seed and the same observations give the same decisions, in any
process and in any order of games.

**Budget** (``worlds``, ``bid_worlds``, ``tries``, ``discard_candidates``): rollouts per decision are ``worlds`` x
legal actions in play (played as one batch; ``rollout_policy`` replaces the rollout policy by any batched observation
policy), ``2 x bid_worlds`` per bid (one batch too), ``4 x worlds`` for trumps and ``discard_candidates x worlds``
per discard; sampling draws at most ``tries`` x worlds candidates. The CPU time per decision with the defaults, every
decision of a round counted, and the win rates against the heuristic are in ``evaluation/results/rook_search.json``
(the report's Rook section prints them).

**Checks made while building it** (deals apart from the report's): the rolled-out points of the bid winner match
the points she then took (80 rounds from seed 2000); ``objective="win"`` and ``"score"`` won alike against the
heuristic (120 single rounds each, seeds 1000-1059, both seats; the difference well inside the noise), so the
default stays the round score, the env's reward.

What it leaves out: the opponent's bids are not used once the play has started (her dealt hand is no longer
known in a sampled world), and rollouts use a fixed policy, so strategy fusion across worlds remains.
"""

from __future__ import annotations

import random

import numpy as np

from cardzoo.envs.common.cards import SUIT_MASKS, cards_of
from cardzoo.envs.common.errors import OptionError
from cardzoo.envs.rook import rules
from cardzoo.envs.rook.observer import decode
from cardzoo.envs.rook.rules import (
    BID0,
    BID_STEP,
    DECK_MASK,
    MAX_BID,
    MIN_BID,
    N_CARDS,
    PASS,
    PILE,
    POINT_MASK,
    POINTS,
    ROOK,
    ROOK_BIT,
    ROUND_POINTS,
)  # fmt: skip

from .base import BitsAgent
from .rook_heuristic import bid_limit
from .rook_rollouts import KEEP, Policy, play_out

_BID, _TRUMP, _DISCARD, _PLAY, _DRAW = range(5)
_CONFIG = rules.Config(rounds=1)
OBJECTIVES = ("score", "win")

_RANK = tuple(c % 13 for c in range(N_CARDS))
_SUIT_ROOK = tuple(SUIT_MASKS[s] | ROOK_BIT for s in range(4))
_KEEP = tuple(tuple(row) for row in KEEP.tolist())  # the rollout policy's worth of holding each card, by trumps

# The budget of the registry's ``search_wide``: the same search with about 17 times the worlds, still under issue
# 28's 100 ms of CPU per decision (evaluation/results/rook_learned_search.json records its time). Rook's rollouts
# are cheap, so more worlds buy more than a learned blueprint does there (the same file pairs them).
WIDE_BUDGET = {"worlds": 200, "bid_worlds": 400}


def _discard_order(hand: int, legal: int, trumps: int) -> list[int]:
    """Legal discards, cheapest first: non-trumps before trumps, low ranks and short suits first."""
    tmask = _SUIT_ROOK[trumps]

    def key(c: int) -> tuple[float, int]:
        if tmask >> c & 1:
            return 100.0 + _KEEP[trumps][c], c
        return max(0, _RANK[c] - 7) + 0.3 * (hand & SUIT_MASKS[c // 13]).bit_count() + 0.2 * POINTS[c], c

    return sorted(cards_of(legal), key=key)


# ---------------------------------------------------------------------------- the agent
class RookSearch(BitsAgent):
    """The search player for either seat (observations are seat-relative)."""

    name = "search"

    def __init__(self, seed: int | None = None, worlds: int = 12, bid_worlds: int = 24, tries: int = 20,
                 discard_candidates: int = 4, objective: str = "score", rollout_policy: Policy | None = None):
        """``rollout_policy``: a batched policy ``obs[N, 662], mask[N, 79] -> actions[N]`` that plays both seats in
        the rollouts instead of the search's own rollout policy (None, which reads each sampled world's cards)."""
        if rollout_policy is not None and not callable(rollout_policy):
            raise OptionError(f"rollout_policy must be a batched policy (obs, mask) -> actions, got {rollout_policy!r}")
        self.rollout_policy = rollout_policy
        for option, value in (("worlds", worlds), ("bid_worlds", bid_worlds), ("tries", tries),
                              ("discard_candidates", discard_candidates)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise OptionError(f"RookSearch option {option} must be a whole number >= 1, got {value!r}")
        if objective not in OBJECTIVES:
            raise OptionError(f"RookSearch objective must be one of {', '.join(OBJECTIVES)}, got {objective!r}")
        self.worlds, self.bid_worlds, self.tries = worlds, bid_worlds, tries
        self.discard_candidates, self.objective = discard_candidates, objective
        self.reset(seed)

    def reset(self, seed: int | None = None) -> None:
        self.seed = 0 if seed is None else int(seed)
        self._round_key = None
        self._voids: dict[int, int] = {}  # effective suit -> draws made when the opponent showed the void
        self._last_lead = -1  # the card the agent led at its previous decision, if it led
        self._last_played_opp = 0

    def act_bits(self, bits: int, legal: int, size: int | None = None, n_actions: int | None = None) -> int:
        if not legal:
            raise ValueError("the action mask has no legal action: this agent is not to move")
        view = _Observed(bits)
        self._remember(view)
        if legal & (legal - 1) == 0:
            action = legal.bit_length() - 1
        else:
            rng = random.Random(f"{self.seed}:{bits}:{sorted(self._voids.items())}")
            if view.phase == _BID:
                action = self._bid(view, legal, rng)
            else:
                action = self._search(view, legal, rng)
        self._last_lead = action if view.phase == _PLAY and view.led < 0 else -1
        return action

    # ------------------------------------------------------------------ memory: voids shown by the opponent
    def _remember(self, view: _Observed) -> None:
        key = (view.dealt_by_self, view.my_bids, view.opp_bids)
        played_opp = view.played_opp
        fresh = view.phase in (_BID, _TRUMP, _DISCARD) or key != self._round_key or (
            self._last_played_opp & ~played_opp)
        if fresh:
            self._voids = {}
            self._last_lead = -1
        elif self._last_lead >= 0:
            # The opponent's reply to the agent's lead: her new card that is not the card she leads now.
            new = played_opp & ~self._last_played_opp
            if view.led >= 0 and not view.led_by_self:
                new &= ~(1 << view.led)
            if new and new & (new - 1) == 0:
                reply = new.bit_length() - 1
                lead = self._last_lead
                follow = rules.follow_mask(lead, view.trumps)
                if not follow >> reply & 1:
                    suit = rules.effective_suit(lead, view.trumps)
                    self._voids[suit] = max(self._voids.get(suit, 0), min(view.tricks - 1, 10))
        self._round_key = key
        self._last_played_opp = played_opp

    # ------------------------------------------------------------------ bidding by simulated hands
    def _bid(self, view: _Observed, legal: int, rng: random.Random) -> int:
        lowest = next(a for a in cards_of(legal) if a != PASS)
        low_amount = MIN_BID + (lowest - BID0) * BID_STEP
        can_pass = bool(legal >> PASS & 1)
        me = view.hand
        worlds = self._sample(view, self.bid_worlds, rng)
        # Each world twice from the trump choice: the agent as bid winner, then the opponent; all rolled out at once.
        states = [self._bidder_state([me, opp_hand], nest, pile, who, view)
                  for opp_hand, nest, pile, _ in worlds for who in (0, 1)]
        _, points = self._play_out(states, None)
        bidders = np.array([s.bidder for s in states])
        won = points[np.arange(len(states)), bidders].reshape(len(worlds), 2).tolist()
        # (opponent's bid limit, my points as bid winner, her points as bid winner)
        results = [(bid_limit(opp_hand), mine, hers) for (opp_hand, *_), (mine, hers) in zip(worlds, won, strict=True)]
        limits = [low_amount - BID_STEP] if can_pass else []
        limits += list(range(low_amount, MAX_BID + 1, BID_STEP))
        best_limit, best_value = limits[0], -1e18
        for limit in limits:
            value = 0.0
            for opp_limit, mine, hers in results:
                bidder, amount = _auction(low_amount, limit, opp_limit)
                if bidder == 0:
                    value += self._utility(mine, amount, True)
                else:
                    value += self._utility(hers, amount, False)
            if value > best_value + 1e-9:
                best_limit, best_value = limit, value
        return lowest if low_amount <= best_limit or not can_pass else PASS

    def _bidder_state(self, hands: list[int], nest: int, pile: list[int], who: int, view: _Observed) -> rules.State:
        """One world at the trump choice with ``who`` (0 the agent, 1 the opponent) as bid winner."""
        s = self._state(view, hands, nest, 0, pile, 0, phase=rules.TRUMP)
        s.bidder = view.seat if who == 0 else 1 - view.seat
        s.high_bid = MIN_BID
        s.to_move = s.bidder
        return s

    def _play_out(self, states: list[rules.State], first: list[int] | None) -> tuple[np.ndarray, np.ndarray]:
        """Every state's round played out at once (``first``: each row's first move): score changes and points."""
        return play_out(states, first, self.rollout_policy)

    def _utility(self, points: int, amount: int, mine: bool) -> float:
        """The agent's result when the bid winner (the agent if ``mine``) takes ``points`` with contract ``amount``."""
        bidder_delta = points if points >= amount else -amount
        other_delta = ROUND_POINTS - points
        diff = bidder_delta - other_delta if mine else other_delta - bidder_delta
        return self._value(diff)

    def _value(self, diff: float) -> float:
        if self.objective == "score":
            return diff
        return (1.0 if diff > 0 else 0.5 if diff == 0 else 0.0) + diff / 1000.0

    # ------------------------------------------------------------------ trumps, discards, play, draw
    def _search(self, view: _Observed, legal: int, rng: random.Random) -> int:
        candidates = cards_of(legal)
        if view.phase == _DISCARD:
            candidates = _discard_order(view.hand, legal, view.trumps)[:self.discard_candidates]
            if len(candidates) == 1:
                return candidates[0]
        n = self.worlds
        worlds = self._sample(view, n, rng)
        states = []
        for opp_hand, nest, pile, discards in worlds:
            hands = [view.hand, opp_hand]
            base = self._state(view, hands, nest, discards, pile, view.pile_pos, phase=view.phase)
            states += [base] * len(candidates)  # the rows are loaded, never changed: one state serves them all
        deltas, _ = self._play_out(states, candidates * len(worlds))
        results = deltas.reshape(len(worlds), len(candidates), 2).tolist()
        totals = [0.0] * len(candidates)
        for row in results:  # summed world by world, in the order the worlds were drawn
            for i, result in enumerate(row):
                totals[i] += self._value(result[view.seat] - result[1 - view.seat])
        best = max(range(len(candidates)), key=lambda i: (totals[i], -i))
        return candidates[best]

    # ------------------------------------------------------------------ worlds
    def _sample(self, view: _Observed, n: int, rng: random.Random) -> list[tuple[int, int, list[int], int]]:
        """``n`` worlds: (opponent's hand, Nest while set aside, face-down pile top first, opponent's discards)."""
        unknown = cards_of(view.unknown)
        opp_known = view.opp_known
        need_hand = view.opp_hand_size - opp_known.bit_count()
        need_nest = 3 if view.phase in (_BID, _TRUMP) else 0
        need_discards = 3 if view.opp_is_bidder and view.phase in (_PLAY, _DRAW) else 0
        tmask = _SUIT_ROOK[view.trumps] if view.trumps >= 0 else 0
        if need_discards:
            plain = [c for c in unknown if not (POINT_MASK | tmask) >> c & 1]
            if len(plain) < need_discards:
                plain = [c for c in unknown if not POINT_MASK >> c & 1] or unknown
        kept: list[tuple[float, tuple]] = []
        consistent = 0
        caps = {suit: max(0, view.draws - at) for suit, at in self._voids.items()}
        for _ in range(n * self.tries):
            pool = list(unknown)
            discards = 0
            if need_discards:
                chosen = rng.sample(plain, need_discards) if len(plain) >= need_discards else rng.sample(
                    pool, need_discards)
                for c in chosen:
                    discards |= 1 << c
                pool = [c for c in pool if not discards >> c & 1]
            rng.shuffle(pool)
            # Deal her hand from the shuffled pool, skipping cards of a suit she has shown void in beyond what
            # she can have drawn since (those stay in the pile): every world respects the voids.
            hand, rest, room = opp_known, [], dict(caps)
            taken = 0
            for c in pool:
                suit = view.trumps if c == ROOK else c // 13
                if taken < need_hand and room.get(suit, 1) > 0:
                    hand |= 1 << c
                    taken += 1
                    if suit in room:
                        room[suit] -= 1
                else:
                    rest.append(c)
            miss = float(need_hand - taken)  # voids that cannot all hold (the opponent is not the blueprint)
            for c in rest[:need_hand - taken]:
                hand |= 1 << c
            rest = rest[need_hand - taken:]
            nest = 0
            for c in rest[:need_nest]:
                nest |= 1 << c
            pile = rest[need_nest:]
            if view.phase in (_BID, _TRUMP, _DISCARD) and view.opp_bid_history:  # her hand is the dealt one
                miss += _bid_miss(bid_limit(hand), view.opp_bid_history) / 5.0
            kept.append((miss, (hand, nest, pile, discards)))
            consistent += miss == 0.0
            if consistent >= n:
                break
        kept.sort(key=lambda item: item[0])  # stable: ties keep the order they were drawn in
        return [world for _, world in kept[:n]]

    def _state(self, view: _Observed, hands: list[int], nest: int, discards: int, pile: list[int], pile_pos: int,
               phase: int) -> rules.State:
        """A rules state of the sampled world (one round, the agent in its own seat)."""
        me, opp = view.seat, 1 - view.seat
        s = rules.State.__new__(rules.State)
        s.config, s.rng, s.round_no = _CONFIG, None, 1
        s.dealer = me if view.dealt_by_self else opp
        s.phase, s.to_move = phase, me
        s.hands = [0, 0]
        s.hands[me], s.hands[opp] = hands
        s.nest = nest if phase in (_BID, _TRUMP) else view.nest
        s.discards = view.my_discards | discards
        face = [] if view.face_up < 0 else [view.face_up]
        s.pile = [-1] * pile_pos + face + pile
        s.pile_pos = pile_pos
        s.face_up = None if view.face_up < 0 else view.face_up
        s.known = [0, 0]
        s.known[me], s.known[opp] = view.self_known, view.opp_known
        s.played = [0, 0]
        s.played[me], s.played[opp] = view.played_self, view.played_opp
        s.won = [0, 0]
        s.tricks = [0, 0]
        s.tricks[me], s.tricks[opp] = view.tricks_self, view.tricks_opp
        s.points = [0, 0]
        s.points[me], s.points[opp] = view.points_self, view.points_opp
        s.led = None if view.led < 0 else view.led
        s.leader = opp if view.led >= 0 and not view.led_by_self else me  # the agent leads when nothing is led
        s.trumps = view.trumps
        s.bids = []
        s.high_bid = view.high_bid
        s.passer = None
        s.bidder = None if view.bidder < 0 else (me if view.bidder == 0 else opp)
        s.totals = [0, 0]
        s.outcome = s.winner = None
        s.history = []
        s.last_trick = s.last_round = None
        return s


def _suit_mask(suit: int, trumps: int) -> int:
    return _SUIT_ROOK[suit] if suit == trumps else SUIT_MASKS[suit]


def _bid_miss(limit: int, history: list[tuple[int, bool]]) -> int:
    """How far the heuristic's ``limit`` is from explaining the opponent's bids: ``history`` holds (amount, passed)
    for each of her actions, the amount being the bid she made or the lowest one she declined."""
    miss = 0
    for amount, passed in history:
        if passed:
            miss += max(0, limit - amount + BID_STEP)
        elif amount > MIN_BID:  # an opening at 50 is compulsory whatever the limit
            miss += max(0, amount - limit)
    return miss


def _auction(low_amount: int, my_limit: int, opp_limit: int) -> tuple[int, int]:
    """The rest of the bidding when the agent is to bid ``low_amount`` (the lowest legal), each side bidding the
    lowest legal amount up to its limit: (0 if the agent wins the bid else 1, contract)."""
    amount, me = low_amount, True
    while True:
        limit = my_limit if me else opp_limit
        compulsory = amount == MIN_BID  # only the agent can face the opening bid here
        if amount > limit and not compulsory:
            return (1, amount - BID_STEP) if me else (0, amount - BID_STEP)
        if amount == MAX_BID:
            return (0, amount) if me else (1, amount)
        amount += BID_STEP
        me = not me


class _Observed:
    """The pieces of one observation the search needs, decoded once."""

    def __init__(self, bits: int):
        obs = decode(bits)
        self.phase = obs.phase
        self.hand = obs.hand
        self.seat = 0  # worlds put the agent in seat 0; only relative seats matter
        self.trumps = obs.trumps
        self.led = obs.led.bit_length() - 1
        self.led_by_self = obs.led_by_self
        up = obs.face_up
        self.face_up = up.bit_length() - 1
        self.opp_known = obs.opp_known
        self.self_known = obs.self_known
        self.played_self = obs.played_self
        self.played_opp = obs.played_opp
        self.nest = obs.nest
        self.my_discards = obs.discards
        self.tricks_self = obs.tricks_self
        self.tricks_opp = obs.tricks_opp
        self.tricks = self.tricks_self + self.tricks_opp
        self.points_self = 5 * obs.points_self
        self.points_opp = 5 * obs.points_opp
        self.dealt_by_self = obs.self_dealt
        self.my_bids = obs.bids_self
        self.opp_bids = obs.bids_opp
        self.passed_self, self.passed_opp = obs.passed_self, obs.passed_opp
        high = obs.high_bid
        self.high_bid = None if high < 0 else MIN_BID + BID_STEP * high
        self.bidder = 0 if obs.bidder_self else 1 if obs.bidder_opp else -1
        self.opp_is_bidder = self.bidder == 1
        # The opponent's bidding as the heuristic would have seen it: (amount bid, False) for each of her bids, and
        # (lowest amount she could have bid, True) for her pass. Bids only rise, so the order follows from amounts.
        history = [(MIN_BID + BID_STEP * i, False) for i in cards_of(self.opp_bids)]
        if obs.passed_opp:
            history.append((self.high_bid + BID_STEP, True))
        self.opp_bid_history = history
        # Draws made so far: one after each of the first ten tricks (the trick winner is choosing in DRAW).
        self.draws = min(self.tricks, PILE // 2) - (1 if self.phase == _DRAW else 0)
        self.pile_pos = 2 * self.draws
        visible = (self.hand | self.played_self | self.played_opp | self.opp_known | up | self.nest
                   | self.my_discards)
        self.unknown = DECK_MASK & ~visible
        if self.phase in (_BID, _TRUMP, _DISCARD):
            self.opp_hand_size = rules.HAND
        else:
            on_table = self.hand.bit_count() + self.played_self.bit_count() + self.played_opp.bit_count()
            self.opp_hand_size = len(rules.DECK) - rules.DISCARDS - (PILE - self.pile_pos) - on_table
