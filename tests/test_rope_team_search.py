"""The Rope Team search agent and its numpy rollouts: same games as the rules and the simple strategy, legal cards,
a belief that respects what was seen, a read of the partner that changes a decision, determinism. (No peeking, for
every agent: ``test_no_peeking.py``.)"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cardzoo.agents.oracles.rope_team import later_deals
from cardzoo.agents.registry import make_agent
from cardzoo.agents.rope_team_rollouts import Games
from cardzoo.agents.rope_team_search import RopeTeamSearch, _ridge_up
from cardzoo.agents.rope_team_simple import RopeTeamSimple
from cardzoo.envs import rope_team_v0
from cardzoo.envs.common.cards import SUIT_MASKS, mask_to_bits
from cardzoo.envs.common.errors import OptionError
from cardzoo.envs.rope_team import rules
from cardzoo.envs.rope_team.env import make_config
from cardzoo.envs.rope_team.observer import LAYOUT, decode, observe_bits
from cardzoo.evaluation.matches.runner import FAST_LOOPS
from cardzoo.evaluation.studies import search_rope_team as study

from .hidden_worlds import rope_team_hidden_variant

LEVELS = sorted(rules.LEVELS)


def _random_position(level: str, seed: int, plays: int, noise: float = 0.3) -> rules.State:
    """A game after ``plays`` cards, mostly the simple strategy's, some random (positions the strategy avoids)."""
    rng = np.random.default_rng(seed)
    s = rules.new_game(make_config(level), rules.shuffled_deck(rng), rng, dealer=int(rng.integers(2)))
    simple = RopeTeamSimple()
    for _ in range(plays):
        if s.outcome is not None:
            break
        legal = rules.legal_mask(s)
        cards = [c for c in range(52) if legal >> c & 1]
        card = simple.act_bits(observe_bits(s, s.to_move), legal)
        rules.play(s, cards[rng.integers(len(cards))] if rng.random() < noise else card)
    return s


def _batch(states: list[rules.State]) -> Games:
    """Rows of the states (which share their public table), with their own later deals."""
    future = [[list(later_deals(t)[d][:2]) for d in sorted(later_deals(t))] for t in states]
    return Games.start(states[0], np.array([t.hands for t in states], np.uint64), np.array([t.ridge for t in states]),
                       np.array(future, np.uint64).reshape(len(states), -1, 2) if future[0] else None)


@settings(max_examples=40, deadline=None)
@given(level=st.sampled_from(LEVELS), seed=st.integers(0, 2**31), plays=st.integers(0, 60))
def test_rollouts_play_the_simple_strategy_by_the_rules(level, seed, plays):
    """Card by card, one row of the numpy batch plays what the simple strategy plays on the observation, and the
    game ends as the rules end it."""
    s = _random_position(level, seed, plays)
    if s.outcome is not None:
        return
    games = _batch([s])
    simple = RopeTeamSimple()
    while s.outcome is None:
        card = simple.act_bits(observe_bits(s, s.to_move), rules.legal_mask(s))
        assert games.choose().tolist() == [card]
        games.play(np.array([card]))
        rules.play(s, card)
    assert games.results.tolist() == [1 if s.outcome == rules.WIN else -1]
    assert len(games) == 0


@settings(max_examples=25, deadline=None)
@given(level=st.sampled_from(LEVELS), seed=st.integers(0, 2**31), plays=st.integers(0, 50))
def test_rollout_rows_are_independent_games(level, seed, plays):
    """Rows with different hidden cards and later deals, played out together, each end as their own game does."""
    s = _random_position(level, seed, plays)
    if s.outcome is not None:
        return
    rng = np.random.default_rng(seed)
    states = [s] + [rope_team_hidden_variant(s, rng) for _ in range(7)]
    results = _batch(states).play_out()
    simple = RopeTeamSimple()
    for row, t in zip(results.tolist(), states, strict=True):
        t = t.copy()
        while t.outcome is None:
            rules.play(t, simple.act_bits(observe_bits(t, t.to_move), rules.legal_mask(t)))
        assert row == (1 if t.outcome == rules.WIN else -1)


# ---------------------------------------------------------------------------- the agent
SMALL = {"worlds": 128, "rollouts": 96}  # a smaller budget keeps the tests quick; the algorithm is the same


