"""The LP of a fixed completion order (docs/theory.md#exact), with release dates.

For a completion order ``σ`` the coflows complete at breakpoints ``t_1 ≤ … ≤ t_n``
(``t_k`` is the completion of ``σ(k)``); in each interval between consecutive breakpoints a
flow sends an amount ``x_{e,k} ≥ 0``; the amounts of a flow add up to its size over the
intervals up to its coflow's breakpoint; on every port the amounts of an interval fit in
``capacity × length``; and ``Σ_k w_{σ(k)} t_k`` is minimized. Sending ``x_{e,k}`` at the
constant rate ``x_{e,k} / length`` inside the interval is then feasible (the port sums are
what a fluid schedule must respect), so the LP's value is the best schedule that completes
the coflows in the order ``σ``, and the minimum over all orders is the fluid optimum.

Release dates
-------------
Releases are fixed times, so they are merged into the interval structure as *release
events*: the distinct positive flow release times ``R_1 < … < R_q`` become breakpoints whose
time is fixed, interleaved with the completion breakpoints. The interleaving is given by
*slots*: ``slots[k]`` is how many release events precede the ``k``-th completion (a
non-decreasing sequence). A flow released at ``R_i`` may send only in the intervals after the
event ``R_i`` and up to its coflow's completion event.

Why this is exact: take any schedule, its completion order ``σ`` and the slots its
completion times imply. Between two consecutive events (completions and releases, in time
order) the set of flows allowed to send is fixed, so replacing each flow's rates by their
average over the interval keeps every port within capacity, sends the same amounts, sends
nothing before a release, and completes every coflow by its breakpoint. So the schedule is
a feasible point of the LP of ``(σ, slots)`` with the same ``Σ w C``; conversely every LP
point is a schedule (constant rates per interval). Hence ``min`` over orders and slots of the
LP value is the fluid optimum. For one order, the best value is the minimum over its
interleavings (:func:`interleavings`), which is why the branch and bound of
:mod:`coflowlab.formulations.exact_fluid` branches on release events too. Simply requiring
``t_k ≥ r`` and allowing a flow only in intervals that *start* after its release is not exact:
a coflow released in the middle of another's interval could then never complete first.

Deadlines play no part: the LP minimizes ``Σ w C`` (only the deadline methods of
:mod:`coflowlab.formulations.deadlines` read deadlines).

Groups
------
The same LP with a *set* of coflows per completion event (:func:`build_group_lp`) is what the
branch and bound uses as a bound: all the not yet ordered coflows form one group that must
complete by one breakpoint of weight 0. Dependencies (coflow ``b`` sends only after ``a``
completes) become "``b``'s flows only after ``a``'s event"; inside one group they are
dropped, a relaxation.

Flows of one event with the same ports and the same first allowed interval are merged into
one variable (their sum): an exact reduction (split the merged amounts in proportion to the
sizes), which makes the group LPs small.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from coflowlab.exceptions import SolverError
from coflowlab.instance import Instance
from coflowlab.schedules import FluidSchedule
from coflowlab.solvers import LinearModel, SolveResult, SolverOptions, SolveStatus, solve

__all__ = [
    "OrderLP",
    "OrderLPSolution",
    "basis_keys",
    "build_group_lp",
    "build_order_lp",
    "coflow_release_slot",
    "decode_schedule",
    "fluid_schedule_from_intervals",
    "interleavings",
    "release_values",
    "solve_order_lp",
]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

_DROP = 1e-12
"""Amounts below this fraction of their flow's size are solver noise and dropped."""


def release_values(instance: Instance) -> FloatArray:
    """The distinct positive flow release times ``R_1 < … < R_q`` (the release events).

    Examples
    --------
    >>> from coflowlab.instances.examples import theory_r1
    >>> release_values(theory_r1()).tolist()
    [1.0]
    """
    rel = np.unique(instance.flow_release)
    return rel[rel > 0]


def _flow_release_slot(instance: Instance, values: FloatArray) -> IntArray:
    """Per flow: the number of release events at or before its release (0: released at 0)."""
    return np.searchsorted(values, instance.flow_release, side="right").astype(np.int64)


