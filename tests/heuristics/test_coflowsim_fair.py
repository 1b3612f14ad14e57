"""Tests of CoflowSim's FAIR records: the compiled loop writing the schedule in its final form
and order (``kernels.fair`` with ``final``, taken over by ``Recorder.adopt`` and
``FluidSchedule._adopt``) against the reference path (rate changes through
``Recorder.add_raw``, then the recorder's sort), array by array and bit for bit, on small
random traces, generated FB-like instances, the offline mode and the first coflows of the
public trace."""

from __future__ import annotations

import numpy as np
import pytest
from coflowsim_traces import random_trace
from numpy.testing import assert_array_equal

from coflowlab import FluidSchedule
from coflowlab.heuristics.coflowsim.flowsim import FlowEngine
from coflowlab.heuristics.coflowsim.recorder import Recorder
from coflowlab.heuristics.coflowsim.rounding import EPOCH_MS, OFFLINE_EPOCH_MS, CoflowSimView
from coflowlab.instance import Instance
from coflowlab.instances import fb_like, read_benchmark

SIZES = [0.5, 1.0, 3.0, 8.0, 40.0, 300.0]
"""Reducer sizes of the random traces (MB)."""


def replay(inst: Instance, reference: bool, epoch: int) -> tuple[FlowEngine, FluidSchedule]:
    """FAIR's engine after its run on ``inst``, and its schedule."""
    engine = FlowEngine(CoflowSimView.from_instance(inst, epoch=epoch), "fair", epoch,
                        reference=reference)  # fmt: skip
    engine.run()
    return engine, engine.rec.schedule(engine.view.num_flows)


def assert_same_schedule(inst: Instance, epoch: int = EPOCH_MS) -> FluidSchedule:
    """Asserts that both paths give the same schedule and bookkeeping; returns it."""
    ref, s_ref = replay(inst, True, epoch)
    new, s_new = replay(inst, False, epoch)
    assert_array_equal(s_new.time, s_ref.time)
    assert_array_equal(s_new.flow, s_ref.flow)
    # bit for bit, so that a -0.0 for a 0.0 would show
    assert_array_equal(s_new.rate.view(np.int64), s_ref.rate.view(np.int64))
    assert new.rec.tol == ref.rec.tol
    assert_array_equal(new.rec.crawling, ref.rec.crawling)
    assert_array_equal(new.finish, ref.finish)
    assert new.num_events == ref.num_events
    assert new.rec.num_records == s_new.num_records
    return s_new


@pytest.mark.parametrize("seed", range(150))
def test_final_records_equal_reference_on_small_traces(seed):
    """Tests the compiled loop's final records against the reference path."""
    rng = np.random.default_rng(seed)
    epoch = OFFLINE_EPOCH_MS if seed % 5 == 0 else EPOCH_MS
    assert assert_same_schedule(random_trace(rng, SIZES), epoch).num_records > 0


@pytest.mark.parametrize("seed", range(3))
def test_final_records_equal_reference_on_fb_like(seed):
    """Tests both paths on generated FB-like instances (150 racks), online and offline, where
    flows change rates many times."""
    inst = fb_like(30, seed=seed)
    s = assert_same_schedule(inst)
    assert_same_schedule(inst, OFFLINE_EPOCH_MS)
    assert np.bincount(s.flow).max() > 10


@pytest.mark.trace
def test_final_records_equal_reference_on_trace_prefix(fb_trace):
    """Tests both paths on the first 60 coflows of the public trace."""
    assert_same_schedule(read_benchmark(fb_trace).subset(range(60)))


def test_adopted_schedule_is_not_copied():
    """Tests that the schedule holds the engine's arrays themselves (their memory, through
    read-only views), not copies."""
    inst = fb_like(5, seed=1)
    engine = FlowEngine(CoflowSimView.from_instance(inst), "fair", EPOCH_MS)
    engine.run()
    assert engine.rec._adopted is not None
    t, f, r, _ = engine.rec._adopted
    s = engine.rec.schedule(engine.view.num_flows)
    for mine, given in ((s.time, t), (s.flow, f), (s.rate, r)):
        assert mine.ctypes.data == given.ctypes.data and mine.shape == given.shape
        assert not mine.flags.writeable
    again = engine.rec.schedule(engine.view.num_flows)
    assert_array_equal(again.rate, s.rate)


def test_adopt_refuses_other_records():
    """Tests that a recorder takes either adopted records or records added piecewise."""
    one = np.zeros(1, dtype=np.int64)
    rec = Recorder(np.array([1048576.0]))
    rec.add_raw([0], [0], [1048576.0])
    with pytest.raises(ValueError, match="already holds"):
        rec.adopt(np.zeros(1), one, np.zeros(1), one, one, one, np.ones(1), np.ones(1))
    rec = Recorder(np.array([1048576.0]))
    rec.adopt(np.zeros(1), one, np.zeros(1), one, one, one, np.ones(1), np.ones(1))
    with pytest.raises(ValueError, match="adopted"):
        rec.add_last([1], [0], [1.0])


