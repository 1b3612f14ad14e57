"""Tests of the slotted branch and bound (``exact-slotted``, ``algorithm="bnb"``,
:mod:`coflowlab.formulations.exact_slotted_bnb`).

Oracles: optima worked out by hand below and in docs/theory.md#instances, and the
brute-force search over every slotted schedule (``proofs-checks/brute_force.py``); the
differential suite (``test_differential.py``) runs it on a few hundred more instances.
"""

from __future__ import annotations

import numpy as np
import pytest
from brute_force import slotted_opt

import coflowlab as cl
from coflowlab.exceptions import InvalidInstanceError, ModelTooLargeError, SolverError
from coflowlab.formulations.exact_slotted_bnb import (
    rounded_up_releases,
    slotted_schedule_from_sequence,
    solve_exact_slotted_bnb,
)
from coflowlab.formulations.order_lp import build_order_lp
from coflowlab.formulations.parallel_search import fork_available
from coflowlab.formulations.time_indexed import solve_exact_slotted
from coflowlab.instances.examples import EXAMPLES, EXPECTED
from coflowlab.instances.generators import uniform
from coflowlab.solvers import SolverOptions, SolveStatus


def assert_optimal(inst: cl.Instance, sol, value: float) -> None:
    assert sol.status is SolveStatus.OPTIMAL
    assert sol.objective == pytest.approx(value, abs=1e-9)
    assert sol.bound == pytest.approx(value, abs=1e-9)
    report = cl.verify(inst, sol.schedule)
    assert report.feasible, report.summary()
    assert float(np.dot(inst.coflow_weight, report.coflow_completion)) == pytest.approx(value)


@pytest.mark.parametrize("name", ["theory_i1", "theory_i2", "theory_i3", "theory_i4", "theory_r1"])
def test_known_optima(name):
    """Tests instances I1-I4 and R1 of docs/theory.md#instances against their slotted OPT."""
    inst = EXAMPLES[name]()
    assert_optimal(inst, solve_exact_slotted_bnb(inst), EXPECTED[name]["opt_sum_wc"]["slotted"])


def test_smiths_rule_on_one_port():
    """Tests one port, p = (3, 1, 2), w = (3, 1, 1): Smith's order p/w = (1, 1, 2) serves
    coflow 0 then 1 then 2 (ties by index), C = (3, 4, 6), Σ w C = 9 + 4 + 6 = 19."""
    inst = cl.Instance.from_coflows(
        [cl.Coflow([(0, 0, 3.0)], weight=3.0), cl.Coflow([(0, 0, 1.0)]), cl.Coflow([(0, 0, 2.0)])],
        1,
    )
    sol = solve_exact_slotted_bnb(inst)
    assert_optimal(inst, sol, 19.0)
    assert sol.completion_times.tolist() == [3.0, 4.0, 6.0]


def test_fractional_release_waits_for_the_next_slot():
    """Tests a coflow of 4 units released at 1.5 on a capacity-2 port: its first slot is
    ceil(1.5) + 1 = 3, it needs 2 slots, so C = 4 (the fluid optimum would be 3.5)."""
    inst = cl.Instance.from_coflows([cl.Coflow([(0, 0, 4.0)], release=1.5)], cl.Fabric(1, 2, 2))
    assert rounded_up_releases(inst).flow_release.tolist() == [2.0]
    assert_optimal(inst, solve_exact_slotted_bnb(inst), 4.0)


def test_a_late_release_can_preempt():
    """Tests R1's pattern by hand: a flow of 2 units on port pair (0, 0) from 0, and a coflow
    of weight 3 released at 1 with one unit on (0, 0) and one on (1, 1). Serving the heavy
    coflow in slot 2 preempts the first: C = (3, 2), Σ w C = 3 + 6 = 9 (the other order
    costs 2 + 3·3 = 11)."""
    inst = cl.Instance.from_coflows(
        [
            cl.Coflow([(0, 0, 2.0)]),
            cl.Coflow([(0, 0, 1.0), (1, 1, 1.0)], release=1.0, weight=3.0),
        ],
        2,
    )
    sol = solve_exact_slotted_bnb(inst)
    assert_optimal(inst, sol, 9.0)
    assert sol.completion_times.tolist() == [3.0, 2.0]


