"""``solve``: hands a :class:`LinearModel` to the backend asked for."""

from __future__ import annotations

import importlib
import importlib.util
import math
from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from ..exceptions import SolverError, SolverNotAvailableError
from .model import LinearModel
from .result import SolveResult, SolveStatus, relative_gap

__all__ = [
    "SOLVERS",
    "START_FEASIBILITY_TOL",
    "available_solvers",
    "check_start",
    "require_solver",
    "solve",
]

FloatArray = npt.NDArray[np.float64]

START_FEASIBILITY_TOL = 1e-6
"""Largest absolute violation (row, bound, integrality) of a start that :func:`solve`
returns as the incumbent of a MIP stopped before its solver took the start up: HiGHS's
default ``mip_feasibility_tolerance``."""

SOLVERS: dict[str, tuple[str, str, str]] = {
    "highs": ("highspy", ".highs", "solve_highs"),
    "cbc": ("pulp", ".pulp_backend", "solve_cbc"),
    "gurobi": ("gurobipy", ".gurobi_backend", "solve_gurobi"),
}
"""Backend name -> (Python package it needs, module, function)."""

_INSTALL = {
    "highspy": "pip install highspy",
    "pulp": "pip install pulp",
    "gurobipy": "pip install 'coflowlab[gurobi]' (and a Gurobi licence for large models)",
}


def available_solvers() -> list[str]:
    """The backends that can run here: their Python package is installed (and, for CBC,
    its binary found). Gurobi's licence is checked only when a model is solved.

    Examples
    --------
    >>> "highs" in available_solvers()
    True
    """
    out = []
    for name in SOLVERS:
        try:
            require_solver(name)
        except SolverNotAvailableError:
            continue
        out.append(name)
    return out


def require_solver(solver: str) -> None:
    """Raises unless ``solver`` is a known backend that is installed.

    Raises
    ------
    SolverError
        ``solver`` is not a backend's name.
    SolverNotAvailableError
        Its Python package (or CBC's binary) is missing; the message says what to install.

    Examples
    --------
    >>> require_solver("highs")
    >>> require_solver("cplex")
    Traceback (most recent call last):
    ...
    coflowlab.exceptions.SolverError: unknown solver 'cplex'; choose one of highs, cbc, gurobi
    """
    if solver not in SOLVERS:
        raise SolverError(f"unknown solver {solver!r}; choose one of {', '.join(SOLVERS)}")
    pkg = SOLVERS[solver][0]
    try:
        missing = importlib.util.find_spec(pkg) is None
    except (ImportError, ValueError):  # a broken or half-imported package
        missing = True
    if missing:
        raise SolverNotAvailableError(
            f"solver {solver!r} needs the Python package {pkg!r}, which is not installed: "
            f"{_INSTALL[pkg]}, or use --solver highs (always installed)"
        )
    if solver == "cbc":
        from .pulp_backend import NO_CBC, cbc_path

        if cbc_path() is None:
            raise SolverNotAvailableError(NO_CBC)


def _backend(solver: str) -> Callable[..., SolveResult]:
    require_solver(solver)
    _, module, func = SOLVERS[solver]
    backend: Callable[..., SolveResult] = getattr(
        importlib.import_module(module, __package__), func
    )
    return backend


