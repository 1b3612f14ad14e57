"""The one independent verifier of schedules.

Every schedule produced anywhere in coflowlab (formulations, approximations, simulated
heuristics) is checked here, from its records alone:

- port capacity at every segment (fluid) or slot (slotted), on ingress and egress;
- conservation: every flow gets exactly its size, no more, no less;
- release times: nothing is sent before a flow's release;
- dependencies: a coflow sends nothing before the coflows it depends on complete;
- the completion times the algorithm reported match those of the schedule;
- slotted model only: whole units per slot and integral sizes.

Completion times, and every metric derived from them, come from this verification and never
from an algorithm's own bookkeeping. A fluid flow completes when its bytes reach its size
(within the byte tolerance) or, if it goes on sending above the rate tolerance after that and
does not exceed its size, when it last stops sending: bytes still moving are part of the flow,
however few. Tolerances are documented in :mod:`coflowlab.constants`.

The fluid check streams over the records in chunks of whole time groups
(:class:`FluidVerifier`), each chunk checked in one compiled pass in time order (a vectorized
reference implementation is kept), so a simulator can feed records as it produces them
instead of keeping them.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum

import numpy as np
import numpy.typing as npt

from .constants import TOL
from .exceptions import InfeasibleScheduleError, InvalidScheduleError
from .instance import Instance
from .schedules import FluidSchedule, Schedule, SlottedSchedule
from .time_models import TimeModel

__all__ = [
    "FluidVerifier",
    "VerificationReport",
    "Violation",
    "ViolationKind",
    "verify",
]

CHUNK_RECORDS = 1 << 20
"""Records per chunk of the streaming fluid check (whole time groups are kept together)."""


class ViolationKind(StrEnum):
    """Kinds of violation the verifier reports."""

    CAPACITY = "capacity"
    """A port carries more than its capacity over an interval (or in a slot)."""
    UNDER_SENT = "under_sent"
    """A flow received less than its size."""
    OVER_SENT = "over_sent"
    """A flow received more than its size."""
    NEVER_STOPS = "never_stops"
    """A flow keeps a positive rate after the last record, so it sends without end."""
    EARLY = "early"
    """A flow sends before its release time."""
    NEGATIVE = "negative"
    """A negative rate or amount."""
    DEPENDENCY = "dependency"
    """A coflow sends before a coflow it depends on has completed."""
    COMPLETION_MISMATCH = "completion_mismatch"
    """A reported completion time differs from the schedule's."""
    NON_INTEGRAL = "non_integral"
    """Slotted model: a fractional amount in a slot, or a fractional flow size."""


@dataclass(frozen=True)
class Violation:
    """One violation, located as precisely as the kind allows.

    Attributes
    ----------
    kind
        What is violated.
    message
        A sentence naming the port, flow, coflow, interval and amount.
    port
        Port index (``0..m-1``) for capacity violations, else ``None``.
    side
        ``"ingress"`` or ``"egress"`` for capacity violations, else ``None``.
    flow, coflow
        The flow and coflow concerned, where there is one.
    start, end
        The time interval (fluid) or slot interval ``[s - 1, s)`` (slotted) concerned.
    amount
        The size of the violation: excess rate, missing or extra data, or time difference.
    """

    kind: ViolationKind
    message: str
    port: int | None = None
    side: str | None = None
    flow: int | None = None
    coflow: int | None = None
    start: float | None = None
    end: float | None = None
    amount: float | None = None


@dataclass(frozen=True)
class VerificationReport:
    """What the verifier found, and the completion times of the schedule.

    Attributes
    ----------
    model
        The time model of the schedule.
    violations
        The violations found (at most ``max_violations`` of each kind are kept).
    counts
        The number of violations of each kind found, including those not kept.
    flow_completion
        ``(F,)`` the time each flow received its full size (``nan`` if it never did).
    coflow_completion
        ``(n,)`` the completion time of each coflow: the largest of its flows'.
    time_tol
        The absolute time tolerance used (see :mod:`coflowlab.constants`).
    """

    model: TimeModel
    violations: tuple[Violation, ...]
    counts: dict[str, int]
    flow_completion: npt.NDArray[np.float64]
    coflow_completion: npt.NDArray[np.float64]
    time_tol: float
    _weights: npt.NDArray[np.float64] = field(repr=False)
    _releases: npt.NDArray[np.float64] = field(repr=False)

    @property
    def feasible(self) -> bool:
        """Whether no violation was found."""
        return not self.counts

    def __bool__(self) -> bool:
        return self.feasible

    @property
    def num_violations(self) -> int:
        """Total number of violations found, including those not kept."""
        return sum(self.counts.values())

    @property
    def cct(self) -> npt.NDArray[np.float64]:
        """``(n,)`` coflow completion times measured from each coflow's release."""
        return self.coflow_completion - self._releases

    @property
    def weighted_completion_time(self) -> float:
        """The objective ``Σ_j w_j C_j`` of docs/theory.md#model (completion times)."""
        return float(np.dot(self._weights, self.coflow_completion))

    @property
    def weighted_cct(self) -> float:
        """``Σ_j w_j (C_j - r_j)``: weighted CCT measured from the releases."""
        return float(np.dot(self._weights, self.cct))

    def raise_if_infeasible(self) -> VerificationReport:
        """Raises :class:`InfeasibleScheduleError` listing the first violations; else returns
        the report itself, so calls can be chained."""
        if self.feasible:
            return self
        raise InfeasibleScheduleError(self.summary(limit=5))

    def summary(self, limit: int = 10) -> str:
        """A short text: feasible, or the counts by kind and the first violations."""
        if self.feasible:
            return f"feasible ({self.model} schedule)"
        kinds = ", ".join(f"{k}: {c}" for k, c in sorted(self.counts.items()))
        lines = [f"infeasible ({self.model} schedule): {self.num_violations} violations ({kinds})"]
        lines += [f"  - {v.message}" for v in self.violations[:limit]]
        if len(self.violations) > limit:
            lines.append(f"  ... and {self.num_violations - limit} more")
        return "\n".join(lines)