def coflow_release_slot(instance: Instance) -> IntArray:
    """Per coflow: the fewest release events that must precede its completion (the slot of
    its latest flow release).

    Examples
    --------
    >>> from coflowlab.instances.examples import theory_r1
    >>> coflow_release_slot(theory_r1()).tolist()
    [0, 1]
    """
    slot = _flow_release_slot(instance, release_values(instance))
    out = np.zeros(instance.num_coflows, dtype=np.int64)
    np.maximum.at(out, instance.flow_coflow, slot)
    return out


def interleavings(instance: Instance, order: Sequence[int]) -> Iterator[tuple[int, ...]]:
    """Every interleaving of the release events with the completions of ``order``: the
    non-decreasing slot tuples in which each coflow completes after its releases.

    Examples
    --------
    >>> from coflowlab.instances.examples import theory_r1
    >>> list(interleavings(theory_r1(), [0, 1])), list(interleavings(theory_r1(), [1, 0]))
    ([(0, 1), (1, 1)], [(1, 1)])
    """
    q = len(release_values(instance))
    low = coflow_release_slot(instance)[np.asarray(order, dtype=np.int64)]
    low = np.maximum.accumulate(low) if len(low) else low
    for combo in itertools.combinations_with_replacement(range(q + 1), len(low)):
        if all(c >= lo for c, lo in zip(combo, low.tolist(), strict=True)):
            yield tuple(combo)


@dataclass(frozen=True, eq=False)
class OrderLP:
    """The LP of one event sequence, and how to read its solution back.

    Attributes
    ----------
    model
        The LP (``None`` when the sequence is infeasible on its face: some flow would have
        no interval to send in; ``reason`` says which).
    groups
        The coflows completing at each completion event, in order.
    slots
        Release events before each completion event.
    event_release
        ``(E,)`` per event: the index ``i`` (1-based) of the release it is, 0 for a
        completion event.
    completion_event
        Per group: the index of its event.
    agg_src, agg_dst, agg_size
        The merged flows (see the module notes).
    flow_agg
        Per flow of the instance: its merged flow.
    x_agg, x_interval
        Per amount variable: its merged flow and its interval (interval ``p`` ends at event
        ``p``).
    cap_cell
        Per capacity row: its port (``0..m-1`` ingress, ``m..2m-1`` egress) times the number
        of events, plus its interval.
    reason
        Why the sequence is infeasible, or ``""``.
    """

    model: LinearModel | None
    groups: tuple[tuple[int, ...], ...]
    slots: tuple[int, ...]
    event_release: IntArray
    completion_event: IntArray
    agg_src: IntArray
    agg_dst: IntArray
    agg_size: FloatArray
    flow_agg: IntArray
    x_agg: IntArray
    x_interval: IntArray
    cap_cell: IntArray = field(default_factory=lambda: np.zeros(0, np.int64))
    reason: str = ""

    @property
    def num_events(self) -> int:
        """Number of events (completions plus the release events before the last one)."""
        return len(self.event_release)


