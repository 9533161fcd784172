"""The Rope Team search on the learned blueprint (``search_learned``): its partner model is the policy's own
probabilities on the partner's own observation, its rollouts are the policy's games card for card, its options are
checked, its seed reproduces its games, and its study resumes where it stopped. (The simple blueprint's behaviour is
``test_rope_team_search.py``'s; no peeking for every registry agent: ``test_no_peeking.py``.)"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import numpy as np
import pytest

from cardzoo.agents.learned import LearnedAgent, NumpyPolicy, shipped_policy
from cardzoo.agents.registry import fingerprint, make_agent, rope_team_policy
from cardzoo.agents.rope_team_blueprints import BatchedPolicy
from cardzoo.agents.rope_team_search import LEARNED_BUDGET, RopeTeamSearch
from cardzoo.envs import rope_team_v0
from cardzoo.envs.common.cards import cards_of, mask_to_bits
from cardzoo.envs.common.errors import OptionError
from cardzoo.envs.rope_team import rules
from cardzoo.envs.rope_team.env import make_config
from cardzoo.envs.rope_team.observer import LAYOUT, decode, observe_bits
from cardzoo.evaluation.studies import search_rope_team_learned as study

from .test_rope_team_search import _batch

SMALL = {"worlds": 64, "rollouts": 48}
POLICY = NumpyPolicy(shipped_policy("rope_team_v2"))


def _arrays(s: rules.State) -> tuple[np.ndarray, np.ndarray]:
    return LAYOUT.to_array(observe_bits(s, s.to_move)), mask_to_bits(rules.legal_mask(s))


def _with_learned_partner(level: str, seed: int, partner_plays: int):
    """A game of the learned search (seat 0) with the learned agent (seat 1), stopped at seat 0's turn once the
    partner has played ``partner_plays`` cards in the deal; the partner's observations, masks and cards of the deal
    as the env gave them. None if the game ends first."""
    rng = np.random.default_rng(seed)
    s = rules.new_game(make_config(level), rules.shuffled_deck(rng), rng, dealer=int(rng.integers(2)))
    agent = RopeTeamSearch(seed, blueprint=POLICY, **SMALL)
    partner = LearnedAgent(shipped_policy("rope_team_v2"))
    seen: list[tuple[np.ndarray, np.ndarray, int]] = []
    deal = s.deal
    while s.outcome is None:
        if s.deal != deal:
            deal, seen = s.deal, []
        obs, mask = _arrays(s)
        if s.to_move == 0:
            if len(seen) >= partner_plays:
                return s, agent, seen
            card = agent.act(obs, mask)
        else:
            card = partner.act(obs, mask)
            seen.append((obs, mask, card))
        rules.play(s, card)
    return None


@pytest.mark.parametrize(("level", "seed", "plays"), [("hard", 1, 4), ("expert", 2, 7), ("easy", 3, 3),
                                                      ("normal", 4, 10)])
def test_the_partner_model_is_the_policy_on_the_partners_own_observation(level, seed, plays):
    """In a world that holds the true cards, the probability of each of the partner's plays this deal is the
    policy's softmax on the observation the env gave the partner, and the likelihood of the deal's plays is their
    product mixed with epsilon over the partner's legal cards."""
    found = _with_learned_partner(level, seed, plays)
    assert found is not None
    s, agent, seen = found
    obs = decode(observe_bits(s, 0))
    table = agent._remember(obs)
    assert [p.card for p in agent.partner_plays] == [card for _, _, card in seen]
    drawn = agent._belief(obs, table, 8)["partner"]
    worlds = np.concatenate([[np.uint64(s.hands[1])], drawn])
    eps = agent.options.epsilon
    expected = 1.0
    for p, (o, m, card) in zip(agent.partner_plays, seen, strict=True):
        policy = POLICY.probabilities(o, m)[card]
        hand_then = worlds | np.uint64(obs.played_partner & ~p.played_before)
        model = agent._blueprint_probability(p, hand_then)
        assert model[0] == pytest.approx(policy, rel=1e-4, abs=1e-7)
        assert ((model >= 0) & (model <= 1)).all()
        expected *= (1 - eps) * policy + eps / m.sum()
    assert agent._likelihood(obs, worlds)[0] == pytest.approx(expected, rel=1e-4)


