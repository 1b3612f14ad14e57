"""Numba kernels of the compiled decisions of HUG, DRF and Coflex (``fast=True``), at module
level (numba's disk cache finds a kernel again in a new process only when it is a module
global).

The policies are Chowdhury's HUG (PhD thesis, UC Berkeley 2015, Ch. 7, Algorithm 6, §7.5.1),
DRF (Ghodsi et al., NSDI 2011; thesis §7.3.2) and Coflex (Wang, Ma, Li, Li, IEEE INFOCOM
2017, §II-C, §III-A Algorithm 1); :mod:`.correlation` states the model.

- :func:`group_loads`, :func:`correlate`, :func:`unit_rates` and :func:`naive_backfill`
  repeat the NumPy reference's floating-point operations in its order (sums in the order of
  the active flows, as ``np.bincount`` adds them): the grouping, Γ, d, DRF's, Coflex's and
  Coflex-naive's rates are the reference's bit for bit; what they save is the temporaries
  and the Python loops.
- :func:`hug_rates` is HUG's whole decision after the grouping, its rates the reference's
  to roundings (tests/heuristics/test_correlation_fast.py bounds the difference). Capped
  (``hug``), its progressive filling is organised by *slot* (one coflow on one link: HUG's
  cap is per slot, and a port's flows are its slots' flows); uncapped
  (``hug-cooperative``), by *port pair* (the flows of a pair freeze together).
"""

from __future__ import annotations

import heapq

import numpy as np
from numba import njit

from coflowlab._flow_state_jit import RATE, SENT, SINCE


@njit(cache=True)
def group_loads(
    flows, sent, flow_size, flow_coflow, flow_src, flow_dst, m, pos, load_rows, count_rows,
    counts,
):  # pragma: no cover  # fmt: skip
    """Groups the active ``flows`` by coflow (as ``np.unique(..., return_inverse=True)``)
    and sums each coflow's remaining bytes per link in the order of the flows. A flow's
    remaining bytes are ``flow_size - sent``, clamped at 0 (as
    ``np.maximum(state.remaining, 0)``: the same operations, without the state's gathers).
    The work is :func:`_group_loads`'s (documented there)."""
    return _group_loads(
        flows, sent, np.empty((0, 4)), 0.0, flow_size, flow_coflow, flow_src, flow_dst, m,
        pos, load_rows, count_rows, counts,
    )  # fmt: skip


@njit(cache=True)
def group_loads_at(
    flows, t, rows, flow_size, flow_coflow, flow_src, flow_dst, m, pos, load_rows,
    count_rows, counts,
):  # pragma: no cover  # fmt: skip
    """:func:`group_loads` with each flow's bytes sent read from the simulator's flow rows
    (:mod:`coflowlab._flow_state_jit`) at ``t``, with ``FlowState.sent``'s operations
    (``sent + rate (t - since)``): the same floats, without a pass that writes them out
    (HUG's compiled event loop, :mod:`.hug_classes`)."""
    return _group_loads(
        flows, np.empty(0), rows, t, flow_size, flow_coflow, flow_src, flow_dst, m, pos,
        load_rows, count_rows, counts,
    )  # fmt: skip


@njit(cache=True)
def _sent(p, f, sent, frows, t):  # pragma: no cover
    """Flow ``f``'s bytes sent: ``sent[p]``, or from its row at ``t`` when ``frows`` has
    rows (``FlowState.sent``'s operations)."""
    if frows.shape[0] == 0:
        return sent[p]
    return frows[f, SENT] + frows[f, RATE] * (t - frows[f, SINCE])


