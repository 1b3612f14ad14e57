"""Varys (Chowdhury's thesis, Ch. 5): coflow ordering + iterative MADD + backfilling.

Policies (suggested registry names in brackets; all clairvoyant):

- :class:`Varys` (``varys``): Smallest-Effective-Bottleneck-First order, iterative MADD and
  work-conserving backfill, with T/δ starvation avoidance (Pseudocode 1;
  thesis §4.5.3, §5.5.3; docs/varys.md).
- :class:`VarysSCF`, :class:`VarysNCF`, :class:`VarysTCF` (``scf``, ``ncf``, ``tcf``): the
  same machinery with the thesis's other orderings (§5.5.3).
- :class:`VarysFIFO` (``fifo``): coflows in arrival order, "as in Orchestra" (§5.9), MADD and
  backfill: a non-preemptive coflow order (a later coflow never overtakes an earlier one; it
  only gets what the earlier ones leave). FIFO cannot starve a coflow, so starvation avoidance
  is off by default.
- :class:`VarysDeadline` (``varys-deadline``): deadline mode with admission control
  (Pseudocode 2, §5.5.4; docs/varys.md#deadlines).

How a reschedule works
----------------------
At a reschedule the active flows are grouped by coflow (once, vectorized), the coflows are ordered
with :mod:`coflowlab.orderings`, :func:`coflowlab.allocation.madd` gives each coflow in turn the
rates ``remaining / Γ`` where Γ is its effective bottleneck against the capacity the coflows before
it left (``inf``: skipped), the skipped coflows share what MADD left equally per port (choice 3
below), and the capacity left over is handed out by a backfill. Varys
reschedules only on coflow arrivals and coflow completions (§5.4.2, §5.6.2;
docs/varys.md#rescheduling): at a completion of a flow whose coflow is still running the policy
returns ``Decision(None)``, the other flows keep their rates and the freed bandwidth waits for the
next reschedule (as in CoflowSim, docs/coflowsim-model.md#coflow-policies). Any flow arrival
reschedules (in the benchmark format and every generator, all flows of a coflow arrive together, so
this is the coflow's arrival).

Cost: a reschedule is O(F + coflows × ports) for F active flows (a counting sort groups the
flows, numba kernels compute Γ, MADD and the backfill); an event that does not reschedule
costs O(changes). Rates are never kept across calls other than the policy's own bookkeeping
(the state's arrays are read during ``decide`` only).

Choices where the thesis is ambiguous (docs/varys.md)
-----------------------------------------------------
1. **SEBF key** (docs/varys.md#sebf-key). ``sebf_key="remaining"`` (default): Γ of the *remaining*
   bytes against the *full* port capacities, recomputed at every reschedule; SEBF then generalizes
   SRTF (§5.2). ``"residual"``: Γ of the remaining bytes against the capacity left by the coflows
   already ordered (:func:`coflowlab.orderings.sebf_residual`; Pseudocode 1 line 3 read as "current
   Rem(.)"). ``"static"``: Γ of the original sizes on an empty fabric (ρ), which is what CoflowSim
   sorts by. SCF, NCF and TCF always use the static length, width and total size the thesis defines
   them by; FIFO uses the arrival time. Ties go to the lower coflow index everywhere.
2. **Backfill** (docs/varys.md#backfill). ``backfill="greedy"`` (default): the flows, in priority
   order (by coflow, then in the state's flow order), each add ``min(residual ingress, residual
   egress)`` (:func:`coflowlab.allocation.backfill`); afterwards no flow has spare capacity at both
   ports. ``"ratio"``: the thesis's text (§5.5.3, Pseudocode 1 line 16) taken literally: for each
   ingress port in index order, and for each coflow there in priority order, the port's remaining
   bandwidth goes to that coflow's flows in proportion to their current rates, as far as their
   egress ports allow; one pass, so flows at rate 0 get nothing and the result need not be work
   conserving. ``"none"``: no backfill (MADD only).
3. **Γ = ∞, skipped coflows** (docs/fidelity.md#skipped). A coflow that needs a full port (free
   capacity at most ``TOL`` times the smallest port capacity) is skipped by MADD.
   ``skipped="share"`` (default): the skipped coflows then share the capacity MADD left (shares
   that small are not given), each of their flows
   getting ``min(F_in / n_in, F_out / n_out)`` (:func:`coflowlab.allocation.share_equally`),
   before the backfill, as CoflowSim and Sincronia's simulator do. ``"wait"``: they get
   nothing from MADD (only a port with no capacity at all is full) and only the backfill may
   serve them; the thesis's text read literally, and coflowlab's rule before issue 14. With
   reschedules only at coflow events, ``"wait"`` lets the backfill put the leftover on a few
   short flows that end long before the next reschedule, and their ports then idle: on the
   Facebook trace with every release at 0 its average CCT is 49% higher
   (docs/fidelity.md).
4. **Starvation avoidance** (docs/varys.md#starvation). Time alternates between T-intervals and
   δ-intervals, starting with a T-interval at the first event. At the end of a T-interval, the
   coflows present that arrived before its end and had no flow at a positive rate at any time
   during it (tracked exactly from the policy's own decisions) are *starved*. If there are none, a
   new T-interval starts at once (an empty δ-interval would only idle the network). Otherwise, for
   δ, the starved coflows are served as one coflow C* (the sum of their demand) by MADD and only
   they are served: the others get nothing, and coflows arriving meanwhile wait. The leftover
   capacity is backfilled among C*'s flows only (the thesis does not say how MADD on C* treats
   members on disjoint ports; pure MADD would slow a small member to the pace of the largest). The
   δ-interval ends early when every member of C* has completed. Timers are :attr:`Decision.wakeup`
   requests; if the system is empty at a boundary, the next T-interval starts at the next event.
   Every coflow present for a whole T-interval is thus served within every (T + δ) window
   (Pseudocode 1, §5.5.3).
5. **Deadlines** (docs/varys.md#deadlines): see :class:`VarysDeadline`.

Time units: the view carries none. ``T`` and ``delta`` are in the instance's time unit with
the default ``time_unit_ms=1``; in general they are in ms and the policy uses
``T / time_unit_ms`` and ``delta / time_unit_ms`` instance time units (``time_unit_ms`` = the
length of the instance's time unit in ms). The defaults (T = 2 s, δ = 200 ms, §5.7.1) thus
assume ms, the benchmark format's unit; :func:`coflowlab.heuristics.make_policy` converts them
for instances in other time units, and on a dimensionless instance they are 2000 and 200 time
units (longer than every worked example, so those are unaffected).

Examples
--------
Thesis Fig. 5.1 (our reconstruction, docs/examples.md#fig-5-1): Varys finishes C1 at 4 and C2 at 2.

>>> from coflowlab import simulate
>>> from coflowlab.instances.examples import fig_5_1
>>> simulate(fig_5_1(), Varys()).cct.tolist()
[4.0, 2.0]
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache
from typing import Any, ClassVar, Literal, cast

import numpy as np
import numpy.typing as npt

from coflowlab import orderings
from coflowlab.allocation import backfill as greedy_backfill
from coflowlab.allocation import effective_bottleneck, full_port_threshold, madd, madd_share
from coflowlab.orderings import OrderingName
from coflowlab.policy import ClairvoyantState, Decision, InstanceView, ObservedState

__all__ = [
    "Varys",
    "VarysDeadline",
    "VarysFIFO",
    "VarysNCF",
    "VarysSCF",
    "VarysTCF",
    "ratio_backfill",
]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

Backfill = Literal["greedy", "ratio", "none"]
Reschedule = Literal["coflow", "flow"]
Skipped = Literal["share", "wait"]
SebfKey = Literal["remaining", "residual", "static"]

BACKFILLS: tuple[str, ...] = ("greedy", "ratio", "none")
ADMISSION_TOL = 1e-9
"""Relative slack of the admission test ``Γ <= D`` (so that Γ = D exactly is admitted)."""


def _check(name: str, value: Any, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))}, got {value!r}")


def _positive(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise ValueError(f"{name} must be a positive number, got {value!r}")
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return float(value)


def _clairvoyant(view: InstanceView, who: str) -> FloatArray:
    if view.flow_size is None:
        raise ValueError(f"{who} is clairvoyant: it needs an InstanceView with flow sizes")
    return view.flow_size


# ============================================================================ grouping
@dataclass(frozen=True)
class _Groups:
    """The active flows grouped by coflow, coflows in ascending index order.

    ``flows[ptr[k]:ptr[k + 1]]`` are the compact indices (positions in ``state.flows``) of the
    flows of coflow ``ids[k]``; ``gidx[i]`` is the group of compact flow ``i``. Since ``ids``
    is ascending, ties broken toward the lower group are ties toward the lower coflow index.
    """

    ids: IntArray
    ptr: IntArray
    flows: IntArray
    gidx: IntArray

    @property
    def size(self) -> int:
        return len(self.ids)


class _Tracker:
    """Per-simulation bookkeeping shared by the Varys policies.

    - ``present``: the coflows with active flows, kept up to date from each state's arrivals
      and coflow completions (O(changes) per event);
    - ``running``: per coflow, how many of its active flows have a positive rate, kept exact
      from the policy's own decisions and the flows completed since (so "was this coflow
      served?" needs no pass over the active flows);
    - :meth:`groups`: the active flows grouped by coflow by a counting sort (O(active flows)).
    """

    def __init__(self, view: InstanceView) -> None:
        n = view.num_coflows
        self.flow_coflow = np.asarray(view.flow_coflow, dtype=np.int64)
        self.present = np.zeros(n, dtype=bool)
        self.running = np.zeros(n, dtype=np.int64)
        self.last_rate = np.zeros(view.num_flows)
        self.rank = np.zeros(n, dtype=np.int64)

    def update(self, st: ObservedState) -> None:
        """Records the arrivals and completions reported since the last call."""
        if len(st.arrived):
            self.present[self.flow_coflow[st.arrived]] = True
        done = st.completed
        if len(done) == 1:  # the common event: one flow completes
            f = done[0]
            if self.last_rate[f] > 0:
                self.running[self.flow_coflow[f]] -= 1
                self.last_rate[f] = 0.0
        elif len(done):
            sending = done[self.last_rate[done] > 0]
            np.subtract.at(self.running, self.flow_coflow[sending], 1)
            self.last_rate[done] = 0.0
        if len(st.completed_coflows):
            self.present[st.completed_coflows] = False

    def decided(self, st: ObservedState, groups: _Groups, rates: FloatArray) -> None:
        """Records the rates just decided."""
        running = np.zeros(groups.size, dtype=np.int64)
        flows = np.asarray(st.flows, dtype=np.int64)
        _kernels()["post"](flows, rates, groups.gidx, self.last_rate, running)
        self.running[groups.ids] = running

    def groups(self, st: ObservedState) -> _Groups:
        coflow = np.asarray(st.coflow, dtype=np.int64)
        counts = np.bincount(coflow, minlength=len(self.rank))
        ids = np.flatnonzero(counts)
        self.rank[ids] = np.arange(len(ids), dtype=np.int64)
        ptr = np.zeros(len(ids) + 1, dtype=np.int64)
        np.cumsum(counts[ids], out=ptr[1:])
        flows, gidx = _kernels()["bucket"](coflow, self.rank, ptr)
        return _Groups(ids, ptr, flows, gidx)


@cache
def _kernels() -> dict[str, Any]:
    """The policy's O(F) loops, compiled with numba on first use (cached on disk)."""
    from numba import njit

    @njit(cache=True)
    def bucket(coflow, rank, ptr):  # pragma: no cover - numba
        # counting sort of the flows by group, stable
        n = coflow.shape[0]
        fill = ptr[:-1].copy()
        flows = np.empty(n, dtype=np.int64)
        gidx = np.empty(n, dtype=np.int64)
        for i in range(n):
            g = rank[coflow[i]]
            gidx[i] = g
            flows[fill[g]] = i
            fill[g] += 1
        return flows, gidx

    @njit(cache=True)
    def post(flows, rates, gidx, last_rate, running):  # pragma: no cover - numba
        for i in range(flows.shape[0]):
            last_rate[flows[i]] = rates[i]
            if rates[i] > 0.0:
                running[gidx[i]] += 1

    @njit(cache=True)
    def ratio(order, gptr, src, dst, rates, res_in, res_out, out_sum):  # pragma: no cover
        for g in range(gptr.shape[0] - 1):
            lo = gptr[g]
            hi = gptr[g + 1]
            i = src[order[lo]]
            total = 0.0
            for k in range(lo, hi):
                f = order[k]
                total += rates[f]
                out_sum[dst[f]] += rates[f]
            s = 0.0
            if total > 0.0 and res_in[i] > 0.0:
                s = res_in[i] / total
                for k in range(lo, hi):
                    d = dst[order[k]]
                    if out_sum[d] > 0.0 and res_out[d] / out_sum[d] < s:
                        s = res_out[d] / out_sum[d]
            for k in range(lo, hi):
                f = order[k]
                out_sum[dst[f]] = 0.0
                if s > 0.0:
                    x = s * rates[f]
                    rates[f] += x
                    res_in[i] -= x
                    res_out[dst[f]] -= x
            if res_in[i] < 0.0:
                res_in[i] = 0.0
            for k in range(lo, hi):
                d = dst[order[k]]
                if res_out[d] < 0.0:
                    res_out[d] = 0.0
        return rates

    return {"bucket": bucket, "post": post, "ratio": ratio}


