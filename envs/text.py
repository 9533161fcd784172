"""Every game as text, for a language model (or any text agent) in one seat.

::

    from cardzoo.envs.text import text_view, MoveError, TextView
    view = text_view("rope_team", options={"level": "hard"}, legal_moves=True)
    view.reset()                                  # a new game
    prompt = view.rules()                         # the setting's rules in short, in the project's words
    text = view.observe(observation, action_mask) # at each decision of the seat
    action = view.parse(reply, action_mask)       # MoveError (a ValueError) says why a reply is refused
    view.move_name(action)                        # the move as the view writes it: "QS", "bid 75", "7H@0"

A view is built from its seat's observations only, never from the game state: what it says happened since the
seat's previous decision (tricks, plays, bids, draws, messages heard) is read off the difference between that
seat's successive observations, so it says nothing an agent with the observations could not know. Everything is
seat-relative ("you", "partner", "opponent").

The text of a decision has, in this order: one line of what happened since the seat's previous observation
(``Since your last move: ...``; at a game's first decision, how it starts), the table as the seat sees it (fixed
wording, one fact per line, cards as two characters: rank ``2-9 T J Q K A`` then suit ``C D H S``), then either
the numbered legal moves (``Legal moves: 1) QS  2) KH``; ``legal_moves=True``) or one line saying what kind of move
is asked (``legal_moves=False``). ``view.legal_moves`` records the mode. The wording is stable: tests read the table
back with regular expressions and play the baselines from it (``tests/test_text_views.py``).

Summit Rush is played one tick at a time (its turn-paced mode: every seat answers each tick): observe once per
tick, and ``parse`` returns the env's joint action, ``message * n_moves + move``. A move is a face-up peak card
and the pile it goes onto (``7H@1``; ``7H`` alone goes onto your pile if it fits there, else the first pile it
fits), ``turn`` or ``wait``; a message follows ``>`` (``7H@0 > I need a 9``, ``wait > need 9``) or goes in a
JSON ``"message"`` key.

What replies are read and why one is refused: :mod:`cardzoo.envs.common.text`. Per game:
:mod:`cardzoo.envs.rope_team.text`, :mod:`cardzoo.envs.rook.text`, :mod:`cardzoo.envs.summit_rush.text`.
"""

from __future__ import annotations

from typing import Any

from .common.errors import MoveError, OptionError
from .common.text import MAX_REPLY, Move, TextView
from .registry import spec

__all__ = ["MAX_REPLY", "Move", "MoveError", "TextView", "text_view"]


def text_view(game: Any, options: dict[str, Any] | None = None, legal_moves: bool = True) -> TextView:
    """The text view of one seat of ``game`` (a name, an env id or an env) with the env options ``options`` (for an
    env, its own options are used and ``options`` must be None). Options are checked as the env checks them."""
    game_spec = spec(game)
    if not isinstance(game, str):
        if options is not None:
            raise OptionError("text_view(env, options=...): an env carries its own options; pass one or the other")
        config = game.unwrapped.config
    else:
        if options is not None and not isinstance(options, dict):
            raise OptionError(f"options must be a dict of env options, got {type(options).__name__}")
        env = game_spec.make(**(options or {}))
        config = env.unwrapped.config
        env.close()
    return game_spec.load("text_view")(config, legal_moves)
