"""CODA: identify coflows without application labels and schedule them error-tolerantly.

Zhang, Chen, Yi, Chen, Chowdhury, Geng, "CODA: Toward Automatically Identifying and Scheduling
Coflows in the Dark", SIGCOMM 2016. :class:`Coda` (``coda``) runs with the coflow labels hidden
(``label_blind = True``: the simulator describes every flow as a coflow of its own, see
:mod:`coflowlab.policy`), so it sees only flows (ports, start times, bytes sent) and the groups
it identifies itself:

1. **Identification** (§3, Algorithm 1): incremental Rough-DBSCAN over the flows' start times
   (and optionally their egress port), at every event (:mod:`.coda_identify`).
2. **Late binding** (§4.2, Algorithm 2 ``COFLOWEXTENSION``): every identified coflow ``C`` is
   extended by the active flows within distance ``d`` of it, ``d(f, C) = min_{g∈C} d(f, g)``;
   a flow in several extended coflows is bound to the one served first.
3. **Inter-coflow** (``INTERCOFLOW``): D-CLAS across the identified coflows: queues by the
   bytes each coflow has sent (thresholds ``first_threshold · factor^i``), strict priority
   across queues, FIFO by the coflow's start (its earliest leader) inside a queue.
4. **Intra-coflow** (``INTRACOFLOW``): inside an extended coflow, flows in a multi-level
   queue by their own bytes sent (smallest first), max-min fair inside a flow queue.

Rates: the (extended coflow, flow queue) groups in priority order, each taking max-min fair
rates from the capacity the groups before it left (work conserving:
:func:`~coflowlab.allocation.max_min_fair` per group). The policy wakes up at the
next threshold crossing of a coflow or a flow. Our readings: docs/philae-coda.md#coda.

Examples
--------
Two coflows 500 ms apart, the first of two flows starting 30 ms apart, are identified
exactly (the first flow is still active when the second starts):

>>> from coflowlab import Coflow, Instance, simulate
>>> inst = Instance.from_coflows(
...     [Coflow([(0, 0, 50.0), (1, 1, 50.0)]), Coflow([(0, 1, 5.0)], release=500.0)], 2)
>>> inst = inst.replace(flow_release=[0.0, 30.0, 500.0])
>>> coda = Coda()
>>> simulate(inst, coda).cct.tolist()
[80.0, 5.0]
>>> identification_accuracy(inst, coda.groups)
Accuracy(precision=1.0, recall=1.0)
"""

from __future__ import annotations

import math
from functools import cache
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from coflowlab.allocation import _PAIRS_PER_FLOW, max_min_fair
from coflowlab.policy import Decision, InstanceView, ObservedState

from .aalo import CROSS_TOL, _queue_bounds, _queue_of
from .coda_identify import Accuracy, FlowFeatures, RoughDBSCAN, identification_accuracy

