"""Numba kernel of :func:`coflowlab.heuristics.correlation.fill`, at module level (numba's
disk cache finds a kernel again in a new process only when it is a module global).

Weighted progressive filling as a sweep over a common level ``L``: a free flow's rate is its
start rate plus ``weight · L``. A *resource* is a port (``2m`` of them) or, with HUG's cap, one
coflow's share of one port. Each resource keeps its residual at the level of its last change
and the total weight of its free flows, so its saturation level is known without touching its
flows; a heap yields the next resource to fill. Every flow is frozen once, so one fill costs
``O((flows + resources) log)`` instead of one pass over every flow per saturated resource.
"""

from __future__ import annotations

import heapq

import numpy as np
from numba import njit


@njit(cache=True)
def fill_levels(rates, uses, weight, capacity, free, tol):  # pragma: no cover
    """Raises the rates of the ``free`` flows at ``weight`` per unit of level until a
    resource of theirs (row ``uses[f]``: the resources flow ``f`` uses, -1 for none) has at
    most ``tol`` left of ``capacity``; returns the new rates."""
    n = rates.shape[0]
    k = uses.shape[1]
    nres = capacity.shape[0]
    r = rates.copy()
    left = capacity.copy()  # residual at level `at`
    for f in range(n):
        for j in range(k):
            x = uses[f, j]
            if x >= 0:
                left[x] -= r[f]
    for x in range(nres):
        if left[x] < 0.0:
            left[x] = 0.0
    is_free = free.copy()
    for f in range(n):
        if is_free[f]:
            for j in range(k):
                x = uses[f, j]
                if x >= 0 and left[x] <= tol:
                    is_free[f] = False
    demand = np.zeros(nres)
    count = np.zeros(nres, dtype=np.int64)
    start = np.zeros(nres + 1, dtype=np.int64)  # flows of each resource: CSR
    for f in range(n):
        if is_free[f]:
            for j in range(k):
                x = uses[f, j]
                if x >= 0:
                    demand[x] += weight[f]
                    count[x] += 1
                    start[x + 1] += 1
    for x in range(nres):
        start[x + 1] += start[x]
    members = np.empty(start[nres], dtype=np.int64)
    fillp = start[:-1].copy()
    for f in range(n):
        if is_free[f]:
            for j in range(k):
                x = uses[f, j]
                if x >= 0:
                    members[fillp[x]] = f
                    fillp[x] += 1
    left0 = left.copy()  # residual at level 0
    frozen_at = np.zeros(n)  # level at which each flow froze
    at = np.zeros(nres)  # level of each resource's last change
    stamp = np.full(nres, -1, dtype=np.int64)  # last pop that touched the resource
    heap = [(np.inf, np.int64(0))]
    heap.pop()
    for x in range(nres):
        if count[x] > 0:
            heap.append((left[x] / demand[x], np.int64(x)))
    heapq.heapify(heap)
    # A resource's saturation level only rises as its flows freeze (its demand falls), so
    # an entry in the heap is a lower bound: it is re-queued at its true level when popped.
    # The running residuals and demands are updated by subtraction, which cancels badly
    # when weights span orders of magnitude; before a resource is filled its saturation
    # level is recomputed from its flows, so no port ends over its capacity by more than
    # rounding.
    level = 0.0
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
            f = members[i]
            if is_free[f]:
                free_weight += weight[f]
            else:
                held -= weight[f] * frozen_at[f]
        exact = level if held - free_weight * level <= tol else held / free_weight
        if exact > queued:  # the running values were off: restart them from the exact ones
            at[x] = level
            demand[x] = free_weight
            left[x] = max(held - free_weight * level, 0.0)
            heapq.heappush(heap, (exact, x))
            continue
        pops += 1
        if exact > level:
            level = exact
        # resource x is full at `level`: freeze its free flows
        for i in range(start[x], start[x + 1]):
            f = members[i]
            if not is_free[f]:
                continue
            is_free[f] = False
            frozen_at[f] = level
            r[f] += weight[f] * level
            for j in range(k):
                y = uses[f, j]
                if y < 0:
                    continue
                if stamp[y] != pops:  # bring its residual up to `level` before its demand drops
                    stamp[y] = pops
                    left[y] = max(left[y] - (level - at[y]) * demand[y], 0.0)
                    at[y] = level
                count[y] -= 1
                demand[y] = demand[y] - weight[f] if count[y] > 0 else 0.0
    return r
