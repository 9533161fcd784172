"""Outside agents in a process of their own: what the benchmark plays a ``module:callable`` spec with.

An outside agent's code is not the project's, so the benchmark never imports it into a process that knows anything
it should not: the run's deal key, the env, the other seat's agent. :class:`IsolatedAgent` starts a fresh
interpreter (``python -m cardzoo.agents.isolated``, not a fork: nothing of the parent's memory is copied into it)
that imports the factory and plays the seat; the parent sends it copies of the seat's observation and action mask
and reads back one small JSON reply per call, so nothing the agent writes is ever unpickled by the parent. The
worker runs under a memory limit (``RLIMIT_AS``) and every call under a time limit:

- a decision (``act``, or ``reset`` with the factory call) longer than ``Limits.decision_seconds`` kills the
  worker; the first call, which imports the agent's code, has ``Limits.startup_seconds``;
- an exception, a return value that is not an action, an exit or a crash of the worker: each is an
  :class:`AgentCrash` naming what happened and the decision; the next game starts a fresh worker.

One worker can hold many games at once (*slots*: the runner's lockstep play, :mod:`cardzoo.evaluation.matches.
lockstep`): each slot's agent is made by the factory for its own game, and an agent whose class defines
``act_batch(agents, observations, action_masks)`` is asked for every waiting game's move in one call (one decision
in each of those games, under one decision's time limit). If the worker dies, every game it held is lost, not
silently restarted with a fresh agent.

:func:`probe` runs the factory once before any game: a spec whose callable cannot make an agent (``os:system``,
``builtins:print``) is refused naming it, and the reply says which games the agent declares (a ``games``
attribute on the factory, e.g. ``make_agent.games = ("rope_team",)``) and a digest of the agent's own source files
(every module it imported that is neither the standard library, an installed package, nor cardzoo), which keys the
evaluation cache, so editing a helper module the factory imports is never served stale results.

This is a process boundary, not a sandbox: the worker runs as the same user and can read that user's files (a
``--cache`` folder included). Run agents you do not trust in a container that shows them nothing else.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import resource
import select
import struct
import subprocess
import sys
import sysconfig
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from cardzoo.envs.common.errors import CardzooError, OptionError

MAX_REPLY = 1 << 16  # bytes: a reply is a line of JSON; a worker that sends more is broken


@dataclass(frozen=True)
class Limits:
    """The time and memory an outside agent gets (the benchmark's ``--decision-timeout``, ``--memory-mb``)."""

    decision_seconds: float = 10.0  # one act, or one reset with its factory call
    startup_seconds: float = 120.0  # starting the worker and importing the agent's code
    memory_mb: int = 4096  # the worker's address space (RLIMIT_AS)


class AgentCrash(CardzooError):
    """An isolated agent failed: it raised, returned no action, ran out of time, or its process ended. The message
    says which, and the decision."""


@dataclass(frozen=True)
class Probe:
    """What :func:`probe` learned of a spec: the games it declares (None: it does not say), its sources' digest and
    whether its agents' class defines ``act_batch``."""

    games: tuple[str, ...] | None
    digest: str
    batch: bool = False
    batch_size: int | None = None  # the most games the class's act_batch takes in one call (None: no limit)


class IsolatedAgent:
    """The agent of a ``module:callable`` spec, played in its own worker process (module docstring)."""

    def __init__(self, spec: str, game: str, seat: int | None = None, limits: Limits | None = None):
        from cardzoo.envs.registry import spec as game_spec

        self.name = spec
        self.game = game_spec(game).name
        self.seat = seat
        self.limits = limits or Limits()
        self._process: subprocess.Popen | None = None
        self._send_fd = self._reply_fd = -1
        self._buffer = b""
        self.decisions: dict[int, int] = {}  # slot -> decisions made in its current game
        self._generation = 0  # which worker process; a slot's agent lives in the one it was made in
        self._born: dict[int, int] = {}

    # ------------------------------------------------------------------ the worker
    def _start(self) -> dict[str, Any]:
        request_r, request_w = os.pipe()
        reply_r, reply_w = os.pipe()
        env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
               # what this process can import, the worker can: a module:callable spec means the same code in both
               "PYTHONPATH": os.pathsep.join([os.getcwd(), *(p for p in sys.path if p)])}
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-m", "cardzoo.agents.isolated", str(request_r), str(reply_w),
                 str(self.limits.memory_mb)],
                pass_fds=(request_r, reply_w), stdin=subprocess.DEVNULL, stdout=2, env=env)  # its prints: stderr
        finally:
            os.close(request_r)
            os.close(reply_w)
        self._send_fd, self._reply_fd, self._buffer = request_w, reply_r, b""
        self._generation += 1
        return self._call(("load", self.name, self.game, self.seat), self.limits.startup_seconds, "loading")

    def close(self) -> None:
        if self._process is None:
            return
        for fd in (self._send_fd, self._reply_fd):
            try:
                os.close(fd)
            except OSError:
                pass
        if self._process.poll() is None:
            self._process.kill()
        self._process.wait()
        self._process = None

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    def _call(self, message: tuple, seconds: float, what: str) -> dict[str, Any]:
        try:
            data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
            os.write(self._send_fd, struct.pack("<I", len(data)))
            view = memoryview(data)
            while view:
                view = view[os.write(self._send_fd, view):]
        except OSError:
            return self._died(what)
        deadline = time.monotonic() + seconds
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self._reply_fd], [], [], max(0.0, left))
            if not ready:
                self.close()
                raise AgentCrash(f"{what} took longer than {seconds:g} s (the time limit): the agent was stopped")
            chunk = os.read(self._reply_fd, MAX_REPLY)
            if not chunk:
                return self._died(what)
            self._buffer += chunk
            if len(self._buffer) > MAX_REPLY:
                self.close()
                raise AgentCrash(f"{what}: the agent's process sent more than {MAX_REPLY} bytes for one reply")
        line, _, self._buffer = self._buffer.partition(b"\n")
        try:
            reply = json.loads(line)
        except ValueError:
            reply = None
        if not isinstance(reply, dict):
            self.close()
            raise AgentCrash(f"{what}: the agent's process sent a malformed reply ({line[:80]!r})")
        if "error" in reply:
            raise AgentCrash(f"{what}: {str(reply['error'])[:500]}")
        return reply

    def _died(self, what: str):
        process, code = self._process, None
        if process is not None:
            try:
                code = process.wait(timeout=5)
            except subprocess.TimeoutExpired:  # it closed its end of the pipe but lives on
                pass
        self.close()
        if code is None:
            how = "stopped answering (it closed its reply pipe)"
        elif code >= 0:
            how = f"exited with code {code}"
        else:
            how = f"was killed by signal {-code}"
        raise AgentCrash(f"{what}: the agent's process {how}")

    # ------------------------------------------------------------------ the agent protocol
    def reset(self, seed: int | None = None, slot: int = 0) -> None:
        """A new game in ``slot``: the factory makes its agent (in a fresh worker if the last one ended)."""
        if self._process is None or self._process.poll() is not None:
            self.close()
            self._start()
        self.decisions[slot] = 0
        self._born[slot] = self._generation
        self._call(("reset", seed, slot), self.limits.decision_seconds, "reset (the factory call)")

    def _alive(self, slot: int) -> None:
        if slot not in self._born:  # a caller that never resets: the first game's agent, made on demand
            self.reset(None, slot)
        elif self._born[slot] != self._generation or self._process is None:
            raise AgentCrash(f"decision {self.decisions[slot] + 1}: the agent's process ended earlier (another game "
                             "it held failed), and this game's agent with it")

    def act(self, observation: np.ndarray, action_mask: np.ndarray, slot: int = 0) -> int:
        self._alive(slot)
        self.decisions[slot] += 1
        reply = self._call(("act", np.array(observation), np.array(action_mask), slot), self.limits.decision_seconds,
                           f"decision {self.decisions[slot]}")
        return _action(reply.get("action"), reply.get("returned"), f"decision {self.decisions[slot]}: act")

    def act_batch(self, slots: list[int], observations: np.ndarray, action_masks: np.ndarray) -> list:
        """One move for each game in ``slots`` from one ``act_batch`` call of the agent's class; an entry that is
        not an integer action is an :class:`AgentCrash` in the list (that game's loss, not the others')."""
        for slot in slots:
            self._alive(slot)
            self.decisions[slot] += 1
        what = f"act_batch for {len(slots)} games (decision {self.decisions[slots[0]]} of the first)"
        reply = self._call(("act_batch", list(slots), np.array(observations), np.array(action_masks)),
                           self.limits.decision_seconds, what)
        actions, returned = reply.get("actions"), reply.get("returned") or {}
        if not isinstance(actions, list) or len(actions) != len(slots):
            raise AgentCrash(f"{what}: returned {reply.get('returned_all', 'something')}, not one action per game")
        out = []
        for i, (slot, action) in enumerate(zip(slots, actions, strict=True)):
            try:
                out.append(_action(action, returned.get(str(i)), f"decision {self.decisions[slot]}: act_batch"))
            except AgentCrash as err:
                out.append(err)
        return out

    def probe(self) -> Probe:
        """Start the worker and ask what the agent declares; if it plays this game, make the agent once (seed 0)
        and ask again (the factory may import more of its own code)."""
        self.close()
        self._start()
        reply = self._call(("describe",), self.limits.decision_seconds, "describing the agent")
        games = reply.get("games")
        games = None if games is None else tuple(str(g) for g in games)
        if games is None or self.game in games:
            self.reset(0)
            reply = self._call(("describe",), self.limits.decision_seconds, "describing the agent")
        size = reply.get("batch_size")
        size = size if isinstance(size, int) and not isinstance(size, bool) and size > 0 else None
        return Probe(games, str(reply.get("digest", "")), reply.get("batch") is True, size)


