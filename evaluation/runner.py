"""Moved to :mod:`cardzoo.evaluation.matches.runner`; this name stays for code that imports it."""
from cardzoo.evaluation.matches.runner import *  # noqa: F403
