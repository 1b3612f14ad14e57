"""Feasibility (docs/theory.md#properties, P13): every schedule of every registered scheduler
passes the independent verifier, and the numbers an algorithm reports are the verifier's.

The schedulers are read from the registries (:func:`algorithms.schedulers`: exact formulations
including the deadline ones, approximations and ordering baselines, online heuristics), so a
newly registered algorithm is checked here without a new test. Each property is a plain check
function, ``check_...(inst, alg)``, that the ``@given`` test calls and that the bug-injection
tests call with a deliberately broken algorithm.
"""

from __future__ import annotations

import dataclasses
from importlib import import_module

import algorithms
import numpy as np
import pytest
import summary
from algorithms import DECLINED, Algorithm
from hypothesis import Phase, assume, given, settings
from hypothesis import strategies as st
from profiles import examples
from strategies import instances

import coflowlab as cl
from coflowlab.solution import OBJECTIVE_RTOL
from coflowlab.time_models import TimeModel

# Injection tests only need the failure, not its shrunk form (shrinking re-solves).
_NO_SHRINK = (Phase.explicit, Phase.generate)
PROP = "P13 feasible"  # one row per algorithm: "P13 feasible <name>"

# Offline methods whose objective is Σ w C (the deadline formulations maximize the weight of
# coflows on time instead; their schedules are still verified).
_SUM_WC = {a.name for a in algorithms.exact_methods() + algorithms.approximations()}


class Declined(Exception):
    """The algorithm said the instance is outside its scope (counted, not a pass)."""


def _quartered(inst: cl.Instance) -> cl.Instance:
    return inst.replace(flow_size=inst.flow_size / 4)


def _instances_for(alg: Algorithm) -> st.SearchStrategy[cl.Instance]:
    """Instances the algorithm is meant for: integral data for slotted methods, deadlines for
    everyone (only the deadline methods use them). Offline methods get small instances with
    sizes on a grid (whole or quarter units): their LPs and MIPs grow with the horizon over the
    smallest size (a time-indexed LP on sizes 0.01..100 takes minutes); online heuristics get
    arbitrary sizes."""
    slotted = alg.model is TimeModel.SLOTTED
    if alg.family == "heuristic":
        return instances(deadlines=True, capacities=True)
    exact = alg.kind is not None and alg.kind.value == "exact"
    small = instances(
        max_ports=3,
        max_coflows=3 if exact else 4,
        max_flows_per_coflow=3,
        integral=True,
        deadlines=True,
        capacities=not slotted,
    )
    if exact:  # the deadline formulations decline instances where no coflow has a deadline
        small = small.filter(lambda i: bool(np.isfinite(i.coflow_deadline).any()))
    return small if slotted else st.one_of(small, small.map(_quartered))


def _weighted_sum(inst: cl.Instance, completion: np.ndarray) -> float:
    return float(np.dot(inst.coflow_weight, completion))


def check_offline_feasible(inst: cl.Instance, alg: Algorithm) -> cl.VerificationReport:
    """The Solution's schedule passes :func:`coflowlab.verify`, and for methods that minimize
    Σ w C its objective is Σ w C recomputed from the verifier's completion times."""
    try:
        sol = alg.run(inst)
    except DECLINED as exc:
        raise Declined(str(exc)) from exc
    assert sol.schedule is not None, f"{alg.name} returned no schedule ({sol.status})"
    report = cl.verify(inst, sol.schedule)
    assert report.feasible, f"{alg.name}: {report.summary()}"
    assert np.all(np.isfinite(report.coflow_completion))
    if alg.name in _SUM_WC:
        value = _weighted_sum(inst, report.coflow_completion)
        assert abs(sol.objective - value) <= OBJECTIVE_RTOL * max(1.0, abs(value)), (
            f"{alg.name}: objective {sol.objective!r} but the verified Σ w C is {value!r}"
        )
    return report


def check_online_feasible(inst: cl.Instance, alg: Algorithm) -> cl.VerificationReport:
    """The recorded schedule of a simulation passes :func:`coflowlab.verify` on the admitted
    coflows (rejected ones send nothing), and the completion times the simulator reports are
    the verifier's."""
    try:
        res = alg.run(inst)
    except DECLINED as exc:
        raise Declined(str(exc)) from exc
    sched = res.schedule
    assert sched is not None, f"{alg.name}: no recorded schedule"
    rejected = np.asarray(res.rejected, dtype=np.int64)
    sub, flow_map, keep = inst, np.arange(inst.num_flows), np.arange(inst.num_coflows)
    if len(rejected):
        keep = np.setdiff1d(np.arange(inst.num_coflows), rejected)
        assume(len(keep) > 0)
        sub = inst.subset(keep)
        flows = np.concatenate([inst.coflow_flows(int(k)) for k in keep])
        flow_map = np.full(inst.num_flows, -1, dtype=np.int64)
        flow_map[flows] = np.arange(len(flows))
        sent = sched.rate > 0
        assert (flow_map[sched.flow[sent]] >= 0).all(), f"{alg.name}: a rejected coflow sent"
        assert np.isnan(res.coflow_completion[rejected]).all()
    mapped = flow_map[sched.flow]
    live = mapped >= 0
    own = cl.FluidSchedule(sub.num_flows, sched.time[live], mapped[live], sched.rate[live])
    report = cl.verify(sub, own)
    assert report.feasible, f"{alg.name}: {report.summary()}"
    np.testing.assert_allclose(
        res.coflow_completion[keep], report.coflow_completion, rtol=1e-9, atol=1e-12
    )
    return report


