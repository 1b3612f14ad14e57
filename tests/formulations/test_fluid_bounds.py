"""Tests of the lazy chain bound (:mod:`coflowlab.formulations.fluid_bounds`) and of the
branch-and-bound options built on it (``chain_bound``, ``weighted_group``, the chain-order
incumbent).

Oracles: hand-derived values; the tabulated chain bound (every subset, computed by another
recursion: ``_subset_tables``); and the brute-force fluid optimum of ``proofs-checks``
(:func:`brute_force.fluid_opt`, one scipy LP per event sequence, no code shared).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from brute_force import fluid_opt

import coflowlab as cl
from coflowlab.formulations.exact_fluid import (
    CHAIN_BOUNDS,
    _chain_order,
    _Data,
    solve_exact_fluid,
)
from coflowlab.formulations.fluid_bounds import LazyChainBound, smith_value
from coflowlab.instances.generators import uniform
from coflowlab.solvers import SolverOptions, SolveStatus

TOL = 1e-6


def random_instance(seed: int, *, n_max: int = 4, releases: bool = True) -> cl.Instance:
    """1-3 ports, 1-``n_max`` coflows of 1-3 flows with quarter sizes, weights in
    ``{0, ..., 4}`` (0 included), releases from two values, capacities in ``{0.5, 1, 2}``."""
    rng = np.random.default_rng([7, seed])
    m = int(rng.integers(1, 4))
    n = int(rng.integers(1, n_max + 1))
    levels = [0.0, round(float(rng.uniform(0.2, 2.5)), 3)] if releases else [0.0]
    coflows = []
    for j in range(n):
        flows = [
            (int(rng.integers(m)), int(rng.integers(m)), 0.25 * int(rng.integers(1, 9)))
            for _ in range(int(rng.integers(1, 4)))
        ]
        weight = float(rng.integers(0, 5))
        release = float(rng.choice(levels)) if j else 0.0
        coflows.append(cl.Coflow(flows, release=release, weight=weight))
    caps = [0.5, 1.0, 2.0]
    fabric = cl.Fabric(m, rng.choice(caps, size=m), rng.choice(caps, size=m))
    return cl.Instance.from_coflows(coflows, fabric)


def lazy_of(data: _Data, budget: int = 10**7) -> LazyChainBound:
    return LazyChainBound(
        data.load_after, data.levels, data.w, data.prec, data.lb_single, data.port_time,
        whole=data.integral, budget=budget,
    )  # fmt: skip


# ---------------------------------------------------------------- hand-derived values
def test_smith_value_by_hand() -> None:
    # jobs (p, w) = (3, 1), (1, 2), (2, 2): ratios 3, 0.5, 1 -> order 1, 2, 0;
    # completions 1, 3, 6: 2·1 + 2·3 + 1·6 = 14
    p = np.array([[3.0], [1.0], [2.0]])
    assert smith_value(p, np.array([1.0, 2.0, 2.0])).tolist() == [14.0]
    # a job of weight 0 goes last and costs nothing: 1·1 = 1
    assert smith_value(np.array([[1.0], [5.0]]), np.array([1.0, 0.0])).tolist() == [1.0]


def test_lazy_chain_two_ports_by_hand() -> None:
    """A needs 2 on port 0, B needs 3 on port 1 (separate ports), C needs 1 on both; all
    weights 1. Spans: {A,B,C} 4, {A,B} 3, {A,C} 3, {B,C} 4, singletons 2, 3, 1. chain:
    {A,C}: min(A last: 3 + 1, C last: 3 + 2) = 4; {B,C}: min(4 + 1, 4 + 3) = 5; {A,B}:
    min(3 + 3, 3 + 2) = 5; {A,B,C}: 4 + min(5, 5, 4) = 8."""
    la = np.array([[[2.0, 0.0]], [[0.0, 3.0]], [[1.0, 1.0]]])
    pt = la[:, 0, :]
    lazy = LazyChainBound(
        la, np.zeros(1), np.ones(3), np.zeros((3, 3), bool), np.array([2.0, 3.0, 1.0]), pt
    )
    assert lazy.bound(0b111, 8.0) == pytest.approx(8.0)
    assert lazy.bound(0b111, 9.0) < 9.0  # chain is 8: never more
    assert lazy.high[0b111] == 9.0  # the failure is certified
    assert lazy.bound(0b101, 4.0) == pytest.approx(4.0)  # {A, C}
    assert lazy.bound(0b110, 5.0) == pytest.approx(5.0)  # {B, C}


def test_lazy_chain_respects_precedence_by_hand() -> None:
    """One port, jobs 2 (weight 1) and 1 (weight 1): chain 1 + 3 = 4 with the short job first;
    forcing the long one first (precedence 0 -> 1) gives 2 + 3 = 5."""
    la = np.array([[[2.0]], [[1.0]]])
    prec = np.array([[False, True], [False, False]])
    lazy = LazyChainBound(la, np.zeros(1), np.ones(2), prec, np.array([2.0, 1.0]), la[:, 0, :])
    assert lazy.bound(0b11, 5.0) == pytest.approx(5.0)
    free = LazyChainBound(
        la, np.zeros(1), np.ones(2), np.zeros((2, 2), bool), np.array([2.0, 1.0]), la[:, 0, :]
    )
    assert free.bound(0b11, 5.0) == pytest.approx(4.0)


# ---------------------------------------------------------------- against the table
@pytest.mark.parametrize("integral", [False, True])
def test_lazy_chain_equals_the_table(integral: bool) -> None:
    """On every subset of random instances with releases: asked for the tabulated value,
    the search proves it; asked for more, it never claims more (both with a huge budget)."""
    for seed in range(25):
        inst = uniform(
            int(1 + seed % 3), int(2 + seed % 7), density=0.6, sizes=(1, 5), weights=(0, 3),
            release_rate=0.5 if seed % 2 else None, seed=seed,
        )  # fmt: skip
        data = _Data(inst, SolverOptions(), math.inf, integral=integral, chain_bound="table")
        assert data.chain is not None
        for mask in range(1, 1 << data.n):
            lazy = lazy_of(data)
            want = float(data.chain[mask])
            assert lazy.bound(mask, want) >= want - TOL * max(1.0, want), (seed, mask)
            assert lazy.bound(mask, want + 1.0) <= want + TOL * max(1.0, want), (seed, mask)


def test_lazy_chain_with_small_budget_is_still_a_bound() -> None:
    """A budget too small to prove anything returns a value at most the chain bound."""
    inst = uniform(3, 9, density=0.6, sizes=(1, 9), seed=3)
    data = _Data(inst, SolverOptions(), math.inf, chain_bound="table")
    assert data.chain is not None
    full = (1 << data.n) - 1
    for budget in (1, 5, 50):
        value = lazy_of(data, budget).bound(full, math.inf)
        assert value <= data.chain[full] + TOL


# ---------------------------------------------------------------- against brute force
@pytest.mark.parametrize("seed", range(40))
def test_lazy_root_bound_below_brute_force(seed: int) -> None:
    inst = random_instance(seed)
    opt = fluid_opt(inst)
    data = _Data(inst, SolverOptions(), math.inf, chain_bound="lazy")
    full = (1 << data.n) - 1
    assert data.lower_bound(full, opt + 1.0) <= opt + TOL * max(1.0, opt)


@pytest.mark.parametrize("seed", range(30))
@pytest.mark.parametrize(
    "params",
    [
        {"chain_bound": "lazy"},
        {"chain_bound": "lazy", "chain_budget": 1},
        {"chain_bound": "none"},
        {"chain_bound": "table", "weighted_group": False},
    ],
    ids=["lazy", "lazy-budget-1", "none", "table-unweighted"],
)
def test_exact_fluid_options_prove_the_brute_force_optimum(seed: int, params: dict) -> None:
    """Every bound option (the default, lazy + weighted group, is in the differential suite)
    proves the brute-force optimum; the schedule verifies at that cost."""
    inst = random_instance(1000 + seed)
    opt = fluid_opt(inst)
    sol = solve_exact_fluid(inst, **params)
    tol = 1e-6 * max(1.0, opt)
    assert sol.status is SolveStatus.OPTIMAL
    assert sol.objective == pytest.approx(opt, abs=tol)
    assert sol.bound == pytest.approx(opt, abs=tol)
    report = cl.verify(inst, sol.schedule)
    assert report.feasible
    assert float(np.dot(inst.coflow_weight, report.coflow_completion)) == pytest.approx(
        opt, abs=tol
    )


@pytest.mark.parametrize("seed", range(6))
def test_exact_fluid_lazy_equals_table_on_medium_instances(seed: int) -> None:
    """Past brute force: the lazy and tabulated chain bounds, with and without the weighted
    group LPs, prove the same optimum on 7-coflow instances with releases."""
    inst = uniform(3, 7, density=0.5, sizes=(1, 6), weights=(1, 4), release_rate=0.2, seed=seed)
    values = [
        solve_exact_fluid(inst, chain_bound=c, weighted_group=g)
        for c in ("table", "lazy")
        for g in (False, True)
    ]
    assert all(v.status is SolveStatus.OPTIMAL for v in values)
    ref = values[0].objective
    assert [v.objective for v in values] == pytest.approx([ref] * 4, rel=1e-7)


def test_chain_order_is_a_permutation_obeying_precedence() -> None:
    for seed in range(10):
        inst = uniform(2, 8, density=0.5, sizes=(1, 3), seed=seed)
        for mode in ("table", "lazy"):
            data = _Data(inst, SolverOptions(), math.inf, chain_bound=mode)
            order = _chain_order(data)
            assert sorted(order) == list(range(data.n))
            rank = {j: k for k, j in enumerate(order)}
            for a, b in np.argwhere(data.prec).tolist():
                assert rank[a] < rank[b]


def test_bad_options_are_refused() -> None:
    inst = random_instance(0)
    assert "lazy" in CHAIN_BOUNDS
    with pytest.raises(ValueError, match="chain_bound"):
        solve_exact_fluid(inst, chain_bound="bogus")
    with pytest.raises(ValueError, match="chain_budget"):
        solve_exact_fluid(inst, chain_budget=0)


def test_time_limit_with_the_lazy_bound_returns_a_verified_incumbent_and_bound() -> None:
    """Past the table (24 coflows), a short time limit: the status says so, the bound is
    at most the verified cost of the returned schedule."""
    inst = uniform(4, 24, density=0.5, sizes=(1, 10), weights=(1, 4), seed=2)
    sol = solve_exact_fluid(inst, SolverOptions(time_limit=3.0))
    assert sol.details["chain_bound"] == "lazy"
    assert sol.status in (SolveStatus.TIME_LIMIT, SolveStatus.OPTIMAL)
    report = cl.verify(inst, sol.schedule)
    assert report.feasible
    cost = float(np.dot(inst.coflow_weight, report.coflow_completion))
    assert cost == pytest.approx(sol.objective, rel=1e-9)
    assert sol.bound <= cost * (1 + 1e-9)
    # at least the plain bound Σ w (r + ρ), computed here from the instance
    plain = float(np.dot(inst.coflow_weight, inst.coflow_release + inst.bottleneck))
    assert sol.bound >= plain * (1 - 1e-9)


# ---------------------------------------------------------------- compiled against Python
def _lazy_pair(data: _Data, prec: np.ndarray, budget: int) -> tuple[LazyChainBound, ...]:
    args = (data.load_after, data.levels, data.w, prec, data.lb_single, data.port_time)
    return tuple(
        LazyChainBound(*args, whole=data.integral, budget=budget, compiled=compiled)
        for compiled in (True, False)
    )


@pytest.mark.parametrize("seed", range(40))
def test_compiled_search_equals_the_python_search(seed: int) -> None:
    """The compiled search against the Python one (the reference) on one sequence of calls:
    the same values bit for bit, the same memos (proven bounds, certified failures) and
    subsets refined; with and without releases, whole slots, random precedences, budgets
    that stop the search, targets just below, at and above the tabulated chain value."""
    rng = np.random.default_rng([11, seed])
    inst = uniform(
        int(1 + seed % 4), int(3 + seed % 9), density=0.6, sizes=(1, 9), weights=(0, 3),
        release_rate=0.5 if seed % 2 else None, seed=seed,
    )  # fmt: skip
    table = _Data(inst, SolverOptions(), math.inf, integral=seed % 3 == 0, chain_bound="table")
    assert table.chain is not None
    n = table.n
    prec = np.triu(rng.random((n, n)) < (0.2 if seed % 4 == 1 else 0.0), 1)
    fast, slow = _lazy_pair(table, prec, budget=(3, 40, 10**6)[seed % 3])
    assert fast.compiled and not slow.compiled
    for _ in range(60):
        mask = int(rng.integers(1, 1 << n))
        target = float(table.chain[mask]) * float(rng.choice([0.5, 0.99, 1.0, 1 + 1e-11, 1.01]))
        got, want = fast.bound(mask, target), slow.bound(mask, target)
        assert np.float64(got).tobytes() == np.float64(want).tobytes(), (mask, target)
    assert dict(fast.low) == slow.low
    assert dict(fast.high) == slow.high
    assert fast.refined == slow.refined


def test_compiled_search_out_of_time_refines_nothing() -> None:
    """Out of time, the compiled search refines no subset and still returns a bound (the
    floors' least candidate); above 62 coflows the Python search runs."""
    inst = uniform(3, 9, density=0.6, sizes=(1, 9), seed=3)
    data = _Data(inst, SolverOptions(), math.inf, chain_bound="table")
    assert data.chain is not None
    full = (1 << data.n) - 1
    lazy = LazyChainBound(
        data.load_after, data.levels, data.w, data.prec, data.lb_single, data.port_time,
        time_left=lambda: 0.0,
    )  # fmt: skip
    value = lazy.bound(full, float(data.chain[full]))
    assert math.isfinite(value) and 0.0 < value <= data.chain[full] + TOL
    assert lazy.refined == 1 and dict(lazy.low) == {0: 0.0, full: value}
    big = uniform(2, 63, density=0.3, sizes=(1, 3), seed=1)
    wide = _Data(big, SolverOptions(), math.inf, chain_bound="lazy")
    assert wide.lazy is not None and not wide.lazy.compiled


def test_memo_table_keeps_every_entry_as_it_grows() -> None:
    """The compiled search's memo table (open addressing) against a dict: keys that collide
    on purpose (consecutive masks, multiples of large powers of two) and random ones, each
    stored after the table made room; every value read back, absent keys give the default,
    overwriting counts no new entry, and the table stays at most two-thirds full."""
    from coflowlab.formulations._fluid_bounds_jit import memo_get, memo_put
    from coflowlab.formulations.fluid_bounds import _MemoTable

    rng = np.random.default_rng(5)
    keys = np.concatenate([
        np.arange(3000), np.arange(1, 2000) << 40, rng.integers(0, 1 << 62, 5000),
    ]).astype(np.int64)  # fmt: skip
    table = _MemoTable(capacity=16)
    want: dict[int, float] = {}
    count = 0
    for start in range(0, len(keys), 500):
        batch = keys[start : start + 500]
        table.reserve(count, len(batch))
        assert 3 * (count + len(batch)) <= 2 * len(table.keys)
        for key in batch.tolist():
            value = float(rng.random())
            count += memo_put(table.keys, table.vals, key, value)
            want[key] = value
    assert count == len(want) and table.as_dict() == want
    for key in keys[:50].tolist():
        assert memo_get(table.keys, table.vals, key, -1.0) == want[key]
    assert memo_get(table.keys, table.vals, 1 << 61, -1.5) == -1.5


def test_compiled_search_equals_the_python_search_past_the_first_table() -> None:
    """As the test above on an instance with more subsets than the compiled memo's first
    table holds (15 coflows, small budget, many calls), so the tables grow during the
    calls: the same values, memos and refinements as the Python search."""
    rng = np.random.default_rng(7)
    inst = uniform(4, 15, density=0.5, sizes=(1, 9), weights=(1, 4), seed=7)
    table = _Data(inst, SolverOptions(), math.inf, chain_bound="table")
    assert table.chain is not None
    n = table.n
    fast, slow = _lazy_pair(table, np.zeros((n, n), dtype=bool), budget=200)
    for _ in range(400):
        mask = int(rng.integers(1, 1 << n))
        target = float(table.chain[mask]) * float(rng.choice([0.99, 1.0, 1.01]))
        got, want = fast.bound(mask, target), slow.bound(mask, target)
        assert np.float64(got).tobytes() == np.float64(want).tobytes(), (mask, target)
    low = dict(fast.low)
    assert len(low) > 4096 * 2 // 3  # past the first table
    assert low == slow.low and dict(fast.high) == slow.high
    assert fast.refined == slow.refined
