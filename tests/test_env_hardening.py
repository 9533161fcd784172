"""Small env defects of issue 23: hostile option values (env, batched engine, ``cardzoo play -o``), the final
masks after a penalised illegal move, and every method that needs a game called before ``reset()``."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pettingzoo.test import api_test, parallel_api_test

from cardzoo.envs import (
    DeckError,
    GameOverError,
    IllegalActionWarning,
    NotResetError,
    OptionError,
    rook_v0,
    rope_team_v0,
    summit_rush_v0,
)
from cardzoo.envs.batched import make_batched
from cardzoo.envs.rook.env import ENV_OPTIONS as ROOK_OPTIONS
from cardzoo.envs.rope_team.env import ENV_OPTIONS as ROPE_OPTIONS
from cardzoo.envs.summit_rush.batched import SummitRushParallel
from cardzoo.envs.summit_rush.env import ENV_OPTIONS as SUMMIT_OPTIONS
from cardzoo.evaluation.cli import main

# constructor -> the options it takes
BUILDERS = {
    "rope_team_v0.env": (rope_team_v0.env, ROPE_OPTIONS),
    "rook_v0.env": (rook_v0.env, ROOK_OPTIONS),
    "summit_rush_v0.parallel_env": (summit_rush_v0.parallel_env, SUMMIT_OPTIONS),
    "summit_rush_v0.env": (summit_rush_v0.env, SUMMIT_OPTIONS),
    "rope_team batched": (lambda **o: make_batched("rope_team_v0", 2, **o),
                          tuple(o for o in ROPE_OPTIONS if not o.startswith("render"))),
    "summit_rush batched": (lambda **o: make_batched("summit_rush_v0", 2, **o),
                            tuple(o for o in SUMMIT_OPTIONS if o != "render_mode")),
    "rook batched": (lambda **o: make_batched("rook_v0", 2, **o),
                     tuple(o for o in ROOK_OPTIONS if not o.startswith("render"))),
    "SummitRushParallel": (lambda **o: SummitRushParallel(2, **o),
                           ("mask",) + tuple(o for o in SUMMIT_OPTIONS if o != "render_mode")),
}
PAIRS = [(b, o) for b, (_, options) in BUILDERS.items() for o in options]
# what a message says the allowed values are, by kind of option
ALLOWED = ("is not one of [", "must be an integer in ", "must be True or False", "must be a finite number in ",
           "out of range ", "the clock must hold 1..")

HOSTILE = st.one_of(
    st.lists(st.integers(), max_size=3), st.lists(st.lists(st.text(max_size=3), max_size=2), max_size=2),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2), st.floats(allow_nan=True),
    st.none(), st.booleans(), st.text(max_size=20), st.just("x" * 1_000_000), st.integers(-2**80, 2**80),
    st.just(np.array([1, 2])), st.just(np.array(["normal"])), st.just(np.float64("nan")), st.just({1, 2}),
    st.just(b"normal"), st.just(object()), st.just(10**400), st.just(np.int64(2)), st.just(np.bool_(True)),
)


def _build(builder: str, name: str, value):
    make, _ = BUILDERS[builder]
    options = {name: value}
    if name == "silent" and value is not None:
        options["talk"] = None  # alone: a contradiction with talk is another (tested) message
    if name == "players" and value is not None:
        options["solo"] = False
    return make(**options)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pair=st.sampled_from(PAIRS), value=HOSTILE)
def test_hostile_option_values_are_option_errors_naming_option_value_and_allowed(pair, value):
    """Any value of any option of any game either builds (it is allowed) or is an OptionError whose one short
    message names the option, the value and the allowed values; never TypeError: unhashable, never a wall of text."""
    builder, name = pair
    try:
        _build(builder, name, value)
    except OptionError as err:
        message = str(err)
        assert name in message and len(message) < 400, message
        assert any(allowed in message for allowed in ALLOWED), message
    # anything else (a TypeError, a ValueError from numpy) fails the test


# a fixed grid besides hypothesis's draws: every option of every constructor gets each of these
GRID = [[1], [[["a"]]], {"a": 1}, 1.5, float("nan"), float("inf"), None, True, False, "x" * 1_000_000, "", "normal",
        2**80, -(2**80), 10**400, np.array([1, 2]), np.array(["normal"]), np.float64("nan"), {1, 2}, b"normal",
        object(), np.int64(2), np.bool_(True), 0, -1, 3, 0.125, 1e-300, 1e300, (1,), "3"]


@pytest.mark.parametrize("builder", BUILDERS)
def test_every_option_with_every_hostile_value_of_a_grid(builder):
    for name in BUILDERS[builder][1]:
        for value in GRID:
            try:
                _build(builder, name, value)
            except OptionError as err:
                message = str(err)
                assert name in message and len(message) < 400, (name, message)
                assert any(allowed in message for allowed in ALLOWED), message


@pytest.mark.parametrize("builder", BUILDERS)
def test_unhashable_level_and_mode_values(builder):
    make, options = BUILDERS[builder]
    for name in ("level", "illegal_action", "mask"):
        if name in options:
            for value in ([1], {"a": 1}, np.array(["normal", "hard"]), {1}):
                with pytest.raises(OptionError, match=rf"option {name}=.* is not one of \["):
                    make(**{name: value})


@pytest.mark.parametrize("value, shown", [
    ("[1]", "level=[1] is not one of"), ('{"a": 1}', "level={'a': 1} is not one of"),
    ("1.5", "level=1.5 is not one of"), ("x" * 100_000, "level='xxxxxxxxxxxxxxxxx...xxxxxxxxxxxxxxxxxx' is not"),
    ("[" * 20_000 + "]" * 20_000, "nested too deeply"),
])
def test_play_dash_o_hostile_values_are_one_line(value, shown, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["play", "rope_team", "--agents", "random", "random", "-o", f"level={value}"])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and err.count("\n") == 1 and len(err) < 300 and shown in err, err


def test_play_dash_o_bool_for_an_int_and_float_for_an_int(capsys):
    for option, shown in (("ropes=true", "option ropes must be an integer in 0..4, got True"),
                          ("max_deals=2.0", "option max_deals must be an integer in 1..3, got 2.0"),
                          ("shaping=NaN", "option shaping=nan is out of range")):
        with pytest.raises(SystemExit):
            main(["play", "rope_team", "--agents", "random", "random", "-o", option])
        assert shown in capsys.readouterr().err


# ----------------------------------------------------------------------------- final masks after a penalty
def _illegal_of(mask: np.ndarray) -> int:
    return int(np.flatnonzero(mask == 0)[0])


@pytest.mark.parametrize("make", [rope_team_v0.env, rook_v0.env, summit_rush_v0.env], ids=["rope", "rook", "summit"])
@pytest.mark.parametrize("moves", [0, 7])
def test_every_final_mask_is_empty_after_a_penalised_illegal_move(make, moves):
    env = make()
    env.reset(seed=4)
    rng = np.random.default_rng(0)
    for _ in range(moves):  # some legal moves first, so the offender is not always the first mover
        mask = env.observe(env.agent_selection)["action_mask"]
        env.step(int(rng.choice(np.flatnonzero(mask))))
    offender = env.agent_selection
    with pytest.warns(IllegalActionWarning):
        env.step(_illegal_of(env.observe(offender)["action_mask"]))
    assert all(env.terminations.values()) and env.infos[offender]["outcome"] == "illegal"
    for agent in env.possible_agents:
        assert not env.observe(agent)["action_mask"].any(), agent
    _, _, terminated, _, _ = env.last()
    assert terminated and not env.last()[0]["action_mask"].any()


def test_summit_parallel_final_masks_are_empty_after_a_penalty():
    env = summit_rush_v0.parallel_env()
    obs, _ = env.reset(seed=2)
    actions = {a: env.WAIT for a in env.agents}
    actions["player_1"] = _illegal_of(obs["player_1"]["action_mask"])
    with pytest.warns(IllegalActionWarning):
        obs, _, terminations, _, infos = env.step(actions)
    assert all(terminations.values()) and infos["player_0"]["outcome"] == "illegal"
    assert all(not o["action_mask"].any() for o in obs.values())


# ----------------------------------------------------------------------------- before reset()
CONSTRUCTORS = {
    "rope_team_v0.env": rope_team_v0.env, "rope_team_v0.raw_env": rope_team_v0.raw_env, "rook_v0.env": rook_v0.env,
    "rook_v0.raw_env": rook_v0.raw_env, "summit_rush_v0.env": summit_rush_v0.env,
    "summit_rush_v0.raw_env": summit_rush_v0.raw_env, "summit_rush_v0.parallel_env": summit_rush_v0.parallel_env,
}
METHODS = {
    "observe": lambda env: env.observe("player_0"), "last": lambda env: env.last(), "state": lambda env: env.state(),
    "render": lambda env: env.render(), "step": lambda env: env.step(0), "game_record": lambda env: env.game_record(),
    "agent_iter": lambda env: next(iter(env.agent_iter())), "legal_actions": lambda env: env.legal_actions("player_0"),
}


# every method each form offers that needs a game (a raw AEC's agent_iter() before reset iterates over no agents)
BEFORE_RESET = [(c, m) for c, make in CONSTRUCTORS.items() for m in METHODS
                if hasattr(make(), m) and not (c.endswith("raw_env") and m == "agent_iter")]


@pytest.mark.parametrize("constructor, method", BEFORE_RESET)
def test_methods_before_reset_say_call_reset_first(constructor, method):
    env = CONSTRUCTORS[constructor](render_mode="ansi")
    if constructor.endswith("parallel_env") and method == "step":
        call = lambda env: env.step({a: 0 for a in env.possible_agents})  # noqa: E731
    else:
        call = METHODS[method]
    with pytest.raises(NotResetError, match=rf"{method}\(\) before reset\(\).*call reset\(\) first") as caught:
        call(env)
    # a cardzoo error (GameOverError, as a step before reset always was), and the AssertionError PettingZoo raises
    assert isinstance(caught.value, GameOverError) and isinstance(caught.value, AssertionError)
    if method == "render":
        assert isinstance(caught.value, OptionError)  # what render() before reset() raised before
    env.reset(seed=0)  # and the env is usable
    if method not in ("step", "agent_iter") and not (constructor.endswith("parallel_env") and method == "observe"):
        call(env)


def test_pettingzoo_api_tests_still_pass():
    for make in (rope_team_v0.env, rook_v0.env, summit_rush_v0.env):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            api_test(make(), num_cycles=30)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        parallel_api_test(summit_rush_v0.parallel_env(), num_cycles=30)


@pytest.mark.parametrize("make", [rope_team_v0.raw_env, rook_v0.raw_env, summit_rush_v0.parallel_env])
def test_hostile_reset_option_values_leave_the_game(make):
    deep: list = []
    for _ in range(5000):
        deep = [deep]
    env = make()
    env.reset(seed=3)
    record = env.game_record()
    for options in ({"dealer": [1]}, {"dealer": {"a": 1}}, {"dealer": deep}, {"deck": deep}, {"deck": {"a": 1}}):
        if make is summit_rush_v0.parallel_env and "dealer" in options:
            options = {"deck": options["dealer"]}
        with pytest.raises((OptionError, DeckError)):
            env.reset(seed=4, options=options)
        assert env.game_record() == record
