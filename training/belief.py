"""Train the Rope Team belief network (:mod:`cardzoo.agents.rope_team_belief`) on self-play of a blueprint.

    nice -n 5 python -m cardzoo.training.belief --blueprint learned --out agents/beliefs/rope_team_belief.npz

Read top to bottom: options; data (the blueprint plays both seats of ``games`` deals per level in the batched engine;
at every decision with more than one legal card the mover's belief inputs and its partner's true hand are kept);
fitting (per-card log-loss on the allowed cards, Adam); held-out scores against the uniform belief; export to a
policy-format ``.npz`` (``meta["kind"] = "rope_team_belief"``) with the command, the data and the scores in its meta.

Deals: training seeds ``DATA_BASE_SEED + 1,000,000 * level + i``, held-out ``HELD_OUT_BASE_SEED + ...``; neither
the report's (0..), training's held-out evaluation (10M..), distillation's (30M..) nor the benchmark's (refused).
Torch runs on CPU with ``threads`` threads; the blueprint's moves are numpy.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from dataclasses import asdict, dataclass

import numpy as np
import torch
import torch.nn as nn

from cardzoo.agents import rope_team_belief as belief
from cardzoo.agents.batched_features import rope_team_scores
from cardzoo.agents.learned import NumpyPolicy, shipped_policy
from cardzoo.agents.rope_team_rollouts import simple_policy
from cardzoo.envs.batched import make_batched
from cardzoo.envs.common.seeding import refuse_benchmark_seeds

from .export import export_layers

DATA_BASE_SEED = 50_000_000
HELD_OUT_BASE_SEED = 58_000_000
LEVELS = ("easy", "normal", "hard", "expert")
_ONE = np.uint64(1)


@dataclass
class BeliefConfig:
    blueprint: str = "learned"  # who plays both seats: "learned" (the shipped rope_team_v2) or "simple"
    levels: tuple[str, ...] = LEVELS
    games: int = 4000  # training deals per level
    held_out: int = 400  # held-out deals per level
    hidden: tuple[int, ...] = (256, 256)
    epochs: int = 8
    batch: int = 1024
    learning_rate: float = 1e-3
    minutes: float = 8.0  # fitting stops after this much wall time (at an epoch's end)
    seed: int = 0
    threads: int = 1
    out: str = "agents/beliefs/rope_team_belief.npz"


# ----------------------------------------------------------------------------- data
def _mover_policy(blueprint: str):
    """A batched greedy policy ``(obs, mask) -> cards`` of the blueprint."""
    if blueprint == "simple":
        return simple_policy
    if blueprint != "learned":
        raise ValueError(f"blueprint must be 'learned' or 'simple', got {blueprint!r}")
    policy = NumpyPolicy(shipped_policy("rope_team_v2"))

    def act(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        x = torch.as_tensor(rope_team_scores(obs, mask))
        for w, b in policy.weights:
            x = torch.tanh(x @ torch.as_tensor(w) + torch.as_tensor(b))
        w, b = policy.action
        logits = (x @ torch.as_tensor(w) + torch.as_tensor(b)).numpy()
        return np.where(mask.astype(bool), logits, -np.inf).argmax(axis=1)

    return act


def play(blueprint: str, level: str, first_seed: int, games: int, chunk: int = 2048) -> tuple[np.ndarray, np.ndarray]:
    """Self-play of ``games`` deals from ``first_seed``: (packed belief inputs uint8[R, SIZE/8], the partner's hand
    uint64[R]) at every decision with more than one legal card."""
    refuse_benchmark_seeds(first_seed, games, "the belief's data")
    act = _mover_policy(blueprint)
    xs, ys = [], []
    for start in range(0, games, chunk):
        n = min(chunk, games - start)
        eng = make_batched("rope_team_v0", num_envs=n, level=level)
        obs, mask, seat = eng.reset(seeds=first_seed + start)
        playing = np.ones(n, bool)
        void = np.zeros((n, 2), np.int64)  # suits each seat showed void in this deal
        led_by = np.zeros((n, 2), np.uint64)  # cards each seat led this deal
        rows = np.arange(n)
        while playing.any():
            keep = playing & (mask.sum(axis=1) > 1)
            partner = 1 - seat
            if keep.any():
                x = belief.inputs(obs[keep], void[rows, partner][keep], led_by[rows, partner][keep])
                xs.append(np.packbits(x.astype(np.uint8), axis=1))
                ys.append(eng.hands[rows, partner][keep].copy())
            cards = np.asarray(act(obs, mask), np.int64)
            led, deal = eng.led.copy(), eng.deal.copy()
            leads = led < 0
            led_by[rows[leads], seat[leads]] |= _ONE << cards[leads].astype(np.uint64)
            off = ~leads & (cards // 13 != led // 13)
            void[rows[off], seat[off]] |= 1 << (led[off] // 13)
            obs, mask, seat, _, done = eng.step(cards)
            fresh = done | (eng.deal != deal)
            void[fresh], led_by[fresh] = 0, 0
            playing &= ~done
    return np.concatenate(xs), np.concatenate(ys)


# ----------------------------------------------------------------------------- fitting
def _unpack(packed: np.ndarray) -> np.ndarray:
    return np.unpackbits(packed, axis=1, count=belief.SIZE).astype(np.float32)


def _targets(hands: np.ndarray) -> np.ndarray:
    return ((hands[:, None] & belief._BITS) != 0).astype(np.float32)


class Net(nn.Module):
    def __init__(self, hidden: tuple[int, ...]):
        super().__init__()
        layers, width = [], belief.SIZE
        for h in hidden:
            layers += [nn.Linear(width, h), nn.ReLU()]
            width = h
        self.hidden = nn.Sequential(*layers)
        self.action = nn.Linear(width, 52)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.action(self.hidden(x))


def _allowed(x: torch.Tensor) -> torch.Tensor:
    return x[:, belief.SIZE - 52 :]


def card_loss(logits: torch.Tensor, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Mean log-loss per allowed card (nats): the other cards are known not to be the partner's."""
    allowed = _allowed(x)
    loss = nn.functional.binary_cross_entropy_with_logits(logits, y, reduction="none")
    return (loss * allowed).sum() / allowed.sum()


