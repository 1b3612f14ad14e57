"""Yosemite (weighted coflows; docs/yosemite.md) in the exact simulator: the worked examples
TC-Y-1..5 (docs/test-cases.md#yosemite, hand-derived, held in ``instances/examples.py``), the
two readings of Algorithm 2's sort, the fair leftover, and a reference computed another way
(Varys' machinery with Smith's order)."""

from __future__ import annotations

import itertools
from fractions import Fraction as F

import numpy as np
import pytest
from numpy.testing import assert_allclose

import coflowlab as cl
from coflowlab.heuristics import make_policy
from coflowlab.heuristics.varys import Varys
from coflowlab.heuristics.yosemite import (
    Yosemite,
    YosemiteOffline,
    yosemite_allocation,
    yosemite_order,
)
from coflowlab.instances import uniform
from coflowlab.instances.examples import (
    EXPECTED,
    yosemite_partial_capacity,
    yosemite_single_port,
    yosemite_y_i1,
)
from coflowlab.metrics import weighted_cct

TOL = 1e-12


def run(inst: cl.Instance, policy) -> cl.SimulationResult:
    res = cl.simulate(inst, policy, record=True)
    assert res.verified and res.report is not None and res.report.feasible
    return res


def sum_wc(inst: cl.Instance, completion) -> float:
    return float(np.dot(inst.coflow_weight, completion))


def cos_cost(inst: cl.Instance, order) -> float:
    """Concurrent-open-shop cost of a permutation (C_k = largest cumulative port time)."""
    p = np.asarray(inst.port_time)
    done = np.zeros(p.shape[1])
    total = 0.0
    for k in order:
        done = done + p[k]
        total += float(inst.coflow_weight[k]) * float(done[p[k] > 0].max())
    return total


# ---------------------------------------------------------------------- TC-Y-2: the two sorts
def test_tc_y_2_online_order_both_readings():
    """Tests that Algorithm 2 on Y-I1 orders C2, C3, C1 (intended, non-increasing w/l) and
    C1, C3, C2 (literal), with open-shop costs 17 and 19 (TC-Y-2)."""
    inst = yosemite_y_i1()
    exp = EXPECTED["yosemite_y_i1"]
    args = (
        inst.flow_size,
        inst.flow_src,
        inst.flow_dst,
        inst.flow_coflow,
        inst.coflow_weight,
        inst.fabric.ingress_capacity * np.ones(2),
        inst.fabric.egress_capacity * np.ones(2),
    )
    intended = yosemite_order(*args)
    literal = yosemite_order(*args, sort="literal")
    assert intended.tolist() == exp["order"]["yosemite_alg2"] == [1, 2, 0]
    assert literal.tolist() == exp["order"]["yosemite_alg2_literal"] == [0, 2, 1]
    assert cos_cost(inst, intended) == exp["order_sum_wc"]["yosemite_alg2"] == 17.0
    assert cos_cost(inst, literal) == exp["order_sum_wc"]["yosemite_alg2_literal"] == 19.0


def test_cos_costs_of_all_orders_match_tc_y_1():
    """Tests the helper against TC-Y-1's brute-force table (all six orders of Y-I1)."""
    inst = yosemite_y_i1()
    table = EXPECTED["yosemite_y_i1"]["cos_sum_wc_by_order"]
    for order in itertools.permutations(range(3)):
        assert cos_cost(inst, order) == table[",".join(map(str, order))]


# ---------------------------------------------------------------------- TC-Y-3: simulated
@pytest.mark.parametrize(
    ("policy", "key"),
    [
        (Yosemite(), "yosemite"),
        (Yosemite(sort="literal"), "yosemite_literal"),
        (YosemiteOffline(), "yosemite"),  # TC-Y-1's order (2, 1, 3) runs like (2, 3, 1) here
        (Yosemite(leftover="greedy"), "yosemite"),
        (Yosemite(leftover="none"), "yosemite"),
        (Yosemite(skipped="share"), "yosemite"),
    ],
    ids=str,
)
def test_tc_y_3_simulated_completions(policy, key):
    """Tests TC-Y-3: intended order C2 at 1, C1 at 3, C3 at 4 (Σ w C = 17, the optimum);
    literal order C1 at 2, C2 at 3, C3 at 4 (Σ w C = 20), re-sorting at every departure."""
    inst = yosemite_y_i1()
    exp = EXPECTED["yosemite_y_i1"]
    res = run(inst, policy)
    assert_allclose(res.coflow_completion, exp["completion"][key], rtol=0, atol=TOL)
    assert sum_wc(inst, res.coflow_completion) == pytest.approx(exp["sum_wc"][key], abs=TOL)


