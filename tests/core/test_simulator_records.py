"""Tests of the simulator's record buffer: the records the flow state writes straight into it
(one per rate change), with hand-derived values, and the same records whatever the buffer's
initial size or the streaming chunk size."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from numpy.testing import assert_array_equal

import coflowlab.simulator as sim
from coflowlab import Decision, Instance, simulate
from coflowlab.instances import uniform


class Split:
    """Non-clairvoyant: every active flow gets 1 / (number of active flows)."""

    name: ClassVar[str] = "toy-split"
    clairvoyant: ClassVar[bool] = False

    def reset(self, view):
        pass

    def decide(self, state):
        return Decision(np.full(len(state.flows), 1.0 / len(state.flows)))


class Blind:
    """Equal split of each port among its active flows (feasible on unit ports)."""

    name: ClassVar[str] = "toy-port-split"
    clairvoyant: ClassVar[bool] = False

    def reset(self, view):
        self.m = view.num_ports

    def decide(self, state):
        n_in = np.bincount(state.src, minlength=self.m)
        n_out = np.bincount(state.dst, minlength=self.m)
        return Decision(np.minimum(1 / n_in[state.src], 1 / n_out[state.dst]))


def test_records_by_hand():
    """Tests the exact records of a two-flow run: flows of sizes 1 and 2 share ingress 0 at
    1/2 each; flow 0 completes at 2 (1 / 0.5), a record at rate 0; the policy then gives
    flow 1 the whole port (it has 2 − 1 = 1 left), and it completes at 3."""
    inst = Instance.from_matrices([[[1.0, 2.0], [0, 0]]])
    res = simulate(inst, Split())
    s = res.schedule
    assert res.num_records == s.num_records == 5
    assert_array_equal(s.time, [0.0, 0.0, 2.0, 2.0, 3.0])
    assert_array_equal(s.flow, [0, 1, 0, 1, 1])
    assert_array_equal(s.rate, [0.5, 0.5, 0.0, 1.0, 0.0])
    assert res.flow_completion.tolist() == [2.0, 3.0]


def test_records_do_not_depend_on_buffer_sizes(monkeypatch):
    """Tests that a buffer starting at one record (so it grows at almost every event) keeps
    the same records as the default one, and that streaming them to the verifier in chunks
    of one record (kept whole per time group) gives the same completion times and counts."""
    inst = uniform(5, 12, release_rate=1.0, seed=11)
    ref = simulate(inst, Blind())
    monkeypatch.setattr(sim._Recorder, "initial", 1)
    small = simulate(inst, Blind())
    for name in ("time", "flow", "rate"):
        assert_array_equal(getattr(small.schedule, name), getattr(ref.schedule, name))
    monkeypatch.setattr(sim, "STREAM_RECORDS", 1)
    streamed = simulate(inst, Blind(), record=False)
    assert streamed.verified and streamed.num_records == ref.num_records
    assert_array_equal(streamed.flow_completion, ref.flow_completion)
    # not kept and not verified: records are only counted
    counted = simulate(inst, Blind(), record=False, verify_schedule=False)
    assert counted.num_records == ref.num_records
    assert_array_equal(counted.num_events, ref.num_events)
