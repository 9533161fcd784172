"""One agent's result from runs of different games or levels: ``python -m cardzoo.evaluation.protocol.merge A.json
B.json --out evaluation/results/benchmark --name search``.

A slow agent is benchmarked a piece at a time, a game (``--only``) or some of a game's levels (``--levels``) per
run, on the same deal key, budget, limits and pool parts: a cell does not depend on the others, so the runs
together are the run of all their cells. This joins them into the one file the leaderboard reads; a game played in
pieces gets its headline worked out again from the joined cells (its paired comparison from the reference's deals
each cell keeps). It refuses runs that do not measure the same thing (another agent, protocol, package, deals,
budget, pool, pool parts, partners or limits) or that both played a cell. Each run's command and compute are kept
(``runs``); the compute is their sum. While the settings played do not cover every game's, the result stays
filtered (``filters.levels``), a partial result.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shlex
import sys
from collections.abc import Mapping, Sequence
from types import SimpleNamespace
from typing import Any

from cardzoo.agents.pools import PARTS
from cardzoo.envs.common.errors import RecordError

SAME = ("protocol", "package", "agent", "budget", "games_per_cell", "deals", "limits")


def result_digest(games: Mapping[str, Mapping[str, Any]]) -> str:
    """A result's digest: of its games' digests, so it names the agent's behaviour in every game it played."""
    digests = json.dumps({g: games[g]["digest"] for g in games}, sort_keys=True)
    return "sha256:" + hashlib.sha256(digests.encode()).hexdigest()


def _compute(runs: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    computes = [r.get("compute") for r in runs]
    if any(c is None for c in computes):
        return None

    def one(field: str) -> Any:
        values = {c[field] for c in computes}
        return values.pop() if len(values) == 1 else "mixed"

    per_game: dict[str, float] = {}
    for c in computes:
        for game, seconds in c["agent_cpu_seconds_per_game"].items():
            per_game[game] = round(per_game.get(game, 0.0) + seconds, 1)
    return {"wall_seconds": round(sum(c["wall_seconds"] for c in computes), 1), "backend": one("backend"),
            "workers": one("workers"), "cpus": one("cpus"), "machine": one("machine"),
            "agent_cpu_seconds": round(sum(c["agent_cpu_seconds"] for c in computes), 1),
            "agent_cpu_seconds_per_game": per_game}


def _join_game(game: str, parts: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """One game's record from runs that played different settings of it (``--levels``): its cells in the protocol's
    order of settings, and the headline worked out again from them."""
    from .protocol import SETTING_NAMES
    from .run import headline

    first = parts[0]
    for field in ("digest", "pool", "reference"):
        if any(p[field] != first[field] for p in parts):
            raise RecordError(f"the runs of {game} have another {field}: they do not measure the same thing")
    settings = [s for p in parts for s in p["settings"]]
    names = [s["name"] for s in settings]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise RecordError(f"{game} {twice[0]} is in two results: merge runs of different games or levels")
    order = {name: i for i, name in enumerate(SETTING_NAMES.get(game, ()))}
    settings.sort(key=lambda s: order.get(s["name"], len(order)))
    rank = {s["name"]: i for i, s in enumerate(settings)}
    cells = sorted((c for p in parts for c in p["cells"]), key=lambda c: rank[c["setting"]])  # stable: cell order
    reference = None
    if first["reference"] is not None:
        if any("reference_deals" not in c for c in cells):
            raise RecordError(f"a run of {game} was made before the cells kept the reference's deals, so its paired "
                              "comparison cannot be worked out again: merge runs of whole games")
        reference = [{"kind": c["kind"], "part": c["part"], "deals": c["reference_deals"]} for c in cells]
    pool = SimpleNamespace(**{part: tuple(first["pool"].get(part, ())) for part in PARTS})
    return {**first, "settings": settings, "headline": headline(game, cells, reference, pool), "cells": cells}


def merge(results: Sequence[Mapping[str, Any]], command: str | None = None) -> dict[str, Any]:
    """The result of all ``results``' cells together (module docstring); RecordError naming what differs."""
    if len(results) < 2:
        raise RecordError(f"merging needs two results or more, got {len(results)}")
    first = results[0]
    for i, other in enumerate(results[1:], 2):
        for field in SAME:
            if other.get(field) != first.get(field):
                raise RecordError(f"result {i} has another {field} than result 1 ({other.get(field)!r} against "
                                  f"{first.get(field)!r}): they do not measure the same thing")
        partners = [r.get("filters", {}).get("partners") for r in (other, first)]
        if partners[0] != partners[1]:
            raise RecordError(f"result {i} has another filters.partners than result 1 ({partners[0]!r} against "
                              f"{partners[1]!r}): they do not measure the same thing")
    played = {tuple(g["pool"].get("played", ())) for r in results for g in r["games"].values()}
    if len(played) > 1:
        raise RecordError(f"the results played different parts of the pools ({sorted(played)}): they do not "
                          "measure the same thing")
    by_game: dict[str, list[Mapping[str, Any]]] = {}
    for i, r in enumerate(results, 1):
        for game, value in r["games"].items():
            if game in by_game and "levels" not in r.get("filters", {}):
                raise RecordError(f"{game} is in result {i} and an earlier one: merge runs of different games or "
                                  "levels")
            by_game.setdefault(game, []).append(value)
    games = {g: parts[0] if len(parts) == 1 else _join_game(g, parts) for g, parts in by_game.items()}
    filters = {}
    if first.get("filters", {}).get("partners") is not None:
        filters["partners"] = first["filters"]["partners"]
    from .protocol import SETTING_NAMES

    if any(set(SETTING_NAMES.get(g, ())) - {s["name"] for s in v["settings"]} for g, v in games.items()):
        filters["levels"] = list(dict.fromkeys(s["name"] for v in games.values() for s in v["settings"]))
    skipped = {g: why for r in results for g, why in r.get("skipped", {}).items() if g not in games}
    runs: list[dict[str, Any]] = []
    for r in results:  # a merged result merged again keeps the runs it was made of
        runs += r.get("runs") or [{"games": list(r["games"]), "command": r.get("command"), "compute": r.get("compute")}]
    return {**{field: first.get(field) for field in SAME}, "digest": result_digest(games), "command": command,
            "skipped": skipped, "games": games, "filters": filters,
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
