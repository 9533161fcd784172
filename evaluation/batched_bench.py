"""Batched engine and trainer throughput, measured side by side in one run (results in evaluation/results/batched/).

    python -m cardzoo.evaluation.batched_bench engine --out evaluation/results/batched
    python -m cardzoo.evaluation.batched_bench trainer --out evaluation/results/batched

``engine``: Rope Team random legal play with the observation and the mask read at every decision, through the
single env's ``agent_iter`` loop and through the batched engine with N = 1, 16, 256, 4096, 65536 games; decisions
per CPU-second of this process (``time.process_time``), and the peak memory numpy allocates for the engine
(``tracemalloc`` over construction, reset and three steps, in a separate run). Writes ``engine.json``,
``engine.csv`` and ``engine_scaling.png``.

``trainer``: env steps (decisions) per second of PPO learning on Rope Team, all four levels, the same network (two
hidden layers of 128 for the actor and the critic), 4 epochs per rollout, torch on one thread: the SB3 path
(MaskablePPO on ``SharedPolicyEnv`` views, as ``cardzoo train`` builds it) against ``cardzoo.training.ppo_batched``.
Time counts rollouts and updates only (no imitation, no evaluation). Writes ``trainer.json``.
"""

from __future__ import annotations

import argparse
import csv
import json
import platform
import time
import tracemalloc
from pathlib import Path

import numpy as np

SIZES = (1, 16, 256, 4096, 65536)  # issue 12's scaling points
LEVEL = "normal"


def single_env_rate(seconds: float, seed: int = 0) -> dict:
    """Decisions per CPU-second of random legal play through the single env's agent_iter loop."""
    from cardzoo.envs import rope_team_v0

    env = rope_team_v0.env(level=LEVEL)
    rng = np.random.default_rng(seed)
    decisions = games = 0
    start = time.process_time()
    while time.process_time() - start < seconds:
        env.reset(seed=seed + games)
        for _ in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[rng.integers(len(legal))]))
            decisions += 1
        games += 1
    cpu = time.process_time() - start
    return {"decisions": decisions, "games": games, "cpu_seconds": round(cpu, 3),
            "decisions_per_cpu_second": round(decisions / cpu)}


