"""Every cardzoo game as a TextArena environment: text in, text out, one player at a time.

``TextArenaEnv`` keeps TextArena's contract (``textarena.core.Env``, checked against textarena 0.7.4)::

    env = TextArenaEnv("rope_team", options={"level": "hard"})   # or textarena.make("Cardzoo-RopeTeam-v0-hard")
    env.reset(num_players=2, seed=7)                # game 7: the deal env.reset(seed=7) gives
    done = False
    while not done:
        player_id, observation = env.get_observation()   # the messages for that player since its last turn
        done, info = env.step(reply)                     # the reply of player ``player_id``, free text
    rewards, game_info = env.close()                 # {player: reward}, {player: role, turn_count, ...}

``observation`` is a list of TextArena messages ``(from_id, text, ObservationType)``: at the first turn the
``PROMPT`` (the seat's rules from the game's text view, ``cardzoo.envs.text``), at every turn the ``GAME_BOARD``
(the view's text of the seat's observation: what happened since its last move, the table it sees, the numbered legal
moves unless ``legal_moves=False``), and after a refused reply a ``GAME_ADMIN`` message with the reason.
``textarena.make`` wraps the registered envs in ``LLMObservationWrapper``, which joins them into one string (the
``-raw`` ids do not). The text is built from the seat's observations only, as the views are: nothing hidden leaks,
and a player's reply is shown back to that player only (Rope Team has no table talk, so a reply never reaches the
partner; Summit Rush's messages travel through the game's own message channel).

Invalid moves: a reply the view cannot read as a legal move is answered with the reason and the same player is asked
again, up to ``max_retries`` times; then **a random legal move** (from a generator seeded by ``reset``'s seed) is
played for them and said so. Nobody loses for a bad reply: the games are cooperative (Rope Team, Summit Rush) or
scored by points (Rook). Every attempt is kept in ``attempts`` (the reply bounded as text, the reason, the default).

Summit Rush is real time; here it is **turn-paced**: each tick asks every seat in turn (player 0, then 1, ...), each
shown the table at the start of the tick, and the tick is played when every seat has answered (the env's AEC form,
which is what the evaluation plays too). The clock counts ticks, not seconds: a slow reply costs no game time.

Rewards at ``close``: each seat's total reward from the PettingZoo env (+1/-1 for a won or lost cooperative game;
Rook's points or +1/-1 for a game). ``final_info`` is the env's last info (``outcome`` and the rest).

When ``textarena`` is installed (the ``textarena`` extra), importing this module registers every game with it: the
id ``Cardzoo-<Title>-v0`` plays the game's default variant of the play page, ``Cardzoo-<Title>-v0-<variant>`` each
variant (``Cardzoo-RopeTeam-v0-hard``, ``Cardzoo-RookForTwo-v0-game-to-250``, ``Cardzoo-SummitRush-v0-hard-silent``);
``REGISTERED`` lists them.
"""

from __future__ import annotations

import enum
import re
from typing import Any

import numpy as np

from .common.errors import MoveError, OptionError
from .registry import GAMES, spec
from .text import text_view

try:
    import textarena as _ta
except ImportError:  # the extra is not installed: the same contract, without the base class
    _ta = None

REPLY_CHARS = 2000  # a reply as kept in ``attempts``
GAME_ID = -1  # TextArena's sender id of the game's own messages
DEFAULT_RULE = "a random legal move"

if _ta is not None:
    ObservationType = _ta.ObservationType
    _Base: type = _ta.Env
else:
    class ObservationType(enum.Enum):  # textarena.core.ObservationType's members
        PROMPT = enum.auto()
        PLAYER_ACTION = enum.auto()
        GAME_ACTION_DESCRIPTION = enum.auto()
        GAME_MESSAGE = enum.auto()
        GAME_BOARD = enum.auto()
        GAME_ADMIN = enum.auto()

    _Base = object

_HIDDEN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]")


