"""Tests of ClassVerifier: class records checked against FluidVerifier on the equivalent
per-flow records (tests/core/class_records.py), and hand-derived cases with exact answers."""

from __future__ import annotations

import math

import numpy as np
import pytest
from class_records import expand, random_case, time_groups
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose, assert_equal

import coflowlab as cl
from coflowlab import Coflow, Fabric, Instance, ViolationKind
from coflowlab.class_verifier import ClassVerifier
from coflowlab.exceptions import InvalidScheduleError


def check(inst, flow_class, num_classes, weight, time, cls, rate, *, chunks=None, **kw):
    """The ClassVerifier report, fed whole or in the given chunks ``[lo, hi)``."""
    reported = kw.pop("reported", None)
    checker = ClassVerifier(inst, flow_class, num_classes, flow_weight=weight, **kw)
    for lo, hi in chunks or [(0, len(time))]:
        checker.feed(time[lo:hi], cls[lo:hi], rate[lo:hi])
    return checker.finish(reported)


def assert_same_as_fluid(inst, flow_class, num_classes, weight, time, cls, rate, rng):
    """Tests ClassVerifier against FluidVerifier on the expanded records: the same flow
    completions (within time_tol), the same kinds, the same capacity and under-sent counts."""
    et, ef, er = expand(inst, flow_class, weight, time, cls, rate)
    horizon = max(float(et.max(initial=0.0)), float(time.max(initial=0.0)))
    fluid = cl.FluidVerifier(inst, horizon=horizon)
    if len(et):
        fluid.feed(et, ef, er)
    want = fluid.finish()
    for chunks in (None, time_groups(time, rng)):
        got = check(
            inst, flow_class, num_classes, weight, time, cls, rate, chunks=chunks,
            horizon=horizon,
        )  # fmt: skip
        assert got.time_tol == want.time_tol
        assert_allclose(
            got.flow_completion, want.flow_completion, rtol=0, atol=want.time_tol,
            equal_nan=True,
        )  # fmt: skip
        assert set(got.counts) == set(want.counts), (got.summary(), want.summary())
        for kind in ("capacity", "under_sent"):
            assert got.counts.get(kind, 0) == want.counts.get(kind, 0), kind
        # its own completions are consistent with the completions it reports
        claim = check(
            inst, flow_class, num_classes, weight, time, cls, rate, horizon=horizon,
            reported=got.coflow_completion,
        )  # fmt: skip
        assert "completion_mismatch" not in claim.counts


# ---------------------------------------------------------------- equivalence
@pytest.mark.parametrize("seed", range(200))
def test_matches_fluid_verifier_on_random_streams(seed):
    """Tests that random class record streams (pair classes and random partitions, weights
    1 and random, releases, zero speeds, repeated records at one time, overloaded ports) give
    the report FluidVerifier gives on the equivalent per-flow records, fed whole and in
    random chunks of whole time groups."""
    rng = np.random.default_rng(seed)
    assert_same_as_fluid(*random_case(rng), rng)


@pytest.mark.parametrize("seed", range(20))
def test_matches_fluid_verifier_on_larger_streams(seed):
    """Tests the equivalence on up to 12 ports (144 pair classes: a min tree of several
    levels, updated leaf by leaf or rebuilt when a time group changes many classes)."""
    rng = np.random.default_rng(10_000 + seed)
    assert_same_as_fluid(*random_case(rng, max_ports=12, max_flows=80), rng)