def test_sort_readings_differ_with_releases_by_hand():
    """Tests the two readings on a one-port instance with a release, CCTs derived by hand.

    A (size 1, w 1) at 0; B (size 2, w 5) at 0.5. Intended: at 0.5 the keys are A 1/0.5 = 2,
    B 5/2 = 2.5, so B preempts A: B ends at 2.5 (CCT 2), A at 3 (CCT 3); Σ w CCT = 13.
    Literal: A (smallest key) keeps the port: A ends at 1, B at 3 (CCT 2.5); Σ w CCT = 13.5.
    """
    inst = cl.Instance(
        cl.Fabric(1), [0, 1], [0, 0], [0, 0], [1.0, 2.0],
        coflow_weight=[1.0, 5.0], coflow_release=[0.0, 0.5],
    )  # fmt: skip
    intended = run(inst, Yosemite())
    literal = run(inst, Yosemite(sort="literal"))
    assert_allclose(intended.cct, [3.0, 2.0], rtol=0, atol=TOL)
    assert_allclose(literal.cct, [1.0, 2.5], rtol=0, atol=TOL)
    assert weighted_cct(inst, intended.coflow_completion)[0] == pytest.approx(13.0)
    assert weighted_cct(inst, literal.coflow_completion)[0] == pytest.approx(13.5)


# ---------------------------------------------------------------------- TC-Y-4: Algorithm 3
def test_tc_y_4_madd_with_partial_capacity():
    """Tests TC-Y-4: X then Y gives g_X = 3 (rates 2/3, 1/3), g_Y = 3/2 (rate 2/3); the 1/3
    left on in1 and out0 has no flow using both, so no leftover rule changes the rates."""
    inst = yosemite_partial_capacity()
    exp = EXPECTED["yosemite_partial_capacity"]
    args = (
        [0, 2, 3], [0, 1, 2], inst.flow_size, inst.flow_src, inst.flow_dst,
        np.ones(2), np.ones(2),
    )  # fmt: skip
    for leftover in ("fair", "greedy", "none"):
        rates, g = yosemite_allocation(*args, leftover=leftover)
        assert_allclose(rates, exp["rate"], rtol=0, atol=TOL)
        assert_allclose(g, exp["g"], rtol=0, atol=TOL)
    assert [F(x).limit_denominator(100) for x in exp["rate"]] == [F(2, 3), F(1, 3), F(2, 3)]


def test_rate_zero_port_skips_the_coflow_and_fair_leftover_serves_it():
    """Tests Eq. (5) with Rem = 0: a coflow whose port is full gets nothing from MADD
    (g = inf) under ``skipped="wait"``, and the fair step gives its other flow what is left.

    Coflow 0: in0 → out0 (size 1): g = 1, rate 1. Coflow 1: in0 → out1 and in1 → out1 (sizes
    1, 1): in0 is full, so g = inf. Leftover: in0 0, in1 1, out0 0, out1 1, so the flow
    in1 → out1 rises to 1 and in0 → out1 stays 0. With ``share`` and no leftover, out1's
    free 1 is split over its two flows, 1/2 each, capped by in0's 0 and in1's 1: 0 and 1/2."""
    args = ([0, 1, 3], [0, 1, 2], [1.0, 1.0, 1.0], [0, 0, 1], [0, 1, 1], [1, 1], [1, 1])
    rates, g = yosemite_allocation(*args, leftover="none")
    assert rates.tolist() == [1.0, 0.0, 0.0] and g.tolist() == [1.0, np.inf]
    rates, _ = yosemite_allocation(*args)
    assert rates.tolist() == [1.0, 0.0, 1.0]
    rates, _ = yosemite_allocation(*args, skipped="share", leftover="none")
    assert rates.tolist() == [1.0, 0.0, 0.5]


# ---------------------------------------------------------------------- TC-Y-5 and Alg. 1
def test_tc_y_5_single_port_is_smith():
    """Tests TC-Y-5: on one port Algorithm 1 is Smith's rule, C3, C2, C1, Σ w C = 17 (the
    optimum); both Yosemite policies then finish C3 at 2, C2 at 3 and C1 at 6."""
    inst = yosemite_single_port()
    exp = EXPECTED["yosemite_single_port"]
    for policy in (YosemiteOffline(), Yosemite()):
        res = run(inst, policy)
        assert_allclose(res.coflow_completion, [6.0, 3.0, 2.0], rtol=0, atol=TOL)
        assert sum_wc(inst, res.coflow_completion) == exp["order_sum_wc"]["yosemite_alg1"]
    assert cos_cost(inst, exp["order"]["yosemite_alg1"]) == 17.0


def test_offline_uses_algorithm_1_not_algorithm_2():
    """Tests an instance where Algorithm 1 and Algorithm 2 disagree, by hand.

    One port pair per coflow: A = in0 → out0 of 2 (w 1), B = in0 → out1 of 1 and
    in1 → out0 of 1 (w 1), C = in1 → out1 of 2 (w 1). Port loads: in0 3, in1 3, out0 3,
    out1 3 (ties: port in0 first). Algorithm 1: bottleneck in0, ratios A 1/2, B 1 (C: none)
    → A last; then in1 (3 - 0 = 3 vs in0 1): ratios B (1 - 1/2)/1 = 1/2, C 1/2 → B (lower
    index) last; so C, B, A. Algorithm 2: keys A 1/2, B 1, C 1/2 → B, A, C.
    Simulated: offline runs C (in1 → out1, rate 1) and A (in0 → out0, rate 1) together; B
    waits until both end at 2, then finishes at 3: completions A 2, B 3, C 2 (Σ = 7). Online
    runs B first (all four ports full) until 1, then A and C at rate 1 until 3: A 3, B 1,
    C 3 (Σ = 7)."""
    inst = cl.Instance(cl.Fabric(2), [0, 1, 1, 2], [0, 0, 1, 1], [0, 1, 0, 1], [2, 1, 1, 2])
    from coflowlab.approximations.primal_dual import primal_dual_order

    assert primal_dual_order(inst).order.tolist() == [2, 1, 0]
    assert_allclose(run(inst, YosemiteOffline()).coflow_completion, [2, 3, 2], atol=TOL)
    assert_allclose(run(inst, Yosemite()).coflow_completion, [3, 1, 3], atol=TOL)


