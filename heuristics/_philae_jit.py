"""Numba kernels of Philae's compiled decision path (:class:`coflowlab.heuristics.philae.Philae`,
``compiled=True``), at module level so that numba's disk cache finds them again in a new
process.

The per-event work of the reference path, on state kept between events: the active flows of
each coflow (a compacted list in flow-index order), the (coflow, port) presence counts behind
Philae's contention metric (§4.5), and the three rate tiers. The tiers perform the same
floating-point operations in the same order as the reference (greedy backfills, per-port sums
in flow-index order, and the D-CLAS kernel :func:`._dclas_jit.allocate` on the same grouped
arrays), so the rates are the reference's bit for bit.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._dclas_jit import allocate

_SAMPLING = 1
_ESTIMATED = 2
_THIN = 3


@njit(cache=True)
def relist(coflows, ptr, alive, live, nlive):  # pragma: no cover - numba
    # Rebuilds the compacted list of active flows (increasing index) of each touched coflow
    # from the alive flags of its flow range ptr[k] .. ptr[k + 1].
    for i in range(coflows.shape[0]):
        k = coflows[i]
        n = 0
        for f in range(ptr[k], ptr[k + 1]):
            if alive[f]:
                live[ptr[k] + n] = f
                n += 1
        nlive[k] = n


@njit(cache=True)
def presence(flows, delta, pin, pout, pair_port, pair_cnt, port_ncof):  # pragma: no cover
    # Adds `delta` (+1 arrival, -1 completion) to the (coflow, port) pairs of `flows`; a pair
    # that becomes (un)occupied changes its port's count of coflows.
    for i in range(flows.shape[0]):
        f = flows[i]
        for k in range(2):
            q = pin[f] if k == 0 else pout[f]
            before = pair_cnt[q]
            pair_cnt[q] += delta
            if before == 0 and pair_cnt[q] > 0:
                port_ncof[pair_port[q]] += 1
            elif before > 0 and pair_cnt[q] == 0:
                port_ncof[pair_port[q]] -= 1


@njit(cache=True)
def contention_of(
    coflows, pair_ptr, pair_port, pair_cnt, port_ncof, port_ptr, port_pairs, pair_coflow, mark
):  # pragma: no cover - numba
    # For each of `coflows`: Σ_p (coflows at p − 1) over its occupied ports (as a float, the
    # reference's sparse product of integers), and the number of other coflows sharing a port.
    n = coflows.shape[0]
    port_sum = np.zeros(n)
    share = np.zeros(n, dtype=np.int64)
    for i in range(n):
        k = coflows[i]
        s = 0.0
        cnt = 0
        for q in range(pair_ptr[k], pair_ptr[k + 1]):
            if pair_cnt[q] == 0:
                continue
            p = pair_port[q]
            s += port_ncof[p] - 1.0
            for r in range(port_ptr[p], port_ptr[p + 1]):
                qq = port_pairs[r]
                j = pair_coflow[qq]
                if pair_cnt[qq] > 0 and j != k and mark[j] != i + 1:
                    mark[j] = i + 1
                    cnt += 1
        port_sum[i] = s
        share[i] = cnt
    for i in range(n):  # clear the marks of the coflows seen
        k = coflows[i]
        for q in range(pair_ptr[k], pair_ptr[k + 1]):
            p = pair_port[q]
            for r in range(port_ptr[p], port_ptr[p + 1]):
                mark[pair_coflow[port_pairs[r]]] = 0
    return port_sum, share


@njit(cache=True)
def _greedy(f, src, dst, res_in, res_out, rate):  # pragma: no cover - numba
    # One step of the reference's greedy backfill (no demand cap).
    s = src[f]
    d = dst[f]
    x = res_in[s]
    if res_out[d] < x:
        x = res_out[d]
    if x > 0.0:
        rate[f] += x
        res_in[s] -= x
        res_out[d] -= x


@njit(cache=True)
def tiers(
    fifo,
    by_index,
    est_order,
    est_queue,
    status,
    ptr,
    live,
    nlive,
    pilot,
    src,
    dst,
    cap_in,
    cap_out,
    weights,
    strict,
    work_conserving,
    max_rounds,
    rate,
    last_rate,
):  # pragma: no cover - numba
    # Philae's three tiers on the active coflows: `fifo` in FIFO order (arrival, index),
    # `by_index` the same coflows by index, `est_order` the estimated ones in service order
    # with their queues `est_queue`. Writes each active flow's rate into `rate` and returns
    # the flows whose rate differs from `last_rate` (which is updated) and their new rates.
    m = cap_in.shape[0]
    ntot = 0
    for i in range(by_index.shape[0]):
        k = by_index[i]
        for t in range(ptr[k], ptr[k] + nlive[k]):
            rate[live[t]] = 0.0
        ntot += nlive[k]
    # tier 1: pilots and thin coflows, FIFO, greedy at full rate
    res_in = cap_in.copy()
    res_out = cap_out.copy()
    first = np.empty(ntot, dtype=np.int64)
    n1 = 0
    for i in range(fifo.shape[0]):
        k = fifo[i]
        thin = status[k] == _THIN
        for t in range(ptr[k], ptr[k] + nlive[k]):
            f = live[t]
            if thin or pilot[f]:
                first[n1] = f
                n1 += 1
                _greedy(f, src, dst, res_in, res_out, rate)
    # tier 2: estimated coflows, D-CLAS on what tier 1 left (per-port use summed in flow
    # order, as the reference's bincount)
    n2 = 0
    for i in range(est_order.shape[0]):
        n2 += nlive[est_order[i]]
    if n2 > 0:
        ones = np.sort(first[:n1])
        used = np.zeros(2 * m)
        for i in range(n1):
            f = ones[i]
            used[src[f]] += rate[f]
            used[m + dst[f]] += rate[f]
        cap = np.empty(2 * m)
        for p in range(m):
            cap[p] = max(cap_in[p] - used[p], 0.0)
            cap[m + p] = max(cap_out[p] - used[m + p], 0.0)
        ng = est_order.shape[0]
        starts = np.empty(ng, dtype=np.int64)
        sizes = np.empty(ng, dtype=np.int64)
        flows = np.empty(n2, dtype=np.int64)
        pa = np.empty(n2, dtype=np.int64)
        pb = np.empty(n2, dtype=np.int64)
        ka = np.empty(n2, dtype=np.int64)
        kb = np.empty(n2, dtype=np.int64)
        j = 0
        np2 = 2 * m
        for g in range(ng):
            k = est_order[g]
            starts[g] = j
            sizes[g] = nlive[k]
            q = est_queue[g]
            for t in range(ptr[k], ptr[k] + nlive[k]):
                f = live[t]
                flows[j] = f
                pa[j] = src[f]
                pb[j] = m + dst[f]
                ka[j] = q * np2 + pa[j]
                kb[j] = q * np2 + pb[j]
                j += 1
        out = np.empty(n2)
        allocate(
            starts,
            sizes,
            np.ones(n2, dtype=np.bool_),
            pa,
            pb,
            ka,
            kb,
            cap,
            weights,
            strict,
            max_rounds,
            out,
        )
        for j in range(n2):
            rate[flows[j]] = out[j]
    # tier 3: held flows of sampling coflows on what is left, FIFO, greedy
    if work_conserving:
        held = False
        for i in range(fifo.shape[0]):
            if status[fifo[i]] == _SAMPLING:
                held = True
        if held:
            used = np.zeros(2 * m)
            for i in range(by_index.shape[0]):
                k = by_index[i]
                for t in range(ptr[k], ptr[k] + nlive[k]):
                    f = live[t]
                    used[src[f]] += rate[f]
                    used[m + dst[f]] += rate[f]
            for p in range(m):
                res_in[p] = max(cap_in[p] - used[p], 0.0)
                res_out[p] = max(cap_out[p] - used[m + p], 0.0)
            for i in range(fifo.shape[0]):
                k = fifo[i]
                if status[k] != _SAMPLING:
                    continue
                for t in range(ptr[k], ptr[k] + nlive[k]):
                    f = live[t]
                    if not pilot[f]:
                        _greedy(f, src, dst, res_in, res_out, rate)
    # the flows whose rate changed
    changed = np.empty(ntot, dtype=np.int64)
    new = np.empty(ntot)
    nc = 0
    for i in range(by_index.shape[0]):
        k = by_index[i]
        for t in range(ptr[k], ptr[k] + nlive[k]):
            f = live[t]
            if rate[f] != last_rate[f]:
                changed[nc] = f
                new[nc] = rate[f]
                last_rate[f] = rate[f]
                nc += 1
    return changed[:nc], new[:nc]
