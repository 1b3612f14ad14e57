"""Checks shared by the tests of the compiled class engines (fair, pfp, hug, sincronia-online)
against the per-flow simulator, on pytest's ``pythonpath`` like :mod:`instance_kinds`.

An engine writes class records ``(time, class, speed)`` (``docs/rate-classes.md``); the
reference is ``simulate(inst, policy, record=True)``, whose records are per flow. The checks
here compare the two: the events, the completion times, the records (to the bit where a class
is one flow, less the rate-0 record the per-flow path writes at each completion), the rates
as piecewise-constant functions of time, how records are handed out in chunks, and the errors.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from hypothesis import strategies as st

from coflowlab import Fabric, Instance, simulate
from coflowlab.class_simulation import ClassEngine, ClassRun
from coflowlab.constants import TOL
from coflowlab.instances import fb_like, spread_flow_starts, uniform
from coflowlab.simulator import SimulationError, SimulationResult

Records = tuple[np.ndarray, np.ndarray, np.ndarray]
Chunks = list[Records]
Collect = Callable[..., tuple[ClassRun, Records, Chunks]]


def collect_records(engine: ClassEngine, **kwargs: Any) -> tuple[ClassRun, Records, Chunks]:
    """Runs ``engine.run(sink, **kwargs)``; returns its result, its records (copied) and the
    chunks, checking that each chunk is in time order and no time group is split between
    chunks."""
    chunks: Chunks = []

    def sink(t: np.ndarray, c: np.ndarray, r: np.ndarray) -> None:
        assert len(t) == len(c) == len(r) > 0
        assert np.all(np.diff(t) >= 0)
        if chunks:  # times non-decreasing across calls, and no time group split
            assert t[0] > chunks[-1][0][-1]
        chunks.append((t.copy(), c.copy(), r.copy()))

    run = engine.run(sink, **kwargs)
    if not chunks:
        empty = np.zeros(0)
        return run, (empty, np.zeros(0, dtype=np.int64), empty), chunks
    recs = (
        np.concatenate([ch[0] for ch in chunks]),
        np.concatenate([ch[1] for ch in chunks]),
        np.concatenate([ch[2] for ch in chunks]),
    )
    return run, recs, chunks


def time_tolerance(ref: SimulationResult, tol: float = TOL) -> float:
    """The absolute tolerance on completion times: ``tol`` relative to the horizon."""
    horizon = float(np.nanmax(ref.flow_completion)) if len(ref.flow_completion) else 0.0
    return tol * max(1.0, horizon)


def assert_same_records(a: Records, b: Records) -> None:
    """The two record streams are equal to the bit."""
    for x, y in zip(a, b, strict=True):
        assert np.array_equal(x, y)


def without_completion_records(sched: Any, nf: int) -> Records:
    """The per-flow records less each flow's last one (the rate-0 record of its completion)."""
    last = np.full(nf, -1, dtype=np.int64)
    last[sched.flow] = np.arange(len(sched.flow))  # the last index of each flow wins
    assert np.all(last >= 0) and np.all(sched.rate[last] == 0.0)
    keep = np.ones(len(sched.flow), dtype=bool)
    keep[last] = False
    return sched.time[keep], sched.flow[keep], sched.rate[keep]


def check_singleton_records(
    inst: Instance, run: ClassRun, recs: Records, ref: SimulationResult, *, equal_nan=False
) -> None:
    """With one class per flow: the reference's events, its completion times (the
    simulator's own, not the verifier's: the same floats) and its records to the bit, less
    the completion records."""
    assert run.num_events == ref.num_events
    assert np.array_equal(run.flow_completion, ref.flow_completion, equal_nan=equal_nan)
    assert np.array_equal(run.coflow_completion, ref.coflow_completion, equal_nan=equal_nan)
    assert run.num_records == len(recs[0]) == ref.num_records - inst.num_flows
    assert_same_records(recs, without_completion_records(ref.schedule, inst.num_flows))


