"""Tests of the rate-class engine of fair sharing against the per-flow simulator.

The reference is ``simulate(inst, FairSharing(), record=True)``: the same number of events,
the same completion times within the time tolerance, and, at every time the reference records
a rate, every flow's rate equal to its class's speed (class records expanded per flow by a
plain Python loop, with the flows active by the class-record semantics).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coflowlab import Fabric, Instance, simulate
from coflowlab.constants import TOL
from coflowlab.exceptions import InvalidScheduleError
from coflowlab.heuristics.fair import FairSharing
from coflowlab.heuristics.fair_classes import FairClassEngine
from coflowlab.instances import fb_like, spread_flow_starts, uniform
from coflowlab.instances.examples import fig_3_2
from coflowlab.simulator import SimulationError


def _class_records(inst, incremental=True, **kwargs):
    """Runs the engine; returns its result and its records (copied), checking each chunk."""
    chunks = []

    def sink(t, c, r):
        assert len(t) == len(c) == len(r) > 0
        assert np.all(np.diff(t) >= 0)
        if chunks:  # times non-decreasing across calls, and no time group split
            assert t[0] > chunks[-1][0][-1]
        chunks.append((t.copy(), c.copy(), r.copy()))

    kwargs.setdefault("max_events", 4 * inst.num_flows + 100)  # a loop that stalls fails
    engine = FairClassEngine(inst)
    engine.incremental = incremental
    run = engine.run(sink, **kwargs)
    if not chunks:
        empty = np.zeros(0)
        return run, (empty, np.zeros(0, dtype=np.int64), empty), chunks
    recs = tuple(np.concatenate([ch[k] for ch in chunks]) for k in range(3))
    return run, recs, chunks


def _expanded_rates(inst, run, recs, tau, delta):
    """Per-flow rates at ``tau`` (after every record up to ``tau + delta``) implied by the
    class records: an active flow sends at its class's speed (0 before its first record)."""
    m = inst.num_ports
    speed = {}
    times, classes, speeds = recs
    for k in range(len(times)):
        if times[k] > tau + delta:
            break
        speed[int(classes[k])] = float(speeds[k])
    rates = np.zeros(inst.num_flows)
    for f in range(inst.num_flows):
        released = inst.flow_release[f] <= tau + delta
        done = run.flow_completion[f] <= tau + delta
        if released and not done:
            rates[f] = speed.get(int(inst.flow_src[f]) * m + int(inst.flow_dst[f]), 0.0)
    return rates


def _check_against_reference(inst, *, check_rates=True, tol=TOL):
    ref = simulate(inst, FairSharing(), record=True)
    run, recs, _ = _class_records(inst)
    assert run.num_events == ref.num_events
    horizon = float(np.nanmax(ref.flow_completion)) if inst.num_flows else 0.0
    time_tol = tol * max(1.0, horizon)
    np.testing.assert_allclose(run.flow_completion, ref.flow_completion, rtol=0, atol=time_tol)
    np.testing.assert_allclose(run.coflow_completion, ref.coflow_completion, rtol=0, atol=time_tol)
    assert run.num_records == len(recs[0])
    if not check_rates:
        return ref, run
    sched = ref.schedule
    order = np.argsort(sched.time, kind="stable")
    st_, sf, sr = sched.time[order], sched.flow[order], sched.rate[order]
    ref_rate = np.zeros(inst.num_flows)
    delta = 1e-12 * max(1.0, horizon)  # the engines' event times differ by rounding only
    k = 0
    while k < len(st_):
        tau = st_[k]
        while k < len(st_) and st_[k] == tau:
            ref_rate[sf[k]] = sr[k]
            k += 1
        mine = _expanded_rates(inst, run, recs, tau, delta)
        np.testing.assert_allclose(mine, ref_rate, rtol=1e-12, atol=0, err_msg=f"t={tau}")
    return ref, run


def _unequal() -> Instance:
    return Instance(
        Fabric(3, np.array([1.0, 0.5, 2.0]), np.array([0.7, 1.0, 1.5])),
        [0, 0, 1, 1, 2, 2, 2],
        [0, 0, 1, 1, 2, 0, 0],
        [0, 1, 2, 0, 1, 0, 0],
        [12.0, 8.0, 20.0, 6.0, 9.0, 3.0, 12.0],
        coflow_release=[0.0, 1.0, 2.0],
    )


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


INSTANCES = {
    "fig_3_2": fig_3_2,
    "uniform": lambda: uniform(4, 8, density=0.4, seed=1),
    "uniform-online": lambda: uniform(5, 10, density=0.3, release_rate=0.5, seed=2),
    "uniform-ties": lambda: uniform(3, 12, density=0.6, sizes=(1, 3), release_rate=2.0, seed=5),
    "real-sizes": lambda: uniform(
        3, 6, sizes=(0.5, 30.0), integral=False, release_rate=0.3, seed=7
    ),
    "one-port": lambda: uniform(1, 6, release_rate=0.5, seed=8),
    "fb_like": lambda: fb_like(20, num_ports=10, seed=3),
    "fb_like-12": lambda: fb_like(30, num_ports=12, seed=3),
    "fb_like-spread": lambda: spread_flow_starts(fb_like(12, num_ports=8, seed=4), 50.0, seed=4),
    "unequal": _unequal,
    "simultaneous": _simultaneous,
}


