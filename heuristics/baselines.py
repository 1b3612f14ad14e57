"""Per-flow priority (``pfp``), a per-flow baseline: smallest remaining flow first with strict
priority (pFabric/PDQ-like; Chowdhury thesis §3.2.2, §5.3). Clairvoyant.

The other per-flow baselines: fair sharing in :mod:`coflowlab.heuristics.fair`, Baraat's
FIFO-LM in :mod:`coflowlab.heuristics.fifo_lm`.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, ClassVar, Literal

import numpy as np
import numpy.typing as npt

from coflowlab.instance import Instance
from coflowlab.policy import ClairvoyantState, Decision, InstanceView, ObservedState

from .pfp_kernels import kernels as pfp_kernels

if TYPE_CHECKING:
    from .pfp_classes import PFPClassEngine

__all__ = ["PerFlowPriority"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


# ---------------------------------------------------------------------------------- PFP
TieBreak = Literal["fifo", "lifo", "smaller_coflow"]


class PerFlowPriority:
    """Per-flow prioritisation (``pfp``): smallest remaining flow first, strict priority.

    The "per-flow prioritization" baseline of Chowdhury's thesis (shortest/smallest flow first
    as in pFabric and PDQ; §3.2.2, §5.3; docs/varys.md): flows are
    ranked by remaining bytes, and in that order each takes the smaller of its two residual
    port capacities (:func:`coflowlab.allocation.priority_greedy`). Coflows are ignored except
    in the ``"smaller_coflow"`` tie-break. Clairvoyant.

    Parameters
    ----------
    tie_break
        Order of flows with equal remaining bytes: ``"fifo"`` (default; earlier release, then lower
        flow index first), ``"lifo"`` (later release, then higher index first) or
        ``"smaller_coflow"`` (flow of the coflow with the smaller total size first, then FIFO). The
        thesis's Fig. 5.1 numbers (avg CCT 3.5, avg FCT 2.8) need the tie on ingress 2 to go to
        C2's flow (docs/examples.md#fig-5-1): ``"smaller_coflow"`` or ``"lifo"`` give them;
        ``"fifo"`` gives the other row of docs/examples.md#fig-5-1 (avg CCT 4.0, avg FCT 2.8).
    exact
        Re-rank when a served flow's remaining bytes overtake a higher-ranked flow's at a
        saturated port (a wake-up at that moment), so the order is smallest-remaining-first
        at all times (SRPT). ``False`` re-ranks only at arrivals and completions. With
        equal port capacities the two give the same schedule and no wake-up is needed
        (Notes).

    Notes
    -----
    Remaining bytes that are equal up to the next instant are ranked by where they are going:
    the key is ``remaining − rate·τ`` with the current rates and ``τ = 1e-9·max(1, t)``, so a
    flow that has just caught up with another ranks ahead of it. Only ports that are saturated
    can change an allocation when two of their flows swap (every flow is limited by a
    saturated port), so only their adjacent pairs are watched.

    The ranking is kept between events rather than re-sorted: a flow's key changes only while
    it sends, so the flows at rate 0 stay sorted and only the sending ones are re-ranked; the
    greedy walks the merge and stops once every ingress or every egress is saturated. With
    equal port capacities the greedy is a matching in rank order, repaired only at the ports
    an event changes (:mod:`coflowlab.heuristics.pfp_kernels`).

    With equal port capacities an overtaking never changes a rate, so the policy asks for
    no wake-up. Between events the rate-0 flows keep their keys and each sending flow's
    key only falls, so the ranking changes only by sending flows moving ahead of others.
    In a greedy matching built in rank order, moving a matched flow ahead changes nothing:
    each flow it passes that was matched uses other ports (matched flows share none), and
    each unmatched one was blocked by a matched flow still ranked ahead of it; by
    induction over the new order every flow finds what it found before
    (docs/varys.md#pfp-no-wake-ups). With unequal capacities a flow moved ahead can take more of
    a port, and ``exact`` wakes the policy at each overtaking. The policy mirrors the
    simulator's bookkeeping of bytes sent and returns only the rates that change
    (``Decision.update``), so the schedule is the one a full re-sort at every event gives, bit
    for bit.

    Examples
    --------
    Thesis Fig. 3.2: the unit flows go as two matchings, then s3's flows one after the other
    (CCT 6, FCTs {1, 1, 2, 2, 4, 6}; thesis §3.2):

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
    _use_matching: ClassVar[bool] = True  # the equal-capacity kernel (False: the general walk)

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
        caps = np.concatenate((self.cap_in, self.cap_out))
        self._matching = bool(len(caps) and caps[0] > 0 and (caps == caps[0]).all())
        if self._matching and self._use_matching:
            self._reset_matching(nf)
            return
        self._matching = False
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
        # the kernel's arguments after the event's own, gathered once (as for match_step)
        self._step_args = (
            self._bmax,
            *self._flow_columns(),
            self.cap_in,
            self.cap_out,
            *self._flow_state(),
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

    def _flow_columns(self) -> tuple[np.ndarray, ...]:
        """The per-flow constants both kernels take: ports, size and tie-break columns."""
        return (self._src, self._dst, self._size, self._tb1, self._tb2, self._tb3)

    def _flow_state(self) -> tuple[np.ndarray, ...]:
        """The per-flow state both kernels keep: status, key, bytes left, rate and the
        mirror of the simulator's bookkeeping."""
        return (self._status, self._key, self._rem, self._rate, self._base_sent, self._base_t)

    def _reset_matching(self, nf: int) -> None:
        # the pair lists (flows of one ingress-egress pair, a fixed slice of parr each) and
        # the pairs of each port (CSR), for pfp_kernels.match_step
        m_in, m_out = len(self.cap_in), len(self.cap_out)
        pair_code = self._src * m_out + self._dst
        codes, pair_of = np.unique(pair_code, return_inverse=True)
        self._pair_of = np.ascontiguousarray(pair_of, dtype=np.int64)
        self._poff = np.zeros(len(codes), dtype=np.int64)
        np.cumsum(np.bincount(self._pair_of, minlength=len(codes))[:-1], out=self._poff[1:])
        self._pcnt = np.zeros(len(codes), dtype=np.int64)
        self._parr = np.zeros(nf, dtype=np.int64)
        self._pkey = np.zeros(nf)  # the key of each parr entry (the kernel keeps it)
        pair_src, pair_dst = codes // m_out, codes % m_out
        # pairs by port, in slots: ingress p's pairs (codes are sorted by ingress), then
        # egress p's (by_out); the slots of port p are ptr[p] : ptr[p + 1]
        by_out = np.argsort(pair_dst, kind="stable")
        self._ptr = np.concatenate(
            (
                np.searchsorted(pair_src, np.arange(m_in)),
                len(codes) + np.searchsorted(pair_dst[by_out], np.arange(m_out + 1)),
            )
        ).astype(np.int64)
        self._hold = np.full(m_in + m_out, -1, dtype=np.int64)
        self._mark = np.zeros(nf, dtype=np.bool_)
        # each pair's head and its key, cached at both of its slots (the kernel
        # keeps them up to date): pair pr's ingress slot is pr, its egress slot pepos[pr];
        # pother: the other port of the pair in each slot
        npairs = len(codes)
        self._phead = np.full(2 * npairs, -1, dtype=np.int64)
        self._phkey = np.full(2 * npairs, np.inf)  # +inf: an empty pair
        self._pepos = np.empty(npairs, dtype=np.int64)
        self._pepos[by_out] = npairs + np.arange(npairs)
        self._pother = np.concatenate((m_in + pair_dst, pair_src[by_out])).astype(np.int64)
        self._match_step = pfp_kernels()["match_step"]
        # the kernel's arguments after the event's own, gathered once: the step is called at
        # every event, and 24 attribute reads per call are a measurable part of it
        self._match_args = (
            float(self.cap_in[0]),
            len(self.cap_in),
            *self._flow_columns(),
            *self._flow_state(),
            self._pair_of,
            self._poff,
            self._pcnt,
            self._parr,
            self._ptr,
            self._hold,
            self._mark,
            self._phead,
            self._phkey,
            self._pepos,
            self._pother,
            self._pkey,
        )

    def class_engine(self, instance: Instance, tol: float) -> PFPClassEngine | None:
        """The whole replay in one compiled event loop (one rate class per flow) that
        :func:`coflowlab.simulate` uses when it can (:mod:`coflowlab.class_simulation`,
        :mod:`coflowlab.heuristics.pfp_classes`); ``None`` where it does not apply (unequal
        port capacities, coflow dependencies, or a subclass, whose changes the engine would
        not see), so the per-flow event loop runs."""
        from .pfp_classes import PFPClassEngine

        if type(self) is not PerFlowPriority or not self._use_matching:
            return None
        if PFPClassEngine.unsupported(instance) is not None:
            return None
        return PFPClassEngine(instance, tol=tol, tie_break=self.tie_break, exact=self.exact)

    def decide(self, state: ObservedState) -> Decision:
        """Strict-priority rates by remaining bytes; with ``exact`` and unequal capacities, a
        wake-up at the next overtaking."""
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
        if self._matching:  # no wake-up is needed (Notes)
            flows, rates = self._match_step(
                t, 1e-9 * max(1.0, abs(t)), arrived, completed, *self._match_args
            )
            return Decision(update=(flows, rates))
        flows, rates, soonest = self._step(
            t, 1e-9 * max(1.0, abs(t)), arrived, completed, self.exact, *self._step_args
        )
        if not self.exact or math.isinf(soonest):
            return Decision(update=(flows, rates))
        return Decision(update=(flows, rates), wakeup=t + max(soonest, 1e-9 * max(1.0, abs(t))))
