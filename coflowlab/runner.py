"""The one runner: any registered algorithm on any instance, one result type for every family.

:func:`run` looks the name up in :data:`coflowlab.registry.REGISTRY`, converts text parameters
with :func:`coflowlab.params.convert`, runs the method (offline families through their LP/MIP
or combinatorial code, online policies through the exact event-driven simulator on the
instance's release dates) and returns a :class:`RunResult` whose values all come from the
independent verifier's report of the schedule, so Σ w_j C_j is comparable across families: an
online policy's value is measured against the same offline optimum as an approximation's.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from .instance import Instance
from .registry import AlgorithmEntry, Family, get_entry
from .solvers.options import SolverOptions
from .verifier import VerificationReport

__all__ = ["RunResult", "run"]


@dataclass(frozen=True, eq=False)
class RunResult:
    """The outcome of one algorithm on one instance.

    Attributes
    ----------
    algorithm
        The registry name.
    params
        The parameters it ran with (typed).
    family, time_model
        From its registry entry (``time_model``: ``fluid`` or ``slotted`` for offline
        methods; ``exact`` or ``coflowsim`` for online policies).
    status
        ``optimal``, ``feasible``, ``time_limit``, ``time_limit_no_solution``, ``infeasible``,
        ``interrupted``, ``error`` (offline: the solver's status); online: ``feasible`` when
        every coflow finished, ``incomplete`` when some were rejected.
    objective
        Σ w_j C_j of the verified schedule (deadline methods: what they maximize); for
        relaxations and bounds, the bound's value. ``nan`` without one.
    bound, bound_source
        The proven (exact) or certified (approximation) lower bound, and which bound it is.
    runtime
        Wall seconds, reading and verification included.
    completion
        Per-coflow completion times from the verifier (``None`` without a schedule; ``nan``
        for a rejected coflow).
    report
        The verifier's report (``None`` without a schedule).
    proven_optimal
        Exact methods: whether the solver proved the objective optimal.
    message
        The solver's or the policy's remark (rejections, limits).
    raw
        The family's own result (:class:`coflowlab.solution.Solution` or
        :class:`coflowlab.SimulationResult`), for what this summary leaves out.
    policy
        Online policies in the exact model: the policy object after the run (what it learnt,
        e.g. CODA's identified groups).
    """

    algorithm: str
    params: dict[str, Any]
    family: Family
    time_model: str
    status: str
    objective: float
    bound: float
    bound_source: str | None
    runtime: float
    instance: Instance
    completion: npt.NDArray[np.float64] | None
    report: VerificationReport | None
    proven_optimal: bool = False
    maximize: bool = False
    message: str = ""
    raw: Any = field(default=None, repr=False)
    policy: Any = field(default=None, repr=False)

    @property
    def is_lower_bound(self) -> bool:
        """Whether ``objective`` is a lower bound (relaxations and bounds)."""
        return self.family in (Family.RELAXATION, Family.BOUND)

    @property
    def verified(self) -> bool | None:
        """Whether the verifier found the schedule feasible (``None`` without a schedule)."""
        return None if self.report is None else self.report.feasible

    @property
    def average_cct(self) -> float:
        """Average CCT (completion minus release) over the finished coflows; ``nan`` without
        completion times."""
        if self.completion is None:
            return math.nan
        cct = self.completion - self.instance.coflow_release
        done = np.isfinite(cct)
        return float(cct[done].mean()) if done.any() else math.nan


def run(
    name: str,
    instance: Instance,
    options: SolverOptions | None = None,
    /,
    *,
    time_model: str | None = None,
    verify: bool = True,
    record: bool = False,
    progress: Callable[[int, float], None] | None = None,
    hide_labels: bool | None = None,
    fairness: bool = False,
    engine: str = "auto",
    **params: Any,
) -> RunResult:
    """Runs the registered algorithm ``name`` on ``instance``.

    Parameters
    ----------
    name
        A name of :data:`coflowlab.registry.REGISTRY`.
    instance
        The instance.
    options
        Solver settings, for methods that solve an LP or MIP (default :class:`SolverOptions`
        with HiGHS); refused for methods that solve nothing.
    time_model
        Online policies only: ``"exact"`` (the default: the exact event-driven fluid
        simulator) or ``"coflowsim"`` (CoflowSim's 8 ms quanta; its completion times are on
        its MiB-rounded copy of the instance).
    verify
        Online policies, exact model: verify the schedule (default). Offline methods and the
        CoflowSim model always verify.
    record
        Online policies: keep the simulated schedule in ``raw.schedule`` (offline methods
        always keep theirs).
    progress
        Online policies, exact model: called as ``progress(events, time)`` at every event
        (see :func:`coflowlab.simulate`).
    hide_labels
        Online policies, exact model: hide which coflow each flow belongs to from the policy
        (the metrics still use the true coflows); default: the policy's own ``label_blind``.
    fairness
        Online policies: measure the fairness metrics (:mod:`coflowlab.fairness`). The exact
        model measures them while it simulates (``raw.fairness``); the CoflowSim model keeps
        its schedule (``raw.schedule``) for :func:`coflowlab.fairness.fairness_summary`.
    engine
        Online policies, exact model: ``"auto"``, ``"flows"`` or ``"classes"``, the event loop
        :func:`coflowlab.simulate` uses (per-flow records, or the policy's compiled engine on
        rate classes where it has one).
    **params
        The algorithm's parameters, typed or as text.

    Examples
    --------
    >>> from coflowlab.instances.examples import fig_3_2
    >>> r = run("varys", fig_3_2())
    >>> r.family.value, r.status, round(r.objective, 9), r.verified
    ('online', 'feasible', 4.0, True)
    >>> run("bound-release-rho", fig_3_2()).objective
    4.0
    """
    entry = get_entry(name)
    started = time.perf_counter()
    if entry.online:
        how = _Online(
            time_model or "exact", verify, record, progress, hide_labels, fairness, engine
        )
        return _run_online(entry, instance, how, params, started)
    if time_model is not None:
        raise ValueError(f"{name}: time_model is for online policies; {name} is offline")
    return _run_offline(entry, instance, options, params, started)


def _run_offline(
    entry: AlgorithmEntry,
    instance: Instance,
    options: SolverOptions | None,
    params: dict[str, Any],
    started: float,
) -> RunResult:
    from .params import convert_params
    from .registry import RESERVED

    func = entry.load()
    kwargs = convert_params(func, params, owner=f"method {entry.name!r}", reserved=RESERVED)
    if entry.takes_options():
        kwargs["options"] = options or SolverOptions()
    elif options is not None:
        raise ValueError(f"method {entry.name!r} solves no LP or MIP; it takes no options")
    solution = func(instance, **kwargs)
    return RunResult(
        algorithm=entry.name,
        params=_without_options(kwargs),
        family=entry.family,
        time_model=entry.model.value,
        status=solution.status.value,
        objective=float(solution.objective),
        bound=float(solution.bound),
        bound_source=solution.bound_source,
        runtime=time.perf_counter() - started,
        instance=instance,
        completion=solution.completion_times,
        report=solution.report,
        proven_optimal=entry.family is Family.EXACT and solution.status.value == "optimal",
        maximize=entry.maximize,
        message=solution.message,
        raw=solution,
    )


def _without_options(kwargs: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in kwargs.items() if k != "options"}


@dataclass(frozen=True)
class _Online:
    """How to replay an online policy (the online-only arguments of :func:`run`)."""

    time_model: str
    verify: bool
    record: bool
    progress: Callable[[int, float], None] | None
    hide_labels: bool | None
    fairness: bool = False
    engine: str = "auto"


def _run_online(
    entry: AlgorithmEntry, instance: Instance, how: _Online, params: dict[str, Any], started: float
) -> RunResult:
    time_model = how.time_model
    policy = None
    if time_model == "coflowsim":
        from .heuristics.coflowsim import simulate_coflowsim

        if entry.coflowsim is None:
            raise ValueError(f"policy {entry.name!r} has no CoflowSim counterpart")
        if params:
            raise ValueError("the CoflowSim time model takes no parameters (CoflowSim has none)")
        if how.hide_labels:
            raise ValueError("the CoflowSim time model cannot hide coflow labels")
        if how.engine != "auto":
            raise ValueError("engine= chooses the exact model's event loop; not for 'coflowsim'")
        sim = simulate_coflowsim(instance, entry.name, record=how.record or how.fairness)
        inst, completion, report = sim.instance, sim.completion, sim.report
        typed: dict[str, Any] = {}
        rejected = len(sim.rejected)
    elif time_model == "exact":
        from .heuristics.registry import make_policy
        from .simulator import simulate

        policy = make_policy(entry.name, instance, **params)
        typed = {k: getattr(policy, k, v) for k, v in params.items()}
        sim = simulate(
            instance,
            policy,
            verify_schedule=how.verify,
            record=how.record,
            progress=how.progress,
            hide_labels=how.hide_labels,
            fairness=how.fairness,
            engine=how.engine,
        )
        inst, completion, report = instance, sim.coflow_completion, sim.report
        rejected = len(sim.rejected)
    else:
        raise ValueError(f"time_model must be 'exact' or 'coflowsim', got {time_model!r}")
    finished = bool(np.all(np.isfinite(completion)))
    objective = float(np.dot(inst.coflow_weight, completion)) if finished else math.nan
    return RunResult(
        algorithm=entry.name,
        params=typed,
        family=entry.family,
        time_model=time_model,
        status="feasible" if finished else "incomplete",
        objective=objective,
        bound=math.nan,
        bound_source=None,
        runtime=time.perf_counter() - started,
        instance=inst,
        completion=completion,
        report=report,
        message=f"{rejected} coflows rejected by admission control" if rejected else "",
        raw=sim,
        policy=policy,
    )
