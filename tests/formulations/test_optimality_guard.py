"""The optimality guard of :func:`coflowlab.solution.schedule_solution` (issue 12): no method
reports ``optimal`` unless the verified cost of the schedule it returns equals its proven
bound within :data:`coflowlab.constants.OPTIMALITY_TOL` (widened to the requested
``mip_gap``). Each test injects a wrong schedule or a wrong bound and expects a
:class:`~coflowlab.exceptions.SolverError` that names the method and both values."""

from __future__ import annotations

import dataclasses
import math
from importlib import import_module

import numpy as np
import pytest
from brute_force import fluid_opt

import coflowlab as cl
from coflowlab.constants import OPTIMALITY_TOL
from coflowlab.exceptions import SolverError
from coflowlab.formulations import solve_method
from coflowlab.instances.generators import uniform
from coflowlab.solution import OBJECTIVE_RTOL, SolutionKind, check_optimality, schedule_solution
from coflowlab.solvers import SolveResult, SolverOptions, SolveStatus

ef = import_module("coflowlab.formulations.exact_fluid")
ti = import_module("coflowlab.formulations.time_indexed")

# Issue 12's integral instance: fluid OPT 67 (the order LPs of every event sequence); the
# MIP used to return its heuristic incumbent, 68, as "optimal".
LATE_RELEASES = cl.Instance.from_coflows(
    [
        cl.Coflow([(1, 1, 3.0), (1, 1, 1.0)], weight=2.0),
        cl.Coflow([(0, 0, 2.0), (1, 1, 1.0)], release=2.0, weight=3.0),
        cl.Coflow([(1, 0, 3.0)], weight=2.0),
        cl.Coflow([(0, 0, 3.0), (1, 1, 3.0)], release=1.0, weight=3.0),
    ],
    2,
)


def one_flow(duration: float) -> tuple[cl.Instance, cl.FluidSchedule]:
    """One flow of size 1, sent at rate 1/duration: it completes at ``duration``."""
    inst = cl.Instance.from_matrices([[[1.0]]])
    return inst, cl.FluidSchedule.from_segments(1, [0], [0.0], [duration], [1.0 / duration])


def optimal(objective: float, bound: float) -> SolveResult:
    return SolveResult(SolveStatus.OPTIMAL, objective, bound, 0.0, 0.0, np.zeros(1), "test")


# An instance whose heuristic incumbent is not optimal (on LATE_RELEASES the chain-order
# incumbent is now optimal, so dropping the MIP's solution changes nothing there). Values
# from the brute-force reference (brute_force.py: one LP per completion order, no release
# events): fluid OPT 287; the heuristic's best sequence is the chain order (4, 2, 1, 0, 3),
# whose order LP is 289 (the second-best value over all 120 orders).
HEURISTIC_NOT_OPTIMAL = uniform(3, 5, sizes=(1, 5), weights=(1, 4), seed=28)


def test_the_issue_12_bug_is_caught_by_the_guard(monkeypatch):
    """Tests the guard on the bug itself: with the MIP's solution dropped (the heuristic's
    289 returned while the MIP proved 287), exact-fluid raises instead of reporting
    optimal."""
    assert fluid_opt(HEURISTIC_NOT_OPTIMAL) == pytest.approx(287.0)  # the MIP's bound is OPT
    monkeypatch.setattr(ef, "_offer_mip", lambda *args: None)
    with pytest.raises(SolverError, match=r"exact-fluid: status optimal.* 289\.0 .* 287\.0"):
        ef.solve_exact_fluid(HEURISTIC_NOT_OPTIMAL, algorithm="mip")


def test_a_wrong_branch_and_bound_bound_is_caught(monkeypatch):
    """Tests the guard on the default algorithm: a search that claims to finish with a bound
    one below its incumbent is refused."""
    real = ef._branch_and_bound

    def low(data, inc, mip_gap):
        stats = real(data, inc, mip_gap)
        stats["bound"] -= 1.0
        return stats

    monkeypatch.setattr(ef, "_branch_and_bound", low)
    with pytest.raises(SolverError, match="exact-fluid: status optimal"):
        ef.solve_exact_fluid(LATE_RELEASES)


def test_a_wrong_slotted_bound_is_caught(monkeypatch):
    """Tests the guard on exact-slotted: a solver that proves a bound one unit below the
    optimum of its solution is refused (issue 12's slotted instance, OPT 20)."""
    real = ti.solve

    def lying(model, *args, **kwargs):
        res = real(model, *args, **kwargs)
        return dataclasses.replace(res, bound=res.objective - 1.0)

    monkeypatch.setattr(ti, "solve", lying)
    inst = cl.Instance.from_coflows(
        [
            cl.Coflow([(0, 2, 1.0), (1, 0, 4.0)], release=1.0, weight=3.0),
            cl.Coflow([(1, 2, 1.0)], release=1.0),
        ],
        3,
    )
    with pytest.raises(SolverError, match=r"exact-slotted: status optimal.* 20\.0 .* 19\.0"):
        solve_method(inst, "exact-slotted")


