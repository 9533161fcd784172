"""Environment throughput: random legal play through each env's standard loop, beside PettingZoo's peers.

Each loop reads the observation and action mask every step, as a learning agent would, and picks a uniformly random
legal action with the same picker for every env, so the ratio measures the environments. OpenSpiel's leduc_poker
(a C++ engine behind Python bindings) is stepped through its own state API with an observation tensor and the
legal actions each step, the nearest equivalent of an env loop there. Time is CPU time of this
process (``time.process_time``), so a busy machine skews the figures less than wall time would.

    cardzoo bench                      # every game and every installed peer, ~3 CPU-seconds each
    cardzoo bench --seconds 10 --out evaluation/results/bench.json
"""

from __future__ import annotations

import importlib
import json
import platform
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from cardzoo.envs.registry import GAMES


def aec_loop(make_env: Callable, seconds: float, seed: int = 0) -> tuple[int, int, float]:
    """Steps, games and CPU seconds of random legal play through an AEC env's ``agent_iter`` loop."""
    env = make_env()
    rng = np.random.default_rng(seed)
    steps = games = 0
    start = time.process_time()
    while time.process_time() - start < seconds:
        env.reset(seed=int(seed + games))
        for _ in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                action = None
            else:
                legal = np.flatnonzero(obs["action_mask"])
                action = int(legal[rng.integers(len(legal))])
            env.step(action)
            steps += 1
        games += 1
    return steps, games, time.process_time() - start


def parallel_loop(make_env: Callable, seconds: float, seed: int = 0) -> tuple[int, int, float]:
    """Steps (every agent acts each step), games and CPU seconds of random legal play through a ParallelEnv."""
    env = make_env()
    rng = np.random.default_rng(seed)
    steps = games = 0
    start = time.process_time()
    while time.process_time() - start < seconds:
        observations, _ = env.reset(seed=int(seed + games))
        while env.agents:
            actions = {}
            for agent in env.agents:
                legal = np.flatnonzero(observations[agent]["action_mask"])
                actions[agent] = int(legal[rng.integers(len(legal))])
            observations, *_ = env.step(actions)
            steps += 1
        games += 1
    return steps, games, time.process_time() - start


@dataclass(frozen=True)
class Bench:
    name: str
    module: str  # imported lazily: peers are optional
    factory: str  # attribute of the module that builds the env
    loop: Callable
    peer: bool = False


# every registered game, turn-based ones first (a Parallel game steps every seat at once: its rate reads apart)
BENCHES = [
    *(Bench(g.env_id + (" (parallel)" if g.parallel else ""), g.module, "parallel_env" if g.parallel else "env",
            parallel_loop if g.parallel else aec_loop) for g in sorted(GAMES.values(), key=lambda g: g.parallel)),
    Bench("leduc_holdem_v4 (PettingZoo classic)", "pettingzoo.classic.leduc_holdem_v4", "env", aec_loop, peer=True),
]


def _openspiel_loop(seconds: float, seed: int = 0, game: str = "leduc_poker") -> tuple[int, int, float]:
    import pyspiel

    g = pyspiel.load_game(game)
    rng = np.random.default_rng(seed)
    steps = games = 0
    start = time.process_time()
    while time.process_time() - start < seconds:
        state = g.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                state.apply_action(outcomes[rng.integers(len(outcomes))][0])
                continue
            state.observation_tensor(state.current_player())
            legal = state.legal_actions()
            state.apply_action(legal[rng.integers(len(legal))])
            steps += 1
        games += 1
    return steps, games, time.process_time() - start


def run(seconds: float = 3.0, only: list[str] | None = None) -> list[dict]:
    rows = []
    for bench in BENCHES:
        if only and not bench.peer and not any(o in bench.name for o in only):
            continue
        try:
            module = importlib.import_module(bench.module)
        except ImportError as err:  # an optional peer that is not installed
            rows.append({"env": bench.name, "peer": bench.peer, "skipped": f"not installed ({err.name})"})
            continue
        steps, games, cpu = bench.loop(getattr(module, bench.factory), seconds)
        rows.append({"env": bench.name, "peer": bench.peer, "loop": bench.loop.__name__, "steps": steps,
                     "games": games, "cpu_seconds": round(cpu, 3), "steps_per_cpu_second": round(steps / cpu)})
    try:
        steps, games, cpu = _openspiel_loop(seconds)
        rows.append({"env": "leduc_poker (OpenSpiel)", "peer": True, "loop": "openspiel", "steps": steps,
                     "games": games, "cpu_seconds": round(cpu, 3), "steps_per_cpu_second": round(steps / cpu)})
    except ImportError:
        rows.append({"env": "leduc_poker (OpenSpiel)", "peer": True, "skipped": "not installed (pyspiel)"})
    for key, prefix in (("ratio_to_pettingzoo_leduc", "leduc_holdem"), ("ratio_to_openspiel_leduc", "leduc_poker")):
        peer = next((r for r in rows if r["env"].startswith(prefix) and "steps" in r), None)
        for r in rows:
            if peer and "steps" in r:
                r[key] = round(r["steps_per_cpu_second"] / peer["steps_per_cpu_second"], 2)
    return rows


def format_table(rows: list[dict]) -> str:
    lines = [f"{'env':<40} {'steps/CPU-s':>12} {'vs PZ leduc':>12} {'vs OS leduc':>12} {'steps':>9} {'games':>7}"]
    for r in rows:
        if "skipped" in r:
            lines.append(f"{r['env']:<40} {'skipped: ' + r['skipped']}")
            continue
        ratios = [r.get(k) for k in ("ratio_to_pettingzoo_leduc", "ratio_to_openspiel_leduc")]
        cells = " ".join(f"{'' if x is None else f'{x:.2f}x':>12}" for x in ratios)
        lines.append(f"{r['env']:<40} {r['steps_per_cpu_second']:>12,} {cells} {r['steps']:>9,} {r['games']:>7,}")
    return "\n".join(lines)


def main(seconds: float = 3.0, out: str | None = None, only: list[str] | None = None) -> list[dict]:
    rows = run(seconds, only)
    print(format_table(rows))
    if out:
        meta = {"python": platform.python_version(), "machine": platform.machine(), "seconds_per_env": seconds,
                "date": time.strftime("%Y-%m-%d")}
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        Path(out).write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
        print(f"written to {out}")
    return rows
