"""Tests of the verifier: every kind of violation is constructed and must be caught."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_equal

import coflowlab as cl
import coflowlab.verifier as verify_module
from coflowlab import FluidSchedule, Instance, SlottedSchedule, ViolationKind, verify


def one_flow(size: float = 2.0, release: float = 0.0) -> Instance:
    return Instance.from_coflows([cl.Coflow([(0, 0, size)], release=release)], 1)


def sequential_schedule(inst: Instance, order: np.ndarray) -> FluidSchedule:
    """Sends the flows one after another at full rate: always feasible."""
    builder = cl.FluidScheduleBuilder(inst.num_flows)
    t = float(inst.flow_release.max())
    for e in order:
        cap = min(
            inst.fabric.ingress_capacity[inst.flow_src[e]],
            inst.fabric.egress_capacity[inst.flow_dst[e]],
        )
        builder.set_rates(t, [e], [cap])
        t += inst.flow_size[e] / cap
        builder.set_rates(t, [e], [0.0])
    return builder.build()


def kinds(report: cl.VerificationReport) -> set[str]:
    return set(report.counts)


# ---------------------------------------------------------------- fluid: feasible cases
def test_madd_on_fig_3_2_is_feasible_and_completes_at_rho(shuffle_3x2):
    """Tests that MADD on the thesis' Fig. 3.2 (rate = size / Γ) verifies with CCT Γ = 4."""
    inst = shuffle_3x2
    n = inst.num_flows
    sched = FluidSchedule.from_segments(
        n, np.arange(n), np.zeros(n), np.full(n, 4.0), inst.flow_size / 4.0, completion=[4.0]
    )
    report = verify(inst, sched)
    assert report.feasible, report.summary()
    assert_allclose(report.flow_completion, 4.0)
    assert_allclose(report.coflow_completion, [4.0])
    assert report.weighted_completion_time == pytest.approx(4.0)


def test_sequential_schedule_is_feasible_with_release_dates(two_coflows):
    """Tests that serving flows one at a time at full rate verifies, with the right times."""
    inst = two_coflows
    report = verify(inst, sequential_schedule(inst, np.array([2, 0, 1])))
    assert report.feasible, report.summary()
    # starts at max release 1: flow 2 (size 1) on [1, 2), flow 0 (2) on [2, 4), flow 1 on [4, 5)
    assert_allclose(report.flow_completion, [4.0, 5.0, 2.0])
    assert_allclose(report.coflow_completion, [5.0, 2.0])
    assert_allclose(report.cct, [5.0, 1.0])
    assert report.weighted_completion_time == pytest.approx(5.0 + 3 * 2.0)


def test_rounding_noise_is_within_tolerance():
    """Tests that overshoots of a few ulps (rates summing to 1 + 1e-15) are not violations."""
    inst = Instance.from_matrices([[[1.0, 1.0], [0, 0]]])
    third = 1.0 / 3.0
    sched = FluidSchedule(
        2,
        time=[0, 0, 1.5, 1.5, 2.25],
        flow=[0, 1, 0, 1, 1],
        rate=[2 * third + 1e-15, third, 0.0, 2 * third, 0.0],
    )
    report = verify(inst, sched)
    assert report.feasible, report.summary()


def test_builder_and_direct_records_agree(two_coflows):
    """Tests that the builder's schedule equals one built from the same records directly."""
    built = sequential_schedule(two_coflows, np.array([0, 1, 2]))
    direct = FluidSchedule(built.num_flows, built.time, built.flow, built.rate)
    assert_equal(built.time, direct.time)
    assert_equal(built.rate, direct.rate)
    assert_equal(
        verify(two_coflows, built).flow_completion, verify(two_coflows, direct).flow_completion
    )


def test_from_segments_adds_overlapping_segments():
    """Tests that overlapping segments of one flow add their rates."""
    s = FluidSchedule.from_segments(1, [0, 0], [0.0, 1.0], [2.0, 3.0], [0.25, 0.5])
    assert_allclose(s.rates_at(0.5), [0.25])
    assert_allclose(s.rates_at(1.5), [0.75])
    assert_allclose(s.rates_at(2.5), [0.5])
    assert_allclose(s.rates_at(3.0), [0.0])


def test_last_record_wins_at_equal_times():
    """Tests that of two records for one flow at one time, the later one applies."""
    inst = one_flow(2.0)
    sched = FluidSchedule(1, time=[0, 0, 2], flow=[0, 0, 0], rate=[5.0, 1.0, 0.0])
    report = verify(inst, sched)
    assert report.feasible, report.summary()


