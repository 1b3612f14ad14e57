"""Compiled event loop of CoflowSim's PFP (:meth:`.flowsim.FlowEngine._run_pfp`), with numba.

The loop is the reference's, statement for statement, on flat arrays instead of Python
dicts and sets: the same event heap of ``(last quantum, receiver, flow)`` triples (numba's
``heapq`` on a list of tuples pops them in the same lexicographic order), the same greedy
matching per receiver, and the same wake-ups of later receivers. Every rate record and every
last quantum is therefore the one the reference writes, in the same order
(``tests/heuristics/test_coflowsim_pfp.py`` compares them on generated instances).

Data layout, per receiver ``r`` (a port's flow list, ``lists[r]`` in the reference):

- ``items[l_off[r]:l_off[r] + l_len[r]]``: the list, in its fixed order; a receiver holds
  only flows to it, so the room for all of them is known in advance;
- the distinct senders of flows to ``r`` are "pairs" ``l_pair_off[r]:l_pair_off[r + 1]``;
  ``pa_first[k]`` is the position of the first flow of pair ``k`` not known to be dead
  (``-1``: none in the list), and ``nxt`` links each position to the next one of the same
  sender, which together replace the reference's ``by_sender`` and ``first_idx``;
- ``pa_on[k]``: whether the receiver is in the sender's ``recv_with`` set, which only grows;
  ``s_off``/``s_recv``/``s_pair`` list each sender's pairs by receiver, in ascending order,
  so that a wake-up visits the receivers in the order of ``sorted(recv_with[y])``.

This module imports numba; :mod:`.flowsim` imports it only when a PFP replay runs.
"""

from __future__ import annotations

import heapq

import numpy as np
from numba import njit

__all__ = ["pair_tables", "pfp"]


def pair_tables(
    src: np.ndarray, dst: np.ndarray, num_ports: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The distinct (sender, receiver) pairs of the flows, for :func:`pfp`.

    Returns
    -------
    flow_pair
        Each flow's pair, numbered receiver by receiver (then by sender).
    l_pair_off
        Receiver ``r``'s pairs are ``l_pair_off[r]:l_pair_off[r + 1]``.
    s_off, s_recv, s_pair
        Sender ``s``'s pairs are ``s_off[s]:s_off[s + 1]``, by ascending receiver
        ``s_recv``, numbered ``s_pair``.

    Examples
    --------
    >>> fp, lo, so, sr, sp = pair_tables(np.array([0, 1, 0]), np.array([1, 1, 1]), 2)
    >>> fp.tolist(), lo.tolist(), so.tolist(), sr.tolist(), sp.tolist()
    ([0, 1, 0], [0, 0, 2], [0, 1, 2], [1, 1], [0, 1])
    """
    src = np.asarray(src, dtype=np.int64)
    dst = np.asarray(dst, dtype=np.int64)
    key = dst * num_ports + src
    uniq, flow_pair = np.unique(key, return_inverse=True)
    p_dst, p_src = uniq // num_ports, uniq % num_ports
    l_pair_off = np.searchsorted(p_dst, np.arange(num_ports + 1)).astype(np.int64)
    by_sender = np.lexsort((p_dst, p_src))
    s_off = np.searchsorted(p_src[by_sender], np.arange(num_ports + 1)).astype(np.int64)
    return (
        flow_pair.astype(np.int64).ravel(),
        l_pair_off,
        s_off,
        p_dst[by_sender].astype(np.int64),
        by_sender.astype(np.int64),
    )


@njit(cache=True)
def _first_alive(k, base, pa_first, nxt, items, alive, never):  # pragma: no cover - numba
    """Position of the first alive flow of pair ``k`` in its receiver's list (list starting at
    ``items[base]``), else ``never``; moves the pair's pointer past dead flows."""
    i = pa_first[k]
    while i >= 0 and not alive[items[base + i]]:
        i = nxt[base + i]
    pa_first[k] = i
    return np.int64(i) if i >= 0 else never


@njit(cache=True)
def _push_todo(todo, in_todo, r):  # pragma: no cover - numba
    if not in_todo[r]:
        heapq.heappush(todo, r)
        in_todo[r] = True


