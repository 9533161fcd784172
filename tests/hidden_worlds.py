"""Worlds one player cannot tell apart, for the no-peeking tests of every game and agent (``test_no_peeking.py``
and the agents' own tests).

Whole games, re-dealt (:func:`check_no_peeking`, :func:`twin`). A game A is played through the env with the
agent under test in one seat. At a decision of that seat, every card the seat has not seen so far -- its partner's
or opponent's hand, the face-down ridge or peaks, the unturned stocks, the Nest, the cards set aside -- is
relabelled by a random permutation ``sigma`` of those cards, in the starting deal, in every later deal (the env's
later deals are drawn from the same generator, relabelled by ``sigma``) and in the other seats' moves that name
them (a discard the seat never saw). Game B is A's deal so relabelled, on the same seed, with every other seat's
moves replayed from A. B is consistent with everything the seat has observed: a ``sigma`` under which a replayed
move is illegal (a card of a suit the partner showed void in, say) is drawn again, and after a few misses a
``sigma`` that keeps every card in its suit, which keeps every move legal. Then, move by move up to that decision,
the seat's observation in B must equal its observation in A, and a fresh agent with the same seed, fed B's
observations inside B's live env, must choose what the agent chose in A.

The state-level resamplers (the same table with the hidden cards dealt anew at one moment, for tests of
observers, rollouts and sampled worlds) are here too: :func:`rope_team_hidden_variant`, :func:`rook_resample`,
:func:`summit_rush_resample_hidden`.

:func:`holds_live_objects` walks an agent's references for the env, its game state, its generators or an oracle.
"""

from __future__ import annotations

import contextlib
import gc
import random
import types
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from pettingzoo import AECEnv, ParallelEnv
from pettingzoo.utils.wrappers import BaseWrapper

from cardzoo.envs import rook_v0, rope_team_v0, summit_rush_v0
from cardzoo.envs.common.cards import CARD_NAMES, mask_of
from cardzoo.envs.common.errors import IllegalActionError
from cardzoo.envs.rook import rules as rook_rules
from cardzoo.envs.rope_team import rules as rope_rules
from cardzoo.envs.summit_rush import rules as summit_rules
from cardzoo.envs.summit_rush.rules import N_PEAKS


# ---------------------------------------------------------------------------- what a seat has seen, per game
def rope_team_seen(s: rope_rules.State, seat: int) -> int:
    """The cards ``seat`` sees now: its hand, the cards played in this deal, the face-up ridge."""
    return s.hands[seat] | s.played[0] | s.played[1] | mask_of(c for c, up in zip(s.ridge, s.up, strict=True) if up)


def rook_hidden_from(s: rook_rules.State, seat: int) -> int:
    """The cards ``seat`` cannot place: everything not in her hand, not played, not face up, not known to be in the
    opponent's hand and not among the discards she made herself."""
    opp = 1 - seat
    visible = s.hands[seat] | s.played[0] | s.played[1] | s.known[opp]
    if s.face_up is not None:
        visible |= 1 << s.face_up
    if s.bidder == seat and s.phase not in rook_rules.BID_TRUMP_PHASES:
        visible |= s.discards | s.nest
    return rook_rules.DECK_MASK & ~visible


def rook_seen(s: rook_rules.State, seat: int) -> int:
    return rook_rules.DECK_MASK & ~rook_hidden_from(s, seat)


def summit_rush_hidden(s: summit_rules.State) -> list[int]:
    """The cards nobody has seen: face-down peaks, unturned stock cards, the aside."""
    down = [s.peaks[p] for p in range(N_PEAKS) if s.present >> p & 1 and not s.up >> p & 1]
    return sorted(down + [c for st, left in zip(s.stocks, s.stock_left, strict=True) for c in st[len(st) - left:]]
                  + list(s.aside))


def summit_rush_seen(s: summit_rules.State, seat: int) -> int:
    """Summit Rush hides nothing from one player that it shows another: the cards not hidden from everybody."""
    return ((1 << 52) - 1) & ~mask_of(summit_rush_hidden(s))


