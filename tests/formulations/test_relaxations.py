"""Tests of the LP relaxations: LP-OV and its binary (COS) version, the interval-indexed LP and
the parallel-inequality LP (docs/theory.md#interval-lp, #parallel-lp, #lp-ov, #instances, P2, P9).

The exact fluid optimum they are compared with comes from :func:`fluid_opt`, written here
independently of the toolkit's exact methods: docs/theory.md#exact LP per completion order,
extended to release dates by also enumerating where each completion falls among the
release dates.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linprog

from coflowlab import Instance
from coflowlab.exceptions import ModelTooLargeError
from coflowlab.formulations import parallel_lp, solve_method
from coflowlab.formulations.bounds import completion_floor
from coflowlab.formulations.interval_lp import interval_grid, solve_interval_lp
from coflowlab.formulations.lp_ov import (
    build_lp_ov,
    completion_order,
    cyclic_gap_instance,
    solve_lp_ov,
    solve_lp_ov_binary,
)
from coflowlab.formulations.parallel_lp import separate_parallel, solve_parallel_lp
from coflowlab.instances import concurrent_open_shop, uniform
from coflowlab.instances.examples import theory_i1, theory_i2, theory_i3, theory_i4, theory_r1
from coflowlab.solution import SolutionKind
from coflowlab.solvers import SolveStatus

RTOL = 1e-6
"""Relative tolerance of every comparison between two LP values: HiGHS solves to 1e-7
feasibility on scaled models, and the oracle's LPs likewise."""


def leq(a: float, b: float) -> bool:
    """``a ≤ b`` up to :data:`RTOL`."""
    return a <= b + RTOL * max(1.0, abs(b))


# ---------------------------------------------------------------- independent oracles
def fluid_opt(inst: Instance) -> float:
    """Exact fluid OPT by enumeration (small instances only).

    A schedule is described by the sequence of its events: the completions of the coflows
    and the distinct positive release dates (kept in increasing order, each coflow
    completing after its release). For one sequence, with event times ``s_1 ≤ … ≤ s_N``
    (releases fixed), the best schedule is an LP: ``x[e, i]`` = data of flow ``e`` sent in
    ``(s_{i−1}, s_i]`` (allowed from the interval after its release event up to its
    completion), each port's data in an interval at most capacity × length (enough by BvN),
    minimize ``Σ_j w_j s_{pos(j)}``. The minimum over sequences is the fluid optimum.
    """
    n = inst.num_coflows
    releases = sorted(set(inst.coflow_release[inst.coflow_release > 0].tolist()))
    release_pos = {r: i for i, r in enumerate(releases)}
    cap = inst.fabric.port_capacity
    m = inst.num_ports
    best = math.inf
    events = [("C", j) for j in range(n)] + [("R", i) for i in range(len(releases))]
    for seq in itertools.permutations(events):
        r_events = [e[1] for e in seq if e[0] == "R"]
        if r_events != sorted(r_events):
            continue
        pos = {e: k + 1 for k, e in enumerate(seq)}  # event -> its interval's index 1..N
        ok = all(
            inst.coflow_release[j] == 0 or pos[("C", j)] > pos[("R", release_pos[r])]
            for j in range(n)
            for r in [float(inst.coflow_release[j])]
        )
        if ok:
            best = min(best, _sequence_lp(inst, seq, pos, releases, release_pos, cap, m))
    return best


