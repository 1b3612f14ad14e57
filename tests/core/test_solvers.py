"""Tests of the solver layer: model validation, every installed backend on tiny LPs and MIPs
(optimal, infeasible, unbounded, time limit, gap), CBC's log reading, .lp/.mps export, and
the detection of a missing or size-limited Gurobi licence.

Backends come from the ``--solvers`` option (``tests/conftest.py``; default: all installed).
Expected values come from scipy's own MILP interface (an oracle independent of our
wrappers) or are derived in comments.
"""

from __future__ import annotations

import importlib.machinery
import math
import sys
import types
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose
from scipy.optimize import Bounds, LinearConstraint, milp

from coflowlab.exceptions import SolverError, SolverNotAvailableError
from coflowlab.solvers import LinearModel, ModelBuilder, SolverOptions, SolveStatus, solve
from coflowlab.solvers import gurobi_backend as grb
from coflowlab.solvers.api import available_solvers, require_solver

FEAS_TOL = 1e-6


# ----------------------------------------------------------------------------- models


def two_var_lp(offset: float = 0.0) -> LinearModel:
    """max x + y s.t. x + 2y ≤ 4, 3x + y ≤ 6, x, y ≥ 0: the vertex (1.6, 1.2), value 2.8."""
    b = ModelBuilder("two-var-lp")
    b.add_variables("x", 2, cost=[-1.0, -1.0])
    b.add_rows("cap", sp.csr_matrix([[1.0, 2.0], [3.0, 1.0]]), upper=[4.0, 6.0])
    b.offset = offset
    return b.build()


def toy_mip() -> LinearModel:
    """max x0 + x1, x0 + 2 x1 ≤ 3.5, integers in [0, 10]: optimum -3 at (3, 0)."""
    b = ModelBuilder("toy-mip")
    b.add_variables("x", 2, cost=[-1.0, -1.0], upper=10.0, integer=True)
    b.add_rows("cap", sp.csr_matrix([[1.0, 2.0]]), upper=[3.5])
    return b.build()


