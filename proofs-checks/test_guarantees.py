"""Approximation guarantees (docs/theory.md#properties, P3-P6, P14): every registered
approximation's verified cost respects the guarantee it carries against the bound it certifies,
lies above the exact optimum of its time model, which lies above that bound; and the paper-specific
statements (Sincronia ≤ 4·OPT, LP-OV-LS ≤ 4 or 5·LP-OV, the primal-dual open-shop value ≤ 2·dual,
the QSZ grouped value, α-point's exact expectation ≤ 2·TI-LP) hold.

The ratios value / bound and value / OPT are recorded in the summary table
(``make proofs``), one row per algorithm, so a researcher sees how tight each bound was.
"""

from __future__ import annotations

import dataclasses
from importlib import import_module

import algorithms
import numpy as np
import pytest
import summary
from algorithms import DECLINED, Algorithm
from hypothesis import assume, given
from hypothesis import strategies as st
from profiles import examples
from strategies import instances

import coflowlab as cl
from coflowlab.approximations.sincronia import solve_sincronia
from coflowlab.formulations import solve_method
from coflowlab.solution import OBJECTIVE_RTOL, Solution
from coflowlab.time_models import TimeModel


class Declined(Exception):
    """The algorithm said the instance is outside its scope (counted, not a pass)."""


def _leq(a: float, b: float) -> bool:
    return a <= b + OBJECTIVE_RTOL * max(1.0, abs(a), abs(b))


_OPT: dict[tuple[str, str], float] = {}


def exact_opt(inst: cl.Instance, model: TimeModel) -> float:
    """The proven optimum of the algorithm's time model (exact-fluid or exact-slotted),
    memoised per instance."""
    method = "exact-slotted" if model is TimeModel.SLOTTED else "exact-fluid"
    key = (method, inst.to_json())
    if key not in _OPT:
        sol = solve_method(inst, method)
        assert sol.status.value == "optimal", f"{method}: {sol.status.value}"
        _OPT[key] = float(sol.objective)
    return _OPT[key]


def _run(alg: Algorithm, inst: cl.Instance) -> tuple[Solution, float]:
    """Runs ``alg`` and returns its solution and the verified Σ w C of its schedule."""
    try:
        sol = alg.run(inst)
    except DECLINED as exc:
        raise Declined(str(exc)) from exc
    report = cl.verify(inst, sol.schedule)
    assert report.feasible, f"{alg.name}: {report.summary()}"
    cost = float(np.dot(inst.coflow_weight, report.coflow_completion))
    assert abs(cost - sol.objective) <= OBJECTIVE_RTOL * max(1.0, cost), (sol.objective, cost)
    return sol, cost


def check_guarantee(inst: cl.Instance, alg: Algorithm) -> dict[str, float]:
    """Generic guarantee property of one approximation on one instance:
    ``bound ≤ OPT_model ≤ cost`` and, if a guarantee is claimed, ``cost ≤ factor·bound +
    additive`` (for an in-expectation guarantee: the exact expectation it reports,
    ``details["expected_cost"]``, which is also ≥ OPT)."""
    sol, cost = _run(alg, inst)
    opt = exact_opt(inst, alg.model)
    assert _leq(opt, cost), f"{alg.name}: cost {cost!r} below OPT {opt!r}"
    assert _leq(sol.bound, opt), f"{alg.name}: bound {sol.bound!r} above OPT {opt!r}"
    out = {"cost": cost, "opt": opt, "bound": float(sol.bound)}
    g = sol.guarantee
    if g is None:
        return out
    assert sol.bound_source == g.bound, (sol.bound_source, g.bound)
    value = cost
    if g.in_expectation:
        assert "expected_cost" in sol.details, f"{alg.name}: no exact expectation to check"
        value = float(sol.details["expected_cost"])
        assert _leq(opt, value), f"{alg.name}: expectation {value!r} below OPT {opt!r}"
    assert g.holds(value, sol.bound), (
        f"{alg.name}: {value!r} > {g.statement} = {g.limit(sol.bound)!r} (bound {sol.bound!r})"
    )
    out.update(value=value, limit=g.limit(sol.bound), factor=g.factor)
    return out


def _fluid_small(**kw) -> st.SearchStrategy[cl.Instance]:
    """Small fluid instances with sizes in whole or quarter units (the LP-based methods'
    horizons grow with total size over the smallest size, docs/theory.md#time-indexed)."""
    base = instances(max_ports=3, max_coflows=4, max_flows_per_coflow=3, integral=True, **kw)
    return st.one_of(base, base.map(lambda i: i.replace(flow_size=i.flow_size / 4)))


def _slotted_small() -> st.SearchStrategy[cl.Instance]:
    return instances(max_ports=2, max_coflows=3, max_flows_per_coflow=2, integral=True).filter(
        lambda i: float(i.flow_size.sum()) <= 12
    )


