"""The search agents in the evaluation report, from their committed study results.

A search decision costs 10-30 ms of CPU, too slow for the report's 10,000 deals per cell, so -- as with the
oracles' ceilings -- the search studies (``evaluation/studies/search_{rope_team,summit_rush,rook}.py``) play the
first deals of the report's deals once and commit their results in ``evaluation/results/<game>_search.json``; the
report reads them (:func:`.model.load_result`) and prints them with their game counts and intervals, the paired
difference with the simple strategy on the same deals (McNemar), the cross-play with the simple strategy and with
the learned policy (both orders), the mean CPU time per search decision, and, for every target of issue 11 not
reached, where the losses come from, counted.

Each game's section calls its function here (:func:`rope_team`, :func:`summit_rush`, :func:`rook`): it adds the
rows (``Row.source`` ``search``, ``search + simple``, ..., noted with the deals they were played on) and the
lines of the section's table, and sets the section's ``summary`` lines, which the report puts at its top. A
missing result file leaves the section as it was, with a note.
"""

from __future__ import annotations

import itertools

from .model import Row, Section, load_result
from .targets import BEST, verdict
from .targets import rate_text as _rate

# Issue 11's targets (win rates of the search team; Rook: single rounds against the heuristic).
TARGETS = {("rope_team", "normal"): 0.95, ("rope_team", "hard"): 0.85, ("rope_team", "expert"): 0.75,
           ("summit_rush", "normal"): 0.85, ("summit_rush", "hard"): 0.60, ("rook", "single round"): 0.60}
# Team labels of the result files -> report sources ("a+b": player_0 plays a).
SOURCES = {"search+search": "search", "simple+simple": "simple (search deals)", "search+simple": "search + simple",
           "simple+search": "simple + search", "learned+learned": "learned (search deals)"}


def _source(label: str) -> str:
    return SOURCES.get(label, label.replace("+", " + "))


def _diff(cell: dict) -> str:
    vs = cell.get("vs_simple")
    if not vs:
        return "–"
    return f"{100 * vs['difference']:+.1f} [{100 * vs['low']:+.1f}, {100 * vs['high']:+.1f}]"


def _cell(cell: dict | None, paired: bool = True) -> str:
    if cell is None:
        return "–"
    return f"{_rate(cell)} of {cell['games']}" + (f"; {_diff(cell)}" if paired and cell.get("vs_simple") else "")


def _target_line(game: str, setting: str, label: str, cell: dict, causes: str) -> str:
    target = TARGETS[game, setting]
    reached = cell["rate"] >= target
    verdict = ("reached" + ("" if cell["low"] >= target else " by the point estimate; its interval reaches below")
               if reached else "not reached")
    line = f"{label}: search {_rate(cell)} of {cell['games']}, target {100 * target:.0f}% -- {verdict}."
    return line + ("" if reached and cell["low"] >= target else f" {causes}")


def stale_partners(cells: dict, env: str) -> list[str]:
    """The teams of ``cells`` whose trained partner is no longer the agent of that name: the study recorded the
    partner's policy digest, and the policy shipped under the name now has another (a retrained ``learned``). Their
    rows measure the earlier policy, so the report says so rather than pass them off as today's."""
    from cardzoo.agents.registry import fingerprint

    now: dict[str, str] = {}
    stale = []
    for label, cell in cells.items():
        partner = cell.get("partner")
        if partner and "partner_digest" in cell:
            if partner not in now:
                now[partner] = fingerprint(partner, env)
            if cell["partner_digest"] != now[partner]:
                stale.append(label)
    return stale


def _stale_note(stale: dict[str, list[str]]) -> list[str]:
    if not stale:
        return []
    where = "; ".join(f"{level}: {', '.join(labels)}" for level, labels in stale.items())
    return ["", f"**Measured with an earlier policy**: these cross-play teams were played with a partner whose "
            f"shipped policy has changed since ({where}); redo them with the study's `--add --partner NAME`."]


def _plural(n: int, word: str, plural: str | None = None) -> str:
    return f"{n} {word if n == 1 else plural or word + 's'}"


# ---------------------------------------------------------------------------- Rope Team
ENDS = {"fall": ("fall", "falls"), "out_of_deals": ("game out of deals", "games out of deals")}