def random_mip(seed: int, *, integer: bool = True) -> LinearModel:
    """A random bounded MIP with every row kind: equalities, ≤, ≥, ranged and free rows,
    free variables, fixed variables and an objective offset."""
    rng = np.random.default_rng(seed)
    n = 8
    b = ModelBuilder(f"random-{seed}")
    lower = rng.integers(-3, 1, n).astype(float)
    upper = lower + rng.integers(1, 6, n)
    lower[0], upper[0] = 2.0, 2.0  # fixed
    b.add_variables("x", n // 2, cost=rng.normal(size=n // 2), lower=lower[:4], upper=upper[:4])
    b.add_variables(
        "z", n // 2, cost=rng.normal(size=n // 2), lower=lower[4:], upper=upper[4:],
        integer=integer,
    )  # fmt: skip
    b.add_variables("free", 1, cost=0.5, lower=-np.inf, upper=np.inf)
    point = np.append(rng.integers(lower, upper + 1), 0.0)  # integral: the rows admit it
    dense = rng.normal(size=(6, n + 1)) * (rng.random((6, n + 1)) < 0.6)
    dense[:, n] = 1.0  # the free variable appears in every row
    A = sp.csr_matrix(dense)
    act = A @ point
    b.add_rows("le", A[:2], upper=act[:2] + 1)
    b.add_rows("ge", A[2:3], lower=act[2:3] - 1)
    b.add_rows("range", A[3:5], lower=act[3:5] - 1, upper=act[3:5] + 1)
    b.add_rows("free-row", A[5:6])
    b.add_rows("bound-free", sp.csr_matrix(np.eye(1, n + 1, n)), lower=-5, upper=5)
    b.offset = 1.25
    return b.build()


def scipy_optimum(model: LinearModel) -> float:
    """The optimum by scipy.optimize.milp (its own HiGHS interface), offset included."""
    keep = ~(np.isinf(model.row_lower) & np.isinf(model.row_upper))
    res = milp(
        model.c,
        constraints=LinearConstraint(
            model.A[keep].toarray(), model.row_lower[keep], model.row_upper[keep]
        ),
        bounds=Bounds(model.col_lower, model.col_upper),
        integrality=model.integrality.astype(int),
        options={"mip_rel_gap": 0},
    )
    assert res.status == 0, res.message
    return float(res.fun) + model.offset


def assert_feasible(model: LinearModel, x: np.ndarray) -> None:
    act = model.A @ x
    assert np.all(act <= model.row_upper + FEAS_TOL)
    assert np.all(act >= model.row_lower - FEAS_TOL)
    assert np.all(x <= model.col_upper + FEAS_TOL)
    assert np.all(x >= model.col_lower - FEAS_TOL)
    ints = x[model.integrality]
    assert_allclose(ints, np.round(ints), atol=FEAS_TOL)


def market_split(seed: int = 0, rows: int = 5, cols: int = 40) -> LinearModel:
    """Cornuéjols–Dawande style equality knapsacks with a planted 0/1 solution: feasible,
    and far too hard to finish in 0.01 s."""
    rng = np.random.default_rng(seed)
    A = rng.integers(0, 100, (rows, cols)).astype(float)
    rhs = A @ rng.integers(0, 2, cols)
    b = ModelBuilder("market-split")
    b.add_variables("x", cols, cost=rng.integers(1, 50, cols), upper=1.0, integer=True)
    b.add_rows("split", sp.csr_matrix(A), lower=rhs, upper=rhs)
    return b.build()


def knapsacks(seed: int = 3, n: int = 40, m: int = 15) -> LinearModel:
    """Multi-dimensional 0/1 knapsack (maximize value): a MIP that needs branching."""
    rng = np.random.default_rng(seed)
    A = rng.integers(10, 100, (m, n)).astype(float)
    b = ModelBuilder("knapsacks")
    b.add_variables("x", n, cost=-rng.integers(10, 100, n).astype(float), upper=1.0, integer=True)
    b.add_rows("cap", sp.csr_matrix(A), upper=A.sum(axis=1) / 2)
    b.offset = 7.0
    return b.build()


# ----------------------------------------------------------------------------- validation


def _valid_parts() -> dict:
    return dict(
        name="m",
        c=np.zeros(2),
        A=sp.csr_matrix(np.ones((1, 2))),
        row_lower=np.zeros(1),
        row_upper=np.ones(1),
        col_lower=np.zeros(2),
        col_upper=np.ones(2),
        integrality=np.zeros(2, dtype=bool),
    )


@pytest.mark.parametrize(
    ("field", "value", "match"),
    [
        ("A", sp.csr_matrix(np.ones((2, 2))), "A has shape"),  # one row too many
        ("row_upper", np.ones(2), "row_upper has length 2"),
        ("col_lower", np.zeros(3), "col_lower has length 3"),
        ("col_upper", np.ones(1), "col_upper has length 1"),
        ("integrality", np.zeros(3, dtype=bool), "integrality has length 3"),
        ("c", np.array([0.0, np.nan]), "non-finite"),
        ("A", sp.csr_matrix([[1.0, np.inf]]), "non-finite"),
        ("row_lower", np.array([2.0]), "row 0 has lower bound 2.0 > upper 1.0"),
        ("col_lower", np.array([0.0, 5.0]), "variable 1 has lower bound 5.0 > upper 1.0"),
        ("col_upper", np.array([1.0, np.nan]), "variable 1 has lower bound"),
    ],
)
def test_linear_model_rejects_one_bad_field(field, value, match):
    """Tests that LinearModel names the field at fault, one bad field at a time."""
    parts = _valid_parts()
    LinearModel(**parts)  # the valid baseline builds
    parts[field] = value
    with pytest.raises(SolverError, match=match):
        LinearModel(**parts)


def test_builder_rejects_misuse():
    """Tests ModelBuilder's errors: a block added twice, a negative count, rows wider than
    the variables, and a row block split by another."""
    b = ModelBuilder("misuse")
    b.add_variables("x", 2)
    with pytest.raises(SolverError, match="'x' added twice"):
        b.add_variables("x", 1)
    with pytest.raises(SolverError, match="negative variable count"):
        b.add_variables("y", -1)
    with pytest.raises(SolverError, match="have 3 columns, but only 2 variables"):
        b.add_rows("wide", sp.csr_matrix(np.ones((1, 3))))
    b.add_rows("r", sp.csr_matrix(np.ones((1, 2))), upper=1)
    b.add_rows("s", sp.csr_matrix(np.ones((1, 2))), upper=1)
    with pytest.raises(SolverError, match="'r' is not contiguous"):
        b.add_rows("r", sp.csr_matrix(np.ones((1, 2))), upper=1)


def test_builder_pads_rows_and_keeps_blocks():
    """Tests that rows written before later variables are padded with zero columns, and
    that blocks and row blocks index the assembled model."""
    b = ModelBuilder("pad")
    x = b.add_variables("x", 2, cost=1.0)
    first = b.add_rows("early", sp.csr_matrix([[1.0, 1.0]]), lower=1)
    y = b.add_variables("y", 3, cost=2.0, integer=True)
    b.add_rows("late", sp.csr_matrix(np.ones((2, 5))), upper=4)
    m = b.build()
    assert (m.num_vars, m.num_rows, m.A.shape) == (5, 3, (3, 5))
    assert m.A[first].toarray().tolist() == [[1.0, 1.0, 0.0, 0.0, 0.0]]
    assert m.blocks == {"x": x, "y": y} and m.row_blocks["late"] == slice(1, 3)
    assert m.integrality.tolist() == [False, False, True, True, True]
    assert not m.relaxed().is_mip and m.relaxed().num_vars == 5


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"time_limit": 0.0}, r"SolverOptions\.time_limit: must be positive"),
        ({"time_limit": math.nan}, r"SolverOptions\.time_limit: must be positive"),
        ({"time_limit": math.inf}, r"SolverOptions\.time_limit: must be positive"),
        ({"mip_gap": 1.0}, r"SolverOptions\.mip_gap: must be in \[0, 1\)"),
        ({"mip_gap": -0.1}, r"SolverOptions\.mip_gap: must be in \[0, 1\)"),
        ({"threads": 0}, r"SolverOptions\.threads: must be a positive integer"),
        ({"solver": "cplex"}, r"SolverOptions\.solver: 'cplex' is not one of highs, cbc"),
        ({"log": 1}, r"SolverOptions\.log: must be True or False"),
    ],
)
def test_bad_settings_are_refused_before_any_solve(kwargs, match):
    """Tests that a bad solver setting is refused when the SolverOptions is built (so no
    backend ever sees it), with a message naming the field."""
    with pytest.raises(ValueError, match=match):
        SolverOptions(**kwargs)