@njit(cache=True)
def _group_loads(
    flows, sent, frows, now, flow_size, flow_coflow, flow_src, flow_dst, m, pos, load_rows,
    count_rows, counts,
):  # pragma: no cover  # fmt: skip
    """The grouping of :func:`group_loads` and :func:`group_loads_at` (bytes sent from
    ``sent``, or from the flow rows ``frows`` at ``now`` when it has rows).

    When the coflows of ``flows`` never decrease (flows in increasing order, coflows
    numbered in flow order, as on the trace), one pass: a coflow's position is known when
    it first shows, and its loads and counts are summed in the scratch rows ``load_rows``
    and ``count_rows`` (zeros on entry and on return) until the number of coflows is known.
    Otherwise, or with more coflows than scratch rows, a first pass finds the coflows
    (``pos``: scratch indexed by coflow, all -1 on entry and on return). Returns ``ids``
    (increasing), ``group``, ``src``, ``dst``, ``rem``, ``load`` ``(nc, 2m)`` and ``count``
    ``(nc, 2m)``, the number of active flows of each coflow on each link (all 0 unless
    ``counts``: only HUG's capped filling needs them)."""
    n = flows.shape[0]
    m2 = 2 * m
    rows = load_rows.shape[0]
    group = np.empty(n, dtype=np.int64)
    src = np.empty(n, dtype=np.int64)
    dst = np.empty(n, dtype=np.int64)
    rem = np.empty(n)
    seen = np.empty(n, dtype=np.int64)
    nc = 0
    prev = -1
    ordered = True
    for p in range(n):
        f = flows[p]
        c = flow_coflow[f]
        if c != prev:
            if c < prev or nc == rows:
                ordered = False
                break
            seen[nc] = c
            nc += 1
            prev = c
        g = nc - 1
        s = flow_src[f]
        t = flow_dst[f]
        r = flow_size[f] - _sent(p, f, sent, frows, now)
        r = r if r > 0.0 else 0.0  # np.maximum(remaining, 0.0)
        group[p] = g
        src[p] = s
        dst[p] = t
        rem[p] = r
        load_rows[g, s] += r  # ingress and egress cells are disjoint: same sums as two bincounts
        load_rows[g, m + t] += r
        if counts:
            count_rows[g, s] += 1
            count_rows[g, m + t] += 1
    if ordered:
        load = load_rows[:nc].copy()
        count = count_rows[:nc].copy()
    load_rows[:nc] = 0.0
    count_rows[:nc] = 0
    if ordered:
        return seen[:nc].copy(), group, src, dst, rem, load, count
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
    load = np.zeros((nc, m2))
    count = np.zeros((nc, m2), dtype=np.int64)
    for p in range(n):
        f = flows[p]
        g = pos[flow_coflow[f]]
        s = flow_src[f]
        t = flow_dst[f]
        r = flow_size[f] - _sent(p, f, sent, frows, now)
        r = r if r > 0.0 else 0.0
        group[p] = g
        src[p] = s
        dst[p] = t
        rem[p] = r
        load[g, s] += r
        load[g, m + t] += r
        if counts:
            count[g, s] += 1
            count[g, m + t] += 1
    for j in range(nc):
        pos[ids[j]] = -1
    return ids, group, src, dst, rem, load, count


