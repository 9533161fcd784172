"""The old name of :mod:`cardzoo.evaluation.benchmarks.runner_speed`,
kept so that ``python -m cardzoo.evaluation.speed`` still runs."""
from runpy import run_module

if __name__ == "__main__":
    run_module("cardzoo.evaluation.benchmarks.runner_speed", run_name="__main__", alter_sys=True)
else:
    from cardzoo.evaluation.benchmarks.runner_speed import *  # noqa: F403
