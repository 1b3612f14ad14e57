"""The Gurobi backend (through gurobipy's matrix API), optional: ``pip install
coflowlab[gurobi]``.

The model goes to Gurobi in three vectorized calls: ``addMVar`` (bounds, costs, types) and
``addMConstr`` with the scipy.sparse matrix, once per row sense. Gurobi needs a licence;
the one bundled with the pip wheel is size-limited (:data:`SIZE_LIMITED_LICENCE`). A model
beyond what the installed licence allows raises :class:`SolverNotAvailableError` saying
so, never a silent fallback to another solver. The check runs before the model is built
when the model exceeds the pip limits (a probe of the licence, once per process), and
Gurobi's own size-limit error (code 10010) is translated the same way as a backstop.
"""

from __future__ import annotations

import math
import sys
import time
from typing import Any

import numpy as np
import scipy.sparse as sp

from ..exceptions import SolverError, SolverNotAvailableError
from .control import ProgressReporter, current_control
from .model import LinearModel
from .result import SolveResult, SolveStatus, relative_gap

__all__ = ["SIZE_LIMITED_LICENCE", "gurobi_size", "solve_gurobi"]

SIZE_LIMITED_LICENCE = (2000, 2000)
"""(variables, linear constraints) the restricted licence of the gurobipy pip wheel allows."""

_SIZE_LIMIT_ERRNO = 10010  # GRB_ERROR_SIZE_LIMIT_EXCEEDED
_LICENCE_ERRNOS = (10009, _SIZE_LIMIT_ERRNO)  # no licence, size limit exceeded
_size_limited: bool | None = None  # the installed licence's verdict, probed once

_STATUS_TEXT = {
    1: "loaded",
    2: "optimal",
    3: "infeasible",
    4: "infeasible or unbounded",
    5: "unbounded",
    6: "cutoff",
    7: "iteration limit",
    8: "node limit",
    9: "time limit",
    10: "solution limit",
    11: "interrupted",
    12: "numeric trouble",
    13: "suboptimal",
}


def gurobi_size(model: LinearModel) -> tuple[int, int]:
    """(variables, linear constraints) of ``model`` as Gurobi holds it: a ranged row is two
    constraints, a free row none.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> from coflowlab.solvers import ModelBuilder
    >>> b = ModelBuilder("toy")
    >>> _ = b.add_variables("x", 2)
    >>> _ = b.add_rows("r", sp.csr_matrix([[1.0, 1.0], [1.0, 0.0]]), lower=[0, 1], upper=[1, 1])
    >>> gurobi_size(b.build())
    (2, 3)
    """
    lo, hi = model.row_lower, model.row_upper
    finite = np.isfinite(lo).astype(int) + np.isfinite(hi).astype(int)
    rows = int(np.count_nonzero(finite)) + int(np.count_nonzero((finite == 2) & (lo != hi)))
    return model.num_vars, rows


def solve_gurobi(
    model: LinearModel,
    *,
    time_limit: float | None = None,
    mip_gap: float = 1e-6,
    threads: int | None = None,
    log: bool = False,
    start: np.ndarray | None = None,
    interruptible: bool = True,
) -> SolveResult:
    """Solves ``model`` with Gurobi (see :func:`coflowlab.solvers.solve` for the parameters).

    Deterministic: Gurobi's default seed and deterministic parallel mode.

    Nothing is printed on standard output: ``OutputFlag`` is off, or with ``log=True``
    ``LogToConsole`` is off and a ``MESSAGE`` callback writes the log to standard error.
    ``start`` sets the variables' ``Start`` attribute (``nan``: ``GRB.UNDEFINED``). Inside
    :func:`coflowlab.solvers.interruptible`, a callback terminates the solve once
    interrupted (status ``interrupted``, with the incumbent and ``ObjBound``) and reports
    progress from the ``MIP``, ``MIPSOL`` and ``SIMPLEX`` callbacks.

    Raises
    ------
    SolverNotAvailableError
        gurobipy is not installed, no licence is found, or the model is larger than the
        installed licence allows (the pip wheel's: :data:`SIZE_LIMITED_LICENCE`).
    SolverError
        Any other Gurobi error.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> from coflowlab.solvers import ModelBuilder
    >>> b = ModelBuilder("toy")
    >>> x = b.add_variables("x", 2, cost=[-1.0, -1.0], upper=10.0, integer=True)
    >>> _ = b.add_rows("cap", sp.csr_matrix([[1.0, 2.0]]), upper=[3.5])
    >>> res = solve_gurobi(b.build())  # doctest: +SKIP
    >>> res.status.value, round(res.objective, 6)  # doctest: +SKIP
    ('optimal', -3.0)
    >>> (res.x.round(6) + 0.0).tolist()  # doctest: +SKIP
    [3.0, 0.0]
    """
    gp = _gurobipy()
    try:
        env = gp.Env(empty=True)
        env.setParam("OutputFlag", 1 if log else 0)
        if log:  # the log reaches stderr through the MESSAGE callback, never the console
            env.setParam("LogToConsole", 0)
        env.start()
    except gp.GurobiError as exc:
        raise _translate(exc, model) from None
    try:
        _check_size(gp, env, model)
        callback = _callback(gp, model, log, interruptible)
        result = _solve(gp, env, model, time_limit, mip_gap, threads, start, callback)
    except gp.GurobiError as exc:
        raise _translate(exc, model) from None
    finally:
        env.dispose()
    control = current_control()
    if result.status is SolveStatus.INTERRUPTED and control is not None:
        control.request_interrupt()  # Gurobi caught the Ctrl-C itself: the caller stops too
    return result


