"""Plain orderings as baselines: FIFO, SCF, NCF, TCF, static SEBF and Smith's ratio, each served
by an order-respecting allocation: strict-priority greedy (default, the GREEDY of Sincronia's
simulator; docs/coflowsim-model.md#sincronia), Sincronia's MADD rule (``allocation="madd"``) or
MADD with a backfill at every flow completion (``"madd-exact"``); see
:mod:`coflowlab.list_scheduling` and docs/fidelity.md.

The orders are the core's (:func:`coflowlab.orderings.instance_order`, on original sizes);
within a coflow, greedy walks the flows in the instance's flow order, as Sincronia's simulator
does on its own input files. No guarantee is claimed for them. Each result is measured
against the better of two certified lower bounds that cost no LP: the primal-dual dual
objective (:mod:`coflowlab.approximations.primal_dual`) and ``Σ_j w_j (r_j + ρ_j)``
(docs/theory.md#f3); ``bound_source`` names the one used.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from coflowlab.instance import Instance
from coflowlab.list_scheduling import ALLOCATIONS, Allocation, list_schedule
from coflowlab.orderings import instance_order
from coflowlab.solution import Solution, approximation_solution

from .primal_dual import primal_dual_order

__all__ = ["PLAIN_ORDERINGS", "cheap_bound", "solve_plain_ordering"]

PLAIN_ORDERINGS: dict[str, str] = {
    "order-fifo": "fifo",
    "order-scf": "scf",
    "order-ncf": "ncf",
    "order-tcf": "tcf",
    "order-sebf": "sebf",
    "order-smith": "smith",
}
"""Method name -> name of the ordering in :func:`coflowlab.orderings.instance_order`."""


def cheap_bound(instance: Instance) -> tuple[float, str]:
    """The better of the primal-dual dual objective and ``Σ w (r + ρ)``, and its name.

    Examples
    --------
    >>> from coflowlab.instances.examples import theory_i2
    >>> bound, which = cheap_bound(theory_i2())
    >>> round(bound, 9), which
    (19.0, 'dual')
    """
    dual = primal_dual_order(instance).dual_objective
    release_rho = float(
        np.dot(instance.coflow_weight, instance.coflow_release + instance.bottleneck)
    )
    return (dual, "dual") if dual >= release_rho else (release_rho, "release-rho")


def solve_plain_ordering(
    instance: Instance, method: str, allocation: Allocation = "greedy"
) -> Solution:
    """The schedule of one plain ordering (``method`` is a key of :data:`PLAIN_ORDERINGS`)
    under ``allocation`` (``"greedy"``, default; ``"madd"``, Sincronia's MADD rule;
    ``"madd-exact"``; :mod:`coflowlab.list_scheduling`).

    Examples
    --------
    Thesis Fig. 5.3: SCF serves C1 first (4 and 7), static SEBF C2 first (7 and 3).

    >>> from coflowlab.instances.examples import fig_5_3
    >>> solve_plain_ordering(fig_5_3(), "order-scf").completion_times.tolist()
    [4.0, 7.0]
    >>> solve_plain_ordering(fig_5_3(), "order-sebf").completion_times.tolist()
    [7.0, 3.0]
    """
    if method not in PLAIN_ORDERINGS:
        raise ValueError(f"unknown plain ordering {method!r}; one of {', '.join(PLAIN_ORDERINGS)}")
    if allocation not in ALLOCATIONS:
        raise ValueError(f"allocation must be one of {', '.join(ALLOCATIONS)}, got {allocation!r}")
    start = time.perf_counter()
    order = instance_order(instance, PLAIN_ORDERINGS[method])
    schedule = list_schedule(instance, order, allocation)
    bound, source = cheap_bound(instance)
    return approximation_solution(
        method,
        instance,
        schedule,
        bound=bound,
        bound_source=source,
        guarantee=None,
        runtime=time.perf_counter() - start,
        order=tuple(order.tolist()),
        details={"ordering": PLAIN_ORDERINGS[method], "allocation": allocation},
    )


def _method(name: str) -> Callable[..., Solution]:
    def run(instance: Instance, *, allocation: Allocation = "greedy") -> Solution:
        return solve_plain_ordering(instance, name, allocation)

    run.__name__ = run.__qualname__ = f"solve_{name.replace('-', '_')}"
    run.__doc__ = (
        f"``{name}``: :func:`solve_plain_ordering` with that ordering; ``allocation`` is "
        '``"greedy"`` (default), ``"madd"`` or ``"madd-exact"`` (it solves no LP, so it '
        "takes no solver options)."
    )
    return run


solve_order_fifo = _method("order-fifo")
solve_order_scf = _method("order-scf")
solve_order_ncf = _method("order-ncf")
solve_order_tcf = _method("order-tcf")
solve_order_sebf = _method("order-sebf")
solve_order_smith = _method("order-smith")
