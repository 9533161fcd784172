"""Wall time of 10,000 Rope Team games with the simple strategy on every core (the agents' speed target: < 10 s).

    python -m cardzoo.evaluation.benchmarks.runner_speed --games 10000 --out evaluation/results/speed.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

from ..matches.runner import Matchup, run


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=10_000)
    parser.add_argument("--level", default="normal")
    parser.add_argument("--workers", type=int, default=os.cpu_count())
    parser.add_argument("--out")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    records = run(Matchup.of("rope_team_v0", ["simple"], level=args.level), args.games, workers=args.workers,
                  progress=False)
    seconds = time.perf_counter() - start
    result = {"games": args.games, "level": args.level, "workers": args.workers, "wall_seconds": round(seconds, 2),
              "games_per_second": round(args.games / seconds), "wins": sum(r["outcome"] == "win" for r in records),
              "cpu_count": os.cpu_count(), "python": platform.python_version(), "date": time.strftime("%Y-%m-%d")}
    print(json.dumps(result))
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=1))
    return result


if __name__ == "__main__":
    main()
