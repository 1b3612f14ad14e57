"""Tests of HUG's compiled event loop (singleton rate classes) against the per-flow simulator.

The reference is ``simulate(inst, HUG(...), engine="flows", record=True)``: the same number of
events, the same completion times, and the same rate changes. With one class per flow a class
record is the per-flow record of a rate change; HUG's engine also writes the rate-0 record of
each completion (heuristics/hug_classes.py says why), so its records must be the reference's
records to the bit, all of them. ``P*`` is compiled with NumPy's operations in NumPy's order:
it is compared with :func:`optimal_isolation` bit for bit.

The policies are Chowdhury's HUG (PhD thesis, UC Berkeley 2015, Ch. 7, Algorithm 6; capped
``hug``, §7.5.1, and cooperative ``hug-cooperative``, §7.5.2).
"""

from __future__ import annotations

import class_engine_checks as checks
import numpy as np
import pytest
from aalo_lockstep import bits, small_instances
from hypothesis import given, settings
from hypothesis import strategies as st
from instance_kinds import GENERATED, unequal_capacities, with_dependencies

from coflowlab import Fabric, Instance, simulate
from coflowlab.constants import TOL
from coflowlab.exceptions import InvalidScheduleError
from coflowlab.heuristics._hug_class_jit import optimal_isolation as compiled_isolation
from coflowlab.heuristics._hug_class_jit import refresh_active
from coflowlab.heuristics.correlation import optimal_isolation
from coflowlab.heuristics.hug import HUG, HUGCooperative
from coflowlab.heuristics.hug_classes import HUGClassEngine
from coflowlab.instances import fb_like, uniform
from coflowlab.instances.examples import coflex_fig2, coflex_theorem2, fig_3_2, fig_5_1
from coflowlab.simulator import SimulationError

MODES = {"hug": HUG, "hug-cooperative": HUGCooperative}


def _class_records(inst, policy, **kwargs):
    """Runs the engine; returns its result, its records (copied) and the chunks
    (class_engine_checks.collect_records, which checks the chunks)."""
    kwargs.setdefault("max_events", 4 * inst.num_flows + 100)  # a loop that stalls fails
    return checks.collect_records(HUGClassEngine(policy, inst), **kwargs)


def _check_against_reference(inst, mode):
    """Events, completions and records bit for bit against the per-flow loop; then the class
    path through simulate(), verified, with the verifier's completions within tolerance."""
    ref = simulate(inst, MODES[mode](), engine="flows", record=True, verify_schedule=False)
    run, recs, _ = _class_records(inst, MODES[mode]())
    assert run.num_events == ref.num_events
    # the simulator's own completion times (not the verifier's): the same floats
    assert np.array_equal(run.flow_completion, ref.flow_completion)
    assert np.array_equal(run.coflow_completion, ref.coflow_completion)
    assert run.num_records == len(recs[0]) == ref.num_records
    sched = ref.schedule
    assert np.array_equal(recs[1], sched.flow)
    assert np.array_equal(bits(recs[0]), bits(sched.time))
    assert np.array_equal(bits(recs[2]), bits(sched.rate))
    res = simulate(inst, MODES[mode](), record=False, engine="classes")
    assert res.engine == "classes" and res.verified and res.num_events == ref.num_events
    # the same records through the same per-flow verifier as the per-flow path: the same
    # reported times bit for bit (not within a tolerance of the simulator's own: HUG's rates
    # shrink with the bytes left, so a flow's last few bytes can take hundreds of time units,
    # and the verifier's byte tolerance, which grows with the horizon, may end it earlier)
    per_flow = simulate(inst, MODES[mode](), record=False, engine="flows")
    assert np.array_equal(res.flow_completion, per_flow.flow_completion, equal_nan=True)
    assert np.array_equal(res.cct, per_flow.cct, equal_nan=True)
    assert res.report.num_violations == 0
    return ref, run


def _release_at_completion() -> Instance:
    # a release at the time the flow before it completes, up to rounding
    return Instance(
        Fabric(1, 3.0, 3.0), [0] * 11 + [1], [0] * 12, [0] * 12, [1.0] * 11 + [0.5],
        coflow_release=[0.0, 2.0],
    )  # fmt: skip


def _unordered() -> Instance:
    # flows not numbered in coflow order: the grouping's two-pass path, arrivals to sort
    return Instance(
        Fabric(3, np.array([1.0, 2.0, 0.5]), np.array([1.5, 1.0, 1.0])),
        [2, 0, 1, 0, 2, 1, 0],
        [0, 1, 2, 0, 2, 1, 2],
        [1, 0, 2, 2, 0, 1, 1],
        [3.0, 2.0, 5.0, 1.5, 4.0, 2.5, 0.75],
        coflow_release=[0.5, 0.0, 1.0],
    )


