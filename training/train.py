"""Train a cardzoo policy with MaskablePPO (sb3-contrib) on CPU: ``cardzoo train rope_team --steps 2000000``.

Read top to bottom: options, environments, (optional) imitation warm start, PPO with periodic evaluation on fixed
deals, export of the best policy to numpy, learning curve (the options machinery, evaluation loop, curve and log
are ``cardzoo.training.common``'s, shared by every trainer). Everything a run makes goes to ``--out``:
``policy.npz`` (best by evaluation), ``final.npz``, ``checkpoints/``, ``curve.csv``, ``curve.png``, ``run.json``
(options, seed, steps, wall time, the command) and TensorBoard logs when tensorboard is installed.

Cooperative games use one shared policy for every seat (parameter sharing, self-play), each seat acting on its
own observation; see ``cardzoo.training.gym_envs``. Evaluation deals are seeds ``EVAL_BASE_SEED + i``, disjoint
from the report's deals (``0 .. N-1``), so choosing the best checkpoint does not bias the report.
"""

from __future__ import annotations

import argparse
import importlib
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from cardzoo.envs.common.progress import Progress
from cardzoo.envs.common.seeding import refuse_benchmark_seeds
from cardzoo.envs.registry import GAMES

from . import common
from .common import EVAL_BASE_SEED, Curve, Evaluations, RunLog, held_out, option, renamed_options, whole_rollouts

__all__ = ["EVAL_BASE_SEED", "Curve", "RunLog", "TrainConfig", "add_options", "config", "evaluate", "main",
           "make_model", "option", "parse_args", "train", "whole_rollouts"]


@renamed_options
@dataclass
class TrainConfig:
    """The options of a run; each is a flag of ``cardzoo train`` (``num_envs`` is ``--num-envs``). PPO's settings
    have CleanRL's names, as in every cardzoo trainer; SB3's own names (``n_envs``, ``n_steps``, ``batch_size``,
    ``n_epochs``, ``clip_range``) still work, with a warning."""

    game: str = option("rope_team", "the game: rope_team, summit_rush or rook")
    levels: tuple[str, ...] = option((), "levels mixed in training, one policy for all (default: the game's levels)")
    steps: int = option(1_000_000, "PPO environment steps (one step = one seat's decision), rounded up to whole "
                                   "rollouts of num_envs * num_steps", low=1)
    seed: int = option(0, "seeds torch, numpy and the deals", low=0)
    hidden: tuple[int, ...] = option((128, 128), "hidden layer sizes of the actor and of the critic", low=1)
    learning_rate: float = option(1e-4, "Adam step size", low=0)
    num_envs: int = option(8, "environments stepped together", low=1, old=["n_envs"])
    num_steps: int = option(1024, "steps per environment per rollout", low=1, old=["n_steps"])
    minibatch_size: int = option(2048, "minibatch size", low=2, old=["batch_size"])
    update_epochs: int = option(4, "passes over each rollout", low=1, old=["n_epochs"])
    gamma: float = option(1.0, "discount: episodes are short and only the outcome counts", low=0)
    gae_lambda: float = option(0.95, "GAE lambda", low=0)
    clip_coef: float = option(0.1, "PPO clip; small, so fine-tuning does not undo the warm start", low=0,
                              old=["clip_range"])
    ent_coef: float = option(0.003, "entropy bonus", low=0)
    talk: bool = option(False, "Summit Rush: talking games, the message channel on (default: silent summit, the "
                               "games the shipped policies were trained on)")
    shaping: float = option(0.0, "Rope Team: reward per ridge card uncovered (documented shaping; 0 = the game's "
                                 "reward)")
    features: str | None = option(None, "extra inputs computed from the observation (a name in "
                                        "cardzoo.agents.features), or none")
    imitate: str | None = option("default", "warm start: clone this agent first (default: the game's baseline; "
                                            "none: no clone)")
    imitate_games: int = option(20_000, "games of the cloned agent's self-play", low=1)
    imitate_epochs: int = option(8, "passes over them", low=1)
    eval_games: int = option(500, "games per level at each evaluation", low=1)
    eval_every: int = option(100_000, "steps between evaluations (and checkpoints)", low=1)
    out: str = option("", "output folder (default: runs/GAME)")
    threads: int = option(2, "torch CPU threads", low=1)

    def __post_init__(self):
        game = GAMES[self.game]
        if not self.levels:
            self.levels = game.train_levels or game.levels
        if self.talk and not game.talk:
            talking = ", ".join(g.name for g in GAMES.values() if g.talk)
            raise ValueError(f"--talk is for {talking}; {self.game} has no message channel")
        if self.imitate == "default":
            self.imitate = "simple_talk" if self.talk else game.baseline
        if not self.out:
            self.out = f"runs/{self.game}"
        if game.per_level_policy and len(self.levels) != 1:
            raise ValueError("summit_rush observations differ in length between levels (stock and clock sizes): "
                             "train one policy per level, e.g. --levels hard")
        wanted = {"summit_rush_simple": False, "summit_rush_simple_talk": True, "summit_rush_simple_exact": False}
        if self.features in wanted and wanted[self.features] != self.talk:
            right = next(name for name, talk in wanted.items() if talk == self.talk)
            raise ValueError(f"features {self.features!r} are for {'silent' if self.talk else 'talking'} games; "
                             f"with{'' if self.talk else 'out'} --talk use {right!r}")