@st.composite
def cases(draw):
    """An instance on 1 to 3 ports, a partition, weights and a record stream on a grid."""
    m = draw(st.integers(1, 3))
    flows = draw(
        st.lists(
            st.tuples(
                st.integers(0, m - 1),
                st.integers(0, m - 1),
                st.integers(1, 8),  # size in quarters
                st.integers(0, 6),  # release in quarters
            ),
            min_size=1,
            max_size=8,
        )
    )
    nf = len(flows)
    inst = Instance(
        m,
        np.arange(nf),
        [f[0] for f in flows],
        [f[1] for f in flows],
        [f[2] / 4 for f in flows],
        [f[3] / 4 for f in flows],
    )
    if draw(st.booleans()):
        num_classes = m * m
        flow_class = inst.flow_src * m + inst.flow_dst
    else:
        num_classes = draw(st.integers(1, 3))
        flow_class = np.array(draw(st.lists(st.integers(0, num_classes - 1), min_size=nf,
                                            max_size=nf)))  # fmt: skip
    weight = None
    if draw(st.booleans()):
        weight = np.array(draw(st.lists(st.sampled_from([0.5, 1.0, 2.0]), min_size=nf,
                                        max_size=nf)))  # fmt: skip
    records = draw(
        st.lists(
            st.tuples(
                st.integers(0, 12),
                st.integers(0, num_classes - 1),
                st.sampled_from([0.0, 0.5, 1.0, 2.0]),
            ),
            max_size=12,
        )
    )
    records.sort(key=lambda x: x[0])  # stable: same-time records keep their drawn order
    time = np.array([x[0] / 4 for x in records], dtype=float)
    cls = np.array([x[1] for x in records], dtype=np.int64)
    rate = np.array([x[2] for x in records], dtype=float)
    return inst, flow_class, num_classes, weight, time, cls, rate


@settings(max_examples=150, deadline=None)
@given(case=cases(), seed=st.integers(0, 2**16))
def test_matches_fluid_verifier_hypothesis(case, seed):
    """Tests the equivalence with FluidVerifier on the expanded records on streams drawn by
    Hypothesis (events on a grid of quarters, so that records, releases and completions
    coincide)."""
    assert_same_as_fluid(*case, np.random.default_rng(seed))


# ---------------------------------------------------------------- hand-derived cases
def pair(sizes, releases=None, cap=2.0):
    """Flows of the given sizes on the single port pair (0, 0) of capacity ``cap``."""
    rel = releases or [0.0] * len(sizes)
    return Instance.from_coflows(
        [Coflow([(0, 0, s, r) for s, r in zip(sizes, rel, strict=True)])],
        Fabric(1, cap, cap),
    )


def records(*rows):
    t, c, r = zip(*rows, strict=True) if rows else ((), (), ())
    return np.array(t, dtype=float), np.array(c, dtype=np.int64), np.array(r, dtype=float)


def run(inst, rows, flow_class=None, num_classes=1, **kw):
    fc = np.zeros(inst.num_flows, dtype=np.int64) if flow_class is None else flow_class
    return check(inst, fc, num_classes, kw.pop("flow_weight", None), *records(*rows), **kw)


def test_two_flows_at_speed_one_complete_at_one_and_three():
    """Tests that sizes 1 and 3 at speed 1 on a capacity-2 pair complete at 1 and 3 with no
    violation, the reported completion 3 matching."""
    report = run(pair([1.0, 3.0]), [(0.0, 0, 1.0)], horizon=3.0, reported=[3.0])
    assert report.feasible, report.summary()
    assert_equal(report.flow_completion, [1.0, 3.0])
    assert_equal(report.coflow_completion, [3.0])


def test_speed_above_capacity_until_the_first_completion():
    """Tests that at speed 1.5 both ports carry 3 > 2 (excess 1) on [0, 2/3), until the first
    flow completes; the second completes at 2/3 + 2/1.5 = 2."""
    report = run(pair([1.0, 3.0]), [(0.0, 0, 1.5)], horizon=3.0)
    assert report.counts == {"capacity": 2}
    assert_allclose(report.flow_completion, [2 / 3, 2.0])
    for v, side in zip(report.violations, ("ingress", "egress"), strict=True):
        assert (v.kind, v.port, v.side, v.start) == (ViolationKind.CAPACITY, 0, side, 0.0)
        assert v.end == pytest.approx(2 / 3)
        assert v.amount == pytest.approx(1.0)


def test_doubled_speed_record_is_caught():
    """Tests that a mutation doubling one record's speed is reported as capacity."""
    rows = [(0.0, 0, 1.0), (0.5, 0, 1.0)]
    assert run(pair([1.0, 3.0]), rows, horizon=3.0).feasible
    bad = run(pair([1.0, 3.0]), [(0.0, 0, 1.0), (0.5, 0, 2.0)], horizon=3.0)
    assert bad.counts == {"capacity": 2}
    assert bad.violations[0].start == 0.5
    assert bad.violations[0].end == pytest.approx(0.75)  # flow 0: 0.5 at 1, then 0.5 at 2


