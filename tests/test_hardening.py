"""Bad input from a careless user or a buggy agent: a clear cardzoo error naming the problem, the env still usable,
records that stay plain JSON and replay, and games that always end."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

from cardzoo.agents.learned import LearnedAgent, NumpyPolicy, shipped_policy
from cardzoo.envs import (
    GameOverError,
    IllegalActionError,
    IllegalActionWarning,
    OptionError,
    RecordError,
    replay,
    rook_v0,
    rope_team_v0,
    summit_rush_v0,
)
from cardzoo.envs.common.cards import CARD_NAMES
from cardzoo.envs.common.errors import PolicyError
from cardzoo.envs.rook.rules import NAMES as ROOK_NAMES

MODULES = {"rope_team": rope_team_v0, "rook": rook_v0, "summit_rush": summit_rush_v0}


def _play_some(env, moves: int, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    for _ in range(moves):
        if not env.agents:
            return
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))


# ----------------------------------------------------------------------------- Summit Rush's AEC form
def test_summit_aec_none_from_an_agent_that_must_act_raises_and_changes_nothing():
    env = summit_rush_v0.env()
    env.reset(seed=3)
    with pytest.raises(IllegalActionError, match="player_0 is to act.*must choose an action"):
        env.step(None)
    assert env.agent_selection == "player_0"
    env.step(57)  # the tick goes on as if nothing happened
    assert env.agent_selection == "player_1"
    env.step(57)
    assert env.unwrapped.game.tick == 1


def test_summit_aec_action_after_the_end_is_game_over_and_leaving_still_works():
    env = summit_rush_v0.env(time_limit=3.0)  # one tick
    env.reset(seed=0)
    env.step(57)
    env.step(57)
    assert all(env.terminations.values())
    with pytest.raises(GameOverError, match="player_0 may only step\\(None\\)"):
        env.step(0)
    env.step(None)
    env.step(None)
    assert env.agents == []
    with pytest.raises(GameOverError):
        env.step(None)


@pytest.mark.parametrize("make", [summit_rush_v0.raw_env, rope_team_v0.raw_env, rook_v0.raw_env])
def test_raw_envs_before_reset_raise_game_over(make):
    env = make()
    with pytest.raises(GameOverError, match="before reset"):
        env.step(0)
    with pytest.raises(GameOverError, match="before reset"):
        env.state()


def test_summit_parallel_before_reset_raises_game_over():
    env = summit_rush_v0.parallel_env()
    with pytest.raises(GameOverError, match="before reset"):
        env.legal_actions("player_0")
    with pytest.raises(GameOverError, match="before reset"):
        env.step({"player_0": 57, "player_1": 57})
    env.reset(seed=0)
    with pytest.raises(IllegalActionError, match="unknown agent 'player_9'"):
        env.legal_actions("player_9")


# ----------------------------------------------------------------------------- games that always end
def test_waiting_forever_is_truncated():
    for options in ({"time_limit": None}, {"solo": True}, {"time_limit": None, "max_ticks": 7}):
        env = summit_rush_v0.parallel_env(**options)
        env.reset(seed=1)
        ticks = 0
        while env.agents:
            _, rewards, terms, truncs, infos = env.step({a: env.WAIT for a in env.agents})
            ticks += 1
        assert ticks == options.get("max_ticks", 1000)
        assert all(truncs.values()) and not any(terms.values()) and set(rewards.values()) == {0.0}
        assert {info["outcome"] for info in infos.values()} == {"tick_limit"}


def test_game_is_cut_off_after_max_rounds():
    env = rook_v0.env(max_rounds=2, target_score=1000)
    env.reset(seed=4)
    rounds, last = 0, None
    for _ in env.agent_iter():
        obs, reward, term, trunc, info = env.last()
        if term or trunc:
            assert trunc and not term and reward == 0.0
            last = info
            env.step(None)
            continue
        env.step(int(np.flatnonzero(obs["action_mask"])[0]))
        rounds = len(env.unwrapped.game.history)
    assert rounds == 2 and last["outcome"] == "round_limit" and last["winner"] is None
    with pytest.raises(OptionError, match="max_rounds"):
        rook_v0.env(max_rounds=0)


# ----------------------------------------------------------------------------- records
def _deck_option(game: str) -> list[str]:
    names = list(ROOK_NAMES) if game == "rook" else list(CARD_NAMES)
    return list(reversed(names))


@pytest.mark.parametrize("game", MODULES)
def test_records_copy_the_callers_deck_in_and_out(game):
    env = MODULES[game].env()
    deck = _deck_option(game)
    env.reset(seed=2, options={"deck": deck})
    _play_some(env, 12)
    record = env.unwrapped.game_record()
    deck.reverse()  # the caller reuses its list...
    record["reset_options"]["deck"][0] = "XX"  # ...and scribbles on the record it was handed
    again = env.unwrapped.game_record()
    assert again["reset_options"]["deck"] == _deck_option(game)
    replay(again)  # still replays (it raised IllegalActionError or rebuilt another game before)


@pytest.mark.parametrize("game,options", [
    ("rope_team", {"ropes": np.int64(2), "max_deals": np.int32(2), "open_hands": np.bool_(True),
                   "trumps": np.True_, "shaping": np.float32(0.5)}),
    ("rook", {"target_score": np.int64(300), "rounds": np.int16(2), "max_rounds": np.int64(50)}),
    ("summit_rush", {"stock": np.int64(10), "players": np.int64(2), "wrap": np.False_,
                     "time_limit": np.float64(90.0), "max_ticks": np.int64(500)}),
])
def test_numpy_option_values_give_plain_json_records(game, options):
    env = MODULES[game].env(**options)
    reset_options = {"totals": [np.int64(100), np.int64(-50)]} if game == "rook" else {}
    env.reset(seed=np.int64(9), options=reset_options)
    _play_some(env, 20)
    record = env.unwrapped.game_record()
    text = json.dumps(record, allow_nan=False)
    assert json.loads(text) == record
    assert all(type(v) in (int, float, bool, str) for v in record["options"].values())
    assert type(record["seed"]) is int
    replay(json.loads(text))


@pytest.mark.parametrize("bad", [float("inf"), float("nan"), -float("inf")])
def test_non_finite_numbers_are_refused(bad):
    with pytest.raises(OptionError, match="shaping"):
        rope_team_v0.env(shaping=bad)
    with pytest.raises(OptionError, match="time_limit"):
        summit_rush_v0.env(time_limit=bad)


@pytest.mark.parametrize("game", MODULES)
@pytest.mark.parametrize("seed", [-1, "5", b"1", 1.5, True, np.float64(2.0), [3], np.int64(-2)])
def test_bad_seeds_raise_and_keep_the_previous_game(game, seed):
    env = MODULES[game].env()
    env.reset(seed=11)
    _play_some(env, 3)
    before = env.unwrapped.game_record()
    with pytest.raises(OptionError, match="seed must be a non-negative integer"):
        env.reset(seed=seed)
    assert env.unwrapped.game_record() == before
    _play_some(env, 3)  # still usable


@pytest.mark.parametrize("game", MODULES)
def test_numpy_seeds_are_the_same_game_as_python_seeds(game):
    a, b = MODULES[game].env(), MODULES[game].env()
    a.reset(seed=np.uint32(17))
    b.reset(seed=17)
    assert np.array_equal(a.state(), b.state())


def test_numpy_bool_flags_are_accepted():
    assert rope_team_v0.raw_env(open_hands=np.bool_(True)).config.open_hands is True
    assert summit_rush_v0.parallel_env(wrap=np.False_).config.wrap is False
    assert summit_rush_v0.parallel_env(solo=np.True_).config.players == 1
    with pytest.raises(OptionError, match="True or False"):
        rope_team_v0.raw_env(open_hands=1)


@pytest.mark.parametrize("edit,match", [
    (lambda r: r.pop("seed"), "missing seed"),
    (lambda r: r.pop("env"), "missing env"),
    (lambda r: r.pop("actions"), "missing actions"),
    (lambda r: r.update(env="poker_v0"), "unknown env 'poker_v0'"),
    (lambda r: r.update(seed=-3), "seed must be a non-negative integer"),
    (lambda r: r.update(seed="3"), "seed must be a non-negative integer"),
    (lambda r: r.update(kind="parallel"), "parallel record for rope_team_v0, which is turn-based"),
    (lambda r: r.update(kind="stream"), "kind must be"),
    (lambda r: r.update(actions={"0": 1}), "actions must be a list"),
    (lambda r: r.update(options=[1]), "options must be an object"),
    (lambda r: r.update(options={"level": "legendary"}), "cannot be set up: OptionError"),
    (lambda r: r["actions"].__setitem__(3, 0 if r["actions"][3] else 1), "move 4 .* cannot be replayed: GameOver"),
    (lambda r: r["actions"].__setitem__(3, "AS"), "move 3 .* cannot be replayed: IllegalActionError"),
])
def test_malformed_records_raise_record_error_naming_the_file(tmp_path, edit, match):
    env = rope_team_v0.env(level="easy")
    env.reset(seed=0)
    while len(env.unwrapped.game_record()["actions"]) < 20:
        obs, *_ = env.last()
        env.step(int(np.flatnonzero(obs["action_mask"])[0]))
    record = env.unwrapped.game_record()
    edit(record)
    path = tmp_path / "game.json"
    path.write_text(json.dumps(record))
    with pytest.raises(RecordError, match=f"record file '.*game.json'.*{match}"):
        replay(path)


def test_moves_after_a_penalised_ending_are_refused():
    env = rope_team_v0.env()
    env.reset(seed=0)
    obs, *_ = env.last()
    with pytest.warns(IllegalActionWarning):
        env.step(int(np.flatnonzero(obs["action_mask"] == 0)[0]))
    record = env.unwrapped.game_record()
    record["actions"].append(int(np.flatnonzero(obs["action_mask"])[0]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IllegalActionWarning)
        with pytest.raises(RecordError, match="move 1 .* GameOverError"):
            replay(record)


@pytest.mark.parametrize("content,record_problem", [(b"", " is not JSON"), (b"garbage" * 10, " is not JSON"),
                                                    (b"{}", ": missing env, seed, actions"),
                                                    (b"[1, 2]", " must be a JSON object, got list")])
def test_garbage_record_and_policy_files(tmp_path, content, record_problem):
    path = tmp_path / "x.npz"
    path.write_bytes(content)
    with pytest.raises(PolicyError, match="policy file '.*x.npz' is not a cardzoo policy file"):
        LearnedAgent(path)
    with pytest.raises(RecordError, match=f"record file '.*x.npz'{record_problem}"):
        replay(path)
    with pytest.raises(RecordError, match="does not exist"):
        replay(tmp_path / "missing.json")
    with pytest.raises(PolicyError, match="does not exist"):
        NumpyPolicy(tmp_path / "missing.npz")


@pytest.mark.parametrize("source, kind", [([1, 2], r"\[1, 2\] \(list\)"), (None, "None"), (3.5, "3.5"),
                                          (b"game.json", "bytes")])
def test_replay_of_something_that_is_not_a_record_names_what_a_record_is(source, kind):
    with pytest.raises(RecordError, match=f"a record is a dict .* or the path of its JSON file, got .*{kind}"):
        replay(source)


def test_policy_with_unknown_activation_or_missing_weights(tmp_path):
    with np.load(shipped_policy("rope_team")) as data:
        arrays = dict(data)
    meta = json.loads(str(arrays["meta"]))
    bad = tmp_path / "bad_activation.npz"
    np.savez(bad, **{**arrays, "meta": np.array(json.dumps({**meta, "activation": "gelu"}))})
    with pytest.raises(PolicyError, match="activation 'gelu'; known: tanh, relu"):
        NumpyPolicy(bad)
    missing = tmp_path / "missing_layer.npz"
    np.savez(missing, **{k: v for k, v in arrays.items() if k != "action_w"})
    with pytest.raises(PolicyError, match="missing an entry \\(action_w"):
        NumpyPolicy(missing)
    features = tmp_path / "features.npz"
    np.savez(features, **{**arrays, "meta": np.array(json.dumps({**meta, "features": "telepathy"}))})
    with pytest.raises(PolicyError, match="features 'telepathy'"):
        NumpyPolicy(features)
