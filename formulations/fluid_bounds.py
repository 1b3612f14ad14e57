"""The chain bound of the fluid branch and bound, computed on demand per subset.

:mod:`~coflowlab.formulations.exact_fluid` bounds ``Σ_{j∈U} w_j C_j`` of a set ``U`` of
coflows by the *chain bound*

``chain(U) = min_j (w_j · span(U) + chain(U − j))``, ``chain(∅) = 0``,

where ``span(U)`` bounds the time by which all of ``U`` can complete (per release level
``R``: ``R`` plus the busiest port's load of the flows of ``U`` released at ``R`` or later)
and ``j`` ranges over the coflows of ``U`` that no precedence forces before another coflow
of ``U``. Whoever completes last in ``U`` does so no earlier than ``span(U)``, so
``chain(U) ≤ Σ_{j∈U} w_j C_j`` in every schedule obeying the precedences. Without releases
it is the optimum of the concurrent open shop on the ports (docs/theory.md#cos; the
problem is NP-hard: Wang and Cheng, "Customer order scheduling to minimize total weighted
completion time", Omega 2007; Mastrolilli, Queyranne, Schulz, Svensson and Uhan, Operations
Research Letters 2010); tabulating it for every subset costs ``2^n``, which stops at about
20 coflows.

:class:`LazyChainBound` never tabulates. The branch and bound only needs to know whether
``chain(U) ≥ T`` for the threshold ``T`` that would prune its node, so
``LazyChainBound.bound(U, T)`` searches for a proof of that, depth first over the coflow
completing last, with two memos per subset:

- ``low[U]``: a proven lower bound on ``chain(U)``;
- ``high[U]``: a *certified failure*, ``chain(U) < high[U]``: a later search for a target
  at least that is not tried again.

and a cheap *floor* for every child ``U − j`` (no recursion): ``max(Σ w (r + ρ), Smith's
rule on each port, ignoring releases)``, at most ``chain(U − j)`` (see below).

Proof search for ``chain(U) ≥ T``: every eligible child ``j`` gets the value ``c_j = w_j
span(U) + (best known lower bound on chain(U − j))``; ``min_j c_j`` is a valid lower bound
of ``chain(U)`` whatever the children's bounds are, and it is what the search returns and
memoizes. The children with ``c_j < T`` are refined in increasing ``c_j``, each by the
same search with target ``T − w_j span(U)``. If a child still falls short, its search
certified ``chain(U − j) < T − w_j span(U)`` (by induction from ``chain(∅) = 0``), so
``chain(U) ≤ w_j span(U) + chain(U − j) < T``: the search stops and records ``high[U] =
T``. A work budget per call (and the time limit) can stop the search early: the returned
value is still a lower bound; only no failure is recorded from then on. Comparisons with
``T`` allow a relative ``1e-10`` (the same sums added in another order differ in the last
bits); the values returned are never rounded.

Floors. Why the floors bound ``chain`` itself (and not only ``Σ w C``): ``chain(U)`` is the
optimum of a relaxation in which coflow ``j``'s completion ``C_j`` must be at least the
span of the coflows completing no later than ``j``, for some order. For that order, ``C_j
≥ span({j}) ≥ r_j + ρ_j`` (the single-coflow floor: ``span`` at ``j``'s release level is at
least its release plus its bottleneck); and on a port ``v``, ``C_j ≥`` the load on ``v``
of the coflows up to ``j``, the completion of ``j`` in a one-machine sequence, whose
weighted sum Smith's ratio rule minimises (Smith, "Various optimizers for single-stage
production", Naval Research Logistics Quarterly 1956).
"""

from __future__ import annotations

import math
from collections.abc import Callable, MutableMapping

import numpy as np
import numpy.typing as npt

from ._fluid_bounds_jit import (
    BUDGET,
    EMPTY,
    HIGH_COUNT,
    LOW_COUNT,
    REFINED,
    STOPPED,
    WORK,
    lazy_search,
    memo_put,
    memo_rehash,
    subset_step,
)

