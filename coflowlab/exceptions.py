"""Every exception and warning coflowlab raises, in one place.

The hierarchy follows networkx's: one base class, then one class per kind of failure, so
callers can catch exactly what they can handle. Messages always name the offending object
(file and line, coflow and flow index, field, port) so that a researcher can find it.
"""

from __future__ import annotations

__all__ = [
    "CoflowlabError",
    "InfeasibleScheduleError",
    "InvalidInstanceError",
    "InvalidScheduleError",
    "ModelTooLargeError",
    "ScalingWarning",
    "SolverError",
    "SolverNotAvailableError",
    "TraceFormatError",
]


class CoflowlabError(Exception):
    """Base class of every error raised by coflowlab."""


class InvalidInstanceError(CoflowlabError, ValueError):
    """An instance's data is invalid; the message names the coflow, flow and field.

    Attributes
    ----------
    field
        The :class:`~coflowlab.Instance` argument at fault (``"flow_size"``,
        ``"coflow_release"``, ``"ingress_capacity"``, ...), or ``None``; readers use it with
        ``index`` to point at the file's line and field.
    index
        The entry of ``field`` at fault (flow, coflow, port or dependency index), or ``None``.
    """

    def __init__(self, message: str, *, field: str | None = None, index: int | None = None):
        super().__init__(message)
        self.field = field
        self.index = index


class InvalidScheduleError(CoflowlabError, ValueError):
    """A schedule object is malformed (shapes, non-finite values, unknown flow indices).

    Feasibility problems (capacity, bytes, release times) are not errors of this kind: the
    verifier reports them as violations.
    """


class InfeasibleScheduleError(CoflowlabError):
    """A schedule failed verification; raised by ``VerificationReport.raise_if_infeasible``."""


class TraceFormatError(CoflowlabError, ValueError):
    """A trace or instance file is malformed.

    Attributes
    ----------
    path
        The file that was read (``None`` for in-memory text).
    line
        The 1-based line number, or ``None`` when the problem is not tied to one line.
    field
        The name of the offending field, or ``None``.
    reason
        What is wrong, in words.
    """

    def __init__(
        self,
        reason: str,
        *,
        path: str | None = None,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        self.path = path
        self.line = line
        self.field = field
        self.reason = reason
        where = path if path is not None else "<text>"
        if line is not None:
            where += f", line {line}"
        if field is not None:
            where += f", field {field}"
        super().__init__(f"{where}: {reason}")


class ModelTooLargeError(CoflowlabError, ValueError):
    """An instance is too large for a method: the message names the method, the size the
    model would need (variables, rows or slots) and the limit, and suggests an alternative."""


class SolverNotAvailableError(CoflowlabError):
    """A requested solver backend is not installed or not licensed for the model's size."""


class SolverError(CoflowlabError):
    """A solver backend failed in a way that is not a status (crash, unexpected output)."""


class ScalingWarning(UserWarning):
    """Sizes or times span so many orders of magnitude that tolerances become unreliable."""
