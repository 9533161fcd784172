"""A perfect-information solver ("oracle") for Rope Team: can ANY line of play still win this game?

The oracle sees everything: both hands, the face-down ridge and the later deals. The later deals are fixed by the
game's random generator whatever is played (``rules._end_of_deal`` draws one ``shuffled_deck(s.rng)`` per new deal
and drops the ridge cards), so they are computed once, up front, from a clone of the state's generator. What is
left is a one-player puzzle -- the two seats cooperate and hide nothing from the solver -- and the question is
plain reachability: is there a sequence of legal cards that uncovers the whole ridge before a fall or the end of
the last deal? The answer is the ceiling no team, however well it reads its partner, can beat on that deal.

Search. A depth-first search over trick boundaries. A node is the tuple (deal, hand 0, hand 1, leader, coin,
face-up mask of the ridge, trump suit, ropes left); the trick number and the dealer follow from it. At a node it
tries every (lead, follow) pair of one trick -- follow-suit enforced exactly as in ``rules.legal_mask`` -- and
resolves the trick exactly as ``rules.play`` does (``trick_winner``, steps, rope catch, uncovering, trumps, the
win the moment the eighth card turns up, the next deal after the 13th trick, the loss after the last deal).

* Move order: tricks that stop the coin on a face-down card first, then the others (0-step tricks and moves onto
  face-up cards), rope catches after their kind; within each kind, the nearer the coin ends to a face-down card,
  the earlier. Tricks that fall without a rope are never tried: they lose at once.
* Equivalent cards: two cards of one hand, same suit, same steps, with no card between them in rank still held
  by either player this deal (for the follower, the card led also counts as held), behave identically for the
  rest of the deal -- every comparison and every step count comes out the same, and the later deals do not
  depend on play -- so only one card of each such run is tried.
* Transposition table: every node whose search finished without a win is stored as proven losing and never
  searched again (the game graph has no cycles: every trick removes two cards or starts a later deal). Its key
  holds the hands only up to their shape: per suit and step band, the owners of the cards still held, in rank
  order. Two positions of one deal with the same shape and the same coin, ridge, trumps, ropes and leader are
  equivalent -- renaming each card to its namesake keeps every legal move, trick winner and step count -- so a
  loss proven for one is a loss for the other.
* Bounds that prune a node as losing, both sound: (1) each trick uncovers at most one card and a trick of two
  0-step cards moves nothing, so the face-down cards left cannot exceed the tricks still to come that can move
  the coin (this deal's: at most the tricks left and at most the moving cards still held; later deals: the
  same for each known deal); (2) the coin must travel at least from where it is to the nearer and then the
  farther extreme face-down card, every trick spends all of its steps (a rope catch moves the coin less than
  its steps, never more), so the travel cannot exceed the steps held this deal plus the steps of the later deals.

What is proven. ``winnable=True`` comes with ``line``, the card ids in play order from the given state; replaying
it with ``rules.play`` wins (the tests check this). ``winnable=False`` is a complete proof: every line was refuted
by the search, the prunings above being exact. ``winnable=None`` means the node budget ran out first; nothing is
claimed then. ``nodes`` counts the trick-boundary nodes entered (including those answered by the table or the
bounds); the budget caps that count, so the search always ends, and its cost is roughly proportional to it
(a few 10^5 nodes per second on one idle core in CPython, depending on branching).

No RL imports; this module depends only on the rules. It is never used as a player in evaluations: it is the
ceiling, not a baseline.
"""

from __future__ import annotations

from dataclasses import dataclass

from cardzoo.envs.common.cards import SUIT_MASKS, mask_of
from cardzoo.envs.rope_team import rules

DEFAULT_BUDGET = 200_000

