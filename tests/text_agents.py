"""Agents that read only the text of ``cardzoo.envs.text`` views, for the text-sufficiency tests.

Each one reads a view's text with regular expressions (never the observation vector, never the view object's
fields), rebuilds from it the pieces its baseline's decision reads (``simple`` for Rope Team and Summit Rush,
``heuristic`` for Rook) and calls that baseline's decision on them. If the text left out anything the decision needs
(a card played, the face-up card, a pile's top), the decisions would differ from the baseline's on some deal.

The legal moves come from the text's numbered list (``legal_moves=True``) or, when the view does not list them,
from the rules applied to what the text says (``legal_moves=False``).
"""

from __future__ import annotations

import re

from cardzoo.agents.rook_heuristic import RookHeuristic
from cardzoo.agents.rope_team_simple import RopeTeamSimple
from cardzoo.agents.summit_rush_simple import SummitRushSimple, Table
from cardzoo.envs.common.cards import STANDARD_CARDS, SUIT_MASKS, SUIT_NAMES
from cardzoo.envs.rook import rules as rook
from cardzoo.envs.rook.observer import LAYOUT as ROOK_LAYOUT
from cardzoo.envs.rope_team.observer import LAYOUT as ROPE_LAYOUT
from cardzoo.envs.summit_rush import rules as summit
from cardzoo.envs.summit_rush.observer import Observation


class Unreadable(AssertionError):
    """The text lacks a line the agent needs."""


def find(pattern: str, text: str, default: object = Unreadable) -> re.Match | object:
    m = re.search(pattern, text, re.MULTILINE)
    if m is None:
        if default is Unreadable:
            raise Unreadable(f"no match for {pattern!r} in:\n{text}")
        return default
    return m


def card_list(text: str, names=STANDARD_CARDS) -> list[int]:
    return [] if text.strip() == "none" else [names[c] for c in text.split()]


def mask(cards) -> int:
    out = 0
    for c in cards:
        out |= 1 << c
    return out


def listed(text: str) -> list[str]:
    """The moves of the ``Legal moves:`` line, in order."""
    line = find(r"^Legal moves: (.*)$", text).group(1)
    return re.findall(r"\d+\) (.+?)(?=\s{2}\d+\)|$)", line)


