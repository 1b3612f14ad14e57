"""Tests that the incremental uncoordinated D-CLAS path (``AaloUncoordinated(incremental=True)``,
the default) decides exactly what the reference path (``incremental=False``) decides, event by
event.

The incremental path (``heuristics/_dclas_jit.py``: ``unc_update`` and ``unc_allocate``) keeps
the active flows, the per-(coflow, port) bytes and counts between events, checks only the pairs
whose bytes changed or that gained a flow against the thresholds, recomputes the FIFO order
only when the set of active coflows changes and names only the flows whose rate changed. It
does the same floating-point operations in the same order as the reference, so every decision
must be bit-identical: the same rates, the same wake-up, the same bytes per pair, the same
per-port queues and demotions (decentralised D-CLAS: Chowdhury, PhD thesis, UC Berkeley 2015,
§6.3.2, §6.8.2; docs/aalo.md#uncoordinated)."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import pytest
from aalo_lockstep import SMALL, bits, small_instances
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_, assert_array_equal, assert_equal

from coflowlab import Coflow, Instance, simulate
from coflowlab.heuristics.aalo import AaloUncoordinated
from coflowlab.instances import fb_like, find_fb_trace, read_benchmark, uniform
from coflowlab.policy import Decision, InstanceView, ObservedState


class Lockstep:
    """Runs an incremental and a reference :class:`AaloUncoordinated` on the same observed
    states and asserts, at every event, bit-identical decisions and internal state. The
    simulator applies the reference's decision."""

    name: ClassVar[str] = "aalo-uncoordinated"
    clairvoyant: ClassVar[bool] = False

    def __init__(self, fast: AaloUncoordinated | None = None, **params: Any) -> None:
        self.fast = AaloUncoordinated(incremental=True, **params) if fast is None else fast
        self.ref = AaloUncoordinated(incremental=False, **params)
        self.checked = 0
        self.demoted = 0
        self._given: np.ndarray = np.zeros(0)

    def reset(self, view: InstanceView) -> None:
        self.fast.reset(view)
        self.ref.reset(view)
        self._given = np.zeros(view.num_flows)  # the rates the simulator holds

    def decide(self, state: ObservedState) -> Decision:
        a = self.fast.decide(state)
        b = self.ref.decide(state)
        flows = np.asarray(state.flows)
        assert_(a.rates is None and a.update is not None and b.rates is not None)
        assert a.update is not None and b.rates is not None
        # the update names exactly the flows whose rate changed, in index order
        self._given[np.asarray(state.completed, dtype=np.int64)] = 0.0
        rates = np.asarray(b.rates)
        differ = rates != self._given[flows]  # what the simulator would change
        assert_array_equal(a.update[0], flows[differ])
        assert_array_equal(bits(a.update[1]), bits(rates[differ]))
        self._given[flows] = rates
        lf = self.fast._lf
        assert lf is not None
        assert_array_equal(lf.act, flows)
        assert_array_equal(bits(lf.rate[flows]), bits(b.rates))
        assert_equal(a.wakeup, b.wakeup)
        assert self.fast._local is not None and self.ref._local is not None
        assert_array_equal(bits(self.fast._local.bytes), bits(self.ref._local.bytes))
        assert_array_equal(self.fast.pair_queue, self.ref.pair_queue)
        # the demotions of this event (plain list comparison: assert_equal recurses slowly)
        new = slice(self.demoted, None)
        assert_(self.fast.demotions[new] == self.ref.demotions[new], "demotions differ")
        assert_equal(len(self.fast.demotions), len(self.ref.demotions))
        self.demoted = len(self.ref.demotions)
        self.checked += 1
        return b


def _run(inst: Instance, **params: Any) -> Lockstep:
    check = Lockstep(**params)
    result = simulate(inst, check)
    assert_(result.verified)
    assert_equal(check.checked, result.num_events)
    return check


def _same_result(inst: Instance, **params: Any) -> None:
    """Whole simulations: the same events, records and completion times, to the bit."""
    fast = simulate(inst, AaloUncoordinated(incremental=True, **params), record=False)
    ref = simulate(inst, AaloUncoordinated(incremental=False, **params), record=False)
    assert_(fast.verified and ref.verified)
    assert_equal((fast.num_events, fast.num_records), (ref.num_events, ref.num_records))
    assert_array_equal(bits(fast.flow_completion), bits(ref.flow_completion))
    assert_array_equal(bits(fast.coflow_completion), bits(ref.coflow_completion))


PARAMS = [
    {},
    SMALL,
    {**SMALL, "weights": "strict"},
    {**SMALL, "weights": "equal"},
    {"num_queues": 1},
]
IDS = ["default", "small", "strict", "equal", "fifo"]


