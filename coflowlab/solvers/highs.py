"""The HiGHS backend (through highspy): the default for every LP and MIP, always installed.

Output: nothing on standard output, ever. HiGHS 1.16 prints its banner from the first
``Highs()`` of the process straight to C's ``stdout``, before any option can be set; that
one construction runs with file descriptor 1 pointed at the null device (or at standard
error with ``log=True``). Later logs are off (``output_flag``), or, with ``log=True``, go
through HiGHS's logging callback to ``sys.stderr`` (``log_to_console`` off).

Interrupts and progress (:mod:`coflowlab.solvers.control`): inside an ``interruptible``
block, the simplex, IPM and MIP interrupt callbacks stop the solve once the block is
interrupted (model status ``kInterrupt``), and report progress; the MIP's improving-solution
callback reports new incumbents. HiGHS then runs on a worker thread, so the SIGINT is seen
at once; it stops at its next callback. HiGHS 1.16 polls none inside a MIP's LP solves (a
slotted MIP's root LP can take minutes), so after :data:`INTERRUPT_GRACE` seconds the solve
returns the last incumbent and bound its callbacks saw, and HiGHS is left to stop in the
background. Outside such a block no callback is installed and HiGHS runs on the caller's
thread.

A process cannot end normally while HiGHS still runs in the background: C++'s exit-time
destructors meet HiGHS's live threads and abort the process ("terminate called without an
active exception", status 134, seen about once in seven interrupts). So the first abandoned
solve registers an exit hook that, if HiGHS is still running then, flushes Python's streams
and ends the process at once with :data:`ABANDONED_EXIT_STATUS` (130, the status of a
program stopped by Ctrl-C; only an interrupt abandons a solve).
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import math
import os
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import numpy as np

from .control import ProgressReporter, SolveControl, current_control
from .model import LinearModel
from .result import SolveResult, SolveStatus, relative_gap, unbounded_if_feasible

__all__ = ["ABANDONED_EXIT_STATUS", "INTERRUPT_GRACE", "solve_highs"]

INTERRUPT_GRACE = 2.0
"""Seconds an interrupted solve waits for HiGHS to stop at a callback before it returns the
last incumbent and bound the callbacks saw, leaving HiGHS to finish in the background."""

ABANDONED_EXIT_STATUS = 130
"""The exit status of a process that ends while an abandoned HiGHS solve still runs (module
notes)."""

_abandoned: list[threading.Thread] = []  # workers left running by an interrupt
_first_highs = threading.Lock()
_banner_printed = False  # HiGHS prints its banner once per process, at the first Highs()


def solve_highs(
    model: LinearModel,
    *,
    time_limit: float | None = None,
    mip_gap: float = 1e-6,
    threads: int | None = None,
    log: bool = False,
    start: np.ndarray | None = None,
    interruptible: bool = True,
) -> SolveResult:
    """Solves ``model`` with HiGHS (see :func:`coflowlab.solvers.solve` for the parameters).

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> from coflowlab.solvers import ModelBuilder
    >>> b = ModelBuilder("toy")
    >>> x = b.add_variables("x", 2, cost=[-1.0, -1.0], upper=10.0, integer=True)
    >>> _ = b.add_rows("cap", sp.csr_matrix([[1.0, 2.0]]), upper=[3.5])
    >>> solve_highs(b.build(), start=np.array([3.0, np.nan])).objective
    -3.0
    """
    import highspy

    h = _new_highs(log)
    h.setOptionValue("output_flag", bool(log))
    if log:  # the log goes to stderr through the callback, never to the console (stdout)
        h.setOptionValue("log_to_console", False)
        h.cbLogging.subscribe(_log_to_stderr)
    if time_limit is not None:
        h.setOptionValue("time_limit", float(time_limit))
    if model.is_mip:
        h.setOptionValue("mip_rel_gap", float(mip_gap))
    if threads is not None:
        # HiGHS keeps one thread pool per process, sized by the first solve; a different
        # thread count is refused unless the pool is rebuilt
        highspy.Highs.resetGlobalScheduler(True)
        h.setOptionValue("threads", int(threads))
    h.setOptionValue("random_seed", 0)  # determinism across runs

    lp = highs_lp(highspy, model)
    begin = time.perf_counter()
    if h.passModel(lp) == highspy.HighsStatus.kError:
        return _error(model, "HiGHS rejected the model", time.perf_counter() - begin)
    if start is not None and model.is_mip:
        _set_start(highspy, h, start)
    watch = _watch(h, model, interruptible)
    if _run(h, watch):
        assert watch is not None
        return watch.abandoned(time.perf_counter() - begin)
    if model.is_mip and _presolve_suspect(highspy, h, model):
        # HiGHS's MIP presolve can declare a feasible model infeasible, or report an objective
        # its own solution does not have (ERGO-Code/HiGHS issues #1718, #2432, #3090; seen
        # with 1.16 on a 100-variable exact-slotted model): re-solve without presolve
        h.setOptionValue("presolve", "off")
        h.clearSolver()
        if start is not None:
            _set_start(highspy, h, start)
        if _run(h, watch):  # the callbacks stay subscribed: the same watch
            assert watch is not None
            return watch.abandoned(time.perf_counter() - begin)
    runtime = time.perf_counter() - begin
    status = h.getModelStatus()
    text = h.modelStatusToString(status)
    info = h.getInfo()
    has_x = info.primal_solution_status == 2  # kSolutionStatusFeasible
    x = np.array(h.getSolution().col_value, dtype=float) if has_x else None
    objective = float(info.objective_function_value) if has_x else math.nan
    S = highspy.HighsModelStatus
    if status == S.kOptimal:
        bound = float(info.mip_dual_bound) if model.is_mip else objective
        return _result(SolveStatus.OPTIMAL, objective, bound, runtime, x, text)
    if status in (S.kInfeasible,):
        return _result(SolveStatus.INFEASIBLE, math.nan, math.inf, runtime, None, text)
    if status in (S.kUnbounded, S.kUnboundedOrInfeasible):
        kind = SolveStatus.UNBOUNDED
        if status == S.kUnboundedOrInfeasible:
            kind = _unbounded_or_infeasible(model, time_limit)
        bound = math.inf if kind is SolveStatus.INFEASIBLE else -math.inf
        return _result(kind, math.nan, bound, runtime, None, text)
    stopped = {S.kTimeLimit: SolveStatus.TIME_LIMIT, S.kInterrupt: SolveStatus.INTERRUPTED}
    if status in stopped:
        bound = float(info.mip_dual_bound) if model.is_mip else -math.inf
        if not np.isfinite(bound):
            bound = -math.inf
        kind = stopped[status]
        if x is not None and model.is_mip:  # an LP's point is not a solution before the end
            return _result(kind, objective, bound, runtime, x, text)
        if kind is SolveStatus.TIME_LIMIT:
            kind = SolveStatus.TIME_LIMIT_NO_SOLUTION
        return _result(kind, math.nan, bound, runtime, None, text)
    return _result(SolveStatus.ERROR, math.nan, math.nan, runtime, None, text)


def highs_lp(highspy: Any, model: LinearModel) -> Any:
    """``model`` as a HiGHS ``HighsLp`` (column-wise matrix; integrality for a MIP)."""
    inf = highspy.kHighsInf
    lp = highspy.HighsLp()
    lp.num_col_ = model.num_vars
    lp.num_row_ = model.num_rows
    lp.col_cost_ = model.c
    lp.offset_ = model.offset
    lp.col_lower_ = np.where(np.isinf(model.col_lower), -inf, model.col_lower)
    lp.col_upper_ = np.where(np.isinf(model.col_upper), inf, model.col_upper)
    lp.row_lower_ = np.where(np.isinf(model.row_lower), -inf, model.row_lower)
    lp.row_upper_ = np.where(np.isinf(model.row_upper), inf, model.row_upper)
    csc = model.A.tocsc()
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.num_col_ = model.num_vars
    lp.a_matrix_.num_row_ = model.num_rows
    lp.a_matrix_.start_ = csc.indptr.astype(np.int32)
    lp.a_matrix_.index_ = csc.indices.astype(np.int32)
    lp.a_matrix_.value_ = csc.data
    if model.is_mip:
        kinds = highspy.HighsVarType
        lp.integrality_ = [kinds.kInteger if k else kinds.kContinuous for k in model.integrality]
    return lp


def _presolve_suspect(highspy: Any, h: Any, model: LinearModel) -> bool:
    """Whether a MIP's verdict needs re-checking without presolve: "infeasible", or
    "optimal" with an objective that is not the value of the solution returned."""
    status = h.getModelStatus()
    if status == highspy.HighsModelStatus.kInfeasible:
        return True
    info = h.getInfo()
    if status != highspy.HighsModelStatus.kOptimal or info.primal_solution_status != 2:
        return False
    claimed = float(info.objective_function_value)
    actual = model.value(np.array(h.getSolution().col_value, dtype=float))
    return bool(abs(claimed - actual) > 1e-6 * max(1.0, abs(actual)))


def _set_start(highspy: Any, h: Any, start: np.ndarray) -> None:
    """Hands HiGHS a full start (checked, and the incumbent if feasible) or a partial one
    (HiGHS completes it with a small sub-MIP over the free variables)."""
    known = np.flatnonzero(~np.isnan(start))
    if len(known) == len(start):
        sol = highspy.HighsSolution()
        sol.col_value = start.tolist()
        h.setSolution(sol)
    elif len(known):
        h.setSolution(len(known), known.astype(np.int32), start[known])


class _Watch:
    """The callbacks of one watched solve (module notes) and what they saw: the latest
    incumbent (values and objective) and proven bound, for a solve abandoned after
    :data:`INTERRUPT_GRACE`."""

    def __init__(self, h: Any, model: LinearModel, control: SolveControl) -> None:
        self.control = control
        self.model = model
        self.reporter = ProgressReporter("highs", model.name, control)
        self.x: np.ndarray | None = None
        self.bound = -math.inf
        h.cbSimplexInterrupt.subscribe(self.on_poll)
        h.cbIpmInterrupt.subscribe(self.on_poll)
        if model.is_mip:
            h.cbMipInterrupt.subscribe(self.on_poll)
            h.cbMipImprovingSolution.subscribe(self.on_incumbent)

    def on_poll(self, event: Any) -> None:
        out = event.data_out
        if self.model.is_mip and math.isfinite(out.mip_dual_bound):
            self.bound = max(self.bound, float(out.mip_dual_bound))
        if self.control.interrupted:
            event.interrupt()
        elif self.reporter.due():
            if self.model.is_mip:
                self.reporter.report(
                    incumbent=out.mip_primal_bound,
                    bound=out.mip_dual_bound,
                    nodes=int(out.mip_node_count),
                )
            else:
                iterations = int(out.simplex_iteration_count) + int(out.ipm_iteration_count)
                self.reporter.report(iterations=iterations)

    def on_incumbent(self, event: Any) -> None:
        out = event.data_out
        self.x = np.array(out.mip_solution, dtype=float)  # a copy: HiGHS reuses its buffer
        if math.isfinite(out.mip_dual_bound):
            self.bound = max(self.bound, float(out.mip_dual_bound))
        self.reporter.report(
            incumbent=out.objective_function_value,
            bound=out.mip_dual_bound,
            nodes=int(out.mip_node_count),
            event="incumbent",
        )

    def abandoned(self, runtime: float) -> SolveResult:
        """The result of a solve that did not stop within the grace period: the last
        incumbent and bound its callbacks saw."""
        text = (
            f"interrupted; HiGHS did not stop within {INTERRUPT_GRACE:g} s (no callback in "
            "its current phase) and was left to finish in the background"
        )
        if self.x is None or len(self.x) != self.model.num_vars:
            return _result(SolveStatus.INTERRUPTED, math.nan, self.bound, runtime, None, text)
        objective = self.model.value(self.x)
        bound = min(self.bound, objective)
        return _result(SolveStatus.INTERRUPTED, objective, bound, runtime, self.x, text)


def _watch(h: Any, model: LinearModel, interruptible: bool) -> _Watch | None:
    """Inside an ``interruptible`` block: the callbacks that stop the solve once
    interrupted and report progress (module notes). Outside a block, or for a solve that
    is not ``interruptible``: none (no callback overhead)."""
    control = current_control()
    if control is None or not interruptible:
        return None
    return _Watch(h, model, control)


def _run(h: Any, watch: _Watch | None) -> bool:
    """``h.run()``; returns whether the solve was abandoned. When watched, HiGHS runs on a
    worker thread while this one waits, so that a SIGINT is handled at once here (Python
    runs signal handlers in the main thread only). Once interrupted, HiGHS stops at its
    next callback; if none comes within :data:`INTERRUPT_GRACE` (a MIP's root LP polls
    none), the solve is abandoned: the worker, a daemon, is left to stop at its next
    callback or its time limit. A second SIGINT raises KeyboardInterrupt here."""
    if watch is None:
        h.run()
        return False
    failure: list[BaseException] = []

    def target() -> None:
        try:
            h.run()
        except BaseException as exc:  # handed to the waiting thread
            failure.append(exc)

    worker = threading.Thread(target=target, name="coflowlab-highs", daemon=True)
    worker.start()
    give_up = math.inf
    while worker.is_alive():
        worker.join(0.1)  # interruptible: the SIGINT handler runs between the waits
        if watch.control.interrupted and math.isinf(give_up):
            give_up = time.perf_counter() + INTERRUPT_GRACE
        if time.perf_counter() > give_up and worker.is_alive():
            _abandon(worker)
            return True
    if failure:
        raise failure[0]
    return False


def _abandon(worker: threading.Thread) -> None:
    """Leaves ``worker`` running and makes sure the process can still end (module notes)."""
    if not _abandoned:
        atexit.register(_exit_past_running_highs)
    _abandoned.append(worker)


def _exit_past_running_highs() -> None:
    """At exit: if an abandoned HiGHS solve still runs, ends the process now, before C++'s
    exit-time destructors can abort it (module notes)."""
    if not any(worker.is_alive() for worker in _abandoned):
        return
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(AttributeError, OSError, ValueError):
            stream.flush()
    _flush_c_stdio()
    os._exit(ABANDONED_EXIT_STATUS)


def _log_to_stderr(event: Any) -> None:
    sys.stderr.write(event.message)


def _new_highs(log: bool) -> Any:
    """A ``highspy.Highs()`` whose construction writes nothing on standard output (module
    notes): the process's first one is built with fd 1 redirected."""
    global _banner_printed
    import highspy

    if _banner_printed:
        return highspy.Highs()
    with _first_highs:
        with _stdout_redirected(2 if log else None):
            h = highspy.Highs()
        _banner_printed = True
    return h


