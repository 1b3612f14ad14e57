"""Aalo: non-clairvoyant coflow scheduling with D-CLAS (Chowdhury's thesis, Ch. 6).

Aalo orders coflows by how many bytes they have *already sent* (Coflow-Aware Least-Attained
Service, CLAS), discretised into K priority queues with exponentially spaced thresholds
(D-CLAS); Chowdhury, PhD thesis, UC Berkeley 2015, §6.2-§6.6 (Chowdhury & Stoica,
SIGCOMM 2015); our readings: docs/aalo.md.

- :class:`Aalo` (``aalo``): D-CLAS with loose coordination. A global coordinator learns every
  coflow's total bytes sent at the Δ-synchronisations and places it in a queue; queues share
  each port by weight, coflows in a queue are served FIFO (by CoflowId), flows of a coflow
  share max-min fairly.
- :class:`AaloUncoordinated` (``aalo-uncoordinated``): the same scheduler run independently at
  every port on the bytes each coflow sent *through that port* (decentralised LAS; thesis
  §6.3.2, §6.8.2, Theorem C.1.1; docs/aalo.md#uncoordinated).
- :func:`dclas_allocation`: the per-port-entitlement allocation both use, as a function.
- :func:`coflow_ids`: CoflowIds ``external.internal`` of multi-stage DAGs (Pseudocode 5).

Both policies are non-clairvoyant: they read bytes sent, rates, ports, arrival times, coflow
membership and dependency edges, never sizes. They wake up only when a queue can change: at the
Δ-sync after a threshold crossing (coordinated) or at the exact crossing (uncoordinated).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, ClassVar, Literal

import numpy as np
import numpy.typing as npt

from coflowlab.constants import TOL
from coflowlab.policy import Decision, InstanceView, ObservedState

from .dclas_kernels import kernels

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

_SNAP_TOL = 2 * TOL
"""Bound on the relative time tolerance within which the simulator completes a flow early."""

MAX_ROUNDS = 10
"""Redistribution rounds of :func:`dclas_allocation` before the final greedy backfill (the
redistribution converges geometrically when queues are limited at their other ports)."""


def _allocate_flat(
    group: IntArray,
    src: IntArray,
    dst: IntArray,
    queue_in: IntArray,
    queue_out: IntArray,
    cap: FloatArray,
    weights: FloatArray,
    strict: bool,
) -> FloatArray:
    """D-CLAS rates of flows given in any order: groups them (stably, so a group's flows keep
    their given order, which the final greedy backfill follows) and runs the kernel."""
    n = len(group)
    perm = np.argsort(group, kind="stable")
    g = group[perm]
    starts = np.flatnonzero(np.r_[True, g[1:] != g[:-1]]).astype(np.int64)
    sizes = np.diff(np.r_[starts, n]).astype(np.int64)
    np2 = len(cap)
    pa = src[perm].astype(np.int64)
    pb = np2 // 2 + dst[perm].astype(np.int64)
    rate = np.empty(n)
    kernels()["allocate"](
        starts,
        sizes,
        np.ones(n, dtype=np.bool_),
        pa,
        pb,
        queue_in[perm].astype(np.int64) * np2 + pa,
        queue_out[perm].astype(np.int64) * np2 + pb,
        cap,
        weights,
        bool(strict),
        MAX_ROUNDS,
        rate,
    )
    out = np.empty(n)
    out[perm] = rate
    return out


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

    Our reading of Pseudocode 4 (thesis §6.5.4; docs/aalo.md#pseudocode-4), in rounds ("while
    fabric is not saturated", Pseudocode 4 line 2) until no flow can grow:

    1. at every port ``p``, the residual capacity is split among the queues that have a flow
       at ``p`` which can still grow (both its ports have residual capacity), in proportion to
       their weights (``strict``: all of it to the highest-priority such queue);
    2. groups (coflows) are visited in increasing ``group``; each adds max-min fair rates for
       its flows, limited by its queue's remaining entitlement at each flow's two ports, so a
       group takes what it can before any later group of the same queue (FIFO);
    3. a flow with a saturated port stops; what the queues could not use is split again in
       the next round among the queues that still can grow there (work conservation, "excess
       share ... divided among unsaturated queues in proportion to their weights",
       thesis §6.5.4).

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
    return _allocate_flat(g, s, d, qi, qo, np.concatenate([c_in, c_out]), w, strict)


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
    """CoflowIds ``external.internal`` of Aalo's Pseudocode 5 (thesis §6.6.1;
    docs/aalo.md#coflow-ids).

    A coflow without parents is a DAG root: it gets the next external id in registration
    (arrival) order and internal id 0 (``newId.0``). A dependent coflow gets its parents'
    external id and internal id ``1 + max`` over its parents (``pId.sId``). When the parents
    come from different DAGs (the text assumes they share one), the external id of the earliest
    registered root is used.

    Queues serve coflows by ``(external, internal)``: a child loses to its parent and to its
    shallower relatives (thesis §6.6.1, §6.7.1), and follows its DAG's root in the FIFO order.

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
    Coflows 0 and 2 are roots; 1 depends on 0, and 3 on 1 and 2 (AAL-7, AAL-8;
    docs/test-cases.md#aal-7):

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
    they include flows that have finished; no size is read. A flow that completed before the
    current event (the fabric went idle, and the policy is not asked then) stops counting at
    its observed completion time.
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
        self._stop = np.full(nf, np.inf)  # observed completion time of each flow
        self._flows: IntArray = np.zeros(0, dtype=np.int64)
        self._pin: IntArray = np.zeros(0, dtype=np.int64)
        self._pout: IntArray = np.zeros(0, dtype=np.int64)
        self._rate: FloatArray = np.zeros(0)

    def advance(self, t: float, state: ObservedState) -> tuple[IntArray, IntArray]:
        """Adds the bytes sent since the last call; returns the pairs of the active flows."""
        done = np.asarray(state.completed, dtype=np.int64)
        self._stop[done] = state.completed_at
        dt = t - self._time
        if dt > 0 and len(self._rate):
            moved = self._rate * (np.minimum(t, self._stop[self._flows]) - self._time)
            np.add.at(self.bytes, self._pin, moved)
            np.add.at(self.bytes, self._pout, moved)
        self._time = t
        flows = np.asarray(state.flows)
        return self.pair_in[flows], self.pair_out[flows]

    def set_rates(self, flows: IntArray, rates: FloatArray) -> None:
        """Remembers the rates of ``flows`` in force from now on."""
        self._flows = np.asarray(flows, dtype=np.int64)
        self._pin, self._pout = self.pair_in[self._flows], self.pair_out[self._flows]
        self._rate = np.array(rates, dtype=float)

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


def _first_crossing(now: float, sent: FloatArray, rate: FloatArray, bound: FloatArray) -> float:
    """Earliest time ``sent + rate·(t - now)`` reaches ``bound`` (``inf`` if never)."""
    ok = (rate > 0) & np.isfinite(bound)
    if not ok.any():
        return math.inf
    need = np.maximum(bound[ok] - sent[ok], 0.0)
    return now + float(np.min(need / rate[ok]))


class _LocalFlows:
    """The state the incremental uncoordinated policy keeps between events (compiled kernels
    ``unc_update`` and ``unc_allocate``).

    The reference (:meth:`Aalo._decide_uncoordinated`) recomputes, in NumPy over all active
    flows and at every event, the bytes of every (coflow, port) pair, their queues, the FIFO
    order and the allocation. This keeps instead the active flows (index order), the number
    of active flows per pair and per coflow, and each flow's last rate, so that an event
    costs two compiled calls, each a few linear passes over the active flows: the bytes sent
    are added flow by flow in index order (the reference's ``np.add.at`` order), only pairs
    whose bytes changed or that gained a flow are checked against the thresholds, the FIFO
    order is recomputed only when the set of active coflows changes, and the decision names
    only the flows whose rate changed. The allocation is :func:`dclas_allocation`'s kernel on
    the same groups in the same order, so every rate, wake-up and demotion is bit-identical
    to the reference; it still runs over every active flow at every event (residual capacity
    and entitlements propagate along the FIFO order, so a change anywhere can move any rate).
    """

    def __init__(self, view: InstanceView, local: _LocalBytes) -> None:
        n, nf = view.num_coflows, view.num_flows
        npairs = len(local.bytes)
        self.coflow = np.ascontiguousarray(view.flow_coflow, dtype=np.int64)
        self.src = np.ascontiguousarray(view.flow_src, dtype=np.int64)
        self.dst = np.ascontiguousarray(view.flow_dst, dtype=np.int64)
        self.alive = np.zeros(nf, dtype=np.bool_)
        self.rate = np.zeros(nf)  # the rate each flow was last given
        self.pair_alive = np.zeros(npairs, dtype=np.int64)  # active flows per pair
        self.c_alive = np.zeros(n, dtype=np.int64)  # active flows per coflow
        self.mark = np.zeros(npairs, dtype=np.uint8)  # scratch of unc_update
        self.pair_rate = np.zeros(npairs)  # scratch of unc_allocate (kept zero)
        self.gpos = np.zeros(n, dtype=np.int64)  # scratch: each coflow's FIFO position
        self.act: IntArray = np.zeros(0, dtype=np.int64)  # active flows, index order
        self.order: IntArray | None = None  # FIFO order of the coflows with active flows
        self.t_last = 0.0


class _ActiveFlows:
    """The active flows of every coflow, kept between events for the coordinated policy.

    Coflow ``c``'s flows are cells of a dense matrix: a row per ingress port it uses, a column
    per egress port (``row_ptr``, ``col_ptr``, ``cell_ptr`` delimit its rows, columns and
    cells; ``live`` marks the cells holding an active flow). Max-min fair filling inside a
    coflow then walks rows and columns of that matrix instead of per-flow adjacency lists
    rebuilt at every event; an event only flips the cells of the flows that arrived or
    completed. A queue change only changes the coflow's (queue, port) key base. Rates are
    remembered per flow, so a decision names only the flows whose rate changed
    (``Decision.update``).

    A coflow with two flows between the same two ports does not fit a matrix, and a sparse
    coflow would waste one; such instances fall back to regrouping the active flows at
    every event (:func:`dclas_allocation`'s kernel, flows by index).
    """

    def __init__(self, view: InstanceView, sparse: bool = True) -> None:
        n, nf, m = view.num_coflows, view.num_flows, view.num_ports
        self.np2 = 2 * m
        self.sparse = bool(sparse)
        c = self.flow_coflow = np.ascontiguousarray(view.flow_coflow, dtype=np.int64)
        self.src = np.ascontiguousarray(view.flow_src, dtype=np.int64)
        self.dst = np.ascontiguousarray(view.flow_dst, dtype=np.int64)
        self.alive = np.zeros(nf, dtype=bool)
        self.last_rate = np.zeros(nf)  # per flow: the rate it was last given
        self.nlive = np.zeros(n, dtype=np.int64)  # per coflow: active flows
        self.key_base = np.zeros(n, dtype=np.int64)  # per coflow: queue * 2m
        self.num_alive = 0
        rows, row = np.unique(c * m + self.src, return_inverse=True)
        cols, col = np.unique(c * m + self.dst, return_inverse=True)
        self.row_ptr = np.zeros(n + 1, dtype=np.int64)
        self.col_ptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(rows // m, minlength=n), out=self.row_ptr[1:])
        np.cumsum(np.bincount(cols // m, minlength=n), out=self.col_ptr[1:])
        width = np.diff(self.col_ptr)
        self.cell_ptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.diff(self.row_ptr) * width, out=self.cell_ptr[1:])
        self.cell_of = (
            self.cell_ptr[c] + (row - self.row_ptr[c]) * width[c] + col - self.col_ptr[c]
        ).astype(np.int64)
        unique_pairs = len(np.unique(self.cell_of)) == nf
        self.dense = unique_pairs and self.cell_ptr[-1] <= 4 * nf + 4096
        if not self.dense:
            return
        self.row_port = (rows % m).astype(np.int64)
        self.col_port = (m + cols % m).astype(np.int64)
        self.row_of = row.astype(np.int64)
        self.col_of = col.astype(np.int64)
        self.cell_flow = np.full(self.cell_ptr[-1], -1, dtype=np.int64)
        self.cell_flow[self.cell_of] = np.arange(nf)
        # the final greedy backfill visits a coflow's flows by index
        self.bf_ptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(c, minlength=n), out=self.bf_ptr[1:])
        by_index = np.argsort(c, kind="stable")
        self.bf_cell = self.cell_of[by_index]
        self.bf_row = (row - self.row_ptr[c])[by_index].astype(np.int64)  # within the coflow
        self.bf_col = (col - self.col_ptr[c])[by_index].astype(np.int64)
        # coflows whose flows by index are their cells in row-major order: the sparse
        # backfill walks their cells instead (same order, see allocate_dense)
        # (a coflow's cells follow the previous coflow's, so only steps inside one can fail)
        back = np.flatnonzero(np.diff(self.bf_cell) <= 0) + 1
        self.bf_rowmajor = np.ones(n, dtype=np.uint8)
        self.bf_rowmajor[c[by_index][back]] = 0
        # cells with a positive rate after the last allocation (sparse path: the only ones
        # that are not zero in `rate`)
        self.positive = np.zeros(self.cell_ptr[-1], dtype=np.int64)
        self.npositive = 0
        self._stamp = np.zeros(n, dtype=np.uint8)
        self.live = np.zeros(self.cell_ptr[-1], dtype=np.uint8)
        self.row_live = np.zeros(len(rows), dtype=np.int64)  # active flows per row
        self.col_live = np.zeros(len(cols), dtype=np.int64)
        self.rate = np.zeros(self.cell_ptr[-1])

    def update(self, arrived: IntArray, completed: IntArray) -> IntArray:
        """Marks arrivals and completions; returns the coflows whose flows changed (sorted)."""
        self.num_alive += len(arrived) - len(completed)
        if self.dense and self.sparse:
            return kernels()["mark_flows"](
                arrived, completed, self.flow_coflow, self.cell_of, self.row_of, self.col_of,
                self.alive, self.last_rate, self.nlive, self.live, self.row_live,
                self.col_live, self._stamp,
            )  # fmt: skip
        self.alive[arrived] = True
        self.alive[completed] = False
        self.last_rate[completed] = 0.0  # the simulator stops a finished flow itself
        counts = [(self.nlive, self.flow_coflow)]
        if self.dense:
            self.live[self.cell_of[arrived]] = 1
            self.live[self.cell_of[completed]] = 0
            counts += [(self.row_live, self.row_of), (self.col_live, self.col_of)]
        for count, index in counts:
            np.add.at(count, index[arrived], 1)
            np.subtract.at(count, index[completed], 1)
        return np.unique(np.concatenate([self.flow_coflow[arrived], self.flow_coflow[completed]]))

    def allocate(
        self, order: IntArray, cap: FloatArray, weights: FloatArray
    ) -> tuple[IntArray, FloatArray, FloatArray]:
        """D-CLAS rates with the coflows served in ``order``: the flows whose rate changes,
        their new rates, and each coflow's total rate (aligned with ``order``)."""
        if not self.dense:
            return self._allocate_regrouped(order, cap, weights)
        k = kernels()
        k["allocate_dense"](
            order, self.row_ptr, self.col_ptr, self.cell_ptr, self.row_port, self.col_port,
            self.key_base, self.live, self.row_live, self.col_live, self.bf_ptr, self.bf_cell,
            self.bf_row, self.bf_col, cap, weights, MAX_ROUNDS, self.rate,
            self.sparse, self.positive[: self.npositive], self.bf_rowmajor,
        )  # fmt: skip
        if not self.sparse:
            return k["collect"](
                order, self.cell_ptr, self.live, self.cell_flow, self.rate, self.last_rate
            )
        flows, rates, group_rate, self.npositive = k["collect_sparse"](
            order, self.row_ptr, self.col_ptr, self.cell_ptr, self.row_live, self.col_live,
            self.live, self.cell_flow, self.rate, self.last_rate, self.positive,
        )  # fmt: skip
        return flows, rates, group_rate

    def _allocate_regrouped(
        self, order: IntArray, cap: FloatArray, weights: FloatArray
    ) -> tuple[IntArray, FloatArray, FloatArray]:
        flows = np.flatnonzero(self.alive)
        pos = np.zeros(len(self.nlive), dtype=np.int64)
        pos[order] = np.arange(len(order))
        group = pos[self.flow_coflow[flows]]
        queue = self.key_base[self.flow_coflow[flows]] // self.np2
        rates = _allocate_flat(
            group, self.src[flows], self.dst[flows], queue, queue, cap, weights, False
        )
        changed = rates != self.last_rate[flows]
        self.last_rate[flows] = rates
        group_rate = np.bincount(group, weights=rates, minlength=len(order)).astype(float)
        return flows[changed], rates[changed], group_rate


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
    sparse
        ``True`` (default): the coordinated allocation skips the cells whose outcome is known
        (clears only the rates that were positive, counts the flows that can grow by
        subtraction when cheaper, backfills and collects only cells of live rows and
        columns, marks arrivals and completions in one compiled pass); ``False``: the
        reference path, which touches every cell of every active coflow at every event. Both
        do the same floating-point operations in the same order, so rates, events and
        completion times are bit-identical (``tests/heuristics/test_aalo_sparse.py``). The
        uncoordinated variant does not use this path.
    incremental
        Uncoordinated variant only. ``True`` (default): state kept between events and two
        compiled passes per event (:class:`_LocalFlows`); ``False``: the reference, which
        recomputes every pair's bytes, queue, the FIFO order and the allocation in NumPy at
        every event. Same floating-point operations in the same order, so decisions, events
        and completion times are bit-identical
        (``tests/heuristics/test_aalo_uncoordinated_fast.py``).

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
    no units). The defaults are the thesis's (``Q_1^hi`` = 10 MB, E = K = 10, Δ = 10 ms; §6.8.1)
    for an instance in MB and ms, such as the Facebook trace (:func:`read_benchmark`).

    **Queues** (thesis §6.5.2, §6.5.4). Queue ``i`` holds coflows whose bytes sent ``S`` satisfy
    ``Q_i^lo <= S < Q_i^hi`` (half-open). Every coflow enters the first queue; it is demoted
    when its bytes sent (all its flows, finished ones too, as the coordinator sees them at the
    last Δ-sync) reach a threshold; it is never promoted.

    **Allocation** (Pseudocode 4, §6.5.4; docs/aalo.md#pseudocode-4): :func:`dclas_allocation` with
    the coflows' queues. At each port, queues share the residual capacity by weight among those
    that can still use it; inside a queue, coflows in FIFO order take max-min fair rates within
    what their queue is entitled to; what a queue cannot use is redistributed by weight, in rounds,
    until no flow can grow (work conserving). FIFO holds within each round's entitlements (see
    :func:`dclas_allocation` for the one way a later coflow can keep bandwidth an earlier one could
    have used after a redistribution). With ``"strict"`` weights the coordinated policy serves
    coflows in (queue, FIFO) order, each taking max-min fair rates from what the ones before it
    left: exact FIFO, strict priority (CoflowSim's DARK, plus work conservation).

    **FIFO order** (Pseudocode 5, §6.6.1; docs/aalo.md#coflow-ids): by CoflowId ``(external,
    internal)`` (:func:`coflow_ids`), the external id being the arrival order of the coflow's DAG
    root; ties by coflow index. The simulator enforces starts-after dependencies. A coflow's queue
    uses its own bytes sent, not its DAG's (the thesis does not say).

    **Events.** The policy asks to be woken up only at the Δ-multiple following the earliest
    crossing predicted from the current rates; rates change at arrivals, completions and queue
    changes only.

    **Implementation.** The allocation is recomputed at every event (a completion changes the
    max-min rates inside its coflow), but from state kept between events: each coflow's flows
    as a dense ports × ports matrix (:class:`_ActiveFlows`), the FIFO order, and each coflow's
    bytes sent, integrated from the policy's own rates and read from the simulator only at a
    Δ-sync, after an idle period, or when its error bound could change the wake-up. Decisions
    name only the flows whose rate changed. The rates are those of :func:`dclas_allocation`
    with each coflow's flows in index order (to rounding).

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
        sparse: bool = True,
        incremental: bool = True,
    ) -> None:
        if isinstance(num_queues, bool) or not isinstance(num_queues, int) or num_queues < 1:
            raise ValueError(f"num_queues must be an integer >= 1, got {num_queues!r}")
        if not (math.isfinite(delta) and delta >= 0):
            raise ValueError(f"delta must be finite and >= 0, got {delta!r}")
        self.num_queues = num_queues
        self.delta = float(delta)
        self.coordinated = bool(coordinated)
        self.sparse = bool(sparse)
        self.incremental = bool(incremental)
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
        self._cap = np.concatenate([self._cap_in, self._cap_out])
        self._local = None if self.coordinated else _LocalBytes(view)
        if self._local is not None:
            self.pair_queue: IntArray = np.zeros(len(self._local.bytes), dtype=np.int64)
            self._lf = _LocalFlows(view, self._local) if self.incremental else None
            return
        # coordinated: the active flows, the FIFO order, and each coflow's bytes sent as of
        # `_t_sent` (integrated from the policy's own rates; `_err` bounds the difference to
        # the simulator's count)
        self._flows = _ActiveFlows(view, self.sparse)
        self._weights = np.ones(1) if self.strict else self.queue_weights
        self._active: IntArray = np.zeros(0, dtype=np.int64)
        self._is_active = np.zeros(n, dtype=bool)
        self._seen = np.zeros(n, dtype=bool)
        self._order: IntArray = np.zeros(0, dtype=np.int64)
        self._sent = np.zeros(n)
        self._err = np.zeros(n)
        self._rate_c = np.zeros(n)
        self._t_sent = 0.0

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
        """D-CLAS with a global coordinator (thesis §6.5.4; docs/aalo.md): queues change at
        Δ-syncs, the allocation is recomputed from the state kept between events."""
        t = float(state.time)
        arrived = np.asarray(state.arrived, dtype=np.int64)
        completed = np.asarray(state.completed, dtype=np.int64)
        track = self.num_queues > 1
        if track:
            self._advance_sent(t, completed)
        started, stopped, stale = self._update_active(arrived, completed)
        demoted = np.zeros(0, dtype=np.int64)
        if track:
            # exact counts where decisions are made (a sync) and where the policy's own count
            # may be stale (see _update_active)
            sync = self._is_sync(t)
            if sync or stale:
                self._sync_sent(state)
            if sync:
                demoted = self._demote(t)
        af = self._flows
        if len(started) or len(stopped) or (self.strict and len(demoted)):
            first = self.queue[self._active] if self.strict else None
            self._order = self._fifo_order(self._active, np.asarray(state.coflow_arrival), first)
        flows, rates, group_rate = af.allocate(self._order, self._cap, self._weights)
        if not track:
            return Decision(update=(flows, rates))
        self._rate_c[stopped] = 0.0
        self._rate_c[self._order] = group_rate
        return Decision(update=(flows, rates), wakeup=self._wakeup(t, group_rate, state))

    def _advance_sent(self, t: float, completed: IntArray) -> None:
        """Adds the bytes sent since the last event: the policy's own rates times the elapsed
        time (rates are constant between events). Completed flows stopped at ``t``, except that
        the simulator completes a flow whose remaining bytes are within its tolerance of zero,
        so each completion widens the coflow's error bound by what could have been left."""
        act = self._active
        self._sent[act] += self._rate_c[act] * (t - self._t_sent)
        self._t_sent = t
        if len(completed):
            left = self._flows.last_rate[completed] * (_SNAP_TOL * max(1.0, abs(t)))
            np.add.at(self._err, self._flows.flow_coflow[completed], left)

    def _update_active(
        self, arrived: IntArray, completed: IntArray
    ) -> tuple[IntArray, IntArray, bool]:
        """Applies arrivals and completions; returns the coflows that became active, those
        that stopped being active (no active flow left), and whether the policy's bytes-sent
        counts may be stale.

        They may be when every active flow completed: the simulator does not ask the policy
        while nothing is active, so those flows may have stopped before now. The count of a
        coflow that resumes (new flows after it had none active) may be stale for the same
        reason."""
        gap = len(completed) > 0 and len(completed) == self._flows.num_alive
        touched = self._flows.update(arrived, completed)
        now = self._flows.nlive[touched] > 0
        was = self._is_active[touched]
        started = touched[now & ~was]
        stopped = touched[~now & was]
        resumed = self._seen[started]
        self._seen[started] = True
        self._sent[started[~resumed]] = 0.0  # a new coflow has sent nothing
        if len(started) or len(stopped):
            self._is_active[started] = True
            self._is_active[stopped] = False
            self._active = np.union1d(np.setdiff1d(self._active, stopped), started)
        return started, stopped, gap or bool(resumed.any())

    def _sync_sent(self, state: ObservedState) -> None:
        """Takes the active coflows' bytes sent from the simulator (exact; error bound 0)."""
        act = self._active
        self._sent[act] = np.asarray(state.coflow_sent)[act]
        self._err[act] = 0.0

    def _demote(self, t: float) -> IntArray:
        """The coordinator's decision at a Δ-sync: active coflows move to the queue of their
        bytes sent (never up); returns the coflows that moved."""
        act = self._active
        reached = _queue_of(self._sent[act], self.bounds)
        up = reached > self.queue[act]
        moved = act[up]
        for c, q in zip(moved.tolist(), reached[up].tolist(), strict=True):
            self.demotions.append((t, c, -1, q))
        self.queue[moved] = reached[up]
        if not self.strict:
            self._flows.key_base[moved] = reached[up] * self._flows.np2
        return moved

    def _wakeup(self, t: float, group_rate: FloatArray, state: ObservedState) -> float | None:
        """The Δ-sync following the earliest predicted crossing (``None``: never).

        The prediction uses the policy's own bytes-sent counts; when their error bound could
        change the answer, it is redone on the simulator's exact counts."""
        order = self._order
        wakeups = kernels()["wakeups"]
        queue = self.queue[order]
        slack = self._err[order] + 1e-10 * self._sent[order]
        early, late = wakeups(
            t, self._sent[order], slack, group_rate, queue, self.bounds, self.delta, CROSS_TOL
        )
        if early != late:
            self._sync_sent(state)
            early = wakeups(
                t, self._sent[order], slack * 0, group_rate, queue, self.bounds, self.delta,
                CROSS_TOL,
            )[0]  # fmt: skip
        return None if math.isinf(early) else float(early)

    def _decide_uncoordinated(self, state: ObservedState) -> Decision:
        """Decentralised D-CLAS (see :class:`AaloUncoordinated`); the reference path
        (``incremental=False``), recomputed from scratch at every event."""
        if self._lf is not None:
            return self._decide_incremental(state, self._lf)
        t = float(state.time)
        local = self._local
        assert local is not None
        flows = np.asarray(state.flows)
        coflow = np.asarray(state.coflow)
        pin, pout = local.advance(t, state)
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
        rates = _allocate_flat(
            pos[coflow],
            np.asarray(state.src, dtype=np.int64),
            np.asarray(state.dst, dtype=np.int64),
            pq[pin],
            pq[pout],
            self._cap,
            self.queue_weights,
            self.strict,
        )
        local.set_rates(flows, rates)
        if self.num_queues == 1:
            return Decision(rates)
        rin, rout = local.pair_rates(pin, pout, rates)
        t_cross = min(
            _first_crossing(t, local.bytes[pin], rin, bounds[pq[pin]]),
            _first_crossing(t, local.bytes[pout], rout, bounds[pq[pout]]),
        )
        return Decision(rates, wakeup=None if math.isinf(t_cross) else t_cross)

    def _decide_incremental(self, state: ObservedState, lf: _LocalFlows) -> Decision:
        """The reference's decision from the state kept between events (:class:`_LocalFlows`);
        names only the flows whose rate changed."""
        t = float(state.time)
        local = self._local
        assert local is not None
        k = kernels()
        track = self.num_queues > 1
        act, dem_pair, dem_queue, changed = k["unc_update"](
            t, lf.t_last, np.asarray(state.arrived, dtype=np.int64),
            np.asarray(state.completed, dtype=np.int64),
            np.asarray(state.completed_at, dtype=np.float64), lf.act, lf.coflow,
            local.pair_in, local.pair_out, local.pair_port, lf.alive, lf.rate, local._stop,
            local.bytes, self.pair_queue, lf.pair_alive, lf.c_alive, lf.mark, self.bounds,
            CROSS_TOL, track, self._m,
        )  # fmt: skip
        lf.act = act
        lf.t_last = t
        for p, q in zip(dem_pair.tolist(), dem_queue.tolist(), strict=True):
            self.demotions.append((t, int(local.pair_coflow[p]), int(local.pair_port[p]), q))
        if changed or lf.order is None:
            active = np.flatnonzero(lf.c_alive)
            lf.order = self._fifo_order(active, np.asarray(state.coflow_arrival), None)
        flows, rates, t_cross = k["unc_allocate"](
            t, lf.order, act, lf.coflow, lf.src, lf.dst, local.pair_in, local.pair_out,
            self.pair_queue, lf.gpos, lf.rate, local.bytes, lf.pair_rate, self._cap,
            self.queue_weights, self.strict, MAX_ROUNDS, self.bounds, track,
        )  # fmt: skip
        if not track:
            return Decision(update=(flows, rates))
        return Decision(update=(flows, rates), wakeup=None if math.isinf(t_cross) else t_cross)


class AaloUncoordinated(Aalo):
    """Aalo without coordination (``aalo-uncoordinated``): decentralised D-CLAS/LAS.

    Every port runs D-CLAS on its own: a coflow's queue *at a port* is decided by the bytes the
    coflow sent through that port (a flow's ingress and egress may see its coflow in different
    queues), known at once (no Δ). This is the "uncoordinated non-clairvoyant" scheduler of
    thesis §6.8.2 and the decentralised LAS of Fig. 6.1 (§6.3.2), which cannot see a
    coflow's traffic elsewhere (Theorem C.1.1, Appendix C.1). FIFO order and allocation are as in
    :class:`Aalo`, with the per-port queues (strict priority may need the greedy backfill of
    :func:`dclas_allocation`).

    Parameters
    ----------
    num_queues, first_threshold, factor, weights, thresholds, incremental
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
        incremental: bool = True,
    ) -> None:
        super().__init__(
            num_queues=num_queues,
            first_threshold=first_threshold,
            factor=factor,
            delta=delta,
            weights=weights,
            coordinated=False,
            thresholds=thresholds,
            incremental=incremental,
        )