class _Collector:
    """Keeps at most ``cap`` violations of each kind, and counts all of them."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.kept: list[Violation] = []
        self.counts: Counter[str] = Counter()

    def room(self, kind: ViolationKind) -> int:
        return max(0, self.cap - self.counts[kind.value])

    def add_many(self, kind: ViolationKind, count: int, make: list[Violation]) -> None:
        if count:
            self.kept.extend(make[: self.room(kind)])
            self.counts[kind.value] += count

    def flow_violations(
        self,
        inst: Instance,
        kind: ViolationKind,
        flows: np.ndarray,
        text: Callable[[int], str],
        *,
        start: np.ndarray | None = None,
        end: np.ndarray | None = None,
        amount: np.ndarray | None = None,
    ) -> None:
        """One violation per entry ``j`` of ``flows``, located at that flow and its coflow;
        ``text(j)`` says what is wrong and the optional arrays (aligned with ``flows``) give
        the interval and amount. Messages are only built for the violations kept."""
        made = []
        for j in range(min(len(flows), self.room(kind))):
            e = int(flows[j])
            k = int(inst.flow_coflow[e])
            made.append(
                Violation(
                    kind,
                    f"coflow {k}, flow {e}: {text(j)}",
                    flow=e,
                    coflow=k,
                    start=None if start is None else float(start[j]),
                    end=None if end is None else float(end[j]),
                    amount=None if amount is None else float(amount[j]),
                )
            )
        self.add_many(kind, len(flows), made)


_SIDES = ("ingress", "egress")


def _num(x: float) -> str:
    """A number as Python would print it (no ``np.float64(...)`` wrapper)."""
    return repr(float(x))


def _port_name(p: int, m: int) -> tuple[int, str]:
    return (p, _SIDES[0]) if p < m else (p - m, _SIDES[1])


class FluidVerifier:
    """Streaming check of a fluid schedule: feed records in time order, then finish.

    Parameters
    ----------
    instance
        The instance the records are for.
    tol
        Relative tolerance (see :mod:`coflowlab.constants`).
    horizon
        The largest time the schedule will reach; it sets the absolute time tolerance.
        :func:`verify` passes the schedule's. ``None`` (for records fed as they are produced)
        lets the tolerance follow the largest time fed so far.
    max_violations
        How many violations of each kind to keep (all are counted).
    compiled
        Check each chunk in one compiled pass over the records in time order (default).
        ``False`` selects the vectorized reference, which sorts each chunk by flow and by
        port; both apply the same rules and give the same report (up to rounding in the
        last bits of sums), the compiled pass several times faster and with less memory.

    Notes
    -----
    :meth:`feed` takes chunks whose times are non-decreasing across calls and which contain
    whole time groups: all records at one time must arrive in one call.

    Examples
    --------
    Two flows of size 2 share ingress port 0 at rate 1 each for 2 time units, fed in two
    chunks: the port carries 2 over [0, 2), and both flows complete at 2.

    >>> from coflowlab import Instance
    >>> inst = Instance.from_matrices([[[2.0, 2.0], [0, 0]]])
    >>> checker = FluidVerifier(inst, horizon=2.0)
    >>> checker.feed([0.0, 0.0], [0, 1], [1.0, 1.0])
    >>> checker.feed([2.0, 2.0], [0, 1], [0.0, 0.0])
    >>> report = checker.finish()
    >>> report.counts, report.flow_completion.tolist()
    ({'capacity': 1}, [2.0, 2.0])
    >>> print(report.violations[0].message)
    ingress port 0: carries 2 > capacity 1 (excess 1) on [0.0, 2.0)
    """

    def __init__(
        self,
        instance: Instance,
        *,
        tol: float = TOL,
        horizon: float | None = 0.0,
        max_violations: int = 100,
        compiled: bool = True,
    ) -> None:
        inst = instance
        self.inst = inst
        self.tol = tol
        m = inst.num_ports
        self.port_cap = inst.fabric.port_capacity
        self.flow_cap = np.minimum(
            inst.fabric.ingress_capacity[inst.flow_src],  # type: ignore[index]
            inst.fabric.egress_capacity[inst.flow_dst],  # type: ignore[index]
        )
        self.rate_tol = tol * self.flow_cap
        self._adaptive = horizon is None
        self.time_tol = 0.0
        self._set_time_scale(0.0 if horizon is None else abs(horizon))
        nf = inst.num_flows
        self.compiled = bool(compiled)
        self._rows: np.ndarray | None = None
        if self.compiled:
            # the compiled pass keeps a flow's state and constants in one row
            # (coflowlab._verifier_jit); the attributes below are views of its columns
            self._rows = _flow_rows(inst, self.flow_cap, self.byte_tol)
            self._state_columns(copy=False)
        else:
            self.rate = np.zeros(nf)
            self.since = np.zeros(nf)
            self.sent = np.zeros(nf)
            self.done_at = np.full(nf, np.nan)
            self.last_send = np.full(nf, -np.inf)
            self.first_send = np.full(nf, np.inf)
        self.usage = np.zeros(2 * m)
        self.pending: dict[int, tuple[float, float]] = {}  # port -> (start, excess)
        self._since_resync = 0
        self.last_time = -np.inf
        self.out = _Collector(max_violations)
        self._finished = False
        if self.compiled:
            # the compiled pass keeps an over-capacity interval open per port in arrays
            self._pend_start = np.full(2 * m, np.nan)
            self._pend_excess = np.zeros(2 * m)
            self._port_mark = np.zeros(2 * m, dtype=np.int64)
            self._group = 0

    def _state_columns(self, *, copy: bool) -> None:
        """Points the per-flow attributes at the columns of the compiled pass's rows (views,
        or contiguous copies)."""
        from . import _verifier_jit as c

        assert self._rows is not None
        cols = [c.RATE, c.SINCE, c.SENT, c.DONE_AT, c.FIRST_SEND, c.LAST_SEND]
        rate, since, sent, done_at, first, last = (
            self._rows[:, k].copy() if copy else self._rows[:, k] for k in cols
        )
        self.rate, self.since, self.sent, self.done_at = rate, since, sent, done_at
        self.first_send, self.last_send = first, last

    def _set_time_scale(self, horizon: float) -> None:
        scale = max(1.0, horizon, float(self.inst.flow_release.max(initial=0.0)))
        if self.tol * scale > self.time_tol:
            self.time_tol = self.tol * scale
            self.byte_tol = self.tol * self.inst.flow_size + self.flow_cap * self.time_tol
            rows = getattr(self, "_rows", None)  # the compiled pass's copy
            if rows is not None:
                from ._verifier_jit import BYTE_TOL

                rows[:, BYTE_TOL] = self.byte_tol

    # ---------------------------------------------------------------- per chunk
    def feed(self, time: npt.ArrayLike, flow: npt.ArrayLike, rate: npt.ArrayLike) -> None:
        """Checks one chunk of records (non-decreasing times, whole time groups)."""
        t = np.asarray(time, dtype=float)
        f = np.asarray(flow, dtype=np.int64)
        r = np.asarray(rate, dtype=float)
        if t.size == 0:
            return
        if t[0] < self.last_time or np.any(t[1:] < t[:-1]):
            raise InvalidScheduleError("FluidVerifier.feed: record times must not decrease")
        if t[0] == self.last_time:
            raise InvalidScheduleError(
                "FluidVerifier.feed: a time group was split across two chunks"
            )
        self.last_time = float(t[-1])
        if self._adaptive:
            self._set_time_scale(abs(self.last_time))
        if self.compiled:
            self._feed_compiled(t, f, r)
        else:
            self._feed_vectorized(t, f, r)

    def _feed_compiled(self, t: np.ndarray, f: np.ndarray, r: np.ndarray) -> None:
        """One compiled pass over the records in time order (:mod:`coflowlab._verifier_jit`)."""
        from ._verifier_jit import feed

        inst, out = self.inst, self.out
        counts, neg, early, capv, self._group = feed(
            np.ascontiguousarray(t), np.ascontiguousarray(f), np.ascontiguousarray(r),
            self._rows, self.tol, self.time_tol, self.port_cap, self.usage,
            self._pend_start, self._pend_excess, self._port_mark, self._group,
            out.cap,
        )  # fmt: skip
        if counts[0]:
            self._negative_violations(int(counts[0]), neg)
        if counts[1]:
            kept = early[: min(int(counts[1]), out.cap)]
            fl = kept[:, 0].astype(np.int64)
            self.out.flow_violations(
                inst,
                ViolationKind.EARLY,
                fl,
                lambda j: (
                    f"sends {kept[j, 3]:.6g} before its release {_num(kept[j, 4])} "
                    f"(rate {_num(kept[j, 5])} from t={_num(kept[j, 1])})"
                ),
                start=kept[:, 1],
                end=kept[:, 2],
                amount=kept[:, 3],
            )
            if counts[1] > len(kept):
                out.counts[ViolationKind.EARLY.value] += int(counts[1]) - len(kept)
        for k in range(min(int(counts[2]), out.cap)):
            self._capacity_violation(
                int(capv[k, 0]), float(capv[k, 1]), float(capv[k, 2]), float(capv[k, 3])
            )
        # the kernel counts only intervals longer than the time tolerance
        if counts[2] > out.cap:
            out.counts[ViolationKind.CAPACITY.value] += int(counts[2]) - out.cap
        self._since_resync += len(f)
        if self._since_resync >= CHUNK_RECORDS:
            self._resync_usage()

    def _negative_violations(self, count: int, rows: np.ndarray) -> None:
        kept = rows[: min(count, self.out.cap)]
        self.out.flow_violations(
            self.inst,
            ViolationKind.NEGATIVE,
            kept[:, 0].astype(np.int64),
            lambda j: f"negative rate {_num(kept[j, 2])} from t={_num(kept[j, 1])}",
            start=kept[:, 1],
            amount=kept[:, 2],
        )
        if count > len(kept):
            self.out.counts[ViolationKind.NEGATIVE.value] += count - len(kept)

    def _resync_usage(self) -> None:
        # re-derive the running usage exactly from the current rates, so rounding never
        # accumulates (every CHUNK_RECORDS records fed)
        inst, m = self.inst, self.inst.num_ports
        self._since_resync = 0
        if self._rows is not None:
            from ._verifier_jit import port_usage

            port_usage(self._rows, self.usage)  # the same sums, without gathering the rates
            return
        self.usage = np.concatenate(
            [
                np.bincount(inst.flow_src, weights=self.rate, minlength=m),
                np.bincount(inst.flow_dst, weights=self.rate, minlength=m),
            ]
        )

    def _feed_vectorized(self, t: np.ndarray, f: np.ndarray, r: np.ndarray) -> None:
        """The reference: each chunk checked with array operations (sorts per chunk)."""
        inst, tol = self.inst, self.tol

        # For each flow, its records in time order; of several at one time, the last wins.
        order = np.argsort(f, kind="stable")
        fs, ts, rs = f[order], t[order], r[order]
        keep = np.ones(len(fs), dtype=bool)
        keep[:-1] = (fs[1:] != fs[:-1]) | (ts[1:] != ts[:-1])
        fs, ts, rs = fs[keep], ts[keep], rs[keep]
        first = np.ones(len(fs), dtype=bool)
        first[1:] = fs[1:] != fs[:-1]
        prev_rate = np.where(first, self.rate[fs], np.roll(rs, 1))
        prev_time = np.where(first, self.since[fs], np.roll(ts, 1))

        neg = np.flatnonzero(rs < -tol * self.flow_cap[fs])
        self.out.flow_violations(
            inst,
            ViolationKind.NEGATIVE,
            fs[neg],
            lambda j: f"negative rate {_num(rs[neg[j]])} from t={_num(ts[neg[j]])}",
            start=ts[neg],
            amount=rs[neg],
        )

        # closed segments [prev_time, ts) at prev_rate
        sending = prev_rate != 0
        seg = np.where(sending, prev_rate * (ts - np.where(sending, prev_time, ts)), 0.0)
        self._check_release(fs, ts, prev_time, prev_rate)
        active = prev_rate > self.rate_tol[fs]
        np.minimum.at(self.first_send, fs[active], prev_time[active])
        np.maximum.at(self.last_send, fs[active], ts[active])

        csum = np.cumsum(seg)
        group_start = np.maximum.accumulate(np.where(first, np.arange(len(fs)), 0))
        before_chunk = np.concatenate([[0.0], csum])[group_start]
        sent_after = self.sent[fs] + (csum - before_chunk)
        sent_before = sent_after - seg
        target = inst.flow_size[fs] - self.byte_tol[fs]
        crossing = (
            np.isnan(self.done_at[fs]) & (sent_after >= target) & (sent_before < target) & sending
        )
        if crossing.any():
            idx = np.flatnonzero(crossing)
            need = np.maximum(inst.flow_size[fs[idx]] - sent_before[idx], 0.0)
            tc = np.minimum(prev_time[idx] + need / prev_rate[idx], ts[idx])
            tc = np.maximum(tc, prev_time[idx])
            np.fmin.at(self.done_at, fs[idx], tc)

        last = np.ones(len(fs), dtype=bool)
        last[:-1] = fs[1:] != fs[:-1]
        self.sent[fs[last]] = sent_after[last]
        self.rate[fs[last]] = rs[last]
        self.since[fs[last]] = ts[last]

        self._check_capacity(fs, ts, rs - prev_rate)

    def _check_release(
        self, fs: np.ndarray, ts: np.ndarray, prev_time: np.ndarray, prev_rate: np.ndarray
    ) -> None:
        inst = self.inst
        release = inst.flow_release[fs]
        early_len = np.minimum(ts, release) - prev_time
        early_bytes = np.where(prev_rate > 0, prev_rate * np.maximum(early_len, 0.0), 0.0)
        bad = np.flatnonzero(
            (early_bytes > self.byte_tol[fs]) & (prev_time < release - self.time_tol)
        )
        self.out.flow_violations(
            inst,
            ViolationKind.EARLY,
            fs[bad],
            lambda j: (
                f"sends {early_bytes[bad[j]]:.6g} before its release {_num(release[bad[j]])} "
                f"(rate {_num(prev_rate[bad[j]])} from t={_num(prev_time[bad[j]])})"
            ),
            start=prev_time[bad],
            end=np.minimum(ts, release)[bad],
            amount=early_bytes[bad],
        )

    def _check_capacity(self, fs: np.ndarray, ts: np.ndarray, delta: np.ndarray) -> None:
        inst, m = self.inst, self.inst.num_ports
        ports = np.concatenate([inst.flow_src[fs], inst.flow_dst[fs] + m])
        times = np.concatenate([ts, ts])
        deltas = np.concatenate([delta, delta])
        order = np.lexsort((times, ports))
        ports, times, deltas = ports[order], times[order], deltas[order]
        csum = np.cumsum(deltas)
        first = np.ones(len(ports), dtype=bool)
        first[1:] = ports[1:] != ports[:-1]
        start = np.maximum.accumulate(np.where(first, np.arange(len(ports)), 0))
        usage = self.usage[ports] + csum - np.concatenate([[0.0], csum])[start]
        # usage on [t, next change of that port) is the value after the last delta at t
        group_end = np.ones(len(ports), dtype=bool)
        group_end[:-1] = (ports[1:] != ports[:-1]) | (times[1:] != times[:-1])
        gp, gt, gu = ports[group_end], times[group_end], usage[group_end]
        port_first = np.ones(len(gp), dtype=bool)
        port_first[1:] = gp[1:] != gp[:-1]
        # close intervals left open by the previous chunk
        for i in np.flatnonzero(port_first):
            p = int(gp[i])
            if p in self.pending:
                s, excess = self.pending.pop(p)
                self._capacity_violation(p, s, float(gt[i]), excess)
        next_t = np.where(np.roll(port_first, -1), np.inf, np.roll(gt, -1))
        excess = gu - self.port_cap[gp]
        over = np.flatnonzero(excess > self.tol * self.port_cap[gp])
        for i in over:
            p = int(gp[i])
            if math.isinf(next_t[i]):
                self.pending[p] = (float(gt[i]), float(excess[i]))
            else:
                self._capacity_violation(p, float(gt[i]), float(next_t[i]), float(excess[i]))
        # keep the running usage, and re-derive it exactly from the current rates now and then,
        # so rounding never accumulates (exact every CHUNK_RECORDS records fed)
        last = np.ones(len(ports), dtype=bool)
        last[:-1] = ports[1:] != ports[:-1]
        self.usage[ports[last]] = usage[last]
        self._since_resync += len(fs)
        if self._since_resync >= CHUNK_RECORDS:
            self._resync_usage()

    def _capacity_violation(self, p: int, start: float, end: float, excess: float) -> None:
        if end - start <= self.time_tol:
            return  # within the time tolerance: moves at most capacity * time_tol extra
        _capacity_violation(self.out, self.inst.num_ports, self.port_cap, p, start, end, excess)

    # ---------------------------------------------------------------- end
    def finish(
        self, reported: npt.ArrayLike | None = None, *, excluded: npt.ArrayLike | None = None
    ) -> VerificationReport:
        """Closes the stream and returns the report; ``reported`` are claimed completions.

        ``excluded`` are coflows that must send nothing (rejected by admission control): a
        flow of theirs that received bytes beyond the tolerance is reported as over-sent
        (its size counts as 0), they need not complete, and their completion times are NaN.
        """
        if self._finished:
            raise InvalidScheduleError("FluidVerifier.finish: already finished")
        self._finished = True
        inst = self.inst
        if self._rows is not None:
            # contiguous copies of the columns, for the array operations below and the report
            self._state_columns(copy=True)
            self._rows = None
        if self.compiled:
            for q in np.flatnonzero(~np.isnan(self._pend_start)).tolist():
                self._capacity_violation(
                    q, float(self._pend_start[q]), math.inf, float(self._pend_excess[q])
                )
            # a negative rate still in force after the last record (the kernel reports one
            # when its segment closes)
            still = np.flatnonzero(self.rate < -self.tol * self.flow_cap)
            if still.size:
                rows = np.column_stack([still, self.since[still], self.rate[still]])
                self._negative_violations(len(still), rows)
        for p, (s, excess) in sorted(self.pending.items()):
            self._capacity_violation(p, s, math.inf, excess)
        open_ended = np.flatnonzero(self.rate > self.rate_tol)
        self.out.flow_violations(
            inst,
            ViolationKind.NEVER_STOPS,
            open_ended,
            lambda j: (
                f"keeps rate {_num(self.rate[open_ended[j]])} after its last record at "
                f"t={_num(self.since[open_ended[j]])}"
            ),
            start=self.since[open_ended],
            end=np.full(len(open_ended), np.inf),
            amount=self.rate[open_ended],
        )
        if open_ended.size:
            # the flow still completes inside its open segment, if it was short of its size
            e = open_ended[np.isnan(self.done_at[open_ended])]
            need = np.maximum(inst.flow_size[e] - self.sent[e], 0.0)
            self.done_at[e] = self.since[e] + need / self.rate[e]
            self.sent[open_ended] = np.inf
        # with an adaptive horizon the byte tolerance grows as the stream goes on, so a flow
        # that stopped just short of its size can come within the tolerance only later, when
        # no segment of its crosses the lowered target: it is complete (conservation below
        # agrees) and ended when it last sent
        late = np.flatnonzero(
            np.isnan(self.done_at) & (self.sent >= inst.flow_size - self.byte_tol)
        )
        self.done_at[late] = np.maximum(self.last_send[late], inst.flow_release[late])
        # a flow still sending after it reached its size (within tolerance) ends when it stops;
        # one that sent too much (reported below) is read as complete when it reached its size
        tail = ~np.isnan(self.done_at) & (self.sent <= inst.flow_size + self.byte_tol)
        np.fmax(self.done_at, self.last_send, out=self.done_at, where=tail)
        gone = _excluded_coflows(inst, excluded)
        out_flows = gone[inst.flow_coflow]
        _check_conservation(inst, self.sent, self.byte_tol, self.out, out_flows)
        self.done_at[out_flows] = np.nan
        return _finish_report(
            inst,
            TimeModel.FLUID,
            self.done_at,
            self.first_send,
            reported,
            self.time_tol,
            self.out,
            gone,
        )


def _capacity_violation(
    out: _Collector,
    num_ports: int,
    port_cap: np.ndarray,
    p: int,
    start: float,
    end: float,
    excess: float,
) -> None:
    """Reports port ``p`` (ingress ``p < m``, egress ``m + p``) over capacity by ``excess`` on
    ``[start, end)``; shared by the per-flow and the class-record verifiers."""
    kind = ViolationKind.CAPACITY
    port, side = _port_name(p, num_ports)
    cap = float(port_cap[p])
    out.add_many(
        kind,
        1,
        [
            Violation(
                kind,
                f"{side} port {port}: carries {cap + excess:.9g} > capacity {cap:.9g} "
                f"(excess {excess:.6g}) on [{_num(start)}, {_num(end)})",
                port=port,
                side=side,
                start=start,
                end=end,
                amount=excess,
            )
        ],
    )


def _flow_rows(inst: Instance, flow_cap: np.ndarray, byte_tol: np.ndarray) -> np.ndarray:
    """Per-flow rows of the compiled pass (columns in :mod:`coflowlab._verifier_jit`; the
    array starts on a 64-byte boundary): state (rate, since, sent, completion, first and last
    sending time), then constants (ports, size, release, tolerances)."""
    from . import _verifier_jit as c
    from .flow_state import _aligned_rows

    rows = _aligned_rows(inst.num_flows, c.WIDTH)
    rows[:, c.DONE_AT] = np.nan
    rows[:, c.FIRST_SEND] = np.inf
    rows[:, c.LAST_SEND] = -np.inf
    rows[:, c.SRC] = inst.flow_src
    rows[:, c.DST] = inst.flow_dst + inst.num_ports
    rows[:, c.SIZE] = inst.flow_size
    rows[:, c.RELEASE] = inst.flow_release
    rows[:, c.BYTE_TOL] = byte_tol
    rows[:, c.FLOW_CAP] = flow_cap
    return rows


def _excluded_coflows(inst: Instance, excluded: npt.ArrayLike | None) -> np.ndarray:
    """A mask of the ``excluded`` coflows (indices checked)."""
    out = np.zeros(inst.num_coflows, dtype=bool)
    if excluded is None:
        return out
    ks = np.asarray(excluded)
    if ks.size and (
        not np.issubdtype(ks.dtype, np.integer) or ks.min() < 0 or ks.max() >= inst.num_coflows
    ):
        raise InvalidScheduleError(
            f"excluded coflows must be indices in [0, {inst.num_coflows}), got {ks.tolist()}"
        )
    out[ks.astype(np.int64)] = True
    return out


def _check_conservation(
    inst: Instance,
    sent: np.ndarray,
    byte_tol: np.ndarray,
    out: _Collector,
    excluded: np.ndarray | None = None,
) -> None:
    # excluded (a flow mask): flows of rejected coflows, whose size counts as 0
    size = inst.flow_size
    if excluded is not None and excluded.any():
        size = np.where(excluded, 0.0, size)
    under = np.flatnonzero(sent < size - byte_tol)
    over = np.flatnonzero((sent > size + byte_tol) & np.isfinite(sent))
    for kind, bad, word in (
        (ViolationKind.UNDER_SENT, under, "missing"),
        (ViolationKind.OVER_SENT, over, "extra"),
    ):

        def text(j: int, bad: np.ndarray = bad, word: str = word) -> str:
            e = bad[j]
            if excluded is not None and excluded[e]:
                return f"received {sent[e]:.9g} although its coflow was rejected"
            return (
                f"received {sent[e]:.9g} of size {size[e]:.9g} "
                f"({word} {abs(sent[e] - size[e]):.6g})"
            )

        out.flow_violations(inst, kind, bad, text, amount=sent[bad] - size[bad])


def _finish_report(
    inst: Instance,
    model: TimeModel,
    done_at: np.ndarray,
    first_send: np.ndarray,
    reported: npt.ArrayLike | None,
    time_tol: float,
    out: _Collector,
    excluded: np.ndarray | None = None,
) -> VerificationReport:
    # excluded (a coflow mask): rejected coflows; dependencies on or of them do not apply
    n = inst.num_coflows
    incomplete = np.bincount(inst.flow_coflow, weights=np.isnan(done_at), minlength=n) > 0
    completion = np.full(n, -np.inf)
    np.maximum.at(completion, inst.flow_coflow, np.nan_to_num(done_at, nan=-np.inf))
    completion[incomplete] = np.nan
    start = np.full(n, np.inf)
    np.minimum.at(start, inst.flow_coflow, first_send)

    for a, b in inst.dependencies:
        if excluded is not None and (excluded[a] or excluded[b]):
            continue
        ca = completion[a]
        if start[b] < np.inf and (np.isnan(ca) or start[b] < ca - time_tol):
            kind = ViolationKind.DEPENDENCY
            out.add_many(
                kind,
                1,
                [
                    Violation(
                        kind,
                        f"coflow {int(b)} starts sending at t={_num(start[b])} before coflow "
                        f"{int(a)}, which it depends on, completes (t={_num(ca)})",
                        coflow=int(b),
                        start=float(start[b]),
                        end=float(ca),
                        amount=float(ca - start[b]) if not np.isnan(ca) else math.inf,
                    )
                ],
            )

    if reported is not None:
        claim = np.asarray(reported, dtype=float)
        if claim.shape != (n,):
            raise InvalidScheduleError(
                f"reported completion times have shape {claim.shape}, expected ({n},)"
            )
        both_nan = np.isnan(claim) & np.isnan(completion)
        diff = np.abs(claim - completion)
        bad = np.flatnonzero(~both_nan & ~(diff <= time_tol))
        kind = ViolationKind.COMPLETION_MISMATCH
        if bad.size:
            out.add_many(
                kind,
                bad.size,
                [
                    Violation(
                        kind,
                        f"coflow {int(k)}: reported completion {_num(claim[k])} but the schedule "
                        f"completes it at {_num(completion[k])}",
                        coflow=int(k),
                        amount=float(claim[k] - completion[k]),
                    )
                    for k in bad[: out.room(kind)]
                ],
            )
    done_at.setflags(write=False)
    completion.setflags(write=False)
    return VerificationReport(
        model=model,
        violations=tuple(out.kept),
        counts=dict(out.counts),
        flow_completion=done_at,
        coflow_completion=completion,
        time_tol=time_tol,
        _weights=inst.coflow_weight,
        _releases=inst.coflow_release,
    )


def _verify_fluid(
    inst: Instance,
    sched: FluidSchedule,
    tol: float,
    max_violations: int,
    excluded: npt.ArrayLike | None = None,
    *,
    compiled: bool = True,
) -> VerificationReport:
    checker = FluidVerifier(
        inst, tol=tol, horizon=sched.horizon, max_violations=max_violations, compiled=compiled
    )
    t, n = sched.time, sched.num_records
    lo = 0
    while lo < n:
        hi = min(lo + CHUNK_RECORDS, n)
        if hi < n:  # cut before the time group that straddles the boundary
            cut = int(np.searchsorted(t, t[hi], side="left"))
            hi = cut if cut > lo else int(np.searchsorted(t, t[hi], side="right"))
        checker.feed(t[lo:hi], sched.flow[lo:hi], sched.rate[lo:hi])
        lo = hi
    return checker.finish(sched.completion, excluded=excluded)


def _verify_slotted(
    inst: Instance, sched: SlottedSchedule, tol: float, max_violations: int
) -> VerificationReport:
    out = _Collector(max_violations)
    m = inst.num_ports
    s, f, a = sched.slot, sched.flow, sched.amount
    time_tol = tol * max(1.0, float(sched.horizon), float(inst.flow_release.max(initial=0.0)))
    size = inst.flow_size

    frac_size = np.flatnonzero(np.abs(size - np.round(size)) > tol * np.maximum(size, 1.0))
    frac_amount = np.flatnonzero(np.abs(a - np.round(a)) > tol * np.maximum(np.abs(a), 1.0))
    out.flow_violations(
        inst,
        ViolationKind.NON_INTEGRAL,
        frac_size,
        lambda j: (
            f"size {_num(size[frac_size[j]])} is not integral (the slotted model needs "
            "whole units)"
        ),
        amount=size[frac_size],
    )
    slot_start, slot_end = (s - 1).astype(float), s.astype(float)
    neg = np.flatnonzero(a < 0)
    early = np.flatnonzero((a > 0) & (s - 1 < inst.flow_release[f] - time_tol))
    for kind, idx, template in (
        (ViolationKind.NON_INTEGRAL, frac_amount, "sends {a} units in slot {s} (not whole)"),
        (ViolationKind.NEGATIVE, neg, "negative amount {a} in slot {s}"),
        (ViolationKind.EARLY, early, "sends {a} in slot {s} = [{s0}, {s}) before its release {r}"),
    ):

        def describe(j: int, idx: np.ndarray = idx, template: str = template) -> str:
            i = idx[j]
            return template.format(
                a=_num(a[i]), s=int(s[i]), s0=int(s[i] - 1), r=_num(inst.flow_release[f[i]])
            )

        out.flow_violations(
            inst,
            kind,
            f[idx],
            describe,
            start=slot_start[idx],
            end=slot_end[idx],
            amount=a[idx],
        )

    # capacity per (port, slot)
    ports = np.concatenate([inst.flow_src[f], inst.flow_dst[f] + m])
    slots = np.concatenate([s, s])
    amounts = np.concatenate([a, a])
    if ports.size:
        key = ports * (int(slots.max()) + 1) + slots
        uniq, inv = np.unique(key, return_inverse=True)
        load = np.bincount(inv, weights=amounts)
        up, us = uniq // (int(slots.max()) + 1), uniq % (int(slots.max()) + 1)
        cap = inst.fabric.port_capacity[up]
        over = np.flatnonzero(load - cap > tol * cap)
        kind = ViolationKind.CAPACITY
        viols = []
        for i in over[: out.room(kind)]:
            port, side = _port_name(int(up[i]), m)
            viols.append(
                Violation(
                    kind,
                    f"{side} port {port}: moves {load[i]:.9g} > capacity {cap[i]:.9g} in "
                    f"slot {int(us[i])} = [{us[i] - 1}, {us[i]})",
                    port=port,
                    side=side,
                    start=float(us[i] - 1),
                    end=float(us[i]),
                    amount=float(load[i] - cap[i]),
                )
            )
        if over.size:
            out.add_many(kind, over.size, viols)

    # bytes and completion: cumulative per flow in slot order
    order = np.lexsort((s, f))
    fs, ss, as_ = f[order], s[order], a[order]
    sent = np.bincount(fs, weights=as_, minlength=inst.num_flows)
    byte_tol = tol * size
    _check_conservation(inst, sent, byte_tol, out)
    done_at = np.full(inst.num_flows, np.nan)
    first_send = np.full(inst.num_flows, np.inf)
    if fs.size:
        csum = np.cumsum(as_)
        first = np.ones(len(fs), dtype=bool)
        first[1:] = fs[1:] != fs[:-1]
        start = np.maximum.accumulate(np.where(first, np.arange(len(fs)), 0))
        cum = csum - np.concatenate([[0.0], csum])[start]
        reached = cum >= size[fs] - byte_tol[fs]
        np.fmin.at(done_at, fs[reached], ss[reached].astype(float))
        pos = as_ > 0
        np.minimum.at(first_send, fs[pos], (ss[pos] - 1).astype(float))
    return _finish_report(
        inst, TimeModel.SLOTTED, done_at, first_send, sched.completion, time_tol, out
    )


def verify(
    instance: Instance,
    schedule: Schedule,
    tol: float = TOL,
    *,
    max_violations: int = 100,
    excluded: npt.ArrayLike | None = None,
) -> VerificationReport:
    """Checks a schedule against its instance and computes its completion times.

    Parameters
    ----------
    instance
        The instance.
    schedule
        A :class:`FluidSchedule` or a :class:`SlottedSchedule`.
    tol
        Relative tolerance of every comparison; see :mod:`coflowlab.constants`.
    max_violations
        How many violations of each kind to keep in the report (all are counted).
    excluded
        Fluid schedules: coflows that must send nothing (rejected by admission control).
        They need not complete (completion NaN); bytes they received are reported as
        over-sent, against a size of 0.

    Returns
    -------
    VerificationReport
        Whether the schedule is feasible, each violation located (port, interval, amount),
        and the completion times of every flow and coflow.

    Raises
    ------
    InvalidScheduleError
        If the schedule is for a different number of flows.

    Examples
    --------
    One flow of size 2 on a unit port, sent at rate 1 from 0 to 2:

    >>> from coflowlab import Instance, FluidSchedule, verify
    >>> inst = Instance.from_matrices([[[2.0]]])
    >>> report = verify(inst, FluidSchedule(1, time=[0, 2], flow=[0, 0], rate=[1.0, 0.0]))
    >>> report.feasible, report.coflow_completion.tolist()
    (True, [2.0])

    At rate 2 the port is over capacity:

    >>> bad = verify(inst, FluidSchedule(1, time=[0, 1], flow=[0, 0], rate=[2.0, 0.0]))
    >>> print(bad.violations[0].message)
    ingress port 0: carries 2 > capacity 1 (excess 1) on [0.0, 1.0)
    """
    if schedule.num_flows != instance.num_flows:
        raise InvalidScheduleError(
            f"the schedule is for {schedule.num_flows} flows but the instance has "
            f"{instance.num_flows}"
        )
    if isinstance(schedule, FluidSchedule):
        return _verify_fluid(instance, schedule, tol, max_violations, excluded)
    if excluded is not None:
        raise InvalidScheduleError("verify: excluded coflows apply to fluid schedules only")
    if isinstance(schedule, SlottedSchedule):
        return _verify_slotted(instance, schedule, tol, max_violations)
    raise TypeError(f"verify: expected a FluidSchedule or SlottedSchedule, got {type(schedule)}")
