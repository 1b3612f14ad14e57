"""Birkhoff-von Neumann / König decompositions of demand matrices into matchings
(docs/theory.md#time-models: a coflow alone needs exactly ``ρ`` slots, or ``ρ`` time units).

Three functions, one algorithm:

- :func:`decompose_integral`: a nonnegative integral matrix whose row and column sums are at
  most ``ρ`` is the sum of exactly ``ρ`` matchings (König's edge-colouring theorem: a
  bipartite multigraph of maximum degree ``ρ`` is ``ρ``-edge-colourable). The matchings come
  back compactly, as ``(multiplicity, matching)`` pairs whose multiplicities sum to ``ρ``.
- :func:`decompose_real`: a nonnegative real matrix is a weighted sum of matchings whose
  weights sum to its largest row or column sum (Birkhoff-von Neumann), up to a tolerance.
- :func:`decompose_capacitated`: the slotted model with integer port capacities ``c``: an
  integral matrix is served in exactly ``ρ = max_v ⌈L_v / c_v⌉`` slots, each moving at most
  ``c_v`` units through port ``v`` (each port is split into unit copies, and the split matrix
  decomposed as above).

Algorithm. The ``r × c`` matrix ``A`` with line sums at most ``ρ`` is embedded in the
``(r + c) × (c + r)`` matrix ::

    B = [[A,                 diag(ρ − rowsum(A))],
         [diag(ρ − colsum(A)), Aᵀ               ]]

whose every row and column sums to ``ρ``. A nonnegative matrix with equal line sums has a
perfect matching on its support (Hall's condition; König), so repeatedly: take a perfect
matching ``M`` of the support, subtract ``w = min_{e ∈ M} B_e`` along it, record ``(w, M)``
restricted to the block ``A``. ``B − w·M`` again has equal line sums ``ρ − w`` and at least
one entry fewer, so the loop ends after ``K ≤ nnz(B) ≤ 2·nnz(A) + r + c`` steps, with the
weights summing to ``ρ``. Only the entries of ``A`` ever enter a recorded matching, and each
is used exactly ``A_ij`` times in total. The dummy blocks are kept apart from ``A`` (rather
than folded into its free entries) so that no unit of a recorded matching is ambiguous.

The perfect matching is kept between steps: only the edges whose entry dropped to zero leave
it, and each is repaired by one augmenting-path search (Berge: a non-perfect matching of a
graph that has a perfect one has an augmenting path).

Complexity. With ``N = r + c``: ``O(N)`` per step for the subtraction, plus one augmenting
path search, ``O(N²)`` on the dense support in the worst case, per entry that reaches zero;
at most ``2·nnz(A) + N`` of each, so ``O((nnz(A) + N)·N²)`` time and ``O(N²)`` memory in the
worst case, **independent of** ``ρ`` (entries may be large: ``10⁶`` costs no more than
``1``). The initial matching is scipy's Hopcroft-Karp
(:func:`scipy.sparse.csgraph.maximum_bipartite_matching`).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp
from scipy.sparse.csgraph import maximum_bipartite_matching

__all__ = [
    "REAL_TOL",
    "WeightedMatching",
    "capacitated_rho",
    "decompose_capacitated",
    "decompose_integral",
    "decompose_real",
    "recompose",
]

REAL_TOL = 1e-9
"""Default relative tolerance of :func:`decompose_real`: entries at most ``REAL_TOL·ρ`` are
zero."""


@dataclass(frozen=True, eq=False)
class WeightedMatching:
    """One term ``weight · M`` of a decomposition.

    Attributes
    ----------
    weight
        The multiplicity (an ``int`` for the integral decompositions: the number of
        consecutive slots that use ``M``) or the real weight.
    rows, cols
        The pairs ``(rows[k], cols[k])`` of ``M``, sorted by row. For
        :func:`decompose_integral` and :func:`decompose_real` no row and no column repeats.
    units
        Units per use of each pair: all ones for matchings; for
        :func:`decompose_capacitated`, how many units pair ``k`` moves in each slot (its
        rows' units sum to at most the row's capacity, and likewise for columns).
    """

    weight: int | float
    rows: npt.NDArray[np.int64]
    cols: npt.NDArray[np.int64]
    units: npt.NDArray[np.int64]

    def matrix(self, shape: tuple[int, int]) -> npt.NDArray[np.int64]:
        """The ``shape`` matrix of one use (``units`` at the pairs, 0 elsewhere)."""
        out = np.zeros(shape, dtype=np.int64)
        out[self.rows, self.cols] = self.units
        return out


def recompose(terms: list[WeightedMatching], shape: tuple[int, int]) -> npt.NDArray[np.float64]:
    """``Σ weight · matrix``: the matrix a decomposition stands for.

    Examples
    --------
    >>> a = np.array([[2, 1], [0, 3]])
    >>> (recompose(decompose_integral(a), a.shape) == a).all()
    np.True_
    """
    out = np.zeros(shape)
    for t in terms:
        np.add.at(out, (t.rows, t.cols), t.weight * t.units)
    return out


# ---------------------------------------------------------------- validation
def _as_matrix(matrix: npt.ArrayLike, what: str) -> npt.NDArray[np.float64]:
    a = np.asarray(matrix)
    if a.ndim != 2:
        raise ValueError(f"{what}: the matrix must be two-dimensional, got shape {a.shape}")
    if a.size and a.dtype.kind not in "biuf":
        raise ValueError(f"{what}: the matrix must hold numbers, got dtype {a.dtype}")
    a = a.astype(float)
    bad = np.argwhere(~np.isfinite(a))
    if bad.size:
        i, j = (int(x) for x in bad[0])
        raise ValueError(f"{what}: entry ({i}, {j}) is {a[i, j]} (must be finite)")
    bad = np.argwhere(a < 0)
    if bad.size:
        i, j = (int(x) for x in bad[0])
        raise ValueError(f"{what}: entry ({i}, {j}) is {a[i, j]:.10g} (must be nonnegative)")
    return a


def _as_integral(matrix: npt.ArrayLike, what: str) -> npt.NDArray[np.int64]:
    a = _as_matrix(matrix, what)
    bad = np.argwhere(a != np.round(a))
    if bad.size:
        i, j = (int(x) for x in bad[0])
        raise ValueError(f"{what}: entry ({i}, {j}) is {a[i, j]:.10g} (not a whole number)")
    if a.size and a.max() >= 2.0**53:
        raise ValueError(f"{what}: entries must be below 2**53 to be exact, got {a.max():.6g}")
    return np.round(a).astype(np.int64)


def _line_max(a: np.ndarray) -> float:
    return float(max(a.sum(axis=1).max(initial=0), a.sum(axis=0).max(initial=0)))


# ---------------------------------------------------------------- the core
def _regular_embedding(a: np.ndarray, rho: float | int) -> np.ndarray:
    """``B`` of the module docstring: every line sums to ``rho``."""
    r, c = a.shape
    b = np.zeros((r + c, c + r), dtype=a.dtype)
    b[:r, :c] = a
    b[:r, c:][np.diag_indices(r)] = rho - a.sum(axis=1)
    b[r:, :c][np.diag_indices(c)] = rho - a.sum(axis=0)
    b[r:, c:] = a.T
    return b


def _augment(b: np.ndarray, thresh: float, root: int, mrow: np.ndarray, mcol: np.ndarray) -> bool:
    """One breadth-first search for an augmenting path from the free row ``root`` on the
    support ``b > thresh``; flips it in place. ``False`` when there is none."""
    parent_col = {}  # column -> row it was reached from
    queue = deque([root])
    while queue:
        row = queue.popleft()
        for col in np.flatnonzero(b[row] > thresh).tolist():
            if col in parent_col:
                continue
            parent_col[col] = row
            nxt = int(mcol[col])
            if nxt < 0:  # free column: flip the path back to root
                while True:
                    prow = parent_col[col]
                    prev = int(mrow[prow])
                    mrow[prow], mcol[col] = col, prow
                    if prow == root:
                        return True
                    col = prev
            queue.append(nxt)
    return False


def _bvn(
    b: np.ndarray, total: float, thresh: float, r: int, c: int
) -> tuple[list[tuple[float, np.ndarray, np.ndarray]], float]:
    """Peels perfect matchings off ``b`` (line sums ``total``; modified in place).

    Returns the terms ``(weight, rows, cols)`` restricted to the top-left ``r × c`` block and
    the weight left when no perfect matching remained (0 in exact arithmetic)."""
    n = b.shape[0]
    terms: list[tuple[float, np.ndarray, np.ndarray]] = []
    if n == 0 or total <= thresh:
        return terms, float(total)
    support = sp.csr_array(b > thresh)
    mrow = np.asarray(maximum_bipartite_matching(support, perm_type="column"), dtype=np.int64)
    if (mrow < 0).any():
        return terms, float(total)
    mcol = np.empty(n, dtype=np.int64)
    mcol[mrow] = np.arange(n)
    rows = np.arange(n)
    left = total
    while True:
        vals = b[rows, mrow]
        w = vals.min()
        keep = (rows < r) & (mrow < c)
        terms.append((w.item(), rows[keep].copy(), mrow[keep].copy()))
        b[rows, mrow] = vals - w
        left -= w
        gone = np.flatnonzero(b[rows, mrow] <= thresh)
        b[gone, mrow[gone]] = 0
        if left <= thresh:
            return terms, float(max(left, 0))
        mcol[mrow[gone]] = -1
        mrow[gone] = -1
        for row in gone.tolist():
            if not _augment(b, thresh, row, mrow, mcol):
                return terms, float(left)


# ---------------------------------------------------------------- public
def decompose_integral(matrix: npt.ArrayLike, rho: int | None = None) -> list[WeightedMatching]:
    """Exactly ``ρ`` matchings summing to an integral matrix (König; module docstring).

    Parameters
    ----------
    matrix
        ``(r, c)`` nonnegative whole numbers (any dtype holding them exactly).
    rho
        The number of matchings, at least the largest row or column sum (default: that
        sum). Extra matchings beyond the largest line sum are partly or wholly empty.

    Returns
    -------
    list of WeightedMatching
        Terms with integer ``weight`` (multiplicity, ``≥ 1``) summing to ``ρ``; each term's
        pairs form a matching, and ``Σ weight · M = matrix`` exactly. At most
        ``2·nnz + r + c`` terms, whatever ``ρ``.

    Raises
    ------
    ValueError
        The matrix is not two-dimensional, or an entry is negative, NaN, infinite or
        fractional (the message names the entry), or ``rho`` is below a line sum.

    Examples -------- Instance I1 (docs/theory.md#instances) (``ρ = 4``, column 0): four slots in
    three distinct matchings.

    >>> terms = decompose_integral([[1, 2], [3, 0]])
    >>> sorted((t.weight, list(zip(t.rows.tolist(), t.cols.tolist()))) for t in terms)
    [(1, [(0, 0)]), (1, [(1, 0)]), (2, [(0, 1), (1, 0)])]
    >>> sum(t.weight for t in decompose_integral([[10**6]]))
    1000000
    """
    a = _as_integral(matrix, "decompose_integral")
    need = int(_line_max(a))
    if rho is None:
        rho = need
    if isinstance(rho, bool) or int(rho) != rho or rho < need:
        raise ValueError(
            f"decompose_integral: rho must be a whole number at least the largest line sum "
            f"{need}, got {rho!r}"
        )
    rho = int(rho)
    r, c = a.shape
    raw, left = _bvn(_regular_embedding(a, rho), rho, 0, r, c)
    if left:  # impossible by König's theorem; a bug if it happens
        raise RuntimeError(f"decompose_integral: no perfect matching with {left} slots left")
    return [
        WeightedMatching(int(w), rr, cc, np.ones(rr.size, dtype=np.int64)) for w, rr, cc in raw
    ]


def decompose_real(matrix: npt.ArrayLike, tol: float = REAL_TOL) -> list[WeightedMatching]:
    """Weighted matchings summing to a nonnegative real matrix (Birkhoff-von Neumann).

    Parameters
    ----------
    matrix
        ``(r, c)`` nonnegative finite numbers.
    tol
        Relative tolerance: after a subtraction, entries at most ``tol·ρ`` count as zero
        (``ρ`` the largest line sum). Rounding makes exact zeros unreliable: without it a
        residue of ``1e-16`` would need a term of its own.

    Returns
    -------
    list of WeightedMatching
        Terms with positive float weights. Guarantees: each term is a matching; each entry
        of ``Σ weight · M`` is within ``tol·ρ`` of the matrix's (plus rounding, about
        ``1e-15·ρ`` per term); the weights sum to ``ρ`` within ``(r + c + 1)·tol·ρ`` (each
        entry dropped as zero loses at most ``tol·ρ`` from its line). At most
        ``2·nnz + r + c`` terms.

    Raises
    ------
    ValueError
        The matrix is not two-dimensional or an entry is negative, NaN or infinite (the
        message names the entry), or ``tol`` is not in ``[0, 1)``.

    Examples
    --------
    >>> terms = decompose_real([[0.5, 0.25], [0.25, 0.5]])
    >>> sorted((t.weight, t.cols.tolist()) for t in terms)
    [(0.25, [1, 0]), (0.5, [0, 1])]
    """
    a = _as_matrix(matrix, "decompose_real")
    if not (0 <= tol < 1):
        raise ValueError(f"decompose_real: tol must be in [0, 1), got {tol!r}")
    rho = _line_max(a)
    r, c = a.shape
    thresh = tol * rho
    b = _regular_embedding(a, rho)
    b[b <= thresh] = 0.0
    raw, left = _bvn(b, rho, thresh, r, c)
    # without a perfect matching, every line has lost all but rounding-sized mass
    if left > (r + c + 1) * max(thresh, 1e-12 * rho):
        raise RuntimeError(f"decompose_real: no perfect matching with weight {left} left")
    return [
        WeightedMatching(float(w), rr, cc, np.ones(rr.size, dtype=np.int64)) for w, rr, cc in raw
    ]


def capacitated_rho(
    matrix: npt.ArrayLike, row_capacity: npt.ArrayLike, col_capacity: npt.ArrayLike
) -> int:
    """Slots an integral matrix needs with integer port capacities:
    ``max_v ⌈L_v / c_v⌉`` over rows and columns.

    Examples
    --------
    >>> capacitated_rho([[3, 1], [0, 2]], [2, 1], [1, 1])
    3
    """
    a = _as_integral(matrix, "capacitated_rho")
    rc, cc = _capacities(a, row_capacity, col_capacity)
    rows = -(-a.sum(axis=1) // rc) if a.shape[0] else np.zeros(0, np.int64)
    cols = -(-a.sum(axis=0) // cc) if a.shape[1] else np.zeros(0, np.int64)
    return int(max(rows.max(initial=0), cols.max(initial=0)))


def _capacities(
    a: np.ndarray, row_capacity: npt.ArrayLike, col_capacity: npt.ArrayLike
) -> tuple[np.ndarray, np.ndarray]:
    out = []
    for name, cap, size in (
        ("row", row_capacity, a.shape[0]),
        ("column", col_capacity, a.shape[1]),
    ):
        v = np.broadcast_to(np.asarray(cap, dtype=float), (size,))
        bad = np.flatnonzero(~(np.isfinite(v) & (v >= 1) & (v == np.round(v))))
        if bad.size:
            k = int(bad[0])
            raise ValueError(
                f"decompose_capacitated: {name} {k}: capacity {v[k]:.10g} is not a positive "
                "whole number"
            )
        out.append(np.round(v).astype(np.int64))
    return out[0], out[1]


def _split_rows(
    a: sp.coo_array, copies_of: np.ndarray, rho: int
) -> tuple[sp.coo_array, np.ndarray]:
    """Splits each row ``i`` into ``⌈rowsum_i / ρ⌉`` copies of sum at most ``ρ`` each by
    filling them in column order (an entry may straddle two copies). Returns the split
    matrix and, per new row, its original row."""
    csr = a.tocsr()
    csr.sort_indices()
    new_r, new_c, new_v, origin = [], [], [], []
    base = 0
    for i in range(csr.shape[0]):
        lo, hi = csr.indptr[i], csr.indptr[i + 1]
        k = int(copies_of[i])
        origin.extend([i] * k)
        fill = 0  # units placed so far in row i
        for col, val in zip(csr.indices[lo:hi].tolist(), csr.data[lo:hi].tolist(), strict=True):
            while val > 0:
                copy, room = divmod(fill, rho)
                take = min(val, rho - room)
                new_r.append(base + copy)
                new_c.append(col)
                new_v.append(take)
                fill += take
                val -= take
        base += k
    shape = (base, a.shape[1])
    out = sp.coo_array(
        (np.asarray(new_v, dtype=np.int64), (np.asarray(new_r, dtype=np.int64),
                                             np.asarray(new_c, dtype=np.int64))),
        shape=shape,
    )  # fmt: skip
    return out, np.asarray(origin, dtype=np.int64)


def decompose_capacitated(
    matrix: npt.ArrayLike, row_capacity: npt.ArrayLike, col_capacity: npt.ArrayLike
) -> list[WeightedMatching]:
    """Exactly ``ρ = max_v ⌈L_v / c_v⌉`` slots for an integral matrix with integer port
    capacities (the slotted model, docs/theory.md#time-models).

    Port ``v`` is split into ``⌈L_v / ρ⌉ ≤ c_v`` unit copies of load at most ``ρ`` each
    (filling them in order, an entry may straddle two copies); the split matrix has line sums
    at most ``ρ`` and :func:`decompose_integral` gives ``ρ`` matchings of it, which merge back
    into slots where port ``v`` moves at most ``c_v`` units. With unit capacities this is
    :func:`decompose_integral`.

    Parameters
    ----------
    matrix
        ``(r, c)`` nonnegative whole numbers.
    row_capacity, col_capacity
        Positive whole numbers per row and per column (scalars broadcast).

    Returns
    -------
    list of WeightedMatching
        Terms with integer multiplicities summing to ``ρ``; ``units[k]`` is what pair ``k``
        moves per slot, each row's (column's) units sum to at most its capacity, and
        ``Σ weight · units`` at the pairs is the matrix exactly.

    Raises
    ------
    ValueError
        As :func:`decompose_integral`, or a capacity is not a positive whole number (the
        message names the row or column).

    Examples
    --------
    A row of capacity 2 sends to two columns of capacity 1 in each of 2 slots:

    >>> terms = decompose_capacitated([[2, 2]], [2], [1, 1])
    >>> [(t.weight, t.cols.tolist(), t.units.tolist()) for t in terms]
    [(2, [0, 1], [1, 1])]
    """
    a = _as_integral(matrix, "decompose_capacitated")
    rc, cc = _capacities(a, row_capacity, col_capacity)
    rho = capacitated_rho(a, rc, cc)
    if rho == 0:
        return []
    # copies: at least 1 per line so that indices stay simple; at most c_v since L_v ≤ c_v·ρ
    row_copies = np.maximum(1, -(-a.sum(axis=1) // rho))
    col_copies = np.maximum(1, -(-a.sum(axis=0) // rho))
    split, row_origin = _split_rows(sp.coo_array(a), row_copies, rho)
    split_t, col_origin = _split_rows(split.T, col_copies, rho)
    expanded = split_t.T.toarray()
    terms = []
    c = a.shape[1]
    for t in decompose_integral(expanded, rho):
        key = row_origin[t.rows] * c + col_origin[t.cols]
        pairs, units = np.unique(key, return_counts=True)
        terms.append(WeightedMatching(t.weight, pairs // c, pairs % c, units.astype(np.int64)))
    return terms
