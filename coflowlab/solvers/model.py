"""The one sparse form every LP and MIP of coflowlab is built in, and a builder for it.

A formulation is assembled once, block by block, as scipy.sparse matrices: no Python loop
over terms (formulations build, backends solve). Every backend in
:mod:`coflowlab.solvers` consumes the same :class:`LinearModel`:

    minimize  c·x + offset
    s.t.      row_lower ≤ A x ≤ row_upper
              col_lower ≤ x ≤ col_upper,   x_k integral where integrality[k]
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from ..exceptions import SolverError

__all__ = ["LinearModel", "ModelBuilder"]

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, eq=False)
class LinearModel:
    """A minimization LP or MIP in sparse form.

    Attributes
    ----------
    name
        A short name (the method's), used in logs and exported files.
    c
        ``(n,)`` objective coefficients.
    A
        ``(m, n)`` constraint matrix (CSR).
    row_lower, row_upper
        ``(m,)`` row bounds (``-inf`` / ``inf`` for one-sided rows).
    col_lower, col_upper
        ``(n,)`` variable bounds.
    integrality
        ``(n,)`` booleans: the variable must be integral.
    offset
        Constant added to the objective.
    blocks
        Named variable groups (``"x"``, ``"C"``, ...) as slices of the variable vector, so
        that a formulation can read its solution back.
    row_blocks
        Named constraint groups as slices of the rows.

    Examples
    --------
    >>> b = ModelBuilder("toy")
    >>> x = b.add_variables("x", 2, cost=[-1.0, -1.0], upper=10.0, integer=True)
    >>> b.add_rows("cap", sp.csr_matrix([[1.0, 2.0]]), upper=[3.5])
    slice(0, 1, None)
    >>> model = b.build()
    >>> model.num_vars, model.num_rows, model.is_mip
    (2, 1, True)
    """

    name: str
    c: FloatArray
    A: sp.csr_matrix
    row_lower: FloatArray
    row_upper: FloatArray
    col_lower: FloatArray
    col_upper: FloatArray
    integrality: npt.NDArray[np.bool_]
    offset: float = 0.0
    blocks: dict[str, slice] = field(default_factory=dict)
    row_blocks: dict[str, slice] = field(default_factory=dict)

    def __post_init__(self) -> None:
        n, m = len(self.c), len(self.row_lower)
        if self.A.shape != (m, n):
            raise SolverError(
                f"model {self.name!r}: A has shape {self.A.shape}, expected {(m, n)}"
            )
        for label, arr, size in (
            ("row_upper", self.row_upper, m),
            ("col_lower", self.col_lower, n),
            ("col_upper", self.col_upper, n),
            ("integrality", self.integrality, n),
        ):
            if len(arr) != size:
                raise SolverError(
                    f"model {self.name!r}: {label} has length {len(arr)}, not {size}"
                )
        if not np.all(np.isfinite(self.c)) or not np.all(np.isfinite(self.A.data)):
            raise SolverError(f"model {self.name!r}: non-finite objective or matrix entry")
        for label, lo, hi in (
            ("row", self.row_lower, self.row_upper),
            ("variable", self.col_lower, self.col_upper),
        ):
            bad = np.flatnonzero(~(lo <= hi))
            if bad.size:
                k = int(bad[0])
                raise SolverError(
                    f"model {self.name!r}: {label} {k} has lower bound {lo[k]} > upper {hi[k]}"
                )

    @property
    def num_vars(self) -> int:
        """Number of variables."""
        return len(self.c)

    @property
    def num_rows(self) -> int:
        """Number of constraints."""
        return len(self.row_lower)

    @property
    def num_integer(self) -> int:
        """Number of integral variables."""
        return int(np.count_nonzero(self.integrality))

    @property
    def is_mip(self) -> bool:
        """Whether any variable is integral."""
        return self.num_integer > 0

    def relaxed(self) -> LinearModel:
        """The LP relaxation: the same model with every integrality dropped."""
        return LinearModel(
            self.name + "-lp",
            self.c,
            self.A,
            self.row_lower,
            self.row_upper,
            self.col_lower,
            self.col_upper,
            np.zeros(self.num_vars, dtype=bool),
            self.offset,
            dict(self.blocks),
            dict(self.row_blocks),
        )

    def feasibility(self) -> LinearModel:
        """The same constraints with a zero objective: it has a solution exactly when the
        model is feasible (how backends tell unbounded from infeasible)."""
        return LinearModel(
            self.name + "-feasibility",
            np.zeros(self.num_vars),
            self.A,
            self.row_lower,
            self.row_upper,
            self.col_lower,
            self.col_upper,
            self.integrality,
        )

    def value(self, x: npt.ArrayLike) -> float:
        """The objective at ``x`` (offset included)."""
        return float(self.c @ np.asarray(x, dtype=float)) + self.offset

    def violation(self, x: npt.ArrayLike) -> float:
        """The largest absolute violation at ``x`` of a row, a variable bound or an
        integrality (0 for a feasible point; ``inf`` for a point with ``nan``).

        Examples
        --------
        >>> b = ModelBuilder("toy")
        >>> _ = b.add_variables("x", 2, upper=10.0, integer=True)
        >>> _ = b.add_rows("cap", sp.csr_matrix([[1.0, 2.0]]), upper=[3.5])
        >>> m = b.build()
        >>> m.violation([3.0, 0.0]), m.violation([2.0, 1.0]), m.violation([0.5, 0.0])
        (0.0, 0.5, 0.5)
        """
        v = np.asarray(x, dtype=float)
        if v.shape != (self.num_vars,) or np.isnan(v).any():
            return math.inf
        act = self.A @ v
        parts = [
            self.row_lower - act,
            act - self.row_upper,
            self.col_lower - v,
            v - self.col_upper,
            np.abs(v - np.round(v))[self.integrality],
        ]
        return float(max(0.0, *(p.max(initial=0.0) for p in parts)))

    def __repr__(self) -> str:
        kind = "MIP" if self.is_mip else "LP"
        return (
            f"<LinearModel {self.name!r}: {kind}, {self.num_vars} variables "
            f"({self.num_integer} integral), {self.num_rows} rows, {self.A.nnz} nonzeros>"
        )


class ModelBuilder:
    """Assembles a :class:`LinearModel` from variable blocks and sparse row blocks.

    Row blocks are sparse matrices over *all* variables added so far (columns beyond them are
    padded), so each constraint family is written once, vectorized, with ``scipy.sparse``.
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self._cost: list[FloatArray] = []
        self._lower: list[FloatArray] = []
        self._upper: list[FloatArray] = []
        self._integer: list[npt.NDArray[np.bool_]] = []
        self._rows: list[sp.csr_matrix] = []
        self._row_lower: list[FloatArray] = []
        self._row_upper: list[FloatArray] = []
        self.blocks: dict[str, slice] = {}
        self.row_blocks: dict[str, slice] = {}
        self.num_vars = 0
        self.num_rows = 0
        self.offset = 0.0

    def add_variables(
        self,
        name: str,
        count: int,
        *,
        cost: npt.ArrayLike = 0.0,
        lower: npt.ArrayLike = 0.0,
        upper: npt.ArrayLike = np.inf,
        integer: bool = False,
    ) -> slice:
        """Adds ``count`` variables named ``name``; returns their slice of the vector."""
        if name in self.blocks:
            raise SolverError(f"model {self.name!r}: variable block {name!r} added twice")
        if count < 0:
            raise SolverError(f"model {self.name!r}: negative variable count for {name!r}")
        block = slice(self.num_vars, self.num_vars + count)
        self._cost.append(np.broadcast_to(np.asarray(cost, dtype=float), (count,)).copy())
        self._lower.append(np.broadcast_to(np.asarray(lower, dtype=float), (count,)).copy())
        self._upper.append(np.broadcast_to(np.asarray(upper, dtype=float), (count,)).copy())
        self._integer.append(np.full(count, bool(integer)))
        self.blocks[name] = block
        self.num_vars += count
        return block

    def add_rows(
        self,
        name: str,
        matrix: sp.spmatrix | sp.sparray,
        *,
        lower: npt.ArrayLike = -np.inf,
        upper: npt.ArrayLike = np.inf,
    ) -> slice:
        """Adds the rows ``lower ≤ matrix · x ≤ upper``; returns their slice of the rows.

        Several calls may use the same ``name``; the block then spans all of them, and they
        must be consecutive."""
        mat = sp.csr_matrix(matrix, dtype=float)
        if mat.shape[1] > self.num_vars:
            raise SolverError(
                f"model {self.name!r}: rows {name!r} have {mat.shape[1]} columns, but only "
                f"{self.num_vars} variables exist"
            )
        if mat.shape[1] < self.num_vars:
            mat.resize((mat.shape[0], self.num_vars))
        k = mat.shape[0]
        self._rows.append(mat)
        self._row_lower.append(np.broadcast_to(np.asarray(lower, dtype=float), (k,)).copy())
        self._row_upper.append(np.broadcast_to(np.asarray(upper, dtype=float), (k,)).copy())
        start = self.num_rows
        if name in self.row_blocks:
            prev = self.row_blocks[name]
            if prev.stop != start:
                raise SolverError(f"model {self.name!r}: row block {name!r} is not contiguous")
            start = prev.start
        self.num_rows += k
        self.row_blocks[name] = slice(start, self.num_rows)
        return slice(self.num_rows - k, self.num_rows)

    def build(self) -> LinearModel:
        """The finished model."""
        n = self.num_vars
        rows = [r if r.shape[1] == n else _widen(r, n) for r in self._rows]
        A = sp.vstack(rows, format="csr") if rows else sp.csr_matrix((0, n))
        A.sum_duplicates()
        return LinearModel(
            self.name,
            _cat(self._cost),
            sp.csr_matrix(A),
            _cat(self._row_lower),
            _cat(self._row_upper),
            _cat(self._lower),
            _cat(self._upper),
            np.concatenate(self._integer) if self._integer else np.zeros(0, dtype=bool),
            self.offset,
            dict(self.blocks),
            dict(self.row_blocks),
        )


def _cat(parts: list[FloatArray]) -> FloatArray:
    return np.concatenate(parts) if parts else np.zeros(0)


def _widen(mat: sp.csr_matrix, n: int) -> sp.csr_matrix:
    out = mat.copy()
    out.resize((mat.shape[0], n))
    return out
