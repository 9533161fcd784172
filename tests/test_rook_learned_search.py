"""The Rook search on the learned blueprint: its rollouts are the learned agent's moves, its weights are the
opponent model's probabilities of her moves on her own rebuilt view, it is deterministic per seed, and its options
are checked. (The no-peeking twin test covers it as the registry's ``search_learned``.)"""

from __future__ import annotations

import copy
import random

import numpy as np
import pytest

from cardzoo.agents.learned import LearnedAgent, NumpyPolicy, shipped_policy
from cardzoo.agents.registry import make_agent
from cardzoo.agents.rook_heuristic import RookHeuristic
from cardzoo.agents.rook_learned_search import RookLearnedSearch, load_blueprint
from cardzoo.agents.rook_rollouts import play_out
from cardzoo.agents.rook_search import _Observed
from cardzoo.envs.common.errors import OptionError
from cardzoo.envs.rook import rules
from cardzoo.envs.rook.observer import LAYOUT, observe_bits

from .test_rook_agents import _mask_array

SMALL = {"worlds": 2, "bid_worlds": 2, "tries": 3}
_NEST = set(range(LAYOUT.offsets["nest"], LAYOUT.offsets["nest"] + LAYOUT.sizes["nest"]))


def _new_round(seed: int) -> rules.State:
    rng = np.random.default_rng(seed)
    return rules.new_game(rules.Config(rounds=1), rules.shuffled_deck(rng), rng, dealer=seed % 2)


# ---------------------------------------------------------------------------- rollouts by the blueprint
def test_blueprint_rollouts_make_the_learned_agents_moves_action_for_action():
    """From the first trick of three rounds (the true deal), the rollout engine driven by the batched blueprint for
    both seats shows the movers the observations the rules show them (bids included) and makes, move for move,
    what ``LearnedAgent`` (the registry's ``learned``) plays in the rules, ending with the same score; the batched
    policy also equals the agent on every decision of those rounds."""
    learned = LearnedAgent(shipped_policy("rook_v2"))
    blueprint = load_blueprint("rook_v2")
    compared = 0
    for seed in range(3):
        s = _new_round(seed)
        while s.phase != rules.PLAY:
            rules.apply(s, learned.act(LAYOUT.to_array(observe_bits(s, s.to_move)), _mask_array(
                rules.legal_actions(s))))
        start = copy.deepcopy(s)
        played, seen, delta = [], [], None
        while s.outcome is None and delta is None:
            obs, mask = LAYOUT.to_array(observe_bits(s, s.to_move)), _mask_array(rules.legal_actions(s))
            action = learned.act(obs, mask)
            assert blueprint.actions(obs[None], mask[None])[0] == action
            played.append(action)
            seen.append(np.concatenate([obs, mask]))
            delta = rules.apply(s, action)
            compared += 1
        rolled: list[int] = []
        rows: list[np.ndarray] = []

        def recording(obs, mask, rolled=rolled, rows=rows):
            actions = blueprint.actions(obs, mask)
            rolled.extend(actions.tolist())
            rows.extend(np.concatenate([obs, mask], axis=1))
            return actions

        deltas, _ = play_out([start], None, (recording, recording))
        assert rolled == played
        assert len(rows) == len(seen) and all((a == b).all() for a, b in zip(rows, seen, strict=True))
        assert deltas[0].tolist() == list(delta)
    assert compared > 100


# ---------------------------------------------------------------------------- the belief's weights
def _games_with_her_views(seeds, **options):
    """Rounds of the heuristic against itself, one seat logged by a search agent (``options``): yields (state, agent,
    view, views) at each of that seat's play decisions, ``views[card]`` her observation bits and legal mask when she
    played ``card``."""
    heuristic = RookHeuristic()
    for seed in seeds:
        seat = seed % 2
        agent = RookLearnedSearch(seed=seed, **{**SMALL, **options})
        s = _new_round(seed)
        views: dict[int, tuple[int, int]] = {}
        while s.outcome is None:
            bits, legal = observe_bits(s, s.to_move), rules.legal_actions(s)
            if s.to_move == seat:
                # act_bits' logging, with the heuristic's move for the search's (how the move was chosen does not
                # change what is logged, and the rounds cost no rollouts)
                view = _Observed(bits)
                agent._track(bits, view)
                if s.phase == rules.PLAY:
                    yield s, agent, view, views
                action = heuristic.act_bits(bits, legal)
                agent._prev = (bits, view, action)
            else:
                action = heuristic.act_bits(bits, legal)
                if s.phase == rules.PLAY:
                    views[action] = (bits, legal)
            rules.apply(s, action)