def build_group_lp(
    instance: Instance,
    groups: Sequence[Sequence[int]],
    slots: Sequence[int] | None = None,
    weights: Sequence[float] | None = None,
) -> OrderLP:
    """The order LP with a set of coflows per completion event.

    Parameters
    ----------
    instance
        The instance; every coflow must be in exactly one group.
    groups
        The coflows completing at each completion event, in time order.
    slots
        Per group: how many release events (:func:`release_values`) precede its event;
        non-decreasing. ``None``: all release events first (no releases: all zero).
    weights
        Objective weight of each event's time; default: the sum of its coflows' weights.

    Returns
    -------
    OrderLP
        The model, variables ``t`` (event times) then the amounts.

    Examples -------- Instance I4 (docs/theory.md#instances) with A's completion last and B, C as
    one group (weight 0 on the group):

    >>> from coflowlab.instances.examples import theory_i4
    >>> lp = build_group_lp(theory_i4(), [[1, 2], [0]], weights=[0.0, 1.0])
    >>> round(solve(lp.model).objective, 6)
    2.0
    """
    n = instance.num_coflows
    groups_t = tuple(tuple(int(j) for j in g) for g in groups)
    K = len(groups_t)
    values = release_values(instance)
    q = len(values)
    slots_t = tuple(int(s) for s in slots) if slots is not None else (q,) * K
    if len(slots_t) != K:
        raise ValueError(f"slots has {len(slots_t)} entries for {K} groups")
    if any(b < a for a, b in itertools.pairwise(slots_t)) or any(s < 0 or s > q for s in slots_t):
        raise ValueError(f"slots must be non-decreasing within 0..{q}, got {slots_t}")
    group_of = np.full(n, -1, dtype=np.int64)
    for k, g in enumerate(groups_t):
        for j in g:
            if not 0 <= j < n or group_of[j] >= 0:
                raise ValueError(f"coflow {j} is not a coflow of the instance or is repeated")
            group_of[j] = k
    if (group_of < 0).any():
        raise ValueError(f"coflow {int(np.flatnonzero(group_of < 0)[0])} is in no group")
    w = np.asarray(instance.coflow_weight, dtype=float)
    W = (
        np.array([w[list(g)].sum() for g in groups_t])
        if weights is None
        else np.asarray(weights, dtype=float)
    )

    # ---- events: completion k is event k + slots[k]; release i (1-based) follows the
    # completions with fewer than i releases before them
    s = np.asarray(slots_t, dtype=np.int64)
    Q = int(s[-1]) if K else 0
    E = K + Q
    comp_event = np.arange(K, dtype=np.int64) + s
    rel_event = np.arange(Q, dtype=np.int64) + np.searchsorted(s, np.arange(1, Q + 1), "left")
    event_release = np.zeros(E, dtype=np.int64)
    event_release[rel_event] = np.arange(1, Q + 1)

    # ---- allowed intervals per flow: (its release event, its coflow's event]
    fc = instance.flow_coflow
    fslot = _flow_release_slot(instance, values)
    last = comp_event[group_of[fc]]
    first = np.zeros(len(fc), dtype=np.int64)
    within = (fslot > 0) & (fslot <= Q)
    first[within] = rel_event[fslot[within] - 1] + 1
    first[fslot > Q] = E + 1  # released after every event: no interval
    for a, b in instance.dependencies.tolist():
        if group_of[a] != group_of[b]:
            mask = fc == b
            first[mask] = np.maximum(first[mask], comp_event[group_of[a]] + 1)

    empty = np.flatnonzero(first > last)
    base = dict(
        groups=groups_t,
        slots=slots_t,
        event_release=event_release,
        completion_event=comp_event,
    )
    if empty.size:
        e = int(empty[0])
        return OrderLP(
            None, **base,  # type: ignore[arg-type]
            agg_src=np.zeros(0, np.int64), agg_dst=np.zeros(0, np.int64),
            agg_size=np.zeros(0), flow_agg=np.zeros(0, np.int64),
            x_agg=np.zeros(0, np.int64), x_interval=np.zeros(0, np.int64),
            reason=f"flow {e} of coflow {int(fc[e])} has no interval to send in "
            "(released or unblocked only after its coflow's completion event)",
        )  # fmt: skip

    # ---- merge flows with equal ports and equal allowed intervals
    m = instance.num_ports
    src, dst = instance.flow_src, instance.flow_dst
    key = ((src * m + dst) * (E + 2) + first) * (E + 2) + last
    uniq, flow_agg = np.unique(key, return_inverse=True)
    A = len(uniq)
    flow_agg = flow_agg.astype(np.int64).ravel()
    agg_size = np.bincount(flow_agg, weights=instance.flow_size, minlength=A).astype(float)
    rep = np.zeros(A, dtype=np.int64)
    rep[flow_agg] = np.arange(len(flow_agg))
    a_src, a_dst, a_first, a_last = src[rep], dst[rep], first[rep], last[rep]

    counts = a_last - a_first + 1
    X = int(counts.sum())
    x_agg = np.repeat(np.arange(A, dtype=np.int64), counts)
    offsets = np.concatenate([[0], np.cumsum(counts)[:-1]])
    x_int = a_first[x_agg] + (np.arange(X, dtype=np.int64) - offsets[x_agg])

    # variables: t (E event times), then x (X amounts); rows: order, demand, capacity, all
    # assembled as one sparse matrix (this LP is built once per branch-and-bound node)
    t_lower = np.zeros(E)
    t_upper = np.full(E, np.inf)
    t_lower[rel_event] = values[:Q]
    t_upper[rel_event] = values[:Q]
    cost = np.zeros(E + X)
    cost[comp_event] = W
    xcol = E + np.arange(X)
    # order: t_p - t_{p-1} >= 0
    o_rows = np.repeat(np.arange(E - 1), 2)
    o_cols = np.stack([np.arange(1, E), np.arange(E - 1)], axis=1).ravel()
    o_vals = np.tile([1.0, -1.0], E - 1)
    # demand: the amounts of a merged flow add up to its size
    d_rows = (E - 1) + x_agg
    # capacity: sum of amounts / capacity - t_p + t_{p-1} <= 0 per used (port, interval)
    cap = instance.fabric.port_capacity
    port = np.concatenate([a_src[x_agg], m + a_dst[x_agg]])
    cell = port * E + np.concatenate([x_int, x_int])
    cells, row_of = np.unique(cell, return_inverse=True)
    R = len(cells)
    cell_int = cells % E
    c0 = E - 1 + A
    later = cell_int > 0
    rows = np.concatenate(
        [o_rows, d_rows, c0 + row_of.ravel(), c0 + np.arange(R), c0 + np.flatnonzero(later)]
    )
    cols = np.concatenate([o_cols, xcol, xcol, xcol, cell_int, cell_int[later] - 1])
    vals = np.concatenate(
        [o_vals, np.ones(X), 1.0 / cap[port], np.full(R, -1.0), np.ones(int(later.sum()))]
    )
    nrows = c0 + R
    model = LinearModel(
        "order-lp",
        cost,
        sp.csr_matrix((vals, (rows, cols)), shape=(nrows, E + X)),
        np.concatenate([np.zeros(E - 1), agg_size, np.full(R, -np.inf)]),
        np.concatenate([np.full(E - 1, np.inf), agg_size, np.zeros(R)]),
        np.concatenate([t_lower, np.zeros(X)]),
        np.concatenate([t_upper, np.full(X, np.inf)]),
        np.zeros(E + X, dtype=bool),
        blocks={"t": slice(0, E), "x": slice(E, E + X)},
        row_blocks={
            "order": slice(0, E - 1),
            "demand": slice(E - 1, c0),
            "capacity": slice(c0, nrows),
        },
    )
    return OrderLP(
        model, **base,  # type: ignore[arg-type]
        agg_src=a_src, agg_dst=a_dst, agg_size=agg_size, flow_agg=flow_agg,
        x_agg=x_agg, x_interval=x_int, cap_cell=cells.astype(np.int64),
    )  # fmt: skip


