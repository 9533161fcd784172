"""The documentation site: every tutorial's code runs as written, and the site builds with `mkdocs build --strict`
(a broken link, a missing page or a docstring mkdocstrings cannot read fails)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# The library page's snippets need each library's extra and marks: tests/test_readme_libraries.py runs them.
TUTORIALS = sorted(p for p in (ROOT / "docs" / "tutorials").glob("*.md") if p.name != "train-with-your-library.md")


@pytest.mark.parametrize("page", TUTORIALS, ids=[p.stem for p in TUTORIALS])
def test_tutorial_code_runs_as_written(page, capsys):
    blocks = re.findall(r"```python\n(.*?)```", page.read_text(), re.S)
    assert blocks, f"{page.name} has no code"
    namespace: dict = {}
    for i, code in enumerate(blocks):  # one session, as a reader would type them
        exec(compile(code, f"{page.name}, block {i + 1}", "exec"), namespace)
    assert capsys.readouterr().out  # each tutorial shows its reader something


def test_the_site_builds_strictly(tmp_path):
    env = {**os.environ, "DISABLE_MKDOCS_2_WARNING": "true", "NO_MKDOCS_2_WARNING": "1"}  # a plugin's banner
    result = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
                            cwd=ROOT, capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    for page in ("games/rope_team", "games/summit_rush", "games/rook", "report", "reference/envs",
                 "tutorials/train-with-your-library", "play", "reference/play"):
        assert (tmp_path / page / "index.html").is_file(), page
    rope = (tmp_path / "games" / "rope_team" / "index.html").read_text()
    assert "Observation space" in rope and "Rulings" in rope and "rope_team.png" in rope
    assert "IllegalActionError" in (tmp_path / "reference" / "envs" / "index.html").read_text()
    play = (tmp_path / "play" / "index.html").read_text()
    assert "cardzoo serve" in play and "play_rook.png" in play and (tmp_path / "images" / "play_rook.png").is_file()
    speed = (tmp_path / "speed" / "index.html").read_text()  # a result chart, copied from evaluation/results/
    assert "engine_scaling.png" in speed and (tmp_path / "results" / "batched" / "engine_scaling.png").is_file()
