"""Tests for the per-flow and FIFO baselines (``coflowlab.heuristics.baselines``): fair
sharing, per-flow prioritisation and Baraat's FIFO-LM."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from instance_kinds import GENERATED
from numpy.testing import assert_, assert_allclose, assert_equal

from coflowlab import Coflow, Fabric, Instance, simulate
from coflowlab.allocation import priority_greedy
from coflowlab.constants import TOL
from coflowlab.heuristics.baselines import PerFlowPriority
from coflowlab.heuristics.fair import FairSharing
from coflowlab.heuristics.fifo_lm import FifoLM
from coflowlab.instances import fb_like, single_port, uniform
from coflowlab.instances.examples import EXAMPLES, EXPECTED, fig_3_2, fig_5_1
from coflowlab.policy import Decision
from coflowlab.simulator import SimulationResult


def assert_work_conserving(result: SimulationResult) -> None:
    """Every active flow has a saturated port at every rate change (no dependencies)."""
    inst = result.instance
    sch = result.schedule
    assert sch is not None
    cap_in = np.asarray(inst.fabric.ingress_capacity, dtype=float)
    cap_out = np.asarray(inst.fabric.egress_capacity, dtype=float)
    for t in np.unique(sch.time):
        rates = sch.rates_at(float(t))
        load_in = np.bincount(inst.flow_src, weights=rates, minlength=inst.num_ports)
        load_out = np.bincount(inst.flow_dst, weights=rates, minlength=inst.num_ports)
        full = (load_in[inst.flow_src] >= cap_in[inst.flow_src] * (1 - 1e-7)) | (
            load_out[inst.flow_dst] >= cap_out[inst.flow_dst] * (1 - 1e-7)
        )
        eps = 1e-9 * max(1.0, float(t))
        active = (inst.flow_release <= t + eps) & (result.flow_completion > t + eps)
        idle = np.flatnonzero(active & ~full)
        assert_(len(idle) == 0, f"t={t}: flows {idle.tolist()} have spare capacity at both ports")


# ---------------------------------------------------------------------------------- fair
@pytest.mark.parametrize("name", ["fig_3_2", "fig_4_6", "fig_5_1", "fig_b1"])
def test_fair_sharing_reproduces_examples(name: str):
    """Tests that per-flow max-min fairness gives the examples' "fair" CCTs (and FCTs where
    stated): Fig. 3.2 CCT 5, Fig. 4.6 (N = 100) 3N − 1, Fig. 5.1 (4, 4), Fig. B.1 (2, 2, 1)."""
    inst = EXAMPLES[name]()
    expected = EXPECTED[name]
    result = simulate(inst, FairSharing())
    assert_(result.verified)
    assert_allclose(result.cct, expected["cct"]["fair"], rtol=1e-9)
    if "fair" in expected.get("fct", {}):
        fct = result.flow_completion - inst.flow_release
        assert_allclose(fct, expected["fct"]["fair"], rtol=1e-9)


# ---------------------------------------------------------------------------------- PFP
def test_pfp_fig_3_2():
    """Tests that per-flow prioritisation takes 6 on Fig. 3.2, with FCTs {1, 1, 2, 2, 4, 6}
    (thesis §3.2, Fig. 3.2)."""
    result = simulate(fig_3_2(), PerFlowPriority())
    expected = EXPECTED["fig_3_2"]
    assert_(result.verified)
    assert_allclose(result.cct, expected["cct"]["sff"])
    assert_allclose(np.sort(result.flow_completion), expected["fct_sorted"]["sff"])
    assert_allclose(result.flow_completion.mean(), expected["avg_fct"]["sff"])


@pytest.mark.parametrize(
    ("tie_break", "key"), [("smaller_coflow", "sff"), ("lifo", "sff"), ("fifo", "sff_tie_c1")]
)
def test_pfp_fig_5_1_tie_break(tie_break: Any, key: str):
    """Tests Fig. 5.1's per-flow prioritisation rows: the thesis's 3.5 (avg FCT 2.8) needs the
    tie on ingress 2 to go to C2's flow; FIFO ties give 4.0 (docs/examples.md#fig-5-1)."""
    result = simulate(fig_5_1(), PerFlowPriority(tie_break=tie_break))
    expected = EXPECTED["fig_5_1"]
    assert_(result.verified)
    assert_allclose(result.cct, expected["cct"][key])
    assert_allclose(result.cct.mean(), expected["avg_cct"][key])
    assert_allclose(result.flow_completion, expected["fct"][key])
    assert_allclose(result.flow_completion.mean(), expected["avg_fct"][key])


