"""Games people played, saved as JSON lines: ``cardzoo replay FILE [--line N]`` replays them (and refuses one that
does not end as saved), ``cardzoo evaluate --records FILE`` gives the people's win rates with Wilson intervals."""

from __future__ import annotations

import json

import numpy as np
import pytest

from cardzoo.envs.common.errors import RecordError
from cardzoo.evaluation.cli import main
from cardzoo.evaluation.stats import wilson
from cardzoo.play import records
from cardzoo.play.table import Table


def played(game: str, options: dict, players: list[str], seed: int, moves: int | None = None) -> Table:
    """A game with a person who plays seeded random legal moves (all of them, or the first ``moves``)."""
    table = Table.open(game, options, players, seed)
    seat = table.humans[0]
    rng = np.random.default_rng(seed)
    made = 0
    while not table.over and (moves is None or made < moves):
        if game != "summit_rush_v0":
            table.advance()
            if table.over:
                break
        legal = table.views[seat].legal
        action = legal[rng.integers(len(legal))].action
        if game == "summit_rush_v0":
            table.tick({seat: action})
        else:
            table.play(seat, action)
        made += 1
    return table


@pytest.fixture(scope="module")
def games_file(tmp_path_factory):
    """Rope Team with learned and simple partners, a Rook round, a Summit Rush game and one game left early."""
    folder = tmp_path_factory.mktemp("data")
    tables = [played("rope_team_v0", {"level": "easy"}, ["human", "learned"], seed) for seed in range(6)]
    tables += [played("rope_team_v0", {"level": "easy"}, ["simple", "human"], seed) for seed in range(3)]
    tables += [played("rook_v0", {"rounds": 1}, ["human", "heuristic"], 1),
               played("summit_rush_v0", {"level": "hard"}, ["learned", "human"], 2),
               played("rope_team_v0", {"level": "easy"}, ["human", "learned"], 9, moves=3)]
    for table in tables:
        records.append(folder, table.entry("terminal"))
    return folder / records.GAMES_FILE, tables


def test_replay_checks_every_game_of_a_games_file(games_file, capsys):
    path, tables = games_file
    main(["replay", str(path)])
    out = capsys.readouterr().out.splitlines()
    assert len(out) == len(tables) and all(line.endswith("Replayed identically.") for line in out)
    assert out[0].startswith("line 1: rope_team_v0 (level=easy), human + learned (")
    assert out[-1].endswith("moves: unfinished Replayed identically.")
    assert out[9].startswith("line 10: rook_v0 (rounds=1), human + heuristic") and tables[9].outcome(0) in out[9]


def test_replay_one_line_shows_its_final_table(games_file, capsys):
    path, tables = games_file
    main(["replay", str(path), "--line", "11"])
    out = capsys.readouterr().out
    assert "Summit Rush - 2 pile(s)" in out and tables[10].outcome(1) in out and "line 11:" in out
    with pytest.raises(SystemExit):
        main(["replay", str(path), "--line", "99"])
    assert "has no game on line 99" in capsys.readouterr().err


def test_a_game_that_does_not_end_as_saved_is_refused(games_file, tmp_path):
    path, _ = games_file
    lines = path.read_text().splitlines()
    entry = json.loads(lines[0])
    entry["info"]["outcome"] = "win" if entry["info"]["outcome"] != "win" else "fall"
    tampered = tmp_path / "games.jsonl"
    tampered.write_text("\n".join([lines[1], json.dumps(entry)]) + "\n")
    with pytest.raises(RecordError, match=r"line 2: the replay ends .* the file says"):
        for n, e in records.read(tampered):
            records.replay_entry(e, f"{tampered} line {n}")
    moved = json.loads(lines[0])
    moved["record"]["actions"][0] = 99
    tampered.write_text(json.dumps(moved) + "\n")
    with pytest.raises(RecordError, match=r"line 1: record: move 0 \(99\) cannot be replayed"):
        records.replay_entry(records.read(tampered)[0][1], f"{tampered} line 1")
    tampered.write_text(lines[0] + "\n{not json\n")
    with pytest.raises(RecordError, match="line 2 is not JSON"):
        records.read(tampered)
    tampered.write_text(lines[0] + '\n{"record": 1}\n')
    with pytest.raises(RecordError, match="line 2 is not a played game"):
        records.read(tampered)


def test_evaluate_records_gives_the_peoples_win_rates_with_wilson_intervals(games_file, capsys):
    path, tables = games_file
    main(["evaluate", "--records", str(path)])
    out = capsys.readouterr().out
    assert f"{len(tables)} games from {path}, each replayed to the ending it saved" in out
    wins = sum(t.info["outcome"] == "win" for t in tables[:6])
    digest = tables[0].entry("x")["seats"]["player_1"]["policy"]
    row = (f"| rope_team_v0 | level=easy | human + learned ({digest}) | 6 | {wins}: {wilson(wins, 6)} | 1 |")
    assert row in out  # the game left early is counted apart, not as a loss
    simple_wins = sum(t.info["outcome"] == "win" for t in tables[6:9])
    assert f"| rope_team_v0 | level=easy | simple + human | 3 | {simple_wins}: {wilson(simple_wins, 3)} | 0 |" in out
    rook = tables[9].entry("x")["results"]["player_0"] == "win"
    assert f"| rook_v0 | rounds=1 | human + heuristic | 1 | {int(rook)}: {wilson(int(rook), 1)} | 0 |" in out


def test_a_rook_tie_is_not_a_win():
    rows = records.rates([{"record": {"env": "rook_v0", "options": {}}, "seats": {"player_0": {"player": "human"},
                          "player_1": {"agent": "random", "policy": ""}}, "finished": True,
                           "results": {"player_0": r}} for r in ("win", "tie", "loss", "win")])
    assert [(r["wins"], r["games"]) for r in rows] == [(2, 4)] and rows[0]["rate"] == wilson(2, 4)
