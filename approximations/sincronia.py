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
"""

from __future__ import annotations

import time

import numpy as np
import numpy.typing as npt

from coflowlab.instance import Instance
from coflowlab.list_scheduling import Allocation, list_schedule
from coflowlab.solution import Guarantee, Solution, approximation_solution

from .primal_dual import primal_dual_order, primal_dual_order_of

__all__ = ["SINCRONIA_GUARANTEE", "bssi_order", "solve_primal_dual", "solve_sincronia"]

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


def _guarantee(instance: Instance) -> Guarantee | None:
    return None if instance.has_releases else SINCRONIA_GUARANTEE


def _run(method: str, instance: Instance, allocation: Allocation) -> Solution:
    start = time.perf_counter()
    pd = primal_dual_order(instance)
    schedule = list_schedule(instance, pd.order, allocation)
    return approximation_solution(
        method,
        instance,
        schedule,
        bound=pd.dual_objective,
        bound_source="dual",
        guarantee=_guarantee(instance),
        runtime=time.perf_counter() - start,
        order=tuple(pd.order.tolist()),
        details={
            "allocation": allocation,
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

    Examples
    --------
    Thesis Fig. 5.3: BSSI serves C2 first (CCTs 7 and 3), within 4 of the dual bound.

    >>> from coflowlab.instances.examples import fig_5_3
    >>> sol = solve_sincronia(fig_5_3(), allocation="madd")
    >>> sol.completion_times.tolist(), sol.guarantee.holds(sol.objective, sol.bound)
    ([7.0, 3.0], True)
    """
    return _run("sincronia", instance, allocation)