# ----------------------------------------------------------------------------- games
def _vec_envs(cfg: TrainConfig):
    """``num_envs`` single-agent views of the game: every seat one shared policy (cooperative, turn by turn or
    tick by tick), or one side against the opponent pool (two sides)."""
    from .gym_envs import SharedPolicyEnv, TickEnv, VersusEnv

    game = GAMES[cfg.game]
    module = importlib.import_module(game.module)
    if not game.cooperative:
        return [lambda i=i: VersusEnv(lambda: module.raw_env(**game.train_options), _rook_opponent,
                                      seed=cfg.seed * 1000 + i, reward_scale=game.reward_scale, features=cfg.features)
                for i in range(cfg.num_envs)]
    if game.parallel:
        makers = [lambda level=level: module.parallel_env(**_env_options(cfg, level)) for level in cfg.levels]
        return [lambda i=i: TickEnv(makers, seed=cfg.seed * 1000 + i, features=cfg.features)
                for i in range(cfg.num_envs)]
    shaping = {"shaping": cfg.shaping} if "shaping" in game.options else {}
    makers = [lambda level=level: module.raw_env(**_env_options(cfg, level), **shaping) for level in cfg.levels]
    return [lambda i=i: SharedPolicyEnv(makers, seed=cfg.seed * 1000 + i, features=cfg.features)
            for i in range(cfg.num_envs)]


# Rook: the learner meets the heuristic, random play and its own earlier snapshots (added at each checkpoint).
ROOK_POOL: list[Path] = []
ROOK_REWARD_SCALE = GAMES["rook"].reward_scale  # single rounds pay the point difference: scaled to about -3..3


def rook_opponent_kind(rng: np.random.Generator, snapshots: int) -> str:
    """The pool's mix (both trainers): a snapshot 40% of the games once there are ``snapshots``, else the
    heuristic 50% (90% before the first snapshot), random play 10%."""
    u = rng.random()
    if u < 0.4 and snapshots:
        return "snapshot"
    return "heuristic" if u < 0.9 else "random"


def _rook_opponent(rng: np.random.Generator):
    from cardzoo.agents import RandomAgent
    from cardzoo.agents.learned import LearnedAgent
    from cardzoo.agents.rook_heuristic import RookHeuristic

    kind = rook_opponent_kind(rng, len(ROOK_POOL))
    if kind == "snapshot":
        return LearnedAgent(ROOK_POOL[int(rng.integers(len(ROOK_POOL)))])
    if kind == "heuristic":
        return RookHeuristic()
    return RandomAgent(int(rng.integers(2**31)))


def _env_options(cfg: TrainConfig, level: str) -> dict:
    game = GAMES[cfg.game]
    if not game.levels:
        return dict(game.train_options)
    return {**game.train_options, "level": level, **({"talk": cfg.talk} if game.talk else {})}


# ----------------------------------------------------------------------------- evaluation
def evaluate(policy_path: Path, cfg: TrainConfig, games: int) -> dict[str, float]:
    """Cooperative games: win rate per level with the policy in every seat. Rook: share of single rounds won
    against the heuristic, seats alternating. Always on the fixed evaluation deals."""
    from cardzoo.agents.learned import LearnedAgent
    from cardzoo.agents.loops import play_env_game
    from cardzoo.agents.registry import make_agent
    from cardzoo.envs.common.record import make_env

    env_name = GAMES[cfg.game].env_id

    def rate(level: str, seeds: list[int]) -> float:
        env = make_env(env_name, **_env_options(cfg, level))
        learned = LearnedAgent(policy_path)
        if not GAMES[cfg.game].cooperative:
            opponent = make_agent(GAMES[cfg.game].baseline, env_name)
            won = 0
            for i, seed in enumerate(seeds):
                seat = i % 2
                agents = [learned, opponent] if seat == 0 else [opponent, learned]
                returns = play_env_game(env, agents, seed)["returns"]
                won += returns[seat] > returns[1 - seat]
            return won / len(seeds)
        agents = [learned for _ in env.possible_agents]
        return sum(play_env_game(env, agents, seed)["outcome"] == "win" for seed in seeds) / len(seeds)

    rates = held_out(cfg.levels, games, rate)
    return {"vs_heuristic": rates[cfg.levels[0]]} if not GAMES[cfg.game].cooperative else rates


