"""Order-respecting fluid schedules: a fixed coflow order, rates from a core allocation primitive.

Every ordering-based algorithm (Sincronia, LP-OV list scheduling, the plain orderings of
``coflowlab solve``) ends the same way: given a permutation of the coflows, serve them in that
order with an order-respecting, work-conserving allocation, recomputed whenever a flow is
released or completes. This module does that once, by replaying the instance through the exact
event-driven simulator (:func:`coflowlab.simulate`) with :class:`StaticPriority`, a clairvoyant
policy that never reorders.

Allocations (docs/theory.md#sincronia):

- ``"greedy"``: strict priority. Coflows in order, and inside a coflow its flows in the
  instance's flow order (:meth:`Instance.coflow_flows`), each take the smaller of their two
  residual port capacities (:func:`coflowlab.allocation.priority_greedy`). This is Sincronia's
  GREEDY, whose per-coflow completion obeys ``C_k ≤ R_k + max_e (L_in + L_out)(prefix)`` (F5).
- ``"madd"``: the MADD of Sincronia's offline simulator (Agarwal et al., SIGCOMM 2018; its
  public simulator, docs/fidelity.md#sincronia-madd), rule for rule and with its thresholds:
  coflows in order each get MADD rates against the capacity the earlier ones left (a coflow
  with load on a full port is skipped); the skipped coflows split what is left equally per
  port among their flows that can send (both ports free); then every unfinished flow, in
  order, is greedily backfilled. Rates hold until the **smallest Γ among the coflows MADD
  served** (or a release): a flow that ends sooner leaves its capacity idle until then. (No
  coflow ends before that event: a served coflow ends at its own Γ, a skipped one has a flow
  that cannot send; so the coflow completion times are the simulator's, which records them
  at its events.)
- ``"madd-exact"``: MADD in the order plus the greedy backfill, recomputed at every flow
  completion (coflowlab's ``"madd"`` before issue 14). Never idle while a flow could send, so
  it is the better rule; it differs from Sincronia's on purpose.
"""

from __future__ import annotations

from functools import cache
from typing import Any, ClassVar, Literal

import numpy as np
import numpy.typing as npt

from .allocation import backfill, madd, priority_greedy
from .constants import TOL
from .instance import Instance
from .policy import ClairvoyantState, Decision, InstanceView, ObservedState
from .schedules import FluidSchedule
from .simulator import simulate

__all__ = [
    "ALLOCATIONS",
    "SINCRONIA_RATE_EPS",
    "SINCRONIA_SIZE_EPS",
    "Allocation",
    "StaticPriority",
    "list_schedule",
    "sincronia_madd_rates",
]

Allocation = Literal["greedy", "madd", "madd-exact"]
ALLOCATIONS: tuple[str, ...] = ("greedy", "madd", "madd-exact")

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]

SINCRONIA_RATE_EPS: float = 9.3132257e-13
"""Sincronia's simulator: a free capacity (or a share) below this fraction of a port's rate
counts as none (its ports move 1 MB per time unit; scaled here by the smallest capacity)."""
SINCRONIA_SIZE_EPS: float = 9.53674316e-7
"""Sincronia's simulator: a flow with fewer MB left than this (about one byte) is finished."""


