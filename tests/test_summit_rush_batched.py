"""The batched Summit Rush engines play exactly the single env's games (cardzoo.envs.summit_rush.batched).

Lockstep: N single ParallelEnvs reset with the batch's seeds take the batch's actions, and after every step the
observations, masks, rewards, done flags, truncations, final infos, final observations and records must be equal;
when a game ends the single env is reset with the seed the batch gave the slot's next game. The actions come from a
policy that mostly plays cards (so games are won, cards collide and piles change under them), sometimes waits a lot
(so clocks and tick limits run out) and says random things in talking games.
"""

from __future__ import annotations

import warnings
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cardzoo.envs import replay, summit_rush_v0
from cardzoo.envs.batched import make_batched
from cardzoo.envs.common.cards import CARD_NAMES
from cardzoo.envs.common.errors import DeckError, IllegalActionError, IllegalActionWarning, OptionError
from cardzoo.envs.common.generators import permutations
from cardzoo.envs.summit_rush import rules
from cardzoo.envs.summit_rush.batched import SummitRushBatched, SummitRushParallel

from .lockstep import Agents
from .lockstep import choose_ticks as choose
from .lockstep import lockstep as run_lockstep
from .test_summit_rush_properties import neighbours


def lockstep(options: dict, n: int, steps: int, seed: int = 0, illegal: float = 0.0) -> Counter:
    """Play ``steps`` random ticks of ``n`` games both ways (tests/lockstep.py), checking everything every tick;
    returns what happened (game outcomes, and redirected/bounced/conflicts/turned/messages summed over the
    finished games)."""
    return run_lockstep("summit_rush_v0", n, steps, seed=seed, illegal=illegal, **options)


@pytest.mark.parametrize("options, n, steps, ends", [
    ({}, 48, 900, "win stuck time"),  # talking, Normal, two players: ~900 games
    ({"silent": True}, 32, 600, "win stuck time"),
    ({"players": 3}, 32, 500, "win stuck time"),
    ({"players": 3, "level": "hard", "silent": True, "wrap": False}, 24, 300, "win stuck time"),
    ({"solo": True, "silent": True, "max_ticks": 100}, 24, 600, "win stuck tick_limit"),  # untimed
    ({"level": "expert", "wrap": False}, 24, 300, "stuck time"),
    ({"time_limit": None, "max_ticks": 150, "silent": True}, 24, 500, "win stuck tick_limit"),  # 64 ticks a block
    ({"stock": 3, "time_limit": 45.0, "seconds_per_action": 1.5, "players": 3}, 24, 200, "win stuck time"),
], ids=str)
def test_parallel_engine_equals_single_env(options, n, steps, ends):
    seen = lockstep(options, n, steps, seed=len(str(options)))
    assert sum(seen[k] for k in ("win", "time", "stuck", "tick_limit")) >= 150, seen
    assert all(seen[end] >= 3 for end in ends.split()), seen  # the games ended every way this variant ends
    if summit_rush_v0.make_config(**options).players > 1:  # cards collided and piles changed under them
        assert seen["conflicts"] and seen["redirected"] and seen["bounced"], seen
    if "silent" not in options:
        assert seen["messages"], seen


@pytest.mark.parametrize("names, n, steps, options", [
    (("simple",), 8, 200, {}), (("learned",), 8, 200, {"silent": True}),
    (("simple", "learned"), 8, 200, {"silent": True, "level": "hard"}), (("simple_talk",), 8, 200, {"players": 3}),
    (("search",), 2, 60, {"silent": True}),
], ids=str)
def test_parallel_engine_equals_single_env_with_shipped_agents(names, n, steps, options):
    """The shipped agents, every seat acting on its own observation each tick, see the same games both ways."""
    seen = run_lockstep("summit_rush_v0", n, steps, Agents(*names), seed=5, **options)
    assert seen["games"] >= n, seen
    assert seen["win"] >= 1, seen


@pytest.mark.parametrize("mode", ["penalize", "wait"])
def test_illegal_actions_like_the_single_env(mode):
    seen = lockstep({"players": 3, "illegal_action": mode}, 24, 300, seed=4, illegal=0.03)
    if mode == "penalize":
        assert seen["illegal"] >= 50, seen


