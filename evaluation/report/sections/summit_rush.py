"""The Summit Rush section of the evaluation report.

Untimed, next to the rule document's five simulation figures (TriPeaks alone; two piles with 12 or 10 stock cards
each; the same without round the corner; read from ``seeds/summit_rush_figures.json``): the simple strategy
(``cardzoo.agents.summit_rush_simple``, both seats), random legal play, and the perfect-information ceiling (the
share of deals some line of play wins, from ``evaluation/results/summit_rush_ceiling_<variant>.json``, made by
``python -m cardzoo.evaluation.studies.ceilings_summit_rush``). Timed, for Normal (60 ticks) and Hard (40 ticks):
the same three, with loss causes (time / stuck), cards cleared, score and ticks used; the search agent from its
committed study (:mod:`..search`). All of these are silent games; the talking part (the document's game against
silent summit, what the messages mean, race the record) is :mod:`.summit_rush_talk`.
"""

from __future__ import annotations

import statistics
from collections import Counter

from cardzoo.envs.common.charts import Bar, bar_chart
from cardzoo.envs.common.stats import Z95, paired, wilson
from cardzoo.envs.registry import GAMES
from cardzoo.seeds import figures

from .. import search as search_report
from ..model import Row, Section, Settings, load_result, play, section, wins
from .summit_rush_talk import talk_lines

ENV = GAMES["summit_rush"].env_id
GAME = "summit_rush"
AGENTS = {"simple": "simple strategy", "random": "random legal"}
LEARNED = {"learned": "learned (batched PPO)", "learned_v1": "learned_v1 (MaskablePPO; the previous `learned`)"}
TIMED = {"normal": {"level": "normal", "talk": False}, "hard": {"level": "hard", "talk": False}}
TICKS = {"normal": 60, "hard": 40}
LABELS = {"tripeaks": "TriPeaks", "stock_12": "12 each", "stock_10": "10 each", "stock_12_no_wrap": "12 no wrap",
          "stock_10_no_wrap": "10 no wrap", "normal": "Normal 60t", "hard": "Hard 40t"}


def _agents(options: dict) -> dict[str, str]:
    """The agents that play a variant: simple and random always, the learned one where a shipped policy fits."""
    from cardzoo.agents.registry import make_agent
    from cardzoo.envs.common.errors import OptionError
    from cardzoo.envs.common.record import make_env

    env = make_env(ENV, **options)
    size = env.observation_space(env.possible_agents[0])["observation"].shape[0]
    found = dict(AGENTS)
    for name, label in LEARNED.items():
        try:
            if size in make_agent(name, ENV).policies:
                found[name] = label
        except OptionError:
            pass
    return found


def _play(settings: Settings, agent: str, **options) -> list[dict]:
    return play(settings, ENV, [agent], **options)


def load_ceiling(variant: str) -> dict | None:
    """The oracle's results for a variant (untimed figure variants, or "normal"/"hard" timed), if computed."""
    return load_result(GAMES["summit_rush"].ceilings.format(variant=variant).removesuffix(".json"))


def _ceiling_row(variant: str, data: dict | None) -> Row | None:
    if data is None:
        return None
    winnable, games, undecided = int(data["winnable"]), int(data["games"]), int(data.get("undecided", 0))
    rate = wilson(winnable, games)
    # An undecided deal (search budget exhausted) could go either way: the interval covers both readings.
    high = wilson(winnable + undecided, games).high
    note = f"{undecided} of {games} deals undecided" if undecided else ""
    return Row(GAME, variant, "ceiling", rate.rate, rate.low, high, games, note)


def _versus_ceiling(records: list[dict], data: dict | None) -> str:
    """Deal by deal on the deals both cover: how many of the deals the oracle wins does the strategy win?"""
    if data is None:
        return "–"
    code = data["results"]
    n = min(len(code), len(records))
    winnable = [i for i in range(n) if code[i] == "W"]
    won = sum(1 for i in winnable if records[i]["outcome"] == "win")
    rate = wilson(won, len(winnable))
    return f"{won}/{len(winnable)} = {rate}"


