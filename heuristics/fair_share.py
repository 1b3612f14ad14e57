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

Both recompute at every arrival and completion, from the remaining bytes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

import numpy as np

from coflowlab.policy import ClairvoyantState, Decision, InstanceView, ObservedState

from .correlation import active_coflows, check_reports, drf_progress, fill, unit_rates

__all__ = ["DRF", "PSP"]


class DRF:
    """Dominant Resource Fairness on the up- and downlinks (``drf``).

    Parameters
    ----------
    reported
        Optional misreports (Python only): coflow index → the ``2m``-vector it reports.

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

    def __init__(self, *, reported: Mapping[int, Sequence[float]] | None = None) -> None:
        self.reported = check_reports(reported)

    def reset(self, view: InstanceView) -> None:
        self.cap_in = np.asarray(view.cap_in, dtype=float)
        self.cap_out = np.asarray(view.cap_out, dtype=float)

    def decide(self, state: ObservedState) -> Decision:
        assert isinstance(state, ClairvoyantState)
        a = active_coflows(state, self.cap_in, self.cap_out, self.reported)
        p = drf_progress(a.d)
        return Decision(rates=p[a.group] * unit_rates(a))


class PSP:
    """PS-P: per-link equal split among coflows, then per-flow work conservation (``ps-p``).

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
        self.cap_in = np.asarray(view.cap_in, dtype=float)
        self.cap_out = np.asarray(view.cap_out, dtype=float)

    def decide(self, state: ObservedState) -> Decision:
        assert isinstance(state, ClairvoyantState)
        a = active_coflows(state, self.cap_in, self.cap_out)
        m2 = len(a.cap)
        s, t = a.src, a.m + a.dst
        uses = a.load > 0
        n_link = uses.sum(axis=0)  # coflows using each link
        nc = len(a.ids)
        flows_on = np.bincount(a.group * m2 + s, minlength=nc * m2) + np.bincount(
            a.group * m2 + t, minlength=nc * m2
        )
        with np.errstate(divide="ignore", invalid="ignore"):
            share = np.where(n_link > 0, a.cap / n_link, 0.0)
        rates = np.minimum(
            share[s] / flows_on[a.group * m2 + s], share[t] / flows_on[a.group * m2 + t]
        )
        rates = fill(rates, a, np.ones(len(rates)))
        return Decision(rates=rates)
