"""Every algorithm the property suites check, read from the three registries (the one place an
algorithm is registered): ``coflowlab.formulations.METHODS``, ``coflowlab.approximations.
METHODS`` and ``coflowlab.heuristics.POLICIES``. A newly registered algorithm joins every suite
that applies to its kind without a test being copied.

An algorithm that declines an instance it does not handle (slotted methods on fractional
sizes, QSZ and α-point with dependencies, an exact method beyond its size limit) raises one of
:data:`DECLINED`; the suites then skip that example and count it in the summary table
(:mod:`summary`), so a method that declines everything shows up there rather than passing
silently.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import coflowlab as cl
from coflowlab.approximations import METHODS as APPROXIMATIONS
from coflowlab.exceptions import InvalidInstanceError, ModelTooLargeError
from coflowlab.formulations import METHODS as FORMULATIONS
from coflowlab.heuristics import POLICIES, make_policy
from coflowlab.registry import Family
from coflowlab.solution import Solution, SolutionKind
from coflowlab.time_models import TimeModel

__all__ = [
    "DECLINED",
    "Algorithm",
    "approximations",
    "exact_methods",
    "heuristics",
    "lower_bounds",
    "schedulers",
]

DECLINED: tuple[type[Exception], ...] = (InvalidInstanceError, ModelTooLargeError)
"""Errors by which a method says an instance is outside its scope (not a failure)."""


@dataclass(frozen=True)
class Algorithm:
    """One registered algorithm, as the suites see it.

    Attributes
    ----------
    name, family
        Registry name and registry (``"formulation"``, ``"approximation"``, ``"heuristic"``).
    model
        The time model of its schedule or bound.
    kind
        For formulations and approximations, what its value is (:class:`SolutionKind`);
        ``None`` for online heuristics.
    run
        ``run(instance) -> Solution`` for offline methods, ``-> SimulationResult`` for
        heuristics (its schedule is recorded and verified).
    """

    name: str
    family: str
    model: TimeModel
    kind: SolutionKind | None
    run: Callable[[cl.Instance], Any]

    def __repr__(self) -> str:  # test ids and counterexamples name the algorithm
        return self.name


def _offline(name: str, entry: Any, family: str, **kwargs: Any) -> Algorithm:
    func = entry.load()

    def run(instance: cl.Instance) -> Solution:
        return func(instance, **kwargs)

    return Algorithm(name, family, entry.model, SolutionKind(entry.family.value), run)


def _online(name: str) -> Algorithm:
    def run(instance: cl.Instance) -> cl.SimulationResult:
        return cl.simulate(instance, make_policy(name, instance), record=True)

    return Algorithm(name, "heuristic", TimeModel.FLUID, None, run)


def exact_methods() -> list[Algorithm]:
    """Formulations that return a proven optimum of Σ w C (fluid and slotted)."""
    return [
        _offline(name, e, "formulation")
        for name, e in FORMULATIONS.items()
        if e.family is Family.EXACT and not e.maximize
    ]


def lower_bounds() -> list[Algorithm]:
    """Relaxations and combinatorial bounds (their value is a lower bound on OPT)."""
    return [
        _offline(name, e, "formulation") for name, e in FORMULATIONS.items() if e.is_lower_bound
    ]


def approximations() -> list[Algorithm]:
    """Approximation algorithms and ordering baselines (a verified schedule, a certified
    bound, and the guarantee, if any, in the result)."""
    return [_offline(name, e, "approximation") for name, e in APPROXIMATIONS.items()]


def heuristics() -> list[Algorithm]:
    """Online policies of the simulator."""
    return [_online(name) for name in POLICIES]


def schedulers() -> list[Algorithm]:
    """Everything that produces a schedule: exact formulations (deadline ones included),
    approximations and heuristics."""
    exact = [
        _offline(name, e, "formulation")
        for name, e in FORMULATIONS.items()
        if e.family is Family.EXACT
    ]
    return exact + approximations() + heuristics()
