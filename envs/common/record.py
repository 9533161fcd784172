"""Saving a game as JSON-ready data and replaying it to the identical state."""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

from .errors import OptionError

ENV_MODULES = {"rope_team_v0": "cardzoo.envs.rope_team_v0", "summit_rush_v0": "cardzoo.envs.summit_rush_v0",
               "rook_v0": "cardzoo.envs.rook_v0"}


def _module(name: str):
    if name not in ENV_MODULES:
        raise OptionError(f"unknown environment {name!r}; known: {', '.join(sorted(ENV_MODULES))}")
    return importlib.import_module(ENV_MODULES[name])


def make_env(name: str, **options):
    """The wrapped env registered under ``name`` (e.g. ``"rope_team_v0"``)."""
    return _module(name).env(**options)


def replay(record: dict[str, Any] | str | Path):
    """A fresh env that has played ``record`` (a dict from ``game_record()`` or a JSON file) move by move.

    A record with ``"kind": "parallel"`` comes from a ParallelEnv: its actions are one dict per tick
    (agent -> action), and the env returned is the module's ``parallel_env``. Other records are AEC games whose
    actions are a flat list, replayed through the module's ``env``.
    """
    if not isinstance(record, dict):
        record = json.loads(Path(record).read_text())
    if record.get("kind") == "parallel":
        env = _module(record["env"]).parallel_env(**record["options"])
        env.reset(seed=record["seed"], options=record.get("reset_options") or None)
        for actions in record["actions"]:
            env.step(dict(actions))
        return env
    env = make_env(record["env"], **record["options"])
    env.reset(seed=record["seed"], options=record.get("reset_options") or None)
    for action in record["actions"]:
        env.step(action)
    return env


def save(env, path: str | Path) -> None:
    Path(path).write_text(json.dumps(env.unwrapped.game_record(), indent=1))
