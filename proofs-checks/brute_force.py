"""Brute-force optima of tiny instances, written from the models' definitions only: the
reference the exact methods are checked against (``proofs-checks/test_models.py``,
``tests/formulations/test_differential.py``, ``tests/formulations/test_time_indexed.py``).

Nothing here imports :mod:`coflowlab.formulations` or :mod:`coflowlab.solvers`: the slotted
optimum is an exhaustive search over every slotted schedule, and the fluid optimum solves one
LP per event sequence with :func:`scipy.optimize.linprog`, assembled here from scratch.

Slotted model (conventions of Qiu, Stein and Zhong, SPAA 2015, §2, and the time-indexed MIP
of ``coflowlab.formulations.time_indexed``): slot ``t`` covers ``[t - 1, t)``; in a slot every
port ``v`` moves at most ``c_v`` whole units (a matching when ``c = 1``); a flow released at
``r`` sends only in slots ``t ≥ ceil(r) + 1``; a flow of a coflow with a predecessor ``a``
sends only in slots after the one in which ``a`` completes; a coflow completes at the end of
the slot its last unit moves in.

Fluid model (preemptive, divisible: Chowdhury, Zhong and Stoica, SIGCOMM 2014, §5.1): at
every instant each port ``v`` moves at most ``c_v``; nothing is sent before its release or
before a predecessor completes. For a fixed *event sequence* (the completions in some order,
interleaved with the distinct positive release times), averaging every flow's rate over each
interval between consecutive events keeps every constraint, so the best schedule with that
sequence is the LP below, and the minimum over all sequences is the fluid optimum
(Mastrolilli et al., "Minimizing the sum of weighted completion times in a concurrent open
shop", Oper. Res. Lett. 2010, use the same interval argument for a fixed order).

Deadlines are ignored (they are constraints of the deadline methods only); weights may be 0.
"""

from __future__ import annotations

import itertools
import math
from functools import cache

import numpy as np
from scipy.optimize import linprog

import coflowlab as cl

__all__ = ["fluid_opt", "slotted_opt"]

_INT_TOL = 1e-9


def _whole(values: np.ndarray, what: str) -> list[int]:
    out = [round(float(v)) for v in values]
    bad = [i for i, v in enumerate(values) if abs(v - out[i]) > _INT_TOL * max(1.0, abs(v))]
    if bad:
        raise ValueError(f"slotted_opt: {what} {bad[0]} is {values[bad[0]]!r}, not a whole number")
    return out