def _act(agent, s: rules.State) -> int:
    """The agent's card through ``act`` and the env's own arrays (observation vector, action mask)."""
    if hasattr(agent, "partner_hand"):  # the peeking agent of the study, told the truth
        agent.partner_hand = s.hands[1 - s.to_move]
    return agent.act(LAYOUT.to_array(observe_bits(s, s.to_move)), mask_to_bits(rules.legal_mask(s)))


def _to_turn(level: str, seed: int, plays: int, agent, seat: int, noise: float = 0.3) -> rules.State | None:
    """A game where ``agent`` plays ``seat`` and the simple strategy (with some random cards) the other seat,
    stopped at ``seat``'s turn after at least ``plays`` cards (None if the game ends first)."""
    rng = np.random.default_rng(seed)
    s = rules.new_game(make_config(level), rules.shuffled_deck(rng), rng, dealer=int(rng.integers(2)))
    agent.reset(seed)
    simple = RopeTeamSimple()
    played = 0
    while s.outcome is None:
        legal = rules.legal_mask(s)
        if s.to_move == seat:
            if played >= plays:
                return s
            card = _act(agent, s)
            assert legal >> card & 1, f"illegal card {card}"
        else:
            cards = [c for c in range(52) if legal >> c & 1]
            card = simple.act_bits(observe_bits(s, s.to_move), legal)
            card = cards[rng.integers(len(cards))] if rng.random() < noise else card
        rules.play(s, card)
        played += 1
    return None


def _game_cards(seed: int, plays: int) -> list[int]:
    """The first ``plays`` cards of a search + search game on a fixed deal, agents seeded from ``seed``."""
    rng = np.random.default_rng(5)
    s = rules.new_game(make_config("hard"), rules.shuffled_deck(rng), rng, dealer=1)
    agents = [RopeTeamSearch(seed, **SMALL), RopeTeamSearch(seed + 1, **SMALL)]
    cards = []
    while s.outcome is None and len(cards) < plays:
        cards.append(_act(agents[s.to_move], s))
        rules.play(s, cards[-1])
    return cards