def _prioritized(groups: _Groups, order: IntArray) -> tuple[IntArray, IntArray]:
    """``(ptr, flows)`` of the groups taken in ``order`` (group positions)."""
    counts = np.diff(groups.ptr)[order]
    ptr = np.zeros(len(order) + 1, dtype=np.int64)
    np.cumsum(counts, out=ptr[1:])
    shift = np.repeat(groups.ptr[order] - ptr[:-1], counts)
    return ptr, groups.flows[np.arange(ptr[-1], dtype=np.int64) + shift]


# ============================================================================ ratio backfill
def ratio_backfill(
    rates: FloatArray,
    order: IntArray,
    src: IntArray,
    dst: IntArray,
    coflow: IntArray,
    cap_in: FloatArray,
    cap_out: FloatArray,
) -> FloatArray:
    """The thesis's backfill (§5.5.3, Pseudocode 1 line 16): per ingress port, its remaining
    bandwidth goes to the coflows there in priority order, to each coflow's flows in their current
    rate ratios, subject to the egress ports' remaining capacity.

    ``order`` lists the flows to consider in priority order; one pass; flows at rate 0 stay
    at 0.

    Examples
    --------
    Ingress 0 carries one coflow's flows at rates 0.2 and 0.1 (to egress 0 and 1): the 0.7
    left is split 2:1 until egress 0 (capacity 0.5) is full.

    >>> r = ratio_backfill(np.array([0.2, 0.1]), np.array([0, 1]), np.array([0, 0]),
    ...                    np.array([0, 1]), np.array([0, 0]), np.array([1.0]),
    ...                    np.array([0.5, 1.0]))
    >>> r.round(6).tolist()
    [0.5, 0.25]
    """
    r = np.array(rates, dtype=np.float64)
    o = np.asarray(order, dtype=np.int64)
    if not len(o):
        return r
    m_in, m_out = len(cap_in), len(cap_out)
    res_in = np.maximum(cap_in - np.bincount(src, weights=r, minlength=m_in)[:m_in], 0.0)
    res_out = np.maximum(cap_out - np.bincount(dst, weights=r, minlength=m_out)[:m_out], 0.0)
    o = o[np.argsort(src[o], kind="stable")]  # by ingress port, priority order within
    s, c = src[o], coflow[o]
    gptr = np.append(np.flatnonzero(np.r_[True, (s[1:] != s[:-1]) | (c[1:] != c[:-1])]), len(o))
    return _kernels()["ratio"](
        o,
        gptr.astype(np.int64),
        np.ascontiguousarray(src, np.int64),
        np.ascontiguousarray(dst, np.int64),
        r,
        res_in,
        res_out,
        np.zeros(m_out),
    )


