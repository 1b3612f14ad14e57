"""Invariants of the online heuristics (the policies of ``coflowlab.heuristics.POLICIES``).

Every property is a plain check function (``check_*``) over one recorded simulation; the
``@given`` tests call it on generated instances for every registered policy (read from the
registry through :func:`algorithms.heuristics`, so a newly registered policy joins each suite
that applies to it), and the bug-injection tests call the same checks on deliberately broken
policies (:mod:`recording`) and assert that they fail. Decisions are recorded by the
:class:`recording.Recording` wrapper, which forwards the policy's state and decision unchanged.

Properties (sources: Chowdhury's PhD thesis, UC Berkeley 2015; docs/varys.md, docs/aalo.md):

- capacity: port capacities hold at every decision and in the verified schedule (thesis
  constraints B.2/B.3, Appendix B.1; docs/aalo.md#pseudocode-4; docs/theory.md#properties,
  P13);
- work conservation where the policy claims it (:data:`WORK_CONSERVATION`);
- D-CLAS (Aalo, both variants): queue indices never decrease, demotions are justified by bytes
  actually sent and are timely, and FIFO holds within a queue where D-CLAS promises it exactly;
- non-clairvoyance: policies with ``clairvoyant = False`` decide identically on instances that
  differ only in sizes they have not observed yet;
- Varys deadline mode: admitted coflows are never preempted and meet their deadlines, rejected
  ones send nothing, and a rejection is justified by the admission test;
- per-flow prioritization (``pfp``) on equal port capacities: re-ranking at every overtaking
  changes no rate (docs/varys.md#pfp-no-wake-ups), which is why its matching kernel never
  wakes up.

HUG, DRF, PS-P and Coflex join these suites (capacity, work conservation where claimed) from
the registry; their own guarantees (progress ≥ P* or α·P*, strategy-proofness, Coflex's
Theorem 4) are in ``test_fairness.py``.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import algorithms
import numpy as np
import pytest
import strategies
import summary
from hypothesis import Phase, given, settings
from hypothesis import strategies as st
from profiles import examples
from recording import (
    Recording,
    ScaledRates,
    SizePeeking,
    Step,
    WalkPfp,
    bytes_sent,
    crossing_time,
    simulate_recorded,
)

import coflowlab as cl
from coflowlab.constants import TOL
from coflowlab.heuristics import make_policy
from coflowlab.heuristics.baselines import PerFlowPriority

RTOL = 1e-7
"""Relative tolerance of rate and capacity comparisons (rates are sums and differences of a
few floating-point terms; a real violation is of the order of a rate)."""


# ============================================================================ configurations
@dataclass(frozen=True)
class Config:
    """A registered policy with constructor parameters (``{}``: the registry's defaults)."""

    name: str
    params: dict[str, Any] = field(default_factory=dict)
    label: str = ""

    def __repr__(self) -> str:
        return self.label or self.name

    def make(self, instance: cl.Instance) -> Any:
        return make_policy(self.name, instance, **self.params)

    @property
    def clairvoyant(self) -> bool:
        return bool(algorithms.POLICIES[self.name].clairvoyant)


REGISTERED = [Config(a.name) for a in algorithms.heuristics()]
"""Every registered policy with its defaults."""

# Parameter settings that reach the edges of a claim on these small instances: with the
# defaults (T = 2000) Varys never enters a δ-interval; strict weights make Aalo's FIFO exact.
EXTRA = [
    Config("varys", {"T": 4.0, "delta": 1.0}, "varys[T=4,δ=1]"),
    Config("aalo", {"weights": "strict"}, "aalo[strict]"),
    Config("aalo", {"delta": 0.0}, "aalo[Δ=0]"),
]
CONFIGS = REGISTERED + [c for c in EXTRA if c.name in algorithms.POLICIES]
NON_CLAIRVOYANT = [c for c in CONFIGS if not c.clairvoyant]
DCLAS = [c for c in CONFIGS if c.name in ("aalo", "aalo-uncoordinated")]


def _innermost(policy: Any) -> Any:
    while hasattr(policy, "inner"):  # a wrapper of the bug-injection tests
        policy = policy.inner
    return policy


def _varys_snapshot(policy: Any) -> dict[str, Any]:
    policy = _innermost(policy)
    return {"in_delta": bool(getattr(policy, "_in_delta", False))}


def _aalo_snapshot(policy: Any) -> dict[str, Any]:
    policy = _innermost(policy)
    if policy.coordinated:
        return {"queue": policy.queue.copy()}
    return {"pair_queue": policy.pair_queue.copy()}


SNAPSHOTS: dict[str, Callable[[Any], Any]] = {
    "varys": _varys_snapshot,
    "scf": _varys_snapshot,
    "ncf": _varys_snapshot,
    "tcf": _varys_snapshot,
    "fifo": _varys_snapshot,
    "aalo": _aalo_snapshot,
    "aalo-uncoordinated": _aalo_snapshot,
}


def run(config: Config, instance: cl.Instance) -> tuple[cl.SimulationResult, Recording, Any]:
    """Simulates ``config`` on ``instance``, recorded; returns result, recording, policy."""
    policy = config.make(instance)
    result, rec = simulate_recorded(instance, policy, SNAPSHOTS.get(config.name))
    return result, rec, policy


# ============================================================================ helpers
def _loads(inst: cl.Instance, step: Step, keep: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    m = inst.num_ports
    r = np.where(keep, step.rate, 0.0)
    return (
        np.bincount(step.src, weights=r, minlength=m)[:m],
        np.bincount(step.dst, weights=r, minlength=m)[:m],
    )


def _caps(inst: cl.Instance) -> tuple[np.ndarray, np.ndarray]:
    fab = inst.fabric
    return np.asarray(fab.ingress_capacity, float), np.asarray(fab.egress_capacity, float)


def _not_rejected(step: Step, rejected: np.ndarray) -> np.ndarray:
    return ~np.isin(step.coflow, rejected)


def verify_result(inst: cl.Instance, result: cl.SimulationResult) -> cl.VerificationReport | None:
    """The verifier's report on the schedule; with rejected coflows, on the admitted ones
    (rejected coflows must have no records at all); ``None`` when every coflow was rejected
    and nothing was sent."""
    schedule = result.schedule
    assert schedule is not None
    rejected = result.rejected
    if not len(rejected):
        return cl.verify(inst, schedule)
    keep = np.setdiff1d(np.arange(inst.num_coflows), rejected)
    if not len(keep):  # everything rejected: nothing may be sent
        assert schedule.num_records == 0, "a rejected coflow has rate records"
        return None
    flows = np.concatenate([inst.coflow_flows(int(k)) for k in keep])
    new_index = np.full(inst.num_flows, -1, dtype=np.int64)
    new_index[flows] = np.arange(len(flows))
    mapped = new_index[np.asarray(schedule.flow)]
    assert (mapped >= 0).all(), "a rejected coflow has rate records"
    sub = inst.subset(keep)
    return cl.verify(sub, cl.FluidSchedule(sub.num_flows, schedule.time, mapped, schedule.rate))


# ============================================================================ capacity
def check_capacity(
    inst: cl.Instance, result: cl.SimulationResult, rec: Recording, prop: str, alg: str
) -> None:
    """Rates at every port sum to at most its capacity after every decision, and the recorded
    schedule passes the independent verifier (capacities, bytes, releases)."""
    cap_in, cap_out = _caps(inst)
    worst = 0.0
    for step in rec.steps:
        load_in, load_out = _loads(inst, step, _not_rejected(step, step.rejected))
        assert (step.rate >= 0).all(), f"t={step.time}: negative rate {step.rate}"
        over_in = load_in - cap_in * (1 + RTOL)
        over_out = load_out - cap_out * (1 + RTOL)
        assert (over_in <= 0).all() and (over_out <= 0).all(), (
            f"t={step.time}: port loads in={load_in} out={load_out} exceed capacities "
            f"in={cap_in} out={cap_out}"
        )
        worst = max(worst, float(np.max(load_in / cap_in)), float(np.max(load_out / cap_out)))
    report = verify_result(inst, result)
    assert report is None or report.feasible, report.summary()
    summary.observe(prop, algorithm=alg, ratio=worst, limit=1.0, value=worst, bound="≤ capacity")


# ============================================================================ work conservation
def _never(policy: Any, step: Step) -> bool:
    return False


def _always(policy: Any, step: Step) -> bool:
    return True


def _varys_reallocation(policy: Any, step: Step) -> bool:
    # greedy backfill only; a δ-interval serves only the starved coflows
    greedy = getattr(policy, "backfill", "greedy") == "greedy"
    in_delta = bool(step.snapshot and step.snapshot.get("in_delta"))
    return greedy and step.reallocated and not in_delta


def _deadline_reallocation(policy: Any, step: Step) -> bool:
    return getattr(policy, "backfill", "greedy") == "greedy" and step.reallocated


WORK_CONSERVATION: dict[str, Callable[[Any, Step], bool]] = {
    "fair": _always,
    "pfp": _always,
    "fifo-lm": _always,
    "aalo": _always,
    "aalo-uncoordinated": _always,
    "varys": _varys_reallocation,
    "scf": _varys_reallocation,
    "ncf": _varys_reallocation,
    "tcf": _varys_reallocation,
    "fifo": _varys_reallocation,
    "varys-deadline": _deadline_reallocation,
    # issue 16 (docs/hug-coflex.md): the uncapped fillings are work conserving at every decision
    "hug-cooperative": _always,
    "ps-p": _always,
    "coflex": lambda policy, step: bool(getattr(policy, "backfill", False)) and step.reallocated,
    "hug": _never,
    "drf": _never,
    "coflex-naive": _never,
}
"""At which decisions each policy claims to be work conserving, from its docstring:

- ``fair``: per-flow max-min fairness is Pareto efficient: every flow has a saturated port;
- ``pfp``: "in that order each takes the smaller of its two residual port capacities" (a
  greedy: afterwards every flow has a saturated port);
- ``fifo-lm``: "max-min fair rates from what is left (strict priority, work conserving)";
- ``aalo``, ``aalo-uncoordinated``: :func:`dclas_allocation` "is always work conserving: every
  flow has a saturated port" (redistribution rounds, then a greedy backfill), recomputed at
  every event;
- Varys and its orderings (``varys``, ``scf``, ``ncf``, ``tcf``, ``fifo``): only at a
  *reallocation* (a coflow arrival or completion, a timer boundary) with the greedy backfill
  ("afterwards no flow has spare capacity at both ports", docs/varys.md#backfill) and outside a
  δ-interval (which serves only the starved coflows C*). Between reallocations Varys keeps
  rates when a flow of a running coflow completes (thesis §5.4.2; ``Decision(None)``), so the freed
  bandwidth idles until the next one; ``backfill="ratio"``/``"none"`` make no claim;
- ``varys-deadline``: at a reallocation, with the greedy backfill over admitted and
  best-effort coflows; rejected coflows leave the system (excluded).

A policy registered later without an entry here is held to the strictest claim (every flow has
a saturated port after every decision): if it is not work conserving, its entry says when.
"""


def check_work_conservation(
    inst: cl.Instance,
    rec: Recording,
    policy: Any,
    applies: Callable[[Any, Step], bool],
    prop: str,
    alg: str,
) -> None:
    """After every decision where the policy claims work conservation, every active flow
    (rate 0 included) has a port with no spare capacity (within :data:`RTOL`): no flow could
    send more without exceeding a capacity."""
    cap_in, cap_out = _caps(inst)
    scale = float(max(cap_in.max(), cap_out.max()))
    worst = 0.0
    checked = 0
    for step in rec.steps:
        if not applies(policy, step):
            continue
        checked += 1
        keep = _not_rejected(step, step.rejected)
        load_in, load_out = _loads(inst, step, keep)
        spare = np.minimum((cap_in - load_in)[step.src], (cap_out - load_out)[step.dst])
        spare = np.where(keep, spare, 0.0)
        if len(spare):
            worst = max(worst, float(spare.max()) / scale)
        bad = np.flatnonzero(spare > RTOL * scale)
        assert not len(bad), (
            f"t={step.time}: flows {step.flows[bad].tolist()} (rates {step.rate[bad].tolist()})"
            f" have spare capacity {spare[bad].tolist()} at both ports"
        )
    summary.observe(prop, algorithm=alg, ratio=worst, bound="both-port spare ≤ 0")


# ============================================================================ D-CLAS
def _pair_flows(inst: cl.Instance, coflow: int, port: int) -> np.ndarray:
    """Flows of ``coflow`` through ``port`` (``-1``: all; egress ports are ``m + j``)."""
    flows = inst.coflow_flows(int(coflow))
    m = inst.num_ports
    if port < 0:
        return flows
    if port < m:
        return flows[inst.flow_src[flows] == port]
    return flows[inst.flow_dst[flows] == port - m]


def check_dclas_queues(
    inst: cl.Instance, result: cl.SimulationResult, rec: Recording, policy: Any, prop: str
) -> None:
    """D-CLAS queue discipline (thesis §6.5.1, §6.5.4, §6.4.2; docs/aalo.md).

    - Every coflow enters Q_1 and its queue index never decreases: per coflow (coordinated)
      or per (coflow, port) (uncoordinated), the demotions go to strictly higher queues, in
      time order, and the queue arrays seen after every decision never decrease.
    - A demotion is justified by bytes really sent (no size is known): at a demotion to queue
      q the coflow (resp. the coflow at that port) has sent at least Q_q^lo; coordinated, it
      goes to exactly the queue of its bytes, and only at a Δ-sync (a multiple of Δ).
    - A demotion is timely: once the bytes cross Q_q^lo at t_x, the coflow is in queue ≥ q by
      the first Δ-sync at or after t_x (coordinated; at t_x itself when Δ = 0 and
      uncoordinated), unless it has no active flow (there) any more.
    """
    bounds = np.asarray(policy.bounds, dtype=float)
    schedule = result.schedule
    assert schedule is not None
    key = "queue" if policy.coordinated else "pair_queue"
    previous = None
    for step in rec.steps:
        q = step.snapshot[key]
        assert (q >= 0).all()
        if previous is not None:
            assert (q >= previous).all(), f"t={step.time}: a queue index decreased: {previous}→{q}"
        previous = q
    delta = policy.delta if policy.coordinated else 0.0
    scale = max(1.0, float(np.nanmax(result.flow_completion)))
    by_key: dict[tuple[int, int], list[tuple[float, int]]] = {}
    for t, c, port, level in policy.demotions:
        by_key.setdefault((int(c), int(port)), []).append((float(t), int(level)))
        assert (port == -1) == policy.coordinated
        flows = _pair_flows(inst, c, port)
        sent = float(bytes_sent(schedule, t)[flows].sum())
        assert sent >= bounds[level - 1] * (1 - 1e-6), (
            f"coflow {c} (port {port}) demoted to queue {level} at t={t} after sending only "
            f"{sent} < {bounds[level - 1]}"
        )
        if policy.coordinated:
            assert sent < bounds[level] * (1 + 1e-6), (
                f"coflow {c} demoted to queue {level} at t={t} with {sent} bytes sent"
            )
            if delta > 0:
                k = round(t / delta)
                assert abs(t - k * delta) <= 1e-9 * max(1.0, t), f"demotion at t={t} off-sync"
    for (c, port), moves in by_key.items():
        times = [t for t, _ in moves]
        levels = [lv for _, lv in moves]
        assert levels[0] >= 1 and all(b > a for a, b in itertools.pairwise(levels)), (
            f"coflow {c} (port {port}) queue sequence {levels}"
        )
        assert times == sorted(times)
    # timeliness
    keys = (
        [(c, -1) for c in range(inst.num_coflows)]
        if policy.coordinated
        else sorted(
            {(int(inst.flow_coflow[f]), int(inst.flow_src[f])) for f in range(inst.num_flows)}
            | {
                (int(inst.flow_coflow[f]), inst.num_ports + int(inst.flow_dst[f]))
                for f in range(inst.num_flows)
            }
        )
    )
    for c, port in keys:
        flows = _pair_flows(inst, c, port)
        last = float(np.max(result.flow_completion[flows]))
        for level in range(1, len(bounds)):
            t_x = crossing_time(schedule, flows, bounds[level - 1] * (1 + 1e-6))
            if not math.isfinite(t_x):
                break
            due = math.ceil(t_x / delta - 1e-9) * delta if delta > 0 else t_x
            if last <= due + 1e-9 * scale:
                break  # no active flow left (there) when the demotion was due
            done = [t for t, lv in by_key.get((c, port), []) if lv >= level]
            assert done and done[0] <= due + 1e-9 * scale, (
                f"coflow {c} (port {port}) crossed {bounds[level - 1]} at t={t_x}; demotion "
                f"to queue ≥ {level} due at {due}, got {done[:1] or 'none'}"
            )
    summary.observe(prop, algorithm=policy.name, value=float(len(policy.demotions)))


def check_dclas_fifo(inst: cl.Instance, rec: Recording, policy: Any, prop: str) -> int:
    """FIFO within a queue, where D-CLAS guarantees it exactly; returns the decisions checked.

    Thesis §6.5.4 ("within a queue: FIFO ... a coflow can proceed until it reaches a queue
    threshold or completes") and our reading (docs/aalo.md) ("a later coflow never takes bandwidth
    on a port where an earlier coflow in the same queue still has unmet demand"). With weighted
    queues the executable reading (docs/aalo.md#pseudocode-4; :func:`dclas_allocation`) guarantees
    FIFO only within each redistribution round's entitlements, so a later coflow may keep bandwidth
    an earlier one of its queue could have used after a redistribution (documented there). It is
    exact (each coflow takes max-min fair rates from what the coflows before it left) in two cases,
    which are checked:

    - every active coflow is in the same queue (everywhere, for the uncoordinated variant): one
      queue gets every port's whole capacity, one round;
    - coordinated with ``weights="strict"``: coflows in (queue, FIFO) order.

    FIFO order: arrival time, then coflow index (no dependencies here). The observable
    consequence: after the decision, each flow of coflow A has a port saturated by the rates of
    A and the coflows ahead of it alone, so no coflow behind A holds capacity A could use.
    """
    cap_in, cap_out = _caps(inst)
    scale = float(max(cap_in.max(), cap_out.max()))
    m = inst.num_ports
    arrival = inst.coflow_release
    checked = 0
    for step in rec.steps:
        if policy.coordinated:
            q_flow = step.snapshot["queue"][step.coflow]
            q_in = q_out = q_flow
        else:
            pq = step.snapshot["pair_queue"]
            q_in = pq[policy._local.pair_in[step.flows]]
            q_out = pq[policy._local.pair_out[step.flows]]
        strict = policy.coordinated and policy.strict
        one_queue = len(np.unique(np.concatenate([q_in, q_out]))) <= 1
        if not (strict or one_queue):
            continue
        checked += 1
        coflows = np.unique(step.coflow)
        cq = (
            np.array([q_in[step.coflow == c][0] for c in coflows])
            if strict
            else np.zeros(len(coflows))
        )
        order = coflows[np.lexsort((coflows, arrival[coflows], cq))]
        load_in = np.zeros(m)
        load_out = np.zeros(m)
        for c in order:
            mine = step.coflow == c
            load_in += np.bincount(step.src[mine], weights=step.rate[mine], minlength=m)[:m]
            load_out += np.bincount(step.dst[mine], weights=step.rate[mine], minlength=m)[:m]
            spare = np.minimum(
                (cap_in - load_in)[step.src[mine]], (cap_out - load_out)[step.dst[mine]]
            )
            bad = spare > RTOL * scale
            assert not bad.any(), (
                f"t={step.time}: coflow {c} (FIFO order {order.tolist()}) has flows "
                f"{step.flows[mine][bad].tolist()} with capacity left at both ports by the "
                "coflows ahead of it: a later coflow of its queue holds it"
            )
    summary.observe(prop, algorithm=policy.name, value=float(checked))
    return checked


# ============================================================================ non-clairvoyance
def check_non_clairvoyant(
    config: Config, small: cl.Instance, large: cl.Instance, prop: str
) -> None:
    """``large`` equals ``small`` except that some flows are larger. Until the first of those
    flows completes in ``small`` (the first event at which the difference is observable), a
    non-clairvoyant policy sees the same arrivals, bytes sent and completions in both, so its
    two schedules, truncated before that time, are identical record for record."""
    changed = np.flatnonzero(large.flow_size != small.flow_size)
    assert len(changed)
    res_s, _, _ = run(config, small)
    res_l, _, _ = run(config, large)
    reveal = float(np.min(res_s.flow_completion[changed]))
    assert math.isfinite(reveal)

    def before(res: cl.SimulationResult) -> np.ndarray:
        s = res.schedule
        assert s is not None
        t, f, r = np.asarray(s.time), np.asarray(s.flow), np.asarray(s.rate)
        keep = t < reveal
        rows = np.stack([t[keep], f[keep].astype(float), r[keep]], axis=1)
        return rows[np.lexsort((rows[:, 1], rows[:, 0]))]

    a, b = before(res_s), before(res_l)
    assert a.shape == b.shape and np.array_equal(a, b), (
        f"{config!r} decided differently before t={reveal}, when flows {changed.tolist()} "
        f"(sizes {small.flow_size[changed].tolist()} vs {large.flow_size[changed].tolist()}) "
        f"could first be told apart:\n{a}\n{b}"
    )
    horizon = float(np.nanmax(res_s.flow_completion))
    summary.observe(prop, algorithm=repr(config), value=reveal / max(horizon, 1e-12))


# ============================================================================ deadlines
def _gamma(
    rem: np.ndarray, src: np.ndarray, dst: np.ndarray, res_in: np.ndarray, res_out: np.ndarray
) -> float:
    """Effective bottleneck of one coflow on residual capacities (``inf`` if a needed port
    has none left)."""
    m = len(res_in)
    load_in = np.bincount(src, weights=rem, minlength=m)[:m]
    load_out = np.bincount(dst, weights=rem, minlength=m)[:m]
    g = 0.0
    for load, res in ((load_in, res_in), (load_out, res_out)):
        need = load > 0
        if (res[need] <= 0).any():
            return math.inf
        if need.any():
            g = max(g, float(np.max(load[need] / res[need])))
    return g


def check_deadlines(
    inst: cl.Instance, result: cl.SimulationResult, rec: Recording, prop: str
) -> None:
    """Varys deadline mode (Pseudocode 2, thesis §5.5.4, §5.7.3; docs/varys.md#deadlines).

    - Rejected coflows have a deadline and send nothing (no positive rate, ever).
    - Admitted coflows (a deadline, not rejected) are never preempted: at every decision each
      of their active flows runs at least at ``remaining / (time left to the deadline)`` (the
      MADD reservation; in particular never at rate 0), and they complete by
      ``release + deadline`` (within :data:`RTOL`). The docstring promises exactly this for the
      ``"varys"`` admission ("they are never preempted (their rates never drop below the
      reservation)"); CoflowSim's deadline tolerance is a different model.
    - A rejection is justified: at the rejecting decision, the coflow's Γ on the capacity left
      by the reservations of the admitted coflows (including those admitted at the same event
      with a lower index) exceeds its time left ("a coflow is never rejected if it can safely
      be admitted").
    """
    cap_in, cap_out = _caps(inst)
    deadline = inst.coflow_deadline
    release = inst.coflow_release
    due = release + deadline
    rejected = np.asarray(result.rejected, dtype=np.int64)
    assert np.isfinite(deadline[rejected]).all(), "a coflow without deadline was rejected"
    schedule = result.schedule
    assert schedule is not None
    rej_flows = np.isin(inst.flow_coflow, rejected)
    assert not (np.asarray(schedule.rate)[rej_flows[np.asarray(schedule.flow)]] > 0).any()
    admitted = np.isfinite(deadline) & ~np.isin(np.arange(inst.num_coflows), rejected)
    for step in rec.steps:
        t = step.time
        assert step.remaining is not None
        served = step.rate > 0
        assert not (served & np.isin(step.coflow, rejected)).any(), f"t={t}: rejected served"
        mine = admitted[step.coflow] & (due[step.coflow] - t > RTOL * max(1.0, t))
        need = step.remaining[mine] / (due[step.coflow[mine]] - t)
        low = step.rate[mine] < need * (1 - 1e-6) - 1e-12
        assert not low.any(), (
            f"t={t}: admitted flows {step.flows[mine][low].tolist()} at rates "
            f"{step.rate[mine][low].tolist()} below their reservations {need[low].tolist()}"
        )
        for c in step.rejected:
            res_in, res_out = cap_in.copy(), cap_out.copy()
            earlier = admitted[step.coflow] & (due[step.coflow] - t > 0)
            new_lower = np.isin(step.coflow, np.flatnonzero(release == t)) & (step.coflow < c)
            new_lower &= ~np.isin(step.coflow, step.rejected)
            reserve = earlier | (new_lower & admitted[step.coflow])
            r = np.where(reserve, step.remaining / np.maximum(due[step.coflow] - t, 1e-300), 0.0)
            m = inst.num_ports
            res_in = np.maximum(res_in - np.bincount(step.src, weights=r, minlength=m)[:m], 0)
            res_out = np.maximum(res_out - np.bincount(step.dst, weights=r, minlength=m)[:m], 0)
            me = step.coflow == c
            g = _gamma(step.remaining[me], step.src[me], step.dst[me], res_in, res_out)
            assert g > (due[c] - t) * (1 - 1e-6), (
                f"t={t}: coflow {c} rejected although Γ={g} ≤ time left {due[c] - t}"
            )
    for c in np.flatnonzero(admitted):
        done = result.coflow_completion[c]
        assert done <= due[c] + RTOL * max(1.0, due[c]), (
            f"admitted coflow {c} completed at {done} after its deadline {due[c]}"
        )
        summary.observe(
            prop,
            algorithm=result.policy,
            ratio=(done - release[c]) / deadline[c],
            limit=float(due[c]),
            value=float(done),
            bound="C ≤ r + D",
        )
    if not admitted.any():
        summary.observe(prop, algorithm=result.policy)


# ============================================================================ the tests
INSTANCES = strategies.instances(max_ports=4, max_coflows=5, deadlines=True, capacities=True)


@pytest.mark.parametrize("config", CONFIGS, ids=repr)
@examples(ci=12, thorough=500)
@given(inst=INSTANCES)
def test_capacity(config: Config, inst: cl.Instance) -> None:
    """Port capacities are never exceeded (constraints B.2/B.3 of the thesis's offline formulation,
    Appendix B.1; docs/theory.md#properties, P13): at every decision of every policy, and in the
    recorded schedule by the verifier."""
    result, rec, _ = run(config, inst)
    check_capacity(inst, result, rec, "heuristic capacity", repr(config))


@pytest.mark.parametrize("config", CONFIGS, ids=repr)
@examples(ci=12, thorough=500)
@given(inst=INSTANCES)
def test_work_conservation(config: Config, inst: cl.Instance) -> None:
    """Work conservation where the policy claims it (:data:`WORK_CONSERVATION` lists when,
    with each docstring's reason): after such a decision no active flow has spare capacity
    at both of its ports (Varys' backfill, thesis §5.5.3 and docs/varys.md#backfill; D-CLAS's
    excess redistribution, §6.5.4; max-min fairness is Pareto efficient)."""
    _result, rec, policy = run(config, inst)
    applies = WORK_CONSERVATION.get(config.name, _always)
    check_work_conservation(
        inst, rec, policy, applies, "heuristic work conservation", repr(config)
    )


@pytest.mark.parametrize("config", DCLAS, ids=repr)
@examples(ci=20, thorough=1000)
@given(inst=INSTANCES)
def test_dclas_queues(config: Config, inst: cl.Instance) -> None:
    """D-CLAS queues (Chowdhury's thesis §6.5.1, §6.5.4, §6.6.2; docs/aalo.md): queue indices never
    decrease, demotions follow bytes sent and are timely (see :func:`check_dclas_queues`)."""
    result, rec, policy = run(config, inst)
    check_dclas_queues(inst, result, rec, policy, "D-CLAS queues monotone, justified, timely")


@pytest.mark.parametrize("config", DCLAS, ids=repr)
@examples(ci=20, thorough=1000)
@given(inst=INSTANCES)
def test_dclas_fifo(config: Config, inst: cl.Instance) -> None:
    """FIFO within a D-CLAS queue (thesis §6.5.4, §6.6.1; docs/aalo.md), in the
    cases where the allocation guarantees it exactly (see :func:`check_dclas_fifo`)."""
    _, rec, policy = run(config, inst)
    check_dclas_fifo(inst, rec, policy, "D-CLAS FIFO within a queue")


@st.composite
def enlarged(draw: st.DrawFn) -> tuple[cl.Instance, cl.Instance]:
    """Two instances that differ only in the sizes of some flows (larger in the second)."""
    small = draw(strategies.instances(max_ports=4, max_coflows=5, capacities=True))
    nf = small.num_flows
    which = draw(st.lists(st.integers(0, nf - 1), min_size=1, max_size=nf, unique=True))
    factor = draw(st.lists(st.floats(1.05, 4.0), min_size=len(which), max_size=len(which)))
    size = small.flow_size.copy()
    size[which] = size[which] * np.asarray(factor)
    return small, small.replace(flow_size=size)


@pytest.mark.parametrize("config", NON_CLAIRVOYANT, ids=repr)
@examples(ci=15, thorough=800)
@given(pair=enlarged())
def test_non_clairvoyant(config: Config, pair: tuple[cl.Instance, cl.Instance]) -> None:
    """Non-clairvoyance (Aalo's "no prior knowledge", thesis §6.1, §6.2, §6.7.1; the per-flow fair
    and FIFO-LM baselines are non-clairvoyant too): a policy with ``clairvoyant = False`` cannot
    tell sizes apart before a flow completes, so it decides identically up to then (see
    :func:`check_non_clairvoyant`)."""
    check_non_clairvoyant(config, *pair, "non-clairvoyant: same decisions until revealed")


DEADLINE = [c for c in CONFIGS if c.name == "varys-deadline"]


@pytest.mark.parametrize("config", DEADLINE, ids=repr)
@examples(ci=40, thorough=2000)
@given(inst=INSTANCES)
def test_varys_deadlines(config: Config, inst: cl.Instance) -> None:
    """Varys' deadline mode (Chowdhury's thesis Pseudocode 2, §5.5.4, §5.7.3;
    docs/varys.md#deadlines): admitted coflows are never preempted and meet their deadlines,
    rejected ones send nothing, rejections are justified (see :func:`check_deadlines`)."""
    result, rec, _ = run(config, inst)
    check_deadlines(inst, result, rec, "varys-deadline: admitted never preempted, on time")


# ============================================================================ bug injection
def _must_fail(test: Any, config: Config, match: str) -> None:
    """Runs the ``@given`` property ``test`` for ``config`` without shrinking (a failing
    example is all the injection test needs) and asserts that it fails with ``match``."""
    inner = test.hypothesis.inner_test
    strategy = enlarged() if test is test_non_clairvoyant else INSTANCES

    @settings(max_examples=200, phases=(Phase.explicit, Phase.generate), database=None)
    @given(case=strategy)
    def search(case: Any) -> None:
        inner(config, case)

    with pytest.raises(AssertionError, match=match):
        search()


def _broken(config: Config, wrap: Callable[[Any, cl.Instance], Any]) -> Config:
    """``config`` whose policy is wrapped by ``wrap`` (a deliberately broken variant)."""

    @dataclass(frozen=True)
    class Broken(Config):
        def make(self, instance: cl.Instance) -> Any:
            return wrap(super().make(instance), instance)

    return Broken(config.name, config.params, f"{config!r}+bug")


@pytest.mark.parametrize("name", ["fair", "aalo-uncoordinated"])
def test_injected_idle_capacity_breaks_work_conservation(name: str) -> None:
    """A policy that sends at half the rates it computed leaves capacity idle at both ports
    of some flow: the work-conservation property must fail on it."""
    broken = _broken(Config(name), lambda p, _: ScaledRates(p, 0.5))
    assert name in algorithms.POLICIES
    with pytest.raises(AssertionError, match="spare capacity"):
        test_work_conservation.hypothesis.inner_test(broken, _example_instance())
    _must_fail(test_work_conservation, broken, "spare capacity")


@pytest.mark.parametrize("name", ["fair", "varys"])
def test_injected_oversubscription_breaks_capacity(name: str) -> None:
    """A policy that sends at 1.5 times its rates oversubscribes a port: the capacity
    property must fail (at a decision, before the verifier is even asked)."""
    broken = _broken(Config(name), lambda p, _: ScaledRates(p, 1.5))
    with pytest.raises(AssertionError, match="exceed capacities"):
        test_capacity.hypothesis.inner_test(broken, _example_instance())
    _must_fail(test_capacity, broken, "exceed capacities")


def test_injected_size_leak_breaks_non_clairvoyance() -> None:
    """A policy that claims to be non-clairvoyant but reads flow sizes (it slows each flow by
    1 / (1 + size)) decides differently on instances that differ only in unseen sizes."""
    broken = _broken(Config("aalo-uncoordinated"), SizePeeking)
    small = _example_instance()
    large = small.replace(flow_size=small.flow_size * 2)
    with pytest.raises(AssertionError, match="decided differently"):
        check_non_clairvoyant(broken, small, large, "bug injection (must fail)")
    _must_fail(test_non_clairvoyant, broken, "decided differently")


def test_injected_preemption_breaks_deadline_check() -> None:
    """A deadline policy whose rates are halved (so admitted coflows drop below their
    reservations and miss their deadlines) fails the deadline property."""
    broken = _broken(Config("varys-deadline"), lambda p, _: ScaledRates(p, 0.5))
    inst = cl.Instance.from_coflows([cl.Coflow([(0, 0, 2.0)], deadline=2.0)], 1)
    result, rec, _ = run(broken, inst)
    with pytest.raises(AssertionError, match="below their reservations"):
        check_deadlines(inst, result, rec, "bug injection (must fail)")


def test_injected_lifo_breaks_dclas_fifo(monkeypatch: pytest.MonkeyPatch) -> None:
    """Aalo serving each queue in reverse arrival order (LIFO) fails the FIFO property."""
    from coflowlab.heuristics import aalo

    fifo = aalo.Aalo._fifo_order
    monkeypatch.setattr(aalo.Aalo, "_fifo_order", lambda self, *a: fifo(self, *a)[::-1])
    _must_fail(test_dclas_fifo, Config("aalo"), "holds it")


def test_injected_early_demotion_breaks_dclas_queues(monkeypatch: pytest.MonkeyPatch) -> None:
    """Aalo demoting a coflow at half of each threshold (as if it knew more than it has sent)
    fails the queue property (the demotion is not justified by bytes sent)."""
    from coflowlab.heuristics import aalo

    queue_of = aalo._queue_of
    monkeypatch.setattr(aalo, "_queue_of", lambda sent, his: queue_of(2 * sent, his))
    _must_fail(test_dclas_queues, Config("aalo"), "after sending only")


def test_simulator_verifies_when_every_coflow_is_rejected() -> None:
    """Every coflow rejected: nothing is sent, the (empty) schedule is trivially feasible and
    the simulation must report all coflows rejected rather than fail."""
    inst = cl.Instance.from_coflows(
        [cl.Coflow([(0, 0, 1.0)], deadline=1.0)], cl.Fabric(1, [0.5], [0.5])
    )
    result = cl.simulate(inst, make_policy("varys-deadline", inst))
    assert result.rejected.tolist() == [0]
    assert result.report is not None and result.report.feasible
    assert np.isnan(result.coflow_completion).all()


def _example_instance() -> cl.Instance:
    """Two coflows sharing ingress 0 on a 2-port fabric, the second arriving later."""
    return cl.Instance.from_coflows(
        [
            cl.Coflow([(0, 0, 3.0), (1, 1, 2.0)]),
            cl.Coflow([(0, 1, 1.0)], release=1.0),
        ],
        2,
    )


# ------------------------------------------------ pfp: overtakings on equal capacities
@st.composite
def equal_capacity_instances(draw: st.DrawFn) -> cl.Instance:
    """:data:`INSTANCES`' draws without deadlines, every port at one capacity, with generic
    sizes (uniform on [0.01, 10) from a drawn seed). The claim holds in exact arithmetic; in
    floating point a wake-up can move a later time by an ulp, and that can flip an exact tie
    between two flows' remaining bytes (equal integer sizes give such ties); generic sizes
    have none."""
    inst = draw(strategies.instances(max_ports=4, max_coflows=5, max_flows_per_coflow=6))
    cap = draw(st.sampled_from([0.5, 1.0, 2.0]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    return inst.replace(
        fabric=cl.Fabric(inst.num_ports, cap, cap),
        flow_size=rng.uniform(0.01, 10.0, inst.num_flows),
    )


def check_pfp_overtakings_change_nothing(inst: cl.Instance) -> None:
    """Smallest remaining flow first with strict priority: re-ranking at every overtaking
    (``exact=True`` on the walk, which wakes up there) gives, record for record, the rates
    of re-ranking only at arrivals and completions (``exact=False``) and of the matching
    kernel, which never wakes up; record times and completion times agree within the
    simulator's tolerance (``coflowlab.constants.TOL``, relative to the makespan: a wake-up
    splits the bytes-sent sums of the flows it advances, so the last bits may differ)."""
    woken = cl.simulate(inst, WalkPfp(exact=True))
    a = woken.schedule
    assert a is not None
    atol = TOL * max(1.0, float(np.max(woken.flow_completion, initial=0.0)))
    for other in (WalkPfp(exact=False), PerFlowPriority(exact=True)):
        run = cl.simulate(inst, other)
        b = run.schedule
        assert b is not None
        same = (
            np.array_equal(a.flow, b.flow)
            and np.array_equal(a.rate, b.rate)
            and np.allclose(a.time, b.time, rtol=0.0, atol=atol)
            and np.allclose(woken.flow_completion, run.flow_completion, rtol=0.0, atol=atol)
        )
        assert same, (
            f"an overtaking changed the schedule ({type(other).__name__}, exact={other.exact})"
        )
        assert run.num_events <= woken.num_events


@examples(ci=150, thorough=3000)
@given(inst=equal_capacity_instances())
def test_pfp_overtakings_change_nothing_on_equal_capacities(inst: cl.Instance) -> None:
    """With every port capacity equal, ``pfp``'s greedy is a matching in rank order, and a
    sending flow moving ahead of waiting ones keeps it (docs/varys.md#pfp-no-wake-ups): the
    wake-ups at overtakings change no rate."""
    check_pfp_overtakings_change_nothing(inst)


def test_pfp_overtakings_matter_on_unequal_capacities() -> None:
    """The check can fail: with unequal capacities a flow that overtakes takes more of a
    port (flow B catches flow A, limited by its egress at 0.25, at t = 2), and re-ranking
    there changes the schedule."""
    fabric = cl.Fabric(2, 1.0, np.array([0.25, 1.0]))
    inst = cl.Instance(fabric, [0, 1], [0, 0], [0, 1], [3.0, 4.0])
    with pytest.raises(AssertionError, match="an overtaking changed the schedule"):
        check_pfp_overtakings_change_nothing(inst)