def test_pfp_reranks_when_a_flow_overtakes():
    """Tests exact smallest-remaining-first: flow B (4 units at 0.75) catches flow A (3 units
    at 0.25, limited by its egress) at t = 2 and from then on takes ingress 0 first."""
    inst = Instance(Fabric(2, 1.0, np.array([0.25, 1.0])), [0, 1], [0, 0], [0, 1], [3.0, 4.0])
    exact = simulate(inst, PerFlowPriority())
    assert_(exact.verified)
    assert_allclose(exact.flow_completion, [14.5, 4.5])
    sch = exact.schedule
    assert sch is not None
    assert_allclose(sch.rates_at(2.0), [0.0, 1.0])
    lazy = simulate(inst, PerFlowPriority(exact=False))
    assert_allclose(lazy.flow_completion, [12.0, 16 / 3])


@pytest.mark.parametrize("seed", range(4))
def test_pfp_is_srpt_on_one_port(seed: int):
    """Tests that on one port with everything released at 0, flows finish in increasing size,
    at the running sums of the sorted sizes (SRPT on one machine)."""
    inst = single_port(7, seed=seed)
    result = simulate(inst, PerFlowPriority())
    sizes = np.asarray(inst.flow_size)
    order = np.argsort(sizes, kind="stable")
    expected = np.empty(len(sizes))
    expected[order] = np.cumsum(sizes[order])
    assert_allclose(result.flow_completion, expected)


def test_pfp_rejects_bad_tie_break():
    """Tests that an unknown tie-break raises ValueError."""
    with pytest.raises(ValueError):
        PerFlowPriority(tie_break="random")


class _ReferencePfp(PerFlowPriority):
    """The straightforward PFP: at every event a full sort of the active flows by
    ``remaining − rate·τ`` (then the tie-break), the strict-priority greedy, and the next
    overtaking among adjacent flows at saturated ports."""

    def reset(self, view: Any) -> None:
        self.cap_in = np.asarray(view.cap_in, dtype=float)
        self.cap_out = np.asarray(view.cap_out, dtype=float)
        self.coflow_size = np.asarray(view.coflow_size, dtype=float)

    def _order(self, state: Any) -> np.ndarray:
        t = float(state.time)
        key = np.asarray(state.remaining) - np.asarray(state.rate) * (1e-9 * max(1.0, abs(t)))
        flows = np.asarray(state.flows)
        arrival = np.asarray(state.arrival)
        if self.tie_break == "fifo":
            return np.lexsort((flows, arrival, key))
        if self.tie_break == "lifo":
            return np.lexsort((-flows, -arrival, key))
        size = self.coflow_size[np.asarray(state.coflow)]
        return np.lexsort((flows, arrival, size, key))

    def decide(self, state: Any) -> Decision:
        order = self._order(state)
        src = np.asarray(state.src)
        dst = np.asarray(state.dst)
        rates = priority_greedy(order, src, dst, self.cap_in, self.cap_out)
        if not self.exact:
            return Decision(rates)
        t = float(state.time)
        rank = np.empty(len(order), dtype=np.int64)
        rank[order] = np.arange(len(order))
        rem = np.asarray(state.remaining)
        soonest = math.inf
        for port, cap in ((src, self.cap_in), (dst, self.cap_out)):
            load = np.bincount(port, weights=rates, minlength=len(cap))
            saturated = np.flatnonzero(load[port] >= cap[port] * (1 - 1e-9))
            by_port = saturated[np.lexsort((rank[saturated], port[saturated]))]
            same = port[by_port[1:]] == port[by_port[:-1]]
            ahead, behind = by_port[:-1][same], by_port[1:][same]
            faster = rates[behind] > rates[ahead]
            ahead, behind = ahead[faster], behind[faster]
            if len(ahead):
                gap = (rem[behind] - rem[ahead]) / (rates[behind] - rates[ahead])
                soonest = min(soonest, float(gap.min()))
        if math.isinf(soonest):
            return Decision(rates)
        return Decision(rates, wakeup=t + max(soonest, 1e-9 * max(1.0, abs(t))))


