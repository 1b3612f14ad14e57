"""The streamed fairness metrics (:class:`coflowlab.fairness.FairnessMeter`, ``simulate(...,
fairness=True)``) against the reference that walks a kept schedule
(:func:`coflowlab.fairness.fairness_summary`)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import coflowlab as cl
from coflowlab.fairness import FairnessMeter, fairness_summary
from coflowlab.heuristics import make_policy
from coflowlab.instances import fb_like, uniform

REL = 1e-9
"""The meter sums in another order than the reference: agreement to rounding."""

POLICIES = ("hug", "hug-cooperative", "coflex", "drf", "fair", "varys", "aalo", "fifo")


def _close(a: float, b: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return abs(a - b) <= REL * max(1.0, abs(a), abs(b))


def _assert_same(got: dict, ref: dict) -> None:
    assert got.keys() == ref.keys()
    bad = {k: (got[k], ref[k]) for k in ref if not _close(float(got[k]), float(ref[k]))}
    assert not bad, bad


def _instances():
    for seed in range(3):
        yield uniform(5, 8, density=0.5, release_rate=0.3, seed=seed)
        yield fb_like(12, num_ports=8, seed=seed)


@pytest.mark.parametrize("policy", POLICIES)
def test_simulate_streams_the_reference_metrics(policy):
    """Tests ``simulate(..., record=False, fairness=True)`` against ``fairness_summary`` of
    the kept schedule of the same run, for every instance and policy."""
    for inst in _instances():
        kept = cl.simulate(inst, make_policy(policy, inst))
        streamed = cl.simulate(inst, make_policy(policy, inst), record=False, fairness=True)
        assert streamed.schedule is None and streamed.fairness is not None
        np.testing.assert_array_equal(streamed.coflow_completion, kept.coflow_completion)
        _assert_same(streamed.fairness, fairness_summary(inst, kept.schedule))


def test_chunks_cut_at_any_instant_give_the_same_metrics():
    """Tests feeding a schedule in pieces cut at random instants (as the simulator streams)
    against feeding it whole and against the reference."""
    inst = fb_like(15, num_ports=8, seed=4)
    sched = cl.simulate(inst, make_policy("hug", inst)).schedule
    order = np.argsort(sched.time, kind="stable")
    t, f, r = sched.time[order], sched.flow[order], sched.rate[order]
    cuts = np.flatnonzero(np.diff(t) > 0) + 1
    rng = np.random.default_rng(0)
    ref = fairness_summary(inst, sched)
    for _ in range(5):
        pick = np.sort(rng.choice(cuts, size=min(6, len(cuts)), replace=False))
        meter = FairnessMeter(inst)
        for a, b in zip(np.r_[0, pick], np.r_[pick, len(t)], strict=True):
            meter.feed(t[a:b], f[a:b], r[a:b])
        _assert_same(meter.finish(sched.horizon), ref)


def test_hand_example_two_coflows_sharing_a_port():
    """Tests a hand-derived case on one port pair of capacity 1: A (2 units, released at 0)
    alone at rate 1 on [0, 1): progress 1·2/2 = 1. From 1, A (1 left) and B (2 units,
    released at 1) at 1/2 each: A's progress (1/2)·1/1 = 1/2, B's (1/2)·2/2 = 1/2. A ends at
    3; B (1 left) alone at rate 1 until 4: progress 1. Durations 1, 2, 1: busy 4, isolation
    guarantee min 1/2, initial 1, time-average (1 + 1 + 1)/4 = 3/4, the same mean progress;
    Jain index 1 (equal progress); both links full throughout (utilization 1)."""
    inst = cl.Instance.from_matrices([[[2.0]], [[2.0]]], release=[0.0, 1.0])
    meter = FairnessMeter(inst)
    meter.feed([0.0], [0], [1.0])
    meter.feed([1.0, 1.0], [0, 1], [0.5, 0.5])
    meter.feed([3.0, 3.0], [0, 1], [0.0, 1.0])
    meter.feed([4.0], [1], [0.0])
    s = meter.finish(4.0)
    assert s["instants"] == 3 and s["busy_time"] == pytest.approx(4.0, abs=1e-12)
    assert s["min_isolation_guarantee"] == pytest.approx(0.5, abs=1e-12)
    assert s["initial_isolation_guarantee"] == pytest.approx(1.0, abs=1e-12)
    assert s["mean_isolation_guarantee"] == pytest.approx(0.75, abs=1e-12)
    assert s["mean_progress"] == pytest.approx(0.75, abs=1e-12)
    assert s["utilization"] == pytest.approx(1.0, abs=1e-12)
    assert s["jain_index"] == pytest.approx(1.0, abs=1e-12)


def test_records_out_of_order_or_split_instants_are_refused():
    """Tests the feed contract: a call may not start at or before the previous call's last
    time (an instant split over two calls), nor go back in time within a call."""
    inst = cl.Instance.from_matrices([[[1.0]], [[1.0]]])
    meter = FairnessMeter(inst)
    meter.feed([0.0, 1.0], [0, 1], [0.5, 0.5])
    with pytest.raises(ValueError, match="time order"):
        meter.feed([1.0], [0], [0.0])
    with pytest.raises(ValueError, match="time order"):
        FairnessMeter(inst).feed([1.0, 0.0], [0, 1], [0.5, 0.5])


def test_a_rejecting_policy_is_measured_on_its_kept_records():
    """Tests deadline admission control (records kept for verification): the meter sees the
    whole schedule once, and a rejected coflow counts as active at progress 0, as in the
    reference."""
    inst = uniform(4, 10, density=0.6, seed=3)
    inst = inst.replace(coflow_deadline=np.full(inst.num_coflows, 40.0))
    res = cl.simulate(inst, make_policy("varys-deadline", inst), fairness=True)
    assert 0 < len(res.rejected) < inst.num_coflows  # 8 of 10 rejected at deadline 40
    _assert_same(res.fairness, fairness_summary(inst, res.schedule))
    assert res.fairness["min_isolation_guarantee"] == 0.0


def test_cli_fairness_without_records(tmp_path, capsys):
    """Tests ``simulate --fairness --json`` against the reference on the same run."""
    from coflowlab.cli import main
    from coflowlab.instances import write_instance

    inst = fb_like(10, num_ports=8, seed=1)
    path = tmp_path / "i.json"
    write_instance(inst, path)
    assert main(["simulate", str(path), "--policy", "hug", "--fairness", "--json"]) == 0
    got = json.loads(capsys.readouterr().out)["fairness"]
    ref = fairness_summary(inst, cl.simulate(inst, make_policy("hug", inst)).schedule)
    _assert_same(got, ref)


def test_a_flow_finished_within_the_verifiers_tolerance_is_not_active():
    """Tests the finish rule on the case that read progress 0 on the Facebook trace: late in a
    schedule (t = 1e6), flow A (1 byte) stops 1e-4 before its bytes are all sent (5e-5 left),
    which the verifier accepts (its time tolerance 1e-9 · 1e6 at capacity 1 is 1e-3 bytes).
    A is finished, so only B (rate 1/4 alone: progress 1/4) counts after it stops; kept
    active, A would read progress 0."""
    inst = cl.Instance.from_matrices([[[1.0, 0], [0, 0]], [[0, 0], [0, 1.0]]], release=[1e6, 1e6])
    t0 = 1e6
    sched = cl.FluidSchedule(
        inst.num_flows,
        np.array([t0, t0, t0 + 2 - 1e-4, t0 + 4]),
        np.array([0, 1, 0, 1]),
        np.array([0.5, 0.25, 0.0, 0.0]),
    )
    assert cl.verify(inst, sched).feasible
    ref = fairness_summary(inst, sched)
    assert ref["min_isolation_guarantee"] == pytest.approx(0.25, abs=1e-12)
    meter = FairnessMeter(inst)
    meter.feed(sched.time, sched.flow, sched.rate)
    _assert_same(meter.finish(sched.horizon), ref)
