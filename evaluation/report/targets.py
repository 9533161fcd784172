"""Issue 28's targets -- the best agent within 100 ms of CPU per decision, the torch-free ``learned`` policy, and
cross-play with the benchmark's held-out partners -- checked against the committed results.

This is the report's block *The agents against issue 28's targets*. Every figure in it is read from a committed
file (the resumable studies' summaries, the benchmark's results, the report's own rows, the not-shipped training
runs' paired comparisons); only the targets are stated here. The block is written with every report page, a full
run's or a study's refresh (:func:`.writer.rewrite`), so it never lags the studies.
"""

from __future__ import annotations

import json

from .model import RESULTS, Section, load_result

# Issue 28's targets, win rates per level: (the best agent, `learned`).
LEVEL_TARGETS = {"rope_team": {"normal": (0.97, 0.93), "hard": (0.90, 0.84), "expert": (0.85, 0.78)},
                 "summit_rush": {"normal": (0.85, 0.78), "hard": (0.65, 0.55)}}
BEST = {game: {level: best for level, (best, _) in levels.items()} for game, levels in LEVEL_TARGETS.items()}
BEST["rook"] = {"heuristic": 0.65, "search": 0.55}  # single rounds won against each opponent
LEARNED = {game: {level: mine for level, (_, mine) in levels.items()} for game, levels in LEVEL_TARGETS.items()}
CROSS_PLAY_GAP = 0.05  # the best agent with the test pool: at most this far below its self-play
MIN_DEALS = 1000  # every search figure on at least this many deals (Rook: rounds) per level

TITLE = "## The agents against issue 28's targets"


def rate_text(cell: dict) -> str:
    """A rate with its 95 % interval, in percent (the report's search blocks use it too)."""
    return f"{100 * cell['rate']:.1f}% [{100 * cell['low']:.1f}, {100 * cell['high']:.1f}]"


def verdict(cell: dict, target: float) -> str:
    """A target is reached only when the whole interval is above it."""
    if cell["low"] >= target:
        return "reached"
    return "reached by the point estimate only" if cell["rate"] >= target else "not reached"


def _deals_note(n: int) -> str:
    return "" if n >= MIN_DEALS else f" (fewer than the issue's {MIN_DEALS:,})"


def _best_line(what: str, cell: dict, units: str, ms: float, target: float) -> tuple[str, str]:
    """The line of one search figure against its target (``cell``: rate, interval and ``units`` played), and the
    verdict, so the caller adds where the losses come from when it is not reached."""
    n = cell[units]
    said = verdict(cell, target)
    return (f"- {what}: {rate_text(cell)} of {n} {units}{_deals_note(n)}, {ms:.0f} ms per decision; target "
            f"{100 * target:.0f}% -- {said}.", said)


def _rope_team(rows: dict) -> list[str]:
    data = load_result("rope_team_search_learned")
    if not data:
        return ["- Rope Team: no `search_learned` study is committed."]
    out = []
    for level, target in BEST["rope_team"].items():
        entry = data["levels"].get(level)
        if not entry:
            out.append(f"- Rope Team {level}: `search_learned` not measured.")
            continue
        team = entry["teams"]["search_learned+search_learned"]
        line, said = _best_line(f"Rope Team {level}, `search_learned` (the best agent measured)",
                                {**team, "deals": team["games"]}, "deals", team["compute"]["mean_ms"], target)
        if said != "reached":
            counts = entry["loss_causes"]["counts"]
            line += (f" Its {team['games'] - team['wins']} losses by cause (each replayed with both seats told "
                     "their partner's hand): " + ", ".join(
                f"{cause.split(', ')[0]} ({cause.split(', ')[-1].replace('_', ' ')}) {n}"
                for cause, n in counts.items()) + ".")
        out.append(line)
    for level, target in LEARNED["rope_team"].items():
        row = rows.get(("rope_team", level, "learned"))
        if row is None:
            continue
        line = (f"- Rope Team {level}, `learned`: {rate_text(row)} of {row['games']:,} (the report's games); target "
                f"{100 * target:.0f}% -- {verdict(row, target)}.")
        entry = data["levels"].get(level)
        if verdict(row, target) != "reached" and entry:
            pair = entry["teams"]["search_learned+search_learned"]["minus_learned"]
            mine = entry["teams"]["learned+learned"]
            lost = mine["games"] - mine["wins"]
            line += (f" Of its {lost} losses on the study's {mine['games']} deals, `search_learned` (a search over "
                     f"this policy's own moves, with its probabilities as the partner model) wins {pair['only_this']}: "
                     "those were lost to the policy's choice of card, not to the cards; the other "
                     f"{lost - pair['only_this']} it loses too (its losses by cause: the Rope Team section).")
        out.append(line)
    return out


