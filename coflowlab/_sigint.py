"""Ctrl-C for the command line: an interrupt that is not lost on the way to ``main``.

Python's default SIGINT handler raises :class:`KeyboardInterrupt` in whatever Python code the
main thread runs next. When that code is a ctypes callback called from C, the exception cannot
cross the C frames: ctypes reports "Exception ignored on calling ctypes callback function ...
KeyboardInterrupt" and drops it, and the command runs on to its end with status 0. This is no
corner case: LLVM calls llvmlite's ``ExecutionEngine._raw_object_cache_notify`` (a ctypes
callback) while numba compiles a kernel, and a fresh install spends tens of seconds there;
about 1 Ctrl-C in 6 sent during the fair kernel's first compilation was lost this way. Code
that catches the exception and drops it (``except BaseException: pass``) loses it alike.

:class:`InterruptGuard`, which only the command line's ``main`` enters (the library keeps
Python's behaviour), installs a SIGINT handler that raises as the default one does and, from
the first SIGINT on, a daemon thread that raises it again every ``period`` seconds
(``_thread.interrupt_main``) until the command has ended, so that a dropped interrupt comes
back outside the callback. Three rules keep it from turning one Ctrl-C into two:

- it re-delivers only while its own handler is installed: a handler installed meanwhile (the
  graceful first Ctrl-C of :func:`coflowlab.solvers.control.interruptible`) sees only real
  SIGINTs, and ``signal.signal`` runs a pending one before switching;
- a re-delivered SIGINT is ignored while the interrupted code is handling a
  :class:`KeyboardInterrupt` (an ``except``, ``finally`` or ``__exit__`` on its way up): the
  first one is still alive there;
- SIGINTs after the guard has exited (the command's end) are ignored until the previous
  handler is back.

A dropped :class:`KeyboardInterrupt` is reported to :func:`sys.unraisablehook`; the guard
silences that report (the re-delivery stands for it), so that the interrupted command prints
one line, not a traceback of the callback. The callback's work is lost with it, and numba may
then fail ("RuntimeError: no compiled object yet") before the re-delivery: ``main`` reads any
failure inside a guard that saw an interrupt (:attr:`InterruptGuard.interrupted`) as that
interrupt.
"""

from __future__ import annotations

import _thread
import os
import signal
import sys
import threading
from types import FrameType, TracebackType
from typing import Any

__all__ = ["InterruptGuard", "caused_by_interrupt"]


def caused_by_interrupt(exc: BaseException | None) -> bool:
    """Whether ``exc`` is a :class:`KeyboardInterrupt` or has one in its cause or context
    chain.

    Examples
    --------
    >>> try:
    ...     raise SystemError("returned a result with an exception set") from KeyboardInterrupt()
    ... except SystemError as exc:
    ...     caused_by_interrupt(exc)
    True
    >>> caused_by_interrupt(ValueError("no")), caused_by_interrupt(None)
    (False, False)
    """
    seen: set[int] = set()
    cur = exc
    while cur is not None and id(cur) not in seen:
        if isinstance(cur, KeyboardInterrupt):
            return True
        seen.add(id(cur))
        cur = cur.__cause__ or cur.__context__
    return False


class InterruptGuard:
    """Context manager: inside it, a SIGINT raises :class:`KeyboardInterrupt` and raises it
    again until the block has ended (module notes). The previous SIGINT handler and
    :func:`sys.unraisablehook` are restored on exit.

    Parameters
    ----------
    period
        Seconds between two re-deliveries of an interrupt that has not reached the end of the
        block.

    Attributes
    ----------
    interrupted
        Whether a SIGINT reached the guard's handler (or a dropped
        :class:`KeyboardInterrupt` was reported) inside the block.

    Examples
    --------
    >>> import signal
    >>> before = signal.getsignal(signal.SIGINT)
    >>> with InterruptGuard() as guard:
    ...     signal.getsignal(signal.SIGINT) is before
    False
    >>> signal.getsignal(signal.SIGINT) is before, guard.interrupted
    (True, False)
    """

    def __init__(self, period: float = 0.25) -> None:
        if not (period > 0):
            raise ValueError(f"period must be > 0, got {period!r}")
        self.period = float(period)
        self.interrupted = False
        # one bound method, so that the thread can tell by identity whether it is installed
        self._handler = self._on_sigint
        self._pid = os.getpid()  # a forked worker inherits the handler, not the guard's job
        self._done = threading.Event()
        self._lock = threading.Lock()  # orders the thread's last delivery before the exit
        self._redelivered = False
        self._started = False
        self._stopped = threading.Event()  # set by the re-delivery thread as it ends
        self._installed = False
        self._previous_handler: Any = None
        self._previous_hook = sys.unraisablehook

    def __enter__(self) -> InterruptGuard:
        # inert outside the main thread (no handler can be set there), and where SIGINT is not
        # Python's to handle: SIG_IGN (a shell script's background job must survive Ctrl-C),
        # SIG_DFL or a handler set in C are the embedder's choice
        main = threading.current_thread() is threading.main_thread()
        if main and callable(signal.getsignal(signal.SIGINT)):
            self._previous_handler = signal.signal(signal.SIGINT, self._handler)
            self._previous_hook = sys.unraisablehook
            sys.unraisablehook = self._on_unraisable
            self._installed = True
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        with self._lock:
            self._done.set()
        if self._installed:
            sys.unraisablehook = self._previous_hook
            signal.signal(signal.SIGINT, self._previous_handler)
            self._installed = False
        if self._started:
            self._stopped.wait()

    def _on_sigint(self, signum: int, frame: FrameType | None) -> None:
        redelivered, self._redelivered = self._redelivered, False
        if os.getpid() != self._pid:
            raise KeyboardInterrupt  # a forked worker: Python's default behaviour
        if self._done.is_set():
            return  # the command has ended; its exit status is already decided
        if redelivered and caused_by_interrupt(sys.exc_info()[1]):
            return  # the first KeyboardInterrupt is still on its way up: not a second one
        self._start_redelivery()
        raise KeyboardInterrupt

    def _on_unraisable(self, unraisable: Any) -> None:
        if (
            os.getpid() == self._pid
            and threading.current_thread() is threading.main_thread()
            and unraisable.exc_type is not None
            and issubclass(unraisable.exc_type, KeyboardInterrupt)
            and not self._done.is_set()
        ):
            self._start_redelivery()  # dropped: raised again by the thread, reported by main
            return
        self._previous_hook(unraisable)

    def _start_redelivery(self) -> None:
        """Records the interrupt and starts the re-delivery thread (once): no thread runs
        until there is an interrupt to deliver."""
        self.interrupted = True
        if self._started:
            return
        try:
            # _thread, not threading.Thread: this runs inside a signal handler, which may have
            # stopped the main thread in a section where threading holds its own locks
            _thread.start_new_thread(self._redeliver, ())
        except RuntimeError:  # no thread to be had: the interrupt is raised once, as usual
            return
        self._started = True

    def _redeliver(self) -> None:
        try:
            while not self._done.wait(self.period):
                with self._lock:
                    if self._done.is_set():
                        return
                    if signal.getsignal(signal.SIGINT) is self._handler:
                        self._redelivered = True
                        _thread.interrupt_main(signal.SIGINT)
        finally:
            self._stopped.set()
