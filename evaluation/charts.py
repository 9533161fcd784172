"""Win-rate charts as PNG files, drawn with the shared numpy canvas (no plotting library needed).

A chart has one group per level (or variant) and one bar per source (document, simple strategy, random, ceiling,
learned ...), each with its 95 % interval as a whisker; a source that is a single figure (the document's) is
drawn as a hollow bar without whisker.
"""

from __future__ import annotations

import math
import struct
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from cardzoo.envs.common.render import Canvas

PALETTE = [(90, 90, 90), (40, 110, 200), (200, 120, 40), (60, 160, 80), (160, 60, 160), (200, 50, 50)]
WHITE, BLACK, LIGHT = (255, 255, 255), (0, 0, 0), (225, 225, 225)


@dataclass(frozen=True)
class Bar:
    source: str
    value: float  # 0..1
    low: float | None = None
    high: float | None = None
    hollow: bool = False


def write_png(pixels: np.ndarray, path: str | Path) -> None:
    """Write an (H, W, 3) uint8 array as a PNG file."""
    height, width, _ = pixels.shape
    raw = b"".join(b"\x00" + pixels[y].tobytes() for y in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")
    Path(path).write_bytes(png)


def bar_chart(title: str, groups: dict[str, list[Bar]], path: str | Path) -> np.ndarray:
    """Grouped vertical bars from 0 to 100 %; returns the pixels and writes the PNG."""
    sources = list(dict.fromkeys(b.source for bars in groups.values() for b in bars))
    colour = {s: PALETTE[i % len(PALETTE)] for i, s in enumerate(sources)}
    bar_w, gap = 18, 26
    group_w = len(sources) * bar_w + gap
    left, top, plot_h = 50, 40, 240
    width = max(left + len(groups) * group_w + 20, 60 + 110 * ((len(sources) + 1) // 2) + 20)
    height = top + plot_h + 40 + 16 * ((len(sources) + 1) // 2) + 20
    c = Canvas(width, height, background=WHITE)
    c.text(10, 10, title, BLACK)
    for pct in range(0, 101, 20):
        y = top + plot_h - pct * plot_h // 100
        c.rect(left, y, width - left - 10, 1, LIGHT)
        c.text(8, y - 4, f"{pct:>3}", BLACK)
    for g, (name, bars) in enumerate(groups.items()):
        x0 = left + 10 + g * group_w
        for bar in bars:
            if math.isnan(bar.value):  # a rate of no games (a small run): no bar
                continue
            x = x0 + sources.index(bar.source) * bar_w
            h = int(round(bar.value * plot_h))
            y = top + plot_h - h
            if bar.hollow:
                c.rect(x + 1, y, bar_w - 3, max(h, 2), WHITE, border=colour[bar.source])
            else:
                c.rect(x + 1, y, bar_w - 3, max(h, 1), colour[bar.source])
            if bar.low is not None and bar.high is not None:
                y_low = top + plot_h - int(round(bar.low * plot_h))
                y_high = top + plot_h - int(round(bar.high * plot_h))
                cx = x + bar_w // 2 - 1
                c.rect(cx, y_high, 1, max(y_low - y_high, 1), BLACK)
                c.rect(cx - 3, y_high, 7, 1, BLACK)
                c.rect(cx - 3, y_low, 7, 1, BLACK)
        c.text(x0, top + plot_h + 8, name[: max(3, group_w // 7)], BLACK)
    legend_y = top + plot_h + 30
    for i, source in enumerate(sources):
        x, y = 10 + (i % 2) * 200, legend_y + (i // 2) * 16
        c.rect(x, y, 10, 10, colour[source])
        c.text(x + 16, y + 1, source[:26], BLACK)
    write_png(c.pixels, path)
    return c.pixels


def line_chart(title: str, series: dict[str, list[tuple[float, float]]], path: str | Path,
               x_label: str = "") -> np.ndarray:
    """Lines of (x, y) points with y a rate in 0..1; returns the pixels and writes the PNG."""
    left, top, plot_w, plot_h = 50, 40, 420, 220
    names = list(series)
    width = left + plot_w + 20
    height = top + plot_h + 36 + 16 * ((len(names) + 1) // 2) + 10
    c = Canvas(width, height, background=WHITE)
    c.text(10, 10, title, BLACK)
    xs = [x for pts in series.values() for x, _ in pts]
    x_max = max(xs) if xs and max(xs) > 0 else 1.0
    for pct in range(0, 101, 20):
        y = top + plot_h - pct * plot_h // 100
        c.rect(left, y, plot_w, 1, LIGHT)
        c.text(8, y - 4, f"{pct:>3}", BLACK)
    c.text(left, top + plot_h + 8, "0", BLACK)
    label = f"{x_max:,.0f} {x_label}".strip()
    c.text(left + plot_w - 7 * len(label), top + plot_h + 8, label, BLACK)
    for i, name in enumerate(names):
        colour = PALETTE[i % len(PALETTE)]
        points = [(left + int(x / x_max * (plot_w - 1)), top + plot_h - int(round(y * plot_h)))
                  for x, y in series[name]]
        for (x0, y0), (x1, y1) in zip(points, points[1:], strict=False):
            steps = max(abs(x1 - x0), abs(y1 - y0), 1)
            for t in range(steps + 1):
                c.rect(x0 + (x1 - x0) * t // steps, y0 + (y1 - y0) * t // steps, 2, 2, colour)
        for x, y in points:
            c.rect(x - 2, y - 2, 5, 5, colour)
        lx, ly = 10 + (i % 2) * 200, top + plot_h + 28 + (i // 2) * 16
        c.rect(lx, ly, 10, 10, colour)
        c.text(lx + 16, ly + 1, name[:26], BLACK)
    write_png(c.pixels, path)
    return c.pixels
