"""Running many games of one matchup: agents by name, a fixed list of deals, all cores, resumable.

Duplicate format. Game ``i`` of a study is ``env.reset(seed=i)`` (seeds ``0..N-1`` unless a base is given), so
every pairing of agents plays exactly the same deals and results can be compared deal by deal. Agents are seeded
from the game seed and their seat, so a game's result does not depend on which worker played it or in what order.

Resuming. With a cache folder, each chunk of games is written to ``<cache>/<matchup key>/<first>-<last>.json``
when it finishes; a later run with the same matchup reads finished chunks instead of playing them again. The key
covers the env, its options, the agents' names and the learned agents' weights; after changing an agent's code,
use a fresh cache folder. A chunk is written to a temporary file and renamed into place, so a run that is killed,
or another run sharing the cache, never leaves or reads half a chunk. Each chunk stores its seed range, its game
count and a SHA-256 of its records; a chunk that fails any check (empty, truncated, not JSON, the wrong games,
edited) is reported with a ``CacheWarning`` naming the file and the problem, and its games are played again. The
checksum guards against accidents, not against someone who rewrites it on purpose.

Strict or not. By default (``strict=True``) an agent's illegal move raises and so does an agent's exception: the
project's agents have no business doing either. A matchup with ``strict=False`` (the benchmark's, which plays
agents it does not know) plays an illegal move by the env's penalty (``illegal_action="penalize"``: the game is
lost, its record says ``outcome="illegal"`` and ``illegal_by``), and an agent that raises, or returns something
that is not an action, ends that game only: its record has ``outcome="error"``, ``error_by`` (the seat) and
``error`` (the agent, its seat, the env and the game's seed, and what went wrong), and the other games go on.
Each record of such a matchup also holds ``cpu`` and ``decisions``: each seat's CPU seconds inside its agent's
``act`` and how many times it was called.

Isolated. A matchup with ``isolation`` (the benchmark's) plays each outside agent (``module:callable``) in a worker
process of its own under those limits (:mod:`cardzoo.agents.isolated`): its failures, a time limit or an exit
included, end its game as any agent's exception does. Its cache key covers the agent's own source files.

Lockstep. When a seat's agent has ``act_batch`` (its class defines it), a chunk's games are played at once and that
seat answers all its waiting games with one call (:mod:`.lockstep`); the records are the game-by-game records.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import sys
import tempfile
import warnings
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import numpy as np

from cardzoo.agents.base import BitsAgent
from cardzoo.agents.isolated import AgentCrash, IsolatedAgent, Limits, probe
from cardzoo.agents.loops import FAST_LOOPS, env_game_steps, play_env_game  # noqa: F401 (play_env_game: its old home)
from cardzoo.agents.registry import is_outside, make_agent
from cardzoo.agents.seeding import agent_seed, keyed_agent_seed
from cardzoo.envs.common.errors import IllegalActionError, IllegalActionWarning
from cardzoo.envs.common.progress import Progress
from cardzoo.envs.common.record import make_env
from cardzoo.envs.registry import GAMES

from . import lockstep


@dataclass(frozen=True)
class Matchup:
    """Who plays what: an env with its options, and one agent spec per seat (cycled if fewer); ``strict=False``
    plays illegal moves by the env's penalty and records an agent's failure as that game's (module docstring)."""

    env: str
    agents: tuple[str, ...]
    options: tuple[tuple[str, Any], ...] = field(default=())
    strict: bool = True
    # Outside agents (module:callable) each in a worker process of their own with these limits (the benchmark's);
    # None: in this process, as any agent.
    isolation: Limits | None = None
    # After an agent's failure, the rest of the chunk's games are recorded as not played (an agent that hangs costs
    # one time limit, not one a game); the benchmark's, unless --keep-going.
    stop_on_failure: bool = False
    # Each agent's ``fingerprint`` when the caller has it already (the benchmark works each out once per run, not
    # once per cell: an agent is not built again for every cell's cache key); None: worked out here.
    fingerprints: tuple[str, ...] | None = field(default=None, compare=False)

    @staticmethod
    def of(env: str, agents: Sequence[str], strict: bool = True, isolation: Limits | None = None,
           stop_on_failure: bool = False, fingerprints: Sequence[str] | None = None, **options: Any) -> Matchup:
        return Matchup(env, tuple(agents), tuple(sorted(options.items())), strict, isolation, stop_on_failure,
                       None if fingerprints is None else tuple(fingerprints))

    def isolated(self, spec: str) -> bool:
        return self.isolation is not None and is_outside(spec)

    @property
    def key(self) -> str:
        """Names the matchup's cached results: env, options, agents, the learned agents' weights and outside agents'
        own source files (``fingerprint``), and the isolation's limits."""
        from cardzoo.agents.registry import fingerprint

        versions = list(self.fingerprints) if self.fingerprints is not None else [fingerprint(a, self.env)
                                                                                   for a in self.agents]
        parts = [self.env, self.agents, self.options] + ([versions] if any(versions) else [])
        if any(self.isolated(a) for a in self.agents):
            parts.append(dataclasses.astuple(self.isolation))
        if self.stop_on_failure:
            parts.append("stop-on-failure")
        if self.env in RECORD_VERSIONS:  # records that grew new fields are never read from an older cache
            parts.append(RECORD_VERSIONS[self.env])
        if not self.strict:
            parts.append(GUARDED_RECORDS)
        text = json.dumps(parts, sort_keys=True)
        names = "+".join(_file_safe(a) for a in self.agents)
        return f"{self.env}-{names}-" + hashlib.sha1(text.encode()).hexdigest()[:10]

    @property
    def label(self) -> str:
        opts = " ".join(f"{k}={v}" for k, v in self.options)
        return f"{self.env} {opts} {'+'.join(self.agents)}".strip()


