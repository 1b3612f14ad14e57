"""Replays the public Facebook trace (and a 10x synthetic FB-like workload) through the exact
simulator and prints, per policy: wall time, CPU time, peak memory, events and records.

Targets (issue "exact event-driven fluid simulator"): at most 10 s and 2 GB per policy on the
trace, under 2 minutes on the 10x workload. Figures are printed, never asserted.

Each run happens in its own process so that peak memory (ru_maxrss) is the run's own.
Usage: ``python benchmarks/bench_simulate.py [--policies fair,fifo,varys,aalo] [--verify]
[--synthetic]``.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time

DEFAULT_POLICIES = "fair,fifo,varys,aalo"


def run_one(source: str, policy: str, verify: bool) -> dict[str, float]:
    """Runs one simulation in this process and returns its figures."""
    from coflowlab import simulate
    from coflowlab.heuristics import make_policy
    from coflowlab.instances import fb_like, find_fb_trace, read_benchmark

    if source == "trace":
        path = find_fb_trace()
        assert path is not None
        inst = read_benchmark(path)
    else:
        inst = fb_like(5260, seed=1)
    pol = make_policy(policy, inst)
    simulate(inst.subset([0]), make_policy(policy, inst), verify_schedule=False)  # JIT warm-up
    wall, cpu = time.perf_counter(), time.process_time()
    result = simulate(inst, pol, verify_schedule=verify, record=False)
    return {
        "flows": inst.num_flows,
        "wall": time.perf_counter() - wall,
        "cpu": time.process_time() - cpu,
        "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "events": result.num_events,
        "records": result.num_records,
        "avg_cct": float(result.cct[~__import__("numpy").isnan(result.cct)].mean()),
        "verified": result.verified,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--policies", default=DEFAULT_POLICIES)
    parser.add_argument("--verify", action="store_true", help="also verify (streamed)")
    parser.add_argument("--synthetic", action="store_true", help="also the 10x FB-like workload")
    parser.add_argument(
        "--child", nargs=3, metavar=("SOURCE", "POLICY", "VERIFY"), help=argparse.SUPPRESS
    )
    args = parser.parse_args()
    if args.child:
        source, policy, verify = args.child
        print(json.dumps(run_one(source, policy, verify == "1")))
        return 0

    from coflowlab.instances import find_fb_trace

    sources = []
    if find_fb_trace() is None:
        print("trace: FB2010-1Hr-150-0.txt not found, skipped (see README)")
    else:
        sources.append("trace")
    if args.synthetic:
        sources.append("synthetic-10x")
    status = 0
    for source in sources:
        print(
            f"{source}: policy      wall (s)  cpu (s)  peak (MB)    events      records  "
            "avg CCT (ms)  verified"
        )
        for policy in args.policies.split(","):
            proc = subprocess.run(
                [sys.executable, __file__, "--child", source, policy, "1" if args.verify else "0"],
                capture_output=True,
                text=True,
                check=False,
            )
            if proc.returncode:
                print(f"  {policy:<14} failed: {proc.stderr.strip().splitlines()[-1:]}")
                status = 1
                continue
            r = json.loads(proc.stdout.strip().splitlines()[-1])
            print(
                f"  {policy:<14} {r['wall']:9.2f} {r['cpu']:8.2f} {r['peak_mb']:10.0f} "
                f"{r['events']:9,} {r['records']:12,} {r['avg_cct']:13,.1f}  {r['verified']}"
            )
    return status


if __name__ == "__main__":
    sys.exit(main())
