"""The Rope Team search agent on the report's deals: win rates, paired against the simple strategy, cross-play,
time per decision, and where its losses come from.

Game ``i`` is the report's game ``i`` (``reset(seed=i)``: :func:`cardzoo.agents.loops.deal`), played by the
runner's loop with the runner's agent seeds, so every team meets the same deals and the comparison with the
simple strategy is paired (McNemar). Time is CPU time (``time.process_time``) inside ``act_bits`` of the search
seats, per decision; one process, so run it alone (``nice``).

Losses of the search team are sorted by cause:

- *unwinnable*: the perfect-information oracle found no winning line (``rope_team_ceiling_<level>.json``);
- *read of the partner*: the same two search agents, each told its partner's hand (their worlds hold the true
  hand; the ridge and the later deals are still sampled), win the deal -- so the loss came from the belief about
  the partner's cards, i.e. from what the partner's plays were taken to mean;
- *other*: lost even so (the face-down ridge, later deals, or the limits of rollouts of the simple strategy).

Each is split by how the game ended (a fall, or out of deals).

    nice python -m cardzoo.evaluation.studies.search_rope_team --games 200 --cross 100 \\
        --levels hard expert normal easy --out evaluation/results/rope_team_search.json

Cross-play with a trained partner (``--partner``, default ``learned``): search + partner and partner + search
(seat 0 first), and partner + partner on the same deals for reference, ``--partner-games`` deals per level, each
paired with the simple strategy's results on those deals. ``--add`` plays only these teams and merges them into
the existing ``--out`` file (its search and simple teams, and their deals, are kept), so a new ``learned`` policy
is measured again without replaying the rest; the partner's policy digest is recorded with its rows:

    nice python -m cardzoo.evaluation.studies.search_rope_team --add --partner learned --partner-games 100 \\
        --levels easy normal hard expert --out evaluation/results/rope_team_search.json

(The committed results came from several runs, their commands in the file: hard and expert at 200 games, then
normal and easy at 150 -- the machine was shared and the whole would not fit the time -- then the cross-play
with the learned partner.)
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

from cardzoo.agents.base import BitsAgent
from cardzoo.agents.loops import deal
from cardzoo.agents.registry import fingerprint, make_agent
from cardzoo.agents.rope_team_search import RopeTeamSearch
from cardzoo.agents.seeding import agent_seed
from cardzoo.envs.common.cards import mask_to_bits
from cardzoo.envs.common.stats import paired, wilson
from cardzoo.envs.registry import GAMES
from cardzoo.envs.rope_team import rules
from cardzoo.envs.rope_team.observer import LAYOUT, observe_bits

from ..report.model import load_result

LEVELS = GAMES["rope_team"].levels


class _Told(RopeTeamSearch):
    """The search agent told its partner's hand (a diagnostic, not an agent: the study hands it the truth)."""

    partner_hand = 0

    def _belief(self, obs, table, n_worlds):
        # The partner's cards are off the ridge: the ridge is drawn from the other unseen cards.
        self.seen_off_ridge |= self.partner_hand
        worlds = super()._belief(obs, table, n_worlds)
        if worlds is not None:
            worlds["partner"][:] = np.uint64(self.partner_hand)
        return worlds


def play(level: str, seed: int, agents: list, clock: dict | None = None) -> dict:
    """One game of the report's deal ``seed``; ``clock`` collects the search seats' CPU time per decision."""
    s = deal(seed, level)
    for seat, agent in enumerate(agents):
        agent.reset(agent_seed(seed, seat))
    while s.outcome is None:
        seat = s.to_move
        agent = agents[seat]
        if isinstance(agent, _Told):
            agent.partner_hand = s.hands[1 - seat]
        legal = rules.legal_mask(s)
        start = time.process_time()
        if isinstance(agent, BitsAgent):
            card = agent.act_bits(observe_bits(s, seat), legal)
        else:  # a learned partner reads the env's arrays
            card = agent.act(LAYOUT.to_array(observe_bits(s, seat)), mask_to_bits(legal))
        if clock is not None and isinstance(agent, RopeTeamSearch):
            clock["seconds"].append(time.process_time() - start)
            clock["searched"].append(len(agent.last["candidates"]) > 1)
            clock["departed"].append(card != agent.last["blueprint"])
            if "rollouts" in clock:  # the learned search's study: its compute per decision
                worlds = agent.last.get("worlds", 0)
                clock["worlds"].append(worlds)
                clock["rollouts"].append(worlds * len(agent.last["candidates"]))
                if "ess" in agent.last and worlds:
                    clock["ess"].append(agent.last["ess"])
        if not legal >> card & 1:
            raise RuntimeError(f"{agent.name} played an illegal card {card} in game {seed}")
        rules.play(s, card)
    return rules.summary(s)


