"""What one seat sees, for people: the table as JSON for the browser and as text for the terminal.

A view is built only from what its seat is shown: the seat's own observations, decoded by the env's ``describe``,
and the moves made at the table as everyone there sees them (a card played face up, a bid, a draw; a Rook discard
only as "a card"). It never reads the game state, so the browser and the terminal show no more than the observation
holds; ``tests/test_play_server.py`` resamples the hidden cards and checks that the JSON stays the same.

A Summit Rush seat's log is what it sees change on the table each tick (a peak card gone and the pile that took it,
a stock turned), as nobody's actions are read. Each game's rules and legend, for the page and for the terminal's
``?``, are ``rules_text(game)``.

Moves are named as players name them (``Move``): a card by its two characters (``QS``; ``10s``/``ts`` for a ten,
any case), a bid by its amount, a draw by ``up``/``hidden``; ``pick`` reads what a player typed. The moves, their
aliases and ``pick`` are the text views' (``cardzoo.envs.common.text`` and each game's ``envs/<game>/text.py``), so
the terminal, the browser and a language model's seat name and read moves one way.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from cardzoo.envs.common.cards import CARD_NAMES, STANDARD_CARDS, SUIT_NAMES, SUIT_SYMBOLS, card_pretty
from cardzoo.envs.common.errors import IllegalActionError
from cardzoo.envs.common.text import Move, card_aliases, letters, pick, squeeze  # noqa: F401 (play's names)
from cardzoo.envs.rook import rules as rook
from cardzoo.envs.rook.observer import describe as rook_describe
from cardzoo.envs.rook.text import rook_move
from cardzoo.envs.rope_team.observer import describe as rope_describe
from cardzoo.envs.rope_team.rules import CAMP, HAND, trick_winner
from cardzoo.envs.rope_team.text import CARDS
from cardzoo.envs.summit_rush import rules as summit
from cardzoo.envs.summit_rush.render import CELL, COLUMNS
from cardzoo.envs.summit_rush.text import message_moves, peak_moves

LOG_LINES = 12  # log lines the browser gets (the terminal prints each line as it happens)
# Each game's rules in short and the legend of its table, one text per game (static/rules-<env id>.txt for the
# project's games): the page gets it in the catalog and the terminal prints it for ``?``, so both say the same.
RULES = Path(__file__).resolve().parent / "static"


def rules_text(game: str) -> str:
    """The rules in short and the legend of ``game``'s table (``game`` is an env id: ``rope_team_v0``): its seat
    view's ``rules``."""
    return view_class(game).rules()


# Moves are named and read as the text views name and read them (``cardzoo.envs.common.text``): one way for the
# terminal, the browser and a language model's seat.


def _ago(ticks: int) -> str:
    return "just now" if not ticks else f"{ticks} move{'s' * (ticks != 1)} ago"


def _trumps_index(name: str | None) -> int:
    return -1 if name is None else SUIT_NAMES.index(name)