def build_order_lp(
    instance: Instance, order: Sequence[int], slots: Sequence[int] | None = None
) -> OrderLP:
    """The LP of docs/theory.md#exact for the completion order ``order`` (one coflow per event).

    Parameters
    ----------
    instance
        The instance.
    order
        A permutation of the coflows: ``order[k]`` completes ``k``-th.
    slots
        How many release events precede each completion (see the module notes); ``None``
        puts every release event before the first completion (the only interleaving when
        nothing is released after 0; with releases, one interleaving among several).

    Examples -------- Instance I2 (docs/theory.md#instances) (one port, p = (3, 1, 2), w = (3, 1,
    1)) in Smith's order:

    >>> from coflowlab.instances.examples import theory_i2
    >>> round(solve(build_order_lp(theory_i2(), [0, 1, 2]).model).objective, 6)
    19.0
    """
    return build_group_lp(instance, [[int(j)] for j in order], slots)


def basis_keys(
    lp: OrderLP, num_ports: int, num_releases: int, new_group: int | None = None
) -> tuple[IntArray, IntArray] | None:
    """Integer keys naming what each column and row of ``lp`` means, so that a simplex basis
    of one group LP can be carried over to a related one
    (:func:`coflowlab.solvers.highs_lp.carry_basis`; the warm starts of the branch and bound
    in :mod:`coflowlab.formulations.exact_fluid`).

    An event is named by what it is: release event ``i``, or the completion event with ``r``
    completion events after it (counting from the end, the suffix of a branch-and-bound node
    keeps its names in every descendant). A column is an event time or an amount (named by
    its merged flow's ports, first allowed event, completion event, and its interval's end
    event); a row is an order row (by its later event), a demand row (by its merged flow) or
    a capacity row (by port and interval).

    Parameters
    ----------
    lp
        A group LP with a model.
    num_ports, num_releases
        The instance's ``m`` and number of release events (:func:`release_values`).
    new_group
        Name the completion event of this group as new (in no other LP), and the groups
        before it as if it were absent: a branch-and-bound child, whose groups ``[U - j],
        [j], suffix`` refine its parent's ``[U], suffix`` (``new_group=1``: ``U - j`` takes
        ``U``'s names).

    Returns
    -------
    tuple or None
        The keys of the columns and of the rows; ``None`` when they would not fit in 63 bits
        (then no basis is carried).

    Examples
    --------
    A child's ``U - j`` event takes its parent's ``U`` names; the columns of ``j`` are new:

    >>> from coflowlab.instances.examples import theory_i4
    >>> inst = theory_i4()
    >>> parent = build_group_lp(inst, [[0, 1, 2]], weights=[0.0])
    >>> child = build_group_lp(inst, [[1, 2], [0]], weights=[0.0, 1.0])
    >>> cols, _ = basis_keys(parent, inst.num_ports, 0)
    >>> kids, _ = basis_keys(child, inst.num_ports, 0, new_group=1)
    >>> bool(kids[0] == cols[0]), bool(kids[1] == cols[0])
    (True, False)
    """
    if lp.model is None:
        raise ValueError(f"the sequence is infeasible: {lp.reason}")
    E = lp.num_events
    K = len(lp.groups)
    q = int(num_releases)
    # names: 0 none, 1..q releases, q + 1 new, q + 2 + r completions (r < K <= n); the
    # same radix for every group LP of the instance
    radix = q + sum(len(g) for g in lp.groups) + 3
    m = int(num_ports)
    if (2 * m * m + 2) * radix**4 >= 2**62:
        return None
    rank = K - 1 - np.arange(K, dtype=np.int64)
    if new_group is not None:
        rank[:new_group] -= 1
    name = np.zeros(E, dtype=np.int64)
    rel = lp.event_release > 0
    name[rel] = lp.event_release[rel]
    name[lp.completion_event] = q + 2 + rank
    if new_group is not None:
        name[lp.completion_event[new_group]] = q + 1
    A = len(lp.agg_size)
    first = np.full(A, E, dtype=np.int64)
    np.minimum.at(first, lp.x_agg, lp.x_interval)
    last = np.zeros(A, dtype=np.int64)
    np.maximum.at(last, lp.x_agg, lp.x_interval)
    # a merged flow: its ports, the event it waits for (none: 0) and its completion event
    opened = np.where(first > 0, name[np.maximum(first - 1, 0)], 0)
    flow = ((lp.agg_src * m + lp.agg_dst) * radix + opened) * radix + name[last]
    cols = np.concatenate([name, radix + flow[lp.x_agg] * radix + name[lp.x_interval]])
    port, interval = np.divmod(lp.cap_cell, E)
    rows = np.concatenate(
        [name[1:], radix + flow, radix + (m * m + port) * radix * radix + name[interval]]
    )
    return cols, rows


