"""Policy-level hooks for the heuristic suites: a wrapper that records every decision.

:class:`Recording` wraps any :class:`coflowlab.policy.Policy` and forwards ``reset`` and
``decide`` unchanged; after each decision it stores a :class:`Step`: the state the policy saw
(time, active flows, their ports, coflows, bytes sent, and — for clairvoyant policies —
remaining bytes), the rates in force *after* the decision (the state's rates with the
decision's ``rates``/``update`` applied), whether the decision reallocated at all, the coflows
it rejected, and an optional snapshot of the wrapped policy's own state (``snapshot(policy)``,
e.g. Aalo's queues). The wrapper reads the state only after the policy has decided, and only
for the record: what the policy sees is exactly what the simulator gives it.

:func:`bytes_sent` integrates a recorded :class:`~coflowlab.FluidSchedule` (bytes each flow
sent by a time) and :func:`crossing_time` finds when a set of flows has sent a given amount;
the Aalo checks use them to know when thresholds were really crossed.

The deliberately broken policies of the bug-injection tests live here too
(:class:`ScaledRates`, :class:`SizePeeking`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import coflowlab as cl
from coflowlab.heuristics.baselines import PerFlowPriority
from coflowlab.policy import ClairvoyantState, Decision, InstanceView, ObservedState

__all__ = [
    "Recording",
    "ScaledRates",
    "SizePeeking",
    "Step",
    "WalkPfp",
    "bytes_sent",
    "crossing_time",
    "simulate_recorded",
]


@dataclass(frozen=True)
class Step:
    """One decision, as recorded (arrays aligned with ``flows``, the active flows)."""

    time: float
    flows: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    coflow: np.ndarray
    sent: np.ndarray
    remaining: np.ndarray | None
    rate_before: np.ndarray
    rate: np.ndarray  # in force after the decision
    reallocated: bool  # the decision set rates (``rates`` or ``update``), not ``None``
    rejected: np.ndarray
    coflow_sent: np.ndarray
    woken: bool
    snapshot: Any = None


@dataclass
class Recording:
    """A policy wrapper that records each decision (see the module docstring)."""

    inner: Any
    snapshot: Callable[[Any], Any] | None = None
    steps: list[Step] = field(default_factory=list)

    @property
    def name(self) -> str:
        return str(self.inner.name)

    @property
    def clairvoyant(self) -> bool:
        return bool(self.inner.clairvoyant)

    @property
    def label_blind(self) -> bool:
        return bool(getattr(self.inner, "label_blind", False))

    def reset(self, view: InstanceView) -> None:
        self.steps = []
        self.inner.reset(view)

    def decide(self, state: ObservedState) -> Decision:
        decision = self.inner.decide(state)
        flows = np.array(state.flows, dtype=np.int64)
        before = np.array(state.rate, dtype=float)
        after = before.copy()
        reallocated = False
        if isinstance(decision, Decision):
            if decision.rates is not None:
                after = np.array(decision.rates, dtype=float)
                reallocated = True
            elif decision.update is not None:
                f = np.asarray(decision.update[0], dtype=np.int64)
                pos = np.searchsorted(flows, f)
                after[pos] = np.asarray(decision.update[1], dtype=float)
                reallocated = True
            reject = decision.reject
        else:
            reject = None
        remaining = (
            np.array(state.remaining, dtype=float) if isinstance(state, ClairvoyantState) else None
        )
        self.steps.append(
            Step(
                time=float(state.time),
                flows=flows,
                src=np.array(state.src, dtype=np.int64),
                dst=np.array(state.dst, dtype=np.int64),
                coflow=np.array(state.coflow, dtype=np.int64),
                sent=np.array(state.sent, dtype=float),
                remaining=remaining,
                rate_before=before,
                rate=after,
                reallocated=reallocated,
                rejected=np.zeros(0, dtype=np.int64)
                if reject is None
                else np.asarray(reject, dtype=np.int64),
                coflow_sent=np.array(state.coflow_sent, dtype=float),
                woken=bool(state.woken),
                snapshot=None if self.snapshot is None else self.snapshot(self.inner),
            )
        )
        return decision


def simulate_recorded(
    instance: cl.Instance, policy: Any, snapshot: Callable[[Any], Any] | None = None
) -> tuple[cl.SimulationResult, Recording]:
    """Simulates ``policy`` on ``instance`` through a :class:`Recording`, keeping the schedule
    but *not* verifying it (the capacity property verifies it itself, so that an infeasible
    schedule fails that property's check rather than the simulator); returns the result and
    the recording."""
    rec = Recording(policy, snapshot)
    return cl.simulate(instance, rec, record=True, verify_schedule=False), rec


# ----------------------------------------------------------------------- schedule integration
def _sorted_records(schedule: cl.FluidSchedule) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    t, f, r = (np.asarray(a) for a in (schedule.time, schedule.flow, schedule.rate))
    order = np.lexsort((np.arange(len(t)), t, f))  # by flow, then time, then record order
    return t[order], f[order], r[order]


def bytes_sent(schedule: cl.FluidSchedule, at: float) -> np.ndarray:
    """Bytes each flow has sent by time ``at`` under the piecewise-constant ``schedule``."""
    t, f, r = _sorted_records(schedule)
    out = np.zeros(schedule.num_flows)
    for k in range(len(t)):
        end = t[k + 1] if k + 1 < len(t) and f[k + 1] == f[k] else np.inf
        lo, hi = t[k], min(end, at)
        if hi > lo and r[k] != 0:
            out[f[k]] += r[k] * (hi - lo)
    return out


def crossing_time(schedule: cl.FluidSchedule, flows: np.ndarray, amount: float) -> float:
    """First time the ``flows`` together have sent ``amount`` bytes (``inf``: never)."""
    flows = np.asarray(flows, dtype=np.int64)
    t, f, r = _sorted_records(schedule)
    keep = np.isin(f, flows)
    t, f, r = t[keep], f[keep], r[keep]
    points = np.unique(t)
    if not len(points) or amount <= 0:
        return float(points[0]) if len(points) else np.inf
    # total rate of the flows on each interval between consecutive record times
    total = 0.0
    for k, start in enumerate(points):
        rate = 0.0
        for flow in np.unique(f):
            mine = t[f == flow] <= start
            if mine.any():
                rate += float(r[f == flow][np.flatnonzero(mine)[-1]])
        end = points[k + 1] if k + 1 < len(points) else np.inf
        if rate > 0 and total + rate * (end - start) >= amount:
            return float(start + (amount - total) / rate)
        if np.isfinite(end):
            total += rate * (end - start)
    return np.inf


# ----------------------------------------------------------------------- broken policies
@dataclass
class ScaledRates:
    """A deliberately broken policy: ``inner``'s rates times ``factor`` (``< 1`` leaves
    capacity idle, so work conservation fails; ``> 1`` oversubscribes ports)."""

    inner: Any
    factor: float

    @property
    def name(self) -> str:
        return f"{self.inner.name}×{self.factor:g}"

    @property
    def clairvoyant(self) -> bool:
        return bool(self.inner.clairvoyant)

    def reset(self, view: InstanceView) -> None:
        self.inner.reset(view)

    def decide(self, state: ObservedState) -> Decision:
        d = self.inner.decide(state)
        if d.rates is not None:
            return Decision(np.asarray(d.rates) * self.factor, d.wakeup, d.reject, None, d.notify)
        if d.update is not None:
            f, r = d.update
            return Decision(None, d.wakeup, d.reject, (f, np.asarray(r) * self.factor), d.notify)
        return d


@dataclass
class SizePeeking:
    """A deliberately broken *non-clairvoyant* policy: it declares ``clairvoyant = False``
    but slows each flow by ``1 / (1 + size)``, reading the sizes from the instance it was
    built with (a size leak)."""

    inner: Any
    instance: cl.Instance
    clairvoyant: bool = False

    @property
    def name(self) -> str:
        return f"{self.inner.name}+peek"

    def reset(self, view: InstanceView) -> None:
        self._intended = np.zeros(view.num_flows)  # the inner policy's rates
        self.inner.reset(view)

    def decide(self, state: ObservedState) -> Decision:
        d = self.inner.decide(state)
        flows = np.asarray(state.flows)
        if d.rates is not None:
            self._intended[flows] = d.rates
        elif d.update is not None:
            self._intended[np.asarray(d.update[0])] = d.update[1]
        rates = self._intended[flows] / (1.0 + self.instance.flow_size[flows])
        return Decision(rates, d.wakeup, d.reject, None, d.notify)


class WalkPfp(PerFlowPriority):
    """``pfp`` on its general kernel (the ranking walk) whatever the capacities: with
    ``exact=True`` it wakes up at every overtaking; the reference of the equal-capacity
    matching kernel."""

    _use_matching = False
