"""How large an instance each exact method proves optimal within a time limit.

For random ``m × m`` instances (``instances.generators.uniform``: density 0.5, integral sizes
1-10, weights 1-4), with all coflows released at 0 and with Poisson releases (about one
arrival per coflow's port load, so arrivals overlap the schedule), each method is run on
``n = n_min, n_min + 1, ...`` coflows for every seed until it fails to prove optimality
within the time limit. The figure printed is the median over the seeds of the largest ``n``
proven optimal (``< n_min`` when even ``n_min`` fails), with the per-seed values and the
median seconds at that ``n``.

Methods: ``exact-fluid`` with ``algorithm="bnb"`` and ``algorithm="mip"``, and
``exact-slotted`` with ``algorithm="mip"`` (the time-indexed MIP, its default) and
``algorithm="bnb"`` (branch and bound over event sequences with an order MIP per leaf); the
slotted methods see the same instances (sizes are integral; a flow released at ``r`` first
sends in slot ``ceil(r) + 1``). A MIP run that ends optimal only because the incumbent met
the combinatorial root bound (``details["proven_by"] == "chain bound"``) does not count as
proven by the MIP.

``--gaps N`` prints instead, per instance class at ``n = N`` coflows, each relaxation's root
bound as a fraction of the optimum (median and worst over the seeds): the fluid bounds
against the fluid optimum, and the fluid optimum and the time-indexed LP against the slotted
optimum (what tells a researcher which bound to trust where the optimum is out of reach).

``--param KEY=VALUE`` passes an option to ``exact-fluid`` (e.g. ``chain_bound=table``, the
subset table only and no chain bound above it, ``weighted_group=false``,
``warm_start=false``: every node LP solved from scratch, the search before warm starts, or
``table_coflows=20``: the table up to 20 coflows only, the rule before the default
tabulated further; ``exact_subsets=0`` and ``release_bound=parent``: the node bounds with
release dates before issue 19; ``lp_method=simplex``: every node LP by the warm simplex,
the rule before large ones went to the interior-point method; ``workers=2``: the search on
two processes, whose CPU time is counted in the row's CPU seconds); ``--releases yes|no`` runs
one instance class only; ``--verbose`` prints one line per solve (status, wall and CPU
seconds, nodes, LPs, LP seconds). Each row ends with the wall and CPU seconds of all its
solves, and the load average is printed before and after (the limit is wall-clock time, so
a loaded machine proves less).

Prints figures; asserts nothing about time. Quick run::

    python benchmarks/bench_exact.py --seeds 2 --time-limit 5

Full protocol (slow): ``--seeds 10 --time-limit 60``.
"""

from __future__ import annotations

import argparse
import math
import os
import resource
import statistics
import time
from collections.abc import Callable
from typing import Any

import coflowlab
from coflowlab import Instance, SolverOptions
from coflowlab.instances.generators import uniform

VERBOSE = False
"""``--verbose``: one line per solve (status, seconds, nodes, LPs)."""

SPENT = {"wall": 0.0, "cpu": 0.0}
"""Wall and CPU seconds of the solves since the last reset (per printed row)."""

DENSITY = 0.5
SIZES = (1, 10)
WEIGHTS = (1, 4)


def make_instance(m: int, n: int, releases: bool, seed: int) -> Instance:
    """A random ``m × m`` instance; with releases, Poisson arrivals at one per expected
    port load of a coflow (``m · density · mean size``)."""
    rate = 1.0 / (m * DENSITY * sum(SIZES) / 2) if releases else None
    return uniform(
        m, n, density=DENSITY, sizes=SIZES, weights=WEIGHTS, release_rate=rate, seed=seed
    )


def cpu_seconds() -> float:
    """CPU time of this process and of its ended children (``--param workers=K`` forks the
    search's processes; their time counts once they have been joined)."""
    child = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + child.ru_utime + child.ru_stime


