"""Correlation vectors, the optimal isolation guarantee and the fair-sharing allocation steps
shared by HUG, DRF, PS-P and Coflex (:mod:`.hug`, :mod:`.fair_share`, :mod:`.coflex`).

The model is HUG's (Chowdhury's PhD thesis, UC Berkeley 2015, §7.2, Table 7.1) and Coflex's
(Wang, Ma, Li, Li, IEEE INFOCOM 2017, §II-B), read on the big switch: the ``2m`` links are the
``m`` ingress ports (links ``0..m-1``) and the ``m`` egress ports (links ``m..2m-1``). For the
*remaining* bytes of an active coflow ``k``:

- ``load[k, i]``: bytes it still has to move through link ``i``;
- ``Γ_k = max_i load[k, i] / C^i`` (Coflex eq. 1), its completion time alone;
- ``d_k^i = load[k, i] / (C^i Γ_k)``: its correlation vector, largest entry 1;
- progress ``P_k = min_{i: d_k^i > 0} a_k^i / d_k^i`` with ``a_k^i`` the fraction of link
  ``i`` it receives (thesis Eq. 7.1, Coflex eq. 2);
- ``P* = 1 / max_i Σ_k d_k^i`` (thesis Eq. 7.2, Coflex eq. 4), the optimal isolation
  guarantee.

An allocation is turned into flow rates along the coflow's demand: a coflow at progress ``p``
gives each of its flows ``p · remaining / Γ_k`` (MADD's rates scaled by ``p``), which puts
exactly ``p · d_k^i`` of every link ``i`` on the coflow. A coflow that *reports* another vector
``d'_k`` (the misreports of thesis §7.4 and Coflex §III) gets ``p · d'^i_k · C^i`` on each link
``i``, split among its flows there in proportion to their remaining bytes; a flow sends at the
smaller of its shares at its two ports (:func:`unit_rates`). docs/hug-coflex.md explains the
reading.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from coflowlab.policy import ClairvoyantState, InstanceView

__all__ = [
    "Active",
    "Grouping",
    "active_coflows",
    "check_reports",
    "drf_progress",
    "fill",
    "optimal_isolation",
    "unit_rates",
]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
Reports = Mapping[int, Sequence[float]]

EPS = 1e-12
"""Relative slack below which a residual capacity counts as exhausted."""


@dataclass(frozen=True)
class Active:
    """The active flows of one decision, grouped by coflow.

    Attributes
    ----------
    ids
        ``(nc,)`` the active coflows' indices, increasing.
    group
        ``(F,)`` position in ``ids`` of each active flow's coflow.
    src, dst, remaining
        ``(F,)`` ingress port, egress port and remaining bytes of each active flow.
    cap
        ``(2m,)`` link capacities (ingress ports, then egress ports).
    load
        ``(nc, 2m)`` remaining bytes of each coflow on each link.
    gamma
        ``(nc,)`` Γ_k of the remaining bytes against the full capacities.
    d
        ``(nc, 2m)`` correlation vectors (the reported ones where a coflow reports).
    """

    ids: IntArray
    group: IntArray
    src: IntArray
    dst: IntArray
    remaining: FloatArray
    cap: FloatArray
    load: FloatArray
    gamma: FloatArray
    d: FloatArray

    @property
    def m(self) -> int:
        """Number of ports per side."""
        return len(self.cap) // 2


def check_reports(reports: Reports | None, name: str = "reported") -> dict[int, FloatArray]:
    """Reported correlation vectors as arrays, normalised to a largest entry of 1.

    Raises
    ------
    ValueError
        Naming ``name`` when a vector has a negative or non-finite entry or is all zero.

    Examples
    --------
    >>> check_reports({1: [2.0, 1.0]})[1].tolist()
    [1.0, 0.5]
    """
    out: dict[int, FloatArray] = {}
    for k, vec in (reports or {}).items():
        v = np.asarray(vec, dtype=float)
        if v.ndim != 1 or not np.all(np.isfinite(v)) or np.any(v < 0) or not np.any(v > 0):
            raise ValueError(
                f"{name}[{k}]: a correlation vector needs finite entries >= 0, not all 0"
            )
        out[int(k)] = v / v.max()
    return out


def active_coflows(
    state: ClairvoyantState,
    cap_in: FloatArray,
    cap_out: FloatArray,
    reports: Mapping[int, FloatArray] | None = None,
    grouping: Grouping | None = None,
) -> Active:
    """Groups the active flows of ``state`` by coflow and computes loads, Γ and d.

    ``reports`` maps a coflow index to the ``2m``-vector it reports in place of its true
    correlation vector (see :func:`check_reports`). With ``grouping`` (built once per run in
    a policy's ``reset``) the grouping and the loads are one compiled pass over the active
    flows, with the same sums in the same order, and Γ and d are compiled too, with the same
    operations (the same ``Active`` bit for bit).
    """
    cap = np.concatenate([cap_in, cap_out]).astype(float)
    if grouping is not None:
        from ._hug_jit import correlate  # numba loads on first use only

        ids, group, src, dst, rem, load, _ = grouping.group(state)
        gamma, d = correlate(load, cap)
        _apply_reports(ids, load, d, reports)
        return Active(ids, group, src, dst, rem, cap, load, gamma, d)
    m = len(cap_in)
    coflow = np.asarray(state.coflow, dtype=np.int64)
    ids, group = np.unique(coflow, return_inverse=True)
    src = np.asarray(state.src, dtype=np.int64)
    dst = np.asarray(state.dst, dtype=np.int64)
    rem = np.maximum(np.asarray(state.remaining, dtype=float), 0.0)
    nc = len(ids)
    cells = nc * 2 * m
    load = np.asarray(  # float already: asarray only tells the type checker
        np.bincount(group * (2 * m) + src, rem, cells)
        + np.bincount(group * (2 * m) + m + dst, rem, cells),
        dtype=np.float64,
    ).reshape(nc, 2 * m)
    return _correlate(ids, group.astype(np.int64), src, dst, rem, cap, load, reports)


def _correlate(
    ids: IntArray,
    group: IntArray,
    src: IntArray,
    dst: IntArray,
    rem: FloatArray,
    cap: FloatArray,
    load: FloatArray,
    reports: Mapping[int, FloatArray] | None,
) -> Active:
    """Γ and d from the loads ``(nc, 2m)`` (the reference path of :func:`active_coflows`;
    :func:`._hug_jit.correlate` is the compiled one)."""
    nc = len(ids)
    with np.errstate(divide="ignore", invalid="ignore"):
        per_cap = np.where(cap > 0, load / cap, np.where(load > 0, np.inf, 0.0))
    gamma = per_cap.max(axis=1) if nc else np.zeros(0)
    with np.errstate(divide="ignore", invalid="ignore"):
        d = np.where(gamma[:, None] > 0, per_cap / gamma[:, None], 0.0)
    _apply_reports(ids, load, d, reports)
    return Active(ids, group, src, dst, rem, cap, load, gamma, d)


def _apply_reports(
    ids: IntArray, load: FloatArray, d: FloatArray, reports: Mapping[int, FloatArray] | None
) -> None:
    """Replaces in ``d`` the vector of every active coflow that reports one."""
    m = d.shape[1] // 2
    if reports:
        for pos, k in enumerate(ids.tolist()):
            if k in reports:
                vec = reports[k]
                if len(vec) != 2 * m:
                    raise ValueError(
                        f"reported[{k}]: needs {2 * m} entries (ingress then egress ports), "
                        f"not {len(vec)}"
                    )
                if np.any((vec <= 0) & (load[pos] > 0)):
                    raise ValueError(
                        f"reported[{k}]: must be positive on every link the coflow still uses"
                    )
                d[pos] = vec


class Grouping:
    """What the compiled :func:`active_coflows` keeps for a run: every flow's coflow, ports
    and size (from the policy's ``InstanceView``, which must be clairvoyant) and scratch
    arrays reused at every event (per coflow, per coflow and link, per port pair).
    ``counts``: also count the active flows of each coflow on each link (HUG's capped
    filling needs them).

    Raises
    ------
    ValueError
        When the view has no flow sizes (a non-clairvoyant view).

    Examples
    --------
    >>> from coflowlab.instances.examples import coflex_fig2
    >>> from coflowlab.simulator import instance_view
    >>> Grouping(instance_view(coflex_fig2(), clairvoyant=True)).coflow.tolist()
    [0, 0, 1, 1]
    """

    SCRATCH_ROWS = 256
    """Coflows active at once that the one-pass grouping handles (more: two passes)."""

    def __init__(self, view: InstanceView, counts: bool = True) -> None:
        if view.flow_size is None:
            raise ValueError("Grouping needs a clairvoyant view (flow sizes)")
        self.coflow = np.ascontiguousarray(view.flow_coflow, dtype=np.int64)
        self.src = np.ascontiguousarray(view.flow_src, dtype=np.int64)
        self.dst = np.ascontiguousarray(view.flow_dst, dtype=np.int64)
        self.size = np.ascontiguousarray(view.flow_size, dtype=np.float64)
        self.m = m = int(view.num_ports)
        num_coflows = int(view.num_coflows)
        self.pos = np.full(num_coflows, -1, dtype=np.int64)
        rows = min(num_coflows, self.SCRATCH_ROWS)
        self.load_rows = np.zeros((rows, 2 * m))
        self.count_rows = np.zeros((rows, 2 * m), dtype=np.int64)
        self.pair = np.full(m * m, -1, dtype=np.int64)  # scratch of hug_rates
        self.counts = bool(counts)
        self.count: IntArray = np.zeros((0, 2 * m), dtype=np.int64)

    def group(
        self, state: ClairvoyantState
    ) -> tuple[IntArray, IntArray, IntArray, IntArray, FloatArray, FloatArray, IntArray]:
        """``ids, group, src, dst, remaining (>= 0), load (nc, 2m), count (nc, 2m)`` of the
        active flows; the counts (active flows per coflow and link; all 0 unless built with
        ``counts=True``) are also kept in ``self.count``. The remaining bytes are the
        run's sizes minus ``state.sent``, the operation of ``state.remaining`` (the same
        bytes, without its gathers)."""
        from ._hug_jit import group_loads  # numba loads on first use only

        out = group_loads(
            np.ascontiguousarray(state.flows, dtype=np.int64),
            np.ascontiguousarray(state.sent, dtype=np.float64),
            self.size, self.coflow, self.src, self.dst, self.m, self.pos,
            self.load_rows, self.count_rows, self.counts,
        )  # fmt: skip
        self.count = out[6]
        return out


def optimal_isolation(d: FloatArray) -> float:
    """``P* = 1 / max_i Σ_k d_k^i`` (thesis Eq. 7.2; Coflex eq. 4); ``inf`` for no coflow.

    Examples
    --------
    The running example of thesis §7.3 / Coflex Fig. 2: link sums 3/2 and 7/6.

    >>> optimal_isolation(np.array([[0.5, 1.0], [1.0, 1 / 6]]))
    0.6666666666666666
    """
    if d.size == 0:
        return float("inf")
    worst = float(d.sum(axis=0).max())
    return 1.0 / worst if worst > 0 else float("inf")


def unit_rates(a: Active, fast: bool = False) -> FloatArray:
    """Each flow's rate per unit of its coflow's progress (progress 1 = ``d_k`` in full).

    A flow of coflow ``k`` from ``i`` to ``j`` gets ``min(d_k^i C^i r / load_k^i,
    d_k^{m+j} C^{m+j} r / load_k^{m+j})`` for its remaining ``r``; for a truthful coflow both
    are ``r / Γ_k`` (MADD's rate). ``fast``: one compiled pass, the same operations.
    """
    m = a.m
    if fast:
        from ._hug_jit import unit_rates as kernel

        return kernel(a.group, a.src, a.dst, a.remaining, a.load, a.d, a.cap, m)
    g, s, t = a.group, a.src, m + a.dst
    with np.errstate(divide="ignore", invalid="ignore"):
        share_in = np.where(
            a.load[g, s] > 0, a.d[g, s] * a.cap[s] * a.remaining / a.load[g, s], 0.0
        )
        share_out = np.where(
            a.load[g, t] > 0, a.d[g, t] * a.cap[t] * a.remaining / a.load[g, t], 0.0
        )
    return np.minimum(share_in, share_out)


def drf_progress(d: FloatArray) -> FloatArray:
    """Dominant Resource Fairness on the ``2m`` links (Ghodsi et al., NSDI 2011; thesis
    §7.3.2): progressive filling of every coflow's progress along its vector ``d_k`` (its
    dominant share, since ``max_i d_k^i = 1``); a coflow stops when a link it uses is full.
    The smallest progress is ``P*``.

    Examples
    --------
    Coflow 1 shares no link with the others and reaches 1; the two on link 0 get 1/2.

    >>> drf_progress(np.array([[1.0, 0, 0], [1.0, 0, 0], [0, 0, 1.0]])).tolist()
    [0.5, 0.5, 1.0]
    """
    nc = d.shape[0]
    p = np.zeros(nc)
    free = np.ones(nc, dtype=bool)
    residual = np.ones(d.shape[1])
    while free.any():
        demand = d[free].sum(axis=0)
        with np.errstate(divide="ignore", invalid="ignore"):
            steps = np.where(demand > 0, residual / demand, np.inf)
        step = float(steps.min())
        if not np.isfinite(step):  # no free coflow uses any link
            break
        p[free] += step
        residual = residual - step * demand
        full = residual <= EPS
        residual[full] = 0.0
        free &= ~(d[:, full] > 0).any(axis=1)
    return p


def fill(
    rates: FloatArray,
    a: Active,
    weight: FloatArray,
    cap_share: float | None = None,
) -> FloatArray:
    """Work conservation: weighted progressive filling of the capacity left by ``rates``.

    Every flow with ``weight > 0`` rises at ``weight`` per unit of a common level until one
    of its ports is full, or, with ``cap_share``, until its coflow holds ``cap_share · C^i``
    of one of its links (HUG's cap ``c_k^i ≤ P*``, thesis §7.5.1 Stage 2; the "local max-min
    fairness subject to coflow-specific upper bounds" of §7.5.2). Without a cap every flow ends
    with a full port (work conserving).

    Returns the new rates (``rates`` is not modified).
    """
    m2 = len(a.cap)
    s, t = a.src, a.m + a.dst
    uses = np.stack([s, t], axis=1)
    capacity = a.cap
    if cap_share is not None:  # one more resource per coflow and port: its capped share
        share = m2 + a.group * m2
        uses = np.stack([s, t, share + s, share + t], axis=1)
        capacity = np.concatenate([a.cap, np.tile(cap_share * a.cap, len(a.ids))])
    tol = EPS * max(float(a.cap.max(initial=0.0)), 1.0)
    from ._correlation_jit import fill_levels  # numba loads on first use only

    return fill_levels(
        np.asarray(rates, dtype=float),
        np.ascontiguousarray(uses, dtype=np.int64),
        np.asarray(weight, dtype=float),
        np.asarray(capacity, dtype=float),
        np.asarray(weight) > 0,
        tol,
    )
