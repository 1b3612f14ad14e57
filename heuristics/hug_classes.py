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

from functools import cache
from typing import Any

import numpy as np

from coflowlab.class_simulation import (
    ClassRun,
    FlowRunState,
    Progress,
    SingletonClassEngine,
    Sink,
    dependencies_unsupported,
)
from coflowlab.constants import TOL
from coflowlab.exceptions import InvalidScheduleError
from coflowlab.instance import Instance
from coflowlab.simulator import instance_view

from .correlation import EPS
from .hug import HUG, HUGCooperative

__all__ = ["HUGClassEngine"]

PROGRESS_EVENTS = 1 << 17
"""With a ``progress`` callback, the compiled loop returns to report it at least this often
(in events); it also reports after each chunk of records."""


@cache
def _kernels() -> dict[str, Any]:
    from . import _hug_class_jit as k

    return {"run": k.run}


class HUGClassEngine(SingletonClassEngine):
    """HUG (capped or cooperative) in one compiled event loop, one class per flow.

    Gives the events of ``simulate(instance, policy)`` and its rates, writing each rate change
    as a class record ``(time, flow, rate)`` (class ``f`` is flow ``f``: the attributes of
    :class:`~coflowlab.class_simulation.SingletonClassEngine`); completion times agree within
    the tolerance (the verifier's are reported).

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

    per_flow_records = True  # the completions' rate-0 records too (the module says why)

    def __init__(self, policy: HUG, instance: Instance, *, tol: float = TOL) -> None:
        why = self.unsupported(policy, instance)
        if why is not None:
            raise InvalidScheduleError(f"HUGClassEngine: {why}")
        super().__init__(instance, tol)
        self.name: str = policy.name
        self.cooperative = bool(policy.cooperative)

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
        return dependencies_unsupported(instance)

    def run(
        self,
        sink: Sink,
        *,
        chunk: int = 1 << 20,
        max_events: int | None = None,
        progress: Progress | None = None,
    ) -> ClassRun:
        """Runs the policy to the end, handing the records to ``sink``, as
        :meth:`ClassEngine.run <coflowlab.class_simulation.ClassEngine.run>` says. One
        event's worth of records is two per flow (one event may change every rate and
        complete every flow); ``progress`` is also called at least every ``PROGRESS_EVENTS``
        events."""
        from ._event_loop_jit import drive

        inst = self.instance
        nf = inst.num_flows
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
        # an event may change every active flow's rate, and complete every flow: the buffer
        # holds two records per flow
        run = FlowRunState(inst, self.tol, chunk=chunk, room=2 * nf, max_events=max_events)
        fl, buf = run.flows, run.buf
        act = np.empty(nf, dtype=np.int64)  # the active flows, increasing
        state_f = np.array([self._rel_time[0] if nf else np.inf])
        state_i = np.zeros(5, dtype=np.int64)
        kernel = _kernels()["run"]

        def step(pause: int) -> tuple[int, int]:
            # of the errors only MAX_EVENTS can come: positive capacities always serve (no
            # STALL), and BAD_RATES or OVERFLOW would be a kernel bug
            return kernel(
                self._rel_flow, self._rel_time, self.tol, run.limit, pause, fl.rows, fl.alive,
                fl.tree, fl.off, fl.flow_coflow, run.coflow_left, run.coflow_sent_done,
                run.flow_done, run.coflow_done, run.arrived, run.completed, act, state_f,
                state_i, buf.t, buf.c, buf.r, buf.pos, *decide_args,
            )  # fmt: skip

        return drive(
            step, run, sink, state_f, state_i, name=self.name, max_events=max_events,
            progress=progress, pause_every=PROGRESS_EVENTS,
        )  # fmt: skip