def slotted_opt(inst: cl.Instance, *, max_states: int = 2_000_000) -> float:
    """Slotted OPT of ``Σ_j w_j C_j`` by exhaustive search over slotted schedules.

    In each slot every vector of whole amounts that fits the port capacities (idling
    included) is tried, depth first, memoised on ``(slot, remaining amounts)``.

    Horizon: some optimal schedule ends by ``ceil(max r) + Σ d``. After every release, a slot
    in which nothing moves can be removed by moving every later transfer one slot earlier:
    port usage per slot is unchanged, dependencies keep their order (both sides move), and no
    completion is later. So after the last release every slot moves at least one unit.

    Raises
    ------
    ValueError
        A size or capacity is not a whole number, or the search exceeds ``max_states``.

    Examples
    --------
    One flow of 2 units, and a heavier coflow released at 1 that needs one slot on each
    port: serving it in slot 2 preempts the first, so OPT = 3·2 + 3 = 9.

    >>> inst = cl.Instance.from_coflows(
    ...     [cl.Coflow([(0, 0, 2.0)]),
    ...      cl.Coflow([(0, 0, 1.0), (1, 1, 1.0)], release=1, weight=3)], 2)
    >>> slotted_opt(inst)
    9.0
    """
    size = _whole(inst.flow_size, "flow size of flow")
    cap_in = _whole(inst.fabric.ingress_capacity, "ingress capacity of port")
    cap_out = _whole(inst.fabric.egress_capacity, "egress capacity of port")
    src = [int(x) for x in inst.flow_src]
    dst = [int(x) for x in inst.flow_dst]
    coflow = [int(x) for x in inst.flow_coflow]
    weight = [float(x) for x in inst.coflow_weight]
    first = [math.ceil(float(r) - _INT_TOL * max(1.0, float(r))) + 1 for r in inst.flow_release]
    n, nf = inst.num_coflows, len(size)
    preds: list[list[int]] = [[] for _ in range(n)]
    for a, b in inst.dependencies.tolist():
        preds[b].append(a)
    horizon = max(first) - 1 + sum(size)
    states = 0

    def open_coflows(rem: tuple[int, ...]) -> list[bool]:
        left = [False] * n
        for e in range(nf):
            left[coflow[e]] |= rem[e] > 0
        return left

    def vectors(t: int, rem: tuple[int, ...], left: list[bool]):
        """Every feasible amount vector of slot ``t``."""
        res_in, res_out = list(cap_in), list(cap_out)
        amounts = [0] * nf

        def dfs(e: int):
            if e == nf:
                yield tuple(amounts)
                return
            top = 0
            if rem[e] > 0 and t >= first[e] and not any(left[a] for a in preds[coflow[e]]):
                top = min(rem[e], res_in[src[e]], res_out[dst[e]])
            for a in range(top + 1):
                amounts[e] = a
                res_in[src[e]] -= a
                res_out[dst[e]] -= a
                yield from dfs(e + 1)
                res_in[src[e]] += a
                res_out[dst[e]] += a
            amounts[e] = 0

        yield from dfs(0)

    @cache
    def best(t: int, rem: tuple[int, ...]) -> float:
        """Least cost of the coflows still open after slot ``t``."""
        nonlocal states
        states += 1
        if states > max_states:
            raise ValueError(f"slotted_opt: more than {max_states} states; use a smaller instance")
        if not any(rem):
            return 0.0
        if t >= horizon:
            return math.inf
        before = open_coflows(rem)
        value = math.inf
        for amounts in vectors(t + 1, rem, before):
            after = tuple(r - a for r, a in zip(rem, amounts, strict=True))
            now = open_coflows(after)
            done = sum(weight[j] for j in range(n) if before[j] and not now[j])
            value = min(value, done * (t + 1) + best(t + 1, after))
        return value

    return best(0, tuple(size))


def _sequences(n: int, q: int):
    """Every event sequence: a completion order of the ``n`` coflows interleaved with the
    release events ``1..q`` (in time order), cut after the last completion (a release after
    every completion changes nothing) and without repeats. Events: ``("C", j)``, ``("R", i)``."""
    seen: set[tuple[tuple[str, int], ...]] = set()
    for order in itertools.permutations(range(n)):
        for rel_pos in itertools.combinations(range(n + q), q):
            events: list[tuple[str, int]] = []
            it_c, it_r = iter(order), iter(range(1, q + 1))
            for p in range(n + q):
                events.append(("R", next(it_r)) if p in rel_pos else ("C", next(it_c)))
            while events[-1][0] == "R":
                events.pop()
            key = tuple(events)
            if key not in seen:
                seen.add(key)
                yield key


