"""Differential suite (issue 12): every exact method against brute force on small random
instances with release dates, weights (0 included), non-unit port capacities, per-flow
releases, dependencies and deadlines (which every ``Σ w C`` method ignores).

The reference, :mod:`brute_force` (``proofs-checks/brute_force.py``), shares no code with the
formulations: an exhaustive search over slotted schedules, and one ``scipy`` LP per event
sequence for the fluid model. Each method must return status ``optimal``, an objective and a
bound equal to the brute-force optimum, and a schedule whose verified ``Σ w C`` is that
optimum (:func:`check_method`).

``make test`` runs :data:`DEFAULT_FLUID` fluid and :data:`DEFAULT_SLOTTED` slotted instances;
``make test-slow`` runs :data:`SLOW_FLUID` and :data:`SLOW_SLOTTED` more (different seeds).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

import algorithms
import numpy as np
import pytest
from brute_force import fluid_opt, slotted_opt

import coflowlab as cl
from coflowlab.constants import OPTIMALITY_TOL
from coflowlab.formulations import solve_method
from coflowlab.formulations.exact_fluid import ALGORITHMS
from coflowlab.formulations.time_indexed import SLOTTED_ALGORITHMS
from coflowlab.solution import OBJECTIVE_RTOL, Solution
from coflowlab.solvers import SolveStatus
from coflowlab.time_models import TimeModel

DEFAULT_FLUID = 120
DEFAULT_SLOTTED = 200
SLOW_FLUID = 1500
SLOW_SLOTTED = 3000

# (registry name, keyword arguments): every algorithm of every exact Σ w C method
FLUID_VARIANTS = [("exact-fluid", {"algorithm": a}) for a in ALGORITHMS]
SLOTTED_VARIANTS: list[tuple[str, dict[str, str]]] = [
    ("exact-slotted", {"algorithm": a}) for a in SLOTTED_ALGORITHMS
]

TOL = OPTIMALITY_TOL + OBJECTIVE_RTOL  # relative, times max(1, OPT): constants.OPTIMALITY_TOL


def small_instance(seed: int, *, integral: bool) -> cl.Instance:
    """A random instance small enough for brute force: 1-3 ports, 1-4 coflows of 1-3 flows,
    at most 8 units in all; releases from at most three values (0 included), weights in
    ``{0, ..., 4}``; capacities in ``{1, 2}``; sometimes a deadline, a flow released after
    its coflow, or a dependency. ``integral``: whole sizes, releases and capacities (the
    slotted model); otherwise quarter sizes, real releases and weights, capacities in
    ``{0.5, 1, 2}``."""
    rng = np.random.default_rng([12, int(integral), seed])
    m = int(rng.integers(1, 4))
    n = int(rng.integers(1, 5))
    if integral:
        levels = [0.0, *rng.choice([1.0, 2.0, 3.0], size=2, replace=False).tolist()]
    else:
        levels = [0.0, *np.round(rng.uniform(0.1, 3.0, size=2), 3).tolist()]
    if n == 4:
        levels = levels[:2]  # fewer event sequences: the fluid reference stays fast
    budget = 8
    coflows = []
    for j in range(n):
        flows = []
        for _ in range(int(rng.integers(1, 4))):
            if budget <= 0:
                break
            size = float(rng.integers(1, min(3, budget) + 1))
            budget -= size
            if not integral:
                size *= float(rng.choice([0.25, 0.5, 1.0]))
            flows.append((int(rng.integers(m)), int(rng.integers(m)), size))
        if not flows:
            break
        weight = float(rng.integers(0, 5))
        if not integral and weight:
            weight = round(weight * float(rng.uniform(0.5, 1.5)), 3)
        release = float(rng.choice(levels)) if j else 0.0
        deadline = float(rng.choice([1.0, 2.0])) if rng.random() < 0.2 else None
        coflows.append(cl.Coflow(flows, release=release, weight=weight, deadline=deadline))
    caps = [1.0, 2.0] if integral else [0.5, 1.0, 2.0]
    fabric = cl.Fabric(m, rng.choice(caps, size=m), rng.choice(caps, size=m))
    inst = cl.Instance.from_coflows(coflows, fabric)
    if rng.random() < 0.15 and inst.num_flows > 1:  # one flow released after its coflow
        e = int(rng.integers(inst.num_flows))
        later = float(rng.choice(levels))
        if later > inst.coflow_release[inst.flow_coflow[e]]:
            inst = inst.replace(flow_release=np.where(np.arange(inst.num_flows) == e, later,
                                                      inst.flow_release))  # fmt: skip
    if rng.random() < 0.15 and inst.num_coflows > 1:  # one dependency a → b, a < b
        a, b = sorted(rng.choice(inst.num_coflows, size=2, replace=False).tolist())
        inst = inst.replace(dependencies=[(a, b)])
    return inst


def describe(inst: cl.Instance) -> str:
    """The instance as Python source, to paste into a regression test."""
    rows = []
    for j in range(inst.num_coflows):
        flows = [(int(inst.flow_src[e]), int(inst.flow_dst[e]), float(inst.flow_size[e]))
                 for e in inst.coflow_flows(j)]  # fmt: skip
        rows.append(
            f"Coflow({flows}, release={float(inst.coflow_release[j])!r}, "
            f"weight={float(inst.coflow_weight[j])!r})"
        )
    f = inst.fabric
    return (
        f"Instance.from_coflows([{', '.join(rows)}], Fabric({inst.num_ports}, "
        f"{np.asarray(f.ingress_capacity).tolist()}, {np.asarray(f.egress_capacity).tolist()})); "
        "flow_release="
        f"{inst.flow_release.tolist()}, dependencies={inst.dependencies.tolist()}"
    )


def check_method(
    inst: cl.Instance, name: str, kwargs: dict, truth: float, run: Callable | None = None
) -> Solution:
    """``name`` (with ``kwargs``; or ``run(inst)`` when given) proves the brute-force optimum
    ``truth``: status optimal, objective and bound equal to it, and the returned schedule
    verifies with ``Σ w C = truth``."""
    label = f"{name} {kwargs or ''}".strip()
    sol = run(inst) if run is not None else solve_method(inst, name, **kwargs)
    where = f"{label} on {describe(inst)}"
    tol = TOL * max(1.0, abs(truth))
    assert sol.status is SolveStatus.OPTIMAL, f"{where}: status {sol.status.value}"
    assert abs(sol.objective - truth) <= tol, f"{where}: objective {sol.objective!r} ≠ {truth!r}"
    assert abs(sol.bound - truth) <= tol, f"{where}: bound {sol.bound!r} ≠ {truth!r}"
    report = cl.verify(inst, sol.schedule)
    assert report.feasible, f"{where}: {report.summary()}"
    verified = float(np.dot(inst.coflow_weight, report.coflow_completion))
    assert abs(verified - truth) <= tol, f"{where}: the schedule costs {verified!r} ≠ {truth!r}"
    return sol


def check_fluid(seed: int) -> float:
    """Every fluid exact algorithm equals the fluid brute force on instance ``seed``."""
    inst = small_instance(seed, integral=False)
    truth = fluid_opt(inst)
    for name, kwargs in FLUID_VARIANTS:
        check_method(inst, name, kwargs, truth)
    return truth


def check_slotted(seed: int) -> tuple[float, float]:
    """On integral instance ``seed``: every slotted exact method equals the slotted brute
    force, every fluid one the fluid brute force, and fluid OPT ≤ slotted OPT."""
    inst = small_instance(seed, integral=True)
    slotted = slotted_opt(inst)
    for name, kwargs in SLOTTED_VARIANTS:
        check_method(inst, name, kwargs, slotted)
    fluid = check_fluid_on(inst)
    assert fluid <= slotted + TOL * max(1.0, slotted), describe(inst)
    return fluid, slotted


def check_fluid_on(inst: cl.Instance) -> float:
    truth = fluid_opt(inst)
    for name, kwargs in FLUID_VARIANTS:
        check_method(inst, name, kwargs, truth)
    return truth


def test_every_exact_method_is_covered():
    """Tests that each registered exact Σ w C method (as the property suites read the
    registry: ``proofs-checks/algorithms.py``) is in this suite, in its time model (a new
    exact method fails here until it is added to a variant list)."""
    exact = {a.name: a.model for a in algorithms.exact_methods()}
    assert {"exact-fluid", "exact-slotted"} <= set(exact)
    for variants, model in (
        (FLUID_VARIANTS, TimeModel.FLUID),
        (SLOTTED_VARIANTS, TimeModel.SLOTTED),
    ):
        for name, _ in variants:
            assert exact[name] is model, name
    covered = {name for name, _ in FLUID_VARIANTS + SLOTTED_VARIANTS}
    assert set(exact) <= covered, f"not differential-tested: {sorted(set(exact) - covered)}"


@pytest.mark.parametrize("seed", range(DEFAULT_FLUID))
def test_fluid_methods_equal_brute_force(seed):
    """Tests exact-fluid (every algorithm) against the fluid brute force (quarter sizes,
    real releases and weights, capacities 0.5-2)."""
    check_fluid(seed)


@pytest.mark.parametrize("seed", range(DEFAULT_SLOTTED))
def test_slotted_and_fluid_methods_equal_brute_force(seed):
    """Tests exact-slotted against the slotted brute force and exact-fluid against the fluid
    one on integral instances (capacities 1-2), and fluid OPT ≤ slotted OPT."""
    check_slotted(seed)


@pytest.mark.slow
@pytest.mark.parametrize("chunk", range(SLOW_FLUID // 100))
def test_fluid_methods_equal_brute_force_many(chunk):
    """Tests 100 more fluid instances per chunk (seeds after the default run's)."""
    for seed in range(DEFAULT_FLUID + 100 * chunk, DEFAULT_FLUID + 100 * (chunk + 1)):
        check_fluid(seed)


@pytest.mark.slow
@pytest.mark.parametrize("chunk", range(SLOW_SLOTTED // 100))
def test_slotted_methods_equal_brute_force_many(chunk):
    """Tests 100 more integral instances per chunk (seeds after the default run's)."""
    for seed in range(DEFAULT_SLOTTED + 100 * chunk, DEFAULT_SLOTTED + 100 * (chunk + 1)):
        check_slotted(seed)


# ---------------------------------------------------------------- the reference itself
def test_brute_force_agrees_with_hand_computed_optima():
    """Tests the references on instances solved by hand: one port in Smith's order (p = 3,
    1, 2; w = 3, 1, 1: C = 3, 4, 6, Σ w C = 19 in both models); a coflow released at 1.5
    on a capacity-2 port (fluid: 1.5 + 4/2 = 3.5; slotted: first slot 3, 2 slots, C = 4);
    and a dependency a → b on disjoint ports (b waits: C = 2, 3)."""
    smith = cl.Instance.from_coflows(
        [cl.Coflow([(0, 0, 3.0)], weight=3.0), cl.Coflow([(0, 0, 1.0)]), cl.Coflow([(0, 0, 2.0)])],
        1,
    )
    assert fluid_opt(smith) == pytest.approx(19.0)
    assert slotted_opt(smith) == 19.0
    late = cl.Instance.from_coflows([cl.Coflow([(0, 0, 4.0)], release=1.5)], cl.Fabric(1, 2, 2))
    assert fluid_opt(late) == pytest.approx(3.5)
    assert slotted_opt(late) == 4.0
    dep = cl.Instance(2, [0, 1], [0, 1], [0, 1], [2, 1], dependencies=[(0, 1)])
    assert fluid_opt(dep) == pytest.approx(5.0)
    assert slotted_opt(dep) == 5.0


def test_brute_force_sees_a_wrong_optimum():
    """Bug injection: a method that reports its optimum plus 1% (or a schedule one slot late)
    fails :func:`check_method`; so does one whose bound is above the optimum."""
    inst = small_instance(3, integral=True)
    truth = slotted_opt(inst)
    check_method(inst, "exact-slotted", {}, truth)  # the unbroken method passes

    def above(instance: cl.Instance) -> Solution:
        sol = solve_method(instance, "exact-slotted")
        return dataclasses.replace(sol, objective=sol.objective * 1.01 + 1.0)

    def high_bound(instance: cl.Instance) -> Solution:
        sol = solve_method(instance, "exact-slotted")
        return dataclasses.replace(sol, bound=sol.bound + 1.0)

    def late(instance: cl.Instance) -> Solution:
        sol = solve_method(instance, "exact-slotted")
        s = sol.schedule
        later = cl.SlottedSchedule(s.num_flows, s.slot + 1, s.flow, s.amount)
        return dataclasses.replace(sol, schedule=later)

    for broken in (above, high_bound, late):
        with pytest.raises(AssertionError):
            check_method(inst, broken.__name__, {}, truth, run=broken)


def test_exact_slotted_and_fluid_ignore_deadlines():
    """Tests issue 12's instance from ``make proofs``: a coflow that cannot meet its deadline
    (released at 3, deadline 1 after release, needs 3 slots) is still scheduled, and both
    exact methods prove the optimum with the deadline as without it (the deadline methods
    are the only ones that read deadlines). Fluid and slotted agree here: the greedy
    slotted schedule C = (6, 2, 9) costs 3·6 + 2 = 20, and no fluid schedule is cheaper
    (port ingress 1 carries 5 units from time 1)."""
    coflows = [
        cl.Coflow([(0, 2, 1.0), (1, 0, 4.0)], release=1.0, weight=3.0),
        cl.Coflow([(1, 2, 1.0)], release=1.0),
        cl.Coflow([(0, 0, 1.0)] * 3, release=3.0, weight=0.0, deadline=1.0),
    ]
    inst = cl.Instance.from_coflows(coflows, 3)
    free = inst.replace(coflow_deadline=np.full(3, math.inf))
    for name, kwargs in FLUID_VARIANTS + SLOTTED_VARIANTS:
        for case in (inst, free):
            sol = check_method(case, name, kwargs, 20.0)
            assert sol.objective == pytest.approx(20.0)
    assert fluid_opt(inst) == pytest.approx(20.0) and slotted_opt(inst) == 20.0
