"""The Rope Team section of the evaluation report.

Per level: the document's figure, the simple strategy, random play, and the perfect-information ceiling (the
share of deals an oracle that sees everything can win, from ``evaluation/results/rope_team_ceiling_<level>.json``,
made by ``python -m cardzoo.evaluation.studies.ceilings_rope_team``). Then the document's other observations (losses are
falls, deals rarely run out, most wins in deal 2), the two-deal variant and a paired comparison; the learned
policies and their cross-play; the search agent from its committed study (:mod:`..search`).
"""

from __future__ import annotations

from collections import Counter

from cardzoo.envs.common.charts import Bar, bar_chart
from cardzoo.envs.common.stats import difference, paired, wilson
from cardzoo.envs.registry import GAMES
from cardzoo.seeds import figures

from .. import search as search_report
from ..model import Row, Section, Settings, load_result, play, section, wins

ENV = GAMES["rope_team"].env_id
LEVELS = GAMES["rope_team"].levels
AGENTS = {"simple": "simple strategy", "random": "random legal"}
# Learned agents (shipped policies; a missing one is left out of the report with a note).
LEARNED = {"learned": "learned (batched PPO on the observation + the simple strategy's card values)",
           "learned_v1": "learned_v1 (MaskablePPO, the same inputs; the previous `learned`)",
           "learned_plain": "learned_plain (MaskablePPO on the observation alone)"}
CROSS_PLAY = (("learned", "learned_seed1"), ("learned", "simple"), ("simple", "learned"), ("learned", "learned_v1"),
              ("learned_v1", "learned"), ("learned_v1", "learned_v1_seed1"), ("learned_plain", "simple"))
CROSS_LEVELS = ("normal", "hard")


def _available(agent: str) -> bool:
    from cardzoo.agents.registry import make_agent
    from cardzoo.envs.common.errors import OptionError

    try:
        make_agent(agent, ENV)
    except OptionError:
        return False
    return True


def _play(settings: Settings, agent: str | tuple[str, ...], **options) -> list[dict]:
    return play(settings, ENV, [agent] if isinstance(agent, str) else agent, **options)


def load_ceiling(level: str) -> dict | None:
    """The oracle's share of winnable deals for a level, if its results file exists."""
    return load_result(GAMES["rope_team"].ceilings.format(variant=level).removesuffix(".json"))


def _ceiling_row(level: str) -> Row | None:
    data = load_ceiling(level)
    if data is None:
        return None
    winnable, games = int(data["winnable"]), int(data["games"])
    undecided = int(data.get("undecided", 0))
    rate = wilson(winnable, games)
    # Undecided deals (search budget exhausted) could be either: widen the interval to cover both readings.
    high = wilson(winnable + undecided, games).high
    note = f"{undecided} of {games} deals undecided" if undecided else ""
    return Row("rope_team", level, "ceiling", rate.rate, rate.low, high, games, note)