def shown(text: str, limit: int = REPLY_CHARS) -> str:
    """A reply as kept and shown: control characters as visible escapes, at most ``limit`` characters and a mark."""
    text = _HIDDEN.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    return text if len(text) <= limit else f"{text[:limit]}[... truncated: {len(text) - limit} more characters]"


class TextState:
    """What TextArena's wrappers read of an env's ``state``: roles, the current player, the pending messages."""

    def __init__(self, num_players: int):
        self.num_players = num_players
        self.role_mapping = {pid: f"Player {pid}" for pid in range(num_players)} | {GAME_ID: "GAME"}
        self.current_player_id = 0
        self.observations: dict[int, list[tuple[int, str, Any]]] = {pid: [] for pid in range(num_players)}
        self.game_info = {pid: {"role": f"Player {pid}", "invalid_move": False, "turn_count": 0,
                                "invalid_attempts": 0, "defaults": 0} for pid in range(num_players)}
        self.rewards: dict[int, float] | None = None
        self.done = False
        self.turn = 0
        self.logs: list[tuple[int, str]] = []

    def add_observation(self, message: str, observation_type, from_id: int = GAME_ID, to_id: int = -1) -> None:
        self.logs.append((from_id, message))
        for pid in range(self.num_players) if to_id == -1 else (to_id,):
            self.observations[pid].append((from_id, message, observation_type))

    def get_current_player_observation(self) -> list[tuple[int, str, Any]]:
        pending = self.observations[self.current_player_id]
        self.observations[self.current_player_id] = []
        return pending

    def close(self):
        return self.rewards, self.game_info


