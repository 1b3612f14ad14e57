"""The ``coflowlab`` command line.

Subcommands:

``info FILE``
    Summary of an instance file (any format :func:`coflowlab.instances.read_instance` reads).
``generate KIND -o FILE``
    Writes a generated instance (uniform, fb-like, cos, single-port).
``simulate FILE --policy NAME``
    Replays an instance under an online policy (exact, or CoflowSim-compatible).
``solve FILE --method NAME``
    Runs an offline method (exact formulation, relaxation, bound) through an LP/MIP backend;
    ``solve --list`` lists the methods.
``demo``
    Generates a few built-in instances and prints their summaries (what ``make demo`` runs).

Errors exit with status 1 and one line on standard error, never a traceback; usage errors exit
with status 2 (argparse).
"""

from __future__ import annotations

import argparse
import inspect
import json
import math
import sys
import typing
from collections.abc import Sequence
from dataclasses import asdict
from importlib import import_module
from typing import Any

import numpy as np

from .exceptions import CoflowlabError, InvalidScheduleError

__all__ = [
    "SOLVE_REGISTRIES",
    "format_solution",
    "main",
    "schedule_from_dict",
    "schedule_to_dict",
    "solve_methods",
]

GENERATORS = ("uniform", "fb-like", "cos", "single-port")

SOLVE_REGISTRIES = ("coflowlab.formulations", "coflowlab.approximations")
"""Modules whose ``METHODS`` registries ``coflowlab solve`` merges, in listing order. An
entry needs ``kind``, ``model``, ``summary`` and ``function()`` (returning the method, called
as ``run(instance, *, solver, time_limit, mip_gap, threads, **params) -> Solution``)."""

SCHEDULE_FORMAT = "coflowlab-schedule"
"""The ``format`` tag of a schedule file written by ``coflowlab solve -o`` (version 1)."""


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


# ---------------------------------------------------------------------------- solve


def solve_methods() -> dict[str, Any]:
    """Every method ``coflowlab solve`` knows: the registries of :data:`SOLVE_REGISTRIES`,
    merged in order (a name registered twice is an error).

    Examples
    --------
    >>> solve_methods()["bound-smith"].kind.value
    'bound'
    """
    merged: dict[str, Any] = {}
    for module in SOLVE_REGISTRIES:
        for name, entry in import_module(module).METHODS.items():
            if name in merged:
                raise ValueError(f"method {name!r} is registered twice (in {module})")
            merged[name] = entry
    return merged


def schedule_to_dict(schedule: Any) -> dict[str, Any]:
    """A schedule as the JSON document ``coflowlab solve -o`` writes.

    Layout (version 1): ``{"format": "coflowlab-schedule", "version": 1, "model": "fluid"
    | "slotted", "num_flows": F, ...columns, "completion": [...] | null}`` where the
    columns are ``time``, ``flow``, ``rate`` for a :class:`~coflowlab.FluidSchedule`
    (from ``time[i]`` on, flow ``flow[i]`` sends at ``rate[i]``) and ``slot``, ``flow``,
    ``amount`` for a :class:`~coflowlab.SlottedSchedule`; ``completion`` holds the
    per-coflow completion times the schedule claims, if any (unfinished: ``null``). Flows
    are indices into the instance's flow arrays. Floats are written exactly (shortest repr).

    Examples
    --------
    >>> from coflowlab.schedules import FluidSchedule
    >>> doc = schedule_to_dict(FluidSchedule(2, time=[0, 1], flow=[0, 1], rate=[1.0, 0.5]))
    >>> doc["model"], doc["time"], doc["rate"]
    ('fluid', [0.0, 1.0], [1.0, 0.5])
    >>> schedule_from_dict(doc).num_records
    2
    """
    from .schedules import FluidSchedule, SlottedSchedule

    doc: dict[str, Any] = {"format": SCHEDULE_FORMAT, "version": 1}
    if isinstance(schedule, FluidSchedule):
        cols = {"time": schedule.time, "flow": schedule.flow, "rate": schedule.rate}
    elif isinstance(schedule, SlottedSchedule):
        cols = {"slot": schedule.slot, "flow": schedule.flow, "amount": schedule.amount}
    else:
        raise TypeError(f"not a schedule: {type(schedule).__name__}")
    doc["model"] = schedule.model.value
    doc["num_flows"] = schedule.num_flows
    doc.update({k: v.tolist() for k, v in cols.items()})
    claimed = schedule.completion
    doc["completion"] = None if claimed is None else [_finite(c) for c in claimed.tolist()]
    return doc


