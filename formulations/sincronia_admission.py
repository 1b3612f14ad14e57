"""The admission LP of Sincronia's online scheduler (Agarwal, Rajakrishnan, Narayan, Agarwal,
Shmoys, Vahdat; SIGCOMM 2018; docs/sincronia-online.md#admission).

At the start of each epoch the online scheduler picks, among the unfinished coflows it considers,
a set that fits in the epoch. The fractional choice is the LP

.. math::

    \\min \\sum_i w_i (1 - x_i) \\quad \\text{s.t.} \\quad
    \\sum_i p_{l,i} x_i \\le B \\ \\text{for every ingress and egress port } l, \\quad
    0 \\le x_i \\le 1,

where ``p[l, i]`` is the time coflow ``i`` still needs on port ``l`` alone (remaining bytes over
the port's capacity) and ``B`` the epoch's budget; a coflow is admitted when ``x_i ≥ 1/2``
(the rounding of the paper's online scheme and of its public simulator). This is a fractional
multi-dimensional knapsack: a basic optimal solution has at most ``2m`` fractional values, and
rounding at 1/2 admits a set that needs at most ``2B`` on every port.

The model is built here (:func:`admission_model`, one sparse block) and solved through the
solver layer (:func:`solve_admission`, HiGHS by default); it is not a ``coflowlab solve`` method
of its own, so it has no registry entry. The online scheduler solves one such LP per epoch (about
15,000 on the Facebook trace), each in about a millisecond, so with HiGHS and default settings
two things save time, neither changing the answer, and a third one the scheduler asks for:

- an LP whose optimum is known exactly is not solved (:func:`separable_solution`: no port that
  could overflow is shared by two candidates, so the LP splits into one-variable LPs; this
  covers one candidate and candidates that all fit together; 6,075 of the 15,728 LPs of the
  Facebook trace);
- the others are handed to HiGHS directly (:func:`_solve_direct`: the same ``HighsLp`` and
  options as the solver layer builds, without the general model builder, whose sparse-matrix
  assembly cost more than the solve), on one ``Highs`` object per thread, cleared between LPs
  (constructing one cost about a fifth of the solve);
- with ``vertex=True``, an LP whose optimum a simplex basis proves unique is answered by a
  small compiled simplex (:func:`unique_vertex`; 9,603 of the 9,653 that do not split), unless
  a value is near 1/2: the same admitted set as HiGHS's, the values within HiGHS's
  tolerances of its but not its bits (docs/sincronia-online.md#fill-and-lp).
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from coflowlab.exceptions import SolverError
from coflowlab.solvers import LinearModel, ModelBuilder, SolverOptions, SolveStatus, solve

__all__ = [
    "ADMIT_AT",
    "ADMIT_TOL",
    "SEPARABLE_MARGIN",
    "VERTEX_MARGIN",
    "Admission",
    "admission_model",
    "separable_solution",
    "solve_admission",
    "unique_vertex",
]

FloatArray = npt.NDArray[np.float64]

ADMIT_AT = 0.5
"""The rounding threshold: coflow ``i`` is admitted when ``x_i ≥ ADMIT_AT - ADMIT_TOL``."""

ADMIT_TOL = 1e-9
"""Slack on the rounding threshold, so that a value the LP makes exactly 1/2 is admitted
whatever the solver's last bit (the public simulator compares ``x < 0.5`` exactly)."""

SEPARABLE_MARGIN = 1e-6
""":func:`solve_admission` takes :func:`separable_solution`'s answer only when every value is
farther than this from :data:`ADMIT_AT`; closer, the LP is solved, so that the admitted set is
the solver's whatever its last bits (HiGHS's answer is within its feasibility tolerance,
``1e-7``, of the unique optimum)."""

VERTEX_MARGIN = 0.05
""":func:`solve_admission` takes :func:`unique_vertex`'s answer only when every value is
farther than this from :data:`ADMIT_AT`; closer, HiGHS decides. HiGHS stops within its
tolerances of the optimum, and where the objective is flat that can be far from it in ``x``:
on the Facebook trace its values differ from the exact optimum's by up to 0.0027 (in 19 of
the 9,653 LPs by more than 10^-6); 0.05 is about twenty times that. 43 of those LPs have a
value that close to 1/2."""

VERTEX_MAX_CANDIDATES = 64
"""Above this many candidates :func:`solve_admission` leaves the LP to HiGHS (the dense
simplex of :func:`unique_vertex` costs ``ports × candidates`` a pivot)."""

