"""Tests of the two release-date bounds of ``exact-fluid``'s branch and bound (issue 19):
the bound of a release child from its parent's group LPs (``release_bound="lp"``) and the
fluid optimum of small unordered sets (``exact_subsets=K``).

Oracles, no code shared with the search: :mod:`brute_force` (``proofs-checks``), whose
``fluid_opt`` takes the least scipy LP over every event sequence, and whose per-sequence LP
``_sequence_lp`` gives the brute-force optimum of one node of the search (every order of
its unordered coflows, every interleaving of its release events with them). Each bound must
not exceed the brute-force value it bounds; the searches must prove the brute-force
optimum and the old path's; and an inflated bound must make these checks fail.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from brute_force import _sequence_lp, fluid_opt

import coflowlab as cl
import coflowlab.formulations.exact_fluid as ef
from coflowlab.formulations.exact_fluid import _Data, solve_exact_fluid
from coflowlab.formulations.order_lp import coflow_release_slot, release_values
from coflowlab.instances.generators import uniform
from coflowlab.solvers import SolverOptions, SolveStatus

TOL = 1e-6
"""Relative slack of a bound against a brute-force value (the LP solvers' tolerance)."""


def release_instance(seed: int, n: int = 4) -> cl.Instance:
    """1-3 ports, ``n`` coflows of 1-3 flows with quarter sizes, weights 1-4, releases from
    four values (the first coflow at 0, so that something can start)."""
    rng = np.random.default_rng([1919, seed])
    m = int(rng.integers(1, 4))
    levels = [0.0, *np.round(rng.uniform(0.2, 3.0, size=3), 3)]
    coflows = []
    for j in range(n):
        flows = [
            (int(rng.integers(m)), int(rng.integers(m)), 0.25 * int(rng.integers(1, 9)))
            for _ in range(int(rng.integers(1, 4)))
        ]
        release = float(rng.choice(levels)) if j else 0.0
        coflows.append(cl.Coflow(flows, release=release, weight=float(rng.integers(1, 5))))
    return cl.Instance.from_coflows(coflows, cl.Fabric(m))


def node_optimum(
    inst: cl.Instance, mask: int, suffix: tuple[int, ...], slots: tuple[int, ...], last: int
) -> float:
    """The brute-force optimum below a node: the coflows of ``mask`` complete in any order,
    each after any number of release events up to ``last`` (non-decreasing, at least its own
    release's), then the fixed ``suffix`` with its ``slots``."""
    values = release_values(inst)
    low = coflow_release_slot(inst)
    members = [j for j in range(inst.num_coflows) if (mask >> j) & 1]
    best = math.inf
    for order in itertools.permutations(members):
        ranges = [range(int(low[j]), last + 1) for j in order]
        for head in itertools.product(*ranges):
            if any(b < a for a, b in itertools.pairwise(head)):
                continue
            seq = list(zip(order, head, strict=True)) + list(zip(suffix, slots, strict=True))
            events: list[tuple[str, int]] = []
            placed = 0
            for j, s in seq:
                while placed < s:
                    placed += 1
                    events.append(("R", placed))
                events.append(("C", j))
            best = min(best, _sequence_lp(inst, events, values))
    return best


def release_children(
    inst: cl.Instance, **params: Any
) -> Iterator[tuple[cl.Instance, float, int, tuple[int, ...], tuple[int, ...], int]]:
    """Runs the search and yields, for each release child bounded by its parent
    (``_release_child_bound``), the instance searched (the searches on small subsets have
    their own), its bound, unordered set, suffix, slots and the number of release events
    its unordered coflows may follow."""
    seen: list[tuple[cl.Instance, float, int, tuple[int, ...], tuple[int, ...], int]] = []
    current = ef._release_child_bound  # the real rule, or an injected one

    def spy(data: _Data, node: Any, exact: dict[float, float], target: float, lp: bool) -> float:
        value = current(data, node, exact, target, lp)
        # data.instance: the searches on small subsets (exact_subsets) are checked too
        seen.append((data.instance, value, node.mask, node.suffix, node.slots, node.qrem - 1))
        return value

    ef._release_child_bound = spy
    try:
        solve_exact_fluid(inst, **params)
    finally:
        ef._release_child_bound = current
    yield from seen


def release_violations(seeds: range, **params: Any) -> tuple[int, list[Any]]:
    """The release-child bounds checked on the instances of ``seeds`` and those above their
    brute-force node optimum."""
    checked, bad = 0, []
    for seed in seeds:
        inst = release_instance(seed, n=6)
        for searched, value, mask, suffix, slots, last in release_children(inst, **params):
            opt = node_optimum(searched, mask, suffix, slots, last)
            checked += 1
            if value > opt + TOL * max(1.0, abs(opt)):
                bad.append((seed, mask, suffix, slots, value, opt))
    return checked, bad


# ------------------------------------------------------------ release children
def test_release_child_bound_is_at_most_the_child_optimum():
    """Every release child's bound (from its parent's group LPs: ``G(w) - w R`` plus a bound
    of ``U``) is at most the brute-force optimum of the child (``U`` in every order, all
    of it before the release event placed, then the suffix)."""
    checked, bad = release_violations(range(40))
    assert checked >= 20  # the instances do exercise the rule
    assert not bad, bad[:3]


def test_an_inflated_release_child_bound_is_caught(monkeypatch):
    """The check above fails on a bound inflated by 5 %: it can fail."""
    real = ef._release_child_bound

    def inflated(*args: Any) -> float:
        return 1.05 * real(*args)

    monkeypatch.setattr(ef, "_release_child_bound", inflated)
    _, bad = release_violations(range(40))
    assert bad


# ------------------------------------------------------------ exact small subsets
def subset_data(inst: cl.Instance, k: int) -> _Data:
    return _Data(inst, SolverOptions(), math.inf, exact_subsets=k)


def subset_violations(seed: int) -> list[Any]:
    """For every proper subset ``S`` of a small instance with releases: the bound of ``S``
    with ``exact_subsets`` where it exceeds the brute-force fluid optimum of ``S`` alone,
    falls below the bound without it, or (two coflows or more) is not that optimum."""
    inst = release_instance(seed, n=5)
    new, old = subset_data(inst, 4), subset_data(inst, 0)
    bad = []
    for mask in range(1, (1 << inst.num_coflows) - 1):
        members = [j for j in range(inst.num_coflows) if (mask >> j) & 1]
        opt = fluid_opt(inst.subset(members))
        got = new.lower_bound(mask, opt + 1.0)
        above = got > opt + TOL * max(1.0, opt)
        weaker = got < old.lower_bound(mask, opt + 1.0) - 1e-12
        loose = len(members) >= 2 and abs(got - opt) > 1e-6 * max(1.0, opt)
        if above or weaker or loose:
            bad.append((mask, got, opt))
    return bad


@pytest.mark.parametrize("seed", range(12))
def test_subset_bound_is_the_subset_optimum(seed):
    """The bound of a small set ``U`` with ``exact_subsets`` is at most the brute-force
    fluid optimum of ``U`` alone (within tolerance: it is that optimum), and at least the
    bound without it."""
    assert not subset_violations(seed)


def test_an_inflated_subset_bound_is_caught(monkeypatch):
    """The check above fails on a subset optimum inflated by 5 %: it can fail."""
    real = _Data._subset_optimum
    monkeypatch.setattr(
        _Data, "_subset_optimum", lambda self, mask, target: 1.05 * real(self, mask, target)
    )
    assert subset_violations(0)


# ------------------------------------------------------------ the optimum either way
PARAMS: list[dict[str, Any]] = [
    {"release_bound": "parent", "exact_subsets": 0},
    {"release_bound": "lp", "exact_subsets": 0},
    {"release_bound": "lp", "exact_subsets": 2},
    {"release_bound": "lp", "exact_subsets": 3},
    {"release_bound": "lp", "exact_subsets": 3, "warm_start": False},
    {"release_bound": "lp", "exact_subsets": 3, "chain_bound": "lazy"},
]


@pytest.mark.parametrize("seed", range(15))
def test_every_variant_proves_the_brute_force_optimum(seed):
    """Old path, new release bound, exact subsets of several sizes (warm or cold, table or
    lazy chain bound): each proves the brute-force fluid optimum of small instances with
    releases."""
    inst = release_instance(seed, n=4)
    opt = fluid_opt(inst)
    for params in PARAMS:
        sol = solve_exact_fluid(inst, **params)
        assert sol.status is SolveStatus.OPTIMAL, params
        assert sol.objective == pytest.approx(opt, rel=1e-6), params
        assert sol.bound <= opt + TOL * max(1.0, opt), params


def test_new_and_old_paths_agree_on_larger_instances():
    """On random 3×3 instances of 9 coflows with Poisson releases (past brute force), the
    new bounds prove the old path's optimum (and the subset bound is used on some)."""
    used = 0
    for seed in range(3):
        inst = uniform(
            3, 9, density=0.5, sizes=(1, 10), weights=(1, 4), release_rate=0.1, seed=seed
        )
        old = solve_exact_fluid(inst, release_bound="parent", exact_subsets=0)
        new = solve_exact_fluid(inst, release_bound="lp", exact_subsets=6)
        assert old.status is new.status is SolveStatus.OPTIMAL
        assert new.objective == pytest.approx(old.objective, rel=1e-7)
        used += new.details["subset_solves"]
    assert used > 0


def test_bad_parameters_are_refused():
    inst = release_instance(0)
    with pytest.raises(ValueError, match="release_bound"):
        solve_exact_fluid(inst, release_bound="pinned")
    with pytest.raises(ValueError, match="exact_subsets"):
        solve_exact_fluid(inst, exact_subsets=-1)
