"""Language-model seats where people play: ``cardzoo play --agents llm:... ``, the table behind the terminal and the
browser (records keep every decision), ``cardzoo serve --agent llm:...`` over the API, and in chromium a model
partner whose replies are hostile markup: the page never renders it (replies are not shown at all: a partner's
reasoning could name its hidden cards, and Rope Team has no table talk)."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

pytest.importorskip("openai")
pytest.importorskip("fastapi")

from cardzoo.evaluation.cli import main  # noqa: E402
from cardzoo.play import records  # noqa: E402
from cardzoo.play.server import MODEL_DECISIONS_PER_TURN, create_app  # noqa: E402
from cardzoo.play.table import HUMAN, Table  # noqa: E402
from tests.fake_openai import FakeOpenAI  # noqa: E402
from tests.test_play_server import PageClient, play_out  # noqa: E402

HOSTILE = ('<img src=x onerror="document.title=\'pwned\'"><script>window.pwned = 1</script>'
           '\x1b[2J\u202e <b id="injected">bold</b> ')


def listed_first(messages):
    state = next(m["content"] for m in reversed(messages) if m["role"] == "user" and "Legal moves" in m["content"])
    return re.search(r"Legal moves: 1\) (.+?)(?:  \d+\)|$)", state, re.MULTILINE).group(1)


def hostile_then_first(messages):
    """Hostile markup around the first listed move: read as that move, kept as text."""
    return f"{HOSTILE}[play] {listed_first(messages)}"


@pytest.fixture
def fake(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-play-secret")
    with FakeOpenAI([hostile_then_first]).running() as server:
        monkeypatch.setenv("CARDZOO_LLM_BASE_URL", server.base_url)
        yield server


def test_cardzoo_play_seats_a_model_with_the_games_options(fake, capsys, tmp_path):
    main(["play", "summit_rush", "--agents", "llm:m", "simple", "--seed", "3", "-o", "level=hard",
          "--save", str(tmp_path / "g.json")])
    out = capsys.readouterr().out
    assert "result: " in out and "outcome" in out
    first = fake.requests[0]["body"]["messages"][1]["content"]
    assert "stock 9 left" in first  # hard: 10 stock cards each, one starting the pile (the view has the options)


def test_a_table_with_a_person_and_a_model_saves_every_decision(fake, tmp_path):
    table = Table.open("rope_team_v0", {}, [HUMAN, "llm:m"], seed=4)
    rng = np.random.default_rng(0)
    while not table.over:
        obs = table.env.observe(table.seats[0])
        table.play(0, int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        table.advance()
    entry = table.entry("terminal")
    seat = entry["seats"]["player_1"]
    assert seat["agent"] == "llm:m" and seat["settings"]["backend"]["model"] == "m"
    assert len(seat["decisions"]) == len(fake.requests) > 0
    assert all(d["default"] is None and d["attempts"][0]["reply"].startswith("<img") for d in seat["decisions"])
    assert "\x1b" not in json.dumps(entry) and "sk-play-secret" not in json.dumps(entry)
    records.append(tmp_path, entry)  # the saved form is a played game that replays
    [(_, saved)] = records.read(tmp_path / records.GAMES_FILE)
    assert saved["seats"]["player_1"]["decisions"] == seat["decisions"]


def test_serve_offers_only_the_operators_models(fake, tmp_path):
    spec = "llm:m?temperature=0"
    app = create_app(tmp_path / "data", seed=0, agents=[spec])
    with PageClient(app, base_url="http://127.0.0.1:8000") as client:
        client.games = app.state.games
        catalog = client.get("/api/catalog").json()
        for game in catalog.values():
            assert spec in game["agents"] and all(spec in names for names in game["agents_by_variant"].values())
        r = client.post("/api/games", json={"game": "rope_team", "agents": ["llm:evil?base_url=http://10.0.0.1/v1"]})
        assert r.status_code == 400 and "no agent" in r.json()["error"]  # a page never names a model or endpoint
        r = client.post("/api/games", json={"game": "rope_team", "agents": ["hf:/etc"]})
        assert r.status_code == 400
        r = client.post("/api/games", json={"game": "rope_team", "seat": "player_1", "agents": [spec]})
        assert r.status_code == 201, r.text
        view = play_out(client, r.json(), np.random.default_rng(1))
        assert view["over"] and HOSTILE not in json.dumps(view)  # the page's view never carries a reply
        live = next(iter(app.state.games.games.values()))
        [agent] = live.table.agents.values()
        assert agent.budget == 30.0 / MODEL_DECISIONS_PER_TURN  # the serve default: inside the move timeout
    [(_, entry)] = records.read(tmp_path / "data" / records.GAMES_FILE)
    assert entry["seats"]["player_0"]["decisions"]


def test_serve_refuses_a_bad_model_spec_before_starting(capsys, tmp_path):
    with pytest.raises(SystemExit):
        main(["serve", "--agent", "llm:m?api_key=sk-x", "--data", str(tmp_path), "--port", "1"])
    assert "--agent llm:m?api_key=sk-x: agent spec" in capsys.readouterr().err


def test_a_hostile_model_partner_in_chromium(fake, tmp_path):
    from playwright.sync_api import sync_playwright

    from tests.test_play_browser import cardzoo_serve, click_through, deal, launch

    spec = "llm:hostile"
    data = tmp_path / "data"
    with cardzoo_serve(data, tmp_path, extra=("--agent", spec)) as url, sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page()
        dialogs, errors = [], []
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        page.on("pageerror", lambda err: errors.append(str(err)))
        deal(page, url, "rope_team", "normal", "player_0", spec)
        click_through(page, ".card.legal", np.random.default_rng(0), tmp_path / "llm_partner.png", 3)
        html = page.content()
        assert page.title() != "pwned" and page.evaluate("window.pwned") is None
        assert page.locator("#injected").count() == 0 and page.locator("img").count() == 0
        assert "onerror" not in html and "window.pwned" not in html
        assert page.text_content("#outcome")
        browser.close()
    assert not dialogs and not errors
    entry = records.read(data / records.GAMES_FILE)[-1][1]
    replies = [a["reply"] for d in entry["seats"]["player_1"]["decisions"] for a in d["attempts"]]
    assert replies and all(r.startswith("<img src=x onerror=") and "\\u001b" in r for r in replies)
