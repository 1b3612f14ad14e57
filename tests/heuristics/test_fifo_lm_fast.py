"""Tests that FIFO-LM's group 0 kept per port pair (``FifoLM(fast=True)``, the default:
``g0_fill`` in ``heuristics/_dclas_jit.py``) decides exactly what the per-flow computation
(``fast=False``, the reference) decides, event by event: the same flows and rates in the
update (same order, same bits), the same wake-up, the same bytes per (coflow, port) pair and
the same rates kept between events.

Group 0 is FIFO-LM's multiplexed class (Dogar et al., Baraat, SIGCOMM 2014; as simulated in
Chowdhury, PhD thesis, UC Berkeley 2015, §6.3.1, §6.8.2; docs/aalo.md#fifo-lm)."""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np
import pytest
from aalo_lockstep import bits, small_instances
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_, assert_array_equal, assert_equal
from test_fifo_lm import INSTANCES as FIFO_LM_INSTANCES

from coflowlab import Instance, simulate
from coflowlab.heuristics.dclas_kernels import kernels
from coflowlab.heuristics.fifo_lm import FifoLM
from coflowlab.instances import fb_like, find_fb_trace, read_benchmark
from coflowlab.policy import Decision, InstanceView, ObservedState


class Lockstep:
    """Runs a fast and a reference :class:`FifoLM` on the same observed states and asserts,
    at every event, bit-identical decisions and kept state. The simulator applies the
    reference's decision."""

    name: ClassVar[str] = "fifo-lm"
    clairvoyant: ClassVar[bool] = False

    def __init__(self, threshold: float, fast: FifoLM | None = None) -> None:
        self.fast = FifoLM(threshold=threshold) if fast is None else fast
        self.ref = FifoLM(threshold=threshold, fast=False)
        self.checked = 0
        self.updated = 0

    def reset(self, view: InstanceView) -> None:
        self.fast.reset(view)
        self.ref.reset(view)

    def decide(self, state: ObservedState) -> Decision:
        a = self.fast.decide(state)
        b = self.ref.decide(state)
        assert a.update is not None and b.update is not None
        assert_array_equal(a.update[0], b.update[0])
        assert_array_equal(bits(a.update[1]), bits(b.update[1]))
        assert_equal(a.wakeup, b.wakeup)
        ga, gb = self.fast._groups, self.ref._groups
        assert ga is not None and gb is not None
        assert_array_equal(bits(ga.sent), bits(gb.sent))
        assert_array_equal(bits(ga.rate), bits(gb.rate))
        assert_array_equal(ga.pos, gb.pos)
        assert_array_equal(ga.served, gb.served)
        for g in (ga, gb):
            assert_kept_counts(g, self.fast._heavy_bound())
        self.checked += 1
        self.updated += len(b.update[0])
        return b


def assert_kept_counts(g: Any, bound: float) -> None:
    """Asserts the counts and lists ``_Groups`` keeps between events against the flows
    themselves: alive flows per (ingress, egress) port pair; with group 0 kept per pair,
    each pair's flows of group 0 first in its list (and the positions the inverse of the
    list); the listed positive flows in index order, every one alive with a positive rate,
    and every such flow with a light (coflow, port) pair among them."""
    alive = g.alive
    m = g.link_alive.shape[0]
    links = np.zeros((m, m), dtype=np.int64)
    np.add.at(links, (g.pa[alive], g.pb[alive] - m), 1)
    assert_array_equal(g.link_alive, links)
    g0 = g.g0
    if g0.on:
        assert_array_equal(g0.cls_flows[g0.cls_pos], np.arange(len(alive)))
        member = alive & g.served
        for kk in np.flatnonzero(g0.cnt):
            lo = g0.cls_ptr[kk]
            first = g0.cls_flows[lo : lo + g0.cnt[kk]]
            rest = g0.cls_flows[lo + g0.cnt[kk] : g0.cls_ptr[kk + 1]]
            assert_(member[first].all() and not member[rest].any())
    pos = g.pos
    assert_(np.all(np.diff(pos) > 0) and alive[pos].all() and (g.rate[pos] > 0).all())
    light = ~((g.sent[g.pin] >= bound) & (g.sent[g.pout] >= bound))
    assert_(np.isin(np.flatnonzero(alive & (g.rate > 0) & light), pos).all())


INSTANCES = {
    **FIFO_LM_INSTANCES,
    "fb_like_dense": lambda: fb_like(40, num_ports=8, seed=3),
}

THRESHOLDS = [0.0, 5.0, 20.0, 1000.0, math.inf]


