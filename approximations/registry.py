"""The one registry of approximation algorithms and ordering baselines: names for
``coflowlab solve`` (merged after the formulations, :data:`coflowlab.cli.SOLVE_REGISTRIES`).

Adding an algorithm means writing its module and adding one entry here. Every method is a
function ``run(instance, *, solver, time_limit, mip_gap, threads, log, **params) -> Solution``
returning a verified schedule with its certified bound and guarantee
(:func:`coflowlab.solution.approximation_solution`).
"""

from __future__ import annotations

from typing import Any

from coflowlab.formulations.registry import MethodEntry
from coflowlab.instance import Instance
from coflowlab.solution import Solution, SolutionKind
from coflowlab.time_models import TimeModel

__all__ = ["METHODS", "method_names", "run_method"]

_PKG = "coflowlab.approximations"
_A = SolutionKind.APPROXIMATION
_F, _S = TimeModel.FLUID, TimeModel.SLOTTED


def _entry(name: str, target: str, model: TimeModel, summary: str) -> MethodEntry:
    return MethodEntry(name, target, _A, model, summary, package=_PKG)


METHODS: dict[str, MethodEntry] = {
    e.name: e
    for e in (
        _entry(
            "primal-dual",
            "sincronia:solve_primal_dual",
            _F,
            "primal-dual (BSSI) order of Mastrolilli et al. with its dual bound, greedy rates "
            "(≤ 4·dual, zero release)",
        ),
        _entry(
            "sincronia",
            "sincronia:solve_sincronia",
            _F,
            "Sincronia offline: BSSI order, greedy or --param allocation=madd (≤ 4·OPT, zero "
            "release)",
        ),
        _entry(
            "lp-ov-ls",
            "lp_ov_ls:solve_lp_ov_ls",
            _F,
            "Shafiee-Ghaderi: LP-OV order, greedy list scheduling (≤ 4·LP-OV; 5 with release)",
        ),
        _entry(
            "qsz",
            "qsz:solve_qsz",
            _S,
            "Qiu-Stein-Zhong: interval LP, half-interval groups, each in ρ slots by König/BvN "
            "(≤ 16·LP + 2a·w(G₁), derived); --param backfill=true",
        ),
        _entry(
            "qsz-random",
            "qsz:solve_qsz_random",
            _S,
            "Qiu-Stein-Zhong with a random grid offset (--param seed=N); same bound for every "
            "offset",
        ),
        _entry(
            "alpha-point",
            "alpha_point:solve_alpha_point",
            _F,
            "α-point stretching of the time-indexed LP (Chowdhury et al. 2019), α with density "
            "2α, --param seed=N (E ≤ 2·TI-LP)",
        ),
        _entry(
            "alpha-point-derandomized",
            "alpha_point:solve_alpha_point_derandomized",
            _F,
            "α-point stretching with the best α over all breakpoints (≤ 2·TI-LP)",
        ),
        *(
            _entry(
                name,
                f"plain_orderings:solve_{name.replace('-', '_')}",
                _F,
                f"baseline: static {name[6:].upper()} order, greedy rates (no guarantee)",
            )
            for name in (
                "order-fifo",
                "order-scf",
                "order-ncf",
                "order-tcf",
                "order-sebf",
                "order-smith",
            )
        ),
    )
}


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
    solution: Solution = METHODS[method].function()(instance, **kwargs)
    return solution
