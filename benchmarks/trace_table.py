"""Replays the public Facebook trace under every policy, in both time models, through the
command line (``coflowlab simulate FILE --policy P --time-model M --json``), and prints one
Markdown table: average and p95 CCT, the four Varys bins, deadlines met, events, wall and
CPU time (``--timeout`` bounds each run).

This is the table the README shows. Every run verifies its schedule (the CLI's default), so
the numbers are the verifier's. In the exact model, ``varys-deadline`` runs with
``--deadlines 1`` (Varys deadlines, seed 0), since the trace has none. Runs happen one after
the other in subprocesses.

Usage: ``python benchmarks/trace_table.py [--models exact,coflowsim] [--policies a,b]``.
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

BINS = ("SN", "LN", "SW", "LW")


def policies(model: str) -> list[str]:
    """The policy names the CLI lists for a time model."""
    if model == "coflowsim":
        from coflowlab.heuristics.coflowsim import POLICIES

        return list(POLICIES)
    from coflowlab.heuristics import POLICIES as EXACT

    return list(EXACT)


def _children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def run(trace: str, policy: str, model: str, timeout: float | None = None) -> dict:
    """One CLI run; its JSON summary plus wall and CPU time, or the error line."""
    cmd = [sys.executable, "-m", "coflowlab", "simulate", trace, "--policy", policy]
    cmd += ["--time-model", model, "--json"]
    if policy == "varys-deadline" and model == "exact":
        cmd += ["--deadlines", "1"]  # the trace has none; CoflowSim draws factor-1 ones too
    start, cpu = time.perf_counter(), _children_cpu()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"did not finish in {timeout:g} s", "wall": timeout, "cpu": math.nan}
    wall, cpu = time.perf_counter() - start, _children_cpu() - cpu
    if proc.returncode:
        return {"error": proc.stderr.strip().splitlines()[-1], "wall": wall, "cpu": cpu}
    return {**json.loads(proc.stdout), "wall": wall, "cpu": cpu}


def fmt(x: float | None) -> str:
    return "–" if x is None else f"{x / 1000:,.1f}"


def row(policy: str, model: str, r: dict) -> str:
    if "error" in r:
        return f"| {policy} | {model} | {r['error']} |" + " |" * 9
    met = r.get("deadlines_met_pct")
    bins = " | ".join(fmt(r["bins"][b]["avg_cct"]) for b in BINS)
    rejected = f" ({r['rejected']} rejected)" if r.get("rejected") else ""
    return (
        f"| {policy} | {model} | {fmt(r['avg_cct'])} | {fmt(r['p95_cct'])} | {bins} | "
        f"{'–' if met is None else f'{met:.1f}%'}{rejected} | {r['events']:,} | "
        f"{r['wall']:.1f} | {r['cpu']:.1f} |"
    )


def main() -> int:
    from coflowlab.instances import find_fb_trace

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="exact,coflowsim")
    parser.add_argument("--policies", default=None, help="default: every listed policy")
    parser.add_argument("--timeout", type=float, default=None, help="seconds per run")
    args = parser.parse_args()
    trace = find_fb_trace()
    if trace is None:
        print("FB2010-1Hr-150-0.txt not found (see the README); nothing to do")
        return 0
    print(
        "| policy | time model | avg CCT (s) | p95 CCT (s) | SN avg | LN avg | SW avg | LW avg "
        "| deadlines met | events | wall (s) | CPU (s) |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    print(f"<!-- load average at start: {os.getloadavg()[0]:.1f} -->")
    for model in args.models.split(","):
        names = args.policies.split(",") if args.policies else policies(model)
        for name in names:
            print(row(name, model, run(str(trace), name, model, args.timeout)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
