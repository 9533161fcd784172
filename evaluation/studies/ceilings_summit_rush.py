"""Perfect-information ceilings for Summit Rush: the share of deals that some line of play wins.

Run from the repository root (about 5 minutes on 2 cores for 2000 deals per variant)::

    python -m cardzoo.evaluation.studies.ceilings_summit_rush --games 2000

For each variant -- the document's five untimed figures and the two timed levels -- it deals games ``0..N-1``
exactly as the evaluation runner does (``env.reset(seed=i)``) and asks :mod:`cardzoo.agents.oracles.summit_rush`
whether the deal is winnable: untimed variants with ``solve`` (sequential moves by either player), Normal and Hard
with ``solve_timed`` (within the level's ticks, at most one card per pile per tick). Each result goes to
``evaluation/results/summit_rush_ceiling_<variant>.json``: counts of winnable, proven lost and undecided deals
(node budget exhausted), and one character per deal (``W``, ``L`` or ``?``) so the report can compare an agent with
the ceiling deal by deal.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

from cardzoo.agents.oracles.summit_rush import DEFAULT_BUDGET, solve, solve_timed
from cardzoo.envs import summit_rush_v0
from cardzoo.seeds import figures

RESULTS = Path(__file__).resolve().parents[1] / "results"
TIMED = {"normal": {"level": "normal"}, "hard": {"level": "hard"}}


def variants() -> dict[str, dict]:
    """Variant name -> env options: the document's untimed figures, then the timed levels."""
    return {**figures("summit_rush")["options"], **TIMED}


def _solve_chunk(args: tuple[dict, bool, list[int], int]) -> list[tuple[bool | None, int]]:
    options, timed, seeds, budget = args
    env = summit_rush_v0.parallel_env(**options)
    out = []
    for seed in seeds:
        env.reset(seed=seed)
        sol = solve_timed(env.game, budget=budget) if timed else solve(env.game, budget)
        out.append((sol.winnable, sol.nodes))
    return out


def ceiling(name: str, options: dict, games: int, budget: int = DEFAULT_BUDGET, workers: int | None = None,
            chunk: int = 50) -> dict:
    timed = name in TIMED
    seeds = list(range(games))
    chunks = [seeds[i:i + chunk] for i in range(0, games, chunk)]
    start = time.time()
    workers = workers or os.cpu_count() or 1
    jobs = [(options, timed, c, budget) for c in chunks]
    if workers == 1:
        parts = [_solve_chunk(j) for j in jobs]
    else:
        with ProcessPoolExecutor(max_workers=workers, mp_context=get_context("fork")) as pool:
            parts = list(pool.map(_solve_chunk, jobs))
    results = [r for part in parts for r in part]
    code = "".join("W" if w else "L" if w is False else "?" for w, _ in results)
    return {
        "game": "summit_rush",
        "variant": name,
        "options": options,
        "abstraction": ("timed: tick by tick, at most one card per pile per tick, played by the pile's owner"
                        if timed else "untimed: sequential moves by either player"),
        "games": games,
        "seeds": f"0..{games - 1} (env.reset(seed=i), as the evaluation runner)",
        "winnable": code.count("W"),
        "lost": code.count("L"),
        "undecided": code.count("?"),
        "budget": budget,
        "nodes_max": max(n for _, n in results),
        "nodes_total": sum(n for _, n in results),
        "seconds": round(time.time() - start, 1),
        "results": code,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=2000)
    parser.add_argument("--budget", type=int, default=DEFAULT_BUDGET)
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument("--only", nargs="*", default=None, help="variant names (default: all)")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    for name, options in variants().items():
        if args.only and name not in args.only:
            continue
        data = ceiling(name, options, args.games, args.budget, args.workers)
        path = args.out / f"summit_rush_ceiling_{name}.json"
        path.write_text(json.dumps(data, indent=1) + "\n")
        print(f"{name}: {data['winnable']} winnable, {data['lost']} lost, {data['undecided']} undecided of "
              f"{data['games']} ({data['seconds']} s) -> {path}", flush=True)


if __name__ == "__main__":
    main()