GUARDED_RECORDS = "guarded-1"  # the version of a non-strict matchup's records (part of its cache key)


def _file_safe(spec: str) -> str:
    """An agent spec as part of a folder name: a path or ``module:callable`` spec by its last part."""
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in spec.replace("\\", "/").rsplit("/", 1)[-1])[:40]


# ---------------------------------------------------------------------------- one game
class AgentFailure(Exception):
    """An agent raised, or returned something that is not an action, in a non-strict matchup's game."""

    def __init__(self, seat: int, problem: str):
        super().__init__(problem)
        self.seat = seat


def _malformed(action: Any, n_actions: int) -> bool:
    if isinstance(action, np.ndarray) and action.shape == () and np.issubdtype(action.dtype, np.integer):
        action = int(action)
    if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
        return True
    return not 0 <= action < n_actions


class Guarded:
    """An agent whose failures are its own: an exception from ``reset`` or ``act``, or an action that is not an
    integer in the action space's range, raises :class:`AgentFailure` naming the seat; an in-range illegal action
    goes to the env (its penalty). Counts the CPU time spent in ``act`` and the calls."""

    def __init__(self, agent, seat: int, n_actions: int, clock: Callable[[], float] | None = None):
        self.agent, self.seat, self.n_actions = agent, seat, n_actions
        self.name = getattr(agent, "name", type(agent).__name__)
        # An isolated agent thinks in another process: its wall time per call (this process's CPU time would be
        # the pipe's) is what it spends.
        self.clock = clock or lockstep.wall_or_cpu(agent)
        self.cpu = 0.0
        self.decisions = 0

    def reset(self, seed: int | None = None) -> None:
        self.cpu, self.decisions = 0.0, 0
        reset = getattr(self.agent, "reset", None)
        if reset is None:
            return
        try:
            reset(seed=seed)
        except AgentCrash as err:  # an isolated agent: the message says what happened
            raise AgentFailure(self.seat, str(err)) from err
        except Exception as err:
            raise AgentFailure(self.seat, f"reset raised {type(err).__name__}: {err}") from err

    def _checked(self, call, *args) -> int:
        start = self.clock()
        try:
            action = call(*args)
        except AgentCrash as err:
            raise AgentFailure(self.seat, str(err)) from err
        except Exception as err:
            raise AgentFailure(self.seat, f"decision {self.decisions + 1}: act raised {type(err).__name__}: "
                                          f"{err}") from err
        finally:
            self.cpu += self.clock() - start
            self.decisions += 1
        if _malformed(action, self.n_actions):
            raise AgentFailure(self.seat, f"decision {self.decisions}: act returned {action!r}, not an action (an "
                                          f"integer in 0..{self.n_actions - 1})")
        return int(action)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        return self._checked(self.agent.act, observation, action_mask)