def _sequence_lp(inst: cl.Instance, events, values: np.ndarray) -> float:
    """The least ``Σ w C`` of the schedules with this event sequence (``inf`` if none): event
    times ``τ_1 ≤ … ≤ τ_E`` (release events fixed at their value), amounts ``x[e, k]`` sent in
    interval ``k = (τ_{k-1}, τ_k]`` (``τ_0 = 0``) by a flow that is released and unblocked
    at event ``k - 1`` and whose coflow completes at event ``k`` or later; per port and
    interval ``Σ x ≤ c_v (τ_k - τ_{k-1})``; every flow sends its size."""
    E = len(events)
    at = {ev: k + 1 for k, ev in enumerate(events)}  # 1-based event index
    m = inst.num_ports
    cap = np.concatenate([inst.fabric.ingress_capacity, inst.fabric.egress_capacity])
    preds: dict[int, list[int]] = {}
    for a, b in inst.dependencies.tolist():
        preds.setdefault(b, []).append(a)
    pairs: list[tuple[int, int]] = []
    for e in range(inst.num_flows):
        j = int(inst.flow_coflow[e])
        r = float(inst.flow_release[e])
        lo = 1
        if r > 0:
            i = int(np.searchsorted(values, r)) + 1  # release event of value r
            if ("R", i) not in at:
                return math.inf
            lo = at[("R", i)] + 1
        for a in preds.get(j, []):
            lo = max(lo, at[("C", a)] + 1)
        hi = at[("C", j)]
        if lo > hi:
            return math.inf
        pairs.extend((e, k) for k in range(lo, hi + 1))
    nv = E + len(pairs)
    cost = np.zeros(nv)
    for j in range(inst.num_coflows):
        cost[at[("C", j)] - 1] = inst.coflow_weight[j]
    bounds = [(0.0, None)] * nv
    for (kind, i), k in at.items():
        if kind == "R":
            bounds[k - 1] = (float(values[i - 1]), float(values[i - 1]))
    a_eq = np.zeros((inst.num_flows, nv))
    for col, (e, _) in enumerate(pairs):
        a_eq[e, E + col] = 1.0
    rows = []
    for k in range(2, E + 1):  # τ_{k-1} - τ_k ≤ 0
        row = np.zeros(nv)
        row[k - 2], row[k - 1] = 1.0, -1.0
        rows.append(row)
    cell = np.zeros((2 * m, E, nv))
    for col, (e, k) in enumerate(pairs):
        cell[int(inst.flow_src[e]), k - 1, E + col] = 1.0
        cell[m + int(inst.flow_dst[e]), k - 1, E + col] = 1.0
    for v in range(2 * m):
        for k in range(1, E + 1):
            if not cell[v, k - 1].any():
                continue
            row = cell[v, k - 1].copy()
            row[k - 1] -= cap[v]
            if k > 1:
                row[k - 2] += cap[v]
            rows.append(row)
    res = linprog(
        cost,
        A_ub=np.array(rows) if rows else None,
        b_ub=np.zeros(len(rows)) if rows else None,
        A_eq=a_eq,
        b_eq=inst.flow_size,
        bounds=bounds,
        method="highs",
    )
    if res.status == 2:
        return math.inf
    if res.status != 0:
        raise RuntimeError(f"fluid_opt: linprog ended with status {res.status}: {res.message}")
    return float(res.fun)


def fluid_opt(inst: cl.Instance, *, max_sequences: int = 5_000) -> float:
    """Fluid OPT of ``Σ_j w_j C_j``: the least LP value over every event sequence (module
    notes), each LP built here and solved with :func:`scipy.optimize.linprog`.

    Raises
    ------
    ValueError
        More than ``max_sequences`` sequences (``n! · C(n + q, q)`` at most).

    Examples
    --------
    The same instance in the fluid model: coflow 0 is preempted at 1 for coflow 1 (weight
    3), which completes at 2; coflow 0 completes at 3: ``3·2 + 3 = 9``.

    >>> inst = cl.Instance.from_coflows(
    ...     [cl.Coflow([(0, 0, 2.0)]),
    ...      cl.Coflow([(0, 0, 1.0), (1, 1, 1.0)], release=1, weight=3)], 2)
    >>> round(fluid_opt(inst), 9)
    9.0
    """
    values = np.unique(inst.flow_release)
    values = values[values > 0]
    n, q = inst.num_coflows, len(values)
    if math.factorial(n) * math.comb(n + q, q) > max_sequences:
        raise ValueError(
            f"fluid_opt: {n} coflows and {q} release times give more than {max_sequences} "
            "event sequences; use a smaller instance"
        )
    return min(_sequence_lp(inst, seq, values) for seq in _sequences(n, q))
