"""The command line misused: every bad invocation ends with a non-zero status and one line that names the problem,
before any game is played, and never a traceback. Each case runs ``python -m cardzoo.evaluation.cli`` as a user
would (a real process, so what reaches stderr is what the user sees)."""

from __future__ import annotations

import functools
import json
import signal
import subprocess
import sys
from dataclasses import fields

import pytest

from cardzoo.agents.learned import shipped_policy
from cardzoo.evaluation import report
from cardzoo.evaluation.cli import main
from cardzoo.training.train import TrainConfig

CLI = [sys.executable, "-m", "cardzoo.evaluation.cli"]
GAMES = "games: rook, rope_team, summit_rush"
POLICY = str(shipped_policy("summit_rush_normal_v2"))

# argv -> what the message must say; FILE, MISSING, DIR, EMPTY, GARBAGE, LIST, NO_SEED stand for the paths of `paths`
MISUSES = [
    ([], "the following arguments are required: command"),
    (["fly"], "invalid choice: 'fly'"),
    # evaluate
    (["evaluate", "--games", "0"], "argument --games: expected a whole number >= 1, got '0'"),
    (["evaluate", "--games", "-5"], "argument --games: expected a whole number >= 1, got '-5'"),
    (["evaluate", "--games", "many"], "argument --games: expected a whole number >= 1, got 'many'"),
    (["evaluate", "--workers", "-1"], "argument --workers: expected a whole number >= 1, got '-1'"),
    (["evaluate", "--workers", "0"], "argument --workers: expected a whole number >= 1, got '0'"),
    (["evaluate", "--full", "--games", "50"], "argument --games: not allowed with argument --full"),
    (["evaluate", "--only", "poker", "--out", "DIR/report"], "no section for ['poker']"),
    (["evaluate", "--out", "FILE/report"], "cannot write the report in FILE/report: Not a directory"),
    (["evaluate", "--out", "FILE"], "cannot write the report in FILE: it is a file, not a folder"),
    (["evaluate", "--out", "DIR/report", "--cache", "FILE"], "cannot write the cache in FILE: it is a file"),
    (["evaluate", "--records", "MISSING"], "RecordError: games file 'MISSING' does not exist"),
    (["evaluate", "--records", "EMPTY", "--games", "5"], "argument --games: not allowed with argument --records"),
    (["evaluate", "--records", "EMPTY", "--out", "DIR", "--only", "rook"], "it takes no --out, --only"),
    (["evaluate", "--records", "LIST"], "RecordError: games file 'LIST' line 1 is not a played game"),
    # play
    (["play", "poker"], f"argument game: unknown game 'poker'; {GAMES}"),
    (["play", "rope_team", "--delay", "-1"], "argument --delay: expected a number >= 0, got '-1'"),
    (["play", "rope_team", "--delay", "nan"], "argument --delay: expected a number >= 0, got 'nan'"),
    (["play", "rope_team", "--seed", "-1"], "argument --seed: expected a whole number >= 0, got '-1'"),
    (["play", "rope_team", "--seed", "1.5"], "argument --seed: expected a whole number >= 0, got '1.5'"),
    (["play", "rope_team", "-o", "level"], "an option is -o name=value, got 'level'"),
    (["play", "rope_team", "-o", "lvl=hard"], "OptionError: unknown option 'lvl' (did you mean 'level'?)"),
    (["play", "rope_team", "-o", "level=nightmare"], "OptionError: option level='nightmare' is not one of"),
    (["play", "rope_team", "-o", "render_mode=human"], "play shows the table as text itself; drop -o render_mode"),
    (["play", "rope_team", "--agents", "simple", "simple", "random"], "3 agents for the 2 seats of rope_team_v0"),
    (["play", "rope_team", "--agents", "nobody"], "OptionError: no agent 'nobody' for rope_team_v0"),
    (["play", "rope_team", "--save", "FILE/game.json"], "cannot write the game in FILE: it is a file, not a folder"),
    (["play", "rope_team", "--save", "DIR"], "cannot write the game to DIR: it is a folder"),
    (["play", "rope_team", "--agents", "human", "-o", "illegal_action=penalize"], "a person's game is strict"),
    (["play", "rope_team", "--agents", "human", "learned", "--delay", "1"], "--delay paces agents' games"),
    (["play", "rope_team", "--data", "DIR"], "--data collects games with a person at the table"),
    (["play", "rope_team", "--agents", "human", "--data", "FILE"], "cannot write played games in FILE: it is a file"),
    (["play", "rope_team", "--agents", "human", "-o", "level=nightmare"], "OptionError: option level='nightmare'"),
    (["play", "rope_team", "--agents", "human", "learned", "random"], "3 agents for the 2 seats of rope_team_v0"),
    (["play", "summit_rush", "--agents", "human", POLICY, "-o", "players=3"],  # a policy file has no fallback
     f"OptionError: the agent '{POLICY}' cannot play summit_rush_v0 with options {{'players': 3}}: no policy for"),
    # serve
    (["serve", "--port", "0"], "argument --port: expected a whole number >= 1, got '0'"),
    (["serve", "--port", "70000"], "argument --port: expected a port 1..65535, got '70000'"),
    (["serve", "--port", "http"], "argument --port: expected a whole number >= 1, got 'http'"),
    (["serve", "--seed", "-1"], "argument --seed: expected a whole number >= 0, got '-1'"),
    (["serve", "--data", "FILE"], "cannot write played games in FILE: it is a file, not a folder"),
    (["serve", "--host", "256.1.1.1", "--data", "DIR"], "cannot listen on 256.1.1.1:8000"),
    # replay (the messages are the record loader's RecordError)
    (["replay", "LIST", "--line", "1"], "--line picks a game of a games file (JSON lines, see cardzoo serve)"),
    (["replay", "MISSING", "--line", "0"], "argument --line: expected a whole number >= 1, got '0'"),
    (["replay", "MISSING"], "RecordError: record file 'MISSING' does not exist"),
    (["replay", "DIR"], "RecordError: record file 'DIR' cannot be read: [Errno 21] Is a directory"),
    (["replay", "EMPTY"], "RecordError: record file 'EMPTY' is not JSON: Expecting value"),
    (["replay", "GARBAGE"], "RecordError: record file 'GARBAGE' cannot be read: 'utf-8' codec can't decode"),
    (["replay", "LIST"], "RecordError: record file 'LIST' must be a JSON object, got list"),
    (["replay", "NO_SEED"], "RecordError: record file 'NO_SEED': missing seed, actions"),
    # race
    (["race", "--length", "0"], "argument --length: expected a whole number >= 1, got '0'"),
    (["race", "--series", "two"], "argument --series: expected a whole number >= 1, got 'two'"),
    (["race", "--first-deal", "-1"], "argument --first-deal: expected a whole number >= 0, got '-1'"),
    (["race", "--agents", "nobody"], "OptionError: no agent 'nobody' for summit_rush_v0"),
    (["race", "--agents", "simple", "simple", "simple"], "3 agents for the 2 seats of summit_rush_v0"),
    (["race", "-o", "level=nightmare"], "OptionError: option level='nightmare' is not one of"),
    (["race", "-o", "render_mode=ansi"], "race plays its games unseen; drop -o render_mode"),
    # bench
    (["bench", "--seconds", "-1"], "argument --seconds: expected a number > 0, got '-1'"),
    (["bench", "--seconds", "0"], "argument --seconds: expected a number > 0, got '0'"),
    (["bench", "--seconds", "inf"], "argument --seconds: expected a number > 0, got 'inf'"),
    (["bench", "--games", "poker"], f"argument --games: unknown game 'poker'; {GAMES}"),
    (["bench", "--out", "FILE/bench.json"], "cannot write the figures in FILE: it is a file, not a folder"),
    # train
    (["train"], "the following arguments are required: game"),
    (["train", "poker"], "argument game: invalid choice: 'poker'"),
    (["train", "rope_team", "--steps", "0"], "argument --steps: expected a whole number >= 1, got '0'"),
    (["train", "rope_team", "--steps", "-2048"], "argument --steps: expected a whole number >= 1, got '-2048'"),
    (["train", "rope_team", "--n-envs", "0"], "argument --n-envs: expected a whole number >= 1, got '0'"),
    (["train", "rope_team", "--hidden", "64", "0"], "argument --hidden: expected a whole number >= 1, got '0'"),
    (["train", "rope_team", "--learning-rate", "-0.001"], "argument --learning-rate: expected a number >= 0"),
    (["train", "rope_team", "--features", "nope"], "argument --features: invalid choice: 'nope'"),
    (["train", "summit_rush", "--levels", "normal", "hard"], "train one policy per level"),
    (["train", "rope_team", "--no-such-flag"], "unrecognized arguments: --no-such-flag"),
]


