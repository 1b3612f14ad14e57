"""The one registry of offline formulations and bounds: names for ``coflowlab solve``.

Adding a method means writing its module and adding one :class:`MethodEntry` here. Every
method is a function ``run(instance, *, solver, time_limit, mip_gap, threads, log,
**params) -> Solution`` (combinatorial bounds ignore the solver arguments).
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module
from typing import Any

from coflowlab.instance import Instance
from coflowlab.solution import Solution, SolutionKind
from coflowlab.time_models import TimeModel

__all__ = ["METHODS", "MethodEntry", "method_names", "solve_method"]


@dataclass(frozen=True)
class MethodEntry:
    """One registered method.

    Attributes
    ----------
    name
        Registry name (CLI ``--method``).
    target
        ``"module:function"`` under ``package``, imported on use.
    kind
        What its value is (:class:`coflowlab.solution.SolutionKind`).
    model
        The time model its schedule or bound is for.
    summary
        One line for ``coflowlab solve --list``.
    package
        The family's package (``coflowlab.approximations`` registers with this class too).
    """

    name: str
    target: str
    kind: SolutionKind
    model: TimeModel
    summary: str
    package: str = "coflowlab.formulations"

    def function(self) -> Any:
        module, func = self.target.split(":")
        return getattr(import_module(f"{self.package}.{module}"), func)


_E, _R, _B = SolutionKind.EXACT, SolutionKind.RELAXATION, SolutionKind.BOUND
_F, _S = TimeModel.FLUID, TimeModel.SLOTTED

METHODS: dict[str, MethodEntry] = {
    e.name: e
    for e in (
        MethodEntry(
            "exact-fluid",
            "exact_fluid:solve_exact_fluid",
            _E,
            _F,
            "fluid OPT: branch-and-bound over completion orders, an interval LP per order "
            "(theory §7.2); --param algorithm=mip for the position MIP",
        ),
        MethodEntry(
            "exact-slotted",
            "time_indexed:solve_exact_slotted",
            _E,
            _S,
            "slotted OPT: time-indexed MIP with a matching per unit slot (theory §7.1)",
        ),
        MethodEntry(
            "deadline-fluid",
            "deadlines:solve_deadline_fluid",
            _E,
            _F,
            "fluid: most (weighted) coflows meeting their deadlines, MIP over intervals (B.5)",
        ),
        MethodEntry(
            "deadline-slotted",
            "deadlines:solve_deadline_slotted",
            _E,
            _S,
            "slotted: most (weighted) coflows meeting their deadlines, time-indexed MIP (B.5)",
        ),
        MethodEntry(
            "lp-ov",
            "lp_ov:solve_lp_ov",
            _R,
            _F,
            "ordering-variable LP of Shafiee-Ghaderi (theory §5.2), continuous δ: a lower bound",
        ),
        MethodEntry(
            "lp-ov-binary",
            "lp_ov:solve_lp_ov_binary",
            _R,
            _F,
            "LP-OV with binary δ: concurrent-open-shop OPT, a lower bound, not coflow OPT",
        ),
        MethodEntry(
            "interval-lp",
            "interval_lp:solve_interval_lp",
            _R,
            _F,
            "interval-indexed LP on a geometric grid (Qiu-Stein-Zhong, theory §2.3): a bound",
        ),
        MethodEntry(
            "parallel-lp",
            "parallel_lp:solve_parallel_lp",
            _R,
            _F,
            "parallel-inequality LP on the 2m ports with Queyranne separation (theory §3.2)",
        ),
        MethodEntry(
            "time-indexed-lp",
            "time_indexed:solve_time_indexed_lp",
            _R,
            _F,
            "LP relaxation of the time-indexed MIP (theory §7.1): a fluid lower bound",
        ),
        MethodEntry(
            "bound-release-rho",
            "bounds:bound_release_rho",
            SolutionKind.BOUND,
            _F,
            "Σ_j w_j (r_j + ρ_j) (theory F3): a lower bound",
        ),
        MethodEntry(
            "bound-smith",
            "bounds:bound_smith",
            SolutionKind.BOUND,
            _F,
            "best per-port Smith-rule optimum (theory F4; with releases: r_min + Smith): a bound",
        ),
    )
}


def method_names() -> list[str]:
    """Registered method names, in listing order."""
    return list(METHODS)


def solve_method(instance: Instance, method: str, **kwargs: Any) -> Solution:
    """Runs the registered ``method`` on ``instance`` (keyword arguments go to it).

    Examples
    --------
    >>> from coflowlab.instances.examples import fig_3_2
    >>> solve_method(fig_3_2(), "bound-release-rho").objective
    4.0
    """
    if method not in METHODS:
        raise ValueError(
            f"unknown method {method!r}; choose one of {', '.join(METHODS)} "
            "(coflowlab solve --list)"
        )
    solution: Solution = METHODS[method].function()(instance, **kwargs)
    return solution
