"""The main job: run many algorithms on many instances and measure each against a reference.

:func:`compare` takes instances (files, or a generator with its parameters and a range of
seeds) and algorithm specifications (``name`` or ``name:key=value,...``, or a family selector),
runs every task through the one runner (:func:`coflowlab.run`), optionally in parallel
processes, and returns one :class:`~coflowlab.reports.TaskRecord` per instance × algorithm,
failures included. The reports layer (:mod:`coflowlab.reports`) rates them against the
reference and writes the tables, figures and report; ``coflowlab compare`` is the command.

Results do not depend on the number of processes: every task is a pure function of its
instance, algorithm and solver options, and the records come back in task order.
"""

from __future__ import annotations

import glob
import math
import os
import time
import traceback
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .instance import Instance
from .params import convert_params, parse_spec
from .registry import REGISTRY, Family, get_entry, select
from .solvers.options import SolverOptions

__all__ = [
    "GENERATORS",
    "AlgorithmSpec",
    "InstanceSpec",
    "compare",
    "generated_instances",
    "instance_files",
    "parse_algorithms",
    "reference_algorithms",
]


@dataclass(frozen=True)
class Generator:
    """A generator of :mod:`coflowlab.instances` with the short parameter names of the CLI."""

    function: str
    aliases: dict[str, str] = field(default_factory=dict)

    def load(self) -> Callable[..., Instance]:
        from . import instances

        return getattr(instances, self.function)  # type: ignore[no-any-return,unused-ignore]


GENERATORS: dict[str, Generator] = {
    "uniform": Generator("uniform", {"ports": "num_ports", "coflows": "num_coflows"}),
    "fb-like": Generator("fb_like", {"ports": "num_ports", "coflows": "num_coflows"}),
    "cos": Generator("concurrent_open_shop", {"ports": "num_machines", "coflows": "num_jobs"}),
    "single-port": Generator("single_port", {"coflows": "num_jobs"}),
}
"""The generators by CLI name (``--generate KIND``), with ``ports``/``coflows`` as short names
of their size parameters."""


@dataclass(frozen=True)
class InstanceSpec:
    """Where one instance comes from: a file, or a generator with parameters and a seed."""

    name: str
    seed: int | None
    path: str | None = None
    generator: str | None = None
    params: tuple[tuple[str, Any], ...] = ()
    file_format: str | None = None

    def load(self) -> Instance:
        """The instance (read or generated; the same on every machine)."""
        if self.path is not None:
            from .instances import read_instance

            return read_instance(self.path, format=self.file_format)
        gen = GENERATORS[self.generator or ""].load()
        return gen(**dict(self.params), seed=self.seed)


def instance_files(
    patterns: Sequence[str], *, file_format: str | None = None
) -> list[InstanceSpec]:
    """One spec per file matching the patterns (globs allowed), in the order given, each glob
    sorted; a pattern that matches nothing is an error naming it."""
    specs: list[InstanceSpec] = []
    for pattern in patterns:
        matches = sorted(glob.glob(pattern)) if glob.has_magic(pattern) else [pattern]
        if not matches or not all(os.path.exists(m) for m in matches):
            raise FileNotFoundError(f"{pattern}: no such file")
        specs += [
            InstanceSpec(os.path.basename(m), None, path=m, file_format=file_format)
            for m in matches
        ]
    return specs


