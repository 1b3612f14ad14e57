"""Tests of Varys and its orderings (``coflowlab.heuristics.varys``): the worked examples of
Chowdhury's thesis (docs/examples.md), its invariants and the deadline mode (§5.5.4;
docs/varys.md). Test-case identifiers (R-5.1, R-5.3, R-B1, R-B2) are defined in
docs/test-cases.md."""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_equal

from coflowlab import Coflow, Fabric, Instance, Units, simulate
from coflowlab.heuristics.varys import (
    Varys,
    VarysDeadline,
    VarysFIFO,
    VarysNCF,
    VarysSCF,
    VarysTCF,
    ratio_backfill,
)
from coflowlab.instances import (
    assign_deadlines,
    assign_weights,
    fb_like,
    single_port,
    uniform,
)
from coflowlab.instances.examples import EXAMPLES, EXPECTED, fig_2_2, fig_4_6, fig_5_1
from coflowlab.policy import Decision, InstanceView, ObservedState
from coflowlab.simulator import SimulationResult, instance_view

POLICIES: dict[str, Callable[[], Any]] = {
    "varys": Varys,
    "scf": VarysSCF,
    "ncf": VarysNCF,
    "tcf": VarysTCF,
    "fifo": VarysFIFO,
    "smith": lambda: Varys("smith"),
    "lwf": lambda: Varys("lwf"),
    "ratio": lambda: Varys(backfill="ratio"),
    "no-backfill": lambda: Varys(backfill="none"),
    "residual": lambda: Varys(sebf_key="residual"),
    "static": lambda: Varys(sebf_key="static"),
    "per-flow": lambda: Varys(reschedule_on="flow"),
    "timers": lambda: Varys(T=3.0, delta=0.5),
    "deadline": VarysDeadline,
    "deadline-all": lambda: VarysDeadline(admission="all"),
}
"""Every policy of the module, and every option that changes the schedule."""

INSTANCES: dict[str, Callable[[], Instance]] = {
    "uniform": lambda: uniform(5, 10, density=0.4, seed=1),
    "releases": lambda: uniform(5, 10, density=0.4, release_rate=0.3, seed=2),
    "weights": lambda: assign_weights(uniform(5, 10, release_rate=0.3, seed=3), seed=4),
    "deadlines": lambda: assign_deadlines(
        uniform(5, 10, density=0.4, release_rate=0.3, seed=5), x=0.5, seed=6
    ),
    "single_port": lambda: single_port(10, seed=7),
    "fb_like": lambda: fb_like(40, seed=8),
}
"""One instance of every generated kind."""


# ---------------------------------------------------------------------------------- helpers
def run(instance: Instance, policy: Any) -> SimulationResult:
    """Simulates with verification and recording; asserts the schedule verified."""
    result = simulate(instance, policy)
    assert result.verified
    assert result.report is not None and result.report.feasible
    return result


def total_rate_steps(result: SimulationResult, flows: Any) -> tuple[np.ndarray, np.ndarray]:
    """Breakpoints and the summed rate of ``flows`` from each breakpoint on."""
    sch = result.schedule
    assert sch is not None
    keep = np.isin(sch.flow, flows)
    current: dict[int, float] = {}
    times, totals = [0.0], [0.0]
    for t, f, r in zip(sch.time[keep].tolist(), sch.flow[keep].tolist(),
                       sch.rate[keep].tolist(), strict=True):  # fmt: skip
        current[f] = r
        total = sum(current.values())
        if t == times[-1]:
            totals[-1] = total
        else:
            times.append(t)
            totals.append(total)
    return np.array(times), np.array(totals)


def longest_idle(result: SimulationResult, flows: Any, start: float, end: float) -> float:
    """The longest stretch of ``[start, end]`` during which none of ``flows`` sends."""
    times, totals = total_rate_steps(result, flows)
    bounds = np.concatenate([times, [np.inf]])
    longest, idle_since = 0.0, None
    for k in range(len(times)):
        lo, hi = max(bounds[k], start), min(bounds[k + 1], end)
        if lo >= hi:
            continue
        if totals[k] <= 0:
            idle_since = lo if idle_since is None else idle_since
            longest = max(longest, hi - idle_since)
        else:
            idle_since = None
    return longest


def one_port(*coflows: tuple[float, float], deadlines: Any = None) -> Instance:
    """Single-flow coflows ``(size, release)`` on a 1×1 fabric."""
    d = [None] * len(coflows) if deadlines is None else deadlines
    return Instance.from_coflows(
        [
            Coflow([(0, 0, float(size))], release=float(r), deadline=dl)
            for (size, r), dl in zip(coflows, d, strict=True)
        ],
        1,
    )


