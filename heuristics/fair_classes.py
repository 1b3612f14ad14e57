"""Per-flow fair sharing (``fair``) replayed on rate classes, in one compiled event loop.

Under per-flow max-min fairness every flow between the same ingress and egress port gets the
same rate, so a port pair is a *rate class*: :class:`FairClassEngine` writes one class record
``(time, class, speed)`` when a pair's rate changes, where ``simulate(inst, FairSharing())``
writes one record per flow of the pair (187 million on the Facebook trace). The events are the
simulator's (releases and completions, with the same completion rule,
:func:`coflowlab.flow_state.completion_threshold`), counted the same way; the rates are the same
numbers (the same weighted max-min over port pairs, Bertsekas & Gallager, *Data Networks*, 2nd
ed., ch. 6, in :func:`coflowlab.allocation.max_min_fair_levels`).

A class record sets the rate of every active flow of the class; a flow joins its class at its
release without a record. A class's *virtual bytes* ``V`` are the integral of its speed, so
flow ``f`` has sent ``V(t) - V(release_f)`` and completes when that reaches its size: the
flows of a class complete in the order of their key ``V(release_f) + size_f``, kept in one
min-heap per class (in a fixed slice of one array), and the next completion of each class sits
in one array over the classes, scanned at every event together with the pairs' new speeds. An
event thus costs O(m²) plus the max-min rounds plus the flows that join or leave, however many
flows are active.

The max-min is the one of :func:`coflowlab.allocation.max_min_fair_levels`, redone
incrementally: the rounds of progressive filling of the previous event are replayed, touching
only the ports whose pairs changed, until the first round that differs; the levels are the
same to the bit as recomputing from scratch (``FairClassEngine.incremental = False``, the
reference).

Coflow dependencies (starts-after) are not supported: an instance with dependencies is
rejected.
"""

from __future__ import annotations

from functools import cache
from typing import Any, ClassVar

import numpy as np

from coflowlab.class_simulation import (
    ClassRun,
    IntArray,
    Progress,
    RunState,
    Sink,
    dependencies_unsupported,
)
from coflowlab.constants import TOL
from coflowlab.exceptions import InvalidScheduleError
from coflowlab.instance import Instance

__all__ = ["FairClassEngine"]


@cache
def _kernels() -> dict[str, Any]:
    from . import _fair_class_jit as k

    return {"run": k.run}


