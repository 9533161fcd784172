"""Train a cardzoo policy with Ray RLlib's PPO (new API stack): ``cardzoo train rope_team --backend rllib``.

Read top to bottom: options, Ray (started in this process, or a running cluster with ``--address``), the PPO
algorithm (``cardzoo.training.rllib.config``), then training iterations; every ``--eval-every`` iterations the
policy is exported to numpy and evaluated on the SB3 path's fixed evaluation deals (``cardzoo.training.train``),
disjoint from the report's. Everything a run makes goes to ``--out``: ``policy.npz`` (best by evaluation; with
``--seat-policies`` one file per seat, ``policy_player_0.npz`` ...), ``final.npz``, ``checkpoints/``,
``curve.csv``, ``curve.png``, ``algorithm/`` (RLlib's checkpoint) and ``run.json`` (options, command, env and agent
steps, wall time, env steps per second of training).

On a cluster every node needs cardzoo installed (the env runners build the envs where they run).
"""

from __future__ import annotations

import argparse
import csv
import json
import shlex
import shutil
import sys
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

import numpy as np


def option(default, help: str):
    return field(default=default, metadata={"help": help})


@dataclass
class RllibTrainConfig:
    game: str = option("rope_team", "rope_team, summit_rush or rook")
    level: str | None = option(None, "Rope Team or Summit Rush level (default normal); Rook trains on single rounds")
    iterations: int = option(50, "PPO iterations: each samples --batch env steps, then learns on them")
    env_runners: int = option(2, "RLlib EnvRunner actors sampling in parallel (0: sample in this process)")
    envs_per_runner: int = option(8, "envs each runner steps together (their decisions in one forward pass)")
    address: str | None = option(None, "Ray cluster to join (e.g. auto, ray://host:10001); default: Ray in-process")
    seed: int = option(0, "seeds RLlib, torch and the deals")
    hidden: tuple[int, ...] = option((128, 128), "hidden layer sizes of the actor and of the critic")
    learning_rate: float = option(3e-4, "Adam step size")
    batch: int = option(4000, "env steps per iteration (train_batch_size_per_learner)")
    minibatch: int = option(500, "minibatch size")
    epochs: int = option(4, "passes over each batch")
    gamma: float = option(1.0, "discount: episodes are short and only the outcome counts")
    gae_lambda: float = option(0.95, "GAE lambda")
    clip: float = option(0.2, "PPO clip")
    entropy: float = option(0.01, "entropy bonus")
    seat_policies: bool = option(False, "Rook: one policy per seat instead of one shared (self-play) policy")
    eval_every: int = option(5, "iterations between evaluations (and checkpoints)")
    eval_games: int = option(500, "games per evaluation")
    report_games: int = option(0, "after training, play the best policy on the report's deals 0..N-1 (0: no)")
    out: str = option("runs/rllib", "output folder")

    def __post_init__(self):
        from cardzoo.envs.common.errors import OptionError

        from .env import make_env

        if self.report_games < 0:
            raise OptionError(f"report_games must be 0 or more, got {self.report_games}")
        for name in ("iterations", "batch", "minibatch", "epochs", "eval_every", "eval_games", "envs_per_runner"):
            if getattr(self, name) < 1:
                raise OptionError(f"{name} must be at least 1, got {getattr(self, name)}")
        if self.env_runners < 0:
            raise OptionError(f"env_runners must be 0 or more, got {self.env_runners}")
        make_env(self.game, **env_options(self)).close()  # a bad level fails here, not inside an env runner


def env_options(cfg: RllibTrainConfig) -> dict:
    return {} if cfg.level is None else {"level": cfg.level}


def build(cfg: RllibTrainConfig):
    """The PPO algorithm of a run (Ray must be initialised)."""
    from .config import ppo_config

    return ppo_config(
        cfg.game, env=env_options(cfg), seat_policies=cfg.seat_policies, env_runners=cfg.env_runners,
        envs_per_runner=cfg.envs_per_runner, hidden=cfg.hidden, seed=cfg.seed, lr=cfg.learning_rate,
        train_batch_size_per_learner=cfg.batch, minibatch_size=cfg.minibatch, num_epochs=cfg.epochs,
        gamma=cfg.gamma, lambda_=cfg.gae_lambda, clip_param=cfg.clip, entropy_coeff=cfg.entropy,
    ).build_algo()


