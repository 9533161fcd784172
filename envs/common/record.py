"""Saving a game as JSON-ready data and replaying it to the identical state."""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

from .errors import OptionError

ENV_MODULES = {"rope_team_v0": "cardzoo.envs.rope_team_v0"}


def make_env(name: str, **options):
    """The wrapped env registered under ``name`` (e.g. ``"rope_team_v0"``)."""
    if name not in ENV_MODULES:
        raise OptionError(f"unknown environment {name!r}; known: {', '.join(sorted(ENV_MODULES))}")
    return importlib.import_module(ENV_MODULES[name]).env(**options)


def replay(record: dict[str, Any] | str | Path):
    """A fresh env that has played ``record`` (a dict from ``game_record()`` or a JSON file) move by move."""
    if not isinstance(record, dict):
        record = json.loads(Path(record).read_text())
    env = make_env(record["env"], **record["options"])
    env.reset(seed=record["seed"], options=record.get("reset_options") or None)
    for action in record["actions"]:
        env.step(action)
    return env


def save(env, path: str | Path) -> None:
    Path(path).write_text(json.dumps(env.unwrapped.game_record(), indent=1))
