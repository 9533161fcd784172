"""The talking part of the Summit Rush report: the document's game (talking allowed) against "silent summit".

On the timed levels, same deals, paired: the simple strategy silent (``simple`` in silent games, the rows above)
against its talking version (``simple_talk``) and that version muted (every message replaced by nothing); the
shipped silent learned team against the learned team with the message channel (``learned_talk``) and the same
team muted. Per game: conflicts and bounced cards, wasted stock turns (:mod:`cardzoo.evaluation.matches.ticks`: a
turn while a free card fitted, or a second turn in a tick where one fresh card was needed) and messages. Then what
the messages of each talking team mean (what the speaker and the listener do in the tick they are heard), and race
the record.

The part alone, with its silent games: ``python -m cardzoo.evaluation.report.sections.summit_rush_talk --games
2000`` writes summary.md, results.csv/.json and the chart to ``evaluation/results/summit_rush_talk/`` (the committed
run).
"""

from __future__ import annotations

import argparse
import shlex
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

from cardzoo.envs.common.charts import Bar, bar_chart
from cardzoo.envs.common.stats import paired, wilson
from cardzoo.envs.summit_rush import rules

from ...matches.race import race
from ...matches.ticks import WHAT
from ..model import QUICK_GAMES, RESULTS, Row, Section, Settings, play, wins
from ..writer import write

ENV = "summit_rush_v0"
GAME = "summit_rush"
LEVELS = {"normal": 60, "hard": 40}
SERIES = 10  # games per series in race the record
CHART = "summit_rush_talk.png"
# (agent, talking game?) -> label; the muted agents play talking games saying nothing.
TEAMS = {
    ("simple", False): "simple strategy, silent",
    ("simple_talk", True): "simple strategy, talking",
    ("simple_talk_muted", True): "simple strategy, talking version muted",
    ("learned", False): "learned, silent (shipped)",
    ("learned_talk", True): "learned with the message channel",
    ("learned_talk_muted", True): "learned with the message channel, muted",
}
COMPARISONS = ((("simple_talk", True), ("simple", False)), (("simple_talk", True), ("simple_talk_muted", True)),
               (("learned_talk", True), ("learned", False)), (("learned_talk", True), ("learned_talk_muted", True)))
KINDS = {  # message kinds of the meaning table, by the range of message numbers
    "(nothing)": range(rules.SAY_NOTHING, rules.SAY_TURN),
    "I'll turn": range(rules.SAY_TURN, rules.SAY_DONT_TURN),
    "don't turn": range(rules.SAY_DONT_TURN, rules.SAY_NEED),
    "I need a <rank>": range(rules.SAY_NEED, rules.SAY_ON_PILE),
    "<rank> on my pile": range(rules.SAY_ON_PILE, rules.SAY_TAKING),
    "I'm taking <position>": range(rules.SAY_TAKING, rules.N_MESSAGES),
}
NAMED = {"I need a <rank>": "a card of that rank onto the speaker's pile",
         "<rank> on my pile": "a card onto the speaker's pile", "I'm taking <position>": "the claimed card"}


def _plays(level: str, agent: str, talk: bool) -> bool:
    """Whether the agent can play this level (a learned agent needs a shipped policy for its observation)."""
    from cardzoo.agents.registry import make_agent
    from cardzoo.envs.common.errors import OptionError
    from cardzoo.envs.common.record import make_env

    try:
        made = make_agent(agent, ENV)
    except OptionError:
        return False
    policies = getattr(made, "policies", None)
    if not policies:
        return True
    env = make_env(ENV, level=level, talk=talk)
    return env.observation_space(env.possible_agents[0])["observation"].shape[0] in policies


def _rate(records: list[dict]) -> tuple[float, float, float]:
    rate = wilson(sum(wins(records)), len(records))
    return rate.rate, rate.low, rate.high


def _per_game(records: list[dict], *keys: str) -> float:
    return statistics.fmean(sum(r.get(k, 0) for k in keys) for r in records)


def meaning(records: list[dict]) -> dict[str, tuple[int, Counter, Counter]]:
    """Per message kind: how often it was said with a next tick, and what the speaker and the listeners did then."""
    out = {}
    for kind, numbers in KINDS.items():
        speaker, listener = Counter(), Counter()
        for r in records:
            for key, count in r["speaker"].items():
                message, what = key.split(":")
                if int(message) in numbers:
                    speaker[what] += count
            for key, count in r["listener"].items():
                message, what = key.split(":")
                if int(message) in numbers:
                    listener[what] += count
        out[kind] = (sum(speaker.values()), speaker, listener)
    return out


def _shares(counts: Counter) -> str:
    total = sum(counts.values())
    if not total:
        return "–"
    return " / ".join(f"{100 * counts[w] / total:.0f}" for w in WHAT)


def _most_said(records: list[dict], top: int = 6) -> str:
    said: Counter[int] = Counter()
    for r in records:
        for key, count in r["speaker"].items():
            message = int(key.split(":")[0])
            if message:
                said[message] += count
    total = sum(said.values())
    return ", ".join(f"\"{rules.MESSAGES[m]}\" {100 * c / total:.1f}%" for m, c in said.most_common(top)) or "none"


