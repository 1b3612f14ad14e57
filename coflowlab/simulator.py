"""The exact event-driven fluid simulator.

Rates are piecewise constant between events; an event is a flow (or coflow) arrival, a flow
completion, or a wake-up time the policy asked for (a queue-threshold crossing, a coordination
interval, a starvation timer, an epoch). There are no fixed time steps: the next event time is
computed exactly from the current rates, so results are not quantized. (CoflowSim steps every
8 ms and the thesis' simulator decides every 10 s; docs/coflowsim-model.md.)

At each event the policy (:class:`coflowlab.policy.Policy`) sees the state and returns rates;
the simulator records every rate change as a :class:`~coflowlab.schedules.FluidSchedule` record
and, by default, runs the schedule through :func:`coflowlab.verify`, whose completion times
are the ones reported.

Coflow dependencies are *starts-after*: a dependent coflow's flows are released only when every
coflow it depends on has completed.
"""

from __future__ import annotations

import heapq
import math
import time as _time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from .class_simulation import ENGINES, ClassEngine, class_engine_of, run_classes
from .constants import TOL
from .exceptions import CoflowlabError
from .fairness import FairnessMeter
from .flow_state import FlowState, completion_threshold
from .instance import Instance
from .policy import (
    ClairvoyantState,
    Decision,
    InstanceView,
    ObservedState,
    Policy,
    _readonly,
    state_columns,
)
from .schedules import FluidSchedule
from .verifier import FluidVerifier, VerificationReport, verify

__all__ = ["SimulationError", "SimulationResult", "instance_view", "simulate"]

STREAM_RECORDS = 1 << 21
"""Records buffered before they are fed to the streaming verifier (``record=False``)."""

_NO_FLOWS = np.zeros(0, dtype=np.int64)
_NO_TIMES = np.zeros(0)
# "nothing arrived / completed", shared by every event rather than allocated at each (most
# events have no arrival and many no completion); empty, so nothing can write into them


class SimulationError(CoflowlabError):
    """The simulation cannot continue (a policy stalls, or returns malformed rates)."""


def max_events_error(max_events: int | None, t: float) -> SimulationError:
    """The error of a run stopped by ``max_events`` at time ``t`` (the per-flow loop's and
    every compiled class loop's, so that both fail alike)."""
    return SimulationError(f"stopped after max_events={max_events} at t={t!r}")


def stall_error(policy: str, t: float, active: int) -> SimulationError:
    """The error of a run whose ``active`` flows all have rate 0 at ``t`` with nothing else
    due (the per-flow loop's and every compiled class loop's)."""
    return SimulationError(
        f"policy {policy!r} stalls at t={t!r}: {active} active flows, none sending, and no "
        "future arrival or wake-up"
    )


@dataclass(frozen=True, eq=False)
class SimulationResult:
    """The outcome of one simulation.

    Attributes
    ----------
    instance
        The simulated instance.
    policy
        The policy's name.
    coflow_completion, flow_completion
        Completion times; from the verifier when ``report`` is not ``None``, else from the
        simulator's own event times (labelled by ``verified``).
    verified
        Whether the completion times come from a feasible verified schedule.
    report
        The verification report (``None`` when verification was switched off).
    schedule
        The rate-change records (``None`` unless ``record=True``).
    rejected
        Coflows the policy rejected (deadline admission control); they send nothing and have
        completion time ``nan``.
    num_events, num_records
        Number of events processed and of rate-change records produced.
    wall_time
        Seconds the simulation took (excluding verification).
    fairness
        The fairness metrics of :func:`coflowlab.fairness.fairness_summary` when asked for
        (``fairness=True``), else ``None``.
    engine
        ``"flows"`` (the per-flow event loop: one record per flow and rate change) or
        ``"classes"`` (the policy's compiled rate-class engine: ``num_records`` counts class
        records; :mod:`coflowlab.class_simulation`).
    """

    instance: Instance
    policy: str
    coflow_completion: npt.NDArray[np.float64]
    flow_completion: npt.NDArray[np.float64]
    verified: bool
    report: VerificationReport | None
    schedule: FluidSchedule | None
    rejected: npt.NDArray[np.int64]
    num_events: int
    num_records: int
    wall_time: float
    fairness: dict[str, Any] | None = None
    engine: str = "flows"

    @property
    def cct(self) -> npt.NDArray[np.float64]:
        """Coflow completion times measured from each coflow's release."""
        return self.coflow_completion - self.instance.coflow_release

    @property
    def weighted_completion_time(self) -> float:
        """``Σ_j w_j C_j`` over the coflows that completed."""
        done = ~np.isnan(self.coflow_completion)
        return float(np.dot(self.instance.coflow_weight[done], self.coflow_completion[done]))


