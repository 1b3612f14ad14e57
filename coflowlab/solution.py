"""What every offline method (exact formulation, relaxation, bound, approximation) returns.

A :class:`Solution` carries a value and says what the value is: the cost of a verified
schedule (exact and approximation methods), or a lower bound on the optimum (relaxations
and combinatorial bounds). Schedules always go through :func:`coflowlab.verify`; the
objective of a schedule is computed from the verifier's completion times, never from the
solver's variables, which only cross-check it (:data:`OBJECTIVE_RTOL`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import numpy as np
import numpy.typing as npt

from .exceptions import SolverError
from .instance import Instance
from .schedules import Schedule
from .solvers.result import SolveResult, SolveStatus, relative_gap
from .verifier import VerificationReport, verify

__all__ = [
    "OBJECTIVE_RTOL",
    "Solution",
    "SolutionKind",
    "bound_solution",
    "schedule_solution",
    "weighted_completion",
]

OBJECTIVE_RTOL = 1e-6
"""Relative tolerance between a solver's objective and the verified schedule's (solvers
work to about 1e-9 feasibility on scaled data; their objective is rounded accordingly)."""


class SolutionKind(StrEnum):
    """What a :class:`Solution`'s value means."""

    EXACT = "exact"
    """A verified schedule; proven optimal when the status is ``optimal``."""
    RELAXATION = "relaxation"
    """The optimum of a relaxation: a lower bound on OPT (with an ordering, often)."""
    BOUND = "bound"
    """A combinatorial lower bound on OPT."""
    APPROXIMATION = "approximation"
    """A verified schedule from an approximation algorithm: an upper bound on OPT."""


@dataclass(frozen=True, eq=False)
class Solution:
    """The outcome of one offline method on one instance.

    Attributes
    ----------
    method
        The method's registered name (``coflowlab solve --list``).
    kind
        What ``objective`` is (see :class:`SolutionKind`).
    status
        How the solve ended (:class:`coflowlab.solvers.SolveStatus`).
    objective
        For schedules: ``Σ_j w_j C_j`` from the verifier (deadline methods: the weighted
        number of coflows that meet their deadlines, which they maximize). For relaxations
        and bounds: the bound's value. ``nan`` without a value.
    bound
        The best proven bound on the optimum (below it when minimizing, above when
        maximizing); ``nan`` when none is known.
    gap
        ``|objective − bound| / |objective|``; 0 when proven optimal at zero gap.
    runtime
        Wall seconds of the whole method (building, solving, verifying).
    instance
        The instance solved.
    schedule, report
        The schedule and its verification (schedule-producing methods with a solution).
    order
        The coflow order the method found or used, if it has one.
    solver
        The backend used (``None`` for combinatorial methods).
    maximize
        Whether the objective is maximized (deadline methods).
    message
        The solver's own status text, or a note.
    details
        Method-specific figures (model size, nodes, cuts...), JSON-serializable.
    """

    method: str
    kind: SolutionKind
    status: SolveStatus
    objective: float
    bound: float
    gap: float
    runtime: float
    instance: Instance
    schedule: Schedule | None = None
    report: VerificationReport | None = None
    order: tuple[int, ...] | None = None
    solver: str | None = None
    maximize: bool = False
    message: str = ""
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def completion_times(self) -> npt.NDArray[np.float64] | None:
        """Per-coflow completion times of the verified schedule (``None`` without one)."""
        return None if self.report is None else self.report.coflow_completion

    @property
    def is_lower_bound(self) -> bool:
        """Whether ``objective`` is a lower bound rather than a schedule's cost."""
        return self.kind in (SolutionKind.RELAXATION, SolutionKind.BOUND)

    def to_dict(self) -> dict[str, Any]:
        """The JSON object ``coflowlab solve --json`` prints."""
        ct = self.completion_times
        labels = self.instance.coflow_label
        return {
            "method": self.method,
            "kind": self.kind.value,
            "status": self.status.value,
            "objective": _num(self.objective),
            "bound": _num(self.bound),
            "gap": _num(self.gap),
            "runtime": self.runtime,
            "completion_times": None
            if ct is None
            else {lab: _num(float(c)) for lab, c in zip(labels, ct.tolist(), strict=True)},
            "order": None if self.order is None else [labels[k] for k in self.order],
            "solver": self.solver,
            "details": self.details,
        }

    def __repr__(self) -> str:
        what = "bound" if self.is_lower_bound else "objective"
        return (
            f"<Solution {self.method}: {self.status.value}, {what} {self.objective:.10g}, "
            f"bound {self.bound:.10g}, gap {self.gap:.3g}, {self.runtime:.3f} s>"
        )