def schedule_from_dict(doc: dict[str, Any]) -> Any:
    """The schedule of a document written by :func:`schedule_to_dict`.

    Raises
    ------
    InvalidScheduleError
        The document is not a version-1 coflowlab schedule.
    """
    from .schedules import FluidSchedule, SlottedSchedule

    if not isinstance(doc, dict) or doc.get("format") != SCHEDULE_FORMAT:
        raise InvalidScheduleError(f"not a {SCHEDULE_FORMAT} document")
    if doc.get("version") != 1:
        raise InvalidScheduleError(f"unsupported schedule version {doc.get('version')!r}")
    claimed = doc.get("completion")
    if claimed is not None:
        claimed = [math.nan if c is None else c for c in claimed]
    try:
        if doc["model"] == "fluid":
            return FluidSchedule(
                doc["num_flows"], doc["time"], doc["flow"], doc["rate"], completion=claimed
            )
        if doc["model"] == "slotted":
            return SlottedSchedule(
                doc["num_flows"], doc["slot"], doc["flow"], doc["amount"], completion=claimed
            )
    except KeyError as exc:
        raise InvalidScheduleError(f"schedule document lacks {exc.args[0]!r}") from None
    raise InvalidScheduleError(f"unknown schedule model {doc.get('model')!r}")


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


