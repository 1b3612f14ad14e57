"""The exact fluid optimum ``min Σ_j w_j C_j`` (docs/theory.md#exact).

The fluid optimum is the minimum, over completion orders and interleavings of the release
events, of the order LP (:mod:`coflowlab.formulations.order_lp`). Two ways to find it:

``algorithm="bnb"`` (default): branch and bound over event sequences, built backwards.
    A node fixes the *last* events: a suffix of coflow completions, interleaved with the
    largest release events; the other coflows ``U`` complete, in an order not yet fixed,
    before the first of them. Branching places one more event in front of the suffix: a
    coflow of ``U`` (it completes after the rest of ``U``) or the largest unplaced release
    event (all of ``U`` completes before it). A leaf (``U`` empty) is one event sequence;
    its order LP is its exact value.

    Bound of a node: the group LP (:func:`~coflowlab.formulations.order_lp.build_group_lp`;
    ``U`` as one group of weight 0 whose flows are merged per port pair, then the suffix)
    gives the least ``Σ w C`` of the suffix, plus a lower bound on ``Σ_{j∈U} w_j C_j`` of the
    sub-instance ``U`` alone (the two parts are bounded separately, so their sum is a
    bound). That bound is the largest of:

    - the *chain bound*: ``chain(S) = min_j chain(S - j) + w_j span(S)``, where ``span(S)``
      bounds the time by which all of ``S`` can complete (per release level ``R``: ``R``
      plus the busiest port's load of the flows released at ``R`` or later) and ``j``
      ranges over the coflows that may complete last. Whoever completes last in ``S`` does
      so no earlier than ``span(S)``. Without releases this is the concurrent-open-shop
      optimum on the ports (docs/theory.md#cos), and on random instances it is often
      within a fraction of a percent of the fluid optimum: it is what makes the search
      small. ``chain_bound="table"`` tabulates it for every subset (up to
      ``table_coflows`` coflows, by default :data:`MAX_SUBSET_TABLE` or, when the table's
      work is small, :data:`MAX_SUBSET_TABLE_AUTO`; none above); ``"lazy"``
      (:class:`~coflowlab.formulations.fluid_bounds.LazyChainBound`) proves per node only
      what prunes it, ``chain(U) ≥ T`` for the node's threshold ``T``, by a depth-first
      search over the last coflow with memos per subset (proven lower bounds, certified
      failures) and Smith/single-coflow floors, in compiled code up to 62 coflows; a budget
      of ``chain_budget`` subsets per call (and the time limit) stop it with a valid, weaker
      value. ``"auto"`` (default):
      the table up to that many coflows, lazy above;
    - ``Σ w (r + ρ)`` (docs/theory.md#f3);
    - per port ``v`` and release level ``R``: ``R · w(U_R) + Smith_v(U_R) + Σ_{U \\ U_R}
      w (r + ρ)``, where ``U_R`` are the coflows released at ``R`` or later (docs/theory.md#f4).

    A child is first bounded without an LP (the parent's LP, plus ``w_j · span(U)``, plus
    the bound of the rest of ``U``); its LP is solved only when it is popped and not yet
    pruned. Depth first; children in the order of these cheap bounds. A node with one
    coflow left and no release event to place is replaced by its only child, the leaf.

    Weighted group LPs (``weighted_group=True``): the child ``j`` (``j`` completes last in
    ``U``, at ``C_j``, after the node's release events) is bounded by ``G(w_j) + LB(U -
    j)``, where ``G(w)`` is the group LP whose ``U`` event has weight ``w``: any schedule of
    the child, with ``t_U = C_j``, is feasible for that LP and costs ``w_j C_j`` plus the
    suffix there, and ``U - j`` is bounded apart as before. For ``w ≥ w_0`` the same
    schedule costs ``w_0 C_j + suffix + (w - w_0) C_j ≥ G(w_0) + (w - w_0) span(U)``
    (``C_j ≥ span(U)``, whole in slotted mode), so the LP is solved at the least eligible
    weight ``w_0`` and at another weight only when that estimate leaves a child open. It is
    never below the weight-0 bound ``G(0) + w span(U)`` when the LP itself implies ``t_U ≥
    span(U)`` (the fluid model; slotted mode rounds ``span`` up, the LP does not). The
    release child (all of ``U`` completes before the next release event ``R``) is not
    covered by a weighted LP (its ``U`` event sits after ``R``, which would charge ``w R``
    for a completion before ``R``); the weight-0 LP covers it (put its ``U`` event at
    ``R`` at no cost), so it keeps that LP's bound when it was solved (``w_0 = 0``), else
    its parent's.

    Release children (``release_bound="lp"``, default; docs/theory.md#release-bounds). The
    release child of a node (``U`` completes before the next release event ``R``) is
    bounded at its parent by ``max_w (G(w) - w R) + LB(U)``, the most over the node's group
    LPs solved (at the weights ``w`` of the node's children, or 0), and never below the
    node's own bound. Why: in every schedule of the child, ``U`` is done by ``R``, and the
    group LP puts ``U``'s event after the release event ``R``, whose time is fixed at
    ``R``; so the schedule, with ``U``'s event at ``R`` (an empty interval after the
    release event), is feasible for every group LP of the node and costs there the
    suffix's ``Σ w C`` plus ``w R``: the suffix costs at least ``G(w) - w R``, and ``U``
    at least ``LB(U)`` apart, as in every node. This is never below the rule before
    (``release_bound="parent"``: the weight-0 LP when solved, else the node's own bound):
    ``G`` is concave in ``w`` with slope ``t_U ≥ R``, so ``G(w) - w R ≥ G(0)``. Measured, it
    seldom prunes more (a few percent of the nodes): half the nodes being release children
    was not what left nodes open (below).

    Exact small subsets (``exact_subsets``, default :data:`EXACT_SUBSETS` with releases;
    docs/theory.md#release-bounds). Where the bound fell short, measured on a 4×4 instance of
    15 coflows with releases (1035 nodes): the unordered sets ``U`` of 4-6 coflows recur at
    many nodes (the same early coflows, with the later release events interleaved with the
    suffix in every way), and for them the chain bound was 5.7 below the fluid optimum of
    ``U`` alone, 0.15 % of the optimum and most of the root gap (9.1). With releases the
    chain bound only sees, per release level, the load released from then on, not the
    idle time forced between releases. So a set ``U`` of at most ``exact_subsets`` coflows
    (at least two, not all) whose other bounds leave the node open is bounded by the fluid
    optimum of the sub-instance ``U`` (its own flows, releases, weights and capacities):
    restricting any schedule of the instance to ``U``'s flows is a schedule of ``U`` alone
    (the other flows only took capacity), so ``Σ_{j∈U} w_j C_j ≥ OPT(U)``. ``OPT(U)`` is
    proven by the same search on the sub-instance, without its heuristic and with the
    node's target as cutoff (it proves ``min(target, OPT(U))``: every leaf is pruned or
    below the cutoff), memoized per set; one such search may take
    :data:`SUBSET_SHARE` of the time left, and when stopped there its open nodes' least
    bound is used (still a bound of ``OPT(U)``). ``details["subset_solves"]`` counts them
    (their LPs are in ``lps`` and ``lp_seconds``).

    Warm starts (``warm_start=True``, default; ``--param warm_start=false`` solves every LP
    from scratch, the same optima): a node's group LP is held in one HiGHS object
    (:class:`~coflowlab.solvers.WarmLP`) and solved from its parent's optimal basis, carried
    over by what each column and row means
    (:func:`~coflowlab.formulations.order_lp.basis_keys`): a coflow child's ``U - j`` event
    takes the parent's ``U`` names, ``j``'s event and the flows of ``j`` are new, and ``j``'s
    event starts at ``U - j``'s (the parent's point, with nothing sent in between); a release
    child and a leaf below a one-coflow node keep their parent's names. The node's LPs at
    other weights change one cost of the held LP and re-solve from its basis. A warm solve
    runs the primal simplex without presolve; one that does not end optimal (or says
    infeasible) is repeated from scratch (``details["warm_fallbacks"]``). Measured on a 4×4
    instance of 17 coflows with releases (385 nodes, 547 LPs; the same nodes either way):
    HiGHS iterations per node LP about halve for a child and drop from about 700 to 30 for
    another weight. On five fixed instances, old and new path alternating in one process,
    LP time fell 20-38% and CPU time 10-26% (the README's exact-methods section). The
    heuristic's order LPs stay cold: warm-started from the previous swap's basis
    they were slower (8×8, 21 coflows: 31.5 s against 26.9 s).

    Large node LPs by the interior-point method (``lp_method="auto"``, default): a node LP
    with at least :data:`IPM_COLUMNS` columns is solved from scratch by HiGHS's
    interior-point method with crossover instead of the warm primal simplex (crossover
    leaves an optimal basis, so its children and its other weights still start warm).
    Measured on 711 node LPs saved from searches at the frontier (8×8 with releases, 20
    coflows; 8×8 without, 26; 4×4 with releases, 21; 4×4 without, 27), each solved both
    ways in one process: below 4,000 columns the warm simplex was faster (0.5-3.7 ms against
    1.7-11 ms per LP), above it the interior-point method (5,000-7,000 columns: 14.4 against
    21.6 s over 101 LPs; 7,000 and more: 12.4 against 17.8 s over 56), the same optima to
    within 6e-15 relative. The large LPs are those of 8×8 with releases, where HiGHS was
    95-97 % of the search. ``"simplex"``: the warm simplex for every node LP (the rule
    before); ``"ipm"``: the interior-point method for every node LP.

    Parallel search (``workers=K``, default 1): the search runs on ``K`` processes forked
    after the heuristic (:mod:`~coflowlab.formulations.parallel_search`). They take nodes
    from a shared queue that starts with the root, search each one's subtree depth first as
    above, and prune against the least value any of them found (kept in shared memory). A
    process that sees another one idle while nothing is queued gives away the node of its
    stack with the least bound (not the one it pops next): the other process then works on
    what the one-process search would reach soonest, rather than on the weakest siblings
    near the root, whose subtrees a later incumbent usually prunes. Each process keeps its
    own memos (chain bounds, small-subset optima) and warm starts from then on. The bound
    returned on a time limit is the least of every process's open nodes, the nodes still
    queued and the incumbent, so it is as valid as on one process; the optimum proven is the
    same, but the nodes searched and, among equal optima, the schedule returned depend on
    timing (the best value wins, then the least completion order). ``details["workers"]``
    and ``details["worker_nodes"]`` (nodes bounded per process) describe the run; ``lps``,
    ``lp_seconds`` and the other counters add up over the processes, so ``lp_seconds`` can
    exceed the wall time. Measured in the README's exact-methods section.

    Dominance: coflow ``a`` goes before ``b`` when, on every (ingress, egress) pair, ``a``'s
    demand is at most ``b``'s, ``w_a ≥ w_b`` and ``r_a ≤ r_b`` (all flows released with their
    coflow); identical coflows are thereby ordered by index. Exchange argument: on each pair,
    pool the two coflows' rate profiles; give ``a`` the earliest ``D_a`` units of the pool
    (all at or after ``r_a``, finished by ``C_b`` because ``b`` alone moved ``D_b ≥ D_a``
    by then) and ``b`` the rest (nothing of it before ``r_b``, finished by ``C_a``). Port
    usage is unchanged, so the schedule stays feasible, and the cost changes by
    ``(w_a - w_b)(C_b - C_a) ≤ 0``. The lexicographically smallest optimal completion
    vector (in a linear extension of the rule) therefore obeys every rule at once. With
    dependencies between coflows this rule is off; a dependency is a precedence itself.
    (Equal *port loads* are not enough when ports are coupled: theory I4 has ``B + C``
    with ``A``'s loads but not its pairs.)

    Initial incumbent: greedy strict-priority schedules in the Smith (``ρ / w``), SEBF,
    FIFO and largest-weight orders, and in the *chain order* (built backwards: the last
    coflow of the remaining ``U`` minimises ``w_j span(U) + LB(U - j)``; with the table,
    an optimal order of the concurrent-open-shop relaxation); each is re-solved as the
    order LP of the sequence it produced, then improved by adjacent swaps (within a fifth
    of the time limit). The returned schedule is decoded from the incumbent's LP; when it
    happens to finish a coflow before its predecessor in the sequence (it then belongs to
    a cheaper sequence), its verified cost is returned.

    Proven optimal when every node is pruned (within ``mip_gap``); on the time limit, the
    incumbent, the least bound of the open nodes and the gap (status ``time_limit``). The
    same on an interrupt (Ctrl-C inside :func:`coflowlab.solvers.interruptible`, polled
    before every LP), with status ``interrupted``; the search reports its incumbent and
    bound to the block's progress hook.

``algorithm="mip"``: one MIP over ``n + q`` event positions (``q`` distinct positive
    release times): binaries assign each position to a coflow's completion or to a release
    event (releases in time order); amounts per flow and position; cumulative amounts forced
    to the size from the coflow's position on, and to zero before its flows' release event
    or a predecessor's completion; ``C_j ≥ t_p - H (1 - z_{jp})`` with a horizon ``H`` that
    some optimal schedule respects (from the heuristic incumbent ``U``: a coflow of weight
    ``w_j > 0`` completes by ``(U - Σ_{i≠j} w_i (r_i + ρ_i)) / w_j`` in every optimal
    schedule; coflows of weight 0 can be served last, one by one). The dominance rules are
    added as constraints. A release event's position only needs ``t_p ≥ R_i``, so it may
    come after a completion that happens later than ``R_i``: the positions are not the
    schedule's interleaving, and the sequence is read from the MIP's completion *times*
    instead (release events strictly before each completion). The MIP's solution is then
    offered twice: re-solved as the order LP of that sequence (never worse: the LP contains
    the MIP's schedule), and as the schedule decoded from the MIP's own times and amounts
    (verified; its cost is ``details["mip_schedule_objective"]``). The heuristic incumbent
    is returned only when strictly cheaper than both. Limited to ``max_coflows`` coflows
    (default :data:`MAX_MIP_COFLOWS`): beyond, :class:`~coflowlab.exceptions.ModelTooLargeError`.

The branch and bound also runs the slotted model (``exact-slotted --param algorithm=bnb``,
:mod:`~coflowlab.formulations.exact_slotted_bnb`): ``_Data(..., integral=True)`` rounds the
makespan and single-coflow bounds up to whole slots, rounds every bound up to a whole number
when the weights are whole, and solves each leaf's order LP with whole times and amounts.

Both algorithms ignore deadlines (``deadline-fluid`` reads them), and neither has a default
time limit (``SolverOptions(time_limit=S)``, ``coflowlab solve --time-limit S``). Their
results pass the optimality check of :func:`coflowlab.solution.schedule_solution`: status
``optimal`` only when the verified cost of the returned schedule equals the proven bound.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from coflowlab.exceptions import ModelTooLargeError, SolverError
from coflowlab.instance import Instance
from coflowlab.list_scheduling import list_schedule
from coflowlab.orderings import instance_order
from coflowlab.schedules import FluidSchedule, SlottedSchedule
from coflowlab.solution import Solution, SolutionKind, schedule_solution
from coflowlab.solvers import (
    LinearModel,
    ModelBuilder,
    ProgressReporter,
    SolveResult,
    SolverOptions,
    SolveStatus,
    interrupt_requested,
    relative_gap,
    solve,
)
from coflowlab.solvers.highs_lp import BASIC, LOWER, Basis, WarmLP, carry_basis
from coflowlab.verifier import verify

from ._fluid_bounds_jit import subset_tables
from .fluid_bounds import LazyChainBound
from .order_lp import (
    OrderLP,
    basis_keys,
    build_group_lp,
    build_order_lp,
    coflow_release_slot,
    decode_schedule,
    fluid_schedule_from_intervals,
    release_values,
)
from .parallel_search import SharedSearch, check_workers, run_workers

__all__ = [
    "ALGORITHMS",
    "MAX_BNB_COFLOWS",
    "MAX_MIP_COFLOWS",
    "dominance_precedence",
    "solve_exact_fluid",
]

METHOD = "exact-fluid"

ALGORITHMS = ("bnb", "mip")
"""The values of ``algorithm=`` (``--param algorithm=...``); the differential tests run
every one of them against brute force."""

CHAIN_BOUNDS = ("auto", "table", "lazy", "none")
"""The values of ``chain_bound=`` (``--param chain_bound=...``), see
:func:`solve_exact_fluid`."""

RELEASE_BOUNDS = ("lp", "parent")
"""The values of ``release_bound=`` (``--param release_bound=...``), see
:func:`solve_exact_fluid`."""

LP_METHODS = ("auto", "simplex", "ipm")
"""The values of ``lp_method=`` (``--param lp_method=...``), see :func:`solve_exact_fluid`."""

IPM_COLUMNS = 4000
"""With ``lp_method="auto"``, node LPs with at least this many columns are solved by the
interior-point method from scratch, smaller ones by the warm primal simplex (module notes,
"Large node LPs")."""

EXACT_SUBSETS = 8
"""``exact_subsets=None`` (the default): with release dates, unordered sets of up to this many
coflows are bounded by their own fluid optimum (module notes, "Exact small subsets"); without
releases none. Measured (20 s, one process alternating with the rule before, 4×4 with
releases, n = 15-17): nodes fell 2-5 fold on two instances (CPU 8.7 → 2.3 s, 5.2 → 2.4 s),
one more was proven (17 coflows), one stayed open either way; on 8×8 the nodes stayed the
same and the sub-searches cost 6-50 % more CPU (most on the quickest instances); 12 stalls
in sub-searches as hard as the whole."""

SUBSET_SHARE = 0.1
"""The share of the time left that one search on a small subset (``exact_subsets``) may
take; stopped there, it returns its open nodes' least bound."""