def proven(
    method: str, algorithm: str | None, extra: dict[str, str] | None = None
) -> Callable[[Instance, float], tuple[bool, float]]:
    """A runner: ``(instance, time_limit) -> (proven optimal, seconds)``; ``extra``: more
    parameters of ``exact-fluid`` (``--param``)."""

    def run(inst: Instance, limit: float) -> tuple[bool, float]:
        params: dict[str, Any] = {}
        if algorithm is not None:
            params.update(algorithm=algorithm)
        if method == "exact-fluid":
            params.update(max_coflows=64, **(extra or {}))
        start, cpu = time.perf_counter(), cpu_seconds()
        res = coflowlab.run(method, inst, SolverOptions(time_limit=limit), **params)
        wall = time.perf_counter() - start
        cpu = cpu_seconds() - cpu
        SPENT["wall"] += wall
        SPENT["cpu"] += cpu
        ok = res.proven_optimal and res.raw.details.get("proven_by") != "chain bound"
        if VERBOSE:
            d = res.raw.details
            print(
                f"    m={inst.num_ports} n={inst.num_coflows} {res.status} {wall:.1f}s "
                f"(cpu {cpu:.1f}s) "
                f"nodes={d.get('nodes')} lps={d.get('lps')} lp_s={d.get('lp_seconds')}",
                flush=True,
            )
        return ok and wall <= limit * 1.05, wall

    return run


def available(method: str) -> str | None:
    """``None`` if the method runs, else why not."""
    try:
        coflowlab.run(method, make_instance(2, 2, False, 0), SolverOptions(time_limit=10))
    except (ImportError, AttributeError) as exc:
        return f"not available ({type(exc).__name__}: {exc})"
    return None


def largest_proven(
    run: Callable[[Instance, float], tuple[bool, float]],
    m: int,
    releases: bool,
    seed: int,
    n_range: range,
    limit: float,
) -> tuple[int, float]:
    """The largest ``n`` of ``n_range`` proven optimal (stopping at the first failure) and
    the seconds it took; ``n_range.start - 1`` and ``nan`` if none."""
    best, seconds = n_range.start - 1, math.nan
    for n in n_range:
        ok, wall = run(make_instance(m, n, releases, seed), limit)
        if not ok:
            break
        best, seconds = n, wall
    return best, seconds


GAP_BOUNDS = (
    "bound-release-rho",
    "bound-smith",
    "interval-lp",
    "lp-ov",
    "parallel-lp",
    "time-indexed-lp",
)
"""The relaxations and bounds whose root gap ``--gaps`` prints."""
SOLVED = {"interval-lp", "lp-ov", "parallel-lp", "time-indexed-lp"}
"""Those of :data:`GAP_BOUNDS` that solve an LP (and take solver options)."""


def root_gaps(m: int, releases: bool, n: int, seeds: int, limit: float) -> dict[str, list[float]]:
    """Per bound, its ratio to the optimum on each seed where the optimum is proven: the
    fluid bounds (and the B&B's combinatorial root bound, ``chain``) to fluid OPT; ``fluid
    OPT`` and ``time-indexed-lp`` to slotted OPT (suffix ``/slotted``)."""
    out: dict[str, list[float]] = {}
    opts = SolverOptions(time_limit=limit)
    for seed in range(seeds):
        inst = make_instance(m, n, releases, seed)
        fluid = coflowlab.run("exact-fluid", inst, opts)
        slotted = coflowlab.run("exact-slotted", inst, opts, algorithm="bnb")
        values: dict[str, float] = {}
        if fluid.proven_optimal:
            values["chain (B&B root)"] = fluid.raw.details["root_bound"] / fluid.objective
            for name in GAP_BOUNDS:
                bound = coflowlab.run(name, inst, opts if name in SOLVED else None)
                values[name] = bound.objective / fluid.objective
        if slotted.proven_optimal:
            values["time-indexed-lp/slotted"] = (
                coflowlab.run("time-indexed-lp", inst, opts).objective / slotted.objective
            )
            if fluid.proven_optimal:
                values["fluid OPT/slotted"] = fluid.objective / slotted.objective
        for key, value in values.items():
            out.setdefault(key, []).append(value)
    return out


