"""The browser app in a real browser: ``cardzoo serve`` started on 127.0.0.1 (a free port) in a process of its own,
Debian's chromium driven by Playwright (``.ci/run`` installs chromium; nothing is downloaded). A whole Rope Team
game and a whole Rook round are played by clicking legal cards and buttons, and a Summit Rush game at a fast pace;
each page's outcome text must equal the ending of the saved record's replay. Screenshots of each table (during the
game, and at its end) go to the test's tmp folder; the ones during the game go to ``$CARDZOO_SCREENSHOTS`` if set:
the README's come from ``CARDZOO_SCREENSHOTS=docs/images pytest tests/test_play_browser.py``."""

from __future__ import annotations

import contextlib
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import numpy as np
import pytest
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import sync_playwright

from cardzoo.play import records
from cardzoo.play.views import outcome_text, rules_text

CHROMIUM = os.environ.get("CARDZOO_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync"]  # headless, with a fresh profile: Playwright's own
INSTALL = "apt-get install chromium"


def launch(playwright):
    """Debian's chromium through Playwright, for every browser test (test_play_access_browser.py too). Without it
    the tests fail with one line saying how to install it, not Playwright's traceback (nothing is downloaded)."""
    if not Path(CHROMIUM).is_file():
        pytest.fail(f"chromium is missing ({CHROMIUM}): install it with `{INSTALL}`", pytrace=False)
    try:
        return playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
    except PlaywrightError as err:
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        pytest.fail(f"chromium ({CHROMIUM}) did not start: {first}; (re)install it with `{INSTALL}`", pytrace=False)
SEED = 0  # cardzoo serve --seed: the same deals, so the same games' lengths, on every run
_DRAWS = random.Random(SEED)
DEALS = [_DRAWS.getrandbits(64) for _ in range(3)]  # the seeds of that server's first three new deals