@njit(cache=True)
def correlate(load, cap):  # pragma: no cover
    """Γ and d from the loads ``(nc, 2m)``, the operations of the NumPy ``_correlate`` of
    :mod:`.correlation` (the same values bit for bit): ``load / C`` per link (``inf`` for
    bytes on a link without capacity), Γ its largest entry per coflow, ``d`` the ratio."""
    nc = load.shape[0]
    m2 = load.shape[1]
    gamma = np.zeros(nc)
    d = np.zeros((nc, m2))
    for g in range(nc):
        worst = -np.inf
        for x in range(m2):
            v = load[g, x]
            v = v / cap[x] if cap[x] > 0.0 else (np.inf if v > 0.0 else 0.0)
            d[g, x] = v
            worst = max(worst, v)
        gamma[g] = worst
        if worst > 0.0:
            for x in range(m2):
                d[g, x] = d[g, x] / worst
        else:
            d[g, :] = 0.0
    return gamma, d


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
def hug_rates(
    group, src, dst, rem, load, count, d, cap, p_star, capped, tol, pair
):  # pragma: no cover
    """HUG's rates (thesis Algorithm 6): stage 1 ``P* ·`` the unit rates, then stage 2, the
    weighted progressive filling of :func:`coflowlab.heuristics.correlation.fill` along the
    unit rates, capped at ``P* C^i`` per coflow and link when ``capped``. ``count`` is
    :func:`group_loads`'; ``pair`` is scratch of ``m²`` entries, all -1 on entry and on
    return. Returns ``(rates, unit)``.

    A flow's unit rate is its remaining bytes times the smaller of its coflow's
    ``d C / load`` at its two ports (the reference divides per flow): roundings apart, the
    reference's. Capped (``hug``, :func:`_slot_fill`), the filling's resources are the
    ``2m`` ports and each coflow's share of each link (a *slot*). Uncapped
    (``hug-cooperative``), a flow's only resources are its two ports, so the flows of one
    port pair freeze together: the filling runs on the port pairs (:func:`_pair_levels`),
    each weighing its flows' unit rates, and a flow gets its pair's level. The rates differ
    from the reference's by roundings only."""
    n = group.shape[0]
    m = cap.shape[0] // 2
    m2 = 2 * m
    nc = load.shape[0]
    coef = np.zeros((nc, m2))  # a flow's unit rate per remaining byte, at each of its ports
    for g in range(nc):
        for x in range(m2):
            if load[g, x] > 0.0:
                coef[g, x] = d[g, x] * cap[x] / load[g, x]
    scale = p_star if np.isfinite(p_star) else 1.0
    unit = np.empty(n)
    if capped:
        return _slot_fill(unit, coef, count, group, src, dst, rem, cap, scale, tol), unit
    # one pass: stage 1, the ports' residuals, each flow's pair and each pair's weight (a
    # sum of positive terms: no cancellation to compensate)
    left = cap.copy()
    of = np.empty(n, dtype=np.int64)
    size = min(n, m * m)
    weight = np.zeros(size)
    ends = np.empty((size, 2), dtype=np.int64)
    npairs = 0
    for p in range(n):
        g = group[p]
        s = src[p]
        t = m + dst[p]
        u = rem[p] * min(coef[g, s], coef[g, t])
        r = scale * u
        unit[p] = u
        left[s] -= r
        left[t] -= r
        key = s * m + dst[p]
        k = pair[key]
        if k < 0:
            k = npairs
            pair[key] = k
            ends[k, 0] = s
            ends[k, 1] = t
            npairs += 1
        of[p] = k
        weight[k] += u
    for k in range(npairs):
        pair[ends[k, 0] * m + ends[k, 1] - m] = -1
    for x in range(m2):
        if left[x] < 0.0:
            left[x] = 0.0
    level = _pair_levels(weight[:npairs], ends[:npairs], left, tol)
    out = np.empty(n)
    for p in range(n):
        lv = level[of[p]]
        u = unit[p]
        r = scale * u  # stage 1, then the filling's share
        out[p] = r + u * lv if lv > 0.0 else r
    return out, unit


@njit(cache=True)
def _two_sum(hi, lo, w):  # pragma: no cover
    """``hi + lo + w`` as a new ``(hi, lo)``, the rounding error of the addition kept in
    ``lo`` (Knuth's TwoSum): a running sum that loses nothing when its terms cancel."""
    s = hi + w
    bp = s - hi
    return s, lo + ((hi - (s - bp)) + (w - bp))