def generated_instances(
    kind: str, params: dict[str, Any], seeds: Iterable[int]
) -> list[InstanceSpec]:
    """One spec per seed of generator ``kind`` (:data:`GENERATORS`); ``params`` as text or
    typed values, with the short names ``ports`` and ``coflows``.

    Examples
    --------
    >>> specs = generated_instances("uniform", {"ports": "3", "coflows": "4"}, range(2))
    >>> [s.name for s in specs]
    ['uniform ports=3 coflows=4 seed=0', 'uniform ports=3 coflows=4 seed=1']
    >>> specs[1].load().num_coflows
    4
    """
    if kind not in GENERATORS:
        raise ValueError(
            f"--generate: unknown generator {kind!r}; choose from {', '.join(GENERATORS)}"
        )
    gen = GENERATORS[kind]
    renamed = {gen.aliases.get(k, k): v for k, v in params.items()}
    typed = convert_params(gen.load(), renamed, owner=f"generator {kind!r}", reserved=("seed",))
    label = " ".join(f"{k}={v}" for k, v in params.items())
    return [
        InstanceSpec(
            f"{kind} {label} seed={s}".replace("  ", " "),
            int(s),
            generator=kind,
            params=tuple(sorted(typed.items())),
        )
        for s in seeds
    ]


@dataclass(frozen=True)
class AlgorithmSpec:
    """One algorithm to run: its registry name, its parameters and its full spelling (the
    label of its rows)."""

    label: str
    name: str
    params: tuple[tuple[str, str], ...] = ()


def parse_algorithms(text: str) -> list[AlgorithmSpec]:
    """The algorithms of ``--algorithms``: comma-separated names or family selectors
    (``exact``, ``relaxation``, ``bound``, ``approximation``, ``online``, ``all``), each name
    optionally followed by ``:key=value``; further ``key=value`` items after a comma belong to
    the algorithm before them.

    Examples
    --------
    >>> [a.label for a in parse_algorithms("lp-ov,varys:starvation=false,T=1000,fair")]
    ['lp-ov', 'varys:starvation=false,T=1000', 'fair']
    >>> [a.name for a in parse_algorithms("bound")]
    ['bound-release-rho', 'bound-smith']
    """
    groups: list[list[str]] = []
    for token in (t.strip() for t in text.split(",")):
        if not token:
            continue
        if "=" in token and ":" not in token:
            if not groups:
                raise ValueError(f"--algorithms: {token!r} follows no algorithm")
            groups[-1].append(token)
        else:
            groups.append([token])
    specs: list[AlgorithmSpec] = []
    for group in groups:
        label = ",".join(group)
        name, params = parse_spec(label)
        if params:
            get_entry(name)
            specs.append(AlgorithmSpec(label, name, tuple(params.items())))
        else:
            specs += [AlgorithmSpec(n, n) for n in select(name)]
    unique: list[AlgorithmSpec] = []
    for spec in specs:  # each label once, where it first appears
        if spec.label not in {u.label for u in unique}:
            unique.append(spec)
    if not unique:
        raise ValueError("--algorithms: no algorithm given")
    return unique


def reference_algorithms(
    algorithms: Sequence[AlgorithmSpec], reference: str
) -> list[AlgorithmSpec]:
    """The algorithms the reference needs that are not already listed: ``opt`` needs
    ``exact-fluid`` when any algorithm is fluid (online policies are), else ``exact-slotted``
    (the smallest proven optimum is the reference); ``bound`` needs at
    least one lower bound (``bound-release-rho`` if none is listed); a named algorithm needs
    itself."""
    labels = {a.label for a in algorithms}
    needed: list[str] = []
    if reference == "opt":
        # the smallest proven optimum is the reference (a slotted schedule is also a fluid
        # one), so the fluid optimum serves every algorithm when any of them is fluid
        models = {
            REGISTRY[a.name].model.value for a in algorithms if not REGISTRY[a.name].maximize
        }
        needed = ["exact-fluid"] if "fluid" in models else ["exact-slotted"] * bool(models)
    elif reference == "bound":
        if not any(REGISTRY[a.name].is_lower_bound for a in algorithms):
            needed = ["bound-release-rho"]
    else:
        get_entry(parse_spec(reference)[0])
        needed = [reference]
    return [spec for n in needed if n not in labels for spec in parse_algorithms(n)]


