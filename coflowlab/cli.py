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
``verify INSTANCE SCHEDULE``
    Checks a schedule file (written by ``solve -o`` or another tool) against an instance with
    the independent verifier and prints its report.
``demo``
    Generates a few built-in instances and prints their summaries (what ``make demo`` runs).

Standard output carries only results (``--json``: exactly one JSON object); progress lines go
to standard error, and only when it is a terminal. Exit status: 0 done; 1 an error, printed as
one line on standard error, never a traceback; 2 a usage error (argparse); 3 a solve that
ended without a solution (time limit before any, infeasible, solver error) or a schedule that
fails verification; 130 interrupted (Ctrl-C), after printing what was found so far; 141
standard output closed early (``| head``), silently, as Unix tools do.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

import numpy as np

from ._sigint import InterruptGuard, caused_by_interrupt
from .exceptions import CoflowlabError, InvalidScheduleError
from .progress import Progress
from .provenance import file_sha256 as provenance_sha
from .provenance import provenance

__all__ = [
    "format_solution",
    "main",
    "schedule_from_dict",
    "schedule_to_dict",
    "solve_methods",
]

GENERATORS = ("uniform", "fb-like", "cos", "single-port")

FILE_FORMATS = ("json", "benchmark", "sincronia", "weighted-benchmark")
"""``instances.io.FORMATS``, spelled out so that ``--help`` does not import the generators."""

EXIT_NO_SOLUTION = 3
"""Exit status of a solve without a solution, or of a schedule that fails verification."""

EXIT_INTERRUPTED = 130
"""Exit status after Ctrl-C (128 + SIGINT), as shells report it."""

EXIT_BROKEN_PIPE = 141
"""Exit status when standard output is closed early (128 + SIGPIPE), as Unix tools end."""

SCHEDULE_FORMAT = "coflowlab-schedule"
"""The ``format`` tag of a schedule file written by ``coflowlab solve -o`` (version 1)."""


def input_path(name: str) -> str:
    """The file an instance argument names: the path itself when it exists, else a bare file
    name found in ``$COFLOWLAB_DATA`` or the other data folders of
    :func:`coflowlab.instances.benchmark.data_folders` (so ``coflowlab info
    FB2010-1Hr-150-0.txt`` finds the trace there).

    Raises
    ------
    FileNotFoundError
        Naming the file and the folders searched.
    """
    from .instances.benchmark import data_folders, find_data_file

    if os.path.exists(name) or os.path.dirname(name):
        return name
    found = find_data_file(name)
    if found is not None:
        return str(found)
    where = ", ".join(str(f) for f in data_folders())
    raise FileNotFoundError(
        f"{name}: no such file here, nor in the data folders ({where}; set COFLOWLAB_DATA "
        "to add one)"
    )


def _read_input(args: argparse.Namespace) -> Any:
    """The instance of ``args.file`` (resolved by :func:`input_path`), read with ``--format``
    and ``--ports``; sets ``args.file`` to the path actually read."""
    from .instances import read_instance

    args.file = input_path(args.file)
    kw: dict[str, Any] = {} if args.ports is None else {"num_ports": args.ports}
    if args.ignore_counts:
        if args.format not in (None, "sincronia"):
            raise ValueError("--ignore-counts is for Sincronia files (--format sincronia)")
        kw["check_counts"] = False
    return read_instance(args.file, format=args.format, **kw)


def _print_json(doc: dict[str, Any]) -> None:
    print(json.dumps(_json_value(doc)))


def _info(args: argparse.Namespace) -> int:
    from .summary import describe, summarize_instance

    inst = _read_input(args)
    if args.json:
        doc = asdict(summarize_instance(inst))
        doc["provenance"] = provenance("info", input_path=args.file)
        _print_json(doc)
    else:
        top = None if args.top == "all" else int(args.top)
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


