"""Ascend's text view and seat view (tests only): what a language seat and the play page see."""

from __future__ import annotations

from typing import Any

import numpy as np

from cardzoo.envs.common.text import Move, TextView
from cardzoo.play.views import SeatView

from . import rules
from .env import SIZE, describe


def _moves(mask) -> list[Move]:
    return [Move(int(a), str(a + 1), f"play {a + 1}", "card", (str(a + 1),)) for a in np.flatnonzero(mask)]


class AscendText(TextView):
    game = "tinygame_v0"
    title = "Ascend"
    observation_size = SIZE
    describe_observation = staticmethod(describe)

    def __init__(self, config: rules.Config, legal_moves: bool = True):
        self.config = config
        super().__init__(legal_moves)

    def rules(self) -> str:
        return "Ascend: play your cards (1 to 6) in turn; the team wins if every card is higher than the last."

    def since(self, before: dict[str, Any], t: dict[str, Any]) -> list[str]:
        return [f"your partner played {t['top'] + 1}"] if t["top"] is not None else []

    def table(self, t: dict[str, Any]) -> list[str]:
        top = "nothing" if t["top"] is None else t["top"] + 1
        return [f"Top card: {top}. Your hand: {', '.join(str(c + 1) for c in t['hand'])}."]

    def moves(self, t: dict[str, Any], mask: np.ndarray) -> list[Move]:
        return _moves(mask)

    def prompt(self, t: dict[str, Any]) -> str:
        return "Name a card of your hand."

    def catalog(self, t: dict[str, Any]) -> list[Move]:
        return _moves(np.ones(rules.N_CARDS))

    def mentions(self, text: str, t: dict[str, Any], mask: np.ndarray) -> list[int]:
        return [int(w) - 1 for w in text.split() if w.isdigit() and 1 <= int(w) <= rules.N_CARDS and mask[int(w) - 1]]

    def why(self, action: int, t: dict[str, Any], mask: np.ndarray) -> str:
        return f"{action + 1} is not in your hand"

    def move_name(self, action: int) -> str:
        return str(action + 1)


class AscendView(SeatView):
    game = "tinygame_v0"

    @classmethod
    def rules(cls) -> str:
        return "Ascend: each card higher than the last. The table: the top card, your hand."

    def __init__(self, seat: int):
        super().__init__(seat, ["you", "partner"] if seat == 0 else ["partner", "you"])

    def observe(self, observation: np.ndarray, mask: np.ndarray) -> None:
        t = describe(observation)
        self.table = {"hand": [c + 1 for c in t["hand"]], "top": None if t["top"] is None else t["top"] + 1}
        self.legal = _moves(mask)

    def saw(self, seat: int, action: int) -> None:
        self._say(f"{self.who(seat)} played {action + 1}")

    def table_json(self) -> dict[str, Any]:
        return dict(self.table)

    def text(self) -> str:
        return f"top {self.table.get('top')}, your hand {self.table.get('hand')}"