def check_feasible(inst: cl.Instance, alg: Algorithm) -> cl.VerificationReport:
    """P13 for any scheduler (offline or online)."""
    if alg.family == "heuristic":
        return check_online_feasible(inst, alg)
    return check_offline_feasible(inst, alg)


def _run_property(inst: cl.Instance, alg: Algorithm) -> None:
    try:
        check_feasible(inst, alg)
    except Declined:
        summary.declined(f"{PROP} {alg.name}", alg.name)
        assume(False)
        return
    summary.observe(
        f"{PROP} {alg.name}",
        algorithm=alg.name,
        bound="verify(schedule).feasible",
    )


@pytest.mark.parametrize("alg", algorithms.schedulers(), ids=str)
@examples(ci=12, thorough=500)
@given(data=st.data())
def test_every_schedule_is_feasible(alg, data):
    """Invariant P13 (docs/theory.md#properties; architecture: one independent verifier): every
    schedule any registered scheduler returns respects port capacities at every event or slot,
    delivers every flow's bytes exactly and sends nothing before a release; offline methods report
    the verifier's Σ w C as their objective (exact and approximation methods alike), simulations
    the verifier's completion times."""
    _run_property(data.draw(_instances_for(alg)), alg)


# The counterexample ``make proofs`` found for exact-slotted (issue 12): HiGHS's MIP presolve
# declared the model infeasible (and, given a start, "optimal" at a value its solution did
# not have); the third coflow cannot meet its deadline, which the Σ w C methods ignore.
ISSUE_12 = cl.Instance.from_coflows(
    [
        cl.Coflow([(0, 2, 1.0), (1, 0, 4.0)], release=1.0, weight=3.0),
        cl.Coflow([(1, 2, 1.0)], release=1.0),
        cl.Coflow([(0, 0, 1.0), (0, 0, 1.0), (0, 0, 1.0)], release=3.0, weight=0.0, deadline=1.0),
    ],
    3,
)


@pytest.mark.parametrize("alg", algorithms.exact_methods(), ids=str)
def test_issue_12_instance_is_solved_by_every_exact_method(alg):
    """Regression (P13 in the thorough profile): every exact Σ w C method returns a verified,
    optimal schedule on the instance above, all with the same Σ w C = 20 where the time
    models agree (whole data, and the slotted greedy schedule C = (6, 2, 9) is fluid-optimal:
    ingress port 1 carries 5 units from time 1)."""
    report = check_offline_feasible(ISSUE_12, alg)
    sol = alg.run(ISSUE_12)
    assert sol.status.value == "optimal", f"{alg.name}: {sol.status.value}"
    assert abs(_weighted_sum(ISSUE_12, report.coflow_completion) - 20.0) <= 1e-6 * 20.0


# ---------------------------------------------------------------- bug injection
def _scaled(sched: cl.FluidSchedule, factor: float) -> cl.FluidSchedule:
    return cl.FluidSchedule(sched.num_flows, sched.time, sched.flow, sched.rate * factor)


def test_injected_overallocation_in_a_heuristic_is_caught():
    """Bug injection (feasibility family): a heuristic whose recorded rates are 10% too high
    (an allocation that over-fills ports) fails P13 on generated instances."""
    (varys,) = [a for a in algorithms.heuristics() if a.name == "varys"]

    def broken_run(inst):
        res = varys.run(inst)
        return dataclasses.replace(res, schedule=_scaled(res.schedule, 1.1))

    broken = dataclasses.replace(varys, run=broken_run)

    @settings(max_examples=20, database=None, derandomize=True, phases=_NO_SHRINK)
    @given(instances())
    def prop(inst):
        _run_property(inst, broken)

    with pytest.raises(AssertionError):
        prop()


def test_injected_overallocating_greedy_is_caught(monkeypatch):
    """Bug injection (feasibility family): ``priority_greedy`` (Sincronia's GREEDY, every
    list schedule) patched to hand out 10% more than the residual capacity. The baselines built
    on it then fail P13: the verifier rejects their schedules."""
    ls = import_module("coflowlab.list_scheduling")
    original = ls.priority_greedy

    def overallocating(*args, **kwargs):
        return np.asarray(original(*args, **kwargs)) * 1.1

    monkeypatch.setattr(ls, "priority_greedy", overallocating)
    (smith,) = [a for a in algorithms.approximations() if a.name == "order-smith"]
    inst = cl.Instance.from_coflows(
        [cl.Coflow([(0, 0, 2.0)]), cl.Coflow([(0, 1, 1.0), (1, 1, 3.0)], weight=2.0)], 2
    )
    with pytest.raises((AssertionError, cl.SolverError, cl.SimulationError)):
        check_feasible(inst, smith)
