"""The independent verifier of class records (rate classes).

A *rate class* is a fixed set of flows that always share one speed, and a *class record*
``(t, c, r)`` sets the speed of class ``c`` to ``r`` from time ``t`` on. Under per-flow fair
sharing every flow of one port pair gets the same rate, so one record per pair replaces one
per flow. The semantics (fixed for the engine and this verifier alike):

- ``flow_class[f]`` in ``[0, C)`` is fixed; a flow of class ``c`` with weight ``w_f > 0``
  (default 1) sends at ``rate_c(t) * w_f`` while it is active, from its release until it
  completes. A class has speed 0 before its first record; of several records of one class at
  one time, the last counts. A flow joins its class at its release without any record.
- With ``V_c(t)`` the integral of ``rate_c`` from 0 to ``t``, flow ``f`` has sent
  ``w_f (V_c(t) - V_c(release_f))`` and completes at the first time this reaches its size; it
  then leaves its class without any record. The flows of a class thus complete in the order of
  the key ``V_c(release_f) + size_f / w_f`` (ties by flow index).
- Port usage ``u_p(t)`` is the sum over classes of ``rate_c(t)`` times the weight of the
  class's active flows at port ``p``; the capacity rule is that of
  :class:`coflowlab.verifier.FluidVerifier`. At one time, the flows due complete first, then
  the flows released then join, then the records set the speeds; the capacity check is on
  the state after all of them.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from .constants import TOL
from .exceptions import InvalidScheduleError
from .flow_state import _min_tree
from .instance import Instance
from .time_models import TimeModel
from .verifier import (
    VerificationReport,
    Violation,
    ViolationKind,
    _capacity_violation,
    _Collector,
    _finish_report,
    _num,
)

__all__ = ["ClassVerifier"]


class ClassVerifier:
    """Streaming check of class records: feed records in time order, then finish.

    The flows' completion times are computed from the records alone, following the
    semantics of :mod:`coflowlab.class_verifier`, in one compiled pass in time order over the
    records, the releases and the completions (:mod:`coflowlab._class_verifier_jit`), in
    ``O((records + flows) log)``.

    Parameters
    ----------
    instance
        The instance the records are for; it must have no dependencies.
    flow_class
        ``(F,)`` the class of each flow, in ``[0, num_classes)``.
    num_classes
        The number of classes ``C``.
    flow_weight
        ``(F,)`` each flow's weight, finite and positive: it sends at its class's speed
        times its weight. Default 1.
    tol
        Relative tolerance (see :mod:`coflowlab.constants`).
    horizon
        The largest time of the schedule; it sets the absolute time tolerance. ``None`` (for
        records fed as they are produced) lets the tolerance follow the largest time seen.
    max_violations
        How many violations of each kind to keep (all are counted).

    Raises
    ------
    InvalidScheduleError
        If the instance has dependencies, or ``flow_class`` or ``flow_weight`` is invalid
        (the message names the index).

    Notes
    -----
    :meth:`feed` takes chunks whose times are non-decreasing across calls and which contain
    whole time groups: all records at one time must arrive in one call. It processes every
    event up to the last record time of the chunk; :meth:`finish` processes the rest: the
    flows still to be released join their class, and every class at positive speed runs its
    active flows to completion at that speed (their completion times are exact: a class
    record stream needs no record to stop a flow, so there is no ``never_stops``).

    The violations found are ``capacity`` (worded as by
    :class:`~coflowlab.verifier.FluidVerifier`), ``negative`` (a class at negative speed; the
    violation names the class and carries its flow of smallest index), ``under_sent`` (a flow
    whose class stops for good, at speed 0 or below, before it has sent its size within the
    byte tolerance; a flow within that tolerance completes when its class last stopped) and
    ``completion_mismatch``. ``early`` and ``over_sent`` cannot happen: a flow sends nothing
    before its release, and it leaves its class when it has sent its size.

    Examples
    --------
    Two flows of sizes 1 and 3 on one port pair (capacity 2) form class 0, at speed 1: each
    flow sends at 1, the port carries 2, and the flows complete at 1 and 3.

    >>> from coflowlab import Coflow, Fabric, Instance
    >>> inst = Instance.from_coflows([Coflow([(0, 0, 1.0), (0, 0, 3.0)])], Fabric(1, 2.0, 2.0))
    >>> checker = ClassVerifier(inst, [0, 0], 1, horizon=3.0)
    >>> checker.feed([0.0], [0], [1.0])
    >>> report = checker.finish(reported=[3.0])
    >>> report.feasible, report.flow_completion.tolist()
    (True, [1.0, 3.0])

    At speed 1.5 the port carries 3 until the first flow completes at 2/3:

    >>> checker = ClassVerifier(inst, [0, 0], 1, horizon=3.0)
    >>> checker.feed([0.0], [0], [1.5])
    >>> report = checker.finish()
    >>> report.counts, report.flow_completion.tolist()
    ({'capacity': 2}, [0.6666666666666666, 2.0])
    >>> print(report.violations[0].message)
    ingress port 0: carries 3 > capacity 2 (excess 1) on [0.0, 0.6666666666666666)
    """

    def __init__(
        self,
        instance: Instance,
        flow_class: npt.ArrayLike,
        num_classes: int,
        *,
        flow_weight: npt.ArrayLike | None = None,
        tol: float = TOL,
        horizon: float | None = 0.0,
        max_violations: int = 100,
    ) -> None:
        inst = instance
        if len(inst.dependencies):
            raise InvalidScheduleError(
                "ClassVerifier: class records do not support dependencies (the instance has "
                f"{len(inst.dependencies)})"
            )
        nf, m = inst.num_flows, inst.num_ports
        if isinstance(num_classes, bool) or not isinstance(num_classes, (int, np.integer)):
            raise InvalidScheduleError(
                f"ClassVerifier: num_classes must be an integer, got {num_classes!r}"
            )
        nc = int(num_classes)
        if nc < 0:
            raise InvalidScheduleError(f"ClassVerifier: num_classes is {nc} (must be >= 0)")
        cls = np.asarray(flow_class)
        if cls.shape != (nf,):
            raise InvalidScheduleError(
                f"ClassVerifier: flow_class has shape {cls.shape}, expected ({nf},)"
            )
        if not np.issubdtype(cls.dtype, np.integer):
            j = _first_non_integer(cls)
            if j >= 0:
                raise InvalidScheduleError(
                    f"ClassVerifier: flow_class[{j}] = {cls[j].item()!r} is not an integer "
                    "class index"
                )
        cls = cls.astype(np.int64)
        out_of_range = np.flatnonzero((cls < 0) | (cls >= nc))
        if out_of_range.size:
            j = int(out_of_range[0])
            raise InvalidScheduleError(
                f"ClassVerifier: flow_class[{j}] = {cls[j]} is outside [0, {nc})"
            )
        if flow_weight is None:
            weight = np.ones(nf)
        else:
            weight = np.asarray(flow_weight, dtype=float)
            if weight.shape != (nf,):
                raise InvalidScheduleError(
                    f"ClassVerifier: flow_weight has shape {weight.shape}, expected ({nf},)"
                )
            bad = np.flatnonzero(~(np.isfinite(weight) & (weight > 0)))
            if bad.size:
                j = int(bad[0])
                raise InvalidScheduleError(
                    f"ClassVerifier: flow_weight[{j}] = {_num(weight[j])} (must be finite and > 0)"
                )
        self.inst = inst
        self.num_classes = nc
        self.flow_class = cls
        self.flow_weight = weight
        self.tol = float(tol)
        self.port_cap = inst.fabric.port_capacity
        self.flow_cap = np.minimum(
            inst.fabric.ingress_capacity[inst.flow_src],  # type: ignore[index]
            inst.fabric.egress_capacity[inst.flow_dst],  # type: ignore[index]
        )
        self._adaptive = horizon is None
        scale = max(
            1.0,
            0.0 if horizon is None else abs(float(horizon)),
            float(inst.flow_release.max(initial=0.0)),
        )
        self._fstate = np.array([self.tol * scale])
        self.out = _Collector(max_violations)
        self.last_time = -np.inf
        self._finished = False

        # constants of the compiled pass (:mod:`coflowlab._class_verifier_jit`)
        from . import _class_verifier_jit as k

        self._rel_order = np.argsort(inst.flow_release, kind="stable").astype(np.int64)
        self._size_w = inst.flow_size / weight
        # each class's distinct ports (ingress p, egress m + p), sorted by class then port
        ports = np.concatenate([inst.flow_src, inst.flow_dst + m]).astype(np.int64)
        pair = np.concatenate([cls, cls]) * (2 * m) + ports
        uniq, inv = np.unique(pair, return_inverse=True)
        inv = inv.reshape(-1).astype(np.int64)
        self._slot_src, self._slot_dst = inv[:nf].copy(), inv[nf:].copy()
        ptr = np.searchsorted(uniq // (2 * m), np.arange(nc + 1))
        self._hoff = np.concatenate([[0], np.cumsum(np.bincount(cls, minlength=nc))])
        self._hoff = self._hoff.astype(np.int64)
        # the smallest negative speed that counts, and the flow a violation is attached to
        scale_c = np.full(nc, np.inf)
        np.minimum.at(scale_c, cls, self.flow_cap / weight)
        self._neg_tol = self.tol * np.where(np.isinf(scale_c), 1.0, scale_c)
        self._first_flow = np.full(nc, -1, dtype=np.int64)
        self._first_flow[cls[::-1]] = np.arange(nf - 1, -1, -1)

        # state: a row per class and per (class, port), heaps, per-flow results
        self._istate = np.zeros(3, dtype=np.int64)
        self._crow = np.zeros((nc, k.CWIDTH))
        self._crow[:, k.KEYMIN] = np.inf
        self._crow[:, k.STOP] = -np.inf
        self._crow[:, k.PLO] = ptr[:-1]
        self._crow[:, k.PHI] = ptr[1:]
        self._prow = np.zeros((len(uniq), k.PWIDTH))
        self._prow[:, k.PORT] = uniq % (2 * m)
        self.usage = np.zeros(2 * m)
        self._hkey = np.zeros(nf)
        self._hflow = np.zeros(nf, dtype=np.int64)
        self._hlen = np.zeros(nc, dtype=np.int64)
        self._tree, self._off = _min_tree(nc)
        self._cmark = np.zeros(nc, dtype=np.int64)  # the last time group that changed it
        self.vrel = np.full(nf, np.nan)
        self.done_at = np.full(nf, np.nan)
        self._pend_start = np.full(2 * m, np.nan)
        self._pend_excess = np.zeros(2 * m)
        self._port_mark = np.zeros(2 * m, dtype=np.int64)

    @property
    def rate(self) -> npt.NDArray[np.float64]:
        """``(C,)`` each class's current speed."""
        from ._class_verifier_jit import RATE

        return self._crow[:, RATE].copy()

    @property
    def time_tol(self) -> float:
        """The absolute time tolerance in force (see :mod:`coflowlab.constants`)."""
        return float(self._fstate[0])

    # ---------------------------------------------------------------- per chunk
    def feed(self, time: npt.ArrayLike, cls: npt.ArrayLike, rate: npt.ArrayLike) -> None:
        """Checks one chunk of class records ``(time, class, speed)`` (non-decreasing times,
        whole time groups).

        Raises
        ------
        InvalidScheduleError
            If the arrays differ in shape, a time or speed is not finite, a class is out of
            range, the times decrease, or a time group is split across two chunks (the
            message names the record), or after :meth:`finish`.
        """
        from ._class_verifier_jit import check_records

        if self._finished:
            raise InvalidScheduleError("ClassVerifier.feed: already finished")
        t = np.ascontiguousarray(time, dtype=float).reshape(-1)
        c = np.ascontiguousarray(cls).reshape(-1)
        r = np.ascontiguousarray(rate, dtype=float).reshape(-1)
        if not (t.shape == c.shape == r.shape):
            raise InvalidScheduleError(
                f"ClassVerifier.feed: time, class and rate have lengths {t.size}, {c.size} "
                f"and {r.size}"
            )
        if t.size == 0:
            return
        if not np.issubdtype(c.dtype, np.integer):
            j = _first_non_integer(c)
            if j >= 0:
                raise InvalidScheduleError(
                    f"ClassVerifier.feed: record {j}: class {c[j].item()!r} is not an integer"
                )
        c = c.astype(np.int64, copy=False)
        code, j = check_records(t, c, r, self.num_classes, self.last_time)
        if code:
            what = {
                1: f"time {_num(t[j])} is not finite",
                2: f"rate {_num(r[j])} is not finite",
                3: f"class {int(c[j])} is outside [0, {self.num_classes})",
                4: f"time {_num(t[j])} is before the previous record's",
                5: f"time {_num(t[j])} continues the last time group of the previous chunk "
                "(a time group was split across two chunks)",
            }[int(code)]
            if code == 4 and j == 0:
                what = f"time {_num(t[j])} is before the last time fed {_num(self.last_time)}"
            raise InvalidScheduleError(f"ClassVerifier.feed: record {int(j)}: {what}")
        self.last_time = float(t[-1])
        self._run(t, c, r, self.last_time)

    def _run(self, t: np.ndarray, c: np.ndarray, r: np.ndarray, limit: float) -> None:
        from ._class_verifier_jit import run

        out = self.out
        counts, neg, capv = run(
            t, c, r, limit,
            self._rel_order, self.inst.flow_release, self._size_w, self.flow_weight,
            self.flow_class, self._slot_src, self._slot_dst, self._hoff, self.port_cap,
            self._neg_tol, self.tol, self._adaptive, out.cap,
            self._istate, self._fstate, self._crow, self._prow, self.usage, self._hkey,
            self._hflow, self._hlen, self._tree, self._off, self._cmark, self.vrel, self.done_at,
            self._pend_start, self._pend_excess, self._port_mark,
        )  # fmt: skip
        if counts[0]:
            self._negative_violations(int(counts[0]), neg)
        for k in range(min(int(counts[1]), out.cap)):
            self._capacity_violation(
                int(capv[k, 0]), float(capv[k, 1]), float(capv[k, 2]), float(capv[k, 3])
            )
        if counts[1] > out.cap:  # the kernel counts only intervals longer than time_tol
            out.counts[ViolationKind.CAPACITY.value] += int(counts[1]) - out.cap

    def _negative_violations(self, count: int, rows: np.ndarray) -> None:
        kind = ViolationKind.NEGATIVE
        made = []
        for j in range(min(count, self.out.room(kind))):
            c, start, speed = int(rows[j, 0]), float(rows[j, 1]), float(rows[j, 2])
            f = int(self._first_flow[c])
            flow = None if f < 0 else f
            coflow = None if f < 0 else int(self.inst.flow_coflow[f])
            made.append(
                Violation(
                    kind,
                    f"class {c}: negative speed {_num(speed)} from t={_num(start)}",
                    flow=flow,
                    coflow=coflow,
                    start=start,
                    amount=speed,
                )
            )
        self.out.add_many(kind, count, made)

    def _capacity_violation(self, p: int, start: float, end: float, excess: float) -> None:
        # (the compiled pass reports only intervals longer than the time tolerance)
        _capacity_violation(self.out, self.inst.num_ports, self.port_cap, p, start, end, excess)

    # ---------------------------------------------------------------- end
    def finish(self, reported: npt.ArrayLike | None = None) -> VerificationReport:
        """Closes the stream and returns the report; ``reported`` are the claimed completion
        times per coflow (a ``completion_mismatch`` for each one off by more than
        ``time_tol``)."""
        if self._finished:
            raise InvalidScheduleError("ClassVerifier.finish: already finished")
        self._finished = True
        inst = self.inst
        empty = np.zeros(0)
        # every release left, and every class at positive speed runs to its last completion
        self._run(empty, np.zeros(0, dtype=np.int64), empty, math.inf)
        # no over-capacity interval is left open: every flow still sending has completed, and
        # the ports it leaves were checked then
        from ._class_verifier_jit import RATE, SINCE, STOP, VSUM

        rate, since = self._crow[:, RATE], self._crow[:, SINCE]
        still = np.flatnonzero(rate < -self._neg_tol)
        if still.size:
            self._negative_violations(
                len(still), np.column_stack([still, since[still], rate[still]])
            )
        time_tol = self.time_tol
        done_at = self.done_at.copy()
        short = np.flatnonzero(np.isnan(done_at))
        if short.size:
            # their class stopped for good (speed <= 0): bytes sent up to its last record
            c = self.flow_class[short]
            w = self.flow_weight[short]
            sent = np.maximum(w * (self._crow[c, VSUM] - self.vrel[short]), 0.0)
            size = inst.flow_size[short]
            byte_tol = self.tol * size + self.flow_cap[short] * time_tol
            close = sent >= size - byte_tol
            done_at[short[close]] = np.maximum(
                self._crow[c[close], STOP], inst.flow_release[short[close]]
            )
            under = ~close
            bad, bsent, bsize = short[under], sent[under], size[under]
            self.out.flow_violations(
                inst,
                ViolationKind.UNDER_SENT,
                bad,
                lambda j: (
                    f"received {bsent[j]:.9g} of size {bsize[j]:.9g} "
                    f"(missing {abs(bsent[j] - bsize[j]):.6g})"
                ),
                amount=bsent - bsize,
            )
        return _finish_report(
            inst,
            TimeModel.FLUID,
            done_at,
            np.full(inst.num_flows, np.inf),
            reported,
            time_tol,
            self.out,
        )


def _first_non_integer(values: np.ndarray) -> int:
    """The index of the first entry that is not an integer (``-1`` if none)."""
    try:
        x = values.astype(float)
    except (TypeError, ValueError):
        return 0
    bad = np.flatnonzero(~np.isfinite(x) | (x != np.round(x)))
    return int(bad[0]) if bad.size else -1
