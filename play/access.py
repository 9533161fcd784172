"""Who may use a play server, and how much: the access rules and limits of ``cardzoo serve`` (``server.py``).

- **Host**: the ``Host`` header must name the address served (Starlette's ``TrustedHostMiddleware``; a server on a
  loopback address takes ``127.0.0.1``, ``localhost`` and ``[::1]``). A page of another site whose name was made to
  resolve to this machine (DNS rebinding) sends its own name and is refused (400). The port is not compared: the
  connection has reached this port already, and a forwarded port would otherwise be refused.
- **Origin**: a WebSocket handshake or a state-changing request (any method but GET, HEAD, OPTIONS) that carries an
  ``Origin`` header is refused (403) unless the Origin's ``host[:port]`` is the request's ``Host``: the server's
  own page. Without an ``Origin`` it is let through: browsers send one on every WebSocket handshake and every
  cross-site POST, so a request without one comes from a program (curl, a script), which the token still binds.
- **Tokens** (``server.py``): each game's person's seat has a secret token, returned once to the request that made
  the game; reading the game, moving, playing again and the events socket need it.
- **Limits** (``Limits``): request bodies (413, refused before they are read), messages on an events socket
  (closed with 1008, or 1009 for one too big), games in progress per client and in total, new games per minute
  per client (429 or 503 in ``server.py``).

Refusals are JSON, ``{"error": message}``, and quote at most ``QUOTE`` characters of what was sent (``quote``).
"""

from __future__ import annotations

import socket
import time
from collections import defaultdict, deque
from dataclasses import dataclass
from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from cardzoo.envs.common.addresses import is_loopback

QUOTE = 100  # characters of any input a message quotes
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")  # as a Host header spells them: IPv6 in brackets
SAFE_METHODS = ("GET", "HEAD", "OPTIONS")


@dataclass(frozen=True)
class Limits:
    """How much one server takes (``create_app(limits=...)``); beyond each, a refusal that names it."""

    games: int = 200  # games held at once; finished (then idle) games are forgotten first, never one in progress
    games_per_client: int = 20  # games in progress made by one client (remote address)
    creations_per_minute: int = 30  # new games (POST /api/games and /again) per client in any 60 s
    body_bytes: int = 16 * 1024  # a request body, and a message on an events socket
    ws_messages_per_second: float = 10.0  # what a page may send on its events socket (the page itself sends nothing)
    ws_burst: int = 20  # ... in a burst, beyond that rate
    idle_seconds: float = 1800.0  # a game nobody listens to or moves in for this long is no longer "in progress"
    # A game whose person never moved and that no page listens to is no longer "in progress" this long after it was
    # made, whatever requests it gets: games made and left (or made to fill the server) are reclaimed soon.
    untouched_seconds: float = 120.0


def quote(value: object) -> str:
    """``repr(value)`` cut to ``QUOTE`` characters: a message never echoes a huge input back."""
    text = repr(value)
    return text if len(text) <= QUOTE else text[: QUOTE - 3] + "..."


def allowed_hosts(host: str, extra: list[str] | tuple[str, ...] = ()) -> list[str]:
    """The ``Host`` names a server bound to ``host`` answers: the loopback names always; for a wildcard address
    (``0.0.0.0``, ``::``) also this machine's name and addresses; for another address, that address; plus
    ``extra`` (``cardzoo serve --allow-host``)."""
    names = list(LOOPBACK_NAMES)
    if host in ("0.0.0.0", "::", ""):
        machine = socket.gethostname()
        names += [machine, socket.getfqdn()]
        try:
            names += [info[4][0] for info in socket.getaddrinfo(machine, None)]
        except OSError:  # a machine name that does not resolve: the names above, and --allow-host
            pass
    elif not is_loopback(host):
        names.append(host)
    bracketed = (f"[{n.strip('[]')}]" if ":" in n else n for n in [*names, *extra])
    return list(dict.fromkeys(n.lower() for n in bracketed))


