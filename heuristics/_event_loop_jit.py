"""Steps of the simulator's event loop (:func:`coflowlab.simulate`) shared by the compiled
loops that run a per-flow policy on one rate class per flow (:mod:`.pfp_classes`,
:mod:`.sincronia_online_classes`; docs/rate-classes.md), at module level so that numba's disk
cache finds them. Each repeats what the simulator does with the same floating-point operations,
on the simulator's own flow bookkeeping (:mod:`coflowlab._flow_state_jit`). Also the
statuses with which every compiled class loop returns (:mod:`.fair_classes` too) and the
errors they mean (:func:`loop_error`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numba import njit

from coflowlab._flow_state_jit import apply as fs_apply
from coflowlab._flow_state_jit import complete as fs_complete

if TYPE_CHECKING:
    from collections.abc import Callable

    from coflowlab.class_simulation import (
        ClassRun,
        FloatArray,
        IntArray,
        Progress,
        RunState,
        Sink,
    )
    from coflowlab.simulator import SimulationError

OVERFLOW_RATES = -1
""":func:`write_rates`: the decision changed more rates than the buffer's room for an event."""

BAD_RATES = -2
""":func:`write_rates`: the decision named an inactive flow or a non-finite rate."""

LOOP_DONE, LOOP_FULL, LOOP_MAX_EVENTS, LOOP_STALL, LOOP_BAD_RATES, LOOP_OVERFLOW = range(6)
"""Why a compiled event loop's ``run`` returned (module ints, which numba reads as constants;
a loop with statuses of its own numbers them from ``LOOP_OVERFLOW + 1``): every flow has
completed; the output buffer may not hold another event's records (or a pause for progress
is due); the event count would exceed ``max_events``; active flows have no rate and nothing
else is due; the decision named an inactive flow or a non-finite rate (``BAD_RATES`` from
:func:`write_rates`); an event changed more rates than the buffer's room
(``OVERFLOW_RATES``)."""


def loop_error(
    status: int, policy: str, t: float, active: int, max_events: int | None
) -> SimulationError | None:
    """The :class:`coflowlab.simulator.SimulationError` a loop's ``status`` means, as
    :func:`coflowlab.simulate` words it (so that a class engine fails as the per-flow path
    does), or ``None`` for a status that is no error (``LOOP_DONE``, ``LOOP_FULL``, a loop's
    own). ``policy`` is the policy's name, ``t`` the time the loop stopped at, ``active`` its
    active flows, ``max_events`` the run's argument."""
    from coflowlab.simulator import SimulationError, max_events_error, stall_error

    if status == LOOP_MAX_EVENTS:
        return max_events_error(max_events, t)
    if status == LOOP_STALL:
        return stall_error(policy, t, active)
    if status in (LOOP_BAD_RATES, LOOP_OVERFLOW):  # pragma: no cover - a kernel bug
        return SimulationError(
            f"policy {policy!r} returned malformed rate changes at t={t!r} (status {status})"
        )
    return None


def drive(
    step: Callable[[int], tuple[int, int]],
    run: RunState,
    sink: Sink,
    state_f: FloatArray,
    state_i: IntArray,
    *,
    name: str,
    max_events: int | None,
    progress: Progress | None,
    pause_every: int | None,
    decide: Callable[[int, float], bool] | None = None,
) -> ClassRun:
    """Runs a compiled class loop to its end (the Python side of :mod:`.fair_classes`,
    :mod:`.pfp_classes`, :mod:`.hug_classes` and :mod:`.sincronia_online_classes`):
    ``step(pause)`` runs the kernel from where it stopped, on the arrays of ``run``
    (:class:`~coflowlab.class_simulation.RunState`),
    with ``pause`` the event count at which to return for progress (-1: never), and returns
    ``(status, pos)``; after each return the records go to ``sink`` in whole time groups
    (``run.buf``), the status's error is raised (:func:`loop_error`) and
    ``progress(events, time)`` is called. ``decide(status, time)``, when given, sees every
    return first and says whether it handled it (a return for a decision in Python, as
    :mod:`.sincronia_online_classes` makes): the loop then goes on, with the same pause.
    The loops share the state layout: ``state_f[0]`` the time, ``state_i[1:4]`` events,
    active flows, records. Returns the loop's :class:`~coflowlab.class_simulation.ClassRun`."""
    from coflowlab.class_simulation import ClassRun

    buf = run.buf
    # the event count at which the loop pauses for progress (-1: never); it moves on only
    # when progress is reported
    pause = -1 if progress is None or pause_every is None else int(state_i[1]) + pause_every
    while True:
        status, buf.pos = step(pause)
        t = float(state_f[0])
        if decide is not None and decide(status, t):
            continue
        error = loop_error(status, name, t, int(state_i[2]), max_events)
        if error is not None:
            raise error
        if status == LOOP_DONE:
            buf.finish(sink)
        else:
            buf.hand_over(sink, t)  # FULL, or a pause for progress
        if progress is not None:
            progress(int(state_i[1]), t)
            if pause >= 0 and pause_every is not None:
                pause = int(state_i[1]) + pause_every
        if status == LOOP_DONE:
            return ClassRun(
                flow_completion=run.flow_done,
                coflow_completion=run.coflow_done,
                num_events=int(state_i[1]),
                num_records=int(state_i[3]),
            )


@njit(cache=True)
def write_rates(
    flows, rates, t, room, rows, alive, tree, off, tol, out_t, out_f, out_r, pos
):  # pragma: no cover - numba
    """Applies a decision's rate changes at ``t`` (``FlowState.apply_into``) and writes them as
    records from ``pos``; returns how many, or :data:`OVERFLOW_RATES` / :data:`BAD_RATES`."""
    if flows.shape[0] > room:
        return OVERFLOW_RATES
    n, bad = fs_apply(flows, rates, t, rows, alive, tree, off, tol, out_t, out_f, out_r, pos)
    if bad != 0:
        return BAD_RATES
    return n


@njit(cache=True)
def next_event(t, wakeup, tree, root, rel_time, rp):  # pragma: no cover - numba
    """The simulator's next event after ``t``: the earliest of the next release (position
    ``rp`` of ``rel_time``), the earliest projected completion (the tree's root) and a wake-up
    later than ``t``; returns ``(t_next, t_done)``, ``t_done`` the earliest completion."""
    t_wake = wakeup if wakeup > t else np.inf
    t_done = tree[root]
    t_next = t_done
    if rp < rel_time.shape[0] and rel_time[rp] < t_next:
        t_next = rel_time[rp]
    if t_wake < t_next:
        t_next = t_wake
    return t_next, t_done


@njit(cache=True)
def settle_completions(
    t, t_done, tol, tree, off, rows, alive, flow_coflow, coflow_left, coflow_sent_done,
    flow_done, coflow_done, completed, nc,
):  # fmt: skip  # pragma: no cover - numba
    """The completions at ``t`` (``completion_threshold``, ``FlowState.complete``): the flows
    due stop, are appended to ``completed`` from ``nc``, and the coflows they finish get
    ``t``; returns the new ``nc`` and those coflows (increasing)."""
    thr = t + tol * max(1.0, abs(t))  # completion_threshold(t, tol)
    if t_done > thr:
        return nc, np.empty(0, dtype=np.int64)
    fin, done = fs_complete(
        thr, t, tree, off, rows, alive, flow_coflow, coflow_left, coflow_sent_done, flow_done
    )
    for q in range(fin.shape[0]):
        completed[nc] = fin[q]
        nc += 1
    for q in range(done.shape[0]):
        coflow_done[done[q]] = t
    return nc, done
