"""Summit Rush's convention partners (``agents/summit_rush_partners.py``): the simple strategy with one convention
changed each, for the benchmark's partner pool.

Each partner is registered; acts on its observations only (a twin game that relabels every card its seat has not
seen gives it the same observations and it decides the same -- checked in a talking game here, in every silent
variant by ``test_no_peeking.py``, which covers every registry agent -- and a partner that peeks is caught); plays
whole games of every level and variant, with itself and with ``simple``, without an illegal move and saying nothing
in talking games; replays a game identically from the same seed. For each convention, a hand-built position where
the partner's move differs from ``simple``'s in the way its docstring says (the test states simple's move too, so
a change to simple shows up here as well).
"""

from __future__ import annotations

import gc

import numpy as np
import pytest

from cardzoo.agents.registry import DESCRIPTIONS, agent_names, make_agent
from cardzoo.agents.summit_rush_partners import (
    PARTNERS,
    Down,
    EagerTurn,
    Leftmost,
    PartnerPile,
    PatientTurn,
    RandomCard,
    Slow,
    TalkDeliver,
    Uncover,
)
from cardzoo.agents.summit_rush_simple import SummitRushSimple
from cardzoo.agents.summit_rush_talk import SummitRushSimpleTalk
from cardzoo.envs import summit_rush_v0
from cardzoo.envs.common.cards import CARD_NAMES
from cardzoo.envs.summit_rush import rules
from cardzoo.envs.summit_rush.observer import decode
from cardzoo.envs.summit_rush.rules import N_PEAKS, SAY_NEED, SAY_NOTHING, Config

from .hidden_worlds import GAMES, Diverged, check_no_peeking

NAMES = [p.name for p in PARTNERS]
GAME = "summit_rush_v0"
TALKERS = {TalkDeliver.name}  # the partners whose convention is a talking one; the others say nothing


def test_every_partner_is_registered_and_described():
    assert len(PARTNERS) >= 6
    for cls in PARTNERS:
        assert cls.name in agent_names(GAME) and cls.convention in DESCRIPTIONS[cls.name]
        agent = make_agent(cls.name, GAME, seed=1)
        assert type(agent) is cls and isinstance(agent, SummitRushSimple)
    assert len({cls.convention for cls in PARTNERS}) == len(PARTNERS)


# ---------------------------------------------------------------------------- whole games
def settings() -> list[dict]:
    """Every level with each player count it has (1 = solo), silent and talking, plus untimed and no wrap."""
    levels = [{"level": level, "talk": talk, **({"solo": True} if players == 1 else {"players": players})}
              for level, per_players in rules.LEVELS.items() for players in per_players for talk in (True, False)]
    return levels + [{"time_limit": None, "talk": False}, {"wrap": False, "talk": True}]


def play(options: dict, seed: int, names: list[str]) -> tuple[dict, list[dict]]:
    """A strict game (an illegal action raises) through the parallel env, seat i playing ``names[i % len]`` seeded
    from the game seed; the final info and every tick's actions."""
    env = summit_rush_v0.parallel_env(**options, illegal_action="raise")
    obs, _ = env.reset(seed=seed)
    agents = [make_agent(names[i % len(names)], GAME, seed=seed * 10 + i) for i in range(len(env.possible_agents))]
    log, info = [], {}
    while env.agents:
        actions = {a: agents[i].act(obs[a]["observation"], obs[a]["action_mask"])
                   for i, a in enumerate(env.possible_agents)}
        log.append(actions)
        obs, _, _, _, infos = env.step(actions)
        info = infos[env.possible_agents[0]]
    return info, log


@pytest.mark.parametrize("name", NAMES)
def test_partner_plays_every_level_and_variant_and_says_nothing(name):
    """With itself and beside simple (simple_talk for a talking partner), every setting: no illegal action (the env
    raises), the game ends by the rules, and in a talking game every action carries message 0 unless the
    partner's convention is a talking one (which then does talk)."""
    outcomes, said = set(), 0
    mate = "simple_talk" if name in TALKERS else "simple"
    for i, options in enumerate(settings()):
        players = 1 if options.get("solo") else options.get("players", 2)
        moves = N_PEAKS * players + 2
        for team in ([name], [name, mate]):
            info, log = play(options, seed=i, names=team)
            outcomes.add(info["outcome"])
            assert info["outcome"] in ("win", "stuck", "time", "tick_limit")
            mine = [a for actions in log for seat, a in enumerate(actions.values()) if team[seat % len(team)] == name]
            said += sum(a >= moves for a in mine)
            if name not in TALKERS or not options["talk"]:
                assert all(0 <= a < moves for a in mine), (name, options)
    assert "win" in outcomes
    assert (said > 0) == (name in TALKERS)


