"""Qiu, Stein and Zhong's interval-LP grouping algorithm (SPAA 2015) in the slotted model
(docs/theory.md#qsz; slotted conventions in docs/theory.md#time-models).

The algorithm (the paper's exact rules we could not check; this is our variant):

1. Solve the interval-indexed LP (:mod:`coflowlab.formulations.interval_lp`,
   docs/theory.md#interval-lp) on a geometric grid ``τ_l = a·2^{l−1}`` (``l = 1 .. Λ−1``; the last
   interval ``(τ_{Λ−1}, ∞)`` is unbounded). Deterministic: ``a = min_j ⌈e_j⌉``, the earliest whole
   slot any coflow can complete by (``e_j`` of
   :func:`coflowlab.formulations.bounds.completion_floor`, ``r_j + ρ_j`` usually). Randomized: ``a
   = min_j ⌈e_j⌉ · 2^U`` with ``U`` uniform in ``[0, 1)``. The grid reaches the busiest port's
   total time and the largest ``e_j``.
2. Group by the **half-interval** rule (our variant, docs/theory.md#qsz): ``ℓ_j = min{l :
   X[j, l] ≥ 1/2}`` on the LP's cumulative ``X`` (up to ``1e-9``), ``G_l = {j : ℓ_j = l}``.
3. Process the groups in order of ``l`` (coflows of a group by index). Group ``G`` starts
   after slot ``start = max(end of the previous group, max_{e ∈ G} ⌈r_e⌉)`` (a flow released at
   ``r`` first sends in slot ``⌈r⌉ + 1``, docs/theory.md#time-models), and its aggregated matrix
   ``D(G)`` is served in exactly ``ρ(D(G)) = max_v ⌈L_v(G) / c_v⌉`` slots by the König / BvN
   decomposition (:func:`coflowlab.approximations.decomposition.decompose_capacitated`; integer
   port capacities above 1 are split into unit copies). Each unit of a pair ``(i, o)`` goes to a
   concrete flow of the group on that pair (coflow order), so the schedule is per flow. Every
   coflow of ``G`` completes by ``start + ρ(D(G))``.
4. Optionally (``backfill=True``) sweep the slots and fill idle port capacity with units of
   released flows that are scheduled later, taking each flow's latest units first; a flow's
   last slot never moves later, so no coflow finishes later (the QSZ experiments switch
   backfilling on and off). Completion times are the verifier's.

What is confirmed and what is not. The paper's ratios (``64/3`` and ``67/3``
deterministic, ``8 + 16√2/3`` and ``9 + 16√2/3`` randomized) rest on grouping thresholds
and a randomized base (``1 + √2``?) that we could not check; they are **not**
claimed here. The randomized variant shifts the base-2 grid by ``2^U`` (after QSZ's
"random offset of the geometric grid"); its expected ratio is not derived, and the guarantee
below holds for every ``U``.

Guarantee (our derivation for this grid, docs/theory.md#qsz). Write ``τ_Λ = 2τ_{Λ−1}`` (a virtual
end of the unbounded interval), ``C̄_j = Σ_l c[j, l] x[j, l]`` (so ``LP = Σ w_j C̄_j``), ``p[j,
v]`` the port times. *Loads*: ``X[j, u] ≥ 1/2`` for every ``j`` with ``ℓ_j ≤ u``, so the LP's load
row gives ``Σ_{ℓ_j ≤ u} p[j, v] ≤ 2τ_u`` for ``u < Λ`` (a port whose total is at most ``τ_u`` has
no row and needs none), and the grid's last point bounds every port's total, ``≤ τ_{Λ−1} ≤ 2τ_Λ``;
hence ``ρ(G_u) ≤ ⌈2τ_u⌉``. *Charges*: for ``ℓ_j ≥ 2``, ``X[j, ℓ_j − 1] < 1/2``, so more than half
of ``j``'s LP mass is charged at least ``τ_{ℓ_j − 1} = τ_{ℓ_j}/2``: ``C̄_j ≥ τ_{ℓ_j}/4``. *Zero
release*: groups run back to back, so ``C_j ≤ Σ_{u ≤ ℓ_j} ⌈2τ_u⌉ = 4τ_{ℓ_j} − 2a + h_j`` with the
rounding ``h_j = Σ_{u ≤ ℓ_j} (⌈2τ_u⌉ − 2τ_u)`` (0 on the deterministic grid, where every ``2τ_u``
is whole); that is ``≤ 16·C̄_j + h_j`` for ``ℓ_j ≥ 2`` and ``≤ 2a + h_j`` for ``ℓ_j = 1``.
Summing::

    Σ w C ≤ 16·LP + 2a·w(G₁) + Σ_j w_j h_j                  (zero release dates)

(``16·LP + 2·w(G₁)`` for ``a = 1``). *Release dates*: the LP forces
``X[j, u] = 0`` while ``τ_u < e_j``, and ``e_j > r_e`` for every flow ``e`` of ``j``; so a
group ``G_u``, ``u < Λ``, is released by slot ``⌈τ_u⌉`` (and ``G_Λ`` by ``⌈τ_{Λ−1}⌉``, the
grid reaching ``max e_j``). By induction a group ends by its largest release so far plus the
spans so far, ``C_j ≤ ⌈τ_{ℓ_j}⌉ + Σ_{u ≤ ℓ_j} ⌈2τ_u⌉ ≤ 5τ_{ℓ_j} − 2a + h_j`` (``h_j`` now
also holds ``⌈τ_{ℓ_j}⌉ − τ_{ℓ_j}``), hence::

    Σ w C ≤ 20·LP + 3a·w(G₁) + Σ_j w_j h_j                  (release dates)

Cost: the LP, one decomposition per group (``O((nnz + m)·m²)`` worst case each, independent
of the sizes, see :mod:`.decomposition`), and one schedule record per flow and slot it sends
in (the slotted format stores every slot, so this part grows with the sizes); backfilling
sweeps every slot, ``O(H·|E|)`` for ``H`` slots.

Both hold up to the LP solver's feasibility tolerance, for the LP solved on the same grid (the
bound reported), and ``LP ≤ fluid OPT ≤ slotted OPT`` (docs/theory.md#time-models, #interval-lp).
Coflow dependencies are not supported (the grouping ignores them); deadlines are ignored.
"""

