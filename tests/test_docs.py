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


def _gen_pages():
    import importlib.util

    loader = importlib.util.spec_from_file_location("gen_pages", ROOT / "docs" / "gen_pages.py")
    module = importlib.util.module_from_spec(loader)
    loader.loader.exec_module(module)
    return module


@pytest.mark.parametrize("game", ["rope_team", "summit_rush", "rook"])
def test_each_game_page_has_a_summary_table_and_a_usage_loop_that_runs(game):
    from cardzoo.envs.registry import spec

    pages = _gen_pages()
    table = pages.summary(game)
    env = spec(game).make()
    first = env.possible_agents[0]
    assert f"| Action space | `{env.action_space(first)}` |" in table
    assert f"observation `{env.observation_space(first)['observation'].shape}`" in table
    assert f"| Number of agents | {len(env.possible_agents)} |" in table
    for option in spec(game).options:
        assert f"`{option}`" in table
    namespace: dict = {}
    exec(pages.usage(game), namespace)  # the page's loop, as written: a whole game of random legal moves
    played = namespace["env"]
    assert not played.agents  # the game ran to its end


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
    assert "Number of agents" in rope and "agent_iter" in rope  # the summary table and the usage loop
    assert "IllegalActionError" in (tmp_path / "reference" / "envs" / "index.html").read_text()
    play = (tmp_path / "play" / "index.html").read_text()
    assert "cardzoo serve" in play and "play_rook.png" in play and (tmp_path / "images" / "play_rook.png").is_file()
    speed = (tmp_path / "speed" / "index.html").read_text()  # a result chart, copied from evaluation/results/
    assert "engine_scaling.png" in speed and (tmp_path / "results" / "batched" / "engine_scaling.png").is_file()
