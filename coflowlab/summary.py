"""A readable summary of an instance: counts, bytes, Varys bins and port loads.

Used by ``coflowlab info`` and ``make demo``. Everything here is derived from the instance
alone; nothing depends on a schedule.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .instance import Instance
from .metrics import BINS, varys_bins

__all__ = ["InstanceSummary", "describe", "summarize_instance"]


@dataclass(frozen=True)
class InstanceSummary:
    """Headline numbers of an instance (see :func:`summarize_instance`)."""

    num_coflows: int
    num_flows: int
    num_ports: int
    senders_used: int
    receivers_used: int
    total_size: float
    release_span: tuple[float, float]
    bins: dict[str, tuple[int, float]] | None  # bin -> (coflows, share of bytes)
    port_load: list[tuple[str, int, float, float]]  # (side, port, load, time at capacity)


def summarize_instance(instance: Instance) -> InstanceSummary:
    """Computes the headline numbers of ``instance``.

    The bin table is ``None`` when the size unit is not a byte unit (the 5 MB threshold has no
    meaning for dimensionless sizes).

    Examples
    --------
    >>> from coflowlab import Instance
    >>> s = summarize_instance(Instance.from_matrices([[[1, 2], [3, 0]]]))
    >>> s.num_flows, s.total_size, s.port_load[0]
    (3, 6.0, ('egress', 0, 4.0, 4.0))
    """
    inst = instance
    m = inst.num_ports
    load_in = inst.ingress_load.sum(axis=0)
    load_out = inst.egress_load.sum(axis=0)
    cap = inst.fabric.port_capacity
    loads = np.concatenate([load_in, load_out])
    order = np.lexsort((np.arange(2 * m), -loads / cap))
    ports = [
        ("ingress" if p < m else "egress", int(p % m), float(loads[p]), float(loads[p] / cap[p]))
        for p in order
    ]
    bins = None
    if inst.units.mb_per_size_unit() is not None:
        labels = varys_bins(inst)
        total = float(inst.total_size.sum())
        bins = {
            b: (int((labels == b).sum()), float(inst.total_size[labels == b].sum()) / total)
            for b in BINS
        }
    return InstanceSummary(
        num_coflows=inst.num_coflows,
        num_flows=inst.num_flows,
        num_ports=m,
        senders_used=int((load_in > 0).sum()),
        receivers_used=int((load_out > 0).sum()),
        total_size=float(inst.total_size.sum()),
        release_span=(float(inst.coflow_release.min()), float(inst.coflow_release.max())),
        bins=bins,
        port_load=ports,
    )


def _num(x: float) -> str:
    return f"{x:,.0f}" if float(x).is_integer() else f"{x:,.6g}"


def describe(instance: Instance, *, top_ports: int | None = 10, name: str | None = None) -> str:
    """A multi-line text summary of ``instance``; ``top_ports=None`` lists every port."""
    inst = instance
    s = summarize_instance(inst)
    su, tu = inst.units.size, inst.units.time
    cap = inst.fabric.port_capacity
    cap_text = (
        f"{_num(cap[0])} {su}/{tu} per port"
        if np.all(cap == cap[0])
        else f"{_num(cap.min())} to {_num(cap.max())} {su}/{tu}"
    )
    rho = inst.bottleneck
    weights = inst.coflow_weight
    lines = [
        f"{name + ': ' if name else ''}{s.num_coflows:,} coflows, {s.num_flows:,} flows, "
        f"{s.num_ports} ports ({s.senders_used} send, {s.receivers_used} receive)",
        f"units:        sizes in {su}, times in {tu}; capacity {cap_text}",
        f"total size:   {_num(s.total_size)} {su}",
        f"releases:     {_num(s.release_span[0])} to {_num(s.release_span[1])} {tu}",
        "weights:      "
        + ("all 1" if np.all(weights == 1) else f"{_num(weights.min())} to {_num(weights.max())}"),
        "deadlines:    "
        + (
            f"{int(np.isfinite(inst.coflow_deadline).sum())} coflows"
            if inst.has_deadlines
            else "none"
        ),
        f"dependencies: {len(inst.dependencies)}",
        f"bottleneck ρ: min {_num(rho.min())}, median {_num(float(np.median(rho)))}, "
        f"max {_num(rho.max())} {tu}",
    ]
    if s.bins is not None:
        lines += ["", "bin  coflows  share   bytes", "---  -------  ------  -------"]
        for b, (count, share) in s.bins.items():
            lines.append(f"{b:<3}  {count:>7,}  {count / s.num_coflows:>6.1%}  {share:>7.2%}")
        lines.append("(short: longest flow < 5 MB; narrow: at most 50 flows)")
    shown = s.port_load if top_ports is None else s.port_load[:top_ports]
    title = "load per port" if top_ports is None else f"busiest {len(shown)} ports"
    lines += ["", f"{title}: side port load ({su}) time at capacity ({tu})"]
    lines += [
        f"  {side:<7} {port:>4}  {_num(load):>14}  {_num(t):>14}" for side, port, load, t in shown
    ]
    return "\n".join(lines)
