"""Summit Rush's talking simple strategy: it says the document's calls when its tips say so, and what it hears
changes what it does (hand-built positions: the same table with different messages heard); muted, it plays the
silent strategy's games. Legality and no collisions are checked with the silent strategy's tests in
``test_summit_rush_agents.py``, which run both strategies; no peeking in ``test_no_peeking.py``, for every agent."""

from __future__ import annotations

import numpy as np
import pytest

from cardzoo.agents.loops import play_env_game
from cardzoo.agents.registry import make_agent
from cardzoo.agents.summit_rush_simple import SummitRushSimple
from cardzoo.agents.summit_rush_talk import Muted, SummitRushSimpleTalk, heard
from cardzoo.envs import summit_rush_v0
from cardzoo.envs.common.cards import CARD_NAMES
from cardzoo.envs.summit_rush import rules
from cardzoo.envs.summit_rush.observer import HEARD_AGES
from cardzoo.envs.summit_rush.rules import Config

CFG = Config(players=2, stock=2, time_limit=None, talk=True)
OBSERVER = summit_rush_v0.Observer(CFG)
N_MOVES = CFG.n_moves
TURN, WAIT = N_MOVES - 2, N_MOVES - 1
NOTHING_FITS = ["2C", "2D", "2S", "3C", "3D", "9C", "9D", "TC", "TD", "8C"]  # nothing here fits a 5 or a Queen


def position(bottom: list[str], stocks: list[list[str]], gone: tuple[int, ...] = ()) -> rules.State:
    """A talking game at tick 1 with ``bottom`` as the bottom row (18..27) and each seat's stock (its first card
    starts its pile), bottom-row positions ``gone`` already played."""
    used = set(bottom) | {c for stock in stocks for c in stock}
    rest = [name for name in CARD_NAMES if name not in used]
    deck = rest[:18] + bottom + [c for stock in stocks for c in stock] + rest[18:]
    s = rules.new_game(CFG, [CARD_NAMES.index(name) for name in deck], 0)
    for pos in gone:
        s.present &= ~(1 << pos)
        s.up &= ~(1 << pos)
    s.tick = 1
    return s


def decide(s: rules.State, seat: int, said: dict[int, int] | None = None, agent=None) -> tuple[int, int]:
    """(message, move) of a talking strategy in ``seat`` that heard ``said`` (seat -> message) during the last tick."""
    s = s.copy()
    for q, message in (said or {}).items():
        s.said[q] = (message, s.tick - 1)
    mask = np.tile(np.array([rules.is_legal(s, seat, a) for a in range(N_MOVES)], np.int8), CFG.n_messages)
    agent = agent or SummitRushSimpleTalk()
    return divmod(agent.act(OBSERVER.observe(s, seat), mask), N_MOVES)


def claim(pos: int) -> int:
    return rules.SAY_TAKING + pos


def need(rank: str) -> int:
    return rules.SAY_NEED + rules.RANK_NAMES.index(rank)


def test_it_reads_the_heard_pieces_where_the_env_puts_them():
    env = summit_rush_v0.parallel_env(level="hard", players=3)
    obs, _ = env.reset(seed=2)
    said = {"player_0": rules.SAY_TURN, "player_1": 0, "player_2": claim(21)}
    obs, *_ = env.step({a: m * env.n_moves + env.WAIT for a, m in said.items()})
    obs, *_ = env.step({a: env.WAIT for a in env.agents})
    vector = obs["player_1"]["observation"]
    bits = int.from_bytes(np.packbits(vector.view(np.uint8), bitorder="little").tobytes(), "little")
    assert heard(bits, vector.shape[0], 3) == [(rules.SAY_TURN, 1), None, (claim(21), 1)]


def test_it_claims_the_next_card_of_its_run_and_calls_what_it_needs():
    # Pile 0 shows the 5C, pile 1 the QC. The 6H (18) and then the 7D (19) make pile 0's run; nothing fits the
    # Queen. Seat 0 plays the 6H and claims the 7D for next tick; seat 1 waits and calls a King (four unseen, as
    # Jacks, and the higher rank wins the tie).
    s = position(["6H", "7D", *NOTHING_FITS[:8]], [["5C", "KH"], ["QC", "3H"]])
    assert decide(s, 0) == (claim(19), 18 * 2 + 0)
    assert decide(s, 1) == (need("King"), WAIT)


