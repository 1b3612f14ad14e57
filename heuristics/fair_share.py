"""The fairness baselines of Chowdhury's thesis Ch. 7 (§7.4, §7.7; definitions in its §2.8
table of baselines): DRF (``drf``) and PS-P (``ps-p``). Per-flow fairness is ``fair``
(:mod:`.fair`).

- **DRF** (Ghodsi et al., NSDI 2011; thesis §7.3.2): dominant resource fairness on the ``2m``
  links; each coflow's progress rises along its correlation vector until a link it uses is full
  (:func:`.correlation.drf_progress`). Optimal isolation guarantee ``P*``, strategy-proof, not
  work conserving (thesis Lemma D.3.6).
- **PS-P** (FairCloud, Popa et al., SIGCOMM 2012; thesis §7.4.1): every link is split equally
  among the coflows using it (``C^i / n_i`` each, demand-agnostic), each coflow's share on a
  port split equally among its flows there; a flow gets the smaller of its two shares. Then
  work conservation "to whoever wants it" (thesis Appendix D.2): per-flow max-min fair filling
  of what is left.

Both recompute at every arrival and completion: DRF from the remaining bytes, PS-P (which is
demand-agnostic) from which flows are active.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

import numpy as np

from coflowlab.policy import ClairvoyantState, Decision, InstanceView, ObservedState

from .correlation import EPS, Grouping, active_coflows, check_reports, drf_progress, unit_rates

__all__ = ["DRF", "PSP"]


class DRF:
    """Dominant Resource Fairness on the up- and downlinks (``drf``).

    Parameters
    ----------
    reported
        Optional misreports: coflow index → the ``2m``-vector it reports.
    fast
        ``True`` (default): the grouping, loads and unit rates are compiled passes over the
        active flows (:mod:`._hug_jit`), the same rates bit for bit; ``False``: the NumPy
        reference.

    Examples
    --------
    Coflex Fig. 2: DRF = HUG's stage 1, both coflows at progress 2/3 and 2/9 of link 1 idle.

    >>> from coflowlab import simulate
    >>> from coflowlab.instances.examples import coflex_fig2
    >>> res = simulate(coflex_fig2(), DRF())
    >>> [round(x, 12) for x in res.schedule.rates_at(0.0).tolist()]
    [0.666666666667, 0.333333333333, 0.111111111111, 0.666666666667]
    """

    name: ClassVar[str] = "drf"
    clairvoyant: ClassVar[bool] = True

    def __init__(
        self, *, reported: Mapping[int, Sequence[float]] | None = None, fast: bool = True
    ) -> None:
        self.reported = check_reports(reported)
        self.fast = bool(fast)
        self.grouping: Grouping | None = None

    def reset(self, view: InstanceView) -> None:
        self.cap_in = np.asarray(view.cap_in, dtype=float)
        self.cap_out = np.asarray(view.cap_out, dtype=float)
        self.grouping = Grouping(view) if self.fast else None

    def decide(self, state: ObservedState) -> Decision:
        assert isinstance(state, ClairvoyantState)
        a = active_coflows(state, self.cap_in, self.cap_out, self.reported, self.grouping)
        p = drf_progress(a.d)
        return Decision(rates=p[a.group] * unit_rates(a, self.fast))


class PSP:
    """PS-P: per-link equal split among coflows, then per-flow work conservation (``ps-p``).

    The decision is compiled (:mod:`._psp_jit`): the policy keeps the active flows, their
    counts per (coflow, port) and per port pair between decisions, updated from the flows
    that arrived and completed, and returns only the rates that changed. The work
    conservation fills the capacity left on the ``m x m`` port pairs (flows between the same
    two ports fill together), so a decision costs two passes over the active flows and one
    over the pairs, with no sort. Sums are compensated and each port's fill level is
    recomputed before it fills, so the rates are within a few roundings of exact arithmetic.

    A coflow counts on a link while it has an active flow there: the simulator completes a
    flow at the event where its remaining bytes reach the tolerance, so an active flow always
    has bytes left.

    Examples
    --------
    Coflex Fig. 2: each coflow gets half of each link; progress 1/2 each (thesis §7.4.1).

    >>> from coflowlab import simulate
    >>> from coflowlab.instances.examples import coflex_fig2
    >>> res = simulate(coflex_fig2(), PSP())
    >>> res.schedule.rates_at(0.0).tolist()
    [0.5, 0.5, 0.5, 0.5]
    """

    name: ClassVar[str] = "ps-p"
    clairvoyant: ClassVar[bool] = True

    def reset(self, view: InstanceView) -> None:
        m, nf = view.num_ports, view.num_flows
        self.cap = np.concatenate([view.cap_in, view.cap_out]).astype(np.float64)
        self.tol = EPS * max(float(self.cap.max(initial=0.0)), 1.0)  # as in correlation.fill
        self.src = np.ascontiguousarray(view.flow_src, dtype=np.int64)
        self.dst = np.ascontiguousarray(view.flow_dst, dtype=np.int64)
        # a slot for every (coflow, link) that some flow uses; link m + j is egress port j
        coflow = np.asarray(view.flow_coflow, dtype=np.int64) * (2 * m)
        keys, slots = np.unique(
            np.concatenate([coflow + self.src, coflow + m + self.dst]), return_inverse=True
        )
        self.slot_in = np.ascontiguousarray(slots[:nf], dtype=np.int64)
        self.slot_out = np.ascontiguousarray(slots[nf:], dtype=np.int64)
        self.slot_link = np.ascontiguousarray(keys % (2 * m), dtype=np.int64)
        self.count = np.zeros(len(keys), dtype=np.int64)  # active flows of each slot
        self.n_link = np.zeros(2 * m, dtype=np.int64)  # coflows with active flows on a link
        self.pairs = np.zeros((m, m))  # active flows of each (ingress, egress) pair
        # the active flows, packed: position -> flow, ports, slots, current rate
        self.n_active = 0
        self.flow = np.zeros(nf, dtype=np.int64)
        self.s = np.zeros(nf, dtype=np.int64)
        self.t = np.zeros(nf, dtype=np.int64)
        self.si = np.zeros(nf, dtype=np.int64)
        self.so = np.zeros(nf, dtype=np.int64)
        self.rate = np.zeros(nf)
        self.where = np.zeros(nf, dtype=np.int64)  # flow -> position

    def decide(self, state: ObservedState) -> Decision:
        assert isinstance(state, ClairvoyantState)
        from ._psp_jit import decide  # numba loads on first use only

        self.n_active, flows, rates = decide(
            np.ascontiguousarray(state.arrived, dtype=np.int64),
            np.ascontiguousarray(state.completed, dtype=np.int64),
            self.flow, self.s, self.t, self.si, self.so, self.rate, self.where,
            self.n_active, self.src, self.dst, self.slot_in, self.slot_out, self.slot_link,
            self.count, self.n_link, self.pairs, self.cap, self.tol,
        )  # fmt: skip
        return Decision(update=(flows, rates))
