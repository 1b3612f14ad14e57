"""Numba kernels of the compiled decisions of HUG, DRF and Coflex (``fast=True``), at module
level (numba's disk cache finds a kernel again in a new process only when it is a module
global).

The policies are Chowdhury's HUG (PhD thesis, UC Berkeley 2015, Ch. 7, Algorithm 6, §7.5.1),
DRF (Ghodsi et al., NSDI 2011; thesis §7.3.2) and Coflex (Wang, Ma, Li, Li, IEEE INFOCOM
2017, §II-C, §III-A Algorithm 1); :mod:`.correlation` states the model.

- :func:`group_loads`, :func:`unit_rates` and :func:`naive_backfill` repeat the NumPy
  reference's floating-point operations in its order (sums in the order of the active flows,
  as ``np.bincount`` adds them): the grouping, DRF's, Coflex's and Coflex-naive's rates are
  the reference's bit for bit; what they save is the temporaries and the Python loops.
- :func:`hug_rates` is HUG's whole decision after the grouping. Capped (``hug``), its
  progressive filling is organised by *slot* (one coflow on one link: HUG's cap is per slot,
  and a port's flows are its slots' flows) and its rates are the reference's to roundings
  (tests/heuristics/test_correlation_fast.py bounds the difference); uncapped
  (``hug-cooperative``) they are the reference's bit for bit.
"""

from __future__ import annotations

import heapq

import numpy as np
from numba import njit


@njit(cache=True)
def group_loads(flows, remaining, flow_coflow, flow_src, flow_dst, m, pos):  # pragma: no cover
    """Groups the active ``flows`` by coflow (as ``np.unique(..., return_inverse=True)``)
    and sums each coflow's remaining bytes per link in the order of the flows.

    ``pos`` is scratch indexed by coflow, all -1 on entry and on return. Returns ``ids``
    (increasing), ``group``, ``src``, ``dst``, ``rem`` (clamped at 0), ``load`` ``(nc, 2m)``
    and ``count`` ``(nc, 2m)``, the number of active flows of each coflow on each link."""
    n = flows.shape[0]
    seen = np.empty(n, dtype=np.int64)
    nc = 0
    for p in range(n):
        c = flow_coflow[flows[p]]
        if pos[c] < 0:
            pos[c] = 0
            seen[nc] = c
            nc += 1
    ids = np.sort(seen[:nc])
    for j in range(nc):
        pos[ids[j]] = j
    group = np.empty(n, dtype=np.int64)
    src = np.empty(n, dtype=np.int64)
    dst = np.empty(n, dtype=np.int64)
    rem = np.empty(n)
    load = np.zeros((nc, 2 * m))
    count = np.zeros((nc, 2 * m), dtype=np.int64)
    for p in range(n):
        f = flows[p]
        g = pos[flow_coflow[f]]
        s = flow_src[f]
        t = flow_dst[f]
        r = remaining[p]
        r = r if r > 0.0 else 0.0  # np.maximum(remaining, 0.0)
        group[p] = g
        src[p] = s
        dst[p] = t
        rem[p] = r
        load[g, s] += r  # ingress and egress cells are disjoint: same sums as two bincounts
        load[g, m + t] += r
        count[g, s] += 1
        count[g, m + t] += 1
    for j in range(nc):
        pos[ids[j]] = -1
    return ids, group, src, dst, rem, load, count


@njit(cache=True)
def unit_rates(group, src, dst, rem, load, d, cap, m):  # pragma: no cover
    """:func:`coflowlab.heuristics.correlation.unit_rates`, flow by flow, with the
    reference's operations in its order: ``d · C · r / load`` at each port, the smaller."""
    n = group.shape[0]
    out = np.empty(n)
    for p in range(n):
        g = group[p]
        s = src[p]
        t = m + dst[p]
        ls = load[g, s]
        lt = load[g, t]
        a = d[g, s] * cap[s] * rem[p] / ls if ls > 0.0 else 0.0
        b = d[g, t] * cap[t] * rem[p] / lt if lt > 0.0 else 0.0
        out[p] = min(a, b)
    return out