def _rope_team_causes(level: dict) -> str:
    """The search team's losses by cause (the study replays each with every player told the partner's hand)."""
    lost = level["teams"]["search+search"]["games"] - level["teams"]["search+search"]["wins"]
    counts = level.get("loss_causes", {}).get("counts", {})
    ends: dict[str, int] = {}
    causes: dict[str, int] = {}
    for key, n in counts.items():
        cause, end = key.rsplit(", ", 1)
        causes[cause] = causes.get(cause, 0) + n
        ends[end] = ends.get(end, 0) + n
    told = causes.get("read of the partner", 0)
    return (f"Its {_plural(lost, 'loss', 'losses')}: "
            + ", ".join(_plural(n, *ENDS.get(end, (end, end))) for end, n in sorted(ends.items()))
            + f"; replayed with each player told its partner's hand, {told} of them are won (lost to the read of the "
            f"partner) and {causes.get('other', 0)} still lost (the face-down ridge, later deals, the rollouts' "
            f"limits); unwinnable for the perfect-information oracle: {causes.get('unwinnable', 0)}.")


def _counts(level: dict) -> str:
    counts = level.get("loss_causes", {}).get("counts", {})
    return ", ".join(f"{key.rsplit(', ', 1)[0]} ({key.rsplit(', ', 1)[1].replace('_', ' ')}) {n}"
                     for key, n in counts.items()) or "none"