@contextlib.contextmanager
def cardzoo_serve(data: Path, tmp: Path | None = None, extra: tuple[str, ...] = ()):
    """``cardzoo serve`` on a free port (``tmp``: its temp folder; ``extra``: more arguments); yields its url; stopped
    with Ctrl-C (as a person would)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    process = subprocess.Popen([sys.executable, "-m", "cardzoo.evaluation.cli", "serve", "--host", "127.0.0.1",
                                "--port", str(port), "--data", str(data), "--seed", str(SEED), *extra],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "TMPDIR": str(tmp)} if tmp else None)
    url = f"http://127.0.0.1:{port}/"
    deadline = time.monotonic() + 60
    while True:
        try:
            urllib.request.urlopen(url + "api/catalog", timeout=2).read()
            break
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                raise AssertionError(f"cardzoo serve did not start: {process.communicate()}") from None
            time.sleep(0.2)
    yield url
    process.send_signal(2)  # SIGINT: uvicorn shuts down and the app saves what was left unfinished
    out, err = process.communicate(timeout=30)
    assert process.returncode in (0, 130, -2), err
    assert f"playing at {url}" in out


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """``cardzoo serve`` on a free port; yields (url, data folder)."""
    data = tmp_path_factory.mktemp("data")
    with cardzoo_serve(data) as url:
        yield url, data


@pytest.fixture(scope="module")
def page():
    with sync_playwright() as p:
        browser = launch(p)
        tab = browser.new_page(viewport={"width": 1000, "height": 760})
        errors = []
        tab.on("pageerror", lambda err: errors.append(str(err)))
        yield tab
        browser.close()
        assert not errors, errors  # no JavaScript error on any page


@pytest.fixture
def shots(tmp_path) -> Path:
    folder = Path(os.environ.get("CARDZOO_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def deal(page, url: str, game: str, variant: str, seat: str, agent: str, seconds: str | None = None) -> None:
    page.goto(url)
    page.select_option("#game-choice", game)
    page.select_option("#variant", variant)
    page.select_option("#seat", seat)
    page.select_option("#agent", agent)
    if seconds is not None:
        page.fill("#seconds", seconds)
    page.click("#deal")
    page.wait_for_selector("#play:not([hidden])")


def last_saved(data: Path) -> dict:
    return records.read(data / records.GAMES_FILE)[-1][1]


def replayed_outcome(entry: dict, seat: int) -> str:
    env = records.replay_entry(entry, "the saved game")
    return outcome_text(entry["record"]["env"], records.final_info(env), seat)


def click_through(page, selector: str, rng: np.random.Generator, shot: Path, shot_at: int) -> int:
    """Click random legal cards and buttons (``selector``) until the summary shows; one screenshot on the way."""
    clicks = 0
    deadline = time.monotonic() + 120
    while not page.is_visible("#summary"):
        assert time.monotonic() < deadline, f"no end on the page after {clicks} clicks"
        steps = page.get_attribute("#table", "data-steps")
        targets = page.locator(selector)
        n = targets.count()
        assert n, "no legal move on the page while the game is on"
        if clicks == shot_at:
            page.screenshot(path=str(shot))
        targets.nth(int(rng.integers(n))).click()
        page.wait_for_function("s => document.getElementById('table').dataset.steps !== s"
                               " || document.getElementById('error').textContent", arg=steps)
        assert page.text_content("#error") == "", page.text_content("#error")  # the click was taken
        clicks += 1
    return clicks


@pytest.mark.parametrize("game, variant, seat, agent, selector, title, shot_at", [
    ("rope_team", "normal", "player_0", "learned", ".card.legal", "Rope Team", 6),
    ("rook", "one round", "player_1", "learned", ".card.legal, #moves button.move", "Rook for Two", 14),
])
def test_a_whole_game_by_clicking_legal_cards(served, page, shots, tmp_path, game, variant, seat, agent, selector,
                                              title, shot_at):
    url, data = served
    deal(page, url, game, variant, seat, agent)
    assert page.text_content("#title") == f"{title} — {variant}"
    hand = page.locator("#table .row:last-child .card")
    dealt = [el.get_attribute("data-code") for el in hand.all()]
    clicks = click_through(page, selector, np.random.default_rng(0), shots / f"play_{game}.png", shot_at)
    page.screenshot(path=str(tmp_path / f"play_{game}_end.png"), full_page=True)
    entry = last_saved(data)
    assert entry["where"] == "browser" and entry["finished"] and entry["seats"][seat] == {"player": "human"}
    assert entry["record"]["seed"] in DEALS  # serve --seed seeded the deals
    assert entry["seats"]["player_1" if seat == "player_0" else "player_0"]["agent"] == agent
    moves = entry["record"]["actions"]
    assert clicks > shot_at and len(moves) > clicks  # the agent moved between the clicks
    assert page.text_content("#outcome") == replayed_outcome(entry, int(seat[-1]))
    page.click("#again-same")  # the same deal again: the same cards in hand
    page.wait_for_selector("#summary", state="hidden")
    assert [el.get_attribute("data-code") for el in hand.all()] == dealt and len(dealt) >= 11


def test_summit_rush_in_real_time_at_a_fast_pace(served, page, shots, tmp_path):
    url, data = served
    before = len(records.read(data / records.GAMES_FILE)) if (data / records.GAMES_FILE).exists() else 0
    deal(page, url, "summit_rush", "normal", "player_0", "learned", seconds="0.25")
    page.wait_for_selector("#timer:not([hidden])")
    assert "one move every 0.25 s" in page.text_content("#clock")
    page.select_option("#message", "3")  # say "I need a 2" with every move
    rng = np.random.default_rng(0)
    clicks, shot = 0, False
    deadline = time.monotonic() + 120  # the game takes about 15 s: a page that never sees its end fails, not hangs
    while not page.is_visible("#summary"):
        assert time.monotonic() < deadline, f"no end on the page after {clicks} clicks: {page.text_content('#clock')}"
        cards = page.locator("#peaks .card.legal")
        if cards.count():
            try:
                cards.nth(int(rng.integers(cards.count()))).click(timeout=1000)
                clicks += 1
            except Exception:  # the tick came first and the card moved away: real time
                pass
            if clicks >= 4 and not shot:
                page.screenshot(path=str(shots / "play_summit_rush.png"))
                shot = True
        time.sleep(0.05)
    page.screenshot(path=str(tmp_path / "play_summit_rush_end.png"), full_page=True)
    entries = records.read(data / records.GAMES_FILE)
    assert len(entries) == before + 1
    entry = entries[-1][1]
    assert entry["finished"] and entry["seconds_per_move"] == 0.25 and entry["record"]["env"] == "summit_rush_v0"
    n_moves = 28 * 2 + 2
    mine = [tick["player_0"] for tick in entry["record"]["actions"]]
    assert clicks and any(a // n_moves == 3 and a % n_moves < n_moves - 2 for a in mine)  # the clicked cards landed
    assert page.text_content("#outcome") == replayed_outcome(entry, 0)


def test_a_moves_reply_that_arrives_after_the_last_tick_does_not_take_the_end_away(served, page):
    """The reply to a click is computed at once, but the page may get it after a later tick's push (a busy machine):
    here the first click's reply is held until the game is over and its last view has reached the page."""
    url, _ = served
    held = []

    def hold(route):
        reply = route.fetch()  # the server has taken the move (or refused it); the page waits for this reply
        if reply.status == 200 and not held:
            held.append((route, reply))
        else:  # a refusal (the tick came first and the card moved away: real time) or a later click
            route.fulfill(response=reply)

    page.route("**/api/games/*/move", hold)
    try:
        deal(page, url, "summit_rush", "normal, silent", "player_0", "simple", seconds="0.1")
        game = page.evaluate("view.id")
        asked = urllib.request.Request(f"{url}api/games/{game}", headers={"X-Cardzoo-Token": page.evaluate("token")})
        deadline = time.monotonic() + 120
        while not held:
            assert time.monotonic() < deadline, "no click was taken"
            with contextlib.suppress(Exception):  # the card moved away before the click
                page.locator("#peaks .card.legal").first.click(timeout=1000)
        while not json.loads(urllib.request.urlopen(asked, timeout=5).read())["over"]:
            assert time.monotonic() < deadline, "the game did not end"
            time.sleep(0.2)
        page.wait_for_selector("#summary:not([hidden])", timeout=10_000)  # the last push has reached the page
        route, reply = held[0]
        route.fulfill(response=reply)
        time.sleep(1.0)  # the stale reply reaches the page and is drawn (or dropped)
        assert page.evaluate("view.id") == game and page.is_visible("#summary") and page.text_content("#outcome")
        assert int(page.get_attribute("#table", "data-steps")) > json.loads(reply.text())["steps"]
    finally:
        page.unroute("**/api/games/*/move")


