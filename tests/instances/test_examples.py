"""Tests for the worked examples in ``coflowlab.instances.examples``.

Everything checkable without a scheduler is checked: the instance's bottlenecks, widths,
lengths and sizes against the expected values, the internal consistency of the expected values
(CCT >= ρ, averages, optimum <= every policy), and the lower bounds of docs/theory.md#basic-facts
(F3 ``Σ w (r + ρ)``, F4 per-port Smith, the concurrent-open-shop relaxation) against the
stated optima.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from numpy.testing import assert_, assert_allclose, assert_equal

from coflowlab.instance import Instance
from coflowlab.instances import examples as ex
from coflowlab.instances.examples import EXAMPLES, EXPECTED

NAMES = sorted(EXAMPLES)


def _cos_cost(inst: Instance, order: list[int]) -> float:
    """Σ w_j C_j of the concurrent-open-shop permutation schedule of ``order`` (ports as
    machines, processing times load/capacity, releases ignored)."""
    cum = np.cumsum(inst.port_time[order], axis=0)
    uses = inst.port_time[order] > 0
    finish = np.where(uses, cum, 0.0).max(axis=1)
    return float(np.dot(inst.coflow_weight[order], finish))


def _cos_opt(inst: Instance) -> float:
    """Brute-force optimum of the concurrent-open-shop relaxation (a lower bound on OPT)."""
    return min(_cos_cost(inst, list(p)) for p in itertools.permutations(range(inst.num_coflows)))


def _smith_bound(inst: Instance) -> float:
    """F4: the largest, over ports, Smith-rule optimum of the one-machine relaxation."""
    best = 0.0
    for v in range(inst.port_time.shape[1]):
        p = inst.port_time[:, v]
        jobs = np.flatnonzero(p > 0)
        order = jobs[np.argsort(-inst.coflow_weight[jobs] / p[jobs], kind="stable")]
        best = max(best, float(np.dot(inst.coflow_weight[order], np.cumsum(p[order]))))
    return best


def _absolute_opts(inst: Instance, exp: dict[str, Any]) -> list[float]:
    """Stated optima of Σ w_j C_j with absolute completion times."""
    opts = list(exp.get("opt_sum_wc", {}).values())
    if "opt_sum_cct" in exp and np.all(inst.coflow_weight == 1):
        opts.append(exp["opt_sum_cct"] + float(inst.coflow_release.sum()))
    return opts


def _with(*keys: str) -> list[str]:
    """Names of the examples whose expected values have at least one of ``keys``."""
    return [name for name in NAMES if any(key in EXPECTED[name] for key in keys)]


def _load(name: str) -> tuple[str, Instance, dict[str, Any]]:
    return name, EXAMPLES[name](), EXPECTED[name]


def test_registry_and_expected_have_the_same_names():
    """Tests that every example has expected values and vice versa."""
    assert_equal(sorted(EXPECTED), NAMES)
    for name in ex.__all__:
        assert_(hasattr(ex, name), name)


@pytest.mark.parametrize("name", NAMES)
def test_example_builds_with_expected_structure(name: str):
    """Tests that the example builds and matches its expected labels, ports, ρ, widths,
    lengths and total sizes."""
    name, inst, exp = _load(name)
    assert_(isinstance(inst, Instance), name)
    # Sources cite papers or our docs pages, never files users do not have.
    assert_(exp["source"] and "specs/" not in exp["source"], name)
    assert_equal(list(inst.coflow_label), exp["labels"], err_msg=name)
    assert_equal(inst.num_ports, exp["num_ports"], err_msg=name)
    assert_allclose(inst.bottleneck, exp["rho"], rtol=1e-12, err_msg=name)
    for key in ("width", "length", "total_size"):
        if key in exp:
            assert_allclose(getattr(inst, key), exp[key], rtol=1e-12, err_msg=f"{name}: {key}")


@pytest.mark.parametrize("name", _with("cct", "cct_sorted", "opt_sum_cct"))
def test_expected_ccts_are_consistent(name: str):
    """Tests that every stated CCT is at least ρ, that averages equal the means, and that the
    stated optimum is no larger than any policy's total and no smaller than Σ ρ."""
    name, inst, exp = _load(name)
    rho = inst.bottleneck
    for policy, cct in exp.get("cct", {}).items():
        assert_equal(len(cct), inst.num_coflows, err_msg=f"{name}: {policy}")
        assert_(np.all(np.asarray(cct) >= rho * (1 - 1e-12)), f"{name}: {policy}")
        if "opt_sum_cct" in exp:
            assert_(exp["opt_sum_cct"] <= sum(cct) + 1e-9, f"{name}: {policy}")
        if policy in exp.get("avg_cct", {}):
            assert_allclose(np.mean(cct), exp["avg_cct"][policy], err_msg=f"{name}: {policy}")
    for policy, cct in exp.get("cct_sorted", {}).items():
        cct = np.asarray(cct)
        assert_equal(cct.size, inst.num_coflows, err_msg=f"{name}: {policy}")
        assert_(np.all(np.diff(cct) >= 0), f"{name}: {policy} is not sorted")
        assert_(np.all(cct >= np.sort(rho) * (1 - 1e-12)), f"{name}: {policy}")
    if "opt_sum_cct" in exp:
        assert_(rho.sum() <= exp["opt_sum_cct"] * (1 + 1e-12), name)
        if "cct_sorted" in exp:
            assert_allclose(sum(exp["cct_sorted"]["opt"]), exp["opt_sum_cct"], err_msg=name)


