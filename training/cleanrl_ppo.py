"""PPO on a cardzoo game in one file, CleanRL style: ``python -m cardzoo.training.cleanrl_ppo --game rope_team``.

Reads top to bottom: options, environments, agent, then the loop (rollout, advantages, PPO update, log). Needs
only torch beside cardzoo.

* Masked logits: illegal actions get a logit of -1e9, so they are never sampled and carry no probability in the
  loss (a large finite number rather than -inf keeps the entropy finite).
* Parameter sharing: in Rope Team one network plays both seats. The env is the shared-policy view
  (``cardzoo.training.gym_envs``): each step is the decision of whichever seat is to move, made from that seat's
  own observation, and the team's reward is credited to the decision that earned it. Summit Rush is played the
  same way, one seat's decision at a time within a tick; in Rook the network plays one seat against ``opponent``.
* Throughput: every iteration prints SPS, environment steps (decisions) per second of wall time including the
  updates, as CleanRL does; the run ends with a summary line and returns it as a dict.
"""

from __future__ import annotations

import argparse
import inspect
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields

import numpy as np
import torch
from torch import nn
from torch.distributions import Categorical

from cardzoo.envs.registry import spec
from cardzoo.training.gym_envs import make_view


@dataclass
class Args:
    game: str = "rope_team"  # rope_team, summit_rush or rook
    level: str = "normal"  # the game's level (rope_team, summit_rush); ignored for rook
    opponent: str = "heuristic"  # rook only: the agent the network plays against
    seed: int = 1  # seeds torch, numpy and the deals
    total_timesteps: int = 100_000  # environment steps (decisions) in all
    num_envs: int = 8  # environments stepped together
    num_steps: int = 128  # steps per environment per rollout
    learning_rate: float = 2.5e-4  # Adam step size (annealed linearly to 0)
    gamma: float = 1.0  # discount: games are short and only the outcome counts
    gae_lambda: float = 0.95  # GAE lambda
    num_minibatches: int = 4  # minibatches per epoch
    update_epochs: int = 4  # passes over each rollout
    clip_coef: float = 0.2  # PPO clip
    ent_coef: float = 0.01  # entropy bonus
    vf_coef: float = 0.5  # value loss weight
    max_grad_norm: float = 0.5  # gradient clipping
    hidden: int = 128  # width of the two hidden layers of the actor and of the critic
    threads: int = 1  # torch CPU threads


# ----------------------------------------------------------------------------- agent
def layer(n_in: int, n_out: int, std: float = np.sqrt(2)) -> nn.Linear:
    linear = nn.Linear(n_in, n_out)
    nn.init.orthogonal_(linear.weight, std)
    nn.init.zeros_(linear.bias)
    return linear


class Agent(nn.Module):
    """Actor and critic MLPs with tanh, ``hidden`` wide (two layers) or of the given sizes; the actor's last layer
    gives the action logits (the form cardzoo's numpy policy files hold)."""

    def __init__(self, n_obs: int, n_actions: int, hidden: int | Sequence[int]):
        super().__init__()
        sizes = [n_obs, *((hidden, hidden) if isinstance(hidden, int) else hidden)]

        def body() -> list[nn.Module]:
            return [m for a, b in zip(sizes, sizes[1:], strict=False) for m in (layer(a, b), nn.Tanh())]

        self.critic = nn.Sequential(*body(), layer(sizes[-1], 1, std=1.0))
        self.actor = nn.Sequential(*body(), layer(sizes[-1], n_actions, std=0.01))

    def get_value(self, x: torch.Tensor) -> torch.Tensor:
        return self.critic(x)

    def get_action_and_value(self, x: torch.Tensor, mask: torch.Tensor, action: torch.Tensor | None = None):
        logits = self.actor(x).masked_fill(~mask, -1e9)
        dist = Categorical(logits=logits)
        if action is None:
            action = dist.sample()
        return action, dist.log_prob(action), dist.entropy(), self.critic(x)


