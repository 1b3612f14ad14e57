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
from .options import SolverOptions
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
    options: SolverOptions | None = None,
    *,
    start: npt.ArrayLike | None = None,
    interruptible: bool = True,
) -> SolveResult:
    """Solves ``model`` with one backend.

    Parameters
    ----------
    model
        The model (see :class:`LinearModel`).
    options
        Solver settings, see :class:`SolverOptions` (``None``: its defaults, HiGHS with no
        time limit). ``solver`` picks the backend (see :data:`SOLVERS`); a MIP stopped by
        ``time_limit`` returns its incumbent and proven bound (status ``time_limit``) or,
        without an incumbent, ``time_limit_no_solution``; ``mip_gap`` applies to MIPs only
        and the result's ``gap`` is the one actually reached; ``log`` writes the solver's
        log to standard error (never standard output, which stays free for results: without
        it the backends print nothing at all).
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
        A bad argument (the message names it), e.g. a ``start`` of the wrong length, or
        ``options`` that are not a :class:`SolverOptions` (whose own construction rejects
        a bad setting with a ``ValueError`` naming the field).
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
    >>> solve(b.build(), SolverOptions(time_limit=10, mip_gap=0.0)).status.value
    'optimal'
    """
    if options is None:
        options = SolverOptions()
    elif not isinstance(options, SolverOptions):
        raise SolverError(
            f"options must be a SolverOptions (or None), got {type(options).__name__}"
        )
    begin = check_start(model, start)
    # the settings were validated when the SolverOptions was built; backends take them as
    # keywords so that each stays a plain function of its solver's own options
    result = _backend(options.solver)(
        model,
        time_limit=options.time_limit,
        mip_gap=options.mip_gap,
        threads=options.threads,
        log=options.log,
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
