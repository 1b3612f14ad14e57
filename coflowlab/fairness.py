"""Fairness metrics of a fluid schedule: progress over time, isolation guarantee, link
utilization and Jain's index (Chowdhury's PhD thesis, UC Berkeley 2015, §7.2 and Table 7.1;
Coflex, Wang et al., IEEE INFOCOM 2017, §II-B and §V).

At each instant where rates change, for every coflow that has been released and has bytes
left (its remaining bytes define its demand, as MADD computes correlation vectors, thesis
§7.5.3; docs/hug-coflex.md#metrics):

- **progress** ``P_k = min_{i: d_k^i > 0} c_k^i / d_k^i``: with ``c_k^i`` the fraction of link
  ``i`` (ingress ports, then egress ports) its flows use and ``d_k`` its correlation vector, this
  is ``min_i rate_k^i Γ_k / load_k^i``: the rate at which it progresses relative to running
  alone (1 = as fast as alone);
- **isolation guarantee** ``min_k P_k`` (thesis §7.2);
- **utilization**: ``Σ_i Σ_k c_k^i / 2m``, the mean fraction of the ``2m`` links in use;
- **Jain's index** of the progress vector, ``(Σ P_k)² / (n Σ P_k²)`` (1 = all equal).

Summaries weight each instant by how long its rates last (time averages over the time at least
one coflow is active).

Examples
--------
>>> import coflowlab as cl
>>> from coflowlab.heuristics import make_policy
>>> from coflowlab.instances.examples import coflex_fig2
>>> inst = coflex_fig2()
>>> res = cl.simulate(inst, make_policy("hug", inst))
>>> s = fairness_summary(inst, res.schedule)
>>> round(s["min_isolation_guarantee"], 12), round(s["initial_isolation_guarantee"], 12)
(0.666666666667, 0.666666666667)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from .constants import TOL
from .instance import Instance
from .schedules import FluidSchedule

__all__ = [
    "FairnessMeter",
    "ProgressTimeline",
    "fairness_summary",
    "finish_tolerance",
    "format_fairness",
    "instant_progress",
    "jain_index",
    "progress_timeline",
]

FloatArray = npt.NDArray[np.float64]


def jain_index(values: npt.ArrayLike) -> float:
    """Jain's fairness index ``(Σ x)² / (n Σ x²)``; 1 for an empty or all-zero vector.

    At most 1 in exact arithmetic; the roundings of the two sums can exceed it by an ulp,
    so the value is capped at 1 (here, in the compiled meter and in the time averages).

    Examples
    --------
    >>> jain_index([1, 1, 1]), jain_index([1, 0])
    (1.0, 0.5)
    """
    x = np.asarray(values, dtype=float)
    sq = float(np.dot(x, x))
    if len(x) == 0 or sq == 0.0:
        return 1.0
    return min(float(x.sum() ** 2 / (len(x) * sq)), 1.0)


def instant_progress(
    instance: Instance, rate: npt.ArrayLike, remaining: npt.ArrayLike, active: npt.ArrayLike
) -> FloatArray:
    """Each coflow's progress ``P_k`` at one instant (``nan`` for coflows not active).

    Parameters
    ----------
    rate, remaining
        ``(num_flows,)`` each flow's rate and remaining bytes.
    active
        ``(num_flows,)`` booleans: the flows released and not finished.

    Examples
    --------
    One coflow of two flows on one ingress port, sending at half the speed it could alone.

    >>> from coflowlab import Instance
    >>> inst = Instance.from_matrices([[[1.0, 1.0], [0, 0]]])
    >>> instant_progress(inst, [0.25, 0.25], [1.0, 1.0], [True, True]).tolist()
    [0.5]
    """
    inst = instance
    m = inst.num_ports
    fab = inst.fabric
    cap = np.concatenate([np.asarray(fab.ingress_capacity), np.asarray(fab.egress_capacity)])
    act = np.flatnonzero(np.asarray(active, dtype=bool) & (np.asarray(remaining) > 0))
    out = np.full(inst.num_coflows, np.nan)
    if not len(act):
        return out
    k = inst.flow_coflow[act]
    ids, g = np.unique(k, return_inverse=True)
    links = np.concatenate([inst.flow_src[act], m + inst.flow_dst[act]])
    key = np.concatenate([g, g]) * (2 * m) + links
    rem = np.asarray(remaining, dtype=float)[act]
    r = np.asarray(rate, dtype=float)[act]
    keys, inv = np.unique(key, return_inverse=True)
    load = np.bincount(inv, np.concatenate([rem, rem]))
    used = np.bincount(inv, np.concatenate([r, r]))
    kg, kl = keys // (2 * m), keys % (2 * m)
    with np.errstate(divide="ignore", invalid="ignore"):
        per_cap = np.where(cap[kl] > 0, load / cap[kl], np.inf)
    gamma = np.full(len(ids), 0.0)
    np.maximum.at(gamma, kg, per_cap)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = used * gamma[kg] / load
    prog = np.full(len(ids), np.inf)
    np.minimum.at(prog, kg, ratio)
    out[ids] = prog
    return out


@dataclass(frozen=True, eq=False)
class ProgressTimeline:
    """Progress of every coflow at every instant where rates change.

    Attributes
    ----------
    time
        ``(T,)`` the instants, increasing; instant ``t`` lasts ``duration[t]``.
    duration
        ``(T,)`` how long the rates of each instant hold.
    progress
        ``(T, n)`` ``P_k`` at each instant (``nan`` where coflow ``k`` is not active).
    utilization
        ``(T,)`` the mean fraction of the ``2m`` links in use.
    """

    time: FloatArray
    duration: FloatArray
    progress: FloatArray
    utilization: FloatArray

    @property
    def isolation_guarantee(self) -> FloatArray:
        """``(T,)`` ``min_k P_k`` at each instant (``nan`` when nothing is active)."""
        p = self.progress
        has = ~np.isnan(p).all(axis=1)
        out = np.full(len(p), np.nan)
        out[has] = np.nanmin(p[has], axis=1)
        return out


def finish_tolerance(
    size: FloatArray, flow_cap: FloatArray, tol: float, scale: float
) -> FloatArray:
    """The bytes a flow may have left and count as sent: ``tol·size`` plus what its port pair
    carries in ``tol·scale`` time (``scale`` the largest time so far, at least 1), as
    :class:`coflowlab.verifier.FluidVerifier` allows; a flow with that little left is finished.

    Examples
    --------
    >>> finish_tolerance(np.array([2.0]), np.array([1.0]), 1e-9, 1e6).tolist()
    [0.001000002]
    """
    return tol * size + flow_cap * (tol * scale)


def progress_timeline(
    instance: Instance, schedule: FluidSchedule, *, tol: float = TOL
) -> ProgressTimeline:
    """Walks the schedule's rate changes and measures progress at each (see the module).

    Flows count as active from their release until their bytes are sent within the
    verifier's tolerance (:func:`finish_tolerance`), and their bytes are integrated once per
    rate they hold, as the verifier does. With a tolerance of ``tol`` of the size alone, a
    flow that the simulator finished within its time tolerance late in a long trace (a few
    1e-7 of its bytes left at t = 2.5e5 ms) stayed active at rate 0, and its coflow's progress
    read 0 until the end.
    """
    inst = instance
    nf = inst.num_flows
    m = inst.num_ports
    fab = inst.fabric
    total_cap = float(np.sum(fab.ingress_capacity) + np.sum(fab.egress_capacity))
    times = np.unique(np.concatenate([schedule.time, inst.flow_release]))
    end = schedule.horizon
    times = times[times < end]
    cap_in, cap_out = np.asarray(fab.ingress_capacity), np.asarray(fab.egress_capacity)
    flow_cap = np.minimum(cap_in[inst.flow_src], cap_out[inst.flow_dst])
    last_release = float(inst.flow_release.max(initial=0.0))
    rate = np.zeros(nf)
    sent = np.zeros(nf)  # up to ``since``, the flow's last rate change
    since = np.zeros(nf)
    order = np.argsort(schedule.time, kind="stable")
    st, sf, sr = schedule.time[order], schedule.flow[order], schedule.rate[order]
    pos = 0
    prog_rows, util, dur = [], [], []
    size = inst.flow_size
    for idx, t in enumerate(times):
        while pos < len(st) and st[pos] <= t:
            f = sf[pos]
            sent[f] += rate[f] * (t - since[f])
            since[f] = t
            rate[f] = sr[pos]
            pos += 1
        nxt = times[idx + 1] if idx + 1 < len(times) else end
        remaining = np.maximum(size - (sent + rate * (t - since)), 0.0)
        left = finish_tolerance(size, flow_cap, tol, max(1.0, last_release, float(t)))
        active = (inst.flow_release <= t) & (remaining > left)
        prog_rows.append(instant_progress(inst, rate, remaining, active))
        util.append(2.0 * float(rate[active].sum()) / total_cap if total_cap > 0 else 0.0)
        dur.append(nxt - t)
    n = inst.num_coflows
    del m
    return ProgressTimeline(
        time=np.asarray(times, dtype=float),
        duration=np.asarray(dur, dtype=float),
        progress=np.asarray(prog_rows, dtype=float).reshape(len(times), n),
        utilization=np.asarray(util, dtype=float),
    )


class FairnessMeter:
    """The metrics of :func:`fairness_summary`, measured while the records stream in, in one
    compiled pass and in memory of order the instance (not the schedule).

    This is how ``simulate(..., fairness=True)`` measures fairness with ``record=False``, so a
    whole trace can be measured without keeping its records. It follows
    :func:`progress_timeline`'s rules (the reference the tests compare it with); sums run in
    another order, so results agree to rounding (about 1e-12 relative).

    Parameters
    ----------
    instance
        The instance the records belong to.
    tol
        The tolerance of :func:`finish_tolerance`: flows with that little left are finished.

    Examples
    --------
    >>> from coflowlab import Instance
    >>> inst = Instance.from_matrices([[[1.0]], [[1.0]]])
    >>> meter = FairnessMeter(inst)
    >>> meter.feed([0.0, 0.0, 2.0, 2.0], [0, 1, 0, 1], [0.5, 0.5, 0.0, 0.0])
    >>> s = meter.finish(2.0)
    >>> s["min_isolation_guarantee"], s["jain_index"], s["utilization"], s["instants"]
    (0.5, 1.0, 1.0, 1)
    """

    def __init__(self, instance: Instance, *, tol: float = TOL) -> None:
        inst = instance
        nf, n, m = inst.num_flows, inst.num_coflows, inst.num_ports
        fab = inst.fabric
        cap = np.concatenate([np.asarray(fab.ingress_capacity), np.asarray(fab.egress_capacity)])
        order = np.argsort(inst.flow_release, kind="stable")
        flow_cap = np.minimum(cap[:m][inst.flow_src], cap[m:][inst.flow_dst])
        self._const = (
            inst.flow_size.astype(np.float64),
            flow_cap.astype(np.float64),
            max(1.0, float(inst.flow_release.max(initial=0.0))),
            inst.flow_coflow.astype(np.int64),
            inst.flow_src.astype(np.int64),
            inst.flow_dst.astype(np.int64),
            np.int64(m),
            cap.astype(np.float64),
            float(tol),
            float(cap.sum()),
        )
        self._rel = (inst.flow_release[order].astype(np.float64), order.astype(np.int64))
        self._ptr = np.zeros(1, dtype=np.int64)
        # rate, sent (up to since), since, the active flows
        self._flows = (np.zeros(nf), np.zeros(nf), np.zeros(nf), np.zeros(nf, dtype=np.int64))
        self._where = np.full(nf, -1, dtype=np.int64)
        self._nact = np.zeros(1, dtype=np.int64)
        self._pend = np.full(6, np.nan)
        self._acc = np.array([0.0, 0.0, 0.0, 0.0, 0.0, np.inf, np.nan, 0.0])
        self._scratch = (
            np.full(n, -1, dtype=np.int64),
            np.zeros(n * 2 * m),
            np.zeros(n * 2 * m),
            np.zeros(n, dtype=np.int64),
        )
        self._last = -np.inf
        self._finished = False

    def _run(self, t: np.ndarray, f: np.ndarray, r: np.ndarray, stop: float, incl: bool) -> None:
        from ._fairness_jit import feed

        feed(
            t, f, r, stop, incl, *self._rel, self._ptr, *self._flows, self._where,
            self._nact, *self._const, self._pend, self._acc,
            *self._scratch,
        )  # fmt: skip

    def feed(self, times: npt.ArrayLike, flows: npt.ArrayLike, rates: npt.ArrayLike) -> None:
        """Takes the next records: times must not decrease across calls, and the records of
        one instant must arrive in one call (a later call starts at a later time)."""
        if self._finished:
            raise RuntimeError("FairnessMeter: feed after finish")
        t = np.asarray(times, dtype=np.float64).ravel()
        if not len(t):
            return
        if not t[0] > self._last or np.any(t[1:] < t[:-1]):
            raise ValueError(
                "FairnessMeter.feed: records must come in time order, each instant in one call "
                f"(got {t[0]!r} after {self._last!r})"
            )
        self._run(
            t, np.asarray(flows, dtype=np.int64).ravel(),
            np.asarray(rates, dtype=np.float64).ravel(), float(t[-1]), True,
        )  # fmt: skip
        self._last = float(t[-1])

    def finish(self, horizon: float) -> dict[str, Any]:
        """The summary of :func:`fairness_summary` for the schedule ending at ``horizon`` (its
        last record's time; instants from ``horizon`` on are not measured)."""
        from ._fairness_jit import close_pending

        empty = np.zeros(0)
        self._run(empty, np.zeros(0, dtype=np.int64), empty, float(horizon), False)
        if not np.isnan(self._pend[0]) and self._pend[0] >= horizon:
            self._pend[0] = np.nan  # an instant at the horizon lasts nothing and is not one
        close_pending(float(horizon), self._pend, self._acc)
        self._finished = True
        busy, s_ig, s_mp, s_jain, s_util, min_ig, first_ig, count = self._acc.tolist()

        def avg(x: float) -> float:
            return x / busy if busy > 0 else float("nan")

        return {
            "min_isolation_guarantee": min_ig if count else float("nan"),
            "initial_isolation_guarantee": first_ig if count else float("nan"),
            "mean_isolation_guarantee": avg(s_ig),
            "mean_progress": avg(s_mp),
            "jain_index": min(avg(s_jain), 1.0),
            "utilization": avg(s_util),
            "busy_time": busy,
            "instants": int(count),
        }


def fairness_summary(instance: Instance, schedule: FluidSchedule) -> dict[str, Any]:
    """The fairness metrics of a schedule as one flat dict (for ``simulate --fairness``;
    :class:`FairnessMeter` measures the same while a simulation streams its records).

    Keys: ``min_isolation_guarantee`` (the smallest ``min_k P_k`` over all instants),
    ``initial_isolation_guarantee`` (at the first instant), ``mean_isolation_guarantee``,
    ``mean_progress``, ``jain_index`` and ``utilization`` (time averages over the busy
    time), ``busy_time`` and ``instants``.

    Examples
    --------
    >>> from coflowlab import Instance, FluidSchedule
    >>> inst = Instance.from_matrices([[[1.0]], [[1.0]]])
    >>> sched = FluidSchedule.from_segments(2, [0, 1], [0, 0], [2, 2], [0.5, 0.5])
    >>> s = fairness_summary(inst, sched)
    >>> s["min_isolation_guarantee"], s["jain_index"], s["utilization"]
    (0.5, 1.0, 1.0)
    """
    tl = progress_timeline(instance, schedule)
    busy = ~np.isnan(tl.progress).all(axis=1) if len(tl.time) else np.zeros(0, bool)
    w = tl.duration[busy]
    total = float(w.sum())
    ig = tl.isolation_guarantee[busy]
    p = tl.progress[busy]

    def avg(x: FloatArray) -> float:
        return float(np.dot(w, x) / total) if total > 0 else float("nan")

    mean_prog = np.array([float(np.nanmean(row)) for row in p]) if len(p) else np.zeros(0)
    jain = np.array([jain_index(row[~np.isnan(row)]) for row in p]) if len(p) else np.zeros(0)
    return {
        "min_isolation_guarantee": float(ig.min()) if len(ig) else float("nan"),
        "initial_isolation_guarantee": float(ig[0]) if len(ig) else float("nan"),
        "mean_isolation_guarantee": avg(ig),
        "mean_progress": avg(mean_prog),
        "jain_index": min(avg(jain), 1.0),
        "utilization": avg(tl.utilization[busy]),
        "busy_time": total,
        "instants": int(busy.sum()),
    }


def format_fairness(summary: dict[str, Any]) -> str:
    """The summary of :func:`fairness_summary` as a few aligned lines.

    Examples
    --------
    >>> print(format_fairness({"min_isolation_guarantee": 0.5, "initial_isolation_guarantee":
    ...     0.5, "mean_isolation_guarantee": 0.5, "mean_progress": 0.75, "jain_index": 0.9,
    ...     "utilization": 0.8, "busy_time": 3.0, "instants": 4}))
    isolation guarantee  min 0.5, at start 0.5, time-average 0.5  (min_k P_k)
    mean progress        0.75  (time-average of the mean P_k)
    Jain index           0.9  (of the progress vector, time-average)
    link utilization     80.0%  (time-average over 3 time units busy, 4 instants)
    """
    s = summary
    return "\n".join(
        [
            f"isolation guarantee  min {s['min_isolation_guarantee']:.4g}, at start "
            f"{s['initial_isolation_guarantee']:.4g}, time-average "
            f"{s['mean_isolation_guarantee']:.4g}  (min_k P_k)",
            f"mean progress        {s['mean_progress']:.4g}  (time-average of the mean P_k)",
            f"Jain index           {s['jain_index']:.4g}  (of the progress vector, time-average)",
            f"link utilization     {100 * s['utilization']:.1f}%  (time-average over "
            f"{s['busy_time']:.4g} time units busy, {s['instants']} instants)",
        ]
    )