def test_the_form_offers_only_the_agents_the_server_seats_at_each_variant(served, page):
    """The agent list follows the variant: every option makes a game (tests/test_play_liveness.py), and an agent
    the server refuses for a variant (a learned policy of other levels) is not offered."""
    url, _ = served
    page.goto(url)
    catalog = json.loads(urllib.request.urlopen(url + "api/catalog", timeout=10).read())
    for game, spec in catalog.items():
        page.select_option("#game-choice", game)
        for variant in spec["variants"]:
            page.select_option("#variant", variant)
            shown = page.eval_on_selector_all("#agent option", "options => options.map(o => o.value)")
            assert shown == spec["agents_by_variant"][variant], (game, variant)
    page.select_option("#game-choice", "summit_rush")
    page.select_option("#variant", "normal")
    page.select_option("#agent", "simple")
    page.select_option("#variant", "hard")
    assert page.input_value("#agent") == "simple"  # a choice still offered is kept


def test_a_game_that_cannot_be_saved_says_so_on_the_page(tmp_path, page):
    """The data file cannot be written (here it is a folder): the last click still ends the game on the page, with
    the reason it was not saved; the server keeps the game and writes it to the fallback file when it stops."""
    data = tmp_path / "data"
    (data / records.GAMES_FILE).mkdir(parents=True)
    with cardzoo_serve(data, tmp_path) as url:
        deal(page, url, "rope_team", "easy", "player_0", "simple")
        click_through(page, ".card.legal", np.random.default_rng(0), tmp_path / "unsaved.png", 0)
        assert page.text_content("#outcome")
        shown = page.text_content("#save-error")
        assert shown.startswith("this game could not be saved: ") and records.GAMES_FILE in shown
        assert page.is_visible("#save-error")
    [fallback] = [f for f in tmp_path.rglob("*.jsonl") if data not in f.parents]  # in the server's temp folder
    [(_, entry)] = records.read(fallback)
    assert entry["finished"] and page.text_content("#outcome") == replayed_outcome(entry, 0)


