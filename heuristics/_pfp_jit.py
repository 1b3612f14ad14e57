"""Numba kernels of coflowlab.heuristics.pfp_kernels (documented there), at module level: numba's
disk cache finds a kernel again in a new process only when the kernels it calls are module
globals, not closures."""

from __future__ import annotations

import numpy as np
from numba import njit

from .pfp_kernels import DYNAMIC, INACTIVE, STATIC


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
        if j >= nb or (i < ns and not before(bkey[j], bflow[j], skey[i], sflow[i], tb1, tb2, tb3)):
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


# ------------------------------------------------------------------ equal capacities
# Ports are numbered ingress 0..m_in-1, then egress m_in..m_in+m_out-1. The active flows
# of pair pr (one ingress, one egress) are parr[poff[pr] : poff[pr] + pcnt[pr]], latest
# rank first, so the pair's head (its best-ranked flow, the only one the greedy can
# serve) is the last entry. The pairs at port p have the slots ptr[p] : ptr[p + 1]:
# each pair has two, its ingress slot, which is pr itself (the ingress ports' slots are
# 0..npairs-1), and its egress slot pepos[pr].
#
# The heads are cached by slot (phead, phkey), so that the loop over a port's pairs
# (scan) reads two contiguous arrays rather than one scattered entry per pair; both
# slots are written at every change. An empty pair's cached key is +inf, so a key
# comparison alone skips it. pother[k] is the other port of the pair in slot k (a
# constant). pkey[i] is the key of flow parr[i], kept next to the pair lists so that
# their searches read one contiguous array and the flows' tie-break columns only on
# equal keys.


@njit(cache=True, inline="always")
def ahead(a, b, key, tb1, tb2, tb3):  # pragma: no cover - numba
    # flow a ranks before flow b
    return before(key[a], a, key[b], b, tb1, tb2, tb3)


@njit(cache=True)
def tie_before(a, b, tb1, tb2, tb3):  # pragma: no cover - numba
    # flow a ranks before flow b, given that their keys are equal (before's tie-break)
    if tb1[a] != tb1[b]:
        return tb1[a] < tb1[b]
    if tb2[a] != tb2[b]:
        return tb2[a] < tb2[b]
    return tb3[a] < tb3[b]


@njit(cache=True, inline="always")
def pair_head(pr, poff, pcnt, parr):  # pragma: no cover - numba
    n = pcnt[pr]
    if n == 0:
        return -1
    return parr[poff[pr] + n - 1]


@njit(cache=True, inline="always")
def head_cached(pr, poff, pcnt, parr, key, phead, phkey, pepos):  # pragma: no cover - numba
    # refreshes the pair's cached head and its key at both its slots (small arrays that
    # stay in cache, where the flows' entries are scattered)
    h = pair_head(pr, poff, pcnt, parr)
    e = pepos[pr]
    phead[pr] = h
    phead[e] = h
    hk = key[h] if h >= 0 else np.inf
    phkey[pr] = hk
    phkey[e] = hk


@njit(cache=True)
def pair_insert(
    pr, f, poff, pcnt, parr, pkey, key, tb1, tb2, tb3, phead, phkey, pepos
):  # pragma: no cover - numba
    # inserts f into its pair's list; returns whether it is the new head
    base = poff[pr]
    n = pcnt[pr]
    kf = key[f]
    lo, hi = 0, n
    while lo < hi:  # first entry ranked before f (before() on the stored key)
        mid = (lo + hi) // 2
        km = pkey[base + mid]
        if km < kf or (km == kf and tie_before(parr[base + mid], f, tb1, tb2, tb3)):
            hi = mid
        else:
            lo = mid + 1
    for j in range(base + n, base + lo, -1):
        parr[j] = parr[j - 1]
        pkey[j] = pkey[j - 1]
    parr[base + lo] = f
    pkey[base + lo] = kf
    pcnt[pr] = n + 1
    head_cached(pr, poff, pcnt, parr, key, phead, phkey, pepos)
    return lo == n


@njit(cache=True)
def pair_remove(
    pr, f, poff, pcnt, parr, pkey, key, phead, phkey, pepos
):  # pragma: no cover - numba
    # removes f (usually the head, so searched from the end)
    base = poff[pr]
    n = pcnt[pr]
    j = base + n - 1
    while parr[j] != f:
        j -= 1
    for r in range(j, base + n - 1):
        parr[r] = parr[r + 1]
        pkey[r] = pkey[r + 1]
    pcnt[pr] = n - 1
    head_cached(pr, poff, pcnt, parr, key, phead, phkey, pepos)


