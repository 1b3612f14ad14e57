"""Tests of Sincronia's online scheduler (``coflowlab.heuristics.sincronia_online``) and its
admission LP (``coflowlab.formulations.sincronia_admission``).

Hand-derived cases (docs/sincronia-online.md): the epoch grid of both timings, the admission LP
and its rounding at 1/2, resets after ``max_epochs``. Invariants on generated instances: the
order of the admitted coflows is the offline BSSI order of their remaining bytes (recomputed
from the verified schedule through :func:`coflowlab.approximations.primal_dual.primal_dual_order`
on a sub-instance); every coflow finishes within the work-conservation bound; with every release
at 0 and one epoch covering everything the schedule is offline Sincronia's. Equivalence: the
compiled greedy gives, at every event, the rates of the plain NumPy implementation it replaced
(kept here as the reference, on :class:`coflowlab.list_scheduling.StaticPriority`).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose, assert_equal

import coflowlab as cl
from coflowlab.approximations import solve_sincronia
from coflowlab.approximations.primal_dual import primal_dual_order
from coflowlab.exceptions import SolverError
from coflowlab.formulations import sincronia_admission
from coflowlab.formulations.sincronia_admission import admission_model, solve_admission
from coflowlab.heuristics import make_policy, sincronia_online
from coflowlab.heuristics.sincronia_online import SincroniaOnline, epoch_at
from coflowlab.instances import fb_like, find_fb_trace, read_benchmark, uniform
from coflowlab.list_scheduling import StaticPriority
from coflowlab.policy import ClairvoyantState, Decision, InstanceView, ObservedState
from coflowlab.solvers import SolveResult, SolveStatus


def one_port(sizes, weights=None, releases=None) -> cl.Instance:
    """Coflows of one flow each on the single pair 0 → 0 (a one-machine instance)."""
    n = len(sizes)
    return cl.Instance(
        1,
        np.arange(n),
        np.zeros(n, dtype=int),
        np.zeros(n, dtype=int),
        np.asarray(sizes, dtype=float),
        coflow_weight=weights,
        coflow_release=releases,
    )


def run(inst: cl.Instance, **params) -> tuple[cl.SimulationResult, SincroniaOnline]:
    policy = SincroniaOnline(**params)
    result = cl.simulate(inst, policy, record=True)
    report = cl.verify(inst, result.schedule)
    assert report.feasible, report.summary()
    assert_allclose(report.coflow_completion, result.coflow_completion, rtol=0, atol=1e-9)
    return result, policy


# ---------------------------------------------------------------------- the epoch grid
def test_doubling_grid_by_hand():
    """Tests that the doubling grid has epochs of length base·2^{k-1} back to back, a budget
    equal to the length, candidates released by the start, and resets after max_epochs."""
    grid = [epoch_at(t, max_epochs=3, base=0.5) for t in (0.0, 0.4, 0.5, 1.4, 1.5, 3.4, 3.5, 4.0)]
    assert_equal(
        [(e.cycle, e.index, e.start, e.end, e.budget, e.threshold) for e in grid],
        [
            (0, 1, 0.0, 0.5, 0.5, 0.0),
            (0, 1, 0.0, 0.5, 0.5, 0.0),
            (0, 2, 0.5, 1.5, 1.0, 0.5),
            (0, 2, 0.5, 1.5, 1.0, 0.5),
            (0, 3, 1.5, 3.5, 2.0, 1.5),
            (0, 3, 1.5, 3.5, 2.0, 1.5),
            (1, 1, 3.5, 4.0, 0.5, 3.5),
            (1, 2, 4.0, 5.0, 1.0, 4.0),
        ],
    )


def test_public_grid_by_hand():
    """Tests the public simulator's grid (read from its main loop): [0, 2b), then
    [2^{k-1} b, 2^k b); budget b, then half the length; threshold τ_{k-1} plus half of every
    completed cycle (2^{K-1} b each)."""
    grid = [epoch_at(t, max_epochs=2, timing="public") for t in (0.0, 2.0, 3.9, 4.0, 6.0, 8.0)]
    assert_equal(
        [(e.cycle, e.index, e.start, e.end, e.budget, e.threshold) for e in grid],
        [
            (0, 1, 0.0, 2.0, 1.0, 0.0),
            (0, 2, 2.0, 4.0, 1.0, 1.0),
            (0, 2, 2.0, 4.0, 1.0, 1.0),
            (1, 1, 4.0, 6.0, 1.0, 2.0),
            (1, 2, 6.0, 8.0, 1.0, 3.0),
            (2, 1, 8.0, 10.0, 1.0, 4.0),
        ],
    )
    four = [epoch_at(t, max_epochs=4, timing="public") for t in (4.0, 8.0, 16.0)]
    assert_equal(
        [(e.start, e.end, e.budget, e.threshold) for e in four],
        [
            (4.0, 8.0, 2.0, 2.0),
            (8.0, 16.0, 4.0, 4.0),
            (16.0, 18.0, 1.0, 8.0),
        ],
    )


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"max_epochs": 0}, "max_epochs"),
        ({"max_epochs": 61}, "max_epochs"),
        ({"max_epochs": 2.5}, "max_epochs"),
        ({"base": 0.0}, "base"),
        ({"base": float("inf")}, "base"),
        ({"timing": "paper"}, "timing"),
        ({"allocation": "fair"}, "allocation"),
        ({"order_sizes": "current"}, "order_sizes"),
        ({"offset": -1.0}, "offset"),
        ({"lp_solver": "xpress"}, "lp_solver"),
    ],
)
def test_bad_parameters_are_named(kwargs, field):
    """Tests that each invalid constructor argument raises a ValueError naming it."""
    with pytest.raises(ValueError, match=field):
        SincroniaOnline(**kwargs)


def test_epoch_at_rejects_bad_time():
    """Tests that a negative or non-finite time is refused."""
    for t in (-1.0, float("nan")):
        with pytest.raises(ValueError, match="t: must be"):
            epoch_at(t)


# ---------------------------------------------------------------------- the admission LP
def test_admission_lp_fractional_knapsack_by_hand():
    """Tests the LP on one port (ingress = egress load): sizes 1, 2, 3, weights 3, 2, 1.
    Budget 2: x = (1, 1/2, 0), the second admitted at exactly 1/2; budget 1.8: x = (1, 0.4, 0),
    the second left out; the objective is the fractional weight left out."""
    p = [[1, 1], [2, 2], [3, 3]]
    adm = solve_admission(p, [3, 2, 1], 2.0)
    assert_allclose(adm.x, [1.0, 0.5, 0.0], atol=1e-9)
    assert_equal(adm.admitted, [True, True, False])
    assert_allclose(adm.objective, 2 * 0.5 + 1.0, atol=1e-9)
    adm = solve_admission(p, [3, 2, 1], 1.8)
    assert_allclose(adm.x, [1.0, 0.4, 0.0], atol=1e-9)
    assert_equal(adm.admitted, [True, False, False])


def test_admission_lp_couples_ports_by_hand():
    """Tests two coflows sharing ingress 0 but not their egress: a (2 on in0, 2 on out0),
    b (2 on in0, 1 on out1); budget 3 and weights 1, 2: b first (x_b = 1), a gets the 1 left
    on in0 (x_a = 1/2, admitted)."""
    p = [[2, 0, 2, 0], [2, 0, 0, 1]]
    adm = solve_admission(p, [1, 2], 3.0)
    assert_allclose(adm.x, [0.5, 1.0], atol=1e-9)
    assert_equal(adm.admitted, [True, True])
    model = admission_model(p, [1, 2], 3.0)
    assert_equal((model.num_vars, model.num_rows), (2, 3))  # in0, out0, out1 (in1 unused)


@pytest.mark.parametrize(
    ("p", "w", "budget", "match"),
    [
        ([[1.0, -1.0]], [1.0], 1.0, r"port_time\[0, 1\]"),
        ([[1.0, np.nan]], [1.0], 1.0, r"port_time\[0, 1\]"),
        ([[1.0, 1.0]], [-2.0], 1.0, r"weight\[0\]"),
        ([[1.0, 1.0]], [1.0, 2.0], 1.0, "weight: has shape"),
        ([1.0, 1.0], [1.0], 1.0, "port_time: must be"),
        ([[1.0, 1.0]], [1.0], 0.0, "budget"),
    ],
)
def test_admission_rejects_bad_input(p, w, budget, match):
    """Tests that bad LP data raise a ValueError naming the field and index."""
    with pytest.raises(ValueError, match=match):
        solve_admission(p, w, budget)


LAYER = cl.SolverOptions(mip_gap=0.5)
"""HiGHS through the solver layer (``solve``) with the default path's settings: ``mip_gap``
applies to MIPs only, but any non-default options leave the direct path."""


def test_solver_failure_is_a_clear_error(monkeypatch):
    """Tests that a solver that does not prove an optimum gives a SolverError naming the
    solver's status, and that the online scheduler adds the epoch and the time."""

    def failing(model, options=None, **kw):
        return SolveResult(SolveStatus.ERROR, np.nan, np.nan, np.nan, 0.0, None, "highs", "boom")

    def failing_direct(p, w, budget):
        raise SolverError("sincronia admission LP: HiGHS returned 'boom', not 'Optimal'")

    monkeypatch.setattr(sincronia_admission, "solve", failing)
    with pytest.raises(SolverError, match=r"1 candidates.*'error'.*boom"):
        solve_admission([[1.0, 1.0]], [1.0], 1.0, options=LAYER)
    monkeypatch.setattr(sincronia_admission, "_solve_direct", failing_direct)
    monkeypatch.setattr(sincronia_admission, "_unique_vertex", lambda p, w, b: None)
    with pytest.raises(SolverError, match=r"epoch 1 of cycle 0 at t=0.0.*boom"):
        cl.simulate(one_port([1.0, 2.0]), SincroniaOnline())