# ---------------------------------------------------------------------------- one seat's view
class SeatView:
    """The table as one seat sees it. ``observe`` takes each new observation of the seat, ``saw`` each move made at
    the table (before its result is observed); ``to_json`` and ``text`` show it."""

    game = ""

    def __init__(self, seat: int, names: list[str]):
        self.seat = seat
        self.names = names  # what this seat calls each seat: "you", "partner", ...
        self.table: dict[str, Any] = {}
        self.legal: list[Move] = []
        self.log: list[str] = []
        self.last_trick: dict[str, Any] | None = None

    def observe(self, observation: np.ndarray, mask: np.ndarray) -> None:
        raise NotImplementedError

    def saw(self, seat: int, action: int) -> None:
        """A move made at the table, as everyone there sees it (called before the move's result is observed)."""

    def who(self, seat: int) -> str:
        return self.names[seat]

    def _say(self, line: str) -> None:
        self.log.append(line[0].upper() + line[1:])

    def _trick(self, seat: int, card: int, led_name: str | None, led_by_self: bool, second_wins) -> None:
        """If ``card``, played by ``seat``, completes a trick, keep the trick and log its winner."""
        if led_name is None:
            return
        leader = self.seat if led_by_self else 1 - self.seat
        led = self._card_id(led_name)
        winner = seat if second_wins(led, card) else leader
        self.last_trick = {"cards": [[self.who(leader), led_name], [self.who(seat), self._card_name(card)]],
                           "winner": self.who(winner)}
        self._say(f"{self.who(winner)} won the trick")

    _card_id = staticmethod(STANDARD_CARDS.__getitem__)
    _card_name = staticmethod(CARD_NAMES.__getitem__)

    def to_json(self) -> dict[str, Any]:
        # ``text``: the seat's view in words, what the page shows of a game it has no drawing of.
        return {"game": self.game, "table": self.table_json(), "text": self.text(),
                "legal": [m.to_json() for m in self.legal],
                "last_trick": self.last_trick, "log": self.log[-LOG_LINES:]}

    def table_json(self) -> dict[str, Any]:
        raise NotImplementedError

    def text(self) -> str:
        raise NotImplementedError

    # What the registry's ``seat_view`` is asked: the view of a seat at a table, the end of a game in words, and a
    # move named in the terminal (what may be typed, the messages that may be said).
    typing_help = "Type a move's number. ? help, q quit."

    @classmethod
    def rules(cls) -> str:
        """The rules in short and the legend of the table: ``static/rules-<env id>.txt``, the file the play page
        shows too."""
        return (RULES / f"rules-{cls.game}.txt").read_text(encoding="utf-8").strip()

    def message_moves(self) -> list[Move]:
        """The messages this seat may say now (none in a silent game)."""
        return []

    @classmethod
    def at_table(cls, env, seat: int) -> SeatView:
        """The view of ``seat`` at a table of ``env`` (its public options only)."""
        return cls(seat)

    @staticmethod
    def result(info: dict[str, Any], seat: int) -> str:
        """``seat``'s result from the end-of-game info: "win", "loss" (or "tie")."""
        return "win" if info.get("outcome") == "win" else "loss"

    @classmethod
    def outcome_text(cls, info: dict[str, Any], seat: int) -> str:
        """One sentence on how the game ended, for ``seat`` (``info`` is the end-of-game info: no cards)."""
        return f"The game ended: {info['outcome']}."

    def named(self, text: str) -> int | None:
        """The action of a move named by ``text`` (squeezed, lower case) that is not a legal move, so that the env
        says why not; None if ``text`` names none."""
        return next((card for name, card in STANDARD_CARDS.items() if text in card_aliases(name)), None)