_PIVOT_TOL = 1e-11
_GAIN_TOL = 1e-12
_DUAL_TOL = 1e-7
_FEASIBILITY_TOL = 1e-9
"""Tolerances of :func:`unique_vertex` on the LP scaled to a budget of 1 (the last two relative
to the largest weight): a pivot element, a reduced cost that still improves, the least reduced
cost that proves the optimum unique (HiGHS's dual feasibility tolerance), a row or bound
violation."""

Method = Literal["empty", "separable", "vertex", "highs", "solver"]


@dataclass(frozen=True)
class Admission:
    """The solved admission LP of one epoch.

    Attributes
    ----------
    x
        ``(k,)`` the LP values, one per candidate, in the order the candidates were given.
    admitted
        ``(k,)`` booleans: ``x ≥ 1/2`` (within :data:`ADMIT_TOL`).
    objective
        The LP value ``Σ w (1 - x)``: the weight the epoch fractionally leaves out.
    budget
        The budget ``B`` the ports had.
    method
        How it was solved: ``"empty"`` (no candidate), ``"separable"`` (the exact answer of
        :func:`separable_solution`, no solver), ``"vertex"`` (the optimum of
        :func:`unique_vertex`, proved unique, no solver), ``"highs"`` (HiGHS directly, default
        settings) or ``"solver"`` (the solver layer, other settings).
    """

    x: FloatArray
    admitted: npt.NDArray[np.bool_]
    objective: float
    budget: float
    method: Method = "highs"


def _checked(
    port_time: npt.ArrayLike, weight: npt.ArrayLike, budget: float
) -> tuple[FloatArray, FloatArray]:
    p = np.asarray(port_time, dtype=float)
    w = np.asarray(weight, dtype=float)
    if p.ndim != 2:
        raise ValueError(f"port_time: must be (candidates, ports), got shape {p.shape}")
    if w.shape != (p.shape[0],):
        raise ValueError(f"weight: has shape {w.shape}, expected ({p.shape[0]},)")
    bad = np.argwhere(~np.isfinite(p) | (p < 0))
    if len(bad):
        i, v = (int(a) for a in bad[0])
        raise ValueError(f"port_time[{i}, {v}] is {p[i, v]!r} (must be finite and >= 0)")
    bad_w = np.flatnonzero(~np.isfinite(w) | (w < 0))
    if len(bad_w):
        i = int(bad_w[0])
        raise ValueError(f"weight[{i}] is {w[i]!r} (must be finite and >= 0)")
    if isinstance(budget, bool) or not (math.isfinite(budget) and budget > 0):
        raise ValueError(f"budget: must be positive and finite, got {budget!r}")
    return p, w


def admission_model(port_time: npt.ArrayLike, weight: npt.ArrayLike, budget: float) -> LinearModel:
    """The admission LP of one epoch as a :class:`~coflowlab.solvers.LinearModel`.

    Parameters
    ----------
    port_time
        ``(k, 2m)`` time each candidate still needs on each port alone (ingress ports first),
        as :attr:`coflowlab.Instance.port_time` but of the remaining bytes.
    weight
        ``(k,)`` the candidates' weights.
    budget
        The time ``B`` each port offers in the epoch.

    Returns
    -------
    LinearModel
        Variables ``"x"`` (``k``, in ``[0, 1]``), objective ``Σ w − Σ w x`` (the constant is
        the model's offset), rows ``"ports"`` (one per port with any load).

    Raises
    ------
    ValueError
        A shape, a negative or non-finite entry (its index named), or a budget that is not
        positive.

    Examples
    --------
    >>> m = admission_model([[1.0, 1.0], [2.0, 2.0]], [3.0, 2.0], 2.0)
    >>> m.num_vars, m.num_rows, m.offset
    (2, 2, 5.0)
    """
    p, w = _checked(port_time, weight, budget)
    builder = ModelBuilder("sincronia-admission")
    builder.add_variables("x", p.shape[0], cost=-w, lower=0.0, upper=1.0)
    builder.offset = float(w.sum())
    used = np.flatnonzero(p.sum(axis=0) > 0)
    builder.add_rows("ports", sp.csr_matrix(p[:, used].T), upper=float(budget))
    return builder.build()