def instance_view(
    instance: Instance, *, clairvoyant: bool, hide_labels: bool = False
) -> InstanceView:
    """The :class:`InstanceView` a policy receives; sizes only when ``clairvoyant``.

    With ``hide_labels`` every flow is described as a coflow of its own (flow ``i`` is
    pseudo-coflow ``i``; weights 1, no deadlines, no labels or dependencies), so the policy
    cannot tell which flows belong together (:mod:`coflowlab.policy`, "Hidden labels").

    Examples
    --------
    >>> from coflowlab import Instance
    >>> inst = Instance.from_matrices([[[1.0, 2.0], [0, 0]]])
    >>> view = instance_view(inst, clairvoyant=False, hide_labels=True)
    >>> view.num_coflows, view.flow_coflow.tolist(), view.labels_hidden
    (2, [0, 1], True)
    """
    fab = instance.fabric
    if hide_labels:
        nf = instance.num_flows
        return InstanceView(
            num_ports=instance.num_ports,
            num_coflows=nf,
            num_flows=nf,
            cap_in=np.asarray(fab.ingress_capacity),
            cap_out=np.asarray(fab.egress_capacity),
            flow_coflow=np.arange(nf, dtype=np.int64),
            flow_src=instance.flow_src,
            flow_dst=instance.flow_dst,
            coflow_weight=np.ones(nf),
            coflow_deadline=np.full(nf, np.inf),
            coflow_label=("",) * nf,
            dependencies=np.zeros((0, 2), dtype=np.int64),
            flow_size=instance.flow_size if clairvoyant else None,
            coflow_size=instance.flow_size if clairvoyant else None,
            labels_hidden=True,
        )
    return InstanceView(
        num_ports=instance.num_ports,
        num_coflows=instance.num_coflows,
        num_flows=instance.num_flows,
        cap_in=np.asarray(fab.ingress_capacity),
        cap_out=np.asarray(fab.egress_capacity),
        flow_coflow=instance.flow_coflow,
        flow_src=instance.flow_src,
        flow_dst=instance.flow_dst,
        coflow_weight=instance.coflow_weight,
        coflow_deadline=instance.coflow_deadline,
        coflow_label=instance.coflow_label,
        dependencies=instance.dependencies,
        flow_size=instance.flow_size if clairvoyant else None,
        coflow_size=instance.total_size if clairvoyant else None,
    )


