"""What Sincronia's online scheduler loses against offline Sincronia and against the optimum.

On random ``m × m`` instances (``instances.generators.uniform``: density 0.5, integral sizes
1-10, weights 1-4) with Poisson releases (``--load`` arrivals per expected port load of one
coflow: at 1, about one coflow's worth of work arrives per unit of its own port time, so
arrivals overlap the schedule), each instance is run by

- ``sincronia-online`` with its defaults (``timing="doubling"``, 8 epochs per cycle, base 1)
  and with the public simulator's timing (``timing="public"``);
- offline ``sincronia`` (BSSI on the whole instance, greedy; it knows every future arrival,
  and its schedule respects the releases);
- ``exact-fluid`` (branch and bound over completion orders) on the classes with at most
  ``--opt-max`` coflows, with ``--time-limit`` seconds: its status and gap are reported and only
  proven optima are used as the reference.

Printed per class and online variant: the ratio online / offline-Sincronia and online / OPT
(Σ w C, mean and max over the seeds, and their count), how many optima were proven, the mean
relative gap of the exact solver's result, and the mean wall seconds of each run. All
schedules are verified (``coflowlab.run``). Prints figures; asserts nothing.

Quick run (under a minute)::

    python benchmarks/sincronia_online_gap.py --seeds 3

Report run (about 2-4 minutes)::

    python benchmarks/sincronia_online_gap.py --seeds 10 --time-limit 20
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
from dataclasses import dataclass, field

import coflowlab as cl
from coflowlab.instances.generators import uniform

DENSITY = 0.5
SIZES = (1, 10)
WEIGHTS = (1, 4)
CLASSES = ((3, 5), (3, 8), (4, 8), (6, 20), (10, 60))
VARIANTS = {"doubling": {}, "public": {"timing": "public"}}


def make_instance(m: int, n: int, load: float, seed: int) -> cl.Instance:
    """A random ``m × m`` instance with ``load`` Poisson arrivals per expected port load of a
    coflow (``m · density · mean size``)."""
    rate = load / (m * DENSITY * sum(SIZES) / 2)
    return uniform(
        m, n, density=DENSITY, sizes=SIZES, weights=WEIGHTS, release_rate=rate, seed=seed
    )


@dataclass
class Row:
    """Figures of one (class, variant)."""

    vs_offline: list[float] = field(default_factory=list)
    vs_opt: list[float] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)


def _mean(xs: list[float]) -> str:
    return f"{statistics.fmean(xs):.4f}" if xs else "-"


def _max(xs: list[float]) -> str:
    return f"{max(xs):.4f}" if xs else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5, help="seeds per class (default 5)")
    parser.add_argument("--load", type=float, default=1.0, help="arrival load (default 1)")
    parser.add_argument(
        "--time-limit", type=float, default=10.0, help="exact-fluid seconds (default 10)"
    )
    parser.add_argument(
        "--opt-max", type=int, default=8, help="largest n given to exact-fluid (default 8)"
    )
    args = parser.parse_args()
    options = cl.SolverOptions(time_limit=args.time_limit)
    started = time.perf_counter()
    header = (
        f"{'m':>3} {'n':>3} {'variant':<9} {'runs':>4}  {'on/offl mean':>12} {'max':>7}  "
        f"{'on/OPT mean':>11} {'max':>7} {'count':>5}  {'proven':>6} {'OPT gap':>8}  "
        f"{'online s':>8} {'offline s':>9} {'OPT s':>6}"
    )
    print(header)
    print("-" * len(header))
    for m, n in CLASSES:
        rows = {v: Row() for v in VARIANTS}
        offline_s: list[float] = []
        opt_s: list[float] = []
        opt_gaps: list[float] = []
        proven = 0
        tried = 0
        for seed in range(args.seeds):
            inst = make_instance(m, n, args.load, seed)
            offline = cl.run("sincronia", inst)
            offline_s.append(offline.runtime)
            opt = math.nan
            if n <= args.opt_max:
                tried += 1
                exact = cl.run("exact-fluid", inst, options)
                opt_s.append(exact.runtime)
                gap = cl.solvers.relative_gap(exact.objective, exact.bound)
                if math.isfinite(gap):
                    opt_gaps.append(gap)
                if exact.proven_optimal:
                    proven += 1
                    opt = exact.objective
            for variant, params in VARIANTS.items():
                online = cl.run("sincronia-online", inst, **params)
                assert online.verified, online.report
                row = rows[variant]
                row.seconds.append(online.runtime)
                row.vs_offline.append(online.objective / offline.objective)
                if math.isfinite(opt):
                    row.vs_opt.append(online.objective / opt)
        for variant, row in rows.items():
            opt_cols = (
                f"{proven:>3}/{tried:<2} {_mean(opt_gaps):>8}" if tried else f"{'-':>6} {'-':>8}"
            )
            print(
                f"{m:>3} {n:>3} {variant:<9} {len(row.vs_offline):>4}  "
                f"{_mean(row.vs_offline):>12} {_max(row.vs_offline):>7}  "
                f"{_mean(row.vs_opt):>11} {_max(row.vs_opt):>7} {len(row.vs_opt):>5}  "
                f"{opt_cols}  {statistics.fmean(row.seconds):>8.3f} "
                f"{statistics.fmean(offline_s):>9.3f} "
                f"{(statistics.fmean(opt_s) if opt_s else math.nan):>6.2f}"
            )
    total = time.perf_counter() - started
    print(
        f"load {args.load}, {args.seeds} seeds per class, exact-fluid time limit "
        f"{args.time_limit:g} s on n <= {args.opt_max}; total {total:.1f} s"
    )


if __name__ == "__main__":
    main()
