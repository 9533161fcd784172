"""The Summit Rush search on the learned blueprint (``search_learned``) on the report's deals, paired with two
``learned`` and two ``simple`` players on the same deals: win rates, paired differences, CPU per decision, and where
its losses come from.

Deal ``i`` is the report's deal ``i`` (``reset(seed=i)`` of the silent timed level, the runner's agent seeds), so
every team meets the same deals. Each finished deal appends one line (all three teams) to ``--jsonl``; a rerun skips
the deals already there for the same level and search settings and continues, so the study can be brought to 1,000
deals per level in several sittings. The summary (``--out`` JSON, a CSV and a PNG beside it) is rebuilt from the
JSONL at the end of every run (``--summary-only``: without playing); ``--report`` then rewrites the study's block of
the committed report (``evaluation/results/report/summary.md``) from it.

Time is CPU time (``time.process_time``) inside the search seats' ``act``. The two seats of a search team share one
search per tick (the memo), so the first seat to ask pays it: ``ms_per_decision`` is the mean over both seats'
decisions, ``ms_per_tick`` the team's per tick (a search seat with another partner pays ``ms_per_tick``). The
learned policy's matrix products must run on one BLAS thread (``OPENBLAS_NUM_THREADS=1``): with OpenBLAS's threads
on a loaded 2-core machine the same search cost five times the CPU time.

Talking levels (``--talking N``): ``search_learned`` says nothing, so a team of two hears nothing and should play
the talking game exactly as the silent one. The first ``N`` deals of each level are played again talking (the search
team only, rows in ``summit_rush_search_learned_talking.jsonl``) and the summary counts the deals whose outcome,
ticks, score and collisions equal the silent game's; the report takes the silent figure for the talking level only
when every checked deal is the same game.

Losses: *stuck* (the stocks ran out, nothing fits) or *time*; each deal the search team loses is played again by a
*told* team -- the same blueprint and candidates, its only world the true deal (a diagnostic handed the hidden
cards, not an agent): a deal it wins was lost to the hidden cards, one it loses too to the limits of the
blueprint's rollouts.

    OPENBLAS_NUM_THREADS=1 nice -n 5 python -m cardzoo.evaluation.studies.search_learned_summit_rush \\
        --levels normal hard --games 1000

Dev settings were tried on deals 5000.. (never the report's first ones), in their own JSONL and summary
(``summit_rush_search_learned_dev.{jsonl,json}``), e.g.

    OPENBLAS_NUM_THREADS=1 nice -n 5 python -m cardzoo.evaluation.studies.search_learned_summit_rush --levels hard \
        --games 20 --start 5000 --z 1 --wins-only --jsonl evaluation/results/summit_rush_search_learned_dev.jsonl \
        --out /tmp/dev.json
    python -m cardzoo.evaluation.studies.search_learned_summit_rush --summary-only --every-setting \
        --jsonl evaluation/results/summit_rush_search_learned_dev.jsonl \
        --out evaluation/results/summit_rush_search_learned_dev.json

Tried there (20 deals a level unless said): z = 1 on scores (a win plus the stock cards left), z = 2.5 on scores
(Hard, 13 deals), z = 0.5 on scores (Normal, 4 deals: stopped), z = 1 on wins only (Hard) -- the figures are in the
dev summary. On Hard, z = 1 on scores left the blueprint in a quarter of its searches and lost 25 points to
``learned`` (8 of 20 against 13); z = 2.5 hardly ever left it (the same games as ``learned``); wins only gave 12 of
20 against ``learned``'s 13, and is the setting of ``search_learned`` and of the main run.
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
from collections import Counter
from pathlib import Path

import numpy as np

from cardzoo.agents.registry import fingerprint, make_agent
from cardzoo.agents.seeding import agent_seed
from cardzoo.agents.summit_rush_rollouts import blueprint_moves, rollout_values
from cardzoo.agents.summit_rush_search import Public, SummitRushSearch, candidates
from cardzoo.envs import summit_rush_v0
from cardzoo.envs.common.progress import Progress
from cardzoo.envs.common.stats import paired, wilson
from cardzoo.envs.registry import GAMES

from ..report.model import RESULTS
from ..report.targets import BEST

TEAMS = ("search_learned", "learned", "simple")
TARGETS = BEST["summit_rush"]  # issue 28's targets for the best agent


def make_env(level: str, talk: bool = False):
    return summit_rush_v0.parallel_env(level=level, talk=talk, illegal_action="raise")


def play(env, seed: int, agents: list) -> tuple[dict, list[float]]:
    """One game of deal ``seed``: its end info and the search seats' CPU seconds per decision."""
    obs, _ = env.reset(seed=seed)
    for seat, agent in enumerate(agents):
        agent.reset(agent_seed(seed, seat))
    info: dict = {}
    clock: list[float] = []
    while env.agents:
        actions = {}
        for seat, name in enumerate(env.possible_agents):
            start = time.process_time()
            actions[name] = agents[seat].act(obs[name]["observation"], obs[name]["action_mask"])
            if isinstance(agents[seat], SummitRushSearch):
                clock.append(time.process_time() - start)
        obs, _, _, _, infos = env.step(actions)
        info = infos[env.possible_agents[0]]
    return info, clock


