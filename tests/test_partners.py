"""The convention partners of the benchmark's pools (``cardzoo.agents.partners``): each differs from the simple
strategy on a hand-built position in the way its docstring says, plays every level of its game through the env,
and is reproducible from its seed. (That they act on observations only: ``test_no_peeking.py`` runs every registry
agent, these included.)"""

from __future__ import annotations

import pytest

from cardzoo.agents.loops import play_env_game
from cardzoo.agents.partners import rook as tempers
from cardzoo.agents.partners import rope_team as partners
from cardzoo.agents.registry import DESCRIPTIONS, agent_names, make_agent
from cardzoo.agents.rook_heuristic import estimate_points
from cardzoo.envs import rook_v0, rope_team_v0
from cardzoo.envs.common.cards import CARD_NAMES
from cardzoo.envs.rook import rules as rook_rules
from cardzoo.envs.rope_team import rules
from cardzoo.envs.rope_team.observer import observe_bits

from .rope_team_helpers import c, game, play
from .test_rook_agents import STRONG
from .test_rook_rules import build_deck as rook_deck
from .test_rook_rules import mask

ROPE_PARTNERS = {cls.name: cls for cls in partners.PARTNERS}
RIDGE = "4H 5H 6H 7H 8H 9H TH JH QH"  # no card of the hands below; position 4 (8H) is the camp


def table(ridge: str, hand0: str, hand1: str = "") -> rules.State:
    """A deal with the ridge and hands given (player 0 leads the first trick); cards not named fill player 1's hand
    and the aside in deck order."""
    named = ridge.split() + hand0.split() + hand1.split()
    assert len(ridge.split()) == 9 and len(hand0.split()) == 13 and len(set(named)) == len(named)
    rest = [n for n in CARD_NAMES if n not in named]
    fill = 13 - len(hand1.split())
    return game(ridge.split() + hand0.split() + hand1.split() + rest[:fill] + rest[fill:])


def choices(s: rules.State, *names: str) -> dict[str, str]:
    """The card each agent named would play in ``s`` (its mover's observation), fresh agents."""
    bits, legal = observe_bits(s, s.to_move), rules.legal_mask(s)
    return {n: CARD_NAMES[make_agent(n, "rope_team_v0", seed=0).act_bits(bits, legal)] for n in names}


def value(s: rules.State, card: str) -> float:
    values = make_agent("simple", "rope_team_v0").card_values(observe_bits(s, s.to_move), rules.legal_mask(s))
    return dict(values)[c(card)]


def test_every_partner_is_registered_and_described():
    for name, cls in ROPE_PARTNERS.items():
        assert name in agent_names("rope_team_v0") and name in DESCRIPTIONS
        assert type(make_agent(name, "rope_team", seed=1)) is cls


# ---------------------------------------------------------------------------- one convention each
def test_lead_long_leads_from_its_longest_suit_among_the_nearly_best():
    # from the camp, 8D and the 9-J of spades are worth the same: the simple strategy leads the lowest rank (8D),
    # the variant its longest suit (six spades against five diamonds)
    s = table(RIDGE, "2C 3C 9S TS JS QS KS AS 8D 9D QD KD AD")
    got = choices(s, "simple", "simple_lead_long")
    assert got == {"simple": "8D", "simple_lead_long": "9S"}
    assert value(s, "9S") == value(s, "8D")


def test_high_follow_follows_with_the_highest_of_the_equal_cards():
    # after a led 2C, every club from 8C to AC wins for player 1 with the same landing: the lowest or the highest
    s = table(RIDGE, "2C 2D 3D 4D 5D 6D 7D 8D 9D TD JD QD KD", "3C 4C 5C 6C 7C 8C 9C TC JC QC KC AC 2S")
    play(s, "2C")
    assert choices(s, "simple", "simple_high_follow") == {"simple": "8C", "simple_high_follow": "AC"}
    # leading, it is the simple strategy
    assert choices(table(RIDGE, "2C 3C 9S TS JS QS KS AS 8D 9D QD KD AD"), "simple_high_follow") == {
        "simple_high_follow": "8D"}


