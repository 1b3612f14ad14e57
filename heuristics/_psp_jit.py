"""Numba kernel of :class:`coflowlab.heuristics.fair_share.PSP`, at module level (numba's disk
cache finds a kernel again in a new process only when the kernels it calls are module globals).

PS-P (FairCloud, Popa et al., SIGCOMM 2012; Chowdhury's PhD thesis, UC Berkeley 2015, §7.4.1)
splits every link equally among the coflows using it, each coflow's share at a port equally
among its flows there, and gives a flow the smaller of its two shares. The rest goes to the
flows by per-flow max-min filling (thesis Appendix D.2).

State kept between decisions, updated from the flows that arrived and completed only:

- the active flows, packed at the front of per-position arrays (a completed flow is replaced
  by the last one), with each flow's ports, slots and current rate;
- ``count[x]``: active flows of each (coflow, link) *slot* (numbered once per instance) and
  ``n_link[i]``: the coflows with a slot in use on link ``i``;
- ``pairs[i, j]``: active flows from ingress ``i`` to egress ``j``.

Flows between the same two ports are frozen together by the filling (they share both
resources), so the filling runs on the ``m x m`` pair counts, on the capacity the equal split
leaves (:func:`coflowlab._allocation_jit.maxmin_pairs`: progressive filling, Bertsekas &
Gallager, *Data Networks*, 2nd ed., ch. 6, as in the ``fair`` policy), and a flow gets its
equal-split rate plus the level of the first of its two ports to fill. This is the per-flow
filling of :func:`coflowlab.heuristics.correlation.fill` with unit weights, up to rounding.
A decision is two passes over the active flows and one over the pairs; only the flows whose
rate changed are returned.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from coflowlab._allocation_jit import lowest


@njit(cache=True)
def arrive(flows, flow, s, t, si, so, rate, where, n_active, flow_src, flow_dst, slot_in,
           slot_out, slot_link, count, n_link, pairs):  # fmt: skip  # pragma: no cover
    """Appends ``flows`` to the active set (rate 0, as the simulator starts them); returns the
    new number of active flows."""
    m = pairs.shape[0]
    for k in range(flows.shape[0]):
        f = flows[k]
        p = n_active
        n_active += 1
        flow[p] = f
        where[f] = p
        s[p] = flow_src[f]
        t[p] = m + flow_dst[f]
        si[p] = slot_in[f]
        so[p] = slot_out[f]
        rate[p] = 0.0
        pairs[flow_src[f], flow_dst[f]] += 1.0
        for x in (slot_in[f], slot_out[f]):
            if count[x] == 0:
                n_link[slot_link[x]] += 1
            count[x] += 1
    return n_active


@njit(cache=True)
def depart(flows, flow, s, t, si, so, rate, where, n_active, count, n_link, slot_link,
           pairs):  # fmt: skip  # pragma: no cover
    """Removes ``flows`` (completed) from the active set; returns the new number of active
    flows."""
    m = pairs.shape[0]
    for k in range(flows.shape[0]):
        f = flows[k]
        p = where[f]
        pairs[s[p], t[p] - m] -= 1.0
        for x in (si[p], so[p]):
            count[x] -= 1
            if count[x] == 0:
                n_link[slot_link[x]] -= 1
        n_active -= 1
        q = n_active  # the last active flow takes position p
        g = flow[q]
        flow[p] = g
        where[g] = p
        s[p] = s[q]
        t[p] = t[q]
        si[p] = si[q]
        so[p] = so[q]
        rate[p] = rate[q]
    return n_active


@njit(cache=True)
def equal_split(s, t, si, so, n_active, count, n_link, cap, tol):  # pragma: no cover
    """Each active flow's equal-split rate and the capacity of each link it leaves (0 where
    at most ``tol`` is left: that link is full)."""
    m2 = cap.shape[0]
    share = np.zeros(m2)  # each coflow's equal share of a link: C^i / n_i
    for i in range(m2):
        if n_link[i] > 0:
            share[i] = cap[i] / n_link[i]
    # the smaller of the coflow's per-flow shares at the flow's two ports
    base = np.empty(n_active)
    used = np.zeros(m2)
    lost = np.zeros(m2)  # compensation: a port's rates are summed to about one rounding
    for p in range(n_active):
        r = min(share[s[p]] / count[si[p]], share[t[p]] / count[so[p]])
        base[p] = r
        used[s[p]], lost[s[p]] = plus(used[s[p]], lost[s[p]], r)
        used[t[p]], lost[t[p]] = plus(used[t[p]], lost[t[p]], r)
    left = np.empty(m2)
    for i in range(m2):
        left[i] = cap[i] - (used[i] + lost[i])
        if left[i] <= tol:  # as in the shared fill: its flows keep their equal-split rate
            left[i] = 0.0
    return base, left


@njit(cache=True, inline="always")
def plus(total, lost, x):  # pragma: no cover - numba
    """Neumaier's compensated addition: ``total + lost`` is the running sum, ``lost`` the
    low-order part rounded away so far (Neumaier, ZAMM 54(1), 1974)."""
    new = total + x
    if abs(total) >= abs(x):
        lost += (total - new) + x
    else:
        lost += (x - new) + total
    return new, lost


@njit(cache=True)
def fill_pairs(pairs, left, tol):  # pragma: no cover - numba
    """Progressive filling of the capacity ``left`` (``2m``: ingress, then egress ports)
    among the ``m x m`` port pairs, ``pairs[i, j]`` flows each rising at one unit per unit of
    level; returns the level at which each port filled (``inf`` if none of its pairs was
    open then). A pair stops at the level of the first of its ports to fill.

    The port of lowest running level is the next to fill, as in
    :func:`coflowlab._allocation_jit.maxmin_pairs`; before it fills, its level is recomputed
    from its capacity and the rates of its stopped pairs, as the shared fill does per flow
    (:func:`coflowlab.heuristics._correlation_jit.fill_levels`), so that rounding does not
    build up over the rounds (a port's running capacity is a difference of nearly equal
    terms once most of it is used)."""
    m = pairs.shape[0]
    m2 = 2 * m
    res = left.copy()  # running capacity left at the current level
    wsum = np.zeros(m2)  # flows of the open pairs at each port
    count = np.zeros(m2, dtype=np.int64)  # open pairs at each port
    for i in range(m):
        for j in range(m):
            w = pairs[i, j]
            wsum[i] += w
            wsum[m + j] += w
            count[i] += w > 0.0
            count[m + j] += w > 0.0
    level = np.full(m2, np.inf)  # each open port's running fill level
    for x in range(m2):
        if count[x] > 0:
            level[x] = res[x] / wsum[x]
    filled = np.full(m2, np.inf)
    now = 0.0
    while True:
        x, queued = lowest(level)
        if x < 0:
            return filled
        # x's level from scratch: a pair whose other port has filled runs at that level
        held, lost, free = left[x], 0.0, 0.0
        for k in range(m):
            w = pairs[x, k] if x < m else pairs[k, x - m]
            if w > 0.0:
                o = m + k if x < m else k
                if filled[o] < np.inf:
                    held, lost = plus(held, lost, -w * filled[o])
                else:
                    free += w
        held += lost
        exact = now if held - free * now <= tol else held / free
        if exact > queued:  # the running value was low: requeue x at its true level
            res[x] = held
            level[x] = exact
            continue
        if exact > now:
            now = exact
        filled[x] = now
        level[x] = np.inf
        count[x] = 0
        for k in range(m):  # stop x's open pairs; their other ports lose them
            w = pairs[x, k] if x < m else pairs[k, x - m]
            o = m + k if x < m else k
            if w > 0.0 and count[o] > 0:
                res[o] -= w * now
                wsum[o] -= w
                count[o] -= 1
                level[o] = res[o] / wsum[o] if count[o] > 0 else np.inf


@njit(cache=True)
def emit(flow, s, t, rate, n_active, base, level):  # pragma: no cover
    """Adds to each flow's equal-split rate the level of the first of its ports to fill;
    returns the flows whose rate changed and their rates, and records them in ``rate``."""
    out_f = np.empty(n_active, dtype=np.int64)
    out_r = np.empty(n_active)
    k = 0
    for p in range(n_active):
        r = base[p] + min(level[s[p]], level[t[p]])
        out_f[k] = flow[p]
        out_r[k] = r
        k += r != rate[p]  # branch-free: which rates change is unpredictable
        rate[p] = r
    return out_f[:k], out_r[:k]


@njit(cache=True)
def decide(arrived, completed, flow, s, t, si, so, rate, where, n_active, flow_src, flow_dst,
           slot_in, slot_out, slot_link, count, n_link, pairs, cap, tol):  # fmt: skip
    # pragma: no cover - numba
    """One decision: applies the arrivals and completions, then recomputes every rate.

    Returns the number of active flows, and the flows whose rate changed with their rates.
    """
    n_active = depart(completed, flow, s, t, si, so, rate, where, n_active, count, n_link,
                      slot_link, pairs)  # fmt: skip
    n_active = arrive(arrived, flow, s, t, si, so, rate, where, n_active, flow_src, flow_dst,
                      slot_in, slot_out, slot_link, count, n_link, pairs)  # fmt: skip
    base, left = equal_split(s, t, si, so, n_active, count, n_link, cap, tol)
    level = fill_pairs(pairs, left, tol)
    out_f, out_r = emit(flow, s, t, rate, n_active, base, level)
    return n_active, out_f, out_r