class _SmallBufferPfp(PerFlowPriority):
    """PFP with a tiny insertion buffer, so that every merge path of its sorted structure runs
    on small instances."""

    def reset(self, view: Any) -> None:
        super().reset(view)
        self._bmax = 2


class _WalkPfp(PerFlowPriority):
    """PFP on the general kernel (the ranking walk) even when all capacities are equal."""

    _use_matching = False


def _hetero_fabric(seed: int) -> Instance:
    """A uniform instance on a fabric with unequal port capacities."""
    base = uniform(5, 10, density=0.4, release_rate=0.5, seed=seed)
    rng = np.random.default_rng(seed)
    cap_in = rng.choice([0.5, 1.0, 2.0], size=5)
    cap_out = rng.choice([0.25, 1.0, 3.0], size=5)
    return base.replace(fabric=Fabric(5, cap_in, cap_out))


EQUIVALENCE_INSTANCES = {
    **GENERATED,
    "fb_like": lambda: fb_like(40, num_ports=30, seed=11),
    **{
        f"uniform-{seed}": (
            lambda seed=seed: uniform(6, 12, density=0.5, release_rate=0.4, seed=100 + seed)
        )
        for seed in range(3)
    },
    **{f"hetero-{seed}": (lambda seed=seed: _hetero_fabric(seed)) for seed in range(2)},
}


@pytest.mark.parametrize("tie_break", ["fifo", "lifo", "smaller_coflow"])
@pytest.mark.parametrize("exact", [True, False])
@pytest.mark.parametrize("inst_name", sorted(EQUIVALENCE_INSTANCES))
def test_pfp_matches_full_resort(inst_name: str, exact: bool, tie_break: Any):
    """Tests that the incremental PFP (rate-0 flows kept sorted between events, only the
    sending ones re-ranked, greedy walk stopped early) produces bit for bit the schedule of a
    full re-sort and greedy at every event, with the same events; also with a tiny insertion
    buffer (every merge path of the sorted structure). With equal capacities the matching
    kernel does not wake up at overtakings (they change no rate): the same schedule with the
    events of the re-sort without wake-ups."""
    inst = EQUIVALENCE_INSTANCES[inst_name]()
    ref = simulate(inst, _ReferencePfp(tie_break=tie_break, exact=exact))
    lazy = simulate(inst, _ReferencePfp(tie_break=tie_break, exact=False))
    for policy in (PerFlowPriority, _SmallBufferPfp, _WalkPfp):
        pol = policy(tie_break=tie_break, exact=exact)
        fast = simulate(inst, pol)
        if exact and pol._matching:
            # the rates of ref in exact arithmetic; these instances' equal integer sizes
            # give exact ties that an ulp moved by ref's wake-ups can flip
            # (proofs-checks: test_pfp_overtakings_change_nothing_on_equal_capacities)
            _assert_same_run(lazy, fast)
        else:
            _assert_same_run(ref, fast)


def test_pfp_wakes_up_only_where_an_overtaking_can_matter():
    """Tests that exact PFP wakes up at overtakings with unequal capacities only: on equal
    ones the matching kernel runs and has the events of exact=False, fewer than the walk's,
    which wakes up."""
    policy = PerFlowPriority()
    hetero = _hetero_fabric(0)
    run = simulate(hetero, policy)
    assert_(not policy._matching)
    assert_(run.num_events > simulate(hetero, PerFlowPriority(exact=False)).num_events)
    inst = fb_like(20, num_ports=8, seed=5)
    run = simulate(inst, policy)
    assert_(policy._matching)
    assert_(simulate(inst, _WalkPfp()).num_events > run.num_events)
    assert_equal(run.num_events, simulate(inst, _WalkPfp(exact=False)).num_events)