def _cross_play_results() -> dict[str, dict]:
    """Each cooperative game's ``search_learned`` result: the newest protocol's (``search_learned.json``) where it
    played all of that game, else the older one kept beside it (``search_learned_v1.json``). A game played only in
    part under the newer protocol (its levels run a piece at a time) keeps its complete older figure until then."""
    from cardzoo.evaluation.protocol.results import left_out

    chosen: dict[str, dict] = {}
    for stem in ("search_learned", "search_learned_v1"):
        path = RESULTS / "benchmark" / f"{stem}.json"
        if not path.is_file():
            continue
        data = json.loads(path.read_text())
        for game, result in data["games"].items():
            if game in chosen or left_out(data, game) or not result["headline"].get("self"):
                continue  # competitive (Rook): no self-play, nor a cross-play target
            chosen[game] = {"stem": stem, "protocol": data["protocol"], "games_per_cell": data["games_per_cell"],
                            "result": result}
    return chosen


def _cross_play() -> list[str]:
    chosen = _cross_play_results()
    if not chosen:
        return ["- Cross-play of the best agent with the benchmark's test pool: not measured (no complete game in "
                "`evaluation/results/benchmark/search_learned.json` or `search_learned_v1.json`)."]
    out = []
    for game in sorted(chosen):
        entry = chosen[game]
        result = entry["result"]
        head = result["headline"]
        gap = head["gap"]["test"]
        said = "reached" if gap <= CROSS_PLAY_GAP else "not reached"
        levels = "; ".join(f"{name} {100 * s['test']['rate']:.1f}% of {s['test']['games']} (self-play "
                           f"{100 * s['self']['rate']:.1f}% of {s['self']['games']})"
                           for name, s in head["settings"].items())
        worst = head["worst"]
        out.append(f"- {result['title']} cross-play, `search_learned` with the test pool ({entry['protocol']}, "
                   f"{entry['games_per_cell']} games per cell, both seats; `{entry['stem']}.json`): "
                   f"{rate_text(head['cross']['test'])} of "
                   f"{head['cross']['test']['games']} against {rate_text(head['self'])} of {head['self']['games']} in "
                   f"self-play on the same deals, a gap of {100 * gap:+.1f} points; target at most "
                   f"{100 * CROSS_PLAY_GAP:.0f} -- {said}. By level: {levels}. Worst partner: "
                   f"{worst['partner']} ({worst['part']}) {100 * worst['rate']:.1f}%.")
    return out


