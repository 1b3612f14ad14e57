"""CODA (Zhang et al., SIGCOMM 2016): identification (Rough-DBSCAN), accuracy, hidden labels,
late binding, intra-coflow priority; our worked cases C-1..C-4 and invariants D-C1..D-C12
(expected values derived by hand; docs/philae-coda.md)."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import pytest

import coflowlab as cl
from coflowlab.heuristics import Aalo, FairSharing
from coflowlab.heuristics.coda import Coda
from coflowlab.heuristics.coda_identify import (
    FlowFeatures,
    RoughDBSCAN,
    dbscan,
    identification_accuracy,
    identify,
)
from coflowlab.instance import Coflow, Instance
from coflowlab.instances import spread_flow_starts
from coflowlab.policy import Decision, InstanceView, ObservedState
from coflowlab.simulator import SimulationError

TIMES = [0, 20, 50, 400, 430, 560]


# ------------------------------------------------------------------ identification (C-2)
def test_dbscan_and_rough_dbscan_c2() -> None:
    feats = FlowFeatures(time=TIMES)
    assert dbscan(feats, 100).tolist() == [0, 0, 0, 3, 3, 5]
    rd = RoughDBSCAN(feats, eps=100, tau=30)
    rd.add(np.arange(6))
    assert rd.leaders.tolist() == [0, 2, 3, 4, 5]  # f2 follows f1; f5 is 30 from f4: a leader
    assert rd.leader_of.tolist() == [0, 0, 2, 3, 4, 5]
    assert rd.labels(np.arange(6)).tolist() == [0, 0, 0, 3, 3, 5]


def test_rough_dbscan_diverges_c2() -> None:
    feats = FlowFeatures(time=[0, 55, 150])
    assert len(set(dbscan(feats, 100).tolist())) == 1
    rd = RoughDBSCAN(feats, eps=100, tau=60)
    rd.add(np.arange(3))
    assert rd.labels(np.arange(3)).tolist() == [0, 0, 2]


def test_departures_c2_d_c5() -> None:
    rd = RoughDBSCAN(FlowFeatures(time=TIMES), eps=100, tau=30)
    rd.add(np.arange(6))
    rd.remove(np.array([2]))  # a leader with no other follower: deleted
    assert 2 not in rd.leaders.tolist()
    rd.remove(np.array([0]))  # a leader with follower f2: kept (a ghost)
    assert 0 in rd.leaders.tolist()
    assert rd.labels(np.array([1])).tolist() == [0]
    rd.remove(np.array([1]))
    assert 0 not in rd.leaders.tolist()


def test_incremental_batches_d_c4() -> None:
    feats = FlowFeatures(time=TIMES)
    one = RoughDBSCAN(feats, eps=100, tau=30)
    one.add(np.arange(6))
    two = RoughDBSCAN(feats, eps=100, tau=30)
    for part in (np.arange(2), np.arange(2, 5), np.array([5])):
        two.add(part)
    assert one.leaders.tolist() == two.leaders.tolist()
    assert np.array_equal(one.leader_of, two.leader_of)


def test_small_tau_equals_dbscan_d_c3() -> None:
    rng = np.random.default_rng(0)
    t = np.sort(rng.uniform(0, 2000, 60))
    feats = FlowFeatures(time=t)
    rd = RoughDBSCAN(feats, eps=50, tau=float(np.diff(t).min()) / 2)
    rd.add(np.arange(60))
    assert np.array_equal(rd.labels(np.arange(60)), dbscan(feats, 50))


def test_distance_c5_d_c6() -> None:
    f = FlowFeatures(time=[0.0, 0.05], dst=[0, 1], time_weight=3.825, port_weight=0.217)
    assert f.distance_to(0, np.array([1]))[0] == pytest.approx(0.4760, abs=1e-4)
    d = f.distances(np.array([0, 1]), np.array([0, 1]))
    assert np.allclose(d, d.T) and np.allclose(np.diag(d), 0)


# ------------------------------------------------------------------ accuracy (C-3)
def test_accuracy_c3() -> None:
    truth = [0, 0, 0, 1, 1, 1]
    acc = identification_accuracy(truth, [1, 1, 1, 1, 2, 2])
    assert (acc.precision, acc.recall) == pytest.approx((0.875, 5 / 6))
    assert acc.accuracy == pytest.approx(0.8542, abs=1e-4)
    one = identification_accuracy(truth, [0] * 6)
    assert (one.precision, one.recall, one.accuracy) == pytest.approx((0.5, 1.0, 0.75))
    single = identification_accuracy(truth, list(range(6)))
    assert (single.precision, single.recall) == pytest.approx((1.0, 1 / 3))
    assert identification_accuracy(truth, [5, 5, 5, 9, 9, 9]) == (1.0, 1.0)


def test_accuracy_rejects_length_mismatch() -> None:
    with pytest.raises(ValueError, match="groups"):
        identification_accuracy([0, 1], [0])


def _separated(spread: float, seed: int) -> Instance:
    # 8 coflows of 3 to 6 flows, released 1000 apart; flows spread over [0, spread]
    rng = np.random.default_rng(seed)
    cofs = []
    for k in range(8):
        w = int(rng.integers(3, 7))
        flows = [(int(rng.integers(0, 4)), int(rng.integers(0, 4)), 1.0) for _ in range(w)]
        cofs.append(Coflow(flows, release=1000.0 * k))
    return spread_flow_starts(Instance.from_coflows(cofs, 4), spread, seed=seed)


def test_identification_accuracy_by_spread() -> None:
    # spread 100 < eps = 200 < gap 900: every coflow is exactly one cluster (by hand: flows
    # of one coflow are within 100 of each other, coflows at least 900 apart).
    for seed in range(3):
        inst = _separated(100.0, seed)
        assert identification_accuracy(inst, identify(inst, eps=200, tau=50)) == (1.0, 1.0)
    # spread 3000 >> the gap: coflows overlap, identification must lose precision
    mean = np.mean(
        [identification_accuracy(_separated(3000.0, s), identify(_separated(3000.0, s),
                                 eps=200, tau=50)).precision for s in range(3)]
    )  # fmt: skip
    assert mean < 0.9


# ------------------------------------------------------------------ hidden labels
class _Spy:
    """Records what a policy sees; runs fair sharing."""

    name: ClassVar[str] = "spy"
    clairvoyant: ClassVar[bool] = False

    def __init__(self) -> None:
        self.inner = FairSharing()
        self.seen: list[tuple[np.ndarray, np.ndarray]] = []

    def reset(self, view: InstanceView) -> None:
        self.view = view
        self.inner.reset(view)

    def decide(self, state: ObservedState) -> Decision:
        self.seen.append((np.asarray(state.coflow).copy(), np.asarray(state.coflow_sent).copy()))
        return self.inner.decide(state)


def test_hidden_labels_show_each_flow_as_its_own_coflow() -> None:
    inst = Instance.from_coflows([Coflow([(0, 0, 1.0), (1, 1, 2.0)]), Coflow([(0, 1, 3.0)])], 2)
    spy = _Spy()
    res = cl.simulate(inst, spy, hide_labels=True)
    assert spy.view.labels_hidden and spy.view.num_coflows == 3
    assert spy.view.flow_coflow.tolist() == [0, 1, 2] and len(spy.view.dependencies) == 0
    coflow, sent = spy.seen[-1]
    assert set(coflow.tolist()) <= {0, 1, 2} and len(sent) == 3
    # the metrics still use the true coflows. Fair sharing: every flow at 1/2 (flow 2 shares
    # ingress 0 with flow 0 and egress 1 with flow 1); flow 0 ends at 2; flows 1 and 2 then
    # share egress 1 at 1/2: flow 1 (1 left) ends at 4, flow 2 (1 left at 4) at 5.
    # Coflow 0 = {flows 0, 1}: 4; coflow 1 = {flow 2}: 5.
    assert res.coflow_completion.tolist() == pytest.approx([4.0, 5.0])
    visible = _Spy()
    cl.simulate(inst, visible)
    assert not visible.view.labels_hidden and visible.view.num_coflows == 2


def test_hidden_labels_default_is_the_policy_class_attribute() -> None:
    inst = Instance.from_coflows([Coflow([(0, 0, 1.0)])], 1)
    with pytest.raises(ValueError, match="hide_labels"):
        cl.simulate(inst, Coda(), hide_labels=False)
    assert cl.simulate(inst, Coda()).verified


class _Rejecter(_Spy):
    """Fair sharing that rejects pseudo-coflow 0 at once."""

    def decide(self, state: ObservedState) -> Decision:
        d = self.inner.decide(state)
        return Decision(update=d.update, reject=np.array([0]))


def test_hidden_labels_forbid_rejection() -> None:
    inst = Instance.from_coflows([Coflow([(0, 0, 5.0)]), Coflow([(0, 0, 5.0)])], 1)
    with pytest.raises(SimulationError, match="hidden"):
        cl.simulate(inst, _Rejecter(), hide_labels=True)


# ------------------------------------------------------------------ scheduling (C-1, C-4)
def test_late_binding_c4() -> None:
    # Y = {f4 @ 400, f5 @ 430, f6 @ 560} with eps = 100: clusters {f4, f5} and {f6}
    # (f4 and f5 are still active while f6 runs, 560-610; one queue, so FIFO decides;
    # groups record each flow's last decision while active)
    inst = Instance.from_coflows([Coflow([(0, 0, 500.0), (1, 1, 500.0), (2, 2, 50.0)])], 3)
    inst = inst.replace(flow_release=[400.0, 430.0, 560.0], coflow_release=[400.0])
    coda = Coda(eps=100, tau=25, d=150, num_queues=1)
    cl.simulate(inst, coda)
    assert coda.groups.tolist() == [0, 0, 2]  # f6 was its own cluster (gap 130 > eps)
    assert coda.bound_groups[2] == 0  # ... but bound to K2* = {f4, f5, f6} (130 <= 150)
    before = identification_accuracy(inst, coda.groups)
    after = identification_accuracy(inst, coda.bound_groups)
    assert before.recall == pytest.approx(2 / 3) and after.recall == 1.0  # D-C8
    short = Coda(eps=100, tau=25, d=100, num_queues=1)  # 100 < 130: no extension
    cl.simulate(inst, short)
    assert short.bound_groups[2] == 2


def test_pioneer_and_straggler_arithmetic_c1() -> None:
    # No error: C1's 10 flows first (start 0), C2's (start 0.001) after: CCTs 1 and 2.
    inst = Instance.from_coflows([Coflow([(0, 0, 0.1)] * 10), Coflow([(0, 0, 0.1)] * 10)], 1)
    inst = inst.replace(flow_release=[0.0] * 10 + [0.001] * 10, coflow_release=[0.0, 0.001])
    res = cl.simulate(inst, Coda(eps=0.0005, tau=0.0001, d=0, intra_priority=False))
    assert res.cct.tolist() == pytest.approx([1.0, 1.999])
    # Straggler: one C1 flow starts with C2, so it is identified into C2; fair sharing inside
    # a coflow finishes it with C2's flows: CCT(C1) = 2 (C-1: average 2 instead of 1.5).
    strag = inst.replace(flow_release=[0.0] * 9 + [0.001] * 11)
    out = cl.simulate(strag, Coda(eps=0.0005, tau=0.0001, d=0, intra_priority=False)).cct
    assert out.tolist() == pytest.approx([2.0, 1.999])
    # late binding with d >= 0.001 puts the straggler back into C1's extended coflow
    fixed = cl.simulate(strag, Coda(eps=0.0005, tau=0.0001, d=0.002, intra_priority=False)).cct
    assert fixed[0] < 2.0


def test_without_both_equals_aalo_strict_d_c12() -> None:
    # perfect identification (coflows 1000 apart, flows of a coflow start together): CODA with
    # d = 0 and no intra-coflow priority is Aalo with strict priority and Δ = 0
    from coflowlab.instances import uniform

    base = uniform(4, 6, density=0.6, sizes=(5, 40), seed=5)
    inst = base.replace(coflow_release=np.arange(6) * 1000.0 / 50)
    assert identification_accuracy(inst, identify(inst, eps=5, tau=1)) == (1.0, 1.0)
    coda = cl.simulate(inst, Coda(eps=5, tau=1, d=0, intra_priority=False))
    aalo = cl.simulate(inst, Aalo(weights="strict", delta=0.0))
    assert coda.coflow_completion == pytest.approx(aalo.coflow_completion, rel=1e-9)


def test_coda_on_spread_instance_verified_and_deterministic() -> None:
    from coflowlab.instances import uniform

    inst = spread_flow_starts(uniform(5, 10, density=0.6, release_rate=0.05, seed=2), 5.0, seed=2)
    a = cl.run("coda", inst, eps="10", tau="2", d="15")
    b = cl.run("coda", inst, eps="10", tau="2", d="15")
    assert a.report is not None and a.report.feasible
    assert np.array_equal(a.completion, b.completion)


def test_parameters_name_the_field() -> None:
    with pytest.raises(ValueError, match="eps"):
        Coda(eps=-1)
    with pytest.raises(ValueError, match="num_flow_queues"):
        Coda(num_flow_queues=0)


# ------------------------------------------------------------------ compiled path
def _same_run(inst: Instance, **kw: object) -> None:
    """The compiled path against the reference path (``compiled=False``): same events, same
    per-coflow completion times (to 1e-12 relative), same identified groups."""
    ref, fast = Coda(compiled=False, **kw), Coda(compiled=True, **kw)  # type: ignore[arg-type]
    a = cl.simulate(inst, ref, record=False)
    b = cl.simulate(inst, fast, record=False)
    assert a.verified and b.verified
    assert a.num_events == b.num_events
    np.testing.assert_allclose(b.coflow_completion, a.coflow_completion, rtol=1e-12, atol=0)
    assert np.array_equal(fast.groups, ref.groups)
    assert np.array_equal(fast.bound_groups, ref.bound_groups)


@pytest.mark.parametrize("spread", [0.5, 3.0])
def test_compiled_path_equals_reference(spread: float) -> None:
    from coflowlab.instances import spread_flow_starts, uniform

    inst = spread_flow_starts(
        uniform(6, 8, density=0.6, release_rate=0.3, seed=1), spread, arrival_scale=0.5, seed=1
    )
    small = dict(eps=1.0, tau=0.25, first_threshold=2.0)
    _same_run(inst, d=1.5, flow_first_threshold=0.5, **small)
    _same_run(inst, d=1.5, port_weight=0.5, **small)
    _same_run(inst, d=0.0, intra_priority=False, **small)


def test_compiled_path_equals_reference_on_wide_groups() -> None:
    # fb-like shuffles on few ports: groups with more flows than a quarter of the port
    # pairs take max_min_fair's port-pair filling
    from coflowlab.instances import fb_like, spread_flow_starts

    _same_run(spread_flow_starts(fb_like(12, num_ports=10, seed=0), 100.0, seed=0))


# ------------------------------------------------------------------ compiled kernels
def _first_near_by_pairs(t, dport, row_min, d, tw, pw):
    """:func:`first_near` by every pair of rows, with FlowFeatures' own distances."""
    feats = FlowFeatures(time=t, dst=dport, time_weight=tw, port_weight=pw)
    rows = np.arange(len(t))
    near = feats.distances(rows, rows) <= d  # near[q, r]: row q within d of row r
    return np.where(near, row_min[:, None], np.iinfo(np.int64).max).min(axis=0)