def _random_lp(rng: np.random.Generator, trial: int) -> tuple[np.ndarray, np.ndarray, float]:
    """A random admission LP with unused ports, zero entries, tied ratios and many
    fractional values (real-valued every third trial)."""
    k, ports = int(rng.integers(1, 25)), int(rng.integers(1, 9))
    p = rng.integers(0, 4, size=(k, 2 * ports)).astype(float)
    p[:, rng.random(2 * ports) < 0.2] = 0.0  # unused ports
    if trial % 3 == 0:
        p = p * rng.random((k, 1))  # real-valued
    w = rng.integers(1, 4, size=k).astype(float)
    return p, w, float(rng.uniform(0.5, 6.0))


def _trace_like_lp(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, float]:
    """An admission LP shaped like the Facebook trace's: 2-11 candidates over 150 + 150
    ports, each on a random share of them with real-valued loads spread over four orders of
    magnitude, unit or integer weights, a budget around the typical load."""
    k, m = int(rng.integers(2, 12)), 150
    p = np.exp(rng.normal(0.0, 2.0, size=(k, 2 * m)))
    p[rng.random((k, 2 * m)) < rng.uniform(0.3, 0.95)] = 0.0
    w = np.ones(k) if rng.random() < 0.7 else rng.integers(1, 5, size=k).astype(float)
    return p, w, float(np.median(p[p > 0]) * rng.uniform(0.2, 5.0))


