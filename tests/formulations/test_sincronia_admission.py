"""Tests of the exact shortcut and the reused HiGHS object of Sincronia's admission LP
(``coflowlab.formulations.sincronia_admission``; Agarwal et al., SIGCOMM 2018,
docs/sincronia-online.md#admission).

The shortcut (:func:`separable_solution`) must give the LP's own answer: on random small LPs
built to split into one-variable LPs (one candidate, disjoint ports, everything fits, shared
ports that cannot overflow) its ``x`` and admitted set are those HiGHS returns through the
solver layer (a fresh ``Highs`` object, no shortcut); where the LP does not split (a shared
port that can overflow, a zero weight) it declines, and a value at exactly 1/2 goes to HiGHS.
The reused ``Highs`` object must answer as a fresh one whatever it solved before.
"""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_equal

import coflowlab as cl
from coflowlab.formulations import sincronia_admission as sa
from coflowlab.formulations.sincronia_admission import separable_solution, solve_admission

LAYER = cl.SolverOptions(mip_gap=0.5)
"""HiGHS through the solver layer, a new ``Highs`` object per LP and no shortcut (``mip_gap``
applies to MIPs only, but any non-default options leave the default path)."""


def split_lp(rng: np.random.Generator, kind: str) -> tuple[np.ndarray, np.ndarray, float]:
    """A random admission LP that splits into one-variable LPs, of the given ``kind``:
    ``"one"`` candidate, ``"disjoint"`` ports, ``"fits"`` (every port's total within the
    budget) or ``"shared"`` (disjoint overflowing ports plus shared ports that cannot
    overflow). Sizes are small integers or reals, some above the budget, some exact
    multiples of it (values 1, 1/2, 1/4 ...)."""
    budget = float(rng.choice([1.0, 2.0, 3.0, 0.7]))
    k = 1 if kind == "one" else int(rng.integers(2, 7))
    ports = int(rng.integers(1, 5))
    if kind == "one":
        p = rng.choice([0.0, 0.5, 1.0, 2.0, 3.0, 4.0, 6.0, 8.0], size=(1, 2 * ports))
    else:
        own = int(rng.integers(1, 3))  # ports of each candidate alone
        p = np.zeros((k, k * own + 2 * ports))
        for i in range(k):
            p[i, i * own : (i + 1) * own] = rng.choice([0.0, 0.5, 1.0, 2.5, 4.0, 8.0], own)
        if rng.random() < 0.3:
            p = p * rng.uniform(0.5, 2.0)  # real-valued
        if kind == "fits":
            p *= budget / max(1.0, float(p.sum(axis=0).max()))
        if kind in ("fits", "shared"):
            # shared ports whose total stays below the budget
            shared = rng.random((k, 2 * ports))
            p[:, k * own :] = shared / shared.sum(axis=0) * budget * rng.uniform(0.2, 0.95)
    w = rng.choice([0.25, 1.0, 2.0, 3.0], k)
    return p, w, budget


@pytest.mark.parametrize("kind", ["one", "disjoint", "fits", "shared"])
def test_separable_equals_highs_on_random_lps(kind):
    """Tests that on random LPs that split, the shortcut fires and its x (bit for bit), its
    admitted set and its objective are HiGHS's (solver layer, fresh object)."""
    rng = np.random.default_rng(["one", "disjoint", "fits", "shared"].index(kind))
    fired = 0
    for trial in range(150):
        p, w, budget = split_lp(rng, kind)
        assert separable_solution(p, w, budget) is not None, trial
        fast = solve_admission(p, w, budget)
        slow = solve_admission(p, w, budget, options=LAYER)
        assert slow.method == "solver"
        assert_equal(fast.admitted, slow.admitted, err_msg=f"trial {trial}")
        assert_equal(fast.x, slow.x, err_msg=f"trial {trial}")
        assert fast.objective == pytest.approx(slow.objective, rel=1e-12, abs=1e-12), trial
        fired += fast.method == "separable"
        if fast.method == "highs":  # declined only at exactly 1/2 (within the margin)
            assert np.any(np.abs(fast.x - sa.ADMIT_AT) <= sa.SEPARABLE_MARGIN), trial
    assert fired >= 100  # it fires (values at exactly 1/2 go to HiGHS)


def test_shortcut_declines_where_the_lp_does_not_split():
    """Tests that the shortcut declines a shared port that can overflow (two candidates of
    sizes 2 and 1 on one port, budget 2) and a zero weight, and answers one candidate, an
    unused candidate (x = 1) and candidates that all fit."""
    shared = [[2.0, 2.0], [1.0, 1.0]]
    assert separable_solution(shared, [1.0, 1.0], 2.0) is None
    adm = solve_admission(shared, [1.0, 1.0], 2.0)
    assert adm.method == "highs"
    assert_equal(adm.x, [0.5, 1.0])  # the smaller whole, the larger by half: 1.5 admitted
    assert separable_solution([[1.0, 0.0], [0.0, 1.0]], [1.0, 0.0], 2.0) is None
    assert_equal(separable_solution([[4.0, 1.0]], [1.0], 2.0), [0.5])
    assert_equal(separable_solution([[0.0, 0.0], [3.0, 0.0]], [1.0, 1.0], 2.0), [1.0, 2 / 3])
    assert_equal(separable_solution([[1.0, 1.0], [1.0, 0.5]], [1.0, 2.0], 2.0), [1.0, 1.0])
    assert solve_admission([[1.0, 1.0], [1.0, 0.5]], [1.0, 2.0], 2.0).method == "separable"


