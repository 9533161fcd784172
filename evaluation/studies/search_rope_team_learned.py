"""The Rope Team search on the learned blueprint (``search_learned``) on the report's deals, paired with ``learned``
and ``simple`` on the same deals, with its compute: CPU ms, worlds and rollouts per decision.

Resumable: every finished deal appends one row per team to ``--rows`` (JSONL); a rerun skips the (level, deal,
team) rows already there and goes on, so a later session brings the study to 1,000 deals per level with the same
command and a larger ``--games``. Deals are taken in order, the levels interleaved deal by deal (a stopped run leaves
every level with nearly the same count). ``--summary`` rebuilds the JSON, the CSV and the chart from the rows alone.

Game ``i`` of a level is the report's deal ``i`` (``reset(seed=i)``) with the runner's agent seeds, as in
:mod:`.search_rope_team`, so the committed ``search`` results of that study (``rope_team_search.json``, the search on
the simple strategy at its own budget) pair with these deals too: the summary states them on the deals in common.

Teams: ``search_learned`` in both seats; ``search_learned+learned`` and ``learned+search_learned`` (cross-play with
the blueprint itself, seat 0 first); ``learned`` and ``simple`` in both seats; with ``--matched N``, on the first N
deals, ``search_matched``: the old search (the simple strategy as blueprint and partner model) given
``search_learned``'s CPU per decision (``MATCHED_BUDGET``), paired with ``search_learned`` -- what the same compute
buys without the learned blueprint. Time is ``time.process_time`` inside
the search seats' decisions, one process with one BLAS thread (``OPENBLAS_NUM_THREADS=1``, set by the command
line: a multi-threaded matrix product on a shared machine spins a second core and counts its time), run ``nice``.

    OPENBLAS_NUM_THREADS=1 nice -n 5 python -m cardzoo.evaluation.studies.search_rope_team_learned \\
        --games 1000 --levels hard expert --cross 1000

stopped when its CPU budget was spent, then

    python -m cardzoo.evaluation.studies.search_rope_team_learned --summary

which also rewrites the marked ``search_learned`` block of the committed report (``refresh_report``).

The committed rows, their counts and the commands are in ``evaluation/results/rope_team_search_learned.json``.
The first run (the command above, stopped once to add the loss replays, then when its CPU budget was spent, on a
machine shared by several jobs) played Hard and Expert on deals 0-373 (cross-play on 0-99). Later runs took Normal
to 1,000 deals (``--levels normal --cross 0``), went on with Hard and Expert (``--levels hard expert --cross 0``,
with ``--rows`` on a copy whose new rows were then appended here) and started Easy (``--levels easy --cross 0``);
the next session took Hard, Expert and Easy to 1,000 deals (``--levels hard expert easy --cross 0``) and, beside
it, played the old search at the same compute on Hard and Expert deals 0-299 (``--games 300 --matched 300 --levels
hard expert --cross 0`` with ``--rows`` on a copy, its new rows appended here). The session after took the old
search at the same compute on Hard and Expert to 1,000 deals (``--matched 1000 --cross 0``, one process per level,
each with ``--rows`` on a copy whose new rows were appended here), then the cross-play with ``learned`` on Hard and
Expert to 1,000 deals the same way (``--cross 1000``). The deal counts per level and team are in the JSON; rerun a
command with a larger ``--games`` (``--cross``, ``--matched``) to go on.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import shlex
import signal
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

from cardzoo.agents.blas import one_blas_thread
from cardzoo.agents.registry import fingerprint, rope_team_policy
from cardzoo.agents.rope_team_search import LEARNED_BUDGET, RopeTeamSearch
from cardzoo.envs.common.stats import paired, wilson
from cardzoo.envs.registry import GAMES

from ..report.model import RESULTS, load_result
from .search_rope_team import _Told, play, team

LEVELS = GAMES["rope_team"].levels
ROWS = RESULTS / "rope_team_search_learned.jsonl"
SEARCH = "search_learned"
SELF_PLAY = ((SEARCH,), ("learned",), ("simple",))
CROSS = ((SEARCH, "learned"), ("learned", SEARCH))
TOLD = "told:" + SEARCH  # the search team's lost deals replayed, each seat told its partner's hand (a diagnostic)
# The old search (the simple strategy as blueprint and partner model) given about search_learned's compute: 8x its
# default worlds and ~11x its rollouts, chosen by timing a few held-out deals; both teams' measured CPU per decision
# is in the summary (``compute``). What the same CPU buys without the learned blueprint (issue 28, item 4).
MATCHED = "search_matched"
MATCHED_BUDGET = {"worlds": 2048, "rollouts": 4096}
BUDGETS = {SEARCH: LEARNED_BUDGET, MATCHED: MATCHED_BUDGET}


def label(names: tuple[str, ...]) -> str:
    return "+".join(names * (3 - len(names)))


def play_deal(level: str, seed: int, names: tuple[str, ...] | str) -> dict:
    """One row: the team's result on the report's deal ``seed`` and the search seats' compute."""
    clock = {"seconds": [], "searched": [], "departed": [], "worlds": [], "rollouts": [], "ess": []}
    if names == TOLD:
        agents = [_Told(blueprint=rope_team_policy("learned"), **LEARNED_BUDGET) for _ in range(2)]
    elif names == (MATCHED,):
        agents = [RopeTeamSearch(**MATCHED_BUDGET) for _ in range(2)]
    else:
        agents = team(names)
    record = play(level, seed, agents, clock)
    row = {"level": level, "deal": seed, "team": names if names == TOLD else label(names),
           "outcome": record["outcome"], "win": record["outcome"] == "win"}
    if clock["seconds"]:
        row.update(decisions=len(clock["seconds"]), searched=int(sum(clock["searched"])),
                   departed=int(sum(clock["departed"])), cpu_seconds=float(sum(clock["seconds"])),
                   max_ms=1e3 * max(clock["seconds"]), worlds=int(sum(clock["worlds"])),
                   rollouts=int(sum(clock["rollouts"])), ess=[round(e, 1) for e in clock["ess"]])
    return row