def scores(net: Net, packed: np.ndarray, hands: np.ndarray) -> dict[str, float]:
    """Held-out log-loss per allowed card and accuracy (holds it if p > 1/2), the network's and the uniform
    belief's (each allowed card held with chance hand size / allowed cards)."""
    total = {"loss": 0.0, "uniform_loss": 0.0, "accuracy": 0.0, "uniform_accuracy": 0.0, "cards": 0.0}
    with torch.no_grad():
        for i in range(0, len(packed), 8192):
            x = torch.as_tensor(_unpack(packed[i : i + 8192]))
            y = torch.as_tensor(_targets(hands[i : i + 8192]))
            allowed = _allowed(x)
            p = torch.sigmoid(net(x)).clamp(1e-6, 1 - 1e-6)
            h = y.sum(1, keepdim=True)
            u = (h / allowed.sum(1, keepdim=True)).clamp(1e-6, 1 - 1e-6).expand_as(p)
            for name, q in (("", p), ("uniform_", u)):
                ll = -(y * q.log() + (1 - y) * (1 - q).log())
                total[name + "loss"] += float((ll * allowed).sum())
                total[name + "accuracy"] += float((((q > 0.5).float() == y).float() * allowed).sum())
            total["cards"] += float(allowed.sum())
    cards = total.pop("cards")
    return {k: v / cards for k, v in total.items()}