from __future__ import annotations

import bisect
import time
from typing import Any

import numpy as np
import numpy.typing as npt

from coflowlab.exceptions import InvalidInstanceError, SolverError
from coflowlab.instance import Instance
from coflowlab.schedules import SlottedSchedule
from coflowlab.solution import Guarantee, Solution, approximation_solution
from coflowlab.solvers import SolverOptions, SolveStatus

from .decomposition import decompose_capacitated

__all__ = [
    "HALF_TOL",
    "QSZ_SOURCE",
    "half_interval_groups",
    "solve_qsz",
    "solve_qsz_random",
]

HALF_TOL = 1e-9
"""``X[j, l] ≥ 1/2 − HALF_TOL`` counts as half complete (LP values carry solver noise)."""

QSZ_SOURCE = (
    "grouping and aggregated BvN after Qiu, Stein, Zhong, SPAA 2015; half-interval rule and "
    "bound derived in docs/theory.md#qsz and coflowlab.approximations.qsz"
)


def half_interval_groups(
    cumulative: npt.ArrayLike, tol: float = HALF_TOL
) -> npt.NDArray[np.int64]:
    """``ℓ_j = min{l : X[j, l] ≥ 1/2}`` (1-based) for the cumulative LP values ``X``.

    Examples
    --------
    >>> half_interval_groups([[0.0, 0.6, 1.0], [0.2, 0.4999, 1.0], [0.5, 1.0, 1.0]]).tolist()
    [2, 3, 1]
    """
    x = np.asarray(cumulative, dtype=float)
    if x.ndim != 2 or x.shape[1] == 0 or not np.all(x[:, -1] >= 0.5 - tol):
        raise ValueError("cumulative: expected an (n, Λ) array whose last column is 1")
    return (np.argmax(x >= 0.5 - tol, axis=1) + 1).astype(np.int64)


