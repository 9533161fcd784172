"""Summit Rush search agent: Monte Carlo rollouts of the team's next tick in sampled worlds.

What it knows. Only its observation (and the action mask): the face-up peak cards, every pile's top and the cards
on the piles, each stock's count and the clock. In Summit Rush nothing is private: every player sees the same
table, and nobody -- not even the partner -- knows a face-down peak card, an unturned stock card or a card set
aside. So no action of the partner can reveal anything about them, and the belief over the hidden cards is
exact when it is uniform: every deal of the unseen cards into the face-down positions, the stocks (in turning
order) and the aside is equally likely. (This is why the partner-reading of SPARTA-style search has nothing to
read here; what the team must agree on is who does what, below.)

The search, each tick:

1. **Worlds.** Deal the unseen cards ``worlds`` times at random into the face-down positions, each stock's
   unturned cards (its count is public) and the aside. Each world is a :class:`cardzoo.envs.summit_rush.rules.State`.
2. **Candidates: the team's joint move.** Each pile gets at most one event per tick, made by its owner: a free card
   that fits it, the owner's stock card (turn), or nothing; two piles never take the same card, and a tick of
   waits only is left out (it changes nothing but the clock). Serving one's own pile loses nothing -- a card can
   go onto any pile, and whoever plays it, it is the same tick -- and it makes the joint move collision-free in any
   touch order: different cards, different piles.
3. **Rollouts.** Every candidate is played in every world -- all worlds x candidates at once, on the batched
   engine's array core (:mod:`cardzoo.agents.summit_rush_rollouts`; the rules of :func:`rules.play_tick` in seat
   order) -- then the team continues with the **blueprint** for up to ``depth`` ticks (default: to the end of the
   game): the simple strategy's logic (``cardzoo.agents.summit_rush_simple``) in a one-step form, batched over the
   rows: each pile in seat order takes the free card that fits it and uncovers most, then one that leaves a next
   card for that pile; a stock card is turned only when nothing fits any pile, by the seat with most stock left.
   The blueprint reads only the rows' observations (the face-up cards), as a player would; it never plays a
   world's face-down cards it could not see. It is pluggable: ``search(..., blueprint=factory)`` takes any batched
   policy ``obs[N, O], mask[N, A] -> actions[N]`` (a learned numpy policy on silent observations, say).
4. **Choice.** A rollout's result is a win, then the stock cards left on it (the score); every loss counts the
   same. Every candidate meets the same worlds (common random numbers), so each is compared world by world with
   the **blueprint's own joint move** (the simple strategy's: seat *p* plays the first card of its planned run, the
   seat with most stock turns when nothing fits): it ends better in ``b`` worlds and worse in ``c``. The team
   leaves the blueprint's move for the candidate with the largest ``b - c`` only when ``b - c >= z * sqrt(b + c)``
   (a sign test; ``z`` is an option, 0 follows any gain). Among many noisy candidates the best looks better than
   it is -- the winner's curse -- so, as SPARTA does with its deviation threshold, the blueprint stands unless the
   rollouts speak clearly. With ``wins_only`` a world counts only where one move wins and the other loses (on
   the learned blueprint, counting stock cards saved on wins made the search trade won worlds for saved cards:
   ``evaluation/results/summit_rush_search_learned_dev.json``). A turn is a candidate only for a seat whose pile
   nothing fits ("save your stock"): rollouts of a few worlds cannot tell when spending a stock card early pays.

What each seat assumes of the other. The whole table is public, so both seats of a search team compute the
**same** joint move: the worlds are drawn from a generator seeded by the public part of the observation (never the
seat or the agent's seed) and ``team_seed``, which both seats share like a convention agreed before the game.
Each seat then plays its own pile's event of that joint move, so the team never reaches for one card twice. A
module-level memo keyed by the public observation lets the second seat reuse the first seat's result (a memo of a
pure function of what both see). With a partner that runs another strategy, the seat still plays its part of the
best joint move; the cross-play rows of the results show what that costs. One thing it reads from the partner: a
table that did not change although the joint move gave the partner an event (in a search team some seat acts every
tick, so this never happens there). Then the partner follows another plan -- the simple strategy turns by its own
rule -- and the seat plays the blueprint's joint move, and after a second such tick a move of its own (a turn
first): without this, the two seats waited for each other until the tick cap in untimed games.

On the learned blueprint (``blueprint="learned"``, the registry's ``search_learned``; or any policy files). The
rollouts are played by the trained policy batched over the rows (:mod:`cardzoo.agents.summit_rush_learned_blueprint`),
and the move the search leaves only on a clear gain is the policy's joint move: each seat's action on its own
observation of the table (read in a sampled world -- nothing in an observation is hidden, so any world gives the
real ones), which is what two ``learned`` players would do, collisions and all; the other candidates are the same
as above. What each seat assumes of the other: that the partner runs the same search with the same policy files,
options and ``team_seed`` -- then both compute the same joint move from the same public table and each plays its
part; and, inside every rollout, that both seats play the learned policy from then on. The policy is per seat, so
unlike the simple blueprint's it does not assume a division of the piles: a rollout may have both seats reach for
one card, and the rules settle it. With a partner that plays something else the seat still plays its part of
the team's best joint move, and a stalled table makes it fall back to the policy's joint move (below), not the
simple strategy's. ``blueprint_ticks`` plays the policy only for that many ticks of each rollout and the simple
one-step form to the end (a cheaper rollout). The policy's matrix products should run on one BLAS thread
(``OPENBLAS_NUM_THREADS=1``): OpenBLAS's threads otherwise spin on a busy machine and multiply the CPU time.

Budget and time. A decision costs ``candidates x worlds`` rollouts of at most ``depth`` ticks, played as one
batch (each tick one blueprint call and one engine tick for every row still playing); a tick with one candidate
is not searched. What the batch costs against the per-world rollouts it replaced, at equal worlds and seeds (the
same choices): ``evaluation/results/search_rollouts.json`` (``python -m
cardzoo.evaluation.benchmarks.search_rollouts``). With the defaults
(32 worlds, rollouts to the end, ``z = 1``; 64 worlds did no better on 50 Normal deals) a search team's two seats
share one search per tick (the memo shared), while a search seat with a simple or learned partner pays the whole
search every tick. The CPU time per decision of each setting is in ``evaluation/results/summit_rush_search.json``,
made by ``python -m cardzoo.evaluation.studies.search_summit_rush``, within what the report can afford.

Silent and talking games. The agent says nothing: in a talking game it picks among the moves with message 0, which
are the silent moves themselves. It needs no env options: the number of piles comes from the mask's length, and
the stock and clock sizes from the observation's length, matched against the levels' presets (untimed games need
no match); a timed custom clock that fits no preset raises ``OptionError``.
"""

