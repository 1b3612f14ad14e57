"""Tests that the compiled fluid check (the default) agrees with the vectorized reference.

The two implementations share nothing but the rules: the reference sorts each chunk by flow and
by port and works with array operations; the compiled pass walks the records once in time order
(:mod:`coflowlab._verifier_jit`). They are compared on simulated schedules of every family of
policy, on random record streams (negative rates, several records of one flow at one time,
flows sending before their release, over capacity), and on schedules mutated to break one rule
each: a capacity violation, a byte mismatch, an early start, a wrong completion time.
"""

from __future__ import annotations

import numpy as np
import pytest

import coflowlab as cl
from coflowlab.heuristics import make_policy
from coflowlab.instances import fb_like, uniform
from coflowlab.verifier import FluidVerifier, ViolationKind, _verify_fluid


def both(inst: cl.Instance, sched: cl.FluidSchedule) -> tuple[cl.VerificationReport, ...]:
    """The report of each implementation, on the whole schedule."""
    return tuple(_verify_fluid(inst, sched, cl.TOL, 100, compiled=c) for c in (True, False))


def assert_same(a: cl.VerificationReport, b: cl.VerificationReport) -> None:
    """Same counts by kind, same kept violations (as sets), same completion times."""
    assert a.counts == b.counts
    key = lambda v: (v.kind, v.flow, v.coflow, v.port, v.side, v.start, v.end)  # noqa: E731
    if all(c < 100 for c in a.counts.values()):
        assert sorted(map(key, a.violations), key=repr) == sorted(map(key, b.violations), key=repr)
    tol = 10 * max(a.time_tol, b.time_tol)
    np.testing.assert_array_equal(np.isnan(a.flow_completion), np.isnan(b.flow_completion))
    np.testing.assert_allclose(a.flow_completion, b.flow_completion, rtol=0, atol=tol)
    np.testing.assert_allclose(a.coflow_completion, b.coflow_completion, rtol=0, atol=tol)


POLICIES = ["fair", "fifo", "varys", "pfp", "aalo", "hug", "fifo-lm", "coflex"]


@pytest.fixture(scope="module")
def instances() -> list[cl.Instance]:
    """Two small FB-like workloads (MB, ms) and a dense uniform one with arrivals."""
    return [fb_like(12, seed=3), fb_like(12, seed=4), uniform(5, 8, release_rate=1.0, seed=2)]


@pytest.mark.parametrize("policy", POLICIES)
def test_compiled_matches_reference_on_simulated_schedules(
    policy: str, instances: list[cl.Instance]
) -> None:
    """Tests that both implementations find the simulated schedules feasible with the same
    completion times, and that these are the ones the simulator reports."""
    for inst in instances:
        res = cl.simulate(inst, make_policy(policy, inst), verify_schedule=False)
        assert res.schedule is not None
        a, b = both(inst, res.schedule)
        assert a.feasible, a.summary()
        assert_same(a, b)
        # the simulator's own event times, computed a third way
        np.testing.assert_allclose(
            a.coflow_completion, res.coflow_completion, rtol=0, atol=10 * a.time_tol
        )