def _sequence_lp(inst, seq, pos, releases, release_pos, cap, m) -> float:
    N = len(seq)
    flows = range(inst.num_flows)
    allowed = []
    for e in flows:
        j = int(inst.flow_coflow[e])
        r = float(inst.coflow_release[j])
        first = 1 if r == 0 else pos[("R", release_pos[r])] + 1
        allowed += [(e, i) for i in range(first, pos[("C", j)] + 1)]
    nx = len(allowed)
    nv = N + nx  # s_1..s_N, then x
    c = np.zeros(nv)
    for j in range(inst.num_coflows):
        c[pos[("C", j)] - 1] = inst.coflow_weight[j]
    A_ub, b_ub, A_eq, b_eq = [], [], [], []
    for i in range(1, N):  # s_i - s_{i+1} <= 0
        row = np.zeros(nv)
        row[i - 1], row[i] = 1, -1
        A_ub.append(row)
        b_ub.append(0.0)
    for k, ev in enumerate(seq):
        if ev[0] == "R":
            row = np.zeros(nv)
            row[k] = 1
            A_eq.append(row)
            b_eq.append(releases[ev[1]])
    for e in flows:
        row = np.zeros(nv)
        row[[N + a for a, (f, _) in enumerate(allowed) if f == e]] = 1
        A_eq.append(row)
        b_eq.append(float(inst.flow_size[e]))
    for v in range(2 * m):
        for i in range(1, N + 1):
            row = np.zeros(nv)
            for a, (f, ii) in enumerate(allowed):
                if ii == i and v in (inst.flow_src[f], inst.flow_dst[f] + m):
                    row[N + a] = 1
            if not row.any():
                continue
            row[i - 1] -= cap[v]
            if i > 1:
                row[i - 2] += cap[v]
            A_ub.append(row)
            b_ub.append(0.0)
    res = linprog(
        c,
        A_ub=sp.csr_matrix(np.array(A_ub)) if A_ub else None,
        b_ub=b_ub or None,
        A_eq=sp.csr_matrix(np.array(A_eq)),
        b_eq=b_eq,
        bounds=[(0, None)] * nv,
        method="highs",
    )
    return float(res.fun) if res.status == 0 else math.inf


def ordering_relaxation_opt(inst: Instance) -> float:
    """``min`` over coflow orders of ``Σ_k w_k max(e_k, max_v prefix time on v)`` (ports ``k``
    uses), by enumeration: what binary LP-OV with acyclic δ must equal."""
    P = inst.port_time
    e = completion_floor(inst)
    best = math.inf
    for perm in itertools.permutations(range(inst.num_coflows)):
        q = P[list(perm)]
        prefix = np.where(q > 0, np.cumsum(q, axis=0), 0.0).max(axis=1)
        best = min(
            best, float(np.dot(inst.coflow_weight[list(perm)], np.maximum(e[list(perm)], prefix)))
        )
    return best


def with_releases(inst: Instance, seed: int) -> Instance:
    """The instance with releases drawn from {0, 0, 1, 2} (few distinct dates keep the oracle
    small)."""
    rng = np.random.default_rng(seed)
    return inst.replace(coflow_release=rng.choice([0.0, 0.0, 1.0, 2.0], inst.num_coflows))


ZERO_RELEASE = [uniform(2, 4, density=0.5, weights=(1, 3), seed=s) for s in range(4)] + [
    uniform(3, 4, density=0.4, seed=10 + s) for s in range(3)
]
WITH_RELEASES = [
    with_releases(uniform(2, 3, density=0.6, weights=(1, 3), seed=20 + s), s) for s in range(4)
]
_OPT: dict[int, float] = {}


def opt(inst: Instance) -> float:
    """Cached :func:`fluid_opt`."""
    if id(inst) not in _OPT:
        _OPT[id(inst)] = fluid_opt(inst)
    return _OPT[id(inst)]


RELAXATIONS = {
    "lp-ov": solve_lp_ov,
    "lp-ov-binary": solve_lp_ov_binary,
    "interval-lp": solve_interval_lp,
    "parallel-lp": solve_parallel_lp,
}


# ---------------------------------------------------------------- the oracle itself
def test_oracle_matches_the_known_optima():
    """Tests that the enumeration oracle reproduces docs/theory.md#instances optima (I1 4, I2 19,
    I3 4, I4 4) and R1's fluid optimum 9 (C1 holds port 0 in [1, 2], C0 sends in [0, 1] and [2, 3]:
    3 + 3·2; the other order costs 2 + 3·3 = 11)."""
    got = [fluid_opt(f()) for f in (theory_i1, theory_i2, theory_i3, theory_i4, theory_r1)]
    assert got == pytest.approx([4, 19, 4, 4, 9], rel=1e-9)


