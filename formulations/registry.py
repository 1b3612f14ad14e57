"""Offline formulations and bounds: names for ``coflowlab solve``.

The exact methods, relaxations and bounds of the one registry (:mod:`coflowlab.registry`).
Adding a method means writing its module and adding one
:class:`~coflowlab.registry.AlgorithmEntry` to :data:`ENTRIES`. Every method is a function
``run(instance, options=None, **params) -> Solution`` whose ``options`` are the solver
settings (:class:`~coflowlab.solvers.SolverOptions`); combinatorial bounds solve nothing and
are ``run(instance) -> Solution``, with no ``options``.

Deadlines: only ``deadline-fluid`` and ``deadline-slotted`` read them (they maximize the
weight of coflows that meet theirs). Every other method minimizes ``Σ w_j C_j`` (or bounds
it) and ignores deadlines: a coflow that cannot meet its deadline is scheduled like any
other, so the exact methods and the bounds agree on what they optimize.

Status ``optimal`` of a schedule-producing method is checked when its result is built
(:func:`coflowlab.solution.schedule_solution`): the verified cost must equal the proven bound
within :data:`coflowlab.constants.OPTIMALITY_TOL`.
"""

from __future__ import annotations

from typing import Any

from coflowlab.instance import Instance
from coflowlab.registry import AlgorithmEntry, Family, Paper
from coflowlab.solution import Solution
from coflowlab.time_models import TimeModel

__all__ = ["ENTRIES", "METHODS", "method_names", "solve_method"]

SHAFIEE_GHADERI = Paper(
    "Shafiee, Ghaderi",
    "An Improved Bound for Minimizing the Total Weighted Completion Time of Coflows in "
    "Datacenters",
    "IEEE/ACM Transactions on Networking 26(4)",
    2018,
)
QIU_STEIN_ZHONG = Paper(
    "Qiu, Stein, Zhong",
    "Minimizing the Total Weighted Completion Time of Coflows in Datacenter Networks",
    "SPAA",
    2015,
)
MASTROLILLI = Paper(
    "Mastrolilli, Queyranne, Schulz, Svensson, Uhan",
    "Minimizing the Sum of Weighted Completion Times in a Concurrent Open Shop",
    "Operations Research Letters 38(5)",
    2010,
)
CHOWDHURY_2019 = Paper(
    "Chowdhury, Khuller, Purohit, Yang, You",
    "Near Optimal Coflow Scheduling in Networks",
    "SPAA",
    2019,
)
_SMITH = Paper(
    "Smith", "Various Optimizers for Single-Stage Production", "Naval Res. Logist. Q. 3", 1956
)
_PKG = "coflowlab.formulations"
_F, _S = TimeModel.FLUID, TimeModel.SLOTTED


def _method(
    name: str, target: str, family: Family, model: TimeModel, summary: str, **kw: Any
) -> AlgorithmEntry:
    return AlgorithmEntry(name, family, f"{_PKG}.{target}", model, summary, **kw)


ENTRIES: tuple[AlgorithmEntry, ...] = (
    _method(
        "exact-fluid",
        "exact_fluid:solve_exact_fluid",
        Family.EXACT,
        _F,
        "fluid OPT: branch-and-bound over completion orders, an interval LP per order "
        "(docs/theory.md#exact); --param algorithm=mip for the position MIP; deadlines "
        "ignored; no time limit unless --time-limit",
    ),
    _method(
        "exact-slotted",
        "time_indexed:solve_exact_slotted",
        Family.EXACT,
        _S,
        "slotted OPT: time-indexed MIP with a matching per unit slot "
        "(docs/theory.md#time-indexed); --param algorithm=bnb for branch and bound over "
        "event sequences with an order MIP per leaf (scales far further); deadlines ignored",
        paper=QIU_STEIN_ZHONG,
    ),
    _method(
        "deadline-fluid",
        "deadlines:solve_deadline_fluid",
        Family.EXACT,
        _F,
        "fluid: most (weighted) coflows meeting their deadlines, MIP over intervals; "
        "the only fluid method that reads deadlines",
        maximize=True,
    ),
    _method(
        "deadline-slotted",
        "deadlines:solve_deadline_slotted",
        Family.EXACT,
        _S,
        "slotted: most (weighted) coflows meeting their deadlines, time-indexed MIP; the only "
        "slotted method that reads deadlines",
        maximize=True,
    ),
    _method(
        "lp-ov",
        "lp_ov:solve_lp_ov",
        Family.RELAXATION,
        _F,
        "ordering-variable LP of Shafiee & Ghaderi (docs/theory.md#lp-ov), continuous δ: "
        "a lower bound",
        paper=SHAFIEE_GHADERI,
    ),
    _method(
        "lp-ov-binary",
        "lp_ov:solve_lp_ov_binary",
        Family.RELAXATION,
        _F,
        "LP-OV with binary δ: concurrent-open-shop OPT, a lower bound, not coflow OPT",
        paper=SHAFIEE_GHADERI,
    ),
    _method(
        "interval-lp",
        "interval_lp:solve_interval_lp",
        Family.RELAXATION,
        _F,
        "interval-indexed LP on a geometric grid (docs/theory.md#interval-lp): a bound",
        paper=QIU_STEIN_ZHONG,
    ),
    _method(
        "parallel-lp",
        "parallel_lp:solve_parallel_lp",
        Family.RELAXATION,
        _F,
        "parallel-inequality LP on the 2m ports with Queyranne separation "
        "(docs/theory.md#parallel-lp)",
        paper=MASTROLILLI,
    ),
    _method(
        "time-indexed-lp",
        "time_indexed:solve_time_indexed_lp",
        Family.RELAXATION,
        _F,
        "LP relaxation of the time-indexed MIP (docs/theory.md#time-indexed): a fluid lower bound",
        paper=CHOWDHURY_2019,
    ),
    _method(
        "bound-release-rho",
        "bounds:bound_release_rho",
        Family.BOUND,
        _F,
        "Σ_j w_j (r_j + ρ_j) (docs/theory.md#f3): a lower bound",
    ),
    _method(
        "bound-smith",
        "bounds:bound_smith",
        Family.BOUND,
        _F,
        "best per-port Smith-rule optimum (docs/theory.md#f4; with releases: r_min + "
        "Smith): a bound",
        paper=_SMITH,
    ),
)
"""The formulations and bounds, in listing order (their entries in
:data:`coflowlab.REGISTRY`)."""

METHODS: dict[str, AlgorithmEntry] = {e.name: e for e in ENTRIES}
"""The formulations and bounds by name."""


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
    solution: Solution = METHODS[method].load()(instance, **kwargs)
    return solution
