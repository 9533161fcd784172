"""Games people played, saved as JSON lines: ``cardzoo replay FILE [--line N]`` replays them (and refuses one that
does not end as saved), ``cardzoo evaluate --records FILE`` gives the people's win rates with Wilson intervals.
Saving is locked and whole (two processes on one folder); reading treats the file as untrusted: forged results,
repeated games and malformed lines of every kind are refused or flagged by line, never a traceback."""

from __future__ import annotations

import contextlib
import io
import json
import multiprocessing
import os
import re
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cardzoo.envs.common.errors import IllegalActionWarning, RecordError
from cardzoo.envs.common.record import replay
from cardzoo.envs.common.stats import wilson
from cardzoo.evaluation.cli import main
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


# ---------------------------------------------------------------------------- writing: locked, whole, never silent
def _writer(folder: str, writer: int, count: int, start) -> None:
    start.wait()
    for i in range(count):
        records.append(folder, {"writer": writer, "i": i, "pad": f"{writer}" * 3000})


def test_two_processes_appending_to_one_folder_save_every_game_whole_once(tmp_path):
    ctx = multiprocessing.get_context("fork")
    start, count = ctx.Event(), 300
    procs = [ctx.Process(target=_writer, args=(str(tmp_path), w, count, start)) for w in (1, 2)]
    for p in procs:
        p.start()
    start.set()  # both write at once
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    lines = (tmp_path / records.GAMES_FILE).read_bytes().split(b"\n")
    assert lines[-1] == b"" and len(lines) == 2 * count + 1
    seen = [(e["writer"], e["i"]) for e in map(json.loads, lines[:-1])]  # every line parses: none interleaved
    assert sorted(seen) == [(w, i) for w in (1, 2) for i in range(count)]
    assert seen != sorted(seen)  # the two really wrote at the same time


