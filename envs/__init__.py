"""cardzoo environments: ``rope_team_v0`` (more games follow). ``replay`` rebuilds a saved game."""

from .common.errors import CardzooError, DeckError, GameOverError, IllegalActionError, OptionError
from .common.record import make_env, replay, save

__all__ = ["CardzooError", "DeckError", "GameOverError", "IllegalActionError", "OptionError", "make_env",
           "replay", "save"]
