"""Summit Rush's simple strategy and its perfect-information oracle.

The agent (the silent strategy, and its talking version in talking games, which these properties hold for too): it
only plays legal actions, it turns a stock card only when nothing fits and then only one seat turns, and the two
seats never reach for the same card or pile (no peeking, for every agent: ``test_no_peeking.py``). The oracle: every
winning line it returns wins when replayed with the rules; on small hand-built positions it agrees with a
brute-force search over the rules; an exhausted budget gives ``None``. The evaluation runner's AEC loop plays the
same games as a plain parallel loop.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from cardzoo.agents.loops import play_env_game
from cardzoo.agents.oracles.summit_rush import schedule, solve, solve_timed
from cardzoo.agents.registry import make_agent
from cardzoo.agents.summit_rush_simple import SummitRushSimple
from cardzoo.agents.summit_rush_talk import SummitRushSimpleTalk
from cardzoo.envs import summit_rush_v0
from cardzoo.envs.common.cards import CARD_NAMES
from cardzoo.envs.summit_rush import rules
from cardzoo.envs.summit_rush.rules import N_PEAKS, Config

STRATEGIES = [SummitRushSimple, SummitRushSimpleTalk]


def play_parallel(options: dict, seed: int, agents=None, deck: list[str] | None = None, check=None,
                  strategy=SummitRushSimple):
    """A game through the parallel env (``strategy`` in every seat unless ``agents`` are given); ``check(state_before,
    actions)`` sees every tick. Returns the observation and action log, the final info and the final state."""
    env = summit_rush_v0.parallel_env(**options)
    obs, _ = env.reset(seed=seed, options={"deck": deck} if deck else None)
    agents = agents or [strategy() for _ in env.possible_agents]
    for agent in agents:
        agent.reset()
    log, info = [], {}
    while env.agents:
        actions = {a: agents[i].act(obs[a]["observation"], obs[a]["action_mask"])
                   for i, a in enumerate(env.possible_agents)}
        log.append((tuple(obs[a]["observation"].tobytes() for a in env.possible_agents), tuple(actions.values())))
        if check is not None:
            check(env.game.copy(), list(actions.values()))
        obs, _, _, _, infos = env.step(actions)
        info = infos[env.possible_agents[0]]
        assert len(log) < 2000, "an untimed game of the simple strategy must end"
    return log, info, env.game


# ---------------------------------------------------------------------------- the agent
@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("options", [{}, {"level": "hard"}, {"time_limit": None, "wrap": False, "stock": 10},
                                     {"solo": True}, {"players": 3}, {"players": 3, "level": "hard"}])
def test_agent_plays_legally_turns_only_when_nothing_fits_and_never_collides(options, strategy):
    def check(s: rules.State, joint: list[int]) -> None:
        n = s.config.players
        turn = N_PEAKS * n
        actions = [a % s.config.n_moves for a in joint]  # the moves (a talking player also says something)
        for seat, a in enumerate(actions):
            assert rules.is_legal(s, seat, a)
        turners = [seat for seat, a in enumerate(actions) if a == turn]
        if rules.play_bits(s):
            assert not turners, "a stock card was turned while a free card fit a pile"
        elif any(s.stock_left):
            assert len(turners) == 1, "nothing fits: exactly one seat turns"
            assert s.stock_left[turners[0]] == max(s.stock_left)  # the fullest stock (stocks start equal)
        plays = [divmod(a, n) for a in actions if a < turn]
        assert len({pos for pos, _ in plays}) == len(plays) and len({p for _, p in plays}) == len(plays)

    for seed in range(15):
        _, info, _ = play_parallel(options, seed, check=check, strategy=strategy)
        assert info["conflicts"] == info["bounced"] == info["redirected"] == 0


def test_agent_with_a_random_partner_stays_legal():
    env_agents = [SummitRushSimple(), make_agent("random", "summit_rush_v0", seed=3)]
    for seed in range(10):
        _, info, _ = play_parallel({"illegal_action": "raise"}, seed, agents=env_agents)  # raises on an illegal move
        assert info["outcome"] != "illegal"


def test_agent_prefers_the_card_that_uncovers():
    # Pile 0 shows the 5C, pile 1 the QC. Of the bottom row only the 4H (18) and the 6S (27) fit, and nothing fits
    # after either. Position 19 is gone, so the 4H uncovers position 9; the 6S's neighbour 26 is there, so it
    # uncovers nothing: seat 0 plays the 4H onto its pile, seat 1 (nothing for its pile) waits.
    bottom = ["4H", "2C", "8C", "TD", "AC", "2D", "8D", "TH", "AD", "6S"]
    stocks = ["5C", "3S", "QC", "3H"]
    used = set(bottom) | set(stocks)
    rest = [name for name in CARD_NAMES if name not in used]
    deck = rest[:18] + bottom + stocks + rest[18:]
    cfg = Config(players=2, stock=2, time_limit=None)
    s = rules.new_game(cfg, [CARD_NAMES.index(name) for name in deck], 0)
    s.present &= ~(1 << 19)
    s.up &= ~(1 << 19)
    plays = rules.play_bits(s)
    assert [divmod(a, 2) for a in range(56) if plays >> a & 1] == [(18, 0), (27, 0)]
    observer = summit_rush_v0.Observer(cfg)
    actions = []
    for seat in range(2):
        mask = np.array([rules.is_legal(s, seat, a) for a in range(cfg.n_actions)], np.int8)
        actions.append(SummitRushSimple().act(observer.observe(s, seat), mask))
    assert actions == [18 * 2 + 0, cfg.n_actions - 1]


def test_registry_and_the_runner_loop_match_a_parallel_loop():
    assert isinstance(make_agent("simple", "summit_rush_v0", seed=1), SummitRushSimple)
    env = summit_rush_v0.env(level="hard")
    for seed in range(5):
        agents = [SummitRushSimple(), SummitRushSimple()]
        record = play_env_game(env, agents, seed)  # the AEC loop: each seat sees the start-of-tick observation
        _, info, _ = play_parallel({"level": "hard"}, seed)
        assert {k: record[k] for k in info} == info


# ---------------------------------------------------------------------------- the oracle
def replay_line(s: rules.State, line: list[tuple[int, int]]) -> rules.State:
    s = s.copy()
    n = s.config.players
    for seat, action in line:
        actions = [N_PEAKS * n + 1] * n
        actions[seat] = action
        assert rules.is_legal(s, seat, action)
        rules.play_tick(s, actions, tuple(range(n)))
    return s


@pytest.mark.parametrize("options", [{"time_limit": None}, {"time_limit": None, "wrap": False, "stock": 10},
                                     {"solo": True}, {"players": 3, "time_limit": None}])
def test_oracle_winning_lines_win_when_replayed(options):
    env = summit_rush_v0.parallel_env(**options)
    decided = 0
    for seed in range(8):
        env.reset(seed=seed)
        sol = solve(env.game.copy(), budget=30_000)
        if sol.winnable:
            assert replay_line(env.game, sol.line).outcome == rules.WIN
        decided += sol.winnable is not None
    assert decided >= 5


@pytest.mark.parametrize("level", ["hard", "expert"])
def test_oracle_timed_lines_win_within_the_clock(level):
    env = summit_rush_v0.parallel_env(level=level)
    for seed in range(6):
        env.reset(seed=seed)
        s = env.game.copy()
        sol = solve_timed(s, budget=30_000)
        if sol.winnable:
            assert len(sol.ticks_line) <= s.config.ticks
            for actions in sol.ticks_line:  # any who-touches-first order: the game's own draws
                assert all(rules.is_legal(s, seat, a) for seat, a in enumerate(actions))
                rules.play_tick(s, actions)
            assert s.outcome == rules.WIN


def small_position(rng: random.Random, players: int, wrap: bool) -> rules.State:
    """A random deal with only a few peak cards left and a couple of stock cards each."""
    stock = 12 if players == 1 else 3  # one pile needs more fresh starts to win anything
    cfg = Config(players=players, stock=stock, time_limit=None, wrap=wrap)
    deck = list(range(52))
    rng.shuffle(deck)
    s = rules.new_game(cfg, deck, 0)
    # A position can only be gone once the cards covering it are: close the kept set under "covers".
    while True:
        present = 0
        todo = rng.sample(range(N_PEAKS), rng.randint(1, 3))
        while todo:
            pos = todo.pop()
            if not present >> pos & 1:
                present |= 1 << pos
                todo += rules.COVERS[pos]
        if 3 <= present.bit_count() <= 7:
            break
    s.present = present
    s.up = sum(1 << p for p in range(N_PEAKS) if present >> p & 1 and not present & rules.COVER_MASK[p])
    s.stock_left = [rng.randint(0, stock - 1) for _ in range(players)]
    return s


def _key(s: rules.State, *extra) -> tuple:
    return (s.present, tuple(s.tops), tuple(s.stock_left), *extra)


def brute_force(s: rules.State, seen: dict | None = None) -> bool:
    """Every sequence of single moves under the rules (one seat acts per tick, the others wait); no pruning, only
    a memo of positions already answered."""
    seen = {} if seen is None else seen
    if s.outcome == rules.WIN or not s.present:
        return True
    if rules.is_stuck(s):
        return False
    key = _key(s)
    if key not in seen:
        n = s.config.players
        seen[key] = False
        for seat in range(n):
            for a in range(N_PEAKS * n + 1):
                if rules.is_legal(s, seat, a):
                    t = s.copy()
                    actions = [N_PEAKS * n + 1] * n
                    actions[seat] = a
                    rules.play_tick(t, actions, tuple(range(n)))
                    if brute_force(t, seen):
                        seen[key] = True
                        return True
    return seen[key]


def brute_force_timed(s: rules.State, ticks: int, seen: dict | None = None) -> bool:
    """Tick by tick: every seat plays a free card onto its own pile, turns, or waits (different cards; a tick
    where everyone waits only loses time and is skipped). Memo of positions already answered."""
    seen = {} if seen is None else seen
    if not s.present:
        return True
    if ticks == 0 or rules.is_stuck(s):
        return False
    key = _key(s, ticks)
    if key in seen:
        return seen[key]
    n = s.config.players
    turn, wait = N_PEAKS * n, N_PEAKS * n + 1
    options = [[a for a in [*(pos * n + p for pos in range(N_PEAKS)), turn, wait] if rules.is_legal(s, p, a)]
               for p in range(n)]

    def joint(p: int, chosen: list[int]) -> bool:
        if p == n:
            cards = [a // n for a in chosen if a < turn]
            if len(set(cards)) < len(cards) or all(a == wait for a in chosen):
                return False
            t = s.copy()
            rules.play_tick(t, chosen, tuple(range(n)))
            return brute_force_timed(t, ticks - 1, seen)
        return any(joint(p + 1, [*chosen, a]) for a in options[p])

    seen[key] = joint(0, [])
    return seen[key]


@pytest.mark.parametrize("players,wrap", [(1, True), (2, True), (2, False), (3, True)])
def test_oracle_agrees_with_brute_force_on_small_positions(players, wrap):
    rng = random.Random(players * 10 + wrap)
    outcomes = set()
    for _ in range(40):
        s = small_position(rng, players, wrap)
        expected = brute_force(s)
        sol = solve(s.copy())
        assert sol.winnable is expected
        if expected:
            assert replay_line(s, sol.line).outcome == rules.WIN
        outcomes.add(expected)
    assert outcomes == {True, False}  # the sample covers both answers


@pytest.mark.parametrize("players", [2, 3])
def test_timed_oracle_agrees_with_brute_force_on_small_positions(players):
    rng = random.Random(players)
    outcomes = set()
    for _ in range(30):
        s = small_position(rng, players, True)
        ticks = rng.randint(2, 5)
        expected = brute_force_timed(s, ticks)
        sol = solve_timed(s.copy(), ticks=ticks)
        assert sol.winnable is expected, (ticks, sol)
        outcomes.add(expected)
    assert outcomes == {True, False}


def test_schedule_of_an_untimed_line_is_playable():
    env = summit_rush_v0.parallel_env(level="normal")
    env.reset(seed=4)
    s = env.game.copy()
    sol = solve(s)
    assert sol.winnable
    ticks = schedule(s, sol.line)
    assert len(ticks) <= len(sol.line)
    for actions in ticks:
        rules.play_tick(s, actions)
    assert s.outcome == rules.WIN


def test_budget_exhaustion_gives_none():
    env = summit_rush_v0.parallel_env(time_limit=None, wrap=False, stock=10)
    env.reset(seed=0)
    sol = solve(env.game.copy(), budget=3)
    assert sol.winnable is None and sol.nodes > 3 and sol.line == []
    assert solve_timed(env.game.copy(), ticks=40, budget=3).winnable is None
    assert solve(env.game.copy()).winnable is not None