_ALL_UP = (1 << rules.RIDGE) - 1
_LAST = rules.RIDGE - 1
_STEPS = rules.STEPS
_SUIT = tuple(c // 13 for c in range(52))
_SUIT_OF = tuple(SUIT_MASKS[c // 13] for c in range(52))
# The cards of c's suit that rank above c.
_ABOVE = tuple(SUIT_MASKS[c // 13] & ~((1 << (c + 1)) - 1) for c in range(52))
_ONE = mask_of(c for c in range(52) if _STEPS[c] == 1)
_TWO = mask_of(c for c in range(52) if _STEPS[c] == 2)
_MOVING = _ONE | _TWO
# Move order: uncovering first, then the rest (0-step tricks and moves onto face-up cards alike), rope catches after
# their kind; within each kind, the nearer the coin ends to a face-down card the earlier.
_STAY, _ROPE = 10, 20
# _NEAR[coin << 9 | up]: how far the coin is from the nearest face-down ridge card (9 if none).
_NEAR = tuple(min([abs((i >> 9) - p) for p in range(9) if not (i & 0x1FF) >> p & 1] or [9]) for i in range(9 << 9))


@dataclass
class Solution:
    """The oracle's answer for one state.

    ``winnable`` is True (a win exists; ``line`` holds one, card ids in play order from the state), False (proven:
    no line wins) or None (the node budget ran out; ``line`` is None). ``nodes`` is the number of nodes searched.
    """

    winnable: bool | None
    line: list[int] | None
    nodes: int


class _BudgetExhausted(Exception):
    pass


def _steps(mask: int) -> int:
    return (mask & _ONE).bit_count() + 2 * (mask & _TWO).bit_count()


_BANDS = ((0, 6), (6, 10), (10, 13))  # the ranks of 0, 1 and 2 steps
_SUIT_SHAPES: dict[int, int] = {}  # a cache shared by all searches; at most 3**13 entries


def _suit_shape(pair: int) -> int:
    """The shape of one suit, ``pair`` = player 0's 13 rank bits | player 1's << 13: per step band, the owners of
    the cards still held, in rank order (a leading 1 marks the length)."""
    code = 0
    for lo, hi in _BANDS:
        seg = 1
        for r in range(lo, hi):
            if pair >> r & 1:
                seg <<= 1
            elif pair >> (r + 13) & 1:
                seg = seg << 1 | 1
        code = code << 7 | seg
    return code


def _shape(h0: int, h1: int) -> int:
    """The hands up to renaming cards within a suit and step band while keeping their order and owners.

    Two deal positions with the same shape (and the same coin, ridge, trumps, ropes, leader, deal) are equivalent:
    mapping each card to its namesake keeps every legal move, trick winner and step count, and the later deals
    do not depend on the cards played.
    """
    code = 0
    for s in (0, 13, 26, 39):
        pair = (h0 >> s) & 0x1FFF | ((h1 >> s) & 0x1FFF) << 13
        shape = _SUIT_SHAPES.get(pair)
        if shape is None:
            shape = _SUIT_SHAPES[pair] = _suit_shape(pair)
        code = code << 21 | shape
    return code


def _representatives(cands: int, live: int) -> list[int]:
    """One card of each run of equivalent cards in ``cands`` (a subset of ``live``), highest first.

    A card is dropped when the next higher ``live`` card of its suit is also a candidate with the same steps: the
    two are interchangeable for the rest of the deal.
    """
    out = []
    m = cands
    while m:
        low = m & -m
        c = low.bit_length() - 1
        m ^= low
        above = live & _ABOVE[c]
        if above:
            nxt = (above & -above).bit_length() - 1
            if cands >> nxt & 1 and _STEPS[nxt] == _STEPS[c]:
                continue
        out.append(c)
    out.reverse()
    return out


def later_deals(state: rules.State) -> dict[int, tuple[int, int, int]]:
    """The hands of every deal after the current one: ``{deal: (hand 0, hand 1, leader)}``.

    Replays what ``rules._end_of_deal`` will do, on a clone of the state's generator (the state is not touched).
    """
    cfg = state.config
    if state.deal >= cfg.max_deals:
        return {}
    if state.rng is None:
        raise ValueError("the state has no random generator, so its later deals are unknown")
    rng = state.copy().rng
    on_ridge = mask_of(state.ridge)
    out = {}
    dealer = state.dealer
    for deal in range(state.deal + 1, cfg.max_deals + 1):
        rest = [c for c in rules.shuffled_deck(rng) if not on_ridge >> c & 1]
        dealer = 1 - dealer
        out[deal] = (mask_of(rest[: rules.HAND]), mask_of(rest[rules.HAND : 2 * rules.HAND]), 1 - dealer)
    return out


def _check(state: rules.State) -> None:
    left = rules.TRICKS_PER_DEAL - state.trick_no
    held = [state.hands[0].bit_count(), state.hands[1].bit_count()]
    if state.led is not None:
        held[state.leader] += 1
        if state.to_move != 1 - state.leader:
            raise ValueError("a card is led but the leader is to move")
    elif state.to_move != state.leader:
        raise ValueError("no card is led but the leader is not to move")
    if held != [left, left]:
        raise ValueError(f"inconsistent state: {left} tricks left but the hands hold {held} cards")
    if sum(state.up) - 1 != state.uncovered or not state.up[rules.CAMP]:
        raise ValueError("inconsistent state: the face-up ridge does not match the uncovered count")


def solve(state: rules.State, node_budget: int = DEFAULT_BUDGET) -> Solution:
    """Whether any line of play from ``state`` wins. See the module docstring. ``state`` is not modified."""
    if state.outcome is not None:
        won = state.outcome == rules.WIN
        return Solution(won, [] if won else None, 0)
    _check(state)
    cfg = state.config
    max_deals = cfg.max_deals
    future = later_deals(state)
    ridge_suit = [c // 13 for c in state.ridge]
    use_trumps = cfg.trumps
    # Per deal d: steps and moving tricks available in the deals after d.
    later_steps, later_moving = {}, {}
    acc_s = acc_m = 0
    for d in range(max_deals, state.deal - 1, -1):
        later_steps[d], later_moving[d] = acc_s, acc_m
        if d in future:
            h0, h1, _ = future[d]
            acc_s += _steps(h0 | h1)
            acc_m += min(rules.TRICKS_PER_DEAL, ((h0 | h1) & _MOVING).bit_count())
    lost: set[tuple] = set()
    nodes = 0
    rev_line: list[int] = []

    def moves(hl: int, hf: int, leader: int, coin: int, up: int, trumps: int, ropes: int, leads, live: int):
        """Each trick worth trying: (priority, lead, follow, winner, coin, up, trumps, ropes), best first."""
        out = []
        follower = 1 - leader
        for lead in leads:
            lb = 1 << lead
            fm = hf & _SUIT_OF[lead]
            if not fm:
                fm = hf
            ls = _SUIT[lead]
            lst = _STEPS[lead]
            for f in _representatives(fm, live | lb):
                fs = _SUIT[f]
                if ls == fs:
                    winner = leader if lead > f else follower
                else:
                    winner = follower if fs == trumps else leader
                st = lst + _STEPS[f]
                if st == 0:
                    out.append((_STAY + _NEAR[coin << 9 | up], lead, f, winner, coin, up, trumps, ropes))
                    continue
                target = coin - st if winner == 0 else coin + st
                r2 = ropes
                rank = 0
                if target < 0 or target > _LAST:
                    if not ropes:
                        continue  # a fall
                    r2 = ropes - 1
                    target = 0 if winner == 0 else _LAST
                    rank = _ROPE
                if up >> target & 1:
                    rank += _STAY + _NEAR[target << 9 | up]
                    out.append((rank, lead, f, winner, target, up, trumps, r2))
                else:
                    t2 = ridge_suit[target] if use_trumps else trumps
                    up2 = up | 1 << target
                    out.append((rank + _NEAR[target << 9 | up2], lead, f, winner, target, up2, t2, r2))
        out.sort(key=lambda m: m[0])
        return out

    def descend(deal, h0, h1, move) -> bool:
        _, lead, f, winner, coin, up, trumps, ropes = move
        if up == _ALL_UP:
            return True
        if not h0 and not h1:  # the 13th trick: next deal or the end
            if deal == max_deals:
                return False
            fh0, fh1, fl = future[deal + 1]
            return search(deal + 1, fh0, fh1, fl, coin, up, trumps, ropes)
        return search(deal, h0, h1, winner, coin, up, trumps, ropes)

    def search(deal: int, h0: int, h1: int, leader: int, coin: int, up: int, trumps: int, ropes: int) -> bool:
        nonlocal nodes
        nodes += 1
        if nodes > node_budget:
            raise _BudgetExhausted
        key = (deal, _shape(h0, h1), leader, coin, up, trumps, ropes)
        if key in lost:
            return False
        live = h0 | h1
        hl, hf = (h0, h1) if leader == 0 else (h1, h0)
        down = _ALL_UP & ~up
        moving_now = min(hl.bit_count(), (live & _MOVING).bit_count())
        if down.bit_count() > moving_now + later_moving[deal]:
            lost.add(key)
            return False
        lo, hi = (down & -down).bit_length() - 1, down.bit_length() - 1
        if coin < lo:
            need = hi - coin
        elif coin > hi:
            need = coin - lo
        else:
            need = min(coin - lo, hi - coin) + hi - lo
        if need > _steps(live) + later_steps[deal]:
            lost.add(key)
            return False
        for move in moves(hl, hf, leader, coin, up, trumps, ropes, _representatives(hl, live), live):
            lead, f = move[1], move[2]
            hl2, hf2 = hl & ~(1 << lead), hf & ~(1 << f)
            n0, n1 = (hl2, hf2) if leader == 0 else (hf2, hl2)
            if descend(deal, n0, n1, move):
                rev_line.extend((f, lead))
                return True
        lost.add(key)
        return False

    s = state
    up0 = sum(1 << i for i in range(rules.RIDGE) if s.up[i])
    h0, h1 = s.hands
    try:
        if s.led is None:
            won = search(s.deal, h0, h1, s.leader, s.coin, up0, s.trumps, s.ropes)
        else:
            won = False
            hl, hf = s.hands[s.leader], s.hands[1 - s.leader]
            for move in moves(hl, hf, s.leader, s.coin, up0, s.trumps, s.ropes, [s.led], h0 | h1):
                hf2 = hf & ~(1 << move[2])
                n0, n1 = (hl, hf2) if s.leader == 0 else (hf2, hl)
                if descend(s.deal, n0, n1, move):
                    rev_line.append(move[2])
                    won = True
                    break
    except _BudgetExhausted:
        return Solution(None, None, node_budget)
    return Solution(won, rev_line[::-1] if won else None, nodes)


def _fingerprint(s: rules.State) -> tuple:
    return (s.deal, s.trick_no, s.to_move, s.led, s.hands[0], s.hands[1], s.coin, tuple(s.up), s.trumps, s.ropes)


class RopeTeamOracle:
    """Plays a winning line when one exists. Takes the full state (``act_state``), never an observation.

    It solves on its first move and then follows its line while the game follows it (both seats may be played by
    the same oracle, or a partner may deviate: then it solves again). When no win is proven (False, or None for
    an exhausted budget) it plays a brake: the legal card with the fewest steps, lowest first. A proven loss stays
    lost, so it is not searched again until ``reset``.
    """

    def __init__(self, node_budget: int = DEFAULT_BUDGET):
        self.node_budget = node_budget
        self.reset()

    def reset(self, seed: int | None = None) -> None:
        """Forget the plan. The oracle is deterministic; ``seed`` is accepted for the agent-like interface."""
        self._shadow: rules.State | None = None
        self._line: list[int] = []
        self._hopeless = False
        self.last_solution: Solution | None = None

    def act_state(self, state: rules.State) -> int:
        legal = rules.legal_mask(state)
        if not legal:
            raise ValueError("the game is over: no card to play")
        if not (self._shadow is not None and self._line and _fingerprint(self._shadow) == _fingerprint(state)):
            self._shadow, self._line = None, []
            if not self._hopeless:
                sol = solve(state, self.node_budget)
                self.last_solution = sol
                if sol.winnable:
                    self._shadow, self._line = state.copy(), list(sol.line)
                elif sol.winnable is False:
                    self._hopeless = True
        if self._line:
            card = self._line.pop(0)
            rules.play(self._shadow, card)
            return card
        cards = [c for c in range(52) if legal >> c & 1]
        return min(cards, key=lambda c: (_STEPS[c], c % 13, c))