def _void_in_clubs(hand1: str) -> rules.State:
    """Hearts are trumps (position 3 turned up by hand) and player 0 has led the 9C; player 1 holds no club."""
    s = table("4D 5D 6D 7H 8D 9D TD JD QD", "9C 2C 3C 4C 5C 6C 7C 8C TC JC QC KC AC", hand1)
    s.up[3], s.trumps = True, 2
    play(s, "9C")
    return s


def test_trump_eager_trumps_where_the_simple_strategy_discards():
    s = _void_in_clubs("JH QH 2S 3S 4S 5S 6S 7S 8S 9S TS JS QS")
    assert choices(s, "simple", "simple_trump_eager", "simple_trump_shy") == {
        "simple": "8S", "simple_trump_eager": "JH", "simple_trump_shy": "8S"}
    assert value(s, "JH") == value(s, "8S")  # a tie the simple strategy breaks to the lower rank
    # and a trump worth less than the best discard, within the margin: the trump
    s = _void_in_clubs("QH 2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS")
    assert choices(s, "simple", "simple_trump_eager") == {"simple": "8S", "simple_trump_eager": "QH"}
    assert value(s, "8S") - partners.TRUMP_MARGIN <= value(s, "QH") < value(s, "8S")


def test_trump_shy_discards_where_the_simple_strategy_trumps():
    s = _void_in_clubs("2H KH 2D 3D KD 2S 3S 4S 5S 6S 7S 8S 9S")
    assert choices(s, "simple", "simple_trump_eager", "simple_trump_shy") == {
        "simple": "2H", "simple_trump_eager": "2H", "simple_trump_shy": "8S"}


def test_trusting_and_wary_value_a_lead_by_the_best_and_by_the_mean_reply():
    # from the camp: by the best reply alone a low club comes first, by the blend (and the mean) a low spade
    s = table(RIDGE, "2C 3C 2S 3S 4S 5S 6S 7S 8D 2D QS KH 9S")
    assert choices(s, "simple", "simple_trusting", "simple_wary") == {
        "simple": "2S", "simple_trusting": "2C", "simple_wary": "2S"}
    # two cards from the partner's end, hearts trumps: the blend leads the AS, the mean over the replies a brake (2D),
    # the best reply alone the KC
    s = table(RIDGE, "3C 4C 5C 9C KC 2D 3D 6D JD KD 2H AH AS")
    s.coin, s.up[5], s.up[6], s.trumps = 6, True, True, 2
    assert choices(s, "simple", "simple_trusting", "simple_wary") == {
        "simple": "AS", "simple_trusting": "KC", "simple_wary": "2D"}
    assert partners.Trusting.lead_mean == 0.0 and partners.Wary.lead_mean == 1.0


def test_signal_discards_from_its_longest_suit_and_leads_the_suit_its_partner_discarded():
    # sending: void in clubs, every discard loses with the same landing; the simple strategy throws the lowest
    # card of the first suit (2H), the signaller one of its longest suit (seven spades against six hearts)
    s = table("4C 5C 6C 7C 8C AH TC JC QC", "9C 2D 3D 4D 5D 6D 7D 8D 9D TD JD QD KD",
              "2S 3S 4S 5S 6S 7S 8S 2H 3H 4H 5H 6H 7H")
    play(s, "9C")
    assert choices(s, "simple", "simple_signal") == {"simple": "2H", "simple_signal": "2S"}
    # reading: it leads 2D, its partner (void in diamonds) discards the 2S; its next lead is a spade, where the
    # simple strategy leads the 3D (worth a little more)
    s = table("4C 5C 6C 7C 8C AH TC JC QC", "2D 3D 4D 5D 6D 7D 8D 9D TD 9S TS JS 9C",
              "2S 3S 4S 5S 6S 7S 8S 2H 3H 4H 5H 6H 7H")
    reader = make_agent("simple_signal", "rope_team_v0", seed=0)
    first = reader.act_bits(observe_bits(s, 0), rules.legal_mask(s))
    assert CARD_NAMES[first] == "2D" and reader.asked is None
    play(s, "2D", "2S")
    second = reader.act_bits(observe_bits(s, 0), rules.legal_mask(s))
    assert CARD_NAMES[second] == "9S" and reader.asked == 3
    assert choices(s, "simple") == {"simple": "3D"}
    assert value(s, "3D") - partners.MARGIN <= value(s, "9S") < value(s, "3D")
    # a new game forgets the signal
    reader.reset(0)
    assert reader.asked is None