def test_same_seed_same_game_also_in_another_process():
    here = _game_cards(3, 30)
    assert _game_cards(3, 30) == here
    code = ("from tests.test_rope_team_search import _game_cards; print(_game_cards(3, 30))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == str(here)


def test_the_seed_is_used():
    """The decisions depend on the agent's seed (sampled worlds), so the determinism test above is not vacuous:
    with other seeds, the same deal and the same budget are played differently at some point."""
    here = _game_cards(3, 40)
    assert any(_game_cards(seed, 40) != here for seed in (11, 12, 13))


@pytest.mark.parametrize(("options", "named"), [
    ({"worlds": 0}, "worlds"), ({"rollouts": -5}, "rollouts"), ({"rollouts": 2.5}, "rollouts"),
    ({"min_worlds": 1}, "min_worlds"), ({"epsilon": 0.0}, "epsilon"), ({"epsilon": 1.5}, "epsilon"),
    ({"mixture": -0.1}, "mixture"), ({"threshold": float("nan")}, "threshold"), ({"z": -1}, "z"),
    ({"worlds": True}, "worlds"), ({"budget": 10}, "budget"),
])
def test_bad_options_raise_naming_the_option(options, named):
    with pytest.raises(OptionError, match=named):
        RopeTeamSearch(**options)


@pytest.mark.parametrize("rollouts", [24, 200])
def test_the_budget_sets_the_worlds_played_out(rollouts):
    """``rollouts`` games are shared by the candidate cards (``min_worlds`` each at least)."""
    agent = RopeTeamSearch(rollouts=rollouts, min_worlds=2)
    for seed in range(20):
        s = _to_turn("hard", seed, 4, agent, 0)
        if s is None:
            continue
        _act(agent, s)
        if "worlds" in agent.last:
            assert agent.last["worlds"] == max(rollouts // len(agent.last["candidates"]), 2)
            return
    pytest.fail("no position with a search among the first games")


def _seen_voids(s_plays: list[tuple[int, int, int | None]], seat: int, deal: int) -> int:
    """Suits ``seat``'s partner failed to follow in ``deal``, from the plays (player, card, led card)."""
    void = 0
    for d, who, card, led in s_plays:
        if d == deal and who != seat and led is not None and card // 13 != led // 13:
            void |= SUIT_MASKS[led // 13]
    return void


def _check_worlds(level: str, seed: int, plays: int, noise: float = 0.3) -> int | None:
    """Sample worlds at seat 0's turn after ``plays`` cards and check them against the true game (see the test
    below); the deal checked, or None if the game ended first."""
    agent = RopeTeamSearch(**SMALL)
    rng = np.random.default_rng(seed)
    s = rules.new_game(make_config(level), rules.shuffled_deck(rng), rng, dealer=int(rng.integers(2)))
    agent.reset(seed)
    simple = RopeTeamSimple()
    history, seen_off_ridge = [], 0
    while s.outcome is None:
        seen_off_ridge |= s.hands[0] | s.played[0] | s.played[1]
        legal = rules.legal_mask(s)
        if s.to_move == 0:
            card = _act(agent, s)
        else:
            cards = [c for c in range(52) if legal >> c & 1]
            card = cards[rng.integers(len(cards))] if rng.random() < noise else simple.act_bits(
                observe_bits(s, 1), legal)
        history.append((s.deal, s.to_move, card, s.led))
        rules.play(s, card)
        if len(history) >= plays and s.outcome is None and s.to_move == 0:
            break
    if s.outcome is not None:
        return None
    read = decode(observe_bits(s, 0))
    worlds = agent._belief(read, agent._remember(read), 64)
    if worlds is None:
        return None
    up = _ridge_up(s)
    seen = s.hands[0] | s.played[0] | s.played[1] | up
    void = _seen_voids(history, 0, s.deal)
    down = [i for i in range(rules.RIDGE) if not s.up[i]]
    for partner, ridge in zip(worlds["partner"].tolist(), worlds["ridge"].tolist(), strict=True):
        assert partner.bit_count() == s.hands[1].bit_count()
        assert partner & (seen | void) == 0
        assert [ridge[i] for i in range(rules.RIDGE) if s.up[i]] == [s.ridge[i] for i in range(rules.RIDGE) if s.up[i]]
        face_down = [ridge[i] for i in down]
        assert len(set(face_down)) == len(face_down)
        assert all(not (seen_off_ridge | partner | up) >> c & 1 for c in face_down)
    return s.deal


@settings(max_examples=15, deadline=None)
@given(level=st.sampled_from(LEVELS), seed=st.integers(0, 2**31), plays=st.integers(0, 80))
def test_sampled_worlds_agree_with_what_was_seen(level, seed, plays):
    """Every sampled world deals the partner as many cards as it holds, none the player has seen (its hand, the
    cards played, the face-up ridge), none of a suit the partner failed to follow this deal; and the face-down
    ridge only cards the player never saw off the ridge, in any deal, none twice, none in the partner's hand."""
    _check_worlds(level, seed, plays)


def test_sampled_ridge_avoids_the_cards_of_earlier_deals():
    """The same checks in later deals, where the ridge must also avoid every card seen in the earlier ones."""
    later = [d for seed in range(5) if (d := _check_worlds("easy", seed, 27 + seed % 4, noise=0.0))]
    assert sum(d >= 2 for d in later) >= 3


def test_the_partner_read_narrows_the_belief():
    """After the partner's follows, worlds in which the partner held a card the blueprint would have played
    instead (a higher-valued legal card) are rare -- far rarer than in worlds drawn without the read."""
    shares = {}
    for name, options in {"read": {}, "no read": {"epsilon": 1.0, "mixture": 1.0}}.items():
        against, total = 0, 0
        for seed in range(25):
            agent = RopeTeamSearch(seed, **SMALL, **options)
            s = _to_turn("hard", seed, 9, agent, 0, noise=0.0)
            if s is None:
                continue
            read = decode(observe_bits(s, 0))
            table = agent._remember(read)
            worlds = agent._belief(read, table, 64)
            better = 0
            for p in agent.partner_plays:
                if p.follows:
                    better |= p.better & p.follows
            if worlds is None or not better:
                continue
            against += int(((worlds["partner"] & np.uint64(better)) != 0).sum())
            total += len(worlds["partner"])
        shares[name] = against / total
    assert shares["no read"] > 0.3
    assert shares["read"] < shares["no read"] / 3


def test_registered_and_plays_legal_cards_through_the_env():
    """``search`` is in the registry for Rope Team and plays a whole game through the PettingZoo env."""
    agent = make_agent("search", "rope_team_v0", seed=0)
    assert isinstance(agent, RopeTeamSearch)
    e = rope_team_v0.env(level="normal")
    e.reset(seed=4)
    agents = {a: make_agent("search", "rope_team_v0") for a in e.possible_agents}
    for i, a in enumerate(agents.values()):
        a.reset(seed=i)
    for name in e.agent_iter():
        obs, _, term, trunc, info = e.last()
        e.step(None if term or trunc else agents[name].act(obs["observation"], obs["action_mask"]))
    assert info["outcome"] in ("win", "fall", "out_of_deals")


def test_study_plays_the_reports_deals():
    """The study's games are the runner's games: same deal, same seats, same agent seeds."""
    for seed in range(3):
        agents = study.team(("simple",))
        mine = study.play("normal", seed, agents)
        theirs = FAST_LOOPS["rope_team_v0"]({"level": "normal"}, study.team(("simple",)), seed)
        assert mine == {k: v for k, v in theirs.items() if k != "returns"}


def test_study_writes_rates_times_and_loss_causes(tmp_path):
    out = tmp_path / "search.json"
    study.main(["--games", "2", "--cross", "1", "--levels", "hard", "--cross-levels", "hard", "--out", str(out)])
    hard = json.loads(out.read_text())["levels"]["hard"]
    assert set(hard["teams"]) == {"search+search", "simple+simple", "search+simple", "simple+search"}
    assert len(hard["teams"]["search+search"]["results"]) == 2
    assert hard["time"]["decisions"] > 0 and hard["time"]["mean_ms"] > 0
    lost = hard["teams"]["search+search"]["results"].count("L")
    assert sum(hard["loss_causes"]["counts"].values()) == lost
    assert out.with_suffix(".csv").read_text().count("\n") == 5


def test_study_adds_the_cross_play_with_a_trained_partner_to_the_committed_file(tmp_path):
    """``--add --partner``: the partner's teams join the file, paired with its simple results on the same deals;
    the teams already there and the earlier commands stay; an unknown partner fails before any game."""
    out = tmp_path / "search.json"
    study.main(["--games", "3", "--levels", "hard", "--out", str(out)])
    before = json.loads(out.read_text())["levels"]["hard"]["teams"]
    study.main(["--add", "--partner", "learned", "--partner-games", "2", "--levels", "hard", "--out", str(out)])
    data = json.loads(out.read_text())
    teams = data["levels"]["hard"]["teams"]
    assert set(teams) == set(before) | {"search+learned", "learned+search", "learned+learned"}
    assert all(teams[k] == v for k, v in before.items())
    assert [c.split()[3] for c in data["commands"]] == ["--games", "--add"]
    simple = [c == "W" for c in teams["simple+simple"]["results"][:2]]
    for label in ("search+learned", "learned+search", "learned+learned"):
        cell = teams[label]
        won = [c == "W" for c in cell["results"]]
        assert cell["games"] == len(won) == 2 and cell["partner"] == "learned" and cell["partner_digest"]
        assert cell["vs_simple"]["difference"] == (sum(won) - sum(simple)) / 2
    assert teams["search+learned"]["mean_ms_per_search_decision"] > 0
    assert "mean_ms_per_search_decision" not in teams["learned+learned"]
    with pytest.raises(OptionError, match="no agent 'genius'"):
        study.main(["--add", "--partner", "genius", "--partner-games", "2", "--out", str(out)])



def test_losses_on_unwinnable_deals_are_told_apart():
    """A loss on a deal no line of play wins (the oracle's list) is 'unwinnable'; a loss the same agents win when
    told their partner's hand is 'read of the partner'."""
    unwinnable = 20688  # in rope_team_ceiling_hard.json's lost_seeds
    records = [{"outcome": "win"}] * 3 + [{"outcome": "fall"}]
    records[1] = {"outcome": "fall"}
    records += [{"outcome": "win"}] * (unwinnable - len(records)) + [{"outcome": "fall"}]
    told_wins = study.play("hard", 1, [study._Told(), study._Told()])["outcome"] == "win"
    causes = study.loss_causes("hard", records, progress=False)
    assert causes["seeds"]["unwinnable"] == [unwinnable]
    assert (1 in causes["seeds"]["read of the partner"]) == told_wins
    assert sum(causes["counts"].values()) == 3
