"""Tests for Aalo's D-CLAS (``coflowlab.heuristics.aalo``): the rules of Chowdhury's thesis
§6.5-§6.6 and Appendix C, as read in docs/aalo.md, and their invariants.

Test-case identifiers (AAL-n) and the numbered invariants ("invariant 7") are defined in
docs/test-cases.md (#aal-1 ... #aal-16, #aalo-invariants)."""

from __future__ import annotations

import itertools
import math
from typing import Any, ClassVar

import numpy as np
import pytest
from instance_kinds import GENERATED, unequal_capacities
from numpy.testing import assert_, assert_allclose, assert_equal

from coflowlab import Coflow, Instance, simulate
from coflowlab.allocation import max_min_fair
from coflowlab.heuristics.aalo import (
    CROSS_TOL,
    MAX_ROUNDS,
    Aalo,
    AaloUncoordinated,
    coflow_ids,
    dclas_allocation,
)
from coflowlab.instances import fb_like, uniform
from coflowlab.instances.examples import EXPECTED, aalo_identical, aalo_theorem_c11
from coflowlab.policy import Decision, InstanceView, ObservedState
from coflowlab.simulator import SimulationResult

SMALL = {"num_queues": 4, "first_threshold": 5.0, "factor": 3.0}
"""Queues [0, 5), [5, 15), [15, 45), [45, ∞): demotions happen on small random instances."""


# ---------------------------------------------------------------------------------- helpers
def _link(*coflows: Coflow, ports: int = 1) -> Instance:
    return Instance.from_coflows(list(coflows), ports)