class TickGames:
    """N single ParallelEnvs asked one seat at a time, as TickEnv asks them: the reference for the protocol form and
    its vector views. ``decide(actions)`` gives each game's asked seat its action; a tick is played once every seat
    has chosen (or at once after an illegal action, the seats still to choose waiting)."""

    def __init__(self, seeds, **options):
        self.envs = [summit_rush_v0.parallel_env(**options) for _ in seeds]
        self.agents = self.envs[0].possible_agents
        self.current = [env.reset(seed=int(s))[0] for env, s in zip(self.envs, seeds, strict=True)]
        self.chosen: list[dict] = [{} for _ in seeds]

    def seat(self, i: int) -> int:
        return len(self.chosen[i])

    def view(self, i: int) -> dict:
        return self.current[i][self.agents[self.seat(i)]]

    def decide(self, i: int, action: int):
        """Returns None while the tick is being asked, else the single env's step results for the game."""
        env, agent = self.envs[i], self.agents[self.seat(i)]
        legal = self.view(i)["action_mask"][action] == 1
        self.chosen[i][agent] = action
        if len(self.chosen[i]) < len(self.agents) and legal:
            return None
        self.chosen[i].update({a: env.WAIT for a in self.agents if a not in self.chosen[i]})
        results = env.step(self.chosen[i])
        self.chosen[i], self.current[i] = {}, results[0]
        return results

    def restart(self, i: int, seed: int) -> None:
        self.current[i] = self.envs[i].reset(seed=seed)[0]


def test_protocol_form_asks_one_seat_at_a_time_as_tick_env():
    """make_batched("summit_rush_v0"): each step is the decision of one seat, from the start-of-tick observation;
    the tick is played with the last seat's decision (an illegal one ends the game there, the rest waiting)."""
    for options, n, steps in (({}, 24, 500), ({"players": 3, "silent": True}, 24, 600),
                              ({"solo": True, "max_ticks": 30}, 16, 300)):
        eng = make_batched("summit_rush_v0", n, **options)
        assert isinstance(eng, SummitRushBatched)
        games = TickGames(range(77, 77 + n), **options)
        agents = games.agents
        rng = np.random.default_rng(1)
        obs, mask, seat = eng.reset(seeds=77)
        ended = Counter()
        for _ in range(steps):
            assert seat.tolist() == [games.seat(i) for i in range(n)]
            assert np.array_equal(obs, [games.view(i)["observation"] for i in range(n)])
            assert np.array_equal(mask, [games.view(i)["action_mask"] for i in range(n)])
            actions = np.argmax(rng.random(mask.shape) * mask, axis=1)
            wild = rng.random(n) < 0.01
            actions = np.where(wild, rng.integers(0, eng.num_actions, n), actions)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", IllegalActionWarning)
                obs, mask, seat, rewards, done = eng.step(actions)
                for i in range(n):
                    results = games.decide(i, int(actions[i]))
                    if results is None:
                        assert not done[i] and not rewards[i].any()
                        continue
                    o, r, _, trunc, info = results
                    assert rewards[i].tolist() == [r[a] for a in agents] and done[i] == (not games.envs[i].agents)
                    if done[i]:
                        assert eng.finished_info(i) == info[agents[0]] and eng.truncated[i] == trunc[agents[0]]
                        assert eng.finished_record(i) == games.envs[i].game_record()
                        if info[agents[0]]["outcome"] != "illegal":  # the single env's final view, last seat's
                            assert np.array_equal(eng.final_obs[i], o[agents[-1]]["observation"])
                        ended[info[agents[0]]["outcome"]] += 1
                        games.restart(i, int(eng.seeds[i]))
        assert sum(ended.values()) >= 100 and ended["illegal"] >= 3, ended
        for i in range(n):  # a tick half asked is not played yet, so not in the record
            assert eng.record(i) == games.envs[i].game_record()