@pytest.mark.parametrize(("level", "seed", "plays"), [("easy", 5, 0), ("normal", 6, 9), ("hard", 7, 17),
                                                      ("expert", 8, 30), ("hard", 9, 22)])
def test_learned_rollouts_play_the_game_as_learned_agents_in_the_env(level, seed, plays):
    """From a position of an env game, the rollout row plays the card the learned agent plays in the env, card
    for card, and ends the game as the env does; ``play_out`` with the policy gives the same result."""
    env = rope_team_v0.env(level=level)
    env.reset(seed=seed)
    agents = [LearnedAgent(shipped_policy("rope_team_v2")) for _ in range(2)]
    rollout = BatchedPolicy(POLICY)
    games = whole = None
    for n, current in enumerate(env.agent_iter()):
        o, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        if n == plays:
            state = env.unwrapped.game
            games, whole = _batch([state]), _batch([state])
        card = agents[env.possible_agents.index(current)].act(o["observation"], o["action_mask"])
        if games is not None:
            row_obs, row_mask = games.observe()
            assert row_obs[0].tolist() == o["observation"].tolist()
            assert rollout(row_obs, row_mask).tolist() == [card]
            games.play(np.array([card]))
        env.step(card)
    assert games is not None
    won = env.unwrapped.game.outcome == rules.WIN
    assert games.results.tolist() == [1 if won else -1]
    assert whole.play_out(rollout).tolist() == [1 if won else -1]


def test_the_blueprints_card_stands_for_its_run():
    """Whichever legal card the blueprint picks, it is a candidate (a learned partner may read which card of a
    run was played), and the candidates still number one per run."""
    checked = 0
    for seed in range(12):
        rng = np.random.default_rng(seed)
        s = rules.new_game(make_config("hard"), rules.shuffled_deck(rng), rng, dealer=1)
        for _ in range(int(rng.integers(0, 10))):
            rules.play(s, int(rng.choice(cards_of(rules.legal_mask(s)))))
        legal = rules.legal_mask(s)
        obs = decode(observe_bits(s, s.to_move))
        # the runs depend on the cards gone (either seat's, the ridge's) and the card led: the table's own frame will do
        runs = len(RopeTeamSearch._candidates(obs, s, legal))
        for card in cards_of(legal):
            candidates = RopeTeamSearch._candidates(obs, s, legal, card)
            assert card in candidates and len(candidates) == runs
            checked += runs < legal.bit_count()
    assert checked  # some positions had runs of more than one card


@pytest.mark.parametrize(("options", "named"), [
    ({"blueprint": "no_such_agent"}, "blueprint"), ({"blueprint": "simple_signal"}, "blueprint"),
    ({"blueprint": 3}, "blueprint"), ({"blueprint": str(shipped_policy("rook_v2"))}, "rope_team_v0"),
    ({"blueprint": POLICY, "rollout_policy": BatchedPolicy(POLICY)}, "rollout_policy"),
    ({"blueprint": POLICY, "epsilon": 0.0}, "epsilon"), ({"blueprint": "rope_team_v2", "rollouts": 0}, "rollouts"),
    ({"blueprint": NumpyPolicy(shipped_policy("rook_v2"))}, "rope_team_v0"),
])
def test_bad_blueprints_and_options_raise_naming_them(options, named):
    with pytest.raises(OptionError, match=named):
        RopeTeamSearch(**options)


