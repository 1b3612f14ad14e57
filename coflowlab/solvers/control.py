"""Run-time control of solves: a graceful interrupt (Ctrl-C) and progress reports.

Both are off by default: a library call behaves as plain Python (Ctrl-C raises
:class:`KeyboardInterrupt`, nothing is printed). A caller that wants them, typically the
command line, runs its work inside :func:`interruptible`::

    progress = stderr_progress() if sys.stderr.isatty() else None
    with interruptible(progress=progress) as control:
        solution = solve_exact_slotted(instance, SolverOptions(time_limit=60))
    exit_code = 130 if control.interrupted else 0

Inside it, the first SIGINT only sets :attr:`SolveControl.interrupted`: the running HiGHS
solve stops at its next callback (Gurobi's too; CBC stops on the terminal's own SIGINT) and
returns its incumbent and proven bound with status ``interrupted``; Python-level searches
(the branch and bound of ``exact-fluid``) poll :func:`interrupt_requested` between nodes.
A second SIGINT raises :class:`KeyboardInterrupt` as usual, for a solver that does not stop.

Progress: every backend reports through :class:`ProgressReporter`, which forwards
:class:`SolveProgress` records to the hook given to :func:`interruptible`, at most one per
``progress_interval`` seconds and never during a solve's first interval (the thousands of
small LPs of a branch and bound stay silent; the search reports for them).
"""

from __future__ import annotations

import contextlib
import math
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import FrameType
from typing import TextIO

from .result import relative_gap

__all__ = [
    "ProgressHook",
    "ProgressReporter",
    "SolveControl",
    "SolveProgress",
    "current_control",
    "interrupt_requested",
    "interruptible",
    "request_interrupt",
    "stderr_progress",
]


@dataclass(frozen=True)
class SolveProgress:
    """One progress report of a running solve.

    Attributes
    ----------
    source
        Who reports: a backend (``"highs"``, ``"cbc"``, ``"gurobi"``) or a method
        (``"exact-fluid"``).
    name
        The model's or the method's name.
    elapsed
        Wall seconds since that solve (or method) started.
    incumbent
        The best objective found so far (``nan``: none yet, or an LP).
    bound
        The best proven lower bound (``nan``: none yet).
    nodes, iterations
        Branch-and-bound nodes and simplex/IPM iterations so far, when known.
    event
        ``"status"`` (periodic) or ``"incumbent"`` (a better solution was just found).

    Examples
    --------
    >>> SolveProgress("highs", "exact-slotted", 12.04, 494.0, 455.0, nodes=37).line()
    'highs exact-slotted: 12.0 s, incumbent 494, bound 455, gap 7.89%, 37 nodes'
    """

    source: str
    name: str
    elapsed: float
    incumbent: float = math.nan
    bound: float = math.nan
    nodes: int | None = None
    iterations: int | None = None
    event: str = "status"

    @property
    def gap(self) -> float:
        """:func:`~coflowlab.solvers.relative_gap` of incumbent and bound (``nan`` without
        both)."""
        if not (math.isfinite(self.incumbent) and math.isfinite(self.bound)):
            return math.nan
        return relative_gap(self.incumbent, self.bound)

    def line(self) -> str:
        """The report as one human-readable line (no newline)."""
        parts = [f"{self.source} {self.name}: {self.elapsed:.1f} s"]
        if self.event == "incumbent":
            parts.append("new incumbent")
        if math.isfinite(self.incumbent):
            parts.append(f"incumbent {self.incumbent:.10g}")
        if math.isfinite(self.bound):
            parts.append(f"bound {self.bound:.10g}")
        if math.isfinite(self.gap):
            parts.append(f"gap {100 * self.gap:.3g}%")
        if self.nodes is not None:
            parts.append(f"{self.nodes} nodes")
        if self.iterations is not None:
            parts.append(f"{self.iterations} iterations")
        return ", ".join(parts)


ProgressHook = Callable[[SolveProgress], None]
"""What receives :class:`SolveProgress` records (see :func:`stderr_progress`)."""


class SolveControl:
    """The state shared by the solves run inside one :func:`interruptible` block.

    Attributes
    ----------
    interrupted
        Whether an interrupt was requested (a SIGINT, or :meth:`request_interrupt`). It
        stays set after the block ends, so the caller can choose its exit status.
    progress
        The progress hook (``None``: no reports).
    progress_interval
        Seconds between two reports of one solve, and before its first.
    sigints
        SIGINTs received in the block.

    Examples
    --------
    >>> with interruptible() as control:
    ...     interrupt_requested()
    ...     control.request_interrupt()
    ...     interrupt_requested()
    False
    True
    >>> control.interrupted, interrupt_requested()
    (True, False)
    """

    def __init__(
        self,
        progress: ProgressHook | None = None,
        progress_interval: float = 1.0,
        notice: str | None = None,
    ) -> None:
        if not (progress_interval >= 0):
            raise ValueError(f"progress_interval must be >= 0, got {progress_interval!r}")
        self.interrupted = False
        self.progress = progress
        self.progress_interval = float(progress_interval)
        self.notice = notice
        self.sigints = 0

    def request_interrupt(self) -> None:
        """Asks the running solve (and every later one in the block) to stop and return
        what it has; what the first SIGINT does."""
        self.interrupted = True

    def _on_sigint(self, signum: int, frame: FrameType | None) -> None:
        self.sigints += 1
        self.interrupted = True
        if self.sigints > 1:  # a second Ctrl-C: the user insists, stop the hard way
            raise KeyboardInterrupt
        if self.notice:
            # os.write, not sys.stderr: the handler may run while the stream is mid-write
            with contextlib.suppress(OSError):
                os.write(2, (self.notice.rstrip("\n") + "\n").encode())


