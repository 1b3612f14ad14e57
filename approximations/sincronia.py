"""Sincronia offline (Agarwal, Rajakrishnan, Narayan, Agarwal, Shmoys, Vahdat; SIGCOMM 2018):
the primal-dual (BSSI) order served by an order-respecting, work-conserving allocation
(docs/theory.md#sincronia).

Guarantee (Sincronia's offline theorem; docs/theory.md#sincronia, #f5), fluid model, zero release
dates: the BSSI order costs at most twice the dual bound on the concurrent open shop of the ``2m``
ports (Mastrolilli et al. 2010), and a strict-priority greedy allocation finishes each coflow by
the ingress plus egress load of its prefix, at most twice the open-shop completion; so ``Σ w C ≤
4·dual ≤ 4·OPT``. With release dates the paper's offline theorem does not apply and no guarantee is
claimed.

Two methods of ``coflowlab solve`` come from here:

- ``primal-dual``: the ordering with its certificate (the dual bound and the open-shop value
  of the order, ``details``), scheduled by greedy;
- ``sincronia``: the same order, with the allocation as a parameter: ``greedy``, ``madd``
  (Sincronia's offline simulator's MADD, rule for rule: skipped coflows, equal split, greedy
  backfill, next event at the smallest Γ; docs/fidelity.md#sincronia-madd) or ``madd-exact``
  (MADD plus greedy backfill at every flow completion, our better rule). With greedy the two
  methods coincide by design.

Sincronia's public simulator computes the order in single precision (``float`` residual
weights); where two coflows tie exactly, its rounding, not the index, decides.
``precision="single"`` (:func:`bssi_order_single`) reproduces that; the default (``"double"``)
is :func:`~coflowlab.approximations.primal_dual.primal_dual_order`, which breaks ties by index
(docs/fidelity.md#sincronia-madd).
"""

from __future__ import annotations

import time
from typing import Literal

import numpy as np
import numpy.typing as npt

from coflowlab.instance import Instance
from coflowlab.list_scheduling import Allocation, list_schedule
from coflowlab.solution import Guarantee, Solution, approximation_solution

from .primal_dual import primal_dual_order, primal_dual_order_of

__all__ = [
    "SINCRONIA_GUARANTEE",
    "bssi_order",
    "bssi_order_single",
    "solve_primal_dual",
    "solve_sincronia",
]

Precision = Literal["double", "single"]

SINCRONIA_GUARANTEE = Guarantee(
    4.0,
    "dual",
    "Σ w C ≤ 4·dual ≤ 4·OPT (fluid, zero release dates)",
    "Agarwal et al., Sincronia, SIGCOMM 2018, offline theorem; order from Mastrolilli et al., "
    "ORL 38 (2010); docs/theory.md#sincronia",
)


def bssi_order(port_time: npt.ArrayLike, weight: npt.ArrayLike) -> npt.NDArray[np.int64]:
    """The BSSI (primal-dual) order of coflows given by their port times, not an instance.

    The same ordering as :func:`~coflowlab.approximations.primal_dual.primal_dual_order`
    (same ties, same degenerate cases), on loads an online scheduler computes itself, such as
    the remaining bytes of the coflows it admitted to an epoch.

    Parameters
    ----------
    port_time
        ``(k, 2m)`` time each coflow needs on each port alone (ingress ports first), as
        :attr:`coflowlab.Instance.port_time`; entries ``>= 0``.
    weight
        ``(k,)`` weights ``>= 0``.

    Returns
    -------
    numpy.ndarray
        The positions ``0..k-1``, first served first.

    Raises
    ------
    ValueError
        For mismatched shapes or a negative or non-finite entry (its index named).

    Examples
    --------
    One port (ingress and egress loads equal): Smith's rule, weight per unit of time.

    >>> bssi_order([[3, 3], [1, 1], [2, 2]], [3, 1, 1]).tolist()
    [1, 0, 2]
    """
    p = np.array(port_time, dtype=np.float64, ndmin=2)
    w = np.array(weight, dtype=np.float64, ndmin=1)
    if p.ndim != 2 or w.shape != (p.shape[0],):
        raise ValueError(f"port_time {p.shape} and weight {w.shape}: expected (k, 2m) and (k,)")
    for name, arr in (("port_time", p), ("weight", w)):
        bad = np.argwhere(~np.isfinite(arr) | (arr < 0))
        if len(bad):
            at = tuple(int(i) for i in bad[0])
            raise ValueError(f"{name}{list(at)} is {arr[at]!r} (must be finite and >= 0)")
    if p.shape[0] == 0:
        return np.zeros(0, dtype=np.int64)
    return primal_dual_order_of(p, w).order