def test_a_failed_write_is_a_save_error_naming_the_file_and_leaves_no_half_line(tmp_path, monkeypatch):
    full = tmp_path / "full"
    full.mkdir()
    (full / records.GAMES_FILE).symlink_to("/dev/full")
    with pytest.raises(records.SaveError, match=f"{full / records.GAMES_FILE}: No space left on device"):
        records.append(full, {"game": 1})
    assert isinstance(records.SaveError("x"), OSError)  # handlers of failed writes catch it too
    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("")
    with pytest.raises(records.SaveError, match=f"cannot save the game to {not_a_folder / records.GAMES_FILE}"):
        records.append(not_a_folder, {"game": 1})

    path = records.append(tmp_path, {"game": 1})
    before = path.read_bytes()
    real_write = os.write
    monkeypatch.setattr(records.os, "write", lambda fd, data: real_write(fd, data[: len(data) // 2]))
    with pytest.raises(records.SaveError, match=r"only \d+ of \d+ bytes were written"):
        records.append(tmp_path, {"game": 2, "pad": "x" * 100})
    monkeypatch.undo()
    assert path.read_bytes() == before  # cut back: the next game starts a whole line
    with pytest.raises(records.SaveError, match="cannot be written as JSON"):
        records.append(tmp_path, {"game": float("nan")})

    path.write_bytes(before + b'{"game": 2, "cut sh')  # a line a crash cut short
    records.append(tmp_path, {"game": 3})
    assert path.read_bytes().split(b"\n")[1:] == [b'{"game": 2, "cut sh', b'{"game": 3}', b""]


def test_the_fallback_file_is_private_to_the_user_and_refuses_a_planted_link(tmp_path, monkeypatch):
    monkeypatch.setattr(records.tempfile, "tempdir", str(tmp_path))
    path = records.append_fallback({"game": 1})
    records.append_fallback({"game": 2})
    assert path == tmp_path / f"cardzoo-unsaved-{os.getuid()}.jsonl" and path.stat().st_mode & 0o777 == 0o600
    assert [json.loads(line) for line in path.read_text().splitlines()] == [{"game": 1}, {"game": 2}]
    path.unlink()
    path.symlink_to(tmp_path / "elsewhere")  # someone else's link in a shared temporary folder
    with pytest.raises(records.SaveError, match="fallback file .* either"):
        records.append_fallback({"game": 3})
    assert not (tmp_path / "elsewhere").exists()
    path.unlink()
    monkeypatch.setattr(os, "getuid", lambda: 4242)  # a file that another user made first
    records.fallback_path().write_text("")
    with pytest.raises(records.SaveError, match="cardzoo-unsaved-4242.jsonl belongs to another user"):
        records.append_fallback({"game": 3})
    monkeypatch.setattr(records.tempfile, "tempdir", str(tmp_path / "gone"))
    with pytest.raises(records.SaveError, match="gone/cardzoo-unsaved"):
        records.append_fallback({"game": 3})


# ---------------------------------------------------------------------------- reading: forged, repeated, malformed
def lines_of(games_file) -> list[str]:
    return games_file[0].read_text().splitlines()


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(argv)
        except SystemExit as exit:
            code = exit.code
    return code, out.getvalue(), err.getvalue()


def test_a_game_edited_to_say_win_is_refused_by_replay_and_evaluate(games_file, tmp_path):
    lines = lines_of(games_file)
    lost = next(json.loads(line) for line in lines if json.loads(line)["results"] == {"player_0": "loss"})
    forged = dict(lost, results={"player_0": "win"})
    path = tmp_path / "games.jsonl"
    path.write_text(f"{lines[1]}\n{json.dumps(forged)}\n")
    for argv in (["evaluate", "--records", str(path)], ["replay", str(path)]):
        code, _, err = run(argv)
        assert code == 2 and err.count("\n") == 1
        assert f"{str(path)!r} line 2: the people's results are {{\"player_0\": \"win\"}}, the replay gives" in err
    unfinished = json.loads(lines[-1])
    for change in ({"finished": True}, {"results": {"player_0": "win"}}, {"finished": True, "results": {
            "player_0": "win"}}, {"seats": dict(reversed(unfinished["seats"].items()))}):
        path.write_text(json.dumps({**unfinished, **change}) + "\n")
        with pytest.raises(RecordError, match="line 1: the (file says finished|people's results|seats are)"):
            records.load(path)


def test_a_game_saved_twice_is_flagged_and_counted_once(games_file, tmp_path):
    lines = lines_of(games_file)
    path = tmp_path / "games.jsonl"
    copy = json.loads(lines[0])
    copy["saved"] = "2030-01-01T00:00:00"  # a copy need not be byte for byte the same
    path.write_text("\n".join([lines[0], lines[1], json.dumps(copy), lines[0]]) + "\n")
    kept, repeated = records.load(path)
    assert [n for n, _ in kept] == [1, 2] and repeated == [[1, 3, 4]]
    code, out, err = run(["evaluate", "--records", str(path)])
    assert code == 0 and "2 games from" in out
    assert err == f"cardzoo evaluate: warning: {path} lines 1, 3, 4 hold the same game (the same record); it is " \
                  "counted once, as line 1\n"
    assert sum(int(row.split("|")[4]) for row in out.splitlines() if row.startswith("| rope_team_v0")) == 2
    code, out, err = run(["replay", str(path)])
    assert code == 0 and out.splitlines()[2].endswith("Replayed identically. The same game as line 1 (counted once).")
    assert "lines 1, 3, 4 hold the same game" in err


def test_a_twin_game_played_the_same_way_counts_twice(games_file, tmp_path):
    """The same deal played again move for move (a same-deal replay against a deterministic agent) is a second game:
    it has its own game id and start, so it is not a duplicate."""
    lines = lines_of(games_file)
    twin = json.loads(lines[0])
    twin["game"], twin["started"] = "another-game", "2030-01-01T00:00:00"
    path = tmp_path / "games.jsonl"
    path.write_text("\n".join([lines[0], json.dumps(twin)]) + "\n")
    kept, repeated = records.load(path)
    assert [n for n, _ in kept] == [1, 2] and repeated == []


def _entry_with(line: str, path: tuple, value) -> str:
    entry = json.loads(line)
    node = entry
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return json.dumps(entry)


PROBES = {  # the kinds: (what to do to a saved Rope Team or Summit Rush line, what the error must say)
    "seats a list": (lambda rope, _: _entry_with(rope, ("seats",), ["human", "learned"]), "seats must be an object"),
    "an action a string": (lambda rope, _: _entry_with(rope, ("record", "actions", 2), "24"),
                           r"record.actions\[2\] must be an integer, got \"24\""),
    "an action a float": (lambda rope, _: _entry_with(rope, ("record", "actions", 2), 24.0),
                          r"record.actions\[2\] must be an integer, got 24.0"),
    "a parallel action a string": (lambda _, summit: _entry_with(summit, ("record", "actions", 1, "player_0"), "x"),
                                   r"actions\[1\].player_0 must be an integer"),
    "an option a list": (lambda rope, _: _entry_with(rope, ("record", "options", "level"), ["easy"]),
                         "options.level must be a string, number, boolean or null, got list"),
    "an option an object": (lambda rope, _: _entry_with(rope, ("record", "options", "ropes"), {"n": 2}),
                            "options.ropes must be"),
    "reset options a list": (lambda rope, _: _entry_with(rope, ("record", "reset_options"), [1]),
                             "reset_options must be an object"),
    "env a list": (lambda rope, _: _entry_with(rope, ("record", "env"), ["rope_team_v0"]), "unknown env"),
    "seed a string": (lambda rope, _: _entry_with(rope, ("record", "seed"), "0"), "seed must be a non-negative"),
    "finished a string": (lambda rope, _: _entry_with(rope, ("finished",), "yes"), "finished must be true or false"),
    "results a list": (lambda rope, _: _entry_with(rope, ("results",), ["win"]), "results must be null or an object"),
    "a result unknown": (lambda rope, _: _entry_with(rope, ("results", "player_0"), "won"), "results must be null"),
    "info a list": (lambda rope, _: _entry_with(rope, ("info",), [1]), "info must be an object or null"),
    "a seat a string": (lambda rope, _: _entry_with(rope, ("seats", "player_1"), "learned"), "seats.player_1 must be"),
    "deep nesting": (lambda rope, _: rope.replace('"easy"', "[" * 1500 + "]" * 1500, 1),
                     "nested more than 32 levels deep"),
    "shallower nesting": (lambda rope, _: rope.replace('"easy"', "[" * 100 + "]" * 100, 1),
                          "record.options.level.* nested more than 32 levels deep"),
    "a non-UTF-8 byte": (lambda rope, _: rope.replace("terminal", "termin\udcffl").encode(errors="surrogateescape"),
                         r"is not UTF-8 text: byte \d+ is b'\\xff'"),
    "a huge line": (lambda rope, _: _entry_with(rope, ("where",), "x" * 9000), "is longer than 8192 bytes"),
    "a huge integer": (lambda rope, _: rope.replace('"seed": 0', '"seed": ' + "9" * 5000, 1), "is not JSON: Exceeds"),
    "not an object": (lambda rope, _: "[1, 2]", "is not a played game"),
    "a time a number": (lambda rope, _: _entry_with(rope, ("saved",), 20261203), "saved must be a string"),
    "another format": (lambda rope, _: _entry_with(rope, ("cardzoo_game",), 2), "cardzoo_game .* must be 1, got 2"),
}


@pytest.mark.parametrize("probe", PROBES)
def test_a_malformed_line_is_a_record_error_naming_the_file_and_line(games_file, tmp_path, monkeypatch, probe):
    lines = lines_of(games_file)
    make, problem = PROBES[probe]
    bad = make(lines[0], lines[10])
    monkeypatch.setattr(records, "MAX_LINE_BYTES", 8192)  # the huge line, without writing megabytes
    path = tmp_path / "games.jsonl"
    path.write_bytes(lines[1].encode() + b"\n" + (bad if isinstance(bad, bytes) else bad.encode()) + b"\n")
    for argv in (["evaluate", "--records", str(path)], ["replay", str(path)], ["replay", str(path), "--line", "1"]):
        code, out, err = run(argv)
        assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
        assert err.startswith(f"cardzoo {argv[0]}: RecordError: games file {str(path)!r} line 2"), err
        assert re.search(problem, err), err


def test_what_the_game_raises_on_bad_data_is_a_record_error_naming_the_move(games_file, monkeypatch):
    from cardzoo.envs.rope_team.env import raw_env

    record = json.loads(lines_of(games_file)[0])["record"]
    real_step = raw_env.step

    def step(self, action):  # an engine that trips over a value the checks let through
        if len(self._record["actions"]) == 3:
            raise IndexError("index 60 is out of bounds")
        return real_step(self, action)

    monkeypatch.setattr(raw_env, "step", step)
    with pytest.raises(RecordError, match=r"record: move 3 \(\d+\) cannot be replayed: IndexError: index 60"):
        replay(record)


def test_replay_refuses_a_malformed_record_by_its_field_and_replays_the_next(games_file):
    good = json.loads(lines_of(games_file)[0])["record"]
    summit = json.loads(lines_of(games_file)[10])["record"]
    cases = [({**good, "seats": 1, "actions": "12"}, "actions must be a list"),
             ({**good, "actions": [24, "17"]}, r"move 1 \('17'\) cannot be replayed: IllegalActionError: .* integer"),
             ({**good, "actions": [24, True]}, r"move 1 \(True\) cannot be replayed: IllegalActionError"),
             ({**good, "options": {"level": ["easy"]}}, "options.level must be a string, number, boolean or null"),
             ({**good, "options": {1: "easy"}}, "options names must be strings"),
             ({**good, "env": {"x": 1}}, "unknown env"),
             ({**good, "seed": 1.0}, "seed must be a non-negative integer"),
             ({**good, "reset_options": {"deck": [[[0]]]}}, "move|set up"),
             ({**good, "reset_options": {"deck": nested(5000)}}, r"reset_options.deck\[0\]\[0\].* nested more than 32"),
             ({**summit, "actions": [{"player_0": 1, "player_1": [2]}]}, r"actions\[0\].player_1 must be an integer"),
             ({**summit, "actions": [[1, 2]]}, r"actions\[0\]: a parallel record's actions are one"),
             ({**summit, "actions": [{"player_0": 1}]}, r"move 0 .* cannot be replayed")]
    reference = replay(good)
    for record, problem in cases:
        with pytest.raises(RecordError, match=problem):
            replay(record)
        again = replay(good)  # nothing left behind
        assert again.unwrapped.game_record() == reference.unwrapped.game_record()
        assert records.final_info(again) == records.final_info(reference)


def nested(depth: int):
    value = 0
    for _ in range(depth):
        value = [value]
    return value


# ---------------------------------------------------------------------------- property: any mutation of a real entry
scalars = st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats(allow_nan=False) | st.text(max_size=6)
json_values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
    st.text(max_size=4), inner, max_size=3), max_leaves=6)


def paths(value, prefix=()):
    yield prefix
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, child in items:
        yield from paths(child, (*prefix, key))


@st.composite
def mutated(draw, line: str) -> bytes:
    """``line`` (a saved game) with one change: a value replaced or removed, a part nested deep, a result or the
    finished flag changed, or raw bytes changed."""
    entry = json.loads(line)
    kind = draw(st.sampled_from(["set", "delete", "nest", "result", "finished", "bytes"]))
    if kind == "bytes":
        raw = bytearray(line.encode())
        at = draw(st.integers(0, len(raw)))
        new = draw(st.binary(min_size=1, max_size=3))
        cut = draw(st.integers(0, 2))
        raw[at:at + cut] = new
        return bytes(raw)
    if kind == "result":
        seat = draw(st.sampled_from([*entry["seats"], "player_9"]))
        entry["results"] = {**(entry["results"] or {}), seat: draw(st.sampled_from(["win", "loss", "tie", "x"]))}
        return json.dumps(entry).encode()
    if kind == "finished":
        entry["finished"] = draw(st.sampled_from([True, False, None, 1, "true"]))
        return json.dumps(entry).encode()
    path = draw(st.sampled_from(list(paths(entry))[1:]))
    parent = entry
    for key in path[:-1]:
        parent = parent[key]
    if kind == "delete":
        del parent[path[-1]]
        return json.dumps(entry).encode()
    if kind == "set":
        parent[path[-1]] = draw(json_values)
        return json.dumps(entry).encode()
    depth = draw(st.integers(1, 40) | st.integers(900, 5000))  # under and over the bound, and the parser's limit
    inner = json.dumps(parent[path[-1]])
    parent[path[-1]] = "@NEST@"
    return json.dumps(entry).replace('"@NEST@"', "[" * depth + inner + "]" * depth).encode()


def totals(games: list[tuple[int, dict]]) -> tuple[int, int, int]:
    rows = records.rates([e for _, e in games])
    return sum(r["games"] for r in rows), sum(r["wins"] for r in rows), sum(r["unfinished"] for r in rows)


def test_a_mutated_entry_is_counted_identically_or_refused_by_its_line(games_file, tmp_path_factory):
    lines = lines_of(games_file)
    folder = tmp_path_factory.mktemp("mutated")
    honest = {i: totals(records.load(write(folder / "honest.jsonl", [lines[0].encode(), lines[i].encode()]))[0])
              for i in range(1, len(lines))}

    @settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(data=st.data())
    def check(data):
        i = data.draw(st.integers(1, len(lines) - 1))
        path = write(folder / "games.jsonl", [lines[0].encode(), data.draw(mutated(lines[i]))])
        try:
            games, _ = records.load(path)
        except RecordError as err:
            assert re.match(rf"games file {re.escape(repr(str(path)))} line [23]\b", str(err)), err
            return
        assert totals(games) == honest[i]  # a change that replays is one that does not change the count

    check()


def write(path, lines: list[bytes]):
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def test_a_terminal_game_that_cannot_be_saved_says_so_and_goes_to_the_fallback_file(tmp_path, monkeypatch):
    data = tmp_path / "data"
    data.mkdir()
    (data / records.GAMES_FILE).symlink_to("/dev/full")
    monkeypatch.setattr(records.tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr("sys.stdin", io.StringIO("1\n"))  # one move, then the end of input
    code, out, err = run(["play", "rope_team", "--seed", "1", "--agents", "human", "learned", "--data", str(data)])
    fallback = records.fallback_path()
    assert code == 0 and re.search(rf"game saved \(unfinished, after \d+ moves\): {re.escape(str(fallback))} line 1\n",
                                   out)
    assert err == f"this game could not be saved: cannot save the game to {data / records.GAMES_FILE}: No space left " \
                  "on device\n"
    [(_, entry)] = records.read(fallback)
    assert not entry["finished"] and records.replay_entry(entry, "the fallback")
    monkeypatch.setattr(records.tempfile, "tempdir", str(tmp_path / "gone"))
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    code, out, err = run(["play", "rope_team", "--agents", "human", "learned", "--data", str(data)])
    assert code == 1 and err.splitlines()[-1].startswith("cardzoo play: SaveError: cannot save the game to the "
                                                         f"fallback file {tmp_path / 'gone'}")


def test_a_replay_of_a_penalised_illegal_move_is_quiet():
    from cardzoo.envs import rope_team_v0

    env = rope_team_v0.env(illegal_action="penalize")
    env.reset(seed=4)
    illegal = int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"] == 0)[0])
    with pytest.warns(IllegalActionWarning):
        env.step(illegal)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the saved ending, replayed: no warning on stderr beside a line's error
        again = replay(env.unwrapped.game_record())
    assert again.unwrapped.outcome_info == env.unwrapped.outcome_info
