"""Time-indexed formulations (docs/theory.md#time-indexed): the exact slotted MIP and its LP
relaxation, a lower bound on the fluid optimum.

The model
---------
Slots ``t = 1..T`` (slot ``t`` covers ``[t - 1, t)`` in slot units). Variables:

- ``z[e, t]``: the amount flow ``e`` sends in slot ``t`` (integer in the MIP);
- ``y[j, t]``, ``t = 1..T-1``: coflow ``j`` is complete by the end of slot ``t``
  (``y[j, 0] = 0`` and ``y[j, T] = 1`` are constants);
- ``S[e, t] = Σ_{s ≤ t} z[e, s]``: the cumulative amount, a continuous auxiliary that keeps the
  model's nonzeros linear in ``|E|·T`` (writing the prefix sums out would need ``|E|·T²/2``).
  It changes neither the MIP nor its LP relaxation.

Rows: ``Σ_t z[e, t] = d_e``; ``S[e, t] ≥ d_e y[j(e), t]``; per port ``v`` and slot ``t``,
``Σ_{e ∋ v} z[e, t] ≤ c_v`` (with unit capacities: every slot is a matching);
``y[j, t] ≤ y[j, t + 1]``; and ``z[e, t] = 0`` before the flow's release. The objective
``Σ_j w_j Σ_{t=0}^{T-1} (1 - y[j, t])`` is ``Σ_j w_j C_j`` when ``y`` is integral.

The MIP also has ``y[j(e), t - 1] + z[e, t] / u_e ≤ 1`` (a flow sending in slot ``t`` keeps
its coflow open at ``t - 1``; ``u_e`` is its per-slot bound), which tightens the relaxation
and is left out of the fluid bound, where it is not valid.

Dependencies ``a → b`` (coflow ``b`` sends only after ``a`` completes) are rows
``z[e, t] ≤ u_e · y[a, t - 1]`` for the flows ``e`` of ``b`` in the MIP, and the weaker
``z[e, t] ≤ u_e · y[a, t]`` in the fluid bound (a fluid ``a`` may complete inside slot ``t``).
"""

from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from coflowlab.exceptions import InvalidInstanceError, ModelTooLargeError, SolverError
from coflowlab.instance import Instance
from coflowlab.orderings import ORDERINGS, instance_order
from coflowlab.schedules import SlottedSchedule
from coflowlab.solution import Solution, SolutionKind, bound_solution, schedule_solution
from coflowlab.solvers import (
    LinearModel,
    ModelBuilder,
    SolveResult,
    SolverOptions,
    SolveStatus,
    relative_gap,
    solve,
)

from .parallel_search import check_workers

__all__ = [
    "MAX_LP_SIZE",
    "MAX_MIP_SIZE",
    "SLOTTED_ALGORITHMS",
    "TimeIndexedLPValues",
    "default_slot_length",
    "earliest_slotted_completion",
    "first_slots",
    "greedy_slotted",
    "port_slot_rows",
    "slotted_bottleneck",
    "slotted_data",
    "slotted_horizon",
    "solve_exact_slotted",
    "solve_time_indexed_lp",
    "solve_time_indexed_lp_values",
]

MAX_MIP_SIZE = 200_000
"""Largest ``|E|·T`` (flows times slots) :func:`solve_exact_slotted` and the slotted deadline
method build by default (``max_size=`` overrides it). A MIP of this size is already far
beyond what HiGHS solves to optimality in minutes; the guard stops a pseudo-polynomial
horizon from exhausting memory."""

SLOTTED_ALGORITHMS = ("mip", "bnb")
"""The values of :func:`solve_exact_slotted`'s ``algorithm=`` (``--param algorithm=...``); the
differential tests run every one of them against brute force."""

MAX_LP_SIZE = 2_000_000
"""Largest ``|E|·T`` :func:`solve_time_indexed_lp` builds by default (``max_size=``)."""

_REL = 1e-9  # relative slack on times and sizes, as coflowlab.constants.TOL


