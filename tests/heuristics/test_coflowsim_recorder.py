"""Tests of the CoflowSim recorder's tail shifting (``coflowlab.heuristics.coflowsim.recorder``):
the compiled pass (:func:`coflowlab.heuristics.coflowsim.kernels.shift_tails`) writes the same
doubles as the NumPy definition, bit for bit, on random record sets shaped like an engine's
(records in time order, several flows, records of one flow at one time, flows asked for more
than they sent); records out of time order fall back to the definition."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_array_equal

from coflowlab.heuristics.coflowsim.recorder import _GRID, _QMS, _shift_tails


def records(rng: np.random.Generator, num_flows: int, per_flow: int):
    """Random rate records in global time order (quantum starts, MB per ms on the grid), the
    way an engine writes them, and for each flow a last quantum after its records and the MB
    its last quantum lacks."""
    q = np.sort(rng.integers(0, 40, size=(num_flows, per_flow)), axis=1)
    t = (q * _QMS).ravel().astype(np.float64)
    f = np.repeat(np.arange(num_flows), per_flow)
    r = np.floor(rng.uniform(0.0, 0.125, size=t.size) * _GRID) / _GRID
    r[rng.random(t.size) < 0.1] = 0.0
    order = np.lexsort((f, t))  # global time order, flows interleaved
    t, f, r = t[order], f[order], r[order]
    asked = np.flatnonzero(rng.random(num_flows) < 0.7)
    asked = asked if asked.size else np.array([0])
    last_q = q[asked, -1] + rng.integers(0, 4, size=asked.size)  # may end on its last record
    need = rng.uniform(0.0, 2.0, size=asked.size) * rng.choice([1e-3, 0.1, 10.0], asked.size)
    return last_q, asked, need, t, f, r


@pytest.mark.parametrize("seed", range(100))
def test_compiled_shift_equals_numpy_definition(seed):
    """Tests that the compiled pass frees the same MB per flow and leaves the same rates as
    the NumPy definition, bit for bit."""
    rng = np.random.default_rng(seed)
    last_q, flows, need, t, f, r = records(rng, int(rng.integers(5, 30)), int(rng.integers(2, 9)))
    r_numpy, r_compiled = r.copy(), r.copy()
    freed_numpy = _shift_tails(last_q, flows, need, t, f, r_numpy, compiled=False)
    freed_compiled = _shift_tails(last_q, flows, need, t, f, r_compiled, compiled=True)
    assert np.any(r_numpy != r), "the case shifts nothing"
    assert_array_equal(freed_compiled, freed_numpy)
    assert_array_equal(r_compiled, r_numpy)


def test_records_out_of_time_order_use_the_definition():
    """Tests that records of a flow out of time order (the compiled pass refuses them) give
    the definition's result: the later segment gives up its bytes first."""
    t = np.array([16.0, 0.0])  # flow 0: its segment from 0 written after the one from 16
    f = np.array([0, 0])
    r = np.array([0.125, 0.125])
    r_compiled = r.copy()
    freed = _shift_tails(np.array([4]), np.array([0]), np.array([0.5]), t, f, r_compiled)
    r_numpy = r.copy()
    expected = _shift_tails(np.array([4]), np.array([0]), np.array([0.5]), t, f, r_numpy,
                            compiled=False)  # fmt: skip
    assert_array_equal(freed, expected)
    assert_array_equal(r_compiled, r_numpy)
    # the segment [16, 32) carried 2 MB; 0.5 of them are freed there, none from [0, 16)
    assert freed.tolist() == [0.5]
    assert r_compiled[1] == 0.125 and r_compiled[0] < 0.125
