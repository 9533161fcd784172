"""A benchmark result on disk: ``<name>.json`` (everything, per cell and per deal), ``<name>.md`` (the tables) and
``<name>.png`` (a heat map of the cells), and reading results back for the leaderboard."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cardzoo.envs.common.errors import RecordError
from cardzoo.envs.common.stats import format_p

from .protocol import READABLE, SETTING_NAMES


def file_name(agent: str) -> str:
    """A result's file stem for an agent spec: a registry name as is, a path or ``module:callable`` by its end."""
    stem = agent.replace("\\", "/").rsplit("/", 1)[-1]
    stem = stem[:-4] if stem.endswith(".npz") else stem
    return re.sub(r"[^A-Za-z0-9._-]+", "_", stem).strip("._") or "agent"


def result_digest(games: Mapping[str, Mapping[str, Any]]) -> str:
    """A result's digest: of its games' digests, so it names the agent's behaviour in every game it played."""
    digests = json.dumps({g: games[g]["digest"] for g in games}, sort_keys=True)
    return "sha256:" + hashlib.sha256(digests.encode()).hexdigest()


def pct(rate: float | None, digits: int = 1) -> str:
    return "–" if rate is None else f"{100 * rate:.{digits}f}%"


def _rate(r: Mapping[str, Any] | None) -> str:
    if r is None:
        return "–"
    return f"{pct(r['rate'])} [{100 * r['low']:.1f}, {100 * r['high']:.1f}]"


def _points(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:+.1f}"


def _paired(p: Mapping[str, Any] | None) -> str:
    if p is None:
        return "–"
    return (f"{100 * p['difference']:+.1f} points [{100 * p['low']:+.1f}, {100 * p['high']:+.1f}], McNemar "
            f"{format_p(p['p_value'])}")


def markdown(result: Mapping[str, Any]) -> str:
    """The result's tables: per game its headline, per setting and per pool member (both seats, loss causes)."""
    n = result["games_per_cell"]
    deals = result["deals"]
    if "key" in deals:
        where = f"the deals of the run's key `{deals['key']}`"
    else:
        where = f"the deals with seeds {deals['first_seed']}..{deals['first_seed'] + n - 1}"
    lines = [f"# {result['protocol']}: `{result['agent']}`", "",
             f"cardzoo {result['package']}, budget {result['budget']}: {n:,} games per cell, {where} in every cell. "
             f"Agent digest `{result['digest']}`. Win rates with Wilson 95 % "
             "intervals; cross-play pools both seats; the gap is self-play minus cross-play; paired comparisons "
             "are on the same deals, seats and partners.", ""]
    if result.get("runs"):
        lines += [f"Made by {len(result['runs'])} runs of pieces on the same deals "
                  + ("(" + "; ".join(f"{', '.join(r['games'])}: `{r['command']}`" for r in result["runs"]) + ")")
                  + (f", joined by `{result['command']}`" if result.get("command") else "") + ".", ""]
    elif result.get("command"):
        lines += [f"Made by `{result['command']}`.", ""]
    if result.get("compute"):
        c = result["compute"]
        lines += [f"Compute: {c['wall_seconds'] / 60:,.1f} minutes of wall time ({c['backend']}, {c['workers']} "
                  f"workers, {c['cpus']} cores; chunks read from a cache cost none), of which the agent's own CPU "
                  f"time {c['agent_cpu_seconds'] / 3600:,.2f} hours.", ""]
    for game, skipped in result.get("skipped", {}).items():
        lines += [f"Not played: {game} ({skipped}).", ""]
    for game in result["games"].values():
        h = game["headline"]
        cooperative = h["self"] is not None
        who = "partner" if cooperative else "opponent"
        lines += [f"## {game['title']}", "",
                  f"Pool {game['pool']['version']}: dev {', '.join(game['pool']['dev'])}; test (held out) "
                  f"{', '.join(game['pool']['test'])}"
                  + (f"; weak (robustness) {', '.join(game['pool']['weak'])}" if game['pool'].get('weak') else "")
                  + (f"; played here: {', '.join(game['pool']['played'])}" if 'played' in game['pool'] else "")
                  + ". Settings: "
                  + "; ".join(f"{s['name']} ({', '.join(f'{k}={v}' for k, v in s['options'].items())})"
                              for s in game["settings"]) + ".", ""]
        lines += ["| | win rate |", "|---|---|"]
        if cooperative:
            lines.append(f"| self-play | {_rate(h['self'])} |")
        lines += [f"| with the dev pool | {_rate(h['cross']['dev'])} |",
                  f"| with the test pool | {_rate(h['cross']['test'])} |"]
        if h["cross"].get("weak"):
            lines.append(f"| with the weak {who}s (robustness, not in the headline) | {_rate(h['cross']['weak'])} |")
        if cooperative:
            lines += [f"| gap (self minus dev) | {_points(h['gap']['dev'])} points |",
                      f"| gap (self minus test) | {_points(h['gap']['test'])} points |"]
        if h["worst"]:
            worst = h["worst"]
            lines.append(f"| worst competent {who} | {worst['partner']} ({worst['part']}): {pct(worst['rate'])} |")
        if game.get("reference"):
            for part, label in (("self", "self-play"), ("dev", "dev pool"), ("test", "test pool"),
                                ("weak", "weak partners")):
                if h["vs_reference"].get(part):
                    lines.append(f"| minus `{game['reference']}`, {label} | {_paired(h['vs_reference'][part])} |")
        cpu = h["cpu_ms_per_decision"]
        lines += [f"| illegal moves / agent errors | {h['illegal']} / {h['errors']} |",
                  f"| CPU per decision | {'–' if cpu is None else f'{cpu:.3f} ms'} |", ""]
        lines += [f"| setting | {'self-play | ' if cooperative else ''}dev | test |"
                  + (" gap dev | gap test |" if cooperative else ""),
                  "|---|" + "---:|" * (5 if cooperative else 2)]
        for name, row in h["settings"].items():
            cells = ([_rate(row["self"])] if cooperative else []) + [_rate(row["dev"]), _rate(row["test"])]
            if cooperative:
                cells += [_points(row["gap_dev"]), _points(row["gap_test"])]
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
        lines += ["", f"| {who} | part | agent as player_0 | agent as player_1 | both seats | outcomes |",
                  "|---|---|---:|---:|---:|---|"]
        for member, m in h["members"].items():
            outcomes = ", ".join(f"{k} {v:,}" for k, v in sorted(m["outcomes"].items(), key=lambda kv: -kv[1]))
            lines.append(f"| {member} | {m['part']} | {pct(m['by_seat'][0])} | {pct(m['by_seat'][1])} | "
                         f"{_rate(m)} | {outcomes} |")
        errors = [e for c in game["cells"] for e in c["error_examples"]]
        if errors:
            lines += ["", "Agent errors (first of each cell):", ""] + [f"- {e}" for e in errors]
        lines.append("")
    return "\n".join(lines)