def _action(action: Any, returned: str | None, what: str) -> int:
    if isinstance(action, bool) or not isinstance(action, int):
        raise AgentCrash(f"{what} returned {returned or repr(action)}, not an integer action")
    return action


def _as_action(action: Any) -> int | None:
    if isinstance(action, np.ndarray) and action.shape == () and np.issubdtype(action.dtype, np.integer):
        action = int(action)
    if isinstance(action, (int, np.integer)) and not isinstance(action, (bool, np.bool_)):
        return int(action)
    return None


_PROBES: dict[tuple[str, str], Probe] = {}


def probe(spec: str, game: str, limits: Limits | None = None) -> Probe:
    """Run ``spec``'s factory once in a worker (module docstring): refuses, with an ``OptionError`` naming the spec,
    one that cannot make an agent. Remembered per spec and game in this process."""
    from cardzoo.envs.registry import spec as game_spec

    key = (spec, game_spec(game).name)
    if key not in _PROBES:
        agent = IsolatedAgent(spec, game, seat=0, limits=limits)
        try:
            _PROBES[key] = agent.probe()
        except AgentCrash as err:
            expected = "" if "(expected" in str(err) else (
                " (expected module:callable / file.py:callable naming a factory callable(game, seat, seed) that "
                "returns an object with act(observation, action_mask) -> int)")
            raise OptionError(f"agent spec {spec!r} cannot play {key[1]}: {err}{expected}") from None
        finally:
            agent.close()
    return _PROBES[key]


