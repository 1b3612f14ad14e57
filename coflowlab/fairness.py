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
    "ProgressTimeline",
    "fairness_summary",
    "format_fairness",
    "instant_progress",
    "jain_index",
    "progress_timeline",
]

FloatArray = npt.NDArray[np.float64]


def jain_index(values: npt.ArrayLike) -> float:
    """Jain's fairness index ``(Σ x)² / (n Σ x²)``; 1 for an empty or all-zero vector.

    Examples
    --------
    >>> jain_index([1, 1, 1]), jain_index([1, 0])
    (1.0, 0.5)
    """
    x = np.asarray(values, dtype=float)
    sq = float(np.dot(x, x))
    if len(x) == 0 or sq == 0.0:
        return 1.0
    return float(x.sum() ** 2 / (len(x) * sq))


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


def progress_timeline(
    instance: Instance, schedule: FluidSchedule, *, tol: float = TOL
) -> ProgressTimeline:
    """Walks the schedule's rate changes and measures progress at each (see the module).

    Flows count as active from their release until their bytes are sent (within ``tol``
    relative to their size).
    """
    inst = instance
    nf = inst.num_flows
    m = inst.num_ports
    fab = inst.fabric
    total_cap = float(np.sum(fab.ingress_capacity) + np.sum(fab.egress_capacity))
    times = np.unique(np.concatenate([schedule.time, inst.flow_release]))
    end = schedule.horizon
    times = times[times < end]
    rate = np.zeros(nf)
    sent = np.zeros(nf)
    order = np.argsort(schedule.time, kind="stable")
    st, sf, sr = schedule.time[order], schedule.flow[order], schedule.rate[order]
    pos = 0
    prog_rows, util, dur = [], [], []
    size = inst.flow_size
    for idx, t in enumerate(times):
        while pos < len(st) and st[pos] <= t:
            rate[sf[pos]] = sr[pos]
            pos += 1
        nxt = times[idx + 1] if idx + 1 < len(times) else end
        remaining = np.maximum(size - sent, 0.0)
        active = (inst.flow_release <= t) & (remaining > tol * size)
        prog_rows.append(instant_progress(inst, rate, remaining, active))
        util.append(2.0 * float(rate[active].sum()) / total_cap if total_cap > 0 else 0.0)
        dur.append(nxt - t)
        sent += rate * (nxt - t)
    n = inst.num_coflows
    del m
    return ProgressTimeline(
        time=np.asarray(times, dtype=float),
        duration=np.asarray(dur, dtype=float),
        progress=np.asarray(prog_rows, dtype=float).reshape(len(times), n),
        utilization=np.asarray(util, dtype=float),
    )


def fairness_summary(instance: Instance, schedule: FluidSchedule) -> dict[str, Any]:
    """The fairness metrics of a schedule as one flat dict (for ``simulate --fairness``).

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
        "jain_index": avg(jain),
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