# ---------------------------------------------------------------------------------- examples
def test_fig_3_2_madd_finishes_the_shuffle_at_gamma():
    """Tests thesis Fig. 3.2: MADD gives CCT Γ = 4 and every flow finishes at 4 (thesis §3.2)."""
    exp = EXPECTED["fig_3_2"]
    for backfill in ("greedy", "ratio", "none"):
        res = run(EXAMPLES["fig_3_2"](), Varys(backfill=backfill))
        assert_allclose(res.cct, exp["cct"]["madd"])
        assert_allclose(res.flow_completion, exp["fct"]["madd"])


@pytest.mark.parametrize("n", [1, 2, 3, 100])
def test_fig_4_6_madd_finishes_at_2n(n):
    """Tests the Fig. 4.6 family: MADD's CCT is 2N, below fairness's 3N − 1 (thesis §4.5.3)."""
    res = run(fig_4_6(n), Varys())
    assert_allclose(res.cct, [2.0 * n])
    if n == 100:
        assert_allclose(res.cct, EXPECTED["fig_4_6"]["cct"]["madd"])


def test_fig_5_1_varys_ccts_and_fcts():
    """Tests thesis Fig. 5.1 (R-5.1): Varys gives CCTs (4, 2), average 3.0, FCTs 4,4,3;2,2."""
    exp = EXPECTED["fig_5_1"]
    res = run(fig_5_1(), Varys())
    assert_allclose(res.cct, exp["cct"]["varys"])
    assert res.cct.mean() == pytest.approx(exp["avg_cct"]["varys"]) == pytest.approx(3.0)
    assert_allclose(res.flow_completion, exp["fct"]["varys"])
    assert res.flow_completion.mean() == pytest.approx(exp["avg_fct"]["varys"])


@pytest.mark.parametrize(
    ("name", "policy"), [("sebf", Varys), ("scf", VarysSCF), ("ncf", VarysNCF), ("tcf", VarysTCF)]
)
def test_fig_5_3_sebf_beats_scf_ncf_tcf(name, policy):
    """Tests thesis Fig. 5.3 (R-5.3): SEBF 5.0 on average, SCF/NCF/TCF 5.5
    (docs/examples.md#fig-5-3)."""
    exp = EXPECTED["fig_5_3"]
    res = run(EXAMPLES["fig_5_3"](), policy())
    assert_allclose(res.cct, exp["cct"][name])
    assert res.cct.mean() == pytest.approx(exp["avg_cct"][name])
    assert res.policy == ("varys" if name == "sebf" else name)


def test_fig_b2_sebf_with_iterative_madd_beats_permutations():
    """Tests R-B2: SEBF (tie → C1) + iterative MADD gives (2, 3), average 2.5 < 3.0."""
    exp = EXPECTED["fig_b2"]
    res = run(EXAMPLES["fig_b2"](), Varys())
    assert_allclose(res.cct, exp["cct"]["varys"])
    assert res.cct.mean() == pytest.approx(exp["avg_cct"]["varys"]) == pytest.approx(2.5)
    assert res.cct.mean() < exp["avg_cct"]["order_C1_C2"]


def test_fig_b1_varys_with_greedy_backfill():
    """Tests R-B1: SEBF + MADD + greedy backfill, tie toward C1: CCTs (1, 2.5, 0.5)."""
    exp = EXPECTED["fig_b1"]
    res = run(EXAMPLES["fig_b1"](), Varys())
    assert_allclose(res.cct, exp["cct"]["varys"])
    assert res.cct.mean() == pytest.approx(exp["avg_cct"]["varys"])


def test_fig_2_2_backfill_finishes_the_short_flow_early():
    """Tests Fig. 2.2: CCT 4 = Γ; MADD alone gives FCTs (4, 4), with backfill (3, 4)."""
    exp = EXPECTED["fig_2_2"]
    plain = run(fig_2_2(), Varys(backfill="none"))
    assert_allclose(plain.cct, exp["cct"]["madd"])
    assert_allclose(plain.flow_completion, exp["fct"]["madd"])
    filled = run(fig_2_2(), Varys())
    assert_allclose(filled.cct, exp["cct"]["madd"])
    assert_allclose(filled.flow_completion, exp["fct"]["fair"])


def test_fig_5_1_deadline_rejects_c1_and_admits_c2():
    """Tests Fig. 5.1 with deadlines 2: C1 (Γ = 4) is rejected, C2 finishes at 2 (§8.5)."""
    exp = EXPECTED["fig_5_1_deadline"]["deadline"]
    policy = VarysDeadline()
    res = run(EXAMPLES["fig_5_1_deadline"](), policy)
    labels = res.instance.coflow_label
    assert [labels[k] for k in res.rejected] == exp["varys_rejected"]
    assert policy.rejected == res.rejected.tolist()
    c2 = labels.index("C2")
    assert res.cct[c2] == pytest.approx(exp["varys_cct"]["C2"])
    assert np.isnan(res.cct[labels.index("C1")])


