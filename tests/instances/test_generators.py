"""Tests for the random instance generators in ``coflowlab.instances.generators``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from numpy.testing import assert_, assert_allclose, assert_array_less, assert_equal

from coflowlab.instance import Instance, Units
from coflowlab.instances.generators import (
    FB_BIN_FRACTIONS,
    assign_deadlines,
    assign_weights,
    concurrent_open_shop,
    fb_like,
    poisson_releases,
    single_port,
    uniform,
)

GENERATORS: dict[str, Callable[..., Instance]] = {
    "uniform": lambda seed: uniform(
        4, 6, density=0.3, release_rate=0.5, weights=(1, 3), seed=seed
    ),
    "uniform_real": lambda seed: uniform(3, 5, sizes=(0.5, 2.5), integral=False, seed=seed),
    "fb_like": lambda seed: fb_like(40, num_ports=20, seed=seed),
    "concurrent_open_shop": lambda seed: concurrent_open_shop(3, 5, density=0.5, seed=seed),
    "single_port": lambda seed: single_port(6, seed=seed),
    "assign_weights": lambda seed: assign_weights(uniform(3, 4, seed=0), seed=seed),
    "assign_deadlines": lambda seed: assign_deadlines(uniform(3, 4, seed=0), seed=seed),
}


@pytest.fixture(scope="module")
def fb2000() -> Instance:
    """``fb_like(2000)`` with seed 2024, shared by the FB-like tests."""
    return fb_like(2000, seed=2024)


# ---------------------------------------------------------------- determinism and seeds
@pytest.mark.parametrize("name", sorted(GENERATORS))
def test_same_seed_gives_equal_instances(name: str):
    """Tests that a generator called twice with the same integer seed returns equal instances."""
    make = GENERATORS[name]
    assert_(make(11) == make(11))


@pytest.mark.parametrize("name", sorted(GENERATORS))
def test_different_seeds_give_different_instances(name: str):
    """Tests that two different seeds give different instances."""
    make = GENERATORS[name]
    assert_(make(1) != make(2))


@pytest.mark.parametrize("name", sorted(GENERATORS))
def test_generator_seed_equals_integer_seed(name: str):
    """Tests that passing ``default_rng(s)`` is the same as passing ``s``, and that a shared
    generator advances between calls."""
    make = GENERATORS[name]
    rng = np.random.default_rng(5)
    first = make(rng)
    assert_(first == make(5))
    assert_(make(rng) != first)


@pytest.mark.parametrize("seed", ["7", 1.5, True, [1]])
def test_bad_seed_type_raises(seed: Any):
    """Tests that a seed that is not an int, a Generator or None raises TypeError."""
    with pytest.raises(TypeError, match="seed"):
        uniform(2, 2, seed=seed)


def test_none_seed_draws_fresh_instances():
    """Tests that ``seed=None`` works and uses fresh entropy (two draws differ)."""
    a = uniform(5, 20, sizes=(1, 1000), seed=None)
    b = uniform(5, 20, sizes=(1, 1000), seed=None)
    assert_(a != b)


# ---------------------------------------------------------------- parameter validation
@pytest.mark.parametrize(
    ("make", "param"),
    [
        (lambda: uniform(0, 3), "num_ports"),
        (lambda: uniform(2, 0), "num_coflows"),
        (lambda: uniform(2.0, 3), "num_ports"),
        (lambda: uniform(2, 3, density=0.0), "density"),
        (lambda: uniform(2, 3, density=1.5), "density"),
        (lambda: uniform(2, 3, density=float("nan")), "density"),
        (lambda: uniform(2, 3, sizes=(0, 5)), "sizes"),
        (lambda: uniform(2, 3, sizes=(5, 1)), "sizes"),
        (lambda: uniform(2, 3, sizes=(1, 2.5)), "sizes"),
        (lambda: uniform(2, 3, sizes=(1, 2, 3)), "sizes"),
        (lambda: uniform(2, 3, sizes=(1, float("inf")), integral=False), "sizes"),
        (lambda: uniform(2, 3, release_rate=0), "release_rate"),
        (lambda: uniform(2, 3, release_rate=-1.0), "release_rate"),
        (lambda: uniform(2, 3, weights=(-1, 2)), "weights"),
        (lambda: uniform(2, 3, weights=(3, 2)), "weights"),
        (lambda: fb_like(0), "num_coflows"),
        (lambda: fb_like(10, num_ports=7), "num_ports"),
        (lambda: fb_like(10, load=0), "load"),
        (lambda: fb_like(10, load=float("inf")), "load"),
        (lambda: fb_like(10, capacity=-0.125), "capacity"),
        (lambda: concurrent_open_shop(0, 3), "num_machines"),
        (lambda: concurrent_open_shop(3, 0), "num_jobs"),
        (lambda: concurrent_open_shop(3, 3, density=2.0), "density"),
        (lambda: concurrent_open_shop(3, 3, sizes=(0.5, 2)), "sizes"),
        (lambda: single_port(0), "num_jobs"),
        (lambda: single_port(3, weights=(2, 1)), "weights"),
        (lambda: assign_weights(uniform(2, 2, seed=0), 3, 1), "weights"),
        (lambda: assign_weights(uniform(2, 2, seed=0), -1, 1), "weights"),
        (lambda: assign_deadlines(uniform(2, 2, seed=0), x=-0.5), "x"),
        (lambda: assign_deadlines(uniform(2, 2, seed=0), minimum=-1), "minimum"),
        (lambda: poisson_releases(0, 1.0), "num"),
        (lambda: poisson_releases(3, 0.0), "rate"),
    ],
)
def test_invalid_parameter_raises_value_error_naming_it(make: Callable[[], Any], param: str):
    """Tests that each invalid parameter raises ValueError whose message names it."""
    with pytest.raises(ValueError, match=param):
        make()


# ---------------------------------------------------------------- uniform
def test_uniform_integral_sizes_in_closed_range():
    """Tests that integral uniform sizes are whole numbers covering the closed range."""
    inst = uniform(4, 200, sizes=(2, 5), seed=3)
    assert_equal(inst.flow_size, np.round(inst.flow_size))
    assert_equal(np.unique(inst.flow_size), [2.0, 3.0, 4.0, 5.0])
    assert_equal(inst.units, Units())
    assert_allclose(inst.fabric.port_capacity, 1.0)


def test_uniform_real_sizes_in_range():
    """Tests that non-integral sizes lie in the range and are not whole numbers."""
    inst = uniform(3, 50, sizes=(0.5, 1.5), integral=False, seed=4)
    assert_(((inst.flow_size >= 0.5) & (inst.flow_size <= 1.5)).all())
    assert_(not np.all(inst.flow_size == np.round(inst.flow_size)))


def test_uniform_density_one_gives_full_matrices():
    """Tests that density 1 makes every demand-matrix entry a flow."""
    inst = uniform(3, 4, density=1.0, seed=0)
    assert_equal(inst.width, [9, 9, 9, 9])
    assert_equal(inst.num_ports, 3)


def test_uniform_low_density_still_gives_every_coflow_a_flow():
    """Tests that a coflow drawing no entry still gets exactly one flow."""
    inst = uniform(2, 300, density=0.01, seed=1)
    assert_(inst.width.min() >= 1)
    assert_(inst.width.mean() < 1.2)  # the forced entry dominates at this density
    assert_equal(inst.num_coflows, 300)


def test_uniform_density_matches_fraction_of_entries():
    """Tests that the fraction of present entries is close to the density."""
    inst = uniform(5, 400, density=0.3, seed=2)
    assert_allclose(inst.num_flows / (400 * 25), 0.3, atol=0.02)


def test_uniform_releases_and_weights():
    """Tests that releases are Poisson (first at 0, non-decreasing, mean gap 1/rate), weights
    are in range, and that the defaults are zero releases and unit weights."""
    inst = uniform(2, 2000, release_rate=4.0, weights=(2, 3), seed=6)
    rel = inst.coflow_release
    assert_equal(rel[0], 0.0)
    assert_(np.all(np.diff(rel) >= 0))
    assert_allclose(np.diff(rel).mean(), 0.25, rtol=0.1)
    assert_equal(np.unique(inst.coflow_weight), [2.0, 3.0])
    plain = uniform(2, 5, seed=6)
    assert_equal(plain.coflow_release, np.zeros(5))
    assert_equal(plain.coflow_weight, np.ones(5))


# ---------------------------------------------------------------- concurrent open shop
def test_concurrent_open_shop_is_diagonal():
    """Tests that every flow goes from a port to the same port, one per machine at most."""
    inst = concurrent_open_shop(4, 30, density=0.5, weights=(1, 4), seed=8)
    assert_equal(inst.flow_src, inst.flow_dst)
    assert_equal(inst.ingress_load, inst.egress_load)
    pairs = set(zip(inst.flow_coflow.tolist(), inst.flow_src.tolist(), strict=True))
    assert_equal(len(pairs), inst.num_flows)
    assert_(inst.width.min() >= 1)
    assert_(((inst.coflow_weight >= 1) & (inst.coflow_weight <= 4)).all())


def test_concurrent_open_shop_full_density():
    """Tests that density 1 gives every job an operation on every machine."""
    inst = concurrent_open_shop(3, 5, sizes=(1, 3), seed=9)
    assert_equal(inst.width, [3] * 5)
    assert_equal(inst.flow_size, np.round(inst.flow_size))
    assert_(((inst.flow_size >= 1) & (inst.flow_size <= 3)).all())


# ---------------------------------------------------------------- single port
def test_single_port_is_one_machine_with_one_flow_per_job():
    """Tests that the 1||ΣwC instance has one port, one flow per coflow, and integral sizes and
    weights in range."""
    inst = single_port(50, sizes=(2, 6), weights=(1, 5), seed=10)
    assert_equal(inst.num_ports, 1)
    assert_equal(inst.width, np.ones(50))
    assert_equal(inst.flow_src, np.zeros(50))
    assert_equal(inst.flow_dst, np.zeros(50))
    assert_equal(inst.coflow_weight, np.round(inst.coflow_weight))
    assert_(((inst.coflow_weight >= 1) & (inst.coflow_weight <= 5)).all())
    assert_(((inst.flow_size >= 2) & (inst.flow_size <= 6)).all())
    assert_equal(single_port(3, weights=None, seed=0).coflow_weight, [1.0, 1.0, 1.0])


# ---------------------------------------------------------------- FB-like
def _bins(inst: Instance) -> dict[str, np.ndarray]:
    short = inst.length < 5
    narrow = inst.width <= 50
    return {
        "SN": short & narrow,
        "LN": ~short & narrow,
        "SW": short & ~narrow,
        "LW": ~short & ~narrow,
    }


def test_fb_like_bin_fractions(fb2000: Instance):
    """Tests that the Varys bins (from lengths and widths) hold 52/16/15/17% of the coflows."""
    bins = _bins(fb2000)
    for name, target in FB_BIN_FRACTIONS.items():
        assert_allclose(bins[name].mean(), target, atol=0.01, err_msg=name)


def test_fb_like_bins_hold_on_a_small_fabric():
    """Tests that the bins still hold with the smallest allowed fabric (8 ports)."""
    inst = fb_like(300, num_ports=8, seed=1)
    bins = _bins(inst)
    for name, target in FB_BIN_FRACTIONS.items():
        assert_allclose(bins[name].mean(), target, atol=0.01, err_msg=name)


def test_fb_like_units_capacity_and_whole_sizes(fb2000: Instance):
    """Tests that FB-like instances use MB/ms, the capacity, and whole-MB sizes >= 1 MB."""
    assert_equal(fb2000.units, Units("MB", "ms"))
    assert_equal(fb2000.num_ports, 150)
    assert_allclose(fb2000.fabric.port_capacity, 0.125)
    assert_equal(fb2000.flow_size, np.round(fb2000.flow_size))
    assert_(fb2000.flow_size.min() >= 1)


def test_fb_like_coflows_are_full_shuffles_with_equal_sizes_per_reducer():
    """Tests that each coflow is a full M×R grid on distinct ports and that all flows into one
    reducer have the same size (so the benchmark format can hold it)."""
    inst = fb_like(60, num_ports=30, seed=3)
    for k in range(inst.num_coflows):
        flows = inst.coflow_flows(k)
        src, dst, size = inst.flow_src[flows], inst.flow_dst[flows], inst.flow_size[flows]
        mappers, reducers = np.unique(src), np.unique(dst)
        assert_equal(flows.size, mappers.size * reducers.size)
        assert_equal(len(set(zip(src.tolist(), dst.tolist(), strict=True))), flows.size)
        for r in reducers:
            assert_equal(np.unique(size[dst == r]).size, 1)


def test_fb_like_releases_whole_ms_and_load(fb2000: Instance):
    """Tests that releases are whole ms starting at 0 and that the busiest port is offered
    about ``load`` of its capacity over the arrival span."""
    rel = fb2000.coflow_release
    assert_equal(rel[0], 0.0)
    assert_equal(rel, np.round(rel))
    assert_(np.all(np.diff(rel) >= 0))
    busiest = fb2000.port_load.sum(axis=0).max() / 0.125
    assert_allclose(busiest / rel[-1], 0.9, rtol=0.1)
    light = fb_like(2000, load=0.3, seed=2024)
    assert_allclose(light.coflow_release[-1] / rel[-1], 3.0, rtol=1e-3)


def test_fb_like_flow_count_matches_trace_density(fb2000: Instance):
    """Tests that the mean number of flows per coflow is near the trace's 1,343 and the
    long-wide bin carries almost all bytes."""
    assert_allclose(fb2000.num_flows / 2000, 1343, rtol=0.15)
    lw = _bins(fb2000)["LW"]
    assert_(fb2000.total_size[lw].sum() / fb2000.total_size.sum() > 0.9)


# ---------------------------------------------------------------- weights and deadlines
def test_assign_weights_integral_in_range_and_nothing_else_changes():
    """Tests that weights are whole numbers in [low, high] and that nothing else changes."""
    base = uniform(3, 300, release_rate=1.0, seed=0)
    inst = assign_weights(base, 2, 5, seed=1)
    assert_equal(np.unique(inst.coflow_weight), [2.0, 3.0, 4.0, 5.0])
    assert_(inst.replace(coflow_weight=base.coflow_weight) == base)


def test_assign_weights_real():
    """Tests that weights are reals in the range when ``integral=False``."""
    inst = assign_weights(uniform(3, 100, seed=0), 0.5, 1.5, integral=False, seed=2)
    w = inst.coflow_weight
    assert_(((w >= 0.5) & (w <= 1.5)).all())
    assert_(not np.all(w == np.round(w)))


@pytest.mark.parametrize("x", [0.0, 0.1, 1.0, 10.0])
def test_assign_deadlines_follow_varys_formula(x: float):
    """Tests that Γ <= D <= Γ(1 + x) for a dimensionless instance (minimum 0)."""
    inst = uniform(4, 200, seed=5)
    gamma = inst.bottleneck
    d = assign_deadlines(inst, x, seed=6).coflow_deadline
    assert_(np.all(d >= gamma))
    assert_(np.all(d <= gamma * (1 + x) * (1 + 1e-12)))
    if x > 0:
        assert_(np.any(d > gamma * (1 + x / 2)))  # the slack is spread, not constant


def test_assign_deadlines_default_minimum_is_200_ms():
    """Tests that the default minimum is 200 ms for ms instances, 0.2 for s instances and 0
    for dimensionless ones."""
    small = uniform(2, 50, sizes=(1, 3), seed=7)  # every Γ <= 6 < 200
    in_ms = assign_deadlines(small.replace(units=Units("MB", "ms")), seed=8)
    assert_equal(in_ms.coflow_deadline, np.full(50, 200.0))
    in_s = assign_deadlines(small.replace(units=Units("MB", "s")).scale_time(0.001), seed=8)
    assert_equal(in_s.coflow_deadline, np.full(50, 0.2))
    plain = assign_deadlines(small, seed=8)
    assert_array_less(plain.coflow_deadline, 200.0)


def test_assign_deadlines_explicit_minimum_and_fb_like():
    """Tests that deadlines are max(Γ(1 + U), minimum) on an FB-like instance."""
    inst = fb_like(300, seed=9)
    gamma = inst.bottleneck
    d = assign_deadlines(inst, 1.0, seed=1).coflow_deadline
    assert_(np.all(d >= np.maximum(gamma, 200.0)))
    assert_(np.all(d <= np.maximum(2 * gamma, 200.0) * (1 + 1e-12)))
    assert_(np.any(d == 200.0) and np.any(d > 200.0))
    d5 = assign_deadlines(inst, 1.0, minimum=5000.0, seed=1).coflow_deadline
    assert_(np.all(d5 >= 5000.0))


# ---------------------------------------------------------------- Poisson releases
def test_poisson_releases_shape_and_rate():
    """Tests that arrivals start at 0, never decrease, and have mean gap 1/rate."""
    t = poisson_releases(5001, 0.5, seed=3)
    assert_equal(t.shape, (5001,))
    assert_equal(t[0], 0.0)
    assert_(np.all(np.diff(t) > 0))
    assert_allclose(np.diff(t).mean(), 2.0, rtol=0.05)
    assert_equal(poisson_releases(1, 3.0, seed=0), [0.0])
