"""The speed page's figures (docs/speed.md), generated from the committed results so the page never holds a typed
figure: ``python -m cardzoo.evaluation.benchmarks.speed_page`` rewrites the parts of docs/speed.md between its
markers, and with ``--charts`` also redraws the batched benchmark's charts from the committed JSON (no rerun).
``tests/test_speed_page.py`` checks that the page equals what this writes.

    <!-- bench -->            cardzoo bench's table (evaluation/results/bench.json)
    <!-- runner -->           the evaluation runner's games per second (evaluation/results/speed.json)
    <!-- training-speed -->   every trainer on Rope Team Normal (evaluation/results/training_speed/)
    <!-- batched-engine -->   the batched engines against their single envs (evaluation/results/batched/engine.json)
    <!-- batched-trainer -->  PPO: the SB3 path, the batched trainer, with features (.../batched/trainer.json)
    <!-- batched-payoff -->   a policy of the batched trainer on the report's deals (the run's report_deals.json)
"""

from __future__ import annotations

import argparse
import json
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "evaluation" / "results"
PAGE = ROOT / "docs" / "speed.md"
TRAINERS = {"sb3": "SB3 MaskablePPO (`cardzoo train`)", "batched": "`cardzoo train --backend batched`",
            "batched_features": "the same, reading `{features}`",
            "batched_minibatch_4096": "the same without features, minibatches of 4,096"}


def _title(env_id: str) -> str:
    from cardzoo.envs.registry import by_env_id

    game = by_env_id().get(env_id)
    return env_id if game is None else game.title


def _bullet(text: str) -> str:
    return textwrap.fill(text, 116, initial_indent="- ", subsequent_indent="  ")


def _load(result: dict) -> str:
    return f"load average {result['load_average'][0]:.1f} ({result['date']})"


def bench_table(bench: dict) -> str:
    """``cardzoo bench``'s rows: each env's steps per CPU-second and its ratios to the peers measured beside it."""
    lines = ["| env | steps per CPU-second | vs PettingZoo leduc | vs OpenSpiel leduc (C++) |", "|---|---:|---:|---:|"]
    for row in bench["rows"]:
        lines.append(f"| {row['env']} | {row['steps_per_cpu_second']:,} | {row['ratio_to_pettingzoo_leduc']:.2f}× | "
                     f"{row['ratio_to_openspiel_leduc']:.2f}× |")
    meta = bench["meta"]
    lines += ["", f"(`evaluation/results/bench.json`: {meta['seconds_per_env']:g} CPU-seconds an env, {meta['date']}.)"]
    return "\n".join(lines)


def runner_line(speed: dict) -> str:
    return textwrap.fill(f"{speed['games']:,} Rope Team games ({speed['level']}) with the simple strategy took "
            f"{speed['wall_seconds']:g} s of wall time ({speed['games_per_second']:,} games per second) with "
            f"{speed['workers']} workers ({speed['date']}).", 116)


def training_speed_table(speed: dict) -> str:
    lines = ["| trainer | env steps per second (wall time) | load average before, after |", "|---|---:|---:|"]
    for t in speed["trainers"]:
        lines.append(f"| {t['label']} | {t['env_steps_per_second']:,.0f} | {t['load_average_before']:.1f}, "
                     f"{t['load_average_after']:.1f} |")
    lines += ["", f"(`evaluation/results/training_speed/training_speed.json`, {speed['date']}.)"]
    return "\n".join(lines)


def payoff_table(payoff: dict) -> str:
    """A policy's win rate per level on the report's deals, and its paired differences with the agents beside it."""
    levels = payoff["levels"]
    others = [name for name in next(iter(levels.values())) if name != "policy"]
    lines = ["| level | the policy | " + " | ".join(f"against `{o}`" for o in others) + " |",
             "|---|---:|" + "---|" * len(others)]
    for level, row in levels.items():
        cells = [f"{100 * row[o]['rate']:.1f}%: {row[o]['policy_minus_this']['text']}" for o in others]
        lines.append(f"| {level} | {100 * row['policy']['rate']:.1f}% | " + " | ".join(cells) + " |")
    lines += ["", f"({payoff['games_per_level']:,} deals a level, {payoff['deals']}; `{payoff['policy']}`.)"]
    return "\n".join(lines)


def _columns(result: dict) -> dict[str, tuple[dict, list[dict]]]:
    """A game's columns: each batched variant with the single-env measurement it is compared with."""
    singles = result["single_env"]
    out = {}
    for variant in dict.fromkeys(r.get("variant", "batched") for r in result["batched"]):
        if "decisions_per_cpu_second" in singles:
            single = singles
        elif variant in singles:  # Rook: each setting's own single env
            single = singles[variant]
        else:  # Summit Rush: silent and talking single envs
            single = singles["talking" if variant.startswith("talking") else "silent"]
        out[variant] = (single, [r for r in result["batched"] if r.get("variant", "batched") == variant])
    return out


