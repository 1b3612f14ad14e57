"""PS-P's compiled decision against the NumPy formulation it replaced, at every event.

The reference below groups the active flows with ``np.unique`` (through
:func:`~coflowlab.heuristics.correlation.active_coflows`) and splits every link equally among
the coflows that still have bytes on it, then each coflow's share at a port equally among its
flows there (FairCloud, Popa et al., SIGCOMM 2012; Chowdhury's PhD thesis, UC Berkeley 2015,
§7.4.1), and fills what is left per flow (thesis Appendix D.2). The compiled policy must give
the same rates (1e-12 relative) at every decision of a replay, and the same completions; and,
against an independent implementation in rational arithmetic (:func:`exact_rates`), rates
within a few roundings. (On long stretches of the Facebook trace the NumPy formulation itself
drifts from the exact rates by up to about 1.6e-12, where the compiled one stays within 2e-15.)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from fractions import Fraction as F
from pathlib import Path

import numpy as np
import pytest

from coflowlab import Coflow, Fabric, Instance, simulate
from coflowlab.heuristics.correlation import EPS, active_coflows, fill
from coflowlab.heuristics.fair_share import PSP
from coflowlab.instances import fb_like, read_instance, uniform
from coflowlab.policy import ClairvoyantState, Decision, InstanceView, ObservedState

TOL = 1e-12
TRACE = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "FB2010-1Hr-150-0.txt"


def reference_rates(state: ClairvoyantState, cap_in: np.ndarray, cap_out: np.ndarray):
    """PS-P's rates as the NumPy formulation computes them (the policy's former body)."""
    a = active_coflows(state, cap_in, cap_out)
    m2 = len(a.cap)
    s, t = a.src, a.m + a.dst
    n_link = (a.load > 0).sum(axis=0)  # coflows using each link
    nc = len(a.ids)
    flows_on = np.bincount(a.group * m2 + s, minlength=nc * m2) + np.bincount(
        a.group * m2 + t, minlength=nc * m2
    )
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(n_link > 0, a.cap / n_link, 0.0)
    rates = np.minimum(
        share[s] / flows_on[a.group * m2 + s], share[t] / flows_on[a.group * m2 + t]
    )
    return fill(rates, a, np.ones(len(rates)))


def exact_rates(state: ClairvoyantState, cap_in: np.ndarray, cap_out: np.ndarray) -> np.ndarray:
    """PS-P's rates in exact rational arithmetic, rounded once at the end: the equal split,
    then progressive filling of what is left, one port at a time (every flow stops at the
    level at which the first of its ports fills; thesis Appendix D.2). Slow; for checks of
    rounding only."""
    m = len(cap_in)
    cap = [F(float(x)) for x in np.concatenate([cap_in, cap_out])]
    c, s = state.coflow.tolist(), state.src.tolist()
    t = (m + np.asarray(state.dst)).tolist()
    flows_on = Counter(zip(c, s, strict=True)) + Counter(zip(c, t, strict=True))
    n_link = Counter(link for _, link in flows_on)  # every active flow has bytes left
    base = [
        min(cap[a] / n_link[a] / flows_on[k, a], cap[b] / n_link[b] / flows_on[k, b])
        for k, a, b in zip(c, s, t, strict=True)
    ]
    left = list(cap)
    for r, a, b in zip(base, s, t, strict=True):
        left[a] -= r
        left[b] -= r
    tol = F(EPS) * max(*cap, F(1))
    full = {x for x in range(2 * m) if left[x] <= tol}
    open_pairs = Counter(p for p in zip(s, t, strict=True) if not full & set(p))
    level, stopped = F(0), {}
    while open_pairs:
        demand: Counter[int] = Counter()
        for (a, b), w in open_pairs.items():
            demand[a] += w
            demand[b] += w
        step, x = min((left[y] / w, y) for y, w in demand.items())
        for y, w in demand.items():
            left[y] -= step * w
        level += step
        for p in [p for p in open_pairs if x in p]:
            stopped[p] = level
            del open_pairs[p]
    return np.array(
        [float(r + stopped.get((a, b), 0)) for r, a, b in zip(base, s, t, strict=True)]
    )


class Checked(PSP):
    """The compiled policy, checked against :func:`reference_rates` (or ``against``) at every
    decision, within ``limit`` relative."""

    def __init__(self, against: Callable[..., np.ndarray] = reference_rates, limit: float = TOL):
        self.against, self.limit0 = against, limit

    def reset(self, view: InstanceView) -> None:
        super().reset(view)
        self.cap_in, self.cap_out = view.cap_in, view.cap_out
        self.current = np.zeros(view.num_flows)  # the rates the simulator holds
        self.decisions = 0
        self.worst = 0.0
        self.limit = self.limit0

    def decide(self, state: ObservedState) -> Decision:
        assert isinstance(state, ClairvoyantState)
        decision = super().decide(state)
        assert decision.update is not None
        flows, new = decision.update
        self.current[flows] = new
        got = self.current[state.flows]
        want = self.against(state, self.cap_in, self.cap_out)
        assert got.shape == want.shape
        err = np.abs(got - want) / np.maximum(np.abs(want), 1e-300)
        err[got == want] = 0.0  # both zero
        self.worst = max(self.worst, float(err.max(initial=0.0)))
        assert self.worst <= self.limit, f"event {self.decisions} at t={state.time}: {self.worst}"
        self.decisions += 1
        return decision


class Reference(PSP):
    """The NumPy formulation as a policy, for end-to-end comparisons."""

    def reset(self, view: InstanceView) -> None:
        self.cap_in, self.cap_out = view.cap_in, view.cap_out

    def decide(self, state: ObservedState) -> Decision:
        assert isinstance(state, ClairvoyantState)
        return Decision(rates=reference_rates(state, self.cap_in, self.cap_out))


def generated() -> list[tuple[str, Instance]]:
    out = []
    for seed in range(4):
        out.append((f"uniform-{seed}", uniform(6, 12, density=0.4, seed=seed)))
        out.append(
            (
                f"uniform-online-{seed}",
                uniform(5, 15, density=0.5, sizes=(0.5, 40.0), integral=False,
                        release_rate=0.7, seed=10 + seed),
            )
        )  # fmt: skip
        out.append((f"fb_like-{seed}", fb_like(12, num_ports=10, seed=20 + seed)))
    # unequal port capacities: the shares C^i / n_i differ per link
    base = uniform(5, 10, density=0.5, release_rate=0.5, seed=99)
    out.append(
        (
            "capacities",
            base.replace(
                fabric=Fabric(5, np.array([1, 2, 0.5, 1, 3]), np.array([2, 1, 1, 0.25, 1.5]))
            ),
        )
    )
    return out


@pytest.mark.parametrize(("label", "inst"), generated(), ids=[k for k, _ in generated()])
def test_every_decision_matches_reference(label: str, inst: Instance) -> None:
    policy = Checked()
    res = simulate(inst, policy)  # verified
    assert res.verified
    assert policy.decisions == res.num_events > 0


@pytest.mark.parametrize(("label", "inst"), generated()[::3], ids=[k for k, _ in generated()[::3]])
def test_every_decision_matches_exact_arithmetic(label: str, inst: Instance) -> None:
    """Against rational arithmetic the compiled rates are within a few roundings (the NumPy
    formulation's own rounding is what limits the comparison with it)."""
    policy = Checked(exact_rates, 1e-14)
    res = simulate(inst, policy)
    assert policy.decisions == res.num_events > 0


def test_hidden_labels_match_reference() -> None:
    """With hidden labels every flow is a coflow of its own, so PS-P splits each link among
    its flows."""
    inst = uniform(5, 10, density=0.5, release_rate=0.5, seed=5)
    policy = Checked()
    res = simulate(inst, policy, hide_labels=True)
    assert policy.decisions == res.num_events > 0


@pytest.mark.parametrize(("label", "inst"), generated()[:6], ids=[k for k, _ in generated()[:6]])
def test_completions_match_reference(label: str, inst: Instance) -> None:
    got = simulate(inst, PSP())
    want = simulate(inst, Reference())
    np.testing.assert_allclose(got.coflow_completion, want.coflow_completion, rtol=TOL)
    assert got.num_events == want.num_events


def test_equal_split_then_fill_by_hand() -> None:
    """Three ports per side, unit capacities. Coflow 0 sends 0→0, 0→1, 0→2; coflow 1 sends
    1→1. Ingress 0 is coflow 0's alone, 1/3 per flow; egress 1 is split 1/2 - 1/2, so coflow
    1's flow gets min(1, 1/2) = 1/2 and coflow 0's flow there min(1/3, 1/2) = 1/3. Ingress 0
    is full; egress 1 has 1/6 left, which the fill gives to coflow 1's flow: 2/3."""
    inst = Instance.from_coflows(
        [Coflow([(0, 0, 1.0), (0, 1, 1.0), (0, 2, 1.0)]), Coflow([(1, 1, 1.0)])], 3
    )
    for policy in (PSP(), Reference()):
        schedule = simulate(inst, policy).schedule
        assert schedule is not None
        np.testing.assert_allclose(schedule.rates_at(0.0), [1 / 3, 1 / 3, 1 / 3, 2 / 3], rtol=TOL)


@pytest.mark.trace
@pytest.mark.skipif(not TRACE.exists(), reason="needs the Facebook trace")
def test_trace_prefix_matches_reference() -> None:
    """The first 150 coflows of the Facebook trace (75,623 flows): every decision and CCT."""
    inst = read_instance(TRACE).subset(list(range(150)))
    policy = Checked()
    got = simulate(inst, policy, record=False)
    want = simulate(inst, Reference(), record=False)
    assert policy.decisions == got.num_events == want.num_events
    np.testing.assert_allclose(got.coflow_completion, want.coflow_completion, rtol=TOL)
