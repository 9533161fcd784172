"""Where a Summit Rush team loses a deal the game allowed it to win: the tick its game became lost, and what each
player did in that tick.

    python -m cardzoo.evaluation.studies.summit_rush_losses --agents learned simple --games 1000 --level normal

Each team (``--agents``: self-play of each spec; ``--partner`` puts that spec in the other seat) plays deals
``LOSSES_BASE_SEED + i`` of the benchmark's setting (two players, talking, the level), the players seeded as the
runner seeds them. Every tick's table is kept, and for each deal the oracle (:func:`cardzoo.agents.oracles.
summit_rush.solve_timed`: can any line of play clear the peaks within the ticks left, at most one card per pile per
tick?) judges:

- the deal: winnable from the start, or not (or undecided within the node budget);
- a lost deal that was winnable: the *critical tick*, the first tick after which no line wins any more (found by
  bisection; a lost position stays lost, so the ticks before it were all winnable), and each player's action in
  it, sorted into one of:

  - ``wait_with_a_play``: the player waited although a card fitted a pile;
  - ``turn_with_a_play``: it turned its stock although a card fitted (the document's "save your stock");
  - ``turn``: it turned its stock, nothing fitting (the wrong player turned, or too early in the line);
  - ``play``: it played a card (the wrong card, or onto the wrong pile);
  - ``wait``: it waited, nothing to play or turn;
  - and ``collision`` if a card of that tick went to waste (both took the same card, or it bounced).

- what else the tick allowed: every other move of one player (the partner's as played), with the tick's own
  who-touches-first order, judged by the oracle (*rescues*: labelled "turn -> wait", the kind played, then the
  other); and, since the oracle knows the hidden cards, whether a player could have known: the played move and the
  best rescue replayed in ``--worlds`` deals of the hidden cards dealt again (:func:`resample`; every such deal is as
  likely as the true one to the players), each scored by the share still winnable. A rescue ahead by ``KNOWABLE``
  or more was a choice a better player could have made (*knowable*); the rest was the hidden cards. (The best of
  several rescues' shares is the maximum of noisy estimates, biased upward: hence the margin.)

Also per game: ticks used, waits while a card fitted, turns while a card fitted, each seat's stock turned, and the
outcome (``win``, ``time``, ``stuck``). The summary (``--out`` JSON, Markdown and a PNG of the causes) says per team
how many deals were winnable, how many of those were lost, by which outcome, and the counts of the critical
actions: what to attack first. Every lost-but-winnable game's critical tick also goes in the JSON, with the deal
seed, so any of them can be replayed and looked at (``cardzoo replay`` on the record kept beside it).

The abstraction under-counts slightly (a tick where luck on the who-touches-first order puts two cards on one pile),
so a position it calls lost could in rare cases still be won; the bisection then names a tick a little early. A deal
whose judgement ran out of nodes is counted as undecided and left out of the critical ticks.
"""

from __future__ import annotations

import argparse
import json
import random
import shlex
import sys
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path
from typing import Any

from cardzoo.agents.oracles.summit_rush import DEFAULT_BUDGET, solve_timed
from cardzoo.agents.registry import make_agent
from cardzoo.envs import summit_rush_v0
from cardzoo.envs.common.seeding import refuse_benchmark_seeds
from cardzoo.envs.registry import GAMES
from cardzoo.envs.summit_rush import rules

# not the report's (0..), training's held-out (10M), distillation's (30M), the belief's (50M+), its reads (95M)
LOSSES_BASE_SEED = 70_000_000
RESULTS = Path(__file__).resolve().parents[1] / "results" / "summit_rush_losses"
KNOWABLE = 0.25  # a rescue that wins this much more often over the resampled deals was a choice, not luck


def kind(s: rules.State, seat: int, move: int) -> str:
    """What ``move`` (a move, without its message) was for ``seat`` in the table ``s`` at the tick's start."""
    n = s.config.players
    plays = rules.play_bits(s)
    if move == rules.N_PEAKS * n + 1:
        return "wait_with_a_play" if plays else "wait"
    if move == rules.N_PEAKS * n:
        return "turn_with_a_play" if plays else "turn"
    return "play"