class GuardedBits(Guarded, BitsAgent):
    """:class:`Guarded` for a bit-level agent, so the fast loops still play it."""

    def act_bits(self, bits: int, legal: int, size: int | None = None, n_actions: int | None = None) -> int:
        return self._checked(self.agent.act_bits, bits, legal, size, n_actions)


class _Worker:
    """Env and agents of one process, built once and reset per game."""

    def __init__(self, matchup: Matchup, seat_key: bytes | None = None):
        self.matchup, self.seat_key = matchup, seat_key
        self.failed: tuple[int, str] | None = None  # with stop_on_failure: the failure that ends this chunk's play
        self.options = dict(matchup.options)
        if matchup.strict:  # an agent's illegal move is a bug to report, not a game to count as lost
            self.options.setdefault("illegal_action", "raise")
        else:
            self.options.setdefault("illegal_action", "penalize")
        self.env = make_env(matchup.env, **self.options)
        seats = self.env.possible_agents
        self.specs = [matchup.agents[i % len(matchup.agents)] for i in range(len(seats))]
        self.agents = [IsolatedAgent(spec, matchup.env, seat=i, limits=matchup.isolation) if matchup.isolated(spec)
                       else make_agent(spec, matchup.env, seat=i) for i, spec in enumerate(self.specs)]
        self.n_actions = [self.env.action_space(s).n for s in seats]
        if not matchup.strict:
            self.agents = [(GuardedBits if isinstance(a, BitsAgent) else Guarded)(a, i, self.n_actions[i])
                           for i, a in enumerate(self.agents)]
        self.fast = FAST_LOOPS.get(matchup.env) if all(isinstance(a, BitsAgent) for a in self.agents) else None
        self.steps = GAME_STEPS.get(matchup.env, env_game_steps)
        self.batching = {i for i in range(len(seats)) if self._batches(i)}
        self._copies: dict[int, list] = {}  # seat -> one agent per slot (lockstep play of an in-process agent)
        self._envs = [self.env]  # lockstep: one env per slot, kept for the next chunks

    def close(self) -> None:
        for seat in range(len(self.agents)):
            inner = self._inner(seat)
            if isinstance(inner, IsolatedAgent):
                inner.close()

    def _inner(self, seat: int):
        agent = self.agents[seat]
        return agent.agent if isinstance(agent, Guarded) else agent

    def _batches(self, seat: int) -> bool:
        inner = self._inner(seat)
        if isinstance(inner, IsolatedAgent):
            return probe(self.specs[seat], self.matchup.env, self.matchup.isolation).batch
        try:
            return lockstep.batches(inner)
        except Exception:  # a factory that fails here fails again in the first game, where it is reported
            return False

    def _seed(self, seed: int, seat: int) -> int:
        return agent_seed(seed, seat) if self.seat_key is None else keyed_agent_seed(self.seat_key, seed, seat)

    # ------------------------------------------------------------------ one game, as a generator of its moves
    def _steps(self, seed: int, agents: Sequence, env):
        for seat, agent in enumerate(agents):
            agent.reset(seed=self._seed(seed, seat))
        if self.fast is not None and agents is self.agents:
            return self.fast(self.options, agents, seed)  # bit-level agents: one call plays the game
        return (yield from self.steps(env, seed))

    def _not_played(self, seed: int) -> dict[str, Any]:
        seat, where = self.failed
        return {"outcome": "error", "error_by": seat, "returns": [0.0] * len(self.agents),
                "error": f"not played: the agent failed earlier ({where}) and the run stops on a failure",
                "cpu": [0.0] * len(self.agents), "decisions": [0] * len(self.agents), "seed": seed}

    def _game(self, seed: int, agents: Sequence, env):
        """One game: its moves asked of the caller (``lockstep``), its record returned. A non-strict matchup's agent
        failure ends the game as that agent's, with a record saying so."""
        if self.matchup.strict:
            return {**(yield from self._steps(seed, agents, env)), "seed": seed}
        if self.failed is not None:
            return self._not_played(seed)
        try:
            record = yield from self._steps(seed, agents, env)
        except lockstep.Abandoned:
            return self._not_played(seed)
        except AgentFailure as err:
            seat = err.seat
            record = {"outcome": "error", "error_by": seat, "returns": [0.0] * len(self.agents),
                      "error": f"agent {self.specs[seat]!r} as player_{seat} in {self.matchup.env} game seed {seed}: "
                               f"{err}"}
            if self.matchup.stop_on_failure and self.failed is None:
                self.failed = (seat, f"game seed {seed}")
        record["cpu"] = [a.cpu for a in agents]
        record["decisions"] = [a.decisions for a in agents]
        record["seed"] = seed
        return record

    def play(self, seed: int) -> dict[str, Any]:
        with warnings.catch_warnings():  # a penalised move is counted in the results, not printed per game
            if not self.matchup.strict:
                warnings.simplefilter("ignore", IllegalActionWarning)
            return lockstep.drive(self._game(seed, self.agents, self.env), self.agents)

    def play_chunk(self, seeds: list[int]) -> list[dict[str, Any]]:
        """A chunk's records: game by game, or in lockstep when a seat's agent has ``act_batch``."""
        self.failed = None  # each chunk plays until its own first failure
        if not self.batching:
            return [self.play(seed) for seed in seeds]
        games = []
        for slot, seed in enumerate(seeds):
            agents = [lockstep.SlotAgent(slot, self._reset(seat, slot)) if seat in self.batching
                      else self._slot_agent(seat, slot) for seat in range(len(self.agents))]
            while len(self._envs) <= slot:
                self._envs.append(make_env(self.matchup.env, **self.options))
            games.append((self._game(seed, agents, self._envs[slot]), agents))
        seats = {seat: self._batched_seat(seat) for seat in self.batching}
        with warnings.catch_warnings():
            if not self.matchup.strict:
                warnings.simplefilter("ignore", IllegalActionWarning)
            return lockstep.play(games, seats, stopped=lambda: self.matchup.stop_on_failure and self.failed is not None)

    # ------------------------------------------------------------------ lockstep: one agent per game
    def _slot_copy(self, seat: int, slot: int):
        """Slot ``slot``'s own agent of an in-process seat (agents keep a game's state, so each game of a chunk
        needs its own); slot 0's is the worker's."""
        copies = self._copies.setdefault(seat, [self._inner(seat)])
        while len(copies) <= slot:
            copies.append(make_agent(self.specs[seat], self.matchup.env, seat=seat))
        return copies[slot]

    def _reset(self, seat: int, slot: int) -> Callable[[int | None], None]:
        """How a batching seat's slot starts a game: its own agent's ``reset`` (a failure the game's, as ever)."""
        inner = self._inner(seat)
        agent = _Slot(inner, slot) if isinstance(inner, IsolatedAgent) else self._slot_copy(seat, slot)
        if not self.matchup.strict:
            agent = Guarded(agent, seat, self.n_actions[seat])
        reset = getattr(agent, "reset", None)
        return (lambda seed: reset(seed=seed)) if callable(reset) else (lambda seed: None)

    def _slot_agent(self, seat: int, slot: int):
        """A lockstep game's agent for a seat that answers game by game."""
        inner = self._inner(seat)
        agent = _Slot(inner, slot) if isinstance(inner, IsolatedAgent) else self._slot_copy(seat, slot)
        if self.matchup.strict:
            return agent
        wrapper = GuardedBits if isinstance(agent, BitsAgent) else Guarded
        return wrapper(agent, seat, self.n_actions[seat], clock=lockstep.wall_or_cpu(inner))

    def _batched_seat(self, seat: int) -> lockstep.BatchedSeat:
        inner = self._inner(seat)
        if isinstance(inner, IsolatedAgent):
            call, size = inner.act_batch, probe(self.specs[seat], self.matchup.env, self.matchup.isolation).batch_size
        else:
            call = lockstep.in_process_call(self._copies.setdefault(seat, [inner]))
            size = lockstep.batch_size(inner)
        n = self.n_actions[seat]
        if self.matchup.strict:
            def fail(problem, error):
                return error if error is not None else IllegalActionError(f"player_{seat}: {problem}")
        else:
            def fail(problem, error):
                return AgentFailure(seat, problem)
        return lockstep.BatchedSeat(call, size, lockstep.wall_or_cpu(inner), fail,
                                    check=lambda action: not _malformed(action, n))