# ---------------------------------------------------------------- fluid: each violation
def test_ingress_capacity_violation_is_located():
    """Tests that a port over capacity is reported with its port, side, interval and excess."""
    inst = Instance.from_matrices([[[1.0, 1.0], [0, 0]]])  # two flows out of ingress 0
    sched = FluidSchedule(2, time=[0, 0, 1, 1], flow=[0, 1, 0, 1], rate=[1.0, 1.0, 0.0, 0.0])
    report = verify(inst, sched)
    assert kinds(report) == {"capacity"}
    (v,) = report.violations
    assert (v.port, v.side, v.start, v.end) == (0, "ingress", 0.0, 1.0)
    assert v.amount == pytest.approx(1.0)
    assert "ingress port 0" in v.message


def test_egress_capacity_violation_is_located():
    """Tests that an egress port over capacity is reported on the egress side."""
    inst = Instance.from_matrices([[[0, 1.0], [0, 1.0]]])  # two flows into egress 1
    sched = FluidSchedule(2, time=[0, 0, 2, 2], flow=[0, 1, 0, 1], rate=[0.75, 0.75, 0, 0])
    report = verify(inst, sched)
    assert kinds(report) == {"capacity", "over_sent"}
    cap = [v for v in report.violations if v.kind is ViolationKind.CAPACITY]
    assert [(v.port, v.side, v.start, v.end) for v in cap] == [(1, "egress", 0.0, 2.0)]
    assert cap[0].amount == pytest.approx(0.5)


def test_capacity_uses_each_ports_own_capacity():
    """Tests that capacities other than 1 are honoured per port."""
    fab = cl.Fabric(1, ingress_capacity=2.0, egress_capacity=0.5)
    inst = Instance(fab, [0], [0], [0], [1.0])
    ok = verify(inst, FluidSchedule(1, time=[0, 2], flow=[0, 0], rate=[0.5, 0.0]))
    assert ok.feasible, ok.summary()
    bad = verify(inst, FluidSchedule(1, time=[0, 1], flow=[0, 0], rate=[1.0, 0.0]))
    cap = [v for v in bad.violations if v.kind is ViolationKind.CAPACITY]
    assert [(v.side, v.amount) for v in cap] == [("egress", pytest.approx(0.5))]


def test_under_sent_flow_is_reported():
    """Tests that a flow that receives less than its size is reported with the shortfall."""
    report = verify(one_flow(2.0), FluidSchedule(1, time=[0, 1], flow=[0, 0], rate=[1.0, 0.0]))
    assert kinds(report) == {"under_sent"}
    assert report.violations[0].amount == pytest.approx(-1.0)
    assert np.isnan(report.coflow_completion[0])


def test_over_sent_flow_is_reported():
    """Tests that a flow that receives more than its size is reported, completing on time."""
    report = verify(one_flow(2.0), FluidSchedule(1, time=[0, 3], flow=[0, 0], rate=[1.0, 0.0]))
    assert kinds(report) == {"over_sent"}
    assert report.violations[0].amount == pytest.approx(1.0)
    assert_allclose(report.coflow_completion, [2.0])


def test_rate_that_never_stops_is_reported():
    """Tests that a positive rate after the last record is reported (it sends forever)."""
    report = verify(one_flow(2.0), FluidSchedule(1, time=[0], flow=[0], rate=[1.0]))
    assert "never_stops" in kinds(report)
    assert_allclose(report.flow_completion, [2.0])


def test_sending_before_release_is_reported():
    """Tests that bytes sent before a flow's release are reported with the interval."""
    report = verify(
        one_flow(2.0, release=1.0), FluidSchedule(1, time=[0, 2], flow=[0, 0], rate=[1.0, 0.0])
    )
    assert kinds(report) == {"early"}
    v = report.violations[0]
    assert (v.flow, v.start, v.end) == (0, 0.0, 1.0)
    assert v.amount == pytest.approx(1.0)


def test_negative_rate_is_reported():
    """Tests that a negative rate is reported."""
    inst = one_flow(1.0)
    sched = FluidSchedule(1, time=[0, 1, 2, 3], flow=[0] * 4, rate=[1.0, -0.5, 0.5, 0.0])
    assert "negative" in kinds(verify(inst, sched))


