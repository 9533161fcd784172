"""The evaluation cache: chunks are written atomically, checked on reading, and a bad one is replayed."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings

import numpy as np
import pytest

from cardzoo.evaluation.matches import runner
from cardzoo.evaluation.matches.runner import CacheWarning, Matchup, read_chunk, run, write_chunk

MATCHUP = Matchup.of("rope_team_v0", ["random"], level="easy")


def _plain(records):
    return json.loads(json.dumps(records))


def _damage(path, how):
    data = json.loads(path.read_text())
    if how == "truncated":
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    elif how == "empty":
        path.write_bytes(b"")
    elif how == "garbage":
        path.write_bytes(np.random.default_rng(0).bytes(600))
    elif how == "old format":  # a bare list of records, as cardzoo wrote before chunks had a checksum
        path.write_text(json.dumps(data["records"]))
    elif how == "wrong count":  # a consistent chunk (its own checksum right) that lacks a game
        data["records"].pop()
        data["sha256"] = runner._checksum(data["records"])
        path.write_text(json.dumps(data))
    elif how == "other seeds":  # another chunk's (valid) file under this chunk's name
        path.write_text((path.parent / "50-74.json").read_text())
    elif how == "edited":
        record = data["records"][3]
        record["outcome"] = "win" if record["outcome"] != "win" else "fall"
        path.write_text(json.dumps(data))


@pytest.mark.parametrize("how, problem", [
    ("truncated", "not valid JSON"),
    ("empty", "empty file"),
    ("garbage", "not valid JSON"),
    ("old format", "older cardzoo"),
    ("wrong count", "holds 24 games (says 25), expected 25"),
    ("other seeds", "holds seeds [50, 74], expected [25, 49]"),
    ("edited", "do not match their checksum"),
])
def test_a_bad_chunk_is_named_discarded_and_played_again(tmp_path, how, problem):
    first = _plain(run(MATCHUP, 80, workers=1, cache_dir=tmp_path, chunk=25, progress=False))
    path = tmp_path / MATCHUP.key / "25-49.json"
    _damage(path, how)
    with pytest.warns(CacheWarning) as caught:
        again = run(MATCHUP, 80, workers=1, cache_dir=tmp_path, chunk=25, progress=False)
    assert len(caught) == 1
    message = str(caught[0].message)
    assert str(path) in message and problem in message and "played again" in message
    assert _plain(again) == first
    with warnings.catch_warnings():  # the replayed chunk was written back whole
        warnings.simplefilter("error")
        assert _plain(run(MATCHUP, 80, workers=1, cache_dir=tmp_path, chunk=25, progress=False)) == first


def test_a_good_cache_is_read_not_replayed(tmp_path, monkeypatch):
    first = run(MATCHUP, 30, workers=1, cache_dir=tmp_path, chunk=25, progress=False)
    monkeypatch.setattr(runner, "_play_chunk", lambda *a: pytest.fail("a cached chunk was played again"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _plain(run(MATCHUP, 30, workers=1, cache_dir=tmp_path, chunk=25, progress=False)) == _plain(first)
    assert sorted(p.name for p in (tmp_path / MATCHUP.key).iterdir()) == ["0-24.json", "25-29.json"]


WRITER = """
import sys, time
from pathlib import Path
from cardzoo.evaluation.matches.runner import write_chunk
path, seeds = Path(sys.argv[1]), list(range(500))
records = [{"seed": s, "outcome": "win", "notes": "x" * 200} for s in seeds]
end = time.time() + float(sys.argv[2])
while time.time() < end:
    write_chunk(path, seeds, records)
print("done", flush=True)
"""


def test_a_reader_never_sees_half_a_chunk(tmp_path):
    """Another run reading the cache while a chunk is (re)written sees the whole old or whole new file."""
    path = tmp_path / "0-499.json"
    seeds = list(range(500))
    write_chunk(path, seeds, [{"seed": s, "outcome": "win", "notes": "x" * 200} for s in seeds])
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(path), "2"], stdout=subprocess.PIPE, text=True)
    reads = 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        while writer.poll() is None:
            assert read_chunk(path, seeds) is not None
            reads += 1
    assert writer.stdout.read() == "done\n" and writer.returncode == 0 and reads > 10
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no temporary file left behind


def test_two_runs_started_together_on_one_cache_agree(tmp_path):
    cache = tmp_path / "cache"
    command = [sys.executable, "-m", "cardzoo.evaluation.cli", "evaluate", "--games", "12", "--only", "rope_team",
               "--workers", "1", "--cache", str(cache)]
    runs = [subprocess.Popen([*command, "--out", str(tmp_path / name)], stderr=subprocess.PIPE, text=True)
            for name in ("a", "b")]
    errors = [p.communicate(timeout=300)[1] for p in runs]
    assert [p.returncode for p in runs] == [0, 0], errors
    assert not any("CacheWarning" in e or "Traceback" in e for e in errors), errors
    rows = [json.loads((tmp_path / name / "results.json").read_text())["rows"] for name in ("a", "b")]
    assert rows[0] == rows[1] and rows[0]
    assert not [p for p in cache.rglob("*") if p.is_file() and not p.name.endswith(".json")]
    subprocess.run([*command, "--out", str(tmp_path / "c")], check=True, capture_output=True)
    assert json.loads((tmp_path / "c" / "results.json").read_text())["rows"] == rows[0]
