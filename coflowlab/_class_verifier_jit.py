"""Numba kernels of coflowlab.class_verifier's check of class records, at module level: numba's
disk cache finds a kernel again in a new process only when the kernels it calls are module
globals, not closures.

One pass in time order over three merged streams: the class records fed (already sorted), the
flow releases (flows sorted by release once, a cursor into them) and the class completions.
The completions come from two kinds of heap:

- per class, a min-heap of its active flows' keys ``V_c(release_f) + size_f / w_f`` (ties by
  flow index), all in one array ``hkey`` / ``hflow`` with a slice ``[hoff[c], hoff[c + 1])``
  per class (the membership of a class is fixed, so its slice never grows); the class's row
  caches the smallest key;
- over the classes, a min tree of fan-out 8 of their next completion times
  ``since_c + (key_min - V_c) / speed_c`` (the layout of ``coflowlab.flow_state._min_tree``;
  every group of 8 siblings is one cache line): a speed change rewrites the class's leaf and
  walks up only while the minimum of its group changes, most often not at all.

Every class's state sits in one row of ``crow`` (columns below), and each of its distinct
ports (ingress ``p``, egress ``m + p``) in one row of ``prow``: the port, the number of the
class's active flows there and their weight. Port usage is updated incrementally through
them and re-derived from scratch every ``RESYNC`` events so that rounding never accumulates.

The loop over the records indexes these arrays directly and has its helpers written inline:
in numba a row view (``crow[c]``) or a call that passes arrays costs reference counting, which
made the pass 2.5 times slower on the Facebook trace's 109 million class records.
"""

from __future__ import annotations

import numpy as np
from numba import njit

RESYNC = 1 << 20
"""Events (records, releases, completions) between two re-derivations of the port usage."""

REBUILD = 16
"""A time group whose records change the completion times of more than one class in
``REBUILD`` rebuilds the min tree in one sweep instead of walking up from each leaf."""

# columns of the per-class rows (float64; indices are small integers, exact as floats)
RATE, SINCE, VSUM, KEYMIN, STOP, PLO, PHI = range(7)
CWIDTH = 8
# columns of the per-(class, port) rows
PORT, COUNT, WEIGHT = range(3)
PWIDTH = 4

# integer state (``istate``): release cursor, time groups processed, events since the last
# re-derivation of the usage
CURSOR, GROUP, SINCE_RESYNC = range(3)


@njit(cache=True)
def check_records(t, c, r, num_classes, last_time):  # pragma: no cover - numba
    # (code, index) of the first bad record: 0 fine, 1 time not finite, 2 rate not finite,
    # 3 class out of range, 4 time decreases, 5 the first time equals the last time fed
    n = t.shape[0]
    prev = last_time
    for i in range(n):
        x = t[i]
        if not np.isfinite(x):
            return 1, i
        if not np.isfinite(r[i]):
            return 2, i
        k = c[i]
        if k < 0 or k >= num_classes:
            return 3, i
        if x < prev:
            return 4, i
        if i == 0 and x == prev:
            return 5, i
        prev = x
    return 0, -1


@njit(cache=True)
def _min8(tree, i):  # pragma: no cover - numba
    m = tree[i]
    for k in range(i + 1, i + 8):
        if tree[k] < m:
            m = tree[k]
    return m


@njit(cache=True)
def _tree_set(tree, off, j, v):  # pragma: no cover - numba
    # min tree of fan-out 8 (the layout of coflowlab.flow_state._min_tree): level 0 holds
    # class j's next completion time at tree[j], level k (from tree[off[k]]) the minimum of
    # each 8 entries of level k - 1 (one cache line); the last level is the root. The walk
    # up stops at the first ancestor that keeps its value.
    tree[j] = v
    for k in range(1, off.shape[0]):
        m = _min8(tree, off[k - 1] + (j & ~7))
        j >>= 3
        i = off[k] + j
        if tree[i] == m:
            break
        tree[i] = m


@njit(cache=True)
def _tree_rebuild(tree, off):  # pragma: no cover - numba
    # every level recomputed from the leaves, in memory order (after many leaves changed)
    for k in range(1, off.shape[0]):
        below = off[k - 1]
        for i in range((off[k] - below) >> 3):
            tree[off[k] + i] = _min8(tree, below + 8 * i)


@njit(cache=True)
def _tree_argmin(tree, off):  # pragma: no cover - numba
    # a leaf holding the minimum (the root's value), found from the root down
    top = off.shape[0] - 1
    v = tree[off[top]]
    j = 0
    for k in range(top - 1, -1, -1):
        base = off[k] + 8 * j
        q = 0
        while q < 7 and tree[base + q] != v:
            q += 1
        j = 8 * j + q
    return j


@njit(cache=True)
def _class_time(crow, c, now):  # pragma: no cover - numba
    # class c's next completion time (inf if none), never before ``now``
    x = crow[c, RATE]
    key = crow[c, KEYMIN]
    if x > 0.0 and key < np.inf:
        return max(crow[c, SINCE] + (key - crow[c, VSUM]) / x, now)
    return np.inf


