"""The compiled event step of per-flow prioritisation (``pfp``,
:class:`coflowlab.heuristics.baselines.PerFlowPriority`): the ranking, the strict-priority
greedy and the next overtaking, kept incrementally between events.

A flow's key ``remaining − rate·τ`` changes between events only while it sends, and at most
one flow per port is sending (each positive greedy rate saturates a port), so the flows at
rate 0 keep their keys: they stay in a sorted array (``S``, with dead entries marked, plus a
small sorted insertion buffer ``B`` merged into it now and then), and only the sending flows
(the dynamic set ``D``) are re-keyed and re-sorted at every event. The greedy walks the merge
of the three in rank order, which is the order of a full sort of the active flows, and stops
once no unsaturated ingress or no unsaturated egress has a flow left to visit (every later
flow would get rate 0). The walk also records, for each flow that gets a rate, the flow ranked
just ahead of it at each of its ports, which are the adjacent pairs the overtaking wake-up
watches.

The policy mirrors the simulator's bookkeeping of bytes sent (``base_sent`` at ``base_t``,
updated only when a rate changes, :mod:`coflowlab.flow_state`), so the remaining bytes, keys
and rates are the same floating-point numbers a full re-sort at every event computes.
:mod:`coflowlab.heuristics.baselines` documents the policy; this module only holds the loops,
compiled with numba on first use (and cached on disk between runs).
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np

__all__ = ["kernels"]

# flow status
INACTIVE = 0
STATIC = 1  # active at rate 0: in S or B, key fixed
DYNAMIC = 2  # active and sending: in D, re-keyed at every event


@cache
def kernels() -> dict[str, Any]:
    """Compiles the numba kernels on first use (cached on disk between runs)."""
    from numba import njit

    @njit(cache=True, inline="always")
    def before(ka, fa, kb, fb, tb1, tb2, tb3):  # pragma: no cover - numba
        # rank order: key, then the tie-break columns (lexsort order; tb3 is unique)
        if ka != kb:
            return ka < kb
        if tb1[fa] != tb1[fb]:
            return tb1[fa] < tb1[fb]
        if tb2[fa] != tb2[fb]:
            return tb2[fa] < tb2[fb]
        return tb3[fa] < tb3[fb]

    @njit(cache=True)
    def sort_flows(flows, key, tb1, tb2, tb3):  # pragma: no cover - numba
        # stable bottom-up merge sort of flow indices by rank
        n = flows.shape[0]
        a = flows.copy()
        b = np.empty_like(a)
        width = 1
        while width < n:
            lo = 0
            while lo < n:
                mid = min(lo + width, n)
                hi = min(lo + 2 * width, n)
                i, j, k = lo, mid, lo
                while i < mid and j < hi:
                    if before(key[a[j]], a[j], key[a[i]], a[i], tb1, tb2, tb3):
                        b[k] = a[j]
                        j += 1
                    else:
                        b[k] = a[i]
                        i += 1
                    k += 1
                while i < mid:
                    b[k] = a[i]
                    i += 1
                    k += 1
                while j < hi:
                    b[k] = a[j]
                    j += 1
                    k += 1
                lo = hi
            a, b = b, a
            width *= 2
        return a

    @njit(cache=True)
    def rebuild(
        st, sflow, skey, salive, ssrc, sdst, bflow, bkey, bgen, gen, spos, src, dst, tb1, tb2, tb3
    ):  # pragma: no cover - numba
        # merges the live entries of S and B into S; empties B. st = [nS, nB, deadS]
        ns, nb = st[0], st[1]
        out_f = np.empty(ns - st[2] + nb, dtype=np.int64)
        out_k = np.empty(ns - st[2] + nb)
        n = 0
        i = 0
        j = 0
        while True:
            while i < ns and not salive[i]:
                i += 1
            while j < nb and bgen[j] != gen[bflow[j]]:
                j += 1
            if i >= ns and j >= nb:
                break
            if j >= nb or (
                i < ns and not before(bkey[j], bflow[j], skey[i], sflow[i], tb1, tb2, tb3)
            ):
                out_f[n] = sflow[i]
                out_k[n] = skey[i]
                i += 1
            else:
                out_f[n] = bflow[j]
                out_k[n] = bkey[j]
                j += 1
            n += 1
        for i in range(n):
            f = out_f[i]
            sflow[i] = f
            skey[i] = out_k[i]
            salive[i] = True
            ssrc[i] = src[f]
            sdst[i] = dst[f]
            spos[f] = i
        st[0] = n
        st[1] = 0
        st[2] = 0

    @njit(cache=True)
    def buffer_insert(st, bflow, bkey, bgen, gen, f, k, tb1, tb2, tb3):  # pragma: no cover
        # inserts f (key k) into the sorted buffer B
        nb = st[1]
        lo, hi = 0, nb
        while lo < hi:
            mid = (lo + hi) // 2
            if before(bkey[mid], bflow[mid], k, f, tb1, tb2, tb3):
                lo = mid + 1
            else:
                hi = mid
        for j in range(nb, lo, -1):
            bflow[j] = bflow[j - 1]
            bkey[j] = bkey[j - 1]
            bgen[j] = bgen[j - 1]
        bflow[lo] = f
        bkey[lo] = k
        bgen[lo] = gen[f]
        st[1] = nb + 1

    @njit(cache=True)
    def step(
        t,
        tau,
        arrived,
        completed,
        exact,
        bmax,
        src,
        dst,
        size,
        tb1,
        tb2,
        tb3,
        cap_in,
        cap_out,
        status,
        key,
        rem,
        rate,
        base_sent,
        base_t,
        gen,
        spos,
        st,
        sflow,
        skey,
        salive,
        ssrc,
        sdst,
        bflow,
        bkey,
        bgen,
        dyn,
        cnt_in,
        cnt_out,
        xnew,
    ):  # pragma: no cover - numba
        # One event. st = [nS, nB, deadS, nD]. Returns the flows whose rate changes, their
        # new rates (in increasing flow order) and the time to the next overtaking (inf: none).
        m_in = cap_in.shape[0]
        m_out = cap_out.shape[0]
        # 1. completions leave (only sending flows complete, but any active flow may go)
        for f in completed:
            if status[f] == DYNAMIC:
                nd = st[3]
                for q in range(nd):
                    if dyn[q] == f:
                        for r in range(q, nd - 1):
                            dyn[r] = dyn[r + 1]
                        st[3] = nd - 1
                        break
            elif status[f] == STATIC:
                gen[f] += 1  # drops its buffer entry, if any
                if spos[f] >= 0:
                    salive[spos[f]] = False
                    st[2] += 1
            if status[f] != INACTIVE:
                cnt_in[src[f]] -= 1
                cnt_out[dst[f]] -= 1
            status[f] = INACTIVE
            rate[f] = 0.0
            spos[f] = -1
        # 2. arrivals join the rate-0 flows, keyed by their size
        for f in arrived:
            status[f] = STATIC
            rate[f] = 0.0
            base_sent[f] = 0.0
            base_t[f] = t
            rem[f] = size[f] - (base_sent[f] + rate[f] * (t - base_t[f]))
            key[f] = rem[f] - rate[f] * tau
            gen[f] += 1
            spos[f] = -1
            cnt_in[src[f]] += 1
            cnt_out[dst[f]] += 1
        if arrived.shape[0] > 0:
            if st[1] + arrived.shape[0] > bmax:
                batch = sort_flows(arrived, key, tb1, tb2, tb3)
                # B <- merge(B, batch), then into S
                nb = st[1]
                tf = np.empty(nb + batch.shape[0], dtype=np.int64)
                tk = np.empty(nb + batch.shape[0])
                tg = np.empty(nb + batch.shape[0], dtype=np.int64)
                i = 0
                j = 0
                n = 0
                while i < nb or j < batch.shape[0]:
                    if j >= batch.shape[0] or (
                        i < nb
                        and not before(key[batch[j]], batch[j], bkey[i], bflow[i], tb1, tb2, tb3)
                    ):
                        tf[n] = bflow[i]
                        tk[n] = bkey[i]
                        tg[n] = bgen[i]
                        i += 1
                    else:
                        g = batch[j]
                        tf[n] = g
                        tk[n] = key[g]
                        tg[n] = gen[g]
                        j += 1
                    n += 1
                bflow[:n] = tf
                bkey[:n] = tk
                bgen[:n] = tg
                st[1] = n
                rebuild(
                    st,
                    sflow,
                    skey,
                    salive,
                    ssrc,
                    sdst,
                    bflow,
                    bkey,
                    bgen,
                    gen,
                    spos,
                    src,
                    dst,
                    tb1,
                    tb2,
                    tb3,
                )
            else:
                for f in arrived:
                    buffer_insert(st, bflow, bkey, bgen, gen, f, key[f], tb1, tb2, tb3)
        # 3. the sending flows are re-keyed and re-sorted (insertion sort: nearly sorted)
        nd = st[3]
        for q in range(nd):
            f = dyn[q]
            rem[f] = size[f] - (base_sent[f] + rate[f] * (t - base_t[f]))
            key[f] = rem[f] - rate[f] * tau
        for q in range(1, nd):
            f = dyn[q]
            r = q
            while r > 0 and before(key[f], f, key[dyn[r - 1]], dyn[r - 1], tb1, tb2, tb3):
                dyn[r] = dyn[r - 1]
                r -= 1
            dyn[r] = f
        # 4. the greedy walk over merge(S, B, D) in rank order, until every ingress or every
        # egress is saturated (each later flow would get rate 0)
        res_in = cap_in.copy()
        res_out = cap_out.copy()
        open_in = 0
        for p in range(m_in):
            if res_in[p] > 0.0:
                open_in += 1
        open_out = 0
        for p in range(m_out):
            if res_out[p] > 0.0:
                open_out += 1
        last_in = np.full(m_in, -1, dtype=np.int64)
        last_out = np.full(m_out, -1, dtype=np.int64)
        npos_max = m_in + m_out + 1
        pos_f = np.empty(npos_max, dtype=np.int64)
        pos_x = np.empty(npos_max)
        pred_in = np.empty(npos_max, dtype=np.int64)
        pred_out = np.empty(npos_max, dtype=np.int64)
        npos = 0
        ns = st[0]
        nb = st[1]
        i = 0
        j = 0
        q = 0
        # the better of the heads of B and D (osrc 1 = B, 2 = D, 0 = both empty)
        osrc = 0
        of = -1
        ok = 0.0
        refresh = True
        while open_in > 0 and open_out > 0:
            if refresh:
                while j < nb and (status[bflow[j]] != STATIC or bgen[j] != gen[bflow[j]]):
                    j += 1
                osrc = 0
                if j < nb:
                    osrc = 1
                    of = bflow[j]
                    ok = bkey[j]
                if q < nd:
                    g = dyn[q]
                    if osrc == 0 or before(key[g], g, ok, of, tb1, tb2, tb3):
                        osrc = 2
                        of = g
                        ok = key[g]
                refresh = False
            while i < ns and not salive[i]:
                i += 1
            if i < ns and (
                osrc == 0
                or skey[i] < ok
                or (skey[i] == ok and before(skey[i], sflow[i], ok, of, tb1, tb2, tb3))
            ):
                f = sflow[i]
                s = ssrc[i]
                d = sdst[i]
                i += 1
            elif osrc != 0:
                f = of
                s = src[f]
                d = dst[f]
                if osrc == 1:
                    j += 1
                else:
                    q += 1
                refresh = True
            else:
                break
            # the greedy's turn (as coflowlab.allocation.priority_greedy)
            x = res_in[s]
            if res_out[d] < x:
                x = res_out[d]
            if x > 0.0:
                pos_f[npos] = f
                pos_x[npos] = x
                pred_in[npos] = last_in[s]
                pred_out[npos] = last_out[d]
                npos += 1
                res_in[s] -= x
                res_out[d] -= x
                if res_in[s] == 0.0:
                    open_in -= 1
                if res_out[d] == 0.0:
                    open_out -= 1
            last_in[s] = f
            last_out[d] = f
        # 5. new rates: the walk's positive ones; every other sending flow stops
        old_dyn = dyn[:nd].copy()
        out_f = np.empty(npos + nd, dtype=np.int64)
        out_r = np.empty(npos + nd)
        nout = 0
        # rates before this decision of the flows ahead (for the wake-up), read before change
        soonest = np.inf
        if exact:
            # port loads summed in increasing flow order (as np.bincount does)
            for w in range(npos):
                xnew[pos_f[w]] = pos_x[w]
            byf = np.argsort(pos_f[:npos])
            load_in = np.zeros(m_in)
            load_out = np.zeros(m_out)
            for r in range(npos):
                w = byf[r]
                load_in[src[pos_f[w]]] += pos_x[w]
                load_out[dst[pos_f[w]]] += pos_x[w]
            for w in range(npos):
                b = pos_f[w]
                xb = pos_x[w]
                for side in range(2):
                    if side == 0:
                        p = src[b]
                        a = pred_in[w]
                        if not load_in[p] >= cap_in[p] * (1 - 1e-9):
                            continue
                    else:
                        p = dst[b]
                        a = pred_out[w]
                        if not load_out[p] >= cap_out[p] * (1 - 1e-9):
                            continue
                    if a < 0:
                        continue
                    xa = xnew[a]
                    if xb > xa:
                        gap = (rem[b] - rem[a]) / (xb - xa)
                        if gap < soonest:
                            soonest = gap
            for w in range(npos):
                xnew[pos_f[w]] = 0.0
        for w in range(npos):
            f = pos_f[w]
            x = pos_x[w]
            if status[f] == STATIC:
                gen[f] += 1  # drops its buffer entry, if any
                if spos[f] >= 0:
                    salive[spos[f]] = False
                    st[2] += 1
                    spos[f] = -1
                status[f] = DYNAMIC
            status[f] = -DYNAMIC  # marks "keeps sending" until the loop below
            if x != rate[f]:
                base_sent[f] = base_sent[f] + rate[f] * (t - base_t[f])
                base_t[f] = t
                rate[f] = x
                out_f[nout] = f
                out_r[nout] = x
                nout += 1
        for q in range(nd):
            f = old_dyn[q]
            if status[f] == -DYNAMIC:
                continue
            # stops: its key is fixed from now on (remaining bytes at t)
            base_sent[f] = base_sent[f] + rate[f] * (t - base_t[f])
            base_t[f] = t
            rate[f] = 0.0
            rem[f] = size[f] - (base_sent[f] + rate[f] * (t - base_t[f]))
            key[f] = rem[f] - rate[f] * tau
            status[f] = STATIC
            gen[f] += 1
            spos[f] = -1
            if st[1] >= bmax:
                rebuild(
                    st,
                    sflow,
                    skey,
                    salive,
                    ssrc,
                    sdst,
                    bflow,
                    bkey,
                    bgen,
                    gen,
                    spos,
                    src,
                    dst,
                    tb1,
                    tb2,
                    tb3,
                )
            buffer_insert(st, bflow, bkey, bgen, gen, f, key[f], tb1, tb2, tb3)
            out_f[nout] = f
            out_r[nout] = 0.0
            nout += 1
        # the new dynamic set, in this event's rank order
        for w in range(npos):
            f = pos_f[w]
            status[f] = DYNAMIC
            dyn[w] = f
        st[3] = npos
        if st[2] > 4 * bmax and 4 * st[2] > st[0]:
            rebuild(
                st,
                sflow,
                skey,
                salive,
                ssrc,
                sdst,
                bflow,
                bkey,
                bgen,
                gen,
                spos,
                src,
                dst,
                tb1,
                tb2,
                tb3,
            )
        o = np.argsort(out_f[:nout])
        return out_f[:nout][o], out_r[:nout][o], soonest

    return {"step": step, "sort_flows": sort_flows}