def test_speed_left_at_zero_leaves_flows_under_sent():
    """Tests that a class stopped for good at 0 leaves its unfinished flow under-sent, with
    its bytes w (V(end) - V(release)) = 2 of 3, and no completion."""
    report = run(pair([1.0, 3.0]), [(0.0, 0, 1.0), (2.0, 0, 0.0)], horizon=3.0)
    assert report.counts == {"under_sent": 1}
    v = report.violations[0]
    assert (v.flow, v.amount) == (1, pytest.approx(-1.0))
    assert report.flow_completion[0] == 1.0 and math.isnan(report.flow_completion[1])
    assert math.isnan(report.coflow_completion[0])


def test_flow_short_by_less_than_the_byte_tolerance_completes_when_its_class_stops():
    """Tests that a class stopped 1e-12 before its flow's exact completion (an engine's
    rounding) completes the flow at the stop, while a stop 1e-3 early leaves it short."""
    inst = pair([1.0])
    near = run(inst, [(0.0, 0, 1.0), (1.0 - 1e-12, 0, 0.0), (2.0, 0, 0.0)], horizon=2.0)
    assert near.feasible, near.summary()
    assert_equal(near.flow_completion, [1.0 - 1e-12])
    short = run(inst, [(0.0, 0, 1.0), (1.0 - 1e-3, 0, 0.0), (2.0, 0, 0.0)], horizon=2.0)
    assert short.counts == {"under_sent": 1}


def test_class_without_any_record_leaves_flows_under_sent():
    """Tests that a class never given a speed (speed 0 forever) leaves its flows short."""
    report = run(pair([1.0, 3.0]), [], horizon=3.0)
    assert report.counts == {"under_sent": 2}


def test_reported_completion_off_by_1e_3_is_a_mismatch():
    """Tests that a claimed completion 1e-3 away from the verified one is reported."""
    report = run(pair([1.0, 3.0]), [(0.0, 0, 1.0)], horizon=3.0, reported=[3.001])
    assert report.counts == {"completion_mismatch": 1}
    assert report.violations[0].amount == pytest.approx(1e-3)


def test_late_flow_joining_at_full_speed_overloads_at_its_release():
    """Tests that a flow released at 1 into a class at full speed (capacity 1) overloads the
    pair from 1 on, and that lowering the speed at its release time is feasible (releases
    come before the records of the same time)."""
    inst = pair([3.0, 1.0], [0.0, 1.0], cap=1.0)
    bad = run(inst, [(0.0, 0, 1.0)], horizon=5.0)
    assert bad.counts == {"capacity": 2}
    assert [(v.start, v.end) for v in bad.violations] == [(1.0, 2.0), (1.0, 2.0)]
    # from 1 both send at 1: flow 1 completes at 2, flow 0 (1 sent by 1) at 3
    assert_equal(bad.flow_completion, [3.0, 2.0])
    good = run(inst, [(0.0, 0, 1.0), (1.0, 0, 0.5)], horizon=5.0)
    assert good.feasible, good.summary()
    # from 1 each at 0.5: flow 1 at 3; flow 0 has 1 + 1 sent then, 1 left at 0.5: 5
    assert_equal(good.flow_completion, [5.0, 3.0])


def test_completion_at_a_record_time_comes_first():
    """Tests that a flow completing exactly at a record time leaves before the records, so
    raising the other class's speed then is not over capacity."""
    inst = Instance.from_coflows([Coflow([(0, 0, 1.0), (0, 0, 1.0)])], 1)
    rows = [(0.0, 0, 1.0), (1.0, 1, 1.0)]
    report = run(inst, rows, flow_class=np.array([0, 1]), num_classes=2, horizon=2.0)
    assert report.feasible, report.summary()
    assert_equal(report.flow_completion, [1.0, 2.0])


