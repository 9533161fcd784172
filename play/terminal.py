"""A person's seat in the terminal: ``cardzoo play GAME --agents human learned``.

At each of the person's turns the terminal shows what happened since (the other players' moves as the table saw
them), the table as that seat sees it (built from its observation only) and the legal moves, numbered. The person
types a number or names the move:

- a card by rank and suit, in any case: ``QS``, ``qs``, ``10h`` or ``Th``; in Rook also ``rook``, ``bid 75`` (or
  ``75``), ``pass``, a suit to name trumps (``hearts``, ``h``), ``up`` or ``hidden`` to draw;
- Summit Rush is turn-paced here: each move typed is one tick of the game's clock (``seconds_per_action`` of game
  time), and the agents move in the same tick. A card goes onto your own pile if it fits there, else onto the first
  pile it fits (``7h 1`` or ``7h@1`` chooses pile 1); ``t`` turns your stock, ``w`` waits. In a talking game
  (the default) add a message after ``>``: ``7h > I need a 9``, ``w > need 9``, ``> turn`` (say it and wait);
  ``??`` lists the messages and their short forms.
- ``?`` shows this help again with the game's rules in short and the legend of its table (the same text as the
  play page's "Rules and legend" panel), ``q`` leaves the game (the game so far is saved, unfinished).

A line that names no legal move is refused with the reason and asked again: the env runs strict
(``illegal_action="raise"``), so no typo can end a game. Input may come from a pipe (each line one answer, echoed).
End of input or Ctrl-C leaves the game unfinished; it is still saved.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from cardzoo.envs.common.errors import IllegalActionError

from .table import Table, TickTable, refusal
from .views import SeatView, letters, pick, rules_text, squeeze, view_class


def typing_help(game: str) -> str:
    """What a person may type in ``game`` (its seat view's ``typing_help``)."""
    return view_class(game).typing_help


class Quit(Exception):
    """The person typed ``q``."""


class Terminal:
    """Reads a person's moves from ``read`` (one line per call; '' at the end of input) and writes to ``write``."""

    def __init__(self, table: Table, read: Callable[[], str] | None = None, write=print, echo: bool | None = None):
        self.table, self.write = table, write
        self.read = read or sys.stdin.readline
        self.echo = (read is None and not sys.stdin.isatty()) if echo is None else echo
        self.printed = {seat: 0 for seat in table.humans}  # log lines shown to each person so far

    def ask(self, prompt: str) -> str:
        self.write(prompt, end="", flush=True)
        line = self.read()
        if not line:
            self.write()
            raise EOFError
        if self.echo:
            self.write(line.rstrip("\n"))
        return line.strip()

    def news(self, seat: int) -> None:
        view = self.table.views[seat]
        for line in view.log[self.printed[seat]:]:
            self.write(f"  * {line}")
        self.printed[seat] = len(view.log)

    def show(self, seat: int) -> None:
        view = self.table.views[seat]
        who = f" ({self.table.seats[seat]})" if len(self.table.humans) > 1 else ""
        self.write(f"\n--- your move{who} ---")
        self.news(seat)
        self.write(view.text())
        lines = [""]
        for i, m in enumerate(view.legal, 1):
            item = f"{i}) {m.label}"
            if lines[-1] and len(lines[-1]) + 3 + len(item) > 110:
                lines.append("")
            lines[-1] += ("   " if lines[-1] else "") + item
        self.write("\n".join(lines))
        self.write(typing_help(self.table.game))

    def choose(self, seat: int) -> int:
        """Ask until the person names a move; its action (with the message, in a talking Summit Rush). The move
        may still be illegal: the caller lets the env refuse it, with the env's reason."""
        view = self.table.views[seat]
        while True:
            typed = self.ask("your move> ")
            word = squeeze(typed)
            if word in ("q", "quit"):
                raise Quit
            if word in ("?", "help"):
                self.write(__doc__.split("\n\n", 1)[1].strip().replace("``", ""))
                self.write("\n" + rules_text(self.table.game))
            elif word == "??":
                self.list_messages(view)
            elif not word:
                self.write(typing_help(self.table.game))
            else:
                try:
                    return self.parse(view, typed)
                except IllegalActionError as err:
                    self.write(f"  ! {err}")

    def parse(self, view: SeatView, typed: str) -> int:
        """The action ``typed`` names, legal or not; ``IllegalActionError`` if it names none."""
        move_text, sep, said = typed.partition(">")
        message = self.message(view, said) if sep else 0
        if sep and not squeeze(move_text):
            move_text = "w"  # a message alone: say it and wait
        text = squeeze(move_text)
        move = pick(view.legal, move_text)
        action = move.action if move is not None else self.named(view, text)
        if action is None:
            if text.isdigit():
                raise IllegalActionError(f"there is no move {text}: choose 1..{len(view.legal)}")
            raise IllegalActionError(f"{move_text.strip()!r} names no move. {typing_help(self.table.game)}")
        if isinstance(self.table, TickTable):
            return message * self.table.env.n_moves + action
        return action

    def message(self, view: SeatView, said: str) -> int:
        messages = view.message_moves()
        if not messages:
            raise IllegalActionError("nothing can be said in this game (it is silent): drop the '>' part")
        text = said.strip() if said.strip().startswith("#") else letters(said)
        found = None if squeeze(said).isdigit() else pick(messages, text)  # a plain number is a move; #N a message
        if found is None:
            raise IllegalActionError(f"unknown message {said.strip()!r}: type ?? for the messages")
        return found.action

    @staticmethod
    def named(view: SeatView, text: str) -> int | None:
        """The action of a card (or Rook bid) named by ``text`` that is not a legal move, so that the env says why
        not; None if ``text`` names none (the game's seat view knows its names)."""
        return view.named(text)

    def list_messages(self, view: SeatView) -> None:
        messages = view.message_moves()
        if not messages:
            self.write("this game is silent: nothing can be said")
            return
        self.write("Say a message with your move after '>', in full, by its short form or by number:")
        cells = [f"#{m.action:<3}{m.code:<12}" for m in messages]
        for i in range(0, len(cells), 6):
            self.write(("  " + "  ".join(cells[i:i + 6])).rstrip())

    # ------------------------------------------------------------------------ the game
    def until_legal(self, seat: int, attempt: Callable[[int], object]) -> int:
        """Ask until ``attempt`` (the env, strict) accepts the move; its refusals are shown and asked again."""
        while True:
            action = self.choose(seat)
            try:
                attempt(action)
                return action
            except IllegalActionError as err:
                self.write(f"  ! {refusal(err)}")

    def run(self) -> None:
        """Play until the game ends; ``Quit``, ``EOFError`` and ``KeyboardInterrupt`` pass through."""
        table = self.table
        while not table.over:
            if isinstance(table, TickTable):
                moves = {}
                for seat in table.humans:
                    self.show(seat)
                    moves[seat] = self.until_legal(seat, lambda action, seat=seat: table.check(seat, action))
                table.tick(moves)
            else:
                table.advance()
                if table.over:
                    break
                seat = table.to_move
                self.show(seat)
                self.until_legal(seat, lambda action, seat=seat: table.play(seat, action))
        for seat in table.humans:
            self.news(seat)
            self.write(f"\n{table.views[seat].text()}")
            self.write(f"\n{table.outcome(seat)}")
