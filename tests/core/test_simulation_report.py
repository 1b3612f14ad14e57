"""Tests of the simulation summary (``coflowlab.simulation_report``)."""

from __future__ import annotations

import pytest

from coflowlab import Instance
from coflowlab.simulation_report import simulation_summary


def three_with_deadlines() -> Instance:
    """Three unit coflows on one port with deadlines 1, 1.5 and 2 (relative to release 0)."""
    return Instance.from_matrices([[[1.0]], [[1.0]], [[1.0]]], deadline=[1.0, 1.5, 2.0])


def test_deadline_met_means_cct_at_most_the_deadline():
    """Tests that a coflow meets its deadline when its CCT is at most the deadline."""
    doc = simulation_summary(three_with_deadlines(), [1.0, 2.0, 3.0])
    assert doc["deadlines"] == 3
    assert doc["deadlines_met_pct"] == pytest.approx(100.0 / 3)


def test_met_mask_and_missing_coflows_override_the_rule():
    """Tests that an explicit ``met`` mask (CoflowSim's tolerant rule) replaces the strict
    check, and that ``missing`` coflows (rejected, not in the instance) count as missed."""
    doc = simulation_summary(
        three_with_deadlines(), [1.0, 2.0, 3.0], met=[True, True, False], missing=1
    )
    assert doc["deadlines"] == 4
    assert doc["deadlines_met_pct"] == pytest.approx(50.0)
