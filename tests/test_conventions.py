"""PettingZoo's conventions that libraries built on it rely on, for every game: illegal moves penalised by default,
``state()``/``state_space``, PettingZoo's seed and state tests with default options, no attribute shadowing an API
method."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
from pettingzoo.test import parallel_seed_test, seed_test, state_test
from pettingzoo.test.state_test import test_state as pz_state_test
from pettingzoo.test.state_test import test_state_space as pz_state_space_test

from cardzoo.envs import IllegalActionError, IllegalActionWarning, replay, rook_v0, rope_team_v0, summit_rush_v0
from cardzoo.envs.rook import rules as rook_rules
from cardzoo.envs.rook.observer import STATE_LAYOUT as ROOK_STATE
from cardzoo.envs.rope_team.observer import STATE_LAYOUT as ROPE_STATE
from tests.api_warnings import api_warnings

AEC_MODULES = {"rope_team": rope_team_v0, "rook": rook_v0, "summit_rush": summit_rush_v0}
AEC_API = ("reset", "step", "observe", "last", "state", "render", "close", "agent_iter", "observation_space",
           "action_space")
PARALLEL_API = ("reset", "step", "state", "render", "close", "observation_space", "action_space")


def _illegal_action(obs: dict) -> int:
    return int(np.flatnonzero(obs["action_mask"] == 0)[0])


@pytest.mark.parametrize("game", AEC_MODULES)
def test_no_attribute_shadows_an_api_method(game):
    envs = [AEC_MODULES[game].env(), AEC_MODULES[game].raw_env()]
    for env in envs:
        env.reset(seed=0)
        for name in AEC_API:
            assert callable(getattr(env, name)), f"{game}: {name} is not callable"
        assert env.state_space.contains(env.state())
    par = summit_rush_v0.parallel_env()
    par.reset(seed=0)
    for name in PARALLEL_API:
        assert callable(getattr(par, name))


def _leave(env) -> dict[str, tuple[float, str]]:
    """Every agent's last reward and outcome, as the standard loop hands them out after the end."""
    out = {}
    for agent in env.agent_iter():
        _, reward, term, trunc, info = env.last()
        assert term or trunc
        out[agent] = (reward, info["outcome"])
        env.step(None)
    return out


@pytest.mark.parametrize("game", AEC_MODULES)
def test_illegal_move_by_default_ends_the_game_with_a_warning_and_replays(game):
    env = AEC_MODULES[game].env()
    env.reset(seed=5)
    rng = np.random.default_rng(0)
    for _ in range(7):  # a few legal moves first, so the illegal one is not the opening move
        obs, *_ = env.last()
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    mover = env.agent_selection
    obs, *_ = env.last()
    with pytest.warns(IllegalActionWarning, match="illegal"):
        env.step(_illegal_action(obs))
    record = env.unwrapped.game_record()
    final = _leave(env)
    assert {outcome for _, outcome in final.values()} == {"illegal"}
    assert final[mover][0] == -1.0
    assert json.loads(json.dumps(record)) == record
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IllegalActionWarning)
        again = replay(record)
    if game == "summit_rush":  # a Parallel record replays in the Parallel env
        assert again.outcome_info == env.unwrapped.outcome_info
    else:
        assert _leave(again) == final


@pytest.mark.parametrize("game", AEC_MODULES)
def test_raise_mode_is_strict(game):
    env = AEC_MODULES[game].env(illegal_action="raise")
    env.reset(seed=5)
    obs, *_ = env.last()
    record = env.unwrapped.game_record()
    with pytest.raises(IllegalActionError):
        env.step(_illegal_action(obs))
    assert env.unwrapped.game_record() == record


def test_parallel_illegal_move_ends_the_game_and_replays():
    env = summit_rush_v0.parallel_env()
    obs, _ = env.reset(seed=3)
    actions = {a: env.WAIT for a in env.agents}
    actions["player_1"] = _illegal_action(obs["player_1"])
    with pytest.warns(IllegalActionWarning, match="player_1"):
        _, rewards, terms, _, infos = env.step(actions)
    assert all(terms.values()) and set(rewards.values()) == {-1.0}
    assert infos["player_0"]["outcome"] == "illegal" and infos["player_0"]["illegal_by"] == ["player_1"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IllegalActionWarning)
        again = replay(env.game_record())
    assert again.outcome_info == env.outcome_info


def _unexpected_warnings(run) -> list[str]:
    """Warnings of a PettingZoo test beyond the unavoidable ones and the (expected) illegal-move warnings."""
    return [w for w in api_warnings(run) if "illegal move" not in w]


def test_pettingzoo_seed_and_state_tests_pass_with_default_options():
    # Both sample actions without the mask: with the penalty default, an illegal sample ends the game cleanly.
    assert _unexpected_warnings(lambda: parallel_seed_test(summit_rush_v0.parallel_env)) == []
    assert _unexpected_warnings(lambda: state_test(summit_rush_v0.env(), summit_rush_v0.parallel_env())) == []
    for module in (rope_team_v0, rook_v0):
        assert _unexpected_warnings(lambda m=module: pz_state_space_test(m.env())) == []
        assert _unexpected_warnings(lambda m=module: pz_state_test(m.env(), 200)) == []
        assert _unexpected_warnings(lambda m=module: seed_test(m.env, num_cycles=100)) == []


def _one_hot(piece: np.ndarray) -> list[int]:
    return np.flatnonzero(piece).tolist()


def test_rope_team_state_holds_both_observations_and_the_hidden_cards():
    env = rope_team_v0.env()
    env.reset(seed=7)
    for _ in range(3):
        obs, *_ = env.last()
        env.step(int(np.flatnonzero(obs["action_mask"])[0]))
    parts = ROPE_STATE.split(env.state())
    for seat, agent in enumerate(env.possible_agents):
        assert np.array_equal(parts[f"obs_player_{seat}"], env.observe(agent)["observation"])
    g = env.unwrapped.game
    for pos, card in enumerate(g.ridge):
        assert _one_hot(parts["ridge_rank"][13 * pos:13 * pos + 13]) == [card % 13]
        assert _one_hot(parts["ridge_suit"][4 * pos:4 * pos + 4]) == [card // 13]
    assert _one_hot(parts["aside"]) == [c for c in range(52) if g.aside >> c & 1]


def test_rook_state_holds_both_observations_and_the_hidden_cards():
    env = rook_v0.env()
    env.reset(seed=7)
    parts = ROOK_STATE.split(env.state())
    g = env.unwrapped.game
    for seat, agent in enumerate(env.possible_agents):
        assert np.array_equal(parts[f"obs_player_{seat}"], env.observe(agent)["observation"])
    assert _one_hot(parts["nest"]) == [c for c in range(53) if g.nest >> c & 1]
    assert _one_hot(parts["draw_pile"]) == sorted(g.pile)
    assert _one_hot(parts["next_hidden"]) == [g.pile[0]]  # nothing is face up before the first trick
    while g.phase != rook_rules.PLAY:  # bid, trumps, discards: the Nest leaves the state, the discards enter it
        obs, *_ = env.last()
        env.step(int(np.flatnonzero(obs["action_mask"])[-1 if g.phase == rook_rules.BID else 0]))
    parts = ROOK_STATE.split(env.state())
    assert not parts["nest"].any() and _one_hot(parts["discards"]) == [c for c in range(53) if g.discards >> c & 1]
