"""What every turn-based cardzoo environment shares: seeding, game records, clear errors and reward bookkeeping.

A game's environment subclasses :class:`CardGameAEC` and supplies the game through a handful of hooks (deal,
seat to move, legal mask, apply, observe, outcome). This class turns those into the PettingZoo AEC protocol.

Seeding. ``reset(seed=s)`` plays the game whose seed is ``s``; ``reset()`` without a seed plays the next game of
a stream seeded by the last explicit seed (or by fresh entropy). Every game therefore has one integer seed of its
own, which ``game_record()`` stores so that :func:`cardzoo.envs.replay` can rebuild it exactly.

Illegal moves follow PettingZoo's classic-game convention by default (``illegal_action="penalize"``): an in-range
action the mask forbids ends the game with a penalty and an :class:`IllegalActionWarning` (every agent's mask is
then empty, as after any end), and the record keeps the move, so a replay ends the same way.
``illegal_action="raise"`` is the strict mode: the move raises :class:`IllegalActionError` and changes nothing. A
value that is not an action at all always raises.

The game's state lives in ``self.game`` (``None`` before the first reset); ``state()`` is PettingZoo's global
state vector for centralised critics. Every method that needs a game, called before the first reset, raises
:class:`NotResetError` ("call reset() first").
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from pettingzoo import AECEnv

from .errors import GameOverError, IllegalActionError, IllegalActionWarning, NotResetError, OptionError
from .options import one_of, plain, seed_value
from .render import show

ILLEGAL_ACTION_MODES = ("penalize", "raise")


class CardGameAEC(AECEnv):
    """Base class; see the module docstring. Subclasses set ``metadata``, ``possible_agents`` and the hooks."""

    env_name: str = ""

    def __init__(self, options: dict[str, Any]):
        """``options`` are the env's keyword options, already checked for unknown names; this reads the ones every
        game shares: ``render_mode``, ``render_viewer`` and ``illegal_action``."""
        super().__init__()
        self.agents = []
        self.render_mode = one_of("render_mode", options.get("render_mode"), [None, *self.metadata["render_modes"]])
        self.illegal_action = one_of("illegal_action", options.get("illegal_action", "penalize"),
                                     ILLEGAL_ACTION_MODES)
        self.render_viewer = options.get("render_viewer")
        if self.render_viewer is not None:
            one_of("render_viewer", self.render_viewer, self.possible_agents)
        self._options = plain(options)
        self.game = None
        self._ended = False  # the game is over, by its rules or by a penalised illegal move
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

    def _state_vector(self) -> np.ndarray:
        """The global state (see ``state()``), laid out as ``state_space`` says."""
        raise NotImplementedError

    def _is_over(self) -> bool:
        raise NotImplementedError

    def _is_cut_off(self) -> bool:
        """Whether the game that is over was cut off by a limit (a truncation) rather than ended by its rules."""
        return False

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
        if options is not None and not isinstance(options, dict):
            raise OptionError(f"reset options must be a dict, got {type(options).__name__}")
        # A copy of the caller's data: the record must not change when the caller reuses its deck list.
        reset_options = plain(options or {})
        if seed is not None:
            seed = seed_value(seed)
        # Check and deal before touching any bookkeeping, so a bad seed or deck leaves the previous game intact.
        stream_state = self._seed_stream.bit_generator.state
        game_seed = int(self._seed_stream.integers(2**63)) if seed is None else seed
        try:
            game = self._deal(np.random.default_rng(game_seed), reset_options)
        except Exception:
            self._seed_stream.bit_generator.state = stream_state  # the failed reset did not happen
            raise
        if seed is not None:
            self._seed_stream = np.random.default_rng([seed, 0x5EED])
        self.game = game
        self._ended = False
        self._record = {
            "env": self.env_name,
            "options": self._game_options(),
            "seed": game_seed,
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
        if self.game is None:
            raise NotResetError("observe() before reset(): call reset() first to start a game")
        seat = self._agent_index[agent]
        # _ended, not _is_over(): a penalised illegal move ends the game with the position as it stood, and then
        # nobody may move either (PettingZoo's convention: every final mask is empty)
        if not self._ended and seat == self._seat_to_move():
            mask = self._legal_mask()
        else:
            mask = np.zeros(self.action_spaces[agent].n, dtype=np.int8)
        return {"observation": self._observation(seat), "action_mask": mask}

    def last(self, observe: bool = True):
        if self.game is None:
            raise NotResetError("last() before reset(): call reset() first to start a game")
        return super().last(observe)

    def step(self, action) -> None:
        if self.game is None:
            raise NotResetError("step() before reset(): call reset() first to start a game")
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
        action, legal = self._check_action(agent, action)
        seat = self._agent_index[agent]
        self._record["actions"].append(action)  # an illegal move too: a replay must end the same way
        if not legal:
            warnings.warn(f"{agent} made an illegal move ({action}: {self.action_name(action)}, "
                          f"{self._why_illegal(action)}); the game ends with the penalty. Read obs['action_mask'] "
                          "for the legal moves, or use illegal_action='raise' to get an error instead.",
                          IllegalActionWarning, stacklevel=2)
            step_rewards = self._illegal_rewards(seat)
            self.outcome_info = {"outcome": "illegal", "illegal_by": agent}
            finished = True
        else:
            step_rewards = self._apply(action)
            finished = self._is_over()
            if finished:
                self.outcome_info = self._final_info()
        self._cumulative_rewards[agent] = 0.0
        for a, r in zip(self.possible_agents, step_rewards, strict=True):
            self.rewards[a] = r
        if finished:
            self._ended = True
            ended = self.truncations if legal and self._is_cut_off() else self.terminations
            for a in self.agents:
                ended[a] = True
                self.infos[a] = dict(self.outcome_info)
        else:
            self.agent_selection = self.possible_agents[self._seat_to_move()]
        self._accumulate_rewards()

    def _check_action(self, agent: str, action) -> tuple[int, bool]:
        """The action as an int and whether it is legal; raises for a value that is not an action, and for an
        illegal one under ``illegal_action="raise"``."""
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
            return action, True
        if self.illegal_action == "penalize":
            return action, False
        mask = self._legal_mask()
        legal = [f"{a} ({self.action_name(a)})" for a in np.flatnonzero(mask)]
        raise IllegalActionError(
            f"{agent} cannot play action {action} ({self.action_name(action)}): {self._why_illegal(action)}. "
            f"Legal actions: {', '.join(legal)}"
        )

    # ----------------------------------------------------------------- records and helpers
    def _game_options(self) -> dict[str, Any]:
        # The effective illegal-move mode is recorded even when it was the default, so a replay under a later
        # default still ends the same way.
        return {**{k: v for k, v in self._options.items() if k != "render_mode"},
                "illegal_action": self.illegal_action}

    def game_record(self) -> dict[str, Any]:
        """The game so far as plain JSON-ready data (a copy): env name, options, seed, reset options, actions."""
        if self._record is None:
            raise NotResetError("game_record() before reset(): no game has been started; call reset() first")
        return plain(self._record)

    def state(self) -> np.ndarray:
        """The global state for centralised critics (``state_space``): every player's observation followed by the
        cards no player sees. It holds hidden information, so it is for training critics, never for acting."""
        if self.game is None:
            raise NotResetError("state() before reset(): call reset() first to start a game")
        return self._state_vector()

    def render(self):
        """The table as ``render_viewer`` (default: the player to move) sees it: text, printed text or an image."""
        def viewer() -> int:
            return self.possible_agents.index(self.render_viewer) if self.render_viewer else self._seat_to_move()

        return show(self.render_mode, self.game is not None, lambda: self._render_text(viewer()),
                    lambda: self._render_image(viewer()))

    def close(self) -> None:
        pass
