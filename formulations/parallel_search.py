"""A depth-first branch and bound on several processes, sharing its work (``workers=``).

The search of :mod:`~coflowlab.formulations.exact_fluid` explores a tree whose subtrees are
independent once the incumbent's value is known: a node is pruned by its own bound against
that value, and nothing else in another subtree changes how it is searched. So a subtree can
be searched by any process that has the node and the best value found so far. This module
runs that on ``workers`` processes forked from the caller (they inherit the search's
instance data, tables and memos without copying them; each keeps its own memos from then
on):

- the nodes waiting to be searched sit in a queue shared by the processes; a process takes
  one and searches its subtree depth first on its own stack;
- while another process is idle and the queue is empty, a busy process gives away the
  shallowest node of its stack (the largest subtree it holds), so the work spreads however
  unbalanced the tree is (the "work sharing" of parallel depth-first search: Kumar and Rao,
  "Parallel depth first search", International Journal of Parallel Programming 16(6), 1987);
- the best objective value found by any process is kept in shared memory, and every process
  prunes against it (:meth:`SharedSearch.best`);
- the search ends when the queue is empty and no process holds a node, or when a process
  stops (time limit, interrupt, error) and the others stop too.

The search the processes run, and how its results are merged, stay with the caller: this
module only moves nodes and values. Only the ``fork`` start method is supported (the
processes must inherit the caller's state), i.e. Linux and other POSIX systems.

Not deterministic in its path: which process finds which incumbent first, and so which nodes
the value prunes, depends on timing. The optimum proven is the same (every node is either
searched or pruned against a value some schedule attains), and so is the bound's validity;
the node counts, and which of several optimal schedules is returned, may differ between runs.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from typing import Any

from coflowlab.exceptions import SolverError

__all__ = ["SharedSearch", "WorkerResult", "check_workers", "fork_available", "run_workers"]

_IDLE_SLEEP = 0.002
"""Seconds an idle process waits before it looks at the queue again."""


def check_workers(workers: object, algorithm: str) -> None:
    """Refuses a ``workers`` setting that is not a whole number of at least 1, or above 1
    for an ``algorithm`` other than the branch and bound (``"bnb"``), with a ValueError."""
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be a whole number of at least 1, got {workers!r}")
    if workers > 1 and algorithm != "bnb":
        raise ValueError(
            f"workers > 1 runs the branch and bound only (algorithm='bnb'), "
            f"not algorithm={algorithm!r}"
        )


def fork_available() -> bool:
    """Whether this platform can fork worker processes (the only start method used here).

    Examples
    --------
    >>> isinstance(fork_available(), bool)
    True
    """
    return "fork" in mp.get_all_start_methods()


class SharedSearch:
    """What the processes of one search share: the queue of nodes waiting, how many of them
    are queued and how many processes hold work, the best value found and a stop flag.

    Created by :func:`run_workers` before it forks, so that every process has the same
    objects. Counters change under one lock; reads outside it only decide whether to give
    work away, where a stale value costs at most one node moved too early or too late.
    """

    def __init__(self, ctx: Any, workers: int, best: float) -> None:
        self.workers = workers
        self._lock = ctx.Lock()
        self._queued = ctx.RawValue("l", 0)  # nodes put and not yet taken
        self._busy = ctx.RawValue("l", 0)  # processes holding a node
        self._best = ctx.RawValue("d", best)
        self._stop = ctx.Event()
        self._queue = ctx.Queue()
        self._parent = os.getpid()

    # --------------------------------------------------------------- best value
    @property
    def parent(self) -> int:
        """The id of the process that started the search (the workers' parent)."""
        return self._parent

    def best(self) -> float:
        """The least objective value any process has found (or the starting value)."""
        return float(self._best.value)

    def offer(self, value: float) -> None:
        """Records a schedule of objective ``value`` if it is the best so far."""
        with self._lock:
            if value < self._best.value:
                self._best.value = value

    # --------------------------------------------------------------- the queue
    def put(self, node: Any) -> None:
        """Queues ``node`` for any process (it must pickle)."""
        with self._lock:
            self._queued.value += 1
            self._queue.put(node)

    def hungry(self) -> bool:
        """Whether a process is idle while nothing is queued: then the caller should give
        a node away (:meth:`put`)."""
        return self._queued.value == 0 and self._busy.value < self.workers

    def take(self) -> tuple[bool, Any]:
        """Waits for a node: ``(True, node)``, the caller then holds work until
        :meth:`done`; or ``(False, None)`` when the search is over (nothing queued, no
        process holding work) or stopped."""
        while not self.stopped():
            with self._lock:
                if self._queued.value > 0:
                    self._queued.value -= 1
                    self._busy.value += 1
                    got = True
                elif self._busy.value == 0:
                    return False, None
                else:
                    got = False
            if got:  # it was counted before it was put, so it is there or on its way
                return True, self._queue.get()
            time.sleep(_IDLE_SLEEP)
        return False, None

    def done(self) -> None:
        """The caller has finished the node it took (searched or stopped)."""
        with self._lock:
            self._busy.value -= 1

    # --------------------------------------------------------------- stopping
    def stop(self) -> None:
        """Asks every process to stop (their searches then end as at the time limit)."""
        self._stop.set()

    def stopped(self) -> bool:
        """Whether :meth:`stop` was called by any process, or the process that started the
        search has ended (killed, or ended by a test's timeout): its workers must not
        outlive it. Asked by the workers: in the parent itself the second test is
        meaningless (its own parent is another process)."""
        return bool(self._stop.is_set()) or os.getppid() != self._parent

    def drain(self) -> list[Any]:
        """The nodes still queued (after the processes ended): never searched."""
        left = []
        with self._lock:
            while self._queued.value > 0:
                left.append(self._queue.get())
                self._queued.value -= 1
        return left


@dataclass(frozen=True)
class WorkerResult:
    """What one process returned: its index and the value of ``work`` (or the error it
    raised, as a formatted traceback)."""

    index: int
    value: Any = None
    error: str = ""


def _reset_highs_scheduler() -> None:
    # A HiGHS MIP solve starts a global task scheduler whose threads do not survive fork():
    # a MIP solved in a forked process after one in its parent waits for them for ever
    # (checked with HiGHS 1.16). Resetting the inherited scheduler lets the process start
    # its own. LPs do not use it.
    try:
        import highspy
    except ImportError:  # pragma: no cover - highspy is a dependency
        return
    reset = getattr(highspy.Highs, "resetGlobalScheduler", None)
    if reset is not None:
        reset(False)


_PR_SET_PDEATHSIG = 1
"""Linux ``prctl`` option: the signal the kernel sends a process when its parent ends."""

_USE_PRCTL = True
"""Whether workers ask the kernel to end them with their parent (Linux); false: the thread."""

_WATCH_EVERY = 0.5
"""Seconds between two looks at the parent, where the kernel cannot do it for us."""


def _die_with_parent(parent: int) -> None:
    """Ends this worker as soon as the process that forked it (``parent``) has ended.

    :meth:`SharedSearch.stopped` asks the same question, but only between nodes: a worker
    inside one long solve (or held by HiGHS's scheduler) would run on for minutes after its
    parent was killed, e.g. by a test's timeout, holding its pipes open. On Linux the
    kernel kills the worker (``prctl(PR_SET_PDEATHSIG, SIGKILL)``, which works whatever
    the worker is running, compiled code holding the GIL included; strictly, when the
    thread that forked it ends, and that thread waits in :func:`run_workers` for the
    workers to end); elsewhere, or with ``_USE_PRCTL`` false, a daemon
    thread looks at the parent every :data:`_WATCH_EVERY` seconds (it needs the GIL, which
    HiGHS releases while it solves)."""
    armed = False
    if _USE_PRCTL:
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            armed = libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) == 0
        except (OSError, AttributeError):  # not Linux: no prctl in the C library
            armed = False
    if os.getppid() != parent:  # the parent ended before the signal was set
        os._exit(1)
    if armed:
        return

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(_WATCH_EVERY)
        os._exit(1)

    threading.Thread(target=watch, name="coflowlab-parent-watch", daemon=True).start()