@pytest.mark.parametrize("seed", range(40))
def test_first_near_equals_every_pair(seed: int) -> None:
    """The sliding-window minimum (no port term) and the pairwise loop (with one) against a
    check of every pair of rows; times drawn on a coarse grid so that distances equal to
    ``d`` and ties occur."""
    from coflowlab.heuristics._coda_jit import _distinct, first_near

    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 40))
    times = rng.integers(0, 30, n) * rng.choice([0.5, 0.1, 1 / 3])
    ports = rng.integers(0, 3, n)
    d = float(rng.choice([0.0, 0.5, 1.0, 2.5, 100.0]))
    tw, pw = float(rng.choice([1.0, 0.3, 0.0])), float(rng.choice([0.0, 0.0, 0.7, 4.0]))
    key = ports if pw else np.zeros(n, dtype=np.int64)
    first, inv = _distinct(times, key)
    assert np.array_equal(
        inv, np.unique(np.stack([times, key], 1), axis=0, return_inverse=True)[1].ravel()
    )
    assert np.array_equal(times[first][inv], times) and np.array_equal(key[first][inv], key)
    row_min = rng.integers(0, 10, len(first))
    got = first_near(times[first], key[first], row_min, d, tw, pw)
    want = _first_near_by_pairs(times[first], key[first], row_min, d, tw, pw)
    assert np.array_equal(got, want)