def read_rows(path: Path) -> list[dict]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def run(levels: list[str], games: int, cross: int, path: Path, progress: bool = True, matched: int = 0) -> None:
    """Play the missing rows of deals ``0..games-1`` (cross-play on the first ``cross``, the old search at the same
    compute on the first ``matched``), appending each."""
    rows = read_rows(path)
    done = {(r["level"], r["deal"], r["team"]) for r in rows}
    lost = {(r["level"], r["deal"]) for r in rows if r["team"] == label((SEARCH,)) and not r["win"]}
    start = time.time()
    for seed in range(games):
        for level in levels:
            extra = (CROSS if seed < cross else ()) + (((MATCHED,),) if seed < matched else ())
            for names in SELF_PLAY + extra + (TOLD,):
                key = names if names == TOLD else label(names)
                if (level, seed, key) in done or (names == TOLD and (level, seed) not in lost):
                    continue
                with one_blas_thread():  # the learned seats' one-row products too (see agents/blas.py)
                    row = play_deal(level, seed, names)
                with open(path, "a") as f:
                    f.write(json.dumps(row) + "\n")
                if key == label((SEARCH,)) and not row["win"]:
                    lost.add((level, seed))
            if progress:
                print(f"\r  deal {seed + 1}/{games} ({level}), {time.time() - start:.0f} s", end="", file=sys.stderr,
                      flush=True)
    if progress:
        print(file=sys.stderr)


def _rate(won: list[bool]) -> dict:
    r = wilson(sum(won), len(won))
    return {"wins": r.wins, "games": r.games, "rate": r.rate, "low": r.low, "high": r.high}


def _paired(a: list[bool], b: list[bool]) -> dict:
    c = paired(a, b)
    return {"games": c.games, "difference": c.difference, "low": c.low, "high": c.high, "only_this": c.only_a,
            "only_other": c.only_b, "p_value": c.p_value}


