"""``cardzoo evaluate --agents llm:...``: the language-model table against the baseline on the same deals, played
with the real openai client against the scripted local server (tests/fake_openai.py)."""

from __future__ import annotations

import json
import re

import pytest

pytest.importorskip("openai")

from cardzoo.evaluation.cli import main  # noqa: E402
from cardzoo.evaluation.matches.runner import Matchup, run  # noqa: E402
from tests.fake_openai import FakeOpenAI  # noqa: E402

SETTINGS = {"rope_team_v0": {"level": "normal"}, "rook_v0": {"rounds": 1}, "summit_rush_v0": {"level": "normal"}}


def sloppy(messages):
    """Nonsense first, then the first listed legal move: every decision takes two replies."""
    if messages[-1]["content"].startswith("That is not a legal move"):
        state = messages[1]["content"]
        return re.search(r"Legal moves: 1\) (.+?)(?:  \d+\)|$)", state, re.MULTILINE).group(1)
    return "let me think about it"


def test_the_table_pairs_the_model_with_the_baseline_on_the_same_deals(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-table-secret")
    with FakeOpenAI([sloppy]).running() as fake:
        monkeypatch.setenv("CARDZOO_LLM_BASE_URL", fake.base_url)
        main(["evaluate", "--agents", "llm:sloppy", "--games", "2", "--out", str(tmp_path)])
    printed = capsys.readouterr().out
    data = json.loads((tmp_path / "llm_table.json").read_text())
    assert data["command"] == "cardzoo evaluate --agents llm:sloppy --games 2"
    rows = {r["game"]: r for r in data["rows"]}
    assert set(rows) == set(SETTINGS)
    lines = [json.loads(line) for line in (tmp_path / "decisions.jsonl").read_text().splitlines()]
    for game, r in rows.items():
        assert r["options"] == SETTINGS[game]
        seats = ["llm:sloppy", "heuristic"] if game == "rook_v0" else ["llm:sloppy", "llm:sloppy"]
        assert r["seats"] == seats
        # every decision: one refused reply, then a legal one
        assert r["invalid_rate"] == 0.5 and r["first_legal_rate"] == 0 and r["default_rate"] == 0
        assert r["no_reply_rate"] == 0
        mine = [line for line in lines if line["game"] == game]
        assert len(mine) == 2 * seats.count("llm:sloppy")
        tokens = sum(a["prompt_tokens"] + a["completion_tokens"] for line in mine for d in line["decisions"]
                     for a in d["attempts"])
        assert r["tokens_per_game"] == tokens / 2 and r["counts"]["decisions"] == sum(
            line["summary"]["decisions"] for line in mine)
        # the baseline row is the baseline's own games on deals 0 and 1
        baseline = run(Matchup.of(game, r["baseline_seats"], **SETTINGS[game]), 2, workers=1, progress=False)
        assert r["baseline_seats"] == ["heuristic", "heuristic"] if game == "rook_v0" else ["simple", "simple"]
        wins = sum(b.get("winner") == "player_0" if game == "rook_v0" else b["outcome"] == "win" for b in baseline)
        assert r["baseline_wins"] == wins
        assert r["wins"] == sum(line["won"] for line in mine if line["seat"] == "player_0")
        assert r["game"] in printed
    assert "sk-table-secret" not in (tmp_path / "decisions.jsonl").read_text() + json.dumps(data)
    assert (tmp_path / "llm_table.md").read_text().count("\n| ") == 4  # header + 3 rows


@pytest.mark.parametrize(("argv", "problem"), [
    (["--agents", "llm:m", "--workers", "2"], "it takes no --workers"),
    (["--agents", "llm:m", "--full"], "it takes no --full"),
    (["--agents", "llm:m?temperature=9"], "temperature='9'"),
    (["--agents", "llm:m", "--only", "chess"], "unknown game 'chess'"),
    (["--records", "x.jsonl", "--agents", "llm:m"], "it takes no --agents"),
])
def test_bad_table_requests_are_refused(argv, problem, capsys, tmp_path):
    with pytest.raises(SystemExit):
        main(["evaluate", *argv, "--out", str(tmp_path / "out")] if "--records" not in argv else ["evaluate", *argv])
    assert problem in capsys.readouterr().err
