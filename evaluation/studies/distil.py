"""Teams on the report's deals, paired: the distilled policies against the shipped ``learned`` and the simple
strategy (``cardzoo.training.distil`` makes the policies; this module needs numpy only). Rope Team and Summit Rush.

Game ``i`` of a level is the report's game ``i`` (``reset(seed=i)``), both seats the same agent (a registry name or
a policy file), agent seeds as the runner's. :mod:`cardzoo.agents.loops` plays the games: Rope Team
on the rules module with the observation the env would give (its bits, as the vector for agents without
``act_bits``); Summit Rush through its silent Parallel env, every seat acting each tick. Every team meets
the same deals, so each comparison is paired: the difference of win rates with its 95 % interval and McNemar's
exact p-value (:func:`cardzoo.envs.common.stats.paired`); each rate has its Wilson interval.

    nice python -m cardzoo.evaluation.studies.distil --agents simple learned runs/distil/policy.npz \\
        --games 2000 --workers 2 --out evaluation/results/training/rope_team_distilled/report_deals.json

The first two agents named are the baselines every other agent is paired against (default: ``learned`` and
``simple``). Options: ``--levels``, ``--games`` (deals per level, from 0), ``--workers`` (processes), ``--out``
(JSON; a CSV beside it), ``--cache`` (a folder keeping each team's results by name and weights, so the
baselines are played once).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import shlex
import sys
import time
from pathlib import Path

import numpy as np

from cardzoo.agents.loops import ENVS, cached_results
from cardzoo.envs.common.stats import paired, wilson
from cardzoo.envs.registry import GAMES

LEVELS = GAMES["rope_team"].levels
# the levels with shipped distilled policies, per game the study plays
LEVELS_OF = {game: GAMES[game].policy_levels or GAMES[game].levels for game in ENVS}


def study(agents: list[str], levels: tuple[str, ...], games: int, workers: int = 1, cache: Path | None = None,
          game: str = "rope_team", log=print) -> dict:
    """Each agent's wins per level on deals ``0 .. games-1``, each rate with its Wilson interval, every agent after
    the first two paired against those two."""
    out: dict = {"game": game, "games": games, "levels": list(levels), "agents": agents, "baselines": agents[:2],
                 "teams": {}}
    won: dict[str, dict[str, list[bool]]] = {}
    for name in agents:
        won[name] = {}
        for level in levels:
            start = time.time()
            won[name][level] = w = cached_results(name, level, games, workers, cache, game)
            log(f"{name} {level}: {100 * np.mean(w):.1f}% of {games} ({time.time() - start:.0f} s)", flush=True)
    for name in agents:
        entry = out["teams"][name] = {}
        for level in levels:
            w = won[name][level]
            rate = wilson(sum(w), len(w))
            cell = entry[level] = {"wins": sum(w), "games": len(w), "rate": rate.rate, "low": rate.low,
                                   "high": rate.high, "results": "".join("W" if x else "L" for x in w)}
            for base in agents[:2]:
                if base != name:
                    cmp = paired(w, won[base][level])
                    cell[f"vs_{base}"] = {"difference": cmp.difference, "low": cmp.low, "high": cmp.high,
                                          "only_this": cmp.only_a, "only_other": cmp.only_b, "p_value": cmp.p_value}
    return out


def write_csv(data: dict, path: Path) -> None:
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        bases = data["baselines"]
        writer.writerow(["agent", "level", "games", "wins", "rate", "low", "high"]
                        + [f"{k}_vs_{b}" for b in bases for k in ("difference", "low", "high", "p_value")])
        for name, entry in data["teams"].items():
            for level, cell in entry.items():
                row = [name, level, cell["games"], cell["wins"], f"{cell['rate']:.4f}", f"{cell['low']:.4f}",
                       f"{cell['high']:.4f}"]
                for b in bases:
                    cmp = cell.get(f"vs_{b}")
                    row += ([f"{cmp[k]:.4f}" if k != "p_value" else f"{cmp[k]:.3g}"
                             for k in ("difference", "low", "high", "p_value")] if cmp else ["", "", "", ""])
                writer.writerow(row)


def main(argv: list[str] | None = None) -> None:
    from cardzoo.envs.common.argtypes import number

    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(prog="python -m cardzoo.evaluation.studies.distil", description=__doc__)
    parser.add_argument("--agents", nargs="+", default=["learned", "simple"],
                        help="registry names or policy files; the first two are the baselines")
    parser.add_argument("--game", choices=sorted(ENVS), default="rope_team")
    parser.add_argument("--levels", nargs="+", choices=sorted({lv for levels in LEVELS_OF.values() for lv in levels}),
                        help="default: the game's levels (Rope Team: all four; Summit Rush: normal and hard)")
    parser.add_argument("--games", type=number(int, 1), default=2000, help="deals per level, from 0")
    parser.add_argument("--workers", type=number(int, 1), default=1, help="processes")
    parser.add_argument("--out", required=True, help="JSON file (a CSV is written beside it)")
    parser.add_argument("--cache", help="folder keeping each team's results (by name and weights) between runs")
    args = parser.parse_args(argv)
    start = time.time()
    levels = tuple(args.levels or LEVELS_OF[args.game])
    if set(levels) - set(LEVELS_OF[args.game]):
        parser.error(f"{args.game} has levels {', '.join(LEVELS_OF[args.game])}")
    data = study(args.agents, levels, args.games, args.workers, Path(args.cache) if args.cache else None, args.game)
    data["command"] = "python -m cardzoo.evaluation.studies.distil " + shlex.join(argv)
    data["wall_seconds"] = round(time.time() - start)
    data["machine"] = {"cpus": os.cpu_count(), "python": platform.python_version(),
                       "load_average_at_end": os.getloadavg()}
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data, indent=1))
    write_csv(data, out.with_suffix(".csv"))


if __name__ == "__main__":
    main()