class RopeTeamView(SeatView):
    """Rope Team: the ridge from the seat's own end (position 0) to the partner's end (8)."""

    game = "rope_team_v0"
    typing_help = "Type a card (QS, 10h, th) or its number. ? help, q quit."

    def __init__(self, seat: int):
        super().__init__(seat, ["you", "partner"] if seat == 0 else ["partner", "you"])

    @classmethod
    def outcome_text(cls, info: dict[str, Any], seat: int) -> str:
        up = f"{info['uncovered']}/8 ridge cards up"
        return {"win": f"You won: all eight ridge cards are up, in deal {info['win_deal']} after {info['tricks']} "
                       "tricks.",
                "fall": f"You lost: the coin fell off the ridge after {info['tricks']} tricks ({up}).",
                "out_of_deals": f"You lost: out of deals after {info['tricks']} tricks ({up})."}.get(
            info["outcome"], f"The game ended: {info['outcome']}.")

    def observe(self, observation: np.ndarray, mask: np.ndarray) -> None:
        t, before = rope_describe(observation), self.table
        if before:
            if t["deal"] != before["deal"]:
                self._say(f"deal {t['deal']} is dealt: {'you lead' if t['self_leads'] else 'your partner leads'}")
            if t["ropes"] < before["ropes"]:
                self._say("a safety rope catches the coin at the end of the ridge")
            for pos, (old, new) in enumerate(zip(before["ridge"], t["ridge"], strict=True)):
                if old == "??" and new != "??":
                    side = "your end" if pos == 0 else "your partner's end" if pos == 8 else f"position {pos}"
                    trumps = f"; {t['trumps']} are trumps" if t["trumps_rule"] else ""
                    self._say(f"the coin turns up {card_pretty(STANDARD_CARDS[new])} at {side}{trumps}")
        self.table = t
        self.legal = [CARDS[int(c)] for c in np.flatnonzero(mask)]

    def saw(self, seat: int, action: int) -> None:
        t = self.table
        self._say(f"{self.who(seat)} played {card_pretty(action)}")
        trumps = _trumps_index(t["trumps"])
        self._trick(seat, action, t["led"], t["led_by_self"], lambda led, card: not trick_winner(led, card, trumps))

    def table_json(self) -> dict[str, Any]:
        t = self.table
        return {
            "ridge": [None if c == "??" else c for c in t["ridge"]], "coin": t["coin"], "camp": CAMP,
            "trumps": t["trumps"], "trumps_rule": t["trumps_rule"], "ropes": t["ropes"], "deal": t["deal"],
            "last_deal": t["last_deal"], "trick": t["trick"] + 1, "hand": t["hand"],
            "partner_hand": t["partner_hand"], "partner_cards": HAND - len(t["played_partner"]),
            "led": None if t["led"] is None else {"by": "you" if t["led_by_self"] else "partner", "card": t["led"]},
            "played_self": t["played_self"], "played_partner": t["played_partner"], "you_lead": t["self_leads"],
            "your_turn": t["self_to_move"], "open_hands": t["open_hands"],
        }

    def text(self) -> str:
        t = self.table
        cells = [f"[{'??' if c == '??' else card_pretty(STANDARD_CARDS[c]):>3}]" for c in t["ridge"]]
        marks = ["  ^  " if pos == t["coin"] else "camp " if pos == CAMP else "     " for pos in range(9)]
        last = "  (the last deal)" if t["last_deal"] else ""
        lines = [
            f"Rope Team - deal {t['deal']}{last}, trick {t['trick'] + 1}/13   trumps: {t['trumps'] or 'none'}   "
            f"ropes left: {t['ropes']}",
            "your end " + " ".join(cells) + " partner's end",
            "         " + " ".join(marks) + "   (^ = the coin)",
        ]
        if t["led"] is not None:
            lines.append(f"current trick: {'you' if t['led_by_self'] else 'your partner'} led "
                         f"{card_pretty(STANDARD_CARDS[t['led']])}")
        if self.last_trick:
            lines.append("last trick: " + _trick_text(self.last_trick, lambda c: card_pretty(STANDARD_CARDS[c])))
        lines.append("your hand: " + " ".join(card_pretty(STANDARD_CARDS[c]) for c in t["hand"]))
        if t["partner_hand"] is not None:
            lines.append("partner's hand: " + " ".join(card_pretty(STANDARD_CARDS[c]) for c in t["partner_hand"]))
        else:
            left = HAND - len(t["played_partner"])
            lines.append(f"partner's hand: {left} card{'s' * (left != 1)}, hidden")
        return "\n".join(lines)


def _trick_text(trick: dict[str, Any], pretty) -> str:
    (first, a), (second, b) = trick["cards"]
    return f"{first} {pretty(a)}, {second} {pretty(b)} - {trick['winner']} won"


