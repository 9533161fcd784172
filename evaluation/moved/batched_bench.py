"""The old name of :mod:`cardzoo.evaluation.benchmarks.batched`,
kept so that ``python -m cardzoo.evaluation.batched_bench`` still runs."""
from runpy import run_module

if __name__ == "__main__":
    run_module("cardzoo.evaluation.benchmarks.batched", run_name="__main__", alter_sys=True)
else:
    from cardzoo.evaluation.benchmarks.batched import *  # noqa: F403
