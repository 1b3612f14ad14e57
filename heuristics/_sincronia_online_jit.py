"""Numba kernels of :mod:`coflowlab.heuristics.sincronia_online`'s greedy allocation, at module
level (numba's disk cache finds a kernel again in a new process only when it is a module global).

Strict-priority greedy (Sincronia's GREEDY; Agarwal et al., SIGCOMM 2018) in priority order
gives each flow ``min(residual ingress, residual egress)``. After the first flow of a port pair
``(i, o)`` in that order, one of ``i``, ``o`` has exactly nothing left (``r − r == 0`` in floating
point), so every later flow of the pair gets 0. Only the *head* of each pair (its active flow of
highest priority) can send. The kernels therefore keep, per pair, its active flows and its head,
and the heads sorted by priority; an event costs a pass over the heads instead of a sort and a
pass over every active flow. The rates are exactly those of
:func:`coflowlab.allocation.priority_greedy` on all active flows: the same subtractions, in the
same order.

A flow's priority key is ``rank[its coflow] · num_flows + its index`` (smaller first), the key of
:class:`coflowlab.list_scheduling.StaticPriority`.

State arrays (owned by the policy, updated in place):

- per pair ``p``: ``ptr[p]..ptr[p] + count[p]`` of ``slot`` hold its active flows; ``head[p]``
  (-1 when empty) and ``head_key[p]``;
- per flow: ``pos[f]`` its slot (-1 when inactive), ``rate[f]`` the rate last handed out;
- ``heads[:H]`` the non-empty pairs by increasing ``keys[:H]`` (their heads' keys);
- ``sending[:S]`` the flows whose ``rate`` is positive; ``stamp`` marks a fill's senders;
- ``meta = [H, S, stamp counter]``.

A new coflow order rebuilds the heads (:func:`update_flows` with ``rebuild``), unless it keeps
the relative order of every coflow with an active flow: the heads and their order then stay,
and :func:`rekey_heads` only rewrites their keys.
"""

from __future__ import annotations

import numpy as np
from numba import njit

BIG = np.iinfo(np.int64).max


@njit(cache=True)
def count_coflows(arrived, completed, flow_coflow, count):  # pragma: no cover - numba
    """Active flows per coflow, after the arrivals and completions of an event."""
    for j in range(arrived.shape[0]):
        count[flow_coflow[arrived[j]]] += 1
    for j in range(completed.shape[0]):
        count[flow_coflow[completed[j]]] -= 1


@njit(cache=True)
def port_loads(row, coflow, src, dst, remaining, m, k):  # pragma: no cover - numba
    """``(k, 2m)`` remaining bytes per port of the coflows with ``row[c] >= 0``, summed flow by
    flow in the given order (the additions of ``np.add.at``, hence the same bits)."""
    load = np.zeros((k, 2 * m))
    for i in range(coflow.shape[0]):
        r = row[coflow[i]]
        if r >= 0:
            load[r, src[i]] += remaining[i]
            load[r, m + dst[i]] += remaining[i]
    return load


@njit(cache=True, inline="always")
def _head_of(p, ptr, count, slot, rank, flow_coflow, nf):  # pragma: no cover - numba
    best = -1
    best_key = BIG
    for k in range(ptr[p], ptr[p] + count[p]):
        f = slot[k]
        key = rank[flow_coflow[f]] * nf + f
        if key < best_key:
            best_key = key
            best = f
    return best, best_key


@njit(cache=True)
def _drop_head(p, heads, keys, head_key, meta):  # pragma: no cover - numba
    h = meta[0]
    j = np.searchsorted(keys[:h], head_key[p])
    for i in range(j, h - 1):
        heads[i] = heads[i + 1]
        keys[i] = keys[i + 1]
    meta[0] = h - 1


@njit(cache=True)
def _move_head(p, old_key, key, heads, keys, h):  # pragma: no cover - numba
    # the pair's new head comes later than its old one (a larger key): shift the heads in
    # between one place to the front
    i = np.searchsorted(keys[:h], old_key)
    j = np.searchsorted(keys[:h], key) - 1  # the new key's place once the old one is gone
    for q in range(i, j):
        heads[q] = heads[q + 1]
        keys[q] = keys[q + 1]
    heads[j] = p
    keys[j] = key


@njit(cache=True)
def update_flows(
    arrived,
    completed,
    rebuild,
    pair_of,
    ptr,
    count,
    slot,
    pos,
    rate,
    head,
    head_key,
    heads,
    keys,
    meta,
    rank,
    flow_coflow,
):  # pragma: no cover - numba
    """Adds the arrivals, removes the completions; with ``rebuild`` (the order or the set of
    pairs changed) recomputes every head and sorts them, else moves only the heads of the
    pairs that lost theirs."""
    nf = pos.shape[0]
    rebuild = rebuild or arrived.shape[0] > 0  # a new flow may head its pair
    for j in range(arrived.shape[0]):
        f = arrived[j]
        p = pair_of[f]
        k = ptr[p] + count[p]
        slot[k] = f
        pos[f] = k
        count[p] += 1
    for j in range(completed.shape[0]):
        f = completed[j]
        k = pos[f]
        if k < 0:  # not listed (cannot happen: every completion was seen arriving)
            continue
        p = pair_of[f]
        last = ptr[p] + count[p] - 1
        g = slot[last]
        slot[k] = g
        pos[g] = k
        pos[f] = -1
        count[p] -= 1
        rate[f] = 0.0  # the simulator stopped it
        if rebuild or head[p] != f:
            continue
        if count[p] > 0:
            h, key = _head_of(p, ptr, count, slot, rank, flow_coflow, nf)
            _move_head(p, head_key[p], key, heads, keys, meta[0])
            head[p] = h
            head_key[p] = key
        else:
            _drop_head(p, heads, keys, head_key, meta)
            head[p] = -1
    if rebuild:
        _rebuild(ptr, count, slot, head, head_key, heads, keys, meta, rank, flow_coflow, nf)