@pytest.mark.parametrize("options", ["highs", {"solver": "highs"}, 10.0])
def test_solve_takes_only_a_solver_options(options):
    """Tests that solve() refuses settings that are not a SolverOptions (a backend name or a
    dict passed where the options go) instead of guessing what they mean."""
    with pytest.raises(SolverError, match="options must be a SolverOptions"):
        solve(toy_mip(), options)


def test_solve_without_options_uses_the_defaults():
    """Tests that solve(model) and solve(model, SolverOptions()) are the same solve: HiGHS,
    no time limit, the toy MIP's proven optimum -3 at (3, 0)."""
    default, explicit = solve(toy_mip()), solve(toy_mip(), SolverOptions())
    assert default.solver == explicit.solver == "highs"
    assert default.status is explicit.status is SolveStatus.OPTIMAL
    assert default.objective == explicit.objective == pytest.approx(-3.0)
    assert np.array_equal(default.x, explicit.x)


def test_missing_package_is_reported_with_what_to_install(monkeypatch):
    """Tests that a backend whose package is missing raises SolverNotAvailableError naming
    the package, and drops out of available_solvers()."""
    monkeypatch.setitem(sys.modules, "gurobipy", None)  # makes find_spec report it missing
    with pytest.raises(SolverNotAvailableError, match=r"gurobipy.*--solver highs"):
        solve(toy_mip(), SolverOptions(solver="gurobi"))
    assert "gurobi" not in available_solvers()
    assert "highs" in available_solvers()


