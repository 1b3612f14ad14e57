"""Numba kernels of coflowlab.heuristics.dclas_kernels (documented there), at module level: numba's
disk cache finds a kernel again in a new process only when the kernels it calls are module
globals, not closures."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit


class G0(NamedTuple):
    """FIFO-LM's group 0 (the multiplexed class) per port pair, kept between events for
    :func:`g0_fill`; ``on=False`` (arrays unused): the per-flow computation only."""

    on: bool
    m: int
    cnt: np.ndarray  # alive flows of group 0 per (ingress a, egress b): [a * m + b]
    first: np.ndarray  # per port (2m): the least alive flow of group 0 there (nf: none)
    pfl_ptr: np.ndarray  # per port: its flows in index order, pfl[pfl_ptr[p]:pfl_ptr[p + 1]]
    pfl: np.ndarray
    pfl_pos: np.ndarray  # f's position in pfl: ingress side [f], egress side [nf + f]
    cls_ptr: np.ndarray  # per (a, b): its flows, cls_flows[cls_ptr[key]:cls_ptr[key + 1]],
    cls_flows: np.ndarray  # those of group 0 first (cnt[key] of them, in no order)
    cls_pos: np.ndarray  # f's position in cls_flows
    cls_rate: np.ndarray  # the rate group 0 last gave the pair's flows
    joined: np.ndarray  # flows that joined group 0 since its last computation
    njoined: np.ndarray  # [count, overflowed]
    stamp: np.ndarray  # scratch, all False between calls


@njit(cache=True, inline="always")
def progressive_fill(
    idx,
    lo,
    hi,
    fixed,
    pa,
    pb,
    plist,
    nports,
    pcnt,
    pstart,
    pfill,
    members,
    rcap,
    level,
    used,
    rate,
    left,
):  # pragma: no cover - numba
    # Max-min fair increments of the unfixed flows idx[lo:hi] within the port capacities
    # rcap of the nports ports in plist (whose flow counts pcnt are set): the one progressive
    # filling both `allocate` and `fill_group` run (the same operations, so the same bits).
    run = 0
    for i in range(nports):
        p = plist[i]
        pstart[p] = run
        pfill[p] = run
        run += pcnt[p]
        level[p] = rcap[p] / pcnt[p]
        used[p] = 0.0
    for t in range(lo, hi):
        if fixed[t]:
            continue
        j = idx[t]
        members[pfill[pa[j]]] = t
        pfill[pa[j]] += 1
        members[pfill[pb[j]]] = t
        pfill[pb[j]] += 1
    # progressive filling: the port with the lowest fair level fixes its flows.
    # Levels are kept per port and exhausted ports move behind `live_ports`, so a
    # step scans only the ports still in play.
    live_ports = nports
    while left > 0:
        best = np.inf
        bp = -1
        i = 0
        while i < live_ports:
            p = plist[i]
            if pcnt[p] == 0:
                live_ports -= 1
                plist[i] = plist[live_ports]
                plist[live_ports] = p
                continue
            if level[p] < best:
                best = level[p]
                bp = p
            i += 1
        best = max(best, 0.0)
        k = 0
        for s in range(pstart[bp], pfill[bp]):
            t = members[s]
            if fixed[t]:
                continue
            fixed[t] = True
            k += 1
            j = idx[t]
            rate[j] += best
            o = pb[j] if pa[j] == bp else pa[j]
            rcap[o] -= best
            used[o] += best
            pcnt[o] -= 1
            if pcnt[o] > 0:
                level[o] = rcap[o] / pcnt[o]
        left -= k
        used[bp] += best * k
        pcnt[bp] = 0


@njit(cache=True)
def allocate(
    gstart, gsize, live, pa, pb, ka, kb, cap, weight, strict, max_rounds, rate
):  # pragma: no cover - numba
    # D-CLAS rounds of `dclas_allocation` (docs/aalo.md#pseudocode-4). Group g owns positions
    # gstart[g] .. gstart[g] + gsize[g] - 1 of the per-position arrays (those with `live`
    # set are flows): ports pa (ingress p) and pb (egress m + p), (queue, port) keys ka,
    # kb (= queue * 2m + port). Groups are served in index order, a group's flows in
    # position order. Writes the rates of the live positions into `rate`.
    np2 = cap.shape[0]
    m = np2 // 2
    nq = weight.shape[0]
    ng = gstart.shape[0]
    total = 0
    for g in range(ng):
        total += gsize[g]
    res = cap.copy()
    eps = 1e-12 * res
    total_cap = 0.0
    for p in range(np2):
        total_cap += res[p]
    # `act`: the flows that can still grow, in service order (gptr delimits each
    # group's). A flow at a saturated port never grows again, so each round (and the
    # final backfill) walks a shrinking list rather than every flow.
    act = np.empty(total, dtype=np.int64)
    gptr = np.empty(ng + 1, dtype=np.int64)
    na = 0
    for g in range(ng):
        gptr[g] = na
        for j in range(gstart[g], gstart[g] + gsize[g]):
            if not live[j]:
                continue
            rate[j] = 0.0
            if res[pa[j]] > eps[pa[j]] and res[pb[j]] > eps[pb[j]]:
                act[na] = j
                na += 1
    gptr[ng] = na
    ent = np.zeros(nq * np2)  # entitlement of queue q at port p: ent[q * np2 + p]
    seen = np.zeros(nq * np2, dtype=np.bool_)
    pools = np.empty(min(2 * na, nq * np2), dtype=np.int64)
    wsum = np.zeros(np2)
    top = np.full(np2, nq, dtype=np.int64)
    # scratch of the max-min inside one group
    pcnt = np.zeros(np2, dtype=np.int64)
    pstart = np.zeros(np2, dtype=np.int64)
    pfill = np.zeros(np2, dtype=np.int64)
    pool = np.zeros(np2, dtype=np.int64)
    rcap = np.zeros(np2)
    level = np.zeros(np2)
    used = np.zeros(np2)
    plist = np.empty(np2, dtype=np.int64)
    members = np.empty(2 * na, dtype=np.int64)
    fixed = np.zeros(na, dtype=np.bool_)
    for _ in range(max_rounds):
        if na == 0:
            break
        # 1. entitlements: each port's residual split among the queues that can grow there
        npools = 0
        for t in range(na):
            j = act[t]
            for k in range(2):
                key = ka[j] if k == 0 else kb[j]
                if not seen[key]:
                    seen[key] = True
                    pools[npools] = key
                    npools += 1
                    p = key % np2
                    q = key // np2
                    wsum[p] += weight[q]
                    if q < top[p]:
                        top[p] = q
        for i in range(npools):
            key = pools[i]
            p = key % np2
            q = key // np2
            if strict:
                ent[key] = res[p] if q == top[p] else 0.0
            else:
                ent[key] = res[p] * weight[q] / wsum[p]
        for i in range(npools):
            key = pools[i]
            p = key % np2
            seen[key] = False
            wsum[p] = 0.0
            top[p] = nq
        # 2. groups in order; max-min fair increments inside a group, within entitlements
        progress = 0.0
        for g in range(ng):
            lo = gptr[g]
            hi = gptr[g + 1]
            if lo == hi:
                continue
            # a flow whose pool is exhausted at one of its ports gets nothing this round;
            # progressive filling would fix it first, at level 0, without using capacity,
            # so leaving it out gives the same increments and skips most of the work for
            # coflows waiting behind others of their queue
            nports = 0
            left = 0
            for t in range(lo, hi):
                j = act[t]
                if ent[ka[j]] <= 0.0 or ent[kb[j]] <= 0.0:
                    fixed[t] = True
                    continue
                fixed[t] = False
                left += 1
                a = pa[j]
                b = pb[j]
                if pcnt[a] == 0:
                    plist[nports] = a
                    nports += 1
                    pool[a] = ka[j]
                pcnt[a] += 1
                if pcnt[b] == 0:
                    plist[nports] = b
                    nports += 1
                    pool[b] = kb[j]
                pcnt[b] += 1
            if left == 0:
                continue
            for i in range(nports):
                rcap[plist[i]] = ent[pool[plist[i]]]
            progressive_fill(
                act,
                lo,
                hi,
                fixed,
                pa,
                pb,
                plist,
                nports,
                pcnt,
                pstart,
                pfill,
                members,
                rcap,
                level,
                used,
                rate,
                left,
            )
            # what the group took, per port (its flows at a port share one pool)
            for i in range(nports):
                p = plist[i]
                x = used[p]
                if x > 0.0:
                    ent[pool[p]] -= x
                    res[p] -= x
                    if p < m:
                        progress += x
        # 3. flows at a saturated port are done (dropped from `act`, order kept); stop
        # when nothing can grow any more
        k = 0
        lo = gptr[0]
        for g in range(ng):
            hi = gptr[g + 1]
            gptr[g] = k
            for t in range(lo, hi):
                j = act[t]
                if res[pa[j]] > eps[pa[j]] and res[pb[j]] > eps[pb[j]]:
                    act[k] = j
                    k += 1
            lo = hi
        gptr[ng] = k
        na = k
        if progress <= 1e-12 * total_cap:
            break
    # work conservation: whatever is left goes greedily, in service order
    for t in range(na):
        j = act[t]
        x = min(res[pa[j]], res[pb[j]])
        if x > 0.0:
            rate[j] += x
            res[pa[j]] -= x
            res[pb[j]] -= x


@njit(cache=True)
def allocate_dense(
    order,
    row_ptr,
    col_ptr,
    cell_ptr,
    row_port,
    col_port,
    key_base,
    live,
    row_live,
    col_live,
    bf_ptr,
    bf_cell,
    bf_row,
    bf_col,
    cap,
    weight,
    max_rounds,
    rate,
    sparse,
    zero_cells,
    bf_rowmajor,
):  # pragma: no cover - numba
    # The rounds of `allocate`, for coflows stored as dense matrices (see _ActiveFlows):
    # coflow order[g] is served g-th, its flows by index in the final backfill. A flow can
    # grow while both its ports are unsaturated, so frozen flows need no state of their own;
    # inside a coflow each flow gets the level of whichever of its ports fills first, and
    # ports are the rows and columns of the coflow's matrix.
    #
    # `sparse` skips work whose outcome is known, with the same floating-point operations
    # in the same order (so the same bits as `sparse=False`, the reference):
    # - `rate` is zero outside `zero_cells` (the cells `collect_sparse` found positive at the
    #   previous call), so only those are cleared instead of every cell of every coflow;
    # - step 1 counts the flows that can grow at each port by subtraction (from the live
    #   counts) when that touches fewer cells;
    # - the final backfill of a coflow whose flows by index are its cells in row-major order
    #   (`bf_rowmajor`) walks only its cells at an unsaturated row and column that both
    #   hold a live flow, row by row, instead of all its flows (the reference skips the
    #   others without a change).
    np2 = cap.shape[0]
    nq = weight.shape[0]
    ng = order.shape[0]
    res = cap.copy()
    eps = 1e-12 * res
    total_cap = 0.0
    for p in range(np2):
        total_cap += res[p]
    # local row / column slots of the groups, in service order
    roff = np.empty(ng + 1, dtype=np.int64)
    coff = np.empty(ng + 1, dtype=np.int64)
    nr = 0
    nc = 0
    for g in range(ng):
        c = order[g]
        roff[g] = nr
        coff[g] = nc
        nr += row_ptr[c + 1] - row_ptr[c]
        nc += col_ptr[c + 1] - col_ptr[c]
        if not sparse:
            for k in range(cell_ptr[c], cell_ptr[c + 1]):
                rate[k] = 0.0
    if sparse:
        for k in zero_cells:
            rate[k] = 0.0
    roff[ng] = nr
    coff[ng] = nc
    ns = nr + nc
    # per slot (rows first, then columns): port, key, flags and water-filling state
    sport = np.empty(ns, dtype=np.int64)
    skey = np.empty(ns, dtype=np.int64)
    for g in range(ng):
        c = order[g]
        for i in range(row_ptr[c + 1] - row_ptr[c]):
            sport[roff[g] + i] = row_port[row_ptr[c] + i]
            skey[roff[g] + i] = key_base[c] + row_port[row_ptr[c] + i]
        for j in range(col_ptr[c + 1] - col_ptr[c]):
            sport[nr + coff[g] + j] = col_port[col_ptr[c] + j]
            skey[nr + coff[g] + j] = key_base[c] + col_port[col_ptr[c] + j]
    free = np.zeros(ns, dtype=np.bool_)  # port not saturated
    for s in range(ns):
        free[s] = res[sport[s]] > eps[sport[s]]
    part = np.zeros(ns, dtype=np.bool_)  # takes part in this group's filling
    cnt = np.zeros(ns, dtype=np.int64)
    rcap = np.zeros(ns)
    level = np.zeros(ns)
    used = np.zeros(ns)
    T = np.zeros(ns)
    done = np.zeros(ns, dtype=np.bool_)
    cand = np.empty(ns, dtype=np.int64)
    lst = np.empty(ns, dtype=np.int64)  # a group's columns (then rows) in play
    lst2 = np.empty(ns, dtype=np.int64)  # sparse: saturated live columns, free live rows
    rows_f = np.empty(ns, dtype=np.int64)  # and saturated live rows of a group
    rows_n = np.empty(ns, dtype=np.int64)
    ent = np.zeros(nq * np2)
    seen = np.zeros(nq * np2, dtype=np.bool_)
    pools = np.empty(nq * np2, dtype=np.int64)
    wsum = np.zeros(np2)
    for _ in range(max_rounds):
        # 1. flows that can grow: both ports unsaturated; pools = their (queue, port) pairs
        for s in range(ns):
            free[s] = res[sport[s]] > eps[sport[s]]
            cnt[s] = 0
        any_free = False
        for g in range(ng):
            c = order[g]
            M = row_ptr[c + 1] - row_ptr[c]
            R = col_ptr[c + 1] - col_ptr[c]
            r0 = roff[g]
            c0 = nr + coff[g]
            base = cell_ptr[c]
            nl = 0
            for j in range(R):
                if free[c0 + j] and col_live[col_ptr[c] + j] > 0:
                    lst[nl] = j
                    nl += 1
            if sparse:
                # the same counts, by subtraction when fewer live cells sit at saturated
                # ports than at free ones (integers: the order does not matter)
                nnc = 0
                for j in range(R):
                    if col_live[col_ptr[c] + j] > 0 and not free[c0 + j]:
                        lst2[nnc] = j
                        nnc += 1
                nfr = 0
                nnr = 0
                for i in range(M):
                    if row_live[row_ptr[c] + i] > 0:
                        if free[r0 + i]:
                            rows_f[nfr] = i
                            nfr += 1
                        else:
                            rows_n[nnr] = i
                            nnr += 1
                if nfr * nnc + nnr * nl < nfr * nl:
                    for q in range(nfr):
                        i = rows_f[q]
                        k0 = base + i * R
                        n = row_live[row_ptr[c] + i]
                        for p in range(nnc):
                            n -= live[k0 + lst2[p]]
                        cnt[r0 + i] = n
                    for p in range(nl):
                        j = lst[p]
                        cnt[c0 + j] = col_live[col_ptr[c] + j]
                    for q in range(nnr):
                        k0 = base + rows_n[q] * R
                        for p in range(nl):
                            j = lst[p]
                            cnt[c0 + j] -= live[k0 + j]
                else:
                    count_rows(live, cnt, base, R, r0, c0, rows_f, 0, nfr, lst, nl)
                continue
            all_free = nl == R
            for i in range(M):
                all_free &= free[r0 + i] > 0 or row_live[row_ptr[c] + i] == 0
            if all_free:
                # no saturated port: every active flow can grow (the first round, mostly)
                for i in range(M):
                    cnt[r0 + i] = row_live[row_ptr[c] + i]
                for j in range(R):
                    cnt[c0 + j] = col_live[col_ptr[c] + j]
                continue
            for i in range(M):
                if not free[r0 + i] or row_live[row_ptr[c] + i] == 0:
                    continue
                k0 = base + i * R
                n = 0
                for q in range(nl):
                    j = lst[q]
                    v = live[k0 + j]
                    n += v
                    cnt[c0 + j] += v
                cnt[r0 + i] = n
        npools = 0
        for s in range(ns):
            if cnt[s] > 0:
                any_free = True
                key = skey[s]
                if not seen[key]:
                    seen[key] = True
                    pools[npools] = key
                    npools += 1
                    wsum[key % np2] += weight[key // np2]
        if not any_free:
            break
        for i in range(npools):
            key = pools[i]
            p = key % np2
            ent[key] = res[p] * weight[key // np2] / wsum[p]
        for i in range(npools):
            key = pools[i]
            seen[key] = False
            wsum[key % np2] = 0.0
        # 2. groups in order: max-min fair increments within the entitlements
        progress = 0.0
        for g in range(ng):
            c = order[g]
            M = row_ptr[c + 1] - row_ptr[c]
            R = col_ptr[c + 1] - col_ptr[c]
            r0 = roff[g]
            c0 = nr + coff[g]
            base = cell_ptr[c]
            # columns in play first in `lst`, then rows in play
            exhausted = False
            ncol = 0
            for j in range(R):
                s = c0 + j
                part[s] = cnt[s] > 0 and ent[skey[s]] > 0.0
                exhausted |= cnt[s] > 0 and not part[s]
                if part[s]:
                    lst[ncol] = j
                    ncol += 1
            nl = ncol
            for i in range(M):
                s = r0 + i
                part[s] = cnt[s] > 0 and ent[skey[s]] > 0.0
                exhausted |= cnt[s] > 0 and not part[s]
                if part[s]:
                    lst[nl] = i
                    nl += 1
            left = 0
            if exhausted:
                # some flows get nothing: count the others again
                for q in range(ncol):
                    cnt[c0 + lst[q]] = 0
                count_rows(live, cnt, base, R, r0, c0, lst, ncol, nl, lst, ncol)
            for q in range(ncol, nl):
                left += cnt[r0 + lst[q]]
            if left == 0:
                continue
            nc_ = 0
            for s in range(r0, r0 + M):
                done[s] = not part[s] or cnt[s] == 0
                T[s] = np.inf
                used[s] = 0.0
                if not done[s]:
                    rcap[s] = ent[skey[s]]
                    level[s] = rcap[s] / cnt[s]
                    cand[nc_] = s
                    nc_ += 1
            for s in range(c0, c0 + R):
                done[s] = not part[s] or cnt[s] == 0
                T[s] = np.inf
                used[s] = 0.0
                if not done[s]:
                    rcap[s] = ent[skey[s]]
                    level[s] = rcap[s] / cnt[s]
                    cand[nc_] = s
                    nc_ += 1
            while left > 0:
                best = np.inf
                bs = -1
                q = 0
                while q < nc_:
                    s = cand[q]
                    if done[s]:
                        nc_ -= 1
                        cand[q] = cand[nc_]
                        continue
                    if level[s] < best:
                        best = level[s]
                        bs = s
                    q += 1
                best = max(best, 0.0)
                done[bs] = True
                T[bs] = best
                k = 0
                if bs < c0:  # a row: its flows to columns still in play
                    i = bs - r0
                    k0 = base + i * R
                    for q in range(ncol):
                        j = lst[q]
                        o = c0 + j
                        if live[k0 + j] and not done[o]:
                            k += 1
                            rcap[o] -= best
                            used[o] += best
                            cnt[o] -= 1
                            if cnt[o] > 0:
                                level[o] = rcap[o] / cnt[o]
                            else:
                                done[o] = True
                else:
                    j = bs - c0
                    for q in range(ncol, nl):
                        i = lst[q]
                        o = r0 + i
                        if live[base + i * R + j] and not done[o]:
                            k += 1
                            rcap[o] -= best
                            used[o] += best
                            cnt[o] -= 1
                            if cnt[o] > 0:
                                level[o] = rcap[o] / cnt[o]
                            else:
                                done[o] = True
                left -= k
                used[bs] += best * k
            # each flow got the level of whichever of its ports filled first
            for q in range(ncol, nl):
                i = lst[q]
                ti = T[r0 + i]
                k0 = base + i * R
                for p in range(ncol):
                    j = lst[p]
                    if live[k0 + j]:
                        x = min(ti, T[c0 + j])
                        if x > 0.0:
                            rate[k0 + j] += x
            for s in range(r0, r0 + M):
                x = used[s]
                if part[s] and x > 0.0:
                    ent[skey[s]] -= x
                    res[sport[s]] -= x
                    progress += x
            for s in range(c0, c0 + R):
                x = used[s]
                if part[s] and x > 0.0:
                    ent[skey[s]] -= x
                    res[sport[s]] -= x
        # 3. flows at a saturated port are done; stop when nothing can grow any more
        for s in range(ns):
            free[s] = res[sport[s]] > eps[sport[s]]
        if progress <= 1e-12 * total_cap:
            break
    # work conservation: what is left goes greedily, in service order (a coflow's flows by
    # index), to the flows that could still grow after the last round
    for g in range(ng):
        c = order[g]
        r0 = roff[g]
        c0 = nr + coff[g]
        rows_free = False
        for s in range(r0, r0 + row_ptr[c + 1] - row_ptr[c]):
            rows_free |= free[s] > 0
        cols_free = False
        for s in range(c0, c0 + col_ptr[c + 1] - col_ptr[c]):
            cols_free |= free[s] > 0
        if not (rows_free and cols_free):
            continue  # every flow of the coflow is at a saturated port
        if sparse and bf_rowmajor[c]:
            R = col_ptr[c + 1] - col_ptr[c]
            nfc = 0
            for j in range(R):
                if free[c0 + j] and col_live[col_ptr[c] + j] > 0:
                    lst[nfc] = j
                    nfc += 1
            base = cell_ptr[c]
            for i in range(row_ptr[c + 1] - row_ptr[c]):
                if not free[r0 + i] or row_live[row_ptr[c] + i] == 0:
                    continue
                a = sport[r0 + i]
                k0 = base + i * R
                for q in range(nfc):
                    if res[a] <= 0.0:
                        break  # x = 0 for the rest of the row
                    j = lst[q]
                    k = k0 + j
                    if not live[k]:
                        continue
                    b = sport[c0 + j]
                    x = min(res[a], res[b])
                    if x > 0.0:
                        rate[k] += x
                        res[a] -= x
                        res[b] -= x
            continue
        for q in range(bf_ptr[c], bf_ptr[c + 1]):
            k = bf_cell[q]
            i = bf_row[q]
            j = bf_col[q]
            if not (live[k] and free[r0 + i] and free[c0 + j]):
                continue
            a = sport[r0 + i]
            b = sport[c0 + j]
            x = min(res[a], res[b])
            if x > 0.0:
                rate[k] += x
                res[a] -= x
                res[b] -= x


@njit(cache=True)
def collect(order, cell_ptr, live, cell_flow, rate, last_rate):  # pragma: no cover
    # the flows whose rate changed (remembered in last_rate) and each group's total rate
    total = 0
    for c in order:
        total += cell_ptr[c + 1] - cell_ptr[c]
    flows = np.empty(total, dtype=np.int64)
    rates = np.empty(total)
    group_rate = np.zeros(order.shape[0])
    n = 0
    for g in range(order.shape[0]):
        c = order[g]
        s = 0.0
        for k in range(cell_ptr[c], cell_ptr[c + 1]):
            if not live[k]:
                continue
            x = rate[k]
            s += x
            f = cell_flow[k]
            if x != last_rate[f]:
                last_rate[f] = x
                flows[n] = f
                rates[n] = x
                n += 1
        group_rate[g] = s
    return flows[:n], rates[:n], group_rate


@njit(cache=True)
def collect_sparse(
    order,
    row_ptr,
    col_ptr,
    cell_ptr,
    row_live,
    col_live,
    live,
    cell_flow,
    rate,
    last_rate,
    positive,
):  # pragma: no cover - numba
    # `collect`, visiting only the cells of rows and columns that hold a live flow (in the
    # same row-major order, so each coflow's total is summed in the same order), and the
    # cells with a positive rate (into `positive`; returns their count) for the next
    # `allocate_dense(sparse=True)` to clear
    total = 0
    width = 0
    for c in order:
        total += cell_ptr[c + 1] - cell_ptr[c]
        width = max(width, col_ptr[c + 1] - col_ptr[c])
    flows = np.empty(total, dtype=np.int64)
    rates = np.empty(total)
    cols = np.empty(width, dtype=np.int64)
    group_rate = np.zeros(order.shape[0])
    n = 0
    npos = 0
    for g in range(order.shape[0]):
        c = order[g]
        R = col_ptr[c + 1] - col_ptr[c]
        ncols = 0
        for j in range(R):
            if col_live[col_ptr[c] + j] > 0:
                cols[ncols] = j
                ncols += 1
        s = 0.0
        for i in range(row_ptr[c + 1] - row_ptr[c]):
            if row_live[row_ptr[c] + i] == 0:
                continue
            k0 = cell_ptr[c] + i * R
            for q in range(ncols):
                k = k0 + cols[q]
                if not live[k]:
                    continue
                x = rate[k]
                s += x
                if x > 0.0:
                    positive[npos] = k
                    npos += 1
                f = cell_flow[k]
                if x != last_rate[f]:
                    last_rate[f] = x
                    flows[n] = f
                    rates[n] = x
                    n += 1
        group_rate[g] = s
    return flows[:n], rates[:n], group_rate, npos


@njit(cache=True)
def mark_flows(
    arrived,
    completed,
    flow_coflow,
    cell_of,
    row_of,
    col_of,
    alive,
    last_rate,
    nlive,
    live,
    row_live,
    col_live,
    stamp,
):  # pragma: no cover - numba
    # _ActiveFlows.update of the dense layout in one pass: flips the flows' cells, counts
    # active flows per coflow, row and column, and returns the coflows touched, sorted
    # (`stamp` is per-coflow scratch, all zero between calls)
    touched = np.empty(arrived.shape[0] + completed.shape[0], dtype=np.int64)
    n = 0
    for f in arrived:
        alive[f] = True
        live[cell_of[f]] = 1
        nlive[flow_coflow[f]] += 1
        row_live[row_of[f]] += 1
        col_live[col_of[f]] += 1
        c = flow_coflow[f]
        if stamp[c] == 0:
            stamp[c] = 1
            touched[n] = c
            n += 1
    for f in completed:
        alive[f] = False
        last_rate[f] = 0.0
        live[cell_of[f]] = 0
        nlive[flow_coflow[f]] -= 1
        row_live[row_of[f]] -= 1
        col_live[col_of[f]] -= 1
        c = flow_coflow[f]
        if stamp[c] == 0:
            stamp[c] = 1
            touched[n] = c
            n += 1
    out = np.sort(touched[:n])
    for c in out:
        stamp[c] = 0
    return out


@njit(cache=True)
def fill_group(
    mem, k, pa, pb, res, out, pcnt, pstart, pfill, rcap, level, used, plist, members, fixed
):  # pragma: no cover - numba
    # One group of `allocate`'s first round with a single queue (where every entitlement
    # equals the port's residual): max-min fair rates for flows mem[:k] (in that order)
    # within `res`, written to out[flow]; subtracts what they use from `res`. The
    # arithmetic is `allocate`'s group step, operation for operation, so that FIFO-LM's
    # incremental allocation gives the same bits as the allocation from scratch.
    nports = 0
    left = 0
    for t in range(k):
        j = mem[t]
        out[j] = 0.0
        if res[pa[j]] <= 0.0 or res[pb[j]] <= 0.0:
            fixed[t] = True
            continue
        fixed[t] = False
        left += 1
        a = pa[j]
        b = pb[j]
        if pcnt[a] == 0:
            plist[nports] = a
            nports += 1
        pcnt[a] += 1
        if pcnt[b] == 0:
            plist[nports] = b
            nports += 1
        pcnt[b] += 1
    if left == 0:
        return
    for i in range(nports):
        rcap[plist[i]] = res[plist[i]]
    progressive_fill(
        mem,
        0,
        k,
        fixed,
        pa,
        pb,
        plist,
        nports,
        pcnt,
        pstart,
        pfill,
        members,
        rcap,
        level,
        used,
        out,
        left,
    )
    for i in range(nports):
        p = plist[i]
        x = used[p]
        if x > 0.0:
            res[p] -= x


@njit(cache=True)
def g0_move(f, d, pa, pb, alive, served, g0):  # pragma: no cover - numba
    # flow f joined (d = 1) or left (d = -1) group 0; alive/served already say so
    a = pa[f]
    b = pb[f]
    m = g0.m
    nf = alive.shape[0]
    kk = a * m + b - m
    g0.cnt[kk] += d
    # keep the pair's flows of group 0 first in its segment: swap f with the flow at the
    # boundary (after the increment: the last member's slot; after the decrement: the
    # first non-member's), so that g0_fill lists a pair's members, not all its flows
    slot = g0.cls_ptr[kk] + g0.cnt[kk] - (1 if d > 0 else 0)
    at = g0.cls_pos[f]
    other = g0.cls_flows[slot]
    g0.cls_flows[slot] = f
    g0.cls_flows[at] = other
    g0.cls_pos[f] = slot
    g0.cls_pos[other] = at
    if d > 0:
        g0.first[a] = min(g0.first[a], f)
        g0.first[b] = min(g0.first[b], f)
        nj = g0.njoined[0]
        if nj < g0.joined.shape[0]:
            g0.joined[nj] = f
            g0.njoined[0] = nj + 1
        else:
            g0.njoined[1] = 1
        return
    for side in range(2):
        p = a if side == 0 else b
        if g0.first[p] != f:
            continue
        # no flow before f at p is in group 0: the next one is after it
        g0.first[p] = nf
        for w in range(g0.pfl_pos[side * nf + f] + 1, g0.pfl_ptr[p + 1]):
            h = g0.pfl[w]
            if alive[h] and served[h]:
                g0.first[p] = h
                break


@njit(cache=True)
def g0_fill(res, port_served, pa, pb, alive, served, rate, g0):  # pragma: no cover - numba
    # FIFO-LM's group 0 from its flow counts per port pair: `fill_group` over its flows in
    # index order (group 0 starts from the full capacities, all positive), operation for
    # operation, so the same bits, at a cost in ports rather than flows:
    # - `fill_group` lists the ports in the order they first occur in the flows; here, by
    #   each port's least flow (ingress before egress on the same flow);
    # - when port bp fixes its flows, each of its flows to a port o subtracts the same
    #   `best` from o's capacity, one after the other: the count of (bp, o) flows says how
    #   many times, and a port's level is only read after the step;
    # - a flow's rate is the `best` of the first of its ports to be fixed, the same for all
    #   flows of a port pair.
    # Subtracts what group 0 uses from `res`; returns the flows whose rate changes (index
    # order, as `fifo_step`'s per-flow loop emits them) and their rates.
    m = g0.m
    np2 = 2 * m
    cnt = g0.cnt
    cls_rate = g0.cls_rate
    plist = np.empty(np2, dtype=np.int64)
    key = np.empty(np2, dtype=np.int64)
    nports = 0
    for p in range(np2):
        if port_served[p] > 0:
            plist[nports] = p
            key[nports] = 2 * g0.first[p] + (1 if p >= m else 0)
            nports += 1
    plist[:nports] = plist[:nports][np.argsort(key[:nports])]
    pcnt = np.zeros(np2, dtype=np.int64)
    rcap = np.zeros(np2)
    level = np.zeros(np2)
    used = np.zeros(np2)
    done = np.zeros(np2, dtype=np.bool_)
    left = 0
    for i in range(nports):
        p = plist[i]
        pcnt[p] = port_served[p]
        rcap[p] = res[p]
        level[p] = rcap[p] / pcnt[p]
        if p < m:
            left += pcnt[p]
    changed = np.empty(16, dtype=np.int64)
    nch = 0
    live_ports = nports
    while left > 0:
        best = np.inf
        bp = -1
        i = 0
        while i < live_ports:
            p = plist[i]
            if pcnt[p] == 0:
                live_ports -= 1
                plist[i] = plist[live_ports]
                plist[live_ports] = p
                continue
            if level[p] < best:
                best = level[p]
                bp = p
            i += 1
        best = max(best, 0.0)
        r = 0.0 + best
        k = 0
        for oo in range(m):
            if bp < m:
                o = m + oo
                kk = bp * m + oo
            else:
                o = oo
                kk = oo * m + bp - m
            c = cnt[kk]
            if c == 0 or done[o]:
                continue
            k += c
            x = rcap[o]
            u = used[o]
            for _ in range(c):
                x -= best
                u += best
            rcap[o] = x
            used[o] = u
            pcnt[o] -= c
            if pcnt[o] > 0:
                level[o] = x / pcnt[o]
            if cls_rate[kk] != r:
                cls_rate[kk] = r
                if nch == changed.shape[0]:
                    grown = np.empty(2 * nch, dtype=np.int64)
                    grown[:nch] = changed[:nch]
                    changed = grown
                changed[nch] = kk
                nch += 1
        done[bp] = True
        left -= k
        used[bp] += best * k
        pcnt[bp] = 0
    for i in range(nports):
        p = plist[i]
        x = used[p]
        if x > 0.0:
            res[p] -= x
    # the flows whose rate changes: all of a pair whose rate changed, and the flows that
    # joined since the last computation
    out_f = np.empty(16, dtype=np.int64)
    nout = 0
    stamp = g0.stamp
    nj = g0.njoined[0]
    x = 0.0
    for z in range(nch + nj):
        if z < nch:
            # the pair's flows of group 0 (g0_move keeps them first): alive, served and
            # at the pair's new rate, so only their own rate and stamp are read
            kk = changed[z]
            x = cls_rate[kk]
            lo = g0.cls_ptr[kk]
            hi = lo + cnt[kk]
        else:
            lo = z - nch
            hi = lo + 1
        for w in range(lo, hi):
            if z < nch:
                f = g0.cls_flows[w]
            else:
                f = g0.joined[w]
                if not (alive[f] and served[f]):
                    continue
                x = cls_rate[pa[f] * m + pb[f] - m]
            if not stamp[f] and x != rate[f]:
                stamp[f] = True
                if nout == out_f.shape[0]:
                    gf = np.empty(2 * nout, dtype=np.int64)
                    gf[:nout] = out_f[:nout]
                    out_f = gf
                out_f[nout] = f
                nout += 1
    g0.njoined[0] = 0
    # in index order; a flow's new rate is its pair's, so sorting the flows alone is
    # enough (np.sort, not an argsort and two gathers: a third of this kernel's time)
    ef = np.sort(out_f[:nout])
    er = np.empty(nout)
    for i in range(nout):
        f = ef[i]
        stamp[f] = False
        er[i] = cls_rate[pa[f] * m + pb[f] - m]
    return ef, er


@njit(cache=True, inline="always")
def heavy(e, sent, bound):  # pragma: no cover - numba
    # FIFO-LM: has the (coflow, port) pair e sent at least `bound`? Its bytes only grow, so
    # a heavy pair stays heavy.
    return sent[e] >= bound


@njit(cache=True)
def light(f, pin, pout, sent, bound):  # pragma: no cover - numba
    # FIFO-LM: has flow f a light (coflow, port) pair?
    return not (heavy(pin[f], sent, bound) and heavy(pout[f], sent, bound))


@njit(cache=True)
def could_grow(res, eps, link_alive):  # pragma: no cover - numba
    # FIFO-LM: could an alive flow still grow, both its ports above the saturation
    # tolerance (res > eps)? The question is about (ingress, egress) links, not flows: a
    # scan of the alive flows themselves cost the trace ~140,000 flows per event, as
    # every port with capacity left was visited with all its flows
    np2 = res.shape[0]
    m = np2 // 2
    ins = np.empty(m, dtype=np.int64)
    outs = np.empty(m, dtype=np.int64)
    ni = 0
    no = 0
    for p in range(m):
        if res[p] > eps[p]:
            ins[ni] = p
            ni += 1
        if res[m + p] > eps[m + p]:
            outs[no] = p
            no += 1
    for i in range(ni):
        a = ins[i]
        for j in range(no):
            if link_alive[a, outs[j]] > 0:
                return True
    return False


@njit(cache=True)
def fifo_update(
    arrived,
    completed,
    coflow,
    pin,
    pout,
    pa,
    pb,
    alive,
    served,
    pair_alive,
    pair_unserved,
    port_served,
    c_alive,
    c_unserved,
    dirty,
    g0,
    link_alive,
):  # pragma: no cover - numba
    # FIFO-LM: applies arrivals (unserved until fifo_step looks at them) and completions
    # to the counts; marks the groups that lost or gained flows (dirty[n] is group 0).
    # link_alive[a, b - m] counts the alive flows from ingress a to egress b.
    # Returns whether the set of active coflows changed.
    n = c_alive.shape[0]
    m = link_alive.shape[0]
    changed = False
    for f in completed:
        c = coflow[f]
        alive[f] = False
        link_alive[pa[f], pb[f] - m] -= 1
        pair_alive[pin[f]] -= 1
        pair_alive[pout[f]] -= 1
        c_alive[c] -= 1
        changed |= c_alive[c] == 0
        if served[f]:
            served[f] = False
            port_served[pa[f]] -= 1
            port_served[pb[f]] -= 1
            dirty[n] = True
            if g0.on:
                g0_move(f, -1, pa, pb, alive, served, g0)
        else:
            pair_unserved[pin[f]] -= 1
            pair_unserved[pout[f]] -= 1
            c_unserved[c] -= 1
            dirty[c] = True
    for f in arrived:
        c = coflow[f]
        alive[f] = True
        link_alive[pa[f], pb[f] - m] += 1
        served[f] = False
        pair_alive[pin[f]] += 1
        pair_alive[pout[f]] += 1
        changed |= c_alive[c] == 0
        c_alive[c] += 1
        pair_unserved[pin[f]] += 1
        pair_unserved[pout[f]] += 1
        c_unserved[c] += 1
        dirty[c] = True
    return changed


@njit(cache=True)
def fifo_advance(t, t_last, pos, npos, rate, pin, pout, sent, stop):  # pragma: no cover
    # bytes each (coflow, port) pair sent since the last decision, flow by flow in index
    # order (the order of the allocation from scratch's np.add.at: same sums, same bits);
    # a flow that completed before t (idle fabric) stops at its completion time stop[f]
    dt = t - t_last
    if dt > 0 and npos > 0:
        for q in range(npos):
            f = pos[q]
            x = rate[f] * (min(t, stop[f]) - t_last)
            sent[pin[f]] += x
            sent[pout[f]] += x


@njit(cache=True)
def regroup(
    f,
    n,
    coflow,
    pin,
    pout,
    pa,
    pb,
    alive,
    served,
    served_at,
    pair_unserved,
    port_served,
    c_unserved,
    dirty,
    g0,
):  # pragma: no cover - numba
    # FIFO-LM: moves flow f into group 0 (both its pairs served) or out of it
    s = served_at[pin[f]] and served_at[pout[f]]
    if s == served[f]:
        return
    c = coflow[f]
    d = 1 if s else -1
    served[f] = s
    port_served[pa[f]] += d
    port_served[pb[f]] += d
    pair_unserved[pin[f]] -= d
    pair_unserved[pout[f]] -= d
    c_unserved[c] -= d
    dirty[c] = True
    dirty[n] = True
    if g0.on:
        g0_move(f, d, pa, pb, alive, served, g0)


@njit(cache=True)
def fifo_step(
    order,
    arrived,
    full,
    bound,
    threshold,
    track,
    t,
    coflow,
    pin,
    pout,
    pa,
    pb,
    c_ptr,
    c_flows,
    cp_ptr,
    pair_port,
    pf_ptr,
    pf_flows,
    alive,
    served,
    pair_alive,
    pair_unserved,
    port_served,
    c_alive,
    c_unserved,
    dirty,
    served_at,
    sent,
    rate,
    before_pair,
    after_pair,
    before0,
    after0,
    new,
    rank,
    pr,
    cap,
    eps,
    pos,
    npos,
    g0,
    link_alive,
):  # pragma: no cover - numba
    # FIFO-LM's decision (see FifoLM): groups from the heavy/light pairs, then the
    # allocation group by group, reusing a group's rates when neither its flows nor the
    # residual capacity at its ports changed. Returns the flows whose rate changed, their
    # rates, the new list of flows with a positive rate (index order), the next crossing
    # (inf: none), and whether some flow could still grow (the allocation from scratch
    # would then run more rounds, which the caller does).
    n = c_alive.shape[0]
    np2 = cap.shape[0]
    ng = order.shape[0]
    for g in range(ng):
        rank[order[g]] = g
    # the first light coflow at each port, in FIFO order (-1: none)
    first = np.full(np2, -1, dtype=np.int64)
    for g in range(ng):
        c = order[g]
        for q in range(cp_ptr[c], cp_ptr[c + 1]):
            p = pair_port[q]
            if pair_alive[q] > 0 and first[p] < 0 and not heavy(q, sent, bound):
                first[p] = c
    # a pair is served when its coflow is at or before the first light one there; a flow
    # is in the multiplexed class (group 0) when both its pairs are served
    moved = np.zeros(0, dtype=np.int64)
    nmov = 0
    for g in range(ng):
        c = order[g]
        for q in range(cp_ptr[c], cp_ptr[c + 1]):
            fl = first[pair_port[q]]
            s = fl < 0 or g <= rank[fl]
            if s != served_at[q]:
                served_at[q] = s
                if pair_alive[q] > 0:
                    if nmov == moved.shape[0]:
                        grown = np.empty(2 * nmov + 16, dtype=np.int64)
                        grown[:nmov] = moved[:nmov]
                        moved = grown
                    moved[nmov] = q
                    nmov += 1
    for i in range(nmov):
        q = moved[i]
        for w in range(pf_ptr[q], pf_ptr[q + 1]):
            f = pf_flows[w]
            if alive[f]:
                regroup(f, n, coflow, pin, pout, pa, pb, alive, served, served_at,
                        pair_unserved, port_served, c_unserved, dirty, g0)  # fmt: skip
    for f in arrived:
        regroup(f, n, coflow, pin, pout, pa, pb, alive, served, served_at, pair_unserved,
                port_served, c_unserved, dirty, g0)  # fmt: skip
    # allocation: group 0, then each coflow's other flows in FIFO order
    res = cap.copy()
    mem = np.empty(64, dtype=np.int64)
    out_f = np.empty(64, dtype=np.int64)
    out_r = np.empty(64)
    nout = 0
    pcnt = np.zeros(np2, dtype=np.int64)
    pstart = np.zeros(np2, dtype=np.int64)
    pfill = np.zeros(np2, dtype=np.int64)
    rcap = np.zeros(np2)
    level = np.zeros(np2)
    used = np.zeros(np2)
    plist = np.empty(np2, dtype=np.int64)
    for g in range(-1, ng):
        c = n if g < 0 else order[g]
        if g < 0:
            # group 0 always starts from the full capacities
            if not (dirty[n] or full):
                for p in range(np2):
                    if port_served[p] > 0:
                        res[p] = after0[p]
                continue
            if g0.on and not full and g0.njoined[1] == 0:
                fast = True
                for p in range(np2):
                    if port_served[p] > 0 and not res[p] > 0.0:
                        fast = False  # flows fixed at a zero capacity: per flow
                if fast:
                    out_f, out_r = g0_fill(res, port_served, pa, pb, alive, served, rate, g0)
                    nout = out_f.shape[0]
                    if nout < 16:
                        gf = np.empty(16, dtype=np.int64)
                        gr = np.empty(16)
                        gf[:nout] = out_f
                        gr[:nout] = out_r
                        out_f = gf
                        out_r = gr
                    for p in range(np2):
                        if port_served[p] > 0:
                            after0[p] = res[p]
                    continue
            if g0.on:
                # per flow: every flow of group 0 is compared, and gives its pair's rate
                g0.njoined[0] = 0
                g0.njoined[1] = 0
            k = 0
            for cc in range(n):
                if c_alive[cc] - c_unserved[cc] == 0:
                    continue
                for w in range(c_ptr[cc], c_ptr[cc + 1]):
                    f = c_flows[w]
                    if alive[f] and served[f]:
                        if k == mem.shape[0]:
                            grown = np.empty(2 * k, dtype=np.int64)
                            grown[:k] = mem[:k]
                            mem = grown
                        mem[k] = f
                        k += 1
            if k == 0:
                continue
            mem[:k] = np.sort(mem[:k])  # flow index order, as the allocation from scratch
        else:
            if c_unserved[c] == 0:
                continue
            same = not (dirty[c] or full)
            if same:
                for q in range(cp_ptr[c], cp_ptr[c + 1]):
                    if pair_unserved[q] > 0 and res[pair_port[q]] != before_pair[q]:
                        same = False
                        break
            if same:
                for q in range(cp_ptr[c], cp_ptr[c + 1]):
                    if pair_unserved[q] > 0:
                        res[pair_port[q]] = after_pair[q]
                continue
            for q in range(cp_ptr[c], cp_ptr[c + 1]):
                if pair_unserved[q] > 0:
                    before_pair[q] = res[pair_port[q]]
            k = 0
            # a coflow mostly in group 0 has few flows here: when its ingress pairs that
            # have some list fewer flows than the coflow, collect from them (each flow
            # outside group 0 counts at both its pairs, so at its ingress one) and sort
            scan = c_ptr[c + 1] - c_ptr[c]
            by_pair = 0
            if g0.on:
                for q in range(cp_ptr[c], cp_ptr[c + 1]):
                    if pair_unserved[q] > 0 and pair_port[q] < np2 // 2:
                        by_pair += pf_ptr[q + 1] - pf_ptr[q]
            if g0.on and by_pair < scan:
                for q in range(cp_ptr[c], cp_ptr[c + 1]):
                    if pair_unserved[q] == 0 or pair_port[q] >= np2 // 2:
                        continue
                    for w in range(pf_ptr[q], pf_ptr[q + 1]):
                        f = pf_flows[w]
                        if alive[f] and not served[f]:
                            if k == mem.shape[0]:
                                grown = np.empty(2 * k, dtype=np.int64)
                                grown[:k] = mem[:k]
                                mem = grown
                            mem[k] = f
                            k += 1
                mem[:k] = np.sort(mem[:k])
            else:
                for w in range(c_ptr[c], c_ptr[c + 1]):
                    f = c_flows[w]
                    if alive[f] and not served[f]:
                        if k == mem.shape[0]:
                            grown = np.empty(2 * k, dtype=np.int64)
                            grown[:k] = mem[:k]
                            mem = grown
                        mem[k] = f
                        k += 1
        dirty[c] = False
        members = np.empty(2 * k, dtype=np.int64)
        fixed = np.empty(k, dtype=np.bool_)
        fill_group(
            mem,
            k,
            pa,
            pb,
            res,
            new,
            pcnt,
            pstart,
            pfill,
            rcap,
            level,
            used,
            plist,
            members,
            fixed,
        )
        if g < 0:
            for p in range(np2):
                if port_served[p] > 0:
                    after0[p] = res[p]
        else:
            for q in range(cp_ptr[c], cp_ptr[c + 1]):
                if pair_unserved[q] > 0:
                    after_pair[q] = res[pair_port[q]]
        for t_ in range(k):
            f = mem[t_]
            x = new[f]
            if g < 0 and g0.on:
                g0.cls_rate[pa[f] * g0.m + pb[f] - g0.m] = x
            if x != rate[f]:
                if nout == out_f.shape[0]:
                    gf = np.empty(2 * nout, dtype=np.int64)
                    gr = np.empty(2 * nout)
                    gf[:nout] = out_f[:nout]
                    gr[:nout] = out_r[:nout]
                    out_f = gf
                    out_r = gr
                out_f[nout] = f
                out_r[nout] = x
                nout += 1
    dirty[n] = False
    more = could_grow(res, eps, link_alive)
    # the flows with a positive rate and a light pair, in index order: the old ones still
    # such, merged with those that became positive. Only light pairs' bytes sent and rate
    # sums are ever read (a heavy pair stays heavy: `heavy`), and a light pair's positive
    # flows all have a light pair, so they are all listed, in the same order: the same
    # sums, while most positive flows on the trace, heavy at both pairs, are left out of
    # the per-event passes (here and in fifo_advance)
    fresh = np.empty(nout, dtype=np.int64)
    nfresh = 0
    for i in range(nout):
        f = out_f[i]
        if out_r[i] > 0.0 and not rate[f] > 0.0 and light(f, pin, pout, sent, bound):
            fresh[nfresh] = f
            nfresh += 1
    for i in range(nout):
        rate[out_f[i]] = out_r[i]
    fresh = np.sort(fresh[:nfresh])
    newpos = np.empty(npos + nfresh, dtype=np.int64)
    drop = np.empty(16, dtype=np.int64)  # flows no longer positive (fast path's pr)
    ndrop = 0
    a = 0
    b = 0
    k = 0
    while a < npos or b < nfresh:
        if b >= nfresh or (a < npos and pos[a] < fresh[b]):
            f = pos[a]
            a += 1
            if not (alive[f] and rate[f] > 0.0):
                if g0.on and track and light(f, pin, pout, sent, bound):
                    if ndrop == drop.shape[0]:
                        grown = np.empty(2 * ndrop, dtype=np.int64)
                        grown[:ndrop] = drop[:ndrop]
                        drop = grown
                    drop[ndrop] = f
                    ndrop += 1
                continue
            if not light(f, pin, pout, sent, bound):
                continue
        else:
            f = fresh[b]
            b += 1
        newpos[k] = f
        k += 1
    newpos = newpos[:k]
    soonest = np.inf
    if track and g0.on:
        # the same crossing with pr kept per pair between events: a pair's sum is redone
        # (its positive flows in index order, as below) only when one of its flows changed
        # rate or stopped, and the minimum runs over the active pairs rather than the flows
        touched = np.empty(2 * (nout + ndrop), dtype=np.int64)
        nt = 0
        for i in range(nout + ndrop):
            f = out_f[i] if i < nout else drop[i - nout]
            for e in (pin[f], pout[f]):
                if pr[e] != -1.0:
                    pr[e] = -1.0  # marks e as listed
                    touched[nt] = e
                    nt += 1
        for i in range(nt):
            e = touched[i]
            if heavy(e, sent, bound):
                # heavy for good (bytes sent only grow): its sum is never read again, and
                # it stays marked as listed; on the trace most of the flows these sums
                # would add are at heavy pairs
                continue
            x = 0.0
            for w in range(pf_ptr[e], pf_ptr[e + 1]):
                f = pf_flows[w]
                if alive[f] and rate[f] > 0.0:
                    x += rate[f]
            pr[e] = x
        need = np.inf
        for g in range(ng):
            c = order[g]
            for e in range(cp_ptr[c], cp_ptr[c + 1]):
                if pr[e] > 0 and not heavy(e, sent, bound):
                    need = min(need, max(threshold - sent[e], 0.0) / pr[e])
        if need < np.inf:
            soonest = t + need
    elif track:
        # the earliest time a light pair's bytes sent reach the threshold
        for q in range(k):
            f = newpos[q]
            pr[pin[f]] += rate[f]
            pr[pout[f]] += rate[f]
        need = np.inf
        for q in range(k):
            f = newpos[q]
            for e in (pin[f], pout[f]):
                if pr[e] > 0 and not heavy(e, sent, bound):
                    need = min(need, max(threshold - sent[e], 0.0) / pr[e])
        for q in range(k):
            f = newpos[q]
            pr[pin[f]] = 0.0
            pr[pout[f]] = 0.0
        if need < np.inf:
            soonest = t + need
    return out_f[:nout], out_r[:nout], newpos, soonest, more


@njit(cache=True, inline="always")
def queue_reached(sent, his, cross_tol):  # pragma: no cover - numba
    # aalo._queue_of for one byte count: how many thresholds (all of `his` but its last,
    # infinite, bound) it has reached, with the crossing tolerance
    x = sent * (1 + cross_tol)
    reached = 0
    while reached < his.shape[0] - 1 and his[reached] <= x:
        reached += 1
    return reached


@njit(cache=True)
def wakeups(now, sent, slack, rate, queue, his, delta, cross_tol):  # pragma: no cover
    # the wake-up (see Aalo._wakeup) for sent + slack and for sent - slack; inf = none.
    # Same arithmetic as _queue_of and _first_crossing; the wake-up is the first multiple
    # of delta at or after the crossing and strictly after now.
    out = np.empty(2)
    for side in range(2):
        pending = False
        need = np.inf
        for i in range(sent.shape[0]):
            s = sent[i] + slack[i] if side == 0 else sent[i] - slack[i]
            if queue_reached(s, his, cross_tol) > queue[i]:
                pending = True
            bound = his[queue[i]]
            if rate[i] > 0 and np.isfinite(bound):
                need = min(need, max(bound - s, 0.0) / rate[i])
        t_cross = now if pending else now + need
        if np.isinf(t_cross):
            out[side] = np.inf
        elif delta == 0:
            out[side] = t_cross
        else:
            k = max(np.ceil(t_cross / delta - 1e-9), np.floor(now / delta + 1e-9) + 1)
            out[side] = k * delta
    return out


@njit(cache=True, inline="always")
def count_rows(live, cnt, base, R, r0, c0, rows, q0, q1, cols, ncols):
    # pragma: no cover - numba
    # Live cells of rows rows[q0:q1] in columns cols[:ncols]: each row's count into
    # cnt[r0 + i], added to each column's cnt[c0 + j] (which the caller has set).
    for q in range(q0, q1):
        i = rows[q]
        k0 = base + i * R
        n = 0
        for p in range(ncols):
            j = cols[p]
            v = live[k0 + j]
            n += v
            cnt[c0 + j] += v
        cnt[r0 + i] = n


@njit(cache=True)
def merge_active(act, arrived, alive):  # pragma: no cover - numba
    # the flows of act (index order) still alive merged with the alive arrivals, by index
    new = np.sort(arrived)
    out = np.empty(act.shape[0] + new.shape[0], dtype=np.int64)
    a = 0
    b = 0
    k = 0
    while a < act.shape[0] or b < new.shape[0]:
        if b >= new.shape[0] or (a < act.shape[0] and act[a] < new[b]):
            f = act[a]
            a += 1
        else:
            f = new[b]
            b += 1
        if alive[f] and not (k > 0 and out[k - 1] == f):
            out[k] = f
            k += 1
    return out, k


@njit(cache=True)
def unc_update(
    t,
    t_last,
    arrived,
    completed,
    completed_at,
    act,
    coflow,
    pin,
    pout,
    pair_port,
    alive,
    rate,
    stop,
    sent,
    pair_queue,
    pair_alive,
    c_alive,
    mark,
    his,
    cross_tol,
    track,
    m,
):  # pragma: no cover - numba
    # Uncoordinated D-CLAS, first half of an event (see Aalo._decide_uncoordinated, the
    # reference): adds the bytes the previous rates sent to each (coflow, port) pair, applies
    # arrivals and completions, and moves the pairs whose bytes reached a threshold.
    # Returns the new active flows (index order), the demoted pairs with their new queues
    # (ingress pairs, then egress pairs, each by pair index: the reference's order), and
    # whether the set of coflows with active flows changed.
    for i in range(completed.shape[0]):
        stop[completed[i]] = completed_at[i]
    ncand = 0
    cand = np.empty(2 * (act.shape[0] + arrived.shape[0]), dtype=np.int64)
    if t - t_last > 0:
        # flow by flow in index order, as the reference's np.add.at (ingress and egress
        # pairs are distinct, so each pair's sum has the same terms in the same order)
        for f in act:
            r = rate[f]
            if r == 0.0:
                continue  # adds +0.0: no change
            x = r * (min(t, stop[f]) - t_last)
            for e in (pin[f], pout[f]):
                sent[e] += x
                if mark[e] == 0:
                    mark[e] = 1
                    cand[ncand] = e
                    ncand += 1
    changed = False
    for f in arrived:
        if alive[f]:
            continue
        alive[f] = True
        rate[f] = 0.0
        pair_alive[pin[f]] += 1
        pair_alive[pout[f]] += 1
        changed |= c_alive[coflow[f]] == 0
        c_alive[coflow[f]] += 1
        for e in (pin[f], pout[f]):
            if mark[e] == 0:
                mark[e] = 1
                cand[ncand] = e
                ncand += 1
    for f in completed:
        if not alive[f]:
            continue
        alive[f] = False
        pair_alive[pin[f]] -= 1
        pair_alive[pout[f]] -= 1
        c_alive[coflow[f]] -= 1
        changed |= c_alive[coflow[f]] == 0
    if arrived.shape[0] == 0 and completed.shape[0] == 0:
        out = act
        k = act.shape[0]
    else:
        out, k = merge_active(act, arrived, alive)
    # demotions: the pairs of active flows whose bytes changed or that gained a flow (the
    # others were checked at the previous event with the same bytes)
    dem_p = np.empty(ncand, dtype=np.int64)
    dem_q = np.empty(ncand, dtype=np.int64)
    nd = 0
    cand = np.sort(cand[:ncand])
    for e in cand:
        mark[e] = 0
    if track:
        for side in range(2):
            for e in cand:
                if (pair_port[e] < m) != (side == 0) or pair_alive[e] == 0:
                    continue
                reached = queue_reached(sent[e], his, cross_tol)
                if reached > pair_queue[e]:
                    pair_queue[e] = reached
                    dem_p[nd] = e
                    dem_q[nd] = reached
                    nd += 1
    return out[:k], dem_p[:nd], dem_q[:nd], changed


@njit(cache=True)
def unc_allocate(
    t,
    order,
    act,
    coflow,
    src,
    dst,
    pin,
    pout,
    pair_queue,
    gpos,
    rate,
    sent,
    pair_rate,
    cap,
    weight,
    strict,
    max_rounds,
    his,
    track,
):  # pragma: no cover - numba
    # Uncoordinated D-CLAS, second half of an event: `allocate` on the active flows grouped
    # by FIFO position (a group's flows by index: the reference's stable argsort), then the
    # flows whose rate changed (index order) with their new rates, and the earliest time a
    # pair's bytes reach its queue's bound at the new rates (inf: never).
    n = act.shape[0]
    np2 = cap.shape[0]
    ng = order.shape[0]
    for g in range(ng):
        gpos[order[g]] = g
    starts = np.zeros(ng, dtype=np.int64)
    sizes = np.zeros(ng, dtype=np.int64)
    for f in act:
        sizes[gpos[coflow[f]]] += 1
    run = 0
    for g in range(ng):
        starts[g] = run
        run += sizes[g]
    fill = starts.copy()
    at = np.empty(n, dtype=np.int64)  # position of each active flow (aligned with act)
    pa = np.empty(n, dtype=np.int64)
    pb = np.empty(n, dtype=np.int64)
    ka = np.empty(n, dtype=np.int64)
    kb = np.empty(n, dtype=np.int64)
    for i in range(n):
        f = act[i]
        g = gpos[coflow[f]]
        j = fill[g]
        fill[g] += 1
        at[i] = j
        pa[j] = src[f]
        pb[j] = np2 // 2 + dst[f]
        ka[j] = pair_queue[pin[f]] * np2 + pa[j]
        kb[j] = pair_queue[pout[f]] * np2 + pb[j]
    live = np.ones(n, dtype=np.bool_)
    rpos = np.empty(n)
    allocate(starts, sizes, live, pa, pb, ka, kb, cap, weight, strict, max_rounds, rpos)
    nout = 0
    out_f = np.empty(n, dtype=np.int64)
    out_r = np.empty(n)
    for i in range(n):
        f = act[i]
        r = rpos[at[i]]
        if r != rate[f]:
            out_f[nout] = f
            out_r[nout] = r
            nout += 1
            rate[f] = r
        if track:
            # each pair's total rate, summed in flow index order (the reference's np.add.at)
            pair_rate[pin[f]] += r
            pair_rate[pout[f]] += r
    soonest = np.inf
    if track:
        # the earliest crossing over the pairs with a positive rate, each visited once (its
        # rate is cleared after the visit, leaving the scratch zero)
        found = False
        best = np.inf
        for f in act:
            for e in (pin[f], pout[f]):
                pr = pair_rate[e]
                if pr > 0:
                    pair_rate[e] = 0.0
                    bound = his[pair_queue[e]]
                    if np.isfinite(bound):
                        found = True
                        best = min(best, max(bound - sent[e], 0.0) / pr)
        if found:
            soonest = t + best
    return out_f[:nout], out_r[:nout], soonest
