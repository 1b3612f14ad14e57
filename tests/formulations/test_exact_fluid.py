"""Tests of the exact fluid methods: the order LP (docs/theory.md#exact) and ``exact-fluid``.

The oracles are the known optima of docs/theory.md#instances and, on small random instances,
brute-force enumeration of every completion order and every interleaving of the release
events, each solved as an order LP.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from coflowlab import Fabric, Instance, verify
from coflowlab.exceptions import ModelTooLargeError
from coflowlab.formulations import solve_method
from coflowlab.formulations.bounds import smith_rule
from coflowlab.formulations.exact_fluid import dominance_precedence, solve_exact_fluid
from coflowlab.formulations.order_lp import (
    build_order_lp,
    interleavings,
    release_values,
    solve_order_lp,
)
from coflowlab.instances import examples
from coflowlab.instances.generators import uniform
from coflowlab.solvers import SolverOptions, SolveStatus, solve

ALGORITHMS = ("bnb", "mip")


def enumerate_optimum(instance: Instance) -> float:
    """The fluid optimum by brute force: every order, every interleaving, one LP each."""
    best = math.inf
    for order in itertools.permutations(range(instance.num_coflows)):
        for slots in interleavings(instance, order):
            lp = build_order_lp(instance, order, slots)
            if lp.model is None:
                continue
            res = solve(lp.model)
            if res.status is SolveStatus.OPTIMAL:
                best = min(best, res.objective)
    return best


def assert_verified(instance: Instance, sol) -> None:
    """The schedule verifies, and its cost is the solution's objective."""
    report = verify(instance, sol.schedule)
    assert report.feasible, report.summary()
    cost = float(np.dot(instance.coflow_weight, report.coflow_completion))
    assert cost == pytest.approx(sol.objective, rel=1e-6, abs=1e-9)
    # the completion order reported is the order of the verified completion times
    done = report.coflow_completion[list(sol.order)]
    assert np.all(np.diff(done) >= -1e-6 * max(1.0, done.max()))


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize(
    ("make", "expected"),
    [
        (examples.theory_i1, 4.0),
        (examples.theory_i2, 19.0),
        (examples.theory_i3, 4.0),
        (examples.theory_i4, 4.0),
    ],
)
def test_known_optima_of_theory_section_10(make, expected, algorithm):
    """Tests that both algorithms prove the optima of I1-I4 (docs/theory.md#instances)."""
    inst = make()
    sol = solve_exact_fluid(inst, algorithm=algorithm)
    assert sol.status is SolveStatus.OPTIMAL
    assert sol.objective == pytest.approx(expected, abs=1e-7)
    assert sol.bound <= sol.objective + 1e-9
    assert sol.gap <= 1e-6
    assert_verified(inst, sol)


def test_single_port_optimum_is_smiths_rule():
    """Tests that on one port (theory I2, F2) the fluid optimum is Smith's rule value."""
    inst = examples.theory_i2()
    smith, _ = smith_rule(inst.port_time[:, 0], inst.coflow_weight)
    assert solve_exact_fluid(inst).objective == pytest.approx(smith)


def test_i4_serving_the_coupled_coflow_first_costs_more():
    """Tests the order LP on theory I4: the order B, C, A gives 4, A first gives 5."""
    inst = examples.theory_i4()
    assert solve_order_lp(inst, [1, 2, 0]).objective == pytest.approx(4.0)
    assert solve_order_lp(inst, [0, 1, 2]).objective == pytest.approx(5.0)


def test_r1_fluid_optimum_agrees_with_enumeration():
    """Tests R1 (a release date where preemption pays): B&B, MIP and enumeration agree,
    and the fluid optimum is at most the slotted one (9, docs/theory.md#instances)."""
    inst = examples.theory_r1()
    expected = enumerate_optimum(inst)
    for algorithm in ALGORITHMS:
        sol = solve_exact_fluid(inst, algorithm=algorithm)
        assert sol.status is SolveStatus.OPTIMAL
        assert sol.objective == pytest.approx(expected, rel=1e-7)
        assert_verified(inst, sol)
    assert expected <= 9.0 + 1e-9
    # coflow 1 (released at 1, weight 3) completes first, coflow 0 is preempted for it
    assert solve_exact_fluid(inst).order == (1, 0)