def summarize(rows: list[dict], old: dict | None = None) -> dict:
    """Per level and team: the win rate on the deals every self-play team finished, paired differences with
    ``learned`` and ``simple`` on those deals, the search seats' compute; the old ``search`` on the deals in common
    with its committed results (``old``: ``rope_team_search.json``)."""
    by = defaultdict(dict)
    for r in rows:
        by[r["level"], r["team"]][r["deal"]] = r
    out = {}
    for level in LEVELS:
        teams = {t for (lv, t) in by if lv == level}
        if not teams:
            continue
        base = set.intersection(*(set(by[level, label(n)]) for n in SELF_PLAY)) if all(
            label(n) in teams for n in SELF_PLAY) else set()
        entry = {"deals": len(base), "teams": {}}
        for names in SELF_PLAY + CROSS + ((MATCHED,),):
            t = label(names)
            deals = sorted(set(by[level, t]) & base)
            if not deals:
                continue
            won = [by[level, t][d]["win"] for d in deals]
            cell = {**_rate(won), "first_deal": deals[0], "last_deal": deals[-1]}
            for other in ("learned+learned", "simple+simple") + ((label((SEARCH,)),) if MATCHED in t else ()):
                if other != t:
                    cell["minus_" + other.split("+")[0]] = _paired(won, [by[level, other][d]["win"] for d in deals])
            searched = [by[level, t][d] for d in deals if "decisions" in by[level, t][d]]
            if searched:
                decisions = sum(r["decisions"] for r in searched)
                n_searched = sum(r["searched"] for r in searched)
                ess = [e for r in searched for e in r["ess"]]
                cell["compute"] = {
                    "decisions": decisions, "mean_ms": 1e3 * sum(r["cpu_seconds"] for r in searched) / decisions,
                    "max_ms": max(r["max_ms"] for r in searched), "share_searched": n_searched / decisions,
                    "share_departing_from_blueprint": sum(r["departed"] for r in searched) / decisions,
                    "worlds_drawn_per_search": BUDGETS[MATCHED if MATCHED in t else SEARCH]["worlds"],
                    "rollout_worlds_per_search": sum(r["worlds"] for r in searched) / max(n_searched, 1),
                    "rollouts_per_search": sum(r["rollouts"] for r in searched) / max(n_searched, 1),
                    "median_ess": float(np.median(ess)) if ess else None}
            entry["teams"][t] = cell
        entry["loss_causes"] = _loss_causes(level, [by[level, label((SEARCH,))][d] for d in sorted(base)],
                                            by[level, TOLD])
        old_level = (old or {}).get("levels", {}).get(level, {})
        old_search = old_level.get("teams", {}).get("search+search")
        if old_search and SEARCH + "+" + SEARCH in entry["teams"]:
            deals = [d for d in sorted(base) if d < len(old_search["results"])]
            won = [by[level, label((SEARCH,))][d]["win"] for d in deals]
            was = [old_search["results"][d] == "W" for d in deals]
            entry["old_search"] = {**_rate(was), "mean_ms": old_level.get("time", {}).get("mean_ms"),
                                   "options": (old or {}).get("options"),
                                   "search_learned_minus_search": _paired(won, was) if deals else None}
        out[level] = entry
    return out


def _loss_causes(level: str, rows: list[dict], told: dict) -> dict:
    """The search team's lost deals by cause, as :func:`.search_rope_team.loss_causes` sorts them: *unwinnable* (the
    oracle's ceiling study lost it), *read of the partner* (both seats told the partner's hand win it), *other*;
    deals lost but not yet replayed are *not replayed*."""
    unwinnable = set((load_result(f"rope_team_ceiling_{level}") or {}).get("lost_seeds", []))
    counts: dict[str, int] = defaultdict(int)
    seeds: dict[str, list[int]] = defaultdict(list)
    for r in rows:
        if r["win"]:
            continue
        d = r["deal"]
        cause = ("unwinnable" if d in unwinnable else "not replayed" if d not in told
                 else "read of the partner" if told[d]["win"] else "other")
        counts[f"{cause}, {r['outcome']}"] += 1
        seeds[cause].append(d)
    return {"counts": dict(sorted(counts.items())), "seeds": dict(seeds)}


def write_csv(levels: dict, path: Path) -> None:
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["level", "team", "games", "win_rate", "low95", "high95", "minus_learned", "minus_learned_low95",
                    "minus_learned_high95", "minus_simple", "minus_simple_low95", "minus_simple_high95",
                    "mean_ms_per_decision", "rollouts_per_search"])
        for level, entry in levels.items():
            for t, c in entry["teams"].items():
                diffs = [round(c[k][x], 4) if k in c else "" for k in ("minus_learned", "minus_simple")
                         for x in ("difference", "low", "high")]
                comp = c.get("compute", {})
                w.writerow([level, t, c["games"], round(c["rate"], 4), round(c["low"], 4), round(c["high"], 4), *diffs,
                            round(comp["mean_ms"], 2) if comp else "", round(comp["rollouts_per_search"], 1) if comp
                            else ""])


