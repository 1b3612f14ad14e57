"""Numba kernel of :mod:`coflowlab.formulations.sincronia_admission` (:func:`vertex_simplex`,
for :func:`~coflowlab.formulations.sincronia_admission.unique_vertex`), at module level
(numba's disk cache finds a kernel again in a new process only when it is a module global)."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def vertex_simplex(
    a, c, pivot_tol, gain_tol, dual_tol, feasibility_tol
):  # pragma: no cover - numba
    """Maximises ``c·x`` subject to ``a x ≤ 1`` and ``0 ≤ x ≤ 1`` (``a`` non-negative, the
    admission LP's rows over the budget) by the bounded-variable primal simplex method with
    Bland's rule, from ``x = 0``; returns ``(x, certified)``.

    ``certified``: the final basis proves that ``x`` is the LP's unique optimum: every
    non-basic variable (a structural at a bound or a slack at 0) has a reduced cost farther
    than ``dual_tol`` from 0 on its bound's side, so moving it off its bound loses at least
    that much per unit, and the basic values follow from the non-basic ones. ``False`` also
    when a basic value is off its bounds by more than ``feasibility_tol`` or an iteration
    limit is reached (it cannot cycle under Bland's rule in exact arithmetic; rounding could
    make it). Reduced costs within ``gain_tol`` of 0 count as no gain; pivot elements within
    ``pivot_tol`` of 0 as none.

    The dictionary is dense, ``(rows, k)``: basic variables ``= beta - D · non-basic``, the
    objective ``= z0 + d · non-basic``. Variables ``0..k-1`` are the ``x``, ``k + i`` the slack
    of row ``i``.
    """
    r, k = a.shape
    d_mat = a.copy()
    beta = np.ones(r)
    d = c.copy()
    basis = np.arange(k, k + r)
    nonbasic = np.arange(k)
    at_upper = np.zeros(k, dtype=np.bool_)
    value = np.ones(r)  # the basic variables' values
    optimal = False
    for _ in range(50 * (r + k) + 100):
        # entering: the lowest-numbered non-basic variable whose move gains (Bland)
        j = -1
        for q in range(k):
            gains = (d[q] > gain_tol and not at_upper[q]) or (d[q] < -gain_tol and at_upper[q])
            if gains and (j < 0 or nonbasic[q] < nonbasic[j]):
                j = q
        if j < 0:
            optimal = True
            break
        step = -1.0 if at_upper[j] else 1.0
        # ratio test: the entering variable's own bound (1 for an x, none for a slack) or the
        # first basic variable to reach a bound; ties to the lowest-numbered (Bland)
        t_best = 1.0 if nonbasic[j] < k else np.inf
        leave = -1
        for i in range(r):
            coef = d_mat[i, j] * step  # the basic variable moves by -coef per unit
            if coef > pivot_tol:
                limit = max(value[i], 0.0) / coef
            elif coef < -pivot_tol and basis[i] < k:
                limit = max(1.0 - value[i], 0.0) / -coef
            else:
                continue
            if limit < t_best or (limit == t_best and leave >= 0 and basis[i] < basis[leave]):
                t_best = limit
                leave = i
        if not np.isfinite(t_best):
            return np.zeros(k), False  # unbounded: impossible for this LP, so numerical
        if leave < 0:
            at_upper[j] = not at_upper[j]  # a bound flip, the basis stays
        else:
            to_upper = d_mat[leave, j] * step < 0.0  # the leaving variable reached 1
            # the pivot: row `leave` solved for the entering variable, substituted elsewhere
            piv = d_mat[leave, j]
            beta[leave] /= piv
            for q in range(k):
                d_mat[leave, q] /= piv
            d_mat[leave, j] = 1.0 / piv
            for i in range(r):
                f = d_mat[i, j]
                if i != leave and f != 0.0:
                    beta[i] -= f * beta[leave]
                    for q in range(k):
                        d_mat[i, q] -= f * d_mat[leave, q]
                    d_mat[i, j] = -f * d_mat[leave, j]
            f = d[j]
            for q in range(k):
                d[q] -= f * d_mat[leave, q]
            d[j] = -f * d_mat[leave, j]
            basis[leave], nonbasic[j] = nonbasic[j], basis[leave]
            at_upper[j] = to_upper
        for i in range(r):  # the basic values, from the non-basic ones
            v = beta[i]
            for q in range(k):
                if at_upper[q]:
                    v -= d_mat[i, q]
            value[i] = v
    if not optimal:
        return np.zeros(k), False
    x = np.zeros(k)
    certified = True
    for q in range(k):
        certified = certified and abs(d[q]) > dual_tol
        if nonbasic[q] < k and at_upper[q]:
            x[nonbasic[q]] = 1.0
    for i in range(r):
        top = 1.0 if basis[i] < k else np.inf
        if not -feasibility_tol <= value[i] <= top + feasibility_tol:
            certified = False  # rounding drove a basic variable out of its bounds
        if basis[i] < k:
            x[basis[i]] = min(max(value[i], 0.0), 1.0)
    return x, certified