class _Slot:
    """One slot of an isolated agent, as the agent of one game."""

    def __init__(self, agent: IsolatedAgent, slot: int):
        self.agent, self.slot, self.name = agent, slot, agent.name

    def reset(self, seed: int | None = None) -> None:
        self.agent.reset(seed, self.slot)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        return self.agent.act(observation, action_mask, self.slot)


# Games played tick by tick for records with more than the final info (generators of their moves, as
# ``env_game_steps``), the loops that play one with a list of agents, and the version of those records (part of the
# cache key).
GAME_STEPS: dict[str, Callable] = {s.env_id: s.load("tick_steps") for s in GAMES.values() if s.tick_steps}


def _loop(steps: Callable) -> Callable:
    """The game loop of a generator of moves: one game, ``agents[seat].act`` answering."""
    return lambda env, agents, seed: lockstep.drive(steps(env, seed), agents)


GAME_LOOPS: dict[str, Callable] = {env_id: _loop(steps) for env_id, steps in GAME_STEPS.items()}
RECORD_VERSIONS = {s.env_id: s.record_version for s in GAMES.values() if s.record_version}

# ---------------------------------------------------------------------------- the cache
class CacheWarning(UserWarning):
    """A cached chunk of games that cannot be trusted: it is discarded and its games are played again."""


