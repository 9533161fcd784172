"""Rook search on the learned blueprint (``search_learned``) against the heuristic and the old search, single rounds
paired with ``learned`` and ``search`` on the same deals.

Deal ``i`` is ``env.reset(seed=i)`` of ``rook_v0`` with ``rounds=1``; every match is played on it twice, the first
player in ``player_0`` then in ``player_1``, the agents seeded as the report's runner seeds them
(``agent_seed(deal, seat)``) -- the report's deals and seeding (``search_rook.py`` and ``cardzoo evaluate`` use the
same). A round is won by the player whose total gained more. The matches (``--matches``, first player ``vs``
second) default to ``search_learned``, ``learned`` and ``search`` each against the heuristic, the first two
against ``search``, ``search_learned`` with the learned opponent model and with the blueprint's bids against
the heuristic, and ``search_wide`` (the old search with more worlds: what ``search_learned``'s compute buys it)
against both. An agent is a registry name, optionally with options as JSON for a search agent's variant
(``search_learned{"opponent_model": "learned"}``).

Rows go to a JSONL file, one per round, appended as they are played: a stopped run keeps them, and the same command
run again plays only what is missing (so a later session can take it to 1,000 deals). The summary (``--summary``)
is rebuilt from the whole JSONL at every save: win rates with Wilson intervals, by seat, paired differences on the
same rounds (McNemar), and the CPU time (``time.process_time``) per decision of each player, every decision counted.

Run as committed (the study sets ``OPENBLAS_NUM_THREADS=1`` when it is not set: one core per process on the
shared machine)::

    nice -n 5 python -m cardzoo.evaluation.studies.search_rook_learned --deals 1000

The committed file holds the deals the session had time for (``deals`` of each match in the JSON); the same
command continues it. The rows of ``learned`` and ``search`` of deals 0-35 were played by the first run (the file
``rook_learned_search_first.jsonl`` holds that run's first ``search_learned``). ``search_wide``'s first rows were
played as ``search{"worlds": 200, "bid_worlds": 400}`` (the same agent, before the registry named it) and renamed;
the commands keep the spelling they were run with. Matches were run in two processes at once, the second with
``--rounds``/``--summary`` on a copy whose new rows were then appended here.

Writes ``evaluation/results/rook_learned_search.jsonl`` (rounds), ``rook_learned_search.json`` (figures) and
``rook_learned_search.png`` (win rates with intervals).
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy loads: see the docstring

import argparse  # noqa: E402
import json  # noqa: E402
import shlex  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from pathlib import Path  # noqa: E402

from cardzoo.agents.loops import play_env_game  # noqa: E402
from cardzoo.agents.registry import make_agent  # noqa: E402
from cardzoo.agents.seeding import agent_seed  # noqa: E402
from cardzoo.envs.common.errors import OptionError  # noqa: E402
from cardzoo.envs.common.record import make_env  # noqa: E402
from cardzoo.envs.common.stats import paired, wilson  # noqa: E402

from ..report.model import RESULTS  # noqa: E402

NAME = "rook_learned_search"
MATCHES = ("search_learned vs heuristic", "learned vs heuristic", "search vs heuristic",
           "search_learned vs search", "learned vs search", 'search_learned{"opponent_model": "learned"} vs heuristic',
           'search_learned{"bids": "blueprint"} vs heuristic', "search_wide vs heuristic", "search_wide vs search")


@dataclass
class Options:
    deals: int = 1000  # deals played (each match on each, both seats)
    first: int = 0  # first deal seed (the report's deals are 0, 1, 2, ...)
    matches: str = ",".join(MATCHES)  # "A vs B" pairs, comma separated
    rounds: Path = RESULTS / f"{NAME}.jsonl"
    summary: Path = RESULTS / f"{NAME}.json"
    plot: bool = True


class _Timed:
    """An agent whose ``act`` calls are timed (CPU time)."""

    def __init__(self, agent):
        self.agent = agent
        self.seconds, self.decisions = 0.0, 0

    def reset(self, seed=None):
        self.agent.reset(seed=seed)
        self.seconds, self.decisions = 0.0, 0

    def act(self, observation, action_mask):
        start = time.process_time()
        action = self.agent.act(observation, action_mask)
        self.seconds += time.process_time() - start
        self.decisions += 1
        return action


def make(spec: str, seed: int | None = None):
    """The agent of ``spec``: a registry name, or a name followed by JSON options for its class."""
    name, brace, rest = spec.partition("{")
    agent = make_agent(name.strip(), "rook_v0", seed=seed)
    if brace:
        try:
            options = json.loads(brace + rest)
        except json.JSONDecodeError as e:
            raise OptionError(f"agent {spec!r}: the options after the name are not JSON ({e})") from e
        agent = type(agent)(seed=seed, **options)
    return agent


def _split(matches: str) -> list[str]:
    """``matches`` split at its commas outside an agent's JSON options."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(matches):
        depth += {"{": 1, "}": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            parts.append(matches[start:i])
            start = i + 1
    return [*parts, matches[start:]]


def _parse(matches: str) -> list[tuple[str, str]]:
    out = []
    for m in _split(matches):
        a, sep, b = m.partition(" vs ")
        if not sep:
            raise OptionError(f"a match is 'A vs B', got {m!r}")
        out.append((a.strip(), b.strip()))
    return out


def _done(path: Path) -> tuple[list[dict], set]:
    if not path.exists():
        return [], set()
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return rows, {(r["match"], r["seed"], r["seat"]) for r in rows}


def summarise(rows: list[dict], commands: list[str]) -> dict:
    """Per match: rounds won with Wilson intervals, by seat, the losses by cause, CPU per decision; paired
    comparisons on the rounds in common; ``commands``: the runs that played the rows, in order."""
    by_match: dict[str, dict] = {}
    for match in dict.fromkeys(r["match"] for r in rows):
        mine = [r for r in rows if r["match"] == match]
        rate = wilson(sum(r["result"] == "win" for r in mine), len(mine))
        seats = {}
        for seat in (0, 1):
            s = [r for r in mine if r["seat"] == seat]
            w = wilson(sum(r["result"] == "win" for r in s), len(s))
            seats[f"player_{seat}"] = {"won": w.wins, "rounds": w.games, "rate": w.rate, "low": w.low, "high": w.high}
        bids = [r for r in mine if r["bidder_first"]]
        losses: dict[str, int] = {}
        for r in mine:
            if r["result"] == "loss":
                cause = (("won the bid and was set" if not r["made"] else "made its bid, gained less")
                         if r["bidder_first"] else
                         ("the other won the bid and made it" if r["made"] else "the other was set, gained more"))
                losses[cause] = losses.get(cause, 0) + 1
        by_match[match] = {
            "rounds": len(mine), "deals": len({r["seed"] for r in mine}),
            "won": rate.wins, "ties": sum(r["result"] == "tie" for r in mine),
            "rate": rate.rate, "low": rate.low, "high": rate.high, "by_seat": seats,
            "mean_gain_difference": sum(r["gain_first"] - r["gain_second"] for r in mine) / len(mine),
            "first_won_bid": len(bids), "first_bid_made": sum(r["made"] for r in bids),
            "losses": dict(sorted(losses.items(), key=lambda item: -item[1])),
            "ms_per_decision_first": 1000 * sum(r["cpu_first"] for r in mine) / max(1, sum(r["decisions_first"]
                                                                                          for r in mine)),
            "ms_per_decision_second": 1000 * sum(r["cpu_second"] for r in mine) / max(1, sum(r["decisions_second"]
                                                                                            for r in mine)),
        }
    # Paired: each match against the same opponent's other matches, on the rounds both have played.
    comparisons = {}
    for a in by_match:
        for b in by_match:
            first_a, opp_a = a.split(" vs ")
            first_b, opp_b = b.split(" vs ")
            if a == b or opp_a != opp_b or first_b not in ("learned", "search", "search_learned"):
                continue
            ra = {(r["seed"], r["seat"]): r["result"] == "win" for r in rows if r["match"] == a}
            rb = {(r["seed"], r["seat"]): r["result"] == "win" for r in rows if r["match"] == b}
            keys = sorted(ra.keys() & rb.keys())
            if keys:
                p = paired([ra[k] for k in keys], [rb[k] for k in keys])
                comparisons[f"{first_a} minus {first_b} vs {opp_a}"] = {
                    "rounds": p.games, "difference": p.difference, "low": p.low, "high": p.high,
                    "only_first": p.only_a, "only_second": p.only_b, "p_value": p.p_value}
    return {"commands": commands, "matches": by_match, "paired": comparisons}


def plot(summary: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(summary["matches"])
    rates = [100 * summary["matches"][n]["rate"] for n in names]
    err = [[100 * (summary["matches"][n]["rate"] - summary["matches"][n]["low"]) for n in names],
           [100 * (summary["matches"][n]["high"] - summary["matches"][n]["rate"]) for n in names]]
    fig, ax = plt.subplots(figsize=(11, 0.5 * len(names) + 1.4))
    ax.barh(range(len(names)), rates, xerr=err, color="#4c72b0", capsize=3)
    ax.set_yticks(range(len(names)), [f"{n} ({summary['matches'][n]['rounds']})" for n in names])
    ax.invert_yaxis()
    ax.axvline(50, color="grey", lw=0.8)
    ax.set_xlim(0, 100)
    ax.set_xlabel("% of single rounds won (95 % Wilson interval); rounds in brackets")
    ax.set_title("Rook for Two: search on the learned blueprint")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(options: Options, command: str) -> dict:
    env = make_env("rook_v0", rounds=1, illegal_action="raise")
    matches = _parse(options.matches)
    agents = {spec: _Timed(make(spec)) for pair in matches for spec in pair}
    rows, done = _done(options.rounds)
    options.rounds.parent.mkdir(parents=True, exist_ok=True)
    earlier = json.loads(options.summary.read_text()) if options.summary.is_file() else {}
    commands = earlier.get("commands") or ([earlier["command"]] if "command" in earlier else [])
    summary: dict = summarise(rows, commands) if rows else {}
    with open(options.rounds, "a") as out:
        for seed in range(options.first, options.first + options.deals):
            fresh = 0
            for a, b in matches:
                match = f"{a} vs {b}"
                for seat in (0, 1):
                    if (match, seed, seat) in done:
                        continue
                    first, second = agents[a], agents[b]
                    if first is second:
                        second = _Timed(make(b))
                    players = [first, second] if seat == 0 else [second, first]
                    for s, agent in enumerate(players):
                        agent.reset(seed=agent_seed(seed, s))
                    summary_round = play_env_game(env, players, seed)["history"][0]
                    gain, other = summary_round["score"][seat], summary_round["score"][1 - seat]
                    row = {"match": match, "seed": seed, "seat": seat,
                           "result": "win" if gain > other else "tie" if gain == other else "loss",
                           "gain_first": gain, "gain_second": other,
                           "bidder_first": summary_round["bidder"] == seat, "bid": summary_round["bid"],
                           "made": summary_round["made"],
                           "cpu_first": first.seconds, "decisions_first": first.decisions,
                           "cpu_second": second.seconds, "decisions_second": second.decisions}
                    out.write(json.dumps(row) + "\n")
                    out.flush()
                    rows.append(row)
                    fresh += 1
            if fresh:
                if command not in commands:
                    commands.append(command)
                summary = summarise(rows, commands)
                options.summary.write_text(json.dumps(summary, indent=1) + "\n")
                line = ", ".join(f"{m}: {100 * v['rate']:.1f}% ({v['rounds']}, {v['ms_per_decision_first']:.0f} ms)"
                                 for m, v in summary["matches"].items())
                print(f"deal {seed}: {line}", flush=True)
    if summary:  # also when nothing was left to play: the summary of the code that reads it
        options.summary.write_text(json.dumps(summary, indent=1) + "\n")
    if options.plot and summary:
        plot(summary, options.summary.with_suffix(".png"))
    if summary and options.summary == Options.summary:
        refresh_report()
    return summary


def refresh_report(folder: Path | None = None) -> None:
    """Bring the committed summary into the committed report (``folder``, default ``evaluation/results/report``):
    the search_learned block of its Rook section and the study's rows (:func:`..report.writer.refresh_study`)."""
    from ..report.model import RESULTS as COMMITTED
    from ..report.search import rook_learned
    from ..report.writer import refresh_study

    refresh_study(folder or COMMITTED / "report", "rook", rook_learned, f"{NAME}.json")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    defaults = Options()
    for name, value in vars(defaults).items():
        if isinstance(value, bool):
            parser.add_argument(f"--{name.replace('_', '-')}", action=argparse.BooleanOptionalAction, default=value)
        else:
            parser.add_argument(f"--{name.replace('_', '-')}", type=type(value), default=value)
    parser.add_argument("--report", action="store_true", help="only bring the committed summary into the report")
    args = parser.parse_args()
    if args.report:
        refresh_report()
        sys.exit()
    options = Options(**{k: v for k, v in vars(args).items() if k != "report"})
    main(options, "nice -n 5 python -m cardzoo.evaluation.studies.search_rook_learned "
         + shlex.join(sys.argv[1:]))
