"""HUG (``hug``, ``hug-cooperative``): optimal isolation guarantee, then work conservation.

Chowdhury's PhD thesis (UC Berkeley 2015), Ch. 7, Algorithm 6 (§7.5.1), with its properties in
Appendix D.3; the same mechanism is Coflex's baseline (Wang, Ma, Li, Li, IEEE INFOCOM 2017,
§II-C). At every event, from the active coflows' remaining bytes (clairvoyant, as MADD computes
the vectors, thesis §7.5.3):

1. **Stage 1** (DRF in closed form, Eq. 7.2): ``P* = 1 / max_i Σ_k d_k^i`` and every coflow gets
   ``a_k = P* · d_k``, i.e. each of its flows ``P* · remaining / Γ_k``. Every coflow's
   progress is then exactly ``P*``.
2. **Stage 2** (work conservation): the capacity left is filled by progressive filling along
   each coflow's demand (:func:`.correlation.fill`), **capped** at ``c_k^i ≤ P*`` on every link
   in the non-cooperative, strategy-proof mode (``cooperative=False``, Theorem D.3.3), and
   **uncapped** in the cooperative mode (``cooperative=True``, §7.5.2: then HUG is work
   conserving).

How the spare is split among coflows on a link is not fixed by the thesis ("local max-min
fairness", §7.5.2) nor by Coflex ("evenly", §II-C); here it is in proportion to each coflow's
demand there (docs/hug-coflex.md#stage-2). The progress vector does not depend on this choice in
the capped mode (every coflow's progress is ``P*``, its bottleneck being capped there).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from coflowlab.policy import ClairvoyantState, Decision, InstanceView, ObservedState

from .correlation import (
    EPS,
    Grouping,
    active_coflows,
    check_reports,
    fill,
    optimal_isolation,
    unit_rates,
)

if TYPE_CHECKING:
    from coflowlab.instance import Instance

    from .hug_classes import HUGClassEngine

__all__ = ["HUG", "HUGCooperative"]


class HUG:
    """HUG, thesis Algorithm 6: every coflow gets progress ``P*``, then the spare.

    Parameters
    ----------
    cooperative
        ``False`` (default, ``hug``): stage 2 is capped at ``c_k^i ≤ P*`` on every link
        (strategy-proof). ``True`` (``hug-cooperative``): uncapped, work conserving.
    reported
        Optional misreports for experiments: coflow index → the ``2m``-vector (ingress
        ports, then egress ports) it reports instead of its true correlation vector.
    fast
        ``True`` (default): the decision is compiled (:mod:`._hug_jit`): the grouping and
        ``P*`` are the reference's bit for bit; the stage-1 rates and the filling (capped:
        by slot, one coflow on one link; uncapped: by port pair) give the reference's
        rates to roundings (within 1e-12 of the largest capacity,
        tests/heuristics/test_correlation_fast.py). ``False``: the NumPy reference.
        With ``fast=True`` and no misreports, :func:`coflowlab.simulate` replays the whole
        run in one compiled loop (:meth:`class_engine`).

    Examples
    --------
    Coflex Fig. 2 (thesis Fig. 7.7 with the links swapped): both coflows at progress 2/3, B
    takes link 1's spare up to the cap: rates A = (2/3, 1/3), B = (1/3, 2/3).

    >>> from coflowlab import simulate
    >>> from coflowlab.instances.examples import coflex_fig2
    >>> res = simulate(coflex_fig2(), HUG())
    >>> [round(x, 12) for x in res.schedule.rates_at(0.0).tolist()]
    [0.666666666667, 0.333333333333, 0.333333333333, 0.666666666667]
    >>> res.coflow_completion.tolist()
    [1.5, 2.5]
    """

    name: ClassVar[str] = "hug"
    clairvoyant: ClassVar[bool] = True

    def __init__(
        self,
        *,
        cooperative: bool = False,
        reported: Mapping[int, Sequence[float]] | None = None,
        fast: bool = True,
    ) -> None:
        self.cooperative = bool(cooperative)
        self.fast = bool(fast)
        self.grouping: Grouping | None = None
        self.reported = check_reports(reported)
        self.p_star = float("nan")

    def __repr__(self) -> str:
        return f"HUG(cooperative={self.cooperative}, fast={self.fast})"

    def reset(self, view: InstanceView) -> None:
        self.cap_in = np.asarray(view.cap_in, dtype=float)
        self.cap_out = np.asarray(view.cap_out, dtype=float)
        self.p_star = float("nan")
        self.grouping = Grouping(view, counts=not self.cooperative) if self.fast else None

    def class_engine(self, instance: Instance, tol: float) -> HUGClassEngine | None:
        """The whole replay in one compiled event loop (one rate class per flow) that
        :func:`coflowlab.simulate` uses when it can (:mod:`coflowlab.class_simulation`,
        :mod:`coflowlab.heuristics.hug_classes`); ``None`` where it does not apply
        (``fast=False``, misreports, coflow dependencies, or a subclass, whose changes the
        engine would not see), so the per-flow event loop runs."""
        from .hug_classes import HUGClassEngine

        if HUGClassEngine.unsupported(self, instance) is not None:
            return None
        return HUGClassEngine(self, instance, tol=tol)

    def decide(self, state: ObservedState) -> Decision:
        assert isinstance(state, ClairvoyantState)
        a = active_coflows(state, self.cap_in, self.cap_out, self.reported, self.grouping)
        p_star = optimal_isolation(a.d)
        self.p_star = p_star
        if self.fast:
            from ._hug_jit import hug_rates  # numba loads on first use only

            tol = EPS * max(float(a.cap.max(initial=0.0)), 1.0)  # as in correlation.fill
            assert self.grouping is not None
            rates, _ = hug_rates(
                a.group, a.src, a.dst, a.remaining, a.load, self.grouping.count, a.d, a.cap,
                p_star, not self.cooperative, tol, self.grouping.pair,
            )  # fmt: skip
            return Decision(rates=rates)
        unit = unit_rates(a)
        rates = p_star * unit if np.isfinite(p_star) else unit
        cap = None if self.cooperative else p_star
        rates = fill(rates, a, unit, cap_share=cap)
        return Decision(rates=rates)


class HUGCooperative(HUG):
    """HUG in the cooperative mode (``hug-cooperative``, thesis §7.5.2): stage 2 uncapped,
    so the allocation is work conserving; the isolation guarantee is still ``P*``.

    Examples
    --------
    Coflex Fig. 2: the 2/9 of link 1 left by stage 1 goes to both coflows in proportion to
    their demand there (1 and 1/6), as far as their other ports allow.

    >>> from coflowlab import simulate
    >>> from coflowlab.instances.examples import coflex_fig2
    >>> simulate(coflex_fig2(), HUGCooperative()).verified
    True
    """

    name: ClassVar[str] = "hug-cooperative"

    def __init__(
        self, *, reported: Mapping[int, Sequence[float]] | None = None, fast: bool = True
    ) -> None:
        super().__init__(cooperative=True, reported=reported, fast=fast)
