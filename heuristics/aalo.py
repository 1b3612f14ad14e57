"""Aalo: non-clairvoyant coflow scheduling with D-CLAS (Chowdhury's thesis, Ch. 6).

Aalo orders coflows by how many bytes they have *already sent* (Coflow-Aware Least-Attained
Service, CLAS), discretised into K priority queues with exponentially spaced thresholds
(D-CLAS); ``specs/aalo-hug-thesis-ch6-8.md`` §1.2-§1.8.

- :class:`Aalo` (``aalo``): D-CLAS with loose coordination. A global coordinator learns every
  coflow's total bytes sent at the Δ-synchronisations and places it in a queue; queues share
  each port by weight, coflows in a queue are served FIFO (by CoflowId), flows of a coflow
  share max-min fairly.
- :class:`AaloUncoordinated` (``aalo-uncoordinated``): the same scheduler run independently at
  every port on the bytes each coflow sent *through that port* (decentralised LAS; thesis
  L1713, L2081, Theorem C.1.1).
- :func:`dclas_allocation`: the per-port-entitlement allocation both use, as a function.
- :func:`coflow_ids`: CoflowIds ``external.internal`` of multi-stage DAGs (Pseudocode 5).

Both policies are non-clairvoyant: they read bytes sent, rates, ports, arrival times, coflow
membership and dependency edges, never sizes. They wake up only when a queue can change: at the
Δ-sync after a threshold crossing (coordinated) or at the exact crossing (uncoordinated).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import cache
from typing import Any, ClassVar, Literal

import numpy as np
import numpy.typing as npt

from coflowlab.policy import Decision, InstanceView, ObservedState

__all__ = [
    "CROSS_TOL",
    "MAX_ROUNDS",
    "Aalo",
    "AaloUncoordinated",
    "coflow_ids",
    "dclas_allocation",
]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

WeightsLike = Literal["linear", "equal", "strict"] | Sequence[float]

CROSS_TOL = 1e-9
"""Relative tolerance of a threshold crossing: ``bytes >= threshold * (1 - CROSS_TOL)``."""

MAX_ROUNDS = 10
"""Redistribution rounds of :func:`dclas_allocation` before the final greedy backfill (the
redistribution converges geometrically when queues are limited at their other ports)."""


# ---------------------------------------------------------------------------------- kernels
@cache
def _kernels() -> dict[str, Any]:
    """Compiles the numba kernel on first use (cached on disk between runs)."""
    from numba import njit

    @njit(cache=True)
    def allocate(
        group, num_groups, src, dst, qin, qout, cap_in, cap_out, weight, strict, max_rounds
    ):  # pragma: no cover - numba
        nf = src.shape[0]
        m = cap_in.shape[0]
        np2 = 2 * m
        nq = weight.shape[0]
        # flows grouped by group id (stable counting sort), copied into that order so that
        # every pass below reads memory sequentially; ports: ingress p, egress m + p
        ptr = np.zeros(num_groups + 1, dtype=np.int64)
        for f in range(nf):
            ptr[group[f] + 1] += 1
        for g in range(num_groups):
            ptr[g + 1] += ptr[g]
        fill = ptr[:-1].copy()
        perm = np.empty(nf, dtype=np.int64)
        for f in range(nf):
            g = group[f]
            perm[fill[g]] = f
            fill[g] += 1
        pa = np.empty(nf, dtype=np.int64)
        pb = np.empty(nf, dtype=np.int64)
        ka = np.empty(nf, dtype=np.int64)
        kb = np.empty(nf, dtype=np.int64)
        for i in range(nf):
            f = perm[i]
            pa[i] = src[f]
            pb[i] = m + dst[f]
            ka[i] = qin[f] * np2 + pa[i]
            kb[i] = qout[f] * np2 + pb[i]
        res = np.empty(np2)
        res[:m] = cap_in
        res[m:] = cap_out
        eps = np.empty(np2)
        total_cap = 0.0
        for p in range(np2):
            eps[p] = 1e-12 * res[p]
            total_cap += res[p]
        rate = np.zeros(nf)
        frozen = np.zeros(nf, dtype=np.bool_)
        for i in range(nf):
            frozen[i] = res[pa[i]] <= eps[pa[i]] or res[pb[i]] <= eps[pb[i]]
        ent = np.zeros(nq * np2)  # entitlement of queue q at port p: ent[q * np2 + p]
        seen = np.zeros(nq * np2, dtype=np.bool_)
        pools = np.empty(min(2 * nf, nq * np2), dtype=np.int64)
        wsum = np.zeros(np2)
        top = np.full(np2, nq, dtype=np.int64)
        # scratch of the max-min inside one group
        pcnt = np.zeros(np2, dtype=np.int64)
        ptot = np.zeros(np2, dtype=np.int64)
        pstart = np.zeros(np2, dtype=np.int64)
        pfill = np.zeros(np2, dtype=np.int64)
        pool = np.zeros(np2, dtype=np.int64)
        rcap = np.zeros(np2)
        plist = np.empty(np2, dtype=np.int64)
        members = np.empty(2 * nf, dtype=np.int64)
        inc = np.zeros(nf)
        fixed = np.zeros(nf, dtype=np.bool_)
        for _ in range(max_rounds):
            # 1. entitlements: each port's residual split among the queues that can grow there
            npools = 0
            for i in range(nf):
                if frozen[i]:
                    continue
                for k in range(2):
                    key = ka[i] if k == 0 else kb[i]
                    if not seen[key]:
                        seen[key] = True
                        pools[npools] = key
                        npools += 1
                        p = key % np2
                        q = key // np2
                        wsum[p] += weight[q]
                        if q < top[p]:
                            top[p] = q
            for j in range(npools):
                key = pools[j]
                p = key % np2
                q = key // np2
                if strict:
                    ent[key] = res[p] if q == top[p] else 0.0
                else:
                    ent[key] = res[p] * weight[q] / wsum[p]
            for j in range(npools):
                key = pools[j]
                p = key % np2
                seen[key] = False
                wsum[p] = 0.0
                top[p] = nq
            # 2. groups in order; max-min fair increments inside a group, within entitlements
            progress = 0.0
            for g in range(num_groups):
                lo = ptr[g]
                hi = ptr[g + 1]
                nports = 0
                ng = 0
                for i in range(lo, hi):
                    if frozen[i]:
                        continue
                    ng += 1
                    a = pa[i]
                    b = pb[i]
                    if pcnt[a] == 0:
                        plist[nports] = a
                        nports += 1
                        pool[a] = ka[i]
                    pcnt[a] += 1
                    if pcnt[b] == 0:
                        plist[nports] = b
                        nports += 1
                        pool[b] = kb[i]
                    pcnt[b] += 1
                if ng == 0:
                    continue
                run = 0
                for j in range(nports):
                    p = plist[j]
                    pstart[p] = run
                    pfill[p] = run
                    ptot[p] = pcnt[p]
                    run += pcnt[p]
                    rcap[p] = max(ent[pool[p]], 0.0)
                for i in range(lo, hi):
                    if frozen[i]:
                        continue
                    fixed[i] = False
                    members[pfill[pa[i]]] = i
                    pfill[pa[i]] += 1
                    members[pfill[pb[i]]] = i
                    pfill[pb[i]] += 1
                left = ng
                while left > 0:
                    best = np.inf
                    bp = -1
                    for j in range(nports):
                        p = plist[j]
                        if pcnt[p] > 0:
                            lev = rcap[p] / pcnt[p]
                            if lev < best:
                                best = lev
                                bp = p
                    best = max(best, 0.0)
                    for k in range(pstart[bp], pstart[bp] + ptot[bp]):
                        i = members[k]
                        if fixed[i]:
                            continue
                        fixed[i] = True
                        inc[i] = best
                        left -= 1
                        a = pa[i]
                        b = pb[i]
                        rcap[a] -= best
                        pcnt[a] -= 1
                        rcap[b] -= best
                        pcnt[b] -= 1
                for i in range(lo, hi):
                    if frozen[i]:
                        continue
                    x = inc[i]
                    if x > 0.0:
                        rate[i] += x
                        ent[ka[i]] -= x
                        ent[kb[i]] -= x
                        res[pa[i]] -= x
                        res[pb[i]] -= x
                        progress += x
            # 3. flows at a saturated port are done; stop when nothing can grow any more
            growable = 0
            for i in range(nf):
                if frozen[i]:
                    continue
                if res[pa[i]] <= eps[pa[i]] or res[pb[i]] <= eps[pb[i]]:
                    frozen[i] = True
                else:
                    growable += 1
            if growable == 0 or progress <= 1e-12 * total_cap:
                break
        # work conservation: whatever is left goes greedily, in group order
        out = np.empty(nf)
        for i in range(nf):
            if not frozen[i]:
                x = min(res[pa[i]], res[pb[i]])
                if x > 0.0:
                    rate[i] += x
                    res[pa[i]] -= x
                    res[pb[i]] -= x
            out[perm[i]] = rate[i]
        return out

    return {"allocate": allocate}


def dclas_allocation(
    src: npt.ArrayLike,
    dst: npt.ArrayLike,
    group: npt.ArrayLike,
    cap_in: npt.ArrayLike,
    cap_out: npt.ArrayLike,
    *,
    queue_in: npt.ArrayLike | None = None,
    queue_out: npt.ArrayLike | None = None,
    weights: npt.ArrayLike = (1.0,),
    strict: bool = False,
) -> FloatArray:
    """D-CLAS rates by per-port queue entitlements (the executable reading of Pseudocode 4).

    Spec ``aalo-hug-thesis-ch6-8.md`` §1.6 [interp], in rounds ("while fabric is not
    saturated", Pseudocode 4 line 2) until no flow can grow:

    1. at every port ``p``, the residual capacity is split among the queues that have a flow
       at ``p`` which can still grow (both its ports have residual capacity), in proportion to
       their weights (``strict``: all of it to the highest-priority such queue);
    2. groups (coflows) are visited in increasing ``group``; each adds max-min fair rates for
       its flows, limited by its queue's remaining entitlement at each flow's two ports, so a
       group takes what it can before any later group of the same queue (FIFO);
    3. a flow with a saturated port stops; what the queues could not use is split again in
       the next round among the queues that still can grow there (work conservation, "excess
       share ... divided among unsaturated queues in proportion to their weights",
       L1882-1884).

    Rates only grow from round to round. FIFO is therefore relative to the entitlements of
    each round: a later coflow may keep a share of a port that an earlier coflow of its queue
    could not use in that round (because its queue's entitlement at its *other* port was
    exhausted) but could use after that other port's excess was redistributed. With one
    queue, or ``strict`` priority and one queue per group, one round suffices and FIFO is
    exact: each group takes max-min fair rates from what the groups before it left. The
    redistribution converges geometrically when queues are limited at their other ports; it
    is cut after :data:`MAX_ROUNDS` rounds and the rest is handed out greedily in group order,
    so the result is always work conserving: every flow has a saturated port.

    Parameters
    ----------
    src, dst
        Ingress and egress port of each flow.
    group
        Service order of each flow's group (its coflow's FIFO position), ``0 <= group``;
        flows of one group share max-min fairly.
    cap_in, cap_out
        Capacity of each ingress and egress port.
    queue_in, queue_out
        The queue (0 = highest priority) each flow belongs to at its ingress and its egress
        port (coordinated D-CLAS: the coflow's queue for both; default 0). Flows of one group
        at one port must share a queue there.
    weights
        Positive weight of each queue.
    strict
        Strict priority across queues instead of weighted sharing.

    Returns
    -------
    numpy.ndarray
        The rate of each flow.

    Examples
    --------
    One port; queue 0 (weight 2) holds coflows 0 and 1 (FIFO), queue 1 (weight 1) coflow 2.
    Coflow 0 takes queue 0's share 2/3, coflow 1 waits, coflow 2 gets 1/3:

    >>> dclas_allocation([0, 0, 0], [0, 0, 0], [0, 1, 2], [1.0], [1.0],
    ...                  queue_in=[0, 0, 1], weights=[2.0, 1.0]).round(4).tolist()
    [0.6667, 0.0, 0.3333]

    Unused share is redistributed: coflow 0 is limited to 0.1 by its ingress port, so the
    other queue takes the rest of the shared egress port.

    >>> dclas_allocation([0, 1], [0, 0], [0, 1], [0.1, 1.0], [1.0, 1.0],
    ...                  queue_in=[0, 1], weights=[1.0, 1.0]).round(4).tolist()
    [0.1, 0.9]
    """
    s = np.ascontiguousarray(src, dtype=np.int64)
    d = np.ascontiguousarray(dst, dtype=np.int64)
    g = np.ascontiguousarray(group, dtype=np.int64)
    n = len(s)
    if n == 0:
        return np.zeros(0)
    qi = np.zeros(n, dtype=np.int64) if queue_in is None else np.asarray(queue_in, np.int64)
    qo = qi if queue_out is None else np.asarray(queue_out, dtype=np.int64)
    w = np.ascontiguousarray(weights, dtype=np.float64)
    c_in = np.array(cap_in, dtype=np.float64).ravel()
    c_out = np.array(cap_out, dtype=np.float64).ravel()
    if len(c_in) != len(c_out) or s.max() >= len(c_in) or d.max() >= len(c_out):
        raise ValueError(
            "dclas_allocation: need one capacity per port, the same number of "
            "ingress and egress ports"
        )
    if (w <= 0).any() or not np.isfinite(w).all():
        raise ValueError("dclas_allocation: weights must be positive and finite")
    if g.min() < 0 or qi.min() < 0 or qo.min() < 0 or max(qi.max(), qo.max()) >= len(w):
        raise ValueError("dclas_allocation: group and queue indices out of range")
    return _kernels()["allocate"](
        g,
        int(g.max()) + 1,
        s,
        d,
        np.ascontiguousarray(qi),
        np.ascontiguousarray(qo),
        c_in,
        c_out,
        w,
        bool(strict),
        MAX_ROUNDS,
    )


# ---------------------------------------------------------------------------------- CoflowId
def _parents(num_coflows: int, dependencies: npt.ArrayLike) -> list[list[int]]:
    parents: list[list[int]] = [[] for _ in range(num_coflows)]
    for a, b in np.asarray(dependencies, dtype=np.int64).reshape(-1, 2):
        parents[int(b)].append(int(a))
    return parents


def _topological(parents: list[list[int]]) -> list[int]:
    n = len(parents)
    children: list[list[int]] = [[] for _ in range(n)]
    waiting = [len(p) for p in parents]
    for b, ps in enumerate(parents):
        for a in ps:
            children[a].append(b)
    order = [k for k in range(n) if waiting[k] == 0]
    for k in order:  # grows while iterating (Kahn)
        for b in children[k]:
            waiting[b] -= 1
            if waiting[b] == 0:
                order.append(b)
    return order


def _dag_structure(
    num_coflows: int, dependencies: npt.ArrayLike
) -> tuple[IntArray, list[IntArray]]:
    """Internal ids and, per coflow, the DAG roots it descends from (itself for a root)."""
    parents = _parents(num_coflows, dependencies)
    internal = np.zeros(num_coflows, dtype=np.int64)
    roots: list[IntArray] = [np.zeros(0, dtype=np.int64)] * num_coflows
    for k in _topological(parents):
        ps = parents[k]
        if not ps:
            roots[k] = np.array([k], dtype=np.int64)
            continue
        internal[k] = 1 + max(int(internal[a]) for a in ps)
        roots[k] = np.unique(np.concatenate([roots[a] for a in ps]))
    return internal, roots


def coflow_ids(
    num_coflows: int, dependencies: npt.ArrayLike = (), arrival: npt.ArrayLike | None = None
) -> tuple[IntArray, IntArray]:
    """CoflowIds ``external.internal`` of Aalo's Pseudocode 5 (thesis L1911-1942).

    A coflow without parents is a DAG root: it gets the next external id in registration
    (arrival) order and internal id 0 (``newId.0``). A dependent coflow gets its parents'
    external id and internal id ``1 + max`` over its parents (``pId.sId``). When the parents
    come from different DAGs (the text assumes they share one), the external id of the earliest
    registered root is used.

    Queues serve coflows by ``(external, internal)``: a child loses to its parent and to its
    shallower relatives (L1938, L1990), and follows its DAG's root in the FIFO order.

    Parameters
    ----------
    num_coflows
        Number of coflows.
    dependencies
        ``(a, b)`` pairs: ``b`` depends on ``a``.
    arrival
        Registration time of each root (default: index order). Ties go to the lower index.

    Returns
    -------
    external, internal
        Integer arrays of length ``num_coflows``.

    Examples
    --------
    Coflows 0 and 2 are roots; 1 depends on 0, and 3 on 1 and 2 (AAL-7, AAL-8):

    >>> ext, internal = coflow_ids(4, [(0, 1), (1, 3), (2, 3)])
    >>> ext.tolist(), internal.tolist()
    ([0, 0, 1, 0], [0, 1, 0, 2])
    """
    n = int(num_coflows)
    internal, roots = _dag_structure(n, dependencies)
    arr = np.zeros(n) if arrival is None else np.asarray(arrival, dtype=float)
    is_root = np.array([len(r) == 1 and int(r[0]) == k for k, r in enumerate(roots)], bool)
    root_ids = np.flatnonzero(is_root)
    rank = np.full(n, -1, dtype=np.int64)
    rank[root_ids[np.lexsort((root_ids, arr[root_ids]))]] = np.arange(len(root_ids))
    external = np.array([int(rank[r].min()) for r in roots], dtype=np.int64)
    return external, internal


# ---------------------------------------------------------------------------------- helpers
def _queue_bounds(
    num_queues: int,
    first_threshold: float,
    factor: float,
    thresholds: Sequence[float] | None,
) -> FloatArray:
    """Upper bounds ``Q_i^hi`` of the K queues (the last is ``inf``)."""
    if thresholds is not None:
        his = np.asarray(thresholds, dtype=float)
        if his.ndim != 1 or len(his) != num_queues - 1:
            raise ValueError(f"thresholds: need {num_queues - 1} values, got {len(his)}")
        if not (np.isfinite(his).all() and (his > 0).all() and (np.diff(his) > 0).all()):
            raise ValueError("thresholds: must be positive, finite and increasing")
    else:
        if not (math.isfinite(first_threshold) and first_threshold > 0):
            raise ValueError(f"first_threshold must be positive, got {first_threshold!r}")
        if not (math.isfinite(factor) and factor > 1):
            raise ValueError(f"factor must be > 1, got {factor!r}")
        his = first_threshold * factor ** np.arange(num_queues - 1, dtype=float)
    return np.append(his, np.inf)


def _queue_weights(weights: WeightsLike, num_queues: int) -> tuple[FloatArray, bool]:
    if isinstance(weights, str):
        if weights == "linear":
            return np.arange(num_queues, 0, -1, dtype=float), False
        if weights == "equal":
            return np.ones(num_queues), False
        if weights == "strict":
            return np.ones(num_queues), True
        raise ValueError(
            f"weights must be 'linear', 'equal', 'strict' or numbers, got {weights!r}"
        )
    w = np.asarray(weights, dtype=float)
    if w.shape != (num_queues,) or not (np.isfinite(w).all() and (w > 0).all()):
        raise ValueError(f"weights: need {num_queues} positive finite values, got {weights!r}")
    if (np.diff(w) > 0).any():
        raise ValueError("weights: must be non-increasing (Q_i.weight >= Q_{i+1}.weight)")
    return w, False


def _queue_of(sent: FloatArray, his: FloatArray) -> IntArray:
    """Queue index of each byte count: the number of thresholds it has reached."""
    return np.searchsorted(his[:-1], np.asarray(sent) * (1 + CROSS_TOL), side="right").astype(
        np.int64
    )


class _LocalBytes:
    """Bytes each coflow sent through each port it uses (``(coflow, port)`` pairs).

    Ports are numbered ``0..m-1`` (ingress) and ``m..2m-1`` (egress). The counts are
    integrated from the policy's own rates between events (rates are constant in between), so
    they include flows that have finished; no size is read.
    """

    def __init__(self, view: InstanceView) -> None:
        m = view.num_ports
        key_in = view.flow_coflow * (2 * m) + view.flow_src
        key_out = view.flow_coflow * (2 * m) + m + view.flow_dst
        keys, inverse = np.unique(np.concatenate([key_in, key_out]), return_inverse=True)
        nf = view.num_flows
        self.pair_in: IntArray = inverse[:nf].astype(np.int64)
        self.pair_out: IntArray = inverse[nf:].astype(np.int64)
        self.pair_coflow: IntArray = (keys // (2 * m)).astype(np.int64)
        self.pair_port: IntArray = (keys % (2 * m)).astype(np.int64)
        self.bytes = np.zeros(len(keys))
        self._scratch = np.zeros(len(keys))
        self._time = 0.0
        self._pin: IntArray = np.zeros(0, dtype=np.int64)
        self._pout: IntArray = np.zeros(0, dtype=np.int64)
        self._rate: FloatArray = np.zeros(0)

    def advance(self, t: float, flows: IntArray) -> tuple[IntArray, IntArray]:
        """Adds the bytes sent since the last call; returns the pairs of ``flows``."""
        dt = t - self._time
        if dt > 0 and len(self._rate):
            moved = self._rate * dt
            np.add.at(self.bytes, self._pin, moved)
            np.add.at(self.bytes, self._pout, moved)
        self._time = t
        return self.pair_in[flows], self.pair_out[flows]

    def set_rates(self, pin: IntArray, pout: IntArray, rates: FloatArray) -> None:
        """Remembers the rates in force from now on."""
        self._pin, self._pout, self._rate = pin, pout, np.array(rates, dtype=float)

    def pair_rates(
        self, pin: IntArray, pout: IntArray, rates: FloatArray
    ) -> tuple[FloatArray, FloatArray]:
        """Each flow's ingress-pair and egress-pair total rate."""
        s = self._scratch
        np.add.at(s, pin, rates)
        np.add.at(s, pout, rates)
        rin, rout = s[pin], s[pout]
        s[pin] = 0.0
        s[pout] = 0.0
        return rin, rout


def _next_multiple(t_cross: float, now: float, delta: float) -> float:
    """The first multiple of ``delta`` at or after ``t_cross`` and strictly after ``now``."""
    k = max(math.ceil(t_cross / delta - 1e-9), math.floor(now / delta + 1e-9) + 1)
    return k * delta


def _first_crossing(now: float, sent: FloatArray, rate: FloatArray, bound: FloatArray) -> float:
    """Earliest time ``sent + rate·(t - now)`` reaches ``bound`` (``inf`` if never)."""
    ok = (rate > 0) & np.isfinite(bound)
    if not ok.any():
        return math.inf
    need = np.maximum(bound[ok] - sent[ok], 0.0)
    return now + float(np.min(need / rate[ok]))


# ---------------------------------------------------------------------------------- policies
class Aalo:
    """Aalo's D-CLAS scheduler (``aalo``): non-clairvoyant, loosely coordinated.

    Parameters
    ----------
    num_queues
        Number ``K`` of priority queues (thesis default 10). ``K = 1`` is FIFO (Orchestra).
    first_threshold
        ``Q_1^hi``: bytes sent below which a coflow stays in the first queue (default 10).
    factor
        ``E``: ``Q_{i+1}^hi = E · Q_i^hi`` (default 10).
    delta
        ``Δ``: the coordination interval (default 10). The coordinator syncs at the times
        ``kΔ`` (k = 0, 1, ...), so a coflow's queue changes at the first multiple of Δ at or
        after the moment its bytes sent cross a threshold; ``0`` means instant coordination
        (the exact crossing time).
    weights
        Sharing across queues: ``"linear"`` (thesis evaluation, ``Q_i.weight = K − i + 1``),
        ``"equal"``, ``"strict"`` (strict priority, as CoflowSim's DARK and App. C.2's formula
        assume), or K non-increasing positive numbers.
    coordinated
        ``False`` runs the uncoordinated variant (see :class:`AaloUncoordinated`).
    thresholds
        Optional explicit ``Q_1^hi < ... < Q_{K-1}^hi`` (e.g. linearly spaced queues, thesis
        Fig. 6.12d), overriding ``first_threshold`` and ``factor``.

    Attributes
    ----------
    bounds
        ``(K,)`` upper bounds ``Q_i^hi``; the last is ``inf``.
    queue_weights
        ``(K,)`` queue weights.
    queue
        After :meth:`reset`: each coflow's current queue (coordinated policy; 0 = Q_1).
    demotions
        After a simulation: ``(time, coflow, port, queue)`` for every queue change, in order;
        ``port`` is ``-1`` for the coordinator's global decision (per-port decisions of the
        uncoordinated variant name the port, egress ports numbered ``m + j``).

    Notes
    -----
    **Units.** Thresholds are in the instance's size unit and Δ in its time unit (the view has
    no units). The defaults are the thesis's (``Q_1^hi`` = 10 MB, E = K = 10, Δ = 10 ms; L2029)
    for an instance in MB and ms, such as the Facebook trace (:func:`read_benchmark`).

    **Queues** (§1.3-§1.4). Queue ``i`` holds coflows whose bytes sent ``S`` satisfy
    ``Q_i^lo <= S < Q_i^hi`` (half-open). Every coflow enters the first queue; it is demoted
    when its bytes sent (all its flows, finished ones too, as the coordinator sees them at the
    last Δ-sync) reach a threshold; it is never promoted.

    **Allocation** (§1.5-§1.6): :func:`dclas_allocation` with the coflows' queues. At each
    port, queues share the residual capacity by weight among those that can still use it;
    inside a queue, coflows in FIFO order take max-min fair rates within what their queue is
    entitled to; what a queue cannot use is redistributed by weight, in rounds, until no flow
    can grow (work conserving). FIFO holds within each round's entitlements (see
    :func:`dclas_allocation` for the one way a later coflow can keep bandwidth an earlier one
    could have used after a redistribution). With ``"strict"`` weights the coordinated policy
    serves coflows in (queue, FIFO) order, each taking max-min fair rates from what the ones
    before it left: exact FIFO, strict priority (CoflowSim's DARK, plus work conservation).

    **FIFO order** (§1.8): by CoflowId ``(external, internal)`` (:func:`coflow_ids`), the
    external id being the arrival order of the coflow's DAG root; ties by coflow index. The
    simulator enforces starts-after dependencies. A coflow's queue uses its own bytes sent,
    not its DAG's ([UNCERTAIN] in the spec).

    **Events.** The policy asks to be woken up only at the Δ-multiple following the earliest
    crossing predicted from the current rates; rates change at arrivals, completions and queue
    changes only.

    Examples
    --------
    One 20 MB flow alone crosses Q_1^hi = 10 MB at t = 10, so the coordinator demotes it at
    the next sync; a second coflow arriving at 5 then gets Q_1's larger share:

    >>> from coflowlab import Coflow, Instance, simulate
    >>> inst = Instance.from_coflows(
    ...     [Coflow([(0, 0, 20.0)]), Coflow([(0, 0, 5.0)], release=5.0)], 1)
    >>> aalo = Aalo(delta=4.0)
    >>> simulate(inst, aalo).coflow_completion.round(3).tolist()
    [25.0, 21.5]
    >>> aalo.demotions
    [(12.0, 0, -1, 1)]
    """

    name: ClassVar[str] = "aalo"
    clairvoyant: ClassVar[bool] = False

    def __init__(
        self,
        *,
        num_queues: int = 10,
        first_threshold: float = 10.0,
        factor: float = 10.0,
        delta: float = 10.0,
        weights: WeightsLike = "linear",
        coordinated: bool = True,
        thresholds: Sequence[float] | None = None,
    ) -> None:
        if isinstance(num_queues, bool) or not isinstance(num_queues, int) or num_queues < 1:
            raise ValueError(f"num_queues must be an integer >= 1, got {num_queues!r}")
        if not (math.isfinite(delta) and delta >= 0):
            raise ValueError(f"delta must be finite and >= 0, got {delta!r}")
        self.num_queues = num_queues
        self.delta = float(delta)
        self.coordinated = bool(coordinated)
        self.bounds: FloatArray = _queue_bounds(num_queues, first_threshold, factor, thresholds)
        self.queue_weights, self.strict = _queue_weights(weights, num_queues)
        self.demotions: list[tuple[float, int, int, int]] = []

    def __repr__(self) -> str:
        his = ", ".join(f"{h:g}" for h in self.bounds[:-1])
        return (
            f"{type(self).__name__}(num_queues={self.num_queues}, thresholds=[{his}], "
            f"delta={self.delta:g}, weights={self.queue_weights.tolist()}"
            f"{', strict' if self.strict else ''}, coordinated={self.coordinated})"
        )

    # ------------------------------------------------------------------ set-up
    def reset(self, view: InstanceView) -> None:
        """Prepares for a new simulation of the instance ``view`` describes."""
        n = view.num_coflows
        self._n = n
        self._cap_in = np.asarray(view.cap_in, dtype=float)
        self._cap_out = np.asarray(view.cap_out, dtype=float)
        self._m = view.num_ports
        self._has_deps = len(view.dependencies) > 0
        self._internal, self._roots = _dag_structure(n, view.dependencies)
        self._ext_time = np.full(n, np.nan)
        self._ext_root = np.arange(n, dtype=np.int64)
        self.queue: IntArray = np.zeros(n, dtype=np.int64)
        self.demotions = []
        self._local = None if self.coordinated else _LocalBytes(view)
        if self._local is not None:
            self.pair_queue: IntArray = np.zeros(len(self._local.bytes), dtype=np.int64)

    # ------------------------------------------------------------------ FIFO order
    def _fifo_order(
        self, active: IntArray, arrival: FloatArray, first: IntArray | None
    ) -> IntArray:
        """Active coflows by (``first``, external, internal, index)."""
        if self._has_deps:
            new = active[np.isnan(self._ext_time[active])]
            for c in new:
                r = self._roots[int(c)]
                t_r = arrival[r]
                j = int(np.lexsort((r, t_r))[0])
                self._ext_time[c] = t_r[j]
                self._ext_root[c] = r[j]
            keys: list[npt.NDArray[Any]] = [
                active,
                self._internal[active],
                self._ext_root[active],
                self._ext_time[active],
            ]
        else:
            keys = [active, arrival[active]]
        if first is not None:
            keys.append(first)
        return active[np.lexsort(keys)]

    def _is_sync(self, t: float) -> bool:
        d = self.delta
        if d == 0:
            return True
        return abs(t - round(t / d) * d) <= 1e-9 * d

    # ------------------------------------------------------------------ decisions
    def decide(self, state: ObservedState) -> Decision:
        """Rates of the active flows and the next wake-up (a Δ-sync after a crossing)."""
        if self.coordinated:
            return self._decide_coordinated(state)
        return self._decide_uncoordinated(state)

    def _decide_coordinated(self, state: ObservedState) -> Decision:
        t = float(state.time)
        coflow = np.asarray(state.coflow)
        n = self._n
        active = np.flatnonzero(np.bincount(coflow, minlength=n))
        bounds = self.bounds
        k = self.num_queues
        sent = np.asarray(state.coflow_sent)[active] if k > 1 else None
        if sent is not None and self._is_sync(t):
            reached = _queue_of(sent, bounds)
            up = reached > self.queue[active]
            if up.any():
                for c, q in zip(active[up].tolist(), reached[up].tolist(), strict=True):
                    self.demotions.append((t, c, -1, q))
                self.queue[active[up]] = reached[up]
        arrival = np.asarray(state.coflow_arrival)
        if self.strict:
            order = self._fifo_order(active, arrival, self.queue[active])
            qf = np.zeros(len(coflow), dtype=np.int64)
            weights = np.ones(1)
        else:
            order = self._fifo_order(active, arrival, None)
            qf = self.queue[coflow]
            weights = self.queue_weights
        pos = np.empty(n, dtype=np.int64)
        pos[order] = np.arange(len(order))
        rates = _kernels()["allocate"](
            pos[coflow],
            len(order),
            np.ascontiguousarray(state.src, dtype=np.int64),
            np.ascontiguousarray(state.dst, dtype=np.int64),
            qf,
            qf,
            self._cap_in,
            self._cap_out,
            weights,
            False,
            MAX_ROUNDS,
        )
        if sent is None:
            return Decision(rates)
        rate_c = np.bincount(coflow, weights=rates, minlength=n).astype(float)[active]
        q = self.queue[active]
        pending = _queue_of(sent, bounds) > q  # crossed since the last sync
        t_cross = t if pending.any() else _first_crossing(t, sent, rate_c, bounds[q])
        if math.isinf(t_cross):
            return Decision(rates)
        wake = t_cross if self.delta == 0 else _next_multiple(t_cross, t, self.delta)
        return Decision(rates, wakeup=wake)

    def _decide_uncoordinated(self, state: ObservedState) -> Decision:
        t = float(state.time)
        local = self._local
        assert local is not None
        flows = np.asarray(state.flows)
        coflow = np.asarray(state.coflow)
        pin, pout = local.advance(t, flows)
        bounds = self.bounds
        pq = self.pair_queue
        if self.num_queues > 1:
            for pairs in (pin, pout):
                reached = _queue_of(local.bytes[pairs], bounds)
                up = reached > pq[pairs]
                if up.any():
                    moved, idx = np.unique(pairs[up], return_index=True)
                    for p, q in zip(moved.tolist(), reached[up][idx].tolist(), strict=True):
                        self.demotions.append(
                            (t, int(local.pair_coflow[p]), int(local.pair_port[p]), q)
                        )
                    pq[moved] = reached[up][idx]
        n = self._n
        active = np.flatnonzero(np.bincount(coflow, minlength=n))
        order = self._fifo_order(active, np.asarray(state.coflow_arrival), None)
        pos = np.empty(n, dtype=np.int64)
        pos[order] = np.arange(len(order))
        rates = _kernels()["allocate"](
            pos[coflow],
            len(order),
            np.ascontiguousarray(state.src, dtype=np.int64),
            np.ascontiguousarray(state.dst, dtype=np.int64),
            pq[pin],
            pq[pout],
            self._cap_in,
            self._cap_out,
            self.queue_weights,
            self.strict,
            MAX_ROUNDS,
        )
        local.set_rates(pin, pout, rates)
        if self.num_queues == 1:
            return Decision(rates)
        rin, rout = local.pair_rates(pin, pout, rates)
        t_cross = min(
            _first_crossing(t, local.bytes[pin], rin, bounds[pq[pin]]),
            _first_crossing(t, local.bytes[pout], rout, bounds[pq[pout]]),
        )
        return Decision(rates, wakeup=None if math.isinf(t_cross) else t_cross)


class AaloUncoordinated(Aalo):
    """Aalo without coordination (``aalo-uncoordinated``): decentralised D-CLAS/LAS.

    Every port runs D-CLAS on its own: a coflow's queue *at a port* is decided by the bytes the
    coflow sent through that port (a flow's ingress and egress may see its coflow in different
    queues), known at once (no Δ). This is the "uncoordinated non-clairvoyant" scheduler of
    thesis §6.8.2 (L2081) and the decentralised LAS of Fig. 6.1 (L1713), which cannot see a
    coflow's traffic elsewhere (Theorem C.1.1, spec §4.1). FIFO order and allocation are as in
    :class:`Aalo`, with the per-port queues (strict priority may need the greedy backfill of
    :func:`dclas_allocation`).

    Parameters
    ----------
    num_queues, first_threshold, factor, weights, thresholds
        As for :class:`Aalo` (``delta`` has no effect).

    Examples
    --------
    Theorem C.1.1 with fine queues: every port sees the same unit flows, so local LAS shares
    them equally and the narrow coflows wait for the wide ones.

    >>> from coflowlab import simulate
    >>> from coflowlab.instances.examples import aalo_theorem_c11
    >>> fine = dict(num_queues=30, first_threshold=0.01, factor=1.2, weights="strict")
    >>> float(simulate(aalo_theorem_c11(4, 2), AaloUncoordinated(**fine)).cct.sum()) > 7
    True
    """

    name: ClassVar[str] = "aalo-uncoordinated"

    def __init__(
        self,
        *,
        num_queues: int = 10,
        first_threshold: float = 10.0,
        factor: float = 10.0,
        delta: float = 10.0,
        weights: WeightsLike = "linear",
        thresholds: Sequence[float] | None = None,
    ) -> None:
        super().__init__(
            num_queues=num_queues,
            first_threshold=first_threshold,
            factor=factor,
            delta=delta,
            weights=weights,
            coordinated=False,
            thresholds=thresholds,
        )
