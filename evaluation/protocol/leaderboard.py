"""The leaderboard, generated from the committed benchmark results (``evaluation/results/benchmark/*.json``) so no
figure is typed by hand: ``python -m cardzoo.evaluation.protocol.leaderboard`` writes ``docs/leaderboard.md`` and
the README's benchmark table (between the ``<!-- benchmark -->`` markers; ``python -m
cardzoo.evaluation.report.headline`` writes it too, with the report's table); tests/test_leaderboard.py checks both
equal what this writes.
"""

from __future__ import annotations

import argparse
import textwrap
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .protocol import BUDGETS
from .results import file_name, left_out, pct, read

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "evaluation" / "results" / "benchmark"
PAGE = ROOT / "docs" / "leaderboard.md"
README = ROOT / "README.md"
BEGIN, END = "<!-- benchmark -->", "<!-- /benchmark -->"
ORDER = ("rope_team", "summit_rush", "rook")


def load(folder: str | Path = RESULTS) -> list[dict[str, Any]]:
    """Every result in ``folder`` (``*.json`` written by ``cardzoo benchmark``), by file name; each knows its file's
    stem (``_stem``): an agent's older result, kept beside its newer one, has a name of its own (``search_v1``)."""
    return [{**read(path), "_stem": path.stem} for path in sorted(Path(folder).glob("*.json"))]


def _link(result: Mapping[str, Any]) -> str:
    return f"[`{result['agent']}`](results/benchmark/{result.get('_stem') or file_name(result['agent'])}.md)"


def _replayed(result: Mapping[str, Any], ranked: Sequence[Mapping[str, Any]]) -> set[str]:
    """The games of an older ``result`` its agent has been played again in under the ranked protocol."""
    return {g for r in ranked if r["agent"] == result["agent"] for g in r["games"] if not left_out(r, g)}


def _versions(results: Sequence[Mapping[str, Any]]) -> str:
    """The protocol version the tables rank: the newest of the results'."""
    from .protocol import READABLE, VERSION

    present = {r["protocol"] for r in results}
    return max(present, key=READABLE.index) if present else VERSION


def split(results: Sequence[Mapping[str, Any]]) -> tuple[list[Mapping[str, Any]], list[Mapping[str, Any]]]:
    """The results the tables rank (the newest protocol version's) and the older ones, listed apart: other deals and
    other pools, so their rates do not compare with the ranked ones."""
    version = _versions(results)
    return [r for r in results if r["protocol"] == version], [r for r in results if r["protocol"] != version]


def _games(results: Sequence[Mapping[str, Any]]) -> list[str]:
    present = {g for r in results for g in r["games"]}
    return [g for g in ORDER if g in present] + sorted(present - set(ORDER))


def _budget(result: Mapping[str, Any]) -> str:
    n = result["games_per_cell"]
    return f"{n:,}" + ("" if result["budget"] in BUDGETS else " (custom)")


def _key(game: str, result: Mapping[str, Any]) -> tuple:
    h = result["games"][game]["headline"]
    test = h["cross"]["test"]
    return (-(test["rate"] if test else -1.0), result["agent"])


def _ranked(results, game):
    return sorted((r for r in results if game in r["games"] and not left_out(r, game)), key=lambda r: _key(game, r))


def partial_table(results: Sequence[Mapping[str, Any]], game: str) -> list[str]:
    """The results that played only part of ``game`` (:func:`left_out`): not ranked, their rates shown with what
    they left out. Empty if there are none."""
    partial = sorted((r for r in results if game in r["games"] and left_out(r, game)), key=lambda r: r["agent"])
    if not partial:
        return []
    lines = ["Played in part, not ranked until the rest is in (their cells are not the ranked entries'):", "",
             "| agent | played | self-play | test pool | games per cell |", "|---|---|---:|---:|---:|"]
    for r in partial:
        h = r["games"][game]["headline"]
        test = (h["cross"].get("test") or {}).get("rate")
        lines.append(f"| {_link(r)} | {'; '.join(left_out(r, game))} | "
                     f"{pct(h['self']['rate']) if h['self'] else '–'} | {pct(test)} | {_budget(r)} |")
    return lines