def test_her_rebuilt_views_are_her_observations_in_the_true_world():
    """Her view at each weighed play, rebuilt in the true world, is the observation she had (the Nest piece,
    unknown to the agent, apart) with the same legal cards; plays are weighed in every part of the round. The
    true world's state shows the agent its own observation."""
    checked, tricks = 0, set()
    for s, agent, view, views in _games_with_her_views(range(4)):
        her = 1 - s.to_move
        moves = agent.weighed_moves()
        if not moves:
            continue
        obs, mask, cards = agent.rebuilt_views(view, np.array([s.hands[her]], np.uint64),
                                               np.array([s.discards if s.bidder == her else 0], np.uint64), moves)
        # the world's state (the blueprint's root) shows the agent its own observation, the bidding included
        world = agent._state(view, [view.hand, s.hands[her]], 0, s.discards if s.bidder == her else 0, [],
                             view.pile_pos, view.phase)
        assert observe_bits(world, 0) == observe_bits(s, s.to_move)
        for i, move in enumerate(moves):
            true_bits, true_legal = views[move.card]
            diff = set(np.flatnonzero(LAYOUT.to_array(true_bits) != obs[i]).tolist()) - _NEST
            assert not diff, [name for name in LAYOUT.offsets for d in diff if d in range(
                LAYOUT.offsets[name], LAYOUT.offsets[name] + LAYOUT.sizes[name])]
            assert (mask[i] == _mask_array(true_legal)).all()
            assert cards[i] == move.card
            checked += 1
        tricks.add(view.tricks)
    assert checked > 200 and min(tricks) < 5 and max(tricks) > 18


def test_weights_are_the_models_probabilities_of_her_moves_on_the_true_world():
    """With the learned model, a world's log weight is the sum over her weighed plays of log((1 - e) p + e / n),
    p the shipped policy's probability (``NumpyPolicy``, row by row) of her card on her true observation; with the
    heuristic model against the heuristic the true world keeps every factor at its largest."""
    policy = NumpyPolicy(shipped_policy("rook_v2"))
    eps = 0.05
    checked = 0
    for s, agent, view, views in _games_with_her_views(range(4), opponent_model="learned", epsilon=eps):
        her = 1 - s.to_move
        if s.bidder == her or not agent.weighed_moves():
            continue  # her Nest piece is not rebuilt: compared where she has none
        world = (s.hands[her], 0, [], 0)
        expected = 0.0
        for move in agent.weighed_moves():
            bits, legal = views[move.card]
            p = policy.probabilities(LAYOUT.to_array(bits), _mask_array(legal))[move.card]
            expected += np.log((1 - eps) * p + eps / legal.bit_count())
        assert agent.log_weights(view, [world])[0] == pytest.approx(expected, rel=1e-4, abs=1e-5)
        checked += 1
    assert checked > 20
    heuristic_checked = 0
    for s, agent, view, views in _games_with_her_views([5], opponent_model="heuristic", epsilon=eps):
        her = 1 - s.to_move
        moves = agent.weighed_moves()
        if not moves:
            continue
        true = (s.hands[her], 0, [], s.discards if s.bidder == her else 0)
        expected = sum(np.log((1 - eps) + eps / views[m.card][1].bit_count()) for m in moves)
        others = agent._sample(view, 6, random.Random(0))
        logw = agent.log_weights(view, [true, *others])
        assert logw[0] == pytest.approx(expected, abs=1e-9)
        heuristic_checked += 1
    assert heuristic_checked > 10


