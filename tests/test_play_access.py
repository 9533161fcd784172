"""Who may use the play server, and how much (``cardzoo.play.access`` and ``server.py``): the ``Host`` and
``Origin`` rules and the per-game tokens against a real server on 127.0.0.1 (uvicorn in a thread, raw sockets and
the ``websockets`` client, so every header is the one a browser or an attacker would send); the same-deal rule, the
seeds, the limits and the error format through Starlette's test client; the ``--host`` warning through the CLI."""

from __future__ import annotations

import contextlib
import http.client
import json
import signal
import socket
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
import uvicorn
from fastapi.testclient import TestClient
from starlette.websockets import WebSocketDisconnect
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from cardzoo.play import records
from cardzoo.play.access import CreationRate, Limits, allowed_hosts, is_loopback, quote
from cardzoo.play.server import TOKEN_HEADER, create_app

LOCAL = "http://127.0.0.1:8000"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def running(app):
    """``app`` served by uvicorn on 127.0.0.1 (a free port) in a thread; yields the port."""
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.02)
    try:
        yield port
    finally:
        server.should_exit = True
        thread.join(10)


@pytest.fixture(scope="module")
def real(tmp_path_factory):
    app = create_app(tmp_path_factory.mktemp("data"), seed=0)
    with running(app) as port:
        yield app, port


