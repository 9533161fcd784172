"""``cardzoo serve``: play with the agents in a browser (a local FastAPI app; the ``web`` extra).

The page (``static/``: plain HTML, CSS and JavaScript, no build step) asks for a game, a level or variant, a seat
and the agents, then shows the table as that seat sees it. The JSON API behind it:

    GET  /api/catalog                  the games, their variants, seats, agents (``agents_by_variant``: those
                                       each variant seats; the page offers only these) and Summit Rush's paces
    POST /api/games                    {game, variant, seat, agents, seconds_per_move?} -> 201 the new game's view
                                       and its ``token`` (sent this once)
    GET  /api/games/{id}               the person's view of the table                               (token)
    POST /api/games/{id}/move          {seat, action, message?, step?} -> the view after the move     (token)
    POST /api/games/{id}/again         {deal: "same" | "new"} -> 201 a new game (same seating; same or new deal)
                                       and its token; "same" only once the game is over (409 before)  (token)
    WS   /api/games/{id}/events?token= the view, pushed after every change (Summit Rush's clock ticks)

Access (``access.py`` has the rules in full): the server is a local service. It listens on 127.0.0.1 unless told
otherwise, answers only ``Host`` names of the address it serves (400 otherwise: DNS rebinding), and refuses (403)
a WebSocket handshake or a POST whose ``Origin`` is not its own page (no ``Origin``, as from curl, is let through).
Each game's person's seat has a secret token, returned once by the request that made the game and needed by every
request about the game: the ``X-Cardzoo-Token`` header, or on the events socket the ``token`` query parameter (a
browser cannot set a WebSocket's headers; the parameter is checked before the socket opens). A missing or wrong
token is a 403 (the socket: closed with 4403 before it opens), so a second tab, another program or another
machine cannot read or play the seat. ``/docs``, ``/redoc`` and ``/openapi.json`` are off unless ``api_docs``.

A view is built from the person's seat's observations only (``views.py``): never from the game state, and without
the game's seed (which would give the deal away). Deals are seeded from 64 bits of OS randomness (unless the
server has a ``seed``), and a same-deal game is dealt only once the game it repeats is over: its saved record says
``replay_of`` (that game's id; every record has its ``game`` id). Bad requests change nothing and get a 4xx with
``{"error": message}`` (quoting at most 100 characters of any input): an illegal move 400, a missing or wrong token
or another player's seat 403, an unknown (or forgotten) game or address 404, a wrong method 405, a move out of
turn, on a finished game or from a stale view (``step`` is the view's move count) 409, a body over the limit 413,
malformed JSON 422, too many games 429 (per client) or 503 (the server is full). One server holds many games; each
has its own table.

Limits (``create_app(limits=access.Limits(...))``): request bodies (16 KiB: 413, refused unread), games in progress
per client (remote address; 20) and in all (200), new games per client per minute (30), messages a page sends on
its events socket (10 a second beyond a burst of 20: closed with 1008). To make room for a new game the server
forgets finished games first, then games idle for 30 minutes (no page listening, no request) and games made 2
minutes ago that nobody has moved in or opened a page on (whatever requests they get); never a game in progress. A
429 or 503 says when to try again, in its message and in ``Retry-After``.

Summit Rush runs in real time here: the server keeps the clock, one tick every ``seconds_per_move`` (by default the
env's ``seconds_per_action``, 3 s; "practice" is twice as slow), starting when the page connects to the events
socket. The agents act every tick; the person's last click before a tick is their action in it (no click: wait),
with the message chosen beside it. A tick that raises (a bug) stops the clock instead of leaving the page waiting:
the traceback is logged, the view says only that the game stopped on a server error (``broken``; no exception text
or paths), moves get a 409 and the game is saved as far as it went.

Liveness (``liveness.py``; ``create_app(liveness=liveness.Liveness(...))``): the agents' work (dealing, their
moves, ticks) runs in a small thread pool, one lock per game, so a busy game does not slow another request; an
agent's turn past ``move_timeout`` (30 s) stops its game (``broken``, a 503 to the move; saved when the agent's
thread is done). Each events socket has a bounded queue (32 views): a page that stops reading is dropped (closed
with 4408) and the clock and moves go on; whatever a page sends on the socket is ignored. When every page of a game
has left, the game is abandoned after ``grace_seconds`` (60 s) unless one comes back: the clock stops and it is
saved unfinished with ``"abandoned": true`` (``records.rates`` counts it apart, not as a loss). ``cardzoo serve``
runs uvicorn with a header timeout (10 s), a keep-alive timeout (5 s) and a connection cap below the descriptor
limit (``liveness.serve``).

Every game is appended to ``<data>/games.jsonl`` (``records.py``) when it ends; games left unfinished are saved
when they are forgotten (to make room) or when the server stops. A record that cannot be written does not fail the
move: the view says so (``save_error``: "this game could not be saved: ..."), the server keeps the game and tries
again whenever it saves one, and at shutdown writes what is still unsaved to ``records``'s fallback file.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import math
import random
import secrets
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Literal

from fastapi import FastAPI, WebSocket
from fastapi.exceptions import RequestValidationError
from fastapi.requests import Request
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.middleware.trustedhost import TrustedHostMiddleware

from cardzoo.agents.registry import agent_names
from cardzoo.envs.common.errors import CardzooError, GameOverError
from cardzoo.envs.common.seeding import fresh_seed
from cardzoo.envs.registry import GAMES

from . import records
from .access import QUOTE, BodyLimit, CreationRate, Limits, OriginGuard, SocketLimit, allowed_hosts, quote
from .liveness import AgentsBusy, AgentTimeout, Listener, Liveness, Saver, run_off_loop, submit, wait_for_job
from .table import HUMAN, Table, TickTable, refusal
from .views import rules_text

STATIC = Path(__file__).resolve().parent / "static"
TOKEN_HEADER = "X-Cardzoo-Token"
PRACTICE = 2.0  # the practice pace: this many times slower than real time
# A language-model seat's decision budget is the move timeout over this (a Rook turn can hold several decisions:
# naming trumps, discarding, leading), so its turn ends before the timeout stops the game.
MODEL_DECISIONS_PER_TURN = 6
LOG = logging.getLogger(__name__)
# What the page is told when a game stops on a bug: the log has the traceback, the page no paths or exception text.
SERVER_ERROR = "the game stopped on a server error; it was saved as far as it went"

# What the page offers: per game its title, variants (env options) and which agents may sit at it, from the registry
# (cardzoo.envs.registry). The turn-based games come first and the real-time ones last, each in registration order.
CATALOG: dict[str, dict[str, Any]] = {
    spec.name: {"env": spec.env_id, "title": spec.title, "default": spec.default_variant, "variants": spec.variants()}
    for spec in sorted(GAMES.values(), key=lambda s: s.parallel)
}
for _spec in CATALOG.values():
    _spec["agents"] = sorted(agent_names(_spec["env"]), key=lambda n: (n != "learned", n))
    _spec["rules"] = rules_text(_spec["env"])  # the seat view's: the page has no file of a game's own


@functools.cache
def offered(game: str) -> dict[str, list[str]]:
    """Per variant of ``game``, the agents the page offers: those a table opens with, in either seat (the very
    check a new game makes; a learned policy trained on other levels is refused), in the catalog's order."""
    spec = CATALOG[game]
    return {variant: [name for name in spec["agents"] if _opens(spec["env"], options, name)]
            for variant, options in spec["variants"].items()}


