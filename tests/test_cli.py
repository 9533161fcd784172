"""The ``cardzoo`` command line."""

from __future__ import annotations

import json

import pytest

from cardzoo.evaluation.cli import main


def test_play_saves_a_replayable_game(tmp_path, capsys):
    path = tmp_path / "game.json"
    main(["play", "rope_team", "--seed", "3", "-o", "level=easy", "-o", "open_hands=true", "--save", str(path)])
    out = capsys.readouterr().out
    assert "Rope Team - deal 1/3" in out and "result:" in out
    record = json.loads(path.read_text())
    assert record["env"] == "rope_team_v0" and record["options"]["open_hands"] is True and record["actions"]
    main(["replay", str(path)])
    final = capsys.readouterr().out
    assert "game over:" in final


def test_unknown_option_is_a_clear_error(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["play", "rope_team", "-o", "lvl=hard"])
    assert exit_info.value.code == 2
    assert "did you mean 'level'" in capsys.readouterr().err
