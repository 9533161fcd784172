"""Summit Rush as text, for one seat, one tick at a time (see :mod:`cardzoo.envs.text` for every game's wording).

Summit Rush is played in real time; as text it is turn-paced: every seat is shown the table at the start of each
tick and answers, and the tick is played once every seat has answered. The text of a tick, line by line::

    Since your last move: 7H went onto pile 0; partner turned a stock card onto pile 1: 3D; position 12 turned up: ...
    You are player 0; your pile is pile 0. Clock: 57 moves left (171 s of game time). Round the corner: on.
    Peaks (position card; ## face down, -- gone):
      row 1: 0 ## | 1 ## | 2 ##
      ...
      row 4: 18 7H | 19 -- | ...
    Piles: pile 0 (yours) top 7H, stock 10 left; pile 1 (partner's) top 8C, stock 11 left.
    Cards in the piles: ...
    Last heard: you "I'll turn" (2 moves ago); partner "I need a 9" (just now).      (talking games)
    Legal moves: 1) 7H@0  2) 6S@1  3) turn  4) wait

A move is a face-up peak card and the pile it goes onto (``7H@1``; ``7H`` alone goes onto your pile if it fits
there, else onto the first pile it fits), ``turn`` (your stock onto your pile) or ``wait``. In a talking game a
message from the vocabulary may follow ``>`` (``7H@0 > I need a 9``; short forms such as ``need 9``, ``pile K``,
``taking 12``, ``turn``, ``don't turn`` or ``#N`` too). ``parse`` returns the env's joint action
``message * n_moves + move``. Nobody's actions are in the observation, so "what happened" is what the seat sees
change on the table: the peak cards gone and the piles that took them, the stocks turned, the cards turned up,
the messages heard.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from ..common.cards import RANKS, STANDARD_CARDS, card_pretty
from ..common.errors import MoveError
from ..common.text import CARD_IN_PROSE, Answer, Move, TextView, answer_of, card_aliases, card_code, clean, letters
from ..common.text import squeeze as _squeeze
from . import rules as summit
from .observer import Observer
from .rules import MESSAGES, N_MESSAGES, N_PEAKS, ROW_START, ROWS, Config

_PILE_AFTER = re.compile(r"\s*(?:@|(?:(?:on(?:to)?|to)\s+)?(?:pile|#)\s*)\s*(\d)\b", re.IGNORECASE)
_TURN = re.compile(r"(?<!don't )(?<!dont )\bturn\b(?!\s+(?:up|over))", re.IGNORECASE)
_WAIT = re.compile(r"\bwait(?:s|ing)?\b", re.IGNORECASE)
_SAY_TAG = re.compile(r"\[say\]\s*:?\s*([^\n\[]*)", re.IGNORECASE)


def message_moves(config: Config) -> list[Move]:
    """The messages a player may say (message 0, nothing, left out). Each may be written in full, by a short form
    (its ``code``: ``need 9``, ``pile K``, ``taking 12``, ``turn``, ``don't turn``) or as ``#N``."""
    if not config.talk:
        return []
    out = []
    for m in range(1, N_MESSAGES):
        text = MESSAGES[m]
        if m in (summit.SAY_TURN, summit.SAY_DONT_TURN):
            short = {summit.SAY_TURN: "turn", summit.SAY_DONT_TURN: "don't turn"}[m]
            extra = {"noturn"} if m == summit.SAY_DONT_TURN else set()
        elif m < summit.SAY_TAKING:
            rank = (m - summit.SAY_NEED) % 13
            word = "need" if m < summit.SAY_ON_PILE else "pile"
            short = f"{word} {summit.RANK_NAMES[rank] if rank != 8 else '10'}"
            extra = {word + name for name in (summit.RANK_NAMES[rank].lower(), RANKS[rank].lower())}
        else:
            short = f"taking {m - summit.SAY_TAKING}"
            extra = {f"take{m - summit.SAY_TAKING}"}
        aliases = {_squeeze(letters(text)), _squeeze(letters(short)), f"#{m}", *extra}
        out.append(Move(m, short, text, "message", tuple(sorted(aliases))))
    return out


def seat_names(seat: int, players: int) -> list[str]:
    """What ``seat`` calls each seat: "you", "partner" (two players) or "player N"."""
    return [("you" if p == seat else "partner" if players == 2 else f"player {p}") for p in range(players)]


def peak_moves(peaks: list[str | None], legal: np.ndarray, seat: int, config: Config, every: bool = False,
               names: list[str] | None = None) -> list[Move]:
    """The moves of a tick: each face-up peak card onto each pile it may go to (``every``: onto every pile, legal
    or not), then turn and wait. ``legal`` holds the legal moves (message 0); ``names``: what the seat calls each
    seat, for the labels. A card move's code is the card (``7H``); the text view writes ``7H@0``."""
    players = config.players
    who = names or seat_names(seat, players)
    turn, wait = N_PEAKS * players, N_PEAKS * players + 1
    out = []
    for pos, code in enumerate(peaks):
        if code in (None, "??"):
            continue
        names = card_aliases(code)
        fits = [pile for pile in range(players) if legal[pos * players + pile]]
        default = seat if seat in fits or not fits else fits[0]
        for pile in range(players):
            a = pos * players + pile
            if not (every or legal[a]):
                continue
            aliases = tuple(f"{n}{sep}{pile}" for n in names for sep in ("@", ""))
            if pile == default:
                aliases += names
            where = "your pile" if pile == seat else f"{who[pile]}'s pile"
            out.append(Move(a, code, f"{card_pretty(STANDARD_CARDS[code])} -> {where}", "card", aliases))
    if every or legal[turn]:
        out.append(Move(turn, "turn", "turn your stock", "turn", ("t", "turn", "turnstock", "turnyourstock")))
    if every or legal[wait]:
        out.append(Move(wait, "wait", "wait", "wait", ("w", "wait")))
    return out


def _ago(ticks: int) -> str:
    return "just now" if not ticks else f"{ticks} move{'s' * (ticks != 1)} ago"


class SummitRushText(TextView):
    game = "summit_rush_v0"
    title = "Summit Rush"

    def __init__(self, config: Config, legal_moves: bool = True):
        self.config = config
        self.observer = Observer(config)
        self.observation_size, self.describe_observation = self.observer.size, self.observer.describe
        self.n_moves = config.n_moves
        self.messages = message_moves(config)
        super().__init__(legal_moves)

    def rules(self) -> str:
        c = self.config
        team = ("You play alone (solo)." if c.players == 1 else
                f"{c.players} players, one team: every player moves every tick, all at the same time.")
        clock = ("The game is untimed." if c.ticks is None else
                 f"The clock: {c.ticks} moves of {c.seconds_per_action:g} s each ({c.time_limit:g} s).")
        lines = [
            f"Summit Rush: clear three peaks of cards together before the clock runs out. {team}",
            "The peaks: 28 cards in four rows, positions 0-2 (row 1, the tops) to 18-27 (row 4, face up at the "
            "start). A card is free when no card covers it; a face-down card turns up when both cards covering it "
            "are gone.",
            "Playing: a free card goes onto any player's pile if it is one rank above or below the pile's top card; "
            "suits do not matter. " + ("K and A are neighbours (round the corner)." if c.wrap else
                                        "K and A are not neighbours."),
            f"Stock: each player has {c.stock} stock cards, the first one starting their pile. You may turn your "
            "next stock card onto your own pile at any time, fitting or not. There is no second pass.",
            f"Ticks: one move each per tick. {clock} Two players going for the same card or pile in one tick: one "
            "gets it. Text play is turn-paced: every seat answers each tick.",
            "Winning: all 28 peak cards gone in time; the score is the stock cards left. You lose when time runs "
            "out or when every stock is empty and nothing fits.",
            "Cards are written rank then suit: A, 2-9, T (ten), J, Q, K; C D H S (TS is the ten of spades). ## is "
            "a face-down peak card, -- a gone one.",
            "Answer with one move: a face-up peak card and the pile it goes onto (7H@0; 7H alone goes onto your "
            "pile if it fits, else the first pile it fits), turn or wait (also [play] 7H@0 or {\"move\": \"7H@0\"}).",
        ]
        if c.talk:
            lines.append("Talking: one message may go with any move, after '>' (7H@0 > I need a 9; wait > need 9) or "
                         "as {\"move\": ..., \"message\": ...}. The vocabulary: I'll turn; don't turn; I need a R; "
                         "R on my pile (R: 2-10, Jack, Queen, King, Ace); I'm taking position P (0-27). A message "
                         "is heard from the next tick on.")
        else:
            lines.append("This game is silent: nobody says anything.")
        return "\n".join(lines)

    # ------------------------------------------------------------------ reading
    def who(self, t: dict[str, Any], p: int) -> str:
        return seat_names(t["seat"], self.config.players)[p]

    def start(self, t: dict[str, Any]) -> list[str]:
        return [f"The game starts: your pile is pile {t['seat']}"]

    def since(self, b: dict[str, Any], t: dict[str, Any]) -> list[str]:
        news = []
        turned = [p for p, (old, new) in enumerate(zip(b["stock_left"], t["stock_left"], strict=True)) if new < old]
        for old, new in zip(b["peaks"], t["peaks"], strict=True):
            if old not in (None, "??") and new is None:
                onto = [p for p, top in enumerate(t["piles"]) if top == old]
                where = f"pile {onto[0]}" if onto else "a pile (now covered)"
                news.append(f"{old} went onto {where}")
        for p in turned:
            news.append(f"{'you' if p == t['seat'] else self.who(t, p)} turned a stock card onto pile {p}"
                        + (f": {t['piles'][p]}" if t["piles"][p] not in b["on_piles"] else ""))
        for pos, (old, new) in enumerate(zip(b["peaks"], t["peaks"], strict=True)):
            if old == "??" and new not in (None, "??"):
                news.append(f"position {pos} turned up: {new}")
        for p, heard in enumerate(t["heard"] or []):
            if heard is not None and heard[1] == 0:
                news.append(f"{self.who(t, p)} said \"{heard[0]}\"")
        return news or ["nothing changed on the table"]

    def table(self, t: dict[str, Any]) -> list[str]:
        c = self.config
        clock = "untimed" if t["time_left"] is None else (
            f"{t['time_left']} moves left ({t['time_left'] * c.seconds_per_action:g} s of game time)")
        lines = [f"You are player {t['seat']}; your pile is pile {t['seat']}. Clock: {clock}. "
                 f"Round the corner: {'on' if t['wrap'] else 'off'}.",
                 "Peaks (position card; ## face down, -- gone):"]
        for row, start in enumerate(ROW_START):
            cells = []
            for pos in range(start, start + ROWS[row]):
                card = t["peaks"][pos]
                cells.append(f"{pos} {'--' if card is None else '##' if card == '??' else card}")
            lines.append(f"  row {row + 1}: " + " | ".join(cells))
        piles = "; ".join(
            f"pile {p} ({'yours' if p == t['seat'] else self.who(t, p) + chr(39) + 's'}) top {top}, stock "
            f"{t['stock_left'][p]} left" for p, top in enumerate(t["piles"]))
        lines.append(f"Piles: {piles}.")
        lines.append(f"Cards in the piles: {' '.join(t['on_piles'])}.")
        if t["heard"] is not None:
            heard = [f"{self.who(t, p)} \"{h[0]}\" ({_ago(h[1])})" for p, h in enumerate(t["heard"]) if h]
            lines.append("Last heard: " + ("; ".join(heard) if heard else "nothing yet") + ".")
        return lines

    def moves(self, t: dict[str, Any], mask: np.ndarray) -> list[Move]:
        if mask.shape != (self.config.n_actions,):
            raise ValueError(f"expected a Summit Rush action mask of shape ({self.config.n_actions},) for these "
                             f"options, got {mask.shape}")
        return peak_moves(t["peaks"], mask[: self.n_moves], t["seat"], self.config)

    def prompt(self, t: dict[str, Any]) -> str:
        say = " (and a message after '>', if you like)" if self.config.talk else ""
        return f"Your move: a face-up peak card onto a pile (card@pile), turn or wait{say}."

    # ------------------------------------------------------------------ parsing
    def parse(self, reply: str, action_mask: np.ndarray) -> int:
        if self.current is None:
            return super().parse(reply, action_mask)
        text = clean(reply)
        said = [m.group(1).strip() for m in _SAY_TAG.finditer(text)]
        text = _SAY_TAG.sub(" ", text)
        answer = answer_of(text)
        message = answer.message
        if said:
            if message is not None or len(said) > 1:
                raise MoveError("the reply says several messages: say at most one")
            message = said[0]
        return self.resolve(Answer(answer.move, message, answer.source), np.asarray(action_mask))

    def resolve(self, answer: Answer, mask: np.ndarray) -> int:
        move_text, message_text = answer.move, answer.message
        if message_text is None and ">" in move_text:
            move_text, _, message_text = move_text.partition(">")
        elif message_text is not None and ">" in move_text:
            raise MoveError("the reply has a message both after '>' and in \"message\": say at most one")
        message = 0 if message_text is None or not message_text.strip() else self.message(message_text)
        if message_text is not None and not _squeeze(move_text):
            move_text = "wait"  # a message alone: say it and wait
        moves = mask[: self.n_moves]
        move = self.named(move_text, moves)
        action = message * self.n_moves + move
        if not moves[move]:
            raise MoveError(self.why(move, self.current, mask) + self.hint())
        return self.legal_action(action, mask)

    def message(self, text: str) -> int:
        """The message ``text`` names (full, short form or ``#N``); MoveError if it is not in the vocabulary."""
        if not self.config.talk:
            raise MoveError("this game is silent: nothing can be said (drop the message)")
        core = text.strip().strip("\"'“”`*")
        word = _squeeze(core) if core.startswith("#") else _squeeze(letters(core))
        for m in self.messages:
            if word in m.aliases:
                return m.action
        shown = core if len(core) <= 60 else core[:57] + "..."
        raise MoveError(f"{shown!r} is not a message of the vocabulary (I'll turn; don't turn; I need a R; R on my "
                        "pile; I'm taking position P)")

    def catalog(self, t: dict[str, Any]) -> list[Move]:
        return peak_moves(t["peaks"], self.mask[: self.n_moves], t["seat"], self.config, every=True)

    def written(self, move: Move) -> str:
        return f"{move.code}@{move.action % self.config.players}" if move.kind == "card" else move.code

    def move_name(self, action: int) -> str:
        message, move = divmod(int(action), self.n_moves)
        players = self.config.players
        if move == N_PEAKS * players:
            code = "turn"
        elif move == N_PEAKS * players + 1:
            code = "wait"
        else:
            pos, pile = divmod(move, players)
            card = self.current["peaks"][pos] if self.current is not None else None
            code = f"{card if card not in (None, '??') else 'position ' + str(pos)}@{pile}"
        return code + (f" > {MESSAGES[message]}" if message else "")

    def mentions(self, text: str, t: dict[str, Any], mask: np.ndarray) -> list[int]:
        players = self.config.players
        found: list[tuple[int, int]] = []
        catalog = {self.written(m): m.action for m in self.catalog(t)}
        defaults = {a: m.action for m in self.catalog(t) for a in m.aliases if "@" not in a and a[-1] not in "0123"}
        for m in CARD_IN_PROSE.finditer(text):
            code = card_code(m.group(1), m.group(2))
            pile = _PILE_AFTER.match(text, m.end())
            if pile is not None and int(pile.group(1)) < players:
                action = catalog.get(f"{code}@{pile.group(1)}")
            else:
                action = defaults.get(code.lower())
            if action is not None:
                found.append((m.start(), action))
        found += [(m.start(), N_PEAKS * players) for m in _TURN.finditer(text)]
        found += [(m.start(), N_PEAKS * players + 1) for m in _WAIT.finditer(text)]
        return [a for _, a in sorted(found)]

    def unnamed(self, text: str, t: dict[str, Any]) -> str | None:
        codes = [card_code(m.group(1), m.group(2)) for m in CARD_IN_PROSE.finditer(text)]
        if codes:
            return f"{codes[0]} is not a face-up peak card"
        return None

    def why(self, action: int, t: dict[str, Any], mask: np.ndarray) -> str:
        players = self.config.players
        message, move = divmod(int(action), self.n_moves)
        if move == N_PEAKS * players:
            return "your stock is empty: you cannot turn"
        if move == N_PEAKS * players + 1:
            return "you cannot wait now"
        pos, pile = divmod(move, players)
        card = t["peaks"][pos]
        if card in (None, "??"):
            return f"position {pos} holds no face-up card"
        top = t["piles"][pile]
        if not summit.FITS[t["wrap"]][STANDARD_CARDS[top]] >> STANDARD_CARDS[card] & 1:
            return f"{card} does not fit on pile {pile} (its top is {top}): a card must be one rank above or below"
        return f"{card}@{pile} is not legal now"
