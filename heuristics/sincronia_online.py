"""Sincronia's online scheduler (Agarwal, Rajakrishnan, Narayan, Agarwal, Shmoys, Vahdat;
"Sincronia: Near-Optimal Network Design for Coflows", SIGCOMM 2018): doubling epochs, an
admission LP per epoch, the BSSI order of the admitted coflows, a slowdown-ordered tail, and an
order-respecting allocation (docs/sincronia-online.md).

The paper's offline result orders coflows released at 0; for coflows that arrive over time it
uses the classic doubling-epoch reduction (Hall, Schulz, Shmoys, Wein, Math. Oper. Res. 22(3),
1997): time is cut into epochs of doubling length; at the start of an epoch the unfinished
coflows released by then are *candidates*; an LP chooses fractionally which of them fit in the
epoch (:mod:`coflowlab.formulations.sincronia_admission`), those with ``x ≥ 1/2`` are
*admitted* and ordered by BSSI (:func:`coflowlab.approximations.sincronia.bssi_order`, the
offline order), and the allocation serves them in that order until the epoch ends. Everything
else present (candidates not admitted, coflows that arrive during the epoch) is served after
them, in a *tail* ordered by slowdown. What is unfinished at the end of an epoch is a candidate
of the next one. After ``max_epochs`` epochs the epoch length starts again from the smallest.

Choices (each a parameter; docs/sincronia-online.md#readings)
-------------------------------------------------------------
- ``timing="doubling"`` (default): epochs of lengths ``base·1, 2, 4, …`` back to back, epoch
  ``k`` of a cycle is ``[base(2^{k-1} − 1), base(2^k − 1))`` after the cycle's start, the LP
  budget is the epoch's length and the candidates are the coflows released by the epoch's start.
  ``timing="public"``: the timing of the authors' public simulator, read from its source:
  epochs ``[0, 2b)``, then ``[2^{k-1} b, 2^k b)`` (a cycle lasts ``2^K b``), the LP budget is
  *half* the epoch's length (``b`` for the first), and a coflow is a candidate only if it was
  released by a threshold that lags the epoch start (``τ_{k-1}`` plus half the length of every
  completed cycle), so later arrivals wait in the tail.
- ``order_sizes="remaining"`` (default): BSSI orders the admitted coflows by their remaining
  bytes at the epoch start (the loads the LP admitted them with). ``"original"``: by their
  original sizes, as the public simulator does.
- ``allocation``: ``"greedy"`` (default; Sincronia's GREEDY: strict priority, each flow takes
  the smaller residual of its two ports), ``"madd"`` or ``"madd-exact"``, exactly as offline
  Sincronia (:class:`coflowlab.list_scheduling.StaticPriority`, rebuilt whenever the order
  changes). ``"greedy"`` is computed incrementally by compiled kernels
  (``heuristics/_sincronia_online_jit.py``): only the highest-priority active flow of each
  port pair can get a positive greedy rate, so an event updates the pairs of the flows that
  arrived or finished and fills the pairs' heads in order; the rates are bit for bit those of
  :func:`coflowlab.allocation.priority_greedy` over every active flow, and only the changed
  ones go to the simulator (docs/sincronia-online.md#speed).
- The tail is sorted by ``oracle / (t + offset − r)`` ascending (``oracle``: the coflow's
  bottleneck time alone on an empty fabric, original sizes; ``r`` its release; ``t`` now),
  ties by earlier release, then lower index; it is re-sorted whenever a coflow arrives.
  ``offset`` defaults to the longest epoch of a cycle, ``base·2^{K-1}``, as the public
  simulator's constant.

The schedule is work conserving with ``"greedy"`` and ``"madd-exact"`` (every flow has a
saturated port at every instant), so a flow released at ``r`` finishes by ``r`` plus the
total load of its two ports over their capacities, whatever the epochs do: no coflow starves
across resets (tests/heuristics/test_sincronia_online.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import numpy as np
import numpy.typing as npt

from coflowlab.approximations.sincronia import bssi_order
from coflowlab.constants import TOL
from coflowlab.exceptions import SolverError
from coflowlab.formulations.sincronia_admission import solve_admission
from coflowlab.instance import Instance
from coflowlab.list_scheduling import ALLOCATIONS, Allocation, StaticPriority
from coflowlab.policy import ClairvoyantState, Decision, InstanceView, ObservedState
from coflowlab.solvers import SOLVER_NAMES, SolverOptions

if TYPE_CHECKING:
    from .sincronia_online_classes import SincroniaOnlineClassEngine

__all__ = ["Epoch", "EpochRecord", "SincroniaOnline", "Timing", "epoch_at"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

Timing = Literal["doubling", "public"]
OrderSizes = Literal["remaining", "original"]
MAX_EPOCHS_LIMIT = 60
"""The largest ``max_epochs`` accepted (the longest epoch is ``2^{max_epochs-1}`` bases)."""


@dataclass(frozen=True)
class Epoch:
    """One epoch of the schedule's fixed time grid.

    Attributes
    ----------
    cycle
        How many resets came before it (``0`` for the first ``max_epochs`` epochs).
    index
        Its position in its cycle, ``1..max_epochs``.
    start, end
        The interval ``[start, end)`` it covers.
    budget
        The time every port offers in its admission LP.
    threshold
        Coflows released at or before it are candidates.
    """

    cycle: int
    index: int
    start: float
    end: float
    budget: float
    threshold: float


def _check_grid(max_epochs: int, base: float, timing: str) -> None:
    if isinstance(max_epochs, bool) or not isinstance(max_epochs, int | np.integer):
        raise ValueError(f"max_epochs: must be an integer, got {max_epochs!r}")
    if not 1 <= max_epochs <= MAX_EPOCHS_LIMIT:
        raise ValueError(f"max_epochs: must be in 1..{MAX_EPOCHS_LIMIT}, got {max_epochs}")
    if isinstance(base, bool) or not (math.isfinite(base) and base > 0):
        raise ValueError(f"base: must be a positive, finite time, got {base!r}")
    if timing not in ("doubling", "public"):
        raise ValueError(f"timing: must be 'doubling' or 'public', got {timing!r}")


def epoch_at(
    t: float, *, max_epochs: int = 8, base: float = 1.0, timing: Timing = "doubling"
) -> Epoch:
    """The epoch that contains time ``t`` (a time within ``TOL`` of a boundary counts as the
    later epoch's start).

    Parameters
    ----------
    t
        A time ``>= 0``.
    max_epochs, base, timing
        As in :class:`SincroniaOnline`.

    Returns
    -------
    Epoch

    Raises
    ------
    ValueError
        For a negative or non-finite ``t`` or an invalid grid parameter.

    Examples
    --------
    Three epochs per cycle: lengths 1, 2, 4, then the cycle starts again at 7.

    >>> [(e.start, e.end, e.budget) for e in
    ...  (epoch_at(t, max_epochs=3) for t in (0.0, 1.0, 2.5, 3.0, 7.0))]
    [(0.0, 1.0, 1.0), (1.0, 3.0, 2.0), (1.0, 3.0, 2.0), (3.0, 7.0, 4.0), (7.0, 8.0, 1.0)]

    The public simulator's timing: a half-length budget and a lagging threshold.

    >>> for t in (0.0, 2.0, 4.0, 8.0, 10.0):
    ...     e = epoch_at(t, max_epochs=3, timing="public")
    ...     print(e.start, e.end, e.budget, e.threshold)
    0.0 2.0 1.0 0.0
    2.0 4.0 1.0 1.0
    4.0 8.0 2.0 2.0
    8.0 10.0 1.0 4.0
    10.0 12.0 1.0 5.0
    """
    _check_grid(max_epochs, base, timing)
    if not (math.isfinite(t) and t >= 0):
        raise ValueError(f"t: must be a finite time >= 0, got {t!r}")
    k_max = int(max_epochs)
    b = float(base)
    eps = TOL * max(1.0, abs(t))
    if timing == "doubling":
        period = b * (2.0**k_max - 1.0)
        ends = [b * (2.0**k - 1.0) for k in range(1, k_max + 1)]
        starts = [0.0, *ends[:-1]]
        budgets = [b * 2.0 ** (k - 1) for k in range(1, k_max + 1)]
    else:
        period = b * 2.0**k_max
        ends = [b * 2.0**k for k in range(1, k_max + 1)]
        starts = [0.0] + [b * 2.0 ** (k - 1) for k in range(2, k_max + 1)]
        budgets = [b] + [b * 2.0 ** (k - 2) for k in range(2, k_max + 1)]
    cycle = max(0, math.floor((t + eps) / period))
    origin = cycle * period
    u = t - origin
    k = next((i for i, e in enumerate(ends) if u < e - eps), k_max - 1)
    if timing == "doubling":
        threshold = origin + starts[k]
    else:
        lag = 0.0 if k == 0 else b * 2.0 ** (k - 1)
        threshold = cycle * b * 2.0 ** (k_max - 1) + lag
    return Epoch(cycle, k + 1, origin + starts[k], origin + ends[k], budgets[k], threshold)


@dataclass(frozen=True)
class EpochRecord:
    """What the policy decided when an epoch started (its log, :attr:`SincroniaOnline.log`).

    Attributes
    ----------
    epoch
        The epoch.
    time
        When it was started: ``epoch.start``, or the first event after it if the fabric was
        idle at its start.
    candidates
        The candidate coflows (unfinished, released by ``epoch.threshold``), increasing.
    x
        Their admission LP values, aligned with ``candidates``.
    admitted
        The admitted coflows in their BSSI order (first served first).
    tail
        The other coflows present at ``time``, in slowdown order.
    """

    epoch: Epoch
    time: float
    candidates: tuple[int, ...]
    x: tuple[float, ...]
    admitted: tuple[int, ...]
    tail: tuple[int, ...]


class SincroniaOnline:
    """Sincronia online (``sincronia-online``): doubling epochs, admission LP, BSSI, tail.

    Parameters
    ----------
    max_epochs
        Epochs in a cycle before the epoch length resets to the smallest (the public
        simulator's command-line argument; its script runs 8). ``1..60``.
    base
        The time unit of the epoch grid, in the instance's time unit: the first epoch of a
        cycle lasts ``base`` (``2·base`` with ``timing="public"``). ``None`` (default): the
        public simulator's unit, the time the fastest port takes to send one size unit
        (1 MB on the Facebook trace: 8 ms at 1 Gbps; 1 on unit-capacity instances).
    allocation
        ``"greedy"`` (default), ``"madd"`` or ``"madd-exact"``: the rates given an order, as
        offline Sincronia (:func:`coflowlab.approximations.solve_sincronia`).
    timing
        ``"doubling"`` (default) or ``"public"`` (module notes).
    order_sizes
        ``"remaining"`` (default) or ``"original"``: the sizes BSSI orders the admitted
        coflows by.
    offset
        The constant of the tail's slowdown key (``None``: ``base·2^{max_epochs-1}``).
    lp_solver
        The LP backend for the admission LP (``"highs"``, default; ``"cbc"``, ``"gurobi"``).
    vertex_lps
        ``False`` (default): every admission LP that does not split into one-variable LPs
        is solved by ``lp_solver``. ``True``: with HiGHS's default settings, an LP whose
        optimum a small simplex proves unique, with no value within 0.05 of 1/2, is
        answered without HiGHS
        (:func:`coflowlab.formulations.sincronia_admission.unique_vertex`): the same
        admitted sets as HiGHS on the whole Facebook trace (9,603 of 9,653 such LPs), LP
        values within HiGHS's tolerances of its but not its bits, about 2.7 times faster on
        the trace (docs/sincronia-online.md#fill-and-lp).

    Raises
    ------
    ValueError
        On construction, naming the parameter, for a value outside its range.

    Notes
    -----
    The epoch grid is fixed in time (it does not depend on the arrivals). At every event the
    policy finds the epoch of the current time; if it is a new one, it solves the admission
    LP and orders the coflows again; if coflows arrived, it re-sorts the tail; otherwise the
    order stands and only the rates are recomputed (the allocation's rule). It asks to be
    woken at the end of the current epoch. If the fabric is idle when an epoch starts, the
    epoch starts at the first event in it, with the coflows present then (none of which was
    released by the epoch's start, so every one is in the tail). :attr:`log` keeps one
    :class:`EpochRecord` per epoch started.

    A solver failure in the admission LP raises :class:`coflowlab.SolverError` with the
    epoch and the solver's status.

    Examples
    --------
    Two ports, ``0 → 0`` and ``1 → 1``: coflow 0 (size 1) fits the first epoch ``[0, 1)``,
    coflows 1 and 2 (sizes 20 and 10 on port 1) do not and wait in the tail, smaller bottleneck
    first; coflow 2 is admitted at 3 (``x = 4/7``) and finishes at 10, coflow 1 at 30
    (docs/sincronia-online.md#example).

    >>> import coflowlab as cl
    >>> inst = cl.Instance.from_coflows(
    ...     [cl.Coflow([(0, 0, 1.0)]), cl.Coflow([(1, 1, 20.0)]), cl.Coflow([(1, 1, 10.0)])], 2
    ... )
    >>> policy = SincroniaOnline()
    >>> cl.simulate(inst, policy).coflow_completion.tolist()
    [1.0, 30.0, 10.0]
    >>> [(r.epoch.start, r.admitted, r.tail) for r in policy.log[:3]]
    [(0.0, (0,), (2, 1)), (1.0, (), (2, 1)), (3.0, (2,), (1,))]
    """

    name: ClassVar[str] = "sincronia-online"
    clairvoyant: ClassVar[bool] = True

    def __init__(
        self,
        *,
        max_epochs: int = 8,
        base: float | None = None,
        allocation: Allocation = "greedy",
        timing: Timing = "doubling",
        order_sizes: OrderSizes = "remaining",
        offset: float | None = None,
        lp_solver: str = "highs",
        vertex_lps: bool = False,
    ) -> None:
        _check_grid(max_epochs, 1.0 if base is None else base, timing)
        if allocation not in ALLOCATIONS:
            raise ValueError(
                f"allocation: must be one of {', '.join(ALLOCATIONS)}, got {allocation!r}"
            )
        if order_sizes not in ("remaining", "original"):
            raise ValueError(
                f"order_sizes: must be 'remaining' or 'original', got {order_sizes!r}"
            )
        if offset is not None and (
            isinstance(offset, bool) or not (math.isfinite(offset) and offset > 0)
        ):
            raise ValueError(f"offset: must be a positive, finite time or None, got {offset!r}")
        if lp_solver not in SOLVER_NAMES:
            raise ValueError(
                f"lp_solver: must be one of {', '.join(SOLVER_NAMES)}, got {lp_solver!r}"
            )
        self.max_epochs = int(max_epochs)
        self.base = None if base is None else float(base)
        self.allocation: Allocation = allocation
        self.timing: Timing = timing
        self.order_sizes: OrderSizes = order_sizes
        self.offset = offset
        if not isinstance(vertex_lps, bool):
            raise ValueError(f"vertex_lps: must be True or False, got {vertex_lps!r}")
        self.lp_solver = lp_solver
        self.vertex_lps = vertex_lps
        self.log: list[EpochRecord] = []

    # ------------------------------------------------------------------ setup
    def reset(self, view: InstanceView) -> None:
        """Prepares for a new simulation of the instance ``view`` describes."""
        if view.flow_size is None:
            raise ValueError("SincroniaOnline is clairvoyant: the view must carry sizes")
        self._view = view
        n, m = view.num_coflows, view.num_ports
        self._cap = np.concatenate(
            [np.asarray(view.cap_in, dtype=float), np.asarray(view.cap_out, dtype=float)]
        )
        self._weight = np.asarray(view.coflow_weight, dtype=float)
        self._m = m
        coflow = np.asarray(view.flow_coflow, dtype=np.int64)
        size = np.asarray(view.flow_size, dtype=float)
        load = np.zeros((n, 2 * m))
        np.add.at(load, (coflow, np.asarray(view.flow_src)), size)
        np.add.at(load, (coflow, m + np.asarray(view.flow_dst)), size)
        self._original_time = load / self._cap
        # the public simulator's unit: the time a port takes to send one size unit (1 MB)
        self._base = 1.0 / float(self._cap.max()) if self.base is None else self.base
        self._offset = self._base * 2.0 ** (self.max_epochs - 1)
        if self.offset is not None:
            self._offset = self.offset
        self._oracle = self._original_time.max(axis=1)  # bottleneck alone, original sizes
        self._options = SolverOptions(solver=self.lp_solver)
        self._epoch: Epoch | None = None
        self._epoch_until = -math.inf  # the cached epoch holds for times below this
        self._admitted = np.zeros(0, dtype=np.int64)
        self._tail = np.zeros(0, dtype=np.int64)
        self._inner: StaticPriority | None = None
        self._flow_coflow = np.ascontiguousarray(coflow)
        self._active_count = np.zeros(n, dtype=np.int64)  # active flows per coflow
        self._rank = np.arange(n, dtype=np.int64)  # each coflow's position in the order
        self._greedy = _GreedyState(view) if self.allocation == "greedy" else None
        self.log = []

    def class_engine(self, instance: Instance, tol: float) -> SincroniaOnlineClassEngine | None:
        """The whole replay in one compiled event loop (one rate class per flow) that
        :func:`coflowlab.simulate` uses when it can (:mod:`coflowlab.class_simulation`,
        :mod:`coflowlab.heuristics.sincronia_online_classes`); it drives this policy, calling
        :meth:`decide` at epoch starts and arrivals, so :attr:`log` is filled as usual.
        ``None`` where it does not apply (an allocation other than ``"greedy"``, coflow
        dependencies, or a subclass, whose changes the engine would not see), so the
        per-flow event loop runs."""
        from .sincronia_online_classes import SincroniaOnlineClassEngine

        if SincroniaOnlineClassEngine.unsupported(self, instance) is not None:
            return None
        return SincroniaOnlineClassEngine(self, instance, tol=tol)

    # ------------------------------------------------------------------ ordering
    def _slowdown_order(self, coflows: IntArray, release: FloatArray, t: float) -> IntArray:
        """``coflows`` by ``oracle / (t + offset − r)``, then earlier release, then index."""
        if not len(coflows):
            return coflows
        r = release[coflows]
        key = self._oracle[coflows] / (t + self._offset - r)
        return coflows[np.lexsort((coflows, r, key))]

    def _remaining_time(self, st: ClairvoyantState, coflows: IntArray) -> FloatArray:
        """``(len(coflows), 2m)`` remaining bytes of each coflow per port over capacity."""
        row = np.full(self._view.num_coflows, -1, dtype=np.int64)
        row[coflows] = np.arange(len(coflows))
        load: FloatArray
        own = getattr(st, "port_loads", None)
        if own is not None:
            # a state that sums the same loads itself, in the same order, without gathering
            # every active flow's columns (the class engine's,
            # heuristics/sincronia_online_classes.py)
            load = own(row, self._m, len(coflows))
        else:
            load = _kernels()["loads"](
                row,
                np.ascontiguousarray(st.coflow, dtype=np.int64),
                np.ascontiguousarray(st.src, dtype=np.int64),
                np.ascontiguousarray(st.dst, dtype=np.int64),
                np.ascontiguousarray(st.remaining, dtype=np.float64),
                self._m,
                len(coflows),
            )
        return load / self._cap

    def _start_epoch(self, st: ClairvoyantState, epoch: Epoch, present: IntArray) -> None:
        t = float(st.time)
        release = np.asarray(st.coflow_arrival, dtype=float)
        slack = TOL * max(1.0, abs(epoch.threshold))
        cand = present[release[present] <= epoch.threshold + slack]
        p = self._remaining_time(st, cand)
        try:
            adm = solve_admission(
                p, self._weight[cand], epoch.budget, options=self._options, vertex=self.vertex_lps
            )
        except SolverError as exc:
            raise SolverError(
                f"sincronia-online, epoch {epoch.index} of cycle {epoch.cycle} at t={t!r}: {exc}"
            ) from exc
        chosen = cand[adm.admitted]
        times = p[adm.admitted] if self.order_sizes == "remaining" else self._original_time[chosen]
        self._admitted = chosen[bssi_order(times, self._weight[chosen])]
        rest = present[~np.isin(present, chosen)]
        self._tail = self._slowdown_order(rest, release, t)
        self._epoch = epoch
        self.log.append(
            EpochRecord(
                epoch,
                t,
                tuple(cand.tolist()),
                tuple(adm.x.tolist()),
                tuple(self._admitted.tolist()),
                tuple(self._tail.tolist()),
            )
        )

    def _priority(self) -> IntArray:
        """Every coflow: admitted (BSSI), tail (slowdown), then the rest by index."""
        n = self._view.num_coflows
        first = np.concatenate([self._admitted, self._tail]).astype(np.int64)
        seen = np.zeros(n, dtype=bool)
        seen[first] = True
        return np.concatenate([first, np.flatnonzero(~seen)]).astype(np.int64)

    # ------------------------------------------------------------------ decide
    def _epoch_now(self, t: float) -> Epoch:
        """:func:`epoch_at` of ``t``, reusing the last one well inside its interval.

        Event times never decrease, and :func:`epoch_at` at a later time inside the same
        epoch (farther than its tolerance from the end) returns the same epoch, so it is
        recomputed only near or past the end of the last one.
        """
        if self._epoch is not None and t < self._epoch_until:
            return self._epoch
        epoch = epoch_at(t, max_epochs=self.max_epochs, base=self._base, timing=self.timing)
        # 16 times epoch_at's boundary tolerance: far from any rounding of its arithmetic
        self._epoch_until = epoch.end - 16.0 * TOL * max(1.0, abs(epoch.end))
        return epoch

    def _present(self) -> IntArray:
        """The coflows with an active flow, increasing."""
        return np.flatnonzero(self._active_count > 0).astype(np.int64)

    def decide(self, state: ObservedState) -> Decision:
        """Rates in the epoch's order; a wake-up at the epoch's end."""
        if not isinstance(state, ClairvoyantState):
            raise TypeError("SincroniaOnline needs a ClairvoyantState")
        t = float(state.time)
        epoch = self._epoch_now(t)
        arrived = np.ascontiguousarray(state.arrived, dtype=np.int64)
        completed = np.ascontiguousarray(state.completed, dtype=np.int64)
        _kernels()["count"](arrived, completed, self._flow_coflow, self._active_count)
        reorder = False
        current = self._epoch
        if current is None or (current.cycle, current.index) != (epoch.cycle, epoch.index):
            self._start_epoch(state, epoch, self._present())
            reorder = True
        elif len(arrived):
            present = self._present()
            new = present[~np.isin(present, np.concatenate([self._admitted, self._tail]))]
            if len(new):
                tail = np.concatenate([self._tail, new]).astype(np.int64)
                release = np.asarray(state.coflow_arrival, dtype=float)
                self._tail = self._slowdown_order(tail, release, t)
                reorder = True
        previous = self._rank
        if reorder:
            previous = self._rank.copy()
            self._rank[self._priority()] = np.arange(len(self._rank), dtype=np.int64)
            self._inner = None
        if self._greedy is not None:
            # a new order that keeps the active coflows' relative order (most epoch starts)
            # leaves every greedy head where it was: the heads are re-keyed, not rebuilt
            kept = (
                reorder and not len(arrived) and _same_order(previous, self._rank, self._present())
            )
            flows, rates = self._greedy.step(
                arrived, completed, reorder and not kept, self._rank, previous if kept else None
            )
            return Decision(None, wakeup=epoch.end, update=(flows, rates))
        if self._inner is None:
            self._inner = StaticPriority(self._priority(), self.allocation)
            self._inner.reset(self._view)
        inner = self._inner.decide(state)
        wake = epoch.end if inner.wakeup is None else min(epoch.end, float(inner.wakeup))
        return Decision(inner.rates, wakeup=wake, notify=inner.notify)


def _same_order(before: IntArray, after: IntArray, coflows: IntArray) -> bool:
    """Whether the ranks ``before`` and ``after`` order ``coflows`` the same way."""
    if len(coflows) < 2:
        return True
    ranks = after[coflows[np.argsort(before[coflows])]]
    return bool(np.all(ranks[1:] > ranks[:-1]))


@cache
def _kernels() -> dict[str, Any]:
    """Compiles the numba kernels on first use (cached on disk between runs)."""
    from . import _sincronia_online_jit as k

    return {
        "count": k.count_coflows,
        "update": k.update_flows,
        "fill": k.greedy_fill,
        "loads": k.port_loads,
        "rekey": k.rekey_heads,
    }


class _GreedyState:
    """Sincronia's GREEDY kept up to date across events (heuristics/_sincronia_online_jit.py).

    Only the highest-priority active flow of each (ingress, egress) pair can get a positive
    greedy rate, so the state keeps every pair's active flows and its head, and the heads in
    priority order; each event then touches the completed flows' pairs and runs the greedy
    fill over the heads, stopping once every port with a pending head is full. The rates are
    those of :func:`coflowlab.allocation.priority_greedy` over all active flows in the order
    of :class:`coflowlab.list_scheduling.StaticPriority`, bit for bit; only the flows whose
    rate changed are handed to the simulator (``Decision.update``).
    """

    def __init__(self, view: InstanceView) -> None:
        from ._sincronia_online_jit import PENDING, PORT_BITS

        m = view.num_ports
        src = np.asarray(view.flow_src, dtype=np.int64)
        dst = np.asarray(view.flow_dst, dtype=np.int64)
        pairs, pair_of = np.unique(src * m + dst, return_inverse=True)
        num_pairs, nf = len(pairs), len(src)
        self.pair_of = np.ascontiguousarray(pair_of.reshape(-1), dtype=np.int64)
        # each pair's ports in one integer, 0 being the dead entries' port on both sides
        self.pair_ports = np.ascontiguousarray(
            ((pairs // m + 1) << PORT_BITS) | (pairs % m + 1), dtype=np.int64
        )
        self.ptr = np.zeros(num_pairs + 1, dtype=np.int64)
        np.cumsum(np.bincount(self.pair_of, minlength=num_pairs), out=self.ptr[1:])
        self.count = np.zeros(num_pairs, dtype=np.int64)
        self.slot = np.zeros(nf, dtype=np.int64)
        self.pos = np.full(nf, -1, dtype=np.int64)
        self.rate = np.zeros(nf)
        self.head = np.full(num_pairs, -1, dtype=np.int64)
        self.head_key = np.zeros(num_pairs, dtype=np.int64)
        self.heads = np.zeros(num_pairs, dtype=np.int64)
        self.keys = np.zeros(num_pairs, dtype=np.int64)
        self.ports = np.zeros(num_pairs, dtype=np.int64)  # pair_ports of heads, aligned
        self.pending = np.zeros((4, PENDING), dtype=np.int64)  # moved heads, by key
        self.sending = np.zeros(2 * m, dtype=np.int64)
        self.sent_kp = np.zeros((2, 2 * m), dtype=np.int64)  # the senders' keys and ports
        self.stamp = np.zeros(nf, dtype=np.int64)
        # heads, senders, stamps, pending, dead, first change (see the kernels' module)
        self.meta = np.zeros(6, dtype=np.int64)
        self.cap_in = np.array(view.cap_in, dtype=np.float64)
        self.cap_out = np.array(view.cap_out, dtype=np.float64)
        self.flow_coflow = np.ascontiguousarray(view.flow_coflow, dtype=np.int64)

    def step(
        self,
        arrived: IntArray,
        completed: IntArray,
        reorder: bool,
        rank: IntArray,
        kept_from: IntArray | None = None,
    ) -> tuple[IntArray, FloatArray]:
        """Applies an event's arrivals and completions (``reorder``: the coflow ``rank``
        changed, rebuild the heads) and returns the flows whose greedy rate changed, with
        their new rates. ``kept_from``: the rank before a change to ``rank`` that keeps the
        relative order of every coflow with an active flow after the event (no arrival); the
        completions then move their pairs' heads under that rank and the heads are re-keyed
        under ``rank`` (:func:`~._sincronia_online_jit.rekey_heads`), the state a rebuild
        would give."""
        k = _kernels()
        k["update"](
            arrived, completed, reorder, self.pair_of, self.ptr, self.count, self.slot,
            self.pos, self.rate, self.head, self.head_key, self.heads, self.keys, self.ports,
            self.pending, self.pair_ports, self.meta, rank if kept_from is None else kept_from,
            self.flow_coflow,
        )  # fmt: skip
        if kept_from is not None:
            k["rekey"](
                self.head, self.head_key, self.heads, self.keys, self.ports, self.pending,
                self.meta, rank, self.flow_coflow,
            )  # fmt: skip
        flows: IntArray
        rates: FloatArray
        flows, rates = k["fill"](
            self.cap_in, self.cap_out, self.head, self.heads, self.keys, self.ports,
            self.pending, self.rate, self.sending, self.sent_kp, self.stamp, self.meta,
        )  # fmt: skip
        return flows, rates