@pytest.mark.parametrize("name", NAMES)
def test_partner_replays_a_game_from_its_seed(name):
    first = play({"level": "normal", "talk": False}, 7, [name, "simple"])
    assert play({"level": "normal", "talk": False}, 7, [name, "simple"]) == first


def test_random_card_draws_from_its_seed():
    games = {str(play({"level": "hard", "talk": False}, 3, ["summit_random_card"])[1]) for _ in range(2)}
    assert len(games) == 1
    env = summit_rush_v0.parallel_env(level="hard", talk=False)
    obs, _ = env.reset(seed=3)
    o, m = obs["player_0"]["observation"], obs["player_0"]["action_mask"]
    assert len({RandomCard(seed).act(o, m) for seed in range(20)}) > 1  # another seed, another card


# ---------------------------------------------------------------------------- observations only
@pytest.mark.parametrize("name", NAMES)
def test_partner_decides_the_same_in_games_its_seat_cannot_tell_apart(name):
    """A talking game (the partners play silently in it): at the first, a middle and the last decision, the twin
    game that relabels every card the seat has not seen gives the same observations and the same decisions."""
    changed = 0
    for seat, seed in ((0, 11), (1, 12)):
        others = {1 - seat: make_agent("simple_talk", GAME, seed=seed)}
        changed += check_no_peeking(GAMES[GAME], {"level": "normal", "talk": True}, seed, seat,
                                    lambda s=seed: make_agent(name, GAME, seed=s), others)
    assert changed >= 2  # the twins really moved hidden cards


class _PeeksAtItsStock(Leftmost):
    """A leak: turns its stock whenever its next stock card's rank is odd, read from the live game it is in."""

    def act_bits(self, bits, legal, size=None, n_actions=None):
        seen = decode(bits, size, n_actions)
        live = [o for o in gc.get_objects() if type(o) is rules.State and o.outcome is None
                and tuple(o.tops) == seen.tops and o.present == seen.present]
        card = live[-1].stock_card(seen.seat) if live else None
        turn = N_PEAKS * seen.piles
        if card is not None and legal >> turn & 1 and card % 2:
            return turn
        return super().act_bits(bits, legal, size, n_actions)


def test_a_peeking_partner_is_caught():
    caught = 0
    for seed in range(4):
        try:
            check_no_peeking(GAMES[GAME], {"level": "normal", "talk": False}, seed, seed % 2,
                             lambda s=seed: _PeeksAtItsStock(seed=s), {1 - seed % 2: make_agent("simple", GAME)})
        except Diverged:
            caught += 1
    assert caught >= 2


# ---------------------------------------------------------------------------- one convention each
# Aces, 2s and 9s: the pile tops below (5, 6, Q and the runs' 4, 7, J) are never one rank from them.
FILL = [name for name in CARD_NAMES if name[0] in "A29"]


def position(bottom: dict[int, str], tops: tuple[str, ...] = ("5C", "QC"), removed: tuple[int, ...] = ()):
    """An untimed two-player table: the bottom row's cards at the positions given (the rest filled from ``FILL``),
    each pile showing ``tops[p]`` with one stock card left, and the bottom-row positions ``removed`` already played.
    Returns the state and its observer."""
    named = set(bottom.values()) | set(tops)
    fill = iter(name for name in FILL if name not in named)
    row = [bottom.get(pos) or next(fill) for pos in range(18, 28)]
    rest = [name for name in CARD_NAMES if name not in set(row) | set(tops)]
    deck = rest[:18] + row + [tops[0], rest[18], tops[1], rest[19]] + rest[20:]
    cfg = Config(players=2, stock=2, time_limit=None)
    s = rules.new_game(cfg, [CARD_NAMES.index(name) for name in deck], 0)
    for pos in removed:
        s.present &= ~(1 << pos)
        s.up &= ~(1 << pos)
    for d in range(18):  # nothing removed here may leave a face-down card uncovered
        assert not (s.present >> d & 1 and not s.up >> d & 1) or s.present & rules.COVER_MASK[d]
    return s, summit_rush_v0.Observer(cfg)


