"""Coflex(α) and NaiveTradeoff(α) (Wang, Ma, Li, Li, IEEE INFOCOM 2017) on the worked examples
(TC-CX-1..8, docs/test-cases.md, ``instances/examples.py``), through ``simulate``; expected
values are hand-derived fractions (docs/hug-coflex.md), compared within 1e-12."""

from __future__ import annotations

from fractions import Fraction as F

import numpy as np
import pytest

import coflowlab as cl
from coflowlab.fairness import instant_progress
from coflowlab.heuristics import make_policy
from coflowlab.heuristics.coflex import Coflex
from coflowlab.heuristics.hug import HUG
from coflowlab.instances import uniform
from coflowlab.instances.examples import coflex_fig2, coflex_single_link, coflex_theorem2

TOL = 1e-12


def close(values, expected):
    assert len(values) == len(expected)
    for v, e in zip(values, expected, strict=True):
        assert abs(float(v) - float(e)) <= TOL, (list(values), [str(x) for x in expected])


def run(inst, policy):
    res = cl.simulate(inst, policy)
    assert res.verified
    r = res.schedule.rates_at(0.0)
    prog = instant_progress(inst, r, inst.flow_size, np.ones(inst.num_flows, bool))
    return res, r, prog


@pytest.mark.parametrize(
    ("alpha", "rates", "progress", "cct"),
    [
        (1, [F(2, 3), F(1, 3), F(1, 9), F(2, 3)], [F(2, 3)] * 2, [F(3, 2), F(5, 2)]),
        (
            F(1, 2),
            [F(17, 18), F(17, 36), F(1, 18), F(1, 3)],
            [F(17, 18), F(1, 3)],
            [F(18, 17), F(46, 17)],
        ),
        (0, [1, F(1, 2), 0, 0], [1, 0], [1, 3]),
    ],
)
def test_tc_cx_7_no_backfill(alpha, rates, progress, cct):
    """TC-CX-7: stage 1 α P* d, then S2-MADD in SEBF order (A first), recomputed at coflow
    arrivals and departures only."""
    res, r, prog = run(coflex_fig2(), Coflex(float(alpha), backfill=False))
    close(r, rates)
    close(prog, progress)
    close(res.coflow_completion, cct)


def test_tc_cx_7_backfill_goes_in_sebf_order():
    """With the (default) backfill, the 7/36 left on link 2 at α = 1/2 goes to A first (SEBF
    order), so A's link-2 flow finishes at 3/4 and the CCTs stay 18/17 and 46/17 (the
    examples' backfill variant, which hands it to B, is not this rule)."""
    res, r, _ = run(coflex_fig2(), Coflex(0.5))
    close(r, [F(17, 18), F(2, 3), F(1, 18), F(1, 3)])
    close(res.coflow_completion, [F(18, 17), F(46, 17)])


def test_misreports_two_thirds_eleven_twelfths_three_quarters():
    """The two-link example: truthful progress 2/3 under Coflex(1); A's report ⟨1, 1⟩ with
    uncapped stage 2 (backfill, A first) gives A 11/12 of link 1 and true progress 11/12 (thesis
    HUG-5); without backfill the safe report leaves A at 1/2 (TC-CX-5); and with Γ_B < Γ_A,
    B's report ⟨1, 1⟩ earns it link 2's spare 1/4: true progress 3/4, IG 1/2 (TC-CX-2)."""
    inst = coflex_fig2()
    _, _, prog = run(inst, Coflex(1.0))
    close(prog, [F(2, 3), F(2, 3)])
    lie_a = {0: [1, 1, 0, 0, 1, 1, 0, 0]}
    _, r, prog = run(inst, Coflex(1.0, reported=lie_a))
    close([r[0]], [F(11, 12)])
    close(prog, [F(11, 12), F(1, 2)])
    _, _, prog = run(inst, Coflex(1.0, backfill=False, reported=lie_a))
    close(prog[:1], [F(1, 2)])
    # same vectors, sizes doubled for A so that B is first in SEBF (Γ_A = 2 > Γ_B = 1)
    swapped = cl.Instance.from_coflows(
        [
            cl.Coflow([(0, 0, 2.0), (1, 1, 1.0)], label="A"),
            cl.Coflow([(0, 2, 1 / 6), (1, 3, 1.0)], label="B"),
        ],
        4,
    )
    _, r, prog = run(swapped, Coflex(1.0))
    close(prog, [F(2, 3), F(2, 3)])
    _, r, prog = run(swapped, Coflex(1.0, reported={1: [1, 1, 0, 0, 0, 0, 1, 1]}))
    close(r[2:], [F(1, 2), F(3, 4)])
    close(prog, [F(1, 2), F(3, 4)])
    # HUG's cap takes the gain away (TC-CX-2 with the cap): B's true progress 1/2 < 2/3
    _, r, prog = run(swapped, HUG(reported={1: [1, 1, 0, 0, 0, 0, 1, 1]}))
    close(prog[1:], [F(1, 2)])