def _run_task(task: tuple[InstanceSpec, AlgorithmSpec, SolverOptions | None]) -> Any:
    """One task, in a worker process or in this one: never raises; a failure is a record."""
    from .reports import TaskRecord
    from .runner import run

    spec, algo, options = task
    entry = REGISTRY[algo.name]
    started = time.perf_counter()
    base = dict(
        instance=spec.name,
        seed=spec.seed,
        algorithm=algo.label,
        family=entry.family.value,
        time_model="exact" if entry.online else entry.model.value,
    )

    def failed(exc: Exception, **size: Any) -> TaskRecord:
        last = traceback.extract_tb(exc.__traceback__)[-1]
        where = f"{os.path.basename(last.filename)}:{last.lineno}"
        return TaskRecord(
            **base,
            **size,
            status="error",
            objective=None,
            avg_cct=None,
            runtime=time.perf_counter() - started,
            verified=None,
            message=f"{type(exc).__name__}: {exc} ({where})",
        )

    try:
        inst = spec.load()
    except Exception as exc:  # the instance itself failed: one error row per task
        return failed(exc)
    size = dict(num_coflows=inst.num_coflows, num_flows=inst.num_flows, time_unit=inst.units.time)
    try:
        params: dict[str, Any] = dict(algo.params)
        res = run(algo.name, inst, options if entry.takes_options() else None, **params)
    except Exception as exc:  # a failed task is a row with its message, never dropped
        return failed(exc, **size)
    schedule = res.completion is not None and bool(np.all(np.isfinite(res.completion)))
    per_coflow: dict[str, Any] = {}
    if schedule:
        from .metrics import varys_bins

        per_coflow = dict(
            release=res.instance.coflow_release,
            completion=res.completion,
            weight=res.instance.coflow_weight,
            bin=tuple(
                varys_bins(
                    res.instance, short=None if res.instance.units.mb_per_size_unit() else 5.0
                )
            ),
        )
    return TaskRecord(
        **base,
        **size,
        status=res.status,
        objective=_finite(res.objective),
        avg_cct=_finite(res.average_cct),
        runtime=res.runtime,
        verified=res.verified,
        message=res.message,
        bound=_finite(res.bound) if entry.family is Family.EXACT else None,
        **per_coflow,
    )


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


def compare(
    instances: Sequence[InstanceSpec],
    algorithms: Sequence[AlgorithmSpec],
    *,
    options: SolverOptions | None = None,
    jobs: int = 1,
    progress: Callable[[int, int], None] | None = None,
) -> list[Any]:
    """Runs every algorithm on every instance; one :class:`~coflowlab.reports.TaskRecord`
    per pair, in instance-major order, whatever ``jobs`` is.

    Parameters
    ----------
    instances, algorithms
        From :func:`instance_files` / :func:`generated_instances` and
        :func:`parse_algorithms` (add :func:`reference_algorithms` for the reference).
    options
        Solver settings for the methods that solve an LP or MIP (``time_limit`` bounds each).
    jobs
        Worker processes (1: run here).
    progress
        Called as ``progress(done, total)`` after each task.

    Examples
    --------
    >>> insts = generated_instances("uniform", {"ports": "2", "coflows": "3"}, range(2))
    >>> recs = compare(insts, parse_algorithms("bound-smith,order-smith"))
    >>> [(r.algorithm, r.status) for r in recs][:2]
    [('bound-smith', 'optimal'), ('order-smith', 'feasible')]
    """
    tasks = [(i, a, options) for i in instances for a in algorithms]
    total = len(tasks)
    if jobs <= 1:
        out = []
        for k, task in enumerate(tasks, 1):
            out.append(_run_task(task))
            if progress:
                progress(k, total)
        return out
    results: list[Any] = [None] * total
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        futures = {pool.submit(_run_task, t): k for k, t in enumerate(tasks)}
        from concurrent.futures import as_completed

        for done, fut in enumerate(as_completed(futures), 1):
            results[futures[fut]] = fut.result()
            if progress:
                progress(done, total)
    return results
