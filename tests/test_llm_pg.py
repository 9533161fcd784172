"""The language seat's policy-gradient recipe (training/llm_pg.py) on the tiny random model: a step moves the chosen
move's probability the way its advantage says, only the trained blocks change, and a short run writes its curve."""

from __future__ import annotations

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from cardzoo.agents.llm.local import LocalChat  # noqa: E402
from cardzoo.agents.llm.tiny import build_tiny_model  # noqa: E402
from cardzoo.training import llm_pg  # noqa: E402

PROMPT = [{"role": "system", "content": "Rope Team: play a card."},
          {"role": "user", "content": "Your hand: 5C 6C KC AC. Legal moves: 1) 5C  2) 6C  3) KC  4) AC"}]
MOVES = ["5C", "6C", "KC", "AC"]


@pytest.fixture
def tiny(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return build_tiny_model(tmp_path / "tiny", seed=0)


def _probability(chat: LocalChat, move: str) -> float:
    scores, _ = chat.score(PROMPT, MOVES)
    return float(torch.softmax(torch.tensor(scores), 0)[MOVES.index(move)])


@pytest.mark.parametrize("advantage", [1.0, -1.0])
def test_a_step_moves_the_chosen_moves_probability_as_its_advantage_says(tmp_path, advantage):
    folder = build_tiny_model(tmp_path / f"tiny{advantage}", seed=0)
    chat = LocalChat(folder)
    model, _ = chat._load()
    params = llm_pg.trainable(model, 1)
    frozen = {n: p.detach().clone() for n, p in model.named_parameters() if not p.requires_grad}
    before = _probability(chat, "KC")
    optimizer = torch.optim.Adam(params, lr=1e-2)
    decision = {"prompt": PROMPT, "candidates": MOVES, "attempts": [{"reply": "KC"}], "advantage": advantage}
    for _ in range(3):
        llm_pg.reinforce_step(chat, optimizer, [decision], temperature=1.0)
    chat._prefix = None
    after = _probability(chat, "KC")
    assert (after > before + 0.01) if advantage > 0 else (after < before - 0.01), (before, after)
    assert all(torch.equal(p, frozen[n]) for n, p in model.named_parameters() if n in frozen)  # the rest is frozen


def test_a_short_run_writes_its_curve(tiny, tmp_path):
    options = llm_pg.Options(model=str(tiny), game="rope_team", iterations=1, games=1, eval_games=2, threads=1,
                             out=str(tmp_path / "run"), save=str(tmp_path / "trained"))
    result = llm_pg.train(options)
    rows = json.loads((tmp_path / "run" / "llm_pg.json").read_text())["rows"]
    assert rows == result["rows"] and [r["iteration"] for r in rows] == [0, 1]
    assert all(0.0 <= r["eval_win_rate"] <= 1.0 for r in rows) and np.isfinite(rows[1]["loss"])
    assert (tmp_path / "run" / "llm_pg.png").is_file()
    table = (tmp_path / "run" / "llm_pg.md").read_text()
    wins = round(rows[1]["eval_win_rate"] * 2)
    assert f"| 1 | {100 * wins / 2:.1f}% [" in table and "--eval-games 2" in table
    assert any((tmp_path / "trained").glob("*.safetensors"))  # hf:DIR plays the trained model


def test_a_game_decided_by_its_winner_counts_the_first_seats_wins():
    records = [{"winner": "player_0"}, {"winner": "player_1"}, {"winner": "player_0"}, {"winner": None}]
    assert llm_pg.win_rate(records, "rook") == 0.5
    assert llm_pg.win_rate([{"outcome": "win"}, {"outcome": "fall"}], "rope_team") == 0.5


def test_with_a_partner_only_the_models_seat_plays_and_learns(tiny, tmp_path):
    options = llm_pg.Options(model=str(tiny), game="rook", iterations=1, games=1, eval_games=1, threads=1,
                             partner="heuristic", out=str(tmp_path / "run"))
    env = llm_pg.make_env("rook_v0", illegal_action="raise", **llm_pg.table_setting("rook"))
    assert llm_pg.table_setting("rook") == {"rounds": 1}  # the default table: one round, as the LLM table plays
    players = llm_pg.seats(options, env, 1.0, 0)
    assert isinstance(players[0], llm_pg.LanguageSeat) and not isinstance(players[1], llm_pg.LanguageSeat)
    records, decisions = llm_pg.play(options, env, [3], 1.0, 0)
    assert records[0]["outcome"] == "rounds_done" and decisions[0] and {d["seat"] for d in decisions[0]} == {0}
    assert all(d["return"] == records[0]["returns"][0] for d in decisions[0])
    rows = llm_pg.train(options)["rows"]
    assert [r["iteration"] for r in rows] == [0, 1] and np.isfinite(rows[1]["loss"])


def test_a_stopped_run_goes_on_from_its_checkpoint_to_the_numbers_of_one_never_stopped(tiny, tmp_path):
    from cardzoo.agents.llm import local

    def run(out, iterations, **extra):
        local._LOADED.clear()  # each run starts from the file's weights, as a new process would
        options = llm_pg.Options(model=str(tiny), game="rope_team", iterations=iterations, games=2, eval_games=2,
                                 threads=1, lr=1e-2, partner="simple", out=str(out), **extra)
        rows = llm_pg.train(options)["rows"]
        model, _ = local._LOADED[next(iter(local._LOADED))]
        return rows, {n: p.detach().clone() for n, p in model.named_parameters() if p.requires_grad}

    straight, weights = run(tmp_path / "straight", 2)
    run(tmp_path / "stopped", 1)
    again, resumed_weights = run(tmp_path / "stopped", 2)
    strip = [{k: v for k, v in r.items() if k != "seconds"} for r in straight]
    assert [{k: v for k, v in r.items() if k != "seconds"} for r in again] == strip
    assert all(torch.equal(weights[n], resumed_weights[n]) for n in weights)
    assert straight[1]["loss"] != 0 and not torch.equal(weights[next(iter(weights))],
                                                         run(tmp_path / "fresh", 0)[1][next(iter(weights))])
    with pytest.raises(ValueError, match="other options.*lr=0.01"):
        local._LOADED.clear()
        llm_pg.train(llm_pg.Options(model=str(tiny), game="rope_team", iterations=3, games=2, eval_games=2,
                                    threads=1, lr=1e-3, partner="simple", out=str(tmp_path / "stopped")))