def team(names: tuple[str, ...]) -> list:
    return [make_agent(names[seat % len(names)], "rope_team_v0") for seat in range(2)]


def study_level(level: str, games: int, cross: int = 0, progress: bool = True) -> dict:
    out: dict = {"level": level, "games": games, "teams": {}}
    records: dict[str, list[dict]] = {}
    clock = {"seconds": [], "searched": [], "departed": []}
    pairs = [("search",), ("simple",)] + ([("search", "simple"), ("simple", "search")] if cross else [])
    for names in pairs:
        label = "+".join(names * (3 - len(names)))
        agents = team(names)
        n = games if len(names) == 1 else cross
        start = time.time()
        recs = []
        for seed in range(n):
            recs.append(play(level, seed, agents, clock if names == ("search",) else None))
            if progress:
                print(f"\r  {level} {label}: {seed + 1}/{n} games, {time.time() - start:.0f} s", end="",
                      file=sys.stderr, flush=True)
        if progress:
            print(file=sys.stderr)
        records[label] = recs
    simple = [r["outcome"] == "win" for r in records["simple+simple"]]
    for label, recs in records.items():
        won = [r["outcome"] == "win" for r in recs]
        rate = wilson(sum(won), len(won))
        entry = {"wins": sum(won), "games": len(won), "rate": rate.rate, "low": rate.low, "high": rate.high,
                 "results": "".join("W" if w else "L" for w in won),
                 "losses": dict(Counter(r["outcome"] for r in recs if r["outcome"] != "win"))}
        if label != "simple+simple":
            cmp = paired(won, simple[: len(won)])
            entry["vs_simple"] = {"difference": cmp.difference, "low": cmp.low, "high": cmp.high,
                                  "only_this": cmp.only_a, "only_simple": cmp.only_b, "p_value": cmp.p_value}
        out["teams"][label] = entry
    seconds = np.array(clock["seconds"])
    searched = np.array(clock["searched"], bool)
    out["time"] = {"decisions": len(seconds), "mean_ms": 1e3 * seconds.mean(),
                   "mean_ms_searched": 1e3 * seconds[searched].mean() if searched.any() else 0.0,
                   "share_searched": searched.mean(), "p99_ms": 1e3 * float(np.percentile(seconds, 99)),
                   "max_ms": 1e3 * seconds.max(), "share_departing_from_blueprint": float(np.mean(clock["departed"]))}
    out["loss_causes"] = loss_causes(level, records["search+search"], progress)
    return out


def partner_teams(level: str, partner: str, games: int, simple: str | None, progress: bool = True) -> dict:
    """search + ``partner``, ``partner`` + search and ``partner`` + ``partner`` on deals ``0..games-1``, each paired
    with the simple strategy on the same deals (``simple``: its committed results, a string of W and L; played
    here when missing or shorter); the search seats' CPU time per decision with each partner."""
    if simple is None or len(simple) < games:
        recs = [play(level, seed, team(("simple",))) for seed in range(games)]
        simple = "".join("W" if r["outcome"] == "win" else "L" for r in recs)
    base = [c == "W" for c in simple[:games]]
    out = {}
    for names in (("search", partner), (partner, "search"), (partner,)):
        label = "+".join(names * (3 - len(names)))
        clock = {"seconds": [], "searched": [], "departed": []}
        agents = team(names)
        start = time.time()
        recs = []
        for seed in range(games):
            recs.append(play(level, seed, agents, clock))
            if progress:
                print(f"\r  {level} {label}: {seed + 1}/{games} games, {time.time() - start:.0f} s", end="",
                      file=sys.stderr, flush=True)
        if progress:
            print(file=sys.stderr)
        won = [r["outcome"] == "win" for r in recs]
        rate = wilson(sum(won), games)
        cmp = paired(won, base)
        entry = {"wins": sum(won), "games": games, "rate": rate.rate, "low": rate.low, "high": rate.high,
                 "results": "".join("W" if w else "L" for w in won),
                 "losses": dict(Counter(r["outcome"] for r in recs if r["outcome"] != "win")),
                 "partner": partner, "partner_digest": fingerprint(partner, "rope_team_v0"),
                 "vs_simple": {"difference": cmp.difference, "low": cmp.low, "high": cmp.high,
                               "only_this": cmp.only_a, "only_simple": cmp.only_b, "p_value": cmp.p_value}}
        if clock["seconds"]:
            entry["mean_ms_per_search_decision"] = 1e3 * float(np.mean(clock["seconds"]))
        out[label] = entry
    return out


