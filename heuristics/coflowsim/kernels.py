"""Compiled loops of the CoflowSim engines, with numba: the bit-exact byte accounting of
:mod:`.drain` and the rate allocations of :mod:`.engine`.

This module imports numba; the engines import it only when they run, so ``import coflowlab``
stays fast. The kernels are compiled on first use and cached on disk. They use plain IEEE
double arithmetic (no ``fastmath``), which is what Java's ``double`` does, so they give the bits
CoflowSim computes; the binade argument behind :func:`drain_one` and :func:`accumulate` is in
the docstring of :mod:`.drain`.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

__all__ = [
    "FOREVER",
    "MIN_VALUE",
    "ZERO",
    "accumulate",
    "backfill",
    "drain",
    "drain_one",
    "fair",
    "finish_steps",
    "madd",
    "owner_sums",
    "share",
    "shift_tails",
    "steps_to_finish",
]

ZERO = 1e-3
"""CoflowSim's threshold for "no bytes left" and "no bandwidth left"."""

FOREVER = np.int64(1) << np.int64(62)
"""A quantum count meaning "until the flow finishes"."""

MIN_VALUE = 5e-324
"""Java's ``Double.MIN_VALUE``, where CoflowSim's maximum of a bottleneck starts."""

TWO52 = np.int64(1) << np.int64(52)
TWO53 = np.int64(1) << np.int64(53)


