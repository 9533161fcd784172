"""What every turn-based cardzoo environment shares: seeding, game records, clear errors and reward bookkeeping.

A game's environment subclasses :class:`CardGameAEC` and supplies the game through a handful of hooks (deal,
seat to move, legal mask, apply, observe, outcome). This class turns those into the PettingZoo AEC protocol.

Seeding. ``reset(seed=s)`` plays the game whose seed is ``s``; ``reset()`` without a seed plays the next game of
a stream seeded by the last explicit seed (or by fresh entropy). Every game therefore has one integer seed of its
own, which ``game_record()`` stores so that :func:`cardzoo.envs.replay` can rebuild it exactly.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pettingzoo import AECEnv

from .errors import GameOverError, IllegalActionError
from .options import one_of
from .render import show

ILLEGAL_ACTION_MODES = ("raise", "penalize")


class CardGameAEC(AECEnv):
    """Base class; see the module docstring. Subclasses set ``metadata``, ``possible_agents`` and the hooks."""

    env_name: str = ""

    def __init__(self, options: dict[str, Any]):
        """``options`` are the env's keyword options, already checked for unknown names; this reads the ones every
        game shares: ``render_mode``, ``render_viewer`` and ``illegal_action``."""
        super().__init__()
        self.agents = []
        self.render_mode = one_of("render_mode", options.get("render_mode"), [None, *self.metadata["render_modes"]])
        self.illegal_action = one_of("illegal_action", options.get("illegal_action", "raise"), ILLEGAL_ACTION_MODES)
        self.render_viewer = options.get("render_viewer")
        if self.render_viewer is not None:
            one_of("render_viewer", self.render_viewer, self.possible_agents)
        self._options = dict(options)
        self.state = None
        self._seed_stream = np.random.default_rng()
        self._record: dict[str, Any] | None = None
        self._agent_index = {a: i for i, a in enumerate(self.possible_agents)}

    # ----------------------------------------------------------------- hooks a game supplies
    def _deal(self, rng: np.random.Generator, reset_options: dict[str, Any]) -> Any:
        """A new game's state, from ``rng`` and the reset options (check them all before returning)."""
        raise NotImplementedError

    def _seat_to_move(self) -> int:
        raise NotImplementedError

    def _legal_mask(self) -> np.ndarray:
        """int8 mask of the legal actions of the seat to move."""
        raise NotImplementedError

    def _is_legal(self, action: int) -> bool:
        """Whether ``action`` (in range) is legal for the seat to move; override with a cheaper test."""
        return bool(self._legal_mask()[action])

    def _apply(self, action: int) -> list[float]:
        """Apply a legal action; return each seat's reward for this step."""
        raise NotImplementedError

    def _observation(self, seat: int) -> np.ndarray:
        raise NotImplementedError

    def _is_over(self) -> bool:
        raise NotImplementedError

    def _final_info(self) -> dict[str, Any]:
        """What ``infos`` carries for every agent at the end."""
        raise NotImplementedError

    def _illegal_rewards(self, seat: int) -> list[float]:
        """Rewards when ``seat`` made an illegal move under ``illegal_action="penalize"``."""
        return [-1.0 if i == seat else 0.0 for i in range(len(self.possible_agents))]

    def _render_text(self, viewer: int) -> str:
        raise NotImplementedError

    def _render_image(self, viewer: int) -> np.ndarray:
        raise NotImplementedError

    def action_name(self, action: int) -> str:
        return str(action)

    def _why_illegal(self, action: int) -> str:
        return "it is not legal now"

    # ----------------------------------------------------------------- PettingZoo API
    def observation_space(self, agent):
        return self.observation_spaces[agent]

    def action_space(self, agent):
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        reset_options = dict(options or {})
        if seed is None:
            seed = int(self._seed_stream.integers(2**63))
        else:
            seed = int(seed)
            self._seed_stream = np.random.default_rng([seed, 0x5EED])
        # Check and deal before touching any bookkeeping, so a bad deck leaves the previous game intact.
        self.state = self._deal(np.random.default_rng(seed), reset_options)
        self._record = {
            "env": self.env_name,
            "options": self._game_options(),
            "seed": seed,
            "reset_options": reset_options,
            "actions": [],
        }
        self.agents = list(self.possible_agents)
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self.agent_selection = self.possible_agents[self._seat_to_move()]
        self.outcome_info: dict[str, Any] = {}

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        seat = self._agent_index[agent]
        if not self._is_over() and seat == self._seat_to_move():
            mask = self._legal_mask()
        else:
            mask = np.zeros(self.action_spaces[agent].n, dtype=np.int8)
        return {"observation": self._observation(seat), "action_mask": mask}

    def step(self, action) -> None:
        if not self.agents:
            raise GameOverError("the game is over and every agent has been removed; call reset() to play again")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            if action is not None:
                raise GameOverError(
                    f"the game is over ({self.outcome_info.get('outcome')}); {agent} may only step(None) "
                    "to leave, or call reset() to play again"
                )
            self._was_dead_step(action)
            return
        action = self._check_action(agent, action)
        seat = self._agent_index[agent]
        if action is None:  # illegal, penalised
            step_rewards = self._illegal_rewards(seat)
            self.outcome_info = {"outcome": "illegal", "illegal_by": agent}
            finished = True
        else:
            self._record["actions"].append(action)
            step_rewards = self._apply(action)
            finished = self._is_over()
            if finished:
                self.outcome_info = self._final_info()
        self._cumulative_rewards[agent] = 0.0
        for a, r in zip(self.possible_agents, step_rewards, strict=True):
            self.rewards[a] = r
        if finished:
            for a in self.agents:
                self.terminations[a] = True
                self.infos[a] = dict(self.outcome_info)
        else:
            self.agent_selection = self.possible_agents[self._seat_to_move()]
        self._accumulate_rewards()

    def _check_action(self, agent: str, action) -> int | None:
        """The action as an int if legal; ``None`` if illegal under "penalize"; raises otherwise."""
        n = self.action_spaces[agent].n
        if action is None:
            raise IllegalActionError(f"{agent} is to move and must choose an action; None is only for agents "
                                     "whose game is over")
        if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
            if isinstance(action, np.ndarray) and action.shape == () and np.issubdtype(action.dtype, np.integer):
                action = int(action)
            else:
                raise IllegalActionError(f"{agent}'s action must be an integer in 0..{n - 1}, got {action!r}")
        action = int(action)
        if not 0 <= action < n:
            raise IllegalActionError(f"{agent}'s action {action} is out of range 0..{n - 1}")
        if self._is_legal(action):
            return action
        if self.illegal_action == "penalize":
            return None
        mask = self._legal_mask()
        legal = [f"{a} ({self.action_name(a)})" for a in np.flatnonzero(mask)]
        raise IllegalActionError(
            f"{agent} cannot play action {action} ({self.action_name(action)}): {self._why_illegal(action)}. "
            f"Legal actions: {', '.join(legal)}"
        )

    # ----------------------------------------------------------------- records and helpers
    def _game_options(self) -> dict[str, Any]:
        return {k: v for k, v in self._options.items() if k not in ("render_mode",)}

    def game_record(self) -> dict[str, Any]:
        """The game so far as plain JSON-ready data: env name, options, seed, reset options and actions."""
        if self._record is None:
            raise GameOverError("no game has been started; call reset() first")
        record = dict(self._record)
        record["actions"] = list(record["actions"])
        return record

    def render(self):
        """The table as ``render_viewer`` (default: the player to move) sees it: text, printed text or an image."""
        def viewer() -> int:
            return self.possible_agents.index(self.render_viewer) if self.render_viewer else self._seat_to_move()

        return show(self.render_mode, self.state is not None, lambda: self._render_text(viewer()),
                    lambda: self._render_image(viewer()))

    def close(self) -> None:
        pass