@cache
def _kernels() -> dict[str, Any]:
    """Compiles the Sincronia MADD pass with numba on first use (cached on disk)."""
    from numba import njit

    @njit(cache=True)
    def gamma_of(lo, hi, by_port, port, other, rem, left, size_eps, eps):  # pragma: no cover
        # Γ of one coflow against ``left`` on one side (ingress: port = src); -1 if it has
        # load on a port with no capacity left. A port's load is summed per port pair first,
        # pairs in ascending order, as the reference does (the same floating-point sums).
        worst = -1.0
        k = lo
        while k < hi:
            p = port[by_port[k]]
            load = 0.0
            while k < hi and port[by_port[k]] == p:
                q = other[by_port[k]]
                pair = 0.0
                while k < hi and port[by_port[k]] == p and other[by_port[k]] == q:
                    pair += rem[by_port[k]]
                    k += 1
                load += pair
            if load <= size_eps:
                continue
            if left[p] < eps:
                return -1.0
            if load / left[p] > worst:
                worst = load / left[p]
        return worst

    @njit(cache=True)
    def sincronia_pass(
        ptr, flows, by_in, by_out, rem, src, dst, cap_in, cap_out, marked, eps, size_eps
    ):  # pragma: no cover - numba
        # One decision of the reference's MADD (module docstring); rates per global flow.
        nc = ptr.shape[0] - 1
        left_in = cap_in.copy()
        left_out = cap_out.copy()
        rates = np.zeros(rem.shape[0])
        done = np.zeros(nc, dtype=np.bool_)
        skipped = np.zeros(nc, dtype=np.bool_)
        step = np.inf
        for c in range(nc):  # 1. MADD in order against what the earlier coflows left
            lo, hi = ptr[c], ptr[c + 1]
            done[c] = True
            for k in range(lo, hi):
                if rem[flows[k]] > size_eps:
                    done[c] = False
            if done[c]:
                continue
            g_in = gamma_of(lo, hi, by_in, src, dst, rem, left_in, size_eps, eps)
            g_out = gamma_of(lo, hi, by_out, dst, src, rem, left_out, size_eps, eps)
            if g_in == -1.0 or g_out == -1.0:
                skipped[c] = True
                for k in range(lo, hi):
                    if rem[flows[k]] <= size_eps:
                        marked[flows[k]] = True
                continue
            g = max(g_in, g_out)
            for k in range(lo, hi):
                i = flows[k]
                a, b = src[i], dst[i]
                if rem[i] > size_eps and left_in[a] > eps and left_out[b] > eps:
                    r = rem[i] / g
                    if r > left_in[a] or r > left_out[b]:
                        r = min(left_in[a], left_out[b])
                    rates[i] = r
                    left_in[a] -= r
                    left_out[b] -= r
                else:  # the reference marks it finished, even with bytes left (never backfilled)
                    marked[i] = True
            step = min(step, g)
        # 2. the skipped coflows' flows that can send split the free capacity per port
        n_in = np.zeros(left_in.shape[0], dtype=np.int64)
        n_out = np.zeros(left_out.shape[0], dtype=np.int64)
        for c in range(nc):
            if skipped[c]:
                for k in range(ptr[c], ptr[c + 1]):
                    i = flows[k]
                    if left_in[src[i]] > eps and left_out[dst[i]] > eps and rem[i] > size_eps:
                        n_in[src[i]] += 1
                        n_out[dst[i]] += 1
        for c in range(nc):
            if skipped[c]:
                for k in range(ptr[c], ptr[c + 1]):
                    i = flows[k]
                    a, b = src[i], dst[i]
                    if left_in[a] > eps and left_out[b] > eps and rem[i] > size_eps:
                        x = min(left_in[a] / n_in[a], left_out[b] / n_out[b])
                        rates[i] = x if x >= eps else 0.0
        for c in range(nc):  # the shares are taken together, after all are computed
            if skipped[c]:
                for k in range(ptr[c], ptr[c + 1]):
                    i = flows[k]
                    left_in[src[i]] -= rates[i]
                    left_out[dst[i]] -= rates[i]
        # 3. greedy backfill of every flow not marked finished, in order
        for c in range(nc):
            if done[c]:
                continue
            for k in range(ptr[c], ptr[c + 1]):
                i = flows[k]
                a, b = src[i], dst[i]
                if not marked[i] and left_in[a] > eps and left_out[b] > eps:
                    x = min(left_in[a], left_out[b])
                    x = x if x >= eps else 0.0
                    rates[i] += x
                    left_in[a] -= x
                    left_out[b] -= x
        return rates, step

    return {"pass": sincronia_pass}


def sincronia_madd_rates(
    coflow_ptr: npt.ArrayLike,
    flows: npt.ArrayLike,
    by_ingress: npt.ArrayLike,
    by_egress: npt.ArrayLike,
    remaining: npt.ArrayLike,
    src: npt.ArrayLike,
    dst: npt.ArrayLike,
    cap_in: npt.ArrayLike,
    cap_out: npt.ArrayLike,
    marked: npt.NDArray[np.bool_],
) -> tuple[FloatArray, float]:
    """One allocation of Sincronia's offline MADD (docs/fidelity.md#sincronia-madd).

    Parameters
    ----------
    coflow_ptr, flows
        The unfinished coflows in order: ``flows[coflow_ptr[c]:coflow_ptr[c + 1]]`` are the
        (global) indices of the ``c``-th coflow's flows, in the coflow's flow order.
    by_ingress, by_egress
        The same flows, each coflow's block sorted by (ingress, egress, flow order) and by
        (egress, ingress, flow order): the order in which the reference sums port loads.
    remaining
        Remaining MB per global flow index (0 for flows not listed). As in the reference, a
        flow with less than :data:`SINCRONIA_SIZE_EPS` left counts as finished.
    src, dst, cap_in, cap_out
        Ports per global flow and port capacities.
    marked
        Per global flow, whether the reference has marked it finished (updated in place; a
        marked flow is never backfilled again).

    Returns
    -------
    rates, step
        Rate per global flow, and the time to the next event (the smallest Γ of the coflows
        MADD served; ``inf`` if it served none).

    Examples
    --------
    Coflow A (0→0: 4, 1→1: 1) then B (0→1: 2, 1→1: 2), unit ports. A has Γ = 4 (rates 1 and
    1/4); B needs the full ingress 0, so it is skipped, and of its flows only 1→1 can send: it
    takes all 3/4 left there. The next event is at 4.

    >>> rates, step = sincronia_madd_rates(
    ...     [0, 2, 4], [0, 1, 2, 3], [0, 1, 2, 3], [0, 1, 2, 3], [4.0, 1.0, 2.0, 2.0],
    ...     [0, 1, 0, 1], [0, 1, 1, 1], [1.0, 1.0], [1.0, 1.0], np.zeros(4, dtype=bool))
    >>> rates.tolist(), step
    ([1.0, 0.25, 0.0, 0.75], 4.0)
    """
    cin = np.ascontiguousarray(cap_in, dtype=np.float64)
    cout = np.ascontiguousarray(cap_out, dtype=np.float64)
    eps = SINCRONIA_RATE_EPS * float(min(cin.min(), cout.min()))
    rem = np.ascontiguousarray(remaining, dtype=np.float64)
    seen = np.where(rem < SINCRONIA_SIZE_EPS, 0.0, rem)  # it zeroes such crumbs at every event
    rates, step = _kernels()["pass"](
        np.ascontiguousarray(coflow_ptr, dtype=np.int64),
        np.ascontiguousarray(flows, dtype=np.int64),
        np.ascontiguousarray(by_ingress, dtype=np.int64),
        np.ascontiguousarray(by_egress, dtype=np.int64),
        seen,
        np.ascontiguousarray(src, dtype=np.int64),
        np.ascontiguousarray(dst, dtype=np.int64),
        cin,
        cout,
        marked,
        eps,
        SINCRONIA_SIZE_EPS,
    )
    return rates, float(step)