@njit(cache=True)
def _wake(
    y,
    after,
    s_off,
    s_recv,
    s_pair,
    pa_on,
    pa_first,
    nxt,
    items,
    l_off,
    alive,
    serving,
    pos,
    todo,
    in_todo,
    w_head,
    w_tail,
    w_y,
    w_next,
    never,
):  # pragma: no cover - numba
    """Sender ``y`` is free from receiver ``after`` on: queues it at the first later receiver
    that prefers one of its flows to its current match (the reference's ``wake``)."""
    for e in range(s_off[y], s_off[y + 1]):
        r2 = s_recv[e]
        k = s_pair[e]
        if r2 <= after or not pa_on[k]:
            continue
        cur = serving[r2]
        limit = np.int64(pos[cur]) if cur >= 0 else never
        if _first_alive(k, l_off[r2], pa_first, nxt, items, alive, never) < limit:
            w_y.append(y)
            w_next.append(np.int64(-1))
            n = len(w_y) - 1
            if w_head[r2] < 0:
                w_head[r2] = n
            else:
                w_next[w_tail[r2]] = n
            w_tail[r2] = n
            _push_todo(todo, in_todo, r2)
            return


@njit(cache=True)
def _rematch(changed, at, st):  # pragma: no cover - numba
    """Recomputes the greedy matching where it can have changed: the receivers ``changed``,
    and later ones that lose their sender or may now want a freed one (the reference's
    ``rematch``, receivers in ascending order). ``st`` is :func:`pfp`'s state, one tuple."""
    (
        src,
        items,
        l_off,
        l_len,
        head,
        alive,
        served_by,
        serving,
        rem,
        serve_q0,
        pos,
        s_off,
        s_recv,
        s_pair,
        pa_on,
        pa_first,
        nxt,
        todo,
        in_todo,
        w_head,
        w_tail,
        w_y,
        w_next,
        events,
        raw_q,
        raw_f,
        raw_r,
        never,
        mib,
    ) = st
    for r in changed:
        _push_todo(todo, in_todo, r)
    w_y.clear()
    w_next.clear()
    while len(todo) > 0:
        r = heapq.heappop(todo)
        in_todo[r] = False
        old = serving[r]
        base = l_off[r]
        end = l_len[r]
        h = head[r]
        while h < end and not alive[items[base + h]]:
            h += 1
        head[r] = h
        new = np.int64(-1)
        while h < end:
            f = items[base + h]
            if alive[f]:
                owner = served_by[src[f]]
                if owner < 0 or owner >= r:
                    new = f
                    break
            h += 1
        e = w_head[r]
        w_head[r] = -1
        while e >= 0:
            y = w_y[e]
            if served_by[y] < 0 and (new < 0 or src[new] != y):
                _wake(
                    y,
                    r,
                    s_off,
                    s_recv,
                    s_pair,
                    pa_on,
                    pa_first,
                    nxt,
                    items,
                    l_off,
                    alive,
                    serving,
                    pos,
                    todo,
                    in_todo,
                    w_head,
                    w_tail,
                    w_y,
                    w_next,
                    never,
                )
            e = w_next[e]
        if new == old:
            continue
        if old >= 0 and alive[old]:
            rem[old] = rem[old] - (at - serve_q0[old])
            raw_q.append(at)
            raw_f.append(old)
            raw_r.append(0.0)
        if new >= 0:
            serve_q0[new] = at
            raw_q.append(at)
            raw_f.append(new)
            raw_r.append(mib)
            heapq.heappush(events, (at + rem[new] - 1, r, new))
        serving[r] = new
        s_old = src[old] if old >= 0 else np.int64(-1)
        s_new = src[new] if new >= 0 else np.int64(-1)
        if s_old == s_new:
            continue
        if s_old >= 0 and served_by[s_old] == r:
            served_by[s_old] = -1
        if s_new >= 0:
            loser = served_by[s_new]
            served_by[s_new] = r
            if loser > r:
                _push_todo(todo, in_todo, loser)
        if s_old >= 0:
            _wake(
                s_old,
                r,
                s_off,
                s_recv,
                s_pair,
                pa_on,
                pa_first,
                nxt,
                items,
                l_off,
                alive,
                serving,
                pos,
                todo,
                in_todo,
                w_head,
                w_tail,
                w_y,
                w_next,
                never,
            )