# ---------------------------------------------------------------- slotted data
def slotted_data(
    instance: Instance, method: str
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Integral flow sizes and port capacities of the slotted model.

    Returns ``(sizes, capacities)`` as integers: sizes per flow, capacities per port
    (``2m``, ingress first).

    Raises
    ------
    InvalidInstanceError
        A size or a capacity is not a whole number; the message names the flow (and its
        coflow) or the port.

    Examples
    --------
    >>> from coflowlab import Instance
    >>> slotted_data(Instance.from_matrices([[[1, 2], [3, 0]]]), "exact-slotted")[0].tolist()
    [1, 2, 3]
    >>> slotted_data(Instance.from_matrices([[[1.5]]]), "exact-slotted")
    Traceback (most recent call last):
    ...
    coflowlab.exceptions.InvalidInstanceError: exact-slotted: coflow 0, flow 0: size 1.5 is not ...
    """
    size = instance.flow_size
    bad = np.flatnonzero(np.abs(size - np.round(size)) > _REL * np.maximum(size, 1.0))
    if bad.size:
        e = int(bad[0])
        raise InvalidInstanceError(
            f"{method}: coflow {int(instance.flow_coflow[e])}, flow {e}: size {size[e]:.10g} "
            "is not a whole number (the slotted model moves whole units per slot; use a "
            "fluid method)"
        )
    cap = instance.fabric.port_capacity
    bad = np.flatnonzero(np.abs(cap - np.round(cap)) > _REL * np.maximum(cap, 1.0))
    if bad.size:
        p = int(bad[0])
        m = instance.num_ports
        side, port = ("ingress", p) if p < m else ("egress", p - m)
        raise InvalidInstanceError(
            f"{method}: {side} port {port}: capacity {cap[p]:.10g} is not a whole number "
            "(the slotted model moves whole units per slot; use a fluid method)"
        )
    return np.round(size).astype(np.int64), np.round(cap).astype(np.int64)


def first_slots(instance: Instance) -> npt.NDArray[np.int64]:
    """The first slot each flow may use in the slotted model: ``ceil(r_e) + 1``.

    Slot ``t`` covers ``[t - 1, t)``, and nothing may be sent before a release, so a flow released
    at ``r = 1`` first sends in slot 2 (the slotted release convention of
    docs/theory.md#time-models, ``z[e, t] = 0`` for ``t ≤ r``; for a fractional release, slot ``t``
    must also start at or after ``r``, hence the ceiling).

    Examples
    --------
    >>> from coflowlab.instances.examples import theory_r1
    >>> first_slots(theory_r1()).tolist()
    [1, 2, 2]
    """
    r = instance.flow_release
    return (np.ceil(r - _REL * np.maximum(r, 1.0)) + 1).astype(np.int64)


def slotted_bottleneck(
    instance: Instance, capacity: npt.NDArray[np.int64]
) -> npt.NDArray[np.int64]:
    """Slots each coflow needs alone: ``max_v ceil(L_jv / c_v)`` (König's edge colouring theorem,
    docs/theory.md#time-models, on the multigraph with port ``v`` split into ``c_v`` copies)."""
    slots = np.ceil(instance.port_load / capacity - _REL)
    return np.asarray(slots.max(axis=1), dtype=np.int64)


def earliest_slotted_completion(
    instance: Instance,
    first: npt.NDArray[np.int64],
    size: npt.NDArray[np.int64],
    capacity: npt.NDArray[np.int64],
) -> npt.NDArray[np.int64]:
    """A lower bound on each coflow's completion slot in any slotted schedule: its last
    flow needs ``ceil(d_e / min(c_in, c_out))`` slots from its first slot, and the coflow
    needs its bottleneck's slots from its earliest first slot."""
    m = instance.num_ports
    per_slot = np.minimum(capacity[instance.flow_src], capacity[instance.flow_dst + m])
    flow_done = first - 1 + -(-size // np.minimum(size, per_slot))
    n = instance.num_coflows
    lb = np.zeros(n, dtype=np.int64)
    np.maximum.at(lb, instance.flow_coflow, flow_done)
    start = np.full(n, np.iinfo(np.int64).max)
    np.minimum.at(start, instance.flow_coflow, first - 1)
    return np.maximum(lb, start + slotted_bottleneck(instance, capacity))


def slotted_horizon(instance: Instance) -> int:
    """The default horizon of :func:`solve_exact_slotted`: ``R + Σ_j ρ_j``, with ``R`` the
    last slot before every flow is released and ``ρ_j`` in slots (:func:`slotted_bottleneck`).

    It is valid: some optimal schedule ends by it. Proof, by induction on the coflows. Take
    an optimal schedule and its last coflow ``ℓ``; by induction the others have a schedule
    with no later completions ending by ``R + Σ_{j≠ℓ} ρ_j``. If the schedule ends after
    ``R + Σ_j ρ_j``, sending ``ℓ`` alone after that prefix (``ρ_ℓ`` slots) completes every
    coflow no later, within the horizon; otherwise it already ends in time.

    Examples
    --------
    >>> from coflowlab.instances.examples import theory_r1
    >>> slotted_horizon(theory_r1())
    4
    """
    _, cap = slotted_data(instance, "slotted horizon")
    first = _successor_first_slots(instance, first_slots(instance))
    return int(first.max() - 1 + slotted_bottleneck(instance, cap).sum())


def _successor_first_slots(
    instance: Instance, first: npt.NDArray[np.int64]
) -> npt.NDArray[np.int64]:
    """A coflow with a predecessor cannot send in slot 1 (the predecessor completes at 1 at
    the earliest)."""
    if not instance.dependencies.size:
        return first
    succ = np.zeros(instance.num_coflows, dtype=bool)
    succ[instance.dependencies[:, 1]] = True
    return np.where(succ[instance.flow_coflow], np.maximum(first, 2), first)


# ---------------------------------------------------------------- vectorized pieces
@dataclass(frozen=True)
class _Grid:
    """The (flow, slot) pairs that have a variable: flow ``e`` owns ``ptr[e]:ptr[e+1]``,
    slots ``first[e]..last[e]`` in order."""

    flow: npt.NDArray[np.int64]
    slot: npt.NDArray[np.int64]
    ptr: npt.NDArray[np.int64]

    @classmethod
    def of(cls, first: npt.NDArray[np.int64], last: npt.NDArray[np.int64]) -> _Grid:
        count = np.maximum(last - first + 1, 0)
        ptr = np.concatenate([[0], np.cumsum(count)]).astype(np.int64)
        flow = np.repeat(np.arange(len(first), dtype=np.int64), count)
        slot = first[flow] + np.arange(int(ptr[-1]), dtype=np.int64) - ptr[flow]
        return cls(flow, slot, ptr)

    def __len__(self) -> int:
        return len(self.flow)


def port_slot_rows(
    instance: Instance,
    flow: npt.NDArray[np.int64],
    slot: npt.NDArray[np.int64],
    column: npt.NDArray[np.int64],
    num_columns: int,
) -> tuple[sp.csr_matrix, npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Capacity rows: one per (port, slot) that some variable uses, summing the variables
    (``column``) of flows ``flow`` in slot ``slot`` through that port.

    Returns the matrix and, per row, its port (``0..2m-1``, ingress first) and slot; the
    caller sets the right-hand sides (capacity times slot length).
    """
    m = instance.num_ports
    ports = np.concatenate([instance.flow_src[flow], instance.flow_dst[flow] + m])
    slots = np.concatenate([slot, slot])
    span = int(slots.max(initial=0)) + 1
    key, row = np.unique(ports * span + slots, return_inverse=True)
    cols = np.concatenate([column, column])
    mat = sp.csr_matrix((np.ones(len(cols)), (row.ravel(), cols)), shape=(len(key), num_columns))
    return mat, key // span, key % span


def _too_large(method: str, instance: Instance, horizon: int, limit: int, hint: str) -> None:
    size = instance.num_flows * horizon
    if size > limit:
        raise ModelTooLargeError(
            f"{method}: the time-indexed model needs |E|·T = {instance.num_flows} flows × "
            f"{horizon} slots = {size} flow-slot variables, above the limit {limit} "
            f"(max_size=); {hint}"
        )


def _time_indexed_model(
    name: str,
    instance: Instance,
    *,
    horizon: int,
    first: npt.NDArray[np.int64],
    last: npt.NDArray[np.int64],
    per_slot: npt.NDArray[np.float64],
    capacity: npt.NDArray[np.float64],
    slot_length: float,
    y_zero_before: npt.NDArray[np.int64],
    y_one_from: npt.NDArray[np.int64],
    dependency_lag: int,
    integer: bool,
    completion_floor: npt.NDArray[np.float64] | None = None,
) -> tuple[LinearModel, _Grid]:
    """The time-indexed model (see the module docstring), every row family one sparse block."""
    T, n, nf = horizon, instance.num_coflows, instance.num_flows
    size = instance.flow_size
    w = instance.coflow_weight
    grid = _Grid.of(first, last)
    Z, Ty = len(grid), T - 1
    b = ModelBuilder(name)
    zb = b.add_variables("z", Z, upper=per_slot[grid.flow], integer=integer)
    y_coflow = np.repeat(np.arange(n), Ty)
    y_slot = np.tile(np.arange(1, T, dtype=np.int64), n)
    y_lo = (y_slot >= y_one_from[y_coflow]).astype(float)
    y_hi = np.maximum(np.where(y_slot < y_zero_before[y_coflow], 0.0, 1.0), y_lo)
    yb = b.add_variables(
        "y", n * Ty, cost=-slot_length * w[y_coflow], lower=y_lo, upper=y_hi, integer=integer
    )
    b.offset = slot_length * T * float(w.sum())
    z_col = zb.start + np.arange(Z, dtype=np.int64)
    is_last = np.zeros(Z, dtype=bool)
    nonempty = grid.ptr[1:] > grid.ptr[:-1]
    is_last[grid.ptr[1:][nonempty] - 1] = True
    s_pos = np.flatnonzero(~is_last)  # S[e, t] for every z but each flow's last
    sb = b.add_variables("S", len(s_pos))
    N = b.num_vars

    def y_col(coflow: npt.NDArray[np.int64], slot: npt.NDArray[np.int64]) -> npt.NDArray[Any]:
        return yb.start + coflow * Ty + slot - 1

    # Σ_t z[e, t] = d_e
    b.add_rows(
        "size",
        sp.csr_matrix((np.ones(Z), (grid.flow, z_col)), shape=(nf, N)),
        lower=size,
        upper=size,
    )
    # S[e, t] - S[e, t-1] - z[e, t] = 0 (S[e, first-1] = 0)
    k = len(s_pos)
    s_col = sb.start + np.arange(k, dtype=np.int64)
    has_prev = s_pos > grid.ptr[grid.flow[s_pos]]
    rows = np.concatenate([np.arange(k), np.arange(k), np.flatnonzero(has_prev)])
    cols = np.concatenate([s_col, z_col[s_pos], s_col[has_prev] - 1])
    vals = np.concatenate([np.ones(k), -np.ones(k), -np.ones(int(has_prev.sum()))])
    b.add_rows("link", sp.csr_matrix((vals, (rows, cols)), shape=(k, N)), lower=0.0, upper=0.0)
    # S[e, t] ≥ d_e y[j(e), t]
    e_s = grid.flow[s_pos]
    rows = np.concatenate([np.arange(k), np.arange(k)])
    cols = np.concatenate([s_col, y_col(instance.flow_coflow[e_s], grid.slot[s_pos])])
    vals = np.concatenate([np.ones(k), -size[e_s]])
    b.add_rows("complete", sp.csr_matrix((vals, (rows, cols)), shape=(k, N)), lower=0.0)
    # Σ_{e ∋ v} z[e, t] ≤ c_v (per slot)
    mat, port, _ = port_slot_rows(instance, grid.flow, grid.slot, z_col, N)
    b.add_rows("capacity", mat, upper=capacity[port])
    # y[j, t] ≤ y[j, t + 1]
    if Ty > 1:
        first_y = y_col(np.repeat(np.arange(n), Ty - 1), np.tile(np.arange(1, Ty), n))
        k = len(first_y)
        rows = np.concatenate([np.arange(k), np.arange(k)])
        vals = np.concatenate([np.ones(k), -np.ones(k)])
        mono = sp.csr_matrix((vals, (rows, np.concatenate([first_y, first_y + 1]))), (k, N))
        b.add_rows("monotone", mono, upper=0.0)
    if integer:
        # a flow that sends in slot t keeps its coflow open at t - 1: y[j, t-1] + z/u ≤ 1
        # (valid for the MIP only: a fluid flow may finish a sliver of work in slot t)
        z_coflow = instance.flow_coflow[grid.flow]
        sel = np.flatnonzero(grid.slot - 1 >= np.maximum(y_zero_before[z_coflow], 1))
        k = len(sel)
        rows = np.concatenate([np.arange(k), np.arange(k)])
        cols = np.concatenate([z_col[sel], y_col(z_coflow[sel], grid.slot[sel] - 1)])
        vals = np.concatenate([1.0 / per_slot[grid.flow[sel]], np.ones(k)])
        b.add_rows("open", sp.csr_matrix((vals, (rows, cols)), shape=(k, N)), upper=1.0)
    if completion_floor is not None and Ty > 0:
        # δ Σ_{t=0}^{T-1} (1 - y[j, t]) ≥ floor_j, i.e. δ Σ_{t ≥ 1} y[j, t] ≤ δT - floor_j
        cols = y_col(y_coflow, y_slot)
        floor_rows = sp.csr_matrix((np.full(n * Ty, slot_length), (y_coflow, cols)), (n, N))
        b.add_rows("floor", floor_rows, upper=slot_length * T - completion_floor)
    if instance.dependencies.size:
        b.add_rows(
            "dependency",
            _dependency_rows(instance, grid, z_col, per_slot, y_col, T, dependency_lag, N),
            upper=0.0,
        )
    return b.build(), grid


def _dependency_rows(
    instance: Instance,
    grid: _Grid,
    z_col: npt.NDArray[np.int64],
    per_slot: npt.NDArray[np.float64],
    y_col: Any,
    horizon: int,
    lag: int,
    num_columns: int,
) -> sp.csr_matrix:
    """``z[e, t] ≤ u_e · y[a, t - lag]`` for every dependency ``a → j(e)``; for
    ``t - lag ≥ T`` the predecessor is complete (``y = 1``) and no row is needed."""
    deps = instance.dependencies[np.argsort(instance.dependencies[:, 1], kind="stable")]
    n = instance.num_coflows
    count = np.bincount(deps[:, 1], minlength=n)
    start = np.concatenate([[0], np.cumsum(count)])[:-1]
    z_coflow = instance.flow_coflow[grid.flow]
    reps = count[z_coflow]
    z_idx = np.repeat(np.arange(len(grid)), reps)
    offs = np.arange(int(reps.sum())) - np.repeat(np.cumsum(reps) - reps, reps)
    pred = deps[start[z_coflow[z_idx]] + offs, 0]
    t = grid.slot[z_idx] - lag
    keep = t < horizon  # t ≥ 1 holds: successors start at slot 2 when lag = 1
    z_idx, pred, t = z_idx[keep], pred[keep], t[keep]
    k = len(z_idx)
    rows = np.concatenate([np.arange(k), np.arange(k)])
    cols = np.concatenate([z_col[z_idx], y_col(pred, t)])
    vals = np.concatenate([np.ones(k), -per_slot[grid.flow[z_idx]]])
    return sp.csr_matrix((vals, (rows, cols)), shape=(k, num_columns))


def _model_details(model: LinearModel, **extra: Any) -> dict[str, Any]:
    return {
        "variables": model.num_vars,
        "integer_variables": model.num_integer,
        "rows": model.num_rows,
        "nonzeros": int(model.A.nnz),
        **extra,
    }


# ---------------------------------------------------------------- exact slotted MIP
def greedy_slotted(
    instance: Instance,
    flows: npt.NDArray[np.int64],
    size: npt.NDArray[np.int64],
    capacity: npt.NDArray[np.int64],
    first: npt.NDArray[np.int64],
    after: int = 0,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """A list schedule of ``flows`` in the slotted model, from slot ``after + 1`` on: in each
    slot, the released unfinished flows, in the order given, each send what both of their
    ports have left (whole units). Dependencies are ignored.

    Returns the records ``(slot, flow, amount)``. Every slot in which a flow is released
    and unfinished moves at least one unit, so the loop ends; runs of identical slots (no
    flow finishes, none is released) are computed once.

    Examples
    --------
    >>> from coflowlab.instances.examples import theory_r1
    >>> inst = theory_r1()
    >>> size, cap = slotted_data(inst, "example")
    >>> slot, flow, amount = greedy_slotted(inst, np.arange(3), size, cap, first_slots(inst))
    >>> slot.tolist(), flow.tolist()
    ([1, 2, 2, 3], [0, 0, 2, 1])
    """
    m = instance.num_ports
    rem = size[flows].tolist()
    src = instance.flow_src[flows].tolist()
    dst = (instance.flow_dst[flows] + m).tolist()
    start = first[flows].tolist()
    idx = flows.tolist()
    parts: list[npt.NDArray[np.int64]] = []
    slot = after + 1  # the slot being filled
    active = [i for i in range(len(idx)) if rem[i] > 0]
    while active:
        left = capacity.tolist()
        sending: list[tuple[int, int]] = []
        for i in active:
            a = min(rem[i], left[src[i]], left[dst[i]]) if start[i] <= slot else 0
            if a > 0:
                sending.append((i, a))
                left[src[i]] -= a
                left[dst[i]] -= a
        # the same slot repeats until a flow finishes or another is released
        bounds = [rem[i] // a for i, a in sending] + [
            start[i] - slot for i in active if start[i] > slot
        ]
        repeat = min(bounds)
        for i, a in sending:
            rem[i] -= a * repeat
            span = np.arange(slot, slot + repeat, dtype=np.int64)
            parts.append(np.stack([span, np.full(repeat, idx[i]), np.full(repeat, a)], axis=1))
        slot += repeat
        active = [i for i in active if rem[i] > 0]
    rec = np.concatenate(parts) if parts else np.zeros((0, 3), dtype=np.int64)
    return rec[:, 0], rec[:, 1], rec[:, 2]


def _completion_cutoffs(
    instance: Instance,
    first: npt.NDArray[np.int64],
    size: npt.NDArray[np.int64],
    capacity: npt.NDArray[np.int64],
    lb: npt.NDArray[np.int64],
    horizon: int,
) -> tuple[npt.NDArray[np.int64], float]:
    """Per-coflow completion cutoffs ``B_j`` valid for every optimal schedule.

    ``UB`` is the cost of a greedy list schedule (:func:`greedy_slotted`, coflows in
    Smith's order of ``ρ_j / w_j``). Any optimal schedule has
    ``w_j C_j ≤ UB - Σ_{i≠j} w_i LB_i``, so a coflow of positive weight completes by ``B_j``.
    The schedule of :func:`slotted_horizon`'s proof has no later completions than the
    optimal one it comes from, so it is optimal and meets every cutoff too. Zero-weight
    coflows (and instances with dependencies, where the list schedule would not be
    feasible) get no cutoff.
    """
    n = instance.num_coflows
    w = instance.coflow_weight
    if instance.dependencies.size or not (w > 0).any():
        return np.full(n, horizon, dtype=np.int64), math.inf
    rho = slotted_bottleneck(instance, capacity)
    ratio = np.divide(rho, w, out=np.full(n, np.inf), where=w > 0)
    rank = np.empty(n, dtype=np.int64)
    rank[np.lexsort((np.arange(n), ratio))] = np.arange(n)
    flows = np.lexsort((np.arange(instance.num_flows), rank[instance.flow_coflow]))
    slot, flow, _ = greedy_slotted(instance, flows, size, capacity, first)
    done = np.zeros(n, dtype=np.int64)
    np.maximum.at(done, instance.flow_coflow[flow], slot)
    ub = float(np.dot(w, done))
    others = float(np.dot(w, lb)) - w * lb
    with np.errstate(divide="ignore", invalid="ignore"):
        raw = (ub - others) / w
    cut = np.where(w > 0, np.floor(raw + _REL * np.maximum(np.abs(raw), 1.0)), horizon)
    return np.minimum(np.nan_to_num(cut, posinf=horizon), horizon).astype(np.int64), ub


def _list_start(
    instance: Instance,
    model: LinearModel,
    grid: _Grid,
    first: npt.NDArray[np.int64],
    last: npt.NDArray[np.int64],
    size: npt.NDArray[np.int64],
    capacity: npt.NDArray[np.int64],
) -> tuple[npt.NDArray[np.float64] | None, float]:
    """A MIP start, so that a time limit always leaves an incumbent: the cheapest slotted
    list schedule (:func:`greedy_slotted`) over the coflow orders of
    :data:`coflowlab.orderings.ORDERINGS`, as values of the model's variables: ``z`` the
    amounts, ``y[j, t] = 1`` from coflow ``j``'s completion slot on, ``S`` the running sums
    of ``z``. Returns ``(start, cost)``, or ``(None, inf)`` when no list schedule fits the
    model (a completion past a cutoff or the horizon). With dependencies, which list
    schedules ignore, the start is the coflows served one by one in a topological order
    (:func:`~coflowlab.formulations.exact_slotted_bnb.one_by_one`), which ends by the
    horizon ``R + Σ ρ_j``."""
    n, nf = instance.num_coflows, instance.num_flows
    best: tuple[float, Any, Any, Any, Any] | None = None
    if instance.dependencies.size:
        from .exact_slotted_bnb import one_by_one

        sched, finish = one_by_one(instance)
        slot, flow, amount = sched.slot, sched.flow, sched.amount
        if np.all(slot <= last[flow]):
            done = finish.astype(np.int64)
            best = (float(np.dot(instance.coflow_weight, done)), slot, flow, amount, done)
    seen: set[tuple[int, ...]] = set()
    for name in ORDERINGS if not instance.dependencies.size else ():
        order = instance_order(instance, name)
        if tuple(order.tolist()) in seen:
            continue
        seen.add(tuple(order.tolist()))
        rank = np.empty(n, dtype=np.int64)
        rank[order] = np.arange(n)
        flows = np.lexsort((np.arange(nf), rank[instance.flow_coflow]))
        slot, flow, amount = greedy_slotted(instance, flows, size, capacity, first)
        done = np.zeros(n, dtype=np.int64)
        np.maximum.at(done, instance.flow_coflow[flow], slot)
        cost = float(np.dot(instance.coflow_weight, done))
        if np.all(slot <= last[flow]) and (best is None or cost < best[0]):
            best = (cost, slot, flow, amount, done)
    if best is None:
        return None, math.inf
    cost, slot, flow, amount, done = best
    z = np.zeros(len(grid))
    z[grid.ptr[flow] + slot - first[flow]] = amount
    running = np.cumsum(z)
    running -= np.repeat(np.concatenate([[0.0], running])[grid.ptr[:-1]], np.diff(grid.ptr))
    is_last = np.zeros(len(grid), dtype=bool)
    nonempty = grid.ptr[1:] > grid.ptr[:-1]
    is_last[grid.ptr[1:][nonempty] - 1] = True
    yb = model.blocks["y"]
    T = (yb.stop - yb.start) // n + 1
    x = np.zeros(model.num_vars)
    x[model.blocks["z"]] = z
    x[yb] = (np.arange(1, T)[None, :] >= done[:, None]).ravel()
    x[model.blocks["S"]] = running[~is_last]
    return x, cost


def solve_exact_slotted(
    instance: Instance,
    options: SolverOptions | None = None,
    *,
    algorithm: str = "mip",
    horizon: int | None = None,
    max_size: int = MAX_MIP_SIZE,
    workers: int = 1,
) -> Solution:
    """Slotted OPT of ``Σ_j w_j C_j`` by the time-indexed MIP (docs/theory.md#time-indexed).

    ``z[e, t]`` is an integer in ``[0, min(d_e, c_in, c_out)]``: with unit capacities it is the
    binary of docs/theory.md#time-indexed (each slot a matching); integral capacities ``c`` let a
    port move ``c`` whole units per slot. Releases follow docs/theory.md#time-models: a flow
    released at ``r`` first sends in slot ``ceil(r) + 1``. The solution is decoded into a
    :class:`SlottedSchedule` and verified; its cost comes from the verifier.

    Parameters
    ----------
    instance
        Integral sizes and capacities (release times may be fractional). Deadlines are
        ignored, as in every ``Σ w C`` method (``deadline-slotted`` is the slotted method
        that reads them): a coflow that cannot meet its deadline is scheduled anyway.
    options
        Solver settings, see :class:`~coflowlab.solvers.SolverOptions` (no time limit by
        default).
    algorithm
        ``"mip"`` (default): this time-indexed MIP. ``"bnb"``: branch and bound over event
        sequences with a small order MIP per leaf
        (:func:`~coflowlab.formulations.exact_slotted_bnb.solve_exact_slotted_bnb`; same
        optimum, far larger instances; ``horizon`` and ``max_size`` do not apply).
        ``coflowlab solve --method exact-slotted --param algorithm=bnb``.
    horizon
        Number of slots ``T``. Default :func:`slotted_horizon` (``R + Σ ρ_j``, proven
        valid). A shorter horizon restricts the schedules searched: the result is then not
        proven optimal (``bound`` is ``nan``, ``details["horizon_proven"]`` is false) and may
        be infeasible. A longer one is valid and only larger.
    max_size
        Largest ``|E|·T`` allowed (:data:`MAX_MIP_SIZE`).
    workers
        ``algorithm="bnb"`` only: processes of its branch and bound (default 1;
        ``--param workers=2``), as for ``exact-fluid``.

    Returns
    -------
    Solution
        Kind ``exact``; ``order`` is the coflows by completion time (ties by index);
        ``details`` has the horizon and model size. Proven completion cutoffs (see
        ``_completion_cutoffs``) shrink the model when the default horizon is used. The
        solver starts from the best list schedule of a few coflow orders (``_list_start``;
        its cost is ``details["start_objective"]``), so a time limit returns a schedule.

    Raises
    ------
    InvalidInstanceError
        A size or capacity is not a whole number (the flow or port is named).
    ModelTooLargeError
        ``|E|·T`` exceeds ``max_size``.
    ValueError
        An unknown ``algorithm``, or ``workers`` not a whole number of at least 1 or above
        1 with ``algorithm="mip"``.

    Notes
    -----
    When the solver stops with ``y`` below the true completion indicators (a time-limit
    incumbent, or a loose ``mip_gap``), the decoded schedule is cheaper than the solver's
    objective; the verified cost is reported and the solver's bound kept.

    Examples
    --------
    instance R1 (docs/theory.md#instances): preemption is needed, slotted OPT = 9 with ``C = (3,
    2)``.

    >>> from coflowlab.instances.examples import theory_r1
    >>> sol = solve_exact_slotted(theory_r1())
    >>> sol.status.value, round(sol.objective, 6), sol.completion_times.round(6).tolist()
    ('optimal', 9.0, [3.0, 2.0])
    """
    if algorithm not in SLOTTED_ALGORITHMS:
        raise ValueError(
            f"exact-slotted: algorithm must be one of {SLOTTED_ALGORITHMS}, got {algorithm!r}"
        )
    check_workers(workers, algorithm)
    if algorithm == "bnb":
        from .exact_slotted_bnb import solve_exact_slotted_bnb

        return solve_exact_slotted_bnb(instance, options, workers=workers)
    start = time.perf_counter()
    method = "exact-slotted"
    size, cap = slotted_data(instance, method)
    first = _successor_first_slots(instance, first_slots(instance))
    rho = slotted_bottleneck(instance, cap)
    valid = int(first.max() - 1 + rho.sum())
    if horizon is None:
        T = valid
    else:
        if isinstance(horizon, bool) or int(horizon) != horizon or horizon < 1:
            raise ValueError(f"{method}: horizon must be a positive integer, got {horizon!r}")
        T = int(horizon)
    proven = valid <= T
    _too_large(
        method,
        instance,
        T,
        max_size,
        "use exact-fluid (order enumeration) for a bound-free optimum of the fluid model, a "
        "heuristic, or pass max_size= if memory allows",
    )
    m = instance.num_ports
    per_slot = np.minimum(size, np.minimum(cap[instance.flow_src], cap[instance.flow_dst + m]))
    lb = earliest_slotted_completion(instance, first, size, cap)
    if proven:
        cutoff, ub = _completion_cutoffs(instance, first, size, cap, lb, T)
    else:
        cutoff, ub = np.full(instance.num_coflows, T, dtype=np.int64), math.inf
    model, grid = _time_indexed_model(
        method,
        instance,
        horizon=T,
        first=first,
        last=np.minimum(cutoff[instance.flow_coflow], T),
        per_slot=per_slot.astype(float),
        capacity=cap.astype(float),
        slot_length=1.0,
        y_zero_before=lb,
        y_one_from=cutoff,
        dependency_lag=1,
        integer=True,
    )
    last = np.minimum(cutoff[instance.flow_coflow], T)
    start_x, start_cost = _list_start(instance, model, grid, first, last, size, cap)
    options = options or SolverOptions()
    result = solve(model, options, start=start_x)
    details = _model_details(
        model,
        horizon=T,
        valid_horizon=valid,
        horizon_proven=proven,
        upper_bound=None if math.isinf(ub) else ub,
        start_objective=None if start_x is None else start_cost,
    )
    schedule, order = None, None
    if result.has_solution and result.x is not None:
        amount = np.rint(result.x[model.blocks["z"]])
        sent = amount > 0
        schedule = SlottedSchedule(
            instance.num_flows, grid.slot[sent], grid.flow[sent], amount[sent]
        )
        done = np.zeros(instance.num_coflows)
        np.maximum.at(done, instance.flow_coflow[grid.flow[sent]], grid.slot[sent])
        order = tuple(int(k) for k in np.lexsort((np.arange(len(done)), done)))
        result = _claim_decoded(result, float(np.dot(instance.coflow_weight, done)))
    if not proven:
        # the MIP's optimum is only the best among schedules ending by slot T: no bound on
        # OPT, so no optimality claim (a verified schedule, status "feasible")
        status = result.status
        if status is SolveStatus.OPTIMAL:
            status = SolveStatus.FEASIBLE
        result = dataclasses.replace(
            result,
            status=status,
            message=f"{result.message}; horizon {T} < the proven horizon {valid}: optimal "
            f"only among schedules ending by slot {T}",
        )
    return schedule_solution(
        method,
        SolutionKind.EXACT,
        instance,
        schedule,
        result,
        runtime=time.perf_counter() - start,
        order=order,
        bound=None if proven else math.nan,
        details=details,
        options=options,
    )


def _claim_decoded(result: SolveResult, decoded: float) -> SolveResult:
    """The solver's objective counts ``y``; a lazy ``y`` (0 although the coflow is done)
    overstates it. The decoded schedule's cost is then the honest claim; a claim *below*
    the decoded cost is left for :func:`schedule_solution` to reject (a decoding bug)."""
    if result.objective > decoded + 1e-6 * max(1.0, abs(decoded)):
        return dataclasses.replace(
            result, objective=decoded, gap=relative_gap(decoded, result.bound)
        )
    return result


# ---------------------------------------------------------------- fluid time-indexed LP
def solve_time_indexed_lp(
    instance: Instance,
    options: SolverOptions | None = None,
    *,
    slot_length: float | None = None,
    strengthen: bool = False,
    max_size: int = MAX_LP_SIZE,
) -> Solution:
    """The LP relaxation of the time-indexed MIP (docs/theory.md#time-indexed): a lower bound on
    the *fluid* optimum (hence on the slotted one), for any sizes and capacities.

    Slots have length ``δ`` (``slot_length``); ``z[e, t] ∈ [0, min(d_e, κ_e δ)]`` with
    ``κ_e = min(c_in, c_out)``, ports move ``c_v δ`` per slot, ``y ∈ [0, 1]``, and the
    objective is the MIP's, ``Σ_j w_j δ Σ_{t=0}^{T-1} (1 - y[j, t])``. A flow may use slot
    ``t`` when the slot ends after its release (``tδ > r_e``).

    Why it is a valid bound
    -----------------------
    Take a fluid optimal schedule ending by ``Tδ`` (``T = ceil((max_e r_e + Σ_j ρ_j)/δ)``,
    valid by the argument of :func:`slotted_horizon`, with fluid ρ). Let ``z[e, t]`` be the
    bytes sent in slot ``t`` and ``y[j, t] = min_{e ∈ j} F_e(tδ)/d_e`` (``F_e`` the bytes sent
    by then): every row holds. At ``tδ`` flow ``e`` still needs ``(d_e - F_e(tδ))/κ_e`` time,
    so ``1 - y[j, t] ≤ (C_j - tδ) κ_e / d_e``, which is at most ``(C_j - tδ)/δ`` **provided
    every flow needs at least one slot at full rate, d_e ≥ κ_e δ**. Then
    ``δ Σ_t (1 - y[j, t]) ≤ Σ_{t < C_j/δ} min(δ, C_j - tδ) = C_j``. The default
    ``δ = min(1, min_e d_e / κ_e)`` satisfies the proviso: unit slots for integral data on
    unit ports (the LP relaxation of :func:`solve_exact_slotted` itself), shorter ones when
    some flow is smaller than one unit. Without the proviso the bound fails: a coflow of
    size 1/2 alone has fluid OPT 1/2 but ``δ = 1`` would give 1.

    Parameters
    ----------
    instance
        Any instance. Dependencies are kept (the weak fluid form, see the module docstring);
        deadlines are ignored (a bound on ``Σ w C`` like ``exact-fluid``'s optimum).
    options
        Solver settings, see :class:`~coflowlab.solvers.SolverOptions` (``mip_gap`` does
        not apply: this is an LP).
    slot_length
        ``δ``; at most ``min_e d_e / κ_e`` (shorter is valid, tighter and larger). Default
        ``min(1, min_e d_e / κ_e)``.
    strengthen
        Also require each coflow's LP completion ``δ Σ_t (1 - y[j, t])`` to be at least
        ``max(r_j + ρ_j, max_{e ∈ j} r_e + d_e/κ_e)`` (default false: the plain relaxation).
        Still valid: lowering ``y`` towards the step at ``C_j`` keeps every row, so some LP
        solution has exactly ``C_j`` as its completion, and ``C_j`` is at least that.
    max_size
        Largest ``|E|·T`` allowed (:data:`MAX_LP_SIZE`).

    Raises
    ------
    InvalidInstanceError
        ``slot_length`` is longer than the smallest flow needs (the flow is named).
    ModelTooLargeError
        ``|E|·T`` exceeds ``max_size``.

    Examples
    --------
    instance I1 (docs/theory.md#instances), one coflow with ρ = 4: its egress port 0 carries 4
    units, so by the end of slot ``t`` at most ``t/4`` of the coflow can be complete, and the bound
    is ``1 + 3/4 + 1/2 + 1/4 = 2.5`` (OPT is 4).

    >>> from coflowlab.instances.examples import theory_i1
    >>> round(solve_time_indexed_lp(theory_i1()).objective, 9)
    2.5
    """
    start = time.perf_counter()
    return _fluid_time_indexed_lp(
        instance,
        options or SolverOptions(),
        start=start,
        slot_length=slot_length,
        strengthen=strengthen,
        max_size=max_size,
    ).solution


@dataclass(frozen=True, eq=False)
class TimeIndexedLPValues:
    """The primal values of the fluid time-indexed LP (:func:`solve_time_indexed_lp_values`).

    Slot ``t = 1..T`` covers ``[(t - 1)δ, tδ)``.

    Attributes
    ----------
    solution
        What :func:`solve_time_indexed_lp` returns for the same arguments (value, status,
        proven bound, model size in ``details``).
    slot_length
        ``δ``.
    horizon
        ``T``, the number of slots.
    flow, slot
        ``(K,)`` the (flow, slot) pairs that have a variable ``z[e, t]`` (flow ``e`` may use
        slot ``t`` when ``tδ > r_e``), grouped by flow, slots increasing.
    amount
        ``(K,)`` the solver's ``z[e, t]``: what flow ``e`` sends in slot ``t`` (solver
        precision: about 1e-9 feasibility, so slightly negative or over-full values occur).
    done
        ``(n, T + 1)`` the solver's ``y[j, t]`` with the constants ``y[j, 0] = 0`` and
        ``y[j, T] = 1``; the LP value is ``Σ_j w_j δ Σ_{t<T} (1 - y[j, t])``.
    """

    solution: Solution
    slot_length: float
    horizon: int
    flow: npt.NDArray[np.int64]
    slot: npt.NDArray[np.int64]
    amount: npt.NDArray[np.float64]
    done: npt.NDArray[np.float64]


def solve_time_indexed_lp_values(
    instance: Instance,
    options: SolverOptions | None = None,
    *,
    slot_length: float | None = None,
    strengthen: bool = False,
    max_size: int = MAX_LP_SIZE,
) -> TimeIndexedLPValues:
    """Solves the LP of :func:`solve_time_indexed_lp` (the same model, built by the same code)
    and returns its primal values with the bound, for rounding algorithms (α-point,
    :mod:`coflowlab.approximations.alpha_point`).

    Parameters are those of :func:`solve_time_indexed_lp`.

    Raises
    ------
    SolverError
        The solve returned no values (``solution.status`` says why, e.g. a time limit).
    InvalidInstanceError, ModelTooLargeError
        As :func:`solve_time_indexed_lp`.

    Examples
    --------
    One flow of size 2 alone: unit slots, it sends one unit in each of slots 1 and 2, and is
    half done at the end of slot 1 (bound ``1 + 1/2``).

    >>> from coflowlab import Instance
    >>> v = solve_time_indexed_lp_values(Instance.from_matrices([[[2]]]))
    >>> v.slot_length, v.amount.round(9).tolist(), v.done.round(9).tolist(), v.solution.objective
    (1.0, [1.0, 1.0], [[0.0, 0.5, 1.0]], 1.5)
    """
    fit = _fluid_time_indexed_lp(
        instance,
        options or SolverOptions(),
        start=time.perf_counter(),
        slot_length=slot_length,
        strengthen=strengthen,
        max_size=max_size,
    )
    x = fit.result.x
    if not fit.result.has_solution or x is None:
        raise SolverError(
            f"time-indexed-lp: the solve ended with status {fit.result.status.value} "
            f"({fit.result.message or 'no message'}) and returned no values"
        )
    n, T = instance.num_coflows, fit.horizon
    done = np.zeros((n, T + 1))
    done[:, T] = 1.0
    done[:, 1:T] = x[fit.model.blocks["y"]].reshape(n, T - 1)
    return TimeIndexedLPValues(
        fit.solution,
        fit.slot_length,
        T,
        fit.grid.flow,
        fit.grid.slot,
        np.array(x[fit.model.blocks["z"]], dtype=float),
        done,
    )


@dataclass(frozen=True, eq=False)
class _FluidFit:
    solution: Solution
    result: SolveResult
    model: LinearModel
    grid: _Grid
    horizon: int
    slot_length: float


def _fluid_time_indexed_lp(
    instance: Instance,
    options: SolverOptions,
    *,
    start: float,
    slot_length: float | None,
    strengthen: bool,
    max_size: int,
) -> _FluidFit:
    """Builds and solves the fluid LP of :func:`solve_time_indexed_lp` (one implementation for
    the bound and for its values)."""
    method = "time-indexed-lp"
    m = instance.num_ports
    cap = instance.fabric.port_capacity
    kappa = np.minimum(cap[instance.flow_src], cap[instance.flow_dst + m])
    size = instance.flow_size
    need = size / kappa
    longest = float(need.min())
    if slot_length is None:
        delta = default_slot_length(instance)
    else:
        delta = float(slot_length)
        if not (delta > 0 and math.isfinite(delta)):
            raise ValueError(f"{method}: slot_length must be positive, got {slot_length!r}")
        if delta > longest * (1 + _REL):
            e = int(np.argmin(need))
            raise InvalidInstanceError(
                f"{method}: coflow {int(instance.flow_coflow[e])}, flow {e} needs only "
                f"{longest:.10g} time at full rate, less than slot_length={delta:.10g}: the "
                f"bound would not be valid; use slot_length <= {longest:.10g}"
            )
    span = float(instance.flow_release.max() + instance.bottleneck.sum())
    T = max(1, math.ceil(span / delta - _REL))
    _too_large(
        method,
        instance,
        T,
        max_size,
        f"pass a longer slot_length= (up to {longest:.6g}) for a coarser, weaker bound, use "
        "lp-ov or interval-lp, or pass max_size= if memory allows",
    )
    rel = instance.flow_release / delta
    whole = np.abs(rel - np.round(rel)) <= _REL * np.maximum(rel, 1.0)
    first = (np.where(whole, np.round(rel), np.floor(rel)) + 1).astype(np.int64)
    y_zero = np.zeros(instance.num_coflows, dtype=np.int64)
    np.maximum.at(y_zero, instance.flow_coflow, first)
    model, grid = _time_indexed_model(
        method,
        instance,
        horizon=T,
        first=first,
        last=np.full(instance.num_flows, T, dtype=np.int64),
        per_slot=np.minimum(size, kappa * delta),
        capacity=cap * delta,
        slot_length=delta,
        y_zero_before=y_zero,
        y_one_from=np.full(instance.num_coflows, T, dtype=np.int64),
        dependency_lag=0,
        integer=False,
        completion_floor=_fluid_floor(instance, kappa) if strengthen else None,
    )
    result = solve(model, options)
    solution = bound_solution(
        method,
        SolutionKind.RELAXATION,
        instance,
        result.objective,
        result,
        runtime=time.perf_counter() - start,
        details=_model_details(model, horizon=T, slot_length=delta, strengthen=strengthen),
    )
    return _FluidFit(solution, result, model, grid, T, delta)


def default_slot_length(instance: Instance) -> float:
    """The default slot length ``δ = min(1, min_e d_e / κ_e)`` of :func:`solve_time_indexed_lp`
    (``κ_e`` the smaller capacity of the flow's two ports): the longest slot with which every
    flow needs at least one slot at full rate, capped at one unit.

    Examples
    --------
    >>> from coflowlab import Instance
    >>> default_slot_length(Instance.from_matrices([[[3, 0], [0, 0.5]]]))
    0.5
    """
    m = instance.num_ports
    cap = instance.fabric.port_capacity
    kappa = np.minimum(cap[instance.flow_src], cap[instance.flow_dst + m])
    return min(1.0, float((instance.flow_size / kappa).min()))


def _fluid_floor(instance: Instance, kappa: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Each coflow's earliest fluid completion: ``r_j + ρ_j``, and each flow's
    ``r_e + d_e / κ_e``."""
    floor = np.array(instance.coflow_release + instance.bottleneck, dtype=float)
    np.maximum.at(floor, instance.flow_coflow, instance.flow_release + instance.flow_size / kappa)
    return floor