def test_a_page_whose_events_socket_drops_comes_back_to_its_game(served, page):
    """The events socket closes under the page (a network drop; or the server dropped a page that fell behind): the
    page opens a new one within a second or two and the table goes on moving. Refusals do not bring it back."""
    url, _ = served
    sockets = []
    page.on("websocket", lambda ws: sockets.append(ws.url))
    deal(page, url, "summit_rush", "normal, silent", "player_0", "simple", seconds="0.3")
    page.wait_for_function("document.getElementById('table').dataset.steps >= 2")
    assert len(sockets) == 1
    page.evaluate("socket.dispatchEvent(new CloseEvent('close', {code: 1006}))")  # as the browser reports a drop
    page.wait_for_function("document.getElementById('table').dataset.steps >= 2")
    deadline = time.monotonic() + 10
    while len(sockets) < 2:
        assert time.monotonic() < deadline, "the page did not reconnect"
        page.wait_for_timeout(100)
    steps = int(page.get_attribute("#table", "data-steps"))
    page.wait_for_function(f"document.getElementById('table').dataset.steps > {steps + 2}", timeout=10_000)
    page.evaluate("socket.dispatchEvent(new CloseEvent('close', {code: 4403}))")  # a refusal: final
    page.wait_for_timeout(2000)
    assert len(sockets) == 2 and sockets[1] == sockets[0]
    page.click("#change")  # leave the game (the server abandons it later)


# ---------------------------------------------------------------------------- at the table
def hand_state(page) -> tuple[set[str], set[str], set[str]]:
    """The codes of the hand's cards, of those shown playable and of those dimmed."""
    hand = page.locator("#table .row:last-child .card")
    codes = {el.get_attribute("data-code") for el in hand.all()}
    legal = {el.get_attribute("data-code") for el in page.locator("#table .row:last-child .card.legal").all()}
    dimmed = {el.get_attribute("data-code") for el in page.locator("#table .row:last-child .card.illegal").all()}
    return codes, legal, dimmed


def test_the_rules_and_legend_panel_and_the_dimmed_cards(served, page, shots):
    """The "Rules and legend" panel holds the text the terminal prints for ``?`` (the game's own); in a trick to
    follow, the hand's cards that cannot be played are dimmed, exactly those that are not legal moves."""
    url, _ = served
    deal(page, url, "rope_team", "easy", "player_1", "simple")
    assert not page.is_visible("#rules-text")  # folded until asked for
    page.click("#rules summary")
    page.wait_for_function("document.getElementById('rules-text').textContent.length > 0")
    assert page.is_visible("#rules-text")
    assert page.text_content("#rules-text").strip() == rules_text("rope_team_v0")
    rng = np.random.default_rng(1)
    for _ in range(30):  # play until the partner led and not every card follows
        codes, legal, dimmed = hand_state(page)
        wanted = {m["code"] for m in page.evaluate("view.legal")}
        assert legal == wanted
        assert dimmed == (codes - legal if legal else set())  # nothing is dimmed while it is not your turn
        if dimmed:
            break
        steps = page.get_attribute("#table", "data-steps")
        cards = page.locator(".card.legal")
        cards.nth(int(rng.integers(cards.count()))).click()
        page.wait_for_function("s => document.getElementById('table').dataset.steps !== s", arg=steps)
    else:
        raise AssertionError("no trick to follow in 30 moves")
    assert all(float(page.locator(f'#table .row:last-child .card[data-code="{c}"]').evaluate(
        "el => getComputedStyle(el).opacity")) < 0.6 for c in dimmed)
    page.screenshot(path=str(shots / "play_rope_team_rules.png"), full_page=True)
    dim = page.locator("#table .row:last-child .card.illegal").first
    dim.click(force=True)  # a dimmed card does nothing
    page.wait_for_timeout(300)
    assert page.text_content("#error") == "" and hand_state(page)[2] == dimmed

    deal(page, url, "rook", "one round", "player_1", "heuristic")  # player_1 does not deal: she bids first
    page.wait_for_selector("#moves button.move")
    assert page.evaluate("view.table.phase") == "bid"
    assert page.locator(".card.illegal").count() == 0  # no card is playable while bidding: none is dimmed
    page.wait_for_function("document.getElementById('rules-text').textContent.startsWith('Rook for Two')")
    assert page.text_content("#rules-text").strip() == rules_text("rook_v0")


