"""Tests of sincronia-online's compiled event loop (singleton rate classes) against the per-flow
simulator.

The reference is ``simulate(inst, SincroniaOnline(...), engine="flows", record=True)``: the
same number of events, the same completion times (the simulator's own, to the bit), the same
epoch log, and the same rate changes. With one class per flow a class record is the per-flow
record of a rate change, so the engine's records must be the reference's records to the bit,
less the rate-0 record the per-flow path writes when a flow completes (each flow's last
record).
"""

from __future__ import annotations

import class_engine_checks as checks
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from instance_kinds import GENERATED, unequal_capacities, with_dependencies

from coflowlab import Instance, simulate
from coflowlab.constants import TOL
from coflowlab.exceptions import InvalidScheduleError
from coflowlab.heuristics.sincronia_online import SincroniaOnline
from coflowlab.heuristics.sincronia_online_classes import SincroniaOnlineClassEngine
from coflowlab.instances import fb_like, uniform
from coflowlab.simulator import SimulationError


def _class_records(inst, policy=None, **kwargs):
    """Runs the engine of ``policy`` (a new one by default); returns its result, its records
    (copied) and the chunks."""
    policy = SincroniaOnline() if policy is None else policy
    kwargs.setdefault("max_events", 4 * inst.num_flows + 10_000)  # a loop that stalls fails
    return checks.collect_records(SincroniaOnlineClassEngine(policy, inst), **kwargs)


def _check_against_reference(inst, *, verify=True, **options):
    ref_policy, policy = SincroniaOnline(**options), SincroniaOnline(**options)
    ref = simulate(inst, ref_policy, engine="flows", record=True, verify_schedule=False)
    run, recs, _ = _class_records(inst, policy, max_events=ref.num_events)
    checks.check_singleton_records(inst, run, recs, ref, equal_nan=True)
    assert policy.log == ref_policy.log  # the same epochs, LP values, orders
    if verify:
        checks.check_verified_class_path(inst, SincroniaOnline(**options), ref)
    return ref, run


def _example() -> Instance:
    # the policy's docstring example: an idle fabric at an epoch start, a tail of two
    from coflowlab import Coflow

    return Instance.from_coflows(
        [Coflow([(0, 0, 1.0)]), Coflow([(1, 1, 20.0)]), Coflow([(1, 1, 10.0)])], 2
    )


INSTANCES = {
    "example": _example,
    "unequal-capacities": unequal_capacities,
    **checks.engine_instances(
        "simultaneous", "uniform-ties", "one-port", "fb_like", "fb_like-spread", "capacity-2"
    ),
    **{k: v for k, v in GENERATED.items() if k != "dependencies"},
}


@pytest.mark.parametrize("timing", ["doubling", "public"])
@pytest.mark.parametrize("name", sorted(INSTANCES))
def test_same_events_completions_records_and_log_as_per_flow_simulator(name, timing):
    """Tests events, completion times, records and the epoch log against the per-flow
    simulator on generated instances, with both epoch timings."""
    _check_against_reference(INSTANCES[name](), timing=timing)


@pytest.mark.parametrize(
    "options",
    [
        {"max_epochs": 1},
        {"max_epochs": 3, "base": 0.5},
        {"order_sizes": "original", "timing": "public"},
        {"offset": 0.25, "max_epochs": 4},
        {"base": 7.0},
    ],
)
@pytest.mark.parametrize("name", ["uniform-online", "simultaneous", "real_sizes"])
def test_other_parameters(name, options):
    """Tests the grid (max_epochs, base), the BSSI sizes and the tail's offset."""
    _check_against_reference(INSTANCES[name](), **options)


@pytest.mark.parametrize("seed", range(3))
def test_larger_fb_like_many_epochs(seed):
    """Tests FB-like workloads with releases on 16-24 ports over many epochs and resets."""
    inst = fb_like(40, num_ports=16 + 4 * seed, seed=seed)
    _, run = _check_against_reference(inst, verify=seed == 0, max_epochs=4)
    assert run.num_events > 300


@settings(max_examples=150, deadline=None)
@given(
    checks.small_instances(releases=(0.0, 1.0, 2.0, 3.5, 6.0)),
    st.sampled_from(["doubling", "public"]),
    st.sampled_from([1, 2, 3, 8]),
    st.sampled_from(["remaining", "original"]),
)
def test_random_instances_match_per_flow_simulator(inst, timing, max_epochs, order_sizes):
    """Tests events, completions, records and the epoch log on random small instances (ties
    everywhere, both timings, short cycles)."""
    _check_against_reference(
        inst,
        verify=False,
        timing=timing,
        max_epochs=max_epochs,
        order_sizes=order_sizes,
    )