def test_pfp_matching_frees_the_ports_of_a_head_displaced_twice():
    """Tests a regression: two flows arrive at once in the pair whose head holds its ports,
    each ranked ahead of the one before; the matching kernel gave the holder's ports to the
    first arrival only, and when the second displaced it one port stayed idle although flow
    8 (ingress 0 to egress 0) was waiting for it (work conservation lost at t = 5)."""
    inst = Instance.from_coflows(
        [
            Coflow([(1, 0, 3.0), (0, 0, 4.0), (1, 0, 2.0), (1, 1, 1.0), (0, 0, 4.0)], release=5.0),
            Coflow([(1, 0, 4.0), (0, 0, 1.0), (0, 0, 1.0)]),
            Coflow([(0, 0, 4.0)]),
        ],
        Fabric(2, 0.5, 0.5),
    )
    walk = simulate(inst, _WalkPfp(exact=False))
    fast = simulate(inst, PerFlowPriority())
    sch = fast.schedule
    assert sch is not None
    assert_equal(sch.rates_at(5.5)[[3, 8]], [0.5, 0.5])
    _assert_same_run(walk, fast)


def _equal_fabric(seed: int) -> Instance:
    """A uniform instance with many equal sizes (ties), releases and equal capacities (2)."""
    rng = np.random.default_rng(seed)
    ports = int(rng.integers(2, 7))
    base = uniform(
        ports,
        int(rng.integers(4, 12)),
        density=float(rng.uniform(0.3, 0.9)),
        sizes=(1, 4),
        release_rate=float(rng.choice([0.3, 1.0, 3.0])),
        seed=seed,
    )
    return base.replace(fabric=Fabric(ports, 2.0, 2.0))


def _assert_same_rates(a: SimulationResult, b: SimulationResult) -> None:
    # b's records are a's, their times and the completions within the simulator's tolerance
    # (a wake-up that changes no rate splits the bytes-sent sums: the last bits may differ)
    sa, sb = a.schedule, b.schedule
    assert sa is not None and sb is not None
    assert_equal(sb.flow, sa.flow)
    assert_equal(sb.rate, sa.rate)
    atol = TOL * max(1.0, float(np.max(a.flow_completion, initial=0.0)))
    assert_allclose(sb.time, sa.time, rtol=0, atol=atol)
    assert_allclose(b.flow_completion, a.flow_completion, rtol=0, atol=atol)


def _assert_same_run(a: SimulationResult, b: SimulationResult) -> None:
    sa, sb = a.schedule, b.schedule
    assert sa is not None and sb is not None
    assert_equal(sb.time, sa.time)
    assert_equal(sb.flow, sa.flow)
    assert_equal(sb.rate, sa.rate)
    assert_equal(b.flow_completion, a.flow_completion)
    assert_equal(b.num_events, a.num_events)


@pytest.mark.parametrize("tie_break", ["fifo", "lifo", "smaller_coflow"])
@pytest.mark.parametrize("exact", [True, False])
def test_pfp_matching_matches_full_resort_on_random_instances(exact: bool, tie_break: Any):
    """Tests that the equal-capacity kernel (the greedy as a matching repaired at the ports
    an event changes) gives bit for bit the schedule and completions of the general walk,
    and its events without wake-ups, on many small random instances with ties and releases
    (and of a full re-sort at every event on some of them)."""
    for seed in range(25):
        inst = _equal_fabric(1000 + seed)
        policy = PerFlowPriority(tie_break=tie_break, exact=exact)
        fast = simulate(inst, policy)
        assert_(policy._matching)
        _assert_same_run(simulate(inst, _WalkPfp(tie_break=tie_break, exact=False)), fast)
        if seed % 6 == 0:
            ref = simulate(inst, _ReferencePfp(tie_break=tie_break, exact=False))
            _assert_same_run(ref, fast)


@pytest.mark.parametrize("exact", [True, False])
def test_pfp_matching_on_fb_like(exact: bool):
    """Tests the equal-capacity kernel against the general walk on FB-like instances (many
    flows per port pair, coflow arrivals in bulk)."""
    for seed in range(3):
        inst = fb_like(30, num_ports=12, seed=40 + seed)
        policy = PerFlowPriority(exact=exact)
        fast = simulate(inst, policy, verify_schedule=False)
        assert_(policy._matching)
        _assert_same_run(simulate(inst, _WalkPfp(exact=False), verify_schedule=False), fast)
        if exact:
            _assert_same_rates(simulate(inst, _WalkPfp(), verify_schedule=False), fast)


