"""Summit Rush through the PettingZoo API: the parallel env, its AEC form, errors, seeding, replay and rendering."""

from __future__ import annotations

import json
import textwrap

import numpy as np
import pytest
from pettingzoo.test import api_test, parallel_api_test, parallel_seed_test, render_test

from cardzoo.envs import DeckError, GameOverError, IllegalActionError, OptionError, replay, save, summit_rush_v0
from cardzoo.envs.common.cards import card_pretty, card_str, parse_card
from cardzoo.envs.common.options import UnknownResetOptionWarning
from cardzoo.envs.common.record import ENV_MODULES
from cardzoo.envs.summit_rush import rules

from .api_warnings import api_warnings
from .test_summit_rush_rules import EXAMPLE_DECK, EXAMPLE_TICKS, REDIRECT_DECK, make_deck, redirect_actions, stuck_deck

# These tests pin the game's mechanics in the silent variant, whose actions are the moves themselves; the message
# channel (on by default) has its own tests in test_summit_rush_talk.py.


def silent_parallel_env(**options):
    return summit_rush_v0.parallel_env(talk=False, **options)


def silent_env(**options):
    return summit_rush_v0.env(talk=False, **options)


def random_game(env, seed: int, policy_seed: int = 0):
    """Random legal play to the end; returns the last step's infos and the number of ticks."""
    rng = np.random.default_rng(policy_seed)
    obs, _ = env.reset(seed=seed)
    ticks = 0
    while env.agents:
        actions = {a: int(rng.choice(np.flatnonzero(obs[a]["action_mask"]))) for a in env.agents}
        obs, rewards, terms, truncs, infos = env.step(actions)
        ticks += 1
    return infos, ticks, rewards


def example_env(**options):
    env = silent_parallel_env(render_mode="ansi", **options)
    obs, infos = env.reset(seed=3, options={"deck": EXAMPLE_DECK})
    return env, obs


def action_of(env, spec) -> int:
    if spec == "wait":
        return env.WAIT
    if spec == "turn":
        return env.TURN
    pos = [card_str(c) for c in env.game.peaks].index(spec[0])
    return pos * env.config.players + spec[1]


# ----------------------------------------------------------------------------------------------- PettingZoo tests


def test_parallel_api():
    assert api_warnings(lambda: parallel_api_test(silent_parallel_env(), num_cycles=200)) == []
    assert api_warnings(lambda: parallel_api_test(silent_parallel_env(players=3, level="hard"))) == []
    assert api_warnings(lambda: parallel_api_test(silent_parallel_env(solo=True), num_cycles=500)) == []


def test_parallel_seed():
    # PettingZoo's parallel seed test samples actions without the mask, so illegal ones must not raise here.
    assert api_warnings(lambda: parallel_seed_test(lambda: silent_parallel_env(illegal_action="wait"))) == []


def test_aec_api():
    assert api_warnings(lambda: api_test(silent_env(), num_cycles=300)) == []
    assert api_warnings(lambda: api_test(silent_env(players=3), num_cycles=100)) == []


def test_render_api():
    assert api_warnings(lambda: render_test(summit_rush_v0.env)) == []


# ----------------------------------------------------------------------------------------------- spaces and docs


def test_spaces_and_docstring_table():
    env = silent_parallel_env()
    assert env.possible_agents == ["player_0", "player_1"]
    assert env.action_space("player_0").n == 58 and env.TURN == 56 and env.WAIT == 57
    assert env.observation_space("player_1")["observation"].shape == (732,)
    talking = summit_rush_v0.parallel_env()
    assert talking.action_space("player_0").n == 58 * 57 and talking.n_moves == 58
    assert talking.observation_space("player_1")["observation"].shape == (732 + 2 * 56 + 2 * 10,)
    assert textwrap.indent(talking.observer.layout.table(), "    ") in summit_rush_v0.SummitRushEnv.__doc__
    assert silent_parallel_env(players=3).action_space("player_2").n == 86
    assert silent_parallel_env(solo=True).possible_agents == ["player_0"]
    assert silent_parallel_env(solo=True).action_space("player_0").n == 30