def random_records(
    inst: cl.Instance, rng: np.random.Generator, n: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Records at a few distinct times (so many share a time), some flows repeated at one
    time, rates mostly feasible-looking, some negative, some large, many zero."""
    times = np.sort(rng.choice(np.linspace(0.0, 20.0, 41), size=n))
    flows = rng.integers(0, inst.num_flows, size=n)
    rates = rng.choice([0.0, 0.0, 0.1, 0.25, 0.5, 1.0, 1.5, -0.2], size=n)
    return times, flows, rates


@pytest.mark.parametrize("seed", range(12))
def test_compiled_matches_reference_on_random_records(seed: int) -> None:
    """Tests agreement on arbitrary (mostly infeasible) record streams, fed whole and in
    chunks of whole time groups."""
    rng = np.random.default_rng(seed)
    inst = uniform(4, 4, release_rate=0.5, seed=seed)
    t, f, r = random_records(inst, rng, 300)
    if seed % 3 == 0:  # end every flow at rate 0 so that some complete cleanly
        t = np.concatenate([t, np.full(inst.num_flows, 25.0)])
        f = np.concatenate([f, np.arange(inst.num_flows)])
        r = np.concatenate([r, np.zeros(inst.num_flows)])
    sched = cl.FluidSchedule(inst.num_flows, t, f, r)
    a, b = both(inst, sched)
    assert_same(a, b)
    assert not a.feasible  # random rates overload some port or miss some bytes
    # fed in chunks (cut between time groups), the compiled check gives the same report
    checker = FluidVerifier(inst, horizon=sched.horizon)
    cuts = np.flatnonzero(np.diff(sched.time)) + 1
    for part in np.split(np.arange(sched.num_records), cuts[::3]):
        checker.feed(sched.time[part], sched.flow[part], sched.rate[part])
    assert_same(checker.finish(), a)


def simulated(inst: cl.Instance, policy: str = "fair") -> cl.FluidSchedule:
    res = cl.simulate(inst, make_policy(policy, inst), verify_schedule=False)
    assert res.schedule is not None
    return res.schedule


def with_rates(sched: cl.FluidSchedule, rate: np.ndarray) -> cl.FluidSchedule:
    return cl.FluidSchedule(sched.num_flows, sched.time, sched.flow, rate)


def test_mutation_capacity_and_bytes() -> None:
    """Tests that doubling one flow's rates is caught as both a capacity violation on one of
    its ports (fair sharing saturates the port of every flow) and extra bytes sent."""
    inst = uniform(4, 3, seed=5)
    sched = simulated(inst)
    e = int(sched.flow[0])
    rate = np.where(sched.flow == e, 2 * sched.rate, sched.rate)
    a, b = both(inst, with_rates(sched, rate))
    assert_same(a, b)
    assert a.counts.get(ViolationKind.CAPACITY, 0) >= 1
    assert a.counts.get(ViolationKind.OVER_SENT, 0) == 1
    over = [v for v in a.violations if v.kind == ViolationKind.OVER_SENT]
    # it sends twice its size: the extra is exactly the size
    assert over[0].flow == e
    assert over[0].amount == pytest.approx(inst.flow_size[e])


def test_mutation_under_sent() -> None:
    """Tests that halving one flow's rates is caught as missing bytes (half its size), and
    that the flow then has no completion time."""
    inst = uniform(4, 3, seed=6)
    sched = simulated(inst)
    e = int(sched.flow[-1])
    rate = np.where(sched.flow == e, 0.5 * sched.rate, sched.rate)
    a, b = both(inst, with_rates(sched, rate))
    assert_same(a, b)
    assert a.counts == {ViolationKind.UNDER_SENT: 1}
    assert a.violations[0].amount == pytest.approx(-0.5 * inst.flow_size[e])
    assert np.isnan(a.flow_completion[e])


def test_mutation_early_start() -> None:
    """Tests that a flow whose records are moved 1 time unit before its release is caught as
    sending early, by rate x 1 bytes."""
    inst = uniform(4, 5, release_rate=0.5, seed=7)
    sched = simulated(inst)
    late = np.flatnonzero(inst.flow_release > 1.0)
    e = int(late[0])
    mine = sched.flow == e
    time = np.where(mine, sched.time - 1.0, sched.time)
    moved = cl.FluidSchedule(sched.num_flows, time, sched.flow, sched.rate)
    a, b = both(inst, moved)
    assert_same(a, b)
    early = [v for v in a.violations if v.kind == ViolationKind.EARLY]
    assert {v.flow for v in early} == {e}
    # what the flow sent in the first time unit after its release, in the original schedule
    t_e, r_e = sched.time[mine], sched.rate[mine]
    rel = inst.flow_release[e]
    ends = np.minimum(np.append(t_e[1:], np.inf), rel + 1.0)
    expected = np.sum(r_e * np.maximum(ends - t_e, 0.0))
    assert expected > 0
    assert sum(v.amount for v in early) == pytest.approx(expected)


def test_mutation_wrong_completion_claim() -> None:
    """Tests that a claimed completion time off by 1 for one coflow is a mismatch of
    exactly -1 for that coflow and nothing else."""
    inst = uniform(4, 3, seed=8)
    sched = simulated(inst)
    truth = cl.verify(inst, sched).coflow_completion
    claim = truth.copy()
    claim[1] -= 1.0
    bad = cl.FluidSchedule(sched.num_flows, sched.time, sched.flow, sched.rate, completion=claim)
    a, b = both(inst, bad)
    assert_same(a, b)
    assert a.counts == {ViolationKind.COMPLETION_MISMATCH: 1}
    assert a.violations[0].coflow == 1
    assert a.violations[0].amount == pytest.approx(-1.0)


def test_negative_rate_open_at_the_end_is_reported_once() -> None:
    """Tests that a negative last record (never closed) is reported once, as by the
    reference, and not also as sending forever."""
    inst = cl.Instance.from_matrices([[[2.0]]])
    sched = cl.FluidSchedule(1, time=[0, 2, 3], flow=[0, 0, 0], rate=[1.0, 0.0, -0.5])
    a, b = both(inst, sched)
    assert_same(a, b)
    assert a.counts == {ViolationKind.NEGATIVE: 1}
    assert a.violations[0].start == 3.0


def test_capacity_interval_spans_chunks() -> None:
    """Tests that an over-capacity interval opened in one chunk is closed by the next one,
    with its full length: two unit flows on one ingress at rate 1 each over [0, 2)."""
    inst = cl.Instance.from_matrices([[[2.0, 2.0], [0, 0]]])
    checker = FluidVerifier(inst, horizon=2.0)
    checker.feed([0.0, 0.0], [0, 1], [1.0, 1.0])
    checker.feed([2.0, 2.0], [0, 1], [0.0, 0.0])
    report = checker.finish()
    cap = [v for v in report.violations if v.kind == ViolationKind.CAPACITY]
    assert [(v.port, v.side, v.start, v.end, v.amount) for v in cap] == [
        (0, "ingress", 0.0, 2.0, 1.0)
    ]


def streamed(inst: cl.Instance, parts: list[tuple], compiled: bool) -> cl.VerificationReport:
    """The report of one implementation fed ``parts`` (time, flow, rate) as chunks, with the
    time tolerance following the times fed (``horizon=None``, as the simulator streams)."""
    checker = FluidVerifier(inst, horizon=None, compiled=compiled)
    for t, f, r in parts:
        checker.feed(t, f, r)
    return checker.finish()


def test_byte_tolerance_follows_the_time_scale_in_the_rows() -> None:
    """Tests that the compiled pass sees the byte tolerance grow with the time fed (it keeps
    its copy in the per-flow rows). Flow 0 (size 1, rate 1) stops at 1 − δ, δ = 1000·TOL: a
    shortfall beyond the tolerance of the first chunk (TOL·size + capacity · TOL·1 = 2e-9)
    but within that of the second, whose last time 1e6 makes it TOL + 1e6·TOL ≈ 1e-3. Fed
    with the stop, that second chunk must read flow 0 as complete at 1 − δ (where its bytes
    reach the size less the tolerance: it had 1 − δ of 1 to send, at rate 1)."""
    inst = cl.Instance.from_matrices([[[1.0, 0.0], [0.0, 1.0]]])
    delta = 1000 * cl.TOL
    parts = [
        (np.array([0.0]), np.array([0]), np.array([1.0])),
        (np.array([1.0 - delta, 1e6, 1e6 + 1]), np.array([0, 1, 1]), np.array([0.0, 1.0, 0.0])),
    ]
    a, b = (streamed(inst, parts, c) for c in (True, False))
    assert_same(a, b)
    assert a.feasible, a.summary()
    assert a.flow_completion.tolist() == [1.0 - delta, 1e6 + 1]


@pytest.mark.parametrize("seed", range(4))
def test_usage_resync_matches_reference(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests the re-derivation of port usage from the rows (every CHUNK_RECORDS records,
    here lowered to 7 so that it runs between most chunks): same reports as the reference
    on random overloaded streams, fed in chunks of whole time groups."""
    import coflowlab.verifier as ver

    monkeypatch.setattr(ver, "CHUNK_RECORDS", 7)
    rng = np.random.default_rng(100 + seed)
    inst = uniform(4, 4, release_rate=0.5, seed=seed)
    t, f, r = random_records(inst, rng, 400)
    cuts = np.flatnonzero(np.diff(t)) + 1
    parts = [(t[p], f[p], r[p]) for p in np.split(np.arange(len(t)), cuts[::2])]
    a, b = (streamed(inst, parts, c) for c in (True, False))
    assert_same(a, b)
    assert a.counts.get(ViolationKind.CAPACITY, 0) > 0


def test_state_views_follow_the_records() -> None:
    """Tests that the compiled verifier's per-flow attributes (views of its rows) hold each
    flow's last rate and the time it was set, as read off the records directly, and that
    the report does not share memory with the rows."""
    inst = uniform(4, 6, seed=9)
    sched = simulated(inst)
    cut = int(np.searchsorted(sched.time, np.median(sched.time), side="right"))
    checker = FluidVerifier(inst, horizon=sched.horizon)
    checker.feed(sched.time[:cut], sched.flow[:cut], sched.rate[:cut])
    last_rate, last_time = np.zeros(inst.num_flows), np.zeros(inst.num_flows)
    last_rate[sched.flow[:cut]] = sched.rate[:cut]  # the last assignment of a flow wins
    last_time[sched.flow[:cut]] = sched.time[:cut]
    assert_array_equal = np.testing.assert_array_equal
    assert_array_equal(checker.rate, last_rate)
    assert_array_equal(checker.since, last_time)
    checker.feed(sched.time[cut:], sched.flow[cut:], sched.rate[cut:])
    rows = checker._rows
    report = checker.finish()
    assert report.feasible
    assert not np.shares_memory(report.flow_completion, rows)
    assert_array_equal(checker.rate, np.zeros(inst.num_flows))