def test_schedule_solution_refuses_an_optimal_claim_above_the_bound():
    """Tests the guard directly: a schedule finishing at 2 against a bound of 1."""
    inst, slow = one_flow(2.0)
    with pytest.raises(SolverError, match=r"toy: status optimal.* 2\.0 .* bound 1\.0"):
        schedule_solution("toy", SolutionKind.EXACT, inst, slow, optimal(2.0, 1.0), runtime=0.0)
    ok = schedule_solution("toy", SolutionKind.EXACT, inst, slow, optimal(2.0, 2.0), runtime=0.0)
    assert ok.status is SolveStatus.OPTIMAL and ok.objective == 2.0 and ok.gap == 0.0


def test_the_tolerance_is_documented_and_widened_by_mip_gap():
    """Tests the documented tolerance: (max(OPTIMALITY_TOL, mip_gap) + OBJECTIVE_RTOL)
    relative to max(1, |objective|); a 1% gap passes only when 1% was asked for."""
    edge = (OPTIMALITY_TOL + OBJECTIVE_RTOL) * 100.0
    check_optimality("toy", 100.0, 100.0 - 0.99 * edge)
    with pytest.raises(SolverError):
        check_optimality("toy", 100.0, 100.0 - 1.01 * edge)
    with pytest.raises(SolverError):
        check_optimality("toy", 100.0, 99.0)
    check_optimality("toy", 100.0, 99.0, mip_gap=0.01)
    check_optimality("toy", 1e-7, 0.0)  # below 1 the tolerance is absolute (2e-6)
    with pytest.raises(SolverError):
        check_optimality("toy", 1e-5, 0.0)
    with pytest.raises(SolverError, match="nan"):
        check_optimality("toy", 1.0, math.nan)


def test_schedule_solution_widens_the_guard_to_the_gap_its_options_asked_for():
    """Tests that schedule_solution reads the tolerance from the solver settings the schedule
    was solved with: a schedule finishing at 1.005 against a proven bound of 1 (0.5% gap) is
    refused without options (no solver: OPTIMALITY_TOL alone) and with the default
    SolverOptions (mip_gap 1e-6), and accepted as optimal under SolverOptions(mip_gap=0.01)."""
    inst, slow = one_flow(1.005)
    claim = optimal(1.005, 1.0)
    for options in (None, SolverOptions()):
        with pytest.raises(SolverError, match=r"toy: status optimal.* 1\.00[45]\d* .* bound 1\.0"):
            schedule_solution(
                "toy", SolutionKind.EXACT, inst, slow, claim, runtime=0.0, options=options
            )
    ok = schedule_solution(
        "toy", SolutionKind.EXACT, inst, slow, claim, runtime=0.0,
        options=SolverOptions(mip_gap=0.01),
    )  # fmt: skip
    assert ok.status is SolveStatus.OPTIMAL and ok.objective == pytest.approx(1.005)


def test_a_bound_on_the_wrong_side_is_caught_too():
    """Tests both directions: a 'bound' above a minimizing method's cost, or below a
    maximizing (deadline) method's count, is no proof either."""
    with pytest.raises(SolverError):
        check_optimality("toy", 10.0, 11.0)
    inst, fast = one_flow(1.0)
    inst = inst.replace(coflow_deadline=np.array([1.0]))
    result = SolveResult(SolveStatus.OPTIMAL, -1.0, -2.0, 0.0, 0.0, np.zeros(1), "test")
    with pytest.raises(SolverError, match="deadline-toy"):
        schedule_solution(
            "deadline-toy", SolutionKind.EXACT, inst, fast, result, runtime=0.0,
            objective=1.0, bound=2.0, maximize=True,
        )  # fmt: skip


def test_time_limit_results_are_not_checked():
    """Tests that a result with a gap keeps its gap when it does not claim optimality."""
    inst, slow = one_flow(2.0)
    stopped = dataclasses.replace(optimal(2.0, 1.0), status=SolveStatus.TIME_LIMIT)
    sol = schedule_solution("toy", SolutionKind.EXACT, inst, slow, stopped, runtime=0.0)
    assert sol.status is SolveStatus.TIME_LIMIT and sol.gap == pytest.approx(0.5)


def test_a_short_slotted_horizon_makes_no_optimality_claim():
    """Tests that exact-slotted below its proven horizon reports 'feasible' (the MIP's
    optimum is only the best among schedules that end early; no bound on OPT)."""
    inst = cl.Instance.from_coflows(
        [cl.Coflow([(0, 0, 2.0)]), cl.Coflow([(0, 0, 1.0), (1, 1, 1.0)], release=1, weight=3)],
        2,
    )
    sol = ti.solve_exact_slotted(inst, horizon=3)
    assert sol.status is SolveStatus.FEASIBLE
    assert math.isnan(sol.bound) and sol.objective == 9.0
    assert ti.solve_exact_slotted(inst).status is SolveStatus.OPTIMAL