@contextlib.contextmanager
def _stdout_redirected(target: int | None) -> Iterator[None]:
    """File descriptor 1 points at ``target`` (``None``: the null device) for the block;
    both Python's and C's buffers are flushed on the way in and out, so nothing is lost
    or misdirected."""
    with contextlib.suppress(AttributeError, OSError, ValueError):
        sys.stdout.flush()
    _flush_c_stdio()
    try:
        saved = os.dup(1)
    except OSError:  # no standard output at all: nothing to protect
        yield
        return
    dest = os.open(os.devnull, os.O_WRONLY) if target is None else target
    try:
        os.dup2(dest, 1)
        yield
    finally:
        _flush_c_stdio()
        os.dup2(saved, 1)
        os.close(saved)
        if target is None:
            os.close(dest)


def _flush_c_stdio() -> None:
    """``fflush(NULL)``: C's stdout buffer is emptied before fd 1 changes."""
    with contextlib.suppress(OSError, AttributeError, TypeError):
        ctypes.CDLL(None).fflush(None)


def _unbounded_or_infeasible(model: LinearModel, time_limit: float | None) -> SolveStatus:
    """Unbounded or infeasible? The feasibility problem decides."""
    return unbounded_if_feasible(solve_highs(model.feasibility(), time_limit=time_limit))


def _result(
    status: SolveStatus,
    objective: float,
    bound: float,
    runtime: float,
    x: np.ndarray | None,
    text: str,
) -> SolveResult:
    return SolveResult(
        status, objective, bound, relative_gap(objective, bound), runtime, x, "highs", text
    )


def _error(model: LinearModel, text: str, runtime: float) -> SolveResult:
    return _result(SolveStatus.ERROR, math.nan, math.nan, runtime, None, f"{model.name}: {text}")
