"""Tests of the parallel branch and bound of ``exact-fluid`` (``workers=2``) and of the
process pool it runs on (:mod:`coflowlab.formulations.parallel_search`).

Oracles: the search on one process (``workers=1``, itself checked against brute force in
test_exact_fluid.py) and brute-force enumeration of every order and interleaving. Both
searches prove their value within ``mip_gap`` (default ``1e-6``, relative), so their optima
agree within twice that. The parallel path is not deterministic in the nodes it searches
(module notes), so the tests compare values and bounds, never node counts.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from coflowlab.exceptions import SolverError
from coflowlab.formulations.exact_fluid import _COUNTERS, _Data, solve_exact_fluid
from coflowlab.formulations.parallel_search import fork_available, run_workers
from coflowlab.instances.generators import uniform
from coflowlab.solvers import SolverOptions, SolveStatus

from .test_exact_fluid import assert_verified, enumerate_optimum

pytestmark = pytest.mark.skipif(not fork_available(), reason="needs the fork start method")

REL = 2 * SolverOptions().mip_gap


def instance(m: int, n: int, releases: bool, seed: int):
    """A random ``m``-port instance, weights 1-4, Poisson releases or none."""
    rate = 0.15 if releases else None
    return uniform(m, n, density=0.5, release_rate=rate, weights=(1, 4), seed=seed)


# instances on which the search on one process bounds 40-150 nodes in under a second
CASES = [
    (3, 11, False, 5), (4, 12, False, 7), (3, 11, True, 2), (4, 11, True, 11),
    (2, 12, True, 8), (3, 13, True, 7), (4, 14, False, 1),
]  # fmt: skip


@pytest.mark.parametrize(("m", "n", "rel", "seed"), CASES)
def test_two_workers_prove_the_same_optimum(m, n, rel, seed):
    """Tests that the search on two processes proves the optimum of the search on one,
    with a verified schedule, and that its statistics add up over both processes."""
    inst = instance(m, n, rel, seed)
    one = solve_exact_fluid(inst)
    two = solve_exact_fluid(inst, workers=2)
    assert one.status is SolveStatus.OPTIMAL and two.status is SolveStatus.OPTIMAL
    assert two.objective == pytest.approx(one.objective, rel=REL)
    assert two.bound == pytest.approx(one.bound, rel=REL)
    assert_verified(inst, two)
    d = two.details
    assert d["workers"] == 2 and d["finished"] and d["open_nodes"] == 0
    assert sum(d["worker_nodes"]) == d["nodes"] > 0
    assert d["lps"] >= d["nodes"]


@pytest.mark.parametrize("rel", [False, True])
def test_two_workers_meet_brute_force(rel):
    """Tests the parallel search against every order and interleaving (5 coflows)."""
    inst = instance(3, 5, rel, 7)
    sol = solve_exact_fluid(inst, workers=2)
    assert sol.status is SolveStatus.OPTIMAL
    assert sol.objective == pytest.approx(enumerate_optimum(inst), rel=REL)


def test_work_is_shared():
    """Tests that the second process receives work: on a search of a few hundred nodes
    both processes bound nodes (the first gives its nodes away while the second is idle)."""
    inst = instance(4, 13, False, 0)  # 311 nodes on one process
    sol = solve_exact_fluid(inst, workers=2)
    assert sol.status is SolveStatus.OPTIMAL
    nodes = sol.details["worker_nodes"]
    assert sol.details["nodes"] >= 50, "too small an instance to test sharing"
    assert min(nodes) > 0, nodes


def test_time_limit_gives_a_valid_bound():
    """Tests that a parallel search stopped by its time limit returns a verified schedule
    and a bound at most the optimum (proven on one process without a limit), labelled."""
    inst = instance(3, 15, True, 2)  # 244 nodes, 1.7 s on one process
    opt = solve_exact_fluid(inst)
    assert opt.status is SolveStatus.OPTIMAL
    sol = solve_exact_fluid(inst, SolverOptions(time_limit=0.5), workers=2)
    assert_verified(inst, sol)
    assert sol.bound <= opt.objective * (1 + REL)
    assert sol.objective >= opt.objective * (1 - REL)
    if sol.status is SolveStatus.TIME_LIMIT:
        assert not sol.details["finished"]
        if "workers" in sol.details:  # else the limit came before the search started
            assert sol.details["open_nodes"] > 0
    else:  # the machine was fast enough to finish
        assert sol.status is SolveStatus.OPTIMAL


def test_counters_add_up_over_processes():
    """Tests how the parent adds up its processes' work (``_Data.counters`` and
    ``add_counters``): another process's differences, added, give the sums, the subsets the
    lazy chain bound refined included."""
    inst = instance(3, 8, False, 1)
    data = _Data(inst, SolverOptions(), time.perf_counter() + 60, chain_bound="lazy")
    assert data.lazy is not None
    before = data.counters()
    assert set(_COUNTERS) | {"refined"} == set(before)
    delta = {key: k + 1 for k, key in enumerate(sorted(before))}
    data.add_counters(delta)
    assert data.counters() == {key: before[key] + delta[key] for key in before}


@pytest.mark.parametrize("workers", [0, -1, 1.5, True, "2"])
def test_bad_workers_are_refused(workers):
    """Tests that ``workers`` must be a whole number of at least 1."""
    with pytest.raises(ValueError, match="workers must be a whole number"):
        solve_exact_fluid(instance(2, 3, False, 0), workers=workers)


def test_workers_need_the_branch_and_bound():
    """Tests that ``workers > 1`` with the position MIP is refused, naming the choice."""
    with pytest.raises(ValueError, match="algorithm='bnb'"):
        solve_exact_fluid(instance(2, 3, False, 0), algorithm="mip", workers=2)


# ------------------------------------------------------------------ the process pool
def _tree_work(shared):
    """A toy depth-first search: node ``d`` has two children ``d + 1`` up to depth 9; it
    offers each node's depth, shares work like the search, and returns what it visited."""
    seen = []
    while True:
        got, node = shared.take()
        if not got:
            return seen
        stack = [node]
        while stack:
            if len(stack) > 1 and shared.hungry():
                shared.put(stack.pop(0))
            d = stack.pop()
            seen.append(d)
            shared.offer(float(-d))
            if d < 9:
                stack += [d + 1, d + 1]
        shared.done()


