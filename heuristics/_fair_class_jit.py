"""Numba kernels of coflowlab.heuristics.fair_classes, at module level: numba's disk cache finds a
kernel again in a new process only when the kernels it calls are module globals, not closures.

The whole event loop of per-flow fair sharing runs here, on rate classes (port pairs). Its
state lives in arrays the Python side creates, so that the loop can return when its output
buffer is full and resume where it stopped.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from coflowlab._allocation_jit import lowest, maxmin_pairs

from ._event_loop_jit import LOOP_DONE as DONE
from ._event_loop_jit import LOOP_FULL as FULL
from ._event_loop_jit import LOOP_MAX_EVENTS as MAX_EVENTS
from ._event_loop_jit import LOOP_STALL as STALL

# Why :func:`run` returns: the shared statuses (:data:`._event_loop_jit.LOOP_DONE`, ...), of
# which this loop needs the first four.

T_NOW, T_DONE = range(2)
"""``state_f`` entries: the time of the next event to process, the earliest projected
completion."""

NEXT_RELEASE, EVENTS, ACTIVE, RECORDS, NUM_CHANGED = range(5)
"""``state_i`` entries: position in the release order, events counted, active flows, class
records written so far, ports whose weights changed since the last max-min."""


@njit(cache=True)
def heap_less(hkey, hflow, a, b):  # pragma: no cover - numba
    # entry a before entry b: by key, ties by flow index
    return hkey[a] < hkey[b] or (hkey[a] == hkey[b] and hflow[a] < hflow[b])


@njit(cache=True)
def heap_push(hkey, hflow, lo, n, key, f):  # pragma: no cover - numba
    # a binary min-heap in hkey/hflow[lo : lo + n] (children of i are 2i+1, 2i+2 relative to
    # lo); adds (key, f) and sifts it up
    i = n
    hkey[lo + i] = key
    hflow[lo + i] = f
    while i > 0:
        p = (i - 1) >> 1
        if not heap_less(hkey, hflow, lo + i, lo + p):
            break
        hkey[lo + i], hkey[lo + p] = hkey[lo + p], hkey[lo + i]
        hflow[lo + i], hflow[lo + p] = hflow[lo + p], hflow[lo + i]
        i = p


@njit(cache=True)
def heap_pop(hkey, hflow, lo, n):  # pragma: no cover - numba
    # removes the top of the heap of n entries at lo (the last entry moves down from the root)
    n -= 1
    hkey[lo] = hkey[lo + n]
    hflow[lo] = hflow[lo + n]
    i = 0
    while True:
        a = 2 * i + 1
        if a >= n:
            break
        b = a + 1
        if b < n and heap_less(hkey, hflow, lo + b, lo + a):
            a = b
        if not heap_less(hkey, hflow, lo + a, lo + i):
            break
        hkey[lo + i], hkey[lo + a] = hkey[lo + a], hkey[lo + i]
        hflow[lo + i], hflow[lo + a] = hflow[lo + a], hflow[lo + i]
        i = a


@njit(cache=True)
def _hist_add(h_round, h_res, h_wsum, h_count, h_len, p, k, res, wsum, count):
    # pragma: no cover - numba
    n = h_len[p]
    h_round[p, n] = k
    h_res[p, n] = res
    h_wsum[p, n] = wsum
    h_count[p, n] = count
    h_len[p] = n + 1


@njit(cache=True)
def maxmin_incremental(
    weight, weight_t, res0, wsum0, count0, ports, num_ports, in_s, r_bp, r_best, num_rounds,
    frozen, h_round, h_res, h_wsum, h_count, h_len, res, wsum, count, level,
):  # fmt: skip  # pragma: no cover - numba
    # maxmin_pairs (coflowlab._allocation_jit) redone after the weights of the pairs at
    # ports[:num_ports] (flagged in in_s) changed: the same operations in the same order on
    # every port, hence the same frozen levels to the bit, but the rounds of the previous
    # call are replayed while they stay the same. A port's state (residual, weight sum, open
    # pairs) after round k depends only on its own weights and the rounds up to k, so while
    # the lowest port of the previous round k is not a changed port and beats every changed
    # port (level, then index, as `lowest` picks), round k is the same and only the changed
    # ports are updated. At the first round that differs, every other port's state is read
    # back from its history (its states with the round that set them) and the filling goes
    # on over all ports. r_bp, r_best: each round's port and level (raw, before the clamp at
    # 0); frozen: the result, kept between calls.
    mi = weight.shape[0]
    P = 2 * mi
    K = num_rounds[0]
    for q in range(num_ports):
        s = ports[q]
        res[s] = res0[s]
        wsum[s] = wsum0[s]
        count[s] = count0[s]
        level[s] = res[s] / wsum[s] if count[s] > 0 else np.inf
        h_len[s] = 0
        _hist_add(h_round, h_res, h_wsum, h_count, h_len, s, -1, res[s], wsum[s], count[s])
    k = 0
    if 4 * num_ports <= P:
        while k < K:
            bp = r_bp[k]
            best = r_best[k]
            if in_s[bp]:
                break
            sb = np.inf
            sp = -1
            for q in range(num_ports):
                s = ports[q]
                if level[s] < sb or (level[s] == sb and sp >= 0 and s < sp):
                    sb = level[s]
                    sp = s
            if sp >= 0 and (sb < best or (sb == best and sp < bp)):
                break
            lev = best if best > 0.0 else 0.0
            for q in range(num_ports):
                s = ports[q]
                if bp < mi:
                    if s < mi:
                        continue
                    w = weight[bp, s - mi]
                elif s < mi:
                    w = weight_t[bp - mi, s]
                else:
                    continue
                if w > 0.0 and count[s] > 0:
                    res[s] -= w * lev
                    wsum[s] -= w
                    count[s] -= 1
                    level[s] = res[s] / wsum[s] if count[s] > 0 else np.inf
                    _hist_add(h_round, h_res, h_wsum, h_count, h_len, s, k, res[s], wsum[s],
                              count[s])  # fmt: skip
            k += 1
    start = k
    for p in range(P):
        if in_s[p]:
            continue
        n = h_len[p]
        while n > 1 and h_round[p, n - 1] >= start:
            n -= 1
        h_len[p] = n
        res[p] = h_res[p, n - 1]
        wsum[p] = h_wsum[p, n - 1]
        count[p] = h_count[p, n - 1]
        level[p] = res[p] / wsum[p] if count[p] > 0 else np.inf
    for j in range(start, K):
        frozen[r_bp[j]] = np.inf
    while True:  # maxmin_pairs' loop, from round `start`
        bp, best = lowest(level)
        if bp < 0:
            break
        lev = best if best > 0.0 else 0.0
        frozen[bp] = lev
        level[bp] = np.inf
        count[bp] = 0
        _hist_add(h_round, h_res, h_wsum, h_count, h_len, bp, k, res[bp], wsum[bp], 0)
        r_bp[k] = bp
        r_best[k] = best
        if bp < mi:
            for j in range(mi):
                w = weight[bp, j]
                b = mi + j
                if w > 0.0 and count[b] > 0:
                    res[b] -= w * lev
                    wsum[b] -= w
                    count[b] -= 1
                    level[b] = res[b] / wsum[b] if count[b] > 0 else np.inf
                    _hist_add(h_round, h_res, h_wsum, h_count, h_len, b, k, res[b], wsum[b],
                              count[b])  # fmt: skip
        else:
            for i in range(mi):
                w = weight_t[bp - mi, i]
                if w > 0.0 and count[i] > 0:
                    res[i] -= w * lev
                    wsum[i] -= w
                    count[i] -= 1
                    level[i] = res[i] / wsum[i] if count[i] > 0 else np.inf
                    _hist_add(h_round, h_res, h_wsum, h_count, h_len, i, k, res[i], wsum[i],
                              count[i])  # fmt: skip
        k += 1
    num_rounds[0] = k


@njit(cache=True)
def run(
    cap_in, cap_out, rel_flow, rel_time, flow_class, flow_size, flow_coflow, flow_done,
    cstart, hkey, hflow, hn, ctop, ctop_size, cnext, weight, speed, vbase, since, forced,
    coflow_left, coflow_done, state_f, state_i, tol, max_events, out_t, out_c, out_r, pos,
    incremental, mm_int, mm_float, weight_t, ports, in_s, r_bp, frozen_kept, h_round,
    h_float, h_count, h_len,
):  # fmt: skip  # pragma: no cover - numba
    # Runs events from state_f[T_NOW] until every flow has completed (DONE), the buffer
    # out_*[pos:] may not hold another event's records (FULL, before that event is touched),
    # the event count would exceed max_events (MAX_EVENTS; -1: no limit) or active flows
    # have no rate and no release is left (STALL). Returns (status, pos).
    #
    # Class c (= src * m + dst) has speed[c] since since[c], when its virtual bytes per unit
    # weight were vbase[c]; its active flows are a min-heap of keys V(release) + size in
    # hkey/hflow[cstart[c] : cstart[c] + hn[c]], whose top key and flow size are copied to
    # ctop[c], ctop_size[c] (dense: the pair loop reads them for every changed class). cnext[c]
    # is the projected completion of the heap top (forced[c]: due now, a residue left at a
    # speed change, as FlowState.apply rules). The classes are scanned at every event, as
    # the max-min is over all pairs anyway.
    m = cap_in.shape[0]
    C = m * m
    nrel = rel_flow.shape[0]
    weight2 = weight.reshape((m, m))
    t = state_f[T_NOW]
    t_done = state_f[T_DONE]
    rp = state_i[NEXT_RELEASE]
    events = state_i[EVENTS]
    active = state_i[ACTIVE]
    records = state_i[RECORDS]
    mark = np.zeros(C, dtype=np.bool_)  # heap changed at this event
    touched = np.empty(C, dtype=np.int64)
    num_ports = state_i[NUM_CHANGED]  # ports whose weights changed since the last max-min
    res0, wsum0, r_best, res, wsum, level = mm_float
    count0, num_rounds, count = mm_int
    h_res, h_wsum = h_float
    status = DONE
    while True:
        if not np.isfinite(t):
            break
        if pos + C > out_t.shape[0]:
            status = FULL
            break
        thr = t + tol * max(1.0, abs(t))
        nt = 0
        # completions: the flows projected to complete by thr (completion_threshold)
        if t_done <= thr:
            for c in range(C):
                if not cnext[c] <= thr:
                    continue
                lo = cstart[c]
                r = speed[c]
                vnow = vbase[c] + r * (t - since[c])
                while hn[c] > 0:
                    f = hflow[lo]
                    key = hkey[lo]
                    if not (
                        (forced[c] and key - vnow <= tol * flow_size[f])
                        or (r > 0.0 and since[c] + (key - vbase[c]) / r <= thr)
                    ):
                        break
                    heap_pop(hkey, hflow, lo, hn[c])
                    hn[c] -= 1
                    active -= 1
                    flow_done[f] = t
                    k = flow_coflow[f]
                    coflow_left[k] -= 1
                    if coflow_left[k] == 0:
                        coflow_done[k] = t
                forced[c] = False
                if not mark[c]:
                    mark[c] = True
                    touched[nt] = c
                    nt += 1
                if hn[c] > 0:
                    ctop[c] = hkey[lo]
                    ctop_size[c] = flow_size[hflow[lo]]
                else:  # re-based: no flow refers to the class's virtual bytes
                    cnext[c] = np.inf
                    vbase[c] = 0.0
                    since[c] = t
        # releases at t join their class at its current virtual bytes
        while rp < nrel and rel_time[rp] <= t:
            f = rel_flow[rp]
            c = flow_class[f]
            lo = cstart[c]
            vnow = vbase[c] + speed[c] * (t - since[c])
            heap_push(hkey, hflow, lo, hn[c], vnow + flow_size[f], f)
            hn[c] += 1
            ctop[c] = hkey[lo]
            ctop_size[c] = flow_size[hflow[lo]]
            if not mark[c]:
                mark[c] = True
                touched[nt] = c
                nt += 1
            active += 1
            rp += 1
        # the pairs' weights (active flows), and the ports whose weights changed
        for q in range(nt):
            c = touched[q]
            old = weight[c]
            new_w = float(hn[c])
            if old == new_w:
                continue
            weight[c] = new_w
            i = c // m
            j = m + c % m
            weight_t[j - m, i] = new_w
            dc = (new_w > 0.0) - (old > 0.0)
            for p in (i, j):
                wsum0[p] += new_w - old  # whole numbers: exact, as maxmin_pairs' sums
                count0[p] += dc
                if not in_s[p]:
                    in_s[p] = True
                    ports[num_ports] = p
                    num_ports += 1
        if active == 0 and rp == nrel:
            break
        t_done = np.inf
        if active > 0:
            events += 1
            if max_events >= 0 and events > max_events:
                status = MAX_EVENTS
                break
            if incremental:
                maxmin_incremental(
                    weight2, weight_t, res0, wsum0, count0, ports, num_ports, in_s, r_bp,
                    r_best, num_rounds, frozen_kept, h_round, h_res, h_wsum, h_count, h_len,
                    res, wsum, count, level,
                )  # fmt: skip
                frozen = frozen_kept
            else:
                frozen = maxmin_pairs(weight2, cap_in, cap_out)
            for q in range(num_ports):
                in_s[ports[q]] = False
            num_ports = 0
            for i in range(m):
                lin = frozen[i]
                for j in range(m):
                    c = i * m + j
                    if hn[c] == 0:
                        continue
                    new = min(lin, frozen[m + j])
                    if not np.isfinite(new):  # no port limits it: no rate, as in max_min_fair
                        new = 0.0
                    if new != speed[c]:
                        vbase[c] += speed[c] * (t - since[c])
                        since[c] = t
                        speed[c] = new
                        out_t[pos] = t
                        out_c[pos] = c
                        out_r[pos] = new
                        pos += 1
                        records += 1
                        forced[c] = ctop[c] - vbase[c] <= tol * ctop_size[c]
                        mark[c] = True
                    if mark[c]:
                        mark[c] = False
                        if forced[c]:
                            cnext[c] = t
                        elif speed[c] > 0.0:
                            cnext[c] = since[c] + (ctop[c] - vbase[c]) / speed[c]
                        else:
                            cnext[c] = np.inf
                    if cnext[c] < t_done:
                        t_done = cnext[c]
        mark[:] = False
        t_next = t_done
        if rp < nrel and rel_time[rp] < t_next:
            t_next = rel_time[rp]
        if not np.isfinite(t_next):
            if active > 0:
                status = STALL
            break
        t = t_next
    state_f[T_NOW] = t
    state_f[T_DONE] = t_done
    state_i[NEXT_RELEASE] = rp
    state_i[EVENTS] = events
    state_i[ACTIVE] = active
    state_i[RECORDS] = records
    state_i[NUM_CHANGED] = num_ports
    return status, pos