# ---------------------------------------------------------------------------------- basics
@pytest.mark.parametrize("name", POLICIES)
@pytest.mark.parametrize("seed", range(3))
def test_one_coflow_alone_finishes_at_rho(name, seed):
    """Tests that every policy finishes a coflow alone at its bottleneck ρ (thesis §4.5.1)."""
    for inst in (uniform(4, 1, density=0.6, seed=seed), fig_4_6(seed + 1)):
        res = run(inst, POLICIES[name]())
        assert_allclose(res.cct, inst.bottleneck, rtol=1e-9)


def srtf(sizes: list[float], releases: list[float]) -> list[float]:
    """Shortest-remaining-time-first on one unit link, ties to the lower index."""
    rem, done, t = list(sizes), [np.nan] * len(sizes), 0.0
    while any(np.isnan(done)):
        ready = [j for j in range(len(rem)) if releases[j] <= t and rem[j] > 0]
        later = [r for r in releases if r > t]
        nxt = min(later) if later else np.inf
        if not ready:
            t = nxt
            continue
        j = min(ready, key=lambda k: (rem[k], k))
        step = min(rem[j], nxt - t)
        rem[j] -= step
        t += step
        if rem[j] == 0:
            done[j] = t
    return done


def test_single_flow_coflows_under_sebf_are_srtf_by_hand():
    """Tests SEBF = SRTF (thesis §5.2) on a hand computation: B preempts A, C preempts A.

    A (4, at 0) runs alone; B (1, at 1) is shorter than A's 3 left and finishes at 2; A runs
    to 2.5 (2.5 left), C (2, at 2.5) preempts it and finishes at 4.5; A finishes at 7.
    """
    res = run(one_port((4, 0), (1, 1), (2, 2.5)), Varys(starvation=False))
    assert_allclose(res.coflow_completion, [7.0, 2.0, 4.5])


