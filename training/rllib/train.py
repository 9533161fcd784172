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
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from cardzoo.envs.common.progress import Progress
from cardzoo.envs.registry import GAMES as REGISTRY

from .. import common
from ..common import Curve, Evaluations, RunLog, option, renamed_options
from ..train import GAMES


@renamed_options
@dataclass
class RllibTrainConfig:
    """The options of a run; each is a flag of ``cardzoo train GAME --backend rllib`` (``env_runners`` is
    ``--env-runners``). PPO's settings have the names they have in every cardzoo trainer; the earlier ``batch``,
    ``minibatch``, ``epochs``, ``clip`` and ``entropy`` still work, with a warning."""

    game: str = option("rope_team", "the game: rope_team, summit_rush or rook")
    level: str | None = option(None, "Rope Team or Summit Rush level (default: normal); Rook trains on single rounds")
    iterations: int = option(50, "PPO iterations: each samples --steps-per-iteration env steps, then learns on them",
                             low=1)
    env_runners: int = option(2, "RLlib EnvRunner actors sampling in parallel (0: sample in this process)", low=0)
    envs_per_runner: int = option(8, "envs each runner steps together (their decisions in one forward pass)", low=1)
    address: str | None = option(None, "the Ray cluster to join (e.g. auto, ray://host:10001; default: Ray started "
                                       "in this process)")
    seed: int = option(0, "seeds RLlib, torch and the deals", low=0)
    hidden: tuple[int, ...] = option((128, 128), "hidden layer sizes of the actor and of the critic", low=1)
    learning_rate: float = option(3e-4, "Adam step size", low=0)
    steps_per_iteration: int = option(4000, "env steps per iteration (train_batch_size_per_learner)", low=1,
                                      old=["batch"])
    minibatch_size: int = option(500, "minibatch size", low=1, old=["minibatch"])
    update_epochs: int = option(4, "passes over each batch", low=1, old=["epochs"])
    gamma: float = option(1.0, "discount: episodes are short and only the outcome counts", low=0)
    gae_lambda: float = option(0.95, "GAE lambda", low=0)
    clip_coef: float = option(0.2, "PPO clip", low=0, old=["clip"])
    ent_coef: float = option(0.01, "entropy bonus", low=0, old=["entropy"])
    seat_policies: bool = option(False, "Rook: one policy per seat instead of one shared (self-play) policy")
    eval_every: int = option(5, "iterations between evaluations (and checkpoints)", low=1)
    eval_games: int = option(500, "games per evaluation", low=1)
    report_games: int = option(0, "after training, play the best policy on the report's deals 0..N-1 (0: no)", low=0)
    out: str = option("", "output folder (default: runs/rllib_GAME)")

    def __post_init__(self):
        from .config import policy_ids
        from .env import make_env

        if not self.out:
            self.out = f"runs/rllib_{self.game}"
        policy_ids(self.game, self.seat_policies)
        make_env(self.game, **env_options(self)).close()  # a bad level fails here, not inside an env runner


def env_options(cfg: RllibTrainConfig) -> dict:
    return {} if cfg.level is None else {"level": cfg.level}


def build(cfg: RllibTrainConfig):
    """The PPO algorithm of a run (Ray must be initialised)."""
    from .config import ppo_config

    return ppo_config(
        cfg.game, env=env_options(cfg), seat_policies=cfg.seat_policies, env_runners=cfg.env_runners,
        envs_per_runner=cfg.envs_per_runner, hidden=cfg.hidden, seed=cfg.seed, lr=cfg.learning_rate,
        train_batch_size_per_learner=cfg.steps_per_iteration, minibatch_size=cfg.minibatch_size,
        num_epochs=cfg.update_epochs, gamma=cfg.gamma, lambda_=cfg.gae_lambda, clip_param=cfg.clip_coef,
        entropy_coeff=cfg.ent_coef,
    ).build_algo()


def evaluate(policy: Path, cfg: RllibTrainConfig) -> dict[str, float]:
    """The SB3 path's evaluation (same deals, same matchups) of an exported policy."""
    from ..train import TrainConfig
    from ..train import evaluate as evaluate_policy
    from .env import GAMES

    level = GAMES[cfg.game][2].get("level") if cfg.level is None else cfg.level
    sb3 = TrainConfig(game=cfg.game, levels=() if level is None else (level,), imitate=None)
    return evaluate_policy(policy, sb3, cfg.eval_games)


