"""Times the online simulators on the public Facebook trace and prints one side-by-side table:
per policy, events, rate records, wall and CPU time and peak memory, for the exact model and
the CoflowSim model (``time_model="coflowsim"``), next to the Java CoflowSim times we measured
on the same machine (a reference column, not re-run here).

Targets (issue "exact simulator speed"): every policy at most 10 s wall with verification on,
and 2 GB, on the whole trace. Figures are printed, never asserted. The machine may be shared:
the load average is printed before every run, and CPU time next to wall time.

Each run happens in its own process, so that peak memory (``ru_maxrss``) is the run's own;
numba kernels are compiled (or loaded from their cache) before the clock starts.

Usage::

    python benchmarks/bench_simulate.py [--policies fair,fifo,varys,pfp,aalo] [--coflows N]
        [--models exact,coflowsim] [--no-verify] [--synthetic] [--timeout S] [--package DIR]
        [--engine auto|flows|classes]
    python benchmarks/bench_simulate.py --scaling [--factors 1,2,5] [--policies fair]
        [--plot FILE]

``--coflows N`` replays only the first N coflows of the trace (``Instance.subset``), to measure
a slow policy quickly. ``--package DIR`` runs the timed processes with coflowlab imported from
DIR, a copy of another version of the package (its sub-packages ``heuristics``, ``instances``
... copied inside it), to measure a baseline in the same session. ``--scaling`` times the
exact model on synthetic FB-like workloads (:func:`coflowlab.instances.fb_like`) with 1x,
2x, 5x ... the trace's number of coflows and prints the exponents of least-squares fits
``time ~ flows^k`` and ``time ~ events^k`` (``--plot FILE``: both curves, log-log, as a PNG).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import time
from typing import Any

DEFAULT_POLICIES = "fair,fifo,varys,pfp,aalo"
TRACE_COFLOWS = 526

JAVA_SECONDS = {
    "fair": "1168",
    "fifo": "915",
    "varys": "796",
    "scf": "708-856",
    "ncf": "708-856",
    "tcf": "708-856",
    "pfp": "177",
    "aalo": "698",
}
"""Java CoflowSim on the whole trace, wall seconds, measured on this machine (one run each)."""


def _instance(source: str, coflows: int | None) -> Any:
    from coflowlab.instances import fb_like, find_fb_trace, read_benchmark

    if source == "trace":
        path = find_fb_trace()
        assert path is not None
        inst = read_benchmark(path)
    elif source.startswith("fb_like:"):
        inst = fb_like(int(source.split(":")[1]), seed=1)
    else:  # the 10x synthetic workload
        inst = fb_like(10 * TRACE_COFLOWS, seed=1)
    if coflows is not None and coflows < inst.num_coflows:
        inst = inst.subset(range(coflows))
    return inst


def run_one(
    source: str, policy: str, verify: bool, coflows: int | None = None, engine: str = "auto"
) -> dict[str, Any]:
    """Runs one exact-model simulation in this process and returns its figures."""
    import numpy as np

    from coflowlab import simulate
    from coflowlab.heuristics import make_policy

    inst = _instance(source, coflows)
    pol = make_policy(policy, inst)
    # a baseline package (--package) may predate engine=; "auto" is its only behaviour
    how = {} if engine == "auto" else {"engine": engine}
    for record in (True, False):  # JIT warm-up of both paths
        simulate(inst.subset([0]), make_policy(policy, inst), record=record, **how)
    wall, cpu = time.perf_counter(), time.process_time()
    result = simulate(inst, pol, verify_schedule=verify, record=False, **how)
    cct = result.cct[~np.isnan(result.cct)]
    return {
        "flows": inst.num_flows,
        "wall": time.perf_counter() - wall,
        "cpu": time.process_time() - cpu,
        "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "events": result.num_events,
        "records": result.num_records,
        "classes": getattr(result, "engine", "flows") == "classes",
        "avg_cct": float(cct.mean()) if len(cct) else math.nan,
        "verified": result.verified,
    }


def run_coflowsim(source: str, policy: str, coflows: int | None = None) -> dict[str, Any]:
    """Runs one CoflowSim-model replay (always verified) and returns its figures."""
    from coflowlab.heuristics.coflowsim import simulate_coflowsim
    from coflowlab.instances.examples import coflowsim_micro

    inst = _instance(source, coflows)
    simulate_coflowsim(coflowsim_micro(), policy)  # JIT warm-up
    wall, cpu = time.perf_counter(), time.process_time()
    result = simulate_coflowsim(inst, policy, record=False)
    return {
        "flows": inst.num_flows,
        "wall": time.perf_counter() - wall,
        "cpu": time.process_time() - cpu,
        "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "events": result.num_events,
        "records": -1,
        "verified": bool(result.report.feasible),
    }


PACKAGE_PATH: str | None = None
"""``--package DIR``: children import coflowlab from DIR (a copy of another version, for a
baseline measured in the same session)."""


def _child(args: list[str], timeout: float) -> dict[str, Any] | str:
    """Runs this script with ``--child args`` in a new process; the figures, or why not."""
    env = dict(os.environ)
    if PACKAGE_PATH:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [PACKAGE_PATH, env.get("PYTHONPATH")]))
    try:
        proc = subprocess.run(
            [sys.executable, __file__, "--child", *args],
            capture_output=True,
            text=True,
            check=False,
            timeout=timeout,
            env=env,
        )
    except subprocess.TimeoutExpired:
        return f"> {timeout:.0f} s"
    if proc.returncode:
        last = proc.stderr.strip().splitlines()[-1:] or ["?"]
        return f"failed: {last[0][:60]}"
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]))


def _load() -> str:
    one, five, _ = os.getloadavg()
    return f"load {one:.2f}/{five:.2f}"


def _cells(r: dict[str, Any] | str | None, records: bool) -> str:
    width = 62 if records else 46
    if r is None:
        return " " * width
    if isinstance(r, str):
        return f"{r:<{width}}"
    # a class engine's records (one per rate class: docs/rate-classes.md; HUG's engine writes
    # the per-flow records) are marked "c"
    rec = f" {r['records']:>14,}{'c' if r.get('classes') else ' '}" if records else ""
    flag = "" if r["verified"] else "*"
    return (
        f"{r['events']:>14,}{rec} {r['wall']:8.2f}{flag:1} {r['cpu']:8.2f} {r['peak_mb']:9.0f}   "
    )


def table(args: argparse.Namespace) -> int:
    from coflowlab.instances import find_fb_trace

    sources = []
    if find_fb_trace() is None:
        print("trace: FB2010-1Hr-150-0.txt not found, skipped (see README)")
    else:
        sources.append("trace")
    if args.synthetic:
        sources.append("synthetic-10x")
    models = args.models.split(",")
    status = 0
    for source in sources:
        scope = f"first {args.coflows} coflows" if args.coflows else "all coflows"
        print(f"{source} ({scope}); verification {'off' if args.no_verify else 'on'}; {_load()}")
        print(
            f"{'policy':<19}{'exact: events':>14}{'records':>16}{'wall':>9}{'cpu':>9}"
            f"{'MB':>10}  {'coflowsim: events':>17}{'wall':>9}{'cpu':>9}{'MB':>10}  "
            f"{'Java (s)':>8}  load"
        )
        for policy in args.policies.split(","):
            load = _load()
            extra = [] if args.coflows is None else [str(args.coflows)]
            exact = coflowsim = None
            if "exact" in models:
                verify = "0" if args.no_verify else "1"
                exact = _child(
                    ["exact", source, policy, verify, args.engine, *extra], args.timeout
                )
            if "coflowsim" in models:
                coflowsim = _child(["coflowsim", source, policy, "1", *extra], args.timeout)
            for r in (exact, coflowsim):
                status |= isinstance(r, str) and r.startswith("failed")
            java = JAVA_SECONDS.get(policy, "-") if source == "trace" and not args.coflows else "-"
            print(
                f"{policy:<19}{_cells(exact, True)}{_cells(coflowsim, False)}{java:>8}  {load}",
                flush=True,
            )
        print(
            "(* = not verified; c = a class engine's records: class records, or per-flow "
            "records for hug and hug-cooperative; Java: CoflowSim on the whole trace, "
            "measured once)"
        )
    return int(status)


def fit_exponent(x: list[float], y: list[float]) -> float:
    """The slope ``k`` of the least-squares line through ``(log x, log y)``: ``y ~ x^k``
    (``nan`` with fewer than two distinct ``x``)."""
    import numpy as np

    lx, ly = np.log(np.asarray(x, dtype=float)), np.log(np.asarray(y, dtype=float))
    if len(lx) < 2 or np.ptp(lx) == 0:
        return math.nan
    return float(np.polyfit(lx, ly, 1)[0])


def plot_scaling(curves: dict[str, list[dict[str, Any]]], path: str) -> None:
    """Writes a log-log figure of CPU time against flows and against events, one line per
    policy, its fitted exponents in the legend (``curves``: policy -> the runs' figures)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullFormatter

    fig, axes = plt.subplots(1, 2, figsize=(10, 4), constrained_layout=True)
    for ax, key, label in ((axes[0], "flows", "flows"), (axes[1], "events", "events")):
        for policy, runs in curves.items():
            x = [r[key] for r in runs]
            y = [r["cpu"] for r in runs]
            k = fit_exponent(x, y)
            ax.loglog(x, y, "o-", label=f"{policy} (k = {k:.2f})")
        ax.xaxis.set_minor_formatter(NullFormatter())  # the decades only: no overlapping labels
        ax.set_xlabel(f"{label} (log)")
        ax.set_ylabel("CPU seconds (log)")
        ax.set_title(f"exact model, verified: CPU time vs {label}")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def scaling(args: argparse.Namespace) -> int:
    factors = [float(x) for x in args.factors.split(",")]
    verify = "0" if args.no_verify else "1"
    status = 0
    curves: dict[str, list[dict[str, Any]]] = {}
    for policy in args.policies.split(","):
        print(f"scaling, exact model, {policy}, verification {'off' if args.no_verify else 'on'}")
        print(f"{'factor':>7}{'coflows':>9}{'flows':>11}{'events':>10}{'wall':>9}{'cpu':>9}  load")
        runs = curves.setdefault(policy, [])
        for x in factors:
            n = max(1, round(x * TRACE_COFLOWS))
            load = _load()
            r = _child(["exact", f"fb_like:{n}", policy, verify, args.engine], args.timeout)
            if isinstance(r, str):
                print(f"{x:>7g}{n:>9,}  {r}  {load}")
                status |= r.startswith("failed")
                continue
            print(
                f"{x:>7g}{n:>9,}{r['flows']:>11,}{r['events']:>10,}{r['wall']:9.2f}"
                f"{r['cpu']:9.2f}  {load}",
                flush=True,
            )
            runs.append({**r, "cpu": max(r["cpu"], 1e-3)})
        if len(runs) >= 2:
            for key in ("flows", "events"):
                k = fit_exponent([r[key] for r in runs], [r["cpu"] for r in runs])
                print(f"fitted exponent (CPU time ~ {key}^k): k = {k:.2f}")
    if args.plot and any(len(r) >= 2 for r in curves.values()):
        plot_scaling({p: r for p, r in curves.items() if len(r) >= 2}, args.plot)
        print(f"plot written to {args.plot}")
    return int(status)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--policies", default=DEFAULT_POLICIES)
    parser.add_argument("--coflows", type=int, default=None, help="first N coflows only")
    parser.add_argument("--models", default="exact,coflowsim")
    parser.add_argument("--no-verify", action="store_true", help="exact model: no verification")
    parser.add_argument("--synthetic", action="store_true", help="also the 10x FB-like workload")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per run")
    parser.add_argument("--scaling", action="store_true", help="time vs number of flows")
    parser.add_argument("--factors", default="1,2,5", help="--scaling: multiples of the trace")
    parser.add_argument(
        "--plot", metavar="FILE", help="--scaling: also write a log-log figure (PNG) to FILE"
    )
    parser.add_argument(
        "--package",
        metavar="DIR",
        help="import coflowlab from DIR in the timed runs (a copy of another version, with its "
        "sub-packages inside, for a baseline in the same session)",
    )
    parser.add_argument(
        "--engine",
        choices=("auto", "flows", "classes"),
        default="auto",
        help="exact model: simulate(engine=...), the per-flow loop or a policy's class engine",
    )
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    global PACKAGE_PATH
    PACKAGE_PATH = args.package
    if args.child:
        model, source, policy, verify, *rest = args.child
        if model == "exact":
            engine, *rest = rest
            coflows = int(rest[0]) if rest else None
            print(json.dumps(run_one(source, policy, verify == "1", coflows, engine)))
        else:
            coflows = int(rest[0]) if rest else None
            print(json.dumps(run_coflowsim(source, policy, coflows)))
        return 0
    return scaling(args) if args.scaling else table(args)


if __name__ == "__main__":
    sys.exit(main())