def _num(x: float) -> float | None:
    """JSON has no nan or infinity: both become ``null``."""
    return x if math.isfinite(x) else None


def weighted_completion(instance: Instance, report: VerificationReport) -> float:
    """``Σ_j w_j C_j`` of a verified schedule."""
    return float(np.dot(instance.coflow_weight, report.coflow_completion))


def schedule_solution(
    method: str,
    kind: SolutionKind,
    instance: Instance,
    schedule: Schedule | None,
    result: SolveResult | None,
    *,
    runtime: float,
    order: tuple[int, ...] | None = None,
    objective: float | None = None,
    bound: float | None = None,
    maximize: bool = False,
    details: dict[str, Any] | None = None,
) -> Solution:
    """Verifies ``schedule`` and wraps it: the objective comes from the verifier.

    ``result`` is the solver's (``None`` for combinatorial methods); its objective, when it
    has one, must agree with the verified one within :data:`OBJECTIVE_RTOL`, and its proven
    bound becomes the solution's. ``objective`` overrides the verified ``Σ w C`` for methods
    with another objective (deadlines: weighted number met, computed by the caller from the
    report). ``bound`` overrides the solver's bound.

    Raises
    ------
    SolverError
        The schedule fails verification, or its cost disagrees with the solver's objective:
        a bug in the formulation's decoding, never a property of the instance.
    """
    status = result.status if result is not None else SolveStatus.OPTIMAL
    solver = result.solver if result is not None else None
    message = result.message if result is not None else ""
    if schedule is None:
        value = math.nan
        if bound is None:
            bound = result.bound if result is not None else math.nan
        proven = float(bound)
        return Solution(
            method, kind, status, value, proven, math.nan, runtime, instance,
            solver=solver, maximize=maximize, message=message, details=details or {},
        )  # fmt: skip
    report = verify(instance, schedule)
    if not report.feasible:
        raise SolverError(
            f"{method}: the schedule decoded from the solver's values fails verification "
            f"({report.summary(limit=3)})"
        )
    value = weighted_completion(instance, report) if objective is None else float(objective)
    if result is not None and result.has_solution and objective is None:
        claimed = result.objective
        if abs(claimed - value) > OBJECTIVE_RTOL * max(1.0, abs(value)):
            raise SolverError(
                f"{method}: the solver's objective {claimed!r} disagrees with the verified "
                f"schedule's {value!r}"
            )
    if bound is None:
        bound = result.bound if result is not None else value
    if status is SolveStatus.OPTIMAL and result is not None:
        # the solver's bound is on its own objective; keep it consistent with the verified one
        bound = min(bound, value) if not maximize else max(bound, value)
    return Solution(
        method, kind, status, value, float(bound), relative_gap(value, float(bound)), runtime,
        instance, schedule, report, order, solver, maximize, message, details or {},
    )  # fmt: skip


def bound_solution(
    method: str,
    kind: SolutionKind,
    instance: Instance,
    value: float,
    result: SolveResult | None,
    *,
    runtime: float,
    order: tuple[int, ...] | None = None,
    details: dict[str, Any] | None = None,
) -> Solution:
    """Wraps a lower bound on OPT (a relaxation's optimum or a combinatorial bound).

    For a relaxation stopped early (status ``time_limit``), ``value`` is not a bound; the
    solver's proven dual bound is, and is what ``bound`` reports."""
    status = result.status if result is not None else SolveStatus.OPTIMAL
    proven = value if status is SolveStatus.OPTIMAL else (result.bound if result else math.nan)
    return Solution(
        method, kind, status, float(value), float(proven), relative_gap(value, proven), runtime,
        instance, order=order, solver=result.solver if result else None,
        message=result.message if result else "", details=details or {},
    )  # fmt: skip
