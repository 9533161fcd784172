"""cardzoo environments.

- ``rope_team_v0``: cooperative 2-player trick-taking (AEC), ``from cardzoo.envs import rope_team_v0``.
- ``summit_rush_v0``: cooperative real-time TriPeaks (Parallel; ``env()`` is its AEC form).
- ``rook_v0``: competitive Rook for two (AEC).

``make_env(name, **options)`` builds one by name; ``replay(record)`` rebuilds a saved game move by move;
``GAMES`` (name -> :class:`GameSpec`) and ``spec(game)`` describe each game (``cardzoo.envs.registry``).
"""

from importlib.metadata import version

from .common.errors import (
    CardzooError,
    DeckError,
    GameOverError,
    IllegalActionError,
    IllegalActionWarning,
    NotResetError,
    OptionError,
    RecordError,
)
from .common.record import make_env, replay, save
from .registry import GAMES, GameSpec, spec

__version__ = version("cardzoo")  # the installed distribution's (pyproject.toml)

__all__ = ["GAMES", "CardzooError", "DeckError", "GameOverError", "GameSpec", "IllegalActionError",
           "IllegalActionWarning", "NotResetError", "OptionError", "RecordError", "make_env", "replay", "save", "spec"]