def _scaled(inst: Instance, factor: float = 1e6) -> Instance:
    # capacities and sizes times `factor`: the filling's tolerance scales with the capacity
    fab = inst.fabric
    return Instance(
        Fabric(inst.num_ports, np.asarray(fab.ingress_capacity) * factor,
               np.asarray(fab.egress_capacity) * factor),
        inst.flow_coflow, inst.flow_src, inst.flow_dst, inst.flow_size * factor,
        inst.flow_release, coflow_release=inst.coflow_release,
    )  # fmt: skip


INSTANCES = {
    "coflex_fig2": coflex_fig2,
    "coflex_theorem2": coflex_theorem2,
    "fig_3_2": fig_3_2,
    "fig_5_1": fig_5_1,
    "release-at-completion": _release_at_completion,
    "unordered": _unordered,
    "unequal_capacities": unequal_capacities,
    **checks.engine_instances("uniform-ties", "one-port", "fb_like", "fb_like-spread"),
    "capacity-2": lambda: uniform(4, 8, density=0.5, release_rate=0.7, seed=9).replace(
        fabric=Fabric(4, np.array([2.0, 1.0, 0.5, 2.0]), np.array([1.0, 3.0, 2.0, 0.25]))
    ),
    "large-capacity": lambda: _scaled(uniform(4, 8, density=0.5, release_rate=0.7, seed=3)),
    **{k: v for k, v in GENERATED.items() if k != "dependencies"},
}


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("name", sorted(INSTANCES))
def test_same_events_completions_and_records_as_per_flow_simulator(name, mode):
    """Tests events, completion times and records (bit for bit) against the per-flow
    simulator on generated instances (releases, ties, one port, unequal capacities, spread
    starts, flows out of coflow order), and the verified class path."""
    _check_against_reference(INSTANCES[name](), mode)


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("seed", range(2))
def test_larger_fb_like_events_and_records(seed, mode):
    """Tests FB-like workloads with releases on 16-20 ports, more than 256 coflows active in
    one of them (the grouping's scratch rows run out: its two-pass path)."""
    inst = fb_like(40 if seed == 0 else 300, num_ports=16 + 4 * seed, seed=seed)
    _, run = _check_against_reference(inst, mode)
    assert run.num_events > 50


@st.composite
def unequal(draw):
    """A small instance (aalo_lockstep.small_instances, flows in any order) with per-port
    capacities drawn from a few values."""
    inst = draw(small_instances(repeated_pairs=True))
    m = inst.num_ports
    values = st.sampled_from([0.5, 1.0, 2.0, 3.0])
    cap_in = draw(st.lists(values, min_size=m, max_size=m))
    cap_out = draw(st.lists(values, min_size=m, max_size=m))
    return inst.replace(fabric=Fabric(m, np.array(cap_in), np.array(cap_out)))


@settings(max_examples=150, deadline=None)
@given(unequal(), st.sampled_from(sorted(MODES)))
def test_random_instances_match_per_flow_simulator(inst, mode):
    """Tests events, completions and records on random small instances (releases, repeated
    port pairs, flows out of order, unequal capacities), in both modes."""
    _check_against_reference(inst, mode)


@pytest.mark.trace
@pytest.mark.parametrize("mode", sorted(MODES))
def test_trace_prefix(fb_trace, mode):
    """Tests the first 30 coflows of the public Facebook trace: events, completions and
    records against the per-flow simulator."""
    from coflowlab.instances import read_benchmark

    inst = read_benchmark(fb_trace).subset(range(30))
    _, run = _check_against_reference(inst, mode)
    assert run.num_events > 50


