"""The Rope Team oracle: its winning lines really win, its verdicts match brute force on small end positions."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cardzoo.agents.oracles import RopeTeamOracle, solve
from cardzoo.agents.oracles.rope_team import later_deals
from cardzoo.envs.common.cards import cards_of, mask_of
from cardzoo.envs.rope_team import rules

from .rope_team_helpers import build_deck, c, game

LEVELS = sorted(rules.LEVELS)
FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def seeded_game(seed: int, level: str) -> rules.State:
    rng = np.random.default_rng(seed)  # the env's convention: one generator deals the deck and the later deals
    return rules.new_game(rules.LEVELS[level], rules.shuffled_deck(rng), rng)


def replay_wins(state: rules.State, line: list[int]) -> bool:
    s = state.copy()
    for card in line:
        if s.outcome is not None or not rules.legal_mask(s) >> card & 1:
            return False
        rules.play(s, card)
    return s.outcome == rules.WIN


def brute_force(s: rules.State) -> bool:
    """Obviously correct and exponential: try every legal card, recursively, on copies."""
    if s.outcome is not None:
        return s.outcome == rules.WIN
    for card in cards_of(rules.legal_mask(s)):
        t = s.copy()
        rules.play(t, card)
        if brute_force(t):
            return True
    return False


def memo_brute_force(s: rules.State, seen: dict | None = None) -> bool:
    """The same search with a memo keyed by the whole concrete position: exact, and fast enough for 7 tricks."""
    seen = {} if seen is None else seen
    if s.outcome is not None:
        return s.outcome == rules.WIN
    key = (s.deal, s.trick_no, s.hands[0], s.hands[1], s.to_move, s.led, s.coin, tuple(s.up), s.trumps, s.ropes)
    if key not in seen:
        seen[key] = False
        for card in cards_of(rules.legal_mask(s)):
            t = s.copy()
            rules.play(t, card)
            if memo_brute_force(t, seen):
                seen[key] = True
                break
    return seen[key]


def fingerprint(s: rules.State) -> tuple:
    return tuple(repr(getattr(s, n)) for n in rules.State.__slots__ if n != "rng") + (repr(s.rng.bit_generator.state),)


@st.composite
def end_positions(draw, tricks: tuple[int, int] = (1, 4)) -> rules.State:
    """The last few tricks of the last deal, everything else random: ridge, face-up cards, coin, trumps, ropes."""
    perm = draw(st.permutations(range(52)))
    config = rules.Config(ropes=draw(st.integers(0, 2)), trumps=draw(st.booleans()), max_deals=draw(st.integers(1, 3)))
    s = rules.new_game(config, perm, np.random.default_rng(0), dealer=draw(st.integers(0, 1)))
    n = draw(st.integers(*tricks))
    rest = perm[9:]
    crowd = draw(st.sampled_from(["none", "two suits", "middle ranks"]))
    if crowd == "two suits":  # more following, trumping and equivalent cards
        crowded = [card for card in rest if card // 13 in (perm[0] // 13, perm[1] // 13)]
    else:  # 5 to K of two suits: neighbours across the 0-, 1- and 2-step boundaries
        crowded = [card for card in rest if card // 13 in (perm[0] // 13, perm[1] // 13) and 3 <= card % 13 <= 11]
    rest = crowded if crowd != "none" and len(crowded) >= 2 * n else rest
    s.hands = [mask_of(rest[:n]), mask_of(rest[n : 2 * n])]
    others = [i for i in range(9) if i != rules.CAMP]
    down = draw(st.lists(st.sampled_from(others), min_size=1, max_size=3, unique=True))
    s.up = [i not in down for i in range(9)]
    s.uncovered = 8 - len(down)
    s.coin = draw(st.sampled_from([i for i in range(9) if s.up[i]]))
    if config.trumps:
        suits = sorted({s.ridge[i] // 13 for i in others if s.up[i]})
        s.trumps = draw(st.sampled_from([rules.NO_TRUMPS] + suits))
    s.deal = config.max_deals
    s.trick_no = rules.TRICKS_PER_DEAL - n
    s.leader = s.to_move = draw(st.integers(0, 1))
    if draw(st.booleans()):  # start in the middle of a trick
        lead = draw(st.sampled_from(cards_of(s.hands[s.leader])))
        rules.play(s, lead)
    return s


# (b) small end positions: the oracle agrees with brute force, and its lines win.
@FAST
@given(end_positions())
def test_end_positions_match_brute_force(s):
    before = fingerprint(s)
    sol = solve(s, node_budget=10**6)
    assert fingerprint(s) == before  # the state is not touched
    assert sol.winnable is brute_force(s)
    if sol.winnable:
        assert replay_wins(s, sol.line)
    else:
        assert sol.line is None


# (b') longer end positions, where the transposition table and its shape key come into play.
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(end_positions(tricks=(5, 7)))
def test_longer_end_positions_match_memo_brute_force(s):
    sol = solve(s, node_budget=10**6)
    assert sol.winnable is memo_brute_force(s)
    if sol.winnable:
        assert replay_wins(s, sol.line)


# (a) full games from the env's seeding convention and from random points inside them: every line wins.
@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10**6), st.sampled_from(LEVELS), st.integers(0, 60))
def test_lines_replay_to_a_win(seed, level, random_plies):
    s = seeded_game(seed, level)
    rng = np.random.default_rng(seed)
    for _ in range(random_plies):  # wander off with random legal cards (maybe into the second deal)
        if s.outcome is not None:
            break
        rules.play(s, int(rng.choice(cards_of(rules.legal_mask(s)))))
    before = fingerprint(s)
    sol = solve(s, node_budget=50_000)
    assert fingerprint(s) == before
    if s.outcome is not None:
        assert sol.winnable is (s.outcome == rules.WIN)
    if sol.winnable:
        assert replay_wins(s, sol.line)
    else:
        assert sol.line is None


def test_later_deals_match_the_rules():
    compared = 0
    for seed in range(5):
        s = seeded_game(seed, "easy")
        predicted = later_deals(s)
        assert sorted(predicted) == [2, 3]
        seen = {}
        while s.outcome is None:
            if s.trick_no == 0 and s.led is None and s.deal > 1 and s.deal not in seen:
                seen[s.deal] = (s.hands[0], s.hands[1], s.leader)
            legal = cards_of(rules.legal_mask(s))
            rules.play(s, min(legal, key=lambda card: (rules.STEPS[card], card)))  # brake: live long
        for deal, hands in seen.items():
            assert predicted[deal] == hands
            compared += 1
    assert compared >= 5


# (c) a position nobody can win: last trick of the last deal, two cards still face down.
def test_two_face_down_on_the_last_trick_is_lost():
    s = game(build_deck([], ["AS"], ["KS"]), rules.Config(ropes=2, max_deals=1))
    s.hands = [1 << c("AS"), 1 << c("KS")]
    s.trick_no = 12
    s.up = [True, True, True, True, True, True, True, False, False]
    s.uncovered = 6
    sol = solve(s)
    assert sol.winnable is False and sol.line is None
    assert brute_force(s) is False


def test_last_card_won_exactly():
    # One face-down card two steps from the coin towards player 0's end: player 0 must win a 2-step trick.
    s = game(build_deck([], ["QS", "2S"], ["3S", "4S"]), rules.Config(ropes=0, max_deals=1))
    s.hands = [mask_of([c("QS"), c("2S")]), mask_of([c("3S"), c("4S")])]
    s.trick_no = 11
    s.up = [i != 2 for i in range(9)]
    s.uncovered = 7
    sol = solve(s)
    assert sol.winnable is True and brute_force(s)
    assert replay_wins(s, sol.line) and len(sol.line) in (2, 4)


def test_finished_games():
    s = game(build_deck([], [], []))
    s.outcome = rules.FALL
    assert solve(s).winnable is False
    s.outcome = rules.WIN
    assert solve(s).winnable is True and solve(s).line == []


# (d) an exhausted budget gives None, never a wrong verdict.
@pytest.mark.parametrize("level", ["hard", "expert"])
def test_budget_gives_none_not_a_wrong_answer(level):
    hard_seed = max(range(40), key=lambda i: solve(seeded_game(i, level)).nodes)
    full = solve(seeded_game(hard_seed, level), node_budget=10**6)
    assert full.winnable is not None and full.nodes > 50
    for budget in (0, 1, 5, full.nodes // 2, full.nodes - 1):
        sol = solve(seeded_game(hard_seed, level), node_budget=budget)
        assert sol.winnable is None and sol.line is None and sol.nodes == budget
    assert solve(seeded_game(hard_seed, level), node_budget=full.nodes).winnable is full.winnable


@FAST
@given(end_positions(), st.integers(0, 6))
def test_small_budget_never_contradicts_brute_force(s, budget):
    sol = solve(s, node_budget=budget)
    assert sol.winnable in (None, brute_force(s))


def test_oracle_agent_plays_its_line_to_a_win():
    for seed in range(6):
        s = seeded_game(seed, "hard")
        expected = solve(s).winnable
        oracle = RopeTeamOracle()
        oracle.reset(seed)
        while s.outcome is None:
            card = oracle.act_state(s)  # one oracle for both seats: it follows its own line
            assert rules.legal_mask(s) >> card & 1
            rules.play(s, card)
        if expected:
            assert s.outcome == rules.WIN


def test_oracle_agent_replans_after_a_deviation():
    s = seeded_game(3, "normal")
    oracle = RopeTeamOracle()
    first = oracle.act_state(s)
    other = [card for card in cards_of(rules.legal_mask(s)) if card != first][0]
    rules.play(s, other)  # the partner (or a test) goes its own way
    card = oracle.act_state(s)
    assert rules.legal_mask(s) >> card & 1
    assert oracle.last_solution is not None and oracle.last_solution.nodes > 0


def test_inconsistent_state_is_refused():
    s = seeded_game(0, "hard")
    s.trick_no = 5
    with pytest.raises(ValueError):
        solve(s)


def test_card_led_separates_the_followers_cards():
    # Player 0 has led the 9♠; player 1's 8♠ and 10♠ are neighbours in hand but not equivalent: only the 8♠
    # lets player 0 win and pull the coin 2 steps onto the last face-down card.
    s = game(build_deck([], ["9S", "2H"], ["8S", "TS"]), rules.Config(ropes=0, max_deals=1))
    s.hands = [mask_of([c("9S"), c("2H")]), mask_of([c("8S"), c("TS")])]
    s.trick_no = 11
    s.up = [i != 2 for i in range(9)]
    s.uncovered = 7
    rules.play(s, c("9S"))
    sol = solve(s)
    assert sol.winnable is True and sol.line == [c("8S")] and brute_force(s)