def test_missing_cbc_binary_is_reported(monkeypatch):
    """Tests that PuLP without a CBC binary makes 'cbc' unavailable, with the reason."""
    import coflowlab.solvers.pulp_backend as pb

    pytest.importorskip("pulp")
    monkeypatch.setattr(pb, "cbc_path", lambda: None)
    with pytest.raises(SolverNotAvailableError, match="CBC binary"):
        require_solver("cbc")
    with pytest.raises(SolverNotAvailableError, match="CBC binary"):
        pb.solve_cbc(toy_mip())


# ----------------------------------------------------------------------------- every backend


def test_lp_optimum(solver_backend):
    """Tests the two-variable LP: objective (offset included) -2.8 + 1.5, bound equal to it,
    gap 0, the optimal vertex (1.6, 1.2)."""
    model = two_var_lp(offset=1.5)
    res = solve(model, SolverOptions(solver=solver_backend))
    assert res.status is SolveStatus.OPTIMAL and res.solver == solver_backend
    assert res.objective == pytest.approx(-2.8 + 1.5, rel=1e-9)
    assert res.bound == pytest.approx(res.objective, rel=1e-9) and res.gap == pytest.approx(0)
    assert_allclose(res.x, [1.6, 1.2], atol=1e-8)
    assert res.objective == pytest.approx(model.value(res.x), rel=1e-9)


def test_mip_optimum(solver_backend):
    """Tests the toy MIP: optimum -3 at (3, 0), proven (bound = objective)."""
    res = solve(toy_mip(), SolverOptions(solver=solver_backend))
    assert res.status is SolveStatus.OPTIMAL
    assert (res.objective, res.bound) == (pytest.approx(-3.0), pytest.approx(-3.0))
    assert_allclose(res.x, [3.0, 0.0], atol=1e-8)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("integer", [True, False], ids=["mip", "lp"])
def test_random_models_match_scipy(solver_backend, seed, integer):
    """Tests random models with every row kind (=, ≤, ≥, ranged, free; fixed and free
    variables; an offset) against scipy's MILP: same optimum, feasible values."""
    model = random_mip(seed, integer=integer)
    res = solve(model, SolverOptions(solver=solver_backend, mip_gap=0.0))
    assert res.status is SolveStatus.OPTIMAL
    assert res.objective == pytest.approx(scipy_optimum(model), rel=1e-7, abs=1e-7)
    assert res.objective == pytest.approx(model.value(res.x), rel=1e-7, abs=1e-7)
    assert res.bound <= res.objective + 1e-9
    assert_feasible(model, res.x)


def _infeasible(integer: bool) -> LinearModel:
    """x + y ≤ -1 with x, y ≥ 0."""
    b = ModelBuilder("infeasible")
    b.add_variables("x", 2, cost=1.0, integer=integer)
    b.add_rows("r", sp.csr_matrix([[1.0, 1.0]]), upper=-1)
    return b.build()


def _unbounded(integer: bool) -> LinearModel:
    """min -x - y with x - y ≤ 1: unbounded along x = y."""
    b = ModelBuilder("unbounded")
    b.add_variables("x", 1, cost=-1.0, integer=integer)
    b.add_variables("y", 1, cost=-1.0)
    b.add_rows("r", sp.csr_matrix([[1.0, -1.0]]), upper=1)
    return b.build()


def _integer_infeasible_unbounded_relaxation() -> LinearModel:
    """2 x0 - 2 x1 = 1 has no integer solution, yet the relaxation is feasible and, with
    min -y and y unbounded above, unbounded: the answer must be 'infeasible'."""
    b = ModelBuilder("parity")
    b.add_variables("x", 2, upper=10.0, integer=True)
    b.add_variables("y", 1, cost=-1.0)
    b.add_rows("odd", sp.csr_matrix([[2.0, -2.0, 0.0]]), lower=1, upper=1)
    return b.build()


