"""Numba kernel of :mod:`coflowlab.formulations.fluid_bounds`, at module level (numba's disk
cache finds a kernel again in a new process only when it is a module global)."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def subset_step(
    mask, n, loads, levels, whole, tol, single, port_time, w, port_order
):  # pragma: no cover - numba
    """For the coflows of the bit mask ``mask``: ``span`` of the set, and per member ``j``
    the floor of the set without ``j`` (``max(Σ single, Smith on each port)``); ``inf``
    for non-members."""
    num_levels = loads.shape[1]
    num_ports = loads.shape[2]
    tot = np.zeros((num_levels, num_ports))
    single_sum = 0.0
    for j in range(n):
        if (mask >> j) & 1:
            single_sum += single[j]
            for i in range(num_levels):
                for v in range(num_ports):
                    tot[i, v] += loads[j, i, v]
    span = 0.0
    for i in range(num_levels):
        need = 0.0
        for v in range(num_ports):
            if tot[i, v] > need:
                need = tot[i, v]
        if whole:
            need = np.ceil(need - tol)
        if need > 0.0 and levels[i] + need > span:
            span = levels[i] + need
    floors = np.full(n, np.inf)
    for j in range(n):
        if (mask >> j) & 1:
            floors[j] = single_sum - single[j]
    comp = np.zeros(n)
    for v in range(port_time.shape[1]):
        # Smith's order on port v, restricted to the mask: completions and the total
        c = 0.0
        total = 0.0
        for k in range(n):
            j = port_order[v, k]
            if (mask >> j) & 1:
                c += port_time[j, v]
                comp[j] = c
                total += w[j] * c
        after = 0.0  # weight of the members after j in the order
        for k in range(n - 1, -1, -1):
            j = port_order[v, k]
            if (mask >> j) & 1:
                value = total - w[j] * comp[j] - port_time[j, v] * after
                if value > floors[j]:
                    floors[j] = value
                after += w[j]
    return span, floors