def random_cases() -> list[tuple[str, Instance]]:
    """Small random instances: 2-3 ports, 3-4 coflows, with and without release dates and
    weights (some zero), plus per-flow releases, dependencies and unequal capacities."""
    cases = []
    for seed in range(16):
        m = 2 + seed % 2
        n = 4 if seed % 3 == 0 else 3
        rate = (None, 0.1, 0.25, 0.5)[seed % 4]
        weights = None if seed % 5 == 0 else (0, 4)
        inst = uniform(m, n, density=0.4, release_rate=rate, weights=weights, seed=seed)
        cases.append((f"random-{seed}", inst))
    base = uniform(3, 4, density=0.4, weights=(1, 3), seed=100)
    cases.append(("dependencies", base.replace(dependencies=[(0, 2), (1, 3)])))
    rng = np.random.default_rng(1)
    late = base.flow_release + rng.integers(0, 3, base.num_flows)
    cases.append(("flow-releases", base.replace(flow_release=late)))
    fabric = Fabric(3, [1.0, 2.0, 0.5], [1.5, 1.0, 1.0])
    cases.append(("capacities", uniform(3, 4, density=0.4, seed=7).replace(fabric=fabric)))
    return cases


CASES = random_cases()


@pytest.mark.parametrize(("name", "inst"), CASES, ids=[c[0] for c in CASES])
def test_bnb_mip_and_enumeration_agree(name, inst):
    """Tests that branch and bound, MIP and brute-force enumeration find the same optimum,
    and that every returned schedule verifies."""
    expected = enumerate_optimum(inst)
    for algorithm in ALGORITHMS:
        sol = solve_exact_fluid(inst, algorithm=algorithm)
        assert sol.status is SolveStatus.OPTIMAL, (name, algorithm)
        assert sol.objective == pytest.approx(expected, rel=1e-6), (name, algorithm)
        assert sol.bound <= sol.objective * (1 + 1e-9)
        assert sol.details["root_bound"] <= expected * (1 + 1e-9)  # P1: a lower bound
        assert_verified(inst, sol)


@pytest.mark.parametrize(("m", "seed"), [(3, 19), (3, 44), (2, 65), (2, 118)])
def test_branch_and_bound_beats_its_heuristic(m, seed):
    """Tests instances where the heuristic incumbent is not optimal and the optimum puts
    release events between completions: the search itself (release events included) must
    find the enumerated optimum."""
    inst = uniform(m, 4, density=0.4, release_rate=0.15, weights=(1, 4), seed=seed)
    sol = solve_exact_fluid(inst)
    assert sol.details["heuristic_objective"] > sol.objective * (1 + 1e-6)
    assert sol.details["incumbent_source"] == "branch and bound"
    assert len(set(sol.details["slots"])) > 1  # release events between completions
    assert sol.objective == pytest.approx(enumerate_optimum(inst), rel=1e-7)
    assert_verified(inst, sol)


def test_releases_need_their_own_events():
    """Tests that the interleaving matters: on R1 the order (1, 0) is feasible only with the
    release event before both completions, and an interleaving that puts coflow 1's
    completion before its own release is rejected without solving."""
    inst = examples.theory_r1()
    assert release_values(inst).tolist() == [1.0]
    assert list(interleavings(inst, [1, 0])) == [(1, 1)]
    lp = build_order_lp(inst, [1, 0], [0, 1])
    assert lp.model is None and "no interval" in lp.reason
    assert solve_order_lp(inst, [1, 0], [0, 1]).status is SolveStatus.INFEASIBLE


