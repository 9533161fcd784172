"""What every cardzoo trainer shares: its options, the held-out evaluation, the learning curve and the run's log.

A trainer (``train.py`` for SB3, ``ppo_batched.py``, ``distil.py``, ``rllib/train.py``) declares its options as a
dataclass of :func:`option` fields; :func:`add_options` turns them into command-line flags and :func:`config` back
into the dataclass. PPO's settings have one name in every trainer, CleanRL's: ``num_envs``, ``num_steps``,
``steps_per_iteration``, ``minibatch_size``, ``update_epochs``, ``clip_coef``, ``ent_coef``. A trainer's earlier
names (``n_steps``, ``clip_range``, ``batch``, ...) are declared with ``old=`` and keep working, with a
``FutureWarning``, as flags (``--n-steps``), as constructor keywords and as attributes (see :func:`renamed_options`).

Held-out evaluation plays the deals ``EVAL_BASE_SEED + i``, disjoint from the report's (``0 .. N-1``), so choosing
the best checkpoint does not bias the report; each trainer plays them its own way (:func:`held_out`).
"""

from __future__ import annotations

import argparse
import csv
import functools
import json
import shlex
import shutil
import sys
import time
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, fields
from pathlib import Path

import numpy as np

from cardzoo.envs.common.argtypes import number
from cardzoo.envs.common.seeding import refuse_benchmark_seeds

EVAL_BASE_SEED = 10_000_000

# options where "none" (or "") on the command line turns the choice off
NONE_NAMES = ("imitate", "features", "init")


def option(default, help: str, low: float | None = None, old: Iterable[str] = ()):
    """A config field: its default, its one-line help for ``--help``, for numbers the smallest value the command line
    accepts, and the names it had before (still accepted, with a warning)."""
    return field(default=default, metadata={"help": help, "low": low, "old": tuple(old)})


# ----------------------------------------------------------------------------- renamed options
def renames(config_class) -> dict[str, str]:
    """``{old name: name}`` of a config class's renamed options."""
    return {old: f.name for f in fields(config_class) for old in f.metadata.get("old", ())}


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _message(old: str, new: str) -> str:
    return f"{old} is now {new}; the old name will go in a future release"


def _warn_renamed(old: str, new: str, stacklevel: int) -> None:
    # FutureWarning, not DeprecationWarning: Python shows it to the person running a script or a command
    warnings.warn(_message(old, new), FutureWarning, stacklevel=stacklevel)


def renamed_options(config_class):
    """Class decorator of a config dataclass: each field's ``old`` names are accepted as constructor keywords and
    read as attributes, each use warning that the name changed."""
    table = renames(config_class)
    init = config_class.__init__

    @functools.wraps(init)
    def __init__(self, *args, **kwargs):
        for old in [k for k in kwargs if k in table]:
            new = table[old]
            if new in kwargs:
                raise TypeError(f"{config_class.__name__}() got both {old!r} and its new name {new!r}")
            _warn_renamed(old, new, stacklevel=3)
            kwargs[new] = kwargs.pop(old)
        init(self, *args, **kwargs)

    def alias(old: str, new: str):
        def get(self):
            _warn_renamed(old, new, stacklevel=3)
            return getattr(self, new)

        return property(get, doc=f"Deprecated name of ``{new}``.")

    config_class.__init__ = __init__
    for old, new in table.items():
        setattr(config_class, old, alias(old, new))
    return config_class


