"""Summit Rush's dead-top convention (:mod:`cardzoo.agents.summit_rush_turns`): when nothing fits, the seat whose pile
top has the fewest cards still to come that fit it turns; two players who keep it never turn twice or stall in a
tick; a stranger who names the other seat, or never turns, does not stall the game; a partner's "I'll turn" is
heard; every other move is the wrapped agent's."""

from __future__ import annotations

import copy

import pytest

from cardzoo.agents.registry import make_agent
from cardzoo.agents.summit_rush_simple import SummitRushSimple, Table, decode
from cardzoo.agents.summit_rush_turns import DOUBLE_BELOW, DeadTopTurns, clock_ticks, dead_top_turner, outs
from cardzoo.envs import summit_rush_v0
from cardzoo.envs.common.errors import OptionError
from cardzoo.envs.common.layout import to_bits
from cardzoo.envs.summit_rush import rules
from cardzoo.envs.summit_rush.rules import N_PEAKS


def _table(s: rules.State) -> Table:
    observer = summit_rush_v0.Observer(s.config)
    obs = observer.observe(s, 0)
    return Table(decode(to_bits(obs), obs.shape[0], s.config.n_actions))


def _decoded(observation, n_actions: int):
    return decode(to_bits(observation), observation.shape[0], n_actions)


def _stuck_ticks(games: int = 8):
    """States of simple's games (Normal, silent) at the ticks where nothing fits and both stocks hold cards."""
    env = summit_rush_v0.parallel_env(level="normal", talk=False)
    team = [SummitRushSimple(), SummitRushSimple()]
    for seed in range(games):
        obs, _ = env.reset(seed=seed)
        for a in team:
            a.reset()
        while env.agents:
            if not rules.play_bits(env.game) and all(env.game.stock_left):
                yield env.game.copy()
            obs, *_ = env.step({n: team[i].act(obs[n]["observation"], obs[n]["action_mask"])
                                for i, n in enumerate(env.possible_agents)})


def _unseen(s: rules.State) -> list[int]:
    """The cards no player has seen, from the full state: face-down peaks, unturned stock cards, cards set aside."""
    down = [s.peaks[d] for d in range(N_PEAKS) if s.present >> d & 1 and not s.up >> d & 1]
    stocks = [c for p, st in enumerate(s.stocks) for c in st[len(st) - s.stock_left[p]:]]
    return down + stocks + list(s.aside)


def test_outs_are_the_unseen_cards_one_rank_from_the_top():
    checked = 0
    for s in _stuck_ticks():
        table = _table(s)
        for pile in range(2):
            top = s.tops[pile] % 13
            near = {(top + 1) % 13, (top - 1) % 13}
            assert outs(table, pile) == sum(1 for c in _unseen(s) if c % 13 in near)
            checked += 1
    assert checked > 40


def test_the_dead_top_turns_ties_to_the_seat_that_turned_fewest_then_the_lower_seat():
    differ = 0
    for s in _stuck_ticks():
        table = _table(s)
        o = [outs(table, 0), outs(table, 1)]
        if o[0] != o[1]:
            differ += 1
            assert dead_top_turner(table, [5, 0]) == dead_top_turner(table, [0, 5]) == o.index(min(o))
        else:
            assert dead_top_turner(table, [0, 0]) == 0 and dead_top_turner(table, [2, 1]) == 1
        table.tops = (table.tops[1], table.tops[1])  # the same top on both piles: the same outs
        assert dead_top_turner(table, [0, 0]) == 0 and dead_top_turner(table, [2, 1]) == 1
    assert differ > 10


