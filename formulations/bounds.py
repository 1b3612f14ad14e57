"""Combinatorial lower bounds on the optimum (docs/theory.md#basic-facts, F3 and F4).

Both hold in the fluid and the slotted model (fluid OPT ≤ slotted OPT), so they bound every
schedule of the instance. Neither solves an LP, so neither takes solver options
(:func:`coflowlab.run` refuses them for these methods).
"""

from __future__ import annotations

import time

import numpy as np

from coflowlab.instance import Instance
from coflowlab.solution import Solution, SolutionKind, bound_solution

__all__ = ["bound_release_rho", "bound_smith", "completion_floor", "smith_rule"]


def completion_floor(instance: Instance) -> np.ndarray:
    """``(n,)`` the earliest time each coflow can complete, even alone on an empty fabric:
    the per-coflow lower bound ``C_j ≥ e_j`` every relaxation here imposes.

    ``e_j`` is the largest of

    - ``r_j + ρ_j`` (docs/theory.md#f3; ``ρ_j`` in time, load / capacity);
    - per port ``v`` that coflow ``j`` uses: the earliest release of its flows through ``v``
      plus its load there divided by ``v``'s capacity (nothing is sent through ``v`` before
      that release);
    - per flow ``e``: its release plus ``d_e / min(c_src, c_dst)``.

    The last two only differ from the first when flows are released after their coflow, so
    ``e_j = r_j + ρ_j`` in the usual case. Every term is a time before which some data of
    ``j`` cannot have been sent, in the fluid and the slotted model alike.

    Examples
    --------
    >>> from coflowlab import Instance
    >>> inst = Instance.from_matrices([[[2, 0], [0, 1]], [[1, 0], [0, 0]]], release=[0, 3])
    >>> completion_floor(inst).tolist()
    [2.0, 4.0]
    """
    n, m = instance.num_coflows, instance.num_ports
    cap = instance.fabric.port_capacity
    floor = instance.coflow_release + instance.bottleneck
    k, r, d = instance.flow_coflow, instance.flow_release, instance.flow_size
    src, dst = instance.flow_src, instance.flow_dst + m
    per_flow = r + d / np.minimum(cap[src], cap[dst])
    np.maximum.at(floor, k, per_flow)
    # per (coflow, port): earliest flow release through the port plus the load there
    flat = np.full(n * 2 * m, np.inf)
    np.minimum.at(flat, np.concatenate([k * 2 * m + src, k * 2 * m + dst]), np.tile(r, 2))
    first = flat.reshape(n, 2 * m)
    used = np.isfinite(first)
    per_port = np.where(used, np.where(used, first, 0.0) + instance.port_time, -np.inf)
    return np.maximum(floor, per_port.max(axis=1))


def bound_release_rho(instance: Instance) -> Solution:
    """``Σ_j w_j (r_j + ρ_j)``: no coflow can finish before its release plus its bottleneck
    time ρ_j (docs/theory.md#f3).

    Examples
    --------
    >>> from coflowlab.instances.examples import fig_3_2
    >>> bound_release_rho(fig_3_2()).objective
    4.0
    """
    start = time.perf_counter()
    value = float(np.dot(instance.coflow_weight, instance.coflow_release + instance.bottleneck))
    return bound_solution(
        "bound-release-rho",
        SolutionKind.BOUND,
        instance,
        value,
        None,
        runtime=time.perf_counter() - start,
    )


def smith_rule(p: np.ndarray, w: np.ndarray) -> tuple[float, np.ndarray]:
    """Optimum of ``1||Σ w_j C_j`` (Smith's ratio rule, WSPT): jobs by ``p/w`` ascending
    (zero-weight jobs last, ties by index); returns the value and the order.

    Examples
    --------
    >>> smith_rule(np.array([3.0, 1.0, 2.0]), np.array([3.0, 1.0, 1.0]))[0]
    19.0
    """
    ratio = np.divide(p, w, out=np.full(len(p), np.inf), where=w > 0)
    order = np.lexsort((np.arange(len(p)), ratio))
    completion = np.cumsum(p[order])
    return float(np.dot(w[order], completion)), order


def bound_smith(instance: Instance) -> Solution:
    """The best per-port bound (docs/theory.md#f4): each port alone is a single machine
    ``1||Σ w_j C_j`` with processing times the coflows' loads there (in time: load divided by
    the port's capacity), solved by Smith's rule. With release dates, nothing is sent
    before the earliest one, so ``r_min · Σ w`` is added (dropping the releases otherwise
    only lowers the optimum). ``details["port"]`` names the port that gives the bound.

    Examples
    --------
    Instance I2 (docs/theory.md#instances) (one port, p = (3, 1, 2), w = (3, 1, 1)): OPT = 19.

    >>> from coflowlab import Instance
    >>> inst = Instance.from_matrices([[[3.0]], [[1.0]], [[2.0]]], weight=[3, 1, 1])
    >>> bound_smith(inst).objective
    19.0
    """
    start = time.perf_counter()
    w = instance.coflow_weight
    times = np.asarray(instance.port_time)  # (n, 2m) loads in time units
    base = float(instance.coflow_release.min(initial=0.0) * w.sum())
    best, port = base, -1
    for v in np.flatnonzero(times.sum(axis=0) > 0).tolist():
        value, _order = smith_rule(times[:, v], w)
        if base + value > best:
            best, port = base + value, v
    return bound_solution(
        "bound-smith",
        SolutionKind.BOUND,
        instance,
        best,
        None,
        runtime=time.perf_counter() - start,
        details={"port": port},
    )
