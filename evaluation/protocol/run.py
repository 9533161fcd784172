"""Playing the benchmark: every cell of every game through the evaluation runner, then the result as JSON-ready data.

The deals and every agent's seeds come from the run's secret key (:mod:`.seeds`; a fresh one unless given), which
the result records once the run is over. An outside agent (``module:callable``) is probed in a worker process of
its own before any game (a spec that cannot make an agent is refused, naming it) and plays every game in one,
under the run's :class:`~cardzoo.agents.isolated.Limits` (:mod:`cardzoo.agents.isolated`): it never shares a
process with the key, the env or another agent.

The runner plays each cell non-strict (``Matchup(strict=False)``): an illegal move loses its game by the env's
penalty and is counted; an agent that raises, returns something that is not an action, runs out of time or whose
process ends loses that game, which is named (agent, seat, env, deal, decision) in the cell's ``error_examples``.
Such a cell is marked ``failed`` and the result lists it in ``failures``; the run stops after it unless
``keep_going`` (then every cell is played), and the result says whether it is ``complete``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import platform
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor
from importlib.metadata import version
from multiprocessing import get_context
from pathlib import Path
from typing import Any

from cardzoo.agents.isolated import Limits, probe
from cardzoo.agents.pools import PARTS
from cardzoo.agents.registry import agent_fingerprint, fingerprint, is_outside, make_agent
from cardzoo.envs.common.errors import OptionError
from cardzoo.envs.common.seeding import fresh_key
from cardzoo.envs.common.stats import Z95, paired, wilson
from cardzoo.envs.registry import GAMES
from cardzoo.evaluation.matches.runner import Matchup, run

from . import protocol
from .protocol import Cell, Setting
from .results import result_digest
from .seeds import BENCHMARK, benchmark_seeds, check_benchmark_seeds, keyed_deals, parse_key

ERROR_EXAMPLES = 3  # error messages kept per cell (the count holds them all)


def cell_games(budget: str | None = None, games: int | None = None) -> int:
    """The games per cell of a budget ("quick", "full"), or ``games`` itself (a custom budget)."""
    if games is not None:
        if isinstance(games, bool) or not isinstance(games, int) or games < 1:
            raise OptionError(f"games per cell must be a positive integer, got {games!r}")
        benchmark_seeds(games)  # within the reserved range
        return games
    if budget not in protocol.BUDGETS:
        raise OptionError(f"unknown budget {budget!r}; budgets: "
                          + ", ".join(f"{k} ({v} games per cell)" for k, v in protocol.BUDGETS.items()))
    return protocol.BUDGETS[budget]


def agent_digest(spec: str, game: str, mark: str | None = None) -> str:
    """What identifies the agent's behaviour in ``game``: a policy file's SHA-256, an outside agent's own source
    files' (as its worker found them), the registry's fingerprint of a learned agent's weights (``mark``, if the
    caller has it), or the package version of a rule agent."""
    env = GAMES[game].env_id
    if spec.endswith(".npz"):
        return "sha256:" + hashlib.sha256(Path(spec).read_bytes()).hexdigest()
    mark = fingerprint(spec, env) if mark is None else mark
    if mark:
        return ("sha256:" if ":" in spec else "weights:") + mark
    return f"code:cardzoo-{version('cardzoo')}"


def _chunk(games: int) -> int:
    # Eight chunks per cell (at most 250 games each): both workers busy in small cells, resumable in big ones; a
    # function of the games alone, so a resumed run finds the chunks whatever its --workers.
    return min(250, max(5, -(-games // 8)))


def _play(matchup: Matchup, deals: list[int], key: bytes, workers: int, cache: Path | None,
          executor: Executor | None, progress: bool) -> list[dict[str, Any]]:
    records = run(matchup, len(deals), seeds=deals, seat_key=key, workers=workers, cache_dir=cache,
                  chunk=_chunk(len(deals)), progress=progress, executor=executor)
    check_benchmark_seeds(r["seed"] for r in records)
    return records


def _code(game: str, record: Mapping[str, Any], cell: Cell, seat: int | None) -> str:
    if protocol.error_by_agent(record, cell):
        return "E"
    if protocol.illegal_by_agent(record, cell):
        return "I"
    return "W" if protocol.won(game, record, seat) else "L"


def _cell_result(game: str, cell: Cell, records: list[dict[str, Any]],
                 deal_of: Mapping[int, int] | None = None) -> dict[str, Any]:
    deals = "".join(_code(game, r, cell, cell.seat) for r in records)
    wins = deals.count("W")
    rate = wilson(wins, len(records))
    seats = protocol.agent_seats(cell)
    cpu = sum(r["cpu"][s] for r in records for s in seats)
    decisions = sum(r["decisions"][s] for r in records for s in seats)
    errors = [(f"deal {deal_of[r['seed']]}: " if deal_of else "") + r["error"] for r in records
              if protocol.error_by_agent(r, cell)]
    return {
        "setting": cell.setting.name, "kind": cell.kind, "partner": cell.other, "part": cell.part, "seat": cell.seat,
        "games": len(records), "wins": wins, "rate": rate.rate, "low": rate.low, "high": rate.high,
        "illegal": deals.count("I"), "errors": len(errors), "error_examples": errors[:ERROR_EXAMPLES],
        "outcomes": dict(sorted(Counter(str(r.get("outcome")) for r in records).items())),
        "agent_cpu_s": cpu, "agent_decisions": decisions, "deals": deals, "failed": bool(errors),
    }


def _rate(wins: int, games: int) -> dict[str, float | int]:
    r = wilson(wins, games)
    return {"wins": wins, "games": games, "rate": r.rate, "low": r.low, "high": r.high}


def _pooled(cells: Sequence[Mapping[str, Any]]) -> dict[str, float | int] | None:
    if not cells:
        return None
    return _rate(sum(c["wins"] for c in cells), sum(c["games"] for c in cells))


def _paired(agent: Sequence[Mapping[str, Any]], reference: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    if not agent:
        return None
    a = [ch == "W" for c in agent for ch in c["deals"]]
    b = [ch == "W" for c in reference for ch in c["deals"]]
    p = paired(a, b, Z95)
    return {"games": p.games, "only_agent": p.only_a, "only_reference": p.only_b, "difference": p.difference,
            "low": p.low, "high": p.high, "p_value": p.p_value}


def headline(game: str, cells: Sequence[Mapping[str, Any]], reference: Sequence[Mapping[str, Any]] | None,
             pool) -> dict[str, Any]:
    """The game's headline numbers from its cells (module docstring of ``cardzoo.evaluation.protocol``): the weak
    part is the robustness row, in neither ``cross["all"]`` nor the worst partner."""
    own = [c for c in cells if c["kind"] == "self"]
    parts = {part: [c for c in cells if c["part"] == part] for part in PARTS}
    self_rate = _pooled(own)
    cross = {part: _pooled(cs) for part, cs in parts.items()}
    cross["all"] = _pooled(parts["dev"] + parts["test"])  # the competent partners
    gap = {part: (None if self_rate is None or cross[part] is None else self_rate["rate"] - cross[part]["rate"])
           for part in cross}
    members = {}
    for part in PARTS:
        for other in getattr(pool, part, ()):
            mine = [c for c in parts[part] if c["partner"] == other]
            if not mine:  # a run stopped by a failure before this member's cells
                continue
            members[other] = {"part": part, **_pooled(mine),
                              "by_seat": [(_pooled([c for c in mine if c["seat"] == s]) or {}).get("rate")
                                          for s in (0, 1)],
                              "outcomes": dict(sum((Counter(c["outcomes"]) for c in mine), Counter()))}
    competent = [m for m in members if members[m]["part"] != "weak"]
    worst = min(competent, key=lambda m: (members[m]["rate"], m)) if competent else None
    settings = {}
    for setting in dict.fromkeys(c["setting"] for c in cells):
        mine = [c for c in cells if c["setting"] == setting]
        s = _pooled([c for c in mine if c["kind"] == "self"])
        row = {"self": s}
        for part in PARTS:
            row[part] = _pooled([c for c in mine if c["part"] == part])
            row[f"gap_{part}"] = None if s is None or row[part] is None else s["rate"] - row[part]["rate"]
        settings[setting] = row
    decisions = sum(c["agent_decisions"] for c in cells)
    result = {
        "self": self_rate, "cross": cross, "gap": gap,
        "worst": None if worst is None else {"partner": worst, "part": members[worst]["part"],
                                             "rate": members[worst]["rate"]},
        "members": members, "settings": settings,
        "illegal": sum(c["illegal"] for c in cells), "errors": sum(c["errors"] for c in cells),
        "cpu_ms_per_decision": 1000 * sum(c["agent_cpu_s"] for c in cells) / decisions if decisions else None,
        "decisions": decisions,
    }
    if reference is not None:
        result["vs_reference"] = {
            "self": _paired(own, [c for c in reference if c["kind"] == "self"]),
            **{part: _paired(parts[part], [c for c in reference if c["part"] == part]) for part in PARTS},
        }
    return result


def _pools_of(games: Sequence[str], pools: Mapping[str, Any] | None) -> dict[str, Any]:
    if pools is not None:
        missing = [g for g in games if g not in pools]
        if missing:
            raise OptionError(f"no pool given for {', '.join(missing)}")
        return {g: pools[g] for g in games}
    from cardzoo.agents.pools import pool

    return {g: pool(g) for g in games}


def _playable(agent: str, games: Sequence[str] | None, limits: Limits | None = None,
              marks: dict[tuple[str, str], str] | None = None) -> tuple[list[str], dict[str, str]]:
    """The games to benchmark ``agent`` on, and why any registered game is left out. Games named explicitly must
    all be playable; otherwise a game the agent does not play (or, an outside agent, does not declare) is skipped,
    and none at all is an error. An outside agent is probed in its own worker, never imported here. The agent's
    fingerprint in each playable game goes into ``marks``, from the agent made to check it."""
    marks = {} if marks is None else marks
    if isinstance(games, str):  # one game named as a string, not its letters
        games = [games]
    chosen = list(GAMES) if games is None else list(dict.fromkeys(_game(g) for g in games))
    playable, skipped = [], {}
    for game in chosen:
        try:
            if is_outside(agent):
                found = probe(agent, game, limits)
                if found.games is not None and game not in found.games:
                    raise OptionError(f"agent spec {agent!r} declares the games {', '.join(found.games) or 'none'}, "
                                      f"not {game}")
                marks[agent, GAMES[game].env_id] = found.digest
            else:
                made = [make_agent(agent, GAMES[game].env_id, seat=seat) for seat in (0, 1)]
                marks[agent, GAMES[game].env_id] = agent_fingerprint(made[0])
        except OptionError as err:
            if games is not None:
                raise
            skipped[game] = str(err)
        else:
            playable.append(game)
    if not playable:
        reasons = "; ".join(dict.fromkeys(skipped.values()))
        raise OptionError(f"agent spec {agent!r} plays none of the benchmark's games: {reasons}")
    return playable, skipped


def _parts(budget: str | None, parts: Sequence[str] | None) -> tuple[str, ...]:
    if parts is None:
        return protocol.BUDGET_PARTS.get(budget, PARTS)
    if isinstance(parts, str):
        parts = [parts]
    unknown = [p for p in parts if p not in PARTS]
    if unknown or not parts:
        raise OptionError(f"the pool parts are {', '.join(PARTS)}; got {list(parts)!r}")
    return tuple(p for p in PARTS if p in parts)


def _chosen_settings(game: str, levels: Sequence[str] | None, games: Sequence[str]) -> tuple[Setting, ...]:
    every = protocol.SETTINGS[game]
    if levels is None:
        return every
    unknown = [lv for lv in levels if not any(lv in protocol.SETTING_NAMES[g] for g in games)]
    if unknown:
        raise OptionError(f"no setting {unknown[0]!r} in " + "; ".join(
            f"{GAMES[g].title}: {', '.join(protocol.SETTING_NAMES[g])}" for g in games))
    return tuple(s for s in every if s.name in levels)


def _chosen_members(pool, partners: Sequence[str] | None, games: Sequence[str]):
    if partners is None:
        return pool
    from cardzoo.agents.pools import pool as shipped

    known = {m for g in games for m in shipped(g).members()} | set(pool.members())
    unknown = [p for p in partners if p not in known]
    if unknown:
        raise OptionError(f"no partner {unknown[0]!r} in the pools; members: {', '.join(sorted(known))}")
    return dataclasses.replace(pool, **{part: tuple(m for m in getattr(pool, part, ()) if m in partners)
                                        for part in PARTS})


def _game(name: str) -> str:
    from cardzoo.envs.registry import spec

    return spec(name).name


def benchmark(agent: str, games: Sequence[str] | None = None, budget: str = "quick", games_per_cell: int | None = None,
              pools: Mapping[str, Any] | None = None, reference: Mapping[str, str] | None = None,
              workers: int | None = None, cache: str | Path | None = None, executor: Executor | None = None,
              progress: bool = False, command: str | None = None, deal_key: bytes | str | None = None,
              limits: Limits | None = None, keep_going: bool = False, levels: Sequence[str] | None = None,
              partners: Sequence[str] | None = None, parts: Sequence[str] | None = None) -> dict[str, Any]:
    """Score ``agent`` (a registry name, a ``.npz`` policy file or ``module:callable``) by the protocol: every
    cell of ``games`` (default: every game it plays) on the budget's games per cell (``games_per_cell`` overrides
    it: a custom budget), with ``pools`` (game -> pool; default ``cardzoo.agents.pools``) and the paired
    comparison against ``reference`` (game -> spec; default each game's baseline) on the same deals; ``workers``
    processes (default 1: this one) or ``executor`` (e.g. ``ray_backend.RayExecutor``), finished chunks kept in
    ``cache``. The deals come from ``deal_key`` (bytes, or the hex a result records; default a fresh secret key);
    outside agents play in worker processes under ``limits``; a cell where the agent fails stops the run unless
    ``keep_going`` (module docstring). ``levels`` (setting names) and ``partners`` (pool members) play only those
    cells: a partial result, which says so (``filters``). ``parts`` are the pool parts played (default the
    budget's: quick the test part, full and a custom budget every part). Returns the result, JSON-ready
    (:func:`cardzoo.evaluation.protocol.results.write` writes it with its table and chart)."""
    started = time.perf_counter()
    n = cell_games(budget, games_per_cell)
    parts = _parts(budget if games_per_cell is None else None, parts)
    key = fresh_key() if deal_key is None else deal_key if isinstance(deal_key, bytes) else parse_key(deal_key)
    if len(key) != 32:
        raise OptionError(f"a deal key is 32 bytes, got {len(key)}")
    limits = limits or Limits()
    deals = keyed_deals(key, n)
    deal_of = {seed: i for i, seed in enumerate(deals)}
    marks: dict[tuple[str, str], str] = {}  # (spec, env) -> fingerprint, each worked out once (the cache keys)
    chosen, skipped = _playable(agent, games, limits, marks)
    pools = _pools_of(chosen, pools)
    settings = {g: _chosen_settings(g, levels, chosen) for g in chosen}
    for game in [g for g in chosen if not settings[g]]:
        skipped[game] = f"none of the levels {', '.join(levels)} is one of its settings"
        chosen.remove(game)
    if not chosen:
        raise OptionError(f"no game of {agent!r} has the levels {', '.join(levels)}")
    pools = {g: _chosen_members(pools[g], partners, chosen) for g in chosen}
    references = {g: (reference or {}).get(g, GAMES[g].baseline) for g in chosen}
    # Every spec is checked before any game is played, and its fingerprint (what the cache keys on: weights, an
    # outside agent's sources) worked out once per game here, not again for every cell.
    for game in chosen:
        env = GAMES[game].env_id
        for spec in (*pools[game].members(), references[game]):
            if (spec, env) not in marks:
                marks[spec, env] = (probe(spec, game, limits).digest if is_outside(spec)
                                    else agent_fingerprint(make_agent(spec, env)))
    cache = Path(cache) if cache else None
    workers = workers or 1
    own_pool = None
    if executor is None and workers > 1:
        own_pool = executor = ProcessPoolExecutor(max_workers=workers, mp_context=get_context("fork"))
    failures: list[dict[str, Any]] = []
    try:
        out_games = {}
        for game in chosen:
            env = GAMES[game].env_id
            ref = references[game]
            cell_results, ref_results = [], []
            for cell in protocol.cells(game, pools[game], settings[game], parts):
                options = dict(cell.setting.options)
                seats = cell.agents(agent)
                matchup = Matchup.of(env, seats, strict=False, isolation=limits, stop_on_failure=not keep_going,
                                     fingerprints=[marks[s, env] for s in seats], **options)
                records = _play(matchup, deals, key, workers, cache, executor, progress)
                cell_results.append(_cell_result(game, cell, records, deal_of))
                if ref != agent:
                    seats = cell.agents(ref)
                    ref_matchup = Matchup.of(env, seats, strict=False, isolation=limits,
                                             fingerprints=[marks[s, env] for s in seats], **options)
                    ref_records = _play(ref_matchup, deals, key, workers, cache, executor, progress)
                    ref_cell = _cell_result(game, cell, ref_records, deal_of)
                    ref_results.append(ref_cell)
                    cell_results[-1]["reference_wins"] = ref_cell["wins"]
                    cell_results[-1]["reference_deals"] = ref_cell["deals"]  # the paired test, again after a merge
                if cell_results[-1]["failed"]:
                    failures.append({"game": game, "cell": cell.name, "setting": cell.setting.name,
                                     "errors": cell_results[-1]["errors"],
                                     "first": cell_results[-1]["error_examples"][0]})
                    if not keep_going:
                        break
            out_games[game] = {
                "title": GAMES[game].title, "digest": agent_digest(agent, game, marks[agent, env]),
                "settings": [{"name": s.name, "options": dict(s.options)} for s in settings[game]],
                "pool": {"version": getattr(pools[game], "version", None),
                         **{part: list(getattr(pools[game], part, ())) for part in PARTS}, "played": list(parts)},
                "reference": ref if ref != agent else None,
                "headline": headline(game, cell_results, ref_results if ref != agent else None, pools[game]),
                "cells": cell_results,
            }
            if failures and not keep_going:
                break
    finally:
        if own_pool is not None:
            own_pool.shutdown()
    return {
        "protocol": protocol.VERSION, "package": version("cardzoo"), "agent": agent,
        "digest": result_digest(out_games),
        "budget": budget if games_per_cell is None else "custom", "games_per_cell": n,
        "deals": {"key": key.hex(), "count": n, "range": [BENCHMARK.start, BENCHMARK.stop - 1]},
        "limits": {"decision_seconds": limits.decision_seconds, "startup_seconds": limits.startup_seconds,
                   "memory_mb": limits.memory_mb},
        "command": command, "skipped": skipped, "games": out_games,
        "filters": {k: list(v) for k, v in (("levels", levels), ("partners", partners)) if v is not None},
        "failures": failures, "complete": not failures or keep_going,
        "compute": compute(out_games, started, workers, executor if executor is not own_pool else None),
    }


def compute(games: Mapping[str, Any], started: float, workers: int, executor: Executor | None) -> dict[str, Any]:
    """What a run used: its wall time (chunks read from a cache cost none), where it ran, and the benchmarked agent's
    own CPU time (its decisions times its CPU per decision), in total and per game."""
    per_game = {g: (r["headline"]["cpu_ms_per_decision"] or 0.0) * r["headline"]["decisions"] / 1000
                for g, r in games.items()}
    return {"wall_seconds": round(time.perf_counter() - started, 1),
            "backend": "local" if executor is None else type(executor).__name__, "workers": workers,
            "cpus": os.cpu_count(), "machine": platform.machine(),
            "agent_cpu_seconds": round(sum(per_game.values()), 1),
            "agent_cpu_seconds_per_game": {g: round(v, 1) for g, v in per_game.items()}}
