"""Tests of α-point stretching of the fluid time-indexed LP (Chowdhury et al., SPAA 2019;
docs/theory.md#alpha-point, P14).

Oracles independent of the module's envelope and trapezoid code: the verifier (feasibility,
completion times, cost of every stretch), ``g_j(s) = min_e h_e(s)`` evaluated directly on a
fine grid from the LP's cumulative amounts, a fine grid of ``α`` for the minimum cost, Monte
Carlo over seeds for the expectation, and values derived by hand for single flows.
"""

from __future__ import annotations

import dataclasses
import math
from functools import cache

import numpy as np
import pytest

from coflowlab import Fabric, FluidSchedule, Instance, verify
from coflowlab.approximations.alpha_point import (
    ALPHA_POINT_DERANDOMIZED_GUARANTEE,
    ALPHA_POINT_GUARANTEE,
    alpha_profile,
    alpha_stretch,
    release_slot_length,
    sample_alpha,
    solve_alpha_point,
    solve_alpha_point_derandomized,
)
from coflowlab.exceptions import InvalidInstanceError
from coflowlab.formulations.time_indexed import (
    solve_time_indexed_lp,
    solve_time_indexed_lp_values,
)
from coflowlab.instances.examples import theory_i1
from coflowlab.instances.generators import uniform

KINDS = ["integral", "fractional", "releases", "fractional-releases", "capacity-2", "three-ports"]
ALPHAS = [1.0, 0.8, 0.37, 1e-3, 1e-7]
RTOL = 1e-6  # the LP is solved to about 1e-9; costs are compared to it within OBJECTIVE_RTOL


@cache
def make(kind: str, seed: int) -> Instance:
    """Small instances (the LP has |E|·T variables): 2 ports, 3 coflows, random weights;
    releases rounded to a quarter so that an aligned slot grid exists. ``three-ports`` (3
    ports, 4 coflows) has LP solutions whose lagging flow changes inside slots."""
    if kind == "three-ports":
        return uniform(
            3, 4, density=0.6, sizes=(0.3, 3.0), integral=False, weights=(0.5, 3.0), seed=seed
        )
    integral = kind in ("integral", "releases", "capacity-2")
    inst = uniform(
        2,
        3,
        density=0.5,
        sizes=(1, 3) if integral else (0.3, 2.0),
        integral=integral,
        weights=(1, 3) if integral else (0.5, 3.0),
        release_rate=1.0 if "releases" in kind else None,
        seed=seed,
    )
    if "releases" in kind:
        inst = inst.replace(
            coflow_release=np.round(4 * inst.coflow_release) / 4,
            flow_release=np.round(4 * inst.flow_release) / 4,
        )
        assert inst.has_releases
    if kind == "capacity-2":
        inst = inst.replace(fabric=Fabric(2, 2.0, 2.0))
    return inst


@cache
def lp(kind: str, seed: int):
    inst = make(kind, seed)
    return solve_time_indexed_lp_values(inst, slot_length=release_slot_length(inst))


def direct_done(inst, profile, s):
    """``g_j(s) = min_{e ∈ j} F_e(s)/d_e`` from the LP schedule, interpolated flow by flow
    at the points ``s`` (no envelope)."""
    T = profile.flow_done.shape[1] - 1
    ends = np.arange(T + 1) * profile.time_slot
    h = np.array([np.interp(s, ends, row) for row in profile.flow_done])
    g = np.ones((inst.num_coflows, len(s)))
    for e, j in enumerate(inst.flow_coflow):
        g[j] = np.minimum(g[j], h[e])
    return g