def test_gymnasium_vector_view_asks_each_seat_as_tick_env():
    """BatchedVectorEnv over the protocol form: the deciding seat's reward, a game's end by its rules as a
    termination and the tick limit as a truncation, the final observation and outcome of each ended game."""
    from cardzoo.envs.vector import BatchedVectorEnv

    n, options = 8, {"silent": True, "stock": 4, "max_ticks": 25}
    envs = BatchedVectorEnv(make_batched("summit_rush_v0", n, **options))
    obs, infos = envs.reset(seed=900)
    games = TickGames(range(900, 900 + n), **options)
    rng = np.random.default_rng(4)
    ends = Counter()
    for _ in range(300):
        assert np.array_equal(obs, [games.view(i)["observation"] for i in range(n)])
        assert np.array_equal(envs.action_masks(), [games.view(i)["action_mask"] == 1 for i in range(n)])
        assert infos["seat"].tolist() == [games.seat(i) for i in range(n)]
        actions = np.argmax(rng.random((n, envs.single_action_space.n)) * envs.action_masks(), axis=1)
        actions[:4] = np.where(rng.random(4) < 0.7, games.envs[0].WAIT, actions[:4])  # these reach the tick limit
        obs, rewards, terminated, truncated, infos = envs.step(actions)
        for i in range(n):
            results = games.decide(i, int(actions[i]))
            if results is None:
                assert rewards[i] == 0 and not terminated[i] and not truncated[i]
                continue
            o, r, term, trunc, info = results
            agent = games.agents[-1]
            assert rewards[i] == r[agent] and terminated[i] == term[agent] and truncated[i] == trunc[agent]
            if term[agent] or trunc[agent]:
                assert np.array_equal(infos["final_obs"][i], o[agent]["observation"])
                assert infos["final_info"]["outcome"][i] == info[agent]["outcome"]
                ends[info[agent]["outcome"]] += 1
                games.restart(i, int(envs.engine.seeds[i]))
    assert ends["tick_limit"] >= 5 and ends["stuck"] + ends["win"] >= 5, ends


def test_maskable_ppo_trains_on_the_sb3_view_of_summit_rush():
    """MaskablePPO, unchanged, learns on silent Summit Rush through the SB3 VecEnv view of the protocol form; the
    engine raises on any illegal action, so every action it took respected the masks; games of at most 25 ticks
    (50 decisions) end and are replaced within the 64 steps of a rollout."""
    from sb3_contrib import MaskablePPO

    from cardzoo.training.batched_vec import BatchedVecEnv

    vec = BatchedVecEnv(make_batched("summit_rush_v0", 16, silent=True, max_ticks=25, illegal_action="raise"))
    model = MaskablePPO("MlpPolicy", vec, n_steps=64, batch_size=256, n_epochs=1, seed=3,
                        policy_kwargs={"net_arch": [32]})
    model.learn(1024)
    assert model.num_timesteps == 1024 and vec.engine.next_seed >= 3 + 2 * 16  # every slot's game was replaced


def test_records_replay_in_the_single_env():
    eng = SummitRushParallel(6, players=3, level="hard")
    rng = np.random.default_rng(3)
    obs, mask = eng.reset(seeds=[5, 2**40, 0, 2**63 - 1, 9, 12], next_seed=500)
    ended, started = set(), 0
    for _ in range(60):
        obs, mask, _, done = eng.step(choose(rng, mask, eng, np.zeros(6, bool)))
        ended |= set(np.flatnonzero(done).tolist())
        started += int(done.sum())
    assert ended
    for i in sorted(ended):
        env = replay(eng.finished_record(i))
        assert not env.agents and env.outcome_info == eng.finished_info(i)
    for i in range(6):
        env = replay(eng.record(i))
        assert np.array_equal(obs[i], [env.observer.observe(env.game, q) for q in range(3)])
    # the stream: later games took next_seed = 500, 501, ... one per game started
    assert eng.next_seed == 500 + started and all(500 <= s < eng.next_seed for s in eng.seeds[sorted(ended)])


def test_explicit_decks_are_the_single_envs_deck_option():
    rng = np.random.default_rng(8)
    decks = [None, [CARD_NAMES[c] for c in rng.permutation(52)], None, [CARD_NAMES[c] for c in rng.permutation(52)]]
    eng = SummitRushParallel(4, silent=True)
    obs, mask = eng.reset(seeds=[1, 2, 3, 4], decks=decks)
    envs = [summit_rush_v0.parallel_env(silent=True) for _ in range(4)]
    current = [env.reset(seed=i + 1, options=None if d is None else {"deck": d})[0]
               for i, (env, d) in enumerate(zip(envs, decks, strict=True))]
    assert eng.record(1)["reset_options"] == {"deck": decks[1]} and eng.record(0)["reset_options"] == {}
    for _ in range(25):
        assert np.array_equal(obs, [[c[a]["observation"] for a in envs[0].possible_agents] for c in current])
        for i in range(4):
            assert eng.record(i) == envs[i].game_record()
        actions = choose(rng, mask, eng, np.zeros(4, bool))
        obs, mask, _, done = eng.step(actions)
        current = [env.step({a: int(actions[i, q]) for q, a in enumerate(env.possible_agents)})[0]
                   for i, env in enumerate(envs)]
        if done.any():
            break
    with pytest.raises(DeckError):
        eng.reset(seeds=0, decks=[None, None, None, ["AS"] * 52])
    with pytest.raises(OptionError, match="one entry per game"):
        eng.reset(seeds=0, decks=[None])


