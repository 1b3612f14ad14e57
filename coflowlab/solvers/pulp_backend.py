"""The CBC backend (through PuLP), and ``.lp`` / ``.mps`` export of a :class:`LinearModel`.

PuLP builds a problem term by term in Python: :func:`_to_pulp` walks the CSR rows once (one
Python loop over rows, each row's terms zipped from the sparse arrays), which is the most
PuLP allows. It is slow for large models: about 1.5 s per 10⁵ nonzeros to build, and as
much again to write the MPS file CBC reads (measured on an LP with 2·10⁴ variables and 10⁵
nonzeros); prefer HiGHS there. CBC is the binary PuLP bundles
(``PULP_CBC_CMD``'s), called through PuLP's ``COIN_CMD`` class with that path (the same
binary without the deprecation warning PuLP 3.3 attaches to ``PULP_CBC_CMD``); without it,
a ``cbc`` on the ``PATH``.

What the result reports:

- ``objective``: ``c·x + offset`` at the returned values;
- ``bound``: CBC's proven bound, read from its log: the objective when the search completed,
  the incumbent minus the final gap when it stopped at the gap tolerance (message Cbc0011),
  its "best possible" when stopped by the time limit (Cbc0005). CBC prints about eight
  significant digits; the bound is lowered by half a unit of the last printed digit so that
  it stays proven. An LP solved to optimality has bound = objective;
- ``runtime``: wall seconds of writing the MPS file, running CBC and reading its solution.
"""

from __future__ import annotations

import functools
import math
import os
import re
import shutil
import sys
import tempfile
import time
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np

from ..exceptions import SolverError, SolverNotAvailableError
from .control import current_control
from .model import LinearModel
from .result import SolveResult, SolveStatus, relative_gap, unbounded_if_feasible

__all__ = ["cbc_path", "solve_cbc", "write_model"]

NO_CBC = (
    "solver 'cbc' needs the CBC binary, which this PuLP does not bundle and which is not on "
    "the PATH: install CBC (pip install 'pulp[cbc]', or the coinor-cbc package), or use "
    "--solver highs (always installed)"
)
"""The message of a missing CBC binary."""

_ILLEGAL = re.compile(r"[^A-Za-z0-9_]")
_NUMBER = r"([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)"


def cbc_path() -> str | None:
    """The CBC binary :func:`solve_cbc` runs: PuLP's bundled one, else ``cbc`` on the
    ``PATH``; ``None`` when there is none (or PuLP is not installed).

    Examples
    --------
    >>> cbc_path() is None or Path(cbc_path()).name.startswith("cbc")
    True
    """
    try:
        from pulp.apis import coin_api
    except ImportError:
        return None
    bundled = getattr(coin_api, "pulp_cbc_path", None)
    if bundled and os.path.isfile(bundled) and os.access(bundled, os.X_OK):
        return str(bundled)
    return shutil.which("cbc")


