"""Summit Rush: who turns when nothing fits, measured -- ``learned`` with and without the dead-top convention.

Run from the repository root (about 2 minutes on 2 cores for 1000 deals a level)::

    python -m cardzoo.evaluation.studies.summit_rush_turns --games 1000 --workers 2

Each team plays the same silent deals of each timed level (``reset(seed=first + i)``, seeds the benchmark never
deals), both seats the same agent:

- ``learned``: the shipped policy, its own turns (both seats may turn in one stuck tick);
- ``learned_turns`` at several values of its ``double_below`` (the clock's ticks per peak card below which the seat
  the convention does not name may still turn when its policy wants): 0 is the convention alone (one turner) at
  every level, the default lets both seats turn on Expert's clock only, 100 at every level.

Every variant is compared with ``learned`` deal by deal (points, 95 %, McNemar). The default of
:data:`cardzoo.agents.summit_rush_turns.DOUBLE_BELOW` comes from this table. Written to
``evaluation/results/summit_rush_turns.json`` and ``.png``.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from cardzoo.agents.loops import play
from cardzoo.agents.registry import make_agent
from cardzoo.agents.summit_rush_turns import DOUBLE_BELOW, DeadTopTurns
from cardzoo.envs.common.seeding import refuse_benchmark_seeds
from cardzoo.envs.common.stats import paired, wilson
from cardzoo.envs.registry import GAMES

RESULTS = Path(__file__).resolve().parents[1] / "results"
LEVELS = GAMES["summit_rush"].levels  # every level is timed
DOUBLES = (0.0, DOUBLE_BELOW, 100.0)  # one turner; both may turn at Expert (the default); at every level
FIRST = 80_000_000


def team(double_below: float | None) -> list:
    """Two seats of ``learned`` (``None``) or of ``learned`` under the convention with this ``double_below``."""
    seats = [make_agent("learned", "summit_rush_v0", seed=0) for _ in range(2)]
    return seats if double_below is None else [DeadTopTurns(a, double_below=double_below) for a in seats]


def _chunk(job: tuple[str, float | None, list[int]]) -> list[bool]:
    level, double_below, seeds = job
    agents = team(double_below)
    return [play(level, seed, agents, "summit_rush") for seed in seeds]


def wins(level: str, double_below: float | None, seeds: list[int], workers: int) -> list[bool]:
    if workers <= 1:
        return _chunk((level, double_below, seeds))
    size = -(-len(seeds) // workers)
    with ProcessPoolExecutor(workers) as pool:
        parts = pool.map(_chunk, [(level, double_below, seeds[i:i + size]) for i in range(0, len(seeds), size)])
        return [w for part in parts for w in part]


def _rate(won: list[bool]) -> dict:
    r = wilson(sum(won), len(won))
    return {"games": len(won), "wins": sum(won), "rate": r.rate, "low": r.low, "high": r.high}


def study(games: int, first: int, workers: int) -> dict:
    seeds = list(range(first, first + games))
    refuse_benchmark_seeds(first, games, "the turns study")
    levels = {}
    for level in LEVELS:
        start = time.time()
        base = wins(level, None, seeds, workers)
        cells = {"learned": _rate(base)}
        for d in DOUBLES:
            won = wins(level, d, seeds, workers)
            c = paired(won, base)
            cells[f"double_below={d:g}"] = {**_rate(won), "double_below": d, "minus_learned": {
                "difference": c.difference, "low": c.low, "high": c.high, "p_value": c.p_value,
                "only_this": c.only_a, "only_learned": c.only_b}}
        levels[level] = {"cells": cells, "seconds": round(time.time() - start, 1)}
        print(level, {k: v["wins"] for k, v in cells.items()}, f"{levels[level]['seconds']} s", flush=True)
    return {"game": "summit_rush", "talk": False, "seeds": f"{first}..{first + games - 1}", "games": games,
            "default_double_below": DOUBLE_BELOW, "levels": levels}


def chart(data: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 3.6))
    for i, (level, entry) in enumerate(data["levels"].items()):
        rows = [(k, v["minus_learned"]) for k, v in entry["cells"].items() if "minus_learned" in v]
        xs = [j + i * 0.25 for j in range(len(rows))]
        mid = [100 * m["difference"] for _, m in rows]
        err = [[100 * (m["difference"] - m["low"]) for _, m in rows], [100 * (m["high"] - m["difference"])
                                                                        for _, m in rows]]
        ax.errorbar(xs, mid, yerr=err, fmt="o", capsize=3, label=level)
    ax.axhline(0, color="grey", lw=0.8)
    ax.set_xticks([j + 0.25 for j in range(len(rows))], [k.split("=")[1] for k, _ in rows])
    ax.set_xlabel("double_below (the clock's ticks per peak card below which both seats may turn)")
    ax.set_ylabel("win rate minus learned (points)")
    ax.set_title(f"learned_turns vs learned, {data['games']} silent deals a level, paired")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--games", type=int, default=1000)
    p.add_argument("--first", type=int, default=FIRST)
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--out", type=Path, default=RESULTS / "summit_rush_turns.json")
    args = p.parse_args(argv)
    data = study(args.games, args.first, args.workers)
    data["command"] = "python -m cardzoo.evaluation.studies.summit_rush_turns " + shlex.join(sys.argv[1:] if argv
                                                                                             is None else argv)
    args.out.write_text(json.dumps(data, indent=1) + "\n")
    chart(data, args.out.with_suffix(".png"))
    print(args.out)


if __name__ == "__main__":
    main()
