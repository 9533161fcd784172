"""The Rope Team PettingZoo environment: API conformance, observations, errors, seeding, replay, rendering."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from pettingzoo.test import api_test, render_test, seed_test

from cardzoo.envs import DeckError, GameOverError, IllegalActionError, OptionError, replay, rope_team_v0, save
from cardzoo.envs.common.cards import CARD_NAMES, FULL_MASK, STANDARD_CARDS
from cardzoo.envs.common.options import UnknownResetOptionWarning
from cardzoo.envs.rope_team import rules
from cardzoo.envs.rope_team.observer import LAYOUT, describe

from .api_warnings import api_warnings
from .rope_team_helpers import QUIET_HAND0, QUIET_HAND1, build_deck
from .test_common import rewards_from_last
from .test_rope_team_rules import EXAMPLE_ANNA, EXAMPLE_BEN, EXAMPLE_RIDGE


def random_game(env, seed: int, policy_seed: int = 0, max_steps: int = 10_000):
    """Play random legal moves to the end; return the list of (agent, observation) pairs seen."""
    rng = np.random.default_rng(policy_seed)
    env.reset(seed=seed)
    seen = []
    for agent in env.agent_iter(max_steps):
        obs, _, term, trunc, _ = env.last()
        seen.append((agent, obs["observation"].copy()))
        if term or trunc:
            env.step(None)
        else:
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(rng.choice(legal)))
    return seen


def test_pettingzoo_api():
    assert api_warnings(lambda: api_test(rope_team_v0.env(), num_cycles=300)) == []


def test_pettingzoo_seed():
    assert api_warnings(lambda: seed_test(rope_team_v0.env, num_cycles=200)) == []


def test_pettingzoo_render():
    assert api_warnings(lambda: render_test(rope_team_v0.env)) == []


def test_spaces_and_docstring_table():
    env = rope_team_v0.raw_env()
    space = env.observation_space("player_0")
    assert space["observation"].shape == (LAYOUT.size,) and space["action_mask"].shape == (52,)
    assert env.action_space("player_1").n == 52
    for line in LAYOUT.table().splitlines():
        assert line in env.__doc__, f"env docstring is missing the slice line {line!r}"


def test_worked_example_through_env():
    deck = build_deck(EXAMPLE_RIDGE, EXAMPLE_ANNA, EXAMPLE_BEN, no_suits1="HC")
    env = rope_team_v0.env()
    env.reset(seed=0, options={"deck": deck})
    moves = ["KS", "9S", "9C", "4C", "3H", "KD"]
    for move in moves:
        env.step(STANDARD_CARDS[move])
    assert env.agent_selection == "player_1"
    view = describe(env.observe("player_1")["observation"])
    # Ben sees the ridge from his end: Anna's end card (Q♦) is his position 8.
    assert view["ridge"][8] == "QD" and view["ridge"][7] == "6H" and view["ridge"][6] == "TS"
    assert view["coin"] == 6 and view["trumps"] == "spades" and view["self_leads"] and view["self_to_move"]
    anna = describe(env.observe("player_0")["observation"])
    assert anna["coin"] == 2 and anna["ridge"][:3] == ["QD", "6H", "TS"] and not anna["self_to_move"]
    assert anna["played_self"] == ["9C", "3H", "KS"] and anna["played_partner"] == ["4C", "KD", "9S"]


def test_observation_is_seat_relative():
    env = rope_team_v0.raw_env()
    env.reset(seed=3)
    a, b = (describe(env.observe(p)["observation"]) for p in ("player_0", "player_1"))
    assert a["coin"] == b["coin"] == 4
    assert a["ridge"][4] == b["ridge"][4] != "??"
    assert a["self_to_move"] and not b["self_to_move"] and b["self_dealt"] and not a["self_dealt"]


def test_no_hidden_card_in_observation():
    env = rope_team_v0.raw_env()
    env.reset(seed=11)
    for _ in range(9):
        s = env.game
        for seat, agent in enumerate(env.possible_agents):
            view = describe(env.observe(agent)["observation"])
            hidden = {CARD_NAMES[c] for c in range(52) if s.hands[1 - seat] >> c & 1 or s.aside >> c & 1}
            hidden |= {CARD_NAMES[c] for pos, c in enumerate(s.ridge) if not s.up[pos]}
            shown = set(view["hand"]) | set(view["played_self"]) | set(view["played_partner"]) | set(view["ridge"])
            assert view["partner_hand"] is None
            assert not hidden & shown
        env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0]))


def test_open_hands_shows_partner():
    env = rope_team_v0.raw_env(open_hands=True)
    env.reset(seed=5)
    view = describe(env.observe("player_0")["observation"])
    assert view["open_hands"] and view["partner_hand"] == [CARD_NAMES[c] for c in range(52)
                                                           if env.game.hands[1] >> c & 1]


def braking_action(obs) -> int:
    """The legal card that pulls least (lowest card on ties): games that live long enough to see every deal."""
    return min(np.flatnonzero(obs["action_mask"]), key=lambda card: (rules.STEPS[card], card))


@pytest.mark.parametrize("max_deals", [1, 2, 3])
def test_last_deal_flag_follows_max_deals(max_deals):
    env = rope_team_v0.raw_env(ropes=4, max_deals=max_deals)
    flags = {}  # deal -> last_deal flags seen by both players in that deal
    for seed in range(20):
        env.reset(seed=seed)
        while env.game.outcome is None:
            for agent in env.possible_agents:
                view = describe(env.observe(agent)["observation"])
                assert view["deal"] == env.game.deal
                flags.setdefault(view["deal"], set()).add(view["last_deal"])
            env.step(braking_action(env.observe(env.agent_selection)))
        if len(flags) == max_deals:
            break
    assert flags == {deal: {deal == max_deals} for deal in range(1, max_deals + 1)}


def test_later_deal_is_a_fresh_shuffle_of_the_same_deck():
    # Two seeds share deal 1 (the deck option) and its play; deal 2 comes from each seed's own shuffle.
    deck = build_deck([], QUIET_HAND0, QUIET_HAND1)
    ridge = sum(1 << STANDARD_CARDS[n] for n in deck[:9])
    second_deals = []
    for seed in (1, 2):
        env = rope_team_v0.raw_env(ropes=4)
        env.reset(seed=seed, options={"deck": deck})
        first = (env.game.hands[0], env.game.hands[1], env.game.aside)
        while env.game.deal == 1:
            env.step(braking_action(env.observe(env.agent_selection)))
        s = env.game
        assert (s.hands[0] | s.hands[1] | s.aside) == FULL_MASK & ~ridge  # the 43 cards off the ridge ...
        assert [s.hands[0].bit_count(), s.hands[1].bit_count(), s.aside.bit_count()] == [13, 13, 17]  # ... all dealt
        assert (s.hands[0], s.hands[1], s.aside) != first
        second_deals.append((s.hands[0], s.hands[1]))
    assert second_deals[0] != second_deals[1]


def test_mask_only_for_player_to_move():
    env = rope_team_v0.raw_env()
    env.reset(seed=1)
    assert env.observe("player_0")["action_mask"].sum() == 13
    assert env.observe("player_1")["action_mask"].sum() == 0
    assert env.observe("player_0")["action_mask"].dtype == np.int8


def test_illegal_card_raises_and_state_unchanged():
    deck = build_deck([], ["AH"], ["2H", "KS"])
    env = rope_team_v0.env(illegal_action="raise")
    env.reset(seed=0, options={"deck": deck})
    before = env.unwrapped.game_record()
    with pytest.raises(IllegalActionError, match="not in their hand"):
        env.step(STANDARD_CARDS["2H"])
    env.step(STANDARD_CARDS["AH"])
    obs_before = env.observe("player_1")["observation"].copy()
    with pytest.raises(IllegalActionError, match=r"must follow hearts.*Legal actions: .*2♥"):
        env.step(STANDARD_CARDS["KS"])
    for bad in (52, -1, 3.0, "AH", True, None):
        with pytest.raises(IllegalActionError):
            env.step(bad)
    assert env.agent_selection == "player_1"
    assert np.array_equal(env.observe("player_1")["observation"], obs_before)
    assert env.unwrapped.game_record()["actions"] == before["actions"] + [STANDARD_CARDS["AH"]]
    env.step(np.int64(STANDARD_CARDS["2H"]))  # numpy integers are fine
    assert env.unwrapped.game.trick_no == 1


def test_penalize_mode():
    env = rope_team_v0.env(illegal_action="penalize")
    env.reset(seed=0, options={"deck": build_deck([], ["AH"], ["2H"])})
    env.step(STANDARD_CARDS["2H"])  # not in player_0's hand
    assert all(env.terminations.values())
    assert env.rewards == {"player_0": -1.0, "player_1": -1.0}
    assert env.infos["player_0"]["outcome"] == "illegal"
    with pytest.raises(IllegalActionError):  # out of the action space is never a move, even here
        env.unwrapped.reset(seed=0)
        env.step(99)


def test_step_after_end():
    env = rope_team_v0.env(level="hard")
    random_game(env, seed=2)
    assert not env.agents
    with pytest.raises(GameOverError, match="reset"):
        env.step(0)
    raw = rope_team_v0.raw_env(level="hard")
    raw.reset(seed=2)
    while not raw.terminations["player_0"]:
        raw.step(int(np.flatnonzero(raw.observe(raw.agent_selection)["action_mask"])[0]))
    with pytest.raises(GameOverError, match="step\\(None\\)"):
        raw.step(0)
    with pytest.raises(GameOverError):
        rope_team_v0.env().step(0)  # before reset


@pytest.mark.parametrize(
    "options, message",
    [
        ({"level": "legendary"}, "level"),
        ({"ropes": 5}, "out of range"),
        ({"ropes": 1.5}, "integer"),
        ({"trumps": "yes"}, "True or False"),
        ({"max_deals": 4}, "out of range"),
        ({"rope": 1}, "did you mean 'ropes'"),
        ({"illegal_action": "ignore"}, "illegal_action"),
        ({"render_mode": "video"}, "render_mode"),
    ],
)
def test_bad_options(options, message):
    with pytest.raises(OptionError, match=message):
        rope_team_v0.env(**options)


def test_bad_reset_options_and_decks():
    env = rope_team_v0.env()
    env.reset(seed=4)
    record = env.unwrapped.game_record()
    deck = build_deck([], [], [])
    for bad, message in [
        (deck[:51], "52 cards"),
        (deck[:51] + [deck[0]], "repeats"),
        (deck[:51] + ["1S"], "unknown card '1S'"),
        ("AS KS", "list"),
        (deck[:51] + [7], "string"),
    ]:
        with pytest.raises(DeckError, match=message):
            env.reset(seed=1, options={"deck": bad})
    with pytest.raises(OptionError, match="unknown reset option 'dek' \\(did you mean 'deck'\\?\\)"):
        env.reset(seed=4, options={"dek": deck})
    with pytest.warns(UnknownResetOptionWarning, match="probe"):
        env.reset(seed=4, options={"options": {"deck": deck}})
    with pytest.raises(OptionError, match="dealer"):
        env.reset(options={"dealer": "anna"})
    record["reset_options"] = {"options": {"deck": deck}}
    assert env.unwrapped.game_record() == record  # the same game as seed 4: the probe key changed nothing


def test_deck_mapping():
    deck = build_deck([], [], [])
    env = rope_team_v0.raw_env()
    env.reset(options={"deck": deck})
    s = env.game
    ids = [STANDARD_CARDS[n] for n in deck]
    assert s.ridge == ids[:9]
    assert s.hands[0] == sum(1 << c for c in ids[9:22]) and s.hands[1] == sum(1 << c for c in ids[22:35])
    assert s.aside == sum(1 << c for c in ids[35:])


def test_dealer_option():
    env = rope_team_v0.raw_env()
    env.reset(seed=0, options={"dealer": "player_0"})
    assert env.agent_selection == "player_1" and env.game.dealer == 0
    env.reset(seed=0)
    assert env.agent_selection == "player_0"


def test_levels():
    assert rope_team_v0.raw_env(level="easy").config.ropes == 2
    assert rope_team_v0.raw_env(level="expert").config == rules.Config(ropes=0, trumps=False)
    assert rope_team_v0.raw_env(level="hard", ropes=3, max_deals=2).config == rules.Config(ropes=3, max_deals=2)


def test_rewards_and_info_at_the_end():
    totals, paid_mid_game, final = rewards_from_last(rope_team_v0.env(), seed=8)
    assert final["outcome"] in ("win", "fall", "out_of_deals")
    expected = 1.0 if final["outcome"] == "win" else -1.0
    assert totals == {"player_0": expected, "player_1": expected} and paid_mid_game == 0
    assert set(final) == {"outcome", "win_deal", "uncovered", "ropes_used", "deals", "tricks"}


def test_shaping():
    deck = build_deck([], ["8S"], ["2S"])
    env = rope_team_v0.env(shaping=0.1)
    env.reset(seed=0, options={"deck": deck})
    env.step(STANDARD_CARDS["8S"])
    env.step(STANDARD_CARDS["2S"])
    assert env.rewards == {"player_0": 0.1, "player_1": 0.1}


def _observation_digest(seed: int) -> str:
    env = rope_team_v0.env()
    seen = random_game(env, seed=seed, policy_seed=seed)
    return str(hash(b"".join(obs.tobytes() for _, obs in seen)))


def test_same_seed_same_game_across_processes():
    code = ("import sys; sys.path.insert(0, '.');"
            "from tests.test_rope_team_env import _observation_digest; print(_observation_digest(77))")
    env = {"PYTHONHASHSEED": "0"}
    import os

    out = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          env={**os.environ, **env}).stdout.strip() for _ in range(2)]
    assert out[0] == out[1] and out[0]
    other = subprocess.run([sys.executable, "-c", code.replace("77", "78")], capture_output=True, text=True,
                           check=True, env={**os.environ, **env}).stdout.strip()
    assert other != out[0]


def test_seedless_resets_continue_a_stream():
    a, b = rope_team_v0.raw_env(), rope_team_v0.raw_env()
    a.reset(seed=9)
    b.reset(seed=9)
    a.reset()
    b.reset()
    assert a.game_record()["seed"] == b.game_record()["seed"] and a.game.hands == b.game.hands


def test_replay(tmp_path):
    env = rope_team_v0.env(level="easy")
    random_game(env, seed=21)
    record = env.unwrapped.game_record()
    assert json.loads(json.dumps(record)) == record  # plain JSON
    path = tmp_path / "game.json"
    save(env, path)
    again = replay(path)
    s, t = env.unwrapped.game, again.unwrapped.game
    assert (s.ridge, s.up, s.coin, s.trumps, s.ropes, s.deal, s.hands, s.outcome) == \
           (t.ridge, t.up, t.coin, t.trumps, t.ropes, t.deal, t.hands, t.outcome)
    # A seedless game records the seed it drew, so it replays too.
    fresh = rope_team_v0.env()
    fresh.reset()
    fresh.step(int(np.flatnonzero(fresh.observe(fresh.agent_selection)["action_mask"])[0]))
    copy = replay(fresh.unwrapped.game_record())
    assert copy.unwrapped.game.hands == fresh.unwrapped.game.hands


def test_replay_with_deck():
    deck = build_deck(EXAMPLE_RIDGE, EXAMPLE_ANNA, EXAMPLE_BEN, no_suits1="HC")
    env = rope_team_v0.env()
    env.reset(seed=5, options={"deck": deck})
    for move in ["KS", "9S", "9C", "4C"]:
        env.step(STANDARD_CARDS[move])
    again = replay(env.unwrapped.game_record())
    assert again.unwrapped.game.coin == 0 and again.unwrapped.game.up == env.unwrapped.game.up


def test_render_text_hides_what_the_viewer_cannot_see():
    env = rope_team_v0.env(render_mode="ansi", render_viewer="player_0")
    env.reset(seed=13)
    text = env.render()
    s = env.unwrapped.game
    assert "??" in text and "ropes left: 1" in text and "hand of player_1: 13 cards, hidden" in text
    from cardzoo.envs.common.cards import card_pretty

    hidden = [card_pretty(c) for pos, c in enumerate(s.ridge) if not s.up[pos]]
    hand_line = next(line for line in text.splitlines() if line.startswith("hand of player_0"))
    assert all(h not in text.replace(hand_line, "") for h in hidden)


def test_render_rgb():
    env = rope_team_v0.env(render_mode="rgb_array")
    env.reset(seed=13)
    first = env.render()
    assert first.dtype == np.uint8 and first.ndim == 3 and first.shape[2] == 3
    env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0]))
    assert not np.array_equal(first, env.render())
    with pytest.raises(OptionError, match="render_mode"):
        plain = rope_team_v0.env()
        plain.reset(seed=0)
        plain.render()
