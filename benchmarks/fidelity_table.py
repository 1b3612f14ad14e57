"""The exact model against the CoflowSim model, policy by policy, on the public Facebook trace
(docs/fidelity.md).

For every policy with a CoflowSim counterpart, the trace is replayed by the exact event-driven
simulator and by the CoflowSim time model on the same input, with every release set to 0
(``zero``: CoflowSim's offline mode, where online equals offline) and with the trace's own
releases (``real``). The Varys family (``varys``, ``scf``, ``ncf``, ``tcf``, ``fifo``) runs
without starvation avoidance, which CoflowSim does not have. With ``--sincronia`` it also
prints the grid of Sincronia's offline simulator on the zero-release trace: every ordering
(``sincronia`` = BSSI, ``order-sebf``, ``-scf``, ``-ncf``, ``-tcf``) under every allocation
(``greedy``, ``madd``, ``madd-exact``).

Average CCTs are in ms (the trace's MB at CoflowSim's 1 MiB per 8 ms). Runs happen one after
the other in this process; wall and CPU seconds are printed per run (the machine's load is
printed at the start and the end, since other jobs inflate the wall times).

Usage::

    python benchmarks/fidelity_table.py [--policies varys,fair] [--releases zero,real]
        [--sincronia] [--no-verify]
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from typing import Any

import numpy as np

VARYS_FAMILY = ("varys", "scf", "ncf", "tcf", "fifo")
SINCRONIA_METHODS = ("sincronia", "order-sebf", "order-scf", "order-ncf", "order-tcf")
ALLOCATIONS = ("greedy", "madd", "madd-exact")


def timed(fn: Callable[..., Any], *args: Any, **kw: Any) -> tuple[Any, float, float]:
    """``fn(*args, **kw)`` with its wall and CPU seconds."""
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn(*args, **kw)
    return out, time.perf_counter() - wall, time.process_time() - cpu


def exact_avg(inst: Any, policy: str, verify: bool) -> tuple[float, int]:
    """Average CCT and event count of the exact model."""
    from coflowlab import simulate
    from coflowlab.heuristics import make_policy

    params = {"starvation": False} if policy in VARYS_FAMILY else {}
    if policy == "varys-deadline":
        raise ValueError("varys-deadline needs deadlines; not part of this table")
    res = simulate(inst, make_policy(policy, inst, **params), verify_schedule=verify, record=False)
    return float(np.mean(res.cct)), int(res.num_events)


def coflowsim_avg(inst: Any, policy: str, offline: bool) -> float:
    """Average CCT of the CoflowSim model (always verified)."""
    from coflowlab.heuristics.coflowsim import simulate_coflowsim

    return float(simulate_coflowsim(inst, policy, offline=offline, record=False).average_cct)


def main() -> None:
    from coflowlab.heuristics.coflowsim import POLICIES
    from coflowlab.instances import find_fb_trace, read_instance

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--policies", default=",".join(p for p in POLICIES if p != "varys-deadline"))
    ap.add_argument("--releases", default="zero,real")
    ap.add_argument("--sincronia", action="store_true", help="also print Sincronia's grid")
    ap.add_argument("--no-verify", action="store_true", help="exact model: skip verification")
    args = ap.parse_args()
    path = find_fb_trace()
    if path is None:
        raise SystemExit("FB2010-1Hr-150-0.txt not found (README: 'Getting the Facebook trace')")
    trace = read_instance(path)
    zero = trace.replace(coflow_release=np.zeros(trace.num_coflows))
    print(f"load average at start: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores\n")
    print("| policy | releases | exact avg CCT (ms) | CoflowSim-model avg CCT (ms) | exact / "
          "CoflowSim | exact events | wall (s) | CPU (s) |")  # fmt: skip
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for releases in args.releases.split(","):
        inst = zero if releases == "zero" else trace
        for policy in args.policies.split(","):
            (ex, events), w1, c1 = timed(exact_avg, inst, policy, not args.no_verify)
            cs, w2, c2 = timed(coflowsim_avg, trace, policy, releases == "zero")
            print(
                f"| {policy} | {releases} | {ex:,.0f} | {cs:,.0f} | {ex / cs:.3f} | "
                f"{events:,} | {w1 + w2:,.0f} | {c1 + c2:,.0f} |",
                flush=True,
            )
    if args.sincronia:
        from coflowlab.approximations import run_method

        print("\nSincronia's offline grid, zero releases, average CCT (ms):\n")
        print("| ordering | " + " | ".join(ALLOCATIONS) + " |")
        print("|---|" + "---:|" * len(ALLOCATIONS))
        for method in SINCRONIA_METHODS:
            cells = []
            for alloc in ALLOCATIONS:
                sol, wall, cpu = timed(run_method, zero, method, allocation=alloc)
                avg = float(np.mean(sol.completion_times))
                cells.append(f"{avg:,.0f} ({wall:,.0f} s wall, {cpu:,.0f} s CPU)")
            print(f"| {method} | " + " | ".join(cells) + " |", flush=True)
    print(f"\nload average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
