"""Tests of pfp's compiled event loop (singleton rate classes) against the per-flow simulator.

The reference is ``simulate(inst, PerFlowPriority(...), engine="flows", record=True)``: the
same number of events, the same completion times, and the same rate changes. With one class
per flow a class record is the per-flow record of a rate change, so the engine's records must
be the reference's records to the bit, less the rate-0 record the per-flow path writes when a
flow completes (each flow's last record); the rates are also compared as piecewise-constant
functions at every reference record time, under the class-record semantics (a flow sends at
its class's speed from its release until it completes).
"""

from __future__ import annotations

import class_engine_checks as checks
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from instance_kinds import GENERATED, unequal_capacities, with_dependencies

from coflowlab import Fabric, Instance, simulate
from coflowlab.constants import TOL
from coflowlab.exceptions import InvalidScheduleError
from coflowlab.heuristics.baselines import PerFlowPriority
from coflowlab.heuristics.pfp_classes import PFPClassEngine
from coflowlab.instances import fb_like, uniform
from coflowlab.instances.examples import fig_3_2, fig_5_1
from coflowlab.simulator import SimulationError


def _class_records(inst, **kwargs):
    """Runs the engine; returns its result, its records (copied) and the chunks."""
    options = {k: kwargs.pop(k) for k in ("tie_break", "exact") if k in kwargs}
    kwargs.setdefault("max_events", 4 * inst.num_flows + 100)  # a loop that stalls fails
    return checks.collect_records(PFPClassEngine(inst, **options), **kwargs)


def _check_against_reference(inst, *, check_rates=True, tie_break="fifo", exact=True):
    policy = PerFlowPriority(tie_break=tie_break, exact=exact)
    ref = simulate(inst, policy, engine="flows", record=True, verify_schedule=False)
    run, recs, _ = _class_records(inst, tie_break=tie_break, exact=exact)
    checks.check_singleton_records(inst, run, recs, ref)
    if check_rates:
        # class f is flow f; the event times are the same floats on both paths
        checks.check_rate_functions(inst, np.arange(inst.num_flows), run, recs, ref)
    checks.check_verified_class_path(inst, policy, ref)
    return ref, run


def _overtaking() -> Instance:
    # a served flow overtakes a waiting one blocked elsewhere: the exact wake-up
    return Instance(
        2,
        [0, 0, 1],
        [0, 1, 1],
        [0, 0, 1],
        [5.0, 4.0, 3.0],
        coflow_release=[0.0, 0.5],
    )


def _release_at_completion() -> Instance:
    # a release at the time the flow before it completes, up to rounding (1.9999999999999998)
    return Instance(
        Fabric(1, 3.0, 3.0), [0] * 11 + [1], [0] * 12, [0] * 12, [1.0] * 11 + [0.5],
        coflow_release=[0.0, 2.0],
    )  # fmt: skip


INSTANCES = {
    "release-at-completion": _release_at_completion,
    "fig_3_2": fig_3_2,
    "fig_5_1": fig_5_1,
    "overtaking": _overtaking,
    **checks.engine_instances(
        "simultaneous",
        "uniform-ties",
        "one-port",
        "fb_like",
        "fb_like-12",
        "fb_like-spread",
        "capacity-2",
    ),
    **{k: v for k, v in GENERATED.items() if k != "dependencies"},
}


@pytest.mark.parametrize("name", sorted(INSTANCES))
def test_same_events_completions_and_records_as_per_flow_simulator(name):
    """Tests events, completion times, records and every per-flow rate against the per-flow
    simulator on generated instances (releases, ties, one port, capacity 2, spread starts)."""
    _check_against_reference(INSTANCES[name]())


@pytest.mark.parametrize("tie_break", ["lifo", "smaller_coflow"])
@pytest.mark.parametrize("name", ["fig_5_1", "simultaneous", "uniform-ties", "fb_like"])
def test_other_tie_breaks(name, tie_break):
    """Tests the non-default tie-breaks (the release column negated, coflow sizes)."""
    _check_against_reference(INSTANCES[name](), tie_break=tie_break)


@pytest.mark.parametrize("name", ["overtaking", "uniform-ties", "fb_like-12"])
def test_without_overtaking_wake_ups(name):
    """Tests exact=False (no wake-ups at overtakings)."""
    _check_against_reference(INSTANCES[name](), exact=False)


@pytest.mark.parametrize("seed", range(3))
def test_larger_fb_like_events_and_records(seed):
    """Tests FB-like workloads with releases on 16-24 ports (records, not rate functions)."""
    inst = fb_like(40, num_ports=16 + 4 * seed, seed=seed)
    _, run = _check_against_reference(inst, check_rates=False)
    assert run.num_events > 100


@settings(max_examples=400, deadline=None)
@given(
    checks.small_instances(),
    st.sampled_from(["fifo", "lifo", "smaller_coflow"]),
    st.booleans(),
)
def test_random_instances_match_per_flow_simulator(inst, tie_break, exact):
    """Tests events, completions, records and rates on random small instances (ties
    everywhere, every tie-break, with and without wake-ups)."""
    _check_against_reference(inst, tie_break=tie_break, exact=exact)


