"""Most (weighted) coflows meeting their deadlines: Chowdhury's thesis (PhD thesis, UC Berkeley
2015), Appendix B.1, objective (B.5), exactly, in the fluid and in the slotted model.

Conventions (both methods)
--------------------------
- **These are the only methods that read deadlines.** Every ``Σ w C`` method
  (``exact-fluid``, ``exact-slotted``, the relaxations and bounds) ignores them and schedules
  a coflow that cannot meet its deadline like any other.
- **Deadlines are relative to the release**, as everywhere in coflowlab
  (:class:`coflowlab.Instance`, :func:`coflowlab.metrics.deadlines_met`): coflow ``j`` meets
  its deadline when ``C_j - r_j ≤ D_j``, i.e. it completes by the absolute due time
  ``r_j + D_j``. (With zero releases the two readings agree.)
- The objective is ``Σ_j w_j [C_j ≤ r_j + D_j]`` over the coflows **with** a deadline; with
  unit weights, the number of coflows that meet theirs. Coflows without a deadline
  (``inf``) are scheduled (every byte is sent) but never counted, neither as met nor as
  missed. (:func:`coflowlab.metrics.deadlines_met` counts them as met: add their weight to
  compare.)
- A coflow that cannot meet its deadline even alone (``r_j + ρ_j`` after the due time, or a
  flow that cannot finish in time) is not an error: it simply is not counted. When no
  coflow can meet its deadline, the answer is 0, proven optimal without a solver.
- Coflows that are not selected, and coflows without a deadline, are sent after the last
  due time of the selected-or-selectable coflows, once everything is released (the *tail*):
  they send nothing before, so none of them counts by accident, and the schedule still
  carries every byte and verifies. Their completion times mean nothing.
- Zero-weight coflows are never selected (they cannot change the objective) and go to the
  tail.
- Dependencies between coflows are not supported (:class:`InvalidInstanceError`).

The reported objective is recomputed from the verifier's completion times and must equal
the solver's ``Σ w_j U_j``.
"""

from __future__ import annotations

import dataclasses
import math
import time
from typing import Any

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from coflowlab.exceptions import InvalidInstanceError, ModelTooLargeError, SolverError
from coflowlab.instance import Instance
from coflowlab.schedules import FluidSchedule, Schedule, SlottedSchedule
from coflowlab.solution import Solution, SolutionKind, schedule_solution
from coflowlab.solvers import (
    LinearModel,
    ModelBuilder,
    SolveResult,
    SolverOptions,
    SolveStatus,
    solve,
)
from coflowlab.verifier import VerificationReport, verify

from .time_indexed import (
    MAX_MIP_SIZE,
    earliest_slotted_completion,
    first_slots,
    greedy_slotted,
    port_slot_rows,
    slotted_data,
)

__all__ = ["deadlines_met_weight", "solve_deadline_fluid", "solve_deadline_slotted"]

_REL = 1e-9


def _check(instance: Instance, method: str) -> None:
    if not instance.has_deadlines:
        raise InvalidInstanceError(
            f"{method}: no coflow has a deadline (coflow_deadline is inf for all "
            f"{instance.num_coflows}); give some coflows deadlines, e.g. with "
            "coflowlab.instances.assign_deadlines, or minimise Σ w C with an exact method"
        )
    if instance.dependencies.size:
        a, b = (int(x) for x in instance.dependencies[0])
        raise InvalidInstanceError(
            f"{method}: dependencies are not supported (coflow {b} depends on coflow {a})"
        )


def deadlines_met_weight(instance: Instance, report: VerificationReport) -> float:
    """``Σ w_j`` over the coflows with a deadline that the verified schedule completes by
    ``r_j + D_j`` (within the verifier's time tolerance).

    Examples
    --------
    >>> from coflowlab import Instance, FluidSchedule, verify
    >>> inst = Instance.from_matrices([[[1.0]], [[1.0]]], deadline=[1.0, 1.0], weight=[2, 1])
    >>> s = FluidSchedule(2, time=[0, 1, 2], flow=[0, 1, 1], rate=[1.0, 1.0, 0.0])
    >>> deadlines_met_weight(inst, verify(inst, s))
    2.0
    """
    met = _met(instance, report)
    return float(instance.coflow_weight[met].sum())


def _met(instance: Instance, report: VerificationReport) -> npt.NDArray[np.bool_]:
    late = report.coflow_completion - instance.coflow_release - instance.coflow_deadline
    return np.isfinite(instance.coflow_deadline) & (late <= report.time_tol)