from __future__ import annotations

import random
from itertools import product

from cardzoo.envs.common.errors import OptionError
from cardzoo.envs.summit_rush import rules
from cardzoo.envs.summit_rush.observer import HEARD_AGES
from cardzoo.envs.summit_rush.rules import N_MESSAGES, N_PEAKS

from .base import BitsAgent
from .summit_rush_rollouts import BlueprintFactory, SimpleBlueprint, blueprint_moves, rollout_values
from .summit_rush_simple import _PILE_RANK, Table, cached_plan, decode_table

_HEARD_PER_SEAT = N_MESSAGES - 1 + HEARD_AGES  # the talk pieces per seat: last message and its age


def clock_of(size: int, piles: int, talk: bool, timed: bool) -> tuple[int, int]:
    """(stock thermometer length per seat, clock ticks) of an observation of ``size`` entries.

    The pieces between ``on_piles`` and the talk pieces hold ``piles * stock_len + ticks`` entries; untimed, the
    clock is empty; timed, the split is the one of a level preset (``rules.LEVELS``, 3 s per action)."""
    start = _PILE_RANK + 17 * piles + 52
    region = size - start - talk * piles * _HEARD_PER_SEAT - 2 - piles
    if not timed:
        if region % piles:
            raise OptionError(f"an observation of {size} entries is no untimed Summit Rush table for {piles} piles")
        return region // piles, 0
    for level in rules.LEVELS.values():
        stock, seconds = level[piles]
        if seconds is not None:
            ticks = rules.Config(players=piles, stock=stock, time_limit=seconds).ticks
            if piles * (stock - 1) + ticks == region:
                return stock - 1, ticks
    raise OptionError(f"the search agent knows the clocks of the levels {list(rules.LEVELS)} only; an observation "
                      f"of {size} entries matches none of them for {piles} piles")


