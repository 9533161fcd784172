"""Input features for learned policies, computed from a player's own observation and action mask only.

``summit_rush_simple``: the observation, then a one-hot of the simple strategy's choice for this seat (computed
without the strategy's memory: when nothing fits, the lowest seat turns its stock).

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
    "summit_rush_simple_talk": (summit_rush_simple_talk, 58 + 57),  # two players, talking games
}

SCORE_LAYOUT = Layout(("card_value", 52, "the simple strategy's value of each legal card, tanh(value / 50)"),
                      ("simple_choice", 52, "one-hot of the simple strategy's choice"))