def _paired(p: Mapping[str, Any] | None) -> str:
    if p is None:
        return "–"
    mark = "" if p["p_value"] < 0.05 else " (n.s.)"
    return f"{100 * p['difference']:+.1f}{mark}"


def _cpu(h: Mapping[str, Any]) -> str:
    cpu = h["cpu_ms_per_decision"]
    return "–" if cpu is None else f"{cpu:.3g}"


def _hours(h: Mapping[str, Any]) -> str:
    """The agent's own CPU time over the game's cells: its decisions times its time per decision."""
    cpu = h["cpu_ms_per_decision"]
    return "–" if cpu is None else f"{cpu * h['decisions'] / 3.6e6:.2g}"


def game_table(results: Sequence[Mapping[str, Any]], game: str) -> list[str]:
    ranked = _ranked(results, game)
    cooperative = any(r["games"][game]["headline"]["self"] is not None for r in ranked)
    who = "partner" if cooperative else "opponent"
    header = ["rank", "agent"] + (["self-play"] if cooperative else []) + ["dev pool", "test pool"]
    header += (["gap (test)"] if cooperative else []) + [f"worst {who}", "vs reference, test (points)",
                                                         "illegal / errors", "CPU ms per decision",
                                                         "agent CPU hours", "games per cell"]
    lines = ["| " + " | ".join(header) + " |", "|---:|---|" + "---:|" * (len(header) - 3) + "---:|"]
    for rank, r in enumerate(ranked, 1):
        g = r["games"][game]
        h = g["headline"]
        row = [str(rank), _link(r)]
        if cooperative:
            row.append(pct(h["self"]["rate"]) if h["self"] else "–")
        row += [pct((h["cross"].get(part) or {}).get("rate")) for part in ("dev", "test")]
        if cooperative:
            row.append("–" if h["gap"]["test"] is None else f"{100 * h['gap']['test']:+.1f}")
        row += [f"{h['worst']['partner']} {pct(h['worst']['rate'])}" if h["worst"] else "–",
                _paired((h.get("vs_reference") or {}).get("test")) + (f" vs `{g['reference']}`" if g["reference"]
                                                                      else " (is the reference)"),
                f"{h['illegal']} / {h['errors']}", _cpu(h), _hours(h), _budget(r)]
        lines.append("| " + " | ".join(row) + " |")
    return lines


def _cause(member: Mapping[str, Any], game: str) -> str:
    losses = {k: v for k, v in member["outcomes"].items() if k not in ("win",)}
    from cardzoo.envs.registry import GAMES

    if not GAMES[game].cooperative or not losses:  # a competitive game's losses have no cause to name
        return ""
    cause, count = max(losses.items(), key=lambda kv: (kv[1], kv[0]))
    return f"`{cause}` ({count:,} of {member['games']:,})"


def _relative(game_result: Mapping[str, Any]) -> tuple[str, float, float] | None:
    """The competent pool member (dev or test: the weak part is the robustness row) the agent does worst with
    compared with the reference agent with that same member, on the same deals and seats: (member, agent's rate,
    reference's rate); None without a reference."""
    if not game_result.get("reference"):
        return None
    rows = {}
    for cell in game_result["cells"]:
        if cell["partner"] is not None and "reference_wins" in cell and cell.get("part") != "weak":
            wins, ref, games = rows.get(cell["partner"], (0, 0, 0))
            rows[cell["partner"]] = (wins + cell["wins"], ref + cell["reference_wins"], games + cell["games"])
    if not rows:
        return None
    member = min(rows, key=lambda m: ((rows[m][0] - rows[m][1]) / rows[m][2], m))
    wins, ref, games = rows[member]
    return member, wins / games, ref / games