@pytest.mark.parametrize("name", sorted(INSTANCES))
def test_same_events_completions_and_rates_as_per_flow_simulator(name):
    """Tests events, completion times and every per-flow rate against the per-flow
    simulator on generated instances (releases, ties, unequal capacities, one port)."""
    _check_against_reference(INSTANCES[name]())


@pytest.mark.parametrize("seed", range(4))
def test_larger_fb_like_events_and_completions(seed):
    """Tests events and completion times on FB-like workloads with releases, 16-24 ports."""
    inst = fb_like(40, num_ports=16 + 4 * (seed % 3), seed=seed)
    _check_against_reference(inst, check_rates=False)


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
    caps = st.lists(st.sampled_from([1.0, 0.5, 2.0, 3.0]), min_size=m, max_size=m)
    fabric = Fabric(m, np.array(draw(caps)), np.array(draw(caps)))
    return Instance(fabric, coflow, src, dst, size, coflow_release=release)


@settings(max_examples=200, deadline=None)
@given(instances())
def test_random_instances_match_per_flow_simulator(inst):
    """Tests events, completions and rates on random small instances (ties everywhere)."""
    _check_against_reference(inst)


@pytest.mark.parametrize("seed", range(3))
def test_incremental_max_min_gives_the_same_bits_as_from_scratch(seed):
    """Tests that the incremental max-min (replaying the previous event's rounds) gives the
    same records, to the bit, as maxmin_pairs from scratch at every event."""
    inst = fb_like(60, num_ports=20 + 5 * seed, seed=seed)
    fast, fast_recs, _ = _class_records(inst)
    full, full_recs, _ = _class_records(inst, incremental=False)
    assert fast.num_events == full.num_events and fast.num_events > 100
    for a, b in zip(fast_recs, full_recs, strict=True):
        assert np.array_equal(a, b)
    assert np.array_equal(fast.flow_completion, full.flow_completion)


def test_trace_prefix():
    """Tests the first 40 coflows of the public Facebook trace (skipped when absent)."""
    from coflowlab.instances import find_fb_trace, read_benchmark

    path = find_fb_trace()
    if path is None:
        pytest.skip("FB2010-1Hr-150-0.txt not found (see README: 'Getting the trace')")
    _check_against_reference(read_benchmark(path).subset(range(40)), check_rates=False)


def test_tiny_chunks_give_the_same_records():
    """Tests that a tiny chunk (one event per call) gives the same records as one chunk,
    never splitting a time group (checked in the sink) and with chunks of bounded size."""
    inst = uniform(4, 10, density=0.5, release_rate=1.0, seed=11)
    big_run, big, big_chunks = _class_records(inst)
    small_run, small, small_chunks = _class_records(inst, chunk=1)
    assert len(big_chunks) == 1 and len(small_chunks) > 10
    assert max(len(ch[0]) for ch in small_chunks) <= 2 * inst.num_ports**2
    for a, b in zip(big, small, strict=True):
        assert np.array_equal(a, b)
    assert big_run.num_events == small_run.num_events
    assert np.array_equal(big_run.flow_completion, small_run.flow_completion)
    seen = []
    FairClassEngine(inst).run(lambda *a: None, chunk=1, progress=lambda e, t: seen.append(e))
    assert seen == sorted(seen) and seen[-1] == big_run.num_events


def test_dependencies_are_rejected():
    """Tests that an instance with coflow dependencies is rejected."""
    inst = uniform(3, 4, density=0.5, seed=1).replace(dependencies=[(0, 1)])
    with pytest.raises(InvalidScheduleError, match="dependencies"):
        FairClassEngine(inst)


def test_max_events_raises_like_simulate():
    """Tests max_events: the simulator's error and message."""
    inst = uniform(4, 8, density=0.4, release_rate=0.5, seed=1)
    with pytest.raises(SimulationError) as ref:
        simulate(inst, FairSharing(), max_events=5)
    with pytest.raises(SimulationError) as mine:
        FairClassEngine(inst).run(lambda *a: None, max_events=5)
    assert str(mine.value) == str(ref.value)
    assert FairClassEngine(inst).run(lambda *a: None, max_events=10**6).num_events > 5


def test_stall_raises_like_simulate():
    """Tests a stall (a pair with infinite capacity at both ports): the simulator's error."""
    inst = Instance(2, [0, 0, 1], [0, 1, 0], [0, 1, 0], [1.0, 2.0, 1.0], coflow_release=[0.0, 1.0])
    # a Fabric validates finite capacities; set port 0's to inf behind its back
    for side in ("ingress_capacity", "egress_capacity"):
        object.__setattr__(inst.fabric, side, np.array([math.inf, 1.0]))
    with pytest.raises(SimulationError) as ref:
        simulate(inst, FairSharing())
    with pytest.raises(SimulationError) as mine:
        FairClassEngine(inst).run(lambda *a: None)
    assert "stalls" in str(mine.value)
    assert str(mine.value) == str(ref.value)
