"""Summaries of a simulation, from its (verified) completion times: what ``coflowlab
simulate`` prints and writes.

The summary holds the average and 95th-percentile CCT overall and per Varys bin (short/long ×
narrow/wide: longest flow < 5 MB, at most 50 flows; thesis §5.7.1), the share of deadlines
met and, when the weights are not all equal, the weighted CCT ``Σ w_j (C_j - r_j)`` and its
average over the finished coflows (:func:`coflowlab.metrics.weighted_cct`). Rejected or
unfinished coflows (completion ``nan``) are counted apart and excluded from the CCT
statistics.
"""

from __future__ import annotations

import io
import math
from typing import Any

import numpy as np
import numpy.typing as npt

from .instance import Instance
from .metrics import BINS, cct, summarize, varys_bins, weighted_cct

__all__ = ["bin_rule", "format_summary", "simulation_csv", "simulation_summary"]


def _bins(instance: Instance) -> np.ndarray:
    if instance.units.mb_per_size_unit() is None:
        # dimensionless sizes: read them as MB, as the papers' toy examples do
        return varys_bins(instance, short=5.0)
    return varys_bins(instance)


def bin_rule(instance: Instance) -> str:
    """The rule behind the Varys bins of ``instance``, in words, with its size unit.

    Examples
    --------
    >>> from coflowlab import Instance
    >>> bin_rule(Instance.from_matrices([[[1.0]]])).split(";")[0]
    'short: longest flow < 5 size units (sizes without a unit, read as MB)'
    """
    if instance.units.mb_per_size_unit() is None:
        short = "5 size units (sizes without a unit, read as MB)"
    else:
        short = "5 MB"
    return f"short: longest flow < {short}; narrow: at most 50 flows"


def simulation_summary(
    instance: Instance,
    completion: npt.ArrayLike,
    *,
    met: npt.ArrayLike | None = None,
    missing: int = 0,
    **meta: Any,
) -> dict[str, Any]:
    """A JSON-ready summary of per-coflow completion times.

    A coflow meets its deadline when its CCT is at most the deadline, unless ``met`` (one
    boolean per coflow) says otherwise: CoflowSim's rule tolerates small overruns. ``missing``
    counts coflows with a deadline that are not in ``instance`` (CoflowSim's rejected
    coflows); they count as missed.

    Examples
    --------
    >>> from coflowlab import Instance
    >>> s = simulation_summary(Instance.from_matrices([[[1.0]], [[3.0]]]), [1.0, 4.0])
    >>> s["avg_cct"], s["bins"]["SN"]["count"]
    (2.5, 2)
    """
    done_at = np.asarray(completion, dtype=float)
    c = cct(instance, done_at)
    finished = ~np.isnan(c)
    bins = _bins(instance)
    table = {}
    for b in BINS:
        s = summarize(c[finished & (bins == b)])
        table[b] = {"count": s.count, "avg_cct": _num(s.average), "p95_cct": _num(s.p95)}
    overall = summarize(c[finished])
    with_deadline = np.isfinite(instance.coflow_deadline)
    ok = finished & (c <= instance.coflow_deadline if met is None else np.asarray(met, bool))
    num_deadlines = int(with_deadline.sum()) + missing
    weighted: dict[str, Any] = {}
    w = instance.coflow_weight
    if w.size and not np.all(w == w[0]):  # equal weights: the weighted CCT is a multiple
        total_w, avg_w = weighted_cct(instance, done_at)
        weighted = {"total_weighted_cct": total_w, "avg_weighted_cct": _num(avg_w)}
    return {
        **meta,
        "num_coflows": instance.num_coflows,
        "finished": int(finished.sum()),
        "time_unit": instance.units.time,
        "avg_cct": _num(overall.average),
        "total_cct": float(np.sum(c[finished])),
        "p95_cct": _num(overall.p95),
        **weighted,
        "bins": table,
        "bin_rule": bin_rule(instance),
        "deadlines": num_deadlines,
        "deadlines_met_pct": (
            _num(100.0 * float(ok[with_deadline].sum()) / num_deadlines) if num_deadlines else None
        ),
    }


def _num(x: float) -> float | None:
    return None if math.isnan(x) else float(x)


def format_summary(summary: dict[str, Any], name: str | None = None) -> str:
    """The summary as aligned text."""
    unit = summary["time_unit"]

    def f(x: float | None) -> str:
        return "-" if x is None else f"{x:,.2f}"

    head = f"{summary.get('policy', '?')} ({summary.get('time_model', 'exact')} model)"
    lines = [f"{name}: {head}" if name else head]
    verified = summary.get("verified")
    facts = [f"{summary['finished']:,} of {summary['num_coflows']:,} coflows finished"]
    if "events" in summary:
        facts.append(f"{summary['events']:,} events")
    if "wall_time" in summary:
        facts.append(f"{summary['wall_time']:.2f} s")
    facts.append("schedule verified" if verified else "schedule NOT verified")
    lines.append(", ".join(facts))
    lines.append(f"average CCT {f(summary['avg_cct'])} {unit}, p95 {f(summary['p95_cct'])} {unit}")
    if "total_weighted_cct" in summary:
        lines.append(
            f"weighted CCT Σ w (C - r) {f(summary['total_weighted_cct'])} {unit}, average "
            f"{f(summary['avg_weighted_cct'])} {unit}"
        )
    lines += ["", f"bin  coflows  avg CCT ({unit})  p95 CCT ({unit})"]
    for b, row in summary["bins"].items():
        lines.append(
            f"{b:<3}  {row['count']:>7,}  {f(row['avg_cct']):>14}  {f(row['p95_cct']):>14}"
        )
    lines.append(f"({summary['bin_rule']})")
    if summary["deadlines"]:
        lines.append(
            f"deadlines met: {summary['deadlines_met_pct']:.1f}% of {summary['deadlines']:,}"
        )
    else:
        lines.append("deadlines met: no coflow has a deadline")
    if summary.get("rejected"):
        lines.append(f"rejected by admission control: {summary['rejected']:,}")
    return "\n".join(lines)


def simulation_csv(instance: Instance, completion: npt.ArrayLike) -> str:
    """One row per coflow: ``coflow,release,completion,cct,bin`` (empty when unfinished)."""
    done_at = np.asarray(completion, dtype=float)
    c = cct(instance, done_at)
    bins = _bins(instance)
    out = io.StringIO()
    out.write("coflow,release,completion,cct,bin\n")
    for k in range(instance.num_coflows):
        fin = not math.isnan(c[k])
        done = repr(float(done_at[k])) if fin else ""
        took = repr(float(c[k])) if fin else ""
        release = repr(float(instance.coflow_release[k]))
        out.write(f"{instance.coflow_label[k]},{release},{done},{took},{bins[k]}\n")
    return out.getvalue()
