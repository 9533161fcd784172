"""Training throughput: environment steps per second while PPO trains on one game, every trainer in one run.

The trainers: cardzoo's own SB3 path (sb3-contrib's MaskablePPO, as ``cardzoo train`` builds it), Ray RLlib's PPO
with 1 and 2 env runners (as ``cardzoo train --backend rllib`` builds it) and the CleanRL-style single file.

    python -m cardzoo.evaluation.benchmarks.training_speed --out evaluation/results/training_speed

In Rope Team and Rook one seat moves at a time, so an environment step is one seat's decision for every trainer.
In Summit Rush RLlib steps a whole tick (every seat acts) while the SB3 and CleanRL views step one seat's decision:
there compare RLlib's ``agent_steps`` (recorded too), not its env steps. Each trainer runs with its own
defaults (rollout and batch sizes, epochs, torch threads; recorded in the results) for at least ``--steps`` steps
(rounded up to its whole rollouts or iterations), from a fresh process of its own so one's threads or Ray do not
linger into the next. The clock runs over training only (sampling and learning), after the trainer is built; the
build time (Ray's start among it) is recorded beside. The machine's load average is recorded with each
measurement: the figures are wall-clock rates on whatever else the machine was doing.

Writes ``training_speed.json``, ``training_speed.csv`` and a chart (PNG + SVG) under ``--out``.
"""

from __future__ import annotations

import argparse
import csv
import json
import multiprocessing
import os
import platform
import shlex
import sys
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from cardzoo.envs.common.argtypes import number
from cardzoo.envs.registry import GAMES

LEVEL = "normal"  # Rope Team or Summit Rush; Rook trains on single rounds


def _level(game: str) -> str | None:
    return LEVEL if GAMES[game].levels else None


def sb3(game: str, steps: int, seed: int) -> dict:
    """sb3-contrib's MaskablePPO as ``cardzoo train`` builds it (no warm start, no evaluation)."""
    from cardzoo.training.train import TrainConfig, make_model, whole_rollouts

    level = _level(game)
    cfg = TrainConfig(game=game, levels=() if level is None else (level,), imitate=None, seed=seed)
    start = time.perf_counter()
    model = make_model(cfg)
    built = time.perf_counter()
    model.learn(total_timesteps=whole_rollouts(cfg, steps))
    return {"env_steps": int(model.num_timesteps), "seconds": time.perf_counter() - built,
            "setup_seconds": built - start,
            "settings": {"n_envs": cfg.n_envs, "n_steps": cfg.n_steps, "batch_size": cfg.batch_size,
                         "n_epochs": cfg.n_epochs, "hidden": list(cfg.hidden), "torch_threads": cfg.threads}}


def rllib(game: str, steps: int, seed: int, env_runners: int) -> dict:
    """RLlib's PPO as ``cardzoo train --backend rllib`` builds it, on Ray started in this process."""
    from ray.rllib.utils.metrics import (
        ENV_RUNNER_RESULTS,
        NUM_AGENT_STEPS_SAMPLED_LIFETIME,
        NUM_ENV_STEPS_SAMPLED_LIFETIME,
    )

    from cardzoo.evaluation.matches.ray_backend import ray_session
    from cardzoo.training.rllib.train import RllibTrainConfig, _total, build

    cfg = RllibTrainConfig(game=game, level=_level(game), env_runners=env_runners, seed=seed)
    start = time.perf_counter()
    with ray_session():
        algo = build(cfg)
        try:
            built = time.perf_counter()
            env_steps = agent_steps = iterations = 0
            while env_steps < steps:
                result = algo.train()[ENV_RUNNER_RESULTS]
                env_steps = _total(result[NUM_ENV_STEPS_SAMPLED_LIFETIME])
                agent_steps = _total(result[NUM_AGENT_STEPS_SAMPLED_LIFETIME])
                iterations += 1
            seconds = time.perf_counter() - built
        finally:
            algo.stop()
    return {"env_steps": env_steps, "seconds": seconds, "setup_seconds": built - start, "agent_steps": agent_steps,
            "settings": {"env_runners": env_runners, "envs_per_runner": cfg.envs_per_runner,
                         "train_batch_size_per_learner": cfg.batch, "minibatch_size": cfg.minibatch,
                         "num_epochs": cfg.epochs, "hidden": list(cfg.hidden), "iterations": iterations}}