def _wasted(before: rules.State, after: rules.State) -> bool:
    return (after.conflicts + after.bounced) > (before.conflicts + before.bounced)


def critical_tick(states: list[rules.State], budget: int = DEFAULT_BUDGET) -> int | None:
    """The tick ``t`` whose actions lost a winnable game: ``states[t]`` winnable, ``states[t + 1]`` not (``states[k]``
    is the table at the start of tick ``k``, the last one the end). None if a judgement ran out of nodes."""
    lo, hi = 0, len(states) - 1  # winnable at lo (checked by the caller), lost at hi (the game was lost)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        verdict = solve_timed(states[mid], budget=budget).winnable
        if verdict is None:
            return None
        lo, hi = (mid, hi) if verdict else (lo, mid)
    return lo


def _moves_of(s: rules.State, seat: int) -> list[int]:
    bits = rules.legal_bits(s, seat)
    return [m for m in range(bits.bit_length()) if bits >> m & 1]


def resample(s: rules.State, rng: random.Random) -> rules.State:
    """``s`` with its hidden cards dealt again at random: the face-down peak cards, every stock's unturned cards and
    the cards set aside -- what no player sees, so every such deal is as likely as the true one to them."""
    out = s.copy()
    down = [d for d in range(rules.N_PEAKS) if s.present >> d & 1 and not s.up >> d & 1]
    unturned = [st[len(st) - left:] for st, left in zip(s.stocks, s.stock_left, strict=True)]
    hidden = [s.peaks[d] for d in down] + [c for cards in unturned for c in cards] + list(s.aside)
    rng.shuffle(hidden)
    for d in down:
        out.peaks[d] = hidden.pop()
    for p, cards in enumerate(unturned):
        st = out.stocks[p]
        for i in range(len(st) - len(cards), len(st)):
            st[i] = hidden.pop()
    out.aside = hidden
    return out


def chances(before: rules.State, after: rules.State, joints: list[list[int]], worlds: int, seed: int,
            budget: int = DEFAULT_BUDGET) -> list[float]:
    """For each joint move, the share of ``worlds`` deals of the hidden cards (:func:`resample`, the same for every
    move) in which the table after it is still winnable: what a player could have known of each choice."""
    rng = random.Random(seed)
    sampled = [resample(before, rng) for _ in range(worlds)]
    out = []
    for joint in joints:
        won = 0
        for w in sampled:
            s = w.copy()
            rules.play_tick(s, joint, order=after.last_order)
            won += bool(solve_timed(s, budget=budget).winnable)
        out.append(won / worlds)
    return out


def rescues(before: rules.State, after: rules.State, played: list[int],
            budget: int = DEFAULT_BUDGET, worlds: int = 16, seed: int = 0) -> dict[str, Any]:
    """Which other actions at the critical tick would have kept the deal winnable, with the tick's own
    who-touches-first order: each player's other moves with the partner's as played (``one``, labelled ``"turn ->
    wait"``: the player's kind of action as played, then the other), and moves of both (``both``: how many pairs).
    The oracle knows the hidden cards, so a rescue may be one no player could have known to choose."""
    kinds = [kind(before, p, m) for p, m in enumerate(played)]
    one: set[str] = set()
    both = 0
    single: list[tuple[str, list[int]]] = []
    options = [_moves_of(before, p) for p in range(len(played))]
    for m0 in options[0]:
        for m1 in options[1]:
            alt = [m0, m1]
            if alt == played:
                continue
            s = before.copy()
            rules.play_tick(s, alt, order=after.last_order)
            if not solve_timed(s, budget=budget).winnable:
                continue
            changed = [p for p in (0, 1) if alt[p] != played[p]]
            if len(changed) == 1:
                p = changed[0]
                label = f"{kinds[p]} -> {kind(before, p, alt[p])}"
                one.add(label)
                single.append((label, alt))
            else:
                both += 1
    out: dict[str, Any] = {"one": sorted(one), "both": both}
    if single and worlds:
        # Could a player have known? The played move and each rescue in the same resampled deals.
        played_chance, *rescue_chances = chances(before, after, [played] + [j for _, j in single], worlds, seed,
                                                 budget)
        best = max(range(len(single)), key=lambda i: rescue_chances[i])
        out["belief"] = {"worlds": worlds, "played": played_chance, "best_rescue": rescue_chances[best],
                         "best_rescue_is": single[best][0]}
    return out