def test_oracle_agrees_with_exact_fluid_when_present():
    """Tests that the oracle agrees with the toolkit's exact-fluid method (docs/theory.md#exact) on
    zero-release instances; skipped while that method is not available."""
    for inst in ZERO_RELEASE[:3]:
        try:
            sol = solve_method(inst, "exact-fluid")
        except (ImportError, AttributeError, NotImplementedError) as exc:
            pytest.skip(f"exact-fluid not available: {exc}")
        assert sol.objective == pytest.approx(opt(inst), rel=RTOL)


# ---------------------------------------------------------------- docs/theory.md#instances
@pytest.mark.parametrize("name", ["lp-ov", "lp-ov-binary", "parallel-lp"])
@pytest.mark.parametrize(
    ("make", "expected"), [(theory_i1, 4.0), (theory_i2, 19.0), (theory_i3, 4.0)]
)
def test_known_values(name, make, expected):
    """Tests docs/theory.md#instances: all LPs = 4 on I1 and I3. On I2 (one port) the three are
    exact, 19: the parallel inequalities describe a single machine's completion-time polytope, and
    LP-OV on one port pays ``min(w_b p_a, w_a p_b)`` per pair, which is Smith's order."""
    sol = RELAXATIONS[name](make())
    assert sol.kind is SolutionKind.RELAXATION and sol.status is SolveStatus.OPTIMAL
    assert sol.objective == pytest.approx(expected, rel=1e-9)
    assert sol.bound == pytest.approx(expected, rel=1e-9)


def test_interval_lp_known_values():
    """Tests the interval LP on I1, I2 and I3, derived by hand (it is weaker than the basic form's
    "all LPs = 4" says for I3).

    I1: ρ = 4; every interval ``l`` allowed has ``τ_l ≥ 4`` and charge ``max(τ_{l−1}, 4) = 4``:
    value 4. The basic form's charge ``τ_{l−1}`` on the basic grid (1, 2, 4) puts C in (2, 4]: 2.

    I3: floors 1, grid ``0, 1, 2``, charges 1, 1, 2. Only ``τ_1 = 1`` has load rows
    (``X_A + X_C ≤ 1``, ``X_B + X_C ≤ 1``); all three complete in ``(1, 2]`` at charge 1: 3.
    With the basic form's charges (0, 1, 2), A and B in ``(0, 1]`` and C in ``(1, 2]``: 1.

    I2 (one port, ``p = (3, 1, 2)``, ``w = (3, 1, 1)``, OPT 19): grid ``0, 1, 2, 4, 8``. Job 1
    completes in ``(0, 1]`` (charge 1). Jobs 0 and 2 compete for ``(2, 4]`` (charges 3 and 2,
    else 4): with fractions ``a``, ``b`` there, the row at 4 is ``3a + 1 + 2b ≤ 4``, and the
    cost ``3(3a + 4(1 − a)) + 2b + 4(1 − b) + 1 = 17 − (3a + 2b)`` is at best 14.
    """
    assert solve_interval_lp(theory_i1()).objective == pytest.approx(4.0, rel=1e-9)
    assert solve_interval_lp(theory_i2()).objective == pytest.approx(14.0, rel=1e-9)
    assert solve_interval_lp(theory_i3()).objective == pytest.approx(3.0, rel=1e-9)
    spec = {"first": 1.0, "floor": False}
    assert solve_interval_lp(theory_i1(), **spec).objective == pytest.approx(2.0, rel=1e-9)
    assert solve_interval_lp(theory_i3(), **spec).objective == pytest.approx(1.0, rel=1e-9)


