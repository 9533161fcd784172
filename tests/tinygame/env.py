"""Ascend's env (tests only): the project's turn-based base class with the game's hooks."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from cardzoo.envs.common.aec import CardGameAEC
from cardzoo.envs.common.options import check_reset_options, one_of, reject_unknown
from cardzoo.envs.common.wrappers import OrderEnforcing

from . import rules

AGENTS = ("player_0", "player_1")
ACTION_SIZES = frozenset({rules.N_CARDS})
ENV_OPTIONS = ("level", "illegal_action", "render_mode", "render_viewer")
SIZE = 2 * rules.N_CARDS + rules.N_CARDS + 1  # own hand, the top card, how many are played


def describe(observation: np.ndarray) -> dict[str, Any]:
    o = np.asarray(observation)
    n = rules.N_CARDS
    top = [i for i in range(n) if o[n + i]]
    return {"hand": [i for i in range(n) if o[i]], "top": top[0] if top else None,
            "played": int(np.flatnonzero(o[2 * n:])[0]) if o[2 * n:].any() else 0}


class raw_env(CardGameAEC):  # noqa: N801
    """Ascend (tests only)."""

    metadata = {"render_modes": ["ansi"], "name": "tinygame_v0", "is_parallelizable": False, "render_fps": 1}
    env_name = "tinygame_v0"
    possible_agents = list(AGENTS)

    def __init__(self, **options: Any):
        reject_unknown(options, ENV_OPTIONS, "option")
        self.config = rules.LEVELS[one_of("level", options.get("level", "normal"), rules.LEVELS)]
        super().__init__(options)
        space = spaces.Dict({"observation": spaces.Box(0, 1, (SIZE,), np.int8),
                             "action_mask": spaces.Box(0, 1, (rules.N_CARDS,), np.int8)})
        self.observation_spaces = {a: space for a in AGENTS}
        self.action_spaces = {a: spaces.Discrete(rules.N_CARDS) for a in AGENTS}
        self.state_space = spaces.Box(0, 1, (2 * rules.N_CARDS,), np.int8)

    describe = staticmethod(describe)

    def _deal(self, rng, reset_options):
        check_reset_options(reset_options, ())
        return rules.deal(self.config, rng)

    def _seat_to_move(self) -> int:
        return self.game.to_move

    def _legal_mask(self) -> np.ndarray:
        mask = np.zeros(rules.N_CARDS, np.int8)
        mask[rules.legal(self.game)] = 1
        return mask

    def _apply(self, action: int) -> list[float]:
        rules.play(self.game, action)
        r = {"win": 1.0, "fall": -1.0}.get(self.game.outcome, 0.0)
        return [r, r]

    def _observation(self, seat: int) -> np.ndarray:
        n, s = rules.N_CARDS, self.game
        o = np.zeros(SIZE, np.int8)
        o[list(s.hands[seat])] = 1
        if s.played:
            o[n + s.played[-1]] = 1
        o[2 * n + len(s.played)] = 1
        return o

    def _state_vector(self) -> np.ndarray:
        o = np.zeros(2 * rules.N_CARDS, np.int8)
        for seat in (0, 1):
            o[[seat * rules.N_CARDS + c for c in self.game.hands[seat]]] = 1
        return o

    def _is_over(self) -> bool:
        return self.game.outcome is not None

    def _final_info(self) -> dict[str, Any]:
        return rules.summary(self.game)

    def _illegal_rewards(self, seat: int) -> list[float]:
        return [-1.0, -1.0]

    def action_name(self, action: int) -> str:
        return str(action + 1)

    def _why_illegal(self, action: int) -> str:
        return "that card is not in their hand"

    def _render_text(self, viewer: int) -> str:
        return f"pile {[c + 1 for c in self.game.played]}, hand {sorted(c + 1 for c in self.game.hands[viewer])}"


def env(**options) -> OrderEnforcing:
    return OrderEnforcing(raw_env(**options))
