"""docs/speed.md's figures are the committed results', written by ``cardzoo.evaluation.benchmarks.speed_page`` (a
figure typed by hand would drift from the results it reports)."""

from __future__ import annotations

import copy

import pytest

from cardzoo.evaluation.benchmarks import speed_page

PAGE = speed_page.PAGE.read_text()
RESULTS = speed_page.committed()


def test_the_page_is_the_committed_results():
    assert speed_page.page_with_tables(PAGE, RESULTS) == PAGE, (
        "docs/speed.md's tables are not the committed results': run python -m cardzoo.evaluation.benchmarks.speed_page")


def test_the_tables_follow_the_results():
    """A changed result changes its table (so the comparison above can fail), in every marked part."""
    changed = copy.deepcopy(RESULTS)
    changed["bench"]["rows"][0]["steps_per_cpu_second"] = 1234567
    changed["runner"]["games_per_second"] = 7654321
    changed["training-speed"]["trainers"][0]["env_steps_per_second"] = 3456789
    changed["batched-engine"]["rope_team_v0"]["batched"][-1]["decisions_per_cpu_second"] = 9876543
    changed["batched-trainer"]["pooled"]["batched"]["steps_per_cpu_second"] = 8765432
    level = next(iter(changed["batched-payoff"]["levels"].values()))
    level["policy"]["rate"] = 0.1234
    page = speed_page.page_with_tables(PAGE, changed)
    for figure in ("1,234,567", "7,654,321", "3,456,789", "9,876,543", "8,765,432", "12.3%"):
        assert figure in page and figure not in PAGE


def test_the_trainer_table_names_the_features_ratio_against_its_target():
    trainer = copy.deepcopy(RESULTS["batched-trainer"])
    trainer.update(features="rope_team_scores", features_ratio_cpu=0.79, features_ratio_wall=0.8,
                   features_ratio_cpu_per_round=[0.79], features_target=0.8)
    trainer["pooled"]["batched_features"] = {"steps": 1, "steps_per_second": 1, "steps_per_cpu_second": 17650}
    table = " ".join(speed_page.trainer_table(trainer).split())  # the bullets are wrapped
    assert "reading `rope_team_scores`" in table and "| 17,650 |" in table and "**0.79**" in table
    assert "misses the target of 0.8" in table
    trainer["features_ratio_cpu"] = 0.8
    assert "meets the target of 0.8" in " ".join(speed_page.trainer_table(trainer).split())


@pytest.mark.parametrize("marker", list(speed_page.SOURCES))
def test_every_marker_is_required(marker):
    with pytest.raises(ValueError, match=marker):
        speed_page.page_with_tables(PAGE.replace(f"<!-- /{marker} -->", ""), RESULTS)
