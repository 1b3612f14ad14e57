"""The weighted CCT ``Σ w_j (C_j - r_j)`` (Yosemite's objective with release dates) in
:mod:`coflowlab.metrics` and in ``simulate``'s summary; values derived by hand."""

from __future__ import annotations

import math

import pytest

import coflowlab as cl
from coflowlab.heuristics import make_policy
from coflowlab.metrics import weighted_cct
from coflowlab.simulation_report import format_summary, simulation_summary


def three() -> cl.Instance:
    """Three single-flow coflows, weights 1, 2, 4, releases 0, 1, 2."""
    return cl.Instance.from_matrices(
        [[[1.0]], [[1.0]], [[1.0]]], weight=[1, 2, 4], release=[0, 1, 2]
    )


def test_weighted_cct_by_hand():
    """Tests CCTs 3, 2, 1 → Σ w CCT = 3 + 4 + 4 = 11, average 11/3."""
    total, avg = weighted_cct(three(), [3.0, 3.0, 3.0])
    assert total == 11.0 and avg == pytest.approx(11 / 3)


def test_unfinished_coflows_are_left_out():
    """Tests that a ``nan`` completion counts in neither the sum nor the average."""
    total, avg = weighted_cct(three(), [3.0, math.nan, 3.0])
    assert total == 7.0 and avg == 3.5
    assert math.isnan(weighted_cct(three(), [math.nan] * 3)[1])


def test_summary_has_weighted_cct_only_for_unequal_weights():
    """Tests the summary keys and the printed line: present with weights 1, 2, 4; absent when
    all weights are equal (then it is a multiple of the total CCT)."""
    s = simulation_summary(three(), [3.0, 3.0, 3.0], policy="x")
    assert s["total_weighted_cct"] == 11.0 and s["avg_weighted_cct"] == pytest.approx(11 / 3)
    assert "weighted CCT Σ w (C - r) 11.00" in format_summary(s)
    equal = three().replace(coflow_weight=[2.0, 2.0, 2.0])
    s = simulation_summary(equal, [3.0, 3.0, 3.0], policy="x")
    assert "total_weighted_cct" not in s and "weighted CCT" not in format_summary(s)


def test_simulate_summary_uses_the_verified_completions():
    """Tests the weighted CCT of a simulation against one computed from the verifier's
    completion times (one port, sizes 1, 1, 1 released at 0, 1, 2: each alone, CCT 1)."""
    inst = three()
    res = cl.simulate(inst, make_policy("fair"))
    assert res.verified
    assert res.report is not None
    s = simulation_summary(inst, res.report.coflow_completion)
    assert s["total_weighted_cct"] == pytest.approx(1 + 2 + 4)