# ============================================================================ Varys
class Varys:
    """Varys: SEBF + iterative MADD + backfill, with starvation avoidance (thesis Ch. 5).

    Parameters
    ----------
    ordering
        Coflow order: ``"sebf"`` (default), ``"smith"`` (Γ / w), ``"scf"``, ``"ncf"``,
        ``"tcf"``, ``"fifo"`` or ``"lwf"`` (largest weight first); see
        :mod:`coflowlab.orderings`. The policy's :attr:`name` stays ``"varys"``; use
        :class:`VarysSCF` and friends for results labelled with the ordering.
    starvation
        Alternate T- and δ-intervals (Pseudocode 1 lines 19-27); ``False`` only minimizes CCT.
    T, delta
        Interval lengths in ms, i.e. in the instance's time unit when ``time_unit_ms`` is 1
        (thesis defaults 2 s and 200 ms, §5.7.1; see "Time units" in the module docstring).
    backfill
        ``"greedy"`` (default), ``"ratio"`` (the thesis's current-ratio rule) or ``"none"``.
    reschedule_on
        ``"coflow"`` (default): reschedule at arrivals and coflow completions only (§5.4.2);
        ``"flow"``: also at every flow completion (a full reschedule per flow: quadratic on
        large traces).
    sebf_key
        Γ for ``"sebf"`` / ``"smith"``: ``"remaining"`` (remaining bytes, full capacity;
        default), ``"residual"`` (against the capacity left by higher-priority coflows) or
        ``"static"`` (original sizes, empty fabric).
    skipped
        What the coflows MADD skips (a port they need is full) get before the backfill:
        ``"share"`` (default), an equal per-port split of what MADD left, as in CoflowSim and
        Sincronia's simulator; ``"wait"``, nothing (the literal reading; see the module
        docstring and docs/fidelity.md).
    time_unit_ms
        Milliseconds per time unit of the instance (1 for the benchmark format).

    Notes
    -----
    See the module docstring for the allocation, the rescheduling rule and the ambiguity
    choices. A reschedule costs O(F + coflows × ports) for F active flows; an event that only
    completes flows costs O(completed flows).

    Examples
    --------
    Thesis Fig. 5.3 (R-5.3; docs/test-cases.md#r-5-3): SEBF serves the larger but less
    bottlenecked C2 first.

    >>> from coflowlab import simulate
    >>> from coflowlab.instances.examples import fig_5_3
    >>> simulate(fig_5_3(), Varys()).cct.tolist()
    [7.0, 3.0]
    >>> simulate(fig_5_3(), Varys("scf")).cct.tolist()
    [4.0, 7.0]
    """

    name: ClassVar[str] = "varys"
    clairvoyant: ClassVar[bool] = True

    def __init__(
        self,
        ordering: OrderingName = "sebf",
        *,
        starvation: bool = True,
        T: float = 2000.0,
        delta: float = 200.0,
        backfill: Backfill = "greedy",
        reschedule_on: Reschedule = "coflow",
        sebf_key: SebfKey = "remaining",
        skipped: Skipped = "share",
        time_unit_ms: float = 1.0,
    ) -> None:
        _check("ordering", ordering, orderings.ORDERINGS)
        _check("skipped", skipped, ("share", "wait"))
        _check("backfill", backfill, BACKFILLS)
        _check("reschedule_on", reschedule_on, ("coflow", "flow"))
        _check("sebf_key", sebf_key, ("remaining", "residual", "static"))
        self.ordering = ordering
        self.starvation = bool(starvation)
        self.T = _positive("T", T)
        self.delta = _positive("delta", delta)
        self.backfill = backfill
        self.reschedule_on = reschedule_on
        self.sebf_key = sebf_key
        self.skipped = skipped
        self.time_unit_ms = _positive("time_unit_ms", time_unit_ms)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(ordering={self.ordering!r}, starvation={self.starvation}, "
            f"T={self.T}, delta={self.delta}, backfill={self.backfill!r}, "
            f"reschedule_on={self.reschedule_on!r}, sebf_key={self.sebf_key!r}, "
            f"skipped={self.skipped!r}, time_unit_ms={self.time_unit_ms})"
        )

    # ------------------------------------------------------------------ set-up
    def reset(self, view: InstanceView) -> None:
        """Prepares for a simulation: capacities, static keys, an idle starvation timer."""
        size = _clairvoyant(view, type(self).__name__)
        n = view.num_coflows
        self._n = n
        self._cap_in = np.array(view.cap_in, dtype=np.float64)
        self._cap_out = np.array(view.cap_out, dtype=np.float64)
        self._weight = np.array(view.coflow_weight, dtype=np.float64)
        self._track = _Tracker(view)
        self._static: FloatArray | None = None
        c = view.flow_coflow
        if self.ordering == "scf":
            self._static = orderings.length_key(size, c, n)
        elif self.ordering == "ncf":
            self._static = orderings.width_key(c, n)
        elif self.ordering == "tcf":
            self._static = orderings.size_key(size, c, n)
        elif self.ordering in ("sebf", "smith") and self.sebf_key == "static":
            rho = orderings.bottleneck_key(
                size, view.flow_src, view.flow_dst, c, self._cap_in, self._cap_out, n
            )
            self._static = (
                rho if self.ordering == "sebf" else orderings.smith_key(rho, self._weight)
            )
        self._T = self.T / self.time_unit_ms
        self._delta = self.delta / self.time_unit_ms
        self._in_delta = False
        self._phase_end: float | None = None
        self._fresh = False  # a T-interval starts at this event
        self._served = np.zeros(n, dtype=bool)
        self._star = np.zeros(n, dtype=bool)
        self._quiet = False  # no wake-up requested: no coflow can starve until the next event
        self._quiet_count = 0  # coflows present when the policy went quiet

    # ------------------------------------------------------------------ events
    def decide(self, state: ObservedState) -> Decision:
        """Reschedules at arrivals, coflow completions and timer boundaries; else keeps rates."""
        st = cast(ClairvoyantState, state)
        self._track.update(st)
        t = float(st.time)
        change = bool(len(st.arrived) or len(st.completed_coflows))
        if self.reschedule_on == "flow" and len(st.completed):
            change = True
        if not self.starvation:
            rates = self._allocate(st) if change else None
            return Decision(rates, notify=self.reschedule_on)
        if self._quiet:
            self._skip_quiet_boundaries(st, t)
        end = self._phase_end
        if end is not None and t < end - _eps(end):
            if not change:  # rates kept: whether the policy is quiet is unchanged too
                wakeup = None if self._quiet else end
                return Decision(None, wakeup=wakeup, notify=self.reschedule_on)
        elif self._boundary(st, t):
            change = True
        if self._in_delta and change and not (self._star & self._track.present).any():
            self._start_t_interval(t)  # every starved coflow completed: end δ early
        rates = self._allocate(st) if change else None
        running = self._track.running > 0
        if self._fresh:  # service in the new T-interval: whatever runs from now on
            self._served = running
            self._fresh = False
        elif rates is not None and not self._in_delta:
            self._served |= running
        # In a T-interval where every active flow sends, every present coflow keeps a sending
        # flow until it completes (rates are kept until the next arrival or coflow
        # completion), so no boundary before that event can find a starved coflow: no wake-up
        # is needed until then (one 1e9 MB flow would otherwise wake the policy every T).
        self._quiet = not self._in_delta and bool(
            np.all(self._track.last_rate[np.asarray(st.flows, dtype=np.int64)] > 0)
        )
        if self._quiet:
            self._quiet_count = int(np.count_nonzero(self._track.present))
        wakeup = None if self._quiet else self._phase_end
        return Decision(rates, wakeup=wakeup, notify=self.reschedule_on)

    def _skip_quiet_boundaries(self, st: ClairvoyantState, t: float) -> None:
        """Catches the phase up with ``t`` after a stretch without wake-ups (quiet).

        With wake-ups, each boundary ``end + jT`` passed while flows were active would have
        found no starved coflow (every present coflow was sending throughout) and started the
        next T-interval; a boundary passed while the system was empty is handled at the next
        event, as the simulator does not ask the policy while nothing is active. So the phase
        is set to what those boundaries would have left; a boundary at ``t`` itself, or one
        deferred by an empty system, is left to :meth:`_boundary`. The present coflows count
        as served in the interval holding ``t`` (``_served`` still holds them).
        """
        end = self._phase_end
        if end is None:
            return
        # the system emptied if every coflow present at the quiet decision has completed
        idle = len(st.completed) > 0 and len(st.completed_coflows) >= self._quiet_count
        if idle:  # boundaries strictly before the last completion were handled in time
            gap = float(np.max(st.completed_at)) - end - _eps(end)
            handled = math.ceil(gap / self._T) if gap > 0 else 0
        else:  # boundaries up to t, but the one at t (if any) is handled now
            gap = t - end + _eps(t)
            handled = math.floor(gap / self._T) + 1 if gap >= 0 else 0
            if handled and abs(end + (handled - 1) * self._T - t) <= _eps(t):
                handled -= 1
        if handled:
            self._phase_end = end + handled * self._T
            self._fresh = False

    def _start_t_interval(self, t: float) -> None:
        self._in_delta = False
        self._phase_end = t + self._T
        self._fresh = True
        self._star[:] = False

    def _boundary(self, st: ClairvoyantState, t: float) -> bool:
        """Handles a phase boundary at ``t``; returns whether the rates must be recomputed."""
        end = self._phase_end
        if end is None or self._in_delta:
            self._start_t_interval(t)
            return True
        arrived = np.asarray(st.coflow_arrival, dtype=np.float64) < end
        starved = self._track.present & ~self._served & arrived
        if not starved.any():
            self._start_t_interval(t)
            return False
        self._in_delta = True
        self._phase_end = t + self._delta
        self._star = starved
        return True

    # ------------------------------------------------------------------ allocation
    def _order(self, st: ClairvoyantState, groups: _Groups, rem: FloatArray) -> IntArray:
        """Group positions in priority order (ties toward the lower coflow index)."""
        ids = groups.ids
        if self._static is not None:
            key = self._static[ids]
        elif self.ordering == "fifo":
            key = np.asarray(st.coflow_arrival, dtype=np.float64)[ids]
        elif self.ordering == "lwf":
            key = -self._weight[ids]
        elif self.sebf_key == "residual":
            w = self._weight[ids] if self.ordering == "smith" else None
            return orderings.sebf_residual(
                rem,
                st.src,
                st.dst,
                groups.gidx,
                self._cap_in,
                self._cap_out,
                weight=w,
                num_coflows=groups.size,
            )
        else:
            key = orderings.bottleneck_key(
                rem, st.src, st.dst, groups.gidx, self._cap_in, self._cap_out, groups.size
            )
            if self.ordering == "smith":
                key = orderings.smith_key(key, self._weight[ids])
        return orderings.order_by(key)  # group positions; ids ascending: ties by coflow

    def _allocate(self, st: ClairvoyantState) -> FloatArray:
        delta_mode = self._in_delta
        rem = np.asarray(st.remaining, dtype=np.float64)
        src = np.asarray(st.src, dtype=np.int64)
        dst = np.asarray(st.dst, dtype=np.int64)
        groups = self._track.groups(st)
        order = self._order(st, groups, rem)
        if delta_mode:  # C*: the starved coflows as one coflow, nobody else
            order = order[self._star[groups.ids[order]]]
        ptr, flows = _prioritized(groups, order)
        if delta_mode:
            ptr = np.array([0, len(flows)], dtype=np.int64)
        if self.skipped == "share":
            full = full_port_threshold(self._cap_in, self._cap_out)
            rates, _ = madd_share(
                ptr, flows, rem, src, dst, self._cap_in, self._cap_out, full_below=full
            )
        else:
            rates, _ = madd(ptr, flows, rem, src, dst, self._cap_in, self._cap_out)
        rates = _backfill(
            self.backfill, rates, flows, src, dst, groups.gidx, self._cap_in, self._cap_out
        )
        self._track.decided(st, groups, rates)
        return rates


