"""Tests of the report records and of the reference each ratio is measured against.

The expected ratios are derived by hand from the values in ``conftest.hand_records``.
"""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose

from coflowlab.reports import STATUSES, RatedRecord, TaskRecord, attach_reference


def by_key(rated: list[RatedRecord]) -> dict[tuple[str, str], RatedRecord]:
    return {(r.record.instance, r.record.algorithm): r for r in rated}


def rec(inst="a", alg="x", fam="online", status="feasible", obj=1.0, **kw) -> TaskRecord:
    return TaskRecord(inst, None, alg, fam, "exact", status, obj, None, 0.1, **kw)


def test_statuses_are_the_solver_statuses_and_error():
    """Tests that the status vocabulary is SolveStatus's values (which include "error")."""
    from coflowlab.solvers.result import SolveStatus

    assert set(STATUSES) == {s.value for s in SolveStatus} | {"error"}


def test_opt_reference_uses_proven_optimum_then_exact_bound(hand):
    """Tests the ``opt`` reference: i1's proven 100, i2's exact bound 190 (labelled as not
    proven), and no reference on i3, which has no exact method."""
    r = by_key(attach_reference(hand, "opt"))
    # i1: every ratio is objective / 100.
    for alg, ratio in [("exact-fluid", 1.0), ("lp-ov", 0.8), ("sincronia", 1.2), ("fifo", 1.1)]:
        assert r["i1", alg].reference_kind == "opt"
        assert r["i1", alg].reference_source == "exact-fluid"
        assert_allclose(r["i1", alg].ratio, ratio, rtol=1e-15)
    # i2: the time-limited exact method's bound 190 is the denominator.
    assert r["i2", "varys"].reference_kind == "bound (opt not proven)"
    assert r["i2", "varys"].reference_value == 190.0
    assert_allclose(r["i2", "exact-fluid"].ratio, 210 / 190, rtol=1e-15)
    assert_allclose(r["i2", "lp-ov"].ratio, 180 / 190, rtol=1e-15)
    assert r["i2", "fifo"].ratio is None
    assert r["i2", "fifo"].note == "no objective (status error)"
    # i3: no exact method ran: empty ratios with the reason, no crash.
    for alg in ("lp-ov", "sincronia", "varys", "fifo"):
        assert r["i3", alg].ratio is None
        assert r["i3", alg].reference_kind == ""
        assert r["i3", alg].note == "no exact method ran on this instance"


def test_relaxation_ratio_is_at_most_one_against_a_proven_optimum(hand):
    """Tests that a relaxation's ratio against a proven optimum is at most 1."""
    r = by_key(attach_reference(hand, "opt"))
    assert r["i1", "lp-ov"].ratio <= 1.0


def test_bound_reference_is_the_largest_lower_bound(hand):
    """Tests the ``bound`` reference: the largest relaxation/bound value (exact methods'
    bounds do not count), so lp-ov's ratio is 1 everywhere."""
    extra = TaskRecord("i1", None, "bound-smith", "bound", "fluid", "optimal", 70.0, None, 0.1)
    r = by_key(attach_reference([*hand, extra], "bound"))
    assert r["i1", "sincronia"].reference_value == 80.0  # lp-ov 80 beats bound-smith 70
    assert r["i1", "sincronia"].reference_source == "lp-ov"
    assert r["i1", "sincronia"].reference_kind == "bound"
    assert_allclose(r["i1", "exact-fluid"].ratio, 100 / 80, rtol=1e-15)
    assert_allclose(r["i1", "bound-smith"].ratio, 70 / 80, rtol=1e-15)
    assert_allclose(r["i3", "fifo"].ratio, 75 / 50, rtol=1e-15)
    assert all(r[i, "lp-ov"].ratio == 1.0 for i in ("i1", "i2", "i3"))


def test_named_reference_missing_or_failed_leaves_ratio_empty(hand):
    """Tests a named reference: its objective where it has one; a reason where it failed
    (fifo on i2) or did not run (exact-fluid on i3)."""
    r = by_key(attach_reference(hand, "fifo"))
    assert r["i1", "varys"].ratio == 1.0
    assert_allclose(r["i1", "exact-fluid"].ratio, 100 / 110, rtol=1e-15)
    assert r["i1", "varys"].reference_kind == "algorithm"
    assert r["i2", "sincronia"].ratio is None
    assert r["i2", "sincronia"].note == "reference 'fifo' has no value here (status error)"
    r = by_key(attach_reference(hand, "exact-fluid"))
    assert r["i3", "varys"].ratio is None
    assert r["i3", "varys"].note == "reference 'exact-fluid' did not run on this instance"


def test_unknown_reference_name_is_refused(hand):
    """Tests that a reference that ran nowhere (a typo) is refused, naming the algorithms."""
    with pytest.raises(ValueError, match=r"'sincronai'.*exact-fluid, fifo, lp-ov"):
        attach_reference(hand, "sincronai")


