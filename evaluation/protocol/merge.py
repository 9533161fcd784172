"""One agent's result from runs of pieces of the benchmark: ``python -m cardzoo.evaluation.protocol.merge A.json
B.json --out evaluation/results/benchmark --name search``.

A slow agent is benchmarked a piece at a time -- a game (``--only``), some of a game's levels (``--levels``) or some
of its pool (``--partners``) per run -- on the same deal key, budget, limits and pool parts: a cell does not depend
on the others, so the runs together are the run of all their cells. This joins them into the one file the
leaderboard reads. A game played in pieces gets its cells in the protocol's order, a cell two runs both played
(the self-play cell of two runs with other partners) once, and its headline worked out again from the joined cells
(the paired comparison from the reference's deals each cell keeps). It refuses runs that do not measure the same
thing (another agent, protocol, package, deals, budget, pool version, pool parts or limits), a cell two runs played
with different games, and a piece beside a run that played all of that game. Each run's command and compute are
kept (``runs``); the compute is their sum. While the cells do not cover every setting and every member of the
pool's played parts, the result stays filtered (``filters``): a partial result, which the leaderboard lists apart.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Mapping, Sequence
from types import SimpleNamespace
from typing import Any

from cardzoo.agents.pools import PARTS
from cardzoo.envs.common.errors import OptionError, RecordError

from .protocol import SETTING_NAMES
from .results import result_digest

SAME = ("protocol", "package", "agent", "budget", "games_per_cell", "deals", "limits")


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


def _members(game: str, pools: Sequence[Mapping[str, Any]]) -> dict[str, list[str]]:
    """The pool of a game played in pieces: each part's members of all the pieces, in the shipped pool's order (the
    protocol's order of cells) when it is that pool's version."""
    from cardzoo.agents.pools import pool as shipped

    version = pools[0].get("version")
    if any(p.get("version") != version for p in pools):
        raise RecordError(f"the runs of {game} played other pool versions: they do not measure the same thing")
    try:
        whole = shipped(game)
        order = {m: i for i, m in enumerate(whole.members())} if whole.version == version else {}
    except OptionError:  # a game or pool this package no longer has: the pieces' own order
        order = {}
    out = {}
    for part in PARTS:
        names = list(dict.fromkeys(m for p in pools for m in p.get(part, ())))
        out[part] = sorted(names, key=lambda m: (order.get(m, len(order)), names.index(m)))
    return out


def _join_game(game: str, parts: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """One game's record from runs that played different cells of it (``--levels``, ``--partners``): its cells in
    the protocol's order, a cell played by two runs once (the same deals: a self-play cell of two runs with
    different partners), and the headline worked out again from them."""
    from .run import headline

    first = parts[0]
    for field in ("digest", "reference"):
        if any(p[field] != first[field] for p in parts):
            raise RecordError(f"the runs of {game} have another {field}: they do not measure the same thing")
    members = _members(game, [p["pool"] for p in parts])
    if _whole_pool(game, {**first["pool"], **members}):  # every partner in: the pool as a run of all of it names it
        from cardzoo.agents.pools import pool as shipped

        members = {part: list(getattr(shipped(game), part, ())) for part in PARTS}
    pool_record = {**first["pool"], **members}
    settings = list({s["name"]: s for p in parts for s in p["settings"]}.values())
    order = {name: i for i, name in enumerate(SETTING_NAMES.get(game, ()))}
    settings.sort(key=lambda s: order.get(s["name"], len(order)))
    rank = {s["name"]: i for i, s in enumerate(settings)}
    seen: dict[tuple, Mapping[str, Any]] = {}
    for c in (c for p in parts for c in p["cells"]):
        key = (c["setting"], c["kind"], c["partner"], c["seat"])
        if key in seen:
            if seen[key]["deals"] != c["deals"]:
                raise RecordError(f"{game} {c['setting']}: a cell ({c['kind']}, {c['partner']}, seat {c['seat']}) "
                                  "is in two results with other games: they do not measure the same thing")
            continue
        seen[key] = c

    def position(c: Mapping[str, Any]) -> tuple:
        if c["kind"] == "self":
            return (rank[c["setting"]], 0, 0, 0, 0)
        part = c["part"]
        return (rank[c["setting"]], 1, PARTS.index(part), members[part].index(c["partner"]), c["seat"])

    cells = sorted(seen.values(), key=position)
    reference = None
    if first["reference"] is not None:
        if any("reference_deals" not in c for c in cells):
            raise RecordError(f"a run of {game} was made before the cells kept the reference's deals, so its paired "
                              "comparison cannot be worked out again: merge runs of whole games")
        reference = [{"kind": c["kind"], "part": c["part"], "deals": c["reference_deals"]} for c in cells]
    pool = SimpleNamespace(**{part: tuple(members[part]) for part in PARTS})
    return {**first, "settings": settings, "pool": pool_record, "headline": headline(game, cells, reference, pool),
            "cells": cells}


def _whole_pool(game: str, pool_record: Mapping[str, Any]) -> bool:
    """Whether a game's merged pool holds every member of the shipped pool's played parts."""
    from cardzoo.agents.pools import pool as shipped

    try:
        whole = shipped(game)
    except OptionError:
        return False
    return whole.version == pool_record.get("version") and all(
        set(getattr(whole, part, ())) <= set(pool_record.get(part, ())) for part in pool_record.get("played", ()))


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
    played = {tuple(g["pool"].get("played", ())) for r in results for g in r["games"].values()}
    if len(played) > 1:
        raise RecordError(f"the results played different parts of the pools ({sorted(played)}): they do not "
                          "measure the same thing")
    by_game: dict[str, list[Mapping[str, Any]]] = {}
    whole: dict[str, int] = {}  # game -> a result that played all of it
    for i, r in enumerate(results, 1):
        for game, value in r["games"].items():
            if not r.get("filters"):
                whole.setdefault(game, i)
            by_game.setdefault(game, []).append(value)
            if len(by_game[game]) > 1 and game in whole:
                raise RecordError(f"{game} is in result {i} and an earlier one, and result {whole[game]} played all "
                                  "of it: merge runs of different games, levels or partners")
    games = {g: parts[0] if len(parts) == 1 else _join_game(g, parts) for g, parts in by_game.items()}
    filters = {}

    if any(set(SETTING_NAMES.get(g, ())) - {s["name"] for s in v["settings"]} for g, v in games.items()):
        filters["levels"] = list(dict.fromkeys(s["name"] for v in games.values() for s in v["settings"]))
    if any(r.get("filters", {}).get("partners") is not None for r in results) and not all(
            _whole_pool(g, v["pool"]) for g, v in games.items()):
        filters["partners"] = list(dict.fromkeys(m for v in games.values() for part in v["pool"].get("played", ())
                                                 for m in v["pool"].get(part, ())))
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
