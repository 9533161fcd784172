"""Distil the search agent into a numpy MLP policy by DAgger: ``cardzoo train rope_team --backend distil``.

Read top to bottom: options, labelling (games played, every decision of every seat labelled by the teacher),
fitting (cross-entropy on masked logits), evaluation on held-out deals, the DAgger loop. Rope Team (all levels,
one policy) and Summit Rush (one level per run, silent games).

DAgger (Ross et al., 2011) with the game's search agent (:mod:`cardzoo.agents.rope_team_search`,
:mod:`cardzoo.agents.summit_rush_search`) as the teacher:

1. Round ``k`` plays ``games`` games (levels in turn). Each seat has its own teacher, a search agent fed that
   seat's observations in order (it is stateful within a game). At every decision the seat's teacher names its
   card from the seat's own observation and action mask -- the label; the card played is the teacher's with
   probability ``beta ** k`` and the current student's otherwise (round 0 is the teacher's own games), and the
   teacher is told the card that was played (``RopeTeamSearch.overrule``) so its memory of the deal stays true.
   Decisions with one legal card teach nothing and are left out. Summit Rush's search is a function of the
   current observation (each seat's part of the team's joint move), so there is no memory to correct.
2. The labelled decisions of all rounds so far are aggregated, and the student -- the shipped policy's MLP format:
   tanh hidden layers, action logits, the policy's input ``features`` -- is fitted to them by cross-entropy on the
   logits with the illegal actions masked out, from ``init`` (the shipped ``learned`` policy by default) each round.
3. The student is exported with the numpy exporter (:mod:`.export`) and evaluated (both seats, greedy) on held-out
   deals (seeds from ``EVAL_BASE_SEED``, not the report's); the best round's student is ``policy.npz``.

Labelling is the cost (the teacher searches at every decision, ~10-30 ms): it runs in ``workers`` processes, and
each round's labels are saved (``data/round_<k>.npz``: observation, feature extras, mask, label, the teacher's
blueprint action, the action played, game number, and each game's result) so that other fits can reuse them
(``--datasets``). Everything a run makes goes to ``--out``:
``policy.npz``, ``checkpoints/round_<k>.npz``, ``data/``, ``curve.csv``/``curve.png`` (held-out win rate per
round), ``run.json``, ``train.log``. Torch runs on CPU with ``threads`` threads.
"""

from __future__ import annotations

import argparse
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from cardzoo.envs.common.seeding import refuse_benchmark_seeds
from cardzoo.envs.registry import GAMES as REGISTRY

from . import common
from .common import Curve, Evaluations, RunLog, held_out, option, renamed_options

LABEL_BASE_SEED = 30_000_000  # labelling deals: not the report's (0..) nor the held-out evaluation's (10M..)


