"""The ordering-variable LP of Shafiee and Ghaderi (LP-OV, docs/theory.md#lp-ov) and its
binary-δ version, the concurrent-open-shop (COS) relaxation (docs/theory.md#cos, #lp-ov).

Notation: ``p[k, v]`` is coflow ``k``'s time on port ``v`` alone (load / capacity, ports
``0..2m-1``, ingress first), ``e_k`` its completion floor
(:func:`coflowlab.formulations.bounds.completion_floor`; ``r_k + ρ_k`` when flows are released
with their coflow), ``δ[k', k] = 1`` means "``k'`` is ordered before ``k``". The LP is::

    min  Σ_k w_k f_k
    s.t. f_k ≥ p[k, v] + Σ_{k' ≠ k, p[k', v] > 0} p[k', v] δ[k', k]   ∀ v, ∀ k with p[k, v] > 0
         f_k ≥ e_k                                                    ∀ k
         δ[k, k'] + δ[k', k] = 1,  0 ≤ δ ≤ 1                          ∀ k ≠ k' sharing a port

Sparse form (what makes the 526-coflow Facebook trace tractable):

- a port row exists only for a coflow that uses the port, and holds only the coflows that use
  it too; a row of a coflow that does not use port ``v`` would constrain nothing that
  ``C_k`` must satisfy (``k`` does not wait for ``v``);
- a pair that shares no port appears in no row, so it gets no variable;
- ``δ[k', k] = 1 − δ[k, k']``: one variable ``y[a, b] = δ[a, b]`` per pair ``a < b`` that
  shares a port; the equality rows disappear.

Validity (LP ≤ OPT, our derivation): order any feasible schedule's coflows by completion time and
set ``δ`` to that order, ``f = C``. By ``C_k`` every coflow before ``k`` and ``k`` itself have sent
all their data through every port ``v`` that ``k`` uses, which takes at least their total time
there: the port rows hold. ``C_k ≥ e_k`` by definition of the floor.

Scope: fluid model with port capacities and release dates (so also a bound for the slotted
model, whose optimum is at least the fluid one). Coflow dependencies and deadlines are
ignored: dropping constraints keeps a lower bound.

Erratum (docs/theory.md#lp-ov-erratum): a public MATLAB implementation writes the floor as ``−f_k ≤
ρ_k + r_k``, sums all pairs of ``k`` into one row and declares δ binary. None of this applies here:
one row per pair (eliminated exactly), the floor as a lower bound, δ continuous.

Binary δ [D, found while writing this module]: the theory states that LP-OV with integral
δ is the COS optimum. That needs the orientation to be *acyclic*: with ``δ`` binary and
only ``δ[a, b] + δ[b, a] = 1``, a cyclic orientation (a tournament with a 3-cycle) is
allowed and can be strictly cheaper than every permutation. A case found by enumerating
all orientations of random small instances has 5 jobs on 3 machines
(:func:`cyclic_gap_instance`): 40 with a cycle, 41 for the best permutation (= OPT_COS).
:func:`solve_lp_ov_binary` therefore adds cycle cuts ``Σ_{arcs of C} δ ≤ |C| − 1`` lazily
until the orientation is acyclic; its value is then ``min`` over coflow orders of
``Σ_k w_k max(e_k, max_v prefix time on v)``, which is OPT_COS without release dates, and a
lower bound on coflow OPT in all cases.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp
from scipy.sparse import csgraph

from coflowlab.exceptions import ModelTooLargeError
from coflowlab.instance import Instance
from coflowlab.solution import Solution, SolutionKind, bound_solution
from coflowlab.solvers import (
    LinearModel,
    ModelBuilder,
    SolveResult,
    SolverOptions,
    SolveStatus,
    relative_gap,
    solve,
)

from .bounds import completion_floor

__all__ = [
    "MAX_NONZEROS",
    "LPOVModel",
    "PortTimes",
    "build_lp_ov",
    "completion_order",
    "cyclic_gap_instance",
    "port_times",
    "solve_lp_ov",
    "solve_lp_ov_binary",
]

MAX_NONZEROS = 40_000_000
"""Default limit on the LP-OV matrix's nonzeros (about 0.5 GB for the model alone; the
Facebook trace needs 1.6 million)."""


# ---------------------------------------------------------------- shared by the relaxations
@dataclass(frozen=True)
class PortTimes:
    """Port times of an instance in the form the relaxations build from.

    Attributes
    ----------
    times
        ``(n, 2m)`` CSC matrix of ``p[k, v] / scale``: only the loads that exist.
    floor
        ``(n,)`` completion floors ``e_k / scale``.
    scale
        The time unit the models work in (a power of two near the median positive port
        time, so that the LPs' coefficients are near 1 whatever the trace's unit); values
        in it are multiplied by ``scale`` to return to the instance's unit. Exact:
        multiplying by a power of two does not round.
    """

    times: sp.csc_array
    floor: npt.NDArray[np.float64]
    scale: float


def port_times(instance: Instance) -> PortTimes:
    """The instance's port times, floors and working time unit (see :class:`PortTimes`).

    Examples
    --------
    >>> from coflowlab.instances.examples import theory_i1
    >>> pt = port_times(theory_i1())
    >>> pt.scale, (pt.times.toarray() * pt.scale).tolist(), (pt.floor * pt.scale).tolist()
    (4.0, [[3.0, 3.0, 4.0, 2.0]], [4.0])
    """
    loads = sp.csc_array(instance.port_load_sparse())
    cap = instance.fabric.port_capacity
    times = sp.csc_array(loads @ sp.diags_array(1.0 / cap))
    times.sum_duplicates()
    times.eliminate_zeros()
    positive = times.data[times.data > 0]
    scale = 2.0 ** round(math.log2(float(np.median(positive)))) if positive.size else 1.0
    times = sp.csc_array(times / scale)
    times.sort_indices()
    return PortTimes(times, completion_floor(instance) / scale, scale)


def completion_order(values: npt.ArrayLike) -> tuple[int, ...]:
    """Coflows by an LP's completion estimates, ascending, ties by index.

    Values equal to 1e-9 relative (the solvers' precision) count as ties, so the order does
    not depend on the last digits of a solve.

    Examples
    --------
    >>> completion_order([2.0, 1.0, 2.0 + 1e-12, 0.5])
    (3, 1, 0, 2)
    """
    v = np.asarray(values, dtype=float)
    if v.size == 0:
        return ()
    unit = max(float(np.abs(v).max()), 1e-300) * 1e-9
    key = np.round(v / unit)
    return tuple(int(k) for k in np.lexsort((np.arange(v.size), key)))


# ---------------------------------------------------------------- the model
@dataclass(frozen=True, eq=False)
class LPOVModel:
    """The LP-OV model and how to read it back.

    Attributes
    ----------
    model
        The sparse model: ``f`` (``n`` variables), then ``y`` (one per pair sharing a port).
    pair_a, pair_b
        ``(P,)`` the pairs ``a < b``; ``y[i] = δ[pair_a[i], pair_b[i]]`` ("``a`` first").
    scale
        The time unit (see :class:`PortTimes`); the objective is in it.
    build_seconds
        Wall time of the construction.
    """

    model: LinearModel
    pair_a: npt.NDArray[np.int64]
    pair_b: npt.NDArray[np.int64]
    scale: float
    build_seconds: float

    @property
    def num_pairs(self) -> int:
        """Number of pair variables."""
        return len(self.pair_a)

    def sizes(self) -> dict[str, int]:
        """Variables, rows, nonzeros and pairs, for ``details``."""
        m = self.model
        return {
            "variables": m.num_vars,
            "rows": m.num_rows,
            "nonzeros": int(m.A.nnz),
            "pairs": self.num_pairs,
        }


def build_lp_ov(
    instance: Instance, *, binary: bool = False, max_nonzeros: int = MAX_NONZEROS
) -> LPOVModel:
    """Builds LP-OV (module docstring) in sparse form, vectorized.

    Parameters
    ----------
    instance
        The instance.
    binary
        Declare the pair variables binary (the COS relaxation without cycle cuts).
    max_nonzeros
        Refuse models whose matrix would hold more nonzeros.

    Raises
    ------
    ModelTooLargeError
        The model would exceed ``max_nonzeros``.

    Examples -------- Instance I3 (docs/theory.md#instances): ``A`` and ``C`` share ports 0 and 2,
    ``B`` and ``C`` ports 1 and 3.

    >>> from coflowlab.instances.examples import theory_i3
    >>> built = build_lp_ov(theory_i3())
    >>> built.sizes()
    {'variables': 5, 'rows': 8, 'nonzeros': 16, 'pairs': 2}
    """
    start = time.perf_counter()
    n = instance.num_coflows
    pt = port_times(instance)
    P = pt.times
    counts = np.diff(P.indptr)
    terms = int(np.dot(counts, counts))
    if terms > max_nonzeros:
        raise ModelTooLargeError(
            f"lp-ov: the model would have about {terms:,} nonzeros (Σ over ports of the "
            f"squared number of coflows using the port), above the limit of {max_nonzeros:,}; "
            "use the interval LP (interval-lp) or the parallel-inequality LP (parallel-lp), "
            "or raise max_nonzeros"
        )
    entry_coflow = P.indices.astype(np.int64)  # one row per entry (port v, coflow k)
    entry_time = P.data
    num_entries = entry_coflow.size
    entry_port = np.repeat(np.arange(P.shape[1]), counts)
    # every ordered pair of entries on the same port: (row entry, partner entry)
    reps = counts[entry_port]
    row = np.repeat(np.arange(num_entries), reps)
    offset = np.arange(row.size) - np.repeat(np.cumsum(reps) - reps, reps)
    partner = P.indptr[entry_port[row]] + offset
    keep = partner != row
    row, partner = row[keep], partner[keep]
    k, kp = entry_coflow[row], entry_coflow[partner]
    a, b = np.minimum(k, kp), np.maximum(k, kp)
    keys, pair = np.unique(a * n + b, return_inverse=True)
    pair_a, pair_b = keys // n, keys % n
    # δ[k', k] = y[k', k] if k' < k, else 1 − y[k, k']
    sign = np.where(kp < k, -1.0, 1.0)
    later = np.bincount(
        row, weights=np.where(kp > k, entry_time[partner], 0.0), minlength=num_entries
    )

    builder = ModelBuilder("lp-ov-binary" if binary else "lp-ov")
    builder.add_variables("f", n, cost=instance.coflow_weight, lower=pt.floor)
    builder.add_variables("y", len(keys), lower=0.0, upper=1.0, integer=binary)
    rows = np.concatenate([np.arange(num_entries), row])
    cols = np.concatenate([entry_coflow, n + pair])
    vals = np.concatenate([np.ones(num_entries), sign * entry_time[partner]])
    matrix = sp.csr_matrix((vals, (rows, cols)), shape=(num_entries, n + len(keys)))
    builder.add_rows("port", matrix, lower=entry_time + later)
    return LPOVModel(builder.build(), pair_a, pair_b, pt.scale, time.perf_counter() - start)


# ---------------------------------------------------------------- methods
def solve_lp_ov(
    instance: Instance,
    options: SolverOptions | None = None,
    *,
    max_nonzeros: int = MAX_NONZEROS,
) -> Solution:
    """LP-OV with continuous δ (docs/theory.md#lp-ov): a lower bound on coflow OPT.

    Parameters
    ----------
    instance
        The instance (release dates and port capacities are honoured).
    options
        Solver settings, see :class:`~coflowlab.solvers.SolverOptions` (``mip_gap`` does
        not apply: this is an LP).
    max_nonzeros
        Refuse larger models (:class:`coflowlab.ModelTooLargeError`).

    Returns
    -------
    Solution
        Kind ``relaxation``; ``objective`` is the LP optimum (``≤`` OPT), ``order`` the
        coflows by LP completion time ``f_k`` (ties by index). ``details``: model sizes,
        build and solve seconds, ``completion`` (the ``f_k``).

    Notes
    -----
    LP-OV implies the parallel inequalities on every port, so its value is at least the
    parallel-inequality LP's (docs/theory.md#lp-ov); it is at most the binary version's
    (:func:`solve_lp_ov_binary`). Ordered by ``f``, every prefix's time on each port is at most
    ``2 f_k`` (docs/theory.md#lp-ov), the basis of the 4- and 5-approximations
    (docs/theory.md#lp-ov-ls).

    Examples -------- Instance I3 (docs/theory.md#instances): OPT = 4, and LP-OV = 4 (``C`` between
    ``A`` and ``B`` would cost 5).

    >>> from coflowlab.instances.examples import theory_i3
    >>> sol = solve_lp_ov(theory_i3())
    >>> round(sol.objective, 9), sol.kind.value
    (4.0, 'relaxation')
    """
    start = time.perf_counter()
    built = build_lp_ov(instance, max_nonzeros=max_nonzeros)
    result = solve(built.model, options)
    return _wrap("lp-ov", instance, built, result, start, {"relaxation": "LP-OV, continuous δ"})


def solve_lp_ov_binary(
    instance: Instance,
    options: SolverOptions | None = None,
    *,
    max_nonzeros: int = MAX_NONZEROS,
    acyclic: bool = True,
    max_rounds: int = 1000,
) -> Solution:
    """LP-OV with binary δ: the **concurrent-open-shop (COS) relaxation**, NOT an exact coflow
    model (docs/theory.md#cos, #lp-ov).

    Its value is ``min`` over coflow orders of ``Σ_k w_k max(e_k, max_v T_v(k))``, where
    ``T_v(k)`` is the time on port ``v`` of ``k`` and the coflows before it (ports ``k`` uses).
    Without release dates this is OPT_COS of the ``2m``-port open shop, which can be strictly
    below coflow OPT (it ignores that a flow needs its two ports at once). It is a lower bound
    on coflow OPT, with or without release dates.

    Parameters
    ----------
    instance
        The instance.
    options
        Solver settings, see :class:`~coflowlab.solvers.SolverOptions`; ``time_limit``
        covers all rounds.
    max_nonzeros
        Refuse larger models.
    acyclic
        Add cycle cuts until the orientation δ is acyclic (default). ``False`` solves the
        literal binary model of docs/theory.md#lp-ov, which admits cyclic orientations and can be
        below OPT_COS (module docstring): still a lower bound, but not OPT_COS.
    max_rounds
        Most MIP solves when adding cycle cuts; if reached, the last MIP's value is still a
        lower bound (it relaxes the acyclic model), and ``details["acyclic"]`` is false.

    Returns
    -------
    Solution
        Kind ``relaxation``; ``order`` by the MIP's completion times ``f_k`` (ties by index).
        ``details``: ``relaxation`` (``"COS (binary δ)"``), ``acyclic`` (whether the final
        orientation has no cycle), ``rounds``, ``cycle_cuts``, model sizes.
        If the time limit stops a MIP, ``bound`` is the solver's proven dual bound.

    Examples
    --------
    Instance I4 (docs/theory.md#instances): coflow OPT = 4 and COS OPT = 4 as well.

    >>> from coflowlab.instances.examples import theory_i4
    >>> sol = solve_lp_ov_binary(theory_i4())
    >>> round(sol.objective, 9), sol.details["relaxation"], sol.details["acyclic"]
    (4.0, 'COS (binary δ)', True)
    """
    start = time.perf_counter()
    options = options or SolverOptions()
    deadline = None if options.time_limit is None else start + options.time_limit
    built = build_lp_ov(instance, binary=True, max_nonzeros=max_nonzeros)
    n = instance.num_coflows
    cut_rows: list[sp.csr_matrix] = []
    cut_upper: list[float] = []
    rounds, cuts, is_acyclic, proven = 0, 0, False, -math.inf
    model = built.model
    while True:
        rounds += 1
        remaining = None if deadline is None else max(deadline - time.perf_counter(), 1e-3)
        result = solve(model, replace(options, time_limit=remaining))
        if result.x is None or result.status is not SolveStatus.OPTIMAL:
            if proven > result.bound:  # an earlier round (fewer cuts) proved more
                result = replace(result, bound=proven, gap=relative_gap(result.objective, proven))
            break
        proven = min(result.objective, result.bound)
        y = result.x[n:]
        cycles = _cycles(n, built.pair_a, built.pair_b, y >= 0.5)
        is_acyclic = not cycles
        if is_acyclic or not acyclic or rounds >= max_rounds:
            break
        for cycle in cycles:
            row, upper = _cycle_cut(n, built, cycle)
            cut_rows.append(row)
            cut_upper.append(upper)
        cuts += len(cycles)
        model = _with_rows(built.model, sp.vstack(cut_rows, format="csr"), np.array(cut_upper))
    details = {
        "relaxation": "COS (binary δ)",
        "exact": "no: concurrent-open-shop relaxation, a lower bound on coflow OPT",
        "acyclic": bool(is_acyclic),
        "rounds": rounds,
        "cycle_cuts": cuts,
    }
    return _wrap("lp-ov-binary", instance, built, result, start, details, model)


def _wrap(
    name: str,
    instance: Instance,
    built: LPOVModel,
    result: SolveResult,
    start: float,
    details: dict[str, Any],
    model: LinearModel | None = None,
) -> Solution:
    n = instance.num_coflows
    order = None
    completion = None
    if result.x is not None and result.has_solution:
        f = result.x[:n] * built.scale
        order = completion_order(f)
        completion = f.tolist()
    value = result.objective * built.scale if result.has_solution else math.nan
    if result.status is SolveStatus.OPTIMAL and built.model.is_mip:
        # a MIP stops within mip_gap of its optimum: the proven dual bound is the lower bound
        details = {**details, "incumbent": value}
        value = min(result.objective, result.bound) * built.scale
    if result.status is not SolveStatus.OPTIMAL:
        # scale the proven bound into the instance's unit, as bound_solution reads it there
        result = SolveResult(
            result.status,
            value,
            result.bound * built.scale,
            result.gap,
            result.runtime,
            result.x,
            result.solver,
            result.message,
        )
    sizes = built.sizes() if model is None else {**built.sizes(), "rows": model.num_rows}
    info = {
        **details,
        **sizes,
        "build_seconds": built.build_seconds,
        "solve_seconds": result.runtime,
        "time_unit": built.scale,
        "completion": completion,
    }
    return bound_solution(
        name,
        SolutionKind.RELAXATION,
        instance,
        value,
        result,
        runtime=time.perf_counter() - start,
        order=order,
        details=info,
    )


def _cycles(
    n: int, pair_a: np.ndarray, pair_b: np.ndarray, a_first: npt.NDArray[np.bool_]
) -> list[list[int]]:
    """Short directed cycles of the orientation (one per node of a strongly connected
    component, shortest through an arc into it), without repeats."""
    tail = np.where(a_first, pair_a, pair_b)
    head = np.where(a_first, pair_b, pair_a)
    graph = sp.csr_matrix((np.ones(tail.size), (tail, head)), shape=(n, n))
    num, label = csgraph.connected_components(graph, directed=True, connection="strong")
    sizes = np.bincount(label, minlength=num)
    found: dict[frozenset[tuple[int, int]], list[int]] = {}
    for node in np.flatnonzero(sizes[label] > 1).tolist():
        members = label == label[node]
        sub = graph.multiply(members[:, None] & members[None, :]).tocsr()
        dist, pred = csgraph.shortest_path(
            sub, unweighted=True, indices=node, return_predecessors=True
        )
        into = sub[:, [node]].nonzero()[0]  # arcs u -> node
        u = int(into[np.argmin(dist[into])])
        path = [u]
        while path[-1] != node:
            path.append(int(pred[path[-1]]))
        cycle = path[::-1]  # node -> ... -> u, closed by u -> node
        arcs = frozenset(zip(cycle, cycle[1:] + cycle[:1], strict=True))
        found.setdefault(arcs, cycle)
    return list(found.values())


def _cycle_cut(n: int, built: LPOVModel, cycle: list[int]) -> tuple[sp.csr_matrix, float]:
    """The row ``Σ_{arcs (u, w)} δ[u, w] ≤ |cycle| − 1`` in the ``y`` variables."""
    u = np.asarray(cycle)
    w = np.roll(u, -1)
    a, b = np.minimum(u, w), np.maximum(u, w)
    index = np.searchsorted(built.pair_a * n + built.pair_b, a * n + b)
    forward = u < w  # δ[u, w] = y if u < w, else 1 − y
    coef = np.where(forward, 1.0, -1.0)
    upper = len(cycle) - 1 - int(np.count_nonzero(~forward))
    row = sp.csr_matrix(
        (coef, (np.zeros(len(cycle), dtype=int), n + index)), shape=(1, built.model.num_vars)
    )
    return row, float(upper)


def _with_rows(model: LinearModel, rows: sp.csr_matrix, upper: np.ndarray) -> LinearModel:
    return LinearModel(
        model.name,
        model.c,
        sp.csr_matrix(sp.vstack([model.A, rows], format="csr")),
        np.concatenate([model.row_lower, np.full(rows.shape[0], -np.inf)]),
        np.concatenate([model.row_upper, upper]),
        model.col_lower,
        model.col_upper,
        model.integrality,
        model.offset,
        dict(model.blocks),
        {**model.row_blocks, "cycle": slice(model.num_rows, model.num_rows + rows.shape[0])},
    )


def cyclic_gap_instance() -> Instance:
    """An instance where binary LP-OV without acyclicity is below OPT_COS.

    Five diagonal coflows (COS jobs) on 3 machines, processing times by machine
    ``(0, 0, 2, 0, 1)``, ``(2, 0, 0, 2, 1)``, ``(1, 3, 1, 1, 1)``, weights ``(1, 3, 2, 3, 2)``.
    The orientation ``0→2, 2→1, 1→0`` (a 3-cycle) with ``2→3, 2→4, 3→0, 3→1, 3→4, 4→0,
    4→1`` gives ``f = (6, 6, 2, 2, 3)`` and value 40; the best permutation gives 41 = OPT_COS =
    coflow OPT (diagonal instance). Found by enumerating all tournaments on random instances
    (our derivation).

    Examples
    --------
    >>> inst = cyclic_gap_instance()
    >>> round(solve_lp_ov_binary(inst, acyclic=False).objective, 6)
    40.0
    >>> round(solve_lp_ov_binary(inst).objective, 6)
    41.0
    """
    p = np.array([[0, 0, 2, 0, 1], [2, 0, 0, 2, 1], [1, 3, 1, 1, 1]], dtype=float)
    mats = [np.diag(p[:, j]) for j in range(p.shape[1])]
    return Instance.from_matrices(mats, weight=[1, 3, 2, 3, 2])