def test_time_limit_returns_incumbent_and_bound():
    """Tests that a tiny time limit on a bigger instance stops with a time-limit status,
    and that any incumbent it returns verifies and lies above the proven bound."""
    inst = uniform(4, 14, density=0.5, release_rate=0.1, weights=(1, 4), seed=3)
    for algorithm in ALGORITHMS:
        options = SolverOptions(time_limit=0.05)
        sol = solve_exact_fluid(inst, options, algorithm=algorithm, max_coflows=14)
        assert sol.status in (SolveStatus.TIME_LIMIT, SolveStatus.TIME_LIMIT_NO_SOLUTION)
        if sol.status is SolveStatus.TIME_LIMIT:
            assert sol.bound <= sol.objective * (1 + 1e-9)
            assert sol.gap >= 0
            assert_verified(inst, sol)
        else:
            assert sol.schedule is None and math.isnan(sol.objective)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_single_coflow_costs_weight_times_release_plus_bottleneck(algorithm):
    """Tests F1 with a release date and non-unit capacities: one coflow costs w (r + ρ)."""
    demand = [[[2.0, 0.0, 3.0], [1.0, 4.0, 0.0], [0.0, 2.0, 2.0]]]
    inst = Instance.from_matrices(demand, release=[1.5], weight=[2.5], capacity=2.0)
    sol = solve_exact_fluid(inst, algorithm=algorithm)
    rho = float(inst.bottleneck[0])
    assert rho == pytest.approx(3.0)  # egress port 1 carries 6 at capacity 2
    assert sol.objective == pytest.approx(2.5 * (1.5 + rho))
    assert_verified(inst, sol)


@pytest.mark.parametrize("factor", [0.5, 3.0])
def test_scaling_sizes_scales_the_optimum(factor):
    """Tests P10: without releases, scaling every size by c scales the fluid optimum by c."""
    inst = uniform(3, 5, density=0.4, weights=(1, 3), seed=11)
    base = solve_exact_fluid(inst).objective
    scaled = solve_exact_fluid(inst.scale_sizes(factor))
    assert scaled.status is SolveStatus.OPTIMAL
    assert scaled.objective == pytest.approx(factor * base, rel=1e-7)


def test_removing_a_coflow_never_increases_the_optimum():
    """Tests P11 on a random instance: dropping any coflow does not raise OPT."""
    inst = uniform(3, 5, density=0.4, release_rate=0.2, weights=(1, 3), seed=5)
    full = solve_exact_fluid(inst).objective
    for k in range(inst.num_coflows):
        rest = [j for j in range(inst.num_coflows) if j != k]
        assert solve_exact_fluid(inst.subset(rest)).objective <= full * (1 + 1e-9)


def test_dominance_orders_identical_coflows_by_index():
    """Tests the dominance rule: identical coflows go by index; a smaller coflow of equal
    weight goes first; coupled coflows with equal port loads (I4) are not ordered."""
    one = [[1.0, 2.0], [0.0, 1.0]]
    small = [[1.0, 1.0], [0.0, 0.0]]
    inst = Instance.from_matrices([one, one, small])
    prec = dominance_precedence(inst)
    assert prec[0, 1] and not prec[1, 0]
    assert prec[2, 0] and prec[2, 1] and not prec[0, 2]
    assert not dominance_precedence(examples.theory_i4()).any()
    heavier = Instance.from_matrices([one, small], weight=[1.0, 0.5])
    assert not dominance_precedence(heavier).any()  # smaller but lighter: no rule


def test_dominance_respects_release_dates():
    """Tests that a smaller coflow released later is not forced first: coflow 0 (size 2,
    released at 0) completes at 2, coflow 1 (size 1, released at 5) at 6."""
    inst = Instance.from_matrices([[[2.0]], [[1.0]]], release=[0.0, 5.0])
    assert not dominance_precedence(inst).any()
    sol = solve_exact_fluid(inst)
    assert sol.objective == pytest.approx(8.0)
    assert sol.order == (0, 1)