def _json_value(x: Any) -> Any:
    """JSON has no nan or infinity: both become null (the status says why)."""
    if isinstance(x, float):
        return _finite(x)
    if isinstance(x, dict):
        return {k: _json_value(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_json_value(v) for v in x]
    if hasattr(x, "tolist"):  # numpy scalars and arrays in details
        return _json_value(x.tolist())
    return x


_SOLVER_ARGS = ("solver", "time_limit", "mip_gap", "threads", "log")


def _method_kwargs(name: str, func: Any, params: dict[str, str]) -> dict[str, Any]:
    """``--param`` values converted with the method's annotations where it declares the
    parameter, else read as bool (true/false), int, float or text."""
    try:
        signature = inspect.signature(func)
    except (TypeError, ValueError):
        signature = None
    declared = {} if signature is None else dict(signature.parameters)
    takes_any = signature is None or any(p.kind is p.VAR_KEYWORD for p in declared.values())
    try:
        hints = typing.get_type_hints(func)
    except Exception:  # unresolvable annotations: fall back to literals
        hints = {}
    out: dict[str, Any] = {}
    for key, text in params.items():
        if key in _SOLVER_ARGS or key == "instance":
            raise ValueError(f"--param {key}: use the option --{key.replace('_', '-')}")
        if key not in declared and not takes_any:
            takes = [k for k in declared if k not in (*_SOLVER_ARGS, "instance")]
            raise ValueError(
                f"method {name!r} has no parameter {key!r}; it takes: {', '.join(takes) or 'none'}"
            )
        out[key] = _param_value(key, text, hints.get(key))
    return out


def _param_value(key: str, text: str, annotation: Any) -> Any:
    lowered = text.lower()
    options = typing.get_args(annotation) if typing.get_origin(annotation) else ()
    if options:  # a union such as ``int | Generator``: convert to its first scalar type
        annotation = next((t for t in options if t in (bool, int, float)), annotation)
    if annotation is bool or (annotation is None and lowered in ("true", "false")):
        if lowered not in ("true", "false", "1", "0", "yes", "no"):
            raise ValueError(f"--param {key}: {text!r} is not true or false")
        return lowered in ("true", "1", "yes")
    for kind in (int, float):
        if annotation is kind or annotation is None:
            try:
                return kind(text)
            except ValueError:
                if annotation is kind:
                    what = "an integer" if kind is int else "a number"
                    raise ValueError(f"--param {key}: {text!r} is not {what}") from None
    return text


def _fmt(x: float | None) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return f"{x:.10g}"


def format_solution(solution: Any, entry: Any, name: str | None = None) -> str:
    """A :class:`~coflowlab.solution.Solution` as aligned text (``coflowlab solve``)."""
    head = f"{solution.method} ({solution.kind.value}, {entry.model.value} model)"
    if solution.solver:
        head += f", solver {solution.solver}"
    lines = [f"{name}: {head}" if name else head]
    if solution.is_lower_bound:
        what, note = "lower bound", "on the optimal Σ w_j C_j"
    elif solution.maximize:
        what, note = "objective", "(weighted) coflows meeting their deadlines, maximized"
    else:
        what, note = "objective", "Σ w_j C_j of the verified schedule"
    bound_note = "proven upper bound" if solution.maximize else "proven lower bound"
    if solution.bound_source:
        bound_note = f"certified lower bound: {solution.bound_source}"
    rows = [
        ("status", solution.status.value),
        (what, f"{_fmt(solution.objective)}  ({note})"),
        ("bound", f"{_fmt(solution.bound)}  ({bound_note})"),
        ("gap", _fmt(solution.gap)),
        ("runtime", f"{solution.runtime:.3f} s"),
    ]
    if solution.bound_source:
        rows.append(("ratio", f"{_fmt(solution.ratio)}  (objective / bound)"))
        g = solution.guarantee
        rows.append(("guarantee", "none claimed" if g is None else f"{g.statement} ({g.source})"))
    labels = solution.instance.coflow_label
    if solution.order is not None:
        rows.append(("order", ", ".join(labels[k] for k in solution.order)))
    if solution.report is not None:
        rows.append(("schedule", f"verified ({solution.report.model.value} model)"))
    if solution.message and not solution.status.has_solution:
        rows.append(("solver says", solution.message))
    width = max(len(r[0]) for r in rows)
    lines += [f"{key:<{width}}  {value}" for key, value in rows]
    completion = solution.completion_times
    if completion is not None:
        w = max(6, *(len(lab) for lab in labels))
        lines += ["", f"{'coflow':<{w}}  completion"]
        lines += [
            f"{lab:<{w}}  {_fmt(c)}" for lab, c in zip(labels, completion.tolist(), strict=True)
        ]
    return "\n".join(lines)


def _solve(args: argparse.Namespace) -> int:
    from .solution import SolutionKind

    methods = solve_methods()
    if args.list:
        width = max(len(n) for n in methods)
        for name, entry in methods.items():
            print(
                f"{name:<{width}}  {entry.kind.value:<13}  {entry.model.value:<7}  {entry.summary}"
            )
        return 0
    if args.file is None or args.method is None:
        raise ValueError("solve needs FILE and --method NAME (or --list)")
    entry = methods.get(args.method)
    if entry is None:
        raise ValueError(
            f"unknown method {args.method!r}; choose one of {', '.join(methods)} "
            "(coflowlab solve --list)"
        )
    if args.output and entry.kind in (SolutionKind.RELAXATION, SolutionKind.BOUND):
        raise ValueError(
            f"-o: method {args.method!r} gives a lower bound, not a schedule; choose a "
            "method that schedules (coflowlab solve --list)"
        )
    from .instances import atomic_write_text, read_instance
    from .solvers.api import require_solver

    require_solver(args.solver)
    try:
        run = entry.function()
    except ImportError as exc:
        raise ValueError(f"method {args.method!r} is not available: {exc}") from None
    kwargs = _method_kwargs(args.method, run, _parse_params(args.param))
    inst = read_instance(args.file, format=args.format)
    solution = run(
        inst,
        solver=args.solver,
        time_limit=args.time_limit,
        mip_gap=args.mip_gap,
        threads=args.threads,
        **kwargs,
    )
    if args.output and solution.schedule is not None:
        doc = schedule_to_dict(solution.schedule)
        atomic_write_text(args.output, json.dumps(doc) + "\n")
    if args.json:
        print(json.dumps(_json_value(solution.to_dict())))
    else:
        print(format_solution(solution, entry, name=str(args.file)))
    if args.output and solution.schedule is None:
        raise ValueError(
            f"no schedule to write to {args.output}: the solve ended with status "
            f"{solution.status.value}"
        )
    return 0


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not (value > 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"must be positive and finite, got {text}")
    return value


def _gap(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 <= value < 1:
        raise argparse.ArgumentTypeError(f"must be in [0, 1), got {text}")
    return value


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {text}")
    return value


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

    slv = sub.add_parser(
        "solve",
        help="run an offline method: exact optimum, LP relaxation or bound",
        description="Run an offline method (see --list) on an instance and print its status, "
        "objective (a lower bound for relaxations and bounds), proven bound, gap, runtime and "
        "the completion time of every coflow. Schedules are verified independently.",
    )
    slv.add_argument("file", nargs="?", help="instance file (any format read_instance knows)")
    slv.add_argument("--method", help="method name; see --list")
    slv.add_argument(
        "--solver",
        choices=("highs", "cbc", "gurobi"),
        default="highs",
        help="LP/MIP backend (default highs; gurobi needs gurobipy and a licence)",
    )
    slv.add_argument(
        "--time-limit",
        type=_positive_float,
        metavar="S",
        help="wall seconds for the solver (default none); a MIP stopped by it reports its "
        "best schedule, proven bound and gap",
    )
    slv.add_argument(
        "--mip-gap",
        type=_gap,
        default=1e-6,
        metavar="G",
        help="relative gap at which a MIP counts as solved (default 1e-6)",
    )
    slv.add_argument("--threads", type=_positive_int, metavar="N", help="solver threads")
    slv.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="method parameter, repeatable (e.g. --param algorithm=mip)",
    )
    slv.add_argument(
        "--format",
        choices=("json", "benchmark", "sincronia"),
        help="file format (default: detected)",
    )
    slv.add_argument("--json", action="store_true", help="print the result as one JSON object")
    slv.add_argument(
        "-o",
        "--output",
        metavar="SCHEDULE.json",
        help="write the verified schedule as JSON (see coflowlab.cli.schedule_to_dict)",
    )
    slv.add_argument("--list", action="store_true", help="list the methods and exit")
    slv.set_defaults(run=_solve)

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
