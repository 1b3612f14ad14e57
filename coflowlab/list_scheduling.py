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
- ``"madd"``: Sincronia's offline MADD, rule for rule (docs/fidelity.md#sincronia-madd): coflows
  in order each get MADD rates against the capacity the earlier ones left, a coflow that needs
  a full port is skipped; the skipped coflows share what is left equally per port
  (:func:`coflowlab.allocation.madd_share`); then every flow, in order, is greedily backfilled.
  The rates are kept until the **smallest Γ among the coflows MADD served** (or a release):
  flows that finish before it (backfilled ones) leave their capacity idle until then, as in
  Sincronia's simulator.
- ``"madd-exact"``: MADD in the order plus the greedy backfill, recomputed at every flow
  completion (coflowlab's ``"madd"`` before issue 14). Never idle while a flow could send, so
  it is the better rule; it differs from Sincronia's on purpose.
"""

from __future__ import annotations

from typing import ClassVar, Literal

import numpy as np
import numpy.typing as npt

from .allocation import backfill, madd, madd_share, priority_greedy
from .constants import TOL
from .instance import Instance
from .policy import ClairvoyantState, Decision, InstanceView, ObservedState
from .schedules import FluidSchedule
from .simulator import simulate

__all__ = ["ALLOCATIONS", "Allocation", "StaticPriority", "list_schedule"]

Allocation = Literal["greedy", "madd", "madd-exact"]
ALLOCATIONS: tuple[str, ...] = ("greedy", "madd", "madd-exact")

IntArray = npt.NDArray[np.int64]


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
        full = TOL * float(min(self._cap_in.min(), self._cap_out.min()))
        rates, gamma = madd_share(
            ptr, priority, st.remaining, src, dst, self._cap_in, self._cap_out, full_below=full
        )
        rates = backfill(rates, priority, src, dst, self._cap_in, self._cap_out)
        served = gamma[np.isfinite(gamma)]
        self._next = t + float(served.min()) if len(served) else None
        return Decision(rates, wakeup=self._next, notify="coflow")


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
