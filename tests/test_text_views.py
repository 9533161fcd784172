"""The text views of ``cardzoo.envs.text``: they hold everything a player needs (the baselines play from the text
alone), nothing a player may not see (leak tests), and replies are read forgivingly in form, strictly in content.

Sufficiency: agents that read only the text (``tests/text_agents.py``: regular expressions over the view, never the
observation) rebuild the pieces of ``simple`` (Rope Team, Summit Rush) or ``heuristic`` (Rook) and must choose what
the baseline chooses from the observation, at every decision of whole games of every level, with and without the
numbered legal moves. A view that drops what the baseline needs fails (the planted views below).

Leaks: two games a seat cannot tell apart (``tests/hidden_worlds.py``'s twins: every card it has not seen
relabelled) give that seat the same text at every decision; over random games, no card a seat has not seen is ever
named in its text. A view that reads the live game is caught.
"""

from __future__ import annotations

import random
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cardzoo.agents.registry import make_agent
from cardzoo.envs import rook_v0, rope_team_v0, summit_rush_v0
from cardzoo.envs.common.cards import CARD_NAMES, mask_of
from cardzoo.envs.common.errors import MoveError, NotResetError, OptionError
from cardzoo.envs.rook import rules as rook
from cardzoo.envs.rope_team.text import RopeTeamText as RopeTeamView
from cardzoo.envs.text import MAX_REPLY, TextView, text_view

from . import text_agents
from .hidden_worlds import GAMES, only_new_objects, play, rook_seen, rope_team_seen, summit_rush_seen, twin

BASELINE = {"rope_team_v0": "simple", "rook_v0": "heuristic", "summit_rush_v0": "simple"}
TEXT_AGENT = {"rope_team_v0": lambda: text_agents.RopeTeamText().act, "rook_v0": lambda: text_agents.RookText().act,
              "summit_rush_v0": lambda: text_agents.SummitRushText().act_text}
# Every level and variant, with the seeds each plays.
SETTINGS = {
    "rope_team_v0": [({"level": level}, range(10)) for level in ("easy", "normal", "hard", "expert")]
    + [({"level": "normal", "open_hands": True}, range(3)), ({"level": "hard", "max_deals": 2}, range(3))],
    "rook_v0": [({"rounds": 1}, range(8)), ({}, range(2))],
    "summit_rush_v0": [({"level": level, "talk": talk}, range(3)) for level in ("normal", "hard", "expert")
                       for talk in (True, False)]
    + [({"players": 3}, range(3)), ({"solo": True}, range(2)), ({"time_limit": None, "talk": False}, range(2))],
}


def play_from_text(env_id: str, options: dict, seeds, legal_moves: bool, view=None):
    """Whole games of the baseline in every seat; at each decision the text agent of that seat reads its view's text
    and chooses too. Returns (decisions, mismatches) where each mismatch is (seed, text, text's action, baseline's)."""
    game = GAMES[env_id]
    decisions, mismatches = 0, []
    for seed in seeds:
        env = game.make_env(**options)
        agents = {a: make_agent(BASELINE[env_id], env_id, seed=seed) for a in env.possible_agents}
        views = {a: (view or text_view)(env_id, options, legal_moves) for a in env.possible_agents}
        readers = {a: TEXT_AGENT[env_id]() for a in env.possible_agents}
        for a in env.possible_agents:
            agents[a].reset(seed)
            views[a].reset()

        def decide(a, obs, agents=agents, views=views, readers=readers, seed=seed):
            nonlocal decisions
            action = int(agents[a].act(obs["observation"], obs["action_mask"]))
            text = views[a].observe(obs["observation"], obs["action_mask"])
            chosen = readers[a](text)
            decisions += 1
            if chosen != action:
                mismatches.append((seed, text, chosen, action))
            return action

        if game.parallel:
            obs, _ = env.reset(seed=seed)
            while env.agents:
                obs, *_ = env.step({a: decide(a, obs[a]) for a in env.agents})
        else:
            env.reset(seed=seed)
            for current in env.agent_iter():
                obs, _, term, trunc, _ = env.last()
                env.step(None if term or trunc else decide(current, obs))
        env.close()
    return decisions, mismatches


