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

The heads in priority order are a sorted array plus a short sorted *pending* list. Between
rebuilds a pair's head only moves later (its head completed; the next one has a larger key) or
goes (the pair emptied); shifting the sorted array for each of these cost more than the fill
itself on the Facebook trace (about 4.5·10^9 entries moved over ~700,000 completions). So a
head that goes is only marked *dead* in the array (its ports become :data:`DEAD`, a port pair
with no capacity, which the fill passes over), and a moved head goes to the pending list, with
its place in the array; the fill merges the two. The array is compacted (dead entries out,
pending entries in) when the pending list is full and before the keys are rewritten.

State arrays (owned by the policy, updated in place):

- per pair ``p``: ``ptr[p]..ptr[p] + count[p]`` of ``slot`` hold its active flows; ``head[p]``
  (-1 when empty) and ``head_key[p]``;
- per flow: ``pos[f]`` its slot (-1 when inactive), ``rate[f]`` the rate last handed out;
- ``heads[:H]`` pairs by increasing ``keys[:H]`` (their heads' keys, dead entries' too, so the
  array stays sorted), ``ports[:H]`` their ports (``pair_ports`` of the pair, or :data:`DEAD`);
- ``pending[:, :P]`` the moved heads by increasing key: rows ``PAIR``, ``KEY``, ``PORTS`` and
  ``AT`` (how many array entries come before it: the array position it is merged in at);
- ``sending[:S]`` the flows whose ``rate`` is positive, in the last fill's order, with their
  keys and ports in ``sent_kp[:, :S]``; ``stamp`` marks a fill's senders;
- ``meta = [H, S, stamp counter, P, dead entries, first change]`` (:data:`M_HEADS`, ...).

A new coflow order rebuilds the heads (:func:`update_flows` with ``rebuild``), unless it keeps
the relative order of every coflow with an active flow: the heads and their order then stay,
and :func:`rekey_heads` only rewrites their keys. The fill starts at the first head that
changed since the last one (:func:`greedy_fill`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

BIG = np.iinfo(np.int64).max

PORT_BITS = 32
PORT_MASK = (1 << PORT_BITS) - 1
"""``ports[j]`` packs the ports of the pair ``heads[j]`` as ``(src + 1) << PORT_BITS | (dst + 1)``
(``pair_ports[p]`` of the pair ``p``), so the fill reads one array in order instead of looking up
each pair's ports; port ``0`` on both sides is the dead entries' (:data:`DEAD`)."""

DEAD = 0
"""The ports of a dead entry: port 0 on both sides, which the fill gives no capacity."""

PENDING = 64
"""Capacity of the pending list (the array is compacted when it is full): a full one costs
the fill 64 more segments and an insertion 64 moves at most, a compaction one pass."""

PAIR, KEY, PORTS, AT = range(4)
"""Rows of ``pending``."""

M_HEADS, M_SENDERS, M_STAMP, M_PENDING, M_DEAD, M_CHANGED = range(6)
"""Entries of ``meta``: the array's length ``H`` (dead entries included), the senders ``S``,
the stamp counter, the pending list's length ``P``, the dead entries, the least key of a head
that changed since the last fill (``BIG``: none; ``0``: every head, after a rebuild or new
keys)."""


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
def _unlist(key, keys, ports, pending, meta):  # pragma: no cover - numba
    # takes the head with this key out of the order: marked dead in the array, or removed
    # from the pending list (keys are distinct, so it is the one entry with the key)
    h = meta[M_HEADS]
    i = np.searchsorted(keys[:h], key)
    if i < h and keys[i] == key:
        ports[i] = DEAD
        meta[M_DEAD] += 1
        return
    n = meta[M_PENDING]
    i = np.searchsorted(pending[KEY, :n], key)
    for q in range(i, n - 1):
        for row in range(pending.shape[0]):
            pending[row, q] = pending[row, q + 1]
    meta[M_PENDING] = n - 1


@njit(cache=True)
def _list_pending(p, key, pair_ports, heads, keys, ports, pending, meta):
    # pragma: no cover - numba
    # puts the pair's new head in the pending list, in key order, with its place in the array
    n = meta[M_PENDING]
    if n == pending.shape[1]:
        _compact(heads, keys, ports, pending, meta)
        n = 0
    i = np.searchsorted(pending[KEY, :n], key)
    for q in range(n, i, -1):
        for row in range(pending.shape[0]):
            pending[row, q] = pending[row, q - 1]
    pending[PAIR, i] = p
    pending[KEY, i] = key
    pending[PORTS, i] = pair_ports[p]
    pending[AT, i] = np.searchsorted(keys[: meta[M_HEADS]], key)
    meta[M_PENDING] = n + 1


@njit(cache=True)
def _compact(heads, keys, ports, pending, meta):  # pragma: no cover - numba
    """Merges the pending list into the array and drops the dead entries: the live heads in
    key order, in the array alone."""
    h = meta[M_HEADS]
    n = meta[M_PENDING]
    if n == 0 and meta[M_DEAD] == 0:
        return
    size = h - meta[M_DEAD] + n
    new_heads = np.empty(size, dtype=np.int64)
    new_keys = np.empty(size, dtype=np.int64)
    new_ports = np.empty(size, dtype=np.int64)
    w = 0
    q = 0
    for i in range(h + 1):
        # a pending entry comes before the array entry at its place (a larger key)
        while q < n and pending[AT, q] == i:
            new_heads[w] = pending[PAIR, q]
            new_keys[w] = pending[KEY, q]
            new_ports[w] = pending[PORTS, q]
            w += 1
            q += 1
        if i < h and ports[i] != DEAD:
            new_heads[w] = heads[i]
            new_keys[w] = keys[i]
            new_ports[w] = ports[i]
            w += 1
    heads[:w] = new_heads
    keys[:w] = new_keys
    ports[:w] = new_ports
    meta[M_HEADS] = w
    meta[M_PENDING] = 0
    meta[M_DEAD] = 0


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
    ports,
    pending,
    pair_ports,
    meta,
    rank,
    flow_coflow,
):  # pragma: no cover - numba
    """Adds the arrivals, removes the completions; with ``rebuild`` (the order or the set of
    pairs changed) recomputes every head and sorts them, else moves only the heads of the
    pairs that lost theirs (a later key: to the pending list)."""
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
        meta[M_CHANGED] = min(meta[M_CHANGED], head_key[p])  # the new head comes later
        _unlist(head_key[p], keys, ports, pending, meta)
        if count[p] > 0:
            h, key = _head_of(p, ptr, count, slot, rank, flow_coflow, nf)
            _list_pending(p, key, pair_ports, heads, keys, ports, pending, meta)
            head[p] = h
            head_key[p] = key
        else:
            head[p] = -1
    if rebuild:
        _rebuild(
            ptr, count, slot, head, head_key, heads, keys, ports, pair_ports, meta, rank,
            flow_coflow, nf,
        )  # fmt: skip


