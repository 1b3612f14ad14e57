"""Tests of the deadline methods (thesis B.5): most weighted coflows meeting their deadlines.

Oracles: hand-made instances whose answers are derived in the docstrings, and, for the
slotted model, a brute-force search over every slotted schedule of tiny instances.
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np
import pytest

from coflowlab import Instance
from coflowlab.exceptions import InvalidInstanceError, ModelTooLargeError
from coflowlab.formulations import solve_method
from coflowlab.formulations.deadlines import solve_deadline_fluid, solve_deadline_slotted
from coflowlab.instances.generators import assign_deadlines, uniform
from coflowlab.solution import SolutionKind
from coflowlab.solvers import SolveStatus

METHODS = [solve_deadline_fluid, solve_deadline_slotted]


def check(sol, inst):
    """Every byte is sent, the schedule verifies, and the count is consistent."""
    assert sol.kind is SolutionKind.EXACT and sol.maximize
    assert sol.report is not None and sol.report.feasible
    assert np.isfinite(sol.completion_times).all()  # every coflow completes
    met = [inst.coflow_label.index(lab) for lab in sol.details["met"]]
    assert sol.objective == pytest.approx(inst.coflow_weight[met].sum())
    late = sol.completion_times - inst.coflow_release - inst.coflow_deadline
    assert (late[met] <= 1e-9 * max(1.0, sol.completion_times.max())).all()
    assert sol.bound >= sol.objective - 1e-9


def brute_force_deadlines(inst: Instance) -> float:
    """Largest weight of coflows meeting their deadlines over every slotted schedule (unit
    capacities, integral data): dynamic programming over slots and remaining units."""
    size = tuple(int(d) for d in inst.flow_size)
    first = [math.ceil(r) + 1 for r in inst.flow_release]
    src, dst, cof = inst.flow_src.tolist(), inst.flow_dst.tolist(), inst.flow_coflow.tolist()
    due = [
        math.floor(r + d) if math.isfinite(d) else -1
        for r, d in zip(inst.coflow_release, inst.coflow_deadline, strict=True)
    ]
    w = inst.coflow_weight.tolist()
    horizon = max(d for d in due)  # nothing sent later can count
    flows_of = [[e for e in range(len(size)) if cof[e] == j] for j in range(inst.num_coflows)]

    @cache
    def best(t: int, rem: tuple[int, ...]) -> float:
        if t >= horizon:
            return 0.0
        avail = [e for e in range(len(rem)) if rem[e] and t + 1 >= first[e]]
        subsets: list[tuple[int, ...]] = [()]
        for e in avail:
            subsets += [
                (*s, e) for s in subsets if all(src[f] != src[e] and dst[f] != dst[e] for f in s)
            ]
        value = 0.0
        for s in subsets:
            new = list(rem)
            for e in s:
                new[e] -= 1
            gain = sum(
                w[j]
                for j, fl in enumerate(flows_of)
                if t + 1 <= due[j] and any(rem[e] for e in fl) and not any(new[e] for e in fl)
            )
            value = max(value, gain + best(t + 1, tuple(new)))
        return value

    return best(0, size)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize(("weight", "winner"), [((1, 2), "1"), ((2, 1), "0"), ((1, 1), "0")])
def test_one_port_only_one_can_make_it(method, weight, winner):
    """Tests two coflows on one port, sizes 2 and 3, both due by 3: 2 + 3 > 3, so only one
    meets its deadline; the heavier wins (a tie is either; the count is 1 weight unit)."""
    inst = Instance.from_matrices([[[2]], [[3]]], deadline=[3, 3], weight=weight)
    sol = method(inst)
    check(sol, inst)
    assert sol.status is SolveStatus.OPTIMAL
    assert sol.objective == pytest.approx(max(weight))
    assert sol.bound == pytest.approx(max(weight))
    if weight[0] != weight[1]:
        assert sol.details["met"] == [winner]


@pytest.mark.parametrize("method", METHODS)
def test_both_fit_when_deadlines_are_staggered(method):
    """Tests sizes 2 and 3 on one port due by 2 and 5: serving the first first meets both."""
    inst = Instance.from_matrices([[[2]], [[3]]], deadline=[2, 5], weight=[1, 4])
    sol = method(inst)
    check(sol, inst)
    assert sol.objective == pytest.approx(5.0)


@pytest.mark.parametrize("method", METHODS)
def test_coupled_ports_allow_two_of_three(method):
    """Tests theory I4's coflows with deadlines A: 1.5, B: 1, C: 1. B and C can meet theirs
    (both at 1). A needs ingress 0 and 1 for one unit each by 1.5; B needs ingress 0 and C
    ingress 1 for one unit each by 1, so A with B (or C) would put 2 units through one port by
    1.5: at most two coflows meet their deadlines."""
    inst = Instance.from_matrices(
        [[[1, 0], [0, 1]], [[0, 1], [0, 0]], [[0, 0], [1, 0]]],
        deadline=[1.5, 1, 1],
        labels="ABC",
    )
    sol = method(inst)
    check(sol, inst)
    assert sol.objective == pytest.approx(2.0)
    assert sol.details["met"] == ["B", "C"]


@pytest.mark.parametrize("method", METHODS)
def test_deadlines_are_relative_to_the_release(method):
    """Tests a coflow released at 2 with deadline 1 and size 1: it meets it at 3."""
    inst = Instance.from_matrices([[[1]]], release=[2.0], deadline=[1.0])
    sol = method(inst)
    check(sol, inst)
    assert sol.objective == pytest.approx(1.0)
    assert sol.completion_times[0] == pytest.approx(3.0)


def test_fluid_meets_a_deadline_the_slotted_model_cannot():
    """Tests release 0.5, size 1, deadline 1: fluid sends in [0.5, 1.5); slotted first sends
    in slot [1, 2) and completes at 2 > 1.5."""
    inst = Instance.from_matrices([[[1]]], release=[0.5], deadline=[1.0])
    fluid, slotted = solve_deadline_fluid(inst), solve_deadline_slotted(inst)
    check(fluid, inst)
    check(slotted, inst)
    assert (fluid.objective, slotted.objective) == (1.0, 0.0)


@pytest.mark.parametrize("method", METHODS)
def test_impossible_deadlines_give_zero(method):
    """Tests deadlines shorter than ρ (3 and 3 against 1.5 and 2): nothing can meet them;
    optimal 0, proven without a solver, every byte sent."""
    inst = Instance.from_matrices([[[2, 1], [0, 1]], [[0, 3], [0, 0]]], deadline=[1.5, 2])
    sol = method(inst)
    check(sol, inst)
    assert sol.status is SolveStatus.OPTIMAL
    assert (sol.objective, sol.bound) == (0.0, 0.0)
    assert sol.details["candidates"] == 0


@pytest.mark.parametrize("method", METHODS)
def test_one_impossible_one_possible(method):
    """Tests that an impossible deadline does not stop the other coflow from counting."""
    inst = Instance.from_matrices([[[3]], [[1]]], deadline=[2, 4], weight=[5, 1])
    sol = method(inst)
    check(sol, inst)
    assert sol.objective == pytest.approx(1.0)
    assert sol.details["met"] == ["1"]


@pytest.mark.parametrize("method", METHODS)
def test_coflows_without_deadline_are_sent_but_not_counted(method):
    """Tests a coflow with no deadline on the same port: it is scheduled, never counted."""
    inst = Instance.from_matrices([[[4]], [[2]]], deadline=[None, 2], weight=[10, 1])
    sol = method(inst)
    check(sol, inst)
    assert sol.objective == pytest.approx(1.0)
    assert sol.completion_times[0] == pytest.approx(6.0)  # sent after the deadline part


@pytest.mark.parametrize("method", METHODS)
def test_no_deadline_is_an_error(method):
    """Tests that an instance without deadlines is rejected with a clear message."""
    with pytest.raises(InvalidInstanceError, match="no coflow has a deadline"):
        method(Instance.from_matrices([[[1]], [[2]]]))


@pytest.mark.parametrize("method", METHODS)
def test_dependencies_are_rejected(method):
    """Tests that dependencies are refused, naming the pair."""
    inst = Instance(
        2, [0, 1], [0, 1], [0, 1], [1, 1], coflow_deadline=[2, 2], dependencies=[(0, 1)]
    )
    with pytest.raises(InvalidInstanceError, match="coflow 1 depends on coflow 0"):
        method(inst)


@pytest.mark.parametrize("method", METHODS)
def test_size_guard(method):
    """Tests ModelTooLargeError with the size the model would need."""
    inst = Instance.from_matrices([[[2]], [[3]]], deadline=[3, 3])
    pattern = r"needs \d+ flow-(slot|interval) variables, above the limit 1 "
    with pytest.raises(ModelTooLargeError, match=pattern):
        method(inst, max_size=1)


def test_slotted_needs_whole_units():
    """Tests that the slotted method rejects fractional sizes, naming the flow."""
    inst = Instance.from_matrices([[[1.5]]], deadline=[3])
    with pytest.raises(InvalidInstanceError, match=r"coflow 0, flow 0: size 1\.5"):
        solve_deadline_slotted(inst)


def tiny(seed: int) -> Instance:
    """2 ports, 3 coflows, sizes 1-2, weights 1-3, integral releases and deadlines."""
    rng = np.random.default_rng(seed)
    inst = uniform(2, 3, density=0.3, sizes=(1, 2), weights=(1, 3), seed=seed)
    rel = rng.integers(0, 2, size=3).astype(float)
    deadline = np.maximum(1.0, np.round(inst.bottleneck * rng.uniform(0.8, 2.0, size=3)))
    deadline[rng.integers(0, 3)] = np.inf if seed % 2 else deadline[0]
    return inst.replace(
        coflow_release=rel, flow_release=rel[inst.flow_coflow], coflow_deadline=deadline
    )


@pytest.mark.parametrize("seed", range(6))
def test_slotted_equals_brute_force_and_fluid_is_no_worse(seed):
    """Tests deadline-slotted against the enumeration of every slotted schedule, and that
    the fluid optimum is at least the slotted one (a slotted schedule is a fluid one)."""
    inst = tiny(seed)
    slotted, fluid = solve_deadline_slotted(inst), solve_deadline_fluid(inst)
    check(slotted, inst)
    check(fluid, inst)
    assert slotted.objective == pytest.approx(brute_force_deadlines(inst))
    assert fluid.objective >= slotted.objective - 1e-9


@pytest.mark.parametrize("seed", range(3))
def test_fluid_on_fractional_data_verifies(seed):
    """Tests fractional sizes, capacities and releases with Varys deadlines: the schedule
    verifies and the count never exceeds the coflows that fit alone."""
    inst = uniform(
        3,
        5,
        density=0.4,
        sizes=(0.3, 4.0),
        integral=False,
        release_rate=2.0,
        weights=(0.5, 2.0),
        seed=seed,
    )
    inst = assign_deadlines(inst, x=0.7, seed=seed)
    sol = solve_deadline_fluid(inst)
    check(sol, inst)
    fits_alone = (
        inst.coflow_release + inst.bottleneck <= inst.coflow_release + inst.coflow_deadline
    )
    assert sol.objective <= inst.coflow_weight[fits_alone].sum() + 1e-9
    assert sol.objective == solve_deadline_fluid(inst).objective  # deterministic


def test_registry_names():
    """Tests that the registry reaches both deadline methods."""
    inst = Instance.from_matrices([[[2]], [[3]]], deadline=[3, 3], weight=[1, 2])
    for name in ("deadline-fluid", "deadline-slotted"):
        assert solve_method(inst, name).objective == pytest.approx(2.0)