@renamed_options
@dataclass
class DistilConfig:
    """The options of a distillation run; each is a flag of ``cardzoo train GAME --backend distil``. The fit's
    settings have the names they have in every cardzoo trainer; the earlier ``epochs`` and ``batch_size`` still
    work, with a warning."""

    game: str = option("rope_team", "the game: rope_team or summit_rush (one level per Summit Rush run)")
    levels: tuple[str, ...] = option((), "levels labelled and evaluated, in turn (default: the game's levels)")
    rounds: int = option(3, "DAgger rounds (labelling, then fitting, then evaluation)", low=0)
    games: int = option(400, "games labelled per round (levels in turn; at most 10,000)", low=1)
    start_round: int = option(0, "the first round's number (its teacher share is beta ** start_round, its deals "
                                 "the round's own): a run continued from --datasets, its student fitted to them",
                              low=0)
    beta: float = option(0.5, "the teacher plays a decision with probability beta ** round (round 0: always)", low=0)
    teacher_worlds: int = option(0, "teacher search: worlds sampled per decision (0: the search agent's default, "
                                    "Rope Team 256, Summit Rush 32)", low=0)
    teacher_rollouts: int = option(0, "teacher search, Rope Team: games played out per decision (0: its default, "
                                      "384)", low=0)
    datasets: tuple[str, ...] = option((), "labelled data of earlier runs (data/round_<k>.npz) added to the "
                                           "aggregate before round 0")
    features: str | None = option("default", "the student's extra inputs (a name in cardzoo.agents.features) "
                                             "or none (default: the shipped policy's, rope_team_scores or "
                                             "summit_rush_simple)")
    hidden: tuple[int, ...] = option((128, 128), "hidden layer sizes (ignored with --init)", low=1)
    init: str | None = option("default", "fit from this policy (a shipped policy's name, as in "
                                         "cardzoo/agents/policies, or a .npz path) or none (fresh weights; default: "
                                         "the shipped PPO policy, rope_team or summit_rush_<level>; baseline: "
                                         "fresh weights wired to play the baseline's choice read from the features)")
    update_epochs: int = option(8, "passes over the aggregated data per fit", low=1, old=["epochs"])
    learning_rate: float = option(1e-3, "Adam step size", low=0)
    minibatch_size: int = option(512, "minibatch size", low=1, old=["batch_size"])
    eval_games: int = option(300, "held-out games per level after each round", low=1)
    workers: int = option(1, "processes for labelling and evaluation", low=1)
    seed: int = option(0, "seeds torch, numpy, the labelling deals and the students' mixing", low=0)
    out: str = option("", "output folder (default: runs/distil_GAME)")
    threads: int = option(1, "torch CPU threads", low=1)

    def __post_init__(self):
        if self.game not in GAMES:
            raise ValueError(f"distillation is implemented for {', '.join(GAMES)}; not {self.game!r}")
        game = GAMES[self.game]
        levels = game.policy_levels or game.levels
        if not self.levels:
            self.levels = levels[:1] if game.per_level_policy else levels
        unknown = sorted(set(self.levels) - set(levels))
        if unknown:
            raise ValueError(f"unknown level(s) {unknown} for {self.game}; levels: {', '.join(levels)}")
        if game.per_level_policy and len(self.levels) != 1:
            raise ValueError("summit_rush observations differ in length between levels: one level per run")
        if self.teacher_rollouts and self.game not in TEACHER_ROLLOUTS:
            raise ValueError(f"--teacher-rollouts is the Rope Team search's; {GAMES[self.game].title}'s plays every "
                             "world out")
        if self.features == "default":
            self.features = STUDENTS[self.game][0]
        if self.init == "default":
            self.init = STUDENTS[self.game][1].format(level=self.levels[0])
        if self.init == "baseline" and self.features is None:
            raise ValueError("--init baseline reads the baseline's choice from the features: give --features")
        if self.games > 10_000:
            raise ValueError(f"games={self.games}: at most 10,000 per round (each round has its own deals)")
        if self.start_round and not self.datasets:
            raise ValueError("--start-round continues a run: give its labelled --datasets")
        if self.beta > 1:
            raise ValueError(f"beta={self.beta} is a probability's base: it must be <= 1")
        if self.features is not None:
            from cardzoo.agents.features import FEATURES

            if self.features not in FEATURES:
                raise ValueError(f"unknown features {self.features!r}; known: {', '.join(FEATURES)}")
        if not self.out:
            self.out = f"runs/distil_{self.game}"


# The games distillation is written for, with the student's default features and starting policy (the trainer's
# choice); levels and env ids come from the game registry.
STUDENTS = {"rope_team": ("rope_team_scores", "rope_team"),
            "summit_rush": ("summit_rush_simple", "summit_rush_{level}")}
GAMES = {name: REGISTRY[name] for name in STUDENTS}
TEACHER_ROLLOUTS = {"rope_team"}  # the games whose search teacher takes a rollouts-per-world option


# ----------------------------------------------------------------------------- labelling
def _student(path: str | None):
    from cardzoo.agents.learned import NumpyPolicy

    return None if path is None else NumpyPolicy(path)


class _Recorder:
    """The labelled decisions of a labelling job, and the student that plays some of them."""

    def __init__(self, job: dict):
        from cardzoo.agents.features import FEATURES

        self.student = _student(job["student"])
        self.features = FEATURES[job["features"]][0] if job["features"] else None
        self.beta = job["beta"]
        self.mix = np.random.default_rng(job["mix_seed"])
        self.rows: dict[str, list] = {k: [] for k in ("obs", "extras", "masks", "labels", "blueprints", "played",
                                                       "games")}
        self.wins: list[bool] = []

    def decide(self, o: np.ndarray, m: np.ndarray, label: int, blueprint: int) -> int:
        """Record the teacher's ``label`` of the decision (observation ``o``, mask ``m``) and return the action
        played: the student's with probability ``1 - beta``, else the label."""
        x = self.features(o, m) if self.features else o
        action = label
        if self.student is not None and self.mix.random() >= self.beta:
            action = _greedy(self.student, x, m)
        for key, value in (("obs", o), ("extras", x[o.shape[0]:].astype(np.float32)), ("masks", m.astype(bool)),
                           ("labels", label), ("blueprints", blueprint), ("played", action),
                           ("games", len(self.wins))):
            self.rows[key].append(value)
        return action

    def arrays(self) -> dict[str, np.ndarray]:
        n = len(self.rows["labels"])
        kinds = {"obs": np.int8, "extras": np.float32, "masks": bool, "labels": np.int16, "blueprints": np.int16,
                 "played": np.int16, "games": np.int32}
        out = {k: np.array(v, kinds[k]) for k, v in self.rows.items()}
        for k in ("obs", "extras", "masks"):
            out[k] = out[k].reshape(n, -1)
        out["wins"] = np.array(self.wins, bool)
        return out


