"""The solver layer: one sparse model form, three backends behind one :func:`solve`.

Formulations (``coflowlab.formulations``) build a :class:`LinearModel` with
:class:`ModelBuilder`; :func:`solve` hands it to a backend and returns a
:class:`SolveResult` (status, objective, proven bound, gap, runtime, values).

Solver settings (backend, time limit, MIP gap, threads, log) travel as one frozen
:class:`SolverOptions`, which every LP/MIP-based method takes as ``options``.

Backends:

- ``"highs"``: HiGHS through highspy, the default, always installed;
- ``"cbc"``: CBC through PuLP (which also writes ``.lp`` / ``.mps`` files);
- ``"gurobi"``: gurobipy, optional (``pip install coflowlab[gurobi]``). Its pip licence is
  size-limited; a model beyond it raises :class:`coflowlab.SolverNotAvailableError`.

No backend writes to standard output (logs go to standard error with
``SolverOptions(log=True)``).
:class:`WarmLP` keeps one HiGHS LP across solves, for warm starts from a basis (carried over
from a related LP by :func:`carry_basis`).
:func:`interruptible` turns Ctrl-C into a graceful stop (status ``interrupted``, with the
incumbent and bound) and routes progress reports to a hook (:mod:`.control`).
"""

from __future__ import annotations

from .api import SOLVERS as SOLVERS
from .api import available_solvers as available_solvers
from .api import require_solver as require_solver
from .api import solve as solve
from .control import ProgressHook as ProgressHook
from .control import ProgressReporter as ProgressReporter
from .control import SolveControl as SolveControl
from .control import SolveProgress as SolveProgress
from .control import current_control as current_control
from .control import interrupt_requested as interrupt_requested
from .control import interruptible as interruptible
from .control import request_interrupt as request_interrupt
from .control import stderr_progress as stderr_progress
from .highs_lp import WarmLP as WarmLP
from .highs_lp import carry_basis as carry_basis
from .model import LinearModel as LinearModel
from .model import ModelBuilder as ModelBuilder
from .options import SOLVER_NAMES as SOLVER_NAMES
from .options import SolverOptions as SolverOptions
from .pulp_backend import write_model as write_model
from .result import SolveResult as SolveResult
from .result import SolveStatus as SolveStatus
from .result import relative_gap as relative_gap

__all__ = [
    "SOLVERS",
    "SOLVER_NAMES",
    "LinearModel",
    "ModelBuilder",
    "ProgressHook",
    "ProgressReporter",
    "SolveControl",
    "SolveProgress",
    "SolveResult",
    "SolveStatus",
    "SolverOptions",
    "WarmLP",
    "available_solvers",
    "carry_basis",
    "current_control",
    "interrupt_requested",
    "interruptible",
    "relative_gap",
    "request_interrupt",
    "require_solver",
    "solve",
    "stderr_progress",
    "write_model",
]