def fluid_schedule_from_intervals(
    instance: Instance,
    times: npt.ArrayLike,
    interval: npt.ArrayLike,
    flow: npt.ArrayLike,
    amount: npt.ArrayLike,
) -> tuple[FluidSchedule, FloatArray]:
    """A fluid schedule from amounts per interval, each sent at the constant rate
    ``amount / length`` of its interval.

    Parameters
    ----------
    instance
        The instance.
    times
        ``(E,)`` event times from a solver: interval ``p`` is ``(times[p-1], times[p]]``,
        with ``times[-1] = 0``.
    interval, flow, amount
        Per amount: its interval, its flow, and what the flow sends in the interval.

    Returns
    -------
    schedule, event_times
        The schedule and the (repaired) event times it uses.

    Notes
    -----
    Solvers meet constraints within about 1e-7, the verifier checks to 1e-9. So amounts below
    :data:`_DROP` of a flow's size are dropped, each flow's amounts are rescaled to its size,
    and an interval is lengthened (never shortened) until every port fits in it; the later
    events shift by as much. Completion times move only by the solver's tolerance, and
    nothing moves before a release (event times never decrease).

    Examples
    --------
    One flow of size 2 sending 1 in each of the intervals (0, 1] and (1, 3]:

    >>> from coflowlab import Instance
    >>> inst = Instance.from_matrices([[[2.0]]])
    >>> s, t = fluid_schedule_from_intervals(inst, [1.0, 3.0], [0, 1], [0, 0], [1.0, 1.0])
    >>> s.time.tolist(), s.rate.tolist(), t.tolist()
    ([0.0, 1.0, 3.0], [1.0, 0.5, 0.0], [1.0, 3.0])
    """
    t = np.asarray(times, dtype=float)
    p = np.asarray(interval, dtype=np.int64)
    f = np.asarray(flow, dtype=np.int64)
    x = np.asarray(amount, dtype=float)
    size = instance.flow_size
    x = np.where(x > _DROP * size[f], x, 0.0)
    total = np.bincount(f, weights=x, minlength=instance.num_flows)
    if (total[np.unique(f)] <= 0).any():
        raise SolverError("decoding: a flow has no positive amount in the solver's solution")
    x = x * (size[f] / np.where(total[f] > 0, total[f], 1.0))
    E = len(t)
    m = instance.num_ports
    cap = instance.fabric.port_capacity
    usage = np.zeros((2 * m, E))
    np.add.at(usage, (instance.flow_src[f], p), x)
    np.add.at(usage, (m + instance.flow_dst[f], p), x)
    need = (usage / cap[:, None]).max(axis=0) if E else np.zeros(0)
    length = np.maximum(np.diff(np.concatenate([[0.0], t])), 0.0)
    length = np.maximum(length, need)
    ends = np.cumsum(length)
    starts = ends - length
    keep = x > 0
    f, p, x = f[keep], p[keep], x[keep]
    schedule = FluidSchedule.from_segments(
        instance.num_flows, f, starts[p], ends[p], x / length[p]
    )
    return schedule, ends