MAX_BNB_COFLOWS = 40
"""Default coflow limit of the branch and bound (past it, even good bounds leave too many
nodes; it then mostly returns its heuristic incumbent at the time limit)."""

MAX_MIP_COFLOWS = 10
"""Default coflow limit of the MIP: ``(n + q)²`` binaries and ``|E| (n + q)`` amounts with
weak big-M rows; on random 4×4 instances HiGHS proves optimality for about 5 coflows within
a minute (``benchmarks/bench_exact.py``), so larger models only waste time."""

MAX_SUBSET_TABLE = 20
"""Up to this many coflows, the makespan bound and the chain bound are always tabulated for
every subset (``2^n`` entries; a compiled pass in ``O(2^n (n + levels · ports))`` time, about
0.8 s of CPU at 20 coflows on 8×8 with releases); past it, see :data:`MAX_SUBSET_TABLE_AUTO`,
and ``chain_bound="auto"`` proves the chain bound per node on demand
(:class:`~coflowlab.formulations.fluid_bounds.LazyChainBound`)."""

MAX_SUBSET_TABLE_AUTO = 24
"""With ``table_coflows=None`` (the default), instances of up to this many coflows are still
tabulated when the table's work ``2^n (n + L)`` (``L``: the (release level, port) pairs with
load) is at most :data:`TABLE_WORK`: without releases that is every instance up to 24
coflows on 4×4 (three arrays of ``2^24`` floats, 400 MB, while it is built). Why: the lazy
proof of the chain bound is weak past 20 coflows (on a 4×4 instance of 21 coflows without
releases it proves 4092 at the root where the table gives 4998 and the optimum is 5010), and
the table at 21 coflows turns a search that does not finish in 60 s into one of 2613
nodes."""

TABLE_WORK = 6e8
"""The most work ``2^n (n + L)`` (:data:`MAX_SUBSET_TABLE_AUTO`) tabulated past
:data:`MAX_SUBSET_TABLE` coflows by default: about 1.5 s of CPU (24 coflows on 4×4 without
releases; on random instances 4×4 with releases stops at 21 coflows, 8×8 without releases
at 23)."""

TABLE_SECONDS_PER_WORK = 3e-9
"""CPU seconds per unit of the table's work (measured: 2.6-2.8 ns on the 2-core test machine):
past :data:`MAX_SUBSET_TABLE` coflows the default tabulates only when this estimate is at
most a tenth of the time limit (the table is built before the search and cannot stop on
it)."""

MAX_TABLE_COFLOWS = 26
"""The most coflows ``table_coflows=`` may ask to tabulate (three arrays of ``2^26`` floats:
1.6 GB while the table is built)."""

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

_WHOLE_TOL = 1e-9
"""Slack when rounding a time up to whole slots (the slotted mode of the search)."""


# ============================================================================ shared data
def _subset_tables(
    load_after: FloatArray,
    levels: FloatArray,
    w: FloatArray,
    prec: npt.NDArray[np.bool_],
    whole: bool = False,
) -> tuple[FloatArray, FloatArray]:
    """Per subset ``S`` of the coflows (as a bit mask): ``span[S]``, a lower bound on the
    time by which all of ``S`` can complete (for each release level ``R``, ``R`` plus the
    busiest port's load of the flows of ``S`` released at ``R`` or later), and the *chain
    bound* ``chain[S] = min_j (chain[S - j] + w_j span[S])`` over the ``j`` of ``S`` that no
    precedence forces before another coflow of ``S``.

    ``chain[S]`` bounds ``Σ_{j∈S} w_j C_j`` from below in every schedule that obeys the
    precedences (and some optimal schedule does): the coflow of ``S`` that completes last
    does so no earlier than ``span[S]``, and the rest is bounded the same way. Without
    releases ``span`` is the exact makespan of ``S`` (each port's load; BvN) and, without
    precedences, ``chain`` is the concurrent-open-shop optimum on the ports (docs/theory.md#cos),
    whose permutation schedules make the recursion exact for that relaxation.

    ``whole``: the slotted model (whole release levels; slots end at whole times), where the
    time a port needs is rounded up to whole slots, ``ceil(need)``.
    """
    n = len(w)
    succ = np.array([int(sum(1 << int(k) for k in np.flatnonzero(prec[j]))) for j in range(n)],
                    dtype=np.int64)  # fmt: skip
    span, chain = subset_tables(
        np.ascontiguousarray(load_after, dtype=float), np.asarray(levels, dtype=float),
        np.asarray(w, dtype=float), succ, whole, _WHOLE_TOL,
    )  # fmt: skip
    return span, chain


