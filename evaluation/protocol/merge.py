"""One agent's result from runs of different games: ``python -m cardzoo.evaluation.protocol.merge A.json B.json
--out evaluation/results/benchmark --name search``.

A slow agent is benchmarked a game at a time (``--only``), on the same deal key, budget and limits: its cells do not
depend on the other games', so the runs together are the run of all of them. This joins them into the one file the
leaderboard reads, and refuses runs that do not measure the same thing (another agent, protocol, package, deals,
budget, parts of the pool, limits or filters) or that both played a game. Each run's command and compute are kept
(``runs``); the compute is their sum.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shlex
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from cardzoo.envs.common.errors import RecordError

SAME = ("protocol", "package", "agent", "budget", "games_per_cell", "deals", "limits", "filters")


def result_digest(games: Mapping[str, Mapping[str, Any]]) -> str:
    """A result's digest: of its games' digests, so it names the agent's behaviour in every game it played."""
    digests = json.dumps({g: games[g]["digest"] for g in games}, sort_keys=True)
    return "sha256:" + hashlib.sha256(digests.encode()).hexdigest()


def _played_parts(result: Mapping[str, Any]) -> set[tuple[str, ...]]:
    return {tuple(g["pool"].get("played", ())) for g in result["games"].values()}


def _compute(runs: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    computes = [r.get("compute") for r in runs]
    if any(c is None for c in computes):
        return None

    def one(field: str) -> Any:
        values = {c[field] for c in computes}
        return values.pop() if len(values) == 1 else "mixed"

    per_game: dict[str, float] = {}
    for c in computes:
        per_game.update(c["agent_cpu_seconds_per_game"])
    return {"wall_seconds": round(sum(c["wall_seconds"] for c in computes), 1), "backend": one("backend"),
            "workers": one("workers"), "cpus": one("cpus"), "machine": one("machine"),
            "agent_cpu_seconds": round(sum(c["agent_cpu_seconds"] for c in computes), 1),
            "agent_cpu_seconds_per_game": per_game}


def merge(results: Sequence[Mapping[str, Any]], command: str | None = None) -> dict[str, Any]:
    """The result of all ``results``' games together (module docstring); RecordError naming what differs."""
    if len(results) < 2:
        raise RecordError(f"merging needs two results or more, got {len(results)}")
    first = results[0]
    for i, other in enumerate(results[1:], 2):
        for field in SAME:
            if other.get(field) != first.get(field):
                raise RecordError(f"result {i} has another {field} than result 1 ({other.get(field)!r} against "
                                  f"{first.get(field)!r}): they do not measure the same thing")
    parts = set().union(*(_played_parts(r) for r in results))
    if len(parts) > 1:
        raise RecordError(f"the results played different parts of the pools ({sorted(parts)}): they do not "
                          "measure the same thing")
    games: dict[str, Any] = {}
    for i, r in enumerate(results, 1):
        for game, value in r["games"].items():
            if game in games:
                raise RecordError(f"{game} is in result {i} and an earlier one: merge runs of different games")
            games[game] = value
    skipped = {g: why for r in results for g, why in r.get("skipped", {}).items() if g not in games}
    runs: list[dict[str, Any]] = []
    for r in results:  # a merged result merged again keeps the runs it was made of
        runs += r.get("runs") or [{"games": list(r["games"]), "command": r.get("command"), "compute": r.get("compute")}]
    return {**{field: first.get(field) for field in SAME}, "digest": result_digest(games), "command": command,
            "skipped": skipped, "games": games,
            "failures": [f for r in results for f in r.get("failures", [])],
            "complete": all(r.get("complete", False) for r in results),
            "runs": runs, "compute": _compute(runs)}


def main(argv: Sequence[str] | None = None) -> int:
    from .results import read, write

    p = argparse.ArgumentParser(prog="python -m cardzoo.evaluation.protocol.merge",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("results", nargs="+", help="result files (.json written by cardzoo benchmark)")
    p.add_argument("--out", required=True, help="folder for the merged <name>.json/.md/.png")
    p.add_argument("--name", help="the merged files' stem (default from the agent)")
    args = p.parse_args(argv)
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        merged = merge([read(path) for path in args.results],
                       command="python -m cardzoo.evaluation.protocol.merge " + shlex.join(argv))
    except RecordError as err:
        p.exit(2, f"error: {err}\n")
    print(write(merged, args.out, args.name))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
