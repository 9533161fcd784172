"""The Summit Rush search agent on the report's deals: win rates, paired against the simple strategy, cross-play,
time per decision, and where its losses come from.

Game ``i`` is the report's game ``i`` (``reset(seed=i)`` of the silent timed level, as the evaluation runner plays
it), with the runner's agent seeds, so every team meets the same deals and the comparison with the simple strategy
is paired (McNemar). Teams: search + search, simple + simple, and the cross-play pairs search + simple and
simple + search (seat 0 first). Time is CPU time (``time.process_time``) inside the search seats' ``act``, per
decision (both seats of a search team share one search per tick through the memo, so a tick's search is paid by the
first seat to ask); one process, so run it alone and under ``nice``.

Losses are sorted by how the game ended -- *stuck* (both stocks used up and nothing fits: the stock ran out) or
*time* (the clock ran out first) -- with the peak cards left, and the tick's collisions (conflicts + bounced
cards) are counted. The perfect-information ceiling of these deals is in ``summit_rush_ceiling_<level>.json`` (it
wins nearly all of them). Each deal the search team loses is played again by a *told* team: the same search, but
its only world is the true deal (a diagnostic handed the hidden cards, not an agent). A deal the told team wins
was lost to the hidden cards -- to not knowing the face-down cards and the stocks' order; one it loses too was
lost to the limits of one-tick rollouts of the blueprint.

    nice python -m cardzoo.evaluation.studies.search_summit_rush --games 200 --cross 100 --levels normal hard \\
        --out evaluation/results/summit_rush_search.json

Cross-play with a trained partner (``--partner``, default ``learned``): search + partner and partner + search, and
partner + partner for reference, on deals ``0..partner-games-1``, each paired with the simple strategy on the same
deals. ``--add`` plays only these teams and merges them into the existing ``--out`` file (the search and simple
teams stay as they were), so a new ``learned`` policy is measured again without replaying the rest; the partner's
policy digest is recorded with its cells:

    nice python -m cardzoo.evaluation.studies.search_summit_rush --add --partner learned --partner-games 100 \\
        --levels normal hard --out evaluation/results/summit_rush_search.json

The document's untimed variants (``--untimed``: its figures' options, silent; ``all`` for every one) are played by
the same four teams on their own deals ``0..games-1`` (the report's untimed deals) and kept under ``"untimed"``;
with ``--add`` they are merged into the file without replaying the timed levels:

    nice python -m cardzoo.evaluation.studies.search_summit_rush --add --levels --untimed all --games 500 \\
        --cross 100 --out evaluation/results/summit_rush_search.json
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import shlex
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

from cardzoo.agents.registry import fingerprint, make_agent
from cardzoo.agents.seeding import agent_seed
from cardzoo.agents.summit_rush_rollouts import rollout_values
from cardzoo.agents.summit_rush_search import Public, SummitRushSearch, candidates
from cardzoo.envs import summit_rush_v0
from cardzoo.envs.common.progress import Progress
from cardzoo.envs.common.stats import paired, wilson
from cardzoo.seeds import figures

TEAMS = (("search", "search"), ("simple", "simple"), ("search", "simple"), ("simple", "search"))
UNTIMED: dict[str, dict] = figures("summit_rush")["options"]  # the document's untimed variants: their env options


def make_env(setting: str):
    """The silent env of a timed level (``normal``, ``hard``) or of one of the document's untimed variants."""
    options = UNTIMED[setting] if setting in UNTIMED else {"level": setting}
    return summit_rush_v0.parallel_env(**options, talk=False, illegal_action="raise")


def play(env, seed: int, agents: list, clock: list[float]) -> dict:
    """One game of the report's deal ``seed``; ``clock`` collects the search seats' CPU seconds per decision."""
    obs, _ = env.reset(seed=seed)
    for seat, agent in enumerate(agents):
        agent.reset(agent_seed(seed, seat))
    info: dict = {}
    while env.agents:
        actions = {}
        for seat, name in enumerate(env.possible_agents):
            start = time.process_time()
            actions[name] = agents[seat].act(obs[name]["observation"], obs[name]["action_mask"])
            if isinstance(agents[seat], SummitRushSearch):
                clock.append(time.process_time() - start)
        obs, _, _, _, infos = env.step(actions)
        info = infos[env.possible_agents[0]]
    return info


class _Told:
    """The search handed the true deal as its only world (a diagnostic: it sees hidden cards)."""

    def __init__(self, env):
        self.env = env

    def reset(self, seed=None) -> None:
        pass

    def act(self, observation, action_mask) -> int:
        bits = int.from_bytes(np.packbits(observation.view(np.uint8), bitorder="little").tobytes(), "little")
        pub = Public(bits, observation.shape[0], action_mask.shape[0])
        cands = candidates(pub)
        values = rollout_values([self.env.game], cands)[0].tolist()
        return cands[values.index(max(values))][pub.table.seat]