def decide(agent, s: rules.State, observer, seat: int) -> int:
    legal = rules.legal_bits(s, seat)
    mask = np.array([legal >> a & 1 for a in range(s.config.n_actions)], np.int8)
    return agent.act(observer.observe(s, seat), mask)


def moves(cls, s, observer, seat: int, times: int = 1) -> list[int]:
    """The moves of a fresh ``cls`` agent deciding ``times`` ticks in a row on the same table (nothing changed)."""
    agent = cls(seed=0)
    return [decide(agent, s, observer, seat) for _ in range(times)]


WAIT, TURN = 2 * N_PEAKS + 1, 2 * N_PEAKS


def play_at(pos: int, pile: int) -> int:
    return pos * 2 + pile


def test_partner_pile_serves_the_next_seats_run_first():
    # Pile 0 (5C) takes the 4H at 18, pile 1 (QC) the JS at 27, nothing else fits: a run of one card each.
    s, obs = position({18: "4H", 27: "JS"})
    assert moves(SummitRushSimple, s, obs, 0) == [play_at(18, 0)]
    assert moves(PartnerPile, s, obs, 0) == [play_at(27, 1)]  # the partner's pile's run, not its own
    assert moves(PartnerPile, s, obs, 1) == [play_at(18, 0)]
    # Pile 1 shows the 6C: nothing fits it, so its run is empty. Simple's seat 1 waits; this one serves its
    # partner's pile, and its seat 0 falls back on its own.
    s, obs = position({18: "4H"}, tops=("5C", "6C"))
    assert moves(SummitRushSimple, s, obs, 1) == [WAIT]
    assert moves(PartnerPile, s, obs, 1) == [play_at(18, 0)]
    assert moves(PartnerPile, s, obs, 0) == [play_at(18, 0)]


def test_leftmost_takes_the_leftmost_fitting_card_not_the_one_that_uncovers():
    # 5C on pile 0: the 6S at 18 fits and uncovers nothing; the 4H at 27 fits and, with 26 gone, uncovers 17.
    s, obs = position({18: "6S", 27: "4H"}, removed=(26,))
    assert moves(SummitRushSimple, s, obs, 0) == [play_at(27, 0)]
    assert moves(Leftmost, s, obs, 0) == [play_at(18, 0)]


def test_uncover_takes_what_uncovers_now_not_the_run_that_uncovers_most():
    # 5C on pile 0. The 4H at 18 (19 gone) uncovers 9 now, and its run ends there. The 6S at 24 uncovers nothing
    # now, but the run 6S (24), 7D (25) uncovers 15 and (26 gone) 16: simple starts that run.
    s, obs = position({18: "4H", 24: "6S", 25: "7D"}, removed=(19, 26))
    assert moves(SummitRushSimple, s, obs, 0) == [play_at(24, 0)]
    assert moves(Uncover, s, obs, 0) == [play_at(18, 0)]


def test_down_continues_below_the_top_first():
    # 5C on pile 0: the 6S at 18 (19 gone: it uncovers 9) goes up, the 4H at 27 goes down and uncovers nothing.
    s, obs = position({18: "6S", 27: "4H"}, removed=(19,))
    assert moves(SummitRushSimple, s, obs, 0) == [play_at(18, 0)]
    assert moves(Leftmost, s, obs, 0) == [play_at(18, 0)]  # not just another position order
    assert moves(Down, s, obs, 0) == [play_at(27, 0)]


NOTHING_FITS: dict[int, str] = {}  # 5C and QC on the piles, only aces, 2s and 9s in the bottom row


