"""The LP with parallel inequalities on the ``2m`` ports (Queyranne's polytope per port,
docs/theory.md#parallel-lp), solved by cutting planes with exact separation: a lower bound on
coflow OPT.

Each port ``v`` is a machine of the concurrent-open-shop relaxation (docs/theory.md#cos) with
processing times ``p[j, v]`` (coflow ``j``'s time on ``v``: load / capacity). The LP is::

    min  Σ_j w_j C_j
    s.t. Σ_{j ∈ S} p[j, v] C_j ≥ r(S) p_v(S) + ½ (p_v(S)² + Σ_{j ∈ S} p[j, v]²)
                                                   ∀ ports v, ∀ S ⊆ {j : p[j, v] > 0}
         C_j ≥ e_j                                 ∀ j

where ``p_v(S) = Σ_{j∈S} p[j, v]`` and ``e_j`` is the completion floor
(:func:`coflowlab.formulations.bounds.completion_floor`: ``r_j + ρ_j``, hence at least the
usual ``r_j + p[j, v]`` on every port).

``r(S)``: the basic form's inequalities have ``r(S) = 0``. With release dates this module uses
by default ``r(S) = min_{j ∈ S} r_j`` (the release-shifted form of Goemans' and of
Hall-Schulz-Shmoys-Wein's single-machine LPs; ``release_cuts=False`` gives the basic form).
Since ``r ≥ 0`` the shifted form implies the plain one, so it is at least as strong; on
the Facebook trace, where releases spread over an hour, it is the only one of these LPs
above ``Σ_j w_j (r_j + ρ_j)``.

Validity (LP ≤ OPT) (our derivation), in the fluid model (and so in the slotted one): fix a
schedule, a port ``v`` and ``S``. Let ``ρ_j(t)`` be the rate at which port ``v`` carries coflow
``j``'s data (in time units: ``Σ_j ρ_j(t) ≤ 1``), zero before ``r_j`` and after ``C_j``, with ``∫
ρ_j = p_j := p[j, v]``. Its mean busy time ``M_j = ∫ t ρ_j(t) dt / p_j`` satisfies ``M_j ≤ C_j −
p_j/2`` (a rate-≤1 profile of mass ``p_j`` ending by ``C_j`` has its mean at least ``p_j/2`` before
``C_j``). The profiles of ``S`` together have rate at most 1 and start at ``r(S)`` or later, so
``Σ_S p_j M_j = ∫ t Σ_S ρ_j ≥ ∫_{r(S)}^{r(S)+p_v(S)} t dt = p_v(S) (r(S) + p_v(S)/2)``. Hence ``Σ_S
p_j C_j ≥ Σ_S p_j M_j + Σ_S p_j²/2 ≥`` the right-hand side. ``C_j ≥ e_j`` by definition.

Scope: fluid model with port capacities and release dates (so also a bound for the slotted
model, whose optimum is at least the fluid one). Coflow dependencies and deadlines are
ignored: dropping constraints keeps a lower bound.

Separation (exact; our derivation for the shifted form): for a port and a threshold ``t`` (a
release date), the most violated ``S`` among the coflows released at ``t`` or later is a prefix of
them sorted by current ``C_j`` (removing ``j`` from an optimal ``S`` changes the violation by
``−p_j (t + p_v(S) − C_j)`` and adding ``i`` by ``p_i (t + p_v(S) + p_i − C_i)``: in ``S`` the
``C`` are at most ``t + p_v(S)``, outside above it; Queyranne's argument with ``t = 0``). So each
round checks every prefix per port and threshold (``O(n log n)`` per port without releases,
``O(n²)`` with), adds per port the most violated one above the tolerance (relative to the
right-hand side), and re-solves, until none is left. The value of every round is a lower bound (it
relaxes the full LP); ``details`` reports rounds, cuts and the largest violation left.
"""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from coflowlab.instance import Instance
from coflowlab.solution import Solution, SolutionKind, bound_solution
from coflowlab.solvers import ModelBuilder, SolveResult, SolverOptions, SolveStatus, solve

