"""Replays the public Facebook trace through the CoflowSim-compatible time model and prints, per
policy: wall time, CPU time, peak memory, events and the sum of CCTs (CoflowSim's last line).

Target (issue "CoflowSim-compatible time model"): at most 60 s per policy on a 2-core machine;
CoflowSim itself takes 3 to 20 minutes (measured by us; docs/coflowsim-model.md). Figures are
printed, never asserted. The machine may be shared, so CPU time is printed next to wall time.
With ``--exact``, the exact simulator's time for the same policy is printed alongside (from
``bench_simulate.run_one``, without verification).

Each run happens in its own process so that peak memory (ru_maxrss) is the run's own; numba
kernels are compiled (or loaded from the cache) before the clock starts.
Usage: ``python benchmarks/bench_coflowsim.py [--policies fifo,varys,...] [--exact]``.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time


def run_one(policy: str) -> dict[str, float]:
    """Runs one CoflowSim-model replay of the trace in this process and returns its figures."""
    from coflowlab.heuristics.coflowsim import simulate_coflowsim
    from coflowlab.instances import find_fb_trace, read_benchmark
    from coflowlab.instances.examples import coflowsim_micro

    path = find_fb_trace()
    assert path is not None
    inst = read_benchmark(path)
    simulate_coflowsim(coflowsim_micro(), policy)  # JIT warm-up
    wall, cpu = time.perf_counter(), time.process_time()
    result = simulate_coflowsim(inst, policy, record=False)
    return {
        "wall": time.perf_counter() - wall,
        "cpu": time.process_time() - cpu,
        "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "events": result.num_events,
        "total_cct": result.total_cct,
        "feasible": bool(result.report.feasible),
    }


def run_exact(policy: str) -> dict[str, float]:
    """The exact simulator's figures for ``policy`` on the trace (``bench_simulate``)."""
    from bench_simulate import run_one as run_exact_one

    return run_exact_one("trace", policy, False)


def _child(policy: str, mode: str) -> dict[str, float] | None:
    proc = subprocess.run(
        [sys.executable, __file__, "--child", policy, mode],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode:
        print(f"  {policy:<15} {mode} failed: {proc.stderr.strip().splitlines()[-1:]}")
        return None
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> int:
    from coflowlab.heuristics.coflowsim import POLICIES

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--policies", default=",".join(POLICIES), help="default: all")
    parser.add_argument("--exact", action="store_true", help="also time the exact simulator")
    parser.add_argument("--child", nargs=2, metavar=("POLICY", "MODE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        policy, mode = args.child
        print(json.dumps(run_exact(policy) if mode == "exact" else run_one(policy)))
        return 0

    from coflowlab.instances import find_fb_trace

    if find_fb_trace() is None:
        print("trace: FB2010-1Hr-150-0.txt not found, skipped (see README)")
        return 0
    head = "policy           wall (s)  cpu (s)  peak (MiB)  events    sum of CCTs (ms)  verified"
    print(head + ("  exact wall (s)  exact cpu (s)" if args.exact else ""))
    status = 0
    for policy in args.policies.split(","):
        r = _child(policy, "coflowsim")
        if r is None:
            status = 1
            continue
        line = (
            f"{policy:<15} {r['wall']:9.2f} {r['cpu']:8.2f} {r['peak_mb']:11.0f} "
            f"{r['events']:7,} {r['total_cct']:19,.0f}  {r['feasible']!s:>8}"
        )
        if args.exact:
            e = _child(policy, "exact")
            line += "  failed" if e is None else f"  {e['wall']:14.2f} {e['cpu']:14.2f}"
        print(line, flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