# ---------------------------------------------------------------- the stretched schedule
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("seed", range(2))
def test_stretch_verifies_and_costs_what_the_profile_says(kind, seed):
    """Tests that the stretched schedule is feasible for several α, α = 1 and tiny ones
    included (capacities, bytes, releases, claimed completion times), and that coflow ``j``
    completes at ``C_j(α)/α``."""
    inst, values = make(kind, seed), lp(kind, seed)
    profile = alpha_profile(inst, values)
    for alpha in ALPHAS:
        schedule = alpha_stretch(inst, values, alpha)
        report = verify(inst, schedule)
        assert report.feasible, (alpha, report.summary())
        expected = profile.completion(alpha) / alpha
        np.testing.assert_allclose(report.coflow_completion, expected, rtol=1e-9)
        assert report.weighted_completion_time == pytest.approx(profile.cost(alpha), rel=1e-9)
        # nothing before a release (the verifier checks it too; here without its tolerance)
        first = np.full(inst.num_flows, np.inf)
        sending = schedule.rate > 0
        np.minimum.at(first, schedule.flow[sending], schedule.time[sending])
        assert (first >= inst.flow_release - 1e-12).all()


def test_alpha_one_is_the_lp_schedule():
    """Tests that α = 1 is the LP read uniformly: each flow finishes at the end of its last
    sending slot or earlier (at its 1-point), and no later than the horizon."""
    inst, values = make("integral", 0), lp("integral", 0)
    report = verify(inst, alpha_stretch(inst, values, 1.0))
    last = np.zeros(inst.num_flows)
    sent = values.amount > 1e-7
    np.maximum.at(last, values.flow[sent], values.slot[sent] * values.slot_length)
    assert (report.flow_completion <= last + 1e-9).all()
    assert report.flow_completion.max() <= values.horizon * values.slot_length + 1e-9


def test_alpha_out_of_range_is_refused():
    """Tests that α must be in (0, 1]."""
    inst, values = make("integral", 0), lp("integral", 0)
    for alpha in (0.0, -0.5, 1.5, math.nan):
        with pytest.raises(ValueError, match="alpha must be in"):
            alpha_stretch(inst, values, alpha)


def test_solver_noise_is_repaired():
    """Tests that LP values off by solver-sized errors (slightly negative, over-full ports,
    sums off by 1e-9) still give a verified stretch, with a tiny dilation."""
    inst, values = make("fractional", 1), lp("fractional", 1)
    rng = np.random.default_rng(5)
    noisy = values.amount * (1 + 1e-9 * rng.standard_normal(len(values.amount)))
    noisy = noisy + np.where(values.amount == 0, -1e-10, 0.0)
    noisy_values = dataclasses.replace(values, amount=noisy)
    profile = alpha_profile(inst, noisy_values)
    assert 0 <= profile.dilation < 1e-7
    for alpha in ALPHAS:
        report = verify(inst, alpha_stretch(inst, noisy_values, alpha))
        assert report.feasible, report.summary()
        assert report.weighted_completion_time == pytest.approx(profile.cost(alpha), rel=1e-9)


# ---------------------------------------------------------------- releases
def test_misaligned_grid_sends_early_and_is_refused():
    """Tests the reason for the aligned grid: a flow released at 0.5 with unit slots may use
    slot 1 (``1 > 0.5``); reading it uniformly sends from 0, before the release, and
    :func:`alpha_stretch` refuses such values, naming the flow and release."""
    inst = Instance.from_matrices([[[2]]], release=[0.5])
    values = solve_time_indexed_lp_values(inst, slot_length=1.0)
    start = (values.slot - 1) * values.slot_length
    uniform_read = FluidSchedule.from_segments(
        1, values.flow, start, start + values.slot_length, values.amount / values.slot_length
    )
    assert "early" in verify(inst, uniform_read).counts
    with pytest.raises(InvalidInstanceError, match=r"coflow 0, flow 0 is released at 0.5"):
        alpha_stretch(inst, values, 0.9)
    # the method picks the aligned grid δ = 0.5 instead, and the result verifies
    sol = solve_alpha_point_derandomized(inst)
    assert sol.details["slot_length"] == 0.5
    assert sol.report.feasible
    assert sol.objective == pytest.approx(2.5)  # alone from 0.5, size 2: C = 2.5 is optimal