def test_the_summit_rush_log_shows_the_moves(served, page):
    """The log under the table fills with the cards played and the stocks turned, as the table shows them."""
    url, _ = served
    deal(page, url, "summit_rush", "normal, silent", "player_0", "simple", seconds="0.2")
    deadline = time.monotonic() + 30
    while page.locator("#log li").count() < 4:
        assert time.monotonic() < deadline and not page.is_visible("#summary"), page.evaluate("view.log")
        with contextlib.suppress(Exception):  # the tick came first and the card moved away: real time
            page.locator("#peaks .card.legal").first.click(timeout=500)
        page.wait_for_timeout(100)
    lines = [li.text_content() for li in page.locator("#log li").all()]
    assert all(" went onto " in line or " stock: " in line for line in lines), lines
    assert any(" went onto " in line for line in lines), lines  # the cards clicked (onto whichever pile they fit)
    assert page.text_content("#rules-text").startswith("Summit Rush:")
    page.click("#leave")


def test_leaving_a_game_goes_back_to_the_form_and_the_server_abandons_it(tmp_path, page):
    """"Leave this game" shows the setup form and closes the page's events socket: with no page left, the server
    saves the game as abandoned after its grace period (here 1 s)."""
    from cardzoo.play.liveness import Liveness
    from cardzoo.play.server import create_app

    from .test_play_access import running

    data = tmp_path / "data"
    app = create_app(data, seed=0, liveness=Liveness(grace_seconds=1.0))
    with running(app) as port:
        url = f"http://127.0.0.1:{port}/"
        deal(page, url, "rope_team", "easy", "player_0", "simple")
        assert page.is_visible("#leave")
        steps = page.get_attribute("#table", "data-steps")
        page.locator(".card.legal").first.click()
        page.wait_for_function("s => document.getElementById('table').dataset.steps !== s", arg=steps)
        game = page.evaluate("view.id")
        page.click("#leave")
        assert page.is_visible("#setup-form") and not page.is_visible("#play")
        assert page.evaluate("socket === null && view === null && token === null")
        deadline = time.monotonic() + 20
        while not (data / records.GAMES_FILE).exists():
            assert time.monotonic() < deadline, "the game left was not saved"
            time.sleep(0.2)
        [(_, entry)] = records.read(data / records.GAMES_FILE)
        assert entry["game"] == game and entry["abandoned"] is True and entry["finished"] is False
        deal(page, url, "rope_team", "easy", "player_0", "simple")  # the form deals a new game
        assert page.evaluate("view.id") != game and page.is_visible("#leave")


def test_a_missing_chromium_fails_in_one_line_that_says_how_to_install_it(tmp_path):
    missing = tmp_path / "no-chromium"
    test = f"{__file__}::test_leaving_a_game_goes_back_to_the_form_and_the_server_abandons_it"
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", test],
                            capture_output=True, text=True, timeout=120, cwd=Path(__file__).parent.parent,
                            env={**os.environ, "CARDZOO_CHROMIUM": str(missing)})
    out = result.stdout
    assert result.returncode != 0
    assert f"chromium is missing ({missing}): install it with `apt-get install chromium`" in out, out
    assert "Traceback" not in out and "sync_api" not in out and "def launch" not in out, out