def _checksum(records: list[dict[str, Any]]) -> str:
    return hashlib.sha256(json.dumps(records, sort_keys=True).encode()).hexdigest()


def write_chunk(path: Path, seeds: list[int], records: list[dict[str, Any]]) -> None:
    """Write a chunk atomically: a temporary file in the same folder, then ``os.replace`` onto ``path``."""
    data = {"seeds": [seeds[0], seeds[-1]], "games": len(records), "sha256": _checksum(records), "records": records}
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(data, f)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _chunk_problem(raw: bytes, seeds: list[int]) -> tuple[str, list[dict[str, Any]] | None]:
    """What is wrong with a chunk file's bytes ("" if nothing), and its records if nothing is."""
    if not raw.strip():
        return "empty file", None
    try:
        data = json.loads(raw)
    except ValueError as err:  # JSONDecodeError and UnicodeDecodeError
        return f"not valid JSON, truncated or damaged ({err})", None
    if not isinstance(data, dict) or not {"seeds", "games", "sha256", "records"} <= data.keys():
        return "not a chunk with seeds, games and a checksum (damaged, or written by an older cardzoo)", None
    records = data["records"]
    if data["seeds"] != [seeds[0], seeds[-1]]:
        return f"holds seeds {data['seeds']}, expected {[seeds[0], seeds[-1]]}", None
    if not isinstance(records, list) or data["games"] != len(seeds) or len(records) != len(seeds):
        count = len(records) if isinstance(records, list) else "no list of"
        return f"holds {count} games (says {data['games']}), expected {len(seeds)}", None
    if _checksum(records) != data["sha256"]:
        return "its records do not match their checksum (edited or damaged)", None
    return "", records