def test_levels_and_options():
    cfg = summit_rush_v0.make_config
    assert (cfg().stock, cfg().ticks, cfg().players) == (12, 60, 2)
    assert (cfg("hard").stock, cfg("hard").ticks, cfg("hard").aside) == (10, 40, 4)
    assert (cfg("hard", players=3).stock, cfg("hard", players=3).aside, cfg("hard", players=3).ticks) == (6, 6, 40)
    assert (cfg(players=3).stock, cfg(players=3).ticks) == (8, 60)
    assert (cfg("expert").ticks, cfg("expert", players=3).stock) == (30, 6)
    assert cfg(time_limit=None).ticks is None and cfg(wrap=False).wrap is False
    solo = cfg(solo=True)
    assert (solo.players, solo.stock, solo.ticks) == (1, 24, None)
    assert cfg(solo=True, time_limit=300).ticks == 100
    assert cfg(time_limit=60, seconds_per_action=2).ticks == 30
    assert cfg(stock=5).aside == 14


@pytest.mark.parametrize(("options", "message"), [
    ({"level": "easy"}, "level"),
    ({"players": 4}, "players"),
    ({"players": 1}, "players"),
    ({"players": True}, "players"),
    ({"solo": "yes"}, "solo"),
    ({"solo": True, "players": 3}, "solo"),
    ({"solo": True, "players": 2}, "solo"),
    ({"stock": 13}, "stock"),
    ({"stock": 9, "players": 3}, "stock"),
    ({"time_limit": -1}, "time_limit"),
    ({"time_limit": "3 minutes"}, "time_limit"),
    ({"time_limit": 2}, r"time_limit=2.0 is out of range 3.0..3000.0"),
    ({"seconds_per_action": 0}, "seconds_per_action"),
    ({"time_limit": float("inf")}, r"time_limit=inf is out of range"),
    ({"time_limit": 1e300}, r"out of range 3.0..3000.0"),
    ({"time_limit": float("nan")}, "time_limit"),
    ({"time_limit": 3e7}, "out of range"),
    ({"seconds_per_action": 1e-300}, r"seconds_per_action=1e-300 is out of range 0.1..60.0"),
    ({"seconds_per_action": 61}, "seconds_per_action"),
    ({"time_limit": 101, "seconds_per_action": 0.1}, r"out of range 0.1..100.0"),
    ({"max_ticks": 0}, r"max_ticks=0 is out of range 1..100000"),
    ({"max_ticks": 10**6}, "max_ticks"),
    ({"max_ticks": 2.5}, "max_ticks must be an integer"),
    ({"wrap": 1}, "wrap"),
    ({"illegal_action": "ignore"}, "illegal_action"),
    ({"render_mode": "pixels"}, "render_mode"),
    ({"playres": 3}, "did you mean 'players'"),
])
def test_bad_options(options, message):
    with pytest.raises(OptionError, match=message):
        silent_parallel_env(**options)


def test_bad_reset_options_leave_the_game_intact():
    env = silent_parallel_env()
    obs, _ = env.reset(seed=1)
    env.step({"player_0": env.WAIT, "player_1": env.TURN})
    before = env.game.copy()
    record = env.game_record()
    bad = [
        ({"deck": EXAMPLE_DECK[:51]}, DeckError, "52"),
        ({"deck": EXAMPLE_DECK[:51] + EXAMPLE_DECK[:1]}, DeckError, "repeats"),
        ({"deck": EXAMPLE_DECK[:51] + ["1S"]}, DeckError, "unknown card"),
        ({"deck": "AS KS"}, DeckError, "list"),
        ({"dek": EXAMPLE_DECK}, OptionError, "did you mean 'deck'"),
    ]
    for options, error, message in bad:
        with pytest.raises(error, match=message):
            env.reset(seed=2, options=options)
    assert env.game.tick == before.tick == 1 and env.game.piles == before.piles
    assert env.game_record() == record and env.agents == ["player_0", "player_1"]