def _eps(t: float) -> float:
    """Slack of a phase boundary comparison at time ``t`` (relative, 1e-12)."""
    return 1e-12 * max(1.0, abs(t))


def _backfill(
    how: str,
    rates: FloatArray,
    order: IntArray,
    src: IntArray,
    dst: IntArray,
    coflow: npt.ArrayLike,
    cap_in: FloatArray,
    cap_out: FloatArray,
) -> FloatArray:
    if how == "greedy":
        return greedy_backfill(rates, order, src, dst, cap_in, cap_out)
    if how == "ratio":
        c = np.asarray(coflow, dtype=np.int64)
        return ratio_backfill(rates, order, src, dst, c, cap_in, cap_out)
    return rates


class _FixedOrder(Varys):
    """Varys' machinery with the ordering fixed by the subclass (``order``), so that results
    are labelled with it. Same parameters as :class:`Varys` except ``ordering`` and
    ``sebf_key``; ``starvation=None`` means the subclass's ``starvation_default``."""

    order: ClassVar[OrderingName]
    starvation_default: ClassVar[bool] = True

    def __init__(
        self,
        *,
        starvation: bool | None = None,
        T: float = 2000.0,
        delta: float = 200.0,
        backfill: Backfill = "greedy",
        reschedule_on: Reschedule = "coflow",
        skipped: Skipped = "share",
        time_unit_ms: float = 1.0,
    ) -> None:
        super().__init__(
            self.order,
            skipped=skipped,
            starvation=self.starvation_default if starvation is None else starvation,
            T=T,
            delta=delta,
            backfill=backfill,
            reschedule_on=reschedule_on,
            time_unit_ms=time_unit_ms,
        )


