"""Numba kernel of coflowlab.verifier's fluid check, at module level: numba's disk cache finds a
kernel again in a new process only when the kernels it calls are module globals, not closures.

One pass over the records in time order: no sort, no temporary per record. The rules are those
of the vectorized reference (``FluidVerifier(..., compiled=False)``); see
:mod:`coflowlab.verifier`.

Every flow's state and constants sit in one row of ``rows`` (columns below), not in a dozen
flat arrays: the records name flows in no useful order, so each record costs a cache miss per
array it reads; with one row per flow (96 bytes, at most two cache lines) it costs about two.
Those misses are also hidden: while a record is checked, the row of the record ``PREFETCH``
places ahead is already being fetched (:func:`prefetch`, a hint that changes no result). On
fair sharing's 83 million records of the Facebook trace's first 260 coflows this took the
kernel from 12.5 to 8.5 ns per record (FIFO's 18 million: 8.2 to 7.2). Taking row views
(``rows[e]``) costs nothing here: no call receives them, so numba counts no references.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

# columns of the per-flow rows (float64; ports are small integers, exact as floats)
RATE, SINCE, SENT, DONE_AT, FIRST_SEND, LAST_SEND, SRC, DST = range(8)
SIZE, RELEASE, BYTE_TOL, FLOW_CAP = range(8, 12)
WIDTH = 12

PREFETCH = 16
"""How many records ahead :func:`feed` prefetches a flow's row."""


@intrinsic
def prefetch(typingctx: Any, rows: Any, i: Any, j: Any) -> Any:  # pragma: no cover - numba
    """In compiled code only: asks the CPU to fetch the cache line of ``rows[i, j]`` (a 2-d
    array) for writing (LLVM's ``llvm.prefetch``, x86 ``prefetchw``), and returns at once: a
    hint, it neither reads nor writes the array, and an index out of range is harmless.

    Examples
    --------
    >>> import numpy as np
    >>> from numba import njit
    >>> @njit
    ... def total(rows, order):
    ...     s = 0.0
    ...     for k in range(order.shape[0]):
    ...         if k + 1 < order.shape[0]:
    ...             prefetch(rows, order[k + 1], 0)
    ...         s += rows[order[k], 0]
    ...     return s
    >>> total(np.arange(6.0).reshape(3, 2), np.array([2, 0, 1]))
    6.0
    """
    sig = types.void(rows, i, j)

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, args[0])
        ptr = cgutils.get_item_pointer(
            context, builder, aryty, ary, [args[1], args[2]], wraparound=False
        )
        i8p = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32])
        # the unsuffixed name is upgraded by LLVM to its pointer type's (llvm.prefetch.p0)
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch")
        # write (1), keep in all cache levels (3), data cache (1)
        builder.call(fn, [builder.bitcast(ptr, i8p), i32(1), i32(3), i32(1)])
        return context.get_dummy_value()

    return sig, codegen


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
    # Indices that cannot be negative (a record's position, a port, the count of touched
    # ports) are cast to unsigned: numba then skips the wraparound of negative indices, a few
    # instructions per access (fair sharing's 83 M records on the trace's first 260 coflows:
    # 8.4 to 7.7 ns per record; FIFO's 18 M: 7.2 to 5.8). A flow index stays signed: a
    # negative one is read as before.
    counts = np.zeros(3, dtype=np.int64)
    neg = np.empty((cap, 3))
    early = np.empty((cap, 6))
    capv = np.empty((cap, 4))
    touched = np.empty(usage.shape[0], dtype=np.uint64)
    n = t.shape[0]
    a = 0
    while a < n:
        now = t[a]
        b = a
        nt = 0
        group += 1
        while b < n and t[b] == now:
            u = np.uint64(b)
            e = f[u]
            if b + PREFETCH < n:  # both cache lines of a row PREFETCH records ahead
                g = f[u + np.uint64(PREFETCH)]
                prefetch(rows, g, 0)
                prefetch(rows, g, WIDTH - 1)
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
            new = r[u]
            delta = new - old
            row[RATE] = new
            row[SINCE] = now
            p = np.uint64(int(row[SRC]))
            q = np.uint64(int(row[DST]))
            usage[p] += delta
            usage[q] += delta
            if port_mark[p] != group:
                port_mark[p] = group
                touched[np.uint64(nt)] = p
                nt += 1
            if port_mark[q] != group:
                port_mark[q] = group
                touched[np.uint64(nt)] = q
                nt += 1
            b += 1
        # every port that changed at ``now``: close its open over-capacity interval, and open
        # a new one if the port is over capacity from ``now`` on
        for j in range(nt):
            p = touched[j]  # unsigned
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
