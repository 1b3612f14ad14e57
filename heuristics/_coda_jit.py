"""Numba kernels of CODA's compiled decision path (:class:`coflowlab.heuristics.coda.Coda`,
``compiled=True``), at module level so that numba's disk cache finds them again in a new
process.

:func:`decide` is the reference's ``Coda.decide`` after identification: the identified
coflows' bytes, queues and order, late binding (``Coda._extend``: for each distinct start
time, the first coflow with a flow within ``d``, by :func:`first_near`), the allocation and
the next threshold crossing, with the same floating-point operations in the same order.
:func:`allocate_groups` is the reference's ``Coda._allocate`` loop (each (extended coflow,
flow queue) group takes max-min fair rates from what the groups before it left) in one
compiled call. It runs the same kernels as :func:`coflowlab.allocation.max_min_fair` (the
port-pair filling for a group with at least a quarter as many flows as port pairs, the flow
filling otherwise) and the same per-port sums in the same order, so its rates are the
reference's bit for bit.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from coflowlab._allocation_jit import maxmin, maxmin_pairs

from ._dclas_jit import queue_reached


@njit(cache=True)
def allocate_groups(
    src, dst, order, starts, cap_in, cap_out, pairs_per_flow
):  # pragma: no cover - numba
    # Groups are order[starts[g] : starts[g + 1]] (flows in the reference's stable order).
    m = cap_in.shape[0]
    res_in = cap_in.copy()
    res_out = cap_out.copy()
    rates = np.zeros(src.shape[0])
    no_float = np.zeros(0)
    no_index = np.zeros(0, dtype=np.int64)
    used_in = np.zeros(m)
    used_out = np.zeros(m)
    for g in range(starts.shape[0] - 1):
        lo = starts[g]
        hi = starts[g + 1]
        n = hi - lo
        s = np.empty(n, dtype=np.int64)
        d = np.empty(n, dtype=np.int64)
        any_room = False
        for i in range(n):
            f = order[lo + i]
            s[i] = src[f]
            d[i] = dst[f]
            if res_in[s[i]] > 0 and res_out[d[i]] > 0:
                any_room = True
        if not any_room:
            continue
        if m * m <= pairs_per_flow * n:
            w = np.zeros((m, m))
            for i in range(n):
                w[s[i], d[i]] += 1.0
            frozen = maxmin_pairs(w, res_in.copy(), res_out.copy())
            r = np.empty(n)
            for i in range(n):
                lev = min(frozen[s[i]], frozen[m + d[i]])
                r[i] = 1.0 * lev if np.isfinite(lev) else 0.0
        else:
            r = maxmin(s, d, res_in.copy(), res_out.copy(), np.ones(n), no_float, no_index)
        used_in[:] = 0.0
        used_out[:] = 0.0
        for i in range(n):
            rates[order[lo + i]] = r[i]
            used_in[s[i]] += r[i]
            used_out[d[i]] += r[i]
        for p in range(m):
            res_in[p] = max(res_in[p] - used_in[p], 0.0)
            res_out[p] = max(res_out[p] - used_out[p], 0.0)
    return rates


@njit(cache=True)
def _distinct(key1, key2):  # pragma: no cover - numba
    # np.unique over rows (key1[i], key2[i]) in lexicographic order: the distinct rows'
    # first occurrences (as np.unique's return_index) and each row's distinct index. Active
    # flows come by index, so a coflow's flows (one cluster, one start time on a trace) form
    # runs: only the runs' first rows are sorted (stable, so the first run of equal rows is
    # the first occurrence).
    n = key1.shape[0]
    run_of = np.empty(n, dtype=np.int64)
    head = np.empty(n, dtype=np.int64)  # each run's first row
    nrun = 0
    for i in range(n):
        if i == 0 or key1[i] != key1[i - 1] or key2[i] != key2[i - 1]:
            head[nrun] = i
            nrun += 1
        run_of[i] = nrun - 1
    head = head[:nrun]
    k1 = key1[head]
    k2 = key2[head]
    by2 = np.argsort(k2, kind="mergesort")
    idx = by2[np.argsort(k1[by2], kind="mergesort")]  # stable: ties keep key2's order
    run_id = np.empty(nrun, dtype=np.int64)
    first = np.empty(nrun, dtype=np.int64)
    k = -1
    for j in range(nrun):
        u = idx[j]
        if k < 0 or k1[u] != k1[idx[j - 1]] or k2[u] != k2[idx[j - 1]]:
            k += 1
            first[k] = head[u]
        run_id[u] = k
    inv = np.empty(n, dtype=np.int64)
    for i in range(n):
        inv[i] = run_id[run_of[i]]
    return first[: k + 1], inv


@njit(cache=True, inline="always")
def _distance(t_a, t_b, d_a, d_b, time_weight, port_weight):  # pragma: no cover - numba
    # FlowFeatures.distances, the same operations in the same order
    dt = t_a - t_b
    sq = time_weight * dt * dt
    if port_weight:
        sq = sq + port_weight * (1.0 if d_a != d_b else 0.0)
    return np.sqrt(sq)


@njit(cache=True)
def first_near(t, dport, row_min, d, time_weight, port_weight):  # pragma: no cover - numba
    # For each distinct row r (start time t[r], egress port dport[r]; rows sorted by (t, dport)):
    # the least row_min[q] over the rows q within distance d of r. Without a port term the
    # distance grows with |t[q] - t[r]| (every operation is monotone), so the rows within d
    # of r form a window that moves right with r: a sliding-window minimum, O(rows).
    nr = t.shape[0]
    out = np.empty(nr, dtype=np.int64)
    if port_weight:
        for r in range(nr):
            best = row_min[r]
            for q in range(nr):
                if row_min[q] < best and (
                    _distance(t[q], t[r], dport[q], dport[r], time_weight, port_weight) <= d
                ):
                    best = row_min[q]
            out[r] = best
        return out
    dq = np.empty(nr, dtype=np.int64)  # row indices, row_min increasing from the head
    head = 0
    tail = 0
    lo = 0
    hi = 0  # rows lo .. hi-1 have been in the window
    for r in range(nr):
        # rows up to r itself always enter (those left of the window leave at the head)
        while hi < nr and (hi <= r or _distance(t[hi], t[r], 0, 0, time_weight, 0.0) <= d):
            while tail > head and row_min[dq[tail - 1]] >= row_min[hi]:
                tail -= 1
            dq[tail] = hi
            tail += 1
            hi += 1
        while _distance(t[lo], t[r], 0, 0, time_weight, 0.0) > d:
            lo += 1
        while dq[head] < lo:
            head += 1
        out[r] = row_min[dq[head]]
    return out


@njit(cache=True)
def _queue_of(sent, his, cross_tol):  # pragma: no cover - numba
    out = np.empty(sent.shape[0], dtype=np.int64)
    for i in range(sent.shape[0]):
        out[i] = queue_reached(sent[i], his, cross_tol)
    return out


@njit(cache=True)
def _next_crossing(now, sent, rate, bound):  # pragma: no cover - numba
    # coda._next_crossing: the earliest time sent + rate (t - now) reaches bound (inf: never)
    best = np.inf
    for i in range(sent.shape[0]):
        if rate[i] > 0 and np.isfinite(bound[i]):
            best = min(best, max(bound[i] - sent[i], 0.0) / rate[i])
    return now + best if np.isfinite(best) else np.inf


@njit(cache=True)
def decide(
    now,
    flows,
    label,
    sent,
    flow_start,
    flow_src,
    flow_dst,
    leader_label,
    leader_done,
    leader_start,
    bounds,
    flow_bounds,
    cross_tol,
    d,
    time_weight,
    port_weight,
    intra_priority,
    cap_in,
    cap_out,
    pairs_per_flow,
):  # pragma: no cover - numba
    # Coda.decide after identification (the reference's steps and floating-point operations,
    # in the same order): the active flows, their clusters `label` and bytes `sent`; start
    # time and ports of every flow; per leader its cluster, departed followers' bytes and
    # start time. Returns the rates, the wake-up time (inf: none) and each active flow's
    # extended coflow.
    n = label.shape[0]
    start = np.empty(n)
    src = np.empty(n, dtype=np.int64)
    dst = np.empty(n, dtype=np.int64)
    for i in range(n):
        start[i] = flow_start[flows[i]]
        src[i] = flow_src[flows[i]]
        dst[i] = flow_dst[flows[i]]
    first, cl_of = _distinct(label, np.zeros(n, dtype=np.int64))
    clusters = label[first]
    nc = clusters.shape[0]
    c_sent = np.zeros(nc)
    for i in range(n):  # np.bincount's order
        c_sent[cl_of[i]] += sent[i]
    at = np.searchsorted(clusters, leader_label)
    c_start = np.full(nc, np.inf)
    for j in range(at.shape[0]):  # np.add.at / np.minimum.at, in leader order
        if at[j] >= nc or clusters[at[j]] != leader_label[j]:
            raise ValueError("coda: a leader's cluster has no active flow")
        c_sent[at[j]] += leader_done[j]
        c_start[at[j]] = min(c_start[at[j]], leader_start[j])
    c_queue = _queue_of(c_sent, bounds, cross_tol)
    # np.lexsort((clusters, c_start, c_queue)); clusters are already in increasing order
    order = np.argsort(c_start, kind="mergesort")
    order = order[np.argsort(c_queue[order], kind="mergesort")]
    rank = np.empty(nc, dtype=np.int64)
    for g in range(nc):
        rank[order[g]] = g
    bound = np.empty(n, dtype=np.int64)
    for i in range(n):
        bound[i] = rank[cl_of[i]]
    if d > 0 and nc >= 2:  # late binding: the first coflow within d of the flow, or its own
        egress_key = dst if port_weight else np.zeros(n, dtype=np.int64)
        rep, row = _distinct(start, egress_key)
        row_min = np.full(rep.shape[0], nc, dtype=np.int64)
        for i in range(n):
            row_min[row[i]] = min(row_min[row[i]], bound[i])
        near = first_near(start[rep], egress_key[rep], row_min, d, time_weight, port_weight)
        for i in range(n):
            bound[i] = min(bound[i], near[row[i]])
    if intra_priority:
        f_queue = _queue_of(sent, flow_bounds, cross_tol)
    else:
        f_queue = np.zeros(n, dtype=np.int64)
    # the (extended coflow, flow queue) groups in increasing key, flows by index inside
    # (np.argsort(kind="stable")), by a counting sort: keys are below nc * len(flow_bounds)
    key = bound * flow_bounds.shape[0] + f_queue
    count = np.zeros(nc * flow_bounds.shape[0] + 1, dtype=np.int64)
    for i in range(n):
        count[key[i] + 1] += 1
    starts = np.empty(count.shape[0] + 1, dtype=np.int64)  # n = 0: one empty group
    starts[0] = 0
    ng = 0
    for v in range(1, count.shape[0]):
        count[v] += count[v - 1]  # now: the first position of key v
        if count[v] > starts[ng]:
            ng += 1
            starts[ng] = count[v]
    if ng == 0:
        ng = 1
        starts[1] = n
    by_key = np.empty(n, dtype=np.int64)
    for i in range(n):
        by_key[count[key[i]]] = i
        count[key[i]] += 1
    rates = allocate_groups(src, dst, by_key, starts[: ng + 1], cap_in, cap_out, pairs_per_flow)
    c_rate = np.zeros(nc)
    for i in range(n):
        c_rate[cl_of[i]] += rates[i]
    wake = _next_crossing(now, c_sent, c_rate, bounds[c_queue])
    if intra_priority:
        wake = min(wake, _next_crossing(now, sent, rates, flow_bounds[f_queue]))
    extended = np.empty(n, dtype=np.int64)
    for i in range(n):
        extended[i] = clusters[order[bound[i]]]
    return rates, wake, extended