def test_the_registry_agent_searches_on_the_learned_policy_at_its_budget():
    agent = make_agent("search_learned", "rope_team_v0", seed=1)
    assert agent.options.worlds == LEARNED_BUDGET["worlds"] and agent.options.rollouts == LEARNED_BUDGET["rollouts"]
    assert agent.rollout_policy.policy.digest == POLICY.digest
    assert fingerprint("search_learned", "rope_team_v0") == POLICY.digest  # caches see a retrained blueprint
    assert fingerprint("search", "rope_team_v0") == ""
    by_file = RopeTeamSearch(blueprint=str(shipped_policy("rope_team_v2")))
    assert by_file.model.policy.digest == POLICY.digest
    assert rope_team_policy("learned_seed1").digest != POLICY.digest
    with pytest.raises(OptionError, match="search_belief"):  # a Rope Team search only
        make_agent("search_belief", "rook_v0")
    with pytest.raises(OptionError, match="'simple' is not a learned agent"):
        rope_team_policy("simple")


def _game_cards(seed: int, plays: int) -> list[int]:
    """The first ``plays`` cards of a learned search + learned search game on a fixed deal."""
    rng = np.random.default_rng(11)
    s = rules.new_game(make_config("expert"), rules.shuffled_deck(rng), rng, dealer=0)
    agents = [RopeTeamSearch(seed + i, blueprint="rope_team_v2", worlds=32, rollouts=24) for i in range(2)]
    cards = []
    while s.outcome is None and len(cards) < plays:
        cards.append(agents[s.to_move].act(*_arrays(s)))
        rules.play(s, cards[-1])
    return cards


def test_same_seed_same_game_also_in_another_process():
    here = _game_cards(3, 16)
    assert _game_cards(3, 16) == here
    code = "from tests.test_rope_team_search_learned import _game_cards; print(_game_cards(3, 16))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == str(here)


def test_the_study_resumes_where_it_stopped(tmp_path, monkeypatch):
    """Rows are appended per deal and team; a rerun plays only the deals not there; the summary pairs the teams
    on the deals they all finished and reports the search seats' compute."""
    monkeypatch.setitem(LEARNED_BUDGET, "worlds", 24)
    monkeypatch.setitem(LEARNED_BUDGET, "rollouts", 12)
    monkeypatch.setattr(study, "chart", lambda levels, path: [])  # matplotlib's import alone is seconds
    rows = tmp_path / "rows.jsonl"
    study.main(["--games", "1", "--cross", "1", "--levels", "easy", "--rows", str(rows)])
    first = study.read_rows(rows)
    assert sorted(r["team"] for r in first if r["team"] != study.TOLD) == sorted([
        "search_learned+search_learned", "learned+learned", "simple+simple", "search_learned+learned",
        "learned+search_learned"])
    study.main(["--games", "2", "--cross", "1", "--levels", "easy", "--rows", str(rows)])
    second = study.read_rows(rows)
    assert second[: len(first)] == first
    assert sorted((r["deal"], r["team"]) for r in second[len(first):] if r["team"] != study.TOLD) == [
        (1, "learned+learned"), (1, "search_learned+search_learned"), (1, "simple+simple")]
    # Each lost deal of the search team, and only those, is replayed with the partners' hands told.
    assert sorted(r["deal"] for r in second if r["team"] == study.TOLD) == sorted(
        r["deal"] for r in second if r["team"] == "search_learned+search_learned" and not r["win"])
    data = json.loads(rows.with_suffix(".json").read_text())
    level = data["levels"]["easy"]
    assert level["deals"] == 2
    cell = level["teams"]["search_learned+search_learned"]
    won = [r["win"] for r in second if r["team"] == "search_learned+search_learned"]
    assert cell["wins"] == sum(won) and cell["games"] == 2
    assert cell["minus_learned"]["games"] == 2
    assert cell["compute"]["decisions"] == sum(r["decisions"] for r in second
                                               if r["team"] == "search_learned+search_learned")
    # 12 rollouts shared by the candidates, at least min_worlds (16) worlds each
    assert cell["compute"]["rollout_worlds_per_search"] >= 16
    assert cell["compute"]["rollouts_per_search"] >= 2 * 16
    assert level["old_search"]["search_learned_minus_search"]["games"] == 2
    assert len(data["runs"]) == 2 and rows.with_suffix(".csv").is_file()
    # The old search at the same compute: only its rows are added, paired with search_learned on the same deal.
    monkeypatch.setitem(study.MATCHED_BUDGET, "worlds", 20)
    monkeypatch.setitem(study.MATCHED_BUDGET, "rollouts", 10)
    study.main(["--games", "2", "--matched", "1", "--levels", "easy", "--rows", str(rows)])
    third = study.read_rows(rows)
    assert [(r["deal"], r["team"]) for r in third[len(second):]] == [(0, "search_matched+search_matched")]
    matched = json.loads(rows.with_suffix(".json").read_text())["levels"]["easy"]["teams"][
        "search_matched+search_matched"]
    assert matched["minus_search_learned"]["games"] == 1
    assert matched["minus_search_learned"]["difference"] == int(third[-1]["win"]) - int(won[0])
    assert matched["compute"]["worlds_drawn_per_search"] == 20


