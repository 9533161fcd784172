"""The rule documents' figures as data, and the project's rulings (the ``*.md`` files beside this one).

``figures("rope_team")`` returns the parsed ``rope_team_figures.json``: what the rule document reports from its
own simulations, which evaluation compares against. The figures are read, never hard-coded elsewhere.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any


def figures(game: str) -> dict[str, Any]:
    path = resources.files(__name__) / f"{game}_figures.json"
    if not path.is_file():
        known = sorted(p.name.removesuffix("_figures.json") for p in resources.files(__name__).iterdir()
                       if p.name.endswith("_figures.json"))
        raise KeyError(f"no figures for game {game!r}; known: {known}")
    return json.loads(path.read_text())