def _for(alg: Algorithm) -> st.SearchStrategy[cl.Instance]:
    if alg.model is TimeModel.SLOTTED:
        return _slotted_small()
    return st.one_of(_fluid_small(capacities=True), _fluid_small(releases=False))


@pytest.mark.parametrize("alg", algorithms.approximations(), ids=str)
@examples(ci=8, thorough=400)
@given(data=st.data())
def test_guarantee_holds_and_bound_is_certified(alg, data):
    """docs/theory.md#properties, P4-P6, P14 and each algorithm's module (Sincronia/primal-dual:
    Agarwal et al. 2018 with Mastrolilli et al. 2010; LP-OV-LS: Shafiee-Ghaderi 2018; QSZ:
    Qiu-Stein-Zhong 2015 as derived in approximations/qsz.py; α-point: Chowdhury et al. 2019): the
    verified cost respects ``sol.guarantee`` against ``sol.bound`` (randomized-in-expectation ones:
    their exact expectation), and bound ≤ OPT of the time model ≤ cost."""
    inst = data.draw(_for(alg))
    try:
        r = check_guarantee(inst, alg)
    except Declined:
        summary.declined(f"guarantee {alg.name}", alg.name)
        assume(False)
        return
    if "limit" in r:
        summary.observe(
            f"guarantee {alg.name}",
            algorithm=alg.name,
            ratio=r["value"] / r["bound"] if r["bound"] > 0 else None,
            limit=r["limit"],
            value=r["value"],
            bound=f"≤ {r['factor']:g}·bound (+ additive)",
        )
    summary.observe(
        f"ratio to OPT {alg.name}",
        algorithm=alg.name,
        ratio=r["cost"] / r["opt"] if r["opt"] > 0 else None,
        bound="bound ≤ OPT ≤ cost",
    )


@pytest.mark.parametrize("allocation", ["greedy", "madd"])
@examples(ci=10, thorough=400)
@given(inst=_fluid_small(releases=False, capacities=True))
def test_sincronia_within_four_opt(allocation, inst):
    """Sincronia offline theorem (Agarwal et al., SIGCOMM 2018; docs/theory.md#sincronia, F5), zero
    release dates: the BSSI order with an order-respecting work-conserving allocation (greedy
    or MADD + backfill) costs ≤ 4·dual ≤ 4·OPT_fluid."""
    sol = solve_sincronia(inst, allocation=allocation)
    report = cl.verify(inst, sol.schedule)
    assert report.feasible
    cost = float(np.dot(inst.coflow_weight, report.coflow_completion))
    opt = exact_opt(inst, TimeModel.FLUID)
    assert _leq(cost, 4 * sol.bound), (cost, sol.bound)
    assert _leq(cost, 4 * opt), (cost, opt)
    summary.observe(
        f"Sincronia ({allocation}) ≤ 4·OPT",
        algorithm="sincronia",
        ratio=cost / opt if opt > 0 else None,
        limit=4 * opt,
        value=cost,
        bound="≤ 4·OPT (r = 0)",
    )


(_LP_OV_LS,) = [a for a in algorithms.approximations() if a.name == "lp-ov-ls"]


def check_lp_ov_ls(inst: cl.Instance, alg: Algorithm = _LP_OV_LS) -> tuple[float, float, float]:
    """LP-OV-LS ≤ 4·LP-OV without release dates, ≤ 5·LP-OV with; LP-OV recomputed here."""
    _, cost = _run(alg, inst)
    lp = solve_method(inst, "lp-ov").objective
    factor = 5.0 if inst.has_releases else 4.0
    assert _leq(cost, factor * lp), f"lp-ov-ls {cost!r} > {factor:g}·LP-OV = {factor * lp!r}"
    return cost, lp, factor


@examples(ci=15, thorough=1000)
@given(inst=st.one_of(instances(capacities=True), instances(releases=False)))
def test_lp_ov_ls_within_four_or_five_lp_ov(inst):
    """P5 (Shafiee-Ghaderi, IEEE/ACM ToN 2018; docs/theory.md#lp-ov-ls): LP-OV ordering plus greedy
    list scheduling costs ≤ 4·LP-OV with zero release dates and ≤ 5·LP-OV with release dates."""
    cost, lp, factor = check_lp_ov_ls(inst)
    summary.observe(
        f"P5 LP-OV-LS ≤ {factor:g}·LP-OV",
        algorithm="lp-ov-ls",
        ratio=cost / lp if lp > 0 else None,
        limit=factor * lp,
        value=cost,
        bound=f"≤ {factor:g}·LP-OV",
    )