def test_direct_highs_path_equals_solver_layer():
    """Tests that the admission LP handed to HiGHS directly (default settings) gives the
    solver layer's answer bit for bit: x and objective, on random LPs with unused ports,
    zero entries, tied ratios and many fractional values."""
    rng = np.random.default_rng(7)
    for trial in range(300):
        p, w, budget = _random_lp(rng, trial)
        direct = solve_admission(p, w, budget)
        layer = solve_admission(p, w, budget, options=LAYER)
        assert_equal(direct.x, layer.x, err_msg=f"trial {trial}")
        assert direct.objective == layer.objective, trial
        assert_equal(direct.admitted, layer.admitted)


@pytest.mark.parametrize("kind", ["random", "trace-like"])
def test_vertex_path_admits_what_highs_admits(kind):
    """Tests that the ``vertex=True`` path (the policy's ``vertex_lps=True``: the split LPs'
    and the proved-unique vertices' exact answers, HiGHS otherwise) admits exactly the
    coflows HiGHS admits, on random LPs with ties (several optima: HiGHS decides) and on
    LPs shaped like the trace's; that an answer found without HiGHS is feasible, at least
    as good as HiGHS's, within HiGHS's tolerance of its x in nearly every LP; and that the
    vertex path answers most LPs."""
    rng = np.random.default_rng(11)
    methods: dict[str, int] = {}
    far = 0
    for trial in range(600):
        p, w, budget = _random_lp(rng, trial) if kind == "random" else _trace_like_lp(rng)
        got = solve_admission(p, w, budget, vertex=True)
        layer = solve_admission(p, w, budget, options=LAYER)
        methods[got.method] = methods.get(got.method, 0) + 1
        assert_equal(got.admitted, layer.admitted, err_msg=f"trial {trial}")
        if got.method == "highs":
            assert_equal(got.x, layer.x)
            continue
        assert np.all(p.T @ got.x <= budget * (1 + 1e-9)), trial
        assert got.objective <= layer.objective + 1e-9 * w.sum(), trial
        far += bool(np.max(np.abs(got.x - layer.x)) > 1e-6)
    assert methods.get("vertex", 0) > 200, methods
    assert far <= 6, far  # HiGHS stops within its tolerances, far from x where it is flat


@pytest.mark.parametrize("seed", range(4))
def test_vertex_lps_change_no_schedule(seed, monkeypatch):
    """Tests that ``vertex_lps=True`` admits the same coflows at every epoch as the default
    (every LP that does not split solved by HiGHS), hence the same schedule bit for bit,
    with some epochs answered without HiGHS; and that the parameter is checked."""
    inst = fb_like(40, num_ports=8, seed=seed)
    answered = []
    unique_vertex = sincronia_admission._unique_vertex

    def counting(p, w, b):
        x = unique_vertex(p, w, b)
        answered.append(x is not None)
        return x

    monkeypatch.setattr(sincronia_admission, "_unique_vertex", counting)
    runs = []
    for vertex_lps in (False, True):
        pol = SincroniaOnline(vertex_lps=vertex_lps)
        res = cl.simulate(inst, pol, engine="flows")
        assert res.verified
        runs.append((pol, res))
    (ref, a), (fast, b) = runs
    assert [e.admitted for e in fast.log] == [e.admitted for e in ref.log]
    assert_equal(b.coflow_completion, a.coflow_completion)
    assert_equal(b.schedule.rate, a.schedule.rate)
    assert sum(answered) > 0, "no LP answered without HiGHS"
    with pytest.raises(ValueError, match="vertex_lps"):
        SincroniaOnline(vertex_lps="yes")  # type: ignore[arg-type]


def test_unique_vertex_by_hand():
    """Tests the vertex path on LPs whose answer is known: one port holding one and a half
    candidates (the heavier whole, then half: unique), the same with equal weights (every
    split is optimal: no answer), a zero weight (that x is free: no answer), and
    solve_admission taking its answer only when asked and handing a value within
    VERTEX_MARGIN of 1/2 to HiGHS."""
    p = [[2.0, 2.0], [2.0, 2.0]]
    assert_equal(sincronia_admission.unique_vertex(p, [2.0, 1.0], 3.0), [1.0, 0.5])
    assert sincronia_admission.unique_vertex(p, [1.0, 1.0], 3.0) is None
    assert sincronia_admission.unique_vertex([[2.0, 2.0], [1.0, 1.0]], [1.0, 0.0], 2.5) is None
    adm = solve_admission(p, [2.0, 1.0], 3.0, vertex=True)
    assert adm.method == "highs" and adm.admitted.tolist() == [True, True]
    lp = ([[2.0, 0.0, 2.0, 0.0], [2.0, 0.0, 0.0, 1.0]], [1.0, 2.0], 2.5)
    assert solve_admission(*lp).method == "highs"  # only when asked
    adm = solve_admission(*lp, vertex=True)
    assert adm.method == "vertex"
    assert_allclose(adm.x, [0.25, 1.0], rtol=0, atol=1e-12)
    assert_equal(adm.admitted, [False, True])


