"""Times the LP relaxations on the full Facebook trace: LP-OV, the interval LP and the
parallel-inequality LP (``formulations/lp_ov.py``, ``interval_lp.py``, ``parallel_lp.py``).

Each method runs in a fresh process, so that its memory figures are its own:

- build and solve seconds (the method's ``details``) and the whole call's wall time;
- the process's peak resident set (``ru_maxrss``, which includes HiGHS's C++ allocations),
  and its growth over the peak after reading the trace (``+RSS``: what the method added).
  :mod:`tracemalloc` is not used: it slows the NumPy-heavy construction about tenfold and
  does not see the solver's memory;
- the model's size and the bound's value, with ``Σ w (r + ρ)`` and the Smith bound beside it.

``--zero-release`` also runs every method on the trace with all coflows released at 0 (the
offline setting); LP-OV is much harder there (minutes rather than seconds). Exits with 0 and
a message when the trace is not present.

Run: ``python benchmarks/bench_relaxations.py [--zero-release] [--methods lp-ov interval-lp]
[--time-limit SECONDS]``.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import resource
import sys
import time
from typing import Any

import numpy as np

from coflowlab.instances.benchmark import FB_TRACE_NAME, find_fb_trace, read_benchmark

METHODS = ("interval-lp", "lp-ov", "parallel-lp")


def _load(path: str, zero_release: bool) -> Any:
    inst = read_benchmark(path)
    if zero_release:
        inst = inst.replace(coflow_release=np.zeros(inst.num_coflows))
    return inst


def _run(path: str, method: str, zero_release: bool, time_limit: float | None) -> dict[str, Any]:
    """One method on the trace, in this (child) process."""
    import coflowlab
    from coflowlab import SolverOptions

    inst = _load(path, zero_release)
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    res = coflowlab.run(method, inst, SolverOptions(time_limit=time_limit))
    wall = time.perf_counter() - start
    rss_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    d = res.raw.details
    return {
        "method": method,
        "status": res.status,
        "value": res.objective,
        "wall": wall,
        "build": d.get("build_seconds"),
        "solve": d.get("solve_seconds"),
        "variables": d.get("variables"),
        "rows": d.get("rows"),
        "nonzeros": d.get("nonzeros"),
        "extra": {
            k: round(d[k], 2) if isinstance(d[k], float) else d[k]
            for k in ("pairs", "intervals", "rounds", "separation_seconds")
            if k in d
        },
        "rss_mib": rss_after / 2**10,
        "rss_growth_mib": (rss_after - rss_before) / 2**10,
    }


def _fmt(x: Any, spec: str = ",") -> str:
    return "-" if x is None else format(x, spec)


def main(argv: list[str] | None = None) -> int:
    """Runs the benchmark and prints one block per setting; returns the exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--methods", nargs="+", default=list(METHODS))
    parser.add_argument("--zero-release", action="store_true", help="also run with r = 0")
    parser.add_argument("--time-limit", type=float, default=None, help="seconds per method")
    args = parser.parse_args(argv)
    path = find_fb_trace()
    if path is None:
        print(f"skipped: {FB_TRACE_NAME} not found ($COFLOWLAB_DATA or ../shared/data)")
        return 0
    from coflowlab.formulations.bounds import bound_release_rho, bound_smith

    ctx = mp.get_context("spawn")
    settings = [False, True] if args.zero_release else [False]
    print(f"trace: {path}")
    for zero in settings:
        inst = _load(str(path), zero)
        print(
            f"\n== {'all releases 0' if zero else 'releases as in the trace'}: "
            f"{inst.num_coflows} coflows, {inst.num_ports} ports, {inst.num_flows:,} flows; "
            f"Σw(r+ρ) = {bound_release_rho(inst).objective:,.0f}, "
            f"Smith bound = {bound_smith(inst).objective:,.0f} (ms)"
        )
        header = (
            f"{'method':<12} {'status':<10} {'value (ms)':>16} {'build s':>8} {'solve s':>8} "
            f"{'wall s':>8} {'vars':>8} {'rows':>8} {'nonzeros':>10} "
            f"{'RSS MiB':>8} {'+RSS':>6}  other"
        )
        print(header)
        for method in args.methods:
            with ctx.Pool(1) as pool:
                r = pool.apply(_run, (str(path), method, zero, args.time_limit))
            print(
                f"{r['method']:<12} {r['status']:<10} {r['value']:>16,.1f} "
                f"{_fmt(r['build'], '.2f'):>8} {_fmt(r['solve'], '.2f'):>8} {r['wall']:>8.2f} "
                f"{_fmt(r['variables']):>8} {_fmt(r['rows']):>8} {_fmt(r['nonzeros']):>10} "
                f"{r['rss_mib']:>8.0f} {r['rss_growth_mib']:>6.0f}  "
                + " ".join(f"{k}={v:,}" for k, v in r["extra"].items()),
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
