"""Batched engine and trainer throughput, measured side by side in one run (results in evaluation/results/batched/).

    python -m cardzoo.evaluation.benchmarks.batched engine --game rope_team --out evaluation/results/batched
    python -m cardzoo.evaluation.benchmarks.batched engine --game summit_rush --out evaluation/results/batched
    python -m cardzoo.evaluation.benchmarks.batched engine --game rook --out evaluation/results/batched
    python -m cardzoo.evaluation.benchmarks.batched trainer --out evaluation/results/batched
    python -m cardzoo.evaluation.benchmarks.batched payoff --policy RUN/policy.npz --out RUN

``engine``: random legal play with the observation and the mask read at every decision, through the single env's
loop and through the batched engine with N = 1, 16, 256, 4096, 65536 games, in one run per game; decisions per
CPU-second of this process (``time.process_time``), and the peak memory numpy allocates for the engine
(``tracemalloc`` over construction, reset and three steps, in a separate run). Rope Team: the ``agent_iter`` loop
against the batched engine. Summit Rush (Normal, two players; a decision is one seat's action in one tick, an
"agent-action"): the ParallelEnv loop, silent and talking, against ``SummitRushParallel`` silent, talking with the
joint mask (the move mask tiled 57 times, 3306 entries a seat), talking with the move mask alone (the learner's fast
path: the move drawn from the move mask, the message uniformly), and the protocol form silent (one seat a step, as
the trainer and the vector views ask); the talking joint mask is measured up to N = 4096: at 65536 games the mask
alone is 433 MB a tick. Rook for Two: the ``agent_iter`` loop against the batched engine, in single rounds
(``rounds=1``, the training setting) and in whole games to 500. Each run replaces its game's entry in
``engine.json`` and its rows in ``engine.csv``, and ``engine_scaling.png`` (and ``.svg``) plots every game measured.

``trainer``: env steps (decisions) per second of PPO learning on Rope Team, all four levels, the same network (two
hidden layers of 128, tanh, for the actor and for the critic), 4 epochs per rollout and minibatches of 2048
decisions on both sides: the SB3 path (MaskablePPO on ``SharedPolicyEnv`` views, as ``cardzoo train`` builds it:
rollouts of 8 envs x 1024 steps) against ``cardzoo.training.ppo_batched`` (rollouts of 1024 games x 32 steps, its
defaults). They alternate ``--rounds`` times in one process; rates are pooled over the rounds (total steps over
total seconds, wall and CPU of this process) and the ratio is taken per round too. Time counts rollouts and
updates only (no imitation, no evaluation). Also measured in the run: the batched trainer with minibatches of 4096
(its earlier default); each side's CPU profile in microseconds per decision (SB3: rollouts against
``model.train``; the batched trainer: its phases, from ``run.json``); and the floor, the batched trainer's matrix
products timed alone (``matmul_floor``). Writes ``trainer.json`` and ``trainer_profile.png`` (and ``.svg``).
``payoff``: a trained Rope Team policy on the full report's deals (``reset(seed=i)``, 10,000 per level) beside the
simple strategy and the shipped policies, with paired differences on the same deals; writes ``report_deals.json``.

One torch thread each: the machine's two cores are shared with other jobs, and under a load average of ~3 a
second thread made a minibatch's forward, backward and Adam step 2.4x slower, not faster (37 against 16
microseconds of wall time per decision and epoch); the SB3 path, mostly Python between small matrix products, has
less to gain from one.
"""

from __future__ import annotations

import argparse
import csv
import json
import platform
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import numpy as np

from cardzoo.envs.registry import GAMES

SIZES = (1, 16, 256, 4096, 65536)  # issue 12's scaling points
LEVEL = "normal"
TARGETS = {"rope_team_v0": 1_000_000, "summit_rush_v0": 500_000, "rook_v0": 500_000}  # issues 12's and 27's
ROOK_VARIANTS = {"one round": {"rounds": 1}, "game to 500": {}}  # Rook's settings measured: name -> env options
SUMMIT_VARIANTS = ("silent", "talking", "talking, move mask", "silent, one seat a step")
TALKING_MASK_UP_TO = 16384  # the joint talking mask of more games is hundreds of MB a tick (of SIZES: up to 4096)