def dominance_precedence(instance: Instance) -> npt.NDArray[np.bool_]:
    """``P[a, b]``: some optimal schedule completes ``a`` no later than ``b`` (module notes).

    Without dependencies: ``a``'s demand is at most ``b``'s on every port pair, ``w_a ≥
    w_b``, ``r_a ≤ r_b`` and both coflows release all flows with the coflow; mutual
    dominance (identical coflows) goes to the lower index. With dependencies, ``P`` is the
    dependency relation itself.

    Examples -------- Instance I2 (docs/theory.md#instances) (one port, p = (3, 1, 2), w = (3, 1,
    1)): coflow 1 before 2.

    >>> from coflowlab.instances.examples import theory_i2
    >>> np.argwhere(dominance_precedence(theory_i2())).tolist()
    [[1, 2]]
    """
    n = instance.num_coflows
    prec = np.zeros((n, n), dtype=bool)
    if len(instance.dependencies):
        a, b = instance.dependencies.T
        prec[a, b] = True
        return prec
    m = instance.num_ports
    demand = np.zeros((n, m * m))
    fc = instance.flow_coflow
    np.add.at(demand, (fc, instance.flow_src * m + instance.flow_dst), instance.flow_size)
    same = np.ones(n, dtype=bool)
    np.logical_and.at(same, fc, instance.flow_release == instance.coflow_release[fc])
    w, r = instance.coflow_weight, instance.coflow_release
    dom = (
        (demand[:, None, :] <= demand[None, :, :]).all(axis=2)
        & (w[:, None] >= w[None, :])
        & (r[:, None] <= r[None, :])
        & same[:, None]
        & same[None, :]
    )
    idx = np.arange(n)
    prec = dom & (~dom.T | (idx[:, None] < idx[None, :]))
    np.fill_diagonal(prec, False)
    return prec