def check_rate_functions(
    inst: Instance,
    flow_class: np.ndarray,
    run: ClassRun,
    recs: Records,
    ref: SimulationResult,
    *,
    delta: float = 0.0,
    rtol: float = 0.0,
) -> None:
    """Every flow's rate under the class records (a flow sends at its class's speed from its
    release until it completes, 0 before the class's first record) equals the reference's at
    every reference record time ``tau``, after all records of that time: on the engine's
    side, the records, releases and completions up to ``tau + delta`` (``delta`` > 0 where
    the event times differ by rounding; 0 compares the times exactly, as a window would merge
    distinct times); the rates equal to the bit, or within ``rtol``."""
    sched = ref.schedule
    assert sched is not None
    order = np.argsort(sched.time, kind="stable")
    st_, sf, sr = sched.time[order], sched.flow[order], sched.rate[order]
    times, classes, speeds = recs
    ref_rate = np.zeros(inst.num_flows)
    speed = np.zeros(max(int(flow_class.max(initial=-1)), int(classes.max(initial=-1))) + 1)
    release = inst.flow_release
    k = j = 0
    while k < len(st_):
        tau = st_[k]
        while k < len(st_) and st_[k] == tau:
            ref_rate[sf[k]] = sr[k]
            k += 1
        while j < len(times) and times[j] <= tau + delta:
            speed[classes[j]] = speeds[j]
            j += 1
        active = (release <= tau + delta) & ~(run.flow_completion <= tau + delta)
        mine = np.where(active, speed[flow_class], 0.0)
        if rtol:
            np.testing.assert_allclose(mine, ref_rate, rtol=rtol, atol=0, err_msg=f"t={tau}")
        else:
            np.testing.assert_array_equal(mine, ref_rate, err_msg=f"t={tau}")


def check_verified_class_path(inst: Instance, policy: Any, ref: SimulationResult) -> None:
    """``simulate(engine="classes")`` takes the engine and verifies its records; the
    verifier's completions agree with the reference's within its tolerance."""
    res = simulate(inst, policy, record=False, engine="classes")
    assert res.engine == "classes" and res.verified and res.num_events == ref.num_events
    atol = time_tolerance(ref)
    np.testing.assert_allclose(res.flow_completion, ref.flow_completion, rtol=0, atol=atol)


def check_tiny_chunks(
    records: Collect, engine: Callable[[], ClassEngine], inst: Instance, max_chunk: int
) -> None:
    """A tiny chunk (one event per call) gives the same records as one chunk, never
    splitting a time group (checked in the sink), with chunks of at most ``max_chunk``
    records; progress is reported in order up to the last event. ``records(inst, **kwargs)``
    runs a fresh engine; ``engine()`` makes one for ``inst``."""
    big_run, big, big_chunks = records(inst)
    small_run, small, small_chunks = records(inst, chunk=1)
    assert len(big_chunks) == 1 and len(small_chunks) > 10
    assert max(len(ch[0]) for ch in small_chunks) <= max_chunk
    assert_same_records(big, small)
    assert big_run.num_events == small_run.num_events
    assert np.array_equal(big_run.flow_completion, small_run.flow_completion)
    seen: list[int] = []
    engine().run(lambda *a: None, chunk=1, progress=lambda e, t: seen.append(e))
    assert seen == sorted(seen) and seen[-1] == big_run.num_events


def check_progress_pauses(
    monkeypatch: pytest.MonkeyPatch,
    module: ModuleType,
    records: Collect,
    inst: Instance,
    *,
    min_events: int = 100,
) -> None:
    """With a progress callback the loop pauses every ``module.PROGRESS_EVENTS`` events (set
    to 7), the records and completions unchanged, and reports the events in order up to the
    last; the run has more than ``min_events`` events."""
    whole_run, whole, _ = records(inst)
    monkeypatch.setattr(module, "PROGRESS_EVENTS", 7)
    seen: list[tuple[int, float]] = []
    run, recs, _ = records(inst, progress=lambda e, t: seen.append((e, t)))
    events = [e for e, _ in seen]
    assert events[-1] == run.num_events == whole_run.num_events > min_events
    assert max(np.diff([0, *events])) <= 7 and len(seen) >= run.num_events // 7
    assert [t for _, t in seen] == sorted(t for _, t in seen)
    assert_same_records(whole, recs)
    assert np.array_equal(run.flow_completion, whole_run.flow_completion)