def _check_order(order: npt.ArrayLike, num_coflows: int) -> IntArray:
    arr = np.asarray(order)
    if arr.ndim != 1 or len(arr) != num_coflows or not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(
            f"order must list each of the {num_coflows} coflows once, got shape {arr.shape}"
        )
    seen = np.zeros(num_coflows, dtype=bool)
    for pos, k in enumerate(arr.tolist()):
        if not 0 <= k < num_coflows or seen[k]:
            what = "out of range" if not 0 <= k < num_coflows else "repeated"
            raise ValueError(f"order[{pos}] = {k} is {what} (coflows are 0..{num_coflows - 1})")
        seen[k] = True
    return arr.astype(np.int64)


class StaticPriority:
    """A clairvoyant policy that serves the coflows in one fixed order (never reordered).

    Parameters
    ----------
    order
        A permutation of the coflow indices, first served first.
    allocation
        ``"greedy"`` (strict priority, default), ``"madd"`` (Sincronia's MADD rule, events at
        the smallest Γ) or ``"madd-exact"`` (MADD plus greedy backfill at every flow
        completion); see the module docstring.

    Examples
    --------
    Thesis Fig. 5.3 with C2 first: C2 finishes at 3, C1 at 7.

    >>> from coflowlab import simulate
    >>> from coflowlab.instances.examples import fig_5_3
    >>> simulate(fig_5_3(), StaticPriority([1, 0])).coflow_completion.tolist()
    [7.0, 3.0]
    """

    name: ClassVar[str] = "static-priority"
    clairvoyant: ClassVar[bool] = True

    def __init__(self, order: npt.ArrayLike, allocation: Allocation = "greedy") -> None:
        if allocation not in ALLOCATIONS:
            raise ValueError(
                f"allocation must be one of {', '.join(ALLOCATIONS)}, got {allocation!r}"
            )
        self.order = np.asarray(order)
        self.allocation = allocation

    def reset(self, view: InstanceView) -> None:
        """Ranks every flow: its coflow's position in the order, then its instance position."""
        n = view.num_coflows
        order = _check_order(self.order, n)
        rank = np.empty(n, dtype=np.int64)
        rank[order] = np.arange(n)
        coflow = np.asarray(view.flow_coflow, dtype=np.int64)
        # a key that sorts flows by coflow rank, then in instance order; no sort here, since
        # an online policy (sincronia-online) builds a new order at every epoch
        self._flow_rank = rank[coflow] * len(coflow) + np.arange(len(coflow), dtype=np.int64)
        self._coflow_rank = rank
        self._cap_in = np.asarray(view.cap_in, dtype=np.float64)
        self._cap_out = np.asarray(view.cap_out, dtype=np.float64)
        self._next: float | None = None  # "madd": the next event (smallest Γ)
        if self.allocation == "madd":
            # the orders in which Sincronia's simulator sums port loads (see sincronia_madd_rates)
            src = np.asarray(view.flow_src, dtype=np.int64)
            dst = np.asarray(view.flow_dst, dtype=np.int64)
            idx = np.arange(len(coflow), dtype=np.int64)
            self._by_in = np.lexsort((idx, dst, src, rank[coflow]))
            self._by_out = np.lexsort((idx, src, dst, rank[coflow]))
            self._marked = np.zeros(len(coflow), dtype=bool)

    def decide(self, state: ObservedState) -> Decision:
        """Rates of the active flows in the fixed order."""
        st: ClairvoyantState = state  # type: ignore[assignment]
        flows = np.asarray(st.flows)
        priority = np.argsort(self._flow_rank[flows], kind="stable")
        src, dst = np.asarray(st.src), np.asarray(st.dst)
        if self.allocation == "greedy":
            rates = priority_greedy(priority, src, dst, self._cap_in, self._cap_out)
            return Decision(rates)
        t = float(st.time)
        nxt = self._next if self.allocation == "madd" and not len(st.arrived) else None
        if nxt is not None and t < nxt * (1 - TOL):  # before Sincronia's next event: keep rates
            return Decision(None, wakeup=nxt, notify="coflow")
        coflow = np.asarray(st.coflow)[priority]
        cut = np.flatnonzero(np.diff(coflow)) + 1
        ptr = np.concatenate([[0], cut, [len(priority)]]).astype(np.int64)
        if self.allocation == "madd-exact":
            rates, _ = madd(ptr, priority, st.remaining, src, dst, self._cap_in, self._cap_out)
            return Decision(backfill(rates, priority, src, dst, self._cap_in, self._cap_out))
        return self._sincronia(st, flows, priority, ptr)

    def _sincronia(
        self, st: ClairvoyantState, flows: IntArray, priority: IntArray, ptr: IntArray
    ) -> Decision:
        """Sincronia's MADD (module docstring); the kernel works on active positions."""
        local = np.full(len(self._marked), -1, dtype=np.int64)
        local[flows] = np.arange(len(flows), dtype=np.int64)
        by_in, by_out = local[self._by_in], local[self._by_out]
        marked = self._marked[flows]
        remaining = np.asarray(st.remaining, dtype=np.float64)
        crumbs = remaining < SINCRONIA_SIZE_EPS
        if crumbs.any():  # the reference drops these last bytes; we send them first
            return self._send_crumbs(crumbs, priority, st)
        rates, step = sincronia_madd_rates(
            ptr, priority, by_in[by_in >= 0], by_out[by_out >= 0], remaining,
            st.src, st.dst, self._cap_in, self._cap_out, marked,
        )  # fmt: skip
        self._marked[flows] = marked
        if not np.isfinite(step):  # nothing served (not at full capacity): next flow event
            self._next = None
            return Decision(rates, notify="flow")
        self._next = float(st.time) + step
        return Decision(rates, wakeup=self._next, notify="coflow")

    def _send_crumbs(
        self, crumbs: npt.NDArray[np.bool_], priority: IntArray, st: ClairvoyantState
    ) -> Decision:
        """Sends the crumbs the reference drops, before its next allocation.

        The reference counts a flow with less than :data:`SINCRONIA_SIZE_EPS` MB left as
        finished, so a coflow whose Γ exceeds the next event by less than that ends at the
        event, its last bytes never sent. A verified schedule must send them: every other flow
        pauses while the crumbs take their ports greedily, in order (for about 1e-6 time units
        at unit capacity), and the reference's allocation follows at their completion
        (docs/fidelity.md#sincronia-madd)."""
        order = priority[crumbs[priority]]
        src, dst = np.asarray(st.src), np.asarray(st.dst)
        rates = priority_greedy(order, src, dst, self._cap_in, self._cap_out)
        self._next = None
        return Decision(rates, notify="flow")


