"""Tests that the compiled decisions of HUG, HUG-cooperative, DRF, Coflex and Coflex-naive
(``fast=True``, the default: ``heuristics/_hug_jit.py``) decide what the NumPy reference
(``fast=False``) decides, event by event, on generated instances, random small instances,
misreports and the first trace coflows.

- The grouping (ids, loads, Γ, d), and with it ``P*``, is the reference's bit for bit; so
  are DRF's, Coflex's and Coflex-naive's rates (the same operations in the same order).
- HUG's and HUG-cooperative's rates differ by roundings only (stage 1 multiplies instead of
  dividing per flow; HUG's filling sums the demands slot by slot, compensated, and
  HUG-cooperative's fills the port pairs, each weighing its flows): every rate is within
  ``RATE_TOL`` times the largest capacity of the reference's.

The policies are Chowdhury's HUG (PhD thesis, UC Berkeley 2015, Ch. 7, Algorithm 6), DRF
(Ghodsi et al., NSDI 2011) and Coflex (Wang, Ma, Li, Li, IEEE INFOCOM 2017, Algorithms 1-2).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest
from aalo_lockstep import bits, small_instances
from hypothesis import given, settings
from instance_kinds import GENERATED, unequal_capacities
from numpy.testing import assert_, assert_array_equal, assert_equal

from coflowlab import Instance, simulate
from coflowlab.heuristics._hug_jit import hug_rates
from coflowlab.heuristics.coflex import Coflex, CoflexNaive
from coflowlab.heuristics.correlation import (
    EPS,
    Active,
    Grouping,
    active_coflows,
    fill,
    optimal_isolation,
    unit_rates,
)
from coflowlab.heuristics.fair_share import DRF
from coflowlab.heuristics.hug import HUG
from coflowlab.instances import fb_like, read_benchmark, uniform
from coflowlab.instances.examples import coflex_fig2
from coflowlab.policy import ClairvoyantState, Decision, InstanceView, ObservedState

RATE_TOL = 1e-12
"""HUG's and HUG-cooperative's compiled rates are within this many times the largest
capacity of the reference's (observed: below 1e-14 on the instances here and on the
trace)."""

Factory = Callable[[bool], Any]

POLICIES: dict[str, Factory] = {
    "hug": lambda fast: HUG(fast=fast),
    "hug-cooperative": lambda fast: HUG(cooperative=True, fast=fast),
    "drf": lambda fast: DRF(fast=fast),
    "coflex": lambda fast: Coflex(fast=fast),
    "coflex-flow": lambda fast: Coflex(0.3, recompute_on="flow", skipped="share", fast=fast),
    "coflex-naive": lambda fast: CoflexNaive(fast=fast),
    "coflex-naive-0.8": lambda fast: CoflexNaive(0.8, fast=fast),
}
EXACT = {"drf", "coflex", "coflex-flow", "coflex-naive", "coflex-naive-0.8"}
"""The policies whose compiled rates are the reference's bit for bit."""


class Lockstep:
    """Runs a compiled and a reference policy on the same states and asserts, at every
    event, the same grouping and ``P*`` (bit for bit) and the same rates (bit for bit, or
    within ``RATE_TOL`` for HUG and HUG-cooperative). The simulator applies the reference's
    decision."""

    name: ClassVar[str] = "lockstep"
    clairvoyant: ClassVar[bool] = True

    def __init__(self, policy: str, fast: Any = None, reference: Any = None) -> None:
        self.fast = POLICIES[policy](True) if fast is None else fast
        self.ref = POLICIES[policy](False) if reference is None else reference
        self.exact = policy in EXACT
        self.checked = 0
        self.largest = 0.0  # largest rate difference seen

    def reset(self, view: InstanceView) -> None:
        self.fast.reset(view)
        self.ref.reset(view)
        self.tol = RATE_TOL * max(float(np.max(view.cap_in)), float(np.max(view.cap_out)))

    def decide(self, state: ObservedState) -> Decision:
        assert isinstance(state, ClairvoyantState)
        a = self.fast.decide(state)
        b = self.ref.decide(state)
        assert a.rates is not None and b.rates is not None
        assert_equal(a.notify, b.notify)
        if hasattr(self.ref, "p_star"):
            assert_equal(bits(self.fast.p_star), bits(self.ref.p_star))
        if self.exact:
            assert_array_equal(bits(a.rates), bits(b.rates))
        else:
            diff = float(np.max(np.abs(a.rates - b.rates), initial=0.0))
            self.largest = max(self.largest, diff)
            assert diff <= self.tol, (diff, self.tol)
        self.checked += 1
        return b


