"""The HiGHS backend (through highspy): the default for every LP and MIP, always installed."""

from __future__ import annotations

import math
import time

import numpy as np

from .model import LinearModel
from .result import SolveResult, SolveStatus, relative_gap, unbounded_if_feasible

__all__ = ["solve_highs"]


def solve_highs(
    model: LinearModel,
    *,
    time_limit: float | None = None,
    mip_gap: float = 1e-6,
    threads: int | None = None,
    log: bool = False,
) -> SolveResult:
    """Solves ``model`` with HiGHS (see :func:`coflowlab.solvers.solve` for the parameters)."""
    import highspy

    h = highspy.Highs()
    h.setOptionValue("output_flag", bool(log))
    if time_limit is not None:
        h.setOptionValue("time_limit", float(time_limit))
    if model.is_mip:
        h.setOptionValue("mip_rel_gap", float(mip_gap))
    if threads is not None:
        # HiGHS keeps one thread pool per process, sized by the first solve; a different
        # thread count is refused unless the pool is rebuilt
        highspy.Highs.resetGlobalScheduler(True)
        h.setOptionValue("threads", int(threads))
    h.setOptionValue("random_seed", 0)  # determinism across runs

    inf = highspy.kHighsInf
    lp = highspy.HighsLp()
    lp.num_col_ = model.num_vars
    lp.num_row_ = model.num_rows
    lp.col_cost_ = model.c
    lp.offset_ = model.offset
    lp.col_lower_ = np.where(np.isinf(model.col_lower), -inf, model.col_lower)
    lp.col_upper_ = np.where(np.isinf(model.col_upper), inf, model.col_upper)
    lp.row_lower_ = np.where(np.isinf(model.row_lower), -inf, model.row_lower)
    lp.row_upper_ = np.where(np.isinf(model.row_upper), inf, model.row_upper)
    csc = model.A.tocsc()
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.num_col_ = model.num_vars
    lp.a_matrix_.num_row_ = model.num_rows
    lp.a_matrix_.start_ = csc.indptr.astype(np.int32)
    lp.a_matrix_.index_ = csc.indices.astype(np.int32)
    lp.a_matrix_.value_ = csc.data
    if model.is_mip:
        kinds = highspy.HighsVarType
        lp.integrality_ = [kinds.kInteger if k else kinds.kContinuous for k in model.integrality]
    start = time.perf_counter()
    if h.passModel(lp) == highspy.HighsStatus.kError:
        return _error(model, "HiGHS rejected the model", time.perf_counter() - start)
    h.run()
    runtime = time.perf_counter() - start
    status = h.getModelStatus()
    text = h.modelStatusToString(status)
    info = h.getInfo()
    has_x = info.primal_solution_status == 2  # kSolutionStatusFeasible
    x = np.array(h.getSolution().col_value, dtype=float) if has_x else None
    objective = float(info.objective_function_value) if has_x else math.nan
    S = highspy.HighsModelStatus
    if status == S.kOptimal:
        bound = float(info.mip_dual_bound) if model.is_mip else objective
        return _result(SolveStatus.OPTIMAL, objective, bound, runtime, x, text)
    if status in (S.kInfeasible,):
        return _result(SolveStatus.INFEASIBLE, math.nan, math.inf, runtime, None, text)
    if status in (S.kUnbounded, S.kUnboundedOrInfeasible):
        kind = SolveStatus.UNBOUNDED
        if status == S.kUnboundedOrInfeasible:
            kind = _unbounded_or_infeasible(model, time_limit)
        bound = math.inf if kind is SolveStatus.INFEASIBLE else -math.inf
        return _result(kind, math.nan, bound, runtime, None, text)
    if status == S.kTimeLimit:
        bound = float(info.mip_dual_bound) if model.is_mip else -math.inf
        if not np.isfinite(bound):
            bound = -math.inf
        if x is not None and model.is_mip:
            return _result(SolveStatus.TIME_LIMIT, objective, bound, runtime, x, text)
        return _result(SolveStatus.TIME_LIMIT_NO_SOLUTION, math.nan, bound, runtime, None, text)
    return _result(SolveStatus.ERROR, math.nan, math.nan, runtime, None, text)


def _unbounded_or_infeasible(model: LinearModel, time_limit: float | None) -> SolveStatus:
    """Unbounded or infeasible? The feasibility problem decides."""
    return unbounded_if_feasible(solve_highs(model.feasibility(), time_limit=time_limit))


def _result(
    status: SolveStatus,
    objective: float,
    bound: float,
    runtime: float,
    x: np.ndarray | None,
    text: str,
) -> SolveResult:
    return SolveResult(
        status, objective, bound, relative_gap(objective, bound), runtime, x, "highs", text
    )


def _error(model: LinearModel, text: str, runtime: float) -> SolveResult:
    return _result(SolveStatus.ERROR, math.nan, math.nan, runtime, None, f"{model.name}: {text}")