@pytest.mark.trace
def test_trace_prefix(fb_trace):
    """Tests the first 60 coflows of the public Facebook trace: events, completions, records
    and the epoch log against the per-flow simulator."""
    from coflowlab.instances import read_benchmark

    inst = read_benchmark(fb_trace).subset(range(60))
    _, run = _check_against_reference(inst)
    assert run.num_events > 1000


def test_tiny_chunks_give_the_same_records():
    """Tests that a tiny chunk (one event per call) gives the same records as one chunk,
    never splitting a time group (checked in the sink), with chunks of bounded size, and
    that progress is reported in order up to the last event."""
    inst = fb_like(20, num_ports=10, seed=3)

    def engine():
        return SincroniaOnlineClassEngine(SincroniaOnline(), inst)

    checks.check_tiny_chunks(_class_records, engine, inst, 8 * inst.num_ports)


def test_progress_is_reported_every_so_many_events(monkeypatch):
    """Tests that with a progress callback the loop pauses every PROGRESS_EVENTS events (the
    records and completions unchanged) and reports the events in order up to the last."""
    from coflowlab.heuristics import sincronia_online_classes

    inst = fb_like(20, num_ports=10, seed=3)
    checks.check_progress_pauses(monkeypatch, sincronia_online_classes, _class_records, inst)


def test_auto_takes_the_engine_only_where_it_applies():
    """Tests that simulate(engine="auto") takes the engine for record=False with the greedy
    allocation, fills the policy's log as the per-flow loop does, and runs per flow
    otherwise (record=True, other allocations, dependencies, a subclass)."""
    inst = uniform(4, 8, density=0.4, release_rate=0.5, seed=2)
    fast_policy, slow_policy = SincroniaOnline(), SincroniaOnline()
    fast = simulate(inst, fast_policy, record=False)
    slow = simulate(inst, slow_policy, record=False, engine="flows")
    assert (fast.engine, slow.engine) == ("classes", "flows")
    assert fast.verified and fast.num_events == slow.num_events
    assert fast.num_records == slow.num_records - inst.num_flows
    assert fast_policy.log == slow_policy.log and len(fast_policy.log) > 3
    np.testing.assert_allclose(fast.cct, slow.cct, rtol=0, atol=TOL * max(1.0, slow.cct.max()))
    assert simulate(inst, SincroniaOnline()).engine == "flows"  # record=True

    class Sub(SincroniaOnline):
        pass

    for policy, other in (
        (SincroniaOnline(allocation="madd"), inst),
        (SincroniaOnline(allocation="madd-exact"), inst),
        (SincroniaOnline(), with_dependencies(6)),
        (Sub(), inst),
    ):
        assert policy.class_engine(other, TOL) is None
        assert simulate(other, policy, record=False).engine == "flows"
        with pytest.raises(SimulationError, match="cannot run"):
            simulate(other, policy, record=False, engine="classes")


def test_class_engine_carries_the_policy():
    """Tests that the engine drives the policy object it was made from, with its tol."""
    inst = checks.simultaneous()
    policy = SincroniaOnline(timing="public", max_epochs=3)
    engine = policy.class_engine(inst, 1e-6)
    assert isinstance(engine, SincroniaOnlineClassEngine)
    assert engine.policy is policy and engine.tol == 1e-6
    assert engine.num_classes == inst.num_flows and engine.flow_weight is None
    assert engine.flow_class.tolist() == list(range(inst.num_flows))
    engine.run(lambda *a: None)
    assert policy.log and policy.log[0].epoch.budget == 1.0  # the public timing's first


def test_unsupported_policies_and_instances_are_rejected():
    """Tests the engine's own errors: dependencies, another allocation, a subclass."""
    with pytest.raises(InvalidScheduleError, match="dependencies"):
        SincroniaOnlineClassEngine(SincroniaOnline(), with_dependencies(6))
    with pytest.raises(InvalidScheduleError, match="greedy"):
        SincroniaOnlineClassEngine(SincroniaOnline(allocation="madd"), checks.simultaneous())

    class Sub(SincroniaOnline):
        pass

    with pytest.raises(InvalidScheduleError, match="subclass"):
        SincroniaOnlineClassEngine(Sub(), checks.simultaneous())
    assert SincroniaOnlineClassEngine.unsupported(SincroniaOnline(), checks.simultaneous()) is None


