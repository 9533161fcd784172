"""The old name of :mod:`cardzoo.evaluation.benchmarks.training_speed`,
kept so that ``python -m cardzoo.evaluation.training_speed`` still runs."""
from runpy import run_module

if __name__ == "__main__":
    run_module("cardzoo.evaluation.benchmarks.training_speed", run_name="__main__", alter_sys=True)
else:
    from cardzoo.evaluation.benchmarks.training_speed import *  # noqa: F403
