"""``cardzoo evaluate``: the evaluation report (:mod:`.model`), its game sections (:mod:`.sections`), the search
agents' tables (:mod:`.search`) and charts (:mod:`.charts`). The committed report is ``evaluation/results/report/``."""

from .model import (
                    FULL_GAMES,
                    QUICK_GAMES,
                    RESULTS,
                    SECTIONS,
                    Row,
                    Section,
                    Settings,
                    load_result,
                    main,
                    play,
                    previous_sections,
                    section,
                    wins,
                    write,
)

__all__ = ["FULL_GAMES", "QUICK_GAMES", "RESULTS", "SECTIONS", "Row", "Section", "Settings", "load_result", "main",
           "play", "previous_sections", "section", "wins", "write"]