# ---------------------------------------------------------------------------- the worker's side
def _own_sources(factory_module: str) -> str:
    """A digest of the agent's own source files: the modules loaded that are not the standard library, installed
    packages or cardzoo (the factory's own package always counts, wherever it is installed)."""
    paths = sysconfig.get_paths()
    skip = tuple(str(Path(paths[k]).resolve()) for k in ("stdlib", "platstdlib", "purelib", "platlib") if k in paths)
    cardzoo = str(Path(__file__).resolve().parents[1])
    top = factory_module.split(".")[0]
    files = set()
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None)
        if not file or not file.endswith(".py"):
            continue
        path = str(Path(file).resolve())
        own_package = name == factory_module or name.split(".")[0] == top
        if own_package or not (path.startswith(skip) or path.startswith(cardzoo)):
            files.add(path)
    digest = hashlib.sha256()
    for path in sorted(files):
        try:
            digest.update(path.encode() + b"\0" + Path(path).read_bytes() + b"\0")
        except OSError:
            continue
    return digest.hexdigest()


def _read_exact(fd: int, n: int) -> bytes:
    out = b""
    while len(out) < n:
        chunk = os.read(fd, n - len(out))
        if not chunk:
            raise EOFError
        out += chunk
    return out


def _serve(request_fd: int, reply_fd: int, memory_mb: int) -> None:
    memory = memory_mb * 2**20
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))  # before any of the agent's code is imported
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    from cardzoo.agents.factory import load_factory

    def reply(**message) -> None:
        os.write(reply_fd, (json.dumps(message) + "\n").encode())

    def failed(what: str, err: BaseException) -> None:
        reply(error=f"{what} raised {type(err).__name__}: {err}")

    factory = module_name = None
    agents: dict[int, Any] = {}  # slot -> the agent of the game it holds
    game = seat = None
    while True:
        try:
            (size,) = struct.unpack("<I", _read_exact(request_fd, 4))
            message = pickle.loads(_read_exact(request_fd, size))  # from the parent, which this process trusts
        except EOFError:
            return  # the parent is done, or gone
        kind = message[0]
        if kind == "load":
            _, spec, game, seat = message
            try:
                factory, _ = load_factory(spec)
            except Exception as err:
                reply(error=str(err))
                continue
            module_name = getattr(factory, "__module__", None) or ""
            reply(ok=True)
        elif kind == "reset":
            _, seed, slot = message
            agents.pop(slot, None)
            try:
                made = factory(game, seat, seed)
            except Exception as err:
                failed(f"the factory {getattr(factory, '__name__', factory)!r}({game!r}, {seat!r}, seed)", err)
                continue
            if not callable(getattr(made, "act", None)):
                reply(error=f"the factory returned {type(made).__name__} {str(made)[:60]!r}, which has no "
                            "act(observation, action_mask) method")
                continue
            if callable(getattr(made, "reset", None)):
                try:
                    made.reset(seed)
                except Exception as err:
                    failed("reset", err)
                    continue
            agents[slot] = made
            reply(ok=True)
        elif kind == "act":
            _, observation, mask, slot = message
            try:
                action = agents[slot].act(observation, mask)
            except Exception as err:
                failed("act", err)
                continue
            value = _as_action(action)
            reply(action=value) if value is not None else reply(action=None, returned=repr(action)[:80])
        elif kind == "act_batch":
            _, slots, observations, masks = message
            try:
                made = [agents[s] for s in slots]
                actions = type(made[0]).act_batch(made, observations, masks)
                actions = list(actions)
            except Exception as err:
                failed("act_batch", err)
                continue
            if len(actions) != len(slots):
                reply(actions=None, returned_all=f"{len(actions)} actions for {len(slots)} games")
                continue
            values = [_as_action(a) for a in actions]
            returned = {str(i): repr(a)[:80] for i, (a, v) in enumerate(zip(actions, values, strict=True)) if v is None}
            reply(actions=values, returned=returned)
        elif kind == "describe":
            games = getattr(factory, "games", None)
            if games is not None and (isinstance(games, str) or not all(isinstance(g, str) for g in games)):
                reply(error=f"the factory's games attribute must be a tuple of game names, got {games!r}")
                continue
            kind_of = type(next(iter(agents.values()))) if agents else None
            size = getattr(kind_of, "batch_size", None)
            reply(games=None if games is None else list(games), digest=_own_sources(module_name),
                  batch=callable(getattr(kind_of, "act_batch", None)),
                  batch_size=size if isinstance(size, int) and not isinstance(size, bool) else None)


if __name__ == "__main__":
    _serve(int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]))