def label_games(job: dict) -> dict[str, np.ndarray]:
    """Play the games of ``job`` (game, levels, seeds, student policy file or None, beta, teacher options, features,
    mixing seed) and label every decision of every seat with that seat's teacher's action."""
    return LABELLERS[job.get("game", "rope_team")](job)


def _label_rope_team(job: dict) -> dict[str, np.ndarray]:
    from cardzoo.agents.loops import mask_array
    from cardzoo.agents.rope_team_search import RopeTeamSearch
    from cardzoo.agents.seeding import agent_seed
    from cardzoo.envs.rope_team import rules
    from cardzoo.envs.rope_team.observer import LAYOUT, observe_bits

    rec = _Recorder(job)
    teachers = [RopeTeamSearch(**job["teacher"]) for _ in range(2)]
    for level, seed in zip(job["levels"], job["seeds"], strict=True):
        s = rules.deal(rules.LEVELS[level], seed)
        for seat, teacher in enumerate(teachers):
            teacher.reset(seed=agent_seed(seed, seat))
        while s.outcome is None:
            seat = s.to_move
            bits, legal = observe_bits(s, seat), rules.legal_mask(s)
            label = teachers[seat].act_bits(bits, legal)  # the teacher reads this seat's observation only
            card = label
            if legal & (legal - 1):  # more than one legal card: a decision worth learning
                card = rec.decide(LAYOUT.to_array(bits), mask_array(legal), label, teachers[seat].last["blueprint"])
                if card != label:
                    teachers[seat].overrule(card)
            if not legal >> card & 1:
                raise RuntimeError(f"illegal card {card} in labelling game {seed} of {level}")
            rules.play(s, card)
        rec.wins.append(s.outcome == "win")
    return rec.arrays()


def _label_summit_rush(job: dict) -> dict[str, np.ndarray]:
    """Summit Rush: every tick each seat's teacher names its part of the team's joint move from that seat's
    observation (the search is a function of the current observation: nothing to overrule)."""
    from cardzoo.agents.loops import summit_rush_env
    from cardzoo.agents.seeding import agent_seed
    from cardzoo.agents.summit_rush_search import Public, SummitRushSearch, blueprint_joint

    rec = _Recorder(job)
    teachers = [SummitRushSearch(**job["teacher"]) for _ in range(2)]
    for level, seed in zip(job["levels"], job["seeds"], strict=True):
        env = summit_rush_env(level)
        obs, _ = env.reset(seed=seed)
        for seat, teacher in enumerate(teachers):
            teacher.reset(seed=agent_seed(seed, seat))
        info: dict = {}
        while env.agents:
            actions = {}
            for seat, name in enumerate(env.possible_agents):
                o, m = obs[name]["observation"], obs[name]["action_mask"]
                label = actions[name] = teachers[seat].act(o, m)
                if np.count_nonzero(m) > 1:
                    bits = int.from_bytes(np.packbits(o.view(np.uint8), bitorder="little").tobytes(), "little")
                    pub = Public(bits, o.shape[0], m.shape[0])
                    actions[name] = rec.decide(o, m, label, blueprint_joint(pub)[pub.table.seat])
            obs, _, _, _, infos = env.step(actions)  # the env raises on an illegal move
            info = infos[env.possible_agents[0]]
        rec.wins.append(info["outcome"] == "win")
    return rec.arrays()


LABELLERS = {"rope_team": _label_rope_team, "summit_rush": _label_summit_rush}  # one per game of STUDENTS


