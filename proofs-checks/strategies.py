"""Hypothesis strategies for coflowlab instances, built through the public constructors.

Generated instances are valid by construction; shrinking works on the small integers and
floats they are drawn from, so a minimal counterexample prints (``repr``) as the Python that
rebuilds it.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

import coflowlab as cl


@st.composite
def instances(
    draw: st.DrawFn,
    *,
    max_ports: int = 4,
    max_coflows: int = 5,
    max_flows_per_coflow: int = 6,
    integral: bool = False,
    releases: bool = True,
    weights: bool = True,
    deadlines: bool = False,
    capacities: bool = False,
) -> cl.Instance:
    """Valid instances with up to the given numbers of ports, coflows and flows."""
    m = draw(st.integers(1, max_ports))
    n = draw(st.integers(1, max_coflows))
    size = (
        st.integers(1, 9).map(float)
        if integral
        else st.floats(0.01, 100.0, allow_nan=False, allow_infinity=False)
    )
    coflows = []
    for _ in range(n):
        k = draw(st.integers(1, max_flows_per_coflow))
        flows = [
            (draw(st.integers(0, m - 1)), draw(st.integers(0, m - 1)), draw(size))
            for _ in range(k)
        ]
        coflows.append(
            cl.Coflow(
                flows,
                release=draw(st.integers(0, 10).map(float)) if releases else 0.0,
                weight=draw(st.integers(0, 5).map(float)) if weights else 1.0,
                deadline=draw(st.one_of(st.none(), st.floats(1.0, 50.0))) if deadlines else None,
            )
        )
    fabric: cl.Fabric | int = m
    if capacities:
        cap = st.sampled_from([0.5, 1.0, 2.0])
        fabric = cl.Fabric(m, [draw(cap) for _ in range(m)], [draw(cap) for _ in range(m)])
    return cl.Instance.from_coflows(coflows, fabric)


def sequential_schedule(inst: cl.Instance, order: np.ndarray) -> cl.FluidSchedule:
    """A trivially feasible schedule: the flows one after another at full rate, after the
    last release. Completion times follow from the order alone."""
    builder = cl.FluidScheduleBuilder(inst.num_flows)
    t = float(inst.flow_release.max())
    cap_in, cap_out = inst.fabric.ingress_capacity, inst.fabric.egress_capacity
    for e in order:
        rate = float(min(cap_in[inst.flow_src[e]], cap_out[inst.flow_dst[e]]))
        builder.set_rates(t, [e], [rate])
        t += float(inst.flow_size[e]) / rate
        builder.set_rates(t, [e], [0.0])
    return builder.build()