def single_env_rate(seconds: float, seed: int = 0, env_id: str = "rope_team_v0", **options) -> dict:
    """Decisions per CPU-second of random legal play through the single env's agent_iter loop (Rope Team at
    ``LEVEL`` unless another turn-based env and its options are given)."""
    env = GAMES[env_id.removesuffix("_v0")].make(**(options if options or env_id != "rope_team_v0" else
                                                   {"level": LEVEL}))
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


def summit_single_rate(seconds: float, talk: bool, seed: int = 0) -> dict:
    """Agent-actions per CPU-second of random legal play through Summit Rush's ParallelEnv loop (cardzoo bench's)."""
    from cardzoo.envs import summit_rush_v0

    from .envs import parallel_loop

    ticks, games, cpu = parallel_loop(lambda: summit_rush_v0.parallel_env(level=LEVEL, talk=talk), seconds, seed)
    return {"decisions": 2 * ticks, "games": games, "cpu_seconds": round(cpu, 3),
            "decisions_per_cpu_second": round(2 * ticks / cpu)}


def random_legal(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random legal action in every row of ``mask`` (last axis): the k-th legal one, k uniform below
    their count."""
    running = np.cumsum(mask, axis=-1, dtype=np.int8 if mask.shape[-1] < 128 else np.int16)
    k = (rng.random(mask.shape[:-1], dtype=np.float32) * running[..., -1]).astype(running.dtype)
    return np.argmax(running > k[..., None], axis=-1)


def _rate(make: Callable, step: Callable, n: int, per_step: int, seconds: float, seed: int) -> dict:
    """Time ``step(engine, rng)`` for ``seconds`` of CPU (at least three steps) on ``make()``, then trace the peak
    memory of a fresh engine's construction, reset and three steps."""

    def play(steps: int | None):
        rng = np.random.default_rng(seed)
        eng = make()
        eng.reset(seeds=seed)
        done_steps = 0
        start = time.process_time()
        while (time.process_time() - start < seconds or done_steps < 3) if steps is None else done_steps < steps:
            step(eng, rng)
            done_steps += 1
        return done_steps, time.process_time() - start, eng

    steps, cpu, eng = play(None)
    games = int(eng.next_seed - seed)
    del eng
    tracemalloc.start()
    play(3)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return {"n": n, "steps": steps, "decisions": steps * per_step, "games_started": games,
            "cpu_seconds": round(cpu, 3), "decisions_per_cpu_second": round(steps * per_step / cpu),
            "peak_memory_mb": round(peak / 2**20, 1)}


def batched_rate(n: int, seconds: float, seed: int = 0, env_id: str = "rope_team_v0", **options) -> dict:
    """Decisions per CPU-second of random legal play in ``n`` games of a batched turn-based engine (Rope Team at
    ``LEVEL`` unless another engine and its options are given), and its peak memory."""
    from cardzoo.envs.batched import make_batched

    def step(eng, rng):
        eng.step(random_legal(eng.mask, rng))

    class Engine:  # keeps the last mask for the next decision
        def __init__(self):
            self.eng = make_batched(env_id, n, **(options if options or env_id != "rope_team_v0" else
                                                  {"level": LEVEL}))

        def reset(self, seeds):
            _, self.mask, _ = self.eng.reset(seeds=seeds)

        def step(self, actions):
            _, self.mask, *_ = self.eng.step(actions)

        @property
        def next_seed(self):
            return self.eng.next_seed

    return _rate(Engine, step, n, n, seconds, seed)


class _Summit:
    """A Summit Rush engine (Normal, two players) in one of ``SUMMIT_VARIANTS``, keeping the last mask."""

    def __init__(self, n: int, variant: str):
        from cardzoo.envs.summit_rush.batched import SummitRushBatched, SummitRushParallel

        self.variant = variant
        talk = variant.startswith("talking")
        if variant == "silent, one seat a step":
            self.eng = SummitRushBatched(n, level=LEVEL, talk=False)
        else:
            self.eng = SummitRushParallel(n, level=LEVEL, talk=talk, mask="moves" if "move mask" in variant else "full")

    def reset(self, seeds: int) -> None:
        self.mask = self.eng.reset(seeds=seeds)[1]

    def step(self, rng: np.random.Generator) -> None:
        action = random_legal(self.mask, rng)
        if self.variant == "talking, move mask":  # the message drawn apart: every message goes with every move
            action = action + self.eng.n_moves * rng.integers(0, 57, action.shape)
        self.mask = self.eng.step(action)[1]

    @property
    def next_seed(self) -> int:
        return self.eng.next_seed


def summit_batched_rate(n: int, variant: str, seconds: float, seed: int = 0) -> dict:
    """Agent-actions per CPU-second of random legal play in ``n`` games of a Summit Rush engine variant."""
    per_step = n if variant == "silent, one seat a step" else 2 * n
    row = _rate(lambda: _Summit(n, variant), lambda eng, rng: eng.step(rng), n, per_step, seconds, seed)
    return {"variant": variant, **row}


def rook_measure(seconds: float) -> dict:
    """Rook for Two's engine measurements, in each of ``ROOK_VARIANTS``: the single env's loop and the batched
    engine at every size, in this run."""
    single = {variant: single_env_rate(seconds, 0, "rook_v0", **options)
              for variant, options in ROOK_VARIANTS.items()}
    rows, best = [], {}
    for variant, options in ROOK_VARIANTS.items():
        print(f"single env, {variant}: {single[variant]['decisions_per_cpu_second']:,} decisions/CPU-s", flush=True)
        for n in SIZES:
            rows.append({"variant": variant, **batched_rate(n, seconds, 0, "rook_v0", **options)})
            print(f"{variant}, N={n}: {rows[-1]['decisions_per_cpu_second']:,} decisions/CPU-s, "
                  f"{rows[-1]['peak_memory_mb']} MB", flush=True)
        top = max((r for r in rows if r["variant"] == variant), key=lambda r: r["decisions_per_cpu_second"])
        best[variant] = {"n": top["n"], "decisions_per_cpu_second": top["decisions_per_cpu_second"],
                         "ratio_to_single_env": round(top["decisions_per_cpu_second"]
                                                      / single[variant]["decisions_per_cpu_second"], 1)}
    return {"game": "rook_v0", "variants": ROOK_VARIANTS, "single_env": single, "batched": rows, "best": best,
            **_machine()}


def rope_measure(seconds: float) -> dict:
    """Rope Team's engine measurements at ``LEVEL``: the single env's loop and the batched engine at every size."""
    game = "rope_team_v0"
    single = single_env_rate(seconds)
    print(f"single env: {single['decisions_per_cpu_second']:,} decisions/CPU-s", flush=True)
    rows = []
    for n in SIZES:
        rows.append({"variant": "batched", **batched_rate(n, seconds)})
        print(f"batched N={n}: {rows[-1]['decisions_per_cpu_second']:,} decisions/CPU-s, "
              f"{rows[-1]['peak_memory_mb']} MB", flush=True)
    best = max(rows, key=lambda r: r["decisions_per_cpu_second"])
    return {"game": game, "level": LEVEL, "single_env": single, "batched": rows, "best_n": best["n"],
            "best_decisions_per_cpu_second": best["decisions_per_cpu_second"],
            "ratio_to_single_env": round(best["decisions_per_cpu_second"] / single["decisions_per_cpu_second"], 1),
            **_machine()}


def summit_measure(seconds: float) -> dict:
    """Summit Rush's engine measurements (Normal, two players) in each of ``SUMMIT_VARIANTS``, against the
    ParallelEnv loop silent and talking."""
    game = "summit_rush_v0"
    single = {"silent": summit_single_rate(seconds, talk=False), "talking": summit_single_rate(seconds, talk=True)}
    for kind, r in single.items():
        print(f"single env, {kind}: {r['decisions_per_cpu_second']:,} agent-actions/CPU-s", flush=True)
    rows, best = [], {}
    for variant in SUMMIT_VARIANTS:
        for n in SIZES:
            if variant == "talking" and n > TALKING_MASK_UP_TO:
                continue
            rows.append(summit_batched_rate(n, variant, seconds))
            print(f"{variant}, N={n}: {rows[-1]['decisions_per_cpu_second']:,} agent-actions/CPU-s, "
                  f"{rows[-1]['peak_memory_mb']} MB", flush=True)
        top = max((r for r in rows if r["variant"] == variant), key=lambda r: r["decisions_per_cpu_second"])
        against = single["talking" if variant.startswith("talking") else "silent"]["decisions_per_cpu_second"]
        best[variant] = {"n": top["n"], "decisions_per_cpu_second": top["decisions_per_cpu_second"],
                         "ratio_to_single_env": round(top["decisions_per_cpu_second"] / against, 1)}
    return {"game": game, "level": LEVEL, "decision": "one seat's action in one tick (agent-action)",
            "single_env": single, "batched": rows, "best": best, **_machine()}


# What is measured of each game's engine differs (Rook's variants, Summit Rush's masks): one function per engine.
MEASURES: dict[str, Callable[[float], dict]] = {"rope_team_v0": rope_measure, "summit_rush_v0": summit_measure,
                                                "rook_v0": rook_measure}


def measure(game: str, seconds: float) -> dict:
    """One game's engine measurements, single env and batched, in this run."""
    if game not in MEASURES:
        raise ValueError(f"no engine measurement for {game!r}; measured: {', '.join(MEASURES)}")
    return MEASURES[game](seconds)


def engine(out: Path, seconds: float, game: str) -> dict:
    out.mkdir(parents=True, exist_ok=True)
    path = out / "engine.json"
    results = json.loads(path.read_text()) if path.exists() else {}
    if "game" in results:  # the first format held one game's result
        results = {results["game"]: results}
    result = measure(game, seconds)
    results[game] = result
    path.write_text(json.dumps(results, indent=1))
    fields = ["game", "variant", "n", "steps", "decisions", "games_started", "cpu_seconds", "decisions_per_cpu_second",
              "peak_memory_mb"]
    with open(out / "engine.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields)
        writer.writeheader()
        for name, r in sorted(results.items()):
            writer.writerows({"game": name, "variant": kind, "decisions": single["decisions"],
                              "games_started": single["games"], "cpu_seconds": single["cpu_seconds"],
                              "decisions_per_cpu_second": single["decisions_per_cpu_second"]}
                             for kind, single in _singles(r).items())
            writer.writerows({"game": name, "variant": "batched", **row} for row in r["batched"])
    _plot(results, out / "engine_scaling.png")
    print(json.dumps({k: v for k, v in result.items() if k not in ("batched", "single_env")}))
    return result


def _singles(result: dict) -> dict[str, dict]:
    """A game's single-env measurements by name: "single env", or "single env, silent" and so on."""
    singles = result["single_env"]
    if "decisions_per_cpu_second" in singles:
        return {"single env": singles}
    return {f"single env, {kind}": single for kind, single in singles.items()}


def _plot(results: dict, path: Path) -> list[Path]:
    """Every measured game's rate and memory against N (PNG and SVG), with the single envs' rates and the
    targets as lines."""
    from cardzoo.envs.common.charts import Level, scaling_chart

    rates, memory, levels, targets = {}, {}, [], {}
    for name, result in sorted(results.items()):
        title = name.replace("_v0", "").replace("_", " ").title()
        for variant in dict.fromkeys(r.get("variant", "batched") for r in result["batched"]):
            rows = [r for r in result["batched"] if r.get("variant", "batched") == variant]
            rates[f"{title}, {variant}"] = [(r["n"], r["decisions_per_cpu_second"]) for r in rows]
            memory[f"{title}, {variant}"] = [(r["n"], r["peak_memory_mb"]) for r in rows]
        for kind, single in _singles(result).items():  # drawn in the colour of the batched play it compares with
            variant = kind.split(", ", 1)[1] if ", " in kind else "batched"  # "single env, silent": "silent"
            levels.append(Level(f"{title}: {kind}", single["decisions_per_cpu_second"], series=f"{title}, {variant}"))
        targets.setdefault(TARGETS[name], []).append(title)
    # games with the same target share one line (their labels would print over each other)
    levels += [Level(f"{', '.join(titles)}: target", value, target=True) for value, titles in targets.items()]
    return scaling_chart("Random legal play, observation and mask read every decision", rates, memory, levels,
                         path, y_label="decisions (agent-actions) per CPU-second")


# ----------------------------------------------------------------------------- trainer
def sb3_rate(steps: int, threads: int) -> dict:
    """The SB3 path's env steps per second (wall and CPU) over ``steps``, and the CPU time of its updates
    (``model.train``) apart from its rollouts."""
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv

    from cardzoo.training.train import TrainConfig, _vec_envs

    cfg = TrainConfig(game="rope_team", imitate=None, hidden=(128, 128), threads=threads)
    torch.set_num_threads(threads)
    vec = DummyVecEnv(_vec_envs(cfg))
    model = MaskablePPO("MlpPolicy", vec, learning_rate=cfg.learning_rate, n_steps=cfg.num_steps,
                        batch_size=cfg.minibatch_size, n_epochs=cfg.update_epochs, gamma=cfg.gamma,
                        gae_lambda=cfg.gae_lambda, clip_range=cfg.clip_coef, ent_coef=cfg.ent_coef, seed=0,
                        device="cpu",
                        policy_kwargs={"net_arch": {"pi": [128, 128], "vf": [128, 128]}})
    update_cpu = 0.0
    sb3_train = model.train

    def timed_train() -> None:
        nonlocal update_cpu
        tick = time.process_time()
        sb3_train()
        update_cpu += time.process_time() - tick

    model.train = timed_train
    wall, cpu = time.time(), time.process_time()
    model.learn(total_timesteps=steps)
    wall, cpu = time.time() - wall, time.process_time() - cpu
    n = model.num_timesteps
    return {"trainer": "sb3 MaskablePPO (cardzoo train)", "steps": int(n), "n_envs": cfg.num_envs,
            "n_steps": cfg.num_steps, "batch_size": cfg.minibatch_size, "epochs": cfg.update_epochs,
            "wall_seconds": round(wall, 2), "cpu_seconds": round(cpu, 2), "steps_per_second": round(n / wall),
            "steps_per_cpu_second": round(n / cpu),
            "profile_us_per_decision": {"rollouts (envs, policy, buffers)": round(1e6 * (cpu - update_cpu) / n, 2),
                                        "updates (model.train)": round(1e6 * update_cpu / n, 2)}}


def batched_trainer_rate(steps: int, threads: int, out: Path, minibatch_size: int = 2048,
                         features: str | None = None) -> dict:
    """``cardzoo.training.ppo_batched``'s env steps per second (wall and CPU) of rollouts and updates over
    ``steps``, and its profile (CPU microseconds per decision by phase); with ``features``, the network reads them
    (computed every decision, as ``--features`` trains)."""
    from cardzoo.training.ppo_batched import BatchedConfig, train

    cfg = BatchedConfig(steps=steps, hidden=(128, 128), update_epochs=4, eval_games=1, eval_every=10**12,
                        threads=threads, out=str(out), minibatch_size=minibatch_size, features=features)
    train(cfg, command="batched_bench trainer")
    run = json.loads((out / "run.json").read_text())
    return {"trainer": "cardzoo.training.ppo_batched", "features": features, "steps": run["steps"],
            "num_envs": cfg.num_envs,
            "num_steps": cfg.num_steps, "minibatch_size": cfg.minibatch_size, "epochs": cfg.update_epochs,
            "wall_seconds": run["learn_seconds"], "cpu_seconds": run["learn_cpu_seconds"],
            "steps_per_second": round(run["steps"] / run["learn_seconds"]),
            "steps_per_cpu_second": round(run["steps"] / run["learn_cpu_seconds"]),
            "profile_us_per_decision": {phase: p["us_per_decision"] for phase, p in run["profile"].items()
                                        if phase != "evaluation"}}


def matmul_floor(threads: int, epochs: int = 4, minibatch: int = 2048, games: int = 1024, seconds: float = 3.0) -> dict:
    """CPU microseconds per decision of the batched trainer's matrix products alone, timed on their own: the
    actor's and the critic's layers (464-128-128-52 and 464-128-128-1) forward on a rollout step of ``games``
    decisions, and forward and backward (weight gradients; input gradients past the first layer) on a minibatch,
    ``epochs`` times per decision. No PPO trainer with this network and these epochs can spend less."""
    import torch

    torch.set_num_threads(threads)
    sizes = [(464, 128), (128, 128), (128, 52), (464, 128), (128, 128), (128, 1)]  # actor, then critic

    def products(b: int, backward: bool) -> list:
        x = (torch.rand(b, 464) < 0.08).float()
        work = []
        for n_in, n_out in sizes:
            a, w = (x if n_in == 464 else torch.rand(b, n_in)), torch.rand(n_out, n_in)
            g = torch.rand(b, n_out)
            work.append(lambda a=a, w=w: a @ w.t())
            if backward:
                work.append(lambda a=a, g=g: g.t() @ a)  # the weight gradient
                if n_in != 464:
                    work.append(lambda w=w, g=g: g @ w)  # the input gradient (none for the observation)
        return work

    def cpu_per_row(work: list, b: int) -> float:
        for f in work:
            f()
        calls, start = 0, time.process_time()
        while time.process_time() - start < seconds:
            for f in work:
                f()
            calls += 1
        return (time.process_time() - start) / calls / b

    rollout = cpu_per_row(products(games, False), games)
    update = cpu_per_row(products(minibatch, True), minibatch)
    return {"rollout_forward": round(1e6 * rollout, 2), "update_per_epoch": round(1e6 * update, 2),
            "total": round(1e6 * (rollout + epochs * update), 2), "epochs": epochs, "minibatch": minibatch}


def _pooled(runs: list[dict]) -> dict:
    """Steps per second over all of a trainer's runs: total steps over total seconds."""
    steps = sum(r["steps"] for r in runs)
    return {"steps": steps, "steps_per_second": round(steps / sum(r["wall_seconds"] for r in runs)),
            "steps_per_cpu_second": round(steps / sum(r["cpu_seconds"] for r in runs))}


FEATURES = "rope_team_scores"  # the shipped Rope Team recipe's inputs (the policy ``learned`` plays)


def trainer(out: Path, sb3_steps: int, batched_steps: int, threads: int, rounds: int) -> dict:
    """The trainers, alternating, ``rounds`` times each in this process; ratios of the pooled rates and per round:
    SB3 against the batched trainer, and the batched trainer with ``FEATURES`` against without."""
    import tempfile

    load_before = _machine()["load_average"]
    sb3, batched, batched_4096, featured = [], [], [], []

    def run_batched(runs: list, label: str, **options) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            runs.append({**batched_trainer_rate(batched_steps, threads, Path(tmp), **options),
                         "load_average": _machine()["load_average"]})
        print(f"round {i + 1}: {label} {runs[-1]['steps_per_second']:,} steps/s "
              f"({runs[-1]['steps_per_cpu_second']:,} per CPU-s)", flush=True)

    for i in range(rounds):
        sb3.append(sb3_rate(sb3_steps, threads))
        print(f"round {i + 1}: sb3 {sb3[-1]['steps_per_second']:,} steps/s "
              f"({sb3[-1]['steps_per_cpu_second']:,} per CPU-s)", flush=True)
        run_batched(batched, "batched")
        run_batched(featured, f"batched with {FEATURES}", features=FEATURES)
        run_batched(batched_4096, "batched, minibatch 4096", minibatch_size=4096)  # the earlier default
    floor = matmul_floor(threads)
    print(f"matrix products alone: {floor['total']} CPU-us per decision", flush=True)
    pooled = {"sb3": _pooled(sb3), "batched": _pooled(batched), "batched_features": _pooled(featured),
              "batched_minibatch_4096": _pooled(batched_4096)}
    cpu = {name: p["steps_per_cpu_second"] for name, p in pooled.items()}
    result = {"game": "rope_team_v0", "levels": list(GAMES["rope_team"].levels), "network": "128-128 tanh",
              "threads": threads, "rounds": rounds, "features": FEATURES, "pooled": pooled,
              "ratio_wall": round(pooled["batched"]["steps_per_second"] / pooled["sb3"]["steps_per_second"], 2),
              "ratio_cpu": round(cpu["batched"] / cpu["sb3"], 2),
              "ratio_cpu_per_round": [round(b["steps_per_cpu_second"] / s["steps_per_cpu_second"], 2)
                                      for s, b in zip(sb3, batched, strict=True)],
              "ratio_cpu_minibatch_4096": round(cpu["batched_minibatch_4096"] / cpu["sb3"], 2),
              # with features against without: the shipped recipe's speed as a share of the plain trainer's
              "features_ratio_cpu": round(cpu["batched_features"] / cpu["batched"], 2),
              "features_ratio_wall": round(pooled["batched_features"]["steps_per_second"]
                                           / pooled["batched"]["steps_per_second"], 2),
              "features_ratio_cpu_per_round": [round(f["steps_per_cpu_second"] / b["steps_per_cpu_second"], 2)
                                               for b, f in zip(batched, featured, strict=True)],
              "features_target": 0.8,
              "matmul_floor_us_per_decision": floor,
              "bound_cpu_ratio": round(1e6 / pooled["sb3"]["steps_per_cpu_second"] / floor["total"], 2),
              "sb3": sb3, "batched": batched, "batched_features": featured, "batched_minibatch_4096": batched_4096,
              "load_average_before": load_before, **_machine()}
    out.mkdir(parents=True, exist_ok=True)
    (out / "trainer.json").write_text(json.dumps(result, indent=1))
    _plot_profile(result, out / "trainer_profile.png")
    print(json.dumps({k: result[k] for k in ("ratio_wall", "ratio_cpu", "ratio_cpu_per_round",
                                             "ratio_cpu_minibatch_4096", "features_ratio_cpu",
                                             "features_ratio_cpu_per_round", "bound_cpu_ratio")}))
    return result


def _plot_profile(result: dict, path: Path) -> list[Path]:
    """Where each trainer's CPU time goes, in microseconds per decision, averaged over the rounds."""
    from cardzoo.envs.common.charts import quantity_chart

    values = {}
    for name, runs in (("SB3", result["sb3"]), ("batched", result["batched"]),
                       (f"batched, {result.get('features')}", result.get("batched_features", []))):
        if not runs:
            continue
        for phase in runs[0]["profile_us_per_decision"]:
            values[f"{name}: {phase}"] = float(np.mean([r["profile_us_per_decision"][phase] for r in runs]))
    values["batched: matrix products alone (floor)"] = result["matmul_floor_us_per_decision"]["total"]
    return quantity_chart(f"PPO on Rope Team, CPU per decision (batched / SB3: {result['ratio_cpu']}x per CPU-second"
                          + (f"; with features / without: {result['features_ratio_cpu']}" if "features_ratio_cpu"
                             in result else "") + ")",
                          values, path, x_label="CPU microseconds per decision")


# ----------------------------------------------------------------------------- payoff
PAYOFF_AGENTS = {"simple": "simple strategy", "learned_plain": "shipped policy, observation alone",
                 "learned": "shipped policy, observation + the simple strategy's card values"}


def payoff(policy: Path, games: int, out: Path, workers: int, cache: str | None = None) -> dict:
    """A trained Rope Team policy on the report's deals (game ``i`` is ``reset(seed=i)``, ``games`` per level)
    beside the simple strategy and the shipped policies: win rates with Wilson intervals, and paired differences
    on the same deals."""
    from cardzoo.envs.common.stats import paired, wilson

    from ..matches.runner import Matchup, run

    result = {"policy": str(policy), "games_per_level": games, "deals": "reset(seed=i), i = 0 .. games - 1",
              "levels": {}}
    for level in GAMES["rope_team"].levels:
        won = {name: [r["outcome"] == "win" for r in run(Matchup.of("rope_team_v0", [name], level=level), games,
                                                       workers=workers, cache_dir=cache, progress=False)]
               for name in [str(policy), *PAYOFF_AGENTS]}
        mine = won.pop(str(policy))
        rate = wilson(sum(mine), games)
        row = {"policy": {"rate": rate.rate, "low": rate.low, "high": rate.high}}
        for name, theirs in won.items():
            other, diff = wilson(sum(theirs), games), paired(mine, theirs)
            row[name] = {"rate": other.rate, "low": other.low, "high": other.high,
                         "policy_minus_this": {"difference": diff.difference, "low": diff.low, "high": diff.high,
                                               "p_value": diff.p_value, "text": str(diff)}}
        result["levels"][level] = row
        print(f"{level}: policy {100 * rate.rate:.1f}%; " + "; ".join(
            f"vs {name} ({100 * row[name]['rate']:.1f}%) {row[name]['policy_minus_this']['text']}" for name in won),
              flush=True)
    result.update(_machine())
    out.mkdir(parents=True, exist_ok=True)
    (out / "report_deals.json").write_text(json.dumps(result, indent=1))
    return result


def _machine() -> dict:
    import os

    return {"cpu_count": os.cpu_count(), "load_average": [round(x, 2) for x in os.getloadavg()],
            "python": platform.python_version(), "numpy": np.__version__, "date": time.strftime("%Y-%m-%d")}


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("engine", "trainer", "payoff"))
    parser.add_argument("--game", choices=("rope_team", "summit_rush", "rook"), default="rope_team",
                        help="engine: the game to measure")
    parser.add_argument("--out", default="evaluation/results/batched", help="folder for the results")
    parser.add_argument("--seconds", type=float, default=5.0, help="engine: CPU seconds per measurement")
    parser.add_argument("--sb3-steps", type=int, default=65_536, help="trainer: SB3 env steps (8 rollouts)")
    parser.add_argument("--batched-steps", type=int, default=327_680, help="trainer: batched env steps (10 rollouts)")
    parser.add_argument("--threads", type=int, default=1, help="trainer: torch threads for both")
    parser.add_argument("--rounds", type=int, default=3, help="trainer: runs of each, alternating")
    parser.add_argument("--policy", help="payoff: the policy file to play")
    parser.add_argument("--games", type=int, default=10_000, help="payoff: games per level (the full report's)")
    parser.add_argument("--workers", type=int, default=1, help="payoff: processes")
    parser.add_argument("--cache", help="payoff: folder for finished chunks of games (the evaluation cache)")
    args = parser.parse_args(argv)
    out = Path(args.out)
    if args.what == "payoff":
        if not args.policy:
            parser.error("payoff needs --policy")
        return payoff(Path(args.policy), args.games, out, args.workers, args.cache)
    if args.what == "engine":
        return engine(out, args.seconds, f"{args.game}_v0")
    return trainer(out, args.sb3_steps, args.batched_steps, args.threads, args.rounds)


if __name__ == "__main__":
    main()