def test_pfp_uses_the_walk_for_unequal_capacities():
    """Tests that the matching kernel is used only when every port capacity is equal."""
    policy = PerFlowPriority()
    simulate(_hetero_fabric(0), policy)
    assert_(not policy._matching)
    simulate(fb_like(10, num_ports=10, seed=3), policy)
    assert_(policy._matching)


def test_pfp_can_be_reused():
    """Tests that one PFP object replays an instance twice (``reset`` clears its state)."""
    inst = fb_like(10, num_ports=10, seed=3)
    policy = PerFlowPriority()
    first = simulate(inst, policy)
    second = simulate(inst, policy)
    assert_equal(second.flow_completion, first.flow_completion)


# ---------------------------------------------------------------------------------- FIFO-LM
def test_fifo_lm_multiplexes_heavy_coflows():
    """Tests that the head coflow blocks the next one until it has sent the threshold, then
    they share the port per flow."""
    inst = Instance.from_coflows([Coflow([(0, 0, 20.0)]), Coflow([(0, 0, 4.0)])], 1)
    result = simulate(inst, FifoLM(threshold=5.0))
    assert_(result.verified)
    assert_allclose(result.coflow_completion, [24.0, 13.0])
    sch = result.schedule
    assert sch is not None
    assert_allclose(sch.rates_at(4.9), [1.0, 0.0])
    assert_allclose(sch.rates_at(5.0), [0.5, 0.5])


def test_fifo_lm_limits_multiplexing_to_first_light_coflow():
    """Tests that only the heavy prefix and the first light coflow share a port: the third
    coflow waits while the second is still light."""
    inst = Instance.from_coflows(
        [Coflow([(0, 0, 20.0)]), Coflow([(0, 0, 10.0)]), Coflow([(0, 0, 1.0)])], 1
    )
    result = simulate(inst, FifoLM(threshold=5.0))
    assert_(result.verified)
    sch = result.schedule
    assert sch is not None
    assert_allclose(sch.rates_at(6.0), [0.5, 0.5, 0.0])
    # coflow 1 turns heavy at t = 15 (5 + 5/0.5): then all three share
    assert_allclose(sch.rates_at(15.0), [1 / 3, 1 / 3, 1 / 3])


def test_fifo_lm_counts_bytes_per_port():
    """Tests decentralisation: a coflow sending 3 + 3 units over two ports is heavy (threshold
    5) for a global count but not at either port."""
    first = Coflow([(0, 0, 3.0), (1, 1, 3.0)])
    later = Coflow([(0, 0, 1.0)])
    inst = Instance.from_coflows([first, later], 2)
    local = simulate(inst, FifoLM(threshold=5.0))
    glob = simulate(inst, FifoLM(threshold=5.0, local=False))
    assert_(local.verified and glob.verified)
    assert_allclose(local.coflow_completion, [3.0, 4.0])
    # globally heavy at t = 2.5 (2 × 2.5 units): from then the later coflow shares port 0
    assert_allclose(glob.coflow_completion, [3.5, 4.0])


@pytest.mark.parametrize("seed", range(3))
def test_fifo_lm_zero_threshold_is_fair_sharing(seed: int):
    """Tests that with threshold 0 every coflow is heavy at once, so FIFO-LM is per-flow
    max-min fair sharing."""
    inst = uniform(4, 7, density=0.4, release_rate=0.7, seed=seed)
    lm = simulate(inst, FifoLM(threshold=0.0))
    fair = simulate(inst, FairSharing())
    assert_allclose(lm.flow_completion, fair.flow_completion, rtol=1e-9)


def test_fifo_lm_calibrated_threshold():
    """Tests that the calibrated threshold is the percentile of the coflow sizes (thesis:
    80th percentile)."""
    inst = uniform(4, 9, seed=3)
    assert_allclose(FifoLM.calibrated(inst).threshold, np.percentile(inst.total_size, 80))
    assert_(not FifoLM.calibrated(inst, 50, local=False).local)


@pytest.mark.parametrize("threshold", [-1.0, math.nan])
def test_fifo_lm_rejects_bad_threshold(threshold: float):
    """Tests that a negative or NaN threshold raises ValueError."""
    with pytest.raises(ValueError):
        FifoLM(threshold=threshold)


# ---------------------------------------------------------------------------------- shared
def _records_before(result: SimulationResult, t: float) -> tuple[np.ndarray, ...]:
    sch = result.schedule
    assert sch is not None
    keep = sch.time < t
    return sch.time[keep], sch.flow[keep], sch.rate[keep]


