"""Tests of the tabulated chain bound of ``exact-fluid``'s branch and bound: the compiled
table (``_fluid_bounds_jit.subset_tables``) and the ``table_coflows`` option that tabulates
past 20 coflows.

Oracles: the layered numpy recursion the table was computed by before (copied here as
:func:`layered_tables`, the reference the compiled pass must match to the last bit); the
brute-force fluid optimum of ``proofs-checks`` (:func:`brute_force.fluid_opt`, one scipy LP
per event sequence, no code shared), which every chain value of a set must not exceed (the
chain bound of ``S`` is a lower bound on the optimum of the sub-instance ``S``); and the
search with the table off, which must prove the same optimum.
"""

from __future__ import annotations

import math
import time

import numpy as np
import numpy.typing as npt
import pytest
from brute_force import fluid_opt

import coflowlab as cl
from coflowlab.formulations.exact_fluid import (
    MAX_SUBSET_TABLE,
    MAX_TABLE_COFLOWS,
    _Data,
    _subset_tables,
    solve_exact_fluid,
)
from coflowlab.instances.generators import uniform
from coflowlab.solvers import SolverOptions, SolveStatus

TOL = 1e-6
"""Relative slack of a bound against a brute-force optimum (scipy's LP tolerance)."""


def layered_tables(
    load_after: npt.NDArray[np.float64],
    levels: npt.NDArray[np.float64],
    w: npt.NDArray[np.float64],
    prec: npt.NDArray[np.bool_],
    whole: bool = False,
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """The numpy version of ``_subset_tables`` before the compiled pass: spans per release
    level and port by doubling, then the chain recursion layer by layer (subsets by size)."""
    n = len(w)
    size = 1 << n
    span = np.zeros(size)
    load = np.zeros(size)
    for i, level in enumerate(levels.tolist()):
        need = np.zeros(size)
        for v in np.flatnonzero(load_after[:, i, :].sum(axis=0) > 0).tolist():
            for j in range(n):
                np.add(load[: 1 << j], load_after[j, i, v], out=load[1 << j : 2 << j])
            np.maximum(need, load, out=need)
        if whole:
            need = np.ceil(need - 1e-9)
        span = np.where(need > 0, np.maximum(span, level + need), span)
    masks = np.arange(size, dtype=np.int64)
    bits = np.array([bin(s).count("1") for s in range(size)])
    chain = np.zeros(size)
    succ = [int(sum(1 << k for k in np.flatnonzero(prec[j]))) for j in range(n)]
    for count in range(1, n + 1):
        layer = masks[bits == count]
        best = np.full(len(layer), np.inf)
        for j in range(n):
            ok = ((layer >> j) & 1).astype(bool) & ((layer & succ[j]) == 0)
            if ok.any():
                cand = chain[layer[ok] ^ (1 << j)] + w[j] * span[layer[ok]]
                best[ok] = np.minimum(best[ok], cand)
        chain[layer] = best
    return span, chain


def small_instance(seed: int, *, releases: bool, n_max: int = 5) -> cl.Instance:
    """1-3 ports, 1-``n_max`` coflows of 1-3 flows with quarter sizes, weights in
    ``{0, ..., 4}``, releases (when asked) from three values, capacities in
    ``{0.5, 1, 2}``."""
    rng = np.random.default_rng([19, seed])
    m = int(rng.integers(1, 4))
    n = int(rng.integers(1, n_max + 1))
    levels = [0.0, *np.round(rng.uniform(0.2, 3.0, size=2), 3)] if releases else [0.0]
    coflows = []
    for j in range(n):
        flows = [
            (int(rng.integers(m)), int(rng.integers(m)), 0.25 * int(rng.integers(1, 9)))
            for _ in range(int(rng.integers(1, 4)))
        ]
        release = float(rng.choice(levels)) if j else 0.0
        coflows.append(cl.Coflow(flows, release=release, weight=float(rng.integers(0, 5))))
    caps = [0.5, 1.0, 2.0]
    fabric = cl.Fabric(m, rng.choice(caps, size=m), rng.choice(caps, size=m))
    return cl.Instance.from_coflows(coflows, fabric)


def data_of(inst: cl.Instance) -> _Data:
    return _Data(inst, SolverOptions(), math.inf, chain_bound="none")


# ---------------------------------------------------------------- the compiled table
@pytest.mark.parametrize("integral", [False, True])
@pytest.mark.parametrize("releases", [False, True])
@pytest.mark.parametrize("seed", range(6))
def test_compiled_table_equals_the_layered_recursion_bit_for_bit(seed, releases, integral):
    """The compiled pass adds the same numbers in the same order as the layered numpy
    recursion: span and chain agree exactly, on random instances with dominance rules."""
    m = 2 + seed % 3
    inst = uniform(
        m, 6 + 2 * seed % 7, density=0.5, sizes=(1, 10), weights=(1, 4),
        release_rate=0.1 if releases else None, seed=seed,
    )  # fmt: skip
    data = data_of(inst)
    got = _subset_tables(data.load_after, data.levels, data.w, data.prec, integral)
    ref = layered_tables(data.load_after, data.levels, data.w, data.prec, integral)
    assert np.array_equal(got[0], ref[0])
    assert np.array_equal(got[1], ref[1])


def test_compiled_table_with_dependencies_and_cyclic_precedence():
    """With dependencies (precedences that are not dominance) the chain recursion skips the
    coflows that must precede another of the set; a cycle leaves no order (``inf``)."""
    inst = uniform(3, 7, density=0.6, sizes=(1, 5), weights=(1, 3), seed=4)
    data = data_of(inst)
    prec = np.zeros((7, 7), dtype=bool)
    prec[0, 3] = prec[3, 5] = prec[2, 6] = True
    got = _subset_tables(data.load_after, data.levels, data.w, prec)
    assert np.array_equal(got[1], layered_tables(data.load_after, data.levels, data.w, prec)[1])
    prec[5, 0] = True  # 0 -> 3 -> 5 -> 0
    chain = _subset_tables(data.load_after, data.levels, data.w, prec)[1]
    assert math.isinf(chain[0b101001])
    assert np.array_equal(chain, layered_tables(data.load_after, data.levels, data.w, prec)[1])


# ---------------------------------------------------------------- a valid lower bound
@pytest.mark.parametrize("releases", [False, True])
@pytest.mark.parametrize("seed", range(25))
def test_chain_of_every_subset_is_at_most_its_brute_force_optimum(seed, releases):
    """For every subset ``S`` of a small instance, ``chain(S)`` (the node bound of the set
    ``S`` of unordered coflows) is at most the fluid optimum of the sub-instance ``S``."""
    inst = small_instance(seed, releases=releases)
    data = data_of(inst)
    _, chain = _subset_tables(data.load_after, data.levels, data.w, data.prec)
    for mask in range(1, 1 << data.n):
        members = [j for j in range(data.n) if (mask >> j) & 1]
        opt = fluid_opt(inst.subset(members))
        assert chain[mask] <= opt + TOL * max(1.0, opt), (mask, chain[mask], opt)


# ---------------------------------------------------------------- the table_coflows option
@pytest.mark.parametrize("releases", [False, True])
@pytest.mark.parametrize("seed", range(4))
def test_table_and_lazy_prove_the_same_optimum(seed, releases):
    """``table_coflows=0`` (the lazy chain bound) and the default table prove the same
    optimum, and the table never needs more nodes: its chain bound is exact, the lazy one
    at most that."""
    inst = uniform(
        3, 8, density=0.5, sizes=(1, 10), weights=(1, 4),
        release_rate=0.15 if releases else None, seed=seed,
    )  # fmt: skip
    table = solve_exact_fluid(inst)
    lazy = solve_exact_fluid(inst, table_coflows=0)
    assert table.details["chain_bound"] == "table"
    assert lazy.details["chain_bound"] == "lazy"
    assert table.status is lazy.status is SolveStatus.OPTIMAL
    assert table.objective == pytest.approx(lazy.objective, rel=1e-9)


def test_default_tabulates_past_twenty_coflows_when_cheap():
    """21 coflows on 2×2 without releases: the default tabulates (the work is small) and
    proves the optimum that the search before it (``table_coflows=20``, the lazy bound)
    proves too; a 1 s time limit keeps the lazy bound (the table would take too much of
    it), as does ``chain_bound="lazy"``."""
    inst = uniform(2, 21, density=0.5, sizes=(1, 10), weights=(1, 4), seed=3)
    new = solve_exact_fluid(inst, SolverOptions(time_limit=120))
    old = solve_exact_fluid(inst, SolverOptions(time_limit=120), table_coflows=MAX_SUBSET_TABLE)
    assert new.details["chain_bound"] == "table"
    assert old.details["chain_bound"] == "lazy"
    assert new.status is old.status is SolveStatus.OPTIMAL
    assert new.objective == pytest.approx(old.objective, rel=1e-9)
    assert new.details["root_bound"] >= old.details["root_bound"] - 1e-9
    data = _Data(inst, SolverOptions(), time.perf_counter() + 1.0)  # starts now
    assert data.lazy is not None and data.chain is None


def test_bad_table_coflows_is_refused():
    inst = small_instance(0, releases=False)
    with pytest.raises(ValueError, match="table_coflows"):
        solve_exact_fluid(inst, table_coflows=-1)
    with pytest.raises(ValueError, match="table_coflows"):
        solve_exact_fluid(inst, table_coflows=MAX_TABLE_COFLOWS + 1)
