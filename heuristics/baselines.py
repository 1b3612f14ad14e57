"""Per-flow baselines: per-flow priority and Baraat's FIFO-LM (fair sharing is in
:mod:`coflowlab.heuristics.fair`).

- :class:`PerFlowPriority` (``pfp``): per-flow prioritisation, smallest remaining flow first
  with strict priority (pFabric/PDQ-like; thesis L754, L1137). Clairvoyant.
- :class:`FifoLM` (``fifo-lm``): Baraat's FIFO with limited multiplexing, decentralised, as
  the thesis simulates it (L1702, L2083; ``specs/aalo-hug-thesis-ch6-8.md`` §1.12).
  Non-clairvoyant.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar, Literal

import numpy as np
import numpy.typing as npt

from coflowlab.instance import Instance
from coflowlab.policy import ClairvoyantState, Decision, InstanceView, ObservedState

from .aalo import CROSS_TOL, _first_crossing, _LocalBytes, dclas_allocation
from .pfp_kernels import kernels as pfp_kernels

__all__ = ["FifoLM", "PerFlowPriority"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


# ---------------------------------------------------------------------------------- PFP
TieBreak = Literal["fifo", "lifo", "smaller_coflow"]


class PerFlowPriority:
    """Per-flow prioritisation (``pfp``): smallest remaining flow first, strict priority.

    The "per-flow prioritization" baseline of Chowdhury's thesis (shortest/smallest flow first
    as in pFabric and PDQ; L754, L1137; ``specs/varys-thesis-ch1-5.md`` §3.6): flows are
    ranked by remaining bytes, and in that order each takes the smaller of its two residual
    port capacities (:func:`coflowlab.allocation.priority_greedy`). Coflows are ignored except
    in the ``"smaller_coflow"`` tie-break. Clairvoyant.

    Parameters
    ----------
    tie_break
        Order of flows with equal remaining bytes: ``"fifo"`` (default; earlier release,
        then lower flow index first), ``"lifo"`` (later release, then higher index first) or
        ``"smaller_coflow"`` (flow of the coflow with the smaller total size first, then
        FIFO). The thesis's Fig. 5.1 numbers (avg CCT 3.5, avg FCT 2.8) need the tie on
        ingress 2 to go to C2's flow (spec §8.5): ``"smaller_coflow"`` or ``"lifo"`` give
        them; ``"fifo"`` gives the spec's other row (avg CCT 4.0, avg FCT 2.8).
    exact
        Re-rank when a served flow's remaining bytes overtake a higher-ranked flow's at a
        saturated port (a wake-up at that moment), so the order is smallest-remaining-first
        at all times (SRPT). ``False`` re-ranks only at arrivals and completions.

    Notes
    -----
    Remaining bytes that are equal up to the next instant are ranked by where they are going:
    the key is ``remaining − rate·τ`` with the current rates and ``τ = 1e-9·max(1, t)``, so a
    flow that has just caught up with another ranks ahead of it. Only ports that are saturated
    can change an allocation when two of their flows swap (every flow is limited by a
    saturated port), so only their adjacent pairs are watched.

    The ranking is kept between events rather than re-sorted: a flow's key changes only while
    it sends, and at most one flow per port sends, so the flows at rate 0 stay sorted and only
    the sending ones are re-ranked; the greedy walks the merge and stops once every ingress or
    every egress is saturated (:mod:`coflowlab.heuristics.pfp_kernels`). The policy mirrors the
    simulator's bookkeeping of bytes sent and returns only the rates that change
    (``Decision.update``), so the schedule is the one a full re-sort at every event gives, bit
    for bit.

    Examples
    --------
    Thesis Fig. 3.2: the unit flows go as two matchings, then s3's flows one after the other
    (CCT 6, FCTs {1, 1, 2, 2, 4, 6}; spec §8.3):

    >>> from coflowlab import simulate
    >>> from coflowlab.instances.examples import fig_3_2, fig_5_1
    >>> r = simulate(fig_3_2(), PerFlowPriority())
    >>> r.coflow_completion.tolist(), sorted(r.flow_completion.tolist())
    ([6.0], [1.0, 1.0, 2.0, 2.0, 4.0, 6.0])
    >>> simulate(fig_5_1(), PerFlowPriority(tie_break="smaller_coflow")).cct.tolist()
    [4.0, 3.0]
    """

    name: ClassVar[str] = "pfp"
    clairvoyant: ClassVar[bool] = True

    def __init__(self, *, tie_break: TieBreak = "fifo", exact: bool = True) -> None:
        if tie_break not in ("fifo", "lifo", "smaller_coflow"):
            raise ValueError(
                f"tie_break must be 'fifo', 'lifo' or 'smaller_coflow', got {tie_break!r}"
            )
        self.tie_break = tie_break
        self.exact = bool(exact)

    def reset(self, view: InstanceView) -> None:
        """Prepares for a new simulation of the instance ``view`` describes."""
        if view.coflow_size is None or view.flow_size is None:
            raise ValueError("PerFlowPriority is clairvoyant: the view must carry sizes")
        self.cap_in = np.ascontiguousarray(view.cap_in, dtype=float)
        self.cap_out = np.ascontiguousarray(view.cap_out, dtype=float)
        self.coflow_size = np.asarray(view.coflow_size, dtype=float)
        nf = view.num_flows
        m = len(self.cap_in) + len(self.cap_out)
        self._src = np.ascontiguousarray(view.flow_src, dtype=np.int64)
        self._dst = np.ascontiguousarray(view.flow_dst, dtype=np.int64)
        self._size = np.ascontiguousarray(view.flow_size, dtype=float)
        # tie-break columns after the key (lexsort order); tb2 is filled in at arrival
        if self.tie_break == "smaller_coflow":
            self._tb1 = self.coflow_size[np.asarray(view.flow_coflow)].astype(float)
        else:
            self._tb1 = np.zeros(nf)
        self._tb2 = np.zeros(nf)
        self._tb3 = np.arange(nf, dtype=float)
        if self.tie_break == "lifo":
            self._tb3 = -self._tb3
        self._status = np.zeros(nf, dtype=np.int64)
        self._key = np.zeros(nf)
        self._rem = np.zeros(nf)
        self._rate = np.zeros(nf)  # mirrors the simulator's bookkeeping (flow_state)
        self._base_sent = np.zeros(nf)
        self._base_t = np.zeros(nf)
        self._gen = np.zeros(nf, dtype=np.int64)
        self._spos = np.full(nf, -1, dtype=np.int64)
        self._st = np.zeros(4, dtype=np.int64)  # |S|, |B|, dead entries of S, |D|
        self._bmax = max(256, math.isqrt(max(nf, 1)))
        self._sflow = np.zeros(nf + 1, dtype=np.int64)
        self._skey = np.zeros(nf + 1)
        self._salive = np.zeros(nf + 1, dtype=np.bool_)
        self._ssrc = np.zeros(nf + 1, dtype=np.int64)
        self._sdst = np.zeros(nf + 1, dtype=np.int64)
        self._bflow = np.zeros(nf + self._bmax + 1, dtype=np.int64)
        self._bkey = np.zeros(nf + self._bmax + 1)
        self._bgen = np.zeros(nf + self._bmax + 1, dtype=np.int64)
        self._dyn = np.zeros(m + 1, dtype=np.int64)
        self._cnt_in = np.zeros(len(self.cap_in), dtype=np.int64)
        self._cnt_out = np.zeros(len(self.cap_out), dtype=np.int64)
        self._xnew = np.zeros(nf)  # scratch: this event's new rates, by flow
        self._step = pfp_kernels()["step"]

    def decide(self, state: ObservedState) -> Decision:
        """Strict-priority rates by remaining bytes; a wake-up at the next overtaking."""
        if not isinstance(state, ClairvoyantState):
            raise TypeError("PerFlowPriority needs a ClairvoyantState")
        t = float(state.time)
        arrived = np.ascontiguousarray(state.arrived, dtype=np.int64)
        completed = np.ascontiguousarray(state.completed, dtype=np.int64)
        if len(arrived):
            # release times (the tie-break's, as the state reports them)
            at = np.searchsorted(state.flows, arrived)
            release = np.asarray(state.arrival)[at]
            self._tb2[arrived] = -release if self.tie_break == "lifo" else release
        flows, rates, soonest = self._step(
            t,
            1e-9 * max(1.0, abs(t)),
            arrived,
            completed,
            self.exact,
            self._bmax,
            self._src,
            self._dst,
            self._size,
            self._tb1,
            self._tb2,
            self._tb3,
            self.cap_in,
            self.cap_out,
            self._status,
            self._key,
            self._rem,
            self._rate,
            self._base_sent,
            self._base_t,
            self._gen,
            self._spos,
            self._st,
            self._sflow,
            self._skey,
            self._salive,
            self._ssrc,
            self._sdst,
            self._bflow,
            self._bkey,
            self._bgen,
            self._dyn,
            self._cnt_in,
            self._cnt_out,
            self._xnew,
        )
        if not self.exact or math.isinf(soonest):
            return Decision(update=(flows, rates))
        return Decision(update=(flows, rates), wakeup=t + max(soonest, 1e-9 * max(1.0, abs(t))))


# ---------------------------------------------------------------------------------- FIFO-LM
class FifoLM:
    """Baraat's FIFO with limited multiplexing (``fifo-lm``), decentralised; non-clairvoyant.

    Coflows are served in arrival order (ties by index), but at every port a coflow that has
    sent ``threshold`` bytes or more *through that port* is **heavy**, and a heavy coflow no
    longer blocks the ones behind it: each port serves the FIFO prefix of its coflows up to
    and including the first light one, and these share the port by per-flow max-min fairness
    ("fair-shares among heavy coflows", thesis L2083; "dynamically changing the level of
    multiplexing", Yosemite's summary of Baraat, Y:L41). A flow is in this multiplexed class
    when its coflow is served at both of its ports; every other flow gets, coflow by coflow in
    FIFO order, max-min fair rates from what is left (strict priority, work conserving).

    Parameters
    ----------
    threshold
        Bytes a coflow must send through a port to be heavy there, in the instance's size unit.
        The default, 1000, is about the 80th percentile of coflow size in the Facebook trace
        (1,160 MB), the thesis's best setting (L2083); :meth:`calibrated` sets it from an
        instance. ``inf`` gives per-port FIFO, ``0`` per-flow fair sharing.
    local
        Count the bytes per port (decentralised, Baraat's switches; default) or per coflow over
        the whole fabric (``False``).

    Notes
    -----
    Only the thesis's description survives in the specs (``aalo-hug-thesis-ch6-8.md`` §1.12,
    A17, A18; ``varys-thesis-ch1-5.md`` §3.6): FIFO, decentralised, fair sharing among heavy
    coflows, threshold at a percentile of coflow size. That the heavy coflows and the first
    light one share per flow, and that everything else is FIFO with work conservation, is this
    implementation's reading. A port learns of a crossing at once (wake-up at the exact time).

    Examples
    --------
    One link: coflow 0 (20 units) blocks coflow 1 until it has sent 5, then they share.

    >>> from coflowlab import Coflow, Instance, simulate
    >>> inst = Instance.from_coflows([Coflow([(0, 0, 20.0)]), Coflow([(0, 0, 4.0)])], 1)
    >>> simulate(inst, FifoLM(threshold=5.0)).coflow_completion.tolist()
    [24.0, 13.0]
    """

    name: ClassVar[str] = "fifo-lm"
    clairvoyant: ClassVar[bool] = False

    def __init__(self, *, threshold: float = 1000.0, local: bool = True) -> None:
        if math.isnan(threshold) or threshold < 0:
            raise ValueError(f"threshold must be >= 0, got {threshold!r}")
        self.threshold = float(threshold)
        self.local = bool(local)

    @classmethod
    def calibrated(cls, instance: Instance, percentile: float = 80.0, **kwargs: Any) -> FifoLM:
        """A FIFO-LM whose threshold is a percentile of the instance's coflow sizes.

        This is how the thesis set it (offline, from the size distribution; L2083); the
        policy itself stays non-clairvoyant.

        Examples
        --------
        >>> from coflowlab.instances.examples import fig_5_1
        >>> FifoLM.calibrated(fig_5_1(), 50).threshold
        5.5
        """
        return cls(threshold=float(np.percentile(instance.total_size, percentile)), **kwargs)

    def reset(self, view: InstanceView) -> None:
        """Prepares for a new simulation of the instance ``view`` describes."""
        self.cap_in = np.asarray(view.cap_in, dtype=float)
        self.cap_out = np.asarray(view.cap_out, dtype=float)
        self.m = view.num_ports
        self.n = view.num_coflows
        self._bytes = _LocalBytes(view) if self.local else None

    def _heavy_bound(self) -> float:
        return self.threshold * (1 - CROSS_TOL)

    def decide(self, state: ObservedState) -> Decision:
        """Multiplexed heavy coflows plus the first light one per port; FIFO for the rest."""
        t = float(state.time)
        coflow = np.asarray(state.coflow)
        src = np.ascontiguousarray(state.src, dtype=np.int64)
        dst = np.ascontiguousarray(state.dst, dtype=np.int64)
        n, m = self.n, self.m
        bound = self._heavy_bound()
        local = self._bytes
        if local is not None:
            pin, pout = local.advance(t, np.asarray(state.flows))
            heavy_in = local.bytes[pin] >= bound
            heavy_out = local.bytes[pout] >= bound
        else:
            sent = np.asarray(state.coflow_sent)
            heavy_in = heavy_out = sent[coflow] >= bound
        active = np.flatnonzero(np.bincount(coflow, minlength=n))
        arrival = np.asarray(state.coflow_arrival)
        order = active[np.lexsort((active, arrival[active]))]
        rank = np.empty(n, dtype=np.int64)
        rank[order] = np.arange(len(order))
        r = rank[coflow]
        served = np.ones(len(coflow), dtype=bool)
        for port, heavy in ((src, heavy_in), (dst, heavy_out)):
            first_light = np.full(m, len(order), dtype=np.int64)
            np.minimum.at(first_light, port[~heavy], r[~heavy])
            served &= r <= first_light[port]
        group = np.where(served, 0, r + 1)
        rates = dclas_allocation(src, dst, group, self.cap_in, self.cap_out)
        if math.isinf(self.threshold):
            return Decision(rates)
        if local is not None:
            local.set_rates(pin, pout, rates)
            rin, rout = local.pair_rates(pin, pout, rates)
            light_in, light_out = ~heavy_in, ~heavy_out
            soonest = min(
                _first_crossing(
                    t,
                    local.bytes[pin][light_in],
                    rin[light_in],
                    np.full(int(light_in.sum()), self.threshold),
                ),
                _first_crossing(
                    t,
                    local.bytes[pout][light_out],
                    rout[light_out],
                    np.full(int(light_out.sum()), self.threshold),
                ),
            )
        else:
            rate_c = np.bincount(coflow, weights=rates, minlength=n).astype(float)[active]
            light = sent[active] < bound
            soonest = _first_crossing(
                t, sent[active][light], rate_c[light], np.full(int(light.sum()), self.threshold)
            )
        return Decision(rates, wakeup=None if math.isinf(soonest) else soonest)