# ---------------------------------------------------------------------- hand-derived runs
def test_tail_by_slowdown_then_admission_by_hand():
    """Tests the docstring example, derived by hand: ports 0→0 and 1→1; c0 (size 1) fits
    epoch [0,1); c1 (20) and c2 (10) do not (x = 0, 0.1) and wait in the tail, smaller
    bottleneck first (c2); at 1 (budget 2) x_c2 = 2/9; at 3 (budget 4) x_c2 = 4/7 ≥ 1/2, admitted;
    c2 finishes at 10, c1 at 30 (c1 admitted at 15, 15 left, budget 16)."""
    inst = cl.Instance.from_coflows(
        [cl.Coflow([(0, 0, 1.0)]), cl.Coflow([(1, 1, 20.0)]), cl.Coflow([(1, 1, 10.0)])], 2
    )
    result, policy = run(inst)
    assert_allclose(result.coflow_completion, [1.0, 30.0, 10.0], atol=1e-9)
    log = policy.log
    assert_equal([r.epoch.start for r in log], [0.0, 1.0, 3.0, 7.0, 15.0])
    assert_equal([r.candidates for r in log], [(0, 1, 2), (1, 2), (1, 2), (1, 2), (1,)])
    assert_allclose(log[0].x, [1.0, 0.0, 0.1], atol=1e-9)
    assert_allclose(log[1].x, [0.0, 2 / 9], atol=1e-9)
    assert_allclose(log[2].x, [0.0, 4 / 7], atol=1e-9)
    assert_allclose(log[3].x, [0.25, 1.0], atol=1e-9)
    assert_equal([r.admitted for r in log], [(0,), (), (2,), (2,), (1,)])
    assert_equal([r.tail for r in log], [(2, 1), (2, 1), (1,), (1,), ()])


def test_rounding_at_one_half_admits_by_hand():
    """Tests that x = 1/2 admits. One port: a (4, w 1), b (1, w 1), c (3, w 1/2), all at 0.
    [0,1): x_b = 1, b done at 1; tail by bottleneck: c, a. [1,3), budget 2: x_a = 2/4 = 1/2
    (a's w/p = 1/4 beats c's 1/6): a admitted and served before c; 2 of a left at 3.
    [3,7), budget 4: x = (1, 2/3), both admitted, BSSI = Smith (a: 1/2, c: 1/6): a done at 5,
    c at 8. Had 1/2 not admitted, c (first in the tail) would run at 1 and a finish at 8."""
    inst = one_port([4.0, 1.0, 3.0], weights=[1.0, 1.0, 0.5])
    result, policy = run(inst)
    assert_allclose(result.coflow_completion, [5.0, 1.0, 8.0], atol=1e-9)
    log = policy.log
    assert_equal(
        [(r.epoch.start, r.admitted, r.tail) for r in log[:3]],
        [
            (0.0, (1,), (2, 0)),
            (1.0, (0,), (2,)),
            (3.0, (0, 2), ()),
        ],
    )
    assert_allclose(log[1].x, [0.5, 0.0], atol=1e-9)
    assert_allclose(log[2].x, [1.0, 2 / 3], atol=1e-9)


def test_reset_after_max_epochs_by_hand():
    """Tests resets: one flow of 10 alone. With max_epochs=2 the budgets go 1, 2, 1, 2, ...
    (epochs start at 0, 1, 3, 4, 6, 7, 9) and the flow is admitted only at 7 (3 left, x = 2/3)
    and 9; with max_epochs=8 they double (starts 0, 1, 3, 7; admitted at 3 with x = 4/7).
    Either way it is served at full rate and finishes at 10."""
    inst = one_port([10.0])
    result, policy = run(inst, max_epochs=2)
    assert_allclose(result.coflow_completion, [10.0], atol=1e-9)
    log = policy.log
    assert_equal([r.epoch.start for r in log], [0.0, 1.0, 3.0, 4.0, 6.0, 7.0, 9.0])
    assert_equal([r.epoch.budget for r in log], [1.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0])
    assert_allclose([r.x[0] for r in log], [0.1, 2 / 9, 1 / 7, 1 / 3, 1 / 4, 2 / 3, 1.0])
    assert_equal([len(r.admitted) for r in log], [0, 0, 0, 0, 0, 1, 1])
    result, policy = run(inst, max_epochs=8)
    assert_allclose(result.coflow_completion, [10.0], atol=1e-9)
    assert_equal([r.epoch.start for r in policy.log], [0.0, 1.0, 3.0, 7.0])
    assert_allclose([r.x[0] for r in policy.log], [0.1, 2 / 9, 4 / 7, 1.0])


def test_public_threshold_lags_by_hand():
    """Tests the public timing's lagging threshold: max_epochs=2, c0 (10 on 0→0) at 0, c1
    (4 on 1→1) at 3. Epochs start at 0, 2, 4, 6 with thresholds 0, 1, 2, 3: c1, released at 3,
    is not a candidate at 4 (threshold 2) but is at 6. At 4 (x_c0 = 6 left / budget 1) both are
    in the tail, by oracle / (4 + offset 2 − r): c1 4/3 before c0 10/6. c1 runs from 3 alone on
    its ports, so it finishes at 7, and c0 at 10."""
    inst = cl.Instance.from_coflows(
        [cl.Coflow([(0, 0, 10.0)]), cl.Coflow([(1, 1, 4.0)], release=3.0)], 2
    )
    result, policy = run(inst, max_epochs=2, timing="public")
    assert_allclose(result.coflow_completion, [10.0, 7.0], atol=1e-9)
    log = policy.log
    assert_equal([r.epoch.start for r in log[:4]], [0.0, 2.0, 4.0, 6.0])
    assert_equal([r.epoch.threshold for r in log[:4]], [0.0, 1.0, 2.0, 3.0])
    assert_equal([r.candidates for r in log[:4]], [(0,), (0,), (0,), (0, 1)])
    assert_equal(log[2].tail, (1, 0))


