"""Tests of the shared coflow orderings (:mod:`coflowlab.orderings`).

Test-case identifiers (R-B2, TC-Y-5) are defined in docs/test-cases.md; theory I2 is in
docs/theory.md#instances."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_equal

from coflowlab import Coflow, Instance, orderings
from coflowlab.instances import EXPECTED, assign_weights, examples, fb_like, single_port, uniform
from coflowlab.orderings import (
    ORDERINGS,
    bottleneck_key,
    fifo,
    instance_order,
    largest_weight_first,
    length_key,
    ncf,
    order_by,
    scf,
    sebf,
    sebf_residual,
    size_key,
    smith,
    smith_key,
    tcf,
    width_key,
)

# Three coflows on a 2×2 fabric (flows: coflow, src, dst, size):
#   coflow 0: 0→0 3, 1→1 1         length 3, width 2, size 4, Γ 3
#   coflow 1: 0→1 2, 1→0 2         length 2, width 2, size 4, Γ 2
#   coflow 2: 1→1 3                length 3, width 1, size 3, Γ 3
SIZE = np.array([3.0, 1.0, 2.0, 2.0, 3.0])
SRC = np.array([0, 1, 0, 1, 1])
DST = np.array([0, 1, 1, 0, 1])
COFLOW = np.array([0, 0, 1, 1, 2])
CAP = np.ones(2)


def test_order_by_sorts_ascending_with_ties_to_the_lower_index():
    """Tests that equal keys keep index order and nan goes last."""
    assert_equal(order_by([2.0, 1.0, 2.0, 1.0]), [1, 3, 0, 2])
    assert_equal(order_by([np.nan, 1.0, np.inf]), [1, 2, 0])


def test_order_by_with_labels_breaks_ties_by_coflow_index_not_position():
    """Tests that labelled keys break ties by the coflow index, whatever the input order."""
    assert_equal(order_by([5.0, 5.0, 1.0], coflows=[9, 3, 7]), [7, 3, 9])


def test_order_by_rejects_mismatched_labels():
    """Tests that keys and coflow labels must have the same shape."""
    with pytest.raises(ValueError, match="shape"):
        order_by([1.0, 2.0], coflows=[0])


def test_keys_on_hand_made_arrays():
    """Tests length, width, size and Γ of each coflow against the hand computation."""
    assert_equal(length_key(SIZE, COFLOW, 3), [3.0, 2.0, 3.0])
    assert_equal(width_key(COFLOW, 3), [2.0, 2.0, 1.0])
    assert_equal(size_key(SIZE, COFLOW, 3), [4.0, 4.0, 3.0])
    assert_equal(bottleneck_key(SIZE, SRC, DST, COFLOW, CAP, CAP, 3), [3.0, 2.0, 3.0])


def test_bottleneck_key_uses_the_given_capacities():
    """Tests that Γ divides each port's load by that port's capacity, inf when it is 0."""
    cap_in = np.array([0.5, 1.0])
    assert_equal(bottleneck_key(SIZE, SRC, DST, COFLOW, cap_in, CAP, 3), [6.0, 4.0, 3.0])
    blocked = bottleneck_key(SIZE, SRC, DST, COFLOW, [0.0, 1.0], CAP, 3)
    assert_equal(blocked, [np.inf, np.inf, 3.0])


def test_bottleneck_key_ignores_flows_without_remaining_bytes():
    """Tests that a finished flow does not count, even on a port without capacity."""
    assert_equal(bottleneck_key([0.0, 2.0], [0, 1], [0, 1], [0, 0], [0.0, 1.0], CAP, 1), [2.0])
    assert_equal(bottleneck_key([0.0], [0], [0], [0], CAP, CAP, 2), [0.0, 0.0])


def test_bottleneck_key_sparse_path_matches_the_dense_one(monkeypatch):
    """Tests that the sort-based path (large coflows × ports tables) gives the same Γ."""
    rng = np.random.default_rng(3)
    for _ in range(20):
        f, n, m = rng.integers(1, 40), rng.integers(1, 6), rng.integers(1, 5)
        args = (
            rng.random(f) * (rng.random(f) > 0.2),
            rng.integers(0, m, f),
            rng.integers(0, m, f),
            rng.integers(0, n, f),
            rng.random(m) * (rng.random(m) > 0.2),
            rng.random(m) + 0.1,
            int(n),
        )
        dense = bottleneck_key(*args)
        monkeypatch.setattr(orderings, "_DENSE_LIMIT", -1)
        sparse = bottleneck_key(*args[:-1], 9 * f + n)[:n]  # table larger than 8 × flows
        monkeypatch.undo()
        assert_equal(sparse, dense)


def test_bottleneck_key_equals_the_instance_bottleneck():
    """Tests Γ on original sizes and full capacities against Instance.bottleneck (ρ)."""
    inst = uniform(5, 12, density=0.3, seed=11)
    fab = inst.fabric
    gamma = bottleneck_key(
        inst.flow_size, inst.flow_src, inst.flow_dst, inst.flow_coflow,
        fab.ingress_capacity, fab.egress_capacity, inst.num_coflows,
    )  # fmt: skip
    assert_allclose(gamma, inst.bottleneck, rtol=1e-12)


def test_scf_ncf_tcf_sebf_on_hand_made_arrays():
    """Tests each ordering and its tie-break toward the lower coflow index."""
    assert_equal(scf(SIZE, COFLOW), [1, 0, 2])  # lengths 3, 2, 3: tie 0 < 2
    assert_equal(ncf(COFLOW), [2, 0, 1])  # widths 2, 2, 1: tie 0 < 1
    assert_equal(tcf(SIZE, COFLOW), [2, 0, 1])  # sizes 4, 4, 3
    assert_equal(sebf(SIZE, SRC, DST, COFLOW, CAP, CAP), [1, 0, 2])  # Γ 3, 2, 3


def test_flow_level_orderings_order_only_the_coflows_present():
    """Tests that without num_coflows only the coflows with flows are ordered (online use)."""
    c = np.array([7, 7, 4])
    assert_equal(scf([1.0, 1.0, 5.0], c), [7, 4])
    assert_equal(ncf(c), [4, 7])
    assert_equal(tcf([3.0, 3.0, 5.0], c), [4, 7])  # sizes 6 and 5
    assert_equal(sebf([1.0, 1.0, 5.0], [0, 1, 0], [0, 1, 0], c, CAP, CAP), [7, 4])


def test_num_coflows_orders_every_coflow():
    """Tests that with num_coflows coflows without flows are included, with key 0."""
    assert_equal(tcf([2.0], [1], num_coflows=3), [0, 2, 1])
    assert_equal(sebf([2.0], [0], [0], [1], CAP, CAP, num_coflows=3), [0, 2, 1])
    with pytest.raises(ValueError, match="coflow indices"):
        ncf([3], num_coflows=3)


def test_fifo_and_largest_weight_first():
    """Tests arrival order and descending weight, both with ties to the lower index."""
    assert_equal(fifo([1.0, 0.0, 1.0, 0.5]), [1, 3, 0, 2])
    assert_equal(fifo([1.0, 0.0, 1.0, 0.5], coflows=[2, 0, 3]), [3, 0, 2])
    assert_equal(largest_weight_first([1.0, 2.0, 2.0, 0.0]), [1, 2, 0, 3])
    assert_equal(largest_weight_first([1.0, 2.0, 2.0], coflows=[2, 0]), [2, 0])


def test_smith_orders_by_gamma_over_weight():
    """Tests Smith's rule Γ/w, with weight 0 last."""
    assert_equal(smith_key([3.0, 1.0, 2.0], [3.0, 1.0, 0.0]), [1.0, 1.0, np.inf])
    # Γ = 3, 2, 3 and w = 1, 1, 6: keys 3, 2, 0.5
    assert_equal(smith(SIZE, SRC, DST, COFLOW, CAP, CAP, [1.0, 1.0, 6.0]), [2, 1, 0])
    assert_equal(smith(SIZE, SRC, DST, COFLOW, CAP, CAP, [0.0, 1.0, 1.0]), [1, 2, 0])


