"""Summit Rush games for evaluation, played tick by tick so that a record can say more than the final info: wasted
stock turns, and in talking games what each message was followed by.

The game is the one ``play_env_game`` plays through the AEC form (every seat acts on the observation at the start
of the tick, in seat order; tested equal), played on the Parallel env underneath it: :func:`game_steps` as a
generator of the moves it needs (so the runner can play many games at once), :func:`play_game` with one agent per
seat. Its record is the final info and each seat's total reward, plus:

- ``needless_turns``: stock cards turned in a tick in which a free card fitted some pile at the start of the tick
  (the document's tip: turn only when nothing fits);
- ``double_turns``: in a tick in which nothing fitted, the turns after the first (one fresh card was needed, "only
  one of you turns"). A *wasted turn* is either; ``needless_turns + double_turns`` per game is what the report shows.
- ``speaker`` and ``listener`` (talking games only): for each message said in a tick (message 0, nothing, too) and
  the tick after it, what the speaker did in that next tick and what each other player did, as counts keyed
  ``"<message>:<what>"``. *What* is ``turn``, ``wait``, ``named`` (a play of the card the message names: the claimed
  position for "I'm taking"; a card of the needed rank onto the speaker's pile for "I need"; any card onto the
  speaker's pile for "<rank> on my pile") or ``play`` (any other card). The next tick is the first in which the
  message is heard.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Generator, Sequence
from typing import Any

from cardzoo.agents.loops import drive
from cardzoo.envs.summit_rush import rules

WHAT = ("turn", "wait", "named", "play")


def what(game: rules.State, move: int, message: int, speaker: int) -> str:
    """What a move made at the start of a tick was, relative to a message heard in it (see the module docstring)."""
    n = game.config.players
    if move == rules.N_PEAKS * n:
        return "turn"
    if move > rules.N_PEAKS * n:
        return "wait"
    pos, pile = divmod(move, n)
    if rules.SAY_TAKING <= message:
        named = pos == message - rules.SAY_TAKING
    elif rules.SAY_ON_PILE <= message:
        named = pile == speaker
    elif rules.SAY_NEED <= message:
        named = pile == speaker and game.peaks[pos] % 13 == message - rules.SAY_NEED
    else:
        named = False
    return "named" if named else "play"


def play_game(env, agents: Sequence, seed: int) -> dict[str, Any]:
    """One game of Summit Rush (``env`` from ``make_env``; its Parallel env is played), with the counts above."""
    return drive(game_steps(env, seed), agents)


def game_steps(env, seed: int) -> Generator[tuple[int, Any, Any], int, dict[str, Any]]:
    """:func:`play_game`'s game as a generator: yields ``(seat, observation, action_mask)`` for each move, in seat
    order within a tick, is sent the move, and returns the record."""
    par = env.unwrapped
    obs, _ = par.reset(seed=seed)
    seats = par.possible_agents
    n_moves = par.n_moves
    talk = par.config.talk
    totals = [0.0] * len(seats)
    needless = double = 0
    speaker: Counter[str] = Counter()
    listener: Counter[str] = Counter()
    said: list[int] | None = None  # each seat's message of the last tick
    final: dict[str, Any] = {}
    while par.agents:
        joint = []
        for i, a in enumerate(seats):
            joint.append((yield i, obs[a]["observation"], obs[a]["action_mask"]))
        messages, moves = zip(*(divmod(int(a), n_moves) for a in joint), strict=True)
        game = par.game
        turners = sum(1 for m in moves if m == par.TURN)
        if rules.play_bits(game):
            needless += turners
        else:
            double += max(turners - 1, 0)
        if talk and said is not None:
            for sp, message in enumerate(said):
                for seat, move in enumerate(moves):
                    key = f"{message}:{what(game, move, message, sp)}"
                    (speaker if seat == sp else listener)[key] += 1
        said = list(messages)
        obs, rewards, _, _, infos = par.step(dict(zip(seats, joint, strict=True)))
        for i, a in enumerate(seats):
            totals[i] += rewards.get(a, 0.0)
            if a in infos and infos[a]:
                final = infos[a]
    record = {**final, "returns": totals, "needless_turns": needless, "double_turns": double}
    if talk:
        record.update(speaker=dict(speaker), listener=dict(listener))
    return record
