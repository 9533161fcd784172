"""The old name of :mod:`cardzoo.evaluation.studies.search_rook`,
kept so that ``python -m cardzoo.evaluation.rook_search_study`` still runs."""
from runpy import run_module

if __name__ == "__main__":
    run_module("cardzoo.evaluation.studies.search_rook", run_name="__main__", alter_sys=True)
else:
    from cardzoo.evaluation.studies.search_rook import *  # noqa: F403