def _verdict(cmp) -> str:
    if cmp.low > 0:
        return f"talking wins {100 * cmp.difference:.1f} points more"
    if cmp.high < 0:
        return f"talking wins {-100 * cmp.difference:.1f} points less"
    return "no difference is measurable"


def _simple_verdict(records: dict[tuple[str, str, bool], list[dict]]) -> str:
    """Whether talking helps the simple strategy, and why (the figures it quotes are computed here)."""
    parts, same = [], []
    for lvl in LEVELS:
        talking, silent = records[lvl, "simple_talk", True], records[lvl, "simple", False]
        cmp = paired(wins(talking), wins(silent))
        parts.append(f"on {lvl} {_verdict(cmp)} ({cmp.only_a} of the deals won only talking, {cmp.only_b} only silent)")
        muted = records[lvl, "simple_talk_muted", True]
        same.append(sum(m["outcome"] == q["outcome"] and m["ticks"] == q["ticks"] for m, q in zip(muted, silent,
                                                                                                   strict=True)))
    games = len(records[next(iter(LEVELS)), "simple", False])
    return (
        "Talking and the simple strategy: " + "; ".join(parts) + ". Both seats compute the same plan from the same "
        "public table, so a partner's call only repeats what the listener has already worked out (claims, turn calls "
        "and needs are all functions of the table), and the silent team already has no conflicts, no bounced cards "
        "and no wasted turns: there is nothing for talk to fix. The games differ only because a claim binds: a seat "
        "that claimed a card plays it next tick even when a card uncovered in between would have made a different "
        "plan. Muted, the talking version hears nothing, so nothing binds it: it ends "
        + " and ".join(f"{n} of {games} {lvl} deals" for n, lvl in zip(same, LEVELS, strict=True))
        + " exactly as the silent strategy does (same outcome, same tick). What talking offers is for partners who do "
          "not share one plan: a claim or a turn call tells them what the other will do."
    )


