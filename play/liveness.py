"""What keeps a play server (``server.py``) answering: settings, the pages' send queues, the agents' threads, the
saving of games that cannot be written, and the HTTP server's timeouts.

- **Listeners**: each events socket gets a bounded queue of views and a task that sends them. A page that stops
  reading fills its queue and is dropped (its socket closed with 4408), instead of blocking the moves and the
  Summit Rush clock that push to it.
- **Agents off the event loop**: the agents' work (dealing, the agents' moves, Summit Rush ticks) runs in a small
  thread pool (``run_off_loop``), so a busy game cannot slow an unrelated request. An agent's turn that runs longer
  than ``move_timeout`` seconds (counted from when its thread starts it, not while it waits for a thread) raises
  ``AgentTimeout``: the server marks that game broken (a thread cannot be stopped; its result is kept when it ends).
  A job that finds no free thread within ``queue_timeout`` (stuck agents hold them all) is dropped unrun
  (``AgentsBusy``, a 503), so requests never wait without end.
- **Saving** (``Saver``): a game whose record cannot be written stays in memory with a ``save_error`` for the page;
  it is retried whenever any game is saved and when the server stops, and written to ``records``'s fallback file
  if the data file is still unwritable then (or when more than ``MAX_UNSAVED`` wait). Nothing is dropped silently:
  a game that even the fallback cannot take is logged whole.
- **HTTP timeouts** (``serve``): uvicorn's keep-alive timeout, its bound on an incomplete request's size, a cap on
  open connections below the file-descriptor limit, and a header timeout uvicorn lacks (``HeadTimeoutH11``): a
  request must arrive whole within ``header_timeout`` seconds of the connection opening (or of the previous
  response), else the connection is closed, so half-sent requests cannot pile up; and a cap on one address's open
  connections (``connections_per_client``), so one client flooding the server leaves room for the others.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import logging
import resource
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cardzoo.envs.common.errors import CardzooError

from . import records

LOG = logging.getLogger("cardzoo.play.server")
MAX_UNSAVED = 100  # games kept in memory for want of a writable data file; beyond, the oldest go to the fallback


@dataclass(frozen=True)
class Liveness:
    """How a server stays live (``create_app(liveness=...)``, ``serve``)."""

    queue: int = 32  # views waiting for one page; a page this far behind has stopped reading and is dropped
    grace_seconds: float = 60.0  # a game no page listens to any more is abandoned after this long
    move_timeout: float = 30.0  # an agent's turn (its moves between two of the person's, or one tick) at most
    agent_threads: int = 2  # threads for the agents: few, so the event loop keeps its share of the GIL
    queue_timeout: float = 60.0  # a job waits this long for a thread at most (all of them held by stuck agents)
    close_timeout: float = 5.0  # closing a dropped page's socket waits at most this long
    header_timeout: float = 10.0  # a request must arrive whole within this many seconds (serve)
    keep_alive: int = 5  # an idle kept-alive connection is closed after this many seconds (serve)
    max_head_bytes: int = 16 * 1024  # an incomplete request's head at most (serve; uvicorn's h11 bound)
    # Open connections from one address (serve): beyond, a new one is closed at once, so one client cannot take
    # the server-wide cap from everyone else. A browser opens about six, plus one events socket per game it shows.
    # Never more than half the server-wide cap (``connection_cap``), whatever this says; None: no such cap.
    connections_per_client: int | None = 64


class AgentTimeout(CardzooError):
    """An agent's turn ran longer than ``Liveness.move_timeout``."""


class AgentsBusy(CardzooError):
    """No agent thread came free within ``Liveness.queue_timeout`` (agents stuck past their timeouts hold them): the
    job was dropped unrun."""


# ---------------------------------------------------------------------------- the pages listening
class Listener:
    """One events socket: a bounded queue of views and the task that sends them in order."""

    def __init__(self, ws, size: int, close_timeout: float):
        self.ws, self.close_timeout = ws, close_timeout
        self.queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue(maxsize=size)
        self.task = asyncio.get_running_loop().create_task(self._send())
        self.dropped = False

    def offer(self, view: dict[str, Any]) -> bool:
        """Queue ``view`` for the page; False if its queue is full (the page stopped reading)."""
        try:
            self.queue.put_nowait(view)
        except asyncio.QueueFull:
            return False
        return True

    async def _send(self) -> None:
        with contextlib.suppress(Exception):  # a page that went away: its socket's handler sees the disconnect
            while True:
                await self.ws.send_json(await self.queue.get())

    def stop(self) -> None:
        self.task.cancel()

    def drop(self, reason: str) -> None:
        """Stop sending and close the socket (in the background: a page that does not read may not take it)."""
        self.dropped = True
        self.stop()
        asyncio.get_running_loop().create_task(self._close(reason))

    async def _close(self, reason: str) -> None:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.ws.close(code=4408, reason=reason[:120]), self.close_timeout)