class _Arrivals:
    """Batches of flows released together, in time order; dependent coflows are held back
    until every coflow they depend on has completed (starts-after)."""

    def __init__(self, inst: Instance) -> None:
        self.inst = inst
        n = inst.num_coflows
        self.waiting_on = np.zeros(n, dtype=np.int64)
        self.children: list[list[int]] = [[] for _ in range(n)]
        for a, b in inst.dependencies:
            self.waiting_on[b] += 1
            self.children[a].append(int(b))
        self.heap: list[tuple[float, int, int, np.ndarray]] = []
        self.seq = 0
        ready = np.flatnonzero(self.waiting_on == 0)
        self._push_coflows(ready, not_before=0.0)

    def _push_coflows(self, coflows: np.ndarray, not_before: float) -> None:
        inst = self.inst
        if len(coflows) == 0:
            return
        flows = np.concatenate([inst.coflow_flows(int(k)) for k in coflows])
        release = np.maximum(inst.flow_release[flows], not_before)
        key_order = np.lexsort((inst.flow_coflow[flows], release))
        flows, release = flows[key_order], release[key_order]
        coflow = inst.flow_coflow[flows]
        cut = np.flatnonzero((np.diff(release) != 0) | (np.diff(coflow) != 0)) + 1
        for part in np.split(np.arange(len(flows)), cut):
            heapq.heappush(
                self.heap,
                (float(release[part[0]]), int(coflow[part[0]]), self.seq, flows[part]),
            )
            self.seq += 1

    def next_time(self) -> float:
        return self.heap[0][0] if self.heap else math.inf

    def pop_until(self, t: float) -> np.ndarray:
        batches = []
        while self.heap and self.heap[0][0] <= t:
            batches.append(heapq.heappop(self.heap)[3])
        if not batches:
            return _NO_FLOWS
        return np.concatenate(batches) if len(batches) > 1 else batches[0]

    def coflows_completed(self, coflows: np.ndarray, t: float) -> None:
        freed = []
        for a in coflows:
            for b in self.children[int(a)]:
                self.waiting_on[b] -= 1
                if self.waiting_on[b] == 0:
                    freed.append(b)
        self._push_coflows(np.asarray(sorted(freed), dtype=np.int64), not_before=t)

    def reject(self, coflows: np.ndarray) -> None:
        if not len(coflows):
            return
        drop = set(int(k) for k in coflows)
        self.heap = [b for b in self.heap if b[1] not in drop]
        heapq.heapify(self.heap)