def _enlarged_runs(
    make: Any, seed: int, which: str = "last"
) -> tuple[tuple[np.ndarray, ...], tuple[np.ndarray, ...]]:
    """Records before the enlarged flow's completion, with and without the enlargement."""
    inst = uniform(4, 6, density=0.5, release_rate=1.0, seed=300 + seed)
    first = simulate(inst, make())
    pick = np.argmax if which == "last" else np.argmin
    f = int(pick(first.flow_completion))
    sizes = np.array(inst.flow_size)
    sizes[f] += 7.0
    second = simulate(inst.replace(flow_size=sizes), make())
    assert_(first.verified and second.verified)
    cut = float(first.flow_completion[f])
    return _records_before(first, cut), _records_before(second, cut)


@pytest.mark.parametrize(
    "make",
    [FairSharing, lambda: FifoLM(threshold=3.0), lambda: FifoLM(threshold=3.0, local=False)],
)
@pytest.mark.parametrize("which", ["first", "last"])
@pytest.mark.parametrize("seed", range(3))
def test_non_clairvoyant_decisions_ignore_unobserved_sizes(make: Any, seed: int, which: str):
    """Tests non-clairvoyance: enlarging the first or the last flow to finish changes no
    decision before that flow would have completed."""
    a, b = _enlarged_runs(make, seed, which)
    assert_(len(a[0]) > 0)
    assert_equal(a[1], b[1])
    assert_allclose(a[0], b[0], rtol=1e-12)
    assert_allclose(a[2], b[2], rtol=1e-12)


def test_clairvoyant_pfp_sees_the_enlarged_flow():
    """Tests that the non-clairvoyance check can fail: PFP, which ranks by size, decides
    differently before the enlarged flow would have completed."""
    differs = []
    for seed in range(3):
        a, b = _enlarged_runs(PerFlowPriority, seed, "first")
        same = len(a[0]) == len(b[0]) and all(
            np.array_equal(x, y) for x, y in zip(a, b, strict=True)
        )
        differs.append(not same)
    assert_(all(differs))


INSTANCES = {
    **GENERATED,
    "fb_like": lambda: fb_like(40, num_ports=30, seed=11),
}

POLICIES = {
    "fair": FairSharing,
    "pfp": PerFlowPriority,
    "pfp-lifo-lazy": lambda: PerFlowPriority(tie_break="lifo", exact=False),
    "pfp-smaller-coflow": lambda: PerFlowPriority(tie_break="smaller_coflow"),
    "fifo-lm": lambda: FifoLM(threshold=5.0),
    "fifo-lm-default": FifoLM,
    "fifo-lm-global": lambda: FifoLM(threshold=5.0, local=False),
}


@pytest.mark.parametrize("inst_name", sorted(INSTANCES))
@pytest.mark.parametrize("policy_name", sorted(POLICIES))
def test_schedules_verify_on_generated_instances(inst_name: str, policy_name: str):
    """Tests that every baseline's schedule passes the verifier on generated instances
    (releases, weights, deadlines, one port, dependencies, real sizes, FB-like) and is work
    conserving."""
    inst = INSTANCES[inst_name]()
    result = simulate(inst, POLICIES[policy_name]())
    assert_(result.verified)
    assert_(bool(np.isfinite(result.coflow_completion).all()))
    if not len(inst.dependencies) and inst.num_flows < 1000:
        assert_work_conserving(result)


@pytest.mark.slow
@pytest.mark.parametrize("policy_name", ["pfp", "fifo-lm-default"])
def test_full_size_fb_like_verifies(policy_name: str):
    """Tests the baselines on ``fb_like(40)`` at its default 150 ports."""
    result = simulate(fb_like(40, seed=11), POLICIES[policy_name](), record=False)
    assert_(result.verified)


def test_policy_metadata():
    """Tests the registry names and which baselines are clairvoyant."""
    assert_equal((FairSharing.name, PerFlowPriority.name, FifoLM.name), ("fair", "pfp", "fifo-lm"))
    assert_(PerFlowPriority.clairvoyant)
    assert_(not FairSharing.clairvoyant and not FifoLM.clairvoyant)