@njit(cache=True)
def _update_class_time(c, now, crow, tree, off):  # pragma: no cover - numba
    tc = _class_time(crow, c, now)
    if tc != tree[c]:
        _tree_set(tree, off, c, tc)


@njit(cache=True)
def _flow_less(hkey, hflow, a, b):  # pragma: no cover - numba
    ka = hkey[a]
    kb = hkey[b]
    return ka < kb or (ka == kb and hflow[a] < hflow[b])


@njit(cache=True)
def _heap_push(hkey, hflow, lo, n, key, f):  # pragma: no cover - numba
    # pushes (key, f) onto the heap in hkey/hflow[lo:lo + n]
    j = n
    while j > 0:
        parent = (j - 1) >> 1
        pk = hkey[lo + parent]
        if pk < key or (pk == key and hflow[lo + parent] < f):
            break
        hkey[lo + j] = pk
        hflow[lo + j] = hflow[lo + parent]
        j = parent
    hkey[lo + j] = key
    hflow[lo + j] = f


@njit(cache=True)
def _heap_pop(hkey, hflow, lo, n):  # pragma: no cover - numba
    # removes the top of the heap in hkey/hflow[lo:lo + n] (n >= 1)
    n -= 1
    if n == 0:
        return
    key = hkey[lo + n]
    f = hflow[lo + n]
    j = 0
    while True:
        child = 2 * j + 1
        if child >= n:
            break
        if child + 1 < n and _flow_less(hkey, hflow, lo + child + 1, lo + child):
            child += 1
        ck = hkey[lo + child]
        if ck > key or (ck == key and hflow[lo + child] > f):
            break
        hkey[lo + j] = ck
        hflow[lo + j] = hflow[lo + child]
        j = child
    hkey[lo + j] = key
    hflow[lo + j] = f


@njit(cache=True)
def _touch(p, group, port_mark, touched, nt):  # pragma: no cover - numba
    if port_mark[p] != group:
        port_mark[p] = group
        touched[nt] = p
        nt += 1
    return nt


@njit(cache=True)
def resync_usage(crow, prow, usage):  # pragma: no cover - numba
    # every port's usage from the classes' speeds and active weights
    usage[:] = 0.0
    for c in range(crow.shape[0]):
        x = crow[c, RATE]
        if x == 0.0:
            continue
        for k in range(int(crow[c, PLO]), int(crow[c, PHI])):
            if prow[k, COUNT] > 0.0:
                usage[int(prow[k, PORT])] += x * prow[k, WEIGHT]


@njit(cache=True)
def _leave_or_join(
    f, sign, x, w, slot_src, slot_dst, prow, usage, group, port_mark, touched, nt
):  # pragma: no cover - numba
    # flow f (weight w, class speed x) leaves (sign -1) or joins (+1) its class's ports
    for k in (slot_src[f], slot_dst[f]):
        left = prow[k, COUNT] + sign
        prow[k, COUNT] = left
        prow[k, WEIGHT] = prow[k, WEIGHT] + sign * w if left > 0.0 else 0.0
        p = int(prow[k, PORT])
        usage[p] += sign * x * w
        nt = _touch(p, group, port_mark, touched, nt)
    return nt