@pytest.mark.parametrize("seed", range(6))
def test_single_flow_coflows_under_sebf_are_srtf(seed):
    """Tests SEBF against an SRTF reference on random single-port instances with releases."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 8, 8).astype(float).tolist()
    releases = np.sort(rng.integers(0, 12, 8)).astype(float).tolist()
    res = run(one_port(*zip(sizes, releases, strict=True)), Varys(starvation=False))
    assert_allclose(res.coflow_completion, srtf(sizes, releases))


def test_fifo_is_non_preemptive_and_sebf_preempts():
    """Tests that FIFO keeps serving the first coflow while SEBF switches to the shorter one."""
    inst = one_port((4, 0), (1, 1))
    assert_allclose(run(inst, VarysFIFO()).coflow_completion, [4.0, 5.0])
    assert_allclose(run(inst, Varys()).coflow_completion, [5.0, 2.0])


def test_ratio_backfill_keeps_rate_ratios_and_egress_limits():
    """Tests the thesis-literal backfill: ratios kept, egress respected, zero rates stay."""
    r = ratio_backfill(
        np.array([0.2, 0.1, 0.0]), np.array([0, 1, 2]), np.array([0, 0, 0]),
        np.array([0, 1, 1]), np.array([0, 0, 0]), np.array([1.0]), np.array([0.5, 1.0]),
    )  # fmt: skip
    assert_allclose(r, [0.5, 0.25, 0.0])


def test_ratio_backfill_serves_coflows_in_priority_order_per_port():
    """Tests that at one ingress the first coflow in the order takes the spare capacity."""
    r = ratio_backfill(
        np.array([0.1, 0.1]), np.array([1, 0]), np.array([0, 0]), np.array([0, 1]),
        np.array([0, 1]), np.array([1.0]), np.array([1.0, 1.0]),
    )  # fmt: skip
    assert_allclose(r, [0.1, 0.9])


# ---------------------------------------------------------------------------------- events
class Spy:
    """Wraps a policy and records, per event, what happened and what it decided."""

    name: ClassVar[str] = "spy"
    clairvoyant: ClassVar[bool] = True

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.log: list[tuple[int, int, int, bool, Decision]] = []

    def reset(self, view: InstanceView) -> None:
        self.inner.reset(view)

    def decide(self, state: ObservedState) -> Decision:
        d = self.inner.decide(state)
        self.log.append(
            (len(state.arrived), len(state.completed), len(state.completed_coflows),
             bool(state.woken), d)
        )  # fmt: skip
        return d


class AskAtEveryFlow(Spy):
    """Wraps a policy and asks the simulator to wake it at every flow completion."""

    def decide(self, state: ObservedState) -> Decision:
        return dataclasses.replace(super().decide(state), notify="flow")


@pytest.mark.parametrize("policy", [Varys, VarysDeadline])
def test_flow_only_completions_keep_the_rates(policy):
    """Tests that a flow completion inside a running coflow changes no rate (thesis §5.4.2): by
    default the policy is not even woken there (``notify="coflow"``); woken anyway, it returns
    Decision(None); and reschedule_on="flow" recomputes there instead."""
    quiet = Spy(policy())
    run(fig_2_2(), quiet)
    assert all(d.notify == "coflow" for *_, d in quiet.log)
    assert not [d for a, c, cc, w, d in quiet.log if c and not a and not cc and not w]
    kept = AskAtEveryFlow(policy())
    run(fig_2_2(), kept)
    flow_only = [d for a, c, cc, _, d in kept.log if c and not a and not cc]
    assert flow_only and all(d.rates is None and d.update is None for d in flow_only)
    redo = Spy(policy(reschedule_on="flow"))
    run(fig_2_2(), redo)
    flow_only = [d for a, c, cc, _, d in redo.log if c and not a and not cc]
    assert flow_only and all(d.rates is not None and d.notify == "flow" for d in flow_only)


@pytest.mark.parametrize("policy", [Varys, VarysDeadline, VarysFIFO])
@pytest.mark.parametrize("seed", range(4))
def test_quiet_completions_give_the_same_schedule(policy, seed):
    """Tests that the simulator's compiled handling of unwatched flow completions
    (``notify="coflow"``) produces exactly the schedule of asking the policy every time."""
    inst = fb_like(12, num_ports=8, seed=seed)
    inst = assign_deadlines(inst, seed=seed) if policy is VarysDeadline else inst
    quiet, woken = run(inst, policy()), run(inst, AskAtEveryFlow(policy()))
    a, b = quiet.schedule, woken.schedule
    assert a is not None and b is not None
    assert_equal(a.time, b.time)
    assert_equal(a.flow, b.flow)
    assert_equal(a.rate, b.rate)
    assert_equal(quiet.coflow_completion, woken.coflow_completion)
    assert quiet.num_events == woken.num_events


def test_freed_bandwidth_waits_until_the_next_coflow_event():
    """Tests that a flow finishing early leaves its bandwidth idle until a coflow event, and
    that reschedule_on="flow" hands it out at once (hand computation).

    C1 (Γ = 5) goes first: rates 1/5, 1/5, 4/5; C0 (0→0, 1→0, 3 each) gets Γ = 15 on what is
    left (rates 1/5), and the greedy backfill lifts C1's 0→0 flow to 3/5, so it finishes at
    5/3. By default nothing changes until C1 completes at 5; then C0 (2 left per flow, out0
    the bottleneck) finishes at 9. Rescheduling at 5/3 backfills C0's 0→0 flow to 4/5: it
    finishes at 5, the other at 7.
    """
    inst = Instance.from_coflows(
        [
            Coflow([(0, 0, 3.0), (1, 0, 3.0)]),
            Coflow([(0, 0, 1.0), (0, 1, 1.0), (1, 1, 4.0)]),
        ],
        2,
    )
    kept = run(inst, Varys())
    assert_allclose(kept.cct, [9.0, 5.0])
    assert_allclose(kept.flow_completion[2], 5 / 3)
    redone = run(inst, Varys(reschedule_on="flow"))
    assert_allclose(redone.cct, [7.0, 5.0])
    assert_allclose(redone.flow_completion[:2], [5.0, 7.0])
    sch = kept.schedule
    assert sch is not None  # positive rates are set only at coflow arrivals and completions
    assert_allclose(np.unique(sch.time[sch.rate > 0]), [0.0, 5.0])


# ---------------------------------------------------------------------------------- starvation
def short_stream(num_short: int = 60) -> Instance:
    """One long coflow (30 units at 0) and a short one (1 unit) arriving every time unit
    from 0 on the same link: SEBF alone always prefers the short ones."""
    return one_port((30, 0), *[(1, k) for k in range(num_short)])


def test_starvation_avoidance_serves_the_long_coflow_in_every_window():
    """Tests Pseudocode 1's starvation bound (§5.5.3): with T = 10 and δ = 1 the long coflow never
    waits more than T + δ."""
    res = run(short_stream(), Varys(T=10.0, delta=1.0))
    idle = longest_idle(res, [0], 0.0, res.coflow_completion[0])
    assert idle <= 10.0 + 1.0 + 1e-9
    times, rate = total_rate_steps(res, [0])
    assert rate[(times > 0) & (times < 60)].max() > 0  # served while the stream lasts


def test_without_starvation_avoidance_the_long_coflow_starves():
    """Tests that starvation=False lets the stream of short coflows block the long one."""
    res = run(short_stream(), Varys(T=10.0, delta=1.0, starvation=False))
    assert longest_idle(res, [0], 0.0, res.coflow_completion[0]) == pytest.approx(60.0)
    assert res.coflow_completion[0] == pytest.approx(90.0)


def test_timer_units_convert_with_time_unit_ms():
    """Tests that T and δ in ms with time_unit_ms = 1000 act as T/1000 on an instance in s."""
    inst = short_stream(30)
    in_s = inst.replace(units=Units("MB", "s"))
    a = run(inst, Varys(T=4.0, delta=0.5))
    b = run(in_s, Varys(T=4000.0, delta=500.0, time_unit_ms=1000.0))
    assert_allclose(a.coflow_completion, b.coflow_completion)
    assert not np.allclose(a.coflow_completion, run(inst, Varys()).coflow_completion)


def with_phase_log(cls: type) -> type:
    """A subclass of a Varys policy that logs ``(time, in δ-interval, phase end)`` after
    every decision."""

    class Logged(cls):
        def reset(self, view: InstanceView) -> None:
            super().reset(view)
            self.phases: list[tuple[float, bool, float]] = []

        def decide(self, state: ObservedState) -> Decision:
            d = super().decide(state)
            self.phases.append((state.time, self._in_delta, self._phase_end))
            return d

    return Logged


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("policy", [Varys, VarysSCF, VarysTCF])
def test_every_coflow_is_served_in_every_window(seed, policy):
    """Tests Pseudocode 1's starvation bound (thesis §5.5.3) on random arrivals: a coflow present
    during a whole (T + δ) window (a T-interval and the δ-interval after it) is served in that
    window; so no coflow waits longer than 2T + δ."""
    inst = uniform(4, 14, density=0.4, sizes=(1, 10), release_rate=0.4, seed=seed)
    T, delta = 4.0, 0.5
    logged = with_phase_log(policy)(T=T, delta=delta)
    res = run(inst, logged)
    starts = [t for t, in_delta, end in logged.phases if not in_delta and end == t + T]
    starts = sorted(set(starts))
    assert len(starts) > 3
    checked = 0
    for lo, hi in itertools.pairwise(starts):
        for k in range(inst.num_coflows):
            if inst.coflow_release[k] <= lo and res.coflow_completion[k] >= hi:
                assert longest_idle(res, inst.coflow_flows(k), lo, hi) < hi - lo, (k, lo, hi)
                checked += 1
    assert checked
    for k in range(inst.num_coflows):
        idle = longest_idle(res, inst.coflow_flows(k), inst.coflow_release[k],
                            res.coflow_completion[k])  # fmt: skip
        assert idle <= 2 * T + delta + 1e-9, (k, idle)


class AlwaysWake(Varys):
    """Varys as it was before quiet stretches: a wake-up at every phase boundary."""

    def decide(self, state: ObservedState) -> Decision:
        d = super().decide(state)
        self._quiet = False
        return dataclasses.replace(d, wakeup=self._phase_end)


def test_one_huge_flow_does_not_wake_the_policy_every_phase():
    """Tests that one 1e9 MB flow alone (8e9 ms at 0.125 MB/ms) takes one event, its arrival
    (its completion empties the system and asks the policy nothing): nothing can starve while
    every flow sends, so no T-interval boundary needs a wake-up. Waking at every boundary
    adds one event per boundary before the completion, 8e9 / T - 1: about 4e6 with the
    default T = 2000 ms, 99 with T = 8e7 ms, which the reference shows."""
    inst = Instance.from_coflows(
        [Coflow([(0, 1, 1e9)])], Fabric(2, 0.125, 0.125), units=Units("MB", "ms")
    )
    res = run(inst, Varys())
    assert_equal(res.num_events, 1)
    assert_equal(res.coflow_completion, [8e9])
    woken = run(inst, AlwaysWake(T=8e7))
    assert_equal(woken.num_events, 1 + (8e9 / 8e7 - 1))  # wake-ups at 8e7, ..., 99 * 8e7
    assert_equal(woken.coflow_completion, [8e9])


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize(("T", "delta"), [(50.0, 10.0), (7.0, 2.0), (2000.0, 200.0)])
def test_quiet_stretches_keep_every_completion(seed, T, delta):
    """Tests that skipping the wake-ups of quiet stretches gives the per-coflow completion
    times of waking at every boundary, with fewer events, on arrivals that leave the system
    empty at times and make coflows starve at others."""
    inst = fb_like(40, num_ports=10, seed=seed)
    quiet, woken = run(inst, Varys(T=T, delta=delta)), run(inst, AlwaysWake(T=T, delta=delta))
    assert_equal(quiet.coflow_completion, woken.coflow_completion)
    assert quiet.num_events <= woken.num_events


# ---------------------------------------------------------------------------------- deadlines
def admission_instance() -> Instance:
    """Five single-flow coflows on one link with deadlines, built so that admission is tight.

    - t = 0: A (2, D 4) admitted, reserves 1/2; B (3, D 4): Γ = 3 / (1/2) = 6 > 4, rejected;
      C (1, D 2): Γ = 1 / (1/2) = 2 = D, admitted (a tie).
    - t = 1: D (1, D 1): A and C reserve 1.5/3 + 0.5/1 = 1, nothing left: rejected.
    - t = 2: C completes; A (1 left) gets the whole link by backfill.
    - t = 2.5: E (1, D 1.5): A (0.5 left, 1.5 to go) reserves 1/3, Γ_E = 1/(2/3) = 1.5 = D:
      admitted; A and E both finish at exactly 4.
    """
    return one_port((2, 0), (3, 0), (1, 0), (1, 1), (1, 2.5), deadlines=[4, 4, 2, 1, 1.5])


def test_deadline_admission_rejects_exactly_the_infeasible_coflows():
    """Tests Pseudocode 2 on a hand computation: B and D are rejected, A, C, E meet their
    deadlines exactly."""
    policy = VarysDeadline()
    res = run(admission_instance(), policy)
    assert_equal(res.rejected, [1, 3])
    assert_allclose(res.cct[[0, 2, 4]], [4.0, 2.0, 1.5])
    assert np.isnan(res.cct[[1, 3]]).all()


def test_admitting_everything_serves_late_coflows_as_fast_as_possible():
    """Tests admission="all": nothing rejected, infeasible coflows finish, schedule valid."""
    res = run(admission_instance(), VarysDeadline(admission="all"))
    assert len(res.rejected) == 0
    assert not np.isnan(res.cct).any()
    assert_allclose(res.coflow_completion.max(), 8.0)  # the link is never idle: Σ sizes


DEADLINE_INSTANCES: dict[str, Callable[[], Instance]] = {
    "uniform": lambda: assign_deadlines(
        uniform(4, 16, density=0.5, release_rate=0.5, seed=11), x=1.0, seed=12
    ),
    "tight": lambda: assign_deadlines(
        uniform(3, 16, density=0.6, release_rate=1.0, seed=13), x=0.2, seed=14
    ),
    "single_port": lambda: assign_deadlines(single_port(12, seed=15), x=3.0, seed=16),
    "fb_like": lambda: assign_deadlines(fb_like(40, seed=17), seed=18),
}


@pytest.mark.parametrize("kind", DEADLINE_INSTANCES)
def test_admitted_coflows_meet_their_deadlines_and_are_never_preempted(kind):
    """Tests thesis §5.5.4: admitted coflows send continuously from arrival to completion
    and finish by their deadline; rejected ones send nothing."""
    inst = DEADLINE_INSTANCES[kind]()
    res = run(inst, VarysDeadline())
    admitted = np.setdiff1d(np.arange(inst.num_coflows), res.rejected)
    assert len(admitted)
    deadline = inst.coflow_deadline[admitted]
    assert np.all(res.cct[admitted] <= deadline * (1 + 1e-9) + 1e-9)
    for k in admitted:
        for f in inst.coflow_flows(k):
            idle = longest_idle(res, [f], inst.coflow_release[k], res.flow_completion[f])
            assert idle == 0.0, (k, f)
    sch = res.schedule
    assert sch is not None
    for k in res.rejected:
        assert not np.isin(inst.coflow_flows(k), sch.flow).any()


@pytest.mark.parametrize("kind", DEADLINE_INSTANCES)
def test_deadline_runs_stream_their_records_to_the_verifier(kind):
    """Tests that with record=False the deadline mode's records are verified as they come
    (nothing kept), with the recorded run's rejections and completion times, NaN for the
    rejected coflows in the report as in the result."""
    inst = DEADLINE_INSTANCES[kind]()
    kept = simulate(inst, VarysDeadline())
    streamed = simulate(inst, VarysDeadline(), record=False)
    assert streamed.schedule is None and streamed.verified
    assert_equal(streamed.rejected, kept.rejected)
    assert_equal(streamed.coflow_completion, kept.coflow_completion)
    assert streamed.report is not None
    assert np.isnan(streamed.report.coflow_completion[streamed.rejected]).all()


def test_coflows_without_deadlines_are_best_effort():
    """Tests that coflows without a deadline are never rejected and wait for admitted ones."""
    inst = Instance.from_coflows(
        [Coflow([(0, 0, 1.0)]), Coflow([(0, 0, 2.0)], deadline=4.0), Coflow([(0, 0, 5.0)])], 1
    )
    res = run(inst, VarysDeadline())
    assert len(res.rejected) == 0
    # the admitted coflow reserves 1/2; the best-effort ones share the rest by SEBF + backfill
    assert res.cct[1] <= 4.0 + 1e-9
    assert_allclose(res.coflow_completion.max(), 8.0)


# ---------------------------------------------------------------------------------- validity
@pytest.mark.parametrize("kind", INSTANCES)
@pytest.mark.parametrize("name", POLICIES)
def test_every_policy_verifies_on_generated_instances(name, kind):
    """Tests that each policy's schedule verifies, every coflow that is not rejected
    completes, and no CCT beats the coflow's bottleneck (thesis §4.5.1)."""
    inst = INSTANCES[kind]()
    if name == "per-flow" and kind == "fb_like":  # a reschedule per flow: keep it small
        inst = fb_like(15, num_ports=30, seed=8)
    res = run(inst, POLICIES[name]())
    done = np.setdiff1d(np.arange(inst.num_coflows), res.rejected)
    assert not np.isnan(res.cct[done]).any()
    assert np.all(res.cct[done] >= inst.bottleneck[done] * (1 - 1e-9))
    if not name.startswith("deadline") or not inst.has_deadlines:
        assert len(res.rejected) == 0


