"""Checking the options an environment is built with, so that a typo is an error and not a silent default."""

from __future__ import annotations

import difflib
import math
import operator
import reprlib
import warnings
from collections.abc import Collection, Mapping
from typing import Any

import numpy as np

from .errors import OptionError


class UnknownResetOptionWarning(UserWarning):
    """``reset(options={"options": ...})``: PettingZoo's API-test probe, ignored with this warning."""


MAX_DEPTH = 32  # the deepest option value plain() copies (a deck is a list: depth 1)

# PettingZoo's API tests call reset(seed=0, options={"options": 1}) only to check that reset takes an options dict.
PROBE_KEY = "options"


# Option values come from users and command lines: a message quotes them shortened, so a 40 MB string or a deeply
# nested list gives a readable line, never a wall of text.
_SHORT = reprlib.Repr()
_SHORT.maxstring = _SHORT.maxother = 40
_SHORT.maxlist = _SHORT.maxtuple = _SHORT.maxdict = _SHORT.maxset = 4
_SHORT.maxlevel = 2


def shown(value: Any) -> str:
    """``repr(value)`` cut to a readable length (for error messages quoting untrusted values)."""
    try:
        return _SHORT.repr(value)
    except Exception:  # a value whose repr fails is still named by its type
        return f"<{type(value).__name__}>"


def _unknown_message(given: Mapping[str, Any], known: Collection[str], what: str) -> str | None:
    unknown = [k for k in given if k not in known]
    if not unknown:
        return None
    hints = []
    for k in unknown:
        close = difflib.get_close_matches(str(k)[:100], list(known), n=1)
        hints.append(shown(k) + (f" (did you mean {close[0]!r}?)" if close else ""))
    return f"unknown {what} {', '.join(hints)}; known {what}s: {', '.join(sorted(known))}"


def reject_unknown(given: Mapping[str, Any], known: Collection[str], what: str) -> None:
    """Raise :class:`OptionError` naming every key of ``given`` that is not in ``known``."""
    message = _unknown_message(given, known, what)
    if message:
        raise OptionError(message)


def check_reset_options(given: Mapping[str, Any], known: Collection[str]) -> None:
    """Raise :class:`OptionError` for unknown keys of ``reset(options=...)``.

    The one exception is the key ``"options"``, which PettingZoo's API tests pass to probe ``reset``'s signature:
    it is ignored with an :class:`UnknownResetOptionWarning`, so the probe passes and a nested ``options`` dict
    passed by mistake is still reported.
    """
    reject_unknown({k: v for k, v in given.items() if k != PROBE_KEY}, known, "reset option")
    if PROBE_KEY in given:
        warnings.warn(f"reset option {PROBE_KEY!r} is not an option of this game (PettingZoo's API-test probe?); "
                      f"ignored. Reset options: {', '.join(sorted(known))}", UnknownResetOptionWarning, stacklevel=4)


def one_of(name: str, value: Any, choices: Collection[Any]) -> Any:
    """``value`` if it is one of ``choices`` (strings, or None). Anything else, of any type (a list, a dict, an
    array: ``in`` would raise its own TypeError or compare element-wise), is an :class:`OptionError`."""
    if (value is None or isinstance(value, str)) and value in choices:
        return value
    raise OptionError(f"option {name}={shown(value)} is not one of {sorted(choices, key=str)}")


def int_in(name: str, value: Any, low: int, high: int) -> int:
    wanted = f"option {name} must be an integer in {low}..{high}, got {shown(value)}"
    if isinstance(value, (bool, np.bool_)):
        raise OptionError(wanted)
    try:  # ints and numpy integers; floats, strings, arrays and lists are refused, never rounded or converted
        value = operator.index(value)
    except TypeError:
        raise OptionError(wanted) from None
    if not low <= value <= high:
        raise OptionError(f"option {name}={shown(value)} is out of range {low}..{high}")
    return value


def flag(name: str, value: Any) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise OptionError(f"option {name} must be True or False, got {shown(value)}")
    return bool(value)


def number(name: str, value: Any, low: float = float("-inf"), high: float = float("inf")) -> float:
    """A finite real number in ``low..high`` (NaN and infinities are refused: records must stay plain JSON)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise OptionError(f"option {name} must be a finite number in {low}..{high}, got {shown(value)}")
    try:
        value = float(value)
    except OverflowError:  # an int past float's range
        value = math.inf if value > 0 else -math.inf
    if not math.isfinite(value) or not low <= value <= high:
        raise OptionError(f"option {name}={shown(value)} is out of range {low}..{high} (a finite number)")
    return value


def seed_value(seed: Any) -> int:
    """A game seed: a non-negative integer (Python or numpy). Anything else would be silently converted by numpy
    (``1.5`` plays seed 1, ``"5"`` is refused with numpy's own message), so it is refused here by name."""
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
        raise OptionError(f"seed must be a non-negative integer or None, got {seed!r} ({type(seed).__name__})")
    if seed < 0:
        raise OptionError(f"seed must be a non-negative integer or None, got {seed}")
    return int(seed)


def plain(value: Any, _depth: int = 0) -> Any:
    """``value`` as plain JSON data, copied: numpy scalars become Python numbers, tuples and arrays lists, dicts
    are copied key by key. Records hold only such copies, so a caller changing its deck list later cannot change a
    recorded game, and ``json.dumps`` never meets an ``int64``. Data nested deeper than any option needs is refused
    (it would otherwise be a RecursionError)."""
    if _depth > MAX_DEPTH:
        raise OptionError(f"an option value nested more than {MAX_DEPTH} deep cannot be an option or be recorded")
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        value = float(value)
        if not math.isfinite(value):
            raise OptionError(f"{value} cannot be recorded: only finite numbers are allowed")
        return value
    if isinstance(value, Mapping):
        return {str(k): plain(v, _depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [plain(v, _depth + 1) for v in value]
    return value