class VarysSCF(_FixedOrder):
    """Varys' machinery with Shortest-Coflow-First (``scf``): ascending length.

    Same parameters as :class:`Varys` except ``ordering`` and ``sebf_key``.

    Examples
    --------
    >>> from coflowlab import simulate
    >>> from coflowlab.instances.examples import fig_5_3
    >>> simulate(fig_5_3(), VarysSCF()).cct.tolist()
    [4.0, 7.0]
    """

    name: ClassVar[str] = "scf"
    order: ClassVar[OrderingName] = "scf"


class VarysNCF(_FixedOrder):
    """Varys' machinery with Narrowest-Coflow-First (``ncf``): ascending width.

    Examples
    --------
    >>> from coflowlab import simulate
    >>> from coflowlab.instances.examples import fig_5_3
    >>> simulate(fig_5_3(), VarysNCF()).cct.tolist()
    [4.0, 7.0]
    """

    name: ClassVar[str] = "ncf"
    order: ClassVar[OrderingName] = "ncf"


class VarysTCF(_FixedOrder):
    """Varys' machinery with smallesT-Coflow-First (``tcf``): ascending total size.

    Examples
    --------
    >>> from coflowlab import simulate
    >>> from coflowlab.instances.examples import fig_5_3
    >>> simulate(fig_5_3(), VarysTCF()).cct.tolist()
    [4.0, 7.0]
    """

    name: ClassVar[str] = "tcf"
    order: ClassVar[OrderingName] = "tcf"