# ----------------------------------------------------------------------------- imitation warm start
def imitation_data(cfg: TrainConfig) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Observations, masks, actions and each decision's final return from the imitated agent's self-play."""
    from cardzoo.agents.registry import make_agent
    from cardzoo.envs.common.record import make_env

    env_name = GAMES[cfg.game].env_id
    scale = GAMES[cfg.game].reward_scale
    obs, masks, actions, returns = [], [], [], []
    for k, level in enumerate(cfg.levels):
        refuse_benchmark_seeds(cfg.seed * 7_777_777 + k * 1_000_000, cfg.imitate_games, "the imitation warm start")
        env = make_env(env_name, **_env_options(cfg, level))
        agents = [make_agent(cfg.imitate, env_name) for _ in env.possible_agents]
        seat = {a: i for i, a in enumerate(env.possible_agents)}
        for g in range(cfg.imitate_games // len(cfg.levels)):
            game_seed = cfg.seed * 7_777_777 + k * 1_000_000 + g  # not the report's or the evaluation's deals
            for i, agent in enumerate(agents):
                agent.reset(seed=game_seed * 10 + i)
            env.reset(seed=game_seed)
            totals = [0.0] * len(agents)
            seats = []
            for agent in env.agent_iter():
                o, reward, term, trunc, _ = env.last()
                totals[seat[agent]] += reward
                if term or trunc:
                    env.step(None)
                    continue
                a = agents[seat[agent]].act(o["observation"], o["action_mask"])
                obs.append(o["observation"])
                masks.append(o["action_mask"])
                actions.append(a)
                seats.append(seat[agent])
                env.step(a)
            returns.extend(scale * totals[s] for s in seats)
    if cfg.features:
        from cardzoo.agents.batched_features import batched

        obs = batched(cfg.features)(np.array(obs), np.array(masks))
    return np.array(obs), np.array(masks, dtype=bool), np.array(actions), np.array(returns, dtype=np.float32)


def warm_start(model, cfg: TrainConfig, log) -> None:
    """Behaviour cloning of the actor (cross-entropy on masked logits) and regression of the critic on returns."""
    import torch

    obs, masks, actions, returns = imitation_data(cfg)
    log(f"imitation: {len(actions)} decisions of {cfg.imitate!r} self-play")
    policy = model.policy
    optimizer = torch.optim.Adam(policy.parameters(), lr=1e-3)
    rng = np.random.default_rng(cfg.seed)
    batch = 1024
    for epoch in range(cfg.imitate_epochs):
        order = rng.permutation(len(actions))
        total, correct = 0.0, 0
        for start in range(0, len(order), batch):
            idx = order[start : start + batch]
            o = torch.as_tensor(obs[idx], dtype=torch.float32)
            m = torch.as_tensor(masks[idx])
            a = torch.as_tensor(actions[idx])
            values, log_prob, _ = policy.evaluate_actions(o, a, action_masks=m)
            loss = -log_prob.mean() + 0.5 * ((values.flatten() - torch.as_tensor(returns[idx])) ** 2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += float(loss.detach()) * len(idx)
            with torch.no_grad():
                dist = policy.get_distribution(o, action_masks=m.numpy())
                correct += int((dist.distribution.probs.argmax(1) == a).sum())
        log(f"imitation epoch {epoch + 1}/{cfg.imitate_epochs}: loss {total / len(order):.4f}, "
            f"agrees with {cfg.imitate!r} on {100 * correct / len(order):.1f}% of decisions")


# ----------------------------------------------------------------------------- main
def make_model(cfg: TrainConfig, tensorboard_log: str | None = None):
    """The run's MaskablePPO on its vector of ``num_envs`` envs (torch's threads and seed set as the run's)."""
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv

    torch.set_num_threads(cfg.threads)
    torch.manual_seed(cfg.seed)
    return MaskablePPO(
        "MlpPolicy", DummyVecEnv(_vec_envs(cfg)), learning_rate=cfg.learning_rate,
        n_steps=cfg.num_steps, batch_size=cfg.minibatch_size, n_epochs=cfg.update_epochs, gamma=cfg.gamma,
        gae_lambda=cfg.gae_lambda, clip_range=cfg.clip_coef, ent_coef=cfg.ent_coef, seed=cfg.seed, device="cpu",
        tensorboard_log=tensorboard_log, policy_kwargs={"net_arch": {"pi": list(cfg.hidden), "vf": list(cfg.hidden)}},
    )


