"""Numba kernels of coflowlab.allocation, at module level: numba's disk cache finds a kernel again
in a new process only when the kernels it calls are module globals, not closures."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def greedy(order, src, dst, res_in, res_out, rates, demand):  # pragma: no cover - numba
    for k in range(order.shape[0]):
        i = order[k]
        s = src[i]
        d = dst[i]
        x = res_in[s]
        if res_out[d] < x:
            x = res_out[d]
        if demand[i] < x:
            x = demand[i]
        if x > 0.0:
            rates[i] += x
            res_in[s] -= x
            res_out[d] -= x
    return rates


@njit(cache=True)
def lowest(level):  # pragma: no cover - numba
    # The first port of lowest level (-1 if all are inf). Four running minima, because
    # one is a chain of dependent comparisons: this scan is most of a round's work.
    n = level.shape[0]
    b0 = b1 = b2 = b3 = np.inf
    q = 0
    while q + 4 <= n:
        b0 = min(b0, level[q])
        b1 = min(b1, level[q + 1])
        b2 = min(b2, level[q + 2])
        b3 = min(b3, level[q + 3])
        q += 4
    while q < n:
        b0 = min(b0, level[q])
        q += 1
    best = min(min(b0, b1), min(b2, b3))
    if best == np.inf:
        return -1, best
    p = 0
    while level[p] != best:
        p += 1
    return p, best


@njit(cache=True)
def maxmin(src, dst, cap_in, cap_out, weight, demand, by_demand):  # pragma: no cover
    # Progressive filling on a flow list (the general case: demands, or few flows on
    # many ports). Each port's fill level (residual capacity / weight of its unfrozen
    # flows) is kept up to date; every round freezes the flows of the port with the
    # lowest level, found through port -> flow adjacency (CSR), or the flow that
    # reaches its demand first. O(flows + ports²).
    n = src.shape[0]
    m = cap_in.shape[0]
    P = 2 * m
    rates = np.zeros(n)
    res = np.empty(P)
    res[:m] = cap_in
    res[m:] = cap_out
    wsum = np.zeros(P)
    count = np.zeros(P, dtype=np.int64)
    for i in range(n):
        wsum[src[i]] += weight[i]
        wsum[m + dst[i]] += weight[i]
        count[src[i]] += 1
        count[m + dst[i]] += 1
    ptr = np.zeros(P + 1, dtype=np.int64)
    for p in range(P):
        ptr[p + 1] = ptr[p] + count[p]
    fill = ptr[:-1].copy()
    members = np.empty(2 * n, dtype=np.int64)
    for i in range(n):
        members[fill[src[i]]] = i
        fill[src[i]] += 1
        members[fill[m + dst[i]]] = i
        fill[m + dst[i]] += 1
    level = np.full(P, np.inf)
    for p in range(P):
        if count[p] > 0:
            level[p] = res[p] / wsum[p]
    frozen = np.zeros(n, dtype=np.bool_)
    nd = by_demand.shape[0]  # flows with a finite demand, by demand / weight
    dp = 0
    left = n
    while left > 0:
        bp, best = lowest(level)
        while dp < nd and frozen[by_demand[dp]]:
            dp += 1
        demand_first = False
        if dp < nd:
            j = by_demand[dp]
            demand_first = demand[j] / weight[j] <= best
        if not demand_first and bp < 0:
            break
        if demand_first:
            lo = dp
            hi = dp + 1
            lev = -1.0
        else:
            lo = ptr[bp]
            hi = ptr[bp + 1]
            lev = best if best > 0.0 else 0.0
        for k in range(lo, hi):
            i = by_demand[k] if demand_first else members[k]
            if frozen[i]:
                continue
            r = demand[i] if demand_first else weight[i] * lev
            frozen[i] = True
            rates[i] = r
            left -= 1
            a = src[i]
            b = m + dst[i]
            res[a] -= r
            res[b] -= r
            wsum[a] -= weight[i]
            wsum[b] -= weight[i]
            count[a] -= 1
            count[b] -= 1
            level[a] = res[a] / wsum[a] if count[a] > 0 else np.inf
            level[b] = res[b] / wsum[b] if count[b] > 0 else np.inf
        if not demand_first:
            level[bp] = np.inf
            res[bp] = 0.0
    return rates


@njit(cache=True)
def maxmin_pairs(weight, cap_in, cap_out):  # pragma: no cover - numba
    # Progressive filling on an (ingress x egress) weight matrix. A pair is frozen when
    # the first of its two ports fills, so a round freezes one row or column of the
    # pairs still open; the result is the level at which each port froze.
    # O(m² + rounds·m): no per-pair state, hence no per-pair work beyond one pass.
    mi, mo = weight.shape
    P = mi + mo
    res = np.empty(P)
    res[:mi] = cap_in
    res[mi:] = cap_out
    wsum = np.zeros(P)
    count = np.zeros(P, dtype=np.int64)  # open pairs at each port
    for i in range(mi):  # branch-free: whether a pair exists is unpredictable
        row_sum = 0.0
        row_count = 0
        for j in range(mo):
            w = weight[i, j]
            row_sum += w
            wsum[mi + j] += w
            row_count += w > 0.0
            count[mi + j] += w > 0.0
        wsum[i] = row_sum
        count[i] = row_count
    level = np.full(P, np.inf)
    for p in range(P):
        if count[p] > 0:
            level[p] = res[p] / wsum[p]
    frozen_at = np.full(P, np.inf)
    while True:
        bp, best = lowest(level)
        if bp < 0:
            break
        lev = best if best > 0.0 else 0.0  # rounding may leave a port a hair below 0
        frozen_at[bp] = lev
        level[bp] = np.inf
        count[bp] = 0
        # Freeze the open pairs of the port that filled and update their other ports.
        # A pair is open iff its other port still is (a port closes when it fills or
        # when its last pair is frozen). Two copies of one loop: row, then column.
        if bp < mi:
            for j in range(mo):
                w = weight[bp, j]
                b = mi + j
                if w > 0.0 and count[b] > 0:
                    res[b] -= w * lev
                    wsum[b] -= w
                    count[b] -= 1
                    level[b] = res[b] / wsum[b] if count[b] > 0 else np.inf
        else:
            for i in range(mi):
                w = weight[i, bp - mi]
                if w > 0.0 and count[i] > 0:
                    res[i] -= w * lev
                    wsum[i] -= w
                    count[i] -= 1
                    level[i] = res[i] / wsum[i] if count[i] > 0 else np.inf
    return frozen_at


@njit(cache=True)
def madd_kernel(ptr, flows, remaining, src, dst, res_in, res_out, rates, gammas, tau, full):
    # pragma: no cover - numba
    # A port with at most ``full`` free capacity counts as full: a coflow needing it has
    # Γ = inf and gets nothing (``full`` = 0: only a port with no capacity left).
    m = res_in.shape[0]
    load_in = np.zeros(m)
    load_out = np.zeros(m)
    for c in range(ptr.shape[0] - 1):
        lo = ptr[c]
        hi = ptr[c + 1]
        gamma = 0.0
        for k in range(lo, hi):
            i = flows[k]
            load_in[src[i]] += remaining[i]
            load_out[dst[i]] += remaining[i]
        for k in range(lo, hi):
            i = flows[k]
            a = src[i]
            b = dst[i]
            if load_in[a] > 0.0:
                g = load_in[a] / res_in[a] if res_in[a] > full else np.inf
                if g > gamma:
                    gamma = g
            if load_out[b] > 0.0:
                g = load_out[b] / res_out[b] if res_out[b] > full else np.inf
                if g > gamma:
                    gamma = g
        for k in range(lo, hi):
            i = flows[k]
            load_in[src[i]] = 0.0
            load_out[dst[i]] = 0.0
        t = gamma
        if tau[c] > 0.0:  # a desired duration (deadline mode) instead of Γ
            t = tau[c] if tau[c] >= gamma else np.inf
        gammas[c] = gamma
        if not np.isfinite(t) or t <= 0.0:
            continue
        for k in range(lo, hi):
            i = flows[k]
            r = remaining[i] / t
            rates[i] = r
            res_in[src[i]] -= r
            res_out[dst[i]] -= r
        for k in range(lo, hi):
            i = flows[k]
            if res_in[src[i]] < 0.0:
                res_in[src[i]] = 0.0
            if res_out[dst[i]] < 0.0:
                res_out[dst[i]] = 0.0
    return rates


@njit(cache=True)
def share_kernel(flows, src, dst, res_in, res_out, rates, least):  # pragma: no cover
    # Equal per-port split: each listed flow gets min(free ingress / n_in, free egress /
    # n_out), n counting the listed flows at each port; the shares are taken together.
    # A share of at most ``least`` (a rounding crumb) is not given.
    m_in = res_in.shape[0]
    m_out = res_out.shape[0]
    n_in = np.zeros(m_in, dtype=np.int64)
    n_out = np.zeros(m_out, dtype=np.int64)
    for k in range(flows.shape[0]):
        i = flows[k]
        n_in[src[i]] += 1
        n_out[dst[i]] += 1
    for k in range(flows.shape[0]):
        i = flows[k]
        x = res_in[src[i]] / n_in[src[i]]
        y = res_out[dst[i]] / n_out[dst[i]]
        if y < x:
            x = y
        if x > least and x > 0.0:
            rates[i] += x
    return rates