@dataclass(frozen=True)
class Team:
    seats: tuple[str, str]

    @property
    def name(self) -> str:
        return self.seats[0] if self.seats[0] == self.seats[1] else " + ".join(self.seats)


def play(team: Team, level: str, seed: int, budget: int = DEFAULT_BUDGET, worlds: int = 16) -> dict[str, Any]:
    """One deal: the team's game, every table kept, then the oracle's judgement (module docstring)."""
    options = {**GAMES["summit_rush"].benchmark_options, "level": level}
    env = summit_rush_v0.parallel_env(**options)
    observations, _ = env.reset(seed=seed)
    agents = {a: make_agent(spec, env, seed=seed * 2 + i, seat=i)
              for i, (a, spec) in enumerate(zip(env.possible_agents, team.seats, strict=True))}
    n_moves = env.n_moves
    states, moves, infos = [env.game.copy()], [], {}
    while env.agents:
        actions = {a: int(agents[a].act(o["observation"], o["action_mask"])) for a, o in observations.items()}
        moves.append([actions[a] % n_moves for a in env.possible_agents])
        observations, _, _, _, infos = env.step(actions)
        states.append(env.game.copy())
    info = next(iter(infos.values()))
    kinds = [[kind(states[t], p, m) for p, m in enumerate(ms)] for t, ms in enumerate(moves)]
    counts = Counter(k for ks in kinds for k in ks)
    row = {"seed": seed, "outcome": info["outcome"], "ticks": info["ticks"], "peaks_left": info["peaks_left"],
           "turned": [len(st) - left for st, left in zip(states[-1].stocks, states[-1].stock_left, strict=True)],
           "waits_with_a_play": counts["wait_with_a_play"], "turns_with_a_play": counts["turn_with_a_play"],
           "conflicts": info["conflicts"], "bounced": info["bounced"]}
    start = solve_timed(states[0], budget=budget).winnable
    row["winnable"] = start
    if info["outcome"] != rules.WIN and start:
        t = critical_tick(states, budget)
        row["critical"] = None if t is None else {
            "tick": t, "of": len(moves), "kinds": kinds[t], "collision": _wasted(states[t], states[t + 1]),
            "actions": [env.action_name(m) for m in moves[t]],
            "rescues": rescues(states[t], states[t + 1], moves[t], budget, worlds, seed)}
    return row


def _chunk(args) -> list[dict[str, Any]]:
    team, level, seeds, budget, worlds = args
    return [play(team, level, s, budget, worlds) for s in seeds]