def _seeds(text: str) -> list[int]:
    """``--seeds``: ``A:B`` (A to B−1), ``N`` or ``N,M,...``."""
    try:
        if ":" in text:
            lo, hi = (int(p) for p in text.split(":", 1))
            seeds = list(range(lo, hi))
        else:
            seeds = [int(p) for p in text.split(",") if p.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not A:B, N or N,M,...") from None
    if not seeds:
        raise argparse.ArgumentTypeError(f"{text!r} names no seed")
    return seeds


def _compare(args: argparse.Namespace) -> int:
    from .compare import (
        compare,
        generated_instances,
        instance_files,
        parse_algorithms,
        reference_algorithms,
    )
    from .reports import (
        attach_reference,
        format_gap_table,
        gap_table,
        gap_table_json,
        reference_description,
        write_comparison,
    )
    from .solvers.options import SolverOptions

    if bool(args.files) == bool(args.generate):
        raise ValueError("compare needs instance FILES or --generate KIND (not both)")
    if args.generate:
        instances = generated_instances(args.generate, _parse_params(args.param), args.seeds)
    else:
        if args.param:
            raise ValueError("--param sets generator parameters; it needs --generate")
        instances = instance_files([input_path(f) for f in args.files], file_format=args.format)
    algorithms = parse_algorithms(args.algorithms)
    algorithms += reference_algorithms(algorithms, args.reference)
    options = SolverOptions(solver=args.solver, time_limit=args.time_limit)
    total = len(instances) * len(algorithms)
    with Progress() as progress:

        def report(done: int, total: int) -> None:
            progress.update(f"compare: {done:,} of {total:,} tasks done", force=done == total)

        progress.update(f"compare: 0 of {total:,} tasks done", force=True)
        records = compare(instances, algorithms, options=options, jobs=args.jobs, progress=report)
    rated = attach_reference(records, args.reference)
    files = write_comparison(
        rated,
        args.output,
        title=f"coflowlab compare: {len(instances)} instances, {len(algorithms)} algorithms",
        command_line="coflowlab " + " ".join(args.argv),
        baseline=args.baseline,
    )
    if args.json:
        doc = json.loads(gap_table_json(rated))
        doc["output"] = str(args.output)
        doc["provenance"] = provenance(
            "compare",
            algorithm=",".join(a.label for a in algorithms),
            params=_parse_params(args.param),
            solver=args.solver,
        )
        _print_json(doc)
    else:
        print(format_gap_table(gap_table(rated)))
        print(reference_description(rated))
        print(
            f"\nwrote {files.results_csv.parent}/: results.csv, summary.csv, report.md, "
            f"report.html and {len(files.figures)} figure files"
        )
    return 0


DEMO_ALGORITHMS = (
    "exact-fluid,lp-ov,interval-lp,bound-release-rho,primal-dual,sincronia,lp-ov-ls,qsz,"
    "order-sebf,varys,aalo,fifo,fair,pfp"
)
"""What ``make demo`` compares: every family (exact, relaxations, a bound, approximations,
online policies), on instances small enough to solve to optimality in seconds."""


def _demo(args: argparse.Namespace) -> int:
    argv = [
        "compare",
        "--generate", "uniform",
        "--param", "ports=4",
        "--param", "coflows=8",
        "--param", "release_rate=0.3",
        "--seeds", f"{args.seed}:{args.seed + args.instances}",
        "--algorithms", DEMO_ALGORITHMS,
        "--reference", "opt",
        "--jobs", str(args.jobs),
        "-o", args.output,
    ]  # fmt: skip
    print(f"coflowlab {' '.join(argv)}\n")
    return main(argv)


def _parse_params(pairs: Sequence[str]) -> dict[str, str]:
    from .params import parse_assignments

    return parse_assignments(list(pairs))


def _simulate(args: argparse.Namespace) -> int:
    import time

    from .heuristics.registry import POLICIES

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
    from .runner import run
    from .simulation_report import simulation_csv, simulation_summary

    inst = _read_input(args)
    params: dict[str, Any] = _parse_params(args.param)
    started = time.perf_counter()
    name = args.policy
    if args.time_model == "coflowsim":
        from .heuristics.coflowsim import resolve_policy

        name = resolve_policy(args.policy)  # one-line ValueError listing the supported names
        if params:
            raise ValueError("--time-model coflowsim takes no --param (CoflowSim has none)")
        if args.deadlines is not None:
            raise ValueError(
                "--deadlines is for the exact model; CoflowSim draws its own (factor 1)"
            )
    elif args.deadlines is not None:
        from .instances import assign_deadlines

        inst = assign_deadlines(inst, args.deadlines, seed=args.seed)
    if name not in POLICIES:
        raise ValueError(f"unknown policy {name!r}; known: {', '.join(POLICIES)}")
    if "deadline" in name and args.time_model == "exact" and not inst.has_deadlines:
        print(
            f"coflowlab: warning: no coflow of {args.file} has a deadline, so {name} admits "
            "every coflow and behaves like its deadline-free variant; give them deadlines "
            "with --deadlines X",
            file=sys.stderr,
        )
    total = inst.num_coflows
    with Progress() as progress:

        def report(events: int, t: float) -> None:
            progress.update(
                f"{name} on {total:,} coflows: {events:,} events, "
                f"simulated time {t:,.6g} {inst.units.time}"
            )

        if args.time_model == "coflowsim":
            progress.update(f"{name}: replaying in the CoflowSim model", force=True)
        res = run(
            name,
            inst,
            time_model=args.time_model,
            # the CoflowSim model is always verified: its times are the verified schedule's
            verify=not args.no_verify,
            fairness=args.fairness,
            progress=report if progress.enabled else None,
            hide_labels=True if args.hide_labels else None,
            engine=args.engine,
            **params,
        )
    sim = res.raw
    sim_inst, completion = res.instance, res.completion
    meta: dict[str, Any] = {"verified": res.verified}
    if args.time_model == "coflowsim":
        meta |= {
            "met": np.isin(sim.labels, sim.met),  # CoflowSim's rule (overruns < 3%)
            "missing": len(sim.rejected),
            "events": sim.num_events,
            "rejected": len(sim.rejected),
            "engine": "coflowsim",  # CoflowSim's quanta (docs/coflowsim-model.md)
        }
    else:
        meta |= {"events": sim.num_events, "rejected": len(sim.rejected), "engine": sim.engine}
    meta["wall_time"] = round(time.perf_counter() - started, 3)
    assert completion is not None  # online runs always have completion times
    summary = simulation_summary(
        sim_inst, completion, policy=args.policy, time_model=args.time_model, **meta
    )
    if args.output:
        from .instances import atomic_write_text

        atomic_write_text(args.output, simulation_csv(sim_inst, completion))
    groups = getattr(res.policy, "groups", None)  # a policy that identifies coflows (CODA)
    if groups is not None:
        from .heuristics.coda_identify import identification_accuracy

        acc = identification_accuracy(inst, groups)
        summary["identification"] = {"precision": acc.precision, "recall": acc.recall}
    fairness = getattr(sim, "fairness", None)  # the exact model measures while it simulates
    if args.fairness and fairness is None:
        from .fairness import fairness_summary

        fairness = fairness_summary(sim_inst, sim.schedule)
    if args.json:
        if fairness is not None:
            summary["fairness"] = fairness
        summary["provenance"] = provenance(
            "simulate",
            input_path=args.file,
            algorithm=args.policy,
            params=params,
            seed=args.seed if args.deadlines is not None else None,
            time_model=args.time_model,
        )
        _print_json(summary)
    else:
        from .simulation_report import format_summary

        print(format_summary(summary, name=str(args.file)))
        if "identification" in summary:
            ident = summary["identification"]
            print(
                f"coflow identification: precision {ident['precision']:.3f}, recall "
                f"{ident['recall']:.3f} (labels hidden from the policy; CODA, SIGCOMM 2016, §6.1)"
            )
        if fairness is not None:
            from .fairness import format_fairness

            print("\nfairness (Chowdhury's thesis, Ch. 7: progress P_k of every coflow)")
            print(format_fairness(fairness))
    return 0


# ---------------------------------------------------------------------------- solve


def solve_methods() -> dict[str, Any]:
    """Every method ``coflowlab solve`` knows: the offline entries of
    :data:`coflowlab.registry.REGISTRY` (exact, relaxations, bounds, approximations), in
    listing order.

    Examples
    --------
    >>> solve_methods()["bound-smith"].family.value
    'bound'
    """
    from .registry import REGISTRY

    return {name: e for name, e in REGISTRY.items() if not e.online}


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


def _method_kwargs(name: str, func: Any, params: dict[str, str]) -> dict[str, Any]:
    """``--param`` values checked and converted against the method's signature
    (:func:`coflowlab.params.convert_params`); solver settings have options of their own."""
    from .params import convert_params
    from .registry import RESERVED

    for key in params:
        if key == "options":
            raise ValueError(
                "--param options: solver settings have options of their own (--solver, "
                "--time-limit, --mip-gap, --threads, --log)"
            )
        if key in RESERVED[1:]:
            raise ValueError(f"--param {key}: use the option --{key.replace('_', '-')}")
    return convert_params(func, params, owner=f"method {name!r}", reserved=RESERVED)


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
    methods = solve_methods()
    if args.list:
        width = max(len(n) for n in methods)
        for name, entry in methods.items():
            print(
                f"{name:<{width}}  {entry.family.value:<13}  {entry.model.value:<7}  "
                f"{entry.summary}"
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
    if args.output and entry.is_lower_bound:
        raise ValueError(
            f"-o: method {args.method!r} gives a lower bound, not a schedule; choose a "
            "method that schedules (coflowlab solve --list)"
        )
    from dataclasses import fields

    from .instances import atomic_write_text
    from .runner import run
    from .solvers import SolverOptions, interruptible
    from .solvers.api import require_solver

    try:
        takes_options = entry.takes_options()
    except ImportError as exc:
        raise ValueError(f"method {args.method!r} is not available: {exc}") from None
    options = SolverOptions(
        solver=args.solver,
        time_limit=args.time_limit,
        mip_gap=args.mip_gap,
        threads=args.threads,
        log=args.log,
    )
    if takes_options:
        require_solver(options.solver)
    else:
        # a setting the method would ignore is a mistake to point out, not to drop silently
        default = SolverOptions()
        given = [
            "--" + f.name.replace("_", "-")
            for f in fields(options)
            if getattr(options, f.name) != getattr(default, f.name)
        ]
        if given:
            verb = "does" if len(given) == 1 else "do"
            raise ValueError(
                f"method {args.method!r} solves no LP or MIP; {', '.join(given)} {verb} not apply"
            )
    raw_params = _parse_params(args.param)
    kwargs = _method_kwargs(args.method, entry.load(), raw_params)
    inst = _read_input(args)

    with Progress() as line:
        hook = (lambda report: line.update(report.line(), force=True)) if line.enabled else None
        # the first Ctrl-C stops the solver, which returns its incumbent and bound as
        # "interrupted"; a second one aborts (KeyboardInterrupt, exit 130 in main)
        with interruptible(
            hook, notice="coflowlab: interrupted: stopping the solver (Ctrl-C again to abort)"
        ) as control:
            try:
                result = run(args.method, inst, options if takes_options else None, **kwargs)
            except CoflowlabError:
                if control.interrupted:
                    raise KeyboardInterrupt from None
                raise
    solution = result.raw
    if args.output and solution.schedule is not None:
        doc = schedule_to_dict(solution.schedule)
        atomic_write_text(args.output, json.dumps(doc) + "\n")
    if args.json:
        doc = solution.to_dict()
        doc["provenance"] = provenance(
            "solve",
            input_path=args.file,
            algorithm=args.method,
            params=raw_params,
            seed=result.params.get("seed"),
            solver=args.solver if solution.solver else None,
        )
        _print_json(doc)
    else:
        print(format_solution(solution, entry, name=str(args.file)))
    if control.interrupted:
        return EXIT_INTERRUPTED
    if not solution.status.has_solution:
        why = f" ({solution.message})" if solution.message else ""
        unwritten = f", so no schedule to write to {args.output}" if args.output else ""
        print(
            f"coflowlab: error: {args.method} ended with status {solution.status.value} and "
            f"no solution{why}{unwritten}",
            file=sys.stderr,
        )
        return EXIT_NO_SOLUTION
    if args.output and solution.schedule is None:
        raise ValueError(
            f"no schedule to write to {args.output}: the solve ended with status "
            f"{solution.status.value}"
        )
    return 0


def read_schedule(path: str) -> Any:
    """The schedule in a JSON file written by ``coflowlab solve -o`` (see
    :func:`schedule_to_dict`).

    Raises
    ------
    InvalidScheduleError
        Naming the file when it is not JSON or not a version-1 coflowlab schedule.
    """
    try:
        with open(path, encoding="utf-8") as fh:
            doc = json.load(fh)
    except json.JSONDecodeError as exc:
        raise InvalidScheduleError(
            f"{path}: line {exc.lineno}, column {exc.colno}: not JSON ({exc.msg})"
        ) from None
    except UnicodeDecodeError:
        raise InvalidScheduleError(f"{path}: not UTF-8 text") from None
    try:
        return schedule_from_dict(doc)
    except (InvalidScheduleError, ValueError, TypeError) as exc:
        raise InvalidScheduleError(f"{path}: {exc}") from None


def _verify(args: argparse.Namespace) -> int:
    from .verifier import verify

    inst = _read_input(args)
    schedule = read_schedule(args.schedule)
    if schedule.num_flows != inst.num_flows:
        raise InvalidScheduleError(
            f"{args.schedule}: field num_flows: the schedule has {schedule.num_flows} flows, "
            f"the instance {args.file} has {inst.num_flows}"
        )
    report = verify(inst, schedule, max_violations=args.max_violations)
    finished = bool(np.all(np.isfinite(report.coflow_completion)))
    objective = report.weighted_completion_time if finished else None
    if args.json:
        _print_json(
            {
                "feasible": report.feasible,
                "model": report.model.value,
                "violations": dict(report.counts),
                "messages": [v.message for v in report.violations],
                "objective": objective,
                "completion": report.coflow_completion.tolist(),
                "time_tol": report.time_tol,
                "provenance": {
                    **provenance("verify", input_path=args.file),
                    "schedule": {
                        "path": args.schedule,
                        "sha256": provenance_sha(args.schedule),
                    },
                },
            }
        )
    else:
        print(f"{args.schedule} on {args.file}: {report.summary(limit=args.max_violations)}")
        print(f"objective  {_fmt(objective)}  (Σ w_j C_j from the verifier)")
        labels = inst.coflow_label
        w = max(6, *(len(lab) for lab in labels))
        print(f"\n{'coflow':<{w}}  completion")
        for lab, c in zip(labels, report.coflow_completion.tolist(), strict=True):
            print(f"{lab:<{w}}  {_fmt(c)}")
    return 0 if report.feasible else EXIT_NO_SOLUTION


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


def _nonnegative_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not (value >= 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"must be finite and at least 0, got {text}")
    return value


def _top(text: str) -> str:
    if text != "all":
        _positive_int(text)
    return text


def _add_input(sub: argparse.ArgumentParser, help: str, *, optional: bool = False) -> None:
    """The options of every command that reads an instance file (``optional``: the command
    also runs without one, as ``--list``)."""
    sub.add_argument(
        "file",
        nargs="?" if optional else None,
        help=help + "; a bare name is also looked for in $COFLOWLAB_DATA",
    )
    sub.add_argument(
        "--format",
        choices=FILE_FORMATS,
        help="file format (default: detected from the content)",
    )
    sub.add_argument(
        "--ports",
        type=_positive_int,
        metavar="N",
        help="number of ports, for a trace file without a header line (default: the header)",
    )
    sub.add_argument(
        "--ignore-counts",
        action="store_true",
        help="Sincronia files: read a coflow line whose flow count disagrees with its flows",
    )


def _add_param(sub: argparse.ArgumentParser, help: str) -> None:
    """The repeatable ``--param KEY=VALUE`` option (policy, method or generator parameters)."""
    sub.add_argument("--param", action="append", default=[], metavar="KEY=VALUE", help=help)


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
    from . import __version__

    parser = argparse.ArgumentParser(
        prog="coflowlab",
        description="Coflow scheduling toolkit: instances, exact optima, bounds, "
        "approximations and an exact event-driven simulator.",
    )
    parser.add_argument("--version", action="version", version=f"coflowlab {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    info = sub.add_parser(
        "info",
        help="summarize an instance file",
        description="Print counts, bytes, the Varys bin table and port loads.",
    )
    _add_input(info, "instance file: coflowlab JSON, coflow-benchmark or Sincronia")
    info.add_argument(
        "--top",
        type=_top,
        default="10",
        metavar="N",
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
        choices=FILE_FORMATS,
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
        type=_nonnegative_float,
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
    _add_input(sim, "instance file (coflowlab JSON, coflow-benchmark or Sincronia)", optional=True)
    sim.add_argument("--policy", help="policy name; see --list")
    _add_param(sim, "policy parameter, repeatable (e.g. --param starvation=false)")
    sim.add_argument(
        "--time-model",
        choices=("exact", "coflowsim"),
        default="exact",
        help="exact fluid model (default) or CoflowSim's 8 ms quanta and epochs",
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
        type=_nonnegative_float,
        metavar="X",
        help="exact model: first give every coflow a Varys deadline D = ρ(1 + U(0, X)), at "
        "least 200 ms for ms instances (for traces without deadlines)",
    )
    sim.add_argument("--seed", type=int, default=0, help="seed of --deadlines (default 0)")
    sim.add_argument(
        "--hide-labels",
        action="store_true",
        help="hide which coflow each flow belongs to from the policy (it sees flows only; the "
        "metrics use the true coflows); coda always runs this way",
    )
    sim.add_argument(
        "--fairness",
        action="store_true",
        help="also print the fairness metrics of the schedule: isolation guarantee, progress, "
        "Jain index, link utilization (any policy; the exact model measures them as it "
        "simulates, in memory of the instance's size; the CoflowSim model keeps its schedule)",
    )
    sim.add_argument(
        "--engine",
        choices=("auto", "flows", "classes"),
        default="auto",
        help="exact model: the per-flow event loop (flows), the policy's compiled engine on rate "
        "classes where it has one (classes: fair), or classes when possible (auto, default); "
        "docs/rate-classes.md",
    )
    sim.add_argument("--list", action="store_true", help="list the policies and exit")
    sim.set_defaults(run=_simulate)

    slv = sub.add_parser(
        "solve",
        help="run an offline method: exact optimum, LP relaxation or bound",
        description="Run an offline method (see --list) on an instance and print its status, "
        "objective (a lower bound for relaxations and bounds), proven bound, gap, runtime and "
        "the completion time of every coflow. Schedules are verified independently.",
    )
    _add_input(slv, "instance file (coflowlab JSON, coflow-benchmark or Sincronia)", optional=True)
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
        "--log",
        action="store_true",
        help="show the solver's log, on standard error (default: the solver is silent)",
    )
    _add_param(slv, "method parameter, repeatable (e.g. --param algorithm=mip)")
    slv.add_argument("--json", action="store_true", help="print the result as one JSON object")
    slv.add_argument(
        "-o",
        "--output",
        metavar="SCHEDULE.json",
        help="write the verified schedule as JSON (see coflowlab.cli.schedule_to_dict)",
    )
    slv.add_argument("--list", action="store_true", help="list the methods and exit")
    slv.set_defaults(run=_solve)

    ver = sub.add_parser(
        "verify",
        help="check a schedule file against an instance",
        description="Check a schedule (written by 'coflowlab solve -o', or by another tool in "
        "the same JSON format) against an instance with the independent verifier: port "
        "capacities, bytes per flow, release times, dependencies and the completion times it "
        "claims. Prints the report, Σ w_j C_j and every coflow's completion time; exits 3 when "
        "the schedule is infeasible.",
    )
    _add_input(ver, "instance file (coflowlab JSON, coflow-benchmark or Sincronia)")
    ver.add_argument("schedule", help="schedule file (coflowlab-schedule JSON)")
    ver.add_argument(
        "--max-violations",
        type=_positive_int,
        default=10,
        metavar="N",
        help="violations of each kind to list (default 10; all are counted)",
    )
    ver.add_argument("--json", action="store_true", help="print the report as one JSON object")
    ver.set_defaults(run=_verify)

    cmp = sub.add_parser(
        "compare",
        help="run many algorithms on many instances: gap tables and a report",
        description="Run algorithms (registry names, name:key=value,..., or the families "
        "exact, relaxation, bound, approximation, online, all) on instance files or generated "
        "instances, measure each against a reference per instance, and write results.csv, "
        "summary.csv, report.md, report.html and figures/ to OUTDIR. Prints the gap table.",
    )
    cmp.add_argument("files", nargs="*", metavar="FILE", help="instance files (globs allowed)")
    cmp.add_argument(
        "--generate",
        metavar="KIND",
        help="generate the instances instead: uniform, fb-like, cos or single-port",
    )
    _add_param(cmp, "generator parameter, repeatable (ports=4, coflows=8, density=0.5, ...)")
    cmp.add_argument(
        "--seeds",
        type=_seeds,
        default=[0],
        metavar="A:B",
        help="generator seeds: A:B (A to B-1), N or N,M,... (default 0)",
    )
    cmp.add_argument(
        "--algorithms",
        required=True,
        metavar="NAMES",
        help="comma-separated names or families, each optionally name:key=value,...",
    )
    cmp.add_argument(
        "--reference",
        default="opt",
        metavar="opt|bound|NAME",
        help="what ratios are measured against: the proven optimum (default; its best bound, "
        "labelled, where not proven), the best lower bound run, or a named algorithm",
    )
    cmp.add_argument(
        "--baseline",
        metavar="NAME",
        help="algorithm the per-bin CCT figure is normalized by (default: varys if run)",
    )
    cmp.add_argument("--jobs", type=_positive_int, default=1, metavar="N", help="processes")
    cmp.add_argument(
        "--time-limit",
        type=_positive_float,
        metavar="S",
        help="wall seconds for each LP/MIP solve (default none)",
    )
    cmp.add_argument(
        "--solver", choices=("highs", "cbc", "gurobi"), default="highs", help="LP/MIP backend"
    )
    cmp.add_argument(
        "--format",
        choices=FILE_FORMATS,
        help="format of the instance files (default: detected from the content)",
    )
    cmp.add_argument("-o", "--output", required=True, metavar="OUTDIR", help="output folder")
    cmp.add_argument("--json", action="store_true", help="print the gap table as one JSON object")
    cmp.set_defaults(run=_compare)

    demo = sub.add_parser(
        "demo",
        help="the main job on built-in generated instances (what make demo runs)",
        description="Run 'coflowlab compare' on small generated instances (4 ports, 8 coflows, "
        "releases) with every family: the exact optimum, relaxations, a bound, approximations "
        "and online policies; print the gap table and write the report.",
    )
    demo.add_argument("--seed", type=int, default=0, help="first seed (default 0)")
    demo.add_argument(
        "--instances", type=_positive_int, default=12, help="how many instances (default 12)"
    )
    demo.add_argument("--jobs", type=_positive_int, default=2, help="processes (default 2)")
    demo.add_argument(
        "-o", "--output", default="demo-report", help="output folder (default demo-report)"
    )
    demo.set_defaults(run=_demo)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the command line; returns the exit status.

    The command runs inside :class:`coflowlab._sigint.InterruptGuard`: Ctrl-C raises
    KeyboardInterrupt, and raises it again if it was dropped on the way here (numba's first
    compilation runs ctypes callbacks, which swallow it); the guard's handler and hook are
    removed before this returns.
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    if getattr(args, "ports", None) is None and args.command == "generate":
        args.ports = 150 if args.kind == "fb-like" else (1 if args.kind == "single-port" else 4)
    guard = InterruptGuard()
    try:
        with guard:
            code = int(args.run(args))
            sys.stdout.flush()  # a closed pipe shows here, not in the flush at exit
        return code
    except KeyboardInterrupt:
        return _interrupted()
    except BrokenPipeError:
        _drop_stdout()
        return EXIT_BROKEN_PIPE
    except Exception as exc:
        # a failure after Ctrl-C is the interrupt's doing: numba raises SystemError caused by
        # the KeyboardInterrupt when it lands while a kernel's constants load, and
        # RuntimeError "no compiled object yet" when llvmlite's object-cache callback dropped it
        if guard.interrupted or caused_by_interrupt(exc):
            return _interrupted()
        if not isinstance(exc, (CoflowlabError, ValueError, OSError)):
            raise
        print(f"coflowlab: error: {exc}", file=sys.stderr)
        return 1


def _interrupted() -> int:
    """Reports a Ctrl-C: one line on standard error; returns the exit status."""
    print("coflowlab: interrupted", file=sys.stderr)
    return EXIT_INTERRUPTED


def _drop_stdout() -> None:
    """Points standard output at /dev/null after its reader went away, so that the flush at
    exit does not fail a second time."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # no file descriptor (captured in tests)
        pass


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