def test_release_slot_length():
    """Tests the aligned grid: the longest ``g/k`` (``g`` the releases' gcd) not above the
    default slot length (sizes ≥ 1: default 1; a flow of 0.25: default 0.25)."""
    big = [[[2]], [[3]], [[1]]]
    assert release_slot_length(Instance.from_matrices(big, release=[0, 1.5, 3])) == 0.75
    assert release_slot_length(Instance.from_matrices(big, release=[0, 0.3, 0.5])) == (
        pytest.approx(0.1)
    )
    small = [[[0.25]], [[3]]]
    assert release_slot_length(Instance.from_matrices(small, release=[0, 0.6])) == (
        pytest.approx(0.2)
    )
    assert release_slot_length(Instance.from_matrices(big)) == 1.0
    inst = Instance.from_matrices(big, release=[0, 1.5, 3])
    assert release_slot_length(inst, 0.5) == 0.5
    with pytest.raises(InvalidInstanceError, match=r"coflow 1, flow 1: release 1.5 is not"):
        release_slot_length(inst, 0.4)


def test_releases_off_every_grid_are_refused():
    """Tests that an irrational release is refused with the flow and release named."""
    inst = Instance.from_matrices([[[2]], [[1]]], release=[0, math.pi / 10])
    with pytest.raises(InvalidInstanceError, match=r"coflow 1, flow 1: release 0.314159"):
        solve_alpha_point(inst)


def test_dependencies_are_refused():
    """Tests that dependencies are refused (the stretch ignores them)."""
    inst = Instance(2, [0, 1], [0, 1], [0, 1], [2, 1], dependencies=[(0, 1)])
    with pytest.raises(InvalidInstanceError, match="coflow 1 depends on coflow 0"):
        solve_alpha_point(inst)


# ---------------------------------------------------------------- the exact expectation
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("seed", range(2))
def test_profile_matches_the_lp_schedule(kind, seed):
    """Tests the exact piecewise-linear ``g_j`` (envelope kinks included) against the direct
    minimum over flows at random times, and the exact expectation against a fine-grid
    integral of ``2 Σ w (1 - g_j)``."""
    inst = make(kind, seed)
    profile = alpha_profile(inst, lp(kind, seed))
    horizon = (profile.flow_done.shape[1] - 1) * profile.time_slot
    s = np.random.default_rng(seed).uniform(0, horizon, 2000)
    direct = direct_done(inst, profile, s)
    for j in range(inst.num_coflows):
        a, b = profile.point_ptr[j], profile.point_ptr[j + 1]
        ours = np.interp(s, profile.point_time[a:b], profile.point_done[a:b])
        np.testing.assert_allclose(ours, direct[j], atol=1e-9)
    grid = np.linspace(0, horizon, 200_001)
    area = np.trapezoid(1 - direct_done(inst, profile, grid), grid, axis=1)
    numeric = 2 * float(inst.coflow_weight @ area)
    assert profile.expected_cost() == pytest.approx(numeric, rel=1e-5)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("seed", range(3))
def test_expectation_is_at_most_twice_the_lp(kind, seed):
    """Tests docs/theory.md#properties, P14 exactly: ``LP ≤ E_α[cost] ≤ 2·TI-LP`` (within RTOL; the
    lower side because every stretch is a feasible schedule), and the LP completions read from the
    amounts are at most the LP's own."""
    inst, values = make(kind, seed), lp(kind, seed)
    profile = alpha_profile(inst, values)
    bound = values.solution.objective
    assert bound == pytest.approx(
        solve_time_indexed_lp(inst, slot_length=values.slot_length).objective
    )
    expected = profile.expected_cost()
    assert ALPHA_POINT_GUARANTEE.holds(expected, bound, rtol=RTOL)
    assert expected >= bound * (1 - RTOL)
    assert float(inst.coflow_weight @ profile.lp_completion) <= bound * (1 + RTOL)