# ---------------------------------------------------------------------------- Rope Team
class RopeTeamText:
    """``simple`` from the Rope Team text."""

    def __init__(self):
        self.inner = RopeTeamSimple()

    def act(self, text: str) -> int:
        o = ROPE_LAYOUT.offsets
        trumps_word = find(r"Trumps: (\w+)", text).group(1)
        trumps = SUIT_NAMES.index(trumps_word) if trumps_word in SUIT_NAMES else -1
        ropes = int(find(r"Ropes left: (\d)", text).group(1))
        ridge = re.findall(r"(\d) (\?\?|\w\w)", find(r"^Ridge from your end.*?: (.*)$", text).group(1))
        coin = int(find(r"^Coin: on (\d)\.", text).group(1))
        played = find(r"^Played this deal: you (.*); partner (.*)\.$", text)
        hand = card_list(find(r"^Your hand: (.*)\.$", text).group(1))
        led_m = find(r"^Current trick: (you|partner) led (\w\w)\.$", text, None)
        bits = (mask(hand) << o["hand"] | mask(card_list(played.group(1))) << o["played_self"]
                | mask(card_list(played.group(2))) << o["played_partner"])
        led = None
        if led_m is not None:
            led = STANDARD_CARDS[led_m.group(2)]
            bits |= 1 << (o["led"] + led)
            if led_m.group(1) == "you":
                bits |= 1 << o["led_by_self"]
        for pos, card in ridge:
            if card != "??":
                c, p = STANDARD_CARDS[card], int(pos)
                bits |= 1 << (o["ridge_up"] + p) | 1 << (o["ridge_rank"] + 13 * p + c % 13)
                bits |= 1 << (o["ridge_suit"] + 4 * p + c // 13)
        bits |= 1 << (o["coin"] + coin) | 1 << (o["trumps"] + trumps + 1) | 1 << (o["ropes"] + ropes)
        if "Legal moves:" in text:
            legal = mask(STANDARD_CARDS[m] for m in listed(text))
        else:  # follow suit if able
            legal = mask(hand) if led is None else (mask(hand) & SUIT_MASKS[led // 13] or mask(hand))
        return self.inner.act_bits(bits, legal)


# ---------------------------------------------------------------------------- Rook
ROOK_NAMES = {**rook.NAMES, "Rook": rook.ROOK}
PHASES = {"bidding": rook.BID, "naming trumps": rook.TRUMP, "laying cards aside": rook.DISCARD,
          "playing": rook.PLAY, "drawing": rook.DRAW}


def rook_action(word: str) -> int:
    if word in ROOK_NAMES:
        return ROOK_NAMES[word]
    if word.startswith("bid "):
        return rook.bid_action(int(word[4:]))
    return {"pass": rook.PASS, "up": rook.TAKE_UP, "hidden": rook.TAKE_HIDDEN,
            **{s: rook.TRUMP0 + i for i, s in enumerate(SUIT_NAMES)}}[word]


class RookText:
    """``heuristic`` from the Rook text."""

    def __init__(self):
        self.inner = RookHeuristic()

    def act(self, text: str) -> int:
        o = ROOK_LAYOUT.offsets
        phase = PHASES[find(r"^Round: ([a-z ]+)\.", text).group(1)]
        trumps_word = find(r"Trumps: ([a-z ]+)\.", text).group(1)
        trumps = SUIT_NAMES.index(trumps_word) if trumps_word in SUIT_NAMES else -1
        hand = card_list(find(r"^Your hand: (.*)\.$", text).group(1), ROOK_NAMES)
        bits = mask(hand) << o["hand"] | 1 << (o["phase"] + phase)
        if trumps >= 0:
            bits |= 1 << (o["trumps"] + trumps)
        laid = find(r"Laid aside: ([^.]*)\.", text, None)
        if laid is not None:
            bits |= mask(card_list(laid.group(1), ROOK_NAMES)) << o["discards"]
        face = find(r"^Face-up card on the draw pile: (\S+)\.$", text, None)
        if face is not None:
            bits |= 1 << (o["face_up"] + ROOK_NAMES[face.group(1)])
        known = find(r"^Opponent holds \(you saw them\): (.*)\.$", text, None)
        if known is not None:
            bits |= mask(card_list(known.group(1), ROOK_NAMES)) << o["opp_known"]
        played = find(r"^Played this round: you (.*); opponent (.*)\.$", text, None)
        if played is not None:
            bits |= mask(card_list(played.group(1), ROOK_NAMES)) << o["played_self"]
            bits |= mask(card_list(played.group(2), ROOK_NAMES)) << o["played_opp"]
        tricks = find(r"^Tricks this round: you (\d+) \(\d+ points\), opponent (\d+)", text, None)
        self_tricks, opp_tricks = (0, 0) if tricks is None else (int(tricks.group(1)), int(tricks.group(2)))
        bits |= 1 << (o["tricks_self"] + self_tricks) | 1 << (o["tricks_opp"] + opp_tricks)
        led_m = find(r"^Current trick: (you|opponent) led (\S+)\.$", text, None)
        led = None
        if led_m is not None:
            led = ROOK_NAMES[led_m.group(2)]
            bits |= 1 << (o["led"] + led)
            if led_m.group(1) == "you":
                bits |= 1 << o["led_by_self"]
        if "Legal moves:" in text:
            legal = mask(rook_action(m) for m in listed(text))
        else:
            legal = self.legal(text, phase, mask(hand), led, trumps)
        return self.inner.act_bits(bits, legal)

    @staticmethod
    def legal(text: str, phase: int, hand: int, led: int | None, trumps: int) -> int:
        """The legal moves by the rules, from what the text says."""
        if phase == rook.BID:
            high = find(r"High bid: (\d+)\.", text, None)
            if high is None:
                return rook.BID_ACTIONS_MASK
            above = rook.bid_action(int(high.group(1))) + 1
            return (rook.BID_ACTIONS_MASK >> above << above) | 1 << rook.PASS
        if phase == rook.TRUMP:
            return rook.TRUMP_ACTIONS_MASK
        if phase == rook.DISCARD:
            return hand & ~rook.POINT_MASK or hand
        if phase == rook.DRAW:
            return rook.DRAW_ACTIONS_MASK
        return hand if led is None else (hand & rook.follow_mask(led, trumps) or hand)


# ---------------------------------------------------------------------------- Summit Rush
class SummitRushText(SummitRushSimple):
    """``simple`` from the Summit Rush text (its memory of stock turns included, fed with what the text says)."""

    def act_text(self, text: str) -> int:
        seat = int(find(r"^You are player (\d)", text).group(1))
        wrap = find(r"Round the corner: (on|off)\.", text).group(1) == "on"
        peaks: dict[int, str] = {}
        for line in re.findall(r"^  row \d: (.*)$", text, re.MULTILINE):
            for pos, card in re.findall(r"(\d+) (##|--|\w\w)", line):
                peaks[int(pos)] = card
        assert len(peaks) == summit.N_PEAKS, peaks
        piles = re.findall(r"pile (\d) \([^)]*\) top (\w\w), stock (\d+) left", find(r"^Piles: (.*)\.$", text).group(1))
        on_piles = card_list(find(r"^Cards in the piles: (.*)\.$", text).group(1))
        n = len(piles)
        present = mask(p for p, c in peaks.items() if c != "--")
        up = mask(p for p, c in peaks.items() if c not in ("--", "##"))
        cards = {p: STANDARD_CARDS[c] for p, c in peaks.items() if c not in ("--", "##")}
        tops = tuple(STANDARD_CARDS[top] for _, top, _ in piles)
        public = (present, up, tuple(sorted(cards.items())), tops, mask(on_piles), wrap)
        obs = Observation(piles=n, talk=False, size=0, seat=seat, public=public, wrap=wrap, timed=False,
                          present=present, up=up, cards=cards, tops=tops, on_piles=mask(on_piles), counts=0,
                          count_entries=0, heard=())
        n_moves = summit.N_PEAKS * n + 2
        turn, wait = n_moves - 2, n_moves - 1
        if "Legal moves:" in text:
            legal = 0
            where = {c: p for p, c in peaks.items()}
            for move in listed(text):
                if move in ("turn", "wait"):
                    legal |= 1 << (turn if move == "turn" else wait)
                else:
                    card, pile = move.split("@")
                    legal |= 1 << (where[card] * n + int(pile))
        else:  # a free card onto any pile it fits; turn while the stock lasts; wait
            fits = summit.FITS[wrap]
            legal = 1 << wait | (1 << turn if int(piles[seat][2]) else 0)
            for pos, card in cards.items():
                for p, top in enumerate(tops):
                    if fits[top] >> card & 1:
                        legal |= 1 << (pos * n + p)
        # the body of SummitRushSimple.act_bits, on the table read from the text
        table = Table(obs)
        self._remember(table)
        move, message = self.choose(table, legal, 0, n_moves)
        if not legal >> move & 1:
            move = wait
        self._i_turned = move == turn
        return message * n_moves + move
