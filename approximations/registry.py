"""Approximation algorithms and ordering baselines: names for ``coflowlab solve``.

The approximation family of the one registry (:mod:`coflowlab.registry`). Adding an algorithm
means writing its module and adding one :class:`~coflowlab.registry.AlgorithmEntry` to
:data:`ENTRIES`. Every method is a function ``run(instance, options=None, **params) ->
Solution`` (``options``: the solver settings, :class:`~coflowlab.solvers.SolverOptions`, taken
only by the methods that solve an LP; the others are ``run(instance, **params)``) returning a
verified schedule with its certified bound and guarantee
(:func:`coflowlab.solution.approximation_solution`).
"""

from __future__ import annotations

from typing import Any

from coflowlab.formulations.registry import (
    CHOWDHURY_2019,
    MASTROLILLI,
    QIU_STEIN_ZHONG,
    SHAFIEE_GHADERI,
)
from coflowlab.instance import Instance
from coflowlab.registry import AlgorithmEntry, Family, Paper
from coflowlab.solution import Solution
from coflowlab.time_models import TimeModel

__all__ = ["ENTRIES", "METHODS", "SINCRONIA", "method_names", "run_method"]

_PKG = "coflowlab.approximations"
_F, _S = TimeModel.FLUID, TimeModel.SLOTTED
SINCRONIA = Paper(
    "Agarwal, Rajakrishnan, Narayan, Agarwal, Shmoys, Vahdat",
    "Sincronia: Near-Optimal Network Design for Coflows",
    "SIGCOMM",
    2018,
)
_VARYS = Paper(
    "Chowdhury, Zhong, Stoica", "Efficient Coflow Scheduling with Varys", "SIGCOMM", 2014
)
_SMITH = Paper(
    "Smith", "Various Optimizers for Single-Stage Production", "Naval Res. Logist. Q. 3", 1956
)


def _entry(
    name: str, target: str, model: TimeModel, summary: str, paper: Paper | None
) -> AlgorithmEntry:
    return AlgorithmEntry(
        name, Family.APPROXIMATION, f"{_PKG}.{target}", model, summary, paper=paper
    )


# the plain orderings: name, the paper whose ordering rule it is
_ORDERINGS = (
    ("order-fifo", None),
    ("order-scf", _VARYS),
    ("order-ncf", _VARYS),
    ("order-tcf", _VARYS),
    ("order-sebf", _VARYS),
    ("order-smith", _SMITH),
)

ENTRIES: tuple[AlgorithmEntry, ...] = (
    _entry(
        "primal-dual",
        "sincronia:solve_primal_dual",
        _F,
        "primal-dual (BSSI) order of Mastrolilli et al. with its dual bound, greedy rates "
        "(≤ 4·dual, zero release)",
        MASTROLILLI,
    ),
    _entry(
        "sincronia",
        "sincronia:solve_sincronia",
        _F,
        "Sincronia offline: BSSI order, greedy or --param allocation=madd (≤ 4·OPT, zero release)",
        SINCRONIA,
    ),
    _entry(
        "lp-ov-ls",
        "lp_ov_ls:solve_lp_ov_ls",
        _F,
        "Shafiee-Ghaderi: LP-OV order, greedy list scheduling (≤ 4·LP-OV; 5 with release)",
        SHAFIEE_GHADERI,
    ),
    _entry(
        "qsz",
        "qsz:solve_qsz",
        _S,
        "Qiu-Stein-Zhong: interval LP, half-interval groups, each in ρ slots by König/BvN "
        "(≤ 16·LP + 2a·w(G₁), derived); --param backfill=true",
        QIU_STEIN_ZHONG,
    ),
    _entry(
        "qsz-random",
        "qsz:solve_qsz_random",
        _S,
        "Qiu-Stein-Zhong with a random grid offset (--param seed=N); same bound for every offset",
        QIU_STEIN_ZHONG,
    ),
    _entry(
        "alpha-point",
        "alpha_point:solve_alpha_point",
        _F,
        "α-point stretching of the time-indexed LP (Chowdhury et al. 2019), α with density "
        "2α, --param seed=N (E ≤ 2·TI-LP)",
        CHOWDHURY_2019,
    ),
    _entry(
        "alpha-point-derandomized",
        "alpha_point:solve_alpha_point_derandomized",
        _F,
        "α-point stretching with the best α over all breakpoints (≤ 2·TI-LP)",
        CHOWDHURY_2019,
    ),
    *(
        _entry(
            name,
            f"plain_orderings:solve_{name.replace('-', '_')}",
            _F,
            f"baseline: static {name[6:].upper()} order, greedy rates (no guarantee)",
            paper,
        )
        for name, paper in _ORDERINGS
    ),
)
"""The approximation algorithms, in listing order (their entries in
:data:`coflowlab.REGISTRY`)."""

METHODS: dict[str, AlgorithmEntry] = {e.name: e for e in ENTRIES}
"""The approximation algorithms by name."""


def method_names() -> list[str]:
    """Registered approximation method names, in listing order."""
    return list(METHODS)


def run_method(instance: Instance, method: str, **kwargs: Any) -> Solution:
    """Runs the registered approximation ``method`` on ``instance``.

    Examples
    --------
    >>> from coflowlab.instances.examples import theory_i2
    >>> run_method(theory_i2(), "order-smith").objective
    19.0
    """
    if method not in METHODS:
        raise ValueError(
            f"unknown approximation method {method!r}; choose one of {', '.join(METHODS)}"
        )
    solution: Solution = METHODS[method].load()(instance, **kwargs)
    return solution