def summit_rush_revealed(s: summit_rules.State) -> set[int]:
    """Cards that were ever face up: on a pile, or a face-up peak card."""
    return {c for pile in s.piles for c in pile} | {s.peaks[p] for p in range(N_PEAKS) if s.up >> p & 1}


# ---------------------------------------------------------------------------- the same table, hidden cards anew
def rope_team_hidden_variant(s: rope_rules.State, rng: np.random.Generator, seat: int = 0) -> rope_rules.State:
    """The same table with the hand of ``seat``'s partner, the aside and the face-down ridge dealt afresh among
    themselves: a state ``seat`` cannot tell from ``s``."""
    t = s.copy()
    other = 1 - seat
    down = [i for i in range(rope_rules.RIDGE) if not t.up[i]]
    hidden = [c for c in range(52) if (t.hands[other] | t.aside) >> c & 1] + [t.ridge[i] for i in down]
    perm = rng.permutation(hidden).tolist()
    n1 = t.hands[other].bit_count()
    t.hands[other] = sum(1 << c for c in perm[:n1])
    for i, c in zip(down, perm[n1 : n1 + len(down)], strict=True):
        t.ridge[i] = c
    t.aside = sum(1 << c for c in perm[n1 + len(down) :])
    t.rng = np.random.default_rng(int(rng.integers(2**31)))
    return t


def rook_resample(s: rook_rules.State, seat: int, rng: np.random.Generator) -> rook_rules.State:
    """A state that ``seat`` cannot tell from ``s``: the hidden cards permuted among their places (the opponent's
    unknown cards, the face-down pile, the Nest while set aside, the discards of the other player)."""
    hidden = [card for card in rook_rules.DECK if rook_hidden_from(s, seat) >> card & 1]
    shuffled = rng.permutation(len(hidden)).tolist()
    swap = {card: hidden[j] for card, j in zip(hidden, shuffled, strict=True)}

    def remap(m: int) -> int:
        return mask_of(swap.get(card, card) for card in rook_rules.DECK if m >> card & 1)

    t = s.copy()
    t.hands = [remap(h) for h in s.hands]
    t.pile = [swap.get(card, card) for card in s.pile]
    t.nest = remap(s.nest)
    t.discards = remap(s.discards)
    return t


def summit_rush_resample_hidden(s: summit_rules.State, rng: random.Random | np.random.Generator) -> summit_rules.State:
    """The same public table with every hidden card (face-down peaks, unturned stock cards, the aside) dealt anew:
    a deal no player can tell apart from ``s``."""
    t = s.copy()
    down = [p for p in range(N_PEAKS) if t.present >> p & 1 and not t.up >> p & 1]
    slots = [("peak", p) for p in down]
    for seat, (st, left) in enumerate(zip(t.stocks, t.stock_left, strict=True)):
        slots += [("stock", seat, i) for i in range(len(st) - left, len(st))]
    slots += [("aside", i) for i in range(len(t.aside))]
    cards = [t.peaks[p] for p in down] + [c for st, left in zip(t.stocks, t.stock_left, strict=True)
                                          for c in st[len(st) - left:]] + list(t.aside)
    if isinstance(rng, np.random.Generator):
        cards = [cards[i] for i in rng.permutation(len(cards))]
    else:
        rng.shuffle(cards)
    t.stocks = [list(st) for st in t.stocks]
    t.aside = list(t.aside)
    for slot, card in zip(slots, cards, strict=True):
        if slot[0] == "peak":
            t.peaks[slot[1]] = card
        elif slot[0] == "stock":
            t.stocks[slot[1]][slot[2]] = card
        else:
            t.aside[slot[1]] = card
    assert sorted(summit_rules.cards_in_play(t)) == list(range(52))
    return t