# ---------------------------------------------------------------------- invariants
@pytest.mark.parametrize("seed", range(6))
def test_equal_weights_equal_varys_without_starvation(seed):
    """Tests B.9-5 against a reference computed by other code: with equal weights, and
    Varys' greedy backfill and shared split for skipped coflows, Yosemite's order is SEBF on
    remaining bytes, so its completions equal Varys' (starvation off)."""
    inst = uniform(4, 7, density=0.4, release_rate=0.3, seed=seed)
    ours = run(inst, Yosemite(leftover="greedy", skipped="share"))
    ref = run(inst, Varys(starvation=False))
    assert_allclose(ours.coflow_completion, ref.coflow_completion, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("seed", range(4))
def test_scaling_weights_changes_nothing(seed):
    """Tests B.9-5: multiplying every weight by 7 leaves the completions unchanged."""
    inst = uniform(3, 6, density=0.5, release_rate=0.5, weights=(1, 4), seed=seed)
    a = run(inst, Yosemite()).coflow_completion
    b = run(inst.replace(coflow_weight=7 * inst.coflow_weight), Yosemite()).coflow_completion
    assert_allclose(a, b, rtol=0, atol=0)


@pytest.mark.parametrize("seed", range(4))
def test_fair_leftover_is_work_conserving_at_time_zero(seed):
    """Tests B.9-8 on the verified schedule: right after the first reschedule every flow has a
    full port (no flow could be raised), and no port exceeds its capacity."""
    inst = uniform(4, 6, density=0.5, weights=(1, 5), seed=seed)
    res = run(inst, Yosemite())
    assert res.schedule is not None
    r = res.schedule.rates_at(0.0)
    load_in = np.bincount(inst.flow_src, weights=r, minlength=4)
    load_out = np.bincount(inst.flow_dst, weights=r, minlength=4)
    assert np.all(load_in <= 1 + 1e-9) and np.all(load_out <= 1 + 1e-9)
    full = (load_in[inst.flow_src] >= 1 - 1e-9) | (load_out[inst.flow_dst] >= 1 - 1e-9)
    assert full.all()


def test_heavier_twin_goes_first():
    """Tests B.9-5: of two identical coflows, the heavier is served first (both readings
    differ: the literal one serves the lighter first)."""
    inst = cl.Instance(cl.Fabric(1), [0, 1], [0, 0], [0, 0], [1.0, 1.0], coflow_weight=[1.0, 2.0])
    assert_allclose(run(inst, Yosemite()).coflow_completion, [2.0, 1.0])
    assert_allclose(run(inst, Yosemite(sort="literal")).coflow_completion, [1.0, 2.0])


def test_same_result_twice():
    """Tests determinism: two runs give identical completions."""
    inst = uniform(4, 8, density=0.4, release_rate=0.4, weights=(1, 4), seed=9)
    a, b = run(inst, Yosemite()), run(inst, Yosemite())
    assert a.coflow_completion.tolist() == b.coflow_completion.tolist()


# ---------------------------------------------------------------------- registry and parameters
def test_registry_builds_both_policies_with_text_parameters():
    """Tests the registry entries and their text parameters."""
    p = make_policy("yosemite", sort="literal", leftover="greedy")
    assert isinstance(p, Yosemite) and p.sort == "literal" and p.leftover == "greedy"
    assert isinstance(make_policy("yosemite-offline"), YosemiteOffline)
    assert "Yosemite" in cl.REGISTRY["yosemite"].paper.title


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [({"sort": "down"}, "sort"), ({"leftover": "all"}, "leftover"), ({"skipped": "x"}, "skipped")],
)
def test_bad_parameters_name_the_field(kwargs, field):
    """Tests that an unknown reading is rejected with the parameter's name."""
    with pytest.raises(ValueError, match=field):
        Yosemite(**kwargs)


def test_non_clairvoyant_view_is_rejected():
    """Tests that Yosemite refuses to run without flow sizes."""
    from coflowlab.simulator import instance_view

    blind = instance_view(yosemite_y_i1(), clairvoyant=False)
    assert blind.flow_size is None
    for policy in (Yosemite(), YosemiteOffline()):
        with pytest.raises(ValueError, match="clairvoyant"):
            policy.reset(blind)
