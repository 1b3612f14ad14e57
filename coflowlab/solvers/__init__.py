"""The solver layer: one sparse model form, three backends behind one :func:`solve`.

Formulations (``coflowlab.formulations``) build a :class:`LinearModel` with
:class:`ModelBuilder`; :func:`solve` hands it to a backend and returns a
:class:`SolveResult` (status, objective, proven bound, gap, runtime, values).

Backends:

- ``"highs"``: HiGHS through highspy, the default, always installed;
- ``"cbc"``: CBC through PuLP (which also writes ``.lp`` / ``.mps`` files);
- ``"gurobi"``: gurobipy, optional (``pip install coflowlab[gurobi]``). Its pip licence is
  size-limited; a model beyond it raises :class:`coflowlab.SolverNotAvailableError`.
"""

from __future__ import annotations

from .api import SOLVERS as SOLVERS
from .api import available_solvers as available_solvers
from .api import require_solver as require_solver
from .api import solve as solve
from .model import LinearModel as LinearModel
from .model import ModelBuilder as ModelBuilder
from .pulp_backend import write_model as write_model
from .result import SolveResult as SolveResult
from .result import SolveStatus as SolveStatus
from .result import relative_gap as relative_gap

__all__ = [
    "SOLVERS",
    "LinearModel",
    "ModelBuilder",
    "SolveResult",
    "SolveStatus",
    "available_solvers",
    "relative_gap",
    "require_solver",
    "solve",
    "write_model",
]