@njit(cache=True)
def drain_one(r, d, left):  # pragma: no cover - numba
    """(bytes left, quanta applied) after up to `left` quanta of r -= min(d, r)."""
    steps = np.int64(0)
    if left > 0 and not d > 0.0:
        return r, left
    while left > 0 and r > ZERO:
        r = r - min(d, r)  # one true quantum
        steps += 1
        left -= 1
        if r <= ZERO or left == 0 or not d < r:
            continue
        # then every quantum that stays inside the binade of r, at once
        u = math.ldexp(1.0, math.frexp(r)[1] - 53)
        q = d / u
        fq = math.floor(q)
        frac = q - fq
        big_r = np.int64(r / u)
        fq_i = np.int64(fq)
        tie = frac == 0.5
        dn = fq_i + (fq_i & 1) if tie else fq_i + (1 if frac > 0.5 else 0)
        bound = max(TWO52 + 1, np.int64(math.floor(ZERO / u)) + 1)
        if (tie and (big_r & 1) == 1) or big_r <= bound:
            continue
        if dn == 0:  # d is below half a grid step: nothing moves, ever
            return r, steps + left
        n = min((big_r - bound) // dn, left)
        if n > 0:
            r = float(big_r - n * dn) * u
            steps += n
            left -= n
    return r, steps


@njit(cache=True)
def drain(rem, per_quantum, quanta, out_rem, out_steps):  # pragma: no cover - numba
    for i in range(rem.shape[0]):
        out_rem[i], out_steps[i] = drain_one(rem[i], per_quantum[i], quanta[i])


@njit(cache=True)
def steps_to_finish(r, d, never):  # pragma: no cover - numba
    """Quanta until a flow with r bytes left at d per quantum ends (1: the next one), or
    `never`. A real-arithmetic estimate settles almost every flow; one within rounding of the
    threshold is replayed exactly."""
    if not d > 0.0:
        return never
    x = (r - ZERO) / d
    eps = 2.5e-16 * x * (r / d) + 2e-15 * x + 1e-9
    lo = max(math.ceil(x - eps), 1.0)
    hi = max(math.ceil(x + eps), 1.0)
    if lo == hi and not d < r * 1e-12 and not x > 1e15:
        return np.int64(lo)
    _, steps = drain_one(r, d, FOREVER)
    return never if steps >= FOREVER else steps


@njit(cache=True)
def finish_steps(rem, per_quantum, never, out):  # pragma: no cover - numba
    """:func:`steps_to_finish` of every flow."""
    for i in range(rem.shape[0]):
        out[i] = steps_to_finish(rem[i], per_quantum[i], never)


@njit(cache=True)
def grid_steps(addends, lo, hi, u):  # pragma: no cover - numba
    """Grid steps of size u that adding addends[lo:hi] moves; (False, 0) on a tie."""
    step = np.int64(0)
    for i in range(lo, hi):
        q = addends[i] / u
        fq = math.floor(q)
        fr = q - fq
        if fr == 0.5 or abs(q) >= 2.0**52:
            return False, np.int64(0)
        step += np.int64(fq) + (1 if fr > 0.5 else 0)
    return True, step


@njit(cache=True)
def accumulate(x, addends, lo, hi, rounds):  # pragma: no cover - numba
    """x after `rounds` rounds of `for a in addends[lo:hi]: x += a` (same signs)."""
    k = rounds
    while k > 0:
        if x == 0.0 or not math.isfinite(x):
            ok = False
            step = np.int64(0)
        else:
            u = math.ldexp(1.0, math.frexp(x)[1] - 53)
            big_x = np.int64(abs(x) / u)  # in [2**52, 2**53)
            ok, step = grid_steps(addends, lo, hi, u)
            if ok:
                if x < 0.0:
                    step = -step  # work on |x|
                if step > 0:
                    n = (TWO53 - 1 - big_x) // step
                elif step < 0:
                    n = (big_x - TWO52 - 1) // (-step)
                else:
                    return x  # every addend is lost to rounding
                if n > 0:
                    n = min(n, k)
                    big_x += n * step
                    x = math.copysign(float(big_x) * u, x)
                    k -= n
                    continue
        for i in range(lo, hi):
            x += addends[i]
        k -= 1
    return x


@njit(cache=True)
def _acc_watch(x, buf, n, rounds, t0, watch):  # pragma: no cover - numba
    """accumulate(x, buf[:n], rounds); with `watch`, also the quantum (t0 for the first
    round) at whose end the sum first drops to ZERO or below, else -1."""
    y = accumulate(x, buf, 0, n, rounds)
    if not watch or not x > ZERO or y > ZERO:
        return y, np.int64(-1)
    lo = np.int64(1)  # the sum is monotone: bisect the first round that gets there
    hi = np.int64(rounds)
    while lo < hi:
        mid = (lo + hi) // 2
        if accumulate(x, buf, 0, n, mid) <= ZERO:
            hi = mid
        else:
            lo = mid + 1
    return y, t0 + lo - 1


@njit(cache=True)
def owner_sums(
    sums, keys, starts, ends, per_quantum, last_add, fin, q, stop, watch, first
):  # pragma: no cover - numba
    """For each owner (its flows are rows starts[i]:ends[i], in Java's order): its running
    sum over quanta q..stop-1, where a flow adds per_quantum until quantum fin (exclusive)
    and last_add in quantum fin, if fin < stop. For owners with watch[i], first[i] is the
    first quantum at whose end the sum is ZERO or below (-1: none)."""
    buf = np.empty(per_quantum.shape[0])
    for i in range(keys.shape[0]):
        lo = starts[i]
        hi = ends[i]
        x = sums[keys[i]]
        w = watch[i]
        first[i] = -1
        n_end = 0
        for j in range(lo, hi):
            if fin[j] < stop:
                n_end += 1
        if n_end == 0:
            for j in range(lo, hi):
                buf[j - lo] = per_quantum[j]
            x, c = _acc_watch(x, buf, hi - lo, stop - q, q, w)
            if c >= 0:
                first[i] = c
            sums[keys[i]] = x
            continue
        cuts = np.sort(fin[lo:hi])
        t = q
        prev = -1
        for cut in cuts:
            if cut >= stop:
                break
            if cut == prev:
                continue
            prev = cut
            n = 0
            for j in range(lo, hi):
                if fin[j] >= cut:
                    buf[n] = per_quantum[j]
                    n += 1
            x, c = _acc_watch(x, buf, n, cut - t, t, w and first[i] < 0)
            if c >= 0:
                first[i] = c
            n = 0
            for j in range(lo, hi):
                if fin[j] >= cut:
                    buf[n] = last_add[j] if fin[j] == cut else per_quantum[j]
                    n += 1
            x, c = _acc_watch(x, buf, n, 1, cut, w and first[i] < 0)
            if c >= 0:
                first[i] = c
            t = cut + 1
        n = 0
        for j in range(lo, hi):
            if fin[j] >= stop:
                buf[n] = per_quantum[j]
                n += 1
        x, c = _acc_watch(x, buf, n, stop - t, t, w and first[i] < 0)
        if c >= 0:
            first[i] = c
        sums[keys[i]] = x


@njit(cache=True)
def madd(
    seg,
    flows,
    src,
    dst,
    red,
    rem,
    left,
    red_lo,
    red_hi,
    red_port,
    tau,
    s_free,
    r_free,
    bps,
    skipped,
    trial,
):  # pragma: no cover - numba
    """MADD over the coflows in order: coflow c owns flows[seg[c]:seg[c+1]] (reducer by
    reducer) and reducers red_lo[c]:red_hi[c]; a coflow one of whose ports is full is
    flagged in `skipped`. tau[c] > 0 replaces the coflow's bottleneck time (deadline mode).
    `left` is each reducer's bytes left (CoflowSim reads a reducer's running count, not the
    sum over its flows); a reducer ended by that count can hold a negative count, which
    still enters the bottleneck (negative over an overfilled port is positive)."""
    m = s_free.shape[0]
    send = np.zeros(m)
    recv = np.zeros(m)
    s_used = np.zeros(m)
    r_used = np.zeros(m)
    for c in range(seg.shape[0] - 1):
        lo = seg[c]
        hi = seg[c + 1]
        for k in range(lo, hi):
            f = flows[k]
            bps[f] = 0.0
            send[src[f]] += rem[f]
            recv[dst[f]] = left[red[f]]
        full = False
        alpha = MIN_VALUE
        for k in range(lo, hi):
            f = flows[k]
            a = src[f]
            b = dst[f]
            if (send[a] > 0.0 and s_free[a] <= ZERO) or (recv[b] > 0.0 and r_free[b] <= ZERO):
                full = True
                break
            x = send[a] * 8 / s_free[a]
            if x > alpha:
                alpha = x
            x = recv[b] * 8 / r_free[b]
            if x > alpha:
                alpha = x
        if not full:
            for r in range(red_lo[c], red_hi[c]):
                if left[r] < 0.0:
                    x = left[r] * 8 / r_free[red_port[r]]
                    if x > alpha:
                        alpha = x
        for k in range(lo, hi):
            send[src[flows[k]]] = 0.0
            recv[dst[flows[k]]] = 0.0
        if full:
            skipped[c] = True
            continue
        if tau[c] > 0.0:
            alpha = tau[c]
        for k in range(lo, hi):
            f = flows[k]
            a = src[f]
            b = dst[f]
            if r_free[b] <= ZERO:
                continue
            cur = rem[f] * 8 / alpha
            if cur > s_free[a] or cur > r_free[b]:
                cur = min(s_free[a], r_free[b])
            s_used[a] += cur
            r_used[b] += cur
            if not trial:
                bps[f] = cur
        for k in range(lo, hi):
            f = flows[k]
            a = src[f]
            b = dst[f]
            s_free[a] -= s_used[a]
            s_used[a] = 0.0
            r_free[b] -= r_used[b]
            r_used[b] = 0.0


@njit(cache=True)
def share(seg, flows, src, dst, s_free, r_free, bps, group, num_groups):  # pragma: no cover
    """For each group g in turn, the flows of the coflows c with group[c] == g share what
    is left: each gets min(free_src / n_src, free_dst / n_dst), n counting the group's
    flows whose two ports are not full. Other flows keep their rates."""
    m = s_free.shape[0]
    n_s = np.zeros(m, dtype=np.int64)
    n_r = np.zeros(m, dtype=np.int64)
    s_used = np.zeros(m)
    r_used = np.zeros(m)
    for g in range(num_groups):
        for c in range(seg.shape[0] - 1):
            if group[c] == g:
                for k in range(seg[c], seg[c + 1]):
                    f = flows[k]
                    if r_free[dst[f]] > ZERO and s_free[src[f]] > ZERO:
                        n_s[src[f]] += 1
                        n_r[dst[f]] += 1
        for c in range(seg.shape[0] - 1):
            if group[c] == g:
                for k in range(seg[c], seg[c + 1]):
                    f = flows[k]
                    a = src[f]
                    b = dst[f]
                    if r_free[b] <= ZERO or n_r[b] == 0 or s_free[a] <= ZERO or n_s[a] == 0:
                        continue
                    x = min(s_free[a] / n_s[a], r_free[b] / n_r[b])
                    if x <= ZERO:
                        x = 0.0
                    bps[f] = x
                    s_used[a] += x
                    r_used[b] += x
        for i in range(m):
            s_free[i] -= s_used[i]
            r_free[i] -= r_used[i]
            s_used[i] = 0.0
            r_used[i] = 0.0
            n_s[i] = 0
            n_r[i] = 0


@njit(cache=True)
def backfill(seg, order, flows, src, dst, s_free, r_free, bps):  # pragma: no cover
    """Coflows in `order`, flows in turn: each adds min(free_src, free_dst) to its rate."""
    for c in order:
        for k in range(seg[c], seg[c + 1]):
            f = flows[k]
            a = src[f]
            b = dst[f]
            x = min(s_free[a], r_free[b])
            if x > ZERO:
                bps[f] += x
                s_free[a] -= x
                r_free[b] -= x


@njit(cache=True)
def _heap_sift(hkey, hflow, hpos, size, i):  # pragma: no cover - numba
    """Moves entry i up or down to its place in the 4-ary heap of ``(key, flow)`` pairs
    (children of entry i: 4i+1..4i+4), moving the entries it passes instead of swapping.

    Any heap pops the same sequence, since no two entries tie (a flow is in it once); four
    children per entry halve the levels a moved key passes (the FAIR loop moves one for
    every rate it sets, some 60 million times on the trace)."""
    key = hkey[i]
    fl = hflow[i]
    moved = False
    while i > 0:
        p = (i - 1) >> 2
        pk = hkey[p]
        if key < pk or (key == pk and fl < hflow[p]):
            hkey[i] = pk
            hflow[i] = hflow[p]
            hpos[hflow[i]] = i
            i = p
            moved = True
        else:
            break
    if not moved:
        while True:
            c = 4 * i + 1
            if c >= size:
                break
            best = c
            bk = hkey[c]
            bf = hflow[c]
            for cc in range(c + 1, min(c + 4, size)):
                ck = hkey[cc]
                if ck < bk or (ck == bk and hflow[cc] < bf):
                    best = cc
                    bk = ck
                    bf = hflow[cc]
            if bk < key or (bk == key and bf < fl):
                hkey[i] = bk
                hflow[i] = bf
                hpos[bf] = i
                i = best
            else:
                break
    hkey[i] = key
    hflow[i] = fl
    hpos[fl] = i


@njit(cache=True)
def _heap_set(hkey, hflow, hpos, size, f, key):  # pragma: no cover - numba
    """Flow f's key becomes key (f is added if absent); returns the heap's size."""
    i = hpos[f]
    if i < 0:
        i = size
        size += 1
        hflow[i] = f
        hpos[f] = i
    hkey[i] = key
    _heap_sift(hkey, hflow, hpos, size, i)
    return size


@njit(cache=True)
def _heap_pop(hkey, hflow, hpos, size):  # pragma: no cover - numba
    """Removes the first entry; returns the heap's size."""
    hpos[hflow[0]] = -1
    size -= 1
    if size > 0:
        hkey[0] = hkey[size]
        hflow[0] = hflow[size]
        hpos[hflow[0]] = 0
        _heap_sift(hkey, hflow, hpos, size, 0)
    return size


@njit(cache=True)
def _grow(a, n):  # pragma: no cover - numba
    """`a` with room for at least n items (doubling)."""
    if n <= a.shape[0]:
        return a
    b = np.empty(max(n, 2 * a.shape[0]), dtype=a.dtype)
    b[: a.shape[0]] = a
    return b


@njit(cache=True)
def fair(
    adm_q,
    adm_ptr,
    adm_flows,
    src,
    dst,
    size,
    red,
    job,
    red_count,
    job_reds,
    num_ports,
    never,
    final,
    grid,
):  # pragma: no cover - numba
    """CoflowSim's FAIR (``FlowSimulator.fairShare``). Coflows enter at quanta adm_q[a]
    (their flows adm_flows[adm_ptr[a]:adm_ptr[a+1]]); in every quantum each flow moves
    min(2**20 / n_dst, 2**20 / n_src, bytes left), n counting the flows at its two ports at
    the quantum's start. Rates change only when a count does, so the loop jumps from one flow
    end or admission to the next. Returns the records (time, flow, rate), the position of
    each flow's last-quantum record (``final`` only, else empty), each flow's last quantum,
    its bytes and rate there, each coflow's last quantum and the number of CoflowSim events.

    Without ``final`` the records are the rate changes as (quantum, flow, bytes per
    quantum), for :meth:`.recorder.Recorder.add_raw`. With ``final`` they are the whole
    schedule :meth:`.recorder.Recorder.schedule` would build from those, in its order and
    units, so that no copy or sort of the records is needed (:meth:`.Recorder.adopt`): times
    in ms, rates in MB per ms rounded down to multiples of ``1 / grid``, and after the rate
    changes of each quantum the zero-rate records of the flows that ended in the quantum
    before, and each flow's last-quantum record (its rate left at 0 for the recorder to
    fill in) after everything else at its time; flows that tie keep the order of their
    indices, as the stable sort of the recorder does."""
    nf = size.shape[0]
    mib = 1048576.0
    rem = size.copy()
    d = np.zeros(nf)
    t0 = np.zeros(nf, dtype=np.int64)
    fin = np.full(nf, never, dtype=np.int64)
    alive = np.zeros(nf, dtype=np.bool_)
    n_s = np.zeros(num_ports, dtype=np.int64)
    n_r = np.zeros(num_ports, dtype=np.int64)
    # alive flows per port: slot lists over the port's flows (CSR), swap-removal
    s_off = np.zeros(num_ports + 1, dtype=np.int64)
    r_off = np.zeros(num_ports + 1, dtype=np.int64)
    for f in range(nf):
        s_off[src[f] + 1] += 1
        r_off[dst[f] + 1] += 1
    for p in range(num_ports):
        s_off[p + 1] += s_off[p]
        r_off[p + 1] += r_off[p]
    s_items = np.empty(nf, dtype=np.int64)
    r_items = np.empty(nf, dtype=np.int64)
    s_slot = np.empty(nf, dtype=np.int64)
    r_slot = np.empty(nf, dtype=np.int64)
    # beside each slot: the flow's other port and its rate, so that the rate loop reads the
    # port lists in order instead of looking each flow up; and each port's share 2**20 / n
    s_oth = np.empty(nf, dtype=np.int64)
    r_oth = np.empty(nf, dtype=np.int64)
    s_d = np.empty(nf)
    r_d = np.empty(nf)
    share_s = np.zeros(num_ports)
    share_r = np.zeros(num_ports)
    red_left = red_count.copy()
    red_fin = np.full(red_count.shape[0], -1, dtype=np.int64)
    job_left = job_reds.copy()
    job_fin = np.full(job_reds.shape[0], -1, dtype=np.int64)
    last_q = np.full(nf, -1, dtype=np.int64)
    last_bytes = np.zeros(nf)
    last_d = np.zeros(nf)
    rec_t = np.empty(4 * nf + 16)
    rec_f = np.empty(4 * nf + 16, dtype=np.int64)
    rec_r = np.empty(4 * nf + 16)
    nrec = 0
    last_at = np.full(nf if final else 0, -1, dtype=np.int64)
    ended = np.empty(nf, dtype=np.int64)  # flows whose zero-rate record is due (final)
    n_ended = 0
    per_ms = 8.0 * mib  # bytes per quantum -> MB per ms
    events = 0
    # flows by (last quantum, flow): an indexed heap of the alive flows, so that a new rate
    # moves its flow's entry instead of adding one (a heap of every rate ever set grew to
    # tens of millions of entries on the trace)
    hkey = np.empty(nf, dtype=np.int64)
    hflow = np.empty(nf, dtype=np.int64)
    hpos = np.full(nf, -1, dtype=np.int64)
    hsize = 0
    touched_s = np.zeros(num_ports, dtype=np.bool_)
    touched_r = np.zeros(num_ports, dtype=np.bool_)
    ai = 0
    n_adm = adm_q.shape[0]
    while True:
        next_end = hkey[0] if hsize > 0 else never
        next_adm = adm_q[ai] if ai < n_adm else never
        if next_end >= never and next_adm >= never:
            break
        if next_end < next_adm:
            qf = next_end
            departed = False
            while hsize > 0 and hkey[0] == qf:
                f = hflow[0]
                hsize = _heap_pop(hkey, hflow, hpos, hsize)
                before = drain_one(rem[f], d[f], qf - t0[f])[0]
                last_q[f] = qf
                last_bytes[f] = min(d[f], before)
                last_d[f] = d[f]
                rem[f] = before - last_bytes[f]
                alive[f] = False
                if final:
                    rec_t = _grow(rec_t, nrec + 1)
                    rec_f = _grow(rec_f, nrec + 1)
                    rec_r = _grow(rec_r, nrec + 1)
                    rec_t[nrec] = qf * 8.0
                    rec_f[nrec] = f
                    rec_r[nrec] = 0.0
                    last_at[f] = nrec
                    nrec += 1
                    ended[n_ended] = f
                    n_ended += 1
                a = src[f]
                b = dst[f]
                n_s[a] -= 1
                n_r[b] -= 1
                touched_s[a] = True
                touched_r[b] = True
                k = s_slot[f]  # swap-remove from the port lists
                k2 = s_off[a] + n_s[a]
                g = s_items[k2]
                s_items[k] = g
                s_oth[k] = s_oth[k2]
                s_d[k] = s_d[k2]
                s_slot[g] = k
                k = r_slot[f]
                k2 = r_off[b] + n_r[b]
                g = r_items[k2]
                r_items[k] = g
                r_oth[k] = r_oth[k2]
                r_d[k] = r_d[k2]
                r_slot[g] = k
                rd = red[f]
                red_left[rd] -= 1
                red_fin[rd] = max(red_fin[rd], qf)
                if red_left[rd] == 0:
                    j = job[f]
                    job_left[j] -= 1
                    job_fin[j] = max(job_fin[j], red_fin[rd])
                    if job_left[j] == 0:
                        departed = True
            if departed:
                events += 1
            q = qf + 1
            if next_adm == q:
                continue  # the admission at this quantum sets the new rates
        else:
            q = next_adm
            for k in range(adm_ptr[ai], adm_ptr[ai + 1]):
                f = adm_flows[k]
                a = src[f]
                b = dst[f]
                alive[f] = True
                t0[f] = q
                d[f] = 0.0
                s_slot[f] = s_off[a] + n_s[a]
                s_items[s_slot[f]] = f
                s_oth[s_slot[f]] = b
                s_d[s_slot[f]] = 0.0
                r_slot[f] = r_off[b] + n_r[b]
                r_items[r_slot[f]] = f
                r_oth[r_slot[f]] = a
                r_d[r_slot[f]] = 0.0
                n_s[a] += 1
                n_r[b] += 1
                touched_s[a] = True
                touched_r[b] = True
            ai += 1
            events += 1
        # new rates for the flows at ports whose counts changed
        for p in range(num_ports):
            if touched_s[p] and n_s[p] > 0:
                share_s[p] = mib / n_s[p]
            if touched_r[p] and n_r[p] > 0:
                share_r[p] = mib / n_r[p]
        for p in range(num_ports):
            for side in range(2):
                if side == 0:
                    if not touched_s[p]:
                        continue
                    lo = s_off[p]
                    hi = lo + n_s[p]
                else:
                    if not touched_r[p]:
                        continue
                    lo = r_off[p]
                    hi = lo + n_r[p]
                for k in range(lo, hi):
                    # min(2**20 / n_dst, 2**20 / n_src), as the shares were computed
                    if side == 0:
                        new = min(share_r[s_oth[k]], share_s[p])
                        if new == s_d[k]:
                            continue
                        f = s_items[k]
                        r_d[r_slot[f]] = new
                        s_d[k] = new
                    else:
                        new = min(share_r[p], share_s[r_oth[k]])
                        if new == r_d[k]:
                            continue
                        f = r_items[k]
                        s_d[s_slot[f]] = new
                        r_d[k] = new
                    if q > t0[f]:
                        rem[f] = drain_one(rem[f], d[f], q - t0[f])[0]
                    t0[f] = q
                    d[f] = new
                    fin[f] = q - 1 + steps_to_finish(rem[f], new, never)
                    hsize = _heap_set(hkey, hflow, hpos, hsize, f, fin[f])
                    rec_t = _grow(rec_t, nrec + 1)
                    rec_f = _grow(rec_f, nrec + 1)
                    rec_r = _grow(rec_r, nrec + 1)
                    rec_f[nrec] = f
                    if final:
                        rec_t[nrec] = q * 8.0
                        rec_r[nrec] = math.floor((new / per_ms) * grid) / grid
                    else:
                        rec_t[nrec] = q
                        rec_r[nrec] = new
                    nrec += 1
            touched_s[p] = False
            touched_r[p] = False
        if final and n_ended:  # the flows that ended in quantum q - 1 stop at q
            rec_t = _grow(rec_t, nrec + n_ended)
            rec_f = _grow(rec_f, nrec + n_ended)
            rec_r = _grow(rec_r, nrec + n_ended)
            for k in range(n_ended):
                rec_t[nrec] = q * 8.0
                rec_f[nrec] = ended[k]
                rec_r[nrec] = 0.0
                nrec += 1
            n_ended = 0
    return (
        rec_t[:nrec],
        rec_f[:nrec],
        rec_r[:nrec],
        last_at,
        last_q,
        last_bytes,
        last_d,
        job_fin,
        events,
    )


@njit(cache=True)
def shift_tails(end, want, t_all, f_all, r_all, grid):  # pragma: no cover - numba
    """The loop of :func:`coflowlab.heuristics.coflowsim.recorder._shift_tails` without a
    sort of every record: lowers (in place) the rates ``r_all`` of the latest segments of
    each flow ``f`` ending before ``end[f]`` (``-inf``: not asked) until ``want[f]`` MB are
    freed. Returns ``(ok, freed per flow)``; ``ok`` is False, and nothing is changed, when a
    flow's records are not in time order (the caller then sorts them).

    The records of each flow are taken in index order (a counting sort by flow, which is
    stable, as NumPy's stable argsort is), the later of two records at one time wins, and
    the suffix sums run over all kept records from the last one back, in the order of
    NumPy's ``cumsum`` of the reversed array; so every rate written is the same double the
    NumPy formulation computes (``tests/heuristics/test_coflowsim_recorder.py``).

    The asked records are copied once, grouped by flow (their index, time and rate side by
    side, so that the scattered writes touch few cache lines); everything after that reads
    them in order, and a flow's suffix sums and shifts are done before the next flow's, so
    no other array of the records' length is needed (the trace's FAIR replay asks about 58
    million records: the memory written, not the arithmetic, is what costs)."""
    nf = end.shape[0]
    n = t_all.shape[0]
    start = np.zeros(nf + 1, dtype=np.int64)
    for i in range(n):
        if t_all[i] < end[f_all[i]]:
            start[f_all[i] + 1] += 1
    widest = 0
    for k in range(nf):
        widest = max(widest, start[k + 1])
        start[k + 1] += start[k]
    m = start[nf]
    slot = start[:-1].copy()
    g_idx = np.empty(m, dtype=np.int64)
    g_tr = np.empty((m, 2))  # time, rate
    for i in range(n):
        f = f_all[i]
        t = t_all[i]
        if t < end[f]:
            s = slot[f]
            g_idx[s] = i
            g_tr[s, 0] = t
            g_tr[s, 1] = r_all[i]
            slot[f] = s + 1
    for f in range(nf):
        for k in range(start[f] + 1, start[f + 1]):
            if g_tr[k, 0] < g_tr[k - 1, 0]:
                return False, np.zeros(0)
    kept = np.empty(widest, dtype=np.int64)
    length = np.empty(widest)
    nbytes = np.empty(widest)
    suffix = np.empty(widest)
    freed = np.zeros(nf)
    acc = 0.0  # the suffix sum over the kept records of this flow and all later ones
    for f in range(nf - 1, -1, -1):
        lo = start[f]
        hi = start[f + 1]
        if lo == hi:
            continue
        after = acc  # the suffix sum just past this flow's last kept record
        nk = 0
        t_next = end[f]
        for k in range(hi - 1, lo - 1, -1):
            if k + 1 < hi and g_tr[k + 1, 0] == g_tr[k, 0]:
                continue  # a later record at the same time overrides this one
            kept[nk] = k
            length[nk] = t_next - g_tr[k, 0]
            nbytes[nk] = g_tr[k, 1] * length[nk]
            acc += nbytes[nk]
            suffix[nk] = acc
            t_next = g_tr[k, 0]
            nk += 1
        w = want[f]
        for j in range(nk - 1, -1, -1):  # the kept records in index order
            take = w - ((suffix[j] - nbytes[j]) - after)
            take = min(max(take, 0.0), nbytes[j])
            if take > 0:
                rate = g_tr[kept[j], 1]
                new = math.floor(max(rate - take / length[j], 0.0) * grid) / grid
                freed[f] += (rate - new) * length[j]
                r_all[g_idx[kept[j]]] = new
    return True, freed
