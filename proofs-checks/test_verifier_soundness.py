"""The verifier accepts what is feasible and rejects what is not (any valid instance).

These properties check the checker: every other suite relies on it.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from strategies import instances, sequential_schedule

import coflowlab as cl


@given(instances(capacities=True), st.randoms(use_true_random=False))
def test_sequential_schedule_is_feasible_with_exact_completions(inst, rnd):
    """Invariant: one flow at a time at full rate is feasible, and each flow completes when
    the running sum of the durations before it says."""
    order = np.array(rnd.sample(range(inst.num_flows), inst.num_flows))
    report = cl.verify(inst, sequential_schedule(inst, order))
    assert report.feasible, report.summary()
    rate = np.minimum(
        inst.fabric.ingress_capacity[inst.flow_src], inst.fabric.egress_capacity[inst.flow_dst]
    )
    finish = inst.flow_release.max() + np.cumsum(inst.flow_size[order] / rate[order])
    np.testing.assert_allclose(report.flow_completion[order], finish, rtol=1e-12)


@given(instances(), st.randoms(use_true_random=False), st.floats(1.01, 3.0))
def test_speeding_up_one_flow_is_caught(inst, rnd, factor):
    """Invariant: raising one positive rate by a factor > 1 breaks conservation (the flow gets
    more than its size), or capacity if it overlaps; never passes unnoticed."""
    order = np.array(rnd.sample(range(inst.num_flows), inst.num_flows))
    sched = sequential_schedule(inst, order)
    rate = sched.rate.copy()
    pos = rnd.choice(np.flatnonzero(rate > 0).tolist())
    rate[pos] *= factor
    bad = cl.verify(inst, cl.FluidSchedule(inst.num_flows, sched.time, sched.flow, rate))
    assert not bad.feasible
    assert {"over_sent", "capacity"} & set(bad.counts)


@given(instances())
def test_all_at_once_rates_violate_exactly_the_overloaded_ports(inst):
    """Invariant: sending every flow at full rate at once violates capacity exactly on the
    ports that carry two or more flows, ingress and egress alike."""
    n = inst.num_flows
    t0 = float(inst.flow_release.max())
    sched = cl.FluidSchedule.from_segments(
        n, np.arange(n), np.full(n, t0), t0 + inst.flow_size, np.ones(n)
    )
    report = cl.verify(inst, sched, max_violations=10_000)
    overloaded = set()
    m = inst.num_ports
    for side, ports in (("ingress", inst.flow_src), ("egress", inst.flow_dst)):
        counts = np.bincount(ports, minlength=m)
        overloaded |= {(side, int(p)) for p in np.flatnonzero(counts >= 2)}
    found = {(v.side, v.port) for v in report.violations if v.kind is cl.ViolationKind.CAPACITY}
    assert found == overloaded
