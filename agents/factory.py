"""Agents brought as code: the spec ``module:callable`` (or ``path/to/file.py:callable``) names a factory

    callable(game: str, seat: int | None, seed: int | None) -> an object with act(observation, action_mask) -> int

(and optionally ``reset(seed)``), where ``game`` is the game's registry name ("rope_team", "summit_rush", "rook"),
``seat`` the seat index the agent plays (0 is ``player_0``; None when the caller does not say) and ``seed`` the seed
the agent is reset with. :class:`FactoryAgent` calls the factory afresh at every ``reset``, so each game starts from
a new object built for that game's seat and seed, and a game's result never depends on the games before it.
``cardzoo.evaluation.protocol.template_agent`` is a factory to copy.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import sys
from pathlib import Path

from cardzoo.envs.common.errors import OptionError


def _bad(spec: str, problem: str) -> OptionError:
    return OptionError(f"agent spec {spec!r}: {problem} (expected a registry name, a .npz policy file, or "
                       "module:callable / file.py:callable naming a factory callable(game, seat, seed))")


def _load_module(spec: str, where: str):
    if where.endswith(".py"):
        path = Path(where)
        if not path.is_file():
            raise _bad(spec, f"no file {where}")
        name = "cardzoo_agent_" + hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:12]
        if name in sys.modules:  # one module object per file and process (the factory's identity stays stable)
            return sys.modules[name]
        module_spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[name] = module
        try:
            module_spec.loader.exec_module(module)
        except Exception as err:
            del sys.modules[name]
            raise _bad(spec, f"importing {where} raised {type(err).__name__}: {err}") from err
        return module
    try:
        return importlib.import_module(where)
    except ModuleNotFoundError as err:
        if err.name and where.startswith(err.name):  # the module itself, not one it imports
            raise _bad(spec, f"no module {where!r} (is it on sys.path?)") from None
        raise _bad(spec, f"importing {where} raised {type(err).__name__}: {err}") from err
    except Exception as err:
        raise _bad(spec, f"importing {where} raised {type(err).__name__}: {err}") from err


def load_factory(spec: str):
    """The callable ``spec`` names, and the SHA-256 of the file that holds it ("" if it has none)."""
    where, sep, attr = spec.rpartition(":")  # rpartition: a Windows path keeps its drive's colon
    if not sep or not where or not attr.isidentifier():
        raise _bad(spec, "not of the form module:callable")
    module = _load_module(spec, where)
    factory = getattr(module, attr, None)
    if factory is None:
        raise _bad(spec, f"{where} has no attribute {attr!r}")
    if not callable(factory):
        raise _bad(spec, f"{where}.{attr} is a {type(factory).__name__}, not callable")
    try:
        source = inspect.getsourcefile(module)
    except TypeError:  # a built-in module (builtins, sys): no source file
        source = None
    digest = hashlib.sha256(Path(source).read_bytes()).hexdigest() if source and Path(source).is_file() else ""
    return factory, digest


class FactoryAgent:
    """The agent of a ``module:callable`` spec (see the module docstring): the factory's object for the current game,
    made again at every ``reset(seed)``. ``digest`` is the SHA-256 of the factory's source file, which keys caches
    and identifies the agent in benchmark results."""

    def __init__(self, spec: str, game: str, seat: int | None = None, seed: int | None = None):
        from cardzoo.envs.registry import spec as game_spec

        self.name = spec
        self.game = game_spec(game).name
        self.seat = seat
        self.factory, self.digest = load_factory(spec)
        self.agent = None
        self._seed = seed

    def reset(self, seed: int | None = None) -> None:
        agent = self.factory(self.game, self.seat, seed)
        if not callable(getattr(agent, "act", None)):
            raise TypeError(f"{self.name}({self.game!r}, {self.seat!r}, {seed!r}) returned a {type(agent).__name__}, "
                            "which has no act(observation, action_mask) method")
        if callable(getattr(agent, "reset", None)):
            agent.reset(seed)
        self.agent = agent

    def act(self, observation, action_mask):
        if self.agent is None:  # a caller that never resets: the first game's object, built on demand
            self.reset(self._seed)
        return self.agent.act(observation, action_mask)