@njit(cache=True)
def _rebuild(
    ptr,
    count,
    slot,
    head,
    head_key,
    heads,
    keys,
    ports,
    pair_ports,
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
    ports[:h] = pair_ports[heads[:h]]
    meta[M_HEADS] = h
    meta[M_PENDING] = 0
    meta[M_DEAD] = 0
    meta[M_CHANGED] = 0


@njit(cache=True)
def rekey_heads(head, head_key, heads, keys, ports, pending, meta, rank, flow_coflow):
    # pragma: no cover - numba
    """Gives every head its key under a new ``rank`` that keeps the relative order of every
    coflow with an active flow: each pair's head and the heads' order stay (a flow's key
    orders flows by ``(rank of its coflow, index)``, and no active flow's place in that order
    moved), only the keys change, and they stay increasing. This is the state
    :func:`update_flows` would rebuild, without the pass over every active flow and the sort
    (about 15,500 of the 16,250 reorders of the Facebook trace keep the order). The array is
    compacted first (a dead entry's key is not rewritten, so it could break the order)."""
    _compact(heads, keys, ports, pending, meta)
    meta[M_CHANGED] = 0  # the last fill's keys are stale
    nf = flow_coflow.shape[0]
    for i in range(meta[M_HEADS]):
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


@njit(cache=True, inline="always")
def _send(f, key, q, x, res_in, res_out, new_f, new_r, new_kp, st):  # pragma: no cover - numba
    # head f (its key, its ports q) sends at x: recorded, its ports' residuals reduced;
    # st = [senders found, open ingress ports, open egress ports]. False once every ingress
    # or every egress port is full: no later head can get anything.
    s = q >> PORT_BITS
    d = q & PORT_MASK
    n = st[0]
    new_f[n] = f
    new_r[n] = x
    new_kp[0, n] = key
    new_kp[1, n] = q
    st[0] = n + 1
    res_in[s] -= x
    res_out[d] -= x
    if res_in[s] <= 0.0:
        st[1] -= 1
    if res_out[d] <= 0.0:
        st[2] -= 1
    return st[1] > 0 and st[2] > 0


@njit(cache=True, inline="always")
def _offer(ports, pairs, keys, lo, hi, res_in, res_out, head, new_f, new_r, new_kp, st):
    # pragma: no cover - numba
    # offers the heads ports[lo:hi] (of the pairs pairs[lo:hi]) their greedy rates in order;
    # False once no later head can get anything (_send)
    for j in range(lo, hi):
        q = ports[j]
        s = q >> PORT_BITS
        d = q & PORT_MASK
        # priority_greedy's rule, operation for operation
        x = res_in[s]
        if res_out[d] < x:
            x = res_out[d]
        if x > 0.0 and not _send(
            head[pairs[j]], keys[j], q, x, res_in, res_out, new_f, new_r, new_kp, st
        ):
            return False
    return True


@njit(cache=True)
def greedy_fill(
    cap_in, cap_out, head, heads, keys, ports, pending, rate, sending, sent_kp, stamp, meta
):  # pragma: no cover - numba
    """Greedy rates of the heads in priority order (every other active flow gets 0): the
    array's entries with the pending ones merged in at their places; returns the flows whose
    rate changed and their new rates, by increasing flow index.

    Only the heads from the first one that changed since the last fill
    (``meta[M_CHANGED]``, a key) are offered capacity: before it the heads are the same, so
    the last fill's senders there (``sending``, with their keys and ports in ``sent_kp``)
    send again at their rates, the same subtractions in the same order, and every other
    head there gets 0 again (its ports' residuals are the same bits)."""
    # the residuals, port 0 being the dead entries' (no capacity)
    res_in = np.zeros(cap_in.shape[0] + 1)
    res_in[1:] = cap_in
    res_out = np.zeros(cap_out.shape[0] + 1)
    res_out[1:] = cap_out
    st = np.zeros(3, dtype=np.int64)
    for s in range(1, res_in.shape[0]):
        st[1] += res_in[s] > 0.0
    for d in range(1, res_out.shape[0]):
        st[2] += res_out[d] > 0.0
    # at most one sender per port
    new_f = np.empty(res_in.shape[0] + res_out.shape[0], dtype=np.int64)
    new_r = np.empty(new_f.shape[0])
    new_kp = np.empty((2, new_f.shape[0]), dtype=np.int64)
    go = st[1] > 0 and st[2] > 0
    start = meta[M_CHANGED]
    for i in range(meta[M_SENDERS]):
        if not go or sent_kp[0, i] >= start:
            break
        f = sending[i]
        go = _send(f, sent_kp[0, i], sent_kp[1, i], rate[f], res_in, res_out, new_f, new_r,
                   new_kp, st)  # fmt: skip
    h = meta[M_HEADS]
    n_pending = meta[M_PENDING]
    lo = np.searchsorted(keys[:h], start)
    for q in range(np.searchsorted(pending[KEY, :n_pending], start), n_pending):
        if not go:
            break
        at = pending[AT, q]
        go = _offer(ports, heads, keys, lo, at, res_in, res_out, head, new_f, new_r, new_kp, st)
        lo = at
        if go:
            go = _offer(
                pending[PORTS], pending[PAIR], pending[KEY], q, q + 1, res_in, res_out, head,
                new_f, new_r, new_kp, st,
            )  # fmt: skip
    if go:
        _offer(ports, heads, keys, lo, h, res_in, res_out, head, new_f, new_r, new_kp, st)
    meta[M_CHANGED] = BIG
    n_new = st[0]
    # the changes: new senders at a new rate, old senders that stopped (and are active)
    meta[M_STAMP] += 1
    mark = meta[M_STAMP]
    out_f = np.empty(n_new + meta[M_SENDERS], dtype=np.int64)
    out_r = np.empty(out_f.shape[0])
    n_out = 0
    for i in range(n_new):
        f = new_f[i]
        stamp[f] = mark
        if rate[f] != new_r[i]:
            out_f[n_out] = f
            out_r[n_out] = new_r[i]
            n_out += 1
    for i in range(meta[M_SENDERS]):
        f = sending[i]
        if stamp[f] != mark and rate[f] != 0.0:
            out_f[n_out] = f
            out_r[n_out] = 0.0
            n_out += 1
            rate[f] = 0.0
    for i in range(n_new):
        rate[new_f[i]] = new_r[i]
        sending[i] = new_f[i]
        sent_kp[:, i] = new_kp[:, i]
    meta[M_SENDERS] = n_new
    order = np.argsort(out_f[:n_out])
    return out_f[:n_out][order], out_r[:n_out][order]
