"""Numba kernel of coflowlab.heuristics.sincronia_online_classes, at module level: numba's disk
cache finds a kernel again in a new process only when the kernels it calls are module globals,
not closures.

The event loop of Sincronia online (Agarwal et al., SIGCOMM 2018, with the doubling-epoch
reduction of Hall, Schulz, Shmoys and Wein, Math. Oper. Res. 1997) with its greedy allocation
runs here: the simulator's loop (:func:`coflowlab.simulate`) with its flow bookkeeping (the
compiled kernels of :mod:`coflowlab._flow_state_jit`) and the policy's per-event work (the
greedy kernels of :mod:`coflowlab.heuristics._sincronia_online_jit`, on the policy's own state
arrays) called directly. The events that need the policy's Python logic (an epoch start, the
admission LP, the BSSI and tail orders; an arrival, which may re-sort the tail) make the loop
return (``DECIDE``) so that :meth:`SincroniaOnline.decide` runs on them unchanged; the Python
side then hands the decision's rate changes back and the loop resumes where it stopped. Its
state lives in arrays the Python side creates. :func:`active_port_loads` gives that decision
the candidates' remaining bytes per port (the admission LP's loads) from the flow rows.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from coflowlab._flow_state_jit import RATE, SENT, SINCE, SIZE

from ._event_loop_jit import LOOP_BAD_RATES as BAD_RATES
from ._event_loop_jit import LOOP_DONE as DONE
from ._event_loop_jit import LOOP_FULL as FULL
from ._event_loop_jit import LOOP_MAX_EVENTS as MAX_EVENTS
from ._event_loop_jit import LOOP_OVERFLOW as OVERFLOW
from ._event_loop_jit import LOOP_STALL as STALL
from ._event_loop_jit import OVERFLOW_RATES, next_event, settle_completions, write_rates
from ._sincronia_online_jit import count_coflows, greedy_fill, update_flows

DECIDE = OVERFLOW + 1
"""Why :func:`run` returned, besides the shared statuses (:data:`._event_loop_jit.LOOP_DONE`,
...): the event at ``state_f[T_NOW]`` needs the policy's Python ``decide`` (its rate changes
are then passed back as ``pend_f``, ``pend_r`` with ``state_i[PHASE] == 1``). ``BAD_RATES``
(a decision named an inactive flow or a non-finite rate, which the simulator rejects) and
``OVERFLOW`` (an event changed more rates than ``room``) cannot happen with the greedy
kernels (at most one sender per port before and after an event)."""

T_NOW, WAKEUP, EPOCH_UNTIL, EPOCH_END = range(4)
"""``state_f`` entries: the time of the current loop iteration (the simulator's ``t``, whose
completions are already settled), the pending wake-up, and the policy's cached epoch: it
holds for event times below ``EPOCH_UNTIL`` (``SincroniaOnline._epoch_until``) and ends at
``EPOCH_END`` (the wake-up its decisions ask for)."""

NEXT_RELEASE, EVENTS, ACTIVE, RECORDS, NUM_COMPLETED, NUM_ARRIVED, NUM_DONE = range(7)
PHASE, WOKEN, LO, HI = range(7, 11)
"""``state_i`` entries: position in the release order, events counted, active flows, records
written so far, flows completed since the last decision (in ``completed``), flows arrived at
this event (in ``arrived``), coflows completed since the last decision (in ``done_coflows``),
whether the next call resumes after a Python decision (1) or starts an iteration (0), whether
the event is a wake-up the policy asked for, a window ``[LO, HI)`` of flow indices that
holds every active flow (the simulator's FlowState keeps the same one)."""


@njit(cache=True, inline="always")
def _mark_stale(f, stale, cell_src, cell_dst):  # pragma: no cover - numba
    # flow f's remaining bytes change (it arrived, or sends): its two load cells are stale
    stale[cell_src[f]] = True
    stale[cell_dst[f]] = True


@njit(cache=True)
def run(
    rel_flow, rel_time, tol, max_events, pause, room,
    rows, alive, tree, off, flow_coflow, coflow_left, coflow_sent_done, flow_done, coflow_done,
    coflow_arrival, arrived, completed, done_coflows, state_f, state_i, pend_f, pend_r,
    out_t, out_f, out_r, pos,
    active_count, pair_of, ptr, count, slot, fpos, rate, head, head_key, heads, keys, ports,
    pending, pair_ports, meta, rank, g_coflow, cap_in, cap_out, sending, sent_kp, stamp,
    stale, cell_src, cell_dst,
):  # fmt: skip  # pragma: no cover - numba
    # Runs loop iterations from state_f[T_NOW] until no flow is active or left to release
    # (DONE), the buffer out_*[pos:] may not hold another event's records or `pause` events
    # have been counted (FULL, checked before anything at the iteration's time is touched;
    # -1: no pause), the event count would exceed max_events (MAX_EVENTS; -1: no limit), an
    # event needs the Python decision (DECIDE, returned after the event is counted), active
    # flows have no rate and nothing else is due (STALL) or a decision is malformed
    # (BAD_RATES, OVERFLOW). Returns (status, pos).
    #
    # One iteration is one of simulate()'s: the releases at t join (FlowState.add; the
    # coflow's arrival time is the first of its flows'), an event is counted and the policy
    # decides if a flow is active, its rate changes are applied and written as records
    # (FlowState.apply_into), then time moves to the next release, projected completion or
    # pending wake-up, whose completions (FlowState.complete, completion_threshold) are
    # settled there and passed to the next decision. SincroniaOnline.decide at an event
    # without arrivals inside the cached epoch (t < _epoch_until) only counts the completed
    # flows off their coflows and runs the greedy kernels with the order unchanged, waking
    # up at the epoch's end: that is what runs here; every other event goes to Python.
    nrel = rel_flow.shape[0]
    root = off[off.shape[0] - 1]
    t = state_f[T_NOW]
    wakeup = state_f[WAKEUP]
    until = state_f[EPOCH_UNTIL]
    epoch_end = state_f[EPOCH_END]
    rp = state_i[NEXT_RELEASE]
    events = state_i[EVENTS]
    active = state_i[ACTIVE]
    records = state_i[RECORDS]
    nc = state_i[NUM_COMPLETED]
    na = state_i[NUM_ARRIVED]
    nd = state_i[NUM_DONE]
    resume = state_i[PHASE] == 1
    woken = state_i[WOKEN] != 0
    lo = state_i[LO]
    hi = state_i[HI]
    no_flows = arrived[:0]
    result = DONE
    while True:
        flows = pend_f[:0]
        rates = pend_r[:0]
        decided = False
        if resume:
            # the Python decision of this event (it consumed arrived, completed, done)
            resume = False
            flows = pend_f
            rates = pend_r
            decided = True
            na = 0
            nc = 0
            nd = 0
        else:
            if pos + room > out_t.shape[0] or events == pause:
                result = FULL
                break
            # releases up to t, in the simulator's order (by time, then coflow, then flow)
            na = 0
            while rp < nrel and rel_time[rp] <= t:
                f = rel_flow[rp]
                if active == 0 and na == 0:  # the set was empty: a new window
                    lo = f
                    hi = f + 1
                else:
                    lo = min(lo, f)
                    hi = max(hi, f + 1)
                arrived[na] = f
                na += 1
                rp += 1
                alive[f] = True
                _mark_stale(f, stale, cell_src, cell_dst)
                rows[f, SINCE] = t
                c = flow_coflow[f]
                if t < coflow_arrival[c]:
                    coflow_arrival[c] = t
            active += na
            if active == 0 and rp == nrel:
                break
            if active > 0:
                events += 1
                if max_events >= 0 and events > max_events:
                    result = MAX_EVENTS
                    break
                if na > 0 or not t < until:
                    # an arrival (the tail may change) or near/past the cached epoch's end
                    result = DECIDE
                    break
                if nc > 0:  # else nothing changed: the same heads, the same rates
                    count_coflows(no_flows, completed[:nc], g_coflow, active_count)
                    update_flows(
                        no_flows, completed[:nc], False, pair_of, ptr, count, slot, fpos, rate,
                        head, head_key, heads, keys, ports, pending, pair_ports, meta, rank,
                        g_coflow,
                    )  # fmt: skip
                    flows, rates = greedy_fill(
                        cap_in, cap_out, head, heads, keys, ports, pending, rate, sending,
                        sent_kp, stamp, meta,
                    )  # fmt: skip
                decided = True
                nc = 0
                nd = 0
                wakeup = epoch_end
        if decided:
            n = write_rates(
                flows, rates, t, room, rows, alive, tree, off, tol, out_t, out_f, out_r, pos
            )
            if n < 0:
                result = OVERFLOW if n == OVERFLOW_RATES else BAD_RATES
                break
            pos += n
            records += n
            for i in range(flows.shape[0]):
                if rates[i] > 0.0:
                    _mark_stale(flows[i], stale, cell_src, cell_dst)
        # the next event: a release, a completion or the wake-up
        t_next, t_done = next_event(t, wakeup, tree, root, rel_time, rp)
        if not np.isfinite(t_next):
            if active > 0:
                result = STALL
            break
        woken = t_next >= wakeup
        t = t_next
        before = nc
        nc, done = settle_completions(
            t, t_done, tol, tree, off, rows, alive, flow_coflow, coflow_left, coflow_sent_done,
            flow_done, coflow_done, completed, nc,
        )  # fmt: skip
        active -= nc - before
        for q in range(done.shape[0]):
            done_coflows[nd] = done[q]
            nd += 1
    state_f[T_NOW] = t
    state_f[WAKEUP] = wakeup
    state_i[NEXT_RELEASE] = rp
    state_i[EVENTS] = events
    state_i[ACTIVE] = active
    state_i[RECORDS] = records
    state_i[NUM_COMPLETED] = nc
    state_i[NUM_ARRIVED] = na
    state_i[NUM_DONE] = nd
    state_i[PHASE] = 1 if result == DECIDE else 0
    state_i[WOKEN] = 1 if woken else 0
    state_i[LO] = lo
    state_i[HI] = hi
    return result, pos


@njit(cache=True)
def active_port_loads(row, t, alive, rows, flow_done, cells, cell_ptr, cell_left, cache, stale, k):
    # pragma: no cover - numba
    """``port_loads`` of :mod:`coflowlab.heuristics._sincronia_online_jit` over the active
    flows of the coflows with ``row[c] >= 0`` only, without gathering every active flow's
    columns: the same floats, since each entry ``(c, l)`` of the result sums the remaining
    bytes (size minus the bytes sent, ``sent + rate (t - since)``, as the state computes
    them) of coflow ``c``'s flows through port ``l`` in increasing flow order, as there.

    Cell ``c · 2m + l`` lists those flows: ``cells[cell_ptr[cell]:cell_ptr[cell] +
    cell_left[cell]]``, increasing. A coflow is a candidate at many epoch starts, so:

    - a cell is summed again only if it is ``stale``: a flow of it arrived, had a positive
      rate when the cell was last summed, or got one since (:func:`run` marks the cells of
      every flow given a positive rate). Otherwise each of its flows kept a zero rate, hence
      its ``sent`` and remaining bytes, and the cell's last sum (``cache``) is the same float;
    - the completed flows (``flow_done`` set) are dropped from a cell's list as they are
      met, order kept.
    """
    width = cache.shape[1]
    load = np.zeros((k, width))
    for c in range(row.shape[0]):
        r = row[c]
        if r < 0:
            continue
        for port in range(width):
            cell = c * width + port
            if stale[cell]:
                cache[c, port], stale[cell] = _sum_cell(
                    cell, t, alive, rows, flow_done, cells, cell_ptr, cell_left
                )
            load[r, port] = cache[c, port]
    return load


@njit(cache=True, inline="always")
def _sum_cell(cell, t, alive, rows, flow_done, cells, cell_ptr, cell_left):
    # pragma: no cover - numba
    # the remaining bytes of the cell's active flows, summed in its order, and whether one of
    # them is sending; its completed flows leave its list
    total = 0.0
    sending = False
    kept = cell_ptr[cell]
    for i in range(cell_ptr[cell], cell_ptr[cell] + cell_left[cell]):
        f = cells[i]
        if not np.isnan(flow_done[f]):
            continue  # completed: never active again
        cells[kept] = f
        kept += 1
        if alive[f]:
            total += rows[f, SIZE] - (rows[f, SENT] + rows[f, RATE] * (t - rows[f, SINCE]))
            sending = sending or rows[f, RATE] > 0.0
    cell_left[cell] = kept - cell_ptr[cell]
    return total, sending
