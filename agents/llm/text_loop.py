"""Text in, text out: any ``__call__(str) -> str`` agent at a cardzoo table.

Two ways in:

- ``play_text_game(game, players, seed)``: one game through the TextArena-compatible env
  (``cardzoo.envs.text_arena``), each player a callable given the new text since its previous turn (the rules at its
  first turn, then its table, and a refused reply's reason) and answering with a move. Invalid replies are handled by
  the env: the reason, ``max_retries`` more tries, then a random legal move. Returns the rewards, each player's
  counts, the env's final info and every attempt.
- ``CallableChat(fn)``: a backend for ``LanguageSeat``, so the callable plays as a cardzoo agent (``act(observation,
  mask)``) wherever agents play: the callable is given the chat written out as text (the rules, then the state, then
  any refused reply and its reason) and answers with a move.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from cardzoo.envs.text_arena import TextArenaEnv

from .seat import BackendError, Reply


def messages_text(messages: Sequence[tuple[int, str, Any]]) -> str:
    """TextArena messages as one text, each on its own line(s) after its sender (``[GAME]``, ``[Player 0]``)."""
    return "\n".join(f"[{'GAME' if sender < 0 else f'Player {sender}'}] {text}" for sender, text, _ in messages)


def play_text_game(game: Any, players: Sequence[Callable[[str], str]], seed: int | None = None,
                   options: dict[str, Any] | None = None, legal_moves: bool = True,
                   max_retries: int = 2) -> dict[str, Any]:
    """One game of ``game`` with one callable per seat; see the module docstring."""
    env = TextArenaEnv(game, options=options, legal_moves=legal_moves, max_retries=max_retries)
    env.reset(num_players=len(players), seed=seed)
    done = False
    while not done:
        pid, messages = env.get_observation()
        done, _ = env.step(players[pid](messages_text(messages)))
    rewards, game_info = env.close()
    return {"rewards": rewards, "players": game_info, "info": env.final_info, "attempts": env.attempts,
            "legal_moves": legal_moves}


class CallableChat:
    """A ``LanguageSeat`` backend calling ``fn(text) -> str`` (no token counts: None)."""

    def __init__(self, fn: Callable[[str], str], name: str = ""):
        if not callable(fn):
            raise TypeError(f"CallableChat needs a callable (str) -> str, got {type(fn).__name__}")
        self.fn, self.name = fn, name or getattr(fn, "__name__", type(fn).__name__)

    def describe(self) -> dict[str, Any]:
        return {"kind": "callable", "name": self.name}

    def complete(self, messages: list[dict[str, str]], timeout: float | None) -> Reply:
        try:
            text = self.fn("\n\n".join(f"[{m['role']}]\n{m['content']}" for m in messages))
        except Exception as err:  # the callable's own failure is its seat's failed attempt, not a crash of the game
            raise BackendError(f"the agent raised {type(err).__name__}: {str(err)[:200]}") from err
        if not isinstance(text, str):
            raise BackendError(f"the agent returned {type(text).__name__}, not text")
        return Reply(text)
