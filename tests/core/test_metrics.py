"""Tests of metrics derived from verified completion times."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_equal

from coflowlab import Instance, Units, metrics


def binned_instance() -> Instance:
    """Four coflows, one per Varys bin (sizes in MB): SN, LN, SW, LW."""
    wide = 51
    return Instance(
        wide,
        np.repeat([0, 1, 2, 3], [1, 1, wide, wide]),
        np.concatenate([[0], [0], np.arange(wide), np.arange(wide)]),
        np.zeros(2 + 2 * wide, dtype=int),
        np.concatenate([[4.99], [5.0], np.full(wide, 1.0), np.full(wide, 6.0)]),
        units=Units("MB", "ms"),
    )


def test_varys_bins_use_5_mb_and_50_flows():
    """Tests the bin thresholds: short < 5 MB (strict), narrow <= 50 flows."""
    assert_equal(metrics.varys_bins(binned_instance()).tolist(), ["SN", "LN", "SW", "LW"])


def test_varys_bins_convert_units():
    """Tests that the 5 MB threshold is converted to the instance's size unit."""
    inst = binned_instance()
    in_bytes = inst.replace(flow_size=inst.flow_size * 1e6, units=Units("B", "ms"))
    assert_equal(metrics.varys_bins(in_bytes), metrics.varys_bins(inst))


def test_varys_bins_need_a_threshold_for_unitless_sizes():
    """Tests that dimensionless sizes need an explicit threshold."""
    inst = Instance.from_matrices([[[1.0]]])
    with pytest.raises(ValueError, match="short"):
        metrics.varys_bins(inst)
    assert metrics.varys_bins(inst, short=0.5).tolist() == ["LN"]


def test_weighted_completion_cct_and_deadlines():
    """Tests Σ w C, CCT from release, and deadline accounting."""
    inst = Instance.from_matrices(
        [[[1.0]], [[2.0]], [[3.0]]], release=[0, 1, 2], weight=[1, 2, 3], deadline=[None, 2, 1]
    )
    completion = np.array([1.0, 3.0, 5.0])
    assert metrics.weighted_completion_time(inst, completion) == 1 + 6 + 15
    assert_allclose(metrics.cct(inst, completion), [1.0, 2.0, 3.0])
    assert_equal(metrics.deadlines_met(inst, completion), [True, True, False])


def test_summary_and_bin_table():
    """Tests percentiles and the per-bin table, including an empty bin."""
    s = metrics.summarize(np.arange(1, 101, dtype=float))
    assert (s.count, s.average, s.maximum) == (100, 50.5, 100.0)
    assert s.p95 == pytest.approx(95.05)
    inst = binned_instance().subset([0, 1, 3])
    table = metrics.bin_table(inst, np.array([1.0, 2.0, 4.0]))
    assert table["SW"].count == 0 and np.isnan(table["SW"].average)
    assert table["LW"].average == 4.0
    assert table["all"].average == pytest.approx(7 / 3)