@njit(cache=True)
def _slot_fill(unit, coef, count0, group, src, dst, rem, cap, scale, tol):  # pragma: no cover
    """Stage 1 and the capped filling of :func:`hug_rates`, over the ports and the slots
    (share ``scale · C^i`` each); fills ``unit`` (the stage-1 rates are ``scale · unit``)
    and returns the final rates.

    One pass over the flows computes the unit rates, each slot's free weight and list of
    flows; the residuals at level 0 follow from the weights (stage 1 puts ``scale`` times
    them on every resource). A resource saturated at level 0 is filled first, at level 0,
    so its flows keep their stage-1 rates, as in ``fill_levels``. A slot's free weight
    falls by subtraction as its flows freeze, which cancels badly when weights span orders
    of magnitude; ``fill_levels`` recomputes a resource's level from its flows before it
    fills, here the running sums are compensated instead (:func:`_two_sum`), so a filling
    costs O(1) per flow it freezes; a port's weight and residual are summed from its slots
    (one per active coflow) when it is popped."""
    n = unit.shape[0]
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
    # every flow is listed in its two slots with its other slot (a float: exact below 2^53)
    # and its weight, one 16-byte row read in sequence when a slot fills. A flow freezes
    # when the first of its slots fills (a port that fills fills its slots): it is free
    # while its other slot is open, and its level is the smaller of its slots' `closing`
    # levels, so no per-flow state is read or written during the filling
    ent = np.empty((start[nres], 2))
    fillp = start[:-1].copy()
    dem = np.zeros(nres)  # free weight of each resource: dem + low
    low = np.zeros(nres)
    count = np.zeros(nres, dtype=np.int64)  # free flows of each resource
    for x in range(m2, nres):
        count[x] = start[x + 1] - start[x]
    for p in range(n):
        g = group[p]
        s = src[p]
        t = m + dst[p]
        u = rem[p] * min(coef[g, s], coef[g, t])
        unit[p] = u
        base = m2 + g * m2
        a = base + s
        b = base + t
        ia = fillp[a]
        ib = fillp[b]
        fillp[a] = ia + 1
        fillp[b] = ib + 1
        ent[ia, 0] = b
        ent[ia, 1] = u
        ent[ib, 0] = a
        ent[ib, 1] = u
        if u > 0.0:
            dem[a], low[a] = _two_sum(dem[a], low[a], u)
            dem[b], low[b] = _two_sum(dem[b], low[b], u)
        else:  # no weight: frozen at once
            count[a] -= 1
            count[b] -= 1
    # stage 1 puts `scale` times its free weight on every resource (the rates of the
    # flows without weight are 0): the residuals at level 0
    for x in range(m2, nres):
        left[x] -= scale * (dem[x] + low[x])
    pstart = np.zeros(m2 + 1, dtype=np.int64)  # the slots of each port with free flows
    for x in range(m2, nres):
        if count[x] > 0:
            y = link_of[x]
            dem[y], low[y] = _two_sum(dem[y], low[y], dem[x])
            dem[y], low[y] = _two_sum(dem[y], low[y], low[x])
            count[y] += count[x]
            pstart[y + 1] += 1
    for i in range(m2):
        left[i] -= scale * (dem[i] + low[i])
        pstart[i + 1] += pstart[i]
    pslots = np.empty(pstart[m2], dtype=np.int64)
    pf = pstart[:-1].copy()
    for x in range(m2, nres):
        if count[x] > 0:
            pslots[pf[link_of[x]]] = x
            pf[link_of[x]] += 1
    left0 = left.copy()
    at = np.zeros(nres)  # level of each slot's last change (its residual's)
    stamp = np.full(nres, -1, dtype=np.int64)  # last fill that touched the slot
    closing = np.full(nres, np.inf)  # the level at which each slot filled
    heap = [(np.inf, np.int64(0))]
    heap.pop()
    for x in range(nres):
        left[x] = max(left[x], 0.0)
        left0[x] = left[x]
        if count[x] > 0:
            heap.append((0.0 if left[x] <= tol else left[x] / (dem[x] + low[x]), np.int64(x)))
    heapq.heapify(heap)
    # A resource's level only rises as its flows freeze (its free weight falls), so a queued
    # level is a lower bound: when popped, a resource is re-queued at its current level.
    # A port's free weight and residual are not kept up to date flow by flow: a port's
    # flows are its slots' flows, so when a port is popped they are summed from its slots
    # (a few: one per active coflow), each slot's residual brought up to the level.
    level = 0.0
    pops = 0
    while heap:
        queued, x = heapq.heappop(heap)
        if x >= m2:
            if count[x] == 0:
                continue
            free_weight = dem[x] + low[x]
            rest = left[x] - (level - at[x]) * free_weight
        else:
            free_weight = 0.0
            used = 0.0
            for q in range(pstart[x], pstart[x + 1]):
                y = pslots[q]
                wy = dem[y] + low[y] if count[y] > 0 else 0.0
                free_weight += wy
                used += left0[y] - max(left[y] - (level - at[y]) * wy, 0.0)
            if free_weight <= 0.0:
                continue
            rest = left0[x] - used
        sat = level if rest <= tol else level + rest / free_weight
        if sat > queued:
            heapq.heappush(heap, (sat, x))
            continue
        pops += 1
        if sat > level:
            level = sat
        # x fills: the free flows of its slots (x itself, or the slots on port x) freeze.
        # Those slots end without free flows, their residuals brought to `level`; each
        # flow's other slot loses the flow's weight (distinct slots for the flows of one
        # slot: no chain of dependent updates).
        lo, hi = (x, x + 1) if x >= m2 else (pstart[x], pstart[x + 1])
        for q in range(lo, hi):
            y = x if x >= m2 else pslots[q]
            if count[y] == 0:
                continue
            closing[y] = level
            left[y] = max(left[y] - (level - at[y]) * (dem[y] + low[y]), 0.0)
            at[y] = level
            dem[y] = 0.0
            low[y] = 0.0
            count[y] = 0
            for j in range(start[y], start[y + 1]):
                z = np.int64(ent[j, 0])
                w = ent[j, 1]
                if closing[z] < np.inf or w <= 0.0:
                    continue
                if stamp[z] != pops:  # its residual up to `level` at its old weight
                    stamp[z] = pops
                    left[z] = max(left[z] - (level - at[z]) * (dem[z] + low[z]), 0.0)
                    at[z] = level
                count[z] -= 1
                if count[z] > 0:
                    dem[z], low[z] = _two_sum(dem[z], low[z], -w)
                else:
                    dem[z] = 0.0
                    low[z] = 0.0
    out = np.empty(n)
    for p in range(n):
        base = m2 + group[p] * m2
        lv = min(closing[base + src[p]], closing[base + m + dst[p]])
        # stage 1, then the filling's share; a flow without weight keeps its stage-1 rate
        # (its slots may never fill: lv = inf)
        u = unit[p]
        r = scale * u
        out[p] = r + u * lv if lv > 0.0 and u > 0.0 else r
    return out