def train(cfg: TrainConfig, command: str = "") -> Path:
    from stable_baselines3.common.callbacks import BaseCallback

    from .export import export_policy

    out = Path(cfg.out)
    log = RunLog(out)

    total = whole_rollouts(cfg, cfg.steps)
    if total != cfg.steps:
        log(f"steps: {cfg.steps:,} rounded up to {total:,}, whole rollouts of num_envs * num_steps = {cfg.num_envs} "
            f"* {cfg.num_steps:,} = {cfg.num_envs * cfg.num_steps:,} steps (a smaller --num-steps makes shorter "
            "rollouts)")
    start = time.time()
    try:
        import tensorboard  # noqa: F401

        tb = str(out / "tensorboard")
    except ImportError:
        tb = None
    model = make_model(cfg, tb)
    meta = {"env": GAMES[cfg.game].env_id, "config": asdict(cfg), "command": command, "features": cfg.features}
    if cfg.imitate:
        warm_start(model, cfg, log)

    evaluations = Evaluations(out, log)

    def checkpoint(steps: int) -> None:
        path = export_policy(model, out / "checkpoints" / f"step_{steps}.npz",
                             {**meta, "steps": steps, "seconds": round(time.time() - start)})
        rates = evaluate(path, cfg, cfg.eval_games)
        if not GAMES[cfg.game].cooperative:
            ROOK_POOL.append(path)
        evaluations.add(rates, row={"steps": steps, "seconds": round(time.time() - start)}, where={"steps": steps},
                        heading=f"step {steps}", copies={path: "policy.npz"})

    class Checkpoints(BaseCallback):
        def __init__(self, bar: Progress):
            super().__init__()
            self.bar = bar
            self.next_eval = cfg.eval_every

        def _on_step(self) -> bool:
            if self.num_timesteps >= self.next_eval:
                checkpoint(self.num_timesteps)
                self.next_eval += cfg.eval_every
            return True

        def _on_training_start(self) -> None:
            self.learn_start = time.time()  # the time left is estimated from PPO's pace, not the warm start's

        def _on_rollout_end(self) -> None:
            done = self.num_timesteps / total
            eta = max(0.0, (time.time() - self.learn_start) / done * (1 - done))
            self.bar.set(self.num_timesteps, note=f"~{eta:.0f} s left")

    checkpoint(0)
    with Progress("training", total, unit="steps", every=60) as bar:
        model.learn(total_timesteps=total, callback=Checkpoints(bar), tb_log_name="ppo")
    export_policy(model, out / "final.npz", {**meta, "steps": model.num_timesteps,
                                              "seconds": round(time.time() - start)})
    if evaluations.curve.rows[-1]["steps"] < model.num_timesteps:
        checkpoint(model.num_timesteps)
    seconds = time.time() - start
    best = evaluations.best
    common.write_run(out, {**meta, "seed": cfg.seed, "steps": int(model.num_timesteps), "wall_seconds": round(seconds),
                           "best": best, "torch_threads": cfg.threads})
    log(f"done in {seconds:.0f} s; best mean win rate {100 * best['mean']:.1f}% at step {best.get('steps')}; "
        f"policy: {out / 'policy.npz'}")
    log.close()
    return out / "policy.npz"


def add_options(parser: argparse.ArgumentParser, config_class=None, games=None) -> argparse.ArgumentParser:
    """The options of ``config_class`` (default TrainConfig) as ``parser``'s arguments; the game is positional, one
    of ``games`` (default the SB3 path's). ``cardzoo train`` builds its sb3 and rllib options with it."""
    return common.add_options(parser, config_class or TrainConfig, games or GAMES)


def config(args: argparse.Namespace, config_class=None):
    """The config (default TrainConfig) of parsed options; ValueError if they conflict."""
    return common.config(args, config_class or TrainConfig)


def parse_args(argv: list[str]) -> TrainConfig:
    return common.parse_args(TrainConfig, argv, "cardzoo train", __doc__.splitlines()[0], GAMES)


def main(argv: list[str] | None = None) -> Path:
    return common.main(parse_args, train, argv, "cardzoo train")


if __name__ == "__main__":
    main()
