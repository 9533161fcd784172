"""The old name of :mod:`cardzoo.evaluation.report.sections.summit_rush_talk`,
kept so that ``python -m cardzoo.evaluation.summit_rush_talk`` still runs."""
from runpy import run_module

if __name__ == "__main__":
    run_module("cardzoo.evaluation.report.sections.summit_rush_talk", run_name="__main__", alter_sys=True)
else:
    from cardzoo.evaluation.report.sections.summit_rush_talk import *  # noqa: F403
