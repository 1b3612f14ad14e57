"""Coflow orderings: FIFO, SCF, NCF, TCF, SEBF, Smith's rule and largest-weight-first.

An ordering maps coflows to a priority permutation (first = served first). The same functions
serve online heuristics (fed from a simulator state: the *active* flows, their remaining bytes
and the capacities) and offline algorithms (fed from an :class:`~coflowlab.Instance`, see
:func:`instance_order`), so every caller orders coflows the same way.

The heuristics are those of Chowdhury's thesis §5.5.3 (PhD thesis, UC Berkeley 2015;
docs/varys.md), plus Smith's rule and largest-weight-first:

==========================  ======================================================  ==========
function                    key (ascending unless stated)                           name
==========================  ======================================================  ==========
:func:`fifo`                arrival time ("processing coflows in their arrival      ``fifo``
                            order", §5.7.4)
:func:`scf`                 length: the largest flow (Shortest-Coflow-First)        ``scf``
:func:`ncf`                 width: the number of flows (Narrowest-Coflow-First)     ``ncf``
:func:`tcf`                 size: the total bytes (smallesT-Coflow-First)           ``tcf``
:func:`sebf`                effective bottleneck Γ (thesis Eq. 4.1) against the     ``sebf``
                            given capacities (Smallest-Effective-Bottleneck-First)
:func:`smith`               Γ / w (Smith's rule on the bottleneck)                  ``smith``
:func:`largest_weight_first`  weight, **descending**                                ``lwf``
==========================  ======================================================  ==========

Conventions
-----------
- **Ties break toward the lower coflow index**, always: every ordering is a stable sort of the
  coflow indices, so equal keys keep index order (the thesis breaks ties "arbitrarily", Appendix
  B.3; the worked examples of :mod:`coflowlab.instances.examples` assume ties go to the lower
  index). ``nan`` keys sort last.
- Flow-level inputs are plain NumPy arrays aligned per flow: ``size`` (or ``remaining``),
  ``src``, ``dst`` and ``coflow`` (the coflow index of each flow). Without ``num_coflows``
  the result orders the distinct coflows present in ``coflow`` (online: the active ones); with
  ``num_coflows`` it is a permutation of ``0..num_coflows-1`` and coflows without flows get key
  0 (weight-based keys excepted).
- Whether sizes are original or remaining bytes is the caller's choice: pass what the key
  should see (the thesis leaves it open for SEBF, docs/varys.md#sebf-key).

Examples
--------
Thesis Fig. 5.3 (reconstruction R-5.3; docs/test-cases.md#r-5-3): SEBF serves C2 first, the
others C1.

>>> from coflowlab.instances.examples import fig_5_3
>>> inst = fig_5_3()
>>> [instance_order(inst, name).tolist() for name in ("sebf", "scf", "ncf", "tcf")]
[[1, 0], [0, 1], [0, 1], [0, 1]]
"""

from __future__ import annotations

import heapq
import typing
from functools import cache
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from .instance import Instance

__all__ = [
    "ORDERINGS",
    "OrderingName",
    "bottleneck_key",
    "fifo",
    "instance_order",
    "largest_weight_first",
    "length_key",
    "ncf",
    "order_by",
    "scf",
    "sebf",
    "sebf_residual",
    "size_key",
    "smith",
    "smith_key",
    "tcf",
    "width_key",
]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

OrderingName = Literal["fifo", "scf", "ncf", "tcf", "sebf", "smith", "lwf"]
ORDERINGS: tuple[str, ...] = typing.get_args(OrderingName)
"""The one vocabulary of coflow orders: names accepted by :func:`instance_order`, by Varys'
``ordering`` and by the plain-ordering baselines."""

_EXHAUSTED = 1e-12
"""Residual capacity below this fraction of the port's is exhausted (:func:`sebf_residual`)."""

_DENSE_LIMIT = 1 << 22
"""Largest ``coflows × ports`` table :func:`bottleneck_key` builds densely (else it sorts)."""


