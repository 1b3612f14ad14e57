"""The simulator's per-flow rate state, with its bookkeeping loops compiled by numba.

A flow's bytes sent are kept as of its last rate change (``base_sent`` at ``base_t``), so
advancing time touches nothing; its projected completion time sits in a min segment tree, so
the next completion is the root. The active set is a bitmap, listed in increasing flow order
when a policy asks for it. Every operation touches only the flows it is given: a policy that
changes ten rates pays for ten flows, however many are active.

:meth:`FlowState.drain` runs stretches of flow completions that the policy asked not to be
woken for (``Decision.notify == "coflow"``) in one compiled loop, with the same completion rule
as an ordinary event (:func:`completion_threshold`).
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np
import numpy.typing as npt

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
    from numba import njit

    @njit(cache=True, inline="always")
    def tree_set(tree, leaves, f, v):  # pragma: no cover - numba
        # min segment tree: leaf f holds flow f's projected completion time
        i = leaves + f
        tree[i] = v
        i //= 2
        while i >= 1:
            a = tree[2 * i]
            b = tree[2 * i + 1]
            m = a if a < b else b
            if tree[i] == m:
                break
            tree[i] = m
            i //= 2

    @njit(cache=True)
    def due(tree, leaves, thr):  # pragma: no cover - numba
        # every leaf whose value is <= thr, in increasing flow order
        out = []
        stack = [1]
        while len(stack) > 0:
            i = stack.pop()
            if tree[i] > thr:
                continue
            if i >= leaves:
                out.append(i - leaves)
            else:
                stack.append(2 * i + 1)
                stack.append(2 * i)
        return np.array(out, dtype=np.int64)

    @njit(cache=True)
    def apply(
        flows, rates, t, rate, base_sent, base_t, size, alive, tree, leaves
    ):  # pragma: no cover
        # validates, then sets the rates that differ; returns (changed flows, their rates,
        # status): status -1 names an inactive flow, -2 a non-finite rate
        k = flows.shape[0]
        out_f = np.empty(k, dtype=np.int64)
        out_r = np.empty(k)
        nf = alive.shape[0]
        for j in range(k):
            f = flows[j]
            if f < 0 or f >= nf or not alive[f]:
                return out_f[:0], out_r[:0], -1
            if not np.isfinite(rates[j]):
                return out_f[:0], out_r[:0], -2
        n = 0
        for j in range(k):
            f = flows[j]
            r = rates[j]
            if r == rate[f]:
                continue
            sent = base_sent[f] + rate[f] * (t - base_t[f])
            base_sent[f] = sent
            base_t[f] = t
            rate[f] = r
            tree_set(tree, leaves, f, t + (size[f] - sent) / r if r > 0 else np.inf)
            out_f[n] = f
            out_r[n] = r
            n += 1
        return out_f[:n], out_r[:n], 0

    @njit(cache=True)
    def finish(flows, t, rate, base_sent, base_t, alive, tree, leaves):  # pragma: no cover
        # completed flows stop at t and leave the active set
        for j in range(flows.shape[0]):
            f = flows[j]
            base_sent[f] += rate[f] * (t - base_t[f])
            base_t[f] = t
            rate[f] = 0.0
            tree_set(tree, leaves, f, np.inf)
            alive[f] = False

    @njit(cache=True)
    def drain(
        t_limit,
        tol,
        tree,
        leaves,
        rate,
        base_sent,
        base_t,
        size,
        alive,
        flow_coflow,
        coflow_left,
        coflow_sent_done,
    ):  # pragma: no cover - numba
        # completes flows in time order while the next completion is before t_limit, stopping
        # after the first instant at which a coflow completes; returns (flows, their
        # completion times, number of instants, whether a coflow completed)
        out_f = []
        out_t = []
        instants = 0
        while True:
            tc = tree[1]
            if not tc < t_limit:
                return np.array(out_f, dtype=np.int64), np.array(out_t), instants, False
            fin = due(tree, leaves, tc + tol * max(1.0, abs(tc)))
            finish(fin, tc, rate, base_sent, base_t, alive, tree, leaves)
            instants += 1
            hit = False
            for f in fin:
                k = flow_coflow[f]
                coflow_left[k] -= 1
                coflow_sent_done[k] += size[f]
                hit = hit or coflow_left[k] == 0
                out_f.append(f)
                out_t.append(tc)
            if hit:
                return np.array(out_f, dtype=np.int64), np.array(out_t), instants, True

    @njit(cache=True)
    def sent_of(flows, t, rate, base_sent, base_t):  # pragma: no cover - numba
        out = np.empty(flows.shape[0])
        for j in range(flows.shape[0]):
            f = flows[j]
            out[j] = base_sent[f] + rate[f] * (t - base_t[f])
        return out

    return {"due": due, "apply": apply, "finish": finish, "drain": drain, "sent_of": sent_of}


class FlowState:
    """Rates, bytes sent and projected completions of every flow of an instance."""

    def __init__(self, inst: Instance) -> None:
        nf = inst.num_flows
        self.size = np.ascontiguousarray(inst.flow_size, dtype=np.float64)
        self.flow_coflow = np.ascontiguousarray(inst.flow_coflow, dtype=np.int64)
        self.rate = np.zeros(nf)
        self.base_sent = np.zeros(nf)
        self.base_t = np.zeros(nf)
        self.leaves = 1 << max(0, (nf - 1).bit_length())
        self.tree = np.full(2 * self.leaves, np.inf)
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
        f = np.ascontiguousarray(flows, dtype=np.int64)
        r = np.ascontiguousarray(rates, dtype=np.float64)
        return self.k["apply"](
            f,
            r,
            t,
            self.rate,
            self.base_sent,
            self.base_t,
            self.size,
            self.alive,
            self.tree,
            self.leaves,
        )

    def sent(self, flows: IntArray, t: float) -> FloatArray:
        """Bytes each of ``flows`` has sent by ``t`` (no later than its next rate change)."""
        return self.k["sent_of"](flows, t, self.rate, self.base_sent, self.base_t)

    def next_completion(self) -> float:
        """The earliest projected completion time (``inf`` if no flow is sending)."""
        return float(self.tree[1])

    def due(self, t: float, tol: float) -> IntArray:
        """The flows that complete at an event at ``t`` (see :func:`completion_threshold`)."""
        return self.k["due"](self.tree, self.leaves, completion_threshold(t, tol))

    def finish(self, flows: IntArray, t: float) -> None:
        """Removes completed flows (their rate drops to 0 at ``t``)."""
        self.k["finish"](
            flows, t, self.rate, self.base_sent, self.base_t, self.alive, self.tree, self.leaves
        )
        self.count -= len(flows)
        self._active = None

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
            self.leaves,
            self.rate,
            self.base_sent,
            self.base_t,
            self.size,
            self.alive,
            self.flow_coflow,
            coflow_left,
            coflow_sent_done,
        )
        if len(flows):
            self.count -= len(flows)
            self._active = None
        return flows, times, int(instants), bool(hit)