def _solution(
    method: str,
    instance: Instance,
    schedule: Schedule | None,
    result: SolveResult | None,
    start: float,
    details: dict[str, Any],
    options: SolverOptions | None = None,
) -> Solution:
    """Verifies, counts the deadlines met, cross-checks the solver's count, wraps (an
    ``optimal`` status is checked against the bound within ``options.mip_gap``; ``None``:
    no solver ran, no widening)."""
    if schedule is None:
        bound = -result.bound if result is not None else math.nan
        return schedule_solution(
            method,
            SolutionKind.EXACT,
            instance,
            None,
            result,
            runtime=time.perf_counter() - start,
            bound=bound,
            maximize=True,
            details=details,
        )
    report = verify(instance, schedule)
    if not report.feasible:
        raise SolverError(
            f"{method}: the decoded schedule fails verification ({report.summary(limit=3)})"
        )
    value = deadlines_met_weight(instance, report)
    met = _met(instance, report)
    details["met"] = [instance.coflow_label[k] for k in np.flatnonzero(met)]
    if result is not None and result.has_solution:
        claimed = -result.objective
        if abs(claimed - value) > 1e-6 * max(1.0, abs(value)):
            raise SolverError(
                f"{method}: the solver's weight of deadlines met {claimed!r} disagrees with "
                f"the verified schedule's {value!r}"
            )
    return schedule_solution(
        method,
        SolutionKind.EXACT,
        instance,
        schedule,
        result,
        runtime=time.perf_counter() - start,
        objective=value,
        bound=(-result.bound if result is not None else value),
        maximize=True,
        details=details,
        options=options,
    )


def _too_large(method: str, size: int, limit: int, period: str) -> None:
    if size > limit:
        raise ModelTooLargeError(
            f"{method}: the model needs {size} flow-{period} variables, above the limit "
            f"{limit} (max_size=); use deadline-fluid (intervals between releases and "
            "deadlines instead of unit slots), a heuristic (Varys' admission control), or "
            "pass max_size= if memory allows"
        )


def _selection_model(
    name: str,
    instance: Instance,
    flow: npt.NDArray[np.int64],
    period: npt.NDArray[np.int64],
    per_period: npt.NDArray[np.float64],
    capacity_rhs: Any,
    candidates: npt.NDArray[np.int64],
    integer: bool,
) -> LinearModel:
    """``max Σ w_j U_j`` s.t. ``Σ_k x[e, k] = d_e U_j`` and per-port, per-period capacity;
    variables ``x`` are the (flow, period) pairs given, ``U`` one per candidate coflow."""
    b = ModelBuilder(name)
    X = len(flow)
    xb = b.add_variables("x", X, upper=per_period, integer=integer)
    w = instance.coflow_weight[candidates]
    ub = b.add_variables("U", len(candidates), cost=-w, upper=1.0, integer=True)
    N = b.num_vars
    u_of = np.full(instance.num_coflows, -1, dtype=np.int64)
    u_of[candidates] = ub.start + np.arange(len(candidates))
    flows = np.flatnonzero(u_of[instance.flow_coflow] >= 0)
    row_of = np.full(instance.num_flows, -1, dtype=np.int64)
    row_of[flows] = np.arange(len(flows))
    x_col = xb.start + np.arange(X, dtype=np.int64)
    k = len(flows)
    rows = np.concatenate([row_of[flow], np.arange(k)])
    cols = np.concatenate([x_col, u_of[instance.flow_coflow[flows]]])
    vals = np.concatenate([np.ones(X), -instance.flow_size[flows]])
    b.add_rows("size", sp.csr_matrix((vals, (rows, cols)), shape=(k, N)), lower=0.0, upper=0.0)
    mat, port, per = port_slot_rows(instance, flow, period, x_col, N)
    b.add_rows("capacity", mat, upper=capacity_rhs(port, per))
    return b.build()


