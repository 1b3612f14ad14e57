"""coflowlab: a research toolkit for coflow scheduling.

The core package holds the data model (:class:`Instance`, :class:`Fabric`), the time models,
schedules and the one independent verifier. Algorithms live in the subpackages
``coflowlab.formulations``, ``coflowlab.approximations`` and ``coflowlab.heuristics``; trace
readers and generators in ``coflowlab.instances``; reports in ``coflowlab.reports``. Solvers and
plotting are imported lazily, so ``import coflowlab`` stays fast.

Every algorithm is registered by name in :data:`REGISTRY` and runs through :func:`run`::

    >>> import coflowlab as cl
    >>> from coflowlab.instances.examples import theory_i2
    >>> cl.run("order-smith", theory_i2()).objective
    19.0
"""

from __future__ import annotations

import logging
from typing import Any

from .class_verifier import ClassVerifier as ClassVerifier
from .constants import TOL as TOL
from .exceptions import CoflowlabError as CoflowlabError
from .exceptions import InfeasibleScheduleError as InfeasibleScheduleError
from .exceptions import InvalidInstanceError as InvalidInstanceError
from .exceptions import InvalidScheduleError as InvalidScheduleError
from .exceptions import ScalingWarning as ScalingWarning
from .exceptions import SolverError as SolverError
from .exceptions import SolverNotAvailableError as SolverNotAvailableError
from .exceptions import TraceFormatError as TraceFormatError
from .instance import Coflow as Coflow
from .instance import Fabric as Fabric
from .instance import Instance as Instance
from .instance import Units as Units
from .policy import ClairvoyantState as ClairvoyantState
from .policy import Decision as Decision
from .policy import InstanceView as InstanceView
from .policy import ObservedState as ObservedState
from .policy import Policy as Policy
from .schedules import FluidSchedule as FluidSchedule
from .schedules import FluidScheduleBuilder as FluidScheduleBuilder
from .schedules import Schedule as Schedule
from .schedules import SlottedSchedule as SlottedSchedule
from .simulator import SimulationError as SimulationError
from .simulator import SimulationResult as SimulationResult
from .simulator import simulate as simulate
from .time_models import TimeModel as TimeModel
from .verifier import FluidVerifier as FluidVerifier
from .verifier import VerificationReport as VerificationReport
from .verifier import Violation as Violation
from .verifier import ViolationKind as ViolationKind
from .verifier import verify as verify

# the registry, the runner and the solver options are imported on first use, so that
# ``import coflowlab`` does not load the solver layer
_LAZY = {
    "REGISTRY": ("registry", "REGISTRY"),
    "AlgorithmEntry": ("registry", "AlgorithmEntry"),
    "Family": ("registry", "Family"),
    "RunResult": ("runner", "RunResult"),
    "run": ("runner", "run"),
    "SolverOptions": ("solvers.options", "SolverOptions"),
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from importlib import import_module

        module, attr = _LAZY[name]
        return getattr(import_module(f"{__name__}.{module}"), attr)
    raise AttributeError(f"module 'coflowlab' has no attribute {name!r}")


FLUID = TimeModel.FLUID
SLOTTED = TimeModel.SLOTTED

__version__ = "0.1.0"

logging.getLogger("coflowlab").addHandler(logging.NullHandler())