@njit(cache=True)
def run(
    t,
    cl,
    r,
    limit,
    # constants
    rel_order,
    release,
    size_w,
    weight,
    flow_class,
    slot_src,
    slot_dst,
    hoff,
    port_cap,
    neg_tol,
    tol,
    adaptive,
    cap,
    # state
    istate,
    fstate,
    crow,
    prow,
    usage,
    hkey,
    hflow,
    hlen,
    tree,
    off,
    cmark,
    vrel,
    done_at,
    pend_start,
    pend_excess,
    port_mark,
):  # pragma: no cover - numba
    # Processes the records (t, cl, r) (sorted, whole time groups) and every release and
    # completion up to ``limit`` (``inf`` at the end: everything left). ``fstate[0]`` is the
    # absolute time tolerance (raised with the times seen when ``adaptive``). Returns
    # (counts[2], negative[cap, 3], capacity[cap, 4]): the violations found (all counted, the
    # first ``cap`` of each kind kept) as rows
    #   negative: class, start, speed (a negative speed in force over [start, next record))
    #   capacity: port (0..2m-1), start, end, excess
    counts = np.zeros(2, dtype=np.int64)
    neg = np.empty((cap, 3))
    capv = np.empty((cap, 4))
    touched = np.empty(usage.shape[0], dtype=np.int64)
    n = t.shape[0]
    nf = rel_order.shape[0]
    time_tol = fstate[0]
    cursor = istate[CURSOR]
    group = istate[GROUP]
    events = istate[SINCE_RESYNC]
    root = off[off.shape[0] - 1]
    num_leaves = off[1]
    dirty = np.empty(crow.shape[0], dtype=np.int64)
    i = 0
    while True:
        now = np.inf
        if i < n:
            now = t[i]
        if cursor < nf:
            x = release[rel_order[cursor]]
            if x < now:
                now = x
        x = tree[root]
        if x < now:
            now = x
        if now > limit or now == np.inf:
            break
        if adaptive and tol * abs(now) > time_tol:
            time_tol = tol * abs(now)
        group += 1
        nt = 0
        nd = 0
        # 1. completions at now (the tree's times are never before now)
        while tree[root] <= now:
            c = _tree_argmin(tree, off)
            lo = hoff[c]
            f = hflow[lo]
            n_left = hlen[c] - 1
            _heap_pop(hkey, hflow, lo, hlen[c])
            hlen[c] = n_left
            crow[c, KEYMIN] = hkey[lo] if n_left > 0 else np.inf
            done_at[f] = tree[c]
            nt = _leave_or_join(
                f, -1.0, crow[c, RATE], weight[f], slot_src, slot_dst, prow, usage, group,
                port_mark, touched, nt,
            )  # fmt: skip
            events += 1
            _update_class_time(c, now, crow, tree, off)
        # 2. releases at now: the flow joins its class at the class's current speed
        while cursor < nf and release[rel_order[cursor]] <= now:
            f = rel_order[cursor]
            cursor += 1
            c = flow_class[f]
            x = crow[c, RATE]
            v = crow[c, VSUM] + x * (now - crow[c, SINCE])
            vrel[f] = v
            key = v + size_w[f]
            lo = hoff[c]
            _heap_push(hkey, hflow, lo, hlen[c], key, f)
            hlen[c] += 1
            nt = _leave_or_join(
                f, 1.0, x, weight[f], slot_src, slot_dst, prow, usage, group, port_mark,
                touched, nt,
            )  # fmt: skip
            events += 1
            if hflow[lo] == f:
                crow[c, KEYMIN] = key
                _update_class_time(c, now, crow, tree, off)
        # 3. records at now: the last one of a class counts
        while i < n and t[i] == now:
            c = cl[i]
            new = r[i]
            i += 1
            old = crow[c, RATE]
            start = crow[c, SINCE]
            if start < now:  # close the class's segment [start, now) at speed old
                if old != 0.0:
                    crow[c, VSUM] += old * (now - start)
                    if old > 0.0:
                        crow[c, STOP] = now
                    elif old < -neg_tol[c]:
                        k = counts[0]
                        if k < cap:
                            neg[k, 0] = c
                            neg[k, 1] = start
                            neg[k, 2] = old
                        counts[0] = k + 1
                crow[c, SINCE] = now
            crow[c, RATE] = new
            delta = new - old
            for k in range(int(crow[c, PLO]), int(crow[c, PHI])):
                if prow[k, COUNT] > 0.0:
                    p = int(prow[k, PORT])
                    usage[p] += delta * prow[k, WEIGHT]
                    if port_mark[p] != group:  # (inline: a call passing arrays costs more)
                        port_mark[p] = group
                        touched[nt] = p
                        nt += 1
            events += 1
            if crow[c, KEYMIN] < np.inf and cmark[c] != group:  # its completion time changes
                cmark[c] = group
                dirty[nd] = c
                nd += 1
        if nd * REBUILD > num_leaves:  # many leaves changed: rebuild the tree in one sweep
            for j in range(nd):
                c = dirty[j]
                x = crow[c, RATE]  # (inline _class_time)
                tc = np.inf
                if x > 0.0:
                    tc = max(crow[c, SINCE] + (crow[c, KEYMIN] - crow[c, VSUM]) / x, now)
                tree[c] = tc
            _tree_rebuild(tree, off)
        else:
            for j in range(nd):
                c = dirty[j]
                x = crow[c, RATE]
                tc = np.inf
                if x > 0.0:
                    tc = max(crow[c, SINCE] + (crow[c, KEYMIN] - crow[c, VSUM]) / x, now)
                if tc != tree[c]:
                    _tree_set(tree, off, c, tc)
        # 4. every port that changed at now: close its open over-capacity interval, and open
        # a new one if the port is over capacity from now on
        if events >= RESYNC:
            resync_usage(crow, prow, usage)
            events = 0
        for j in range(nt):
            p = touched[j]
            s = pend_start[p]
            if not np.isnan(s):
                if now - s > time_tol:
                    k = counts[1]
                    if k < cap:
                        capv[k, 0] = p
                        capv[k, 1] = s
                        capv[k, 2] = now
                        capv[k, 3] = pend_excess[p]
                    counts[1] = k + 1
                pend_start[p] = np.nan
            x = usage[p] - port_cap[p]
            if x > tol * port_cap[p]:
                pend_start[p] = now
                pend_excess[p] = x
    istate[CURSOR] = cursor
    istate[GROUP] = group
    istate[SINCE_RESYNC] = events
    fstate[0] = time_tol
    return counts, neg, capv
