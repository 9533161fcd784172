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

Refusals change nothing. Every call the engine refuses (bad seeds, next_seed or decks; actions of the wrong shape,
type or range; an illegal action under "raise"; a step before ``reset`` or after ``close``; a seed stream that runs
out) raises a cardzoo error and leaves the engine exactly as it was: every array, the seed counter and the records.
Arguments are checked, with whole-array operations, before anything changes; the one refusal that can only be seen
midway (the stream running out when games end) happens only when ``next_seed`` is within N of the largest seed, and
such steps run on a copy of the state that is put back if they fail.

Writing an engine: subclass :class:`BatchedEnv`, set the class attributes below and supply the hooks ``_start``
(deal new games into slots), ``_legal``, ``_play`` (one decision in every game), ``_observe`` (observations of
chosen seats in chosen slots), ``_current`` (the arrays ``reset``/``step`` return) and ``_finished_info``. This
class keeps the seeds, the records, the checks and the automatic reset. ``max_decisions`` bounds a game's length
(the record buffers' width); an engine whose games can be very long (whole Rook games) sets a smaller
``history_width`` to start with, and the buffers widen when a game needs it. ``SeedBlocks`` computes per-seed data
(deals) for blocks of upcoming seeds at once, and ``cardzoo.envs.common.generators`` draws numpy's
``default_rng(seed)`` numbers for many seeds at once.
"""

from __future__ import annotations

import contextlib
import random
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
from gymnasium import spaces

from .common.aec import ILLEGAL_ACTION_MODES
from .common.errors import GameOverError, IllegalActionError, IllegalActionWarning, OptionError
from .common.options import int_in, one_of, plain, reject_unknown, shown
from .registry import batched

MAX_SEED = 2**63 - 1

# name of the single env -> "module:class" of its batched engine (derived from the game registry)
ENGINES = {s.env_id: s.engine for s in batched()}


def make_batched(name: str, num_envs: int, **options: Any) -> BatchedEnv:
    """The batched engine of the single env ``name`` (e.g. ``"rope_team_v0"``) with ``num_envs`` games."""
    engines = {s.env_id: s for s in batched()}
    if not isinstance(name, str) or name not in engines:
        raise OptionError(f"no batched engine for {name!r}; batched engines: {', '.join(sorted(engines))}")
    return engines[name].load("engine")(num_envs, **options)


def _as_array(value: Any, what: str, error: type[Exception]) -> np.ndarray:
    """``np.asarray(value)``, with numpy's own refusals (a ragged list, a value that is no number) as ``error``."""
    try:
        return np.asarray(value)
    except (ValueError, TypeError, OverflowError) as err:
        raise error(f"{what} must be an array of integers, got {shown(value)} ({err})") from None


def snapshot(obj: Any) -> list[tuple]:
    """Everything mutable reachable from ``obj``'s attributes (arrays, lists, dicts, tuples of arrays, numbers,
    ``random.Random`` states, and the cardzoo objects holding them), for :func:`restore`. Each entry keeps the
    object itself and a copy of its contents, so a restore writes back into the same objects and every alias (a
    reshaped view kept in another attribute) stays one."""
    saved: list[tuple] = []
    seen: set[int] = set()

    def walk(holder: Any, key: Any, value: Any) -> None:
        saved.append((holder, key, value, _contents(value)))
        if id(value) in seen:
            return
        seen.add(id(value))
        if isinstance(value, dict):
            for k, v in list(value.items()):
                walk(value, k, v)
        elif isinstance(value, tuple):
            for v in value:
                walk(None, None, v)
        elif type(value).__module__.startswith("cardzoo.") and hasattr(value, "__dict__"):
            for k, v in list(vars(value).items()):
                walk(value, k, v)

    for k, v in list(vars(obj).items()):
        walk(obj, k, v)
    return saved


def _contents(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, list):
        return list(value)
    if isinstance(value, random.Random):
        return value.getstate()
    if isinstance(value, dict):
        return dict(value)
    return None


def restore(saved: list[tuple]) -> None:
    """Put back what :func:`snapshot` saved: the same objects in the same attributes, with their old contents."""
    for holder, key, value, contents in saved:
        if isinstance(holder, dict):
            holder[key] = value
        elif holder is not None and vars(holder).get(key, _MISSING) is not value:
            object.__setattr__(holder, key, value)
        if isinstance(value, np.ndarray):
            value[...] = contents
        elif isinstance(value, list):
            value[:] = contents
        elif isinstance(value, random.Random):
            value.setstate(contents)
        elif isinstance(value, dict):
            value.clear()
            value.update(contents)


_MISSING = object()


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
    # the record buffers' first width: max_decisions unless games are long (they widen as games need it)
    history_width: int | None = None
    history_dtype: type = np.int16
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
        width = self.history_width or self.max_decisions
        self._history = np.zeros((n, width), self.history_dtype)  # each slot's moves so far
        self._length = np.zeros(n, np.int64)
        self._finished = (np.full(n, -1, np.int64), np.zeros((n, width), self.history_dtype), np.zeros(n, np.int64))
        self._finished_outcome = np.full(n, -1, np.int8)
        self._finished_mover = np.zeros(n, np.int64)
        self.truncated = np.zeros(n, bool)
        self.outcome = np.full(n, -1, np.int8)
        self.final_obs = np.zeros((n, self.observation_size), np.int8)
        self._started = False
        self._closed = False

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
        seeds, after = self._check_reset(seeds, next_seed)
        self._reset(seeds, after)
        return self._current_arrays()

    def _check_reset(self, seeds, next_seed) -> tuple[np.ndarray, int]:
        """The seeds and the stream's next seed of a reset, checked (nothing changes before this returns)."""
        self._check_open("reset")
        seeds = self._check_seeds(seeds)
        if next_seed is None:  # past MAX_SEED when a game has the largest seed: the stream is then used up
            return seeds, int(seeds.max()) + 1
        if (isinstance(next_seed, (bool, np.bool_)) or not isinstance(next_seed, (int, np.integer))
                or not 0 <= next_seed <= MAX_SEED):
            raise OptionError(f"next_seed must be an integer in 0..{MAX_SEED}, got {shown(next_seed)}")
        return seeds, int(next_seed)

    def _reset(self, seeds: np.ndarray, after: int, **start: Any) -> None:
        self.seeds[:] = seeds
        self.next_seed = after
        self._length[:] = 0
        self._finished[0][:] = -1
        self.truncated[:] = False
        self.outcome[:] = -1
        self._start(self._slots, self.seeds.copy(), **start)
        self._started = True

    def step(self, actions):
        """One decision in every game; returns ``obs, mask, seat, rewards, done`` (see the module docstring)."""
        self._check_open("step")
        if not self._started:
            raise IllegalActionError("step() before reset(): call reset(seeds) first to start the games")
        actions = self._check_actions(actions)
        legal = self._legal(actions)
        illegal = np.flatnonzero(~legal)
        if len(illegal):
            self._illegal_moves(illegal, actions)  # raises in strict mode, before anything has changed
        with self._undone_on_error():
            movers = self._seat
            if len(illegal):  # the single env does not play an illegal move: the game ends as it stood
                self.final_obs[illegal] = self._observe(illegal, movers[illegal])
            if self._history.shape[1] < self.max_decisions and self._length.max() >= self._history.shape[1]:
                self._widen_history()
            self._history[self._slots, self._length] = actions
            self._length += 1
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

    def close(self) -> None:
        """End the engine: later ``reset`` and ``step`` calls raise; records stay readable."""
        self._closed = True

    @contextlib.contextmanager
    def _undone_on_error(self) -> Iterator[None]:
        """Run a step's changes; when the seed stream may run out in it (``next_seed`` within N of the largest
        seed, where every step would otherwise pay for a copy of the state), on a copy that is put back if it fails."""
        if self.next_seed + self.num_envs - 1 <= MAX_SEED:
            yield
            return
        saved = snapshot(self)
        try:
            yield
        except BaseException:
            restore(saved)
            raise

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

    def _widen_history(self) -> None:
        """Double the record buffers' width (at most ``max_decisions``): a long game outgrew them."""
        width = min(2 * self._history.shape[1], self.max_decisions)
        seeds, history, length = self._finished
        grown = [np.zeros((self.num_envs, width), self.history_dtype) for _ in range(2)]
        for new, old in zip(grown, (self._history, history), strict=True):
            new[:, : old.shape[1]] = old
        self._history = grown[0]
        self._finished = (seeds, grown[1], length)

    def _restart(self, ended: np.ndarray, movers: np.ndarray) -> None:
        """Keep the ended games' records and deal the next seeds of the stream into their slots."""
        if self.next_seed + len(ended) - 1 > MAX_SEED:
            raise OptionError(f"the seed stream ran past {MAX_SEED}: this step was not played (the engine is as it "
                              "was); reset() with smaller seeds or a next_seed")
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
        """Raise (strict mode) or warn (a warning made an error by a filter raises too: nothing has changed yet)."""
        games = ", ".join(f"game {i} (seat {self._seat[i]}, action {actions[i]})" for i in illegal[:5])
        more = f" and {len(illegal) - 5} more" if len(illegal) > 5 else ""
        if self.illegal_action == "raise":
            raise IllegalActionError(f"illegal actions the mask forbids in {games}{more}; nothing was played. "
                                     "Read the mask for the legal actions.")
        warnings.warn(f"illegal actions in {games}{more}: those games end with the penalty. Read the mask for the "
                      "legal actions, or use illegal_action='raise' to get an error instead.",
                      IllegalActionWarning, stacklevel=3)

    def _record(self, seed: int, moves: np.ndarray) -> dict[str, Any]:
        return {"env": self.env_name, "options": plain(self.record_options), "seed": seed, "reset_options": {},
                "actions": moves.tolist()}

    def _check_open(self, method: str) -> None:
        if self._closed:
            raise GameOverError(f"{method}() after close(): this engine is closed; make a new one")

    def _check_slot(self, slot: int) -> None:
        if isinstance(slot, bool) or not isinstance(slot, (int, np.integer)) or not 0 <= slot < self.num_envs:
            raise OptionError(f"slot must be an integer in 0..{self.num_envs - 1}, got {shown(slot)}")
        if not self._started:
            raise OptionError("no games yet: call reset(seeds) first")

    def _check_seeds(self, seeds) -> np.ndarray:
        n = self.num_envs
        if isinstance(seeds, (int, np.integer)) and not isinstance(seeds, (bool, np.bool_)):
            if not 0 <= seeds <= MAX_SEED - n + 1:
                raise OptionError(f"seeds={shown(seeds)} must be in 0..{MAX_SEED - n + 1} "
                                  f"(games seeds..seeds+{n - 1})")
            return np.arange(n, dtype=np.int64) + int(seeds)
        array = _as_array(seeds, "seeds", OptionError)
        if array.shape != (n,) or not np.issubdtype(array.dtype, np.integer):
            raise OptionError(f"seeds must be an int or {n} integers (one per game), got {shown(seeds)} "
                              f"({array.dtype} {array.shape})")
        if (array < 0).any() or (array.astype(np.uint64) > MAX_SEED).any():
            raise OptionError(f"seeds must be in 0..{MAX_SEED}; got {array[(array < 0) | (array > MAX_SEED)][:3]}")
        return array.astype(np.int64)

    def _check_actions(self, actions) -> np.ndarray:
        array = _as_array(actions, "actions", IllegalActionError)
        if array.shape != (self.num_envs,):
            raise IllegalActionError(f"actions must have shape ({self.num_envs},), one per game; got {array.shape}")
        if not np.issubdtype(array.dtype, np.integer):
            raise IllegalActionError(f"actions must be integers in 0..{self.num_actions - 1}, got dtype {array.dtype}")
        bad = np.flatnonzero((array < 0) | (array >= self.num_actions))
        if len(bad):
            raise IllegalActionError(f"action {array[bad[0]]} of game {bad[0]} is out of range "
                                     f"0..{self.num_actions - 1} ({len(bad)} games out of range)")
        return array.astype(np.int64)