def test_r1_values_by_hand():
    """Tests the relaxations on R1 (fluid OPT 9) against hand derivations.

    Times on port 0: C0 2, C1 1; C1 released at 1, ``w = (1, 3)``, floors (2, 2).

    - LP-OV: ``f0 ≥ 2 + (1 − t)``, ``f1 ≥ max(2, 1 + 2t)`` with ``t = δ[0, 1]``: best at
      ``t = 1/2``, ``2.5 + 3·2 = 8.5``.
    - binary: ``t = 0`` gives ``3 + 6 = 9`` (= OPT), ``t = 1`` gives ``2 + 9``.
    - parallel (shifted): ``2 C0 + C1 ≥ 7`` and ``C1 ≥ 1 + 1``: ``C = (2.5, 2)``, 8.5.
    - interval: grid ``0, 2, 4``; both complete in ``(2, 4]`` at charge 2: ``2 + 6 = 8``.
    """
    inst = theory_r1()
    values = {name: f(inst).objective for name, f in RELAXATIONS.items()}
    expected = {"lp-ov": 8.5, "lp-ov-binary": 9.0, "parallel-lp": 8.5, "interval-lp": 8.0}
    assert values == pytest.approx(expected, rel=1e-9)


# ---------------------------------------------------------------- P1, P2, P9
@pytest.mark.parametrize("inst", ZERO_RELEASE + WITH_RELEASES)
def test_every_relaxation_is_below_opt(inst):
    """Tests P1: every relaxation's value and proven bound are at most the fluid optimum, and
    at least ``Σ w (r + ρ)`` (each imposes ``C_j ≥ e_j ≥ r_j + ρ_j``), with and without
    release dates."""
    best = opt(inst)
    floor = float(np.dot(inst.coflow_weight, inst.coflow_release + inst.bottleneck))
    for name, f in RELAXATIONS.items():
        sol = f(inst)
        assert sol.status is SolveStatus.OPTIMAL, name
        assert leq(sol.objective, best), (name, sol.objective, best)
        assert leq(sol.bound, best), name
        assert leq(floor, sol.objective), (name, floor, sol.objective)


@pytest.mark.parametrize("inst", ZERO_RELEASE + WITH_RELEASES)
def test_relaxations_are_ordered(inst):
    """Tests P2: parallel LP ≤ LP-OV ≤ binary LP-OV (= the ordering relaxation, OPT_COS
    without releases) ≤ fluid OPT, each up to :data:`RTOL`. The parallel LP is compared in the
    textbook form (``release_cuts=False``): LP-OV implies those inequalities, not the
    release-shifted ones."""
    parallel = solve_parallel_lp(inst, release_cuts=False).objective
    shifted = solve_parallel_lp(inst).objective
    lp_ov = solve_lp_ov(inst).objective
    binary = solve_lp_ov_binary(inst).objective
    assert leq(parallel, shifted)
    assert leq(parallel, lp_ov)
    assert leq(lp_ov, binary)
    assert leq(binary, opt(inst))
    assert binary == pytest.approx(ordering_relaxation_opt(inst), rel=RTOL)


@pytest.mark.parametrize("seed", range(4))
def test_binary_lp_ov_is_opt_on_concurrent_open_shop(seed):
    """Tests P9: on diagonal instances (concurrent open shop) without release dates, binary
    LP-OV equals coflow OPT."""
    inst = concurrent_open_shop(3, 4, density=0.7, weights=(1, 3), seed=seed)
    assert solve_lp_ov_binary(inst).objective == pytest.approx(fluid_opt(inst), rel=RTOL)


