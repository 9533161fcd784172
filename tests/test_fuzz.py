"""Fuzzing every env as a careless user or a buggy agent would (hypothesis): random options, decks and seeds; legal,
illegal and malformed actions; forks by deepcopy and pickle; replays from records.

Invariants: nothing crashes (a bad value raises a cardzoo error and changes nothing); every episode ends within its
documented bound; cards are conserved; observations and states lie in their spaces and masks equal the rules' legal
moves; the same seed, options and actions give the same game, also after a fork or a replay.
"""

from __future__ import annotations

import copy
import pickle
import warnings

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cardzoo.envs import (
    CardzooError,
    IllegalActionError,
    IllegalActionWarning,
    replay,
    rook_v0,
    rope_team_v0,
    summit_rush_v0,
)
from cardzoo.envs.common.cards import CARD_NAMES, FULL_MASK
from cardzoo.envs.rook import rules as rook_rules
from cardzoo.envs.rope_team import rules as rope_rules
from cardzoo.envs.summit_rush import rules as summit_rules

FUZZ = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
GARBAGE = st.sampled_from([None, -1, 10**6, 2.5, "3", True, np.float32(1.0), [1], np.array([1, 2])])


def _cards_rope_team(g) -> None:
    parts = [sum(1 << c for c in g.ridge), g.hands[0], g.hands[1], g.played[0], g.played[1], g.aside]
    assert sum(p.bit_count() for p in parts) == 52
    assert parts[0] | parts[1] | parts[2] | parts[3] | parts[4] | parts[5] == FULL_MASK


def _cards_rook(g) -> None:
    if g.outcome is None:
        assert g.in_play() == rook_rules.DECK_MASK
        assert sum(m.bit_count() for m in (g.hands[0], g.hands[1], g.nest_left(), g.discards, g.played[0],
                                            g.played[1], g.pile_mask())) + (g.face_up is not None) == 45


def _cards_summit(g) -> None:
    assert sorted(summit_rules.cards_in_play(g)) == list(range(52))


def _play_aec(env, data, bound: int, check_cards) -> list:
    """Play to the end drawing legal, illegal and malformed actions; return the actions that were taken."""
    unwrapped = env.unwrapped
    steps = 0
    while env.agents:
        agent = env.agent_selection
        obs, _, term, trunc, _ = env.last()
        space = env.observation_space(agent)
        assert space["observation"].contains(obs["observation"]) and space["action_mask"].contains(obs["action_mask"])
        assert env.state_space.contains(env.state())
        if term or trunc:
            env.step(None)
            continue
        legal = np.flatnonzero(obs["action_mask"])
        kind = data.draw(st.sampled_from(["legal"] * 12 + ["garbage", "illegal"]))
        if kind == "garbage":
            record = unwrapped.game_record()
            try:
                env.step(data.draw(GARBAGE))
            except CardzooError:
                pass
            else:
                raise AssertionError("a value that is not an action was accepted")
            assert unwrapped.game_record() == record  # nothing changed
            continue
        if kind == "illegal" and len(legal) < env.action_space(agent).n:
            action = int(data.draw(st.sampled_from(np.flatnonzero(obs["action_mask"] == 0).tolist())))
            record = unwrapped.game_record()
            if unwrapped.illegal_action == "raise":
                try:
                    env.step(action)
                except IllegalActionError:
                    assert unwrapped.game_record() == record
                    continue
                raise AssertionError("an illegal action was accepted under illegal_action='raise'")
            steps += 1
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", IllegalActionWarning)
                env.step(action)
            if unwrapped.illegal_action == "penalize":
                assert all(env.terminations.values()) or not env.agents
            continue
        steps += 1
        assert steps <= bound, f"the episode ran past its bound of {bound} steps"
        env.step(int(data.draw(st.sampled_from(legal.tolist()))))
        check_cards(unwrapped.game)
    return unwrapped.game_record()["actions"]


def _fork_and_replay(make_env, seed, reset_options, actions) -> None:
    """The same seed and actions give the same game: straight, after deepcopy and pickle forks, and by replay."""
    def run(env, moves):
        for a in moves:
            if not env.agents:
                break
            env.step(a if not (env.terminations[env.agent_selection] or env.truncations[env.agent_selection])
                     else None)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IllegalActionWarning)
        base = make_env()
        base.reset(seed=seed, options=reset_options)
        half = len(actions) // 2
        run(base, actions[:half])
        forks = [copy.deepcopy(base), pickle.loads(pickle.dumps(base))]
        for env in [base, *forks]:
            run(env, actions[half:])
        record = base.unwrapped.game_record()
        again = replay(record)
    final = base.state()
    for env in [*forks, again]:
        assert np.array_equal(env.state(), final)
        assert env.unwrapped.game_record()["actions"] == record["actions"]


def _deck(data, names) -> list[str] | None:
    return data.draw(st.one_of(st.none(), st.permutations(list(names))))