def replay(inst: Instance, check: Lockstep) -> None:
    """Replays ``inst`` under the lockstep: a decision at every event (Coflex waits for
    coflow completions: the flow completions in between are events without a decision)."""
    result = simulate(inst, check, verify_schedule=False, record=False)
    if isinstance(check.ref, Coflex) and check.ref.recompute_on == "coflow":
        assert_(0 < check.checked <= result.num_events)
    else:
        assert_equal(check.checked, result.num_events)


INSTANCES: dict[str, Callable[[], Instance]] = {
    **GENERATED,
    "unequal_capacities": unequal_capacities,
    "fb_like": lambda: fb_like(25, num_ports=8, seed=11),
    "fb_like_dense": lambda: fb_like(40, num_ports=8, seed=3),
    "coflex_fig2": coflex_fig2,
}


@pytest.mark.parametrize("policy", sorted(POLICIES))
@pytest.mark.parametrize("name", sorted(INSTANCES))
def test_compiled_decisions_are_the_references(name: str, policy: str):
    """Tests the lockstep at every event of the generated instances (releases, weights,
    deadlines, one port, dependencies, real sizes, unequal capacities, dense fb-like)."""
    replay(INSTANCES[name](), Lockstep(policy))


@pytest.mark.parametrize("policy", sorted(POLICIES))
def test_compiled_decisions_with_misreports(policy: str):
    """Tests the lockstep when coflows report vectors other than their own (thesis §7.4,
    Coflex §III): the compiled path takes the reported vectors as the reference does."""
    inst = uniform(3, 10, density=0.6, release_rate=0.7, seed=5)
    reported = {0: [1.0, 0.5, 0.25, 1.0, 1.0, 1.0], 3: [0.2, 1.0, 1.0, 0.7, 0.1, 1.0]}
    if policy == "hug":
        pair = (HUG(reported=reported), HUG(reported=reported, fast=False))
    elif policy == "hug-cooperative":
        pair = (
            HUG(cooperative=True, reported=reported),
            HUG(cooperative=True, reported=reported, fast=False),
        )
    elif policy == "drf":
        pair = (DRF(reported=reported), DRF(reported=reported, fast=False))
    elif policy.startswith("coflex-naive"):
        pair = (CoflexNaive(reported=reported), CoflexNaive(reported=reported, fast=False))
    else:
        pair = (Coflex(reported=reported), Coflex(reported=reported, fast=False))
    replay(inst, Lockstep(policy, *pair))


@settings(max_examples=60, deadline=None)
@given(inst=small_instances(repeated_pairs=True))
def test_compiled_decisions_on_random_small_instances(inst: Instance):
    """Tests the lockstep of every policy on random small instances: flows listed in any
    order, several flows of a coflow on one port pair, releases."""
    for policy in POLICIES:
        replay(inst, Lockstep(policy))


@pytest.mark.parametrize("policy", ["hug", "hug-cooperative", "coflex-naive", "drf"])
def test_compiled_decisions_on_the_first_trace_coflows(fb_trace: Path, policy: str):
    """Tests the lockstep on the first 30 coflows of the Facebook trace."""
    replay(read_benchmark(fb_trace).subset(range(30)), Lockstep(policy))


@pytest.mark.parametrize("name", ["uniform-online", "unequal_capacities", "fb_like"])
@pytest.mark.parametrize("policy", ["hug", "hug-cooperative", "coflex-naive"])
def test_compiled_schedules_are_verified(name: str, policy: str):
    """Tests that the compiled policies' own schedules pass the independent verifier."""
    res = simulate(INSTANCES[name](), POLICIES[policy](True))
    assert_(res.verified)


