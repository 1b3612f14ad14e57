"""Shared fixtures: small named instances and the public trace (skipped when absent)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import coflowlab as cl

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data"


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
