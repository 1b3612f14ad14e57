"""Numba kernel of :class:`coflowlab.fairness.FairnessMeter`, at module level (numba's disk
cache finds a kernel again in a new process only when it is a module global).

One pass over the rate records in time order, merged with the flows' releases. At each instant
the kernel applies the records, updates the set of active flows (released, more than ``tol`` of
their size left) and measures every active coflow's progress from its per-link remaining bytes
and rates, touching only the active flows and the active coflows' links. The rules are those of
the reference, :func:`coflowlab.fairness.progress_timeline` (module docstring there).

State arrays (owned by the meter, updated in place):

- ``rate``, ``sent``, ``since``: per flow, its rate and the bytes it had sent when that rate
  began at ``since`` (bytes are integrated once per rate, as the verifier does).
- ``act[:nact]`` the active flows, ``where`` each flow's slot in ``act`` (-1 when not
  active); ``ptr[0]`` the next release in ``rel_flow`` order.
- ``pend``: the instant whose duration is not known yet: ``[time (nan: none), busy,
  isolation guarantee, mean progress, Jain index, utilization]``.
- ``acc``: ``[busy time, Σ w·IG, Σ w·mean progress, Σ w·Jain, Σ w·utilization, min IG,
  first IG, busy instants]`` (``w`` an instant's duration).
- ``loc``, ``load``, ``used``, ``cof``: scratch (coflow → local row, per-row per-link sums).
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def close_pending(t, pend, acc):
    """Gives the pending instant its duration ``t − pend[0]`` and accumulates it."""
    if np.isnan(pend[0]):
        return
    w = t - pend[0]
    if pend[1] > 0.0:
        if acc[7] == 0.0:
            acc[6] = pend[2]
        if pend[2] < acc[5]:
            acc[5] = pend[2]
        acc[7] += 1.0
        acc[0] += w
        acc[1] += w * pend[2]
        acc[2] += w * pend[3]
        acc[3] += w * pend[4]
        acc[4] += w * pend[5]
    pend[0] = np.nan


@njit(cache=True)
def _measure(
    t, pend, act, where, nact, rate, sent, since, size, flow_cap, scale, coflow, src, dst, m,
    cap, tol, total_cap, loc, load, used, cof,
):  # fmt: skip
    """Drops the flows that are done (within the verifier's tolerance,
    :func:`coflowlab.fairness.finish_tolerance`), then measures the instant ``t`` into
    ``pend``."""
    links = 2 * m
    step = tol * max(scale, t)
    ncof = 0
    util = 0.0
    j = 0
    while j < nact[0]:
        f = act[j]
        rem = size[f] - (sent[f] + rate[f] * (t - since[f]))
        if rem < 0.0:
            rem = 0.0
        if not rem > tol * size[f] + flow_cap[f] * step:  # done: swap-remove, look at slot j again
            last = act[nact[0] - 1]
            act[j] = last
            where[last] = j
            where[f] = -1
            nact[0] -= 1
            continue
        k = coflow[f]
        row = loc[k]
        if row < 0:
            row = ncof
            loc[k] = row
            cof[row] = k
            ncof += 1
            base = row * links
            for i in range(links):
                load[base + i] = 0.0
                used[base + i] = 0.0
        base = row * links
        load[base + src[f]] += rem
        load[base + m + dst[f]] += rem
        used[base + src[f]] += rate[f]
        used[base + m + dst[f]] += rate[f]
        util += rate[f]
        j += 1
    pend[0] = t
    if ncof == 0:
        pend[1] = 0.0
        return
    ig = np.inf
    total = 0.0
    squares = 0.0
    for row in range(ncof):
        loc[cof[row]] = -1
        base = row * links
        gamma = 0.0
        for i in range(links):
            if load[base + i] > 0.0:
                g = load[base + i] / cap[i] if cap[i] > 0.0 else np.inf
                if g > gamma:
                    gamma = g
        p = np.inf
        for i in range(links):
            if load[base + i] > 0.0:
                q = used[base + i] * gamma / load[base + i]
                if q < p:
                    p = q
        if p < ig:
            ig = p
        total += p
        squares += p * p
    pend[1] = 1.0
    pend[2] = ig
    pend[3] = total / ncof
    # at most 1 in exact arithmetic; roundings of the two sums can give 1 + an ulp
    pend[4] = min(total * total / (ncof * squares), 1.0) if squares > 0.0 else 1.0
    pend[5] = 2.0 * util / total_cap if total_cap > 0.0 else 0.0


@njit(cache=True)
def feed(
    ts, fs, rs, stop, inclusive, rel_time, rel_flow, ptr, rate, sent, since, act, where, nact,
    size, flow_cap, scale, coflow, src, dst, m, cap, tol, total_cap, pend, acc, loc, load, used,
    cof,
):  # fmt: skip
    """Processes every instant of the records ``(ts, fs, rs)`` (times non-decreasing) merged
    with the releases, up to ``stop`` (included when ``inclusive``)."""
    n = len(ts)
    i = 0
    nrel = len(rel_time)
    while True:
        t = ts[i] if i < n else np.inf
        if ptr[0] < nrel and rel_time[ptr[0]] < t:
            t = rel_time[ptr[0]]
        if t > stop or (t == stop and not inclusive) or np.isinf(t):
            break
        close_pending(t, pend, acc)
        while i < n and ts[i] <= t:
            f = fs[i]
            sent[f] += rate[f] * (t - since[f])
            since[f] = t
            rate[f] = rs[i]
            i += 1
        while ptr[0] < nrel and rel_time[ptr[0]] <= t:
            f = rel_flow[ptr[0]]
            ptr[0] += 1
            if where[f] < 0:
                where[f] = nact[0]
                act[nact[0]] = f
                nact[0] += 1
        _measure(
            t, pend, act, where, nact, rate, sent, since, size, flow_cap, scale, coflow, src,
            dst, m, cap, tol, total_cap, loc, load, used, cof,
        )  # fmt: skip
    return i