def test_careless_plays_random_cards_a_third_of_the_time_from_its_seed():
    s = table(RIDGE, "2C 3C 9S TS JS QS KS AS 8D 9D QD KD AD")
    bits, legal = observe_bits(s, 0), rules.legal_mask(s)
    simple = make_agent("simple", "rope_team_v0").act_bits(bits, legal)
    picks = [partners.Careless(seed).act_bits(bits, legal) for seed in range(600)]
    off = sum(p != simple for p in picks) / len(picks)
    # a third random among 13 cards, 9 of them not the simple card's value: about 1/3 * 12/13 = 0.31
    assert 0.24 < off < 0.38
    assert picks == [partners.Careless(seed).act_bits(bits, legal) for seed in range(600)]


# ---------------------------------------------------------------------------- every level, from the seed
@pytest.mark.parametrize("name", sorted(ROPE_PARTNERS))
def test_plays_every_level_with_the_simple_strategy_reproducibly(name):
    for level in rules.LEVELS:
        env = rope_team_v0.env(level=level)
        records = []
        for _ in range(2):
            games = []
            for seed in (3, 4):
                agents = [make_agent(name, "rope_team_v0", seed=seed), make_agent("simple", "rope_team_v0")]
                agents[0].reset(seed)
                games.append(play_env_game(env, agents if seed % 2 else agents[::-1], seed))
            records.append(games)
        assert records[0] == records[1]
        assert all(g["outcome"] in ("win", "fall", "out_of_deals") for g in records[0]), records[0]


# ---------------------------------------------------------------------------- Rook: the bidding temper
def _bids(agent, hand: tuple[str, ...]) -> list[int]:
    """The bids of ``agent`` as player_0 (who opens) with ``hand``, against an opponent who tops every bid by 5."""
    env = rook_v0.raw_env(rounds=1)
    env.reset(seed=0, options={"deck": rook_deck(hand0=hand)})
    bids = []
    while env.game.phase == rook_rules.BID:
        s = env.game
        if s.to_move == 0:
            obs = env.observe("player_0")
            action = agent.act(obs["observation"], obs["action_mask"])
            if action != rook_rules.PASS:
                bids.append(rook_rules.MIN_BID + (action - rook_rules.BID0) * rook_rules.BID_STEP)
        else:
            action = rook_rules.bid_action(s.high_bid + 5) if s.high_bid < 140 else rook_rules.PASS
        env.step(action)
    return bids


def test_rook_tempers_bid_further_and_shorter_than_the_heuristic_and_play_alike():
    estimate = estimate_points(mask(*STRONG))
    top = {name: max(_bids(make_agent(name, "rook_v0", seed=0), STRONG))
           for name in ("heuristic", "heuristic_bold", "heuristic_timid")}
    assert top["heuristic_timid"] < top["heuristic"] < top["heuristic_bold"], top
    for cls in tempers.OPPONENTS:  # each stops at its own limit: within 10 of its margin below the estimate
        assert estimate - cls.bid_margin - 10 < top[cls.name] <= estimate - cls.bid_margin, (cls.name, estimate)
    # out of the bidding they are the heuristic: the same move at every other decision of a round
    env = rook_v0.env(rounds=1)
    env.reset(seed=7)
    agents = [make_agent(n, "rook_v0") for n in ("heuristic", "heuristic_bold", "heuristic_timid")]
    compared = 0
    for _ in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        moves = {a.act(obs["observation"], obs["action_mask"]) for a in agents}
        if env.unwrapped.game.phase != rook_rules.BID:
            assert len(moves) == 1
            compared += 1
        env.step(agents[0].act(obs["observation"], obs["action_mask"]))
    assert compared > 20


@pytest.mark.parametrize("name", ["heuristic_bold", "heuristic_timid"])
def test_rook_tempers_play_whole_games_reproducibly(name):
    for options in ({"rounds": 1}, {"target_score": 250}):
        env = rook_v0.env(**options)
        runs = [[play_env_game(env, [make_agent(name, "rook_v0", seed=s), make_agent("heuristic", "rook_v0")][::-1
                                     if s % 2 else 1], s) for s in (1, 2)] for _ in range(2)]
        assert runs[0] == runs[1] and all(r["winner"] in ("player_0", "player_1") for r in runs[0])