def assert_same_error(reference: Callable[[], Any], mine: Callable[[], Any]) -> str:
    """Both calls raise :class:`SimulationError` with the same message; returns it."""
    with pytest.raises(SimulationError) as want:
        reference()
    with pytest.raises(SimulationError) as got:
        mine()
    assert str(got.value) == str(want.value)
    return str(got.value)


def check_same_runs(first: ClassRun, second: ClassRun) -> None:
    """Two runs of one engine give the same events, record count and completions."""
    assert first.num_events == second.num_events and first.num_records == second.num_records
    assert np.array_equal(first.flow_completion, second.flow_completion)


def late_near_tie(t0: float = 1e4) -> Instance:
    """Two flows released at ``t0`` whose completions differ by less than the tolerance
    relative to the time (``completion_threshold``): they complete at one event."""
    return Instance(4, [0, 1], [0, 1], [0, 1], [1.0, 1.0 + 5e-6], coflow_release=[t0, t0])


def simultaneous() -> Instance:
    """Ties: equal sizes on one pair released together and at the same times as
    completions."""
    return Instance(
        2,
        [0, 0, 0, 1, 1, 2, 2],
        [0, 0, 1, 0, 1, 0, 1],
        [0, 0, 1, 0, 1, 1, 0],
        [2.0, 2.0, 4.0, 1.0, 3.0, 2.0, 2.0],
        coflow_release=[0.0, 4.0, 4.0],
    )


ENGINE_INSTANCES: dict[str, Callable[[], Instance]] = {
    "simultaneous": simultaneous,
    "uniform-ties": lambda: uniform(3, 12, density=0.6, sizes=(1, 3), release_rate=2.0, seed=5),
    "one-port": lambda: uniform(1, 6, release_rate=0.5, seed=8),
    "fb_like": lambda: fb_like(20, num_ports=10, seed=3),
    "fb_like-12": lambda: fb_like(30, num_ports=12, seed=3),
    "fb_like-spread": lambda: spread_flow_starts(fb_like(12, num_ports=8, seed=4), 50.0, seed=4),
    "capacity-2": lambda: uniform(4, 8, density=0.5, release_rate=0.7, seed=9).replace(
        fabric=Fabric(4, 2.0, 2.0)
    ),
}
"""Generated instances the engines' suites share, by name (each picks its own)."""


def engine_instances(*names: str) -> dict[str, Callable[[], Instance]]:
    """The named entries of :data:`ENGINE_INSTANCES`."""
    return {name: ENGINE_INSTANCES[name] for name in names}


@st.composite
def small_instances(
    draw: st.DrawFn, releases: tuple[float, ...] = (0.0, 1.0, 2.0, 3.5), per_port: bool = False
) -> Instance:
    """Random instances of up to 4 ports, 14 flows and 5 coflows, on small grids of sizes,
    release times and capacities (ties everywhere): one capacity for every port, or with
    ``per_port`` one for each port and side."""
    m = draw(st.integers(1, 4))
    nf = draw(st.integers(1, 14))
    n = draw(st.integers(1, min(nf, 5)))
    labels = sorted(draw(st.lists(st.integers(0, n - 1), min_size=nf, max_size=nf)))
    coflow = np.unique(labels, return_inverse=True)[1]  # no empty coflow
    n = int(coflow.max()) + 1
    src = draw(st.lists(st.integers(0, m - 1), min_size=nf, max_size=nf))
    dst = draw(st.lists(st.integers(0, m - 1), min_size=nf, max_size=nf))
    size = draw(st.lists(st.sampled_from([1.0, 2.0, 3.0, 0.5, 7.25]), min_size=nf, max_size=nf))
    release = draw(st.lists(st.sampled_from(list(releases)), min_size=n, max_size=n))
    if per_port:
        caps = st.lists(st.sampled_from([1.0, 0.5, 2.0, 3.0]), min_size=m, max_size=m)
        fabric = Fabric(m, np.array(draw(caps)), np.array(draw(caps)))
    else:
        cap = draw(st.sampled_from([1.0, 0.5, 3.0]))
        fabric = Fabric(m, cap, cap)
    return Instance(fabric, coflow, src, dst, size, coflow_release=release)