def random_legal(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random legal action in every row of ``mask``: the k-th legal one, k uniform below their count."""
    running = np.cumsum(mask, axis=1, dtype=np.int8)
    k = (rng.random(len(mask), dtype=np.float32) * running[:, -1]).astype(np.int8)
    return np.argmax(running > k[:, None], axis=1)


def batched_rate(n: int, seconds: float, seed: int = 0) -> dict:
    """Decisions per CPU-second of random legal play in ``n`` games of the batched engine, and its peak memory
    (measured in a separate short run: tracing allocations slows numpy down)."""
    from cardzoo.envs.batched import make_batched

    def play(steps: int | None) -> tuple[int, float, object]:
        rng = np.random.default_rng(seed)
        eng = make_batched("rope_team_v0", n, level=LEVEL)
        obs, mask, seat = eng.reset(seeds=seed)
        done_steps = 0
        start = time.process_time()
        while (time.process_time() - start < seconds or done_steps < 3) if steps is None else done_steps < steps:
            obs, mask, seat, rewards, done = eng.step(random_legal(mask, rng))
            done_steps += 1
        return done_steps, time.process_time() - start, eng

    steps, cpu, eng = play(None)
    games = int(eng.next_seed - seed)
    del eng
    tracemalloc.start()
    play(3)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return {"n": n, "steps": steps, "decisions": steps * n, "games_started": games, "cpu_seconds": round(cpu, 3),
            "decisions_per_cpu_second": round(steps * n / cpu), "peak_memory_mb": round(peak / 2**20, 1)}


def engine(out: Path, seconds: float) -> dict:
    single = single_env_rate(seconds)
    print(f"single env: {single['decisions_per_cpu_second']:,} decisions/CPU-s", flush=True)
    rows = []
    for n in SIZES:
        rows.append(batched_rate(n, seconds))
        print(f"batched N={n}: {rows[-1]['decisions_per_cpu_second']:,} decisions/CPU-s, "
              f"{rows[-1]['peak_memory_mb']} MB", flush=True)
    best = max(rows, key=lambda r: r["decisions_per_cpu_second"])
    result = {"game": "rope_team_v0", "level": LEVEL, "single_env": single, "batched": rows,
              "best_n": best["n"], "best_decisions_per_cpu_second": best["decisions_per_cpu_second"],
              "ratio_to_single_env": round(best["decisions_per_cpu_second"] / single["decisions_per_cpu_second"], 1),
              **_machine()}
    out.mkdir(parents=True, exist_ok=True)
    (out / "engine.json").write_text(json.dumps(result, indent=1))
    with open(out / "engine.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    _plot(result, out / "engine_scaling.png")
    print(json.dumps({k: v for k, v in result.items() if k not in ("batched", "single_env")}))
    return result


def _plot(result: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = result["batched"]
    n = [r["n"] for r in rows]
    fig, ax = plt.subplots(figsize=(7, 4.2))
    ax.plot(n, [r["decisions_per_cpu_second"] for r in rows], "o-", color="tab:blue", label="batched engine")
    ax.axhline(result["single_env"]["decisions_per_cpu_second"], color="tab:gray", ls="--", label="single env loop")
    ax.axhline(1_000_000, color="tab:green", ls=":", label="target: 1M decisions/CPU-s")
    ax.set(xscale="log", yscale="log", xlabel="games stepped together (N)", ylabel="decisions per CPU-second",
           title=f"Rope Team ({result['level']}), random legal play with observation and mask")
    memory = ax.twinx()
    memory.plot(n, [r["peak_memory_mb"] for r in rows], "s--", color="tab:orange", label="peak memory (MB)")
    memory.set(yscale="log", ylabel="peak memory (MB)")
    lines = ax.get_legend_handles_labels()[0] + memory.get_legend_handles_labels()[0]
    ax.legend(lines, [line.get_label() for line in lines], loc="upper left", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


# ----------------------------------------------------------------------------- trainer
def sb3_rate(steps: int, threads: int) -> dict:
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv

    from cardzoo.training.train import GAMES, TrainConfig

    cfg = TrainConfig(game="rope_team", imitate=None, hidden=(128, 128), threads=threads)
    torch.set_num_threads(threads)
    vec = DummyVecEnv(GAMES["rope_team"]["vec_envs"](cfg))
    model = MaskablePPO("MlpPolicy", vec, learning_rate=cfg.learning_rate, n_steps=cfg.n_steps,
                        batch_size=cfg.batch_size, n_epochs=cfg.n_epochs, gamma=cfg.gamma, gae_lambda=cfg.gae_lambda,
                        clip_range=cfg.clip_range, ent_coef=cfg.ent_coef, seed=0, device="cpu",
                        policy_kwargs={"net_arch": {"pi": [128, 128], "vf": [128, 128]}})
    wall, cpu = time.time(), time.process_time()
    model.learn(total_timesteps=steps)
    wall, cpu = time.time() - wall, time.process_time() - cpu
    return {"trainer": "sb3 MaskablePPO (cardzoo train)", "steps": int(model.num_timesteps),
            "n_envs": cfg.n_envs, "n_steps": cfg.n_steps, "batch_size": cfg.batch_size, "epochs": cfg.n_epochs,
            "wall_seconds": round(wall, 1), "cpu_seconds": round(cpu, 1),
            "steps_per_second": round(model.num_timesteps / wall),
            "steps_per_cpu_second": round(model.num_timesteps / cpu)}


def batched_trainer_rate(steps: int, threads: int, out: Path) -> dict:
    from cardzoo.training.ppo_batched import BatchedConfig, train

    cfg = BatchedConfig(steps=steps, hidden=(128, 128), update_epochs=4, eval_games=1, eval_every=10**12,
                        threads=threads, out=str(out))
    train(cfg, command="batched_bench trainer")
    run = json.loads((out / "run.json").read_text())
    return {"trainer": "cardzoo.training.ppo_batched", "steps": run["steps"], "num_envs": cfg.num_envs,
            "num_steps": cfg.num_steps, "minibatch_size": cfg.minibatch_size, "epochs": cfg.update_epochs,
            "wall_seconds": run["learn_seconds"], "cpu_seconds": run["learn_cpu_seconds"],
            "steps_per_second": round(run["steps"] / run["learn_seconds"]),
            "steps_per_cpu_second": round(run["steps"] / run["learn_cpu_seconds"])}


def trainer(out: Path, sb3_steps: int, batched_steps: int, threads: int) -> dict:
    import tempfile

    sb3 = sb3_rate(sb3_steps, threads)
    print(f"sb3: {sb3['steps_per_second']:,} steps/s ({sb3['steps_per_cpu_second']:,} per CPU-s)", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        batched = batched_trainer_rate(batched_steps, threads, Path(tmp))
    print(f"batched: {batched['steps_per_second']:,} steps/s ({batched['steps_per_cpu_second']:,} per CPU-s)",
          flush=True)
    result = {"game": "rope_team_v0", "levels": ["easy", "normal", "hard", "expert"], "network": "128-128 tanh",
              "threads": threads, "sb3": sb3, "batched": batched,
              "ratio_wall": round(batched["steps_per_second"] / sb3["steps_per_second"], 1),
              "ratio_cpu": round(batched["steps_per_cpu_second"] / sb3["steps_per_cpu_second"], 1), **_machine()}
    out.mkdir(parents=True, exist_ok=True)
    (out / "trainer.json").write_text(json.dumps(result, indent=1))
    print(json.dumps({k: result[k] for k in ("ratio_wall", "ratio_cpu")}))
    return result


def _machine() -> dict:
    import os

    return {"cpu_count": os.cpu_count(), "load_average": [round(x, 2) for x in os.getloadavg()],
            "python": platform.python_version(), "numpy": np.__version__, "date": time.strftime("%Y-%m-%d")}


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("engine", "trainer"))
    parser.add_argument("--out", default="evaluation/results/batched", help="folder for the results")
    parser.add_argument("--seconds", type=float, default=5.0, help="engine: CPU seconds per measurement")
    parser.add_argument("--sb3-steps", type=int, default=65_536, help="trainer: SB3 env steps (8 rollouts)")
    parser.add_argument("--batched-steps", type=int, default=327_680, help="trainer: batched env steps (10 rollouts)")
    parser.add_argument("--threads", type=int, default=1, help="trainer: torch threads for both")
    args = parser.parse_args(argv)
    out = Path(args.out)
    if args.what == "engine":
        return engine(out, args.seconds)
    return trainer(out, args.sb3_steps, args.batched_steps, args.threads)


if __name__ == "__main__":
    main()