@pytest.mark.parametrize("name", _with("fct", "fct_sorted"))
def test_expected_fcts_are_consistent(name: str):
    """Tests that there is one FCT per flow, each at least the flow's size over its ports'
    capacity, and that averages equal the means."""
    name, inst, exp = _load(name)
    port_cap = inst.fabric.port_capacity
    cap = np.minimum(port_cap[inst.flow_src], port_cap[inst.num_ports + inst.flow_dst])
    for key in ("fct", "fct_sorted"):
        for policy, fct in exp.get(key, {}).items():
            fct = np.asarray(fct)
            assert_equal(fct.size, inst.num_flows, err_msg=f"{name}: {policy}")
            floor = inst.flow_size / cap if key == "fct" else np.sort(inst.flow_size / cap)
            if key == "fct_sorted":
                fct = np.sort(fct)
            assert_(np.all(fct >= floor * (1 - 1e-12)), f"{name}: {policy}")
    for policy, avg in exp.get("avg_fct", {}).items():
        for key in ("fct", "fct_sorted"):
            if policy in exp.get(key, {}):
                assert_allclose(np.mean(exp[key][policy]), avg, err_msg=f"{name}: {policy}")


@pytest.mark.parametrize("name", _with("opt_sum_wc", "opt_sum_cct"))
def test_stated_optimum_respects_lower_bounds(name: str):
    """Tests that every stated optimum (absolute completion times) is at least F3
    (Σ w (r + ρ)), F4 (per-port Smith) and, for small zero-release instances, the
    concurrent-open-shop optimum."""
    name, inst, exp = _load(name)
    opts = _absolute_opts(inst, exp)
    assert_(opts, name)
    f3 = float(np.dot(inst.coflow_weight, inst.coflow_release + inst.bottleneck))
    f4 = _smith_bound(inst)
    for opt in opts:
        assert_(f3 <= opt * (1 + 1e-12), f"{name}: F3 {f3} > {opt}")
        assert_(f4 <= opt * (1 + 1e-12), f"{name}: F4 {f4} > {opt}")
        if not inst.has_releases and inst.num_coflows <= 7:
            assert_(_cos_opt(inst) <= opt * (1 + 1e-12), f"{name}: COS > {opt}")
    if "lp_bounds" in exp:
        assert_(exp["lp_bounds"] <= min(opts), name)