def test_fb_like_ordering_matters():
    """Tests that SEBF beats FIFO on average CCT on an FB-like workload (thesis §5.5.3: > 3×)."""
    inst = fb_like(40, seed=8)
    assert run(inst, Varys()).cct.mean() < run(inst, VarysFIFO()).cct.mean()


# ---------------------------------------------------------------------------------- API
@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"ordering": "lcf"}, "ordering"),
        ({"backfill": "fair"}, "backfill"),
        ({"reschedule_on": "epoch"}, "reschedule_on"),
        ({"sebf_key": "original"}, "sebf_key"),
        ({"T": 0.0}, "T"),
        ({"delta": -1.0}, "delta"),
        ({"T": float("inf")}, "T"),
        ({"time_unit_ms": 0}, "time_unit_ms"),
    ],
)
def test_invalid_parameters_raise(kwargs, match):
    """Tests that every parameter is validated and the message names it."""
    with pytest.raises(ValueError, match=match):
        Varys(**kwargs)


def test_deadline_parameters_are_validated():
    """Tests VarysDeadline's parameter checks."""
    with pytest.raises(ValueError, match="admission"):
        VarysDeadline(admission="edf")


@pytest.mark.parametrize("name", POLICIES)
def test_policies_are_clairvoyant_and_refuse_a_sizeless_view(name):
    """Tests the clairvoyance flag and that reset needs sizes."""
    policy = POLICIES[name]()
    assert policy.clairvoyant is True
    view = instance_view(fig_5_1(), clairvoyant=False)
    with pytest.raises(ValueError, match="clairvoyant"):
        policy.reset(view)


