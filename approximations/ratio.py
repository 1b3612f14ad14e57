"""Approximation ratios: an algorithm's verified cost over a certified reference value.

:func:`ratio` runs a registered algorithm and divides its verified ``Σ w C`` by one of

- ``"opt"``: the optimum proven by the exact solver of the algorithm's time model
  (``exact-fluid``, or ``exact-slotted`` for slotted algorithms such as QSZ). Only for
  instances the exact method can take (:class:`coflowlab.ModelTooLargeError` otherwise); a
  solve that stops before proving optimality is an error, never a silent bound;
- ``"lp"``: the LP the algorithm's guarantee is stated against (LP-OV, interval LP or
  time-indexed LP); for the combinatorial orderings, LP-OV, the strongest of the polynomial
  LPs here (docs/theory.md#lp-ov);
- ``"dual"``: the primal-dual dual objective (Mastrolilli et al. 2010), which needs no solver.

All three are lower bounds on OPT of the algorithm's time model, so every ratio is at least 1
up to the solvers' tolerance (:data:`coflowlab.solution.OBJECTIVE_RTOL`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Literal

from coflowlab.exceptions import SolverError
from coflowlab.instance import Instance
from coflowlab.solution import Solution
from coflowlab.solvers import SolverOptions, SolveStatus
from coflowlab.time_models import TimeModel

from .primal_dual import primal_dual_order
from .registry import METHODS, run_method

__all__ = ["LP_REFERENCES", "Ratio", "ratio"]

Reference = Literal["opt", "lp", "dual"]

LP_REFERENCES = ("lp-ov", "interval-lp", "time-indexed-lp")
"""Bound sources that are LP optima (an algorithm measured against one of these uses it for
``reference="lp"``)."""


@dataclass(frozen=True)
class Ratio:
    """An algorithm's cost against a certified reference.

    Attributes
    ----------
    method, reference
        The algorithm and what it is measured against (``"opt"``, ``"lp"`` or ``"dual"``).
    reference_method
        The method that computed the reference (``"exact-fluid"``, ``"lp-ov"``, ``"dual"``...).
    value, reference_value
        The verified ``Σ w C`` and the reference (a proven optimum or a lower bound).
    ratio
        ``value / reference_value``.
    solution
        The algorithm's full result.
    """

    method: str
    reference: str
    reference_method: str
    value: float
    reference_value: float
    ratio: float
    solution: Solution


def _reference(
    instance: Instance, sol: Solution, reference: Reference, options: SolverOptions
) -> tuple[str, float]:
    from coflowlab.formulations import solve_method

    # the reference is proven to the default gap, whatever gap the algorithm was given, and
    # solves quietly: only the backend, time limit and threads carry over
    ref_options = replace(options, mip_gap=SolverOptions().mip_gap, log=False)
    if reference == "dual":
        return "dual", primal_dual_order(instance).dual_objective
    if reference == "lp":
        if sol.bound_source in LP_REFERENCES:
            return str(sol.bound_source), sol.bound
        lp = solve_method(instance, "lp-ov", options=ref_options)
        if lp.status is not SolveStatus.OPTIMAL:
            raise SolverError(f"ratio: LP-OV ended with status {lp.status.value}; no bound")
        return "lp-ov", lp.objective
    if reference == "opt":
        model = METHODS[sol.method].model
        exact = "exact-slotted" if model is TimeModel.SLOTTED else "exact-fluid"
        opt = solve_method(instance, exact, options=ref_options)
        if opt.status is not SolveStatus.OPTIMAL:
            raise SolverError(
                f"ratio: {exact} ended with status {opt.status.value} (gap {opt.gap:.3g}) on "
                f"this instance, so OPT is not proven; use reference='lp' or 'dual', or a "
                "longer time_limit"
            )
        return exact, opt.objective
    raise ValueError(f"reference must be 'opt', 'lp' or 'dual', got {reference!r}")


def ratio(
    instance: Instance,
    algorithm: str,
    reference: Reference = "opt",
    options: SolverOptions | None = None,
    **params: Any,
) -> Ratio:
    """Runs ``algorithm`` on ``instance`` and measures it against ``reference``.

    Parameters
    ----------
    instance
        The instance.
    algorithm
        A registered approximation method (:data:`coflowlab.approximations.METHODS`).
    reference
        ``"opt"`` (exact optimum; small instances only), ``"lp"`` or ``"dual"`` (module
        docstring).
    options
        Solver settings, see :class:`~coflowlab.solvers.SolverOptions`: for the algorithm
        when it solves an LP, and for the reference's solve (backend, time limit and threads;
        the reference keeps the default ``mip_gap`` and no log).
    **params
        The algorithm's parameters.

    Raises
    ------
    ModelTooLargeError
        ``reference="opt"`` on an instance too large for the exact method (the message says
        which limit and what to use instead).
    SolverError
        The reference solve did not prove its value (time limit).

    Examples
    --------
    Instance I3 (docs/theory.md#instances): the primal-dual order costs 5 against OPT 4.

    >>> from coflowlab.instances.examples import theory_i3
    >>> r = ratio(theory_i3(), "primal-dual", "opt")
    >>> r.reference_method, r.value, round(r.reference_value, 9), round(r.ratio, 9)
    ('exact-fluid', 5.0, 4.0, 1.25)
    >>> round(ratio(theory_i3(), "lp-ov-ls", "lp", SolverOptions(time_limit=60)).ratio, 9)
    1.0
    """
    options = options or SolverOptions()
    if algorithm in METHODS and METHODS[algorithm].takes_options():
        params = {**params, "options": options}
    sol = run_method(instance, algorithm, **params)
    name, ref = _reference(instance, sol, reference, options)
    value = sol.objective
    return Ratio(
        algorithm, reference, name, value, ref, value / ref if ref > 0 else float("nan"), sol
    )
