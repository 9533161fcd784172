"""The old name of :mod:`cardzoo.envs.common.stats` (Wilson intervals, paired tests), which moved below training
and evaluation so that both can read it; kept so that ``from cardzoo.evaluation.stats import wilson`` still works."""
from cardzoo.envs.common.stats import *  # noqa: F403