def test_binary_without_acyclicity_is_below_cos():
    """Tests that the literal binary LP-OV (δ binary, no transitivity) admits a cyclic
    orientation cheaper than every order: 40 < 41 = OPT_COS = OPT on the diagonal instance
    found by enumeration; the default (cycle cuts) reaches 41."""
    inst = cyclic_gap_instance()
    loose = solve_lp_ov_binary(inst, acyclic=False)
    tight = solve_lp_ov_binary(inst)
    assert loose.objective == pytest.approx(40.0, rel=1e-9)
    assert not loose.details["acyclic"]
    assert tight.objective == pytest.approx(41.0, rel=1e-9)
    assert tight.details["acyclic"] and tight.details["cycle_cuts"] >= 1
    assert ordering_relaxation_opt(inst) == pytest.approx(41.0, rel=1e-9)


def test_binary_is_labelled_as_the_cos_relaxation():
    """Tests that the binary version says what it is: a COS relaxation, not an exact model;
    its value is a bound (the MIP's proven dual bound)."""
    sol = solve_lp_ov_binary(theory_i4())
    assert sol.kind is SolutionKind.RELAXATION and sol.is_lower_bound
    assert sol.details["relaxation"] == "COS (binary δ)"
    assert sol.details["exact"].startswith("no")
    assert sol.objective <= sol.details["incumbent"] + 1e-12


# ---------------------------------------------------------------- release dates
def test_shifted_parallel_inequalities_are_stronger():
    """Tests the release-shifted parallel inequalities on one port with two unit jobs both
    released at 5: OPT = 6 + 7 = 13; the basic form only gives the floors, 6 + 6 = 12; the
    shifted one ``C_0 + C_1 ≥ 5·2 + 3`` gives 13."""
    inst = Instance.from_matrices([[[1.0]], [[1.0]]], release=[5, 5])
    assert fluid_opt(inst) == pytest.approx(13.0)
    assert solve_parallel_lp(inst, release_cuts=False).objective == pytest.approx(12.0)
    assert solve_parallel_lp(inst).objective == pytest.approx(13.0)


def test_completion_floor_uses_flow_releases():
    """Tests the floors on flows released after their coflow: coflow 0's flow 1→1 (size 1) is
    released at 3, so it cannot complete before 4 although ``r + ρ = 2``."""
    inst = Instance(2, [0, 0], [0, 1], [0, 1], [2.0, 1.0], flow_release=[0.0, 3.0])
    assert completion_floor(inst).tolist() == [4.0]
    assert solve_lp_ov(inst).objective == pytest.approx(4.0)


# ---------------------------------------------------------------- separation, sizes, orders
@pytest.mark.parametrize("chunk", [None, 1])
@pytest.mark.parametrize("shifted", [False, True])
def test_separation_is_exact(shifted, chunk, monkeypatch):
    """Tests that the prefix separation finds, per port, a set as violated as the most violated
    of all subsets (brute force over the 2^6 subsets, ``r(S) = min_S r``), also when memory
    limits make it take one port and one threshold at a time (``chunk=1``)."""
    if chunk is not None:
        monkeypatch.setattr(parallel_lp, "_CHUNK", chunk)
    rng = np.random.default_rng(3)
    p = rng.integers(1, 5, size=(6, 2)).astype(float)
    p[rng.random((6, 2)) < 0.2] = 0
    C = rng.uniform(0, 12, size=6)
    r = rng.integers(0, 4, size=6).astype(float)
    for v in range(2):
        rows, lower, _ = separate_parallel(
            sp.csc_array(p[:, [v]]), C, r if shifted else None, tol=-math.inf
        )
        jobs = np.flatnonzero(p[:, v] > 0)
        brute = -math.inf
        for size in range(1, jobs.size + 1):
            for S in itertools.combinations(jobs.tolist(), size):
                q = p[list(S), v]
                shift = r[list(S)].min() if shifted else 0.0
                rhs = shift * q.sum() + 0.5 * (q.sum() ** 2 + (q * q).sum())
                brute = max(brute, rhs - float(q @ C[list(S)]))
        assert rows.shape[0] == 1
        cols = rows.nonzero()[1]
        total = p[cols, v].sum()
        assert rows.toarray()[0, cols] == pytest.approx(p[cols, v] / total)
        found = total * (lower[0] - float((rows @ C)[0]))
        assert found == pytest.approx(brute, rel=1e-9, abs=1e-9)


