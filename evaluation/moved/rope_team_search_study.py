"""The old name of :mod:`cardzoo.evaluation.studies.search_rope_team`,
kept so that ``python -m cardzoo.evaluation.rope_team_search_study`` still runs."""
from runpy import run_module

if __name__ == "__main__":
    run_module("cardzoo.evaluation.studies.search_rope_team", run_name="__main__", alter_sys=True)
else:
    from cardzoo.evaluation.studies.search_rope_team import *  # noqa: F403