@njit(cache=True)
def hug_rates(group, src, dst, rem, load, count, d, cap, p_star, capped, tol):  # pragma: no cover
    """HUG's rates (thesis Algorithm 6): stage 1 ``P* ·`` the unit rates, then stage 2, the
    weighted progressive filling of :func:`coflowlab.heuristics.correlation.fill` along the
    unit rates, capped at ``P* C^i`` per coflow and link when ``capped``. ``count`` is
    :func:`group_loads`'. Returns ``(rates, unit)``.

    Capped (``hug``, :func:`_slot_fill`): a flow's unit rate is its remaining bytes times the
    smaller of its coflow's ``d C / load`` at its two ports (the reference divides per flow),
    and the filling's resources are the ``2m`` ports and each coflow's share of each link (a
    *slot*, resource ``2m + g · 2m + link``): the rates differ from the reference's by
    roundings only. Uncapped (``hug-cooperative``): the reference's operations, the same
    rates bit for bit."""
    n = group.shape[0]
    m = cap.shape[0] // 2
    m2 = 2 * m
    nc = load.shape[0]
    finite = np.isfinite(p_star)
    unit = np.empty(n)
    rates = np.empty(n)
    if not capped:
        # uncapped: the reference's operations (unit_rates divides per flow, fill_levels'
        # filling, _port_fill), so the same rates bit for bit. A filling by port pair was
        # three times faster here; on the trace its roundings exposed a verifier bug (a
        # completion missed when the byte tolerance grew past a flow's shortfall, fixed in
        # FluidVerifier.finish) and it was not kept: the simulator's own work is most of
        # hug-cooperative's time
        uses = np.empty((n, 2), dtype=np.int64)
        left = cap.copy()
        for p in range(n):
            g = group[p]
            s = src[p]
            t = m + dst[p]
            ls = load[g, s]
            lt = load[g, t]
            a = d[g, s] * cap[s] * rem[p] / ls if ls > 0.0 else 0.0
            b = d[g, t] * cap[t] * rem[p] / lt if lt > 0.0 else 0.0
            u = min(a, b)
            unit[p] = u
            rates[p] = p_star * u if finite else u
            uses[p, 0] = s
            uses[p, 1] = t
            left[s] -= rates[p]
            left[t] -= rates[p]
        for x in range(m2):
            if left[x] < 0.0:
                left[x] = 0.0
        return _port_fill(rates, unit, uses, left, tol), unit
    coef = np.zeros((nc, m2))  # a flow's unit rate per remaining byte, at each of its ports
    for g in range(nc):
        for x in range(m2):
            if load[g, x] > 0.0:
                coef[g, x] = d[g, x] * cap[x] / load[g, x]
    scale = p_star if finite else 1.0
    return _slot_fill(rates, unit, coef, count, group, src, dst, rem, cap, scale, tol), unit


@njit(cache=True)
def _two_sum(hi, lo, w):  # pragma: no cover
    """``hi + lo + w`` as a new ``(hi, lo)``, the rounding error of the addition kept in
    ``lo`` (Knuth's TwoSum): a running sum that loses nothing when its terms cancel."""
    s = hi + w
    bp = s - hi
    return s, lo + ((hi - (s - bp)) + (w - bp))


