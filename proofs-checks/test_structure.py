"""Structure: facts of the model that pin down values exactly (docs/theory.md#basic-facts (F1–F2),
#cos, #properties P7–P11), over every registered algorithm they apply to (the catalogue of
``algorithms.py``).

Each property is a plain ``check_*`` function the ``@given`` test calls, so the bug-injection
test reuses it. Values are compared with the relative tolerance ``RTOL`` (solver tolerance,
``coflowlab.solution.OBJECTIVE_RTOL`` = 1e-6, widened to 1e-5 for LP values).
"""

from __future__ import annotations

import algorithms
import numpy as np
import pytest
import summary
from hypothesis import given
from hypothesis import strategies as st
from profiles import examples
from strategies import matrix_instances, small_instances

import coflowlab as cl
from coflowlab.formulations import solve_method
from coflowlab.formulations.bounds import smith_rule

RTOL = 1e-5

# P7 (F1): which registered algorithms claim that one coflow alone finishes at r + ρ.
# Exact methods prove it; QSZ schedules each group in ρ slots by König/BvN
# (tests/approximations/test_qsz.py::test_one_coflow_gives_rho, release rounded up to a slot);
# the clairvoyant MADD policies are the set of tests/heuristics/test_registry.py
# (CLAIRVOYANT_WORK_CONSERVING without pfp, which is not coflow-aware and takes 6 > ρ = 4 on
# thesis Fig. 3.2). Greedy-rate order methods are work conserving but NOT ρ on one coflow
# (counterexample: one coflow [(0,2,4),(0,1,5),(1,0,4),(2,2,1),(0,2,1),(1,0,2),(1,1,3)] on 3
# ports, ρ = 10, greedy gives 12): for them only F5's bound r + max_e(L_in + L_out) holds.
# Alone, HUG, DRF and Coflex give the coflow progress P* = 1 on its bottleneck (each flow at
# size / ρ, as MADD does), so they also finish at ρ.
RHO_EXACT = {
    "qsz",
    "qsz-random",
    "varys",
    "scf",
    "ncf",
    "tcf",
    "fifo",
    "hug",
    "hug-cooperative",
    "drf",
    "coflex",
    # MADD alone (g = ρ); the fair leftover cannot raise a flow through the full bottleneck
    "yosemite",
    "yosemite-offline",
}
GREEDY_F5 = {
    "primal-dual",
    "sincronia",
    "lp-ov-ls",
    "order-fifo",
    "order-scf",
    "order-ncf",
    "order-tcf",
    "order-sebf",
    "order-smith",
    "sincronia-online",  # greedy by default; its epochs do not change F5 on one coflow
}
# Only the floor w (r + ρ) is claimed (F3): stretched LP schedules, non-clairvoyant or
# per-flow policies, deadline admission.
FLOOR_ONLY = {
    "alpha-point",
    "alpha-point-derandomized",
    "fair",
    "pfp",
    "fifo-lm",
    "varys-deadline",
    "aalo",
    "aalo-uncoordinated",
    "deadline-fluid",
    "deadline-slotted",
    "ps-p",  # equal split per link among coflows, then work conservation within the coflow
    "coflex-naive",  # spare capped at α P*: alone it finishes at ρ / α
    "philae",
    "philae-oracle",
    "coda",
}
# Order-based fluid schedules whose order is a function of ratios of sizes (scale-free):
# P10 scaling applies to them. lp-ov-ls is excluded: its order comes from an LP optimum, and
# alternative optima after scaling may order differently (documented tie exception).
# sincronia-online is excluded: its epochs are fixed lengths of time, not scaled with the sizes.
SCALE_FREE_ORDERS = GREEDY_F5 - {"lp-ov-ls", "sincronia-online"}


def _value(result, inst: cl.Instance) -> float:
    if hasattr(result, "objective"):
        return float(result.objective)
    return float(np.dot(inst.coflow_weight, result.coflow_completion))