def test_smallest_proven_optimum_is_the_reference():
    """Tests that with a fluid (100) and a slotted (104) proven optimum, the reference is the
    smaller one, a lower bound on every schedule."""
    recs = [
        rec(alg="exact-fluid", fam="exact", status="optimal", obj=100.0),
        rec(alg="exact-slotted", fam="exact", status="optimal", obj=104.0),
    ]
    r = by_key(attach_reference(recs, "opt"))
    assert r["a", "exact-slotted"].reference_source == "exact-fluid"
    assert_allclose(r["a", "exact-slotted"].ratio, 1.04, rtol=1e-15)


def test_exact_method_without_value_or_bound_gives_a_reason():
    """Tests that an exact method that failed outright leaves no reference, with its status."""
    recs = [rec(alg="exact-fluid", fam="exact", status="error", obj=None), rec()]
    r = by_key(attach_reference(recs, "opt"))
    assert r["a", "x"].ratio is None
    assert r["a", "x"].note == "no exact method proved a value or bound (exact-fluid: error)"


def test_rejected_schedule_has_no_ratio_and_cheaper_than_opt_is_flagged():
    """Tests that a schedule the verifier rejected gets no ratio, and that a schedule
    cheaper than a proven optimum keeps its ratio but is flagged."""
    recs = [
        rec(alg="exact-fluid", fam="exact", status="optimal", obj=100.0),
        rec(alg="bad", obj=90.0, verified=False),
        rec(alg="cheap", obj=95.0, verified=True),
    ]
    r = by_key(attach_reference(recs, "opt"))
    assert r["a", "bad"].ratio is None
    assert r["a", "bad"].note == "the verifier rejected the schedule"
    assert r["a", "cheap"].ratio == 0.95
    assert "below the proven optimum" in r["a", "cheap"].note


def test_zero_reference_value_gives_no_ratio():
    """Tests that a reference value of 0 leaves the ratio empty instead of dividing by it."""
    recs = [rec(alg="trivial", fam="bound", status="optimal", obj=0.0), rec(obj=5.0)]
    r = by_key(attach_reference(recs, "bound"))
    assert r["a", "x"].ratio is None
    assert r["a", "x"].note == "reference value 0.0 is not positive"


def test_duplicate_task_is_refused():
    """Tests that the same (instance, seed, algorithm) twice is refused, naming both."""
    with pytest.raises(ValueError, match=r"records\[0\] and records\[1\] are both 'x'"):
        attach_reference([rec(), rec()], "opt")


def test_rated_records_are_sorted_by_instance_then_algorithm(hand):
    """Tests that the output order does not depend on the order tasks finished in."""
    shuffled = [hand[i] for i in np.random.default_rng(1).permutation(len(hand))]
    a = [(r.record.key, r.record.algorithm, r.ratio) for r in attach_reference(hand, "opt")]
    b = [(r.record.key, r.record.algorithm, r.ratio) for r in attach_reference(shuffled, "opt")]
    assert a == b
    assert [k for k, _, _ in a][:5] == [("i1", None)] * 5
    assert [alg for _, alg, _ in a][:5] == ["exact-fluid", "fifo", "lp-ov", "sincronia", "varys"]


def test_derived_flags():
    """Tests that proven_optimal and is_lower_bound follow from family and status."""
    assert rec(fam="exact", status="optimal").proven_optimal
    assert not rec(fam="exact", status="time_limit").proven_optimal
    assert not rec(fam="relaxation", status="optimal").proven_optimal
    assert rec(fam="relaxation", status="optimal").is_lower_bound
    assert rec(fam="bound", status="optimal").is_lower_bound
    assert not rec(fam="approximation").is_lower_bound
    r = rec(release=[1.0, 2.0], completion=[4.0, 3.0])
    assert r.cct.tolist() == [3.0, 1.0]
    assert not r.release.flags.writeable


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"fam": "heuristic"}, "family 'heuristic' is not one of"),
        ({"status": "done"}, "status 'done' is not one of"),
        ({"obj": float("nan")}, "objective must be finite"),
        ({"obj": "12"}, "objective must be a number"),
        ({"alg": ""}, "algorithm must be a non-empty string"),
        ({"release": [0.0], "completion": [1.0, 2.0]}, "different lengths"),
        ({"release": [0.0]}, "release and completion must be given together"),
        ({"release": [0.0], "completion": [np.inf]}, r"completion\[0\] is inf"),
        ({"release": [0.0], "completion": [1.0], "bin": ("XL",)}, r"bin\[0\] is 'XL'"),
        ({"release": [0.0], "completion": [1.0], "num_coflows": 2}, "num_coflows is 2"),
        ({"num_flows": -1}, "num_flows must be a non-negative int"),
    ],
)
def test_invalid_record_is_refused(kwargs, match):
    """Tests that each bad field is refused with a message naming the record and field."""
    with pytest.raises((ValueError, TypeError), match=match) as info:
        rec(**kwargs)
    if kwargs.get("alg", "x"):
        assert "record 'x' on instance 'a'" in str(info.value)


def test_negative_runtime_is_refused():
    """Tests that a negative runtime is refused."""
    with pytest.raises(ValueError, match="runtime must be >= 0"):
        TaskRecord("a", None, "x", "online", "exact", "feasible", 1.0, None, -0.5)
