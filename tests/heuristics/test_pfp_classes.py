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
from coflowlab.instances import fb_like, spread_flow_starts, uniform
from coflowlab.instances.examples import fig_3_2, fig_5_1
from coflowlab.simulator import SimulationError


def _class_records(inst, **kwargs):
    """Runs the engine; returns its result, its records (copied) and the chunks, checking
    that each chunk is in time order and no time group is split between chunks."""
    chunks = []

    def sink(t, c, r):
        assert len(t) == len(c) == len(r) > 0
        assert np.all(np.diff(t) >= 0)
        if chunks:
            assert t[0] > chunks[-1][0][-1]
        chunks.append((t.copy(), c.copy(), r.copy()))

    options = {k: kwargs.pop(k) for k in ("tie_break", "exact") if k in kwargs}
    kwargs.setdefault("max_events", 4 * inst.num_flows + 100)  # a loop that stalls fails
    run = PFPClassEngine(inst, **options).run(sink, **kwargs)
    if not chunks:
        empty = np.zeros(0)
        return run, (empty, np.zeros(0, dtype=np.int64), empty), chunks
    recs = tuple(np.concatenate([ch[k] for ch in chunks]) for k in range(3))
    return run, recs, chunks


def _without_completion_records(sched, nf):
    """The per-flow records less each flow's last one (the rate-0 record of its completion)."""
    last = np.full(nf, -1, dtype=np.int64)
    last[sched.flow] = np.arange(len(sched.flow))  # the last index of each flow wins
    assert np.all(last >= 0) and np.all(sched.rate[last] == 0.0)
    keep = np.ones(len(sched.flow), dtype=bool)
    keep[last] = False
    return sched.time[keep], sched.flow[keep], sched.rate[keep]


def _check_rate_functions(inst, run, recs, ref):
    """Every flow's rate under the class records equals the reference's at every reference
    record time (after all records of that time). The event times are the same floats on
    both paths, so the times are compared exactly: a window would merge distinct times."""
    sched = ref.schedule
    st_, sf, sr = sched.time, sched.flow, sched.rate
    times, classes, speeds = recs
    ref_rate = np.zeros(inst.num_flows)
    speed = np.zeros(inst.num_flows)  # class f is flow f; speed 0 before its first record
    release = inst.flow_release
    k = j = 0
    while k < len(st_):
        tau = st_[k]
        while k < len(st_) and st_[k] == tau:
            ref_rate[sf[k]] = sr[k]
            k += 1
        while j < len(times) and times[j] <= tau:
            speed[classes[j]] = speeds[j]
            j += 1
        active = (release <= tau) & ~(run.flow_completion <= tau)
        mine = np.where(active, speed, 0.0)
        np.testing.assert_array_equal(mine, ref_rate, err_msg=f"t={tau}")


def _check_against_reference(inst, *, check_rates=True, tie_break="fifo", exact=True):
    policy = PerFlowPriority(tie_break=tie_break, exact=exact)
    ref = simulate(inst, policy, engine="flows", record=True, verify_schedule=False)
    run, recs, _ = _class_records(inst, tie_break=tie_break, exact=exact)
    assert run.num_events == ref.num_events
    # the simulator's own completion times (not the verifier's): the same floats
    assert np.array_equal(run.flow_completion, ref.flow_completion)
    assert np.array_equal(run.coflow_completion, ref.coflow_completion)
    assert run.num_records == len(recs[0]) == ref.num_records - inst.num_flows
    want_recs = _without_completion_records(ref.schedule, inst.num_flows)
    for mine, want in zip(recs, want_recs, strict=True):
        assert np.array_equal(mine, want)
    horizon = float(np.nanmax(ref.flow_completion)) if inst.num_flows else 0.0
    if check_rates:
        _check_rate_functions(inst, run, recs, ref)
    # verified on the class path: the verifier's completions agree within its tolerance
    res = simulate(inst, policy, record=False, engine="classes")
    assert res.engine == "classes" and res.verified and res.num_events == ref.num_events
    time_tol = TOL * max(1.0, horizon)
    np.testing.assert_allclose(res.flow_completion, ref.flow_completion, rtol=0, atol=time_tol)
    return ref, run


