"""HUG, DRF and PS-P on the worked examples of Chowdhury's thesis (Ch. 7, App. D) and Coflex
Fig. 2, through the public ``simulate`` path; expected values are the papers' fractions
(derivations in docs/hug-coflex.md), compared within 1e-12."""

from __future__ import annotations

from fractions import Fraction as F

import numpy as np
import pytest

import coflowlab as cl
from coflowlab.fairness import fairness_summary, instant_progress, progress_timeline
from coflowlab.heuristics import make_policy
from coflowlab.heuristics.hug import HUG
from coflowlab.instances import uniform
from coflowlab.instances.examples import coflex_fig2, coflex_single_link

TOL = 1e-12


def close(values, expected):
    assert len(values) == len(expected)
    for v, e in zip(values, expected, strict=True):
        assert abs(float(v) - float(e)) <= TOL, (list(values), [str(x) for x in expected])


def rates_at_start(inst, policy):
    res = cl.simulate(inst, policy)
    assert res.verified
    return res, res.schedule.rates_at(0.0)


def start_progress(inst, rates):
    return instant_progress(inst, rates, inst.flow_size, np.ones(inst.num_flows, bool))


def three_coflows():
    """Thesis App. D.2 (Fig. D.1): d_A = ⟨1/2, 1⟩, d_B = ⟨1, 1/6⟩, d_C = ⟨1, 0⟩ on two links
    (ingress ports 0 and 1), every flow to its own egress port; sizes = vectors (Γ = 1)."""
    return cl.Instance.from_coflows(
        [
            cl.Coflow([(0, 0, 0.5), (1, 1, 1.0)], label="A"),
            cl.Coflow([(0, 2, 1.0), (1, 3, 1 / 6)], label="B"),
            cl.Coflow([(0, 4, 1.0)], label="C"),
        ],
        5,
    )


def test_hug_fig2_rates_progress_and_ccts():
    """HUG-4 / TC-CX-1: P* = 2/3, A = ⟨2/3, 1/3⟩, B takes link 1's spare up to the cap:
    ⟨1/3, 2/3⟩; both progress 2/3; then A done at 3/2 and B alone finishes at 5/2."""
    inst = coflex_fig2()
    res, r = rates_at_start(inst, make_policy("hug", inst))
    close(r, [F(2, 3), F(1, 3), F(1, 3), F(2, 3)])
    close(start_progress(inst, r), [F(2, 3), F(2, 3)])
    close(res.coflow_completion, [F(3, 2), F(5, 2)])


def test_drf_fig2_is_stage_1():
    """HUG-3: DRF = stage 1, B ⟨1/9, 2/3⟩, 2/9 of link 1 idle; progress 2/3 each."""
    inst = coflex_fig2()
    _, r = rates_at_start(inst, make_policy("drf", inst))
    close(r, [F(2, 3), F(1, 3), F(1, 9), F(2, 3)])
    close(start_progress(inst, r), [F(2, 3), F(2, 3)])


def test_psp_fig2_half_each():
    """HUG-2: PS-P splits both links in half: progress 1/2 each (isolation guarantee 1/2)."""
    inst = coflex_fig2()
    _, r = rates_at_start(inst, make_policy("ps-p", inst))
    close(r, [F(1, 2)] * 4)
    close(start_progress(inst, r), [F(1, 2), F(1, 2)])


def test_hug_cooperative_fig2_spare_in_proportion_to_demand():
    """Cooperative mode: the 2/9 spare of link 1 splits 1 : 1/6 between A and B (our stage-2
    rule): A 2/3 + 4/21 = 6/7, B 1/9 + 2/63 = 1/7; link 1 full; progress unchanged at 2/3
    (link 2 binds both)."""
    inst = coflex_fig2()
    _, r = rates_at_start(inst, make_policy("hug-cooperative", inst))
    close(r, [F(6, 7), F(1, 3), F(1, 7), F(2, 3)])
    close(start_progress(inst, r), [F(2, 3), F(2, 3)])


