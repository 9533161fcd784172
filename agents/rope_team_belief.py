"""Rope Team: a learned belief over the partner's hand, and the world sampler the search draws from it.

In the spirit of learned belief search (Hu et al., "Learned Belief Search: Efficiently Improving Policies in
Partially Observable Settings", 2021): instead of drawing worlds uniformly and weighting each by the likelihood of the
partner's plays under a partner model (:mod:`.rope_team_search`'s importance sampling, which replays the partner's
every lead in every one of 256 worlds), a network trained on self-play of a blueprint reads what the seat may see and
gives, for every card, the chance that the partner holds it now. The search then draws exactly the worlds it rolls
out, with no weights.

Input (:func:`inputs`, ``SIZE`` entries): the seat's observation (the 464 entries of
:mod:`cardzoo.envs.rope_team.observer`), then three pieces of the deal's public history and of the hard facts
the observation does not state outright:

- ``void`` (4): the suits the partner showed void in this deal (it did not follow them); the observation holds only
  the set of cards it played, not which trick each fell in;
- ``partner_led`` (52): the cards the partner led this deal (a lead says more about a hand than a follow);
- ``allowed`` (52): the cards the partner may hold -- none in the seat's hand, played this deal, face up on the ridge
  or of a suit it showed void in. A function of the rest, stated because a small MLP finds the face-up ridge cards
  (rank and suit per position) hard to take apart.

Output: 52 logits, ``sigmoid(logit[c])`` the chance the partner holds card ``c`` (trained by per-card log-loss
on the allowed cards only: the rest are known).

Sampling (:func:`sample_worlds`): the face-down ridge cards first, uniformly from the cards that may lie there (never
seen off the ridge in any deal, as the importance sampler draws them); then the partner's hand, exactly its size,
from the allowed cards left: the network's cards taken as independent chances, conditioned on the count (conditional
Bernoulli sampling, exact, :func:`conditional_bernoulli`); the aside is what is left. (Gumbel top-k on the logits,
tried first, draws in proportion to ``exp(logit)`` without replacement, which is not these chances: on held-out
positions its worlds read the learned partner worse than the uniform draw, though the network's own chances read it
better.) Every world honours the hard facts (the partner's voids, every card seen,
its hand size); only how likely each allowed card is comes from the network.

The search with it (:class:`RopeTeamBeliefSearch`, the registry's ``search_belief``) reads the partner better
than the importance sampler at a third of its belief's CPU time and plays at about half the default search's CPU
time per decision (fewer rollouts); how it plays against the default search, the same search at its budget, the
simple strategy and the learned policy on the report's deals, and the read of each belief (log-loss of the
partner's true hand) are in ``evaluation/results/rope_team_belief.json``, made by
``python -m cardzoo.evaluation.studies.belief_rope_team``.

The network file is the policy file format (:mod:`.policy_file`, read as untrusted input by ``read_policy``) with
``meta["kind"] == "rope_team_belief"`` and an input of ``SIZE`` entries; :class:`BeliefNet` refuses anything else
with a ``PolicyError``. ``cardzoo.training.belief`` trains and writes it; the shipped ones are
``agents/beliefs/rope_team_belief*.npz`` (their ``meta`` holds the command, the data and the held-out scores).
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import numpy as np

from cardzoo.envs.common.cards import FULL_MASK, SUIT_MASKS, cards_of
from cardzoo.envs.common.errors import OptionError, PolicyError
from cardzoo.envs.rope_team import rules
from cardzoo.envs.rope_team.observer import LAYOUT, observe_bits

from .policy_file import ACTIVATIONS, read_policy
from .rope_team_search import RopeTeamSearch

KIND = "rope_team_belief"
OBS = LAYOUT.size
SIZE = OBS + 4 + 52 + 52
_NONE = 52  # an empty ridge slot in the rollouts' arrays (rope_team_rollouts.NONE)
_SUIT = np.array(SUIT_MASKS, np.uint64)
_BITS = np.uint64(1) << np.arange(52, dtype=np.uint64)


def _mask(piece: np.ndarray) -> np.ndarray:
    """uint64[N]: each row of a 0/1 piece of 52 entries as a card mask."""
    packed = np.zeros((len(piece), 8), np.uint8)
    packed[:, :7] = np.packbits(piece.astype(np.uint8, copy=False), axis=1, bitorder="little")
    return packed.view(np.uint64)[:, 0]


def _unpack(masks: np.ndarray) -> np.ndarray:
    """float32[N, 52]: card masks as 0/1 rows."""
    return ((np.asarray(masks, np.uint64)[:, None] & _BITS) != 0).astype(np.float32)


def ridge_up_cards(obs: np.ndarray) -> np.ndarray:
    """uint64[N]: the face-up ridge cards of each observation row."""
    up = obs[:, LAYOUT["ridge_up"]].astype(bool)
    rank = obs[:, LAYOUT["ridge_rank"]].reshape(len(obs), rules.RIDGE, 13).argmax(axis=2)
    suit = obs[:, LAYOUT["ridge_suit"]].reshape(len(obs), rules.RIDGE, 4).argmax(axis=2)
    cards = (13 * suit + rank).astype(np.uint64)
    return np.bitwise_or.reduce(np.where(up, np.uint64(1) << cards, np.uint64(0)), axis=1)


def allowed_cards(obs: np.ndarray, void: np.ndarray) -> np.ndarray:
    """uint64[N]: the cards the partner may hold: unseen by the seat this deal, of no suit it showed void in."""
    seen = _mask(obs[:, LAYOUT["hand"]]) | _mask(obs[:, LAYOUT["played_self"]]) \
        | _mask(obs[:, LAYOUT["played_partner"]]) | ridge_up_cards(obs)
    void = np.asarray(void, np.int64)
    void_cards = np.bitwise_or.reduce(np.where((void[:, None] >> np.arange(4)) & 1 == 1, _SUIT, np.uint64(0)), axis=1)
    return np.uint64(FULL_MASK) & ~seen & ~void_cards


def hand_sizes(obs: np.ndarray) -> np.ndarray:
    """int[N]: the partner's cards in hand (13 less those it played this deal)."""
    return rules.HAND - obs[:, LAYOUT["played_partner"]].sum(axis=1).astype(np.int64)


