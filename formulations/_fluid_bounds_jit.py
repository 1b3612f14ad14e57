"""Numba kernel of :mod:`coflowlab.formulations.fluid_bounds`, at module level (numba's disk
cache finds a kernel again in a new process only when it is a module global)."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def subset_step(
    mask, n, loads, levels, whole, tol, single, port_time, w, port_order
):  # pragma: no cover - numba
    """For the coflows of the bit mask ``mask``: ``span`` of the set, and per member ``j``
    the floor of the set without ``j`` (``max(Σ single, Smith on each port)``); ``inf``
    for non-members."""
    floors = np.empty(n)
    tot = np.empty((loads.shape[1], loads.shape[2]))
    comp = np.empty(n)
    span = subset_step_into(
        mask, n, loads, levels, whole, tol, single, port_time, w, port_order, floors, tot, comp
    )
    return span, floors


@njit(cache=True)
def subset_step_into(
    mask, n, loads, levels, whole, tol, single, port_time, w, port_order, floors, tot, comp
):  # pragma: no cover - numba
    """:func:`subset_step` into the caller's arrays: returns ``span`` and writes the floors
    into ``floors`` (``n``); ``tot`` (levels × ports) and ``comp`` (``n``) are scratch."""
    num_levels = loads.shape[1]
    num_ports = loads.shape[2]
    tot[:, :] = 0.0
    single_sum = 0.0
    for j in range(n):
        if (mask >> j) & 1:
            single_sum += single[j]
            for i in range(num_levels):
                for v in range(num_ports):
                    tot[i, v] += loads[j, i, v]
    span = 0.0
    for i in range(num_levels):
        need = 0.0
        for v in range(num_ports):
            if tot[i, v] > need:
                need = tot[i, v]
        if whole:
            need = np.ceil(need - tol)
        if need > 0.0 and levels[i] + need > span:
            span = levels[i] + need
    floors[:] = np.inf
    for j in range(n):
        if (mask >> j) & 1:
            floors[j] = single_sum - single[j]
    for v in range(port_time.shape[1]):
        # Smith's order on port v, restricted to the mask: completions and the total
        c = 0.0
        total = 0.0
        for k in range(n):
            j = port_order[v, k]
            if (mask >> j) & 1:
                c += port_time[j, v]
                comp[j] = c
                total += w[j] * c
        after = 0.0  # weight of the members after j in the order
        for k in range(n - 1, -1, -1):
            j = port_order[v, k]
            if (mask >> j) & 1:
                value = total - w[j] * comp[j] - port_time[j, v] * after
                if value > floors[j]:
                    floors[j] = value
                after += w[j]
    return span


@njit(cache=True)
def subset_tables(load_after, levels, w, succ, whole, tol):  # pragma: no cover - numba
    """``span`` and the chain bound of every subset of the coflows (bit masks), as
    :func:`coflowlab.formulations.exact_fluid._subset_tables` defines them; ``succ[j]``: the
    mask of the coflows that ``j`` must precede.

    Why a loop: a subset's chain value needs only subsets one coflow smaller, all of them
    numerically smaller masks, so one pass in increasing mask order suffices (no layers by
    popcount), in ``O(2^n (n + levels · ports))`` work and three arrays of ``2^n``. The
    additions are those of the layered numpy version in the same order (a set's load is the
    load of the set without its highest coflow plus that coflow's), so the values are the
    same to the last bit."""
    n = load_after.shape[0]
    size = 1 << n
    span = np.zeros(size)
    load = np.zeros(size)
    need = np.zeros(size)
    for i in range(load_after.shape[1]):
        need[:] = 0.0
        for v in range(load_after.shape[2]):
            used = False
            for j in range(n):
                if load_after[j, i, v] > 0.0:
                    used = True
            if not used:
                continue
            load[0] = 0.0
            for j in range(n):
                low = 1 << j
                a = load_after[j, i, v]
                for s in range(low):
                    value = load[s] + a
                    load[low + s] = value
                    if value > need[low + s]:
                        need[low + s] = value
        level = levels[i]
        for s in range(size):
            need_s = need[s]
            if whole:
                need_s = np.ceil(need_s - tol)
            if need_s > 0.0:
                value = level + need_s
                if value > span[s]:
                    span[s] = value
    chain = load  # reuse the buffer: chain[S] needs only chain of smaller masks
    chain[0] = 0.0
    for s in range(1, size):
        best = np.inf
        for j in range(n):
            if (s >> j) & 1 and (s & succ[j]) == 0:
                value = chain[s ^ (1 << j)] + w[j] * span[s]
                if value < best:
                    best = value
        chain[s] = best
    return span, chain


REL_TOL = 1e-10
"""As :data:`coflowlab.formulations.fluid_bounds._REL_TOL` (a proof of ``chain(U) ≥ T``
accepts ``T (1 - 1e-10)``)."""

WORK, REFINED, BUDGET, STOPPED, LOW_COUNT, HIGH_COUNT = range(6)
"""Entries of ``state`` in :func:`lazy_search`: subsets refined in this call, over all calls,
the budget per call, whether the budget stopped this call (0 or 1), and the entries of the
two memos."""

EMPTY = -1
"""The key of a free slot of a memo table (a bit mask is never negative)."""

_HASH = -7046029254386353131
"""Fibonacci hashing's multiplier ``2^64 / φ`` (``0x9E3779B97F4A7C15``) as a signed 64-bit
integer; products wrap around."""


@njit(cache=True)
def _slot(keys, key):  # pragma: no cover - numba
    """The slot of ``key`` in the open-addressing table ``keys`` (a power-of-two length,
    linear probing), or the free slot where it would go. The table is never full (the
    caller keeps it at most two-thirds full), so the probe ends."""
    last = keys.shape[0] - 1
    h = key * _HASH
    i = (h ^ (h >> 29)) & last
    while keys[i] != key and keys[i] != EMPTY:
        i = (i + 1) & last
    return i


@njit(cache=True)
def memo_get(keys, vals, key, default):  # pragma: no cover - numba
    """The value stored for ``key``, or ``default``."""
    i = _slot(keys, key)
    return vals[i] if keys[i] == key else default


@njit(cache=True)
def memo_put(keys, vals, key, value):  # pragma: no cover - numba
    """Stores ``value`` for ``key``; 1 if ``key`` is new, else 0."""
    i = _slot(keys, key)
    new = keys[i] == EMPTY
    keys[i] = key
    vals[i] = value
    return 1 if new else 0


@njit(cache=True)
def memo_rehash(keys, vals, new_keys, new_vals):  # pragma: no cover - numba
    """Moves every entry of one table into another (empty, larger) one."""
    for i in range(keys.shape[0]):
        if keys[i] != EMPTY:
            j = _slot(new_keys, keys[i])
            new_keys[j] = keys[i]
            new_vals[j] = vals[i]


@njit(cache=True)
def lazy_search(
    mask, target, n, loads, levels, whole, tol, single, port_time, w, port_order, succ,
    low_keys, low_vals, high_keys, high_vals, state, depth, fscratch, iscratch, tscratch,
):  # fmt: skip  # pragma: no cover - numba
    """``LazyChainBound._bound`` compiled: a lower bound on ``chain(mask)``, at least
    ``target`` when the search proves it within the budget (the module notes of
    :mod:`coflowlab.formulations.fluid_bounds`). ``low_*`` and ``high_*`` are the memos
    (open-addressing tables from masks to floats, :func:`memo_get`; each with room for the
    ``budget + 1`` entries a call may add), ``succ[j]`` the mask of the coflows ``j`` must
    precede, ``state`` the counters (:data:`WORK`, ...). The same operations in the same
    order as the Python search, so the same values and memos bit for bit; masks fit an
    int64 (at most 62 coflows). Scratch arrays per recursion depth (``depth``: the number
    of coflows of ``mask``, one less at each level): ``fscratch`` ``(n + 1, 3n)`` floats,
    ``iscratch`` ``(n + 1, 2n)`` ints, ``tscratch`` ``(n + 1, levels, ports)``; no
    allocation per subset."""
    old = memo_get(low_keys, low_vals, mask, -np.inf)
    goal = target - REL_TOL * max(1.0, abs(target))
    if old >= goal or memo_get(high_keys, high_vals, mask, np.inf) <= target:
        return old
    floors = fscratch[depth, :n]
    cand = fscratch[depth, n : 2 * n]
    js = iscratch[depth, :n]
    order = iscratch[depth, n : 2 * n]
    span = subset_step_into(
        mask, n, loads, levels, whole, tol, single, port_time, w, port_order, floors,
        tscratch[depth], fscratch[depth, 2 * n :],
    )  # fmt: skip
    # per eligible j, in increasing j: w_j span + a bound on chain(U - j)
    k = 0
    members = 0
    for j in range(n):
        if not (mask >> j) & 1:
            continue
        members += 1
        if mask & succ[j]:
            continue  # a coflow that must complete after j is in U
        child = memo_get(low_keys, low_vals, mask ^ (1 << j), -np.inf)
        js[k] = j
        cand[k] = w[j] * span + max(floors[j], child)
        k += 1
    failed = False
    # increasing cand, ties in increasing j (a stable insertion sort: np.argsort's
    # mergesort order, without its allocation)
    for i in range(k):
        p = i
        while p > 0 and cand[order[p - 1]] > cand[i]:
            order[p] = order[p - 1]
            p -= 1
        order[p] = i
    for r in range(k):
        q = order[r]
        if cand[q] >= goal:
            break
        if state[STOPPED] != 0:
            break
        state[WORK] += 1
        state[REFINED] += 1
        if state[WORK] > state[BUDGET]:
            state[STOPPED] = 1
            break
        j = js[q]
        gain = w[j] * span
        got = lazy_search(
            mask ^ (1 << j), target - gain, n, loads, levels, whole, tol, single, port_time,
            w, port_order, succ, low_keys, low_vals, high_keys, high_vals, state, depth - 1,
            fscratch, iscratch, tscratch,
        )  # fmt: skip
        cand[q] = max(cand[q], gain + got)
        if cand[q] < goal:
            failed = True  # certified unless the search was stopped meanwhile
            break
    value = 0.0
    if members > 0:
        value = np.inf
        for q in range(k):
            if cand[q] < value:
                value = cand[q]
    if value > old:
        state[LOW_COUNT] += memo_put(low_keys, low_vals, mask, value)
    if failed and state[STOPPED] == 0:
        known = memo_get(high_keys, high_vals, mask, np.inf)
        state[HIGH_COUNT] += memo_put(high_keys, high_vals, mask, min(known, target))
    return max(value, old)