@pytest.mark.parametrize(
    ("make", "expected", "bound"),
    [
        (lambda: _infeasible(False), SolveStatus.INFEASIBLE, math.inf),
        (lambda: _infeasible(True), SolveStatus.INFEASIBLE, math.inf),
        (lambda: _unbounded(False), SolveStatus.UNBOUNDED, -math.inf),
        (lambda: _unbounded(True), SolveStatus.UNBOUNDED, -math.inf),
        (_integer_infeasible_unbounded_relaxation, SolveStatus.INFEASIBLE, math.inf),
    ],
    ids=["lp-infeasible", "mip-infeasible", "lp-unbounded", "mip-unbounded", "mip-parity"],
)
def test_infeasible_and_unbounded(solver_backend, make, expected, bound):
    """Tests that infeasible and unbounded models are told apart, without values."""
    res = solve(make(), SolverOptions(solver=solver_backend))
    assert res.status is expected
    assert res.x is None and not res.has_solution and math.isnan(res.objective)
    assert res.bound == bound


def test_time_limit_reports_a_consistent_state(solver_backend):
    """Tests a MIP stopped at 0.01 s: the status is one of the time-limit ones (or optimal),
    and whatever is reported is consistent: a feasible incumbent whose value is the
    objective, a bound below it, the gap between them; no values without an incumbent."""
    model = market_split()
    res = solve(model, SolverOptions(solver=solver_backend, time_limit=0.01))
    assert res.status in (
        SolveStatus.TIME_LIMIT,
        SolveStatus.TIME_LIMIT_NO_SOLUTION,
        SolveStatus.OPTIMAL,
    )
    assert res.runtime < 10.0  # the limit was honoured (with slack for process start-up)
    if res.status is SolveStatus.TIME_LIMIT_NO_SOLUTION:
        assert res.x is None and math.isnan(res.objective) and math.isnan(res.gap)
        assert not math.isnan(res.bound) and res.bound < math.inf
    else:
        assert_feasible(model, res.x)
        assert res.objective == pytest.approx(model.value(res.x), rel=1e-9)
        assert res.bound <= res.objective + 1e-9
        assert res.gap == pytest.approx(
            abs(res.objective - res.bound) / max(abs(res.objective), 1e-10)
        )


def test_gap_tolerance_bound_is_proven(solver_backend):
    """Tests a MIP solved to a 2% gap: the reported bound is at most the true optimum (it is
    proven), the objective at least it, and the reported gap within the tolerance."""
    model = knapsacks()
    exact = solve(model, SolverOptions(solver=solver_backend, mip_gap=0.0))
    assert exact.status is SolveStatus.OPTIMAL and exact.gap == pytest.approx(0, abs=1e-9)
    loose = solve(model, SolverOptions(solver=solver_backend, mip_gap=0.02))
    assert loose.status is SolveStatus.OPTIMAL
    assert loose.bound <= exact.objective + 1e-9 <= loose.objective + 2e-9
    assert loose.gap <= 0.02 + 1e-6


def test_solves_are_deterministic(solver_backend):
    """Tests that solving the same MIP twice gives the same values."""
    model = knapsacks(seed=5, n=25, m=8)
    first = solve(model, SolverOptions(solver=solver_backend, mip_gap=0.0))
    second = solve(model, SolverOptions(solver=solver_backend, mip_gap=0.0))
    assert first.status is second.status is SolveStatus.OPTIMAL
    assert first.objective == second.objective
    assert np.array_equal(first.x, second.x)


def test_threads_option_is_accepted(solver_backend):
    """Tests that changing the thread count between solves in one process (HiGHS keeps a
    process-wide thread pool) still solves the toy MIP."""
    for threads in (None, 2, 1, None):
        res = solve(toy_mip(), SolverOptions(solver=solver_backend, threads=threads))
        assert res.status is SolveStatus.OPTIMAL, (threads, res.message)
        assert res.objective == pytest.approx(-3.0)


