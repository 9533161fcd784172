"""The language-model seat: text view in, move out, with bounded retries, a documented default and records.

One decision (``LanguageSeat.act``):

1. the prompt: a system message (the view's rules for this setting and how to answer) and a user message (the
   view's text of the seat's observation: its table, what happened since its previous decision and, if
   ``legal_moves``, the numbered legal moves). Each decision starts a fresh conversation: the view holds what a
   player needs (tested by the text view's sufficiency tests), so no history is resent.
2. the backend's reply is parsed by the view (``view.parse``). A refused reply (a ``MoveError``: not your card, not
   a legal move, nothing that reads as a move, an empty reply) is answered with the reason and the question is asked
   again, up to ``max_retries`` times.
3. the default, after the last refused reply, a backend failure (timeout, connection, HTTP error, malformed
   response) or a spent time budget: **a random legal move** from the seat's generator (seeded by ``reset(seed)``),
   recorded with the reason.

With ``decide="likelihood"`` there is no reply to read: the backend scores every legal move's text (as the view
writes it, the end of the model's turn after it) under the same prompt, and the seat plays the most likely, or at a
temperature above 0 draws one from the scores' softmax at that temperature with its own generator. Every decision
is legal and takes one call (``max_retries`` and ``budget`` do not apply); the record keeps the moves weighed and
the five best scores. In a talking game the move is played with nothing said. The backend must have ``score`` (a
local model: ``hf:``).

Replies are untrusted. What is recorded, sent back to the model or shown anywhere is ``bound_text``: control and
direction-changing characters written as visible ``\\uXXXX`` escapes, and at most ``REPLY_CHARS`` characters
followed by a visible ``[... truncated: N more characters]`` mark. Markup is kept as the literal characters: it is
text, and every display (the terminal, the browser's ``textContent``) shows it as such. The view reads at most
``cardzoo.envs.text.MAX_REPLY`` characters of a reply: a longer one is refused unread, with that reason.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from cardzoo.envs.common.errors import CardzooError

REPLY_CHARS = 2000  # a reply as recorded, sent back and shown
REASON_CHARS = 500  # a refusal's reason as sent back
DEFAULT_RULE = "a random legal move"
DECISIONS = ("generate", "likelihood")  # a reply read as a move, or the legal moves scored by the model
ANSWER = "Answer with exactly one legal move and nothing else."

_HIDDEN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]")


def bound_text(text: Any, limit: int = REPLY_CHARS) -> str:
    """``text`` safe to record and show: invisible and control characters (but newline and tab) as ``\\uXXXX``,
    at most ``limit`` characters and, if longer, a visible mark saying how much was cut."""
    shown = _HIDDEN.sub(lambda m: f"\\u{ord(m.group()):04x}", text if isinstance(text, str) else str(text))
    if len(shown) > limit:
        shown = f"{shown[:limit]}[... truncated: {len(shown) - limit} more characters]"
    return shown


class BackendError(CardzooError, RuntimeError):
    """A backend that gave no reply: a timeout, a refused connection, an HTTP error, a malformed response."""


@dataclass(frozen=True)
class Reply:
    """A backend's answer; token counts are ``None`` when the backend did not say."""

    text: str
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    note: str | None = None  # what the backend changed (a prompt cut to the model's context), recorded
    new_prompt_tokens: int | None = None  # the prompt's tokens read afresh (a local model reuses a shared start)


class ChatBackend(Protocol):
    def complete(self, messages: list[dict[str, str]], timeout: float | None) -> Reply:
        """The model's reply to the chat ``messages``; raises ``BackendError`` if there is none."""

    def describe(self) -> dict[str, Any]:
        """The settings to record (never a key)."""