def chart(levels: dict, path: Path) -> list[Path]:
    from cardzoo.envs.common.charts import Bar, bar_chart

    groups = {f"{level} ({entry['deals']} deals)": [
        Bar(t, c["rate"], c["low"], c["high"], agent=t.split("+")[0] if t.split("+")[0] == t.split("+")[1] else None)
        for t, c in entry["teams"].items()] + ([Bar("search (simple blueprint; committed)", entry["old_search"]["rate"],
                                                    entry["old_search"]["low"], entry["old_search"]["high"],
                                                    agent="search")] if "old_search" in entry else [])
        for level, entry in levels.items()}
    return bar_chart("Rope Team: search on the learned blueprint, the report's deals", groups, path)


def write_summary(rows_path: Path = ROWS) -> dict:
    rows = read_rows(rows_path)
    json_path = rows_path.with_suffix(".json")
    earlier = json.loads(json_path.read_text()) if json_path.is_file() else {}
    data = {"commands": earlier.get("commands", []), "agent": SEARCH, "budget": LEARNED_BUDGET,
            "matched_budget": MATCHED_BUDGET,
            "blueprint_digest": fingerprint("learned", "rope_team_v0"), "rows": rows_path.name,
            "python": platform.python_version(), "numpy": np.__version__, "runs": earlier.get("runs", []),
            "levels": summarize(rows, load_result("rope_team_search"))}
    json_path.write_text(json.dumps(data, indent=1) + "\n")
    write_csv(data["levels"], rows_path.with_suffix(".csv"))
    chart(data["levels"], rows_path.with_suffix(".png"))
    return data


def _record_command(rows_path: Path, command: str, run_info: dict | None = None) -> None:
    json_path = rows_path.with_suffix(".json")
    json_path.parent.mkdir(parents=True, exist_ok=True)
    data = json.loads(json_path.read_text()) if json_path.is_file() else {}
    if command not in data.setdefault("commands", []):
        data["commands"].append(command)
    if run_info:
        data.setdefault("runs", []).append(run_info)
    json_path.write_text(json.dumps(data, indent=1) + "\n")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=1000, help="deals per level (rows already there are kept)")
    parser.add_argument("--cross", type=int, default=0, help="deals per level with search_learned+learned, both orders")
    parser.add_argument("--matched", type=int, default=0,
                        help="deals per level with the old search at search_learned's compute (MATCHED_BUDGET)")
    parser.add_argument("--levels", nargs="+", default=["hard", "expert"], choices=LEVELS)
    parser.add_argument("--rows", type=Path, default=ROWS)
    parser.add_argument("--summary", action="store_true", help="only rebuild the JSON, CSV and chart from the rows")
    args = parser.parse_args(argv)
    if not args.summary:
        command = "OPENBLAS_NUM_THREADS=1 nice -n 5 python -m cardzoo.evaluation.studies.search_rope_team_learned " \
            + shlex.join(sys.argv[1:] if argv is None else argv)
        _record_command(args.rows, command)
        start, before = time.process_time(), len(read_rows(args.rows))
        # Stopped with kill (a background job ignores Ctrl-C): the run is still recorded, its rows are all kept.
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
        try:
            run(args.levels, args.games, args.cross, args.rows, matched=args.matched)
        finally:
            _record_command(args.rows, command, {
                "command": command, "rows_added": len(read_rows(args.rows)) - before,
                "cpu_seconds": time.process_time() - start, "blas_threads": os.environ.get("OPENBLAS_NUM_THREADS"),
                "load_average": os.getloadavg(), "date": time.strftime("%Y-%m-%d %H:%M")})
    write_summary(args.rows)
    if args.rows == ROWS:
        refresh_report()


def refresh_report(folder: Path | None = None) -> None:
    """Bring the committed summary into the committed report (``folder``, default ``evaluation/results/report``):
    the search_learned block of its Rope Team section and the study's rows (the rest of the report takes hours to
    replay; :func:`..report.writer.refresh_study`)."""
    from ..report.model import RESULTS as COMMITTED
    from ..report.search import rope_team_learned
    from ..report.writer import refresh_study

    refresh_study(folder or COMMITTED / "report", "rope_team", rope_team_learned, ROWS.with_suffix(".json").name)

if __name__ == "__main__":
    if os.environ.get("OPENBLAS_NUM_THREADS") != "1":  # before numpy starts its threads: see the docstring
        os.environ["OPENBLAS_NUM_THREADS"] = "1"
        os.execv(sys.executable, [sys.executable, "-m", "cardzoo.evaluation.studies.search_rope_team_learned",
                                  *sys.argv[1:]])
    main()