def _worker_main(
    index: int, work: Callable[[SharedSearch], Any], shared: SharedSearch, conn: Connection
) -> None:
    # Ctrl-C reaches the whole process group: the parent decides (``stop_when``) and stops
    # the processes, whose searches then end as at the time limit with their open nodes
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _die_with_parent(shared.parent)
    try:
        _reset_highs_scheduler()
        value = work(shared)
        message = WorkerResult(index, value)
    except BaseException:
        shared.stop()
        message = WorkerResult(index, error=traceback.format_exc())
    conn.send(message)
    conn.close()


def run_workers(
    workers: int,
    roots: Sequence[Any],
    work: Callable[[SharedSearch], Any],
    best: float,
    *,
    poll: Callable[[SharedSearch], None] | None = None,
    stop_when: Callable[[], bool] | None = None,
    poll_every: float = 0.25,
) -> tuple[list[Any], list[Any], float]:
    """Runs ``work(shared)`` in ``workers`` forked processes that share the nodes
    ``roots`` (queued first) and the best value ``best``.

    ``work`` runs in each process: it takes nodes (:meth:`SharedSearch.take`), searches
    them, gives nodes away when :meth:`SharedSearch.hungry`, offers values, and returns
    something that pickles (sent back to the caller). ``poll(shared)``, when given, is
    called in the caller about every ``poll_every`` seconds while the processes run (for
    progress reports).

    Returns the values of ``work`` (in process order), the nodes still queued when the
    processes ended (never searched: the search stopped before them) and the best value.

    Raises
    ------
    ValueError
        ``workers < 1``.
    SolverError
        The platform cannot fork, or a process raised (its traceback in the message) or
        died without a result.

    Examples
    --------
    Each process takes numbers and offers them; the least one is the best value:

    >>> def work(shared):
    ...     seen = []
    ...     while True:
    ...         got, x = shared.take()
    ...         if not got:
    ...             return seen
    ...         shared.offer(x)
    ...         seen.append(x)
    ...         shared.done()
    >>> values, left, best = run_workers(2, [5.0, 3.0, 4.0], work, 10.0)
    >>> sorted(x for seen in values for x in seen), left, best
    ([3.0, 4.0, 5.0], [], 3.0)
    """
    if workers < 1:
        raise ValueError(f"workers must be at least 1, got {workers}")
    if not fork_available():
        raise SolverError(
            "workers > 1 needs the 'fork' start method (Linux and other POSIX systems); "
            "use workers=1 on this platform"
        )
    ctx = mp.get_context("fork")
    shared = SharedSearch(ctx, workers, best)
    for node in roots:
        shared.put(node)
    procs, conns = [], []
    try:
        for i in range(workers):
            receive, send = ctx.Pipe(duplex=False)
            proc = ctx.Process(target=_worker_main, args=(i, work, shared, send), daemon=True)
            proc.start()
            send.close()
            procs.append(proc)
            conns.append(receive)
        results: dict[int, WorkerResult] = {}
        pending = dict(enumerate(conns))
        while pending:
            for ready in wait(list(pending.values()), timeout=poll_every):
                i = next(k for k, c in pending.items() if c is ready)
                try:
                    results[i] = pending[i].recv()
                except EOFError:
                    results[i] = WorkerResult(i, error="the process ended without a result")
                    shared.stop()
                del pending[i]
            if pending and stop_when is not None and stop_when():
                shared.stop()
            if poll is not None and pending:
                poll(shared)
        left = shared.drain()
        for proc in procs:
            proc.join()
    finally:
        for proc in procs:
            if proc.is_alive():
                proc.terminate()
                proc.join()
    errors = [r for r in results.values() if r.error]
    if errors:
        first = errors[0]
        raise SolverError(f"parallel search: worker {first.index} failed:\n{first.error}")
    return [results[i].value for i in range(workers)], left, shared.best()