def _greedy(policy, x: np.ndarray, mask: np.ndarray) -> int:
    """The policy's most probable legal action given its inputs ``x`` (the features already computed)."""
    h = x.astype(np.float32)
    for w, b in policy.weights:
        h = policy.activation(h @ w + b)
    logits = h @ policy.action[0] + policy.action[1]
    return int(np.argmax(np.where(mask.astype(bool), logits, -np.inf)))


def label_round(cfg: DistilConfig, k: int, student: Path | None, log) -> dict[str, np.ndarray]:
    """Round ``k``'s games, labelled in ``workers`` processes, concatenated in game order."""
    seeds = [LABEL_BASE_SEED + cfg.seed * 1_000_000 + k * 10_000 + i for i in range(cfg.games)]
    refuse_benchmark_seeds(seeds[0], len(seeds), f"distillation round {k}")
    levels = [cfg.levels[i % len(cfg.levels)] for i in range(cfg.games)]
    teacher = {k: v for k, v in (("worlds", cfg.teacher_worlds), ("rollouts", cfg.teacher_rollouts)) if v}
    jobs = [{"game": cfg.game, "levels": levels[w::cfg.workers], "seeds": seeds[w::cfg.workers], "beta": cfg.beta ** k,
             "student": None if student is None else str(student), "teacher": teacher, "features": cfg.features,
             "mix_seed": [cfg.seed, k, w]} for w in range(cfg.workers)]
    jobs = [j for j in jobs if j["seeds"]]
    if len(jobs) == 1:
        parts = [label_games(jobs[0])]
    else:
        with ProcessPoolExecutor(len(jobs)) as pool:
            parts = list(pool.map(label_games, jobs))
    offset, games = 0, []
    for p in parts:  # game numbers unique across the workers' parts
        games.append(p["games"] + offset)
        offset += len(p["wins"])
    data = {key: np.concatenate([p[key] for p in parts]) for key in parts[0] if key != "games"}
    data["games"] = np.concatenate(games)
    log(f"round {k}: {len(data['labels'])} decisions labelled in {offset} games (teacher plays with probability "
        f"{cfg.beta ** k:.3f}; those games won {100 * data['wins'].mean():.1f}%; the teacher departs from its "
        f"blueprint on {100 * np.mean(data['labels'] != data['blueprints']):.1f}% of the decisions)")
    return data


# ----------------------------------------------------------------------------- fitting
def inputs(data: dict[str, np.ndarray], features: str | None) -> np.ndarray:
    """The student's inputs: the observation, then the feature extras when the student reads features."""
    obs = data["obs"].astype(np.float32)
    return np.concatenate([obs, data["extras"]], axis=1) if features else obs


def build_student(cfg: DistilConfig, n_in: int, n_actions: int):
    """A tanh MLP actor (hidden layers, action layer), from the ``init`` policy's weights or fresh."""
    import torch
    import torch.nn as nn

    if cfg.init in (None, "baseline"):
        sizes = [n_in, *cfg.hidden]
        hidden = [m for a, b in zip(sizes, sizes[1:], strict=False) for m in (nn.Linear(a, b), nn.Tanh())]
        action = nn.Linear(sizes[-1], n_actions)
        if cfg.init == "baseline":
            _wire_baseline(hidden[0::2], action, n_in, n_actions)
        return nn.Sequential(*hidden), action
    from cardzoo.agents.learned import NumpyPolicy

    policy = NumpyPolicy(_init_path(cfg.init))
    if policy.meta.get("activation") != "tanh" or policy.meta.get("features") != cfg.features:
        raise ValueError(f"--init {cfg.init} reads features {policy.meta.get('features')!r} with "
                         f"{policy.meta.get('activation')}; the student reads {cfg.features!r} with tanh")
    layers = []
    for w, b in policy.weights:
        lin = nn.Linear(*w.shape)
        with torch.no_grad():
            lin.weight.copy_(torch.as_tensor(w.T))
            lin.bias.copy_(torch.as_tensor(b))
        layers += [lin, nn.Tanh()]
    w, b = policy.action
    action = nn.Linear(*w.shape)
    with torch.no_grad():
        action.weight.copy_(torch.as_tensor(w.T))
        action.bias.copy_(torch.as_tensor(b))
    if layers[0].in_features != n_in:
        raise ValueError(f"--init {cfg.init} reads {layers[0].in_features} inputs; the data has {n_in}")
    return nn.Sequential(*layers), action


