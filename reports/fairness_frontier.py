"""The fairness–efficiency frontier of Coflex (Wang, Ma, Li, Li, IEEE INFOCOM 2017, Fig. 5-6):
average CCT against isolation guarantee for Coflex(α), α ∈ {0, 0.1, ..., 1}, with HUG, DRF,
PS-P, per-flow fairness, Varys and Aalo as points (issue 16; docs/hug-coflex.md#frontier).

Run as a script::

    python -m coflowlab.reports.fairness_frontier --coflows 60 --ports 20 --seeds 0:3 \\
        -o docs/images/fairness-frontier.png

Every schedule is simulated and verified; the isolation guarantee is the time average of
``min_k P_k`` (:func:`coflowlab.fairness.fairness_summary`, measured while the simulation runs,
so a whole trace needs no records in memory), the CCT is averaged over coflows and
then over instances, each normalized to Coflex(1)'s value on the same instance (so instances of
different scale weigh the same).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import numpy as np

import coflowlab as cl
from coflowlab.heuristics import make_policy
from coflowlab.instances import fb_like, read_benchmark, uniform

__all__ = ["ALPHAS", "POINTS", "frontier", "main", "plot"]

ALPHAS = [round(0.1 * i, 1) for i in range(11)]
"""The knob values of the sweep (Coflex §V-A sweeps α over [0, 1])."""

POINTS = ["hug", "hug-cooperative", "drf", "ps-p", "fair", "varys", "aalo"]
"""The other policies, drawn as single points."""


def _measure(inst: cl.Instance, name: str, **params: Any) -> tuple[float, float, float]:
    res = cl.simulate(inst, make_policy(name, inst, **params), record=False, fairness=True)
    s = res.fairness
    assert s is not None
    return float(np.mean(res.cct)), s["mean_isolation_guarantee"], s["utilization"]


def frontier(
    instances: list[cl.Instance],
    *,
    alphas: list[float] | None = None,
    points: list[str] | None = None,
    log: Any = None,
) -> dict[str, dict[str, float]]:
    """``{label: {"cct": normalized average CCT, "ig": mean isolation guarantee,
    "util": utilization}}`` averaged over ``instances``; labels ``coflex α=…`` for
    ``alphas`` (default :data:`ALPHAS`, which must include 1) and ``points`` (default
    :data:`POINTS`). ``log(label, seconds)``, when given, hears of every run.
    Example: ``frontier([uniform(3, 4, seed=0)])["hug"]["ig"]``."""
    alphas = ALPHAS if alphas is None else alphas
    points = POINTS if points is None else points
    if 1.0 not in alphas:
        raise ValueError("alphas must include 1.0: CCTs are normalized to Coflex(1)'s")
    rows: dict[str, list[tuple[float, float, float]]] = {}
    for inst in instances:
        got = {}
        for label, name, params in [
            *((f"coflex α={a}", "coflex", {"alpha": str(a)}) for a in alphas),
            *((p, p, {"starvation": "false"} if p == "varys" else {}) for p in points),
        ]:
            started = time.perf_counter()
            got[label] = _measure(inst, name, **params)
            if log is not None:
                log(label, time.perf_counter() - started)
        ref = got["coflex α=1.0"][0]
        for label, (c, ig, u) in got.items():
            rows.setdefault(label, []).append((c / ref, ig, u))
    return {
        k: dict(zip(("cct", "ig", "util"), np.mean(v, axis=0).tolist(), strict=True))
        for k, v in rows.items()
    }


def plot(result: dict[str, dict[str, float]], path: str, title: str) -> None:
    """Draws the frontier: Coflex(α) as a line, the other policies as labelled points (those
    of ``result``)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    alphas = [a for a in ALPHAS if f"coflex α={a}" in result]
    xs = [result[f"coflex α={a}"]["ig"] for a in alphas]
    ys = [result[f"coflex α={a}"]["cct"] for a in alphas]
    ax.plot(xs, ys, "o-", color="tab:blue", label="Coflex(α)")
    for a, x, y in zip(alphas, xs, ys, strict=True):
        if a in (0.0, 0.5, 1.0):
            ax.annotate(f"α={a:g}", (x, y), textcoords="offset points", xytext=(4, 4))
    for name in (n for n in POINTS if n in result):
        p = result[name]
        ax.plot(p["ig"], p["cct"], "s", label=name)
    ax.set_xlabel("isolation guarantee (time-average of min_k P_k)")
    ax.set_ylabel("average CCT / Coflex(1)'s")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main(argv: list[str] | None = None) -> None:
    """Command line: generated ``fb-like`` (or ``uniform``) instances, table and figure."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--generator", choices=("fb-like", "uniform"), default="fb-like")
    ap.add_argument("--coflows", type=int, default=60)
    ap.add_argument("--ports", type=int, default=20)
    ap.add_argument("--seeds", default="0:3", help="first:last (exclusive)")
    ap.add_argument("--trace", help="a coflow-benchmark trace file instead of generated instances")
    ap.add_argument(
        "--first", type=int, help="with --trace: only its first N coflows (in file order)"
    )
    ap.add_argument("--alphas", help="comma-separated α values (default 0, 0.1, ..., 1)")
    ap.add_argument("--points", help="comma-separated policies drawn as points (default all)")
    ap.add_argument("-o", "--output", default="fairness-frontier.png")
    args = ap.parse_args(argv)
    lo, hi = (int(x) for x in args.seeds.split(":"))
    if args.trace:
        inst = read_benchmark(args.trace)
        if args.first is not None:
            inst = inst.subset(list(range(min(args.first, inst.num_coflows))))
        insts = [inst]
        title = f"{Path(args.trace).name}, {inst.num_coflows} coflows, {inst.num_ports} ports"
    elif args.generator == "fb-like":
        insts = [fb_like(args.coflows, num_ports=args.ports, seed=s) for s in range(lo, hi)]
    else:
        insts = [
            uniform(args.ports, args.coflows, density=0.4, release_rate=0.3, seed=s)
            for s in range(lo, hi)
        ]
    if not args.trace:
        title = f"{args.generator}, {args.coflows} coflows, {args.ports} ports, seeds {args.seeds}"
    started, cpu = time.perf_counter(), time.process_time()
    alphas = [float(a) for a in args.alphas.split(",")] if args.alphas else None
    points = args.points.split(",") if args.points else None
    result = frontier(
        insts,
        alphas=alphas,
        points=points,
        log=lambda label, secs: print(f"  {label}: {secs:.1f} s wall", flush=True),
    )
    print(f"{'policy':<18}{'avg CCT (norm.)':>16}{'mean IG':>10}{'util':>8}")
    for k, v in result.items():
        print(f"{k:<18}{v['cct']:>16.4f}{v['ig']:>10.4f}{v['util']:>8.3f}")
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    print(f"{len(insts)} instances, {wall:.1f} s wall, {cpu:.1f} s CPU")
    plot(result, args.output, title)


if __name__ == "__main__":
    main()