def cleanrl(game: str, steps: int, seed: int) -> dict:
    """``training/cleanrl_ppo.py`` with its defaults; its own clock starts after its envs' first reset."""
    from cardzoo.training.cleanrl_ppo import Args, train

    args = Args(game=game, level=_level(game) or LEVEL, seed=seed)
    batch = args.num_envs * args.num_steps
    args.total_timesteps = -(-steps // batch) * batch
    start = time.perf_counter()
    summary = train(args)
    total = time.perf_counter() - start
    return {"env_steps": summary["steps"], "seconds": summary["seconds"],
            "setup_seconds": total - summary["seconds"],
            "settings": {"num_envs": args.num_envs, "num_steps": args.num_steps,
                         "num_minibatches": args.num_minibatches, "update_epochs": args.update_epochs,
                         "hidden": [args.hidden, args.hidden], "torch_threads": args.threads}}


def _rllib(env_runners: int) -> Callable[[str, int, int], dict]:
    def measure(game: str, steps: int, seed: int) -> dict:
        return rllib(game, steps, seed, env_runners)

    return measure


TRAINERS: dict[str, tuple[str, Callable[[str, int, int], dict]]] = {
    "sb3": ("SB3 MaskablePPO (cardzoo train)", sb3),
    "rllib_1": ("RLlib PPO, 1 env runner", _rllib(1)),
    "rllib_2": ("RLlib PPO, 2 env runners", _rllib(2)),
    "cleanrl": ("CleanRL-style PPO", cleanrl),
}


def _measure(name: str, game: str, steps: int, seed: int) -> dict:
    before = os.getloadavg()[0]
    result = TRAINERS[name][1](game, steps, seed)
    return {"trainer": name, "label": TRAINERS[name][0], **result,
            "env_steps_per_second": result["env_steps"] / result["seconds"],
            "load_average_before": before, "load_average_after": os.getloadavg()[0]}


def write(results: dict, out: Path) -> list[Path]:
    """The JSON, the CSV (one row per trainer) and the chart; returns the files written."""
    from cardzoo.envs.common.charts import quantity_chart

    out.mkdir(parents=True, exist_ok=True)
    (out / "training_speed.json").write_text(json.dumps(results, indent=1))
    columns = ["trainer", "label", "env_steps", "seconds", "env_steps_per_second", "setup_seconds",
               "load_average_before", "load_average_after"]
    with open(out / "training_speed.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=columns, extrasaction="ignore")
        writer.writeheader()
        for row in results["trainers"]:
            writer.writerow({k: round(v, 2) if isinstance(v, float) else v for k, v in row.items()})
    rates = {row["label"]: row["env_steps_per_second"] for row in results["trainers"]}
    title = f"PPO training throughput, {results['game']} ({results['cpu_count']} cores)"
    chart = quantity_chart(title, rates, out / "training_speed.png", "environment steps per second (wall time)")
    return [out / "training_speed.json", out / "training_speed.csv", *chart]


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(prog="python -m cardzoo.evaluation.benchmarks.training_speed",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="rope_team", choices=list(GAMES),
                        help="the game every trainer trains on (default: rope_team)")
    parser.add_argument("--steps", type=number(int, 1), default=24_576,
                        help="environment steps each trainer runs at least (default: 24,576)")
    parser.add_argument("--trainers", nargs="+", default=list(TRAINERS), choices=list(TRAINERS),
                        help="which trainers, in order (default: all)")
    parser.add_argument("--seed", type=number(int, 0), default=0, help="seeds every trainer (default: 0)")
    parser.add_argument("--out", default="evaluation/results/training_speed", help="folder for the results")
    argv = sys.argv[1:] if argv is None else argv
    args = parser.parse_args(argv)
    results = {"game": args.game, "level": _level(args.game), "steps": args.steps, "seed": args.seed,
               "cpu_count": os.cpu_count(), "python": platform.python_version(), "date": time.strftime("%Y-%m-%d"),
               "command": shlex.join(["python", "-m", "cardzoo.evaluation.benchmarks.training_speed", *argv]),
               "trainers": []}
    for name in args.trainers:
        # A fresh process per trainer: torch's thread count and Ray do not carry over into the next.
        with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
            row = pool.submit(_measure, name, args.game, args.steps, args.seed).result()
        print(f"{row['label']}: {row['env_steps']:,} env steps in {row['seconds']:.1f} s, "
              f"{row['env_steps_per_second']:,.0f} per second (built in {row['setup_seconds']:.1f} s)", flush=True)
        results["trainers"].append(row)
    for path in write(results, Path(args.out)):
        print("wrote", path)
    return results


if __name__ == "__main__":
    main()