@settings(max_examples=300, deadline=None)
@given(
    st.integers(0, 300),
    st.integers(1, 40),
    st.sampled_from([0.0, 1.0, np.inf, np.nan]),
    st.integers(0, 2**32 - 1),
)
def test_compiled_isolation_is_numpys_bit_for_bit(rows, half, special, seed):
    """Tests P* against correlation.optimal_isolation on random (nc, 2m) matrices of values
    spanning 16 orders of magnitude, with zero rows, and with an inf or NaN entry (a link
    without capacity), including no coflow at all."""
    rng = np.random.default_rng(seed)
    d = rng.random((rows, 2 * half)) * 10.0 ** rng.integers(-8, 8, (rows, 2 * half))
    if rows:
        d[rng.integers(rows)] = 0.0
        d[rng.integers(rows), rng.integers(2 * half)] = special
    assert bits(compiled_isolation(d)) == bits(optimal_isolation(d))
    zero = np.zeros((rows, 2 * half))
    assert bits(compiled_isolation(zero)) == bits(optimal_isolation(zero))


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_active_list_is_the_sorted_active_set(data):
    """Tests the loop's active list: survivors of the old list merged with arrivals given in
    any order are the active flows in increasing order (as FlowState.active lists them)."""
    nf = data.draw(st.integers(1, 40))
    old = sorted(data.draw(st.sets(st.integers(0, nf - 1))))
    gone = data.draw(st.sets(st.sampled_from(old))) if old else set()
    new = data.draw(st.permutations(sorted(set(range(nf)) - set(old))))
    new = new[: data.draw(st.integers(0, len(new)))]
    alive = np.zeros(nf, dtype=np.bool_)
    alive[[f for f in old if f not in gone]] = True
    alive[list(new)] = True
    act = np.full(nf, -7, dtype=np.int64)
    act[: len(old)] = old
    arrived = np.asarray(list(new) + [-1] * (nf - len(new)), dtype=np.int64)
    k = refresh_active(act, len(old), alive, arrived, len(new))
    assert act[:k].tolist() == np.flatnonzero(alive).tolist()


def test_tiny_chunks_give_the_same_records():
    """Tests that a tiny chunk (the buffer then holds two records per flow) gives the
    same records as one chunk, never splitting a time group (checked in the sink), and that
    progress is reported in order up to the last event."""
    inst = fb_like(20, num_ports=10, seed=3)
    big_run, big, big_chunks = _class_records(inst, HUG())
    small_run, small, small_chunks = _class_records(inst, HUG(), chunk=1)
    assert len(big_chunks) == 1 and len(small_chunks) >= len(big[0]) // (2 * inst.num_flows)
    assert len(small_chunks) > 2
    assert max(len(ch[0]) for ch in small_chunks) <= 4 * inst.num_flows  # the buffer, grown once
    checks.assert_same_records(big, small)
    assert big_run.num_events == small_run.num_events
    assert np.array_equal(big_run.flow_completion, small_run.flow_completion)
    seen = []
    HUGClassEngine(HUG(), inst).run(lambda *a: None, chunk=1, progress=lambda e, t: seen.append(e))
    assert seen == sorted(seen) and seen[-1] == big_run.num_events


def test_a_full_buffer_is_handed_over_before_an_event_overflows_it():
    """Tests the room the loop keeps (two records per active flow and release: a new rate,
    then a completion) in the tightest buffer, four records: flow 0 sends alone at rate 1,
    flow 1 arrives at 1 on its ingress port and both drop to P* = 1/2 (HUG's cap), so both
    complete at 3; the two rates at 1 and the two completions at 3 do not fit after the
    record at 0, which is handed over first."""
    inst = Instance(2, [0, 1], [0, 0], [0, 1], [2.0, 1.0], coflow_release=[0.0, 1.0])
    run, recs, chunks = _class_records(inst, HUG(), chunk=1)
    assert run.num_events == 2 and run.flow_completion.tolist() == [3.0, 3.0]
    assert recs[0].tolist() == [0.0, 1.0, 1.0, 3.0, 3.0]
    assert recs[2].tolist() == [1.0, 0.5, 0.5, 0.0, 0.0]
    assert [len(ch[0]) for ch in chunks] == [1, 2, 2]
    _check_against_reference(inst, "hug")


def test_progress_is_reported_every_so_many_events(monkeypatch):
    """Tests that with a progress callback the loop pauses every PROGRESS_EVENTS events (the
    records and completions unchanged) and reports the events in order up to the last."""
    from coflowlab.heuristics import hug_classes

    checks.check_progress_pauses(
        monkeypatch,
        hug_classes,
        lambda inst, **kw: _class_records(inst, HUGCooperative(), **kw),
        fb_like(20, num_ports=10, seed=3),
        min_events=50,
    )


