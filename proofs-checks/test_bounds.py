"""Lower bounds (docs/theory.md#properties, P1, P2): every registered relaxation and bound, and the
primal-dual dual, is at most the proven fluid optimum, and the relaxations are ordered as their
modules document.

The chain tested (each link within :data:`coflowlab.solution.OBJECTIVE_RTOL`):

    dual(PD) ≤ parallel-lp ≤ lp-ov ≤ lp-ov-binary = OPT_COS ≤ OPT_fluid ≤ OPT_slotted

(docs/theory.md#primal-dual, #parallel-lp, #lp-ov, #cos, #time-models). ``parallel-lp ≤ lp-ov`` is
the statement "LP-OV implies the parallel inequalities" (docs/theory.md#lp-ov;
``lp_ov.solve_lp_ov`` Notes), which concerns the basic form's inequalities with ``r(S) = 0``.
``parallel-lp`` by default adds release-shifted cuts (``r(S) = min_{j∈S} r_j``, its module
docstring), which LP-OV does not imply: with release dates the chain therefore uses
``parallel-lp(release_cuts=False)``, and separately checks that the shifted form is at least the
plain one and still ≤ OPT. ``lp-ov-binary`` is compared with an independent enumeration of coflow
orders: its docstring states its value is ``min_σ Σ_k w_k max(e_k, max_{v ∈ k} T_v(k))`` (OPT_COS
without release dates).
"""

from __future__ import annotations

import dataclasses
import itertools
from importlib import import_module
from types import SimpleNamespace

import algorithms
import numpy as np
import pytest
import summary
from algorithms import DECLINED, Algorithm
from hypothesis import Phase, assume, given, settings
from hypothesis import strategies as st
from profiles import examples
from strategies import instances

import coflowlab as cl
from coflowlab.approximations.primal_dual import primal_dual_order
from coflowlab.formulations import solve_method
from coflowlab.registry import AlgorithmEntry, Family
from coflowlab.solution import OBJECTIVE_RTOL
from coflowlab.time_models import TimeModel

# Injection tests only need the failure, not its shrunk form (shrinking re-solves).
_NO_SHRINK = (Phase.explicit, Phase.generate)
PROP_P1 = "P1 lower bound ≤ OPT_fluid"
PROP_P2 = "P2 chain (zero release)"
PROP_P2R = "P2 chain (release dates)"


def _leq(a: float, b: float) -> bool:
    """``a ≤ b`` up to the solvers' relative tolerance."""
    return a <= b + OBJECTIVE_RTOL * max(1.0, abs(a), abs(b))


def _pd_dual() -> Algorithm:
    def run(inst: cl.Instance) -> SimpleNamespace:
        return SimpleNamespace(objective=float(primal_dual_order(inst).dual_objective))

    entry = AlgorithmEntry(
        "primal-dual dual", Family.BOUND, run, TimeModel.FLUID, "dual of the BSSI order"
    )
    return Algorithm(entry, run)


BOUNDS = [*algorithms.lower_bounds(), _pd_dual()]

_OPT: dict[str, float] = {}


def fluid_opt(inst: cl.Instance) -> float:
    """The proven fluid optimum (exact-fluid), memoised per instance (the parametrized
    properties draw the same derandomized instances for every bound)."""
    key = inst.to_json()
    if key not in _OPT:
        sol = solve_method(inst, "exact-fluid")
        assert sol.status.value == "optimal", f"exact-fluid: {sol.status.value}"
        _OPT[key] = float(sol.objective)
    return _OPT[key]


def cos_enumerated(inst: cl.Instance) -> float:
    """``min`` over coflow orders of ``Σ_k w_k max(e_k, max_{v: p[k,v] > 0} T_v(k))`` with
    ``T_v(k)`` the time on port ``v`` of ``k`` and the coflows before it and ``e_k = r_k + ρ_k``
    (OPT of the ports' concurrent open shop without release dates, docs/theory.md#cos)."""
    p = np.asarray(inst.port_time)
    floor = np.asarray(inst.coflow_release) + p.max(axis=1)
    w = np.asarray(inst.coflow_weight)
    best = np.inf
    for order in itertools.permutations(range(inst.num_coflows)):
        load = np.zeros(p.shape[1])
        cost = 0.0
        for k in order:
            load += p[k]
            used = p[k] > 0
            cost += w[k] * max(floor[k], load[used].max())
        best = min(best, cost)
    return float(best)