@pytest.fixture
def paths(tmp_path):
    files = {"FILE": tmp_path / "a_file", "MISSING": tmp_path / "missing.json", "DIR": tmp_path / "a_folder",
             "EMPTY": tmp_path / "empty.json", "GARBAGE": tmp_path / "garbage.json", "LIST": tmp_path / "list.json",
             "NO_SEED": tmp_path / "no_seed.json"}
    files["FILE"].write_text("not a folder")
    files["DIR"].mkdir()
    files["EMPTY"].write_bytes(b"")
    files["GARBAGE"].write_bytes(bytes(range(255, 0, -1)))
    files["LIST"].write_text(json.dumps([1, 2]))
    files["NO_SEED"].write_text(json.dumps({"env": "rope_team_v0", "options": {}}))
    return {k: str(v) for k, v in files.items()}


def _fill(text: str, paths: dict[str, str]) -> str:
    for key, path in paths.items():
        text = text.replace(key, path)
    return text


def assert_one_line_error(result: subprocess.CompletedProcess, problem: str) -> None:
    assert result.returncode != 0, result
    assert "Traceback" not in result.stderr, result.stderr
    # argparse prints its usage (lines starting "usage:" or indented) above its one "error:" line
    lines = [line for line in result.stderr.splitlines() if line.strip() and not line.startswith(("usage:", " "))]
    assert len(lines) == 1 and problem in lines[0], result.stderr
    assert result.stdout == "", "output before the error: work was done before the check"


