"""Tests that the sparse D-CLAS path of :class:`Aalo` (``sparse=True``, the default) decides
exactly what the reference path (``sparse=False``) decides, event by event.

The sparse path (``heuristics/_dclas_jit.py``: ``allocate_dense(sparse=True)`` and
``collect_sparse``) clears only the rates that were positive and backfills only live cells at
unsaturated ports; it does the same floating-point operations in the same order as the
reference, so every decision must be bit-identical: the same flows with the same rates, the
same wake-up, the same demotions (D-CLAS: Chowdhury & Stoica, SIGCOMM 2015; Chowdhury, PhD
thesis, UC Berkeley 2015, §6.5.4; docs/aalo.md#pseudocode-4)."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import pytest
from aalo_lockstep import SMALL, bits, small_instances
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_, assert_array_equal, assert_equal

from coflowlab import Coflow, Instance, simulate
from coflowlab.heuristics.aalo import Aalo, _ActiveFlows
from coflowlab.instances import fb_like, find_fb_trace, read_benchmark, uniform
from coflowlab.policy import Decision, InstanceView, ObservedState
from coflowlab.simulator import instance_view


class Lockstep:
    """Runs a sparse and a reference :class:`Aalo` on the same observed states and asserts,
    at every event, bit-identical decisions and internal per-coflow state."""

    name: ClassVar[str] = "aalo"
    clairvoyant: ClassVar[bool] = False

    def __init__(self, fast: Aalo | None = None, **params: Any) -> None:
        self.fast = Aalo(sparse=True, **params) if fast is None else fast
        self.ref = Aalo(sparse=False, **params)
        self.checked = 0
        self.dense = False

    def reset(self, view: InstanceView) -> None:
        self.fast.reset(view)
        self.ref.reset(view)
        self.dense = bool(self.fast._flows.dense)

    def decide(self, state: ObservedState) -> Decision:
        a = self.fast.decide(state)
        b = self.ref.decide(state)
        assert_equal(a.rates is None, b.rates is None)
        if a.rates is not None:
            assert_array_equal(bits(a.rates), bits(b.rates))
        assert_equal(a.update is None, b.update is None)
        if a.update is not None and b.update is not None:
            assert_array_equal(a.update[0], b.update[0])
            assert_array_equal(bits(a.update[1]), bits(b.update[1]))
        assert_equal(a.wakeup, b.wakeup)
        assert_array_equal(bits(self.fast._rate_c), bits(self.ref._rate_c))
        assert_array_equal(bits(self.fast._sent), bits(self.ref._sent))
        assert_equal(self.fast.demotions, self.ref.demotions)
        self.checked += 1
        return a


def _run(inst: Instance, **params: Any) -> Lockstep:
    check = Lockstep(**params)
    result = simulate(inst, check)
    assert_(result.verified)
    assert_equal(check.checked, result.num_events)
    return check


PARAMS = [
    {},
    SMALL,
    {**SMALL, "weights": "strict"},
    {**SMALL, "weights": "equal", "delta": 0.0},
    {"num_queues": 1},
]


@pytest.mark.parametrize("params", PARAMS, ids=["default", "small", "strict", "equal", "fifo"])
@pytest.mark.parametrize("seed", range(3))
def test_sparse_equals_reference_on_uniform(seed: int, params: dict[str, Any]):
    """Tests bit-identical decisions on random uniform instances (dense matrices)."""
    inst = uniform(6, 14, density=0.5, release_rate=0.8, seed=700 + seed)
    check = _run(inst, **params)
    assert_(check.dense, "the instance should use the dense (matrix) allocation")


@pytest.mark.parametrize("params", PARAMS[:3], ids=["default", "small", "strict"])
@pytest.mark.parametrize("seed", range(2))
def test_sparse_equals_reference_on_fb_like(seed: int, params: dict[str, Any]):
    """Tests bit-identical decisions on FB-like shuffles (wide M×R coflows, many events)."""
    inst = fb_like(25, num_ports=20, seed=seed)
    check = _run(inst, **params)
    assert_(check.dense)


@settings(max_examples=60, deadline=None)
@given(
    inst=small_instances(),
    params=st.sampled_from(PARAMS),
    threshold=st.sampled_from([0.5, 2.0, 5.0]),
)
def test_sparse_equals_reference_on_random_instances(
    inst: Instance, params: dict[str, Any], threshold: float
):
    """Tests bit-identical decisions on random small instances: flows listed in any order
    (so some coflows' flows by index are not row-major and use the reference backfill),
    flows released after their coflow, idle gaps, several queues."""
    p = dict(params)
    if p.get("num_queues", 10) > 1:
        p["first_threshold"] = threshold
    _run(inst, **p)


def test_backfill_order_detection():
    """Tests which coflows may use the row-major backfill: those whose flows by index are
    their cells in row-major order (rows = ingress ports, columns = egress ports used)."""
    inst = Instance.from_coflows(
        [
            Coflow([(0, 0, 1.0), (0, 1, 1.0), (1, 0, 1.0)]),  # row-major
            Coflow([(1, 0, 1.0), (0, 1, 1.0)]),  # row 1 before row 0
            Coflow([(0, 1, 1.0), (0, 0, 1.0)]),  # column 1 before column 0
            Coflow([(1, 1, 1.0)]),
        ],
        2,
    )
    flows = _ActiveFlows(instance_view(inst, clairvoyant=False))
    assert_(flows.dense)
    assert_array_equal(flows.bf_rowmajor, [1, 0, 0, 1])


def test_reversed_flow_order_uses_reference_backfill():
    """Tests bit-identical decisions when every coflow lists its flows in reverse row-major
    order (no coflow may use the row-major backfill)."""
    base = uniform(5, 10, density=0.7, release_rate=1.0, seed=11)
    coflows = []
    for k in range(base.num_coflows):
        sel = np.flatnonzero(np.asarray(base.flow_coflow) == k)[::-1]
        flows = zip(base.flow_src[sel], base.flow_dst[sel], base.flow_size[sel], strict=True)
        coflows.append(
            Coflow(
                [(int(i), int(o), float(s)) for i, o, s in flows],
                release=float(base.coflow_release[k]),
            )
        )
    inst = Instance.from_coflows(coflows, 5)
    check = _run(inst, **SMALL)
    assert_(check.dense)
    assert_equal(int(check.fast._flows.bf_rowmajor.sum()), int((np.bincount(
        inst.flow_coflow, minlength=inst.num_coflows) <= 1).sum()))  # fmt: skip


def test_lockstep_detects_stale_rates():
    """Tests that the comparison can fail: a sparse path that forgets to clear the rates of
    the previous event (an injected bug) is caught."""

    class Stale(_ActiveFlows):
        def allocate(self, *args: Any) -> Any:
            self.npositive = 0  # the bug: positive rates of the last event are not cleared
            return super().allocate(*args)

    class Buggy(Aalo):
        def reset(self, view: InstanceView) -> None:
            super().reset(view)
            self._flows = Stale(view, True)

    inst = uniform(6, 14, density=0.5, release_rate=0.8, seed=700)
    with pytest.raises(AssertionError):
        simulate(inst, Lockstep(fast=Buggy(**SMALL), **SMALL))


def test_trace_prefix_equals_reference():
    """Tests bit-identical decisions and per-coflow completion times on the first 30 coflows
    of the Facebook trace (skipped when the trace is absent)."""
    path = find_fb_trace()
    if path is None:
        pytest.skip("FB2010-1Hr-150-0.txt not found (see README: 'Getting the trace')")
    inst = read_benchmark(path).subset(range(30))
    check = Lockstep()
    result = simulate(inst, check, record=False)
    assert_(result.verified and check.dense)
    assert_equal(check.checked, result.num_events)
    ref = simulate(inst, Aalo(sparse=False), record=False)
    assert_array_equal(bits(result.coflow_completion), bits(ref.coflow_completion))
