"""Numba kernels of coflowlab.flow_state, at module level: numba's disk cache finds a kernel again
in a new process only when the kernels it calls are module globals, not closures."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, inline="always")
def tree_set(tree, leaves, f, v):  # pragma: no cover - numba
    # min segment tree: leaf f holds flow f's projected completion time
    i = leaves + f
    tree[i] = v
    i //= 2
    while i >= 1:
        a = tree[2 * i]
        b = tree[2 * i + 1]
        m = a if a < b else b
        if tree[i] == m:
            break
        tree[i] = m
        i //= 2


@njit(cache=True)
def due(tree, leaves, thr):  # pragma: no cover - numba
    # every leaf whose value is <= thr, in increasing flow order
    out = []
    stack = [1]
    while len(stack) > 0:
        i = stack.pop()
        if tree[i] > thr:
            continue
        if i >= leaves:
            out.append(i - leaves)
        else:
            stack.append(2 * i + 1)
            stack.append(2 * i)
    return np.array(out, dtype=np.int64)


@njit(cache=True)
def apply(
    flows, rates, t, rate, base_sent, base_t, size, alive, tree, leaves, tol
):  # pragma: no cover
    # validates, then sets the rates that differ; returns (changed flows, their rates,
    # status): status -1 names an inactive flow, -2 a non-finite rate. A flow with at most
    # tol * size left is due now, whatever its new rate: a rounding residue must not be left
    # to crawl (or, at rate 0, to stall the simulation)
    k = flows.shape[0]
    out_f = np.empty(k, dtype=np.int64)
    out_r = np.empty(k)
    nf = alive.shape[0]
    for j in range(k):
        f = flows[j]
        if f < 0 or f >= nf or not alive[f]:
            return out_f[:0], out_r[:0], -1
        if not np.isfinite(rates[j]):
            return out_f[:0], out_r[:0], -2
    n = 0
    for j in range(k):
        f = flows[j]
        r = rates[j]
        if r == rate[f]:
            continue
        sent = base_sent[f] + rate[f] * (t - base_t[f])
        base_sent[f] = sent
        base_t[f] = t
        rate[f] = r
        left = size[f] - sent
        if left <= tol * size[f]:
            tree_set(tree, leaves, f, t)
        else:
            tree_set(tree, leaves, f, t + left / r if r > 0 else np.inf)
        out_f[n] = f
        out_r[n] = r
        n += 1
    return out_f[:n], out_r[:n], 0


@njit(cache=True)
def finish(flows, t, rate, base_sent, base_t, alive, tree, leaves):  # pragma: no cover
    # completed flows stop at t and leave the active set
    for j in range(flows.shape[0]):
        f = flows[j]
        base_sent[f] += rate[f] * (t - base_t[f])
        base_t[f] = t
        rate[f] = 0.0
        tree_set(tree, leaves, f, np.inf)
        alive[f] = False


@njit(cache=True)
def drain(
    t_limit,
    tol,
    tree,
    leaves,
    rate,
    base_sent,
    base_t,
    size,
    alive,
    flow_coflow,
    coflow_left,
    coflow_sent_done,
):  # pragma: no cover - numba
    # completes flows in time order while the next completion is before t_limit, stopping
    # after the first instant at which a coflow completes; returns (flows, their
    # completion times, number of instants, whether a coflow completed)
    out_f = []
    out_t = []
    instants = 0
    while True:
        tc = tree[1]
        if not tc < t_limit:
            return np.array(out_f, dtype=np.int64), np.array(out_t), instants, False
        fin = due(tree, leaves, tc + tol * max(1.0, abs(tc)))
        finish(fin, tc, rate, base_sent, base_t, alive, tree, leaves)
        instants += 1
        hit = False
        for f in fin:
            k = flow_coflow[f]
            coflow_left[k] -= 1
            coflow_sent_done[k] += size[f]
            hit = hit or coflow_left[k] == 0
            out_f.append(f)
            out_t.append(tc)
        if hit:
            return np.array(out_f, dtype=np.int64), np.array(out_t), instants, True


@njit(cache=True)
def sent_of(flows, t, rate, base_sent, base_t):  # pragma: no cover - numba
    out = np.empty(flows.shape[0])
    for j in range(flows.shape[0]):
        f = flows[j]
        out[j] = base_sent[f] + rate[f] * (t - base_t[f])
    return out