class VarysFIFO(_FixedOrder):
    """Coflows in arrival order with MADD and backfill (``fifo``), "as in Orchestra" (§5.9).

    Non-preemptive at the coflow level: a coflow is never overtaken by a later one, which only
    gets the capacity the earlier ones leave (ties in arrival time go to the lower index).
    ``starvation`` defaults to ``False``: FIFO cannot starve a coflow (§5.7.4).

    Examples
    --------
    >>> from coflowlab import simulate
    >>> from coflowlab.instances.examples import fig_5_1
    >>> simulate(fig_5_1(), VarysFIFO()).cct.tolist()  # C1 first: C2 waits for in1
    [4.0, 4.0]
    """

    name: ClassVar[str] = "fifo"
    order: ClassVar[OrderingName] = "fifo"
    starvation_default: ClassVar[bool] = False


# ============================================================================ deadlines
class VarysDeadline:
    """Varys' deadline mode (Pseudocode 2): admission control, then MADD to the deadline.

    At a coflow's arrival, the rates ``remaining / (time left to the deadline)`` of every
    admitted coflow are reserved (line 2, recomputed from the remaining bytes and the time
    left, against the full capacities); the new coflow ``C`` is admitted iff its Γ against the
    capacity left is at most its deadline ``D`` (line 3, docs/varys.md#deadlines; with a relative
    slack of :data:`ADMISSION_TOL`), else it is rejected at once (``Decision.reject``; the
    engine reports it in ``SimulationResult.rejected``; also listed in :attr:`rejected`).
    Coflows arriving together are examined in index order, each seeing the reservations of the
    ones admitted before it.

    Admitted coflows are served in arrival order by MADD with the desired duration = time left
    (:func:`coflowlab.allocation.madd` with ``duration``), so each gets the least bandwidth that
    completes it exactly at its deadline; they are never preempted (their rates never drop
    below the reservation). Then coflows **without a deadline** (``inf``) are served best
    effort: never rejected, in SEBF order (Γ of remaining bytes) by MADD on the capacity the
    admitted coflows leave. Finally the backfill hands out what is left, admitted coflows
    first (arrival order), then the best-effort ones. Reschedules happen at arrivals and coflow
    completions, as in :class:`Varys`.

    Bookkeeping (docs/varys.md#deadlines): deadlines are relative to the coflow's observed arrival
    (``state.coflow_arrival``; the release unless a dependency held the coflow back); the
    reservations are recomputed from scratch at each reschedule (``Rem(.)`` reset to the full
    capacity between lines 2 and 5). An admitted coflow that can no longer finish on time
    (only through floating-point rounding when ``admission="varys"``) is served as fast as
    possible, after the on-time ones. The guarantee assumes all flows of a coflow arrive
    together (the benchmark format and every generator): admission sees the flows present at
    the coflow's first arrival.

    Parameters
    ----------
    admission
        ``"varys"`` (default): the admission test above. ``"all"``: admit every coflow (no
        rejection); those that cannot meet their deadline are served as fast as possible.
    backfill
        As for :class:`Varys`.
    reschedule_on
        As for :class:`Varys`.

    Examples
    --------
    Thesis Fig. 5.1 with both deadlines 2: C1 (Γ = 4) is rejected, C2 admitted at rate 1.

    >>> from coflowlab import simulate
    >>> from coflowlab.instances.examples import fig_5_1
    >>> res = simulate(fig_5_1(deadline=True), VarysDeadline())
    >>> res.rejected.tolist(), res.cct.tolist()
    ([0], [nan, 2.0])
    """

    name: ClassVar[str] = "varys-deadline"
    clairvoyant: ClassVar[bool] = True

    def __init__(
        self,
        *,
        admission: Literal["varys", "all"] = "varys",
        backfill: Backfill = "greedy",
        reschedule_on: Reschedule = "coflow",
    ) -> None:
        _check("admission", admission, ("varys", "all"))
        _check("backfill", backfill, BACKFILLS)
        _check("reschedule_on", reschedule_on, ("coflow", "flow"))
        self.admission = admission
        self.backfill = backfill
        self.reschedule_on = reschedule_on
        self.rejected: list[int] = []

    def __repr__(self) -> str:
        return (
            f"VarysDeadline(admission={self.admission!r}, backfill={self.backfill!r}, "
            f"reschedule_on={self.reschedule_on!r})"
        )

    def reset(self, view: InstanceView) -> None:
        """Prepares for a simulation: no coflow decided yet."""
        _clairvoyant(view, "VarysDeadline")
        n = view.num_coflows
        self._cap_in = np.array(view.cap_in, dtype=np.float64)
        self._cap_out = np.array(view.cap_out, dtype=np.float64)
        self._deadline = np.array(view.coflow_deadline, dtype=np.float64)
        self._decided = np.zeros(n, dtype=bool)
        self._admitted = np.zeros(n, dtype=bool)
        self._due = np.full(n, np.inf)
        self._pos = np.zeros(n, dtype=np.int64)
        self._track = _Tracker(view)
        self.rejected = []

    def decide(self, state: ObservedState) -> Decision:
        """Admits or rejects arriving coflows and reallocates; keeps rates otherwise."""
        st = cast(ClairvoyantState, state)
        self._track.update(st)
        change = bool(len(st.arrived) or len(st.completed_coflows))
        if self.reschedule_on == "flow" and len(st.completed):
            change = True
        if not change:
            return Decision(None, notify=self.reschedule_on)
        t = float(st.time)
        rem = np.asarray(st.remaining, dtype=np.float64)
        src = np.asarray(st.src, dtype=np.int64)
        dst = np.asarray(st.dst, dtype=np.int64)
        arrival = np.asarray(st.coflow_arrival, dtype=np.float64)
        groups = self._track.groups(st)
        ids = groups.ids
        self._pos[ids] = np.arange(len(ids))
        new = np.sort(ids[~self._decided[ids]])
        rejected = self._admit(t, new, groups, rem, src, dst, arrival)

        # 1. admitted coflows in arrival order, MADD to their deadlines
        admitted = orderings.fifo(arrival, ids[self._admitted[ids]])
        rates, late = self._reserve(t, admitted, groups, rem, src, dst)
        # 2. late admitted ones (arrival order), then best effort (SEBF), on what is left
        best = ids[~self._admitted[ids]]
        if len(rejected):
            best = best[~np.isin(best, rejected)]
        if len(best):
            gamma = orderings.bottleneck_key(
                rem, src, dst, groups.gidx, self._cap_in, self._cap_out, groups.size
            )
            best = orderings.order_by(gamma[self._pos[best]], best)
        rest = np.concatenate([late, best])
        if len(rest):
            left_in, left_out = self._left(rates, src, dst)
            ptr, flows = _prioritized(groups, self._pos[rest])
            extra, _ = madd(ptr, flows, rem, src, dst, left_in, left_out)
            rates += extra
        # 3. backfill: admitted first, then best effort
        _, order = _prioritized(groups, self._pos[np.concatenate([admitted, best])])
        rates = _backfill(
            self.backfill, rates, order, src, dst, groups.gidx, self._cap_in, self._cap_out
        )
        if len(rejected):
            self._track.present[rejected] = False
            return Decision(rates, reject=rejected, notify=self.reschedule_on)
        return Decision(rates, notify=self.reschedule_on)

    def _left(
        self, rates: FloatArray, src: IntArray, dst: IntArray
    ) -> tuple[FloatArray, FloatArray]:
        """Capacity left by ``rates``."""
        m_in, m_out = len(self._cap_in), len(self._cap_out)
        used_in = np.bincount(src, weights=rates, minlength=m_in)[:m_in]
        used_out = np.bincount(dst, weights=rates, minlength=m_out)[:m_out]
        return np.maximum(self._cap_in - used_in, 0.0), np.maximum(self._cap_out - used_out, 0.0)

    def _reserve(
        self,
        t: float,
        admitted: IntArray,
        groups: _Groups,
        rem: FloatArray,
        src: IntArray,
        dst: IntArray,
    ) -> tuple[FloatArray, IntArray]:
        """MADD to the deadline for the ``admitted`` coflows (in that order) that can still
        make it; returns the rates and the others (late), in the same order."""
        tau = self._due[admitted] - t
        timely = admitted[tau > 0]
        rates = np.zeros(len(rem))
        if not len(timely):
            return rates, admitted
        ptr, flows = _prioritized(groups, self._pos[timely])
        rates, gamma = madd(
            ptr, flows, rem, src, dst, self._cap_in, self._cap_out, duration=tau[tau > 0]
        )
        late = np.ones(len(admitted), dtype=bool)
        late[np.flatnonzero(tau > 0)[tau[tau > 0] >= gamma]] = False
        return rates, admitted[late]

    def _admit(
        self,
        t: float,
        new: IntArray,
        groups: _Groups,
        rem: FloatArray,
        src: IntArray,
        dst: IntArray,
        arrival: FloatArray,
    ) -> IntArray:
        """Decides the newly arrived coflows (in index order); returns the rejected ones."""
        self._decided[new] = True
        has_deadline = new[np.isfinite(self._deadline[new])]
        if not len(has_deadline):
            return np.zeros(0, dtype=np.int64)
        self._due[has_deadline] = arrival[has_deadline] + self._deadline[has_deadline]
        if self.admission == "all":
            self._admitted[has_deadline] = True
            return np.zeros(0, dtype=np.int64)
        ids = groups.ids
        old = orderings.fifo(arrival, ids[self._admitted[ids]])
        rates, _ = self._reserve(t, old, groups, rem, src, dst)
        res_in, res_out = self._left(rates, src, dst)
        rejected = []
        for c in has_deadline:
            g = self._pos[c]
            f = groups.flows[groups.ptr[g] : groups.ptr[g + 1]]
            gamma = effective_bottleneck(rem[f], src[f], dst[f], res_in, res_out)
            time_left = self._due[c] - t
            if not gamma <= time_left * (1 + ADMISSION_TOL):
                rejected.append(int(c))
                continue
            self._admitted[c] = True
            r = rem[f] / max(time_left, gamma)
            np.subtract.at(res_in, src[f], r)
            np.subtract.at(res_out, dst[f], r)
            np.maximum(res_in, 0.0, out=res_in)
            np.maximum(res_out, 0.0, out=res_out)
        self.rejected.extend(rejected)
        return np.asarray(rejected, dtype=np.int64)