def test_dependency_violation_is_reported():
    """Tests that a coflow sending before a coflow it depends on completes is reported."""
    inst = Instance.from_coflows(
        [cl.Coflow([(0, 0, 1.0)]), cl.Coflow([(1, 1, 1.0)])], 2, dependencies=[(0, 1)]
    )
    parallel = FluidSchedule(2, time=[0, 0, 1, 1], flow=[0, 1, 0, 1], rate=[1, 1, 0, 0])
    report = verify(inst, parallel)
    assert kinds(report) == {"dependency"}
    assert report.violations[0].coflow == 1
    serial = FluidSchedule(2, time=[0, 1, 1, 2], flow=[0, 0, 1, 1], rate=[1, 0, 1, 0])
    assert verify(inst, serial).feasible


def test_wrong_reported_completion_is_reported(two_coflows):
    """Tests that a reported completion time that differs from the schedule's is reported."""
    sched = sequential_schedule(two_coflows, np.array([2, 0, 1]))
    good = FluidSchedule(
        sched.num_flows, sched.time, sched.flow, sched.rate, completion=[5.0, 2.0]
    )
    assert verify(two_coflows, good).feasible
    bad = FluidSchedule(sched.num_flows, sched.time, sched.flow, sched.rate, completion=[5.0, 1.5])
    report = verify(two_coflows, bad)
    assert kinds(report) == {"completion_mismatch"}
    assert report.violations[0].coflow == 1
    assert report.violations[0].amount == pytest.approx(-0.5)


def test_raise_if_infeasible_names_the_violation():
    """Tests that raise_if_infeasible raises with the violation's message."""
    report = verify(one_flow(2.0), FluidSchedule(1, time=[0, 1], flow=[0, 0], rate=[1.0, 0]))
    with pytest.raises(cl.InfeasibleScheduleError, match="flow 0: received 1 of size 2"):
        report.raise_if_infeasible()


def test_violations_are_capped_but_counted():
    """Tests that at most max_violations are kept per kind while all are counted."""
    inst = Instance.from_matrices([np.eye(5) * 2.0])
    sched = FluidSchedule(
        5, time=[0] * 5 + [1] * 5, flow=list(range(5)) * 2, rate=[1.0] * 5 + [0.0] * 5
    )
    report = verify(inst, sched, max_violations=2)
    assert report.counts == {"under_sent": 5}
    assert len(report.violations) == 2


# ---------------------------------------------------------------- fluid: streaming
@pytest.mark.parametrize("chunk", [1, 3, 7, 1 << 20])
def test_chunked_streaming_gives_the_same_report(monkeypatch, chunk):
    """Tests that chunk boundaries change nothing, including a violation spanning chunks."""
    monkeypatch.setattr(verify_module, "CHUNK_RECORDS", chunk)
    rng = np.random.default_rng(5)
    d = [rng.integers(0, 3, size=(3, 3)).astype(float) + np.eye(3) for _ in range(4)]
    inst = Instance.from_matrices(d)
    order = rng.permutation(inst.num_flows)
    sched = sequential_schedule(inst, order)
    report = verify(inst, sched)
    assert report.feasible, report.summary()
    monkeypatch.setattr(verify_module, "CHUNK_RECORDS", 1 << 20)
    assert_equal(report.flow_completion, verify(inst, sched).flow_completion)

    # double one rate in the middle: a capacity excess that may span a chunk boundary
    monkeypatch.setattr(verify_module, "CHUNK_RECORDS", chunk)
    rate = sched.rate.copy()
    pos = int(np.flatnonzero(rate > 0)[len(order) // 2])
    rate[pos] *= 2
    bad = verify(inst, FluidSchedule(inst.num_flows, sched.time, sched.flow, rate))
    assert "capacity" in bad.counts


def test_streaming_verifier_rejects_split_time_groups():
    """Tests that feeding one time group in two chunks is refused."""
    checker = cl.FluidVerifier(one_flow(1.0))
    checker.feed([0.0], [0], [1.0])
    with pytest.raises(cl.InvalidScheduleError, match="split"):
        checker.feed([0.0], [0], [0.5])


def test_schedule_for_another_instance_is_refused(two_coflows):
    """Tests that verifying a schedule built for a different number of flows raises."""
    with pytest.raises(cl.InvalidScheduleError, match="3"):
        verify(two_coflows, FluidSchedule(2, time=[0], flow=[0], rate=[0.0]))


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"time": [0, np.nan], "flow": [0, 0], "rate": [1, 0]}, "time is nan"),
        ({"time": [0, 1], "flow": [0, 5], "rate": [1, 0]}, "flow 5 is not a flow"),
        ({"time": [0, 1], "flow": [0, 0], "rate": [1, np.inf]}, "rate is inf"),
        ({"time": [0, 1], "flow": [0], "rate": [1, 0]}, "time has 2 records"),
    ],
)
def test_malformed_fluid_schedule_raises(kwargs, match):
    """Tests that malformed records raise InvalidScheduleError naming the record."""
    with pytest.raises(cl.InvalidScheduleError, match=match):
        FluidSchedule(2, **kwargs)