class _Renamed(argparse.Action):
    """A deprecated flag: warns, then stores its value under the new option's name."""

    def __init__(self, option_strings, dest, new_flag: str = "", **kwargs):
        self.new_flag = new_flag
        super().__init__(option_strings, dest, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        # attributed to the command, not to a line of argparse: one line on stderr, "cardzoo train:0: FutureWarning..."
        warnings.warn_explicit(_message(option_string, self.new_flag), FutureWarning, filename=parser.prog, lineno=0)
        setattr(namespace, self.dest, values)


# ----------------------------------------------------------------------------- command line
def add_options(parser: argparse.ArgumentParser, config_class, games) -> argparse.ArgumentParser:
    """The fields of ``config_class`` as ``parser``'s arguments, each with its help and default; the game is
    positional, one of ``games``. A field's old names are hidden flags that still work (with a warning)."""
    for f in fields(config_class):
        default = f.default  # the declared default: "default", () and "" resolve per game in __post_init__
        shown = " ".join(map(str, default)) if isinstance(default, tuple) else "none" if default is None else default
        help = f.metadata["help"].replace("%", "%%")
        if f.name == "game":
            parser.add_argument("game", choices=sorted(games), help=help)
            continue
        help += f" (default: {shown})" if shown != "" and "default:" not in help else ""
        low = f.metadata["low"]
        if isinstance(default, tuple):
            kind = int if default and isinstance(default[0], int) else str
            kwargs = {"nargs": "+", "type": kind if low is None else number(kind, low)}
        elif isinstance(default, bool):
            kwargs = {"action": argparse.BooleanOptionalAction}
        elif f.name == "features":
            from cardzoo.agents.features import FEATURES

            kwargs = {"choices": [*FEATURES, "none"]}
        elif default is None or isinstance(default, str):
            kwargs = {}
        else:
            kwargs = {"type": number(type(default), low)}
        parser.add_argument(_flag(f.name), default=default, help=help, **kwargs)
        for old in f.metadata.get("old", ()):
            if "action" in kwargs:
                raise TypeError(f"{f.name}: a switch cannot keep an old name")
            parser.add_argument(_flag(old), dest=f.name, action=_Renamed, new_flag=_flag(f.name),
                                default=argparse.SUPPRESS, help=argparse.SUPPRESS, **kwargs)
    return parser


def config(args: argparse.Namespace, config_class):
    """The config of parsed options ("none" turns an optional name off); ValueError if they conflict."""
    values = {f.name: getattr(args, f.name) for f in fields(config_class)}
    for key in NONE_NAMES:
        if key in values and values[key] in ("none", "None", ""):
            values[key] = None
    return config_class(**{k: tuple(v) if isinstance(v, list) else v for k, v in values.items()})


def parse_args(config_class, argv: list[str], prog: str, description: str, games):
    """A trainer's options parsed into its config; a conflict between them is argparse's error (status 2)."""
    parser = add_options(argparse.ArgumentParser(prog=prog, description=description), config_class, games)
    args = parser.parse_args(argv)
    try:
        return config(args, config_class)
    except ValueError as err:
        parser.error(str(err))


def main(parse: Callable[[list[str]], object], train: Callable, argv: list[str] | None, command: str):
    """A trainer's ``main``: parse ``argv`` (default the process's) and train, recording the command line."""
    argv = sys.argv[1:] if argv is None else argv
    return train(parse(argv), command=f"{command} {shlex.join(argv)}")


# ----------------------------------------------------------------------------- a run's files
def whole_rollouts(cfg, steps: int) -> int:
    """``steps`` rounded up to whole rollouts of ``num_envs * num_steps``: PPO collects and learns from whole
    rollouts."""
    rollout = cfg.num_envs * cfg.num_steps
    return -(-steps // rollout) * rollout


def held_out(levels: Iterable[str], games: int, rate: Callable[[str, list[int]], float]) -> dict[str, float]:
    """``{level: rate(level, seeds)}`` on the held-out deals ``EVAL_BASE_SEED + i``, ``i < games``; ``rate`` plays
    them the trainer's way (its own env, engine or worker pool)."""
    refuse_benchmark_seeds(EVAL_BASE_SEED, games, "training's held-out evaluation")
    seeds = [EVAL_BASE_SEED + i for i in range(games)]
    return {level: rate(level, seeds) for level in levels}


@dataclass
class Curve:
    """The held-out win rates of a run's evaluations: ``curve.csv`` and a chart, ``curve.png`` (and ``.svg``).

    A row holds the position (``x``), other bookkeeping columns (``skip``), one rate per level and their mean; the
    chart draws each rate, and the mean when there is more than one (always, with ``always_mean``)."""

    rows: list[dict] = field(default_factory=list)
    # class attributes, not fields: a subclass sets them for its own chart
    title = "Win rate during training (held-out deals)"
    x = "steps"
    x_label = "environment steps"
    skip = ("seconds",)
    always_mean = False

    def add(self, **row) -> None:
        self.rows.append(row)

    def write(self, out: Path) -> None:
        with open(out / "curve.csv", "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(self.rows[0]))
            writer.writeheader()
            writer.writerows(self.rows)
        self.draw(out)

    @classmethod
    def read(cls, out: Path) -> Curve:
        """The curve a run wrote to ``out/curve.csv``."""
        with open(out / "curve.csv", newline="") as f:
            return cls([{k: float(v) for k, v in row.items()} for row in csv.DictReader(f)])

    def draw(self, out: Path) -> None:
        """``curve.png`` and ``curve.svg`` in ``out`` (nothing without matplotlib)."""
        from cardzoo.envs.common.charts import line_chart

        rates = [k for k in self.rows[0] if k not in (self.x, *self.skip, "mean")]
        names = rates if len(rates) == 1 and not self.always_mean else [*rates, "mean"]
        series = {k: [(r[self.x], r[k]) for r in self.rows] for k in names}
        line_chart(self.title, series, out / "curve.png", x_label=self.x_label)


class RunLog:
    """A run's folder (with ``checkpoints/``) and its log: timestamped lines to the terminal and to ``train.log``."""

    def __init__(self, out: Path):
        (out / "checkpoints").mkdir(parents=True, exist_ok=True)
        self.file = open(out / "train.log", "a")

    def __call__(self, message: str) -> None:
        line = f"[{time.strftime('%H:%M:%S')}] {message}"
        print(line, flush=True)
        self.file.write(line + "\n")
        self.file.flush()

    def close(self) -> None:
        self.file.close()


class Evaluations:
    """A run's held-out evaluations: each is a row of the curve (rewritten at once), a line of the log, and, when
    its mean beats the best so far, the new ``best`` (for ``run.json``) with its policy files copied."""

    def __init__(self, out: Path, log: Callable[[str], None], curve: Curve | None = None):
        self.out, self.log = out, log
        self.curve = Curve() if curve is None else curve
        self.best: dict = {"mean": -1.0}

    def add(self, rates: dict[str, float], row: dict, where: dict, heading: str, copies: dict[Path, str],
            show_mean: bool = True) -> None:
        """Record ``rates``: the curve row is ``row`` then the rates and their mean; ``where`` (e.g. the step) goes
        into ``best``; the log line is ``heading: rate, rate (mean)``; ``copies`` maps each evaluated file to its
        name in the run's folder when it is the best."""
        mean = float(np.mean(list(rates.values())))
        self.curve.add(**row, **rates, mean=mean)
        self.curve.write(self.out)
        shown = ", ".join(f"{k} {100 * v:.1f}%" for k, v in rates.items())
        self.log(f"{heading}: {shown}" + (f" (mean {100 * mean:.1f}%)" if show_mean else ""))
        if mean > self.best["mean"]:
            self.best = {"mean": mean, **where, "rates": rates}
            for path, name in copies.items():
                shutil.copyfile(path, self.out / name)


def write_run(out: Path, run: dict) -> None:
    """``run.json``: what a run was given and what it made (options, command, steps, times, the best)."""
    (out / "run.json").write_text(json.dumps(run, indent=1))