def solve(
    model: LinearModel,
    *,
    solver: str = "highs",
    time_limit: float | None = None,
    mip_gap: float = 1e-6,
    threads: int | None = None,
    log: bool = False,
    start: npt.ArrayLike | None = None,
    interruptible: bool = True,
) -> SolveResult:
    """Solves ``model`` with one backend.

    Parameters
    ----------
    model
        The model (see :class:`LinearModel`).
    solver
        ``"highs"`` (default), ``"cbc"`` or ``"gurobi"`` (see :data:`SOLVERS`).
    time_limit
        Wall seconds; ``None`` for none. A MIP stopped by it returns its incumbent and
        proven bound (status ``time_limit``) or, without an incumbent,
        ``time_limit_no_solution``.
    mip_gap
        Relative gap at which a MIP counts as solved (MIPs only). The result's ``gap`` is the
        one actually reached.
    threads
        Solver threads (``None``: the backend's default).
    log
        Write the solver's log to standard error (never standard output, which stays free
        for results: without ``log`` the backends print nothing at all).
    start
        A starting solution for a MIP: ``(num_vars,)`` values, ``nan`` for the variables
        left to the solver (a partial start). HiGHS gets it through ``setSolution``, CBC
        through PuLP's ``warmStart``, Gurobi as the variables' ``Start``. A feasible start
        is an incumbent from the outset, so a time limit always returns a solution; an
        infeasible or partial one is repaired by the solver or dropped. LPs ignore it.
    interruptible
        Whether an interrupt of the enclosing :func:`coflowlab.solvers.interruptible` block
        stops this solve (status ``interrupted``, with the incumbent and bound), and whether
        it reports progress to the block's hook. ``False`` installs no solver callback at
        all: for a solve that must finish (re-evaluating an incumbent after the interrupt)
        and for the many short LPs of a search that polls
        :func:`~coflowlab.solvers.interrupt_requested` itself between them (a callback
        costs microseconds per simplex iteration). Outside such a block there are no
        interrupts and no callbacks.

    Raises
    ------
    SolverError
        A bad argument (the message names it), e.g. a ``start`` of the wrong length.
    SolverNotAvailableError
        The backend is not installed, or not licensed for a model this size.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> from coflowlab.solvers import ModelBuilder
    >>> b = ModelBuilder("toy")
    >>> x = b.add_variables("x", 2, cost=[-1.0, -1.0], upper=10.0, integer=True)
    >>> _ = b.add_rows("cap", sp.csr_matrix([[1.0, 2.0]]), upper=[3.5])
    >>> res = solve(b.build())
    >>> res.status.value, round(res.objective, 6), (res.x.round(6) + 0.0).tolist()
    ('optimal', -3.0, [3.0, 0.0])
    >>> solve(b.build(), start=[1.0, 1.0]).objective  # a feasible start of value -2
    -3.0
    """
    if time_limit is not None and not (time_limit > 0 and not math.isnan(time_limit)):
        raise SolverError(f"time_limit must be positive, got {time_limit!r}")
    if not (0 <= mip_gap < 1):
        raise SolverError(f"mip_gap must be in [0, 1), got {mip_gap!r}")
    if threads is not None and threads < 1:
        raise SolverError(f"threads must be at least 1, got {threads!r}")
    begin = check_start(model, start)
    result = _backend(solver)(
        model,
        time_limit=time_limit,
        mip_gap=mip_gap,
        threads=threads,
        log=log,
        start=begin,
        interruptible=interruptible,
    )
    return _start_as_incumbent(model, result, begin)


def _start_as_incumbent(
    model: LinearModel, result: SolveResult, start: FloatArray | None
) -> SolveResult:
    """A MIP stopped (time limit, interrupt) before its solver took up a complete, feasible
    start (within :data:`START_FEASIBILITY_TOL`) still has that start as its incumbent."""
    stopped = {
        SolveStatus.TIME_LIMIT_NO_SOLUTION: SolveStatus.TIME_LIMIT,
        SolveStatus.INTERRUPTED: SolveStatus.INTERRUPTED,
    }
    if start is None or result.x is not None or result.status not in stopped:
        return result
    if not model.is_mip or model.violation(start) > START_FEASIBILITY_TOL:
        return result
    objective = model.value(start)
    bound = min(result.bound, objective) if not math.isnan(result.bound) else -math.inf
    return SolveResult(
        stopped[result.status],
        objective,
        bound,
        relative_gap(objective, bound),
        result.runtime,
        start.copy(),
        result.solver,
        f"{result.message}; the incumbent is the starting solution",
    )


def check_start(model: LinearModel, start: npt.ArrayLike | None) -> FloatArray | None:
    """``start`` as a float vector of the model's length (``nan``: no value), or ``None``.

    Raises
    ------
    SolverError
        Wrong length, or an infinite value; the message names the model and the index.

    Examples
    --------
    >>> from coflowlab.solvers import ModelBuilder
    >>> b = ModelBuilder("toy")
    >>> _ = b.add_variables("x", 2)
    >>> check_start(b.build(), [1, float("nan")]).tolist()
    [1.0, nan]
    >>> check_start(b.build(), [1.0])
    Traceback (most recent call last):
    ...
    coflowlab.exceptions.SolverError: model 'toy': start has shape (1,), expected (2,) ...
    """
    if start is None:
        return None
    arr = np.array(start, dtype=float)
    if arr.shape != (model.num_vars,):
        raise SolverError(
            f"model {model.name!r}: start has shape {arr.shape}, expected ({model.num_vars},) "
            "(one value per variable, nan for none)"
        )
    bad = np.flatnonzero(np.isinf(arr))
    if bad.size:
        k = int(bad[0])
        raise SolverError(
            f"model {model.name!r}: start[{k}] is {arr[k]}; give a finite value or nan"
        )
    return arr