def ask(port: int, method: str, path: str, body: dict | None = None, **headers) -> tuple[int, dict]:
    """One request with exactly these headers (``Host`` defaults to the served address; ``_`` for ``-``)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    sent = {"Host": f"127.0.0.1:{port}", **{k.replace("_", "-"): v for k, v in headers.items()}}
    data = None if body is None else json.dumps(body).encode()
    if data is not None:
        sent["Content-Type"] = "application/json"
    conn.request(method, path, body=data, headers=sent)
    response = conn.getresponse()
    raw = response.read()
    conn.close()
    try:
        return response.status, json.loads(raw)
    except ValueError:
        return response.status, {"text": raw.decode()}


def made(port: int, **headers) -> dict:
    status, view = ask(port, "POST", "/api/games", {"game": "rope_team", "agents": ["simple"]}, **headers)
    assert status == 201, view
    return view


# ---------------------------------------------------------------------------- Host (DNS rebinding)
def test_the_host_header_must_name_the_served_address(real):
    app, port = real
    for host in [f"127.0.0.1:{port}", f"localhost:{port}", "localhost", f"[::1]:{port}", "LOCALHOST"]:
        assert ask(port, "GET", "/api/catalog", Host=host)[0] == 200, host
    for host in [f"evil.example:{port}", "evil.example", f"127.0.0.1.evil.example:{port}", "192.168.1.7"]:
        status, body = ask(port, "GET", "/api/catalog", Host=host)
        assert status == 400 and "Invalid host header" in body["text"], host
    with pytest.raises(InvalidStatus) as refused:
        connect(f"ws://127.0.0.1:{port}/api/games/x/events", additional_headers={"Host": f"evil.example:{port}"})
    assert refused.value.response.status_code == 400


def test_the_names_a_server_answers_follow_its_address():
    assert allowed_hosts("127.0.0.1") == ["127.0.0.1", "localhost", "[::1]"]
    assert allowed_hosts("10.1.2.3", ["study.lan"]) == ["127.0.0.1", "localhost", "[::1]", "10.1.2.3", "study.lan"]
    wide = allowed_hosts("0.0.0.0")
    assert socket.gethostname().lower() in wide and "evil.example" not in wide


# ---------------------------------------------------------------------------- Origin
def test_a_post_from_a_foreign_origin_is_refused_and_changes_nothing(real):
    app, port = real
    view = made(port)
    token, held = view["token"], len(app.state.games.games)
    live = app.state.games.games[view["id"]]
    body = {"seat": view["seat"], "action": view["legal"][0]["action"], "step": view["steps"]}
    for origin in ["http://evil.example", f"http://localhost:{free_port()}", "null", f"http://127.0.0.1:{port}.evil"]:
        status, refused = ask(port, "POST", f"/api/games/{view['id']}/move", body, Origin=origin,
                              X_Cardzoo_Token=token)
        assert status == 403 and "refused a request from the page at" in refused["error"], refused
        assert live.table.steps == view["steps"]
        status, refused = ask(port, "POST", "/api/games", {"game": "rook"}, Origin=origin)
        assert status == 403 and len(app.state.games.games) == held
    status, moved = ask(port, "POST", f"/api/games/{view['id']}/move", body, Origin=f"http://127.0.0.1:{port}",
                        X_Cardzoo_Token=token)  # the server's own page
    assert status == 200 and moved["steps"] > view["steps"]
    status, _ = ask(port, "GET", "/api/catalog", Origin="http://evil.example")  # reading the catalog changes nothing
    assert status == 200


def test_the_events_socket_takes_the_own_page_or_a_program_never_a_foreign_page(real):
    app, port = real
    view = made(port)
    url = f"ws://127.0.0.1:{port}/api/games/{view['id']}/events?token={view['token']}"
    for origin in ["http://evil.example", f"http://localhost:{port + 1}"]:
        with pytest.raises(InvalidStatus) as refused:
            connect(url, origin=origin)  # even with the token: a foreign page never gets the hand
        assert refused.value.response.status_code == 403
        assert b"refused an events socket from the page at" in refused.value.response.body
    for origin in [f"http://127.0.0.1:{port}", None]:
        with connect(url, origin=origin) as ws:
            assert json.loads(ws.recv(timeout=10))["id"] == view["id"]


# ---------------------------------------------------------------------------- tokens
def test_every_request_about_a_game_needs_its_token(real):
    app, port = real
    view, other = made(port), made(port)
    token = view["token"]
    assert len(token) >= 40 and token != other["token"]
    status, seen = ask(port, "GET", f"/api/games/{view['id']}", X_Cardzoo_Token=token)
    assert status == 200 and "token" not in seen and token not in json.dumps(seen)  # given once, never again
    live = app.state.games.games[view["id"]]
    move = {"seat": view["seat"], "action": view["legal"][0]["action"]}
    for given, problem in [(None, "needs its token"), ("", "needs its token"), (token[:-1], "wrong token"),
                           (other["token"], "wrong token"), ("tökén", "wrong token")]:
        headers = {} if given is None else {"X_Cardzoo_Token": given}
        for method, path, body in [("GET", "", None), ("POST", "/move", move), ("POST", "/again", {"deal": "new"})]:
            held = len(app.state.games.games)
            status, refused = ask(port, method, f"/api/games/{view['id']}{path}", body, **headers)
            assert status == 403 and problem in refused["error"], (given, path, refused)
            assert live.table.steps == view["steps"] and len(app.state.games.games) == held
        with pytest.raises(InvalidStatus) as closed:  # closed before it opens: not one view is sent
            connect(f"ws://127.0.0.1:{port}/api/games/{view['id']}/events"
                    + ("" if given is None else "?token=" + given.encode().hex()))
        assert closed.value.response.status_code == 403
    with connect(f"ws://127.0.0.1:{port}/api/games/{view['id']}/events",  # a program may send the header instead
                 additional_headers={TOKEN_HEADER: token}) as ws:
        assert json.loads(ws.recv(timeout=10))["id"] == view["id"]
    status, again = ask(port, "POST", f"/api/games/{view['id']}/again", {"deal": "new"}, X_Cardzoo_Token=token)
    assert status == 201 and again["token"] not in (token, other["token"])


# ---------------------------------------------------------------------------- the API pages
@pytest.mark.parametrize("path", ["/docs", "/redoc", "/openapi.json"])
def test_the_api_pages_are_off_unless_asked_for(tmp_path, path):
    with TestClient(create_app(tmp_path), base_url=LOCAL) as off:
        r = off.get(path)
        assert r.status_code == 404 and r.json() == {"error": f"no such address: GET '{path}'"}
    with TestClient(create_app(tmp_path, api_docs=True), base_url=LOCAL) as on:
        assert on.get(path).status_code == 200


# ---------------------------------------------------------------------------- the hidden cards
@pytest.fixture
def client(tmp_path):
    app = create_app(tmp_path / "data", seed=0)
    with TestClient(app, base_url=LOCAL) as c:
        c.app_games, c.data = app.state.games, tmp_path / "data"
        yield c


def create(client, **body) -> dict:
    r = client.post("/api/games", json={"game": "rope_team", "agents": ["simple"], **body})
    assert r.status_code == 201, r.text
    return r.json()


def play_out(client, view: dict, token: str) -> dict:
    rng = np.random.default_rng(0)
    while not view["over"]:
        action = view["legal"][rng.integers(len(view["legal"]))]["action"]
        r = client.post(f"/api/games/{view['id']}/move", headers={TOKEN_HEADER: token},
                        json={"seat": view["seat"], "action": action})
        assert r.status_code == 200, r.text
        view = r.json()
    return view


def test_the_same_deal_again_only_once_the_game_is_over_and_linked_to_it(client):
    first = create(client)
    auth = {TOKEN_HEADER: first["token"]}
    held = set(client.app_games.games)
    r = client.post(f"/api/games/{first['id']}/again", json={"deal": "same"}, headers=auth)
    assert r.status_code == 409 and "only once this game is over" in r.json()["error"]
    assert set(client.app_games.games) == held  # no twin dealt
    r = client.post(f"/api/games/{first['id']}/again", json={"deal": "new"}, headers=auth)
    assert r.status_code == 201  # a new deal shows nothing of this one
    play_out(client, first, first["token"])
    twin = client.post(f"/api/games/{first['id']}/again", json={"deal": "same"}, headers=auth).json()
    assert twin["table"]["hand"] == first["table"]["hand"]
    play_out(client, twin, twin["token"])
    saved = {e["game"]: e for _, e in records.read(client.data / records.GAMES_FILE)}
    assert saved[twin["id"]]["replay_of"] == first["id"] and "replay_of" not in saved[first["id"]]
    assert saved[twin["id"]]["record"]["seed"] == saved[first["id"]]["record"]["seed"]


def test_unseeded_deals_take_64_bits_of_os_randomness_and_no_view_holds_them(tmp_path):
    with TestClient(create_app(tmp_path), base_url=LOCAL) as c:
        views = [create(c, game=game, agents=None) for game in ["rope_team", "rook", "summit_rush"] * 3]
        seeds = [c.app.state.games.games[v["id"]].seed for v in views]
        # Nine seeds all below 2**48 would happen once in 2**144 tries: the old 31-bit draw fails here.
        assert max(seeds) >= 2**48 and all(0 <= s < 2**64 for s in seeds) and len(set(seeds)) == 9
        for v, seed in zip(views, seeds, strict=True):
            auth = {TOKEN_HEADER: v["token"]}
            assert str(seed) not in json.dumps(c.get(f"/api/games/{v['id']}", headers=auth).json())
            assert str(seed) not in json.dumps(v) and "seed" not in json.dumps(v)
    with TestClient(create_app(tmp_path, seed=5), base_url=LOCAL) as a, \
            TestClient(create_app(tmp_path, seed=5), base_url=LOCAL) as b:  # a server seed: the same deals
        assert create(a)["table"] == create(b)["table"]


# ---------------------------------------------------------------------------- limits
def limited(tmp_path, who: str, **limits) -> TestClient:
    app = create_app(tmp_path, seed=1, limits=Limits(**limits))
    return TestClient(app, base_url=LOCAL, client=(who, 5000))


def as_client(c: TestClient, who: str) -> TestClient:
    """Another client (remote address ``who``) of the same app."""
    return TestClient(c.app, base_url=LOCAL, client=(who, 5001))


def test_games_in_progress_per_client(tmp_path):
    with limited(tmp_path, "10.0.0.1", games_per_client=2) as a:
        first, _ = create(a), create(a)
        r = a.post("/api/games", json={"game": "rook"})
        assert r.status_code == 429 and "you have 2 games in progress" in r.json()["error"]
        assert create(as_client(a, "10.0.0.2"))  # another client is not held back
        play_out(a, first, first["token"])  # a finished game is no longer in progress
        assert create(a)


def test_new_games_per_minute_per_client(tmp_path):
    with limited(tmp_path, "10.0.0.1", creations_per_minute=3) as a:
        views = [create(a) for _ in range(3)]
        for path in ["/api/games", f"/api/games/{views[0]['id']}/again"]:
            r = a.post(path, json={"game": "rook"} if path == "/api/games" else {"deal": "new"},
                       headers={TOKEN_HEADER: views[0]["token"]})
            assert r.status_code == 429 and "more than 3 new games a minute" in r.json()["error"], r.text
        assert create(as_client(a, "10.0.0.2"))
    rate = CreationRate(2)  # the minute slides
    assert [rate.wait("a", now=t) for t in (0.0, 1.0)] == [0.0, 0.0]
    assert rate.wait("a", now=30.0) == pytest.approx(30.0) and rate.wait("a", now=60.5) == 0.0


def test_a_game_in_progress_is_never_dropped_for_another_clients_games(tmp_path):
    with limited(tmp_path, "10.0.0.1", games=3) as a:
        b = as_client(a, "10.0.0.2")
        mine = create(a)
        theirs = [create(b), create(b)]
        r = b.post("/api/games", json={"game": "rook"})
        assert r.status_code == 503 and "the server is full: 3 games in progress" in r.json()["error"]
        play_out(b, theirs[0], theirs[0]["token"])
        assert create(b)  # room made by forgetting the finished game, not the oldest one
        assert b.get(f"/api/games/{theirs[0]['id']}", headers={TOKEN_HEADER: theirs[0]["token"]}).status_code == 404
        assert a.get(f"/api/games/{mine['id']}", headers={TOKEN_HEADER: mine["token"]}).status_code == 200


def test_a_game_left_idle_makes_room(tmp_path):
    with limited(tmp_path, "10.0.0.1", games=2, idle_seconds=0.2) as a:
        kept, old = create(a), create(a)  # the older one is kept: it is used again
        time.sleep(0.3)
        assert a.get(f"/api/games/{kept['id']}", headers={TOKEN_HEADER: kept["token"]}).status_code == 200  # used
        assert create(a)
        assert a.get(f"/api/games/{old['id']}", headers={TOKEN_HEADER: old["token"]}).status_code == 404
        assert a.get(f"/api/games/{kept['id']}", headers={TOKEN_HEADER: kept["token"]}).status_code == 200


def test_games_nobody_moved_in_are_reclaimed_soon_and_the_503_says_when(tmp_path):
    """Ten clients fill the server with games they never move in (and keep asking about): a new client is told when
    to come back (message and Retry-After), and gets its game once the untouched games' time is up, not after the
    30-minute idle time. A game its person moved in stays in progress."""
    with limited(tmp_path, "10.0.0.1", games=11, untouched_seconds=1.0) as a:
        played = create(a)
        step = a.post(f"/api/games/{played['id']}/move", headers={TOKEN_HEADER: played["token"]},
                      json={"seat": played["seat"], "action": played["legal"][0]["action"]})
        assert step.status_code == 200, step.text
        fillers = [create(as_client(a, f"10.0.1.{i}")) for i in range(10)]
        late = as_client(a, "10.0.2.1")
        r = late.post("/api/games", json={"game": "rope_team", "agents": ["simple"]})
        assert r.status_code == 503 and "the server is full: 11 games in progress; try again in 1 s" in r.json()[
            "error"], r.text
        assert r.headers["retry-after"] == "1"
        time.sleep(0.6)
        for view in fillers:  # requests about a game do not keep an untouched game in progress
            assert a.get(f"/api/games/{view['id']}", headers={TOKEN_HEADER: view["token"]}).status_code == 200
        time.sleep(0.5)
        for _ in range(10):
            assert create(late)
        assert a.get(f"/api/games/{played['id']}", headers={TOKEN_HEADER: played["token"]}).status_code == 200
        gone = [v for v in fillers if a.get(f"/api/games/{v['id']}", headers={TOKEN_HEADER: v["token"]}).status_code
                == 404]
        assert len(gone) == 10


def test_the_per_client_refusal_says_when_a_game_frees_up(tmp_path):
    with limited(tmp_path, "10.0.0.1", games_per_client=2, untouched_seconds=50.0) as a:
        create(a), create(a)
        r = a.post("/api/games", json={"game": "rook"})
        assert r.status_code == 429 and "or try again in 50 s" in r.json()["error"] and r.headers["retry-after"] == "50"


def reply_to(s: socket.socket) -> str:
    """A whole HTTP reply (headers and the body its Content-Length gives) from a raw socket."""
    data = b""
    while b"\r\n\r\n" not in data:
        data += s.recv(4096)
    head, body = data.split(b"\r\n\r\n", 1)
    length = int(next(line.split(b":")[1] for line in head.split(b"\r\n")
                      if line.lower().startswith(b"content-length")))
    while len(body) < length:
        body += s.recv(4096)
    return (head + b"\r\n\r\n" + body).decode()


def test_a_huge_body_is_refused_before_it_is_read(real):
    _, port = real
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:  # 40 MiB declared, not one byte sent
        s.sendall(f"POST /api/games HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
                  f"Content-Length: {40 << 20}\r\n\r\n".encode())
        reply = reply_to(s)  # a server waiting for the body times out here
    assert reply.startswith("HTTP/1.1 413") and '{"error":"the request body is over 16384 bytes"}' in reply
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:  # chunked: no length given
        s.sendall(f"POST /api/games HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
                  "Transfer-Encoding: chunked\r\n\r\n".encode())
        for _ in range(3):
            s.sendall(b"2000\r\n" + b"x" * 0x2000 + b"\r\n")
        reply = reply_to(s)  # no end chunk sent: a server waiting for the whole body times out here
    assert reply.startswith("HTTP/1.1 413")


def test_no_input_is_echoed_back_whole(client):
    r = client.post("/api/games", content=b'{"game": "' + b"x" * (40 << 20) + b'"}',
                    headers={"Content-Type": "application/json"})
    assert r.status_code == 413 and len(r.text) < 200
    app = create_app(client.data, limits=Limits(body_bytes=1 << 30))
    with TestClient(app, base_url=LOCAL) as big:
        for body in [{"game": "x" * (4 << 20)}, {"game": "rook", "x" * 50000: 1},
                     {"game": "rook", "seat": "y" * 50000}]:
            r = big.post("/api/games", json=body)
            assert r.status_code in (400, 422) and len(r.json()["error"]) < 400, r.text[:500]
        r = big.get("/api/games/" + "z" * 10000)
        assert r.status_code == 404 and len(r.json()["error"]) < 300
    assert quote("a" * 500) == repr("a" * 500)[:97] + "..." and quote("ok") == "'ok'"


def test_errors_are_always_json_with_an_error(client):
    view = create(client)
    for method, path, content, status, message in [
        ("GET", "/nope", None, 404, "no such address: GET '/nope'"),
        ("DELETE", "/api/catalog", None, 405, "method not allowed: DELETE '/api/catalog'"),
        ("POST", "/api/games", b"hello", 422, "malformed request"),
        ("POST", f"/api/games/{view['id']}/move", b"\xff\xfe", 422, "malformed request"),
        ("POST", "/api/games", b'{"game": ', 422, "JSON decode error"),
    ]:
        r = client.request(method, path, content=content, headers={TOKEN_HEADER: view["token"],
                                                                   "Content-Type": "application/json"})
        assert r.status_code == status and r.json() == {"error": r.json()["error"]}, r.text
        assert message in r.json()["error"]
    r = client.post("/api/games", content=b"hello", headers={"Content-Type": "text/plain"})
    assert r.status_code == 422 and "malformed request" in r.json()["error"]
    assert client.delete("/api/catalog").headers["allow"] == "GET"


def test_a_page_sending_too_much_on_its_socket_is_closed(client):
    view = create(client)  # a turn-based game: nothing is pushed but after a move
    live = client.app_games.games[view["id"]]
    url = f"ws://127.0.0.1:8000/api/games/{view['id']}/events?token={view['token']}"  # (not base_url's host)

    def move_then_receive(ws):  # a socket still open gets the move's push: no wait for a close that never comes
        time.sleep(0.3)
        view = live.view()
        client.post(f"/api/games/{view['id']}/move", headers={TOKEN_HEADER: live.token},
                    json={"seat": view["seat"], "action": view["legal"][0]["action"]})
        ws.receive_json()

    with client.websocket_connect(url) as ws:
        ws.receive_json()
        for _ in range(40):
            ws.send_text("hi")
        with pytest.raises(WebSocketDisconnect) as closed:
            move_then_receive(ws)
    assert closed.value.code == 1008 and "messages a second" in closed.value.reason
    with client.websocket_connect(url) as ws:
        ws.receive_json()
        ws.send_text("x" * 20000)
        with pytest.raises(WebSocketDisconnect) as closed:
            move_then_receive(ws)
    assert closed.value.code == 1009
    time.sleep(0.1)
    assert not live.listeners
    with client.websocket_connect(url) as ws:  # a page that sends a little is kept
        ws.receive_json()
        for _ in range(5):
            ws.send_text("hi")
        time.sleep(0.2)
        assert live.listeners


# ---------------------------------------------------------------------------- cardzoo serve
def test_serve_on_a_network_address_warns_that_it_is_exposed(tmp_path):
    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "cardzoo.evaluation.cli", "serve", "--host", "0.0.0.0", "--port",
                                str(port), "--data", str(tmp_path), "--allow-host", "study.lan"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while ask_or_none(port) is None:
            assert process.poll() is None and time.monotonic() < deadline, process.communicate()
            time.sleep(0.2)
        assert ask(port, "GET", "/api/catalog", Host=f"study.lan:{port}")[0] == 200
        assert ask(port, "GET", "/api/catalog", Host=f"evil.example:{port}")[0] == 400
        assert ask(port, "GET", "/docs")[0] == 404
    finally:
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=30)
    assert "WARNING: listening on 0.0.0.0, so other machines can reach this server" in err
    assert "Every game needs its secret token" in err and "study.lan" in err


def ask_or_none(port: int):
    try:
        return ask(port, "GET", "/api/catalog")
    except OSError:
        return None


@pytest.mark.parametrize("name", ["a*b", "*", "study.lan:8000", "http://study.lan", "a_b", "a b"])
def test_serve_refuses_a_name_a_host_header_cannot_give(name, capsys):
    from cardzoo.evaluation.cli import build_parser
    with pytest.raises(SystemExit) as stopped:  # the parser alone: a name let through must not start a server here
        build_parser().parse_args(["serve", "--allow-host", name])
    assert stopped.value.code == 2
    assert "argument --allow-host: expected a host name or address (no port or scheme)" in capsys.readouterr().err


def test_loopback_addresses():
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost") and is_loopback("127.0.0.2")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.2") and not is_loopback("example.com")
