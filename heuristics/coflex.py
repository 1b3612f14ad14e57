"""Coflex (``coflex``, ``coflex-naive``): the fairness–efficiency knob α.

Wang, Ma, Li, Li, "Coflex: Navigating the Fairness-Efficiency Tradeoff for Coflow Scheduling",
IEEE INFOCOM 2017. Recomputed at every coflow arrival and departure (§IV-B, Algorithm 2), from
the active coflows' remaining bytes:

1. **Stage 1**: every coflow gets ``α`` times its DRF/HUG allocation, ``a_k = α P* d_k``
   (eq. 7), so every coflow's progress is at least ``α P*``.
2. **Stage 2** (Algorithm 2): the unallocated bandwidth goes to the coflows in ascending order
   of their bottleneck completion time Γ_k (SEBF, eq. 1; remaining bytes on the full
   capacities, as Varys' default key), each raising its progress along its demand as far as
   the residual capacity allows (MADD on what is left, :func:`coflowlab.allocation.madd`);
   **no cap**. A coflow that needs a port stage 1 and the coflows before it have filled gets
   nothing from MADD (the paper's Algorithm 2, default); with ``skipped="share"`` such coflows
   split what is left equally per port first, as Varys does (docs/fidelity.md#skipped;
   docs/hug-coflex.md#coflex-stage-2). With ``backfill=True`` (default) what is still left is
   then handed out greedily in the same order (:func:`coflowlab.allocation.backfill`), as Varys
   does, so the allocation is work conserving; the paper leaves this open (its 97%
   utilization suggests it; docs/hug-coflex.md#coflex-stage-2).

α = 1 keeps HUG's isolation guarantee ``P*``; α = 0 is SEBF + MADD (+ backfill), i.e. Varys
without starvation avoidance.

:class:`CoflexNaive` is Algorithm 1 (``NaiveTradeoff(α)``, §III-A): the same stage 1, then
the spare under HUG's cap lowered to ``a_k^i ≤ α P*`` on every link (strategy-proof, Theorem 1;
its utilization can be arbitrarily low, Theorem 2). Its stage 2 is the greedy backfill in SEBF
order under the cap (S2-MADD could not add anything: every coflow's bottleneck is at the cap).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar, Literal

import numpy as np

from coflowlab.allocation import backfill as greedy_backfill
from coflowlab.allocation import full_port_threshold, madd, madd_share
from coflowlab.policy import ClairvoyantState, Decision, InstanceView, ObservedState

from .correlation import (
    Active,
    Grouping,
    active_coflows,
    check_reports,
    optimal_isolation,
    unit_rates,
)

__all__ = ["Coflex", "CoflexNaive"]


def _alpha(alpha: float) -> float:
    a = float(alpha)
    if not 0.0 <= a <= 1.0:
        raise ValueError(f"alpha: must be in [0, 1], not {alpha!r}")
    return a


def _sebf(a: Active) -> np.ndarray:
    """Positions of the active coflows in SEBF order (smallest Γ first, then lower index)."""
    return np.lexsort((a.ids, a.gamma))


def _flow_order(a: Active, rank: np.ndarray) -> np.ndarray:
    """Active flows by their coflow's SEBF rank, then in the state's order."""
    pos = np.empty(len(rank), dtype=np.int64)
    pos[rank] = np.arange(len(rank))
    return np.lexsort((np.arange(len(a.group)), pos[a.group]))


class Coflex:
    """Coflex(α), Algorithm 2: ``α P*`` progress for every coflow, the rest by SEBF.

    Parameters
    ----------
    alpha
        The fairness knob in [0, 1] (default 0.5, the paper's default, §V-A).
    backfill
        Hand out, greedily in SEBF order, the capacity stage 2's MADD leaves (default
        ``True``: work conserving at every recomputation).
    reported
        Optional misreports: coflow index → the ``2m``-vector it reports in stage 1 (ingress
        ports, then egress ports).
    fast
        ``True`` (default): the grouping, loads and stage 1 are compiled passes over the
        active flows (:mod:`._hug_jit`), with the reference's operations in its order (the
        same rates bit for bit); ``False``: the NumPy reference.
    recompute_on
        When the allocation is recomputed: ``"coflow"`` (default: at coflow arrivals and
        departures, as Coflex's stage 2 is stated, §IV) or ``"flow"`` (also at every flow
        completion, as Varys backfills). With ``"coflow"`` capacity a finished flow frees
        idles until the next coflow event, so α = 0 is Varys-like, and equal to Varys
        without starvation avoidance only with ``"flow"`` (docs/hug-coflex.md).
    skipped
        What stage 2 gives a coflow MADD cannot serve (a port it needs is full): ``"wait"``
        (default, Algorithm 2 as stated and as its worked examples read) nothing but the
        backfill; ``"share"`` an equal per-port split of what MADD left, before the backfill,
        as Varys' default. With ``"wait"`` and recomputation at coflow events only, ports idle
        between recomputations, as issue 14 found for Varys: on the Facebook trace α = 0
        averages 50.2 s against Varys' 26.5 s (docs/hug-coflex.md#frontier).

    Examples
    --------
    Coflex Fig. 2 with sizes (TC-CX-7, no backfill): at α = 1/2, A first (Γ_A = 1 < Γ_B = 2)
    takes link 1's 11/18 left by stage 1; CCTs 18/17 and 46/17.

    >>> from coflowlab import simulate
    >>> from coflowlab.instances.examples import coflex_fig2
    >>> res = simulate(coflex_fig2(), Coflex(alpha=0.5, backfill=False))
    >>> [round(x * 17, 9) for x in res.coflow_completion.tolist()]
    [18.0, 46.0]
    """

    name: ClassVar[str] = "coflex"
    clairvoyant: ClassVar[bool] = True

    def __init__(
        self,
        alpha: float = 0.5,
        *,
        backfill: bool = True,
        reported: Mapping[int, Sequence[float]] | None = None,
        recompute_on: Literal["coflow", "flow"] = "coflow",
        skipped: Literal["share", "wait"] = "wait",
        fast: bool = True,
    ) -> None:
        self.alpha = _alpha(alpha)
        self.fast = bool(fast)
        self.grouping: Grouping | None = None
        if skipped not in ("share", "wait"):
            raise ValueError(f"skipped must be 'share' or 'wait', got {skipped!r}")
        self.skipped = skipped
        self.backfill = bool(backfill)
        self.reported = check_reports(reported)
        if recompute_on not in ("coflow", "flow"):
            raise ValueError(f"recompute_on must be 'coflow' or 'flow', got {recompute_on!r}")
        self.recompute_on = recompute_on

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(alpha={self.alpha}, backfill={self.backfill}, "
            f"recompute_on={self.recompute_on!r}, skipped={self.skipped!r}, fast={self.fast})"
        )

    def reset(self, view: InstanceView) -> None:
        self.cap_in = np.asarray(view.cap_in, dtype=float)
        self.cap_out = np.asarray(view.cap_out, dtype=float)
        self.p_star = float("nan")
        self.grouping = Grouping(view) if self.fast else None

    def stage1(self, a: Active) -> np.ndarray:
        """``α P* d_k`` as flow rates."""
        p_star = optimal_isolation(a.d)
        self.p_star = p_star
        if not np.isfinite(p_star) or self.alpha == 0.0:
            return np.zeros(len(a.group))
        return self.alpha * p_star * unit_rates(a, self.fast)

    def decide(self, state: ObservedState) -> Decision:
        assert isinstance(state, ClairvoyantState)
        a = active_coflows(state, self.cap_in, self.cap_out, self.reported, self.grouping)
        rates = self.stage1(a)
        rank = _sebf(a)
        m = a.m
        used_in = np.bincount(a.src, rates, m)
        used_out = np.bincount(a.dst, rates, m)
        res_in = np.maximum(self.cap_in - used_in, 0.0)
        res_out = np.maximum(self.cap_out - used_out, 0.0)
        # MADD in SEBF order on the residual capacity (S2-MADD)
        members = np.argsort(a.group, kind="stable")
        starts = np.searchsorted(a.group[members], np.arange(len(a.ids) + 1))
        ptr = [0]
        flows: list[np.ndarray] = []
        for c in rank:
            flows.append(members[starts[c] : starts[c + 1]])
            ptr.append(ptr[-1] + len(flows[-1]))
        order_flows = np.concatenate(flows) if flows else np.zeros(0, dtype=np.int64)
        if self.skipped == "share":
            full = full_port_threshold(self.cap_in, self.cap_out)
            extra, _ = madd_share(
                ptr, order_flows, a.remaining, a.src, a.dst, res_in, res_out, full_below=full
            )
        else:
            extra, _ = madd(ptr, order_flows, a.remaining, a.src, a.dst, res_in, res_out)
        rates = rates + extra
        if self.backfill:
            rates = greedy_backfill(
                rates, _flow_order(a, rank), a.src, a.dst, self.cap_in, self.cap_out
            )
        return Decision(rates=rates, notify=self.recompute_on)


class CoflexNaive(Coflex):
    """NaiveTradeoff(α), Coflex Algorithm 1 (``coflex-naive``): stage 1 as Coflex, then the
    spare greedily in SEBF order under the cap ``a_k^i ≤ α P*`` (strategy-proof, Theorem 1).
    With ``fast`` (default) the capped backfill is compiled too
    (:func:`._hug_jit.naive_backfill`, the same additions in the same order).

    Examples
    --------
    Coflex Fig. 2 at α = 1/2 (TC-CX-6): progress 1/3 each whatever stage 2 does; stage 1 gives
    A ⟨1/3, 1/6⟩ and B ⟨1/18, 1/3⟩, and the capped backfill lifts every flow to the cap 1/3.

    >>> from coflowlab import simulate
    >>> from coflowlab.instances.examples import coflex_fig2
    >>> res = simulate(coflex_fig2(), CoflexNaive(alpha=0.5))
    >>> [round(x, 12) for x in res.schedule.rates_at(0.0).tolist()]
    [0.333333333333, 0.333333333333, 0.333333333333, 0.333333333333]
    """

    name: ClassVar[str] = "coflex-naive"

    def __init__(
        self,
        alpha: float = 0.5,
        *,
        reported: Mapping[int, Sequence[float]] | None = None,
        fast: bool = True,
    ) -> None:
        super().__init__(alpha, backfill=True, reported=reported, fast=fast)

    def decide(self, state: ObservedState) -> Decision:
        assert isinstance(state, ClairvoyantState)
        a = active_coflows(state, self.cap_in, self.cap_out, self.reported, self.grouping)
        rates = self.stage1(a)
        if not np.isfinite(self.p_star):
            return Decision(rates=rates, notify="coflow")
        if self.fast:  # the same backfill, compiled (the same additions in the same order)
            from ._hug_jit import naive_backfill

            limit = self.alpha * self.p_star * a.cap
            out = naive_backfill(rates, a.group, a.src, a.dst, a.cap, limit, _sebf(a), len(a.ids))
            return Decision(rates=out, notify="coflow")
        m = a.m
        m2 = 2 * m
        cap = self.alpha * self.p_star * a.cap
        res = a.cap - np.bincount(a.src, rates, m2) - np.bincount(m + a.dst, rates, m2)
        held: dict[tuple[int, int], float] = {}
        g, s, t = a.group.tolist(), a.src.tolist(), (m + a.dst).tolist()
        for f in range(len(g)):
            for link in (s[f], t[f]):
                held[g[f], link] = held.get((g[f], link), 0.0) + float(rates[f])
        out = rates.copy()
        for f in _flow_order(a, _sebf(a)).tolist():
            k, i, j = g[f], s[f], t[f]
            add = min(res[i], res[j], cap[i] - held[k, i], cap[j] - held[k, j])
            if add > 0:
                out[f] += add
                res[i] -= add
                res[j] -= add
                held[k, i] += add
                held[k, j] += add
        return Decision(rates=out, notify="coflow")
