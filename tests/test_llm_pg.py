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
    assert any((tmp_path / "trained").glob("*.safetensors"))  # hf:DIR plays the trained model
