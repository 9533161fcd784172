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
    """Counts ``total`` units of work under ``label``; ``update(n)`` or ``set(count)`` as they finish, ``close()``
    at the end.

    ``note`` (e.g. a loss or a rate) is shown beside the bar and in the lines. Off a terminal, ``every`` seconds
    (None: never) a line says where the work stands, for long runs whose log would otherwise stay silent.
    ``enabled=False`` prints nothing at all. Use it as a context manager so the bar or line is always closed.
    """

    def __init__(self, label: str, total: int, unit: str = "games", stream: IO[str] | None = None,
                 enabled: bool = True, initial: int = 0, every: float | None = None):
        self.label, self.total, self.unit = label, total, unit
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = enabled
        self.count = initial
        self.note = ""
        self.every = every
        self.start = self._last_line = time.monotonic()
        self._closed = False
        self._bar = None
        bar_class = _bar_class() if enabled and _is_terminal(self.stream) else None
        if bar_class is not None:
            self._bar = bar_class(total=total, initial=initial, desc=f"  {label}", unit=f" {unit}",
                                  file=self.stream, leave=True, dynamic_ncols=True)

    def update(self, n: int = 1, note: str | None = None) -> None:
        self.set(self.count + n, note)

    def set(self, count: int, note: str | None = None) -> None:
        """The work done so far is ``count`` units (never shown past ``total``)."""
        count = min(count, self.total)
        if note is not None:
            self.note = note
        if self._bar is not None:
            self._bar.update(count - self.count)
            if note is not None:
                self._bar.set_postfix_str(note, refresh=False)
        self.count = count
        if self._bar is None and self.enabled and self.every is not None:
            now = time.monotonic()
            if now - self._last_line >= self.every and self.count < self.total:
                self._last_line = now
                self._line("so far", now)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._bar is not None:
            self._bar.close()
        elif self.enabled:
            self._line("in", time.monotonic())

    def _line(self, when: str, now: float) -> None:
        seconds = now - self.start
        note = f", {self.note}" if self.note else ""
        print(f"  {self.label}: {self.count:,}/{self.total:,} {self.unit} {when} {seconds:.1f} s{note}",
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