def study(levels: list[str], games: int, cross: int, worlds: int, untimed: list[str] = ()) -> dict:
    out: dict = {"games": games, "cross_games": cross, "options": {"talk": False}, "worlds": worlds,
                 "seeds": f"0..{games - 1} (env.reset(seed=i), as the evaluation runner; cross-play 0..{cross - 1})",
                 "levels": {level: teams_cells(level, games, cross, worlds) for level in levels}}
    if untimed:
        out["untimed"] = untimed_cells(untimed, games, cross, worlds)
    return out


def teams_cells(setting: str, games: int, cross: int, worlds: int) -> dict:
    """The four teams of ``TEAMS`` on a level or untimed variant, each paired with simple + simple."""
    env = make_env(setting)
    cells = {}
    for team in TEAMS:
        n_games = games if team[0] == team[1] else cross
        cells["+".join(team)] = play_team(env, setting, team, n_games, worlds, told=team == ("search", "search"))
    _pair_with_simple(cells, cells["simple+simple"]["results"])
    return cells


def untimed_cells(variants: list[str], games: int, cross: int, worlds: int) -> dict:
    """The untimed variants' cells, each with its env options and deal counts (they may differ from the levels')."""
    cells = {}
    for v in variants:
        start = time.process_time()
        teams = teams_cells(v, games, min(cross, games), worlds)
        cells[v] = {"options": UNTIMED[v], "games": games, "cross_games": min(cross, games), "teams": teams,
                    "cpu_seconds": round(time.process_time() - start, 1)}
    return cells


def play_team(env, level: str, team: tuple[str, str], n_games: int, worlds: int, told: bool = False) -> dict:
    """The cell of one team (seat 0 first) on deals ``0..n_games-1``; ``told``: the loss sources too."""
    agents = [SummitRushSearch(worlds=worlds) if a == "search" else make_agent(a, "summit_rush_v0") for a in team]
    clock: list[float] = []
    records = []
    with Progress(f"{level} {'+'.join(team)}", n_games) as progress:
        for seed in range(n_games):
            records.append(play(env, seed, agents, clock))
            progress.update()
    won = [r["outcome"] == "win" for r in records]
    rate = wilson(sum(won), n_games)
    lost = [r for r in records if r["outcome"] != "win"]
    cell = {
        "games": n_games, "wins": sum(won), "rate": rate.rate, "low": rate.low, "high": rate.high,
        "losses": dict(Counter(r["outcome"] for r in lost)),
        "peaks_left_on_losses": {cause: statistics.fmean(r["peaks_left"] for r in lost if r["outcome"] == cause)
                                 for cause in {r["outcome"] for r in lost}},
        "collisions": sum(r["conflicts"] + r["bounced"] for r in records),
        "score_on_wins": statistics.fmean(r["score"] for r in records if r["outcome"] == "win") if any(won) else None,
        "results": "".join("W" if w else "L" for w in won),
    }
    if clock:
        cell["ms_per_decision"] = 1000 * statistics.fmean(clock)
        cell["ms_per_decision_max"] = 1000 * max(clock)
    if told:
        told_team = [_Told(env), _Told(env)]
        told_won = Counter(r["outcome"] for seed, r in enumerate(records) if r["outcome"] != "win"
                           and play(env, seed, told_team, [])["outcome"] == "win")
        cell["loss_sources"] = {
            "hidden_cards": dict(told_won),
            "rollout_limits": dict(Counter(r["outcome"] for r in lost) - told_won),
        }
    return cell


def _pair_with_simple(cells: dict, simple: str) -> None:
    """Each cell but simple + simple gets its paired difference with simple + simple on the same deals."""
    base = [c == "W" for c in simple]
    for name, cell in cells.items():
        if name != "simple+simple":
            cmp = paired([c == "W" for c in cell["results"]], base[:cell["games"]])
            cell["vs_simple"] = {"only_this": cmp.only_a, "only_simple": cmp.only_b, "difference": cmp.difference,
                                 "low": cmp.low, "high": cmp.high, "mcnemar_p": cmp.p_value}


def partner_cells(level: str, partner: str, games: int, worlds: int, simple: str | None) -> dict:
    """search + ``partner``, ``partner`` + search and ``partner`` + ``partner`` on deals ``0..games-1``, paired with
    the simple strategy (``simple``: its results as W/L, played here when missing or shorter)."""
    env = make_env(level)
    if simple is None or len(simple) < games:
        simple = play_team(env, level, ("simple", "simple"), games, worlds)["results"]
    cells = {"+".join(team): play_team(env, level, team, games, worlds)
             for team in (("search", partner), (partner, "search"), (partner, partner))}
    for cell in cells.values():
        cell["partner"], cell["partner_digest"] = partner, fingerprint(partner, "summit_rush_v0")
    _pair_with_simple(cells, simple)
    return cells