def test_pettingzoo_probe_reset_option_is_ignored():
    env = silent_parallel_env()
    with pytest.warns(UnknownResetOptionWarning, match="probe"):
        a, _ = env.reset(seed=4, options={"options": 1})
    b, _ = env.reset(seed=4)
    assert np.array_equal(a["player_0"]["observation"], b["player_0"]["observation"])


# ----------------------------------------------------------------------------------------------- the game


def test_worked_example_through_env():
    env, obs = example_env()
    view = env.describe(obs["player_1"]["observation"])
    assert view["piles"] == ["4S", "9C"] and view["stock_left"] == [11, 11] and view["seat"] == 1
    assert [view["peaks"][p] for p in range(18, 28)] == EXAMPLE_DECK[18:28]
    assert all(view["peaks"][p] == "??" for p in range(18))
    for i, spec in enumerate(EXAMPLE_TICKS):
        actions = {a: action_of(env, x) for a, x in zip(env.agents, spec, strict=True)}
        for agent, action in actions.items():
            assert obs[agent]["action_mask"][action] == 1
        obs, rewards, terms, truncs, infos = env.step(actions)
        assert rewards == {"player_0": 0.0, "player_1": 0.0} and not any(terms.values())
        view = env.describe(obs["player_0"]["observation"])
        if i == 5:
            assert view["piles"] == ["9S", "QS"]
            assert sorted(view["peaks"][p] for p in view["free"]) == sorted(["7C", "2S", "2C", "3C", "4D"])
            for agent in env.agents:  # nothing fits: turn or wait
                assert np.flatnonzero(obs[agent]["action_mask"]).tolist() == [env.TURN, env.WAIT]
    assert view["piles"] == ["9S", "2S"] and view["stock_left"] == [11, 10] and view["time_left"] == 50
    assert view["peaks"].count(None) == 13 and view["peaks"].count("??") == 18 - 3 - 1 - 1 - 4
    text = env.render()
    assert "2♠" in text and "tick 10/60" in text


def test_rewards_and_info_on_a_win():
    env = silent_parallel_env(time_limit=6)  # two ticks
    env.reset(seed=0, options={"deck": make_deck({18: "5H", 19: "6D"}, [["4S"], ["9C"]])})
    env.game.present = env.game.up = 1 << 18 | 1 << 19  # all but two cards already gone
    obs, rewards, terms, truncs, infos = env.step({"player_0": 18 * 2, "player_1": env.WAIT})
    assert rewards == {"player_0": 0.0, "player_1": 0.0} and infos == {"player_0": {}, "player_1": {}}
    obs, rewards, terms, truncs, infos = env.step({"player_0": 19 * 2, "player_1": env.TURN})
    assert rewards == {"player_0": 1.0, "player_1": 1.0}
    assert terms == {"player_0": True, "player_1": True} and truncs == {"player_0": False, "player_1": False}
    info = infos["player_1"]
    # The game ends the moment the last card lands: player_1's turn landed only if it came first in the tick.
    turned = int(env.game.last_order[0] == 1)
    assert info["outcome"] == "win" and info["ticks"] == 2 and info["score"] == 11 + 11 - turned
    assert info["conflicts"] == info["bounced"] == info["redirected"] == 0 and info["turned"] == turned
    assert env.agents == [] and all(not m["action_mask"].any() for m in obs.values())


def test_time_loss_through_env():
    env = silent_parallel_env(level="hard")
    env.reset(seed=5)
    for i in range(40):
        obs, rewards, terms, truncs, infos = env.step({"player_0": env.WAIT, "player_1": env.WAIT})
        if i < 39:
            assert env.describe(obs["player_0"]["observation"])["time_left"] == 39 - i
    assert terms["player_0"] and rewards["player_1"] == -1.0
    assert infos["player_0"]["outcome"] == "time" and infos["player_0"]["ticks"] == 40
    assert infos["player_0"]["score"] == 0 and infos["player_0"]["peaks_left"] == 28