def solve_admission(
    port_time: npt.ArrayLike,
    weight: npt.ArrayLike,
    budget: float,
    *,
    options: SolverOptions | None = None,
    vertex: bool = False,
) -> Admission:
    """Solves the admission LP and rounds it at 1/2.

    Parameters
    ----------
    port_time, weight, budget
        As in :func:`admission_model`.
    options
        Solver settings (``None``: HiGHS, no time limit).
    vertex
        With the default settings, also answer without HiGHS an LP whose optimum
        :func:`unique_vertex` proves unique, unless a value is within
        :data:`VERTEX_MARGIN` of 1/2: the admitted set HiGHS gives (checked on every such LP
        of the Facebook trace), values within HiGHS's tolerances of its but not its bits
        (``method="vertex"``; :class:`coflowlab.heuristics.SincroniaOnline` with
        ``vertex_lps=True``).
        ``False`` (default): every answer is HiGHS's, bit for bit.

    Returns
    -------
    Admission

    Raises
    ------
    SolverError
        The solver did not prove an optimum (the LP is always feasible, ``x = 0``, and
        bounded, so this is a solver failure); the message names the status and the
        solver's message.

    Examples
    --------
    One port, sizes 1, 2, 3 with weights 3, 2, 1 and a budget of 2: the fractional knapsack
    takes the first whole and half of the second, so the first two are admitted.

    >>> adm = solve_admission([[1, 1], [2, 2], [3, 3]], [3, 2, 1], 2.0)
    >>> adm.x.round(9).tolist(), adm.admitted.tolist(), round(adm.objective, 9)
    ([1.0, 0.5, 0.0], [True, True, False], 2.0)
    """
    p, w = _checked(port_time, weight, budget)
    if p.shape[0] == 0:
        return Admission(np.zeros(0), np.zeros(0, dtype=bool), 0.0, float(budget), "empty")
    if options is None or options == SolverOptions():
        x_sep = _separable(p, w, float(budget))
        if x_sep is not None and not np.any(np.abs(x_sep - ADMIT_AT) <= SEPARABLE_MARGIN):
            return _known(x_sep, w, budget, "separable")
        x_vertex = _unique_vertex(p, w, float(budget)) if vertex else None
        if x_vertex is not None and not np.any(np.abs(x_vertex - ADMIT_AT) <= VERTEX_MARGIN):
            return _known(x_vertex, w, budget, "vertex")
        x, objective = _solve_direct(p, w, budget)
        return Admission(x, x >= ADMIT_AT - ADMIT_TOL, objective, float(budget), "highs")
    model = admission_model(p, w, budget)
    result = solve(model, options, interruptible=False)
    if result.status is not SolveStatus.OPTIMAL or result.x is None:
        raise SolverError(
            f"sincronia admission LP ({p.shape[0]} candidates, {p.shape[1]} ports, budget "
            f"{budget!r}): solver returned status {result.status.value!r}, not 'optimal'"
            + (f": {result.message}" if result.message else "")
        )
    x = np.clip(np.asarray(result.x, dtype=float)[model.blocks["x"]], 0.0, 1.0)
    return Admission(
        x, x >= ADMIT_AT - ADMIT_TOL, float(result.objective), float(budget), "solver"
    )


def _known(x: FloatArray, w: FloatArray, budget: float, method: Method) -> Admission:
    """The admission of an optimum found without HiGHS."""
    # HiGHS's own sum of the objective: compensated (double-double), hence fsum
    objective = math.fsum([float(w.sum()), *(-w * x)])
    return Admission(x, x >= ADMIT_AT - ADMIT_TOL, objective, float(budget), method)