# ---------------------------------------------------------------- slotted
def i4() -> Instance:
    """instance I4 (docs/theory.md#instances): OPT 4 with B, C in slot 1 and A in slot 2."""
    return Instance.from_matrices(
        [[[1, 0], [0, 1]], [[0, 1], [0, 0]], [[0, 0], [1, 0]]], labels=["A", "B", "C"]
    )


def test_slotted_matchings_verify_with_slot_completions():
    """Tests that a schedule of matchings verifies, with completion = last slot used."""
    inst = i4()  # flows: A 0->0 (0), A 1->1 (1), B 0->1 (2), C 1->0 (3)
    sched = SlottedSchedule.from_matchings(4, [[2, 3], [0, 1]])
    report = verify(inst, sched)
    assert report.feasible, report.summary()
    assert_allclose(report.coflow_completion, [2.0, 1.0, 1.0])
    assert report.weighted_completion_time == 4.0


def test_slotted_capacity_violation_names_port_and_slot():
    """Tests that two units through one port in one slot are reported for that slot."""
    inst = i4()
    sched = SlottedSchedule(4, slot=[1, 1, 2, 2], flow=[0, 2, 1, 3], amount=[1, 1, 1, 1])
    report = verify(inst, sched)
    assert kinds(report) == {"capacity"}
    located = [(v.port, v.side, v.start, v.end) for v in report.violations]
    assert located == [(0, "ingress", 0.0, 1.0), (1, "ingress", 1.0, 2.0)]


def test_slotted_release_means_first_slot_after_it():
    """Tests the slotted release convention of docs/theory.md#time-models: release 1 means sending
    from slot 2 on."""
    inst = Instance.from_matrices(
        [[[2, 0], [0, 0]], [[1, 0], [0, 1]]], release=[0, 1], weight=[1, 3]
    )  # flows: C0 0->0 (0), C1 0->0 (1), C1 1->1 (2)
    opt = SlottedSchedule(3, slot=[1, 2, 2, 3], flow=[0, 1, 2, 0], amount=[1, 1, 1, 1])
    report = verify(inst, opt)
    assert report.feasible, report.summary()
    assert report.weighted_completion_time == 9.0  # the optimum stated in docs/theory.md#instances
    early = SlottedSchedule(3, slot=[1, 1, 2, 3], flow=[1, 2, 0, 0], amount=[1, 1, 1, 1])
    assert "early" in verify(inst, early).counts


def test_slotted_fractional_amount_and_size_are_reported():
    """Tests that the slotted model refuses fractional amounts and fractional sizes."""
    inst = one_flow(1.0)
    half = SlottedSchedule(1, slot=[1, 2], flow=[0, 0], amount=[0.5, 0.5])
    assert kinds(verify(inst, half)) == {"non_integral"}
    frac = one_flow(1.5)
    whole = SlottedSchedule(1, slot=[1, 2], flow=[0, 0], amount=[1, 1])
    assert "non_integral" in verify(frac, whole).counts


def test_slotted_bytes_dependency_and_claims_are_checked():
    """Tests the slotted conservation, dependency and reported-completion checks."""
    inst = Instance.from_coflows(
        [cl.Coflow([(0, 0, 2.0)]), cl.Coflow([(1, 1, 1.0)])], 2, dependencies=[(0, 1)]
    )
    short = SlottedSchedule(2, slot=[1, 3], flow=[0, 1], amount=[1, 1])
    # coflow 0 never completes, so coflow 1 also breaks its dependency
    assert kinds(verify(inst, short)) == {"under_sent", "dependency"}
    extra = SlottedSchedule(2, slot=[1, 2, 3, 3], flow=[0, 0, 0, 1], amount=[1, 1, 1, 1])
    assert kinds(verify(inst, extra)) == {"over_sent"}
    too_soon = SlottedSchedule(2, slot=[1, 2, 2], flow=[0, 0, 1], amount=[1, 1, 1])
    assert kinds(verify(inst, too_soon)) == {"dependency"}
    good = SlottedSchedule(
        2, slot=[1, 2, 3], flow=[0, 0, 1], amount=[1, 1, 1], completion=[2.0, 3.0]
    )
    assert verify(inst, good).feasible
    lie = SlottedSchedule(
        2, slot=[1, 2, 3], flow=[0, 0, 1], amount=[1, 1, 1], completion=[2.0, 2.0]
    )
    assert kinds(verify(inst, lie)) == {"completion_mismatch"}
    neg = SlottedSchedule(2, slot=[1, 2, 3, 4, 4], flow=[0, 0, 1, 1, 1], amount=[1, 1, 1, 1, -1])
    assert "negative" in verify(inst, neg).counts


