"""Numba kernels of coflowlab.heuristics.fair, at module level: numba's disk cache finds a kernel
again in a new process only when the kernels it calls are module globals, not closures."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def apply(order, pos, start, count, weight, pair, arrived, completed, touched, epoch):
    # pragma: no cover - numba
    # Active flows of pair p are order[start[p] : start[p] + count[p]]. An arrival is
    # swapped to the end of that prefix, a completion with its last element: O(1) each.
    for k in range(arrived.shape[0]):
        f = arrived[k]
        p = pair[f]
        swap(order, pos, pos[f], start[p] + count[p])
        count[p] += 1
        weight[p] = count[p]
        touched[p] = epoch
    for k in range(completed.shape[0]):
        f = completed[k]
        p = pair[f]
        count[p] -= 1
        weight[p] = count[p]
        swap(order, pos, pos[f], start[p] + count[p])


@njit(cache=True)
def swap(order, pos, a, b):  # pragma: no cover - numba
    f = order[a]
    g = order[b]
    order[a] = g
    order[b] = f
    pos[g] = a
    pos[f] = b


@njit(cache=True)
def emit(order, start, count, level, level_in, level_out, touched, epoch):
    # pragma: no cover - numba
    # New rate of every pair; the flows of the pairs whose rate changed, or that gained
    # a flow (it has no rate yet even if its pair's rate stays), get it. The first pass
    # is branch-free (which pairs change is unpredictable); the second copies flows.
    m = level_in.shape[0]
    changed = np.empty(m * m, dtype=np.int64)
    n_changed = 0
    n_flows = 0
    for i in range(m):
        for j in range(m):
            p = i * m + j
            new = min(level_in[i], level_out[j])
            # no port limits it (infinite capacity): no rate, as in max_min_fair
            new = new if np.isfinite(new) and count[p] > 0 else 0.0
            change = count[p] > 0 and (new != level[p] or touched[p] == epoch)
            level[p] = new
            changed[n_changed] = p
            n_changed += change
            n_flows += count[p] * change
    flows = np.empty(n_flows, dtype=np.int64)
    rates = np.empty(n_flows)
    n = 0
    for k in range(n_changed):
        p = changed[k]
        for q in range(start[p], start[p] + count[p]):
            flows[n] = order[q]
            rates[n] = level[p]
            n += 1
    return flows, rates
