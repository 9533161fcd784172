"""The parts every game's text view shares: moves as people name them, and reading a reply back into a move.

A move has one name (``Move.code``: ``QS``, ``bid 75``, ``7H@1``) and the aliases a player may type or write
instead (any case, spaces ignored: ``qs``, ``10h``/``th`` for a ten, a suit symbol for its letter). The terminal
seat, the browser and the text views of :mod:`cardzoo.envs.text` all name and read moves with these, so there is
one way to do both.

Reading a reply (:meth:`TextView.parse`) forgives form, never content. In order:

1. the reply must be a string of at most ``MAX_REPLY`` characters (a huge reply is refused, not scanned); control
   characters count as spaces and markup is plain text (``<b>QS</b>`` names ``QS``; nothing is ever rendered);
2. a JSON object anywhere in the reply with a ``"move"`` (or ``"action"``) key is the answer: its value is read as
   below (Summit Rush also reads a ``"message"`` key);
3. else a tag then the move, ``[play] QS`` (tags: play, move, action, bid, answer, choice, final), or a line
   ``Move: QS`` (also ``Answer:``, ``Final answer:``, ``Action:``; the last such line counts);
4. else a bracketed answer: ``[QS]``, ``[bid 75]``;
5. else the whole reply.

A reasoning model's ``<think>...</think>`` part is dropped first: only what follows it is the reply.

The text found is then one of: a move's name or alias exactly (``QS``, ``10h``, ``bid 75``, ``pass``); a number
from the list of legal moves when the view lists them; or prose that names exactly one move of the kinds legal now
(``I'll lead the QS.``). Cards in prose are written with an upper-case rank letter or a digit (``QS``, ``Qs``,
``10h``), so the words "as" or "ah" are not read as cards. A reply that names no move, several moves, or a move that
is not legal raises :class:`~cardzoo.envs.common.errors.MoveError` whose message says why.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .cards import RANKS, SUIT_SYMBOLS, SUITS
from .errors import MoveError, NotResetError

MAX_REPLY = 4000  # characters of a reply read at most: a longer one is refused (a model that rambles, an attack)
TAGS = ("play", "move", "action", "bid", "answer", "choice", "final")


# ---------------------------------------------------------------------------- moves as people name them
@dataclass(frozen=True)
class Move:
    """One move: its action, a short code (``QS``, ``bid 75``), a label for people and what may be typed."""

    action: int
    code: str
    label: str
    kind: str  # card, bid, pass, trumps, draw, turn, wait, message
    aliases: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"action": self.action, "code": self.code, "label": self.label, "kind": self.kind}


def squeeze(text: str) -> str:
    """Typed text as it is matched: lower case, no spaces (``"10 H"`` and ``"10h"`` are the same)."""
    return "".join(text.lower().split())


def letters(text: str) -> str:
    """``text`` without punctuation ("don't turn" is "dont turn")."""
    return "".join(ch for ch in text if ch.isalnum() or ch.isspace())


def card_aliases(code: str) -> tuple[str, ...]:
    """What a player may type for a card: ``qs``; ``th``/``10h`` for a ten; a suit symbol for the letter. The Rook
    (``XR``) is ``xr`` or ``rook``."""
    if code == "XR":
        return ("xr", "rook")
    rank, suit = code[0].lower(), code[1]
    ranks = (rank, "10") if rank == "t" else (rank,)
    return tuple(r + s for r in ranks for s in (suit.lower(), SUIT_SYMBOLS[SUITS.index(suit)]))


def pick(moves: list[Move], typed: str) -> Move | None:
    """The move ``typed`` names: its number in the list (from 1) or one of its aliases; None if none matches."""
    text = squeeze(typed)
    if text.isdigit() and 1 <= int(text) <= len(moves):
        return moves[int(text) - 1]
    return next((m for m in moves if text in m.aliases), None)


# A card in prose: a digit rank in any case, a letter rank in upper case (so "as" and "ah" stay words), then a suit
# letter or symbol; "10" is a ten. Group 1 is the rank, group 2 the suit.
CARD_IN_PROSE = re.compile(r"(?<![\w@])(10|[2-9TJQKA]|[tjqka](?=[♣♦♥♠]))\s?([CDHScdhs♣♦♥♠])(?![\w])")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff]")
_BRACKETS = re.compile(r"\[([^\[\]\n]{1,80})\]")
_TAGGED = re.compile(r"\[(" + "|".join(TAGS) + r")\]\s*:?\s*([^\n]*)", re.IGNORECASE)
_ANSWER_LINE = re.compile(r"^\W*(?:final\s+answer|answer|my\s+move|move|action)\W*\s*[:=]\s*(\S[^\n]*)$",
                          re.IGNORECASE | re.MULTILINE)
_THINK = re.compile(r"<think>.*?(?:</think>|$)", re.IGNORECASE | re.DOTALL)
_EDGES = " \t\n.,;:!?\"'`*_()<>“”‘’"


def card_code(rank: str, suit: str) -> str:
    """The code (``TS``) of a card written with rank ``rank`` (``10``, ``t``, ``Q``) and suit ``suit`` (letter or
    symbol)."""
    r = "T" if rank in ("10", "t", "T") else rank.upper()
    s = suit.upper() if suit.upper() in SUITS else SUITS[SUIT_SYMBOLS.index(suit)]
    assert r in RANKS
    return r + s


def cards_in(text: str) -> list[str]:
    """The card codes named in prose ``text``, in order (see ``CARD_IN_PROSE``)."""
    return [card_code(m.group(1), m.group(2)) for m in CARD_IN_PROSE.finditer(text)]


def clean(reply: object) -> str:
    """A reply as plain text: a string of at most ``MAX_REPLY`` characters, control characters as spaces."""
    if not isinstance(reply, str):
        raise MoveError(f"a reply must be text, got {type(reply).__name__}")
    if len(reply) > MAX_REPLY:
        raise MoveError(f"the reply is {len(reply)} characters long; at most {MAX_REPLY} are read: answer with the "
                        "move only")
    return _CONTROL.sub(" ", reply)


@dataclass(frozen=True)
class Answer:
    """The part of a reply that holds the answer: the move's text and, where the game has one, the message's."""

    move: str
    message: str | None = None
    source: str = "text"  # json, tag, line, bracket or text


def answer_of(text: str) -> Answer:
    """Where the answer is in a cleaned reply: a JSON object with a ``move`` key, a bracketed or tagged answer, or
    the whole text (see the module docstring)."""
    text = _THINK.sub(" ", text)
    decoder = json.JSONDecoder()
    for start in (i for i, ch in enumerate(text) if ch == "{"):
        try:
            obj, _ = decoder.raw_decode(text, start)
        except (ValueError, RecursionError):  # not JSON, or nested past the parser's depth: read as text
            continue
        if isinstance(obj, dict):
            key = next((k for k in ("move", "action") if k in obj), None)
            if key is None:
                raise MoveError(f"the JSON object has no \"move\" key (keys: {', '.join(map(str, obj))[:80]})")
            value, said = obj[key], obj.get("message", obj.get("say"))
            if isinstance(value, bool) or not isinstance(value, (str, int)):
                raise MoveError(f"the JSON \"move\" must be a string or a number, got {type(value).__name__}")
            if said is not None and not isinstance(said, str):
                raise MoveError(f"the JSON \"message\" must be a string, got {type(said).__name__}")
            return Answer(str(value), said, "json")
    tagged = [m.group(2).strip() for m in _TAGGED.finditer(text)]
    if tagged:
        return Answer(" ; ".join(t for t in tagged if t) or tagged[0], None, "tag")
    lines = _ANSWER_LINE.findall(text)
    if lines:
        return Answer(lines[-1].strip(), None, "line")
    bracketed = [g.strip() for g in _BRACKETS.findall(text) if squeeze(g) not in TAGS]
    if bracketed:
        return Answer(" ; ".join(bracketed), None, "bracket")
    return Answer(text, None, "text")


def trimmed(text: str) -> str:
    """``text`` without wrapping quotes, markdown emphasis or a final full stop."""
    return text.strip(_EDGES)


# ---------------------------------------------------------------------------- a view
class TextView:
    """One seat's table as text, built from that seat's successive observations only (never the state), and the
    reading of replies back into moves. Subclasses (one per game, in ``envs/<game>/text.py``) write ``rules``,
    ``read`` (the observation as a dict), ``since`` (what changed between two reads), ``table`` (the table lines),
    ``moves`` (the legal moves) and ``mentions``/``why`` for parsing."""

    game = ""  # env id
    title = ""
    observation_size = 0  # the observation's length (Summit Rush: for the view's options)
    describe_observation: Callable[[np.ndarray], dict[str, Any]]  # the game observer's describe

    def __init__(self, legal_moves: bool = True):
        if not isinstance(legal_moves, bool):
            raise TypeError(f"legal_moves must be True or False, got {legal_moves!r}")
        self.legal_moves = legal_moves  # records say which mode a game was played in
        self.reset()

    # ------------------------------------------------------------------ the interface
    def reset(self) -> None:
        """A new game: forget the previous observations."""
        self.current: dict[str, Any] | None = None
        self.mask: np.ndarray | None = None
        self.legal: list[Move] = []

    def rules(self) -> str:
        raise NotImplementedError

    def observe(self, observation: np.ndarray, action_mask: np.ndarray) -> str:
        """The seat's state as text at a decision: what happened since its previous observation, the table as it
        sees it and (with ``legal_moves``) the numbered legal moves."""
        t = self.read(np.asarray(observation))
        mask = np.asarray(action_mask)
        first = self.current is None
        news = self.start(t) if first else self.since(self.current, t)
        self.current, self.mask = t, mask
        self.legal = self.moves(t, mask)
        lines = []
        if news:
            lines.append(("" if first else "Since your last move: ") + "; ".join(news) + ".")
        lines += self.table(t)
        if self.legal_moves:
            lines.append("Legal moves: " + "  ".join(f"{i}) {self.written(m)}" for i, m in enumerate(self.legal, 1)))
        else:
            lines.append(self.prompt(t))
        return "\n".join(lines)

    def parse(self, reply: str, action_mask: np.ndarray) -> int:
        """The action ``reply`` names; :class:`MoveError` saying why if it names no legal move."""
        if self.current is None:
            raise NotResetError("parse() before observe(): show the seat its observation first")
        mask = np.asarray(action_mask)
        answer = answer_of(clean(reply))
        return self.resolve(answer, mask)

    def move_name(self, action: int) -> str:
        """The move ``action`` as the view writes it (its code)."""
        raise NotImplementedError

    def written(self, move: Move) -> str:
        """A move as the view writes it: its code unless the game writes it otherwise."""
        return move.code

    # ------------------------------------------------------------------ parts each game writes
    def read(self, observation: np.ndarray) -> dict[str, Any]:
        """The observation's labelled pieces (the game observer's ``describe``), after checking its shape."""
        size = self.observation_size
        if observation.shape != (size,):
            raise ValueError(f"expected a {self.title} observation of shape ({size},) for these options, "
                             f"got {observation.shape}")
        return self.describe_observation(observation)

    def start(self, t: dict[str, Any]) -> list[str]:
        """What to say at the seat's first observation of a game."""
        return []

    def since(self, before: dict[str, Any], t: dict[str, Any]) -> list[str]:
        raise NotImplementedError

    def table(self, t: dict[str, Any]) -> list[str]:
        raise NotImplementedError

    def moves(self, t: dict[str, Any], mask: np.ndarray) -> list[Move]:
        raise NotImplementedError

    def prompt(self, t: dict[str, Any]) -> str:
        """The line that ends the text when the legal moves are not listed: what kind of move is asked for."""
        raise NotImplementedError

    def catalog(self, t: dict[str, Any]) -> list[Move]:
        """Every move the seat could name now, legal or not (what exact names and aliases are matched against)."""
        raise NotImplementedError

    def mentions(self, text: str, t: dict[str, Any], mask: np.ndarray) -> list[int]:
        """The actions prose ``text`` names, in order (repeats allowed), of the kinds legal now."""
        raise NotImplementedError

    def why(self, action: int, t: dict[str, Any], mask: np.ndarray) -> str:
        """Why ``action``, named by the reply, is not legal now."""
        raise NotImplementedError

    def unnamed(self, text: str, t: dict[str, Any]) -> str | None:
        """A reason for a reply that names something that is not a move here (a card not on the table), or None."""
        return None

    # ------------------------------------------------------------------ resolving an answer
    def resolve(self, answer: Answer, mask: np.ndarray) -> int:
        action = self.named(answer.move, mask)
        return self.legal_action(action, mask)

    def legal_action(self, action: int, mask: np.ndarray) -> int:
        if not 0 <= action < len(mask) or not mask[action]:
            raise MoveError(self.why(action, self.current, mask) + self.hint())
        return int(action)

    def hint(self) -> str:
        return "; choose one of the legal moves listed" if self.legal_moves else ""

    def named(self, text: str, mask: np.ndarray) -> int:
        """The action text names: exactly, by number, or as the one move named in prose."""
        t = self.current
        core = trimmed(text)
        word = squeeze(core)
        if not word:
            raise MoveError("the reply names no move" + self.hint())
        if word.isdigit() and self.legal_moves and 1 <= int(word) <= len(self.legal):
            return self.legal[int(word) - 1].action
        for move in self.catalog(t):
            if word in move.aliases or word == squeeze(self.written(move)):
                return move.action
        if word.isdigit():
            if self.legal_moves:
                raise MoveError(f"there is no move {word}: the legal moves are numbered 1 to {len(self.legal)}")
            raise MoveError(f"{word!r} names no move (moves are not numbered in this view): name the move")
        found = list(dict.fromkeys(self.mentions(core, t, mask)))
        if len(found) == 1:
            return found[0]
        if len(found) > 1:
            names = ", ".join(self.move_name(a) for a in found[:6])
            raise MoveError(f"the reply names several moves ({names}): name exactly one")
        reason = self.unnamed(core, t)
        if reason:
            raise MoveError(reason)
        shown = core if len(core) <= 60 else core[:57] + "..."
        raise MoveError(f"{shown!r} names no move" + self.hint())