# ---------------------------------------------------------------- schedule construction
def _spread(pos: int, take: int, per_slot: int) -> tuple[np.ndarray, np.ndarray]:
    """Units ``[pos, pos + take)`` of a run moving ``per_slot`` units per slot: the slot
    offsets they fall in and how many in each."""
    lo, hi = pos, pos + take
    s_lo, s_hi = lo // per_slot, (hi - 1) // per_slot
    offs = np.arange(s_lo, s_hi + 1, dtype=np.int64)
    amt = np.full(offs.size, per_slot, dtype=np.int64)
    amt[0] -= lo - s_lo * per_slot
    amt[-1] -= (s_hi + 1) * per_slot - hi
    return offs, amt


def _group_schedule(
    instance: Instance,
    groups: list[list[int]],
    size: npt.NDArray[np.int64],
    capacity: npt.NDArray[np.int64],
    first_slot: npt.NDArray[np.int64],
) -> tuple[list[np.ndarray], list[int], list[int]]:
    """Records ``[slot, flow, amount]`` of the grouped schedule, and each group's start
    (slots before it) and span ``ρ(D(G))``."""
    m = instance.num_ports
    src, dst = instance.flow_src, instance.flow_dst
    slots: list[np.ndarray] = []
    flows: list[np.ndarray] = []
    amounts: list[np.ndarray] = []
    starts, spans = [], []
    end = 0
    for group in groups:
        fl = np.concatenate([instance.coflow_flows(k) for k in group])
        start = max(end, int((first_slot[fl] - 1).max()))
        demand = np.zeros((m, m), dtype=np.int64)
        np.add.at(demand, (src[fl], dst[fl]), size[fl])
        terms = decompose_capacitated(demand, capacity[:m], capacity[m:])
        # per pair (i, o): its runs (first slot, slots, units per slot), in slot order
        runs: dict[int, list[tuple[int, int, int]]] = {}
        slot = start + 1
        for t in terms:
            for pair, u in zip((t.rows * m + t.cols).tolist(), t.units.tolist(), strict=True):
                runs.setdefault(pair, []).append((slot, int(t.weight), u))
            slot += int(t.weight)
        span = slot - start - 1
        # hand each pair's units to its flows in order (coflow order, then instance order)
        pair_of = (src[fl] * m + dst[fl]).tolist()
        queue: dict[int, list[int]] = {}
        for e, pair in zip(fl.tolist(), pair_of, strict=True):
            queue.setdefault(pair, []).append(e)
        for pair, rl in runs.items():
            q = queue[pair]
            qi, rem = 0, int(size[q[0]])
            for s0, k, u in rl:
                pos, total = 0, k * u
                while pos < total:
                    take = min(rem, total - pos)
                    offs, amt = _spread(pos, take, u)
                    slots.append(s0 + offs)
                    flows.append(np.full(offs.size, q[qi], dtype=np.int64))
                    amounts.append(amt)
                    pos += take
                    rem -= take
                    if rem == 0:
                        qi += 1
                        rem = int(size[q[qi]]) if qi < len(q) else 0
            if qi != len(q):  # the decomposition is exact; a bug if units are missing
                raise RuntimeError(f"qsz: pair {divmod(pair, m)} was given too few units")
        starts.append(start)
        spans.append(span)
        end = start + span
    return [_cat(slots), _cat(flows), _cat(amounts)], starts, spans


def _cat(parts: list[np.ndarray]) -> np.ndarray:
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