# ---------------------------------------------------------------------------- sorting
def order_by(key: npt.ArrayLike, coflows: npt.ArrayLike | None = None) -> IntArray:
    """Sorts coflows by ascending ``key``; ties go to the lower coflow index, ``nan`` last.

    Parameters
    ----------
    key
        One key per coflow.
    coflows
        The coflow index of each key (default ``0..len(key)-1``).

    Returns
    -------
    numpy.ndarray
        The coflow indices, first-served first.

    Examples
    --------
    >>> order_by([3.0, 1.0, 3.0, 0.5]).tolist()
    [3, 1, 0, 2]
    >>> order_by([2.0, 1.0, 2.0], coflows=[7, 9, 4]).tolist()
    [9, 4, 7]
    """
    k = np.asarray(key, dtype=np.float64)
    if coflows is None:
        return np.argsort(k, kind="stable").astype(np.int64, copy=False)
    ids = np.asarray(coflows, dtype=np.int64)
    if ids.shape != k.shape:
        raise ValueError(f"coflows has shape {ids.shape}, key has shape {k.shape}")
    return ids[np.lexsort((ids, k))]


def _dense(coflow: npt.ArrayLike, num_coflows: int | None) -> tuple[IntArray, IntArray, int]:
    """Dense group index per flow, the coflow index of each group, and the group count."""
    c = np.asarray(coflow, dtype=np.int64)
    if num_coflows is not None:
        if c.size and (c.min() < 0 or c.max() >= num_coflows):
            raise ValueError(f"coflow indices must be in 0..{num_coflows - 1}")
        return c, np.arange(num_coflows, dtype=np.int64), int(num_coflows)
    ids, inverse = np.unique(c, return_inverse=True)
    return inverse.astype(np.int64, copy=False).reshape(-1), ids.astype(np.int64), len(ids)


# ---------------------------------------------------------------------------- keys
def length_key(size: npt.ArrayLike, coflow: npt.ArrayLike, num_coflows: int) -> FloatArray:
    """Varys' *length* of each coflow: its largest flow (0 for a coflow without flows).

    ``coflow`` holds dense indices ``0..num_coflows-1``.

    Examples
    --------
    >>> length_key([2.0, 5.0, 1.0], [0, 0, 1], 3).tolist()
    [5.0, 1.0, 0.0]
    """
    out = np.zeros(num_coflows)
    np.maximum.at(out, np.asarray(coflow, dtype=np.int64), np.asarray(size, dtype=np.float64))
    return out


def width_key(coflow: npt.ArrayLike, num_coflows: int) -> FloatArray:
    """Varys' *width* of each coflow: its number of flows.

    Examples
    --------
    >>> width_key([0, 0, 1], 3).tolist()
    [2.0, 1.0, 0.0]
    """
    c = np.asarray(coflow, dtype=np.int64)
    return np.bincount(c, minlength=num_coflows).astype(np.float64)


def size_key(size: npt.ArrayLike, coflow: npt.ArrayLike, num_coflows: int) -> FloatArray:
    """Varys' *size* of each coflow: its total bytes.

    Examples
    --------
    >>> size_key([2.0, 5.0, 1.0], [0, 0, 1], 2).tolist()
    [7.0, 1.0]
    """
    c = np.asarray(coflow, dtype=np.int64)
    w = np.asarray(size, dtype=np.float64)
    return np.bincount(c, weights=w, minlength=num_coflows).astype(np.float64, copy=False)


@cache
def _kernels() -> dict[str, Any]:
    """Compiles the key kernel with numba on first use (cached on disk)."""
    from numba import njit

    @njit(cache=True)
    def gamma(group, src, dst, load, num_groups, cap_in, cap_out):  # pragma: no cover
        # dense (group, port) load tables, then per group the largest load / capacity
        m_in = cap_in.shape[0]
        m_out = cap_out.shape[0]
        t_in = np.zeros(num_groups * m_in)
        t_out = np.zeros(num_groups * m_out)
        for i in range(group.shape[0]):
            t_in[group[i] * m_in + src[i]] += load[i]
            t_out[group[i] * m_out + dst[i]] += load[i]
        out = np.zeros(num_groups)
        for i in range(group.shape[0]):
            g = group[i]
            v = t_in[g * m_in + src[i]]
            if v > 0.0:
                c = cap_in[src[i]]
                r = v / c if c > 0.0 else np.inf
                if r > out[g]:
                    out[g] = r
            v = t_out[g * m_out + dst[i]]
            if v > 0.0:
                c = cap_out[dst[i]]
                r = v / c if c > 0.0 else np.inf
                if r > out[g]:
                    out[g] = r
        return out

    return {"gamma": gamma}