class Public:
    """What the search needs from an observation: the table, the stock counts, the clock."""

    def __init__(self, bits: int, size: int | None, n_actions: int | None):
        obs = decode_table(bits, size, n_actions)
        n = self.piles = obs.piles
        self.talk = obs.talk
        self.table = table = Table(obs)
        timed = obs.timed
        self.stock_len, ticks = clock_of(size, n, self.talk, timed)
        full = (1 << self.stock_len) - 1
        counts = obs.counts  # the stock thermometers, then the clock's
        self.stock_left = tuple((counts >> (p * self.stock_len) & full).bit_count() for p in range(n))
        self.ticks = ticks if timed else None
        self.ticks_left = (counts >> (n * self.stock_len) & ((1 << ticks) - 1)).bit_count() if timed else None
        # What the search reads, the same for every seat and for silent and talking games (it ignores messages).
        self.key = (n, table.wrap, table.present, table.up, tuple(sorted(table.cards.items())), table.tops,
                    table.on_piles, self.stock_len, self.stock_left, self.ticks, self.ticks_left)


def sample_world(pub: Public, rng: random.Random) -> rules.State:
    """One deal of the unseen cards consistent with the public table, as a rules State at the current tick."""
    t, n = pub.table, pub.piles
    seen = t.on_piles
    for card in t.cards.values():
        seen |= 1 << card
    unseen = [c for c in range(52) if not seen >> c & 1]
    rng.shuffle(unseen)
    down = [d for d in range(N_PEAKS) if t.present >> d & 1 and not t.up >> d & 1]
    if len(unseen) < len(down) + sum(pub.stock_left):
        raise OptionError("the observation shows more hidden places than unseen cards: not a Summit Rush table")
    peaks = [0] * N_PEAKS  # gone positions keep a placeholder: the rules never read them again
    for pos, card in t.cards.items():
        peaks[pos] = card
    for pos, card in zip(down, unseen, strict=False):
        peaks[pos] = card
    i = len(down)
    stocks = []
    for left in pub.stock_left:
        stocks.append(unseen[i : i + left])
        i += left
    s = rules.State()
    ticks = pub.ticks
    # One rules tick per clock tick (1 s each), so the clock of the world ends where the real one does.
    s.config = rules.Config(players=n, stock=pub.stock_len + 1, time_limit=ticks, seconds_per_action=1.0,
                            wrap=t.wrap)
    s.fits = rules.FITS[t.wrap]
    s.peaks = peaks
    s.present, s.up = t.present, t.up
    s.tops = list(t.tops)
    s.piles = [[c] for c in t.tops]
    s.on_piles = t.on_piles
    s.stocks = stocks
    s.stock_left = [len(st) for st in stocks]
    s.aside = unseen[i:]
    s.tick = 0 if ticks is None else ticks - pub.ticks_left
    s.outcome = None
    s.conflicts = s.bounced = s.redirected = s.turned = 0
    s.rng = random.Random(0)  # unused: every tick of the search is played in a fixed order
    s.last_order = ()
    s.said = [None] * n
    return s


