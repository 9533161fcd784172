"""The learned belief over the Rope Team partner's hand: the worlds it draws honour every hard fact, it reads the
partner better than the uniform draw on held-out deals, its file is read as untrusted input, and the search with it
(the registry's ``search_belief``) plays legal cards reproducibly. (The torch side: test_belief_training.py.)"""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cardzoo.agents import rope_team_belief as belief
from cardzoo.agents.learned import shipped_policy
from cardzoo.agents.registry import make_agent
from cardzoo.agents.rope_team_search import RopeTeamSearch, _ridge_up
from cardzoo.agents.rope_team_simple import RopeTeamSimple
from cardzoo.envs.common.cards import SUIT_MASKS, mask_to_bits
from cardzoo.envs.common.errors import OptionError, PolicyError
from cardzoo.envs.rope_team import rules
from cardzoo.envs.rope_team.env import make_config
from cardzoo.envs.rope_team.observer import LAYOUT, decode, observe_bits

LEVELS = sorted(rules.LEVELS)
NAMES = ("rope_team_belief", "rope_team_belief_simple")


def _voids(history, seat: int, deal: int) -> int:
    """The cards of the suits ``seat``'s partner failed to follow in ``deal`` (plays: deal, who, card, led)."""
    void = 0
    for d, who, card, led in history:
        if d == deal and who != seat and led is not None and card // 13 != led // 13:
            void |= SUIT_MASKS[led // 13]
    return void


def _check(name: str, level: str, seed: int, plays: int, noise: float = 0.3) -> int | None:
    """Play a game (seat 0 the search with the belief ``name``, seat 1 the simple strategy with some random cards),
    stop at seat 0's turn after ``plays`` cards and check the worlds the belief draws against the true game."""
    agent = belief.RopeTeamBeliefSearch(seed, belief=name, rollouts=32, min_worlds=4)
    rng = np.random.default_rng(seed)
    s = rules.new_game(make_config(level), rules.shuffled_deck(rng), rng, dealer=int(rng.integers(2)))
    simple = RopeTeamSimple()
    history, seen_off_ridge = [], 0
    while s.outcome is None:
        seen_off_ridge |= s.hands[0] | s.played[0] | s.played[1]
        legal = rules.legal_mask(s)
        if s.to_move == 0:
            card = agent.act(LAYOUT.to_array(observe_bits(s, 0)), mask_to_bits(legal))
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
    table = agent._remember(read)
    # The sampler reads the observation rebuilt from the agent's public table: it must be the one the seat got.
    assert observe_bits(table, 0) == observe_bits(s, 0)
    worlds = agent._belief(read, table, 64)
    assert worlds is not None
    up = _ridge_up(s)
    seen = s.hands[0] | s.played[0] | s.played[1] | up
    void = _voids(history, 0, s.deal)
    down = [i for i in range(rules.RIDGE) if not s.up[i]]
    assert len(worlds["partner"]) == 64
    for partner, ridge in zip(worlds["partner"].tolist(), worlds["ridge"].tolist(), strict=True):
        assert partner.bit_count() == s.hands[1].bit_count()
        assert partner & (seen | void) == 0
        assert [ridge[i] for i in range(rules.RIDGE) if s.up[i]] == [s.ridge[i] for i in range(rules.RIDGE) if s.up[i]]
        face_down = [ridge[i] for i in down]
        assert len(set(face_down)) == len(face_down)
        assert all(not (seen_off_ridge | partner | up) >> c & 1 for c in face_down)
    return s.deal


@settings(max_examples=20, deadline=None)
@given(name=st.sampled_from(NAMES), level=st.sampled_from(LEVELS), seed=st.integers(0, 2**31),
       plays=st.integers(0, 80))
def test_drawn_worlds_honour_every_hard_fact(name, level, seed, plays):
    """Every world gives the partner exactly as many cards as it holds, none the seat has seen (its hand, the cards
    played, the face-up ridge), none of a suit the partner failed to follow this deal; the face-down ridge only
    cards never seen off the ridge in any deal, none twice, none in the partner's hand."""
    _check(name, level, seed, plays)


def test_drawn_worlds_in_later_deals():
    """The same in later deals, where the ridge must avoid the cards of earlier deals too."""
    later = [d for seed in range(5) if (d := _check("rope_team_belief_simple", "easy", seed, 27 + seed % 4, 0.0))]
    assert sum(d >= 2 for d in later) >= 3


# ---------------------------------------------------------------------------- the read, on held-out deals
def _positions(name: str, agent_name: str, games: int, first_seed: int):
    """(observation, partner's voids, its leads, ridge, cards seen off the ridge, its true hand) at every second
    decision with more than one legal card, in games of ``agent_name`` in both seats."""
    out = []
    for g in range(games):
        rng = np.random.default_rng(first_seed + g)
        s = rules.new_game(make_config(LEVELS[g % 4]), rules.shuffled_deck(rng), rng, dealer=g % 2)
        seats = [make_agent(agent_name, "rope_team_v0", seed=g), make_agent(agent_name, "rope_team_v0", seed=g)]
        void, led, seen, deal, k = [0, 0], [0, 0], [0, 0], 1, 0
        while s.outcome is None:
            if s.deal != deal:
                void, led, deal = [0, 0], [0, 0], s.deal
            me = s.to_move
            seen[me] |= s.hands[me] | s.played[0] | s.played[1]
            legal = rules.legal_mask(s)
            obs = LAYOUT.to_array(observe_bits(s, me))
            if legal.bit_count() > 1 and (k := k + 1) % 2:
                ridge = [s.ridge[i] if s.up[i] else -1 for i in range(rules.RIDGE)]
                out.append((obs, void[1 - me], led[1 - me], ridge if me == 0 else ridge[::-1], seen[me],
                            s.hands[1 - me]))
            card = seats[me].act(obs, mask_to_bits(legal))
            if s.led is None:
                led[me] |= 1 << card
            elif card // 13 != s.led // 13:
                void[me] |= 1 << (s.led // 13)
            rules.play(s, card)
    return out


def test_worlds_avoid_the_suits_the_partner_showed_void():
    """At every position of real games where the partner has shown a void this deal, no world gives it a card of
    that suit (whatever the network's chances for those cards), and every world its exact hand size."""
    net = belief.load_belief("rope_team_belief_simple")
    rng = np.random.default_rng(1)
    checked = 0
    for obs, void, led, ridge, seen, hand in _positions("rope_team_belief_simple", "simple", 24, 91_000_000):
        if not void:
            continue
        worlds = belief.sample_worlds(net, obs, void, led, ridge, seen, 64, rng)
        suits = sum(SUIT_MASKS[s] for s in range(4) if void >> s & 1)
        assert hand & suits == 0  # the positions' voids are true ones
        assert all(w & suits == 0 and w.bit_count() == hand.bit_count() for w in worlds["partner"].tolist())
        checked += 1
    assert checked >= 20


@pytest.mark.parametrize(("name", "agent_name", "margin"), [("rope_team_belief", "learned", 0.01),
                                                            ("rope_team_belief_simple", "simple", 0.025)])
def test_the_belief_reads_the_partner_better_than_a_uniform_draw(name, agent_name, margin):
    """On deals no training saw, the worlds drawn give the partner's true cards a higher likelihood than the uniform
    draw over the allowed cards: the mean log-loss per allowed card of the worlds' card frequencies (smoothed) is
    below the uniform belief's (hand size / allowed cards) by ``margin`` nats."""
    net = belief.load_belief(name)
    rng = np.random.default_rng(0)
    ours, uniform, cards = 0.0, 0.0, 0
    for obs, void, led, ridge, seen, hand in _positions(name, agent_name, 30, 90_000_000):
        worlds = belief.sample_worlds(net, obs, void, led, ridge, seen, 200, rng)
        allowed = int(belief.allowed_cards(obs[None], np.array([void]))[0])
        idx = np.array([c for c in range(52) if allowed >> c & 1])
        held = (np.uint64(hand) >> idx.astype(np.uint64)) & np.uint64(1) == 1
        counts = ((worlds["partner"][:, None] >> idx.astype(np.uint64)) & np.uint64(1)).sum(axis=0)
        q = (counts + 0.5) / (len(worlds["partner"]) + 1.0)
        u = np.full(len(idx), hand.bit_count() / len(idx)).clip(1e-3, 1 - 1e-3)
        ours -= float(np.where(held, np.log(q), np.log(1 - q)).sum())
        uniform -= float(np.where(held, np.log(u), np.log(1 - u)).sum())
        cards += len(idx)
    assert cards > 2000
    assert ours / cards < uniform / cards - margin, (ours / cards, uniform / cards)


# ---------------------------------------------------------------------------- the file, as untrusted input
def _write(path, meta: dict, size: int = belief.SIZE, hidden: int = 8):
    rng = np.random.default_rng(0)
    np.savez(path, meta=np.array(json.dumps(meta)), w0=rng.normal(size=(size, hidden)).astype(np.float32),
             b0=np.zeros(hidden, np.float32), action_w=rng.normal(size=(hidden, 52)).astype(np.float32),
             action_b=np.zeros(52, np.float32))
    return path


GOOD = {"env": "rope_team_v0", "kind": belief.KIND, "layers": 1, "activation": "relu",
        "observation_size": belief.SIZE, "actions": 52}


def test_a_sound_belief_file_is_read(tmp_path):
    net = belief.BeliefNet(_write(tmp_path / "ok.npz", GOOD))
    x = belief.inputs(np.zeros((3, belief.OBS), np.int8), np.zeros(3, int), np.zeros(3, np.uint64))
    assert net.logits(x).shape == (3, 52)


@pytest.mark.parametrize(("meta", "size", "says"), [
    ({**GOOD, "kind": None}, belief.SIZE, "not a Rope Team belief"),  # a policy file is not a belief
    ({**GOOD, "observation_size": 464}, 464, "reads 464 entries"),  # the wrong input
    ({**GOOD, "env": "rook_v0"}, belief.SIZE, "rook_v0"),
    ({**GOOD, "observation_size": 99}, belief.SIZE, "w0"),  # shapes that do not chain: read_policy's check
])
def test_malformed_belief_files_are_refused(tmp_path, meta, size, says):
    path = _write(tmp_path / "bad.npz", meta, size)
    with pytest.raises(PolicyError, match=says):
        belief.BeliefNet(path)


def test_a_policy_file_and_broken_bytes_are_refused(tmp_path):
    with pytest.raises(PolicyError, match="not a Rope Team belief"):
        belief.BeliefNet(shipped_policy("rope_team_v2"))
    data = belief.shipped_belief().read_bytes()
    cut = tmp_path / "cut.npz"
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(PolicyError):
        belief.BeliefNet(cut)


def test_the_shipped_beliefs_record_how_they_were_made():
    for name in NAMES:
        net = belief.load_belief(name)
        assert net.meta["command"].startswith("python -m cardzoo.training.belief")
        held = net.meta["held_out"]["all"]
        assert held["loss"] < held["uniform_loss"]
        assert belief.shipped_belief(name).stat().st_size < 1_500_000  # ships in the wheel


# ---------------------------------------------------------------------------- the agent
@pytest.mark.parametrize("bad", [3, "no_such_belief", "missing.npz"])
def test_a_bad_belief_option_is_refused(bad):
    with pytest.raises((OptionError, PolicyError), match="belief|missing"):
        belief.RopeTeamBeliefSearch(belief=bad)
    with pytest.raises(OptionError, match="belief"):
        RopeTeamSearch(belief=bad)


def test_search_belief_is_registered_reproducible_and_legal():
    """Through the env: legal cards, and the same seed plays the same game."""
    from cardzoo.envs import rope_team_v0

    def game(seed: int) -> list[int]:
        env = rope_team_v0.env(level="hard")
        env.reset(seed=3)
        agents = {a: make_agent("search_belief", "rope_team_v0", seed=seed + i) for i, a in enumerate(env.agents)}
        cards = []
        for a in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            card = agents[a].act(obs["observation"], obs["action_mask"])
            assert obs["action_mask"][card] == 1
            cards.append(card)
            env.step(card)
        return cards

    assert game(1) == game(1)
    agent = make_agent("search_belief", "rope_team_v0", seed=0)
    assert agent.belief.meta["kind"] == belief.KIND and agent.options.rollouts == belief.BUDGET["rollouts"]


def test_the_study_resumes_where_it_stopped(tmp_path, monkeypatch):
    """A rerun plays only what the rows lack: the deals already there are neither replayed nor counted twice."""
    from cardzoo.evaluation.studies import belief_rope_team as study

    small = {"worlds": 16, "rollouts": 16, "min_worlds": 4}  # the study's teams at a test's budget
    monkeypatch.setattr(study, "SEATS", {**study.SEATS, "search": lambda: RopeTeamSearch(**small),
                                         "search_small": lambda: RopeTeamSearch(**small),
                                         "search_belief": lambda: belief.RopeTeamBeliefSearch(**small)})
    charts = []
    monkeypatch.setattr(study, "chart", lambda summary, path: charts.append(path))  # matplotlib's seconds spared
    rows, out = tmp_path / "rows.jsonl", tmp_path / "out.json"
    args = ["--positions", "1", "--levels", "hard", "--rows", str(rows), "--out", str(out)]
    study.main([*args, "--games", "1"])
    first = rows.read_text().splitlines()
    study.main([*args, "--games", "2"])
    lines = rows.read_text().splitlines()
    assert lines[: len(first)] == first and len(lines) == len(first) + len(study.TEAMS)
    summary = json.loads(out.read_text())
    assert summary["play"]["hard"]["games"] == 2 and set(summary["play"]["hard"]["teams"]) == set(study.TEAMS)
    assert set(summary["read"]) == {"simple", "learned"} and len(summary["commands"]) == 2
    assert charts == [out.with_suffix(".png")] * 2