@pytest.mark.parametrize(("gap", "count"), [(1e-12, 0), (1e-6, 2)])
def test_over_capacity_within_the_time_tolerance_is_not_counted(gap, count):
    """Tests that a speed raised ``gap`` before the other class's flow completes overloads
    the port only if ``gap`` exceeds time_tol (2e-9 here)."""
    inst = Instance.from_coflows([Coflow([(0, 0, 1.0), (0, 0, 1.0)])], 1)
    rows = [(0.0, 0, 1.0), (1.0 - gap, 1, 1.0)]
    report = run(inst, rows, flow_class=np.array([0, 1]), num_classes=2, horizon=2.0)
    assert report.counts.get("capacity", 0) == count
    assert report.flow_completion[0] == 1.0


def test_general_class_with_weights():
    """Tests a class spanning two port pairs with weights 2 and 1: at speed 1 they send at
    2 and 1; sizes 2 and 3 complete at 1 and 3; ingress 0 (capacity 2) is full, not over."""
    inst = Instance.from_coflows([Coflow([(0, 0, 2.0), (1, 1, 3.0)])], Fabric(2, 2.0, 2.0))
    report = run(inst, [(0.0, 0, 1.0)], flow_weight=[2.0, 1.0], horizon=3.0)
    assert report.feasible, report.summary()
    assert_equal(report.flow_completion, [1.0, 3.0])
    over = run(inst, [(0.0, 0, 1.5)], flow_weight=[2.0, 1.0], horizon=3.0)
    assert over.counts == {"capacity": 2}  # ingress 0 and egress 0 carry 3 on [0, 2/3)
    assert {v.port for v in over.violations} == {0}


def test_repeated_records_at_one_time_the_last_counts():
    """Tests that of several records of a class at one time the last one counts."""
    report = run(pair([1.0, 3.0]), [(0.0, 0, 5.0), (0.0, 0, 0.0), (0.0, 0, 1.0)], horizon=3.0)
    assert report.feasible, report.summary()
    assert_equal(report.flow_completion, [1.0, 3.0])


def test_negative_speed_names_the_class_and_its_first_flow():
    """Tests that a negative speed is reported with its class, start and first flow."""
    inst = Instance.from_coflows([Coflow([(0, 0, 1.0)]), Coflow([(0, 0, 1.0), (0, 0, 1.0)])], 1)
    rows = [(0.0, 1, -0.5), (1.0, 1, 0.5), (1.0, 0, 0.5), (2.0, 2, -1.0)]
    report = run(inst, rows, flow_class=np.array([0, 1, 1]), num_classes=3, horizon=5.0)
    neg = [v for v in report.violations if v.kind == ViolationKind.NEGATIVE]
    assert [(v.start, v.amount, v.flow, v.coflow) for v in neg] == [
        (0.0, -0.5, 1, 1),
        (2.0, -1.0, None, None),  # class 2 has no flow
    ]
    assert neg[0].message == "class 1: negative speed -0.5 from t=0.0"


def test_streaming_tolerance_follows_the_times():
    """Tests that horizon=None makes time_tol follow the largest time seen."""
    report = run(pair([1.0, 3000.0]), [(0.0, 0, 1.0)], horizon=None)
    assert report.time_tol == pytest.approx(3000.0 * 1e-9)
    assert_equal(report.flow_completion, [1.0, 3000.0])


def test_docstring_numbers_agree_with_chunked_feeding():
    """Tests that feeding record by record gives the same report as feeding at once."""
    inst = pair([1.0, 3.0, 2.0], [0.0, 0.0, 0.5])
    t, c, r = records((0.0, 0, 0.5), (0.5, 0, 0.25), (1.0, 0, 1.0), (2.5, 0, 0.5))
    whole = check(inst, np.zeros(3, dtype=np.int64), 1, None, t, c, r, horizon=5.0)
    each = check(
        inst, np.zeros(3, dtype=np.int64), 1, None, t, c, r, horizon=5.0,
        chunks=[(k, k + 1) for k in range(len(t))],
    )  # fmt: skip
    assert_equal(each.flow_completion, whole.flow_completion)
    assert each.counts == whole.counts


