"""Probes of a real play server on 127.0.0.1 (a free port, a process of its own), for the liveness tests and as a
script for the measurements in the CHANGELOG:

    python -m tests.server_probes latency [--games 12] [--agent search] [--seconds 20] [--python PY]
    python -m tests.server_probes half-open [--sockets 1100] [--nofile 1024] [--python PY]
    python -m tests.server_probes flood [--sockets 1100] [--seconds 20] [--python PY]

``latency``: the time ``GET /api/catalog`` takes while ``--games`` Summit Rush games with ``--agent`` tick (each
watched by a page that reads its events), against the bare figure. ``half-open``: ``--sockets`` connections each
holding half a request, then the time until a normal request is answered, with the server's file-descriptor limit
set to ``--nofile``. ``--python`` runs the server with another interpreter (another checkout's venv: the "before"
figures); it is started with ``cardzoo serve`` there. ``flood``: one address (127.0.0.2) keeps ``--sockets`` half-sent
requests open, reopening each the server closes, while another (127.0.0.1) asks for the catalog ten times a second;
then how many of the other's requests were answered."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

# Runs the app with chosen Liveness settings: argv = data folder, port, settings as JSON.
# ``send_buffer`` (bytes) makes the kernel's send buffer of every connection small, as on a slow network, so that
# a page that stops reading is felt after a few views rather than megabytes of them (loopback's buffers grow).
SERVE = """\
import json, socket, sys
import uvicorn
from cardzoo.play.liveness import Liveness, uvicorn_config
from cardzoo.play.server import create_app
settings = json.loads(sys.argv[3])
send_buffer = settings.pop("send_buffer", None)
liveness = Liveness(**settings)
config = uvicorn_config(create_app(sys.argv[1], seed=0, liveness=liveness), "127.0.0.1", int(sys.argv[2]), liveness,
                        log_level="info")
listener = socket.socket()
listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
if send_buffer:
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, send_buffer)  # the accepted sockets inherit it
listener.bind(("127.0.0.1", int(sys.argv[2])))
try:
    uvicorn.Server(config).run(sockets=[listener])
except KeyboardInterrupt:
    pass
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Server:
    url: str
    port: int
    process: subprocess.Popen
    log: list[str] = field(default_factory=list)  # its stderr, line by line, as it comes

    def stderr(self) -> str:
        return "".join(self.log)


@contextlib.contextmanager
def running_server(data: Path, python: str = sys.executable, nofile: int | None = None, plain: bool = False,
                   **liveness) -> Iterator[Server]:
    """A server process on a free port with ``liveness`` settings (``plain``: ``cardzoo serve`` as it is);
    ``nofile`` sets its file-descriptor limit (soft and hard)."""
    port = free_port()
    if plain:
        args = [python, "-m", "cardzoo.evaluation.cli", "serve", "--port", str(port), "--data", str(data)]
    else:
        args = [python, "-c", SERVE, str(data), str(port), json.dumps(liveness)]

    def limit():
        if nofile:
            resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))

    process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, preexec_fn=limit)
    server = Server(f"http://127.0.0.1:{port}/", port, process)
    reader = threading.Thread(target=lambda: server.log.extend(iter(process.stderr.readline, "")), daemon=True)
    reader.start()
    deadline = time.monotonic() + 60
    while True:
        try:
            get(server.url + "api/catalog", timeout=5)
            break
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                raise AssertionError(f"the server did not start: {server.stderr()}") from None
            time.sleep(0.2)
    try:
        yield server
    finally:
        process.send_signal(2)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        reader.join(timeout=5)


def get(url: str, token: str | None = None, timeout: float = 10) -> dict:
    request = urllib.request.Request(url, headers={"X-Cardzoo-Token": token} if token else {})
    with urllib.request.urlopen(request, timeout=timeout) as r:
        return json.loads(r.read())


def post(url: str, body: dict, token: str | None = None, timeout: float = 10) -> tuple[int, dict]:
    headers = {"Content-Type": "application/json", **({"X-Cardzoo-Token": token} if token else {})}
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read() or b"{}")


def new_game(url: str, **body) -> dict:
    status, view = post(url + "api/games", body)
    assert status == 201, view
    return view