def read_chunk(path: Path, seeds: list[int]) -> list[dict[str, Any]] | None:
    """The records of a finished chunk; None if there is none, or (with a ``CacheWarning``) if it is bad."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as err:
        problem, records = f"unreadable ({err.strerror})", None
    else:
        problem, records = _chunk_problem(raw, seeds)
    if problem:
        warnings.warn(f"evaluation cache chunk {path}: {problem}; discarded, its {len(seeds)} games are played "
                      "again", CacheWarning, stacklevel=2)
    return records


# ---------------------------------------------------------------------------- many games
_worker: _Worker | None = None


def _play_chunk(matchup: Matchup, seeds: list[int], seat_key: bytes | None = None) -> list[dict[str, Any]]:
    global _worker
    if _worker is None or _worker.matchup != matchup or _worker.seat_key != seat_key:
        if _worker is not None:
            _worker.close()  # an isolated agent's process ends with its matchup
        _worker = _Worker(matchup, seat_key)
    return _worker.play_chunk(seeds)


def _chunk_name(seeds: list[int]) -> str:
    return f"{seeds[0]}-{seeds[-1]}.json"


def run(
    matchup: Matchup,
    games: int,
    base_seed: int = 0,
    workers: int | None = None,
    cache_dir: str | Path | None = None,
    chunk: int = 250,
    progress: bool = True,
    executor: Executor | None = None,
    seeds: Sequence[int] | None = None,
    seat_key: bytes | None = None,
) -> list[dict[str, Any]]:
    """Play games with seeds ``base_seed .. base_seed + games - 1`` (or the first ``games`` of ``seeds``); one record
    per game, in seed order. Agents are reset with ``agent_seed`` of the game's seed and seat, or with
    ``keyed_agent_seed`` under ``seat_key`` (the benchmark's secret). Chunks run in ``workers`` forked processes,
    or on ``executor`` if given (e.g. ``ray_backend.RayExecutor``)."""
    workers = workers or os.cpu_count() or 1
    if seeds is None:
        seeds = range(base_seed, base_seed + games)
    seeds = [int(s) for s in seeds[:games]]
    chunks = [seeds[s:s + chunk] for s in range(0, len(seeds), chunk)]
    folder = Path(cache_dir) / matchup.key if cache_dir else None
    if folder is not None and seat_key is not None:  # a one-way name: the key itself is never written
        folder = folder / ("key-" + hashlib.sha256(b"cache:" + seat_key).hexdigest()[:16])
    results: dict[int, list[dict[str, Any]]] = {}
    todo = []
    for i, chunk_seeds in enumerate(chunks):
        records = read_chunk(folder / _chunk_name(chunk_seeds), chunk_seeds) if folder else None
        if records is None:
            todo.append(i)
        else:
            results[i] = records
    bar = Progress(matchup.label, len(seeds), stream=sys.stderr, enabled=progress,
                   initial=sum(len(chunks[i]) for i in results))

    def finish(i: int, records: list[dict[str, Any]]) -> None:
        results[i] = records
        if folder is not None:
            path = folder / _chunk_name(chunks[i])
            try:
                write_chunk(path, chunks[i], records)
            except OSError as err:  # a cache that cannot be written costs the resume, not the run
                warnings.warn(f"evaluation cache chunk {path} could not be written ({err.strerror or err}); the run "
                              "goes on without it", CacheWarning, stacklevel=2)
        bar.update(len(records))

    with bar:
        if executor is None and (workers == 1 or len(todo) <= 1):
            try:
                for i in todo:
                    finish(i, _play_chunk(matchup, chunks[i], seat_key))
            finally:
                _release()
        else:
            pool = executor or ProcessPoolExecutor(max_workers=workers, mp_context=get_context("fork"))
            try:
                futures = {pool.submit(_play_chunk, matchup, chunks[i], seat_key): i for i in todo}
                for future in as_completed(futures):
                    finish(futures[future], future.result())
            finally:
                if executor is None:
                    pool.shutdown()
    return [record for i in range(len(chunks)) for record in results[i]]


def _release() -> None:
    """Ends this process's isolated agents' workers (a run played here leaves none running)."""
    global _worker
    if _worker is not None and any(isinstance(getattr(a, "agent", a), IsolatedAgent) for a in _worker.agents):
        _worker.close()
        _worker = None
