"""A perfect-information solver ("oracle") for Summit Rush: can ANY line of play clear this deal?

The oracle sees everything: the face-down peak cards and every stock in turning order. The team cooperates and
hides nothing from the solver, so the question is plain reachability, and the answer is the ceiling no team, however
well its players read each other, can beat on that deal. It is never used as a player in evaluations.

Two abstractions, both stated in the rules' own terms (``cardzoo.envs.summit_rush.rules``):

**Untimed** (:func:`solve`, the document's simulation has no timer): moves are sequential, by either player, in any
order -- a team without a clock can always wait for its partner, so simultaneity adds nothing and loses nothing. A
move is "play the free peak card at ``pos`` onto pile ``p``" (any pile it fits, whoever plays it) or "seat ``p``
turns its stock onto pile ``p``" (at any time, fitting or not). The game is won when the 28 peak cards are gone
and lost when every stock is empty and nothing fits. Every such line is playable in the env one move per tick
(the mover acts, the others wait), and every env game is such a line, so the answer is exact.

**Timed** (:func:`solve_timed`, within ``ticks`` ticks): the search goes tick by tick. In a tick every pile takes
at most one card, played by the pile's owner: a card free at the start of the tick (one uncovered during the tick
is playable from the next), or the owner's next stock card; the piles' cards differ. Such a tick is playable in the
env whatever the who-touches-first order (different cards, different piles, every play checked against the start
of the tick), so ``True`` is sound. Real ticks can, rarely, do one thing this abstraction cannot: put two cards on
one pile (a stock card of the same rank as the old top turned first, then a partner's card that fits both, if the
order is lucky); a line needing that is missed, so ``False`` means "not within ``ticks`` ticks of at most one card
per pile", a slight under-count of what a team with luck on the order could do. The timed search first solves the
deal untimed (no untimed line, no timed one) and schedules the untimed line it finds as early as it can go
(:func:`schedule`); only if that takes too many ticks does the tick-by-tick search run.

Search. Depth-first, with

* a transposition table of positions proven lost: (peaks present, each pile's top rank -- only ranks matter --,
  each stock's position); for the timed search it keeps the most ticks left with which the position was refuted (an
  arrival with no more ticks left cannot do better);
* a sound dead-end test: every peak card still present needs, some day, a pile top one rank away; if no card of a
  neighbouring rank is left anywhere (pile tops, stocks not yet turned, other peak cards), the deal is lost; in the
  timed search also the peak cards left must fit into the ticks left (at most one per pile per tick);
* move order: plays that uncover a face-down card first, then other plays, then stock turns (fullest stock first).

What is proven. ``winnable=True`` comes with ``line``, the moves from the start as ``(seat, action)`` pairs of the
env's actions (untimed: one move per tick, every other seat waiting; timed: ``ticks_line`` gives one action per seat
per tick); replaying it with ``rules.play_tick`` wins (the tests check this). ``winnable=False`` is a complete proof
under the abstraction. ``winnable=None``: the node budget ran out first; nothing is claimed. ``nodes`` counts
positions entered.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cardzoo.envs.summit_rush import rules

DEFAULT_BUDGET = 200_000

_N = rules.N_PEAKS
_COVERS = rules.COVERS
_COVER_MASK = rules.COVER_MASK


def _fit_ranks(wrap: bool) -> tuple[tuple[int, ...], ...]:
    out = []
    for r in range(13):
        nb = []
        if r < 12 or wrap:
            nb.append((r + 1) % 13)
        if r > 0 or wrap:
            nb.append((r - 1) % 13)
        out.append(tuple(nb))
    return tuple(out)


@dataclass
class Solution:
    winnable: bool | None  # None: budget exhausted
    nodes: int
    line: list[tuple[int, int]] = field(default_factory=list)  # untimed: (seat, action) per move
    ticks_line: list[list[int]] = field(default_factory=list)  # timed: one action per seat per tick


def _path_match(need: list[int], supply: list[int], aces_on_kings: int, kings_on_aces: int = 0) -> bool:
    """Can every needing card (``need[r]`` of rank r) get its own base of rank r - 1 or r + 1 (``supply``), ranks on
    a path A..K, with ``aces_on_kings`` Aces already given King bases and ``kings_on_aces`` Kings Ace bases?"""
    left = list(supply)
    left[12] -= aces_on_kings
    left[0] -= kings_on_aces
    if left[12] < 0 or left[0] < 0:
        return False
    for r in range(13):
        want = need[r] - (aces_on_kings if r == 0 else 0) - (kings_on_aces if r == 12 else 0)
        if want <= 0:
            continue
        if r > 0:  # the lower neighbour serves no later rank: use it first
            used = min(want, left[r - 1])
            left[r - 1] -= used
            want -= used
        if want and r < 12:
            used = min(want, left[r + 1])
            left[r + 1] -= used
            want -= used
        if want:
            return False
    return True


class _Deal:
    """The static facts of a position: peak ranks, stocks by rank, fits; and the mutable search position."""

    def __init__(self, s: rules.State):
        self.n = s.config.players
        self.wrap = s.config.wrap
        self.nb = _fit_ranks(self.wrap)
        self.rank = [rules.game_rank(c) for c in s.peaks]
        self.pos_of_rank = [0] * 13
        for pos in range(_N):
            self.pos_of_rank[self.rank[pos]] |= 1 << pos
        # Stocks as game ranks in turning order, and each stock's next index.
        self.stock = [[rules.game_rank(c) for c in st] for st in s.stocks]
        self.sidx = [len(st) - left for st, left in zip(s.stocks, s.stock_left, strict=True)]
        self.stock_counts = []  # [p][i][r]: cards of rank r in stock p from index i on
        for st in self.stock:
            suffix = [[0] * 13 for _ in range(len(st) + 1)]
            for i in range(len(st) - 1, -1, -1):
                suffix[i] = list(suffix[i + 1])
                suffix[i][st[i]] += 1
            self.stock_counts.append(suffix)
        self.present = s.present
        self.up = s.up
        self.tops = [rules.game_rank(c) for c in s.tops]
        self.turn = _N * self.n

    def key(self) -> int:
        k = self.present
        shift = _N
        for t, i in zip(self.tops, self.sidx, strict=True):
            k |= (t | i << 4) << shift
            shift += 9
        return k

    def dead(self) -> bool:
        """True if the peak cards left cannot all find a base. Every peak card must, some day, go onto a card one
        rank away, and each card lies directly under at most one other: the bases are the pile tops now, the stock
        cards not yet turned and the other peak cards. A matching of peak cards to bases by rank (greedy along the
        ranks, exact on a path; round the corner tries every split of the K-A edge) must cover every peak card."""
        present = self.present
        need = [(self.pos_of_rank[r] & present).bit_count() for r in range(13)]
        supply = list(need)
        for t in self.tops:
            supply[t] += 1
        for p, counts in enumerate(self.stock_counts):
            for r, c in enumerate(counts[self.sidx[p]]):
                supply[r] += c
        if not self.wrap:
            return not _path_match(need, supply, 0)
        # Round the corner: a of the Aces (rank 0) lie on Kings (rank 12) and b Kings on Aces; the rest is a path.
        for a in range(min(need[0], supply[12]) + 1):
            for b in range(min(need[12], supply[0]) + 1):
                if _path_match(need, supply, a, b):
                    return False
        return True

    def plays(self, pile: int, taken: int = 0) -> list[tuple[int, int]]:
        """(uncovers, pos) of the free cards fitting ``pile``, not in ``taken``; uncovering plays first."""
        out = []
        up = self.up & ~taken
        for r in self.nb[self.tops[pile]]:
            m = self.pos_of_rank[r] & up
            while m:
                low = m & -m
                m ^= low
                pos = low.bit_length() - 1
                out.append((self._uncovers(pos), pos))
        return out

    def _uncovers(self, pos: int) -> int:
        left = self.present & ~(1 << pos)
        return sum(1 for q in _COVERS[pos] if not left & _COVER_MASK[q])

    def remove(self, pos: int) -> int:
        """Take the card at ``pos`` off the peaks; returns the up-mask bits it turned up (for undo)."""
        self.present &= ~(1 << pos)
        self.up &= ~(1 << pos)
        added = 0
        for q in _COVERS[pos]:
            if not self.present & _COVER_MASK[q]:
                added |= 1 << q
        self.up |= added
        return added

    def restore(self, pos: int, added: int) -> None:
        self.up &= ~added
        self.present |= 1 << pos
        self.up |= 1 << pos


def solve(s: rules.State, budget: int = DEFAULT_BUDGET) -> Solution:
    """Is the position ``s`` winnable untimed by some line of sequential moves? (See the module docstring.)"""
    if s.outcome is not None:
        return Solution(s.outcome == rules.WIN, 0)
    d = _Deal(s)
    n = d.n
    lost: set[int] = set()
    line: list[tuple[int, int]] = []
    nodes = 0

    class Budget(Exception):
        pass

    def search() -> bool:
        nonlocal nodes
        if not d.present:
            return True
        nodes += 1
        if nodes > budget:
            raise Budget
        key = d.key()
        if key in lost or d.dead():
            return False
        moves = []
        for p in range(n):
            for unc, pos in d.plays(p):
                moves.append((-unc, 0, pos, p))
        moves.sort()
        for _, _, pos, p in moves:
            old = d.tops[p]
            added = d.remove(pos)
            d.tops[p] = d.rank[pos]
            line.append((p, pos * n + p))
            if search():
                return True
            line.pop()
            d.tops[p] = old
            d.restore(pos, added)
        for p in sorted(range(n), key=lambda q: d.sidx[q] - len(d.stock[q])):
            if d.sidx[p] < len(d.stock[p]):
                old = d.tops[p]
                d.tops[p] = d.stock[p][d.sidx[p]]
                d.sidx[p] += 1
                line.append((p, d.turn))
                if search():
                    return True
                line.pop()
                d.sidx[p] -= 1
                d.tops[p] = old
        lost.add(key)
        return False

    try:
        won = search()
    except Budget:
        return Solution(None, nodes)
    return Solution(won, nodes, list(line) if won else [])


def solve_timed(s: rules.State, ticks: int | None = None, budget: int = DEFAULT_BUDGET) -> Solution:
    """Is ``s`` winnable within ``ticks`` more ticks (default: the clock's ticks left), at most one card per pile per
    tick, each pile's card played by its owner? (See the module docstring.)"""
    if s.outcome is not None:
        return Solution(s.outcome == rules.WIN, 0)
    if ticks is None:
        ticks = s.ticks_left()
        if ticks is None:
            raise ValueError("an untimed game: give ticks, or use solve()")
    # Every timed line is an untimed line: no untimed win, no timed win. An untimed line scheduled as early as it
    # can go (one card per pile per tick, a card only after the tick that uncovered it) often fits the clock.
    first = solve(s, budget)
    if not first.winnable:
        return first
    scheduled = schedule(s, first.line)
    if len(scheduled) <= ticks:
        return Solution(True, first.nodes, ticks_line=scheduled)
    timed = _solve_timed(s, ticks, max(budget - first.nodes, 0))
    timed.nodes += first.nodes
    return timed


def schedule(s: rules.State, line: list[tuple[int, int]]) -> list[list[int]]:
    """An untimed line as ticks: each pile's cards in the line's order, one per tick, played by the pile's owner,
    each peak card no earlier than the tick after the last of its covers left. (Moves onto a pile ``p`` keep their
    order, so every card meets the top the line gave it.)"""
    n = s.config.players
    turn, wait = _N * n, _N * n + 1
    gone_at = {}  # position -> tick it left in
    pile_free = [0] * n  # first tick at which pile p takes its next card
    events: dict[int, dict[int, int]] = {}
    for seat, action in line:
        if action == turn:
            pile, t = seat, pile_free[seat]
        else:
            pos, pile = divmod(action, n)
            ready = max((gone_at[c] + 1 for c in rules.COVERED_BY[pos] if c in gone_at), default=0)
            t = max(pile_free[pile], ready)
            gone_at[pos] = t
        pile_free[pile] = t + 1
        events.setdefault(t, {})[pile] = action
    # The game ends with the last peak card; stock turns the line made after it (scheduled later) are dropped.
    won = len(gone_at) == s.present.bit_count()
    length = max(gone_at.values(), default=-1) + 1 if won else max(pile_free, default=0)
    return [[events.get(t, {}).get(p, wait) for p in range(n)] for t in range(length)]


def _solve_timed(s: rules.State, ticks: int, budget: int) -> Solution:
    d = _Deal(s)
    n = d.n
    wait = d.turn + 1
    refuted: dict[int, int] = {}  # key -> fewest ticks left with which it was refuted
    plan: list[list[int]] = []
    nodes = 0

    class Budget(Exception):
        pass

    def options(p: int) -> list[tuple]:
        """This tick's choices for pile p: (sort key, kind, value); kind 0 play pos, 1 turn."""
        out = [((-unc, 0), 0, pos) for unc, pos in d.plays(p)]
        if d.sidx[p] < len(d.stock[p]):
            out.append(((1, 0), 1, 0))
        return out

    def search(left: int) -> bool:
        nonlocal nodes
        if not d.present:
            return True
        nodes += 1
        if nodes > budget:
            raise Budget
        if d.present.bit_count() > n * left:
            return False
        key = d.key()
        if refuted.get(key, -1) >= left or d.dead():
            return False
        per_pile = [sorted(options(p)) for p in range(n)]
        actions = [wait] * n

        def assign(p: int, taken: int, acted: bool) -> bool:
            """Choose pile p's event, then the next pile's; at the end apply the tick and search on."""
            if p == n:
                if not acted:
                    return False  # a tick of waits changes nothing but the clock
                plan.append(list(actions))
                if tick(left):
                    return True
                plan.pop()
                return False
            for _, kind, pos in per_pile[p]:
                if kind == 0:
                    if taken >> pos & 1:
                        continue
                    actions[p] = pos * n + p
                    if assign(p + 1, taken | 1 << pos, True):
                        return True
                else:
                    actions[p] = d.turn
                    if assign(p + 1, taken, True):
                        return True
            actions[p] = wait
            return assign(p + 1, taken, acted)

        def tick(left_now: int) -> bool:
            # Apply the tick's events (different piles, different cards: the order does not matter).
            undo = []
            for p in range(n):
                a = actions[p]
                if a == wait:
                    continue
                old = d.tops[p]
                if a == d.turn:
                    d.tops[p] = d.stock[p][d.sidx[p]]
                    d.sidx[p] += 1
                    undo.append((p, old, None, 0))
                else:
                    pos = a // n
                    added = d.remove(pos)
                    d.tops[p] = d.rank[pos]
                    undo.append((p, old, pos, added))
            saved = list(actions)
            ok = search(left_now - 1)
            actions[:] = saved
            for p, old, pos, added in reversed(undo):
                d.tops[p] = old
                if pos is None:
                    d.sidx[p] -= 1
                else:
                    d.restore(pos, added)
            return ok

        found = assign(0, 0, False)
        if not found:
            refuted[key] = max(refuted.get(key, -1), left)
        return found

    try:
        won = search(ticks)
    except Budget:
        return Solution(None, nodes)
    return Solution(won, nodes, ticks_line=[list(t) for t in plan] if won else [])


class SummitRushOracle:
    """Named oracle: it is handed the full game state, never an observation."""

    name = "oracle"

    def __init__(self, budget: int = DEFAULT_BUDGET):
        self.budget = budget

    def solve(self, s: rules.State) -> Solution:
        return solve(s, self.budget)

    def solve_timed(self, s: rules.State, ticks: int | None = None) -> Solution:
        return solve_timed(s, ticks, self.budget)