SCAN_TOP = 8
"""How many candidates a scan of a port keeps, best first, for the scans of the same port
that continue from one of them within the same repair sweep (:func:`scan`)."""


@njit(cache=True)
def scan(
    p, frm, ptr, phead, phkey, pother, hold, key, tb1, tb2, tb3, top, ntop, at
):  # pragma: no cover - numba
    # the best-ranked pair head at the free port p, ranked after frm (-1: anywhere), whose
    # other port is not held by a flow ranked ahead of it; -1 if none. Heads whose other
    # port is held ahead of them stay blocked whatever happens at p, so they are skipped
    # here rather than one by one in the sweep; if their blocker is evicted, the scan of
    # the port that frees (their other port) finds them.
    #
    # Within one sweep a port is mostly scanned again from the candidate it returned last
    # (that candidate turned out blocked and passes the port on: on the Facebook trace 98 %
    # of those scans). So a scan keeps the slots of the SCAN_TOP best candidates after frm,
    # best first (top[p, :ntop[p]]; at[p]: the one returned), and a scan from the one
    # returned continues in that list, checking again whether each is blocked now; past
    # its end (if it was full) it scans the port from its last entry. Heads and keys do not
    # change during the sweep, only the holders, which are read at every check.
    n = ntop[p]
    if n > 0 and frm >= 0 and phead[top[p, at[p]]] == frm:
        for i in range(at[p] + 1, n):
            k = top[p, i]
            h = phead[k]
            o = hold[pother[k]]
            if o >= 0 and o != h and before(key[o], o, phkey[k], h, tb1, tb2, tb3):
                continue
            at[p] = i
            return h
        if n < SCAN_TOP:
            at[p] = n - 1
            return -1  # nothing else at p was a candidate
        frm = phead[top[p, n - 1]]
    # the scan: the slot cache holds each pair's head and key in the port's own order (a
    # port has about as many pairs as there are ports, and reading each head's key from
    # the flows' arrays would cost a cache miss per pair); keys decide every comparison
    # unless they are equal, and only then are the tie-break columns read
    fk = key[frm] if frm >= 0 else -np.inf
    n = 0
    for k in range(ptr[p], ptr[p + 1]):
        hk = phkey[k]
        if hk < fk or not hk < np.inf:
            continue  # ranked before frm, or an empty pair (a head's key is finite)
        h = phead[k]
        if frm >= 0 and hk == fk and not tie_before(frm, h, tb1, tb2, tb3):
            continue
        if n == SCAN_TOP:
            last = top[p, n - 1]
            if not before(hk, h, phkey[last], phead[last], tb1, tb2, tb3):
                continue
        o = hold[pother[k]]
        if o >= 0 and o != h and before(key[o], o, hk, h, tb1, tb2, tb3):
            continue
        # insert, best first, keeping at most SCAN_TOP
        j = min(n, SCAN_TOP - 1)
        while j > 0 and before(hk, h, phkey[top[p, j - 1]], phead[top[p, j - 1]], tb1, tb2, tb3):
            top[p, j] = top[p, j - 1]
            j -= 1
        top[p, j] = k
        if n < SCAN_TOP:
            n += 1
    ntop[p] = n
    at[p] = 0
    return phead[top[p, 0]] if n > 0 else -1