@section("rope_team")
def rope_team(settings: Settings) -> Section:
    doc = figures("rope_team")
    out = Section("rope_team")
    records: dict[tuple[str, str], list[dict]] = {}
    for level in LEVELS:
        out.rows.append(Row("rope_team", level, "document", doc["win_rate"][level], games=doc["games_per_level"],
                            note="the rule document's simulation, simple strategy"))
        for agent in AGENTS:
            records[level, agent] = _play(settings, agent, level=level)
            rate = wilson(sum(wins(records[level, agent])), settings.games)
            out.rows.append(Row("rope_team", level, agent, rate.rate, rate.low, rate.high, settings.games))
        for agent in LEARNED:
            if _available(agent):
                records[level, agent] = _play(settings, agent, level=level)
                rate = wilson(sum(wins(records[level, agent])), settings.games)
                out.rows.append(Row("rope_team", level, agent, rate.rate, rate.low, rate.high, settings.games))
        ceiling = _ceiling_row(level)
        if ceiling is not None:
            out.rows.append(ceiling)

    # The document's other observations, for the simple strategy.
    notes = []
    for level in LEVELS:
        recs = records[level, "simple"]
        causes = Counter(r["outcome"] for r in recs)
        losses = len(recs) - causes["win"]
        by_deal = Counter(r["win_deal"] for r in recs if r["outcome"] == "win")
        notes.append((level, causes, losses, by_deal, sum(r["uncovered"] for r in recs) / len(recs)))
        out.rows.append(Row("rope_team", level, "simple: losses that are falls",
                            causes["fall"] / losses if losses else 0.0, games=losses))
        ood = wilson(causes["out_of_deals"], len(recs))
        out.rows.append(Row("rope_team", level, "simple: games out of deals", ood.rate, ood.low, ood.high, len(recs)))

    # Variant: two deals instead of three ("cost only a few games in 100").
    two = _play(settings, "simple", level="normal", max_deals=2)
    two_rate = wilson(sum(wins(two)), settings.games)
    out.rows.append(Row("rope_team", "normal, two deals", "simple", two_rate.rate, two_rate.low, two_rate.high,
                        settings.games))
    two_cost = paired(wins(records["normal", "simple"]), wins(two))
    vs_random = {level: paired(wins(records[level, "simple"]), wins(records[level, "random"])) for level in LEVELS}

    # Cross-play: independently trained partners, and mixed learned + simple teams (player_0 first).
    cross = {}
    for pair in CROSS_PLAY:
        if all(_available(a) for a in pair):
            for level in CROSS_LEVELS:
                recs = _play(settings, pair, level=level)
                rate = wilson(sum(wins(recs)), settings.games)
                cross[pair, level] = (rate, paired(wins(recs), wins(records[level, "simple"])))
                out.rows.append(Row("rope_team", level, " + ".join(pair), rate.rate, rate.low, rate.high,
                                    settings.games, note="cross-play"))
    learned_vs_simple = {(agent, level): paired(wins(records[level, agent]), wins(records[level, "simple"]))
                         for agent in LEARNED for level in LEVELS if (level, agent) in records}
    new_vs_old = {level: paired(wins(records[level, "learned"]), wins(records[level, "learned_v1"]))
                  for level in LEVELS if (level, "learned") in records and (level, "learned_v1") in records}

    # The search agent, from its committed study (fewer deals).
    by = {(r.setting, r.source): r for r in out.rows}
    search_lines = search_report.rope_team(out, {level: by.get((level, "ceiling")) for level in LEVELS})

    # Markdown.
    by = {(r.setting, r.source): r for r in out.rows}

    def cell(level: str, source: str) -> str:
        row = by.get((level, source))
        if row is None:
            return "–"
        if row.low is None:
            return f"{100 * row.rate:.0f}%"
        digits = 2 if row.rate > 0.995 else 1
        text = f"{100 * row.rate:.{digits}f}% [{100 * row.low:.{digits}f}, {100 * row.high:.{digits}f}]"
        return text + (f" ({row.note})" if row.note else "")

    lines = [
        "## Rope Team",
        "",
        f"Cooperative win rate per level. *Document*: the rule document's figure ({doc['games_per_level']} games "
        "per level, its own simple strategy). *Simple strategy*: `cardzoo.agents.rope_team_simple` (each player "
        "sees only its own hand). *Ceiling*: share of deals that some line of play wins, decided by a "
        "perfect-information oracle (the limit any team could reach). *Simple − document* counts the sampling noise "
        "of both figures.",
        "",
        "| level | document | simple strategy | simple − document | random legal | ceiling (oracle) | "
        "search (its first deals; below) |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for level in LEVELS:
        s, d = by[level, "simple"], by[level, "document"]
        gap = difference(round(s.rate * s.games), s.games, d.rate, d.games)
        search = by.get((level, "search"))
        lines.append(f"| {level} | {cell(level, 'document')} | {cell(level, 'simple')} | {gap} | "
                     f"{cell(level, 'random')} | {cell(level, 'ceiling')} | "
                     f"{f'{100 * search.rate:.1f}% of {search.games}' if search else '–'} |")
    lines += [
        "",
        "The document's other observations, checked on the simple strategy:",
        "",
        "| level | losses that are falls | out of deals | wins in deal 1 / 2 / 3 | cards uncovered (mean) |",
        "|---|---:|---:|---:|---:|",
    ]
    for level, causes, losses, by_deal, uncovered in notes:
        won = sum(by_deal.values()) or 1
        lines.append(
            f"| {level} | {causes['fall']}/{losses} | {causes['out_of_deals']}/{settings.games} | "
            f"{100 * by_deal[1] / won:.0f}% / {100 * by_deal[2] / won:.0f}% / {100 * by_deal[3] / won:.0f}% | "
            f"{uncovered:.2f} of 8 |")
    lines += [
        "",
        f"Two deals instead of three (Normal, simple strategy): {two_rate}; three deals minus two: {two_cost} "
        "(the document: \"only a few games in 100\").",
        "",
        "Simple strategy minus random, same deals: "
        + "; ".join(f"{level} {vs_random[level]}" for level in LEVELS) + ".",
    ]
    if learned_vs_simple:
        lines += [
            "",
            "### Learned agents",
            "",
            "One policy plays every level and both seats (parameter sharing), each seat acting on its own "
            "observation; trained by PPO after a warm start that clones the simple strategy (see "
            "`agents/policies/README.md` for the commands, seeds, steps and wall time). `learned` and "
            "`learned_v1` read, besides the observation, the simple strategy's value of each card (computed from "
            "the same observation), and learn when to deviate from it: `learned` is 50 minutes of the batched "
            "trainer (`cardzoo train rope_team --backend batched`), `learned_v1` 2M steps of MaskablePPO; "
            "`learned_plain` reads the observation alone.",
            "",
            "| level | " + " | ".join(LEARNED.values()) + " | simple strategy | document |",
            "|---|" + "---:|" * (len(LEARNED) + 2),
        ]
        for level in LEVELS:
            cells = []
            for agent in LEARNED:
                if (agent, level) in learned_vs_simple:
                    cells.append(f"{cell(level, agent)}; vs simple {learned_vs_simple[agent, level]}")
                else:
                    cells.append("not shipped")
            lines.append(f"| {level} | " + " | ".join(cells) + f" | {cell(level, 'simple')} | "
                         f"{cell(level, 'document')} |")
        if new_vs_old:
            lines += ["", "`learned` minus `learned_v1`, same deals: "
                      + "; ".join(f"{level} {cmp}" for level, cmp in new_vs_old.items()) + "."]
    if cross:
        lines += [
            "",
            "Cross-play (the standard test of arbitrary conventions): the team below, `player_0` first, on the same "
            "deals; the difference is against two simple-strategy players.",
            "",
            "| team | level | win rate | vs simple + simple |",
            "|---|---|---:|---:|",
        ]
        for (pair, level), (rate, cmp) in cross.items():
            lines.append(f"| {' + '.join(pair)} | {level} | {rate} | {cmp} |")
    lines += search_lines
    out.markdown = "\n".join(lines)

    by = {(r.setting, r.source): r for r in out.rows}
    sources = ["document", "simple", "random", "ceiling", *[a for a in LEARNED if (LEVELS[0], a) in by], "search",
               "search_learned"]
    groups = {level: [Bar(src, by[level, src].rate, by[level, src].low, by[level, src].high,
                          reported=src == "document")
                      for src in sources if (level, src) in by] for level in LEVELS}
    settings.out.mkdir(parents=True, exist_ok=True)
    bar_chart("Rope Team: win rate by level (95 % intervals)", groups, settings.out / "rope_team.png")
    out.charts.append("rope_team.png")
    return out