@pytest.mark.parametrize("argv, problem", MISUSES, ids=[" ".join(a) or "(none)" for a, _ in MISUSES])
def test_misuse_is_one_line_and_no_traceback(argv, problem, paths, tmp_path):
    result = subprocess.run([*CLI, *(_fill(a, paths) for a in argv)], capture_output=True, text=True, timeout=120,
                            cwd=tmp_path)
    assert_one_line_error(result, _fill(problem, paths))


def test_a_bad_report_folder_fails_before_any_game(tmp_path, monkeypatch, capsys):
    (tmp_path / "file").write_text("")
    monkeypatch.setattr(report, "main", lambda settings: pytest.fail("games were played before the check"))
    with pytest.raises(SystemExit) as exit_info:
        main(["evaluate", "--games", "10", "--out", str(tmp_path / "file" / "report")])
    assert exit_info.value.code == 2 and "cannot write the report" in capsys.readouterr().err


def test_a_closed_pipe_ends_quietly():
    """``cardzoo play rope_team | head -1``: the reader leaves after one line; no traceback, no message."""
    process = subprocess.Popen([*CLI, "play", "rope_team", "--seed", "0", "--delay", "0.01"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    first = process.stdout.readline()
    process.stdout.close()
    error = process.stderr.read()
    assert process.wait(timeout=60) == 1 and error == b"" and first.startswith(b"Rope Team")


def test_stdout_to_a_full_disk_is_one_line():
    with open("/dev/full", "w") as full:
        result = subprocess.run([*CLI, "play", "rope_team", "--seed", "0"], stdout=full, stderr=subprocess.PIPE,
                                text=True, timeout=60)
    assert result.returncode == 1 and result.stderr == "cardzoo play: [Errno 28] No space left on device\n"


def test_ctrl_c_is_one_line():
    # A suite started in the background (``pytest &``) ignores SIGINT and its children inherit that: Ctrl-C is what
    # is tested, so the child starts with the default.
    process = subprocess.Popen([*CLI, "play", "rope_team", "--seed", "0", "--delay", "1"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True,
                               preexec_fn=functools.partial(signal.signal, signal.SIGINT, signal.SIG_DFL))
    process.stdout.readline()
    process.send_signal(signal.SIGINT)
    _, error = process.communicate(timeout=60)
    assert process.returncode == 130 and error == "cardzoo play: interrupted\n"


def test_serve_on_a_busy_port_is_one_line(tmp_path):
    import socket

    with socket.create_server(("127.0.0.1", 0)) as busy:
        port = busy.getsockname()[1]
        result = subprocess.run([*CLI, "serve", "--port", str(port), "--data", str(tmp_path)], capture_output=True,
                                text=True, timeout=60)
    assert_one_line_error(result, f"cannot listen on 127.0.0.1:{port}: Address already in use")


def test_serve_without_the_web_extra_prints_the_install_hint(tmp_path):
    code = ("import sys; sys.modules['uvicorn'] = None\n"  # as if the web extra were not installed
            "from cardzoo.evaluation.cli import main\n"
            f"main(['serve', '--data', {str(tmp_path / 'data')!r}])")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert_one_line_error(result, "cardzoo serve: needs the web extra (fastapi, uvicorn; uvicorn is missing)")
    assert not (tmp_path / "data").exists()


def test_train_without_the_training_extra_prints_the_install_hint(tmp_path):
    code = ("import sys; sys.modules['torch'] = None\n"  # as if torch were not installed
            "from cardzoo.evaluation.cli import main\n"
            f"main(['train', 'rope_team', '--out', {str(tmp_path / 'run')!r}])")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert_one_line_error(result, "cardzoo train: needs the training extra")
    assert "torch is missing" in result.stderr and "pip install -e '.[train]'" in result.stderr
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("argv", [["train", "--help"], ["train", "rope_team", "--help"]])
def test_train_help_lists_every_option_with_its_help_and_default(argv, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 0
    text = " ".join(capsys.readouterr().out.split())  # argparse wraps lines
    for f in fields(TrainConfig):
        if f.name != "game":
            assert f"--{f.name.replace('_', '-')} " in text, f.name
        assert f.metadata["help"] in text, f.name
    for flag, shown in [("steps", "1000000"), ("hidden", "128 128"), ("learning-rate", "0.0001"),
                        ("features", "none"), ("threads", "2")]:
        assert f"(default: {shown})" in text, flag
    assert text.count("(default: ") == len(fields(TrainConfig)) - 1  # every option but the positional game


def test_the_smallest_report_runs(tmp_path):
    """``--games 1``, the least the command accepts, makes a whole report (some rates have no games at all)."""
    result = subprocess.run([*CLI, "evaluate", "--games", "1", "--workers", "1", "--out", str(tmp_path)],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert {p.name for p in tmp_path.glob("*.png")} == {"rope_team.png", "summit_rush.png", "summit_rush_talk.png",
                                                        "rook.png"}