def talk_lines(settings: Settings, out: Section, silent: dict[tuple[str, str], list[dict]]) -> list[str]:
    """The talking part of the section: rows appended to ``out``, markdown lines returned. ``silent`` holds the
    section's records of silent games by (level, agent), which are not played again."""
    records: dict[tuple[str, str, bool], list[dict]] = {}
    for level in LEVELS:
        for agent, talk in TEAMS:
            if not talk and (level, agent) in silent:
                records[level, agent, talk] = silent[level, agent]
            elif _plays(level, agent, talk):
                records[level, agent, talk] = recs = play(settings, ENV, [agent], level=level, talk=talk)
                rate = wilson(sum(wins(recs)), len(recs))
                out.rows.append(Row(GAME, level, agent, rate.rate, rate.low, rate.high, len(recs),
                                    note=("talking game" if talk else "silent game")
                                    + (", messages muted" if "muted" in agent else "")))
    groups = {f"{level} ({LEVELS[level]} ticks)": [Bar(TEAMS[a, t], *_rate(recs), agent=a) for (lvl, a, t), recs in
                                                   records.items() if lvl == level] for level in LEVELS}
    settings.out.mkdir(parents=True, exist_ok=True)
    bar_chart("Summit Rush: talking against silent summit, same deals (95 % intervals)", groups,
              settings.out / CHART)
    out.charts.append(CHART)
    lines = [
        "",
        "### Talking and silent summit",
        "",
        "The document's game allows talking (\"Talking is allowed – and helps\"); \"silent summit\" is its harder "
        "variant. Same deals, timed levels. *Simple strategy, talking*: `simple_talk` (the same plan, with the "
        "document's calls: it claims the next card of its run, \"I'm taking <position>\", and a claim binds both "
        "seats; it announces a turn it can foresee, objects to a needless one, calls the rank its pile needs and the "
        "card it turned; see `cardzoo.agents.summit_rush_talk`). *Muted*: the same agents with every message "
        "replaced by nothing. *Wasted turns*: stock cards turned while a free card fitted some pile, plus second "
        "turns in a tick where nothing fitted (one fresh card was needed).",
        "",
        "| level | team | win rate | conflicts + bounces per game | wasted turns per game | stock cards turned per "
        "game | messages per game |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for (level, agent, talk), recs in records.items():
        rate = wilson(sum(wins(recs)), len(recs))
        lines.append(f"| {level} ({LEVELS[level]} ticks) | {TEAMS[agent, talk]} | {rate} | "
                     f"{_per_game(recs, 'conflicts', 'bounced'):.2f} | "
                     f"{_per_game(recs, 'needless_turns', 'double_turns'):.2f} | {_per_game(recs, 'turned'):.1f} | "
                     f"{_per_game(recs, 'messages'):.1f} |")
    compared = []
    for level in LEVELS:
        for a, b in COMPARISONS:
            key_a, key_b = (level, *a), (level, *b)
            if key_a in records and key_b in records:
                cmp = paired(wins(records[key_a]), wins(records[key_b]))
                compared.append(f"{level}: {TEAMS[a]} minus {TEAMS[b]} {cmp}")
    lines += ["", "Same deals, paired: " + "; ".join(compared) + "."]
    untrained = [lvl for lvl in LEVELS if (lvl, "learned_talk", True) not in records]
    if untrained:
        lines += ["", f"No policy trained in talking games is shipped for: {', '.join(untrained)}."]
    lines += ["", _simple_verdict(records)]
    mixed = []
    for level in LEVELS:
        if (level, "learned_talk", True) not in records:
            continue
        for pair in (("simple_talk", "learned_talk"), ("learned_talk", "simple_talk")):
            recs = play(settings, ENV, pair, level=level, talk=True)
            rate = wilson(sum(wins(recs)), len(recs))
            out.rows.append(Row(GAME, level, " + ".join(pair), rate.rate, rate.low, rate.high, len(recs),
                                note="cross-play, talking game"))
            against = "; ".join(f"against {TEAMS[a, True]} {paired(wins(recs), wins(records[level, a, True]))}"
                                for a in pair)
            mixed.append(f"{' + '.join(pair)} on {level}: {rate} ({against}; "
                         f"{_per_game(recs, 'conflicts', 'bounced'):.2f} conflicts + bounces per game)")
    if mixed:
        lines += ["", "Mixed talking teams (cross-play; `player_0` first): " + "; ".join(mixed) + "."]

    # What the messages mean.
    lines += [
        "",
        "What the messages mean: for each message said (with a next tick), what the speaker and the listener did in "
        "the next tick, the first in which it is heard, in % (turn / wait / play the named card / play another card; "
        "the named card is the claimed card for a claim, a card of that rank onto the speaker's pile for a need, any "
        "card onto the speaker's pile for a pile call).",
        "",
        "| level | team | message | said (share of messages) | speaker next: turn / wait / named / other | "
        "listener next: turn / wait / named / other |",
        "|---|---|---|---:|---:|---:|",
    ]
    most = []
    for (level, agent, talk), recs in records.items():
        if not talk or "muted" in agent:
            continue
        table = meaning(recs)
        total = sum(n for n, _, _ in table.values())
        for kind, (n, speaker, listener) in table.items():
            lines.append(f"| {level} | {TEAMS[agent, talk]} | {kind} | {n} ({100 * n / max(total, 1):.1f}%) | "
                         f"{_shares(speaker)} | {_shares(listener)} |")
        most.append(f"{TEAMS[agent, talk]} on {level}: {_most_said(recs)}")
    lines += ["", "Most said (of the messages other than nothing): " + "; ".join(most) + "."]

    # Race the record.
    lines += [
        "",
        f"Race the record (the document's third variant: games in a row, adding up the stock cards left in the "
        f"games won; here series of {SERIES} consecutive deals, the same series for every team; see "
        f"`cardzoo.evaluation.race_the_record` and `cardzoo race`): mean series total [95 % interval] and the record.",
        "",
        "| level | team | mean total per series | record | series |",
        "|---|---|---:|---:|---:|",
    ]
    for (level, agent, talk), recs in records.items():
        if len(recs) < SERIES:
            continue
        result = race(recs, SERIES)
        best = 22 if level == "normal" else 18  # a won game's score is at most the stock cards left: all of them
        mean = result.mean
        out.rows.append(Row(GAME, level, f"{agent}{'' if talk else ' (silent)'}: race the record, mean series "
                            f"total of {SERIES} games (share of the most possible)", mean.mean / (best * SERIES),
                            mean.low / (best * SERIES), mean.high / (best * SERIES), len(recs),
                            note=f"{mean} cards per series, record {result.record}"))
        lines.append(f"| {level} | {TEAMS[agent, talk]} | {mean} | {result.record} | {len(result.totals)} |")
    return lines


def main(argv: list[str] | None = None) -> Path:
    """Only the talking part, as report files (summary.md, results.csv and .json, the chart):
    ``python -m cardzoo.evaluation.report.sections.summit_rush_talk --games 500``. The silent games are played here
    too; the full report (``cardzoo evaluate``) has the same part inside its Summit Rush section."""
    parser = argparse.ArgumentParser(prog=f"python -m {__spec__.name}", description=__doc__)
    parser.add_argument("--games", type=int, default=QUICK_GAMES, help="games per matchup (deals 0..N-1)")
    parser.add_argument("--workers", type=int, default=None, help="processes (default: all cores)")
    parser.add_argument("--out", type=Path, default=RESULTS / "summit_rush_talk", help="folder for the files")
    parser.add_argument("--cache", type=Path, default=None, help="a result cache folder (resumable runs)")
    args = parser.parse_args(argv)
    settings = Settings(games=args.games, workers=args.workers, out=args.out, cache=args.cache, progress=False)
    section, start = Section(GAME), time.time()
    section.markdown = "\n".join(talk_lines(settings, section, {}))
    section.seconds = time.time() - start
    command = f"python -m {__spec__.name} " + shlex.join(sys.argv[1:] if argv is None else argv)
    path = write(settings, [section], command=command.strip())
    print(f"written: {path} ({section.seconds:.0f} s)")
    return path


if __name__ == "__main__":
    main()
