"""Plain orderings as baselines: FIFO, SCF, NCF, TCF, static SEBF and Smith's ratio, each served
by an order-respecting allocation: strict-priority greedy (default, the GREEDY of Sincronia's
simulator; docs/coflowsim-model.md#sincronia), Sincronia's MADD rule (``allocation="madd"``) or
MADD with a backfill at every flow completion (``"madd-exact"``); see
:mod:`coflowlab.list_scheduling` and docs/fidelity.md#sincronia-madd.

The orders are computed once, on original sizes, with the rules of Sincronia's offline
simulator (Agarwal et al., SIGCOMM 2018; docs/fidelity.md#sincronia-madd), so that together with
``sincronia`` they reproduce its grid coflow by coflow: SCF by length (largest flow), TCF by
total size, NCF by width ``min(#ingress ports, #egress ports)`` (``width="ports"``, also
CoflowSim's NCF; ``width="flows"`` counts flows, the core's :func:`coflowlab.orderings.ncf`),
ties among these three by coflow id (the integer label, else the index); static SEBF by Γ on an
empty fabric, ties by index (a stable sort); FIFO and Smith's ratio are the core's
(:func:`coflowlab.orderings.instance_order`). Within a coflow, greedy walks the flows in the
instance's flow order, as Sincronia's simulator does on its own input files. No guarantee is
claimed for them. Each result is measured against the better of two certified lower bounds
that cost no LP: the primal-dual dual objective (:mod:`coflowlab.approximations.primal_dual`)
and ``Σ_j w_j (r_j + ρ_j)`` (docs/theory.md#f3); ``bound_source`` names the one used.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Literal

import numpy as np
import numpy.typing as npt

from coflowlab.instance import Instance
from coflowlab.list_scheduling import ALLOCATIONS, Allocation, list_schedule
from coflowlab.orderings import instance_order, length_key, size_key, width_key
from coflowlab.solution import Solution, approximation_solution

from .primal_dual import primal_dual_order

__all__ = [
    "PLAIN_ORDERINGS",
    "WIDTHS",
    "cheap_bound",
    "plain_order",
    "port_width",
    "solve_plain_ordering",
]

Width = Literal["ports", "flows"]
WIDTHS: tuple[str, ...] = ("ports", "flows")

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


def _coflow_ids(instance: Instance) -> npt.NDArray[np.int64]:
    """Sincronia's tie-break: the coflow ids of its files (integer labels), else the index."""
    try:
        return np.array([int(label) for label in instance.coflow_label], dtype=np.int64)
    except (TypeError, ValueError, OverflowError):
        return np.arange(instance.num_coflows, dtype=np.int64)


def port_width(instance: Instance) -> npt.NDArray[np.float64]:
    """Width of each coflow as Sincronia's and CoflowSim's NCF count it: the smaller of its
    numbers of distinct ingress and egress ports.

    Examples
    --------
    >>> from coflowlab.instances.examples import fig_5_3
    >>> port_width(fig_5_3()).tolist()  # C1: 2 senders, 1 receiver; C2: 3 and 3
    [1.0, 3.0]
    """
    n, m = instance.num_coflows, instance.num_ports
    coflow = instance.flow_coflow.astype(np.int64)
    widths = []
    for port in (instance.flow_src, instance.flow_dst):
        pairs = np.unique(coflow * m + port.astype(np.int64))
        widths.append(np.bincount(pairs // m, minlength=n))
    return np.minimum(*widths).astype(np.float64)


def plain_order(instance: Instance, method: str, width: Width = "ports") -> npt.NDArray[np.int64]:
    """The order of one plain ordering (module docstring: Sincronia's keys and ties).

    Examples
    --------
    Thesis Fig. 5.3: C1 is narrower in ports (1 receiver) and in flows (2 against 3).

    >>> from coflowlab.instances.examples import fig_5_3
    >>> plain_order(fig_5_3(), "order-ncf").tolist(), plain_order(fig_5_3(), "order-sebf").tolist()
    ([0, 1], [1, 0])
    """
    if method not in PLAIN_ORDERINGS:
        raise ValueError(f"unknown plain ordering {method!r}; one of {', '.join(PLAIN_ORDERINGS)}")
    if width not in WIDTHS:
        raise ValueError(f"width must be one of {', '.join(WIDTHS)}, got {width!r}")
    n, size, coflow = instance.num_coflows, instance.flow_size, instance.flow_coflow
    if method == "order-scf":
        key = length_key(size, coflow, n)
    elif method == "order-tcf":
        key = size_key(size, coflow, n)
    elif method == "order-ncf":
        key = port_width(instance) if width == "ports" else width_key(coflow, n)
    else:
        return instance_order(instance, PLAIN_ORDERINGS[method])
    return np.lexsort((_coflow_ids(instance), key)).astype(np.int64)


def solve_plain_ordering(
    instance: Instance, method: str, allocation: Allocation = "greedy", width: Width = "ports"
) -> Solution:
    """The schedule of one plain ordering (``method`` is a key of :data:`PLAIN_ORDERINGS`)
    under ``allocation`` (``"greedy"``, default; ``"madd"``, Sincronia's MADD rule;
    ``"madd-exact"``; :mod:`coflowlab.list_scheduling`). ``width`` chooses NCF's width
    (``"ports"``, Sincronia's; ``"flows"``); the other orderings ignore it.

    Examples
    --------
    Thesis Fig. 5.3: SCF serves C1 first (4 and 7), static SEBF C2 first (7 and 3).

    >>> from coflowlab.instances.examples import fig_5_3
    >>> solve_plain_ordering(fig_5_3(), "order-scf").completion_times.tolist()
    [4.0, 7.0]
    >>> solve_plain_ordering(fig_5_3(), "order-sebf").completion_times.tolist()
    [7.0, 3.0]
    """
    if allocation not in ALLOCATIONS:
        raise ValueError(f"allocation must be one of {', '.join(ALLOCATIONS)}, got {allocation!r}")
    start = time.perf_counter()
    order = plain_order(instance, method, width)
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
        details={"ordering": PLAIN_ORDERINGS[method], "allocation": allocation}
        | ({"width": width} if method == "order-ncf" else {}),
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


def solve_order_ncf(
    instance: Instance, *, allocation: Allocation = "greedy", width: Width = "ports"
) -> Solution:
    """``order-ncf``: :func:`solve_plain_ordering` with NCF; ``allocation`` is ``"greedy"``
    (default), ``"madd"`` or ``"madd-exact"``; ``width`` is ``"ports"`` (default: the smaller
    of the numbers of ingress and egress ports, Sincronia's and CoflowSim's width) or
    ``"flows"`` (the number of flows). It solves no LP, so it takes no solver options."""
    return solve_plain_ordering(instance, "order-ncf", allocation, width)


solve_order_fifo = _method("order-fifo")
solve_order_scf = _method("order-scf")
solve_order_tcf = _method("order-tcf")
solve_order_sebf = _method("order-sebf")
solve_order_smith = _method("order-smith")