def report_rates(policy: Path, cfg: RllibTrainConfig) -> dict[str, float]:
    """Win rates of a policy file on the report's deals (seeds ``0 .. report_games - 1``, the runner's records).
    Cooperative games: the policy in both seats, the policy with the simple strategy (either seat), and for
    comparison on the same deals the simple strategy, random play, and random play with the simple strategy.
    Rook: rounds won against the heuristic and against random play, the policy in each seat on every deal."""
    from cardzoo.agents.loops import play_games

    from .env import GAMES, env_config

    env = GAMES[cfg.game][0]
    options = {k: v for k, v in env_config(cfg.game, **env_options(cfg)).items() if k != "reward_scale"}
    p = str(policy)

    def play(agents: list[str]) -> list[dict]:  # the runner's records of these games, played here
        return play_games(env, agents, range(cfg.report_games), **options)

    if REGISTRY[cfg.game].cooperative:
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


class RllibCurve(Curve):
    """The held-out win rates by env steps; a row also holds the iteration and RLlib's mean episode return."""

    title = "Win rate during training (held-out deals, RLlib PPO)"
    x = "env_steps"
    skip = ("iteration", "seconds", "episode_return_mean")


def _total(count) -> int:
    """A step count of RLlib's results: a number, or a dict of counts per agent."""
    return int(sum(count.values()) if isinstance(count, dict) else count)


class Run:
    """A run in progress: the algorithm and its policies, step counts and time, the curve and the best so far."""

    def __init__(self, cfg: RllibTrainConfig, algo, out: Path, log, command: str):
        import ray

        from .config import policy_ids
        from .env import GAMES

        self.cfg, self.algo, self.out, self.log = cfg, algo, out, log
        self.policies = policy_ids(cfg.game, cfg.seat_policies)
        self.meta = {"env": GAMES[cfg.game][0], "config": asdict(cfg), "command": command, "features": None}
        self.ray = {"ray_address": ray.get_runtime_context().gcs_address,
                    "ray_cpus": ray.cluster_resources().get("CPU"),
                    "env_runners": algo.env_runner_group.num_healthy_remote_workers()}
        self.iteration, self.env_steps, self.agent_steps, self.train_seconds = 0, 0, 0, 0.0
        self.losses: dict[str, float] = {}
        self.evaluations = Evaluations(out, log, RllibCurve())
        self.start = time.time()

    def iterate(self) -> dict:
        """One PPO iteration: sample ``batch`` env steps on the env runners, then learn on them."""
        from ray.rllib.utils.metrics import (
            ENV_RUNNER_RESULTS,
            LEARNER_RESULTS,
            NUM_AGENT_STEPS_SAMPLED_LIFETIME,
            NUM_ENV_STEPS_SAMPLED_LIFETIME,
        )

        t = time.time()
        result = self.algo.train()
        self.train_seconds += time.time() - t
        self.iteration += 1
        self.env_steps = _total(result[ENV_RUNNER_RESULTS][NUM_ENV_STEPS_SAMPLED_LIFETIME])
        self.agent_steps = _total(result[ENV_RUNNER_RESULTS][NUM_AGENT_STEPS_SAMPLED_LIFETIME])
        self.losses = {p: float(result[LEARNER_RESULTS][p]["total_loss"]) for p in self.policies}
        return result

    def status(self) -> str:
        """Where training stands, for the progress bar: env steps, their rate and the losses."""
        losses = ", ".join(f"{p} {loss:.3g}" for p, loss in self.losses.items())
        rate = self.env_steps / max(self.train_seconds, 1e-9)
        return f"{self.env_steps:,} env steps, {rate:.0f} steps/s, loss {losses}"

    def files(self, name: str) -> dict[str, str]:
        """Each policy's file name: ``name.npz`` (one shared policy) or ``name_<policy>.npz``."""
        return {p: f"{name}.npz" if len(self.policies) == 1 else f"{name}_{p}.npz" for p in self.policies}

    def export(self, folder: Path, name: str) -> dict[str, Path]:
        """Each policy's actor as numpy, in ``folder``."""
        from .export import export_module

        meta = {**self.meta, "iteration": self.iteration, "env_steps": self.env_steps,
                "seconds": round(time.time() - self.start)}
        return {p: export_module(self.algo.get_module(p), folder / file, {**meta, "policy": p})
                for p, file in self.files(name).items()}

    def checkpoint(self, result: dict | None = None) -> None:
        """Export, evaluate on the held-out deals, add to the curve, keep the best as ``policy*.npz``."""
        from ray.rllib.utils.metrics import ENV_RUNNER_RESULTS, EPISODE_RETURN_MEAN

        it = self.iteration
        paths = self.export(self.out / "checkpoints", f"iter_{it}")
        rates = {(k if len(paths) == 1 else f"{p}:{k}"): v
                 for p, path in paths.items() for k, v in evaluate(path, self.cfg).items()}
        ret = result[ENV_RUNNER_RESULTS].get(EPISODE_RETURN_MEAN, float("nan")) if result else float("nan")
        self.evaluations.add(
            rates, row={"iteration": it, "env_steps": self.env_steps, "seconds": round(time.time() - self.start),
                        "episode_return_mean": ret},
            where={"iteration": it, "env_steps": self.env_steps},
            heading=f"iteration {it}, {self.env_steps:,} env steps",
            copies={path: self.files("policy")[p] for p, path in paths.items()}, show_mean=False)

    @property
    def best(self) -> dict:
        """The best evaluation so far: its mean, iteration, env steps and rates."""
        return self.evaluations.best

    def summary(self) -> dict:
        """What ``run.json`` holds: options, command, steps, times, throughput, Ray, final losses, the best."""
        return {**self.meta, "seed": self.cfg.seed, "iterations": self.iteration, "env_steps": self.env_steps,
                "agent_steps": self.agent_steps, "train_seconds": round(self.train_seconds, 1),
                "env_steps_per_second": round(self.env_steps / max(self.train_seconds, 1e-9), 1),
                "agent_steps_per_second": round(self.agent_steps / max(self.train_seconds, 1e-9), 1), **self.ray,
                "final_loss": self.losses, "best": self.best}