def _value(alg: Algorithm, inst: cl.Instance) -> float:
    sol = alg.run(inst)
    status = getattr(sol, "status", None)
    assert status is None or status.value == "optimal", f"{alg.name}: {status}"
    return float(sol.objective)


def check_bound_below_opt(inst: cl.Instance, alg: Algorithm) -> tuple[float, float]:
    """P1: the bound's value is at most the proven fluid optimum."""
    value, opt = _value(alg, inst), fluid_opt(inst)
    assert _leq(value, opt), f"{alg.name} = {value!r} > OPT_fluid = {opt!r}"
    return value, opt


_small = dict(max_ports=3, max_coflows=4, max_flows_per_coflow=3, capacities=True)


@pytest.mark.parametrize("alg", BOUNDS, ids=str)
@examples(ci=10, thorough=400)
@given(
    inst=st.one_of(
        instances(integral=True, **_small),
        instances(integral=True, **_small).map(lambda i: i.replace(flow_size=i.flow_size / 4)),
    )
)
def test_every_lower_bound_is_at_most_opt(alg, inst):
    """P1 (docs/theory.md#properties; the interval LP, #interval-lp; the parallel LP, #parallel-lp,
    and the PD dual, #primal-dual (Mastrolilli et al. 2010); LP-OV, #lp-ov (Shafiee-Ghaderi
    2018); the TI-LP, #time-indexed; F3 Σ w(r+ρ), F4
    per-port Smith): every registered relaxation and bound is ≤ the fluid OPT (with releases and
    capacities). Sizes are whole or quarter units: the time-indexed LP's size grows with the total
    size over the smallest one (docs/theory.md#time-indexed)."""
    try:
        value, opt = check_bound_below_opt(inst, alg)
    except DECLINED:
        summary.declined(PROP_P1, alg.name)
        assume(False)
        return
    summary.observe(
        PROP_P1,
        algorithm=alg.name,
        ratio=value / opt if opt > 0 else None,
        limit=opt,
        value=value,
        bound="≤ OPT_fluid",
    )


def check_chain(inst: cl.Instance, slotted: bool) -> dict[str, float]:
    """P2 on one instance; returns the values (zero release: the basic form's chain with OPT_COS
    enumerated; with release dates: the chain with the plain parallel LP, plus shifted ≥
    plain)."""
    v = {
        "dual": float(primal_dual_order(inst).dual_objective),
        "parallel": solve_method(inst, "parallel-lp", release_cuts=False).objective,
        "lp-ov": solve_method(inst, "lp-ov").objective,
        "lp-ov-binary": solve_method(inst, "lp-ov-binary").objective,
        "cos": cos_enumerated(inst),
        "opt": fluid_opt(inst),
    }
    chain = ["dual", "parallel", "lp-ov", "lp-ov-binary", "opt"]
    if slotted:
        sol = solve_method(inst, "exact-slotted")
        assert sol.status.value == "optimal"
        v["slotted"] = sol.objective
        chain.append("slotted")
    for a, b in itertools.pairwise(chain):
        assert _leq(v[a], v[b]), f"{a} = {v[a]!r} > {b} = {v[b]!r} ({v})"
    assert abs(v["lp-ov-binary"] - v["cos"]) <= OBJECTIVE_RTOL * max(1.0, v["cos"]), v
    if inst.has_releases:
        v["parallel-shifted"] = solve_method(inst, "parallel-lp").objective
        assert _leq(v["parallel"], v["parallel-shifted"]), v
        assert _leq(v["parallel-shifted"], v["opt"]), v
    return v


def _observe_chain(prop: str, v: dict[str, float]) -> None:
    """One row per link of the chain, so the table shows how tight each link was."""
    links = ["dual", "parallel", "lp-ov", "lp-ov-binary", "opt", "slotted"]
    for a, b in itertools.pairwise([k for k in links if k in v]):
        summary.observe(
            f"{prop}: {a} ≤ {b}",
            algorithm=a,
            ratio=v[a] / v[b] if v[b] > 0 else None,
            limit=v[b],
            value=v[a],
            bound=f"{a} ≤ {b}",
        )


