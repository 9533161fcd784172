"""Saving a game as JSON-ready data and replaying it to the identical state."""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

from .errors import CardzooError, OptionError, RecordError

ENV_MODULES = {"rope_team_v0": "cardzoo.envs.rope_team_v0", "summit_rush_v0": "cardzoo.envs.summit_rush_v0",
               "rook_v0": "cardzoo.envs.rook_v0"}
PARALLEL_ENVS = ("summit_rush_v0",)


def _module(name: str):
    if name not in ENV_MODULES:
        raise OptionError(f"unknown environment {name!r}; known: {', '.join(sorted(ENV_MODULES))}")
    return importlib.import_module(ENV_MODULES[name])


def make_env(name: str, **options):
    """The wrapped env registered under ``name`` (e.g. ``"rope_team_v0"``)."""
    return _module(name).env(**options)


def load_record(source: dict[str, Any] | str | Path) -> tuple[dict[str, Any], str]:
    """A record and a name for it in messages, from a dict or a JSON file; :class:`RecordError` if it cannot be
    read or is not shaped like a record (keys ``env``, ``seed``, ``actions``, optional ``options``,
    ``reset_options`` and ``kind``)."""
    if isinstance(source, dict):
        record, where = source, "record"
    else:
        where = f"record file {str(source)!r}"
        try:
            record = json.loads(Path(source).read_text())
        except FileNotFoundError:
            raise RecordError(f"{where} does not exist") from None
        except (OSError, UnicodeDecodeError) as err:
            raise RecordError(f"{where} cannot be read: {err}") from None
        except json.JSONDecodeError as err:
            raise RecordError(f"{where} is not JSON: {err}") from None
    if not isinstance(record, dict):
        raise RecordError(f"{where} must be a JSON object, got {type(record).__name__}")

    def bad(problem: str) -> RecordError:
        return RecordError(f"{where}: {problem}")

    missing = [k for k in ("env", "seed", "actions") if k not in record]
    if missing:
        raise bad(f"missing {', '.join(missing)} (a record has env, options, seed, reset_options and actions)")
    if record["env"] not in ENV_MODULES:
        raise bad(f"unknown env {record['env']!r}; known: {', '.join(sorted(ENV_MODULES))}")
    seed = record["seed"]
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise bad(f"seed must be a non-negative integer, got {seed!r}")
    for key in ("options", "reset_options"):
        if not isinstance(record.get(key) or {}, dict):
            raise bad(f"{key} must be an object, got {type(record[key]).__name__}")
    if not isinstance(record["actions"], list):
        raise bad(f"actions must be a list, got {type(record['actions']).__name__}")
    kind = record.get("kind", "aec")
    if kind not in ("aec", "parallel"):
        raise bad(f"kind must be 'parallel' or absent, got {kind!r}")
    if kind == "parallel" and record["env"] not in PARALLEL_ENVS:
        raise bad(f"a parallel record for {record['env']}, which is turn-based (its actions are a flat list)")
    if kind == "parallel" and not all(isinstance(tick, dict) for tick in record["actions"]):
        raise bad("a parallel record's actions are one {agent: action} object per tick")
    return record, where


def replay(record: dict[str, Any] | str | Path):
    """A fresh env that has played ``record`` (a dict from ``game_record()`` or a JSON file) move by move.

    A record with ``"kind": "parallel"`` comes from a ParallelEnv: its actions are one dict per tick
    (agent -> action), and the env returned is the module's ``parallel_env``. Other records are AEC games whose
    actions are a flat list, replayed through the module's ``env``. Anything that stops the replay — a malformed
    record, an option or move the game refuses, moves after the end — raises :class:`RecordError` naming the record
    and the move.
    """
    record, where = load_record(record)
    module = _module(record["env"])
    parallel = record.get("kind") == "parallel"
    try:
        env = (module.parallel_env if parallel else module.env)(**(record.get("options") or {}))
        env.reset(seed=record["seed"], options=record.get("reset_options") or None)
    except CardzooError as err:
        raise RecordError(f"{where}: the game cannot be set up: {type(err).__name__}: {err}") from None
    for i, action in enumerate(record["actions"]):
        try:
            env.step(dict(action) if parallel else action)
        except CardzooError as err:
            problem = f"{type(err).__name__}: {err}"
            raise RecordError(f"{where}: move {i} ({action!r}) cannot be replayed: {problem}") from None
    return env


def save(env, path: str | Path) -> None:
    Path(path).write_text(json.dumps(env.unwrapped.game_record(), indent=1))
