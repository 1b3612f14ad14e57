"""Progress lines on standard error for long runs, shown only on a terminal.

A long simulation or solve prints nothing on standard output until it is done (standard output
carries only the result, so that ``--json`` output stays machine-readable). When standard error
is a terminal, :class:`Progress` keeps one status line there, rewritten at most a few times a
second and erased at the end; otherwise it writes nothing.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

__all__ = ["Progress"]


class Progress:
    """One status line on a stream, rewritten in place.

    Parameters
    ----------
    stream
        Where to write (default: standard error).
    enabled
        Write at all; default: only when ``stream`` is a terminal.
    interval
        Least number of seconds between two rewrites.

    Examples
    --------
    >>> import io
    >>> buf = io.StringIO()
    >>> with Progress(buf, enabled=True, interval=0.0) as p:
    ...     p.update("events 10")
    >>> buf.getvalue().count("events 10")
    1
    >>> quiet = io.StringIO()
    >>> with Progress(quiet) as p:  # a StringIO is not a terminal
    ...     p.update("events 10")
    >>> quiet.getvalue()
    ''
    """

    def __init__(
        self, stream: TextIO | None = None, *, enabled: bool | None = None, interval: float = 0.25
    ) -> None:
        self.stream = sys.stderr if stream is None else stream
        if enabled is None:
            isatty = getattr(self.stream, "isatty", None)
            enabled = bool(isatty and isatty())
        self.enabled = enabled
        self.interval = interval
        self._last = -float("inf")
        self._width = 0
        self._start = time.perf_counter()

    @property
    def elapsed(self) -> float:
        """Seconds since the line was created."""
        return time.perf_counter() - self._start

    def update(self, text: str, *, force: bool = False) -> None:
        """Shows ``text`` (unless the last rewrite was less than ``interval`` ago)."""
        if not self.enabled:
            return
        now = time.perf_counter()
        if not force and now - self._last < self.interval:
            return
        self._last = now
        line = f"{text}  [{self.elapsed:.0f} s]"
        self.stream.write("\r" + line.ljust(self._width))
        self.stream.flush()
        self._width = len(line)

    def close(self) -> None:
        """Erases the line."""
        if self.enabled and self._width:
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()
            self._width = 0

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