def fit(cfg: BeliefConfig, packed: np.ndarray, hands: np.ndarray, log) -> Net:
    torch.manual_seed(cfg.seed)
    rng = np.random.default_rng(cfg.seed)
    net = Net(cfg.hidden)
    opt = torch.optim.Adam(net.parameters(), lr=cfg.learning_rate)
    start = time.time()
    for epoch in range(cfg.epochs):
        order = rng.permutation(len(packed))
        running, batches = 0.0, 0
        for i in range(0, len(order), cfg.batch):
            rows = order[i : i + cfg.batch]
            x = torch.as_tensor(_unpack(packed[rows]))
            loss = card_loss(net(x), x, torch.as_tensor(_targets(hands[rows])))
            opt.zero_grad()
            loss.backward()
            opt.step()
            running, batches = running + float(loss.detach()), batches + 1
        log(f"epoch {epoch}: train loss {running / batches:.4f} ({time.time() - start:.0f} s)")
        if time.time() - start > 60 * cfg.minutes:
            log("time budget reached")
            break
    return net


# ----------------------------------------------------------------------------- the run
def train(cfg: BeliefConfig, command: str) -> dict:
    torch.set_num_threads(cfg.threads)
    t0, cpu0 = time.time(), time.process_time()

    def log(msg: str) -> None:
        print(f"[{time.time() - t0:6.0f} s] {msg}", flush=True)

    data, held = [], []
    for i, level in enumerate(cfg.levels):
        data.append(play(cfg.blueprint, level, DATA_BASE_SEED + 1_000_000 * i, cfg.games))
        held.append(play(cfg.blueprint, level, HELD_OUT_BASE_SEED + 1_000_000 * i, cfg.held_out))
        log(f"{level}: {len(data[-1][0])} training and {len(held[-1][0])} held-out decisions")
    packed = np.concatenate([d[0] for d in data])
    hands = np.concatenate([d[1] for d in data])
    net = fit(cfg, packed, hands, log)
    held_scores = {level: scores(net, *h) for level, h in zip(cfg.levels, held, strict=True)}
    every = scores(net, np.concatenate([h[0] for h in held]), np.concatenate([h[1] for h in held]))
    log(f"held out: {json.dumps(every)}")
    meta = {
        "env": "rope_team_v0", "kind": belief.KIND, "command": command, "config": asdict(cfg),
        "blueprint": "learned (rope_team_v2)" if cfg.blueprint == "learned" else cfg.blueprint,
        "data": {"decisions": int(len(packed)), "games_per_level": cfg.games, "levels": list(cfg.levels),
                 "seeds": f"{DATA_BASE_SEED} + 1e6 * level index + i"},
        "held_out": {"decisions": int(sum(len(h[0]) for h in held)), "games_per_level": cfg.held_out,
                     "seeds": f"{HELD_OUT_BASE_SEED} + 1e6 * level index + i", "all": every, **held_scores},
        "seconds": round(time.time() - t0), "cpu_seconds": round(time.process_time() - cpu0),
    }
    export_layers(list(net.hidden), net.action, cfg.out, meta)
    log(f"wrote {cfg.out}")
    return meta


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    d = BeliefConfig()
    p.add_argument("--blueprint", choices=("learned", "simple"), default=d.blueprint)
    p.add_argument("--levels", nargs="+", choices=LEVELS, default=list(d.levels))
    for name in ("games", "held_out", "epochs", "batch", "seed", "threads"):
        p.add_argument(f"--{name.replace('_', '-')}", type=int, default=getattr(d, name))
    p.add_argument("--hidden", type=int, nargs="+", default=list(d.hidden))
    p.add_argument("--learning-rate", type=float, default=d.learning_rate)
    p.add_argument("--minutes", type=float, default=d.minutes)
    p.add_argument("--out", default=d.out)
    a = p.parse_args(argv)
    cfg = BeliefConfig(blueprint=a.blueprint, levels=tuple(a.levels), games=a.games, held_out=a.held_out,
                       hidden=tuple(a.hidden), epochs=a.epochs, batch=a.batch, learning_rate=a.learning_rate,
                       minutes=a.minutes, seed=a.seed, threads=a.threads, out=a.out)
    train(cfg, "python -m cardzoo.training.belief " + shlex.join(argv))


if __name__ == "__main__":
    main()
