"""PPO on a batched engine, CleanRL style: ``cardzoo train rope_team|summit_rush|rook --backend batched``.

Read top to bottom: options, the engines, the agent, evaluation, then the loop (rollout, advantages, PPO update,
checkpoint). No stable-baselines3 and no Gymnasium views: the rollout reads whole arrays of observations and masks
from the batched engines (``cardzoo.envs.batched``) and sends back an array of actions, one per game.

* Self-play with parameter sharing: one network plays every seat. Each engine step is the decision of the seat to
  move in every game, from that seat's own observation, as ``SharedPolicyEnv`` feeds SB3; the team's reward is
  credited to the decision that earned it, and a game slot's decisions form one trajectory (both seats in turn).
* The network is ``cardzoo.training.cleanrl_ppo``'s ``Agent``: separate actor and critic MLPs (tanh). Illegal
  actions' logits are pushed to -1e9, as ``Agent`` does, so they are never sampled and carry no probability in the
  loss; the masked distribution is computed here with cheaper tensor operations than ``Agent``'s ``Categorical``
  (``masked_log_softmax``, ``entropy``, ``sample``; the same numbers and gradients, tested).
* Warm start (``--imitate simple``): behaviour cloning of the actor and regression of the critic on the clone's
  returns, on train.py's imitation data, before PPO.
* Levels are mixed by running one engine per level, ``num_envs / len(levels)`` games each.
* Summit Rush (silent games, as the SB3 path's default; one policy per level, Normal unless ``--levels``) runs on
  ``make_batched("summit_rush_v0")``, the tick form ``TickEnv`` gives SB3: the seats of a tick decide one after the
  other from the observation at the tick's start, and the tick is played with the last seat's decision.
* Rook for Two (two sides, single rounds as the SB3 path trains it) runs against an opponent pool -- its own
  snapshots (one per checkpoint), the heuristic, random play -- in a random seat each game, as the SB3 path's
  ``VersusEnv`` does: ``cardzoo.training.versus_batched`` (the opponents' steps are transparent to the learner's
  trajectory; the update reads the learner's decisions only). It is evaluated as the SB3 path evaluates it
  (``train.evaluate``: single rounds won against the heuristic, seats alternating).
* Evaluation is train.py's: the greedy policy (``LearnedAgent``'s choice) on the held-out deals
  ``EVAL_BASE_SEED + i``, played here by the batched engine, which plays exactly the single env's games.
* Speed (what is done to make a decision cheap; none of it changes what is learned): rollouts under
  ``torch.inference_mode``; the rollout storage allocated once, the engine's int8 observations and masks copied
  straight into it as float32; the mask kept as 1.0/0.0 and applied by adding -1e9 (``masked_fill`` is ~6x slower on
  CPU); log-softmax once per forward, entropy from it with illegal entries zeroed before ``exp`` (torch's CPU
  ``exp`` takes a 100x slower path on -1e9); sampling by the Gumbel-max trick instead of ``Categorical`` (its
  argument checks, ``logsumexp`` and ``multinomial`` cost ~5 us a decision in rollouts, the sampling here ~1 us);
  ``index_select`` for minibatches (~2.5x faster than fancy indexing); fused Adam and ``foreach`` gradient clipping.
  Back to back, this loop was faster than its previous version (the speed page of the docs). Tried and dropped: the
  actor's and critic's first layers as one matrix product of twice the width (slower: the concatenation and the
  split's backward cost more than the larger product saves), and the first layer as a sum of weight rows over the
  ~38 of 464 observation entries that are 1 (``embedding_bag``: finding the entries costs ~1.4 us a decision, as
  much as it saves; its backward is much slower than the dense one).
* Profile (``python -m cardzoo.evaluation.benchmarks.batched trainer``, ``evaluation/results/batched/trainer.json``:
  Rope Team, the defaults, one torch thread), CPU microseconds per decision of each part of the update and of the
  rollouts, and of the network's matrix products timed apart: they take most of the update, which is the bound,
  whatever the engine. Each run's ``run.json`` holds its own profile.
* Output (``--out``): ``policy.npz`` (best by evaluation), ``final.npz``, ``checkpoints/``, ``curve.csv``,
  ``curve.png``, ``run.json`` (options, command, steps, wall time, env steps per second, profile) -- the SB3 path's
  files, and the same numpy policy format (``cardzoo.training.export``), which ``LearnedAgent`` plays without torch.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn

from cardzoo.agents.learned import NumpyPolicy
from cardzoo.envs.batched import make_batched
from cardzoo.envs.common.progress import Progress
from cardzoo.envs.common.seeding import refuse_benchmark_stream
from cardzoo.envs.registry import batched

from . import common
from .cleanrl_ppo import Agent
from .common import Evaluations, RunLog, held_out, option, whole_rollouts
from .export import export_layers

# the games with a batched engine (their env id, default levels and win outcome are in the registry)
GAMES = {game.name: game for game in batched()}


@dataclass
class BatchedConfig:
    """The options of a run; each is a flag of ``cardzoo train GAME --backend batched``."""

    game: str = option("rope_team", "the game (one with a batched engine)")
    levels: tuple[str, ...] = option((), "levels mixed in training, one policy for all (default: every level)")
    steps: int = option(10_000_000, "decisions to train on, rounded up to whole rollouts of num_envs * num_steps",
                        low=1)
    minutes: float = option(0.0, "also stop after this much wall time, at the end of a rollout (0: no limit)", low=0)
    seed: int = option(0, "seeds torch, the sampling and the deals", low=0)
    hidden: tuple[int, ...] = option((128, 128), "hidden layer sizes of the actor and of the critic", low=1)
    learning_rate: float = option(3e-4, "Adam step size", low=0)
    num_envs: int = option(1024, "games stepped together, split evenly over the levels", low=1)
    num_steps: int = option(32, "decisions per game slot per rollout", low=1)
    minibatch_size: int = option(2048, "decisions per gradient step", low=2)
    update_epochs: int = option(4, "passes over each rollout", low=1)
    gamma: float = option(1.0, "discount: games are short and only the outcome counts", low=0)
    gae_lambda: float = option(0.95, "GAE lambda", low=0)
    clip_coef: float = option(0.2, "PPO clip", low=0)
    ent_coef: float = option(0.01, "entropy bonus", low=0)
    vf_coef: float = option(0.5, "value loss weight", low=0)
    max_grad_norm: float = option(0.5, "gradient clipping", low=0)
    shaping: float = option(0.0, "Rope Team: reward per ridge card uncovered (0 = the game's reward)")
    features: str | None = option(None, "extra inputs computed from the observation (a name in "
                                        "cardzoo.agents.features), or none")
    imitate: str | None = option(None, "warm start: clone this agent's self-play first (e.g. simple), or none")
    imitate_games: int = option(8_000, "games of the cloned agent's self-play", low=1)
    imitate_epochs: int = option(4, "passes over them", low=1)
    init: str | None = option(None, "fine-tune: start the actor from this policy (a shipped policy's name or a .npz "
                                    "path; same inputs and sizes), instead of --imitate, or none")
    critic_warmup: int = option(0, "rollouts at the start that train only the critic (with --init: the critic "
                                   "starts fresh, and its first advantages would be noise)", low=0)
    partner_share: float = option(0.0, "Rope Team: share of the games where the learner's partner is the simple "
                                       "strategy (cardzoo.training.partners_batched); 0: self-play only", low=0)
    otherplay: bool = option(False, "other-play: each seat sees every game through a random symmetry of the game "
                                    "(cardzoo.training.otherplay)")
    eval_games: int = option(500, "games per level at each evaluation", low=1)
    eval_every: int = option(1_000_000, "decisions between evaluations (and checkpoints)", low=1)
    out: str = option("", "output folder (default: runs/GAME_batched)")
    threads: int = option(2, "torch CPU threads", low=1)

    # Summit Rush is trained silent, as the SB3 path's default; train.py's imitation data reads this
    talk = False

    def __post_init__(self):
        if self.game not in GAMES:
            raise ValueError(f"no batched engine for {self.game!r}; games: {', '.join(GAMES)}")
        if self.shaping and "shaping" not in GAMES[self.game].options:
            raise ValueError(f"shaping is a Rope Team option; {self.game} has none")
        self.levels = tuple(self.levels) or GAMES[self.game].train_levels or GAMES[self.game].levels
        if self.num_envs < len(self.levels):
            raise ValueError(f"num_envs {self.num_envs} is fewer than the {len(self.levels)} levels")
        self.out = self.out or f"runs/{self.game}_batched"
        if self.init and self.imitate:
            raise ValueError("--init and --imitate both set the starting actor: give one (--imitate none)")
        if self.partner_share and (self.features != "rope_team_scores" or self.partner_share > 1 or self.otherplay):
            raise ValueError("--partner-share needs --features rope_team_scores (Rope Team's), is at most 1, and "
                             "goes without --otherplay")
        if self.otherplay and GAMES[self.game].symmetries is None:
            raise ValueError(f"--otherplay needs the game's symmetries; {self.game} declares none")


# ----------------------------------------------------------------------------- engines and inputs
class Engines:
    """One batched engine per level, stepped together as one batch of ``num_envs`` games."""

    def __init__(self, cfg: BatchedConfig, games: int, first_seed: int):
        game = GAMES[cfg.game]
        env = game.env_id
        options = {"shaping": cfg.shaping} if "shaping" in game.options else {"talk": cfg.talk} if game.talk else {}
        share = [games // len(cfg.levels) + (i < games % len(cfg.levels)) for i in range(len(cfg.levels))]
        # a game without levels (Rook) trains on its train_options (Rook: single rounds) under one "level" name
        self.engines = [make_batched(env, k, **({"level": level} if game.levels else dict(game.train_options)),
                                     **options) for level, k in zip(cfg.levels, share, strict=True)]
        # disjoint seed streams: level i's games are first_seed + i * 2**40 + 0, 1, 2, ...
        self.first_seeds = [first_seed + i * 2**40 for i in range(len(self.engines))]
        for first in self.first_seeds:
            refuse_benchmark_stream(first, f"the batched trainer's stream of {cfg.game} games")
        # -2: no outcome code is a win (Rook's games are won on the totals: VersusEngines.wins)
        self.win = [e.outcomes.index(game.win) if game.win else -2 for e in self.engines]
        self.features = None
        if cfg.features:
            from cardzoo.agents.batched_features import batched

            self.features = batched(cfg.features)

    def _joined(self, parts) -> tuple[np.ndarray, ...]:
        return tuple(np.concatenate(arrays) for arrays in zip(*parts, strict=True))

    def reset(self):
        return self._joined(e.reset(seeds=s) for e, s in zip(self.engines, self.first_seeds, strict=True))

    def step(self, actions: np.ndarray):
        cuts = np.cumsum([e.num_envs for e in self.engines])[:-1]
        return self._joined(e.step(a) for e, a in zip(self.engines, np.split(actions, cuts), strict=True))

    def wins(self, done: np.ndarray) -> np.ndarray:
        """bool[N]: which of the games that just ended were won."""
        outcome = np.concatenate([e.outcome for e in self.engines])
        win = np.concatenate([np.full(e.num_envs, w) for e, w in zip(self.engines, self.win, strict=True)])
        return done & (outcome == win)

    def inputs(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """What the network reads: the observations, or the features of every (observation, mask) row, computed in
        array operations (``cardzoo.agents.batched_features``, equal to the scalar features row for row)."""
        return obs if self.features is None else self.features(obs, mask)


# ----------------------------------------------------------------------------- evaluation
def greedy(policy: NumpyPolicy, inputs: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """LearnedAgent's choice in every row: the legal action of highest logit, from the policy file's weights.
    (The matrix products run in torch, whose thread count the run sets: numpy's BLAS threads would spin against
    other jobs on a shared machine.)"""
    x = torch.as_tensor(inputs, dtype=torch.float32)
    activation = torch.tanh if policy.meta["activation"] == "tanh" else torch.relu
    for w, b in policy.weights:
        x = activation(x @ torch.as_tensor(w) + torch.as_tensor(b))
    w, b = policy.action
    logits = (x @ torch.as_tensor(w) + torch.as_tensor(b)).masked_fill(~torch.as_tensor(mask.astype(bool)), -np.inf)
    return logits.argmax(1).numpy()


def evaluate(policy_path: Path, cfg: BatchedConfig, games: int) -> dict[str, float]:
    """Win rate per level with the policy in every seat, on train.py's held-out deals ``EVAL_BASE_SEED + i``; a
    two-sided game (Rook) as the SB3 path evaluates it, against the heuristic."""
    if not GAMES[cfg.game].cooperative:
        from .train import evaluate as versus_evaluate

        return versus_evaluate(policy_path, cfg, games)
    policy = NumpyPolicy(policy_path)

    def rate(level: str, seeds: list[int]) -> float:
        one = BatchedConfig(**{**asdict(cfg), "levels": (level,), "features": cfg.features})
        engines = Engines(one, len(seeds), seeds[0])  # slot i plays seed seeds[0] + i first
        obs, mask, _ = engines.reset()
        playing, won = np.ones(len(seeds), bool), np.zeros(len(seeds), bool)
        while playing.any():  # every slot plays its first game to the end; later games are ignored
            obs, mask, _, _, done = engines.step(greedy(policy, engines.inputs(obs, mask), mask))
            won |= playing & engines.wins(done)
            playing &= ~done
        return float(won.mean())

    return held_out(cfg.levels, games, rate)


def warm_start(agent: Agent, cfg: BatchedConfig, log) -> None:
    """Behaviour cloning (cross-entropy on masked logits) and critic regression on the clone's returns."""
    from .train import imitation_data

    obs, masks, actions, returns = imitation_data(cfg)
    log(f"imitation: {len(actions):,} decisions of {cfg.imitate!r} self-play")
    optimizer = torch.optim.Adam(agent.parameters(), lr=1e-3)
    for epoch in range(cfg.imitate_epochs):
        order = np.random.default_rng([cfg.seed, epoch]).permutation(len(actions))
        total = agreed = 0.0
        for begin in range(0, len(order), 1024):
            mb = order[begin : begin + 1024]
            x, m, a = (torch.as_tensor(v) for v in (obs[mb].astype(np.float32), masks[mb], actions[mb]))
            _, logprob, _, value = agent.get_action_and_value(x, m, a)
            loss = -logprob.mean() + 0.5 * ((value.squeeze(1) - torch.as_tensor(returns[mb])) ** 2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item() * len(mb)
            with torch.no_grad():
                agreed += int((agent.actor(x).masked_fill(~m, -np.inf).argmax(1) == a).sum())
        log(f"imitation epoch {epoch + 1}/{cfg.imitate_epochs}: loss {total / len(order):.4f}, agrees with "
            f"{cfg.imitate!r} on {100 * agreed / len(order):.1f}% of decisions")


def load_actor(agent: Agent, init: str, features: str | None) -> None:
    """Copy the actor of the policy ``init`` (a shipped name or a path) into ``agent``'s actor."""
    from cardzoo.agents.learned import shipped_policy

    policy = NumpyPolicy(Path(init) if init.endswith(".npz") else shipped_policy(init))
    if policy.meta.get("features") != features:
        raise ValueError(f"--init {init} reads features {policy.meta.get('features')!r}, the run {features!r}")
    layers = [m for m in agent.actor if isinstance(m, nn.Linear)]
    arrays = [*policy.weights, policy.action]
    if [tuple(layer.weight.shape) for layer in layers] != [tuple(w.T.shape) for w, _ in arrays]:
        raise ValueError(f"--init {init} has layers {[w.shape for w, _ in arrays]}; the run's actor "
                         f"{[tuple(layer.weight.T.shape) for layer in layers]} (set --hidden to match)")
    with torch.no_grad():
        for layer, (w, b) in zip(layers, arrays, strict=True):
            layer.weight.copy_(torch.from_numpy(np.ascontiguousarray(w.T)))
            layer.bias.copy_(torch.from_numpy(b))


def export(agent: Agent, path: Path, meta: dict) -> Path:
    return export_layers(agent.actor[:-1], agent.actor[-1], path, meta)


# ----------------------------------------------------------------------------- the masked distribution
def masked_log_softmax(logits: torch.Tensor, legal: torch.Tensor) -> torch.Tensor:
    """Log-probabilities with illegal actions' logits at -1e9 (``legal`` is 1.0 or 0.0): as ``Agent`` masks them,
    by adding -1e9 (adding is ~6x faster than ``masked_fill`` on CPU; an illegal logit becomes -1e9 up to rounding,
    and its probability is exactly 0 either way)."""
    return (logits + (legal - 1.0) * 1e9).log_softmax(1)


def entropy(logp: torch.Tensor, legal: torch.Tensor) -> torch.Tensor:
    """The entropy of each row, over the legal actions (illegal ones have probability 0 and add exactly 0). The
    illegal log-probabilities (~-1e9) are zeroed before ``exp``: torch's CPU ``exp`` takes a slow path on such
    inputs, 100x slower than on ordinary ones."""
    legal_logp = logp * legal
    return -(legal_logp.exp() * legal_logp).sum(1)


def sample(logp: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """One action per row drawn from ``exp(logp)``, by the Gumbel-max trick (the argmax of the log-probabilities
    plus Gumbel noise): illegal actions (log-probability ~-1e9) are never drawn."""
    u = torch.rand(logp.shape, generator=generator).clamp_(min=1e-20)
    return (logp - (-u.log()).log()).argmax(1)


class Phases:
    """CPU seconds of this process spent per phase of the loop, for the profile a run writes to ``run.json`` (CPU
    time rather than wall time: on a shared machine the wall time of a phase counts other jobs' turns)."""

    def __init__(self):
        self.seconds: dict[str, float] = {}
        self._tick = time.process_time()

    def start(self) -> None:
        self._tick = time.process_time()

    def lap(self, phase: str) -> None:
        """Charge the CPU time since the last lap (or ``start``) to ``phase``."""
        now = time.process_time()
        self.seconds[phase] = self.seconds.get(phase, 0.0) + now - self._tick
        self._tick = now


# ----------------------------------------------------------------------------- training
def train(cfg: BatchedConfig, command: str = "") -> Path:
    out = Path(cfg.out)
    log = RunLog(out)

    torch.set_num_threads(cfg.threads)
    torch.manual_seed(cfg.seed)
    sampling = torch.Generator().manual_seed(cfg.seed)
    start = time.time()
    engines = Engines(cfg, cfg.num_envs, cfg.seed * 2**45)
    versus = not GAMES[cfg.game].cooperative
    if cfg.otherplay:
        from .otherplay import OtherPlay

        engines = OtherPlay(engines, cfg.game, cfg.seed)
    if cfg.partner_share:
        from .partners_batched import PartnerEngines

        engines = PartnerEngines(engines, cfg.partner_share, cfg.seed)
    # steps some other agent decides (an opponent's, a fixed partner's): not learned from (``learner`` rows)
    mixed = versus or bool(cfg.partner_share)
    if versus:  # the learner against the opponent pool
        from .versus_batched import VersusEngines, versus_advantages

        engines = VersusEngines(engines, cfg.seed, GAMES[cfg.game].reward_scale, greedy)
    n, t_len = cfg.num_envs, cfg.num_steps
    batch = n * t_len
    total = whole_rollouts(cfg, cfg.steps)
    obs, mask, seat = engines.reset()
    n_inputs, n_actions = engines.inputs(obs, mask).shape[1], mask.shape[1]
    agent = Agent(n_inputs, n_actions, cfg.hidden)
    optimizer = torch.optim.Adam(agent.parameters(), lr=cfg.learning_rate, eps=1e-5, fused=True)
    if cfg.imitate:
        warm_start(agent, cfg, log)
    if cfg.init:
        load_actor(agent, cfg.init, cfg.features)
        log(f"actor from {cfg.init}")
    meta = {"env": GAMES[cfg.game].env_id, "config": asdict(cfg), "command": command, "features": cfg.features,
            "trainer": "cardzoo.training.ppo_batched"}
    log(f"{cfg.game} on levels {', '.join(cfg.levels)}: {n} games, rollouts of {batch:,} decisions, "
        f"{total:,} decisions" + (f" or {cfg.minutes} minutes" if cfg.minutes else ""))

    # rollout storage, allocated once: one row per step, one column per game slot. Row t of b_inputs/b_legal is
    # written straight from the engine's arrays (int8 -> float32 in the copy) after step t - 1.
    b_inputs = torch.zeros((t_len, n, n_inputs))
    b_legal = torch.zeros((t_len, n, n_actions))  # 1.0 for a legal action, 0.0 for an illegal one
    b_actions = torch.zeros((t_len, n), dtype=torch.long)
    b_logprobs, b_rewards, b_dones, b_values = (torch.zeros((t_len, n)) for _ in range(4))
    b_learner = torch.ones((t_len, n), dtype=torch.bool)  # the learner's decisions (every one but an opponent's)
    next_inputs, next_legal, next_done = torch.zeros((n, n_inputs)), torch.zeros((n, n_actions)), torch.zeros(n)
    next_inputs.copy_(torch.from_numpy(engines.inputs(obs, mask)))
    next_legal.copy_(torch.from_numpy(mask))
    slots, deciding = np.arange(n), seat

    evaluations = Evaluations(out, log)
    steps, next_eval, games, won, rollouts = 0, 0, 0, 0, 0
    learn_seconds = learn_cpu = 0.0  # time in rollouts and updates (no evaluation)
    phases = Phases()

    def checkpoint() -> None:
        path = export(agent, out / "checkpoints" / f"step_{steps}.npz",
                      {**meta, "steps": steps, "seconds": round(time.time() - start)})
        rates = evaluate(path, cfg, cfg.eval_games)
        if versus:
            engines.pool.append(path)
        evaluations.add(rates, row={"steps": steps, "seconds": round(time.time() - start)}, where={"steps": steps},
                        heading=f"step {steps:,}", copies={path: "policy.npz"})

    bar = Progress("training", total, unit="decisions", every=60)
    while steps < total and not (cfg.minutes and time.time() - start > 60 * cfg.minutes):
        if steps >= next_eval:
            phases.start()
            checkpoint()
            phases.lap("evaluation")
            next_eval += cfg.eval_every
        tick_learn, tick_cpu = time.perf_counter(), time.process_time()
        phases.start()
        b_inputs[0], b_legal[0] = next_inputs, next_legal
        with torch.inference_mode():
            for t in range(t_len):
                b_dones[t] = next_done
                logits, b_values[t] = agent.actor(b_inputs[t]), agent.critic(b_inputs[t]).squeeze(1)
                phases.lap("rollout forward")
                logp = masked_log_softmax(logits, b_legal[t])
                action = sample(logp, sampling)
                b_actions[t], b_logprobs[t] = action, logp.gather(1, action[:, None]).squeeze(1)
                if mixed:
                    b_learner[t] = torch.from_numpy(engines.learner)
                phases.lap("sampling")
                obs, mask, seat, rewards, done = engines.step(action.numpy())
                phases.lap("engine step")
                # the reward of the seat that decided; in a cooperative game every seat's is the team's
                b_rewards[t] = torch.from_numpy(rewards[slots, deciding])
                deciding = seat
                inputs, legal = (b_inputs[t + 1], b_legal[t + 1]) if t + 1 < t_len else (next_inputs, next_legal)
                inputs.copy_(torch.from_numpy(engines.inputs(obs, mask)))
                legal.copy_(torch.from_numpy(mask))
                next_done.copy_(torch.from_numpy(done))
                games += int(done.sum())
                won += int(engines.wins(done).sum())
                phases.lap("observation and mask to tensors")
        steps += int(b_learner.sum()) if mixed else batch  # the learner's decisions (the SB3 path's count)
        rollouts += 1

        # generalised advantage estimation, bootstrapped from the value after the rollout
        with torch.inference_mode():
            next_value = agent.critic(next_inputs).squeeze(1)
            advantages = torch.zeros_like(b_rewards)
            last = torch.zeros(n)
            for t in reversed(range(t_len)):
                nonterminal = 1.0 - (next_done if t == t_len - 1 else b_dones[t + 1])
                following = next_value if t == t_len - 1 else b_values[t + 1]
                delta = b_rewards[t] + cfg.gamma * following * nonterminal - b_values[t]
                advantages[t] = last = delta + cfg.gamma * cfg.gae_lambda * nonterminal * last
            if mixed:  # over the learner's decisions only, bootstrapped from its own view of each game
                from .versus_batched import versus_advantages

                next_value = agent.critic(torch.from_numpy(engines.learner_inputs()).float()).squeeze(1)
                advantages = versus_advantages(b_rewards, b_values, b_dones, b_learner, next_value, next_done,
                                               cfg.gamma, cfg.gae_lambda)
            returns = advantages + b_values
        advantages, returns = advantages.clone(), returns.clone()  # out of inference mode, for the update
        phases.lap("advantages")

        # PPO update on the flattened rollout
        f_inputs, f_legal = b_inputs.reshape(batch, n_inputs), b_legal.reshape(batch, n_actions)
        f_actions, f_logprobs = b_actions.reshape(-1), b_logprobs.reshape(-1)
        f_advantages, f_returns = advantages.reshape(-1), returns.reshape(-1)
        rows = torch.nonzero(b_learner.reshape(-1)).squeeze(1)  # the decisions learned from (all but opponents')
        for _ in range(cfg.update_epochs):
            order = rows[torch.randperm(len(rows))]
            for begin in range(0, len(rows), cfg.minibatch_size):
                mb = order[begin : begin + cfg.minibatch_size]
                if len(mb) < 2:  # a lone decision left over (Rook's learner rows vary): no advantage spread to take
                    continue
                x, legal = f_inputs.index_select(0, mb), f_legal.index_select(0, mb)
                phases.lap("update minibatch gather")
                if rollouts <= cfg.critic_warmup:  # the actor stays as it is: no actor loss, no gradient
                    loss = cfg.vf_coef * 0.5 * ((agent.critic(x).squeeze(1) - f_returns[mb]) ** 2).mean()
                    optimizer.zero_grad()
                    loss.backward()
                    nn.utils.clip_grad_norm_(agent.parameters(), cfg.max_grad_norm, foreach=True)
                    optimizer.step()
                    continue
                logits, value = agent.actor(x), agent.critic(x).squeeze(1)
                logp = masked_log_softmax(logits, legal)
                logprob = logp.gather(1, f_actions[mb, None]).squeeze(1)
                ratio = (logprob - f_logprobs[mb]).exp()
                adv = f_advantages[mb]
                adv = (adv - adv.mean()) / (adv.std() + 1e-8)
                pg_loss = torch.max(-adv * ratio, -adv * ratio.clamp(1 - cfg.clip_coef, 1 + cfg.clip_coef)).mean()
                v_loss = 0.5 * ((value - f_returns[mb]) ** 2).mean()
                loss = pg_loss - cfg.ent_coef * entropy(logp, legal).mean() + cfg.vf_coef * v_loss
                phases.lap("update forward")
                optimizer.zero_grad()
                loss.backward()
                phases.lap("update backward")
                nn.utils.clip_grad_norm_(agent.parameters(), cfg.max_grad_norm, foreach=True)
                optimizer.step()
                phases.lap("optimizer")
        learn_seconds += time.perf_counter() - tick_learn
        learn_cpu += time.process_time() - tick_cpu
        bar.set(steps, note=f"{steps / learn_seconds:,.0f} decisions/s, training games won "
                            f"{100 * won / max(games, 1):.1f}%")
    bar.close()

    export(agent, out / "final.npz", {**meta, "steps": steps, "seconds": round(time.time() - start)})
    if evaluations.curve.rows[-1]["steps"] < steps:
        phases.start()
        checkpoint()
        phases.lap("evaluation")
    seconds = time.time() - start
    profile = {phase: {"cpu_seconds": round(s, 2), "us_per_decision": round(1e6 * s / steps, 2)}
               for phase, s in phases.seconds.items()}
    best = evaluations.best
    run = {**meta, "seed": cfg.seed, "steps": steps, "wall_seconds": round(seconds), "best": best,
           "env_steps_per_second": round(steps / seconds), "env_seconds": round(phases.seconds["engine step"], 1),
           "learn_seconds": round(learn_seconds, 1), "learn_cpu_seconds": round(learn_cpu, 1),
           "torch_threads": cfg.threads, "profile": profile}
    common.write_run(out, run)
    log(f"done in {seconds:.0f} s ({steps / seconds:,.0f} decisions/s); best mean win rate "
        f"{100 * best['mean']:.1f}% at step {best['steps']:,}; policy: {out / 'policy.npz'}")
    log.close()
    return out / "policy.npz"


# ----------------------------------------------------------------------------- command line
def add_options(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """BatchedConfig's fields as ``parser``'s arguments (``cardzoo train GAME --backend batched``)."""
    return common.add_options(parser, BatchedConfig, GAMES)


def config(args: argparse.Namespace) -> BatchedConfig:
    return common.config(args, BatchedConfig)


def parse_args(argv: list[str]) -> BatchedConfig:
    return common.parse_args(BatchedConfig, argv, "cardzoo train GAME --backend batched", __doc__.splitlines()[0],
                             GAMES)


def main(argv: list[str] | None = None) -> Path:
    return common.main(parse_args, train, argv, "cardzoo train --backend batched")


if __name__ == "__main__":
    main()