def _wire_baseline(linears, action, n_in: int, n_actions: int) -> None:
    """Fresh weights with the first ``n_actions`` units of every hidden layer wired to carry the one-hot of the
    baseline's choice (the last ``n_actions`` inputs of the features) to its logit: the student starts as the
    game's baseline -- the search's blueprint, which the teacher's label is most of the time -- and the fit only has
    to learn the departures (a residual start the MLP format can hold)."""
    import torch

    with torch.no_grad():
        first = True
        for lin in linears:
            if lin.out_features < n_actions:
                raise ValueError(f"--init baseline needs hidden layers of at least {n_actions} units")
            lin.weight[:n_actions] = 0.0
            if first:  # unit a = tanh(3 * onehot_a - 1.5): +-0.91
                lin.weight[:n_actions, n_in - n_actions:] = 3.0 * torch.eye(n_actions)
                lin.bias[:n_actions] = -1.5
                first = False
            else:  # unit a = tanh(3 * previous unit a): +-0.99
                lin.weight[:n_actions, :n_actions] = 3.0 * torch.eye(n_actions)
                lin.bias[:n_actions] = 0.0
                lin.weight[n_actions:, :n_actions] = 0.0
        action.weight.zero_()
        action.weight[:, :n_actions] = 5.0 * torch.eye(n_actions)  # the baseline's card leads by ~10 logits
        action.bias.zero_()


def _init_path(init: str) -> Path:
    """A policy file: a path ending in ``.npz``, or the name of a shipped one (``rope_team``)."""
    from cardzoo.agents.learned import shipped_policy

    return Path(init) if init.endswith(".npz") else shipped_policy(init)


def fit(cfg: DistilConfig, data: dict[str, np.ndarray], log):
    """The student fitted to the labels by cross-entropy on masked logits; returns (hidden, action)."""
    import torch
    import torch.nn.functional as F

    torch.manual_seed(cfg.seed)
    x_all = inputs(data, cfg.features)
    masks, labels = data["masks"], data["labels"].astype(np.int64)
    hidden, action = build_student(cfg, x_all.shape[1], masks.shape[1])
    # A twentieth of the games held out: how well the student agrees with the teacher on decisions it did not fit.
    held = (data["games"] % 20) == 19
    train_idx, held_idx = np.flatnonzero(~held), np.flatnonzero(held)
    params = [*hidden.parameters(), *action.parameters()]
    optimizer = torch.optim.Adam(params, lr=cfg.learning_rate)
    rng = np.random.default_rng(cfg.seed)
    x_t, m_t, y_t = torch.as_tensor(x_all), torch.as_tensor(masks), torch.as_tensor(labels)

    def masked_logits(idx):
        return action(hidden(x_t[idx])).masked_fill(~m_t[idx], -1e8)

    def agreement(idx) -> float:
        if len(idx) == 0:
            return float("nan")
        with torch.no_grad():
            return float((masked_logits(idx).argmax(1) == y_t[idx]).float().mean())

    log(f"fit on {len(train_idx)} decisions (held out {len(held_idx)}): agreement before "
        f"{100 * agreement(train_idx):.1f}% / held-out {100 * agreement(held_idx):.1f}%")
    for epoch in range(cfg.update_epochs):
        order = rng.permutation(train_idx)
        total = 0.0
        for start in range(0, len(order), cfg.minibatch_size):
            idx = order[start : start + cfg.minibatch_size]
            loss = F.cross_entropy(masked_logits(idx), y_t[idx])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += float(loss.detach()) * len(idx)
        log(f"  epoch {epoch + 1}/{cfg.update_epochs}: loss {total / max(len(order), 1):.4f}, agreement "
            f"{100 * agreement(train_idx):.1f}% / held-out {100 * agreement(held_idx):.1f}%")
    return hidden, action, {"agreement": agreement(train_idx), "held_out_agreement": agreement(held_idx)}


# ----------------------------------------------------------------------------- evaluation
def evaluate(policy: Path, cfg: DistilConfig) -> dict[str, float]:
    """Win rate per level, the policy in both seats, on the held-out deals ``EVAL_BASE_SEED + i``."""
    from cardzoo.agents.loops import results

    return held_out(cfg.levels, cfg.eval_games,
                    lambda level, seeds: float(np.mean(results(str(policy), level, seeds, cfg.workers, cfg.game))))


