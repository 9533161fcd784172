"""The play server's access rules seen from a real browser (Debian's chromium through Playwright, as in
test_play_browser.py; the server is uvicorn on 127.0.0.1 in a thread, so the test can count its games): the page
keeps its game's token in memory only and sends it; a second tab of the same site cannot read or play the game;
a page of another site (another port of localhost: another origin) cannot make a game or open the events socket,
even holding the token."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from playwright.sync_api import sync_playwright

from cardzoo.play.server import create_app

from .test_play_access import running
from .test_play_browser import launch


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    app = create_app(tmp_path_factory.mktemp("data"), seed=0)
    with running(app) as port:
        yield app, f"http://127.0.0.1:{port}/"


class Elsewhere(BaseHTTPRequestHandler):
    """Any page of another site: an empty page (its script comes from the test)."""

    def do_GET(self):
        body = b"<!doctype html><title>elsewhere</title><p>another site"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def elsewhere():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Elsewhere)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://localhost:{httpd.server_address[1]}/"
    httpd.shutdown()


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as p:
        chromium = launch(p)
        yield chromium
        chromium.close()


def deal(page, url: str) -> dict:
    page.goto(url)
    page.select_option("#game-choice", "rope_team")
    page.select_option("#agent", "simple")
    page.click("#deal")
    page.wait_for_selector("#play:not([hidden])")
    return page.evaluate("view")


TRY_GAME = """async ([id, token, body]) => {
  const out = {};
  const get = await fetch(`/api/games/${id}`, token ? { headers: { "X-Cardzoo-Token": token } } : {});
  out.get = [get.status, (await get.json()).error || null];
  const move = await fetch(`/api/games/${id}/move`, { method: "POST", body: JSON.stringify(body),
    headers: { "Content-Type": "application/json", ...(token ? { "X-Cardzoo-Token": token } : {}) } });
  out.move = [move.status, (await move.json()).error || null];
  return out;
}"""

OPEN_SOCKET = """([url, wait]) => new Promise((resolve) => {
  const seen = { opened: false, messages: 0 };
  const ws = new WebSocket(url);
  ws.onopen = () => { seen.opened = true; };
  ws.onmessage = () => { seen.messages += 1; };
  ws.onclose = (event) => resolve({ ...seen, code: event.code });
  setTimeout(() => { ws.close(); resolve({ ...seen, code: "still open" }); }, wait);
})"""


def test_the_token_stays_in_the_page_and_a_second_tab_cannot_play(server, browser):
    app, url = server
    context = browser.new_context()
    page, other = context.new_page(), context.new_page()
    view = deal(page, url)
    token = page.evaluate("token")
    live = app.state.games.games[view["id"]]
    assert len(token) >= 40 and token == live.token and token not in json.dumps(view)
    assert page.evaluate("[localStorage.length, sessionStorage.length, document.cookie]") == [0, 0, ""]
    other.goto(url)
    move = {"seat": view["seat"], "action": view["legal"][0]["action"], "step": view["steps"]}
    tried = other.evaluate(TRY_GAME, [view["id"], None, move])
    assert tried["get"][0] == tried["move"][0] == 403 and "needs its token" in tried["move"][1]
    socket = other.evaluate(OPEN_SOCKET, [f"ws://{url[7:]}api/games/{view['id']}/events", 5000])
    assert socket["messages"] == 0 and not socket["opened"]
    assert live.table.steps == view["steps"]
    steps = page.get_attribute("#table", "data-steps")
    page.locator(".card.legal").first.click()  # the page that made the game plays it
    page.wait_for_function("s => document.getElementById('table').dataset.steps !== s", arg=steps)
    assert page.text_content("#error") == "" and live.table.steps > view["steps"]
    context.close()


def test_a_page_of_another_site_cannot_make_a_game_or_listen_even_with_the_token(server, browser, elsewhere):
    app, url = server
    context = browser.new_context()
    page, evil = context.new_page(), context.new_page()
    view = deal(page, url)
    token = page.evaluate("token")
    held = set(app.state.games.games)
    evil.goto(elsewhere)
    made = evil.evaluate("""async ([target]) => {
      try {  // a "simple" request (no preflight): refused by the Origin check (and FastAPI reads no text/plain JSON)
        await fetch(`${target}api/games`, { method: "POST", mode: "no-cors", body: '{"game": "rope_team"}',
                                            headers: { "Content-Type": "text/plain" } });
        return "sent";
      } catch (err) { return String(err); }
    }""", [url])
    assert made == "sent"  # it reached the server (an opaque reply), which made nothing of it
    # The socket is where the Origin check is the only guard: the token travels in its URL, which a page could hold.
    socket = evil.evaluate(OPEN_SOCKET, [f"ws://{url[7:]}api/games/{view['id']}/events?token={token}", 5000])
    assert socket["messages"] == 0 and not socket["opened"], socket
    time.sleep(0.3)
    assert set(app.state.games.games) == held
    own = page.evaluate(OPEN_SOCKET, [f"ws://{url[7:]}api/games/{view['id']}/events?token={token}", 1000])
    assert own["opened"] and own["messages"] >= 1  # the same socket from the server's own page
    context.close()