def solve_cbc(
    model: LinearModel,
    *,
    time_limit: float | None = None,
    mip_gap: float = 1e-6,
    threads: int | None = None,
    log: bool = False,
    start: np.ndarray | None = None,
    interruptible: bool = True,
) -> SolveResult:
    """Solves ``model`` with CBC (see :func:`coflowlab.solvers.solve` for the parameters).

    Deterministic: CBC runs with its fixed default seeds; with ``threads > 1`` it runs in
    its repeatable parallel mode (CBC's ``threads 100+n``).

    CBC writes its log to a file, shown on standard error with ``log=True`` once it ends;
    ``start`` goes to CBC as a MIP start (PuLP's ``warmStart``). CBC has no callbacks, so it
    reports no progress; it stops on the terminal's Ctrl-C itself (the SIGINT reaches the
    whole foreground process group; "Exiting on user event" in its log) and the result is
    labelled ``interrupted``, with its incumbent and bound. A SIGINT sent to this process
    alone does not reach CBC, which then runs to its time limit (``interruptible`` is
    accepted for a uniform signature).

    Raises
    ------
    SolverNotAvailableError
        PuLP or its CBC binary is missing.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> from coflowlab.solvers import ModelBuilder
    >>> b = ModelBuilder("toy")
    >>> x = b.add_variables("x", 2, cost=[-1.0, -1.0], upper=10.0, integer=True)
    >>> _ = b.add_rows("cap", sp.csr_matrix([[1.0, 2.0]]), upper=[3.5])
    >>> res = solve_cbc(b.build())
    >>> res.status.value, round(res.objective, 6), round(res.bound, 6)
    ('optimal', -3.0, -3.0)
    >>> (res.x.round(6) + 0.0).tolist()  # + 0.0 turns a solver's -0.0 into 0.0
    [3.0, 0.0]
    """
    path = cbc_path()
    if path is None:
        raise SolverNotAvailableError(NO_CBC)
    import pulp

    problem, columns = _to_pulp(model, with_offset=False)
    warm = start is not None and model.is_mip and not np.isnan(start).all()
    if warm:
        assert start is not None
        for var, value in zip(columns, start.tolist(), strict=True):
            if not math.isnan(value):
                var.setInitialValue(value)
    options = []
    if threads is not None and threads > 1:
        options.append(f"threads {100 + int(threads)}")  # 100+n: repeatable parallel search
    with tempfile.TemporaryDirectory(prefix="coflowlab-cbc-") as tmp:
        log_path = os.path.join(tmp, "cbc.log")
        cmd = _cbc_command()(
            path=path,
            mip=model.is_mip,
            msg=False,
            timeLimit=None if time_limit is None else float(time_limit),
            gapRel=float(mip_gap) if model.is_mip else None,
            options=options,
            logPath=log_path,
            keepFiles=False,
            warmStart=warm,
        )
        cmd.tmpDir = tmp
        begin = time.perf_counter()
        try:
            problem.solve(cmd)
        except pulp.PulpSolverError as exc:
            raise SolverError(f"model {model.name!r}: CBC failed: {exc}") from None
        runtime = time.perf_counter() - begin
        text = Path(log_path).read_text(errors="replace") if os.path.exists(log_path) else ""
    if log:  # standard output carries results only
        sys.stderr.write(text)
    values = [v.varValue for v in columns]
    x = np.array([math.nan if v is None else float(v) for v in values], dtype=float)
    result = _interpret(model, cmd.first_line, text, x, runtime, time_limit)
    control = current_control()
    if result.status is SolveStatus.INTERRUPTED and control is not None:
        control.request_interrupt()  # CBC saw the terminal's Ctrl-C: the caller stops too
    return result


def _interpret(
    model: LinearModel,
    first_line: str,
    log_text: str,
    x: np.ndarray,
    runtime: float,
    time_limit: float | None,
) -> SolveResult:
    """Maps CBC's solution-file status line and log to a :class:`SolveResult`."""
    head = first_line.strip()

    def done(status: SolveStatus, objective: float, bound: float, xs: Any) -> SolveResult:
        return SolveResult(
            status, objective, bound, relative_gap(objective, bound), runtime, xs, "cbc", head
        )

    if head.startswith("Optimal"):
        objective = model.value(x)
        if not model.is_mip:
            return done(SolveStatus.OPTIMAL, objective, objective, x)
        gap = _last_number(log_text, r"Exiting as integer gap of\s+")
        if gap is None:  # the search completed: proven at zero gap
            return done(SolveStatus.OPTIMAL, objective, objective, x)
        # CBC's gap is incumbent minus best possible, in its objective (c·x, no offset)
        bound = objective - (abs(gap.number) + gap.half_ulp)
        return done(SolveStatus.OPTIMAL, objective, min(bound, objective), x)
    if head.startswith(("Infeasible", "Integer infeasible")):
        return done(SolveStatus.INFEASIBLE, math.nan, math.inf, None)
    if head.startswith("Unbounded"):
        # CBC reports an unbounded relaxation; the model may still have no feasible point
        kind = _unbounded_or_infeasible(model, time_limit)
        return done(
            kind, math.nan, math.inf if kind is SolveStatus.INFEASIBLE else -math.inf, None
        )
    # CBC stopped by Ctrl-C says "Stopped on iterations" (or "on time") in its solution
    # file; its log tells the interrupt apart
    interrupted = head.startswith("Stopped") and (
        "Exiting on user event" in log_text or "User ctrl-c" in log_text
    )
    if head.startswith("Stopped on time") or interrupted:
        bound = -math.inf
        if model.is_mip:
            best = _last_number(log_text, r"best possible\s+")
            if best is None:
                best = _last_number(log_text, r"Lower bound:\s+")
            if best is not None and abs(best.number) < 1e49:
                bound = best.number - best.half_ulp + model.offset
        if model.is_mip and "no integer solution" not in head and not np.isnan(x).any():
            objective = model.value(x)
            kind = SolveStatus.INTERRUPTED if interrupted else SolveStatus.TIME_LIMIT
            return done(kind, objective, min(bound, objective), x)
        kind = SolveStatus.INTERRUPTED if interrupted else SolveStatus.TIME_LIMIT_NO_SOLUTION
        return done(kind, math.nan, bound, None)
    return done(SolveStatus.ERROR, math.nan, math.nan, None)