def evaluate(policy: Path, cfg: RllibTrainConfig) -> dict[str, float]:
    """The SB3 path's evaluation (same deals, same matchups) of an exported policy."""
    from cardzoo.training.train import TrainConfig
    from cardzoo.training.train import evaluate as evaluate_policy

    from .env import GAMES

    level = GAMES[cfg.game][2].get("level") if cfg.level is None else cfg.level
    sb3 = TrainConfig(game=cfg.game, levels=() if level is None else (level,), imitate=None)
    return evaluate_policy(policy, sb3, cfg.eval_games)


def report_rates(policy: Path, cfg: RllibTrainConfig) -> dict[str, float]:
    """Win rates of a policy file on the report's deals (seeds ``0 .. report_games - 1``, the evaluation runner).
    Cooperative games: the policy in both seats, the policy with the simple strategy (either seat), and for
    comparison on the same deals the simple strategy, random play, and random play with the simple strategy.
    Rook: rounds won against the heuristic and against random play, the policy in each seat on every deal."""
    from cardzoo.evaluation.runner import Matchup, run

    from .env import GAMES, env_config

    env = GAMES[cfg.game][0]
    options = {k: v for k, v in env_config(cfg.game, **env_options(cfg)).items() if k != "reward_scale"}
    p = str(policy)

    def play(agents: list[str]) -> list[dict]:
        return run(Matchup.of(env, agents, **options), cfg.report_games, progress=False)

    if cfg.game != "rook":
        pairs = {"policy+policy": [p], "policy+simple": [p, "simple"], "simple+policy": ["simple", p],
                 "simple+simple": ["simple"], "random+random": ["random"], "random+simple": ["random", "simple"],
                 "simple+random": ["simple", "random"]}
        return {name: float(np.mean([r["outcome"] == "win" for r in play(agents)])) for name, agents in pairs.items()}
    rates = {}
    for other in ("heuristic", "random"):
        won = [r["returns"][0] > r["returns"][1] for r in play([p, other])]
        won += [r["returns"][1] > r["returns"][0] for r in play([other, p])]
        rates[f"rounds won vs {other}"] = float(np.mean(won))
    return rates