def _port_max_sparse(
    group: IntArray, port: IntArray, load: FloatArray, num_groups: int, cap: FloatArray
) -> FloatArray:
    """Per group: the largest load / capacity over the ports its flows use (``inf`` if a
    loaded port has no capacity; 0 for a group without load), without a dense table."""
    m = len(cap)
    out = np.zeros(num_groups)
    if not len(group):
        return out
    cell, inverse = np.unique(group * m + port, return_inverse=True)
    sums = np.bincount(inverse.reshape(-1), weights=load, minlength=len(cell))
    p = cell % m
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(sums > 0, sums / cap[p], 0.0)
    g = cell // m
    starts = np.flatnonzero(np.r_[True, g[1:] != g[:-1]])
    out[g[starts]] = np.maximum.reduceat(ratio, starts)
    return out


def bottleneck_key(
    remaining: npt.ArrayLike,
    src: npt.ArrayLike,
    dst: npt.ArrayLike,
    coflow: npt.ArrayLike,
    cap_in: npt.ArrayLike,
    cap_out: npt.ArrayLike,
    num_coflows: int,
) -> FloatArray:
    """Effective bottleneck Γ of each coflow (thesis Eq. 4.1) against the given capacities.

    Γ is the largest ``load / capacity`` over the ports a coflow's flows use, where the load of
    a port is the sum of the (remaining) sizes through it; ``inf`` when a loaded port has no
    capacity left (our convention, docs/varys.md#backfill). One pass over
    the flows (a numba kernel with a dense coflows × ports table, or a sort when that table
    would be too large); ``coflow`` holds dense indices ``0..num_coflows-1``.

    Examples
    --------
    Thesis Fig. 5.3: Γ1 = 4 (out0), Γ2 = 3.

    >>> bottleneck_key([2, 2, 3, 3, 3], [0, 1, 0, 1, 2], [0, 0, 0, 1, 2], [0, 0, 1, 1, 1],
    ...                [1, 1, 1], [1, 1, 1], 2).tolist()
    [4.0, 3.0]
    >>> bottleneck_key([1.0], [0], [0], [0], [0.0], [1.0], 1).tolist()
    [inf]
    """
    g = np.ascontiguousarray(coflow, dtype=np.int64)
    load = np.ascontiguousarray(remaining, dtype=np.float64)
    s = np.ascontiguousarray(src, dtype=np.int64)
    d = np.ascontiguousarray(dst, dtype=np.int64)
    cin = np.ascontiguousarray(cap_in, dtype=np.float64)
    cout = np.ascontiguousarray(cap_out, dtype=np.float64)
    if num_coflows * max(len(cin), len(cout)) <= max(_DENSE_LIMIT, 8 * len(g)):
        return _kernels()["gamma"](g, s, d, load, num_coflows, cin, cout)
    gin = _port_max_sparse(g, s, load, num_coflows, cin)
    gout = _port_max_sparse(g, d, load, num_coflows, cout)
    return np.maximum(gin, gout)


