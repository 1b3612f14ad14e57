"""Tests of the König / Birkhoff-von Neumann decompositions (docs/theory.md#time-models).

Oracles are the defining properties, checked term by term: each term is a matching (or
respects the port capacities), the multiplicities sum to the largest line sum ``ρ`` (the
lower bound any decomposition needs, so reaching it is exactness), and the terms add back
up to the matrix.
"""

from __future__ import annotations

import numpy as np
import pytest

from coflowlab.approximations.decomposition import (
    REAL_TOL,
    WeightedMatching,
    capacitated_rho,
    decompose_capacitated,
    decompose_integral,
    decompose_real,
    recompose,
)


def line_max(a: np.ndarray) -> float:
    return float(max(a.sum(axis=1).max(initial=0), a.sum(axis=0).max(initial=0)))


def assert_matchings(terms: list[WeightedMatching], shape: tuple[int, int]) -> None:
    for t in terms:
        assert t.weight > 0
        assert len(set(t.rows.tolist())) == t.rows.size, "a row is used twice"
        assert len(set(t.cols.tolist())) == t.cols.size, "a column is used twice"
        assert (t.rows < shape[0]).all() and (t.cols < shape[1]).all()
        assert (t.units == 1).all()


def random_integral(seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    r, c = (int(x) for x in rng.integers(1, 7, size=2))
    a = rng.integers(0, 6, size=(r, c)) * (rng.random((r, c)) < 0.5)
    if seed % 4 == 0:
        a[rng.integers(r)] = 0  # a zero row
    return a


INTEGRAL_CASES = [
    np.array([[1, 2], [3, 0]]),  # instance I1 (docs/theory.md#instances)
    np.array([[7]]),
    np.array([[0]]),
    np.zeros((3, 4), dtype=int),
    np.array([[1, 1, 1]]),
    np.array([[2], [0], [5]]),
    np.array([[0, 0], [0, 4]]),
] + [random_integral(s) for s in range(40)]


@pytest.mark.parametrize("a", INTEGRAL_CASES, ids=lambda a: f"{a.shape}")
def test_integral_exact(a: np.ndarray) -> None:
    terms = decompose_integral(a)
    assert_matchings(terms, a.shape)
    assert all(isinstance(t.weight, int) for t in terms)
    assert sum(t.weight for t in terms) == line_max(a)
    assert (recompose(terms, a.shape) == a).all()
    assert len(terms) <= 2 * np.count_nonzero(a) + sum(a.shape)


@pytest.mark.parametrize("extra", [1, 5])
def test_integral_larger_rho_pads_with_idle_slots(extra: int) -> None:
    a = random_integral(7)
    rho = int(line_max(a)) + extra
    terms = decompose_integral(a, rho)
    assert sum(t.weight for t in terms) == rho
    assert (recompose(terms, a.shape) == a).all()
    assert_matchings(terms, a.shape)


def test_zero_matrix_with_rho_is_idle() -> None:
    terms = decompose_integral(np.zeros((2, 2), dtype=int), 3)
    assert sum(t.weight for t in terms) == 3
    assert all(t.rows.size == 0 for t in terms)
    assert decompose_integral(np.zeros((2, 3))) == []


def test_every_slot_uses_a_tight_line() -> None:
    """With ρ the largest line sum, a line of sum ρ is in every term (it has no slack in the
    embedding), so no slot is wasted."""
    a = np.array([[3, 1, 0], [0, 2, 2], [1, 0, 1]])
    tight = int(np.argmax(a.sum(axis=1)))
    assert a[tight].sum() == line_max(a)
    for t in decompose_integral(a):
        assert tight in t.rows.tolist()


def test_large_entries_do_not_cost_time_proportional_to_rho() -> None:
    rng = np.random.default_rng(3)
    a = rng.integers(0, 10**6, size=(8, 8))
    terms = decompose_integral(a)
    assert sum(t.weight for t in terms) == line_max(a)
    assert (recompose(terms, a.shape) == a).all()
    assert len(terms) <= 2 * 64 + 16  # not ~10^6 terms


def random_real(seed: int) -> np.ndarray:
    rng = np.random.default_rng(100 + seed)
    r, c = (int(x) for x in rng.integers(1, 7, size=2))
    return rng.exponential(size=(r, c)) * (rng.random((r, c)) < 0.6)


@pytest.mark.parametrize(
    "a", [random_real(s) for s in range(30)] + [np.eye(3) / 3, np.zeros((2, 2))]
)
def test_real_within_tolerance(a: np.ndarray) -> None:
    terms = decompose_real(a)
    assert_matchings(terms, a.shape)
    rho = line_max(a)
    r, c = a.shape
    assert abs(sum(t.weight for t in terms) - rho) <= (r + c + 1) * REAL_TOL * rho + 1e-12
    assert np.abs(recompose(terms, a.shape) - a).max(initial=0) <= REAL_TOL * rho + 1e-12
    assert len(terms) <= 2 * np.count_nonzero(a) + r + c


def test_real_doubly_stochastic() -> None:
    a = np.array([[0.5, 0.5, 0.0], [0.25, 0.25, 0.5], [0.25, 0.25, 0.5]])
    terms = decompose_real(a)
    assert sum(t.weight for t in terms) == pytest.approx(1.0, abs=1e-12)
    for t in terms:  # a doubly stochastic matrix decomposes into permutation matrices
        assert t.rows.size == 3


def test_real_tolerance_drops_tiny_entries() -> None:
    a = np.array([[1.0, 1e-12], [0.0, 1.0]])
    terms = decompose_real(a, tol=1e-9)
    assert len(terms) == 1 and terms[0].weight == pytest.approx(1.0)
    exact = decompose_real(a, tol=0.0)
    assert np.abs(recompose(exact, a.shape) - a).max() <= 1e-15


def slotted_rho(a: np.ndarray, rc: np.ndarray, cc: np.ndarray) -> int:
    """Independent formula: max over lines of ⌈load / capacity⌉."""
    rows = [int(np.ceil(a[i].sum() / rc[i])) for i in range(a.shape[0])]
    cols = [int(np.ceil(a[:, j].sum() / cc[j])) for j in range(a.shape[1])]
    return max(rows + cols + [0])


@pytest.mark.parametrize("seed", range(30))
def test_capacitated(seed: int) -> None:
    rng = np.random.default_rng(200 + seed)
    a = random_integral(seed)
    rc = rng.integers(1, 4, size=a.shape[0])
    cc = rng.integers(1, 4, size=a.shape[1])
    terms = decompose_capacitated(a, rc, cc)
    rho = slotted_rho(a, rc, cc)
    assert capacitated_rho(a, rc, cc) == rho
    assert sum(t.weight for t in terms) == rho
    for t in terms:
        pairs = list(zip(t.rows.tolist(), t.cols.tolist(), strict=True))
        assert len(set(pairs)) == len(pairs)
        assert (np.bincount(t.rows, t.units, minlength=a.shape[0]) <= rc).all()
        assert (np.bincount(t.cols, t.units, minlength=a.shape[1]) <= cc).all()
    assert (recompose(terms, a.shape) == a).all()


def test_capacitated_unit_capacities_is_konig() -> None:
    a = random_integral(5)
    terms = decompose_capacitated(a, 1, 1)
    assert sum(t.weight for t in terms) == line_max(a)
    assert_matchings(terms, a.shape)


@pytest.mark.parametrize(
    ("matrix", "message"),
    [
        ([[1, 0], [-1, 2]], r"entry \(1, 0\) is -1 \(must be nonnegative\)"),
        ([[1, float("nan")]], r"entry \(0, 1\) is nan"),
        ([[1, float("inf")]], r"entry \(0, 1\) is inf"),
        ([[1, 0], [0, 1.5]], r"entry \(1, 1\) is 1.5 \(not a whole number\)"),
        ([1, 2], r"two-dimensional"),
    ],
)
def test_integral_errors(matrix: list, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        decompose_integral(matrix)


def test_real_and_capacity_errors() -> None:
    with pytest.raises(ValueError, match=r"decompose_real: entry \(0, 0\) is -0.5"):
        decompose_real([[-0.5]])
    with pytest.raises(ValueError, match="tol"):
        decompose_real([[1.0]], tol=1.0)
    with pytest.raises(ValueError, match="largest line sum 3"):
        decompose_integral([[1, 2]], rho=2)
    with pytest.raises(ValueError, match=r"column 1: capacity 1.5"):
        decompose_capacitated([[1, 1]], [1], [1, 1.5])
    with pytest.raises(ValueError, match=r"row 0: capacity 0"):
        decompose_capacitated([[1, 1]], [0], [1, 1])