def _callback(gp: Any, model: LinearModel, log: bool, interruptible: bool) -> Any:
    """The optimize callback: the log to stderr, the interrupt, progress; ``None`` when
    none of them is wanted (no callback overhead)."""
    control = current_control() if interruptible else None
    if not log and control is None:
        return None
    cb = gp.GRB.Callback
    reporter = ProgressReporter("gurobi", model.name, control)

    def value(m: Any, what: Any) -> float:
        v = float(m.cbGet(what))
        return v if abs(v) < 1e100 else math.nan  # GRB.INFINITY: none yet

    def callback(m: Any, where: int) -> None:
        if where == cb.MESSAGE:
            if log:
                sys.stderr.write(m.cbGet(cb.MSG_STRING))
            return
        if control is None:
            return
        if control.interrupted:
            m.terminate()
        elif where == cb.MIP and reporter.due():
            reporter.report(
                incumbent=value(m, cb.MIP_OBJBST),
                bound=value(m, cb.MIP_OBJBND),
                nodes=int(m.cbGet(cb.MIP_NODCNT)),
            )
        elif where == cb.MIPSOL and reporter.due("incumbent"):
            reporter.report(
                incumbent=value(m, cb.MIPSOL_OBJBST),
                bound=value(m, cb.MIPSOL_OBJBND),
                event="incumbent",
            )
        elif where == cb.SIMPLEX and reporter.due():
            reporter.report(iterations=int(m.cbGet(cb.SPX_ITRCNT)))

    return callback


def _gurobipy() -> Any:
    try:
        import gurobipy
    except ImportError:
        raise SolverNotAvailableError(
            "solver 'gurobi' needs gurobipy, which is not installed: pip install "
            "'coflowlab[gurobi]' (and a Gurobi licence for large models), or use --solver "
            "highs (always installed)"
        ) from None
    return gurobipy


def _size_message(model: LinearModel) -> str:
    n, m = gurobi_size(model)
    max_n, max_m = SIZE_LIMITED_LICENCE
    return (
        f"model {model.name!r} has {n} variables and {m} constraints, more than the "
        f"installed Gurobi licence allows: it is size-limited (the licence bundled with the "
        f"gurobipy pip package allows at most {max_n} variables and {max_m} constraints). "
        "Install a full Gurobi licence (free for academic use, gurobi.com) or use "
        "--solver highs (SolverOptions(solver='highs') from Python)"
    )


def _translate(exc: Any, model: LinearModel) -> Exception:
    """A Gurobi error as a coflowlab one: licence problems are SolverNotAvailableError."""
    errno = getattr(exc, "errno", None)
    text = str(getattr(exc, "message", "") or exc)
    if errno == _SIZE_LIMIT_ERRNO or "size-limited" in text.lower():
        return SolverNotAvailableError(_size_message(model))
    if errno in _LICENCE_ERRNOS or "license" in text.lower():
        return SolverNotAvailableError(
            f"Gurobi cannot run: {text} (error {errno}). Install a Gurobi licence "
            "(gurobi.com; free for academic use) or use --solver highs"
        )
    return SolverError(f"model {model.name!r}: Gurobi error {errno}: {text}")


def _check_size(gp: Any, env: Any, model: LinearModel) -> None:
    """Raises before building a model the pip licence could not solve, if the installed
    licence is size-limited (found out once, with an empty model just over the limit)."""
    global _size_limited
    n, m = gurobi_size(model)
    if n <= SIZE_LIMITED_LICENCE[0] and m <= SIZE_LIMITED_LICENCE[1]:
        return
    if _size_limited is None:
        probe = gp.Model("coflowlab-licence-probe", env=env)
        try:
            probe.addMVar(SIZE_LIMITED_LICENCE[0] + 1)
            probe.optimize()
            _size_limited = False
        except gp.GurobiError as exc:
            if getattr(exc, "errno", None) != _SIZE_LIMIT_ERRNO:
                raise
            _size_limited = True
        finally:
            probe.dispose()
    if _size_limited:
        raise SolverNotAvailableError(_size_message(model))