def test_the_committed_study_reaches_the_report_with_counts_differences_and_compute():
    from cardzoo.evaluation.report import Section, load_result
    from cardzoo.evaluation.report import search as search_report

    data = load_result("rope_team_search_learned")
    out = Section("rope_team")
    text = "\n".join(search_report.rope_team_learned(out))
    rows = {(r.setting, r.source): r for r in out.rows}
    assert data["levels"]
    for name, level in data["levels"].items():
        team = level["teams"]["search_learned+search_learned"]
        assert rows[name, "search_learned"].games == team["games"] == level["deals"]
        assert rows[name, "learned (search_learned deals)"].games == level["deals"]
        vs = team["minus_learned"]
        assert f"| {name} | {level['deals']} | {100 * team['rate']:.1f}% [" in text
        assert f"{100 * vs['difference']:+.1f} [{100 * vs['low']:+.1f}, {100 * vs['high']:+.1f}]" in text
        assert f"| {team['compute']['mean_ms']:.0f}; {team['compute']['max_ms']:.0f} |" in text
        assert team["compute"]["mean_ms"] < 100  # the budget per decision
        matched = level["teams"].get("search_matched+search_matched")
        if matched:  # what the same compute buys the old search, stated search_learned minus it
            vs = matched["minus_search_learned"]
            assert (f"{name} {100 * matched['rate']:.1f}% [{100 * matched['low']:.1f}, {100 * matched['high']:.1f}] "
                    f"of {matched['games']} at {matched['compute']['mean_ms']:.0f} ms per decision, `search_learned` "
                    f"minus it {-100 * vs['difference']:+.1f} [{-100 * vs['high']:+.1f}, {-100 * vs['low']:+.1f}]"
                    ) in text
    # The summary is the committed rows' (a run that added rows and not the summary would fail here).
    rows_file = study.read_rows(study.ROWS)
    assert json.loads(json.dumps(study.summarize(rows_file, load_result("rope_team_search")))) == data["levels"]


def test_the_reports_block_is_generated_from_the_committed_study(tmp_path):
    """The committed report's Rope Team search_learned block is what the committed summary gives (no stale or
    hand-copied figure), with every level's rate and deals."""
    from cardzoo.evaluation.report.model import RESULTS, load_result

    committed = RESULTS / "report" / "summary.md"
    copy_ = shutil.copytree(RESULTS / "report", tmp_path / "report")  # with its charts: the page links those there
    study.refresh_report(copy_)
    for name in ("summary.md", "results.json", "results.csv"):
        assert (copy_ / name).read_text() == (RESULTS / "report" / name).read_text(), name
    for name, level in load_result("rope_team_search_learned")["levels"].items():
        team = level["teams"]["search_learned+search_learned"]
        assert f"| {name} | {level['deals']} | {100 * team['rate']:.1f}% [" in committed.read_text()


def test_one_blas_thread_inside_the_block_and_as_before_after():
    """The search's products run on one OpenBLAS thread (threads spinning on a busy machine cost 3-5 times the CPU
    time), and the thread's setting is restored after the decision."""
    from cardzoo.agents import blas

    setter = blas._find()
    if setter is None:
        pytest.skip("numpy's BLAS here is not OpenBLAS with a thread-local setting")
    before = setter(0)
    setter(before)
    with blas.one_blas_thread():
        inside = setter(1)
    assert inside == 1
    assert setter(before) == before