def test_mip_refuses_too_many_coflows():
    """Tests that the MIP raises ModelTooLargeError naming the method, size and limit."""
    inst = uniform(2, 5, seed=0)
    with pytest.raises(ModelTooLargeError, match=r"exact-fluid \(mip\).*5 coflows.*limit of 4"):
        solve_exact_fluid(inst, algorithm="mip", max_coflows=4)
    with pytest.raises(ValueError, match="algorithm"):
        solve_exact_fluid(inst, algorithm="enumerate")


def test_registry_runs_exact_fluid_and_is_deterministic():
    """Tests that solve_method reaches both algorithms and that repeated runs agree."""
    inst = uniform(3, 6, density=0.4, release_rate=0.2, weights=(1, 4), seed=2)
    first = solve_method(inst, "exact-fluid")
    again = solve_method(inst, "exact-fluid")
    assert first.method == "exact-fluid" and first.kind.value == "exact"
    assert first.objective == again.objective and first.order == again.order
    assert first.details["nodes"] == again.details["nodes"]
    assert first.details["lps"] >= 1
    assert first.to_dict()["order"] == [inst.coflow_label[k] for k in first.order]
    small = examples.theory_i4()
    assert solve_method(small, "exact-fluid", algorithm="mip").objective == pytest.approx(4.0)


# ---------------------------------------------------------------- issue 12: MIP decoding
def _late_release_instances() -> list[tuple[str, Instance]]:
    """Instances on which the position MIP once returned its heuristic incumbent with status
    ``optimal`` although its own objective was lower: the MIP may time a release event
    after the completion it follows (``t_p ≥ R``), and decoding its positions as the order
    LP's interleaving made that LP infeasible."""
    from coflowlab import Coflow

    integral = Instance.from_coflows(
        [
            Coflow([(1, 1, 3.0), (1, 1, 1.0)], weight=2.0),
            Coflow([(0, 0, 2.0), (1, 1, 1.0)], release=2.0, weight=3.0),
            Coflow([(1, 0, 3.0)], weight=2.0),
            Coflow([(0, 0, 3.0), (1, 1, 3.0)], release=1.0, weight=3.0),
        ],
        2,
    )
    real = Instance.from_coflows(
        [
            Coflow([(0, 1, 1.0), (1, 0, 1.0), (1, 1, 2.0)], weight=2.0),
            Coflow([(1, 1, 2.0)], release=0.9198211485509256, weight=3.0),
            Coflow([(0, 1, 3.0), (1, 0, 5.0)], release=1.6528755029947546, weight=2.0),
            Coflow([(0, 0, 4.0)], release=2.2253668066112002, weight=4.0),
        ],
        Fabric(2, [1.0, 2.0], [1.0, 2.0]),
    )
    return [("integral", integral), ("real-capacities", real)]


@pytest.mark.parametrize(
    ("name", "inst"), _late_release_instances(), ids=[c[0] for c in _late_release_instances()]
)
def test_mip_returns_its_own_optimum_not_the_heuristic(name, inst):
    """Regression (issue 12): with release dates, ``algorithm="mip"`` must return a schedule
    whose verified cost is the optimum it proves (the enumerated one: 67 on the integral
    instance, where it used to return the heuristic's 68)."""
    expected = enumerate_optimum(inst)
    sol = solve_exact_fluid(inst, algorithm="mip")
    assert sol.status is SolveStatus.OPTIMAL
    assert sol.objective == pytest.approx(expected, rel=1e-6), sol.details
    assert sol.objective == pytest.approx(sol.bound, rel=1e-6)
    assert sol.details["mip_objective"] == pytest.approx(expected, rel=1e-6)
    assert_verified(inst, sol)
    bnb = solve_exact_fluid(inst)
    assert bnb.objective == pytest.approx(expected, rel=1e-6)
