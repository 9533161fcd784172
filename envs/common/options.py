"""Checking the options an environment is built with, so that a typo is an error and not a silent default."""

from __future__ import annotations

import difflib
import math
import warnings
from collections.abc import Collection, Mapping
from typing import Any

import numpy as np

from .errors import OptionError


class UnknownResetOptionWarning(UserWarning):
    """``reset(options={"options": ...})``: PettingZoo's API-test probe, ignored with this warning."""


# PettingZoo's API tests call reset(seed=0, options={"options": 1}) only to check that reset takes an options dict.
PROBE_KEY = "options"


def _unknown_message(given: Mapping[str, Any], known: Collection[str], what: str) -> str | None:
    unknown = [k for k in given if k not in known]
    if not unknown:
        return None
    hints = []
    for k in unknown:
        close = difflib.get_close_matches(str(k), list(known), n=1)
        hints.append(f"{k!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
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
    if value not in choices:
        raise OptionError(f"option {name}={value!r} is not one of {sorted(choices, key=str)}")
    return value


def int_in(name: str, value: Any, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int,)) and not hasattr(value, "__index__"):
        raise OptionError(f"option {name} must be an integer in {low}..{high}, got {value!r}")
    value = int(value)
    if not low <= value <= high:
        raise OptionError(f"option {name}={value} is out of range {low}..{high}")
    return value


def flag(name: str, value: Any) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise OptionError(f"option {name} must be True or False, got {value!r}")
    return bool(value)


def number(name: str, value: Any, low: float = float("-inf"), high: float = float("inf")) -> float:
    """A finite real number in ``low..high`` (NaN and infinities are refused: records must stay plain JSON)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise OptionError(f"option {name} must be a number, got {value!r}")
    value = float(value)
    if not math.isfinite(value) or not low <= value <= high:
        raise OptionError(f"option {name}={value} is out of range {low}..{high}")
    return value


def seed_value(seed: Any) -> int:
    """A game seed: a non-negative integer (Python or numpy). Anything else would be silently converted by numpy
    (``1.5`` plays seed 1, ``"5"`` is refused with numpy's own message), so it is refused here by name."""
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
        raise OptionError(f"seed must be a non-negative integer or None, got {seed!r} ({type(seed).__name__})")
    if seed < 0:
        raise OptionError(f"seed must be a non-negative integer or None, got {seed}")
    return int(seed)


def plain(value: Any) -> Any:
    """``value`` as plain JSON data, copied: numpy scalars become Python numbers, tuples and arrays lists, dicts
    are copied key by key. Records hold only such copies, so a caller changing its deck list later cannot change a
    recorded game, and ``json.dumps`` never meets an ``int64``."""
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
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [plain(v) for v in value]
    return value