def test_malformed_slotted_schedule_raises():
    """Tests that slot numbers below 1 are refused."""
    with pytest.raises(cl.InvalidScheduleError, match="slot 0"):
        SlottedSchedule(1, slot=[0], flow=[0], amount=[1])


def test_feeding_event_by_event_matches_whole_verification():
    """Tests that a simulator-style stream (one call per event) gives verify()'s report."""
    rng = np.random.default_rng(11)
    inst = Instance.from_matrices([rng.integers(0, 3, size=(3, 3)) + np.eye(3) for _ in range(3)])
    sched = sequential_schedule(inst, rng.permutation(inst.num_flows))
    rate = sched.rate.copy()
    rate[np.flatnonzero(rate > 0)[2]] *= 1.5  # one capacity and one bytes violation
    sched = FluidSchedule(inst.num_flows, sched.time, sched.flow, rate)
    checker = cl.FluidVerifier(inst, horizon=sched.horizon)
    for t in np.unique(sched.time):
        at = sched.time == t
        checker.feed(sched.time[at], sched.flow[at], sched.rate[at])
    streamed = checker.finish()
    whole = verify(inst, sched)
    assert streamed.counts == whole.counts and streamed.counts
    assert_equal(streamed.flow_completion, whole.flow_completion)


def test_flow_completes_when_it_stops_sending_its_last_bytes():
    """Tests that a flow crawling through its last bytes, below the byte tolerance but above
    the rate tolerance, completes when it stops sending, not when it came within tolerance."""
    first = 2.0 - 5e-11
    sched = FluidSchedule(1, time=[0.0, first, first + 0.005], flow=[0, 0, 0], rate=[1.0, 1e-8, 0])
    report = verify(one_flow(2.0), sched)
    assert report.feasible, report.summary()
    assert_allclose(report.coflow_completion, [first + 0.005], rtol=0, atol=1e-12)


@pytest.mark.parametrize("compiled", [True, False])
def test_flow_reaching_its_size_only_as_the_tolerance_grows_has_a_completion(compiled):
    """Tests the adaptive horizon (``horizon=None``): flow 0 (size 1) stops 5e-9 short of its
    size at t = 1 - 5e-9, outside the byte tolerance then (2e-9), inside it once a record at
    t = 1000 has raised the time scale (about 1e-6). It is complete, so it needs a completion
    time, the time it last sent; it used to be left NaN in a feasible report."""
    inst = Instance.from_coflows([cl.Coflow([(0, 0, 1.0)]), cl.Coflow([(1, 1, 1000.0)])], 2)
    checker = cl.FluidVerifier(inst, horizon=None, compiled=compiled)
    checker.feed([0.0, 0.0], [0, 1], [1.0, 1.0])
    checker.feed([1 - 5e-9], [0], [0.0])
    assert checker.byte_tol[0] < 5e-9  # not complete yet at this point of the stream
    checker.feed([1000.0], [1], [0.0])
    report = checker.finish()
    assert report.feasible, report.summary()
    assert_equal(report.flow_completion, [1 - 5e-9, 1000.0])
    assert_equal(report.coflow_completion, [1 - 5e-9, 1000.0])
    # 5e-6 short stays short whatever the horizon: under-sent, no completion
    checker = cl.FluidVerifier(inst, horizon=None, compiled=compiled)
    checker.feed([0.0, 0.0], [0, 1], [1.0, 1.0])
    checker.feed([1 - 5e-6], [0], [0.0])
    checker.feed([1000.0], [1], [0.0])
    report = checker.finish()
    assert "under_sent" in report.counts
    assert np.isnan(report.flow_completion[0])