def _summit_rush(rows: dict) -> list[str]:
    data = load_result("summit_rush_search_learned")
    out = []
    for level, target in BEST["summit_rush"].items():
        entry = (data or {}).get("levels", {}).get(level)
        if not entry:
            out.append(f"- Summit Rush {level}: `search_learned` not measured.")
            continue
        c = entry["cells"]["search_learned"]
        line, said = _best_line(f"Summit Rush {level} (timed, silent), `search_learned`", {**c, "deals": c["games"]},
                                "deals", c["ms_per_decision"], target)
        if said != "reached":
            src = c["loss_sources"]
            line += (f" Its {c['games'] - c['wins']} losses: {c['losses'].get('stuck', 0)} stuck, "
                     f"{c['losses'].get('time', 0)} on time; told the true deal the same search wins "
                     f"{sum(src.get('hidden_cards', {}).values())} (lost to the hidden cards) and loses "
                     f"{sum(src.get('rollout_limits', {}).values())} (the learned rollouts' limits).")
        old = entry.get("old_search")
        if old:
            vs = old["search_learned_minus_search"]
            line += (f" The old search (simple blueprint, {old['ms_per_decision']:.0f} ms) on the same first "
                     f"{old['games']} deals: {rate_text(old)}; `search_learned` minus it {100 * vs['difference']:+.1f} "
                     f"[{100 * vs['low']:+.1f}, {100 * vs['high']:+.1f}] points.")
        out.append(line)
    for level, target in LEARNED["summit_rush"].items():
        row = rows.get(("summit_rush", level, "learned"))
        if row is not None:
            out.append(f"- Summit Rush {level}, `learned`: {rate_text(row)} of {row['games']:,} (the report's games); "
                       f"target {100 * target:.0f}% -- {verdict(row, target)}.")
    out += _summit_rush_talking(data or {})
    return out


def _summit_rush_talking(data: dict) -> list[str]:
    """The talking levels: ``search_learned`` says nothing, so a team of two plays its silent game there; the study
    checks that on the first deals of each level (``talking``), and the silent figure stands for the level only
    if every checked deal was the same game."""
    out = []
    for level, target in BEST["summit_rush"].items():
        entry = data.get("levels", {}).get(level, {})
        check, c = entry.get("talking"), entry.get("cells", {}).get("search_learned")
        if not check or not c:
            out.append(f"- Summit Rush {level} (timed, talking), `search_learned`: not measured.")
            continue
        head = f"Summit Rush {level} (timed, talking), `search_learned` (it says nothing, and hears nothing from its "
        if check["same_game"] == check["deals"]:
            line, _ = _best_line(head + f"partner): its talking games were its silent games on all {check['deals']} "
                                 "deals played both ways (outcome, ticks, score, collisions), so its talking figure "
                                 "is the silent one", {**c, "deals": c["games"]}, "deals", c["ms_per_decision"], target)
            line += " Its losses are the silent level's, above."
        else:
            line, _ = _best_line(head + f"partner), on the {check['deals']} deals played talking, "
                                 f"{check['deals'] - check['same_game']} of them not as the silent game",
                                 check, "deals", c["ms_per_decision"], target)
        out.append(line + " The agents that call: the Summit Rush section.")
    return out


def _rook() -> list[str]:
    data = load_result("rook_learned_search")
    out = []
    matches = (data or {}).get("matches", {})
    for opponent, target in BEST["rook"].items():
        for agent in ("search_learned", "search_wide"):  # the blueprint search; the old one given its compute
            cell = matches.get(f"{agent} vs {opponent}")
            if not cell:
                out.append(f"- Rook for Two vs {opponent}: `{agent}` not measured.")
                continue
            line, said = _best_line(f"Rook for Two, single rounds against `{opponent}`, `{agent}`", cell, "rounds",
                                    cell["ms_per_decision_first"], target)
            if said != "reached" and cell.get("losses"):
                line += (" Its lost rounds: " + ", ".join(f"{n} {cause}" for cause, n in cell["losses"].items())
                         + f"; it won the bid in {cell['first_won_bid']} rounds and made {cell['first_bid_made']}.")
            out.append(line)
    return out