def test_eager_turn_turns_whoever_has_turned_fewer():
    s, obs = position(NOTHING_FITS)
    assert rules.play_bits(s) == 0
    # Both have turned nothing: simple leaves the turn to seat 0, seat 1 waits. The eager seat 1 turns too.
    assert moves(SummitRushSimple, s, obs, 1) == [WAIT] and moves(SummitRushSimple, s, obs, 0) == [TURN]
    assert moves(EagerTurn, s, obs, 1) == [TURN]
    assert moves(EagerTurn, s, obs, 0) == [TURN]


def test_patient_turn_waits_two_idle_ticks_before_turning():
    s, obs = position(NOTHING_FITS)
    assert moves(SummitRushSimple, s, obs, 0, times=3) == [TURN] * 3
    assert moves(PatientTurn, s, obs, 0, times=4) == [WAIT, WAIT, TURN, WAIT]  # and waits again after a turn
    assert moves(PatientTurn, s, obs, 1, times=4) == [WAIT] * 4  # not its turn: it waits, as simple's seat 1


def test_slow_acts_every_other_tick():
    s, obs = position({18: "4H", 27: "JS"})
    assert moves(SummitRushSimple, s, obs, 0, times=4) == [play_at(18, 0)] * 4
    assert moves(Slow, s, obs, 0, times=4) == [play_at(18, 0), WAIT] * 2


def test_random_card_plays_any_fitting_card_onto_any_pile():
    # Three cards fit: 6S (18) and 4H (27) on pile 0, JS (25) on pile 1. Simple's seat 0 plays its run on pile 0;
    # the random partner's seat 0 plays each of the three over seeds, the partner's pile too.
    s, obs = position({18: "6S", 25: "JS", 27: "4H"}, removed=(19,))
    assert moves(SummitRushSimple, s, obs, 0) == [play_at(18, 0)]
    chosen = {decide(RandomCard(seed), s, obs, 0) for seed in range(30)}
    assert chosen == {play_at(18, 0), play_at(27, 0), play_at(25, 1)}
    s, obs = position(NOTHING_FITS)
    assert {decide(RandomCard(seed), s, obs, 1) for seed in range(10)} == {WAIT}  # simple's stock rule


def talking_position(bottom: dict[int, str], said: dict[int, int]):
    """``position`` in a talking game one tick in, each seat in ``said`` having said that message last tick."""
    s, _ = position(bottom)
    cfg = Config(players=2, stock=2, time_limit=None, talk=True)
    s.config = cfg
    s.tick = 1
    for seat, message in said.items():
        s.said[seat] = (message, 0)
    return s, summit_rush_v0.Observer(cfg)


def talk_decide(agent, s: rules.State, observer, seat: int) -> tuple[int, int]:
    """(move, message) of ``agent`` at ``seat``: every message goes with every legal move, as the env's mask."""
    n_moves = s.config.n_moves
    legal = rules.legal_bits(s, seat)
    mask = np.tile(np.array([legal >> a & 1 for a in range(n_moves)], np.int8), s.config.n_messages)
    action = agent.act(observer.observe(s, seat), mask)
    return action % n_moves, action // n_moves


def test_talk_deliver_plays_what_the_partner_called_for_onto_its_pile():
    # Seat 1 (QC) said "I need a Jack" last tick; the JS at 27 has come free. Pile 0 (5C) takes the 4H at 18.
    jack = SAY_NEED + CARD_NAMES.index("JC")  # the rank index of the Jack
    s, obs = talking_position({18: "4H", 27: "JS"}, {1: jack})
    assert talk_decide(SummitRushSimpleTalk(), s, obs, 0)[0] == play_at(18, 0)  # its own run: the call is news
    assert talk_decide(TalkDeliver(), s, obs, 0) == (play_at(27, 1), SAY_NOTHING)  # delivers the Jack
    # The caller leaves the Jack to its partner for this tick; simple_talk plays it itself.
    assert talk_decide(SummitRushSimpleTalk(), s, obs, 1)[0] == play_at(27, 1)
    assert talk_decide(TalkDeliver(), s, obs, 1) == (WAIT, SAY_NOTHING)
    # Without the call it plays as simple_talk does.
    s, obs = talking_position({18: "4H", 27: "JS"}, {})
    for seat in (0, 1):
        assert talk_decide(TalkDeliver(), s, obs, seat) == talk_decide(SummitRushSimpleTalk(), s, obs, seat)
