"""Tests of the simulator's flow state (:mod:`coflowlab.flow_state`): the per-flow rows and the
min tree of projected completions, against brute force over the flows.

The tree (fan-out 8, updated level by level after a batch of rate changes) must always hold, at
its root, the minimum of its leaves, and list exactly the leaves at or below a threshold in
increasing flow order; each leaf must be the flow's projected completion, computed here again
from its rate, bytes sent and size.
"""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_array_equal

from coflowlab import Instance
from coflowlab.constants import TOL
from coflowlab.flow_state import FlowState, completion_threshold


def instance(nf: int, seed: int) -> Instance:
    """``nf`` flows of random sizes on a 4 x 4 fabric, one coflow."""
    rng = np.random.default_rng(seed)
    return Instance(
        4,
        np.zeros(nf, dtype=np.int64),
        rng.integers(0, 4, nf),
        rng.integers(0, 4, nf),
        rng.uniform(1.0, 10.0, nf),
    )


def check_tree(fl: FlowState, sizes: np.ndarray, t: float) -> None:
    """Every leaf is its flow's projected completion (recomputed from the row), the root is
    their minimum, and ``due`` lists the leaves at or below thresholds in flow order."""
    nf = len(sizes)
    leaf = fl.tree[:nf]
    sent = fl.base_sent + fl.rate * (t - fl.base_t)
    with np.errstate(divide="ignore", invalid="ignore"):
        expect = np.where(fl.rate > 0, fl.base_t + (sizes - fl.base_sent) / fl.rate, np.inf)
    # a flow within tolerance of its size at its last change is due at that change
    expect = np.where(sizes - fl.base_sent <= TOL * sizes, fl.base_t, expect)
    expect[~fl.alive] = np.inf
    assert_array_equal(leaf, expect)
    assert (sent >= 0).all()
    assert fl.next_completion() == leaf.min(initial=np.inf)
    # padding beyond the flows stays empty
    assert np.isinf(fl.tree[nf : fl.off[1]]).all()
    finite = np.sort(leaf[np.isfinite(leaf)])
    for thr in [finite[0], finite[len(finite) // 2], finite[-1]] if len(finite) else [1.0]:
        assert_array_equal(fl.due(thr, 0.0), np.flatnonzero(leaf <= thr))


@pytest.mark.parametrize("nf", [1, 7, 8, 9, 64, 65, 513, 3000])
def test_tree_matches_brute_force_under_random_updates(nf: int) -> None:
    """Tests the tree across level counts (1 to 5 levels of 8) under batches of random rate
    changes (repeated flows in a batch, rates to 0 and back, completions)."""
    rng = np.random.default_rng(nf)
    inst = instance(nf, nf)
    fl = FlowState(inst)
    fl.add(np.arange(nf), 0.0)
    t = 0.0
    for step in range(40):
        t += float(rng.uniform(0.0, 0.05))
        active = fl.active
        k = int(rng.integers(1, len(active) + 1))
        flows = rng.choice(active, size=k)  # with repeats: the last rate of a flow wins
        rates = rng.choice([0.0, 0.5, 1.0, 2.0, 3.0], size=k)
        changed, new, status = fl.apply(flows, rates, t)
        assert status == 0
        last = {int(f): float(r) for f, r in zip(flows, rates, strict=True)}
        assert all(fl.rate[f] == r for f, r in last.items())
        assert set(changed.tolist()) <= set(last)
        # the last record of each changed flow is its rate now
        assert all(fl.rate[f] == r for f, r in dict(zip(changed, new, strict=True)).items())
        check_tree(fl, inst.flow_size, t)
        if step % 5 == 4 and np.isfinite(fl.next_completion()):
            t = max(t, fl.next_completion())
            fin = fl.due(t, TOL)
            assert len(fin)
            fl.finish(fin, t)
            check_tree(fl, inst.flow_size, t)
        if fl.count == 0:
            break


def test_apply_into_writes_records_and_refuses_bad_input() -> None:
    """Tests that the records written are the changed flows at ``t`` (from ``pos`` on, the
    buffer before it untouched), and that an inactive flow or a non-finite rate changes
    nothing."""
    inst = instance(20, 1)
    fl = FlowState(inst)
    fl.add(np.arange(10), 0.0)
    fl.apply(np.array([0, 1]), np.array([1.0, 1.0]), 0.0)
    out_t, out_f, out_r = np.full(8, -1.0), np.full(8, -1, dtype=np.int64), np.full(8, -1.0)
    n, status = fl.apply_into(
        np.array([0, 1, 2]), np.array([1.0, 2.0, 0.0]), 1.5, out_t, out_f, out_r, 3
    )
    # flow 0 keeps its rate, flow 2 stays at 0: only flow 1 changes
    assert (n, status) == (1, 0)
    assert_array_equal(out_f[:5], [-1, -1, -1, 1, -1])
    assert_array_equal(out_t[3:4], [1.5])
    assert_array_equal(out_r[3:4], [2.0])
    before = (fl.rows.copy(), fl.tree.copy())
    assert fl.apply_into(np.array([1, 15]), np.ones(2), 2.0, out_t, out_f, out_r, 0)[1] == -1
    assert fl.apply_into(np.array([1]), np.array([np.nan]), 2.0, out_t, out_f, out_r, 0)[1] == -2
    assert_array_equal(fl.rows, before[0])
    assert_array_equal(fl.tree, before[1])
    # flow 1 sent 1.5 by 1.5, then 2 per unit: it sent 1.5 + 2 * 0.25 by 1.75
    assert_array_equal(fl.sent(np.array([1]), 1.75), [2.0])
    assert fl.next_completion() == min(
        (inst.flow_size[0] - 0.0) / 1.0, 1.5 + (inst.flow_size[1] - 1.5) / 2.0
    )


def test_completion_threshold_is_relative() -> None:
    """Tests the completion rule's tolerance: absolute near 0, relative to ``t`` beyond 1."""
    assert completion_threshold(0.5, 1e-9) == 0.5 + 1e-9
    assert completion_threshold(1e6, 1e-9) == 1e6 + 1e-3


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_complete_is_due_finish_and_numpy_bookkeeping(seed: int) -> None:
    """Tests :meth:`FlowState.complete` against ``due``, ``finish`` and the NumPy bookkeeping
    it replaces in the simulator (``subtract.at``, ``add.at``, ``unique``), on two identical
    flow states driven through the same events: the same flows complete, the same coflows
    are reported complete, and the counts, bytes (equal floats), completion times, rows and
    tree are the same. Several flows of a coflow share completion instants (equal sizes
    and rates), so some events complete several flows and coflows at once."""
    rng = np.random.default_rng(seed)
    nf, n = 300, 40
    coflow = np.sort(rng.integers(0, n, nf))
    coflow[:n] = np.arange(n)  # every coflow has a flow
    coflow.sort()
    sizes = rng.choice([1.0, 2.0, 3.5, 0.1 + 0.2], size=nf)
    inst = Instance(4, coflow, rng.integers(0, 4, nf), rng.integers(0, 4, nf), sizes)
    states = [FlowState(inst), FlowState(inst)]
    left = [np.bincount(coflow, minlength=n) for _ in states]
    sent = [np.zeros(n) for _ in states]
    done_at = [np.full(nf, np.nan) for _ in states]
    rates = rng.choice([0.5, 1.0, 1.0 / 3.0], size=nf)
    for fl in states:
        fl.add(np.arange(nf), 0.0)
        fl.apply(np.arange(nf), rates, 0.0)
    completions = 0
    while states[0].count:
        t = states[0].next_completion()
        assert t == states[1].next_completion()
        # reference: the simulator's plain path
        fin = states[0].due(t, TOL)
        done_at[0][fin] = t
        states[0].finish(fin, t)
        np.subtract.at(left[0], coflow[fin], 1)
        np.add.at(sent[0], coflow[fin], sizes[fin])
        cof = np.unique(coflow[fin])
        done = cof[left[0][cof] == 0]
        # the one compiled call
        fin1, done1 = states[1].complete(t, TOL, left[1], sent[1], done_at[1])
        assert_array_equal(fin1, fin)
        assert_array_equal(done1, done)
        assert states[1].count == states[0].count
        completions += len(done)
    assert completions == n
    assert_array_equal(left[1], left[0])
    assert_array_equal(sent[1], sent[0])
    assert_array_equal(done_at[1], done_at[0])
    assert_array_equal(states[1].rows, states[0].rows)
    assert_array_equal(states[1].tree, states[0].tree)