def print_gaps(args: argparse.Namespace) -> None:
    """The ``--gaps`` table."""
    print(
        f"root bound / OPT at n = {args.gaps} coflows, over {args.seeds} seeds "
        f"(median, worst); {args.time_limit:g} s per solve"
    )
    print(f"{'fabric':>7} {'releases':>8}  {'bound':<24} {'median':>7} {'worst':>7}  seeds")
    for m in args.ports:
        for releases in (False, True):
            gaps = root_gaps(m, releases, args.gaps, args.seeds, args.time_limit)
            for name, values in gaps.items():
                ratios = [r for r in values if math.isfinite(r)]
                head = f"{m:>3}x{m:<3} {'yes' if releases else 'no':>8}  {name:<24} "
                if not ratios:  # the LP did not finish within the time limit
                    print(f"{head}{'-':>7} {'-':>7}  0 (no value within the limit)", flush=True)
                    continue
                print(
                    f"{head}{statistics.median(ratios):7.4f} {min(ratios):7.4f}  {len(ratios)}",
                    flush=True,
                )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=10, help="seeds per setting (default 10)")
    parser.add_argument("--time-limit", type=float, default=60.0, help="seconds per solve")
    parser.add_argument("--n-min", type=int, default=2, help="smallest number of coflows")
    parser.add_argument(
        "--n-max",
        type=int,
        default=40,
        help="largest number of coflows (default 40: the fluid search proves past 20, and "
        "each seed stops at its first failure anyway)",
    )
    parser.add_argument("--ports", type=int, nargs="+", default=[4, 8], help="fabric sizes m")
    parser.add_argument(
        "--methods",
        nargs="+",
        default=["bnb", "mip", "slotted", "slotted-bnb"],
        choices=["bnb", "mip", "slotted", "slotted-bnb"],
        help="which exact methods to run (slotted: the time-indexed MIP)",
    )
    parser.add_argument(
        "--gaps",
        type=int,
        default=None,
        metavar="N",
        help="print the root gap of each relaxation at N coflows instead",
    )
    parser.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a parameter of exact-fluid (both algorithms), e.g. chain_bound=table",
    )
    parser.add_argument(
        "--releases",
        choices=["both", "yes", "no"],
        default="both",
        help="which instance classes: with Poisson releases, without, or both (default)",
    )
    parser.add_argument("--verbose", action="store_true", help="one line per solve")
    args = parser.parse_args()
    global VERBOSE
    VERBOSE = args.verbose
    extra = dict(item.split("=", 1) for item in args.param)
    if args.gaps is not None:
        print_gaps(args)
        return
    runners = {
        "bnb": ("exact-fluid (bnb)", "exact-fluid", "bnb"),
        "mip": ("exact-fluid (mip)", "exact-fluid", "mip"),
        "slotted": ("exact-slotted (mip)", "exact-slotted", None),
        "slotted-bnb": ("exact-slotted (bnb)", "exact-slotted", "bnb"),
    }
    n_range = range(args.n_min, args.n_max + 1)
    classes = {"both": (False, True), "yes": (True,), "no": (False,)}[args.releases]
    print(
        f"largest n proven optimal within {args.time_limit:g} s, median over {args.seeds} "
        f"seeds (n tried {args.n_min}..{args.n_max}, stopping at the first failure)"
    )
    print(f"load average (1, 5, 15 min): {_load()}")
    print(
        f"{'fabric':>7} {'releases':>8}  {'method':<18} {'median n':>8}  {'s at n':>7}  per seed"
        "  (wall / CPU s of the row)"
    )
    for key in args.methods:
        label, method, algorithm = runners[key]
        why = available(method)
        if why is not None:
            print(f"{'':>7} {'':>8}  {label:<18} {why}")
            continue
        run = proven(method, algorithm, extra)
        for m in args.ports:
            for releases in classes:
                SPENT.update(wall=0.0, cpu=0.0)
                got = [
                    largest_proven(run, m, releases, seed, n_range, args.time_limit)
                    for seed in range(args.seeds)
                ]
                ns = [g[0] for g in got]
                secs = [g[1] for g in got if not math.isnan(g[1])]
                med_s = f"{statistics.median(secs):7.2f}" if secs else f"{'-':>7}"
                print(
                    f"{m:>3}x{m:<3} {'yes' if releases else 'no':>8}  {label:<18} "
                    f"{statistics.median(ns):>8g}  {med_s}  {ns}  "
                    f"({SPENT['wall']:.0f} / {SPENT['cpu']:.0f})",
                    flush=True,
                )
    print(f"load average (1, 5, 15 min): {_load()}")


def _load() -> str:
    """The load average, or a dash where the platform has none."""
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "-"


if __name__ == "__main__":
    main()