def candidates(pub: Public) -> list[tuple[int, ...]]:
    """The team's joint moves for this tick (see the module docstring), the simple strategy's own first."""
    t, n = pub.table, pub.piles
    turn, wait = N_PEAKS * n, N_PEAKS * n + 1
    fits = rules.FITS[t.wrap]
    per_pile = []
    for p in range(n):
        opts = [pos * n + p for pos, card in sorted(t.cards.items()) if fits[t.tops[p]] >> card & 1]
        if pub.stock_left[p] and not opts:  # save the stock: a seat turns only when nothing fits its pile
            opts.append(turn)
        opts.append(wait)
        per_pile.append(opts)
    out = []
    for joint in product(*per_pile):
        cards = [a // n for a in joint if a < turn]
        if len(set(cards)) == len(cards) and any(a != wait for a in joint):
            out.append(joint)
    first = blueprint_joint(pub)
    if first in out:
        out.remove(first)
        out.insert(0, first)
    return out


def blueprint_joint(pub: Public) -> tuple[int, ...]:
    """The simple strategy's joint move: seat p plays the first card of its pile's planned run; if nothing fits
    any pile, the seat with most stock left (the lower on ties) turns."""
    t, n = pub.table, pub.piles
    turn, wait = N_PEAKS * n, N_PEAKS * n + 1
    chains = cached_plan(t)
    joint = [chains[p][0] * n + p if chains[p] else wait for p in range(n)]
    if all(a == wait for a in joint):
        turner = max(range(n), key=lambda q: (pub.stock_left[q], -q))
        if pub.stock_left[turner]:
            joint[turner] = turn
    return tuple(joint)


def search(pub: Public, worlds: int, depth: int | None, z: float, team_seed: int,
           blueprint: BlueprintFactory = SimpleBlueprint, blueprint_ticks: int | None = None,
           wins_only: bool = False) -> tuple[int, ...]:
    """The best joint move for the public table ``pub`` (see the module docstring)."""
    return search_with_blueprint(pub, worlds, depth, z, team_seed, blueprint, blueprint_ticks, wins_only)[0]


def search_with_blueprint(pub: Public, worlds: int, depth: int | None, z: float, team_seed: int,
                          blueprint: BlueprintFactory = SimpleBlueprint, blueprint_ticks: int | None = None,
                          wins_only: bool = False) -> tuple[tuple[int, ...], tuple[int, ...], int]:
    """(the joint move chosen, the blueprint's joint move, the candidates rolled out: 0 when one was all there
    was) for the public table ``pub``.

    With the default blueprint the move deviated from is the simple strategy's plan (:func:`blueprint_joint`);
    with any other it is the blueprint's own: every seat's action on its observation of the table, read in a
    sampled world (nothing in the observation is hidden, so every world gives the real observations).
    ``wins_only``: a world counts for or against a candidate only where one of the two wins and the other does
    not (the stock cards left on a win no longer count: a move that saves a card in many won worlds and loses a
    few no longer clears the sign test, which counts worlds, not points)."""
    rng = random.Random(repr((pub.key, team_seed)))  # str seeds hash with SHA-512: the same in every process
    if blueprint is SimpleBlueprint:
        cands = candidates(pub)
        if len(cands) == 1:
            return cands[0], cands[0], 0
        sampled = [sample_world(pub, rng) for _ in range(worlds)]
    else:
        sampled = [sample_world(pub, rng) for _ in range(worlds)]
        first = blueprint_moves(sampled[0], blueprint)
        cands = [first, *(c for c in candidates(pub) if c != first)]
        if len(cands) == 1:
            return first, first, 0
    values = rollout_values(sampled, cands, depth, blueprint, blueprint_ticks)
    if wins_only:
        values = values >= 1
    # worlds where candidate i ends better / worse than the blueprint's move (candidate 0)
    better = (values > values[:, :1]).sum(axis=0).tolist()
    worse = (values < values[:, :1]).sum(axis=0).tolist()
    # Deviate from the blueprint's move only for a clear gain, a sign test over the worlds: among many noisy
    # candidates the best looks better than it is (the winner's curse), as in SPARTA's deviation threshold.
    best = max(range(len(cands)), key=lambda i: (better[i] - worse[i], -i))
    gain = better[best] - worse[best]
    chosen = cands[best] if gain > 0 and gain >= z * (better[best] + worse[best]) ** 0.5 else cands[0]
    return chosen, cands[0], len(cands)


_MEMO: dict[tuple, tuple[tuple[int, ...], tuple[int, ...], int]] = {}


def _blueprint(spec) -> BlueprintFactory:
    """The rollouts' blueprint an option names: ``"simple"``, ``"learned"`` (the registry's shipped policies), or
    policy files (a ``.npz`` path or a list of them)."""
    if isinstance(spec, str) and spec == "simple":
        return SimpleBlueprint
    from .summit_rush_learned_blueprint import LearnedBlueprint  # the policy files load on first use only

    if isinstance(spec, str) and spec == "learned":
        return LearnedBlueprint()
    paths = [spec] if isinstance(spec, str) else spec
    if not isinstance(paths, list | tuple) or not paths or not all(
            isinstance(p, str) and p.endswith(".npz") for p in paths):
        raise OptionError(f"blueprint must be 'simple', 'learned' or .npz policy file path(s), got {spec!r}")
    return LearnedBlueprint(tuple(paths))


class SummitRushSearch(BitsAgent):
    """Rollout search over the team's joint move, for any seat of Summit Rush (see the module docstring)."""

    name = "search"

    def __init__(self, seed: int | None = None, worlds: int = 32, depth: int | None = None, z: float = 1.0,
                 team_seed: int = 0, blueprint: str | list | tuple = "simple", blueprint_ticks: int | None = None,
                 wins_only: bool = False):
        if isinstance(worlds, bool) or not isinstance(worlds, int) or worlds < 1:
            raise OptionError(f"worlds must be a whole number >= 1, got {worlds!r}")
        if depth is not None and (isinstance(depth, bool) or not isinstance(depth, int) or depth < 0):
            raise OptionError(f"depth must be None (to the end) or a whole number >= 0, got {depth!r}")
        if isinstance(z, bool) or not isinstance(z, int | float) or not 0 <= z < float("inf"):
            raise OptionError(f"z must be a finite number >= 0 (0: follow any gain), got {z!r}")
        if isinstance(team_seed, bool) or not isinstance(team_seed, int):
            raise OptionError(f"team_seed must be an int shared by the team's seats, got {team_seed!r}")
        if blueprint_ticks is not None and (isinstance(blueprint_ticks, bool) or not isinstance(blueprint_ticks, int)
                                            or blueprint_ticks < 0):
            raise OptionError(f"blueprint_ticks must be None (the blueprint to the end) or a whole number >= 0, got "
                              f"{blueprint_ticks!r}")
        if not isinstance(wins_only, bool):
            raise OptionError(f"wins_only must be True or False, got {wins_only!r}")
        self.worlds, self.depth, self.z, self.team_seed = worlds, depth, float(z), team_seed
        self.wins_only = wins_only
        self.blueprint_spec = blueprint  # as given (the tests rebuild the agent with another budget from it)
        self.blueprint, self.blueprint_ticks = _blueprint(blueprint), blueprint_ticks
        self.reset(seed)

    def reset(self, seed: int | None = None) -> None:
        """Forget the last decision (what a stalled partner is told from). The seed is not used: both seats must
        sample the same worlds, so the search's randomness comes from the public table and ``team_seed``."""
        # Per seat (one agent may serve both): the table at its last decision, without the clock, and that joint
        # move; and how many decisions in a row found the table as at the one before.
        self._last: dict[int, tuple] = {}
        self.stalled: dict[int, int] = {}
        # What this agent's searches cost and did (a memo hit counts for the seat that searched): searches run,
        # rollouts played (candidates x worlds), joint moves that left the blueprint's.
        self.searches = self.rollouts = self.deviations = 0

    def act_bits(self, bits: int, legal: int, size: int | None = None, n_actions: int | None = None) -> int:
        """The decision from the observation and mask as ints (bit i = entry i) and their lengths; in a talking
        game, the move with message 0 (say nothing)."""
        pub = Public(bits, size, n_actions)
        n = pub.piles
        legal &= (1 << (N_PEAKS * n + 2)) - 1
        if not legal:
            raise ValueError("the action mask has no legal action: the game is over")
        key = (pub.key, self.worlds, self.depth, self.z, self.team_seed, self.blueprint, self.blueprint_ticks,
               self.wins_only)
        found = _MEMO.get(key)
        if found is None:
            if len(_MEMO) > 64:
                _MEMO.clear()
            found = _MEMO[key] = search_with_blueprint(pub, self.worlds, self.depth, self.z, self.team_seed,
                                                       self.blueprint, self.blueprint_ticks, self.wins_only)
            self.searches += found[2] > 0
            self.rollouts += found[2] * self.worlds
            self.deviations += found[0] != found[1]
        joint = self._unstall(pub, found[0], found[1], legal)
        action = joint[pub.table.seat]
        if not legal >> action & 1:
            raise ValueError(f"the search chose action {action}, which the mask forbids: the observation and the "
                             "mask disagree")
        return action

    def _unstall(self, pub: Public, joint: tuple[int, ...], first: tuple[int, ...], legal: int
                 ) -> tuple[int, ...]:
        """The joint move to play, given that the partner may not be playing its part of it.

        In a search team the table changes every tick: some seat acts, and no two events collide. A table that
        did not change although the last joint move gave the partner an event means the partner plays another
        policy -- the simple strategy, say, which turns by its own rule. The search's choice would then be the
        same at the same table, and each seat would wait for the other for ever (untimed games end only at the
        tick cap). So the seat falls back to the blueprint's joint move (what a simple partner does), and after a
        second such tick plays any move of its own (a turn first: it cannot take a card from the partner)."""
        table, seat, wait = pub.key[:-1], pub.table.seat, N_PEAKS * pub.piles + 1
        last, self._last[seat] = self._last.get(seat), (table, joint)
        if last is None or last[0] != table or all(a == wait for p, a in enumerate(last[1]) if p != seat):
            self.stalled[seat] = 0
            return joint
        self.stalled[seat] += 1
        joint = blueprint_joint(pub) if self.blueprint is SimpleBlueprint else first
        if self.stalled[seat] == 1 or joint[seat] != wait:
            return joint
        mine = [a for a in (wait - 1, *range(seat, wait - 1, pub.piles)) if legal >> a & 1]
        return joint if not mine else (*joint[:seat], mine[0], *joint[seat + 1:])

