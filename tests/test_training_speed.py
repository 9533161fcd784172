"""The training-throughput benchmark's plumbing (never its timings): what one trainer's measurement holds, and the
files written from the results."""

from __future__ import annotations

import csv
import json

from cardzoo.envs.common.charts import quantity_figure
from cardzoo.evaluation.benchmarks import training_speed


def test_a_measurement_counts_whole_rollouts_of_the_trainer():
    row = training_speed._measure("cleanrl", "rope_team", 1, seed=0)  # one rollout: 8 envs x 128 steps
    assert row["trainer"] == "cleanrl" and row["env_steps"] == 1024
    assert row["env_steps_per_second"] == row["env_steps"] / row["seconds"] > 0
    assert row["settings"]["num_envs"] * row["settings"]["num_steps"] == 1024


def test_results_are_written_as_json_csv_and_a_chart_in_the_trainers_order(tmp_path):
    rows = [{"trainer": "sb3", "label": "SB3", "env_steps": 8192, "seconds": 4.0, "setup_seconds": 1.0,
             "env_steps_per_second": 2048.0, "load_average_before": 1.0, "load_average_after": 1.5, "settings": {}},
            {"trainer": "rllib_1", "label": "RLlib, 1 runner", "env_steps": 4000, "seconds": 16.0,
             "setup_seconds": 9.0, "env_steps_per_second": 250.0, "load_average_before": 1.5,
             "load_average_after": 2.0, "settings": {}}]
    results = {"game": "rope_team", "cpu_count": 2, "trainers": rows}
    files = training_speed.write(results, tmp_path)
    assert [f.name for f in files] == ["training_speed.json", "training_speed.csv", "training_speed.png",
                                       "training_speed.svg"]
    assert json.loads(files[0].read_text()) == results
    with open(files[1]) as f:
        table = list(csv.DictReader(f))
    assert [(r["trainer"], float(r["env_steps_per_second"])) for r in table] == [("sb3", 2048.0), ("rllib_1", 250.0)]
    assert "environment steps per second" in files[3].read_text()


def test_the_chart_has_one_labelled_bar_per_trainer_the_first_at_the_top():
    fig = quantity_figure("T", {"SB3": 2048.0, "RLlib, 1 runner": 250.0, "CleanRL": 900.0}, "steps per second")
    ax = fig.axes[0]
    bars = sorted(ax.patches, key=lambda b: -b.get_y())  # top first
    assert [b.get_width() for b in bars] == [2048.0, 250.0, 900.0]
    labels = {t.get_text(): t.get_position()[1] for t in ax.get_yticklabels()}
    assert sorted(labels, key=lambda name: -labels[name]) == ["SB3", "RLlib, 1 runner", "CleanRL"]
    assert [t.get_text() for t in ax.texts] == ["900", "250", "2,048"]  # each bar's value, bottom up