@njit(cache=True)
def _pair_levels(weight, ends, left, tol):  # pragma: no cover
    """The uncapped filling of :func:`hug_rates` on the port pairs: pair ``k`` (ports
    ``ends[k]``) rises at ``weight[k]`` per unit of a common level until one of its ports is
    full; ``left`` holds the ports' residuals at level 0 (modified). Returns each pair's
    level (0: frozen at once, a port already full or no weight).

    The order of ``fill_levels``: a port's running free weight only falls, so a queued
    saturation level is a lower bound; when a port is popped, its free weight and residual
    are recomputed from its pairs (at most ``m``: cheap) before it fills, so the running
    sums' cancellations never decide a level."""
    npairs = weight.shape[0]
    nres = left.shape[0]
    level = np.zeros(npairs)
    free = np.zeros(npairs, dtype=np.bool_)
    demand = np.zeros(nres)
    count = np.zeros(nres, dtype=np.int64)
    start = np.zeros(nres + 1, dtype=np.int64)  # free pairs of each port: CSR
    for k in range(npairs):
        s = ends[k, 0]
        t = ends[k, 1]
        if weight[k] > 0.0 and left[s] > tol and left[t] > tol:
            free[k] = True
            demand[s] += weight[k]
            demand[t] += weight[k]
            count[s] += 1
            count[t] += 1
            start[s + 1] += 1
            start[t + 1] += 1
    for x in range(nres):
        start[x + 1] += start[x]
    members = np.empty(start[nres], dtype=np.int64)
    fillp = start[:-1].copy()
    for k in range(npairs):
        if free[k]:
            for j in range(2):
                x = ends[k, j]
                members[fillp[x]] = k
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
    current = 0.0
    pops = 0
    while heap:
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
            k = members[i]
            if free[k]:
                free_weight += weight[k]
            else:
                held -= weight[k] * level[k]
        exact = current if held - free_weight * current <= tol else held / free_weight
        if exact > queued:
            at[x] = current
            demand[x] = free_weight
            left[x] = max(held - free_weight * current, 0.0)
            heapq.heappush(heap, (exact, x))
            continue
        pops += 1
        if exact > current:
            current = exact
        for i in range(start[x], start[x + 1]):
            k = members[i]
            if not free[k]:
                continue
            free[k] = False
            level[k] = current
            w = weight[k]
            for j in range(2):
                y = ends[k, j]
                if stamp[y] != pops:  # its residual up to `current` at its old demand
                    stamp[y] = pops
                    left[y] = max(left[y] - (current - at[y]) * demand[y], 0.0)
                    at[y] = current
                count[y] -= 1
                demand[y] = demand[y] - w if count[y] > 0 else 0.0
    return level


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
