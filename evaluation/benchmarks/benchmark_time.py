"""How long ``cardzoo benchmark --budget quick`` takes an outside agent that spends a fixed time per decision.

    python -m cardzoo.evaluation.benchmarks.benchmark_time --ms 1 --workers 2 --out evaluation/results/benchmark_time
    python -m cardzoo.evaluation.benchmarks.benchmark_time --ms 1 --workers 2 --batched \
        --out evaluation/results/benchmark_time/batched

The agent is this module's :func:`make_agent` given as ``module:callable``, so it is what an outsider's agent is to
the benchmark: probed and played in worker processes of its own. Each decision it picks a uniformly random legal
action and then spins for ``--ms`` milliseconds of its own CPU time (a model's forward pass, say); with
``--batched`` its class has ``act_batch`` and spins ``--ms`` once per call, however many games the call answers (a
model whose forward pass costs about the same for one row as for a chunk's). Every game is
benchmarked in turn, all at the quick budget, with a fresh deal key, ``--workers`` processes and no cache; the wall
time of each is measured around :func:`cardzoo.evaluation.protocol.benchmark` (the reference agent's cells
included, as the command plays them), with the load average before and after. Writes ``timing.json`` (every
figure), ``summary.md`` and ``timing.png`` (wall minutes per game).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path
from typing import Any

import numpy as np

SPEC = "cardzoo.evaluation.benchmarks.benchmark_time:make_agent"
MS_VARIABLE = "CARDZOO_BENCHMARK_TIME_MS"  # the time per decision, read by the agent's worker


class FixedTime:
    """A random legal action, then ``ms`` milliseconds of CPU time spent."""

    def __init__(self, seed: int | None, ms: float):
        self.rng = np.random.default_rng(seed)
        self.seconds = ms / 1000

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        action = int(self.rng.choice(np.flatnonzero(action_mask)))
        end = time.process_time() + self.seconds
        while time.process_time() < end:
            pass
        return action


class FixedTimeBatched(FixedTime):
    """:class:`FixedTime` with ``act_batch``: ``ms`` milliseconds of CPU per call, for every game it answers."""

    @staticmethod
    def act_batch(agents: list[FixedTimeBatched], observations: np.ndarray, action_masks: np.ndarray) -> list[int]:
        actions = [int(a.rng.choice(np.flatnonzero(m))) for a, m in zip(agents, action_masks, strict=True)]
        end = time.process_time() + agents[0].seconds
        while time.process_time() < end:
            pass
        return actions


def make_agent(game: str, seat: int | None, seed: int | None) -> FixedTime:
    return FixedTime(seed, float(os.environ.get(MS_VARIABLE, "1")))


def make_batched_agent(game: str, seat: int | None, seed: int | None) -> FixedTimeBatched:
    return FixedTimeBatched(seed, float(os.environ.get(MS_VARIABLE, "1")))


def measure(ms: float, workers: int, games: list[str], budget: str = "quick", batched: bool = False) -> dict[str, Any]:
    from cardzoo.envs.registry import GAMES
    from cardzoo.evaluation.protocol import benchmark

    os.environ[MS_VARIABLE] = str(ms)
    spec = SPEC.replace(":make_agent", ":make_batched_agent") if batched else SPEC
    out: dict[str, Any] = {"agent": spec, "ms_per_decision": ms, "batched": batched, "budget": budget,
                           "workers": workers, "cpus": os.cpu_count(), "python": platform.python_version(),
                           "games": {}}
    for game in games:
        load = os.getloadavg()[0]
        start = time.perf_counter()
        result = benchmark(spec, games=[game], budget=budget, workers=workers)
        wall = time.perf_counter() - start
        g = result["games"][game]
        out["games"][game] = {
            "title": GAMES[game].title, "wall_s": wall, "cells": len(g["cells"]),
            "games_per_cell": result["games_per_cell"], "agent_decisions": g["headline"]["decisions"],
            "agent_ms_per_decision": g["headline"]["cpu_ms_per_decision"], "errors": g["headline"]["errors"],
            "load_before": load, "load_after": os.getloadavg()[0],
        }
        print(f"{game}: {wall / 60:.1f} min, {len(g['cells'])} cells", flush=True)
    out["total_wall_s"] = sum(g["wall_s"] for g in out["games"].values())
    return out


def summary(result: dict[str, Any]) -> str:
    lines = ["# How long the quick budget takes an outside agent", "",
             f"`cardzoo benchmark {result['agent']}` (an outside agent: its own worker processes) spending "
             f"{result['ms_per_decision']:g} ms of CPU per "
             f"{'act_batch call (every waiting game of a chunk at once)' if result.get('batched') else 'decision'}, "
             f"`--budget {result['budget']}`, "
             f"`--workers {result['workers']}`, on {result['cpus']} cores (Python {result['python']}); made by "
             "`python -m cardzoo.evaluation.benchmarks.benchmark_time` (its docstring says how).", "",
             "| game | cells | games per cell | agent decisions | agent time per decision (ms; a call's time shared "
             "among its games) | wall time (min) | "
             "load average before / after |", "|---|---:|---:|---:|---:|---:|---|"]
    for g in result["games"].values():
        lines.append(f"| {g['title']} | {g['cells']} | {g['games_per_cell']} | {g['agent_decisions']:,} | "
                     f"{g['agent_ms_per_decision']:.2f} | {g['wall_s'] / 60:.1f} | {g['load_before']:.1f} / "
                     f"{g['load_after']:.1f} |")
    every = "All three games" if len(result["games"]) == 3 else f"The {len(result['games'])} games measured"
    lines += ["", f"{every}: **{result['total_wall_s'] / 60:.1f} minutes**.", "", "![wall time](timing.png)",
              ""]
    return "\n".join(lines)


def chart(result: dict[str, Any], path: Path) -> None:
    from cardzoo.envs.common.charts import _pyplot

    plt = _pyplot()
    games = list(result["games"].values())
    fig, ax = plt.subplots(figsize=(6, 2.6))
    ax.barh([g["title"] for g in games], [g["wall_s"] / 60 for g in games], color="#4c72b0")
    ax.set_xlabel("wall time (minutes)")
    per = "an act_batch call" if result.get("batched") else "a decision"
    ax.set_title(f"--budget {result['budget']}, outside agent at {result['ms_per_decision']:g} ms {per}, "
                 f"{result['workers']} workers", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110, metadata={"Software": None})
    plt.close(fig)


def main(argv: list[str] | None = None) -> None:
    from cardzoo.envs.registry import GAMES

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ms", type=float, default=1.0, help="the agent's CPU time per decision (default 1)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--games", nargs="+", default=list(GAMES), choices=list(GAMES))
    parser.add_argument("--budget", default="quick")
    parser.add_argument("--batched", action="store_true", help="the agent has act_batch: --ms per call")
    parser.add_argument("--out", type=Path, default=Path("evaluation/results/benchmark_time"))
    args = parser.parse_args(argv)
    result = measure(args.ms, args.workers, args.games, args.budget, args.batched)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "timing.json").write_text(json.dumps(result, indent=1) + "\n")
    (args.out / "summary.md").write_text(summary(result))
    chart(result, args.out / "timing.png")
    print(f"total {result['total_wall_s'] / 60:.1f} min -> {args.out}")


if __name__ == "__main__":
    main()