def _unbounded_or_infeasible(model: LinearModel, time_limit: float | None) -> SolveStatus:
    """Unbounded or infeasible? The feasibility problem decides."""
    return unbounded_if_feasible(solve_cbc(model.feasibility(), time_limit=time_limit))


class _Printed:
    """A number read from CBC's text, with half a unit of its last printed digit."""

    def __init__(self, token: str) -> None:
        self.number = float(token)
        exponent = Decimal(token).as_tuple().exponent
        self.half_ulp = 0.5 * 10.0 ** int(exponent) if isinstance(exponent, int) else 0.0


def _last_number(text: str, prefix: str) -> _Printed | None:
    found = re.findall(prefix + _NUMBER, text)
    return _Printed(found[-1]) if found else None


def _pulp_module() -> Any:
    try:
        import pulp
    except ImportError:
        raise SolverNotAvailableError(
            "the CBC backend and .lp/.mps export need PuLP, which is not installed: "
            "pip install pulp"
        ) from None
    return pulp


def _names(labels: dict[str, slice], count: int, default: str) -> list[str]:
    """Readable, unique PuLP names: ``<block>_<index within the block>``; entries outside
    every block (or all of them, if sanitizing block names makes two equal) get
    ``<default><position>``."""
    names = [f"{default}{k}" for k in range(count)]
    for block, span in labels.items():
        stem = _ILLEGAL.sub("_", block) or default
        for i, k in enumerate(range(*span.indices(count))):
            names[k] = f"{stem}_{i}"
    if len(set(names)) != count:
        names = [f"{default}{k}" for k in range(count)]
    return names


