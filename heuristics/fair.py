"""Per-flow fair sharing (``fair``): per-flow max-min fairness, what TCP approximates.

The "per-flow fairness" baseline of Chowdhury's thesis (§5, L1137; ``specs/varys-thesis-ch1-5.md``
§3.6). It is non-clairvoyant and recomputes the allocation at every arrival and completion.

Flows between the same ingress and egress port are symmetric under per-flow max-min, so the
allocation is computed on (ingress, egress) *pairs* weighted by their number of active flows
(at most ``m²`` pairs, however many flows), and each pair keeps a linked list of its flows: at
an event only the flows of pairs whose level changed get new rates (``Decision.update``).
"""

from __future__ import annotations

from functools import cache
from typing import Any, ClassVar

import numpy as np

from coflowlab.allocation import max_min_fair
from coflowlab.policy import Decision, InstanceView, ObservedState

__all__ = ["FairSharing"]


@cache
def _kernels() -> dict[str, Any]:
    from numba import njit

    @njit(cache=True)
    def link(head, nxt, prv, count, pair, flows):  # pragma: no cover - numba
        for k in range(flows.shape[0]):
            f = flows[k]
            p = pair[f]
            h = head[p]
            nxt[f] = h
            prv[f] = -1
            if h >= 0:
                prv[h] = f
            head[p] = f
            count[p] += 1

    @njit(cache=True)
    def unlink(head, nxt, prv, count, pair, flows):  # pragma: no cover - numba
        for k in range(flows.shape[0]):
            f = flows[k]
            p = pair[f]
            a = prv[f]
            b = nxt[f]
            if a >= 0:
                nxt[a] = b
            else:
                head[p] = b
            if b >= 0:
                prv[b] = a
            count[p] -= 1

    @njit(cache=True)
    def members(head, nxt, count, pairs, level):  # pragma: no cover - numba
        total = 0
        for k in range(pairs.shape[0]):
            total += count[pairs[k]]
        flows = np.empty(total, dtype=np.int64)
        rates = np.empty(total)
        j = 0
        for k in range(pairs.shape[0]):
            f = head[pairs[k]]
            while f >= 0:
                flows[j] = f
                rates[j] = level[k]
                j += 1
                f = nxt[f]
        return flows, rates

    return {"link": link, "unlink": unlink, "members": members}


class FairSharing:
    """Per-flow max-min fair sharing (``fair``), recomputed at every arrival and completion.

    Examples
    --------
    Thesis Fig. 3.2: every flow gets 1/3 until t = 3, then the big sender's flows finish at 5.

    >>> from coflowlab import simulate
    >>> from coflowlab.instances.examples import fig_3_2
    >>> simulate(fig_3_2(), FairSharing()).coflow_completion.tolist()
    [5.0]
    """

    name: ClassVar[str] = "fair"
    clairvoyant: ClassVar[bool] = False

    def reset(self, view: InstanceView) -> None:
        m = view.num_ports
        self.m = m
        self.cap_in, self.cap_out = view.cap_in, view.cap_out
        self.pair = view.flow_src * m + view.flow_dst
        nf = view.num_flows
        self.head = np.full(m * m, -1, dtype=np.int64)
        self.nxt = np.full(nf, -1, dtype=np.int64)
        self.prv = np.full(nf, -1, dtype=np.int64)
        self.count = np.zeros(m * m, dtype=np.int64)
        self.level = np.zeros(m * m)  # the rate of every flow of each pair
        self.k = _kernels()

    def decide(self, state: ObservedState) -> Decision:
        k, m = self.k, self.m
        k["link"](self.head, self.nxt, self.prv, self.count, self.pair, state.arrived)
        k["unlink"](self.head, self.nxt, self.prv, self.count, self.pair, state.completed)
        pairs = np.flatnonzero(self.count)
        weight = self.count[pairs].astype(float)
        total = max_min_fair(pairs // m, pairs % m, self.cap_in, self.cap_out, weight=weight)
        level = total / weight
        changed = np.flatnonzero(level != self.level[pairs])
        self.level[:] = 0.0
        self.level[pairs] = level
        flows, rates = k["members"](
            self.head, self.nxt, self.count, pairs[changed], level[changed]
        )
        return Decision(update=(flows, rates))
