"""Every algorithm the property suites check, selected from the one registry
(:data:`coflowlab.REGISTRY`) by family and run through the one runner (:func:`coflowlab.run`).
A newly registered algorithm joins every suite that applies to its family without a test being
copied.

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
from coflowlab.exceptions import InvalidInstanceError, ModelTooLargeError
from coflowlab.heuristics import POLICIES
from coflowlab.registry import REGISTRY, AlgorithmEntry, Family
from coflowlab.solution import SolutionKind
from coflowlab.time_models import TimeModel

__all__ = [
    "DECLINED",
    "POLICIES",
    "Algorithm",
    "approximations",
    "exact_methods",
    "from_registry",
    "heuristics",
    "lower_bounds",
    "schedulers",
]

DECLINED: tuple[type[Exception], ...] = (InvalidInstanceError, ModelTooLargeError)
"""Errors by which a method says an instance is outside its scope (not a failure)."""


@dataclass(frozen=True)
class Algorithm:
    """One registered algorithm as the suites run it: its registry entry, and ``run``, which
    goes through :func:`coflowlab.run` (a suite that injects a bug replaces ``run``).

    Attributes
    ----------
    entry
        The registry entry (:class:`coflowlab.registry.AlgorithmEntry`).
    run
        ``run(instance) -> Solution`` for offline methods, ``-> SimulationResult`` for online
        policies (their schedule is recorded and verified).
    """

    entry: AlgorithmEntry
    run: Callable[[cl.Instance], Any]

    @property
    def name(self) -> str:
        return self.entry.name

    @property
    def model(self) -> TimeModel:
        return self.entry.model

    @property
    def family(self) -> str:
        """``"formulation"``, ``"approximation"`` or ``"heuristic"`` (online)."""
        if self.entry.online:
            return "heuristic"
        return "approximation" if self.entry.family is Family.APPROXIMATION else "formulation"

    @property
    def kind(self) -> SolutionKind | None:
        """What an offline method's value is; ``None`` for online policies."""
        return None if self.entry.online else SolutionKind(self.entry.family.value)

    def __repr__(self) -> str:  # test ids and counterexamples name the algorithm
        return self.name


def from_registry(name: str, **params: Any) -> Algorithm:
    """The registered algorithm ``name``, run through :func:`coflowlab.run`."""

    def run(instance: cl.Instance) -> Any:
        return cl.run(name, instance, record=True, **params).raw

    return Algorithm(REGISTRY[name], run)


def _select(keep: Callable[[AlgorithmEntry], bool]) -> list[Algorithm]:
    return [from_registry(name) for name, e in REGISTRY.items() if keep(e)]


def exact_methods() -> list[Algorithm]:
    """Exact methods that return a proven optimum of Σ w C (fluid and slotted)."""
    return _select(lambda e: e.family is Family.EXACT and not e.maximize)


def lower_bounds() -> list[Algorithm]:
    """Relaxations and combinatorial bounds (their value is a lower bound on OPT)."""
    return _select(lambda e: e.is_lower_bound)


def approximations() -> list[Algorithm]:
    """Approximation algorithms and ordering baselines (a verified schedule, a certified
    bound, and the guarantee, if any, in the result)."""
    return _select(lambda e: e.family is Family.APPROXIMATION)


def heuristics() -> list[Algorithm]:
    """Online policies of the simulator."""
    return _select(lambda e: e.online)


def schedulers() -> list[Algorithm]:
    """Everything that produces a schedule: exact methods (deadline ones included),
    approximations and online policies."""
    return _select(lambda e: e.family in (Family.EXACT, Family.APPROXIMATION, Family.ONLINE))