def test_fluid_schedule_adopt_falls_back_to_the_constructor():
    """Tests that unsorted records, or other dtypes, are copied and sorted as the constructor
    does, and that bad records are refused."""
    t, f, r = np.array([2.0, 0.0]), np.array([0, 0]), np.array([0.0, 1.0])
    s = FluidSchedule._adopt(1, t, f, r)
    assert s.time.tolist() == [0.0, 2.0] and s.rate.tolist() == [1.0, 0.0]
    assert t.flags.writeable
    s = FluidSchedule._adopt(1, np.array([0, 2]), np.array([0, 0], dtype=np.int32), r)
    assert s.time.dtype == np.float64 and s.flow.dtype == np.int64
    from coflowlab.exceptions import InvalidScheduleError

    with pytest.raises(InvalidScheduleError, match="flow 3"):
        FluidSchedule._adopt(2, np.array([0.0, 1.0]), np.array([0, 3]), np.ones(2))
    with pytest.raises(InvalidScheduleError, match="rate"):
        FluidSchedule._adopt(2, np.array([0.0, 1.0]), np.array([0, 1]), np.array([1.0, np.inf]))


def fair_by_quanta(engine: FlowEngine) -> tuple[set[tuple[int, int, float]], dict[int, tuple]]:
    """FAIR replayed quantum by quantum, as CoflowSim's loop runs it (the definition the
    compiled loop's jumps must reproduce): in each quantum every alive flow moves
    ``min(2**20 / n_dst, 2**20 / n_src, bytes left)``, ``n`` counting the alive flows at its
    ports, and ends once its bytes left are at most 1e-3. Returns the rate changes
    ``(quantum, flow, bytes per quantum)`` and, per flow, ``(last quantum, bytes moved there,
    rate there)``."""
    v = engine.view
    src, dst = v.flow_src.tolist(), v.flow_dst.tolist()
    rem = v.flow_bytes.tolist()
    rate = [0.0] * v.num_flows
    arrivals = engine._arrivals()
    changes: set[tuple[int, int, float]] = set()
    last: dict[int, tuple] = {}
    alive: list[int] = []
    q, ai = 0, 0
    while ai < len(arrivals) or alive:
        if not alive:
            q = max(q, arrivals[ai][0])
        if ai < len(arrivals) and arrivals[ai][0] == q:
            for j in arrivals[ai][1]:
                lo, hi = engine.job_range[j]
                alive.extend(range(lo, hi))
            ai += 1
        n_s = np.bincount([src[f] for f in alive], minlength=v.num_ports)
        n_r = np.bincount([dst[f] for f in alive], minlength=v.num_ports)
        for f in alive:
            new = min(1048576.0 / n_r[dst[f]], 1048576.0 / n_s[src[f]])
            if new != rate[f]:
                changes.add((q, f, new))
                rate[f] = new
        still = []
        for f in alive:
            moved = min(rate[f], rem[f])
            rem[f] -= moved
            if rem[f] <= 1e-3:
                last[f] = (q, moved, rate[f])
            else:
                still.append(f)
        alive = still
        q += 1
    return changes, last


@pytest.mark.parametrize("seed", range(60))
def test_fair_loop_equals_quantum_by_quantum_replay(seed, monkeypatch):
    """Tests the compiled loop's rate changes and last quanta against :func:`fair_by_quanta`,
    bit for bit, on small random traces (the loop jumps over whole stretches of quanta and
    drains bytes in closed form; the replay does one quantum at a time)."""
    from coflowlab.heuristics.coflowsim import kernels

    out: list[tuple] = []
    real = kernels.fair
    monkeypatch.setattr(kernels, "fair", lambda *a: out.append(real(*a)) or out[-1])
    inst = random_trace(np.random.default_rng(1000 + seed), SIZES)
    engine = FlowEngine(CoflowSimView.from_instance(inst), "fair", EPOCH_MS, reference=True)
    engine.run()
    rec_q, rec_f, rec_d, _, last_q, last_bytes, last_d, job_fin, _ = out[0]
    changes, last = fair_by_quanta(engine)
    got = set(zip(rec_q.astype(int).tolist(), rec_f.tolist(), rec_d.tolist(), strict=True))
    assert len(got) == len(rec_q)
    assert got == changes
    assert sorted(last) == np.flatnonzero(last_q >= 0).tolist()
    for f, (lq, moved, d) in last.items():
        assert (last_q[f], last_bytes[f], last_d[f]) == (lq, moved, d)
    fin = np.full(len(job_fin), -1)
    np.maximum.at(fin, engine.view.flow_job, last_q)
    assert_array_equal(job_fin, fin)
