"""Rendering helpers shared by every game: a small numpy canvas for ``rgb_array`` frames.

Drawing is done with numpy slices and a built-in pixel font so that rendering needs no dependency beyond numpy.
"""

from __future__ import annotations

import numpy as np

from .cards import RANKS, card_pretty
from .errors import NotResetError, OptionError

# 8-pixel-wide glyphs, one int per row (bit x = column x), 9 rows; cut from a public-domain bitmap font.
_FONT = {
    'A': (0, 15, 14, 10, 31, 27, 59, 0, 0),
    'B': (0, 15, 27, 15, 27, 27, 15, 0, 0),
    'C': (0, 30, 27, 3, 3, 27, 14, 0, 0),
    'D': (0, 15, 27, 27, 27, 27, 15, 0, 0),
    'E': (0, 31, 3, 15, 3, 27, 31, 0, 0),
    'F': (0, 31, 3, 15, 3, 3, 7, 0, 0),
    'G': (0, 14, 27, 3, 31, 27, 30, 0, 0),
    'H': (0, 59, 27, 31, 27, 27, 59, 0, 0),
    'I': (0, 15, 6, 6, 6, 6, 15, 0, 0),
    'J': (0, 30, 12, 12, 13, 13, 7, 0, 0),
    'K': (0, 27, 11, 7, 15, 27, 55, 0, 0),
    'L': (0, 7, 3, 3, 3, 27, 31, 0, 0),
    'M': (0, 17, 27, 27, 31, 21, 21, 0, 0),
    'N': (0, 59, 23, 23, 27, 27, 19, 0, 0),
    'O': (0, 14, 27, 27, 27, 27, 14, 0, 0),
    'P': (0, 15, 27, 27, 15, 3, 7, 0, 0),
    'Q': (0, 14, 27, 27, 27, 27, 14, 24, 0),
    'R': (0, 15, 27, 27, 15, 27, 55, 0, 0),
    'S': (0, 30, 19, 15, 28, 25, 15, 0, 0),
    'T': (0, 31, 22, 6, 6, 6, 15, 0, 0),
    'U': (0, 59, 27, 27, 27, 27, 14, 0, 0),
    'V': (0, 59, 27, 10, 14, 14, 4, 0, 0),
    'W': (0, 53, 21, 21, 31, 14, 10, 0, 0),
    'X': (0, 51, 30, 12, 12, 30, 51, 0, 0),
    'Y': (0, 51, 51, 30, 12, 12, 30, 0, 0),
    'Z': (0, 31, 27, 12, 6, 27, 31, 0, 0),
    '0': (14, 27, 27, 27, 27, 27, 14, 0, 0),
    '1': (12, 15, 12, 12, 12, 12, 63, 0, 0),
    '2': (14, 27, 24, 12, 6, 27, 31, 0, 0),
    '3': (14, 27, 24, 14, 24, 27, 14, 0, 0),
    '4': (24, 28, 26, 27, 63, 24, 24, 0, 0),
    '5': (31, 3, 15, 27, 24, 25, 15, 0, 0),
    '6': (14, 27, 3, 15, 27, 27, 14, 0, 0),
    '7': (31, 27, 24, 12, 12, 6, 6, 0, 0),
    '8': (14, 27, 27, 14, 27, 27, 14, 0, 0),
    '9': (14, 27, 27, 30, 24, 27, 14, 0, 0),
    '?': (0, 14, 25, 12, 6, 0, 6, 0, 0),
    '-': (0, 0, 0, 31, 0, 0, 0, 0, 0),
    ':': (0, 0, 0, 6, 0, 0, 6, 0, 0),
    '/': (16, 16, 8, 8, 4, 4, 2, 2, 0),
    '.': (0, 0, 0, 0, 0, 0, 6, 0, 0),
    ',': (0, 0, 0, 0, 0, 0, 6, 4, 2),
    '%': (0, 35, 19, 8, 4, 50, 49, 0, 0),
    '+': (0, 4, 4, 31, 4, 4, 0, 0, 0),
    '(': (8, 4, 6, 6, 6, 6, 4, 8, 0),
    ')': (2, 4, 12, 12, 12, 12, 4, 2, 0),
    '<': (0, 12, 6, 3, 6, 12, 0, 0, 0),
    '>': (0, 6, 12, 24, 12, 6, 0, 0, 0),
    '*': (4, 15, 6, 9, 0, 0, 0, 0, 0),
    '=': (0, 0, 15, 0, 15, 0, 0, 0, 0),
    '_': (0, 0, 0, 0, 0, 0, 0, 0, 63),
    " ": (0, 0, 0, 0, 0, 0, 0, 0, 0),
}
# Suit pips, drawn by hand on the same grid (clubs, diamonds, hearts, spades).
_SUIT_GLYPHS = (
    (0, 28, 28, 127, 127, 107, 8, 28, 0),
    (0, 8, 28, 62, 127, 62, 28, 8, 0),
    (0, 54, 127, 127, 127, 62, 28, 8, 0),
    (0, 8, 28, 62, 127, 127, 107, 28, 0),
)
GLYPH_W, GLYPH_H = 8, 9

