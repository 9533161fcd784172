"""The Rook search player: legal in every phase, blind to hidden cards, deterministic per seed, its budget checked
and honoured, and the worlds it samples consistent with what it saw (card counts, voids, the opponent's bids)."""

from __future__ import annotations

import copy
import json
import subprocess
import sys

import numpy as np
import pytest

from cardzoo.agents import Agent
from cardzoo.agents import rook_search as search_module
from cardzoo.agents.registry import agent_names, make_agent
from cardzoo.agents.rook_heuristic import RookHeuristic, bid_limit
from cardzoo.agents.rook_search import RookSearch, _auction, _Observed, _suit_mask
from cardzoo.envs.common.errors import OptionError
from cardzoo.envs.rook import rules
from cardzoo.envs.rook.observer import LAYOUT, observe_bits

from .test_rook_agents import _mask_array

SMALL = {"worlds": 3, "bid_worlds": 4, "tries": 5}  # a small budget keeps the suite quick


def _games(seeds, search_seat_of=lambda seed: seed % 2, **budget):
    """Single rounds of the search player (``budget``) against the heuristic: yields (state before the decision,
    the search agent, its observation bits, legal mask, its action) for every search decision, then applies it."""
    heuristic = RookHeuristic()
    for seed in seeds:
        agent = RookSearch(seed=seed, **budget)
        seat = search_seat_of(seed)
        rng = np.random.default_rng(seed)
        s = rules.new_game(rules.Config(rounds=1), rules.shuffled_deck(rng), rng, dealer=seed % 2)
        while s.outcome is None:
            bits = observe_bits(s, s.to_move)
            legal = rules.legal_actions(s)
            if s.to_move == seat:
                before = copy.deepcopy(agent)
                action = agent.act_bits(bits, legal)
                assert legal >> action & 1
                yield s, before, agent, bits, legal, action
            else:
                action = heuristic.act_bits(bits, legal)
            rules.apply(s, action)


def test_registered_for_rook_and_follows_the_agent_protocol():
    assert "search" in agent_names("rook_v0")
    agent = make_agent("search", "rook_v0", seed=3)
    assert isinstance(agent, RookSearch) and isinstance(agent, Agent)
    assert not hasattr(agent, "env") and not hasattr(agent, "state")


def test_search_wide_is_the_search_with_the_wide_budget():
    """The registry's ``search_wide`` is the study's measured agent: the same search, only more worlds."""
    from cardzoo.agents.rook_search import WIDE_BUDGET

    agent = make_agent("search_wide", "rook_v0", seed=3)
    default = make_agent("search", "rook_v0", seed=3)
    assert type(agent) is RookSearch
    assert (agent.worlds, agent.bid_worlds) == (WIDE_BUDGET["worlds"], WIDE_BUDGET["bid_worlds"])
    assert (agent.worlds, agent.bid_worlds) == (200, 400)  # the budget the committed study measured
    assert (agent.tries, agent.discard_candidates, agent.objective) == (default.tries, default.discard_candidates,
                                                                        default.objective)


def test_act_and_act_bits_agree_and_every_phase_is_played():
    phases = set()
    for s, before, _agent, bits, legal, action in _games(range(4), **SMALL):
        phases.add(s.phase)
        assert before.act(LAYOUT.to_array(bits), _mask_array(legal)) == action
    assert phases == {rules.BID, rules.TRUMP, rules.DISCARD, rules.PLAY, rules.DRAW}


# ---------------------------------------------------------------------------- determinism
def _actions(seed: int, agent_seed: int) -> list[int]:
    heuristic = RookHeuristic()
    agent = RookSearch(seed=agent_seed, **SMALL)
    rng = np.random.default_rng(seed)
    s = rules.new_game(rules.Config(rounds=1), rules.shuffled_deck(rng), rng, dealer=seed % 2)
    out = []
    while s.outcome is None:
        bits, legal = observe_bits(s, s.to_move), rules.legal_actions(s)
        action = (agent if s.to_move == 0 else heuristic).act_bits(bits, legal)
        if s.to_move == 0:
            out.append(action)
        rules.apply(s, action)
    return out


