"""The batched Rope Team engine plays exactly the single env's games (cardzoo.envs.rope_team.batched).

Lockstep: N single envs reset with the batch's seeds take the batch's (random legal) actions, and every step the
observations, masks, seats, rewards, done flags, final infos, final observations and records must be equal; when a
game ends the single env is reset with the seed the batch gave the slot's next game.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cardzoo.envs import replay, rope_team_v0
from cardzoo.envs.batched import make_batched
from cardzoo.envs.common.cards import FULL_MASK
from cardzoo.envs.common.errors import IllegalActionError, IllegalActionWarning, OptionError
from cardzoo.envs.rope_team import rules
from cardzoo.envs.rope_team.observer import observe_bits

from .lockstep import Agents
from .lockstep import lockstep as run_lockstep


def _packed(rows: np.ndarray) -> list[int]:
    """Each 0/1 row as the int whose bit i is entry i (the single observer's form)."""
    packed = np.packbits(rows.view(np.uint8), axis=1, bitorder="little")
    return [int.from_bytes(row.tobytes(), "little") for row in packed]


def lockstep(n: int, steps: int, seed: int = 0, **options) -> int:
    """Play ``steps`` random legal steps of ``n`` games both ways (tests/lockstep.py), checking every step; the
    games finished."""
    return run_lockstep("rope_team_v0", n, steps, seed=seed, **options)["games"]


@pytest.mark.parametrize("level", sorted(rules.LEVELS))
def test_batched_equals_single_env_per_level(level):
    assert lockstep(48, 700, seed=1, level=level) >= 1000


@pytest.mark.parametrize("options", [
    {"open_hands": True},
    {"max_deals": 1, "level": "easy"},
    {"max_deals": 2, "ropes": 4},
    {"trumps": False, "ropes": 3, "shaping": 0.25},
    {"level": "expert", "open_hands": True, "shaping": -0.5},
], ids=str)
def test_batched_equals_single_env_per_variant(options):
    assert lockstep(48, 500, seed=2, **options) >= 500


@pytest.mark.parametrize("names, n, steps, level", [
    (("simple",), 16, 300, "normal"), (("learned",), 16, 300, "hard"), (("simple", "learned"), 16, 300, "expert"),
    (("search",), 2, 120, "normal"), (("search", "simple"), 2, 120, "hard"),
], ids=str)
def test_batched_equals_single_env_with_shipped_agents(names, n, steps, level):
    """The shipped agents, each acting on its own observation, see the same games in the engine and the env."""
    seen = run_lockstep("rope_team_v0", n, steps, Agents(*names), seed=5, level=level)
    assert seen["games"] >= 2 * n, seen
    assert seen["win"] >= 1, seen  # agents that play to win (random legal play almost never wins on these levels)


def test_long_games_and_later_deals():
    """Games that reach deals 2 and 3 (four ropes and no trumps keep random play alive) stay equal."""
    eng = make_batched("rope_team_v0", 64, ropes=4)
    reached = np.zeros(4, int)
    rng = np.random.default_rng(5)
    obs, mask, seat = eng.reset(0)
    for _ in range(300):
        obs, mask, seat, _, done = eng.step(np.argmax(rng.random((64, 52)) * mask, axis=1))
        for i in np.flatnonzero(done):
            reached[eng.finished_info(i)["deals"]] += 1
    assert reached[3] >= 20  # later deals are exercised by the lockstep tests above
    assert lockstep(32, 400, seed=3, ropes=4, trumps=False) >= 100


def test_records_replay_in_the_single_env():
    eng = make_batched("rope_team_v0", 8, level="hard")
    rng = np.random.default_rng(0)
    obs, mask, seat = eng.reset(seeds=[5, 9, 2**40, 0, 77, 2**63 - 1, 3, 4], next_seed=1000)
    ended, started = set(), 0
    for _ in range(60):
        obs, mask, seat, _, done = eng.step(np.argmax(rng.random((8, 52)) * mask, axis=1))
        ended |= set(np.flatnonzero(done).tolist())
        started += int(done.sum())
    for i in sorted(ended):
        env = replay(eng.finished_record(i))
        agent = env.possible_agents[0]
        assert env.terminations[agent] and env.unwrapped.infos[agent] == eng.finished_info(i)
    env = replay(eng.record(0))
    assert observe_bits(env.unwrapped.game, int(seat[0])) == _packed(obs[:1])[0]
    # the stream: later games took next_seed = 1000, 1001, ... one per game started
    assert eng.next_seed == 1000 + started and all(1000 <= s < eng.next_seed for s in eng.seeds[list(ended)])


def test_seed_stream_counts_up_in_slot_order():
    eng = make_batched("rope_team_v0", 4, max_deals=1, level="expert")
    eng.reset(seeds=10)
    assert eng.seeds.tolist() == [10, 11, 12, 13] and eng.next_seed == 14
    rng = np.random.default_rng(1)
    mask = eng._current()[1]
    while True:
        _, mask, _, _, done = eng.step(np.argmax(rng.random((4, 52)) * mask, axis=1))
        if done.any():
            break
    assert eng.seeds[done].tolist() == list(range(14, 14 + done.sum())) and eng.next_seed == 14 + done.sum()


def test_seed_stream_used_up_raises_when_a_game_needs_a_seed():
    """A batch holding the largest seed may be dealt and played; only the seed past the largest raises."""
    eng = make_batched("rope_team_v0", 2, max_deals=1)
    obs, mask, seat = eng.reset(seeds=[7, 2**63 - 1])
    assert eng.next_seed == 2**63 and eng.seeds.tolist() == [7, 2**63 - 1]
    rng = np.random.default_rng(2)
    with pytest.raises(OptionError, match="ran past"):
        for _ in range(eng.max_decisions):
            obs, mask, seat, _, done = eng.step(np.argmax(rng.random((2, 52)) * mask, axis=1))
    with pytest.raises(OptionError, match="next_seed"):
        eng.reset(seeds=0, next_seed=2**63)


def test_illegal_action_penalised_like_the_single_env():
    eng = make_batched("rope_team_v0", 3)
    obs, mask, seat = eng.reset(0)
    actions = np.argmax(mask, axis=1)
    bad = int(np.flatnonzero(mask[1] == 0)[0])
    actions[1] = bad
    with pytest.warns(IllegalActionWarning, match="game 1"):
        _, _, _, rewards, done = eng.step(actions)
    assert done.tolist() == [False, True, False] and rewards[1].tolist() == [-1.0, -1.0]
    assert eng.finished_info(1) == {"outcome": "illegal", "illegal_by": "player_0"}
    env = rope_team_v0.raw_env()
    env.reset(seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IllegalActionWarning)
        env.step(bad)
    assert env.game_record() == eng.finished_record(1)
    assert np.array_equal(eng.final_obs[1], env.observe("player_0")["observation"])
    assert eng.seeds[1] == 3  # the slot plays the next game of the stream


def test_illegal_action_raise_mode_changes_nothing():
    eng = make_batched("rope_team_v0", 3, illegal_action="raise")
    obs, mask, seat = eng.reset(0)
    actions = np.argmax(mask, axis=1)
    actions[2] = int(np.flatnonzero(mask[2] == 0)[0])
    with pytest.raises(IllegalActionError, match="game 2"):
        eng.step(actions)
    assert all(len(eng.record(i)["actions"]) == 0 for i in range(3))
    actions[2] = int(np.argmax(mask[2]))
    fresh = make_batched("rope_team_v0", 3, illegal_action="raise")
    fresh.reset(0)
    for got, want in zip(eng.step(actions), fresh.step(actions), strict=True):
        assert np.array_equal(got, want)


@pytest.mark.parametrize("actions, message", [
    (np.zeros(2, int), "shape"), (np.zeros(3, float), "integers"), (np.array([0, 52, 0]), "out of range"),
    (np.array([-1, 0, 0]), "out of range"),
])
def test_malformed_actions_raise(actions, message):
    eng = make_batched("rope_team_v0", 3)
    eng.reset(0)
    with pytest.raises(IllegalActionError, match=message):
        eng.step(actions)


def test_options_and_seeds_checked():
    with pytest.raises(OptionError, match="render_mode"):
        make_batched("rope_team_v0", 2, render_mode="ansi")
    with pytest.raises(OptionError, match="ropes"):
        make_batched("rope_team_v0", 2, ropes=5)
    with pytest.raises(OptionError, match="no batched engine"):
        make_batched("rope_team", 2)  # the env id names the engine
    eng = make_batched("rope_team_v0", 2)
    for seeds in (-1, [1], [1, -2], [0.5, 1], 2**63 - 1):
        with pytest.raises(OptionError, match="seeds"):
            eng.reset(seeds)
    with pytest.raises(IllegalActionError, match="before reset"):
        eng.step(np.zeros(2, int))
    eng.reset(0)
    with pytest.raises(OptionError, match="no game has ended"):
        eng.finished_record(0)


# ---------------------------------------------------------------------------- properties (hypothesis)
def _play(eng, steps: int, seed: int):
    rng = np.random.default_rng(seed)
    mask = eng._current()[1]
    for _ in range(steps):
        _, mask, *_ = eng.step(np.argmax(rng.random((eng.num_envs, 52)) * mask, axis=1))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**40), steps=st.integers(0, 120), level=st.sampled_from(sorted(rules.LEVELS)),
       open_hands=st.booleans())
