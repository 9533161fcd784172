"""Running PettingZoo's test functions and keeping only the warnings an env could have avoided."""

from __future__ import annotations

import warnings

# Warnings PettingZoo's tests give every env with the classic observation format (a Dict of observation and
# action mask, whitelisted there only by PettingZoo's own env names), and our warning for the API test's own
# probe reset option {"options": 1}.
UNAVOIDABLE_API_WARNINGS = (
    "Observation is not a NumPy array",
    "Observation space for each agent probably should be gymnasium.spaces.box or gymnasium.spaces.discrete",
    "Action mask numpy array is all zeros (no legal actions).",
    "reset option 'options' is not an option of this game",
)


def api_warnings(run) -> list[str]:
    """Run a PettingZoo test; return the warnings it raised that are not in UNAVOIDABLE_API_WARNINGS."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run()
    return [str(w.message) for w in caught if not str(w.message).startswith(UNAVOIDABLE_API_WARNINGS)]