def test_sebf_residual_reserves_madd_rates_of_earlier_picks():
    """Tests the residual SEBF on a hand computation where it differs from plain SEBF.

    C0 uses ports 0 and 1 (Γ = 2), C1 port 0 only (Γ = 1.5), C2 port 1 only (Γ = 3). C1 is
    picked first and takes port 0 entirely, so C0's Γ becomes inf and C2 overtakes it.
    """
    args = ([2.0, 2.0, 1.5, 3.0], [0, 1, 0, 1], [0, 1, 0, 1], [0, 0, 1, 2], [1, 1], [1, 1])
    assert_equal(sebf(*args), [1, 0, 2])
    assert_equal(sebf_residual(*args), [1, 2, 0])


def brute_force_residual(rem, src, dst, coflow, cap_in, cap_out, weight=None):
    """Greedy by definition: recompute every Γ against what is left, pick the smallest."""
    ids = list(np.unique(coflow))
    res_in, res_out = np.array(cap_in, float), np.array(cap_out, float)
    order = []
    while ids:
        keys = []
        for c in ids:
            f = coflow == c
            g = bottleneck_key(rem[f], src[f], dst[f], np.zeros(f.sum(), int), res_in, res_out, 1)
            w = 1.0 if weight is None else weight[c]
            keys.append((smith_key(g, [w])[0], c))
        _, best = min(keys)
        order.append(best)
        ids.remove(best)
        f = coflow == best
        g = bottleneck_key(rem[f], src[f], dst[f], np.zeros(f.sum(), int), res_in, res_out, 1)[0]
        if 0 < g < np.inf:  # every port loses load / Γ; rounding residue counts as empty
            res_in -= np.bincount(src[f], weights=rem[f], minlength=len(res_in)) / g
            res_out -= np.bincount(dst[f], weights=rem[f], minlength=len(res_out)) / g
            res_in[res_in <= 1e-12 * np.asarray(cap_in)] = 0.0
            res_out[res_out <= 1e-12 * np.asarray(cap_out)] = 0.0
    return order