def list_schedule(
    instance: Instance, order: npt.ArrayLike, allocation: Allocation = "greedy"
) -> FluidSchedule:
    """The fluid schedule of ``instance`` that serves its coflows in ``order``.

    Release times and dependencies are respected (a flow sends from its release on; a
    dependent coflow starts after the coflows it depends on). The schedule is not verified
    here: callers hand it to :func:`coflowlab.verify` (or :func:`coflowlab.solution.
    schedule_solution`), which computes the completion times.

    Parameters
    ----------
    instance
        The instance.
    order
        A permutation of ``0..n-1``, first served first.
    allocation
        ``"greedy"``, ``"madd"`` or ``"madd-exact"`` (module docstring).

    Raises
    ------
    ValueError
        ``order`` is not a permutation of the coflows (the offending position is named), or
        the allocation is unknown.

    Examples
    --------
    >>> from coflowlab import verify
    >>> from coflowlab.instances.examples import fig_5_3
    >>> inst = fig_5_3()
    >>> verify(inst, list_schedule(inst, [1, 0])).coflow_completion.tolist()
    [7.0, 3.0]
    """
    _check_order(order, instance.num_coflows)
    policy = StaticPriority(order, allocation)
    result = simulate(instance, policy, verify_schedule=False, record=True)
    assert result.schedule is not None
    return result.schedule
