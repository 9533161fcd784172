"""Each observer's ``decode(bits)`` reads back what ``describe(vector)`` (the people's reading) says, along random
games of every game; and ``BitsAgent.act`` is ``act_bits`` on the packed arrays."""

from __future__ import annotations

import numpy as np
import pytest

from cardzoo.agents.base import BitsAgent
from cardzoo.agents.registry import make_agent
from cardzoo.envs import rook_v0, rope_team_v0, summit_rush_v0
from cardzoo.envs.common.cards import CARD_NAMES, SUIT_NAMES, cards_of
from cardzoo.envs.common.errors import PolicyError
from cardzoo.envs.common.layout import to_bits
from cardzoo.envs.rook import observer as rook_observer
from cardzoo.envs.rook.rules import BID_AMOUNTS, PHASE_NAMES, card_name
from cardzoo.envs.rope_team import observer as rope_observer
from cardzoo.envs.summit_rush import observer as summit_observer
from cardzoo.envs.summit_rush.rules import MESSAGES


def _names(mask: int, name=CARD_NAMES.__getitem__) -> list[str]:
    return [name(c) for c in cards_of(mask)]


def _aec_observations(env, seed: int):
    """Every observation of one random game of an AEC env, with its mask."""
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    for _ in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        yield obs["observation"], obs["action_mask"]
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))


@pytest.mark.parametrize("options", [{"level": "normal"}, {"level": "expert", "open_hands": True}], ids=str)
def test_rope_team_decode_reads_what_describe_says(options):
    seen = 0
    for seed in range(12):
        for vector, _ in _aec_observations(rope_team_v0.env(**options), seed):
            d, o = rope_observer.describe(vector), rope_observer.decode(to_bits(vector))
            assert _names(o.hand) == d["hand"] and _names(o.played_self) == d["played_self"]
            assert _names(o.played_partner) == d["played_partner"]
            assert (_names(o.partner_hand) if d["open_hands"] else None) == d["partner_hand"]
            assert (None if o.led is None else CARD_NAMES[o.led]) == d["led"]
            assert [CARD_NAMES[o.ridge[p]] if p in o.ridge else "??" for p in range(9)] == d["ridge"]
            assert sorted(_names(o.ridge_cards)) == sorted(c for c in d["ridge"] if c != "??")
            assert o.up == sum(1 << p for p in o.ridge)
            assert (None if o.trumps < 0 else SUIT_NAMES[o.trumps]) == d["trumps"]
            for key in ("led_by_self", "coin", "ropes", "deal", "last_deal", "trick", "self_dealt", "self_leads",
                        "self_to_move", "trumps_rule", "open_hands"):
                assert getattr(o, key) == d[key], key
            seen += 1
    assert seen > 80


def test_rook_decode_reads_what_describe_says():
    seen = 0
    for seed in range(2):
        for vector, _ in _aec_observations(rook_v0.env(rounds=1), seed):
            d, o = rook_observer.describe(vector), rook_observer.decode(to_bits(vector))
            for key in ("hand", "nest", "discards", "opp_known", "self_known", "played_self", "played_opp"):
                assert _names(getattr(o, key), card_name) == d[key], key
            for key in ("face_up", "led"):
                assert (_names(getattr(o, key), card_name) or [None])[0] == d[key], key
            assert PHASE_NAMES[5 if o.phase < 0 else o.phase] == d["phase"]
            assert [BID_AMOUNTS[i] for i in cards_of(o.bids_self)] == d["bids_self"]
            assert [BID_AMOUNTS[i] for i in cards_of(o.bids_opp)] == d["bids_opp"]
            assert (None if o.high_bid < 0 else BID_AMOUNTS[o.high_bid]) == d["high_bid"]
            assert ("self" if o.bidder_self else "opp" if o.bidder_opp else None) == d["bidder"]
            assert (5 * o.points_self, 5 * o.points_opp, 5 * o.total_self, 5 * o.total_opp) == (
                d["points_self"], d["points_opp"], d["total_self"], d["total_opp"])
            for key in ("passed_self", "passed_opp", "led_by_self", "tricks_self", "tricks_opp", "self_dealt",
                        "self_to_move"):
                assert getattr(o, key) == d[key], key
            seen += 1
    assert seen > 50


@pytest.mark.parametrize("options", [{}, {"players": 3, "level": "hard"}, {"silent": True, "time_limit": None}],
                         ids=str)
def test_summit_rush_decode_reads_what_describe_says(options):
    env = summit_rush_v0.parallel_env(**options)
    observer = env.unwrapped.observer
    rng = np.random.default_rng(0)
    observations, _ = env.reset(seed=3)
    seen = 0
    while env.agents:
        for agent in env.agents:
            vector, mask = observations[agent]["observation"], observations[agent]["action_mask"]
            d, o = observer.describe(vector), summit_observer.decode(to_bits(vector), len(vector), len(mask))
            assert (o.seat, o.wrap, o.piles, o.size) == (d["seat"], d["wrap"], len(d["piles"]), len(vector))
            assert [CARD_NAMES[c] for c in o.tops] == d["piles"] and _names(o.on_piles) == d["on_piles"]
            assert list(o.cards) == d["free"] and all(d["peaks"][p] == CARD_NAMES[c] for p, c in o.cards.items())
            assert [p for p in range(28) if o.present >> p & 1] == [p for p, c in enumerate(d["peaks"]) if c]
            assert o.timed == (d["time_left"] is not None)
            heard = [None if h is None else (MESSAGES[h[0]], h[1]) for h in o.heard]
            assert heard == (d["heard"] if o.talk else [])
            seen += 1
        moves = {a: int(rng.choice(np.flatnonzero(observations[a]["action_mask"]))) for a in env.agents}
        observations, *_ = env.step(moves)
    assert seen > 20


@pytest.mark.parametrize("name, env_id", [("simple", "rope_team_v0"), ("heuristic", "rook_v0"),
                                          ("simple", "summit_rush_v0")])
def test_bits_agents_act_is_act_bits_on_the_packed_arrays(name, env_id):
    agent = make_agent(name, env_id)
    assert isinstance(agent, BitsAgent)
    env = {"rope_team_v0": rope_team_v0.env, "rook_v0": rook_v0.env}.get(env_id)
    if env is None:
        observations, _ = summit_rush_v0.parallel_env().reset(seed=2)
        pairs = [(o["observation"], o["action_mask"]) for o in observations.values()]
    else:
        pairs = list(_aec_observations(env(), 2))[:40]
    for vector, mask in pairs:
        agent.reset(0)
        expected = agent.act(vector, mask)
        agent.reset(0)
        assert agent.act_bits(to_bits(vector), to_bits(mask), len(vector), len(mask)) == expected
    if env is None:  # Summit Rush's layout varies with the options: the lengths are required
        with pytest.raises(PolicyError, match="lengths"):
            agent.act_bits(to_bits(pairs[0][0]), to_bits(pairs[0][1]))
