"""Drawing a Rook for Two table as one player sees it: text for terminals, an RGB image for videos."""

from __future__ import annotations

import numpy as np

from ..common.cards import SUIT_NAMES, SUIT_SYMBOLS, cards_of
from ..common.render import BLACK, GOLD, GREY, WHITE, Canvas, trick_line
from .rules import BID_TRUMP_PHASES, OVER, PHASE_NAMES, PILE, ROOK, State, card_pretty


def _cards(mask: int) -> str:
    return " ".join(card_pretty(c) for c in cards_of(mask)) or "-"


def _bids(s: State) -> str:
    return ", ".join(f"P{seat} {'pass' if amount is None else amount}" for seat, amount in s.bids) or "none yet"


def text(s: State, viewer: int) -> str:
    opp = 1 - viewer
    trumps = "not named" if s.trumps < 0 else f"{SUIT_SYMBOLS[s.trumps]} {SUIT_NAMES[s.trumps]}"
    lines = [
        f"Rook for Two - round {s.round_no}, player_{s.dealer} dealt, phase {PHASE_NAMES[s.phase]} "
        f"- view of player_{viewer}",
        f"totals: player_0 {s.totals[0]}, player_1 {s.totals[1]} (target {s.config.target_score})",
        f"bids: {_bids(s)}" + (f"; player_{s.bidder} won the bid at {s.high_bid}" if s.bidder is not None else ""),
        f"trumps: {trumps}",
    ]
    if s.bidder == viewer and s.phase not in BID_TRUMP_PHASES:
        lines.append(f"nest: {_cards(s.nest)}   discards: {_cards(s.discards)}")
    left = max(PILE - s.pile_pos - (1 if s.face_up is not None else 0), 0)
    face = "none" if s.face_up is None else card_pretty(s.face_up)
    lines.append(f"face-up card: {face}   face-down draw pile: {left} cards")
    lines.append(f"tricks: player_0 {s.tricks[0]} ({s.points[0]} pts), player_1 {s.tricks[1]} ({s.points[1]} pts)")
    trick = trick_line(s.leader, s.led, s.last_trick, card_pretty)
    if trick:
        lines.append(trick)
    lines.append(f"hand of player_{viewer}: {_cards(s.hands[viewer])}")
    known = f", known: {_cards(s.known[opp])}" if s.known[opp] else ""
    lines.append(f"hand of player_{opp}: {s.hands[opp].bit_count()} cards, hidden{known}")
    if s.phase == OVER:
        who = "nobody" if s.winner is None else f"player_{s.winner}"
        lines.append(f"game over ({s.outcome}): {who} wins")
    else:
        lines.append(f"player_{s.to_move} to {PHASE_NAMES[s.phase]}")
    return "\n".join(lines)


def _card(c: Canvas, x: int, y: int, card: int | None, highlight=None) -> None:
    if card == ROOK:
        c.rect(x, y, c.CARD_W, c.CARD_H, WHITE, border=highlight or GREY)
        c.text(x + 3, y + 4, "ROOK", BLACK)
        c.rect(x + 9, y + 22, 16, 16, BLACK)
        return
    c.card(x, y, card, highlight)


def image(s: State, viewer: int) -> np.ndarray:
    c = Canvas(420, 300)
    c.text(8, 6, f"ROUND {s.round_no}  P0 {s.totals[0]}  P1 {s.totals[1]}")
    bid = "-" if s.high_bid is None else str(s.high_bid)
    c.text(8, 20, f"BID {bid}" + (f" P{s.bidder}" if s.bidder is not None else ""))
    c.text(150, 20, "TRUMPS")
    if s.trumps >= 0:
        c.suit(200, 19, s.trumps)
    else:
        c.text(200, 20, "-")
    c.text(8, 40, "DRAW")
    if s.pile_pos < PILE:
        _card(c, 8, 54, None)
    if s.face_up is not None:
        _card(c, 48, 54, s.face_up, highlight=GOLD)
    c.text(110, 40, "TRICK")
    if s.led is not None:
        _card(c, 110, 54, s.led)
    c.text(220, 40, f"TRICKS {s.tricks[viewer]}-{s.tricks[1 - viewer]}")
    c.text(220, 56, f"POINTS {s.points[viewer]}-{s.points[1 - viewer]}")
    opp = 1 - viewer
    c.text(8, 116, f"P{opp} {s.hands[opp].bit_count()} CARDS")
    for i, card in enumerate(cards_of(s.known[opp])):
        _card(c, 150 + i * 26, 110, card)
    hand = cards_of(s.hands[viewer])
    c.text(8, 176, f"P{viewer} HAND")
    for i, card in enumerate(hand):
        _card(c, 8 + i * 26, 190, card, highlight=GOLD if s.known[viewer] >> card & 1 else None)
    if s.phase == OVER:
        c.text(8, 250, "GAME OVER" + ("" if s.winner is None else f" P{s.winner} WINS"))
    else:
        c.text(8, 250, f"P{s.to_move} TO {PHASE_NAMES[s.phase].upper()}")
    return c.pixels