@FUZZ
@given(data=st.data(), seed=st.integers(0, 2**63 - 1))
def test_fuzz_rope_team(data, seed):
    options = data.draw(st.fixed_dictionaries({}, optional={
        "level": st.sampled_from(sorted(rope_rules.LEVELS)), "ropes": st.integers(0, 4), "trumps": st.booleans(),
        "max_deals": st.integers(1, 3), "open_hands": st.booleans(), "shaping": st.floats(-1, 1),
        "illegal_action": st.sampled_from(["penalize", "raise"])}))
    deck = _deck(data, CARD_NAMES)
    reset_options = {"deck": deck} if deck else None
    env = rope_team_v0.env(**options)
    env.reset(seed=seed, options=reset_options)
    max_deals = env.unwrapped.config.max_deals
    actions = _play_aec(env, data, 2 * rope_rules.TRICKS_PER_DEAL * max_deals, _cards_rope_team)
    _fork_and_replay(lambda: rope_team_v0.env(**options), seed, reset_options, actions)


@FUZZ
@given(data=st.data(), seed=st.integers(0, 2**63 - 1))
def test_fuzz_rook(data, seed):
    options = data.draw(st.fixed_dictionaries({"max_rounds": st.integers(1, 3)}, optional={
        "target_score": st.integers(50, 1000), "rounds": st.integers(1, 3),
        "illegal_action": st.sampled_from(["penalize", "raise"])}))
    deck = _deck(data, rook_rules.NAMES)
    reset_options = {"deck": deck} if deck else None
    env = rook_v0.env(**options)
    env.reset(seed=seed, options=reset_options)
    # A round has at most 20 bids and passes, trumps, 3 discards, 21 tricks of two cards and 10 draws.
    per_round = 20 + 1 + 3 + 42 + 10
    actions = _play_aec(env, data, options["max_rounds"] * per_round, _cards_rook)
    _fork_and_replay(lambda: rook_v0.env(**options), seed, reset_options, actions)


def _summit_options(data) -> dict:
    options = data.draw(st.fixed_dictionaries({"max_ticks": st.integers(1, 80)}, optional={
        "level": st.sampled_from(sorted(summit_rules.LEVELS)), "wrap": st.booleans(),
        "time_limit": st.one_of(st.none(), st.floats(3, 300)), "seconds_per_action": st.sampled_from([1.0, 3.0]),
        "illegal_action": st.sampled_from(["penalize", "raise", "wait"])}))
    form = data.draw(st.sampled_from(["two", "three", "solo"]))
    if form == "three":
        options["players"] = 3
    elif form == "solo":
        options["solo"] = True
    return options


@FUZZ
@given(data=st.data(), seed=st.integers(0, 2**63 - 1))
def test_fuzz_summit_rush_aec(data, seed):
    options = _summit_options(data)
    deck = _deck(data, CARD_NAMES)
    reset_options = {"deck": deck} if deck else None
    env = summit_rush_v0.env(**options)
    env.reset(seed=seed, options=reset_options)
    config = env.unwrapped.config
    ticks = min(config.max_ticks, config.ticks or config.max_ticks)
    actions = _play_aec(env, data, ticks * config.players, _cards_summit)
    assert len(actions) <= ticks


@FUZZ
@given(data=st.data(), seed=st.integers(0, 2**63 - 1))
def test_fuzz_summit_rush_parallel(data, seed):
    options = _summit_options(data)
    env = summit_rush_v0.parallel_env(**options)
    obs, _ = env.reset(seed=seed)
    config = env.config
    bound = min(config.max_ticks, config.ticks or config.max_ticks)
    ticks, taken = 0, []
    while env.agents:
        for agent in env.agents:
            assert env.observation_space(agent).contains(obs[agent])
        assert env.state_space.contains(env.state())
        kind = data.draw(st.sampled_from(["legal"] * 12 + ["garbage", "illegal"]))
        actions = {a: int(data.draw(st.sampled_from(np.flatnonzero(obs[a]["action_mask"]).tolist())))
                   for a in env.agents}
        victim = env.agents[0]
        if kind == "garbage":
            record = env.game_record()
            try:
                env.step({**actions, victim: data.draw(GARBAGE)})
            except CardzooError:
                pass
            else:
                raise AssertionError("a value that is not an action was accepted")
            assert env.game_record() == record
            continue
        if kind == "illegal":
            actions[victim] = int(np.flatnonzero(obs[victim]["action_mask"] == 0)[0])
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", IllegalActionWarning)
                obs, *_ = env.step(actions)
        except CardzooError:
            assert kind == "illegal" and env.illegal_action == "raise"
            continue
        ticks += 1
        taken.append(actions)
        assert ticks <= bound
        _cards_summit(env.game)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IllegalActionWarning)
        again = replay(env.game_record())
    assert np.array_equal(again.state(), env.state()) and again.outcome_info == env.outcome_info