def test_tc_cx_6_naive_half():
    """TC-CX-6: NaiveTradeoff(1/2) holds everyone at progress α P* = 1/3, every link share at
    most 1/3 per coflow."""
    _, r, prog = run(coflex_fig2(), make_policy("coflex-naive", coflex_fig2(), alpha="0.5"))
    close(prog, [F(1, 3), F(1, 3)])
    assert r.max() <= 1 / 3 + TOL


@pytest.mark.parametrize("n", [2, 3, 4, 10])
def test_tc_cx_4_theorem2_utilization(n):
    """TC-CX-4 (Theorem 2): NaiveTradeoff(1) gives every coflow progress 1/n, link 1 full,
    links 2..n at 2/n: utilization 1/n + 2(n - 1)/n² (7/9 for n = 3, 7/25 for n = 10)."""
    inst = coflex_theorem2(n)
    _, r, prog = run(inst, make_policy("coflex-naive", inst, alpha="1"))
    close(prog, [F(1, n)] * (n + 1))
    links = np.bincount(inst.flow_src, r, inst.num_ports)[:n]
    close(links, [1] + [F(2, n)] * (n - 1))
    close([links.mean()], [F(1, n) + F(2 * (n - 1), n * n)])


def test_tc_cx_8_single_link():
    """TC-CX-8: one link, sizes 1, 2, 3: Coflex(1) is max-min (1/3 each); Coflex(1/2) gives
    1/6 each and the remaining 1/2 to the smallest Γ."""
    inst = coflex_single_link(3)
    _, r, _ = run(inst, Coflex(1.0))
    close(r, [F(1, 3)] * 3)
    _, r, _ = run(inst, Coflex(0.5))
    close(r, [F(2, 3), F(1, 6), F(1, 6)])


def test_alpha_zero_is_varys_without_starvation():
    """α = 0: stage 1 is empty and Coflex is SEBF + MADD + greedy backfill, Varys with
    starvation avoidance off (same CCTs on a generated instance with releases)."""
    inst = uniform(4, 8, density=0.5, release_rate=0.4, seed=5)
    a = cl.simulate(inst, Coflex(0.0))
    # skipped="wait": Varys' rule before issue 14 (no equal split for coflows MADD skips)
    b = cl.simulate(inst, make_policy("varys", inst, starvation="false", skipped="wait"))
    np.testing.assert_allclose(a.coflow_completion, b.coflow_completion, rtol=1e-9)
    # with the split for skipped coflows, α = 0 is Varys' default rule
    a = cl.simulate(inst, Coflex(0.0, skipped="share"))
    b = cl.simulate(inst, make_policy("varys", inst, starvation="false"))
    np.testing.assert_allclose(a.coflow_completion, b.coflow_completion, rtol=1e-9)


def test_alpha_out_of_range_names_the_field():
    with pytest.raises(ValueError, match="alpha"):
        Coflex(1.5)
    with pytest.raises(ValueError, match="reported"):
        Coflex(0.5, reported={0: [0, 0]})


def test_skipped_share_splits_what_madd_left_among_blocked_coflows():
    """Tests ``skipped="share"`` on Coflex Fig. 2 at α = 0 without backfill: A (0→0: 1,
    1→1: 1/2) comes first in SEBF order (Γ 1 < 2) and takes ingress 0 whole and half of
    ingress 1; B (0→2: 1/3, 1→3: 2) needs the full ingress 0, so MADD skips it. With the split,
    B's flow 1→3 takes the free half of ingress 1 (its flow 0→2 gets 0 of ingress 0); at t = 1
    A ends and B has 3/2 left on 1→3, then Γ = 3/2 alone: B ends at 5/2. Waiting (the default),
    B starts at 1 with Γ = 2 and ends at 3."""
    share, r, _ = run(coflex_fig2(), Coflex(0.0, backfill=False, skipped="share"))
    close(r, [1, F(1, 2), 0, F(1, 2)])
    close(share.coflow_completion, [1, F(5, 2)])
    wait, r, _ = run(coflex_fig2(), Coflex(0.0, backfill=False))
    close(r, [1, F(1, 2), 0, 0])
    close(wait.coflow_completion, [1, 3])
    with pytest.raises(ValueError, match="skipped"):
        Coflex(0.5, skipped="never")
