"""The two time models (docs/theory.md#time-models): fluid OPT ≤ slotted OPT on integral data, and
the slotted MIP's proven optimum (docs/theory.md#time-indexed, ``exact-slotted``) equals an
independent integer enumeration of slotted schedules (P12).

The enumerator, :func:`brute_force.slotted_opt` (``proofs-checks/brute_force.py``, shared with
``tests/formulations``), is written from the model's definition only (docs/theory.md#time-models
and #instances conventions): slot ``t`` covers ``[t − 1, t)``; in a slot every port ``v`` moves at
most ``c_v`` whole units (a matching with unit capacities); a flow released at ``r`` sends only in
slots ``t > r``; a coflow completes at the end of the slot its last unit moves in. It explores
every per-slot choice (idling included) with memoisation on ``(slot, remaining demands)``.
"""

from __future__ import annotations

import dataclasses
from importlib import import_module

import algorithms
import numpy as np
import pytest
import summary
from algorithms import DECLINED
from brute_force import slotted_opt
from hypothesis import Phase, assume, given, settings
from hypothesis import strategies as st
from profiles import examples

import coflowlab as cl
from coflowlab.formulations import solve_method
from coflowlab.solution import OBJECTIVE_RTOL

# Injection tests only need the failure, not its shrunk form (shrinking re-solves).
_NO_SHRINK = (Phase.explicit, Phase.generate)
PROP_FLUID = "models: fluid OPT ≤ slotted OPT"
PROP_ENUM = "P12 exact-slotted = enumeration"


@st.composite
def tiny_integral(
    draw: st.DrawFn,
    *,
    max_ports: int = 2,
    max_coflows: int = 3,
    max_total: int = 5,
    max_release: int = 3,
    capacities: bool = False,
) -> cl.Instance:
    """Integral instances small enough to enumerate: total size ``≤ max_total`` units,
    integer releases and weights, port capacities in {1, 2} when asked."""
    m = draw(st.integers(1, max_ports))
    n = draw(st.integers(1, max_coflows))
    budget = max_total
    coflows = []
    for _ in range(n):
        if budget == 0:
            break
        flows = []
        for _ in range(draw(st.integers(1, 3))):
            if budget == 0:
                break
            size = draw(st.integers(1, min(3, budget)))
            budget -= size
            flows.append((draw(st.integers(0, m - 1)), draw(st.integers(0, m - 1)), float(size)))
        coflows.append(
            cl.Coflow(
                flows,
                release=float(draw(st.integers(0, max_release))),
                weight=float(draw(st.integers(0, 4))),
            )
        )
    fabric: cl.Fabric | int = m
    if capacities:
        cap = st.sampled_from([1.0, 2.0])
        fabric = cl.Fabric(m, [draw(cap) for _ in range(m)], [draw(cap) for _ in range(m)])
    return cl.Instance.from_coflows(coflows, fabric)


def _exact(inst: cl.Instance, method: str) -> float:
    try:
        sol = solve_method(inst, method)
    except DECLINED:
        summary.declined(PROP_FLUID, method)
        assume(False)
        raise
    assert sol.status.value == "optimal", f"{method}: {sol.status.value}"
    return float(sol.objective)


def check_fluid_at_most_slotted(inst: cl.Instance) -> tuple[float, float]:
    """Fluid OPT ≤ slotted OPT (a slotted schedule is a fluid one at constant rates per slot)."""
    fluid, slotted = _exact(inst, "exact-fluid"), _exact(inst, "exact-slotted")
    assert fluid <= slotted + OBJECTIVE_RTOL * max(1.0, slotted), (fluid, slotted)
    return fluid, slotted


def check_slotted_mip_equals_enumeration(inst: cl.Instance, alg: algorithms.Algorithm) -> float:
    """The slotted exact method's proven optimum, and the verified cost of its schedule, equal
    the enumerated slotted OPT."""
    sol = alg.run(inst)
    assert sol.status.value == "optimal", f"{alg.name}: {sol.status.value}"
    report = cl.verify(inst, sol.schedule)
    assert report.feasible, report.summary()
    verified = float(np.dot(inst.coflow_weight, report.coflow_completion))
    truth = slotted_opt(inst)
    tol = OBJECTIVE_RTOL * max(1.0, truth)
    assert abs(sol.objective - truth) <= tol, f"{alg.name}: {sol.objective} ≠ enumerated {truth}"
    assert abs(verified - truth) <= tol, f"{alg.name}: schedule costs {verified} ≠ {truth}"
    return truth