def separable_solution(
    port_time: npt.ArrayLike, weight: npt.ArrayLike, budget: float
) -> FloatArray | None:
    """The admission LP's optimum when it splits into one-variable LPs, else ``None``.

    Parameters
    ----------
    port_time, weight, budget
        As in :func:`admission_model`.

    Returns
    -------
    numpy.ndarray or None
        ``x_i = min(1, B / max_l p[l, i])`` for every candidate, when every weight is positive
        and no port whose candidates together need more than ``B`` is used by two of them;
        ``None`` otherwise.

    Notes
    -----
    Why this is the LP's unique optimum. A port ``l`` with ``Σ_i p[l, i] ≤ B`` cannot be
    violated by any ``x`` in ``[0, 1]^k``, so its row may be dropped. Every remaining row has a
    single candidate ``i`` with ``p[l, i] > 0`` (the condition), so it reads
    ``x_i ≤ B / p[l, i]``, and a row with ``p[l, i] ≤ B`` is implied by ``x_i ≤ 1``. The
    feasible set is therefore the box ``Π_i [0, u_i]`` with ``u_i = min(1, B / max_l p[l, i])``
    (``1`` for a candidate with no load left), and ``Σ w_i (1 − x_i)`` with every ``w_i > 0``
    has the single minimiser ``x = u``. Any solver that proves an optimum returns ``u`` up to
    its tolerances (HiGHS, whose presolve removes the redundant rows, turns the singleton rows
    into the same bounds ``B / p`` and fixes the columns at them, returns ``u`` bit for bit on
    every such LP of the Facebook trace); :func:`solve_admission` still asks the solver when a
    value is within :data:`SEPARABLE_MARGIN` of ``1/2``. A zero weight leaves ``x_i`` free in
    ``[0, u_i]``, where the solver's choice decides the admission, so it is not covered.

    The cases it covers include one candidate, candidates with disjoint ports, and candidates
    that all fit together (``x = 1``, the offline case of docs/sincronia-online.md).

    Examples
    --------
    Two candidates on different ports, the second too large for the budget:

    >>> separable_solution([[1.0, 0.0, 1.0, 0.0], [0.0, 4.0, 0.0, 4.0]], [1.0, 1.0], 2.0)
    array([1. , 0.5])

    Sharing a port they overflow together: the LP must be solved.

    >>> separable_solution([[2.0, 2.0], [1.0, 1.0]], [1.0, 1.0], 2.0) is None
    True
    """
    p, w = _checked(port_time, weight, budget)
    return _separable(p, w, float(budget))


def _separable(p: FloatArray, w: FloatArray, b: float) -> FloatArray | None:
    """:func:`separable_solution` of checked data."""
    if not np.all(w > 0):
        return None
    nonzero = p > 0
    tight = p.sum(axis=0) > b  # the ports a choice of x could overflow
    if np.any(nonzero[:, tight].sum(axis=0) > 1):
        return None
    worst = p.max(axis=1, initial=0.0)
    x: FloatArray = np.ones(p.shape[0])
    over = worst > b  # only there is B / max_l p[l, i] below 1
    x[over] = b / worst[over]
    return x


def unique_vertex(
    port_time: npt.ArrayLike, weight: npt.ArrayLike, budget: float
) -> FloatArray | None:
    """The admission LP's optimum when a simplex basis proves it unique, else ``None``.

    Parameters
    ----------
    port_time, weight, budget
        As in :func:`admission_model`.

    Returns
    -------
    numpy.ndarray or None
        The optimal ``x``; ``None`` when the final basis does not prove the optimum unique
        (a reduced cost within ``1e-7`` of 0, relative to the largest weight: the LP may have
        several optima, or HiGHS could stop at another vertex), when there are more than
        :data:`VERTEX_MAX_CANDIDATES` candidates, or on a numerical failure.

    Notes
    -----
    The LP is small on the Facebook trace (2 to 11 candidates, up to 293 ports), so a dense
    bounded-variable primal simplex (Bland's rule, from ``x = 0``;
    :func:`._sincronia_admission_jit.vertex_simplex`) solves it in microseconds where
    HiGHS's presolve and set-up take about a millisecond.
    Only the ports whose candidates together need more than ``B`` are rows (the others hold
    for every ``x`` in the box), scaled to a budget of 1. At the final basis every non-basic
    variable (an ``x_i`` at 0 or 1, or a slack at 0) has a reduced cost ``d_j`` of the sign
    that makes leaving its bound lose: the objective of any feasible ``x`` is the optimum
    plus ``Σ d_j (x_j − v_j)`` over the non-basic variables, each term ``≤ 0`` and ``< 0``
    unless ``x_j = v_j``; so every optimum has the basis's non-basic values, which fix the
    basic ones: the optimum is unique. :func:`solve_admission` rounds it unless a value is
    within :data:`VERTEX_MARGIN` of 1/2 (then HiGHS decides, as before): HiGHS returns a
    point within its tolerances of that optimum, which rounds the same way.

    Examples
    --------
    Two candidates sharing a port that holds one and a half of them, the first heavier:

    >>> unique_vertex([[2.0, 2.0], [2.0, 2.0]], [2.0, 1.0], 3.0).tolist()
    [1.0, 0.5]

    Equal weights and sizes: every split of the port is optimal, so no answer.

    >>> unique_vertex([[2.0, 2.0], [2.0, 2.0]], [1.0, 1.0], 3.0) is None
    True
    """
    p, w = _checked(port_time, weight, budget)
    return _unique_vertex(p, w, float(budget))


