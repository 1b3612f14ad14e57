"""Rate-allocation primitives shared by every online heuristic and by Sincronia.

All functions work on *compact* arrays describing a set of flows (for example the active flows
of a simulation): ``src[i]`` and ``dst[i]`` are flow ``i``'s ingress and egress ports, and the
residual capacities ``cap_in`` / ``cap_out`` are per port. They return one rate per flow and
never exceed a residual capacity (up to floating-point rounding).

- :func:`max_min_fair`: per-flow (weighted) max-min fairness by progressive filling; what
  TCP approximates (Chowdhury's thesis §3.2.1, §5.3, "per-flow fairness").
  :func:`max_min_fair_levels` is its form on (ingress, egress) pairs, as port fill levels.
- :func:`priority_greedy`: strict priority; in the given order each flow takes
  ``min(residual ingress, residual egress)`` (docs/theory.md#f5; Sincronia's GREEDY).
- :func:`madd`: MADD, Minimum Allocation for Desired Duration (thesis Ch. 4 §4.5.3, Eq. 4.1,
  Pseudocode 1 lines 1–12): coflows in order, each flow at ``remaining / Γ`` where Γ is the
  coflow's effective bottleneck against the capacities left by the coflows before it.
- :func:`share_equally`: the equal per-port split that CoflowSim and Sincronia's simulator give
  the coflows MADD skipped (docs/fidelity.md#skipped).
- :func:`madd_share`: MADD, then that split for the skipped coflows (the two simulators' rule
  before their backfill).
- :func:`backfill`: work conservation; tops up existing rates greedily in a given order.

The sequential loops are compiled with numba (imported on first use, so ``import coflowlab``
stays fast); each kernel is O(flows + ports²) at most.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = [
    "backfill",
    "effective_bottleneck",
    "full_port_threshold",
    "madd",
    "madd_share",
    "max_min_fair",
    "max_min_fair_levels",
    "priority_greedy",
    "share_equally",
]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


@cache
def _kernels() -> dict[str, Any]:
    """Compiles the numba kernels on first use (cached on disk between runs)."""
    from . import _allocation_jit as k

    return {
        "greedy": k.greedy,
        "maxmin": k.maxmin,
        "maxmin_pairs": k.maxmin_pairs,
        "madd": k.madd_kernel,
        "share": k.share_kernel,
    }


_NONE_INDEX = np.zeros(0, dtype=np.int64)
_NONE_FLOAT = np.zeros(0)
# max_min_fair fills port pairs rather than flows when there are at least 1/4 as many flows
# as pairs (a dense matrix then costs no more than the flow list).
_PAIRS_PER_FLOW = 4


def _ports(src: npt.ArrayLike, dst: npt.ArrayLike) -> tuple[IntArray, IntArray]:
    return np.ascontiguousarray(src, dtype=np.int64), np.ascontiguousarray(dst, dtype=np.int64)


def _caps(cap: npt.ArrayLike, m: int | None = None) -> FloatArray:
    arr = np.array(cap, dtype=np.float64)  # a copy: kernels consume it
    return arr if m is None or arr.shape == (m,) else np.broadcast_to(arr, (m,)).copy()


def max_min_fair(
    src: npt.ArrayLike,
    dst: npt.ArrayLike,
    cap_in: npt.ArrayLike,
    cap_out: npt.ArrayLike,
    *,
    weight: npt.ArrayLike | None = None,
    demand: npt.ArrayLike | None = None,
) -> FloatArray:
    """Per-flow weighted max-min fair rates, by progressive filling.

    Every flow's rate rises in proportion to its weight until one of its two ports is full
    (or it reaches its demand); then it is frozen and the others keep rising.

    Parameters
    ----------
    src, dst
        Ingress and egress port of each flow.
    cap_in, cap_out
        Residual capacity of each ingress and egress port.
    weight
        Positive weight of each flow (default 1: plain max-min).
    demand
        Largest rate each flow can use (default unlimited).

    Returns
    -------
    numpy.ndarray
        The rate of each flow.

    Examples
    --------
    Thesis Fig. 3.2 at t = 0: every flow gets 1/3 (the egress ports carry three flows each).

    >>> max_min_fair([0, 0, 1, 1, 2, 2], [0, 1, 0, 1, 0, 1], [1, 1, 1], [1, 1, 1]).round(4)
    array([0.3333, 0.3333, 0.3333, 0.3333, 0.3333, 0.3333])

    A flow limited elsewhere leaves the rest to its neighbours:

    >>> max_min_fair([0, 1], [0, 0], [1, 0.25], [1]).tolist()
    [0.75, 0.25]
    """
    s, d = _ports(src, dst)
    n = len(s)
    if n == 0:
        return np.zeros(0)
    w = np.ones(n) if weight is None else np.ascontiguousarray(weight, dtype=np.float64)
    if weight is not None and (w <= 0).any():
        raise ValueError("max_min_fair: weights must be positive")
    cin, cout = _caps(cap_in), _caps(cap_out)
    mi, mo = len(cin), len(cout)
    if demand is None and mi * mo <= _PAIRS_PER_FLOW * n:
        # Flows with the same two ports rise together, so fill (ingress, egress) pairs
        # weighted by their flows' total weight: O(m² + n) whatever the number of flows.
        pair_weight = np.bincount(s * mo + d, weights=w, minlength=mi * mo)
        level_in, level_out = max_min_fair_levels(pair_weight.reshape(mi, mo), cin, cout)
        level = np.minimum(level_in[s], level_out[d])
        return np.where(np.isfinite(level), w * level, 0.0)
    if demand is None:  # the kernel reads demands only via by_demand
        dem, by_demand = _NONE_FLOAT, _NONE_INDEX
    else:
        dem = np.ascontiguousarray(demand, np.float64)
        finite = np.flatnonzero(np.isfinite(dem))
        by_demand = finite[np.argsort(dem[finite] / w[finite], kind="stable")]
    return _kernels()["maxmin"](s, d, cin, cout, w, dem, by_demand)


def max_min_fair_levels(
    weight: npt.ArrayLike, cap_in: npt.ArrayLike, cap_out: npt.ArrayLike
) -> tuple[FloatArray, FloatArray]:
    """Weighted max-min fairness between (ingress, egress) port pairs, as port fill levels.

    Progressive filling (Bertsekas & Gallager, *Data Networks*, 2nd ed., ch. 6) where
    ``weight[i, j]`` is the total weight of the flows from ingress ``i`` to egress ``j``:
    every pair's rate per unit of weight (its *level*) rises at the same pace until one of
    its ports is full. The port with the lowest level is the next to fill, and it freezes
    all its open pairs at that level. Each round thus freezes one row or column of the
    matrix, so the work is O(m² + rounds · m) for ``m`` ports, independent of the number of
    flows behind the weights.

    Parameters
    ----------
    weight
        ``(m_in, m_out)`` non-negative weights; 0 means no flow between the two ports.
    cap_in, cap_out
        Residual capacity of each ingress and egress port.

    Returns
    -------
    level_in, level_out
        The level at which each port froze (``inf`` if it never limited a pair). A pair of
        positive weight gets ``min(level_in[i], level_out[j])`` per unit of weight (rate
        ``weight[i, j]`` times that), since its first port to fill froze it; levels only
        rise from round to round.

    Examples
    --------
    Thesis Fig. 3.2 at t = 0: three senders, two receivers, one flow per pair. The
    receivers fill first, at 1/3 per flow; the senders never limit anything.

    >>> level_in, level_out = max_min_fair_levels(np.ones((3, 2)), [1, 1, 1], [1, 1])
    >>> level_in.tolist(), level_out.round(4).tolist()
    ([inf, inf, inf], [0.3333, 0.3333])
    """
    w = np.ascontiguousarray(weight, dtype=np.float64)
    if w.ndim != 2:
        raise ValueError("max_min_fair_levels: weight must be a matrix")
    mi, mo = w.shape
    cin, cout = _caps(cap_in, mi), _caps(cap_out, mo)
    frozen_at = _kernels()["maxmin_pairs"](w, cin, cout)
    return frozen_at[:mi], frozen_at[mi:]


def priority_greedy(
    order: npt.ArrayLike,
    src: npt.ArrayLike,
    dst: npt.ArrayLike,
    cap_in: npt.ArrayLike,
    cap_out: npt.ArrayLike,
    *,
    demand: npt.ArrayLike | None = None,
) -> FloatArray:
    """Strict-priority greedy rates: in ``order``, each flow takes the smaller of its two
    residual capacities (and at most its demand).

    This is the allocation of docs/theory.md#f5 and Sincronia's GREEDY; it is work
    conserving: afterwards no flow has spare capacity at both of its ports.

    Examples
    --------
    >>> priority_greedy([1, 0], [0, 0], [0, 1], [1.0], [1.0, 1.0]).tolist()
    [0.0, 1.0]
    """
    s, d = _ports(src, dst)
    rates = np.zeros(len(s))
    return backfill(rates, order, s, d, cap_in, cap_out, demand=demand)


def backfill(
    rates: npt.ArrayLike,
    order: npt.ArrayLike,
    src: npt.ArrayLike,
    dst: npt.ArrayLike,
    cap_in: npt.ArrayLike,
    cap_out: npt.ArrayLike,
    *,
    demand: npt.ArrayLike | None = None,
) -> FloatArray:
    """Work-conserving backfill: tops up ``rates`` greedily in ``order`` with what is left.

    ``cap_in`` / ``cap_out`` are the *full* capacities; the capacity already used by ``rates``
    is subtracted first. Flows not in ``order`` keep their rates. ``demand`` caps the extra.

    Examples
    --------
    >>> backfill([0.5, 0.0], [0, 1], [0, 1], [0, 0], [1.0, 1.0], [1.0]).tolist()
    [1.0, 0.0]
    """
    s, d = _ports(src, dst)
    r = np.array(rates, dtype=np.float64)
    res_in, res_out = _residual(r, s, d, cap_in, cap_out)
    o = np.ascontiguousarray(order, dtype=np.int64)
    dem = np.full(len(s), np.inf) if demand is None else np.ascontiguousarray(demand, np.float64)
    return _kernels()["greedy"](o, s, d, res_in, res_out, r, dem)


def madd(
    coflow_ptr: npt.ArrayLike,
    flows: npt.ArrayLike,
    remaining: npt.ArrayLike,
    src: npt.ArrayLike,
    dst: npt.ArrayLike,
    cap_in: npt.ArrayLike,
    cap_out: npt.ArrayLike,
    *,
    duration: npt.ArrayLike | None = None,
    full_below: float = 0.0,
) -> tuple[FloatArray, FloatArray]:
    """MADD rates for coflows served in order (Varys' iterative MADD, Pseudocode 1).

    Parameters
    ----------
    coflow_ptr, flows
        The coflows in priority order: ``flows[coflow_ptr[c]:coflow_ptr[c + 1]]`` are the
        (compact) indices of the ``c``-th coflow's flows.
    remaining
        Remaining size of each flow.
    src, dst, cap_in, cap_out
        Ports of each flow and the capacities available to these coflows.
    duration
        Optional desired duration per coflow (deadline mode: the time left to the deadline).
        A coflow whose Γ exceeds its duration gets nothing. Default: Γ (minimize CCT).
    full_below
        A port with at most this much free capacity counts as full (default 0: only a port
        with nothing left). A small positive value (a rounding tolerance) keeps a coflow from
        being "served" at a near-zero pace through a port that rounding left a hair open.

    Returns
    -------
    rates, gamma
        The rate of each flow, and each coflow's Γ against the capacity left by the coflows
        before it (``inf`` when a port it needs is exhausted; such a coflow gets rate 0).

    Examples
    --------
    Thesis Fig. 3.2: Γ = 4, so the flows of size 1 get 1/4 and those of size 2 get 1/2.

    >>> rates, gamma = madd([0, 6], range(6), [1, 1, 1, 1, 2, 2], [0, 0, 1, 1, 2, 2],
    ...                     [0, 1, 0, 1, 0, 1], [1, 1, 1], [1, 1, 1])
    >>> gamma.tolist(), rates.tolist()
    ([4.0], [0.25, 0.25, 0.25, 0.25, 0.5, 0.5])
    """
    ptr = np.ascontiguousarray(coflow_ptr, dtype=np.int64)
    f = np.ascontiguousarray(flows, dtype=np.int64)
    s, d = _ports(src, dst)
    rem = np.ascontiguousarray(remaining, dtype=np.float64)
    nc = len(ptr) - 1
    tau = np.zeros(nc) if duration is None else np.ascontiguousarray(duration, np.float64)
    rates = np.zeros(len(s))
    gammas = np.zeros(nc)
    _kernels()["madd"](
        ptr, f, rem, s, d, _caps(cap_in), _caps(cap_out), rates, gammas, tau, float(full_below)
    )
    return rates, gammas


def _residual(
    r: FloatArray, s: IntArray, d: IntArray, cap_in: npt.ArrayLike, cap_out: npt.ArrayLike
) -> tuple[FloatArray, FloatArray]:
    m_in, m_out = len(np.atleast_1d(cap_in)), len(np.atleast_1d(cap_out))
    res_in = _caps(cap_in) - np.bincount(s, weights=r, minlength=m_in)[:m_in]
    res_out = _caps(cap_out) - np.bincount(d, weights=r, minlength=m_out)[:m_out]
    return np.maximum(res_in, 0.0), np.maximum(res_out, 0.0)


def share_equally(
    rates: npt.ArrayLike,
    flows: npt.ArrayLike,
    src: npt.ArrayLike,
    dst: npt.ArrayLike,
    cap_in: npt.ArrayLike,
    cap_out: npt.ArrayLike,
    *,
    least: float = 0.0,
) -> FloatArray:
    """Equal per-port split of the capacity ``rates`` leave, among the listed ``flows``.

    Each listed flow gets ``min(F_in / n_in, F_out / n_out)`` on top of its rate, where ``F`` is
    the free capacity of its port (``cap`` minus what ``rates`` use) and ``n`` the number of
    listed flows at that port. It is what CoflowSim and Sincronia's offline simulator give the
    coflows MADD skipped, before their greedy backfill (docs/fidelity.md#skipped). It is not
    max-min fair: capacity a flow cannot use at its other port is not handed out again. A share
    of at most ``least`` is not given (default 0; a rounding tolerance keeps crumbs of capacity
    from setting flows crawling).

    Examples
    --------
    Two flows share ingress 0 (free 1) and go to egresses with 1 and 0.2 free: 0.5 and 0.2.

    >>> share_equally([0, 0], [0, 1], [0, 0], [0, 1], [1.0], [1.0, 0.2]).tolist()
    [0.5, 0.2]
    """
    s, d = _ports(src, dst)
    r = np.array(rates, dtype=np.float64)
    res_in, res_out = _residual(r, s, d, cap_in, cap_out)
    f = np.ascontiguousarray(flows, dtype=np.int64)
    return _kernels()["share"](f, s, d, res_in, res_out, r, float(least))


def full_port_threshold(cap_in: npt.ArrayLike, cap_out: npt.ArrayLike) -> float:
    """Free capacity at or below which a port counts as full for MADD's skipped coflows:
    ``TOL`` times the smallest port capacity, so that rounding crumbs neither block a coflow
    nor set flows crawling (docs/fidelity.md#skipped).

    Examples
    --------
    >>> full_port_threshold([1.0, 2.0], [0.5, 1.0])
    5e-10
    """
    from .constants import TOL

    return TOL * float(min(np.min(cap_in), np.min(cap_out)))


def madd_share(
    coflow_ptr: npt.ArrayLike,
    flows: npt.ArrayLike,
    remaining: npt.ArrayLike,
    src: npt.ArrayLike,
    dst: npt.ArrayLike,
    cap_in: npt.ArrayLike,
    cap_out: npt.ArrayLike,
    *,
    full_below: float = 0.0,
) -> tuple[FloatArray, FloatArray]:
    """MADD in order (:func:`madd`), then :func:`share_equally` among the flows of the coflows
    it skipped (Γ = ∞: a port they need is full), as CoflowSim and Sincronia's offline simulator
    do before their backfill (docs/fidelity.md#skipped).

    Parameters and results are those of :func:`madd` (without ``duration``); ``full_below``
    also bounds the shares that are not given (``least`` of :func:`share_equally`). The skipped
    coflows keep ``gamma = inf``.

    Examples
    --------
    Coflow 0 fills ingress 0; coflow 1 (two flows into egress 1, from ingress 0 and 1) is
    skipped by MADD. The split gives each of its flows half of egress 1, capped by its free
    ingress: 0 and 0.5 (a backfill would hand out the other half).

    >>> rates, gamma = madd_share([0, 1, 3], [0, 1, 2], [1, 1, 1], [0, 0, 1], [0, 1, 1],
    ...                           [1.0, 1.0], [1.0, 1.0])
    >>> rates.tolist(), gamma.tolist()
    ([1.0, 0.0, 0.5], [1.0, inf])
    """
    ptr = np.ascontiguousarray(coflow_ptr, dtype=np.int64)
    f = np.ascontiguousarray(flows, dtype=np.int64)
    rates, gamma = madd(ptr, f, remaining, src, dst, cap_in, cap_out, full_below=full_below)
    skipped = np.flatnonzero(np.isinf(gamma))
    if len(skipped):
        counts = ptr[skipped + 1] - ptr[skipped]
        start = np.repeat(ptr[skipped] - np.cumsum(np.r_[0, counts[:-1]]), counts)
        members = f[np.arange(counts.sum(), dtype=np.int64) + start]
        rates = share_equally(rates, members, src, dst, cap_in, cap_out, least=full_below)
    return rates, gamma


def effective_bottleneck(
    remaining: npt.ArrayLike,
    src: npt.ArrayLike,
    dst: npt.ArrayLike,
    cap_in: npt.ArrayLike,
    cap_out: npt.ArrayLike,
) -> float:
    """Γ of one coflow (thesis Eq. 4.1): the largest remaining load over residual capacity
    of the ports it uses; ``inf`` if one of them has no capacity left.

    Examples
    --------
    >>> effective_bottleneck([1, 1, 1, 1, 2, 2], [0, 0, 1, 1, 2, 2], [0, 1, 0, 1, 0, 1],
    ...                      [1, 1, 1], [1, 1, 1])
    4.0
    """
    s, d = _ports(src, dst)
    rem = np.asarray(remaining, dtype=float)
    cin, cout = _caps(cap_in), _caps(cap_out)
    load_in = np.bincount(s, weights=rem, minlength=len(cin))
    load_out = np.bincount(d, weights=rem, minlength=len(cout))
    with np.errstate(divide="ignore", invalid="ignore"):
        g_in = np.where(load_in > 0, load_in / cin, 0.0)
        g_out = np.where(load_out > 0, load_out / cout, 0.0)
    return float(max(g_in.max(initial=0.0), g_out.max(initial=0.0)))