@pytest.mark.parametrize("weights", [[0.0], [0.0, 1.0], [0.0, 0.0]])
def test_zero_weights_keep_the_lp(weights):
    """Tests that an LP with a zero weight goes to HiGHS, which decides the free candidate
    (same answer as the solver layer), even when it would split."""
    k = len(weights)
    p = np.eye(k, 2 * k) * 4.0  # disjoint ports, each needs twice the budget
    adm = solve_admission(p, weights, 2.0)
    assert adm.method == "highs"
    layer = solve_admission(p, weights, 2.0, options=LAYER)
    assert_equal(adm.x, layer.x)
    assert_equal(adm.admitted, layer.admitted)


def test_tie_at_one_half_goes_to_highs():
    """Tests that a candidate whose value is exactly 1/2 (size twice the budget) is left to
    HiGHS, which admits it, as are values within the margin, and that a value just outside
    the margin is answered by the shortcut."""
    adm = solve_admission([[4.0, 4.0]], [1.0], 2.0)
    assert adm.method == "highs"
    assert_equal((adm.x.tolist(), adm.admitted.tolist()), ([0.5], [True]))
    near = 2.0 / (0.5 + sa.SEPARABLE_MARGIN / 2)  # x a little above 1/2, within the margin
    assert solve_admission([[near, 0.0]], [1.0], 2.0).method == "highs"
    far = 2.0 / (0.5 + 4 * sa.SEPARABLE_MARGIN)  # x just outside the margin, admitted
    adm = solve_admission([[far, 0.0]], [1.0], 2.0)
    assert adm.method == "separable"
    assert adm.admitted.tolist() == [True]


def test_empty_candidate_set():
    """Tests that no candidate gives an empty admission, without a solver."""
    adm = solve_admission(np.zeros((0, 4)), np.zeros(0), 1.0)
    assert adm.method == "empty"
    assert_equal((adm.x.shape, adm.admitted.shape, adm.objective), ((0,), (0,), 0.0))


def test_random_lps_fire_exactly_when_they_split():
    """Tests, on random LPs with shared ports, that the shortcut answers exactly when no
    port that can overflow is used by two candidates (and every weight is positive), and
    that its answer and every other one equal the solver layer's."""
    rng = np.random.default_rng(11)
    counts = {"separable": 0, "highs": 0}
    for trial in range(300):
        k, ports = int(rng.integers(1, 6)), int(rng.integers(1, 4))
        p = rng.choice([0.0, 0.0, 0.5, 1.0, 2.0, 3.0], size=(k, 2 * ports))
        w = rng.choice([0.0, 1.0, 2.0] if trial % 4 == 0 else [1.0, 2.0], k)
        budget = float(rng.choice([1.0, 2.0, 4.0]))
        tight = p.sum(axis=0) > budget
        splits = bool(np.all(w > 0)) and not np.any((p[:, tight] > 0).sum(axis=0) > 1)
        assert (separable_solution(p, w, budget) is not None) == splits, trial
        fast = solve_admission(p, w, budget)
        slow = solve_admission(p, w, budget, options=LAYER)
        assert_equal(fast.admitted, slow.admitted, err_msg=f"trial {trial}")
        assert_equal(fast.x, slow.x, err_msg=f"trial {trial}")
        counts[fast.method] += 1
    assert counts["separable"] > 30 and counts["highs"] > 30, counts


def test_reused_highs_answers_as_a_fresh_one():
    """Tests that the thread's reused HiGHS object gives a fresh object's answer whatever
    it solved before: the same LPs solved in two orders give the same x, bit for bit, as
    the solver layer (a new object per LP)."""
    rng = np.random.default_rng(3)
    lps = []
    for _ in range(40):
        k, ports = int(rng.integers(2, 8)), int(rng.integers(1, 6))
        p = rng.integers(0, 4, size=(k, 2 * ports)).astype(float) * rng.random((k, 1))
        lps.append((p, rng.integers(1, 4, size=k).astype(float), float(rng.uniform(0.5, 4))))
    layer = [solve_admission(*lp, options=LAYER).x for lp in lps]
    for order in (range(len(lps)), reversed(range(len(lps)))):
        for i in order:
            x, _ = sa._solve_direct(*lps[i])
            assert_equal(x, layer[i], err_msg=f"LP {i}")
    assert sa._highs() is sa._highs()  # one object per thread