class Told:
    """The search's blueprint and candidates handed the true deal as their only world (a diagnostic: it sees the
    hidden cards); it plays the candidate of best value, the blueprint's move on ties."""

    def __init__(self, env, blueprint):
        self.env, self.blueprint = env, blueprint

    def reset(self, seed=None) -> None:
        pass

    def act(self, observation, action_mask) -> int:
        bits = int.from_bytes(np.packbits(observation.view(np.uint8), bitorder="little").tobytes(), "little")
        pub = Public(bits, observation.shape[0], action_mask.shape[0])
        first = blueprint_moves(self.env.game, self.blueprint)
        cands = [first, *(c for c in candidates(pub) if c != first)]
        values = rollout_values([self.env.game], cands, None, self.blueprint)[0].tolist()
        return cands[values.index(max(values))][pub.table.seat]


def settings(args) -> dict:
    config = {"worlds": args.worlds, "z": args.z, "blueprint_ticks": args.blueprint_ticks, "blueprint": "learned"}
    return config | ({"wins_only": True} if args.wins_only else {})  # rows made before the option lack the key


def _game(info: dict) -> dict:
    return {"outcome": info["outcome"], "score": info.get("score"), "peaks_left": info.get("peaks_left"),
            "collisions": info.get("conflicts", 0) + info.get("bounced", 0), "ticks": info.get("ticks")}


def search_team(config: dict) -> list[SummitRushSearch]:
    return [SummitRushSearch(worlds=config["worlds"], z=config["z"], blueprint="learned",
                             blueprint_ticks=config["blueprint_ticks"], wins_only=config.get("wins_only", False))
            for _ in range(2)]


def play_deal(env, level: str, seed: int, config: dict) -> dict:
    row: dict = {"level": level, "seed": seed, "settings": config}
    for team in TEAMS:
        if team == "search_learned":
            agents = search_team(config)
        else:
            agents = [make_agent(team, "summit_rush_v0") for _ in range(2)]
        info, clock = play(env, seed, agents)
        cell = _game(info)
        if clock:
            cell.update(decisions=len(clock), cpu=sum(clock), max_ms=1000 * max(clock),
                        searches=sum(a.searches for a in agents), rollouts=sum(a.rollouts for a in agents),
                        deviations=sum(a.deviations for a in agents))
            if info["outcome"] != "win":
                told = [Told(env, agents[0].blueprint) for _ in range(2)]
                cell["told"] = play(env, seed, told)[0]["outcome"]
        row[team] = cell
    return row


def play_talking(env, level: str, seed: int, config: dict) -> dict:
    """Deal ``seed`` of the talking level (``env``) played by two search seats: the row the silent row of the same
    deal is checked against (:func:`talking_check`)."""
    agents = search_team(config)
    info, clock = play(env, seed, agents)
    return {"level": level, "seed": seed, "settings": config, **_game(info), "decisions": len(clock),
            "cpu": sum(clock)}


def talking_check(silent: list[dict], talking: list[dict]) -> dict:
    """``search_learned`` says nothing, so a team of two hears nothing and its talking game should be its silent
    game: on every deal of ``talking`` (rows of one level and setting), the same outcome, ticks, score and
    collisions as the silent row of the same deal (``silent``)."""
    by_seed = {r["seed"]: r["search_learned"] for r in silent}
    keys = ("outcome", "ticks", "score", "collisions")
    pairs = [(r, by_seed[r["seed"]]) for r in talking if r["seed"] in by_seed]
    same = [all(t[k] == q[k] for k in keys) for t, q in pairs]
    rate = wilson(sum(t["outcome"] == "win" for t, _ in pairs), len(pairs))
    return {"deals": len(pairs), "same_game": sum(same),
            "different": [t["seed"] for (t, _), ok in zip(pairs, same, strict=True) if not ok],
            "wins": rate.wins, "rate": rate.rate, "low": rate.low, "high": rate.high,
            "silent_wins": sum(q["outcome"] == "win" for _, q in pairs)}


