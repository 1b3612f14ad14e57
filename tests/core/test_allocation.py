"""Tests of the rate-allocation primitives against hand values and a textbook reference."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose

from coflowlab import allocation


def reference_max_min(src, dst, cap_in, cap_out, weight=None, demand=None):
    """Textbook progressive filling, one small step at a time (slow, obviously correct)."""
    n, m = len(src), len(cap_in)
    w = np.ones(n) if weight is None else np.asarray(weight, float)
    dem = np.full(n, np.inf) if demand is None else np.asarray(demand, float).copy()
    rate = np.zeros(n)
    frozen = np.zeros(n, bool)
    res = np.concatenate([cap_in, cap_out]).astype(float)
    ports = np.stack([np.asarray(src), np.asarray(dst) + m], axis=1)
    while not frozen.all():
        free = ~frozen
        weights_at = np.zeros(2 * m)
        np.add.at(weights_at, ports[free, 0], w[free])
        np.add.at(weights_at, ports[free, 1], w[free])
        with np.errstate(divide="ignore", invalid="ignore"):
            lev = np.where(weights_at > 0, res / weights_at, np.inf)
        dlev = np.where(free, dem / w, np.inf)
        step = min(lev.min(), dlev.min())
        inc = np.where(free, w * step, 0.0)
        rate += inc
        np.subtract.at(res, ports[:, 0], inc)
        np.subtract.at(res, ports[:, 1], inc)
        saturated = lev <= step * (1 + 1e-12)
        frozen |= free & (
            saturated[ports[:, 0]] | saturated[ports[:, 1]] | (dlev <= step * (1 + 1e-12))
        )
        dem = dem - inc
    return rate


@pytest.mark.parametrize("seed", range(60))
def test_max_min_matches_the_textbook_reference(seed):
    """Tests progressive filling against the step-by-step reference (weights, demands,
    unequal capacities)."""
    rng = np.random.default_rng(seed)
    m, n = int(rng.integers(1, 6)), int(rng.integers(1, 30))
    src, dst = rng.integers(0, m, n), rng.integers(0, m, n)
    cap_in, cap_out = rng.choice([0.5, 1, 2], m), rng.choice([0.5, 1, 2], m)
    weight = rng.integers(1, 4, n).astype(float) if seed % 2 else None
    demand = np.where(rng.random(n) < 0.3, rng.random(n), np.inf) if seed % 3 == 0 else None
    got = allocation.max_min_fair(src, dst, cap_in, cap_out, weight=weight, demand=demand)
    assert_allclose(got, reference_max_min(src, dst, cap_in, cap_out, weight, demand), atol=1e-12)


@pytest.mark.parametrize("pairs_per_flow", [0, np.inf])
@pytest.mark.parametrize("seed", range(20))
def test_both_max_min_paths_match_the_reference(seed, pairs_per_flow, monkeypatch):
    """Tests the flow-list kernel and the pair-matrix kernel (forced by the density
    threshold) against the reference, on many parallel flows and tie-prone capacities."""
    monkeypatch.setattr(allocation, "_PAIRS_PER_FLOW", pairs_per_flow)
    rng = np.random.default_rng(100 + seed)
    m, n = int(rng.integers(2, 7)), int(rng.integers(20, 120))
    src, dst = rng.integers(0, m, n), rng.integers(0, m, n)
    cap_in, cap_out = rng.choice([0.5, 1], m), rng.choice([0.5, 1], m)  # many equal levels
    weight = rng.integers(1, 3, n).astype(float) if seed % 2 else None
    got = allocation.max_min_fair(src, dst, cap_in, cap_out, weight=weight)
    assert_allclose(got, reference_max_min(src, dst, cap_in, cap_out, weight), atol=1e-12)


def test_max_min_ties_freeze_every_tied_port():
    """Tests a square of equal ports (every port ties at 1/2) and a weighted pair."""
    r = allocation.max_min_fair([0, 0, 1, 1], [0, 1, 0, 1], [1, 1], [1, 1])
    assert_allclose(r, [0.5] * 4)
    r = allocation.max_min_fair([0, 0, 1], [0, 1, 1], [1, 1], [1, 1], weight=[3, 1, 1])
    assert_allclose(r, [0.75, 0.25, 0.75])


def test_max_min_fair_levels_gives_each_pair_its_first_filled_port():
    """Tests the pair form: rates are weight times the smaller level of the two ports, and
    agree with max_min_fair on one flow per pair."""
    rng = np.random.default_rng(7)
    weight = rng.integers(0, 4, (6, 6)).astype(float)
    cap_in, cap_out = rng.choice([0.5, 1, 2], 6), rng.choice([0.5, 1, 2], 6)
    level_in, level_out = allocation.max_min_fair_levels(weight, cap_in, cap_out)
    src, dst = np.nonzero(weight)
    rate = weight[src, dst] * np.minimum(level_in[src], level_out[dst])
    expected = reference_max_min(src, dst, cap_in, cap_out, weight[src, dst])
    assert_allclose(rate, expected, atol=1e-12)
    assert np.isinf(allocation.max_min_fair_levels(np.zeros((2, 2)), 1.0, 1.0)[0]).all()


def test_max_min_properties_on_a_larger_instance():
    """Tests that max-min rates are feasible and every flow has a saturated bottleneck port
    on which it has the largest rate (the characterization of max-min fairness)."""
    rng = np.random.default_rng(3)
    m, n = 8, 400
    src, dst = rng.integers(0, m, n), rng.integers(0, m, n)
    r = allocation.max_min_fair(src, dst, np.ones(m), np.ones(m))
    use_in = np.bincount(src, weights=r, minlength=m)
    use_out = np.bincount(dst, weights=r, minlength=m)
    assert use_in.max() <= 1 + 1e-12 and use_out.max() <= 1 + 1e-12
    for i in range(n):
        ok = (use_in[src[i]] >= 1 - 1e-9 and r[i] >= r[src == src[i]].max() - 1e-12) or (
            use_out[dst[i]] >= 1 - 1e-9 and r[i] >= r[dst == dst[i]].max() - 1e-12
        )
        assert ok, f"flow {i} has no bottleneck"


def test_priority_greedy_follows_the_order_and_conserves_work():
    """Tests strict priority: earlier flows take the smaller residual; no flow left with
    spare capacity at both ports."""
    src, dst = np.array([0, 0, 1, 1]), np.array([0, 1, 0, 1])
    r = allocation.priority_greedy([2, 0, 3, 1], src, dst, [1.0, 1.0], [1.0, 0.5])
    assert_allclose(r, [0.0, 0.5, 1.0, 0.0])
    res_in = 1 - np.bincount(src, weights=r, minlength=2)
    res_out = np.array([1.0, 0.5]) - np.bincount(dst, weights=r, minlength=2)
    assert not np.any((res_in[src] > 1e-12) & (res_out[dst] > 1e-12))


def test_backfill_keeps_existing_rates_and_tops_up():
    """Tests that backfill only adds to the given rates, within capacity."""
    r = allocation.backfill([0.25, 0.25], [1, 0], [0, 1], [0, 0], [1.0, 1.0], [1.0])
    assert_allclose(r, [0.25, 0.75])


def test_madd_on_fig_4_6_gives_gamma_2n():
    """Tests MADD on thesis Fig. 4.6 (N = 3): Γ = 2N = 6 and every flow finishes at Γ."""
    n = 3
    src = np.r_[np.arange(n), np.arange(n, 2 * n), [2 * n, 2 * n]]
    dst = np.r_[np.zeros(n), np.ones(n), [0, 1]].astype(int)
    rem = np.r_[np.ones(2 * n), [n, n]].astype(float)
    rates, gamma = allocation.madd(
        [0, len(src)], np.arange(len(src)), rem, src, dst, np.ones(2 * n + 1), np.ones(2 * n + 1)
    )
    assert_allclose(gamma, [2.0 * n])
    assert_allclose(rem / rates, 2.0 * n)


def test_iterative_madd_uses_what_earlier_coflows_leave():
    """Tests the thesis's Fig. B.2 as reconstructed in R-B2 (docs/test-cases.md#r-b2): after C1
    takes 1/2 of out1, C2's Γ is 4 and its rate 1/2."""
    src, dst = np.array([0, 0, 1]), np.array([0, 1, 0])
    rem = np.array([1.0, 1.0, 2.0])
    rates, gamma = allocation.madd([0, 2, 3], [0, 1, 2], rem, src, dst, [1, 1], [1, 1])
    assert_allclose(gamma, [2.0, 4.0])
    assert_allclose(rates, [0.5, 0.5, 0.5])


