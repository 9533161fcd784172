"""One colour per agent across all the charts (``envs/common/charts.py``): the same agent gets the same
colour in a bar chart, a line chart, a quantity chart and a scaling chart, whatever the other series and their
order; series that are not agents take the palette's other colours, so no two series of one chart share one."""

from __future__ import annotations

from matplotlib.colors import to_hex  # the report extra, installed with ``all`` as in CI

from cardzoo.envs.common import charts
from cardzoo.envs.common.charts import Bar

AGENT_COLOURS = {name: to_hex(colour) for name, colour in charts.AGENT_COLOURS.items()}


def bar_colours(groups: dict[str, list[Bar]]) -> dict[str, str]:
    fig = charts.bar_figure("t", groups)
    ax = fig.axes[0]
    out = {}
    for container in ax.containers:
        if hasattr(container, "patches") and container.patches:
            out[container.get_label()] = to_hex(container.patches[0].get_facecolor())
    charts._pyplot().close(fig)
    return out


def line_colours(series: dict[str, list[tuple[float, float]]]) -> dict[str, str]:
    fig = charts.line_figure("t", series)
    out = {line.get_label(): to_hex(line.get_color()) for line in fig.axes[0].lines}
    charts._pyplot().close(fig)
    return out


def quantity_colours(values: dict[str, float]) -> dict[str, str]:
    fig = charts.quantity_figure("t", values, "x")
    ax = fig.axes[0]
    names = [t.get_text() for t in ax.get_yticklabels()]
    out = {name: to_hex(p.get_facecolor()) for name, p in zip(names, ax.patches, strict=True)}
    charts._pyplot().close(fig)
    return out


def scaling_colours(rates: dict[str, list[tuple[int, float]]]) -> dict[str, str]:
    fig = charts.scaling_figure("t", rates, {}, [])
    out = {line.get_label(): to_hex(line.get_color()) for line in fig.axes[0].lines}
    charts._pyplot().close(fig)
    return out


def test_the_same_agent_has_the_same_colour_in_every_chart():
    rope_team = {level: [Bar("document", 0.5, reported=True), Bar("simple", 0.5, 0.4, 0.6), Bar("random", 0.1),
                         Bar("ceiling", 0.9), Bar("learned", 0.6), Bar("learned_v1", 0.55),
                         Bar("learned_plain", 0.3), Bar("search", 0.7)] for level in ("easy", "normal")}
    summit_rush = {"Normal": [Bar("search", 0.7), Bar("learned_talk", 0.2), Bar("random", 0.0), Bar("simple", 0.4)]}
    talk = {"normal": [Bar("simple strategy, silent", 0.4, agent="simple"),
                       Bar("simple strategy, talking version muted", 0.3, agent="simple_talk_muted"),
                       Bar("learned with the message channel", 0.5, agent="learned_talk")]}
    seen = [bar_colours(rope_team), bar_colours(summit_rush),
            line_colours({"learned": [(0, 0.1), (1, 0.2)], "held-out": [(0, 0.3), (1, 0.4)],
                          "search": [(0, 0.5), (1, 0.6)]}),
            quantity_colours({"random": 3.0, "cardzoo batched": 2.0, "simple": 1.0}),
            scaling_colours({"heuristic": [(1, 1.0), (2, 2.0)], "learned": [(1, 1.0), (2, 3.0)]})]
    by_agent: dict[str, set[str]] = {}
    for chart in seen:
        for name, colour in chart.items():
            by_agent.setdefault(name, set()).add(colour)
    agents = {name: colours for name, colours in by_agent.items() if name in AGENT_COLOURS}
    assert {"simple", "random", "search", "learned"} <= set(agents)
    for name, colours in agents.items():
        assert colours == {AGENT_COLOURS[name]}, (name, colours)
    talk_colours = bar_colours(talk)
    assert talk_colours["simple strategy, silent"] == AGENT_COLOURS["simple"]
    assert talk_colours["learned with the message channel"] == AGENT_COLOURS["learned_talk"]
    for chart in [*seen, talk_colours]:  # within a chart, every series has a colour of its own
        assert len(set(chart.values())) == len(chart), chart


def test_agents_have_distinct_colours_and_other_series_avoid_them():
    assert len(set(AGENT_COLOURS.values())) == len(AGENT_COLOURS)
    got = {name: to_hex(c) for name, c in charts.colours(["vs random", "simple", "vs itself", "random"]).items()}
    assert got["simple"] == AGENT_COLOURS["simple"] and got["random"] == AGENT_COLOURS["random"]
    assert len(set(got.values())) == 4
