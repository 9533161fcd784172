"""Rook's batched rollouts: every world x candidate at once on the batched engine, the search's rollout policy
batched over the rows. Move for move they play the per-world rollouts they replaced (``rook_reference``), the
search decides as the per-world search on every decision of real rounds, and the blueprint is pluggable."""

from __future__ import annotations

import numpy as np
import pytest

from cardzoo.agents.rook_heuristic import RookHeuristic
from cardzoo.agents.rook_rollouts import _engine, play_out
from cardzoo.agents.rook_search import RookSearch
from cardzoo.envs.common.errors import OptionError, PolicyError
from cardzoo.envs.rook import rules
from cardzoo.envs.rook.observer import observe_bits

from .rook_reference import PerWorldRookSearch, rollout, rollout_action


def _positions(seeds, every: int = 1):
    """States of single rounds played by the heuristic with some random moves, every phase but the bidding."""
    heuristic = RookHeuristic()
    for seed in seeds:
        rng = np.random.default_rng(seed)
        s = rules.new_game(rules.Config(rounds=1), rules.shuffled_deck(rng), rng, dealer=seed % 2)
        step = 0
        while s.outcome is None:
            legal = rules.legal_actions(s)
            if s.phase != rules.BID and step % every == 0:
                yield s.copy()
            actions = [a for a in range(rules.N_ACTIONS) if legal >> a & 1]
            action = (actions[rng.integers(len(actions))] if rng.random() < 0.2 else
                      heuristic.act_bits(observe_bits(s, s.to_move), legal))
            rules.apply(s, action)
            step += 1


def test_batched_rollouts_play_the_per_world_rollout_move_for_move():
    """Rows of many positions (every phase after the bidding, mixed) step together; at every step each row's
    move is the per-world rollout policy's in the same state, and each round ends with its score changes and
    points."""
    states = list(_positions(range(6), every=3))
    assert {s.phase for s in states} == {rules.TRUMP, rules.DISCARD, rules.PLAY, rules.DRAW}
    mirrors = [s.copy() for s in states]
    eng = _engine(len(states))
    eng.load(states)
    rows = np.arange(len(states))
    moves = 0
    while (eng.phase[rows] < rules.OVER).any():
        actions = eng.rollout_actions()
        for i, s in enumerate(mirrors):
            if s.outcome is None and s.last_round is None:
                expected = rollout_action(s)
                assert actions[i] == expected, (i, rules.PHASE_NAMES[s.phase])
                rules.apply(s, expected)
                moves += 1
        eng._play(actions)
    assert moves > 2000
    # Point cards in the discards (the rules allow it when a hand holds nothing else): they score to the last
    # trick's winner. Swap one into the discards of some rounds in play.
    for s in states[::4]:
        if s.phase == rules.PLAY and s.discards & ~rules.POINT_MASK:
            seat = 1 - s.to_move
            point = s.hands[seat] & rules.POINT_MASK
            if point:
                card, plain = point & -point, s.discards & ~rules.POINT_MASK
                plain &= -plain
                s.hands[seat] ^= card | plain
                s.known[seat] &= ~card
                s.discards ^= card | plain
    assert sum(bool(s.discards & rules.POINT_MASK) for s in states) >= 5
    deltas, points = play_out(states)
    expected = [rollout(s.copy()) for s in states]
    assert deltas.tolist() == expected
    ends = []
    for s in states:
        t = s.copy()
        rollout(t)
        ends.append(t.last_round["points"])
    assert points.tolist() == ends


def test_a_first_move_per_row_then_the_rollout_policy():
    states = [s for s in _positions([7]) if s.phase == rules.PLAY][:30]
    first = [next(a for a in range(rules.N_CARDS) if rules.legal_actions(s) >> a & 1) for s in states]
    expected = []
    for s, a in zip(states, first, strict=True):
        t = s.copy()
        result = rules.apply(t, a)
        expected.append(result if result is not None else rollout(t))
    assert play_out(states, first)[0].tolist() == expected


def _decisions(seeds, budget):
    """(bits, legal) of every decision of the search seat in single rounds of search against the heuristic."""
    heuristic = RookHeuristic()
    for seed in seeds:
        agent = RookSearch(seed=seed, **budget)
        rng = np.random.default_rng(seed)
        s = rules.new_game(rules.Config(rounds=1), rules.shuffled_deck(rng), rng, dealer=seed % 2)
        while s.outcome is None:
            bits, legal = observe_bits(s, s.to_move), rules.legal_actions(s)
            action = (agent if s.to_move == seed % 2 else heuristic).act_bits(bits, legal)
            if s.to_move == seed % 2:
                yield seed, bits, legal, action
            rules.apply(s, action)


def test_the_search_decides_as_the_per_world_search_on_every_decision_of_real_rounds():
    """At equal worlds and seeds the batched search's choice is the per-world search's at every decision (bids,
    trumps, discards, plays, draws) of real rounds; same random streams, so the same choices."""
    budget = {"worlds": 4, "bid_worlds": 6, "tries": 5}
    seen = 0
    agents: dict[int, PerWorldRookSearch] = {}
    for seed, bits, legal, action in _decisions(range(8), budget):
        reference = agents.setdefault(seed, PerWorldRookSearch(seed=seed, **budget))
        assert reference.act_bits(bits, legal) == action
        seen += legal & (legal - 1) != 0
    assert seen >= 200


def test_the_blueprint_is_pluggable_and_checked():
    """An observation policy plays the rollouts (here: the lowest legal action), and one that breaks the protocol
    is refused clearly; the search takes it as ``rollout_policy``."""
    states = [s for s in _positions([3]) if s.phase == rules.PLAY][:20]

    def lowest(obs, mask):
        return mask.argmax(axis=1)

    deltas, _ = play_out(states, None, lowest)
    assert deltas.shape == (20, 2) and deltas.tolist() != play_out(states)[0].tolist()
    with pytest.raises(PolicyError, match="illegal action"):
        play_out(states, None, lambda obs, mask: np.full(len(obs), rules.PASS))
    with pytest.raises(PolicyError, match="one per observation"):
        play_out(states, None, lambda obs, mask: np.zeros(1, np.int64))
    with pytest.raises(OptionError, match="rollout_policy"):
        RookSearch(rollout_policy=3)
    agent = RookSearch(seed=1, worlds=2, bid_worlds=2, tries=2, rollout_policy=lowest)
    s = states[0]
    assert rules.legal_actions(s) >> agent.act_bits(observe_bits(s, s.to_move), rules.legal_actions(s)) & 1


def test_rollouts_in_threads_do_not_share_a_batch():
    """Rollouts running at once in several threads (the play server's pool) give what each gives alone."""
    from concurrent.futures import ThreadPoolExecutor

    states = list(_positions(range(3), every=2))
    jobs = [states[i : i + 24] for i in range(0, len(states) - 24, 24)]
    alone = [play_out(job)[0].tolist() for job in jobs]
    with ThreadPoolExecutor(4) as pool:
        for _ in range(3):
            assert list(pool.map(lambda job: play_out(job)[0].tolist(), jobs)) == alone