def settings_cells(result: dict) -> list[tuple[str, dict]]:
    """(level or untimed variant, its teams' cells) for every setting of a result file, the timed levels first."""
    return [*result["levels"].items(), *((v, u["teams"]) for v, u in result.get("untimed", {}).items())]


def write_csv(result: dict, path: Path) -> None:
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["level", "team", "games", "wins", "rate", "low", "high", "stuck", "time", "collisions",
                    "vs_simple", "vs_simple_low", "vs_simple_high", "mcnemar_p", "ms_per_decision"])
        for level, cells in settings_cells(result):
            for team, c in cells.items():
                v = c.get("vs_simple", {})
                w.writerow([level, team, c["games"], c["wins"], f"{c['rate']:.4f}", f"{c['low']:.4f}",
                            f"{c['high']:.4f}", c["losses"].get("stuck", 0), c["losses"].get("time", 0),
                            c["collisions"], *(f"{v[k]:.4f}" if k in v else "" for k in ("difference", "low",
                                                                                           "high", "mcnemar_p")),
                            f"{c['ms_per_decision']:.2f}" if "ms_per_decision" in c else ""])


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--games", type=int, default=200, help="deals per level (seeds 0..games-1)")
    p.add_argument("--cross", type=int, default=100, help="deals per level for the cross-play teams")
    p.add_argument("--levels", nargs="*", default=["normal", "hard"], help="timed levels, silent")
    p.add_argument("--untimed", nargs="+", default=[], choices=[*UNTIMED, "all"], metavar="VARIANT",
                   help=f"the document's untimed variants too ({', '.join(UNTIMED)}, or all)")
    p.add_argument("--worlds", type=int, default=SummitRushSearch().worlds, help="the search's sampled worlds")
    p.add_argument("--partner", default="learned", help="the trained partner of the cross-play with search")
    p.add_argument("--partner-games", type=int, default=0, help="deals per level with --partner (both orders)")
    p.add_argument("--add", action="store_true",
                   help="play only the --partner teams and --untimed variants, merged into the --out file")
    p.add_argument("--out", default="evaluation/results/summit_rush_search.json", help="JSON (a CSV beside it)")
    args = p.parse_args(argv)
    command = "python -m cardzoo.evaluation.studies.search_summit_rush " + shlex.join(
        sys.argv[1:] if argv is None else argv)
    make_agent(args.partner, "summit_rush_v0")  # an unknown name fails here, before any game
    untimed = list(UNTIMED) if "all" in args.untimed else list(dict.fromkeys(args.untimed))
    out = Path(args.out)
    start = time.process_time()
    if args.add:
        if args.partner_games <= 0 and not untimed:
            p.error("--add needs --partner-games or --untimed")
        if not out.is_file():
            p.error(f"--add merges into {out}, which does not exist")
        result = json.loads(out.read_text())
        for level in args.levels if args.partner_games else []:
            cells = result["levels"].setdefault(level, {})
            simple = cells.get("simple+simple", {}).get("results")
            cells.update(partner_cells(level, args.partner, args.partner_games, result["worlds"], simple))
            out.write_text(json.dumps(result, indent=1) + "\n")  # after each level: a partial run keeps its levels
        for variant in untimed:
            result.setdefault("untimed", {}).update(untimed_cells([variant], args.games, args.cross, result["worlds"]))
            out.write_text(json.dumps(result, indent=1) + "\n")
        earlier = [result.pop("command")] if "command" in result else result.get("commands", [])
        result["commands"] = [*earlier, command]  # every run that made the file, in order
        if args.partner_games:
            result["partner_cpu_seconds"] = round(time.process_time() - start, 1)
            result["partner_load_average"] = os.getloadavg()  # 1, 5, 15 minutes, at the end of the run
    else:
        result = study(args.levels, args.games, min(args.cross, args.games), args.worlds, untimed)
        for level in args.levels:
            if args.partner_games:
                result["levels"][level].update(partner_cells(level, args.partner, args.partner_games, args.worlds,
                                                             result["levels"][level]["simple+simple"]["results"]))
        result["cpu_seconds"] = round(time.process_time() - start, 1)
        result["command"] = command
    result["machine"] = platform.processor() or platform.machine()
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    write_csv(result, out.with_suffix(".csv"))
    for level, cells in settings_cells(result):
        for team, c in cells.items():
            v = c.get("vs_simple")
            extra = f", vs simple {100 * v['difference']:+.1f} [{100 * v['low']:+.1f}, {100 * v['high']:+.1f}]" \
                if v else ""
            print(f"{level} {team}: {100 * c['rate']:.1f}% [{100 * c['low']:.1f}, {100 * c['high']:.1f}] "
                  f"losses {c['losses']}{extra}")


if __name__ == "__main__":
    main()