def test_cards_are_conserved(seed, steps, level, open_hands):
    eng = make_batched("rope_team_v0", 16, level=level, open_hands=open_hands)
    eng.reset(seed)
    _play(eng, steps, seed)
    parts = np.stack([eng.hands[:, 0], eng.hands[:, 1], eng.played[:, 0], eng.played[:, 1], eng.aside,
                      eng.on_ridge], axis=1)
    assert (np.bitwise_or.reduce(parts, axis=1) == FULL_MASK).all()
    counts = np.unpackbits(parts.view(np.uint8), axis=1).sum(axis=1)
    assert (counts == 52).all()  # each card in exactly one place
    assert (eng.up[np.arange(16), eng.coin]).all() and (eng.up.sum(axis=1) == eng.uncovered + 1).all()


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**40), steps=st.integers(0, 120), level=st.sampled_from(sorted(rules.LEVELS)),
       open_hands=st.booleans(), shuffle=st.integers(0, 2**32), viewer=st.integers(0, 1))
def test_resampling_hidden_cards_leaves_observations_equal(seed, steps, level, open_hands, shuffle, viewer):
    """What ``viewer`` cannot see — the partner's hand (unless open hands), the cards set aside, the face-down ridge
    cards and later deals — can be dealt differently without changing the viewer's observation; changing the
    viewer's own hand does change it."""
    n = 8
    eng = make_batched("rope_team_v0", n, level=level, open_hands=open_hands)
    eng.reset(seed)
    _play(eng, steps, seed)
    slots, seats = np.arange(n), np.full(n, viewer)
    before = eng._observe(slots, seats)
    rng = np.random.default_rng(shuffle)
    partner = 1 - viewer
    for i in range(n):
        hidden = [eng.aside[i]] + ([] if open_hands else [eng.hands[i, partner]])
        down = np.flatnonzero(~eng.up[i])
        pool = [c for c in range(52) if any(int(m) >> c & 1 for m in hidden)] + eng.ridge[i, down].tolist()
        pool = rng.permutation(pool).tolist()
        sizes = [bin(int(m)).count("1") for m in hidden]
        new = []
        for size in sizes:
            new.append(sum(1 << c for c in pool[:size]))
            pool = pool[size:]
        eng.aside[i] = new[0]
        if not open_hands:
            eng.hands[i, partner] = new[1]
        eng.ridge[i, down] = pool
        eng.decks[i] = [rng.permutation(52) for _ in range(eng.config.max_deals)]
    assert np.array_equal(eng._observe(slots, seats), before)
    # the viewer's own cards are visible: swapping one of them for a hidden one shows
    i = next((i for i in range(n) if eng.hands[i, viewer] and eng.aside[i]), None)
    if i is not None:
        mine, theirs = int(eng.hands[i, viewer]), int(eng.aside[i])
        a, b = (mine & -mine), (theirs & -theirs)
        eng.hands[i, viewer] = np.uint64(mine ^ a ^ b)
        eng.aside[i] = np.uint64(theirs ^ a ^ b)
        assert not np.array_equal(eng._observe(slots, seats)[i], before[i])
