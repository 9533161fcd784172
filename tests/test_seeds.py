"""The seeds/ folder: figures readable by code, and every ruling pinned by a test that exists."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cardzoo.seeds import figures

ROOT = Path(__file__).resolve().parent.parent


def test_rope_team_figures():
    f = figures("rope_team")
    assert f["win_rate"] == {"hard": 0.54, "normal": 0.79, "easy": 0.88, "expert": 0.44}
    assert f["games_per_level"] == 4000 and f["observations"]["most_wins_in_deal"] == 2
    with pytest.raises(KeyError, match="known"):
        figures("poker")


@pytest.mark.parametrize("ruling_file", sorted((ROOT / "seeds").glob("*.md")), ids=lambda p: p.name)
def test_every_ruling_names_an_existing_test(ruling_file):
    text = ruling_file.read_text()
    named = set(re.findall(r"`(test_\w+)`", text))
    assert named, f"{ruling_file.name} should pin its rulings to tests, named in backticks"
    defined = set()
    for test_file in (ROOT / "tests").glob("test_*.py"):
        defined |= set(re.findall(r"^def (test_\w+)", test_file.read_text(), flags=re.M))
    assert named - defined == set(), f"{ruling_file.name} cites tests that do not exist"