_SLOTTED_EXACT = [a for a in algorithms.exact_methods() if a.model.value == "slotted"]


@examples(ci=15, thorough=400)
@given(tiny_integral(max_ports=3, max_coflows=4, max_total=8))
def test_fluid_opt_at_most_slotted_opt(inst):
    """docs/theory.md#time-models: for integral data OPT_fluid ≤ OPT_slotted (every slotted
    schedule is a fluid schedule), both proven optima (exact-fluid docs/theory.md#exact,
    exact-slotted #time-indexed)."""
    fluid, slotted = check_fluid_at_most_slotted(inst)
    summary.observe(
        PROP_FLUID,
        algorithm="exact-fluid/exact-slotted",
        ratio=fluid / slotted if slotted > 0 else None,
        limit=slotted,
        value=fluid,
        bound="OPT_fluid ≤ OPT_slotted",
    )


@pytest.mark.parametrize("alg", _SLOTTED_EXACT, ids=str)
@examples(ci=15, thorough=400)
@given(inst=tiny_integral(capacities=True))
def test_slotted_mip_equals_enumeration(alg, inst):
    """P12 (docs/theory.md#time-indexed vs #exact, #properties): the time-indexed MIP's optimum
    equals brute-force enumeration of slotted schedules (integral sizes, releases and
    capacities ≤ 2, ≤ 2 ports, ≤ 3 coflows, ≤ 5 units)."""
    try:
        truth = check_slotted_mip_equals_enumeration(inst, alg)
    except DECLINED:
        summary.declined(PROP_ENUM, alg.name)
        assume(False)
        return
    summary.observe(PROP_ENUM, algorithm=alg.name, value=truth, bound="= enumeration")


def test_enumeration_reproduces_theory_r1():
    """The enumerator on instance R1 (docs/theory.md#instances) (slotted, release; preemption
    needed): OPT = 9."""
    inst = cl.Instance.from_coflows(
        [cl.Coflow([(0, 0, 2.0)]), cl.Coflow([(0, 0, 1.0), (1, 1, 1.0)], release=1, weight=3)],
        2,
    )
    assert slotted_opt(inst) == 9.0


# ---------------------------------------------------------------- bug injection
def test_injected_wrong_slotted_value_is_caught():
    """Bug injection (models family): exact-slotted reporting one more than its optimum (as a
    MIP would that loses the tightest slot) fails P12 against the enumeration."""
    (exact,) = [a for a in _SLOTTED_EXACT if a.name == "exact-slotted"]

    def broken_run(inst):
        sol = exact.run(inst)
        return dataclasses.replace(sol, objective=sol.objective + 1.0)

    broken = dataclasses.replace(exact, run=broken_run)

    @settings(max_examples=5, database=None, derandomize=True, phases=_NO_SHRINK)
    @given(tiny_integral())
    def prop(inst):
        check_slotted_mip_equals_enumeration(inst, broken)

    with pytest.raises(AssertionError):
        prop()


def test_injected_early_release_in_the_slotted_mip_is_caught(monkeypatch):
    """Bug injection (models family): the slotted MIP built with every release ignored (the
    off-by-one of the slotted release convention of docs/theory.md#time-models, taken to the
    extreme) is cheaper than any feasible slotted schedule on instance R1
    (docs/theory.md#instances), so P12 fails."""
    ti = import_module("coflowlab.formulations.time_indexed")
    original = ti.solve_exact_slotted

    def ignore_releases(inst, **kwargs):
        free = inst.replace(
            flow_release=np.zeros(inst.num_flows), coflow_release=np.zeros(inst.num_coflows)
        )
        sol = original(free, **kwargs)
        return dataclasses.replace(sol, instance=inst)

    monkeypatch.setattr(ti, "solve_exact_slotted", ignore_releases)
    (broken,) = [a for a in algorithms.exact_methods() if a.name == "exact-slotted"]
    inst = cl.Instance.from_coflows(
        [cl.Coflow([(0, 0, 2.0)]), cl.Coflow([(0, 0, 1.0), (1, 1, 1.0)], release=1, weight=3)],
        2,
    )
    with pytest.raises(AssertionError):
        check_slotted_mip_equals_enumeration(inst, broken)