@pytest.mark.parametrize("params", PARAMS, ids=IDS)
@pytest.mark.parametrize("seed", range(3))
def test_incremental_equals_reference_on_uniform(seed: int, params: dict[str, Any]):
    """Tests bit-identical decisions on random uniform instances."""
    inst = uniform(6, 14, density=0.5, release_rate=0.8, seed=700 + seed)
    check = _run(inst, **params)
    if params.get("num_queues", 10) > 1 and params.get("first_threshold", 10.0) < 10:
        assert_(check.demoted > 0, "the instance should see per-port demotions")
    _same_result(inst, **params)


@pytest.mark.parametrize("params", PARAMS[:3], ids=IDS[:3])
@pytest.mark.parametrize("seed", range(2))
def test_incremental_equals_reference_on_fb_like(seed: int, params: dict[str, Any]):
    """Tests bit-identical decisions on FB-like shuffles (wide M×R coflows, many events)."""
    inst = fb_like(25, num_ports=20, seed=seed)
    _run(inst, **params)


def test_incremental_equals_reference_with_dependencies():
    """Tests bit-identical decisions with a multi-stage DAG (CoflowId FIFO order)."""
    c = [Coflow([(0, 1, 4.0), (1, 0, 6.0)]), Coflow([(1, 1, 8.0)], release=0.5)]
    c += [Coflow([(0, 0, 3.0), (1, 1, 2.0)], release=0.2), Coflow([(0, 1, 5.0)], release=1.0)]
    inst = Instance.from_coflows(c, 2, dependencies=[(0, 1), (1, 3), (2, 3)])
    _run(inst, **SMALL)
    _same_result(inst, **SMALL)


@settings(max_examples=60, deadline=None)
@given(
    inst=small_instances(repeated_pairs=True, releases=(0.0, 0.5, 1.0, 4.0, 40.0)),
    params=st.sampled_from(PARAMS),
    threshold=st.sampled_from([0.5, 2.0, 5.0]),
)
def test_incremental_equals_reference_on_random_instances(
    inst: Instance, params: dict[str, Any], threshold: float
):
    """Tests bit-identical decisions on random small instances: several flows per port pair,
    flows released after their coflow, idle gaps (the fabric drains before a late coflow),
    several queues."""
    p = dict(params)
    if p.get("num_queues", 10) > 1:
        p["first_threshold"] = threshold
    _run(inst, **p)


def _resumed_pair() -> Instance:
    """A pair that reaches Q_1^hi = 5 exactly when its only flow completes (so it is not
    checked then: it has no active flow) and gains a flow later, with a competitor."""
    c0 = Coflow([(0, 0, 5.0), (0, 1, 4.0, 10.0)])
    return Instance.from_coflows([c0, Coflow([(0, 1, 6.0)], release=9.0)], 2)


def test_resumed_pair_is_demoted():
    """Tests the case the incremental path must not miss: a pair whose bytes reached a
    threshold while it had no active flow is demoted when it gains one."""
    check = _run(_resumed_pair(), **SMALL)
    assert_((10.0, 0, 0, 1) in check.ref.demotions, check.ref.demotions)
    _same_result(_resumed_pair(), **SMALL)


def test_lockstep_detects_skipped_threshold_checks():
    """Tests that the comparison can fail: an incremental path that never checks the pairs
    that only gained a flow (an injected bug: a pair of a resumed coflow keeps a stale queue)
    is caught."""

    class Buggy(AaloUncoordinated):
        _prev_bytes: np.ndarray

        def _decide_incremental(self, state: ObservedState, lf: Any) -> Decision:
            real = self._local
            assert real is not None
            saved = self.pair_queue.copy()
            decision = super()._decide_incremental(state, lf)
            # the bug: forget the demotions of pairs that sent nothing since the last event
            moved = np.flatnonzero(saved != self.pair_queue)
            still = moved[real.bytes[moved] == self._prev_bytes[moved]]
            self.pair_queue[still] = saved[still]
            self._prev_bytes = real.bytes.copy()
            return decision

        def reset(self, view: InstanceView) -> None:
            super().reset(view)
            assert self._local is not None
            self._prev_bytes = self._local.bytes.copy()

    with pytest.raises(AssertionError):
        simulate(_resumed_pair(), Lockstep(fast=Buggy(**SMALL), **SMALL))


def test_trace_prefix_equals_reference():
    """Tests bit-identical decisions and completion times on the first 30 coflows of the
    Facebook trace (skipped when the trace is absent)."""
    path = find_fb_trace()
    if path is None:
        pytest.skip("FB2010-1Hr-150-0.txt not found (see README: 'Getting the trace')")
    inst = read_benchmark(path).subset(range(30))
    check = Lockstep()
    result = simulate(inst, check, record=False)
    assert_(result.verified)
    assert_equal(check.checked, result.num_events)
    assert_(check.demoted > 0)
    _same_result(inst)