def _backfill(
    instance: Instance,
    records: list[np.ndarray],
    rank: npt.NDArray[np.int64],
    capacity: npt.NDArray[np.int64],
    first_slot: npt.NDArray[np.int64],
) -> list[np.ndarray]:
    """Moves units earlier into idle capacity (module docstring, step 4).

    Slot by slot, flows released by the slot with units scheduled later, in ``rank`` order,
    take what both their ports have left, removing their latest units. Removing units only
    frees capacity and a flow's last slot only moves earlier, so the schedule stays feasible
    and no completion time grows. ``O(H·|E|)`` time and ``O(H·m)`` memory for ``H`` slots.
    """
    slot, flow, amount = records
    if slot.size == 0:
        return records
    m = instance.num_ports
    src, dst = instance.flow_src, instance.flow_dst + m
    horizon = int(slot.max())
    usage = np.zeros((horizon + 1, 2 * m), dtype=np.int64)
    np.add.at(usage, (slot, src[flow]), amount)
    np.add.at(usage, (slot, dst[flow]), amount)
    plan: dict[int, list[list[int]]] = {}  # flow -> [[slot, amount], ...] by slot
    for i in np.lexsort((slot, flow)).tolist():
        plan.setdefault(int(flow[i]), []).append([int(slot[i]), int(amount[i])])
    last = np.zeros(instance.num_flows, dtype=np.int64)
    np.maximum.at(last, flow, slot)
    pending = np.asarray(sorted(plan, key=lambda e: int(rank[e])), dtype=np.int64)
    src_l, dst_l = src.tolist(), dst.tolist()
    for t in range(1, horizon + 1):
        idle_arr = capacity - usage[t]
        pending = pending[last[pending] > t]  # a flow done by t never becomes pending again
        # vectorized prefilter; the loop re-checks as idle capacity is used up
        ok = (first_slot[pending] <= t) & (idle_arr[src[pending]] > 0)
        ok &= idle_arr[dst[pending]] > 0
        if not ok.any():
            continue
        idle = idle_arr.tolist()
        free_in, free_out = sum(idle[:m]), sum(idle[m:])
        for e in pending[ok].tolist():
            if free_in <= 0 or free_out <= 0:
                break
            i, o = src_l[e], dst_l[e]
            want = min(idle[i], idle[o])
            if want <= 0:
                continue
            runs = plan[e]
            moved = 0
            while moved < want and runs and runs[-1][0] > t:
                s, q = runs[-1]
                take = min(q, want - moved)
                usage[s, i] -= take
                usage[s, o] -= take
                if take == q:
                    runs.pop()
                else:
                    runs[-1][1] -= take
                moved += take
            k = bisect.bisect_left(runs, t, key=lambda r: r[0])
            if k < len(runs) and runs[k][0] == t:
                runs[k][1] += moved
            else:
                runs.insert(k, [t, moved])
            last[e] = runs[-1][0]
            usage[t, i] += moved
            usage[t, o] += moved
            idle[i] -= moved
            idle[o] -= moved
            free_in -= moved
            free_out -= moved
    out = [(s, e, q) for e, runs in plan.items() for s, q in runs]
    return [np.array([r[k] for r in out], dtype=np.int64) for k in range(3)]