def inputs(obs: np.ndarray, void: np.ndarray, partner_led: np.ndarray) -> np.ndarray:
    """float32[N, SIZE]: what the network reads (see the module docstring), from observation rows (int8[N, 464]),
    the partner's void suits (int[N], bit s = suit s) and the cards it led this deal (uint64[N] masks)."""
    obs = np.asarray(obs)
    if obs.ndim != 2 or obs.shape[1] != OBS:
        raise ValueError(f"the belief reads observations [N, {OBS}], got shape {obs.shape}")
    n = len(obs)
    void = np.asarray(void, np.int64).reshape(n)
    out = np.empty((n, SIZE), np.float32)
    out[:, :OBS] = obs
    out[:, OBS : OBS + 4] = (void[:, None] >> np.arange(4)) & 1
    out[:, OBS + 4 : OBS + 56] = _unpack(np.asarray(partner_led, np.uint64).reshape(n))
    out[:, OBS + 56 :] = _unpack(allowed_cards(obs, void))
    return out


class BeliefNet:
    """A belief file's network, run with numpy: ``logits(x)`` for rows of :func:`inputs`."""

    def __init__(self, path: str | Path):
        policy = read_policy(path)  # every check of a policy file first: the file is untrusted input
        meta = policy.meta
        where = f"belief file {Path(path).name}"
        if meta.get("kind") != KIND:
            raise PolicyError(f"{where} is not a Rope Team belief (meta kind {meta.get('kind')!r}, expected {KIND!r})")
        if meta.get("env") != "rope_team_v0" or meta["observation_size"] != SIZE or meta.get("features"):
            raise PolicyError(f"{where} reads {meta['observation_size']} entries of env {meta.get('env')!r} "
                              f"(features {meta.get('features')!r}); a belief reads the {SIZE} of "
                              "rope_team_belief.inputs for rope_team_v0")
        self.meta = meta
        self.digest = policy.digest
        self.weights, self.action = policy.weights, policy.action
        self.activation = ACTIVATIONS[meta["activation"]]

    def logits(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, np.float32)
        for w, b in self.weights:
            x = self.activation(x @ w + b)
        w, b = self.action
        return x @ w + b

    def worlds(self, agent: RopeTeamSearch, table: rules.State, n_worlds: int) -> dict | None:
        """The worlds of a search decision (``RopeTeamSearch(belief=...)`` calls it): :func:`search_worlds`."""
        return search_worlds(self, agent, table, n_worlds)