def test_stuck_loss_through_env():
    env = silent_parallel_env(time_limit=None)
    env.reset(seed=0, options={"deck": stuck_deck()})
    for _ in range(11):
        obs, rewards, terms, truncs, infos = env.step({"player_0": env.TURN, "player_1": env.TURN})
    assert infos["player_0"]["outcome"] == "stuck" and rewards["player_0"] == -1.0 and infos["player_0"]["turned"] == 22


def test_conflicts_and_bounces_are_counted_in_info():
    env = silent_parallel_env(time_limit=6)
    env.reset(seed=0, options={"deck": make_deck({18: "5H", 19: "7H", 20: "9D"}, [["4S"], ["8C"]])})
    env.step({"player_0": 18 * 2 + 0, "player_1": 18 * 2 + 0})  # both grab the 5H: one conflict
    # 7H aimed at the 8C and 9D onto the same 8C: whichever lands second no longer fits (5H on pile 0 takes
    # neither) -> one bounce
    _, _, _, _, infos = env.step({"player_0": 19 * 2 + 1, "player_1": 20 * 2 + 1})
    assert infos["player_0"]["conflicts"] == 1 and infos["player_0"]["bounced"] == 1
    assert infos["player_0"]["outcome"] == "time"


def test_redirect_to_own_pile_through_env():
    # The first tick's touch order is the game's first draw (rules.draw_order): pick a seed where player_0 touches
    # before player_1, so the 9D lands before the 7H is redirected.
    env = summit_rush_v0.parallel_env(players=3)
    for seed in range(20):
        env.reset(seed=seed, options={"deck": REDIRECT_DECK})
        order = rules.draw_order(env.game.copy())  # the copy's generator is the game's, not advanced
        if order.index(0) < order.index(1):
            break
    actions = redirect_actions(env.game)
    obs, *_ = env.step(dict(zip(env.agents, actions, strict=True)))
    assert env.game.last_order == order
    assert env.describe(obs["player_1"]["observation"])["piles"] == ["6S", "7H", "9D"]
    assert env.game.redirected == 1 and env.game.bounced == 0


def test_observations_identical_but_for_the_seat():
    env = silent_parallel_env(players=3)
    obs, _ = env.reset(seed=8)
    seat = env.observer.layout["seat"]
    for _ in range(5):
        vectors = [obs[a]["observation"] for a in env.possible_agents]
        for p, v in enumerate(vectors):
            assert v[seat].tolist() == [int(q == p) for q in range(3)]
            rest = np.delete(v, np.arange(seat.start, seat.stop))
            assert np.array_equal(rest, np.delete(vectors[0], np.arange(seat.start, seat.stop)))
        obs, *_ = env.step({a: int(np.flatnonzero(obs[a]["action_mask"])[0]) for a in env.agents})