def _gap(rate_row: Row, document: float) -> str:
    """Measured minus the document's figure; the document gives no game count, so only our sampling noise."""
    p, n = rate_row.rate, rate_row.games
    half = Z95 * (p * (1 - p) / n) ** 0.5
    d = p - document
    return f"{100 * d:+.1f} [{100 * (d - half):+.1f}, {100 * (d + half):+.1f}]"


def _cell(row: Row | None) -> str:
    if row is None:
        return "–"
    if row.low is None:
        return f"{100 * row.rate:.0f}%"
    text = f"{100 * row.rate:.1f}% [{100 * row.low:.1f}, {100 * row.high:.1f}]"
    return text + (f" ({row.note})" if row.note else "")


@section(GAME)
def summit_rush(settings: Settings) -> Section:
    doc = figures(GAME)
    out = Section(GAME)
    # Silent games throughout: the simple strategy and the shipped policies say nothing, and silent games are the
    # ones their results were first measured on.
    variants = {v: {**o, "talk": False} for v, o in {**doc["options"], **TIMED}.items()}
    records: dict[tuple[str, str], list[dict]] = {}
    ceilings = {v: load_ceiling(v) for v in variants}
    for variant, options in variants.items():
        if variant in doc["win_rate"]:
            out.rows.append(Row(GAME, variant, "document", doc["win_rate"][variant], games=doc["games_per_level"],
                                note="the rule document's untimed simulation, its simple but careful strategy"))
        for agent in _agents(options):
            records[variant, agent] = recs = _play(settings, agent, **options)
            rate = wilson(sum(wins(recs)), len(recs))
            out.rows.append(Row(GAME, variant, agent, rate.rate, rate.low, rate.high, len(recs)))
        ceiling = _ceiling_row(variant, ceilings[variant])
        if ceiling is not None:
            out.rows.append(ceiling)

    # Timed levels: loss causes, cards cleared, score and ticks, per agent.
    timed_notes = {}
    for level in TIMED:
        for agent in _agents(TIMED[level]):
            recs = records[level, agent]
            causes = Counter(r["outcome"] for r in recs)
            losses = len(recs) - causes["win"]
            won = [r for r in recs if r["outcome"] == "win"]
            cleared = statistics.fmean(28 - r["peaks_left"] for r in recs)
            score = statistics.fmean(r["score"] for r in won) if won else 0.0
            ticks = statistics.median(r["ticks"] for r in won) if won else float("nan")
            conflicts = sum(r["conflicts"] + r["bounced"] for r in recs)
            timed_notes[level, agent] = (causes, losses, cleared, score, ticks, conflicts)
            time_share = wilson(causes["time"], len(recs))
            out.rows.append(Row(GAME, level, f"{agent}: games lost on time", time_share.rate, time_share.low,
                                time_share.high, len(recs)))
            out.rows.append(Row(GAME, level, f"{agent}: cards cleared (mean of 28)", cleared / 28, games=len(recs),
                                note=f"{cleared:.2f} cards"))
    untimed_cleared = {v: statistics.fmean(28 - r["peaks_left"] for r in records[v, "simple"])
                       for v in doc["options"]}

    # Markdown.
    by = {(r.setting, r.source): r for r in out.rows}
    lines = [
        "## Summit Rush",
        "",
        "Cooperative win rate. *Document*: the rule document's untimed simulation with its own \"simple but "
        "careful\" strategy (game count not given). *Simple strategy*: `cardzoo.agents.summit_rush_simple` on both "
        "seats, each acting on its own observation (face-up cards only): per-pile runs of face-up cards planned to "
        "uncover most face-down cards, then play most cards; seat *p* plays pile *p*'s run; a stock card is turned "
        "only when nothing fits, by the seat that has turned fewest. *Ceiling*: share of the deals that some line "
        "of play wins, decided by a perfect-information oracle (`cardzoo.agents.oracles.summit_rush`; "
        "undecided deals widen the interval). *Simple − document*: points, with our sampling noise only.",
        "",
        "Untimed (the document's figures):",
        "",
        "| variant | document | simple strategy | simple − document | random legal | ceiling (oracle) | "
        "simple wins of the ceiling's winnable deals | cards cleared (simple, mean) | search (its first deals; "
        "below) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    far = []
    for variant in doc["options"]:
        s, d = by[variant, "simple"], by[variant, "document"]
        lines.append(f"| {variant} | {_cell(d)} | {_cell(s)} | {_gap(s, d.rate)} | {_cell(by[variant, 'random'])} "
                     f"| {_cell(by.get((variant, 'ceiling')))} | "
                     f"{_versus_ceiling(records[variant, 'simple'], ceilings[variant])} | "
                     f"{untimed_cleared[variant]:.1f} of 28 | {search_report.untimed_cell(variant)} |")
        if not s.low <= d.rate <= s.high:
            far.append(f"{variant}: {100 * s.rate:.1f}% [{100 * s.low:.1f}, {100 * s.high:.1f}] against the "
                       f"document's {100 * d.rate:.0f}%")
    if far:
        lines += ["", "Where the document's figure lies outside the simple strategy's interval: " + "; ".join(far)
                  + ". The strategy was not tuned towards the figures; the document does not publish its own, so a "
                  "gap says the two strategies differ, not that the rules do (see `seeds/summit_rush.md`, Figures)."]
    gaps = [(v, by[v, "ceiling"].rate - by[v, "simple"].rate) for v in doc["options"] if (v, "ceiling") in by]
    if gaps:
        lines += ["", "Simple strategy against the ceiling: " + "; ".join(f"{v} {100 * g:.0f} points below"
                                                                        for v, g in gaps)
                  + ". The oracle sees the face-down cards and the stocks' order; the strategy sees only face-up "
                  "cards, plans one run per pile and never turns a stock card while something fits."]
    lines += [
        "",
        "Timed levels (3 s per action: Normal 60 ticks with 12 stock cards each, Hard 40 ticks with 10). The "
        "timed ceiling counts lines of at most one card per pile per tick (see the oracle's docstring).",
        "",
        "| level | agent | win rate | ceiling (oracle) | losses: time / stuck | cards cleared (mean) | "
        "score on wins (mean) | ticks on wins (median) | conflicts + bounces |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for level in TIMED:
        for agent in _agents(TIMED[level]):
            causes, losses, cleared, score, ticks, conflicts = timed_notes[level, agent]
            name = {**AGENTS, **LEARNED}[agent]
            lines.append(f"| {level} ({TICKS[level]} ticks) | {name} | {_cell(by[level, agent])} | "
                         f"{_cell(by.get((level, 'ceiling'))) if agent == 'simple' else ''} | "
                         f"{causes['time']} / {causes['stuck']} of {losses} | {cleared:.1f} of 28 | {score:.1f} | "
                         f"{ticks:g} | {conflicts} |")
        search = search_report.timed_row(level, f"{level} ({TICKS[level]} ticks)")
        if search:
            lines.append(search)
    causes, losses = timed_notes["hard", "simple"][:2]
    if losses:
        lines += ["", f"On Hard the simple strategy loses {causes['time']} of its {losses} lost games on time: each "
                  "seat plays only its own pile's run, one card per tick, and waits when that run is empty, so the "
                  "team does not hurry; the document's figures are untimed and say nothing about this."]
    vs_random = {v: paired(wins(records[v, "simple"]), wins(records[v, "random"])) for v in variants}
    timed_cost = {lvl: paired(wins(records[untimed, "simple"]), wins(records[lvl, "simple"]))
                  for lvl, untimed in (("normal", "stock_12"), ("hard", "stock_10"))}
    lines += [
        "",
        "What the clock costs the simple strategy, same deals (untimed minus timed, same stock): "
        + "; ".join(f"{lvl} {cmp}" for lvl, cmp in timed_cost.items()) + ".",
        "",
        "Simple strategy minus random, same deals: " + "; ".join(f"{v} {vs_random[v]}" for v in variants) + ".",
    ]
    learned = {lvl: paired(wins(records[lvl, "learned"]), wins(records[lvl, "simple"]))
               for lvl in TIMED if (lvl, "learned") in records}
    new_vs_old = {lvl: paired(wins(records[lvl, "learned"]), wins(records[lvl, "learned_v1"]))
                  for lvl in TIMED if (lvl, "learned") in records and (lvl, "learned_v1") in records}
    if learned:
        lines += [
            "",
            "Learned policies (one per level, both seats share it; PPO with the simple strategy's choice as an "
            "extra input computed from the same observation, after cloning it; see "
            "`agents/policies/README.md`). `learned` (the batched trainer) reads the strategy's move as the "
            "agent plays it (`summit_rush_simple_exact`: the seat with more stock left turns); `learned_v1` "
            "(MaskablePPO) read a memory-less copy that always let the lower seat turn, which differs from the "
            "strategy on about a fifth of its decisions. `learned` minus the simple strategy, same deals: "
            + "; ".join(f"{lvl} {cmp}" for lvl, cmp in learned.items()) + "."
            + "".join(f" On {lvl} the learned policy falls short by {-100 * cmp.difference:.1f} points."
                      for lvl, cmp in learned.items() if cmp.high < 0)
            + "".join(f" On {lvl} it is ahead by {100 * cmp.difference:.1f} points."
                      for lvl, cmp in learned.items() if cmp.low > 0),
        ]
    if new_vs_old:
        lines += ["", "`learned` minus `learned_v1`, same deals: "
                  + "; ".join(f"{lvl} {cmp}" for lvl, cmp in new_vs_old.items()) + "."]
    mixed = []
    for lvl in learned:
        for pair in (("learned", "simple"), ("simple", "learned")):
            recs = play(settings, ENV, pair, **TIMED[lvl])
            rate = wilson(sum(wins(recs)), len(recs))
            out.rows.append(Row(GAME, lvl, " + ".join(pair), rate.rate, rate.low, rate.high, len(recs),
                                note="cross-play"))
            mixed.append(f"{' + '.join(pair)} on {lvl}: {_cell(out.rows[-1])}, against simple + simple "
                         f"{paired(wins(recs), wins(records[lvl, 'simple']))}")
    if mixed:
        lines += ["", "Mixed teams (cross-play; `player_0` first): " + "; ".join(mixed) + "."]
    missing = [lvl for lvl in TIMED if (lvl, "learned") not in records]
    if missing:
        lines += ["", f"No learned policy is shipped for: {', '.join(missing)}."]
    lines += search_report.summit_rush(out, {v: by.get((v, "ceiling")) for v in variants})
    silent = {(lvl, agent): records[lvl, agent] for lvl in TIMED for agent in ("simple", "learned")
              if (lvl, agent) in records}
    lines += talk_lines(settings, out, silent)
    out.markdown = "\n".join(lines)

    by = {(r.setting, r.source): r for r in out.rows}
    sources = ["document", "simple", "random", "ceiling", "learned", "learned_v1", "search", "simple_talk",
               "learned_talk"]
    groups = {LABELS.get(v, v): [Bar(src, by[v, src].rate, by[v, src].low, by[v, src].high,
                                 reported=src == "document")
                  for src in sources if (v, src) in by] for v in variants}
    settings.out.mkdir(parents=True, exist_ok=True)
    bar_chart("Summit Rush: win rate by variant (95 % intervals)", groups, settings.out / "summit_rush.png")
    out.charts.append("summit_rush.png")
    return out