def decode_schedule(
    instance: Instance, lp: OrderLP, x: npt.ArrayLike
) -> tuple[FluidSchedule, FloatArray]:
    """The fluid schedule of an :class:`OrderLP` solution: each merged amount is split over
    its flows in proportion to their sizes and sent at a constant rate in its interval.

    Returns the schedule and the event times (after the repair described in
    :func:`fluid_schedule_from_intervals`).

    Examples
    --------
    >>> from coflowlab import verify
    >>> from coflowlab.instances.examples import theory_i4
    >>> inst = theory_i4()
    >>> lp = build_order_lp(inst, [1, 2, 0])
    >>> schedule, times = decode_schedule(inst, lp, solve(lp.model).x)
    >>> verify(inst, schedule).coflow_completion.round(6).tolist()
    [2.0, 1.0, 1.0]
    """
    if lp.model is None:
        raise ValueError(f"the sequence is infeasible: {lp.reason}")
    vec = np.asarray(x, dtype=float)
    E = lp.num_events
    amounts = np.maximum(vec[E:], 0.0)
    # expand merged amounts to their flows
    order = np.argsort(lp.flow_agg, kind="stable")
    ptr = np.concatenate([[0], np.cumsum(np.bincount(lp.flow_agg, minlength=len(lp.agg_size)))])
    per = ptr[lp.x_agg + 1] - ptr[lp.x_agg]
    idx = np.repeat(np.arange(len(amounts)), per)
    within = np.arange(len(idx)) - np.repeat(np.cumsum(per) - per, per)
    flows = order[ptr[lp.x_agg[idx]] + within]
    share = instance.flow_size[flows] / lp.agg_size[lp.x_agg[idx]]
    return fluid_schedule_from_intervals(
        instance, vec[:E], lp.x_interval[idx], flows, amounts[idx] * share
    )


