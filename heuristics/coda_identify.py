"""CODA's coflow identification: incremental Rough-DBSCAN over flow features, and its accuracy.

CODA (Zhang, Chen, Yi, Chen, Chowdhury, Geng, "CODA: Toward Automatically Identifying and
Scheduling Coflows in the Dark", SIGCOMM 2016, §3) clusters flows into coflows without
application labels: a weighted distance between flow attributes (§3.2, Eq. 1), then the
incremental Rough-DBSCAN of Algorithm 1 (§3.3): leaders represent the followers within ``tau``
of them, DBSCAN with ``minPts = 1`` runs on the leaders only (so the clusters are the connected
components of the leaders' ``eps``-graph), and each leader expands into its followers.

- :class:`FlowFeatures`: the attributes and the distance
  ``d(f, g)² = w_t (t_f − t_g)² + w_p [dst_f ≠ dst_g]`` (start time and "flow aggregation",
  the paper's ``S_time`` and ``D_prt``; the other attributes got weight 0 in the paper, §3.2).
- :class:`RoughDBSCAN`: Algorithm 1, incremental (arrivals and departures).
- :func:`dbscan`: exact DBSCAN with ``minPts = 1`` (the reference R-DBSCAN approximates).
- :func:`identify`: the offline identification of a whole instance (every flow in start-time
  order, no departures).
- :func:`identification_accuracy`: precision and recall (§6.1), each true coflow matched to
  the cluster holding most of its flows.

Our readings of what the paper leaves open are in docs/philae-coda.md#coda-identification.

Examples
--------
Six flows starting at 0, 20, 50, 400, 430 and 560 with ``eps = 100`` form three coflows:

>>> feats = FlowFeatures(time=[0, 20, 50, 400, 430, 560])
>>> dbscan(feats, eps=100).tolist()
[0, 0, 0, 3, 3, 5]
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
import numpy.typing as npt
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

from coflowlab.instance import Instance

__all__ = [
    "Accuracy",
    "FlowFeatures",
    "RoughDBSCAN",
    "dbscan",
    "identification_accuracy",
    "identify",
]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True)
class FlowFeatures:
    """The attributes CODA clusters on, one row per flow, and the distance between flows.

    Parameters
    ----------
    time
        Start time of each flow (``S_time``), in the instance's time unit.
    dst
        Egress port of each flow (its "flow aggregation", ``D_prt``); ``None`` if unused.
    time_weight
        Weight of the squared start-time difference (default 1).
    port_weight
        Weight of ``[dst_f ≠ dst_g]`` (default 0: the paper's learned weight for it is small,
        and 0 for Hadoop, §3.2).

    Examples
    --------
    The paper's learned Spark weights (C-5 of our reading): same aggregation no, Δt = 0.05:

    >>> f = FlowFeatures(time=[0.0, 0.05], dst=[0, 1], time_weight=3.825, port_weight=0.217)
    >>> round(float(f.distance_to(0, np.array([1]))[0]), 4)
    0.476
    """

    time: npt.ArrayLike
    dst: npt.ArrayLike | None = None
    time_weight: float = 1.0
    port_weight: float = 0.0
    _t: FloatArray = field(init=False, repr=False)
    _d: IntArray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        t = np.array(self.time, dtype=float).ravel()  # a copy: observe() writes to it
        if not np.isfinite(t).all():
            raise ValueError("FlowFeatures.time: start times must be finite")
        d = np.zeros(len(t), np.int64) if self.dst is None else np.asarray(self.dst, np.int64)
        if d.shape != t.shape:
            raise ValueError(f"FlowFeatures.dst: has {len(d)} entries, time has {len(t)}")
        for name in ("time_weight", "port_weight"):
            w = getattr(self, name)
            if not (np.isfinite(w) and w >= 0):
                raise ValueError(f"FlowFeatures.{name}: must be finite and >= 0, got {w!r}")
        object.__setattr__(self, "_t", t)
        object.__setattr__(self, "_d", d)

    def __len__(self) -> int:
        return len(self._t)

    def observe(self, flows: IntArray, time: float | FloatArray) -> None:
        """Records the start time of ``flows`` as observed (online use: a flow's start time
        is known once it has started)."""
        if not np.isfinite(time).all():
            raise ValueError("FlowFeatures.observe: start times must be finite")
        self._t[flows] = time

    def distance_to(self, f: int, others: IntArray) -> FloatArray:
        """Distances from flow ``f`` to each flow of ``others``."""
        return self.distances(np.array([f]), others)[0]

    def distances(self, a: IntArray, b: IntArray) -> FloatArray:
        """``(len(a), len(b))`` matrix of distances between flows ``a`` and ``b``."""
        dt = self._t[a][:, None] - self._t[b][None, :]
        sq = self.time_weight * dt * dt
        if self.port_weight:
            sq = sq + self.port_weight * (self._d[a][:, None] != self._d[b][None, :])
        return np.sqrt(sq)

    def key(self, flows: IntArray) -> npt.NDArray[np.float64]:
        """Rows that are equal exactly when two flows are at distance 0 for every weight."""
        return np.stack([self._t[flows], self._d[flows].astype(float)], axis=1)


def _components(feats: FlowFeatures, points: IntArray, eps: float) -> IntArray:
    """Connected components of the ``eps``-graph on ``points`` (DBSCAN with ``minPts = 1``);
    each point's component is named by its smallest member of ``points``."""
    k = len(points)
    if k == 0:
        return np.zeros(0, dtype=np.int64)
    adj = feats.distances(points, points) <= eps
    _, comp = connected_components(csr_matrix(adj), directed=False)
    first = np.full(comp.max() + 1, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(first, comp, points)
    return first[comp]


def dbscan(features: FlowFeatures, eps: float) -> IntArray:
    """Exact DBSCAN with ``minPts = 1``: the connected components of the graph joining flows at
    distance ``<= eps``. Returns each flow's cluster, named by its smallest flow index.

    Examples
    --------
    >>> dbscan(FlowFeatures(time=[0, 55, 150]), eps=100).tolist()
    [0, 0, 0]
    """
    return _components(features, np.arange(len(features), dtype=np.int64), float(eps))


class RoughDBSCAN:
    """Incremental Rough-DBSCAN, CODA's Algorithm 1 (§3.3).

    A new flow follows the first leader (in creation order) at distance ``< tau``, or becomes a
    leader itself; a departed flow leaves its leader's followers, and a leader is deleted only
    when it has no follower but itself (a departed leader with followers stays, as a "ghost"
    representative). Clusters are the connected components of the leaders' ``eps``-graph
    (DBSCAN, ``minPts = 1``), expanded into their followers.

    Parameters
    ----------
    features
        The attributes of every flow that may arrive.
    eps
        DBSCAN radius ``ε`` (neighbours at distance ``<= eps``).
    tau
        Leader radius ``τ`` (a follower is at distance ``< tau`` from its leader).

    Attributes
    ----------
    leader_of
        Each flow's leader (``-1`` before it arrives or after it departs).

    Examples
    --------
    Our C-2 case: with ``tau = 30`` the leaders are flows 0 (followed by 1), 2, 3, 4 and 5,
    and the clusters equal DBSCAN's; a departed leader with a follower stays:

    >>> rd = RoughDBSCAN(FlowFeatures(time=[0, 20, 50, 400, 430, 560]), eps=100, tau=30)
    >>> rd.add(np.arange(6))
    >>> rd.leaders.tolist(), rd.labels(np.arange(6)).tolist()
    ([0, 2, 3, 4, 5], [0, 0, 0, 3, 3, 5])
    >>> rd.remove(np.array([0]))
    >>> rd.leaders.tolist()
    [0, 2, 3, 4, 5]
    """

    def __init__(self, features: FlowFeatures, *, eps: float, tau: float) -> None:
        if not (np.isfinite(eps) and eps >= 0):
            raise ValueError(f"RoughDBSCAN: eps must be finite and >= 0, got {eps!r}")
        if not (np.isfinite(tau) and tau >= 0):
            raise ValueError(f"RoughDBSCAN: tau must be finite and >= 0, got {tau!r}")
        self.features = features
        self.eps = float(eps)
        self.tau = float(tau)
        n = len(features)
        self.leader_of = np.full(n, -1, dtype=np.int64)
        self._followers = np.zeros(n, dtype=np.int64)  # per leader: live followers, itself too
        self._is_leader = np.zeros(n, dtype=bool)
        self._leaders: list[int] = []  # in creation order (dead ones removed lazily)
        self._label = np.full(n, -1, dtype=np.int64)  # per leader: its cluster's name
        self._fresh = n  # next name for a cluster split off (never a flow index)
        self._dirty = True

    @property
    def leaders(self) -> IntArray:
        """The current leaders, in creation order."""
        return np.array([f for f in self._leaders if self._is_leader[f]], dtype=np.int64)

    def add(self, flows: IntArray) -> None:
        """Assigns newly arrived ``flows`` (processed in the given order) to leaders."""
        flows = np.asarray(flows, dtype=np.int64)
        if not len(flows):
            return
        feats = self.features
        # flows with identical attributes go together: the first decides, the rest follow
        # whoever it followed (or it, if it became a leader; distance 0 < tau unless tau = 0)
        _, first, inverse = np.unique(
            feats.key(flows), axis=0, return_index=True, return_inverse=True
        )
        inverse = inverse.ravel()
        chosen = np.empty(len(first), dtype=np.int64)
        for u in np.argsort(first, kind="stable"):
            f = int(flows[first[u]])
            live = self.leaders
            hit = np.zeros(0, dtype=np.int64)
            if len(live):
                hit = np.flatnonzero(feats.distance_to(f, live) < self.tau)
            if len(hit):
                chosen[u] = live[hit[0]]
            else:
                self._is_leader[f] = True
                self._leaders.append(f)
                self._dirty = True
                chosen[u] = f
        lead = chosen[inverse]
        if self.tau == 0:  # identical flows are not within a zero radius: each leads itself
            lead = flows.copy()
            newly = ~self._is_leader[flows]
            self._is_leader[flows[newly]] = True
            self._leaders.extend(int(f) for f in flows[newly])
            self._dirty = self._dirty or bool(newly.any())
        self.leader_of[flows] = lead
        np.add.at(self._followers, lead, 1)

    def remove(self, flows: IntArray) -> None:
        """Removes departed ``flows``; a leader goes only once it has no other follower."""
        flows = np.asarray(flows, dtype=np.int64)
        flows = flows[self.leader_of[flows] >= 0]
        if not len(flows):
            return
        lead = self.leader_of[flows]
        np.subtract.at(self._followers, lead, 1)
        self.leader_of[flows] = -1
        gone = np.unique(lead[self._followers[lead] == 0])
        if len(gone):
            self._is_leader[gone] = False
            self._leaders = [f for f in self._leaders if self._is_leader[f]]
            self._dirty = True

    def _refresh(self) -> None:
        """Re-clusters the leaders, keeping cluster names stable: a cluster keeps the smallest
        name its leaders had (on a split, the part with the smallest leader keeps it and the
        others get new names); a cluster of new leaders is named by its smallest leader."""
        if not self._dirty:
            return
        live = self.leaders
        comp = _components(self.features, live, self.eps)
        prev = self._label[live]
        taken: set[int] = set()
        for c in np.unique(comp):  # increasing smallest leader
            mine = comp == c
            old = prev[mine]
            old = old[old >= 0]
            name = int(old.min()) if len(old) else int(c)
            if name in taken:
                name = self._fresh
                self._fresh += 1
            taken.add(name)
            self._label[live[mine]] = name
        self._dirty = False

    def labels(self, flows: IntArray) -> IntArray:
        """The cluster of each of ``flows`` (present ones); names are stable over time (see
        :meth:`_refresh`): a new cluster is named by its smallest leader."""
        self._refresh()
        return self._label[self.leader_of[np.asarray(flows, dtype=np.int64)]]

    def leader_labels(self) -> tuple[IntArray, IntArray]:
        """The current leaders (departed ones with followers included) and their clusters."""
        self._refresh()
        live = self.leaders
        return live, self._label[live]


def identify(
    instance: Instance,
    *,
    eps: float,
    tau: float,
    time_weight: float = 1.0,
    port_weight: float = 0.0,
) -> IntArray:
    """Offline identification of ``instance``'s flows with :class:`RoughDBSCAN`: every flow in
    order of start time (then index), no departures. Returns each flow's cluster.

    Examples
    --------
    >>> from coflowlab import Coflow, Instance
    >>> inst = Instance.from_coflows(
    ...     [Coflow([(0, 0, 1.0), (1, 1, 1.0)]), Coflow([(0, 1, 1.0)], release=500.0)], 2)
    >>> identify(inst, eps=100, tau=25).tolist()
    [0, 0, 2]
    """
    feats = FlowFeatures(
        time=instance.flow_release,
        dst=instance.flow_dst,
        time_weight=time_weight,
        port_weight=port_weight,
    )
    rd = RoughDBSCAN(feats, eps=eps, tau=tau)
    order = np.lexsort((np.arange(instance.num_flows), instance.flow_release))
    rd.add(order)
    return rd.labels(np.arange(instance.num_flows))


class Accuracy(NamedTuple):
    """Identification quality (CODA §6.1): mean precision and recall over the true coflows."""

    precision: float
    recall: float

    @property
    def accuracy(self) -> float:
        """CODA's accuracy, the mean of precision and recall."""
        return (self.precision + self.recall) / 2


def identification_accuracy(truth: Instance | npt.ArrayLike, groups: npt.ArrayLike) -> Accuracy:
    """Precision and recall of an identification, averaged over the true coflows (CODA §6.1).

    Each true coflow ``X`` is matched to the cluster ``K`` that holds most of its flows (ties:
    the smallest cluster name); ``precision(X) = |X ∩ K| / |K|`` and
    ``recall(X) = |X ∩ K| / |X|``. Both are averaged over coflows with equal weight. The
    matching and the averaging are our choices (the paper states neither;
    docs/philae-coda.md#coda-accuracy).

    Parameters
    ----------
    truth
        The instance (its ``flow_coflow``) or each flow's true coflow.
    groups
        Each flow's identified cluster (any integers).

    Examples
    --------
    Truth {0, 1, 2}, {3, 4, 5}; clusters {0, 1, 2, 3}, {4, 5}:

    >>> acc = identification_accuracy([0, 0, 0, 1, 1, 1], [7, 7, 7, 7, 9, 9])
    >>> round(acc.precision, 4), round(acc.recall, 4), round(acc.accuracy, 4)
    (0.875, 0.8333, 0.8542)
    """
    true = np.asarray(truth.flow_coflow if isinstance(truth, Instance) else truth, np.int64)
    grp = np.asarray(groups, dtype=np.int64)
    if grp.shape != true.shape:
        raise ValueError(f"groups: has {grp.size} entries for {true.size} flows")
    if not len(true):
        raise ValueError("groups: no flows to evaluate")
    _, t = np.unique(true, return_inverse=True)
    _, g = np.unique(grp, return_inverse=True)
    t, g = t.ravel(), g.ravel()
    counts = np.zeros((t.max() + 1, g.max() + 1), dtype=np.int64)
    np.add.at(counts, (t, g), 1)
    best = counts.argmax(axis=1)  # first maximum: the smallest cluster name
    hit = counts[np.arange(len(best)), best]
    precision = hit / counts.sum(axis=0)[best]
    recall = hit / counts.sum(axis=1)
    return Accuracy(float(precision.mean()), float(recall.mean()))
