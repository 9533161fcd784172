"""The study behind ``learned_turns``' short-clock rule (``cardzoo.evaluation.studies.summit_rush_turns``): each
variant paired with ``learned`` on the same deals, the committed table measured with the shipped default, and no
benchmark deal played."""

from __future__ import annotations

import json

import pytest

from cardzoo.agents.summit_rush_turns import DOUBLE_BELOW
from cardzoo.envs.common.errors import OptionError
from cardzoo.envs.common.seeding import FIRST as BENCHMARK_FIRST
from cardzoo.evaluation.studies import summit_rush_turns as study


def test_each_variant_is_paired_with_learned_on_the_same_deals(monkeypatch):
    monkeypatch.setattr(study, "LEVELS", ("expert",))
    data = study.study(games=60, first=study.FIRST, workers=1)
    cells = data["levels"]["expert"]["cells"]
    seeds = list(range(study.FIRST, study.FIRST + 60))
    discordant = 0
    base = study.wins("expert", None, seeds, 1)
    assert cells["learned"]["wins"] == sum(base)
    for d in study.DOUBLES:
        won = study.wins("expert", d, seeds, 1)
        cell = cells[f"double_below={d:g}"]
        assert cell["wins"] == sum(won)
        m = cell["minus_learned"]
        assert m["only_this"] == sum(w and not b for w, b in zip(won, base, strict=True))
        assert m["only_learned"] == sum(b and not w for w, b in zip(won, base, strict=True))
        assert m["difference"] == pytest.approx((sum(won) - sum(base)) / 60)
        discordant += m["only_this"] + m["only_learned"]
    assert discordant > 0  # the pairing is checked on deals where the teams differ


def test_the_committed_table_holds_the_shipped_default():
    data = json.loads((study.RESULTS / "summit_rush_turns.json").read_text())
    assert data["default_double_below"] == DOUBLE_BELOW
    for level in study.LEVELS:
        cells = data["levels"][level]["cells"]
        assert f"double_below={DOUBLE_BELOW:g}" in cells and "learned" in cells
        assert all(c["games"] == data["games"] >= 1000 for c in cells.values())


def test_the_study_refuses_the_benchmarks_deals():
    with pytest.raises(OptionError, match="reserved deals"):
        study.study(games=5, first=BENCHMARK_FIRST, workers=1)
