"""``cardzoo benchmark``: score agents by the benchmark's protocol (see :mod:`cardzoo.evaluation.protocol`).

An agent that fails (raises, returns no action, runs out of time, exits) makes the command exit non-zero once its
result is written, naming the first failure; ``--keep-going`` plays every cell and exits 0, the failed cells marked.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import shlex
from pathlib import Path

from cardzoo.agents.isolated import Limits
from cardzoo.agents.pools import PARTS
from cardzoo.envs.common.argtypes import GAMES, CommandError, game, number, writable_folder

from .protocol import BUDGETS, VERSION

PLAIN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")


def result_name(text: str) -> str:
    """``--name``: a plain file stem, so the result files stay inside ``--out``."""
    if not PLAIN_NAME.fullmatch(text) or text.endswith("."):
        raise argparse.ArgumentTypeError(f"{text!r} is not a plain file name: letters, digits, '.', '_' and '-', "
                                         "starting with a letter or digit (the files are written inside --out)")
    return text


def benchmark_cmd(args: argparse.Namespace) -> None:
    from .results import file_name, pct, write
    from .run import benchmark

    if args.backend == "ray" and importlib.util.find_spec("ray") is None:
        raise CommandError("--backend ray needs Ray, which is not installed: pip install -e '.[rllib]'")
    if args.backend == "local" and args.address:
        raise CommandError("--address is for --backend ray")

    out = Path(args.out)
    writable_folder(out, "the results")
    if args.cache:
        writable_folder(Path(args.cache), "the cache")
    if args.name and len(args.agents) > 1:
        raise CommandError("--name names one agent's result files; give one agent")
    stems = [args.name or file_name(a) for a in args.agents]
    if len(set(stems)) != len(stems):
        raise CommandError(f"two agents would write the same result files ({', '.join(stems)}): benchmark them one "
                           "at a time with --name")
    command = "cardzoo " + shlex.join(args.argv) if getattr(args, "argv", None) else None
    kwargs = {"games": args.only, "budget": args.budget, "games_per_cell": args.games,
              "workers": args.workers or os.cpu_count() or 1,
              "cache": args.cache, "progress": not args.quiet, "command": command, "deal_key": args.deal_key,
              "limits": Limits(decision_seconds=args.decision_timeout, startup_seconds=args.startup_timeout,
                               memory_mb=args.memory_mb),
              "keep_going": args.keep_going, "levels": args.levels, "partners": args.partners, "parts": args.parts}
    if args.reference:
        from cardzoo.envs.registry import GAMES as REGISTRY

        kwargs["reference"] = {g: args.reference for g in REGISTRY}

    def score(executor=None) -> None:
        for agent, stem in zip(args.agents, stems, strict=True):
            result = benchmark(agent, executor=executor, **kwargs)
            path = write(result, out, stem)
            print(f"{agent}: {path} (+ .md, .png)")
            failures = result["failures"]
            for f in failures:
                print(f"  FAILED {f['game']} {f['setting']} {f['cell']}: {f['errors']} games lost to the agent's "
                      f"failures; the first: {f['first']}", flush=True)
            if failures and not args.keep_going:
                raise CommandError(f"{agent} failed in {result['games'][failures[0]['game']]['title']} "
                                   f"({failures[0]['first']}); the run stopped there, its result marked incomplete "
                                   f"in {path}; --keep-going plays every cell")
            for g in result["games"].values():
                h = g["headline"]
                rate = {k: pct(v["rate"]) if v else "–" for k, v in (("self", h["self"]), *h["cross"].items())}
                worst = f"worst {h['worst']['partner']} {pct(h['worst']['rate'])}; " if h["worst"] else ""
                print(f"  {g['title']}: " + (f"self-play {rate['self']}, " if h["self"] else "")
                      + f"dev pool {rate['dev']}, test pool {rate['test']}; {worst}illegal moves {h['illegal']}, "
                      f"errors {h['errors']}", flush=True)

    if args.backend == "local":
        score()
        return
    from cardzoo.evaluation.matches.ray_backend import ray_executor

    with ray_executor(args.address) as executor:
        score(executor)


def add_benchmark(sub) -> None:
    b = sub.add_parser("benchmark", help=f"score an agent by {VERSION}: self-play and play with held-out partner "
                                         "pools on reserved deals (JSON, Markdown, PNG)",
                       description=f"Score agents by the {VERSION} protocol (docs/benchmark.md). An agent is a "
                       "registry name, a .npz policy file, or module:callable / file.py:callable naming a factory "
                       "callable(game, seat, seed) that returns an object with act(observation, action_mask).")
    b.add_argument("agents", nargs="+", metavar="AGENT", help="agent spec(s); each gets its own result files")
    size = b.add_mutually_exclusive_group()
    size.add_argument("--budget", choices=tuple(BUDGETS), default="quick",
                      help="games per cell: " + ", ".join(f"{k} {v}" for k, v in BUDGETS.items()) + " (default quick)")
    size.add_argument("--games", type=number(int, 1), default=None, help="games per cell (a custom budget)")
    b.add_argument("--only", nargs="+", type=game, metavar="GAME",
                   help=f"only these games ({GAMES}); default every game the agent plays")
    b.add_argument("--levels", nargs="+", metavar="LEVEL", help="only these settings (levels; Rook's is "
                   "single_round): a partial result, marked so")
    b.add_argument("--partners", nargs="+", metavar="AGENT", help="only these pool members: a partial result, "
                   "marked so")
    b.add_argument("--parts", nargs="+", choices=PARTS, metavar="PART", help="the pool parts to play (dev, test, "
                   "weak; default the budget's: quick test, full every part)")
    b.add_argument("--reference", help="the agent compared deal by deal (default: each game's baseline)")
    b.add_argument("--out", default="reports/benchmark", help="folder for <agent>.json/.md/.png "
                   "(default reports/benchmark)")
    b.add_argument("--name", type=result_name, help="the result files' name, a plain file stem (default from the "
                   "agent spec)")
    b.add_argument("--workers", type=number(int, 1), default=None, help="processes (default: all cores)")
    b.add_argument("--cache", help="folder for finished chunks of games, so an interrupted run resumes")
    b.add_argument("--backend", choices=("local", "ray"), default="local",
                   help="local processes (--workers), or Ray tasks on a cluster: the same games, the same result")
    b.add_argument("--address", help="with --backend ray: the Ray cluster to join (default: Ray started here)")
    b.add_argument("--quiet", action="store_true", help="no progress bars on stderr")
    b.add_argument("--deal-key", metavar="HEX", help="the deals' key, as a result's deals.key records it: the same "
                   "deals and agent seeds again (default: a fresh secret key, recorded in the result)")
    b.add_argument("--decision-timeout", type=number(float, 0.001), default=Limits.decision_seconds, metavar="S",
                   help=f"seconds an outside agent may take per decision (default {Limits.decision_seconds:g})")
    b.add_argument("--startup-timeout", type=number(float, 0.001), default=Limits.startup_seconds, metavar="S",
                   help=f"seconds an outside agent's worker may take to start and import its code (default "
                   f"{Limits.startup_seconds:g})")
    b.add_argument("--memory-mb", type=number(int, 64), default=Limits.memory_mb, metavar="MB",
                   help=f"an outside agent's worker's memory (address space; default {Limits.memory_mb})")
    b.add_argument("--keep-going", action="store_true", help="play every cell even when the agent fails (the "
                   "failed cells are marked) and exit 0")
    b.set_defaults(func=benchmark_cmd)