def shipped_belief(name: str = "rope_team_belief") -> Path:
    """The path of a belief shipped with the package."""
    path = Path(str(resources.files("cardzoo.agents") / "beliefs" / f"{name}.npz"))
    if not path.is_file():
        raise OptionError(f"no shipped belief {name!r}")
    return path


_LOADED: dict[str, BeliefNet] = {}


def load_belief(belief: str | Path | BeliefNet) -> BeliefNet:
    """A belief by shipped name, path or as is; files are read once per process (the search makes one agent per
    game)."""
    if isinstance(belief, BeliefNet):
        return belief
    if not isinstance(belief, str | Path):
        raise OptionError(f"belief must be a shipped belief's name, a path or a BeliefNet, got {belief!r}")
    path = Path(belief) if Path(belief).suffix == ".npz" else shipped_belief(str(belief))
    key = str(path.resolve())
    if key not in _LOADED:
        _LOADED[key] = BeliefNet(path)
    return _LOADED[key]


_CLIP = 12.0  # logits are clipped to odds of e**12 either way: the products below stay far from float64's limits


def conditional_bernoulli(weights: np.ndarray, h: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Draw, in each row of ``weights`` (float[m, n], odds >= 0), a set of exactly ``h`` columns with probability
    proportional to the product of their odds: independent Bernoulli cards (chance ``w / (1 + w)`` each)
    conditioned on there being ``h`` of them. bool[m, n] (the set), bool[m] (whether the row had ``h`` columns of
    positive odds; if not, its set is empty).

    Exact, by the elementary symmetric sums ``E[i, r]`` of the odds of columns ``i..n-1`` taken ``r`` at a time:
    column ``i`` is taken, with ``r`` still to take, with probability ``w_i E[i+1, r-1] / E[i, r]``."""
    m, n = weights.shape
    e = np.zeros((m, n + 1, h + 1))
    e[:, n, 0] = 1.0
    for i in range(n - 1, -1, -1):
        e[:, i] = e[:, i + 1]
        e[:, i, 1:] += weights[:, i : i + 1] * e[:, i + 1, :-1]
    valid = e[:, 0, h] > 0
    need = np.where(valid, h, 0)
    rows = np.arange(m)
    taken = np.zeros((m, n), bool)
    u = rng.random((m, n))
    for i in range(n):
        left = need > 0
        total = e[rows, i, need]
        p = np.where(left & (total > 0), weights[:, i] * e[rows, i + 1, np.maximum(need - 1, 0)]
                     / np.where(total > 0, total, 1.0), 0.0)
        taken[:, i] = u[:, i] < p
        need = need - taken[:, i]
    return taken, valid


def sample_worlds(net: BeliefNet, obs: np.ndarray, void: int, partner_led: int, ridge: list[int],
                  seen_off_ridge: int, worlds: int, rng: np.random.Generator) -> dict | None:
    """``worlds`` deals of the hidden cards for the seat whose observation is ``obs`` (int8[464]): ``{"partner":
    uint64[worlds] (its hand), "ridge": int[worlds, 9] (every position's card)}``, or None if no world fits.

    ``void``: the partner's void suits (bit s); ``partner_led``: the cards it led this deal; ``ridge``: each
    position's card from the seat's end, -1 face down; ``seen_off_ridge``: the cards the seat saw off the ridge in
    any deal (never face down on it)."""
    obs = np.asarray(obs).reshape(1, OBS)
    x = inputs(obs, np.array([void]), np.array([partner_led], np.uint64))
    logits = net.logits(x)[0].astype(np.float64)
    h = int(hand_sizes(obs)[0])
    allowed_mask = int(allowed_cards(obs, np.array([void]))[0])
    up = sum(1 << c for c in ridge if c >= 0)
    unknown = FULL_MASK & ~(int(_mask(obs[:, LAYOUT["hand"]])[0]) | int(_mask(obs[:, LAYOUT["played_self"]])[0])
                            | int(_mask(obs[:, LAYOUT["played_partner"]])[0]) | up)
    cards = np.array(cards_of(unknown), np.int64)
    bit = _BITS[cards]
    down = [i for i in range(rules.RIDGE) if ridge[i] < 0]
    k, n, m = len(down), len(cards), worlds
    may_ridge = (bit & np.uint64(seen_off_ridge)) == 0
    allowed = (bit & np.uint64(allowed_mask)) != 0
    if may_ridge.sum() < k or allowed.sum() < h:
        return None
    keys = rng.random((m, n))
    keys[:, ~may_ridge] = 2.0
    ridge_idx = np.argsort(keys, axis=1)[:, :k]
    on_ridge = np.zeros((m, n), bool)
    np.put_along_axis(on_ridge, ridge_idx, True, axis=1)
    weights = np.where(allowed & ~on_ridge, np.exp(np.clip(logits[cards], -_CLIP, _CLIP)), 0.0)
    partner, valid = conditional_bernoulli(weights, h, rng)
    partner = np.bitwise_or.reduce(np.where(partner, bit, np.uint64(0)), axis=1)
    if not valid.any():
        return None
    # A ridge that took too many of the allowed cards leaves no hand: such a world is replaced by a valid one.
    keep = np.flatnonzero(valid)
    picks = keep[np.arange(m) % len(keep)]
    full = np.tile(np.array([c if c >= 0 else _NONE for c in ridge], np.int64), (m, 1))
    full[:, down] = cards[ridge_idx]
    return {"partner": partner[picks], "ridge": full[picks]}


def search_worlds(net: BeliefNet, agent: RopeTeamSearch, table: rules.State, worlds: int) -> dict | None:
    """The worlds of a :class:`~cardzoo.agents.rope_team_search.RopeTeamSearch` decision drawn from its learned
    belief: the observation is rebuilt from the agent's public table (its own frame, the seat as seat 0: the same
    bits as the observation it was given), the partner's voids and leads from its memory of the deal's plays."""
    void, led = 0, 0
    for p in agent.partner_plays:
        if p.table.led is None:
            led |= 1 << p.card
        elif p.card // 13 != p.table.led // 13:
            void |= 1 << (p.table.led // 13)
    obs = LAYOUT.to_array(observe_bits(table, 0))
    ridge = [table.ridge[i] if table.up[i] else -1 for i in range(rules.RIDGE)]
    return sample_worlds(net, obs, void, led, ridge, agent.seen_off_ridge, worlds, agent.rng)


BUDGET = {"rollouts": 128, "min_worlds": 8}  # the registry's search_belief; see evaluation/results/rope_team_belief*


class RopeTeamBeliefSearch(RopeTeamSearch):
    """The registry's ``search_belief``: the search with its worlds drawn from a learned belief (by default the
    one trained on the simple strategy's self-play, the blueprint this search assumes of its partner) and a
    smaller budget (``BUDGET``; every option can still be given)."""

    name = "search_belief"

    def __init__(self, seed: int | None = None, belief: str | Path | BeliefNet = "rope_team_belief_simple",
                 **options):
        super().__init__(seed, belief=load_belief(belief), **{**BUDGET, **options})