_current: SolveControl | None = None


def current_control() -> SolveControl | None:
    """The control of the innermost active :func:`interruptible` block (``None`` outside
    every block: no interrupt handling, no progress)."""
    return _current


def interrupt_requested() -> bool:
    """Whether the active :func:`interruptible` block was interrupted (``False`` outside
    every block). Long Python loops poll it to stop cleanly.

    Examples
    --------
    >>> interrupt_requested()
    False
    """
    return _current is not None and _current.interrupted


def request_interrupt() -> bool:
    """Requests an interrupt of the active block, as a SIGINT would; returns whether there
    was an active block to interrupt.

    Examples
    --------
    >>> request_interrupt()
    False
    """
    if _current is None:
        return False
    _current.request_interrupt()
    return True


@contextmanager
def interruptible(
    progress: ProgressHook | None = None,
    *,
    progress_interval: float = 1.0,
    handle_sigint: bool = True,
    notice: str | None = None,
) -> Iterator[SolveControl]:
    """Runs the block with graceful interrupts and, if ``progress`` is given, progress
    reports (module notes).

    Parameters
    ----------
    progress
        Receives :class:`SolveProgress` records (e.g. :func:`stderr_progress`); ``None``: quiet.
    progress_interval
        Seconds between reports of one solve (and before its first).
    handle_sigint
        Install the SIGINT handler (only possible in the main thread; elsewhere the block
        still works through :func:`request_interrupt`). The previous handler is restored on
        exit.
    notice
        A line written to standard error at the first SIGINT, e.g. ``"interrupted: stopping
        the solver (Ctrl-C again to abort)"``; ``None``: nothing.

    Yields
    ------
    SolveControl
        Its ``interrupted`` flag tells the caller whether to exit with status 130.

    Examples
    --------
    >>> import os, signal
    >>> with interruptible() as control:
    ...     os.kill(os.getpid(), signal.SIGINT)  # what Ctrl-C sends
    ...     control.interrupted
    True
    """
    global _current
    control = SolveControl(progress, progress_interval, notice)
    previous = _current
    install = handle_sigint and threading.current_thread() is threading.main_thread()
    old_handler = signal.signal(signal.SIGINT, control._on_sigint) if install else None
    _current = control
    try:
        yield control
    finally:
        _current = previous
        if install:
            signal.signal(signal.SIGINT, old_handler)


class ProgressReporter:
    """Throttles the progress reports of one solve to the active control's hook.

    ``due()`` is cheap (one clock read), so loops may call it often; :meth:`report` sends a
    record when the solve has run for at least one interval and, except for new
    incumbents, one interval has passed since the last report.

    Examples
    --------
    >>> seen = []
    >>> with interruptible(progress=seen.append, progress_interval=0.0):
    ...     ProgressReporter("test", "toy").report(incumbent=3.0, bound=2.0)
    >>> seen[0].line()
    'test toy: 0.0 s, incumbent 3, bound 2, gap 33.3%'
    """

    def __init__(self, source: str, name: str, control: SolveControl | None = None) -> None:
        self.control = control if control is not None else _current
        self.hook = self.control.progress if self.control is not None else None
        self.interval = self.control.progress_interval if self.control is not None else 0.0
        self.source, self.name = source, name
        self.start = time.perf_counter()
        self.last = self.start

    @property
    def enabled(self) -> bool:
        """Whether anything listens."""
        return self.hook is not None

    def due(self, event: str = "status") -> bool:
        """Whether a report of this kind would be sent now."""
        if self.hook is None:
            return False
        now = time.perf_counter()
        if now - self.start < self.interval:
            return False
        return event == "incumbent" or now - self.last >= self.interval

    def report(
        self,
        *,
        incumbent: float = math.nan,
        bound: float = math.nan,
        nodes: int | None = None,
        iterations: int | None = None,
        event: str = "status",
    ) -> None:
        """Sends one :class:`SolveProgress` record if :meth:`due`; infinite values (HiGHS's
        "none yet") become ``nan``."""
        if self.hook is None or not self.due(event):
            return
        now = time.perf_counter()
        self.last = now
        record = SolveProgress(
            self.source,
            self.name,
            now - self.start,
            float(incumbent) if math.isfinite(incumbent) else math.nan,
            float(bound) if math.isfinite(bound) else math.nan,
            nodes,
            iterations,
            event,
        )
        try:
            self.hook(record)
        except OSError:  # progress is cosmetic: a closed stderr must not stop the solve
            self.hook = None


def stderr_progress(stream: TextIO | None = None) -> ProgressHook:
    """A progress hook printing each report as one line on ``stream`` (default: the
    current ``sys.stderr``, looked up at each report).

    Examples
    --------
    >>> import io
    >>> out = io.StringIO()
    >>> stderr_progress(out)(SolveProgress("highs", "lp-ov", 3.0, iterations=120))
    >>> out.getvalue()
    'highs lp-ov: 3.0 s, 120 iterations\\n'
    """

    def hook(record: SolveProgress) -> None:
        out = stream if stream is not None else sys.stderr
        out.write(record.line() + "\n")
        out.flush()

    return hook
