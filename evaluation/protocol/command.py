"""``cardzoo benchmark``: score agents by ``benchmark_v1`` (see :mod:`cardzoo.evaluation.protocol`)."""

from __future__ import annotations

import argparse
import os
import shlex
from pathlib import Path

from cardzoo.envs.common.argtypes import GAMES, CommandError, game, number, writable_folder

from .protocol import BUDGETS


def benchmark_cmd(args: argparse.Namespace) -> None:
    from .results import file_name, pct, write
    from .run import benchmark

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
              "cache": args.cache, "progress": not args.quiet, "command": command}
    if args.reference:
        from cardzoo.envs.registry import GAMES as REGISTRY

        kwargs["reference"] = {g: args.reference for g in REGISTRY}

    def score(executor=None) -> None:
        for agent, stem in zip(args.agents, stems, strict=True):
            result = benchmark(agent, executor=executor, **kwargs)
            path = write(result, out, stem)
            print(f"{agent}: {path} (+ .md, .png)")
            for g in result["games"].values():
                h = g["headline"]
                rate = {k: pct(v["rate"]) if v else "–" for k, v in (("self", h["self"]), *h["cross"].items())}
                worst = f"worst {h['worst']['partner']} {pct(h['worst']['rate'])}; " if h["worst"] else ""
                print(f"  {g['title']}: " + (f"self-play {rate['self']}, " if h["self"] else "")
                      + f"dev pool {rate['dev']}, test pool {rate['test']}; {worst}illegal moves {h['illegal']}, "
                      f"errors {h['errors']}", flush=True)

    if args.backend == "local":
        if args.address:
            raise CommandError("--address is for --backend ray")
        score()
        return
    try:
        from cardzoo.evaluation.matches.ray_backend import ray_executor
    except ImportError as err:
        raise CommandError(f"--backend ray needs Ray ({err.name} is missing): pip install -e '.[rllib]'") from None
    with ray_executor(args.address) as executor:
        score(executor)


def add_benchmark(sub) -> None:
    b = sub.add_parser("benchmark", help="score an agent by benchmark_v1: self-play and play with held-out partner "
                                         "pools on reserved deals (JSON, Markdown, PNG)",
                       description="Score agents by the benchmark_v1 protocol (docs/benchmark.md). An agent is a "
                       "registry name, a .npz policy file, or module:callable / file.py:callable naming a factory "
                       "callable(game, seat, seed) that returns an object with act(observation, action_mask).")
    b.add_argument("agents", nargs="+", metavar="AGENT", help="agent spec(s); each gets its own result files")
    size = b.add_mutually_exclusive_group()
    size.add_argument("--budget", choices=tuple(BUDGETS), default="quick",
                      help="games per cell: " + ", ".join(f"{k} {v}" for k, v in BUDGETS.items()) + " (default quick)")
    size.add_argument("--games", type=number(int, 1), default=None, help="games per cell (a custom budget)")
    b.add_argument("--only", nargs="+", type=game, metavar="GAME",
                   help=f"only these games ({GAMES}); default every game the agent plays")
    b.add_argument("--reference", help="the agent compared deal by deal (default: each game's baseline)")
    b.add_argument("--out", default="reports/benchmark", help="folder for <agent>.json/.md/.png "
                   "(default reports/benchmark)")
    b.add_argument("--name", help="the result files' name (default from the agent spec)")
    b.add_argument("--workers", type=number(int, 1), default=None, help="processes (default: all cores)")
    b.add_argument("--cache", help="folder for finished chunks of games, so an interrupted run resumes")
    b.add_argument("--backend", choices=("local", "ray"), default="local",
                   help="local processes (--workers), or Ray tasks on a cluster: the same games, the same result")
    b.add_argument("--address", help="with --backend ray: the Ray cluster to join (default: Ray started here)")
    b.add_argument("--quiet", action="store_true", help="no progress bars on stderr")
    b.set_defaults(func=benchmark_cmd)