def test_touch_orders_are_the_python_generators():
    """The order blocks drawn with getrandbits are random.Random(order_seed).random() tick by tick, for one- and
    two-word order seeds, three players (six orders, the full 53-bit fraction) and the blocks after the first."""
    import random

    eng = SummitRushParallel(3, players=3, time_limit=None, max_ticks=200, silent=True)
    eng.reset(seeds=0)
    e = eng.engine
    seeds = [0, 12345, 2**62 + 7]
    e._order_seed[:] = seeds
    e._order_from[:] = 0
    got = []
    for _ in range(3):
        e._draw_orders(np.arange(3))
        got.append(e._order.copy())
        e._order_from += e._block
    for slot, seed in enumerate(seeds):
        reference = random.Random(seed)
        expected = [int(reference.random() * 6) for _ in range(3 * e._block)]
        assert np.concatenate([block[slot] for block in got]).tolist() == expected, seed


def test_order_seed_after_the_deal_is_numpys():
    seeds = np.array([0, 1, 2**32 - 1, 2**32, 2**63 - 1] + list(range(1000, 1400)))
    perms, after = permutations(seeds, 52, 1, then_uint64=True)
    for i, seed in enumerate(seeds.tolist()):
        rng = np.random.default_rng(seed)
        assert perms[i, 0].tolist() == rng.permutation(52).tolist()
        assert int(after[i]) >> 1 == int(rng.integers(2**63)), seed


def test_illegal_raise_mode_and_malformed_actions_change_nothing():
    eng = SummitRushParallel(4, illegal_action="raise")
    obs, mask = eng.reset(seeds=3)
    actions = np.full((4, 2), eng.WAIT)
    actions[2, 1] = 0  # the card at position 0 onto pile 0: it is face down at the start
    with pytest.raises(IllegalActionError, match=r"game 2 \(player_1, action 0\)"):
        eng.step(actions)
    for bad, message in (([[0, 0]], r"shape \(4, 2\)"), (np.full((4, 2), 1.5), "integers"),
                         (np.full((4, 2), eng.num_actions), "out of range")):
        with pytest.raises(IllegalActionError, match=message):
            eng.step(bad)
    assert np.array_equal(eng.engine.observe(slice(None)), obs) and eng.record(0)["actions"] == []
    eng.step(np.full((4, 2), eng.WAIT))
    assert eng.record(0)["actions"] == [{"player_0": eng.WAIT, "player_1": eng.WAIT}]
    with pytest.raises(OptionError, match="illegal_action"):
        SummitRushParallel(2, illegal_action="ignore")
    with pytest.raises(OptionError, match="render_mode"):
        make_batched("summit_rush_v0", 2, render_mode="ansi")
    with pytest.raises(OptionError, match="mask"):
        SummitRushParallel(2, mask="some")
    with pytest.raises(IllegalActionError, match="before reset"):
        SummitRushParallel(2).step(np.zeros((2, 2), int))


def test_move_mask_fast_path():
    full, fast = SummitRushParallel(16), SummitRushParallel(16, mask="moves")
    rng = np.random.default_rng(2)
    (obs, mask), (obs2, moves) = full.reset(seeds=40), fast.reset(seeds=40)
    for _ in range(80):
        assert moves.shape == (16, 2, full.n_moves) and np.array_equal(obs, obs2)
        assert np.array_equal(mask, np.tile(moves, (1, 1, rules.N_MESSAGES)))
        actions = choose(rng, mask, full, np.zeros(16, bool))
        (obs, mask, r, d), (obs2, moves, r2, d2) = full.step(actions), fast.step(actions)
        assert np.array_equal(r, r2) and np.array_equal(d, d2)


# ----------------------------------------------------------------- properties
OPTION_SETS = [{}, {"silent": True}, {"players": 3}, {"players": 3, "level": "hard", "wrap": False},
               {"solo": True}, {"time_limit": None, "silent": True}]