def rope_team(out: Section, ceilings: dict[str, Row | None]) -> list[str]:
    data = load_result("rope_team_search")
    if data is None:
        return ["", "No search results are committed (`evaluation/results/rope_team_search.json`)."]
    lines = [
        "",
        "### Search agent",
        "",
        "`search` (`cardzoo.agents.rope_team_search`: belief search on the simple strategy as blueprint, each "
        "player's worlds weighted by how likely its partner's plays are) on the first deals of the report's deals, "
        "from the committed study (`evaluation/results/rope_team_search.json`; fewer deals than above: a search "
        "decision costs milliseconds). Each cell: the win rate, its deals and, after the semicolon, the paired "
        "difference with two simple-strategy players on the same deals (points, 95 %). *Learned (search deals)*: "
        "two `learned` players on those deals. Cross-play: `player_0` first.",
        "",
        "| level | search | simple (same deals) | learned (same deals) | search + simple | simple + search | "
        "search + learned | learned + search | CPU ms per search decision (team; with learned) | ceiling | "
        "target |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    stale = {}
    for name, level in data["levels"].items():
        teams = level["teams"]
        if labels := stale_partners(teams, "rope_team_v0"):
            stale[name] = labels
        for label, cell in teams.items():
            out.rows.append(Row("rope_team", name, _source(label), cell["rate"], cell["low"], cell["high"],
                                cell["games"], note=f"first {cell['games']} deals, rope_team_search.json"))
        with_learned = [teams[t]["mean_ms_per_search_decision"] for t in ("search+learned", "learned+search")
                        if "mean_ms_per_search_decision" in teams.get(t, {})]
        ms = f"{level['time']['mean_ms']:.0f}" + (f"; {sum(with_learned) / len(with_learned):.0f}"
                                                  if with_learned else "")
        ceiling = ceilings.get(name)
        target = TARGETS.get(("rope_team", name))
        lines.append(
            f"| {name} | {_cell(teams['search+search'])} | {_cell(teams['simple+simple'], False)} | "
            f"{_cell(teams.get('learned+learned'))} | {_cell(teams.get('search+simple'))} | "
            f"{_cell(teams.get('simple+search'))} | {_cell(teams.get('search+learned'))} | "
            f"{_cell(teams.get('learned+search'))} | {ms} | "
            f"{f'{100 * ceiling.rate:.2f}%' if ceiling else '–'} | {f'{100 * target:.0f}%' if target else '–'} |")
        if target:
            out.summary.append(_target_line("rope_team", name, f"Rope Team {name}", teams["search+search"],
                                            _rope_team_causes(level)))
    commands = data.get("commands") or [data.get("command")]
    lines += ["", "CPU times come from the runs that played the teams (the search team's and the cross-play with "
              "learned were different runs on a shared machine), so they compare within a column only.",
              "", "Losses of the search team by cause (each lost deal replayed with every player told its partner's "
              "hand; *unwinnable*: the oracle finds no winning line): "
              + "; ".join(f"{name} {_counts(lvl)}" for name, lvl in data["levels"].items()) + ".",
              "", "Made by: " + "; ".join(f"`{c}`" for c in commands if c) + "."]
    return lines + _stale_note(stale) + rope_team_learned(out)


def _paired_cell(cmp: dict | None, flip: bool = False) -> str:
    """A paired difference, points with its 95 % interval and the discordant deals; ``flip`` states it the other
    way round (B minus A)."""
    if not cmp:
        return "–"
    d, lo, hi, a, b = cmp["difference"], cmp["low"], cmp["high"], cmp["only_this"], cmp["only_other"]
    if flip:
        d, lo, hi, a, b = -d, -hi, -lo, b, a
    return f"{100 * d:+.1f} [{100 * lo:+.1f}, {100 * hi:+.1f}] ({a} vs {b})"


def rope_team_learned(out: Section) -> list[str]:
    """The search on the learned blueprint (``search_learned``), from its resumable study's committed summary."""
    data = load_result("rope_team_search_learned")
    if data is None:
        return ["", "No results of the search on the learned blueprint are committed "
                "(`evaluation/results/rope_team_search_learned.json`)."]
    budget = data["budget"]
    lines = [
        "",
        "### Search on the learned blueprint",
        "",
        f"`search_learned` (`cardzoo.agents.rope_team_search` with `blueprint=\"learned\"`: worlds weighted by "
        f"the learned policy's probabilities of the partner's plays, rollouts played by the learned policy, "
        f"{budget['worlds']} worlds drawn and {budget['rollouts']} rollouts per decision) on the first deals of the "
        "report's deals, from its resumable study (`evaluation/results/rope_team_search_learned.json`). Every team "
        "on the same deals; the differences are paired (points, 95 %; discordant deals won by this team vs the "
        "other). CPU: `time.process_time` per decision of the search seats, one BLAS thread.",
        "",
        "| level | deals | search_learned | learned | simple | search_learned − learned | search_learned − simple | "
        "search_learned + learned | learned + search_learned | CPU ms per decision (mean; max) | rollouts per "
        "search (worlds each) | `search` (simple blueprint) on these deals |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    verdicts = []
    for name, level in data["levels"].items():
        teams = level["teams"]
        team = teams.get("search_learned+search_learned")
        if team is None:
            continue
        for label, cell in teams.items():
            first, second = label.split("+")
            source = (label.replace("+", " + ") if first != second else first if first == "search_learned"
                      else f"{first} (search_learned deals)")
            out.rows.append(Row("rope_team", name, source, cell["rate"], cell["low"], cell["high"], cell["games"],
                                note=f"first {cell['games']} deals, rope_team_search_learned.json"))
        comp = team["compute"]
        old = level.get("old_search")
        old_text = "–"
        if old and old.get("search_learned_minus_search"):
            vs = old["search_learned_minus_search"]
            old_text = (f"{_rate(old)} of {old['games']} at {old['mean_ms']:.0f} ms; search_learned minus it "
                        f"{_paired_cell(vs)}")
        lines.append(
            f"| {name} | {level['deals']} | {_rate(team)} | {_rate(teams['learned+learned'])} | "
            f"{_rate(teams['simple+simple'])} | {_paired_cell(team.get('minus_learned'))} | "
            f"{_paired_cell(team.get('minus_simple'))} | "
            + " | ".join(f"{_rate(teams[t])} of {teams[t]['games']}; {_paired_cell(teams[t].get('minus_learned'))}"
                         if t in teams else "–" for t in ("search_learned+learned", "learned+search_learned"))
            + f" | {comp['mean_ms']:.0f}; {comp['max_ms']:.0f} | {comp['rollouts_per_search']:.0f} "
            f"({comp['rollout_worlds_per_search']:.0f}) | {old_text} |")
        if name in BEST["rope_team"]:
            target = BEST["rope_team"][name]
            verdicts.append(f"{name} {_rate(team)} of {team['games']} against {100 * target:.0f}% -- "
                            + verdict(team, target))
    matched = [(name, lvl["teams"]["search_matched+search_matched"]) for name, lvl in data["levels"].items()
               if "search_matched+search_matched" in lvl["teams"]]
    if matched:
        mb = data.get("matched_budget", {})
        lines += ["", f"What the same compute buys the old search (issue 28, item 4): `search` on the simple strategy "
                  f"given {mb.get('worlds')} worlds and {mb.get('rollouts')} rollouts per decision, about "
                  "`search_learned`'s CPU, on the first deals of the same report's deals: "
                  + "; ".join(f"{name} {_rate(c)} of {c['games']} at {c['compute']['mean_ms']:.0f} ms per decision, "
                              f"`search_learned` minus it {_paired_cell(c.get('minus_search_learned'), flip=True)}"
                              for name, c in matched) + "."]
    lines += ["", "Cross-play columns: the win rate with its deals; after the semicolon, the paired difference "
              "with two `learned` players on those deals. *Rollouts per search*: games played out per decision "
              "with more than one candidate card, shared by the candidates (each plays the same worlds, in "
              "brackets).",
              "", "Issue 28's targets for the best agent (100 ms of CPU per decision): " + "; ".join(verdicts) + ".",
              "", "Losses of `search_learned` by cause (each lost deal replayed with both seats told their partner's "
              "hand; *unwinnable*: the oracle finds no winning line): "
              + "; ".join(f"{name}: {_counts(lvl)}" for name, lvl in data["levels"].items()) + ".",
              "", "Made by: " + "; ".join(f"`{c}`" for c in data.get("commands", [])) + "."]
    # Marked, so the study can refresh this block of the committed report without replaying the rest.
    return ["", ROPE_LEARNED_BEGIN, *lines[1:], ROPE_LEARNED_END]


ROPE_LEARNED_BEGIN = "<!-- search_learned rope_team: begin -->"
ROPE_LEARNED_END = "<!-- search_learned rope_team: end -->"


# ---------------------------------------------------------------------------- Summit Rush
def _summit_rush_causes(cells: dict) -> str:
    cell = cells["search+search"]
    lost = cell["games"] - cell["wins"]
    ends = cell.get("losses", {})
    sources = cell.get("loss_sources", {})
    told = sum(sources.get("hidden_cards", {}).values())
    limits = sum(sources.get("rollout_limits", {}).values())
    simple = cells.get("simple+simple", {})
    simple_lost = simple.get("games", 0) - simple.get("wins", 0)
    return (f"Its {_plural(lost, 'loss', 'losses')}: {ends.get('stuck', 0)} stuck (both stocks used up and nothing "
            f"fits), {ends.get('time', 0)} on time (the simple strategy on the same deals loses "
            f"{simple.get('losses', {}).get('time', 0)} of its {simple_lost} on time); told the true deal, the search "
            f"wins {told} of them (lost to the hidden cards: the face-down peaks and the stocks' order) and loses "
            f"{limits} even so (the limits of rollouts of the blueprint).")


def _ms(cells: dict, *labels: str) -> str:
    """The mean of the teams' CPU ms per search decision."""
    times = [cells[t]["ms_per_decision"] for t in labels if "ms_per_decision" in cells.get(t, {})]
    return f"{sum(times) / len(times):.0f}" if times else "–"


def timed_row(level: str, label: str) -> str | None:
    """The search team's line of the section's timed table (its first deals; the columns it has)."""
    cells = (load_result("summit_rush_search") or {}).get("levels", {}).get(level)
    if not cells:
        return None
    c = cells["search+search"]
    losses = c["losses"]
    score = "–" if c.get("score_on_wins") is None else f"{c['score_on_wins']:.1f}"
    return (f"| {label} | search (first {c['games']} deals; below) | {_rate(c)} | | {losses.get('time', 0)} / "
            f"{losses.get('stuck', 0)} of {c['games'] - c['wins']} | – | {score} | – | {c['collisions']} |")


def untimed_cell(variant: str) -> str:
    """The search team's cell of the report's untimed table (its own deals; "–" without a committed result)."""
    data = (load_result("summit_rush_search") or {}).get("untimed", {}).get(variant)
    if not data:
        return "–"
    c = data["teams"]["search+search"]
    return f"{100 * c['rate']:.1f}% of {c['games']}; {_diff(c)}"


def _untimed_lines(out: Section, untimed: dict, ceilings: dict[str, Row | None]) -> list[str]:
    if not untimed:
        return []
    lines = [
        "",
        "The document's untimed variants (silent; deals `0..n-1` of the report's untimed deals), the same teams. No "
        "shipped `learned` policy plays them: each was trained on a timed level, whose observation has a clock.",
        "",
        "| variant | search | simple (same deals) | search + simple | simple + search | CPU ms per search decision "
        "(team; with simple) | losses of the search team: stuck; told the deal, won / still lost | ceiling |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for variant, data in untimed.items():
        cells = data["teams"]
        for label, cell in cells.items():
            out.rows.append(Row("summit_rush", variant, _source(label), cell["rate"], cell["low"], cell["high"],
                                cell["games"], note=f"first {cell['games']} deals, summit_rush_search.json"))
        c = cells["search+search"]
        sources = c.get("loss_sources", {})
        ceiling = ceilings.get(variant)
        lines.append(
            f"| {variant} | {_cell(c)} | {_cell(cells['simple+simple'], False)} | {_cell(cells.get('search+simple'))}"
            f" | {_cell(cells.get('simple+search'))} | {_ms(cells, 'search+search')}; "
            f"{_ms(cells, 'search+simple', 'simple+search')} | {c['losses'].get('stuck', 0)}; "
            f"{sum(sources.get('hidden_cards', {}).values())} / {sum(sources.get('rollout_limits', {}).values())} | "
            f"{f'{100 * ceiling.rate:.1f}%' if ceiling else '–'} |")
    return lines


def summit_rush(out: Section, ceilings: dict[str, Row | None]) -> list[str]:
    data = load_result("summit_rush_search")
    if data is None:
        return ["", "No search results are committed (`evaluation/results/summit_rush_search.json`)."]
    lines = [
        "",
        "### Search agent",
        "",
        "`search` (`cardzoo.agents.summit_rush_search`: the team's joint move for the tick, rolled out in sampled "
        "deals of the face-down cards and stocks; both seats compute the same joint move) on the first deals of the "
        "report's timed deals (silent), from the committed study (`evaluation/results/summit_rush_search.json`). "
        "Each cell: the win rate, its deals and, after the semicolon, the paired difference with two "
        "simple-strategy players on the same deals (points, 95 %). Cross-play: `player_0` first.",
        "",
        "| level | search | simple (same deals) | learned (same deals) | search + simple | simple + search | "
        "search + learned | learned + search | CPU ms per search decision (team; with simple; with learned) | "
        "ceiling | target |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    stale = {}
    for level, cells in data["levels"].items():
        if labels := stale_partners(cells, "summit_rush_v0"):
            stale[level] = labels
        for label, cell in cells.items():
            out.rows.append(Row("summit_rush", level, _source(label), cell["rate"], cell["low"], cell["high"],
                                cell["games"], note=f"first {cell['games']} deals, summit_rush_search.json"))

        ceiling = ceilings.get(level)
        target = TARGETS.get(("summit_rush", level))
        lines.append(
            f"| {level} | {_cell(cells['search+search'])} | {_cell(cells['simple+simple'], False)} | "
            f"{_cell(cells.get('learned+learned'))} | {_cell(cells.get('search+simple'))} | "
            f"{_cell(cells.get('simple+search'))} | {_cell(cells.get('search+learned'))} | "
            f"{_cell(cells.get('learned+search'))} | {_ms(cells, 'search+search')}; "
            f"{_ms(cells, 'search+simple', 'simple+search')}; {_ms(cells, 'search+learned', 'learned+search')} | "
            f"{f'{100 * ceiling.rate:.1f}%' if ceiling else '–'} | "
            f"{f'{100 * target:.0f}%' if target else '–'} |")
        if target:
            out.summary.append(_target_line("summit_rush", level, f"Summit Rush {level} (timed)",
                                            cells["search+search"], _summit_rush_causes(cells)))
    lines += _untimed_lines(out, data.get("untimed", {}), ceilings)
    commands = data.get("commands") or [data.get("command")]
    lines += ["", "A search team's seats share one search per tick (the second seat reuses the first's), so its time "
              "per decision is half a search; a search seat with another partner pays the whole search every tick.",
              "", "Made by: " + "; ".join(f"`{c}`" for c in commands if c) + "."]
    return lines + _stale_note(stale) + summit_rush_learned(out)


def _vs(cell: dict, other: str) -> str:
    v = cell[f"vs_{other}"]
    return f"{100 * v['difference']:+.1f} [{100 * v['low']:+.1f}, {100 * v['high']:+.1f}]"


def summit_rush_learned(out: Section) -> list[str]:
    """The search on the learned blueprint (issue 28), from ``summit_rush_search_learned.json``."""
    data = load_result("summit_rush_search_learned")
    if not data or not data.get("levels"):
        return []
    s = data["settings"]
    wins = " over the worlds one move wins and the other loses" if s.get("wins_only") else ""
    tail = "to the end" if s["blueprint_ticks"] is None else f"{s['blueprint_ticks']} ticks, then the simple strategy"
    lines = [
        "",
        "### Search on the learned blueprint",
        "",
        f"`search_learned` (the same search, its rollouts played and the move it deviates from chosen by the shipped "
        f"`learned` policy, each seat's action on its own observation; {s['worlds']} worlds, rollouts {tail}, "
        f"deviation threshold z = {s['z']:g}{wins}) on the report's first timed deals (silent), paired with two "
        "`learned` and two `simple` players on the same deals, from the committed study "
        "(`evaluation/results/summit_rush_search_learned.json`, per deal in its `.jsonl`). Paired differences in "
        "points, 95 %. CPU time on one BLAS thread; a team's two seats share one search a tick, so a tick costs two "
        "decisions' time.",
        "",
        "| level | deals | search_learned | learned | simple | vs learned | vs simple | CPU ms per decision / "
        "per tick (max) | rollouts per search | left the blueprint | target |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for level, d in data["levels"].items():
        cells = d["cells"]
        c = cells["search_learned"]
        for team, cell in cells.items():
            out.rows.append(Row("summit_rush", level, team if team == "search_learned"
                                else f"{team} (search_learned deals)", cell["rate"], cell["low"], cell["high"],
                                cell["games"], note=f"deals {d['seeds']}, summit_rush_search_learned.json"))
        target = d.get("target")
        lines.append(
            f"| {level} | {d['seeds']} | {_rate(c)} | {_rate(cells['learned'])} | {_rate(cells['simple'])} | "
            f"{_vs(c, 'learned')} | {_vs(c, 'simple')} | {c['ms_per_decision']:.0f} / {c['ms_per_tick']:.0f} "
            f"({c['ms_per_decision_max']:.0f}) | {c['rollouts_per_search']:.0f} | "
            f"{100 * c['deviations_per_search']:.0f}% of searches | "
            f"{f'{100 * target:.0f}%' if target else '–'} |")
    old = [(level, d["old_search"]) for level, d in data["levels"].items() if d.get("old_search")]
    if old:
        lines += ["", "The old search (the simple strategy as blueprint, 32 worlds; *Search agent* above) on the same "
                  "deals: " + "; ".join(f"{level} {_rate(o)} of {o['games']} at {o['ms_per_decision']:.0f} ms per "
                                        f"decision, `search_learned` minus it "
                                        f"{_vs({'vs_search': o['search_learned_minus_search']}, 'search')}"
                                        for level, o in old) + "."]
    spoken = [(level, d["talking"]) for level, d in data["levels"].items() if d.get("talking")]
    if spoken:
        lines += ["", "Talking levels: `search_learned` says nothing, so two of them hear nothing. Each level's first "
                  "deals played talking (the study's `--talking`, `summit_rush_search_learned_talking.jsonl`) against "
                  "its silent games: " + "; ".join(
                      f"{level} {t['same_game']} of {t['deals']} the same game (outcome, ticks, score, collisions), "
                      f"{t['wins']} won talking, {t['silent_wins']} silent" for level, t in spoken) + "."]
    for level, d in data["levels"].items():
        c, target = d["cells"]["search_learned"], d.get("target")
        if target is None or c["low"] >= target:
            continue
        ends, sources = c["losses"], c["loss_sources"]
        lost = c["games"] - c["wins"]
        verdict = "not reached" if c["rate"] < target else "reached by the point estimate; its interval reaches below"
        lines += ["", f"{level.capitalize()}: target {100 * target:.0f}% {verdict} "
                  f"({100 * c['rate']:.1f}% [{100 * c['low']:.1f}, {100 * c['high']:.1f}]). Its "
                  f"{_plural(lost, 'loss', 'losses')}: {ends.get('stuck', 0)} stuck, {ends.get('time', 0)} on time; "
                  f"told the true deal (its only world), the same search wins "
                  f"{sum(sources.get('hidden_cards', {}).values())} of them (lost to the hidden cards) and loses "
                  f"{sum(sources.get('rollout_limits', {}).values())} even so (the limits of the learned "
                  "blueprint's rollouts)."]
    lines += _dev_lines() + ["", "Made by: " + "; ".join(f"`{c}`" for c in data.get("commands", [])) + "."]
    return ["", LEARNED_BEGIN, *lines[1:], LEARNED_END]


def _dev_lines() -> list[str]:
    """The settings tried on the dev deals (not the report's), with their numbers."""
    dev = load_result("summit_rush_search_learned_dev")
    if not dev:
        return []
    tried = []
    for one in dev["by_settings"]:
        s = one["settings"]
        how = f"z = {s['z']:g} on {'wins only' if s.get('wins_only') else 'scores'}, {s['worlds']} worlds"
        for level, d in one["levels"].items():
            c = d["cells"]["search_learned"]
            learned = d["cells"]["learned"]["wins"]
            tried.append(f"{how}, {level}: {c['wins']} of {c['games']} against learned's {learned} "
                         f"({_vs(c, 'learned')})")
    return ["", "Settings tried first on dev deals (5000.., not the report's; "
            "`evaluation/results/summit_rush_search_learned_dev.json`): " + "; ".join(tried) + "."]


LEARNED_BEGIN, LEARNED_END = "<!-- search_learned summit_rush: begin -->", "<!-- search_learned summit_rush: end -->"


# ---------------------------------------------------------------------------- Rook
def rook(out: Section) -> list[str]:
    data = load_result("rook_search")
    if data is None:
        return ["", "No search results are committed (`evaluation/results/rook_search.json`)."]
    opponent = data.get("opponent", "heuristic")
    overall = {"rate": data["rate"], "low": data["low"], "high": data["high"], "games": data["rounds"]}
    out.rows.append(Row("rook", "single round", f"search vs {opponent}", data["rate"], data["low"], data["high"],
                        data["rounds"], note=f"{data['deals']} deals, both seats, rook_search.json"))
    for seat, cell in data.get("by_seat", {}).items():
        out.rows.append(Row("rook", "single round", f"search vs {opponent}: search as {seat}", cell["rate"],
                            cell["low"], cell["high"], cell["rounds"]))
    made = data.get("search_bid_made")
    if made:
        out.rows.append(Row("rook", "single round: bid made", "search (vs heuristic)", made["rate"], made["low"],
                            made["high"], data.get("search_won_bid")))
    losses = data.get("losses", {})
    causes = (f"Its {data['lost']} lost rounds ({data.get('ties', 0)} ties besides): "
              + ", ".join(f"{n} {cause}" for cause, n in losses.items()) + ".")
    out.summary.append(_target_line("rook", "single round", f"Rook for Two, single rounds vs the {opponent}",
                                    {**overall, "games": data["rounds"]}, causes))
    seats = "; ".join(f"as {seat} {_rate(cell)}" for seat, cell in data.get("by_seat", {}).items())
    return [
        "",
        "### Search agent",
        "",
        f"`search` (`cardzoo.agents.rook_search`: determinized search, worlds sampled from what it saw and filtered "
        f"by the opponent's bids, discards and voids under the heuristic as blueprint; bidding by simulated hands) "
        f"against the {opponent}, single rounds, {data['deals']} of the report's deals each played with the seats "
        f"swapped, from the committed study (`evaluation/results/rook_search.json`): it wins "
        f"{_rate(overall)} of {data['rounds']} rounds ({seats}); the heuristic against itself wins 50 % by "
        f"symmetry. It wins the bidding in {data.get('search_won_bid', '–')} rounds and makes "
        + (f"{_rate(made)} of those bids" if made else "–")
        + f" (mean contract {data.get('mean_contract_search', float('nan')):.1f}); "
        f"{data.get('mean_ms_per_decision', float('nan')):.0f} ms of CPU per decision. {causes}",
        "",
        f"Made by: `{data.get('command')}`.",
    ] + rook_learned(out)


def rook_learned(out: Section) -> list[str]:
    """The search on the learned blueprint (``search_learned``), paired with ``learned`` and ``search`` on the same
    deals, from ``evaluation/results/rook_learned_search.json``."""
    from cardzoo.agents.rook_search import WIDE_BUDGET

    data = load_result("rook_learned_search")
    if data is None:
        return ["", "No results of the search on the learned blueprint are committed "
                    "(`evaluation/results/rook_learned_search.json`)."]
    matches = data["matches"]
    for match, cell in matches.items():
        out.rows.append(Row("rook", "single round, search_learned study", match, cell["rate"], cell["low"],
                            cell["high"], cell["rounds"],
                            note=f"{cell['deals']} deals, both seats, {cell['ms_per_decision_first']:.0f} ms CPU "
                                 f"per decision, rook_learned_search.json"))
    table = ["| match (first player vs second) | rounds won by the first | rounds | ties | mean score difference "
             "| ms CPU per decision (first) |", "|---|---|---|---|---|---|"]
    table += [f"| {m} | {_rate(c)} | {c['rounds']} | {c['ties']} | {c['mean_gain_difference']:+.1f} | "
              f"{c['ms_per_decision_first']:.1f} |" for m, c in matches.items()]
    pairs = [f"{name}: {100 * p['difference']:+.1f} points [{100 * p['low']:+.1f}, {100 * p['high']:+.1f}] on "
             f"{p['rounds']} rounds ({p['only_first']} vs {p['only_second']} rounds won by one only, McNemar "
             f"p = {p['p_value']:.2g})" for name, p in data.get("paired", {}).items()]
    targets = []
    for (opponent, target), agent in itertools.product(BEST["rook"].items(), ("search_learned", "search_wide")):
        cell = matches.get(f"{agent} vs {opponent}")
        if cell:
            said = verdict(cell, target)
            causes = ", ".join(f"{n} {cause}" for cause, n in cell.get("losses", {}).items())
            targets.append(f"`{agent}` vs {opponent} {_rate(cell)} of {cell['rounds']} rounds, target "
                           f"{100 * target:.0f}% -- {said}" + (f" (its lost rounds: {causes}; it won the bid in "
                                                                 f"{cell['first_won_bid']} rounds and made "
                                                                 f"{cell['first_bid_made']})" if causes else ""))
    return [
        "",
        ROOK_LEARNED_BEGIN,
        "### Search on the learned blueprint",
        "",
        "`search_learned` (`cardzoo.agents.rook_learned_search`): the search above with the shipped learned policy "
        "playing its own moves in the rollouts (the heuristic hers), and worlds weighted by the heuristic's choice "
        "of each card she played, rebuilt in each world, mixed with 5 % uniform. Single rounds on the report's "
        "first deals, each match played with the seats swapped; the other matches on the same deals and seeds.",
        f"`search_wide`: the search above with {WIDE_BUDGET['worlds']} worlds a card and {WIDE_BUDGET['bid_worlds']} "
        "a bid, what the old search buys with about `search_learned`'s compute.",
        "",
        *table,
        "",
        "Paired on the same rounds: " + ("; ".join(pairs) if pairs else "–") + ".",
        "",
        "Against issue 28's targets: " + ("; ".join(targets) if targets else "–") + ".",
        "",
        "Made by: " + "; ".join(f"`{c}`" for c in data.get("commands") or [data.get("command")]) + ".",
        ROOK_LEARNED_END,
    ]


ROOK_LEARNED_BEGIN = "<!-- search_learned rook: begin -->"
ROOK_LEARNED_END = "<!-- search_learned rook: end -->"


def summary_lines(sections: list[Section]) -> list[str]:
    """The report's opening summary: the search agents against issue 11's targets, with the loss counts."""
    lines = [line for s in sections for line in s.summary]
    if not lines:
        return []
    return ["## Search agents against the targets", "",
            "From the committed search studies (fewer deals than the tables below; see each game's *Search agent*). "
            "For a target not reached, where the remaining losses come from, counted.", "",
            *(f"- {line}" for line in lines), ""]
