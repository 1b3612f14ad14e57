"""Aalo: non-clairvoyant coflow scheduling with D-CLAS (Chowdhury's thesis, Ch. 6).

Aalo orders coflows by how many bytes they have *already sent* (Coflow-Aware Least-Attained
Service, CLAS), discretised into K priority queues with exponentially spaced thresholds
(D-CLAS); ``specs/aalo-hug-thesis-ch6-8.md`` §1.2-§1.8.

- :class:`Aalo` (``aalo``): D-CLAS with loose coordination. A global coordinator learns every
  coflow's total bytes sent at the Δ-synchronisations and places it in a queue; queues share
  each port by weight, coflows in a queue are served FIFO (by CoflowId), flows of a coflow
  share max-min fairly.
- :class:`AaloUncoordinated` (``aalo-uncoordinated``): the same scheduler run independently at
  every port on the bytes each coflow sent *through that port* (decentralised LAS; thesis
  L1713, L2081, Theorem C.1.1).
- :func:`dclas_allocation`: the per-port-entitlement allocation both use, as a function.
- :func:`coflow_ids`: CoflowIds ``external.internal`` of multi-stage DAGs (Pseudocode 5).

Both policies are non-clairvoyant: they read bytes sent, rates, ports, arrival times, coflow
membership and dependency edges, never sizes. They wake up only when a queue can change: at the
Δ-sync after a threshold crossing (coordinated) or at the exact crossing (uncoordinated).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import cache
from typing import Any, ClassVar, Literal

import numpy as np
import numpy.typing as npt

from coflowlab.constants import TOL
from coflowlab.policy import Decision, InstanceView, ObservedState

__all__ = [
    "CROSS_TOL",
    "MAX_ROUNDS",
    "Aalo",
    "AaloUncoordinated",
    "coflow_ids",
    "dclas_allocation",
]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

WeightsLike = Literal["linear", "equal", "strict"] | Sequence[float]

CROSS_TOL = 1e-9
"""Relative tolerance of a threshold crossing: ``bytes >= threshold * (1 - CROSS_TOL)``."""

_SNAP_TOL = 2 * TOL
"""Bound on the relative time tolerance within which the simulator completes a flow early."""

MAX_ROUNDS = 10
"""Redistribution rounds of :func:`dclas_allocation` before the final greedy backfill (the
redistribution converges geometrically when queues are limited at their other ports)."""


# ---------------------------------------------------------------------------------- kernels
@cache
def _kernels() -> dict[str, Any]:
    """Compiles the numba kernels on first use (cached on disk between runs)."""
    from numba import njit

    @njit(cache=True)
    def allocate(
        gstart, gsize, live, pa, pb, ka, kb, cap, weight, strict, max_rounds, rate
    ):  # pragma: no cover - numba
        # D-CLAS rounds of `dclas_allocation` (spec §1.6 [interp]). Group g owns positions
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
                run = 0
                for i in range(nports):
                    p = plist[i]
                    pstart[p] = run
                    pfill[p] = run
                    run += pcnt[p]
                    rcap[p] = ent[pool[p]]
                    level[p] = rcap[p] / pcnt[p]
                    used[p] = 0.0
                for t in range(lo, hi):
                    if fixed[t]:
                        continue
                    j = act[t]
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
                        j = act[t]
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
    ):  # pragma: no cover - numba
        # The rounds of `allocate`, for coflows stored as dense matrices (see _ActiveFlows):
        # coflow order[g] is served g-th, its flows by index in the final backfill. A flow can
        # grow while both its ports are unsaturated, so frozen flows need no state of their own;
        # inside a coflow each flow gets the level of whichever of its ports fills first, and
        # ports are the rows and columns of the coflow's matrix.
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
            for k in range(cell_ptr[c], cell_ptr[c + 1]):
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
                    for q in range(ncol, nl):
                        i = lst[q]
                        k0 = base + i * R
                        n = 0
                        for p in range(ncol):
                            j = lst[p]
                            v = live[k0 + j]
                            n += v
                            cnt[c0 + j] += v
                        cnt[r0 + i] = n
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
    def wakeups(now, sent, slack, rate, queue, his, delta, cross_tol):  # pragma: no cover
        # the wake-up (see Aalo._wakeup) for sent + slack and for sent - slack; inf = none.
        # Same arithmetic as _queue_of and _first_crossing; the wake-up is the first multiple
        # of delta at or after the crossing and strictly after now.
        out = np.empty(2)
        nb = his.shape[0] - 1
        for side in range(2):
            pending = False
            need = np.inf
            for i in range(sent.shape[0]):
                s = sent[i] + slack[i] if side == 0 else sent[i] - slack[i]
                x = s * (1 + cross_tol)
                reached = 0
                while reached < nb and his[reached] <= x:
                    reached += 1
                if reached > queue[i]:
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

    return {
        "allocate": allocate,
        "allocate_dense": allocate_dense,
        "collect": collect,
        "wakeups": wakeups,
    }


def _allocate_flat(
    group: IntArray,
    src: IntArray,
    dst: IntArray,
    queue_in: IntArray,
    queue_out: IntArray,
    cap: FloatArray,
    weights: FloatArray,
    strict: bool,
) -> FloatArray:
    """D-CLAS rates of flows given in any order: groups them (stably, so a group's flows keep
    their given order, which the final greedy backfill follows) and runs the kernel."""
    n = len(group)
    perm = np.argsort(group, kind="stable")
    g = group[perm]
    starts = np.flatnonzero(np.r_[True, g[1:] != g[:-1]]).astype(np.int64)
    sizes = np.diff(np.r_[starts, n]).astype(np.int64)
    np2 = len(cap)
    pa = src[perm].astype(np.int64)
    pb = np2 // 2 + dst[perm].astype(np.int64)
    rate = np.empty(n)
    _kernels()["allocate"](
        starts,
        sizes,
        np.ones(n, dtype=np.bool_),
        pa,
        pb,
        queue_in[perm].astype(np.int64) * np2 + pa,
        queue_out[perm].astype(np.int64) * np2 + pb,
        cap,
        weights,
        bool(strict),
        MAX_ROUNDS,
        rate,
    )
    out = np.empty(n)
    out[perm] = rate
    return out


def dclas_allocation(
    src: npt.ArrayLike,
    dst: npt.ArrayLike,
    group: npt.ArrayLike,
    cap_in: npt.ArrayLike,
    cap_out: npt.ArrayLike,
    *,
    queue_in: npt.ArrayLike | None = None,
    queue_out: npt.ArrayLike | None = None,
    weights: npt.ArrayLike = (1.0,),
    strict: bool = False,
) -> FloatArray:
    """D-CLAS rates by per-port queue entitlements (the executable reading of Pseudocode 4).

    Spec ``aalo-hug-thesis-ch6-8.md`` §1.6 [interp], in rounds ("while fabric is not
    saturated", Pseudocode 4 line 2) until no flow can grow:

    1. at every port ``p``, the residual capacity is split among the queues that have a flow
       at ``p`` which can still grow (both its ports have residual capacity), in proportion to
       their weights (``strict``: all of it to the highest-priority such queue);
    2. groups (coflows) are visited in increasing ``group``; each adds max-min fair rates for
       its flows, limited by its queue's remaining entitlement at each flow's two ports, so a
       group takes what it can before any later group of the same queue (FIFO);
    3. a flow with a saturated port stops; what the queues could not use is split again in
       the next round among the queues that still can grow there (work conservation, "excess
       share ... divided among unsaturated queues in proportion to their weights",
       L1882-1884).

    Rates only grow from round to round. FIFO is therefore relative to the entitlements of
    each round: a later coflow may keep a share of a port that an earlier coflow of its queue
    could not use in that round (because its queue's entitlement at its *other* port was
    exhausted) but could use after that other port's excess was redistributed. With one
    queue, or ``strict`` priority and one queue per group, one round suffices and FIFO is
    exact: each group takes max-min fair rates from what the groups before it left. The
    redistribution converges geometrically when queues are limited at their other ports; it
    is cut after :data:`MAX_ROUNDS` rounds and the rest is handed out greedily in group order,
    so the result is always work conserving: every flow has a saturated port.

    Parameters
    ----------
    src, dst
        Ingress and egress port of each flow.
    group
        Service order of each flow's group (its coflow's FIFO position), ``0 <= group``;
        flows of one group share max-min fairly.
    cap_in, cap_out
        Capacity of each ingress and egress port.
    queue_in, queue_out
        The queue (0 = highest priority) each flow belongs to at its ingress and its egress
        port (coordinated D-CLAS: the coflow's queue for both; default 0). Flows of one group
        at one port must share a queue there.
    weights
        Positive weight of each queue.
    strict
        Strict priority across queues instead of weighted sharing.

    Returns
    -------
    numpy.ndarray
        The rate of each flow.

    Examples
    --------
    One port; queue 0 (weight 2) holds coflows 0 and 1 (FIFO), queue 1 (weight 1) coflow 2.
    Coflow 0 takes queue 0's share 2/3, coflow 1 waits, coflow 2 gets 1/3:

    >>> dclas_allocation([0, 0, 0], [0, 0, 0], [0, 1, 2], [1.0], [1.0],
    ...                  queue_in=[0, 0, 1], weights=[2.0, 1.0]).round(4).tolist()
    [0.6667, 0.0, 0.3333]

    Unused share is redistributed: coflow 0 is limited to 0.1 by its ingress port, so the
    other queue takes the rest of the shared egress port.

    >>> dclas_allocation([0, 1], [0, 0], [0, 1], [0.1, 1.0], [1.0, 1.0],
    ...                  queue_in=[0, 1], weights=[1.0, 1.0]).round(4).tolist()
    [0.1, 0.9]
    """
    s = np.ascontiguousarray(src, dtype=np.int64)
    d = np.ascontiguousarray(dst, dtype=np.int64)
    g = np.ascontiguousarray(group, dtype=np.int64)
    n = len(s)
    if n == 0:
        return np.zeros(0)
    qi = np.zeros(n, dtype=np.int64) if queue_in is None else np.asarray(queue_in, np.int64)
    qo = qi if queue_out is None else np.asarray(queue_out, dtype=np.int64)
    w = np.ascontiguousarray(weights, dtype=np.float64)
    c_in = np.array(cap_in, dtype=np.float64).ravel()
    c_out = np.array(cap_out, dtype=np.float64).ravel()
    if len(c_in) != len(c_out) or s.max() >= len(c_in) or d.max() >= len(c_out):
        raise ValueError(
            "dclas_allocation: need one capacity per port, the same number of "
            "ingress and egress ports"
        )
    if (w <= 0).any() or not np.isfinite(w).all():
        raise ValueError("dclas_allocation: weights must be positive and finite")
    if g.min() < 0 or qi.min() < 0 or qo.min() < 0 or max(qi.max(), qo.max()) >= len(w):
        raise ValueError("dclas_allocation: group and queue indices out of range")
    return _allocate_flat(g, s, d, qi, qo, np.concatenate([c_in, c_out]), w, strict)


# ---------------------------------------------------------------------------------- CoflowId
def _parents(num_coflows: int, dependencies: npt.ArrayLike) -> list[list[int]]:
    parents: list[list[int]] = [[] for _ in range(num_coflows)]
    for a, b in np.asarray(dependencies, dtype=np.int64).reshape(-1, 2):
        parents[int(b)].append(int(a))
    return parents


def _topological(parents: list[list[int]]) -> list[int]:
    n = len(parents)
    children: list[list[int]] = [[] for _ in range(n)]
    waiting = [len(p) for p in parents]
    for b, ps in enumerate(parents):
        for a in ps:
            children[a].append(b)
    order = [k for k in range(n) if waiting[k] == 0]
    for k in order:  # grows while iterating (Kahn)
        for b in children[k]:
            waiting[b] -= 1
            if waiting[b] == 0:
                order.append(b)
    return order


def _dag_structure(
    num_coflows: int, dependencies: npt.ArrayLike
) -> tuple[IntArray, list[IntArray]]:
    """Internal ids and, per coflow, the DAG roots it descends from (itself for a root)."""
    parents = _parents(num_coflows, dependencies)
    internal = np.zeros(num_coflows, dtype=np.int64)
    roots: list[IntArray] = [np.zeros(0, dtype=np.int64)] * num_coflows
    for k in _topological(parents):
        ps = parents[k]
        if not ps:
            roots[k] = np.array([k], dtype=np.int64)
            continue
        internal[k] = 1 + max(int(internal[a]) for a in ps)
        roots[k] = np.unique(np.concatenate([roots[a] for a in ps]))
    return internal, roots


def coflow_ids(
    num_coflows: int, dependencies: npt.ArrayLike = (), arrival: npt.ArrayLike | None = None
) -> tuple[IntArray, IntArray]:
    """CoflowIds ``external.internal`` of Aalo's Pseudocode 5 (thesis L1911-1942).

    A coflow without parents is a DAG root: it gets the next external id in registration
    (arrival) order and internal id 0 (``newId.0``). A dependent coflow gets its parents'
    external id and internal id ``1 + max`` over its parents (``pId.sId``). When the parents
    come from different DAGs (the text assumes they share one), the external id of the earliest
    registered root is used.

    Queues serve coflows by ``(external, internal)``: a child loses to its parent and to its
    shallower relatives (L1938, L1990), and follows its DAG's root in the FIFO order.

    Parameters
    ----------
    num_coflows
        Number of coflows.
    dependencies
        ``(a, b)`` pairs: ``b`` depends on ``a``.
    arrival
        Registration time of each root (default: index order). Ties go to the lower index.

    Returns
    -------
    external, internal
        Integer arrays of length ``num_coflows``.

    Examples
    --------
    Coflows 0 and 2 are roots; 1 depends on 0, and 3 on 1 and 2 (AAL-7, AAL-8):

    >>> ext, internal = coflow_ids(4, [(0, 1), (1, 3), (2, 3)])
    >>> ext.tolist(), internal.tolist()
    ([0, 0, 1, 0], [0, 1, 0, 2])
    """
    n = int(num_coflows)
    internal, roots = _dag_structure(n, dependencies)
    arr = np.zeros(n) if arrival is None else np.asarray(arrival, dtype=float)
    is_root = np.array([len(r) == 1 and int(r[0]) == k for k, r in enumerate(roots)], bool)
    root_ids = np.flatnonzero(is_root)
    rank = np.full(n, -1, dtype=np.int64)
    rank[root_ids[np.lexsort((root_ids, arr[root_ids]))]] = np.arange(len(root_ids))
    external = np.array([int(rank[r].min()) for r in roots], dtype=np.int64)
    return external, internal


# ---------------------------------------------------------------------------------- helpers
def _queue_bounds(
    num_queues: int,
    first_threshold: float,
    factor: float,
    thresholds: Sequence[float] | None,
) -> FloatArray:
    """Upper bounds ``Q_i^hi`` of the K queues (the last is ``inf``)."""
    if thresholds is not None:
        his = np.asarray(thresholds, dtype=float)
        if his.ndim != 1 or len(his) != num_queues - 1:
            raise ValueError(f"thresholds: need {num_queues - 1} values, got {len(his)}")
        if not (np.isfinite(his).all() and (his > 0).all() and (np.diff(his) > 0).all()):
            raise ValueError("thresholds: must be positive, finite and increasing")
    else:
        if not (math.isfinite(first_threshold) and first_threshold > 0):
            raise ValueError(f"first_threshold must be positive, got {first_threshold!r}")
        if not (math.isfinite(factor) and factor > 1):
            raise ValueError(f"factor must be > 1, got {factor!r}")
        his = first_threshold * factor ** np.arange(num_queues - 1, dtype=float)
    return np.append(his, np.inf)


def _queue_weights(weights: WeightsLike, num_queues: int) -> tuple[FloatArray, bool]:
    if isinstance(weights, str):
        if weights == "linear":
            return np.arange(num_queues, 0, -1, dtype=float), False
        if weights == "equal":
            return np.ones(num_queues), False
        if weights == "strict":
            return np.ones(num_queues), True
        raise ValueError(
            f"weights must be 'linear', 'equal', 'strict' or numbers, got {weights!r}"
        )
    w = np.asarray(weights, dtype=float)
    if w.shape != (num_queues,) or not (np.isfinite(w).all() and (w > 0).all()):
        raise ValueError(f"weights: need {num_queues} positive finite values, got {weights!r}")
    if (np.diff(w) > 0).any():
        raise ValueError("weights: must be non-increasing (Q_i.weight >= Q_{i+1}.weight)")
    return w, False


def _queue_of(sent: FloatArray, his: FloatArray) -> IntArray:
    """Queue index of each byte count: the number of thresholds it has reached."""
    return np.searchsorted(his[:-1], np.asarray(sent) * (1 + CROSS_TOL), side="right").astype(
        np.int64
    )


class _LocalBytes:
    """Bytes each coflow sent through each port it uses (``(coflow, port)`` pairs).

    Ports are numbered ``0..m-1`` (ingress) and ``m..2m-1`` (egress). The counts are
    integrated from the policy's own rates between events (rates are constant in between), so
    they include flows that have finished; no size is read.
    """

    def __init__(self, view: InstanceView) -> None:
        m = view.num_ports
        key_in = view.flow_coflow * (2 * m) + view.flow_src
        key_out = view.flow_coflow * (2 * m) + m + view.flow_dst
        keys, inverse = np.unique(np.concatenate([key_in, key_out]), return_inverse=True)
        nf = view.num_flows
        self.pair_in: IntArray = inverse[:nf].astype(np.int64)
        self.pair_out: IntArray = inverse[nf:].astype(np.int64)
        self.pair_coflow: IntArray = (keys // (2 * m)).astype(np.int64)
        self.pair_port: IntArray = (keys % (2 * m)).astype(np.int64)
        self.bytes = np.zeros(len(keys))
        self._scratch = np.zeros(len(keys))
        self._time = 0.0
        self._pin: IntArray = np.zeros(0, dtype=np.int64)
        self._pout: IntArray = np.zeros(0, dtype=np.int64)
        self._rate: FloatArray = np.zeros(0)

    def advance(self, t: float, flows: IntArray) -> tuple[IntArray, IntArray]:
        """Adds the bytes sent since the last call; returns the pairs of ``flows``."""
        dt = t - self._time
        if dt > 0 and len(self._rate):
            moved = self._rate * dt
            np.add.at(self.bytes, self._pin, moved)
            np.add.at(self.bytes, self._pout, moved)
        self._time = t
        return self.pair_in[flows], self.pair_out[flows]

    def set_rates(self, pin: IntArray, pout: IntArray, rates: FloatArray) -> None:
        """Remembers the rates in force from now on."""
        self._pin, self._pout, self._rate = pin, pout, np.array(rates, dtype=float)

    def pair_rates(
        self, pin: IntArray, pout: IntArray, rates: FloatArray
    ) -> tuple[FloatArray, FloatArray]:
        """Each flow's ingress-pair and egress-pair total rate."""
        s = self._scratch
        np.add.at(s, pin, rates)
        np.add.at(s, pout, rates)
        rin, rout = s[pin], s[pout]
        s[pin] = 0.0
        s[pout] = 0.0
        return rin, rout


def _first_crossing(now: float, sent: FloatArray, rate: FloatArray, bound: FloatArray) -> float:
    """Earliest time ``sent + rate·(t - now)`` reaches ``bound`` (``inf`` if never)."""
    ok = (rate > 0) & np.isfinite(bound)
    if not ok.any():
        return math.inf
    need = np.maximum(bound[ok] - sent[ok], 0.0)
    return now + float(np.min(need / rate[ok]))


class _ActiveFlows:
    """The active flows of every coflow, kept between events for the coordinated policy.

    Coflow ``c``'s flows are cells of a dense matrix: a row per ingress port it uses, a column
    per egress port (``row_ptr``, ``col_ptr``, ``cell_ptr`` delimit its rows, columns and
    cells; ``live`` marks the cells holding an active flow). Max-min fair filling inside a
    coflow then walks rows and columns of that matrix instead of per-flow adjacency lists
    rebuilt at every event; an event only flips the cells of the flows that arrived or
    completed. A queue change only changes the coflow's (queue, port) key base. Rates are
    remembered per flow, so a decision names only the flows whose rate changed
    (``Decision.update``).

    A coflow with two flows between the same two ports does not fit a matrix, and a sparse
    coflow would waste one; such instances fall back to regrouping the active flows at
    every event (:func:`dclas_allocation`'s kernel, flows by index).
    """

    def __init__(self, view: InstanceView) -> None:
        n, nf, m = view.num_coflows, view.num_flows, view.num_ports
        self.np2 = 2 * m
        c = self.flow_coflow = np.ascontiguousarray(view.flow_coflow, dtype=np.int64)
        self.src = np.ascontiguousarray(view.flow_src, dtype=np.int64)
        self.dst = np.ascontiguousarray(view.flow_dst, dtype=np.int64)
        self.alive = np.zeros(nf, dtype=bool)
        self.last_rate = np.zeros(nf)  # per flow: the rate it was last given
        self.nlive = np.zeros(n, dtype=np.int64)  # per coflow: active flows
        self.key_base = np.zeros(n, dtype=np.int64)  # per coflow: queue * 2m
        self.num_alive = 0
        rows, row = np.unique(c * m + self.src, return_inverse=True)
        cols, col = np.unique(c * m + self.dst, return_inverse=True)
        self.row_ptr = np.zeros(n + 1, dtype=np.int64)
        self.col_ptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(rows // m, minlength=n), out=self.row_ptr[1:])
        np.cumsum(np.bincount(cols // m, minlength=n), out=self.col_ptr[1:])
        width = np.diff(self.col_ptr)
        self.cell_ptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.diff(self.row_ptr) * width, out=self.cell_ptr[1:])
        self.cell_of = (
            self.cell_ptr[c] + (row - self.row_ptr[c]) * width[c] + col - self.col_ptr[c]
        ).astype(np.int64)
        unique_pairs = len(np.unique(self.cell_of)) == nf
        self.dense = unique_pairs and self.cell_ptr[-1] <= 4 * nf + 4096
        if not self.dense:
            return
        self.row_port = (rows % m).astype(np.int64)
        self.col_port = (m + cols % m).astype(np.int64)
        self.row_of = row.astype(np.int64)
        self.col_of = col.astype(np.int64)
        self.cell_flow = np.full(self.cell_ptr[-1], -1, dtype=np.int64)
        self.cell_flow[self.cell_of] = np.arange(nf)
        # the final greedy backfill visits a coflow's flows by index
        self.bf_ptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(c, minlength=n), out=self.bf_ptr[1:])
        by_index = np.argsort(c, kind="stable")
        self.bf_cell = self.cell_of[by_index]
        self.bf_row = (row - self.row_ptr[c])[by_index].astype(np.int64)  # within the coflow
        self.bf_col = (col - self.col_ptr[c])[by_index].astype(np.int64)
        self.live = np.zeros(self.cell_ptr[-1], dtype=np.uint8)
        self.row_live = np.zeros(len(rows), dtype=np.int64)  # active flows per row
        self.col_live = np.zeros(len(cols), dtype=np.int64)
        self.rate = np.zeros(self.cell_ptr[-1])

    def update(self, arrived: IntArray, completed: IntArray) -> IntArray:
        """Marks arrivals and completions; returns the coflows whose flows changed (sorted)."""
        self.num_alive += len(arrived) - len(completed)
        self.alive[arrived] = True
        self.alive[completed] = False
        self.last_rate[completed] = 0.0  # the simulator stops a finished flow itself
        counts = [(self.nlive, self.flow_coflow)]
        if self.dense:
            self.live[self.cell_of[arrived]] = 1
            self.live[self.cell_of[completed]] = 0
            counts += [(self.row_live, self.row_of), (self.col_live, self.col_of)]
        for count, index in counts:
            np.add.at(count, index[arrived], 1)
            np.subtract.at(count, index[completed], 1)
        return np.unique(np.concatenate([self.flow_coflow[arrived], self.flow_coflow[completed]]))

    def allocate(
        self, order: IntArray, cap: FloatArray, weights: FloatArray
    ) -> tuple[IntArray, FloatArray, FloatArray]:
        """D-CLAS rates with the coflows served in ``order``: the flows whose rate changes,
        their new rates, and each coflow's total rate (aligned with ``order``)."""
        if not self.dense:
            return self._allocate_regrouped(order, cap, weights)
        k = _kernels()
        k["allocate_dense"](
            order, self.row_ptr, self.col_ptr, self.cell_ptr, self.row_port, self.col_port,
            self.key_base, self.live, self.row_live, self.col_live, self.bf_ptr, self.bf_cell,
            self.bf_row, self.bf_col, cap, weights, MAX_ROUNDS, self.rate,
        )  # fmt: skip
        return k["collect"](
            order, self.cell_ptr, self.live, self.cell_flow, self.rate, self.last_rate
        )

    def _allocate_regrouped(
        self, order: IntArray, cap: FloatArray, weights: FloatArray
    ) -> tuple[IntArray, FloatArray, FloatArray]:
        flows = np.flatnonzero(self.alive)
        pos = np.zeros(len(self.nlive), dtype=np.int64)
        pos[order] = np.arange(len(order))
        group = pos[self.flow_coflow[flows]]
        queue = self.key_base[self.flow_coflow[flows]] // self.np2
        rates = _allocate_flat(
            group, self.src[flows], self.dst[flows], queue, queue, cap, weights, False
        )
        changed = rates != self.last_rate[flows]
        self.last_rate[flows] = rates
        group_rate = np.bincount(group, weights=rates, minlength=len(order)).astype(float)
        return flows[changed], rates[changed], group_rate


# ---------------------------------------------------------------------------------- policies
class Aalo:
    """Aalo's D-CLAS scheduler (``aalo``): non-clairvoyant, loosely coordinated.

    Parameters
    ----------
    num_queues
        Number ``K`` of priority queues (thesis default 10). ``K = 1`` is FIFO (Orchestra).
    first_threshold
        ``Q_1^hi``: bytes sent below which a coflow stays in the first queue (default 10).
    factor
        ``E``: ``Q_{i+1}^hi = E · Q_i^hi`` (default 10).
    delta
        ``Δ``: the coordination interval (default 10). The coordinator syncs at the times
        ``kΔ`` (k = 0, 1, ...), so a coflow's queue changes at the first multiple of Δ at or
        after the moment its bytes sent cross a threshold; ``0`` means instant coordination
        (the exact crossing time).
    weights
        Sharing across queues: ``"linear"`` (thesis evaluation, ``Q_i.weight = K − i + 1``),
        ``"equal"``, ``"strict"`` (strict priority, as CoflowSim's DARK and App. C.2's formula
        assume), or K non-increasing positive numbers.
    coordinated
        ``False`` runs the uncoordinated variant (see :class:`AaloUncoordinated`).
    thresholds
        Optional explicit ``Q_1^hi < ... < Q_{K-1}^hi`` (e.g. linearly spaced queues, thesis
        Fig. 6.12d), overriding ``first_threshold`` and ``factor``.

    Attributes
    ----------
    bounds
        ``(K,)`` upper bounds ``Q_i^hi``; the last is ``inf``.
    queue_weights
        ``(K,)`` queue weights.
    queue
        After :meth:`reset`: each coflow's current queue (coordinated policy; 0 = Q_1).
    demotions
        After a simulation: ``(time, coflow, port, queue)`` for every queue change, in order;
        ``port`` is ``-1`` for the coordinator's global decision (per-port decisions of the
        uncoordinated variant name the port, egress ports numbered ``m + j``).

    Notes
    -----
    **Units.** Thresholds are in the instance's size unit and Δ in its time unit (the view has
    no units). The defaults are the thesis's (``Q_1^hi`` = 10 MB, E = K = 10, Δ = 10 ms; L2029)
    for an instance in MB and ms, such as the Facebook trace (:func:`read_benchmark`).

    **Queues** (§1.3-§1.4). Queue ``i`` holds coflows whose bytes sent ``S`` satisfy
    ``Q_i^lo <= S < Q_i^hi`` (half-open). Every coflow enters the first queue; it is demoted
    when its bytes sent (all its flows, finished ones too, as the coordinator sees them at the
    last Δ-sync) reach a threshold; it is never promoted.

    **Allocation** (§1.5-§1.6): :func:`dclas_allocation` with the coflows' queues. At each
    port, queues share the residual capacity by weight among those that can still use it;
    inside a queue, coflows in FIFO order take max-min fair rates within what their queue is
    entitled to; what a queue cannot use is redistributed by weight, in rounds, until no flow
    can grow (work conserving). FIFO holds within each round's entitlements (see
    :func:`dclas_allocation` for the one way a later coflow can keep bandwidth an earlier one
    could have used after a redistribution). With ``"strict"`` weights the coordinated policy
    serves coflows in (queue, FIFO) order, each taking max-min fair rates from what the ones
    before it left: exact FIFO, strict priority (CoflowSim's DARK, plus work conservation).

    **FIFO order** (§1.8): by CoflowId ``(external, internal)`` (:func:`coflow_ids`), the
    external id being the arrival order of the coflow's DAG root; ties by coflow index. The
    simulator enforces starts-after dependencies. A coflow's queue uses its own bytes sent,
    not its DAG's ([UNCERTAIN] in the spec).

    **Events.** The policy asks to be woken up only at the Δ-multiple following the earliest
    crossing predicted from the current rates; rates change at arrivals, completions and queue
    changes only.

    **Implementation.** The allocation is recomputed at every event (a completion changes the
    max-min rates inside its coflow), but from state kept between events: each coflow's flows
    as a dense ports × ports matrix (:class:`_ActiveFlows`), the FIFO order, and each coflow's
    bytes sent, integrated from the policy's own rates and read from the simulator only at a
    Δ-sync, after an idle period, or when its error bound could change the wake-up. Decisions
    name only the flows whose rate changed. The rates are those of :func:`dclas_allocation`
    with each coflow's flows in index order (to rounding).

    Examples
    --------
    One 20 MB flow alone crosses Q_1^hi = 10 MB at t = 10, so the coordinator demotes it at
    the next sync; a second coflow arriving at 5 then gets Q_1's larger share:

    >>> from coflowlab import Coflow, Instance, simulate
    >>> inst = Instance.from_coflows(
    ...     [Coflow([(0, 0, 20.0)]), Coflow([(0, 0, 5.0)], release=5.0)], 1)
    >>> aalo = Aalo(delta=4.0)
    >>> simulate(inst, aalo).coflow_completion.round(3).tolist()
    [25.0, 21.5]
    >>> aalo.demotions
    [(12.0, 0, -1, 1)]
    """

    name: ClassVar[str] = "aalo"
    clairvoyant: ClassVar[bool] = False

    def __init__(
        self,
        *,
        num_queues: int = 10,
        first_threshold: float = 10.0,
        factor: float = 10.0,
        delta: float = 10.0,
        weights: WeightsLike = "linear",
        coordinated: bool = True,
        thresholds: Sequence[float] | None = None,
    ) -> None:
        if isinstance(num_queues, bool) or not isinstance(num_queues, int) or num_queues < 1:
            raise ValueError(f"num_queues must be an integer >= 1, got {num_queues!r}")
        if not (math.isfinite(delta) and delta >= 0):
            raise ValueError(f"delta must be finite and >= 0, got {delta!r}")
        self.num_queues = num_queues
        self.delta = float(delta)
        self.coordinated = bool(coordinated)
        self.bounds: FloatArray = _queue_bounds(num_queues, first_threshold, factor, thresholds)
        self.queue_weights, self.strict = _queue_weights(weights, num_queues)
        self.demotions: list[tuple[float, int, int, int]] = []

    def __repr__(self) -> str:
        his = ", ".join(f"{h:g}" for h in self.bounds[:-1])
        return (
            f"{type(self).__name__}(num_queues={self.num_queues}, thresholds=[{his}], "
            f"delta={self.delta:g}, weights={self.queue_weights.tolist()}"
            f"{', strict' if self.strict else ''}, coordinated={self.coordinated})"
        )

    # ------------------------------------------------------------------ set-up
    def reset(self, view: InstanceView) -> None:
        """Prepares for a new simulation of the instance ``view`` describes."""
        n = view.num_coflows
        self._n = n
        self._cap_in = np.asarray(view.cap_in, dtype=float)
        self._cap_out = np.asarray(view.cap_out, dtype=float)
        self._m = view.num_ports
        self._has_deps = len(view.dependencies) > 0
        self._internal, self._roots = _dag_structure(n, view.dependencies)
        self._ext_time = np.full(n, np.nan)
        self._ext_root = np.arange(n, dtype=np.int64)
        self.queue: IntArray = np.zeros(n, dtype=np.int64)
        self.demotions = []
        self._cap = np.concatenate([self._cap_in, self._cap_out])
        self._local = None if self.coordinated else _LocalBytes(view)
        if self._local is not None:
            self.pair_queue: IntArray = np.zeros(len(self._local.bytes), dtype=np.int64)
            return
        # coordinated: the active flows, the FIFO order, and each coflow's bytes sent as of
        # `_t_sent` (integrated from the policy's own rates; `_err` bounds the difference to
        # the simulator's count)
        self._flows = _ActiveFlows(view)
        self._weights = np.ones(1) if self.strict else self.queue_weights
        self._active: IntArray = np.zeros(0, dtype=np.int64)
        self._is_active = np.zeros(n, dtype=bool)
        self._seen = np.zeros(n, dtype=bool)
        self._order: IntArray = np.zeros(0, dtype=np.int64)
        self._sent = np.zeros(n)
        self._err = np.zeros(n)
        self._rate_c = np.zeros(n)
        self._t_sent = 0.0

    # ------------------------------------------------------------------ FIFO order
    def _fifo_order(
        self, active: IntArray, arrival: FloatArray, first: IntArray | None
    ) -> IntArray:
        """Active coflows by (``first``, external, internal, index)."""
        if self._has_deps:
            new = active[np.isnan(self._ext_time[active])]
            for c in new:
                r = self._roots[int(c)]
                t_r = arrival[r]
                j = int(np.lexsort((r, t_r))[0])
                self._ext_time[c] = t_r[j]
                self._ext_root[c] = r[j]
            keys: list[npt.NDArray[Any]] = [
                active,
                self._internal[active],
                self._ext_root[active],
                self._ext_time[active],
            ]
        else:
            keys = [active, arrival[active]]
        if first is not None:
            keys.append(first)
        return active[np.lexsort(keys)]

    def _is_sync(self, t: float) -> bool:
        d = self.delta
        if d == 0:
            return True
        return abs(t - round(t / d) * d) <= 1e-9 * d

    # ------------------------------------------------------------------ decisions
    def decide(self, state: ObservedState) -> Decision:
        """Rates of the active flows and the next wake-up (a Δ-sync after a crossing)."""
        if self.coordinated:
            return self._decide_coordinated(state)
        return self._decide_uncoordinated(state)

    def _decide_coordinated(self, state: ObservedState) -> Decision:
        """D-CLAS with a global coordinator (spec §1.5-§1.6): queues change at Δ-syncs, the
        allocation is recomputed from the state kept between events."""
        t = float(state.time)
        arrived = np.asarray(state.arrived, dtype=np.int64)
        completed = np.asarray(state.completed, dtype=np.int64)
        track = self.num_queues > 1
        if track:
            self._advance_sent(t, completed)
        started, stopped, stale = self._update_active(arrived, completed)
        demoted = np.zeros(0, dtype=np.int64)
        if track:
            # exact counts where decisions are made (a sync) and where the policy's own count
            # may be stale (see _update_active)
            sync = self._is_sync(t)
            if sync or stale:
                self._sync_sent(state)
            if sync:
                demoted = self._demote(t)
        af = self._flows
        if len(started) or len(stopped) or (self.strict and len(demoted)):
            first = self.queue[self._active] if self.strict else None
            self._order = self._fifo_order(self._active, np.asarray(state.coflow_arrival), first)
        flows, rates, group_rate = af.allocate(self._order, self._cap, self._weights)
        if not track:
            return Decision(update=(flows, rates))
        self._rate_c[stopped] = 0.0
        self._rate_c[self._order] = group_rate
        return Decision(update=(flows, rates), wakeup=self._wakeup(t, group_rate, state))

    def _advance_sent(self, t: float, completed: IntArray) -> None:
        """Adds the bytes sent since the last event: the policy's own rates times the elapsed
        time (rates are constant between events). Completed flows stopped at ``t``, except that
        the simulator completes a flow whose remaining bytes are within its tolerance of zero,
        so each completion widens the coflow's error bound by what could have been left."""
        act = self._active
        self._sent[act] += self._rate_c[act] * (t - self._t_sent)
        self._t_sent = t
        if len(completed):
            left = self._flows.last_rate[completed] * (_SNAP_TOL * max(1.0, abs(t)))
            np.add.at(self._err, self._flows.flow_coflow[completed], left)

    def _update_active(
        self, arrived: IntArray, completed: IntArray
    ) -> tuple[IntArray, IntArray, bool]:
        """Applies arrivals and completions; returns the coflows that became active, those
        that stopped being active (no active flow left), and whether the policy's bytes-sent
        counts may be stale.

        They may be when every active flow completed: the simulator does not ask the policy
        while nothing is active, so those flows may have stopped before now. The count of a
        coflow that resumes (new flows after it had none active) may be stale for the same
        reason."""
        gap = len(completed) > 0 and len(completed) == self._flows.num_alive
        touched = self._flows.update(arrived, completed)
        now = self._flows.nlive[touched] > 0
        was = self._is_active[touched]
        started = touched[now & ~was]
        stopped = touched[~now & was]
        resumed = self._seen[started]
        self._seen[started] = True
        self._sent[started[~resumed]] = 0.0  # a new coflow has sent nothing
        if len(started) or len(stopped):
            self._is_active[started] = True
            self._is_active[stopped] = False
            self._active = np.union1d(np.setdiff1d(self._active, stopped), started)
        return started, stopped, gap or bool(resumed.any())

    def _sync_sent(self, state: ObservedState) -> None:
        """Takes the active coflows' bytes sent from the simulator (exact; error bound 0)."""
        act = self._active
        self._sent[act] = np.asarray(state.coflow_sent)[act]
        self._err[act] = 0.0

    def _demote(self, t: float) -> IntArray:
        """The coordinator's decision at a Δ-sync: active coflows move to the queue of their
        bytes sent (never up); returns the coflows that moved."""
        act = self._active
        reached = _queue_of(self._sent[act], self.bounds)
        up = reached > self.queue[act]
        moved = act[up]
        for c, q in zip(moved.tolist(), reached[up].tolist(), strict=True):
            self.demotions.append((t, c, -1, q))
        self.queue[moved] = reached[up]
        if not self.strict:
            self._flows.key_base[moved] = reached[up] * self._flows.np2
        return moved

    def _wakeup(self, t: float, group_rate: FloatArray, state: ObservedState) -> float | None:
        """The Δ-sync following the earliest predicted crossing (``None``: never).

        The prediction uses the policy's own bytes-sent counts; when their error bound could
        change the answer, it is redone on the simulator's exact counts."""
        order = self._order
        wakeups = _kernels()["wakeups"]
        queue = self.queue[order]
        slack = self._err[order] + 1e-10 * self._sent[order]
        early, late = wakeups(
            t, self._sent[order], slack, group_rate, queue, self.bounds, self.delta, CROSS_TOL
        )
        if early != late:
            self._sync_sent(state)
            early = wakeups(
                t, self._sent[order], slack * 0, group_rate, queue, self.bounds, self.delta,
                CROSS_TOL,
            )[0]  # fmt: skip
        return None if math.isinf(early) else float(early)

    def _decide_uncoordinated(self, state: ObservedState) -> Decision:
        t = float(state.time)
        local = self._local
        assert local is not None
        flows = np.asarray(state.flows)
        coflow = np.asarray(state.coflow)
        pin, pout = local.advance(t, flows)
        bounds = self.bounds
        pq = self.pair_queue
        if self.num_queues > 1:
            for pairs in (pin, pout):
                reached = _queue_of(local.bytes[pairs], bounds)
                up = reached > pq[pairs]
                if up.any():
                    moved, idx = np.unique(pairs[up], return_index=True)
                    for p, q in zip(moved.tolist(), reached[up][idx].tolist(), strict=True):
                        self.demotions.append(
                            (t, int(local.pair_coflow[p]), int(local.pair_port[p]), q)
                        )
                    pq[moved] = reached[up][idx]
        n = self._n
        active = np.flatnonzero(np.bincount(coflow, minlength=n))
        order = self._fifo_order(active, np.asarray(state.coflow_arrival), None)
        pos = np.empty(n, dtype=np.int64)
        pos[order] = np.arange(len(order))
        rates = _allocate_flat(
            pos[coflow],
            np.asarray(state.src, dtype=np.int64),
            np.asarray(state.dst, dtype=np.int64),
            pq[pin],
            pq[pout],
            self._cap,
            self.queue_weights,
            self.strict,
        )
        local.set_rates(pin, pout, rates)
        if self.num_queues == 1:
            return Decision(rates)
        rin, rout = local.pair_rates(pin, pout, rates)
        t_cross = min(
            _first_crossing(t, local.bytes[pin], rin, bounds[pq[pin]]),
            _first_crossing(t, local.bytes[pout], rout, bounds[pq[pout]]),
        )
        return Decision(rates, wakeup=None if math.isinf(t_cross) else t_cross)


class AaloUncoordinated(Aalo):
    """Aalo without coordination (``aalo-uncoordinated``): decentralised D-CLAS/LAS.

    Every port runs D-CLAS on its own: a coflow's queue *at a port* is decided by the bytes the
    coflow sent through that port (a flow's ingress and egress may see its coflow in different
    queues), known at once (no Δ). This is the "uncoordinated non-clairvoyant" scheduler of
    thesis §6.8.2 (L2081) and the decentralised LAS of Fig. 6.1 (L1713), which cannot see a
    coflow's traffic elsewhere (Theorem C.1.1, spec §4.1). FIFO order and allocation are as in
    :class:`Aalo`, with the per-port queues (strict priority may need the greedy backfill of
    :func:`dclas_allocation`).

    Parameters
    ----------
    num_queues, first_threshold, factor, weights, thresholds
        As for :class:`Aalo` (``delta`` has no effect).

    Examples
    --------
    Theorem C.1.1 with fine queues: every port sees the same unit flows, so local LAS shares
    them equally and the narrow coflows wait for the wide ones.

    >>> from coflowlab import simulate
    >>> from coflowlab.instances.examples import aalo_theorem_c11
    >>> fine = dict(num_queues=30, first_threshold=0.01, factor=1.2, weights="strict")
    >>> float(simulate(aalo_theorem_c11(4, 2), AaloUncoordinated(**fine)).cct.sum()) > 7
    True
    """

    name: ClassVar[str] = "aalo-uncoordinated"

    def __init__(
        self,
        *,
        num_queues: int = 10,
        first_threshold: float = 10.0,
        factor: float = 10.0,
        delta: float = 10.0,
        weights: WeightsLike = "linear",
        thresholds: Sequence[float] | None = None,
    ) -> None:
        super().__init__(
            num_queues=num_queues,
            first_threshold=first_threshold,
            factor=factor,
            delta=delta,
            weights=weights,
            coordinated=False,
            thresholds=thresholds,
        )