__all__ = ["Accuracy", "Coda", "identification_accuracy"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


@cache
def _kernels() -> dict[str, Any]:
    """Compiles the numba kernel of the compiled path on first use (cached on disk)."""
    from . import _coda_jit as k

    return {"decide": k.decide}


def _next_crossing(now: float, sent: FloatArray, rate: FloatArray, bound: FloatArray) -> float:
    """Earliest time ``sent + rate · (t − now)`` reaches ``bound`` (``inf`` if never)."""
    ok = (rate > 0) & np.isfinite(bound)
    if not ok.any():
        return math.inf
    return now + float(np.min(np.maximum(bound[ok] - sent[ok], 0.0) / rate[ok]))


class Coda:
    """CODA (``coda``): Rough-DBSCAN identification, late binding, D-CLAS across the
    identified coflows, smallest-bytes-sent-first inside each (Zhang et al., SIGCOMM 2016).

    Non-clairvoyant and label-blind: it reads start times, ports and bytes sent only.

    Parameters
    ----------
    eps
        DBSCAN radius ``ε`` (time unit; paper testbed default 100, read as ms).
    tau
        Rough-DBSCAN leader radius ``τ`` (the paper gives none; default ε/4, our choice).
    d
        Late-binding distance (paper default 150 = 1.5 ε); 0 switches late binding off.
    time_weight, port_weight
        Distance weights of the start time and of "different egress port"
        (:class:`~.coda_identify.FlowFeatures`).
    intra_priority
        Smallest-bytes-sent-first inside a coflow (``False``: max-min fair inside a coflow).
        With ``d = 0`` and this ``False``, CODA is "CODA w/o both" (§6.4): Aalo with strict
        priority on the identified coflows.
    num_queues, first_threshold, factor
        D-CLAS coflow queues (Aalo's defaults: 10 queues, 10 MB, ×10).
    num_flow_queues, flow_first_threshold, flow_factor
        The flow queues inside a coflow (the paper gives none; 4 queues from 1 MB, ×10).
    compiled
        Everything after identification (ordering, late binding over the distinct start
        times, the group allocation, the wake-up) in one compiled call (default); ``False``
        runs the NumPy reference path. Both give the same rates (the same distances and the
        same floating-point operations in the same order).

    Attributes
    ----------
    groups
        After a simulation: each flow's identified coflow at the last decision while it was
        active (named by the cluster's smallest leader); ``-1`` for a flow never seen.
    bound_groups
        The same for the extended coflow each flow was bound to (late binding).

    Examples
    --------
    See the module docstring; :func:`identification_accuracy` scores ``groups``.
    """

    name: ClassVar[str] = "coda"
    clairvoyant: ClassVar[bool] = False
    label_blind: ClassVar[bool] = True

    def __init__(
        self,
        *,
        eps: float = 100.0,
        tau: float = 25.0,
        d: float = 150.0,
        time_weight: float = 1.0,
        port_weight: float = 0.0,
        intra_priority: bool = True,
        num_queues: int = 10,
        first_threshold: float = 10.0,
        factor: float = 10.0,
        num_flow_queues: int = 4,
        flow_first_threshold: float = 1.0,
        flow_factor: float = 10.0,
        compiled: bool = True,
    ) -> None:
        for pname, value in (("eps", eps), ("tau", tau), ("d", d)):
            if not (math.isfinite(value) and value >= 0):
                raise ValueError(f"{pname} must be finite and >= 0, got {value!r}")
        for pname, k in (("num_queues", num_queues), ("num_flow_queues", num_flow_queues)):
            if isinstance(k, bool) or not isinstance(k, int) or k < 1:
                raise ValueError(f"{pname} must be an integer >= 1, got {k!r}")
        self.eps, self.tau, self.d = float(eps), float(tau), float(d)
        self.time_weight, self.port_weight = float(time_weight), float(port_weight)
        self.intra_priority = bool(intra_priority)
        self.compiled = bool(compiled)
        self.bounds = _queue_bounds(num_queues, first_threshold, factor, None)
        self.flow_bounds = _queue_bounds(num_flow_queues, flow_first_threshold, flow_factor, None)
        self.groups: IntArray = np.zeros(0, dtype=np.int64)
        self.bound_groups: IntArray = np.zeros(0, dtype=np.int64)

    def reset(self, view: InstanceView) -> None:
        """Prepares for a new simulation; the view must hide the coflow labels."""
        if not view.labels_hidden:
            raise ValueError(
                "coda identifies coflows itself: simulate it with hide_labels=True (the default "
                "for this policy), not with the coflow labels visible"
            )
        nf = view.num_flows
        self._cap = np.concatenate([np.asarray(view.cap_in, float), view.cap_out])
        self._src = np.asarray(view.flow_src, dtype=np.int64)
        self._dst = np.asarray(view.flow_dst, dtype=np.int64)
        self.features = FlowFeatures(
            time=np.zeros(nf),
            dst=self._dst,
            time_weight=self.time_weight,
            port_weight=self.port_weight,
        )
        self.rdbscan = RoughDBSCAN(self.features, eps=self.eps, tau=self.tau)
        self._start = np.zeros(nf)
        self._done_bytes = np.zeros(nf)  # per leader: bytes of its departed followers
        self.groups = np.full(nf, -1, dtype=np.int64)
        self.bound_groups = np.full(nf, -1, dtype=np.int64)

    # ------------------------------------------------------------------ identification
    def _identify(self, state: ObservedState) -> None:
        t = float(state.time)
        arrived = np.asarray(state.arrived, dtype=np.int64)
        completed = np.asarray(state.completed, dtype=np.int64)
        if len(completed):
            # a departed flow's bytes stay with its coflow: credited to its leader
            final = np.asarray(state.coflow_sent_done)[completed]  # per flow (labels hidden)
            lead = self.rdbscan.leader_of[completed]
            seen = lead >= 0
            np.add.at(self._done_bytes, lead[seen], final[seen])
            self.rdbscan.remove(completed)
        if len(arrived):
            # every arrival is an event the policy is asked at, so they started now
            self._start[arrived] = t
            self.features.observe(arrived, t)
            self.rdbscan.add(np.sort(arrived))

    def _extend(self, flows: IntArray, own: IntArray, num: int) -> IntArray:
        """Late binding (``COFLOWEXTENSION``): each flow's own coflow is ``own`` (a priority
        rank, 0 first); returns the rank of the first extended coflow containing it, i.e. of
        the first coflow within distance ``d`` of it."""
        if self.d <= 0 or num < 2:
            return own
        _, first, inv = np.unique(
            self.features.key(flows), axis=0, return_index=True, return_inverse=True
        )
        inv = inv.ravel()
        reps = flows[first]
        dist = self.features.distances(reps, reps)  # between distinct attribute rows
        bound = own.copy()
        for i in range(num):  # in priority order: a flow keeps the first coflow it joins
            members = np.unique(inv[own == i])
            near = dist[members].min(axis=0) <= self.d
            bound[near[inv] & (bound > i)] = i
        return bound

    # ------------------------------------------------------------------ decisions
    def decide(self, state: ObservedState) -> Decision:
        """Identifies, extends, orders, and allocates; wakes up at the next queue crossing."""
        t = float(state.time)
        self._identify(state)
        flows = np.asarray(state.flows, dtype=np.int64)
        sent = np.asarray(state.sent)
        label = self.rdbscan.labels(flows)
        leaders, leader_label = self.rdbscan.leader_labels()
        if self.compiled:
            return self._decide_fast(t, flows, sent, label, leaders, leader_label)
        clusters, cl_of = np.unique(label, return_inverse=True)
        cl_of = cl_of.ravel()
        # bytes sent and start of each identified coflow (its leaders, departed ones too)
        # (every live leader has an active follower, so its cluster is among these)
        at = np.searchsorted(clusters, leader_label)
        c_sent: FloatArray = np.asarray(
            np.bincount(cl_of, weights=sent, minlength=len(clusters)), dtype=float
        )
        np.add.at(c_sent, at, self._done_bytes[leaders])
        c_start = np.full(len(clusters), np.inf)
        np.minimum.at(c_start, at, self._start[leaders])
        c_queue = _queue_of(c_sent, self.bounds)
        order = np.lexsort((clusters, c_start, c_queue))  # cluster indices by priority
        rank = np.empty(len(clusters), dtype=np.int64)
        rank[order] = np.arange(len(clusters))
        bound = self._extend(flows, rank[cl_of], len(clusters))
        self.groups[flows] = label
        self.bound_groups[flows] = clusters[order[bound]]
        f_queue = (
            _queue_of(sent, self.flow_bounds)
            if self.intra_priority
            else np.zeros(len(flows), dtype=np.int64)
        )
        key = bound * len(self.flow_bounds) + f_queue
        _, group = np.unique(key, return_inverse=True)
        group = group.ravel().astype(np.int64)
        rates = self._allocate(self._src[flows], self._dst[flows], group)
        c_rate: FloatArray = np.asarray(
            np.bincount(cl_of, weights=rates, minlength=len(clusters)), dtype=float
        )
        wake = _next_crossing(t, c_sent, c_rate, self.bounds[c_queue])
        if self.intra_priority:
            wake = min(wake, _next_crossing(t, sent, rates, self.flow_bounds[f_queue]))
        return Decision(rates, wakeup=None if math.isinf(wake) else wake)

    def _decide_fast(
        self,
        t: float,
        flows: IntArray,
        sent: FloatArray,
        label: IntArray,
        leaders: IntArray,
        leader_label: IntArray,
    ) -> Decision:
        """The rest of :meth:`decide` (ordering, late binding over the distinct start times,
        allocation, wake-up) in one compiled call (:func:`._coda_jit.decide`)."""
        m = len(self._cap) // 2
        rates, wake, extended = _kernels()["decide"](
            t, flows, label, sent, self._start, self._src, self._dst, leader_label,
            self._done_bytes[leaders], self._start[leaders], self.bounds, self.flow_bounds,
            CROSS_TOL, self.d, self.time_weight, self.port_weight, self.intra_priority,
            self._cap[:m], self._cap[m:], _PAIRS_PER_FLOW,
        )  # fmt: skip
        self.groups[flows] = label
        self.bound_groups[flows] = extended
        return Decision(rates, wakeup=None if math.isinf(wake) else float(wake))

    def _allocate(self, src: IntArray, dst: IntArray, group: IntArray) -> FloatArray:
        """Groups in increasing order, each taking max-min fair rates from the capacity the
        groups before it left (Algorithm 2's ``INTRACOFLOW`` loop)."""
        m = len(self._cap) // 2
        res_in, res_out = self._cap[:m].copy(), self._cap[m:].copy()
        rates = np.zeros(len(src))
        order = np.argsort(group, kind="stable")
        cuts = np.flatnonzero(np.diff(group[order])) + 1
        for part in np.split(order, cuts):
            s, d = src[part], dst[part]
            if not ((res_in[s] > 0) & (res_out[d] > 0)).any():
                continue
            r = max_min_fair(s, d, res_in, res_out)
            rates[part] = r
            res_in -= np.bincount(s, weights=r, minlength=m)
            res_out -= np.bincount(d, weights=r, minlength=m)
            np.maximum(res_in, 0.0, out=res_in)
            np.maximum(res_out, 0.0, out=res_out)
        return rates

    def accuracy(self, truth: npt.ArrayLike) -> Accuracy:
        """:func:`identification_accuracy` of :attr:`groups` against each flow's true coflow."""
        return identification_accuracy(truth, self.groups)