def cos_value_of(inst: cl.Instance, order) -> float:
    """``Σ_k w_σ(k) max_v L_v(prefix_k)`` in port time (docs/theory.md#primal-dual)."""
    p = np.asarray(inst.port_time)
    load = np.zeros(p.shape[1])
    value = 0.0
    for k in order:
        load += p[k]
        value += float(inst.coflow_weight[k]) * float(load.max())
    return value


def check_primal_dual_cos(inst: cl.Instance, alg: Algorithm) -> tuple[float, float]:
    """P3: the order's open-shop value (recomputed from the order) equals
    ``details["cos_value"]`` and is ≤ 2·dual."""
    sol, _ = _run(alg, inst)
    cos = cos_value_of(inst, sol.order)
    assert abs(cos - sol.details["cos_value"]) <= OBJECTIVE_RTOL * max(1.0, cos), (
        cos,
        sol.details["cos_value"],
    )
    dual = float(sol.details["dual_objective"])
    assert abs(dual - sol.bound) <= OBJECTIVE_RTOL * max(1.0, dual)
    assert _leq(cos, 2 * dual), f"cos value {cos!r} > 2·dual = {2 * dual!r}"
    return cos, dual


_DUAL_ALGS = [a for a in algorithms.approximations() if a.name in ("primal-dual", "sincronia")]


@pytest.mark.parametrize("alg", _DUAL_ALGS, ids=str)
@given(inst=instances(capacities=True))
def test_primal_dual_open_shop_value_within_two_dual(alg, inst):
    """P3 (Mastrolilli, Queyranne, Schulz, Svensson, Uhan, ORL 2010; docs/theory.md#primal-dual):
    the primal-dual order's value as a permutation schedule of the ports' concurrent open shop, Σ_k
    w_σ(k) max_v L_v(prefix_k), is at most twice the dual objective."""
    cos, dual = check_primal_dual_cos(inst, alg)
    summary.observe(
        "P3 PD open-shop value ≤ 2·dual",
        algorithm=alg.name,
        ratio=cos / dual if dual > 0 else None,
        limit=2 * dual,
        value=cos,
        bound="≤ 2·dual",
    )


_GREEDY = [a for a in algorithms.approximations() if a.name.startswith("order-")] + _DUAL_ALGS


@pytest.mark.parametrize("alg", _GREEDY, ids=str)
@given(inst=instances(capacities=True))
def test_greedy_list_schedule_prefix_bound(alg, inst):
    """P4 / F5 (docs/theory.md#basic-facts): with strict-priority greedy rates in a coflow order,
    coflow σ(k) completes by R_k + max over its flows e=(i, o) of L_i(prefix_k) + L_o(prefix_k)
    (port times), R_k the latest release in the prefix."""
    sol, _ = _run(alg, inst)
    if sol.details.get("allocation") != "greedy":  # e.g. a MADD variant: F5 does not apply
        summary.declined("P4 greedy prefix bound", alg.name)
        assume(False)
    report = cl.verify(inst, sol.schedule)
    p = np.asarray(inst.port_time)
    m = inst.num_ports
    load = np.zeros(p.shape[1])
    latest = 0.0
    worst = 0.0
    for k in sol.order:
        load += p[k]
        latest = max(latest, float(inst.coflow_release[k]))
        flows = inst.coflow_flows(int(k))
        limit = latest + float(np.max(load[inst.flow_src[flows]] + load[m + inst.flow_dst[flows]]))
        c = float(report.coflow_completion[k])
        assert _leq(c, limit), f"{alg.name}: coflow {k} ends at {c!r} > {limit!r}"
        if limit > 0:
            worst = max(worst, c / limit)
    summary.observe("P4 greedy prefix bound", algorithm=alg.name, ratio=worst, bound="≤ 1")


_QSZ = [a for a in algorithms.approximations() if a.name.startswith("qsz")]


@pytest.mark.parametrize("alg", _QSZ, ids=str)
@examples(ci=15, thorough=1000)
@given(inst=instances(integral=True))
def test_qsz_grouped_value_within_derived_guarantee(alg, inst):
    """P6 (Qiu-Stein-Zhong SPAA 2015 grouping, bound derived in approximations/qsz.py and
    docs/theory.md#qsz): the grouped value Σ w · (end of its group) is ≤ 16·LP + 2a·w(G₁) (+
    rounding) with zero release dates, ≤ 20·LP + 3a·w(G₁) (+ rounding) with release dates, and
    every coflow of the verified schedule ends by its group's end."""
    try:
        sol, cost = _run(alg, inst)
    except Declined:
        summary.declined(f"P6 {alg.name} grouped ≤ guarantee", alg.name)
        assume(False)
        return
    grouped = float(sol.details["grouped_value"])
    g = sol.guarantee
    factor = 20.0 if inst.has_releases else 16.0
    assert g.factor == factor
    assert _leq(cost, grouped), (cost, grouped)
    assert g.holds(grouped, sol.bound), (grouped, g.limit(sol.bound), g.statement)
    summary.observe(
        f"P6 {alg.name} grouped ≤ guarantee",
        algorithm=alg.name,
        ratio=grouped / sol.bound if sol.bound > 0 else None,
        limit=g.limit(sol.bound),
        value=grouped,
        bound="≤ 16|20·LP + additive",
    )