def test_it_announces_a_turn_it_can_foresee_and_only_then():
    # The 6H (18) is the last card that fits and uncovers nothing (19 still covers 9): after it nothing fits, so
    # seat 0 (the turner: no one has turned yet) says "I'll turn" as it plays it.
    s = position(["6H", *NOTHING_FITS[:9]], [["5C", "KH"], ["QC", "3H"]])
    assert decide(s, 0) == (rules.SAY_TURN, 18 * 2 + 0)
    assert decide(s, 1)[0] != rules.SAY_TURN  # not the turner
    # With 19 gone the 6H uncovers a card nobody has seen: a turn is not certain, so nothing is announced.
    uncovering = position(["6H", *NOTHING_FITS[:9]], [["5C", "KH"], ["QC", "3H"]], gone=(19,))
    assert decide(uncovering, 0) == (rules.SAY_NOTHING, 18 * 2 + 0)


def test_it_objects_to_a_needless_turn():
    s = position(["6H", *NOTHING_FITS[:9]], [["5C", "KH"], ["QC", "3H"]])
    assert decide(s, 0, {1: rules.SAY_TURN}) == (rules.SAY_DONT_TURN, 18 * 2 + 0)  # the 6H still fits
    stuck = position(NOTHING_FITS, [["5C", "KH"], ["QC", "3H"]])
    assert decide(stuck, 0, {1: rules.SAY_TURN})[0] != rules.SAY_DONT_TURN  # nothing fits: the turn is needed


def test_it_calls_the_card_it_turned():
    # Nothing fits; seat 0 turns the KH. Next tick nothing fits the King either: seat 0 says "King on my pile".
    s = position(NOTHING_FITS, [["5C", "KH"], ["QC", "3H"]])
    agent = SummitRushSimpleTalk()
    assert decide(s, 0, agent=agent) == (rules.SAY_NOTHING, TURN)
    rules.play_tick(s, [TURN, WAIT], (0, 1))
    assert decide(s, 0, agent=agent)[0] == rules.SAY_ON_PILE + rules.RANK_NAMES.index("King")
    assert decide(s, 0)[0] != rules.SAY_ON_PILE + rules.RANK_NAMES.index("King")  # a player who did not turn


def test_a_claim_heard_changes_who_plays_the_card():
    # Pile 0 shows the 5C, pile 1 the 7S: the 6H (18) fits both. Silently the plan gives it to one seat; a claim
    # by the other seat, heard now, gives it to the claimant: the listener leaves it, the claimant plays it.
    s = position(["6H", *NOTHING_FITS[:9]], [["5C", "KH"], ["7S", "3H"]])
    silent = [decide(s, seat)[1] for seat in (0, 1)]
    taker = next(seat for seat in (0, 1) if silent[seat] != WAIT)
    other = 1 - taker
    assert silent[taker] == 18 * 2 + taker
    said = {other: claim(18)}
    assert decide(s, taker, said)[1] == WAIT
    assert decide(s, other, said)[1] == 18 * 2 + other
    # A claim on a card that no longer fits the claimant's pile is void: the plan stands.
    void = {other: claim(19)}  # the 2C fits neither pile
    assert [decide(s, seat, void)[1] for seat in (0, 1)] == silent
    # A claim heard a tick late is stale and ignored.
    late = s.copy()
    late.said[other] = (claim(18), late.tick - 2)
    mask = np.tile(np.array([rules.is_legal(late, taker, a) for a in range(N_MOVES)], np.int8), CFG.n_messages)
    stale = SummitRushSimpleTalk().act(OBSERVER.observe(late, taker), mask) % N_MOVES
    assert stale == silent[taker]


def test_two_claims_on_one_card_go_to_the_lower_seat():
    s = position(["6H", *NOTHING_FITS[:9]], [["5C", "KH"], ["7S", "3H"]])
    both = {0: claim(18), 1: claim(18)}
    assert [decide(s, seat, both)[1] for seat in (0, 1)] == [18 * 2 + 0, WAIT]