def test_same_seed_same_decisions_also_in_another_process():
    first = [_actions(seed, seed) for seed in range(3)]
    assert first == [_actions(seed, seed) for seed in range(3)]
    code = ("from tests.test_rook_search import _actions; "
            "print([_actions(seed, seed) for seed in range(3)])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == str(first)


def test_agent_seed_changes_the_sampled_worlds():
    view = _Observed(observe_bits(rules.new_game(rules.Config(rounds=1), list(rules.DECK), None), 0))
    import random

    a = RookSearch(seed=1, **SMALL)._sample(view, 3, random.Random("1"))
    b = RookSearch(seed=1, **SMALL)._sample(view, 3, random.Random("2"))
    assert a != b
    played = [_actions(seed, agent_seed) for seed in range(4) for agent_seed in (100, 200)]
    assert any(played[i] != played[i + 1] for i in range(0, len(played), 2))


# ---------------------------------------------------------------------------- budget
@pytest.mark.parametrize("option", ["worlds", "bid_worlds", "tries", "discard_candidates"])
@pytest.mark.parametrize("value", [0, -2, 1.5, True, "4", None])
def test_budget_options_are_checked(option, value):
    with pytest.raises(OptionError, match=option):
        RookSearch(**{option: value})


def test_objective_is_checked():
    with pytest.raises(OptionError, match="objective"):
        RookSearch(objective="points")
    assert RookSearch(objective="win").objective == "win"


@pytest.mark.parametrize("worlds", [1, 5])
def test_play_decisions_roll_out_each_action_in_worlds_worlds(worlds, monkeypatch):
    """A lead rolls out every legal card in each of ``worlds`` worlds: one batch of worlds x cards rows."""
    calls = []
    real = search_module.play_out

    def counting(states, first, policy):
        calls.append(len(states))
        return real(states, first, policy)

    monkeypatch.setattr(search_module, "play_out", counting)
    checked = 0
    for s, _before, _agent, _bits, legal, _action in _games(range(2), worlds=worlds, bid_worlds=2, tries=3):
        if s.phase == rules.PLAY and s.led is None and s.tricks[0] + s.tricks[1] < 15:
            n_legal = legal.bit_count()
            if n_legal > 1:
                assert calls == [worlds * n_legal]
                checked += 1
        calls.clear()
    assert checked >= 3


# ---------------------------------------------------------------------------- sampled worlds
def test_sampled_worlds_hold_every_card_once_and_the_right_counts():
    import random

    checked = 0
    for s, _before, agent, bits, _legal, _action in _games(range(4), **SMALL):
        view = _Observed(bits)
        if view.phase == rules.BID:
            continue
        seat = s.to_move
        for opp_hand, nest, pile, discards in agent._sample(view, 4, random.Random(checked)):
            hands = [view.hand, opp_hand]
            w = agent._state(view, hands, nest, discards, pile, view.pile_pos, view.phase)
            assert w.in_play() == rules.DECK_MASK
            assert w.hands[1].bit_count() == s.hands[1 - seat].bit_count()
            assert w.pile_mask().bit_count() == s.pile_mask().bit_count()
            assert w.hands[1] & s.known[1 - seat] == s.known[1 - seat]
            if s.bidder != seat and view.phase in (rules.PLAY, rules.DRAW):
                assert not w.discards & rules.POINT_MASK
            checked += 1
    assert checked > 200


def test_voids_read_from_the_opponent_are_true_and_respected():
    """Every void the agent notes holds in the real game (the opponent has no more cards of the suit than she
    drew since), and every sampled world respects the notes."""
    import random

    noted = 0
    for s, _before, agent, bits, _legal, _action in _games(range(12), **SMALL):
        view = _Observed(bits)
        opp = 1 - s.to_move
        hidden = s.hands[opp] & ~s.known[opp]
        for suit, at in agent._voids.items():
            assert (hidden & _suit_mask(suit, s.trumps)).bit_count() <= view.draws - at
            noted += 1
            for opp_hand, *_ in agent._sample(view, 3, random.Random(0)):
                cards = opp_hand & ~view.opp_known & _suit_mask(suit, s.trumps)
                assert cards.bit_count() <= view.draws - at
    assert noted > 20


def test_bidding_worlds_agree_with_the_opponents_bids():
    """After the opponent bid 70 the heuristic's limit for her sampled hands is at least 70."""
    import random

    rng = np.random.default_rng(0)
    deck = rules.shuffled_deck(rng)
    s = rules.new_game(rules.Config(rounds=1), deck, rng, dealer=0)  # player_1 opens
    for amount in (50, 55, 60, 65, 70):
        rules.apply(s, rules.bid_action(amount))
    assert s.to_move == 0 and s.bids[-1] == (1, 70)
    view = _Observed(observe_bits(s, 0))
    agent = RookSearch(seed=0, tries=60)
    worlds = agent._sample(view, 8, random.Random(0))
    assert len(worlds) == 8 and all(bid_limit(hand) >= 70 for hand, *_ in worlds)
    # Her bids to 65 then a pass at 75 say her limit was 65 or 70, also while the agent discards (her hand is
    # still the one dealt).
    t = rules.new_game(rules.Config(rounds=1), deck, rng, dealer=1)  # player_0 opens
    for amount in (50, 55, 60, 65, 70):
        rules.apply(t, rules.bid_action(amount))
    rules.apply(t, rules.PASS)
    for _ in range(2):
        view = _Observed(observe_bits(t, 0))
        assert all(65 <= bid_limit(hand) <= 70 for hand, *_ in agent._sample(view, 8, random.Random(0)))
        rules.apply(t, rules.TRUMP0)


@pytest.mark.parametrize(("low", "mine", "hers", "expected"), [
    (50, 45, 80, (1, 55)),  # the opening bid is compulsory even above the agent's limit; she tops it
    (55, 50, 80, (1, 50)),  # a limit below the lowest legal amount passes at once: she keeps her 50
    (55, 90, 70, (0, 75)),  # each bids the lowest amount up to its limit: she stops at 70, the agent wins at 75
    (55, 70, 90, (1, 70)),  # the agent stops at 70, she wins at her 70
    (135, 140, 140, (1, 140)),  # 140 ends the bidding at once
])
def test_auction(low, mine, hers, expected):
    assert _auction(low, mine, hers) == expected


def test_study_plays_both_seats_and_classifies_every_loss(tmp_path):
    from cardzoo.evaluation.studies.search_rook import Options, main

    summary = main(Options(deals=3, save_every=2, out=tmp_path), "test")
    assert summary["rounds"] == 6 and summary["won"] + summary["ties"] + summary["lost"] == 6
    assert [summary["by_seat"][seat]["rounds"] for seat in ("player_0", "player_1")] == [3, 3]
    assert sum(summary["losses"].values()) == summary["lost"]
    assert summary["decisions"] > 6 * 20 and summary["mean_ms_per_decision"] > 0
    rows = (tmp_path / "rook_search.csv").read_text().splitlines()
    assert len(rows) == 7 and json.loads((tmp_path / "rook_search.json").read_text()) == summary