def _opt(inst: cl.Instance) -> float:
    sol = solve_method(inst, "exact-fluid")
    assert sol.status.value == "optimal", sol.status
    return float(sol.objective)


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= RTOL * max(1.0, abs(a), abs(b))


def test_every_scheduler_is_classified_for_p7():
    """Every registered scheduler is placed in one P7 class above (a new algorithm must be
    classified here: its docstring decides whether it claims ρ on one coflow)."""
    names = {a.name for a in algorithms.schedulers()}
    exact = {a.name for a in algorithms.exact_methods()}
    assert names - exact <= RHO_EXACT | GREEDY_F5 | FLOOR_ONLY, (
        names - exact - RHO_EXACT - GREEDY_F5 - FLOOR_ONLY
    )


# ---------------------------------------------------------------------- P7: one coflow
def check_one_coflow(alg, inst: cl.Instance) -> tuple[float, float]:
    """One coflow: value = w(r + ρ) for exact methods and RHO_EXACT (slotted: ⌈r⌉), between
    w(r + ρ) and w(r + max_e(L_in(e) + L_out(e))) for greedy orders (F5), ≥ w(r + ρ) always."""
    w, rho = float(inst.coflow_weight[0]), float(inst.bottleneck[0])
    r = float(inst.coflow_release[0])
    if alg.model.value == "slotted":
        r = float(np.ceil(r))
    value = _value(alg.run(inst), inst)
    floor = w * (r + rho)
    assert value >= floor - RTOL * max(1.0, floor), (value, floor)
    if (alg.kind is not None and alg.kind.value == "exact") or alg.name in RHO_EXACT:
        assert _close(value, floor), (value, floor)
        return value, floor
    if alg.name in GREEDY_F5:
        pt = inst.port_time[0]
        m = inst.num_ports
        f5 = max(pt[s] + pt[m + d] for s, d in zip(inst.flow_src, inst.flow_dst, strict=True))
        assert value <= w * (r + f5) * (1 + RTOL) + RTOL, (value, w * (r + f5))
        return value, w * (r + f5)
    return value, floor


@pytest.mark.parametrize(
    "alg", [a for a in algorithms.schedulers() if a.name != "exact-slotted"], ids=str
)
@examples(ci=8, thorough=400)
@given(inst=matrix_instances(max_ports=4, max_coflows=1, density=0.5, releases=True))
def test_one_coflow_costs_w_rho(alg, inst):
    """P7 / F1 (docs/theory.md#basic-facts; Chowdhury thesis Eq. 4.1, BvN): one coflow alone costs
    exactly w(r + ρ) for every scheduler that claims it; F3 floor and F5 ceiling for the others."""
    try:
        value, limit = check_one_coflow(alg, inst)
    except algorithms.DECLINED:
        summary.declined("P7 one coflow = w(r+ρ)", alg.name)
        return
    summary.observe(
        "P7 one coflow = w(r+ρ)",
        algorithm=alg.name,
        ratio=value / limit if limit else None,
        bound="= w(r+ρ)",
    )


@examples(ci=5, thorough=100)
@given(inst=matrix_instances(max_ports=2, max_coflows=1, density=0.5, max_size=3, releases=True))
def test_one_coflow_exact_slotted(inst):
    """P7 / F1 in the slotted model (König edge colouring): exact-slotted = w(⌈r⌉ + ρ)."""
    alg = next(a for a in algorithms.exact_methods() if a.name == "exact-slotted")
    value, limit = check_one_coflow(alg, inst)
    summary.observe(
        "P7 one coflow = w(r+ρ)", algorithm=alg.name, ratio=value / limit if limit else None
    )


# ---------------------------------------------------------------------- F2: one port
def check_single_port(inst: cl.Instance) -> None:
    """m = 1, zero releases: exact-fluid = primal-dual = Smith's rule optimum on p = ρ."""
    smith, _ = smith_rule(np.asarray(inst.bottleneck), np.asarray(inst.coflow_weight))
    opt = _opt(inst)
    pd = _value(algorithms_by_name()["primal-dual"].run(inst), inst)
    assert _close(opt, smith), (opt, smith)
    assert _close(pd, smith), (pd, smith)