@pytest.mark.trace
def test_trace_prefix(fb_trace):
    """Tests the first 60 coflows of the public Facebook trace: events, completions and
    records against the per-flow simulator."""
    from coflowlab.instances import read_benchmark

    inst = read_benchmark(fb_trace).subset(range(60))
    _, run = _check_against_reference(inst, check_rates=False)
    assert run.num_events > 1000


def test_tiny_chunks_give_the_same_records():
    """Tests that a tiny chunk (one event per call) gives the same records as one chunk,
    never splitting a time group (checked in the sink), with chunks of bounded size, and
    that progress is reported in order up to the last event."""
    inst = uniform(4, 10, density=0.5, release_rate=1.0, seed=11)
    checks.check_tiny_chunks(
        _class_records, lambda: PFPClassEngine(inst), inst, 4 * inst.num_ports
    )


def test_progress_is_reported_every_so_many_events(monkeypatch):
    """Tests that with a progress callback the loop pauses every PROGRESS_EVENTS events (the
    records and completions unchanged) and reports the events in order up to the last."""
    from coflowlab.heuristics import pfp_classes

    checks.check_progress_pauses(
        monkeypatch, pfp_classes, _class_records, fb_like(20, num_ports=10, seed=3)
    )


def test_auto_takes_the_engine_only_where_it_applies():
    """Tests that simulate(engine="auto") takes the engine for record=False with equal
    capacities, and the per-flow loop otherwise (unequal capacities, dependencies,
    record=True), with the same completion times."""
    inst = uniform(4, 8, density=0.4, release_rate=0.5, seed=2)
    fast = simulate(inst, PerFlowPriority(), record=False)
    slow = simulate(inst, PerFlowPriority(), record=False, engine="flows")
    assert (fast.engine, slow.engine) == ("classes", "flows")
    assert fast.verified and fast.num_events == slow.num_events
    assert fast.num_records == slow.num_records - inst.num_flows
    np.testing.assert_allclose(fast.cct, slow.cct, rtol=0, atol=TOL * max(1.0, slow.cct.max()))
    assert simulate(inst, PerFlowPriority()).engine == "flows"  # record=True
    for other in (unequal_capacities(), with_dependencies(6)):
        assert PerFlowPriority().class_engine(other, TOL) is None
        assert simulate(other, PerFlowPriority(), record=False).engine == "flows"
        with pytest.raises(SimulationError, match="cannot run"):
            simulate(other, PerFlowPriority(), record=False, engine="classes")


def test_subclasses_run_per_flow():
    """Tests that a subclass of the policy (which may change its decisions) gets no engine,
    so simulate(engine="auto") replays its own decide()."""

    class Walk(PerFlowPriority):
        _use_matching = False

    inst = fig_3_2()
    assert Walk().class_engine(inst, TOL) is None
    assert simulate(inst, Walk(), record=False).engine == "flows"


def test_class_engine_carries_the_policy_parameters():
    """Tests that the policy's tie-break and exact setting reach its engine."""
    inst = fig_5_1()
    engine = PerFlowPriority(tie_break="lifo", exact=False).class_engine(inst, 1e-6)
    assert isinstance(engine, PFPClassEngine)
    assert (engine.tie_break, engine.exact, engine.tol) == ("lifo", False, 1e-6)
    assert engine.num_classes == inst.num_flows and engine.flow_weight is None
    assert engine.flow_class.tolist() == list(range(inst.num_flows))


def test_unsupported_instances_and_arguments_are_rejected():
    """Tests the engine's own errors: unequal capacities, dependencies, a bad tie-break."""
    with pytest.raises(InvalidScheduleError, match="capacities"):
        PFPClassEngine(unequal_capacities())
    with pytest.raises(InvalidScheduleError, match="dependencies"):
        PFPClassEngine(with_dependencies(6))
    with pytest.raises(ValueError, match="tie_break"):
        PFPClassEngine(fig_3_2(), tie_break="random")  # type: ignore[arg-type]
    assert PFPClassEngine.unsupported(fig_3_2()) is None


def test_max_events_raises_like_simulate():
    """Tests max_events: the simulator's error and message."""
    inst = uniform(4, 8, density=0.4, release_rate=0.5, seed=1)
    checks.assert_same_error(
        lambda: simulate(inst, PerFlowPriority(), max_events=5, engine="flows"),
        lambda: PFPClassEngine(inst).run(lambda *a: None, max_events=5),
    )
    assert PFPClassEngine(inst).run(lambda *a: None, max_events=10**6).num_events > 5


def test_engine_can_run_twice():
    """Tests that run() starts from scratch each time (its state is per run)."""
    engine = PFPClassEngine(fb_like(10, num_ports=8, seed=1))
    checks.check_same_runs(engine.run(lambda *a: None), engine.run(lambda *a: None))


def test_completions_within_the_relative_tolerance_share_an_event():
    """Tests the completion rule at a late time: two flows whose completions differ by less
    than the tolerance relative to the time (completion_threshold) complete at one event."""
    _, run = _check_against_reference(checks.late_near_tie(t0=1e4))
    assert run.num_events == 1 and run.flow_completion.tolist() == [1e4 + 1.0] * 2
