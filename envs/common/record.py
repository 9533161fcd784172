"""Saving a game as JSON-ready data and replaying it to the identical state.

A record is untrusted input: ``load_record`` checks its shape and types (``env`` a known name, ``seed`` a
non-negative integer, ``options`` an object of strings, numbers, booleans or nulls, ``reset_options`` an object,
``actions`` a list (for a parallel record, of ``{agent: integer}`` objects), nothing nested deeper than
``MAX_DEPTH``) and refuses anything else with a :class:`RecordError` naming the field (``options.level``,
``actions[3].player_0``). ``replay`` turns whatever the game refuses while replaying (a turn's action that is not an
integer among them) into a ``RecordError`` naming the move; a refused record leaves nothing behind (each replay
builds its own env).
"""

from __future__ import annotations

import importlib
import json
import os
import warnings
from pathlib import Path
from typing import Any

from ..registry import GAMES, by_env_id
from .errors import CardzooError, IllegalActionWarning, OptionError, RecordError

# Derived from the game registry, for code that imported them: env id -> module, and the Parallel games.
ENV_MODULES = {s.env_id: s.module for s in GAMES.values()}
PARALLEL_ENVS = tuple(s.env_id for s in GAMES.values() if s.parallel)
# Deeper than any record the games write (a Rook deck or totals list is two levels down): a bound that keeps a
# crafted record from exhausting the interpreter's recursion limit in json or in the env's copying of it.
MAX_DEPTH = 32
# What bad data makes the games or numpy raise besides cardzoo's own errors; a replay reports them as RecordError.
REPLAY_ERRORS = (CardzooError, TypeError, ValueError, LookupError, OverflowError, RecursionError)


def too_deep(value: Any, limit: int = MAX_DEPTH) -> str | None:
    """The path of the first place ``value`` is nested deeper than ``limit`` (``"options.deck[0][0]"``), or None.
    Iterative, so a nesting far beyond Python's recursion limit (or a cycle) is measured without recursing."""
    stack = [(value, "", 1)]
    while stack:
        item, path, depth = stack.pop()
        if isinstance(item, dict):
            children = [(v, f"{path}.{k}" if path else str(k)) for k, v in item.items()]
        elif isinstance(item, (list, tuple)):
            children = [(v, f"{path}[{i}]") for i, v in enumerate(item)]
        else:
            continue
        if depth > limit:
            return path or "the top level"
        stack.extend((v, p, depth + 1) for v, p in children)
    return None


def _kind(value: Any) -> str:
    return f"{value!r} ({type(value).__name__})" if len(repr(value)) <= 60 else f"a {type(value).__name__}"


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _module(name: str):
    games = by_env_id()
    if not isinstance(name, str) or name not in games:
        raise OptionError(f"unknown environment {name!r}; known: {', '.join(sorted(games))}")
    return importlib.import_module(games[name].module)


def make_env(name: str, **options):
    """The wrapped env registered under ``name`` (e.g. ``"rope_team_v0"``)."""
    return _module(name).env(**options)


def load_record(source: dict[str, Any] | str | Path) -> tuple[dict[str, Any], str]:
    """A record and a name for it in messages, from a dict or a JSON file; :class:`RecordError` if it cannot be
    read or is not shaped like a record (keys ``env``, ``seed``, ``actions``, optional ``options``,
    ``reset_options`` and ``kind``)."""
    if isinstance(source, dict):
        record, where = source, "record"
    elif not isinstance(source, (str, os.PathLike)):
        raise RecordError(f"a record is a dict (from game_record() or save()) or the path of its JSON file, got "
                          f"{_kind(source)}")
    else:
        where = f"record file {str(source)!r}"
        try:
            record = json.loads(Path(source).read_text())
        except FileNotFoundError:
            raise RecordError(f"{where} does not exist") from None
        except (OSError, UnicodeDecodeError) as err:
            raise RecordError(f"{where} cannot be read: {err}") from None
        except (ValueError, RecursionError) as err:  # ValueError: not JSON, or an integer of over 4300 digits
            raise RecordError(f"{where} is not JSON: {err or 'nested too deeply'}") from None
    if not isinstance(record, dict):
        raise RecordError(f"{where} must be a JSON object, got {type(record).__name__}")

    def bad(problem: str) -> RecordError:
        return RecordError(f"{where}: {problem}")

    deep = too_deep(record)
    if deep:
        raise bad(f"{deep} is nested more than {MAX_DEPTH} levels deep")
    missing = [k for k in ("env", "seed", "actions") if k not in record]
    if missing:
        raise bad(f"missing {', '.join(missing)} (a record has env, options, seed, reset_options and actions)")
    games = by_env_id()
    if not isinstance(record["env"], str) or record["env"] not in games:
        raise bad(f"unknown env {_kind(record['env'])}; known: {', '.join(sorted(games))}")
    seed = record["seed"]
    if not _is_int(seed) or seed < 0:
        raise bad(f"seed must be a non-negative integer, got {_kind(seed)}")
    for key in ("options", "reset_options"):
        value = record.get(key)
        if value is None:
            continue
        if not isinstance(value, dict):
            raise bad(f"{key} must be an object, got {type(value).__name__}")
        for name, option in value.items():
            if not isinstance(name, str):
                raise bad(f"{key} names must be strings, got {_kind(name)}")
            if key == "options" and not isinstance(option, (str, int, float, bool, type(None))):
                raise bad(f"{key}.{name} must be a string, number, boolean or null, got {type(option).__name__}")
    if not isinstance(record["actions"], list):
        raise bad(f"actions must be a list, got {type(record['actions']).__name__}")
    kind = record.get("kind", "aec")
    if kind not in ("aec", "parallel"):
        raise bad(f"kind must be 'parallel' or absent, got {_kind(kind)}")
    if kind == "parallel" and not games[record["env"]].parallel:
        raise bad(f"a parallel record for {record['env']}, which is turn-based (its actions are a flat list)")
    for i, action in enumerate(record["actions"] if kind == "parallel" else ()):  # a turn's action: the env checks it
        if not isinstance(action, dict):
            raise bad(f"actions[{i}]: a parallel record's actions are one {{agent: action}} object per tick, got "
                      f"{type(action).__name__}")
        for agent, move in action.items():
            if not isinstance(agent, str) or not _is_int(move):
                raise bad(f"actions[{i}].{agent} must be an integer, got {_kind(move)}")
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
    except REPLAY_ERRORS as err:
        raise RecordError(f"{where}: the game cannot be set up: {type(err).__name__}: {err}") from None
    with warnings.catch_warnings():  # a penalised illegal move is how the saved game ended, not news
        warnings.simplefilter("ignore", IllegalActionWarning)
        for i, action in enumerate(record["actions"]):
            try:
                env.step(dict(action) if parallel else action)
            except REPLAY_ERRORS as err:
                shown = repr(action) if len(repr(action)) <= 80 else f"{repr(action)[:77]}..."
                problem = f"{type(err).__name__}: {err}"
                raise RecordError(f"{where}: move {i} ({shown}) cannot be replayed: {problem}") from None
    return env


def save(env, path: str | Path) -> None:
    Path(path).write_text(json.dumps(env.unwrapped.game_record(), indent=1))
