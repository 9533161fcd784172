"""Charts for the report and the learning curves, drawn with matplotlib and written as PNG and SVG side by side.

matplotlib is an extra (``pip install cardzoo[report]``, part of ``all``), not a core dependency: envs, agents and
the statistics of an evaluation need only numpy, and a report made without matplotlib still has its markdown, CSV
and JSON — :func:`available` tells the report whether to draw, and it says so when it cannot.

A bar chart has one group per level (or variant) and one bar per source (simple strategy, random, ceiling,
learned ...), each with its 95 % interval as an error bar; a source that is a single reported figure (the
document's) is not a bar but a black diamond over its group, so it cannot be read as a measurement.
"""

from __future__ import annotations

import importlib.util
import math
from dataclasses import dataclass
from pathlib import Path

# Colour-blind-safe (Okabe-Ito): the colours of series that are not agents, in the order they first appear.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")
# One colour per agent in every chart (bars, lines, quantities, scaling), whatever else the chart shows and in
# whatever order: the same agent is never blue in one chart and green in the next. Okabe-Ito first, then Paul Tol's
# colour-blind-safe "muted" set for the agents beyond seven. A new agent that charts show gets its line here.
AGENT_COLOURS = {
    "simple": "#0072B2", "random": "#E69F00", "ceiling": "#009E73", "learned": "#CC79A7", "learned_v1": "#56B4E9",
    "search": "#D55E00", "simple_talk": "#F0E442", "learned_talk": "#882255", "learned_plain": "#44AA99",
    "heuristic": "#332288", "oracle": "#999933", "learned_seed1": "#AA4499",
    "search_learned": "#117733",
}


def colours(names) -> dict[str, str]:
    """The colour of each of ``names``: an agent's own (``AGENT_COLOURS``); any other series the palette's
    colours in order, skipping those of the agents in the same chart so that no two series share one."""
    names = list(dict.fromkeys(names))
    taken = {AGENT_COLOURS[n] for n in names if n in AGENT_COLOURS}
    spare = [c for c in PALETTE if c not in taken] or list(PALETTE)
    others = [n for n in names if n not in AGENT_COLOURS]
    return {n: AGENT_COLOURS[n] if n in AGENT_COLOURS else spare[others.index(n) % len(spare)] for n in names}


@dataclass(frozen=True)
class Bar:
    source: str
    value: float  # 0..1
    low: float | None = None
    high: float | None = None
    reported: bool = False  # a figure reported elsewhere (the document's), drawn as a marker, not a bar
    agent: str | None = None  # the agent whose colour the bar takes, when ``source`` is a longer label


def available() -> bool:
    """Whether matplotlib is installed (the ``report`` extra)."""
    return importlib.util.find_spec("matplotlib") is not None


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")  # files only, never a window
    matplotlib.rcParams["svg.hashsalt"] = "cardzoo"  # SVG ids from the data, not at random: reproducible files
    import matplotlib.pyplot as plt

    return plt


def _save(fig, path: str | Path) -> list[Path]:
    """Write the figure as ``path`` (PNG) and beside it as SVG; return both paths."""
    png = Path(path).with_suffix(".png")
    svg = png.with_suffix(".svg")
    fig.savefig(png, dpi=150, bbox_inches="tight")
    fig.savefig(svg, bbox_inches="tight", metadata={"Date": None})  # no timestamp: the same data, the same file
    _pyplot().close(fig)
    return [png, svg]


def bar_chart(title: str, groups: dict[str, list[Bar]], path: str | Path, y_label: str = "win rate (%)") -> list[Path]:
    """Grouped bars from 0 to 100 % with 95 % intervals; reported figures as diamonds. Returns the files written
    (none without matplotlib)."""
    if not available():
        return []
    return _save(bar_figure(title, groups, y_label), path)


def bar_figure(title: str, groups: dict[str, list[Bar]], y_label: str = "win rate (%)"):
    """The matplotlib figure of :func:`bar_chart`."""
    plt = _pyplot()
    sources = list(dict.fromkeys(b.source for bars in groups.values() for b in bars if not b.reported))
    agent_of = {b.source: b.agent or b.source for bars in groups.values() for b in bars if not b.reported}
    colour = colours(agent_of[s] for s in sources)
    reported = list(dict.fromkeys(b.source for bars in groups.values() for b in bars if b.reported))
    width = 0.8 / max(len(sources), 1)
    fig, ax = plt.subplots(figsize=(max(6.0, 1.2 * len(groups) * max(len(sources), 1) * 0.45 + 2), 4.2))
    for i, source in enumerate(sources):
        xs, ys, errors = [], [], [[], []]
        for g, bars in enumerate(groups.values()):
            for bar in bars:
                if bar.source == source and not bar.reported and not math.isnan(bar.value):
                    xs.append(g - 0.4 + width * (i + 0.5))
                    ys.append(100 * bar.value)
                    low = bar.value if bar.low is None else bar.low
                    high = bar.value if bar.high is None else bar.high
                    errors[0].append(100 * (bar.value - low))
                    errors[1].append(100 * (high - bar.value))
        ax.bar(xs, ys, width * 0.92, yerr=errors, capsize=2, label=source, color=colour[agent_of[source]],
               error_kw={"elinewidth": 0.8, "ecolor": "#333333"})
    markers = ("D", "s", "^", "v")
    for j, source in enumerate(reported):
        points = [(g, 100 * bar.value) for g, bars in enumerate(groups.values()) for bar in bars
                  if bar.source == source and bar.reported and not math.isnan(bar.value)]
        ax.scatter([x for x, _ in points], [y for _, y in points], marker=markers[j % len(markers)], s=36,
                   color="black", zorder=3, label=f"{source} (reported figure)")
    ax.set_xticks(range(len(groups)), list(groups), rotation=20 if len(groups) > 5 else 0)
    ax.set_ylim(0, 105)
    ax.set_ylabel(y_label)
    ax.set_title(title)
    ax.yaxis.grid(True, color="#dddddd")
    ax.set_axisbelow(True)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    return fig


