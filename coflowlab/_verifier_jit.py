"""Numba kernel of coflowlab.verifier's fluid check, at module level: numba's disk cache finds a
kernel again in a new process only when the kernels it calls are module globals, not closures.

One pass over the records in time order: no sort, no temporary per record. The rules are those
of the vectorized reference (``FluidVerifier(..., compiled=False)``); see
:mod:`coflowlab.verifier`.

Every flow's state and constants sit in one row of ``rows`` (columns below), not in a dozen
flat arrays: the records name flows in no useful order, so each record costs a cache miss per
array it reads; with one row per flow (96 bytes, at most two cache lines) it costs about two.
"""

from __future__ import annotations

import numpy as np
from numba import njit

# columns of the per-flow rows (float64; ports are small integers, exact as floats)
RATE, SINCE, SENT, DONE_AT, FIRST_SEND, LAST_SEND, SRC, DST = range(8)
SIZE, RELEASE, BYTE_TOL, FLOW_CAP = range(8, 12)
WIDTH = 12


@njit(cache=True)
def feed(
    t,
    f,
    r,
    rows,
    tol,
    time_tol,
    port_cap,
    usage,
    pend_start,
    pend_excess,
    port_mark,
    group,
    cap,
):  # pragma: no cover - numba
    # ``rows[e]`` is flow e's row (the column constants above; DST already offset by m, the
    # number of ports, so that ports 0..2m-1 index ``usage``). ``group`` numbers the time
    # groups fed so far (``port_mark`` holds the last group that touched each port). Returns
    # (counts[3], negative[cap, 3], early[cap, 6], capacity[cap, 4], group): the violations
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
    touched = np.empty(usage.shape[0], dtype=np.int64)
    n = t.shape[0]
    a = 0
    while a < n:
        now = t[a]
        b = a
        nt = 0
        group += 1
        while b < n and t[b] == now:
            e = f[b]
            row = rows[e]
            old = row[RATE]
            start = row[SINCE]
            if start < now:  # a closed segment [start, now) at rate old
                if old < -tol * row[FLOW_CAP]:
                    k = counts[0]
                    if k < cap:
                        neg[k, 0] = e
                        neg[k, 1] = start
                        neg[k, 2] = old
                    counts[0] = k + 1
                if old != 0.0:
                    byte_tol = row[BYTE_TOL]
                    if old > 0.0:
                        release = row[RELEASE]
                        end = min(now, release)
                        eb = old * max(end - start, 0.0)
                        if eb > byte_tol and start < release - time_tol:
                            k = counts[1]
                            if k < cap:
                                early[k, 0] = e
                                early[k, 1] = start
                                early[k, 2] = end
                                early[k, 3] = eb
                                early[k, 4] = release
                                early[k, 5] = old
                            counts[1] = k + 1
                    if old > tol * row[FLOW_CAP]:  # the rate tolerance
                        if start < row[FIRST_SEND]:
                            row[FIRST_SEND] = start
                        if now > row[LAST_SEND]:
                            row[LAST_SEND] = now
                    before = row[SENT]
                    after = before + old * (now - start)
                    size = row[SIZE]
                    target = size - byte_tol
                    if np.isnan(row[DONE_AT]) and after >= target and before < target:
                        need = max(size - before, 0.0)
                        tc = min(start + need / old, now)
                        row[DONE_AT] = max(tc, start)
                    row[SENT] = after
            new = r[b]
            delta = new - old
            row[RATE] = new
            row[SINCE] = now
            p = int(row[SRC])
            q = int(row[DST])
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


@njit(cache=True)
def port_usage(rows, usage):  # pragma: no cover - numba
    # every port's usage from the current rates, summed in flow order (as np.bincount does)
    usage[:] = 0.0
    for e in range(rows.shape[0]):
        row = rows[e]
        x = row[RATE]
        usage[int(row[SRC])] += x
        usage[int(row[DST])] += x