def _unique_vertex(p: FloatArray, w: FloatArray, b: float) -> FloatArray | None:
    """:func:`unique_vertex` of checked data."""
    k = p.shape[0]
    scale = float(w.max(initial=0.0))
    if k == 0 or k > VERTEX_MAX_CANDIDATES or scale <= 0:
        return None
    a = np.ascontiguousarray(p[:, p.sum(axis=0) > b].T / b)
    x, certified = _simplex_kernel()(
        a, np.ascontiguousarray(w), _PIVOT_TOL, _GAIN_TOL * scale, _DUAL_TOL * scale,
        _FEASIBILITY_TOL,
    )  # fmt: skip
    if not certified or np.any(a @ x > 1.0 + _FEASIBILITY_TOL):
        return None
    result: FloatArray = x
    return result


@cache
def _simplex_kernel() -> Any:
    """:func:`._sincronia_admission_jit.vertex_simplex`, imported on first use so that
    importing this module does not import numba."""
    from ._sincronia_admission_jit import vertex_simplex

    return vertex_simplex


def _solve_direct(p: FloatArray, w: FloatArray, budget: float) -> tuple[FloatArray, float]:
    """The admission LP solved by HiGHS with default settings: ``(x, objective)``.

    The ``HighsLp`` is the one :func:`coflowlab.solvers.highs.highs_lp` makes of
    :func:`admission_model` (same columns, rows of the used ports in increasing order, each
    column's non-zeros by increasing row, the same bounds, costs and offset), passed to the
    thread's ``Highs`` object (:func:`_highs`) with the options
    :func:`coflowlab.solvers.highs.solve_highs` sets, so the answer is the solver layer's, bit
    for bit (``tests/heuristics/test_sincronia_online.py`` compares the two paths).
    """
    import highspy

    k = p.shape[0]
    used = np.flatnonzero(p.sum(axis=0) > 0)
    block = p[:, used]
    nonzero = block != 0
    inf = highspy.kHighsInf
    lp = highspy.HighsLp()
    lp.num_col_ = k
    lp.num_row_ = len(used)
    lp.col_cost_ = -w
    lp.offset_ = float(w.sum())
    lp.col_lower_ = np.zeros(k)
    lp.col_upper_ = np.ones(k)
    lp.row_lower_ = np.full(len(used), -inf)
    lp.row_upper_ = np.full(len(used), float(budget))
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.num_col_ = k
    lp.a_matrix_.num_row_ = len(used)
    lp.a_matrix_.start_ = np.concatenate(([0], np.cumsum(nonzero.sum(axis=1)))).astype(np.int32)
    lp.a_matrix_.index_ = np.nonzero(nonzero)[1].astype(np.int32)
    lp.a_matrix_.value_ = block[nonzero]
    h = _highs()
    h.clearModel()  # no model, basis or solution of the last LP is left; options stay
    h.passModel(lp)
    h.run()
    info = h.getInfo()
    if h.getModelStatus() != highspy.HighsModelStatus.kOptimal or info.primal_solution_status != 2:
        raise SolverError(
            f"sincronia admission LP ({k} candidates, {p.shape[1]} ports, budget {budget!r}): "
            f"HiGHS returned {h.modelStatusToString(h.getModelStatus())!r}, not 'Optimal'"
        )
    x = np.clip(np.array(h.getSolution().col_value, dtype=float), 0.0, 1.0)
    return x, float(info.objective_function_value)


_local = threading.local()


def _highs() -> Any:
    """This thread's ``Highs`` object for :func:`_solve_direct`, made on first use with the
    solver layer's options (no output, ``random_seed`` 0).

    Reusing it, cleared between LPs, gives a new object's answers (the same options, no
    warm start: ``clearModel`` drops the last model, basis and solution; checked bit for bit
    on every admission LP of the Facebook trace) and saves the construction, about a fifth
    of a solve. One per thread, as a ``Highs`` object is not safe to share.
    """
    h = getattr(_local, "highs", None)
    if h is None:
        from coflowlab.solvers.highs import _new_highs

        h = _new_highs(False)
        h.setOptionValue("output_flag", False)
        h.setOptionValue("random_seed", 0)
        _local.highs = h
    return h