def loss_causes(level: str, records: list[dict], progress: bool) -> dict:
    ceiling = load_result(f"rope_team_ceiling_{level}") or {}
    unwinnable = set(ceiling.get("lost_seeds", []))
    told = [_Told(), _Told()]
    causes: Counter = Counter()
    seeds = {"unwinnable": [], "read of the partner": [], "other": []}
    for seed, record in enumerate(records):
        if record["outcome"] == "win":
            continue
        if seed in unwinnable:
            cause = "unwinnable"
        elif play(level, seed, told)["outcome"] == "win":
            cause = "read of the partner"
        else:
            cause = "other"
        causes[cause, record["outcome"]] += 1
        seeds[cause].append(seed)
    if progress:
        print(f"  {level}: losses by cause {dict(causes)}", file=sys.stderr)
    return {"counts": {f"{cause}, {end}": n for (cause, end), n in sorted(causes.items())}, "seeds": seeds}


def write_csv(data: dict, path: Path) -> None:
    """One row per level and team: the win rate with its interval, the paired difference with the simple strategy
    and the search seats' mean CPU time per decision."""
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["level", "team", "games", "win_rate", "low95", "high95", "minus_simple", "minus_simple_low95",
                         "minus_simple_high95", "mcnemar_p", "mean_ms_per_decision"])
        for level, result in data["levels"].items():
            for label, t in result["teams"].items():
                vs = t.get("vs_simple", {})
                writer.writerow([level, label, t["games"], round(t["rate"], 4), round(t["low"], 4), round(t["high"], 4),
                                 *(round(vs[k], 4) if k in vs else "" for k in ("difference", "low", "high")),
                                 f"{vs['p_value']:.2g}" if vs else "",
                                 round(result["time"]["mean_ms"], 2) if label == "search+search"
                                 else round(t["mean_ms_per_search_decision"], 2)
                                 if "mean_ms_per_search_decision" in t else ""])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=150, help="games per level for search and simple")
    parser.add_argument("--cross", type=int, default=0, help="games per level for search+simple, simple+search")
    parser.add_argument("--levels", nargs="+", default=list(LEVELS), choices=LEVELS, help="in this order")
    parser.add_argument("--cross-levels", nargs="*", default=["normal", "hard"], choices=LEVELS)
    parser.add_argument("--partner", default="learned", help="the trained partner of the cross-play with search")
    parser.add_argument("--partner-games", type=int, default=0, help="games per level with --partner (both orders)")
    parser.add_argument("--add", action="store_true",
                        help="play only the --partner teams and merge them into the existing --out file")
    parser.add_argument("--out", type=Path, default=Path("evaluation/results/rope_team_search.json"))
    args = parser.parse_args(argv)
    command = "python -m cardzoo.evaluation.studies.search_rope_team " + shlex.join(
        sys.argv[1:] if argv is None else argv)
    if args.partner not in ("simple", "search"):
        make_agent(args.partner, "rope_team_v0")  # an unknown name fails here, before any game
    if args.add:
        if args.partner_games <= 0:
            parser.error("--add needs --partner-games")
        if not args.out.is_file():
            parser.error(f"--add merges into {args.out}, which does not exist")
        data = json.loads(args.out.read_text())
        earlier = [data.pop("command")] if "command" in data else data.get("commands", [])
        data["commands"] = [*earlier, command]  # every run that made the file, in order
        for level in args.levels:
            entry = data["levels"].setdefault(level, {"level": level, "teams": {}})
            simple = entry["teams"].get("simple+simple", {}).get("results")
            start = time.process_time()
            entry["teams"].update(partner_teams(level, args.partner, args.partner_games, simple))
            entry["partner_cpu_seconds"] = time.process_time() - start
            entry["partner_load_average"] = os.getloadavg()  # 1, 5, 15 minutes, when the level was done
            args.out.write_text(json.dumps(data, indent=1) + "\n")
        write_csv(data, args.out.with_suffix(".csv"))
        return
    data = {"command": command, "options": RopeTeamSearch().options.__dict__, "python": platform.python_version(),
            "numpy": np.__version__, "date": time.strftime("%Y-%m-%d"), "levels": {}}
    for level in args.levels:
        start = time.process_time()
        data["levels"][level] = study_level(level, args.games, args.cross if level in args.cross_levels else 0)
        if args.partner_games:
            simple = data["levels"][level]["teams"]["simple+simple"]["results"]
            data["levels"][level]["teams"].update(partner_teams(level, args.partner, args.partner_games, simple))
        data["levels"][level]["cpu_seconds"] = time.process_time() - start
        args.out.write_text(json.dumps(data, indent=1) + "\n")  # after each level: a partial run keeps its levels
    write_csv(data, args.out.with_suffix(".csv"))


if __name__ == "__main__":
    main()