def test_names_and_repr():
    """Tests the registry names and that repr shows the parameters."""
    names = [p().name for p in (Varys, VarysSCF, VarysNCF, VarysTCF, VarysFIFO, VarysDeadline)]
    assert names == ["varys", "scf", "ncf", "tcf", "fifo", "varys-deadline"]
    assert "sebf_key='residual'" in repr(Varys(sebf_key="residual"))
    assert "starvation=False" in repr(VarysFIFO())
    assert "admission='all'" in repr(VarysDeadline(admission="all"))


def test_policy_objects_are_reusable():
    """Tests that reset clears all state: two runs of one object give the same result."""
    policy = Varys(T=3.0, delta=0.5)
    inst = INSTANCES["releases"]()
    assert_equal(run(inst, policy).coflow_completion, run(inst, policy).coflow_completion)
    deadline = VarysDeadline()
    inst = DEADLINE_INSTANCES["tight"]()
    assert_equal(run(inst, deadline).rejected, run(inst, deadline).rejected)


def test_capacities_are_respected_on_a_non_unit_fabric():
    """Tests MADD and backfill against per-port capacities (a 0.5 ingress port)."""
    inst = Instance.from_coflows(
        [Coflow([(0, 0, 1.0), (1, 1, 1.0)]), Coflow([(0, 1, 1.0)])],
        Fabric(2, ingress_capacity=[0.5, 1.0]),
    )
    res = run(inst, Varys())
    # tie Γ = 2 → C0 first: 1/2 and 1/2 (backfilled to 1 on ingress 1); C1 is blocked on
    # ingress 0 until 2, then takes 2 more at rate 1/2
    assert_allclose(res.cct, [2.0, 4.0])
    assert_allclose(res.flow_completion, [2.0, 1.0, 4.0])