@st.composite
def _integral_zero_release(draw: st.DrawFn) -> cl.Instance:
    return draw(
        instances(
            max_ports=3,
            max_coflows=4,
            max_flows_per_coflow=2,
            integral=True,
            releases=False,
        ).filter(lambda i: float(i.flow_size.sum()) <= 24)
    )


@examples(ci=10, thorough=300)
@given(_integral_zero_release())
def test_relaxation_chain_zero_release(inst):
    """P2 (docs/theory.md#primal-dual, #time-models-1.3): dual(PD) ≤ parallel-LP ≤ LP-OV ≤
    LP-OV-binary = OPT_COS (enumerated over orders) ≤ OPT_fluid ≤ OPT_slotted, zero release,
    integral data."""
    try:
        v = check_chain(inst, slotted=True)
    except DECLINED:
        summary.declined(PROP_P2, "chain")
        assume(False)
        return
    _observe_chain(PROP_P2, v)


@examples(ci=10, thorough=300)
@given(instances(max_ports=3, max_coflows=4, max_flows_per_coflow=3, capacities=True))
def test_relaxation_chain_with_releases(inst):
    """P2 with release dates and capacities (module docstring): dual(PD) ≤ parallel-LP
    (plain, r(S) = 0) ≤ LP-OV ≤ LP-OV-binary = min over orders (its docstring) ≤ OPT_fluid, and
    plain parallel-LP ≤ release-shifted parallel-LP ≤ OPT_fluid."""
    try:
        v = check_chain(inst, slotted=False)
    except DECLINED:
        summary.declined(PROP_P2R, "chain")
        assume(False)
        return
    _observe_chain(PROP_P2R, v)


# ---------------------------------------------------------------- bug injection
def test_injected_bound_above_opt_is_caught(monkeypatch):
    """Bug injection (bounds family): ``bound-release-rho`` patched to count ρ twice (ingress
    plus egress bottleneck, a plausible slip) exceeds OPT on generated instances, and P1
    fails."""
    bounds = import_module("coflowlab.formulations.bounds")
    original = bounds.bound_release_rho

    def doubled(inst, **kwargs):
        sol = original(inst, **kwargs)
        extra = float(np.dot(inst.coflow_weight, inst.bottleneck))
        return dataclasses.replace(sol, objective=sol.objective + extra)

    monkeypatch.setattr(bounds, "bound_release_rho", doubled)
    (broken,) = [a for a in algorithms.lower_bounds() if a.name == "bound-release-rho"]

    @settings(max_examples=30, database=None, derandomize=True, phases=_NO_SHRINK)
    @given(instances(max_ports=2, max_coflows=3, max_flows_per_coflow=2))
    def prop(inst):
        check_bound_below_opt(inst, broken)

    with pytest.raises(AssertionError):
        prop()


def test_injected_inflated_lp_ov_breaks_the_chain(monkeypatch):
    """Bug injection (bounds family): LP-OV inflated by 10% (e.g. a port row double-counting the
    coflow's own time) breaks the chain P2 on instance I4 (docs/theory.md#instances), where every
    LP equals OPT."""
    lp_ov = import_module("coflowlab.formulations.lp_ov")
    original = lp_ov.solve_lp_ov

    def inflated(inst, **kwargs):
        sol = original(inst, **kwargs)
        return dataclasses.replace(sol, objective=1.1 * sol.objective)

    monkeypatch.setattr(lp_ov, "solve_lp_ov", inflated)
    # Instance I4 (docs/theory.md#instances): OPT = 4 and every LP = 4, so a 10% inflation
    # breaks lp-ov ≤ lp-ov-binary.
    inst = cl.Instance.from_matrices(
        [[[1.0, 0.0], [0.0, 1.0]], [[0.0, 1.0], [0.0, 0.0]], [[0.0, 0.0], [1.0, 0.0]]]
    )
    with pytest.raises(AssertionError):
        check_chain(inst, slotted=True)