@dataclass(frozen=True, eq=False)
class OrderLPSolution:
    """The best schedule for one completion order (and interleaving).

    Attributes
    ----------
    status
        The LP's status (``infeasible`` for an impossible sequence).
    objective
        The LP's value ``Σ_k w_{σ(k)} t_k`` (``inf`` if infeasible).
    order, slots
        The sequence solved (for :func:`solve_order_lp` without slots on an instance with
        releases, the best interleaving found).
    times
        Per position ``k``: ``t_k`` from the LP.
    schedule
        The decoded schedule (``None`` if infeasible or not decoded).
    result
        The solver's result for the sequence.
    lps
        How many LPs were solved.
    """

    status: SolveStatus
    objective: float
    order: tuple[int, ...]
    slots: tuple[int, ...]
    times: FloatArray
    schedule: FluidSchedule | None
    result: SolveResult | None
    lps: int = 1


def _solve_one(
    instance: Instance,
    order: tuple[int, ...],
    slots: tuple[int, ...] | None,
    decode: bool,
    options: SolverOptions,
) -> OrderLPSolution:
    lp = build_order_lp(instance, order, slots)
    slots_t = lp.slots
    if lp.model is None:
        return OrderLPSolution(
            SolveStatus.INFEASIBLE, math.inf, order, slots_t, np.zeros(0), None, None, 0
        )
    res = solve(lp.model, options)
    if not res.has_solution:
        obj = math.inf if res.status is SolveStatus.INFEASIBLE else math.nan
        return OrderLPSolution(res.status, obj, order, slots_t, np.zeros(0), None, res)
    assert res.x is not None
    times = res.x[lp.completion_event]
    schedule = decode_schedule(instance, lp, res.x)[0] if decode else None
    return OrderLPSolution(res.status, res.objective, order, slots_t, times, schedule, res)


def solve_order_lp(
    instance: Instance,
    order: Sequence[int],
    slots: Sequence[int] | None = None,
    options: SolverOptions | None = None,
    *,
    decode: bool = True,
) -> OrderLPSolution:
    """Solves the order LP: the best schedule completing the coflows in ``order``.

    Parameters
    ----------
    instance
        The instance.
    order
        The completion order.
    slots
        The interleaving of release events (see the module notes). ``None`` on an instance
        with releases tries every interleaving (:func:`interleavings`, exhaustive: for small
        instances and tests) and returns the best.
    options
        Solver settings, see :class:`~coflowlab.solvers.SolverOptions` (each LP gets the
        whole ``time_limit``).
    decode
        Decode the schedule.

    Examples
    --------
    >>> from coflowlab.instances.examples import theory_i4, theory_r1
    >>> [round(solve_order_lp(theory_i4(), o).objective, 6) for o in ([1, 2, 0], [0, 1, 2])]
    [4.0, 5.0]
    >>> best = solve_order_lp(theory_r1(), [1, 0])
    >>> round(best.objective, 6), best.slots
    (9.0, (1, 1))
    """
    order_t = tuple(int(j) for j in order)
    if sorted(order_t) != list(range(instance.num_coflows)):
        raise ValueError(f"order must be a permutation of 0..{instance.num_coflows - 1}")
    opts = options or SolverOptions()
    if slots is not None or len(release_values(instance)) == 0:
        return _solve_one(instance, order_t, None if slots is None else tuple(slots), decode, opts)
    best: OrderLPSolution | None = None
    count = 0
    for cand in interleavings(instance, order_t):
        sol = _solve_one(instance, order_t, cand, False, opts)
        count += sol.lps
        if sol.status is SolveStatus.OPTIMAL and (best is None or sol.objective < best.objective):
            best = sol
    if best is None:
        return OrderLPSolution(
            SolveStatus.INFEASIBLE, math.inf, order_t, (), np.zeros(0), None, None, count
        )
    final = _solve_one(instance, order_t, best.slots, decode, opts) if decode else best
    return OrderLPSolution(
        final.status, final.objective, order_t, final.slots, final.times, final.schedule,
        final.result, count + (1 if decode else 0),
    )  # fmt: skip