# ----------------------------------------------------------------------------- training
def train(args: Args) -> dict:
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    # single Rook rounds; Summit Rush without its message channel, as cardzoo's own training plays it
    game = spec(args.game)
    options = dict(game.train_options) if not game.levels else {"level": args.level}
    if game.talk:
        options["talk"] = False
    envs = [make_view(args.game, seed=args.seed * 1000 + i, opponent=args.opponent, **options)
            for i in range(args.num_envs)]
    n_obs, n_actions = envs[0].observation_space.shape[0], int(envs[0].action_space.n)
    agent = Agent(n_obs, n_actions, args.hidden)
    optimizer = torch.optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)
    batch_size = args.num_envs * args.num_steps
    minibatch_size = batch_size // args.num_minibatches
    num_iterations = max(1, args.total_timesteps // batch_size)

    # rollout storage, one row per step, one column per env
    obs = torch.zeros((args.num_steps, args.num_envs, n_obs))
    masks = torch.zeros((args.num_steps, args.num_envs, n_actions), dtype=torch.bool)
    actions = torch.zeros((args.num_steps, args.num_envs), dtype=torch.long)
    logprobs = torch.zeros((args.num_steps, args.num_envs))
    rewards = torch.zeros((args.num_steps, args.num_envs))
    dones = torch.zeros((args.num_steps, args.num_envs))
    values = torch.zeros((args.num_steps, args.num_envs))

    next_obs = torch.tensor(np.stack([env.reset()[0] for env in envs]), dtype=torch.float32)
    next_mask = torch.tensor(np.stack([env.action_masks() for env in envs]))
    next_done = torch.zeros(args.num_envs)
    episode_return = np.zeros(args.num_envs)
    returns_done: list[float] = []
    global_step, start = 0, time.time()
    for iteration in range(1, num_iterations + 1):
        optimizer.param_groups[0]["lr"] = (1.0 - (iteration - 1.0) / num_iterations) * args.learning_rate

        for step in range(args.num_steps):
            global_step += args.num_envs
            obs[step], masks[step], dones[step] = next_obs, next_mask, next_done
            with torch.no_grad():
                action, logprob, _, value = agent.get_action_and_value(next_obs, next_mask)
            actions[step], logprobs[step], values[step] = action, logprob, value.flatten()
            stepped = []
            for i, env in enumerate(envs):
                o, reward, terminated, truncated, _ = env.step(int(action[i]))
                rewards[step, i] = reward
                episode_return[i] += reward
                done = terminated or truncated
                if done:
                    returns_done.append(episode_return[i])
                    episode_return[i] = 0.0
                    o, _ = env.reset()
                stepped.append((o, env.action_masks(), done))
            next_obs = torch.tensor(np.stack([s[0] for s in stepped]), dtype=torch.float32)
            next_mask = torch.tensor(np.stack([s[1] for s in stepped]))
            next_done = torch.tensor([float(s[2]) for s in stepped])

        # generalised advantage estimation, bootstrapped from the value of the observation after the rollout
        with torch.no_grad():
            next_value = agent.get_value(next_obs).flatten()
            advantages = torch.zeros_like(rewards)
            last = torch.zeros(args.num_envs)
            for t in reversed(range(args.num_steps)):
                nonterminal = 1.0 - (next_done if t == args.num_steps - 1 else dones[t + 1])
                following = next_value if t == args.num_steps - 1 else values[t + 1]
                delta = rewards[t] + args.gamma * following * nonterminal - values[t]
                advantages[t] = last = delta + args.gamma * args.gae_lambda * nonterminal * last
            returns = advantages + values

        # PPO update on the flattened rollout
        b_obs, b_masks = obs.reshape(-1, n_obs), masks.reshape(-1, n_actions)
        b_actions, b_logprobs = actions.reshape(-1), logprobs.reshape(-1)
        b_advantages, b_returns = advantages.reshape(-1), returns.reshape(-1)
        for _ in range(args.update_epochs):
            order = torch.randperm(batch_size)
            for begin in range(0, batch_size, minibatch_size):
                mb = order[begin:begin + minibatch_size]
                _, newlogprob, entropy, newvalue = agent.get_action_and_value(b_obs[mb], b_masks[mb], b_actions[mb])
                ratio = (newlogprob - b_logprobs[mb]).exp()
                adv = b_advantages[mb]
                adv = (adv - adv.mean()) / (adv.std() + 1e-8)
                pg_loss = torch.max(-adv * ratio, -adv * ratio.clamp(1 - args.clip_coef, 1 + args.clip_coef)).mean()
                v_loss = 0.5 * ((newvalue.flatten() - b_returns[mb]) ** 2).mean()
                loss = pg_loss - args.ent_coef * entropy.mean() + args.vf_coef * v_loss
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
                optimizer.step()

        sps = global_step / (time.time() - start)
        recent = np.mean(returns_done[-100:]) if returns_done else float("nan")
        print(f"iteration {iteration}/{num_iterations}: steps {global_step}, loss {loss.item():.4f}, "
              f"episodes {len(returns_done)}, mean return (last 100) {recent:.3f}, SPS {sps:.0f}", flush=True)

    summary = {"game": args.game, "steps": global_step, "seconds": round(time.time() - start, 2),
               "sps": round(global_step / (time.time() - start), 1), "loss": loss.item(),
               "episodes": len(returns_done), "mean_return_last_100": float(recent)}
    print("summary:", summary)
    return summary


# ----------------------------------------------------------------------------- command line
def parse_args(argv: list[str] | None = None) -> Args:
    """One flag per option; its help is the option's comment above."""
    helps = {line.split(":")[0].strip(): line.split("#", 1)[1].strip()
             for line in inspect.getsource(Args).splitlines() if "  # " in line}
    parser = argparse.ArgumentParser(prog="python -m cardzoo.training.cleanrl_ppo", description=__doc__.split("\n")[0])
    for f in fields(Args):
        parser.add_argument("--" + f.name.replace("_", "-"), type=type(f.default), default=f.default,
                            help=f"{helps[f.name]} (default: {f.default})")
    return Args(**vars(parser.parse_args(argv)))


if __name__ == "__main__":
    args = parse_args()
    print("options:", asdict(args))
    train(args)
