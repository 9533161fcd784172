"""Distillation of the Rope Team search agent (``cardzoo.training.distil``): the labels are the teacher's cards from
each seat's own observation, the student plays its greedy legal card, a tiny run writes a policy that plays, the
shipped names resolve, and the distilled policy sees nothing hidden."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")

from cardzoo.agents import loops  # noqa: E402
from cardzoo.agents.learned import LearnedAgent, shipped_policy  # noqa: E402
from cardzoo.agents.registry import make_agent  # noqa: E402
from cardzoo.agents.rope_team_search import RopeTeamSearch  # noqa: E402
from cardzoo.envs.rope_team import rules  # noqa: E402
from cardzoo.envs.rope_team.observer import LAYOUT, observe_bits  # noqa: E402
from cardzoo.evaluation.matches.runner import agent_seed  # noqa: E402
from cardzoo.training import distil  # noqa: E402

from .hidden_worlds import rope_team_hidden_variant  # noqa: E402
from .test_rope_team_search import _to_turn  # noqa: E402

TEACHER = {"worlds": 16, "rollouts": 24}  # a small budget: the same algorithm, quicker labels


def _job(student, beta, seeds=(11, 12, 13), levels=("hard", "expert", "normal")):
    return {"levels": list(levels), "seeds": list(seeds), "beta": beta, "student": student, "teacher": TEACHER,
            "features": "rope_team_scores", "mix_seed": [0, 0, 0]}


def _replay(job, data):
    """Replay the job's games from the stored cards with fresh teachers, one per seat, each fed only its own seat's
    observations in order: every stored row must be that seat's observation and mask, and its label the card
    the fresh teacher names."""
    rows = 0
    for level, seed in zip(job["levels"], job["seeds"], strict=True):
        rng = np.random.default_rng(seed)
        s = rules.new_game(rules.LEVELS[level], rules.shuffled_deck(rng), rng, dealer=1)
        teachers = [RopeTeamSearch(seed=agent_seed(seed, seat), **TEACHER) for seat in range(2)]
        while s.outcome is None:
            seat, legal = s.to_move, rules.legal_mask(s)
            bits = observe_bits(s, seat)
            label = teachers[seat].act_bits(bits, legal)
            card = label
            if legal & (legal - 1):
                assert np.array_equal(data["obs"][rows], LAYOUT.to_array(bits)), "not the seat's own observation"
                assert np.array_equal(data["masks"][rows], loops.mask_array(legal).astype(bool))
                assert data["labels"][rows] == label, "not the teacher's card from this seat's observation"
                card = int(data["played"][rows])
                if card != label:
                    teachers[seat].overrule(card)
                rows += 1
            rules.play(s, card)
    assert rows == len(data["labels"])


def test_teacher_games_are_labelled_with_each_seats_own_teacher():
    """Round 0 (the teacher plays): each row is the mover's observation and its teacher's card, which is played."""
    job = _job(None, 1.0)
    data = distil.label_games(job)
    assert len(data["labels"]) > 30
    assert np.array_equal(data["labels"], data["played"])
    _replay(job, data)


def test_student_games_are_labelled_by_a_teacher_told_what_was_played():
    """Later rounds (the student plays): the labels are still the teacher's from the mover's observation, the
    teacher's memory follows the student's cards, and the student's cards are its greedy legal choice."""
    path = shipped_policy("rope_team")
    job = _job(str(path), 0.0)
    data = distil.label_games(job)
    assert (data["labels"] != data["played"]).any(), "the student never departed: the test would test nothing"
    _replay(job, data)
    agent = LearnedAgent(path)
    x = distil.inputs(data, "rope_team_scores")
    policy = distil._student(str(path))
    for i in range(len(data["labels"])):
        assert data["masks"][i, data["played"][i]]
        assert distil._greedy(policy, x[i], data["masks"][i]) == agent.act(data["obs"][i], data["masks"][i])


def test_summit_rush_labels_are_each_seats_teacher_on_its_own_observation():
    """Summit Rush: replaying the stored moves, each row is the mover's own observation every tick, and its label the
    move a fresh search agent names from it; the student's moves (beta 0) are its greedy legal ones."""
    from cardzoo.agents.summit_rush_search import SummitRushSearch

    path = shipped_policy("summit_rush_normal")
    job = {"game": "summit_rush", "levels": ["normal"], "seeds": [5], "beta": 0.0, "student": str(path),
           "teacher": {"worlds": 4}, "features": "summit_rush_simple", "mix_seed": [0]}
    data = distil.label_games(job)
    assert (data["labels"] != data["played"]).any()
    env = loops.summit_rush_env("normal")
    obs, _ = env.reset(seed=5)
    fresh, student, row = SummitRushSearch(worlds=4), LearnedAgent(path), 0
    while env.agents:
        actions = {}
        for name in env.possible_agents:
            o, m = obs[name]["observation"], obs[name]["action_mask"]
            actions[name] = int(np.flatnonzero(m)[0])
            if np.count_nonzero(m) > 1:
                assert np.array_equal(data["obs"][row], o), "not the seat's own observation"
                assert data["labels"][row] == fresh.act(o, m), "not the teacher's move from this observation"
                assert data["played"][row] == student.act(o, m), "not the student's greedy legal move"
                actions[name] = int(data["played"][row])
                row += 1
        obs, *_ = env.step(actions)
    assert row == len(data["labels"])