__all__ = ["LazyChainBound", "smith_value"]

FloatArray = npt.NDArray[np.float64]

_WHOLE_TOL = 1e-9
MAX_COMPILED = 62
"""The most coflows the compiled search takes (its masks are int64); above, the Python one."""
_REL_TOL = 1e-10
"""A proof of ``chain(U) ≥ T`` accepts ``T (1 - 1e-10)``: floating-point sums of the same
value in another order differ in the last bits."""


class _MemoTable:
    """A memo of the compiled search: a float per subset mask in an open-addressing table
    (:func:`._fluid_bounds_jit.memo_get`). Why not a numba typed dict: its lookups of
    random masks cost about 100 ns against 20 here (measured with 2 million masks), and the
    search looks up every child of every subset it refines. The table doubles before a
    call could fill it past two-thirds (:meth:`reserve`)."""

    def __init__(self, capacity: int = 1 << 12) -> None:
        self.keys = np.full(capacity, EMPTY, dtype=np.int64)
        self.vals = np.zeros(capacity)

    def reserve(self, count: int, extra: int) -> None:
        """Makes room for ``extra`` more entries beside the ``count`` stored."""
        size = len(self.keys)
        while 3 * (count + extra) > 2 * size:
            size *= 2
        if size > len(self.keys):
            keys = np.full(size, EMPTY, dtype=np.int64)
            vals = np.zeros(size)
            memo_rehash(self.keys, self.vals, keys, vals)
            self.keys, self.vals = keys, vals

    def as_dict(self) -> dict[int, float]:
        """The entries, for inspection and tests."""
        used = self.keys != EMPTY
        return dict(zip(self.keys[used].tolist(), self.vals[used].tolist(), strict=True))


def smith_value(p: FloatArray, w: FloatArray) -> FloatArray:
    """Per column (a port) of ``p`` (coflows × ports), the least ``Σ_j w_j C_j`` of one
    machine that processes the jobs ``p[:, v]`` one at a time (Smith's ratio rule).

    Examples
    --------
    Jobs of lengths 1 and 2 with weights 1 and 1 (shorter first: ``1·1 + 1·3``), and the same
    with weights 1 and 4 (longer first: ``4·2 + 1·3``):

    >>> smith_value(np.array([[1.0, 1.0], [2.0, 2.0]]), np.array([1.0, 1.0])).tolist()
    [4.0, 4.0]
    >>> smith_value(np.array([[1.0], [2.0]]), np.array([1.0, 4.0])).tolist()
    [11.0]
    """
    if not len(w):
        return np.zeros(p.shape[1])
    ratio = np.divide(p, w[:, None], out=np.full(p.shape, np.inf), where=w[:, None] > 0)
    order = np.argsort(ratio, axis=0, kind="stable")
    comp = np.cumsum(np.take_along_axis(p, order, 0), axis=0)
    return np.asarray((w[order] * comp).sum(axis=0), dtype=float)


