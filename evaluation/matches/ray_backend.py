"""``cardzoo evaluate --backend ray``: the runner's chunks of games as Ray tasks, on a cluster or in-process.

Each chunk is the runner's own ``_play_chunk`` run as a Ray task, and a game's result depends only on its seed
(agents are seeded from the game seed and seat), so the report is the same as the local run's, game for game.
Every node needs cardzoo installed (a task imports it where it runs).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import Executor, Future
from contextlib import contextmanager

from cardzoo.training.ray_session import ray_session


class RayExecutor(Executor):
    """A ``concurrent.futures`` executor whose jobs are Ray tasks (one CPU each); ``shutdown`` leaves Ray running."""

    def __init__(self):
        self._remote: dict[Callable, object] = {}

    def submit(self, fn: Callable, /, *args, **kwargs) -> Future:
        import ray

        if fn not in self._remote:
            self._remote[fn] = ray.remote(fn)
        return self._remote[fn].remote(*args, **kwargs).future()


@contextmanager
def ray_executor(address: str | None = None) -> Iterator[RayExecutor]:
    """A ``RayExecutor`` in a ``ray_session(address)``."""
    with ray_session(address):
        yield RayExecutor()