@pytest.mark.parametrize(
    ("rows", "counts"), [(Grouping.SCRATCH_ROWS, True), (1, True), (Grouping.SCRATCH_ROWS, False)]
)
def test_grouping_is_the_references_bit_for_bit(
    rows: int, counts: bool, monkeypatch: pytest.MonkeyPatch
):
    """Tests that the compiled grouping gives the reference's ``Active`` (ids, groups,
    ports, remaining bytes, loads, Γ, d) bit for bit, at every event: in one pass (the
    instance numbers its flows in coflow order), and in two when more coflows are active
    than the one-pass grouping has scratch rows for (``rows=1``); the flow counts when
    asked for, zeros otherwise."""
    monkeypatch.setattr(Grouping, "SCRATCH_ROWS", rows)
    seen = []

    class Probe:
        name: ClassVar[str] = "probe"
        clairvoyant: ClassVar[bool] = True

        def reset(self, view: InstanceView) -> None:
            self.grouping = Grouping(view, counts=counts)
            self.cap_in, self.cap_out = view.cap_in, view.cap_out

        def decide(self, state: ObservedState) -> Decision:
            assert isinstance(state, ClairvoyantState)
            a = active_coflows(state, self.cap_in, self.cap_out, None, self.grouping)
            b = active_coflows(state, self.cap_in, self.cap_out)
            for field in ("ids", "group", "src", "dst"):
                assert_array_equal(getattr(a, field), getattr(b, field))
            for field in ("remaining", "load", "gamma", "d"):
                assert_array_equal(bits(getattr(a, field)), bits(getattr(b, field)))
            n = np.zeros_like(a.load, dtype=np.int64)
            np.add.at(n, (a.group, a.src), 1)
            np.add.at(n, (a.group, a.m + a.dst), 1)
            assert_array_equal(self.grouping.count, n if counts else 0)
            assert_array_equal(self.grouping.pos, -1)  # the scratch is left clean
            assert_array_equal(self.grouping.load_rows, 0.0)
            assert_array_equal(self.grouping.count_rows, 0)
            seen.append(len(a.ids))
            return Decision(rates=np.ones(len(a.group)) * 1e-3)

    simulate(INSTANCES["uniform-online"](), Probe(), verify_schedule=False, record=False)
    assert_(max(seen) > 1)


def test_grouping_of_a_hand_made_state():
    """Tests the compiled grouping against the reference on a hand-made state: flows of
    three coflows listed out of coflow order (two passes), one with remaining bytes below 0
    (an overshoot by rounding, counted as 0, as ``np.maximum`` does), unequal capacities;
    then the same flows listed in coflow order (one pass)."""
    from types import SimpleNamespace

    from coflowlab import Fabric
    from coflowlab.simulator import instance_view

    inst = Instance(
        Fabric(3, np.array([1.0, 0.5, 2.0]), np.array([0.7, 1.0, 1.5])),
        [0, 2, 1, 2, 0, 1],
        [0, 1, 2, 0, 1, 1],
        [0, 2, 1, 1, 0, 2],
        [12.0, 8.0, 20.0, 6.0, 9.0, 3.0],
    )
    view = instance_view(inst, clairvoyant=True)
    grouping = Grouping(view)
    sent_all = np.array([7.0, 8.0 + 1e-12, 12.5, 0.0, 7.0, 0.0])
    for flows in (np.array([0, 1, 2, 3, 4, 5]), np.array([0, 4, 2, 5, 1, 3])):
        sent = sent_all[flows]
        state: Any = SimpleNamespace(
            flows=flows,
            sent=sent,
            remaining=inst.flow_size[flows] - sent,  # what ClairvoyantState computes
            coflow=inst.flow_coflow[flows],
            src=inst.flow_src[flows],
            dst=inst.flow_dst[flows],
        )
        a = active_coflows(state, view.cap_in, view.cap_out, None, grouping)
        b = active_coflows(state, view.cap_in, view.cap_out)
        assert_array_equal(a.ids, [0, 1, 2])
        assert_array_equal(a.group, b.group)
        assert_equal(a.remaining[list(flows).index(1)], 0.0)
        for field in ("remaining", "load", "gamma", "d"):
            assert_array_equal(bits(getattr(a, field)), bits(getattr(b, field)))
        assert_array_equal(grouping.load_rows, 0.0)
        assert_array_equal(grouping.pos, -1)


def test_compiled_correlation_edge_cases():
    """Tests the compiled Γ and d against the reference's on the edge cases: a coflow with
    no bytes left (Γ = 0, d = 0), bytes on a link without capacity (Γ = inf, d = nan where
    the reference divides inf by inf), a link without capacity and without bytes."""
    from coflowlab.heuristics._hug_jit import correlate
    from coflowlab.heuristics.correlation import _correlate

    load = np.array([[0.0, 0.0, 0.0, 0.0], [4.0, 1.0, 0.0, 5.0], [2.0, 0.0, 3.0, 1.0]])
    cap = np.array([1.0, 0.0, 2.0, 0.5])
    n = np.zeros(0, dtype=np.int64)
    ref = _correlate(np.arange(3), n, n, n, np.zeros(0), cap, load, None)
    gamma, d = correlate(load, cap)
    assert_array_equal(bits(gamma), bits(ref.gamma))
    assert_array_equal(bits(d), bits(ref.d))
    assert_equal(gamma[0], 0.0)
    assert_(np.isinf(gamma[1]) and np.isnan(d[1, 1]))


def test_grouping_needs_sizes():
    """Tests that the compiled grouping refuses a view without flow sizes."""
    from coflowlab.simulator import instance_view

    with pytest.raises(ValueError, match="clairvoyant"):
        Grouping(instance_view(coflex_fig2(), clairvoyant=False))


