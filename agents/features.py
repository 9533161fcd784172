"""Input features for learned policies, computed from a player's own observation and action mask only.

``summit_rush_simple``: the observation, then a one-hot of the simple strategy's choice for this seat (computed
without the strategy's memory: when nothing fits, the lowest seat turns its stock).

``summit_rush_simple_exact``: the observation, then a one-hot of the simple strategy's choice as the agent itself
plays it. The agent's only memory is how many stock cards each seat has turned, which it counts from what changes
between observations; the observation's ``stock_left`` piece says the same (turned = stock length - left, checked on
every decision of thousands of games), so here the turner is read from it and the choice is the agent's own --
where ``summit_rush_simple`` (kept for the policies trained on it) always lets the lowest seat turn.

``summit_rush_simple_talk``: for talking Summit Rush games, the observation, then a one-hot of the talking simple
strategy's move (58 for two players) and one of its message (57), computed the same way (without memory: it never
calls the card it turned). It reads what was heard (claims, turn calls, its own too) from the observation, so it
already says what a listener bound by the simple strategy's calls would do.

``rook_heuristic``: the observation, then a one-hot of the heuristic Rook player's choice (79 actions).

``rope_team_scores``: the observation, then for each of the 52 cards the simple strategy's value of playing it
(squashed to -1..1 by ``tanh(value / 50)``; 0 for illegal cards), then a one-hot of the simple strategy's choice.
A policy with these inputs starts from what the rules say about each card's outcome (where the coin lands, who
wins, whether it falls) and learns when to deviate from the heuristic -- residual policy learning. Everything here
is a function of the observation, so a policy using it still sees nothing a player could not.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from cardzoo.envs.common.layout import Layout

from .rope_team_simple import RopeTeamSimple

_SIMPLE = RopeTeamSimple()


def _bits(vector: np.ndarray) -> int:
    return int.from_bytes(np.packbits(vector.view(np.uint8), bitorder="little").tobytes(), "little")


def rope_team_scores(observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
    out = np.zeros(observation.shape[0] + 104, dtype=np.float32)
    out[: observation.shape[0]] = observation
    legal = _bits(action_mask)
    if legal:
        _SIMPLE.reset()
        values = _SIMPLE.card_values(_bits(observation), legal)
        base = observation.shape[0]
        best, best_value = -1, -float("inf")
        for card, value in values:
            out[base + card] = np.tanh(value / 50.0)
            if value > best_value or (value == best_value and card % 13 < best % 13):
                best, best_value = card, value
        out[base + 52 + best] = 1.0
    return out


_ROOK = None


def rook_heuristic(observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
    global _ROOK
    if _ROOK is None:
        from .rook_heuristic import RookHeuristic

        _ROOK = RookHeuristic()
    out = np.zeros(observation.shape[0] + action_mask.shape[0], dtype=np.float32)
    out[: observation.shape[0]] = observation
    if action_mask.any():
        out[observation.shape[0] + _ROOK.act(observation, action_mask)] = 1.0
    return out


def summit_rush_simple(observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
    from .summit_rush_simple import SummitRushSimple

    out = np.zeros(observation.shape[0] + action_mask.shape[0], dtype=np.float32)
    out[: observation.shape[0]] = observation
    if action_mask.any():
        out[observation.shape[0] + SummitRushSimple().act(observation, action_mask)] = 1.0
    return out


_STOCK_PIECES: dict[tuple[int, int], tuple[int, int, int]] = {}


def _stock_piece(size: int, n_actions: int) -> tuple[int, int, int]:
    """(offset, stock length, players) of the ``stock_left`` piece in a silent observation of ``size`` entries with
    ``n_actions`` moves, for the levels' own stocks and clocks (the configurations the policies are trained on)."""
    if not _STOCK_PIECES:
        from cardzoo.envs.summit_rush import rules
        from cardzoo.envs.summit_rush.env import make_config
        from cardzoo.envs.summit_rush.observer import Observer

        for level in rules.LEVELS:
            for players in (2, 3):
                for time_limit in ("level", None):
                    config = make_config(level=level, players=players, time_limit=time_limit, talk=False)
                    observer = Observer(config)
                    key = (observer.layout.size, rules.N_PEAKS * players + 2)
                    _STOCK_PIECES[key] = (observer.layout["stock_left"].start, observer.stock_len, players)
    try:
        return _STOCK_PIECES[size, n_actions]
    except KeyError:
        raise ValueError(f"summit_rush_simple_exact reads silent observations of the levels' own stocks and clocks; "
                         f"{size} entries with {n_actions} moves is none of them "
                         f"(known: {sorted(_STOCK_PIECES)})") from None


def summit_rush_simple_exact(observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
    from cardzoo.envs.summit_rush.observer import decode

    from .summit_rush_simple import SummitRushSimple, Table

    out = np.zeros(observation.shape[0] + action_mask.shape[0], dtype=np.float32)
    out[: observation.shape[0]] = observation
    if action_mask.any():
        start, length, players = _stock_piece(observation.shape[0], action_mask.shape[0])
        left = observation[start : start + players * length].reshape(players, length).sum(1)
        bits, legal = _bits(observation), _bits(action_mask)
        agent = SummitRushSimple()
        agent.turned = [length - int(k) for k in left]
        table = Table(decode(bits, observation.shape[0], action_mask.shape[0]))
        move, _ = agent.choose(table, legal, bits, action_mask.shape[0])
        if not legal >> move & 1:  # as the agent: never an illegal action
            move = action_mask.shape[0] - 1
        out[observation.shape[0] + move] = 1.0
    return out


def summit_rush_simple_talk(observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
    from cardzoo.envs.summit_rush.rules import N_MESSAGES

    from .summit_rush_talk import SummitRushSimpleTalk

    n_moves = action_mask.shape[0] // N_MESSAGES
    base = observation.shape[0]
    out = np.zeros(base + n_moves + N_MESSAGES, dtype=np.float32)
    out[:base] = observation
    if action_mask.any():
        message, move = divmod(SummitRushSimpleTalk().act(observation, action_mask), n_moves)
        out[base + move] = 1.0
        out[base + n_moves + message] = 1.0
    return out


FEATURES: dict[str, tuple[Callable[[np.ndarray, np.ndarray], np.ndarray], int]] = {
    "rope_team_scores": (rope_team_scores, 104),  # function, entries added to the observation
    "rook_heuristic": (rook_heuristic, 79),
    "summit_rush_simple": (summit_rush_simple, 58),  # two players, silent games
    "summit_rush_simple_exact": (summit_rush_simple_exact, 58),  # the same, with the agent's own turner
    "summit_rush_simple_talk": (summit_rush_simple_talk, 58 + 57),  # two players, talking games
}

SCORE_LAYOUT = Layout(("card_value", 52, "the simple strategy's value of each legal card, tanh(value / 50)"),
                      ("simple_choice", 52, "one-hot of the simple strategy's choice"))