# ---------------------------------------------------------------- slotted
def solve_deadline_slotted(
    instance: Instance,
    options: SolverOptions | None = None,
    *,
    max_size: int = MAX_MIP_SIZE,
) -> Solution:
    """The largest weight of coflows that meet their deadlines, slotted model (thesis B.5).

    Time-indexed MIP: ``z[e, t]`` integer units flow ``e`` sends in slot ``t`` (from its
    first slot ``ceil(r_e) + 1``, see :func:`first_slots`, to its coflow's last slot
    ``K_j = floor(r_j + D_j)``: a coflow meets deadline ``D`` when it completes by the end
    of slot ``K_j``), ``U_j`` binary, ``Σ_t z[e, t] = d_e U_j``, and per port and slot at
    most ``c_v`` units (a matching with unit capacities); maximize ``Σ w_j U_j``. Exact: the
    selected coflows' sends of any schedule are a solution, and every solution is a
    schedule. Conventions (relative deadlines, coflows without one, the tail) are in the
    module docstring; the tail is filled greedily slot by slot.

    Parameters
    ----------
    instance
        Integral sizes and capacities, at least one deadline, no dependencies.
    options
        Solver settings, see :class:`~coflowlab.solvers.SolverOptions`.
    max_size
        Largest number of ``z`` variables (default :data:`MAX_MIP_SIZE`).

    Returns
    -------
    Solution
        Kind ``exact``, ``maximize`` true; ``objective`` is the verified weight met,
        ``bound`` the solver's proven upper bound; ``details["met"]`` the labels of the
        coflows that meet their deadlines.

    Raises
    ------
    InvalidInstanceError
        No deadline, dependencies, or a non-integral size or capacity.
    ModelTooLargeError
        Too many ``z`` variables.

    Examples
    --------
    Two coflows on one port, sizes 2 and 3, both due by 3: only one can make it, and the
    weights decide which.

    >>> from coflowlab import Instance
    >>> inst = Instance.from_matrices([[[2]], [[3]]], deadline=[3, 3], weight=[1, 2])
    >>> sol = solve_deadline_slotted(inst)
    >>> sol.status.value, round(sol.objective, 6), sol.details["met"]
    ('optimal', 2.0, ['1'])
    """
    start = time.perf_counter()
    method = "deadline-slotted"
    options = options or SolverOptions()
    _check(instance, method)
    size, cap = slotted_data(instance, method)
    first = first_slots(instance)
    due = instance.coflow_release + instance.coflow_deadline
    with np.errstate(invalid="ignore"):
        last_slot = np.where(
            np.isfinite(due), np.floor(due + _REL * np.maximum(np.abs(due), 1.0)), -1
        ).astype(np.int64)
    earliest = earliest_slotted_completion(instance, first, size, cap)
    candidates = np.flatnonzero(
        np.isfinite(due) & (instance.coflow_weight > 0) & (earliest <= last_slot)
    )
    details: dict[str, Any] = {
        "with_deadline": int(np.isfinite(due).sum()),
        "candidates": len(candidates),
    }
    release_slot = int(first.max() - 1)
    if not len(candidates):
        tail = _greedy_tail(instance, np.arange(instance.num_flows), size, cap, release_slot)
        return _solution(method, instance, tail, None, start, details)
    is_cand = np.zeros(instance.num_coflows, dtype=bool)
    is_cand[candidates] = True
    flows = np.flatnonzero(is_cand[instance.flow_coflow])
    hi = last_slot[instance.flow_coflow[flows]]
    count = np.maximum(hi - first[flows] + 1, 0)
    _too_large(method, int(count.sum()), max_size, "slot")
    flow = np.repeat(flows, count)
    ptr = np.cumsum(count) - count
    slot = np.repeat(first[flows], count) + np.arange(int(count.sum())) - np.repeat(ptr, count)
    m = instance.num_ports
    per_slot = np.minimum(size, np.minimum(cap[instance.flow_src], cap[instance.flow_dst + m]))
    model = _selection_model(
        method,
        instance,
        flow,
        slot,
        per_slot[flow].astype(float),
        lambda port, _slot: cap[port].astype(float),
        candidates,
        integer=True,
    )
    details.update(variables=model.num_vars, rows=model.num_rows, slots=int(last_slot.max()))
    result = solve(model, options)
    if not (result.has_solution and result.x is not None):
        return _solution(method, instance, None, result, start, details)
    amount = np.rint(result.x[model.blocks["x"]])
    selected = np.rint(result.x[model.blocks["U"]]) > 0.5
    chosen = np.zeros(instance.num_coflows, dtype=bool)
    chosen[candidates[selected]] = True
    keep = (amount > 0) & chosen[instance.flow_coflow[flow]]
    rest = np.flatnonzero(~chosen[instance.flow_coflow])
    tail_start = max(int(last_slot[candidates].max()), release_slot)
    tail = _greedy_tail(instance, rest, size, cap, tail_start)
    schedule = SlottedSchedule(
        instance.num_flows,
        np.concatenate([slot[keep], tail.slot]),
        np.concatenate([flow[keep], tail.flow]),
        np.concatenate([amount[keep], tail.amount]),
    )
    return _solution(method, instance, schedule, result, start, details, options)