WHITE = (255, 255, 255)
BLACK = (0, 0, 0)
RED = (200, 30, 40)
FELT = (24, 110, 60)
BACK = (40, 70, 160)
GOLD = (235, 190, 40)
GREY = (150, 150, 150)
SUIT_COLOURS = (BLACK, RED, RED, BLACK)


def _glyph_array(rows: tuple[int, ...]) -> np.ndarray:
    return np.array([[(r >> x) & 1 for x in range(GLYPH_W)] for r in rows], dtype=bool)


_GLYPHS = {ch: _glyph_array(rows) for ch, rows in _FONT.items()}
_SUITS = tuple(_glyph_array(rows) for rows in _SUIT_GLYPHS)


class Canvas:
    """An RGB image with the few drawing operations card tables need."""

    def __init__(self, width: int, height: int, background=FELT):
        self.pixels = np.empty((height, width, 3), dtype=np.uint8)
        self.pixels[:] = background

    def rect(self, x: int, y: int, w: int, h: int, colour, border=None) -> None:
        self.pixels[y : y + h, x : x + w] = colour
        if border is not None:
            self.pixels[y : y + h, x] = border
            self.pixels[y : y + h, x + w - 1] = border
            self.pixels[y, x : x + w] = border
            self.pixels[y + h - 1, x : x + w] = border

    def _stamp(self, glyph: np.ndarray, x: int, y: int, colour, scale: int) -> None:
        if scale > 1:
            glyph = glyph.repeat(scale, 0).repeat(scale, 1)
        h, w = glyph.shape
        region = self.pixels[y : y + h, x : x + w]
        region[glyph[: region.shape[0], : region.shape[1]]] = colour

    def text(self, x: int, y: int, text: str, colour=WHITE, scale: int = 1) -> None:
        """Upper-case text; characters without a glyph are drawn as '?'."""
        for i, ch in enumerate(text.upper()):
            self._stamp(_GLYPHS.get(ch, _GLYPHS["?"]), x + i * 7 * scale, y, colour, scale)

    def suit(self, x: int, y: int, suit: int, scale: int = 1, colour=None) -> None:
        self._stamp(_SUITS[suit], x, y, SUIT_COLOURS[suit] if colour is None else colour, scale)

    CARD_W, CARD_H = 34, 48

    def card(self, x: int, y: int, card: int | None, highlight=None) -> None:
        """A card face (``card`` an int of the standard deck) or, for ``None``, a card back."""
        w, h = self.CARD_W, self.CARD_H
        if card is None:
            self.rect(x, y, w, h, BACK, border=highlight or WHITE)
            self.rect(x + 4, y + 4, w - 8, h - 8, (60, 95, 190))
            return
        self.rect(x, y, w, h, WHITE, border=highlight or GREY)
        r, s = RANKS[card % 13], card // 13
        colour = SUIT_COLOURS[s]
        self.text(x + 3, y + 3, "10" if r == "T" else r, colour)
        self.suit(x + 9, y + 20, s, scale=2)


class RenderBeforeResetError(NotResetError, OptionError):
    """``render()`` before ``reset()``: a :class:`NotResetError`, and an ``OptionError`` as it was before it."""


def show(render_mode: str | None, started: bool, text, image):
    """What ``render()`` returns for a render mode: ``image()`` for "rgb_array", ``text()`` for "ansi", and for
    "human" the text printed. ``text`` and ``image`` are called only when needed."""
    if render_mode is None:
        raise OptionError("render() needs a render_mode: pass render_mode='ansi', 'human' or 'rgb_array'")
    if not started:
        raise RenderBeforeResetError("render() before reset(): there is no table to show yet; call reset() first")
    if render_mode == "rgb_array":
        return image()
    if render_mode == "human":
        print(text())
        return None
    return text()


def trick_line(leader: int, led: int | None, last_trick: tuple | None, pretty=card_pretty) -> str | None:
    """The current trick ("player_0 led 9♣") or, between tricks, how the last one went; ``pretty`` names a card
    (a game with extra cards, such as Rook's joker, passes its own)."""
    if led is not None:
        return f"trick: player_{leader} led {pretty(led)}"
    if last_trick is not None:
        first, card, follow, winner = last_trick
        return (f"last trick: player_{first} led {pretty(card)}, player_{1 - first} played "
                f"{pretty(follow)}; player_{winner} won")
    return None