def _simultaneous() -> Instance:
    # ties: equal sizes on one pair released together and at the same times as completions
    return Instance(
        2,
        [0, 0, 0, 1, 1, 2, 2],
        [0, 0, 1, 0, 1, 0, 1],
        [0, 0, 1, 0, 1, 1, 0],
        [2.0, 2.0, 4.0, 1.0, 3.0, 2.0, 2.0],
        coflow_release=[0.0, 4.0, 4.0],
    )


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
    "simultaneous": _simultaneous,
    "overtaking": _overtaking,
    "uniform-ties": lambda: uniform(3, 12, density=0.6, sizes=(1, 3), release_rate=2.0, seed=5),
    "one-port": lambda: uniform(1, 6, release_rate=0.5, seed=8),
    "fb_like": lambda: fb_like(20, num_ports=10, seed=3),
    "fb_like-12": lambda: fb_like(30, num_ports=12, seed=3),
    "fb_like-spread": lambda: spread_flow_starts(fb_like(12, num_ports=8, seed=4), 50.0, seed=4),
    "capacity-2": lambda: uniform(4, 8, density=0.5, release_rate=0.7, seed=9).replace(
        fabric=Fabric(4, 2.0, 2.0)
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


@st.composite
def instances(draw):
    m = draw(st.integers(1, 4))
    nf = draw(st.integers(1, 14))
    n = draw(st.integers(1, min(nf, 5)))
    coflow = sorted(draw(st.lists(st.integers(0, n - 1), min_size=nf, max_size=nf)))
    coflow = np.unique(coflow, return_inverse=True)[1]  # no empty coflow
    n = int(coflow.max()) + 1
    src = draw(st.lists(st.integers(0, m - 1), min_size=nf, max_size=nf))
    dst = draw(st.lists(st.integers(0, m - 1), min_size=nf, max_size=nf))
    size = draw(st.lists(st.sampled_from([1.0, 2.0, 3.0, 0.5, 7.25]), min_size=nf, max_size=nf))
    release = draw(st.lists(st.sampled_from([0.0, 1.0, 2.0, 3.5]), min_size=n, max_size=n))
    cap = draw(st.sampled_from([1.0, 0.5, 3.0]))
    return Instance(Fabric(m, cap, cap), coflow, src, dst, size, coflow_release=release)


@settings(max_examples=400, deadline=None)
@given(
    instances(),
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
    big_run, big, big_chunks = _class_records(inst)
    small_run, small, small_chunks = _class_records(inst, chunk=1)
    assert len(big_chunks) == 1 and len(small_chunks) > 10
    assert max(len(ch[0]) for ch in small_chunks) <= 4 * inst.num_ports
    for a, b in zip(big, small, strict=True):
        assert np.array_equal(a, b)
    assert big_run.num_events == small_run.num_events
    assert np.array_equal(big_run.flow_completion, small_run.flow_completion)
    seen = []
    PFPClassEngine(inst).run(lambda *a: None, chunk=1, progress=lambda e, t: seen.append(e))
    assert seen == sorted(seen) and seen[-1] == big_run.num_events


def test_progress_is_reported_every_so_many_events(monkeypatch):
    """Tests that with a progress callback the loop pauses every PROGRESS_EVENTS events (the
    records and completions unchanged) and reports the events in order up to the last."""
    from coflowlab.heuristics import pfp_classes

    inst = fb_like(20, num_ports=10, seed=3)
    whole_run, whole, _ = _class_records(inst)
    monkeypatch.setattr(pfp_classes, "PROGRESS_EVENTS", 7)
    seen = []
    run, recs, _ = _class_records(inst, progress=lambda e, t: seen.append((e, t)))
    events = [e for e, _ in seen]
    assert events[-1] == run.num_events == whole_run.num_events > 100
    assert max(np.diff([0, *events])) <= 7 and len(seen) >= run.num_events // 7
    assert [t for _, t in seen] == sorted(t for _, t in seen)
    for a, b in zip(whole, recs, strict=True):
        assert np.array_equal(a, b)
    assert np.array_equal(run.flow_completion, whole_run.flow_completion)


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
    with pytest.raises(SimulationError) as ref:
        simulate(inst, PerFlowPriority(), max_events=5, engine="flows")
    with pytest.raises(SimulationError) as mine:
        PFPClassEngine(inst).run(lambda *a: None, max_events=5)
    assert str(mine.value) == str(ref.value)
    assert PFPClassEngine(inst).run(lambda *a: None, max_events=10**6).num_events > 5


def test_engine_can_run_twice():
    """Tests that run() starts from scratch each time (its state is per run)."""
    engine = PFPClassEngine(fb_like(10, num_ports=8, seed=1))
    first, second = engine.run(lambda *a: None), engine.run(lambda *a: None)
    assert first.num_events == second.num_events and first.num_records == second.num_records
    assert np.array_equal(first.flow_completion, second.flow_completion)


def test_completions_within_the_relative_tolerance_share_an_event():
    """Tests the completion rule at a late time: two flows whose completions differ by less
    than the tolerance relative to the time (completion_threshold) complete at one event."""
    t0 = 1e4
    inst = Instance(4, [0, 1], [0, 1], [0, 1], [1.0, 1.0 + 5e-6], coflow_release=[t0, t0])
    _, run = _check_against_reference(inst)
    assert run.num_events == 1 and run.flow_completion.tolist() == [t0 + 1.0] * 2