@pytest.mark.parametrize("seed", range(8))
def test_sebf_residual_matches_the_definition(seed):
    """Tests the lazy-heap residual SEBF against a direct greedy on random instances."""
    inst = uniform(3, 6, density=0.4, sizes=(1, 4), weights=(1, 3), seed=seed)
    args = (inst.flow_size, inst.flow_src, inst.flow_dst, inst.flow_coflow, np.ones(3), np.ones(3))
    assert_equal(sebf_residual(*args), brute_force_residual(*args))
    w = inst.coflow_weight
    assert_equal(sebf_residual(*args, weight=w), brute_force_residual(*args, weight=w))


def test_instance_order_fig_5_3():
    """Tests thesis Fig. 5.3: SEBF picks C2 first, SCF/NCF/TCF pick C1 (docs/examples.md)."""
    inst = examples.fig_5_3()
    assert_equal(instance_order(inst, "sebf"), [1, 0])
    for name in ("scf", "ncf", "tcf"):
        assert_equal(instance_order(inst, name), [0, 1], err_msg=name)


def test_instance_order_fig_5_1_and_ties():
    """Tests Fig. 5.1 (Γ2 = 2 < Γ1 = 4) and the tie of R-B2 (Γ1 = Γ2 = 2 → C1)."""
    assert_equal(instance_order(examples.fig_5_1(), "sebf"), [1, 0])
    assert_equal(instance_order(examples.fig_b2(), "sebf"), [0, 1])


def test_instance_order_smith_on_single_port_examples():
    """Tests Smith's rule against the examples' stated orders (TC-Y-5, theory I2)."""
    assert_equal(
        instance_order(examples.yosemite_single_port(), "smith"),
        EXPECTED["yosemite_single_port"]["order"]["yosemite_alg1"],
    )
    assert_equal(instance_order(examples.theory_i2(), "smith"), [0, 1, 2])  # 1, 1, 2


def test_smith_is_optimal_on_single_port():
    """Tests that Smith's order attains the best Σ w C over all orders on one port."""
    inst = single_port(5, seed=4)
    p, w = inst.flow_size, inst.coflow_weight

    def cost(order):
        return float(np.dot(w[list(order)], np.cumsum(p[list(order)])))

    best = min(cost(o) for o in itertools.permutations(range(5)))
    assert cost(instance_order(inst, "smith")) == pytest.approx(best)


def test_instance_order_fifo_and_lwf():
    """Tests release order and largest weight first on an instance."""
    inst = Instance.from_coflows(
        [
            Coflow([(0, 0, 1.0)], release=2.0, weight=1.0),
            Coflow([(0, 0, 1.0)], release=0.0, weight=3.0),
            Coflow([(0, 0, 1.0)], release=2.0, weight=3.0),
        ],
        1,
    )
    assert_equal(instance_order(inst, "fifo"), [1, 0, 2])
    assert_equal(instance_order(inst, "lwf"), [1, 2, 0])


@pytest.mark.parametrize("name", ORDERINGS)
def test_instance_order_is_a_permutation_matching_the_keys(name):
    """Tests that every static ordering is a permutation sorted by its key."""
    inst = assign_weights(fb_like(30, num_ports=20, seed=5), seed=6)
    order = instance_order(inst, name)
    assert_equal(np.sort(order), np.arange(inst.num_coflows))
    key = {
        "fifo": inst.coflow_release,
        "scf": inst.length,
        "ncf": inst.width.astype(float),
        "tcf": inst.total_size,
        "sebf": inst.bottleneck,
        "smith": inst.bottleneck / inst.coflow_weight,
        "lwf": -inst.coflow_weight,
    }[name]
    k = key[order]
    assert np.all(k[:-1] <= k[1:] + 1e-12 * np.abs(k[1:]))
    ties = np.flatnonzero(k[:-1] == k[1:])
    assert np.all(order[ties] < order[ties + 1])


def test_instance_order_rejects_unknown_names():
    """Tests that an unknown ordering name raises and lists the known ones."""
    with pytest.raises(ValueError, match="sebf"):
        instance_order(examples.fig_5_3(), "lcf")