# ---------------------------------------------------------------------------- whole games, re-dealt
@dataclass(frozen=True)
class Game:
    """What the re-dealt games need to know of one game."""

    env_name: str
    make_env: Callable  # options -> env (AEC, or parallel when ``parallel``)
    rules: types.ModuleType
    deck: Callable[[np.random.Generator], list[int]]  # a random starting deal, as card ints in the deck order
    seen: Callable[[object, int], int]  # (state, seat) -> the cards the seat sees now
    suit: Callable[[int], int]  # the class a suit-keeping relabelling keeps a card in
    card_action: Callable[[int], bool]  # whether an action names a card (relabelled in the twin's replay)
    card_name: Callable[[int], str] = CARD_NAMES.__getitem__  # as a deck option spells it
    public_moves: bool = False  # every move is a card both seats see played
    parallel: bool = False


GAMES = {
    "rope_team_v0": Game("rope_team_v0", rope_team_v0.env, rope_rules, rope_rules.shuffled_deck, rope_team_seen,
                         lambda c: c // 13, lambda a: True, public_moves=True),
    "rook_v0": Game("rook_v0", rook_v0.env, rook_rules, rook_rules.shuffled_deck, rook_seen,
                    lambda c: c // 13 if c != rook_rules.ROOK else 4, lambda a: a < rook_rules.N_CARDS,
                    card_name=rook_rules.card_name),
    "summit_rush_v0": Game("summit_rush_v0", summit_rush_v0.parallel_env, summit_rules,
                           lambda rng: rng.permutation(52).tolist(), summit_rush_seen, lambda c: c // 13,
                           lambda a: False, parallel=True),
}


@dataclass
class Trace:
    """One seat's view of a game: its observation (vector and mask, as bytes) before every move or tick, the moves
    of every seat, the seat's own decisions and the cards it had seen by each decision."""

    observations: list[tuple[bytes, bytes]] = field(default_factory=list)
    moves: list = field(default_factory=list)  # AEC: one action per step; parallel: one dict per tick
    decisions: list[int] = field(default_factory=list)  # the index in ``moves`` of each decision of the seat
    chosen: list[int] = field(default_factory=list)  # the seat's action at each decision
    seen: list[int] = field(default_factory=list)  # cards seen by the seat up to each decision


class Diverged(AssertionError):
    """The agent chose otherwise in the twin game."""


@contextlib.contextmanager
def _relabelled_later_deals(game: Game, env, sigma: dict[int, int]):
    """The env's later deals (drawn from the game's generator) relabelled by ``sigma``, as its first one was."""
    original = getattr(game.rules, "shuffled_deck", None)
    rng = getattr(env.unwrapped.game, "rng", None)
    if original is None or rng is None:
        yield
        return

    def shuffled_deck(r):
        deck = original(r)
        return [sigma.get(c, c) for c in deck] if r is rng else deck

    game.rules.shuffled_deck = shuffled_deck
    try:
        yield
    finally:
        game.rules.shuffled_deck = original


def play(game: Game, options: dict, seed: int, deck: list[int], seat: int, agent, others: dict | None = None,
         script: Trace | None = None, until: int | None = None, sigma: dict[int, int] | None = None) -> Trace:
    """A game of ``deck`` on ``seed``, ``agent`` in ``seat`` (None: its moves are replayed from ``script`` too);
    the other seats are the agents ``others`` (seat -> agent) or replay ``script``. Stops after the seat's decision
    number ``until``. With a ``script``, a decision of ``agent`` that differs raises :class:`Diverged`."""
    env = game.make_env(**options, illegal_action="raise")
    trace = Trace()
    seen = 0
    try:
        if game.parallel:
            obs, _ = env.reset(seed=seed, options={"deck": [game.card_name(c) for c in deck]})
            name = env.possible_agents[seat]
            while env.agents:
                trace.observations.append((obs[name]["observation"].tobytes(), obs[name]["action_mask"].tobytes()))
                seen |= game.seen(env.unwrapped.game, seat)
                tick = len(trace.moves)
                if script is not None:
                    moves = dict(script.moves[tick])
                else:
                    moves = {a: others[i].act(obs[a]["observation"], obs[a]["action_mask"])
                             for i, a in enumerate(env.possible_agents) if i != seat}
                if agent is not None:
                    moves[name] = agent.act(obs[name]["observation"], obs[name]["action_mask"])
                _decided(trace, script, tick, moves[name], seen)
                trace.moves.append(moves)
                if until is not None and len(trace.decisions) > until:
                    break
                obs, *_ = env.step(moves)
            return trace
        env.reset(seed=seed, options={"deck": [game.card_name(c) for c in deck]})
        name = env.possible_agents[seat]
        with _relabelled_later_deals(game, env, sigma or {}):
            for current in env.agent_iter():
                obs, _, term, trunc, _ = env.last()
                if term or trunc:
                    env.step(None)
                    continue
                mine = env.observe(name)
                trace.observations.append((mine["observation"].tobytes(), mine["action_mask"].tobytes()))
                seen |= game.seen(env.unwrapped.game, seat)
                step = len(trace.moves)
                if script is not None:
                    action = script.moves[step]
                    action = sigma.get(action, action) if sigma and game.card_action(action) else action
                if current == name:
                    if agent is not None:
                        action = agent.act(obs["observation"], obs["action_mask"])
                    _decided(trace, script, step, action, seen)
                elif script is None:
                    action = others[env.possible_agents.index(current)].act(obs["observation"], obs["action_mask"])
                if game.public_moves:
                    seen |= 1 << int(action)
                trace.moves.append(int(action))
                if until is not None and len(trace.decisions) > until:
                    break
                env.step(action)
        return trace
    finally:
        env.close()


def _decided(trace: Trace, script: Trace | None, index: int, action: int, seen: int) -> None:
    trace.decisions.append(index)
    trace.chosen.append(int(action))
    trace.seen.append(seen)
    if script is not None:
        k = len(trace.chosen) - 1
        if k < len(script.chosen) and script.chosen[k] != int(action):
            raise Diverged(f"decision {k} (move {index}): {script.chosen[k]} in the first game, {action} in its twin")


def relabel(deck: list[int], sigma: dict[int, int]) -> list[int]:
    return [sigma.get(c, c) for c in deck]


def draw_sigma(game: Game, hidden: list[int], rng: random.Random, keep_suits: bool) -> dict[int, int]:
    """A random permutation of ``hidden`` (within each suit with ``keep_suits``)."""
    groups = {}
    for c in hidden:
        groups.setdefault(game.suit(c) if keep_suits else 0, []).append(c)
    sigma = {}
    for cards in groups.values():
        shuffled = list(cards)
        rng.shuffle(shuffled)
        sigma.update(zip(cards, shuffled, strict=True))
    return sigma


def twin(game: Game, options: dict, seed: int, deck: list[int], seat: int, first: Trace, k: int,
         rng: random.Random, tries: int = 12) -> tuple[dict[int, int], list[int]]:
    """A relabelling of the cards ``seat`` had not seen by its decision ``k`` of ``first`` under which every move
    of ``first`` up to that decision is legal (``first`` replayed), and the twin's starting deal."""
    everything = mask_of(deck)
    hidden = [c for c in deck if (everything & ~first.seen[k]) >> c & 1]
    for attempt in range(tries + 1):
        sigma = draw_sigma(game, hidden, rng, keep_suits=attempt == tries)
        other = relabel(deck, sigma)
        try:
            replay = play(game, options, seed, other, seat, None, script=first, until=k, sigma=sigma)
        except IllegalActionError:
            continue  # a move of another seat is illegal there: a world the seat's observations rule out
        assert replay.observations == first.observations[: len(replay.observations)], (
            f"seat {seat}'s observations differ in a deal that relabels only cards it has not seen "
            f"(decision {k}, cards {sorted(c for c in hidden if sigma[c] != c)})")
        return sigma, other
    raise AssertionError("even a suit-keeping relabelling made a replayed move illegal")


@contextlib.contextmanager
def only_new_objects():
    """Inside, the collector sees only the objects made inside: ``gc.collect()`` and a peeking agent's
    ``gc.get_objects()`` walk this check's games, not the millions of objects a whole test session holds (a full
    walk took about 0.4 s there, and a check collects between twins)."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def check_no_peeking(game: Game, options: dict, seed: int, seat: int, make: Callable[[], object], others: dict,
                     cuts: int = 3) -> int:
    """Play a game with ``make()`` in ``seat``; at ``cuts`` of its decisions, build the twin game and check (a) the
    seat's observations are the same move by move and (b) a fresh ``make()`` (same seed) fed them inside the twin's
    live env decides the same. Returns how many twins relabelled a card (changed a hidden card)."""
    with only_new_objects():
        return _check_no_peeking(game, options, seed, seat, make, others, cuts)


def _check_no_peeking(game, options, seed, seat, make, others, cuts):
    rng = random.Random(seed)
    deck = game.deck(np.random.default_rng(seed))
    first = play(game, options, seed, deck, seat, make(), others)
    n = len(first.decisions)
    if not n:
        return 0
    changed = 0
    for k in sorted({0, n // 2, n - 1, *(rng.randrange(n) for _ in range(max(0, cuts - 3)))})[:max(cuts, 1)]:
        sigma, other = twin(game, options, seed, deck, seat, first, k, rng)
        changed += any(sigma[c] != c for c in sigma)
        gc.collect()  # the earlier games' envs are gone before the agent acts in the twin
        second = play(game, options, seed, other, seat, make(), script=first, until=k, sigma=sigma)
        assert second.observations == first.observations[: len(second.observations)]
        assert second.chosen == first.chosen[: k + 1]
    return changed


# ---------------------------------------------------------------------------- references an agent must not hold
def _live_objects(env) -> tuple[set[int], list]:
    """The ids of the env's layers, its game state, the state's containers and its random generators."""
    ids: set[int] = set()
    keep = []
    layer = env
    while layer is not None:
        ids.add(id(layer))
        keep.append(layer)
        layer = getattr(layer, "env", None) if isinstance(layer, BaseWrapper) else None
    raw = env.unwrapped
    ids.add(id(raw))
    state = raw.game
    for obj in (state, *(getattr(state, name, None) for name in getattr(type(state), "__slots__", ()))):
        if obj is not None and not isinstance(obj, (int, float, str, bool, tuple, frozenset, np.ndarray)) \
                and not dataclass_instance(obj):
            ids.add(id(obj))
            keep.append(obj)
    for value in vars(raw).values():
        if isinstance(value, (np.random.Generator, random.Random)):
            ids.add(id(value))
            keep.append(value)
    return ids, keep


def dataclass_instance(obj) -> bool:
    return hasattr(type(obj), "__dataclass_fields__")  # frozen configs are shared values, not the live state


def _oracle_types() -> tuple[type, ...]:
    from cardzoo.agents.oracles import rope_team, summit_rush

    return tuple(v for m in (rope_team, summit_rush) for v in vars(m).values()
                 if isinstance(v, type) and v.__module__ == m.__name__)


def holds_live_objects(agent, env) -> list[str]:
    """What of ``env`` (its layers, its game state and the state's parts, its generators), of any env, or of an
    oracle ``agent`` can reach by following references (``gc.get_referents``), not through modules' globals (shared
    tables) nor into classes other than cardzoo's. Empty when it holds none."""
    forbidden, _keep = _live_objects(env)
    module_dicts = {id(vars(m)) for m in list(__import__("sys").modules.values()) if m is not None}
    oracles = _oracle_types()
    found = []
    seen: set[int] = set()
    stack = [agent]
    while stack:
        obj = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if isinstance(obj, types.ModuleType) or id(obj) in module_dicts:
            continue
        if isinstance(obj, type) and not obj.__module__.startswith("cardzoo."):
            continue
        if id(obj) in forbidden or isinstance(obj, (AECEnv, ParallelEnv, BaseWrapper, *oracles)):
            found.append(f"{type(obj).__module__}.{type(obj).__qualname__}")
            continue
        stack.extend(gc.get_referents(obj))
    return found