# ---------------------------------------------------------------- bad input
def one_pair():
    return pair([1.0, 3.0])


@pytest.mark.parametrize(
    ("args", "kw", "match"),
    [
        (([0], 1), {}, r"flow_class has shape \(1,\), expected \(2,\)"),
        (([0, 2], 2), {}, r"flow_class\[1\] = 2 is outside \[0, 2\)"),
        (([0, -1], 2), {}, r"flow_class\[1\] = -1 is outside"),
        (([0, 0.5], 2), {}, r"flow_class\[1\] = 0.5 is not an integer"),
        (([0, 0], -1), {}, r"num_classes is -1"),
        (([0, 0], 1.5), {}, r"num_classes must be an integer"),
        (([0, 0], 1), {"flow_weight": [1.0, 0.0]}, r"flow_weight\[1\] = 0.0 \(must be finite"),
        (([0, 0], 1), {"flow_weight": [np.inf, 1.0]}, r"flow_weight\[0\] = inf"),
        (([0, 0], 1), {"flow_weight": [np.nan, 1.0]}, r"flow_weight\[0\] = nan"),
        (([0, 0], 1), {"flow_weight": [1.0]}, r"flow_weight has shape \(1,\)"),
    ],
)
def test_bad_constructor_arguments(args, kw, match):
    """Tests that each bad argument is rejected with a message naming the index."""
    with pytest.raises(InvalidScheduleError, match=match):
        ClassVerifier(one_pair(), *args, **kw)


def test_dependencies_are_rejected():
    """Tests that an instance with dependencies is rejected."""
    inst = Instance.from_coflows(
        [Coflow([(0, 0, 1.0)]), Coflow([(0, 0, 1.0)])], 1, dependencies=[(0, 1)]
    )
    with pytest.raises(InvalidScheduleError, match="do not support dependencies"):
        ClassVerifier(inst, [0, 0], 1)


@pytest.mark.parametrize(
    ("rows", "match"),
    [
        ([(0.0, 0, 1.0), (np.nan, 0, 1.0)], r"record 1: time nan is not finite"),
        ([(np.inf, 0, 1.0)], r"record 0: time inf is not finite"),
        ([(0.0, 0, 1.0), (1.0, 0, np.nan)], r"record 1: rate nan is not finite"),
        ([(0.0, 0, np.inf)], r"record 0: rate inf is not finite"),
        ([(0.0, 0, 1.0), (1.0, 3, 1.0)], r"record 1: class 3 is outside \[0, 2\)"),
        ([(0.0, -1, 1.0)], r"record 0: class -1 is outside"),
        ([(1.0, 0, 1.0), (0.5, 0, 1.0)], r"record 1: time 0.5 is before the previous"),
    ],
)
def test_bad_records(rows, match):
    """Tests that each bad record is rejected with a message naming it."""
    checker = ClassVerifier(one_pair(), [0, 1], 2)
    with pytest.raises(InvalidScheduleError, match=match):
        checker.feed(*records(*rows))


def test_bad_chunks():
    """Tests the stream contract: times never go back, time groups are never split, the
    arrays agree in length, a class is an integer, and the stream finishes once."""
    checker = ClassVerifier(one_pair(), [0, 0], 1)
    checker.feed(*records((0.0, 0, 1.0), (1.0, 0, 1.0)))
    with pytest.raises(InvalidScheduleError, match="time group was split"):
        checker.feed(*records((1.0, 0, 0.5)))
    with pytest.raises(InvalidScheduleError, match=r"before the last time fed 1\.0"):
        checker.feed(*records((0.5, 0, 0.5)))
    with pytest.raises(InvalidScheduleError, match="lengths 2, 1 and 2"):
        checker.feed([2.0, 3.0], [0], [1.0, 1.0])
    with pytest.raises(InvalidScheduleError, match=r"record 0: class 0.5 is not an integer"):
        checker.feed([2.0], [0.5], [1.0])
    checker.finish()
    with pytest.raises(InvalidScheduleError, match="already finished"):
        checker.finish()
    with pytest.raises(InvalidScheduleError, match="already finished"):
        checker.feed(*records((5.0, 0, 1.0)))