def _to_pulp(model: LinearModel, *, with_offset: bool) -> tuple[Any, list[Any]]:
    """The PuLP problem of ``model`` and its variables in model order.

    Every variable enters the objective (with coefficient 0 if need be), so PuLP keeps the
    ones that appear in no row. With ``with_offset``, a nonzero ``model.offset`` is the cost
    of an extra variable ``objective_offset`` fixed at 1 (PuLP's writers drop constants). A
    ranged row (both bounds finite, not equal) becomes two constraints ``<name>_lo`` and
    ``<name>_hi``; a free row is dropped."""
    pulp = _pulp_module()
    problem = pulp.LpProblem(_ILLEGAL.sub("_", model.name) or "model", pulp.LpMinimize)
    make = getattr(problem, "add_variable", None)
    if make is None:  # PuLP < 3.3

        def make(name: str, low: Any, up: Any, cat: str) -> Any:
            return pulp.LpVariable(name, low, up, cat)

    lower = [None if math.isinf(v) else v for v in model.col_lower.tolist()]
    upper = [None if math.isinf(v) else v for v in model.col_upper.tolist()]
    cats = [pulp.LpInteger if k else pulp.LpContinuous for k in model.integrality.tolist()]
    columns = [
        make(name, lo, up, cat)
        for name, lo, up, cat in zip(
            _names(model.blocks, model.num_vars, "x"), lower, upper, cats, strict=True
        )
    ]
    objective = list(zip(columns, model.c.tolist(), strict=True))
    if with_offset and model.offset != 0.0:
        # LP and MPS writers drop objective constants; a variable fixed at 1 carries it
        objective.append((make("objective_offset", 1.0, 1.0, pulp.LpContinuous), model.offset))
    problem += pulp.LpAffineExpression(objective)
    A = model.A.tocsr(copy=True)
    A.eliminate_zeros()
    indptr, indices, data = A.indptr.tolist(), A.indices.tolist(), A.data.tolist()
    row_names = _names(model.row_blocks, model.num_rows, "r")
    lows, highs = model.row_lower.tolist(), model.row_upper.tolist()
    for r in range(model.num_rows):
        lo, hi = lows[r], highs[r]
        if math.isinf(lo) and math.isinf(hi):
            continue
        a, b = indptr[r], indptr[r + 1]
        terms = [(columns[j], v) for j, v in zip(indices[a:b], data[a:b], strict=True)]
        if lo == hi:
            parts = [(pulp.LpConstraintEQ, lo, row_names[r])]
        elif math.isinf(lo):
            parts = [(pulp.LpConstraintLE, hi, row_names[r])]
        elif math.isinf(hi):
            parts = [(pulp.LpConstraintGE, lo, row_names[r])]
        else:
            parts = [
                (pulp.LpConstraintGE, lo, row_names[r] + "_lo"),
                (pulp.LpConstraintLE, hi, row_names[r] + "_hi"),
            ]
        for sense, rhs, name in parts:
            expr = pulp.LpAffineExpression(terms)
            problem.addConstraint(pulp.LpConstraint(expr, sense=sense, rhs=rhs), name)
    return problem, columns


@functools.cache
def _cbc_command() -> type:
    """PuLP's CBC driver, keeping the first line of CBC's solution file (PuLP folds
    "stopped on time" with and without an incumbent into one status)."""
    from pulp.apis.coin_api import COIN_CMD

    class StatusKeepingCbc(COIN_CMD):
        first_line = ""

        def get_status(self, filename: str) -> Any:
            with open(filename) as fh:
                self.first_line = fh.readline()
            return super().get_status(filename)

    return StatusKeepingCbc


def write_model(model: LinearModel, path: str | os.PathLike[str]) -> None:
    """Writes ``model`` as an LP file (``.lp``) or a free MPS file (``.mps``), through PuLP.

    Variables are named ``<block>_<i>`` after the model's variable blocks and rows
    ``<row block>_<i>`` (a ranged row is two rows, ``_lo`` and ``_hi``; a free row is
    dropped). A nonzero objective offset is the cost of a variable ``objective_offset``
    fixed at 1, since neither format has a portable objective constant. PuLP prints numbers
    with 13 significant digits. The file is written
    to a temporary name and renamed, so a failure leaves nothing half-written.

    Raises
    ------
    ValueError
        The suffix is neither ``.lp`` nor ``.mps``.

    Examples
    --------
    >>> import tempfile, scipy.sparse as sp
    >>> from coflowlab.solvers import ModelBuilder
    >>> b = ModelBuilder("toy")
    >>> x = b.add_variables("x", 2, cost=[-1.0, -1.0], upper=10.0, integer=True)
    >>> _ = b.add_rows("cap", sp.csr_matrix([[1.0, 2.0]]), upper=[3.5])
    >>> with tempfile.TemporaryDirectory() as d:
    ...     write_model(b.build(), Path(d) / "toy.lp")
    ...     "cap_0: x_0 + 2 x_1 <= 3.5" in (Path(d) / "toy.lp").read_text()
    True
    """
    target = Path(path)
    suffix = target.suffix.lower()
    if suffix not in (".lp", ".mps"):
        raise ValueError(f"{target}: write_model writes .lp or .mps files, not {suffix!r}")
    problem, _ = _to_pulp(model, with_offset=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=suffix)
    os.close(fd)
    try:
        if suffix == ".lp":
            problem.writeLP(tmp)
        else:
            problem.writeMPS(tmp)
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
