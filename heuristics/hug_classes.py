"""HUG (``hug``, ``hug-cooperative``) replayed in one compiled event loop, on singleton classes.

``simulate(inst, HUG())`` gives every active flow a new rate at every event: stage 1 alone
gives each flow ``P* · remaining / Γ_k`` (Chowdhury, *Coflow: A Networking Abstraction for
Distributed Data-Parallel Applications*, PhD thesis, UC Berkeley, 2015, §7.5.1, Algorithm 6),
and ``P*`` and the remaining bytes change with time. On the Facebook trace that is about 60,000
rates per event, and the per-flow path spends them in separate passes with NumPy temporaries
and Python between them (the active set, the bytes sent, the grouping, the decision, the
write). :class:`HUGClassEngine` runs the simulator's loop itself, in one compiled function
(:mod:`coflowlab.heuristics._hug_class_jit`) that calls the policy's compiled decision
(:func:`._hug_jit.group_loads_at`, :func:`._hug_jit.correlate`, ``P*`` with the operations of
:func:`.correlation.optimal_isolation`, :func:`._hug_jit.hug_rates`) on the policy's own
``Grouping`` arrays, and the simulator's own flow bookkeeping (:mod:`coflowlab._flow_state_jit`,
through :mod:`._event_loop_jit`) in the simulator's order, so the events, rates and completion
times are the same floating-point numbers.

The records go out as class records (:mod:`coflowlab.class_simulation`,
``docs/rate-classes.md``) with one class per flow (``flow_class = arange(F)``): a record
``(t, f, r)`` is the per-flow record the simulator writes when flow ``f``'s rate changes.
Unlike the other singleton-class engines, this one also writes the per-flow path's rate-0
record of each completion, so its records are the per-flow path's, all of them. A flow
completes once it is within the tolerance of its size (:mod:`coflowlab.constants`), and HUG
gives a flow a rate proportional to its remaining bytes: at the event before, a flow with a
rounding residue gets a rate so small that, under the class semantics alone (a flow sends at
its class's speed until its bytes reach its size), it would keep sending for thousands of time
units over ports the next decisions fill. On the Facebook trace, without those records, the
class verifier finds 869 capacity violations of about 1e-9. Since they are the per-flow
records, the engine says so (``per_flow_records``) and :func:`coflowlab.simulate` checks them
with the per-flow verifier (:class:`coflowlab.verifier.FluidVerifier`, about 8 ns per record
here against the class verifier's 35 ns on one-flow classes); the reported completion times
are then the per-flow path's, bit for bit.

Covered: :class:`~coflowlab.heuristics.hug.HUG` and
:class:`~coflowlab.heuristics.hug.HUGCooperative` themselves (not subclasses, whose decisions
the engine would not see) with ``fast=True`` (the compiled decision) and no misreports
(``reported``), on instances without coflow dependencies. :meth:`HUGClassEngine.unsupported`
says why anything else is not; the policy then offers no engine, so :func:`coflowlab.simulate`
runs it per flow.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

import numpy as np
import numpy.typing as npt

from coflowlab.class_simulation import ClassRun, RecordBuffer
from coflowlab.constants import TOL
from coflowlab.exceptions import InvalidScheduleError
from coflowlab.flow_state import FlowState
from coflowlab.instance import Instance
from coflowlab.simulator import instance_view

from .correlation import EPS
from .hug import HUG, HUGCooperative

__all__ = ["HUGClassEngine"]

PROGRESS_EVENTS = 1 << 17
"""With a ``progress`` callback, the compiled loop returns to report it at least this often
(in events); it also reports after each chunk of records."""

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
Sink = Callable[[FloatArray, IntArray, FloatArray], None]


@cache
def _kernels() -> dict[str, Any]:
    from . import _hug_class_jit as k

    return {"run": k.run}


class HUGClassEngine:
    """HUG (capped or cooperative) in one compiled event loop, one class per flow.

    Gives the events of ``simulate(instance, policy)`` and its rates, writing each rate change
    as a class record ``(time, flow, rate)`` (class ``f`` is flow ``f``); completion times
    agree within the tolerance (the verifier's are reported).

    Parameters
    ----------
    policy
        A :class:`~coflowlab.heuristics.hug.HUG` or
        :class:`~coflowlab.heuristics.hug.HUGCooperative` (not a subclass) with
        ``fast=True`` and no ``reported`` vectors. Only its mode (``cooperative``) is read;
        the engine drives a fresh copy, so ``policy`` is left as it is.
    instance
        The instance, without coflow dependencies.
    tol
        Relative tolerance (:mod:`coflowlab.constants`), as in :func:`coflowlab.simulate`.

    Attributes
    ----------
    name
        The policy's name (``hug`` or ``hug-cooperative``).
    cooperative
        The mode: stage 2 uncapped (``True``) or capped at ``P*`` per link (``False``).
    num_classes
        The number of flows: every flow is its own class.
    flow_class
        ``arange(F)``.
    flow_weight
        ``None``: a flow sends at its class's speed.
    per_flow_records
        ``True``: the records are the per-flow simulator's, completions included.

    Raises
    ------
    InvalidScheduleError
        If the policy or instance is not supported (:meth:`unsupported` gives the reason).

    Examples
    --------
    Coflex Fig. 2 (Wang, Ma, Li, Li, IEEE INFOCOM 2017; thesis Fig. 7.7 with the links
    swapped): both coflows at progress 2/3 and B up to the cap, as the per-flow path gives.

    >>> from coflowlab.instances.examples import coflex_fig2
    >>> records = []
    >>> run = HUGClassEngine(HUG(), coflex_fig2()).run(lambda t, c, r: records.append(r.copy()))
    >>> [round(x, 12) for x in records[0][:4].tolist()]
    [0.666666666667, 0.333333333333, 0.333333333333, 0.666666666667]
    >>> run.coflow_completion.tolist()
    [1.5, 2.5]
    """

    def __init__(self, policy: HUG, instance: Instance, *, tol: float = TOL) -> None:
        why = self.unsupported(policy, instance)
        if why is not None:
            raise InvalidScheduleError(f"HUGClassEngine: {why}")
        self.name: str = policy.name
        self.cooperative = bool(policy.cooperative)
        self.instance = instance
        self.tol = float(tol)
        nf = instance.num_flows
        self.num_classes: int = nf
        self.flow_class: IntArray = np.arange(nf, dtype=np.int64)
        self.flow_weight: None = None
        self.per_flow_records = True
        # releases in the simulator's order (coflowlab.simulator._Arrivals): by time (not
        # before 0), then coflow, then flow index
        release = np.maximum(np.asarray(instance.flow_release, dtype=np.float64), 0.0)
        order = np.lexsort((np.arange(nf), instance.flow_coflow, release))
        self._rel_flow = np.ascontiguousarray(order, dtype=np.int64)
        self._rel_time = np.ascontiguousarray(release[order])

    @staticmethod
    def unsupported(policy: object, instance: Instance) -> str | None:
        """Why the engine cannot replay ``policy`` on ``instance``, or ``None`` if it can."""
        if type(policy) not in (HUG, HUGCooperative):
            return (
                "the policy must be a HUG or HUGCooperative (not a subclass, whose decisions "
                f"the engine would not see), got {type(policy).__name__}"
            )
        assert isinstance(policy, HUG)
        if not policy.fast:
            return "only the compiled decision (fast=True) is replayed; fast=False is NumPy"
        if policy.reported:
            return (
                "misreported correlation vectors (reported) are not compiled; the policy "
                f"has {len(policy.reported)}"
            )
        if len(instance.dependencies):
            return (
                "coflow dependencies (starts-after) are not supported by class records; the "
                f"instance has {len(instance.dependencies)}"
            )
        return None

    def run(
        self,
        sink: Sink,
        *,
        chunk: int = 1 << 20,
        max_events: int | None = None,
        progress: Callable[[int, float], None] | None = None,
    ) -> ClassRun:
        """Runs the policy to the end, handing the records to ``sink``.

        Parameters
        ----------
        sink
            Called as ``sink(time, cls, rate)`` with chunks of at most about ``chunk``
            records (at least the number of flows: one event may change every rate), in time
            order; the records of one time are never split between two calls. The arrays are
            views of a buffer reused after the call returns.
        chunk
            Records buffered before they are handed over.
        max_events
            Stop with :class:`~coflowlab.simulator.SimulationError` after this many events.
        progress
            Called as ``progress(events, time)`` after each chunk, and at least every
            ``PROGRESS_EVENTS`` events.

        Returns
        -------
        ClassRun

        Raises
        ------
        SimulationError
            After ``max_events`` events, with the wording of :func:`coflowlab.simulate`.
        """
        from ._event_loop_jit import drive

        inst = self.instance
        nf, n = inst.num_flows, inst.num_coflows
        # the policy's own state (the Grouping's arrays), set up as the per-flow path sets it
        policy = HUG(cooperative=self.cooperative)
        policy.reset(instance_view(inst, clairvoyant=True))
        grouping = policy.grouping
        assert grouping is not None  # fast=True
        cap = np.concatenate([policy.cap_in, policy.cap_out]).astype(float)  # active_coflows
        fill_tol = EPS * max(float(cap.max(initial=0.0)), 1.0)  # as HUG.decide
        decide_args = (
            grouping.size, grouping.coflow, grouping.src, grouping.dst, grouping.m,
            grouping.pos, grouping.load_rows, grouping.count_rows, grouping.counts, cap,
            not self.cooperative, fill_tol, grouping.pair,
        )  # fmt: skip
        fl = FlowState(inst, self.tol)  # the simulator's bookkeeping: rows, tree, active set
        flow_done = np.full(nf, np.nan)
        coflow_done = np.full(n, np.nan)
        coflow_left = np.ascontiguousarray(inst.width, dtype=np.int64).copy()
        coflow_sent_done = np.zeros(n)
        arrived = np.empty(nf, dtype=np.int64)
        completed = np.empty(nf, dtype=np.int64)
        act = np.empty(nf, dtype=np.int64)  # the active flows, increasing
        state_f = np.array([self._rel_time[0] if nf else np.inf])
        state_i = np.zeros(5, dtype=np.int64)
        # an event may change every active flow's rate, and complete every flow: the buffer
        # holds two records per flow
        buf = RecordBuffer(max(int(chunk), 2 * nf), 2 * nf)
        limit = -1 if max_events is None else int(max_events)
        kernel = _kernels()["run"]

        def step(pause: int) -> tuple[int, int]:
            # of the errors only MAX_EVENTS can come: positive capacities always serve (no
            # STALL), and BAD_RATES or OVERFLOW would be a kernel bug
            return kernel(
                self._rel_flow, self._rel_time, self.tol, limit, pause, fl.rows, fl.alive,
                fl.tree, fl.off, fl.flow_coflow, coflow_left, coflow_sent_done, flow_done,
                coflow_done, arrived, completed, act, state_f, state_i, buf.t, buf.c, buf.r,
                buf.pos, *decide_args,
            )  # fmt: skip

        return drive(
            step, buf, sink, state_f, state_i, flow_done, coflow_done, name=self.name,
            max_events=max_events, progress=progress, pause_every=PROGRESS_EVENTS,
        )  # fmt: skip