class LanguageSeat:
    """An agent whose moves come from a chat backend reading the game's text view (see the module docstring).

    ``game`` is what ``text_view`` takes (a name, an env id or an env); ``options`` the env options the view is for.
    ``max_retries``: refused replies answered and asked again; ``budget``: seconds one decision may take in all (the
    backend's timeout is cut to what is left; when it is spent the default is played), None for no limit.
    ``decisions`` holds this game's decision records; ``summary()`` adds them up."""

    checked_when_made = True  # the text view checks the options when the seat is made: no trial move is needed

    def __init__(self, backend: ChatBackend, game, options: dict[str, Any] | None = None, *, seed: int | None = None,
                 seat: int | None = None, legal_moves: bool = True, max_retries: int = 2,
                 budget: float | None = None, label: str = "", decide: str = "generate"):
        if not isinstance(max_retries, int) or isinstance(max_retries, bool) or max_retries < 0:
            raise ValueError(f"max_retries must be an int >= 0, got {max_retries!r}")
        if budget is not None and not budget > 0:
            raise ValueError(f"budget must be a number of seconds > 0 or None, got {budget!r}")
        if decide not in DECISIONS:
            raise ValueError(f"decide must be one of {', '.join(DECISIONS)}, got {decide!r}")
        if decide == "likelihood" and not callable(getattr(backend, "score", None)):
            raise ValueError(f"decide='likelihood' needs a backend that scores moves (a local model, hf:); "
                             f"{type(backend).__name__} only replies")
        from cardzoo.envs.text import text_view

        self.backend, self.seat, self.label, self.decide = backend, seat, label, decide
        self.legal_moves, self.max_retries, self.budget = legal_moves, max_retries, budget
        self.view = text_view(game, options=options, legal_moves=legal_moves)
        self.rng = np.random.default_rng(seed)
        self.decisions: list[dict[str, Any]] = []

    def __repr__(self) -> str:
        return f"LanguageSeat({self.label or type(self.backend).__name__}, seat={self.seat})"

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        self.view.reset()
        self.decisions = []

    def settings(self) -> dict[str, Any]:
        """What the records say about this seat: the backend's settings, the view's switch, the limits."""
        return {"agent": self.label, "backend": self.backend.describe(), "legal_moves": self.legal_moves,
                "decide": self.decide, "max_retries": self.max_retries, "budget": self.budget,
                "default": DEFAULT_RULE}

    def system_prompt(self) -> str:
        return f"{self.view.rules().strip()}\n\n{ANSWER}"

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        start = time.perf_counter()
        legal = np.flatnonzero(action_mask)
        if len(legal) == 0:
            raise ValueError("the action mask has no legal action: this agent is not to move")
        messages = [{"role": "system", "content": self.system_prompt()},
                    {"role": "user", "content": self.view.observe(observation, action_mask)}]
        record: dict[str, Any] = {"decision": len(self.decisions), "seat": self.seat,
                                  "prompt": [dict(m) for m in messages], "attempts": [], "action": None,
                                  "move": None, "default": None}
        self.decisions.append(record)
        if self.decide == "likelihood":
            return self._most_likely(messages, record, start, legal)
        action, reason = None, f"{self.max_retries + 1} replies refused"
        for _ in range(self.max_retries + 1):
            left = None if self.budget is None else self.budget - (time.perf_counter() - start)
            if left is not None and left <= 0:
                reason = f"the decision's budget of {self.budget:g} s was spent"
                break
            asked = time.perf_counter()
            try:
                reply = self.backend.complete(messages, left)
            except BackendError as err:
                record["attempts"].append({"reply": None, "error": bound_text(err, REASON_CHARS),
                                           "prompt_tokens": None, "completion_tokens": None,
                                           "seconds": round(time.perf_counter() - asked, 4)})
                reason = f"no reply: {bound_text(err, REASON_CHARS)}"
                break
            attempt = {"reply": bound_text(reply.text), "error": None, "prompt_tokens": reply.prompt_tokens,
                       "completion_tokens": reply.completion_tokens, "new_prompt_tokens": reply.new_prompt_tokens,
                       "seconds": round(time.perf_counter() - asked, 4)}
            if reply.note:
                attempt["note"] = bound_text(reply.note, REASON_CHARS)
            record["attempts"].append(attempt)
            error = self._refusal(reply.text, action_mask)
            if isinstance(error, int):
                action = error
                break
            attempt["error"] = error
            messages = [*messages, {"role": "assistant", "content": attempt["reply"]},
                        {"role": "user", "content": f"That is not a legal move: {error}. {ANSWER}"}]
        if action is None:
            action = int(legal[self.rng.integers(len(legal))])
            record["default"] = reason
        record["action"], record["move"] = action, self.view.move_name(action)
        record["seconds"] = round(time.perf_counter() - start, 4)
        return action

    def _most_likely(self, messages, record: dict[str, Any], start: float, legal: np.ndarray) -> int:
        moves = [m for m in self.view.legal if m.action in set(legal.tolist())]
        texts = [self.view.written(m) for m in moves]
        asked = time.perf_counter()
        try:
            if not moves:  # the view's bug: the default is played, and the record says why
                raise BackendError("the view listed none of the legal moves")
            scores, tokens = self.backend.score(messages, texts)
        except BackendError as err:
            record["attempts"].append({"reply": None, "error": bound_text(err, REASON_CHARS), "prompt_tokens": None,
                                       "completion_tokens": None, "seconds": round(time.perf_counter() - asked, 4)})
            action = int(legal[self.rng.integers(len(legal))])
            record["default"] = f"no scores: {bound_text(err, REASON_CHARS)}"
        else:
            temperature = float(getattr(self.backend, "temperature", 0.0) or 0.0)
            values = np.asarray(scores, np.float64)
            if temperature > 0:
                weights = np.exp((values - values.max()) / temperature)
                pick = int(self.rng.choice(len(moves), p=weights / weights.sum()))
            else:
                pick = int(np.argmax(values))
            action = int(moves[pick].action)
            best = np.argsort(-values, kind="stable")[:5]
            record["attempts"].append({"reply": texts[pick], "error": None, "prompt_tokens": tokens["prompt_tokens"],
                                       "completion_tokens": 0, "new_prompt_tokens": tokens["new_prompt_tokens"],
                                       "candidate_tokens": tokens["candidate_tokens"],
                                       "seconds": round(time.perf_counter() - asked, 4)})
            record["scores"] = [[texts[i], round(float(values[i]), 4)] for i in best]
            record["candidates"] = texts  # what was weighed (a trainer scores them again: training/llm_pg.py)
        record["action"], record["move"] = action, self.view.move_name(action)
        record["seconds"] = round(time.perf_counter() - start, 4)
        return action

    def _refusal(self, text: str, action_mask: np.ndarray) -> int | str:
        """The action ``text`` names, or the reason it names none (as sent back to the model)."""
        from cardzoo.envs.text import MoveError

        if not isinstance(text, str) or not text.strip():
            return "the reply was empty"
        try:
            action = int(self.view.parse(text, action_mask))
        except MoveError as err:
            return bound_text(err, REASON_CHARS)
        if not 0 <= action < len(action_mask) or not action_mask[action]:  # the view's bug, never played
            return f"{self.view.move_name(action)} is not legal now"
        return action

    def summary(self) -> dict[str, Any]:
        """This game's decisions added up: attempts, refused replies (``invalid``), backend failures (``failed``),
        decisions whose first reply was legal, defaults played, tokens (None if the backend never said), seconds."""
        attempts = [a for d in self.decisions for a in d["attempts"]]

        def total(key):
            known = [a[key] for a in attempts if a.get(key) is not None]
            return sum(known) if known else None

        return {"decisions": len(self.decisions), "attempts": len(attempts),
                "invalid": sum(a["error"] is not None and a["reply"] is not None for a in attempts),
                "failed": sum(a["reply"] is None for a in attempts),
                "first_legal": sum(bool(d["attempts"]) and d["attempts"][0]["error"] is None for d in self.decisions),
                "defaults": sum(d["default"] is not None for d in self.decisions),
                "prompt_tokens": total("prompt_tokens"), "completion_tokens": total("completion_tokens"),
                "new_prompt_tokens": total("new_prompt_tokens"), "candidate_tokens": total("candidate_tokens"),
                "seconds": round(sum(d.get("seconds", 0.0) for d in self.decisions), 4)}