def algorithms_by_name() -> dict[str, algorithms.Algorithm]:
    return {a.name: a for a in algorithms.schedulers()}


@examples(ci=15, thorough=500)
@given(inst=matrix_instances(max_ports=1, max_coflows=5, integral=False, capacities=True))
def test_single_port_is_smith(inst):
    """F2 / P8 (docs/theory.md#basic-facts; Smith 1956, 1||ΣwC): on one port the fluid optimum and
    the primal-dual order's schedule both equal Smith's WSPT optimum."""
    check_single_port(inst)
    summary.observe("F2 one port: OPT = PD = Smith", algorithm="exact-fluid,primal-dual")


# ---------------------------------------------------------------------- P9: diagonal = COS
def check_diagonal(inst: cl.Instance) -> tuple[float, float]:
    """Diagonal, zero releases: exact fluid OPT = lp-ov-binary (COS OPT) and PD ≤ 2·OPT."""
    opt = _opt(inst)
    cos = float(solve_method(inst, "lp-ov-binary").objective)
    assert _close(opt, cos), (opt, cos)
    pd = _value(algorithms_by_name()["primal-dual"].run(inst), inst)
    assert pd <= 2 * opt * (1 + RTOL) + RTOL, (pd, opt)
    return pd, opt


@examples(ci=12, thorough=400)
@given(inst=small_instances(diagonal=True, density=0.6))
def test_diagonal_is_concurrent_open_shop(inst):
    """P9 (docs/theory.md#cos, #primal-dual, #lp-ov; Mastrolilli et al. 2010): diagonal coflows are
    exactly the concurrent open shop: fluid OPT = OPT_COS (lp-ov-binary), and PD ≤ 2·OPT."""
    pd, opt = check_diagonal(inst)
    summary.observe(
        "P9 diagonal: OPT = COS, PD ≤ 2·OPT",
        ratio=pd / opt if opt else None,
        limit=2 * opt,
        value=pd,
        bound="PD ≤ 2·OPT",
    )


# ---------------------------------------------------------------------- P10: scaling
def check_scaling(inst: cl.Instance, c: float, names) -> None:
    """Sizes × c (zero releases): exact OPT × c and every scale-free order's cost × c."""
    scaled = inst.scale_sizes(c)
    assert _close(_opt(scaled), c * _opt(inst))
    algs = algorithms_by_name()
    for name in names:
        a, b = _value(algs[name].run(inst), inst), _value(algs[name].run(scaled), scaled)
        assert _close(b, c * a), (name, a, b, c)


@examples(ci=10, thorough=300)
@given(inst=small_instances(integral=False), c=st.sampled_from([0.5, 2.0, 3.0, 10.0]))
def test_scaling_sizes_scales_values(inst, c):
    """P10 (docs/theory.md#properties): scaling every demand by c scales OPT and every order-based
    fluid schedule by c (zero releases; capacities unchanged)."""
    check_scaling(inst, c, sorted(SCALE_FREE_ORDERS))
    summary.observe("P10 scaling × c", algorithm="exact-fluid+orders")


# ---------------------------------------------------------------------- P10: relabelling
def _relabel(inst: cl.Instance, pin, pout, transpose: bool) -> cl.Instance:
    src, dst = np.asarray(pin)[inst.flow_src], np.asarray(pout)[inst.flow_dst]
    cin = np.empty(inst.num_ports)
    cout = np.empty(inst.num_ports)
    cin[pin] = inst.fabric.ingress_capacity
    cout[pout] = inst.fabric.egress_capacity
    if transpose:
        src, dst, cin, cout = dst, src, cout, cin
    return inst.replace(flow_src=src, flow_dst=dst, fabric=cl.Fabric(inst.num_ports, cin, cout))