# ---------------------------------------------------------------------- invariants
def _sent_by(schedule: cl.FluidSchedule, num_flows: int, t: float) -> np.ndarray:
    """Bytes each flow sent before ``t``, integrated from the schedule's records."""
    order = np.lexsort((schedule.time, schedule.flow))
    time, flow, rate = schedule.time[order], schedule.flow[order], schedule.rate[order]
    nxt = np.append(time[1:], np.inf)
    nxt[np.append(flow[1:] != flow[:-1], True)] = np.inf
    span = np.clip(np.minimum(nxt, t) - time, 0.0, None)
    return np.bincount(flow, weights=rate * span, minlength=num_flows)


GENERATED = [
    (seed, ports, coflows, rate)
    for seed, ports, coflows, rate in [
        (1, 3, 6, 0.5),
        (2, 4, 8, 0.3),
        (3, 3, 10, 1.0),
        (4, 5, 8, 0.2),
        (5, 2, 6, 2.0),
    ]
]


@pytest.mark.parametrize(("seed", "ports", "coflows", "rate"), GENERATED)
def test_admitted_order_is_offline_bssi_of_the_admitted_set(seed, ports, coflows, rate):
    """Tests that at every epoch the admitted coflows are in the offline BSSI order of a
    sub-instance holding their remaining bytes at the epoch's start, recomputed from the
    verified schedule (not from the policy's state)."""
    inst = uniform(ports, coflows, release_rate=rate, weights=(1, 5), seed=seed)
    result, policy = run(inst)
    checked = 0
    for rec in policy.log:
        if len(rec.admitted) < 2:
            continue
        left = inst.flow_size - _sent_by(result.schedule, inst.num_flows, rec.time)
        flows = np.flatnonzero(np.isin(inst.flow_coflow, rec.admitted) & (left > 1e-9))
        if (left[flows] < 1e-3).any():
            continue  # a flow about to finish: its bytes are at the rounding scale
        new_index = {k: i for i, k in enumerate(rec.admitted)}
        sub = cl.Instance(
            inst.fabric,
            [new_index[int(k)] for k in inst.flow_coflow[flows]],
            inst.flow_src[flows],
            inst.flow_dst[flows],
            left[flows],
            coflow_weight=inst.coflow_weight[list(rec.admitted)],
            num_coflows=len(rec.admitted),
        )
        expected = [rec.admitted[i] for i in primal_dual_order(sub).order]
        assert_equal(rec.admitted, tuple(expected), err_msg=f"epoch at {rec.time}")
        checked += 1
    assert checked >= 1


@pytest.mark.parametrize("timing", ["doubling", "public"])
@pytest.mark.parametrize("allocation", ["greedy", "madd-exact", "madd"])
@pytest.mark.parametrize("max_epochs", [1, 2, 8])
def test_every_coflow_finishes_within_the_work_conservation_bound(timing, allocation, max_epochs):
    """Tests that every schedule verifies and every coflow finishes, whatever the resets.
    Greedy and MADD-exact are maximal at every instant (each flow has a saturated port), so a
    port pair (i, o) is never idle on both sides while a flow i → o waits: every flow released
    at r finishes by r + L_i/c_i + L_o/c_o, L the total bytes through each port. Sincronia's
    MADD may idle capacity until its next event, so only completion is checked for it."""
    for seed, ports, coflows, rate in GENERATED:
        inst = uniform(ports, coflows, release_rate=rate, weights=(1, 3), seed=seed)
        result, _ = run(inst, timing=timing, allocation=allocation, max_epochs=max_epochs)
        assert np.isfinite(result.flow_completion).all()
        if allocation == "madd":
            continue
        cap = inst.fabric.port_capacity
        load = inst.port_load.sum(axis=0) / cap
        m = inst.num_ports
        bound = inst.flow_release + load[inst.flow_src] + load[m + inst.flow_dst]
        excess = result.flow_completion - bound
        assert (excess <= 1e-9 * np.maximum(1.0, bound)).all(), excess.max()