def test_state_is_the_public_table_and_the_hidden_cards():
    env = silent_parallel_env()
    with pytest.raises(GameOverError):
        env.state()
    obs, _ = env.reset(seed=2)
    state = env.state()
    assert env.state_space.contains(state)
    parts = env.observer.state_layout.split(state)
    seat = env.observer.layout["seat"]
    expected = obs["player_0"]["observation"].copy()
    expected[seat] = 0
    assert np.array_equal(parts["table"], expected)
    s = env.game
    for pos in range(rules.N_PEAKS):  # every face-down card, by rank and suit, and nothing at other positions
        ranks, suits = parts["down_rank"][13 * pos:13 * pos + 13], parts["down_suit"][4 * pos:4 * pos + 4]
        if s.up >> pos & 1:
            assert not ranks.any() and not suits.any()
        else:
            assert np.flatnonzero(ranks).tolist() == [s.peaks[pos] % 13]
            assert np.flatnonzero(suits).tolist() == [s.peaks[pos] // 13]
    for p in range(2):
        nxt = parts["stock_next"][17 * p:17 * p + 17]
        assert np.flatnonzero(nxt).tolist() == [s.stock_card(p) % 13, 13 + s.stock_card(p) // 13]
        assert sorted(np.flatnonzero(parts["stock_cards"][52 * p:52 * p + 52])) == sorted(s.stocks[p][1:])


def test_action_names_and_legal_actions():
    env, obs = example_env()
    assert env.action_name(env.WAIT) == "wait" and env.action_name(env.TURN) == "turn own stock"
    assert env.action_name(20 * 2 + 0) == "5♥ at position 20 onto pile 0"
    assert env.action_name(0) == "card at position 0 onto pile 0"  # a face-down card is not named
    assert env.legal_actions("player_0") == np.flatnonzero(obs["player_0"]["action_mask"]).tolist()
    assert 20 * 2 + 0 in env.legal_actions("player_1")  # 5H onto Anna's 4S, by Ben


def test_wait_is_always_legal_and_turn_only_with_stock():
    env = silent_parallel_env(time_limit=None)
    obs, _ = env.reset(seed=0, options={"deck": stuck_deck()})
    for _ in range(11):
        obs, *_ = env.step({"player_0": env.TURN, "player_1": env.WAIT})
    assert np.flatnonzero(obs["player_0"]["action_mask"]).tolist() == [env.WAIT]
    assert np.flatnonzero(obs["player_1"]["action_mask"]).tolist() == [env.TURN, env.WAIT]


# ----------------------------------------------------------------------------------------------- bad input


def test_illegal_action_raises_names_everything_and_changes_nothing():
    env, obs = example_env(illegal_action="raise")
    before = env.game.copy()
    record = env.game_record()
    face_down = 0 * 2  # position 0 is face down
    with pytest.raises(IllegalActionError) as err:
        env.step({"player_0": env.WAIT, "player_1": face_down})
    message = str(err.value)
    assert "player_1" in message and "action 0" in message and "face down" in message
    assert "Legal actions:" in message and f"{env.WAIT} (wait)" in message and f"{env.TURN} (turn own stock)" in message
    # The legal action of player_0 was not applied either: nothing changed, the tick did not pass.
    assert env.game.tick == before.tick and env.game.piles == before.piles and env.game.present == before.present
    assert env.game_record() == record
    with pytest.raises(IllegalActionError, match="does not fit the 4♠ on pile 0"):
        env.step({"player_0": 22 * 2 + 0, "player_1": env.WAIT})  # 10S onto 4S
    env.step({"player_0": 20 * 2, "player_1": env.WAIT})  # 5H onto 4S
    with pytest.raises(IllegalActionError, match="position 20 is empty"):
        env.step({"player_0": 20 * 2, "player_1": env.WAIT})


@pytest.mark.parametrize(("actions", "message"), [
    ({"player_0": 57}, "missing actions for \\['player_1'\\]"),
    ({"player_0": 57, "player_1": 57, "player_2": 57}, "unknown agents \\['player_2'\\]"),
    ([57, 57], "dict"),
    ({"player_0": 57, "player_1": 58}, "out of range 0..57"),
    ({"player_0": -1, "player_1": 57}, "out of range"),
    ({"player_0": True, "player_1": 57}, "integer"),
    ({"player_0": 57.0, "player_1": 57}, "integer"),
    ({"player_0": None, "player_1": 57}, "integer"),
])
def test_malformed_actions_raise(actions, message):
    env = silent_parallel_env()
    env.reset(seed=0)
    with pytest.raises(IllegalActionError, match=message):
        env.step(actions)
    assert env.game.tick == 0


def test_numpy_integers_are_accepted():
    env = silent_parallel_env()
    env.reset(seed=0)
    env.step({"player_0": np.int64(57), "player_1": np.array(57)})
    assert env.game.tick == 1


def test_step_after_the_end_and_before_reset():
    env = silent_parallel_env(time_limit=3)
    with pytest.raises(GameOverError, match="reset"):
        env.step({"player_0": 57, "player_1": 57})
    env.reset(seed=0)
    env.step({"player_0": 57, "player_1": 57})
    with pytest.raises(GameOverError, match="over \\(time\\)"):
        env.step({"player_0": 57, "player_1": 57})
    aec = silent_env(time_limit=3)
    with pytest.raises(GameOverError):
        aec.step(57)
    aec.reset(seed=0)
    for _ in aec.agent_iter():
        _, _, term, trunc, _ = aec.last()
        aec.step(None if term or trunc else 57)
    with pytest.raises(GameOverError):
        aec.step(57)


def test_penalize_and_wait_modes():
    env = silent_parallel_env(illegal_action="penalize")
    env.reset(seed=0)
    obs, rewards, terms, _, infos = env.step({"player_0": 0, "player_1": 57})
    assert rewards == {"player_0": -1.0, "player_1": -1.0} and all(terms.values()) and env.agents == []
    assert infos["player_1"]["outcome"] == "illegal" and infos["player_1"]["illegal_by"] == ["player_0"]
    assert not any(o["action_mask"].any() for o in obs.values())  # the game is over: nothing is legal
    assert env.game.tick == 0 and env.game.present == rules.ALL_PEAKS  # the legal wait was not applied either
    env = silent_parallel_env(illegal_action="wait", time_limit=6)
    env.reset(seed=0)
    env.step({"player_0": 0, "player_1": 1})
    assert env.game.tick == 1 and env.game.present == rules.ALL_PEAKS and env.illegal_waits == 2
    _, _, _, _, infos = env.step({"player_0": 57, "player_1": 0})
    assert infos["player_0"]["illegal_waits"] == 3
    e = silent_parallel_env(illegal_action="wait")
    e.reset(seed=0)
    with pytest.raises(IllegalActionError, match="out of range"):  # malformed input still raises
        e.step({"player_0": 99, "player_1": 57})


def test_aec_form_rejects_an_illegal_action_at_once():
    env = silent_env(illegal_action="raise")
    env.reset(seed=0)
    assert env.agent_selection == "player_0"
    with pytest.raises(IllegalActionError, match="player_0 cannot play action 0"):
        env.step(0)
    assert env.agent_selection == "player_0"  # nothing was stored
    env.step(57)
    env.step(57)
    assert env.unwrapped.game.tick == 1


# ----------------------------------------------------------------------------------------------- seeding, replay


def _digest(env, seed=None, steps=30, policy_seed=1):
    rng = np.random.default_rng(policy_seed)
    obs, _ = env.reset(seed=seed)
    out = [obs["player_0"]["observation"].tobytes()]
    for _ in range(steps):
        if not env.agents:
            break
        obs, *_ = env.step({a: int(rng.choice(np.flatnonzero(obs[a]["action_mask"]))) for a in env.agents})
        out.append(obs["player_1"]["observation"].tobytes())
    return out


def test_same_seed_same_game_and_seedless_resets_continue_a_stream():
    a, b = silent_parallel_env(), silent_parallel_env()
    assert _digest(a, 11) == _digest(b, 11)
    assert _digest(a, 11) != _digest(a, 12)
    a.reset(seed=11)
    b.reset(seed=11)
    assert _digest(a) == _digest(b)  # the second game of the stream seeded by 11
    seeds = {a.game_record()["seed"], b.game_record()["seed"]}
    assert len(seeds) == 1 and seeds != {11}


def test_order_comes_from_the_seed():
    env = silent_parallel_env(time_limit=None)
    orders = []
    for seed in (0, 0, 1):
        env.reset(seed=seed)
        got = []
        for _ in range(20):
            env.step({"player_0": env.WAIT, "player_1": env.WAIT})
            got.append(env.game.last_order)
        orders.append(got)
    assert orders[0] == orders[1] != orders[2]


def test_replay_parallel_record(tmp_path):
    env = silent_parallel_env(level="hard", wrap=False)
    infos, ticks, _ = random_game(env, seed=21)
    path = tmp_path / "game.json"
    save(env, path)
    record = json.loads(path.read_text())
    assert record["kind"] == "parallel" and record["env"] == "summit_rush_v0" and len(record["actions"]) == ticks
    assert record["options"] == {"level": "hard", "wrap": False, "talk": False, "illegal_action": "penalize"}
    again = replay(path)
    assert again.game.piles == env.game.piles and again.game.outcome == env.game.outcome
    assert again.outcome_info == infos["player_0"]
    assert "summit_rush_v0" in ENV_MODULES


def test_replay_with_deck_and_aec_record():
    aec = silent_env(players=3)
    deck = make_deck(config=rules.Config(players=3, stock=8))
    aec.reset(seed=4, options={"deck": deck})
    rng = np.random.default_rng(0)
    for _ in range(30):
        obs, *_ = aec.last()
        aec.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    record = aec.unwrapped.game_record()
    assert len(record["actions"]) == 10 and set(record["actions"][0]) == {"player_0", "player_1", "player_2"}
    again = replay(record)
    assert again.game.piles == aec.unwrapped.game.piles and again.game.tick == 10
    assert [card_str(x) for x in again.game.peaks] == deck[:28]


def test_aec_replay_path_still_works_for_flat_records():
    # A flat (AEC) record of Summit Rush's AEC form replays through env(): the old path is unchanged.
    record = {"env": "summit_rush_v0", "options": {}, "seed": 3, "reset_options": {}, "actions": [57, 56, 57]}
    env = replay(record)
    assert env.unwrapped.game.tick == 1 and env.unwrapped.game.stock_left == [11, 10]
    assert env.agent_selection == "player_1"  # player_0 has acted in tick 2


# ----------------------------------------------------------------------------------------------- rendering


def test_render_text_hides_face_down_cards():
    env = silent_parallel_env(render_mode="ansi")
    env.reset(seed=0, options={"deck": EXAMPLE_DECK})
    text = env.render()
    assert text.count("[###]") == 18 and "4♠" in text and "9♣" in text and "stock: 11 left" in text
    for name in EXAMPLE_DECK[:18] + EXAMPLE_DECK[29:40] + EXAMPLE_DECK[41:52]:
        assert f"[{card_pretty(parse_card(name)):>3}]" not in text


def test_render_rgb():
    env = silent_parallel_env(render_mode="rgb_array")
    with pytest.raises(OptionError, match="before reset"):
        env.render()
    obs, _ = env.reset(seed=0, options={"deck": EXAMPLE_DECK})
    first = env.render()
    assert first.dtype == np.uint8 and first.ndim == 3 and first.shape[2] == 3
    env.step({"player_0": 20 * 2, "player_1": 22 * 2 + 1})
    assert not np.array_equal(first, env.render())
    with pytest.raises(OptionError, match="render_mode"):
        silent_parallel_env().render()


def test_human_render_prints(capsys):
    env = silent_parallel_env(render_mode="human", players=3)
    env.reset(seed=0)
    assert env.render() is None
    assert "pile 2 (player_2)" in capsys.readouterr().out


def test_module_describe_and_help_pages_like_the_other_games():
    import pydoc

    for constructor in (summit_rush_v0.raw_env, summit_rush_v0.env, summit_rush_v0.parallel_env):
        page = pydoc.render_doc(constructor, renderer=pydoc.plaintext)
        assert "Observation space" in page and "Version history" in page and "Talking" in page
    env = silent_parallel_env(level="hard", players=3)
    obs, _ = env.reset(seed=4)
    vector = obs["player_2"]["observation"]
    assert summit_rush_v0.describe(vector, level="hard", players=3, talk=False) == env.describe(vector)
    with pytest.raises(OptionError, match="pass the options the game was made with"):
        summit_rush_v0.describe(vector)