def check_invariance(inst: cl.Instance, other: cl.Instance, bound_names) -> None:
    """Exact OPT and every lower bound agree on the two instances."""
    assert _close(_opt(inst), _opt(other)), (_opt(inst), _opt(other))
    for name in bound_names:
        a = float(solve_method(inst, name).objective)
        b = float(solve_method(other, name).objective)
        assert _close(a, b), (name, a, b)


_BOUNDS = [a.name for a in algorithms.lower_bounds()]


@examples(ci=10, thorough=300)
@given(data=st.data(), inst=small_instances(releases=True, capacities=True))
def test_relabelling_ports_permuting_coflows_transposing_change_nothing(data, inst):
    """P10 (docs/theory.md#properties): relabelling ingress and egress ports, permuting coflows
    (with their weights and releases) and transposing every demand matrix (swapping ingress and
    egress) leave exact OPT and every registered lower bound unchanged (up to RTOL). Order-based
    algorithms break ties by index, so they are not compared (documented exception)."""
    m, n = inst.num_ports, inst.num_coflows
    pin = data.draw(st.permutations(range(m)))
    pout = data.draw(st.permutations(range(m)))
    perm = data.draw(st.permutations(range(n)))
    transpose = data.draw(st.booleans())
    other = _relabel(inst, pin, pout, transpose).subset(perm)
    try:
        check_invariance(inst, other, _BOUNDS)
    except algorithms.DECLINED:
        summary.declined("P10 relabel/permute/transpose", "bounds")
        return
    summary.observe("P10 relabel/permute/transpose", algorithm="exact-fluid+bounds")


# ---------------------------------------------------------------------- P11: monotonicity
def check_monotone(inst: cl.Instance, k: int, e: int, factor: float) -> None:
    """Removing coflow k, or shrinking flow e by factor < 1, never increases fluid OPT."""
    opt = _opt(inst)
    if inst.num_coflows > 1:
        rest = inst.subset([j for j in range(inst.num_coflows) if j != k])
        assert _opt(rest) <= opt * (1 + RTOL) + RTOL
    sizes = inst.flow_size.copy()
    sizes[e] *= factor
    assert _opt(inst.replace(flow_size=sizes)) <= opt * (1 + RTOL) + RTOL


@examples(ci=10, thorough=300)
@given(
    data=st.data(), inst=small_instances(releases=True), factor=st.sampled_from([0.1, 0.5, 0.9])
)
def test_opt_is_monotone(data, inst, factor):
    """P11 (docs/theory.md#exact): exact fluid OPT never increases when a coflow is removed or one
    flow shrinks."""
    k = data.draw(st.integers(0, inst.num_coflows - 1))
    e = data.draw(st.integers(0, inst.num_flows - 1))
    check_monotone(inst, k, e, factor)
    summary.observe("P11 OPT monotone", algorithm="exact-fluid")


# ---------------------------------------------------------------------- bug injection
def test_injected_bug_port_label_dependence_is_caught(monkeypatch):
    """Bug injection: an exact method that adds a small term depending on port labels
    (Σ src · 1e-3) fails :func:`check_invariance` under relabelling."""
    import coflowlab.formulations as forms

    inst = cl.Instance.from_coflows(
        [cl.Coflow([(0, 1, 2.0), (1, 1, 1.0)]), cl.Coflow([(1, 0, 3.0)], weight=2.0)], 2
    )
    other = _relabel(inst, [1, 0], [0, 1], False)
    check_invariance(inst, other, [])
    real = forms.solve_method

    def broken(instance, method, **kw):
        sol = real(instance, method, **kw)
        if method == "exact-fluid":
            object.__setattr__(
                sol, "objective", sol.objective + 1e-3 * float(instance.flow_src.sum())
            )
        return sol

    monkeypatch.setitem(globals(), "solve_method", broken)
    with pytest.raises(AssertionError):
        check_invariance(inst, other, [])
