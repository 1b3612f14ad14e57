"""Numba kernels of coflowlab.flow_state, at module level: numba's disk cache finds a kernel again
in a new process only when the kernels it calls are module globals, not closures.

A flow's rate, bytes sent at its last rate change, the time of that change and its size sit in
one row of ``rows`` (columns below): a policy names flows in no useful order (fair sharing
lists them port pair by port pair), so each flow touched costs one cache miss for its row
instead of one per array.
"""

from __future__ import annotations

import numpy as np
from numba import njit

RATE, SENT, SINCE, SIZE = range(4)
WIDTH = 4
"""Row width: 32 bytes, so that a row never straddles two cache lines."""


@njit(cache=True, inline="always")
def min8(tree, c):  # pragma: no cover - numba
    # the minimum of tree[c : c + 8] as a balanced tree of comparisons (a chain of 7 would
    # wait for each one in turn); the same value in any order, as no entry is NaN
    a0 = min(tree[c], tree[c + 1])
    a1 = min(tree[c + 2], tree[c + 3])
    a2 = min(tree[c + 4], tree[c + 5])
    a3 = min(tree[c + 6], tree[c + 7])
    return min(min(a0, a1), min(a2, a3))


@njit(cache=True, inline="always")
def tree_set(tree, off, f, v):  # pragma: no cover - numba
    # min tree of fan-out 8: level 0 holds flow f's projected completion time at tree[f],
    # level k (from tree[off[k]]) the minimum of each 8 entries of level k - 1; every group
    # of 8 siblings is one cache line. The last level is the root.
    tree[f] = v
    j = f
    for k in range(1, off.shape[0]):
        m = min8(tree, off[k - 1] + (j & ~7))
        j >>= 3
        i = off[k] + j
        if tree[i] == m:
            break
        tree[i] = m


@njit(cache=True)
def propagate(tree, off, nodes, n):  # pragma: no cover - numba
    # after the leaves nodes[:n] were set: recomputes their ancestors level by level. Only a
    # node whose value changed goes up (so two changed siblings raise their parent once);
    # the nodes of one level are independent, so their cache misses overlap, where setting
    # the leaves one at a time walks each path on its own. ``nodes`` is overwritten.
    for k in range(1, off.shape[0]):
        kept = 0
        for idx in range(n):
            j = nodes[idx]
            m = min8(tree, off[k - 1] + (j & ~7))
            j >>= 3
            i = off[k] + j
            if tree[i] != m:
                tree[i] = m
                nodes[kept] = j
                kept += 1
        n = kept
        if n == 0:
            break


@njit(cache=True)
def due(tree, off, thr):  # pragma: no cover - numba
    # every flow whose leaf value is <= thr, in increasing flow order (children are listed
    # in order, level by level from the root)
    top = off.shape[0] - 1
    if not tree[off[top]] <= thr:
        return np.zeros(0, dtype=np.int64)
    cur = np.zeros(1, dtype=np.int64)
    for k in range(top, 0, -1):
        nxt = np.empty(8 * cur.shape[0], dtype=np.int64)
        n = 0
        for j in cur:
            base = off[k - 1] + 8 * j
            for c in range(8):
                if tree[base + c] <= thr:
                    nxt[n] = 8 * j + c
                    n += 1
        cur = nxt[:n]
    return cur.copy()


@njit(cache=True)
def apply(
    flows, rates, t, rows, alive, tree, off, tol, out_t, out_f, out_r, pos
):  # pragma: no cover - numba
    # validates, then sets the rates that differ and writes them as records (time, flow,
    # rate) into out_*[pos:]; returns (number of records, status): status -1 names an
    # inactive flow, -2 a non-finite rate (nothing is changed then). A flow with at most
    # tol * size left is due now, whatever its new rate: a rounding residue must not be left
    # to crawl (or, at rate 0, to stall the simulation)
    k = flows.shape[0]
    nf = alive.shape[0]
    for j in range(k):
        f = flows[j]
        if f < 0 or f >= nf or not alive[f]:
            return 0, -1
        if not np.isfinite(rates[j]):
            return 0, -2
    n = pos
    for j in range(k):
        f = flows[j]
        r = rates[j]
        row = rows[f]
        old = row[RATE]
        if r == old:
            continue
        sent = row[SENT] + old * (t - row[SINCE])
        row[SENT] = sent
        row[SINCE] = t
        row[RATE] = r
        size = row[SIZE]
        left = size - sent
        if left <= tol * size:
            tree[f] = t
        else:
            tree[f] = t + left / r if r > 0 else np.inf
        out_t[n] = t
        out_f[n] = f
        out_r[n] = r
        n += 1
    propagate(tree, off, out_f[pos:n].copy(), n - pos)
    return n - pos, 0


@njit(cache=True)
def finish(flows, t, rows, alive, tree, off):  # pragma: no cover
    # completed flows stop at t and leave the active set
    for j in range(flows.shape[0]):
        f = flows[j]
        row = rows[f]
        row[SENT] += row[RATE] * (t - row[SINCE])
        row[SINCE] = t
        row[RATE] = 0.0
        tree_set(tree, off, f, np.inf)
        alive[f] = False


@njit(cache=True)
def complete(
    thr, t, tree, off, rows, alive, flow_coflow, coflow_left, coflow_sent_done, flow_done_at
):  # pragma: no cover - numba
    # an ordinary event's completions in one call: the flows due by thr (increasing flow
    # order) stop at t, and each one's coflow counts it, in that order (as np.subtract.at and
    # np.add.at would, so the bytes add up to the same floats); returns the flows and the
    # coflows they complete, in increasing order (as np.unique lists them)
    fin = due(tree, off, thr)
    finish(fin, t, rows, alive, tree, off)
    done = np.empty(fin.shape[0], dtype=np.int64)
    nd = 0
    for f in fin:
        k = flow_coflow[f]
        coflow_left[k] -= 1
        coflow_sent_done[k] += rows[f, SIZE]
        flow_done_at[f] = t
        if coflow_left[k] == 0:  # its last flow: each coflow is listed once
            done[nd] = k
            nd += 1
    return fin, np.sort(done[:nd])


@njit(cache=True)
def drain(
    t_limit, tol, tree, off, rows, alive, flow_coflow, coflow_left, coflow_sent_done
):  # pragma: no cover - numba
    # completes flows in time order while the next completion is before t_limit, stopping
    # after the first instant at which a coflow completes; returns (flows, their
    # completion times, number of instants, whether a coflow completed)
    out_f = []
    out_t = []
    instants = 0
    while True:
        tc = tree[off[off.shape[0] - 1]]
        if not tc < t_limit:
            return np.array(out_f, dtype=np.int64), np.array(out_t), instants, False
        fin = due(tree, off, tc + tol * max(1.0, abs(tc)))
        finish(fin, tc, rows, alive, tree, off)
        instants += 1
        hit = False
        for f in fin:
            k = flow_coflow[f]
            coflow_left[k] -= 1
            coflow_sent_done[k] += rows[f, SIZE]
            hit = hit or coflow_left[k] == 0
            out_f.append(f)
            out_t.append(tc)
        if hit:
            return np.array(out_f, dtype=np.int64), np.array(out_t), instants, True


@njit(cache=True)
def sent_of(flows, t, rows):  # pragma: no cover - numba
    out = np.empty(flows.shape[0])
    for j in range(flows.shape[0]):
        row = rows[flows[j]]
        out[j] = row[SENT] + row[RATE] * (t - row[SINCE])
    return out
