"""Solver settings, one frozen object: what every LP/MIP-based method takes as ``options``."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

__all__ = ["SOLVER_NAMES", "SolverOptions"]

SOLVER_NAMES = ("highs", "cbc", "gurobi")
"""The LP/MIP backends, default first."""


@dataclass(frozen=True)
class SolverOptions:
    """How to run the LP/MIP solver of a method.

    Attributes
    ----------
    solver
        ``"highs"`` (default, always installed), ``"cbc"`` (PuLP) or ``"gurobi"``.
    time_limit
        Wall seconds for the solver (``None``: no limit). A MIP stopped by it returns its best
        schedule, its proven bound and the gap.
    mip_gap
        Relative gap at which a MIP counts as solved, in ``[0, 1)``.
    threads
        Solver threads (``None``: the solver's default).
    log
        Show the solver's log, on standard error.

    Raises
    ------
    ValueError
        On construction, naming the field, for a value outside its range.

    Examples
    --------
    >>> SolverOptions(time_limit=10).mip_gap
    1e-06
    >>> SolverOptions(solver="xpress")
    Traceback (most recent call last):
    ...
    ValueError: SolverOptions.solver: 'xpress' is not one of highs, cbc, gurobi
    """

    solver: str = "highs"
    time_limit: float | None = None
    mip_gap: float = 1e-6
    threads: int | None = None
    log: bool = False

    def __post_init__(self) -> None:
        if self.solver not in SOLVER_NAMES:
            raise ValueError(
                f"SolverOptions.solver: {self.solver!r} is not one of {', '.join(SOLVER_NAMES)}"
            )
        if self.time_limit is not None and not (
            isinstance(self.time_limit, int | float)
            and not isinstance(self.time_limit, bool)
            and math.isfinite(self.time_limit)
            and self.time_limit > 0
        ):
            raise ValueError(
                f"SolverOptions.time_limit: must be positive and finite seconds or None, "
                f"got {self.time_limit!r}"
            )
        if isinstance(self.mip_gap, bool) or not (
            isinstance(self.mip_gap, int | float) and 0 <= self.mip_gap < 1
        ):
            raise ValueError(f"SolverOptions.mip_gap: must be in [0, 1), got {self.mip_gap!r}")
        if self.threads is not None and (
            isinstance(self.threads, bool) or not isinstance(self.threads, int) or self.threads < 1
        ):
            raise ValueError(
                f"SolverOptions.threads: must be a positive integer or None, got {self.threads!r}"
            )
        if not isinstance(self.log, bool):
            raise ValueError(f"SolverOptions.log: must be True or False, got {self.log!r}")

    def to_dict(self) -> dict[str, Any]:
        """The settings as a JSON-ready dict."""
        return asdict(self)
