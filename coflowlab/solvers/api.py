"""``solve``: hands a :class:`LinearModel` to the backend asked for."""

from __future__ import annotations

import importlib
import importlib.util
import math
from collections.abc import Callable

from ..exceptions import SolverError, SolverNotAvailableError
from .model import LinearModel
from .result import SolveResult

__all__ = ["SOLVERS", "available_solvers", "require_solver", "solve"]

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
        Print the solver's log.

    Raises
    ------
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
    >>> res.status.value, res.objective, res.x.tolist()
    ('optimal', -3.0, [3.0, 0.0])
    """
    if time_limit is not None and not (time_limit > 0 and not math.isnan(time_limit)):
        raise SolverError(f"time_limit must be positive, got {time_limit!r}")
    if not (0 <= mip_gap < 1):
        raise SolverError(f"mip_gap must be in [0, 1), got {mip_gap!r}")
    if threads is not None and threads < 1:
        raise SolverError(f"threads must be at least 1, got {threads!r}")
    return _backend(solver)(
        model, time_limit=time_limit, mip_gap=mip_gap, threads=threads, log=log
    )
