"""Numba kernel of coflowlab.heuristics.pfp_classes, at module level: numba's disk cache finds a
kernel again in a new process only when the kernels it calls are module globals, not closures.

The whole event loop of per-flow prioritisation (``pfp``) with equal port capacities runs
here: the simulator's loop (:func:`coflowlab.simulate`) with its flow bookkeeping (the compiled
kernels of :mod:`coflowlab._flow_state_jit`) and the policy's decision (``match_step`` of
:mod:`coflowlab.heuristics._pfp_jit`) called directly, without a Python round trip per event.
Its state lives in arrays the Python side creates, so that the loop can return when its output
buffer is full and resume where it stopped.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from coflowlab._flow_state_jit import SINCE

from ._event_loop_jit import LOOP_BAD_RATES as BAD_RATES
from ._event_loop_jit import LOOP_DONE as DONE
from ._event_loop_jit import LOOP_FULL as FULL
from ._event_loop_jit import LOOP_MAX_EVENTS as MAX_EVENTS
from ._event_loop_jit import LOOP_OVERFLOW as OVERFLOW
from ._event_loop_jit import LOOP_STALL as STALL
from ._event_loop_jit import OVERFLOW_RATES, next_event, settle_completions, write_rates
from ._pfp_jit import match_step

# Why :func:`run` returns: the shared statuses (:data:`._event_loop_jit.LOOP_DONE`, ...).
# BAD_RATES (the decision named an inactive flow or a non-finite rate, which the simulator
# rejects) and OVERFLOW (an event changed more rates than ``room``) cannot happen with
# positive finite equal capacities (at most one flow holds each port before and after an
# event).

T_NOW = 0
"""``state_f`` entry: the time of the next loop iteration (the simulator's ``t``, whose
completions are already settled). The policy asks for no wake-up with equal capacities."""

NEXT_RELEASE, EVENTS, ACTIVE, RECORDS, NUM_COMPLETED = range(5)
"""``state_i`` entries: position in the release order, events counted, active flows, records
written so far, flows completed since the last decision (in ``completed``)."""


@njit(cache=True)
def run(
    rel_flow, rel_time, flow_release, tb2_sign, tol, max_events, pause, room,
    rows, alive, tree, off, flow_coflow, coflow_left, coflow_sent_done, flow_done, coflow_done,
    arrived, completed, state_f, state_i, out_t, out_f, out_r, pos,
    cap, m_in, src, dst, size, tb1, tb2, tb3, status, key, rem, rate, base_sent, base_t,
    pair_of, poff, pcnt, parr, ptr, hold, mark, phead, phkey, pepos, pother, pkey,
):  # fmt: skip  # pragma: no cover - numba
    # Runs loop iterations from state_f[T_NOW] until no flow is active or left to release
    # (DONE), the buffer out_*[pos:] may not hold another event's records or `pause` events
    # have been counted (FULL, checked before anything at the iteration's time is touched;
    # -1: no pause), the event count would exceed
    # max_events (MAX_EVENTS; -1: no limit), active flows have no rate and nothing else is
    # due (STALL) or the decision is malformed (BAD_RATES, OVERFLOW). Returns (status, pos).
    #
    # One iteration is one of simulate()'s: the releases at t join (FlowState.add), an event
    # is counted and the policy decides if a flow is active (PerFlowPriority.decide: the
    # release as tie-break column, tau = 1e-9 max(1, |t|), match_step), its rate changes
    # are applied and written as records (FlowState.apply_into), then time moves to the
    # next release or projected completion, whose completions (FlowState.complete,
    # completion_threshold) are settled there and passed to the next decision.
    nrel = rel_flow.shape[0]
    root = off[off.shape[0] - 1]
    t = state_f[T_NOW]
    rp = state_i[NEXT_RELEASE]
    events = state_i[EVENTS]
    active = state_i[ACTIVE]
    records = state_i[RECORDS]
    nc = state_i[NUM_COMPLETED]
    result = DONE
    while True:
        if pos + room > out_t.shape[0] or events == pause:
            result = FULL
            break
        # releases up to t, in the simulator's order (by time, then coflow, then flow)
        na = 0
        while rp < nrel and rel_time[rp] <= t:
            f = rel_flow[rp]
            arrived[na] = f
            na += 1
            rp += 1
            alive[f] = True
            rows[f, SINCE] = t
        active += na
        if active == 0 and rp == nrel:
            break
        if active > 0:
            events += 1
            if max_events >= 0 and events > max_events:
                result = MAX_EVENTS
                break
            for q in range(na):
                f = arrived[q]
                tb2[f] = tb2_sign * flow_release[f]
            tau = 1e-9 * max(1.0, abs(t))
            flows, rates = match_step(
                t, tau, arrived[:na], completed[:nc], cap, m_in, src, dst, size, tb1, tb2, tb3,
                status, key, rem, rate, base_sent, base_t, pair_of, poff, pcnt, parr, ptr,
                hold, mark, phead, phkey, pepos, pother, pkey,
            )  # fmt: skip
            nc = 0
            n = write_rates(
                flows, rates, t, room, rows, alive, tree, off, tol, out_t, out_f, out_r, pos
            )
            if n < 0:
                result = OVERFLOW if n == OVERFLOW_RATES else BAD_RATES
                break
            pos += n
            records += n
        # the next event: a release or a completion
        t_next, t_done = next_event(t, np.inf, tree, root, rel_time, rp)
        if not np.isfinite(t_next):
            if active > 0:
                result = STALL
            break
        t = t_next
        before = nc
        nc, _ = settle_completions(
            t, t_done, tol, tree, off, rows, alive, flow_coflow, coflow_left, coflow_sent_done,
            flow_done, coflow_done, completed, nc,
        )  # fmt: skip
        active -= nc - before
    state_f[T_NOW] = t
    state_i[NEXT_RELEASE] = rp
    state_i[EVENTS] = events
    state_i[ACTIVE] = active
    state_i[RECORDS] = records
    state_i[NUM_COMPLETED] = nc
    return result, pos