def read_rows(path: Path) -> list[dict]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def summarise(rows: list[dict], config: dict, talking: list[dict] = ()) -> dict:
    """Per level: each team's wins and losses, the search's cost and loss sources, the pairings; with ``talking``
    rows (:func:`play_talking`), the talking games checked against the silent ones."""
    out: dict = {"settings": config, "teams": list(TEAMS), "levels": {}}
    for level in dict.fromkeys(r["level"] for r in rows):
        mine = sorted((r for r in rows if r["level"] == level and r["settings"] == config), key=lambda r: r["seed"])
        if not mine:
            continue
        cells = {}
        won = {t: [r[t]["outcome"] == "win" for r in mine] for t in TEAMS}
        for t in TEAMS:
            games = [r[t] for r in mine]
            rate = wilson(sum(won[t]), len(games))
            lost = [g for g in games if g["outcome"] != "win"]
            cell = {"games": len(games), "wins": sum(won[t]), "rate": rate.rate, "low": rate.low, "high": rate.high,
                    "losses": dict(Counter(g["outcome"] for g in lost)),
                    "collisions": sum(g["collisions"] for g in games),
                    "results": "".join("W" if w else "L" for w in won[t])}
            if t == "search_learned":
                decisions, cpu = sum(g["decisions"] for g in games), sum(g["cpu"] for g in games)
                ticks = decisions / 2
                searches = sum(g["searches"] for g in games)
                cell.update(ms_per_decision=1000 * cpu / decisions, ms_per_tick=1000 * cpu / ticks,
                            ms_per_decision_max=max(g["max_ms"] for g in games),
                            searches_per_tick=searches / ticks,
                            rollouts_per_search=sum(g["rollouts"] for g in games) / max(searches, 1),
                            deviations_per_search=sum(g["deviations"] for g in games) / max(searches, 1),
                            loss_sources={
                                "hidden_cards": dict(Counter(g["outcome"] for g in lost if g.get("told") == "win")),
                                "rollout_limits": dict(Counter(g["outcome"] for g in lost
                                                               if g.get("told") != "win"))})
                for other in ("learned", "simple"):
                    cmp = paired(won[t], won[other])
                    cell[f"vs_{other}"] = {"only_this": cmp.only_a, "only_other": cmp.only_b,
                                           "difference": cmp.difference, "low": cmp.low, "high": cmp.high,
                                           "mcnemar_p": cmp.p_value}
            cells[t] = cell
        out["levels"][level] = {"seeds": f"{mine[0]['seed']}..{mine[-1]['seed']} ({len(mine)} deals)",
                                "target": TARGETS.get(level), "cells": cells}
        old = old_search(level, {r["seed"]: w for r, w in zip(mine, won["search_learned"], strict=True)})
        if old:
            out["levels"][level]["old_search"] = old
        spoken = [r for r in talking if r["level"] == level and r["settings"] == config]
        if spoken:
            out["levels"][level]["talking"] = talking_check(mine, spoken)
    return out


def old_search(level: str, won: dict[int, bool]) -> dict | None:
    """The old search (the simple strategy as blueprint, ``summit_rush_search.json``: the same report's deals and
    agent seeds) on the deals both played, paired with ``search_learned`` (``won``: deal -> its result)."""
    path = RESULTS / "summit_rush_search.json"
    cell = json.loads(path.read_text())["levels"].get(level, {}).get("search+search") if path.is_file() else None
    deals = sorted(d for d in won if cell and d < len(cell["results"]))
    if not deals:
        return None
    was = [cell["results"][d] == "W" for d in deals]
    rate, cmp = wilson(sum(was), len(was)), paired([won[d] for d in deals], was)
    return {"games": len(deals), "wins": rate.wins, "rate": rate.rate, "low": rate.low, "high": rate.high,
            "ms_per_decision": cell.get("ms_per_decision"),
            "search_learned_minus_search": {"only_this": cmp.only_a, "only_other": cmp.only_b,
                                            "difference": cmp.difference, "low": cmp.low, "high": cmp.high,
                                            "mcnemar_p": cmp.p_value}}


