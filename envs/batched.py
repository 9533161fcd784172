"""Batched engines: N games of one cardzoo game stepped together with array operations.

A batched engine is an array implementation of one game's rules module (``envs/<game>/rules.py`` stays the single
statement of the rules). Game ``i`` of a batch is exactly the game the single env plays with the same seed and the
same actions: every observation, mask, reward and outcome is equal, bit for bit; each engine's tests check this over
thousands of games per level and variant. Engines live next to their game (``envs/<game>/batched.py``) and are built
by name with :func:`make_batched`.

Use::

    from cardzoo.envs.batched import make_batched
    eng = make_batched("rope_team_v0", num_envs=4096, level="hard")   # the single env's options and checks
    obs, mask, seat = eng.reset(seeds=0)                                # games 0, 1, ..., 4095
    while training:
        obs, mask, seat, rewards, done = eng.step(actions)             # one decision in every game

Shapes and types (N games, P players, O observation entries, A actions):

    obs      int8[N, O]     the observation of the seat to decide, as the single env's
                            ``observe(agent)["observation"]`` for that seat
    mask     int8[N, A]     that seat's legal actions (``observe(agent)["action_mask"]``)
    seat     int64[N]       the seat to decide: its index in ``possible_agents``
    rewards  float64[N, P]  each seat's reward for this step (the single env's ``rewards`` after the same step)
    done     bool[N]        the game in that slot ended with this step

Every array returned is new: keeping one across steps is safe. After each step the engine also holds:

    truncated  bool[N]      the games that ended by a cap (a truncation) rather than by their rules
    outcome    int8[N]      how the game that ended in the slot did: an index into ``outcomes`` (-1 if none ended)
    final_obs  int8[N, O]   for done slots, the ended game as its last mover sees it (the single env's
                            ``observe(agent)["observation"]`` after the move); other rows are stale

One step is one decision in every game: that of ``seat[i]`` in game ``i``. A game of simultaneous moves is asked
one seat at a time, each seat deciding from what it may see at the start of the tick, and the tick is applied with
its last seat's decision, as ``cardzoo.training.gym_envs.TickEnv`` plays it (the engine's docstring says so).

Automatic reset. A game that ends in a step is replaced in the same step by the slot's next game: ``obs``,
``mask`` and ``seat`` of a done slot are already the new game's, while ``rewards``, ``done``, ``truncated``,
``outcome`` and ``final_obs`` belong to the game that ended.

Seeds (the stream). ``reset(seeds=s)`` with an int starts the games seeded ``s, s+1, ..., s+N-1`` in slots
``0..N-1``; ``reset(seeds=[...])`` starts the N given seeds. Later games take the next seeds of a counter,
``next_seed`` (``max(seeds) + 1`` unless ``reset`` is given ``next_seed``), in the order they start and, within
one step, in slot order. The game with seed ``k`` is always the single env's ``reset(seed=k)``. ``seeds[i]`` is
the seed of slot ``i``'s current game. Seeds are integers in ``0 .. 2**63 - 1``; a stream that would pass the
largest (say, a batch reset with seed ``2**63 - 1`` and no ``next_seed``) raises :class:`OptionError` when a game
needs the seed past it.

Records. ``record(i)`` is slot ``i``'s current game and ``finished_record(i)`` the last game that ended in slot
``i``, each as the single env's ``game_record()`` has it; ``cardzoo.envs.replay(record)`` plays either again in the
single env, move by move, to the identical state.

Illegal actions follow the single env. ``illegal_action="penalize"`` (the default): an in-range action the mask
forbids ends that game with the single env's penalty (``rewards``; outcome ``"illegal"``) and one
``IllegalActionWarning`` per step naming the games; its record keeps the move, so a replay ends the same way.
``illegal_action="raise"``: :class:`IllegalActionError` naming the games and moves, and nothing changes. Actions
that are not actions at all (wrong shape, not integers, out of ``0..A-1``) always raise.

Writing an engine: subclass :class:`BatchedEnv`, set the class attributes below and supply the hooks ``_start``
(deal new games into slots), ``_legal``, ``_play`` (one decision in every game), ``_observe`` (observations of
chosen seats in chosen slots), ``_current`` (the arrays ``reset``/``step`` return) and ``_finished_info``. This
class keeps the seeds, the records, the checks and the automatic reset. ``SeedBlocks`` computes per-seed data
(deals) for blocks of upcoming seeds at once, and ``cardzoo.envs.common.generators`` draws numpy's
``default_rng(seed)`` numbers for many seeds at once.
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
from gymnasium import spaces

from .common.aec import ILLEGAL_ACTION_MODES
from .common.errors import IllegalActionError, IllegalActionWarning, OptionError
from .common.options import int_in, one_of, plain, reject_unknown

MAX_SEED = 2**63 - 1

# name of the single env -> "module:class" of its batched engine
ENGINES = {"rope_team_v0": "cardzoo.envs.rope_team.batched:RopeTeamBatched",
           "summit_rush_v0": "cardzoo.envs.summit_rush.batched:SummitRushBatched"}


def make_batched(name: str, num_envs: int, **options: Any) -> BatchedEnv:
    """The batched engine of the single env ``name`` (e.g. ``"rope_team_v0"``) with ``num_envs`` games."""
    if name not in ENGINES:
        raise OptionError(f"no batched engine for {name!r}; batched engines: {', '.join(sorted(ENGINES))}")
    module, cls = ENGINES[name].split(":")
    return getattr(importlib.import_module(module), cls)(num_envs, **options)


class SeedBlocks:
    """Per-game data that depends only on the seed (a game's deals), computed for blocks of consecutive seeds ahead
    of need: the stream hands out consecutive seeds a few at a time, and array code pays per call, not per seed."""

    def __init__(self, compute: Callable[[np.ndarray], np.ndarray], block: int):
        self.compute, self.block = compute, block
        self.first, self.data = 0, compute(np.zeros(0, np.int64))

    def take(self, seeds: np.ndarray) -> np.ndarray:
        """``compute(seeds)``, served from the current block when it holds them."""
        index = seeds - self.first
        if len(seeds) and index.min() >= 0 and index.max() < len(self.data):
            return self.data[index]
        if len(seeds) >= self.block or len(seeds) and seeds[-1] - seeds[0] != len(seeds) - 1:
            return self.compute(seeds)
        self.first = int(seeds[0]) if len(seeds) else 0
        self.data = self.compute(self.first + np.arange(self.block, dtype=np.int64))
        return self.data[seeds - self.first]


class BatchedEnv:
    """Base class of the batched engines; see the module docstring for the protocol."""

    env_name: str = ""  # the single env the games equal, as records name it (e.g. "rope_team_v0")
    possible_agents: tuple[str, ...] = ()  # the single env's agents; seat k is possible_agents[k]
    observation_size: int = 0  # O
    num_actions: int = 0  # A
    max_decisions: int = 0  # the most decisions one game can take (the width of the record buffers)
    outcomes: tuple[str, ...] = ("illegal",)  # names of the outcome codes; must include "illegal"
    env_options: tuple[str, ...] = ("illegal_action",)  # the single env's options an engine accepts
    illegal_action_modes: tuple[str, ...] = ILLEGAL_ACTION_MODES  # the single env's illegal_action values

    def __init__(self, num_envs: int, options: dict[str, Any]):
        """``options`` are the single env's keyword options (render options excepted); unknown names raise."""
        reject_unknown(options, self.env_options, "option")
        self.num_envs = n = int_in("num_envs", num_envs, 1, 2**24)
        self.illegal_action = one_of("illegal_action", options.get("illegal_action", "penalize"),
                                     self.illegal_action_modes)
        # what a record says the game was played with: as the single env's game_record() writes it
        self.record_options = {**plain(options), "illegal_action": self.illegal_action}
        self.players = len(self.possible_agents)
        self.observation_space = spaces.Box(0, 1, (self.observation_size,), np.int8)
        self.action_space = spaces.Discrete(self.num_actions)
        self._slots = np.arange(n)
        self._illegal = self.outcomes.index("illegal")
        self.seeds = np.zeros(n, np.int64)
        self.next_seed = 0
        self._history = np.zeros((n, self.max_decisions), np.int16)  # each slot's moves so far
        self._length = np.zeros(n, np.int64)
        self._finished = (np.full(n, -1, np.int64), np.zeros((n, self.max_decisions), np.int16), np.zeros(n, np.int64))
        self._finished_outcome = np.full(n, -1, np.int8)
        self._finished_mover = np.zeros(n, np.int64)
        self.truncated = np.zeros(n, bool)
        self.outcome = np.full(n, -1, np.int8)
        self.final_obs = np.zeros((n, self.observation_size), np.int8)
        self._started = False

    # ----------------------------------------------------------------- hooks an engine supplies
    def _start(self, slots: np.ndarray, seeds: np.ndarray) -> None:
        """Deal the games seeded ``seeds`` (int64[k]) into ``slots`` (int64[k]), as the single env's reset does."""
        raise NotImplementedError

    def _legal(self, actions: np.ndarray) -> np.ndarray:
        """bool[N]: whether each game's action (already checked to be in range) is legal for its seat to move."""
        raise NotImplementedError

    def _play(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Play one decision in every game: ``rewards`` float64[N, P] (the single env's step rewards), ``outcome``
        int8[N] (index into ``outcomes`` for games that ended, -1 for the others) and ``truncated`` bool[N].

        Games whose action is illegal are ended by the base class right after (penalty, outcome "illegal") and
        dealt anew, so their state afterwards does not matter; ``_play`` must only not fail on them."""
        raise NotImplementedError

    def _observe(self, slots: np.ndarray, seats: np.ndarray) -> np.ndarray:
        """int8[k, O]: the observation of ``seats[j]`` in the game in ``slots[j]``, as the single env's observe."""
        raise NotImplementedError

    def _current(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """New arrays ``obs`` int8[N, O], ``mask`` int8[N, A] and ``seat`` int64[N] for the seat to decide."""
        raise NotImplementedError

    def _finished_info(self, slot: int) -> dict[str, Any]:
        """The single env's final ``infos`` entry, but "outcome", of the last game that ended by its rules in
        ``slot`` (the engine keeps what it needs when ``_play`` ends a game)."""
        raise NotImplementedError

    def _illegal_rewards(self, seats: np.ndarray) -> np.ndarray:
        """float64[k, P]: the single env's penalty when ``seats`` made illegal moves (default -1 to the mover)."""
        out = np.zeros((len(seats), self.players))
        out[np.arange(len(seats)), seats] = -1.0
        return out

    # ----------------------------------------------------------------- the protocol
    def reset(self, seeds: int | Any = 0, next_seed: int | None = None):
        """Start N games: ``seeds`` an int ``s`` (games ``s..s+N-1``) or N seeds. Returns ``obs, mask, seat``."""
        seeds = self._check_seeds(seeds)
        if next_seed is None:  # past MAX_SEED when a game has the largest seed: the stream is then used up
            after = int(seeds.max()) + 1
        elif (isinstance(next_seed, bool) or not isinstance(next_seed, (int, np.integer))
              or not 0 <= next_seed <= MAX_SEED):
            raise OptionError(f"next_seed must be an integer in 0..{MAX_SEED}, got {next_seed!r}")
        else:
            after = int(next_seed)
        self.seeds[:] = seeds
        self.next_seed = int(after)
        self._length[:] = 0
        self._finished[0][:] = -1
        self.truncated[:] = False
        self.outcome[:] = -1
        self._start(self._slots, self.seeds.copy())
        self._started = True
        return self._current_arrays()

    def step(self, actions):
        """One decision in every game; returns ``obs, mask, seat, rewards, done`` (see the module docstring)."""
        if not self._started:
            raise IllegalActionError("step() before reset(): call reset(seeds) to start the games")
        actions = self._check_actions(actions)
        legal = self._legal(actions)
        illegal = np.flatnonzero(~legal)
        if len(illegal):
            self._illegal_moves(illegal, actions)
        self._history[self._slots, self._length] = actions
        self._length += 1
        movers = self._seat
        rewards, outcome, truncated = self._play(actions)
        if len(illegal):
            rewards[illegal] = self._illegal_rewards(movers[illegal])
            outcome[illegal] = self._illegal
            truncated[illegal] = False
        done = outcome >= 0
        self.outcome, self.truncated = outcome, truncated
        ended = np.flatnonzero(done)
        if len(ended):
            legal_ends = ended[legal[ended]]
            self.final_obs[legal_ends] = self._observe(legal_ends, movers[legal_ends])
            self._restart(ended, movers)
        obs, mask, seat = self._current_arrays()
        return obs, mask, seat, rewards, done

    def record(self, slot: int) -> dict[str, Any]:
        """The current game of ``slot`` as the single env's ``game_record()`` (plain JSON data)."""
        self._check_slot(slot)
        return self._record(int(self.seeds[slot]), self._history[slot, : self._length[slot]])

    def finished_info(self, slot: int) -> dict[str, Any]:
        """The single env's final ``infos`` entry (every agent's is the same) for the last game ended in ``slot``."""
        self.finished_record(slot)  # checks the slot and that a game has ended there
        outcome = self.outcomes[self._finished_outcome[slot]]
        if outcome == "illegal":
            return {"outcome": outcome, "illegal_by": self.possible_agents[self._finished_mover[slot]]}
        return {"outcome": outcome, **self._finished_info(slot)}

    def finished_record(self, slot: int) -> dict[str, Any]:
        """The last game that ended in ``slot``, as the single env's ``game_record()``."""
        self._check_slot(slot)
        seeds, history, length = self._finished
        if seeds[slot] < 0:
            raise OptionError(f"no game has ended in slot {slot} since reset()")
        return self._record(int(seeds[slot]), history[slot, : length[slot]])

    # ----------------------------------------------------------------- bookkeeping
    def _current_arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        obs, mask, seat = self._current()
        self._seat = seat.copy()  # the movers of the next step, safe from changes to the array handed out
        return obs, mask, seat

    def _restart(self, ended: np.ndarray, movers: np.ndarray) -> None:
        """Keep the ended games' records and deal the next seeds of the stream into their slots."""
        if self.next_seed + len(ended) - 1 > MAX_SEED:
            raise OptionError(f"the seed stream ran past {MAX_SEED}; reset() with smaller seeds or a next_seed")
        new = self.next_seed + np.arange(len(ended), dtype=np.int64)
        seeds, history, length = self._finished
        seeds[ended] = self.seeds[ended]
        self._finished_outcome[ended] = self.outcome[ended]
        self._finished_mover[ended] = movers[ended]
        history[ended] = self._history[ended]
        length[ended] = self._length[ended]
        self.next_seed += len(ended)
        self.seeds[ended] = new
        self._length[ended] = 0
        self._start(ended, new)

    def _illegal_moves(self, illegal: np.ndarray, actions: np.ndarray) -> None:
        """Raise (strict mode) or warn and keep each illegal game's end position for ``final_obs``."""
        shown = ", ".join(f"game {i} (seat {self._seat[i]}, action {actions[i]})" for i in illegal[:5])
        more = f" and {len(illegal) - 5} more" if len(illegal) > 5 else ""
        if self.illegal_action == "raise":
            raise IllegalActionError(f"illegal actions the mask forbids in {shown}{more}; nothing was played. "
                                     "Read the mask for the legal actions.")
        warnings.warn(f"illegal actions in {shown}{more}: those games end with the penalty. Read the mask for the "
                      "legal actions, or use illegal_action='raise' to get an error instead.",
                      IllegalActionWarning, stacklevel=3)
        # the single env does not play an illegal move: the game ends as it stood
        self.final_obs[illegal] = self._observe(illegal, self._seat[illegal])

    def _record(self, seed: int, moves: np.ndarray) -> dict[str, Any]:
        return {"env": self.env_name, "options": plain(self.record_options), "seed": seed, "reset_options": {},
                "actions": moves.tolist()}

    def _check_slot(self, slot: int) -> None:
        if isinstance(slot, bool) or not isinstance(slot, (int, np.integer)) or not 0 <= slot < self.num_envs:
            raise OptionError(f"slot must be an integer in 0..{self.num_envs - 1}, got {slot!r}")
        if not self._started:
            raise OptionError("no games yet: call reset(seeds) first")

    def _check_seeds(self, seeds) -> np.ndarray:
        n = self.num_envs
        if isinstance(seeds, (int, np.integer)) and not isinstance(seeds, (bool, np.bool_)):
            if not 0 <= seeds <= MAX_SEED - n:
                raise OptionError(f"seeds={seeds} must be in 0..{MAX_SEED - n} (games seeds..seeds+{n - 1})")
            return np.arange(n, dtype=np.int64) + int(seeds)
        array = np.asarray(seeds)
        if array.shape != (n,) or not np.issubdtype(array.dtype, np.integer):
            raise OptionError(f"seeds must be an int or {n} integers (one per game), got {array.dtype} {array.shape}")
        if (array < 0).any() or (array.astype(np.uint64) > MAX_SEED).any():
            raise OptionError(f"seeds must be in 0..{MAX_SEED}; got {array[(array < 0) | (array > MAX_SEED)][:3]}")
        return array.astype(np.int64)

    def _check_actions(self, actions) -> np.ndarray:
        array = np.asarray(actions)
        if array.shape != (self.num_envs,):
            raise IllegalActionError(f"actions must have shape ({self.num_envs},), one per game; got {array.shape}")
        if not np.issubdtype(array.dtype, np.integer):
            raise IllegalActionError(f"actions must be integers in 0..{self.num_actions - 1}, got dtype {array.dtype}")
        bad = np.flatnonzero((array < 0) | (array >= self.num_actions))
        if len(bad):
            raise IllegalActionError(f"action {array[bad[0]]} of game {bad[0]} is out of range "
                                     f"0..{self.num_actions - 1} ({len(bad)} games out of range)")
        return array.astype(np.int64)