def findings(results: Sequence[Mapping[str, Any]], game: str) -> list[str]:
    """What the results say, as one table: whether the self-play leader keeps its lead with the test pool, then per
    agent its worst competent partner (with the most common way those games are lost), the partner that costs it
    most against the reference with that same partner, and its rate with the weak partners (robustness)."""
    ranked = _ranked(results, game)
    lines = []
    with_self = [r for r in ranked if r["games"][game]["headline"]["self"] is not None]
    if with_self:
        best_self = max(with_self, key=lambda r: (r["games"][game]["headline"]["self"]["rate"], r["agent"]))
        best_test = ranked[0]
        if best_self is best_test:
            lines += [f"`{best_self['agent']}` leads in self-play and keeps the lead with the held-out test pool.", ""]
        else:
            lines += [f"`{best_self['agent']}` leads in self-play but not with the held-out test pool, where "
                      f"`{best_test['agent']}` leads: self-play strength does not carry over to strangers.", ""]
    cooperative = bool(with_self)
    who = "partner" if cooperative else "opponent"
    lines += [f"| agent | worst {who} | its rate | most games lost by | costliest {who} against the reference | "
              f"agent / reference with it | with the weak {who}s |", "|---|---|---:|---|---|---:|---:|"]
    for r in ranked:
        g = r["games"][game]
        h = g["headline"]
        worst = h["worst"]
        member = h["members"][worst["partner"]] if worst else None
        cause = _cause(member, game) if member else ""
        relative = _relative(g)
        costly, versus = ("–", "–")
        if relative is not None:
            other, mine, ref = relative
            costly, versus = f"`{other}`", f"{pct(mine)} / {pct(ref)}"
        weak = (h["cross"].get("weak") or {}).get("rate")
        lines.append(f"| `{r['agent']}` | " + (f"`{worst['partner']}` ({worst['part']})" if worst else "–")
                     + f" | {pct(worst['rate']) if worst else '–'} | {cause or '–'} | {costly} | {versus} | "
                     f"{pct(weak)} |")
    return lines


def older_table(older: Sequence[Mapping[str, Any]], ranked: Sequence[Mapping[str, Any]] = ()) -> list[str]:
    """The entries scored under an older protocol: not ranked, their test-pool rates shown as they were, but for
    the games their agent has been played again in (ranked above: "played again")."""
    from cardzoo.envs.registry import GAMES

    games = _games(older)
    lines = ["| agent | protocol | games per cell | " + " | ".join(f"{GAMES[g].title} test pool" for g in games) + " |",
             "|---|---|---:|" + "---:|" * len(games)]
    for r in sorted(older, key=lambda r: r["agent"]):
        again = _replayed(r, ranked)
        rates = ["played again" if g in again else
                 pct((((r["games"].get(g) or {}).get("headline") or {}).get("cross", {}).get("test") or {}).get("rate"))
                 if g in r["games"] else "–" for g in games]
        lines.append(f"| {_link(r)} | {r['protocol']} | {_budget(r)} | " + " | ".join(rates) + " |")
    return lines


def page(results: Sequence[Mapping[str, Any]]) -> str:
    """``docs/leaderboard.md``."""
    from cardzoo.envs.registry import GAMES

    results, older = split(results)
    lines = ["# Leaderboard", "",
             textwrap.fill(
                 f"Every ranked entry is scored by the same protocol, [{_versions(results)}](benchmark.md): the same "
                 "reserved deals, "
                 "both seats, every setting, self-play and play with each member of the game's partner pool "
                 "(Rook: opponent pool), the pool's dev part and its held-out test part reported apart. Agents are "
                 "ranked by their win rate with the test pool (zero-shot coordination with strangers). The gap is "
                 "self-play minus test pool; vs reference is the paired difference with the game's reference agent "
                 "on the same deals, seats and partners (n.s.: McNemar p >= 0.05). CPU time per decision is measured "
                 "inside the agent on the machine that ran the benchmark (2 shared cores): compare it within a "
                 "table, not across machines; agent CPU hours is that time over all of the game's cells. Each "
                 "agent's name links its full result (every cell with its interval, loss causes, the heat map, "
                 "the run's compute).", 116), "",
             "To add an entry: `cardzoo benchmark AGENT --budget full --out evaluation/results/benchmark`, then "
             "`python -m cardzoo.evaluation.protocol.leaderboard`.", ""]
    if not results:
        return "\n".join(lines + ["No results are committed yet.", ""])
    for game in _games(results):
        lines += [f"## {GAMES[game].title}", ""] + game_table(results, game) + [""]
        partial = partial_table(results, game)
        lines += partial + ([""] if partial else [])
        lines += ["What the table shows:", ""] + findings(results, game) + [""]
    if older:
        lines += [f"## Not yet played under {_versions(results)}", "",
                  textwrap.fill("These entries were scored under an older protocol (other deals, other pools: "
                                "their rates do not compare with the tables above) and are not ranked until they "
                                "are played again.", 116), ""] + older_table(older, results) + [""]
    return "\n".join(lines).rstrip() + "\n"


