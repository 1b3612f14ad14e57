"""What a solver backend returns: status, objective, proven bound, gap, runtime, values."""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum

import numpy as np
import numpy.typing as npt

__all__ = ["SolveResult", "SolveStatus", "relative_gap", "unbounded_if_feasible"]


class SolveStatus(StrEnum):
    """How a solve ended."""

    OPTIMAL = "optimal"
    """Proven optimal within the requested gap (``gap`` says how close)."""
    TIME_LIMIT = "time_limit"
    """Stopped by the time limit with an incumbent: ``objective`` is feasible, ``bound``
    proven, ``gap`` between them."""
    TIME_LIMIT_NO_SOLUTION = "time_limit_no_solution"
    """Stopped by the time limit before any feasible solution."""
    INTERRUPTED = "interrupted"
    """Stopped by an interrupt (Ctrl-C inside :func:`coflowlab.solvers.interruptible`): like
    ``time_limit``, ``objective`` and the values are the incumbent and ``bound`` is proven,
    but there may be no incumbent yet (then ``objective`` is ``nan`` and there are no
    values: check ``SolveResult.has_solution``)."""
    INFEASIBLE = "infeasible"
    UNBOUNDED = "unbounded"
    ERROR = "error"
    """The solver failed; ``message`` says how."""
    FEASIBLE = "feasible"
    """A verified schedule with no optimality claim (approximation algorithms): ``bound``
    is the certified lower bound it is measured against."""

    @property
    def has_solution(self) -> bool:
        """Whether values come with this status (for ``interrupted``: may come, when an
        incumbent existed)."""
        return self in (
            SolveStatus.OPTIMAL,
            SolveStatus.TIME_LIMIT,
            SolveStatus.FEASIBLE,
            SolveStatus.INTERRUPTED,
        )


def relative_gap(objective: float, bound: float) -> float:
    """``|objective − bound| / max(|objective|, 1e-10)``: the gap convention of HiGHS and
    Gurobi (``nan`` when either is missing, ``0`` when they are equal).

    Examples
    --------
    >>> relative_gap(10.0, 9.0)
    0.1
    >>> relative_gap(0.0, 0.0)
    0.0
    """
    if math.isnan(objective) or math.isnan(bound):
        return math.nan
    if objective == bound:
        return 0.0
    if math.isinf(objective) or math.isinf(bound):
        return math.inf
    return abs(objective - bound) / max(abs(objective), 1e-10)


@dataclass(frozen=True, eq=False)
class SolveResult:
    """The outcome of :func:`coflowlab.solvers.solve` on one :class:`LinearModel`.

    Attributes
    ----------
    status
        See :class:`SolveStatus`.
    objective
        Value of the returned solution (``nan`` without one).
    bound
        The best proven lower bound (for an LP solved to optimality, the objective).
    gap
        :func:`relative_gap` of ``objective`` and ``bound``.
    runtime
        Wall seconds inside the solver.
    x
        Variable values (``None`` without a solution).
    solver
        The backend's name.
    message
        The backend's own status text.
    """

    status: SolveStatus
    objective: float
    bound: float
    gap: float
    runtime: float
    x: npt.NDArray[np.float64] | None
    solver: str
    message: str = ""

    @property
    def has_solution(self) -> bool:
        """Whether ``x`` holds a feasible solution."""
        return self.x is not None and self.status.has_solution

    def __repr__(self) -> str:
        return (
            f"<SolveResult {self.solver}: {self.status.value}, objective {self.objective:.10g}, "
            f"bound {self.bound:.10g}, gap {self.gap:.3g}, {self.runtime:.3f} s>"
        )


def unbounded_if_feasible(probe: SolveResult) -> SolveStatus:
    """Reads the solve of a model's feasibility problem (:meth:`LinearModel.feasibility`)
    after the solver said "unbounded or infeasible": a feasible point means unbounded;
    otherwise the probe's status (infeasible, or undecided: time limit, error)."""
    if probe.status in (SolveStatus.OPTIMAL, SolveStatus.TIME_LIMIT):
        return SolveStatus.UNBOUNDED
    return probe.status
