"""A dummy fourth game, Ascend, registered from the tests only (tests/test_fourth_game.py): it shows that adding a
game is its own folder plus one registry entry, with no shared file edited.

:func:`install` makes the folder importable where the code looks for a game (``cardzoo.envs.tinygame`` and its
``rules``/``env`` modules, the public ``cardzoo.envs.tinygame_v0``), registers its two agents, and registers the
game. Call it before anything else of cardzoo is imported, as a new game's module is imported with the registry.
"""

from __future__ import annotations

import importlib
import sys
import types

NAME, ENV_ID = "tinygame", "tinygame_v0"


def install() -> None:
    from cardzoo.envs.registry import GAMES, GameSpec, register

    if NAME in GAMES:
        return
    for part in ("rules", "env", "views"):
        module = importlib.import_module(f"{__name__}.{part}")
        sys.modules[f"cardzoo.envs.{NAME}.{part}"] = module
    package = types.ModuleType(f"cardzoo.envs.{NAME}")
    package.__path__ = []
    sys.modules[package.__name__] = package
    env = sys.modules[f"cardzoo.envs.{NAME}.env"]
    public = types.ModuleType(f"cardzoo.envs.{ENV_ID}")
    public.env, public.raw_env, public.describe = env.env, env.raw_env, env.describe
    sys.modules[public.__name__] = public
    import cardzoo.envs

    setattr(cardzoo.envs, ENV_ID, public)
    _agents()
    register(GameSpec(
        name=NAME, env_id=ENV_ID, title="Ascend", parallel=False, cooperative=True, rules_doc="rope_team.md",
        doc_attr="raw_env", baseline="ascend_low", default_level="normal",
        text_view=f"{__name__}.views:AscendText", seat_view=f"{__name__}.views:AscendView",
        pool=f"{__name__}.agents:POOL",
    ))


def _agents() -> None:
    from cardzoo.agents import registry

    from . import agents

    registry.AGENTS["ascend_low"] = {ENV_ID: lambda seed: agents.Lowest()}
    registry.AGENTS["ascend_high"] = {ENV_ID: lambda seed: agents.Highest()}
