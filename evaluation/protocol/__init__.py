"""``benchmark_v2``: a fixed protocol that scores anyone's agent on cardzoo's games (``cardzoo benchmark``).

In the cooperative games (Rope Team, Summit Rush) an agent is scored with itself (self-play) and with every member
of the game's partner pool (cross-play: zero-shot coordination with strangers), in both seats; in Rook, against
every member of its opponent pool in both seats. Each pool (``cardzoo.agents.pools``) has a dev part (tune on it),
a held-out test part, both of competent members only, and a weak part (the robustness row), reported apart; the
quick budget plays the test part, the full budget every part. Every cell of a run plays the same deals, drawn from
the run's secret key in a seed range no training command uses (:mod:`.seeds`); outside agents play in worker
processes of their own under time and memory limits (:mod:`cardzoo.agents.isolated`). Headline numbers per game:
the self-play win rate, the mean cross-play win rate over each part of the pool (both seats; every member plays
the same games, so it is the pooled rate), the gap (self-play minus cross-play), the worst competent partner,
paired comparisons with a reference agent on the same deals (McNemar), the illegal moves and errors, and the CPU
time per decision.

The protocol's facts are in :mod:`.protocol` (settings, budgets, cells), playing it is :func:`benchmark`
(:mod:`.run`), the files are written by :func:`write` (:mod:`.results`), runs of pieces are joined by
:mod:`.merge`, the leaderboard is written by :mod:`.leaderboard`, and :mod:`.template_agent` is an agent to copy.
``docs/benchmark.md`` states the protocol in words.

    from cardzoo.evaluation.protocol import benchmark, write
    result = benchmark("my_agent.py:make_agent", games=["rope_team"], budget="quick", workers=2)
    write(result, "reports/benchmark")
"""

from __future__ import annotations

from typing import Any

__all__ = ["benchmark", "read", "write"]


def __getattr__(name: str) -> Any:  # lazily: the trainers import .seeds, which must not pull in the runner
    if name == "benchmark":
        from .run import benchmark

        return benchmark
    if name in ("write", "read"):
        from . import results

        return getattr(results, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
