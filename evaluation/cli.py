"""The ``cardzoo`` command: ``play``, ``serve``, ``replay``, ``evaluate``, ``train``, ``race``, ``bench``, ``benchmark``

Each folder owns its commands and this module only assembles them: ``cardzoo.play.commands`` (play, serve,
replay), ``cardzoo.evaluation.commands`` (evaluate, race, bench), ``cardzoo.evaluation.protocol.command``
(benchmark) and ``cardzoo.training.commands`` (train, whose
options depend on its ``--backend``, so that is read first). Their help is printed as plain text (:func:`plain`).

Options of an env are given as ``-o name=value`` (values are read as JSON where they parse, e.g.
``-o open_hands=true -o ropes=2``; otherwise as strings, e.g. ``-o level=hard``). ``play`` shows the table as
text itself, so it refuses ``-o render_mode=...``.

Errors end the command with one line on stderr and a non-zero status, never a traceback: a bad argument is
argparse's ``error:`` line (status 2); a bad game, option, record or output path is ``cardzoo <command>: ...``
(status 2), checked before any game is played; output to a closed pipe (``cardzoo play ... | head``) ends quietly
(status 1, as Python's own recipe); a full disk or another failed write is one line (status 1).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from importlib.metadata import version

from cardzoo.envs.common.argtypes import GAMES, CommandError, game, number, writable_file, writable_folder
from cardzoo.envs.common.argtypes import env_options as _options  # noqa: F401 (re-exported)
from cardzoo.envs.common.errors import CardzooError
from cardzoo.evaluation import commands as evaluation_commands
from cardzoo.evaluation.commands import bench, evaluate, evaluate_records, race_cmd
from cardzoo.evaluation.protocol.command import add_benchmark
from cardzoo.play import commands as play_commands
from cardzoo.play.commands import host_name, play, play_human, port, replay_cmd, replay_games, serve
from cardzoo.training import commands as training_commands

# Names scripts and tests import from here (the argument types; the commands before they moved to their folders).
__all__ = ["GAMES", "CommandError", "bench", "build_parser", "evaluate", "evaluate_records", "game", "host_name",
           "main", "number", "play", "play_human", "plain", "port", "race_cmd", "replay_cmd", "replay_games", "serve",
           "writable_file", "writable_folder"]

_ROLE = re.compile(r":[a-z]+(?::[a-z]+)?:`~?([^`]*)`")  # :class:`x`, :py:func:`~a.x`
_LITERAL = re.compile(r"``([^`]*)``")


def plain(text: str | None) -> str | None:
    """``text`` without reST markup, as a terminal shows help: ``x`` and :role:`x` become x."""
    if text is None:
        return None
    return _LITERAL.sub(r"\1", _ROLE.sub(r"\1", text))


def _plain_help(parser: argparse.ArgumentParser) -> None:
    # Docstrings and option help are written in reST for the docs site; argparse would print the markup as is.
    parser.description = plain(parser.description)
    for action in parser._actions:
        if isinstance(action.help, str):
            action.help = plain(action.help)
        if isinstance(action, argparse._SubParsersAction):
            for choice in action._choices_actions:
                choice.help = plain(choice.help)
            for sub in set(action.choices.values()):
                _plain_help(sub)


def build_parser(train_backend: str = "sb3") -> argparse.ArgumentParser:
    """The ``cardzoo`` parser; ``train`` takes the options of ``train_backend`` (CommandError if its extra is
    missing)."""
    parser = argparse.ArgumentParser(prog="cardzoo", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"cardzoo {version('cardzoo')}")
    sub = parser.add_subparsers(dest="command", required=True)
    play_commands.add_parsers(sub)
    evaluation_commands.add_evaluate(sub)
    training_commands.add_parser(sub, train_backend)
    evaluation_commands.add_race(sub)
    evaluation_commands.add_bench(sub)
    add_benchmark(sub)
    _plain_help(parser)
    return parser


def _stdout_to_devnull() -> None:
    # Python flushes stdout again at exit; pointing it at devnull keeps that flush from a second error.
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    try:
        parser = build_parser(training_commands.backend(argv[1:]) if argv[:1] == ["train"] else "sb3")
    except CommandError as err:  # the extra the named trainer needs is missing
        print(f"cardzoo train: {err}", file=sys.stderr)
        raise SystemExit(2) from None
    args = parser.parse_args(argv)
    args.argv = argv  # for the record of a training run
    try:
        args.func(args)
        sys.stdout.flush()
    except (CardzooError, CommandError) as err:
        kind = f"{type(err).__name__}: " if isinstance(err, CardzooError) else ""
        print(f"cardzoo {args.command}: {kind}{err}", file=sys.stderr)
        raise SystemExit(1 if isinstance(err, OSError) else 2) from None  # SaveError: a failed write
    except BrokenPipeError:  # the reader went away (`| head`): stop quietly
        _stdout_to_devnull()
        raise SystemExit(1) from None
    except OSError as err:  # a full disk (stdout to /dev/full too), a file that went away: the system's words
        try:
            sys.stdout.flush()
        except OSError:
            _stdout_to_devnull()
        print(f"cardzoo {args.command}: {err}", file=sys.stderr)
        raise SystemExit(1) from None
    except KeyboardInterrupt:
        print(f"cardzoo {args.command}: interrupted", file=sys.stderr)
        raise SystemExit(130) from None


if __name__ == "__main__":
    main()
