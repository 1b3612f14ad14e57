"""Writes (or checks) the exact model's per-coflow CCTs on the public trace, per policy.

Issue 15 changes the simulator's engine, not its semantics: every policy's per-coflow
completion times on the Facebook trace must stay what they were before the change, within the
verifier's time tolerance. This script records them from the engine as it is (``--write``), in
``tests/data/exact_trace_cct.json``, which the slow test
``tests/heuristics/test_exact_trace_fingerprints.py`` compares against; without ``--write`` it
prints the largest difference from the stored figures.

Usage::

    python benchmarks/exact_fingerprints.py [--policies fair,fifo] [--write]

Each policy runs in this process, verified, ``record=False``; the CCTs are the verifier's.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import time
from pathlib import Path

FILE = Path(__file__).resolve().parents[1] / "tests" / "data" / "exact_trace_cct.json"

DEFAULT_POLICIES = "fair,fifo,varys,scf,ncf,tcf,varys-deadline,pfp,drf,coflex,sincronia-online"
"""The policies that replay the whole trace in about a minute or less (README table)."""


def _run(policy: str) -> dict[str, object]:
    import numpy as np

    from coflowlab import simulate
    from coflowlab.heuristics import make_policy
    from coflowlab.instances import find_fb_trace, read_benchmark

    path = find_fb_trace()
    if path is None:
        raise SystemExit("the public trace FB2010-1Hr-150-0.txt was not found")
    inst = read_benchmark(path)
    cpu = time.process_time()
    res = simulate(inst, make_policy(policy, inst), record=False)
    assert res.report is not None and res.report.feasible
    cct = [None if math.isnan(x) else float(x) for x in res.cct]
    return {
        "cct": cct,
        "rejected": [int(k) for k in res.rejected],
        "events": res.num_events,
        "time_tol": res.report.time_tol,
        "avg": float(np.nanmean(res.cct)),
        "cpu_s": round(time.process_time() - cpu, 1),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--policies", default=DEFAULT_POLICIES)
    parser.add_argument("--write", action="store_true", help=f"store the CCTs in {FILE.name}")
    args = parser.parse_args()
    stored = json.loads(FILE.read_text()) if FILE.exists() else {"policies": {}}
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
    ).stdout.strip()
    for policy in args.policies.split(","):
        got = _run(policy)
        old = stored["policies"].get(policy)
        if old is not None:
            diff = max(
                (abs(a - b) for a, b in zip(got["cct"], old["cct"], strict=True) if a and b),
                default=0.0,
            )
            print(
                f"{policy}: largest |CCT difference| {diff:.3g} (time_tol {got['time_tol']:.3g})"
            )
        print(f"{policy}: avg {got['avg']:.4f}, {got['events']} events, {got['cpu_s']} s CPU")
        sys.stdout.flush()
        if args.write:
            got["commit"] = commit
            stored["policies"][policy] = got
    if args.write:
        stored["about"] = (
            "Per-coflow CCTs (the instance's time units) of the exact model on FB2010-1Hr-150-0, "
            "verified, written by benchmarks/exact_fingerprints.py --write"
        )
        tmp = FILE.with_suffix(".tmp")
        tmp.write_text(json.dumps(stored, indent=0, sort_keys=True) + "\n")
        tmp.replace(FILE)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