@pytest.mark.parametrize("legal_moves", [True, False])
@pytest.mark.parametrize("env_id", list(SETTINGS))
def test_the_baseline_plays_the_same_from_the_text_alone(env_id, legal_moves):
    total = 0
    for options, seeds in SETTINGS[env_id]:
        decisions, mismatches = play_from_text(env_id, options, seeds, legal_moves)
        assert not mismatches, (f"{options}: {len(mismatches)} of {decisions} decisions differ; the first, seed "
                                f"{mismatches[0][0]}, text chose {mismatches[0][2]}, the baseline "
                                f"{mismatches[0][3]}:\n{mismatches[0][1]}")
        total += decisions
    assert total >= 300


class Planted:
    """A view with a planted bug: ``edit`` rewrites each text it gives (dropping what a player needs)."""

    def __init__(self, view: TextView, edit):
        self.view, self.edit = view, edit

    def reset(self):
        self.view.reset()

    def observe(self, observation, action_mask):
        return self.edit(self.view.observe(observation, action_mask))


PLANTS = {
    # the partner's cards played this deal left out: the simple strategy counts the unseen cards wrongly
    "rope_team_v0": lambda text: re.sub(r"; partner [^.]*\.$", "; partner none.", text, flags=re.MULTILINE),
    # the cards the opponent is known to hold left out
    "rook_v0": lambda text: re.sub(r"^Opponent holds .*\n", "", text, flags=re.MULTILINE),
    # the cards in the piles left out: the plan's count of unseen ranks and the stock-turn memory go wrong
    "summit_rush_v0": lambda text: re.sub(r"^Cards in the piles: (\w\w)? ?.*$", r"Cards in the piles: \1.", text,
                                          flags=re.MULTILINE),
}


@pytest.mark.parametrize("env_id", list(PLANTS))
def test_a_view_that_drops_what_the_baseline_needs_fails_the_check(env_id):
    options, seeds = SETTINGS[env_id][2 if env_id == "rope_team_v0" else 0]
    decisions, mismatches = play_from_text(
        env_id, options, seeds, True, view=lambda *args: Planted(text_view(*args), PLANTS[env_id]))
    assert mismatches, f"{decisions} decisions and none differs: the check would miss this bug"


# ---------------------------------------------------------------------------- leaks
class Noisy:
    """Another seat: the baseline with a share of random legal moves (positions the baseline alone would not
    reach)."""

    def __init__(self, env_id: str, seed: int, noise: float = 0.3):
        self.agent = make_agent(BASELINE[env_id], env_id, seed=seed)
        self.agent.reset(seed)
        self.rng = np.random.default_rng(seed)
        self.noise = noise

    def act(self, observation, action_mask):
        action = self.agent.act(observation, action_mask)
        if self.rng.random() < self.noise:
            legal = np.flatnonzero(action_mask[: len(action_mask)])
            action = int(self.rng.choice(legal))
        return action


class Recorder:
    """The seat under test: the baseline, with the seat's text view fed every observation it decides on."""

    def __init__(self, env_id: str, options: dict, seed: int, view=None):
        self.view = view or text_view(env_id, options, legal_moves=True)
        self.agent = make_agent(BASELINE[env_id], env_id, seed=seed)
        self.agent.reset(seed)
        self.texts: list[str] = []

    def act(self, observation, action_mask):
        self.texts.append(self.view.observe(observation, action_mask))
        return self.agent.act(observation, action_mask)


TWIN_SETTINGS = {
    "rope_team_v0": [{"level": "normal"}, {"level": "expert"}, {"level": "easy"}],  # open hands: nothing hidden
    "rook_v0": [{"rounds": 1}, {"target_score": 200}],
    "summit_rush_v0": [{"level": "normal"}, {"players": 3, "talk": False}, {"solo": True}],
}


