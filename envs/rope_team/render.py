"""Drawing a Rope Team table as one player sees it: text for terminals, an RGB image for videos."""

from __future__ import annotations

import numpy as np

from ..common.cards import SUIT_NAMES, SUIT_SYMBOLS, card_pretty, cards_of, format_cards
from ..common.render import GOLD, GREY, Canvas, trick_line
from .rules import CAMP, RIDGE, State


def _ridge_cells(s: State) -> list[str]:
    cells = []
    for pos in range(RIDGE):
        face = card_pretty(s.ridge[pos]) if s.up[pos] else "??"
        cells.append(f"[{face:>3}]")
    return cells


def text(s: State, viewer: int) -> str:
    cfg = s.config
    cells = _ridge_cells(s)
    marker = ["     "] * RIDGE
    marker[s.coin] = "  ^  "
    marker[CAMP] = "camp " if s.coin != CAMP else "  ^  "
    trumps = "none" if s.trumps < 0 else f"{SUIT_SYMBOLS[s.trumps]} {SUIT_NAMES[s.trumps]}"
    trick = f"trick {s.trick_no + 1}/13" if s.outcome is None else f"{s.trick_no} tricks played"
    lines = [
        f"Rope Team - deal {s.deal}/{cfg.max_deals}, {trick}, player_{s.dealer} dealt - view of player_{viewer}",
        "player_0's end " + " ".join(cells) + " player_1's end",
        "               " + " ".join(f"{m:^5}" for m in marker),
        f"coin on position {s.coin}   trumps: {trumps}   ropes left: {s.ropes}   uncovered: {s.uncovered}/8",
    ]
    trick = trick_line(s.leader, s.led, s.last_trick)
    if trick:
        lines.append(trick)
    lines.append(f"hand of player_{viewer}: {format_cards(cards_of(s.hands[viewer]))}")
    partner = 1 - viewer
    if cfg.open_hands:
        lines.append(f"hand of player_{partner}: {format_cards(cards_of(s.hands[partner]))}")
    else:
        lines.append(f"hand of player_{partner}: {s.hands[partner].bit_count()} cards, hidden")
    if s.outcome is not None:
        lines.append(f"game over: {s.outcome}")
    else:
        lines.append(f"player_{s.to_move} to play")
    return "\n".join(lines)


def image(s: State, viewer: int) -> np.ndarray:
    width = 20 + RIDGE * 40
    c = Canvas(width, 240)
    c.text(10, 6, f"DEAL {s.deal}/{s.config.max_deals}  TRICK {min(s.trick_no + 1, 13)}  ROPES {s.ropes}")
    for pos in range(RIDGE):
        x = 12 + pos * 40
        c.card(x, 24, s.ridge[pos] if s.up[pos] else None, highlight=GOLD if pos == s.coin else None)
    coin_x = 12 + s.coin * 40 + 11
    c.rect(coin_x, 76, 12, 12, GOLD)
    if s.coin != 0:
        c.text(14, 78, "P0", GREY)
    if s.coin != RIDGE - 1:
        c.text(12 + (RIDGE - 1) * 40 + 2, 78, "P1", GREY)
    c.text(10, 94, "TRUMPS")
    if s.trumps >= 0:
        c.suit(60, 93, s.trumps)
    else:
        c.text(60, 94, "-")
    if s.led is not None:
        c.text(110, 94, f"P{s.leader} LED")
        c.card(180, 88, s.led)
    hand = cards_of(s.hands[viewer])
    c.text(10, 142, f"P{viewer} HAND")
    for i, card in enumerate(hand):
        c.card(10 + i * 26, 156, card)
    return c.pixels
