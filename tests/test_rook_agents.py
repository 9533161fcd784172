"""The Rook heuristic player: legal in every phase, blind to hidden cards, far better than random, bids within its
hand-strength limit, and a few hand-built positions of its play and draw choices."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from cardzoo.agents import Agent, RandomAgent
from cardzoo.agents.loops import play_env_game
from cardzoo.agents.registry import agent_names, make_agent
from cardzoo.agents.rook_heuristic import RookHeuristic, best_trumps, bid_limit, estimate_points
from cardzoo.envs import rook_v0
from cardzoo.envs.rook import rules
from cardzoo.envs.rook.observer import describe, observe_bits

from .test_rook_rules import build_deck, c, mask


def _bits(array: np.ndarray) -> int:
    return int.from_bytes(np.packbits(array.astype(np.uint8), bitorder="little").tobytes(), "little")


def test_registry_has_heuristic_and_random_for_rook():
    assert {"heuristic", "random"} <= set(agent_names("rook_v0"))
    assert isinstance(make_agent("heuristic", "rook_v0", seed=3), Agent)
    assert isinstance(make_agent("random", "rook_v0", seed=3), RandomAgent)


class _Recording(RookHeuristic):
    """The heuristic, noting the phase of every decision."""

    def __init__(self):
        super().__init__()
        self.phases: Counter = Counter()

    def act(self, observation, action_mask):
        action = super().act(observation, action_mask)
        assert action_mask[action] == 1
        self.phases[describe(observation)["phase"]] += 1
        return action


def test_heuristic_plays_only_legal_actions_in_every_phase():
    # The env raises IllegalActionError on an illegal action; whole games against random and against itself.
    env = rook_v0.env()
    seen: Counter = Counter()
    outcomes = Counter()
    for seed in range(12):
        for agents in ([_Recording(), RandomAgent(seed)], [RandomAgent(seed), _Recording()],
                       [_Recording(), _Recording()]):
            record = play_env_game(env, agents, seed)
            outcomes[record["outcome"]] += 1
            for agent in agents:
                if isinstance(agent, _Recording):
                    seen.update(agent.phases)
    assert set(seen) == {"bid", "trump", "discard", "play", "draw"}
    assert sum(outcomes.values()) == 36 and set(outcomes) <= {"win", "bidder_fell"}


def test_act_and_act_bits_agree():
    env = rook_v0.raw_env(rounds=1)
    env.reset(seed=5)
    agent = RookHeuristic()
    for _agent_id in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        action = agent.act(obs["observation"], obs["action_mask"])
        assert action == agent.act_bits(_bits(obs["observation"]), _bits(obs["action_mask"]))
        env.step(action)


def _mask_array(legal: int) -> np.ndarray:
    return np.array([legal >> a & 1 for a in range(rules.N_ACTIONS)], dtype=np.int8)


# ---------------------------------------------------------------------------- strength
def test_heuristic_beats_random_by_a_clear_margin():
    env = rook_v0.env(rounds=1)
    won = rounds = 0
    for seed in range(150):
        for seat in (0, 1):
            agents = [RookHeuristic(), RandomAgent(seed)]
            if seat:
                agents.reverse()
            record = play_env_game(env, agents, seed)
            won += record["winner"] == f"player_{seat}"
            rounds += 1
    assert won / rounds > 0.85  # about 98 % in the evaluation report

    games = rook_v0.env()
    wins = sum(play_env_game(games, [RookHeuristic(), RandomAgent(seed)], seed)["winner"] == "player_0"
               for seed in range(10))
    assert wins >= 9


# ---------------------------------------------------------------------------- bidding
STRONG = ("AS", "KS", "QS", "JS", "TS", "9S", "XR", "AH", "AD", "5C", "TC")
WEAK = ("4C", "6C", "7D", "8D", "4H", "6H", "7H", "9S", "8S", "6S", "4D")


def _bidding(hand: tuple[str, ...], raise_to: int = 140) -> tuple[list[int], rules.State]:
    """player_0 (the heuristic, who opens) against an opponent who tops every bid by 5 up to ``raise_to``."""
    env = rook_v0.raw_env(rounds=1)
    env.reset(seed=0, options={"deck": build_deck(hand0=hand)})
    agent, bids = RookHeuristic(), []
    while env.game.phase == rules.BID:
        s = env.game
        if s.to_move == 0:
            obs = env.observe("player_0")
            action = agent.act(obs["observation"], obs["action_mask"])
            if action != rules.PASS:
                bids.append(rules.MIN_BID + (action - rules.BID0) * rules.BID_STEP)
        else:
            action = rules.bid_action(s.high_bid + 5) if s.high_bid + 5 <= raise_to else rules.PASS
        env.step(action)
    return bids, env.game


def test_bidding_stops_at_the_hand_strength_limit():
    strong, weak = mask(*STRONG), mask(*WEAK)
    assert estimate_points(strong) > estimate_points(weak) + 40
    assert bid_limit(strong) >= 100 and bid_limit(weak) <= rules.MIN_BID

    bids, s = _bidding(STRONG)
    assert bids == list(range(50, bid_limit(strong) + 1, 10))  # opens at 50, tops each bid by 5, stops at its limit
    assert max(bids) <= bid_limit(strong) < max(bids) + 10 and s.bidder == 1

    bids, s = _bidding(WEAK)
    assert bids == [50] and s.bidder == 1  # the compulsory opening, then a pass

    bids, s = _bidding(STRONG, raise_to=60)  # the opponent gives up: the heuristic wins the bid within its limit
    assert s.bidder == 0 and s.high_bid == 60 <= bid_limit(strong)


def test_trumps_and_discards():
    assert best_trumps(mask(*STRONG)) == 3  # seven spades with the Rook
    hand = ("AS", "KS", "QS", "9S", "7S", "XR", "AH", "4H", "6D", "8D", "9C")
    env = rook_v0.raw_env(rounds=1)
    env.reset(seed=0, options={"deck": build_deck(nest=("7C", "KD", "JH"), hand0=hand)})
    agent = RookHeuristic()
    while env.game.phase in (rules.BID, rules.TRUMP, rules.DISCARD):
        if env.game.to_move == 0:
            obs = env.observe("player_0")
            env.step(agent.act(obs["observation"], obs["action_mask"]))
        else:
            env.step(rules.PASS)
    s = env.game
    assert s.bidder == 0 and s.trumps == 3 and s.discards.bit_count() == 3
    assert not s.discards & (rules.POINT_MASK | mask(*hand[:6]))  # no points, no trumps
    assert s.discards & mask("7C", "9C") == mask("7C", "9C")  # the short clubs go: a void to trump later

# ---------------------------------------------------------------------------- play and draw
def _position(hand0: tuple[str, ...], hand1: tuple[str, ...], trumps: int, led: str | None = None,
              face_up: str | None = "4C", played: tuple[str, ...] = ()) -> rules.State:
    """Play phase, player_0 to move; player_1 (the bid winner) has led ``led`` if given."""
    rng = np.random.default_rng(0)
    s = rules.new_game(rules.Config(rounds=1), list(rules.DECK), rng)
    s.phase, s.trumps, s.bidder, s.high_bid, s.bids = rules.PLAY, trumps, 1, 50, [(0, 50), (1, None)]
    s.hands = [mask(*hand0), mask(*hand1)]
    s.played = [0, mask(*played)]
    s.face_up = None if face_up is None else c(face_up)
    s.pile_pos = 0
    rest = [card for card in rules.DECK if not (s.hands[0] | s.hands[1] | s.played[1]) >> card & 1
            and card != s.face_up]
    s.pile = ([] if face_up is None else [s.face_up]) + rest[:20 - (face_up is not None)]
    s.to_move = 0
    if led is not None:
        s.led, s.leader = c(led), 1
        s.played[1] |= 1 << c(led)
    else:
        s.leader = 0
    return s


def _act(s: rules.State) -> int:
    return RookHeuristic().act_bits(observe_bits(s, s.to_move), rules.legal_actions(s))


@pytest.mark.parametrize(("hand", "led", "expected"), [
    (("XR", "4S", "6C", "7D"), "AH", "XR"),  # void in hearts: trump the Ace with the Rook, taking 30 points
    (("4H", "TH", "5H", "6C"), "AH", "4H"),  # cannot beat the Ace: follow low, without points
    (("4H", "KH", "TH", "6C"), "9H", "TH"),  # can win: win with the Ten, which takes its own 10 points
    (("4S", "JS", "6C", "7D"), "4H", "4S"),  # void: a cheap trump still wins the trick (the draw, most tricks)
    (("6C", "7D", "KD", "9C"), "4H", "6C"),  # void, no trump: throw the lowest card without points
])
def test_following(hand, led, expected):
    s = _position(hand, ("AC", "KC", "QC", "JC"), trumps=3, led=led)
    assert _act(s) == c(expected)


def test_leading_cashes_a_sure_winner_and_keeps_the_rook():
    # Every spade above the King has been played, so the King of trumps is the master; the Rook must not be led.
    played = ("AS", "QH", "JH", "9H", "8H")
    s = _position(("KS", "XR", "4C", "AD"), ("4H", "5H", "6H", "7H"), trumps=3, played=played, face_up="9C")
    assert _act(s) == c("AD")  # the top diamond, 10 points
    s = _position(("XR", "4C", "6D"), ("4H", "5H", "6H"), trumps=3, face_up="9C")
    assert _act(s) in (c("4C"), c("6D"))  # a low card without points, not the Rook into the opponent's trumps


def test_draw_choice():
    for face_up, expected in (("XR", rules.TAKE_UP), ("AS", rules.TAKE_UP), ("4C", rules.TAKE_HIDDEN)):
        s = _position(("KS", "4D"), ("4H", "5H"), trumps=3, face_up=face_up)
        s.phase, s.to_move = rules.DRAW, 0
        assert _act(s) == expected, face_up


# ---------------------------------------------------------------------------- report section
def test_rook_report_section(tmp_path):
    from cardzoo.evaluation.report import Settings
    from cardzoo.evaluation.report.sections.rook import rook

    result = rook(Settings(games=20, workers=1, out=tmp_path, progress=False))
    rows = {(r.setting, r.source): r for r in result.rows}
    vs_random = rows["single round", "heuristic vs random"]
    assert vs_random.games == 40 and vs_random.rate > 0.8 and vs_random.low <= vs_random.rate <= vs_random.high
    assert rows["whole game", "heuristic vs random"].games == 4  # 20 // 10 deals, each in both seatings
    assert "no figures" in result.markdown and (tmp_path / "rook.png").read_bytes()[:4] == b"\x89PNG"
