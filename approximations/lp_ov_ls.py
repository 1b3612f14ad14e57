"""LP-OV ordering with list scheduling (Shafiee and Ghaderi, IEEE/ACM ToN 26(4), 2018;
docs/theory.md#lp-ov-ls).

Solve the ordering-variable LP (:func:`coflowlab.formulations.lp_ov.solve_lp_ov`, continuous
δ), order the coflows by their LP completion variables ``f_k`` (ties by index), and list-schedule
them: strict-priority greedy rates in that order, recomputed at every release and completion
(:func:`coflowlab.list_scheduling.list_schedule`). The paper list-schedules flows
non-preemptively; greedy fluid rates satisfy the same prefix argument (our derivation).

Guarantee (the paper's ratios; our derivation, docs/theory.md#lp-ov-ls): ordered by ``f``, every
prefix's load on a port is at most ``2 f_k`` (docs/theory.md#lp-ov), and greedy finishes coflow
``k`` by ``R_k`` plus its prefix's ingress plus egress load (F5), so ``C_k ≤ R_k + 4 f_k``; ``R_k ≤
f_k`` gives ``Σ w C ≤ 5·LP-OV`` with release dates and ``≤ 4·LP-OV`` without.

Erratum (docs/theory.md#lp-ov-erratum): a public MATLAB implementation states the LP wrongly (a
vacuous release row, one pair row per coflow, binary δ); the LP here follows docs/theory.md#lp-ov.
"""

from __future__ import annotations

import time

from coflowlab.exceptions import SolverError
from coflowlab.instance import Instance
from coflowlab.list_scheduling import list_schedule
from coflowlab.solution import Guarantee, Solution, approximation_solution
from coflowlab.solvers import SolverOptions, SolveStatus

__all__ = ["LP_OV_LS_GUARANTEE", "LP_OV_LS_RELEASE_GUARANTEE", "solve_lp_ov_ls"]

_SOURCE = "Shafiee & Ghaderi, IEEE/ACM ToN 26(4):1674-1687, 2018; docs/theory.md#lp-ov-ls"
LP_OV_LS_GUARANTEE = Guarantee(4.0, "lp-ov", "Σ w C ≤ 4·LP-OV (zero release dates)", _SOURCE)
LP_OV_LS_RELEASE_GUARANTEE = Guarantee(5.0, "lp-ov", "Σ w C ≤ 5·LP-OV (release dates)", _SOURCE)


def solve_lp_ov_ls(
    instance: Instance,
    options: SolverOptions | None = None,
) -> Solution:
    """LP-OV ordering plus greedy list scheduling, measured against LP-OV.

    Parameters
    ----------
    instance
        Any instance (release dates and capacities are honoured).
    options
        Solver settings for the LP, see :class:`~coflowlab.solvers.SolverOptions`.

    Returns
    -------
    Solution
        Kind ``approximation``; ``bound`` is the LP-OV optimum, ``guarantee`` 4 or 5 (with
        release dates); ``details["lp_completion"]`` holds the ``f_k``.

    Raises
    ------
    SolverError
        The LP did not solve to optimality (for instance, the time limit struck first): its
        value would not be a certified bound, so no ratio is reported.

    Examples -------- Instance I3 (docs/theory.md#instances): LP-OV = 4 and the list schedule in
    its order is optimal.

    >>> from coflowlab.instances.examples import theory_i3
    >>> sol = solve_lp_ov_ls(theory_i3())
    >>> round(sol.objective, 9), round(sol.bound, 9), sol.guarantee.factor
    (4.0, 4.0, 4.0)
    """
    from coflowlab.formulations.lp_ov import solve_lp_ov

    start = time.perf_counter()
    lp = solve_lp_ov(instance, options)
    if lp.status is not SolveStatus.OPTIMAL or lp.order is None:
        raise SolverError(
            f"lp-ov-ls: the LP-OV solve ended with status {lp.status.value} "
            f"({lp.message or 'no message'}); without its optimum there is no order or bound"
        )
    schedule = list_schedule(instance, lp.order, "greedy")
    guarantee = LP_OV_LS_RELEASE_GUARANTEE if instance.has_releases else LP_OV_LS_GUARANTEE
    return approximation_solution(
        "lp-ov-ls",
        instance,
        schedule,
        bound=lp.objective,
        bound_source="lp-ov",
        guarantee=guarantee,
        runtime=time.perf_counter() - start,
        order=lp.order,
        solver=lp.solver,
        details={
            "lp_completion": lp.details.get("completion"),
            "lp_seconds": lp.runtime,
        },
    )