def _port_loads(instance: Instance) -> npt.NDArray[np.int64]:
    """``(n, 2m)`` whole-MB loads as Sincronia's simulator builds them for its order: one entry
    per (ingress, egress) pair of a coflow, the last flow of a repeated pair replacing the
    earlier ones, then row and column sums."""
    n, m = instance.num_coflows, instance.num_ports
    k = instance.flow_coflow.astype(np.int64)
    src, dst = instance.flow_src.astype(np.int64), instance.flow_dst.astype(np.int64)
    cell = (k * m + src) * m + dst
    last = len(cell) - 1 - np.unique(cell[::-1], return_index=True)[1]  # last flow per pair
    size = instance.flow_size[last].astype(np.int64)
    loads = np.zeros((n, 2 * m), dtype=np.int64)
    np.add.at(loads, (k[last], src[last]), size)
    np.add.at(loads, (k[last], m + dst[last]), size)
    return loads


def bssi_order_single(instance: Instance) -> npt.NDArray[np.int64]:
    """The BSSI order as Sincronia's public offline simulator computes it: integer loads
    (:func:`_port_loads`), residual weights and duals in single precision, the first most
    loaded port, the first smallest ratio (strictly below 1e15), the pick placed last.

    The arithmetic is IEEE single precision, as the simulator's ``float``: where two ratios tie
    exactly in real numbers, their rounding decides. Weights are rounded to integers (its
    files have none: all 1). Use :func:`bssi_order` or the default ``precision="double"`` for
    the order itself; this one exists to reproduce that simulator
    (docs/fidelity.md#sincronia-madd).

    Examples
    --------
    C0 = {1→1: 3}, C1 = {0→0: 6}, C2 = {0→0: 2, 1→1: 2}. Step 1: ingress 0 is the most
    loaded; C1 has the smallest ratio 1/6 and goes last. Step 2 (ingress 1): C0's ratio 1/3
    and C2's (1 − 2/6) / 2 = 1/3 tie; in single precision C2's is the smaller, so C2 goes
    before C1 and C0 first, where the exact order breaks the tie by index.

    >>> from coflowlab import Instance
    >>> inst = Instance.from_matrices([[[0, 0], [0, 3]], [[6, 0], [0, 0]], [[2, 0], [0, 2]]])
    >>> bssi_order_single(inst).tolist(), bssi_order(inst.port_time, [1, 1, 1]).tolist()
    ([0, 2, 1], [2, 0, 1])
    """
    loads = _port_loads(instance)
    n = instance.num_coflows
    w = np.round(instance.coflow_weight).astype(np.int64).astype(np.float32)
    left = np.ones(n, dtype=bool)
    residual = np.zeros(n, dtype=np.float32)  # Σ over earlier steps of load · β, in float32
    limit = np.float32(1e15)
    picks: list[int] = []
    for _ in range(n):
        port = int(np.argmax(loads[left].sum(axis=0)))
        v = loads[:, port].astype(np.float32)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = (w - residual) / v
        ratio = np.where(left & (ratio < limit), ratio, np.inf)
        j = int(np.argmin(ratio)) if np.isfinite(ratio.min()) else int(np.flatnonzero(left)[0])
        beta = ratio[j] if np.isfinite(ratio[j]) else np.float32(0.0)
        residual = residual + v * np.float32(beta)
        left[j] = False
        picks.append(j)
    return np.asarray(picks[::-1], dtype=np.int64)