def write_curve(rows: list[dict], out: Path) -> None:
    from cardzoo.evaluation.charts import line_chart

    with open(out / "curve.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    rates = [k for k in rows[0] if k not in ("iteration", "env_steps", "seconds", "episode_return_mean")]
    series = {k: [(r["env_steps"], r[k]) for r in rows] for k in rates}
    line_chart("WIN RATE DURING TRAINING (RLLIB PPO)", series, out / "curve.png", x_label="ENV STEPS")


def _total(count) -> int:
    """A step count of RLlib's results: a number, or a dict of counts per agent."""
    return int(sum(count.values()) if isinstance(count, dict) else count)


def train(cfg: RllibTrainConfig, command: str = "") -> Path:
    import ray
    from ray.rllib.utils.metrics import (
        ENV_RUNNER_RESULTS,
        EPISODE_RETURN_MEAN,
        LEARNER_RESULTS,
        NUM_AGENT_STEPS_SAMPLED_LIFETIME,
        NUM_ENV_STEPS_SAMPLED_LIFETIME,
    )

    from ..train import RunLog
    from .config import policy_ids
    from .env import GAMES
    from .export import export_module

    out = Path(cfg.out)
    log = RunLog(out)

    started_ray = not ray.is_initialized()
    if started_ray:
        ray.init(address=cfg.address, include_dashboard=False)
    start = time.time()
    algo = build(cfg)
    ray_info = {"ray_address": ray.get_runtime_context().gcs_address, "ray_cpus": ray.cluster_resources().get("CPU"),
                "env_runners": algo.env_runner_group.num_healthy_remote_workers()}
    log(f"Ray at {ray_info['ray_address']}, {ray_info['ray_cpus']:.0f} CPUs, {ray_info['env_runners']} env runners; "
        f"PPO built in {time.time() - start:.0f} s")
    policies = policy_ids(cfg.game, cfg.seat_policies)
    meta = {"env": GAMES[cfg.game][0], "config": asdict(cfg), "command": command, "features": None}
    rows: list[dict] = []
    best = {"mean": -1.0}
    steps = {"env": 0, "agent": 0}
    train_seconds = 0.0

    def export(folder: Path, name: str, it: int) -> dict[str, Path]:
        """Each policy's actor as numpy: ``name.npz`` (shared) or ``name_<policy>.npz``."""
        extra = {"iteration": it, "env_steps": steps["env"], "seconds": round(time.time() - start)}
        return {p: export_module(algo.get_module(p), folder / (f"{name}.npz" if len(policies) == 1 else
                                                                f"{name}_{p}.npz"), {**meta, **extra, "policy": p})
                for p in policies}

    def checkpoint(it: int, result: dict | None) -> None:
        paths = export(out / "checkpoints", f"iter_{it}", it)
        rates = {(k if len(policies) == 1 else f"{p}:{k}"): v
                 for p, path in paths.items() for k, v in evaluate(path, cfg).items()}
        mean = float(np.mean(list(rates.values())))
        ret = result[ENV_RUNNER_RESULTS].get(EPISODE_RETURN_MEAN, float("nan")) if result else float("nan")
        rows.append({"iteration": it, "env_steps": steps["env"], "seconds": round(time.time() - start),
                     "episode_return_mean": ret, **rates, "mean": mean})
        write_curve(rows, out)
        log(f"iteration {it}, {steps['env']:,} env steps: " + ", ".join(f"{k} {100 * v:.1f}%"
                                                                          for k, v in rates.items()))
        if mean > best["mean"]:
            best.update(mean=mean, iteration=it, env_steps=steps["env"], rates=rates)
            for path in paths.values():
                shutil.copyfile(path, out / path.name.replace(f"iter_{it}", "policy"))

    checkpoint(0, None)
    losses = {}
    for it in range(1, cfg.iterations + 1):
        t = time.time()
        result = algo.train()
        train_seconds += time.time() - t
        steps["env"] = _total(result[ENV_RUNNER_RESULTS][NUM_ENV_STEPS_SAMPLED_LIFETIME])
        steps["agent"] = _total(result[ENV_RUNNER_RESULTS][NUM_AGENT_STEPS_SAMPLED_LIFETIME])
        losses = {p: float(result[LEARNER_RESULTS][p]["total_loss"]) for p in policies}
        print(f"\r  iteration {it}/{cfg.iterations}: {steps['env']:,} env steps, "
              f"{steps['env'] / train_seconds:.0f} steps/s, loss {losses}", end="", file=sys.stderr, flush=True)
        if it % cfg.eval_every == 0 or it == cfg.iterations:
            print(file=sys.stderr)
            checkpoint(it, result)
    export(out, "final", cfg.iterations)
    algo.save(str((out / "algorithm").resolve()))
    algo.stop()
    if started_ray:
        ray.shutdown()
    seconds = time.time() - start
    run = {**meta, "seed": cfg.seed, "iterations": cfg.iterations, "env_steps": steps["env"],
           "agent_steps": steps["agent"], "train_seconds": round(train_seconds, 1), "wall_seconds": round(seconds),
           "env_steps_per_second": round(steps["env"] / train_seconds, 1),
           "agent_steps_per_second": round(steps["agent"] / train_seconds, 1), **ray_info,
           "final_loss": losses, "best": best}
    if cfg.report_games:
        names = ["policy.npz"] if len(policies) == 1 else [f"policy_{p}.npz" for p in policies]
        run["report_deals"] = {"games": cfg.report_games, **{n: report_rates(out / n, cfg) for n in names}}
        log(f"on the report's deals 0..{cfg.report_games - 1}: {run['report_deals']}")
    (out / "run.json").write_text(json.dumps(run, indent=1))
    log(f"done in {seconds:.0f} s ({run['env_steps_per_second']:.0f} env steps/s while training); best mean win "
        f"rate {100 * best['mean']:.1f}% at iteration {best.get('iteration')}; policies in {out}")
    log.close()
    return out / "run.json"


def parse_args(argv: list[str]) -> RllibTrainConfig:
    parser = argparse.ArgumentParser(prog="cardzoo train GAME --backend rllib", description=__doc__.splitlines()[0])
    parser.add_argument("game", choices=("rope_team", "rook", "summit_rush"), help="the game to train on")
    for f in fields(RllibTrainConfig):
        if f.name == "game":
            continue
        flag, default = "--" + f.name.replace("_", "-"), f.default
        help_text = f.metadata["help"] + ("" if default is None or default is False else f" (default {default})")
        if isinstance(default, bool):
            parser.add_argument(flag, action="store_true", help=help_text)
        elif isinstance(default, tuple):
            parser.add_argument(flag, nargs="+", type=int, default=default, help=help_text)
        else:
            parser.add_argument(flag, type=str if default is None else type(default), default=default, help=help_text)
    args = vars(parser.parse_args(argv))
    return RllibTrainConfig(**{k: tuple(v) if isinstance(v, list) else v for k, v in args.items()})


def main(argv: list[str] | None = None) -> Path:
    argv = sys.argv[1:] if argv is None else argv
    cfg = parse_args(argv)
    return train(cfg, command="cardzoo train --backend rllib " + " ".join(shlex.quote(a) for a in argv))


if __name__ == "__main__":
    main()