def _greedy_tail(
    instance: Instance,
    flows: npt.NDArray[np.int64],
    size: npt.NDArray[np.int64],
    cap: npt.NDArray[np.int64],
    after: int,
) -> SlottedSchedule:
    """Sends ``flows`` completely from slot ``after + 1`` on (every flow is released by
    then), greedily, flows by coflow then index (:func:`greedy_slotted`)."""
    order = flows[np.lexsort((flows, instance.flow_coflow[flows]))]
    first = first_slots(instance)
    slot, flow, amount = greedy_slotted(instance, order, size, cap, first, after)
    return SlottedSchedule(instance.num_flows, slot, flow, amount.astype(float))


# ---------------------------------------------------------------- fluid
def solve_deadline_fluid(
    instance: Instance,
    options: SolverOptions | None = None,
    *,
    max_size: int = MAX_MIP_SIZE,
) -> Solution:
    """The largest weight of coflows that meet their deadlines, fluid model (thesis B.5).

    The breakpoints are the flows' releases and the due times ``r_j + D_j`` of the coflows
    that can meet them, sorted. Within one elementary interval of length ``ℓ``, amounts
    whose sums through each port are at most ``c_v ℓ`` are sent at constant rates
    (amount / ``ℓ``), so the MIP with binary ``U_j`` and continuous ``x[e, k] ≥ 0`` (only in
    intervals inside ``[r_e, r_j + D_j]``), ``Σ_k x[e, k] = d_e U_j`` and per-port interval
    capacities is exact. After the MIP, ``U`` is fixed and the amounts re-solved as an LP
    (each flow as early as possible) to get a clean basic solution; amounts are then scaled
    to the exact sizes. Conventions (relative deadlines, coflows without one, the tail) are
    in the module docstring; in the tail, coflows run one after the other, each at MADD
    rates ``d_e / ρ_j`` for ``ρ_j``.

    Parameters
    ----------
    instance
        Any sizes and capacities; at least one deadline; no dependencies.
    options
        Solver settings, see :class:`~coflowlab.solvers.SolverOptions`.
    max_size
        Largest number of ``x`` variables (default :data:`MAX_MIP_SIZE`).

    Returns
    -------
    Solution
        As :func:`solve_deadline_slotted`, with a :class:`FluidSchedule`.

    Raises
    ------
    InvalidInstanceError
        No deadline, or dependencies.
    ModelTooLargeError
        Too many ``x`` variables.

    Examples
    --------
    A coflow released at 0.5 with deadline 1 meets it in the fluid model (it sends during
    ``[0.5, 1.5)``), but not in the slotted one (its first slot is ``[1, 2)``).

    >>> from coflowlab import Instance
    >>> inst = Instance.from_matrices([[[1]]], release=[0.5], deadline=[1.0])
    >>> fluid, slotted = solve_deadline_fluid(inst), solve_deadline_slotted(inst)
    >>> round(fluid.objective, 6) + 0.0, round(slotted.objective, 6) + 0.0
    (1.0, 0.0)
    """
    start = time.perf_counter()
    method = "deadline-fluid"
    options = options or SolverOptions()
    _check(instance, method)
    m = instance.num_ports
    cap = instance.fabric.port_capacity
    kappa = np.minimum(cap[instance.flow_src], cap[instance.flow_dst + m])
    size, rel = instance.flow_size, instance.flow_release
    due = instance.coflow_release + instance.coflow_deadline
    flow_due = due[instance.flow_coflow]
    scale = max(1.0, float(np.max(np.where(np.isfinite(due), due, 0.0))), float(rel.max()))
    eps = _REL * scale
    late_flow = np.zeros(instance.num_coflows, dtype=bool)
    with np.errstate(invalid="ignore"):
        np.logical_or.at(late_flow, instance.flow_coflow, rel + size / kappa > flow_due + eps)
        alone = instance.coflow_release + instance.bottleneck
        candidates = np.flatnonzero(
            np.isfinite(due) & (instance.coflow_weight > 0) & ~late_flow & (alone <= due + eps)
        )
    details: dict[str, Any] = {
        "with_deadline": int(np.isfinite(due).sum()),
        "candidates": len(candidates),
    }
    if not len(candidates):
        tail = _madd_tail(instance, np.arange(instance.num_coflows), float(rel.max()))
        only_tail = FluidSchedule.from_segments(instance.num_flows, *tail)
        return _solution(method, instance, only_tail, None, start, details)
    is_cand = np.zeros(instance.num_coflows, dtype=bool)
    is_cand[candidates] = True
    flows = np.flatnonzero(is_cand[instance.flow_coflow])
    points = np.sort(np.concatenate([rel[flows], due[candidates]]))
    eps = _REL * max(1.0, float(points[-1]))  # below the verifier's time tolerance
    points = points[np.concatenate([[True], np.diff(points) > eps])]  # merge near-equal times
    length = np.diff(points)
    lo = np.searchsorted(points, rel[flows] - eps, side="left")
    hi = np.searchsorted(points, flow_due[flows] + eps, side="right") - 1  # intervals lo..hi-1
    count = np.maximum(hi - lo, 0)
    _too_large(method, int(count.sum()), max_size, "interval")
    flow = np.repeat(flows, count)
    ptr = np.cumsum(count) - count
    period = np.repeat(lo, count) + np.arange(int(count.sum())) - np.repeat(ptr, count)
    model = _selection_model(
        method,
        instance,
        flow,
        period,
        np.minimum(size[flow], kappa[flow] * length[period]),
        lambda port, per: cap[port] * length[per],
        candidates,
        integer=False,
    )
    details.update(variables=model.num_vars, rows=model.num_rows, intervals=len(length))
    result = solve(model, options)
    if not (result.has_solution and result.x is not None):
        return _solution(method, instance, None, result, start, details)
    selected = np.rint(result.x[model.blocks["U"]]) > 0.5
    x = _polish(model, result, selected, points[period + 1] / size[flow], options)
    chosen = np.zeros(instance.num_coflows, dtype=bool)
    chosen[candidates[selected]] = True
    x = np.where(chosen[instance.flow_coflow[flow]] & (x > _REL * size[flow]), x, 0.0)
    total = np.bincount(flow, weights=x, minlength=instance.num_flows)
    x = x * np.divide(size, total, out=np.zeros_like(total), where=total > 0)[flow]
    rest = np.flatnonzero(~chosen)
    tail = _madd_tail(instance, rest, max(float(due[candidates].max()), float(rel.max())))
    keep = x > 0
    per = period[keep]
    schedule = FluidSchedule.from_segments(
        instance.num_flows,
        np.concatenate([flow[keep], tail[0]]),
        np.concatenate([points[per], tail[1]]),
        np.concatenate([points[per + 1], tail[2]]),
        np.concatenate([x[keep] / length[per], tail[3]]),
    )
    return _solution(method, instance, schedule, result, start, details, options)