@pytest.mark.parametrize("timing", ["doubling", "public"])
@pytest.mark.parametrize("allocation", ["greedy", "madd", "madd-exact"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_one_epoch_at_release_zero_is_offline_sincronia(timing, allocation, seed):
    """Tests that with every release at 0 and a first epoch whose budget exceeds every port's
    load (and whose end is after the last completion: the makespan is at most the sum of all
    loads), the LP admits every coflow (weights > 0: x = 1 is the unique optimum), BSSI orders
    them on their full sizes, and the schedule is offline Sincronia's with the same
    allocation."""
    inst = uniform(4, 7, weights=(1, 4), seed=seed)
    base = 2.0 * float(inst.port_load.sum())
    result, policy = run(inst, base=base, timing=timing, allocation=allocation)
    offline = solve_sincronia(inst, allocation=allocation)
    assert_equal(len(policy.log), 1)
    assert_equal(policy.log[0].admitted, offline.order)
    assert_allclose(result.coflow_completion, offline.completion_times, rtol=1e-9, atol=1e-9)


def test_original_sizes_order_differs_only_in_the_sizes_used():
    """Tests ``order_sizes="original"``: the admitted order is the BSSI order of the admitted
    coflows' original sizes (the instance's, through the offline ordering of a subset)."""
    inst = uniform(4, 10, release_rate=0.4, weights=(1, 5), seed=11)
    _, policy = run(inst, order_sizes="original")
    checked = 0
    for rec in policy.log:
        if len(rec.admitted) >= 2:
            sub = inst.subset(sorted(rec.admitted))
            expected = [sorted(rec.admitted)[i] for i in primal_dual_order(sub).order]
            assert_equal(rec.admitted, tuple(expected))
            checked += 1
    assert checked >= 1


def test_same_instance_same_schedule():
    """Tests determinism: two simulations give the same completion times, records and log."""
    inst = uniform(4, 10, release_rate=0.5, weights=(1, 5), seed=3)
    a, pa = run(inst, allocation="madd")
    b, pb = run(inst, allocation="madd")
    assert_equal(a.coflow_completion, b.coflow_completion)
    assert_equal(a.schedule.rate, b.schedule.rate)
    assert_equal(pa.log, pb.log)


def test_registered_with_the_paper_and_text_parameters():
    """Tests the registry entry (paper, family) and that text parameters convert."""
    entry = cl.REGISTRY["sincronia-online"]
    assert_equal((entry.paper.year, entry.paper.venue), (2018, "SIGCOMM"))
    assert entry.online
    policy = make_policy("sincronia-online", max_epochs="3", timing="public", offset="2.5")
    assert_equal((policy.max_epochs, policy.timing, policy.offset), (3, "public", 2.5))
    inst = one_port([4.0, 1.0, 3.0], weights=[1.0, 1.0, 0.5])
    assert_allclose(cl.run("sincronia-online", inst).raw.coflow_completion, [5.0, 1.0, 8.0])


# ---------------------------------------------------------------------- equivalence
class ReferenceSincroniaOnline(SincroniaOnline):
    """The NumPy implementation the compiled greedy replaced, kept as the reference: at every
    event it finds the epoch, lists the coflows present with ``np.unique`` over the active
    flows, and rates every active flow through :class:`StaticPriority` (a stable sort of the
    active flows by priority, then :func:`coflowlab.allocation.priority_greedy`, or MADD),
    rebuilt whenever the order changes."""

    def decide(self, state):
        t = float(state.time)
        epoch = epoch_at(t, max_epochs=self.max_epochs, base=self._base, timing=self.timing)
        present = np.unique(np.asarray(state.coflow, dtype=np.int64))
        current = self._epoch
        if current is None or (current.cycle, current.index) != (epoch.cycle, epoch.index):
            self._start_epoch(state, epoch, present)
            self._inner = None
        elif len(state.arrived):
            known = np.concatenate([self._admitted, self._tail])
            new = present[~np.isin(present, known)]
            if len(new):
                tail = np.concatenate([self._tail, new]).astype(np.int64)
                release = np.asarray(state.coflow_arrival, dtype=float)
                self._tail = self._slowdown_order(tail, release, t)
                self._inner = None
        if self._inner is None:
            self._inner = StaticPriority(self._priority(), self.allocation)
            self._inner.reset(self._view)
        inner = self._inner.decide(state)
        wake = epoch.end if inner.wakeup is None else min(epoch.end, float(inner.wakeup))
        return Decision(inner.rates, wakeup=wake, notify=inner.notify)


def _apply_decision(rate: np.ndarray, decision: Decision, flows: np.ndarray) -> None:
    """What the simulator does with a decision's rates (``None`` keeps them)."""
    if decision.rates is not None:
        rate[flows] = decision.rates
    elif decision.update is not None:
        rate[decision.update[0]] = decision.update[1]


class Lockstep:
    """Runs the policy and the reference on the same states and checks, at every event, that
    the active flows' rates (the reference's, and the policy's after its partial updates),
    the wake-up and the notification agree; the simulator follows the policy's decisions."""

    name = "sincronia-online-lockstep"
    clairvoyant = True

    def __init__(self, **params) -> None:
        self.new = SincroniaOnline(**params)
        self.ref = ReferenceSincroniaOnline(**params)
        self.events = 0

    def reset(self, view: InstanceView) -> None:
        self.new.reset(view)
        self.ref.reset(view)
        self.rate_new = np.zeros(view.num_flows)
        self.rate_ref = np.zeros(view.num_flows)

    def decide(self, state: ClairvoyantState) -> Decision:
        flows = np.asarray(state.flows)
        for rate in (self.rate_new, self.rate_ref):
            rate[state.completed] = 0.0  # the simulator stopped them
        a = self.new.decide(state)
        b = self.ref.decide(state)
        _apply_decision(self.rate_new, a, flows)
        _apply_decision(self.rate_ref, b, flows)
        where = f"event {self.events} at t={state.time!r}"
        assert_allclose(
            self.rate_new[flows], self.rate_ref[flows], rtol=1e-12, atol=0, err_msg=where
        )
        assert_equal((a.wakeup, a.notify), (b.wakeup, b.notify), err_msg=where)
        self.events += 1
        return a


def tangled(seed: int, ports: int = 3, coflows: int = 6, flows: int = 24) -> cl.Instance:
    """A random instance that stresses the per-pair bookkeeping: few ports (many flows share a
    pair, also inside one coflow), coflows whose flows are not contiguous and arrive at
    different times, unequal port capacities, sizes that make completions coincide."""
    rng = np.random.default_rng(seed)
    coflow = rng.integers(0, coflows, flows)
    coflow[:coflows] = np.arange(coflows)
    rng.shuffle(coflow)
    release = np.round(rng.exponential(3.0, coflows), 1)
    late = rng.choice([0.0, 0.0, 0.0, 0.5, 2.0], flows)
    return cl.Instance(
        cl.Fabric(ports, rng.choice([0.5, 1.0, 2.0], ports), rng.choice([0.5, 1.0, 2.0], ports)),
        coflow,
        rng.integers(0, ports, flows),
        rng.integers(0, ports, flows),
        rng.choice([0.5, 1.0, 2.0, 3.0], flows),
        release[coflow] + late,
        coflow_release=release,
        coflow_weight=rng.integers(1, 4, coflows).astype(float),
    )


def lockstep(
    inst: cl.Instance, hide: bool | None = None, **params
) -> tuple[cl.SimulationResult, Lockstep]:
    policy = Lockstep(**params)
    result = cl.simulate(inst, policy, record=False, hide_labels=hide)
    assert result.verified
    assert_equal(policy.new.log, policy.ref.log)
    assert policy.events > 0
    return result, policy


EQUIVALENCE = [
    ("uniform", 1, {}),
    ("uniform", 2, {"max_epochs": 2}),
    ("uniform", 3, {"max_epochs": 1, "base": 0.5}),
    ("tangled", 4, {}),
    ("tangled", 5, {"max_epochs": 3}),
    ("tangled", 6, {"order_sizes": "original"}),
    ("tangled", 7, {"base": 2.0, "offset": 3.0}),
]


@pytest.mark.parametrize("timing", ["doubling", "public"])
@pytest.mark.parametrize("allocation", ["greedy", "madd", "madd-exact"])
@pytest.mark.parametrize(("kind", "seed", "params"), EQUIVALENCE)
def test_rates_equal_the_numpy_reference_at_every_event(kind, seed, params, allocation, timing):
    """Tests that at every event the rates of every active flow, the wake-up and the
    notification are those of the NumPy reference implementation (to 1e-12 relative, zeros
    exactly), and the epoch logs are equal, for every allocation and timing."""
    if kind == "uniform":
        inst = uniform(4, 12, release_rate=0.6, weights=(1, 4), seed=seed)
    else:
        inst = tangled(seed)
    lockstep(inst, allocation=allocation, timing=timing, **params)


@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    ports=st.integers(1, 4),
    flows=st.integers(1, 30),
    max_epochs=st.integers(1, 4),
    timing=st.sampled_from(["doubling", "public"]),
)
def test_greedy_equals_the_reference_on_random_instances(seed, ports, flows, max_epochs, timing):
    """Tests the greedy allocation's equivalence with the reference (as above) on random
    tangled instances of 1-4 ports."""
    inst = tangled(seed, ports=ports, coflows=min(flows, 5), flows=flows)
    lockstep(inst, max_epochs=max_epochs, timing=timing)


def test_kept_orders_rekey_the_heads_with_the_reference_rates(monkeypatch):
    """Tests that a new order keeping the relative order of the coflows with active flows
    (most epoch starts) re-keys the greedy heads instead of rebuilding them, that other new
    orders rebuild them, and that both give the reference's rates at every event."""
    calls = {"kept": 0, "rebuilt": 0}
    step = sincronia_online._GreedyState.step

    def counting(self, arrived, completed, reorder, rank, kept_from=None):
        calls["kept"] += kept_from is not None
        calls["rebuilt"] += bool(reorder) or len(arrived) > 0
        return step(self, arrived, completed, reorder, rank, kept_from)

    monkeypatch.setattr(sincronia_online._GreedyState, "step", counting)
    for kind, seed, params in EQUIVALENCE:
        inst = uniform(4, 12, release_rate=0.6, weights=(1, 4), seed=seed)
        lockstep(inst if kind == "uniform" else tangled(seed), **params)
    assert calls["kept"] > 20 and calls["rebuilt"] > 20, calls


def test_same_order_compares_only_the_given_coflows():
    """Tests the order check behind the re-keying: ranks that move an absent coflow keep the
    order, ranks that swap two given coflows do not."""
    before = np.array([0, 1, 2, 3])
    assert sincronia_online._same_order(before, np.array([3, 0, 1, 2]), np.array([1, 2, 3]))
    assert not sincronia_online._same_order(before, np.array([0, 2, 1, 3]), np.array([1, 2]))
    assert sincronia_online._same_order(before, np.array([3, 2, 1, 0]), np.array([2]))


def test_hidden_labels_equal_the_reference():
    """Tests the equivalence when labels are hidden (every flow its own coflow)."""
    lockstep(tangled(8, flows=16), hide=True)


def test_trace_prefix_completion_times_equal_the_reference():
    """Tests that on the first 30 coflows of the Facebook trace the verified per-coflow
    completion times are those of the reference implementation (to 1e-12 relative)."""
    path = find_fb_trace()
    if path is None:
        pytest.skip("FB2010-1Hr-150-0.txt not found (see README: 'Getting the trace')")
    inst = read_benchmark(path).subset(range(30))
    new = cl.simulate(inst, SincroniaOnline(), record=False)
    ref = cl.simulate(inst, ReferenceSincroniaOnline(), record=False)
    assert new.verified and ref.verified
    assert_allclose(new.coflow_completion, ref.coflow_completion, rtol=1e-12, atol=0)
    assert_equal(new.num_events, ref.num_events)


# ---------------------------------------------------------------------- the greedy state
def _merged_heads(g) -> list[tuple[int, int]]:
    """The greedy state's heads as the fill reads them: ``(key, pair)`` of the array's live
    entries with the pending ones merged in at their places (``AT``)."""
    from coflowlab.heuristics import _sincronia_online_jit as k

    h, n_pending = int(g.meta[k.M_HEADS]), int(g.meta[k.M_PENDING])
    out = []
    q = 0
    for i in range(h + 1):
        while q < n_pending and g.pending[k.AT, q] == i:
            out.append((int(g.pending[k.KEY, q]), int(g.pending[k.PAIR, q])))
            q += 1
        if i < h and g.ports[i] != k.DEAD:
            out.append((int(g.keys[i]), int(g.heads[i])))
    assert q == n_pending, "a pending entry's place is past the array's end"
    return out


def _check_greedy_state(g, rank: np.ndarray) -> None:
    """Checks the greedy state after an event against a computation from scratch: each
    non-empty pair's head is its active flow of highest priority, the fill reads the heads
    in increasing key order with their ports, the counts of dead and pending entries and the
    pending entries' places are right, and a full fill (from the first head) changes no rate
    the incremental one gave (the same bits)."""
    from coflowlab.heuristics import _sincronia_online_jit as k

    meta = g.meta
    h, n_pending = int(meta[k.M_HEADS]), int(meta[k.M_PENDING])
    nf = len(g.pos)
    want = []
    for p in np.flatnonzero(g.count):
        flows = g.slot[g.ptr[p] : g.ptr[p] + g.count[p]]
        keys = rank[g.flow_coflow[flows]] * nf + flows
        assert (g.head[p], g.head_key[p]) == (flows[np.argmin(keys)], keys.min()), p
        want.append((int(keys.min()), int(p)))
    assert _merged_heads(g) == sorted(want)
    assert np.all(np.diff(g.keys[:h]) > 0)  # dead entries keep their keys: still sorted
    assert meta[k.M_DEAD] == np.count_nonzero(g.ports[:h] == k.DEAD)
    live = g.ports[:h] != k.DEAD
    assert_equal(g.ports[:h][live], g.pair_ports[g.heads[:h][live]])
    pend = g.pending[:, :n_pending]
    assert_equal(pend[k.PORTS], g.pair_ports[pend[k.PAIR]])
    assert_equal(pend[k.AT], np.searchsorted(g.keys[:h], pend[k.KEY]))
    assert meta[k.M_CHANGED] == k.BIG  # the fill consumed the changes
    full = {name: getattr(g, name).copy() for name in ("rate", "sending", "sent_kp", "stamp")}
    full_meta = meta.copy()
    full_meta[k.M_CHANGED] = 0
    flows, _ = k.greedy_fill(
        g.cap_in, g.cap_out, g.head, g.heads, g.keys, g.ports, g.pending, full["rate"],
        full["sending"], full["sent_kp"], full["stamp"], full_meta,
    )  # fmt: skip
    assert len(flows) == 0, f"a full fill changes the rates of {flows.tolist()}"
    assert_equal(full["rate"], g.rate)


class CheckedGreedy(SincroniaOnline):
    """The policy checking its greedy state after every event (:func:`_check_greedy_state`),
    with a pending list of ``capacity`` entries (the default's 64 are seldom filled on small
    instances; a small one makes the array compact often)."""

    def __init__(self, capacity: int, **params) -> None:
        super().__init__(**params)
        self.capacity = capacity
        self.checked = 0
        self.most_pending = 0

    def reset(self, view: InstanceView) -> None:
        super().reset(view)
        assert self._greedy is not None
        self._greedy.pending = np.zeros((4, self.capacity), dtype=np.int64)

    def decide(self, state: ObservedState) -> Decision:
        from coflowlab.heuristics import _sincronia_online_jit as k

        decision = super().decide(state)
        assert self._greedy is not None
        _check_greedy_state(self._greedy, self._rank)
        self.checked += 1
        self.most_pending = max(self.most_pending, int(self._greedy.meta[k.M_PENDING]))
        return decision


@pytest.mark.parametrize("capacity", [1, 3, 64])
@pytest.mark.parametrize(
    "make",
    [
        lambda: tangled(4),
        lambda: tangled(9, ports=2, coflows=4, flows=40),
        lambda: uniform(4, 12, release_rate=0.6, weights=(1, 4), seed=1),
        lambda: fb_like(20, num_ports=8, seed=3),
    ],
)
def test_incremental_greedy_state_equals_a_rebuild_at_every_event(make, capacity):
    """Tests the incremental greedy state (dead entries, the pending list, the fill from the
    first changed head) against a computation from scratch after every event, with pending
    lists small enough to fill up, and that the run's rates are the reference's."""
    inst = make()
    policy = CheckedGreedy(capacity)
    result = cl.simulate(inst, policy, record=False)
    assert result.verified and policy.checked == result.num_events
    assert policy.most_pending > 0  # the pending list was used
    ref = cl.simulate(inst, ReferenceSincroniaOnline(), record=False)
    assert_allclose(result.coflow_completion, ref.coflow_completion, rtol=1e-12, atol=0)


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    ports=st.integers(1, 4),
    flows=st.integers(1, 40),
    capacity=st.integers(1, 4),
)
def test_incremental_greedy_state_on_random_instances(seed, ports, flows, capacity):
    """Tests the incremental greedy state against a computation from scratch after every
    event (as above) on random tangled instances of 1-4 ports."""
    inst = tangled(seed, ports=ports, coflows=min(flows, 5), flows=flows)
    policy = CheckedGreedy(capacity)
    assert cl.simulate(inst, policy, record=False).verified
