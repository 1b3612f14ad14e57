"""Tests of FIFO-LM's incremental allocation (``coflowlab.heuristics.fifo_lm``): the state kept
between events gives, at every event, the same bits as the allocation from scratch.

The behaviour of the policy itself is tested in ``test_baselines.py``."""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np
import pytest
from instance_kinds import GENERATED, unequal_capacities
from numpy.testing import assert_, assert_equal

from coflowlab import Coflow, Instance, simulate
from coflowlab.heuristics.dclas_kernels import kernels
from coflowlab.heuristics.fifo_lm import FifoLM
from coflowlab.instances import fb_like, uniform
from coflowlab.policy import Decision, InstanceView, ObservedState

INSTANCES = {
    **GENERATED,
    "capacities": unequal_capacities,
    "online": lambda: uniform(6, 12, density=0.4, release_rate=0.5, seed=900),
    "fb_like": lambda: fb_like(25, num_ports=20, seed=12),
}

THRESHOLDS = [0.0, 5.0, 20.0, 1000.0, math.inf]


class FromScratch:
    """Runs the incremental FIFO-LM and checks each decision against the same policy's
    allocation from scratch over every active flow (``FifoLM._decide_flat``)."""

    name: ClassVar[str] = "fifo-lm-check"
    clairvoyant: ClassVar[bool] = False

    def __init__(self, threshold: float) -> None:
        self.inner = FifoLM(threshold=threshold)
        self.flat = FifoLM(threshold=threshold)
        self.checked = 0

    def reset(self, view: InstanceView) -> None:
        self.inner.reset(view)
        self.flat.reset(view)
        self.rate = np.zeros(view.num_flows)

    def decide(self, state: ObservedState) -> Decision:
        decision = self.inner.decide(state)
        expected = self.flat._decide_flat(state)
        assert decision.update is not None and expected.rates is not None
        flows, rates = decision.update
        self.rate[flows] = rates
        assert_equal(self.rate[state.flows], expected.rates)  # the same bits
        assert_equal(decision.wakeup, expected.wakeup)
        self.checked += 1
        return decision


@pytest.mark.parametrize("threshold", THRESHOLDS)
@pytest.mark.parametrize("name", sorted(INSTANCES))
def test_incremental_rates_equal_the_allocation_from_scratch(name: str, threshold: float):
    """Tests that at every event the rates kept between events (groups whose flows and input
    capacities did not change are reused) and the wake-up equal, bit for bit, the allocation
    recomputed from scratch over all active flows."""
    check = FromScratch(threshold)
    result = simulate(INSTANCES[name](), check)
    assert_(result.verified)
    assert_equal(check.checked, result.num_events)


def test_more_rounds_fall_back_to_the_allocation_from_scratch(monkeypatch: Any):
    """Tests the path taken when some flow could still grow after the first round (the
    allocation from scratch then runs more rounds): forced at every event, the decisions
    still equal the allocation from scratch."""
    step = kernels()["fifo_step"]
    calls = []

    def always_more(*args: Any) -> Any:
        calls.append(1)
        return (*step(*args)[:4], True)

    monkeypatch.setitem(kernels(), "fifo_step", always_more)
    check = FromScratch(5.0)
    result = simulate(INSTANCES["online"](), check)
    assert_(result.verified)
    assert_equal(len(calls), result.num_events)


@pytest.mark.parametrize("name", ["fb_like", "online", "real_sizes"])
def test_schedule_equals_the_global_count_path_with_per_port_bytes(name: str):
    """Tests that a whole simulation with the incremental path gives the same completion times
    and events as one driven by the allocation from scratch."""

    class Flat(FifoLM):
        def decide(self, state: ObservedState) -> Decision:
            return self._decide_flat(state)

    inst = INSTANCES[name]()
    a = simulate(inst, FifoLM(threshold=5.0), verify_schedule=False, record=False)
    b = simulate(inst, Flat(threshold=5.0), verify_schedule=False, record=False)
    assert_equal(a.coflow_completion, b.coflow_completion)
    assert_equal(a.flow_completion, b.flow_completion)
    assert_equal(a.num_events, b.num_events)


@pytest.mark.parametrize("local", [True, False])
def test_byte_counts_stop_at_completion_across_an_idle_gap(local):
    """Tests that bytes sent stop counting when a flow completes, even when the fabric then
    goes idle. Coflow 0 sends 1 unit at t = 0 (done at 1) and another at t = 10, when coflow 1
    (1 unit) arrives; one link, threshold 1.5. Coflow 0 is light (1 < 1.5) and first, so it
    is served alone until it turns heavy at 10.5; then the two share the link, coflow 0's last
    0.5 ends at 11.5 and coflow 1 at 12. Counting the idle gap would make coflow 0 heavy at 10
    and change both times."""
    inst = Instance.from_coflows(
        [Coflow([(0, 0, 1.0, 0.0), (0, 0, 1.0, 10.0)]), Coflow([(0, 0, 1.0)], release=10.0)], 1
    )
    res = simulate(inst, FifoLM(threshold=1.5, local=local))
    assert res.coflow_completion.tolist() == [11.5, 12.0]
