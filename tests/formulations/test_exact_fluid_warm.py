"""Tests of the warm-started node LPs of ``exact-fluid`` (``warm_start=True``, the default):
each node's group LP is re-solved from its parent's optimal basis in a HiGHS object kept
for the node's other weights (:class:`coflowlab.solvers.WarmLP`, keys from
:func:`coflowlab.formulations.order_lp.basis_keys`).

The oracles are independent of the warm path: the same LP solved from scratch through
:func:`coflowlab.solvers.solve`, the search with ``warm_start=False`` (every LP from scratch,
the path before warm starts) and brute-force enumeration of every order and interleaving.
Tolerance: both searches prove their value within ``mip_gap`` (default ``1e-6``, relative),
so their optima agree within that; single LPs agree within HiGHS's tolerances (``1e-9``
relative here, the LP values are sums of a few dozen times).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp

from coflowlab import verify
from coflowlab.formulations.exact_fluid import _Data, solve_exact_fluid
from coflowlab.formulations.order_lp import basis_keys, build_group_lp, release_values
from coflowlab.instances.generators import uniform
from coflowlab.solvers import (
    ModelBuilder,
    SolverOptions,
    SolveStatus,
    WarmLP,
    carry_basis,
    solve,
)

from .test_exact_fluid import assert_verified, enumerate_optimum

MIP_GAP = SolverOptions().mip_gap


def random_instances(count: int, n: int) -> list[tuple[str, object]]:
    """Random 2-4 port instances, half with Poisson releases, weights 1-4."""
    out = []
    for seed in range(count):
        m = 2 + seed % 3
        rate = (None, 0.15)[seed % 2]
        inst = uniform(m, n, density=0.5, release_rate=rate, weights=(1, 4), seed=seed)
        out.append((f"m{m}-n{n}-{'rel' if rate else 'norel'}-{seed}", inst))
    return out


SMALL = random_instances(8, 4)
MEDIUM = random_instances(12, 8)


@pytest.mark.parametrize(("name", "inst"), SMALL, ids=[c[0] for c in SMALL])
def test_warm_search_meets_brute_force(name, inst):
    """Tests that the warm-started search finds the enumerated optimum, with a verified
    schedule, on small instances with and without releases."""
    sol = solve_exact_fluid(inst)
    assert sol.status is SolveStatus.OPTIMAL
    assert sol.details["warm_start"] is True
    assert sol.objective == pytest.approx(enumerate_optimum(inst), rel=MIP_GAP)
    assert_verified(inst, sol)


@pytest.mark.parametrize(("name", "inst"), MEDIUM, ids=[c[0] for c in MEDIUM])
def test_warm_and_cold_searches_agree(name, inst):
    """Tests that the search with warm-started node LPs proves the same optimum as the
    search that solves every LP from scratch, that both schedules verify, and that no warm
    solve had to be repeated from scratch."""
    warm = solve_exact_fluid(inst)
    cold = solve_exact_fluid(inst, warm_start=False)
    assert warm.status is SolveStatus.OPTIMAL and cold.status is SolveStatus.OPTIMAL
    assert cold.details["warm_start"] is False
    assert warm.objective == pytest.approx(cold.objective, rel=MIP_GAP)
    assert warm.bound == pytest.approx(cold.bound, rel=MIP_GAP)
    assert warm.details["warm_fallbacks"] == 0
    assert_verified(inst, warm)
    assert_verified(inst, cold)


def _random_path(inst, seed: int):
    """A random root-to-leaf path of the search's nodes: per node its groups (``U`` first,
    then the suffix one coflow per group), slots and the weights of its group LP. A step
    moves a coflow of ``U`` in front of the suffix (a coflow child) or, when ``U`` may
    complete before the next release event, places that event after ``U`` (a release
    child; the sequence can then be infeasible, as in the search before its LP)."""
    rng = np.random.default_rng(seed)
    n = inst.num_coflows
    values = release_values(inst)
    slot_min = np.searchsorted(values, inst.coflow_release, side="right")
    w = inst.coflow_weight.astype(float)
    unordered = list(range(n))
    suffix: list[int] = []
    suffix_slots: list[int] = []
    qrem = len(values)
    path = []
    while unordered:
        if suffix:
            groups = [unordered, *[[j] for j in suffix]]
            w0 = float(w[rng.choice(unordered)])
            path.append((groups, [qrem, *suffix_slots], [w0, *w[suffix].tolist()]))
        release = qrem > 0 and slot_min[unordered].max() <= qrem - 1 and rng.random() < 0.3
        if release:
            qrem -= 1
            continue
        j = int(rng.choice(unordered))
        unordered = [i for i in unordered if i != j]
        suffix.insert(0, j)
        suffix_slots.insert(0, qrem)
    path.append(([[j] for j in suffix], suffix_slots, w[suffix].tolist()))  # the leaf
    return path


@pytest.mark.parametrize(("name", "inst"), MEDIUM, ids=[c[0] for c in MEDIUM])
def test_each_warm_node_lp_equals_its_cold_solve(name, inst):
    """Tests, along random paths of the search, that every node LP solved from its
    parent's carried basis, and every re-solve of it at another weight of its first event,
    has the value of the same LP solved from scratch. A held model that were not rebuilt
    for each node, or whose cost were not changed for a new weight, fails here (the values
    differ from node to node and from weight to weight)."""
    data = _Data(inst, SolverOptions(), math.inf)
    infeasible = 0
    for seed in range(3):
        start = None
        values = []
        for groups, slots, weights in _random_path(inst, seed):
            lp = build_group_lp(inst, groups, slots, weights)
            res, held = data.solve_node_lp(lp, start)
            cold = solve(lp.model)
            if cold.status is SolveStatus.INFEASIBLE:  # U cannot complete before a release
                assert res is None
                infeasible += 1
                break  # so is every node below
            assert res is not None and cold.status is SolveStatus.OPTIMAL
            assert res.objective == pytest.approx(cold.objective, rel=1e-9)
            values.append(round(res.objective, 6))
            assert held is not None
            start = data.node_start(lp, held)
            assert start is not None
            for extra in (weights[0] + 1.0, weights[0] + 2.5):
                got = data.resolve_weight(held, lp, extra)
                again = solve(build_group_lp(inst, groups, slots, [extra, *weights[1:]]).model)
                assert got is not None
                assert got.objective == pytest.approx(again.objective, rel=1e-9)
                assert got.objective > res.objective  # t_U > 0: a larger weight costs more
        assert len(values) < 2 or len(set(values)) > 1  # a stale model would show
    # an infeasible LP is confirmed from scratch; every feasible one ends optimal warm
    assert data.warm_fallbacks == infeasible


@pytest.mark.parametrize(("name", "inst"), MEDIUM[:6], ids=[c[0] for c in MEDIUM[:6]])
def test_basis_keys_are_distinct_and_carry_a_basis_onto_itself(name, inst):
    """Tests that the keys name every column and row of a group LP apart (a repeated key
    would carry one status onto two different columns), and that carrying an optimal basis
    onto the same LP gives it back, from which HiGHS needs no simplex iteration."""
    values = release_values(inst)
    n = inst.num_coflows
    lp = build_group_lp(inst, [list(range(n - 2)), [n - 2], [n - 1]], weights=[1.0, 2.0, 3.0])
    keys = basis_keys(lp, inst.num_ports, len(values))
    assert keys is not None
    cols, rows = keys
    assert len(np.unique(cols)) == len(cols) == lp.model.num_vars
    assert len(np.unique(rows)) == len(rows) == lp.model.num_rows
    held = WarmLP(lp.model)
    first = held.solve()
    basis = held.basis()
    carried = carry_basis(keys, basis, keys)
    assert np.array_equal(carried[0], basis[0]) and np.array_equal(carried[1], basis[1])
    again = WarmLP(lp.model)
    assert again.set_basis(carried)
    res = again.solve(warm=True)
    assert again.iterations == 0
    assert res.objective == pytest.approx(first.objective, rel=1e-12)


def test_warm_lp_re_solves_after_a_cost_change():
    """Tests :class:`WarmLP` on an LP solved by hand: ``min c·x`` over ``x_1 + x_2 ≥ 1``,
    ``x ≥ 0`` is ``min(c)``; after a change of cost the re-solve follows it."""
    b = ModelBuilder("toy")
    b.add_variables("x", 2, cost=[1.0, 2.0])
    b.add_rows("cover", sp.csr_matrix([[1.0, 1.0]]), lower=[1.0])
    lp = WarmLP(b.build())
    assert lp.solve().objective == pytest.approx(1.0)
    lp.set_cost(0, 5.0)
    res = lp.solve(warm=True)
    assert res.objective == pytest.approx(2.0)
    assert res.x.tolist() == pytest.approx([0.0, 1.0])


def test_time_limit_in_the_warm_search_returns_incumbent_and_bound():
    """Tests that the time limit, reached inside the warm-started search (not in its
    heuristic), returns a verified incumbent and a proven bound below it."""
    # benchmarks/bench_exact.py's 4x4 instance of 16 coflows with releases, seed 0: not
    # proven within a minute
    inst = uniform(4, 16, density=0.5, sizes=(1, 10), weights=(1, 4), release_rate=1 / 11, seed=0)
    sol = solve_exact_fluid(inst, SolverOptions(time_limit=10.0), max_coflows=16)
    assert sol.status is SolveStatus.TIME_LIMIT
    assert sol.details["nodes"] > 0 and not sol.details["finished"]
    assert sol.details["root_bound"] <= sol.bound * (1 + 1e-9)
    assert sol.bound <= sol.objective * (1 + 1e-9)
    report = verify(inst, sol.schedule)
    assert report.feasible
    assert float(np.dot(inst.coflow_weight, report.coflow_completion)) == pytest.approx(
        sol.objective, rel=1e-6
    )


@pytest.mark.parametrize(("name", "inst"), MEDIUM[:8], ids=[c[0] for c in MEDIUM[:8]])
def test_interior_point_node_lps_prove_the_same_optimum(name, inst):
    """Tests ``lp_method``: the search whose node LPs are all solved by the interior-point
    method (``"ipm"``; crossover leaves the basis the children start from) proves the
    optimum of the warm-simplex search (``"simplex"``), the default (``"auto"``) solves
    these small LPs by the simplex only, and the counts say which ran. A node LP solved
    by neither, or an ipm solve whose basis were unusable, fails here (no optimum, or
    warm fallbacks)."""
    simplex = solve_exact_fluid(inst, lp_method="simplex")
    ipm = solve_exact_fluid(inst, lp_method="ipm")
    auto = solve_exact_fluid(inst)
    for sol in (simplex, ipm, auto):
        assert sol.status is SolveStatus.OPTIMAL
        assert sol.details["warm_fallbacks"] == 0
        assert_verified(inst, sol)
    assert ipm.objective == pytest.approx(simplex.objective, rel=MIP_GAP)
    assert ipm.bound == pytest.approx(simplex.bound, rel=MIP_GAP)
    assert simplex.details["ipm_lps"] == auto.details["ipm_lps"] == 0
    if ipm.details["leaves"] > 0:  # a leaf's LP is a node LP
        assert ipm.details["ipm_lps"] > 0
    assert auto.details["nodes"] == simplex.details["nodes"]


def test_auto_lp_method_switches_at_the_column_threshold(monkeypatch):
    """Tests that ``lp_method="auto"`` solves a node LP by the interior-point method exactly
    when it has at least ``IPM_COLUMNS`` columns (threshold lowered here to the size of one
    LP of the path), with the optimum of the same LP solved from scratch."""
    import coflowlab.formulations.exact_fluid as ef

    inst = MEDIUM[1][1]
    n = inst.num_coflows
    lp = build_group_lp(inst, [list(range(n - 1)), [n - 1]], weights=[1.0, 2.0])
    cold = solve(lp.model)
    for threshold, expected in ((lp.model.num_vars, 1), (lp.model.num_vars + 1, 0)):
        monkeypatch.setattr(ef, "IPM_COLUMNS", threshold)
        data = _Data(inst, SolverOptions(), math.inf)
        res, held = data.solve_node_lp(lp, None)
        assert data.ipm_lps == expected
        assert (held.ipm_iterations > 0) == bool(expected)  # which method really ran
        assert res is not None and held is not None
        assert res.objective == pytest.approx(cold.objective, rel=1e-9)
        # the held LP re-solves warm at another weight (crossover left a basis)
        got = data.resolve_weight(held, lp, 3.0)
        heavier = build_group_lp(inst, [list(range(n - 1)), [n - 1]], weights=[3.0, 2.0])
        again = solve(heavier.model)
        assert got is not None and got.objective == pytest.approx(again.objective, rel=1e-9)
        assert data.warm_fallbacks == 0


def test_unknown_lp_method_is_refused():
    """Tests that an unknown ``lp_method`` is refused with a message naming the choices."""
    with pytest.raises(ValueError, match="lp_method must be one of"):
        solve_exact_fluid(MEDIUM[0][1], lp_method="barrier")


def test_warm_lp_ipm_solve_leaves_an_optimal_basis():
    """Tests :meth:`WarmLP.solve` with ``ipm=True`` on the toy LP: the interior-point optimum,
    then a warm re-solve after a cost change from the basis crossover left, with no more than
    one simplex iteration (and none of the interior-point method); a warm solve that asks
    for ipm is refused."""
    b = ModelBuilder("toy")
    b.add_variables("x", 2, cost=[1.0, 2.0])
    b.add_rows("cover", sp.csr_matrix([[1.0, 1.0]]), lower=[1.0])
    lp = WarmLP(b.build())
    assert lp.solve(ipm=True).objective == pytest.approx(1.0)  # (presolve solves it)
    assert lp.basis()[0].tolist() == [1, 0]  # x_1 basic, x_2 at its lower bound
    lp.set_cost(0, 5.0)
    res = lp.solve(warm=True)
    assert res.objective == pytest.approx(2.0)
    assert lp.iterations <= 1 and lp.ipm_iterations == 0
    with pytest.raises(ValueError, match="warm solve"):
        lp.solve(warm=True, ipm=True)