def engine_table(engine: dict) -> str:
    """Rows: the single env, then each N; columns: every game's batched variants (CPU time of the measuring
    process, random legal play with the observation and the mask read at every decision)."""
    columns = [(game, variant, single, rows) for game, result in engine.items()
               for variant, (single, rows) in _columns(result).items()]
    sizes = sorted({r["n"] for *_, rows in columns for r in rows})
    head = [f"{_title(game)}" + (f" ({engine[game]['level']})" if "level" in engine[game] else "")
            + f", {variant}" for game, variant, *_ in columns]
    lines = ["| games stepped together (N) | " + " | ".join(head) + " |", "|---|" + "---:|" * len(columns),
             "| single env loop | " + " | ".join(f"{single['decisions_per_cpu_second']:,}" for _, _, single, _ in
                                               columns) + " |"]
    for n in sizes:
        cells = []
        for *_, rows in columns:
            row = next((r for r in rows if r["n"] == n), None)
            cells.append("–" if row is None else f"{row['decisions_per_cpu_second']:,}")
        lines.append(f"| {n:,} | " + " | ".join(cells) + " |")
    peak = []
    for _, _, _, rows in columns:
        top = max(rows, key=lambda r: r["n"])
        peak.append(f"{top['peak_memory_mb']:g} MB (N = {top['n']:,})")
    lines.append("| peak memory, largest N | " + " | ".join(peak) + " |")
    lines.append("")
    from .batched import TARGETS

    for game, result in engine.items():
        parts = []
        for variant, (single, rows) in _columns(result).items():
            best = max(rows, key=lambda r: r["decisions_per_cpu_second"])
            ratio = best["decisions_per_cpu_second"] / single["decisions_per_cpu_second"]
            parts.append(f"{variant}: best {best['decisions_per_cpu_second']:,} at N = {best['n']:,}, "
                         f"{ratio:.1f}× its single env")
        target = TARGETS.get(game)
        aim = f" (target {target:,} per CPU-second)" if target else ""
        lines.append(_bullet(f"{_title(game)}{aim}: " + "; ".join(parts) + f"; {_load(result)}."))
    return "\n".join(lines)


def trainer_table(trainer: dict) -> str:
    """Each trainer's pooled rates over the rounds, and the two ratios: batched against SB3, and with features
    against without."""
    pooled = trainer["pooled"]
    features = trainer.get("features", "")
    lines = ["| trainer | env steps per CPU-second | per second (wall) | against SB3 (CPU) |", "|---|---:|---:|---:|"]
    for name, label in TRAINERS.items():
        if name not in pooled:
            continue
        p = pooled[name]
        ratio = p["steps_per_cpu_second"] / pooled["sb3"]["steps_per_cpu_second"]
        lines.append(f"| {label.format(features=features)} | {p['steps_per_cpu_second']:,} | "
                     f"{p['steps_per_second']:,} | {ratio:.2f}× |")
    rounds = ", ".join(f"{r:.2f}×" for r in trainer["ratio_cpu_per_round"])
    lines += ["", _bullet(f"Batched against SB3, per CPU-second: **{trainer['ratio_cpu']:.2f}×** (rounds {rounds}); "
                          f"its matrix products alone take {trainer['matmul_floor_us_per_decision']['total']:g} "
                          f"CPU-µs a decision, a bound of {trainer['bound_cpu_ratio']:.2f}× the SB3 path.")]
    if "features_ratio_cpu" in trainer:
        rounds = ", ".join(f"{r:.2f}" for r in trainer["features_ratio_cpu_per_round"])
        verdict = "meets" if trainer["features_ratio_cpu"] >= trainer["features_target"] else "misses"
        lines.append(_bullet(f"With `{features}` against without, per CPU-second: "
                             f"**{trainer['features_ratio_cpu']:.2f}** (rounds {rounds}; wall "
                             f"{trainer['features_ratio_wall']:.2f}), which {verdict} the target of "
                             f"{trainer['features_target']:g}."))
    lines.append(_bullet(f"{trainer['rounds']} rounds, {trainer['threads']} torch thread; load average "
                         f"{trainer['load_average_before'][0]:.1f} before the run and {trainer['load_average'][0]:.1f} "
                         f"after it ({trainer['date']})."))
    return "\n".join(lines)


def _replace(page: str, marker: str, text: str) -> str:
    from cardzoo.evaluation.report.writer import replace_marked

    return replace_marked(page, f"<!-- {marker} -->", f"<!-- /{marker} -->", text, "docs/speed.md")


SOURCES = {"bench": ("bench.json", bench_table), "runner": ("speed.json", runner_line),
           "training-speed": ("training_speed/training_speed.json", training_speed_table),
           "batched-engine": ("batched/engine.json", engine_table),
           "batched-trainer": ("batched/trainer.json", trainer_table),
           "batched-payoff": ("training/rope_team_batched_not_shipped/report_deals.json", payoff_table)}


def page_with_tables(page: str, results: dict[str, dict]) -> str:
    """``page`` with each marked part replaced by what its committed result gives (``results``: marker -> the
    result's content); a missing marker pair is an error."""
    for marker, (_, write) in SOURCES.items():
        page = _replace(page, marker, write(results[marker]))
    return page


def committed(results: Path = RESULTS) -> dict[str, dict]:
    """The committed results the page is made from, by marker."""
    return {marker: json.loads((results / name).read_text()) for marker, (name, _) in SOURCES.items()}


def charts(results: Path = RESULTS) -> None:
    """Redraw the batched benchmark's charts from its committed JSON (as its runs draw them)."""
    from .batched import _plot, _plot_profile

    folder = results / "batched"
    _plot(json.loads((folder / "engine.json").read_text()), folder / "engine_scaling.png")
    _plot_profile(json.loads((folder / "trainer.json").read_text()), folder / "trainer_profile.png")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", type=Path, default=RESULTS)
    parser.add_argument("--page", type=Path, default=PAGE)
    parser.add_argument("--charts", action="store_true", help="also redraw the batched charts from the JSON")
    args = parser.parse_args(argv)
    args.page.write_text(page_with_tables(args.page.read_text(), committed(args.results)))
    if args.charts:
        charts(args.results)


if __name__ == "__main__":
    main()
