"""One BLAS thread for the small matrix products of a policy batched over search worlds.

A search that plays a numpy policy in its rollouts multiplies a few hundred rows by the policy's layers some fifty
times per decision. OpenBLAS (numpy's wheels on Linux and Windows) splits each such product over every core; on a
busy machine the threads spin waiting for one another, and a decision measured 3 to 5 times the CPU time of one
thread (Rope Team's ``search_learned``: 155 ms against 33 ms per decision; a test 109 s of wall time against 9 s).
:func:`one_blas_thread` sets the calling thread's OpenBLAS to one thread for the duration of a block and restores it
after, leaving the rest of the process as it was (``openblas_set_num_threads_local``, OpenBLAS 0.3.27 and later).
Where numpy's BLAS is not OpenBLAS, or the call is missing, it does nothing.
"""

from __future__ import annotations

import ctypes
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

_UNSET = object()
_local = _UNSET  # openblas_set_num_threads_local, None when there is none


def _find():
    """The loaded OpenBLAS's thread-local setter (Linux: from the process's mapped libraries), or None."""
    maps = Path("/proc/self/maps")
    if not maps.is_file():
        return None
    paths = {line.split()[-1] for line in maps.read_text().splitlines() if "openblas" in line.lower()
             and line.split()[-1].startswith("/")}
    for path in sorted(paths):
        try:
            library = ctypes.CDLL(path)  # already loaded by numpy: the same handle
            setter = library.openblas_set_num_threads_local
        except (OSError, AttributeError):
            continue
        setter.argtypes, setter.restype = [ctypes.c_int], ctypes.c_int
        return setter
    return None


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """Inside the block, this thread's OpenBLAS calls use one thread."""
    global _local
    if _local is _UNSET:
        import numpy  # noqa: F401 (OpenBLAS is loaded with numpy: look for it after)

        _local = _find()
    if _local is None:
        yield
        return
    previous = _local(1)
    try:
        yield
    finally:
        _local(previous)