def test_a_tiny_run_writes_a_policy_that_plays_legally(tmp_path):
    """Through the command line: two rounds, the files of a run, a policy that LearnedAgent loads and plays."""
    from cardzoo.evaluation.cli import main as cli

    cli(["train", "rope_team", "--backend", "distil", "--rounds", "2", "--games", "2", "--eval-games", "2",
         "--teacher-worlds", "8", "--teacher-rollouts", "12", "--update-epochs", "2", "--levels", "hard",
         "--out", str(tmp_path / "run")])
    path = tmp_path / "run" / "policy.npz"
    meta = LearnedAgent(path).policy.meta
    assert meta["env"] == "rope_team_v0" and meta["features"] == "rope_team_scores" and meta["round"] in (0, 1)
    run = json.loads((tmp_path / "run" / "run.json").read_text())
    assert run["command"].startswith("cardzoo train rope_team --backend distil")
    assert [r["round"] for r in run["rounds"]] == [0, 1]
    assert (tmp_path / "run" / "curve.png").is_file() and (tmp_path / "run" / "data" / "round_1.npz").is_file()
    # play_game raises on an illegal card; a policy file is an agent name
    wins = loops.results(str(path), "expert", [0, 1, 2])
    assert len(wins) == 3
    # a run continued from the saved labels: its first round (2) is played by a student fitted to them
    more = distil.DistilConfig(rounds=1, start_round=2, games=1, datasets=(str(tmp_path / "run" / "data" /
                                                                             "round_0.npz"),),
                               init="baseline", eval_games=1, update_epochs=1, levels=("easy",),
                               out=str(tmp_path / "more"))
    assert LearnedAgent(distil.train(more)).policy.meta["round"] == 2
    assert (tmp_path / "more" / "checkpoints" / "start.npz").is_file()
    assert len(np.load(tmp_path / "more" / "data" / "round_2.npz")["wins"]) == 1


def test_the_fit_learns_the_labels():
    """Cross-entropy on masked logits: a fresh student fitted to teacher labels agrees with them far more than chance
    (and never puts its choice on an illegal card)."""
    data = distil.label_games(_job(None, 1.0, seeds=tuple(range(20, 25)), levels=("expert",) * 5))
    cfg = distil.DistilConfig(init=None, update_epochs=30, learning_rate=3e-3, minibatch_size=64)
    hidden, action, agreement = distil.fit(cfg, data, log=lambda _: None)
    assert agreement["agreement"] > 0.9
    # --init baseline: before any fit, the student plays the simple strategy's card (the teacher's blueprint)
    import torch

    x = torch.as_tensor(distil.inputs(data, "rope_team_scores"))
    hidden, action = distil.build_student(distil.DistilConfig(init="baseline"), x.shape[1], 52)
    with torch.no_grad():
        chosen = action(hidden(x)).masked_fill(~torch.as_tensor(data["masks"]), -1e8).argmax(1).numpy()
    assert np.array_equal(chosen, data["blueprints"])


@pytest.mark.parametrize("options, named", [({"game": "rook"}, "rook"), ({"levels": ("hard", "nightmare")},
                                                                            "nightmare"),
                                            ({"beta": 1.5}, "beta"), ({"features": "nope"}, "nope")])
def test_bad_options_name_the_problem(options, named):
    with pytest.raises(ValueError, match=named):
        distil.DistilConfig(**options)


RESULTS = Path(__file__).parents[1] / "evaluation" / "results" / "training"


@pytest.mark.parametrize("seed", range(12))
def test_no_peeking_distilled_policy(seed):
    """States the player cannot tell apart (partner's hand, aside and face-down ridge dealt afresh) give the
    distilled Rope Team policy (kept with its results, not shipped) the same card."""
    level, seat, plays = ("easy", "normal", "hard", "expert")[seed % 4], seed % 2, 3 + 7 * (seed % 9)
    agent = make_agent(str(RESULTS / "rope_team_distilled" / "policy.npz"), "rope_team_v0")
    assert "distil" in agent.policy.meta["trained_by"]
    s = _to_turn(level, seed, plays, agent, seat)
    if s is None:
        return
    t = rope_team_hidden_variant(s, np.random.default_rng(seed + 1), seat)
    assert observe_bits(t, seat) == observe_bits(s, seat)
    assert (s.hands[1 - seat], s.ridge) != (t.hands[1 - seat], t.ridge), "the pair hides nothing: no test"
    cards = [loops.act(agent, observe_bits(x, seat), rules.legal_mask(x)) for x in (s, t)]
    assert cards[0] == cards[1]


def test_distilled_summit_rush_policy_plays_the_reports_deals():
    """The committed Summit Rush student plays legal moves (the env raises otherwise) and its committed report-deal
    results are reproduced on the first deals."""
    import json as _json

    path = RESULTS / "summit_rush_normal_distilled"
    committed = _json.loads((path / "report_deals.json").read_text())["teams"]
    name = next(n for n in committed if n.endswith(".npz"))
    won = loops.results(str(path / "policy.npz"), "normal", list(range(20)), game="summit_rush")
    assert "".join("W" if w else "L" for w in won) == committed[name]["normal"]["results"][:20]
