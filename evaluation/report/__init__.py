"""``cardzoo evaluate``: the evaluation report -- every game and level, every agent, beside the documents' figures.

The report folder holds ``summary.md`` (tables and notes), ``results.csv`` and ``results.json`` (every figure,
with its interval and game count) and one PNG chart per game. The documents' figures are read from ``seeds/``.
The committed report is ``evaluation/results/report/``.

:mod:`.model` holds the settings, rows and sections; :mod:`.sections` one module per game; :mod:`.search` the
search agents' tables from their committed studies; :mod:`.charts` the figures; :mod:`.writer` the files;
:mod:`.build` runs the sections (``main``).
"""

from .build import main
from .model import (
    FULL_GAMES,
    QUICK_GAMES,
    RESULTS,
    SECTIONS,
    Row,
    Section,
    Settings,
    load_result,
    play,
    previous_sections,
    section,
    wins,
)
from .writer import write

__all__ = ["FULL_GAMES", "QUICK_GAMES", "RESULTS", "SECTIONS", "Row", "Section", "Settings", "load_result", "main",
           "play", "previous_sections", "section", "wins", "write"]