from .lp_ov import completion_order, port_times

__all__ = ["separate_parallel", "solve_parallel_lp"]

_CHUNK = 4_000_000  # padded cells per separation chunk (ports × thresholds × coflows)


def separate_parallel(
    times: sp.csc_array,
    completion: npt.ArrayLike,
    release: npt.ArrayLike | None = None,
    *,
    tol: float = 1e-6,
) -> tuple[sp.csr_matrix, npt.NDArray[np.float64], float]:
    """Exact separation of the parallel inequalities: per port, the most violated set.

    Parameters
    ----------
    times
        ``(n, V)`` port times (CSC), ``p[j, v]``.
    completion
        ``(n,)`` current ``C_j``.
    release
        ``(n,)`` release dates for the shifted form, or ``None`` for ``r(S) = 0``.
    tol
        Per port, the most violated set (largest absolute violation, the one the prefix
        argument finds) becomes a cut when its violation exceeds ``tol`` times its
        right-hand side.

    Returns
    -------
    rows, lower, worst
        The cuts as rows ``rows · C ≥ lower`` (one per port with a violated set, scaled by
        ``1 / p_v(S)``, so that coefficients sum to 1 and ``lower`` is a time), and the
        largest relative violation (violation / right-hand side) over all prefixes checked
        (0 if none is violated).

    Examples
    --------
    One port, ``p = (1, 1)``: ``C = (1, 1)`` violates ``C_0 + C_1 ≥ (4 + 2)/2 = 3`` by a third.

    >>> rows, lower, worst = separate_parallel(sp.csc_array([[1.0], [1.0]]), [1.0, 1.0])
    >>> rows.toarray().tolist(), lower.tolist(), round(worst, 3)
    ([[0.5, 0.5]], [1.5], 0.333)
    """
    P = sp.csc_array(times)
    n, V = P.shape
    C = np.asarray(completion, dtype=float)
    counts = np.diff(P.indptr)
    ports = np.flatnonzero(counts > 0)
    if ports.size == 0:
        return sp.csr_matrix((0, n)), np.zeros(0), 0.0
    # entries sorted by (port, C, coflow)
    entry_port = np.repeat(np.arange(V), counts)
    job = P.indices.astype(np.int64)
    order = np.lexsort((job, C[job], entry_port))
    job, p, entry_port = job[order], P.data[order], entry_port[order]
    position = np.arange(job.size) - P.indptr[entry_port]
    r = np.zeros(n) if release is None else np.asarray(release, dtype=float)

    cut_rows: list[np.ndarray] = []
    cut_cols: list[np.ndarray] = []
    cut_vals: list[np.ndarray] = []
    lowers: list[np.ndarray] = []
    worst, found = 0.0, 0
    width = int(counts.max())
    thresholds = width if release is not None else 1
    block = min(thresholds, max(1, _CHUNK // width))  # thresholds evaluated at once
    step = max(1, _CHUNK // (block * width))  # ports evaluated at once
    for lo in range(0, ports.size, step):
        chunk = ports[lo : lo + step]
        k = chunk.size
        slot = np.full(V, -1)
        slot[chunk] = np.arange(k)
        mine = slot[entry_port] >= 0
        s, pos = slot[entry_port[mine]], position[mine]
        Pm = np.zeros((k, width))
        Cm = np.zeros((k, width))
        Rm = np.zeros((k, width))
        Jm = np.full((k, width), -1)
        Pm[s, pos], Cm[s, pos], Rm[s, pos], Jm[s, pos] = (
            p[mine],
            C[job[mine]],
            r[job[mine]],
            job[mine],
        )
        valid = Jm >= 0
        best_gap = np.full(k, -np.inf)
        best_rel = np.full(k, -np.inf)
        best_t = np.zeros(k)
        best_b = np.zeros(k, dtype=np.int64)
        for t0 in range(0, thresholds, block):
            if release is None:
                T = np.zeros((k, 1))
                E = valid[:, None, :]
            else:  # thresholds: the releases of the port's coflows
                tv = valid[:, t0 : t0 + block]
                T = np.where(tv, Rm[:, t0 : t0 + block], np.inf)
                E = valid[:, None, :] & (Rm[:, None, :] >= T[:, :, None])
                T = np.where(tv, T, 0.0)
            pe = np.where(E, Pm[:, None, :], 0.0)
            ps = np.cumsum(pe, axis=2)
            pc = np.cumsum(pe * Cm[:, None, :], axis=2)
            pq = np.cumsum(pe * Pm[:, None, :], axis=2)
            rhs = T[:, :, None] * ps + 0.5 * (ps * ps + pq)
            gap = np.where(E, rhs - pc, -np.inf).reshape(k, -1)  # absolute: exact separation
            relative = np.where(
                E.reshape(k, -1), gap / np.maximum(rhs.reshape(k, -1), 1e-300), -np.inf
            )
            worst = max(worst, float(relative.max(initial=0.0)))
            arg = gap.argmax(axis=1)
            here = np.arange(k)
            better = gap[here, arg] > best_gap
            a, b = np.divmod(arg, width)
            best_gap = np.where(better, gap[here, arg], best_gap)
            best_rel = np.where(better, relative[here, arg], best_rel)
            best_t = np.where(better, T[here, a], best_t)
            best_b = np.where(better, b, best_b)
        hit = np.flatnonzero(best_rel > tol)
        if hit.size == 0:
            continue
        # the set: the coflows released at the threshold or later, up to position b
        members = (
            valid[hit]
            & (Rm[hit] >= best_t[hit, None])
            & (np.arange(width)[None, :] <= best_b[hit, None])
        )
        row_local, col_pos = np.nonzero(members)
        q = np.where(members, Pm[hit], 0.0)
        total = q.sum(axis=1)
        cut_rows.append(row_local + found)
        found += hit.size
        cut_cols.append(Jm[hit[row_local], col_pos])
        cut_vals.append(Pm[hit[row_local], col_pos] / total[row_local])
        rhs_best = best_t[hit] * total + 0.5 * (total * total + (q * q).sum(axis=1))
        lowers.append(rhs_best / total)
    if not lowers:
        return sp.csr_matrix((0, n)), np.zeros(0), worst
    lower = np.concatenate(lowers)
    rows = sp.csr_matrix(
        (np.concatenate(cut_vals), (np.concatenate(cut_rows), np.concatenate(cut_cols))),
        shape=(lower.size, n),
    )
    return rows, lower, worst


def solve_parallel_lp(
    instance: Instance,
    options: SolverOptions | None = None,
    *,
    release_cuts: bool = True,
    tol: float = 1e-6,
    max_rounds: int = 500,
    purge: bool = True,
) -> Solution:
    """The parallel-inequality LP (module docstring; docs/theory.md#parallel-lp) by cutting planes.

    Parameters
    ----------
    instance
        The instance (release dates and port capacities are honoured).
    options
        Solver settings, see :class:`~coflowlab.solvers.SolverOptions` (``mip_gap`` does
        not apply: these are LPs); ``time_limit`` covers all rounds.
    release_cuts
        Use the release-shifted inequalities (default; the same as the basic form's without
        release dates).
    tol
        Stop when no inequality is violated by more than ``tol`` times its right-hand side.
    max_rounds
        Most LP solves.
    purge
        After a solve that raised the value, drop the cuts slack at its optimum (the point
        stays optimal without them, so the value never decreases from round to round);
        keeps the LPs small. Only after a rise: the LPs are degenerate, and dropping cuts at
        an unchanged value lets the solver move between optimal points forever. The loop
        still ends: between rises the cut set only grows, and there are finitely many cuts.

    Returns
    -------
    Solution
        Kind ``relaxation``; ``order`` by the LP's ``C_j`` (ties by index). Stopped by
        ``max_rounds`` or ``time_limit`` before convergence, the status is ``time_limit``
        and the value is the last round's, still a lower bound (but below the full LP).
        ``details``: ``rounds``, ``cuts`` (added in all), ``rows`` (of the last LP),
        ``max_violation``
        (relative, of the returned point), ``converged``, sizes, seconds, ``completion``.

    Examples -------- Instance I3 (docs/theory.md#instances): OPT = 4 and the LP is 4 (``C_A = C_B
    = 1``, ``C_C = 2``).

    >>> from coflowlab.instances.examples import theory_i3
    >>> sol = solve_parallel_lp(theory_i3())
    >>> round(sol.objective, 9), sol.details["converged"]
    (4.0, True)
    """
    start = time.perf_counter()
    options = options or SolverOptions()
    deadline = None if options.time_limit is None else start + options.time_limit
    pt = port_times(instance)
    n = instance.num_coflows
    w = instance.coflow_weight
    release = (
        instance.coflow_release / pt.scale if release_cuts and instance.has_releases else None
    )
    C = pt.floor.copy()  # the optimum with no cut (w ≥ 0)
    rows: list[sp.csr_matrix] = []
    lowers: list[np.ndarray] = []
    rounds, cuts, value = 0, 0, float(np.dot(w, C))
    result: SolveResult | None = None
    converged, stopped = False, False
    solve_seconds = 0.0
    separation_seconds = 0.0
    model_rows, model_nonzeros = 0, 0
    while True:
        tic = time.perf_counter()
        new, low, worst = separate_parallel(pt.times, C, release, tol=tol)
        separation_seconds += time.perf_counter() - tic
        if low.size == 0:
            converged = True
            break
        if rounds >= max_rounds or (deadline is not None and time.perf_counter() >= deadline):
            stopped = True
            break
        rows.append(new)
        lowers.append(low)
        cuts += low.size
        builder = ModelBuilder("parallel-lp")
        builder.add_variables("C", n, cost=w, lower=pt.floor)
        stacked = sp.vstack(rows, format="csr")
        model_rows, model_nonzeros = stacked.shape[0], int(stacked.nnz)
        builder.add_rows("parallel", stacked, lower=np.concatenate(lowers))
        remaining = None if deadline is None else max(deadline - time.perf_counter(), 1e-3)
        result = solve(builder.build(), replace(options, time_limit=remaining))
        rounds += 1
        solve_seconds += result.runtime
        if result.x is None or not result.has_solution:  # keep the previous point: a bound
            stopped = True
            break
        improved = result.objective > value + 1e-9 * max(1.0, abs(value))
        C, value = result.x.copy(), result.objective
        if purge and improved:  # drop cuts slack at the optimum: it stays optimal without them
            A = sp.vstack(rows, format="csr")
            low = np.concatenate(lowers)
            tight = A @ C - low <= 1e-7 * np.maximum(1.0, np.abs(low))
            rows, lowers = [A[tight]], [low[tight]]
    out = value * pt.scale
    final = SolveResult(
        SolveStatus.TIME_LIMIT if stopped else SolveStatus.OPTIMAL, out, out, 0.0,
        solve_seconds, C, options.solver, "" if result is None else result.message,
    )  # fmt: skip
    details = {
        "relaxation": "parallel inequalities (Queyranne) per port",
        "release_cuts": release is not None,
        "rounds": rounds,
        "cuts": cuts,
        "max_violation": worst,
        "converged": converged,
        "tolerance": tol,
        "variables": n,
        "rows": model_rows,
        "nonzeros": model_nonzeros,
        "solve_seconds": solve_seconds,
        "separation_seconds": separation_seconds,
        "completion": (C * pt.scale).tolist(),
    }
    return bound_solution(
        "parallel-lp",
        SolutionKind.RELAXATION,
        instance,
        out,
        final,
        runtime=time.perf_counter() - start,
        order=completion_order(C),
        details=details,
    )
