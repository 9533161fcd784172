"""Progress for long runs: a live tqdm bar on a terminal, one plain line per finished task otherwise.

Logs and CI output are not terminals: a bar redrawn with carriage returns piles up there as one huge line, so
off a terminal nothing is printed until the task ends, and then one line says what was done and how long it
took. tqdm comes with the ``report`` extra; without it a terminal gets the same single line at the end.
"""

from __future__ import annotations

import sys
import time
from typing import IO, Any


def _bar_class() -> Any:
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm


class Progress:
    """Counts ``total`` units of work under ``label``; ``update(n)`` as they finish, ``close()`` at the end.

    ``enabled=False`` prints nothing at all. Use it as a context manager so the bar or line is always closed.
    """

    def __init__(self, label: str, total: int, unit: str = "games", stream: IO[str] | None = None,
                 enabled: bool = True, initial: int = 0):
        self.label, self.total, self.unit = label, total, unit
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = enabled
        self.count = initial
        self.start = time.monotonic()
        self._closed = False
        self._bar = None
        bar_class = _bar_class() if enabled and _is_terminal(self.stream) else None
        if bar_class is not None:
            self._bar = bar_class(total=total, initial=initial, desc=f"  {label}", unit=f" {unit}",
                                  file=self.stream, leave=True, dynamic_ncols=True)

    def update(self, n: int = 1) -> None:
        self.count += n
        if self._bar is not None:
            self._bar.update(n)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._bar is not None:
            self._bar.close()
        elif self.enabled:
            seconds = time.monotonic() - self.start
            print(f"  {self.label}: {self.count:,}/{self.total:,} {self.unit} in {seconds:.1f} s",
                  file=self.stream, flush=True)

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _is_terminal(stream: IO[str]) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or unusual stream is not a terminal
        return False