def _solve(
    gp: Any,
    env: Any,
    model: LinearModel,
    time_limit: float | None,
    mip_gap: float,
    threads: int | None,
    start: np.ndarray | None,
    callback: Any,
) -> SolveResult:
    GRB = gp.GRB
    m = gp.Model(model.name, env=env)
    try:
        if time_limit is not None:
            m.setParam("TimeLimit", float(time_limit))
        if model.is_mip:
            m.setParam("MIPGap", float(mip_gap))
        if threads is not None:
            m.setParam("Threads", int(threads))
        inf = float(GRB.INFINITY)
        x = m.addMVar(
            model.num_vars,
            lb=np.where(np.isinf(model.col_lower), -inf, model.col_lower),
            ub=np.where(np.isinf(model.col_upper), inf, model.col_upper),
            obj=model.c,
            vtype=np.where(model.integrality, GRB.INTEGER, GRB.CONTINUOUS),
        )
        m.setAttr("ObjCon", float(model.offset))
        if start is not None and model.is_mip:
            x.setAttr("Start", np.where(np.isnan(start), GRB.UNDEFINED, start))
        _add_rows(GRB, m, x, model)
        begin = time.perf_counter()

        def optimize() -> None:
            m.optimize(callback) if callback is not None else m.optimize()

        optimize()
        status = int(m.getAttr("Status"))
        if status == GRB.INF_OR_UNBD:  # presolve could not tell: solve again without it
            m.setParam("DualReductions", 0)
            m.reset()
            optimize()
            status = int(m.getAttr("Status"))
        if status == GRB.UNBOUNDED:  # an unbounded ray; is there a feasible point at all?
            kind = _feasibility(GRB, m, x, model)
            runtime = time.perf_counter() - begin
            bound = math.inf if kind is SolveStatus.INFEASIBLE else -math.inf
            text = f"unbounded ray; feasibility check: {kind.value}"
            return SolveResult(kind, math.nan, bound, math.nan, runtime, None, "gurobi", text)
        runtime = time.perf_counter() - begin
        return _read(GRB, m, x, model, status, runtime)
    finally:
        m.dispose()


def _feasibility(GRB: Any, m: Any, x: Any, model: LinearModel) -> SolveStatus:
    """After Gurobi found an unbounded ray: ``unbounded`` if the model has a feasible point,
    ``infeasible`` if not, ``time_limit_no_solution`` if the time limit left it open."""
    x.setAttr("Obj", np.zeros(model.num_vars))
    m.reset()
    m.optimize()
    probe = int(m.getAttr("Status"))
    if probe == GRB.OPTIMAL or int(m.getAttr("SolCount")) > 0:
        return SolveStatus.UNBOUNDED
    if probe == GRB.INFEASIBLE:
        return SolveStatus.INFEASIBLE
    if probe == GRB.TIME_LIMIT:
        return SolveStatus.TIME_LIMIT_NO_SOLUTION
    return SolveStatus.ERROR


def _add_rows(GRB: Any, m: Any, x: Any, model: LinearModel) -> None:
    """One ``addMConstr`` per sense: equalities, ``≤`` rows, ``≥`` rows (a ranged row is in
    both of the last two)."""
    A = model.A.tocsr()
    lo, hi = model.row_lower, model.row_upper
    for sense, rows, rhs in (
        (GRB.EQUAL, np.flatnonzero(lo == hi), lo),
        (GRB.LESS_EQUAL, np.flatnonzero(np.isfinite(hi) & (lo != hi)), hi),
        (GRB.GREATER_EQUAL, np.flatnonzero(np.isfinite(lo) & (lo != hi)), lo),
    ):
        if rows.size:
            m.addMConstr(sp.csr_matrix(A[rows]), x, sense, rhs[rows])


def _read(
    GRB: Any, m: Any, x: Any, model: LinearModel, status: int, runtime: float
) -> SolveResult:
    text = _STATUS_TEXT.get(status, f"status {status}")
    has_x = int(m.getAttr("SolCount")) > 0
    values = np.asarray(x.getAttr("X"), dtype=float) if has_x else None
    objective = float(m.getAttr("ObjVal")) if has_x else math.nan

    def done(kind: SolveStatus, obj: float, bound: float, xs: Any) -> SolveResult:
        return SolveResult(kind, obj, bound, relative_gap(obj, bound), runtime, xs, "gurobi", text)

    if status == GRB.OPTIMAL:
        bound = float(m.getAttr("ObjBound")) if model.is_mip else objective
        return done(SolveStatus.OPTIMAL, objective, min(bound, objective), values)
    if status == GRB.INFEASIBLE:
        return done(SolveStatus.INFEASIBLE, math.nan, math.inf, None)
    if status in (GRB.TIME_LIMIT, GRB.INTERRUPTED):
        bound = float(m.getAttr("ObjBound")) if model.is_mip else -math.inf
        if not math.isfinite(bound) or abs(bound) >= 1e100:
            bound = -math.inf
        stopped = SolveStatus.INTERRUPTED if status == GRB.INTERRUPTED else SolveStatus.TIME_LIMIT
        if has_x and model.is_mip:
            return done(stopped, objective, min(bound, objective), values)
        if stopped is SolveStatus.TIME_LIMIT:
            stopped = SolveStatus.TIME_LIMIT_NO_SOLUTION
        return done(stopped, math.nan, bound, None)
    return done(SolveStatus.ERROR, math.nan, math.nan, None)
