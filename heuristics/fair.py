"""Per-flow fair sharing (``fair``): per-flow max-min fairness, what TCP approximates.

The "per-flow fairness" baseline of Chowdhury's thesis (PhD thesis, UC Berkeley 2015, §3.2.1,
§5.3). It is non-clairvoyant and recomputes the allocation at every arrival and completion.

Flows between the same ingress and egress port are symmetric under per-flow max-min, so the
allocation is computed on (ingress, egress) *pairs* weighted by their number of active flows
(an ``m x m`` matrix, however many flows: :func:`~coflowlab.allocation.max_min_fair_levels`).
At an event only the flows of pairs whose level changed get new rates (``Decision.update``).
To list those flows cheaply, every pair owns a fixed slice of one array of all flows (sorted
by pair once, at the start) and keeps its active flows at the front of that slice.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from coflowlab.allocation import max_min_fair_levels
from coflowlab.instance import Instance
from coflowlab.policy import Decision, InstanceView, ObservedState

if TYPE_CHECKING:
    from .fair_classes import FairClassEngine

__all__ = ["FairSharing"]


@cache
def _kernels() -> dict[str, Any]:
    from . import _fair_jit as k

    return {"apply": k.apply, "emit": k.emit}


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
        self.pair = np.ascontiguousarray(view.flow_src * m + view.flow_dst, dtype=np.int64)
        self.order = np.argsort(self.pair, kind="stable")  # all flows, grouped by pair
        self.pos = np.empty_like(self.order)  # where each flow sits in order
        self.pos[self.order] = np.arange(len(self.order))
        self.start = np.searchsorted(self.pair[self.order], np.arange(m * m))
        self.count = np.zeros(m * m, dtype=np.int64)  # active flows of each pair
        self.weight = np.zeros((m, m))  # the same, as max-min weights
        self.level = np.zeros(m * m)  # the rate of every flow of each pair
        self.touched = np.zeros(m * m, dtype=np.int64)  # last event a flow arrived at
        self.epoch = 0
        self.k = _kernels()

    def class_engine(self, instance: Instance, tol: float) -> FairClassEngine:
        """The compiled replay on rate classes (one per port pair) that
        :func:`coflowlab.simulate` uses when it can (:mod:`coflowlab.class_simulation`)."""
        from .fair_classes import FairClassEngine

        return FairClassEngine(instance, tol=tol)

    def decide(self, state: ObservedState) -> Decision:
        self.epoch += 1
        arrived = np.asarray(state.arrived, dtype=np.int64)
        completed = np.asarray(state.completed, dtype=np.int64)
        self.k["apply"](
            self.order, self.pos, self.start, self.count, self.weight.ravel(), self.pair,
            arrived, completed, self.touched, self.epoch,
        )  # fmt: skip
        level_in, level_out = max_min_fair_levels(self.weight, self.cap_in, self.cap_out)
        flows, rates = self.k["emit"](
            self.order, self.start, self.count, self.level, level_in, level_out,
            self.touched, self.epoch,
        )  # fmt: skip
        return Decision(update=(flows, rates))
