"""Types and checks for command-line arguments, shared by every folder's commands (they sit below the command line
so that a trainer or a study can parse its options without importing ``cardzoo.evaluation.cli``)."""

from __future__ import annotations

import argparse
import json
import math
import tempfile
from pathlib import Path

from ..registry import GAMES as _SPECS
from ..registry import spec
from .errors import OptionError

GAMES = ", ".join(sorted(_SPECS))  # the registered games, for help texts and messages


class CommandError(Exception):
    """A command that cannot run as given (a bad file or folder, a missing extra): one line for the user."""


def game(text: str) -> str:
    """argparse type: a game's name, with or without its version suffix; the env name."""
    try:
        return spec(text).env_id
    except OptionError:
        raise argparse.ArgumentTypeError(f"unknown game {text!r}; games: {GAMES}") from None


def number(kind: type, low: float | None = None, above: bool = False):
    """argparse type: a finite ``kind`` (int or float) of at least ``low`` (above ``low`` if ``above``)."""
    wanted = f"{'a whole' if kind is int else 'a'} number" + ("" if low is None else f" {'>' if above else '>='} {low}")

    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            value = None
        if value is None or not math.isfinite(value) or low is not None and (value < low or above and value == low):
            raise argparse.ArgumentTypeError(f"expected {wanted}, got {text!r}")
        return value

    return parse


def env_options(pairs: list[str]) -> dict:
    """``-o name=value`` pairs as a dict; values read as JSON where they parse, as strings otherwise."""
    options = {}
    for pair in pairs:
        if "=" not in pair:
            raise CommandError(f"an option is -o name=value, got {pair!r}")
        key, value = pair.split("=", 1)
        try:
            options[key] = json.loads(value)
        except json.JSONDecodeError:
            options[key] = value
        except RecursionError:  # the env names any other bad value; this one never reaches it
            raise CommandError(f"option {key}: its value is nested too deeply to be an option") from None
    return options


def writable_folder(folder: Path, what: str) -> None:
    """Create ``folder`` and write and delete a file in it, so a bad path fails before any game is played."""
    if folder.exists() and not folder.is_dir():
        raise CommandError(f"cannot write {what} in {folder}: it is a file, not a folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".cardzoo-probe-") as probe:
            probe.write(b"probe")
            probe.flush()
    except OSError as err:
        raise CommandError(f"cannot write {what} in {folder}: {err.strerror or err}") from None


def writable_file(path: Path, what: str) -> None:
    if path.is_dir():
        raise CommandError(f"cannot write {what} to {path}: it is a folder")
    writable_folder(path.parent, what)