@njit(cache=True)
def _slot_fill(
    rates, unit, coef, count0, group, src, dst, rem, cap, scale, tol
):  # pragma: no cover
    """Stage 1 and the capped filling of :func:`hug_rates`, over the ports and the slots
    (share ``scale · C^i`` each); fills ``rates`` and ``unit`` (stage 1) and returns the
    final rates.

    One pass over the flows computes the stage-1 rates, the resources' residuals and each
    slot's list of flows; a resource saturated at level 0 is filled first, at level 0, so
    its flows keep their stage-1 rates, as in ``fill_levels``. A resource's free weight
    falls by subtraction as its flows freeze, which cancels badly when weights span orders
    of magnitude; ``fill_levels`` recomputes a resource's level from its flows before it
    fills, here the running sums are compensated instead (:func:`_two_sum`), so a filling
    costs O(1) per flow and resource it touches."""
    n = rates.shape[0]
    m = cap.shape[0] // 2
    m2 = 2 * m
    nc = coef.shape[0]
    nres = m2 + nc * m2
    left = np.empty(nres)
    start = np.zeros(nres + 1, dtype=np.int64)  # flows of each slot: CSR
    link_of = np.empty(nres, dtype=np.int64)  # each resource's port (no division below)
    for x in range(nres):
        link = x if x < m2 else (x - m2) % m2
        link_of[x] = link
        left[x] = cap[x] if x < m2 else scale * cap[link]
        if x >= m2:
            start[x + 1] = start[x] + count0[(x - m2) // m2, link]
        else:
            start[x + 1] = 0
    # every flow is listed in its two slots with its other slot (one row: one cache line),
    # and keeps its level and weight side by side; a flow's level is -1 while it is free
    ent = np.empty((start[nres], 2), dtype=np.int64)
    fillp = start[:-1].copy()
    fa = np.empty((n, 2))
    dem = np.zeros(nres)  # free weight of each resource: dem + low
    low = np.zeros(nres)
    count = np.zeros(nres, dtype=np.int64)  # free flows of each resource
    for p in range(n):
        g = group[p]
        s = src[p]
        t = m + dst[p]
        u = rem[p] * min(coef[g, s], coef[g, t])
        r = scale * u
        unit[p] = u
        rates[p] = r
        base = m2 + g * m2
        a = base + s
        b = base + t
        left[s] -= r
        left[t] -= r
        left[a] -= r
        left[b] -= r
        ia = fillp[a]
        ib = fillp[b]
        fillp[a] = ia + 1
        fillp[b] = ib + 1
        ent[ia, 0] = p
        ent[ia, 1] = b
        ent[ib, 0] = p
        ent[ib, 1] = a
        fa[p, 1] = u
        if u > 0.0:
            fa[p, 0] = -1.0
            dem[a], low[a] = _two_sum(dem[a], low[a], u)
            dem[b], low[b] = _two_sum(dem[b], low[b], u)
            count[a] += 1
            count[b] += 1
        else:
            fa[p, 0] = 0.0
    pstart = np.zeros(m2 + 1, dtype=np.int64)  # the slots of each port with free flows
    for x in range(m2, nres):
        if count[x] > 0:
            y = link_of[x]
            dem[y], low[y] = _two_sum(dem[y], low[y], dem[x])
            dem[y], low[y] = _two_sum(dem[y], low[y], low[x])
            count[y] += count[x]
            pstart[y + 1] += 1
    for i in range(m2):
        pstart[i + 1] += pstart[i]
    pslots = np.empty(pstart[m2], dtype=np.int64)
    pf = pstart[:-1].copy()
    for x in range(m2, nres):
        if count[x] > 0:
            pslots[pf[link_of[x]]] = x
            pf[link_of[x]] += 1
    at = np.zeros(nres)  # level of each resource's last change (its residual's)
    stamp = np.full(nres, -1, dtype=np.int64)  # last fill that touched the resource
    heap = [(np.inf, np.int64(0))]
    heap.pop()
    for x in range(nres):
        left[x] = max(left[x], 0.0)
        if count[x] > 0:
            heap.append((0.0 if left[x] <= tol else left[x] / (dem[x] + low[x]), np.int64(x)))
    heapq.heapify(heap)
    # A resource's level only rises as its flows freeze (its free weight falls), so a queued
    # level is a lower bound: when popped, a resource is re-queued at its current level.
    level = 0.0
    pops = 0
    while heap:
        queued, x = heapq.heappop(heap)
        if count[x] == 0:
            continue
        sat = at[x] if left[x] <= tol else at[x] + left[x] / (dem[x] + low[x])
        if sat > queued:
            heapq.heappush(heap, (sat, x))
            continue
        pops += 1
        if sat > level:
            level = sat
        # x fills: the free flows of its slots (x itself, or the slots on port x) freeze.
        # Those slots end without free flows; a slot's port (when x is the slot) loses the
        # slot's free weight at once; each flow's other slot and that slot's port lose the
        # flow's weight (distinct resources for the flows of one slot: no chain of
        # dependent updates). Written out: a kernel call per update costs more than it.
        lo, hi = (x, x + 1) if x >= m2 else (pstart[x], pstart[x + 1])
        for q in range(lo, hi):
            y = x if x >= m2 else pslots[q]
            if count[y] == 0:
                continue
            for j in range(start[y] - 1, start[y + 1]):
                if j < start[y]:  # the slot's port, all its free flows at once
                    z = link_of[y]
                    if z == x:
                        continue
                    w = dem[y]
                    w_low = low[y]  # subtracted apart: rounding dem + low loses the point
                    k = count[y]
                else:  # the flow's other slot, then that slot's port
                    f = ent[j, 0]
                    if fa[f, 0] >= 0.0:
                        continue
                    fa[f, 0] = level
                    z = ent[j, 1]
                    w = fa[f, 1]
                    w_low = 0.0
                    k = 1
                for zz in range(2 if j >= start[y] else 1):
                    if zz == 1:
                        z = link_of[z]
                    if stamp[z] != pops:  # its residual up to `level` at its old weight
                        stamp[z] = pops
                        left[z] = max(left[z] - (level - at[z]) * (dem[z] + low[z]), 0.0)
                        at[z] = level
                    count[z] -= k
                    if count[z] > 0:
                        dem[z], low[z] = _two_sum(dem[z], low[z], -w)
                        low[z] -= w_low
                    else:
                        dem[z] = 0.0
                        low[z] = 0.0
            count[y] = 0
        count[x] = 0
    out = np.empty(n)
    for p in range(n):
        lv = fa[p, 0]
        out[p] = rates[p] + unit[p] * lv if lv > 0.0 else rates[p]
    return out


@njit(cache=True)
def _port_fill(rates, weight, uses, left, tol):  # pragma: no cover
    """``fill_levels(rates, uses, weight, capacity, weight > 0, tol)`` on the ``2m`` ports
    (``uses[f]``: flow ``f``'s ingress and egress port) with the same operations in the same
    order (the same rates bit for bit), from ``left``, the residuals at level 0 (modified).
    What differs is the layout: a flow's level, weight and rate side by side (one cache line
    per flow visited in a resource's scan) and the passes before the sweep fused."""
    n = rates.shape[0]
    nres = left.shape[0]
    rec = np.empty((n, 3))  # per flow: level it froze at (-1: free), weight, rate
    demand = np.zeros(nres)
    count = np.zeros(nres, dtype=np.int64)
    start = np.zeros(nres + 1, dtype=np.int64)  # free flows of each port: CSR
    for f in range(n):
        w = weight[f]
        s = uses[f, 0]
        t = uses[f, 1]
        rec[f, 1] = w
        rec[f, 2] = rates[f]
        if w > 0.0 and left[s] > tol and left[t] > tol:
            rec[f, 0] = -1.0
            demand[s] += w
            demand[t] += w
            count[s] += 1
            count[t] += 1
            start[s + 1] += 1
            start[t + 1] += 1
        else:
            rec[f, 0] = 0.0
    for x in range(nres):
        start[x + 1] += start[x]
    members = np.empty(start[nres], dtype=np.int64)
    fillp = start[:-1].copy()
    for f in range(n):
        if rec[f, 0] < 0.0:
            for j in range(2):
                x = uses[f, j]
                members[fillp[x]] = f
                fillp[x] += 1
    left0 = left.copy()
    at = np.zeros(nres)
    stamp = np.full(nres, -1, dtype=np.int64)
    heap = [(np.inf, np.int64(0))]
    heap.pop()
    for x in range(nres):
        if count[x] > 0:
            heap.append((left[x] / demand[x], np.int64(x)))
    heapq.heapify(heap)
    level = 0.0
    pops = 0
    while heap:  # fill_levels' sweep, step for step
        queued, x = heapq.heappop(heap)
        if count[x] == 0:
            continue
        sat = at[x] if left[x] <= tol else at[x] + left[x] / demand[x]
        if sat > queued:
            heapq.heappush(heap, (sat, x))
            continue
        free_weight = 0.0
        held = left0[x]
        for i in range(start[x], start[x + 1]):
            f = members[i]
            if rec[f, 0] < 0.0:
                free_weight += rec[f, 1]
            else:
                held -= rec[f, 1] * rec[f, 0]
        exact = level if held - free_weight * level <= tol else held / free_weight
        if exact > queued:
            at[x] = level
            demand[x] = free_weight
            left[x] = max(held - free_weight * level, 0.0)
            heapq.heappush(heap, (exact, x))
            continue
        pops += 1
        if exact > level:
            level = exact
        for i in range(start[x], start[x + 1]):
            f = members[i]
            if rec[f, 0] >= 0.0:
                continue
            rec[f, 0] = level
            w = rec[f, 1]
            rec[f, 2] += w * level
            for j in range(2):
                y = uses[f, j]
                if stamp[y] != pops:
                    stamp[y] = pops
                    left[y] = max(left[y] - (level - at[y]) * demand[y], 0.0)
                    at[y] = level
                count[y] -= 1
                demand[y] = demand[y] - w if count[y] > 0 else 0.0
    return rec[:, 2].copy()


@njit(cache=True)
def naive_backfill(rates, group, src, dst, cap, limit, rank, nc):  # pragma: no cover
    """Coflex's NaiveTradeoff stage 2 (INFOCOM 2017, §III-A, Algorithm 1): in SEBF order of
    the coflows (``rank``: coflow positions, first served first), then in the order of the
    active flows, each flow takes what is left on both its ports, up to its coflow holding
    ``limit[i]`` (``α P* C^i``) on each link ``i``. Returns the new rates."""
    n = rates.shape[0]
    m = cap.shape[0] // 2
    m2 = 2 * m
    used_in = np.zeros(m2)
    used_out = np.zeros(m2)
    held = np.zeros((nc, m2))
    count = np.zeros(nc + 1, dtype=np.int64)
    for p in range(n):
        g = group[p]
        s = src[p]
        t = m + dst[p]
        used_in[s] += rates[p]
        used_out[t] += rates[p]
        held[g, s] += rates[p]
        held[g, t] += rates[p]
        count[g + 1] += 1
    res = np.empty(m2)
    for i in range(m2):
        res[i] = cap[i] - used_in[i] - used_out[i]
    for j in range(nc):
        count[j + 1] += count[j]
    order = np.empty(n, dtype=np.int64)  # flows by coflow, stably (counting sort)
    fillp = count[:-1].copy()
    for p in range(n):
        order[fillp[group[p]]] = p
        fillp[group[p]] += 1
    out = rates.copy()
    for q in range(nc):
        g = rank[q]
        for o in range(count[g], count[g + 1]):
            p = order[o]
            i = src[p]
            j = m + dst[p]
            add = min(res[i], res[j], limit[i] - held[g, i], limit[j] - held[g, j])
            if add > 0.0:
                out[p] += add
                res[i] -= add
                res[j] -= add
                held[g, i] += add
                held[g, j] += add
    return out