@njit(cache=True)
def heap_push(hp, hpk, nh, e, nv, key, tb1, tb2, tb3):  # pragma: no cover - numba
    # binary min-heap of entries e = flow·nv + via, in the flows' rank order, with each
    # entry's key alongside (hpk), so that a comparison reads the flows only on equal
    # keys; returns the (possibly grown) arrays. The stored key is the flow's key while
    # the heap is in use: only the holders are re-keyed (step 2 of match_step), and the
    # flows pushed before that are new pair heads, which hold nothing.
    if nh >= hp.shape[0]:
        grown = np.empty(2 * hp.shape[0], dtype=np.int64)
        grown[:nh] = hp[:nh]
        hp = grown
        grownk = np.empty(2 * hpk.shape[0])
        grownk[:nh] = hpk[:nh]
        hpk = grownk
    f = e // nv
    kf = key[f]
    i = nh
    while i > 0:
        up = (i - 1) // 2
        ku = hpk[up]
        # f ranks before the entry above (before() on the stored keys)
        if not (kf < ku or (kf == ku and tie_before(f, hp[up] // nv, tb1, tb2, tb3))):
            break
        hp[i] = hp[up]
        hpk[i] = ku
        i = up
    hp[i] = e
    hpk[i] = kf
    return hp, hpk


@njit(cache=True)
def heap_pop(hp, hpk, nh, nv, tb1, tb2, tb3):  # pragma: no cover - numba
    # removes and returns the entry of the best-ranked flow (nh: size before the pop)
    top = hp[0]
    last = hp[nh - 1]
    lk = hpk[nh - 1]
    n = nh - 1
    i = 0
    while True:
        c = 2 * i + 1
        if c >= n:
            break
        if c + 1 < n:
            k1 = hpk[c + 1]
            k0 = hpk[c]
            if k1 < k0 or (k1 == k0 and tie_before(hp[c + 1] // nv, hp[c] // nv, tb1, tb2, tb3)):
                c += 1
        kc = hpk[c]
        if not (kc < lk or (kc == lk and tie_before(hp[c] // nv, last // nv, tb1, tb2, tb3))):
            break
        hp[i] = hp[c]
        hpk[i] = kc
        i = c
    if n > 0:
        hp[i] = last
        hpk[i] = lk
    return top


@njit(cache=True)
def match_step(
    t,
    tau,
    arrived,
    completed,
    cap,
    m_in,
    src,
    dst,
    size,
    tb1,
    tb2,
    tb3,
    status,
    key,
    rem,
    rate,
    base_sent,
    base_t,
    pair_of,
    poff,
    pcnt,
    parr,
    ptr,
    hold,
    mark,
    phead,
    phkey,
    pepos,
    pother,
    pkey,
):  # pragma: no cover - numba
    # One event with every port capacity equal to cap. The greedy then gives cap to a
    # flow whose two ports are free and 0 otherwise: a greedy matching in rank order,
    # kept in hold (the flow holding each port, -1: none) and repaired here. Returns the
    # flows whose rate changes and their new rates, in increasing flow order. No wake-up:
    # between events only the holders' keys move, and only up the ranking, which keeps
    # the greedy's matching (PerFlowPriority's Notes), so an overtaking changes no rate.
    m = hold.shape[0]
    nv = m + 1  # heap entries: flow·nv + 1 + the free port whose scan found it (0: none)
    hp = np.empty(64, dtype=np.int64)
    hpk = np.empty(64)  # the keys of the heap's entries
    nh = 0
    touched = np.empty(64, dtype=np.int64)  # flows whose holding may have changed
    nt = 0
    freed = np.empty(2 * (completed.shape[0] + arrived.shape[0]) + 1, dtype=np.int64)
    nfr = 0
    # 1. completions leave; their ports are free, their pair's next flow is its new head
    for f in completed:
        if status[f] == INACTIVE:
            continue
        pr = pair_of[f]
        was_head = phead[pr] == f
        pair_remove(pr, f, poff, pcnt, parr, pkey, key, phead, phkey, pepos)
        for p in (src[f], m_in + dst[f]):
            if hold[p] == f:
                hold[p] = -1
                freed[nfr] = p
                nfr += 1
        status[f] = INACTIVE
        rate[f] = 0.0
        if was_head and pcnt[pr] > 0:
            g = phead[pr]
            hp, hpk = heap_push(hp, hpk, nh, g * nv, nv, key, tb1, tb2, tb3)
            nh += 1
    # 2. the sending flows (the holders) are re-keyed: they move up the ranking, which
    # keeps the matching (the new ranking decides this event's repair)
    for p in range(m_in):
        f = hold[p]
        if f < 0:
            continue
        rem[f] = size[f] - (base_sent[f] + rate[f] * (t - base_t[f]))
        key[f] = rem[f] - rate[f] * tau
        pr = pair_of[f]
        # its entry in the pair list: the last one (a holder is its pair's head, which the
        # slot cache tells without reading the list), else searched for
        last = poff[pr] + pcnt[pr] - 1
        if phead[pr] == f:
            pkey[last] = key[f]
            phkey[pr] = key[f]
            phkey[pepos[pr]] = key[f]
        else:
            j = last
            while parr[j] != f:
                j -= 1
            pkey[j] = key[f]
    # 3. arrivals join their pairs; a new head is a candidate. One ranked ahead of its
    # pair's holding head frees the holder's two ports, which are scanned once every
    # arrival has joined (a later arrival may become the pair's head in turn)
    for f in arrived:
        status[f] = STATIC
        rate[f] = 0.0
        base_sent[f] = 0.0
        base_t[f] = t
        rem[f] = size[f] - (base_sent[f] + rate[f] * (t - base_t[f]))
        key[f] = rem[f] - rate[f] * tau
        pr = pair_of[f]
        old = phead[pr]
        if pair_insert(pr, f, poff, pcnt, parr, pkey, key, tb1, tb2, tb3, phead, phkey, pepos):
            if old >= 0 and hold[src[f]] == old:
                for p in (src[f], m_in + dst[f]):
                    hold[p] = -1
                    freed[nfr] = p
                    nfr += 1
                if nt >= touched.shape[0]:
                    touched = np.concatenate((touched, np.empty_like(touched)))
                touched[nt] = old
                nt += 1
            else:
                hp, hpk = heap_push(hp, hpk, nh, f * nv, nv, key, tb1, tb2, tb3)
                nh += 1
    # each port's candidates for this sweep (scan), allocated only if a scan may come
    top = np.empty((0, SCAN_TOP), dtype=np.int64)
    ntop = np.empty(0, dtype=np.int64)
    at = ntop
    if nfr > 0 or nh > 0:
        top = np.empty((m, SCAN_TOP), dtype=np.int64)
        ntop = np.zeros(m, dtype=np.int64)
        at = np.zeros(m, dtype=np.int64)
    for w in range(nfr):
        p = freed[w]
        g = scan(p, -1, ptr, phead, phkey, pother, hold, key, tb1, tb2, tb3, top, ntop, at)
        if g >= 0:
            hp, hpk = heap_push(hp, hpk, nh, g * nv + 1 + p, nv, key, tb1, tb2, tb3)
            nh += 1
    # 4. the repair sweep, in rank order. Every entry pushed ranks after the one being
    # considered, so the holders ranked ahead of it are final. A head whose ports are not
    # held ahead of it takes them, evicting their later holders, whose other port is then
    # free from their rank on (a scan finds the next candidate there); a blocked head
    # found at a port that is still free passes the port on to the next candidate.
    last = -1
    while nh > 0:
        e = heap_pop(hp, hpk, nh, nv, tb1, tb2, tb3)
        nh -= 1
        if e == last:
            continue
        last = e
        h = e // nv
        via = e % nv - 1
        if status[h] == INACTIVE or phead[pair_of[h]] != h:
            continue
        ps = src[h]
        pd = m_in + dst[h]
        hs = hold[ps]
        hd = hold[pd]
        if hs == h:
            continue  # holds its ports already
        if (hs >= 0 and ahead(hs, h, key, tb1, tb2, tb3)) or (
            hd >= 0 and ahead(hd, h, key, tb1, tb2, tb3)
        ):
            if via >= 0 and hold[via] < 0:
                g = scan(
                    via, h, ptr, phead, phkey, pother, hold, key, tb1, tb2, tb3, top, ntop, at
                )
                if g >= 0:
                    hp, hpk = heap_push(hp, hpk, nh, g * nv + 1 + via, nv, key, tb1, tb2, tb3)
                    nh += 1
            continue
        hold[ps] = h
        hold[pd] = h
        if nt + 3 > touched.shape[0]:
            touched = np.concatenate((touched, np.empty_like(touched)))
        touched[nt] = h
        nt += 1
        for k in range(2):
            g = hs if k == 0 else hd
            if g < 0:
                continue
            q = m_in + dst[g] if k == 0 else src[g]  # the evicted flow's other port
            hold[q] = -1
            touched[nt] = g
            nt += 1
            g2 = scan(q, g, ptr, phead, phkey, pother, hold, key, tb1, tb2, tb3, top, ntop, at)
            if g2 >= 0:
                hp, hpk = heap_push(hp, hpk, nh, g2 * nv + 1 + q, nv, key, tb1, tb2, tb3)
                nh += 1
    # 5. the new rates; a flow that stops gets its fixed key, hence its place in its pair
    out_f = np.empty(nt, dtype=np.int64)
    out_r = np.empty(nt)
    nout = 0
    for w in range(nt):
        f = touched[w]
        if mark[f]:
            continue
        mark[f] = True
        holds = hold[src[f]] == f
        if holds == (rate[f] > 0.0):
            continue
        base_sent[f] = base_sent[f] + rate[f] * (t - base_t[f])
        base_t[f] = t
        if holds:
            rate[f] = cap
            status[f] = DYNAMIC
        else:
            rate[f] = 0.0
            status[f] = STATIC
            rem[f] = size[f] - (base_sent[f] + rate[f] * (t - base_t[f]))
            key[f] = rem[f] - rate[f] * tau
            pr = pair_of[f]
            pair_remove(pr, f, poff, pcnt, parr, pkey, key, phead, phkey, pepos)
            pair_insert(pr, f, poff, pcnt, parr, pkey, key, tb1, tb2, tb3, phead, phkey, pepos)
        out_f[nout] = f
        out_r[nout] = rate[f]
        nout += 1
    for w in range(nt):
        mark[touched[w]] = False
    if nout <= 1:  # nothing to sort
        return out_f[:nout], out_r[:nout]
    o = np.argsort(out_f[:nout])
    return out_f[:nout][o], out_r[:nout][o]
