"""Tests of the time-indexed formulations (docs/theory.md#time-indexed): exact slotted MIP and
fluid LP bound.

Oracles: the known optima of docs/theory.md#instances, and the brute-force references of
``proofs-checks/brute_force.py`` (shared with the property suites): a search over every slotted
schedule of tiny instances, and the fluid optimum of tiny instances (one LP per event sequence,
solved with scipy's ``linprog``, independent of the formulations and the solver layer).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from brute_force import fluid_opt, slotted_opt
from numpy.testing import assert_equal

from coflowlab import Fabric, Instance, verify
from coflowlab.exceptions import InvalidInstanceError, ModelTooLargeError
from coflowlab.formulations import solve_method
from coflowlab.formulations.bounds import bound_release_rho, bound_smith
from coflowlab.formulations.time_indexed import (
    slotted_horizon,
    solve_exact_slotted,
    solve_time_indexed_lp,
)
from coflowlab.instances.examples import EXAMPLES, EXPECTED
from coflowlab.instances.generators import uniform
from coflowlab.solution import SolutionKind
from coflowlab.solvers import SolverOptions, SolveStatus

THEORY = ["theory_i1", "theory_i2", "theory_i3", "theory_i4", "theory_r1"]


def tiny(seed: int, releases: bool = True) -> Instance:
    """2 ports, 3 coflows, sizes 1-2, weights 1-3, releases in {0, 1, 2}."""
    inst = uniform(2, 3, density=0.3, sizes=(1, 2), weights=(1, 3), seed=seed)
    if releases:
        rel = np.random.default_rng(seed).integers(0, 3, size=3).astype(float)
        inst = inst.replace(coflow_release=rel, flow_release=rel[inst.flow_coflow])
    return inst


# ---------------------------------------------------------------- exact slotted
@pytest.mark.parametrize("name", THEORY)
def test_exact_slotted_reaches_the_known_optima(name):
    """Tests instances I1-I4 (docs/theory.md#instances) and R1: slotted OPT, proven, with a
    verified schedule."""
    inst = EXAMPLES[name]()
    sol = solve_exact_slotted(inst)
    assert sol.kind is SolutionKind.EXACT
    assert sol.status is SolveStatus.OPTIMAL
    assert sol.objective == pytest.approx(EXPECTED[name]["opt_sum_wc"]["slotted"], abs=1e-9)
    assert sol.gap <= 1e-6
    assert sol.report is not None and sol.report.feasible
    assert verify(inst, sol.schedule).feasible


@pytest.mark.parametrize("horizon", [None, 8, 12])
def test_r1_needs_preemption_at_any_valid_horizon(horizon):
    """Tests R1 with T = 8 and 12 (docs/theory.md#instances) and the default: OPT 9, C = (3, 2)."""
    sol = solve_exact_slotted(EXAMPLES["theory_r1"](), horizon=horizon)
    assert sol.objective == pytest.approx(9.0)
    assert_equal(sol.completion_times, EXPECTED["theory_r1"]["completion"]["opt_slotted"])
    assert sol.details["horizon_proven"]
    # C0 sends in slots 1 and 3, C1 in slot 2 (its release r = 1 forbids slot 1)
    s = sol.schedule
    assert_equal(sorted(s.slot[s.flow == 0].tolist()), [1, 3])


@pytest.mark.parametrize("seed", range(6))
def test_exact_slotted_equals_brute_force(seed):
    """Tests slotted OPT against the enumeration of every slotted schedule (releases,
    weights); the default horizon and its completion cutoffs lose nothing."""
    inst = tiny(seed)
    sol = solve_exact_slotted(inst)
    assert sol.status is SolveStatus.OPTIMAL
    assert sol.objective == pytest.approx(slotted_opt(inst), abs=1e-6)
    assert sol.report.feasible
    # a longer horizon (no cutoffs bind) finds the same optimum
    longer = solve_exact_slotted(inst, horizon=2 * slotted_horizon(inst))
    assert longer.objective == pytest.approx(sol.objective, abs=1e-6)


def test_exact_slotted_is_above_every_bound():
    """Tests OPT_slotted ≥ Σ w(r + ρ), the Smith bound and the time-indexed LP
    (docs/theory.md#properties, P1)."""
    for seed in range(4):
        inst = uniform(
            3, 4, density=0.3, sizes=(1, 2), weights=(1, 4), release_rate=1.0, seed=seed
        )
        inst = inst.replace(
            coflow_release=np.round(inst.coflow_release), flow_release=np.round(inst.flow_release)
        )
        opt = solve_exact_slotted(inst).objective
        for bound in (
            bound_release_rho(inst),
            bound_smith(inst),
            solve_time_indexed_lp(inst),
            solve_time_indexed_lp(inst, strengthen=True),
        ):
            assert bound.is_lower_bound
            assert bound.objective <= opt + 1e-6


def test_single_coflow_with_capacity_two_takes_its_bottleneck():
    """Tests docs/theory.md#f1 with integral capacity 2: OPT = w ρ (ports move 2 units a slot)."""
    inst = Instance(
        Fabric(2, 2.0, 2.0), [0, 0, 0], [0, 0, 1], [0, 1, 0], [3, 1, 3], coflow_weight=[2.0]
    )
    sol = solve_exact_slotted(inst)
    assert sol.objective == pytest.approx(2.0 * inst.bottleneck[0])  # ρ = 6/2 = 3
    assert sol.schedule.amount.max() == 2  # some flow moves two units in one slot


def test_dependencies_are_respected():
    """Tests a dependency a → b on disjoint ports: b waits for a (C = 2, 3; OPT 5)."""
    inst = Instance(2, [0, 1], [0, 1], [0, 1], [2, 1], dependencies=[(0, 1)])
    sol = solve_exact_slotted(inst)
    assert sol.objective == pytest.approx(5.0)
    assert_equal(sol.completion_times, [2.0, 3.0])
    assert solve_time_indexed_lp(inst).objective <= 5.0 + 1e-9


def test_short_horizon_is_not_proven():
    """Tests that a horizon below the proven one is flagged, and too short is infeasible."""
    inst = EXAMPLES["theory_r1"]()
    sol = solve_exact_slotted(inst, horizon=3)
    assert not sol.details["horizon_proven"]
    assert math.isnan(sol.bound) and math.isnan(sol.gap)
    assert "proven horizon 4" in sol.message
    none = solve_exact_slotted(inst, horizon=2)
    assert none.status is SolveStatus.INFEASIBLE and none.schedule is None


def test_exact_slotted_is_deterministic():
    """Tests that two runs return the same schedule."""
    inst = tiny(3)
    a, b = solve_exact_slotted(inst).schedule, solve_exact_slotted(inst).schedule
    assert_equal(a.slot, b.slot)
    assert_equal(a.flow, b.flow)
    assert_equal(a.amount, b.amount)


@pytest.mark.parametrize(
    ("inst", "match"),
    [
        (Instance.from_matrices([[[1, 2.5], [0, 1]]]), "coflow 0, flow 1: size 2.5"),
        (Instance.from_matrices([[[1]]], capacity=1.5), "ingress port 0: capacity 1.5"),
        (Instance(Fabric(1, 1.0, 0.5), [0], [0], [0], [1.0]), "egress port 0: capacity 0.5"),
    ],
)
def test_slotted_needs_whole_units(inst, match):
    """Tests that fractional sizes or capacities are rejected, naming the flow or port."""
    with pytest.raises(InvalidInstanceError, match=match):
        solve_exact_slotted(inst)


def test_size_guard():
    """Tests ModelTooLargeError: the message gives |E|·T and the limit."""
    inst = EXAMPLES["theory_i2"]()  # 3 flows, T = 6
    with pytest.raises(ModelTooLargeError, match=r"3 flows × 6 slots = 18 .* limit 10"):
        solve_exact_slotted(inst, max_size=10)
    with pytest.raises(ModelTooLargeError, match="time-indexed-lp"):
        solve_time_indexed_lp(inst, max_size=10)
    assert solve_exact_slotted(inst, max_size=18).objective == pytest.approx(19.0)


# ---------------------------------------------------------------- fluid LP bound
def test_lp_on_i1_by_hand():
    """Tests the LP on I1: egress 0 carries 4 units, so by slot t at most t/4 of the coflow
    is done; the bound is 1 + 3/4 + 1/2 + 1/4 = 2.5; with ``strengthen``, ρ = 4 = OPT."""
    inst = EXAMPLES["theory_i1"]()
    lp = solve_time_indexed_lp(inst)
    assert lp.kind is SolutionKind.RELAXATION and lp.status is SolveStatus.OPTIMAL
    assert lp.objective == pytest.approx(2.5)
    assert solve_time_indexed_lp(inst, strengthen=True).objective == pytest.approx(4.0)


@pytest.mark.parametrize("seed", range(4))
def test_lp_is_below_slotted_opt(seed):
    """Tests TI-LP ≤ slotted OPT (brute force) on tiny instances with releases."""
    inst = tiny(seed)
    opt = slotted_opt(inst)
    assert solve_time_indexed_lp(inst).objective <= opt + 1e-7
    assert solve_time_indexed_lp(inst, strengthen=True).objective <= opt + 1e-7


@pytest.mark.parametrize("seed", range(5))
def test_lp_is_below_fluid_opt_with_fractional_sizes(seed):
    """Tests TI-LP ≤ fluid OPT (docs/theory.md#exact by order enumeration) for fractional sizes,
    some below one unit, so the LP picks slots shorter than 1."""
    inst = uniform(
        2, 3, density=0.5, sizes=(0.3, 2.0), integral=False, weights=(0.5, 3.0), seed=seed
    )
    opt = fluid_opt(inst)
    lp = solve_time_indexed_lp(inst)
    assert lp.details["slot_length"] == pytest.approx(min(1.0, inst.flow_size.min()))
    assert lp.objective <= opt + 1e-7
    assert solve_time_indexed_lp(inst, strengthen=True).objective <= opt + 1e-7


def test_unit_slots_would_overstate_a_small_coflow():
    """Tests the slot-length rule: a coflow of size 1/2 has fluid OPT 1/2; unit slots would
    claim 1, so they are refused, and the default (δ = 1/2) gives a valid bound."""
    inst = Instance.from_matrices([[[0.5]]])
    assert solve_time_indexed_lp(inst).objective <= 0.5 + 1e-9
    with pytest.raises(InvalidInstanceError, match=r"flow 0 needs only 0.5 time"):
        solve_time_indexed_lp(inst, slot_length=1.0)


def test_lp_is_below_exact_fluid_when_available():
    """Tests TI-LP ≤ exact-fluid OPT ≤ exact-slotted OPT (docs/theory.md#properties, P2) with
    releases, if exact-fluid exists."""
    pytest.importorskip("coflowlab.formulations.exact_fluid")
    for seed in range(3):
        inst = uniform(
            2, 3, density=0.5, sizes=(0.5, 3.0), integral=False, release_rate=1.0, seed=seed
        )
        opt = solve_method(inst, "exact-fluid").objective
        assert solve_time_indexed_lp(inst, strengthen=True).objective <= opt + 1e-6
    for seed in range(3):  # integral data: TI-LP ≤ OPT_fluid ≤ OPT_slotted
        inst = tiny(seed)
        fluid = solve_method(inst, "exact-fluid").objective
        assert solve_time_indexed_lp(inst).objective <= fluid + 1e-6
        assert fluid <= solve_exact_slotted(inst).objective + 1e-6


def test_registry_names():
    """Tests that the registry reaches both methods."""
    inst = EXAMPLES["theory_i3"]()
    assert solve_method(inst, "exact-slotted").objective == pytest.approx(4.0)
    assert solve_method(inst, "time-indexed-lp").objective <= 4.0 + 1e-9


def test_mip_starts_from_one_by_one_with_dependencies():
    """Tests the MIP start with dependencies (issue 19: list schedules ignore them): the
    coflows one by one in a topological order give a start, so a short time limit still
    returns a verified schedule that respects the chain 0 → 1 → 2 → 3, and the start's cost
    is reported."""
    inst = uniform(3, 4, seed=2).replace(dependencies=[(0, 1), (1, 2), (2, 3)])
    sol = solve_exact_slotted(inst, SolverOptions(time_limit=0.5))
    assert sol.details["start_objective"] is not None
    assert sol.schedule is not None
    report = verify(inst, sol.schedule)
    assert report.feasible, report.summary()
    assert np.all(np.diff(report.coflow_completion) > 0)
    assert sol.objective <= sol.details["start_objective"] + 1e-9
