"""The batched Rook for Two engine plays exactly the single env's games (cardzoo.envs.rook.batched).

Lockstep (tests/lockstep.py): N single envs reset with the batch's seeds take the batch's actions, and every step
the observations, masks, seats, rewards, done and truncated flags, final infos, final observations and records must
be equal; when a game ends the single env is reset with the seed the batch gave the slot's next game.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cardzoo.envs import replay, rook_v0
from cardzoo.envs.batched import make_batched
from cardzoo.envs.common.errors import IllegalActionError, IllegalActionWarning, OptionError
from cardzoo.envs.rook import rules
from cardzoo.envs.rook.batched import DEALS_AHEAD, ROUND_DECISIONS
from cardzoo.envs.rook.observer import observe_bits

from .lockstep import Agents, lockstep


def _packed(row: np.ndarray) -> int:
    return int.from_bytes(np.packbits(row.view(np.uint8), bitorder="little").tobytes(), "little")


def _random(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return np.argmax(rng.random(mask.shape) * mask, axis=1)


@pytest.mark.parametrize("options, n, steps, least", [
    ({"rounds": 1}, 48, 700, 500),  # the training setting: single-round episodes
    ({"rounds": 3}, 32, 600, 80),  # rewards every round
    ({"target_score": 100}, 32, 600, 250),  # whole games: wins and set bidders falling
    ({"target_score": 50}, 32, 400, 150),
    ({}, 16, 900, 16),  # whole games to 500 (several rounds, later deals)
    ({"max_rounds": 2}, 32, 300, 60),  # cut off: truncated, round_limit
    ({"rounds": 4, "max_rounds": 3, "target_score": 1000}, 16, 400, 16),
], ids=str)
def test_batched_equals_single_env_random_play(options, n, steps, least):
    seen = lockstep("rook_v0", n, steps, seed=1, **options)
    assert seen["games"] >= least, seen


@pytest.mark.parametrize("options", [{"rounds": 1}, {"target_score": 100}], ids=str)
def test_batched_equals_single_env_with_illegal_moves_in_every_phase(options):
    """Under "penalize", random actions (mostly illegal) in every phase end the games as the single env does."""
    seen = lockstep("rook_v0", 32, 400, seed=4, illegal=0.02, **options)
    assert seen["illegal"] >= 50 and seen["games"] > seen["illegal"], seen


def test_every_outcome_and_long_games_are_exercised():
    """The variants above reach every way a game ends; whole games outlast the deals made ahead (rounds past
    DEALS_AHEAD are dealt when a game gets there) and the record buffers widen."""
    seen = lockstep("rook_v0", 16, 300, seed=2, target_score=150)
    assert seen["win"] and seen["bidder_fell"], seen
    assert lockstep("rook_v0", 16, 200, seed=2, rounds=2)["rounds_done"]
    assert lockstep("rook_v0", 16, 200, seed=2, max_rounds=1)["round_limit"]
    # a game of many rounds: a high target and no fall (target 1000), played to the deals computed late
    eng = make_batched("rook_v0", 8, target_score=1000, max_rounds=DEALS_AHEAD + 3)
    assert eng._history.shape[1] < eng.max_decisions
    rng = np.random.default_rng(3)
    obs, mask, seat = eng.reset(40)
    for _ in range((DEALS_AHEAD + 2) * ROUND_DECISIONS):
        if eng.round_no.max() > DEALS_AHEAD + 1:
            break
        obs, mask, seat, _, done = eng.step(_random(mask, rng))
    slot = int(np.argmax(eng.round_no))
    assert eng.round_no[slot] > DEALS_AHEAD + 1 and eng._history.shape[1] > 4 * ROUND_DECISIONS
    env = replay(eng.record(slot))
    assert env.unwrapped.game.round_no == eng.round_no[slot]
    assert observe_bits(env.unwrapped.game, int(seat[slot])) == _packed(obs[slot])


@pytest.mark.parametrize("names, n, steps, options", [
    (("heuristic",), 16, 500, {"rounds": 1}),
    (("learned",), 16, 400, {"rounds": 1}),
    (("heuristic", "learned"), 8, 600, {"target_score": 200}),
], ids=str)
def test_batched_equals_single_env_with_shipped_agents(names, n, steps, options):
    """The shipped agents, each acting on its own observation, see the same games in the engine and the env."""
    seen = lockstep("rook_v0", n, steps, Agents(*names), seed=5, **options)
    assert seen["games"] >= n, seen


def test_records_replay_in_the_single_env():
    eng = make_batched("rook_v0", 6, target_score=100)
    rng = np.random.default_rng(0)
    obs, mask, seat = eng.reset(seeds=[5, 9, 2**40, 0, 2**63 - 1, 3], next_seed=1000)
    ended, started = set(), 0
    for _ in range(300):
        obs, mask, seat, _, done = eng.step(_random(mask, rng))
        ended |= set(np.flatnonzero(done).tolist())
        started += int(done.sum())
    assert ended
    for i in sorted(ended):
        env = replay(eng.finished_record(i))
        agent = env.possible_agents[0]
        assert env.terminations[agent] and env.unwrapped.infos[agent] == eng.finished_info(i)
    for i in range(6):
        env = replay(eng.record(i))
        assert observe_bits(env.unwrapped.game, int(seat[i])) == _packed(obs[i])
    assert eng.next_seed == 1000 + started and all(1000 <= s < eng.next_seed for s in eng.seeds[list(ended)])


@pytest.mark.parametrize("rounds, penalty", [(None, -1.0), (1, -280.0)])
def test_illegal_action_penalised_like_the_single_env(rounds, penalty):
    eng = make_batched("rook_v0", 3, rounds=rounds)
    rng = np.random.default_rng(1)
    obs, mask, seat = eng.reset(0)
    for _ in range(30):  # into the tricks
        obs, mask, seat, _, _ = eng.step(_random(mask, rng))
    actions = _random(mask, rng)
    bad = int(np.flatnonzero(mask[1] == 0)[0])
    actions[1] = bad
    mover = int(seat[1])
    record = eng.record(1)
    with pytest.warns(IllegalActionWarning, match="game 1"):
        _, _, _, rewards, done = eng.step(actions)
    assert done.tolist() == [False, True, False]
    assert rewards[1].tolist() == [penalty if q == mover else 0.0 for q in range(2)]
    assert eng.finished_info(1) == {"outcome": "illegal", "illegal_by": f"player_{mover}"}
    env = rook_v0.raw_env(rounds=rounds)
    env.reset(seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IllegalActionWarning)
        for a in [*record["actions"], bad]:
            env.step(a)
    assert env.game_record() == eng.finished_record(1)
    assert [env.rewards[a] for a in env.possible_agents] == rewards[1].tolist()
    assert np.array_equal(eng.final_obs[1], env.observe(f"player_{mover}")["observation"])
    assert eng.seeds[1] == 3  # the slot plays the next game of the stream


def test_illegal_action_raise_mode_changes_nothing():
    eng = make_batched("rook_v0", 3, illegal_action="raise")
    obs, mask, seat = eng.reset(0)
    actions = np.argmax(mask, axis=1)
    actions[2] = rules.PASS  # the opening bid is compulsory
    with pytest.raises(IllegalActionError, match="game 2"):
        eng.step(actions)
    assert all(len(eng.record(i)["actions"]) == 0 for i in range(3))
    actions[2] = int(np.argmax(mask[2]))
    fresh = make_batched("rook_v0", 3, illegal_action="raise")
    fresh.reset(0)
    for got, want in zip(eng.step(actions), fresh.step(actions), strict=True):
        assert np.array_equal(got, want)


def test_options_checked_like_the_single_env():
    for options, name in (({"target_score": 40}, "target_score"), ({"rounds": 0}, "rounds"),
                          ({"max_rounds": 10**5}, "max_rounds"), ({"render_mode": "ansi"}, "render_mode"),
                          ({"illegal_action": "ignore"}, "illegal_action"), ({"deck": []}, "deck")):
        with pytest.raises(OptionError, match=name):
            make_batched("rook_v0", 2, **options)
    eng = make_batched("rook_v0", 2, rounds=2, target_score=300)
    assert eng.record_options == {"rounds": 2, "target_score": 300, "illegal_action": "penalize"}
    assert eng.max_decisions == 2 * ROUND_DECISIONS


# ---------------------------------------------------------------------------- properties (hypothesis)
@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**40), steps=st.integers(0, 150), rounds=st.sampled_from([None, 1, 2]))
def test_cards_are_conserved(seed, steps, rounds):
    """Every one of the 45 cards is in exactly one place of every game, whatever the phase."""
    n = 16
    eng = make_batched("rook_v0", n, rounds=rounds, target_score=100)
    obs, mask, seat = eng.reset(seed)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        obs, mask, seat, _, _ = eng.step(_random(mask, rng))
    one = np.uint64(1)
    rows = np.arange(n)
    pile = np.zeros(n, np.uint64)
    for j in range(rules.PILE):
        pile |= np.where(j >= eng.pile_pos + (eng.face_up >= 0), one << eng.pile[:, j].astype(np.uint64), 0)
    face_up = np.where(eng.face_up >= 0, one << np.maximum(eng.face_up, 0).astype(np.uint64), 0)
    nest = np.where(eng.phase <= rules.TRUMP, eng.nest, 0)
    parts = np.stack([eng.hands[:, 0], eng.hands[:, 1], eng.played[:, 0], eng.played[:, 1], nest, eng.discards,
                      pile, face_up], axis=1)
    assert (np.bitwise_or.reduce(parts, axis=1) == np.uint64(rules.DECK_MASK)).all()
    assert (np.unpackbits(parts.view(np.uint8), axis=1).sum(axis=1) == len(rules.DECK)).all()
    assert ((eng.known & ~eng.hands) == 0).all() and (eng.tricks.sum(axis=1) <= rules.TRICKS).all()
    assert (eng.to_move[rows] == seat).all()


def test_point_cards_forced_into_the_discards_score_to_the_last_trick():
    """A bid winner holding nothing but point cards must discard them; they score to whoever wins the last trick.
    Random deals almost never force it, so the engine's first round is set to such a deal (its arrays written, the
    single env given the same ``deck``), then both play on in lockstep to the end of the round."""
    n = 8
    rng = np.random.default_rng(7)
    point = [c for c in rules.DECK if rules.POINTS[c]]
    other = [c for c in rules.DECK if not rules.POINTS[c]]
    eng = make_batched("rook_v0", n, rounds=1)
    obs, mask, seat = eng.reset(100)
    envs = []
    one = np.uint64(1)
    for i in range(n):
        rest = rng.permutation(other).tolist()
        deck = point[:3] + point[3:] + rest[:1] + rest[1:]  # Nest and player_0's hand: 13 point cards and one other
        mask_of = lambda cards: np.bitwise_or.reduce(one << np.array(cards, np.uint64))  # noqa: E731
        eng.nest[i], eng.hands[i, 0], eng.hands[i, 1] = mask_of(deck[:3]), mask_of(deck[3:14]), mask_of(deck[14:25])
        eng.pile[i] = deck[25:]
        env = rook_v0.raw_env(rounds=1)
        env.reset(seed=int(eng.seeds[i]), options={"deck": [rules.card_name(c) for c in deck]})
        envs.append(env)
    obs, mask, seat = eng._current_arrays()
    first = True
    while True:
        for i, env in enumerate(envs):
            assert observe_bits(env.game, env.game.to_move) == _packed(obs[i]) and seat[i] == env.game.to_move
        actions = _random(mask, rng)
        if first:  # player_0 opens at 140 and wins the bid
            actions[:], first = rules.BID0 + len(rules.BID_AMOUNTS) - 1, False
        obs, mask, seat, rewards, done = eng.step(actions)
        for i, env in enumerate(envs):
            env.step(int(actions[i]))
            assert rewards[i].tolist() == [env.rewards[a] for a in env.possible_agents]
        if done.any():
            assert done.all()
            break
    history = [env.infos["player_0"]["history"][0] for env in envs]
    assert all(h["bidder"] == 0 for h in history)
    assert {h["last_trick_winner"] for h in history} == {0, 1}  # both ways the discards' points go


def test_array_core_trick_and_follow_tables_equal_the_rules():
    """Every (led, second card, trumps) of the deck: the array core's trick winner and follow masks are the rules'."""
    from cardzoo.envs.rook import arrays

    led, card, trumps = (a.ravel() for a in np.meshgrid(rules.DECK, rules.DECK, range(4), indexing="ij"))
    want = [rules.second_wins(a, b, t) for a, b, t in zip(led.tolist(), card.tolist(), trumps.tolist(), strict=True)]
    assert arrays.second_wins(led, card, trumps).tolist() == want
    hands = np.array([rules.DECK_MASK >> s & rules.DECK_MASK for s in range(0, 45, 5)], np.uint64)
    for t in range(4):
        for c in rules.DECK:
            got = arrays.playable(hands, np.full(len(hands), c), np.full(len(hands), t))
            assert got.tolist() == [int(h) & rules.follow_mask(c, t) or int(h) for h in hands.tolist()]
