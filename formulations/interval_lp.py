"""The interval-indexed LP on a geometric grid (Qiu, Stein & Zhong, SPAA 2015 style;
docs/theory.md#interval-lp): a lower bound on coflow OPT.

We could not check the LP's exact form in the paper; the form below is this
module's, and its validity is argued here (our derivation), not taken from the paper.

Grid. ``τ_0 = 0`` and ``τ_l = τ_1 · base^(l−1)`` for ``l = 1 .. Λ−1``; the last interval
``(τ_{Λ−1}, ∞)`` is unbounded. By default ``τ_1 = min_j e_j`` (no coflow completes earlier;
``e_j`` is the completion floor of :func:`coflowlab.formulations.bounds.completion_floor`,
``r_j + ρ_j`` in the usual case) and ``τ_{Λ−1}`` is the first grid point at or above the
busiest port's total time ``max_v Σ_j p[j, v]``. The basic form's grid is ``first=1, base=2``
(unit slots).

Variables. ``X[j, l] ∈ [0, 1]`` for ``l < Λ``: "coflow ``j`` is complete by ``τ_l``"
(cumulative form; ``X[j, Λ] = 1``; the basic form's ``x[j, l] = X[j, l] − X[j, l−1]``)::

    min  Σ_j w_j Σ_l c[j, l] (X[j, l] − X[j, l−1]),     c[j, l] = max(τ_{l−1}, e_j)
    s.t. Σ_j p[j, v] X[j, l] ≤ τ_l                        ∀ ports v, l < Λ
         X[j, l−1] ≤ X[j, l]                              ∀ j, l
         X[j, l] = 0   when τ_l < e_j                     (the basic form's "r_j + ρ_j > τ_l")

Validity (LP ≤ OPT, our derivation): take any feasible schedule and set ``X[j, l] = 1`` exactly
when ``C_j ≤ τ_l``, so ``x[j, ·]`` marks the interval ``(τ_{l−1}, τ_l]`` holding ``C_j`` (the
unbounded last interval holds every later ``C_j``, so no horizon is needed).

1. Coflows complete by ``τ_l`` have sent all their data through port ``v`` within
   ``[0, τ_l]``, which takes their total time there: the load rows hold.
2. ``C_j ≥ e_j`` and ``C_j > τ_{l−1}`` in its interval, so its cost ``c[j, l] ≤ C_j``.
3. ``C_j ≥ e_j > τ_l`` forces ``X[j, l] = 0``.

So every schedule gives a feasible point of no larger cost. The grid only affects
strength: a completion in ``(τ_{l−1}, τ_l]``, ``l ≥ 2``, is charged at least ``1/base`` of
its value, and the load rows only see ``Λ − 1`` time points, so the LP is weak (about
0.5-0.6 of OPT on our random instances; on the Facebook trace without releases, 0.68
of the parallel-inequality LP). Grid points beyond the busiest port's total time would not
change the value: their load rows cannot bind.

Scope: fluid model with port capacities and release dates (so also a bound for the slotted
model, whose optimum is at least the fluid one). Coflow dependencies and deadlines are
ignored: dropping constraints keeps a lower bound.

Deviation from the basic form: the charge ``max(τ_{l−1}, e_j)`` instead of ``τ_{l−1}``
(``floor=False`` restores the basic form's). It is still at most ``C_j`` (argument 2), never lowers
the value, and makes a single coflow's bound exact (``w ρ``, docs/theory.md#f1, #instances I1).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from coflowlab.exceptions import ModelTooLargeError
from coflowlab.instance import Instance
from coflowlab.solution import Solution, SolutionKind, bound_solution
from coflowlab.solvers import ModelBuilder, SolveResult, SolverOptions, solve

from .lp_ov import completion_order, port_times

__all__ = [
    "MAX_INTERVALS",
    "IntervalLPPrimal",
    "interval_grid",
    "solve_interval_lp",
    "solve_interval_lp_primal",
]

MAX_INTERVALS = 10_000
"""Most grid intervals (a base close to 1 or a tiny ``first`` would make the model huge)."""


def interval_grid(first: float, last: float, base: float = 2.0) -> np.ndarray:
    """``[τ_0 = 0, τ_1 = first, first·base, …]`` up to the first point ``≥ last``.

    Examples
    --------
    >>> interval_grid(1.0, 5.0).tolist()
    [0.0, 1.0, 2.0, 4.0, 8.0]
    >>> interval_grid(3.0, 2.0).tolist()
    [0.0, 3.0]
    """
    if not (base > 1 and math.isfinite(base)):
        raise ValueError(f"base must be a finite number above 1, got {base!r}")
    if not (first > 0 and math.isfinite(first)):
        raise ValueError(f"first must be a positive finite time, got {first!r}")
    steps = max(0, math.ceil(math.log(max(last, first) / first, base) - 1e-12))
    if steps + 2 > MAX_INTERVALS:
        raise ModelTooLargeError(
            f"interval-lp: the grid from {first:g} to {last:g} with base {base:g} needs "
            f"{steps + 2:,} points, above the limit of {MAX_INTERVALS:,}; use a larger base "
            "or a larger first point"
        )
    points = first * base ** np.arange(steps + 1, dtype=float)
    if points[-1] < last:  # rounding in the logarithm
        points = np.append(points, points[-1] * base)
    return np.concatenate([[0.0], points])


def solve_interval_lp(
    instance: Instance,
    options: SolverOptions | None = None,
    *,
    base: float = 2.0,
    first: float | None = None,
    floor: bool = True,
) -> Solution:
    """The interval-indexed LP (module docstring; docs/theory.md#interval-lp): a lower bound on
    coflow OPT.

    Parameters
    ----------
    instance
        The instance (release dates and port capacities are honoured).
    options
        Solver settings, see :class:`~coflowlab.solvers.SolverOptions` (``mip_gap`` does
        not apply: this is an LP).
    base
        Ratio of consecutive grid points, above 1 (docs/theory.md#interval-lp: 2).
    first
        ``τ_1`` in the instance's time unit; default the smallest completion floor.
    floor
        Charge ``max(τ_{l−1}, e_j)`` (default) rather than the basic form's ``τ_{l−1}``.

    Returns
    -------
    Solution
        Kind ``relaxation``; ``order`` by the LP completion estimates
        ``C̄_j = Σ_l c[j, l] x[j, l]`` (ties by index; ``Σ_j w_j C̄_j`` is the LP value).
        ``details``: the grid, model sizes, seconds, ``completion`` (the ``C̄_j``).

    Examples -------- Instance I1 (docs/theory.md#instances) (one coflow, ρ = 4): the bound is
    exact. With the basic form's charge ``τ_{l−1}`` it is only 2 (the completion lies in ``(2,
    4]``).

    >>> from coflowlab.instances.examples import theory_i1
    >>> round(solve_interval_lp(theory_i1()).objective, 9)
    4.0
    >>> round(solve_interval_lp(theory_i1(), first=1.0, floor=False).objective, 9)
    2.0
    """
    return solve_interval_lp_primal(
        instance,
        options,
        base=base,
        first=first,
        floor=floor,
    ).solution


@dataclass(frozen=True, eq=False)
class IntervalLPPrimal:
    """The interval LP's solution with its primal values (for rounding algorithms such as
    Qiu-Stein-Zhong's grouping, :mod:`coflowlab.approximations.qsz`).

    Attributes
    ----------
    solution
        What :func:`solve_interval_lp` returns.
    grid
        ``(Λ,)`` the grid ``τ_0 = 0, τ_1, …, τ_{Λ−1}`` in the instance's time unit; interval
        ``l`` is ``(τ_{l−1}, τ_l]`` for ``l < Λ`` and ``(τ_{Λ−1}, ∞)`` for ``l = Λ``.
    cumulative
        ``(n, Λ)`` the optimal ``X[j, l]``, column ``l − 1`` for interval ``l`` ("``j`` is
        complete by ``τ_l``"), the last column all ones; ``None`` without a solution.
    charge
        ``(n, Λ)`` the charges ``c[j, l]`` in the instance's time unit, so that
        ``C̄_j = Σ_l c[j, l] (X[j, l] − X[j, l−1])`` and the LP value is ``Σ_j w_j C̄_j``.
    """

    solution: Solution
    grid: npt.NDArray[np.float64]
    cumulative: npt.NDArray[np.float64] | None
    charge: npt.NDArray[np.float64]


def solve_interval_lp_primal(
    instance: Instance,
    options: SolverOptions | None = None,
    *,
    base: float = 2.0,
    first: float | None = None,
    floor: bool = True,
    last: float | None = None,
) -> IntervalLPPrimal:
    """:func:`solve_interval_lp` with its primal values (:class:`IntervalLPPrimal`).

    ``options`` are the solver settings, see :class:`~coflowlab.solvers.SolverOptions`.
    ``last`` (instance time unit) extends the grid until a point is at least ``last``
    (default: the busiest port's total time only). Any grid gives a valid LP (module
    docstring); extra points only add intervals.

    Examples
    --------
    >>> from coflowlab.instances.examples import theory_i1
    >>> p = solve_interval_lp_primal(theory_i1(), first=1.0)
    >>> p.grid.tolist(), p.cumulative.shape, p.cumulative[0, :2].tolist()  # X = 0 before ρ = 4
    ([0.0, 1.0, 2.0, 4.0], (1, 4), [0.0, 0.0])
    """
    start = time.perf_counter()
    pt = port_times(instance)
    P = pt.times.tocsc()
    n = instance.num_coflows
    e = pt.floor
    port_total = np.asarray(P.sum(axis=0)).ravel()
    tau1 = float(e.min()) if first is None else float(first) / pt.scale
    reach = float(port_total.max(initial=0.0))
    if last is not None:
        reach = max(reach, float(last) / pt.scale)
    grid = interval_grid(tau1, reach, base)
    L = len(grid)  # intervals 1..L: (τ_{l-1}, τ_l] for l < L, then (τ_{L-1}, ∞)
    bounded = grid[1:]  # τ_1 .. τ_{L-1}: the points with a variable X[:, l]
    nb = bounded.size
    charge = grid[:L]  # c[:, l] for l = 1..L uses τ_{l-1}
    c = np.maximum(charge[None, :], e[:, None]) if floor else np.broadcast_to(charge, (n, L))
    w = instance.coflow_weight
    # Σ_l c_l (X_l − X_{l−1}) with X_0 = 0, X_L = 1: X_l gets c_l − c_{l+1}, offset c_L
    cost = (w[:, None] * (c[:, :nb] - c[:, 1 : nb + 1])).ravel()
    upper = np.where(bounded[None, :] < e[:, None] * (1 - 1e-12), 0.0, 1.0).ravel()

    builder = ModelBuilder("interval-lp")
    builder.add_variables("X", n * nb, cost=cost, lower=0.0, upper=upper)
    builder.offset = float(np.dot(w, c[:, L - 1]))
    # X[j, l] − X[j, l+1] ≤ 0
    j_idx = np.repeat(np.arange(n), nb - 1)
    l_idx = np.tile(np.arange(nb - 1), n)
    if nb > 1:
        var = j_idx * nb + l_idx
        rows = np.repeat(np.arange(var.size), 2)
        cols = np.column_stack([var, var + 1]).ravel()
        vals = np.tile([1.0, -1.0], var.size)
        builder.add_rows(
            "monotone",
            sp.csr_matrix((vals, (rows, cols)), shape=(var.size, n * nb)),
            upper=0.0,
        )
    # Σ_j p[j, v] X[j, l] ≤ τ_l, only where the port's total exceeds τ_l (else slack)
    counts = np.diff(P.indptr)
    entry_port = np.repeat(np.arange(P.shape[1]), counts)
    active = port_total[:, None] > bounded[None, :] * (1 + 1e-12)  # (2m, nb)
    port_ids, point_ids = np.nonzero(active)
    row_of = -np.ones(active.shape, dtype=np.int64)
    row_of[port_ids, point_ids] = np.arange(port_ids.size)
    per_entry = active[entry_port]  # (entries, nb)
    ent, lev = np.nonzero(per_entry)
    builder.add_rows(
        "load",
        sp.csr_matrix(
            (P.data[ent], (row_of[entry_port[ent], lev], P.indices[ent] * nb + lev)),
            shape=(port_ids.size, n * nb),
        ),
        upper=bounded[point_ids],
    )
    model = builder.build()
    build_seconds = time.perf_counter() - start
    result = solve(model, options)

    order, completion = None, None
    cumulative = None
    value = math.nan
    if result.x is not None and result.has_solution:
        X = np.concatenate([result.x.reshape(n, nb), np.ones((n, 1))], axis=1)
        cumulative = X
        x = np.diff(X, axis=1, prepend=0.0)
        estimate = (c * x).sum(axis=1) * pt.scale
        order = completion_order(estimate)
        completion = estimate.tolist()
        value = result.objective * pt.scale
    else:
        result = SolveResult(
            result.status,
            math.nan,
            result.bound * pt.scale,
            result.gap,
            result.runtime,
            None,
            result.solver,
            result.message,
        )
    details = {
        "relaxation": "interval-indexed LP",
        "base": base,
        "first": float(grid[1] * pt.scale),
        "intervals": L,
        "grid": (grid * pt.scale).tolist(),
        "charge": "max(tau_{l-1}, e_j)" if floor else "tau_{l-1}",
        "variables": model.num_vars,
        "rows": model.num_rows,
        "nonzeros": int(model.A.nnz),
        "build_seconds": build_seconds,
        "solve_seconds": result.runtime,
        "completion": completion,
    }
    solution = bound_solution(
        "interval-lp",
        SolutionKind.RELAXATION,
        instance,
        value,
        result,
        runtime=time.perf_counter() - start,
        order=order,
        details=details,
    )
    return IntervalLPPrimal(solution, grid * pt.scale, cumulative, np.asarray(c) * pt.scale)
