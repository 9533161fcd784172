"""The input features of :mod:`cardzoo.agents.features` for N rows at once, in array operations.

``BATCHED[name](obs, mask)`` takes ``obs`` (int8[N, O]) and ``mask`` (int8[N, A]), the rows a batched engine
returns, and gives float32[N, O + extra]: row ``i`` equals ``FEATURES[name][0](obs[i], mask[i])`` entry for entry
(the tests compare them on thousands of decisions of every level). The batched trainer
(:mod:`cardzoo.training.ppo_batched`) reads these, where a Python call per row cost more than the trainer's own
work per decision.

``rope_team_scores`` restates nothing of the simple strategy: the card values come from the search rollouts' array
form of it (:meth:`cardzoo.agents.rope_team_rollouts.Games.values`, itself tested card for card against
:class:`~cardzoo.agents.rope_team_simple.RopeTeamSimple`), fed with rows decoded from the observations.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from cardzoo.envs.common.cards import FULL_MASK
from cardzoo.envs.rook.observer import LAYOUT as ROOK_LAYOUT
from cardzoo.envs.rope_team.observer import LAYOUT as ROPE_LAYOUT
from cardzoo.envs.summit_rush.observer import HEARD_AGES, piles_of
from cardzoo.envs.summit_rush.rules import (
    N_MESSAGES,
    N_PEAKS,
    SAY_DONT_TURN,
    SAY_NEED,
    SAY_NOTHING,
    SAY_TAKING,
    SAY_TURN,
)

from .features import _stock_piece
from .rook_heuristic_arrays import choices as rook_choices
from .rope_team_rollouts import NONE, Games, best_cards
from .summit_rush_arrays import _COVER, _FIT, _POS, Tables, _last, plan

Batched = Callable[[np.ndarray, np.ndarray], np.ndarray]


def _check(obs: np.ndarray, mask: np.ndarray, size: int | None, n_actions: int | None, name: str
           ) -> tuple[np.ndarray, np.ndarray]:
    """The rows as 2-D arrays of one length, or a ValueError naming what is wrong."""
    obs, mask = np.asarray(obs), np.asarray(mask)
    if obs.ndim != 2 or mask.ndim != 2 or len(obs) != len(mask):
        raise ValueError(f"{name} takes observations [N, O] and masks [N, A] of the same N, got shapes "
                         f"{obs.shape} and {mask.shape}")
    if size is not None and obs.shape[1] != size:
        raise ValueError(f"{name} reads observations of {size} entries, got {obs.shape[1]}")
    if n_actions is not None and mask.shape[1] != n_actions:
        raise ValueError(f"{name} reads masks of {n_actions} actions, got {mask.shape[1]}")
    return obs, mask


def _masks(piece: np.ndarray) -> np.ndarray:
    """uint64[N]: each row of a 0/1 piece of at most 64 entries as a bit mask (entry i = bit i)."""
    packed = np.packbits(piece.astype(np.uint8, copy=False), axis=1, bitorder="little")
    out = np.zeros((len(piece), 8), np.uint8)
    out[:, : packed.shape[1]] = packed
    return out.view(np.uint64)[:, 0]


def _index(piece: np.ndarray, none: int = -1) -> np.ndarray:
    """int64[N]: the index of each row's one-hot entry, ``none`` where the row is all zeros."""
    return np.where(piece.any(axis=1), piece.argmax(axis=1), none).astype(np.int64)


# ----------------------------------------------------------------------------- Rope Team
_R = {name: ROPE_LAYOUT[name] for name in ROPE_LAYOUT.offsets}
_RIDGE = ROPE_LAYOUT.sizes["ridge_up"]
_POSITION_BITS = np.int64(1) << np.arange(_RIDGE, dtype=np.int64)


def _rope_team_rows(obs: np.ndarray, legal: np.ndarray) -> Games:
    """A :class:`Games` batch (the viewer as seat 0, coin and ridge from its end, as the observation has them) of
    rows that all lead or all follow; its slots are each row's legal cards (``NONE`` padded)."""
    n = len(obs)
    led = _index(obs[:, _R["led"]])
    up_piece = obs[:, _R["ridge_up"]].astype(bool)
    rank = obs[:, _R["ridge_rank"]].reshape(n, _RIDGE, 13).argmax(axis=2)
    suit = obs[:, _R["ridge_suit"]].reshape(n, _RIDGE, 4).argmax(axis=2)
    ridge_cards = np.bitwise_or.reduce(
        np.where(up_piece, np.uint64(1) << (13 * suit + rank).astype(np.uint64), np.uint64(0)), axis=1)
    # the legal cards of each row, ascending, then NONE: the values' slots
    cards = np.sort(np.where(legal, np.arange(52), NONE), axis=1)[:, : int(legal.sum(axis=1).max())]
    leading = led[0] < 0
    return Games(
        None, slots=cards[:, None, :], hands=_masks(obs[:, _R["hand"]])[:, None],
        played=_masks(obs[:, _R["played_self"]]) | _masks(obs[:, _R["played_partner"]]),
        ridge_up=ridge_cards & np.uint64(FULL_MASK), up=(up_piece * _POSITION_BITS).sum(axis=1),
        coin=obs[:, _R["coin"]].argmax(axis=1).astype(np.int64), trumps=_index(obs[:, _R["trumps"]], 0) - 1,
        ropes=obs[:, _R["ropes"]].argmax(axis=1).astype(np.int64), led=led,
        # the mover is seat 0: the leader when leading, the other seat when following
        leader=np.full(n, 0 if leading else 1, np.int64),
    )


