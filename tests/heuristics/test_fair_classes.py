"""Tests of the rate-class engine of fair sharing against the per-flow simulator.

The reference is ``simulate(inst, FairSharing(), record=True)``: the same number of events,
the same completion times within the time tolerance, and, at every time the reference records
a rate, every flow's rate equal to its class's speed (class records expanded per flow, with
the flows active by the class-record semantics: ``class_engine_checks.check_rate_functions``).
"""

from __future__ import annotations

import math

import class_engine_checks as checks
import numpy as np
import pytest
from hypothesis import given, settings

from coflowlab import Fabric, Instance, simulate
from coflowlab.constants import TOL
from coflowlab.exceptions import InvalidScheduleError
from coflowlab.heuristics.fair import FairSharing
from coflowlab.heuristics.fair_classes import FairClassEngine
from coflowlab.instances import fb_like, uniform
from coflowlab.instances.examples import fig_3_2


def _class_records(inst, incremental=True, **kwargs):
    """Runs the engine; returns its result, its records (copied) and the chunks."""
    kwargs.setdefault("max_events", 4 * inst.num_flows + 100)  # a loop that stalls fails
    engine = FairClassEngine(inst)
    engine.incremental = incremental
    return checks.collect_records(engine, **kwargs)


def _check_against_reference(inst, *, check_rates=True, tol=TOL):
    ref = simulate(inst, FairSharing(), record=True)
    run, recs, _ = _class_records(inst)
    assert run.num_events == ref.num_events
    time_tol = checks.time_tolerance(ref, tol)
    np.testing.assert_allclose(run.flow_completion, ref.flow_completion, rtol=0, atol=time_tol)
    np.testing.assert_allclose(run.coflow_completion, ref.coflow_completion, rtol=0, atol=time_tol)
    assert run.num_records == len(recs[0])
    if not check_rates:
        return ref, run
    # class records expanded per flow; the engines' event times differ by rounding only
    flow_class = inst.flow_src * inst.num_ports + inst.flow_dst
    delta = checks.time_tolerance(ref, 1e-12)
    checks.check_rate_functions(inst, flow_class, run, recs, ref, delta=delta, rtol=1e-12)
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


INSTANCES = {
    "fig_3_2": fig_3_2,
    "uniform": lambda: uniform(4, 8, density=0.4, seed=1),
    "uniform-online": lambda: uniform(5, 10, density=0.3, release_rate=0.5, seed=2),
    "real-sizes": lambda: uniform(
        3, 6, sizes=(0.5, 30.0), integral=False, release_rate=0.3, seed=7
    ),
    "unequal": _unequal,
    **checks.engine_instances(
        "uniform-ties", "one-port", "fb_like", "fb_like-12", "fb_like-spread", "simultaneous"
    ),
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


@settings(max_examples=200, deadline=None)
@given(checks.small_instances(per_port=True))
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
    checks.assert_same_records(fast_recs, full_recs)
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
    checks.check_tiny_chunks(
        _class_records, lambda: FairClassEngine(inst), inst, 2 * inst.num_ports**2
    )


def test_dependencies_are_rejected():
    """Tests that an instance with coflow dependencies is rejected."""
    inst = uniform(3, 4, density=0.5, seed=1).replace(dependencies=[(0, 1)])
    with pytest.raises(InvalidScheduleError, match="dependencies"):
        FairClassEngine(inst)


def test_max_events_raises_like_simulate():
    """Tests max_events: the simulator's error and message."""
    inst = uniform(4, 8, density=0.4, release_rate=0.5, seed=1)
    checks.assert_same_error(
        lambda: simulate(inst, FairSharing(), max_events=5),
        lambda: FairClassEngine(inst).run(lambda *a: None, max_events=5),
    )
    assert FairClassEngine(inst).run(lambda *a: None, max_events=10**6).num_events > 5


def test_stall_raises_like_simulate():
    """Tests a stall (a pair with infinite capacity at both ports): the simulator's error."""
    inst = Instance(2, [0, 0, 1], [0, 1, 0], [0, 1, 0], [1.0, 2.0, 1.0], coflow_release=[0.0, 1.0])
    # a Fabric validates finite capacities; set port 0's to inf behind its back
    for side in ("ingress_capacity", "egress_capacity"):
        object.__setattr__(inst.fabric, side, np.array([math.inf, 1.0]))
    message = checks.assert_same_error(
        lambda: simulate(inst, FairSharing()), lambda: FairClassEngine(inst).run(lambda *a: None)
    )
    assert "stalls" in message