# ----------------------------------------------------------------- skipped coflows (issue 14)
def blocked_pair() -> Instance:
    """A = {0→0: 2, 1→1: 0.5} and B = {0→1: 1, 1→1: 1} on unit ports. SEBF (ρ 2 and 2, tie
    to the lower index), NCF (two flows each) and FIFO (both at 0) serve A first."""
    a = np.array([[2.0, 0.0], [0.0, 0.5]])
    b = np.array([[0.0, 1.0], [0.0, 1.0]])
    return Instance.from_matrices([a, b])


def test_skipped_coflows_share_what_madd_left():
    """Tests the equal split of skipped coflows (docs/fidelity.md#skipped), by hand.

    MADD gives A Γ = 2: 0→0 at 1, 1→1 at 1/4. B needs ingress 0, which is full: skipped. The
    split gives B's flows min(F_in / n_in, F_out / n_out) with egress 1 (3/4 free) shared by
    two flows: 0→1 gets min(0, 3/8) = 0, 1→1 gets 3/8. The greedy backfill lifts A's 1→1 flow
    by the 3/8 left on ingress 1 and egress 1 (to 5/8: it ends at 0.8). At A's completion (2)
    B has 1 and 1/4 left, Γ = 5/4 on egress 1: B ends at 3.25.
    """
    res = run(blocked_pair(), Varys(starvation=False))
    assert_allclose(res.cct, [2.0, 3.25])
    assert_allclose(res.flow_completion, [2.0, 0.8, 3.25, 3.25])


