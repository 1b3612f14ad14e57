"""LP and MIP formulations of coflow scheduling, their relaxations, and combinatorial bounds.

Each method builds a :class:`coflowlab.solvers.LinearModel` (sparse, vectorized), solves it
through :func:`coflowlab.solvers.solve` (HiGHS by default; CBC and Gurobi optional) and
returns a :class:`coflowlab.solution.Solution`: a verified schedule for exact methods, a
labelled lower bound for relaxations and bounds. ``coflowlab solve --list`` lists them;
formulas and sources are in ``specs/theory.md`` §2, §3, §5 and §7.
"""

from __future__ import annotations

from .registry import METHODS as METHODS
from .registry import MethodEntry as MethodEntry
from .registry import method_names as method_names
from .registry import solve_method as solve_method

__all__ = ["METHODS", "MethodEntry", "method_names", "solve_method"]