class RookView(SeatView):
    """Rook for Two: the seat's hand, the bidding, the draw pile's face-up card and the tricks."""

    game = "rook_v0"
    typing_help = ("Type a card (QS, 10h, rook), a bid (75 or bid 75), pass, a suit (hearts), up or hidden, or a "
                   "number. ? help, q quit.")

    @classmethod
    def at_table(cls, env, seat: int) -> RookView:
        return cls(seat, env.unwrapped.config.target_score)

    @staticmethod
    def result(info: dict[str, Any], seat: int) -> str:
        winner = info.get("winner")
        return "tie" if winner is None else "win" if winner == f"player_{seat}" else "loss"

    @classmethod
    def outcome_text(cls, info: dict[str, Any], seat: int) -> str:
        outcome = info["outcome"]
        me, opp = info["totals"][seat], info["totals"][1 - seat]
        what = "round" if outcome == "rounds_done" and info["rounds"] == 1 else "game"
        won = {"win": "You won", "loss": "Your opponent won", "tie": "A tie"}[cls.result(info, seat)]
        how = {"bidder_fell": ": the set bidder fell to minus the target", "round_limit": ": cut off at the round "
               "limit"}.get(outcome, "")
        return f"{won} the {what}{how}, {me} to {opp} after {info['rounds']} round{'s' * (info['rounds'] != 1)}."

    def named(self, text: str) -> int | None:
        amount = text.removeprefix("bid")
        if amount.isdigit() and int(amount) in rook.BID_AMOUNTS:
            return rook.bid_action(int(amount))
        return next((card for name, card in rook.NAMES.items() if text in card_aliases(name)), None)

    def __init__(self, seat: int, target_score: int):
        super().__init__(seat, ["you", "opponent"] if seat == 0 else ["opponent", "you"])
        self.target_score = target_score

    _card_id = staticmethod(rook.NAMES.__getitem__)
    _card_name = staticmethod(rook.card_name)

    def observe(self, observation: np.ndarray, mask: np.ndarray) -> None:
        t, before = rook_describe(observation), self.table
        if before and (t["total_self"], t["total_opp"]) != (before["total_self"], before["total_opp"]):
            self._say(f"the round is scored: totals you {t['total_self']}, opponent {t['total_opp']}")
        self.table = t
        self.legal = [self._move(int(a), t) for a in np.flatnonzero(mask)]

    @staticmethod
    def _move(a: int, t: dict[str, Any]) -> Move:
        return rook_move(a, t["face_up"])

    def saw(self, seat: int, action: int) -> None:
        t, who = self.table, self.who(seat)
        other = self.who(1 - seat)
        phase = t["phase"]
        if phase == "bid":
            self._say(f"{who} passed" if action == rook.PASS else f"{who} bid {rook.BID_AMOUNTS[action - rook.BID0]}")
        elif phase == "trump":
            suit = action - rook.TRUMP0
            self._say(f"{who} took the Nest and named {SUIT_SYMBOLS[suit]} {SUIT_NAMES[suit]} trumps")
        elif phase == "discard":
            self._say(f"you discarded {rook.card_pretty(action)}" if seat == self.seat else f"{who} discarded a card")
        elif phase == "draw":
            face = rook.card_pretty(rook.NAMES[t["face_up"]])
            if action == rook.TAKE_UP:
                self._say(f"{who} took the face-up {face}; {other} got the hidden card")
            else:
                self._say(f"{who} took the hidden card; {other} got the face-up {face}")
        elif phase == "play":
            self._say(f"{who} played {rook.card_pretty(action)}")
            trumps = _trumps_index(t["trumps"])
            self._trick(seat, action, t["led"], t["led_by_self"],
                        lambda led, card: rook.second_wins(led, card, trumps))

    def table_json(self) -> dict[str, Any]:
        t = self.table
        return {
            "phase": t["phase"], "hand": t["hand"], "bids_self": t["bids_self"], "bids_opp": t["bids_opp"],
            "passed_self": t["passed_self"], "passed_opp": t["passed_opp"], "high_bid": t["high_bid"],
            "bidder": {"self": "you", "opp": "opponent"}.get(t["bidder"]), "trumps": t["trumps"],
            "nest": t["nest"], "discards": t["discards"], "face_up": t["face_up"], "opp_known": t["opp_known"],
            "self_known": t["self_known"], "played_self": t["played_self"], "played_opp": t["played_opp"],
            "led": None if t["led"] is None else {"by": "you" if t["led_by_self"] else "opponent", "card": t["led"]},
            "tricks": [t["tricks_self"], t["tricks_opp"]], "points": [t["points_self"], t["points_opp"]],
            "totals": [t["total_self"], t["total_opp"]], "target_score": self.target_score,
            "you_dealt": t["self_dealt"], "your_turn": t["self_to_move"],
        }

    def text(self) -> str:
        t = self.table

        def cards(names: list[str]) -> str:
            return " ".join(rook.card_pretty(rook.NAMES[c]) for c in names) or "-"

        bids = (f"you {', '.join(map(str, t['bids_self'])) or '-'}{' (passed)' if t['passed_self'] else ''}; "
                f"opponent {', '.join(map(str, t['bids_opp'])) or '-'}{' (passed)' if t['passed_opp'] else ''}")
        contract = f"   contract: {t['high_bid']} by {'you' if t['bidder'] == 'self' else 'opponent'}" if t[
            "bidder"] else ""
        lines = [
            f"Rook for Two - phase {t['phase']}   totals: you {t['total_self']}, opponent {t['total_opp']} "
            f"(to {self.target_score})",
            f"bids: {bids}{contract}   trumps: {t['trumps'] or 'not named'}",
        ]
        if t["nest"]:
            lines.append(f"the Nest you took: {cards(t['nest'])}   your discards: {cards(t['discards'])}")
        if t["face_up"]:
            lines.append(f"face-up card on the draw pile: {cards([t['face_up']])}")
        lines.append(f"tricks: you {t['tricks_self']} ({t['points_self']} pts), opponent {t['tricks_opp']} "
                     f"({t['points_opp']} pts)")
        if t["led"] is not None:
            lines.append(f"current trick: {'you' if t['led_by_self'] else 'opponent'} led {cards([t['led']])}")
        if self.last_trick:
            lines.append("last trick: " + _trick_text(self.last_trick, lambda c: rook.card_pretty(rook.NAMES[c])))
        lines.append(f"your hand: {cards(t['hand'])}")
        if t["opp_known"]:
            lines.append(f"opponent holds (you saw them): {cards(t['opp_known'])}")
        return "\n".join(lines)


