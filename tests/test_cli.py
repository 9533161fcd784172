"""The ``cardzoo`` command line."""

from __future__ import annotations

import json
import re

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


def test_race_the_record_adds_up_the_scores_of_the_games_won(capsys):
    from cardzoo.evaluation.matches.race import race
    from cardzoo.evaluation.matches.runner import Matchup, run

    main(["race", "--agents", "simple_talk", "--length", "4", "--series", "3", "--first-deal", "20", "-o",
          "level=hard", "--workers", "1"])
    out = capsys.readouterr().out.splitlines()
    records = run(Matchup.of("summit_rush_v0", ["simple_talk"], level="hard"), 12, base_seed=20, workers=1,
                  progress=False)
    totals = [sum(r["score"] for r in records[k : k + 4] if r["outcome"] == "win") for k in (0, 4, 8)]
    assert any(totals) and out[0].endswith("3 series of 4 games (deals 20..31)")
    assert out[1] == "series totals: " + " ".join(map(str, totals))
    best = totals.index(max(totals))
    assert out[2].endswith(f"record {max(totals)} (series {best}: deals {20 + 4 * best}..{23 + 4 * best})")
    assert str(race(records, 4)) == out[2]


RAW_REST = re.compile(r"``|:[a-z]+(:[a-z]+)?:`")  # ``literal``, :class:`x`, :py:func:`x`


@pytest.mark.parametrize("backend", ["sb3", pytest.param("rllib", marks=pytest.mark.rllib), "batched", "distil"])
def test_help_is_plain_text(backend):
    """``cardzoo --help`` and every subcommand's (``train`` with each backend's options) print no reST markup, though
    the docstrings and option help they are made of are written for the docs site."""
    import argparse

    from cardzoo.evaluation.cli import build_parser, plain

    parser = build_parser(backend)
    subs = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert set(subs.choices) == {"play", "serve", "replay", "evaluate", "train", "race", "bench", "benchmark"}
    for name, shown in [("cardzoo", parser.format_help())] + [(n, p.format_help()) for n, p in subs.choices.items()]:
        assert shown.strip() and not RAW_REST.search(shown), f"{name} --help: {RAW_REST.search(shown)[0]!r}"
    assert "The cardzoo command: play, serve, replay" in " ".join(parser.format_help().split())
    assert plain("``cardzoo train``, :class:`~cardzoo.envs.GameSpec`, :py:func:`f`, `x`") == (
        "cardzoo train, cardzoo.envs.GameSpec, f, `x`")
