"""Shared fixtures: small named instances and the public trace (skipped when absent), and the
``--solvers`` option: which LP/MIP backends the solver tests run on."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import coflowlab as cl

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--solvers",
        default=None,
        metavar="NAMES",
        help="comma-separated LP/MIP backends for the solver tests (highs, cbc, gurobi); "
        "default: every installed one",
    )


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("--solvers") is not None:
        selected_solvers(config)  # a bad --solvers stops the run at once, with a usage error


def selected_solvers(config: pytest.Config) -> list[str]:
    """The backends named by ``--solvers`` (default: all), in registry order. A named
    backend that is not installed stays in the list; its tests skip saying so."""
    from coflowlab.solvers import SOLVERS, available_solvers

    raw = config.getoption("--solvers")
    if raw is None:
        return available_solvers()
    names = [s.strip() for s in raw.split(",") if s.strip()]
    unknown = sorted(set(names) - set(SOLVERS))
    if unknown or not names:
        raise pytest.UsageError(
            f"--solvers: unknown backend(s) {', '.join(unknown) or '(none given)'}; "
            f"choose from {', '.join(SOLVERS)}"
        )
    return [s for s in SOLVERS if s in names]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A test with a ``solver_backend`` argument runs once per selected backend (skipped,
    with the reason, for a selected backend that is not installed)."""
    if "solver_backend" not in metafunc.fixturenames:
        return
    from coflowlab.exceptions import SolverNotAvailableError
    from coflowlab.solvers.api import require_solver

    params = []
    for name in selected_solvers(metafunc.config):
        try:
            require_solver(name)
            params.append(pytest.param(name, id=name))
        except SolverNotAvailableError as exc:
            skip = pytest.mark.skip(reason=f"--solvers names {name}: {exc}")
            params.append(pytest.param(name, id=name, marks=skip))
    metafunc.parametrize("solver_backend", params)


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """The folder of small test files, good and deliberately broken."""
    return DATA


@pytest.fixture(scope="session")
def fb_trace() -> Path:
    """The public Facebook coflow trace; the test is skipped when it is not present."""
    from coflowlab.instances import find_fb_trace

    path = find_fb_trace()
    if path is None:
        pytest.skip("FB2010-1Hr-150-0.txt not found (see README: 'Getting the trace')")
    return path


@pytest.fixture
def shuffle_3x2() -> cl.Instance:
    """Chowdhury's thesis Fig. 3.2: one 3×2 shuffle, D = [[1,1],[1,1],[2,2]]; ρ = 4."""
    d = np.zeros((3, 3))
    d[:, :2] = [[1, 1], [1, 1], [2, 2]]
    return cl.Instance.from_matrices([d])


@pytest.fixture
def two_coflows() -> cl.Instance:
    """Two coflows on a 2×2 fabric with a release date and a weight.

    Coflow 0: 0→0 size 2, 1→1 size 1 (ρ = 2). Coflow 1: 0→1 size 1, released at 1, weight 3.
    """
    return cl.Instance.from_coflows(
        [
            cl.Coflow([(0, 0, 2.0), (1, 1, 1.0)]),
            cl.Coflow([(0, 1, 1.0)], release=1.0, weight=3.0),
        ],
        2,
    )