@pytest.mark.parametrize("name", _with("completion", "order", "cos_sum_wc_by_order"))
def test_expected_completions_and_orders_match_their_costs(name: str):
    """Tests that stated completion times give the stated Σ w C, never beat r + ρ, and that
    stated orders have the stated concurrent-open-shop costs."""
    name, inst, exp = _load(name)
    w = inst.coflow_weight
    for policy, completion in exp.get("completion", {}).items():
        completion = np.asarray(completion)
        assert_(np.all(completion >= inst.coflow_release + inst.bottleneck - 1e-12), name)
        model = {"opt": "fluid", "opt_slotted": "slotted"}.get(policy)
        if model in exp.get("opt_sum_wc", {}):
            assert_allclose(np.dot(w, completion), exp["opt_sum_wc"][model], err_msg=name)
        if policy in exp.get("sum_wc", {}):
            assert_allclose(np.dot(w, completion), exp["sum_wc"][policy], err_msg=name)
    for key, order in exp.get("order", {}).items():
        assert_equal(sorted(order), list(range(inst.num_coflows)), err_msg=f"{name}: {key}")
        if key in exp.get("order_sum_wc", {}):
            assert_allclose(_cos_cost(inst, order), exp["order_sum_wc"][key], err_msg=name)
    for text, cost in exp.get("cos_sum_wc_by_order", {}).items():
        order = [int(k) for k in text.split(",")]
        assert_allclose(_cos_cost(inst, order), cost, err_msg=f"{name}: {text}")


@pytest.mark.parametrize(
    "name",
    ["anti_diagonal_1", "anti_diagonal_2", "theory_i2", "theory_i3", "yosemite_single_port"],
)
def test_optimum_of_open_shop_instances_equals_brute_force(name: str):
    """Tests that on instances that *are* concurrent open shops (diagonal, one port, or the
    thesis's anti-diagonal reduction) the stated optimum equals the brute-force COS optimum."""
    inst, exp = EXAMPLES[name](), EXPECTED[name]
    assert_allclose(_cos_opt(inst), _absolute_opts(inst, exp)[0])


def test_deadline_examples_admission_and_deadlines():
    """Tests that Varys admits exactly the coflows with Γ_empty <= D, and that the coflows said
    to meet their deadline have CCT <= D."""
    inst, exp = EXAMPLES["fig_5_1_deadline"](), EXPECTED["fig_5_1_deadline"]["deadline"]
    labels = list(inst.coflow_label)
    for lab in exp["varys_admitted"]:
        k = labels.index(lab)
        assert_(inst.bottleneck[k] <= inst.coflow_deadline[k])
    for lab in exp["varys_rejected"]:
        k = labels.index(lab)
        assert_(inst.bottleneck[k] > inst.coflow_deadline[k])
    assert_equal(EXAMPLES["fig_5_1"]().has_deadlines, False)
    inst, exp = EXAMPLES["fig_2_3"](), EXPECTED["fig_2_3"]
    labels = list(inst.coflow_label)
    for policy, met in exp["coflows_meeting_deadline"].items():
        cct = np.asarray(exp["cct"][policy])
        hits = [labels[k] for k in range(inst.num_coflows) if cct[k] <= inst.coflow_deadline[k]]
        assert_equal(hits, met, err_msg=policy)