# ----------------------------------------------------------------------------- CBC specifics


def _cbc_interpret(first_line: str, log: str, model: LinearModel, x):
    from coflowlab.solvers.pulp_backend import _interpret

    return _interpret(model, first_line, log, np.asarray(x, dtype=float), 0.1, None)


def test_cbc_time_limit_with_incumbent_reads_the_bound():
    """Tests CBC's "stopped on time" with an incumbent: the bound is its "best possible"
    (lowered by half a unit of the last printed digit) plus the model's offset."""
    model = toy_mip()
    model = LinearModel(
        "offset", model.c, model.A, model.row_lower, model.row_upper, model.col_lower,
        model.col_upper, model.integrality, offset=2.0,
    )  # fmt: skip
    log = (
        "Cbc0010I After 0 nodes, 1 on tree, -2 best solution, best possible -3.4 (0.01 s)\n"
        "Cbc0005I Partial search - best objective -2 (best possible -3.1234567), took 5 "
        "iterations and 0 nodes (0.01 seconds)\nResult - Stopped on time limit\n"
        "Lower bound:                    -3.123\n"
    )
    res = _cbc_interpret("Stopped on time - objective value -2.00000000", log, model, [2, 0])
    assert res.status is SolveStatus.TIME_LIMIT
    assert res.objective == pytest.approx(-2.0 + 2.0)
    assert res.bound == pytest.approx(-3.1234567 - 5e-8 + 2.0, abs=1e-12)
    res = _cbc_interpret(
        "Stopped on time (no integer solution - continuous used) - objective value -3.5",
        log.replace("best objective -2", "best objective 1e+50"),
        model,
        [1.5, 1.0],
    )
    assert res.status is SolveStatus.TIME_LIMIT_NO_SOLUTION and res.x is None
    assert res.bound == pytest.approx(-3.1234567 - 5e-8 + 2.0, abs=1e-12)


def test_cbc_gap_stop_bound_is_incumbent_minus_gap():
    """Tests CBC's stop at the gap tolerance: bound = incumbent − printed gap (rounded up)."""
    log = "Cbc0011I Exiting as integer gap of 0.25 less than 1e-10 or 10%\n"
    res = _cbc_interpret(
        "Optimal (within gap tolerance) - objective value -3.00000000", log, toy_mip(), [3, 0]
    )
    assert res.status is SolveStatus.OPTIMAL
    assert res.bound == pytest.approx(-3.0 - 0.25 - 0.005, abs=1e-12)
    assert res.gap == pytest.approx(0.255 / 3)


def test_cbc_unknown_status_is_an_error():
    """Tests that a CBC ending we do not know (e.g. "Stopped on iterations") is an error,
    never a solution."""
    res = _cbc_interpret("Stopped on iterations - objective value 1", "", toy_mip(), [0, 0])
    assert res.status is SolveStatus.ERROR and res.x is None


# ----------------------------------------------------------------------------- export


@pytest.mark.parametrize("suffix", [".lp", ".mps"])
def test_write_model_round_trips_through_highs(tmp_path, suffix):
    """Tests that an exported model (every row kind, an offset) read back by HiGHS has the
    model's optimum."""
    pytest.importorskip("pulp")
    import highspy

    from coflowlab.solvers.pulp_backend import write_model

    model = random_mip(1)
    path = tmp_path / f"model{suffix}"
    write_model(model, path)
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("mip_rel_gap", 0.0)
    assert h.readModel(str(path)) == highspy.HighsStatus.kOk
    h.run()
    assert h.getModelStatus() == highspy.HighsModelStatus.kOptimal
    value = h.getInfo().objective_function_value
    assert value == pytest.approx(scipy_optimum(model), rel=1e-9, abs=1e-9)
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]  # no temporary left