def events_url(server_url: str, view: dict) -> str:
    token = view.get("token")
    return server_url.replace("http", "ws", 1) + f"api/games/{view['id']}/events" + (f"?token={token}" if token
                                                                                     else "")


def silent_listener(port: int, view: dict, receive_buffer: int = 4096) -> socket.socket:
    """An events socket that completes the handshake and then never reads: a page that stopped reading."""
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
    s.connect(("127.0.0.1", port))
    path = f"/api/games/{view['id']}/events" + (f"?token={view['token']}" if view.get("token") else "")
    s.sendall((f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = s.recv(1)  # byte by byte up to the head's end: nothing of the first frame is read
        assert chunk, "the server closed the events socket during the handshake"
        head += chunk
    assert head.startswith(b"HTTP/1.1 101"), head
    return s


@contextlib.contextmanager
def reading_listeners(server_url: str, views: list[dict]) -> Iterator[list[int]]:
    """A page per game that reads its events (which starts Summit Rush's clock); yields the pushes counted."""
    from websockets.exceptions import ConnectionClosed
    from websockets.sync.client import connect

    counts = [0] * len(views)
    closed: list[Exception] = []
    stop = threading.Event()

    def read(i, view):
        with connect(events_url(server_url, view), max_size=None) as ws:
            while not stop.is_set():
                with contextlib.suppress(TimeoutError):
                    try:
                        pushed = json.loads(ws.recv(timeout=0.5))
                    except ConnectionClosed as err:
                        closed.append(err)
                        return
                    counts[i] += 1
                    if pushed.get("over"):
                        return

    threads = [threading.Thread(target=read, args=(i, v), daemon=True) for i, v in enumerate(views)]
    for t in threads:
        t.start()
    try:
        yield counts
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=5)
    assert not closed, f"the server closed an events socket: {closed}"


def latencies(url: str, seconds: float, every: float = 0.05) -> list[float]:
    out = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        t = time.perf_counter()
        get(url + "api/catalog", timeout=30)
        out.append(time.perf_counter() - t)
        time.sleep(every)
    return out


def summary(times: list[float]) -> str:
    ms = sorted(1000 * t for t in times)
    return (f"n={len(ms)} median {statistics.median(ms):.1f} ms, p95 {ms[int(0.95 * (len(ms) - 1))]:.1f} ms, "
            f"max {ms[-1]:.1f} ms")


def latency_probe(server: Server, games: int, agent: str, seconds: float, pace: float) -> dict[str, str]:
    get(server.url + "api/catalog")  # warm (the first catalog works out the agents offered)
    idle = latencies(server.url, min(seconds, 5.0))
    views = [new_game(server.url, game="summit_rush", variant="normal", agents=[agent], seconds_per_move=pace)
             for _ in range(games)]
    with reading_listeners(server.url, views) as counts:
        time.sleep(1.0)
        busy = latencies(server.url, seconds)
    return {"idle": summary(idle), "busy": summary(busy), "pushes": str(sum(counts))}


def half_open(server: Server, sockets: int, wait: float, settle: float = 0.0) -> tuple[float | None, int, int]:
    """``sockets`` connections holding half a request each; then the seconds until a normal request is answered
    (None: not within ``wait``), and the most file descriptors the server process had open meanwhile and how many
    it has open ``settle`` seconds later (read from /proc: the probe runs on the same machine)."""
    held = []
    for _ in range(sockets):
        s = socket.socket()
        s.setblocking(False)
        with contextlib.suppress(BlockingIOError, OSError):
            s.connect(("127.0.0.1", server.port))
        held.append(s)
    time.sleep(0.2)
    for s in held:
        with contextlib.suppress(OSError):
            s.send(f"GET /api/catalog HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\nX-Slow: ".encode())
    most = descriptors(server)
    start = time.monotonic()
    answered = None
    while time.monotonic() - start < wait:
        most = max(most, descriptors(server))
        try:
            get(server.url + "api/catalog", timeout=max(0.1, wait - (time.monotonic() - start)))
            answered = time.monotonic() - start
            break
        except OSError:
            time.sleep(0.1)
    time.sleep(settle)
    after = descriptors(server)
    for s in held:
        s.close()
    return answered, most, after


def flood(server: Server, sockets: int, seconds: float, every: float = 0.1,
          source: str = "127.0.0.2") -> dict[str, object]:
    """One address (``source``, another loopback address than the client's) holds ``sockets`` half-sent requests,
    opening a new one for each the server closes, while this client asks for the catalog every ``every`` seconds
    for ``seconds``: how many of its requests were answered (200), and how they failed otherwise."""
    head = f"GET /api/catalog HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\nX-Slow: ".encode()
    stop = threading.Event()
    opened = [0]

    def open_one() -> socket.socket:
        s = socket.socket()
        s.bind((source, 0))
        s.setblocking(False)
        with contextlib.suppress(BlockingIOError, OSError):
            s.connect(("127.0.0.1", server.port))
        opened[0] += 1
        return s

    def attack() -> None:
        held = [open_one() for _ in range(sockets)]
        sent = [False] * sockets
        while not stop.is_set():
            for i, s in enumerate(held):
                try:
                    if not sent[i]:
                        s.send(head)
                        sent[i] = True
                    elif s.recv(1) == b"":
                        raise ConnectionResetError  # closed by the server: open another
                except (BlockingIOError, InterruptedError):
                    continue  # still connecting, or still open and silent
                except OSError:
                    s.close()
                    held[i], sent[i] = open_one(), False
            stop.wait(0.05)
        for s in held:
            s.close()

    attacker = threading.Thread(target=attack, daemon=True)
    attacker.start()
    time.sleep(1.0)  # the flood is at full strength before the first request
    times, failures = [], {}
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        t = time.perf_counter()
        try:
            get(server.url + "api/catalog", timeout=5)
            times.append(time.perf_counter() - t)
        except urllib.error.HTTPError as err:
            failures[str(err.code)] = failures.get(str(err.code), 0) + 1
        except OSError as err:
            failures[type(err).__name__] = failures.get(type(err).__name__, 0) + 1
        time.sleep(every)
    stop.set()
    attacker.join(timeout=10)
    return {"answered": len(times), "failed": failures, "flood_connections_opened": opened[0],
            "answered_in": summary(times) if times else None}


def descriptors(server: Server) -> int:
    return len(os.listdir(f"/proc/{server.process.pid}/fd"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="probe", required=True)
    lat = sub.add_parser("latency")
    lat.add_argument("--games", type=int, default=12)
    lat.add_argument("--agent", default="search")
    lat.add_argument("--seconds", type=float, default=20.0)
    lat.add_argument("--pace", type=float, default=0.25)
    half = sub.add_parser("half-open")
    half.add_argument("--sockets", type=int, default=1100)
    half.add_argument("--nofile", type=int, default=1024)
    half.add_argument("--wait", type=float, default=30.0)
    half.add_argument("--settle", type=float, default=15.0)
    fl = sub.add_parser("flood")
    fl.add_argument("--sockets", type=int, default=1100)
    fl.add_argument("--seconds", type=float, default=20.0)
    fl.add_argument("--nofile", type=int, default=None, help="the server's file-descriptor limit (default: as is)")
    fl.add_argument("--no-per-client-cap", action="store_true",
                    help="Liveness.connections_per_client=None: the server without the per-client cap (the before)")
    for p in (lat, half, fl):
        p.add_argument("--python", default=sys.executable, help="the server's interpreter (another checkout's venv)")
        p.add_argument("--plain", action="store_true", help="start it with cardzoo serve as it is")
    args = parser.parse_args()
    import tempfile

    with tempfile.TemporaryDirectory() as data:
        if args.probe == "latency":
            with running_server(Path(data), args.python, plain=args.plain) as server:
                print(latency_probe(server, args.games, args.agent, args.seconds, args.pace))
        elif args.probe == "flood":
            settings = {"connections_per_client": None} if args.no_per_client_cap else {}
            with running_server(Path(data), args.python, nofile=args.nofile, plain=args.plain, **settings) as server:
                print({"sockets": args.sockets, "seconds": args.seconds,
                       **flood(server, args.sockets, args.seconds)})
        else:
            with running_server(Path(data), args.python, nofile=args.nofile, plain=args.plain) as server:
                idle = descriptors(server)
                answered, most, after = half_open(server, args.sockets, args.wait, settle=args.settle)
                print({"sockets": args.sockets, "nofile": args.nofile, "answered_after_s": answered,
                       "server_fds": {"idle": idle, "most": most, f"{args.settle:g}_s_later": after}})


if __name__ == "__main__":
    main()
