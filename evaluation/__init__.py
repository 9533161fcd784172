"""Evaluating agents: matches (``matches``), the report (``report``), offline studies (``studies``), speed
measurements (``benchmarks``), the statistics (``stats``) and the ``cardzoo`` command (``cli``)."""

from pathlib import Path as _Path

# The modules' names before they were grouped by job (``python -m cardzoo.evaluation.summit_rush_search_study``,
# quoted in committed results and people's notes) stay runnable from moved/, which is on this package's path
# but keeps those ten names out of its own folder.
__path__.append(str(_Path(__file__).resolve().parent / "moved"))
