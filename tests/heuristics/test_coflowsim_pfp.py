"""Tests of CoflowSim's PFP: the compiled loop (``coflowsim._pfp_jit.pfp``) against the Python
loop it was translated from (``FlowEngine(..., reference=True)``), record by record: the same
rate records in the same order, the same last quanta, coflow starts and finishes and event
counts, on many small random instances (few ports, equal sizes, coflows arriving while others
run, so that ties, preemptions and wake-ups occur), generated FB-like instances, the offline
mode and the first coflows of the public trace."""

from __future__ import annotations

import numpy as np
import pytest
from coflowsim_traces import random_trace
from numpy.testing import assert_array_equal

from coflowlab.heuristics.coflowsim._pfp_jit import pair_tables
from coflowlab.heuristics.coflowsim.flowsim import FlowEngine
from coflowlab.heuristics.coflowsim.rounding import EPOCH_MS, OFFLINE_EPOCH_MS, CoflowSimView
from coflowlab.instance import Instance
from coflowlab.instances import fb_like, read_benchmark

SIZES = [1.0, 2.0, 3.0, 8.0, 40.0, 300.0]
"""Reducer sizes of the random traces (MB)."""


def replay(inst: Instance, compiled: bool, epoch: int = EPOCH_MS) -> FlowEngine:
    """PFP's engine after its run on ``inst``."""
    engine = FlowEngine(CoflowSimView.from_instance(inst, epoch=epoch), "pfp", epoch,
                        reference=not compiled)  # fmt: skip
    engine.run()
    return engine


def assert_same_run(inst: Instance, epoch: int = EPOCH_MS) -> int:
    """Asserts that both loops give the same records and bookkeeping; returns the number of
    records."""
    ref, new = replay(inst, False, epoch), replay(inst, True, epoch)
    n = ref.view.num_flows
    s_ref, s_new = ref.rec.schedule(n), new.rec.schedule(n)
    # the records as written, in order (before the schedule sorts them by time)
    for a, b in ((ref.rec._t, new.rec._t), (ref.rec._f, new.rec._f), (ref.rec._r, new.rec._r)):
        assert_array_equal(np.concatenate(b), np.concatenate(a))
    assert_array_equal(s_new.time, s_ref.time)
    assert_array_equal(s_new.flow, s_ref.flow)
    assert_array_equal(s_new.rate, s_ref.rate)
    assert_array_equal(new.finish, ref.finish)
    assert_array_equal(new.start, ref.start)
    assert_array_equal(new.admitted, ref.admitted)
    assert new.num_events == ref.num_events
    assert new.active == ref.active == 0
    assert new.rec.tol == ref.rec.tol
    return s_ref.num_records


@pytest.mark.parametrize("seed", range(300))
def test_compiled_pfp_equals_python_loop_on_small_traces(seed):
    """Tests the compiled loop against the Python loop on a small random trace."""
    rng = np.random.default_rng(seed)
    inst = random_trace(rng, SIZES)
    epoch = OFFLINE_EPOCH_MS if seed % 5 == 0 else EPOCH_MS
    assert assert_same_run(inst, epoch) > 0


def test_small_traces_exercise_preemption():
    """Tests that the random traces above do preempt flows (a flow set to rate 0 while it has
    bytes left), so that the comparison covers the matching's changes, not only FIFO runs."""
    preempted = 0
    for seed in range(40):
        eng = replay(random_trace(np.random.default_rng(seed), SIZES), True)
        r = np.concatenate(eng.rec._r)
        f = np.concatenate(eng.rec._f)
        n_last = sum(len(x) for x in eng.rec._last_f)
        preempted += int(np.count_nonzero(r[: len(r) - n_last] == 0.0))
        assert np.unique(f).size == eng.view.num_flows
    assert preempted > 20


@pytest.mark.parametrize("seed", range(4))
def test_compiled_pfp_equals_python_loop_on_fb_like(seed):
    """Tests the two loops on generated FB-like instances (150 racks), online and offline."""
    inst = fb_like(25, seed=seed)
    assert_same_run(inst)
    assert_same_run(inst, OFFLINE_EPOCH_MS)


@pytest.mark.trace
def test_compiled_pfp_equals_python_loop_on_trace_prefix(fb_trace):
    """Tests the two loops on the first 60 coflows of the public trace."""
    inst = read_benchmark(fb_trace)
    assert_same_run(inst.subset(range(60)))


def test_pair_tables():
    """Tests the pair numbering: receiver-major, each sender's pairs by ascending receiver."""
    rng = np.random.default_rng(0)
    src, dst = rng.integers(0, 6, 200), rng.integers(0, 6, 200)
    flow_pair, l_off, s_off, s_recv, s_pair = pair_tables(src, dst, 6)
    keys = sorted(set(zip(dst.tolist(), src.tolist(), strict=True)))
    assert len(keys) == l_off[-1] == s_off[-1]
    for f in range(200):
        d, s = keys[flow_pair[f]]
        assert (d, s) == (dst[f], src[f])
        assert l_off[d] <= flow_pair[f] < l_off[d + 1]
    for s in range(6):
        recv = s_recv[s_off[s] : s_off[s + 1]]
        assert recv.tolist() == sorted({int(d) for d, s2 in keys if s2 == s})
        assert [keys[k] for k in s_pair[s_off[s] : s_off[s + 1]]] == [(d, s) for d in recv]