@dataclass
class _Data:
    """What every part of the search needs, computed once."""

    instance: Instance
    options: SolverOptions  # the caller's; each solve gets the time left of `deadline`
    deadline: float
    start: float = field(default_factory=time.perf_counter)
    # slotted mode (coflowlab.formulations.exact_slotted_bnb): whole releases, sizes and
    # capacities; leaves are solved with whole event times and amounts
    integral: bool = False
    whole_objective: bool = False  # integral and every weight whole: Σ w C is whole
    milps: int = 0
    n: int = 0
    w: FloatArray = field(default_factory=lambda: np.zeros(0))
    values: FloatArray = field(default_factory=lambda: np.zeros(0))
    levels: FloatArray = field(default_factory=lambda: np.zeros(0))
    slot_min: IntArray = field(default_factory=lambda: np.zeros(0, np.int64))
    prec: npt.NDArray[np.bool_] = field(default_factory=lambda: np.zeros((0, 0), bool))
    lb_single: FloatArray = field(default_factory=lambda: np.zeros(0))
    load_after: FloatArray = field(default_factory=lambda: np.zeros((0, 0, 0)))
    port_time: FloatArray = field(default_factory=lambda: np.zeros((0, 0)))
    lps: int = 0
    lp_time: float = 0.0
    # chain bound (module notes): "auto" (table up to table_limit() coflows, else lazy),
    # "table", "lazy" or "none"; chain_budget: subsets the lazy search refines per call
    chain_bound: str = "auto"
    chain_budget: int = 2000
    # the most coflows the chain bound is tabulated for; None: automatic (table_limit)
    table_coflows: int | None = None
    weighted_group: bool = True  # the group LP weights U's event (module notes)
    # how a release child is bounded at its parent (module notes, "Release children")
    release_bound: str = "lp"
    # U of at most this many coflows is bounded by its own fluid optimum (module notes)
    exact_subsets: int = 0
    sub_solves: int = 0
    cutoff_slack: float = 0.0  # the incumbent less the search's pruning threshold
    _sub: dict[int, tuple[float, bool]] = field(default_factory=dict)  # (bound, exact)
    # node LPs re-solved from their parent's basis (module notes); False: from scratch
    warm_start: bool = True
    lp_method: str = "auto"  # "auto", "simplex" or "ipm" (module notes, "Large node LPs")
    ipm_lps: int = 0  # node LPs solved by the interior-point method
    warm_fallbacks: int = 0  # warm solves that did not end optimal, re-solved from scratch
    workers: int = 1  # processes of the branch and bound (module notes, "Parallel search")
    span: FloatArray | None = None
    chain: FloatArray | None = None
    lazy: LazyChainBound | None = None
    _lb: dict[int, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        inst = self.instance
        self.n = inst.num_coflows
        self.w = np.asarray(inst.coflow_weight, dtype=float)
        self.values = release_values(inst)
        self.levels = np.concatenate([[0.0], self.values])
        self.slot_min = coflow_release_slot(inst)
        self.prec = dominance_precedence(inst)
        rho = np.asarray(inst.bottleneck, dtype=float)
        if self.integral:
            rho = np.ceil(rho - _WHOLE_TOL)  # a coflow alone needs ceil(ρ) slots (König)
            self.whole_objective = bool(np.all(self.w == np.round(self.w)))
        self.lb_single = self.w * (inst.coflow_release + rho)
        m, q = inst.num_ports, len(self.values)
        fslot = np.searchsorted(self.values, inst.flow_release, side="right")
        cap = inst.fabric.port_capacity
        # load_after[j, i, v]: time port v needs for j's flows released at levels[i] or later
        per = np.zeros((self.n, q + 1, 2 * m))
        for side, port in ((0, inst.flow_src), (m, inst.flow_dst)):
            np.add.at(
                per, (inst.flow_coflow, fslot, side + port), inst.flow_size / cap[side + port]
            )
        self.load_after = np.flip(np.cumsum(np.flip(per, axis=1), axis=1), axis=1)
        self.port_time = np.asarray(inst.port_time, dtype=float)
        if self.chain_bound in ("auto", "table") and self.n <= self.table_limit():
            self.span, self.chain = _subset_tables(
                self.load_after, self.levels, self.w, self.prec, self.integral
            )
        elif self.chain_bound in ("auto", "lazy"):
            self.lazy = LazyChainBound(
                self.load_after, self.levels, self.w, self.prec, self.lb_single,
                self.port_time, whole=self.integral, budget=self.chain_budget,
                time_left=self.time_left,
            )  # fmt: skip

    def table_limit(self) -> int:
        """The most coflows the chain bound is tabulated for: ``table_coflows``, or by
        default :data:`MAX_SUBSET_TABLE`, raised to :data:`MAX_SUBSET_TABLE_AUTO` when the
        table's work is at most :data:`TABLE_WORK`."""
        if self.table_coflows is not None:
            return self.table_coflows
        pairs = int(np.count_nonzero(self.load_after.sum(axis=0) > 0))
        work = 2.0**self.n * (self.n + pairs)
        # under a time limit, at most a tenth of it for the table (it is not interruptible)
        limit = self.deadline - self.start
        cap = min(TABLE_WORK, 0.1 * limit / TABLE_SECONDS_PER_WORK)
        if self.n <= MAX_SUBSET_TABLE_AUTO and work <= cap:
            return MAX_SUBSET_TABLE_AUTO
        return MAX_SUBSET_TABLE

    def counters(self) -> dict[str, float]:
        """The work counted so far (:data:`_COUNTERS`, and the subsets the lazy chain
        bound refined): what a parallel search's processes add up."""
        got = {k: getattr(self, k) for k in _COUNTERS}
        got["refined"] = self.lazy.refined if self.lazy is not None else 0
        return got

    def add_counters(self, delta: dict[str, float]) -> None:
        """Adds another process's :meth:`counters` (the differences over its run)."""
        for key, value in delta.items():
            if key == "refined":
                if self.lazy is not None:
                    self.lazy.refined += int(value)
            else:
                setattr(self, key, getattr(self, key) + value)

    def time_left(self) -> float:
        if interrupt_requested():  # Ctrl-C: stop as at the time limit, labelled interrupted
            return 0.0
        return self.deadline - time.perf_counter()

    def members(self, mask: int) -> IntArray:
        """The coflows of the bit mask ``mask``."""
        return np.array([j for j in range(self.n) if (mask >> j) & 1], dtype=np.int64)

    def makespan_bound(self, idx: IntArray, mask: int) -> float:
        """A lower bound on the time by which all of ``idx`` (the coflows of ``mask``) can
        complete."""
        if self.span is not None:
            return float(self.span[mask])
        if not len(idx):
            return 0.0
        need = self.load_after[idx].sum(axis=0).max(axis=1)  # per release level
        if self.integral:
            need = np.ceil(need - _WHOLE_TOL)
        return float((self.levels + need)[need > 0].max(initial=0.0))

    def round_bound(self, bound: float) -> float:
        """A bound as it applies to the schedules searched: in the slotted mode with whole
        weights every ``Σ w C`` is a whole number, so ``bound`` proves ``ceil(bound)`` (less
        a solver-tolerance margin); otherwise ``bound`` itself."""
        if not self.whole_objective or not math.isfinite(bound):
            return bound
        return float(math.ceil(bound - min(0.5, 1e-6 * max(1.0, abs(bound)))))

    def lower_bound(self, mask: int, target: float = math.inf) -> float:
        """A lower bound on ``Σ_{j∈U} w_j C_j`` in any schedule (module notes); with the
        lazy chain bound, the search tries to prove at least ``target`` (the value that
        prunes the caller's node)."""
        best = self._port_bound(mask)
        if self.chain is not None:
            best = max(best, float(self.chain[mask]))
        elif self.lazy is not None and best < target:
            best = max(best, self.lazy.bound(mask, target))
        small = 2 <= mask.bit_count() <= min(self.exact_subsets, self.n - 1)
        if small and best < target < math.inf:
            best = max(best, self._subset_optimum(mask, target))
        return best

    def _subset_optimum(self, mask: int, target: float) -> float:
        """A lower bound on the fluid optimum of the coflows of ``mask`` alone (module
        notes, "Exact small subsets"): the same search on the sub-instance, without its
        heuristic, with ``target`` as its cutoff, so it proves ``min(target, optimum)``;
        memoized, and the optimum itself once a schedule below the cutoff is found."""
        known = self._sub.get(mask)
        if known is not None and (known[1] or known[0] >= target + self.cutoff_slack):
            return known[0]
        left = self.time_left()
        if left <= 0:
            raise _OutOfTime
        # a share of the time left: a hard subset must not stall the search above it
        until = time.perf_counter() + SUBSET_SHARE * left
        sub = _Data(
            self.instance.subset(self.members(mask).tolist()), self.options, until,
            release_bound=self.release_bound, warm_start=self.warm_start,
            lp_method=self.lp_method,
        )  # fmt: skip
        # no schedule, a cutoff: past the caller's target by the gap its threshold leaves
        # below the incumbent, so that a node pruned by it reports a bound at the incumbent
        inc = _Incumbent(value=target + self.cutoff_slack)
        try:
            stats = _branch_and_bound(sub, inc, 0.0)
        finally:
            self.sub_solves += 1
            self.lps += sub.lps
            self.lp_time += sub.lp_time
        if not stats["finished"] and self.time_left() <= 0:
            raise _OutOfTime
        # stopped on its share: its open nodes' least bound is still a valid bound
        value = float(stats["bound"])
        if known is None or value > known[0]:
            self._sub[mask] = (value, inc.found and stats["finished"])
        return max(value, known[0]) if known is not None else value

    def _port_bound(self, mask: int) -> float:
        """The bounds of ``U`` other than the chain bound (module notes), memoized."""
        if mask in self._lb:
            return self._lb[mask]
        idx = self.members(mask)
        inst = self.instance
        w, single = self.w[idx], self.lb_single[idx]
        best = float(single.sum())
        pt = self.port_time[idx]
        rel = inst.coflow_release[idx]
        ratio = np.divide(pt, w[:, None], out=np.full(pt.shape, np.inf), where=w[:, None] > 0)
        order = np.argsort(ratio, axis=0, kind="stable")
        for level in np.unique(rel):
            late = rel >= level
            comp = np.cumsum(np.where(late[order], np.take_along_axis(pt, order, 0), 0.0), 0)
            smith = (np.where(late[order], w[order], 0.0) * comp).sum(axis=0).max()
            value = level * w[late].sum() + smith + single[~late].sum()
            best = max(best, float(value))
        self._lb[mask] = best
        return best

    def solve_lp(self, lp: OrderLP, *, timed: bool = True) -> SolveResult | None:
        """Solves one order or group LP; ``None`` if it is infeasible. ``timed``: within
        the time limit (raises :class:`_OutOfTime` past it)."""
        if lp.model is None:
            return None
        return self._solve_within_limit(lp.model, timed, "lps", f"{METHOD}: an order LP")

    def solve_node_lp(
        self, lp: OrderLP, start: _Start | None
    ) -> tuple[SolveResult | None, WarmLP | None]:
        """One node's group LP within the time limit: with ``warm_start``, held in a
        :class:`~coflowlab.solvers.WarmLP` and solved from the basis carried over from
        ``start`` (its parent's LP; module notes) or, when large (``lp_method``), by the
        interior-point method from scratch, else as :meth:`solve_lp`. Returns the
        result (``None`` if infeasible) and the held LP (``None`` when solved from scratch by
        :meth:`solve_lp`), to re-solve at other weights (:meth:`resolve_weight`) and to
        read the basis its children start from (:meth:`node_start`)."""
        if not self.warm_start or lp.model is None:
            return self.solve_lp(lp), None
        left = self.time_left()
        if left <= 0:
            raise _OutOfTime
        begin = time.perf_counter()
        held = WarmLP(lp.model)
        ipm = self.lp_method == "ipm" or (
            self.lp_method == "auto" and lp.model.num_vars >= IPM_COLUMNS
        )
        basis = None if start is None or ipm else self._carried(start, lp)
        warm = basis is not None and held.set_basis(basis)
        res = held.solve(warm=warm, time_limit=None if math.isinf(left) else left, ipm=ipm)
        self.lp_time += time.perf_counter() - begin
        self.lps += 1
        self.ipm_lps += ipm
        if res.status is SolveStatus.OPTIMAL:
            return res, held
        if res.status is SolveStatus.TIME_LIMIT_NO_SOLUTION:
            raise _OutOfTime
        # anything else (a numerical failure, an "infeasible" verdict on an LP that always
        # has a point) is settled by the solve from scratch
        self.warm_fallbacks += 1
        return self.solve_lp(lp), None

    def resolve_weight(self, held: WarmLP, lp: OrderLP, weight: float) -> SolveResult | None:
        """The group LP ``lp`` (held by ``held``) with its first event weighted ``weight``:
        only that cost changes, so HiGHS re-solves from its current optimal basis (primal
        feasible for the new costs)."""
        left = self.time_left()
        if left <= 0:
            raise _OutOfTime
        begin = time.perf_counter()
        held.set_cost(int(lp.completion_event[0]), weight)
        res = held.solve(warm=True, time_limit=None if math.isinf(left) else left)
        self.lp_time += time.perf_counter() - begin
        self.lps += 1
        if res.status is SolveStatus.OPTIMAL:
            return res
        if res.status is SolveStatus.TIME_LIMIT_NO_SOLUTION:
            raise _OutOfTime
        self.warm_fallbacks += 1
        assert lp.model is not None
        cost = lp.model.c.copy()
        cost[lp.completion_event[0]] = weight
        return self.solve_lp(replace(lp, model=replace(lp.model, c=cost)))

    def node_start(self, lp: OrderLP, held: WarmLP | None) -> _Start | None:
        """What the children of a node start from: its LP's optimal basis (read now, before
        any re-solve at another weight) and the keys naming its columns and rows."""
        if held is None:
            return None
        keys = basis_keys(lp, self.instance.num_ports, len(self.values))
        return None if keys is None else _Start(keys, held.basis(), len(lp.groups))

    def _carried(self, start: _Start, lp: OrderLP) -> Basis | None:
        """The parent's basis carried over to a child's LP (module notes): a coflow child
        has one group more (``U - j`` takes ``U``'s names, ``j``'s event is new), a release
        child or a leaf below a one-coflow node the same groups."""
        grew = len(lp.groups) == start.num_groups + 1
        if not grew and len(lp.groups) != start.num_groups:
            return None
        keys = basis_keys(
            lp, self.instance.num_ports, len(self.values), new_group=1 if grew else None
        )
        if keys is None:
            return None
        cols, rows = carry_basis(start.keys, start.basis, keys)
        e = int(lp.completion_event[1]) if grew else 0
        if grew and int(lp.completion_event[0]) == e - 1:
            # j's event starts where U - j's does (t_j = t_{U-j}, the order row at its
            # bound): the parent's point, with nothing sent between the two events
            cols[e], rows[e - 1] = BASIC, LOWER
        return cols, rows

    def solve_whole(self, lp: OrderLP, *, timed: bool = True) -> SolveResult | None:
        """The slotted mode's value of one event sequence: the order LP with whole event
        times and amounts (a MIP; module :mod:`~coflowlab.formulations.exact_slotted_bnb`
        proves it exact for the slotted model); ``None`` if infeasible. Raises
        :class:`_OutOfTime` past the time limit."""
        if lp.model is None:
            return None
        model = replace(lp.model, integrality=np.ones(lp.model.num_vars, dtype=bool))
        return self._solve_within_limit(model, timed, "milps", "exact-slotted: an order MIP")

    def _solve_within_limit(
        self, model: LinearModel, timed: bool, counter: str, what: str
    ) -> SolveResult | None:
        """One solve of the search within what is left of the time limit, counted in the
        attribute ``counter``: the result when optimal, ``None`` when infeasible; raises
        :class:`_OutOfTime` when stopped."""
        left = self.time_left() if timed else math.inf
        if left <= 0:
            raise _OutOfTime
        start = time.perf_counter()
        limit = None if math.isinf(left) else left
        # short solves: no solver callbacks; the search polls the interrupt before each one
        res = solve(model, replace(self.options, time_limit=limit), interruptible=False)
        self.lp_time += time.perf_counter() - start
        setattr(self, counter, getattr(self, counter) + 1)
        if res.status is SolveStatus.OPTIMAL:
            return res
        if res.status is SolveStatus.INFEASIBLE:
            return None
        if res.status in (
            SolveStatus.TIME_LIMIT, SolveStatus.TIME_LIMIT_NO_SOLUTION, SolveStatus.INTERRUPTED
        ):  # fmt: skip
            raise _OutOfTime
        raise SolverError(f"{what} ended with status {res.status.value}")

    def whole_value(self, value: float) -> float:
        """A slotted sequence's value, snapped to the whole number it is (whole weights)."""
        if self.whole_objective and abs(value - round(value)) <= 1e-6 * max(1.0, abs(value)):
            return float(round(value))
        return value


class _OutOfTime(Exception):
    """The time limit was reached inside the search."""


@dataclass(frozen=True, eq=False)
class _Start:
    """A node LP's optimal basis, for its children's warm starts: the keys of its columns
    and rows (:func:`~coflowlab.formulations.order_lp.basis_keys`), their statuses, and
    its number of groups."""

    keys: tuple[IntArray, IntArray]
    basis: Basis
    num_groups: int


@dataclass
class _Incumbent:
    """The best schedule so far: an order LP's solution (``lp``, ``x``), or a schedule
    decoded directly from the MIP (``schedule``, with ``x`` the MIP's values)."""

    value: float = math.inf
    order: tuple[int, ...] = ()
    slots: tuple[int, ...] = ()
    lp: OrderLP | None = None
    x: FloatArray | None = None
    source: str = ""
    schedule: FluidSchedule | SlottedSchedule | None = None

    @property
    def found(self) -> bool:
        """Whether there is an incumbent schedule."""
        return self.x is not None

    def offer(
        self, value: float, order: tuple[int, ...], slots: tuple[int, ...], lp: OrderLP | None,
        x: FloatArray, source: str, schedule: FluidSchedule | SlottedSchedule | None = None,
    ) -> bool:  # fmt: skip
        if value < self.value:
            self.value, self.order, self.slots, self.lp, self.x = value, order, slots, lp, x
            self.source, self.schedule = source, schedule
            return True
        return False


# ============================================================================ heuristics
def _greedy_sequence(
    data: _Data, priority: Sequence[int]
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The event sequence of the strict-priority greedy schedule in ``priority``
    (:func:`coflowlab.list_scheduling.list_schedule`): its completion order and the release
    events before each completion."""
    inst = data.instance
    done = verify(inst, list_schedule(inst, priority, "greedy")).coflow_completion
    rank = np.empty(data.n, dtype=np.int64)
    rank[np.asarray(priority, dtype=np.int64)] = np.arange(data.n)
    return _sequence_of(data, done, rank)


def _sequence_of(
    data: _Data, done: FloatArray, rank: IntArray
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The event sequence of a schedule with completion times ``done`` (ties by ``rank``):
    the completion order, and per completion the release events strictly before it (at
    least its own coflow's). The order LP of this sequence contains the schedule (order_lp
    module notes), so its value is at most the schedule's cost."""
    order = np.lexsort((rank, done))
    slots = np.searchsorted(data.values, done[order], side="left")
    slots = np.maximum.accumulate(np.maximum(slots, data.slot_min[order]))
    return tuple(order.tolist()), tuple(slots.tolist())


def _evaluate(
    data: _Data,
    inc: _Incumbent,
    order: tuple[int, ...],
    slots: tuple[int, ...],
    source: str,
    *,
    timed: bool = True,
) -> float:
    lp = build_order_lp(data.instance, order, slots)
    res = data.solve_whole(lp, timed=timed) if data.integral else data.solve_lp(lp, timed=timed)
    if res is None:
        return math.inf
    assert res.x is not None
    value = data.whole_value(res.objective) if data.integral else res.objective
    inc.offer(value, order, slots, lp, res.x, source)
    return value


def _heuristic(data: _Data, inc: _Incumbent) -> None:
    """Initial incumbent: greedy schedules in a few static orders, then adjacent swaps."""
    inst = data.instance
    names = ["smith", "sebf", "lwf"] + (["fifo"] if inst.has_releases else [])
    seen: set[tuple[int, ...]] = set()
    for name in names:
        prio = tuple(instance_order(inst, name).tolist())
        if prio in seen:
            continue
        seen.add(prio)
        order, slots = _greedy_sequence(data, prio)
        _evaluate(data, inc, order, slots, f"greedy {name}")
    prio = _chain_order(data)
    if prio not in seen:
        order, slots = _greedy_sequence(data, prio)
        _evaluate(data, inc, order, slots, "chain order")
    root = data.lower_bound((1 << data.n) - 1, inc.value)
    if not inc.order or relative_gap(inc.value, root) <= 1e-9:
        return  # nothing found, or already optimal
    # adjacent swaps, within a fifth of the time limit (the search improves it further)
    stop = data.start + 0.2 * (data.deadline - data.start)
    improved, passes = True, 0
    while improved and passes < 2:
        improved, passes = False, passes + 1
        for k in range(data.n - 1):
            if time.perf_counter() > stop:
                return
            swapped = list(inc.order)
            swapped[k], swapped[k + 1] = swapped[k + 1], swapped[k]
            low = data.slot_min[np.asarray(swapped)]
            fit = np.maximum.accumulate(np.maximum(np.asarray(inc.slots), low))
            before = inc.value
            _evaluate(data, inc, tuple(swapped), tuple(fit.tolist()), "adjacent swaps")
            improved |= inc.value < before


def _chain_order(data: _Data) -> tuple[int, ...]:
    """A completion order read off the chain bound, built backwards: the last coflow of
    the remaining set ``U`` is an eligible ``j`` of least ``w_j span(U) + LB(U - j)`` (with
    the tabulated chain bound, an optimal order of the concurrent-open-shop relaxation)."""
    mask = (1 << data.n) - 1
    backwards: list[int] = []
    while mask:
        idx = data.members(mask)
        span = data.makespan_bound(idx, mask)
        best, pick = math.inf, -1
        for j in idx.tolist():
            if data.prec[j, idx].any():
                continue
            value = data.w[j] * span + data.lower_bound(mask & ~(1 << j))
            if value <= best:  # ties to the larger index: it completes later
                best, pick = value, j
        if pick < 0:  # only under contradictory precedences; keep the index order
            pick = int(idx[-1])
        backwards.append(pick)
        mask &= ~(1 << pick)
    return tuple(reversed(backwards))


# ============================================================================ branch and bound
@dataclass(order=True)
class _Node:
    """A node of the search: the fixed suffix (completion order and slots), the release
    events not yet placed (``qrem``) and the unordered coflows (bit mask); ordered by a
    lower bound on every leaf below it."""

    cheap: float
    suffix: tuple[int, ...] = field(compare=False)
    slots: tuple[int, ...] = field(compare=False)
    qrem: int = field(compare=False)
    mask: int = field(compare=False)
    start: _Start | None = field(default=None, compare=False)  # the parent LP's basis
    release: bool = field(default=False, compare=False)  # a release child (counted)


def _root_node(data: _Data, inc: _Incumbent, mip_gap: float) -> _Node:
    """The search's root: every coflow unordered, every release event unplaced."""
    full = (1 << data.n) - 1
    root = data.lower_bound(full, _threshold(data, inc.value, mip_gap))
    return _Node(data.round_bound(root), (), (), len(data.values), full)


def _threshold(data: _Data, best: float, mip_gap: float) -> float:
    """The bound at which a node is pruned, given the best value ``best`` found."""
    if math.isinf(best):
        return math.inf
    slack = max(mip_gap * abs(best), 1e-9 * max(1.0, abs(best)))
    data.cutoff_slack = slack  # the subset searches aim at the incumbent itself
    return best - slack


def _branch_and_bound(
    data: _Data,
    inc: _Incumbent,
    mip_gap: float,
    *,
    stack: list[_Node] | None = None,
    shared: SharedSearch | None = None,
) -> dict[str, Any]:
    """Searches from the root, or from the nodes of ``stack``; with ``shared`` (one process
    of a parallel search, :mod:`~coflowlab.formulations.parallel_search`) it also prunes
    against the best value of the other processes, offers its own, gives a node away when
    another process is idle (:func:`_donated`), and sends no progress reports."""
    if stack is None:
        stack = [_root_node(data, inc, mip_gap)]

    def threshold() -> float:
        best = inc.value if shared is None else min(inc.value, shared.best())
        return _threshold(data, best, mip_gap)

    stats: dict[str, Any] = {
        "nodes": 0, "pruned_by_bound": 0, "infeasible": 0, "leaves": 0, "release_nodes": 0,
        "pruned_after_lp": 0,
    }  # fmt: skip
    pruned_min = math.inf
    finished = False
    node = stack[-1]
    reporter = ProgressReporter(METHOD, "branch and bound")
    if shared is not None:
        reporter.hook = None  # the parent process reports for the whole search

    def release_child_ok(node: _Node, idx: IntArray) -> bool:
        if node.qrem == 0 or not len(idx):
            return False
        limit = data.values[node.qrem - 1]
        if data.slot_min[idx].max() > node.qrem - 1:
            return False
        return data.makespan_bound(idx, node.mask) <= limit * (1 + 1e-12) + 1e-12

    try:
        while stack:
            if shared is not None:
                if shared.stopped():
                    raise _OutOfTime
                if len(stack) > 1 and shared.hungry():
                    shared.put(stack.pop(_donated(stack)))
            node = stack.pop()
            if reporter.due():  # the search's bound: as stats["bound"] below, while open
                open_min = min((nd.cheap for nd in stack), default=node.cheap)
                low = min(inc.value, pruned_min, open_min, node.cheap)
                reporter.report(incumbent=inc.value, bound=low, nodes=stats["nodes"])
            if node.cheap >= threshold():
                stats["pruned_by_bound"] += 1
                pruned_min = min(pruned_min, node.cheap)
                continue
            idx = data.members(node.mask)
            if len(idx) == 1 and not release_child_ok(node, idx):
                j = int(idx[0])  # one coflow left and no release event to place: the leaf
                node = _Node(
                    node.cheap, (j, *node.suffix), (node.qrem, *node.slots), node.qrem, 0,
                    node.start,
                )  # fmt: skip
                idx = idx[:0]
            stats["nodes"] += 1
            stats["release_nodes"] += node.release
            groups = ([idx.tolist()] if len(idx) else []) + [[j] for j in node.suffix]
            slots = ([node.qrem] if len(idx) else []) + list(node.slots)
            suffix_w = [float(data.w[j]) for j in node.suffix]
            if not len(idx):  # a leaf: one event sequence, its order LP
                lp = build_group_lp(data.instance, groups, slots, suffix_w)
                res, _ = data.solve_node_lp(lp, node.start)
                if res is None:
                    stats["infeasible"] += 1
                    continue
                lp_value = res.objective
                bound = data.round_bound(lp_value)
                if bound >= threshold():
                    stats["pruned_by_bound"] += 1
                    pruned_min = min(pruned_min, bound)
                    continue
                stats["leaves"] += 1
                assert res.x is not None
                x = res.x
                if data.integral and not _is_whole(x):
                    # slotted mode: the LP is this sequence's bound; its MIP its value
                    whole = data.solve_whole(lp)
                    if whole is None or whole.x is None:
                        stats["infeasible"] += 1
                        continue
                    stats["leaf_mips"] = stats.get("leaf_mips", 0) + 1
                    x, lp_value = whole.x, data.whole_value(whole.objective)
                    if math.isfinite(whole.bound) and whole.bound < lp_value:  # mip_gap > 0
                        pruned_min = min(pruned_min, data.round_bound(whole.bound))
                elif data.integral:
                    lp_value = data.whole_value(lp_value)
                inc.offer(lp_value, node.suffix, node.slots, lp, x, "branch and bound")
                if shared is not None:
                    shared.offer(lp_value)
                continue
            eligible = [j for j in idx.tolist() if not data.prec[j, idx].any()]
            if not eligible:  # cyclic precedences: no order obeys them
                stats["infeasible"] += 1
                continue
            span = data.makespan_bound(idx, node.mask)
            # exact[w]: the group LP with U's event weighted w (module notes); est(w) a lower
            # bound on it: from the LP solved at w0 <= w, plus (w - w0) span(U)
            exact: dict[float, float] = {}
            w0 = min(float(data.w[j]) for j in eligible) if data.weighted_group else 0.0
            start: _Start | None = None
            if node.suffix:
                lp = build_group_lp(data.instance, groups, slots, [w0, *suffix_w])
                res, held = data.solve_node_lp(lp, node.start)
                if res is None:
                    stats["infeasible"] += 1
                    continue
                exact[w0] = res.objective
                start = data.node_start(lp, held)
            else:
                exact[w0] = w0 * span  # U alone: its last completion is at least span(U)

            def est(weight: float) -> float:
                return exact.get(weight, exact[w0] + (weight - w0) * span)  # noqa: B023

            cheap: dict[int, float] = {}
            for j in eligible:
                base = est(float(data.w[j]))
                rest = node.mask & ~(1 << j)
                cheap[j] = data.round_bound(base + data.lower_bound(rest, threshold() - base))
            if node.suffix and data.weighted_group:
                # the weights whose estimate leaves a child open: solve their LP
                for weight in sorted({float(data.w[j]) for j in eligible} - {w0}):
                    if all(cheap[j] >= threshold() for j in eligible if data.w[j] == weight):
                        continue
                    if held is None:
                        value = _group_value(data, groups, slots, [weight, *suffix_w])
                    else:
                        got = data.resolve_weight(held, lp, weight)
                        value = None if got is None else got.objective
                    assert value is not None  # the same constraints as at w0
                    exact[weight] = max(value, est(weight))
                    for j in eligible:
                        if data.w[j] == weight:
                            rest = node.mask & ~(1 << j)
                            base = exact[weight]
                            low = data.lower_bound(rest, threshold() - base)
                            cheap[j] = max(cheap[j], data.round_bound(base + low))
            bound = min(cheap.values(), default=math.inf)
            release = release_child_ok(node, idx)
            if release and data.release_bound == "parent":
                # the rule before release_bound= (for comparison): only the weight-0 LP
                if w0 == 0.0:
                    low = data.lower_bound(node.mask, threshold() - exact[0.0])
                    release_bound = max(node.cheap, data.round_bound(exact[0.0] + low))
                else:
                    release_bound = node.cheap
                bound = min(bound, release_bound)
            elif release:
                # U completes before the next release event R: its schedules put U's event
                # at R in every group LP solved here, so the suffix costs at least
                # G(w) - w R (module notes, "Release children")
                release_bound = _release_child_bound(
                    data, node, exact, threshold(), bool(node.suffix)
                )
                bound = min(bound, release_bound)
            if bound >= threshold():
                stats["pruned_by_bound"] += 1
                stats["pruned_after_lp"] += 1
                pruned_min = min(pruned_min, bound)
                continue
            children = [
                _Node(cheap[j], (j, *node.suffix), (node.qrem, *node.slots), node.qrem,
                      node.mask & ~(1 << j), start)
                for j in eligible
            ]  # fmt: skip
            if release:
                qrem = node.qrem - 1
                child = _Node(release_bound, node.suffix, node.slots, qrem, node.mask, start)
                child.release = True
                children.append(child)
            children.sort(reverse=True)  # the lowest bound is popped first
            stack.extend(children)
        finished = True
    except _OutOfTime:
        stack.append(node)  # the node being bounded when time ran out is still open
    open_min = min((nd.cheap for nd in stack), default=math.inf)
    stats["open_nodes"] = 0 if finished else len(stack)
    stats["bound"] = (
        min(inc.value, pruned_min, open_min) if not finished else min(inc.value, pruned_min)
    )
    stats["finished"] = finished
    return stats


def _donated(stack: list[_Node]) -> int:
    """The position of the node a process gives away (module notes, "Parallel search"):
    the least bound below the top of its stack (the top is what it searches next)."""
    return min(range(len(stack) - 1), key=lambda k: stack[k].cheap)


_COUNTERS = ("lps", "lp_time", "ipm_lps", "warm_fallbacks", "sub_solves", "milps")
"""The counters of :class:`_Data` that a parallel search's processes add up (with the lazy
chain bound's, :meth:`_Data.counters`)."""


def _bnb_worker(data: _Data, inc: _Incumbent, mip_gap: float, shared: SharedSearch) -> dict:
    """One process of the parallel search: takes nodes and searches their subtrees until
    the search is over or its time is up; returns its statistics, the counters it added and
    its incumbent when it improved on the one it started from."""
    start_value = inc.value
    before = data.counters()
    runs = []
    while data.time_left() > 0:
        got, node = shared.take()
        if not got:
            break
        try:
            runs.append(_branch_and_bound(data, inc, mip_gap, stack=[node], shared=shared))
        finally:
            shared.done()
        if not runs[-1]["finished"]:
            shared.stop()  # the others stop too: their open nodes bound the search
            break
    counters = {k: v - before[k] for k, v in data.counters().items()}
    better = inc.value < start_value
    return {
        "runs": runs,
        "counters": counters,
        "incumbent": (inc.value, inc.order, inc.slots, inc.lp, inc.x, inc.source, inc.schedule)
        if better
        else None,
    }


def _parallel_branch_and_bound(data: _Data, inc: _Incumbent, mip_gap: float) -> dict[str, Any]:
    """The search on ``data.workers`` processes (:mod:`.parallel_search`), merged: the same
    statistics as :func:`_branch_and_bound`, summed, and the least of their bounds."""
    root = _root_node(data, inc, mip_gap)
    reporter = ProgressReporter(METHOD, "branch and bound")

    def poll(shared: SharedSearch) -> None:
        reporter.report(incumbent=shared.best())

    results, left, _ = run_workers(
        data.workers, [root], lambda shared: _bnb_worker(data, inc, mip_gap, shared),
        inc.value, poll=poll if reporter.enabled else None, stop_when=interrupt_requested,
    )  # fmt: skip
    runs = [run for res in results for run in res["runs"]]
    stats: dict[str, Any] = {}
    for run in runs:
        for key, value in run.items():
            if key not in ("bound", "finished"):
                stats[key] = stats.get(key, 0) + value
    for res in results:
        data.add_counters(res["counters"])
    # the best incumbent; among equal values the least (order, slots), whatever the timing
    found = sorted(
        (res["incumbent"] for res in results if res["incumbent"] is not None),
        key=lambda got: (got[0], got[1], got[2]),
    )
    if found:
        inc.offer(*found[0])
    finished = not left and all(run["finished"] for run in runs)
    stats["open_nodes"] = stats.get("open_nodes", 0) + len(left)
    stats["bound"] = min([inc.value] + [run["bound"] for run in runs] + [nd.cheap for nd in left])
    stats["finished"] = finished
    stats["workers"] = data.workers
    stats["worker_nodes"] = [sum(run["nodes"] for run in res["runs"]) for res in results]
    return stats


def _release_child_bound(
    data: _Data, node: _Node, exact: dict[float, float], target: float, lp_based: bool
) -> float:
    """The bound of a node's release child (module notes, "Release children"): the most of
    ``exact[w] - w R`` over the group LPs solved (``R``: the release event placed), plus a
    lower bound of ``U`` alone, and never below the node's own bound. ``lp_based``: the
    values in ``exact`` are group LPs with a suffix (else the suffix is empty and costs 0)."""
    big_r = float(data.values[node.qrem - 1])
    lift = max((v - wt * big_r for wt, v in exact.items()), default=0.0) if lp_based else 0.0
    lift = max(lift, 0.0)  # an empty or weight-0 suffix costs at least 0
    low = data.lower_bound(node.mask, target - lift)
    return max(node.cheap, data.round_bound(lift + low))


def _group_value(
    data: _Data, groups: list[list[int]], slots: list[int], weights: list[float]
) -> float | None:
    """The group LP's value (:func:`~coflowlab.formulations.order_lp.build_group_lp`);
    ``None`` if infeasible."""
    res = data.solve_lp(build_group_lp(data.instance, groups, slots, weights))
    return None if res is None else res.objective


def _is_whole(x: FloatArray) -> bool:
    """Every value is a whole number (within solver tolerance)."""
    return bool(np.all(np.abs(x - np.round(x)) <= 1e-7 * np.maximum(1.0, np.abs(x))))


# ============================================================================ MIP
def _horizon(data: _Data, upper: float) -> float:
    """A time by which some optimal schedule completes everything (module notes)."""
    w, single = data.w, data.lb_single
    pos = w > 0
    rest = single.sum() - single
    t_pos = float(((upper - rest[pos]) / w[pos]).max()) if pos.any() else 0.0
    rmax = float(data.instance.flow_release.max(initial=0.0))
    zero_rho = float(data.instance.bottleneck[~pos].sum())
    return max(t_pos, rmax) + zero_rho


class _Rows:
    """Collects the MIP's row blocks as sparse triplets over ``N`` variables."""

    def __init__(self, builder: ModelBuilder, num_positions: int) -> None:
        self.b = builder
        self.P = num_positions
        self.lo_p, self.lo_q = np.tril_indices(num_positions)  # (p, p') with p' <= p
        self.st_p, self.st_q = np.tril_indices(num_positions, -1)  # p' < p

    def add(self, name: str, parts: list[tuple[Any, Any, Any]], nrows: int, **bounds: Any) -> None:
        r = np.concatenate([np.asarray(p[0]).ravel() for p in parts])
        c = np.concatenate([np.asarray(p[1]).ravel() for p in parts])
        v = np.concatenate([np.broadcast_to(np.asarray(p[2], float), np.shape(p[0])).ravel()
                            for p in parts])  # fmt: skip
        mat = sp.csr_matrix((v, (r, c)), shape=(nrows, self.b.num_vars))
        self.b.add_rows(name, mat, **bounds)

    def cumulative(
        self, first_col: IntArray, coef: Any = 1.0, strict: bool = False
    ) -> tuple[Any, Any, Any]:
        """Row ``k·P + p`` gets ``coef_k · Σ_{p' ≤ p} var[first_col_k + p']`` (``p' < p``
        when ``strict``), for each ``k``."""
        pp, qq = (self.st_p, self.st_q) if strict else (self.lo_p, self.lo_q)
        k = np.arange(len(first_col))[:, None]
        rows = k * self.P + pp[None, :]
        cols = np.asarray(first_col)[:, None] + qq[None, :]
        vals = np.broadcast_to(np.asarray(coef, float).reshape(-1, 1), rows.shape)
        return rows, cols, vals


def _mip(data: _Data, inc: _Incumbent) -> _MipSolution | SolveResult:
    """Builds and solves the position MIP (module notes); returns the result alone without
    a solution, else with its event sequence and decoded schedule (:class:`_MipSolution`)."""
    inst = data.instance
    n, q = data.n, len(data.values)
    P = n + q
    nf = inst.num_flows
    m = inst.num_ports
    H = _horizon(data, inc.value) * (1 + 1e-9) + 1e-9
    fc, size = inst.flow_coflow, inst.flow_size
    pos_w = np.flatnonzero(data.w > 0)
    k = len(pos_w)
    b = ModelBuilder("exact-fluid-mip")
    za = b.add_variables("z_completion", n * P, upper=1.0, integer=True).start  # j * P + p
    zr = b.add_variables("z_release", q * P, upper=1.0, integer=True).start  # i * P + p
    tt = b.add_variables("t", P, upper=H).start
    xx = b.add_variables("x", nf * P).start  # e * P + p
    cc = b.add_variables("C", k, cost=data.w[pos_w], lower=data.lb_single[pos_w] / data.w[pos_w])
    rows = _Rows(b, P)
    p_all = np.arange(P)
    jp = np.arange(n)[:, None] * P + p_all[None, :]
    ip = np.arange(q)[:, None] * P + p_all[None, :]
    ep = np.arange(nf)[:, None] * P + p_all[None, :]

    # each position holds one event; each coflow completes once, each release happens once
    rows.add("position", [(jp % P, za + jp, 1.0), (ip % P, zr + ip, 1.0)], P, lower=1, upper=1)
    rows.add("coflow-once", [(jp // P, za + jp, 1.0)], n, lower=1, upper=1)
    if q:
        rows.add("release-once", [(ip // P, zr + ip, 1.0)], q, lower=1, upper=1)
    if q > 1:  # releases in time order
        first = zr + np.arange(q - 1) * P
        rows.add("release-order", [rows.cumulative(first), rows.cumulative(first + P, -1.0)],
                 (q - 1) * P, lower=0.0)  # fmt: skip
    # times: non-decreasing; a release event no earlier than its release
    if P > 1:
        r = np.arange(P - 1)
        rows.add("t-order", [(r, tt + r + 1, 1.0), (r, tt + r, -1.0)], P - 1, lower=0.0)
    if q:
        vals = -np.repeat(data.values, P).reshape(q, P)
        rows.add("release-time", [(ip, tt + ip % P, 1.0), (ip, zr + ip, vals)], q * P, lower=0.0)
    # demand, completion (cumulative amount reaches the size from the coflow's position on)
    rows.add("demand", [(ep // P, xx + ep, 1.0)], nf, lower=size, upper=size)
    rows.add(
        "completion",
        [rows.cumulative(xx + np.arange(nf) * P), rows.cumulative(za + fc * P, -size)],
        nf * P, lower=0.0,
    )  # fmt: skip
    # nothing before the release event of a flow, nor before a predecessor's completion
    fslot = np.searchsorted(data.values, inst.flow_release, side="right")
    late = np.flatnonzero(fslot > 0)
    gates = [(late, zr + (fslot[late] - 1) * P)]  # (flows, first column of their gate)
    for a, c in inst.dependencies.tolist():
        after = np.flatnonzero(fc == c)
        gates.append((after, np.full(len(after), za + a * P)))
    for g, (flows, gate) in enumerate(gates):
        if len(flows):
            sent = rows.cumulative(xx + flows * P)
            opened = rows.cumulative(gate, -size[flows], strict=True)
            rows.add(f"gate-{g}", [sent, opened], len(flows) * P, upper=0.0)
    # capacity per port and interval (interval p ends at position p)
    cap = inst.fabric.port_capacity
    ports = np.concatenate([inst.flow_src, m + inst.flow_dst])
    x_cols = xx + np.concatenate([ep, ep])
    cell = np.arange(2 * m)[:, None] * P + p_all[None, :]
    later = cell[:, 1:]
    rows.add(
        "capacity",
        [(ports[:, None] * P + p_all, x_cols, 1.0 / cap[ports][:, None]),
         (cell, tt + cell % P, -1.0), (later, tt + later % P - 1, 1.0)],
        2 * m * P, upper=0.0,
    )  # fmt: skip
    # makespan cuts, per release level R_i (R_0 = 0) and port v: once the release event of
    # R_i has happened, t_p >= R_i + the time v needs for the flows released at R_i or later
    # of the coflows completed by p (before that event, no such flow has completed)
    for i in range(len(data.levels)):
        load = data.load_after[:, i, :]  # (n, 2m)
        used = np.flatnonzero(load.sum(axis=0) > 0)
        if not len(used):
            continue
        vp = np.arange(len(used))[:, None] * P + p_all[None, :]
        parts: list[tuple[Any, Any, Any]] = [(vp, tt + vp % P, 1.0)]
        if i > 0:
            r, c, _ = rows.cumulative(np.full(len(used), zr + (i - 1) * P))
            parts.append((r, c, -float(data.levels[i])))
        for j in np.flatnonzero(load.sum(axis=1) > 0).tolist():
            r, c, _ = rows.cumulative(np.full(len(used), za + j * P))
            parts.append((r, c, -np.repeat(load[j, used], len(rows.lo_p)).reshape(r.shape)))
        rows.add(f"makespan-{i}", parts, len(used) * P, lower=0.0)
    # objective: C_j >= t_p - H (1 - z[j, p]) for the coflows of positive weight
    if k:
        kp = np.arange(k)[:, None] * P + p_all[None, :]
        rows.add(
            "objective",
            [(kp, cc.start + kp // P, 1.0), (kp, tt + kp % P, -1.0),
             (kp, za + pos_w[kp // P] * P + kp % P, -H)],
            k * P, lower=-H,
        )  # fmt: skip
    # dominance rules and dependencies: a completes at or before b's position
    pa, pb = np.nonzero(data.prec)
    if len(pa):
        rows.add(
            "precedence",
            [rows.cumulative(za + pa * P), rows.cumulative(za + pb * P, -1.0)],
            len(pa) * P, lower=0.0,
        )  # fmt: skip
    model = b.build()
    left = data.time_left()
    if left <= 0:
        raise _OutOfTime
    res = solve(model, replace(data.options, time_limit=None if math.isinf(left) else left))
    data.lps += 1
    if not res.has_solution:
        return res
    assert res.x is not None
    pos_c = res.x[za : za + n * P].reshape(n, P).argmax(axis=1)
    # a release event's time may sit a solver tolerance below its release: lift it (and the
    # later times), so that nothing is sent early in the decoded schedule
    pos_r = res.x[zr : zr + q * P].reshape(q, P).argmax(axis=1) if q else p_all[:0]
    floor = np.zeros(P)
    floor[pos_r] = data.values
    times = np.maximum.accumulate(np.maximum(res.x[tt : tt + P], floor))
    # The MIP only asks t_p ≥ R_i of a release event's position, so a release may sit after
    # a completion that happens later than R_i: its positions are not the true interleaving.
    # The interleaving comes from the completion *times* instead (issue 12).
    order, slots = _sequence_of(data, times[pos_c], pos_c)
    # amounts outside a flow's window (after its coflow's position, up to its release event
    # or a predecessor's position) are solver noise: drop them, or the decoded coflow would
    # complete late or a flow would send early
    lo = np.full(nf, -1, dtype=np.int64)
    lo[late] = pos_r[fslot[late] - 1]
    for a, c in inst.dependencies.tolist():
        lo[fc == c] = np.maximum(lo[fc == c], pos_c[a])
    window = (p_all[None, :] > lo[:, None]) & (p_all[None, :] <= pos_c[fc][:, None])
    amounts = np.where(window, res.x[xx : xx + nf * P].reshape(nf, P), 0.0).ravel()
    schedule, _ = fluid_schedule_from_intervals(
        inst, times, np.tile(p_all, nf), np.repeat(np.arange(nf), P), amounts
    )
    return _MipSolution(res, order, slots, schedule)


@dataclass(frozen=True)
class _MipSolution:
    """The MIP's result with a solution: its event sequence (completion order, and the
    release events before each completion by time) and its schedule, decoded directly from
    the MIP's times and amounts (constant rate per position interval)."""

    result: SolveResult
    order: tuple[int, ...]
    slots: tuple[int, ...]
    schedule: FluidSchedule


def _run_bnb(
    data: _Data, inc: _Incumbent, out_of_time: bool, details: dict[str, Any]
) -> tuple[SolveStatus, float, str]:
    root = data.round_bound(data.lower_bound((1 << data.n) - 1, inc.value))
    if out_of_time:
        details.update(nodes=0, finished=False)
        return _time_limit_status(inc), min(inc.value, root), "time limit reached in the heuristic"
    search = _parallel_branch_and_bound if data.workers > 1 else _branch_and_bound
    stats = search(data, inc, data.options.mip_gap)
    bound = stats.pop("bound")
    details.update(stats)
    if stats["finished"]:
        return SolveStatus.OPTIMAL, bound, ""
    return _time_limit_status(inc), bound, "time limit reached in the branch and bound"


def _time_limit_status(inc: _Incumbent) -> SolveStatus:
    return SolveStatus.TIME_LIMIT if inc.found else SolveStatus.TIME_LIMIT_NO_SOLUTION


def _offer_mip(data: _Data, inc: _Incumbent, got: _MipSolution, details: dict[str, Any]) -> None:
    """Offers the MIP's solution to the incumbent twice: re-solved as the order LP of its
    event sequence (never worse than the MIP's schedule, by the order LP's exactness), and
    as the schedule decoded from the MIP itself, whose verified cost is recorded in
    ``details["mip_schedule_objective"]``. The heuristic incumbent stays only when it is
    strictly cheaper than both."""
    _evaluate(data, inc, got.order, got.slots, "mip, re-solved as its order LP", timed=False)
    report = verify(data.instance, got.schedule)
    if not report.feasible:
        raise SolverError(
            f"{METHOD} (mip): the schedule decoded from the MIP fails verification "
            f"({report.summary(limit=3)})"
        )
    cost = float(np.dot(data.w, report.coflow_completion))
    details["mip_schedule_objective"] = cost
    assert got.result.x is not None
    inc.offer(cost, got.order, got.slots, None, got.result.x, "mip", got.schedule)


def _run_mip(
    data: _Data, inc: _Incumbent, out_of_time: bool, details: dict[str, Any]
) -> tuple[SolveStatus, float, str]:
    root = data.lower_bound((1 << data.n) - 1, inc.value)
    got: _MipSolution | SolveResult | None = None
    if not out_of_time:
        try:
            got = _mip(data, inc)
        except _OutOfTime:
            got = None
    if got is None:
        status, bound, message = _time_limit_status(inc), root, "time limit before the MIP"
    else:
        res = got.result if isinstance(got, _MipSolution) else got
        if isinstance(got, _MipSolution):
            details["mip_objective"] = res.objective
            _offer_mip(data, inc, got, details)
        if res.status not in (
            SolveStatus.OPTIMAL, SolveStatus.TIME_LIMIT, SolveStatus.TIME_LIMIT_NO_SOLUTION,
            SolveStatus.INTERRUPTED,
        ):  # fmt: skip
            raise SolverError(f"{METHOD} (mip): the MIP ended with status {res.status.value}")
        status, message = res.status, res.message
        bound = max(root, res.bound) if math.isfinite(res.bound) else root
        if status is SolveStatus.TIME_LIMIT_NO_SOLUTION and inc.found:
            status = SolveStatus.TIME_LIMIT
    details["proven_by"] = "mip" if status is SolveStatus.OPTIMAL else None
    closed = inc.found and relative_gap(inc.value, bound) <= data.options.mip_gap
    if status is not SolveStatus.OPTIMAL and closed:
        status, details["proven_by"] = SolveStatus.OPTIMAL, "chain bound"
    if status is SolveStatus.OPTIMAL:
        bound = min(bound, inc.value)
    return status, bound, message


# ============================================================================ entry point
def no_schedule_solution(
    method: str,
    instance: Instance,
    status: SolveStatus,
    bound: float,
    message: str,
    start: float,
    details: dict[str, Any],
    options: SolverOptions,
) -> Solution:
    """The result of a search that ended (time limit, interrupt) before any schedule: its
    status and proven bound, no objective."""
    runtime = time.perf_counter() - start
    result = SolveResult(status, math.nan, bound, math.nan, runtime, None, options.solver, message)
    return schedule_solution(
        method, SolutionKind.EXACT, instance, None, result,
        runtime=runtime, bound=bound, details=details, options=options,
    )  # fmt: skip


def solve_exact_fluid(
    instance: Instance,
    options: SolverOptions | None = None,
    *,
    algorithm: str = "bnb",
    max_coflows: int | None = None,
    chain_bound: str = "auto",
    chain_budget: int = 2000,
    weighted_group: bool = True,
    warm_start: bool = True,
    table_coflows: int | None = None,
    release_bound: str = "lp",
    exact_subsets: int | None = None,
    lp_method: str = "auto",
    workers: int = 1,
) -> Solution:
    """The fluid optimum of ``Σ_j w_j C_j``: a verified schedule, proven optimal or, on the
    time limit, the best found with a proven bound (docs/theory.md#exact).

    Parameters
    ----------
    instance
        The instance (releases, weights, capacities and dependencies are respected;
        deadlines are ignored, as in every ``Σ w C`` method, ``exact-slotted`` included: a
        coflow that cannot meet its deadline is scheduled anyway; ``deadline-fluid`` is
        the fluid method that reads them).
    options
        Solver settings, see :class:`~coflowlab.solvers.SolverOptions` (``None``: its
        defaults); the backend solves the order LPs (or the MIP). ``time_limit`` covers the
        whole method (heuristic, search or MIP, decoding); without one (the default) the
        method runs until it proves optimality (which, with tens of coflows, can take far
        longer than any session; ``benchmarks/bench_exact.py`` measures what is proven in
        60 s). With ``SolverOptions(time_limit=S)`` (``coflowlab solve --time-limit S``) it
        stops after ``S`` seconds with the best schedule, the proven bound and the gap
        (status ``time_limit``). ``mip_gap`` is the relative gap at which a node is pruned
        (B&B) or the MIP stops.
    algorithm
        ``"bnb"`` (branch and bound over orders) or ``"mip"`` (one position MIP); see the
        module notes.
    max_coflows
        Refuse larger instances (default :data:`MAX_BNB_COFLOWS` or
        :data:`MAX_MIP_COFLOWS`).
    chain_bound
        How the chain bound (module notes) is computed: ``"table"`` (every subset, up to
        ``table_coflows`` coflows; none above), ``"lazy"`` (proven on demand per node,
        :class:`~coflowlab.formulations.fluid_bounds.LazyChainBound`), ``"auto"`` (the
        default: the table up to ``table_coflows`` coflows, else lazy) or
        ``"none"`` (only the port bounds).
    chain_budget
        With the lazy chain bound: subsets its proof search refines at most per node.
    table_coflows
        The most coflows for which the chain bound is tabulated over every subset (with
        ``chain_bound="auto"`` or ``"table"``; up to :data:`MAX_TABLE_COFLOWS`); ``None``
        (default): :data:`MAX_SUBSET_TABLE`, or :data:`MAX_SUBSET_TABLE_AUTO` when the
        table's work is at most :data:`TABLE_WORK` and its estimated time at most a tenth of
        the time limit (``table_coflows=20``: the rule before). The same optimum either
        way: the table is the exact chain bound, the lazy search proves at most that value
        (less past its budget), so the table never bounds a node lower.
    weighted_group
        Bound a node by the group LPs that weight the unordered set's event by the weight
        of the coflow completing last in it (module notes); ``False``: one group LP with
        weight 0, plus ``w_j · span(U)``.
    warm_start
        Solve each node's group LP from its parent's optimal basis in one HiGHS object that
        is kept for the node's other weights (module notes); ``False``: every LP from
        scratch through :func:`coflowlab.solvers.solve` (the same optima; for comparison).
        Only with the HiGHS backend (``options.solver``).
    release_bound
        How a node bounds its release child before the child's own LP (module notes,
        "Release children"): ``"lp"`` (default) from every group LP the node solved,
        ``G(w) - w R`` plus a bound of ``U`` (never lower than the rule before);
        ``"parent"``: the node's own bound (or the weight-0 LP), the rule before.
    exact_subsets
        Bound an unordered set ``U`` of at most this many coflows (at least 2, not the
        whole instance) by the fluid optimum of ``U`` alone, proven by the same search on
        the sub-instance when the other bounds of ``U`` leave a node open, and memoized
        (module notes, "Exact small subsets"); ``0``: never (the rule before); ``None``
        (default): :data:`EXACT_SUBSETS` with release dates, else 0.
    lp_method
        How the branch and bound solves a node's group LP with ``warm_start`` (module
        notes, "Large node LPs"): ``"auto"`` (default) the interior-point method from
        scratch for LPs of at least :data:`IPM_COLUMNS` columns, the primal simplex from
        the parent's basis below; ``"simplex"`` always the latter (the rule before);
        ``"ipm"`` always the former. The same optima (to the solver's tolerance).
    workers
        Processes the branch and bound runs on (module notes, "Parallel search"); ``1``
        (default): this process alone, the same search node for node on every run. More
        prove the same optimum sooner on a machine with that many cores, but the nodes
        searched, and which of several optimal schedules is returned, depend on timing.
        Linux and other systems that fork only; ``algorithm="bnb"`` only.

    Returns
    -------
    Solution
        Kind ``exact``; ``order`` is the completion order. ``details``: ``algorithm``,
        ``heuristic_objective`` (the initial incumbent), ``root_bound`` (the combinatorial
        lower bound), ``dominance_pairs``, ``lps`` (LPs and MIPs solved), ``ipm_lps``
        (node LPs solved by the interior-point method), ``lp_seconds``,
        ``incumbent_source``, ``slots`` (release events before each completion of
        ``order``); B&B: ``nodes`` (nodes bounded by an LP), ``release_nodes`` (of
        them, release children), ``leaves``, ``pruned_by_bound``, ``pruned_after_lp``
        (inner nodes whose LP pruned every child), ``infeasible``, ``open_nodes``, ``finished``,
        ``chain_bound`` (``"table"``, ``"lazy"`` or ``"none"``: what was used),
        ``chain_refined`` (lazy: subsets its proof searches refined), and
        ``decoded_below_sequence_lp`` when the decoded schedule costs less than its
        sequence's LP (module notes; ``slots`` is then ``None``); MIP:
        ``mip_objective`` (the solver's), ``mip_schedule_objective`` (the verified cost of
        the schedule decoded from the MIP) and ``proven_by`` (``"mip"``, or ``"chain
        bound"`` when the incumbent meets the root bound). ``incumbent_source`` says which
        schedule is returned: ``"mip, re-solved as its order LP"``, ``"mip"``, or a
        heuristic's name when it was strictly cheaper.

    Raises
    ------
    ModelTooLargeError
        More coflows than ``max_coflows``.

    Examples
    --------
    Instance I4 (docs/theory.md#instances): B and C complete at 1, A at 2.

    >>> from coflowlab.instances.examples import theory_i4
    >>> sol = solve_exact_fluid(theory_i4())
    >>> sol.status.value, round(sol.objective, 6), sol.order
    ('optimal', 4.0, (1, 2, 0))
    >>> round(solve_exact_fluid(theory_i4(), algorithm="mip").objective, 6)
    4.0
    >>> solve_exact_fluid(theory_i4(), SolverOptions(time_limit=60)).status.value
    'optimal'
    """
    start = time.perf_counter()
    if algorithm not in ALGORITHMS:
        raise ValueError(f"algorithm must be one of {ALGORITHMS}, got {algorithm!r}")
    if chain_bound not in CHAIN_BOUNDS:
        raise ValueError(f"chain_bound must be one of {CHAIN_BOUNDS}, got {chain_bound!r}")
    if exact_subsets is None:
        exact_subsets = EXACT_SUBSETS if instance.has_releases else 0
    if exact_subsets < 0:
        raise ValueError(f"exact_subsets must be at least 0 or None, got {exact_subsets}")
    if release_bound not in RELEASE_BOUNDS:
        raise ValueError(f"release_bound must be one of {RELEASE_BOUNDS}, got {release_bound!r}")
    if lp_method not in LP_METHODS:
        raise ValueError(f"lp_method must be one of {LP_METHODS}, got {lp_method!r}")
    if chain_budget < 1:
        raise ValueError(f"chain_budget must be at least 1, got {chain_budget}")
    check_workers(workers, algorithm)
    if table_coflows is not None and not 0 <= table_coflows <= MAX_TABLE_COFLOWS:
        raise ValueError(
            f"table_coflows must be in 0..{MAX_TABLE_COFLOWS} or None, got {table_coflows}"
        )
    n = instance.num_coflows
    limit = max_coflows
    if limit is None:
        limit = MAX_BNB_COFLOWS if algorithm == "bnb" else MAX_MIP_COFLOWS
    if n > limit:
        alternative = (
            "use algorithm='bnb' (default), which scales further"
            if algorithm == "mip"
            else "use a bound or an approximation instead (coflowlab solve --list)"
        )
        raise ModelTooLargeError(
            f"{METHOD} ({algorithm}): the instance has {n} coflows, above the limit of "
            f"{limit} (max_coflows); {alternative}, or raise max_coflows"
        )
    options = options or SolverOptions()
    limit_s = options.time_limit
    deadline = math.inf if limit_s is None else start + float(limit_s)
    data = _Data(
        instance, options, deadline, start, chain_bound=chain_bound, chain_budget=chain_budget,
        weighted_group=weighted_group, table_coflows=table_coflows, release_bound=release_bound,
        exact_subsets=exact_subsets if not instance.dependencies.size else 0,
        warm_start=warm_start and options.solver == "highs", lp_method=lp_method,
        workers=workers,
    )  # fmt: skip
    inc = _Incumbent()
    details: dict[str, Any] = {"algorithm": algorithm}
    out_of_time = False
    try:
        _heuristic(data, inc)
    except _OutOfTime:
        out_of_time = True
    details["heuristic_objective"] = inc.value if math.isfinite(inc.value) else None
    details["dominance_pairs"] = int(data.prec.sum())
    details["root_bound"] = data.lower_bound((1 << n) - 1, inc.value)

    if algorithm == "bnb":
        status, bound, message = _run_bnb(data, inc, out_of_time, details)
    else:
        status, bound, message = _run_mip(data, inc, out_of_time, details)
    if status is not SolveStatus.OPTIMAL and interrupt_requested():
        status, message = SolveStatus.INTERRUPTED, "interrupted: the best schedule found so far"
    details["lps"] = data.lps
    details["lp_seconds"] = round(data.lp_time, 6)
    details["warm_start"] = data.warm_start
    details["warm_fallbacks"] = data.warm_fallbacks
    details["ipm_lps"] = data.ipm_lps
    details["subset_solves"] = data.sub_solves
    details["chain_bound"] = "table" if data.chain is not None else "none"
    if data.lazy is not None:
        details["chain_bound"] = "lazy"
        details["chain_refined"] = data.lazy.refined
    details["incumbent_source"] = inc.source
    details["slots"] = list(inc.slots)

    if not inc.found:
        return no_schedule_solution(
            METHOD, instance, status, bound, message, start, details, options
        )
    schedule = inc.schedule
    order = inc.order
    if schedule is None:
        assert inc.lp is not None and inc.x is not None
        schedule, _ = decode_schedule(instance, inc.lp, inc.x)
        # the decoded schedule can finish a coflow before its predecessor in the sequence
        # (then it belongs to a cheaper sequence): its verified cost is what is returned
        done = verify(instance, schedule).coflow_completion
        cost = float(np.dot(data.w, done))
        if cost < inc.value:
            details["decoded_below_sequence_lp"] = inc.value - cost
            inc.value = cost
            order = tuple(np.lexsort((np.arange(n), done)).tolist())
            details["slots"] = None  # they describe the sequence, not this order
    result = SolveResult(
        status, inc.value, bound, relative_gap(inc.value, bound), time.perf_counter() - start,
        inc.x, options.solver, message,
    )  # fmt: skip
    # schedule_solution refuses "optimal" unless the verified cost meets the bound (issue 12)
    return schedule_solution(
        METHOD, SolutionKind.EXACT, instance, schedule, result,
        runtime=time.perf_counter() - start, order=order, bound=bound, details=details,
        options=options,
    )  # fmt: skip
