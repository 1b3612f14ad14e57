"""Tests that the simulator's lean event loop gives the same schedules, bit for bit, as the
plain loop it replaced.

The loop no longer calls NumPy at an event without completions, builds the state's columns
once per run, and settles an event's completions in one compiled call
(:meth:`coflowlab.flow_state.FlowState.complete`) instead of ``due``, ``finish``,
``np.subtract.at``, ``np.add.at`` and ``np.unique``. :func:`reference_simulate` below is the
plain loop (the simulator's event loop as it was, kept here as the reference): for every
registered policy, on generated instances of several kinds (releases, deadlines, real sizes,
dependencies, FB-like, hidden labels), both must produce the same records (times, flows and
rates compared with ``==``), the same number of events and the same completion times.
"""

from __future__ import annotations

import math
from typing import ClassVar

import numpy as np
import pytest
from numpy.testing import assert_array_equal

import coflowlab as cl
import coflowlab.simulator as sim
from coflowlab import instances as ins
from coflowlab.constants import TOL
from coflowlab.flow_state import FlowState
from coflowlab.heuristics import POLICIES, make_policy
from coflowlab.policy import ClairvoyantState, Decision, ObservedState


def reference_simulate(
    inst: cl.Instance, policy: cl.Policy, hide: bool | None = None, tol: float = TOL
) -> tuple[int, sim.FluidSchedule, np.ndarray, np.ndarray, np.ndarray]:
    """The plain event loop: a state with everything passed in at every event, and each
    completion settled with NumPy (``due``, ``finish``, ``subtract.at``, ``add.at``,
    ``unique``). Returns the number of events, the records, the simulator's own flow and
    coflow completion times (no verification) and the rejected coflows. ``hide`` as
    ``simulate``'s ``hide_labels`` (``None``: the policy's ``label_blind``)."""
    if hide is None:
        hide = bool(getattr(policy, "label_blind", False))
    clairvoyant = bool(policy.clairvoyant)
    state_class = ClairvoyantState if clairvoyant else ObservedState
    policy.reset(sim.instance_view(inst, clairvoyant=clairvoyant, hide_labels=hide))
    n, nf = inst.num_coflows, inst.num_flows
    flow_ident = np.arange(nf, dtype=np.int64) if hide else None
    flow_sent_done = np.zeros(nf if hide else 0)
    flow_arrival = np.full(nf if hide else 0, np.inf)
    arrivals = sim._Arrivals(inst)
    recorder = sim._Recorder(inst, record=True, stream=None)
    flow_done_at = np.full(nf, np.nan)
    coflow_done_at = np.full(n, np.nan)
    coflow_left = inst.width.copy()
    coflow_sent_done = np.zeros(n)
    coflow_arrival = np.full(n, np.inf)
    rejected: list[int] = []
    is_rejected = np.zeros(n, dtype=bool)
    fl = FlowState(inst, tol)
    t = arrivals.next_time()
    wakeup, notify, events, woken = math.inf, "flow", 0, False
    arrived_since: list[np.ndarray] = []
    completed_since: list[np.ndarray] = []
    completed_coflows_since: list[np.ndarray] = []

    def cat(parts: list[np.ndarray]) -> np.ndarray:
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)

    def coflows_done(fin: np.ndarray, at: float) -> None:
        cof = np.unique(inst.flow_coflow[fin])
        done = cof[coflow_left[cof] == 0]
        coflow_done_at[done] = at
        arrivals.coflows_completed(done, at)
        completed_coflows_since.append(done)

    while True:
        arrived = arrivals.pop_until(t)
        if len(arrived):
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
            completed = cat(completed_since)
            state = state_class(
                inst,
                clairvoyant,
                time=t,
                flows=fl.active.copy(),
                rate=fl.rate,
                sent_of=fl.sent,
                coflow_sent_done=flow_sent_done if hide else coflow_sent_done,
                coflow_arrival=flow_arrival if hide else coflow_arrival,
                arrived=cat(arrived_since),
                completed=completed,
                completed_at=flow_done_at[completed],
                completed_coflows=completed if hide else cat(completed_coflows_since),
                woken=woken,
                flow_group=flow_ident,
            )
            arrived_since, completed_since, completed_coflows_since = [], [], []
            decision = policy.decide(state)
            wakeup = math.inf if decision.wakeup is None else float(decision.wakeup)
            notify = "flow" if hide else decision.notify
            sim._apply(policy.name, decision, fl, t, recorder)
            if decision.reject is not None and len(decision.reject):
                reject = np.asarray(decision.reject, dtype=np.int64)
                sim._reject(inst, reject, fl, is_rejected, rejected, arrivals)
        t_wake = wakeup if wakeup > t else math.inf
        if notify == "coflow" and fl.count:
            fin, times, instants, hit = fl.drain(
                min(arrivals.next_time(), t_wake), tol, coflow_left, coflow_sent_done
            )
            if len(fin):
                events += instants - hit
                flow_done_at[fin] = times
                recorder.extend(times, fin, np.zeros(len(fin)))
                completed_since.append(fin)
                if hit:
                    t = float(times[-1])
                    coflows_done(fin[times == t], t)
                    woken = False
                    continue
        t_next = min(arrivals.next_time(), fl.next_completion(), t_wake)
        if math.isinf(t_next):
            assert not fl.count, "the policy stalls"
            break
        woken = t_next >= wakeup
        t = t_next
        fin = fl.due(t, tol)
        if len(fin):
            flow_done_at[fin] = t
            recorder.add(t, fin, np.zeros(len(fin)))
            fl.finish(fin, t)
            fin_coflow = inst.flow_coflow[fin]
            np.subtract.at(coflow_left, fin_coflow, 1)
            np.add.at(coflow_sent_done, fin_coflow, inst.flow_size[fin])
            if hide:
                flow_sent_done[fin] = inst.flow_size[fin]
            coflows_done(fin, t)
            completed_since.append(fin)
    schedule = recorder.finish()
    assert schedule is not None
    return events, schedule, flow_done_at, coflow_done_at, np.asarray(sorted(rejected))