class FairClassEngine:
    """Per-flow fair sharing (``fair``) on rate classes, one class per port pair.

    Gives the events of ``simulate(instance, FairSharing())`` and, within the tolerance, its
    completion times, writing class records ``(time, class, speed)`` instead of per-flow
    records: flow ``f`` of class ``flow_class[f]`` sends at its class's speed while active.

    Parameters
    ----------
    instance
        The instance; it must have no coflow dependencies.
    tol
        Relative tolerance (:mod:`coflowlab.constants`), as in :func:`coflowlab.simulate`.

    Attributes
    ----------
    num_classes
        ``m * m``: class ``src * m + dst`` holds the flows of one port pair.
    flow_class
        Each flow's class.
    flow_weight
        ``None``: every flow sends at its class's speed (weight 1).
    incremental
        Redo the max-min incrementally (default); ``False`` recomputes it from scratch at
        every event (the reference; the same bits, slower).

    Raises
    ------
    InvalidScheduleError
        If the instance has coflow dependencies (class records cannot express them).

    Examples
    --------
    Thesis Fig. 3.2: every flow gets 1/3 until t = 3, then the big sender's flows finish at 5.

    >>> from coflowlab.instances.examples import fig_3_2
    >>> engine = FairClassEngine(fig_3_2())
    >>> records = []
    >>> run = engine.run(lambda t, c, r: records.extend(zip(t.tolist(), c.tolist(), r.tolist())))
    >>> run.coflow_completion.tolist(), run.num_events, len(records)
    ([5.0], 2, 8)
    """

    name: ClassVar[str] = "fair"

    def __init__(self, instance: Instance, *, tol: float = TOL) -> None:
        why = dependencies_unsupported(instance)
        if why is not None:
            raise InvalidScheduleError(f"FairClassEngine: {why}")
        self.instance = instance
        self.tol = float(tol)
        m = instance.num_ports
        self.num_classes: int = m * m
        self.flow_class: IntArray = np.ascontiguousarray(
            instance.flow_src * m + instance.flow_dst, dtype=np.int64
        )
        self.flow_weight: None = None
        self.per_flow_records = False
        self.incremental = True  # False: maxmin_pairs from scratch at every event
        fab = instance.fabric
        self._cap_in = np.array(np.broadcast_to(fab.ingress_capacity, (m,)), dtype=np.float64)
        self._cap_out = np.array(np.broadcast_to(fab.egress_capacity, (m,)), dtype=np.float64)
        nf = instance.num_flows
        release = np.asarray(instance.flow_release, dtype=np.float64)
        # releases in the simulator's order: by time, then coflow, then flow
        order = np.lexsort((np.arange(nf), instance.flow_coflow, release))
        self._rel_flow = order.astype(np.int64)
        self._rel_time = np.ascontiguousarray(release[self._rel_flow])
        # every class's flows own one slice of the heap arrays
        counts = np.bincount(self.flow_class, minlength=self.num_classes)
        self._cstart = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64)

    def run(
        self,
        sink: Sink,
        *,
        chunk: int = 1 << 21,
        max_events: int | None = None,
        progress: Progress | None = None,
    ) -> ClassRun:
        """Runs fair sharing to the end, handing the class records to ``sink``, as
        :meth:`ClassEngine.run <coflowlab.class_simulation.ClassEngine.run>` says. One
        event's worth of records is one per class. Also raises the simulator's
        :class:`~coflowlab.simulator.SimulationError` when active flows have no rate and no
        release is left (a port pair with infinite capacity at both ends)."""
        from ._event_loop_jit import drive

        inst = self.instance
        tol = self.tol
        nf, C = inst.num_flows, self.num_classes
        run = RunState(inst, chunk=chunk, room=C, max_events=max_events)
        hkey = np.empty(nf)
        hflow = np.empty(nf, dtype=np.int64)
        hn = np.zeros(C, dtype=np.int64)
        weight = np.zeros(C)
        speed = np.zeros(C)
        vbase = np.zeros(C)
        since = np.zeros(C)
        forced = np.zeros(C, dtype=np.bool_)
        ctop, ctop_size, cnext = np.zeros(C), np.zeros(C), np.full(C, np.inf)
        state_f = np.array([self._rel_time[0] if nf else np.inf, np.inf])
        state_i = np.zeros(5, dtype=np.int64)
        m = inst.num_ports
        P = 2 * m
        res0 = np.concatenate((self._cap_in, self._cap_out))
        mm_float = (res0, np.zeros(P), np.zeros(P + 1), np.zeros(P), np.zeros(P), np.zeros(P))
        mm_int = (np.zeros(P, np.int64), np.zeros(1, np.int64), np.zeros(P, np.int64))
        h_round = np.full((P, m + 3), -1, dtype=np.int64)  # each port's states, by round
        h_res, h_wsum = np.zeros((P, m + 3)), np.zeros((P, m + 3))
        h_res[:, 0] = res0
        h_count = np.zeros((P, m + 3), dtype=np.int64)
        h_len = np.ones(P, dtype=np.int64)
        mm_arrays = (
            self.incremental, mm_int, mm_float, np.zeros((m, m)), np.empty(P, np.int64),
            np.zeros(P, np.bool_), np.empty(P + 1, np.int64), np.full(P, np.inf), h_round,
            (h_res, h_wsum), h_count, h_len,
        )  # fmt: skip
        kernel = _kernels()["run"]
        sizes = np.ascontiguousarray(inst.flow_size, dtype=np.float64)
        coflow = np.ascontiguousarray(inst.flow_coflow, dtype=np.int64)
        buf = run.buf

        def step(pause: int) -> tuple[int, int]:
            return kernel(
                self._cap_in, self._cap_out, self._rel_flow, self._rel_time, self.flow_class,
                sizes, coflow, run.flow_done, self._cstart, hkey, hflow, hn, ctop, ctop_size,
                cnext, weight, speed, vbase, since, forced, run.coflow_left, run.coflow_done,
                state_f, state_i, tol, run.limit, buf.t, buf.c, buf.r, buf.pos, *mm_arrays,
            )  # fmt: skip

        return drive(
            step, run, sink, state_f, state_i, name=self.name, max_events=max_events,
            progress=progress, pause_every=None,
        )  # fmt: skip