class TextArenaEnv(_Base):
    """One cardzoo game behind TextArena's text contract (see the module docstring)."""

    def __init__(self, game: Any, options: dict[str, Any] | None = None, legal_moves: bool = True,
                 max_retries: int = 2):
        if not isinstance(max_retries, int) or isinstance(max_retries, bool) or max_retries < 0:
            raise OptionError(f"max_retries must be an int >= 0, got {max_retries!r}")
        if not isinstance(legal_moves, bool):
            raise OptionError(f"legal_moves must be True or False, got {legal_moves!r}")
        self.spec = spec(game)
        self.options = dict(options or {})
        self.legal_moves, self.max_retries = legal_moves, max_retries
        self.env = self.spec.make(parallel=False, **{**self.options, "illegal_action": "raise"})  # checks options
        self.seats = list(self.env.possible_agents)
        self.state: TextState | None = None

    def reset(self, num_players: int, seed: int | None = None):
        if num_players != len(self.seats):
            raise OptionError(f"{self.spec.title} with these options has {len(self.seats)} players, not "
                              f"{num_players}")
        self.state = TextState(num_players)
        self.env.reset(seed=seed)
        self.views = [text_view(self.env, legal_moves=self.legal_moves) for _ in self.seats]
        self.rng = np.random.default_rng(seed)
        self.totals = [0.0] * num_players
        self.errors = 0
        self.attempts: list[dict[str, Any]] = []
        self.final_info: dict[str, Any] | None = None
        for pid, view in enumerate(self.views):
            self.state.add_observation(f"You are Player {pid} of {num_players} in {self.spec.title}.\n"
                                       f"{view.rules().strip()}", ObservationType.PROMPT, to_id=pid)
        self._next_turn()

    def get_observation(self):
        self._check()
        return self.state.current_player_id, self.state.get_current_player_observation()

    def step(self, action: str) -> tuple[bool, dict[str, Any]]:
        state = self._check()
        if state.done:
            return True, {"reason": "the game is over"}
        pid = state.current_player_id
        text = action if isinstance(action, str) else ""
        state.add_observation(shown(text), ObservationType.PLAYER_ACTION, from_id=pid, to_id=pid)
        attempt = {"turn": state.turn, "player": pid, "reply": shown(text), "error": None, "default": None}
        self.attempts.append(attempt)
        mask = self.mask
        try:
            if not isinstance(action, str):
                raise MoveError(f"a reply must be text, got {type(action).__name__}")
            move = self.views[pid].parse(action, mask)
        except MoveError as err:
            attempt["error"] = reason = str(err)
            state.game_info[pid]["invalid_attempts"] += 1
            self.errors += 1
            if self.errors <= self.max_retries:
                state.add_observation(f"Player {pid} attempted an invalid move. Reason: {reason}. Please resubmit a "
                                      f"valid move ({self.max_retries - self.errors + 1} tries left).",
                                      ObservationType.GAME_ADMIN, to_id=pid)
                return False, {"invalid_move": reason}
            legal = np.flatnonzero(mask)
            move = int(legal[self.rng.integers(len(legal))])
            attempt["default"] = self.views[pid].move_name(move)
            state.game_info[pid]["defaults"] += 1
            state.game_info[pid]["invalid_move"] = True
            state.add_observation(f"Player {pid} attempted an invalid move. Reason: {reason}. No tries left: "
                                  f"{DEFAULT_RULE} was played for you: {attempt['default']}.",
                                  ObservationType.GAME_ADMIN, to_id=pid)
        self.errors = 0
        state.game_info[pid]["turn_count"] += 1
        state.turn += 1
        self.env.step(int(move))
        self._next_turn()
        return state.done, {}

    def close(self):
        if self.state is None:
            return None, None
        return self.state.close()

    # ------------------------------------------------------------------ inside
    def _check(self) -> TextState:
        if self.state is None:
            raise OptionError("call reset(num_players, seed) first")
        return self.state

    def _next_turn(self) -> None:
        """Skip the finished agents' last steps; at the next decision, show that player its table. Rewards are
        added up as the evaluation's loop does: each agent's reward since its previous turn, read at its turn."""
        env, state = self.env, self.state
        while env.agents:
            seat = env.agent_selection
            obs, reward, term, trunc, info = env.last()
            pid = self.seats.index(seat)
            self.totals[pid] += float(reward)
            if term or trunc:
                self.final_info = dict(info)
                env.step(None)
                continue
            state.current_player_id = pid
            self.mask = obs["action_mask"]
            state.add_observation(self.views[pid].observe(obs["observation"], obs["action_mask"]),
                                  ObservationType.GAME_BOARD, to_id=pid)
            return
        state.done = True
        state.rewards = {pid: total for pid, total in enumerate(self.totals)}
        outcome = (self.final_info or {}).get("outcome")
        for pid in range(state.num_players):
            state.game_info[pid]["reason"] = f"the game ended: {outcome}"
            state.add_observation(f"The game is over: {outcome}. Your reward: {self.totals[pid]:g}.",
                                  ObservationType.GAME_MESSAGE, to_id=pid)


# ---------------------------------------------------------------------------- registration with textarena
def _camel(title: str) -> str:
    return "".join(w[:1].upper() + w[1:] for w in re.split(r"[^A-Za-z0-9]+", title) if w)


def _slug(variant: str) -> str:
    return "-".join(w for w in re.split(r"[^a-z0-9]+", variant.lower()) if w)


def ids() -> dict[str, tuple[str, dict[str, Any]]]:
    """TextArena id -> (game, env options), for every game and play-page variant."""
    found = {}
    for game in GAMES.values():
        base = f"Cardzoo-{_camel(game.title)}-v0"
        variants = game.variants()
        found[base] = (game.name, dict(variants.get(game.default_variant, {})))
        for name, options in variants.items():
            found[f"{base}-{_slug(name)}"] = (game.name, dict(options))
    return found


REGISTERED: list[str] = []


def register() -> list[str]:
    """Register every game with textarena (if installed; once per process): the ids registered."""
    if _ta is None or REGISTERED:
        return REGISTERED
    from textarena.envs.registration import ENV_REGISTRY, register_with_versions
    from textarena.wrappers import LLMObservationWrapper

    for env_id, (game, options) in ids().items():
        if env_id not in ENV_REGISTRY:
            register_with_versions(id=env_id, entry_point=TextArenaEnv, wrappers={"default": [LLMObservationWrapper]},
                                   game=game, options=options)
        REGISTERED.append(env_id)
    return REGISTERED


register()