@njit(cache=True)
def _valid(end, r, f, serving, alive, serve_q0, rem):  # pragma: no cover - numba
    return serving[r] == f and alive[f] and end == serve_q0[f] + rem[f] - 1


@njit(cache=True)
def pfp(
    adm_q,
    adm_ptr,
    adm_flows,
    src,
    dst,
    size_mib,
    red,
    job,
    red_count,
    job_reds,
    num_ports,
    flow_pair,
    l_pair_off,
    s_off,
    s_recv,
    s_pair,
    never,
):  # pragma: no cover - numba
    """CoflowSim's PFP (``FlowSimulator``'s PFP branch). Coflows enter at quanta adm_q[a],
    their flows adm_flows[adm_ptr[a]:adm_ptr[a+1]] in the reference's order; pairs from
    :func:`pair_tables`. Returns the rate records (quantum, flow, bytes per quantum), each
    flow's last quantum in order of completion (quantum, flow), each coflow's last quantum,
    whether it finished, and the number of CoflowSim events."""
    nf = src.shape[0]
    mib = 1048576.0
    rem = size_mib.copy()
    serve_q0 = np.zeros(nf, dtype=np.int64)
    alive = np.zeros(nf, dtype=np.bool_)
    pos = np.zeros(nf, dtype=np.int64)
    serving = np.full(num_ports, -1, dtype=np.int64)
    served_by = np.full(num_ports, -1, dtype=np.int64)
    head = np.zeros(num_ports, dtype=np.int64)
    l_off = np.zeros(num_ports + 1, dtype=np.int64)
    for f in range(nf):
        l_off[dst[f] + 1] += 1
    for p in range(num_ports):
        l_off[p + 1] += l_off[p]
    l_len = np.zeros(num_ports, dtype=np.int64)
    items = np.empty(nf, dtype=np.int64)
    nxt = np.full(nf, -1, dtype=np.int64)
    n_pairs = flow_pair.max() + 1 if nf > 0 else 0
    pa_first = np.full(n_pairs, -1, dtype=np.int64)
    pa_on = np.zeros(n_pairs, dtype=np.bool_)
    red_left = red_count.copy()
    red_fin = np.full(red_count.shape[0], -1, dtype=np.int64)
    job_left = job_reds.copy()
    job_fin = np.full(job_reds.shape[0], -1, dtype=np.int64)
    job_done = np.zeros(job_reds.shape[0], dtype=np.bool_)
    num_events = 0
    # growable lists, typed by a first element removed at once
    raw_q = [np.int64(0)]
    raw_f = [np.int64(0)]
    raw_r = [0.0]
    fin_q = [np.int64(0)]
    fin_f = [np.int64(0)]
    pending = [np.int64(0)]
    todo = [np.int64(0)]
    w_y = [np.int64(0)]
    w_next = [np.int64(0)]
    events = [(np.int64(0), np.int64(0), np.int64(0))]
    for lst in (raw_q, raw_f, fin_q, fin_f, pending, todo, w_y, w_next):
        lst.pop()
    raw_r.pop()
    events.pop()
    in_todo = np.zeros(num_ports, dtype=np.bool_)
    w_head = np.full(num_ports, -1, dtype=np.int64)
    w_tail = np.full(num_ports, -1, dtype=np.int64)
    in_changed = np.zeros(num_ports, dtype=np.bool_)
    existing = np.empty(nf, dtype=np.int64)
    peak = np.empty(nf, dtype=np.int64)
    merged = np.empty(nf, dtype=np.int64)
    st = (  # the state _rematch works on, in one tuple
        src,
        items,
        l_off,
        l_len,
        head,
        alive,
        served_by,
        serving,
        rem,
        serve_q0,
        pos,
        s_off,
        s_recv,
        s_pair,
        pa_on,
        pa_first,
        nxt,
        todo,
        in_todo,
        w_head,
        w_tail,
        w_y,
        w_next,
        events,
        raw_q,
        raw_f,
        raw_r,
        never,
        mib,
    )
    n_adm = adm_q.shape[0]
    ai = 0
    while True:
        while len(events) > 0:
            top = events[0]
            if _valid(top[0], top[1], top[2], serving, alive, serve_q0, rem):
                break
            heapq.heappop(events)
        next_end = events[0][0] if len(events) > 0 else never
        next_epoch = adm_q[ai] if ai < n_adm else never
        if next_end >= never and next_epoch >= never:
            break  # everything admitted has finished
        if next_end < next_epoch:
            qf = next_end
            departed = False
            while len(events) > 0 and events[0][0] == qf:
                end, r, f = heapq.heappop(events)
                if not _valid(end, r, f, serving, alive, serve_q0, rem):
                    continue
                alive[f] = False  # serving[r] keeps it until the rematch
                fin_f.append(f)
                fin_q.append(qf)
                pending.append(r)
                rd = red[f]
                red_left[rd] -= 1
                if qf > red_fin[rd]:
                    red_fin[rd] = qf
                if red_left[rd] == 0:
                    j = job[f]
                    job_left[j] -= 1
                    if red_fin[rd] > job_fin[j]:
                        job_fin[j] = red_fin[rd]
                    if job_left[j] == 0:
                        job_done[j] = True
                        departed = True
            if departed:
                num_events += 1
            q = qf + 1
            if next_epoch == q:
                continue  # the admission at this quantum rematches
            _rematch(pending, q, st)
            pending.clear()
        else:
            q = next_epoch
            lo = adm_ptr[ai]
            hi = adm_ptr[ai + 1]
            ai += 1
            new_flows = adm_flows[lo:hi]
            # the new flows by receiver, each receiver's in admission order
            by_dst = new_flows[np.argsort(dst[new_flows], kind="mergesort")]
            changed = [np.int64(0)]
            changed.pop()
            a = 0
            while a < by_dst.shape[0]:
                r = dst[by_dst[a]]
                b = a
                while b < by_dst.shape[0] and dst[by_dst[b]] == r:
                    b += 1
                group = by_dst[a:b]
                a = b
                changed.append(r)
                in_changed[r] = True
                base = l_off[r]
                n_ex = 0
                top_left = np.int64(-1)
                for i in range(l_len[r]):
                    f = items[base + i]
                    if alive[f]:
                        existing[n_ex] = f
                        left = rem[f] - (q - serve_q0[f]) if serving[r] == f else rem[f]
                        if left > top_left:
                            top_left = left
                        peak[n_ex] = top_left
                        n_ex += 1
                # each new flow goes after the existing flows up to the last whose running
                # maximum of bytes left is at most its size (bisect_right), ties by size
                # then by admission order
                gap = np.searchsorted(peak[:n_ex], size_mib[group], side="right")
                order = np.argsort(size_mib[group], kind="mergesort")
                order = order[np.argsort(gap[order], kind="mergesort")]
                n_m = 0
                e = 0
                for i in order:
                    while e < gap[i]:
                        merged[n_m] = existing[e]
                        n_m += 1
                        e += 1
                    merged[n_m] = group[i]
                    n_m += 1
                while e < n_ex:
                    merged[n_m] = existing[e]
                    n_m += 1
                    e += 1
                for i in range(n_m):
                    items[base + i] = merged[i]
                l_len[r] = n_m
                for f in group:
                    alive[f] = True
                # rebuild: positions, per-sender chains, recv_with
                for k in range(l_pair_off[r], l_pair_off[r + 1]):
                    pa_first[k] = -1
                for i in range(n_m - 1, -1, -1):
                    f = items[base + i]
                    pos[f] = i
                    k = flow_pair[f]
                    nxt[base + i] = pa_first[k]
                    pa_first[k] = i
                    pa_on[k] = True
                head[r] = 0
            for r in pending:
                if not in_changed[r]:
                    changed.append(r)
                    in_changed[r] = True
            for r in changed:
                in_changed[r] = False
            num_events += 1
            _rematch(changed, q, st)
            pending.clear()
    return (
        np.array(raw_q, dtype=np.int64),
        np.array(raw_f, dtype=np.int64),
        np.array(raw_r, dtype=np.float64),
        np.array(fin_q, dtype=np.int64),
        np.array(fin_f, dtype=np.int64),
        job_fin,
        job_done,
        num_events,
    )
