"""The primal-dual ordering of Mastrolilli, Queyranne, Schulz, Svensson and Uhan (ORL 38, 2010),
which Sincronia (SIGCOMM 2018) calls BSSI (Bottleneck-Select-Scale-Iterate);
docs/theory.md#primal-dual.

Coflows are jobs of a concurrent open shop on the ``2m`` ports (ingress, then egress), with
processing times ``p[j, v]`` = the coflow's load on port ``v`` over the port's capacity
(:attr:`Instance.port_time`). The order is built back to front: at each step the most loaded
port ``b`` over the unscheduled coflows is the *bottleneck*, the coflow with the smallest
residual weight per unit of time on ``b`` is *selected* and placed last, the dual variable
``y(b, N)`` takes that ratio (*scale*), every unscheduled coflow's residual weight drops by
``y · p[j, b]``, and the step repeats on the rest (*iterate*).

The ``y`` form a feasible solution of the dual of the parallel-inequality LP
(docs/theory.md#parallel-lp), so ``Σ y(b, N) f_b(N)`` with ``f_b(N) = ½[(Σ_N p_b)² + Σ_N p_b²]`` is
a certified lower bound on OPT (release dates only add primal constraints, so it stays one with
them). The permutation schedule of the order on the open shop costs at most twice it (the paper's
Theorem: ``Σ_k w_σ(k) max_v L_v(prefix_k) ≤ 2·dual``).

Degenerate cases, handled deterministically (docs/theory.md#primal-dual; Sincronia's public C++
version divides by zero there):

- coflows with zero load on the bottleneck port are skipped at that step (their ratio would be
  infinite); if every unscheduled coflow has no load at all, they go first, in index order
  (they cost nothing on the open shop);
- ties (of ports for the bottleneck, of coflows for the selection) go to the lowest index, as
  in Sincronia's simulator (a selected coflow is placed last, so identical coflows come out in
  reverse index order); values within a relative :data:`TIE_RTOL` count as tied, so that
  rounding in the residual weights does not decide them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from coflowlab.instance import Instance

__all__ = ["TIE_RTOL", "PrimalDualOrder", "primal_dual_order", "primal_dual_order_of"]

TIE_RTOL = 1e-12
"""Relative difference below which two loads or two ratios count as tied."""


@dataclass(frozen=True)
class PrimalDualOrder:
    """The primal-dual ordering and its dual certificate.

    Attributes
    ----------
    order
        The coflows, first served first.
    bottleneck
        ``bottleneck[k]``: the port (``0..2m-1``, ingress first) that was the bottleneck when
        ``order[k]`` was selected (``-1`` for zero-load coflows placed first).
    dual
        ``dual[k]``: the dual variable ``y(b, N_k)`` of that step, where ``N_k`` is the set
        ``order[: k + 1]``.
    dual_objective
        ``Σ_k dual[k] · f_b(N_k)``: a certified lower bound on OPT.
    cos_value
        ``Σ_k w_order[k] · max_v L_v(N_k)``: the order's value as a permutation schedule of the
        concurrent open shop, at most ``2 · dual_objective``.
    """

    order: npt.NDArray[np.int64]
    bottleneck: npt.NDArray[np.int64]
    dual: npt.NDArray[np.float64]
    dual_objective: float
    cos_value: float


def _first_within(values: npt.NDArray[np.float64], best: float, *, above: bool) -> int:
    """Lowest index whose value ties ``best`` within :data:`TIE_RTOL`."""
    slack = TIE_RTOL * abs(best)
    hit = values >= best - slack if above else values <= best + slack
    return int(np.flatnonzero(hit)[0])


def primal_dual_order(instance: Instance) -> PrimalDualOrder:
    """The primal-dual (BSSI) order of the coflows, with its dual solution.

    Parameters
    ----------
    instance
        Any instance; release dates and dependencies are ignored by the ordering (the dual
        bound stays valid with them).

    Returns
    -------
    PrimalDualOrder

    Examples -------- Instance I2 (docs/theory.md#instances), one port with ``p = (3, 1, 2)`` and
    ``w = (3, 1, 1)``: Smith's rule ``[1, 0, 2]``, optimal at 19 (the dual equals it on one
    machine).

    >>> from coflowlab.instances.examples import theory_i2, theory_i3
    >>> pd = primal_dual_order(theory_i2())
    >>> pd.order.tolist(), round(pd.cos_value, 9), round(pd.dual_objective, 9)
    ([1, 0, 2], 19.0, 19.0)

    Instance I3 (docs/theory.md#instances) (diagonal, OPT 4): the order B, C, A costs 5 on the open
    shop.

    >>> pd3 = primal_dual_order(theory_i3())
    >>> pd3.order.tolist(), round(pd3.cos_value, 9)
    ([1, 2, 0], 5.0)
    """
    return primal_dual_order_of(instance.port_time, instance.coflow_weight)


def primal_dual_order_of(port_time: npt.ArrayLike, weight: npt.ArrayLike) -> PrimalDualOrder:
    """:func:`primal_dual_order` of coflows given by their ``(n, 2m)`` port times and ``(n,)``
    weights rather than an instance (an online scheduler's remaining loads, for example).

    Examples
    --------
    >>> primal_dual_order_of([[3, 3], [1, 1], [2, 2]], [3, 1, 1]).order.tolist()
    [1, 0, 2]
    """
    p = np.asarray(port_time, dtype=np.float64)
    weight = np.asarray(weight, dtype=np.float64)
    w = weight.copy()
    n = p.shape[0]
    left = np.ones(n, dtype=bool)
    load = p.sum(axis=0)
    square = (p * p).sum(axis=0)
    back: list[int] = []
    ports: list[int] = []
    duals: list[float] = []
    dual_objective = cos_value = 0.0
    for _ in range(n):
        peak = float(load.max(initial=0.0))
        if peak <= 0.0:
            break  # every coflow left has no load: they go first
        b = _first_within(load, peak, above=True)
        cand = np.flatnonzero(left & (p[:, b] > 0.0))
        ratio = w[cand] / p[cand, b]
        pick = _first_within(ratio, float(ratio.min()), above=False)
        j = int(cand[pick])
        y = max(float(ratio[pick]), 0.0)
        dual_objective += y * 0.5 * (load[b] ** 2 + square[b])
        cos_value += float(weight[j]) * peak
        w[left] -= y * p[left, b]
        np.maximum(w, 0.0, out=w)  # the selected coflow's residual is 0 up to rounding
        left[j] = False
        load -= p[j]
        square -= p[j] * p[j]
        np.maximum(load, 0.0, out=load)
        back.append(j)
        ports.append(b)
        duals.append(y)
    idle = np.flatnonzero(left)
    order = np.concatenate([idle, np.asarray(back[::-1], dtype=np.int64)]).astype(np.int64)
    bottleneck = np.concatenate([np.full(len(idle), -1), np.asarray(ports[::-1])])
    dual = np.concatenate([np.zeros(len(idle)), np.asarray(duals[::-1], dtype=np.float64)])
    return PrimalDualOrder(
        order, bottleneck.astype(np.int64), dual, float(dual_objective), float(cos_value)
    )
