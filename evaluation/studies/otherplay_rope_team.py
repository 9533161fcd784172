"""A Rope Team policy against the shipped one on the report's deals: self-play, cross-play, time per decision.

Made for the other-play policy (``cardzoo.training.otherplay``, issue 28): does it win as often with itself as
``rope_team_v2`` does, and more often with partners it never trained with? Deal ``i`` of a level is the report's
game ``i`` (``reset(seed=i)``, the agents seeded as the runner seeds them), so every team meets the same deals and
the candidate and the reference are compared deal by deal (paired, McNemar: :func:`cardzoo.envs.common.stats.paired`).

Teams per level: each policy with itself (``--games`` deals), and each policy with every ``--partners`` agent in
both seatings (``--partner-games`` deals per seating). The gap is self-play minus cross-play. Time per decision is
CPU time (``time.process_time``) of ``act`` over the decisions of ``--timing-games`` self-play games per level.

Resumable: the games are the runner's, cached in 250-game chunks under ``--cache``; a rerun with the same cache
plays only what is missing (e.g. ``--games 1000`` first, then 2000). One process (``--workers 1``), niced::

    nice -n 5 python -m cardzoo.evaluation.studies.otherplay_rope_team \\
        --candidate evaluation/results/training/rope_team_otherplay_not_shipped/policy.npz --games 2000 \\
        --partner-games 1000 --partners simple --cache /tmp/otherplay_cache \\
        --out evaluation/results/training/rope_team_otherplay_not_shipped/paired.json

Writes the JSON (every rate with its Wilson interval, every paired difference, the command) and a PNG beside it.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from pathlib import Path

from cardzoo.agents.learned import shipped_policy
from cardzoo.agents.registry import make_agent
from cardzoo.envs.common.stats import paired, wilson
from cardzoo.envs.registry import GAMES
from cardzoo.envs.rope_team_v0 import env as rope_team_env

from ..matches.runner import Matchup, run

LEVELS = GAMES["rope_team"].levels


def _wins(records) -> list[bool]:
    return [r["outcome"] == "win" for r in records]


def _rate(wins: list[bool]) -> dict:
    r = wilson(sum(wins), len(wins))
    return {"wins": r.wins, "games": r.games, "rate": r.rate, "low": r.low, "high": r.high}


def _diff(a: list[bool], b: list[bool]) -> dict:
    d = paired(a, b)
    return {"games": d.games, "only_a": d.only_a, "only_b": d.only_b, "difference": d.difference, "low": d.low,
            "high": d.high, "p_value": d.p_value}


def ms_per_decision(spec: str, level: str, games: int) -> float:
    """CPU milliseconds per ``act`` of the agent ``spec`` in self-play (seeds far from the report's)."""
    agents = [make_agent(spec, "rope_team", seat=i) for i in range(2)]
    env = rope_team_env(level=level)
    cpu, decisions = 0.0, 0
    for g in range(games):
        env.reset(seed=5_000_000 + g)
        for seat, agent in enumerate(agents):
            agent.reset(seed=g * 2 + seat)
        for name in env.agent_iter():
            o, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            agent = agents[env.possible_agents.index(name)]
            tick = time.process_time()
            action = agent.act(o["observation"], o["action_mask"])
            cpu += time.process_time() - tick
            decisions += 1
            env.step(action)
    return 1000 * cpu / decisions


def study(candidate: str, reference: str, levels, games: int, partners, partner_games: int, cache: str,
          timing_games: int) -> dict:
    policies = {"candidate": candidate, "reference": reference}
    out: dict = {"policies": policies, "levels": {}}

    def play(agents, level, n):
        return _wins(run(Matchup.of("rope_team_v0", agents, level=level), n, workers=1, cache_dir=cache,
                         progress=False))

    for level in levels:
        row: dict = {"self": {}, "partners": {}, "paired": {}}
        wins = {name: play([spec, spec], level, games) for name, spec in policies.items()}
        row["self"] = {name: _rate(w) for name, w in wins.items()}
        row["paired"]["self"] = _diff(wins["candidate"], wins["reference"])
        for partner in partners:
            cross = {name: play([spec, partner], level, partner_games) + play([partner, spec], level, partner_games)
                     for name, spec in policies.items()}
            row["partners"][partner] = {
                name: {**_rate(w), "gap": row["self"][name]["rate"] - sum(w) / len(w)} for name, w in cross.items()}
            row["paired"][partner] = _diff(cross["candidate"], cross["reference"])
        row["ms_per_decision"] = {name: ms_per_decision(spec, level, timing_games) for name, spec in policies.items()}
        out["levels"][level] = row
        print(level, json.dumps({k: row["self"][k]["rate"] for k in policies}),
              json.dumps({p: row["paired"][p]["difference"] for p in row["paired"]}), flush=True)
    return out


def chart(result: dict, path: Path) -> None:
    from cardzoo.envs.common.charts import Bar, bar_chart

    groups = {}
    for level, row in result["levels"].items():
        bars = []
        for name in ("candidate", "reference"):
            s = row["self"][name]
            bars.append(Bar(f"{name} self-play", s["rate"], s["low"], s["high"], agent=name))
            for partner, rates in row["partners"].items():
                r = rates[name]
                bars.append(Bar(f"{name} + {partner}", r["rate"], r["low"], r["high"], agent=name))
        groups[level] = bars
    bar_chart("Rope Team: the candidate policy and the shipped one, same deals", groups, path)


def main(argv: list[str] | None = None) -> dict:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(prog="python -m cardzoo.evaluation.studies.otherplay_rope_team",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--candidate", required=True, help="the policy measured (.npz path or registry name)")
    parser.add_argument("--reference", default=str(shipped_policy("rope_team_v2")), help="the policy compared")
    parser.add_argument("--levels", nargs="+", default=list(LEVELS), choices=LEVELS)
    parser.add_argument("--games", type=int, default=2000, help="self-play deals per level (the report's 0..N-1)")
    parser.add_argument("--partners", nargs="*", default=["simple"], help="cross-play partners (agent specs)")
    parser.add_argument("--partner-games", type=int, default=1000, help="deals per seating with each partner")
    parser.add_argument("--timing-games", type=int, default=20, help="self-play games per level timed")
    parser.add_argument("--cache", required=True, help="the runner's cache folder (a rerun resumes from it)")
    parser.add_argument("--out", required=True, help="the JSON file (a PNG is written beside it)")
    args = parser.parse_args(argv)
    started = time.process_time()
    result = study(args.candidate, args.reference, args.levels, args.games, args.partners, args.partner_games,
                   args.cache, args.timing_games)
    result["games"], result["partner_games"] = args.games, args.partner_games
    result["command"] = "python -m cardzoo.evaluation.studies.otherplay_rope_team " + shlex.join(argv)
    result["cpu_seconds_this_run"] = round(time.process_time() - started, 1)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    chart(result, out.with_suffix(".png"))
    return result


if __name__ == "__main__":
    main()