def test_resampling_draws_each_world_in_proportion_to_its_weight():
    """Systematic resampling: ``worlds`` draws in all, each sampled world drawn floor or ceil of ``worlds`` x its
    share of the weight."""
    checked = 0
    for _s, agent, view, _views in _games_with_her_views(range(2), oversample=4, worlds=6):
        if not agent.weighed_moves():
            continue
        pool = agent._sample(view, agent.worlds * agent.oversample, random.Random(1))
        share = agent.worlds * agent.world_weights(view, pool)
        share /= share.sum() / agent.worlds
        worlds, counts = agent._weighted_worlds(view, random.Random(1))
        assert sum(counts) == agent.worlds and len(worlds) == len(counts) <= agent.worlds
        def key(world):
            hand, nest, pile, discards = world
            return hand, nest, tuple(pile), discards

        drawn: dict = {}
        for w, c in zip(worlds, counts, strict=True):
            drawn[key(w)] = drawn.get(key(w), 0) + c
        low, high = {}, {}  # a world can be sampled more than once late in a round: bounds summed over its copies
        for world, expected in zip(pool, share.tolist(), strict=True):
            low[key(world)] = low.get(key(world), 0) + np.floor(expected - 1e-9)
            high[key(world)] = high.get(key(world), 0) + np.ceil(expected + 1e-9)
        assert drawn.keys() <= low.keys()
        assert all(low[k] <= drawn.get(k, 0) <= high[k] for k in low)
        checked += 1
    assert checked > 20


# ---------------------------------------------------------------------------- determinism and options
def _actions(seed: int, agent_seed: int, decisions: int = 10) -> list[int]:
    """The agent's first ``decisions`` moves of a round against the heuristic (bids, trumps or not, plays)."""
    heuristic = RookHeuristic()
    agent = RookLearnedSearch(seed=agent_seed, **SMALL)
    s = _new_round(seed)
    out = []
    while s.outcome is None and len(out) < decisions:
        bits, legal = observe_bits(s, s.to_move), rules.legal_actions(s)
        action = (agent if s.to_move == 0 else heuristic).act_bits(bits, legal)
        if s.to_move == 0:
            out.append(action)
        rules.apply(s, action)
    return out


def test_same_seed_same_decisions_in_any_order_of_rounds():
    a = [_actions(seed, 7) for seed in (1, 2)]
    assert a == [_actions(seed, 7) for seed in (2, 1)][::-1]


def test_it_keeps_the_blueprints_move_unless_another_gains_more_than_the_threshold():
    """With an unreachable threshold every decision after the bidding is the blueprint's own; with none, the search
    departs from it somewhere."""
    heuristic, blueprint = RookHeuristic(), load_blueprint("rook_v2")
    departed = 0
    for threshold, z in ((1e9, 0.0), (0.0, 0.0)):
        agent = RookLearnedSearch(seed=3, **SMALL, bids="blueprint", threshold=threshold, z=z)
        s = _new_round(4)
        decisions = 0
        while s.outcome is None and decisions < 12:
            bits, legal = observe_bits(s, s.to_move), rules.legal_actions(s)
            if s.to_move == 0:
                action = agent.act_bits(bits, legal)
                own = blueprint.actions(LAYOUT.to_array(bits)[None], _mask_array(legal)[None])[0]
                if threshold > 1:
                    assert action == own
                else:
                    departed += action != own
                decisions += 1
            else:
                action = heuristic.act_bits(bits, legal)
            rules.apply(s, action)
    assert departed


def test_registered_and_acts_through_the_agent_protocol():
    agent = make_agent("search_learned", "rook_v0", seed=1)
    assert isinstance(agent, RookLearnedSearch)
    s = _new_round(3)
    legal = rules.legal_actions(s)
    action = agent.act(LAYOUT.to_array(observe_bits(s, s.to_move)), _mask_array(legal))
    assert legal >> action & 1


@pytest.mark.parametrize(("option", "value"), [
    ("opponent_model", "simple"), ("rollout_opponent", "heuristic"), ("bids", "learned"), ("oversample", 0),
    ("oversample", 1.5), ("epsilon", 0.0), ("epsilon", 1.5), ("epsilon", "0.1"), ("blueprint", "rope_team_v2"),
    ("blueprint", "no_such_policy"), ("blueprint", 3), ("worlds", 0), ("threshold", -1.0), ("threshold", "5"),
    ("z", float("inf")), ("z", None)])
def test_bad_options_raise_option_error_naming_them(option, value):
    with pytest.raises(OptionError, match=option if option != "blueprint" else "policy|blueprint"):
        RookLearnedSearch(**{option: value})
