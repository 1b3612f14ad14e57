"""The compiled weighted progressive filling of HUG, PS-P and Coflex
(:func:`coflowlab.heuristics.correlation.fill`, a level sweep over a heap of resources)
against a plain NumPy reference that recomputes every port's demand at every step."""

from __future__ import annotations

import numpy as np
import pytest

from coflowlab.heuristics.correlation import EPS, Active, fill


def reference_fill(rates, a, weight, cap_share=None):
    """Weighted progressive filling, one pass over every flow per step: every free flow
    rises at its weight until a port (or, with ``cap_share``, its coflow's share of a port)
    is full."""
    m2 = len(a.cap)
    r = rates.copy()
    s, t = a.src, a.m + a.dst
    nc = len(a.ids)
    res = np.maximum(a.cap - np.bincount(s, r, m2) - np.bincount(t, r, m2), 0.0)
    tol = EPS * max(float(a.cap.max(initial=0.0)), 1.0)
    key_s, key_t = a.group * m2 + s, a.group * m2 + t
    if cap_share is not None:
        held = np.bincount(key_s, r, nc * m2) + np.bincount(key_t, r, nc * m2)
        cres = np.maximum(np.tile(cap_share * a.cap, nc) - held, 0.0)
    free = (weight > 0) & (res[s] > tol) & (res[t] > tol)
    if cap_share is not None:
        free &= (cres[key_s] > tol) & (cres[key_t] > tol)
    while free.any():
        w = np.where(free, weight, 0.0)
        demand = np.bincount(s, w, m2) + np.bincount(t, w, m2)
        with np.errstate(divide="ignore", invalid="ignore"):
            step = float(np.where(demand > 0, res / demand, np.inf).min())
            if cap_share is not None:
                cdem = np.bincount(key_s, w, nc * m2) + np.bincount(key_t, w, nc * m2)
                step = min(step, float(np.where(cdem > 0, cres / cdem, np.inf).min()))
        r += step * w
        res = np.maximum(res - step * demand, 0.0)
        free &= (res[s] > tol) & (res[t] > tol)
        if cap_share is not None:
            cres = np.maximum(cres - step * cdem, 0.0)
            free &= (cres[key_s] > tol) & (cres[key_t] > tol)
    return r


def random_case(seed: int) -> tuple[np.ndarray, Active, np.ndarray]:
    rng = np.random.default_rng(seed)
    m, nc = int(rng.integers(1, 6)), int(rng.integers(1, 5))
    n = int(rng.integers(1, 25))
    group = rng.integers(0, nc, n)
    ids = np.unique(group)
    group = np.searchsorted(ids, group)
    src, dst = rng.integers(0, m, n), rng.integers(0, m, n)
    cap = rng.choice([0.5, 1.0, 2.0], 2 * m)
    weight = rng.choice([0.0, 0.25, 1.0, rng.random()], n)
    rates = np.zeros(n)
    # a feasible start: some flows already hold part of their ports
    for f in rng.permutation(n)[: n // 2]:
        use_s = np.bincount(src, rates, m)[src[f]]
        use_t = np.bincount(dst, rates, m)[dst[f]]
        room = min(cap[src[f]] - use_s, cap[m + dst[f]] - use_t)
        rates[f] = max(room, 0.0) * rng.random() * 0.5
    zeros = np.zeros(0)
    a = Active(ids, group, src, dst, zeros, cap, zeros, zeros, zeros)
    return rates, a, weight


@pytest.mark.parametrize("seed", range(300))
def test_fill_matches_the_reference(seed):
    """Tests 300 random cases (1-5 ports, 1-4 coflows, capacities 0.5/1/2, zero and
    fractional weights, partly allocated starts), without and with a per-coflow cap
    share: the compiled fill equals the reference within 1e-9."""
    rates, a, weight = random_case(seed)
    for cap_share in (None, 0.3, 1.0):
        got = fill(rates, a, weight, cap_share=cap_share)
        want = reference_fill(rates, a, weight, cap_share=cap_share)
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-9)


def test_fill_saturates_a_shared_port_in_proportion_to_weights():
    """Tests a hand case: two flows share ingress port 0 (capacity 1) with weights 1 and 3;
    the port fills at level 1/4, giving 1/4 and 3/4. With a cap share of 1/2, coflow 1 stops
    at 1/2 (level 1/6) and flow 0 alone takes the rest of the port: 1/2 each."""
    z = np.zeros(0)
    a = Active(
        np.array([0, 1]),
        np.array([0, 1]),
        np.array([0, 0]),
        np.array([0, 1]),
        z,
        np.ones(4),
        z,
        z,
        z,
    )
    got = fill(np.zeros(2), a, np.array([1.0, 3.0]))
    np.testing.assert_allclose(got, [0.25, 0.75], atol=1e-15)
    capped = fill(np.zeros(2), a, np.array([1.0, 3.0]), cap_share=0.5)
    np.testing.assert_allclose(capped, [0.5, 0.5], atol=1e-15)


@pytest.mark.parametrize("seed", range(40))
def test_fill_keeps_ports_within_capacity_when_weights_span_orders_of_magnitude(seed):
    """Tests the cancellation guard: 400 flows on 3 ports with weights from 1e-9 to 1e3
    (HUG's weights are remaining bytes over Γ, which span that range on the Facebook trace,
    where running sums once left ports 4e-8 over capacity): no port or capped share ends
    over its capacity by more than 1e-12 relative, and the result equals the reference."""
    rng = np.random.default_rng(seed)
    m, nc, n = 3, 5, 400
    group = np.sort(rng.integers(0, nc, n))
    src, dst = rng.integers(0, m, n), rng.integers(0, m, n)
    cap = np.full(2 * m, 0.125)
    weight = 10.0 ** rng.uniform(-9, 3, n)
    z = np.zeros(0)
    a = Active(np.arange(nc), group, src, dst, z, cap, z, z, z)
    for cap_share in (None, 0.2):
        got = fill(np.zeros(n), a, weight, cap_share=cap_share)
        use = np.bincount(src, got, m), np.bincount(dst, got, m)
        assert (np.concatenate(use) <= cap * (1 + 1e-12)).all()
        if cap_share is not None:
            held = np.zeros((nc, 2 * m))
            np.add.at(held, (group, src), got)
            np.add.at(held, (group, m + dst), got)
            assert (held <= cap_share * cap * (1 + 1e-12)).all()
        want = reference_fill(np.zeros(n), a, weight, cap_share=cap_share)
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-15)
