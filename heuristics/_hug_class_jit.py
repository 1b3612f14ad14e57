"""Numba kernel of coflowlab.heuristics.hug_classes, at module level: numba's disk cache finds a
kernel again in a new process only when the kernels it calls are module globals, not closures.

The whole event loop of HUG (Chowdhury, PhD thesis, UC Berkeley 2015, Ch. 7, Algorithm 6,
§7.5.1; capped ``hug`` and cooperative ``hug-cooperative``, §7.5.2) runs here: the simulator's
loop (:func:`coflowlab.simulate`) with its flow bookkeeping (the compiled kernels of
:mod:`coflowlab._flow_state_jit`, through the shared steps of :mod:`._event_loop_jit`) and the
policy's compiled decision (``HUG.decide`` with ``fast=True``: the grouping of
:func:`._hug_jit.group_loads` with the bytes sent read from the flow rows
(:func:`._hug_jit.group_loads_at`), :func:`._hug_jit.correlate`, ``P*`` as
:func:`.correlation.optimal_isolation` computes it, and :func:`._hug_jit.hug_rates`) called
directly, without a Python round trip per event. Unlike the other singleton-class loops it
also writes the simulator's rate-0 record of each completion (:mod:`.hug_classes` says why).
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
from ._hug_jit import correlate, group_loads_at, hug_rates

# Why :func:`run` returns: the shared statuses (:data:`._event_loop_jit.LOOP_DONE`, ...).
# BAD_RATES (the decision gave a non-finite rate, which the simulator rejects) and OVERFLOW
# (an event changed more rates than the buffer holds) cannot happen with positive finite
# capacities: the buffer holds every flow's record.

T_NOW = 0
"""``state_f`` entry: the time of the next loop iteration (the simulator's ``t``, whose
completions are already settled). HUG asks for no wake-up."""

NEXT_RELEASE, EVENTS, ACTIVE, RECORDS, NUM_COMPLETED = range(5)
"""``state_i`` entries: position in the release order, events counted, active flows (also
the length of the sorted list ``act``), records written so far, flows completed since the
last decision (in ``completed``)."""


@njit(cache=True)
def optimal_isolation(d):  # pragma: no cover - numba
    """``P* = 1 / max_i Σ_k d_k^i`` (thesis Eq. 7.2; Coflex, Wang et al., INFOCOM 2017,
    eq. 4) with the operations of :func:`coflowlab.heuristics.correlation.optimal_isolation`
    in its order: NumPy sums a C-ordered ``(nc, 2m)`` array over axis 0 row after row (each
    column a running sum from row 0, no pairwise summation across rows) and its ``max``
    propagates NaN; ``inf`` for no coflow or no positive sum. The same float bit for bit."""
    nc = d.shape[0]
    m2 = d.shape[1]
    if nc * m2 == 0:
        return np.inf
    col = d[0].copy()
    for g in range(1, nc):
        for x in range(m2):
            col[x] += d[g, x]
    worst = col[0]
    for x in range(1, m2):
        v = col[x]
        if v != v or worst != worst:
            worst = np.nan
        elif v > worst:
            worst = v
    return 1.0 / worst if worst > 0.0 else np.inf


@njit(cache=True)
def refresh_active(act, n, alive, arrived, na):  # pragma: no cover - numba
    """The active flows in increasing order, as ``FlowState.active`` lists them: the flows of
    ``act[:n]`` still alive, merged with the ``na`` flows of ``arrived`` (any order); written
    into ``act``, returns their number."""
    k = 0
    for j in range(n):  # completed flows leave (alive is already False)
        f = act[j]
        if alive[f]:
            act[k] = f
            k += 1
    if na == 0:
        return k
    new = np.sort(arrived[:na])
    # merge from the back: act[:k] moves right by at most na places
    i = k - 1
    j = na - 1
    w = k + na - 1
    while j >= 0:
        if i >= 0 and act[i] > new[j]:
            act[w] = act[i]
            i -= 1
        else:
            act[w] = new[j]
            j -= 1
        w -= 1
    return k + na


@njit(cache=True)
def decide(
    flows, t, rows, size, coflow, src, dst, m, pos, load_rows, count_rows, counts, cap,
    capped, fill_tol, pair,
):  # fmt: skip  # pragma: no cover - numba
    """``HUG.decide`` with ``fast=True`` and no misreports on the active ``flows`` at ``t``:
    the grouping and loads (:func:`group_loads_at`, the bytes sent read from the flow rows
    as ``FlowState.sent`` computes them), Γ and d (:func:`correlate`), ``P*``
    (:func:`optimal_isolation`) and the rates (:func:`hug_rates`); the other arguments are
    the policy's ``Grouping`` arrays. Returns every active flow's rate, in the order of
    ``flows``."""
    _, group, fsrc, fdst, rem, load, count = group_loads_at(
        flows, t, rows, size, coflow, src, dst, m, pos, load_rows, count_rows, counts
    )
    _, d = correlate(load, cap)
    p_star = optimal_isolation(d)
    rates, _ = hug_rates(
        group, fsrc, fdst, rem, load, count, d, cap, p_star, capped, fill_tol, pair
    )
    return rates


@njit(cache=True)
def run(
    rel_flow, rel_time, tol, max_events, pause, rows, alive, tree, off, flow_coflow,
    coflow_left, coflow_sent_done, flow_done, coflow_done, arrived, completed, act, state_f,
    state_i, out_t, out_f, out_r, pos,
    size, coflow, src, dst, m, gpos, load_rows, count_rows, counts, cap, capped, fill_tol,
    pair,
):  # fmt: skip  # pragma: no cover - numba
    # Runs loop iterations from state_f[T_NOW] until no flow is active or left to release
    # (DONE), the buffer out_*[pos:] may not hold this iteration's records (two per active
    # flow and release at t: a rate, then a completion) or `pause` events have been counted
    # (FULL, checked before
    # anything at the iteration's time is touched; -1: no pause; `active` may still count
    # the flows completed at t, which only makes the room larger), the event count would
    # exceed max_events (MAX_EVENTS; -1: no limit), active flows have no rate and nothing
    # else is due (STALL) or the decision is malformed (BAD_RATES, OVERFLOW). Returns
    # (status, pos).
    #
    # One iteration is one of simulate()'s: the releases at t join (FlowState.add), an event
    # is counted and the policy decides if a flow is active (HUG.decide: rates for every
    # active flow, in increasing flow order, no wake-up), its rate changes are applied and
    # written as records (FlowState.apply_into), then time moves to the next release or
    # projected completion, whose completions (FlowState.complete, completion_threshold)
    # are settled and recorded there (rate 0, as the simulator's recorder writes them).
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
        # every active flow may change its rate, then complete: room for two records each,
        # releases included
        due = rp
        while due < nrel and rel_time[due] <= t:
            due += 1
        if pos + 2 * (active + due - rp) > out_t.shape[0] or events == pause:
            result = FULL
            break
        # releases up to t, in the simulator's order (by time, then coflow, then flow)
        na = 0
        while rp < due:
            f = rel_flow[rp]
            arrived[na] = f
            na += 1
            rp += 1
            alive[f] = True
            rows[f, SINCE] = t
        if na > 0 or nc > 0:
            active = refresh_active(act, active, alive, arrived, na)
        nc = 0
        if active == 0 and rp == nrel:
            break
        if active > 0:
            events += 1
            if max_events >= 0 and events > max_events:
                result = MAX_EVENTS
                break
            flows = act[:active]
            rates = decide(
                flows, t, rows, size, coflow, src, dst, m, gpos, load_rows, count_rows,
                counts, cap, capped, fill_tol, pair,
            )  # fmt: skip
            n = write_rates(
                flows, rates, t, out_t.shape[0] - pos, rows, alive, tree, off, tol, out_t,
                out_f, out_r, pos,
            )  # fmt: skip
            if n < 0:
                result = OVERFLOW if n == OVERFLOW_RATES else BAD_RATES
                break
            pos += n
            records += n
        # the next event: a release or a completion (no wake-up)
        t_next, t_done = next_event(t, np.inf, tree, root, rel_time, rp)
        if not np.isfinite(t_next):
            if active > 0:
                result = STALL
            break
        t = t_next
        nc, _ = settle_completions(
            t, t_done, tol, tree, off, rows, alive, flow_coflow, coflow_left, coflow_sent_done,
            flow_done, coflow_done, completed, 0,
        )  # fmt: skip
        # the simulator's rate-0 record of each completion: a flow may complete with a few
        # bytes left (the tolerance) at a rate so small that, without it, its class would
        # keep sending for long after
        if pos + nc > out_t.shape[0]:  # pragma: no cover - the room reserved above
            result = OVERFLOW
            break
        for q in range(nc):
            out_t[pos] = t
            out_f[pos] = completed[q]
            out_r[pos] = 0.0
            pos += 1
        records += nc
    state_f[T_NOW] = t
    state_i[NEXT_RELEASE] = rp
    state_i[EVENTS] = events
    state_i[ACTIVE] = active
    state_i[RECORDS] = records
    state_i[NUM_COMPLETED] = nc
    return result, pos