KINDS = {
    "releases": lambda: ins.uniform(5, 10, density=0.4, release_rate=0.3, seed=12),
    "deadlines": lambda: ins.assign_deadlines(
        ins.uniform(4, 6, density=0.4, seed=11), 1.0, seed=4
    ),
    "real-sizes": lambda: ins.uniform(
        3, 5, density=0.6, integral=False, release_rate=0.5, seed=17
    ),
    "dependencies": lambda: ins.uniform(3, 6, density=0.5, release_rate=1.0, seed=6).replace(
        dependencies=[(0, 2), (1, 2), (2, 4), (3, 5)]
    ),
    "fb-like": lambda: ins.fb_like(30, num_ports=12, seed=18),
}
HIDDEN = ("releases", "fb-like")  # also replayed with hidden labels


def assert_same_run(inst: cl.Instance, name: str, hide: bool | None) -> None:
    """The lean loop and the reference give the same records, events and completions."""
    events, schedule, flow_done, coflow_done, rejected = reference_simulate(
        inst, make_policy(name, inst), hide=hide
    )
    res = cl.simulate(inst, make_policy(name, inst), hide_labels=hide, verify_schedule=False)
    assert res.schedule is not None
    assert res.num_events == events
    assert res.num_records == schedule.num_records
    for column in ("time", "flow", "rate"):
        assert_array_equal(getattr(res.schedule, column), getattr(schedule, column))
    assert_array_equal(res.flow_completion, flow_done)  # NaN == NaN here
    assert_array_equal(res.coflow_completion, coflow_done)
    assert_array_equal(res.rejected, rejected)


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("name", list(POLICIES))
def test_every_policy_runs_as_in_the_reference_loop(name: str, kind: str) -> None:
    """Tests every registered policy on every kind, and with hidden labels on two kinds."""
    inst = KINDS[kind]()
    assert_same_run(inst, name, hide=None)
    if kind in HIDDEN:
        assert_same_run(inst, name, hide=True)


class Probe:
    """Records what it is shown at every event, and splits each port equally among its
    active flows (feasible on unit ports; completions come one or a few at a time)."""

    name: ClassVar[str] = "toy-probe"
    clairvoyant: ClassVar[bool] = False

    def reset(self, view: cl.InstanceView) -> None:
        self.m = view.num_ports
        self.seen: list[tuple[object, ...]] = []

    def decide(self, state: ObservedState) -> Decision:
        self.seen.append(
            (
                state.time,
                state.flows.tolist(),
                state.arrived.tolist(),
                state.completed.tolist(),
                state.completed_at.tolist(),
                state.completed_coflows.tolist(),
                state.coflow_sent.tolist(),
                state.coflow_arrival.tolist(),
                state.woken,
            )
        )
        n_in = np.bincount(state.src, minlength=self.m)
        n_out = np.bincount(state.dst, minlength=self.m)
        return Decision(np.minimum(1 / n_in[state.src], 1 / n_out[state.dst]))


@pytest.mark.parametrize("hide", [False, True])
def test_states_show_the_same_as_in_the_reference_loop(hide: bool) -> None:
    """Tests that the states a policy is shown (active flows, arrivals, completions with
    their times, completed coflows, bytes sent per coflow, arrival times, wake-ups) are the
    same at every event, equal floats included."""
    inst = ins.uniform(4, 8, density=0.5, release_rate=0.5, seed=3)
    ref, new = Probe(), Probe()
    reference_simulate(inst, ref, hide=hide)
    cl.simulate(inst, new, hide_labels=hide)
    assert len(new.seen) > 10
    assert new.seen == ref.seen


class DoneProbe(Probe):
    """Checks at every event that ``coflow_sent_done`` is the part of ``coflow_sent`` sent
    by completed flows (with hidden labels, each completed flow's size)."""

    def reset(self, view: cl.InstanceView) -> None:
        super().reset(view)
        self.checked = 0

    def decide(self, state: ObservedState) -> Decision:
        done = state.coflow_sent_done
        assert not done.flags.writeable
        active = np.bincount(state.coflow, weights=state.sent, minlength=len(done))
        assert np.array_equal(done + active, state.coflow_sent)
        self.checked += len(state.completed)
        self.last_done = done.copy()
        return super().decide(state)


@pytest.mark.parametrize("hide", [False, True])
def test_sent_done_is_the_completed_flows_part(hide: bool) -> None:
    """Tests ``ObservedState.coflow_sent_done`` against ``coflow_sent`` and the active flows'
    bytes at every event, and, with hidden labels, against each completed flow's size."""
    inst = ins.uniform(4, 8, density=0.5, release_rate=0.5, seed=3)
    probe = DoneProbe()
    cl.simulate(inst, probe, hide_labels=hide)
    assert probe.checked > 10
    if hide:  # each flow completed before the last decision holds its size
        last = probe.last_done
        assert np.array_equal(last[last > 0], inst.flow_size[last > 0])
        assert (last > 0).sum() > 10
