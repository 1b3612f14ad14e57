"""Weighted CCT of Yosemite, Yosemite-offline, Varys and Aalo on YosemiteSim's weighted copy of
the Facebook trace (``FB2010-weight0.txt``), in the exact model and, where a policy has one, in
the CoflowSim model; prints a Markdown table and the improvement factors of the Yosemite paper
(its Eq. (6): average weighted CCT of the baseline over that of Yosemite).

Every run goes through :func:`coflowlab.run`, which verifies the schedule; the numbers are the
verifier's completion times. The weighted CCT is ``Σ_j w_j (C_j - r_j)``
(:func:`coflowlab.metrics.weighted_cct`); in the CoflowSim model ``r_j`` is CoflowSim's epoch
release. Policies run with their registry defaults (Varys with starvation avoidance).

Usage: ``python benchmarks/weighted_table.py [--coflows N] [--models exact,coflowsim]
[--policies yosemite,varys]`` (``--coflows N``: the first N coflows of the trace).
"""

from __future__ import annotations

import argparse
import time

POLICIES = ("yosemite", "yosemite-offline", "varys", "aalo")


def main() -> int:
    import coflowlab as cl
    from coflowlab.heuristics.coflowsim import POLICIES as COFLOWSIM
    from coflowlab.instances import read_instance
    from coflowlab.instances.benchmark import find_data_file
    from coflowlab.metrics import weighted_cct

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--coflows", type=int, default=None, help="the first N coflows only")
    parser.add_argument("--models", default="exact,coflowsim")
    parser.add_argument("--policies", default=",".join(POLICIES))
    args = parser.parse_args()
    trace = find_data_file("FB2010-weight0.txt")
    if trace is None:
        print("FB2010-weight0.txt not found (see shared/data/README.md); nothing to do")
        return 0
    inst = read_instance(trace)
    if args.coflows is not None and args.coflows < inst.num_coflows:
        inst = inst.subset(list(range(args.coflows)))
    weights = sorted(set(inst.coflow_weight.tolist()))
    print(f"{trace.name}: {inst.num_coflows} coflows, weights {weights}")
    print()
    print("| policy | time model | Σ w CCT (s) | avg w CCT (s) | avg CCT (s) | wall (s) |")
    print("|---|---|---:|---:|---:|---:|")
    avg: dict[tuple[str, str], float] = {}
    for model in args.models.split(","):
        for name in args.policies.split(","):
            if model == "coflowsim" and name not in COFLOWSIM:
                print(f"| {name} | {model} | (no CoflowSim counterpart) | | | |")
                continue
            start = time.perf_counter()
            res = cl.run(name, inst, time_model=model)
            wall = time.perf_counter() - start
            assert res.verified and res.completion is not None
            total, mean = weighted_cct(res.instance, res.completion)
            cct = res.completion - res.instance.coflow_release
            avg[name, model] = mean
            print(
                f"| {name} | {model} | {total / 1000:,.1f} | {mean / 1000:,.2f} | "
                f"{cct.mean() / 1000:,.2f} | {wall:.1f} |"
            )
    print()
    for (name, model), mean in avg.items():
        if not name.startswith("yosemite"):
            continue
        for base in ("varys", "aalo"):
            if (base, model) in avg:
                factor = avg[base, model] / mean
                print(
                    f"{model}: avg weighted CCT of {base} / {name} = {factor:.3f} "
                    f"({100 * (1 - 1 / factor):+.1f}% for {name})"
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
