"""CODA's average CCT as a function of its identification error (issue 18;
docs/philae-coda.md#cct-against-identification-error).

CODA (Zhang, Chen, Yi, Chen, Chowdhury, Geng, SIGCOMM 2016, §6.3, Fig. 11) measures how its
CCT degrades as coflows become harder to identify. Here the flows of each coflow start at
``r_k + U(0, spread)`` (:func:`coflowlab.instances.spread_flow_starts`, with the arrivals
squeezed by ``arrival_scale`` so that coflows interleave), and for every spread the script
runs CODA with the labels hidden (identification precision and recall of
:attr:`~coflowlab.heuristics.coda.Coda.groups`), and, with the labels visible, Aalo and
per-flow fairness. CCTs are averaged over coflows, then over instances, each normalised to
Aalo's value on the same instance.

Run as a script::

    python -m coflowlab.reports.identification_plot --coflows 40 --ports 20 --seeds 0:3 \\
        -o docs/images/coda-identification.png
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np

import coflowlab as cl
from coflowlab.heuristics import make_policy
from coflowlab.heuristics.coda import Coda, identification_accuracy
from coflowlab.instances import fb_like, spread_flow_starts

__all__ = ["SPREADS", "main", "plot", "sweep"]

SPREADS = [0.0, 50.0, 100.0, 200.0, 400.0, 800.0, 1600.0]
"""Flow-start spreads (ms) of the sweep; CODA's Spark-like setting is 100 ms (§6.1)."""


def _avg_cct(inst: cl.Instance, name: str, **params: Any) -> float:
    return float(np.mean(cl.simulate(inst, make_policy(name, inst, **params), record=False).cct))


def sweep(
    instances: list[cl.Instance],
    spreads: list[float],
    *,
    arrival_scale: float = 0.5,
    coda: dict[str, float] | None = None,
) -> list[dict[str, float]]:
    """One row per spread: ``spread``, CODA's ``precision`` and ``recall`` (means over the
    instances), and the average CCTs of ``coda``, ``fair`` and ``aalo`` normalised to Aalo's
    (means over the instances). ``coda`` holds :class:`~coflowlab.heuristics.coda.Coda`
    parameters. Example: ``sweep([fb_like(10, num_ports=8, seed=0)], [0.0, 100.0])``."""
    rows = []
    for spread in spreads:
        acc, cct = [], []
        for i, base in enumerate(instances):
            inst = spread_flow_starts(base, spread, arrival_scale=arrival_scale, seed=i)
            policy = Coda(**(coda or {}))
            c = float(np.mean(cl.simulate(inst, policy, record=False).cct))
            a = identification_accuracy(inst, policy.groups)
            aalo = _avg_cct(inst, "aalo")
            acc.append((a.precision, a.recall))
            cct.append((c / aalo, _avg_cct(inst, "fair") / aalo))
        p, r = np.mean(acc, axis=0)
        c, f = np.mean(cct, axis=0)
        rows.append(
            {
                "spread": float(spread),
                "precision": float(p),
                "recall": float(r),
                "coda": float(c),
                "fair": float(f),
                "aalo": 1.0,
            }
        )
    return rows


def plot(rows: list[dict[str, float]], path: str, title: str) -> None:
    """Two panels: precision and recall against the spread; the normalised average CCTs
    against the identification error ``1 − (precision + recall) / 2``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(9.6, 4.0))
    spread = [r["spread"] for r in rows]
    left.plot(spread, [r["precision"] for r in rows], "o-", label="precision")
    left.plot(spread, [r["recall"] for r in rows], "s-", label="recall")
    left.set_xlabel("flow-start spread within a coflow (ms)")
    left.set_ylabel("CODA identification")
    left.set_ylim(0, 1.05)
    left.legend()
    error = [1 - (r["precision"] + r["recall"]) / 2 for r in rows]
    right.plot(error, [r["coda"] for r in rows], "o-", label="CODA (labels hidden)")
    right.plot(error, [r["fair"] for r in rows], "s--", label="per-flow fair (labels known)")
    right.axhline(1.0, color="grey", lw=1, label="Aalo (labels known)")
    for r, x in zip(rows, error, strict=True):
        right.annotate(f"{r['spread']:g}", (x, r["coda"]), textcoords="offset points",
                       xytext=(3, 3), fontsize=7)  # fmt: skip
    right.set_xlabel("identification error 1 − (precision + recall)/2")
    right.set_ylabel("average CCT / Aalo's")
    right.legend(fontsize=8)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main(argv: list[str] | None = None) -> None:
    """Command line: generated ``fb-like`` instances, table and figure."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--coflows", type=int, default=40)
    ap.add_argument("--ports", type=int, default=20)
    ap.add_argument("--seeds", default="0:3", help="first:last (exclusive)")
    ap.add_argument("--arrival-scale", type=float, default=0.5)
    ap.add_argument("--spreads", default=",".join(f"{s:g}" for s in SPREADS))
    ap.add_argument("-o", "--output", default="coda-identification.png")
    args = ap.parse_args(argv)
    lo, hi = (int(x) for x in args.seeds.split(":"))
    insts = [fb_like(args.coflows, num_ports=args.ports, seed=s) for s in range(lo, hi)]
    spreads = [float(x) for x in args.spreads.split(",")]
    started, cpu = time.perf_counter(), time.process_time()
    rows = sweep(insts, spreads, arrival_scale=args.arrival_scale)
    print(f"{'spread':>8}{'precision':>11}{'recall':>8}{'coda/aalo':>11}{'fair/aalo':>11}")
    for r in rows:
        print(
            f"{r['spread']:>8g}{r['precision']:>11.3f}{r['recall']:>8.3f}"
            f"{r['coda']:>11.3f}{r['fair']:>11.3f}"
        )
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    print(f"{len(insts)} instances, {wall:.1f} s wall, {cpu:.1f} s CPU")
    title = (
        f"fb-like, {args.coflows} coflows, {args.ports} ports, seeds {args.seeds}, "
        f"arrivals ×{args.arrival_scale:g}"
    )
    plot(rows, args.output, title)


if __name__ == "__main__":
    main()