def twin_texts(env_id: str, options: dict, seed: int, seat: int, make_view=None) -> tuple[int, int]:
    """At the first, a middle and the last decision of ``seat`` in a game, build the twin game (every card the seat
    has not seen relabelled) and check the seat's texts are the same decision by decision. Returns (decisions
    compared, twins that moved a hidden card)."""
    game = GAMES[env_id]
    rng = random.Random(seed)
    deck = game.deck(np.random.default_rng(seed))
    players = len(game.make_env(**options).possible_agents)
    others = {s: Noisy(env_id, seed * 10 + s) for s in range(players) if s != seat}
    view = (lambda: make_view(env_id, options)) if make_view else (lambda: None)
    first_seat = Recorder(env_id, options, seed, view())
    first = play(game, options, seed, deck, seat, first_seat, others)
    n = len(first.decisions)
    compared = changed = 0
    for k in sorted({0, n // 2, n - 1}):
        sigma, other = twin(game, options, seed, deck, seat, first, k, rng)
        changed += any(sigma[c] != c for c in sigma)
        second_seat = Recorder(env_id, options, seed, view())
        with only_new_objects():  # the earlier games are out of sight of a view that would look for them
            play(game, options, seed, other, seat, second_seat, script=first, until=k, sigma=sigma)
        assert len(second_seat.texts) == k + 1
        for i, (a, b) in enumerate(zip(first_seat.texts, second_seat.texts, strict=False)):
            assert a == b, f"decision {i} of seat {seat}: the texts differ in a twin game\\n{a}\\n---\\n{b}"
        compared += k + 1
    return compared, changed


@pytest.mark.parametrize("env_id", list(TWIN_SETTINGS))
def test_games_a_seat_cannot_tell_apart_give_it_the_same_text(env_id):
    compared = changed = checked = 0
    for i, options in enumerate(TWIN_SETTINGS[env_id]):
        players = 1 if options.get("solo") else options.get("players", 2)
        for seed in (11 + i, 12 + i):
            c, moved = twin_texts(env_id, options, seed, seed % players)
            compared, changed, checked = compared + c, changed + moved, checked + 1
    assert compared >= 20
    assert changed >= checked - 1  # the twins really moved hidden cards


_RESET: list = []  # the Rope Team game last reset, where the planted leak reads the hidden cards


def _live_rope_team_game():
    return _RESET[-1].game


class _LeakyView(RopeTeamView):
    """A planted leak: Rope Team's view, plus the partner's longest suit read from the live game."""

    def table(self, t):
        s = _live_rope_team_game()
        partner = s.hands[1 - s.to_move]
        longest = max(range(4), key=lambda suit: ((partner >> (13 * suit)) & 0x1FFF).bit_count())
        return [*super().table(t), f"Partner is long in {'CDHS'[longest]}."]


def test_a_view_that_reads_the_game_is_caught_by_the_twins(monkeypatch):
    # The leak reads the env the harness is playing (the one reset last), not whichever live env gc lists last:
    # other tests' envs may still be alive, and a stale one would make the plant leak nothing.
    reset = rope_team_v0.raw_env.reset

    def remember(self, *args, **kwargs):
        _RESET[:] = [self]
        return reset(self, *args, **kwargs)

    monkeypatch.setattr(rope_team_v0.raw_env, "reset", remember)
    caught = 0
    for seed in range(4):
        try:
            twin_texts("rope_team_v0", {"level": "hard"}, seed, seed % 2,
                       make_view=lambda env_id, options: _LeakyView(rope_team_v0.raw_env().config))
        except AssertionError as err:
            assert "the texts differ" in str(err)
            caught += 1
    assert caught >= 2


# Cards named in a text: two characters, rank then suit, or the Rook.
NAMED = re.compile(r"(?<![\\w@])([2-9TJQKA][CDHS]|Rook)(?![\\w])")


def rope_team_seen_open(s, seat: int) -> int:
    """What a Rope Team seat sees, with the partner's hand in the open-hands variant."""
    return rope_team_seen(s, seat) | (s.hands[1 - seat] if s.config.open_hands else 0)


SEEN = {"rope_team_v0": rope_team_seen_open, "rook_v0": rook_seen, "summit_rush_v0": summit_rush_seen}
RANDOM_SETTINGS = {env_id: [o for o, _ in rows] for env_id, rows in SETTINGS.items()}


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(env_id=st.sampled_from(list(SETTINGS)), pick=st.integers(0, 100), seed=st.integers(0, 2**31 - 1),
       noise=st.floats(0.0, 1.0))
def test_no_seat_text_names_a_card_the_seat_has_not_seen(env_id, pick, seed, noise):
    """Over random games (baselines with random moves mixed in), every card a seat's text names is one the seat
    has seen: its hand, the cards played, face-up cards, the cards it knows its opponent holds; never its partner's
    hand, the face-down ridge or peaks, the stocks, the Nest, the draw pile or the cards set aside."""
    options = RANDOM_SETTINGS[env_id][pick % len(RANDOM_SETTINGS[env_id])]
    game = GAMES[env_id]
    env = game.make_env(**options)
    players = len(env.possible_agents)
    agents = [Noisy(env_id, seed + p, noise) for p in range(players)]
    views = [text_view(env_id, options) for _ in range(players)]
    seen = [0] * players
    names = {**{name: c for c, name in enumerate(CARD_NAMES)}, "Rook": rook.ROOK}

    def look():
        for p in range(players):
            seen[p] |= SEEN[env_id](env.unwrapped.game, p)

    def check(p, obs):
        text = views[p].observe(obs["observation"], obs["action_mask"])
        named = mask_of(names[n] for n in NAMED.findall(text))
        assert not named & ~seen[p], (f"seat {p}'s text names unseen cards "
                                      f"{[n for n in NAMED.findall(text) if (named & ~seen[p]) >> names[n] & 1]}"
                                      f":\\n{text}")
        return agents[p].act(obs["observation"], obs["action_mask"])

    if game.parallel:
        obs, _ = env.reset(seed=seed)
        for _ in range(40):
            if not env.agents:
                break
            look()
            obs, *_ = env.step({a: check(p, obs[a]) for p, a in enumerate(env.possible_agents)})
    else:
        env.reset(seed=seed)
        for steps, current in enumerate(env.agent_iter()):
            obs, _, term, trunc, _ = env.last()
            if term or trunc or steps > 300:
                break
            look()
            action = check(env.possible_agents.index(current), obs)
            if env_id == "rope_team_v0":  # a card played is seen by both players
                seen = [s | 1 << action for s in seen]
            env.step(action)
    env.close()


# ---------------------------------------------------------------------------- reading replies
def decisions(env_id: str, options: dict, seed: int, legal_moves: bool = True, noise: float = 0.3):
    """Every decision of a game (baselines with random moves mixed in): (view of the seat, observation, mask),
    each seat's view fed all of its observations."""
    game = GAMES[env_id]
    env = game.make_env(**options)
    players = len(env.possible_agents)
    agents = [Noisy(env_id, seed + p, noise) for p in range(players)]
    views = [text_view(env_id, options, legal_moves) for _ in range(players)]
    try:
        if game.parallel:
            obs, _ = env.reset(seed=seed)
            while env.agents:
                moves = {}
                for p, a in enumerate(env.possible_agents):
                    views[p].observe(obs[a]["observation"], obs[a]["action_mask"])
                    yield views[p], obs[a]["observation"], obs[a]["action_mask"]
                    moves[a] = agents[p].act(obs[a]["observation"], obs[a]["action_mask"])
                obs, *_ = env.step(moves)
        else:
            env.reset(seed=seed)
            for current in env.agent_iter():
                obs, _, term, trunc, _ = env.last()
                if term or trunc:
                    env.step(None)
                    continue
                p = env.possible_agents.index(current)
                views[p].observe(obs["observation"], obs["action_mask"])
                yield views[p], obs["observation"], obs["action_mask"]
                env.step(agents[p].act(obs["observation"], obs["action_mask"]))
    finally:
        env.close()


def first(env_id: str, options: dict, where, seeds=range(40)):
    """The first decision (view, mask) over games ``seeds`` where ``where(view, mask)`` holds."""
    for seed in seeds:
        for view, _, mask in decisions(env_id, options, seed):
            if where(view, mask):
                return view, mask
    raise AssertionError("no such decision")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(env_id=st.sampled_from(list(SETTINGS)), pick=st.integers(0, 100), seed=st.integers(0, 2**31 - 1),
       legal_moves=st.booleans(), stop=st.integers(0, 200))
def test_every_legal_move_is_read_back_from_its_name_its_aliases_and_its_number(env_id, pick, seed, legal_moves, stop):
    options = RANDOM_SETTINGS[env_id][pick % len(RANDOM_SETTINGS[env_id])]
    checked = 0
    for i, (view, _, mask) in enumerate(decisions(env_id, options, seed, legal_moves)):
        for a in np.flatnonzero(mask):
            assert view.parse(view.move_name(int(a)), mask) == a, view.move_name(int(a))
        for number, move in enumerate(view.legal, 1):
            for alias in move.aliases:
                assert view.parse(alias, mask) == move.action, alias
            if legal_moves:
                assert view.parse(str(number), mask) == move.action
        checked += 1
        if i >= stop:
            break
    assert checked


def rope_follow(view, mask):
    """A Rope Team decision following a lead, with cards of the led suit and others in hand."""
    t = view.current
    return t["led"] is not None and not t["led_by_self"] and 1 < mask.sum() < len(t["hand"])


def test_rope_team_reads_every_form_of_a_card():
    view, mask = first("rope_team_v0", {"level": "normal"}, rope_follow)
    card = view.legal[0].code
    ten = {"T": "10"}.get(card[0], card[0])
    forms = [card, card.lower(), ten + card[1].lower(), ten + " " + card[1], ten + "♣♦♥♠"["CDHS".index(card[1])],
             f"[play] {card}", f"[{card}]", f"[move]: {card}", f'{{"move": "{card}"}}',
             f'Thinking... ```json\n{{"move": "{card}", "why": "low"}}\n```', f"I'll play the {card}.",
             f"I play {card} as it is low", f"**{card}**", f"<b>{card}</b>", f"{card}\x00\x1b[31m", f"`{card}`",
             f"  {card}\n", "1", f"KD or 2C? Not AS.\nMove: {card}", f"Not KD.\nFinal answer: **{card}**",
             f"<think>KD? 2C? AS?</think>\n{card}", f"<think>{card}</think>[play] {card}"]
    for form in forms:
        assert view.parse(form, mask) == view.legal[0].action, form
    assert view.move_name(view.legal[0].action) == card


def refused(view, reply, mask) -> str:
    with pytest.raises(MoveError) as err:
        view.parse(reply, mask)
    return str(err.value)


def test_rope_team_says_why_a_card_is_refused():
    view, mask = first("rope_team_v0", {"level": "normal"},
                       lambda v, m: rope_follow(v, m) and v.current["played_partner"] and v.current["played_self"])
    t = view.current
    off_suit = next(c for c in t["hand"] if c[1] != t["led"][1])
    absent = next(c for c in CARD_NAMES if c not in t["hand"] + t["played_self"] + t["played_partner"] + t["ridge"])
    assert "must follow suit" in refused(view, off_suit, mask)
    assert "not in your hand" in refused(view, absent, mask)
    assert "you played it" in refused(view, t["played_self"][0], mask)
    assert "your partner played it" in refused(view, t["played_partner"][-1], mask)
    assert "on the ridge" in refused(view, next(c for c in t["ridge"] if c != "??"), mask)
    two = [m.code for m in view.legal[:2]]
    assert "several moves" in refused(view, f"{two[0]} or {two[1]}", mask)
    assert "names no move" in refused(view, "I am not sure", mask)
    assert "names no move" in refused(view, "", mask)
    assert "there is no move 99" in refused(view, "99", mask)
    # the view is still usable after its refusals
    assert view.parse(view.legal[0].code, mask) == view.legal[0].action


def test_without_the_list_numbers_are_not_moves():
    for view, _, mask in decisions("rope_team_v0", {"level": "hard"}, 3, legal_moves=False):
        assert not view.legal_moves
        assert "not numbered" in refused(view, "1", mask)
        break


def test_hostile_replies_are_refused_or_read_as_plain_text():
    view, mask = first("rope_team_v0", {"level": "normal"}, rope_follow)
    card = view.legal[0].code
    assert "characters long" in refused(view, card + " " * MAX_REPLY, mask)
    assert "a reply must be text" in refused(view, None, mask)
    assert "a reply must be text" in refused(view, b"QS", mask)
    assert view.parse(f"<script>alert(1)</script>{card}", mask) == view.legal[0].action
    assert view.parse(f"\u202e{card}\u200b", mask) == view.legal[0].action
    assert "names no move" in refused(view, '{"move": ' + "[" * 3000, mask)  # nested past the parser's depth
    assert "no \"move\" key" in refused(view, '{"card": "QS"}', mask)
    assert "string or a number" in refused(view, '{"move": ["QS"]}', mask)
    assert view.parse(card, mask) == view.legal[0].action


def test_rook_reads_bids_trumps_draws_and_the_rook():
    opening = first("rook_v0", {"rounds": 1}, lambda v, m: v.current["phase"] == "bid" and not m[rook.PASS])
    view, mask = opening
    for form in ("bid 75", "75", "BID 75", "[bid] 75", "[bid 75]", '{"move": "bid 75"}', "I bid 75."):
        assert view.parse(form, mask) == rook.bid_action(75), form
    assert "the opening bid cannot be a pass" in refused(view, "pass", mask)
    assert "77 is not a bid" in refused(view, "bid 77", mask)
    assert "not a move now" in refused(view, "hearts", mask)
    view, mask = first("rook_v0", {"rounds": 1}, lambda v, m: v.current["phase"] == "bid" and m[rook.PASS])
    high = view.current["high_bid"]
    assert view.parse("I pass.", mask) == rook.PASS
    assert "bid too low" in refused(view, f"bid {high}", mask)
    assert "several moves" in refused(view, f"I pass, or bid {high + 5}", mask)
    view, mask = first("rook_v0", {"rounds": 1}, lambda v, m: v.current["phase"] == "trump")
    for form in ("hearts", "Hearts", "trumps hearts", "h", "♥", "[play] hearts", "I name hearts trumps."):
        assert view.parse(form, mask) == rook.TRUMP0 + 2, form
    view, mask = first("rook_v0", {"rounds": 1}, lambda v, m: v.current["phase"] == "draw")
    for form, action in (("up", rook.TAKE_UP), ("hidden", rook.TAKE_HIDDEN), ("I take the face-up card", rook.TAKE_UP),
                         ("[play] hidden", rook.TAKE_HIDDEN), ('{"move": "up"}', rook.TAKE_UP)):
        assert view.parse(form, mask) == action, form
    assert "not a move now" in refused(view, "bid 80", mask)
    view, mask = first("rook_v0", {"rounds": 1}, lambda v, m: v.current["phase"] == "discard"
                       and any(c in v.current["hand"] for c in ("5C", "5D", "5H", "5S", "TC", "TD", "TH", "TS"))
                       and not all(m[rook.NAMES[c]] for c in v.current["hand"]))
    point = next(c for c in view.current["hand"] if c[0] in "5TA" and not mask[rook.NAMES[c]])
    assert "point card" in refused(view, point, mask)
    assert "not in the Rook deck" in refused(view, "2C", mask)
    view, mask = first("rook_v0", {"rounds": 1}, lambda v, m: v.current["phase"] == "play" and m[rook.ROOK])
    for form in ("Rook", "rook", "XR", "I play the Rook.", '{"move": "Rook"}'):
        assert view.parse(form, mask) == rook.ROOK, form
    assert view.move_name(rook.ROOK) == "Rook"
    view, mask = first("rook_v0", {"rounds": 1}, lambda v, m: v.current["phase"] == "play" and v.current["led"]
                       and not v.current["led_by_self"] and m[: rook.N_CARDS].sum() < len(v.current["hand"]))
    off = next(c for c in view.current["hand"] if not mask[rook.NAMES[c]])
    assert "must follow suit" in refused(view, off if off != "XR" else "Rook", mask)


def summit_view(options: dict, where):
    return first("summit_rush_v0", options, where)


def test_summit_rush_reads_a_move_with_a_pile_and_a_message():
    n_moves = 28 * 2 + 2
    view, mask = summit_view({"level": "normal"}, lambda v, m: any(mv.kind == "card" for mv in v.legal))
    move = next(mv for mv in view.legal if mv.kind == "card")
    name = view.move_name(move.action)
    card, pile = name.split("@")
    for form in (name, f"{card.lower()} {pile}", f"{card}@{pile}", f"[play] {name}", f'{{"move": "{name}"}}',
                 f"I'll put {card} onto pile {pile}."):
        assert view.parse(form, mask) == move.action, form
    wait = n_moves - 1
    need9 = 3 + 7  # "I need a 9"
    for form in ("wait > I need a 9", "w > need 9", "> need 9", '{"move": "wait", "message": "I need a 9"}',
                 "[play] wait [say] I need a 9", f"wait > #{need9}", "WAIT > i need a 9!"):
        assert view.parse(form, mask) == need9 * n_moves + wait, form
    assert view.parse(f"{name} > don't turn", mask) == 2 * n_moves + move.action
    assert view.move_name(need9 * n_moves + wait) == "wait > I need a 9"
    assert "not a message of the vocabulary" in refused(view, "wait > hurry up!", mask)
    assert "not a face-up peak card" in refused(view, "2C@0" if "2C" not in view.current["peaks"] else "3C@0", mask)
    assert "several moves" in refused(view, "turn, then wait", mask)
    top = view.current["piles"][0]
    misfit = next((c for c in view.current["peaks"] if c not in (None, "??") and not any(
        mv.code == c and mv.action % 2 == 0 for mv in view.legal)), None)
    if misfit is not None:
        assert f"does not fit on pile 0 (its top is {top})" in refused(view, f"{misfit}@0", mask)


def test_summit_rush_refusals_in_a_silent_game_and_with_an_empty_stock():
    view, mask = summit_view({"level": "normal", "talk": False}, lambda v, m: True)
    assert "silent" in refused(view, "wait > I need a 9", mask)
    assert view.parse("wait", mask) == 28 * 2 + 1
    view, mask = summit_view({"level": "hard", "stock": 1}, lambda v, m: True)
    assert "your stock is empty" in refused(view, "turn", mask)


def test_the_interface():
    env = rope_team_v0.env(level="expert")
    view = text_view(env, legal_moves=False)
    assert view.legal_moves is False and "no trumps" in view.rules()
    assert "(you start with 2 safety ropes)" in text_view("rope_team", {"level": "easy"}).rules()
    assert "I need a R" in text_view("summit_rush_v0").rules()
    assert "silent" in text_view("summit_rush", {"talk": False}).rules()
    assert "300 points" in text_view(rook_v0.env(target_score=300)).rules()
    with pytest.raises(OptionError, match="unknown game"):
        text_view("hearts")
    with pytest.raises(OptionError):
        text_view("rope_team", {"level": "impossible"})
    with pytest.raises(OptionError, match="carries its own options"):
        text_view(env, {"level": "easy"})
    with pytest.raises(TypeError):
        text_view("rook", legal_moves="yes")
    fresh = text_view("summit_rush", {"players": 3})
    with pytest.raises(NotResetError):
        fresh.parse("wait", np.ones(fresh.config.n_actions, np.int8))
    with pytest.raises(ValueError, match="shape"):
        fresh.observe(np.zeros(5, np.int8), np.ones(5, np.int8))
    env.reset(seed=1)
    obs = env.observe("player_1")
    text = view.observe(obs["observation"], obs["action_mask"])
    assert "Legal moves" not in text and text.endswith(".")
    view.reset()
    assert view.current is None
    summit_env = summit_rush_v0.parallel_env()
    assert text_view(summit_env).config == summit_env.config


def test_the_counts_a_text_states_match_the_game():
    """The hidden hands' sizes the texts state (worked out from the observation) are the true ones."""
    for env_id, options, pattern in (("rook_v0", {"rounds": 1}, r"Opponent's hand: (\d+) card"),
                                     ("rope_team_v0", {"level": "hard"}, r"Partner's hand: (\d+) card")):
        env = GAMES[env_id].make_env(**options)
        views = [text_view(env_id, options) for _ in range(2)]
        checked = 0
        for seed in range(6):
            env.reset(seed=seed)
            rng = np.random.default_rng(seed)
            for agent in env.agent_iter():
                obs, _, term, trunc, _ = env.last()
                if term or trunc:
                    env.step(None)
                    continue
                p = env.possible_agents.index(agent)
                found = re.search(pattern, views[p].observe(obs["observation"], obs["action_mask"]))
                if found:
                    assert int(found.group(1)) == env.unwrapped.game.hands[1 - p].bit_count()
                    checked += 1
                env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        assert checked > 50


def test_what_the_text_says_happened_is_what_happened():
    """The trick a text reports since the seat's last decision (its cards, who led it, who won) is the game's last
    trick; the seat's previous text is all the view had."""
    for env_id, options in (("rope_team_v0", {"level": "hard"}), ("rook_v0", {"rounds": 1})):
        env = GAMES[env_id].make_env(**options)
        views = [text_view(env_id, options) for _ in range(2)]
        name = rook.card_name if env_id == "rook_v0" else CARD_NAMES.__getitem__
        checked = 0
        for seed in range(8):
            env.reset(seed=seed)
            for v in views:
                v.reset()
            rng = np.random.default_rng(seed)
            for agent in env.agent_iter():
                obs, _, term, trunc, _ = env.last()
                if term or trunc:
                    env.step(None)
                    continue
                p = env.possible_agents.index(agent)
                news = views[p].observe(obs["observation"], obs["action_mask"]).splitlines()[0]
                s = env.unwrapped.game
                won = re.search(r"(you|partner|opponent) won the trick", news)
                if won and s.last_trick is not None:
                    leader, led, card, winner = s.last_trick
                    assert (won.group(1) == "you") == (winner == p), news
                    cards = [c.replace("Rook", "XR") for c in
                             re.findall(r"(?:led|played|on (?:partner|opponent)'s) (\w+)", news)[:2]]
                    assert {name(led), name(card)} == set(cards), news
                    if "you led" in news:
                        assert leader == p
                    checked += 1
                env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        assert checked > 50, env_id


def test_summit_rush_says_which_pile_took_each_card_and_who_turned_a_stock():
    options = {"players": 3, "talk": True}
    env = GAMES["summit_rush_v0"].make_env(**options)
    views = [text_view("summit_rush", options) for _ in range(3)]
    went = turned = 0
    for seed in range(3):
        obs, _ = env.reset(seed=seed)
        for v in views:
            v.reset()
        agents = [Noisy("summit_rush_v0", seed + p) for p in range(3)]
        while env.agents:
            s = env.unwrapped.game
            for p, a in enumerate(env.possible_agents):
                news = views[p].observe(obs[a]["observation"], obs[a]["action_mask"]).splitlines()[0]
                for card, pile in re.findall(r"(\w\w) went onto pile (\d)", news):
                    assert CARD_NAMES[s.piles[int(pile)][-1]] == card  # the top of that pile now
                    went += 1
                for who, pile in re.findall(r"(you|player \d) turned a stock card onto pile (\d)", news):
                    assert (who == "you") == (int(pile) == p) and (who == "you" or who == f"player {pile}")
                    turned += 1
            obs, *_ = env.step({a: agents[p].act(obs[a]["observation"], obs[a]["action_mask"])
                                for p, a in enumerate(env.possible_agents)})
    assert went > 30 and turned > 10