@pytest.mark.parametrize("mode", sorted(MODES))
def test_auto_takes_the_engine_only_where_it_applies(mode):
    """Tests that simulate(engine="auto") takes the engine for record=False, and the
    per-flow loop otherwise (dependencies, record=True), with the same completion times
    and record count."""
    inst = uniform(4, 8, density=0.4, release_rate=0.5, seed=2)
    fast = simulate(inst, MODES[mode](), record=False)
    slow = simulate(inst, MODES[mode](), record=False, engine="flows")
    assert (fast.engine, slow.engine) == ("classes", "flows")
    assert fast.verified and fast.num_events == slow.num_events
    assert fast.num_records == slow.num_records
    np.testing.assert_allclose(fast.cct, slow.cct, rtol=0, atol=TOL * max(1.0, slow.cct.max()))
    assert simulate(inst, MODES[mode]()).engine == "flows"  # record=True
    other = with_dependencies(6)
    assert MODES[mode]().class_engine(other, TOL) is None
    assert simulate(other, MODES[mode](), record=False).engine == "flows"
    with pytest.raises(SimulationError, match="cannot run"):
        simulate(other, MODES[mode](), record=False, engine="classes")


REPORTS = {0: [1.0, 0.5, 0.25, 1.0, 1.0, 1.0]}
"""A misreport (thesis §7.4) for coflow 0 on 3 ports."""

UNSUPPORTED = {
    "fast=False": (lambda: HUG(fast=False), "fast=False"),
    "cooperative fast=False": (lambda: HUGCooperative(fast=False), "fast=False"),
    "misreports": (lambda: HUG(reported=REPORTS), "misreported"),
    "cooperative misreports": (lambda: HUGCooperative(reported=REPORTS), "misreported"),
}


@pytest.mark.parametrize("name", sorted(UNSUPPORTED))
def test_unsupported_policies_run_per_flow(name):
    """Tests that fast=False and misreports get no engine (the reason named), so
    simulate(engine="auto") replays the policy's own decide(), verified."""
    make, reason = UNSUPPORTED[name]
    inst = uniform(3, 10, density=0.6, release_rate=0.7, seed=5)
    assert make().class_engine(inst, TOL) is None
    assert reason in (HUGClassEngine.unsupported(make(), inst) or "")
    with pytest.raises(InvalidScheduleError, match=reason):
        HUGClassEngine(make(), inst)
    res = simulate(inst, make(), record=False)
    assert res.engine == "flows" and res.verified


def test_subclasses_and_dependencies_are_rejected():
    """Tests that a subclass of the policy (which may change its decisions) and an instance
    with dependencies get no engine; the plain policies on plain instances do."""

    class Other(HUG):
        pass

    inst = fig_3_2()
    assert Other().class_engine(inst, TOL) is None
    assert simulate(inst, Other(), record=False).engine == "flows"
    with pytest.raises(InvalidScheduleError, match="subclass"):
        HUGClassEngine(Other(), inst)
    with pytest.raises(InvalidScheduleError, match="dependencies"):
        HUGClassEngine(HUG(), with_dependencies(6))
    for policy in (HUG(), HUGCooperative(), HUG(cooperative=True)):
        assert HUGClassEngine.unsupported(policy, inst) is None


def test_class_engine_carries_the_policy_mode():
    """Tests that the policy's mode and the tolerance reach its engine, and the engine's
    classes are the flows."""
    inst = fig_5_1()
    for policy, cooperative in ((HUG(), False), (HUGCooperative(), True)):
        engine = policy.class_engine(inst, 1e-6)
        assert isinstance(engine, HUGClassEngine)
        assert (engine.name, engine.cooperative, engine.tol) == (policy.name, cooperative, 1e-6)
        assert engine.num_classes == inst.num_flows and engine.flow_weight is None
        assert engine.flow_class.tolist() == list(range(inst.num_flows))


def test_max_events_raises_like_simulate():
    """Tests max_events: the simulator's error and message."""
    inst = uniform(4, 8, density=0.4, release_rate=0.5, seed=1)
    checks.assert_same_error(
        lambda: simulate(inst, HUG(), max_events=5, engine="flows"),
        lambda: HUGClassEngine(HUG(), inst).run(lambda *a: None, max_events=5),
    )
    assert HUGClassEngine(HUG(), inst).run(lambda *a: None, max_events=10**6).num_events > 5


def test_engine_can_run_twice():
    """Tests that run() starts from scratch each time (its state is per run)."""
    engine = HUGClassEngine(HUGCooperative(), fb_like(10, num_ports=8, seed=1))
    checks.check_same_runs(engine.run(lambda *a: None), engine.run(lambda *a: None))


@pytest.mark.parametrize("mode", sorted(MODES))
def test_completions_within_the_relative_tolerance_share_an_event(mode):
    """Tests the completion rule at a late time: two flows whose completions differ by less
    than the tolerance relative to the time (completion_threshold) complete at one event."""
    t0 = 1e4
    _, run = _check_against_reference(checks.late_near_tie(t0), mode)
    assert run.num_events == 1 and run.flow_completion.tolist() == [t0 + 1.0] * 2