def test_coflowsim_micro_releases_and_units():
    """Tests that the micro-trace has the file's releases (CoflowSim's variant: all 0), MB/ms
    units and capacity 0.125, and that its coflows do not overlap in time."""
    file_inst = EXAMPLES["coflowsim_micro"]()
    assert_equal(file_inst.coflow_release, [0.0, 5000.0, 10240.0])
    assert_equal(EXAMPLES["coflowsim_micro_coflowsim"]().coflow_release, [0.0, 0.0, 0.0])
    assert_equal((file_inst.units.size, file_inst.units.time), ("MB", "ms"))
    assert_allclose(file_inst.fabric.port_capacity, 0.125)
    sums = EXPECTED["coflowsim_micro_coflowsim"]["coflowsim_sum_cct"]
    for policy, ccts in EXPECTED["coflowsim_micro"]["coflowsim"].items():
        assert_allclose(sum(ccts), sums[policy], err_msg=policy)
    # with the file's releases no two coflows overlap, so the optimum is Σ ρ
    ends = file_inst.coflow_release + file_inst.bottleneck
    assert_(np.all(ends[:-1] <= file_inst.coflow_release[1:]))


def test_philae_contention_counts():
    """Tests that Philae's P-10 (docs/test-cases.md#p-10) contention (other coflows sharing a
    port) is (1, 2, 1)."""
    inst = EXAMPLES["philae_contention"]()
    used = inst.port_load > 0
    contention = [int((used[:, used[k]].any(axis=1)).sum()) - 1 for k in range(3)]
    assert_equal(contention, EXPECTED["philae_contention"]["contention"])


@pytest.mark.parametrize("name", ["coflex_fig2", "coflex_theorem2", "coflex_single_link"])
def test_coflex_correlation_vectors_and_optimal_isolation_guarantee(name: str):
    """Tests that the correlation vectors d = load / (capacity Γ) on the links and
    P* = 1 / max_i Σ_k d_k^i (Coflex eq. 4) over all ports of the embedding."""
    inst, exp = EXAMPLES[name](), EXPECTED[name]
    d = inst.port_time / inst.bottleneck[:, None]
    assert_allclose(1 / d.sum(axis=0).max(), exp["p_star"])
    for label, vector in exp.get("correlation", {}).items():
        k = list(inst.coflow_label).index(label)
        assert_allclose(d[k, : len(vector)], vector, err_msg=label)


def test_coflex_progress_of_allocations():
    """Tests that each stated allocation's progress min_i a^i / d^i equals the stated
    progress, and that no allocation exceeds a link's capacity."""
    exp = EXPECTED["coflex_fig2"]
    d = exp["correlation"]
    for policy, alloc in exp["allocation"].items():
        link_sum = np.sum([alloc["A"], alloc["B"]], axis=0)
        assert_(np.all(link_sum <= 1 + 1e-12), policy)
        if policy in exp["progress"]:
            progress = [min(a / x for a, x in zip(alloc[c], d[c], strict=True)) for c in "AB"]
            assert_allclose(progress, exp["progress"][policy], err_msg=policy)
    naive = exp["allocation"]["naive_0.5_stage1"]
    progress = [min(a / x for a, x in zip(naive[c], d[c], strict=True)) for c in "AB"]
    assert_allclose(progress, exp["progress"]["naive_0.5"])


@pytest.mark.parametrize("delta", [0.0, 0.1, 0.5, 0.9])
def test_fig_1_1_family(delta: float):
    """Tests that Fig. 1.1 has the right sizes for several δ and that its SFF average FCT
    formula agrees with its SFF completion times."""
    inst = ex.fig_1_1(delta)
    exp = ex._fig_1_1_expected(delta)
    assert_allclose(inst.flow_size, [1 - delta, 1 + delta, 1.0])
    assert_allclose(inst.length, exp["length"])
    sff = exp["cct"]["sff"]
    assert_allclose((1 - delta + sff[1] + sff[0]) / 3, exp["avg_fct"]["sff"])


@pytest.mark.parametrize(
    ("n", "ratio"), [(1, 1.0), (2, 1.25), (3, 8 / 6), (4, 1.375), (100, 1.495)]
)
def test_fig_4_6_family(n: int, ratio: float):
    """Tests that Fig. 4.6(N) has ρ = 2N and the thesis's fairness/MADD ratios (1.495 at
    N = 100, Table 4.2's 25/33/38% at N = 2, 3, 4)."""
    inst = ex.fig_4_6(n)
    exp = ex._fig_4_6_expected(n)
    assert_allclose(inst.bottleneck, exp["rho"])
    assert_allclose(inst.width, exp["width"])
    assert_allclose(inst.total_size, exp["total_size"])
    assert_allclose(exp["fair_over_madd"], ratio)