def smith_key(gamma: npt.ArrayLike, weight: npt.ArrayLike) -> FloatArray:
    """Smith's-rule key Γ / w; ``inf`` for a weight of 0 (served last).

    Examples
    --------
    >>> smith_key([3.0, 1.0, 2.0], [3.0, 1.0, 0.0]).tolist()
    [1.0, 1.0, inf]
    """
    g = np.asarray(gamma, dtype=np.float64)
    w = np.asarray(weight, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(w > 0, g / w, np.inf)


# ---------------------------------------------------------------------------- orderings
def fifo(arrival: npt.ArrayLike, coflows: npt.ArrayLike | None = None) -> IntArray:
    """First-In-First-Out: ascending arrival time (thesis §5.7.4; Orchestra's inter-coflow
    order, §5.9).

    Parameters
    ----------
    arrival
        Arrival (or release) time of every coflow, indexed by coflow.
    coflows
        Order only these coflows (default: all).

    Examples
    --------
    >>> fifo([2.0, 0.0, 2.0, 1.0]).tolist()
    [1, 3, 0, 2]
    >>> fifo([2.0, 0.0, 2.0, 1.0], coflows=[2, 0]).tolist()
    [0, 2]
    """
    arr = np.asarray(arrival, dtype=np.float64)
    if coflows is None:
        return order_by(arr)
    ids = np.asarray(coflows, dtype=np.int64)
    return order_by(arr[ids], ids)


def largest_weight_first(weight: npt.ArrayLike, coflows: npt.ArrayLike | None = None) -> IntArray:
    """Descending weight; ties toward the lower coflow index.

    Examples
    --------
    >>> largest_weight_first([1.0, 3.0, 1.0, 3.0]).tolist()
    [1, 3, 0, 2]
    """
    w = np.asarray(weight, dtype=np.float64)
    if coflows is None:
        return order_by(-w)
    ids = np.asarray(coflows, dtype=np.int64)
    return order_by(-w[ids], ids)


def scf(size: npt.ArrayLike, coflow: npt.ArrayLike, *, num_coflows: int | None = None) -> IntArray:
    """Shortest-Coflow-First: ascending length, the size of the largest flow (thesis §5.5.3).

    Examples
    --------
    >>> scf([2.0, 2.0, 3.0, 3.0, 3.0], [0, 0, 1, 1, 1]).tolist()
    [0, 1]
    >>> scf([5.0, 1.0], [4, 2]).tolist()  # only the coflows present, by index
    [2, 4]
    """
    g, ids, n = _dense(coflow, num_coflows)
    return order_by(length_key(size, g, n), ids)


def ncf(coflow: npt.ArrayLike, *, num_coflows: int | None = None) -> IntArray:
    """Narrowest-Coflow-First: ascending width, the number of flows (thesis §5.5.3).

    Examples
    --------
    >>> ncf([1, 1, 1, 0, 0]).tolist()
    [0, 1]
    >>> ncf([1], num_coflows=3).tolist()  # coflows 0 and 2 have no flows (width 0)
    [0, 2, 1]
    """
    g, ids, n = _dense(coflow, num_coflows)
    return order_by(width_key(g, n), ids)


def tcf(size: npt.ArrayLike, coflow: npt.ArrayLike, *, num_coflows: int | None = None) -> IntArray:
    """smallesT-Coflow-First: ascending total size (thesis §5.5.3).

    Examples
    --------
    >>> tcf([4.0, 1.0, 1.0, 1.0], [0, 1, 1, 1]).tolist()
    [1, 0]
    """
    g, ids, n = _dense(coflow, num_coflows)
    return order_by(size_key(size, g, n), ids)


def sebf(
    remaining: npt.ArrayLike,
    src: npt.ArrayLike,
    dst: npt.ArrayLike,
    coflow: npt.ArrayLike,
    cap_in: npt.ArrayLike,
    cap_out: npt.ArrayLike,
    *,
    num_coflows: int | None = None,
) -> IntArray:
    """Smallest-Effective-Bottleneck-First: ascending Γ against ``cap_in`` / ``cap_out``.

    Γ is :func:`bottleneck_key`: it "considers a coflow's length, width, size, and skew"
    (thesis §5.5.3). Pass remaining bytes and full capacities for Varys' online key, original
    sizes for the static one, or residual capacities for Γ against what is left.

    Examples
    --------
    Thesis Fig. 5.3: Γ = (4, 3), so C2 (index 1) first.

    >>> sebf([2, 2, 3, 3, 3], [0, 1, 0, 1, 2], [0, 0, 0, 1, 2], [0, 0, 1, 1, 1],
    ...      [1, 1, 1], [1, 1, 1]).tolist()
    [1, 0]
    """
    g, ids, n = _dense(coflow, num_coflows)
    return order_by(bottleneck_key(remaining, src, dst, g, cap_in, cap_out, n), ids)


def smith(
    remaining: npt.ArrayLike,
    src: npt.ArrayLike,
    dst: npt.ArrayLike,
    coflow: npt.ArrayLike,
    cap_in: npt.ArrayLike,
    cap_out: npt.ArrayLike,
    weight: npt.ArrayLike,
    *,
    num_coflows: int | None = None,
) -> IntArray:
    """Smith's rule on the bottleneck: ascending Γ / w (docs/theory.md#f2).

    On one port Γ is the processing time, so this is Smith's rule for ``1||Σ w_j C_j``. A
    coflow of weight 0 goes last (key ``inf``).

    Parameters
    ----------
    remaining, src, dst, coflow, cap_in, cap_out
        As for :func:`sebf`.
    weight
        Weight of every coflow, indexed by coflow.

    Examples
    --------
    >>> smith([3, 1, 2], [0, 0, 0], [0, 0, 0], [0, 1, 2], [1], [1], [3, 1, 1]).tolist()
    [0, 1, 2]
    """
    g, ids, n = _dense(coflow, num_coflows)
    gamma = bottleneck_key(remaining, src, dst, g, cap_in, cap_out, n)
    return order_by(smith_key(gamma, np.asarray(weight, dtype=np.float64)[ids]), ids)


def sebf_residual(
    remaining: npt.ArrayLike,
    src: npt.ArrayLike,
    dst: npt.ArrayLike,
    coflow: npt.ArrayLike,
    cap_in: npt.ArrayLike,
    cap_out: npt.ArrayLike,
    *,
    weight: npt.ArrayLike | None = None,
    num_coflows: int | None = None,
) -> IntArray:
    """SEBF against *residual* capacity: greedily picks the coflow of smallest Γ against the
    capacity left after reserving MADD rates for the coflows already picked.

    This reads Pseudocode 1's "Γ^C calculated using Eq. 4.1" with the current ``Rem(.)``
    (thesis §5.5.3; docs/varys.md#sebf-key): after coflow ``c`` is picked,
    every port it uses loses ``load / Γ_c`` (the rates MADD gives it), and the next pick is
    the smallest Γ against what is left (a port left with less than 1e-12 of its capacity,
    rounding residue, counts as exhausted). Γ only grows as capacity shrinks, so a lazy heap
    evaluates it exactly. A coflow needing an exhausted port has Γ = ``inf``; those come last,
    by index. With ``weight`` the key is Γ / w (Smith's rule, weight 0 last).

    Examples
    --------
    C0 uses both ports (Γ = 2) and C1 only port 0 (Γ = 1.5); after C1 reserves port 0, C0's
    Γ becomes ``inf``. Against full capacity the order is the same here, but C2 (Γ = 3 on the
    idle port 1) overtakes C0 once C0 is blocked:

    >>> sebf_residual([2, 2, 1.5, 3], [0, 1, 0, 1], [0, 1, 0, 1], [0, 0, 1, 2],
    ...               [1, 1], [1, 1]).tolist()
    [1, 2, 0]
    >>> sebf([2, 2, 1.5, 3], [0, 1, 0, 1], [0, 1, 0, 1], [0, 0, 1, 2], [1, 1], [1, 1]).tolist()
    [1, 0, 2]
    """
    g, ids, n = _dense(coflow, num_coflows)
    load = np.asarray(remaining, dtype=np.float64)
    res_in = np.array(cap_in, dtype=np.float64)
    res_out = np.array(cap_out, dtype=np.float64)
    m_in, m_out = len(res_in), len(res_out)
    # per coflow: the ports it loads and their loads, ingress ports as 0..m_in-1 and egress
    # ports as m_in..m_in+m_out-1 (CSR over coflows)
    port = np.concatenate([np.asarray(src, np.int64), m_in + np.asarray(dst, np.int64)])
    cell, inverse = np.unique(np.concatenate([g, g]) * (m_in + m_out) + port, return_inverse=True)
    sums = np.bincount(inverse.reshape(-1), weights=np.concatenate([load, load]))
    cell_group = cell // (m_in + m_out)
    cell_port = cell % (m_in + m_out)
    ptr = np.searchsorted(cell_group, np.arange(n + 1))
    cap = np.concatenate([res_in, res_out])
    res = cap.copy()
    w = np.ones(n) if weight is None else np.asarray(weight, dtype=np.float64)[ids]

    def gamma(c: int) -> float:
        lo, hi = ptr[c], ptr[c + 1]
        p, s = cell_port[lo:hi], sums[lo:hi]
        loaded = s > 0
        if not loaded.any():
            return 0.0
        r = res[p[loaded]]
        if (r <= 0).any():
            return float("inf")
        return float((s[loaded] / r).max())

    def key(c: int) -> float:
        return gamma(c) if weight is None else float(smith_key(gamma(c), w[c]))

    heap = [(key(c), c) for c in range(n)]
    heapq.heapify(heap)
    picked: list[int] = []
    while heap:
        k, c = heapq.heappop(heap)
        now = key(c)
        if now != k:
            heapq.heappush(heap, (now, c))
            continue
        picked.append(c)
        gam = gamma(c)
        if 0 < gam < np.inf:
            lo, hi = ptr[c], ptr[c + 1]
            p = cell_port[lo:hi]
            left = res[p] - sums[lo:hi] / gam
            res[p] = np.where(left > _EXHAUSTED * cap[p], left, 0.0)
    return ids[np.asarray(picked, dtype=np.int64)]


# ---------------------------------------------------------------------------- instances
def instance_order(instance: Instance, name: str) -> IntArray:
    """A static ordering of all the coflows of ``instance``, computed on its original sizes.

    Parameters
    ----------
    instance
        The instance.
    name
        One of :data:`ORDERINGS`: ``"fifo"`` (release time), ``"scf"`` (length), ``"ncf"``
        (width), ``"tcf"`` (total size), ``"sebf"`` (Γ on an empty fabric, i.e.
        :attr:`Instance.bottleneck`), ``"smith"`` (ρ / w), ``"lwf"`` (largest weight first).

    Returns
    -------
    numpy.ndarray
        A permutation of ``0..n-1``, first served first; ties toward the lower index.

    Raises
    ------
    ValueError
        If ``name`` is unknown.

    Examples
    --------
    >>> from coflowlab.instances.examples import fig_5_3, theory_i2
    >>> instance_order(fig_5_3(), "sebf").tolist(), instance_order(fig_5_3(), "tcf").tolist()
    ([1, 0], [0, 1])
    >>> instance_order(theory_i2(), "smith").tolist()  # ρ/w = 1, 1, 2: ties by index
    [0, 1, 2]
    """
    n = instance.num_coflows
    fab = instance.fabric
    cap_in = np.asarray(fab.ingress_capacity, dtype=np.float64)
    cap_out = np.asarray(fab.egress_capacity, dtype=np.float64)
    size, coflow = instance.flow_size, instance.flow_coflow
    src, dst = instance.flow_src, instance.flow_dst
    if name == "fifo":
        return fifo(instance.coflow_release)
    if name == "scf":
        return scf(size, coflow, num_coflows=n)
    if name == "ncf":
        return ncf(coflow, num_coflows=n)
    if name == "tcf":
        return tcf(size, coflow, num_coflows=n)
    if name == "sebf":
        return sebf(size, src, dst, coflow, cap_in, cap_out, num_coflows=n)
    if name == "smith":
        return smith(
            size, src, dst, coflow, cap_in, cap_out, instance.coflow_weight, num_coflows=n
        )
    if name == "lwf":
        return largest_weight_first(instance.coflow_weight)
    raise ValueError(f"unknown ordering {name!r}; expected one of {', '.join(ORDERINGS)}")