def rope_team_scores(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
    obs, mask = _check(obs, mask, ROPE_LAYOUT.size, 52, "rope_team_scores")
    n, base = obs.shape
    out = np.zeros((n, base + 104), np.float32)
    out[:, :base] = obs
    legal = mask.astype(bool)
    deciding = legal.any(axis=1)
    following = obs[:, _R["led"]].any(axis=1)
    for rows in (np.flatnonzero(deciding & ~following), np.flatnonzero(deciding & following)):
        if not len(rows):
            continue
        games = _rope_team_rows(obs[rows], legal[rows])
        cards, _, values = games.values()
        held = cards < NONE
        at = np.broadcast_to(rows[:, None], cards.shape)
        out[at[held], base + cards[held]] = np.tanh(values[held] / 50.0)
        out[rows, base + 52 + best_cards(cards, held, values)] = 1.0
    return out


# ----------------------------------------------------------------------------- Summit Rush
def _summit_rush_moves(obs: np.ndarray, mask: np.ndarray, turner: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """The silent simple strategy's move for every row (-1 where the mask is empty): seat p plays the first card
    of its pile's planned run or waits; when no card fits, the seat ``turner`` names for those rows turns
    (``SummitRushSimple.move``)."""
    n = piles_of(mask.shape[1])
    n_moves = N_PEAKS * n + 2
    turn, wait = n_moves - 2, n_moves - 1
    legal = mask[:, :n_moves].astype(bool)  # the moves with no message: every message goes with any legal move
    moves = np.full(len(obs), -1, np.int64)
    deciding = np.flatnonzero(mask.any(axis=1))
    if not len(deciding):
        return moves
    tables = Tables(obs[deciding], mask.shape[1])
    legal = legal[deciding]
    plays = legal[:, :turn].any(axis=1)
    at = np.arange(len(deciding))
    move = np.where((turner(deciding) == tables.seat) & legal[:, turn], turn, wait)
    if plays.any():
        first, _ = plan(tables.rows(plays))
        mine = first[np.arange(len(first)), tables.seat[plays]]
        move[plays] = np.where(mine >= 0, mine * n + tables.seat[plays], wait)
    moves[deciding] = np.where(legal[at, move], move, wait)  # as the agent: never an illegal action
    return moves


def _one_hot(obs: np.ndarray, width: int, moves: np.ndarray) -> np.ndarray:
    n, base = obs.shape
    out = np.zeros((n, base + width), np.float32)
    out[:, :base] = obs
    rows = np.flatnonzero(moves >= 0)
    out[rows, base + moves[rows]] = 1.0
    return out


def summit_rush_simple(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
    obs, mask = _check(obs, mask, None, None, "summit_rush_simple")
    lowest = lambda rows: np.zeros(len(rows), np.int64)  # noqa: E731 (no memory: the lowest seat turns)
    return _one_hot(obs, mask.shape[1], _summit_rush_moves(obs, mask, lowest))


def summit_rush_simple_exact(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
    obs, mask = _check(obs, mask, None, None, "summit_rush_simple_exact")
    start, length, players = _stock_piece(obs.shape[1], mask.shape[1])  # a ValueError for other settings

    def most_stock(rows: np.ndarray) -> np.ndarray:
        """The seat with the most stock left (fewest turned), ties to the lower seat: ``SummitRushSimple.turner``."""
        left = obs[rows, start : start + players * length].reshape(-1, players, length).sum(axis=2)
        return left.argmax(axis=1)

    return _one_hot(obs, mask.shape[1], _summit_rush_moves(obs, mask, most_stock))


def _fresh(obs: np.ndarray, n: int) -> np.ndarray:
    """int64[N, piles]: each seat's message said during the last tick (0, nothing, if none or older)."""
    size, said = obs.shape[1], N_MESSAGES - 1
    ago_off = size - 2 - n - HEARD_AGES * n
    heard_off = ago_off - said * n
    message = _last(obs[:, heard_off : heard_off + said * n].reshape(-1, n, said)) + 1  # one-hot over 1..56
    ago = _last(obs[:, ago_off : ago_off + HEARD_AGES * n].reshape(-1, n, HEARD_AGES))
    return np.where((message > 0) & (ago == 0), message, SAY_NOTHING)


def _talk(obs: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``SummitRushSimpleTalk``'s (move, message) for rows of a talking game with a legal action, as a fresh agent
    (no turns remembered: the lowest seat is the turner; it has not just turned)."""
    n = piles_of(mask.shape[1])
    n_moves = N_PEAKS * n + 2
    turn, wait = n_moves - 2, n_moves - 1
    legal = mask[:, :n_moves].astype(bool)
    tables = Tables(obs, mask.shape[1])
    at, me = np.arange(len(obs)), tables.seat
    fresh = _fresh(obs, n)
    plays = legal[:, :turn].any(axis=1)
    # claims said last tick that still stand (still free, still fitting), the lower seat first
    claims = np.full((len(obs), n), -1, np.int64)
    for q in range(n):
        pos = fresh[:, q] - SAY_TAKING
        ok = (pos >= 0) & (pos < N_PEAKS)
        ok[ok] &= legal[at[ok], pos[ok] * n + q]
        ok &= ~(claims == pos[:, None]).any(axis=1)
        claims[ok, q] = pos[ok]
    first, second = plan(tables.after(claims))
    tick = np.where(claims >= 0, claims, np.where(plays[:, None], first, -1))
    claimed = claims[at, me] >= 0
    mine = np.where(claimed, first[at, me], second[at, me])
    partner = np.arange(n)[None, :] != me[:, None]
    partner_turn = (partner & (fresh == SAY_TURN)).any(axis=1)
    turns_now = ~(partner & np.isin(fresh, (SAY_TURN, SAY_DONT_TURN))).any(axis=1) & (
        (fresh[at, me] == SAY_TURN) | (me == 0))
    move = np.where(tick[at, me] >= 0, tick[at, me] * n + me,
                    np.where(plays, wait, np.where(turns_now & legal[:, turn], turn, wait)))
    # the message, by priority: objection, turn, claim, need
    top = (tables.tops[at, me] % 13 + 1) % 13
    nb = _FIT[tables.wrap.astype(np.int64), top]  # the ranks that fit this seat's pile, as a mask
    grank = np.where(tables.cards >= 0, (tables.cards % 13 + 1) % 13, 13)
    fits_own = ((nb[:, None] >> grank) & 1 == 1).any(axis=1)  # rank 13 (no card) is never in the mask
    unseen = tables.unseen()
    need = np.argmax(np.where((nb[:, None] >> np.arange(13)) & 1 == 1, unseen * 16 + np.arange(13), -1), axis=1)
    message = np.select(
        [plays & partner_turn, plays & (me == 0) & _turn_is_certain(tables, tick), mine >= 0,
         (move == wait) & ~fits_own],
        [SAY_DONT_TURN, SAY_TURN, SAY_TAKING + mine, SAY_NEED + (need + 12) % 13], SAY_NOTHING)
    return np.where(legal[at, move], move, wait), message


def _turn_is_certain(tables: Tables, tick: np.ndarray) -> np.ndarray:
    """Once each row's ``tick`` cards lie, a stock card must be turned: they uncover no face-down card and no free
    card left fits any pile's new top (``turn_is_certain``)."""
    after = tables.after(tick)
    down = tables.present & ~tables.up
    uncovers = (((down[:, None] >> _POS) & 1 == 1) & ((after.present[:, None] & _COVER) == 0)).any(axis=1)
    fit = np.bitwise_or.reduce(_FIT[tables.wrap.astype(np.int64)[:, None], (after.tops % 13 + 1) % 13], axis=1)
    grank = np.where(after.cards >= 0, (after.cards % 13 + 1) % 13, 13)
    return ~uncovers & ~((fit[:, None] >> grank) & 1 == 1).any(axis=1)


def summit_rush_simple_talk(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
    obs, mask = _check(obs, mask, None, None, "summit_rush_simple_talk")
    n_moves = mask.shape[1] // N_MESSAGES
    if mask.shape[1] % N_MESSAGES or (n_moves - 2) % N_PEAKS:
        raise ValueError(f"summit_rush_simple_talk reads talking games (every move with each of the {N_MESSAGES} "
                         f"messages); a mask of {mask.shape[1]} actions is none")
    n, base = obs.shape
    out = np.zeros((n, base + n_moves + N_MESSAGES), np.float32)
    out[:, :base] = obs
    rows = np.flatnonzero(mask.any(axis=1))
    if len(rows):
        move, message = _talk(obs[rows], mask[rows])
        out[rows, base + move] = 1.0
        out[rows, base + n_moves + message] = 1.0
    return out


# ----------------------------------------------------------------------------- Rook
def rook_heuristic(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
    obs, mask = _check(obs, mask, ROOK_LAYOUT.size, None, "rook_heuristic")
    return _one_hot(obs, mask.shape[1], rook_choices(obs, mask))


BATCHED: dict[str, Batched] = {
    "rope_team_scores": rope_team_scores,
    "rook_heuristic": rook_heuristic,
    "summit_rush_simple": summit_rush_simple,
    "summit_rush_simple_exact": summit_rush_simple_exact,
    "summit_rush_simple_talk": summit_rush_simple_talk,
}


def batched(name: str) -> Batched:
    """The array form of the feature ``name`` (a name in ``cardzoo.agents.features.FEATURES``; every one has one)."""
    if name not in BATCHED:
        raise ValueError(f"no feature {name!r}; features: {', '.join(BATCHED)}")
    return BATCHED[name]