def test_monte_carlo_mean_is_close_to_the_exact_expectation():
    """Tests the sampling of α (density 2α) against the exact expectation: the mean cost over
    seeds 0..3999 is within 3% (the cost has a heavy 1/α tail, so the check is loose)."""
    for kind in ("releases", "fractional"):
        inst = make(kind, 1)
        profile = alpha_profile(inst, lp(kind, 1))
        alphas = np.array([sample_alpha(s) for s in range(4000)])
        assert ((alphas > 0) & (alphas <= 1)).all()
        assert np.mean(alphas) == pytest.approx(2 / 3, abs=0.02)  # E[α] = ∫ 2α² = 2/3
        assert np.mean(profile.cost(alphas)) == pytest.approx(profile.expected_cost(), rel=0.03)


# ---------------------------------------------------------------- the methods
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("seed", range(2))
def test_derandomized_is_the_best_stretch(kind, seed):
    """Tests that the derandomized cost is verified, at most the exact expectation (hence
    ≤ 2·TI-LP), and no more than the cost at any α of a fine grid."""
    inst = make(kind, seed)
    sol = solve_alpha_point_derandomized(inst)
    assert sol.report.feasible
    assert sol.guarantee is ALPHA_POINT_DERANDOMIZED_GUARANTEE
    assert sol.bound_source == "time-indexed-lp"
    assert sol.bound == pytest.approx(lp(kind, seed).solution.objective)
    assert sol.objective == pytest.approx(sol.details["alpha_cost"], rel=1e-9)
    assert sol.objective <= sol.details["expected_cost"] * (1 + 1e-9)
    assert sol.guarantee.holds(sol.objective, sol.bound)
    profile = alpha_profile(inst, lp(kind, seed))
    grid = np.linspace(1e-3, 1, 5001)
    assert sol.objective <= profile.cost(grid).min() * (1 + 1e-9)
    assert sol.details["breakpoints"] == len(profile.breakpoints()) > 0


def test_randomized_method_and_seed_reproducibility():
    """Tests that the seed fixes α (``sample_alpha``), the same seed gives the same schedule,
    different seeds different α, and the cost is the profile's ``Φ(α)``."""
    inst = make("releases", 0)
    a, b = solve_alpha_point(inst, seed=11), solve_alpha_point(inst, seed=11)
    assert a.details["alpha"] == b.details["alpha"] == sample_alpha(11)
    assert a.objective == b.objective
    assert a.guarantee is ALPHA_POINT_GUARANTEE and a.guarantee.in_expectation
    assert a.details["seed"] == 11
    others = {solve_alpha_point(inst, seed=s).details["alpha"] for s in range(3)}
    assert len(others) == 3
    profile = alpha_profile(inst, lp("releases", 0))
    assert a.objective == pytest.approx(profile.cost(a.details["alpha"]), rel=1e-9)
    assert a.details["expected_cost"] == pytest.approx(profile.expected_cost())


def test_single_flow_values_derived_by_hand():
    """Tests one flow of size 3, released at 1, weight 2 (unit slots): the LP sends one unit
    per slot from 1, so ``C(α) = 1 + 3α``, ``cost(α) = 2(1/α + 3)``,
    ``E = 2·2∫(1 + 3α)dα = 10``, the best α is 1 (cost 8), and TI-LP =
    ``2(1 + 1 + 2/3 + 1/3) = 6``."""
    inst = Instance.from_matrices([[[3]]], release=[1.0], weight=[2.0])
    sol = solve_alpha_point(inst, seed=4)
    alpha = sample_alpha(4)
    assert sol.objective == pytest.approx(2 * (1 / alpha + 3), rel=1e-9)
    assert sol.details["expected_cost"] == pytest.approx(10.0)
    assert sol.bound == pytest.approx(6.0)
    best = solve_alpha_point_derandomized(inst)
    assert best.details["alpha"] == 1.0
    assert best.objective == pytest.approx(8.0)