# ----------------------------------------------------------------------------- the DAgger loop
class DaggerCurve(Curve):
    """The held-out win rate after each round against the labelled decisions aggregated so far (0: the init)."""

    title = "DAgger rounds: win rate on held-out deals"
    x_label = "labelled decisions (aggregated; 0 = the init policy)"
    always_mean = True


def _load(paths) -> list[dict[str, np.ndarray]]:
    out = []
    for p in paths:
        with np.load(p) as f:
            out.append({k: f[k] for k in f.files})
    return out


def _aggregate(parts: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    offset, games = 0, []
    for p in parts:  # game numbers unique across rounds (the held-out split is by game)
        games.append(p["games"] + offset)
        offset += int(p["games"].max()) + 1 if len(p["games"]) else 0
    data = {k: np.concatenate([p[k] for p in parts]) for k in ("obs", "extras", "masks", "labels")}
    data["games"] = np.concatenate(games)
    return data


def train(cfg: DistilConfig, command: str = "") -> Path:
    import torch

    from .export import export_layers

    torch.set_num_threads(cfg.threads)
    out = Path(cfg.out)
    log = RunLog(out)
    (out / "data").mkdir(exist_ok=True)
    start = time.time()
    meta = {"env": GAMES[cfg.game].env_id, "config": asdict(cfg), "command": command, "features": cfg.features,
            "trained_by": "cardzoo.training.distil (DAgger on the search agent)"}
    parts = _load(cfg.datasets)
    if parts:
        log(f"{sum(len(p['labels']) for p in parts)} labelled decisions from {len(cfg.datasets)} earlier file(s)")
    evaluations, student, rounds = Evaluations(out, log, DaggerCurve()), None, []
    if cfg.init not in (None, "baseline"):  # where the fits start: the curve's first point
        rates = evaluate(_init_path(cfg.init), cfg)
        evaluations.curve.add(steps=0, seconds=round(time.time() - start), **rates,
                              mean=float(np.mean(list(rates.values()))))
        log(f"init {cfg.init}: " + ", ".join(f"{k} {100 * v:.1f}%" for k, v in rates.items()))
    if parts and cfg.start_round > 0:  # a continued run: its first round's student is fitted to the earlier data
        hidden, action, _ = fit(cfg, _aggregate(parts), log)
        student = export_layers(hidden, action, out / "checkpoints" / "start.npz", {**meta, "round": -1})
    last = cfg.start_round + max(cfg.rounds, 1 if parts else 0)
    for k in range(cfg.start_round, last):
        if k < cfg.start_round + cfg.rounds:
            data = label_round(cfg, k, student, log)
            np.savez_compressed(out / "data" / f"round_{k}.npz", **data)
            parts.append(data)
        hidden, action, agreement = fit(cfg, _aggregate(parts), log)
        decisions = sum(len(p["labels"]) for p in parts)
        student = export_layers(hidden, action, out / "checkpoints" / f"round_{k}.npz",
                                {**meta, "round": k, "decisions": decisions, "seconds": round(time.time() - start)})
        rates = evaluate(student, cfg)
        rounds.append({"round": k, "decisions": decisions, **agreement, "held_out_win_rates": rates})
        evaluations.add(rates, row={"steps": decisions, "seconds": round(time.time() - start)}, where={"round": k},
                        heading=f"round {k}", copies={student: "policy.npz"})
    best = evaluations.best
    run = {**meta, "seed": cfg.seed, "wall_seconds": round(time.time() - start), "rounds": rounds, "best": best,
           "torch_threads": cfg.threads}
    common.write_run(out, run)
    log(f"done in {time.time() - start:.0f} s; best held-out mean {100 * best['mean']:.1f}% at round "
        f"{best.get('round')}; policy: {out / 'policy.npz'}")
    log.close()
    return out / "policy.npz"


def add_options(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """DistilConfig's fields as ``parser``'s arguments (``cardzoo train GAME --backend distil``)."""
    return common.add_options(parser, DistilConfig, GAMES)


def config(args: argparse.Namespace) -> DistilConfig:
    """The config of parsed options ("none" turns ``features`` or ``init`` off); ValueError if they conflict."""
    return common.config(args, DistilConfig)


def parse_args(argv: list[str]) -> DistilConfig:
    return common.parse_args(DistilConfig, argv, "cardzoo train GAME --backend distil", __doc__.splitlines()[0],
                             GAMES)


def main(argv: list[str] | None = None) -> Path:
    return common.main(parse_args, train, argv, "python -m cardzoo.training.distil")


if __name__ == "__main__":
    main()