@pytest.mark.parametrize("seat_names", [("learned", "learned"), ("simple", "simple")])
def test_only_the_dead_top_seat_turns_and_the_rest_is_the_wrapped_agent(seat_names):
    """Every tick of real games: where a play is legal the wrapper's action is the wrapped agent's; where nothing
    fits exactly one seat turns, and it is the convention's."""
    env = summit_rush_v0.parallel_env(level="normal", illegal_action="raise")
    inner = [make_agent(n, "summit_rush_v0", seed=0) for n in seat_names]
    twins = [make_agent(n, "summit_rush_v0", seed=0) for n in seat_names]  # the same agents, unwrapped
    team = [DeadTopTurns(a, double_below=0) for a in inner]  # the convention alone: one turner
    stuck_ticks = 0
    for seed in range(6):
        obs, _ = env.reset(seed=seed)
        for a in team + twins:
            a.reset(seed)
        while env.agents:
            s = env.game.copy()
            names = env.possible_agents
            actions = [team[i].act(obs[n]["observation"], obs[n]["action_mask"]) for i, n in enumerate(names)]
            plain = [twins[i].act(obs[n]["observation"], obs[n]["action_mask"]) for i, n in enumerate(names)]
            moves = [a % s.config.n_moves for a in actions]
            turn = N_PEAKS * 2
            if rules.play_bits(s):
                assert actions == plain
            elif any(s.stock_left):
                stuck_ticks += 1
                turners = [i for i, m in enumerate(moves) if m == turn]
                named = dead_top_turner(_table(s), team[0].memory.turned)
                assert turners == [named] if s.stock_left[named] else len(turners) <= 1
            obs, *_ = env.step(dict(zip(names, actions, strict=True)))
    assert stuck_ticks > 20


class _NeverTurns(SummitRushSimple):
    """A stranger who waits whenever nothing fits."""

    def move(self, table, legal, chains):
        move = super().move(table, legal, chains)
        return N_PEAKS * table.piles + 1 if move == N_PEAKS * table.piles else move


def test_a_partner_who_never_turns_does_not_stall_the_game():
    """Beside a partner who never turns, the wrapped seat turns after one idle tick, whatever the convention names:
    never two idle ticks in a row while it holds a stock card."""
    env = summit_rush_v0.parallel_env(time_limit=None, illegal_action="raise")
    for seed in range(5):
        obs, _ = env.reset(seed=seed)
        team = [DeadTopTurns(make_agent("simple", "summit_rush_v0")), _NeverTurns()]
        for a in team:
            a.reset()
        idle_run, ticks = 0, 0
        while env.agents:
            s = env.game.copy()
            actions = {n: team[i].act(obs[n]["observation"], obs[n]["action_mask"])
                       for i, n in enumerate(env.possible_agents)}
            stuck = not rules.play_bits(s) and s.stock_left[0]
            idle_run = idle_run + 1 if stuck and actions["player_0"] % s.config.n_moves != N_PEAKS * 2 else 0
            assert idle_run <= 1, "two idle ticks in a row with a stock card to turn"
            obs, _, _, _, infos = env.step(actions)
            ticks += 1
            assert ticks < 2000
        # once its own stock is empty only the stranger could turn, and it never does: then the game runs out
        assert infos["player_0"]["outcome"] in ("win", "stuck") or env.game.stock_left[0] == 0


def test_a_partners_announced_turn_is_left_to_the_partner():
    """A talking game at a tick where nothing fits and the convention names seat 0: after seat 1 says "I'll turn",
    seat 0 waits; after the same tick in silence, it turns."""
    env = summit_rush_v0.parallel_env(time_limit=None)
    agent = DeadTopTurns(make_agent("simple", "summit_rush_v0"))
    for seed in range(50):
        obs, _ = env.reset(seed=seed)
        agent.reset()
        plain = [SummitRushSimple(), SummitRushSimple()]
        while env.agents:
            g = env.game
            first = agent.act(obs["player_0"]["observation"], obs["player_0"]["action_mask"])
            if not rules.play_bits(g) and all(g.stock_left) and dead_top_turner(_table(g), agent.memory.turned) == 0:
                break
            obs, *_ = env.step({n: plain[i].act(obs[n]["observation"], obs[n]["action_mask"])
                                for i, n in enumerate(env.possible_agents)})
        if env.agents:
            break
    else:
        raise AssertionError("no tick in 50 games where nothing fits and the convention names seat 0")
    assert first % env.n_moves == env.TURN
    quiet = copy.deepcopy((env, agent))
    wait = env.WAIT
    obs, *_ = env.step({"player_0": wait, "player_1": rules.SAY_TURN * env.n_moves + wait})
    assert agent.act(obs["player_0"]["observation"], obs["player_0"]["action_mask"]) % env.n_moves == wait
    env, agent = quiet
    obs, *_ = env.step({"player_0": wait, "player_1": wait})
    assert agent.act(obs["player_0"]["observation"], obs["player_0"]["action_mask"]) % env.n_moves == env.TURN


