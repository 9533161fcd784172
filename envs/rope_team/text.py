"""Rope Team as text, for one seat (see :mod:`cardzoo.envs.text` for the wording of every game).

The text of a decision, line by line::

    Since your last move: you led QS; partner played 3S; you won the trick (2 steps); the coin moved from 4 to 2.
    Deal 1 of 3, trick 2 of 13. Trumps: none. Ropes left: 1.
    Ridge from your end (0) to your partner's end (8): 0 ?? | 1 ?? | 2 ?? | 3 ?? | 4 KC | 5 ?? | 6 7H | ...
    Coin: on 6.
    Played this deal: you QS; partner 3S.
    Current trick: partner led 9D.            (or: You lead this trick.)
    Your hand: 2C 5C 9C ...
    Partner's hand: 12 cards, hidden.         (open hands: the cards)
    Legal moves: 1) 2D  2) 9D                 (or, without the list: what to play)

Cards are written rank then suit (``TS`` is the ten of spades); ``??`` is a face-down ridge card.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..common.cards import CARD_NAMES, STANDARD_CARDS, SUIT_NAMES, card_pretty
from ..common.text import Move, TextView, card_aliases, cards_in
from .observer import LAYOUT, describe
from .rules import CAMP, HAND, RIDGE, STEPS, TRICKS_PER_DEAL, Config, trick_winner

# Every card as a move (the terminal and the browser show these too).
CARDS = [Move(c, CARD_NAMES[c], card_pretty(c), "card", card_aliases(CARD_NAMES[c])) for c in range(52)]


def _cards(names: list[str]) -> str:
    return " ".join(names) or "none"


def _trumps(name: str | None) -> int:
    return -1 if name is None else SUIT_NAMES.index(name)


class RopeTeamText(TextView):
    game = "rope_team_v0"
    title = "Rope Team"
    observation_size = LAYOUT.size
    describe_observation = staticmethod(describe)

    def __init__(self, config: Config, legal_moves: bool = True):
        self.config = config
        super().__init__(legal_moves)

    def rules(self) -> str:
        c = self.config
        ropes = f"{c.ropes} safety rope{'s' * (c.ropes != 1)}" if c.ropes else "no safety rope"
        trumps = ("Trumps: none at first; each ridge card the coin turns up makes its suit trumps (the camp never "
                  "does)." if c.trumps else "Trumps: none, ever (this level has no trumps).")
        hands = ("Open hands: each of you sees the other's hand." if c.open_hands else
                 "You see only your own hand; nobody talks.")
        return "\n".join([
            "Rope Team: you and your partner are one team. Win together by turning up all eight face-down cards of "
            "the ridge.",
            f"The ridge: nine cards in a row, position 0 at your end to 8 at your partner's end; the camp ({CAMP}) "
            "is face up and the coin starts on it.",
            "Tricks: the leader plays any card; the other must follow suit if able. The higher trump wins, else the "
            "higher card of the suit led. The winner leads next.",
            "Steps: 2-7 pull 0 steps, 8-J pull 1, Q-A pull 2. After each trick the winner pulls the coin towards "
            "their own end (you: towards 0) by the steps of both cards. A face-down card the coin stops on turns "
            "up; cards it passes stay down.",
            trumps,
            f"Falling: a pull past an end loses the game unless a safety rope is left (you start with {ropes}): "
            "it is spent and the coin stops on the end card.",
            f"Deals: {TRICKS_PER_DEAL} cards each and {TRICKS_PER_DEAL} tricks a deal, at most {c.max_deals} "
            f"deal{'s' * (c.max_deals != 1)}; the ridge, coin, trumps and ropes carry over. {hands}",
            "Cards are written rank then suit: 2-9, T (ten), J, Q, K, A; C D H S (TS is the ten of spades). "
            "?? is a face-down ridge card.",
            "Answer with one card, e.g. QS (also 10h, th, [play] QS or {\"move\": \"QS\"}).",
        ])

    # ------------------------------------------------------------------ reading
    def start(self, t: dict[str, Any]) -> list[str]:
        return [f"Deal {t['deal']} is dealt: " + ("you lead" if t["self_leads"] else "your partner leads")]

    def since(self, b: dict[str, Any], t: dict[str, Any]) -> list[str]:
        news: list[str] = []
        if t["deal"] == b["deal"]:
            mine = [c for c in t["played_self"] if c not in b["played_self"]]
            theirs = [c for c in t["played_partner"] if c not in b["played_partner"]]
            news += self._tricks(b, t, mine, theirs)
            lead = t["led"] is not None and not t["led_by_self"] and (b["led"] != t["led"] or b["led_by_self"])
        else:
            lead = False
            mine = list(b["hand"])
            if b["led"] is not None and not b["led_by_self"] and len(mine) == 1:
                news.append(f"you played {mine[0]} on partner's {b['led']}")
                news.append(self._trick_result(b["led"], mine[0], False, b["trumps"]))
            else:  # the partner's reply was played after the seat's last observation of the deal
                news.append(f"you led {_cards(mine)}; your partner's reply was not seen")
            news.append(f"deal {b['deal']} ended; deal {t['deal']} is dealt: "
                        + ("you lead" if t["self_leads"] else "your partner leads"))
        if t["coin"] != b["coin"]:
            news.append(f"the coin moved from {b['coin']} to {t['coin']}")
        if t["ropes"] < b["ropes"]:
            news.append(f"a safety rope caught the coin ({t['ropes']} left)")
        for pos, (old, new) in enumerate(zip(b["ridge"], t["ridge"], strict=True)):
            if old == "??" and new != "??":
                trumps = f" ({t['trumps']} are trumps now)" if t["trumps_rule"] else ""
                news.append(f"ridge card {pos} turned up: {new}{trumps}")
        if lead:
            news.append(f"partner led {t['led']}")
        return [n for n in news if n]

    def _tricks(self, b: dict[str, Any], t: dict[str, Any], mine: list[str], theirs: list[str]) -> list[str]:
        """The plays and tricks between two observations of one deal, in order."""
        news = []
        partner_leads_now = t["led"] is not None and not t["led_by_self"]
        replies = [c for c in theirs if not (partner_leads_now and c == t["led"])]
        if len(mine) == 1 and len(replies) <= 1:
            if b["led"] is not None and not b["led_by_self"]:  # the seat followed the partner's lead
                news.append(f"you played {mine[0]} on partner's {b['led']}")
                news.append(self._trick_result(b["led"], mine[0], False, b["trumps"]))
            elif replies:  # the seat led, the partner replied
                news.append(f"you led {mine[0]}; partner played {replies[0]}")
                news.append(self._trick_result(mine[0], replies[0], True, b["trumps"]))
            else:
                news.append(f"you led {mine[0]}")
        elif mine or replies:
            news.append(f"cards played: you {_cards(mine)}; partner {_cards(replies)}")
        return news

    @staticmethod
    def _trick_result(led: str, second: str, self_led: bool, trumps: str | None) -> str:
        led_wins = trick_winner(STANDARD_CARDS[led], STANDARD_CARDS[second], _trumps(trumps))
        steps = STEPS[STANDARD_CARDS[led]] + STEPS[STANDARD_CARDS[second]]
        winner = "you" if led_wins == self_led else "partner"
        return f"{winner} won the trick ({steps} step{'s' * (steps != 1)})"

    def table(self, t: dict[str, Any]) -> list[str]:
        c = self.config
        last = " (the last)" if t["last_deal"] else ""
        trumps = t["trumps"] or ("none" if t["trumps_rule"] else "none on this level")
        ridge = " | ".join(f"{pos} {card}" for pos, card in enumerate(t["ridge"]))
        lines = [
            f"Deal {t['deal']} of {c.max_deals}{last}, trick {t['trick'] + 1} of {TRICKS_PER_DEAL}. "
            f"Trumps: {trumps}. Ropes left: {t['ropes']}.",
            f"Ridge from your end (0) to your partner's end ({RIDGE - 1}): {ridge}",
            f"Coin: on {t['coin']}.",
            f"Played this deal: you {_cards(t['played_self'])}; partner {_cards(t['played_partner'])}.",
        ]
        if t["led"] is not None:
            lines.append(f"Current trick: {'you' if t['led_by_self'] else 'partner'} led {t['led']}.")
        elif t["self_to_move"]:
            lines.append("You lead this trick.")
        lines.append(f"Your hand: {_cards(t['hand'])}.")
        if t["partner_hand"] is not None:
            lines.append(f"Partner's hand: {_cards(t['partner_hand'])}.")
        else:
            left = HAND - len(t["played_partner"])
            lines.append(f"Partner's hand: {left} card{'s' * (left != 1)}, hidden.")
        return lines

    def moves(self, t: dict[str, Any], mask: np.ndarray) -> list[Move]:
        if mask.shape != (52,):
            raise ValueError(f"expected a Rope Team action mask of shape (52,), got {mask.shape}")
        return [CARDS[int(c)] for c in np.flatnonzero(mask)]

    def prompt(self, t: dict[str, Any]) -> str:
        if t["led"] is not None and not t["led_by_self"]:
            return "Your move: play a card from your hand (follow the suit led if you can)."
        return "Your move: lead a card from your hand."

    # ------------------------------------------------------------------ parsing
    def catalog(self, t: dict[str, Any]) -> list[Move]:
        return CARDS

    def mentions(self, text: str, t: dict[str, Any], mask: np.ndarray) -> list[int]:
        return [STANDARD_CARDS[code] for code in cards_in(text)]

    def move_name(self, action: int) -> str:
        return CARD_NAMES[action]

    def why(self, action: int, t: dict[str, Any], mask: np.ndarray) -> str:
        if not 0 <= action < 52:
            return f"action {action} is not a card"
        name = CARD_NAMES[action]
        if name not in t["hand"]:
            if name in t["played_self"]:
                return f"{name} is not in your hand: you played it this deal"
            if name in t["played_partner"]:
                return f"{name} is not your card: your partner played it this deal"
            if name in t["ridge"]:
                return f"{name} is not your card: it is on the ridge"
            return f"{name} is not in your hand"
        led = t["led"]
        if led is not None and led[1] != name[1]:
            suit = SUIT_NAMES["CDHS".index(led[1])]
            return f"you must follow suit: {led} was led and you hold {suit}"
        return f"{name} is not legal now"
