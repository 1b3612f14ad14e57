"""A HiGHS LP that can be re-solved from a basis: warm starts for sequences of related LPs.

A branch and bound solves many LPs that differ little from one another (a child's LP is its
parent's with one more event; a node's LPs at several weights differ only in one cost). The
simplex method restarted from an optimal basis of a related LP usually needs far fewer
iterations than from scratch (Bixby, "Solving real-world linear programs: a decade and more
of progress", *Operations Research* 50(1), 2002, §4: warm-started dual and primal simplex in
branch and bound). :class:`WarmLP` keeps one ``highspy.Highs`` object per model, so that a
cost can be changed and the model re-solved from the basis HiGHS holds, and accepts a basis
carried over from another model (:func:`carry_basis`): columns and rows are matched by
caller-supplied integer *keys* (what the column or row means), unmatched columns start
nonbasic at their lower bound and unmatched rows basic. Such a basis need not be square or
nonsingular; it is handed to HiGHS as an *alien* basis, which HiGHS completes to an
invertible one (``HighsBasis.alien``).

A warm solve runs without presolve (presolve would discard the basis) and with the primal
simplex: a carried basis is close to primal feasible but, after a change of costs, rarely
dual feasible (measured on exact-fluid node LPs: the dual simplex from such a basis took
more iterations than from scratch, the primal one about half; ``benchmarks/bench_exact.py``).
A cold solve uses HiGHS's defaults, as :func:`coflowlab.solvers.solve` does, or its
interior-point method with crossover (``ipm=True``): on large, sparse LPs it can beat the
simplex even from a good basis (measured on exact-fluid node LPs with more than about 4,000
columns; the module notes of :mod:`coflowlab.formulations.exact_fluid`), and crossover leaves
an optimal basis to warm-start from, as a simplex solve does.

The solve is not interruptible by callbacks (the caller polls between its short solves) and
writes nothing on standard output (the banner guard of :mod:`coflowlab.solvers.highs`).
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np
import numpy.typing as npt

from .highs import _new_highs, highs_lp
from .model import LinearModel
from .result import SolveResult, SolveStatus, relative_gap

__all__ = ["BASIC", "LOWER", "UPPER", "Basis", "WarmLP", "carry_basis"]

LOWER = 0
"""Basis status: nonbasic at the lower bound (``HighsBasisStatus.kLower``)."""
BASIC = 1
"""Basis status: basic (``HighsBasisStatus.kBasic``)."""
UPPER = 2
"""Basis status: nonbasic at the upper bound (``HighsBasisStatus.kUpper``)."""

IntArray = npt.NDArray[np.int64]
Basis = tuple[npt.NDArray[np.int8], npt.NDArray[np.int8]]
"""A basis as two arrays of statuses (:data:`LOWER`, :data:`BASIC`, :data:`UPPER`, ...):
per column, per row."""


def carry_basis(
    source_keys: tuple[IntArray, IntArray], source: Basis, target_keys: tuple[IntArray, IntArray]
) -> Basis:
    """A basis for a target model from a basis of a source model: each target column or row
    takes the status of the source column or row with the same key; the others start
    nonbasic at the lower bound (columns) or basic (rows: the slack is basic).

    Parameters
    ----------
    source_keys, target_keys
        Per model: the keys of its columns and of its rows (distinct within each array).
    source
        The source model's basis.

    Examples
    --------
    >>> import numpy as np
    >>> keys = (np.array([10, 20, 30]), np.array([7]))
    >>> basis = (np.array([1, 0, 2], np.int8), np.array([2], np.int8))
    >>> cols, rows = carry_basis(keys, basis, (np.array([30, 40, 10]), np.array([7, 8])))
    >>> cols.tolist(), rows.tolist()
    ([2, 0, 1], [2, 1])
    """
    return (
        _carry(source_keys[0], source[0], target_keys[0], LOWER),
        _carry(source_keys[1], source[1], target_keys[1], BASIC),
    )


def _carry(
    keys: IntArray, status: npt.NDArray[np.int8], target: IntArray, default: int
) -> npt.NDArray[np.int8]:
    out = np.full(len(target), default, dtype=np.int8)
    if not len(keys) or not len(target):
        return out
    order = np.argsort(keys, kind="stable")
    pos = np.minimum(np.searchsorted(keys, target, sorter=order), len(keys) - 1)
    hit = keys[order[pos]] == target
    out[hit] = status[order[pos[hit]]]
    return out


class WarmLP:
    """One LP held by HiGHS across solves (module notes).

    Parameters
    ----------
    model
        The LP (no integer variables).

    Examples
    --------
    ``min x + y`` subject to ``x + y ≥ 1``; then the cost of ``x`` raised to 3, re-solved
    from the first optimal basis:

    >>> import scipy.sparse as sp
    >>> from coflowlab.solvers import ModelBuilder
    >>> b = ModelBuilder("toy")
    >>> _ = b.add_variables("x", 2, cost=[1.0, 2.0])
    >>> _ = b.add_rows("cover", sp.csr_matrix([[1.0, 1.0]]), lower=[1.0])
    >>> lp = WarmLP(b.build())
    >>> lp.solve().objective
    1.0
    >>> lp.set_cost(0, 3.0)
    >>> res = lp.solve(warm=True)
    >>> res.objective, res.x.tolist()
    (2.0, [0.0, 1.0])
    """

    def __init__(self, model: LinearModel) -> None:
        import highspy

        if model.is_mip:
            raise ValueError("WarmLP solves LPs only")
        self.model = model
        self._highspy = highspy
        h = _new_highs(False)
        h.setOptionValue("output_flag", False)
        h.setOptionValue("random_seed", 0)  # determinism across runs
        lp = highs_lp(highspy, model)
        if h.passModel(lp) == highspy.HighsStatus.kError:
            raise ValueError(f"{model.name}: HiGHS rejected the model")
        self._h = h
        self.iterations = 0
        """Simplex iterations of the last solve."""
        self.ipm_iterations = 0
        """Interior-point iterations of the last solve (0 unless ``ipm``)."""
        self._status = list(highspy.HighsBasisStatus.__members__.values())
        self._status.sort(key=int)

    def set_cost(self, col: int, cost: float) -> None:
        """Changes one objective coefficient (HiGHS keeps its basis)."""
        self._h.changeColCost(int(col), float(cost))

    def set_basis(self, basis: Basis) -> bool:
        """Hands HiGHS a start basis (an alien one: HiGHS makes it square and invertible);
        whether HiGHS accepted it."""
        table = self._status
        b = self._highspy.HighsBasis()
        b.col_status = [table[s] for s in basis[0].tolist()]
        b.row_status = [table[s] for s in basis[1].tolist()]
        b.valid = True
        b.alien = True
        return bool(self._h.setBasis(b) != self._highspy.HighsStatus.kError)

    def basis(self) -> Basis:
        """HiGHS's current basis (after an optimal solve: an optimal basis)."""
        b = self._h.getBasis()
        cols, rows = b.col_status, b.row_status  # each access builds a new list
        return (
            np.array([s.value for s in cols], dtype=np.int8),
            np.array([s.value for s in rows], dtype=np.int8),
        )

    def solve(
        self, *, warm: bool = False, time_limit: float | None = None, ipm: bool = False
    ) -> SolveResult:
        """Solves from HiGHS's current basis (``warm``: no presolve, primal simplex) or
        from scratch (HiGHS's defaults, or with ``ipm`` its interior-point method followed
        by crossover, so that an optimal basis is held afterwards as after a simplex
        solve); the result as :func:`coflowlab.solvers.solve` returns it (``optimal``,
        ``infeasible``, ``time_limit_no_solution``, ``unbounded`` or ``error``, the latter
        also past an iteration limit of 20 per row and column when ``warm``)."""
        if warm and ipm:
            raise ValueError("WarmLP.solve: a warm solve runs the simplex method, not ipm")
        h, highspy = self._h, self._highspy
        h.setOptionValue("presolve", "off" if warm else "choose")
        h.setOptionValue("solver", "simplex" if warm else "ipm" if ipm else "choose")
        h.setOptionValue("run_crossover", "on")
        h.setOptionValue("simplex_strategy", 4 if warm else 1)  # 4: primal, 1: dual
        h.setOptionValue("time_limit", math.inf if time_limit is None else float(time_limit))
        # a safety net for a warm start that stalls: past the limit, status "error" (the
        # caller re-solves from scratch)
        limit = 20 * (self.model.num_rows + self.model.num_vars) + 10_000 if warm else 2**31 - 1
        h.setOptionValue("simplex_iteration_limit", limit)
        begin = time.perf_counter()
        h.run()
        runtime = time.perf_counter() - begin
        info = h.getInfo()
        self.iterations = int(info.simplex_iteration_count)
        self.ipm_iterations = int(info.ipm_iteration_count)
        status = h.getModelStatus()
        text = h.modelStatusToString(status)
        S = highspy.HighsModelStatus
        if status == S.kOptimal:
            info = h.getInfo()
            x = np.array(h.getSolution().col_value, dtype=float)
            objective = float(info.objective_function_value)
            return _result(SolveStatus.OPTIMAL, objective, objective, runtime, x, text)
        if status == S.kInfeasible:
            return _result(SolveStatus.INFEASIBLE, math.nan, math.inf, runtime, None, text)
        if status == S.kTimeLimit:
            return _result(
                SolveStatus.TIME_LIMIT_NO_SOLUTION, math.nan, -math.inf, runtime, None, text
            )
        if status == S.kUnbounded:
            return _result(SolveStatus.UNBOUNDED, math.nan, -math.inf, runtime, None, text)
        return _result(SolveStatus.ERROR, math.nan, math.nan, runtime, None, text)


def _result(
    status: SolveStatus,
    objective: float,
    bound: float,
    runtime: float,
    x: Any,
    text: str,
) -> SolveResult:
    return SolveResult(
        status, objective, bound, relative_gap(objective, bound), runtime, x, "highs", text
    )