class _Recorder:
    """Keeps the records (``record=True``) and/or feeds them to streaming consumers: the
    verifier and the fairness meter.

    The records sit in three growing arrays (time, flow, rate) that the flow state writes
    into directly (:meth:`apply`), so that a record is written once, not built and copied."""

    initial = 1 << 16
    """Records the buffers hold at first (they grow by doubling)."""

    def __init__(
        self,
        inst: Instance,
        *,
        record: bool,
        stream: FluidVerifier | None,
        meter: FairnessMeter | None = None,
    ) -> None:
        self.num_flows = inst.num_flows
        self.record = record
        self.stream = stream
        self.meter = meter
        self.sinks = [c for c in (stream, meter) if c is not None]
        self.keeps = bool(record or self.sinks)  # otherwise records are only counted
        size = self.initial
        self.time, self.flow, self.rate = np.empty(size), np.empty(size, np.int64), np.empty(size)
        self.size = 0  # records buffered
        self.total = 0
        self.last_time = -math.inf  # of the latest record: a time group must stay whole

    def _reserve(self, k: int) -> int:
        """Makes room for ``k`` more records (from ``self.size``); returns where they start."""
        start = self.size if self.keeps else 0  # records not kept are overwritten
        end = start + k
        if end > len(self.time):
            grow = max(end, 2 * len(self.time))
            for name in ("time", "flow", "rate"):
                old = getattr(self, name)
                new = np.empty(grow, dtype=old.dtype)
                new[:start] = old[:start]
                setattr(self, name, new)
        return start

    def _added(self, start: int, k: int, first: float, last: float) -> None:
        # ``k`` records from ``start``, at times ``first`` to ``last``
        self.total += k
        if k and self.keeps:
            if first < self.last_time:  # the engine's own invariant; the verifier needs it
                raise SimulationError(f"record at t={first!r} after t={self.last_time!r}")
            self.size = start + k
            self.last_time = last

    def apply(self, fl: FlowState, flows: np.ndarray, rates: np.ndarray, t: float) -> int:
        """Sets the rates (:meth:`FlowState.apply_into`), recording the changes at ``t``;
        returns the status (0 ok, -1 an inactive flow, -2 a non-finite rate)."""
        start = self._reserve(len(flows))
        k, status = fl.apply_into(flows, rates, t, self.time, self.flow, self.rate, start)
        self._added(start, k, t, t)
        return status

    def add(self, t: float, flows: np.ndarray, rates: np.ndarray | float) -> None:
        """Records that from ``t`` on, each of ``flows`` sends at its ``rates`` entry (or
        all at ``rates``, a number)."""
        self._write(t, flows, rates, t, t)

    def extend(self, times: np.ndarray, flows: np.ndarray, rates: np.ndarray) -> None:
        """Records that from ``times[i]`` on, ``flows[i]`` sends at ``rates[i]`` (times
        non-decreasing)."""
        if len(flows):
            self._write(times, flows, rates, float(times[0]), float(times[-1]))

    def _write(
        self, times: float | np.ndarray, flows: np.ndarray, rates: np.ndarray | float,
        first: float, last: float,
    ) -> None:  # fmt: skip
        k = len(flows)
        start = 0
        if k and self.keeps:
            start = self._reserve(k)
            self.time[start : start + k] = times
            self.flow[start : start + k] = flows
            self.rate[start : start + k] = rates
        self._added(start, k, first, last)

    def flush_if_large(self, next_time: float) -> None:
        """Feeds the buffer to the streaming consumers if it is large, unless the next
        records (at ``next_time``) belong to the same time group as the last ones: several
        events can happen at one instant (a flow due at the event that set its rate)."""
        if next_time <= self.last_time:
            return
        if self.sinks and not self.record and self.size >= STREAM_RECORDS:
            self._feed()

    def _records(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        n = self.size
        return self.time[:n], self.flow[:n], self.rate[:n]

    def _feed(self) -> None:
        for sink in self.sinks:
            sink.feed(*self._records())
        self.size = 0

    def finish(self) -> FluidSchedule | None:
        """The schedule (``record=True``), after the meter has seen every record."""
        if self.record:
            schedule = FluidSchedule(self.num_flows, *self._records())
            if self.meter is not None:
                self.meter.feed(schedule.time, schedule.flow, schedule.rate)
            return schedule
        if self.sinks and self.size:
            self._feed()
        return None


def simulate(
    instance: Instance,
    policy: Policy,
    *,
    verify_schedule: bool = True,
    record: bool = True,
    tol: float = TOL,
    max_events: int | None = None,
    progress: Callable[[int, float], None] | None = None,
    hide_labels: bool | None = None,
    fairness: bool = False,
    engine: str = "auto",
) -> SimulationResult:
    """Replays ``instance`` under an online ``policy``, exactly.

    Parameters
    ----------
    instance
        The instance; releases are arrival times.
    policy
        An object following :class:`coflowlab.policy.Policy` (see ``coflowlab.heuristics``).
    verify_schedule
        Run the schedule through :func:`coflowlab.verify` (default). The reported completion
        times then come from the verifier; a schedule with violations raises
        :class:`SimulationError` naming them.
    record
        Keep the :class:`FluidSchedule` in the result. With ``record=False`` and verification
        on, records are verified as they are produced and then dropped, so memory stays flat.
        Coflows a policy rejects (admission control) must send nothing; the verifier checks
        that and reports no completion for them.
    tol
        Relative tolerance (see :mod:`coflowlab.constants`); flows whose remaining bytes are
        within it of zero complete at the current event.
    max_events
        Stop with :class:`SimulationError` after this many events (default: no limit).
    progress
        Called as ``progress(events, time)`` at every event, for a status line (see
        :class:`coflowlab.progress.Progress`); it must be cheap.
    hide_labels
        Hide coflow membership from the policy (:mod:`coflowlab.policy`, "Hidden labels"):
        it then sees every flow as a coflow of its own, cannot reject coflows, and is woken at
        every flow completion (``Decision.notify`` is ignored). Completion times and metrics
        still use the true coflows. Default (``None``): the policy class's ``label_blind``
        attribute (``False`` when absent; CODA sets it).
    fairness
        Also measure the fairness metrics (progress, isolation guarantee, Jain index, link
        utilization; :mod:`coflowlab.fairness`) into ``SimulationResult.fairness``. They are
        measured as the records are produced, so ``record=False`` keeps memory flat; they
        are the simulator's rates, checked by the verifier when verification is on.
    engine
        ``"auto"`` (default): the policy's compiled rate-class engine when it has one
        (per-flow fair sharing, per-flow priority, online Sincronia) and nothing needs
        per-flow records (``record=False``, no ``fairness``, labels not hidden, no coflow
        dependencies), else the per-flow event loop.
        ``"flows"``: always the per-flow event loop (the reference). ``"classes"``: the class
        engine, or :class:`SimulationError` saying why it cannot run. Both give the same
        events and, within the tolerance, the same completion times
        (:mod:`coflowlab.class_simulation`, ``docs/rate-classes.md``).

    Returns
    -------
    SimulationResult

    Raises
    ------
    SimulationError
        If the policy returns malformed rates, stalls (active flows at rate 0 with no future
        event), serves a coflow it rejected, or its schedule fails verification.

    Examples
    --------
    >>> from coflowlab import Instance, simulate
    >>> from coflowlab.heuristics import FairSharing
    >>> inst = Instance.from_matrices([[[1.0, 1.0], [0, 0]]])
    >>> simulate(inst, FairSharing()).coflow_completion.tolist()
    [2.0]
    """
    if engine not in ENGINES:
        raise ValueError(f"simulate: engine must be one of {', '.join(ENGINES)}, got {engine!r}")
    if engine != "flows":
        classes = _class_path(
            instance, policy, engine, tol, record=record, fairness=fairness, hide=hide_labels
        )
        if classes is not None:
            return _simulate_classes(
                instance, policy, classes, verify_schedule, tol, max_events, progress
            )
    started = _time.perf_counter()
    inst = instance
    clairvoyant = bool(policy.clairvoyant)
    state_class = ClairvoyantState if clairvoyant else ObservedState
    hide = bool(getattr(policy, "label_blind", False)) if hide_labels is None else hide_labels
    policy.reset(instance_view(inst, clairvoyant=clairvoyant, hide_labels=hide))
    n, nf = inst.num_coflows, inst.num_flows
    # hidden labels: what the policy sees per coflow is per flow (each flow its own coflow)
    flow_ident = np.arange(nf, dtype=np.int64) if hide else None
    flow_sent_done = np.zeros(nf if hide else 0)
    flow_arrival = np.full(nf if hide else 0, np.inf)

    arrivals = _Arrivals(inst)
    stream = FluidVerifier(inst, tol=tol, horizon=None) if verify_schedule and not record else None
    meter = FairnessMeter(inst, tol=tol) if fairness else None
    recorder = _Recorder(inst, record=record, stream=stream, meter=meter)

    flow_done_at = np.full(nf, np.nan)
    coflow_done_at = np.full(n, np.nan)
    coflow_left = inst.width.copy()
    coflow_sent_done = np.zeros(n)
    coflow_arrival = np.full(n, np.inf)
    rejected: list[int] = []
    is_rejected = np.zeros(n, dtype=bool)

    fl = FlowState(inst, tol)
    # built once per run, not at every event: the columns a state gathers from, the per-coflow
    # arrays it shows (read-only views that follow the simulator's updates) and its callbacks
    columns = state_columns(inst, clairvoyant, flow_ident)
    seen_arrival = _readonly(flow_arrival if hide else coflow_arrival)
    seen_sent_done = flow_sent_done if hide else coflow_sent_done

    def active_flows() -> np.ndarray:
        return fl.active

    t = arrivals.next_time()
    wakeup = math.inf
    notify = "flow"
    events = 0
    # what happened since the policy was last asked (it is not asked while nothing is active)
    arrived_since: list[np.ndarray] = []
    completed_since: list[np.ndarray] = []
    completed_coflows_since: list[np.ndarray] = []
    woken = False

    def coflows_done(done: np.ndarray, at: float) -> None:
        # coflows (increasing) whose last flow completed at ``at``
        coflow_done_at[done] = at
        arrivals.coflows_completed(done, at)
        completed_coflows_since.append(done)

    while True:
        heap = arrivals.heap
        if heap and heap[0][0] <= t:
            arrived = arrivals.pop_until(t)
            arrived = arrived[~is_rejected[inst.flow_coflow[arrived]]]
            cof = inst.flow_coflow[arrived]
            coflow_arrival[cof] = np.minimum(coflow_arrival[cof], t)
            if hide:
                flow_arrival[arrived] = t
            fl.add(arrived, t)
            arrived_since.append(arrived)
        if fl.count == 0 and not arrivals.heap:
            break
        if fl.count:
            events += 1
            if max_events is not None and events > max_events:
                raise max_events_error(max_events, t)
            if progress is not None:
                progress(events, t)
            completed = _cat(completed_since)
            state = state_class(
                inst,
                clairvoyant,
                time=t,
                flows=active_flows,
                rate=fl.rate,
                sent_of=fl.sent,
                coflow_sent_done=seen_sent_done,
                coflow_arrival=seen_arrival,
                arrived=_cat(arrived_since),
                completed=completed,
                completed_at=flow_done_at[completed] if len(completed) else _NO_TIMES,
                completed_coflows=completed if hide else _cat(completed_coflows_since),
                woken=woken,
                flow_group=flow_ident,
                columns=columns,
            )
            arrived_since, completed_since, completed_coflows_since = [], [], []
            decision = policy.decide(state)
            if not isinstance(decision, Decision):
                raise SimulationError(
                    f"policy {policy.name!r} returned {type(decision).__name__}, not a Decision"
                )
            wakeup = math.inf if decision.wakeup is None else float(decision.wakeup)
            notify = "flow" if hide else decision.notify
            _apply(policy.name, decision, fl, t, recorder)
            if decision.reject is not None and len(decision.reject):
                if hide:
                    raise SimulationError(
                        f"policy {policy.name!r} rejected coflows, but labels are hidden "
                        "(hide_labels): it cannot name a coflow"
                    )
                _reject(
                    inst,
                    np.asarray(decision.reject, dtype=np.int64),
                    fl,
                    is_rejected,
                    rejected,
                    arrivals,
                )

        t_wake = wakeup if wakeup > t else math.inf
        if notify == "coflow" and fl.count:
            # completions the policy does not need to see, up to the next coflow completion
            fin, times, instants, hit = fl.drain(
                min(arrivals.next_time(), t_wake), tol, coflow_left, coflow_sent_done
            )
            if len(fin):
                events += instants - hit  # the instant that completes a coflow is counted below
                flow_done_at[fin] = times
                recorder.extend(times, fin, np.zeros(len(fin)))
                completed_since.append(fin)
                if hit:
                    t = float(times[-1])
                    cof = np.unique(inst.flow_coflow[fin[times == t]])
                    coflows_done(cof[coflow_left[cof] == 0], t)
                    woken = False
                    continue

        # next event: an arrival, a completion or a wake-up
        t_done = fl.next_completion()
        t_next = min(arrivals.next_time(), t_done, t_wake)
        if math.isinf(t_next):
            if fl.count:
                raise stall_error(policy.name, t, fl.count)
            break
        recorder.flush_if_large(t_next)
        woken = t_next >= wakeup
        t = t_next
        # a flow is due iff the earliest projected completion is (FlowState.due): an event
        # without completions makes no compiled call
        if t_done <= completion_threshold(t, tol):
            fin, done = fl.complete(t, tol, coflow_left, coflow_sent_done, flow_done_at)
            recorder.add(t, fin, 0.0)
            if hide:
                flow_sent_done[fin] = inst.flow_size[fin]
            if len(done):
                coflows_done(done, t)
            completed_since.append(fin)

    schedule = recorder.finish()
    wall = _time.perf_counter() - started
    rej = np.asarray(sorted(rejected), dtype=np.int64)
    report = None
    if verify_schedule:
        report = _feasible(_verified(inst, schedule, stream, rej, tol), policy)
        flow_done_at = report.flow_completion.copy()
        coflow_done_at = report.coflow_completion.copy()
    return SimulationResult(
        instance=inst,
        policy=policy.name,
        coflow_completion=coflow_done_at,
        flow_completion=flow_done_at,
        verified=report is not None,
        report=report,
        schedule=schedule if record else None,
        rejected=rej,
        num_events=events,
        num_records=recorder.total,
        wall_time=wall,
        fairness=meter.finish(recorder.last_time if recorder.total else 0.0) if meter else None,
    )


def _class_path(
    inst: Instance,
    policy: Policy,
    engine: str,
    tol: float,
    *,
    record: bool,
    fairness: bool,
    hide: bool | None,
) -> ClassEngine | None:
    """The policy's class engine when ``engine`` asks for it and it can run, else ``None``
    (``engine="classes"``: an error naming why)."""
    reason = []
    if record:
        reason.append("record=True needs per-flow records")
    if fairness:
        reason.append("fairness=True measures per-flow records")
    if hide if hide is not None else getattr(policy, "label_blind", False):
        reason.append("hidden labels are a per-flow option")
    found = None if reason else class_engine_of(policy, inst, tol, reason=reason)
    if found is None and engine == "classes":
        raise SimulationError(f"engine='classes' cannot run: {'; '.join(reason)}")
    return found


def _simulate_classes(
    inst: Instance,
    policy: Policy,
    classes: ClassEngine,
    verify_schedule: bool,
    tol: float,
    max_events: int | None,
    progress: Callable[[int, float], None] | None,
) -> SimulationResult:
    run, report, wall = run_classes(
        inst, classes, verify_schedule=verify_schedule, tol=tol, max_events=max_events,
        progress=progress,
    )  # fmt: skip
    flow_done, coflow_done = run.flow_completion, run.coflow_completion
    if report is not None:
        assert isinstance(report, VerificationReport)
        _feasible(report, policy)
        flow_done, coflow_done = report.flow_completion.copy(), report.coflow_completion.copy()
    return SimulationResult(
        instance=inst,
        policy=policy.name,
        coflow_completion=coflow_done,
        flow_completion=flow_done,
        verified=report is not None,
        report=report,
        schedule=None,
        rejected=_NO_FLOWS,
        num_events=run.num_events,
        num_records=run.num_records,
        wall_time=wall,
        engine="classes",
    )


def _feasible(report: VerificationReport, policy: Policy) -> VerificationReport:
    """The report, or :class:`SimulationError` naming its violations."""
    if not report.feasible:
        raise SimulationError(
            f"policy {policy.name!r} produced an infeasible schedule:\n{report.summary()}"
        )
    return report


def _cat(parts: list[np.ndarray]) -> np.ndarray:
    if not parts:
        return _NO_FLOWS
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


def _apply(name: str, decision: Decision, fl: FlowState, t: float, recorder: _Recorder) -> None:
    """Applies the decision's rates, recording the flows whose rate changed."""
    if decision.rates is not None:
        active = flows = fl.active
        rates = np.asarray(decision.rates, dtype=float)
        if rates.shape != active.shape:
            raise SimulationError(
                f"policy {name!r} returned {rates.shape[0] if rates.ndim else 0} rates for "
                f"{len(active)} active flows at t={t!r}"
            )
    elif decision.update is not None:
        flows = np.asarray(decision.update[0], dtype=np.int64)
        rates = np.asarray(decision.update[1], dtype=float)
        if flows.shape != rates.shape or flows.ndim != 1:
            raise SimulationError(
                f"policy {name!r} returned an update of {flows.shape} flows and {rates.shape} "
                f"rates at t={t!r}"
            )
    else:
        return
    status = recorder.apply(fl, flows, rates, t)
    if status == -1:
        raise SimulationError(
            f"policy {name!r} updated rates of flows that are not active at t={t!r}"
        )
    if status == -2:
        raise SimulationError(f"policy {name!r} returned non-finite rates at t={t!r}")


def _reject(
    inst: Instance,
    coflows: np.ndarray,
    fl: FlowState,
    is_rejected: np.ndarray,
    rejected: list[int],
    arrivals: _Arrivals,
) -> None:
    """Removes rejected coflows; they must not have sent anything."""
    active = fl.active
    gone = active[np.isin(inst.flow_coflow[active], coflows)]
    if np.any(fl.rate[gone] != 0) or np.any(fl.base_sent[gone] != 0):
        raise SimulationError("a policy rejected a coflow that had already been served")
    is_rejected[coflows] = True
    rejected.extend(int(k) for k in coflows)
    arrivals.reject(coflows)
    fl.remove(gone.copy())


def _verified(
    inst: Instance,
    schedule: FluidSchedule | None,
    stream: FluidVerifier | None,
    rejected: np.ndarray,
    tol: float,
) -> VerificationReport:
    """Verifies the schedule; the rejected coflows must send nothing (admission control)."""
    excluded = rejected if len(rejected) else None
    if stream is not None:
        return stream.finish(excluded=excluded)
    assert schedule is not None
    return verify(inst, schedule, tol, excluded=excluded)
