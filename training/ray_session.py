"""A Ray session for the duration of a job: RLlib training (``cardzoo.training.rllib``) and the evaluation runner's
Ray backend (``cardzoo.evaluation.matches.ray_backend``) both open theirs here. Ray is imported only when a session
starts, so importing this module needs no Ray."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def ray_session(address: str | None = None) -> Iterator[None]:
    """Ray for the duration: the running one if this process has one, else the cluster at ``address``, else Ray
    started in this process; shut down at the end only if it was started here."""
    import ray

    started = not ray.is_initialized()
    if started:
        ray.init(address=address, include_dashboard=False)
    try:
        yield
    finally:
        if started:
            ray.shutdown()
