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

from .constants import OPTIMALITY_TOL
from .exceptions import SolverError
from .instance import Instance
from .schedules import Schedule
from .solvers.options import SolverOptions
from .solvers.result import SolveResult, SolveStatus, relative_gap
from .verifier import VerificationReport, verify

__all__ = [
    "OBJECTIVE_RTOL",
    "Guarantee",
    "Solution",
    "SolutionKind",
    "approximation_solution",
    "bound_solution",
    "check_optimality",
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


@dataclass(frozen=True)
class Guarantee:
    """A proven performance guarantee: ``value ≤ factor · bound + additive``.

    Attributes
    ----------
    factor, additive
        The guarantee's multiplicative factor and additive term (QSZ's ``2·w(G₁)``; 0 for most).
    bound
        What the guarantee is measured against: the name of a certified lower bound
        (``"dual"``, ``"lp-ov"``, ``"interval-lp"``, ``"time-indexed-lp"``) or ``"opt"``.
    statement
        The inequality in words, e.g. ``"Σ w C ≤ 4·LP-OV (zero release)"``.
    source
        Theorem and paper, and the docs page that derives or checks it.
    in_expectation
        Whether it holds in expectation only (randomized algorithms).

    Examples
    --------
    >>> g = Guarantee(4.0, "lp-ov", "Σ w C ≤ 4·LP-OV", "Shafiee-Ghaderi 2018")
    >>> g.limit(2.5), g.holds(9.9, 2.5), g.holds(10.5, 2.5)
    (10.0, True, False)
    """

    factor: float
    bound: str
    statement: str
    source: str
    additive: float = 0.0
    in_expectation: bool = False

    def limit(self, bound_value: float) -> float:
        """The largest value the guarantee allows against ``bound_value``."""
        return self.factor * bound_value + self.additive

    def holds(self, value: float, bound_value: float, rtol: float = OBJECTIVE_RTOL) -> bool:
        """Whether ``value`` is within the guarantee, up to the relative tolerance ``rtol``
        (the bound comes from an LP solved to about 1e-9, :data:`OBJECTIVE_RTOL`)."""
        limit = self.limit(bound_value)
        return value <= limit + rtol * max(1.0, abs(limit))

    def to_dict(self) -> dict[str, Any]:
        """The guarantee as a JSON object."""
        return {
            "factor": self.factor,
            "additive": self.additive,
            "bound": self.bound,
            "statement": self.statement,
            "source": self.source,
            "in_expectation": self.in_expectation,
        }


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
    bound_source
        What ``bound`` is, for approximations: the certified lower bound the result is measured
        against (``"dual"``, ``"lp-ov"``, ``"interval-lp"``, ``"time-indexed-lp"``).
    guarantee
        The proven guarantee of an approximation algorithm (``None`` for other methods).
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
    bound_source: str | None = None
    guarantee: Guarantee | None = None

    @property
    def ratio(self) -> float:
        """``objective / bound``: the achieved ratio of a schedule to its certified bound
        (``nan`` without both, or when the bound is not positive)."""
        if self.is_lower_bound or not (math.isfinite(self.objective) and self.bound > 0):
            return math.nan
        return self.objective / self.bound if math.isfinite(self.bound) else math.nan

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
            "bound_source": self.bound_source,
            "guarantee": None if self.guarantee is None else self.guarantee.to_dict(),
            "ratio": _num(self.ratio),
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
    options: SolverOptions | None = None,
) -> Solution:
    """Verifies ``schedule`` and wraps it: the objective comes from the verifier.

    ``result`` is the solver's (``None`` for combinatorial methods); its objective, when it
    has one, must agree with the verified one within :data:`OBJECTIVE_RTOL`, and its proven
    bound becomes the solution's. ``objective`` overrides the verified ``Σ w C`` for methods
    with another objective (deadlines: weighted number met, computed by the caller from the
    report). ``bound`` overrides the solver's bound.

    Status ``optimal`` is a claim this function checks (:func:`check_optimality`): the
    verified objective must equal the proven bound within
    :data:`coflowlab.constants.OPTIMALITY_TOL`, widened to ``options.mip_gap``, the relative
    gap the caller asked its solver for (``options``: the solver settings the schedule was
    solved with, see :class:`~coflowlab.solvers.SolverOptions`; ``None`` for a schedule
    found without a solver, checked with no widening).

    Raises
    ------
    SolverError
        The schedule fails verification, its cost disagrees with the solver's objective, or
        the status is ``optimal`` while the verified objective is not the proven bound: a bug
        in the formulation's decoding or bound, never a property of the instance.

    Examples
    --------
    A schedule that finishes the only coflow at 2 cannot be called optimal against a bound
    of 1:

    >>> from coflowlab import FluidSchedule, Instance
    >>> inst = Instance.from_matrices([[[1.0]]])
    >>> slow = FluidSchedule.from_segments(1, [0], [0.0], [2.0], [0.5])
    >>> result = SolveResult(SolveStatus.OPTIMAL, 2.0, 1.0, 0.5, 0.0, np.zeros(1), "toy")
    >>> schedule_solution("toy", SolutionKind.EXACT, inst, slow, result, runtime=0.0)
    Traceback (most recent call last):
    ...
    coflowlab.exceptions.SolverError: toy: status optimal, but the returned schedule's ...
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
    if status is SolveStatus.OPTIMAL:
        asked = 0.0 if options is None else options.mip_gap
        check_optimality(method, value, float(bound), asked)
    if status is SolveStatus.OPTIMAL and result is not None:
        # the solver's bound is on its own objective; keep it consistent with the verified one
        bound = min(bound, value) if not maximize else max(bound, value)
    return Solution(
        method, kind, status, value, float(bound), relative_gap(value, float(bound)), runtime,
        instance, schedule, report, order, solver, maximize, message, details or {},
    )  # fmt: skip


def check_optimality(method: str, value: float, bound: float, mip_gap: float = 0.0) -> None:
    """Raises :class:`SolverError` unless a schedule of verified objective ``value`` may be
    called optimal against the proven ``bound``: ``|value - bound| ≤ (max(OPTIMALITY_TOL,
    mip_gap) + OBJECTIVE_RTOL) · max(1, |value|)`` (:data:`coflowlab.constants.
    OPTIMALITY_TOL`). The same test for minimizing and maximizing methods: a bound on the
    wrong side is as much a bug as a gap.

    Examples
    --------
    >>> check_optimality("toy", 83.00001, 83.0)
    >>> check_optimality("toy", 85.0, 83.0)
    Traceback (most recent call last):
    ...
    coflowlab.exceptions.SolverError: toy: status optimal, but the returned schedule's ...
    """
    tol = (max(OPTIMALITY_TOL, mip_gap) + OBJECTIVE_RTOL) * max(1.0, abs(value))
    if not abs(value - bound) <= tol:  # also catches a nan bound
        raise SolverError(
            f"{method}: status optimal, but the returned schedule's verified objective "
            f"{value!r} differs from the proven bound {bound!r} by more than {tol:.3g} "
            f"(OPTIMALITY_TOL {OPTIMALITY_TOL:g}, mip_gap {mip_gap:g}): the method returned "
            "a schedule other than the one it proved optimal, or a wrong bound"
        )


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


def approximation_solution(
    method: str,
    instance: Instance,
    schedule: Schedule,
    *,
    bound: float,
    bound_source: str,
    guarantee: Guarantee | None,
    runtime: float,
    order: tuple[int, ...] | None = None,
    solver: str | None = None,
    details: dict[str, Any] | None = None,
) -> Solution:
    """Verifies an approximation algorithm's schedule and wraps it with its certified bound.

    The objective is the verifier's ``Σ w C``; ``bound`` is the certified lower bound on OPT
    the algorithm is measured against (named by ``bound_source``), and ``guarantee`` its
    proven factor. The status is ``feasible``: a verified schedule, no optimality claim.

    Raises
    ------
    SolverError
        The schedule fails verification, or it is cheaper than its own lower bound beyond
        :data:`OBJECTIVE_RTOL` (either is a bug in the algorithm, never the instance's).
    """
    base = schedule_solution(
        method, SolutionKind.APPROXIMATION, instance, schedule, None,
        runtime=runtime, order=order, details=details,
    )  # fmt: skip
    value = base.objective
    if value < bound - OBJECTIVE_RTOL * max(1.0, abs(bound)):
        raise SolverError(
            f"{method}: the verified schedule costs {value!r}, less than its lower bound "
            f"{bound_source} = {bound!r}"
        )
    return Solution(
        method, SolutionKind.APPROXIMATION, SolveStatus.FEASIBLE, value, float(bound),
        relative_gap(value, float(bound)), runtime, instance, schedule, base.report, order,
        solver, False, "", details or {}, bound_source, guarantee,
    )  # fmt: skip