def _opens(env: str, options: dict[str, Any], agent: str) -> bool:
    try:
        for players in ([HUMAN, agent], [agent, HUMAN]):
            Table.open(env, options, players, 0)
    except CardzooError:
        return False
    return True


class ApiError(Exception):
    """A refusal: its status, its message and, for a refusal that passes, the seconds until it may pass
    (``Retry-After``)."""

    def __init__(self, status: int, message: str, retry_after: float | None = None):
        super().__init__(message)
        self.status, self.retry_after = status, retry_after


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class NewGame(_Body):
    game: str
    variant: str | None = None
    seat: str = "player_0"
    agents: list[str] | None = None  # for the other seats, in seat order (cycled); default the game's first agent
    pace: Literal["real", "practice"] = "real"  # Summit Rush: the env's seconds_per_action, or PRACTICE times that
    seconds_per_move: float | None = Field(None, ge=0.05, le=60.0)  # Summit Rush: any other pace


class MoveIn(_Body):
    seat: str
    action: int
    message: int = 0  # Summit Rush in a talking game: what to say with the move
    step: int | None = None  # the view's move count; a different one means the view is stale


class Again(_Body):
    deal: Literal["same", "new"]


class LiveGame:
    """A game the server holds: its table, the person's seat, the clock (Summit Rush) and the pages listening."""

    def __init__(self, game_id: str, spec: dict[str, Any], table: Table, pace: float | None, data: Path,
                 client: str = "local", replay_of: str | None = None):
        self.id, self.spec, self.table, self.pace, self.data = game_id, spec, table, pace, data
        self.seed = table.seed  # kept on the server: the seed gives the deal away, so no view holds it
        self.token = secrets.token_urlsafe(32)  # the person's seat's: handed once to the page that made the game
        self.client, self.replay_of = client, replay_of
        self.seen = self.made = time.monotonic()  # the last request or page for this game (see ``in_progress``)
        self.touched = False  # the person moved, or a page listened: the game is being played, not only held
        self.seat = table.humans[0]
        self.queued: dict[int, int] = {}
        self.listeners: set[Listener] = set()  # the pages on the events socket, each with its queue
        self.clock: asyncio.Task | None = None
        self.next_tick_at: float | None = None
        self.saved = False
        self.broken: str | None = None  # why the clock stopped before the game's end (a bug, shown to the page)
        self.games: Games | None = None  # the server's (its threads, settings and saver): set by ``Games.add``
        # One game, one lock: held while the game's state is read or changed, across the agents' threads.
        self.lock = asyncio.Lock()
        self.stuck = False  # an agent's turn ran past the move timeout and its thread still holds the game
        self.shown: dict[str, Any] | None = None  # the last view built (what a stuck game shows)
        self.abandoned = False  # every page left and did not come back within the grace period
        self.abandon_timer: asyncio.Task | None = None
        self.save_error: str | None = None  # why the record could not be written (shown to the page)

    def authorise(self, token: str | None) -> None:
        """``ApiError`` 403 unless ``token`` is this game's (compared in constant time)."""
        if not token:
            raise ApiError(403, f"game {self.id} needs its token: send the {TOKEN_HEADER} header (the events socket: "
                                "?token=) with the token the game was made with")
        if not secrets.compare_digest(token.encode("utf-8", "surrogateescape"), self.token.encode()):
            raise ApiError(403, f"wrong token for game {self.id}: only the page that made the game may play it")
        self.seen = time.monotonic()

    def in_progress(self, limits: Limits) -> bool:
        """Whether the game is being played: not over, and a page listens or the game was used lately (one that
        was never touched, only within ``limits.untouched_seconds`` of being made)."""
        return self.free_in(limits) != 0.0

    def free_in(self, limits: Limits) -> float | None:
        """Seconds until the game stops being in progress if nothing happens (0: it is not; None: a page listens,
        so nobody can tell)."""
        if self.table.over or self.broken or self.abandoned:
            return 0.0
        if self.listeners:
            return None
        now = time.monotonic()
        left = limits.idle_seconds - (now - self.seen)
        if not self.touched:
            left = min(left, limits.untouched_seconds - (now - self.made))
        return max(0.0, left)

    def view(self) -> dict[str, Any]:
        table, seat = self.table, self.seat
        view = table.views[seat].to_json()
        catalog = CATALOG[self.spec["game"]]
        view.update({
            "id": self.id, "title": catalog["title"], "variant": self.spec["variant"], "seat": table.seats[seat],
            "players": [{"seat": s, "player": "you" if i == seat else table.players[i]}
                        for i, s in enumerate(table.seats)],
            "steps": table.steps, "over": table.over, "outcome": table.outcome(seat), "info": table.info,
        })
        if self.broken:
            view["broken"] = self.broken
        if self.abandoned:
            view["abandoned"] = True
            view["broken"] = "the game was abandoned: no page was open on it; it was saved as far as it went"
        if self.save_error:
            view["save_error"] = self.save_error
        if isinstance(table, TickTable):
            queued = self.queued.get(seat)
            n_moves = table.env.n_moves
            names = {m.action: m.label for m in table.views[seat].legal}
            view["your_turn"] = not table.over
            view["queued"] = None if queued is None else {
                "action": queued % n_moves, "label": names.get(queued % n_moves, "wait"), "message": queued // n_moves}
            left = None if self.next_tick_at is None else max(0.0, self.next_tick_at - time.monotonic())
            view["clock"] = {"seconds_per_move": self.pace, "running": self.clock is not None and not table.over,
                             "next_tick_in": left}
        else:
            view["your_turn"] = table.to_move == seat
        self.shown = view
        return view

    def move(self, body: MoveIn) -> None:
        table = self.table
        if body.seat not in table.seats:
            raise ApiError(400, f"no seat {quote(body.seat)} at this table; seats: {', '.join(table.seats)}")
        index = table.seats.index(body.seat)
        if index != self.seat:
            raise ApiError(403, f"{body.seat} is played by the agent {table.players[index]!r}; you sit at "
                                f"{table.seats[self.seat]}")
        if table.over:
            raise ApiError(409, f"the game is over: {table.outcome(self.seat)}")
        if self.broken or self.abandoned:
            raise ApiError(409, self.broken or "the game was abandoned: every page on it left")
        if body.step is not None and body.step != table.steps:
            raise ApiError(409, f"stale view: it shows move {quote(body.step)}, the table is at move {table.steps}")
        if isinstance(table, TickTable):
            if not 0 <= body.message < table.env.config.n_messages:
                raise ApiError(400, f"message {quote(body.message)} is not one of 0..{table.env.config.n_messages - 1}"
                                    + ("" if table.env.config.talk else " (this game is silent)"))
            if not 0 <= body.action < table.env.n_moves:
                raise ApiError(400, f"move {quote(body.action)} is out of range 0..{table.env.n_moves - 1}")
            action = body.message * table.env.n_moves + body.action
            table.check(self.seat, action)
            self.queued[self.seat] = action  # the table does not change until the tick: still legal then
            self.touched = True
            return
        if body.message:
            raise ApiError(400, "only Summit Rush's talking games take a message")
        if table.to_move != self.seat:
            raise ApiError(409, f"it is not your turn: {table.seats[table.to_move]} is to move")
        table.play(self.seat, body.action)
        self.touched = True
        table.advance()

    def settle(self) -> dict[str, Any]:
        """A turn-based move's aftermath, in the agents' thread: save a game that ended, and the view to answer."""
        if self.table.over:
            self.save()
        return self.view()

    # ------------------------------------------------------------------------ the agents' threads
    @property
    def settings(self) -> Liveness:
        return self.games.liveness if self.games else Liveness()

    async def run(self, fn, *args) -> Any:
        """``fn(*args)`` in the agents' threads, holding this game's lock until the thread is done with it (even
        if this coroutine is cancelled or times out). An agent's turn past the move timeout marks the game broken
        and raises ``AgentTimeout``."""
        if self.stuck:
            raise ApiError(409, self.broken)
        await self.lock.acquire()
        try:
            job = submit(self.games.pool, fn, *args)
        except BaseException:
            self.lock.release()
            raise
        job.future.add_done_callback(self._job_done)
        try:
            return await wait_for_job(job, self.settings)
        except AgentTimeout as err:
            self.stuck = True
            self.broken = f"the game stopped: {err}; it is saved as far as it went when that agent is done"
            LOG.error("game %s: %s at move %d; the game is stopped", self.id, err, self.table.steps)
            self.push(await self.current_view())
            raise

    def _job_done(self, future: asyncio.Future) -> None:
        self.lock.release()
        if self.stuck:  # the slow agent came back at last: save the game as far as it went
            self.stuck = False
            if not future.cancelled() and future.exception() is not None:
                LOG.error("game %s: the late move failed too", self.id, exc_info=future.exception())
            self.save()
            self.push(self.view())

    async def current_view(self) -> dict[str, Any]:
        """The view now (waiting for a tick or an agent's move of this game in progress)."""
        if self.stuck:  # the game's state is in an agent's thread: what was last shown, stopped
            view = dict(self.shown or {})
            view["broken"] = self.broken
            if "clock" in view:
                view["clock"] = {**view["clock"], "running": False, "next_tick_in": None}
            return view
        async with self.lock:
            return self.view()

    # ------------------------------------------------------------------------ the pages, the clock, saving
    def listen(self, ws: WebSocket) -> Listener:
        """A page connected: its queue of views (and it is not abandoning the game any more)."""
        if self.abandon_timer is not None:
            self.abandon_timer.cancel()
            self.abandon_timer = None
        listener = Listener(ws, self.settings.queue, self.settings.close_timeout)
        self.listeners.add(listener)
        self.touched = True
        return listener

    def unlisten(self, listener: Listener) -> None:
        listener.stop()
        self.listeners.discard(listener)
        if not self.listeners and self.abandon_timer is None and not self.done:
            self.abandon_timer = asyncio.get_running_loop().create_task(self._abandon_later())

    @property
    def done(self) -> bool:
        return self.table.over or bool(self.broken) or self.abandoned

    async def _abandon_later(self) -> None:
        await asyncio.sleep(self.settings.grace_seconds)
        self.abandon_timer = None
        if self.listeners or self.done or self.stuck:
            return
        if self.clock is not None:
            self.clock.cancel()
        async with self.lock:  # a tick under way ends first
            if self.done:
                return
            self.abandoned = True
            self.save()
        LOG.info("game %s: abandoned at move %d (no page came back within %g s)", self.id, self.table.steps,
                 self.settings.grace_seconds)

    def push(self, view: dict[str, Any]) -> None:
        """Queue ``view`` for every page listening; a page too far behind (it stopped reading) is dropped."""
        for listener in list(self.listeners):
            if not listener.offer(view):
                LOG.warning("game %s: dropped a page that stopped reading its events (%d views behind)", self.id,
                            listener.queue.qsize())
                listener.drop("this page stopped reading the game's events")
                self.unlisten(listener)

    def start_clock(self) -> None:
        if isinstance(self.table, TickTable) and self.clock is None and not self.done and not self.stuck:
            self.clock = asyncio.get_running_loop().create_task(self._run_clock())

    async def _run_clock(self) -> None:
        loop = asyncio.get_running_loop()
        next_at = loop.time()
        try:
            while not self.table.over:
                next_at += self.pace
                self.next_tick_at = time.monotonic() + (next_at - loop.time())
                self.push(await self.current_view())
                await asyncio.sleep(max(0.0, next_at - loop.time()))
                await self.run(self.tick)
        except AgentTimeout:
            pass  # ``run`` stopped the game
        except AgentsBusy as err:  # no thread for this game's tick (stuck agents of other games hold them)
            LOG.error("game %s: the clock stopped at tick %d: %s", self.id, self.table.steps, err)
            self.broken = f"the game stopped: {err}; it was saved as far as it went"
            async with self.lock:
                self.save()
        except Exception:  # a task's exception is otherwise silent: the page would wait for a tick forever
            LOG.exception("game %s: the clock stopped at tick %d", self.id, self.table.steps)
            self.broken = SERVER_ERROR
            async with self.lock:
                self.save()
        finally:
            self.next_tick_at = None
            self.clock = None
        self.push(await self.current_view())

    def tick(self) -> None:
        """One tick of Summit Rush with the moves queued since the last (a person without one waits)."""
        moves, self.queued = self.queued, {}
        self.table.tick(moves)
        if self.table.over:
            self.save()

    def save(self) -> None:
        """Append the game to the data file once (finished or, when forgotten, as far as it went). A record that
        cannot be written is kept by the server's ``Saver`` (tried again, then the fallback file) and the view
        says so (``save_error``)."""
        if self.saved or not self.table.over and not self.table.steps:
            return
        extra: dict[str, Any] = {"game": self.id, "variant": self.spec["variant"]}
        if self.replay_of is not None:
            extra["replay_of"] = self.replay_of  # the same deal again: its results are not a fresh game's
        if self.pace is not None:
            extra["seconds_per_move"] = self.pace
        if self.abandoned:
            extra["abandoned"] = True  # unfinished, and not the person's loss
        saver = self.games.saver if self.games else Saver(self.data)
        saver.save(self.table.entry("browser", **extra), self)
        self.saved = True

    async def retire(self) -> None:
        """The game is forgotten or the server stops: stop its clock and pages, and save it as far as it went."""
        for task in (self.clock, self.abandon_timer):
            if task is not None:
                task.cancel()
        for listener in list(self.listeners):
            listener.stop()
        if self.stuck:
            LOG.error("game %s was not saved: an agent is still on its move %d", self.id, self.table.steps)
            return
        try:
            await asyncio.wait_for(self.lock.acquire(), self.settings.move_timeout)
        except TimeoutError:
            LOG.error("game %s was not saved: its tick did not end", self.id)
            return
        try:
            self.save()
        finally:
            self.lock.release()


def soonest(games, limits: Limits) -> int | None:
    """Whole seconds until the first of ``games`` stops being in progress (None: a page listens to each)."""
    waits = [w for w in (g.free_in(limits) for g in games) if w is not None]
    return max(1, math.ceil(min(waits))) if waits else None


class Games:
    """The games a server holds, by id, within its ``Limits``."""

    def __init__(self, data: Path, seed: int | None = None, limits: Limits | None = None,
                 liveness: Liveness | None = None, agents: tuple[str, ...] = ()):
        self.data = data
        self.extra_agents = tuple(agents)  # agent specs the operator offers besides the registry's (llm:, hf:)
        self.liveness = liveness or Liveness()
        self.saver = Saver(data)
        self.pool = ThreadPoolExecutor(self.liveness.agent_threads, thread_name_prefix="cardzoo-agents")
        self.retiring: set[asyncio.Task] = set()
        self.games: dict[str, LiveGame] = {}
        self.limits = limits or Limits()
        # Deals from 64 bits of OS randomness (``fresh_seed``): a seat's own cards must not narrow the deal down to a
        # search. A server seed (tests, --seed) makes the sequence repeatable instead.
        self.rng = random.Random(seed) if seed is not None else None
        self.creations = CreationRate(self.limits.creations_per_minute)

    def get(self, game_id: str) -> LiveGame:
        live = self.games.get(game_id)
        if live is None:
            raise ApiError(404, f"no game {quote(game_id)} here (finished long ago, or the server restarted): start "
                                "a new one")
        return live

    def authorised(self, game_id: str, token: str | None) -> LiveGame:
        """The game ``game_id`` (``ApiError`` 404) if ``token`` is its token (else 403)."""
        live = self.get(game_id)
        live.authorise(token)
        return live

    def admit(self, client: str) -> None:
        """``ApiError`` 429 if ``client`` may not make another game now (too many in progress, or made lately)."""
        mine = [g for g in self.games.values() if g.client == client and g.in_progress(self.limits)]
        if len(mine) >= self.limits.games_per_client:
            wait = soonest(mine, self.limits)
            raise ApiError(429, f"you have {len(mine)} games in progress, the most this server takes from one "
                                f"client: finish one first{'' if wait is None else f', or try again in {wait} s'}",
                           retry_after=wait)
        wait = self.creations.wait(client)
        if wait:
            raise ApiError(429, f"more than {self.limits.creations_per_minute} new games a minute from you: try again "
                                f"in {math.ceil(wait)} s", retry_after=math.ceil(wait))

    def make_room(self) -> None:
        """Forget games until one more fits: finished ones first, then idle ones, oldest first; never a game in
        progress (``ApiError`` 503 when every game held is)."""
        while len(self.games) >= self.limits.games:
            done = [g for g in self.games.values() if g.table.over or g.broken] or [
                g for g in self.games.values() if not g.in_progress(self.limits)]
            if not done:
                wait = soonest(self.games.values(), self.limits)
                raise ApiError(503, f"the server is full: {len(self.games)} games in progress; try again "
                                    + ("later" if wait is None else f"in {wait} s"), retry_after=wait)
            self.forget(done[0].id)

    def __deepcopy__(self, memo):  # one per server: a copy of a game (the leak test's) belongs to the same server
        return self

    def create(self, spec: dict[str, Any], seed: int | None = None, reset_options: dict | None = None,
               client: str = "local", replay_of: str | None = None) -> LiveGame:
        """A new game from a checked ``spec`` (``check``); ``seed`` None deals a new deal."""
        self.make_room()
        return self.add(self.deal(spec, seed, reset_options, client, replay_of))

    async def open(self, spec: dict[str, Any], seed: int | None = None, client: str = "local",
                   replay_of: str | None = None) -> LiveGame:
        """``create`` with the dealing (the agents' first moves) in the agents' threads."""
        self.make_room()
        live = await run_off_loop(self.pool, self.liveness, self.deal, spec, seed, None, client, replay_of)
        self.make_room()  # others may have taken the room meanwhile
        return self.add(live)

    def add(self, live: LiveGame) -> LiveGame:
        live.games = self
        self.games[live.id] = live
        return live

    def deal(self, spec: dict[str, Any], seed: int | None, reset_options: dict | None, client: str,
             replay_of: str | None) -> LiveGame:
        """A game dealt, its agents moved up to the person's turn, not yet held (thread-safe)."""
        catalog = CATALOG[spec["game"]]
        if seed is None:
            seed = fresh_seed() if self.rng is None else self.rng.getrandbits(64)
        table = Table.open(catalog["env"], catalog["variants"][spec["variant"]], spec["players"], seed,
                           reset_options=reset_options)
        pace = None
        if isinstance(table, TickTable):
            real = table.env.config.seconds_per_action
            pace = spec["seconds_per_move"] or (real * PRACTICE if spec["pace"] == "practice" else real)
        for agent in table.agents.values():  # a model seat without a budget of its own answers within the timeout
            if hasattr(agent, "budget") and agent.budget is None:
                agent.budget = self.liveness.move_timeout / MODEL_DECISIONS_PER_TURN
        live = LiveGame(secrets.token_urlsafe(9), spec, table, pace, self.data, client, replay_of)
        if not isinstance(table, TickTable):
            table.advance()
        return live

    def forget(self, game_id: str) -> None:
        live = self.games.pop(game_id)
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # called outside the server's loop (a test): nothing runs for the game there
            if live.clock is not None:
                live.clock.cancel()
            live.save()
            return
        task = loop.create_task(live.retire())
        self.retiring.add(task)
        task.add_done_callback(self.retiring.discard)

    async def close(self) -> None:
        """The server stops: every game saved as far as it went, the games kept for want of a writable data file
        tried once more (then the fallback file), the agents' threads let go."""
        for game_id in list(self.games):
            self.forget(game_id)
        if self.retiring:
            await asyncio.wait(self.retiring)
        self.saver.close()
        self.pool.shutdown(wait=False, cancel_futures=True)

    def check(self, body: NewGame) -> dict[str, Any]:
        """The game a request asks for, with every choice checked (``ApiError`` 400 naming a bad one)."""
        if body.game not in CATALOG:
            raise ApiError(400, f"unknown game {quote(body.game)}; games: {', '.join(CATALOG)}")
        catalog = CATALOG[body.game]
        variant = catalog["default"] if body.variant is None else body.variant
        if variant not in catalog["variants"]:
            raise ApiError(400, f"unknown variant {quote(variant)} of {body.game}; variants: "
                                f"{', '.join(catalog['variants'])}")
        seats = ["player_0", "player_1"]
        if body.seat not in seats:
            raise ApiError(400, f"no seat {quote(body.seat)}; seats: {', '.join(seats)}")
        agents = body.agents or offered(body.game)[variant][:1] or catalog["agents"][:1]
        allowed = [*catalog["agents"], *self.extra_agents]  # only these: a page never names a model or a path
        unknown = [a for a in agents if a not in allowed]
        if unknown:
            raise ApiError(400, f"no agent {quote(unknown[0])} for {body.game}; agents: {', '.join(allowed)}")
        others = iter(agents * len(seats))
        players = [HUMAN if s == body.seat else next(others) for s in seats]
        if (body.seconds_per_move is not None or body.pace != "real") and not GAMES[body.game].parallel:
            real_time = " and ".join(s.title for s in GAMES.values() if s.parallel)
            raise ApiError(400, f"{body.game} is turn-based: a pace is only for {real_time}")
        if body.seconds_per_move is not None and body.pace != "real":
            raise ApiError(400, "give a pace or seconds_per_move, not both")
        return {"game": body.game, "variant": variant, "players": players, "pace": body.pace,
                "seconds_per_move": body.seconds_per_move}


def create_app(data: str | Path = records.DEFAULT_DATA, seed: int | None = None, *, host: str = "127.0.0.1",
               allow_hosts: list[str] | tuple[str, ...] = (), api_docs: bool = False,
               limits: Limits | None = None, liveness: Liveness | None = None,
               agents: list[str] | tuple[str, ...] = ()) -> FastAPI:
    """The web app; played games go to ``data/games.jsonl``; ``seed`` seeds the deals (None: fresh entropy).

    ``host`` is the address served: the ``Host`` names taken (``access.allowed_hosts``, plus ``allow_hosts``).
    ``api_docs`` turns on ``/docs``, ``/redoc`` and ``/openapi.json``; ``limits`` are the ``access.Limits``,
    ``liveness`` the ``liveness.Liveness`` settings (queues, grace period, move timeout, threads). ``agents``: agent
    specs offered besides the registry's, in every game and variant (``llm:MODEL``, ``hf:PATH``; chosen here, by
    whoever starts the server, never by a page)."""
    limits = limits or Limits()
    games = Games(Path(data), seed, limits, liveness, agents=tuple(agents))

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI):
        # The agents offered (a second's work, once per process) are worked out in a thread before the first
        # request, not on the event loop during it.
        await asyncio.get_running_loop().run_in_executor(games.pool, lambda: [offered(name) for name in CATALOG])
        yield
        await games.close()  # the server stops: save what was being played

    docs = {} if api_docs else {"docs_url": None, "redoc_url": None, "openapi_url": None}
    app = FastAPI(title="cardzoo", lifespan=lifespan, **docs)
    app.state.games, app.state.limits = games, limits
    # The last added runs first: the Host, then the Origin, then the sizes, before any route reads a thing.
    app.add_middleware(SocketLimit, rate=limits.ws_messages_per_second, burst=limits.ws_burst, size=limits.body_bytes)
    app.add_middleware(BodyLimit, limit=limits.body_bytes)
    app.add_middleware(OriginGuard)
    app.add_middleware(TrustedHostMiddleware, allowed_hosts=allowed_hosts(host, list(allow_hosts)))
    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    @app.exception_handler(ApiError)
    async def api_error(request: Request, err: ApiError):
        headers = None if err.retry_after is None else {"Retry-After": str(err.retry_after)}
        return JSONResponse({"error": str(err)}, status_code=err.status, headers=headers)

    @app.exception_handler(AgentTimeout)
    async def agent_timeout(request: Request, err: AgentTimeout):  # the game is stopped (``LiveGame.run``)
        return JSONResponse({"error": f"the game stopped: {err}"}, status_code=503)

    @app.exception_handler(AgentsBusy)
    async def agents_busy(request: Request, err: AgentsBusy):  # nothing was done: the request may be tried again
        return JSONResponse({"error": f"{err}; try again later"}, status_code=503)

    @app.exception_handler(CardzooError)
    async def game_error(request: Request, err: CardzooError):  # an illegal move, refused by the strict env
        status = 409 if isinstance(err, GameOverError) else 400
        return JSONResponse({"error": refusal(err)}, status_code=status)

    @app.exception_handler(RequestValidationError)
    async def bad_request(request: Request, err: RequestValidationError):
        problems = [f"{'.'.join(str(p) for p in e['loc'][1:])[:QUOTE] or 'body'}: {e['msg'][:QUOTE]}"
                    for e in err.errors()[:5]]
        return JSONResponse({"error": "malformed request: " + "; ".join(problems)}, status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, err: StarletteHTTPException):  # an unknown route or method, and the like
        what = {404: "no such address", 405: "method not allowed"}.get(err.status_code, err.detail)
        return JSONResponse({"error": f"{what}: {request.method} {quote(request.url.path)}"},
                            status_code=err.status_code, headers=err.headers)

    @app.get("/", include_in_schema=False)
    async def index():
        return FileResponse(STATIC / "index.html")

    @app.get("/api/catalog")
    async def catalog():
        extra = list(games.extra_agents)
        return {name: {"title": c["title"], "env": c["env"], "cooperative": GAMES[name].cooperative,
                       "rules": c["rules"], "default": c["default"], "variants": list(c["variants"]),
                       "agents": c["agents"] + extra,
                       "agents_by_variant": {v: names + extra for v, names in offered(name).items()},
                       "seats": ["player_0", "player_1"],
                       "paces": {"real": "real time", "practice": f"practice ({PRACTICE:g} times slower)"}
                       if GAMES[name].parallel else None}
                for name, c in CATALOG.items()}

    def client_of(request: Request) -> str:
        return request.client.host if request.client else "unknown"

    def token_of(request: Request) -> str | None:
        return request.headers.get(TOKEN_HEADER)

    @app.post("/api/games", status_code=201)
    async def new_game(body: NewGame, request: Request):
        spec = games.check(body)
        games.admit(client_of(request))
        live = await games.open(spec, client=client_of(request))
        return {**await live.current_view(), "token": live.token}  # the only time the token is sent

    @app.get("/api/games/{game_id}")
    async def get_game(game_id: str, request: Request):
        return await games.authorised(game_id, token_of(request)).current_view()

    @app.post("/api/games/{game_id}/move")
    async def move(game_id: str, body: MoveIn, request: Request):
        live = games.authorised(game_id, token_of(request))
        if live.stuck:
            raise ApiError(409, live.broken)
        if isinstance(live.table, TickTable):  # queued for the next tick: no agent moves now
            async with live.lock:
                live.move(body)
                view = live.view()  # the table right after the move (a tick may come while the pages are told)
        else:  # the agents answer in their threads
            view = await live.run(lambda: (live.move(body), live.settle())[1])
        live.push(view)
        return view

    @app.post("/api/games/{game_id}/again", status_code=201)
    async def again(game_id: str, body: Again, request: Request):
        live = games.authorised(game_id, token_of(request))
        if body.deal == "same" and not live.table.over:  # a twin of a game still on would show its hidden cards
            raise ApiError(409, "the same deal again only once this game is over: finish it, or ask for a new deal")
        games.admit(client_of(request))
        same = body.deal == "same"
        twin = await games.open(live.spec, seed=live.seed if same else None, client=client_of(request),
                                replay_of=live.id if same else None)
        return {**await twin.current_view(), "token": twin.token}

    @app.websocket("/api/games/{game_id}/events")
    async def events(ws: WebSocket, game_id: str):
        live = games.games.get(game_id)
        if live is None:
            await ws.close(code=4404, reason="no such game")
            return
        try:  # the token as a query parameter: checked before the socket opens, so no stranger is ever sent a view
            live.authorise(ws.query_params.get("token") or ws.headers.get(TOKEN_HEADER))
        except ApiError as err:
            await ws.close(code=4403, reason=str(err)[:120])
            return
        await ws.accept()
        listener = live.listen(ws)
        try:
            listener.offer(await live.current_view())
            live.start_clock()
            while (await ws.receive())["type"] != "websocket.disconnect":
                pass  # the page has nothing to say here: whatever it sends (text or binary) is ignored
        finally:
            live.unlisten(listener)

    return app