def test_pool_visits_every_node_once():
    """Tests that the pool's processes together visit every node of a tree exactly once
    (2^10 - 1 nodes), share the best value and leave nothing queued."""
    values, left, best = run_workers(2, [0], _tree_work, 0.0)
    seen = sorted(d for part in values for d in part)
    expected = sorted(d for d in range(10) for _ in range(2**d))
    assert seen == expected
    assert left == [] and best == -9.0


def _failing_work(shared):
    raise RuntimeError("boom in a worker")


def test_pool_reports_a_worker_error():
    """Tests that an exception in a process becomes a SolverError with its traceback."""
    with pytest.raises(SolverError, match="boom in a worker"):
        run_workers(2, [0], _failing_work, 0.0)


def _stopping_work(shared):
    got, node = shared.take()
    if got:
        shared.stop()
        shared.done()
    return node


def test_pool_returns_the_nodes_left_when_stopped():
    """Tests that nodes still queued when the processes stop are returned (never
    searched), so the caller can count their bounds."""
    values, left, _ = run_workers(2, [1, 2, 3, 4], _stopping_work, 0.0)
    taken = [v for v in values if v is not None]
    assert sorted(taken + left) == [1, 2, 3, 4]
    assert len(left) >= 2


def test_pool_refuses_no_workers():
    """Tests that ``workers < 1`` is refused."""
    with pytest.raises(ValueError, match="workers must be at least 1"):
        run_workers(0, [0], _tree_work, 0.0)


_ORPHAN_SCRIPT = """
import os, sys, time
from coflowlab.formulations import parallel_search

parallel_search._USE_PRCTL = sys.argv[2] == "kernel"
folder = sys.argv[1]

def work(shared):
    with open(os.path.join(folder, f"{os.getpid()}.pid"), "w") as f:
        f.write("started")
    while True:  # a solve that never asks shared.stopped()
        sum(range(1000))

parallel_search.run_workers(2, [0], work, 0.0)
"""


def _alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie, ended but not reaped, does not)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in "ZX"
    except FileNotFoundError:
        return False


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads process states in /proc")
@pytest.mark.parametrize("watch", ["kernel", "thread"])
def test_workers_end_with_their_parent(tmp_path, watch):
    """Tests that workers busy in a solve that never looks at the stop flag end when the
    process that started them is killed (as a test's timeout does), with the kernel's
    parent-death signal and with the watch thread of other platforms."""
    parent = subprocess.Popen(
        [sys.executable, "-c", _ORPHAN_SCRIPT, str(tmp_path), watch],
        stdout=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while len(list(tmp_path.glob("*.pid"))) < 2:
            assert parent.poll() is None, "the search ended on its own"
            assert time.monotonic() < deadline, "the workers did not start"
            time.sleep(0.05)
        pids = [int(p.stem) for p in tmp_path.glob("*.pid")]
        assert all(_alive(pid) for pid in pids)
        time.sleep(1.0)
        assert all(_alive(pid) for pid in pids), "the workers ended with their parent alive"
    finally:
        parent.kill()
        parent.wait()
    deadline = time.monotonic() + 10
    while any(_alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = [pid for pid in pids if _alive(pid)]
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert not left, f"workers {left} outlived their parent"
