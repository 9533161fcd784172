"""The old name of :mod:`cardzoo.evaluation.studies.search_summit_rush`,
kept so that ``python -m cardzoo.evaluation.summit_rush_search_study`` still runs."""
from runpy import run_module

if __name__ == "__main__":
    run_module("cardzoo.evaluation.studies.search_summit_rush", run_name="__main__", alter_sys=True)
else:
    from cardzoo.evaluation.studies.search_summit_rush import *  # noqa: F403