def random_active(seed: int) -> tuple[Active, float]:
    """A random decision's ``Active``: up to 5 coflows on up to 5 ports, remaining bytes
    spanning twelve orders of magnitude, unequal capacities; and its ``P*``."""
    rng = np.random.default_rng(seed)
    m, nc = int(rng.integers(1, 6)), int(rng.integers(1, 6))
    n = int(rng.integers(1, 40))
    group = np.sort(rng.integers(0, nc, n))
    ids, group = np.unique(group, return_inverse=True)
    src, dst = rng.integers(0, m, n), rng.integers(0, m, n)
    rem = 10.0 ** rng.uniform(-6, 6, n)
    cap = rng.choice([0.5, 1.0, 2.0, 3.0], 2 * m)
    nc = len(ids)
    load = np.zeros((nc, 2 * m))
    np.add.at(load, (group, src), rem)
    np.add.at(load, (group, m + dst), rem)
    per_cap = load / cap
    gamma = per_cap.max(axis=1)
    d = per_cap / gamma[:, None]
    a = Active(ids, group.astype(np.int64), src, dst, rem, cap, load, gamma, d)
    return a, optimal_isolation(d)


@pytest.mark.parametrize("capped", [True, False])
@pytest.mark.parametrize("seed", range(150))
def test_compiled_filling_against_the_reference_filling(seed: int, capped: bool):
    """Tests the compiled stage 1 + filling against ``unit_rates`` + ``fill`` on random
    decisions whose weights span twelve orders of magnitude (running sums that cancel) and
    with several flows of a coflow on one port pair: rates within ``RATE_TOL``, no port
    over its capacity; capped, no coflow over its cap; uncapped, every flow with a weight
    ends with a full port (work conservation)."""
    a, p_star = random_active(seed)
    counts = np.zeros_like(a.load, dtype=np.int64)
    np.add.at(counts, (a.group, a.src), 1)
    np.add.at(counts, (a.group, a.m + a.dst), 1)
    tol = EPS * max(float(a.cap.max()), 1.0)
    pair = np.full(a.m * a.m, -1, dtype=np.int64)
    got, unit = hug_rates(
        a.group, a.src, a.dst, a.remaining, a.load, counts, a.d, a.cap, p_star, capped, tol,
        pair,
    )  # fmt: skip
    assert_array_equal(pair, -1)  # the scratch is left clean
    ref_unit = unit_rates(a)
    np.testing.assert_allclose(unit, ref_unit, rtol=1e-13, atol=0)
    want = fill(p_star * ref_unit, a, ref_unit, cap_share=p_star if capped else None)
    np.testing.assert_allclose(got, want, rtol=0, atol=RATE_TOL * a.cap.max())
    m, slack = a.m, 1e-9 * a.cap.max()
    port = np.bincount(a.src, got, 2 * m) + np.bincount(m + a.dst, got, 2 * m)
    assert_(np.all(port <= a.cap + slack), f"ports {port} over {a.cap}")
    if not capped:
        full = port >= a.cap - slack
        assert_(np.all(full[a.src] | full[m + a.dst]), "a flow with no full port")
    if capped:
        held = np.zeros_like(a.load)
        np.add.at(held, (a.group, a.src), got)
        np.add.at(held, (a.group, m + a.dst), got)
        assert_(np.all(held <= p_star * a.cap + slack))


def test_lockstep_catches_a_perturbed_rate():
    """Tests that the lockstep can fail: a compiled HUG whose first rate is off by 1e-6 of
    the capacity, and a compiled DRF off by one unit in the last place, are caught."""

    class Off(HUG):
        def decide(self, state: ObservedState) -> Decision:
            d = super().decide(state)
            assert d.rates is not None
            rates = d.rates.copy()
            rates[0] += 1e-6
            return Decision(rates=rates)

    class Ulp(DRF):
        def decide(self, state: ObservedState) -> Decision:
            d = super().decide(state)
            assert d.rates is not None
            rates = d.rates.copy()
            rates[-1] = np.nextafter(rates[-1], np.inf)
            return Decision(rates=rates)

    with pytest.raises(AssertionError):
        replay(INSTANCES["fb_like"](), Lockstep("hug", fast=Off()))
    with pytest.raises(AssertionError):
        replay(INSTANCES["fb_like"](), Lockstep("drf", fast=Ulp()))


def test_fast_flag_and_repr():
    """Tests that ``fast`` defaults to the compiled path, can be turned off, and shows."""
    assert_(HUG().fast and not HUG(fast=False).fast)
    assert_("fast=False" in repr(HUG(fast=False)))
    assert_("fast=True" in repr(CoflexNaive()))
    assert_(not DRF(fast=False).fast)