def test_dependency_is_respected():
    """Tests a → b on disjoint ports (sizes 2 and 1): b waits for a, C = (2, 3), Σ w C = 5,
    which the brute force confirms."""
    inst = cl.Instance(2, [0, 1], [0, 1], [0, 1], [2, 1], dependencies=[(0, 1)])
    assert slotted_opt(inst) == 5.0
    assert_optimal(inst, solve_exact_slotted_bnb(inst), 5.0)


@pytest.mark.parametrize("seed", range(12))
def test_equals_the_time_indexed_mip_and_brute_force(seed):
    """Tests 2-port, 3-coflow instances with releases in {0, 1, 2}: the B&B, the
    time-indexed MIP and the brute force agree."""
    inst = uniform(2, 3, density=0.4, sizes=(1, 3), weights=(1, 3), seed=seed)
    rel = np.random.default_rng(seed).integers(0, 3, size=3).astype(float)
    inst = inst.replace(coflow_release=rel, flow_release=rel[inst.flow_coflow])
    truth = slotted_opt(inst)
    assert_optimal(inst, solve_exact_slotted_bnb(inst), truth)
    assert solve_exact_slotted(inst).objective == pytest.approx(truth)


def test_issue_instance_is_proven_quickly():
    """Tests the issue's example, ``coflowlab generate uniform --ports 4 --coflows 8 --seed 1``,
    on which the time-indexed MIP found no schedule in 20 s: the B&B proves 479 (the same as
    the fluid optimum, which is a lower bound on it: so nothing cheaper exists) well
    within 60 s."""
    inst = uniform(4, 8, seed=1)
    sol = cl.run("exact-slotted", inst, SolverOptions(time_limit=60), algorithm="bnb")
    assert sol.proven_optimal and sol.objective == 479.0
    fluid = cl.run("exact-fluid", inst, SolverOptions(time_limit=60))
    assert fluid.proven_optimal and fluid.objective == pytest.approx(479.0)


def test_time_limit_returns_a_verified_incumbent_and_a_bound():
    """Tests a limit too short to search: status time_limit, a verified schedule (the list
    schedule at least), a finite bound below it, and a labelled gap."""
    inst = uniform(8, 24, seed=3)
    sol = solve_exact_slotted_bnb(inst, SolverOptions(time_limit=0.05))
    assert sol.status is SolveStatus.TIME_LIMIT
    assert cl.verify(inst, sol.schedule).feasible
    assert 0 < sol.bound <= sol.objective
    assert sol.gap == pytest.approx((sol.objective - sol.bound) / sol.objective)


def test_time_limit_with_dependencies_still_returns_a_schedule():
    """Tests a chain of dependencies 0 → 1 → ... on a limit too short to search: the
    one-by-one schedule (list schedules ignore dependencies) is returned, verified, with each
    successor starting after its predecessor completes."""
    inst = uniform(4, 16, seed=5)
    inst = inst.replace(dependencies=[(j, j + 1) for j in range(15)])
    sol = solve_exact_slotted_bnb(inst, SolverOptions(time_limit=0.01))
    assert sol.status is SolveStatus.TIME_LIMIT
    report = cl.verify(inst, sol.schedule)
    assert report.feasible, report.summary()
    assert np.all(np.diff(report.coflow_completion) > 0)
    assert 0 < sol.bound <= sol.objective


def test_decoder_serves_each_interval_in_its_slots():
    """Tests the decoder by hand: one port, flows of 2 and 1 units completing in the order
    (1, 0) at times (1, 3): flow 1 in slot 1, flow 0 in slots 2 and 3 (variables: the
    times, flow 1's amount in interval 0, flow 0's in intervals 0 and 1)."""
    inst = cl.Instance.from_matrices([[[2]], [[1]]])
    lp = build_order_lp(inst, [1, 0])
    s = slotted_schedule_from_sequence(inst, lp, [1, 3, 1, 0, 2])
    assert sorted(zip(s.slot.tolist(), s.flow.tolist(), s.amount.tolist(), strict=True)) == [
        (1, 1, 1),
        (2, 0, 1),
        (3, 0, 1),
    ]
    # an interval given more work than it has slots is no point of the order MIP
    with pytest.raises(SolverError, match="interval"):
        slotted_schedule_from_sequence(inst, lp, [1, 3, 1, 1, 1])