# ---------------------------------------------------------------- guarantee
def _guarantee(
    tau: np.ndarray, ell: np.ndarray, weight: np.ndarray, releases: bool, randomized: bool
) -> Guarantee:
    """The derived bound of the module docstring for grid points ``tau = τ_1 .. τ_Λ``
    (``τ_Λ`` virtual) and half-intervals ``ell``."""

    def up(x: np.ndarray) -> np.ndarray:  # ⌈x⌉ − x, blind to float noise on whole numbers
        return np.maximum(np.ceil(x - 1e-9 * np.maximum(x, 1.0)) - x, 0.0)

    a = float(tau[0])
    h = np.cumsum(up(2 * tau))[ell - 1]
    if releases:
        h = h + up(tau)[ell - 1]
    rounding = float(np.dot(weight, h))
    w1 = float(weight[ell == 1].sum())
    factor, lead = (20.0, 3.0) if releases else (16.0, 2.0)
    additive = lead * a * w1 + rounding
    case = "release dates" if releases else "zero release dates"
    return Guarantee(
        factor,
        "interval-lp",
        f"Σ w C ≤ {factor:g}·LP + {lead:g}·τ₁·w(G₁) + rounding = {factor:g}·LP + "
        f"{additive:.10g} (τ₁ = {a:.10g}, w(G₁) = {w1:.10g}, rounding {rounding:.10g}; "
        f"{case}, slotted model, every grid offset)"
        if randomized
        else f"Σ w C ≤ {factor:g}·LP + {lead:g}·τ₁·w(G₁) = {factor:g}·LP + {additive:.10g} "
        f"(τ₁ = {a:.10g}, w(G₁) = {w1:.10g}; {case}, slotted model)",
        QSZ_SOURCE,
        additive=additive,
    )


# ---------------------------------------------------------------- the methods
def _run(
    method: str,
    instance: Instance,
    *,
    offset: float | None,
    backfill: bool,
    options: SolverOptions | None,
) -> Solution:
    from coflowlab.formulations.bounds import completion_floor
    from coflowlab.formulations.interval_lp import solve_interval_lp_primal
    from coflowlab.formulations.time_indexed import first_slots, slotted_data

    start_time = time.perf_counter()
    size, capacity = slotted_data(instance, method)
    if instance.dependencies.size:
        pre, post = (int(x) for x in instance.dependencies[0])
        raise InvalidInstanceError(
            f"{method}: coflow {post} depends on coflow {pre}; the grouping ignores dependencies, "
            "so its schedule could violate them (use an exact method)"
        )
    floor = completion_floor(instance)
    # the earliest whole slot a coflow can complete by: a whole τ₁ keeps every 2τ_l whole
    whole = float(np.ceil(floor - 1e-9 * np.maximum(floor, 1.0)).min())
    a = whole if offset is None else whole * 2.0**offset
    lp = solve_interval_lp_primal(
        instance,
        options,
        first=a,
        last=float(floor.max()),
    )
    sol = lp.solution
    if sol.status is not SolveStatus.OPTIMAL or lp.cumulative is None:
        raise SolverError(
            f"{method}: the interval LP ended with status {sol.status.value} "
            f"({sol.message or 'no message'}); without its optimum there is no grouping or bound"
        )
    ell = half_interval_groups(lp.cumulative)
    levels = np.unique(ell)
    groups = [np.flatnonzero(ell == lev).tolist() for lev in levels]
    first = first_slots(instance)
    records, starts, spans = _group_schedule(instance, groups, size, capacity, first)
    ends = np.asarray(starts) + np.asarray(spans)
    group_end = np.zeros(instance.num_coflows)
    for g, members in enumerate(groups):
        group_end[members] = ends[g]
    order = tuple(k for members in groups for k in members)
    if backfill:
        rank = np.empty(instance.num_flows, dtype=np.int64)
        position = np.empty(instance.num_coflows, dtype=np.int64)
        position[list(order)] = np.arange(len(order))
        rank[np.lexsort((np.arange(instance.num_flows), position[instance.flow_coflow]))] = (
            np.arange(instance.num_flows)
        )
        records = _backfill(instance, records, rank, capacity, first)
    schedule = SlottedSchedule(instance.num_flows, *records)
    tau = np.append(lp.grid[1:], 2.0 * lp.grid[-1])  # τ_1 .. τ_Λ, the last one virtual
    guarantee = _guarantee(
        tau, ell, instance.coflow_weight, instance.has_releases, offset is not None
    )
    details: dict[str, Any] = {
        "rule": "half-interval",
        "grid": lp.grid.tolist(),
        "first": a,
        "offset": offset,
        "groups": groups,
        "group_interval": levels.tolist(),
        "group_start": [int(s) for s in starts],
        "group_rho": [int(s) for s in spans],
        "grouped_value": float(np.dot(instance.coflow_weight, group_end)),
        "lp_value": sol.objective,
        "lp_completion": sol.details.get("completion"),
        "lp_seconds": sol.runtime,
        "backfill": backfill,
    }
    return approximation_solution(
        method,
        instance,
        schedule,
        bound=sol.objective,
        bound_source="interval-lp",
        guarantee=guarantee,
        runtime=time.perf_counter() - start_time,
        order=order,
        solver=sol.solver,
        details=details,
    )