def _sent_curve(
    result: SimulationResult, flows: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Breakpoints, bytes sent by ``flows`` together at them, and the total rate after them."""
    sch = result.schedule
    assert sch is not None
    keep = np.isin(sch.flow, flows)
    times, flow, rate = sch.time[keep], sch.flow[keep], sch.rate[keep]
    current: dict[int, float] = {}
    points = [0.0]
    totals = [0.0]
    for t, f, r in zip(times.tolist(), flow.tolist(), rate.tolist(), strict=True):
        total = totals[-1] - current.get(f, 0.0) + r
        current[f] = r
        if t == points[-1]:
            totals[-1] = total
        else:
            points.append(t)
            totals.append(total)
    pts = np.asarray(points)
    tot = np.asarray(totals)
    sent = np.concatenate([[0.0], np.cumsum(tot[:-1] * np.diff(pts))])
    return pts, sent, tot


def _crossing(curve: tuple[np.ndarray, np.ndarray, np.ndarray], level: float) -> float:
    """First time the piecewise-linear byte count reaches ``level`` (``inf`` if never)."""
    pts, sent, tot = curve
    for k in range(len(pts)):
        if sent[k] >= level * (1 - 1e-12):
            return float(pts[k])
        end = sent[k + 1] if k + 1 < len(pts) else (math.inf if tot[k] > 0 else sent[k])
        if tot[k] > 0 and end >= level * (1 - 1e-12):
            return float(pts[k] + (level - sent[k]) / tot[k])
    return math.inf


def _bytes_at(curve: tuple[np.ndarray, np.ndarray, np.ndarray], t: float) -> float:
    pts, sent, tot = curve
    k = int(np.searchsorted(pts, t, side="right")) - 1
    return float(sent[k] + tot[k] * (t - pts[k]))


def _active(result: SimulationResult, t: float) -> np.ndarray:
    inst = result.instance
    eps = 1e-9 * max(1.0, t)
    return (inst.flow_release <= t + eps) & (result.flow_completion > t + eps)


def _saturation(inst: Instance, rates: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    cap_in = np.asarray(inst.fabric.ingress_capacity, dtype=float)
    cap_out = np.asarray(inst.fabric.egress_capacity, dtype=float)
    load_in = np.bincount(inst.flow_src, weights=rates, minlength=inst.num_ports)
    load_out = np.bincount(inst.flow_dst, weights=rates, minlength=inst.num_ports)
    return load_in >= cap_in * (1 - 1e-7), load_out >= cap_out * (1 - 1e-7)


def assert_work_conserving(result: SimulationResult) -> None:
    """Every active flow has a saturated port, at every rate change (no dependencies)."""
    inst = result.instance
    sch = result.schedule
    assert sch is not None
    for t in np.unique(sch.time):
        rates = sch.rates_at(float(t))
        sat_in, sat_out = _saturation(inst, rates)
        act = np.flatnonzero(_active(result, float(t)))
        idle = act[~(sat_in[inst.flow_src[act]] | sat_out[inst.flow_dst[act]])]
        assert_(len(idle) == 0, f"t={t}: flows {idle.tolist()} have spare capacity at both ports")


def _queue_at(policy: Aalo, n: int, t: float) -> np.ndarray:
    q = np.zeros(n, dtype=np.int64)
    for when, c, _port, queue in policy.demotions:
        if when <= t + 1e-9 * max(1.0, t):
            q[c] = max(q[c], queue)
    return q


def assert_fifo_within_queues(result: SimulationResult, policy: Aalo) -> None:
    """Invariant 5 (docs/aalo.md#pseudocode-4): a later coflow of a queue never gets rate at a port
    where an earlier coflow of the same queue has a flow that could use more (its other port is not
    saturated). FIFO key: (release, index); coordinated policies, no dependencies."""
    inst = result.instance
    sch = result.schedule
    assert sch is not None
    n = inst.num_coflows
    key = np.lexsort((np.arange(n), inst.coflow_release))
    rank = np.empty(n, dtype=np.int64)
    rank[key] = np.arange(n)
    fc = inst.flow_coflow
    for t in np.unique(sch.time):
        rates = sch.rates_at(float(t))
        sat_in, sat_out = _saturation(inst, rates)
        q = _queue_at(policy, n, float(t))
        act = _active(result, float(t))
        for ports, other_sat, port_count in (
            (inst.flow_src, sat_out[inst.flow_dst], inst.num_ports),
            (inst.flow_dst, sat_in[inst.flow_src], inst.num_ports),
        ):
            for p in range(port_count):
                here = np.flatnonzero(act & (ports == p))
                if len(here) < 2:
                    continue
                served = here[rates[here] > 1e-9]
                hungry = here[~other_sat[here]]
                for f2 in served:
                    bad = hungry[(q[fc[hungry]] == q[fc[f2]]) & (rank[fc[hungry]] < rank[fc[f2]])]
                    assert_(
                        len(bad) == 0,
                        f"t={t}, port {p}: flow {f2} (coflow {fc[f2]}) is served while earlier "
                        f"flows {bad.tolist()} of its queue could use more",
                    )


def assert_demotions_exact(result: SimulationResult, policy: Aalo) -> None:
    """Queues (invariants 2-4 and the Δ staleness): every coflow starts in Q_1; it moves to
    the queue of its bytes sent exactly at the first Δ-multiple at or after it crossed a
    threshold (if it is still active), never earlier, never back."""
    inst = result.instance
    delta = policy.delta
    bounds = policy.bounds[:-1]
    got: dict[int, list[tuple[float, int]]] = {}
    for when, c, port, queue in policy.demotions:
        assert_equal(port, -1)
        got.setdefault(c, []).append((when, queue))
    for c in range(inst.num_coflows):
        curve = _sent_curve(result, inst.coflow_flows(c))
        done = float(result.coflow_completion[c])
        expected: list[tuple[float, int]] = []
        for b in bounds:
            tx = _crossing(curve, float(b))
            if not math.isfinite(tx):
                break
            sync = tx if delta == 0 else math.ceil(tx / delta - 1e-9) * delta
            if sync >= done - 1e-9 * max(1.0, done):
                break
            level = _bytes_at(curve, sync)
            queue = int(np.searchsorted(bounds, level * (1 + 1e-9), side="right"))
            if not expected or expected[-1][0] < sync - 1e-9 * max(1.0, sync):
                expected.append((sync, queue))
        mine = got.get(c, [])
        assert_equal([q for _, q in mine], [q for _, q in expected], err_msg=f"coflow {c}")
        assert_allclose([t for t, _ in mine], [t for t, _ in expected], rtol=1e-9, atol=1e-9)
        queues = [q for _, q in mine]
        assert_(all(a < b for a, b in itertools.pairwise(queues)), "queue decreased")


class FifoOracle:
    """Independent FIFO reference: coflows by (arrival, index), each taking per-flow max-min
    fair rates from what the earlier ones left (:func:`coflowlab.allocation.max_min_fair`)."""

    name: ClassVar[str] = "fifo-oracle"
    clairvoyant: ClassVar[bool] = False

    def reset(self, view: InstanceView) -> None:
        self.cap_in = np.asarray(view.cap_in, dtype=float)
        self.cap_out = np.asarray(view.cap_out, dtype=float)

    def decide(self, state: ObservedState) -> Decision:
        coflow = np.asarray(state.coflow)
        src, dst = np.asarray(state.src), np.asarray(state.dst)
        active = np.unique(coflow)
        arrival = np.asarray(state.coflow_arrival)[active]
        res_in, res_out = self.cap_in.copy(), self.cap_out.copy()
        rates = np.zeros(len(coflow))
        for c in active[np.lexsort((active, arrival))]:
            idx = np.flatnonzero(coflow == c)
            r = max_min_fair(src[idx], dst[idx], res_in, res_out)
            rates[idx] = r
            res_in = np.maximum(res_in - np.bincount(src[idx], r, len(res_in)), 0.0)
            res_out = np.maximum(res_out - np.bincount(dst[idx], r, len(res_out)), 0.0)
        return Decision(rates)


def _rate_of(result: SimulationResult, flow: int, t: float) -> float:
    sch = result.schedule
    assert sch is not None
    return float(sch.rates_at(t)[flow])


# ---------------------------------------------------------------------------------- AAL-1/2
def test_default_thresholds():
    """Tests that the default queues are [0, 10), [10, 100), ..., [10^9, ∞) (AAL-1)."""
    aalo = Aalo()
    assert_equal(aalo.num_queues, 10)
    assert_allclose(aalo.bounds[:-1], 10.0 * 10.0 ** np.arange(9))
    assert_equal(aalo.bounds[-1], np.inf)


def test_custom_thresholds():
    """Tests that Q_{i+1}^hi = E·Q_i^hi from Q_1^hi, and that explicit thresholds win."""
    assert_allclose(Aalo(num_queues=3, first_threshold=2.0, factor=4.0).bounds, [2, 8, np.inf])
    explicit = Aalo(num_queues=3, thresholds=[5.0, 6.0], first_threshold=1.0)
    assert_allclose(explicit.bounds, [5, 6, np.inf])
    assert_allclose(Aalo(num_queues=1).bounds, [np.inf])


def test_default_weights():
    """Tests that Q_i.weight = K − i + 1: (10, ..., 1), W = 55, shares non-increasing (AAL-2,
    invariant 7)."""
    w = Aalo().queue_weights
    assert_equal(w, np.arange(10, 0, -1))
    assert_equal(w.sum(), 55)
    share = w / w.sum()
    assert_allclose(share.sum(), 1.0)
    assert_((np.diff(share) <= 0).all() and (share > 0).all())
    assert_equal(Aalo(num_queues=3, weights="equal").queue_weights, [1, 1, 1])
    assert_(Aalo(weights="strict").strict)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"num_queues": 0},  # needs a queue
        {"num_queues": 2.5},  # not an integer
        {"first_threshold": 0.0},  # thresholds are positive
        {"factor": 1.0},  # thresholds must grow
        {"delta": -1.0},  # Δ >= 0
        {"delta": math.inf},  # Δ finite
        {"weights": "fair"},  # unknown name
        {"num_queues": 2, "weights": [1.0, 2.0]},  # weights must not increase
        {"num_queues": 2, "weights": [1.0, 0.0]},  # weights positive
        {"num_queues": 2, "weights": [1.0]},  # one per queue
        {"num_queues": 3, "thresholds": [5.0, 4.0]},  # increasing
        {"num_queues": 3, "thresholds": [5.0]},  # K - 1 of them
    ],
)
def test_invalid_parameters(kwargs: dict[str, Any]):
    """Tests that an invalid parameter raises ValueError."""
    with pytest.raises(ValueError):
        Aalo(**kwargs)


# ---------------------------------------------------------------------------------- AAL-3/4/5
def test_demoted_when_bytes_reach_threshold():
    """Tests that a coflow stays in Q_1 below 10 MB and moves down at 10 and 100 MB, never back
    (AAL-3, instant coordination)."""
    aalo = Aalo(delta=0.0)
    result = simulate(_link(Coflow([(0, 0, 150.0)])), aalo)
    assert_(result.verified)
    assert_equal(aalo.demotions, [(10.0, 0, -1, 1), (100.0, 0, -1, 2)])


def test_queue_uses_bytes_over_all_flows():
    """Tests that the queue follows the coflow's total bytes over all its flows, not any one
    flow or port (AAL-4): four flows at rate 1 reach 10 MB together at t = 2.5."""
    inst = _link(Coflow([(i, i, 5.0) for i in range(4)]), ports=4)
    aalo = Aalo(delta=0.0)
    assert_(simulate(inst, aalo).verified)
    assert_equal(aalo.demotions, [(2.5, 0, -1, 1)])
    local = AaloUncoordinated()
    simulate(inst, local)
    assert_equal(local.demotions, [])  # no port sees 10 MB


def test_new_coflow_enters_first_queue():
    """Tests that a coflow arriving between syncs is served as a Q_1 coflow at once (AAL-5,
    invariant 4): it gets Q_1's weight 10 against the demoted coflow's 9."""
    inst = _link(Coflow([(0, 0, 40.0)]), Coflow([(0, 0, 10.0)], release=15.0))
    aalo = Aalo()
    result = simulate(inst, aalo)
    assert_(result.verified)
    assert_equal(aalo.demotions, [(10.0, 0, -1, 1)])
    assert_allclose(_rate_of(result, 1, 15.0), 10 / 19)
    assert_allclose(_rate_of(result, 0, 15.0), 9 / 19)
    assert_allclose(result.coflow_completion[1], 15.0 + 19.0)


@pytest.mark.parametrize(
    ("delta", "sync"),
    [
        (0.0, 10.0),
        (2.5, 10.0),
        (3.0, 12.0),
        (4.0, 12.0),
        (7.0, 14.0),
        (10.0, 10.0),
        (11.0, 11.0),
        (20.0, 20.0),
    ],
)
def test_demotion_waits_for_next_sync(delta: float, sync: float):
    """Tests that the coordinator demotes a coflow at the first multiple of Δ at or after its
    exact crossing (t = 10), and that until then the later coflow of Q_1 waits (Δ staleness)."""
    inst = _link(Coflow([(0, 0, 30.0)]), Coflow([(0, 0, 20.0)]))
    aalo = Aalo(delta=delta)
    result = simulate(inst, aalo)
    assert_(result.verified)
    assert_equal(aalo.demotions[0], (sync, 0, -1, 1))
    sch = result.schedule
    assert sch is not None
    first = sch.time[(sch.flow == 1) & (sch.rate > 0)].min()
    assert_allclose(first, sync)
    assert_allclose(_rate_of(result, 0, sync - 1e-6), 1.0)
    assert_allclose(_rate_of(result, 1, sync), 10 / 19)


def test_wakes_only_for_crossings():
    """Tests that the policy is not woken every Δ: a coflow alone for 1000 time units with
    Δ = 0.01 needs a handful of events, not 10^5."""
    result = simulate(_link(Coflow([(0, 0, 1000.0)])), Aalo(delta=0.01))
    assert_(result.verified)
    assert_(result.num_events <= 4, f"{result.num_events} events")


# ---------------------------------------------------------------------------------- AAL-6/9
def test_fifo_between_two_coflows_of_a_queue():
    """Tests that of two coflows in one queue competing for a port, the earlier (by arrival,
    then index) takes the port and the later gets only what is left (AAL-6)."""
    inst = _link(Coflow([(0, 0, 4.0), (1, 1, 1.0)]), Coflow([(0, 1, 3.0)]), ports=2)
    result = simulate(inst, Aalo())
    assert_(result.verified)
    assert_allclose(result.coflow_completion, [4.0, 7.0])
    later_first = inst.replace(coflow_release=[0.5, 0.0])
    result = simulate(later_first, Aalo())
    assert_allclose(result.coflow_completion, [7.0, 3.0])


def test_fifo_uses_leftover_of_earlier_coflow():
    """Tests that the later coflow of a queue gets exactly what the earlier one's max-min fair
    rates leave (FIFO + max-min inside a coflow)."""
    rates = dclas_allocation(
        [0, 0, 1, 1], [0, 1, 0, 2], [0, 0, 1, 1], [1.0, 1.0, 1.0], [0.25, 1.0, 1.0]
    )
    assert_allclose(rates, [0.25, 0.75, 0.0, 1.0])


@pytest.mark.parametrize("seed", range(4))
def test_single_queue_is_fifo(seed: int):
    """Tests that K = 1 degenerates to FIFO (AAL-9): the same completion times as an
    independent FIFO reference built on per-flow max-min."""
    inst = uniform(4, 7, density=0.4, release_rate=0.7, seed=seed)
    mine = simulate(inst, Aalo(num_queues=1))
    oracle = simulate(inst, FifoOracle())
    assert_(mine.verified and oracle.verified)
    assert_allclose(mine.coflow_completion, oracle.coflow_completion, rtol=1e-9)


# ---------------------------------------------------------------------------------- AAL-7/8
def test_coflow_ids_roots_in_sequence():
    """Tests that roots registered in sequence get external ids 0, 1, 2, ... with internal id
    0 (AAL-8), in arrival order."""
    ext, internal = coflow_ids(3, arrival=[5.0, 1.0, 3.0])
    assert_equal(ext, [2, 0, 1])
    assert_equal(internal, [0, 0, 0])


def test_coflow_ids_of_dependent_coflows():
    """Tests that a child gets its parent's external id and internal id 1 + max over its
    parents (AAL-7)."""
    ext, internal = coflow_ids(5, [(0, 2), (2, 3), (0, 4), (3, 4), (1, 3)])
    assert_equal(internal, [0, 0, 1, 2, 3])
    assert_equal(ext, [0, 1, 0, 0, 0])  # 3 descends from roots 0 and 1: the earlier wins


def test_dag_coflows_ordered_by_coflow_id():
    """Tests that dependent coflows are served by CoflowId: a child follows its DAG root in the
    FIFO order (ahead of a coflow that arrived after the root) and loses to a shallower
    sibling (AAL-7, invariant 10)."""
    inst = Instance.from_coflows(
        [
            Coflow([(0, 0, 2.0)], label="R"),
            Coflow([(0, 0, 10.0)], release=1.0, label="U"),
            Coflow([(0, 0, 3.0)], label="A"),
            Coflow([(0, 0, 2.0)], label="B"),
            Coflow([(0, 0, 10.0)], label="C"),
        ],
        1,
        dependencies=[(0, 2), (2, 3), (0, 4)],
    )
    result = simulate(inst, Aalo(num_queues=1))
    assert_(result.verified)
    assert_allclose(result.coflow_completion, [2.0, 27.0, 5.0, 17.0, 15.0])


# ---------------------------------------------------------------------------------- AAL-11/12
@pytest.mark.parametrize(
    ("n", "size", "total"),
    [
        (10, 50.0, EXPECTED["aalo_identical"]["sum_cct_formula"]["dclas"]),
        (2, 20.0, 70.0),
        (10, 100.0, 5950.0),
        (100, 100.0, 554500.0),
    ],
)
def test_identical_coflows_strict_priority(n: int, size: float, total: float):
    """Tests App. C.2's D-CLAS total for N identical coflows with strict priority across queues:
    ``N²·f(lo) + N(N+1)·f(S − lo)/2`` (thesis Appendix C.2; docs/examples.md#identical)."""
    result = simulate(aalo_identical(n, size), Aalo(weights="strict"))
    assert_(result.verified)
    assert_allclose(result.cct.sum(), total, rtol=1e-9)


@pytest.mark.parametrize(("n", "size"), [(2, 20.0), (10, 50.0), (10, 100.0), (30, 300.0)])
def test_identical_coflows_beat_round_robin(n: int, size: float):
    """Tests that Aalo's weighted D-CLAS total is within [1, 2)× better than continuous CLAS's
    round robin, ``N²·S`` (AAL-11/AAL-12: ratio in [1, 2))."""
    result = simulate(aalo_identical(n, size), Aalo())
    assert_(result.verified)
    ratio = n * n * size / result.cct.sum()
    assert_(1.0 <= ratio < 2.0, f"ratio {ratio}")


def test_fine_queues_approach_clas():
    """Tests that with many finely spaced queues and instant coordination D-CLAS approaches
    continuous CLAS: two identical coflows each take about twice their isolated time (thesis §6.2,
    Appendix C.2)."""
    fine = Aalo(num_queues=150, first_threshold=0.1, factor=1.05, delta=0.0, weights="strict")
    result = simulate(aalo_identical(2, 20.0), fine)
    assert_(result.verified)
    assert_allclose(result.cct, [40.0, 40.0], rtol=0.05)
    assert_allclose(EXPECTED["aalo_identical"]["cct"]["clas"][0], 10 * 50.0)


# ---------------------------------------------------------------------------------- AAL-13/14
def test_every_queue_gets_its_weighted_share():
    """Tests that with all queues non-empty at a port every queue gets a positive rate, in
    proportion to its weight (AAL-13)."""
    k = 10
    rates = dclas_allocation(
        np.zeros(k),
        np.zeros(k),
        np.arange(k),
        [1.0],
        [1.0],
        queue_in=np.arange(k),
        weights=np.arange(k, 0, -1),
    )
    assert_allclose(rates, np.arange(k, 0, -1) / 55)


def test_excess_share_goes_to_unsaturated_queues_by_weight():
    """Tests that a queue's unused share is split among the unsaturated queues in proportion to
    their weights (AAL-14): Q1 can use 0.1 of its 1/2, Q2 and Q3 split the rest 2:1."""
    rates = dclas_allocation(
        [0, 1, 2],
        [0, 0, 0],
        [0, 1, 2],
        [0.1, 1.0, 1.0],
        [1.0, 1.0, 1.0],
        queue_in=[0, 1, 2],
        weights=[3.0, 2.0, 1.0],
    )
    assert_allclose(rates, [0.1, 1 / 3 + 0.4 * 2 / 3, 1 / 6 + 0.4 / 3])


def test_strict_priority_starves_lower_queues():
    """Tests that strict priority gives a lower queue nothing at a port a higher queue uses
    (the contrast to AAL-13)."""
    rates = dclas_allocation(
        [0, 0], [0, 0], [0, 1], [1.0], [1.0], queue_in=[0, 1], weights=[1.0, 1.0], strict=True
    )
    assert_allclose(rates, [1.0, 0.0])


@pytest.mark.parametrize(("weights", "starved"), [("linear", False), ("strict", True)])
def test_no_starvation_under_a_stream_of_small_coflows(weights: str, starved: bool):
    """Tests starvation freedom (invariant 8): a large demoted coflow keeps a positive rate
    while small coflows keep arriving; under strict priority it waits."""
    small = [Coflow([(0, 0, 2.0)], release=1.0 + 1.5 * k) for k in range(20)]
    inst = _link(Coflow([(0, 0, 100.0)]), *small)
    result = simulate(inst, Aalo(num_queues=3, first_threshold=1.0, weights=weights))
    assert_(result.verified)
    sch = result.schedule
    assert sch is not None
    done = result.coflow_completion[0]
    times = np.unique(sch.time)
    zero = [t for t in times if t < done and sch.rates_at(float(t))[0] <= 0]
    assert_equal(bool(zero), starved)


def reference_allocation(
    src: np.ndarray,
    dst: np.ndarray,
    group: np.ndarray,
    cap_in: np.ndarray,
    cap_out: np.ndarray,
    qin: np.ndarray,
    qout: np.ndarray,
    weights: np.ndarray,
    strict: bool,
) -> np.ndarray:
    """Our reading of Pseudocode 4 (docs/aalo.md) written plainly: rounds of per-port weighted
    entitlements, groups in order each taking :func:`max_min_fair` rates within them, then a greedy
    backfill."""
    m = len(cap_in)
    a, b = src, m + dst
    res = np.concatenate([cap_in, cap_out]).astype(float)
    eps = 1e-12 * res
    total = res.sum()
    rate = np.zeros(len(src))
    frozen = (res[a] <= eps[a]) | (res[b] <= eps[b])
    for _ in range(MAX_ROUNDS):
        live = np.flatnonzero(~frozen)
        pools = {(int(qin[f]), int(a[f])) for f in live} | {
            (int(qout[f]), int(b[f])) for f in live
        }
        ent: dict[tuple[int, int], float] = {}
        for p in range(2 * m):
            qs = sorted(q for q, pp in pools if pp == p)
            total_w = sum(weights[q] for q in qs)
            for q in qs:
                if strict:
                    ent[(q, p)] = res[p] if q == qs[0] else 0.0
                else:
                    ent[(q, p)] = res[p] * weights[q] / total_w
        progress = 0.0
        for g in sorted(set(group[live].tolist())):
            fl = live[group[live] == g]
            cin, cout = np.zeros(m), np.zeros(m)
            for f in fl:
                cin[src[f]] = max(ent[(int(qin[f]), int(a[f]))], 0.0)
                cout[dst[f]] = max(ent[(int(qout[f]), int(b[f]))], 0.0)
            inc = max_min_fair(src[fl], dst[fl], cin, cout)
            for f, x in zip(fl.tolist(), inc.tolist(), strict=True):
                rate[f] += x
                ent[(int(qin[f]), int(a[f]))] -= x
                ent[(int(qout[f]), int(b[f]))] -= x
                res[a[f]] -= x
                res[b[f]] -= x
                progress += x
        frozen |= (res[a] <= eps[a]) | (res[b] <= eps[b])
        if frozen.all() or progress <= 1e-12 * total:
            break
    live = np.flatnonzero(~frozen)
    for f in live[np.argsort(group[live], kind="stable")]:
        x = min(res[a[f]], res[b[f]])
        if x > 0:
            rate[f] += x
            res[a[f]] -= x
            res[b[f]] -= x
    return rate


@pytest.mark.parametrize("strict", [False, True])
@pytest.mark.parametrize("per_port", [False, True])
@pytest.mark.parametrize("seed", range(12))
def test_allocation_matches_reference(seed: int, per_port: bool, strict: bool):
    """Tests :func:`dclas_allocation` against a plain re-implementation of our reading of
    Pseudocode 4 (docs/aalo.md) on random flows, queues (per coflow, or per coflow and port as in
    the uncoordinated variant), weights and capacities; and that it is feasible and work
    conserving."""
    rng = np.random.default_rng(seed)
    m = int(rng.integers(2, 6))
    n = int(rng.integers(3, 30))
    groups = int(rng.integers(1, 7))
    src, dst = rng.integers(0, m, n), rng.integers(0, m, n)
    group = rng.integers(0, groups, n)
    k = 3
    if per_port:
        qmap = rng.integers(0, k, (groups, 2 * m))
        qin, qout = qmap[group, src], qmap[group, m + dst]
    else:
        qin = qout = rng.integers(0, k, groups)[group]
    weights = np.sort(rng.uniform(0.5, 3.0, k))[::-1]
    cap_in, cap_out = rng.uniform(0.2, 2.0, m), rng.uniform(0.2, 2.0, m)
    mine = dclas_allocation(
        src,
        dst,
        group,
        cap_in,
        cap_out,
        queue_in=qin,
        queue_out=qout,
        weights=weights,
        strict=strict,
    )
    ref = reference_allocation(src, dst, group, cap_in, cap_out, qin, qout, weights, strict)
    assert_allclose(mine, ref, atol=1e-9)
    load_in = np.bincount(src, mine, m)
    load_out = np.bincount(dst, mine, m)
    assert_((load_in <= cap_in * (1 + 1e-9)).all() and (load_out <= cap_out * (1 + 1e-9)).all())
    full = (load_in[src] >= cap_in[src] * (1 - 1e-9)) | (
        load_out[dst] >= cap_out[dst] * (1 - 1e-9)
    )
    assert_(full.all(), "every flow has a saturated port")


def test_allocation_rejects_bad_input():
    """Tests that mismatched capacities and out-of-range queues raise ValueError."""
    with pytest.raises(ValueError):
        dclas_allocation([0], [2], [0], [1.0, 1.0], [1.0, 1.0, 1.0])
    with pytest.raises(ValueError):
        dclas_allocation([0], [0], [0], [1.0], [1.0], queue_in=[1], weights=[1.0])
    with pytest.raises(ValueError):
        dclas_allocation([0], [0], [0], [1.0], [1.0], weights=[0.0])
    assert_equal(dclas_allocation([], [], [], [1.0], [1.0]).shape, (0,))


# ---------------------------------------------------------------------------------- AAL-16
@pytest.mark.parametrize(("n", "m"), [(4, 2), (9, 3), (16, 4)])
def test_theorem_c11_coordination_matters(n: int, m: int):
    """Tests Theorem C.1.1's instance (AAL-16): default Aalo (every coflow stays in Q_1, FIFO
    by CoflowId) reaches the coordinated optimum ``m + Σ_{j=2}^{n−m+1} j``; with fine queues
    (LAS-like), deciding on global bytes beats deciding per port on local bytes, which cannot
    tell the narrow coflow from the wide ones and ends near round robin, ``n(n − m + 1)``."""
    inst = aalo_theorem_c11(n, m)
    opt = m + sum(range(2, n - m + 2))
    if (n, m) == (4, 2):
        assert_equal(opt, EXPECTED["aalo_theorem_c11"]["opt_sum_cct"])
    result = simulate(inst, Aalo())
    assert_(result.verified)
    assert_allclose(result.cct.sum(), opt)
    fine: dict[str, Any] = {"num_queues": 40, "first_threshold": 0.01, "factor": 1.2}
    coordinated = simulate(inst, Aalo(delta=0.0, weights="strict", **fine))
    local = simulate(inst, AaloUncoordinated(weights="strict", **fine))
    assert_(coordinated.verified and local.verified)
    assert_(opt < coordinated.cct.sum() < local.cct.sum() <= n * (n - m + 1) + 1e-6)
    assert_(local.cct.sum() > 0.85 * n * (n - m + 1))


def test_uncoordinated_uses_bytes_per_port():
    """Tests that the uncoordinated variant demotes per port on the bytes sent through it: two
    flows of 20 reach 10 at each of their four ports at t = 10 (the coordinator would see 10 at
    t = 5)."""
    inst = _link(Coflow([(0, 0, 20.0), (1, 1, 20.0)]), ports=2)
    local = AaloUncoordinated()
    assert_(simulate(inst, local).verified)
    assert_equal(sorted(local.demotions), [(10.0, 0, p, 1) for p in range(4)])
    aalo = Aalo(delta=0.0)
    simulate(inst, aalo)
    assert_equal(aalo.demotions, [(5.0, 0, -1, 1)])


# ---------------------------------------------------------------------------------- invariants
POLICIES = {
    "linear-delta1.5": lambda: Aalo(delta=1.5, **SMALL),
    "linear-instant": lambda: Aalo(delta=0.0, **SMALL),
    "equal-delta2": lambda: Aalo(delta=2.0, weights="equal", **SMALL),
    "strict-delta1": lambda: Aalo(delta=1.0, weights="strict", **SMALL),
    "strict-instant": lambda: Aalo(delta=0.0, weights="strict", **SMALL),
    "custom-delta0.7": lambda: Aalo(delta=0.7, weights=[4.0, 2.0, 2.0, 1.0], **SMALL),
}


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("name", sorted(POLICIES))
def test_invariants_on_random_instances(name: str, seed: int):
    """Tests the Aalo invariants (docs/test-cases.md#aalo-invariants) on random online
    instances: port capacity (the verifier), queues that start at Q_1 and change exactly at the
    Δ-sync after a crossing and never go back, work conservation, and exact FIFO within a queue
    under strict priority."""
    inst = uniform(4, 8, density=0.4, release_rate=0.6, seed=100 + seed)
    policy = POLICIES[name]()
    result = simulate(inst, policy)
    assert_(result.verified)
    assert_(len(policy.demotions) > 0, "the instance should exercise demotions")
    assert_demotions_exact(result, policy)
    assert_work_conserving(result)
    if policy.strict:
        assert_fifo_within_queues(result, policy)


@pytest.mark.parametrize("seed", range(3))
def test_fifo_check_detects_weighted_sharing(seed: int):
    """Tests that the FIFO check above can fail: one queue is FIFO, but a coflow-agnostic
    order (per-flow fair sharing presented as one queue) is caught."""
    inst = uniform(4, 8, density=0.4, release_rate=0.6, seed=100 + seed)
    aalo = Aalo(num_queues=1)
    assert_fifo_within_queues(simulate(inst, aalo), aalo)
    from coflowlab.heuristics.fair import FairSharing

    fair = simulate(inst, FairSharing())
    with pytest.raises(AssertionError):
        assert_fifo_within_queues(fair, aalo)


@pytest.mark.parametrize("seed", range(3))
def test_uncoordinated_invariants(seed: int):
    """Tests that the uncoordinated variant's per-port queues never go back, and that it is
    work conserving."""
    inst = uniform(4, 8, density=0.4, release_rate=0.6, seed=200 + seed)
    policy = AaloUncoordinated(**SMALL)
    result = simulate(inst, policy)
    assert_(result.verified)
    last: dict[tuple[int, int], int] = {}
    for _, c, port, queue in policy.demotions:
        assert_(0 <= port < 2 * inst.num_ports)
        assert_(queue > last.get((c, port), 0))
        last[(c, port)] = queue
    assert_(last, "the instance should exercise demotions")
    assert_work_conserving(result)


class Recomputed:
    """Wraps a coordinated :class:`Aalo` and checks, at every event, that its rates (kept
    incrementally between events) equal :func:`dclas_allocation` computed afresh from the
    state: active flows by index, coflows in FIFO order (by queue first under strict
    priority), each coflow's queue."""

    name: ClassVar[str] = "aalo"
    clairvoyant: ClassVar[bool] = False

    def __init__(self, inner: Aalo) -> None:
        self.inner = inner
        self.checked = 0

    def reset(self, view: InstanceView) -> None:
        self.inner.reset(view)
        self.view = view
        self.rate = np.zeros(view.num_flows)

    def decide(self, state: ObservedState) -> Decision:
        decision = self.inner.decide(state)
        flows = np.asarray(state.flows)
        self.rate[np.asarray(state.completed, dtype=np.int64)] = 0.0
        if decision.rates is not None:
            self.rate[flows] = decision.rates
        if decision.update is not None:
            self.rate[decision.update[0]] = decision.update[1]
        by_index = np.argsort(flows)
        coflow = np.asarray(state.coflow)[by_index]
        active = np.unique(coflow)
        aalo = self.inner
        first = aalo.queue[active] if aalo.strict else np.zeros(len(active))
        fifo = active[np.lexsort((active, np.asarray(state.coflow_arrival)[active], first))]
        group = np.empty(self.view.num_coflows, dtype=np.int64)
        group[fifo] = np.arange(len(fifo))
        expected = dclas_allocation(
            np.asarray(state.src)[by_index],
            np.asarray(state.dst)[by_index],
            group[coflow],
            self.view.cap_in,
            self.view.cap_out,
            queue_in=np.zeros(len(coflow)) if aalo.strict else aalo.queue[coflow],
            weights=[1.0] if aalo.strict else aalo.queue_weights,
        )
        assert_allclose(self.rate[flows[by_index]], expected, rtol=1e-9, atol=1e-12)
        if aalo.num_queues > 1:
            wake = self._exact_wakeup(state, active)
            assert_equal(decision.wakeup is None, wake is None)
            if wake is not None:
                assert_allclose(decision.wakeup, wake, rtol=1e-9)
        self.checked += 1
        return decision

    def _exact_wakeup(self, state: ObservedState, active: np.ndarray) -> float | None:
        """The Δ-sync after the earliest crossing, from the simulator's bytes sent."""
        aalo = self.inner
        t, delta, his = float(state.time), aalo.delta, aalo.bounds
        n = self.view.num_coflows
        rate = np.bincount(state.coflow, weights=self.rate[state.flows], minlength=n)[active]
        sent = np.asarray(state.coflow_sent)[active]
        queue = aalo.queue[active]
        reached = np.searchsorted(his[:-1], sent * (1 + CROSS_TOL), side="right")
        ok = (rate > 0) & np.isfinite(his[queue])
        if (reached > queue).any():
            t_cross = t
        elif ok.any():
            t_cross = t + float(np.min(np.maximum(his[queue] - sent, 0.0)[ok] / rate[ok]))
        else:
            return None
        if delta == 0:
            return t_cross
        k = max(math.ceil(t_cross / delta - 1e-9), math.floor(t / delta + 1e-9) + 1)
        return k * delta


def _staggered() -> Instance:
    """Flows of a coflow released at different times, with idle gaps in between: a coflow's
    first flow finishes before its next one arrives, while nothing else is active."""
    return Instance.from_coflows(
        [
            Coflow([(0, 0, 4.0, 0.0), (1, 1, 30.0, 20.0), (0, 1, 12.0, 20.0)]),
            Coflow([(1, 0, 3.0, 1.0), (1, 0, 3.0, 40.0)], release=1.0),
            Coflow([(1, 1, 6.0, 2.0), (0, 0, 50.0, 25.0)], release=2.0),
        ],
        2,
    )


@pytest.mark.parametrize("seed", range(2))
@pytest.mark.parametrize("name", sorted(POLICIES))
def test_incremental_rates_match_a_fresh_allocation(name: str, seed: int):
    """Tests that the coordinated policy's incremental bookkeeping (active flows kept per
    coflow, rates reported as updates, bytes sent integrated from its own rates) gives at
    every event the allocation computed from scratch, and exact demotions, also when flows
    of a coflow arrive after idle periods."""
    inst = uniform(4, 8, density=0.4, release_rate=0.6, seed=400 + seed) if seed else _staggered()
    check = Recomputed(POLICIES[name]())
    result = simulate(inst, check)
    assert_(result.verified)
    assert_equal(check.checked, result.num_events)
    assert_demotions_exact(result, check.inner)


def _records_before(result: SimulationResult, t: float) -> tuple[np.ndarray, ...]:
    sch = result.schedule
    assert sch is not None
    keep = sch.time < t
    return sch.time[keep], sch.flow[keep], sch.rate[keep]


@pytest.mark.parametrize(
    "make",
    [
        lambda: Aalo(delta=1.0, **SMALL),
        lambda: Aalo(delta=0.5, weights="strict", **SMALL),
        lambda: AaloUncoordinated(**SMALL),
    ],
)
@pytest.mark.parametrize("which", ["first", "last"])
@pytest.mark.parametrize("seed", range(3))
def test_decisions_ignore_unobserved_sizes(make: Any, seed: int, which: str):
    """Tests non-clairvoyance (invariant 11): enlarging the first or the last flow to finish
    changes nothing until that flow would have completed, the first moment the difference is
    observable."""
    inst = uniform(4, 6, density=0.5, release_rate=1.0, seed=300 + seed)
    first = simulate(inst, make())
    f = int((np.argmax if which == "last" else np.argmin)(first.flow_completion))
    sizes = np.array(inst.flow_size)
    sizes[f] += 7.0
    second = simulate(inst.replace(flow_size=sizes), make())
    assert_(first.verified and second.verified)
    cut = float(first.flow_completion[f])
    a, b = _records_before(first, cut), _records_before(second, cut)
    assert_equal(a[1], b[1])
    assert_allclose(a[0], b[0], rtol=1e-12)
    assert_allclose(a[2], b[2], rtol=1e-12)
    assert_(len(a[0]) > 0)


INSTANCES = {
    **GENERATED,
    "capacities": unequal_capacities,
}


@pytest.mark.parametrize("inst_name", sorted(INSTANCES))
@pytest.mark.parametrize(
    "make",
    [
        lambda: Aalo(),
        lambda: Aalo(delta=1.0, **SMALL),
        lambda: Aalo(delta=0.0, weights="strict", **SMALL),
        lambda: AaloUncoordinated(**SMALL),
        lambda: AaloUncoordinated(weights="strict", **SMALL),
    ],
)
def test_schedules_verify_on_generated_instances(inst_name: str, make: Any):
    """Tests that every Aalo variant's schedule passes the verifier on generated instances
    (releases, weights, deadlines, one port, dependencies, real sizes, unequal capacities)."""
    inst = INSTANCES[inst_name]()
    result = simulate(inst, make())
    assert_(result.verified)
    assert_(bool(np.isfinite(result.coflow_completion).all()))
    if not len(inst.dependencies):
        assert_work_conserving(result)


@pytest.mark.parametrize(
    "ports", [30, pytest.param(150, marks=pytest.mark.slow, id="150-full-size")]
)
@pytest.mark.parametrize("make", [lambda: Aalo(), lambda: AaloUncoordinated()])
def test_fb_like_instance_verifies(make: Any, ports: int):
    """Tests that Aalo's schedule on ``fb_like(40)`` (MB and ms, the thesis defaults' units)
    verifies and demotes some coflows (the 150-port default size is marked slow)."""
    inst = fb_like(40, num_ports=ports, seed=11)
    policy = make()
    result = simulate(inst, policy, record=False)
    assert_(result.verified)
    assert_(len(policy.demotions) > 0)


def test_policy_metadata():
    """Tests the registry names and that both variants are non-clairvoyant."""
    assert_equal((Aalo.name, AaloUncoordinated.name), ("aalo", "aalo-uncoordinated"))
    assert_(not Aalo.clairvoyant and not AaloUncoordinated.clairvoyant)
    assert_(not AaloUncoordinated().coordinated)
    assert_("coordinated=True" in repr(Aalo()))


def test_local_byte_counts_stop_at_completion_across_an_idle_gap():
    """Tests that a port's byte count stops when a flow completes, even when the fabric then
    goes idle (the policy is not asked while nothing is active). Coflow 0 sends 1 unit at
    t = 0 (done at 1), then a second unit at t = 10, when coflow 1 (1 unit) arrives; all on
    one link, threshold 1.5, two queues with linear weights 2 : 1.

    Coflow 0 has 1 < 1.5 sent, so both are in queue 0 and FIFO serves coflow 0 alone until it
    crosses 1.5 at 10.5; then it is in queue 1 and gets 1/3 of the link: its last 0.5 takes
    until 12, and coflow 1 gets 2/3 and finishes its unit at 12 too. Counting coflow 0's first
    flow through the idle gap (10 units) would demote it at once and finish coflow 1 first.
    """
    inst = Instance.from_coflows(
        [Coflow([(0, 0, 1.0, 0.0), (0, 0, 1.0, 10.0)]), Coflow([(0, 0, 1.0)], release=10.0)], 1
    )
    res = simulate(inst, AaloUncoordinated(first_threshold=1.5, num_queues=2))
    assert res.coflow_completion.tolist() == [12.0, 12.0]
