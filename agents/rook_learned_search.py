"""Rook for Two search on the learned blueprint: :class:`~cardzoo.agents.rook_search.RookSearch` with the shipped
trained policy in the rollouts and a belief weighted by a model of the opponent.

It is the old search (:mod:`cardzoo.agents.rook_search`: sampled worlds, every legal action rolled out in every
world on the batched engine, bids by simulated hands) with three changes:

1. **Rollouts by the blueprint.** In every world the agent's own later moves are the blueprint's (``blueprint``, a
   policy file: the shipped ``rook_v2`` by default, the policy ``learned`` plays), its most probable legal action,
   computed for every row at once (:class:`Blueprint`: the policy's batched features and its network on all rows).
   The opponent's moves are her model's (``rollout_opponent="model"``, the default) or the blueprint's too
   (``"blueprint"``). The default plays the agent by the policy it will itself follow after this decision and
   the opponent by what it believes she is: against the heuristic the heuristic model predicts her every move in
   the true world, so the rollouts are the round that would follow; the blueprint for both is the self-play
   assumption, kept as an option to measure.
2. **A belief weighted by the opponent model** (``opponent_model``: ``"heuristic"``, the heuristic player, or
   ``"learned"``, the blueprint's probabilities). Of ``oversample`` x ``worlds`` sampled worlds (the old sampler:
   rejection by her bids, discards and voids), each is weighted by the probability the model gives to each card
   she has played whose decision can be rebuilt in that world, mixed with a uniform choice among her legal cards
   (``epsilon``) so that an opponent who is not the model never empties the belief (a move the model would never
   make costs a world a factor ``epsilon / legal cards``, not everything). Then ``worlds`` worlds are drawn by
   systematic resampling on the weights, and every distinct world drawn is rolled out once, counted as often as
   it was drawn. The heuristic model's probability is 1 for its own choice and 0 otherwise, so with it the
   weighting is rejection of worlds where she would have played otherwise, softened by ``epsilon``.

3. **The blueprint's move unless another clearly gains.** After the bidding, the agent plays the blueprint's own
   move (the learned policy's, on its real observation) unless another legal move's mean gain over it, world by
   world on the same worlds, is above ``threshold`` points of round score and above ``z`` standard errors of that
   mean. With 12 worlds the plain best estimate is mostly noise among near-equal cards: the first version, which
   played it, lost to the learned policy alone by 19 points of rounds won against the heuristic (72 rounds on the
   report's deals, McNemar p = 0.013; ``evaluation/results/rook_learned_search_first.json``); with ``threshold=5``,
   ``z=1`` it won 10.7 points more than ``learned`` on the dev deals 5000-5013 (28 rounds, far from significant;
   ``rook_learned_search_dev.json``).

**Which of her moves are weighed.** Her observation at a past card play is rebuilt from the agent's own
observations: her follow to the agent's lead from the agent's observation when it led (plus its card), her lead
from the agent's observation when it follows (minus her card), the seats swapped. Her hand then is the world's
hand now plus the cards she has played since, minus the face-up cards she has taken since; a card she drew
face down is not known, so her plays before her latest hidden draw are not weighed (in the first ten tricks
that leaves the current trick and the tricks since her last hidden draw; from the eleventh trick on, when the pile
is empty, every play from then on). Her Nest piece is not known in a world: the rebuilt view holds her discards
there (the heuristic's count of seen cards is the same; the learned model reads a slightly different vector).
Her bids are used as in the old search (the heuristic's bid limits, until play starts); her draw choices are not
weighed.

**Bidding** is the old search's by simulated hands, with the blueprint in the rollouts (``bids="search"``), or the
blueprint's own bid (``bids="blueprint"``).

**Budget**: rollouts per decision in play are at most ``worlds`` x legal cards (one batch), each step of them one
pass of the heuristic's array form and the network over the rows; ``oversample`` x ``worlds`` worlds are sampled
and weighted (one batch of rebuilt views per weighed move). The CPU time per decision and the win rates are in
``evaluation/results/rook_learned_search.json`` (the report's Rook section prints them).

**Measured** (the report's deals 0-118, both seats, 238 single rounds per match, defaults: 12 worlds, 16 bid
worlds, 36 sampled and weighted, threshold 5, z 1): against the heuristic 65.1 % [58.9, 70.9] of rounds,
``learned`` 65.5 % and ``search`` 63.4 % on the same rounds (paired: -0.4 [-6.7, +5.9] points against
``learned``); mean score difference per round +35.8 against ``learned``'s +18.6; against the old ``search``
50.4 % [44.1, 56.7], ``learned`` 36.1 % (paired +14.3 [+6.5, +22.1], McNemar p = 0.0006). 38.5 ms of CPU per
decision, every decision counted. With the learned opponent model 68.9 % against the heuristic (44 ms); with the
blueprint's bids 67.8 % (35 ms); neither difference is outside the noise. Most lost rounds are the other player's
bid, made (64 of 79 against the heuristic, 95 of 113 against ``search``): it wins the bid in 142 of 238 rounds
against the heuristic, ``learned`` in 162.
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np

from cardzoo.envs.common.errors import OptionError
from cardzoo.envs.rook import rules
from cardzoo.envs.rook.observer import LAYOUT
from cardzoo.envs.rook.rules import BID_STEP, MIN_BID, N_ACTIONS, N_CARDS

from .batched_features import BATCHED, _one_hot
from .learned import NumpyPolicy, shipped_policy
from .rook_heuristic_arrays import choices as heuristic_choices
from .rook_search import _BID, _DISCARD, _PLAY, _TRUMP, RookSearch, _discard_order, _Observed

MODELS = ("heuristic", "learned")
ROLLOUT_OPPONENTS = ("model", "blueprint")
BIDS = ("search", "blueprint")

_OFF, _SIZE = LAYOUT.offsets, LAYOUT.sizes
_SWAPS = (("bids_self", "bids_opp"), ("passed_self", "passed_opp"), ("bidder_self", "bidder_opp"),
          ("opp_known", "self_known"), ("played_self", "played_opp"), ("tricks_self", "tricks_opp"),
          ("points_self", "points_opp"), ("total_self_neg", "total_opp_neg"), ("total_self", "total_opp"))
_SHARED = ("high_bid", "trumps", "face_up")
_CARD_BIT = np.uint64(1) << np.arange(N_CARDS, dtype=np.uint64)
_ONE_THREAD = 262_144
_FOLLOW = np.array([[rules.follow_mask(c, t) for t in range(4)] for c in range(N_CARDS)], np.uint64)


def _piece(bits: int, name: str) -> int:
    return bits >> _OFF[name] & ((1 << _SIZE[name]) - 1)


def her_view(bits: int) -> int:
    """The opponent's observation bits at the moment of the agent's observation ``bits``, without what differs by
    world (her hand, her Nest and discards) or by move (the card led, who led it): seats swapped, her turn, in
    play."""
    out = 0
    for a, b in _SWAPS:
        out |= _piece(bits, a) << _OFF[b] | _piece(bits, b) << _OFF[a]
    for name in _SHARED:
        out |= _piece(bits, name) << _OFF[name]
    if not _piece(bits, "self_dealt"):
        out |= 1 << _OFF["self_dealt"]
    return out | 1 << _OFF["self_to_move"] | 1 << (_OFF["phase"] + rules.PLAY)


def _matmul(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """``x @ w`` in slices of rows small enough that OpenBLAS keeps each product on one thread (it threads a
    product of m x n x k above 262,144): a rollout step's batch is a few dozen rows, and on a busy machine BLAS
    threads waiting for a core cost fifty times the work (24 ms instead of 0.6 for 128 rows of the first layer,
    measured with the team's jobs on both cores). Slicing always, not by the environment, keeps the sums the same
    in every process."""
    step = max(1, _ONE_THREAD // (w.shape[0] * w.shape[1]))
    if len(x) <= step:
        return x @ w
    return np.concatenate([x[i:i + step] @ w for i in range(0, len(x), step)])


def _cards(masks: np.ndarray) -> np.ndarray:
    """bool[..., 53]: the cards of each uint64 mask."""
    return (masks[..., None] & _CARD_BIT) != 0


class Blueprint:
    """A Rook policy file's network on N observations at once: its features in their batched form, then the
    layers (the moves :class:`cardzoo.agents.learned.LearnedAgent` makes, row by row)."""

    def __init__(self, policy: NumpyPolicy):
        self.policy = policy
        self.feature = policy.meta.get("features") or None

    def logits(self, obs: np.ndarray, mask: np.ndarray, heuristic: np.ndarray | None = None) -> np.ndarray:
        """``heuristic``: the heuristic's choices on these rows, if known (the ``rook_heuristic`` features)."""
        if self.feature is None:
            x = obs.astype(np.float32)
        elif self.feature == "rook_heuristic":
            x = _one_hot(obs, mask.shape[1], heuristic_choices(obs, mask) if heuristic is None else heuristic)
        else:
            x = BATCHED[self.feature](obs, mask)
        p = self.policy
        for w, b in p.weights:
            x = p.activation(_matmul(x, w) + b)
        w, b = p.action
        return _matmul(x, w) + b

    def actions(self, obs: np.ndarray, mask: np.ndarray, heuristic: np.ndarray | None = None) -> np.ndarray:
        return np.where(mask.astype(bool), self.logits(obs, mask, heuristic), -np.inf).argmax(axis=1)

    def probabilities(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The masked action distribution, as :meth:`NumpyPolicy.probabilities`."""
        logits = np.where(mask.astype(bool), self.logits(obs, mask), np.float32(-1e8))
        z = np.exp(logits - logits.max(axis=-1, keepdims=True))
        return z / z.sum(axis=-1, keepdims=True)


def load_blueprint(blueprint: str | Path) -> Blueprint:
    """A shipped policy by name (``"rook_v2"``) or a policy file's path, checked to be a Rook policy."""
    if not isinstance(blueprint, (str, Path)):
        raise OptionError(f"blueprint must be a shipped policy's name or a policy file's path, got {blueprint!r}")
    path = Path(blueprint) if Path(blueprint).suffix == ".npz" else shipped_policy(str(blueprint))
    policy = NumpyPolicy(path)
    if policy.meta.get("env") != "rook_v0" or policy.observation_size != LAYOUT.size:
        raise OptionError(f"blueprint {str(blueprint)!r} is not a Rook for Two policy (env "
                          f"{policy.meta.get('env')!r}, observations of {policy.observation_size})")
    return Blueprint(policy)


class _Rollouts:
    """The rollouts' moves for both seats in one pass: the heuristic's choices for every row (the blueprint's
    features need them), the blueprint's move in the agent's rows (seat 0: worlds put the agent there) and in the
    opponent's when she is played by the blueprint, the heuristic's in hers otherwise."""

    def __init__(self, blueprint: Blueprint, opponent_blueprint: bool):
        self.blueprint, self.opponent_blueprint = blueprint, opponent_blueprint

    def by_seat(self, obs: np.ndarray, mask: np.ndarray, seats: np.ndarray) -> np.ndarray:
        heuristic = heuristic_choices(obs, mask)
        rows = slice(None) if self.opponent_blueprint else np.flatnonzero(seats == 0)
        out = heuristic.copy()
        out[rows] = self.blueprint.actions(obs[rows], mask[rows], heuristic[rows])
        return out


class _Move:
    """One card the opponent played, with what is needed to rebuild her view of it in any world."""

    __slots__ = ("base", "card", "led", "before", "draws")

    def __init__(self, base: int, card: int, led: int, before: int, draws: int):
        self.base = base  # her view's bits without hand, Nest, discards
        self.card = card
        self.led = led  # the card she followed (-1: she led)
        self.before = before  # her played cards before this one
        self.draws = draws  # draws made before it


class RookLearnedSearch(RookSearch):
    """The search on the learned blueprint, for either seat."""

    name = "search_learned"

    def __init__(self, seed: int | None = None, worlds: int = 12, bid_worlds: int = 16, tries: int = 20,
                 discard_candidates: int = 4, objective: str = "score", blueprint: str | Path = "rook_v2",
                 opponent_model: str = "heuristic", rollout_opponent: str = "model", oversample: int = 3,
                 epsilon: float = 0.05, bids: str = "search", threshold: float = 5.0, z: float = 1.0):
        if opponent_model not in MODELS:
            raise OptionError(f"opponent_model must be one of {', '.join(MODELS)}, got {opponent_model!r}")
        if rollout_opponent not in ROLLOUT_OPPONENTS:
            raise OptionError(f"rollout_opponent must be one of {', '.join(ROLLOUT_OPPONENTS)}, "
                              f"got {rollout_opponent!r}")
        if bids not in BIDS:
            raise OptionError(f"bids must be one of {', '.join(BIDS)}, got {bids!r}")
        if isinstance(oversample, bool) or not isinstance(oversample, int) or oversample < 1:
            raise OptionError(f"oversample must be a whole number >= 1, got {oversample!r}")
        if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float)) or not 0.0 < epsilon <= 1.0:
            raise OptionError(f"epsilon must be a number in (0, 1] (0 would let a stranger empty the belief), "
                              f"got {epsilon!r}")
        for option, value in (("threshold", threshold), ("z", z)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value < float("inf"):
                raise OptionError(f"{option} must be a number >= 0, got {value!r}")
        self.threshold, self.z = float(threshold), float(z)
        self.blueprint = load_blueprint(blueprint)
        self.opponent_model, self.rollout_opponent, self.bids = opponent_model, rollout_opponent, bids
        self.oversample, self.epsilon = oversample, float(epsilon)
        super().__init__(seed=seed, worlds=worlds, bid_worlds=bid_worlds, tries=tries,
                         discard_candidates=discard_candidates, objective=objective)
        self.rollout_policy = _Rollouts(self.blueprint, opponent_blueprint=rollout_opponent == "blueprint"
                                        or opponent_model == "learned")

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self._moves: list[_Move] = []
        self._her_draws: list[tuple[int, int]] = []  # (draws made after it, the face-up card she took or -1)
        self._prev: tuple[int, _Observed, int] | None = None

    # ------------------------------------------------------------------ acting
    def act_bits(self, bits: int, legal: int, size: int | None = None, n_actions: int | None = None) -> int:
        if not legal:
            raise ValueError("the action mask has no legal action: this agent is not to move")
        view = _Observed(bits)
        self._track(bits, view)
        self._bits, self._legal = bits, legal
        if view.phase == _BID and self.bids == "blueprint" and legal & (legal - 1):
            self._remember(view)
            mask = np.array([[legal >> a & 1 for a in range(N_ACTIONS)]], np.int8)
            action = int(self.blueprint.actions(LAYOUT.to_array(bits)[None, :], mask)[0])
        else:
            action = super().act_bits(bits, legal, size, n_actions)
        self._prev = (bits, view, action)
        return action

    def _track(self, bits: int, view: _Observed) -> None:
        """Log the opponent's card plays and draws since the agent's previous decision."""
        prev = self._prev
        if prev is not None and (prev[1].played_opp & ~view.played_opp or prev[1].played_self & ~view.played_self
                                 or prev[1].dealt_by_self != view.dealt_by_self):
            prev = None  # a new round
        if prev is None or view.phase in (_BID, _TRUMP, _DISCARD):
            self._moves, self._her_draws = [], []
        if view.phase != _PLAY:
            return
        if prev is not None and prev[1].phase in (_PLAY, rules.DRAW) and view.draws == prev[1].draws + 1:
            up = prev[1].face_up  # no draw between two decisions of the agent but this one: the card drawn
            if up >= 0:
                mine = (view.hand | view.played_self) >> up & 1
                self._her_draws.append((view.draws, -1 if mine else up))
        if prev is not None and prev[1].phase == _PLAY and prev[1].led < 0:  # she followed the agent's lead
            p_bits, p_view, lead = prev
            new = view.played_opp & ~p_view.played_opp
            if view.led >= 0 and not view.led_by_self:
                new &= ~(1 << view.led)
            if new and not new & (new - 1):
                # as rules.apply leaves it after the lead: played, led, no longer a known card of the agent's
                base = her_view(p_bits) | 1 << (_OFF["played_opp"] + lead) | 1 << (_OFF["led"] + lead)
                base &= ~(1 << (_OFF["opp_known"] + lead))
                self._moves.append(_Move(base, new.bit_length() - 1, lead, p_view.played_opp, p_view.draws))
        if view.phase == _PLAY and view.led >= 0 and not view.led_by_self:  # she led the card the agent follows
            card = view.led
            base = her_view(bits) & ~(1 << (_OFF["played_self"] + card))
            if any(c == card for _, c in self._her_draws):  # a face-up card she took: known until she played it
                base |= 1 << (_OFF["self_known"] + card)
            self._moves.append(_Move(base, card, -1, view.played_opp & ~(1 << card), view.draws))

    # ------------------------------------------------------------------ the belief
    def weighed_moves(self) -> list[_Move]:
        """Her plays whose decision can be rebuilt in a world: none before her latest face-down draw."""
        hidden = max((j for j, card in self._her_draws if card < 0), default=0)
        return [m for m in self._moves if m.draws >= hidden]

    def rebuilt_views(self, view: _Observed, hands: np.ndarray, discards: np.ndarray, moves: list[_Move]
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Her observations and masks int8[W * M, ...] at each of ``moves`` in each world (her hand now ``hands``
        uint64[W], her discards ``discards``), and the card she played in each row."""
        w, m = len(hands), len(moves)
        since = np.array([view.played_opp & ~mv.before for mv in moves], np.uint64)
        took = np.array([sum(1 << c for j, c in self._her_draws if c >= 0 and j > mv.draws) for mv in moves],
                        np.uint64)
        held = (hands[:, None] | since[None, :]) & ~took[None, :]  # [W, M]
        obs = np.broadcast_to(np.stack([LAYOUT.to_array(mv.base) for mv in moves]), (w, m, LAYOUT.size)).copy()
        obs[:, :, LAYOUT["hand"]] = _cards(held)
        if view.opp_is_bidder:
            own = _cards(discards)[:, None, :]
            obs[:, :, LAYOUT["nest"]] = own
            obs[:, :, LAYOUT["discards"]] = own
        follow = np.array([_FOLLOW[mv.led, view.trumps] if mv.led >= 0 else 0 for mv in moves], np.uint64)
        must = held & follow[None, :]
        legal = np.where(must != 0, must, held)
        mask = np.zeros((w, m, N_ACTIONS), np.int8)
        mask[:, :, :N_CARDS] = _cards(legal)
        cards = np.tile(np.array([mv.card for mv in moves], np.int64), w)
        return obs.reshape(w * m, -1), mask.reshape(w * m, -1), cards

    def world_weights(self, view: _Observed, worlds: list[tuple[int, int, list[int], int]]) -> np.ndarray:
        """float[W]: each world's weight (:meth:`log_weights`), the largest 1."""
        logw = self.log_weights(view, worlds)
        return np.exp(logw - logw.max())

    def log_weights(self, view: _Observed, worlds: list[tuple[int, int, list[int], int]]) -> np.ndarray:
        """float[W]: the log of each world's weight, the product over her weighed plays of the model's
        probability of the card she played, mixed with a uniform choice among her legal cards (``epsilon``);
        zeros when no play is weighed."""
        moves = self.weighed_moves()
        if not moves:
            return np.zeros(len(worlds))
        hands = np.array([w[0] for w in worlds], np.uint64)
        discards = np.array([w[3] for w in worlds], np.uint64)
        obs, mask, cards = self.rebuilt_views(view, hands, discards, moves)
        rows = np.arange(len(cards))
        if self.opponent_model == "heuristic":
            p = (heuristic_choices(obs, mask) == cards).astype(np.float64)
        else:
            p = self.blueprint.probabilities(obs, mask)[rows, cards].astype(np.float64)
        p = (1.0 - self.epsilon) * p + self.epsilon / mask.sum(axis=1)
        return np.log(p).reshape(len(worlds), len(moves)).sum(axis=1)

    def _weighted_worlds(self, view: _Observed, rng: random.Random) -> tuple[list, list[int]]:
        """The worlds to roll out and how many times each was drawn."""
        n = self.worlds
        if not self.weighed_moves():
            worlds = self._sample(view, n, rng)
            return worlds, [1] * len(worlds)
        pool = self._sample(view, n * self.oversample, rng)
        weights = self.world_weights(view, pool)
        edges = np.cumsum(weights / weights.sum())
        edges[-1] = 1.0
        start = rng.random() / n
        picks = np.searchsorted(edges, start + np.arange(n) / n, side="right")
        counts = np.bincount(picks, minlength=len(pool))
        kept = np.flatnonzero(counts)
        return [pool[i] for i in kept], counts[kept].tolist()

    def _state(self, view: _Observed, hands: list[int], nest: int, discards: int, pile: list[int], pile_pos: int,
               phase: int) -> rules.State:
        """The old search's world, with the bidding the agent saw: the blueprint reads it in the rollouts."""
        s = super()._state(view, hands, nest, discards, pile, pile_pos, phase)
        me, opp = view.seat, 1 - view.seat
        for who, amounts, passed in ((me, view.my_bids, view.passed_self), (opp, view.opp_bids, view.passed_opp)):
            s.bids += [(who, MIN_BID + BID_STEP * i) for i in range(amounts.bit_length()) if amounts >> i & 1]
            if passed:
                s.bids.append((who, None))
        return s

    # ------------------------------------------------------------------ trumps, discards, play, draw
    def _search(self, view: _Observed, legal: int, rng: random.Random) -> int:
        mask = np.array([[legal >> a & 1 for a in range(N_ACTIONS)]], np.int8)
        own = int(self.blueprint.actions(LAYOUT.to_array(self._bits)[None, :], mask)[0])
        candidates = [c for c in range(N_ACTIONS) if legal >> c & 1]
        if view.phase == _DISCARD:
            candidates = _discard_order(view.hand, legal, view.trumps)[:self.discard_candidates]
            if own not in candidates:
                candidates.append(own)
        worlds, counts = self._weighted_worlds(view, rng)
        states = []
        for opp_hand, nest, pile, discards in worlds:
            base = self._state(view, [view.hand, opp_hand], nest, discards, pile, view.pile_pos, phase=view.phase)
            states += [base] * len(candidates)
        deltas, _ = self._play_out(states, candidates * len(worlds))
        results = deltas.reshape(len(worlds), len(candidates), 2)
        values = results[:, :, view.seat] - results[:, :, 1 - view.seat]
        if self.objective == "win":
            values = np.where(values > 0, 1.0, np.where(values == 0, 0.5, 0.0)) + values / 1000.0
        # Each candidate against the blueprint's move, world by world (the same worlds: paired differences).
        weights = np.array(counts, np.float64)
        n = weights.sum()
        gain = values - values[:, [candidates.index(own)]]
        mean = weights @ gain / n
        error = np.sqrt(np.maximum(weights @ (gain - mean) ** 2 / n, 0.0) / n)
        better = (mean > self.threshold) & (mean > self.z * error)
        if not better.any():
            return own
        best = max(np.flatnonzero(better).tolist(), key=lambda i: (mean[i], -i))
        return candidates[best]