def test_madd_with_a_desired_duration_and_an_exhausted_port():
    """Tests deadline mode (rate = remaining / duration) and Γ = inf on an exhausted port."""
    rates, gamma = allocation.madd(
        [0, 1, 2], [0, 1], [2.0, 1.0], [0, 0], [0, 0], [1.0], [1.0], duration=[4.0, 0.0]
    )
    assert_allclose(rates, [0.5, 0.5])  # the second coflow gets MADD on what is left
    assert_allclose(gamma, [2.0, 2.0])
    rates, gamma = allocation.madd([0, 1, 2], [0, 1], [2.0, 1.0], [0, 0], [0, 0], [1.0], [1.0])
    assert np.isinf(gamma[1]) and rates[1] == 0.0
    rates, _ = allocation.madd([0, 1], [0], [2.0], [0], [0], [1.0], [1.0], duration=[1.0])
    assert rates[0] == 0.0  # Γ = 2 exceeds the desired duration: nothing


def test_effective_bottleneck_is_eq_4_1():
    """Tests Γ on thesis Fig. 3.2 with full and with residual capacities."""
    args = ([1, 1, 1, 1, 2, 2], [0, 0, 1, 1, 2, 2], [0, 1, 0, 1, 0, 1])
    assert allocation.effective_bottleneck(*args, [1, 1, 1], [1, 1, 1]) == 4.0
    assert allocation.effective_bottleneck(*args, [1, 1, 1], [0.5, 1, 1]) == 8.0
    assert np.isinf(allocation.effective_bottleneck(*args, [1, 1, 0], [1, 1, 1]))


def test_weights_must_be_positive():
    """Tests that zero weights are refused."""
    with pytest.raises(ValueError, match="positive"):
        allocation.max_min_fair([0], [0], [1.0], [1.0], weight=[0.0])