def test_registry_parameter_and_default_unchanged():
    """Tests ``--param algorithm=bnb`` through the registry, that the default is still the
    time-indexed MIP (its details carry the horizon), and a named error for a wrong value."""
    inst = EXAMPLES["theory_r1"]()
    assert "horizon" in cl.run("exact-slotted", inst).raw.details
    assert cl.run("exact-slotted", inst, algorithm="bnb").raw.details["algorithm"] == "bnb"
    with pytest.raises(ValueError, match="algorithm"):
        cl.run("exact-slotted", inst, algorithm="cp")


def test_refuses_fractional_sizes_and_too_many_coflows():
    """Tests the named errors: a fractional size (the flow is named) and ``max_coflows``."""
    with pytest.raises(InvalidInstanceError, match="flow 0"):
        solve_exact_slotted_bnb(cl.Instance.from_matrices([[[1.5]]]))
    with pytest.raises(ModelTooLargeError, match="max_coflows"):
        solve_exact_slotted_bnb(uniform(2, 5, seed=0), max_coflows=4)


# ------------------------------------------------------------------ parallel search
_PARALLEL = [
    (3, 9, None, 3), (4, 11, None, 4),  # the heuristic's order is optimal
    (3, 10, 0.15, 7), (4, 10, 0.15, 3), (3, 11, 0.15, 2), (3, 11, 0.15, 5),  # the B&B improves
]  # fmt: skip

needs_fork = pytest.mark.skipif(not fork_available(), reason="needs the fork start method")


@needs_fork
@pytest.mark.parametrize(("m", "n", "rate", "seed"), _PARALLEL)
def test_two_workers_prove_the_same_optimum(m, n, rate, seed):
    """Tests workers=2: the optimum of the search on one process, with a verified slotted
    schedule (on four of the instances found by an order MIP in a worker, so it comes back
    from that process), the work of both processes counted. The parent solves order MIPs
    before it forks: without the reset of HiGHS's scheduler in the workers their MIPs hung
    (parallel_search._reset_highs_scheduler)."""
    inst = uniform(m, n, density=0.5, release_rate=rate, weights=(1, 4), seed=seed)
    one = solve_exact_slotted(inst, algorithm="bnb")
    two = solve_exact_slotted(inst, algorithm="bnb", workers=2)
    assert_optimal(inst, two, one.objective)
    d = two.details
    assert d["workers"] == 2 and d["finished"] and sum(d["worker_nodes"]) == d["nodes"] > 0
    assert d["milps"] >= 1 and d["incumbent_source"] == one.details["incumbent_source"]


@needs_fork
def test_two_workers_agree_with_brute_force_and_stop_at_a_time_limit():
    """Tests workers=2 against the brute force on a small instance with releases, and that a
    time limit too short to finish gives a labelled result whose bound is at most the
    optimum and whose schedule verifies."""
    small = uniform(2, 3, density=0.4, sizes=(1, 3), weights=(1, 3), seed=4)
    rel = np.array([0.0, 2.0, 1.0])
    small = small.replace(coflow_release=rel, flow_release=rel[small.flow_coflow])
    assert_optimal(small, solve_exact_slotted_bnb(small, workers=2), slotted_opt(small))
    inst = uniform(4, 12, density=0.5, release_rate=0.15, weights=(1, 4), seed=2)
    opt = solve_exact_slotted(inst, algorithm="bnb").objective
    cut = solve_exact_slotted_bnb(inst, SolverOptions(time_limit=0.3), workers=2)
    assert cut.status in (SolveStatus.TIME_LIMIT, SolveStatus.OPTIMAL)
    assert cut.bound <= opt + 1e-9 <= cut.objective + 2e-9
    assert cl.verify(inst, cut.schedule).feasible


@pytest.mark.parametrize("workers", [0, -1, 1.5, True, "2"])
def test_bad_workers_are_refused(workers):
    """Tests that workers must be a whole number of at least 1, and above 1 only with the
    branch and bound."""
    inst = EXAMPLES["theory_r1"]()
    with pytest.raises(ValueError, match="workers must be a whole number"):
        solve_exact_slotted(inst, algorithm="bnb", workers=workers)
    with pytest.raises(ValueError, match="workers must be a whole number"):
        solve_exact_slotted(inst, workers=workers)
    with pytest.raises(ValueError, match=r"branch and bound only \(algorithm='bnb'\)"):
        solve_exact_slotted(inst, workers=2)
