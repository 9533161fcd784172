"""Drawing a Summit Rush table as the players see it (all public): text for terminals, an RGB image for videos."""

from __future__ import annotations

import numpy as np

from ..common.cards import card_pretty
from ..common.render import GREY, Canvas
from .rules import COVERED_BY, MESSAGES, N_PEAKS, ROW_START, ROWS, State


def _columns() -> tuple[float, ...]:
    """Horizontal place of each position in bottom-card widths: the middle of the two cards covering it."""
    x = [0.0] * N_PEAKS
    for pos in range(N_PEAKS - 1, -1, -1):
        covers = COVERED_BY[pos]
        x[pos] = float(pos - ROW_START[3]) if not covers else (x[covers[0]] + x[covers[1]]) / 2
    return tuple(x)


COLUMNS = _columns()
CELL = 6  # text characters per bottom-row card
EMPTY = (40, 130, 80)  # outline of a place whose card has been played


def _face(s: State, pos: int) -> str:
    if not s.present >> pos & 1:
        return "  .  "
    if not s.up >> pos & 1:
        return "[###]"
    return f"[{card_pretty(s.peaks[pos]):>3}]"


def text(s: State) -> str:
    cfg = s.config
    lines = []
    ticks = cfg.ticks
    clock = "untimed"
    if ticks is not None:
        clock = f"tick {s.tick}/{ticks} ({s.ticks_left() * cfg.seconds_per_action:g} s left)"
    lines.append(f"Summit Rush - {cfg.players} pile(s), {clock}, round the corner {'on' if cfg.wrap else 'off'}")
    for row, start in enumerate(ROW_START):
        chars = [" "] * (CELL * 10 + 2)
        for pos in range(start, start + ROWS[row]):
            x = round(COLUMNS[pos] * CELL)
            chars[x : x + 5] = _face(s, pos)
        lines.append("".join(chars).rstrip())
    for p in range(cfg.players):
        lines.append(f"pile {p} (player_{p}): {card_pretty(s.tops[p]):>3} ({len(s.piles[p])} cards)   "
                     f"stock: {s.stock_left[p]} left")
    if cfg.talk:
        heard = [f"player_{p}: \"{MESSAGES[said[0]]}\" ({s.tick - 1 - said[1]} ticks ago)"
                 for p, said in enumerate(s.said) if said is not None]
        lines.append("last said - " + ("; ".join(heard) if heard else "nothing yet"))
    if s.last_order:
        lines.append("last tick landed in order " + ", ".join(f"player_{p}" for p in s.last_order))
    lines.append(f"conflicts {s.conflicts}, redirected {s.redirected}, bounced {s.bounced}, "
                 f"peak cards left {s.present.bit_count()}")
    if s.outcome is not None:
        lines.append(f"game over: {s.outcome}" + (f", score {s.score}" if s.outcome == "win" else ""))
    return "\n".join(lines)


def image(s: State) -> np.ndarray:
    step_x, step_y = 38, 26
    width = 20 + 10 * step_x
    c = Canvas(width, 250)
    cfg = s.config
    ticks = cfg.ticks
    c.text(10, 6, "UNTIMED" if ticks is None else f"TIME {s.ticks_left() * cfg.seconds_per_action:g} S")
    c.text(150, 6, f"LEFT {s.present.bit_count()}")
    places = [(pos, 12 + round(COLUMNS[pos] * step_x), 22 + row * step_y)
              for row, start in enumerate(ROW_START) for pos in range(start, start + ROWS[row])]
    for pos, x, y in places:  # the outlines of cards already played, under everything else
        if not s.present >> pos & 1:
            c.rect(x, y, Canvas.CARD_W, 1, EMPTY)
            c.rect(x, y, 1, Canvas.CARD_H, EMPTY)
            c.rect(x + Canvas.CARD_W - 1, y, 1, Canvas.CARD_H, EMPTY)
            c.rect(x, y + Canvas.CARD_H - 1, Canvas.CARD_W, 1, EMPTY)
    for pos, x, y in places:  # top row first, so lower rows overlap the cards they cover
        if s.present >> pos & 1:
            c.card(x, y, s.peaks[pos] if s.up >> pos & 1 else None)
    y = 22 + 3 * step_y + Canvas.CARD_H + 14
    for p in range(cfg.players):
        x = 12 + p * 120
        c.text(x, y, f"P{p}")
        c.card(x + 18, y, s.tops[p])
        c.text(x + 58, y + 4, "STOCK")
        c.text(x + 58, y + 18, str(s.stock_left[p]), GREY if not s.stock_left[p] else (255, 255, 255))
    if s.outcome is not None:
        c.text(10, 232, f"GAME OVER: {s.outcome}")
    return c.pixels
