"""Philae (Jajoo, Hu, Lin, USENIX ATC 2019): the estimator, pilot rules, policies A-D, the thin
path, and our worked cases P-1..P-10 (docs/test-cases.md; expected values derived by hand and
in ``instances/examples.py``; docs/philae-coda.md)."""

from __future__ import annotations

import numpy as np
import pytest

import coflowlab as cl
from coflowlab.heuristics.philae import (
    Philae,
    PhilaeOracle,
    choose_pilots,
    contention,
    estimate_size,
    pilot_count,
    queue_metric,
)
from coflowlab.instance import Coflow, Instance, Units
from coflowlab.instances.examples import EXAMPLES, EXPECTED


# ------------------------------------------------------------------ rules
@pytest.mark.parametrize(
    ("senders", "floor", "rnd", "ceil"),
    [(1, 1, 1, 1), (19, 1, 1, 1), (21, 1, 1, 2), (40, 2, 2, 2), (100, 5, 5, 5), (150, 7, 8, 8)],
)
def test_pilot_count_table_p3(senders: int, floor: int, rnd: int, ceil: int) -> None:
    assert pilot_count(senders, 0.05, "floor") == floor
    assert pilot_count(senders, 0.05, "round") == rnd
    assert pilot_count(senders, 0.05, "ceil") == ceil


def test_pilot_count_rejects_bad_fraction() -> None:
    with pytest.raises(ValueError, match="pilot_fraction"):
        pilot_count(10, 0.0)


def test_estimator_p1() -> None:
    # 4 senders x 2 receivers, sizes {10, 20, 30, 40} twice; true size 200
    assert estimate_size([20.0], 8) == 160.0
    assert estimate_size([40.0], 8) == 320.0
    sizes = np.array([10, 20, 30, 40, 10, 20, 30, 40], float)
    assert np.mean([estimate_size([s], 8) for s in sizes]) == pytest.approx(200.0)
    bounds = Philae(policy="A").bounds
    # 160, 200 and 320 all land in Q2 = [100, 1000)
    from coflowlab.heuristics.aalo import _queue_of

    assert _queue_of(np.array([160.0, 200.0, 320.0]), bounds).tolist() == [2, 2, 2]


def test_queue_bounds_p7() -> None:
    from coflowlab.heuristics.aalo import _queue_of

    b = Philae(policy="A").bounds
    assert b[:3].tolist() == [10.0, 100.0, 1000.0] and np.isinf(b[-1]) and len(b) == 10
    assert _queue_of(np.array([0.0, 9.99, 10.0, 1e16]), b).tolist() == [0, 0, 1, 9]


def test_choose_pilots_p4() -> None:
    src = [0, 0, 0, 1, 1, 2, 2, 2]  # every pair but (1, 1)
    dst = [0, 1, 2, 0, 2, 0, 1, 2]
    one = choose_pilots(src, dst, 1, [2, 0, 1], [1, 0, 3])
    assert [(src[i], dst[i]) for i in one] == [(1, 0)]
    two = choose_pilots(src, dst, 2, [2, 0, 1], [1, 0, 3])
    assert [(src[i], dst[i]) for i in two] == [(1, 0), (2, 1)]


def test_contention_p10() -> None:
    inst = EXAMPLES["philae_contention"]()
    c, port_sum = contention(inst.flow_coflow, inst.flow_src, inst.flow_dst, inst.num_ports)
    assert c.tolist() == EXPECTED["philae_contention"]["contention"]
    l_hat = np.array([1.0, 2.0, 10.0])
    d = queue_metric("D", l_hat, np.zeros(3), c, port_sum, l_hat)
    assert d.tolist() == [1.0, 4.0, 10.0]
    # C orders A and C (tie, 1) before B (2)
    assert queue_metric("C", l_hat, np.zeros(3), c, port_sum, l_hat).tolist() == [1, 2, 1]
    # after B's flow at s1 finishes: c(B) = 1, c(A) = 0
    keep = np.array([0, 2, 3])  # drop flow B: 0 -> 1
    c2, _ = contention(inst.flow_coflow[keep], inst.flow_src[keep], inst.flow_dst[keep], 3)
    assert c2.tolist() == [0, 1, 1]


def test_metric_b_clamps_at_zero() -> None:
    out = queue_metric("B", np.array([10.0, 5.0]), np.array([4.0, 9.0]), np.zeros(2, int),
                       np.zeros(2), np.ones(2))  # fmt: skip
    assert out.tolist() == [6.0, 0.0]