def test_one_coflow_alone():
    """Tests docs/theory.md#f1 as a floor: a coflow alone costs at least ``w ρ`` whatever α, the
    derandomized stretch stays within 2·TI-LP; on instance I1 (docs/theory.md#instances) (ρ = 4,
    TI-LP = 2.5)."""
    inst = theory_i1()
    opt = float(inst.coflow_weight @ inst.bottleneck)
    best = solve_alpha_point_derandomized(inst)
    assert best.bound == pytest.approx(2.5)
    assert opt - 1e-9 <= best.objective <= 5.0 + 1e-6
    assert opt - 1e-9 <= best.details["expected_cost"] <= 5.0 + 1e-6
    for seed in range(3):
        assert solve_alpha_point(inst, seed=seed).objective >= opt - 1e-9
    # a flow of 2.5 (unit slots): the LP sends 1, 1, 1/2, read uniformly (rate 1/2 in slot 3),
    # so C(α) = 2.5α up to α = 0.8, then 2 + (2.5α - 2)/0.5 = 5α - 2; with weight 3:
    # cost 7.5 for α ≤ 0.8, 3(5 - 2/α) above (9 at α = 1), E = 6(0.8 + 0.9 - 0.4) = 7.8,
    # TI-LP = 3(1 + 0.6 + 0.2) = 5.4
    one = Instance.from_matrices([[[2.5]]], weight=[3.0])
    values = solve_time_indexed_lp_values(one)
    assert values.solution.objective == pytest.approx(5.4)
    profile = alpha_profile(one, values)
    alphas = np.array([1.0, 0.9, 0.8, 0.5, 1e-4])
    want = [9.0, 15 - 6 / 0.9, 7.5, 7.5, 7.5]
    np.testing.assert_allclose(profile.cost(alphas), want, rtol=1e-9)
    for alpha, cost in zip(alphas, want, strict=True):
        assert verify(one, alpha_stretch(one, values, alpha)).weighted_completion_time == (
            pytest.approx(cost, rel=1e-9)
        )
    assert profile.expected_cost() == pytest.approx(7.8)
    alpha, cost = profile.best_alpha()
    assert cost == pytest.approx(7.5) and alpha <= 0.8 + 1e-12


def test_envelope_kink_inside_a_slot():
    """Tests the lower envelope on hand-made LP values where the lagging flow changes inside
    a slot. Two flows of 10 on disjoint ports of capacity 5 send (5, 1, 4) and (3, 5, 2):
    in slot 2, ``h_a = 0.5 + 0.1x`` and ``h_b = 0.3 + 0.5x`` cross at ``x = 1/2``,
    ``g = 0.55``. By hand: ``∫(1 - g) = 0.85 + (0.2875 + 0.2125) + 0.2 = 1.55``, so
    ``E = 3.1`` (slot ends alone would give 3.2); ``Φ(α) = C(α)/α`` is ``2 + 0.4/α`` on
    ``(0.3, 0.55]`` and ``10 - 4/α`` on ``(0.55, 0.6]``, so the best α is the kink's 0.55,
    cost ``30/11`` (α = 1 costs 3)."""
    inst = Instance(Fabric(2, 5.0, 5.0), [0, 0], [0, 1], [0, 1], [10.0, 10.0])
    values = dataclasses.replace(
        solve_time_indexed_lp_values(inst),
        horizon=3,
        flow=np.array([0, 0, 0, 1, 1, 1]),
        slot=np.array([1, 2, 3, 1, 2, 3]),
        amount=np.array([5.0, 1, 4, 3, 5, 2]),
    )
    profile = alpha_profile(inst, values)
    assert profile.slot_length == 1.0 and profile.dilation == 0.0
    s = np.array([1.25, 1.5, 1.75])
    g = np.interp(s, profile.point_time, profile.point_done)
    np.testing.assert_allclose(g, [0.425, 0.55, 0.575], rtol=1e-12)
    assert profile.expected_cost() == pytest.approx(3.1, rel=1e-12)
    alpha, cost = profile.best_alpha()
    assert alpha == pytest.approx(0.55) and cost == pytest.approx(30 / 11)
    report = verify(inst, alpha_stretch(inst, values, alpha))
    assert report.feasible
    assert report.weighted_completion_time == pytest.approx(30 / 11, rel=1e-9)
