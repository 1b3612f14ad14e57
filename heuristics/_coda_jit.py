"""Numba kernels of CODA's compiled decision path (:class:`coflowlab.heuristics.coda.Coda`,
``compiled=True``), at module level so that numba's disk cache finds them again in a new
process.

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
