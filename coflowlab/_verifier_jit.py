"""Numba kernel of coflowlab.verifier's fluid check, at module level: numba's disk cache finds a
kernel again in a new process only when the kernels it calls are module globals, not closures.

One pass over the records in time order, with the state of every flow and port in flat arrays:
no sort, no temporary per record. The rules are those of the vectorized reference
(``FluidVerifier(..., compiled=False)``); see :mod:`coflowlab.verifier`.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def feed(
    t,
    f,
    r,
    flow_src,
    flow_dst,
    m,
    size,
    release,
    rate_tol,
    flow_cap,
    byte_tol,
    tol,
    time_tol,
    port_cap,
    rate,
    since,
    sent,
    done_at,
    first_send,
    last_send,
    usage,
    pend_start,
    pend_excess,
    port_mark,
    group,
    cap,
):  # pragma: no cover - numba
    # ``group`` numbers the time groups fed so far (``port_mark`` holds the last group that
    # touched each port). Returns (counts[3], negative[cap, 3], early[cap, 6],
    # capacity[cap, 4], group): the violations
    # found (all counted, the first ``cap`` of each kind kept) as rows
    #   negative: flow, start, rate
    #   early:    flow, start, end, bytes, release, rate
    #   capacity: port (0..2m-1), start, end, excess
    # A negative rate is reported when its segment closes with a positive length (the record
    # was in force: the last at its time), or by ``finish`` while still open.
    counts = np.zeros(3, dtype=np.int64)
    neg = np.empty((cap, 3))
    early = np.empty((cap, 6))
    capv = np.empty((cap, 4))
    touched = np.empty(2 * m, dtype=np.int64)
    n = t.shape[0]
    a = 0
    while a < n:
        now = t[a]
        b = a
        nt = 0
        group += 1
        while b < n and t[b] == now:
            e = f[b]
            old = rate[e]
            start = since[e]
            if start < now:  # a closed segment [start, now) at rate old
                if old < -tol * flow_cap[e]:
                    k = counts[0]
                    if k < cap:
                        neg[k, 0] = e
                        neg[k, 1] = start
                        neg[k, 2] = old
                    counts[0] = k + 1
                if old != 0.0:
                    if old > 0.0:
                        end = min(now, release[e])
                        eb = old * max(end - start, 0.0)
                        if eb > byte_tol[e] and start < release[e] - time_tol:
                            k = counts[1]
                            if k < cap:
                                early[k, 0] = e
                                early[k, 1] = start
                                early[k, 2] = end
                                early[k, 3] = eb
                                early[k, 4] = release[e]
                                early[k, 5] = old
                            counts[1] = k + 1
                    if old > rate_tol[e]:
                        if start < first_send[e]:
                            first_send[e] = start
                        if now > last_send[e]:
                            last_send[e] = now
                    before = sent[e]
                    after = before + old * (now - start)
                    target = size[e] - byte_tol[e]
                    if np.isnan(done_at[e]) and after >= target and before < target:
                        need = max(size[e] - before, 0.0)
                        tc = min(start + need / old, now)
                        done_at[e] = max(tc, start)
                    sent[e] = after
            new = r[b]
            delta = new - old
            rate[e] = new
            since[e] = now
            p = flow_src[e]
            q = flow_dst[e] + m
            usage[p] += delta
            usage[q] += delta
            if port_mark[p] != group:
                port_mark[p] = group
                touched[nt] = p
                nt += 1
            if port_mark[q] != group:
                port_mark[q] = group
                touched[nt] = q
                nt += 1
            b += 1
        # every port that changed at ``now``: close its open over-capacity interval, and open
        # a new one if the port is over capacity from ``now`` on
        for j in range(nt):
            p = touched[j]
            s = pend_start[p]
            if not np.isnan(s):
                if now - s > time_tol:
                    k = counts[2]
                    if k < cap:
                        capv[k, 0] = p
                        capv[k, 1] = s
                        capv[k, 2] = now
                        capv[k, 3] = pend_excess[p]
                    counts[2] = k + 1
                pend_start[p] = np.nan
            x = usage[p] - port_cap[p]
            if x > tol * port_cap[p]:
                pend_start[p] = now
                pend_excess[p] = x
        a = b
    return counts, neg, early, capv, group