@pytest.mark.parametrize(
    ("n", "m", "opt", "wide_first"),
    [(4, 2, 7, 9), (9, 3, 30, 42), (16, 4, 94, 130), (100, 10, 4195, 5005)],
)
def test_aalo_theorem_c11_family(n: int, m: int, opt: int, wide_first: int):
    """Tests that Theorem C.1.1's instances match the table in docs/examples.md of Σ CCT values and
    their structure (every flow on the matching i -> m - 1 - i, ρ = 1)."""
    inst = ex.aalo_theorem_c11(n, m)
    exp = ex._aalo_c11_expected(n, m)
    assert_equal(exp["opt_sum_cct"], opt)
    assert_equal(exp["wide_first_sum_cct"], wide_first)
    assert_equal(inst.flow_dst, m - 1 - inst.flow_src)
    assert_allclose(inst.bottleneck, exp["rho"])
    assert_allclose(inst.width, exp["width"])
    assert_(inst.bottleneck.sum() <= opt)


@pytest.mark.parametrize(
    ("n", "size", "t_cont", "t_disc"),
    [(1, 30.0, 30, 30), (2, 20.0, 80, 70), (10, 10.0, 1000, 1000), (10, 50.0, 5000, 3200)],
)
def test_aalo_identical_family(n: int, size: float, t_cont: float, t_disc: float):
    """Tests that App. C.2's totals match the table in docs/examples.md (T_cont = N² S, T_disc)."""
    inst = ex.aalo_identical(n, size)
    exp = ex._aalo_identical_expected(n, size)
    assert_allclose(inst.bottleneck, exp["rho"])
    assert_allclose(exp["sum_cct_formula"]["clas"], t_cont)
    assert_allclose(exp["sum_cct_formula"]["dclas"], t_disc)
    assert_allclose(sum(exp["cct"]["clas"]), t_cont)


@pytest.mark.parametrize(
    ("n", "utilization"), [(2, 1.0), (3, 7 / 9), (4, 5 / 8), (10, 7 / 25), (100, 149 / 5000)]
)
def test_coflex_theorem2_family(n: int, utilization: float):
    """Tests that Theorem 2's instance has P* = 1/n and the utilisations of
    docs/examples.md#coflex-theorem2."""
    inst = ex.coflex_theorem2(n)
    exp = ex._coflex_theorem2_expected(n)
    d = inst.port_time / inst.bottleneck[:, None]
    assert_allclose(1 / d.sum(axis=0).max(), 1 / n)
    assert_allclose(inst.bottleneck, exp["rho"])
    assert_allclose(inst.total_size, exp["total_size"])
    assert_allclose(np.mean(exp["link_usage"]["naive_1"]), utilization)
    assert_allclose(exp["utilization"]["naive_1"], utilization)


@pytest.mark.parametrize(
    "make",
    [
        lambda: ex.fig_1_1(1.0),
        lambda: ex.fig_1_1(-0.1),
        lambda: ex.fig_4_6(0),
        lambda: ex.aalo_theorem_c11(1, 2),
        lambda: ex.aalo_identical(0),
        lambda: ex.aalo_identical(2, 0.0),
        lambda: ex.coflex_theorem2(1),
        lambda: ex.coflex_single_link(0),
        lambda: ex.anti_diagonal([0], [0]),
        lambda: ex.anti_diagonal([1, 2], [1]),
        lambda: ex.coflowsim_micro("epoch"),
    ],
)
def test_invalid_example_parameters_raise(make: Callable[[], Instance]):
    """Tests that invalid parameters of the example families raise ValueError."""
    with pytest.raises(ValueError):
        make()