@pytest.mark.parametrize("call", [rules.SAY_TURN, rules.SAY_DONT_TURN])
def test_a_turn_call_heard_keeps_the_turner_from_turning(call):
    # Nothing fits. Silently seat 0 turns (no one has turned yet, the lower seat turns) and seat 1 waits.
    s = position(NOTHING_FITS, [["5C", "KH"], ["QC", "3H"]])
    assert [decide(s, seat)[1] for seat in (0, 1)] == [TURN, WAIT]
    # Seat 1 said "I'll turn" (or objected to a turn): seat 0 waits.
    assert decide(s, 0, {1: call})[1] == WAIT
    if call == rules.SAY_TURN:  # ... and seat 1, bound by its own call, turns
        assert decide(s, 1, {1: call})[1] == TURN


def test_in_a_silent_game_it_is_the_silent_strategy():
    env = summit_rush_v0.env(level="hard", silent=True)
    for seed in range(4):
        talking = play_env_game(env, [SummitRushSimpleTalk(), SummitRushSimpleTalk()], seed)
        assert talking == play_env_game(env, [SummitRushSimple(), SummitRushSimple()], seed)


def test_muted_it_plays_the_silent_strategys_games():
    """Muted (every message replaced by nothing), nothing is heard, so nothing binds it: the same games as the silent
    strategy's, move for move; talking, it says something in every game and the games differ in places."""
    env = summit_rush_v0.env(level="hard")
    said = 0
    for seed in range(6):
        muted = play_env_game(env, [make_agent("simple_talk_muted", "summit_rush_v0") for _ in range(2)], seed)
        silent = play_env_game(env, [SummitRushSimple(), SummitRushSimple()], seed)
        assert muted == silent and muted["messages"] == 0
        said += play_env_game(env, [SummitRushSimpleTalk(), SummitRushSimpleTalk()], seed)["messages"]
    assert said > 6 * 20
    assert isinstance(make_agent("simple_talk", "summit_rush_v0"), SummitRushSimpleTalk)
    assert isinstance(make_agent("simple_talk_muted", "summit_rush_v0"), Muted)


def test_the_learned_talking_team_hears_only_what_was_said():
    """A game of the learned talking policy with the talking simple strategy: what each seat hears is exactly the
    last message the other chose (message 0 says nothing and leaves the last one standing), and its age."""
    env = summit_rush_v0.parallel_env(level="normal")
    agents = [make_agent("learned_talk", "summit_rush_v0"), SummitRushSimpleTalk()]
    obs, _ = env.reset(seed=4)
    last: list = [None, None]
    tick, said = 0, 0
    while env.agents:
        expected = [None if m is None else (m[0], min(tick - 1 - m[1], HEARD_AGES - 1)) for m in last]
        for agent in env.agents:  # each seat hears both, itself too
            vector = obs[agent]["observation"]
            bits = int.from_bytes(np.packbits(vector.view(np.uint8), bitorder="little").tobytes(), "little")
            assert heard(bits, vector.shape[0], 2) == expected
        actions = {}
        for seat, agent in enumerate(env.agents):
            actions[agent] = agents[seat].act(obs[agent]["observation"], obs[agent]["action_mask"])
            message = actions[agent] // env.n_moves
            if message:
                last[seat], said = (message, tick), said + (seat == 0)
        obs, *_ = env.step(actions)
        tick += 1
    assert said > 10  # the learned seat talks


def test_muted_the_learned_talking_team_says_nothing_and_moves_the_same():
    """The ablation mutes: on every observation the muted policy's action is the talking policy's move with message
    0, and a muted team's games carry no message at all (while the talking team's do)."""
    talking, muted = make_agent("learned_talk", "summit_rush_v0"), make_agent("learned_talk_muted", "summit_rush_v0")
    assert isinstance(muted, Muted)
    assert [p.digest for p in muted.policies.values()] == [p.digest for p in talking.policies.values()]  # cache key
    env = summit_rush_v0.parallel_env(level="normal")
    obs, _ = env.reset(seed=2)
    while env.agents:
        for agent in env.agents:
            o, m = obs[agent]["observation"], obs[agent]["action_mask"]
            assert muted.act(o, m) == talking.act(o, m) % env.n_moves
        obs, *_ = env.step({a: talking.act(obs[a]["observation"], obs[a]["action_mask"]) for a in env.agents})
    aec = summit_rush_v0.env(level="normal")
    for seed in range(2):
        assert play_env_game(aec, [make_agent("learned_talk_muted", "summit_rush_v0") for _ in range(2)],
                             seed)["messages"] == 0
        assert play_env_game(aec, [make_agent("learned_talk", "summit_rush_v0") for _ in range(2)],
                             seed)["messages"] > 10