def test_lp_ov_model_is_sparse():
    """Tests that LP-OV only has variables for pairs sharing a port and rows for loads that
    exist: two coflows on disjoint ports give no pair and two rows each."""
    inst = Instance.from_matrices([[[1, 0], [0, 0]], [[0, 0], [0, 2]]])
    built = build_lp_ov(inst)
    assert built.sizes() == {"variables": 2, "rows": 4, "nonzeros": 4, "pairs": 0}
    assert solve_lp_ov(inst).objective == pytest.approx(3.0)


def test_lp_ov_refuses_a_too_large_model():
    """Tests that a model above the nonzero limit raises ModelTooLargeError naming the method,
    the size and an alternative."""
    with pytest.raises(ModelTooLargeError, match=r"lp-ov.*nonzeros.*interval-lp"):
        solve_lp_ov(theory_i3(), max_nonzeros=5)


def test_interval_grid_reaches_the_busiest_port():
    """Tests the grid: geometric from ``first``, last point at or above ``last``."""
    assert interval_grid(1.0, 8.0).tolist() == [0.0, 1.0, 2.0, 4.0, 8.0]
    assert interval_grid(0.5, 1.0, base=3.0).tolist() == [0.0, 0.5, 1.5]
    with pytest.raises(ValueError, match="base"):
        interval_grid(1.0, 2.0, base=1.0)


def test_parallel_lp_stopped_early_is_still_a_bound():
    """Tests that the cutting-plane loop stopped before convergence reports ``time_limit``, not
    converged, and a value that is still at most the converged one."""
    inst = ZERO_RELEASE[0]
    early = solve_parallel_lp(inst, max_rounds=0)
    full = solve_parallel_lp(inst)
    assert early.status is SolveStatus.TIME_LIMIT and not early.details["converged"]
    assert early.details["rounds"] == 0 and full.details["converged"]
    assert leq(early.objective, full.objective)
    assert early.objective == pytest.approx(float(np.dot(inst.coflow_weight, inst.bottleneck)))


@pytest.mark.parametrize("inst", [ZERO_RELEASE[5], WITH_RELEASES[1]])
def test_parallel_lp_purging_keeps_the_value(inst):
    """Tests that dropping slack cuts between rounds reaches the same LP value as keeping
    them all, and converges."""
    kept = solve_parallel_lp(inst, purge=False)
    purged = solve_parallel_lp(inst)
    assert kept.details["converged"] and purged.details["converged"]
    assert purged.objective == pytest.approx(kept.objective, rel=RTOL)


@pytest.mark.parametrize("name", list(RELAXATIONS))
def test_orders_follow_the_lp_completion_times(name):
    """Tests that ``order`` is a permutation sorted by the LP completion estimates (ties by
    index), the same on a second run."""
    inst = ZERO_RELEASE[4]
    sol = RELAXATIONS[name](inst)
    again = RELAXATIONS[name](inst)
    completion = np.array(sol.details["completion"])
    assert sorted(sol.order) == list(range(inst.num_coflows))
    assert sol.order == completion_order(completion) == again.order
    assert np.all(np.diff(completion[list(sol.order)]) >= -1e-9 * completion.max())


def test_completion_order_breaks_ties_by_index():
    """Tests that near-equal estimates count as ties and go by index."""
    assert completion_order([1.0, 1.0 + 1e-13, 0.5]) == (2, 0, 1)
    assert completion_order([1.0 + 1e-13, 1.0, 0.5]) == (2, 0, 1)


@pytest.mark.parametrize("name", list(RELAXATIONS))
def test_registry_runs_each_relaxation(name):
    """Tests that the registry's entry for each relaxation reaches the function here."""
    sol = solve_method(theory_i4(), name)
    assert sol.method == name and sol.kind is SolutionKind.RELAXATION
    assert leq(sol.objective, 4.0)
