"""The Rope Team ceiling: the share of deals that ANY line of play wins, per level, by the perfect-information oracle.

Game ``i`` is dealt exactly as the env deals ``reset(seed=i)`` with the default dealer (``player_1``):
``rng = np.random.default_rng(i)``, ``rules.new_game(config, rules.shuffled_deck(rng), rng, dealer=1)`` -- the same
generator then deals the second and third deals. For each game :func:`cardzoo.agents.oracles.rope_team.solve`
answers winnable (a winning line found), lost (proven: no line wins) or undecided (node budget exhausted).

The ceiling lies between ``share_winnable`` (proven wins / games) and ``share_winnable_or_undecided``; both come
with a 95 % Wilson interval for the sampling error over deals. No team, however good at reading its partner,
can win more deals than the ceiling: it is what a team would reach if both players saw everything.

    python -m cardzoo.evaluation.studies.ceilings_rope_team --games 1000 --level hard --budget 200000 \\
        --out evaluation/results/rope_team_ceiling_hard.json
    # then the undecided games again with a larger budget (the first pass's figures are kept under first_pass)
    python -m cardzoo.evaluation.studies.ceilings_rope_team --retry evaluation/results/rope_team_ceiling_hard.json \\
        --budget 5000000 --out evaluation/results/rope_team_ceiling_hard.json
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import platform
import shlex
import statistics
import sys
import time
from pathlib import Path

from cardzoo.agents.loops import deal
from cardzoo.agents.oracles.rope_team import DEFAULT_BUDGET, solve
from cardzoo.envs.common.stats import wilson
from cardzoo.envs.rope_team import rules

VERDICT_CHARS = {True: "W", False: "L", None: "?"}


def _solve_one(args: tuple[int, str, int]) -> tuple[int, bool | None, int, float]:
    seed, level, budget = args
    start = time.perf_counter()
    sol = solve(deal(seed, level), budget)
    return seed, sol.winnable, sol.nodes, time.perf_counter() - start


def node_stats(nodes: list[int]) -> dict:
    return {
        "mean": statistics.fmean(nodes),
        "median": statistics.median(nodes),
        "p99": sorted(nodes)[int(0.99 * (len(nodes) - 1))],
        "max": max(nodes),
        "total": sum(nodes),
    }


def run(games: int, level: str, budget: int, workers: int = 2, start: int = 0, progress: bool = True) -> dict:
    """Solve games ``start .. start+games-1`` of ``level``; the summary and the per-game verdicts and node counts."""
    if level not in rules.LEVELS:
        raise SystemExit(f"unknown level {level!r}: one of {sorted(rules.LEVELS)}")
    seeds = range(start, start + games)
    verdicts: list[bool | None] = [None] * games
    nodes = [0] * games
    seconds = [0.0] * games
    t0 = time.perf_counter()
    tasks = [(seed, level, budget) for seed in seeds]
    with mp.get_context("fork" if sys.platform != "win32" else "spawn").Pool(workers) as pool:
        for done, (seed, won, n, dt) in enumerate(pool.imap_unordered(_solve_one, tasks, chunksize=64), 1):
            verdicts[seed - start], nodes[seed - start], seconds[seed - start] = won, n, dt
            if progress and done % max(1, games // 20) == 0:
                print(f"  {level}: {done}/{games} games, {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    wall = time.perf_counter() - t0
    won = sum(v is True for v in verdicts)
    lost = sum(v is False for v in verdicts)
    undecided = games - won - lost
    low, high = wilson(won, games), wilson(won + undecided, games)
    config = rules.LEVELS[level]
    return {
        "level": level,
        "config": {"ropes": config.ropes, "trumps": config.trumps, "max_deals": config.max_deals},
        "games": games,
        "seeds": [start, start + games - 1],
        "deal_convention": "rng = np.random.default_rng(seed); rules.new_game(config, rules.shuffled_deck(rng), "
        "rng, dealer=1) -- as the env's reset(seed=seed)",
        "budget_nodes": budget,
        "winnable": won,
        "lost": lost,
        "undecided": undecided,
        "share_winnable": won / games,
        "share_winnable_or_undecided": (won + undecided) / games,
        "share_winnable_wilson95": [low.low, low.high],
        "share_winnable_or_undecided_wilson95": [high.low, high.high],
        "nodes": node_stats(nodes),
        "cpu_seconds_solving": round(sum(seconds), 1),
        "wall_seconds": round(wall, 1),
        "workers": workers,
        "lost_seeds": [s for s, v in zip(seeds, verdicts, strict=True) if v is False],
        "undecided_seeds": [s for s, v in zip(seeds, verdicts, strict=True) if v is None],
        "per_game": {
            "verdict": "".join(VERDICT_CHARS[v] for v in verdicts),  # W winnable, L proven lost, ? undecided
            "nodes": nodes,
        },
    }


def retry(result: dict, budget: int, workers: int = 2) -> dict:
    """Solve the undecided games of ``result`` again with a larger ``budget``; update the verdicts and counts.

    The first pass's figures stay under ``first_pass``; a retried game's node count becomes the second search's.
    """
    if budget <= result["budget_nodes"]:
        raise SystemExit(f"the retry budget must exceed the first pass's {result['budget_nodes']} nodes")
    level, start, games = result["level"], result["seeds"][0], result["games"]
    seeds = list(result["undecided_seeds"])
    verdict = list(result["per_game"]["verdict"])
    nodes = result["per_game"]["nodes"]
    t0 = time.perf_counter()
    seconds = 0.0
    with mp.get_context("fork" if sys.platform != "win32" else "spawn").Pool(workers) as pool:
        for seed, won, n, dt in pool.imap_unordered(_solve_one, [(s, level, budget) for s in seeds]):
            verdict[seed - start], nodes[seed - start] = VERDICT_CHARS[won], n
            seconds += dt
    result["first_pass"] = {
        k: result[k]
        for k in ("budget_nodes", "winnable", "lost", "undecided", "share_winnable", "share_winnable_or_undecided",
                  "nodes", "cpu_seconds_solving", "wall_seconds", "lost_seeds", "undecided_seeds")
    }  # fmt: skip
    won = verdict.count("W")
    lost = verdict.count("L")
    undecided = games - won - lost
    low, high = wilson(won, games), wilson(won + undecided, games)
    result.update(
        retry_budget_nodes=budget,
        retried_seeds=seeds,
        retry_wall_seconds=round(time.perf_counter() - t0, 1),
        retry_cpu_seconds=round(seconds, 1),
        winnable=won,
        lost=lost,
        undecided=undecided,
        share_winnable=won / games,
        share_winnable_or_undecided=(won + undecided) / games,
        share_winnable_wilson95=[low.low, low.high],
        share_winnable_or_undecided_wilson95=[high.low, high.high],
        nodes=node_stats(nodes),
        lost_seeds=[start + i for i, v in enumerate(verdict) if v == "L"],
        undecided_seeds=[start + i for i, v in enumerate(verdict) if v == "?"],
    )
    result["per_game"] = {"verdict": "".join(verdict), "nodes": nodes}
    return result


def to_json(result: dict) -> str:
    """Indented summary; the long per-game lists each on one line."""
    long_keys = ("lost_seeds", "undecided_seeds", "per_game")
    head = json.dumps({k: v for k, v in result.items() if k not in long_keys}, indent=1)
    tail = ",\n".join(f" {json.dumps(k)}: {json.dumps(result[k], separators=(',', ':'))}" for k in long_keys)
    return head[:-2] + ",\n" + tail + "\n}\n"


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--level", default="hard", choices=sorted(rules.LEVELS))
    parser.add_argument("--budget", type=int, default=DEFAULT_BUDGET, help="node budget per game")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--start", type=int, default=0, help="first seed")
    parser.add_argument("--out", type=Path, default=None, help="write the JSON here")
    parser.add_argument(
        "--retry", type=Path, default=None, metavar="JSON",
        help="instead of a new run, solve the undecided games of this earlier result again with --budget",
    )  # fmt: skip
    args = parser.parse_args(argv)
    command = "python -m cardzoo.evaluation.studies.ceilings_rope_team " + shlex.join(
        sys.argv[1:] if argv is None else argv)
    if args.retry is not None:
        result = retry(json.loads(args.retry.read_text()), args.budget, args.workers)
        result["retry_command"] = command
        args.level, args.games = result["level"], result["games"]
    else:
        result = run(args.games, args.level, args.budget, args.workers, args.start)
        result["command"] = command
    result["meta"] = {"python": platform.python_version(), "machine": platform.machine(),
                      "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}  # fmt: skip
    print(
        f"{args.level}: winnable {result['winnable']}/{args.games} = {100 * result['share_winnable']:.2f}% "
        f"(95% {100 * result['share_winnable_wilson95'][0]:.2f}-{100 * result['share_winnable_wilson95'][1]:.2f}), "
        f"proven lost {result['lost']}, undecided {result['undecided']} "
        f"(ceiling at most {100 * result['share_winnable_or_undecided']:.2f}%), budget {args.budget} nodes, "
        f"{result.get('retry_wall_seconds', result['wall_seconds'])} s wall on {args.workers} workers"
    )
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(to_json(result))
    return result


if __name__ == "__main__":
    main()