# ------------------------------------------------------------------ simulations
def test_thin_bypass_p5() -> None:
    inst = EXAMPLES["philae_thin_bypass"]()
    exp = EXPECTED["philae_thin_bypass"]["cct"]
    assert cl.simulate(inst, Philae()).cct.tolist() == exp["philae_bypass"]
    no_wc = Philae(thin_limit=0, work_conserving=False)
    assert cl.simulate(inst, no_wc).cct.tolist() == exp["philae_no_bypass_no_wc"]
    assert no_wc.pilots.sum() == 1
    wc = Philae(thin_limit=0)
    assert cl.simulate(inst, wc).cct.tolist() == exp["philae_no_bypass_wc"]


def test_thin_coflow_has_no_pilots() -> None:
    inst = EXAMPLES["fig_3_2"]()  # width 6 <= 7
    p = Philae()
    cl.simulate(inst, p)
    assert not p.pilots.any() and np.isnan(p.estimate).all()


def test_oracle_queue_transit_p8() -> None:
    inst = EXAMPLES["philae_queue_transit"]()
    exp = EXPECTED["philae_queue_transit"]["cct"]["aalo_oracle"]
    for oracle in (PhilaeOracle(), PhilaeOracle(thin_limit=0)):
        assert cl.simulate(inst, oracle).cct.tolist() == exp


def test_oracle_quantized_scf_p9() -> None:
    inst = EXAMPLES["philae_quantized_scf"]()
    exp = EXPECTED["philae_quantized_scf"]["cct"]
    weighted = cl.simulate(inst, PhilaeOracle(thin_limit=0)).cct
    assert weighted.tolist() == pytest.approx(exp["weighted_10_1"])
    strict = cl.simulate(inst, PhilaeOracle(thin_limit=0, strict=True)).cct
    assert strict.tolist() == pytest.approx(exp["strict_priority"])
    same = EXAMPLES["philae_same_queue"]()
    fifo = EXPECTED["philae_same_queue"]["cct"]["fifo"]
    assert cl.simulate(same, PhilaeOracle(thin_limit=0)).cct.tolist() == fifo


def test_pilots_first_then_estimate_misordering_p6() -> None:
    # C1 = 10 x 1 MB, C2 = 20 x 1 MB on one link, both wide: one pilot each (1 sender).
    # Pilots run 0-1 (C1) and 1-2 (C2); both estimates exact (10, 20: Q1); FIFO: C1 2-11,
    # C2 11-30. The oracle (no pilots): C1 10, C2 30 (the right order, sum 40).
    inst = EXAMPLES["philae_misordering"]()
    p = Philae(policy="A")
    assert cl.simulate(inst, p).cct.tolist() == pytest.approx([11.0, 30.0])
    assert p.estimate.tolist() == [10.0, 20.0]
    oracle = cl.simulate(inst, PhilaeOracle()).cct.tolist()
    assert oracle == EXPECTED["philae_misordering"]["cct"]["order_C1_C2"]


def _wide(sizes: list[list[int]], release: float = 0.0, label: str = "") -> Coflow:
    flows = [(i, j, s) for i, row in enumerate(sizes) for j, s in enumerate(row) if s > 0]
    return Coflow(flows, release=release, label=label)


@pytest.mark.parametrize("policy", ["A", "B", "C", "D"])
def test_each_policy_orders_by_its_metric(policy: str) -> None:
    # X: 8 flows of 10 MB over 4 senders x 2 receivers (80 MB, contention 1);
    # Y: 8 flows of 1 MB on the same ports (8 MB), arriving just after X.
    # A, B, D estimate Y smaller (Q0 vs Q1 / smaller metric) and favour it; C sees equal
    # contention and keeps FIFO (X first).
    x = _wide([[10, 10]] * 4, label="X")
    y = _wide([[1, 1]] * 4, release=0.001, label="Y")
    inst = Instance.from_coflows([x, y], 4, units=Units("MB", "unit"))
    p = Philae(policy=policy)
    cct = cl.simulate(inst, p).cct
    assert p.pilots.sum() == 2  # max(1, floor(0.05 * 4)) = 1 each
    assert p.estimate.tolist() == pytest.approx([80.0, 8.0])
    if policy == "C":
        assert cct[0] < cct[1]
    else:
        assert cct[1] < cct[0]


def test_random_pilots_unbiased_p1() -> None:
    # one coflow of 8 flows (4 senders x 2 receivers), sizes 10..40; random pilots are a
    # uniform sample, so the mean estimate over seeds approaches the true 200.
    sizes = [[10, 20], [30, 40], [10, 20], [30, 40]]
    inst = Instance.from_coflows([_wide(sizes)], 4)
    est = []
    for seed in range(200):
        p = Philae(pilot_selection="random", seed=seed)
        cl.simulate(inst, p, verify_schedule=False, record=False)
        est.append(p.estimate[0])
    assert set(est) <= {80.0, 160.0, 240.0, 320.0}
    assert np.mean(est) == pytest.approx(200.0, rel=0.1)