def train(cfg: RllibTrainConfig, command: str = "") -> Path:
    from cardzoo.training.ray_session import ray_session

    out = Path(cfg.out)
    log = RunLog(out)
    start = time.time()
    with ray_session(cfg.address):
        algo = build(cfg)
        try:
            run = Run(cfg, algo, out, log, command)
            log(f"Ray at {run.ray['ray_address']} ({run.ray['ray_cpus']:.0f} CPUs), {run.ray['env_runners']} env "
                f"runners; PPO built in {time.time() - start:.0f} s")
            run.checkpoint()
            with Progress("training", cfg.iterations, unit="iterations", every=60) as bar:
                while run.iteration < cfg.iterations:
                    result = run.iterate()
                    bar.set(run.iteration, note=run.status())
                    if run.iteration % cfg.eval_every == 0 or run.iteration == cfg.iterations:
                        run.checkpoint(result)
            run.export(out, "final")
            algo.save(str((out / "algorithm").resolve()))
        finally:
            algo.stop()
    summary = {**run.summary(), "wall_seconds": round(time.time() - start)}
    if cfg.report_games:  # after Ray: the runner forks its workers
        summary["report_deals"] = {"games": cfg.report_games,
                                   **{n: report_rates(out / n, cfg) for n in run.files("policy").values()}}
        log(f"on the report's deals 0..{cfg.report_games - 1}: {summary['report_deals']}")
    common.write_run(out, summary)
    log(f"done in {summary['wall_seconds']} s ({summary['env_steps_per_second']:.0f} env steps/s while training); "
        f"best mean win rate {100 * run.best['mean']:.1f}% at iteration {run.best['iteration']}; policies in {out}")
    log.close()
    return out / "run.json"


def add_options(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """RllibTrainConfig's fields as ``parser``'s arguments (``cardzoo train GAME --backend rllib``)."""
    return common.add_options(parser, RllibTrainConfig, GAMES)


def config(args: argparse.Namespace) -> RllibTrainConfig:
    return common.config(args, RllibTrainConfig)


def parse_args(argv: list[str]) -> RllibTrainConfig:
    return common.parse_args(RllibTrainConfig, argv, "python -m cardzoo.training.rllib.train",
                             __doc__.splitlines()[0], GAMES)


def main(argv: list[str] | None = None) -> Path:
    return common.main(parse_args, train, argv, "cardzoo train --backend rllib")


if __name__ == "__main__":
    main()
