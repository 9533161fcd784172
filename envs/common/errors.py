"""Exceptions shared by every cardzoo game.

Each one subclasses ``ValueError`` or ``RuntimeError`` as well, so code that catches the builtin still works,
and each message names the problem and what would have been accepted.
"""


class CardzooError(Exception):
    """Base class of every error raised by cardzoo."""


class IllegalActionError(CardzooError, ValueError):
    """An action that is out of range or not legal in the current position. The state is left unchanged."""


class DeckError(CardzooError, ValueError):
    """A deck given to ``reset(options={"deck": ...})`` that is malformed: wrong length, unknown or repeated card."""


class OptionError(CardzooError, ValueError):
    """An unknown option, level or option value."""


class GameOverError(CardzooError, RuntimeError):
    """A step after the game has ended (or before the first ``reset``)."""


class NotResetError(GameOverError, AssertionError):
    """A method that needs a game (``observe``, ``last``, ``state``, ``render``, ``step``, ...) called before the first
    ``reset()``. Also an ``AssertionError``: PettingZoo's order-enforcing wrapper raises that in the same case, so code
    written against it still catches this."""


class RecordError(CardzooError, ValueError):
    """A game record (or a file holding one) that cannot be replayed: missing keys, wrong kinds, tampered moves."""


class IllegalActionWarning(UserWarning):
    """An illegal move under ``illegal_action="penalize"``: the game ended with the penalty (PettingZoo's way)."""


class PolicyError(CardzooError, ValueError):
    """A policy file that cannot be loaded: missing, not a policy, or holding an unknown activation or features."""


class MoveError(CardzooError, ValueError):
    """A reply (typed or written by a model) that names no legal move: the message says why (not your card, must
    follow suit, not a message of the vocabulary, several moves named, ...). The view that raised it stays usable."""
