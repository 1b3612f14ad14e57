"""LP and MIP formulations of coflow scheduling, their relaxations, and combinatorial bounds.

Each method builds a :class:`coflowlab.solvers.LinearModel` (sparse, vectorized), solves it
through :func:`coflowlab.solvers.solve` (HiGHS by default; CBC and Gurobi optional) and
returns a :class:`coflowlab.solution.Solution`: a verified schedule for exact methods, a
labelled lower bound for relaxations and bounds. ``coflowlab solve --list`` lists them;
formulas and sources are in docs/theory.md#qsz.
"""

from __future__ import annotations

from .bounds import bound_release_rho as bound_release_rho
from .bounds import bound_smith as bound_smith
from .deadlines import solve_deadline_fluid as solve_deadline_fluid
from .deadlines import solve_deadline_slotted as solve_deadline_slotted
from .exact_fluid import solve_exact_fluid as solve_exact_fluid
from .interval_lp import solve_interval_lp as solve_interval_lp
from .lp_ov import solve_lp_ov as solve_lp_ov
from .lp_ov import solve_lp_ov_binary as solve_lp_ov_binary
from .parallel_lp import solve_parallel_lp as solve_parallel_lp
from .registry import ENTRIES as ENTRIES
from .registry import METHODS as METHODS
from .registry import method_names as method_names
from .registry import solve_method as solve_method
from .time_indexed import solve_exact_slotted as solve_exact_slotted
from .time_indexed import solve_time_indexed_lp as solve_time_indexed_lp

__all__ = [
    "ENTRIES",
    "METHODS",
    "bound_release_rho",
    "bound_smith",
    "method_names",
    "solve_deadline_fluid",
    "solve_deadline_slotted",
    "solve_exact_fluid",
    "solve_exact_slotted",
    "solve_interval_lp",
    "solve_lp_ov",
    "solve_lp_ov_binary",
    "solve_method",
    "solve_parallel_lp",
    "solve_time_indexed_lp",
]