@pytest.mark.parametrize("level", ["expert", "hard"])
def test_on_a_short_clock_the_seat_not_named_keeps_its_own_agents_turn(level):
    """Games of ``learned``: at a stuck tick of an Expert game (30 ticks for 28 peak cards, under ``double_below``
    ticks a card) the turners are the named seat and every seat whose policy turns; at Hard (40 ticks), the named
    seat alone. The clock is read from the observation as the rules have it."""
    env = summit_rush_v0.parallel_env(level=level, talk=False, illegal_action="raise")
    inner = [make_agent("learned", "summit_rush_v0", seed=0) for _ in range(2)]
    twins = [make_agent("learned", "summit_rush_v0", seed=0) for _ in range(2)]
    team = [DeadTopTurns(a) for a in inner]
    short = level == "expert"
    stuck = doubles = 0
    turn = N_PEAKS * 2
    for seed in range(30):
        obs, _ = env.reset(seed=seed)
        assert short == (env.game.config.ticks < DOUBLE_BELOW * N_PEAKS)
        for a in team + twins:
            a.reset(seed)
        while env.agents:
            s = env.game.copy()
            names = env.possible_agents
            assert clock_ticks(_decoded(obs[names[0]]["observation"], s.config.n_actions)) == s.config.ticks
            actions = [team[i].act(obs[n]["observation"], obs[n]["action_mask"]) for i, n in enumerate(names)]
            named = dead_top_turner(_table(s), team[0].memory.turned)  # the turns it counted at this tick
            plain = [twins[i].act(obs[n]["observation"], obs[n]["action_mask"]) % s.config.n_moves == turn
                     for i, n in enumerate(names)]
            if not rules.play_bits(s) and all(s.stock_left):
                stuck += 1
                turners = [i for i, a in enumerate(actions) if a % s.config.n_moves == turn]
                assert turners == (sorted({named} | {i for i in range(2) if plain[i]}) if short else [named])
                doubles += len(turners) == 2
            obs, *_ = env.step(dict(zip(names, actions, strict=True)))
    assert stuck > 20 and (doubles > 5 if short else doubles == 0)


def test_double_below_must_be_a_number_of_ticks_and_zero_turns_doubles_off():
    for bad in (-1, float("nan"), "1.5", None, True):
        with pytest.raises(OptionError, match="double_below must be a number of ticks per card"):
            DeadTopTurns(make_agent("simple", "summit_rush_v0"), double_below=bad)
    env = summit_rush_v0.parallel_env(level="expert", talk=False)
    obs, _ = env.reset(seed=0)
    seen = _decoded(obs["player_0"]["observation"], env.game.config.n_actions)
    assert DeadTopTurns(make_agent("simple", "summit_rush_v0"))._short_clock(seen)  # Expert: 30 ticks, 28 cards
    assert not DeadTopTurns(make_agent("simple", "summit_rush_v0"), double_below=0)._short_clock(seen)
    untimed = summit_rush_v0.parallel_env(time_limit=None, talk=False)
    obs, _ = untimed.reset(seed=0)
    assert clock_ticks(_decoded(obs["player_0"]["observation"], untimed.game.config.n_actions)) is None
    assert not DeadTopTurns(make_agent("simple", "summit_rush_v0"), double_below=100)._short_clock(
        _decoded(obs["player_0"]["observation"], untimed.game.config.n_actions))  # no clock: never short
    custom = summit_rush_v0.parallel_env(time_limit=57.0, talk=False)  # 19 ticks: short, but no level's clock
    obs, _ = custom.reset(seed=0)
    assert clock_ticks(_decoded(obs["player_0"]["observation"], custom.game.config.n_actions)) is None
