"""The old name of :mod:`cardzoo.evaluation.studies.distil`,
kept so that ``python -m cardzoo.evaluation.distil_study`` still runs."""
from runpy import run_module

if __name__ == "__main__":
    run_module("cardzoo.evaluation.studies.distil", run_name="__main__", alter_sys=True)
else:
    from cardzoo.evaluation.studies.distil import *  # noqa: F403