def test_skipped_wait_leaves_the_freed_ports_idle():
    """Tests skipped="wait" (the rule before issue 14), by hand: B gets nothing from MADD, the
    backfill lifts A's 1→1 flow to 1 (it ends at 0.5) and ingress 1 and egress 1 then idle
    until A completes at 2; B alone then needs 2 on egress 1: it ends at 4. Rescheduling at
    every flow completion hands the freed ports to B's 1→1 flow at 0.5 (it ends at 1.5), and
    B's 0→1 flow ends at 3."""
    assert_allclose(run(blocked_pair(), Varys(starvation=False, skipped="wait")).cct, [2, 4])
    every_flow = Varys(starvation=False, skipped="wait", reschedule_on="flow")
    res = run(blocked_pair(), every_flow)
    assert_allclose(res.cct, [2.0, 3.0])
    assert_allclose(res.flow_completion, [2.0, 0.5, 3.0, 1.5])


@pytest.mark.parametrize("cls", [VarysNCF, VarysFIFO])
def test_fixed_orderings_take_the_skipped_rule(cls):
    """Tests that the fixed-order variants pass ``skipped`` through (A first in each)."""
    assert_allclose(run(blocked_pair(), cls(starvation=False)).cct, [2.0, 3.25])
    assert_allclose(run(blocked_pair(), cls(starvation=False, skipped="wait")).cct, [2, 4])


def test_skipped_is_validated():
    with pytest.raises(ValueError, match="skipped must be one of"):
        Varys(skipped="idle")


def cct_fingerprint(cct: np.ndarray) -> str:
    """SHA-256 of the per-coflow CCTs in ms, one ``index round(cct)`` line per coflow."""
    import hashlib

    text = "".join(f"{k} {round(c)}\n" for k, c in enumerate(cct.tolist()))
    return hashlib.sha256(text.encode()).hexdigest()


VARYS_ZERO_SHARE = "00b41ec562bb9be6f3e5f8908d9e7bf3d54f64264bb5cc924bcd21fd7fad54b9"
VARYS_ZERO_WAIT = "e72d04ce6dfbcf255ea20482e7d2d3f76ab1c80406696bf1d92e4505ea9197bc"
SINCRONIA_SEBF_MADD_MS = 61_879.0
"""Average CCT of Sincronia's offline simulator (SEBF order, MADD) on the trace with every
release at 0, in ms at 8 ms per unit, as measured for issue 14 (not by this code)."""


@pytest.mark.trace
@pytest.mark.slow
def test_zero_release_trace_varys_is_near_sincronia_and_wait_reproduces_issue_14(fb_trace):
    """Tests the conclusion of docs/fidelity.md on the trace with every release at 0: the
    default Varys lands within 10% of Sincronia's exact SEBF + MADD, and skipped="wait"
    gives the 90,929 ms measured before the fix (issue 14). The fingerprints pin the
    per-coflow CCTs of both (regression; taken after issue 14)."""
    from coflowlab.instances import read_instance

    trace = read_instance(fb_trace)
    zero = trace.replace(coflow_release=np.zeros(trace.num_coflows))
    share = simulate(zero, Varys(starvation=False), verify_schedule=True, record=False)
    assert share.verified
    assert abs(share.cct.mean() / SINCRONIA_SEBF_MADD_MS - 1) < 0.10
    assert round(share.cct.mean()) == 61_168
    wait = simulate(zero, Varys(starvation=False, skipped="wait"), record=False)
    assert round(wait.cct.mean()) == 90_929
    assert (cct_fingerprint(share.cct), cct_fingerprint(wait.cct)) == (
        VARYS_ZERO_SHARE,
        VARYS_ZERO_WAIT,
    )