def short_number(x: float) -> str:
    """An axis label that stays narrow: 250k, 1.5M (ticks of millions of steps overlap when written in full)."""
    for size, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(x) >= size:
            return f"{x / size:.4g}{suffix}"
    return f"{x:.4g}"


def line_chart(title: str, series: dict[str, list[tuple[float, float]]], path: str | Path, x_label: str = "",
               y_label: str = "win rate (%)") -> list[Path]:
    """Lines of (x, y) points, y a rate in 0..1 drawn in %. Returns the files written (none without matplotlib)."""
    if not available():
        return []
    return _save(line_figure(title, series, x_label, y_label), path)


def line_figure(title: str, series: dict[str, list[tuple[float, float]]], x_label: str = "",
                y_label: str = "win rate (%)"):
    """The matplotlib figure of :func:`line_chart`."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    colour = colours(series)
    for name, points in series.items():
        ax.plot([x for x, _ in points], [100 * y for _, y in points], marker="o", markersize=3, linewidth=1.4,
                label=name, color=colour[name])
    ax.set_ylim(0, 100)
    ax.set_xlabel(x_label)
    ax.set_ylabel(y_label)
    ax.set_title(title)
    ax.grid(True, color="#dddddd")
    ax.xaxis.set_major_formatter(plt.FuncFormatter(lambda x, _: short_number(x)))
    if len(series) > 1:
        ax.legend(fontsize=8, frameon=False)
    return fig


def quantity_chart(title: str, values: dict[str, float], path: str | Path, x_label: str) -> list[Path]:
    """Horizontal bars of positive quantities (e.g. steps per second), one per name, each labelled with its value.
    Returns the files written (none without matplotlib)."""
    if not available():
        return []
    return _save(quantity_figure(title, values, x_label), path)


def quantity_figure(title: str, values: dict[str, float], x_label: str):
    """The matplotlib figure of :func:`quantity_chart`."""
    fig, ax = _pyplot().subplots(figsize=(6.4, 0.5 * len(values) + 1.4))
    names = list(values)[::-1]  # the first name at the top
    colour = colours(list(values))
    bars = ax.barh(names, [values[n] for n in names], color=[colour[n] for n in names])
    ax.bar_label(bars, labels=[f"{values[n]:,.0f}" for n in names], padding=3, fontsize=8)
    ax.set_xlim(0, 1.15 * max(values.values()))
    ax.set_xlabel(x_label)
    ax.set_title(title)
    ax.xaxis.grid(True, color="#dddddd")
    ax.set_axisbelow(True)
    return fig


@dataclass(frozen=True)
class Level:
    """A horizontal reference line on a scaling chart: a single env's rate, or a target."""

    label: str
    value: float
    target: bool = False  # a target to reach (dotted, green, labelled on the line) rather than a measurement
    series: str = ""  # a measurement's line takes this series' colour (grey if none) and is named in the legend


def scaling_chart(title: str, rates: dict[str, list[tuple[int, float]]], memory: dict[str, list[tuple[int, float]]],
                  levels: list[Level], path: str | Path, y_label: str = "decisions per CPU-second") -> list[Path]:
    """Throughput and memory against the batch size, log-log, side by side: ``rates`` and ``memory`` map each
    series to (N, value) points (memory in MB), ``levels`` are reference lines on the throughput panel. Returns the
    files written (none without matplotlib)."""
    if not available():
        return []
    return _save(scaling_figure(title, rates, memory, levels, y_label), path)


def scaling_figure(title: str, rates: dict[str, list[tuple[int, float]]], memory: dict[str, list[tuple[int, float]]],
                   levels: list[Level], y_label: str = "decisions per CPU-second"):
    """The matplotlib figure of :func:`scaling_chart`."""
    plt = _pyplot()
    fig, (ax, mem) = plt.subplots(1, 2, figsize=(12.5, 4.6), gridspec_kw={"width_ratios": [3, 2]})
    colour_of = colours(rates)
    for name, colour in colour_of.items():
        ax.plot(*zip(*rates[name], strict=True), marker="o", markersize=4, linewidth=1.4, color=colour, label=name)
        if name in memory:
            mem.plot(*zip(*memory[name], strict=True), marker="s", markersize=4, linewidth=1.4, color=colour,
                     label=name)
    for level in levels:
        label = f"{level.label}: {level.value:,.0f}"
        if level.target:
            ax.axhline(level.value, color="#009E73", linestyle=":", linewidth=1)
            ax.annotate(label, (1, level.value), fontsize=7, color="#009E73", va="bottom")
        else:
            ax.axhline(level.value, color=colour_of.get(level.series, "#777777"), linestyle="--", linewidth=1,
                       label=label)
    for panel, label, heading in ((ax, y_label, title), (mem, "peak memory (MB)", "Memory numpy allocates")):
        panel.set(xscale="log", yscale="log", xlabel="games stepped together (N)", ylabel=label, title=heading)
        panel.grid(True, which="major", color="#dddddd")
        panel.xaxis.set_major_formatter(plt.FuncFormatter(lambda x, _: f"{x:,.0f}"))
    ax.yaxis.set_major_formatter(plt.FuncFormatter(lambda y, _: f"{y:,.0f}"))
    mem.yaxis.set_major_formatter(plt.FuncFormatter(lambda y, _: f"{y:,g}"))
    fig.legend(*ax.get_legend_handles_labels(), fontsize=8, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=3,
               frameon=False)  # below both panels: inside, it would hide lines
    fig.tight_layout()
    return fig
