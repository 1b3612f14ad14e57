"""Tests of the Qiu-Stein-Zhong grouping algorithm (docs/theory.md#qsz, P6, P7).

Oracles: the verifier (through ``approximation_solution``), the LP's own primal values re-solved
here (the half-interval rule and the two lemmas of the derivation), the aggregated matrix's ``ρ``
recomputed from the instance, the known optima of docs/theory.md#instances and the exact slotted
MIP on small instances.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from coflowlab import Fabric, Instance
from coflowlab.approximations.qsz import half_interval_groups, solve_qsz, solve_qsz_random
from coflowlab.exceptions import InvalidInstanceError
from coflowlab.formulations import solve_method
from coflowlab.formulations.bounds import completion_floor
from coflowlab.formulations.interval_lp import solve_interval_lp_primal
from coflowlab.instances.examples import EXAMPLES, EXPECTED
from coflowlab.instances.generators import concurrent_open_shop, single_port, uniform
from coflowlab.solution import Solution, SolutionKind

THEORY = ["theory_i1", "theory_i2", "theory_i3", "theory_i4", "theory_r1"]


def capacities(inst: Instance) -> np.ndarray:
    return np.round(inst.fabric.port_capacity).astype(int)


def group_rho(inst: Instance, members: list[int]) -> int:
    """ρ of the aggregated matrix, from the instance: max over ports of ⌈load / capacity⌉."""
    load = inst.port_load[members].sum(axis=0)
    return int(max(math.ceil(x / c - 1e-9) for x, c in zip(load, capacities(inst), strict=True)))


def check_grouped(inst: Instance, sol: Solution, *, backfill: bool = False) -> None:
    """Feasible, exact group spans, the grouped value and the derived guarantee."""
    assert sol.kind is SolutionKind.APPROXIMATION and sol.report is not None
    assert sol.report.feasible
    d = sol.details
    sched = sol.schedule
    assert sched is not None
    end = 0
    grouped = 0.0
    w = inst.coflow_weight
    for members, start, rho in zip(d["groups"], d["group_start"], d["group_rho"], strict=True):
        flows = np.flatnonzero(np.isin(inst.flow_coflow, members))
        release = int(max(math.ceil(inst.flow_release[e] - 1e-9) for e in flows))
        assert start == max(end, release)
        assert rho == group_rho(inst, members)
        if not backfill:  # BvN exactness: the group fills exactly (start, start + ρ]
            used = sched.slot[np.isin(sched.flow, flows)]
            assert used.min() >= start + 1
            assert used.max() == start + rho
            done = sol.completion_times[members]
            assert (done <= start + rho).all()
        end = start + rho
        grouped += float(w[members].sum()) * end
    assert d["grouped_value"] == pytest.approx(grouped)
    assert sol.objective <= grouped + 1e-9
    assert sol.guarantee is not None
    assert sol.guarantee.holds(grouped, sol.bound)


# ---------------------------------------------------------------- instances
def with_capacities(inst: Instance, seed: int) -> Instance:
    rng = np.random.default_rng(seed)
    m = inst.num_ports
    fabric = Fabric(
        m, ingress_capacity=rng.integers(1, 4, m), egress_capacity=rng.integers(1, 3, m)
    )
    return inst.replace(fabric=fabric)


ZERO_RELEASE = (
    [uniform(3, 5, density=0.5, weights=(1, 3), seed=s) for s in range(3)]
    + [uniform(4, 6, density=0.3, sizes=(1, 20), seed=10 + s) for s in range(2)]
    + [concurrent_open_shop(3, 5, weights=(1, 4), seed=s) for s in range(2)]
    + [single_port(5, seed=s) for s in range(2)]
    + [
        with_capacities(uniform(3, 5, density=0.5, sizes=(1, 12), seed=30 + s), s)
        for s in range(2)
    ]
)
RELEASES = [
    uniform(3, 5, density=0.5, release_rate=0.3, weights=(1, 3), seed=40 + s) for s in range(4)
] + [with_capacities(uniform(3, 4, density=0.5, release_rate=0.5, seed=50), 5)]


@pytest.mark.parametrize("inst", ZERO_RELEASE + RELEASES)
@pytest.mark.parametrize("backfill", [False, True])
def test_grouped_schedule_and_guarantee(inst: Instance, backfill: bool) -> None:
    check_grouped(inst, solve_qsz(inst, backfill=backfill), backfill=backfill)


@pytest.mark.parametrize("inst", ZERO_RELEASE[:3] + RELEASES[:2])
def test_random_grouped_schedule_and_guarantee(inst: Instance) -> None:
    for seed in range(3):
        check_grouped(inst, solve_qsz_random(inst, seed=seed))


@pytest.mark.parametrize("inst", ZERO_RELEASE + RELEASES)
def test_deterministic_guarantee_is_the_derived_one(inst: Instance) -> None:
    """Factor 16 (20 with releases) and additive 2τ₁·w(G₁) (3τ₁·w(G₁)): the grid is whole,
    so the rounding term vanishes."""
    sol = solve_qsz(inst)
    d = sol.details
    tau1 = d["grid"][1]
    assert tau1 == d["first"] == float(math.ceil(completion_floor(inst).min() - 1e-9))
    w1 = sum(
        float(inst.coflow_weight[g].sum())
        for g, lev in zip(d["groups"], d["group_interval"], strict=True)
        if lev == 1
    )
    factor, lead = (20.0, 3.0) if inst.has_releases else (16.0, 2.0)
    assert sol.guarantee is not None
    assert sol.guarantee.factor == factor
    assert sol.guarantee.additive == pytest.approx(lead * tau1 * w1)


@pytest.mark.parametrize("inst", ZERO_RELEASE[:4] + RELEASES[:3])
def test_half_interval_rule_and_lemmas(inst: Instance) -> None:
    """The groups are the half-interval rule on the LP's primal values, and the derivation's
    two lemmas hold: ρ(G_u) ≤ ⌈2τ_u⌉ and C̄_j ≥ τ_{ℓ_j}/4 for ℓ_j ≥ 2 (τ_Λ = 2τ_{Λ−1})."""
    sol = solve_qsz(inst)
    d = sol.details
    floor = completion_floor(inst)
    lp = solve_interval_lp_primal(inst, first=d["first"], last=float(floor.max()))
    assert lp.cumulative is not None
    assert lp.solution.objective == pytest.approx(sol.bound, rel=1e-6)
    ell = half_interval_groups(lp.cumulative)
    levels = sorted(set(ell.tolist()))
    assert d["group_interval"] == levels
    assert d["groups"] == [np.flatnonzero(ell == lev).tolist() for lev in levels]
    tau = np.append(lp.grid[1:], 2 * lp.grid[-1])
    for lev, rho in zip(levels, d["group_rho"], strict=True):
        assert rho <= math.ceil(2 * tau[lev - 1] - 1e-9)
    x = np.diff(lp.cumulative, axis=1, prepend=0.0)
    cbar = (lp.charge * x).sum(axis=1)
    assert np.dot(inst.coflow_weight, cbar) == pytest.approx(sol.bound, rel=1e-6)
    for j, lev in enumerate(ell.tolist()):
        if lev >= 2:
            assert cbar[j] >= tau[lev - 1] / 4 - 1e-9


def test_half_interval_groups_rule() -> None:
    x = [[0.0, 0.5, 1.0], [0.49, 0.51, 1.0], [0.5 - 1e-12, 0.7, 1.0], [0.0, 0.0, 1.0]]
    assert half_interval_groups(x).tolist() == [2, 2, 1, 3]
    with pytest.raises(ValueError, match="last column"):
        half_interval_groups([[0.0, 0.2]])


# ---------------------------------------------------------------- one coflow (P7, F1)
@pytest.mark.parametrize(
    "inst",
    [
        Instance.from_matrices([[[1, 2], [3, 0]]], weight=[2]),
        Instance.from_matrices([[[5, 0, 1], [0, 4, 2], [3, 3, 0]]]),
        Instance.from_matrices([[[7, 2], [1, 9]]]).replace(
            fabric=Fabric(2, ingress_capacity=[2, 3], egress_capacity=[1, 4])
        ),
        Instance.from_matrices([[[2, 1], [1, 2]]], release=[2.5], weight=[3]),
    ],
)
@pytest.mark.parametrize("random", [False, True])
def test_one_coflow_gives_rho(inst: Instance, random: bool) -> None:
    sol = solve_qsz_random(inst, seed=4) if random else solve_qsz(inst)
    rho = group_rho(inst, [0])
    release = math.ceil(inst.coflow_release[0])
    assert sol.objective == inst.coflow_weight[0] * (release + rho)
    assert sol.details["group_rho"] == [rho]


# ---------------------------------------------------------------- randomization
def test_random_is_reproducible() -> None:
    inst = RELEASES[0]
    a, b = solve_qsz_random(inst, seed=7), solve_qsz_random(inst, seed=7)
    assert a.details["offset"] == b.details["offset"]
    assert a.details["grid"] == b.details["grid"]
    assert a.objective == b.objective
    assert a.schedule is not None and b.schedule is not None
    assert np.array_equal(a.schedule.slot, b.schedule.slot)
    assert np.array_equal(a.schedule.flow, b.schedule.flow)
    assert np.array_equal(a.schedule.amount, b.schedule.amount)
    gen = solve_qsz_random(inst, seed=np.random.default_rng(7))
    assert gen.details["offset"] == a.details["offset"]


def test_random_differs_across_seeds() -> None:
    inst = uniform(4, 8, density=0.4, sizes=(1, 9), weights=(1, 5), seed=3)
    sols = [solve_qsz_random(inst, seed=s) for s in range(6)]
    offsets = {s.details["offset"] for s in sols}
    assert len(offsets) == 6
    assert all(0 <= u < 1 for u in offsets)
    for s in sols:
        first = s.details["first"]
        whole = math.ceil(completion_floor(inst).min() - 1e-9)
        assert first == pytest.approx(whole * 2 ** s.details["offset"])
    outcomes = {(s.bound, tuple(map(tuple, s.details["groups"]))) for s in sols}
    assert len(outcomes) > 1


# ---------------------------------------------------------------- backfilling
@pytest.mark.parametrize("inst", ZERO_RELEASE[:6] + RELEASES)
def test_backfill_never_worse(inst: Instance) -> None:
    for run in (solve_qsz, lambda i, **k: solve_qsz_random(i, seed=2, **k)):
        plain, filled = run(inst), run(inst, backfill=True)
        assert filled.details["grid"] == plain.details["grid"]
        assert filled.completion_times is not None and plain.completion_times is not None
        assert (filled.completion_times <= plain.completion_times).all()
        assert filled.objective <= plain.objective


def test_backfill_uses_idle_slot_of_r1() -> None:
    """Theory R1: the group of both coflows starts after slot 1 (C1 is released at 1); the
    grouped schedule leaves slot 1 idle, backfilling sends a unit of C0 there."""
    inst = EXAMPLES["theory_r1"]()
    plain, filled = solve_qsz(inst), solve_qsz(inst, backfill=True)
    assert plain.details["group_start"][0] >= 1
    assert plain.schedule is not None and filled.schedule is not None
    assert 1 not in plain.schedule.slot.tolist()
    assert 1 in filled.schedule.slot.tolist()
    assert filled.objective < plain.objective


# ------------------------------------------------------- docs/theory.md#instances and the LP
@pytest.mark.parametrize("name", THEORY)
def test_theory_instances(name: str) -> None:
    inst = EXAMPLES[name]()
    opt = EXPECTED[name]["opt_sum_wc"]["slotted"]
    for sol in (solve_qsz(inst), solve_qsz(inst, backfill=True), solve_qsz_random(inst)):
        check_grouped(inst, sol, backfill=sol.details["backfill"])
        assert sol.bound <= opt + 1e-6  # P1: LP ≤ OPT
        assert sol.objective >= opt - 1e-9  # a schedule costs at least OPT
    if name == "theory_i1":
        assert solve_qsz(inst).objective == opt == 4.0


@pytest.mark.parametrize("seed", range(4))
def test_lp_below_exact_slotted_opt(seed: int) -> None:
    inst = uniform(2, 3, density=0.5, sizes=(1, 3), weights=(1, 3), seed=60 + seed)
    if seed % 2:
        inst = inst.replace(coflow_release=np.array([0.0, 1.0, 2.0]))
    opt = solve_method(inst, "exact-slotted").objective
    for sol in (solve_qsz(inst), solve_qsz_random(inst, seed=seed)):
        assert sol.bound <= opt * (1 + 1e-6)
        assert sol.objective >= opt - 1e-9


# ---------------------------------------------------------------- errors
def test_rejects_fractional_sizes_and_capacities() -> None:
    with pytest.raises(InvalidInstanceError, match=r"qsz: coflow 0, flow 1: size 1.5"):
        solve_qsz(Instance.from_matrices([[[1, 1.5], [0, 0]]]))
    frac = Instance.from_matrices([[[1, 1], [0, 0]]]).replace(
        fabric=Fabric(2, egress_capacity=[1, 0.5])
    )
    with pytest.raises(InvalidInstanceError, match=r"qsz-random: egress port 1: capacity 0.5"):
        solve_qsz_random(frac)


def test_rejects_dependencies() -> None:
    inst = Instance(1, [0, 1], [0, 0], [0, 0], [1, 1], dependencies=[(0, 1)])
    with pytest.raises(InvalidInstanceError, match="coflow 1 depends on coflow 0"):
        solve_qsz(inst)