def readme_table(results: Sequence[Mapping[str, Any]]) -> str:
    """The README's benchmark table: per agent the headline numbers of each game."""
    from cardzoo.envs.registry import GAMES

    results, older = split(results)
    def waiting(r) -> str:
        again = _replayed(r, results)
        left = [GAMES[g].title for g in _games([r]) if g not in again]
        return f"`{r['agent']}`" + (f" ({', '.join(left)})" if again else "")

    pending = ", ".join(waiting(r) for r in sorted(older, key=lambda r: r["agent"]) if not set(r["games"]) <=
                        _replayed(r, results))
    games = _games(results)
    counts = Counter(r["games_per_cell"] for r in results)
    usual = counts.most_common(1)[0][0] if counts else 0
    others = ", ".join(f"`{r['agent']}` {r['games_per_cell']:,}" for r in sorted(results, key=lambda r: r["agent"])
                       if r["games_per_cell"] != usual)
    partial = ", ".join(f"`{r['agent']}` ({', '.join(GAMES[g].title for g in _games([r]) if left_out(r, g))})"
                        for r in sorted(results, key=lambda r: r["agent"]) if any(left_out(r, g) for g in r["games"]))
    caption = (f"The {_versions(results)} benchmark of the shipped agents ([leaderboard](docs/leaderboard.md), "
               f"[protocol](docs/benchmark.md)): win rates on reserved deals, self-play and with the held-out test "
               "part of each game's partner pool (Rook: opponent pool), both seats, every setting; "
               f"{usual:,} games per cell" + (f" ({others}: slower, a custom budget)." if others else ".")
               + (f" Not yet played again under {_versions(results)}: {pending}." if pending else "")
               + (f" Played in part (on the leaderboard, not here): {partial}." if partial else ""))
    header, keys = ["agent"], []
    for game in games:
        if any(r["games"].get(game, {}).get("headline", {}).get("self") for r in results):
            header.append(f"{GAMES[game].title} self-play")
            keys.append((game, "self"))
        header.append(f"{GAMES[game].title} test pool")
        keys.append((game, "test"))
    lines = [textwrap.fill(caption, 116), "", "| " + " | ".join(header) + " |",
             "|---|" + "---:|" * (len(header) - 1)]
    for r in sorted(results, key=lambda r: r["agent"]):
        cells = []
        for game, what in keys:
            h = r["games"].get(game, {}).get("headline")
            if h is not None and left_out(r, game):
                h = None
            value = None if h is None else (h["self"] if what == "self" else h["cross"]["test"])
            cells.append("–" if value is None else pct(value["rate"]))
        lines.append(f"| `{r['agent']}` | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def readme_with_table(readme: str, results: Sequence[Mapping[str, Any]]) -> str:
    from cardzoo.evaluation.report.writer import replace_marked

    return replace_marked(readme, BEGIN, END, readme_table(results), "README.md (around the benchmark table)")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", type=Path, default=RESULTS)
    parser.add_argument("--page", type=Path, default=PAGE)
    parser.add_argument("--readme", type=Path, default=README)
    args = parser.parse_args(argv)
    results = load(args.results)
    args.page.write_text(page(results))
    args.readme.write_text(readme_with_table(args.readme.read_text(), results))


if __name__ == "__main__":
    main()