def refuse(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


class OriginGuard:
    """Refuses a WebSocket handshake or a state-changing request from a page of another origin (403)."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket" or scope["type"] == "http" and scope["method"] not in SAFE_METHODS:
            headers = Headers(scope=scope)
            origin = headers.get("origin")
            if origin is not None and not same_origin(origin, headers.get("host", "")):
                what = "an events socket" if scope["type"] == "websocket" else "a request"
                await refuse(403, f"refused {what} from the page at {quote(origin)}: this server takes moves "
                                  "only from its own page")(scope, receive, send)
                return
        await self.app(scope, receive, send)


def same_origin(origin: str, host: str) -> bool:
    """Whether a browser's ``Origin`` is the page the server itself served at ``host`` (the ``Host`` header)."""
    try:
        parts = urlsplit(origin)
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(host) and parts.netloc.lower() == host.lower()


class BodyLimit:
    """Refuses a request body over ``limit`` bytes with 413, reading at most ``limit`` bytes of it: a declared
    ``Content-Length`` over the limit is refused at once, a chunked body once it passes the limit."""

    def __init__(self, app: ASGIApp, limit: int):
        self.app, self.limit = app, limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        too_big = refuse(413, f"the request body is over {self.limit} bytes")
        declared = Headers(scope=scope).get("content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.limit):
            await too_big(scope, receive, send)
            return
        body, more = [], True
        size = 0
        while more:
            message = await receive()
            if message["type"] != "http.request":  # the client went away
                return
            body.append(message.get("body", b""))
            size += len(body[-1])
            more = message.get("more_body", False)
            if size > self.limit:
                await too_big(scope, receive, send)
                return
        whole: Message | None = {"type": "http.request", "body": b"".join(body), "more_body": False}

        async def replay() -> Message:
            nonlocal whole
            if whole is not None:
                message, whole = whole, None
                return message
            return await receive()

        await self.app(scope, replay, send)


class SocketLimit:
    """Closes an events socket whose client sends more than ``rate`` messages a second (beyond a ``burst``: code
    1008, policy violation) or one message over ``size`` bytes (1009, too big); the app sees a disconnect."""

    def __init__(self, app: ASGIApp, rate: float, burst: int, size: int):
        self.app, self.rate, self.burst, self.size = app, rate, burst, size

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "websocket":
            await self.app(scope, receive, send)
            return
        allowance, last = float(self.burst), time.monotonic()

        async def limited() -> Message:
            nonlocal allowance, last
            message = await receive()
            if message["type"] != "websocket.receive":
                return message
            now = time.monotonic()
            allowance = min(float(self.burst), allowance + (now - last) * self.rate)
            last = now
            data = message.get("text") or message.get("bytes") or ""
            if len(data) > self.size:
                code, reason = 1009, f"a message over {self.size} bytes"
            elif allowance < 1:
                code, reason = 1008, f"more than {self.rate:g} messages a second"
            else:
                allowance -= 1
                return message
            await send({"type": "websocket.close", "code": code, "reason": reason})
            return {"type": "websocket.disconnect", "code": code, "reason": reason}

        await self.app(scope, limited, send)


class CreationRate:
    """New games per client in a sliding minute."""

    def __init__(self, per_minute: int):
        self.per_minute = per_minute
        self.times: dict[str, deque[float]] = defaultdict(deque)

    def wait(self, client: str, now: float | None = None) -> float:
        """0 if ``client`` may make a game now (and counts it), else the seconds until it may."""
        now = time.monotonic() if now is None else now
        times = self.times[client]
        while times and times[0] <= now - 60:
            times.popleft()
        if len(times) >= self.per_minute:
            return times[0] + 60 - now
        times.append(now)
        for other in [c for c, t in self.times.items() if t[-1] <= now - 60]:  # no entry for a client gone quiet
            del self.times[other]
        return 0.0
