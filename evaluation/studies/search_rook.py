"""The Rook search player against the heuristic, single rounds on the report's deals, with where the rounds are lost.

Deal ``i`` is ``env.reset(seed=i)`` of ``rook_v0`` with ``rounds=1`` and every deal is played twice, the search
player in ``player_0`` then in ``player_1``, with the agents seeded as the report's runner seeds them -- the same
deals and seeding as the report's Rook rows (``cardzoo evaluate``). A round is won by the player whose total gained
more. Each round lost is put in one class: the search player won the bid and was set, won the bid and made it but
the heuristic gained more, or the heuristic won the bid (and made it, or was set but still gained more).

The time per decision is the CPU time (``time.process_time``) of the search player's ``act`` calls, every decision
counted (forced moves too), on one process.

Run (500 deals took 25 minutes on the shared 2-core machine, 7 of them the search player's CPU time)::

    nice python -m cardzoo.evaluation.studies.search_rook --deals 500

Writes ``evaluation/results/rook_search.json`` (the figures) and ``rook_search.csv`` (one row per round), and
rewrites them every ``--save-every`` deals so a run that is stopped keeps what it played.
"""

from __future__ import annotations

import argparse
import csv
import json
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from cardzoo.agents.loops import play_env_game
from cardzoo.agents.registry import make_agent
from cardzoo.agents.seeding import agent_seed
from cardzoo.envs.common.record import make_env
from cardzoo.envs.common.stats import wilson

from ..report.model import RESULTS

SEATS = ("player_0", "player_1")


@dataclass
class Options:
    deals: int = 500  # deals played, each with the search player in both seats
    first: int = 0  # first deal seed (the report uses 0, 1, 2, ...)
    opponent: str = "heuristic"  # the other player, by registry name
    save_every: int = 20  # deals between rewrites of the result files
    out: Path = RESULTS  # folder of rook_search.json and rook_search.csv


class _Timed:
    """An agent whose ``act`` calls are timed (CPU time)."""

    def __init__(self, agent):
        self.agent = agent
        self.seconds = 0.0
        self.decisions = 0

    def reset(self, seed=None):
        self.agent.reset(seed=seed)

    def act(self, observation, action_mask):
        start = time.process_time()
        action = self.agent.act(observation, action_mask)
        self.seconds += time.process_time() - start
        self.decisions += 1
        return action


def _loss_class(seat: int, summary: dict) -> str:
    if summary["bidder"] == seat:
        return "search won the bid and was set" if not summary["made"] else "search made its bid, gained less"
    return "heuristic won the bid and made it" if summary["made"] else "heuristic was set, still gained more"


def summarise(rows: list[dict], timed: _Timed, options: Options, command: str) -> dict:
    won = sum(r["result"] == "win" for r in rows)
    ties = sum(r["result"] == "tie" for r in rows)
    rate = wilson(won, len(rows))
    by_seat = {}
    for seat in (0, 1):
        mine = [r for r in rows if r["search_seat"] == seat]
        s = wilson(sum(r["result"] == "win" for r in mine), len(mine))
        by_seat[SEATS[seat]] = {"won": s.wins, "rounds": s.games, "rate": s.rate, "low": s.low, "high": s.high}
    search_bids = [r for r in rows if r["search_bid"]]
    made = wilson(sum(r["made"] for r in search_bids), len(search_bids))
    return {
        "command": command,
        "opponent": options.opponent,
        "deals": len(rows) // 2,
        "rounds": len(rows),
        "won": won, "ties": ties, "lost": len(rows) - won - ties,
        "rate": rate.rate, "low": rate.low, "high": rate.high,
        "by_seat": by_seat,
        "losses": dict(Counter(r["loss"] for r in rows if r["result"] == "loss").most_common()),
        "search_won_bid": len(search_bids),
        "search_bid_made": {"rate": made.rate, "low": made.low, "high": made.high},
        "mean_contract_search": sum(r["bid"] for r in search_bids) / len(search_bids) if search_bids else None,
        "mean_ms_per_decision": 1000 * timed.seconds / max(1, timed.decisions),
        "decisions": timed.decisions,
    }


def write(rows: list[dict], summary: dict, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "rook_search.json").write_text(json.dumps(summary, indent=1) + "\n")
    with open(out / "rook_search.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def main(options: Options, command: str) -> dict:
    env = make_env("rook_v0", rounds=1, illegal_action="raise")
    timed = _Timed(make_agent("search", "rook_v0"))
    other = make_agent(options.opponent, "rook_v0")
    rows: list[dict] = []
    summary: dict = {}
    for i, seed in enumerate(range(options.first, options.first + options.deals)):
        for seat in (0, 1):
            agents = [timed, other] if seat == 0 else [other, timed]
            for s, agent in enumerate(agents):
                agent.reset(seed=agent_seed(seed, s))
            record = play_env_game(env, agents, seed)
            summary_round = record["history"][0]
            gain, other_gain = summary_round["score"][seat], summary_round["score"][1 - seat]
            result = "win" if gain > other_gain else "tie" if gain == other_gain else "loss"
            rows.append({"seed": seed, "search_seat": seat, "result": result,
                         "search_bid": summary_round["bidder"] == seat, "bid": summary_round["bid"],
                         "made": summary_round["made"], "points_search": summary_round["points"][seat],
                         "gain_search": gain, "gain_other": other_gain,
                         "loss": _loss_class(seat, summary_round) if result == "loss" else ""})
        if (i + 1) % options.save_every == 0 or i + 1 == options.deals:
            summary = summarise(rows, timed, options, command)
            write(rows, summary, options.out)
            print(f"{i + 1} deals: {100 * summary['rate']:.1f}% [{100 * summary['low']:.1f}, "
                  f"{100 * summary['high']:.1f}] of {summary['rounds']}, "
                  f"{summary['mean_ms_per_decision']:.1f} ms/decision", flush=True)
    return summary


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    defaults = Options()
    for name, value in vars(defaults).items():
        parser.add_argument(f"--{name.replace('_', '-')}", type=type(value), default=value)
    args = parser.parse_args()
    import shlex
    import sys

    main(Options(**vars(args)), "nice python -m cardzoo.evaluation.studies.search_rook " + shlex.join(sys.argv[1:]))