def _tried() -> list[str]:
    """What was tried for the targets and not kept, with its numbers."""
    out = []
    for run, what in (("rope_team_otherplay_not_shipped", "other-play over the 24 suit relabellings"),
                      ("rope_team_partners_not_shipped", "half its games beside the simple strategy")):
        path = RESULTS / "training" / run / "paired.json"
        if path.is_file():
            levels = json.loads(path.read_text())["levels"]
            diffs = ", ".join(f"{name} {100 * v['paired']['self']['difference']:+.1f} "
                              f"[{100 * v['paired']['self']['low']:+.1f}, {100 * v['paired']['self']['high']:+.1f}]"
                              for name, v in levels.items())
            out.append(f"- Rope Team `learned` fine-tuned with {what} (`evaluation/results/training/{run}/`): "
                       f"self-play minus the shipped policy on the report's deals, points: {diffs}. Not shipped.")
    belief = load_result("rope_team_belief")
    if belief:
        parts = []
        for name, level in belief["play"].items():
            t = level["teams"]
            mine, old = t["search_belief"], t["search"]
            parts.append(f"{name} {100 * mine['rate']:.1f}% at {mine['ms_per_decision']:.1f} ms against `search` "
                         f"{100 * old['rate']:.1f}% at {old['ms_per_decision']:.1f} ms ({level['games']} deals)")
        out.append("- Rope Team `search_belief` (worlds from a learned belief, a third of the rollouts: the old "
                   "search at half its compute, weaker than `search_learned`): " + "; ".join(parts) + ".")
    rope = load_result("rope_team_search_learned") or {}
    matched = [(name, lvl["teams"]["search_matched+search_matched"]) for name, lvl in rope.get("levels", {}).items()
               if "search_matched+search_matched" in lvl["teams"]]
    if matched:
        out.append("- Rope Team: the old search given `search_learned`'s compute (what more CPU buys without the "
                   "learned blueprint): " + "; ".join(
                       f"{name} {rate_text(c)} of {c['games']} at {c['compute']['mean_ms']:.0f} ms, "
                       f"{-100 * c['minus_search_learned']['difference']:+.1f} points for `search_learned`"
                       for name, c in matched) + ".")
    rook = load_result("rook_learned_search") or {}
    for m, c in rook.get("matches", {}).items():
        vs = rook.get("paired", {}).get(f"{m.split(' vs ')[0]} minus search_learned vs {m.split(' vs ')[1]}")
        if m.startswith("search_wide ") and vs:
            out.append(f"- Rook: the old search given about `search_learned`'s compute (`{m}`, "
                       f"{c['ms_per_decision_first']:.0f} ms per decision): {rate_text(c)} of {c['rounds']} rounds; "
                       f"`search_learned` minus it {-100 * vs['difference']:+.1f} [{-100 * vs['high']:+.1f}, "
                       f"{-100 * vs['low']:+.1f}] points on the {vs['rounds']} rounds both played.")
    variants = [(m, c) for m, c in rook.get("matches", {}).items() if m.startswith("search_learned{")]
    if variants:
        out.append("- Rook variants of `search_learned` (options of the agent, not its defaults): " + "; ".join(
            f"`{m}` {rate_text(c)} of {c['rounds']}" for m, c in variants) + ".")
    dev = load_result("summit_rush_search_learned_dev")
    if dev:
        out.append(f"- Summit Rush search settings tried on dev deals: {len(dev['by_settings'])} settings, in the "
                   "Summit Rush section's *Search on the learned blueprint*.")
    return out


def targets_lines(sections: list[Section]) -> list[str]:
    """The block's lines (Markdown), empty when no study of issue 28 is committed."""
    if not any(load_result(n) for n in ("rope_team_search_learned", "summit_rush_search_learned",
                                        "rook_learned_search")):
        return []
    rows = {(r.game, r.setting, r.source): {"rate": r.rate, "low": r.low, "high": r.high, "games": r.games}
            for s in sections for r in s.rows if r.low is not None}
    return [TITLE, "",
            "The best agent within 100 ms of CPU per decision, the torch-free `learned` policy (under 1 ms) and "
            "cross-play with the benchmark's held-out partners, from the committed studies. For a target not "
            "reached, where the losses come from, counted.", "",
            *_rope_team(rows), *_cross_play(), *_summit_rush(rows), *_rook(), "",
            "Tried for these targets, with their numbers (the fine-tuned policies were not shipped; `search_belief` is "
            "in the registry; the other searches are options of registered agents):", "", *_tried(), ""]