@njit(cache=True)
def _rebuild(
    ptr,
    count,
    slot,
    head,
    head_key,
    heads,
    keys,
    meta,
    rank,
    flow_coflow,
    nf,
):  # pragma: no cover - numba
    h = 0
    for p in range(count.shape[0]):
        if count[p] == 0:
            head[p] = -1
            continue
        f, key = _head_of(p, ptr, count, slot, rank, flow_coflow, nf)
        head[p] = f
        head_key[p] = key
        heads[h] = p
        keys[h] = key
        h += 1
    order = radix_argsort(keys[:h])  # keys are distinct: any sort gives the same order
    heads[:h] = heads[:h][order]
    keys[:h] = keys[:h][order]
    meta[0] = h


@njit(cache=True)
def rekey_heads(head, head_key, heads, keys, meta, rank, flow_coflow):  # pragma: no cover - numba
    """Gives every head its key under a new ``rank`` that keeps the relative order of every
    coflow with an active flow: each pair's head and the heads' order stay (a flow's key
    orders flows by ``(rank of its coflow, index)``, and no active flow's place in that order
    moved), only the keys change, and they stay increasing. This is the state
    :func:`update_flows` would rebuild, without the pass over every active flow and the sort
    (about 15,500 of the 16,250 reorders of the Facebook trace keep the order)."""
    nf = flow_coflow.shape[0]
    for i in range(meta[0]):
        p = heads[i]
        f = head[p]
        key = rank[flow_coflow[f]] * nf + f
        head_key[p] = key
        keys[i] = key


@njit(cache=True)
def radix_argsort(keys):  # pragma: no cover - numba
    """The order that sorts non-negative ``keys`` (stable LSD radix sort, 11 bits a pass):
    linear in the number of keys, where a comparison sort of the ~10^4 heads costs more than
    the rest of a rebuild."""
    n = keys.shape[0]
    order = np.arange(n)
    if n < 2:
        return order
    top = keys.max()
    tmp = np.empty(n, dtype=np.int64)
    counts = np.empty(2049, dtype=np.int64)
    shift = 0
    while (top >> shift) > 0:
        counts[:] = 0
        for i in range(n):
            counts[((keys[order[i]] >> shift) & 2047) + 1] += 1
        for b in range(2048):
            counts[b + 1] += counts[b]
        for i in range(n):
            b = (keys[order[i]] >> shift) & 2047
            tmp[counts[b]] = order[i]
            counts[b] += 1
        order, tmp = tmp, order
        shift += 11
    return order


@njit(cache=True)
def greedy_fill(
    cap_in, cap_out, pair_src, pair_dst, head, heads, rate, sending, stamp, meta
):  # pragma: no cover - numba
    """Greedy rates of the heads in priority order (every other active flow gets 0); returns
    the flows whose rate changed and their new rates, by increasing flow index."""
    h = meta[0]
    res_in = cap_in.copy()
    res_out = cap_out.copy()
    # once every ingress or every egress port is full, no later head can get anything
    open_in = 0
    for s in range(res_in.shape[0]):
        open_in += res_in[s] > 0.0
    open_out = 0
    for d in range(res_out.shape[0]):
        open_out += res_out[d] > 0.0
    new_f = np.empty(min(h, res_in.shape[0] + res_out.shape[0]), dtype=np.int64)
    new_r = np.empty(new_f.shape[0])
    n_new = 0
    for j in range(h):
        if open_in == 0 or open_out == 0:
            break
        p = heads[j]
        s = pair_src[p]
        d = pair_dst[p]
        # priority_greedy's rule, operation for operation
        x = res_in[s]
        if res_out[d] < x:
            x = res_out[d]
        if x > 0.0:
            new_f[n_new] = head[p]
            new_r[n_new] = x
            n_new += 1
            res_in[s] -= x
            res_out[d] -= x
            open_in -= res_in[s] <= 0.0
            open_out -= res_out[d] <= 0.0
    # the changes: new senders at a new rate, old senders that stopped (and are active)
    meta[2] += 1
    mark = meta[2]
    out_f = np.empty(n_new + meta[1], dtype=np.int64)
    out_r = np.empty(out_f.shape[0])
    n_out = 0
    for i in range(n_new):
        f = new_f[i]
        stamp[f] = mark
        if rate[f] != new_r[i]:
            out_f[n_out] = f
            out_r[n_out] = new_r[i]
            n_out += 1
    for i in range(meta[1]):
        f = sending[i]
        if stamp[f] != mark and rate[f] != 0.0:
            out_f[n_out] = f
            out_r[n_out] = 0.0
            n_out += 1
            rate[f] = 0.0
    for i in range(n_new):
        rate[new_f[i]] = new_r[i]
        sending[i] = new_f[i]
    meta[1] = n_new
    order = np.argsort(out_f[:n_out])
    return out_f[:n_out][order], out_r[:n_out][order]
