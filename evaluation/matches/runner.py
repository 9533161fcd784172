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
"""

from __future__ import annotations

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

from cardzoo.agents.base import BitsAgent
from cardzoo.agents.registry import make_agent
from cardzoo.envs.common.record import make_env
from cardzoo.envs.registry import GAMES
from cardzoo.evaluation.progress import Progress

from .loops import FAST_LOOPS, agent_seed


@dataclass(frozen=True)
class Matchup:
    """Who plays what: an env with its options, and one agent name per seat (cycled if fewer)."""

    env: str
    agents: tuple[str, ...]
    options: tuple[tuple[str, Any], ...] = field(default=())

    @staticmethod
    def of(env: str, agents: Sequence[str], **options: Any) -> Matchup:
        return Matchup(env, tuple(agents), tuple(sorted(options.items())))

    @property
    def key(self) -> str:
        """Names the matchup's cached results: env, options, agents and the learned agents' weights."""
        from cardzoo.agents.registry import fingerprint

        versions = [fingerprint(a, self.env) for a in self.agents]
        parts = [self.env, self.agents, self.options] + ([versions] if any(versions) else [])
        if self.env in RECORD_VERSIONS:  # records that grew new fields are never read from an older cache
            parts.append(RECORD_VERSIONS[self.env])
        text = json.dumps(parts, sort_keys=True)
        return f"{self.env}-{'+'.join(self.agents)}-" + hashlib.sha1(text.encode()).hexdigest()[:10]

    @property
    def label(self) -> str:
        opts = " ".join(f"{k}={v}" for k, v in self.options)
        return f"{self.env} {opts} {'+'.join(self.agents)}".strip()


# ---------------------------------------------------------------------------- one game
class _Worker:
    """Env and agents of one process, built once and reset per game."""

    def __init__(self, matchup: Matchup):
        self.matchup = matchup
        self.options = dict(matchup.options)
        # Strict: an agent's illegal move is a bug to report, not a game to count as lost.
        self.env = make_env(matchup.env, **{"illegal_action": "raise", **self.options})
        seats = self.env.possible_agents
        self.agents = [make_agent(matchup.agents[i % len(matchup.agents)], matchup.env) for i in range(len(seats))]
        self.fast = FAST_LOOPS.get(matchup.env) if all(isinstance(a, BitsAgent) for a in self.agents) else None
        self.loop = GAME_LOOPS.get(matchup.env, play_env_game)

    def play(self, seed: int) -> dict[str, Any]:
        for seat, agent in enumerate(self.agents):
            agent.reset(seed=agent_seed(seed, seat))
        if self.fast is not None:
            record = self.fast(self.options, self.agents, seed)
        else:
            record = self.loop(self.env, self.agents, seed)
        record["seed"] = seed
        return record


def play_env_game(env, agents: Sequence, seed: int) -> dict[str, Any]:
    """One game through the env's agent_iter loop; the final info plus each seat's total reward."""
    env.reset(seed=seed)
    seat_of = {a: i for i, a in enumerate(env.possible_agents)}
    totals = [0.0] * len(env.possible_agents)
    final: dict[str, Any] = {}
    for agent_id in env.agent_iter():
        obs, reward, term, trunc, info = env.last()
        totals[seat_of[agent_id]] += reward
        if term or trunc:
            final = info
            env.step(None)
        else:
            env.step(agents[seat_of[agent_id]].act(obs["observation"], obs["action_mask"]))
    return {**final, "returns": totals}


# Games played tick by tick for records with more than the final info (env, agents, seed) -> record, and the
# version of those records, part of the cache key.
GAME_LOOPS: dict[str, Callable] = {s.env_id: s.load("tick_loop") for s in GAMES.values() if s.tick_loop}
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


def _play_chunk(matchup: Matchup, seeds: list[int]) -> list[dict[str, Any]]:
    global _worker
    if _worker is None or _worker.matchup != matchup:
        _worker = _Worker(matchup)
    return [_worker.play(seed) for seed in seeds]


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
) -> list[dict[str, Any]]:
    """Play games with seeds ``base_seed .. base_seed + games - 1``; one record per game, in seed order. Chunks
    run in ``workers`` forked processes, or on ``executor`` if given (e.g. ``ray_backend.RayExecutor``)."""
    workers = workers or os.cpu_count() or 1
    chunks = [list(range(s, min(s + chunk, base_seed + games))) for s in range(base_seed, base_seed + games, chunk)]
    folder = Path(cache_dir) / matchup.key if cache_dir else None
    results: dict[int, list[dict[str, Any]]] = {}
    todo = []
    for i, seeds in enumerate(chunks):
        records = read_chunk(folder / _chunk_name(seeds), seeds) if folder else None
        if records is None:
            todo.append(i)
        else:
            results[i] = records
    bar = Progress(matchup.label, games, stream=sys.stderr, enabled=progress,
                   initial=sum(len(chunks[i]) for i in results))

    def finish(i: int, records: list[dict[str, Any]]) -> None:
        results[i] = records
        if folder is not None:
            write_chunk(folder / _chunk_name(chunks[i]), chunks[i], records)
        bar.update(len(records))

    with bar:
        if executor is None and (workers == 1 or len(todo) <= 1):
            for i in todo:
                finish(i, _play_chunk(matchup, chunks[i]))
        else:
            pool = executor or ProcessPoolExecutor(max_workers=workers, mp_context=get_context("fork"))
            try:
                futures = {pool.submit(_play_chunk, matchup, chunks[i]): i for i in todo}
                for future in as_completed(futures):
                    finish(futures[future], future.result())
            finally:
                if executor is None:
                    pool.shutdown()
    return [record for i in range(len(chunks)) for record in results[i]]