def _guarantee(instance: Instance) -> Guarantee | None:
    return None if instance.has_releases else SINCRONIA_GUARANTEE


def _run(
    method: str, instance: Instance, allocation: Allocation, precision: Precision = "double"
) -> Solution:
    if precision not in ("double", "single"):
        raise ValueError(f"precision must be 'double' or 'single', got {precision!r}")
    start = time.perf_counter()
    pd = primal_dual_order(instance)
    order = pd.order if precision == "double" else bssi_order_single(instance)
    schedule = list_schedule(instance, order, allocation)
    return approximation_solution(
        method,
        instance,
        schedule,
        bound=pd.dual_objective,
        bound_source="dual",
        guarantee=_guarantee(instance) if precision == "double" else None,
        runtime=time.perf_counter() - start,
        order=tuple(order.tolist()),
        details={
            "allocation": allocation,
            "precision": precision,
            "dual_objective": pd.dual_objective,
            "cos_value": pd.cos_value,
            "bottleneck": pd.bottleneck.tolist(),
            "dual": pd.dual.tolist(),
        },
    )


def solve_primal_dual(instance: Instance) -> Solution:
    """The primal-dual order (Mastrolilli et al. 2010; BSSI), scheduled by greedy allocation.

    Parameters
    ----------
    instance
        Any instance (release dates are respected by the schedule, ignored by the order).
        The method solves no LP, so it takes no solver options.

    Returns
    -------
    Solution
        Kind ``approximation``: the verified greedy schedule; ``bound`` the dual objective
        (a certified lower bound on OPT); ``details``: ``dual_objective``, ``cos_value`` (the
        order's value on the ports' concurrent open shop, ``≤ 2·dual``), ``bottleneck`` and
        ``dual`` per position.

    Examples -------- Instance I2 (docs/theory.md#instances) (one port): the order is Smith's rule
    and optimal, 19 = the dual.

    >>> from coflowlab.instances.examples import theory_i2
    >>> sol = solve_primal_dual(theory_i2())
    >>> sol.order, round(sol.objective, 9), round(sol.bound, 9), round(sol.ratio, 9)
    ((1, 0, 2), 19.0, 19.0, 1.0)
    """
    return _run("primal-dual", instance, "greedy")


def solve_sincronia(
    instance: Instance,
    *,
    allocation: Allocation = "greedy",
    precision: Precision = "double",
) -> Solution:
    """Sincronia offline: the BSSI order and an order-respecting, work-conserving allocation.

    Parameters
    ----------
    instance
        Any instance; the 4·OPT guarantee needs zero release dates (else ``guarantee`` is
        ``None``).
    allocation
        ``"greedy"`` (strict priority, Sincronia's GREEDY; default), ``"madd"`` (Sincronia's
        MADD rule, with its idle capacity until the smallest Γ) or ``"madd-exact"`` (MADD plus
        greedy backfill, recomputed at every flow completion);
        :mod:`coflowlab.list_scheduling`. The guarantee is proven for greedy; it is reported
        for every allocation, and checked against the verified cost. The method solves no LP,
        so it takes no solver options.
    precision
        ``"double"`` (default): the primal-dual order, ties by index. ``"single"``: the order
        as Sincronia's simulator computes it, in single precision (:func:`bssi_order_single`),
        to reproduce its output where exact ties occur; no guarantee is then claimed.

    Examples
    --------
    Thesis Fig. 5.3: BSSI serves C2 first (CCTs 7 and 3), within 4 of the dual bound.

    >>> from coflowlab.instances.examples import fig_5_3
    >>> sol = solve_sincronia(fig_5_3(), allocation="madd")
    >>> sol.completion_times.tolist(), sol.guarantee.holds(sol.objective, sol.bound)
    ([7.0, 3.0], True)
    """
    return _run("sincronia", instance, allocation, precision)
