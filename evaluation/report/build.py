"""``cardzoo evaluate``: runs each game's section (or only some, keeping the others of the report in ``--out``)
and writes the report."""

from __future__ import annotations

import time
from importlib import import_module
from pathlib import Path

from cardzoo.envs.registry import GAMES

from .model import SECTIONS, Settings, previous_sections
from .writer import write


def _load_sections() -> None:
    # Importing a game's section module registers its section, in the registry's order (the report's); a game
    # without a section module has no section (the structure test requires one for every registered game).
    for name in GAMES:
        module = f"{__package__}.sections.{name}"
        try:
            import_module(module)
        except ModuleNotFoundError as err:
            if err.name != module:
                raise
    # A section imported earlier (a study imports its game's) registered first: back to the registry's order.
    ordered = {name: SECTIONS[name] for name in GAMES if name in SECTIONS}
    ordered.update(SECTIONS)
    SECTIONS.clear()
    SECTIONS.update(ordered)


def main(settings: Settings) -> Path:
    _load_sections()
    chosen = settings.only or list(SECTIONS)
    unknown = [g for g in chosen if g not in SECTIONS]
    if unknown:
        raise SystemExit(f"cardzoo evaluate: no section for {unknown}; sections: {', '.join(SECTIONS)}")
    made = {}
    for game in chosen:
        start = time.time()
        result = SECTIONS[game](settings)
        result.seconds = time.time() - start
        made[game] = result
    kept = previous_sections(settings, exclude=set(made)) if settings.only else {}
    if kept:
        print(f"kept from the report in {settings.out}: {', '.join(kept)} (redone: {', '.join(made)})")
    sections = [made.get(game) or kept[game] for game in SECTIONS if game in made or game in kept]
    path = write(settings, sections)
    from cardzoo.envs.common.charts import available

    charts = "charts" if available() else "no charts (matplotlib is not installed: pip install cardzoo[report])"
    print(f"report written: {path} (with results.csv, results.json and {charts} in {settings.out})")
    return path