# ---------------------------------------------------------------------------- the agents' threads
async def run_off_loop(pool: ThreadPoolExecutor, settings: Liveness, fn: Callable, *args) -> Any:
    """``fn(*args)`` in ``pool``; ``AgentTimeout`` if it runs longer than ``settings.move_timeout`` seconds once
    started (the time it waits for a thread does not count: other games are using them), ``AgentsBusy`` if it waits
    longer than ``settings.queue_timeout`` for a thread. A job that started keeps running after a timeout or a
    cancellation; use ``submit`` to get hold of it."""
    return await wait_for_job(submit(pool, fn, *args), settings)


@dataclass
class Job:
    future: asyncio.Future  # the job's result, on the event loop
    started: list[float]  # when a thread took it up (empty while it waits)
    queued: concurrent.futures.Future  # the pool's own future: cancelled only if no thread has taken it up
    began: asyncio.Event  # set when a thread takes it up


def submit(pool: ThreadPoolExecutor, fn: Callable, *args) -> Job:
    started: list[float] = []
    began = asyncio.Event()
    loop = asyncio.get_running_loop()

    def job():
        started.append(time.monotonic())
        loop.call_soon_threadsafe(began.set)
        return fn(*args)

    queued = pool.submit(job)
    return Job(asyncio.wrap_future(queued), started, queued, began)