_ALPHA = [a for a in algorithms.approximations() if a.name.startswith("alpha-point")]


@pytest.mark.parametrize("alg", _ALPHA, ids=str)
@examples(ci=15, thorough=1000)
@given(inst=instances(max_ports=3, max_coflows=4, max_flows_per_coflow=3, integral=True))
def test_alpha_point_expectation_within_two_ti_lp(alg, inst):
    """P14 (α-point stretching, Chowdhury-Khuller-Purohit-Yang-You SPAA 2019; derivation in
    approximations/alpha_point.py): the exact expectation over α (density 2α) is ≤ 2·TI-LP,
    and the best α (derandomized) is at most that expectation."""
    try:
        sol, cost = _run(alg, inst)
    except Declined:
        summary.declined("P14 α-point E ≤ 2·TI-LP", alg.name)
        assume(False)
        return
    expected = float(sol.details["expected_cost"])
    assert _leq(expected, 2 * sol.bound), (expected, sol.bound)
    if not sol.guarantee.in_expectation:
        assert _leq(cost, expected), (cost, expected)
    summary.observe(
        "P14 α-point E ≤ 2·TI-LP",
        algorithm=alg.name,
        ratio=expected / sol.bound if sol.bound > 0 else None,
        limit=2 * sol.bound,
        value=expected,
        bound="E ≤ 2·TI-LP",
    )


# ---------------------------------------------------------------- bug injection
def test_injected_reversed_order_breaks_sincronia_guarantee(monkeypatch):
    """Bug injection (guarantees family): Sincronia with its BSSI order reversed. On one port
    (docs/theory.md#f2) the order is Smith's rule and dual = OPT; reversed, a short heavy coflow
    waits behind a long light one and the cost exceeds 4·dual, so the guarantee property fails."""
    sinc = import_module("coflowlab.approximations.sincronia")
    original = sinc.primal_dual_order

    def reversed_order(inst):
        pd = original(inst)
        return dataclasses.replace(pd, order=pd.order[::-1].copy())

    monkeypatch.setattr(sinc, "primal_dual_order", reversed_order)
    (broken,) = [a for a in algorithms.approximations() if a.name == "sincronia"]
    inst = cl.Instance.from_coflows(
        [cl.Coflow([(0, 0, 1.0)], weight=10.0), cl.Coflow([(0, 0, 10.0)], weight=1.0)], 1
    )
    with pytest.raises(AssertionError, match="Σ w C ≤ 4·dual"):
        check_guarantee(inst, broken)


def test_injected_self_certified_bound_is_caught():
    """Bug injection (guarantees family): an approximation that reports its own cost as its lower
    bound (ratio 1 everywhere) is caught by ``bound ≤ OPT``: on instance I3
    (docs/theory.md#instances) the primal-dual order costs 5 while OPT = 4."""
    (pd,) = [a for a in algorithms.approximations() if a.name == "primal-dual"]

    def self_certified(inst):
        sol = pd.run(inst)
        return dataclasses.replace(sol, bound=sol.objective)

    broken = dataclasses.replace(pd, run=self_certified)
    diag = [[[1.0, 0.0], [0.0, 0.0]], [[0.0, 0.0], [0.0, 1.0]], [[1.0, 0.0], [0.0, 1.0]]]
    inst = cl.Instance.from_matrices(diag)
    assert pd.run(inst).objective == 5.0
    with pytest.raises(AssertionError, match="above OPT"):
        check_guarantee(inst, broken)


def test_injected_lp_ov_ls_without_lp_order_is_caught(monkeypatch):
    """Bug injection (guarantees family): LP-OV-LS listing the coflows in reverse LP order
    exceeds 4·LP-OV on a one-port instance where the LP order is Smith's rule (P5 fails)."""
    ls = import_module("coflowlab.approximations.lp_ov_ls")
    original = ls.list_schedule

    def reversed_list(inst, order, allocation):
        return original(inst, tuple(order)[::-1], allocation)

    monkeypatch.setattr(ls, "list_schedule", reversed_list)
    inst = cl.Instance.from_coflows(
        [cl.Coflow([(0, 0, 1.0)], weight=10.0), cl.Coflow([(0, 0, 10.0)], weight=1.0)], 1
    )
    with pytest.raises(AssertionError, match="LP-OV"):
        check_lp_ov_ls(inst)
