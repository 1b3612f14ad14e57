"""The slotted optimum by branch and bound over event sequences (``exact-slotted``,
``algorithm="bnb"``; docs/theory.md#exact and docs/theory.md#time-indexed).

The time-indexed MIP (:func:`~coflowlab.formulations.time_indexed.solve_exact_slotted`) pays
for a variable per flow and slot; this method pays per flow and *event* instead, and searches
the event sequences with the branch and bound of
:mod:`~coflowlab.formulations.exact_fluid` (the same nodes, bounds and dominance rule).

Why the slotted optimum is a minimum over event sequences
--------------------------------------------------------
Slots end at whole times, so a flow released at ``r`` first sends in slot ``ceil(r) + 1``:
the instance with every release rounded up, ``r' = ceil(r)``, has the same slotted
schedules. For an event sequence ``σ`` of ``r'`` (a completion order with the release events
interleaved, :mod:`~coflowlab.formulations.order_lp`), call the order LP with **whole** event
times and amounts the *order MIP* of ``σ``. Then the slotted optimum is the minimum over
``σ`` of the order MIP:

- a slotted schedule, with its completion order and the release events strictly before each
  completion, is a point of its sequence's order MIP of the same cost: completions and
  releases are whole times, and what a flow sends between two consecutive events is a
  whole number;
- conversely, take a point of an order MIP. In the interval ``(t_{p-1}, t_p]`` of whole
  length ``L`` every port ``v`` carries a whole amount of at most ``c_v L``, so the pair
  matrix of the interval is served in exactly ``max_v ceil(load_v / c_v) ≤ L`` slots, each
  moving at most ``c_v`` units through ``v`` (König's edge-colouring theorem with each port
  split into ``c_v`` unit copies:
  :func:`coflowlab.approximations.decomposition.decompose_capacitated`). The units of a
  pair go to its flows in any way that gives each its amount of the interval. No flow
  sends before its release event or after its coflow's completion event, and a successor
  only after its predecessor's event, as in the order LP; so this is a slotted schedule
  with no later completions.

Merged flows (same ports, same allowed intervals; order_lp module notes) stay exact with
whole amounts: the flows' sizes and the intervals' merged amounts are the two sides of a
transportation problem with every pair allowed, whose greedy (north-west corner) solution
is whole.

The search
----------
The order LP is the LP relaxation of the order MIP, so every bound of the fluid search
(group LPs, the chain bound, ``Σ w (r + ρ)``, Smith per port) is a bound here; the chain
and makespan bounds round each port's time up to whole slots, ``ρ`` becomes ``ceil(ρ)``,
and with whole weights every bound ``b`` proves ``ceil(b)`` (slotted ``Σ w C`` is then a
whole number). The dominance rule of the fluid search holds slot by slot (its exchange moves
whole units of one port pair between two coflows within the same slots). A leaf's LP is
solved first; if its solution is whole it is the leaf's value, else the leaf's order MIP
(a few dozen integer variables) is solved, unless the LP already prunes it.

Initial incumbent, found without a solver so that a time limit always returns a schedule:
the coflows one by one in a topological order of the dependencies, each in its ``ρ_j`` slots,
and (without dependencies, which list schedules ignore) the cheapest slotted list schedule
(:func:`greedy_slotted`) of the orders of :data:`coflowlab.orderings.ORDERINGS`; then the
order MIPs of the fluid search's heuristic sequences and their adjacent swaps. On a time
limit: the incumbent, the least bound of the open nodes and the gap (status ``time_limit``).
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np
import numpy.typing as npt

from coflowlab.exceptions import ModelTooLargeError, SolverError
from coflowlab.instance import Instance
from coflowlab.orderings import ORDERINGS, instance_order
from coflowlab.schedules import SlottedSchedule
from coflowlab.solution import Solution, SolutionKind, schedule_solution
from coflowlab.solvers import SolveResult, SolverOptions, SolveStatus, relative_gap

from .exact_fluid import (
    MAX_BNB_COFLOWS,
    _Data,
    _heuristic,
    _Incumbent,
    _OutOfTime,
    _run_bnb,
    _sequence_of,
    no_schedule_solution,
)
from .order_lp import OrderLP
from .parallel_search import check_workers
from .time_indexed import first_slots, greedy_slotted, slotted_data

__all__ = [
    "one_by_one",
    "rounded_up_releases",
    "slotted_schedule_from_sequence",
    "solve_exact_slotted_bnb",
]

METHOD = "exact-slotted"

IntArray = npt.NDArray[np.int64]


def rounded_up_releases(instance: Instance) -> Instance:
    """The instance with every release rounded up to a whole time, ``ceil(r)``: it has the
    same slotted schedules (a flow released at ``r`` first sends in slot ``ceil(r) + 1``,
    :func:`~coflowlab.formulations.time_indexed.first_slots`).

    Examples
    --------
    >>> from coflowlab import Coflow
    >>> inst = Instance.from_coflows([Coflow([(0, 0, 1.0)], release=0.5)], 1)
    >>> rounded_up_releases(inst).flow_release.tolist()
    [1.0]
    """
    if not instance.has_releases:
        return instance
    flow = (first_slots(instance) - 1).astype(float)
    r = instance.coflow_release
    coflow = np.ceil(r - 1e-9 * np.maximum(r, 1.0))
    return instance.replace(coflow_release=coflow, flow_release=flow)


def slotted_schedule_from_sequence(
    instance: Instance, lp: OrderLP, x: npt.ArrayLike
) -> SlottedSchedule:
    """The slotted schedule of a whole point ``x`` of an order MIP (module notes): each
    merged amount split over its flows (north-west corner), and each interval's pair matrix
    served in its slots by :func:`~coflowlab.approximations.decomposition.decompose_capacitated`.

    Parameters
    ----------
    instance
        The instance (whole sizes and capacities; releases as in ``lp``).
    lp
        The sequence's order LP (:func:`~coflowlab.formulations.order_lp.build_order_lp`).
    x
        Whole values of its variables (solver output; rounded here).

    Raises
    ------
    SolverError
        ``x`` does not give every flow its size, or an interval's matrix needs more slots
        than the interval has (not a point of the order MIP).

    Examples
    --------
    One port, flows of 2 and 1 units in the order (1, 0): times (1, 3); the variables are
    the two times, then flow 1's amount in interval 0 and flow 0's in intervals 0 and 1
    (merged flows sorted by ports and intervals).

    >>> from coflowlab.formulations.order_lp import build_order_lp
    >>> inst = Instance.from_matrices([[[2]], [[1]]])
    >>> lp = build_order_lp(inst, [1, 0])
    >>> s = slotted_schedule_from_sequence(inst, lp, [1, 3, 1, 0, 2])
    >>> sorted(zip(s.slot.tolist(), s.flow.tolist(), s.amount.tolist(), strict=True))
    [(1, 1, 1.0), (2, 0, 1.0), (3, 0, 1.0)]
    """
    if lp.model is None:
        raise ValueError(f"the sequence is infeasible: {lp.reason}")
    vec = np.rint(np.asarray(x, dtype=float)).astype(np.int64)
    E = lp.num_events
    times = vec[:E]
    amounts = np.maximum(vec[E:], 0)
    size, cap = slotted_data(instance, METHOD)
    # split each merged amount over its flows, intervals in time order (north-west corner)
    members: dict[int, list[int]] = {}
    for e, a in enumerate(lp.flow_agg.tolist()):
        members.setdefault(a, []).append(e)
    per_interval: dict[int, list[tuple[int, int]]] = {}  # interval -> [(flow, amount)]
    order = np.lexsort((lp.x_interval, lp.x_agg))
    queue_pos = dict.fromkeys(members, 0)
    left = {a: int(size[flows[0]]) for a, flows in members.items()}
    for k in order.tolist():
        a, p, amt = int(lp.x_agg[k]), int(lp.x_interval[k]), int(amounts[k])
        flows = members[a]
        while amt > 0:
            i = queue_pos[a]
            if i >= len(flows):
                raise SolverError(f"{METHOD}: merged flow {a} is given more than its size")
            take = min(amt, left[a])
            per_interval.setdefault(p, []).append((flows[i], take))
            amt -= take
            left[a] -= take
            if left[a] == 0:
                queue_pos[a] = i + 1
                left[a] = int(size[flows[i + 1]]) if i + 1 < len(flows) else 0
    for a, flows in members.items():
        if queue_pos[a] != len(flows):
            raise SolverError(f"{METHOD}: flow {flows[queue_pos[a]]} is not given its size")
    records: list[tuple[int, int, int]] = []
    for p, parts in sorted(per_interval.items()):
        begin = int(times[p - 1]) if p > 0 else 0
        length = int(times[p]) - begin
        used = _serve(instance, parts, begin, cap, records)
        if used > length:
            raise SolverError(
                f"{METHOD}: interval {p} ({begin}, {begin + length}] is given more than "
                f"{length} slots of work"
            )
    return _schedule(instance, records)


def _serve(
    instance: Instance,
    parts: list[tuple[int, int]],
    begin: int,
    cap: IntArray,
    records: list[tuple[int, int, int]],
) -> int:
    """Serves the amounts ``parts`` (``(flow, units)``) in the fewest slots from slot
    ``begin + 1`` on (König, :func:`~coflowlab.approximations.decomposition.
    decompose_capacitated`), appending ``(slot, flow, units)`` to ``records``; returns the
    number of slots used."""
    from coflowlab.approximations.decomposition import decompose_capacitated

    m = instance.num_ports
    src, dst = instance.flow_src, instance.flow_dst
    demand = np.zeros((m, m), dtype=np.int64)
    queue: dict[int, list[list[int]]] = {}
    for e, amt in parts:
        demand[src[e], dst[e]] += amt
        queue.setdefault(int(src[e]) * m + int(dst[e]), []).append([e, amt])
    terms = decompose_capacitated(demand, cap[:m], cap[m:])
    slot = begin + 1
    for t in terms:
        for _ in range(int(t.weight)):
            for pair, u in zip((t.rows * m + t.cols).tolist(), t.units.tolist(), strict=True):
                q = queue[pair]
                while u > 0:
                    take = min(u, q[0][1])
                    records.append((slot, q[0][0], take))
                    u -= take
                    q[0][1] -= take
                    if q[0][1] == 0:
                        q.pop(0)
            slot += 1
    return slot - begin - 1


def _schedule(instance: Instance, records: list[tuple[int, int, int]]) -> SlottedSchedule:
    rec = np.array(records, dtype=np.int64).reshape(-1, 3)
    return SlottedSchedule(instance.num_flows, rec[:, 0], rec[:, 1], rec[:, 2])


def one_by_one(instance: Instance) -> tuple[SlottedSchedule, npt.NDArray[np.float64]]:
    """A slotted schedule for any instance, dependencies included: the coflows one at a time
    in a topological order of the dependencies (ties by index), each in its ``ρ_j`` slots
    (König) from the first slot after its predecessor's and its releases. Returns the
    schedule and the completion times.

    Examples
    --------
    >>> from coflowlab.instances.examples import theory_r1
    >>> one_by_one(theory_r1())[1].tolist()
    [2.0, 3.0]
    """
    size, cap = slotted_data(instance, METHOD)
    first = first_slots(instance)
    n = instance.num_coflows
    preds = [0] * n
    succ: list[list[int]] = [[] for _ in range(n)]
    for a, b in instance.dependencies.tolist():
        preds[b] += 1
        succ[a].append(b)
    ready = [j for j in range(n) if preds[j] == 0]
    records: list[tuple[int, int, int]] = []
    done = np.zeros(n)
    end = 0
    while ready:
        j = min(ready)
        ready.remove(j)
        flows = instance.coflow_flows(j)
        begin = max(end, int((first[flows] - 1).max(initial=0)))
        end = begin + _serve(
            instance, [(int(e), int(size[e])) for e in flows], begin, cap, records
        )
        done[j] = end
        for b in succ[j]:
            preds[b] -= 1
            if preds[b] == 0:
                ready.append(b)
    return _schedule(instance, records), done


def _list_incumbent(data: _Data, inc: _Incumbent) -> None:
    """The first incumbent, found without a solver (so a time limit always leaves it): the
    cheapest of the coflows one by one (:func:`one_by_one`, which respects dependencies)
    and, without dependencies, the slotted list schedules of the built-in orders."""
    inst = data.instance
    rank = np.arange(data.n)
    schedule, done = one_by_one(inst)
    seq, slots_ = _sequence_of(data, done, rank)
    cost = float(np.dot(data.w, done))
    inc.offer(data.whole_value(cost), seq, slots_, None, np.zeros(0), "one by one", schedule)
    if inst.dependencies.size:
        return  # list schedules ignore dependencies
    size, cap = slotted_data(inst, METHOD)
    first = first_slots(inst)
    n, nf = inst.num_coflows, inst.num_flows
    seen: set[tuple[int, ...]] = set()
    for name in ORDERINGS:
        order = instance_order(inst, name)
        key = tuple(order.tolist())
        if key in seen:
            continue
        seen.add(key)
        rank = np.empty(n, dtype=np.int64)
        rank[order] = np.arange(n)
        flows = np.lexsort((np.arange(nf), rank[inst.flow_coflow]))
        slot, flow, amount = greedy_slotted(inst, flows, size, cap, first)
        done = np.zeros(n)
        np.maximum.at(done, inst.flow_coflow[flow], slot)
        seq, slots_ = _sequence_of(data, done, rank)
        schedule = SlottedSchedule(nf, slot, flow, amount)
        cost = float(np.dot(data.w, done))
        inc.offer(data.whole_value(cost), seq, slots_, None, np.zeros(0), f"list {name}", schedule)


def solve_exact_slotted_bnb(
    instance: Instance,
    options: SolverOptions | None = None,
    *,
    max_coflows: int = MAX_BNB_COFLOWS,
    workers: int = 1,
) -> Solution:
    """Slotted OPT of ``Σ_j w_j C_j`` by branch and bound over event sequences, with an
    order MIP per leaf (module notes). Same model and conventions as
    :func:`~coflowlab.formulations.time_indexed.solve_exact_slotted` (whole sizes and
    capacities; a flow released at ``r`` first sends in slot ``ceil(r) + 1``; dependencies
    kept; deadlines ignored).

    Parameters
    ----------
    instance
        Whole sizes and capacities.
    options
        Solver settings, see :class:`~coflowlab.solvers.SolverOptions`; ``time_limit``
        covers the whole method (none by default), ``mip_gap`` prunes nodes as in
        ``exact-fluid``.
    max_coflows
        Refuse larger instances (default :data:`~coflowlab.formulations.exact_fluid.
        MAX_BNB_COFLOWS`).
    workers
        Processes of the branch and bound (default 1), as for ``exact-fluid``
        (:func:`~coflowlab.formulations.exact_fluid.solve_exact_fluid`, "Parallel search"):
        the same optimum; the nodes searched and, among equal optima, the schedule returned
        depend on timing, so ``workers=1`` is the reproducible run.

    Returns
    -------
    Solution
        Kind ``exact``, a verified :class:`SlottedSchedule`; ``order`` the completion order.
        ``details`` as ``exact-fluid``'s B&B, plus ``milps`` (order MIPs solved) and
        ``list_objective`` (the first incumbent's cost). On a time limit: status
        ``time_limit`` with the incumbent, the proven bound and the gap.

    Raises
    ------
    InvalidInstanceError
        A size or capacity is not whole (named).
    ModelTooLargeError
        More coflows than ``max_coflows``.
    ValueError
        ``workers`` is not a whole number of at least 1.

    Examples
    --------
    Instance R1 (docs/theory.md#instances): slotted OPT = 9 with ``C = (3, 2)``.

    >>> from coflowlab.instances.examples import theory_r1
    >>> sol = solve_exact_slotted_bnb(theory_r1())
    >>> sol.status.value, sol.objective, sol.completion_times.tolist()
    ('optimal', 9.0, [3.0, 2.0])
    """
    start = time.perf_counter()
    check_workers(workers, "bnb")
    slotted_data(instance, METHOD)  # whole sizes and capacities, or a named error
    n = instance.num_coflows
    if n > max_coflows:
        raise ModelTooLargeError(
            f"{METHOD} (bnb): the instance has {n} coflows, above the limit of {max_coflows} "
            "(max_coflows); use a bound or an approximation instead, or raise max_coflows"
        )
    options = options or SolverOptions()
    limit_s = options.time_limit
    deadline = math.inf if limit_s is None else start + float(limit_s)
    work = rounded_up_releases(instance)
    data = _Data(work, options, deadline, integral=True, workers=workers)
    inc = _Incumbent()
    details: dict[str, Any] = {"algorithm": "bnb"}
    _list_incumbent(data, inc)
    details["list_objective"] = inc.value if math.isfinite(inc.value) else None
    out_of_time = False
    try:
        _heuristic(data, inc)
    except _OutOfTime:
        out_of_time = True
    details["heuristic_objective"] = inc.value if math.isfinite(inc.value) else None
    details["dominance_pairs"] = int(data.prec.sum())
    details["root_bound"] = data.round_bound(data.lower_bound((1 << n) - 1))
    status, bound, message = _run_bnb(data, inc, out_of_time, details)
    details["lps"] = data.lps
    details["milps"] = data.milps
    details["lp_seconds"] = round(data.lp_time, 6)
    details["incumbent_source"] = inc.source
    details["slots"] = list(inc.slots)
    if not inc.found:
        return no_schedule_solution(
            METHOD, instance, status, bound, message, start, details, options
        )
    schedule = inc.schedule
    if schedule is None:
        assert inc.lp is not None and inc.x is not None
        schedule = slotted_schedule_from_sequence(work, inc.lp, inc.x)
    if not isinstance(schedule, SlottedSchedule):  # the search offers slotted schedules only
        raise SolverError(f"{METHOD} (bnb): the incumbent is not a slotted schedule")
    if status is SolveStatus.OPTIMAL:
        bound = min(bound, inc.value)
    result = SolveResult(
        status, inc.value, bound, relative_gap(inc.value, bound), time.perf_counter() - start,
        None, options.solver, message,
    )  # fmt: skip
    return schedule_solution(
        METHOD, SolutionKind.EXACT, instance, schedule, result,
        runtime=time.perf_counter() - start, order=inc.order, bound=bound, details=details,
        options=options,
    )  # fmt: skip