def summarise(team: Team, level: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
    winnable = [r for r in rows if r["winnable"]]
    lost = [r for r in winnable if r["outcome"] != rules.WIN]
    judged = [r for r in lost if r.get("critical")]
    critical = Counter()
    for r in judged:
        critical.update(f"{k}+collision" if r["critical"]["collision"] and k == "play" else k
                        for k in r["critical"]["kinds"])

    def mean(key: str, of: list[dict[str, Any]]) -> float | None:
        return round(sum(r[key] for r in of) / len(of), 2) if of else None

    wins = [r for r in rows if r["outcome"] == rules.WIN]
    rescued = Counter(label for r in judged for label in r["critical"]["rescues"]["one"])
    by_one = sum(bool(r["critical"]["rescues"]["one"]) for r in judged)
    by_both = sum(not r["critical"]["rescues"]["one"] and r["critical"]["rescues"]["both"] > 0 for r in judged)
    beliefs = [r["critical"]["rescues"]["belief"] for r in judged if "belief" in r["critical"]["rescues"]]
    knowable = [b for b in beliefs if b["best_rescue"] - b["played"] >= KNOWABLE]
    return {
        "belief_checked": len(beliefs),
        "belief_played": round(sum(b["played"] for b in beliefs) / len(beliefs), 3) if beliefs else None,
        "belief_best_rescue": round(sum(b["best_rescue"] for b in beliefs) / len(beliefs), 3) if beliefs else None,
        "knowable": len(knowable), "knowable_rescues": dict(Counter(b["best_rescue_is"] for b in knowable)
                                                            .most_common()),
        "rescued_by_one_player": by_one, "rescued_only_by_both": by_both,
        "rescued_by_none": len(judged) - by_one - by_both, "rescues": dict(rescued.most_common()),
        "team": team.name, "seats": list(team.seats), "level": level, "games": len(rows), "wins": len(wins),
        "winnable": len(winnable), "undecided": sum(r["winnable"] is None for r in rows),
        "lost_winnable": len(lost), "lost_winnable_by": dict(Counter(r["outcome"] for r in lost)),
        "critical_judged": len(judged), "critical_kinds": dict(critical.most_common()),
        "critical_tick_share": (round(sum(r["critical"]["tick"] / max(1, r["critical"]["of"]) for r in judged)
                                      / len(judged), 3) if judged else None),
        "per_game": {k: {"won": mean(k, wins), "lost": mean(k, [r for r in rows if r["outcome"] != rules.WIN])}
                     for k in ("ticks", "waits_with_a_play", "turns_with_a_play", "conflicts", "bounced")},
    }


def markdown(summaries: list[dict[str, Any]], command: str) -> str:
    lines = ["# Summit Rush: where winnable deals are lost", "",
             f"Made by `{command}`. A deal is *winnable* if the oracle finds a line within the clock (at most one "
             "card per pile per tick); the *critical tick* of a winnable deal the team lost is the first after "
             "which no line wins; its two actions are counted below (module docstring of "
             "`cardzoo.evaluation.studies.summit_rush_losses`).", "",
             "| team | level | games | won | winnable | winnable, lost (time / stuck) | critical actions (of both "
             "players) | critical tick, share of the game | waits with a play per game (won / lost) |",
             "|---|---|---:|---:|---:|---:|---|---:|---:|"]
    for s in summaries:
        by = s["lost_winnable_by"]
        kinds = ", ".join(f"{k} {v}" for k, v in s["critical_kinds"].items()) or "–"
        waits = s["per_game"]["waits_with_a_play"]
        share = "–" if s["critical_tick_share"] is None else f"{100 * s['critical_tick_share']:.0f}%"
        lines.append(f"| `{s['team']}` | {s['level']} | {s['games']:,} | {s['wins']:,} | {s['winnable']:,} | "
                     f"{s['lost_winnable']:,} ({by.get('time', 0)} / {by.get('stuck', 0)}) | {kinds} | {share} | "
                     f"{waits['won']} / {waits['lost']} |")
    lines += ["", "What else the critical tick allowed. *Rescues*: another move of one player (the partner's as "
              "played) after which the deal is still winnable, with the hidden cards known (labelled as played -> "
              "instead). *Belief*: the played move and the best rescue in "
              f"{summaries[0].get('belief_worlds', 16)} deals of the "
              "hidden cards dealt again at random (what the players could know): the share still winnable after "
              f"each; a rescue ahead by {KNOWABLE:.2f} or more is counted *knowable*, a choice a better player could "
              "have made; the rest was the hidden cards.", "",
              "| team | level | critical ticks | rescued by one player / only by both / none | rescues (oracle) | "
              "belief: played / best rescue | knowable | knowable rescues |",
              "|---|---|---:|---:|---|---:|---:|---|"]
    for s in summaries:
        rescues = ", ".join(f"{k} {v}" for k, v in list(s["rescues"].items())[:4]) or "–"
        belief = ("–" if s["belief_played"] is None else
                  f"{100 * s['belief_played']:.0f}% / {100 * s['belief_best_rescue']:.0f}%")
        knowable = ", ".join(f"{k} {v}" for k, v in list(s["knowable_rescues"].items())[:3]) or "–"
        lines.append(f"| `{s['team']}` | {s['level']} | {s['critical_judged']:,} | {s['rescued_by_one_player']} / "
                     f"{s['rescued_only_by_both']} / {s['rescued_by_none']} | {rescues} | {belief} | "
                     f"{s['knowable']} of {s['belief_checked']} | {knowable} |")
    return "\n".join(lines) + "\n"


def chart(summaries: list[dict[str, Any]], path: Path) -> None:
    from cardzoo.envs.common import charts

    if not charts.available():
        return
    import matplotlib.pyplot as plt

    labels = [f"{s['team']}\n{s['level']}" for s in summaries]
    kinds = sorted({k for s in summaries for k in s["critical_kinds"]})
    fig, ax = plt.subplots(figsize=(2 + 1.6 * len(summaries), 4))
    bottom = [0] * len(summaries)
    for k in kinds:
        values = [s["critical_kinds"].get(k, 0) for s in summaries]
        ax.bar(labels, values, bottom=bottom, label=k)
        bottom = [b + v for b, v in zip(bottom, values, strict=True)]
    ax.set_ylabel("actions in the critical tick")
    ax.set_title("Summit Rush: what the players did when a winnable deal was lost")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--agents", nargs="+", default=["learned"], help="specs, each played in self-play")
    p.add_argument("--partner", help="this spec in the other seat of every team (both seatings)")
    p.add_argument("--level", default="normal", choices=GAMES["summit_rush"].levels)
    p.add_argument("--games", type=int, default=200, help="deals per team")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--budget", type=int, default=DEFAULT_BUDGET, help="the oracle's nodes per judgement")
    p.add_argument("--worlds", type=int, default=16, help="resampled deals of the hidden cards for the belief check "
                   "of each critical tick (0: none)")
    p.add_argument("--out", type=Path, help="the summary's JSON (default evaluation/results/summit_rush_losses/"
                   "<level>.json; .md and .png beside it)")
    args = p.parse_args(argv)
    if args.games < 1:
        p.error("--games must be at least 1")
    if args.worlds < 0:
        p.error("--worlds must be 0 or more")
    args.out = args.out or RESULTS / f"{args.level}.json"
    refuse_benchmark_seeds(LOSSES_BASE_SEED, args.games, "the Summit Rush loss study")
    command = "python -m cardzoo.evaluation.studies.summit_rush_losses " + shlex.join(
        sys.argv[1:] if argv is None else argv)
    teams = []
    for spec in args.agents:
        teams += [Team((spec, spec))] if args.partner is None else [Team((spec, args.partner)),
                                                                    Team((args.partner, spec))]
    seeds = [LOSSES_BASE_SEED + i for i in range(args.games)]
    step = max(1, len(seeds) // (4 * args.workers))
    summaries = []
    with ProcessPoolExecutor(args.workers, mp_context=get_context("fork")) as pool:
        for team in teams:
            started = time.perf_counter()
            chunks = [(team, args.level, seeds[i:i + step], args.budget, args.worlds)
                      for i in range(0, len(seeds), step)]
            rows = [r for rs in pool.map(_chunk, chunks) for r in rs]
            summary = summarise(team, args.level, rows)
            summary["wall_seconds"] = round(time.perf_counter() - started, 1)
            summary["belief_worlds"] = args.worlds
            summary["lost_winnable_games"] = [
                {k: r[k] for k in ("seed", "outcome", "ticks", "peaks_left", "turned", "critical")}
                for r in rows if r["winnable"] and r["outcome"] != rules.WIN]
            summaries.append(summary)
            print(f"{team.name} {args.level}: {summary['wins']}/{summary['games']} won, {summary['winnable']} "
                  f"winnable, {summary['lost_winnable']} of them lost; critical {summary['critical_kinds']}",
                  flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"command": command, "level": args.level, "games": args.games,
                                    "base_seed": LOSSES_BASE_SEED, "budget": args.budget,
                                    "teams": summaries}, separators=(",", ":")) + "\n")  # the .md is to read
    args.out.with_suffix(".md").write_text(markdown(summaries, command))
    chart(summaries, args.out.with_suffix(".png"))
    return summaries


if __name__ == "__main__":
    main()
