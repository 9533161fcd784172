"""Rook for Two as text, for one seat (see :mod:`cardzoo.envs.text` for the wording of every game).

The text of a decision, line by line::

    Since your last move: you led AH; opponent played 5H; you won the trick (15 points); opponent got the ...
    Round: playing. Totals: you 0, opponent 0 (the game is to 500). You dealt.
    Bids: you 50; opponent 55, 60 (passed). Contract: 60 by opponent. Trumps: hearts.
    Face-up card on the draw pile: 9C.
    Tricks this round: you 1 (15 points), opponent 0 (0 points).
    Played this round: you AH; opponent 5H.
    Current trick: opponent led 7D.              (or: You lead this trick.)
    Your hand: 4C 9C ...
    Opponent holds (you saw them): 9H.
    Legal moves: 1) 4D  2) KD                    (or, without the list: what to do)

Cards are written rank then suit (``TS`` is the ten of spades); the Rook is ``Rook``. Moves: a card, ``bid 75``,
``pass``, a suit to name trumps (``hearts``), ``up`` (take the face-up card) or ``hidden``.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from ..common.cards import SUIT_NAMES, SUIT_SYMBOLS, SUITS
from ..common.errors import MoveError
from ..common.text import CARD_IN_PROSE, Move, TextView, card_aliases, card_code, cards_in
from . import rules as rook
from .observer import LAYOUT, describe
from .rules import BID0, BID_AMOUNTS, DECK, MAX_BID, MIN_BID, N_ACTIONS, PASS, ROOK, TAKE_HIDDEN, TAKE_UP, TRUMP0

PHASE_WORDS = {"bid": "bidding", "trump": "naming trumps", "discard": "laying cards aside", "play": "playing",
               "draw": "drawing", "over": "over"}
ASKED = {"bid": "bid (bid 50 to bid 140, in fives, above the high bid) or pass",
         "trump": "name trumps: clubs, diamonds, hearts or spades",
         "discard": "lay one card of your hand aside (point cards only if you hold nothing else)",
         "play": "play a card from your hand", "draw": "take the face-up card (up) or the hidden card (hidden)",
         "over": "nothing: the game is over"}
KIND_PHASE = {"card": ("play", "discard"), "bid": ("bid",), "pass": ("bid",), "trumps": ("trump",),
              "draw": ("draw",)}


def name(code: str) -> str:
    """A card as the view writes it: ``TS``; the Rook as ``Rook``."""
    return "Rook" if code == rook.ROOK_NAME else code


def _cards(codes: list[str]) -> str:
    return " ".join(name(c) for c in codes) or "none"


def rook_move(a: int, face_up: str | None = None) -> Move:
    """The move of action ``a`` (``face_up``: the face-up card's code, for the label of taking it). A card's code
    is the env's card string (``XR`` for the Rook); the text view writes the Rook as ``Rook``."""
    if a < rook.N_CARDS:
        code = rook.card_name(a)
        return Move(a, code, rook.card_pretty(a), "card", card_aliases(code))
    if a < PASS:
        amount = BID_AMOUNTS[a - BID0]
        return Move(a, f"bid {amount}", f"bid {amount}", "bid", (f"bid{amount}", str(amount), f"b{amount}"))
    if a == PASS:
        return Move(a, "pass", "pass", "pass", ("pass", "p"))
    if a < TAKE_UP:
        suit = a - TRUMP0
        suit_name = SUIT_NAMES[suit]
        return Move(a, suit_name, f"{SUIT_SYMBOLS[suit]} {suit_name}", "trumps",
                    (suit_name, suit_name[:-1], SUITS[suit].lower(), SUIT_SYMBOLS[suit], f"trumps{suit_name}",
                     f"{suit_name}trumps", f"trumps{suit_name[:-1]}"))
    if a == TAKE_UP:
        label = ("take the face-up card" if face_up is None else
                 f"take the face-up {rook.card_pretty(rook.NAMES[face_up])}")
        return Move(a, "up", label, "draw", ("up", "faceup", "takeup", "takethefaceupcard", "takefaceup"))
    return Move(a, "hidden", "take the hidden card", "draw",
                ("hidden", "down", "takehidden", "takethehiddencard", "hiddencard"))


CATALOG = [rook_move(a) for a in (*sorted(DECK), *range(BID0, N_ACTIONS))]
_BID = re.compile(r"\bbid(?:s|ding)?\s*(?:of\s*)?(\d{1,4})\b", re.IGNORECASE)
_PASS = re.compile(r"\bpass(?:es|ing)?\b", re.IGNORECASE)
_SUIT = re.compile(r"\b(club|diamond|heart|spade)s?\b", re.IGNORECASE)
_ROOK = re.compile(r"\b(?:the\s+)?rook\b(?!\s+for\s+two)", re.IGNORECASE)
_UP = re.compile(r"\bface[- ]?up\b|\btake\s+(?:it\s+|the\s+card\s+)?up\b", re.IGNORECASE)
_HIDDEN = re.compile(r"\bhidden\b", re.IGNORECASE)


class RookText(TextView):
    game = "rook_v0"
    title = "Rook for Two"
    observation_size = LAYOUT.size
    describe_observation = staticmethod(describe)

    def __init__(self, config: rook.Config, legal_moves: bool = True):
        self.config = config
        super().__init__(legal_moves)

    def rules(self) -> str:
        c = self.config
        goal = (f"Win by reaching {c.target_score} points first." if c.rounds is None else
                f"This game is {c.rounds} round{'s' * (c.rounds != 1)}: score more points than your opponent.")
        return "\n".join([
            f"Rook for Two: you against one opponent, 45 cards (4 to A of four suits) and the Rook. {goal}",
            "Deal: three cards face down to the Nest, eleven to each player, twenty to the draw pile.",
            f"Bidding: from {MIN_BID} to {MAX_BID} in fives, each bid higher than the last, until one player passes "
            f"or bids {MAX_BID}; the player who did not deal opens and the opening bid cannot be a pass.",
            "Trumps and the Nest: the bid winner names trumps, takes the Nest and lays three cards aside (point "
            "cards only if nothing else is left).",
            "Tricks: the bid winner leads. Follow the suit led if able, else play anything. The higher trump wins, "
            "else the higher card of the suit led. The Rook is the lowest trump; it counts as a trump for following.",
            "Draw: before each trick the top of the draw pile is turned face up; the trick's winner takes that card "
            "(up) or the hidden card beneath (hidden), the loser gets the other.",
            "Scoring: 5s are 5 points, 10s and Aces 10, the Rook 20, most tricks 20: 140 a round. A bidder who makes "
            "her bid adds her points, one who falls short loses the bid's amount; the other player adds hers.",
            "Cards are written rank then suit: 4-9, T (ten), J, Q, K, A; C D H S (TS is the ten of spades); the "
            "Rook is Rook.",
            "Answer with one move: a card (QS), bid 75, pass, a suit to name trumps (hearts), up or hidden "
            "(also [play] QS or {\"move\": \"QS\"}).",
        ])

    # ------------------------------------------------------------------ reading
    def start(self, t: dict[str, Any]) -> list[str]:
        return [f"A round is dealt: {'your opponent opens' if t['self_dealt'] else 'you open'} the bidding"]

    def since(self, b: dict[str, Any], t: dict[str, Any]) -> list[str]:
        news: list[str] = []
        new_round = (t["total_self"], t["total_opp"]) != (b["total_self"], b["total_opp"]) or \
            len(t["played_self"]) < len(b["played_self"]) or (t["phase"] == "bid" and b["phase"] != "bid")
        if new_round:
            if b["led"] is not None and not b["led_by_self"] and len(b["hand"]) == 1:
                news.append(f"you played {name(b['hand'][0])} on opponent's {name(b['led'])}")
            ds, do = t["total_self"] - b["total_self"], t["total_opp"] - b["total_opp"]
            news.append(f"the round is scored: you {ds:+d}, opponent {do:+d}; totals you {t['total_self']}, "
                        f"opponent {t['total_opp']}")
            news.append(f"a new round is dealt: {'your opponent opens' if t['self_dealt'] else 'you open'} the "
                        "bidding")
            return news
        for who, key, passed in (("you", "bids_self", "passed_self"), ("opponent", "bids_opp", "passed_opp")):
            for amount in t[key]:
                if amount not in b[key]:
                    news.append(f"{who} bid {amount}")
            if t[passed] and not b[passed]:
                news.append(f"{who} passed")
        if t["trumps"] and not b["trumps"]:
            who = "you" if t["bidder"] == "self" else "opponent"
            news.append(f"{who} named {t['trumps']} trumps and took the Nest")
        laid = [c for c in t["discards"] if c not in b["discards"]]
        if laid:
            news.append(f"you laid aside {_cards(laid)}")
        if t["bidder"] == "opp" and b["phase"] in ("bid", "trump", "discard") and t["phase"] in ("play", "draw"):
            news.append("opponent laid three cards aside")
        news += self._plays(b, t)
        face = b["face_up"]
        if face is not None and face != t["face_up"] and b["phase"] in ("play", "draw"):
            got_it = "you" if face in t["hand"] or face in t["played_self"] else "opponent"
            news.append(f"{got_it} got the face-up {name(face)}; {'opponent' if got_it == 'you' else 'you'} got "
                        "the hidden card")
            hidden = [c for c in t["hand"] if c not in b["hand"] and c != face]
            if got_it == "opponent" and hidden:
                news[-1] += f" ({_cards(hidden)})"
        lead = t["led"] is not None and not t["led_by_self"] and (b["led"] != t["led"] or b["led_by_self"])
        if lead:
            news.append(f"opponent led {name(t['led'])}")
        return news

    @staticmethod
    def _plays(b: dict[str, Any], t: dict[str, Any]) -> list[str]:
        """The cards played and the trick won between two observations of one round."""
        mine = [c for c in t["played_self"] if c not in b["played_self"]]
        theirs = [c for c in t["played_opp"] if c not in b["played_opp"]]
        if t["led"] is not None and not t["led_by_self"]:
            theirs = [c for c in theirs if c != t["led"]]
        news = []
        if b["led"] is not None and not b["led_by_self"] and len(mine) == 1 and not theirs:
            news.append(f"you played {name(mine[0])} on opponent's {name(b['led'])}")
        elif b["led"] is None and len(mine) == 1 and len(theirs) == 1:
            news.append(f"you led {name(mine[0])}; opponent played {name(theirs[0])}")
        elif mine or theirs:
            news.append(f"cards played: you {_cards(mine)}; opponent {_cards(theirs)}")
        for who, tricks, points in (("you", "tricks_self", "points_self"), ("opponent", "tricks_opp", "points_opp")):
            if t[tricks] > b[tricks]:
                news.append(f"{who} won the trick ({t[points] - b[points]} points)")
        return news

    def table(self, t: dict[str, Any]) -> list[str]:
        c = self.config
        goal = f"the game is to {c.target_score}" if c.rounds is None else \
            f"{c.rounds} round{'s' * (c.rounds != 1)}"
        bids = (f"you {', '.join(map(str, t['bids_self'])) or 'none'}{' (passed)' if t['passed_self'] else ''}; "
                f"opponent {', '.join(map(str, t['bids_opp'])) or 'none'}{' (passed)' if t['passed_opp'] else ''}")
        if t["bidder"]:
            contract = f" Contract: {t['high_bid']} by {'you' if t['bidder'] == 'self' else 'opponent'}."
        elif t["high_bid"] is not None:
            contract = f" High bid: {t['high_bid']}."
        else:
            contract = ""
        lines = [
            f"Round: {PHASE_WORDS[t['phase']]}. Totals: you {t['total_self']}, opponent {t['total_opp']} ({goal}). "
            f"{'You' if t['self_dealt'] else 'Opponent'} dealt.",
            f"Bids: {bids}.{contract} Trumps: {t['trumps'] or 'not named'}.",
        ]
        if t["nest"]:
            lines.append(f"The Nest you took: {_cards(t['nest'])}. Laid aside: {_cards(t['discards'])}.")
        if t["face_up"]:
            lines.append(f"Face-up card on the draw pile: {name(t['face_up'])}.")
        if t["phase"] in ("play", "draw"):
            lines.append(f"Tricks this round: you {t['tricks_self']} ({t['points_self']} points), opponent "
                         f"{t['tricks_opp']} ({t['points_opp']} points).")
            lines.append(f"Played this round: you {_cards(t['played_self'])}; opponent {_cards(t['played_opp'])}.")
        if t["led"] is not None:
            lines.append(f"Current trick: {'you' if t['led_by_self'] else 'opponent'} led {name(t['led'])}.")
        elif t["phase"] == "play" and t["self_to_move"]:
            lines.append("You lead this trick.")
        lines.append(f"Your hand: {_cards(t['hand'])}.")
        # Both hold the same number of cards but for the current trick's card and, while the bid winner lays cards
        # aside, the Nest (unknown when the opponent is laying aside: no count then).
        if t["phase"] != "discard" or t["bidder"] == "self":
            led_by = None if t["led"] is None else t["led_by_self"]
            left = len(t["hand"]) - len(t["nest"]) + len(t["discards"]) + (led_by is True) - (led_by is False)
            lines.append(f"Opponent's hand: {left} card{'s' * (left != 1)}.")
        if t["opp_known"]:
            lines.append(f"Opponent holds (you saw them): {_cards(t['opp_known'])}.")
        if t["self_known"]:
            lines.append(f"Opponent knows you hold: {_cards(t['self_known'])}.")
        return lines

    def moves(self, t: dict[str, Any], mask: np.ndarray) -> list[Move]:
        if mask.shape != (N_ACTIONS,):
            raise ValueError(f"expected a Rook action mask of shape ({N_ACTIONS},), got {mask.shape}")
        return [rook_move(int(a), t["face_up"]) for a in np.flatnonzero(mask)]

    def prompt(self, t: dict[str, Any]) -> str:
        return f"Your move ({PHASE_WORDS[t['phase']]}): {ASKED[t['phase']]}."

    # ------------------------------------------------------------------ parsing
    def catalog(self, t: dict[str, Any]) -> list[Move]:
        return CATALOG

    def move_name(self, action: int) -> str:
        return self.written(rook_move(int(action)))

    def written(self, move: Move) -> str:
        return name(move.code) if move.kind == "card" else move.code

    def mentions(self, text: str, t: dict[str, Any], mask: np.ndarray) -> list[int]:
        kinds = {rook_move(int(a)).kind for a in np.flatnonzero(mask)}
        found: list[tuple[int, int]] = []  # (where, action)
        if "card" in kinds:
            found += [(m.start(), rook.NAMES.get(card_code(m.group(1), m.group(2)), -1))
                      for m in CARD_IN_PROSE.finditer(text)]
            found += [(m.start(), ROOK) for m in _ROOK.finditer(text)]
        if "bid" in kinds:
            for m in _BID.finditer(text):
                amount = int(m.group(1))
                if amount not in BID_AMOUNTS:
                    raise MoveError(f"{amount} is not a bid: bids are {MIN_BID} to {MAX_BID} in steps of 5")
                found.append((m.start(), rook.bid_action(amount)))
        if "pass" in kinds:
            found += [(m.start(), PASS) for m in _PASS.finditer(text)]
        if "trumps" in kinds:
            found += [(m.start(), TRUMP0 + SUIT_NAMES.index(m.group(1).lower() + "s")) for m in _SUIT.finditer(text)]
        if "draw" in kinds:
            found += [(m.start(), TAKE_UP) for m in _UP.finditer(text)]
            found += [(m.start(), TAKE_HIDDEN) for m in _HIDDEN.finditer(text)]
        for _, action in found:
            if action < 0:
                raise MoveError("the 2s and 3s are not in the Rook deck (it has 4 to A of each suit and the Rook)")
        return [a for _, a in sorted(found)]

    def unnamed(self, text: str, t: dict[str, Any]) -> str | None:
        codes = cards_in(text)
        if codes and all(code not in rook.NAMES for code in codes):
            return "the 2s and 3s are not in the Rook deck (it has 4 to A of each suit and the Rook)"
        amount = text.strip().lower().removeprefix("bid").strip()
        if amount.isdigit() and t["phase"] == "bid":
            return f"{amount} is not a bid: bids are {MIN_BID} to {MAX_BID} in steps of 5"
        return None

    def why(self, action: int, t: dict[str, Any], mask: np.ndarray) -> str:
        phase = t["phase"]
        if not 0 <= action < N_ACTIONS:
            return f"action {action} is not a move"
        move = rook_move(action)
        if phase not in KIND_PHASE[move.kind]:
            return f"{self.written(move)} is not a move now: it is time to {ASKED[phase]}"
        if move.kind == "card":
            move = Move(action, name(move.code), move.label, move.kind)
            code = rook.card_name(action)
            if code not in t["hand"]:
                if code in t["played_self"]:
                    return f"{move.code} is not in your hand: you played it this round"
                if code in t["played_opp"]:
                    return f"{move.code} is not your card: your opponent played it this round"
                if code in t["opp_known"]:
                    return f"{move.code} is not your card: your opponent holds it"
                if code == t["face_up"]:
                    return f"{move.code} is not in your hand: it is the face-up card of the draw pile"
                return f"{move.code} is not in your hand"
            if phase == "discard":
                return f"{move.code} is a point card: lay point cards aside only when you hold nothing else"
            led = t["led"]
            if led is not None:
                trumps = -1 if t["trumps"] is None else SUIT_NAMES.index(t["trumps"])
                led_suit = rook.effective_suit(rook.NAMES[led], trumps)
                return (f"you must follow suit: {name(led)} was led and you hold {SUIT_NAMES[led_suit]}"
                        + (" (the Rook is a trump)" if led_suit == trumps else ""))
            return f"{move.code} is not legal now"
        if move.kind == "bid":
            amount = BID_AMOUNTS[action - BID0]
            high = t["high_bid"]
            if high is not None and amount <= high:
                return f"bid too low: the high bid is {high}; bid at least {high + 5} or pass"
            return f"bid {amount} is not legal now"
        if move.kind == "pass":
            return f"the opening bid cannot be a pass: bid at least {MIN_BID}"
        return f"{move.code} is not legal now"
