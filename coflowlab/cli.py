"""The ``coflowlab`` command line.

Subcommands:

``info FILE``
    Summary of an instance file (any format :func:`coflowlab.instances.read_instance` reads).
``generate KIND -o FILE``
    Writes a generated instance (uniform, fb-like, cos, single-port).
``simulate FILE --policy NAME``
    Replays an instance under an online policy (exact, or CoflowSim-compatible).
``demo``
    Generates a few built-in instances and prints their summaries (what ``make demo`` runs).

Errors exit with status 1 and one line on standard error, never a traceback; usage errors exit
with status 2 (argparse).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

import numpy as np

from .exceptions import CoflowlabError

__all__ = ["main"]

GENERATORS = ("uniform", "fb-like", "cos", "single-port")


def _info(args: argparse.Namespace) -> int:
    from .instances import read_instance
    from .summary import describe, summarize_instance

    inst = read_instance(args.file, format=args.format)
    if args.json:
        print(json.dumps(asdict(summarize_instance(inst))))
    else:
        top = None if args.ports == "all" else int(args.ports)
        print(describe(inst, top_ports=top, name=str(args.file)))
    return 0


def _generate(args: argparse.Namespace) -> int:
    from . import instances as ins

    if args.kind == "uniform":
        inst = ins.uniform(
            args.ports,
            args.coflows,
            density=args.density,
            sizes=(args.min_size, args.max_size),
            integral=not args.real,
            release_rate=args.release_rate,
            seed=args.seed,
        )
    elif args.kind == "fb-like":
        inst = ins.fb_like(args.coflows, num_ports=args.ports, load=args.load, seed=args.seed)
    elif args.kind == "cos":
        inst = ins.concurrent_open_shop(
            args.ports,
            args.coflows,
            sizes=(args.min_size, args.max_size),
            integral=not args.real,
            density=args.density,
            seed=args.seed,
        )
    else:
        inst = ins.single_port(
            args.coflows,
            sizes=(args.min_size, args.max_size),
            integral=not args.real,
            seed=args.seed,
        )
    if args.weights is not None:
        inst = ins.assign_weights(inst, args.weights[0], args.weights[1], seed=args.seed)
    if args.deadlines is not None:
        inst = ins.assign_deadlines(inst, args.deadlines, seed=args.seed)
    ins.write_instance(inst, args.output, format=args.format)
    print(
        f"wrote {args.output}: {inst.num_coflows} coflows, {inst.num_flows} flows, "
        f"{inst.num_ports} ports"
    )
    return 0


def _demo(args: argparse.Namespace) -> int:
    from . import instances as ins
    from .summary import describe

    seed = args.seed
    demos: list[tuple[str, Any]] = [
        ("uniform 4x4, 8 coflows", ins.uniform(4, 8, density=0.5, seed=seed)),
        ("concurrent open shop, 3 machines, 6 jobs", ins.concurrent_open_shop(3, 6, seed=seed)),
        ("single port, 5 jobs (1||ΣwC)", ins.single_port(5, seed=seed)),
        ("FB-like, 200 coflows on 150 ports", ins.fb_like(200, seed=seed)),
    ]
    for name, inst in demos:
        print(describe(inst, top_ports=3, name=name))
        print()
    _demo_simulations(ins.assign_deadlines(ins.fb_like(60, num_ports=20, seed=seed), seed=seed))
    return 0


def _demo_simulations(inst: Any) -> None:
    """Replays one generated instance under every online policy; prints verified CCTs."""
    from .heuristics.registry import POLICIES, make_policy
    from .simulation_report import simulation_summary
    from .simulator import simulate

    print(
        f"online policies on FB-like, {inst.num_coflows} coflows on {inst.num_ports} ports "
        "(exact fluid simulator, every schedule verified; CCTs in ms)"
    )
    print(f"{'policy':<20}{'avg CCT':>12}{'p95 CCT':>12}{'deadlines met':>15}{'rejected':>10}")
    for name in POLICIES:
        res = simulate(inst, make_policy(name, inst), record=False)
        doc = simulation_summary(inst, res.coflow_completion, policy=name, time_model="exact")
        met = doc["deadlines_met_pct"]
        print(
            f"{name:<20}{doc['avg_cct']:>12,.1f}{doc['p95_cct']:>12,.1f}"
            f"{'-' if met is None else f'{met:.0f}%':>15}{len(res.rejected):>10}"
        )


def _parse_params(pairs: Sequence[str]) -> dict[str, str]:
    params = {}
    for item in pairs:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ValueError(f"--param expects KEY=VALUE, got {item!r}")
        params[key.strip()] = value.strip()
    return params


def _simulate(args: argparse.Namespace) -> int:
    from .heuristics.registry import POLICIES, make_policy

    if args.list and args.time_model == "coflowsim":
        from .heuristics.coflowsim import POLICIES as COFLOWSIM

        width = max(len(n) for n in COFLOWSIM)
        for name, java in COFLOWSIM.items():
            print(f"{name:<{width}}  CoflowSim's {java}")
        return 0
    if args.list:
        width = max(len(n) for n in POLICIES)
        for name, entry in POLICIES.items():
            print(f"{name:<{width}}  {entry.summary}")
        return 0
    if args.file is None or args.policy is None:
        raise ValueError("simulate needs FILE and --policy NAME (or --list)")
    from .instances import read_instance
    from .simulation_report import simulation_csv, simulation_summary

    inst = read_instance(args.file, format=args.format)
    params = _parse_params(args.param)
    if args.time_model == "coflowsim":
        from .heuristics.coflowsim import resolve_policy, simulate_coflowsim

        name = resolve_policy(args.policy)  # one-line ValueError listing the supported names
        if params:
            raise ValueError("--time-model coflowsim takes no --param (CoflowSim has none)")
        if args.deadlines is not None:
            raise ValueError(
                "--deadlines is for the exact model; CoflowSim draws its own (factor 1)"
            )
        # always verified: the completion times are read from the verified schedule
        result = simulate_coflowsim(inst, name, record=False)
        sim_inst, completion = result.instance, result.completion
        meta = {
            "met": np.isin(result.labels, result.met),  # CoflowSim's rule (overruns < 3%)
            "missing": len(result.rejected),
            "events": result.num_events,
            "verified": bool(result.report.feasible),
            "rejected": len(result.rejected),
            "total_cct": result.total_cct,
        }
    else:
        from .simulator import simulate

        if args.deadlines is not None:
            from .instances import assign_deadlines

            inst = assign_deadlines(inst, args.deadlines, seed=args.seed)
        policy = make_policy(args.policy, inst, **params)
        res = simulate(inst, policy, verify_schedule=not args.no_verify, record=False)
        sim_inst, completion = inst, res.coflow_completion
        meta = {
            "events": res.num_events,
            "verified": res.verified,
            "wall_time": round(res.wall_time, 3),
            "rejected": len(res.rejected),
        }
    summary = simulation_summary(
        sim_inst, completion, policy=args.policy, time_model=args.time_model, **meta
    )
    if args.output:
        from .instances import atomic_write_text

        atomic_write_text(args.output, simulation_csv(sim_inst, completion))
    if args.json:
        print(json.dumps(summary))
    else:
        from .simulation_report import format_summary

        print(format_summary(summary, name=str(args.file)))
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``coflowlab`` command."""
    parser = argparse.ArgumentParser(
        prog="coflowlab",
        description="Coflow scheduling toolkit: instances, exact optima, bounds, "
        "approximations and an exact event-driven simulator.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    info = sub.add_parser(
        "info",
        help="summarize an instance file",
        description="Print counts, bytes, the Varys bin table and port loads.",
    )
    info.add_argument("file", help="instance file: coflowlab JSON, coflow-benchmark or Sincronia")
    info.add_argument(
        "--format",
        choices=("json", "benchmark", "sincronia"),
        help="file format (default: detected from the content)",
    )
    info.add_argument(
        "--ports",
        default="10",
        help="how many of the busiest ports to list, or 'all' (default 10)",
    )
    info.add_argument("--json", action="store_true", help="print the summary as one JSON object")
    info.set_defaults(run=_info)

    gen = sub.add_parser(
        "generate",
        help="write a generated instance",
        description="Generate an instance and write it to a file.",
    )
    gen.add_argument(
        "kind",
        choices=GENERATORS,
        help="uniform random, FB-like synthetic, concurrent open shop (diagonal), "
        "or single port (1||ΣwC)",
    )
    gen.add_argument("-o", "--output", required=True, help="file to write")
    gen.add_argument(
        "--format",
        choices=("json", "benchmark", "sincronia"),
        help="output format (default: from the suffix; .json is JSON)",
    )
    gen.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    gen.add_argument(
        "--ports",
        type=int,
        default=None,
        help="ports m (machines for cos; default 4, or 150 for fb-like)",
    )
    gen.add_argument("--coflows", type=int, default=10, help="number of coflows (default 10)")
    gen.add_argument(
        "--density",
        type=float,
        default=0.5,
        help="probability of each (ingress, egress) flow (uniform, cos; default 0.5)",
    )
    gen.add_argument("--min-size", type=float, default=1, help="smallest flow size (default 1)")
    gen.add_argument("--max-size", type=float, default=10, help="largest flow size (default 10)")
    gen.add_argument("--real", action="store_true", help="real-valued sizes (default: integers)")
    gen.add_argument(
        "--release-rate",
        type=float,
        default=None,
        help="Poisson arrival rate per time unit (uniform; default: all at 0)",
    )
    gen.add_argument("--load", type=float, default=0.9, help="offered load (fb-like; default 0.9)")
    gen.add_argument(
        "--weights",
        type=float,
        nargs=2,
        metavar=("LOW", "HIGH"),
        help="draw integer weights uniformly from [LOW, HIGH]",
    )
    gen.add_argument(
        "--deadlines",
        type=float,
        metavar="X",
        help="Varys deadlines D = ρ(1 + U(0, X)), at least 200 ms for ms instances",
    )
    gen.set_defaults(run=_generate)

    sim = sub.add_parser(
        "simulate",
        help="replay an instance under an online policy",
        description="Replay an instance through the exact event-driven simulator (or the "
        "CoflowSim-compatible time model) and print CCT statistics per Varys bin.",
    )
    sim.add_argument("file", nargs="?", help="instance file (any format read_instance knows)")
    sim.add_argument("--policy", help="policy name; see --list")
    sim.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="policy parameter, repeatable (e.g. --param starvation=false)",
    )
    sim.add_argument(
        "--time-model",
        choices=("exact", "coflowsim"),
        default="exact",
        help="exact fluid model (default) or CoflowSim's 8 ms quanta and epochs",
    )
    sim.add_argument(
        "--format",
        choices=("json", "benchmark", "sincronia"),
        help="file format (default: detected)",
    )
    sim.add_argument(
        "-o",
        "--output",
        metavar="CSV",
        help="write one row per coflow: coflow,release,completion,cct,bin",
    )
    sim.add_argument("--json", action="store_true", help="print the summary as one JSON object")
    sim.add_argument(
        "--no-verify",
        action="store_true",
        help="skip the independent verification of the schedule (faster; the "
        "completion times are then the simulator's own)",
    )
    sim.add_argument(
        "--deadlines",
        type=float,
        metavar="X",
        help="exact model: first give every coflow a Varys deadline D = ρ(1 + U(0, X)), at "
        "least 200 ms for ms instances (for traces without deadlines)",
    )
    sim.add_argument("--seed", type=int, default=0, help="seed of --deadlines (default 0)")
    sim.add_argument("--list", action="store_true", help="list the policies and exit")
    sim.set_defaults(run=_simulate)

    demo = sub.add_parser("demo", help="generate built-in instances and summarize them")
    demo.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    demo.set_defaults(run=_demo)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the command line; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "ports", None) is None and args.command == "generate":
        args.ports = 150 if args.kind == "fb-like" else (1 if args.kind == "single-port" else 4)
    try:
        return int(args.run(args))
    except (CoflowlabError, ValueError, OSError) as exc:
        print(f"coflowlab: error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