def heatmap(result: Mapping[str, Any], path: Path) -> None:
    """A PNG heat map per game: rows the settings, columns self-play then each pool member in each seat."""
    from cardzoo.envs.common import charts

    plt = charts._pyplot()
    games = list(result["games"].values())
    columns = max(len({(c["partner"], c["part"], c["seat"]) for c in g["cells"]}) for g in games)
    height = sum(1.6 + 0.45 * len(g["settings"]) for g in games)
    fig, axes = plt.subplots(len(games), 1, figsize=(max(8.0, 2.5 + 0.4 * columns), height), squeeze=False)
    for ax, game in zip(axes[:, 0], games, strict=True):
        columns = list(dict.fromkeys((c["partner"], c["part"], c["seat"]) for c in game["cells"]))
        rows = [s["name"] for s in game["settings"]]
        grid = [[next((c["rate"] for c in game["cells"] if c["setting"] == r and (c["partner"], c["part"], c["seat"])
                       == col), float("nan")) for col in columns] for r in rows]
        image = ax.imshow(grid, cmap="viridis", vmin=0, vmax=1, aspect="auto")
        labels = ["self-play" if p is None else f"{p} ({part[0]}) p{seat}" for p, part, seat in columns]
        ax.set_xticks(range(len(columns)), labels, rotation=60, ha="right", fontsize=7)
        ax.set_yticks(range(len(rows)), rows, fontsize=8)
        for i, row in enumerate(grid):
            for j, value in enumerate(row):
                ax.text(j, i, f"{100 * value:.0f}", ha="center", va="center", fontsize=6,
                        color="white" if value < 0.6 else "black")
        ax.set_title(f"{game['title']}: {result['agent']}'s win rate per cell (%; p0/p1 = the agent's seat)",
                     fontsize=9)
        fig.colorbar(image, ax=ax, fraction=0.02)
    fig.tight_layout()
    fig.savefig(path, dpi=110, metadata={"Software": None})
    plt.close(fig)


def write(result: Mapping[str, Any], out: str | Path, name: str | None = None, chart: bool = True) -> Path:
    """Write ``<out>/<name>.json``, ``.md`` and (with matplotlib, if ``chart``) ``.png``; returns the JSON path."""
    from cardzoo.envs.common import charts

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    stem = name or file_name(result["agent"])
    path = out / f"{stem}.json"
    path.write_text(json.dumps(result, indent=1, sort_keys=False) + "\n")
    text = markdown(result)
    if chart and charts.available():
        heatmap(result, out / f"{stem}.png")
        text += f"\n![{result['agent']}: win rate per cell]({stem}.png)\n"
    (out / f"{stem}.md").write_text(text)
    return path


def read(path: str | Path) -> dict[str, Any]:
    """A result written by :func:`write`; RecordError naming the file if it is not one of this protocol's."""
    path = Path(path)
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as err:
        raise RecordError(f"benchmark result {path}: unreadable ({err})") from None
    if not isinstance(data, dict) or data.get("protocol") not in READABLE or not isinstance(data.get("games"), dict):
        raise RecordError(f"benchmark result {path}: not a result of {' or '.join(READABLE)}")
    return data


def left_out(result: Mapping[str, Any], game: str) -> list[str]:
    """What a result did not play of ``game`` (empty: all of it): settings not played (``--levels``, or runs of
    pieces not yet all merged), partners not played (``--partners``), cells after a failure stopped the run. Such a
    result is partial there: its rates are of other cells than the ranked ones', so it is listed apart."""
    record = result["games"][game]
    played = [s["name"] for s in record["settings"]]
    missing = [s for s in SETTING_NAMES.get(game, ()) if s not in played]
    out = [f"only {', '.join(played)}"] if missing else []
    parts = record["pool"].get("played", ())
    per_setting = sum(len(record["pool"].get(part, ())) for part in parts) * 2 + (record["headline"]["self"]
                                                                                   is not None)
    if parts and len(record["cells"]) < per_setting * len(played):  # a setting without some partners' cells
        out.append(f"{len(record['cells'])} of its settings' {per_setting * len(played)} cells")
    if (result.get("filters") or {}).get("partners") is not None:
        out.append(f"only partners {', '.join(result['filters']['partners'])}")
    if any(f["game"] == game for f in result.get("failures", [])):
        out.append("stopped by a failure")
    return out