def _polish(
    model: LinearModel,
    result: SolveResult,
    selected: npt.NDArray[np.bool_],
    cost: npt.NDArray[np.float64],
    options: SolverOptions,
) -> npt.NDArray[np.float64]:
    """The amounts for the chosen ``U``, re-solved as an LP (earliest interval ends, per
    unit of each flow's size): a basic solution, free of the MIP's tolerance noise. Falls
    back to the MIP's amounts if the LP does not solve."""
    xb, ub = model.blocks["x"], model.blocks["U"]
    c = np.zeros(model.num_vars)
    c[xb] = cost
    lo, up = model.col_lower.copy(), model.col_upper.copy()
    lo[ub] = up[ub] = selected.astype(float)
    lp = dataclasses.replace(
        model,
        name=model.name + "-polish",
        c=c,
        col_lower=lo,
        col_upper=up,
        integrality=np.zeros(model.num_vars, dtype=bool),
        offset=0.0,
    )
    # the selection is made: this LP only cleans up the amounts, so it runs to the end,
    # without the caller's time limit, and quietly
    res = solve(lp, dataclasses.replace(options, time_limit=None, log=False))
    x = res.x if res.status is SolveStatus.OPTIMAL and res.x is not None else result.x
    assert x is not None
    return np.asarray(x[xb], dtype=float)


def _madd_tail(
    instance: Instance, coflows: npt.NDArray[np.int64], after: float
) -> tuple[npt.NDArray[Any], ...]:
    """Segments ``(flow, start, end, rate)`` sending ``coflows`` one after the other from
    ``after`` (every flow released by then), each alone at MADD rates ``d_e / ρ_j``."""
    coflows = np.sort(coflows)
    rho = instance.bottleneck[coflows]
    begin = after + np.cumsum(rho) - rho
    pos = np.full(instance.num_coflows, -1, dtype=np.int64)
    pos[coflows] = np.arange(len(coflows))
    flows = np.flatnonzero(pos[instance.flow_coflow] >= 0)
    k = pos[instance.flow_coflow[flows]]
    return (
        flows,
        begin[k],
        begin[k] + rho[k],
        instance.flow_size[flows] / rho[k],
    )
