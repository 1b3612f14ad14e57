"""The simulator's per-flow rate state, with its bookkeeping loops compiled by numba.

A flow's bytes sent are kept as of its last rate change (``base_sent`` at ``base_t``), so
advancing time touches nothing; its projected completion time sits in a min tree, so the next
completion is the root. The active set is a bitmap, listed in increasing flow order when a
policy asks for it. Every operation touches only the flows it is given: a policy that changes
ten rates pays for ten flows, however many are active.

Laid out for the cost per rate change, which dominates when a policy changes thousands of
rates per event (fair sharing on the Facebook trace: 187 million changes): a flow's rate,
bytes sent, time of its last change and size share one 32-byte row, so the scattered flows a
policy names cost one cache miss each, not one per array; the tree has fan-out 8 (siblings in
one cache line, 8 levels for 700,000 flows), and after a batch of changes it is repaired level
by level (:func:`coflowlab._flow_state_jit.propagate`) rather than leaf by leaf. A rate change
is written as a record straight into the simulator's buffer (:meth:`FlowState.apply_into`).

:meth:`FlowState.drain` runs stretches of flow completions that the policy asked not to be
woken for (``Decision.notify == "coflow"``) in one compiled loop, with the same completion rule
as an ordinary event (:func:`completion_threshold`); :meth:`FlowState.complete` settles an
ordinary event's completions, with the simulator's per-coflow counts, in one compiled call.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np
import numpy.typing as npt

from .constants import TOL
from .instance import Instance

__all__ = ["FlowState", "completion_threshold"]

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


def completion_threshold(t: float, tol: float) -> float:
    """Flows projected to complete by this time complete at the event at ``t``.

    The relative tolerance absorbs the rounding of ``t + remaining / rate``
    (:mod:`coflowlab.constants`).
    """
    return t + tol * max(1.0, abs(t))


@cache
def _kernels() -> dict[str, Any]:
    """Compiles the loops on first use (cached on disk between runs)."""
    from . import _flow_state_jit as k

    return {
        "due": k.due,
        "apply": k.apply,
        "finish": k.finish,
        "drain": k.drain,
        "complete": k.complete,
        "sent_of": k.sent_of,
    }


def _aligned_rows(n: int, width: int) -> FloatArray:
    """A zeroed ``(n, width)`` float64 array whose first row starts on a 64-byte boundary."""
    raw = np.zeros(n * width + 8)
    skip = (-raw.ctypes.data % 64) // 8  # float64 entries up to the boundary
    return raw[skip : skip + n * width].reshape(n, width)


def _min_tree(n: int) -> tuple[FloatArray, IntArray]:
    """An empty min tree of fan-out 8 over ``n`` leaves (see ``tree_set`` in
    :mod:`coflowlab._flow_state_jit`): the flat array (``inf`` everywhere, 64-byte aligned)
    and each level's offset. Every level is padded to a multiple of 8 entries, so that a
    group of siblings is one cache line; the last level is the root."""
    sizes = [max(8, -(-n // 8) * 8)]
    while sizes[-1] > 8:
        sizes.append(-(-sizes[-1] // 64) * 8)
    sizes.append(1)
    off = np.concatenate(([0], np.cumsum(sizes[:-1]))).astype(np.int64)
    tree = _aligned_rows(int(off[-1]) + 8, 1).ravel()
    tree[:] = np.inf
    return tree, off


class FlowState:
    """Rates, bytes sent and projected completions of every flow of an instance."""

    def __init__(self, inst: Instance, tol: float = TOL) -> None:
        nf = inst.num_flows
        self.tol = tol  # a flow with at most tol * size left is due at the event (apply)
        self.flow_coflow = np.ascontiguousarray(inst.flow_coflow, dtype=np.int64)
        # a flow's rate, bytes sent at its last rate change, the time of that change and its
        # size in one row (coflowlab._flow_state_jit); the attributes are views of the columns
        from . import _flow_state_jit as j

        self.rows = _aligned_rows(nf, j.WIDTH)
        self.rows[:, j.SIZE] = inst.flow_size
        self.rate, self.base_sent, self.base_t, self.size = (
            self.rows[:, c] for c in (j.RATE, j.SENT, j.SINCE, j.SIZE)
        )
        self.tree, self.off = _min_tree(nf)
        self._root = int(self.off[-1])
        # the active set as a bitmap over flow indices: listing it gives increasing indices,
        # so the policies' gathers (src, dst, sizes of the active flows) read memory in order
        self.alive = np.zeros(nf, dtype=np.bool_)
        self.count = 0
        self._lo = self._hi = 0  # every active flow lies in [lo, hi)
        self._active: IntArray | None = None
        self.k = _kernels()

    @property
    def active(self) -> IntArray:
        """The active flows, in increasing index order (cached until the set changes)."""
        if self._active is None:
            window = self.alive[self._lo : self._hi]
            self._active = np.flatnonzero(window) + self._lo
            if len(self._active):
                self._lo = int(self._active[0])
        return self._active

    def add(self, flows: IntArray, t: float) -> None:
        """Activates newly released flows, at rate 0."""
        if not len(flows):
            return
        self.alive[flows] = True
        self.count += len(flows)
        lo, hi = int(flows.min()), int(flows.max()) + 1
        if self.count == len(flows):  # the set was empty
            self._lo, self._hi = lo, hi
        else:
            self._lo, self._hi = min(self._lo, lo), max(self._hi, hi)
        self.base_t[flows] = t
        self._active = None

    def apply(
        self, flows: IntArray, rates: FloatArray, t: float
    ) -> tuple[IntArray, FloatArray, int]:
        """Sets new rates at ``t``; returns the flows whose rate changed, their rates, and a
        status (0 ok, -1 a flow is not active, -2 a rate is not finite; nothing is changed
        then)."""
        k = len(flows)
        out_t, out_f, out_r = np.empty(k), np.empty(k, dtype=np.int64), np.empty(k)
        n, status = self.apply_into(flows, rates, t, out_t, out_f, out_r, 0)
        return out_f[:n], out_r[:n], status

    def apply_into(
        self,
        flows: IntArray,
        rates: FloatArray,
        t: float,
        out_time: FloatArray,
        out_flow: IntArray,
        out_rate: FloatArray,
        pos: int,
    ) -> tuple[int, int]:
        """:meth:`apply`, writing a record (``t``, flow, new rate) per changed flow straight
        into ``out_*[pos:]`` (room for ``len(flows)`` records); returns the number written
        and the status."""
        f = np.ascontiguousarray(flows, dtype=np.int64)
        r = np.ascontiguousarray(rates, dtype=np.float64)
        n, status = self.k["apply"](
            f, r, float(t), self.rows, self.alive, self.tree, self.off, self.tol,
            out_time, out_flow, out_rate, pos,
        )  # fmt: skip
        return int(n), int(status)

    def sent(self, flows: IntArray, t: float) -> FloatArray:
        """Bytes each of ``flows`` has sent by ``t`` (no later than its next rate change)."""
        return self.k["sent_of"](np.ascontiguousarray(flows, dtype=np.int64), t, self.rows)

    def next_completion(self) -> float:
        """The earliest projected completion time (``inf`` if no flow is sending)."""
        return float(self.tree[self._root])

    def due(self, t: float, tol: float) -> IntArray:
        """The flows that complete at an event at ``t`` (see :func:`completion_threshold`)."""
        return self.k["due"](self.tree, self.off, completion_threshold(t, tol))

    def finish(self, flows: IntArray, t: float) -> None:
        """Removes completed flows (their rate drops to 0 at ``t``)."""
        self.k["finish"](flows, t, self.rows, self.alive, self.tree, self.off)
        self.count -= len(flows)
        self._active = None

    def complete(
        self,
        t: float,
        tol: float,
        coflow_left: IntArray,
        coflow_sent_done: FloatArray,
        flow_done_at: FloatArray,
    ) -> tuple[IntArray, IntArray]:
        """:meth:`due` and :meth:`finish` at an event at ``t``, with the simulator's
        per-coflow bookkeeping, in one compiled call (one per completion event instead of a
        handful of NumPy calls).

        Each completed flow is counted off its coflow in ``coflow_left``, its size added to
        ``coflow_sent_done`` (in increasing flow order, so the sums are the same floats as
        ``np.add.at`` gives) and ``t`` written to ``flow_done_at``. Returns the completed
        flows (increasing) and the coflows whose last flow they were (increasing).
        """
        fin, done = self.k["complete"](
            completion_threshold(t, tol), float(t), self.tree, self.off, self.rows,
            self.alive, self.flow_coflow, coflow_left, coflow_sent_done, flow_done_at,
        )  # fmt: skip
        if len(fin):
            self.count -= len(fin)
            self._active = None
        return fin, done

    def remove(self, flows: IntArray) -> None:
        """Removes flows that never sent (rejected coflows)."""
        self.alive[flows] = False
        self.count -= len(flows)
        self._active = None

    def drain(
        self, t_limit: float, tol: float, coflow_left: IntArray, coflow_sent_done: FloatArray
    ) -> tuple[IntArray, FloatArray, int, bool]:
        """Completes flows before ``t_limit`` until a coflow completes (see the module doc).

        Returns the completed flows, their completion times (non-decreasing), the number of
        distinct completion instants, and whether the last instant completed a coflow.
        ``coflow_left`` and ``coflow_sent_done`` are updated in place.
        """
        flows, times, instants, hit = self.k["drain"](
            t_limit,
            tol,
            self.tree,
            self.off,
            self.rows,
            self.alive,
            self.flow_coflow,
            coflow_left,
            coflow_sent_done,
        )
        if len(flows):
            self.count -= len(flows)
            self._active = None
        return flows, times, int(instants), bool(hit)