def test_write_model_names_rows_after_blocks(tmp_path):
    """Tests the LP file's names: ``<block>_<i>`` for variables and rows, ``_lo``/``_hi``
    for a ranged row, the offset on a variable fixed at 1."""
    pytest.importorskip("pulp")
    from coflowlab.solvers.pulp_backend import write_model

    b = ModelBuilder("names")
    b.add_variables("x", 2, cost=1.0)
    b.add_rows("cap", sp.csr_matrix([[1.0, 2.0]]), lower=1.0, upper=3.0)
    b.offset = 4.0
    path = tmp_path / "names.lp"
    write_model(b.build(), path)
    text = path.read_text()
    assert "cap_0_lo: x_0 + 2 x_1 >= 1" in text and "cap_0_hi: x_0 + 2 x_1 <= 3" in text
    assert "4 objective_offset" in text and "objective_offset = 1" in text


def test_write_model_failure_leaves_nothing(tmp_path, monkeypatch):
    """Tests that a bad suffix is refused and a failing writer leaves no file behind."""
    pytest.importorskip("pulp")
    import pulp

    from coflowlab.solvers.pulp_backend import write_model

    with pytest.raises(ValueError, match=r"\.lp or \.mps"):
        write_model(toy_mip(), tmp_path / "model.txt")

    def broken(self, filename, *args, **kwargs):
        Path(filename).write_text("half")
        raise OSError("disk full")

    monkeypatch.setattr(pulp.LpProblem, "writeMPS", broken)
    with pytest.raises(OSError, match="disk full"):
        write_model(toy_mip(), tmp_path / "model.mps")
    assert list(tmp_path.iterdir()) == []


# ----------------------------------------------------------------------------- Gurobi licence


class FakeGurobiError(Exception):
    def __init__(self, errno: int, message: str) -> None:
        super().__init__(message)
        self.errno = errno
        self.message = message


def fake_gurobipy(*, start_error: FakeGurobiError | None = None, limit: int = 2000):
    """A stand-in for gurobipy with the pip wheel's restricted licence: optimize() raises
    error 10010 when a model has more than ``limit`` variables or constraints. It records
    every model built, to show what was (not) built."""
    built: list[dict] = []

    class Env:
        def __init__(self, empty: bool = False) -> None:
            pass

        def setParam(self, key, value) -> None:
            pass

        def start(self) -> None:
            if start_error is not None:
                raise start_error

        def dispose(self) -> None:
            pass

    class Model:
        def __init__(self, name: str, env=None) -> None:
            self.info = {"name": name, "vars": 0, "rows": 0}
            built.append(self.info)

        def setParam(self, key, value) -> None:
            pass

        def setAttr(self, key, value) -> None:
            pass

        def addMVar(self, count, **kwargs):
            self.info["vars"] += count
            return object()

        def addMConstr(self, A, x, sense, rhs) -> None:
            self.info["rows"] += A.shape[0]

        def optimize(self) -> None:
            if self.info["vars"] > limit or self.info["rows"] > limit:
                raise FakeGurobiError(
                    10010,
                    "Model too large for size-limited license; visit "
                    "https://gurobi.com/unrestricted for more information",
                )
            raise FakeGurobiError(10003, "fake gurobipy solves nothing")

        def dispose(self) -> None:
            pass

    GRB = types.SimpleNamespace(
        INFINITY=1e100, OPTIMAL=2, INFEASIBLE=3, INF_OR_UNBD=4, UNBOUNDED=5, TIME_LIMIT=9,
        INTEGER="I", CONTINUOUS="C", EQUAL="=", LESS_EQUAL="<", GREATER_EQUAL=">",
    )  # fmt: skip
    module = types.ModuleType("gurobipy")
    module.__spec__ = importlib.machinery.ModuleSpec("gurobipy", None)
    module.Env, module.Model, module.GRB, module.GurobiError = Env, Model, GRB, FakeGurobiError
    return module, built


def wide_model(num_vars: int, ranged_rows: int = 0) -> LinearModel:
    b = ModelBuilder("wide")
    b.add_variables("x", num_vars, cost=1.0, upper=1.0)
    if ranged_rows:
        b.add_rows("r", sp.csr_matrix(np.ones((ranged_rows, num_vars))), lower=0.0, upper=1.0)
    return b.build()