def write_csv(result: dict, path: Path) -> None:
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["level", "team", "games", "wins", "rate", "low", "high", "stuck", "time", "vs_learned",
                    "vs_learned_low", "vs_learned_high", "ms_per_decision", "ms_per_tick", "rollouts_per_search"])
        for level, data in result["levels"].items():
            for team, c in data["cells"].items():
                v = c.get("vs_learned", {})
                w.writerow([level, team, c["games"], c["wins"], f"{c['rate']:.4f}", f"{c['low']:.4f}",
                            f"{c['high']:.4f}", c["losses"].get("stuck", 0), c["losses"].get("time", 0),
                            *(f"{v[k]:.4f}" if k in v else "" for k in ("difference", "low", "high")),
                            *(f"{c[k]:.1f}" if k in c else "" for k in ("ms_per_decision", "ms_per_tick",
                                                                          "rollouts_per_search"))])


def plot(result: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from cardzoo.envs.common.charts import colours

    levels = list(result["levels"])
    colour = colours(TEAMS)  # the report's one colour per agent
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    width = 0.8 / len(TEAMS)
    for i, team in enumerate(TEAMS):
        cells = [result["levels"][lv]["cells"][team] for lv in levels]
        x = np.arange(len(levels)) + (i - (len(TEAMS) - 1) / 2) * width
        rates = np.array([100 * c["rate"] for c in cells])
        err = np.array([[100 * (c["rate"] - c["low"]) for c in cells], [100 * (c["high"] - c["rate"]) for c in cells]])
        ax.bar(x, rates, width, yerr=err, capsize=3, label=team.replace("_", " "), color=colour[team])
    for j, lv in enumerate(levels):
        if result["levels"][lv]["target"]:
            t = 100 * result["levels"][lv]["target"]
            ax.plot([j - 0.45, j + 0.45], [t, t], "k--", lw=1)
    ax.set_xticks(range(len(levels)), [f"{lv}\n({result['levels'][lv]['seeds']})" for lv in levels])
    ax.set_ylabel("win % (95 % CI); dashed: target")
    ax.set_ylim(0, 100)
    s = result["settings"]
    wins = ", wins only" if s.get("wins_only") else ""
    ax.set_title(f"Summit Rush, search on the learned blueprint ({s['worlds']} worlds, z = {s['z']:g}{wins})",
                 fontsize=9)
    ax.legend(fontsize=8, loc="lower left")
    fig.tight_layout()
    fig.savefig(path, dpi=100, metadata={"Software": None})
    plt.close(fig)


def refresh_report(folder: Path | None = None) -> None:
    """Bring the committed summary into the committed report (``folder``, default ``evaluation/results/report``):
    the search-on-the-learned-blueprint block of its Summit Rush section (before the talking part) and the study's
    rows (the rest of the report takes hours to replay; :func:`..report.writer.refresh_study`)."""
    from ..report.model import RESULTS as COMMITTED
    from ..report.search import summit_rush_learned
    from ..report.writer import refresh_study

    refresh_study(folder or COMMITTED / "report", "summit_rush", summit_rush_learned,
                  "summit_rush_search_learned.json", anchor="### Talking and silent summit")

def parser() -> argparse.ArgumentParser:
    """The study's options; their defaults are the registry's ``search_learned`` (a test holds them equal)."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--levels", nargs="+", default=["normal", "hard"], choices=GAMES["summit_rush"].levels)
    p.add_argument("--games", type=int, default=1000, help="deals per level (seeds start..start+games-1)")
    p.add_argument("--start", type=int, default=0, help="first deal (0: the report's deals)")
    p.add_argument("--worlds", type=int, default=SummitRushSearch().worlds)
    p.add_argument("--z", type=float, default=1.0, help="the deviation threshold")
    p.add_argument("--blueprint-ticks", type=int, default=None, help="learned ticks before the simple tail")
    p.add_argument("--wins-only", action=argparse.BooleanOptionalAction, default=True,
                   help="the sign test counts only worlds won by one move (search_learned's setting)")
    p.add_argument("--minutes", type=float, default=None, help="stop starting deals after this much CPU time")
    p.add_argument("--talking", type=int, default=0,
                   help="also play the first N deals of each level's talking game (the search team only) and check "
                        "them against the silent games")
    p.add_argument("--jsonl", default=str(RESULTS / "summit_rush_search_learned.jsonl"), help="per-deal rows")
    p.add_argument("--talking-jsonl", default=str(RESULTS / "summit_rush_search_learned_talking.jsonl"),
                   help="per-deal rows of the talking games")
    p.add_argument("--out", default=str(RESULTS / "summit_rush_search_learned.json"), help="summary (CSV, PNG beside)")
    p.add_argument("--summary-only", action="store_true", help="rebuild the summary from the JSONL, play nothing")
    p.add_argument("--every-setting", action="store_true",
                   help="with --summary-only: a summary of every search setting in the JSONL (the dev runs)")
    p.add_argument("--report", action="store_true",
                   help="only rewrite the report's block (evaluation/results/report/summary.md) from the summary")
    return p


def _play_missing(path: Path, levels: list[str], deals: range, talk: bool, play_one, config: dict,
                  minutes: float | None, start: float) -> None:
    """Append a row (``play_one(env, level, seed, config)``) to ``path`` for every deal of every level not there yet,
    until ``minutes`` of CPU time since ``start`` are spent."""
    done = {(r["level"], r["seed"]) for r in read_rows(path) if r["settings"] == config}
    path.parent.mkdir(parents=True, exist_ok=True)
    for level in levels if len(deals) else ():
        env = make_env(level, talk=talk)
        todo = [s for s in deals if (level, s) not in done]
        with Progress(f"{level} {'talking' if talk else 'search_learned'}", len(todo)) as progress, \
                path.open("a") as f:
            for seed in todo:
                if minutes is not None and time.process_time() - start > 60 * minutes:
                    return
                f.write(json.dumps(play_one(env, level, seed, config)) + "\n")
                f.flush()
                progress.update()


def main(argv: list[str] | None = None) -> None:
    args = parser().parse_args(argv)
    if args.report:
        refresh_report()
        return
    if args.every_setting:
        rows = read_rows(Path(args.jsonl))
        configs = list({json.dumps(r["settings"], sort_keys=True): r["settings"] for r in rows}.values())
        out = {"jsonl": args.jsonl, "by_settings": [summarise(rows, c) for c in configs]}
        Path(args.out).write_text(json.dumps(out, indent=1) + "\n")
        for one in out["by_settings"]:
            for level, data in one["levels"].items():
                c = data["cells"]["search_learned"]
                print(one["settings"], level, f"{100 * c['rate']:.1f}% of {c['games']}, vs learned "
                      f"{100 * c['vs_learned']['difference']:+.1f}")
        return
    command = "OPENBLAS_NUM_THREADS=1 python -m cardzoo.evaluation.studies.search_learned_summit_rush " + shlex.join(
        sys.argv[1:] if argv is None else argv)
    if os.environ.get("OPENBLAS_NUM_THREADS") != "1" and not args.summary_only:
        print("warning: OPENBLAS_NUM_THREADS is not 1: the CPU times will count idle BLAS threads", file=sys.stderr)
    config = settings(args)
    jsonl, out, talking = Path(args.jsonl), Path(args.out), Path(args.talking_jsonl)
    start = time.process_time()
    if not args.summary_only:
        deals = range(args.start, args.start + args.games)
        _play_missing(jsonl, args.levels, deals, False, play_deal, config, args.minutes, start)
        deals = range(args.start, args.start + args.talking)
        _play_missing(talking, args.levels, deals, True, play_talking, config, args.minutes, start)
    result = summarise(read_rows(jsonl), config, read_rows(talking))
    result.update(jsonl=str(jsonl), learned_digest=fingerprint("learned", "summit_rush_v0"),
                  machine=platform.processor() or platform.machine(),
                  blas_threads=os.environ.get("OPENBLAS_NUM_THREADS"))
    previous = json.loads(out.read_text()) if out.is_file() else {}
    commands = previous.get("commands", [])
    if not args.summary_only:
        commands = [*commands, command]
        result["last_run_cpu_seconds"] = round(time.process_time() - start, 1)
    result["commands"] = commands
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    write_csv(result, out.with_suffix(".csv"))
    if result["levels"]:
        plot(result, out.with_suffix(".png"))
    for level, data in result["levels"].items():
        for team, c in data["cells"].items():
            v = c.get("vs_learned")
            extra = (f", vs learned {100 * v['difference']:+.1f} [{100 * v['low']:+.1f}, {100 * v['high']:+.1f}], "
                     f"{c['ms_per_decision']:.1f} ms/decision, {c['ms_per_tick']:.1f} ms/tick") if v else ""
            print(f"{level} {team}: {100 * c['rate']:.1f}% [{100 * c['low']:.1f}, {100 * c['high']:.1f}] "
                  f"of {c['games']}, losses {c['losses']}{extra}")


if __name__ == "__main__":
    main()