def _oracle_moves(eng, i: int) -> np.ndarray:
    """The legal moves of every seat of game ``i`` from the engine's cards and the cover map (not its masks or
    its face-up set): int8[P, 28 * P + 2]."""
    e, p = eng.engine, eng.players
    present = int(e.present[i])
    out = np.zeros((p, eng.n_moves), np.int8)
    for pos in range(rules.N_PEAKS):
        free = present >> pos & 1 and not any(present >> q & 1 for q in rules.COVERED_BY[pos])
        for pile in range(p):
            if free and neighbours(int(e.peaks[i, pos]), int(e.tops[i, pile]), eng.config.wrap):
                out[:, pos * p + pile] = 1
    out[:, eng.TURN] = e.stock_left[i] > 0
    out[:, eng.WAIT] = 1
    return out


@settings(max_examples=25, deadline=None)
@given(options=st.sampled_from(OPTION_SETS), seed=st.integers(0, 2**63 - 1), ticks=st.integers(0, 60),
       policy=st.integers(0, 2**32 - 1))
def test_cards_conserved_and_masks_are_the_legal_moves(options, seed, ticks, policy):
    eng = SummitRushParallel(4, **options)
    rng = np.random.default_rng(policy)
    obs, mask = eng.reset(seeds=[seed, seed // 2, seed // 3, seed // 5], next_seed=0)
    e = eng.engine
    for _ in range(ticks):
        for i in range(4):
            moves = _oracle_moves(eng, i)
            assert np.array_equal(mask[i], np.tile(moves, (1, eng.config.n_messages)))
            held = [int(e.peaks[i, pos]) for pos in range(28) if e.present[i] >> pos & 1]
            held += np.flatnonzero(e.on_piles[i]).tolist() + e.aside[i].tolist()
            for q in range(eng.players):
                held += e.stocks[i, q, eng.config.stock - e.stock_left[i, q]:].tolist()
            assert sorted(held) == list(range(52))  # every card exactly once
            turned = int(e.counters[i, 3])
            assert e.on_piles[i].sum() == 28 - int(e.present[i]).bit_count() + turned + eng.players
        obs, mask, _, _ = eng.step(choose(rng, mask, eng, rng.random(4) < 0.3))


def _hidden_moved(eng, i: int, deck: list[int], rng: np.random.Generator) -> list[int]:
    """``deck`` with the cards game ``i`` still hides (face-down peaks, unturned stock cards, the cards set aside)
    moved round their places, every one to another place if there are two or more."""
    e, c = eng.engine, eng.config
    places = [pos for pos in range(28) if e.present[i] >> pos & 1 and not e.up[i] >> pos & 1]
    for q in range(c.players):
        places += range(28 + q * c.stock + c.stock - int(e.stock_left[i, q]), 28 + (q + 1) * c.stock)
    places += range(28 + c.players * c.stock, 52)
    out = list(deck)
    shift = int(rng.integers(1, len(places))) if len(places) > 1 else 0
    for place, card in zip(places, np.roll([deck[p] for p in places], shift).tolist(), strict=True):
        out[place] = card
    return out


@settings(max_examples=25, deadline=None)
@given(options=st.sampled_from(OPTION_SETS), seed=st.integers(0, 2**63 - 1), ticks=st.integers(1, 40),
       policy=st.integers(0, 2**32 - 1))
def test_resampling_hidden_cards_leaves_every_observation_identical(options, seed, ticks, policy):
    """Play ``ticks`` ticks of a deal, move the cards still hidden at the end round their places (each to another
    place: the decks differ whenever two or more are hidden, as they are until late in a game), and play the same
    actions again beside the first deal: every observation and mask on the way is the same."""
    deck = np.random.default_rng(seed).permutation(52).tolist()
    first = SummitRushParallel(1, **options)
    rng, shuffle = np.random.default_rng(policy), np.random.default_rng(policy + 1)
    obs, mask = first.reset(seeds=[seed], decks=[[CARD_NAMES[c] for c in deck]], next_seed=0)
    played = []
    while True:
        other = _hidden_moved(first, 0, deck, shuffle)  # what is hidden after the ticks played so far
        if len(played) == ticks:
            break
        actions = choose(rng, mask, first, np.zeros(1, bool))
        obs, mask, _, done = first.step(actions)
        if done[0]:  # the slot holds the next game now: keep the hidden cards of the last tick before the end
            break
        played.append(actions)
    both = SummitRushParallel(2, **options)
    obs, mask = both.reset(seeds=[seed, seed], decks=[[CARD_NAMES[c] for c in d] for d in (deck, other)], next_seed=0)
    for actions in [*played, None]:
        assert np.array_equal(obs[0], obs[1]) and np.array_equal(mask[0], mask[1])
        if actions is not None:
            obs, mask, _, _ = both.step(np.repeat(actions, 2, axis=0))