def solve_qsz(
    instance: Instance,
    options: SolverOptions | None = None,
    *,
    backfill: bool = False,
) -> Solution:
    """Qiu-Stein-Zhong grouping on the deterministic grid (module docstring), slotted model.

    Parameters
    ----------
    instance
        Integral sizes and port capacities (the slotted model); release dates are honoured;
        no dependencies.
    options
        Solver settings for the interval LP, see :class:`~coflowlab.solvers.SolverOptions`.
    backfill
        Fill idle port capacity with later units (never worse; off in the analysis).

    Returns
    -------
    Solution
        Kind ``approximation`` with a verified :class:`coflowlab.SlottedSchedule`; ``bound``
        is the interval LP on the grid used, ``guarantee`` the derived ``16·LP + 2τ₁·w(G₁)``
        (``20·LP + 3τ₁·w(G₁)`` with release dates). ``details``: the grid, the groups in
        order with their interval ``ℓ``, start and span ``ρ(D(G))``, the grouped value
        ``Σ w_j (start + ρ)`` the guarantee bounds (the verified objective is at most it:
        some coflows finish before their group's last slot), the LP's value and estimates.

    Raises
    ------
    InvalidInstanceError
        A size or a capacity is not whole (the message names the flow or the port), or the
        instance has dependencies.
    SolverError
        The LP did not solve to optimality.

    Examples
    --------
    Instance I1 (docs/theory.md#instances), one coflow: one group served in exactly ``ρ = 4``
    slots (docs/theory.md#f1).

    >>> from coflowlab.instances.examples import theory_i1
    >>> sol = solve_qsz(theory_i1())
    >>> sol.objective, sol.details["groups"], sol.details["group_rho"], round(sol.bound, 6)
    (4.0, [[0]], [4], 4.0)
    >>> sol.guarantee.holds(sol.objective, sol.bound)
    True
    """
    return _run(
        "qsz",
        instance,
        offset=None,
        backfill=backfill,
        options=options,
    )


def solve_qsz_random(
    instance: Instance,
    options: SolverOptions | None = None,
    *,
    seed: int | np.random.Generator | None = 0,
    backfill: bool = False,
) -> Solution:
    """Qiu-Stein-Zhong grouping on a randomly shifted grid ``τ_l = a₀·2^{l−1+U}``.

    ``a₀ = min_j ⌈e_j⌉`` and ``U`` is uniform in ``[0, 1)``, drawn from
    ``numpy.random.default_rng(seed)`` (the same seed gives the same grid and schedule).
    The guarantee is the deterministic one for the grid drawn, with the rounding term of the
    module docstring (grid points are not whole); no expected ratio is claimed.

    Parameters
    ----------
    instance, options, backfill
        As :func:`solve_qsz` (``options``: solver settings, see
        :class:`~coflowlab.solvers.SolverOptions`).
    seed
        Seed or generator for ``U``.

    Returns
    -------
    Solution
        As :func:`solve_qsz`; ``details["offset"]`` is ``U``.

    Examples
    --------
    >>> from coflowlab.instances.examples import theory_i1
    >>> sol = solve_qsz_random(theory_i1(), seed=1)
    >>> sol.objective, 0 <= sol.details["offset"] < 1
    (4.0, True)
    """
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    offset = float(rng.random())
    return _run(
        "qsz-random",
        instance,
        offset=offset,
        backfill=backfill,
        options=options,
    )
