"""A fourth game takes its own folder and one registry entry, nothing else: Ascend (tests/tinygame/, registered by
the tests only) is played through ``cardzoo --help``, ``play`` (agents, and a person in the terminal), ``evaluate``,
``benchmark`` and ``serve`` (a whole game over the API) without a line of any shared file naming it."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import numpy as np
import pytest

from tests.server_probes import free_port

ROOT = Path(__file__).resolve().parents[1]
# Ascend is installed before the command line (and with it everything of cardzoo) is imported, as a game of the
# project's own is imported with the registry.
LAUNCH = (f"import sys; sys.path.insert(0, {str(ROOT)!r}); import tests.tinygame as t; t.install(); "
          "from cardzoo.evaluation.cli import main; sys.exit(main(sys.argv[1:]))")


def cardzoo(*args: str, cwd: Path, stdin: str | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-c", LAUNCH, *args], cwd=cwd, input=stdin, capture_output=True,
                          text=True, timeout=timeout)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def test_no_shared_file_names_the_fourth_game():
    named = [p.relative_to(ROOT).as_posix() for folder in ("envs", "agents", "training", "evaluation", "play")
             for pattern in ("*.py", "*.js", "*.html") for p in (ROOT / folder).rglob(pattern)
             if "tinygame" in p.read_text() or "ascend_" in p.read_text()]
    assert named == []


def test_help_and_play_list_and_play_it(tmp_path):
    assert "tinygame" in cardzoo("play", "--help", cwd=tmp_path).stdout
    played = cardzoo("play", "tinygame", "--agents", "ascend_low", "ascend_high", "--seed", "3", cwd=tmp_path).stdout
    assert "result: {" in played and '"played"' in played
    # a person in the terminal: the rules and the legend, the moves, the end of the game in words
    person = cardzoo("play", "tinygame", "--agents", "human", "ascend_low", "--seed", "3", cwd=tmp_path,
                     stdin="?\n" + "1\n" * 6).stdout
    assert "each card higher than the last" in person and "1) play" in person
    assert "The game ended: " in person or "won" in person


def test_evaluate_plays_its_default(tmp_path):
    out = tmp_path / "table"
    cardzoo("evaluate", "--agents", "ascend_low", "--games", "4", "--only", "tinygame", "--out", str(out), cwd=tmp_path)
    table = json.loads((out / "llm_table.json").read_text())
    assert "tinygame_v0" in json.dumps(table)


def test_benchmark_scores_it_with_its_own_pool(tmp_path):
    cardzoo("benchmark", "ascend_low", "--games", "6", "--out", str(tmp_path), "--workers", "1", "--quiet",
            cwd=tmp_path)
    result = json.loads((tmp_path / "ascend_low.json").read_text())
    game = result["games"]["tinygame"]
    assert game["title"] == "Ascend"
    assert game["pool"]["dev"] == ["ascend_low"] and game["pool"]["test"] == ["ascend_high"]
    assert [s["name"] for s in game["settings"]] == ["normal"] and game["reference"] is None  # its baseline is itself
    assert {c["games"] for c in game["cells"]} == {6} and len(game["cells"]) == 1 + 2 * 3  # self, 3 members x 2 seats
    assert game["headline"]["errors"] == 0 and result["complete"]


def _call(url: str, body: dict | None = None, token: str | None = None) -> dict:
    data = None if body is None else json.dumps(body).encode()
    headers = {"content-type": "application/json", **({"X-Cardzoo-Token": token} if token else {})}
    with urllib.request.urlopen(urllib.request.Request(url, data=data, headers=headers), timeout=30) as r:
        return json.loads(r.read())


@contextlib.contextmanager
def tinygame_server(data: Path, cwd: Path):
    """``cardzoo serve`` with Ascend installed, on a free port; yields the server's url."""
    port = free_port()
    server = subprocess.Popen([sys.executable, "-c", LAUNCH, "serve", "--port", str(port), "--data", str(data)],
                              cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                _call(url + "api/catalog")
                break
            except OSError:
                assert server.poll() is None and time.monotonic() < deadline, "the server did not start"
                time.sleep(0.3)
        yield url
    finally:
        server.terminate()
        server.wait(timeout=30)


@pytest.mark.timeout(300)
def test_serve_offers_it_and_plays_a_whole_game(tmp_path):
    with tinygame_server(tmp_path / "data", tmp_path) as url:
        catalog = _call(url + "api/catalog")
        assert catalog["tinygame"]["title"] == "Ascend" and "ascend_high" in catalog["tinygame"]["agents"]
        view = _call(url + "api/games", {"game": "tinygame", "agents": ["ascend_high"], "seat": "player_0"})
        token = view["token"]
        while not view["over"]:
            assert view["your_turn"] and view["legal"]
            view = _call(url + f"api/games/{view['id']}/move",
                         {"seat": "player_0", "action": view["legal"][0]["action"], "step": view["steps"]}, token)
        assert view["outcome"].startswith("The game ended: ") and view["info"]["outcome"] in ("win", "fall")
    saved = (tmp_path / "data" / "games.jsonl").read_text().splitlines()
    assert len(saved) == 1 and json.loads(saved[0])["record"]["env"] == "tinygame_v0"


@pytest.mark.timeout(300)
def test_the_play_page_shows_it_in_words_and_plays_it_by_its_buttons(tmp_path):
    """The page has drawings of the project's three tables only: a fourth game is shown as its seat view's text,
    with a button per legal move, its rules from the seat view, and its partner called a partner."""
    from playwright.sync_api import sync_playwright

    from tests.test_play_browser import click_through, deal, launch
    from tests.tinygame.views import AscendView

    with tinygame_server(tmp_path / "data", tmp_path) as url, sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page()
        errors = []
        page.on("pageerror", lambda err: errors.append(str(err)))
        page.goto(url)
        page.select_option("#game-choice", "tinygame")
        assert page.text_content("#agent-role") == "Partner"
        deal(page, url, "tinygame", "normal", "player_0", "ascend_high")
        assert page.text_content("#rules-text").strip() == AscendView.rules()
        assert page.text_content("pre.in-words").startswith("top ")
        clicks = click_through(page, "#moves button.move", np.random.default_rng(0), tmp_path / "shot.png", 1)
        assert clicks >= 1 and page.text_content("#outcome").startswith("The game ended: ")
        browser.close()
    assert not errors, errors
    saved = (tmp_path / "data" / "games.jsonl").read_text().splitlines()
    assert len(saved) == 1 and json.loads(saved[0])["record"]["env"] == "tinygame_v0"