class LazyChainBound:
    """The chain bound ``chain(U)`` proven on demand (module notes).

    Parameters
    ----------
    load_after
        ``load_after[j, i, v]``: the time port ``v`` needs for coflow ``j``'s flows released
        at ``levels[i]`` or later.
    levels
        The release levels, increasing, the first 0.
    w
        Coflow weights.
    prec
        ``prec[a, b]``: ``a`` completes no later than ``b`` in the schedules bounded.
    single
        Per coflow a lower bound on ``w_j C_j``: ``w_j (r_j + ρ_j)``.
    port_time
        ``port_time[j, v]``: coflow ``j``'s total time on port ``v``.
    whole
        The slotted model: a port's need is rounded up to whole slots.
    budget
        Subsets refined at most per call of :meth:`bound`.
    time_left
        Seconds left; the search stops (with a valid bound) when it is not positive. The
        compiled search reads it before each call only (a call refines at most ``budget``
        subsets, a few milliseconds); the Python one every 64 subsets.
    compiled
        Run the search in compiled code (:func:`._fluid_bounds_jit.lazy_search`; up to
        :data:`MAX_COMPILED` coflows, the Python search above): the same operations in the
        same order, so the same values and memos bit for bit
        (tests/formulations/test_fluid_bounds.py), about 10 times faster (3.4 against 35 µs
        per subset refined, 4×4, 26 coflows; 2.8 µs at 27 coflows since its memos are
        open-addressing tables and its arrays are reused per depth, against 4.1 with numba
        typed dicts). ``False``: the Python search, the reference.

    Examples
    --------
    One port, jobs of lengths 1 and 2, weights 1 and 1: ``chain = 1·1 + 1·3 = 4``.

    >>> la = np.array([[[1.0]], [[2.0]]])
    >>> lazy = LazyChainBound(la, np.zeros(1), np.ones(2), np.zeros((2, 2), bool),
    ...                       np.array([1.0, 2.0]), np.array([[1.0], [2.0]]))
    >>> lazy.bound(0b11, 4.0)
    4.0
    >>> lazy.bound(0b11, 5.0) < 5.0
    True
    """

    def __init__(
        self,
        load_after: FloatArray,
        levels: FloatArray,
        w: FloatArray,
        prec: npt.NDArray[np.bool_],
        single: FloatArray,
        port_time: FloatArray,
        *,
        whole: bool = False,
        budget: int = 2000,
        time_left: Callable[[], float] | None = None,
        compiled: bool = True,
    ) -> None:
        self.n = len(w)
        self.loads = np.ascontiguousarray(load_after, dtype=float)
        self.levels = np.asarray(levels, dtype=float)
        self.w = np.asarray(w, dtype=float)
        self.wl: list[float] = self.w.tolist()
        self.single = np.asarray(single, dtype=float)
        self.port_time = np.asarray(port_time, dtype=float)
        ratio = np.divide(
            self.port_time, self.w[:, None], out=np.full(self.port_time.shape, np.inf),
            where=self.w[:, None] > 0,
        )  # fmt: skip
        # per port, the coflows in Smith's order (ratio p/w; weight 0 last)
        self.port_order = np.ascontiguousarray(np.argsort(ratio, axis=0, kind="stable").T)
        self.succ = [int(sum(1 << int(k) for k in np.flatnonzero(prec[j]))) for j in range(self.n)]
        self.whole = whole
        self.budget = budget
        self.time_left = time_left
        self.compiled = compiled and self.n <= MAX_COMPILED
        # the memos: dicts for the Python search, tables for the compiled one
        self._low: dict[int, float] = {0: 0.0}
        self._high: dict[int, float] = {}
        if self.compiled:
            self._low_table = _MemoTable()
            self._high_table = _MemoTable()
            memo_put(self._low_table.keys, self._low_table.vals, 0, 0.0)
            self._succ = np.array(self.succ, dtype=np.int64)
            self._state = np.array([0, 0, budget, 0, 1, 0], dtype=np.int64)
            # the search's arrays per recursion depth (lazy_search)
            n = self.n
            self._fscratch = np.zeros((n + 1, 3 * n))
            self._iscratch = np.zeros((n + 1, 2 * n), dtype=np.int64)
            self._tscratch = np.zeros((n + 1, *self.loads.shape[1:]))
        self.refined = 0  # subsets refined, over all calls
        self._work = 0
        self._stopped = False

    @property
    def low(self) -> MutableMapping[int, float]:
        """The memo of proven lower bounds per subset mask (module notes; compiled: a copy)."""
        return self._low_table.as_dict() if self.compiled else self._low

    @property
    def high(self) -> MutableMapping[int, float]:
        """The memo of certified failures per subset mask (module notes; compiled: a copy)."""
        return self._high_table.as_dict() if self.compiled else self._high

    def members(self, mask: int) -> list[int]:
        """The coflows of the bit mask."""
        return [j for j in range(self.n) if (mask >> j) & 1]

    def spans(self, tot: FloatArray) -> FloatArray:
        """``span`` of each set whose per level and port loads are ``tot[k]``."""
        need = tot.max(axis=2)  # (sets, levels)
        if self.whole:
            need = np.ceil(need - _WHOLE_TOL)
        value = np.where(need > 0, self.levels[None, :] + need, 0.0)
        return np.asarray(value.max(axis=1), dtype=float)

    def bound(self, mask: int, target: float) -> float:
        """A lower bound on ``chain(mask)``, at least ``target`` when the search within the
        budget proves it (module notes)."""
        if self.compiled:
            return self._compiled_bound(mask, target)
        self._work, self._stopped = 0, False
        return self._bound(mask, target)

    def _compiled_bound(self, mask: int, target: float) -> float:
        state = self._state
        state[WORK] = 0
        state[STOPPED] = 0
        # out of time: no subset refined (budget 0), the floors' and memos' bound
        out_of_time = self.time_left is not None and self.time_left() <= 0
        state[BUDGET] = 0 if out_of_time else self.budget
        # a call adds at most one entry per subset it refines, and one for `mask`
        low, high = self._low_table, self._high_table
        low.reserve(int(state[LOW_COUNT]), int(state[BUDGET]) + 1)
        high.reserve(int(state[HIGH_COUNT]), int(state[BUDGET]) + 1)
        value = lazy_search(
            mask, float(target), self.n, self.loads, self.levels, self.whole, _WHOLE_TOL,
            self.single, self.port_time, self.w, self.port_order, self._succ, low.keys,
            low.vals, high.keys, high.vals, state, mask.bit_count(), self._fscratch,
            self._iscratch, self._tscratch,
        )  # fmt: skip
        self.refined = int(state[REFINED])
        self._stopped = bool(state[STOPPED])
        return float(value)

    def _bound(self, mask: int, target: float) -> float:
        low = self._low.get(mask, -math.inf)
        goal = target - _REL_TOL * max(1.0, abs(target))
        if low >= goal or self._high.get(mask, math.inf) <= target:
            return low
        return self._refine(mask, target)

    def _refine(self, mask: int, target: float) -> float:
        idx = self.members(mask)
        k = len(idx)
        span, all_floors = subset_step(
            mask, self.n, self.loads, self.levels, self.whole, _WHOLE_TOL, self.single,
            self.port_time, self.w, self.port_order,
        )  # fmt: skip
        floors = all_floors.tolist()
        span = float(span)
        low_memo = self._low
        cand: dict[int, float] = {}  # per eligible j: w_j span + a bound on chain(U - j)
        for j in idx:
            if mask & self.succ[j]:
                continue  # a coflow that must complete after j is in U
            child_low = low_memo.get(mask ^ (1 << j), -math.inf)
            cand[j] = self.wl[j] * span + max(floors[j], child_low)
        failed = False
        goal = target - _REL_TOL * max(1.0, abs(target))  # rounding of the sums
        for j in sorted(cand, key=cand.__getitem__):
            if cand[j] >= goal:
                break
            if self._out_of_work():
                break
            gain = self.wl[j] * span
            got = self._bound(mask ^ (1 << j), target - gain)
            cand[j] = max(cand[j], gain + got)
            if cand[j] < goal:
                failed = True  # certified unless the search was stopped meanwhile
                break
        value = min(cand.values(), default=math.inf) if k else 0.0
        old = low_memo.get(mask, -math.inf)
        if value > old:
            low_memo[mask] = value
        if failed and not self._stopped:
            self._high[mask] = min(self._high.get(mask, math.inf), target)
        return max(value, old)

    def _out_of_work(self) -> bool:
        if self._stopped:
            return True
        self._work += 1
        self.refined += 1
        timed = self.time_left is not None and self._work % 64 == 0
        over = self._work > self.budget
        self._stopped = over or (timed and self.time_left is not None and self.time_left() <= 0)
        return self._stopped