@pytest.fixture
def fake_gurobi(monkeypatch):
    def install(**kwargs):
        module, built = fake_gurobipy(**kwargs)
        monkeypatch.setitem(sys.modules, "gurobipy", module)
        monkeypatch.setattr(grb, "_size_limited", None)
        return built

    return install


def test_fake_size_limited_licence_is_detected_before_building(fake_gurobi):
    """Tests (with a fake gurobipy) that a model beyond the restricted licence raises
    SolverNotAvailableError saying what happened and what to do, after only the tiny
    licence probe was built, never the model itself."""
    built = fake_gurobi()
    with pytest.raises(SolverNotAvailableError) as err:
        solve(wide_model(2001), SolverOptions(solver="gurobi"))
    text = str(err.value)
    assert "2001 variables" in text and "size-limited" in text
    assert "at most 2000 variables and 2000 constraints" in text
    assert "licence" in text and "--solver highs" in text
    assert [m["name"] for m in built] == ["coflowlab-licence-probe"]


def test_fake_ranged_rows_count_twice_against_the_limit(fake_gurobi):
    """Tests that 1001 ranged rows are 2002 Gurobi constraints: over the limit, although
    the model has only 1001 rows."""
    fake_gurobi()
    model = wide_model(3, ranged_rows=1001)
    assert model.num_rows == 1001 and grb.gurobi_size(model) == (3, 2002)
    with pytest.raises(SolverNotAvailableError, match="2002 constraints"):
        solve(model, SolverOptions(solver="gurobi"))


def test_fake_size_limit_error_from_gurobi_is_translated(fake_gurobi, monkeypatch):
    """Tests the backstop: when Gurobi itself raises the size-limit error (here: a licence
    thought unlimited, with a lower limit), the same SolverNotAvailableError comes out."""
    fake_gurobi(limit=10)
    monkeypatch.setattr(grb, "_size_limited", False)
    with pytest.raises(SolverNotAvailableError, match=r"size-limited.*--solver highs"):
        solve(wide_model(11), SolverOptions(solver="gurobi"))


def test_fake_missing_licence_and_other_errors(fake_gurobi):
    """Tests that no licence at start-up is SolverNotAvailableError, and any other Gurobi
    error a SolverError (never a silent fallback)."""
    fake_gurobi(start_error=FakeGurobiError(10009, "No Gurobi license found"))
    with pytest.raises(SolverNotAvailableError, match=r"No Gurobi license found.*licence"):
        solve(toy_mip(), SolverOptions(solver="gurobi"))
    fake_gurobi()
    with pytest.raises(SolverError, match="Gurobi error 10003") as err:
        solve(toy_mip(), SolverOptions(solver="gurobi"))
    assert not isinstance(err.value, SolverNotAvailableError)


def _real_licence_is_size_limited() -> bool:
    gp = pytest.importorskip("gurobipy")
    env = gp.Env(empty=True)
    env.setParam("OutputFlag", 0)
    env.start()
    m = gp.Model(env=env)
    m.addMVar(2001)
    try:
        m.optimize()
        return False
    except gp.GurobiError as exc:
        return exc.errno == 10010
    finally:
        m.dispose()
        env.dispose()


def test_real_gurobi_licence_limit(monkeypatch):
    """Tests the installed gurobipy: with the pip wheel's restricted licence, 2000
    variables solve and 2001 raise SolverNotAvailableError; with a full licence, both
    solve."""
    limited = _real_licence_is_size_limited()
    monkeypatch.setattr(grb, "_size_limited", None)
    assert solve(wide_model(2000), SolverOptions(solver="gurobi")).status is SolveStatus.OPTIMAL
    if limited:
        with pytest.raises(SolverNotAvailableError, match="size-limited"):
            solve(wide_model(2001), SolverOptions(solver="gurobi"))
        assert grb._size_limited is True
    else:
        assert solve(wide_model(2001), SolverOptions(solver="gurobi")).objective == pytest.approx(
            0.0
        )