def test_generated_instance_verified_and_deterministic() -> None:
    from coflowlab.instances import spread_flow_starts, uniform

    inst = spread_flow_starts(uniform(6, 12, density=0.7, release_rate=0.2, seed=3), 2.0, seed=3)
    a = cl.simulate(inst, Philae(first_threshold=5.0))
    b = cl.simulate(inst, Philae(first_threshold=5.0))
    assert a.verified and np.array_equal(a.coflow_completion, b.coflow_completion)
    assert cl.simulate(inst, PhilaeOracle(first_threshold=5.0)).verified


def test_oracle_is_clairvoyant_and_philae_is_not() -> None:
    assert not cl.REGISTRY["philae"].clairvoyant
    assert cl.REGISTRY["philae-oracle"].clairvoyant
    assert cl.REGISTRY["philae"].paper is not None


def test_bad_parameters_name_the_field() -> None:
    with pytest.raises(ValueError, match="policy"):
        Philae(policy="E")
    with pytest.raises(ValueError, match="thin_limit"):
        Philae(thin_limit=-1)
    with pytest.raises(ValueError, match="rounding"):
        Philae(rounding="up")


# ------------------------------------------------------------------ compiled path
def _same_run(inst: Instance, cls: type[Philae], **kw: object) -> None:
    """The compiled path against the reference path (``compiled=False``): same events, same
    per-coflow completion times (to 1e-12 relative), same estimates and pilots."""
    ref, fast = cls(compiled=False, **kw), cls(compiled=True, **kw)  # type: ignore[arg-type]
    a = cl.simulate(inst, ref, record=False)
    b = cl.simulate(inst, fast, record=False)
    assert a.verified and b.verified
    assert a.num_events == b.num_events
    np.testing.assert_allclose(b.coflow_completion, a.coflow_completion, rtol=1e-12, atol=0)
    np.testing.assert_allclose(fast.estimate, ref.estimate, rtol=1e-12, equal_nan=True)
    assert np.array_equal(fast.pilots, ref.pilots)


@pytest.mark.parametrize("policy", ["A", "B", "C", "D"])
@pytest.mark.parametrize("strict", [False, True])
def test_compiled_path_equals_reference(policy: str, strict: bool) -> None:
    from coflowlab.instances import spread_flow_starts, uniform

    inst = uniform(8, 16, density=0.6, release_rate=0.3, seed=1)
    kw = dict(policy=policy, strict=strict, first_threshold=2.0, thin_limit=3)
    _same_run(inst, Philae, **kw)
    _same_run(spread_flow_starts(inst, 2.0, seed=1), Philae, **kw)


def test_compiled_path_equals_reference_variants() -> None:
    from coflowlab.instances import fb_like, uniform

    inst = uniform(8, 16, density=0.6, release_rate=0.3, seed=2)
    _same_run(inst, Philae, first_threshold=2.0, thin_limit=3, work_conserving=False)
    _same_run(inst, Philae, first_threshold=2.0, thin_limit=3, pilot_selection="random")
    _same_run(inst, PhilaeOracle, first_threshold=2.0, thin_limit=3)
    _same_run(fb_like(12, num_ports=30, seed=0), Philae)


def test_compiled_path_equals_reference_on_trace_prefix() -> None:
    from coflowlab.instances import find_fb_trace, read_benchmark

    path = find_fb_trace()
    if path is None:
        pytest.skip("FB2010-1Hr-150-0.txt not found (see README: 'Getting the trace')")
    _same_run(read_benchmark(path).subset(range(15)), Philae)


def test_flows_not_grouped_by_coflow_use_the_reference_path() -> None:
    inst = Instance.from_coflows(
        [Coflow([(0, 0, 2.0), (1, 1, 1.0)]), Coflow([(0, 1, 1.0)], release=0.5)], 2
    )
    # interleave the coflows' flows: 0 (coflow 0), 1 (coflow 1), 2 (coflow 0)
    perm = [0, 2, 1]
    mixed = Instance(
        2,
        flow_coflow=inst.flow_coflow[perm],
        flow_src=inst.flow_src[perm],
        flow_dst=inst.flow_dst[perm],
        flow_size=inst.flow_size[perm],
        coflow_release=inst.coflow_release,
    )
    p = Philae(thin_limit=0)
    res = cl.simulate(mixed, p)
    assert res.verified and not p._fast
    ref = cl.simulate(mixed, Philae(thin_limit=0, compiled=False))
    assert np.array_equal(res.coflow_completion, ref.coflow_completion)