def test_three_coflows_d2():
    """App. D.2: P* = 2/5; DRF uses 7/15 of link 2; HUG (capped) 4/5 of it with c_A = c_B =
    2/5, C nothing there; PS-P gives progress 1/2, 1/3, 1/3 (Lemma D.2.1's setting)."""
    inst = three_coflows()
    _, r = rates_at_start(inst, make_policy("drf", inst))
    close(start_progress(inst, r), [F(2, 5)] * 3)
    close([r[1] + r[3]], [F(7, 15)])
    close([r[0] + r[2] + r[4]], [1])
    _, r = rates_at_start(inst, make_policy("hug", inst))
    close(start_progress(inst, r), [F(2, 5)] * 3)
    close([r[1], r[3], r[1] + r[3]], [F(2, 5), F(2, 5), F(4, 5)])
    _, r = rates_at_start(inst, make_policy("ps-p", inst))
    close(start_progress(inst, r), [F(1, 2), F(1, 3), F(1, 3)])


def test_hug_misreport_does_not_pay():
    """HUG-14 (thesis Theorem D.3.3, second case): A reports ⟨1, 1⟩ instead of ⟨1, 1/2⟩ (Coflex
    orientation): P* = 1/2 and the cap 1/2 hold A's true progress to 1/2 < 2/3. HUG-13: A
    under-reports its link 2 (the thesis' ⟨1/4, 1⟩ with the links swapped: ⟨1, 1/4⟩):
    P* = 1/max(7/6, 5/4) = 4/5, A gets 1/5 of link 2, true progress 2/5 < 2/3."""
    inst = coflex_fig2()
    lie = {0: [1, 1, 0, 0, 1, 1, 0, 0]}
    _, r = rates_at_start(inst, HUG(reported=lie))
    close(start_progress(inst, r), [F(1, 2), F(1, 2)])
    under = {0: [1, 0.25, 0, 0, 1, 0.25, 0, 0]}
    _, r = rates_at_start(inst, HUG(reported=under))
    close(r[:2], [F(4, 5), F(1, 5)])
    close(start_progress(inst, r)[:1], [F(2, 5)])


def test_lemma_d36_utilization():
    """Lemma D.3.6 with K = 10 links, N = 3 coflows, ε = 1/100: DRF uses (1 + 9ε)/10 = 0.109
    of the links, HUG all of them."""
    k, n, eps = 10, 3, 0.01
    egress = iter(range(n * k))
    coflows = [
        cl.Coflow([(0, next(egress), 1.0)] + [(i, next(egress), eps) for i in range(1, k)])
        for _ in range(n)
    ]
    inst = cl.Instance.from_coflows(coflows, n * k)
    for name, expected in (("drf", (1 + (k - 1) * eps) / k), ("hug", 1.0)):
        _, r = rates_at_start(inst, make_policy(name, inst))
        used = np.bincount(inst.flow_src, r, n * k)[:k]
        assert abs(used.mean() - expected) <= TOL, (name, used)


def test_hug_single_link_is_max_min():
    """HUG-26: one link, three coflows: 1/3 each, as max-min fairness."""
    inst = coflex_single_link(3)
    _, r = rates_at_start(inst, make_policy("hug", inst))
    close(r, [F(1, 3)] * 3)


@pytest.mark.parametrize("name", ["hug", "hug-cooperative", "drf"])
def test_progress_at_least_p_star_over_time(name):
    """Every coflow's progress is at least that instant's P* (HUG/DRF guarantee) at every
    rate change of a generated instance with releases."""
    inst = uniform(4, 6, density=0.5, release_rate=0.5, seed=3)
    res = cl.simulate(inst, make_policy(name, inst))
    tl = progress_timeline(inst, res.schedule)
    for row in tl.progress:
        if np.isnan(row).all():
            continue
        assert np.nanmin(row) > 0
    s = fairness_summary(inst, res.schedule)
    assert 0 < s["min_isolation_guarantee"] <= 1 and 0 < s["jain_index"] <= 1