@pytest.mark.parametrize("threshold", THRESHOLDS)
@pytest.mark.parametrize("name", sorted(INSTANCES))
def test_fast_group0_decides_what_the_per_flow_computation_decides(name: str, threshold: float):
    """Tests, at every event of generated instances, that the group 0 kept per port pair
    gives the per-flow computation's update, wake-up, bytes per pair and rates, bit for bit."""
    check = Lockstep(threshold)
    result = simulate(INSTANCES[name](), check, verify_schedule=False, record=False)
    assert_equal(check.checked, result.num_events)
    assert_(check.updated > 0)


@settings(max_examples=120, deadline=None)
@given(
    inst=small_instances(repeated_pairs=True),
    threshold=st.sampled_from([0.0, 1.0, 3.0, 8.0, 1000.0]),
)
def test_fast_group0_on_random_small_instances(inst: Instance, threshold: float):
    """Tests the lockstep on random instances with several flows per port pair (shared
    pairs are what group 0's counts are kept by), releases and repeated thresholds."""
    check = Lockstep(threshold)
    result = simulate(inst, check, verify_schedule=False, record=False)
    assert_equal(check.checked, result.num_events)


def test_fast_group0_on_the_first_trace_coflows():
    """Tests the lockstep on the first 30 coflows of the Facebook trace (if present)."""
    path = find_fb_trace()
    if path is None:
        pytest.skip("Facebook trace not found")
    inst = read_benchmark(path).subset(range(30))
    check = Lockstep(1000.0)
    result = simulate(inst, check, verify_schedule=False, record=False)
    assert_equal(check.checked, result.num_events)
    assert_(check.updated > 0)


def test_lockstep_catches_a_perturbed_group0_rate(monkeypatch: Any):
    """Tests that the lockstep can fail: the fast policy's update with one rate changed by
    one unit in the last place is caught."""

    class Perturbed(FifoLM):
        def decide(self, state: ObservedState) -> Decision:
            d = super().decide(state)
            assert d.update is not None
            flows, rates = d.update
            if len(rates):
                rates = rates.copy()
                rates[0] = np.nextafter(rates[0], np.inf)
            return Decision(update=(flows, rates), wakeup=d.wakeup)

    check = Lockstep(5.0, fast=Perturbed(threshold=5.0))
    with pytest.raises(AssertionError):
        simulate(INSTANCES["fb_like"](), check, verify_schedule=False, record=False)


def test_fast_group0_after_the_allocation_from_scratch(monkeypatch: Any):
    """Tests the lockstep when every event also runs the allocation from scratch (more
    rounds, which overwrites the rates kept and the per-pair rate sums; forced here): the
    next event then compares every flow of group 0 again."""
    step = kernels()["fifo_step"]
    calls = []

    def always_more(*args: Any) -> Any:
        calls.append(1)
        return (*step(*args)[:4], True)

    monkeypatch.setitem(kernels(), "fifo_step", always_more)
    for name in ("online", "fb_like"):
        check = Lockstep(5.0)
        result = simulate(INSTANCES[name](), check, verify_schedule=False, record=False)
        assert_equal(check.checked, result.num_events)
    assert_(len(calls) > 0)


@settings(max_examples=200, deadline=None)
@given(
    m=st.integers(1, 6),
    seed=st.integers(0, 2**32 - 1),
    saturated=st.floats(0.0, 1.0),
)
def test_could_grow_asks_port_pairs_what_a_scan_of_the_flows_asks(
    m: int, seed: int, saturated: float
):
    """Tests ``could_grow`` (is there an alive flow with both ports above the saturation
    tolerance?) against that question asked of every flow, on random residual capacities
    (some exactly at or just above the tolerance) and random alive flows."""
    rng = np.random.default_rng(seed)
    cap = rng.uniform(0.5, 2.0, 2 * m)
    eps = 1e-12 * cap
    res = np.where(rng.random(2 * m) < saturated, 0.0, rng.uniform(0.0, 1.0, 2 * m))
    edge = rng.random(2 * m) < 0.2
    res[edge] = eps[edge] * rng.choice([1.0, 2.0], int(edge.sum()))
    nf = int(rng.integers(0, 3 * m * m + 1))
    pa = rng.integers(0, m, nf)
    pb = m + rng.integers(0, m, nf)
    links = np.zeros((m, m), dtype=np.int64)
    np.add.at(links, (pa, pb - m), 1)
    scan = bool(np.any((res[pa] > eps[pa]) & (res[pb] > eps[pb])))
    assert_equal(kernels()["could_grow"](res, eps, links), scan)