async def wait_for_job(job: Job, settings: Liveness) -> Any:
    asked = time.monotonic()
    while not job.future.done():
        now = time.monotonic()
        if job.started:
            left = job.started[0] + settings.move_timeout - now
            if left <= 0:
                raise AgentTimeout(f"an agent took longer than {settings.move_timeout:g} s to move")
        else:
            left = asked + settings.queue_timeout - now
            if left <= 0 and job.queued.cancel():  # still unstarted: it never will be
                raise AgentsBusy(f"the server's agents are all busy (waited {settings.queue_timeout:g} s for one)")
        # Neither a timeout nor a cancellation here cancels the job; a job that starts wakes this up (its own
        # timeout runs from then).
        waits = {job.future}
        if not job.started:
            waits.add(asyncio.ensure_future(job.began.wait()))
        try:
            await asyncio.wait(waits, timeout=max(left, 0.01), return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiter in waits - {job.future}:
                waiter.cancel()
    return job.future.result()


# ---------------------------------------------------------------------------- saving
class Saver:
    """Appends games to ``data/games.jsonl``; keeps those that cannot be written and tries them again.

    ``save(entry, game)`` returns None when the entry is written, else the message for the page; ``game`` (any
    object) gets ``save_error`` set and cleared as its entry waits and is written. Thread-safe: games are saved
    from the agents' threads too."""

    def __init__(self, data: Path):
        self.data = Path(data)
        self.unsaved: list[tuple[dict[str, Any], Any]] = []
        self.lock = threading.Lock()

    def __deepcopy__(self, memo):  # one saver per server: a copy of a game still saves through it
        return self

    def save(self, entry: dict[str, Any], game: Any = None) -> str | None:
        with self.lock:
            self._retry()
            try:
                records.append(self.data, entry)
                return None
            except (records.SaveError, OSError) as err:
                message = f"this game could not be saved: {err}; the server keeps it and tries again"
                LOG.error("game %s could not be saved (kept in memory, tried again later): %s", entry.get("game"),
                          err)
                self.unsaved.append((entry, game))
                if game is not None:
                    game.save_error = message
                while len(self.unsaved) > MAX_UNSAVED:
                    self._fallback(*self.unsaved.pop(0))
                return message

    def _retry(self) -> None:
        while self.unsaved:
            entry, game = self.unsaved[0]
            try:
                records.append(self.data, entry)
            except (records.SaveError, OSError):
                return  # still unwritable: keep them all, in order
            self.unsaved.pop(0)
            LOG.warning("game %s saved at last to %s", entry.get("game"), self.data / records.GAMES_FILE)
            if game is not None:
                game.save_error = None

    def _fallback(self, entry: dict[str, Any], game: Any) -> None:
        try:
            path = records.append_fallback(entry)
        except (records.SaveError, OSError) as err:  # the last resort: the log holds the game
            LOG.critical("game %s could be saved nowhere (%s); its entry: %s", entry.get("game"), err,
                         json.dumps(entry))
            return
        LOG.error("game %s was saved to the fallback file %s (the data folder %s could not be written)",
                  entry.get("game"), path, self.data)
        if game is not None:
            game.save_error = (f"this game could not be saved to {self.data / records.GAMES_FILE}; it was saved to "
                               f"{path} instead")

    def close(self) -> None:
        """The server stops: a last try for the games kept, then the fallback file for those still unwritten."""
        with self.lock:
            self._retry()
            while self.unsaved:
                self._fallback(*self.unsaved.pop(0))


# ---------------------------------------------------------------------------- the HTTP server
def head_timeout_protocol(header_timeout: float, per_client: int | None = None):
    """uvicorn's h11 protocol with a header timeout: a connection that has not sent a whole request (head and
    body) ``header_timeout`` seconds after it opened, or after the previous response, is closed. A connection from
    an address that already holds ``per_client`` open connections (HTTP or events sockets) is closed at once."""
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class HeadTimeoutH11(H11Protocol):
        def connection_made(self, transport) -> None:
            super().connection_made(transport)
            if self.limit_concurrency is not None and len(self.connections) > 2 * self.limit_concurrency:
                transport.close()  # past the 503s (uvicorn's, at the limit): no file descriptor held any longer
                return
            if per_client is not None and self.client and self._from_here() > per_client:
                # This address holds its share: the others' connections still get through. Out of the count at
                # once, not when connection_lost runs: a burst of such connections waiting for it would fill
                # uvicorn's limit_concurrency and answer the other clients 503.
                self.connections.discard(self)
                transport.close()
                return
            self._arm()

        def _from_here(self) -> int:
            # uvicorn's connections set holds every open HTTP and WebSocket protocol, each with its peer's address.
            host = self.client[0]
            return sum(1 for c in self.connections if (getattr(c, "client", None) or ("",))[0] == host)

        def _arm(self) -> None:
            self._disarm()
            self._head_timer = self.loop.call_later(header_timeout, self._head_timeout)

        def _disarm(self) -> None:
            timer = getattr(self, "_head_timer", None)
            if timer is not None:
                timer.cancel()
                self._head_timer = None

        def _head_timeout(self) -> None:
            self._head_timer = None
            if self.transport.get_protocol() is not self or self.transport.is_closing():
                return  # a WebSocket now (its own pings find a dead page), or closed already
            if self.conn.their_state in (h11.IDLE, h11.SEND_BODY):
                self.transport.close()  # waiting for a request, or for the rest of one: too late now

        def handle_websocket_upgrade(self, event) -> None:
            self._disarm()
            super().handle_websocket_upgrade(event)

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._arm()  # the next request on this kept-alive connection has the same time to arrive

        def connection_lost(self, exc) -> None:
            self._disarm()
            super().connection_lost(exc)

    return HeadTimeoutH11


def connection_cap() -> int:
    """uvicorn's ``limit_concurrency`` (a 503 beyond it; ``HeadTimeoutH11`` closes connections beyond twice it at
    once) and its ``backlog`` (also how many connections asyncio accepts in one go, before any is looked at): an
    eighth of this process's file-descriptor limit (raised to its hard limit first, as servers do), so that a flood
    of connections never leaves ``accept`` without a descriptor."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and soft < hard:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
            soft = hard
    return max(8, min(1000, soft // 8))


def uvicorn_config(app, host: str, port: int, liveness: Liveness | None = None, log_level: str = "warning",
                   **options):
    """uvicorn's configuration for ``app`` with the timeouts and bounds of ``liveness`` (``options``: uvicorn's
    others, e.g. ``ws_max_size``)."""
    import uvicorn

    liveness = liveness or Liveness()
    cap = connection_cap()
    per_client = liveness.connections_per_client
    per_client = None if per_client is None else min(per_client, cap // 2)
    return uvicorn.Config(app, host=host, port=port, log_level=log_level, **options,
                          http=head_timeout_protocol(liveness.header_timeout, per_client),
                          timeout_keep_alive=liveness.keep_alive,
                          limit_concurrency=cap, backlog=cap, h11_max_incomplete_event_size=liveness.max_head_bytes,
                          timeout_graceful_shutdown=10)


def serve(app, host: str, port: int, liveness: Liveness | None = None, log_level: str = "warning",
          **options) -> None:
    """Run ``app`` with uvicorn and the timeouts of ``liveness`` (``options``: uvicorn's others)."""
    import uvicorn

    with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C: uvicorn has shut down (and the app saved its games)
        uvicorn.Server(uvicorn_config(app, host, port, liveness, log_level, **options)).run()