def test_max_events_raises_like_simulate():
    """Tests max_events: the simulator's error and message."""
    inst = uniform(4, 8, density=0.4, release_rate=0.5, seed=1)
    checks.assert_same_error(
        lambda: simulate(inst, SincroniaOnline(), max_events=5, engine="flows"),
        lambda: SincroniaOnlineClassEngine(SincroniaOnline(), inst).run(
            lambda *a: None, max_events=5
        ),
    )


def test_engine_can_run_twice():
    """Tests that run() starts from scratch each time (its state and the policy's are reset)."""
    policy = SincroniaOnline()
    engine = SincroniaOnlineClassEngine(policy, fb_like(10, num_ports=8, seed=1))
    first = engine.run(lambda *a: None)
    log = list(policy.log)
    checks.check_same_runs(first, engine.run(lambda *a: None))
    assert policy.log == log


def test_completions_within_the_relative_tolerance_share_an_event():
    """Tests the completion rule at a late time: two flows whose completions differ by less
    than the tolerance relative to the time (completion_threshold) complete at one event."""
    _, run = _check_against_reference(checks.late_near_tie(t0=1e4))
    assert run.flow_completion.tolist() == [1e4 + 1.0] * 2


def _recording(policy, seen):
    """Wraps the policy object's decide (an instance attribute, so the policy keeps its type
    and its engine) to record what each state shows."""
    decide = policy.decide

    def wrapped(state):
        seen.append(
            (
                float(state.time),
                state.flows.tolist(),
                state.remaining.tolist(),
                state.rate.tolist(),
                sorted(state.arrived.tolist()),
                sorted(state.completed.tolist()),
                state.completed_at.tolist(),
                sorted(state.completed_coflows.tolist()),
                state.coflow_arrival.tolist(),
                state.coflow_sent.tolist(),
                bool(state.woken),
            )
        )
        return decide(state)

    policy.decide = wrapped


@pytest.mark.parametrize("name", ["fb_like-spread", "uniform-online", "simultaneous", "example"])
def test_python_decisions_see_the_simulators_state(name):
    """Tests that at every event the engine hands to the policy's Python decide, the state
    shows what the per-flow simulator's does at that event: active flows, remaining bytes,
    rates, arrivals and completions since the last decision, coflow arrivals and bytes sent,
    the wake-up flag."""
    inst = INSTANCES[name]()
    ref_policy, policy = SincroniaOnline(), SincroniaOnline()
    want, got = [], []
    _recording(ref_policy, want)
    _recording(policy, got)
    simulate(inst, ref_policy, engine="flows", record=False, verify_schedule=False)
    SincroniaOnlineClassEngine(policy, inst).run(lambda *a: None)
    assert 0 < len(got) < len(want) or len(got) == len(want)
    for entry in got:
        assert entry in want, f"no per-flow event at t={entry[0]} shows this state"
    # every epoch start and every arrival went to Python
    assert len(got) >= len(policy.log)


@pytest.mark.parametrize("name", ["fb_like", "fb_like-spread", "uniform-online", "simultaneous"])
def test_candidate_loads_equal_the_per_flow_sums_at_every_decision(name):
    """Tests that the loads the engine hands the admission LP (summed by cell, a cell summed
    again only when one of its flows arrived or sent since, completed flows dropped) are, at
    every Python decision and for every coflow present, the per-flow path's sums over every
    active flow, bit for bit."""
    from coflowlab.heuristics.sincronia_online import _kernels

    inst = INSTANCES[name]()
    policy = SincroniaOnline()
    decide = policy.decide
    checked = []

    def checking(state):
        present = np.unique(np.asarray(state.coflow, dtype=np.int64))
        row = np.full(inst.num_coflows, -1, dtype=np.int64)
        row[present] = np.arange(len(present))
        m, k = inst.num_ports, len(present)
        want = _kernels()["loads"](
            row, np.asarray(state.coflow, dtype=np.int64), np.asarray(state.src, dtype=np.int64),
            np.asarray(state.dst, dtype=np.int64), np.asarray(state.remaining, dtype=float), m, k,
        )  # fmt: skip
        got = state.port_loads(row, m, k)
        assert np.array_equal(got, want), f"t={state.time!r}"
        checked.append(k)
        return decide(state)

    policy.decide = checking
    SincroniaOnlineClassEngine(policy, inst).run(lambda *a: None)
    assert len(checked) > 3 and max(checked) > 1