class SummitRushView(SeatView):
    """Summit Rush: the public table (every seat sees the same), the messages heard and the seat's own moves."""

    game = "summit_rush_v0"
    typing_help = ("Type a card (7h; 7h 1 for pile 1), t to turn your stock, w to wait, or a number; add > and a "
                   "message to say something (?? lists them). ? help, q quit.")

    @classmethod
    def at_table(cls, env, seat: int) -> SummitRushView:
        return cls(seat, env.config, env.describe)

    @classmethod
    def outcome_text(cls, info: dict[str, Any], seat: int) -> str:
        outcome = info["outcome"]
        if outcome == "win":
            return f"You won: the peaks are cleared in {info['ticks']} moves with {info['score']} stock cards to " \
                   "spare."
        left = f"{info['peaks_left']} peak cards left"
        return {"time": f"You lost: time ran out after {info['ticks']} moves, {left}.",
                "stuck": f"You lost: stuck after {info['ticks']} moves (no stock, nothing fits), {left}.",
                "tick_limit": f"Cut off after {info['ticks']} moves, {left}."}.get(outcome,
                                                                                  f"The game ended: {outcome}.")

    def named(self, text: str) -> int | None:
        for code in filter(None, self.table["peaks"]):
            if code != "??" and text in card_aliases(code):
                return self.table["peaks"].index(code) * self.config.players + self.seat
        cards = {a: name for name in CARD_NAMES for a in card_aliases(name)}
        if text in cards:
            raise IllegalActionError(f"{card_pretty(STANDARD_CARDS[cards[text]])} is not a face-up card of the peaks")
        return None

    def __init__(self, seat: int, config: summit.Config, describe):
        players = config.players
        names = [("you" if p == seat else "partner" if players == 2 else f"player_{p}") for p in range(players)]
        super().__init__(seat, names)
        self.config = config
        self.describe = describe
        self.turn, self.wait = summit.N_PEAKS * players, summit.N_PEAKS * players + 1

    def observe(self, observation: np.ndarray, mask: np.ndarray) -> None:
        t = self.describe(observation)
        if self.table:
            self._moves_seen(self.table, t)
        for p, heard in enumerate(t["heard"] or []):
            if heard is not None and heard[1] == 0:  # said during the last tick, heard now
                self._say(f"{self.who(p)} said \"{heard[0]}\"")
        self.table = t
        self.legal = peak_moves(t["peaks"], mask[: self.config.n_moves], self.seat, self.config, names=self.names)

    def _moves_seen(self, before: dict[str, Any], t: dict[str, Any]) -> None:
        """Log the tick's moves as the table shows them: the peak cards gone and the piles they went onto, the
        stocks turned. (Nobody's actions are read: the log holds only what the seat sees change.)"""
        turned = [p for p, (old, new) in enumerate(zip(before["stock_left"], t["stock_left"], strict=True))
                  if new < old]
        for p in turned:
            self._say(f"{self.who(p)} turned {'your' if p == self.seat else 'their'} stock: "
                      f"{card_pretty(STANDARD_CARDS[t['piles'][p]])}")
        for old, new in zip(before["peaks"], t["peaks"], strict=True):
            if old not in (None, "??") and new is None:
                onto = [p for p, top in enumerate(t["piles"]) if top == old and p not in turned]
                where = self.pile_name(onto[0]) if onto else "a pile"
                self._say(f"{card_pretty(STANDARD_CARDS[old])} went onto {where}")

    def pile_name(self, pile: int) -> str:
        return "your pile" if pile == self.seat else f"{self.who(pile)}'s pile"

    def message_moves(self) -> list[Move]:
        """The messages a player may say (``cardzoo.envs.summit_rush.text.message_moves``)."""
        return message_moves(self.config)

    def table_json(self) -> dict[str, Any]:
        t = self.table
        spa = self.config.seconds_per_action
        heard = [None if h is None else {"who": self.who(p), "message": h[0], "ago": h[1]}
                 for p, h in enumerate(t["heard"] or [])]
        return {
            "peaks": [None if c is None else "back" if c == "??" else c for c in t["peaks"]],
            "piles": [{"top": top, "owner": self.who(p), "stock_left": t["stock_left"][p]}
                      for p, top in enumerate(t["piles"])],
            "time_left": t["time_left"], "seconds_left": None if t["time_left"] is None else t["time_left"] * spa,
            "seconds_per_action": spa, "wrap": t["wrap"], "heard": heard if self.config.talk else None,
            "messages": [m.to_json() for m in self.message_moves()] or None,
        }

    def text(self) -> str:
        t = self.table
        clock = "untimed" if t["time_left"] is None else (
            f"{t['time_left']} moves left ({t['time_left'] * self.config.seconds_per_action:g} s of game time)")
        lines = [f"Summit Rush - {clock}   round the corner {'on' if t['wrap'] else 'off'}"]
        for row, start in enumerate(summit.ROW_START):
            chars = [" "] * (CELL * 10 + 2)
            for pos in range(start, start + summit.ROWS[row]):
                x = round(COLUMNS[pos] * CELL)
                card = t["peaks"][pos]
                face = "  .  " if card is None else "[###]" if card == "??" else \
                    f"[{card_pretty(STANDARD_CARDS[card]):>3}]"
                chars[x : x + 5] = face
            lines.append("".join(chars).rstrip())
        for p, top in enumerate(t["piles"]):
            lines.append(f"{self.pile_name(p)}: {card_pretty(STANDARD_CARDS[top])}   stock: {t['stock_left'][p]} left")
        if t["heard"] is not None:
            heard = [f"{self.who(p)}: \"{h[0]}\" ({_ago(h[1])})"
                     for p, h in enumerate(t["heard"]) if h]
            lines.append("last said - " + ("; ".join(heard) if heard else "nothing yet"))
        return "\n".join(lines)


def view_class(game) -> type[SeatView]:
    """The seat view of ``game`` (a name or an env id): the registry's ``seat_view``."""
    from cardzoo.envs.registry import spec

    return spec(game).load("seat_view")


def make_view(game: str, env, seat: int) -> SeatView:
    """The view of ``seat`` at a table of ``env`` (its public options only: levels, players, the clock)."""
    return view_class(game).at_table(env, seat)


# ---------------------------------------------------------------------------- the end of a game
def result(game: str, info: dict[str, Any], seat: int) -> str:
    """``seat``'s result from the end-of-game info: "win", "loss" or (Rook) "tie"."""
    return view_class(game).result(info, seat)


def outcome_text(game: str, info: dict[str, Any], seat: int) -> str:
    """One sentence on how the game ended, for ``seat`` (the page and the terminal show it; tests compare it with
    the replay of the saved record). ``info`` is the env's end-of-game info, which holds no cards."""
    return view_class(game).outcome_text(info, seat)
