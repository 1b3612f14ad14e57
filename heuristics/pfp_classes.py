"""Per-flow prioritisation (``pfp``) replayed in one compiled event loop, on singleton classes.

``simulate(inst, PerFlowPriority())`` spends about half its time outside the policy's
compiled decision (:func:`coflowlab.heuristics._pfp_jit.match_step`): in the Python event loop
of :func:`coflowlab.simulate`, once per event (1.47 million on the Facebook trace then;
250,660 since the policy stopped waking up at overtakings that change no rate).
:class:`PFPClassEngine` runs that loop itself, in one compiled function
(:mod:`coflowlab.heuristics._pfp_class_jit`) that calls the same decision kernel and the
simulator's own flow bookkeeping (:mod:`coflowlab._flow_state_jit`: bytes sent as of the last
rate change, projected completions in a min tree, the completion rule
:func:`coflowlab.flow_state.completion_threshold`) in the simulator's order, so the events,
rates and completion times are the same floating-point numbers. What remains of the time is
the decision kernel's own.

The records go out as class records (:mod:`coflowlab.class_simulation`,
``docs/rate-classes.md``) with one class per flow (``flow_class = arange(F)``): a record
``(t, f, r)`` is the per-flow record the simulator writes when flow ``f``'s rate changes. The
per-flow path also writes a rate-0 record when a flow completes; under class semantics a flow
leaves its class when its bytes reach its size, so that record is not needed (nor written).

The policy (Chowdhury, *Coflow: A Networking Abstraction for Distributed Data-Parallel
Applications*, PhD thesis, UC Berkeley, 2015, §3.2.2 and §5.3: smallest remaining flow first
with strict priority, as in pFabric, Alizadeh et al., SIGCOMM 2013, and PDQ, Hong et al.,
SIGCOMM 2012) is :class:`coflowlab.heuristics.baselines.PerFlowPriority`; the engine covers the
case its matching kernel covers, every port capacity equal, with any tie-break and either
``exact`` setting. Other instances (unequal capacities, coflow dependencies) are not
supported: :meth:`PFPClassEngine.unsupported` says why, and the policy then offers no engine,
so :func:`coflowlab.simulate` runs them per flow.
"""

from __future__ import annotations

from functools import cache
from typing import Any, ClassVar

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

from .baselines import PerFlowPriority, TieBreak

__all__ = ["PFPClassEngine"]

PROGRESS_EVENTS = 1 << 17
"""With a ``progress`` callback, the compiled loop returns to report it at least this often
(in events): a rate change or two per event would otherwise fill a chunk only every million
events."""


@cache
def _kernels() -> dict[str, Any]:
    from . import _pfp_class_jit as k

    return {"run": k.run}


class PFPClassEngine(SingletonClassEngine):
    """Per-flow prioritisation (``pfp``) in one compiled event loop, one class per flow.

    Gives the events of ``simulate(instance, PerFlowPriority(tie_break=..., exact=...))`` and
    its rates, writing each rate change as a class record ``(time, flow, rate)`` (class ``f`` is
    flow ``f``: the attributes of :class:`~coflowlab.class_simulation.SingletonClassEngine`);
    completion times agree within the tolerance (the verifier's are reported).

    Parameters
    ----------
    instance
        The instance: every ingress and egress capacity equal, no coflow dependencies.
    tol
        Relative tolerance (:mod:`coflowlab.constants`), as in :func:`coflowlab.simulate`.
    tie_break, exact
        As for :class:`~coflowlab.heuristics.baselines.PerFlowPriority` (with equal
        capacities ``exact`` changes nothing: the schedule needs no wake-up).

    Raises
    ------
    InvalidScheduleError
        If the instance is not supported (:meth:`unsupported` gives the reason).
    ValueError
        If ``tie_break`` is not one of the policy's.

    Examples
    --------
    Thesis Fig. 3.2: two matchings of unit flows, then s3's flows one after the other.

    >>> from coflowlab.instances.examples import fig_3_2
    >>> engine = PFPClassEngine(fig_3_2())
    >>> records = []
    >>> run = engine.run(lambda t, c, r: records.extend(zip(t.tolist(), c.tolist(), r.tolist())))
    >>> run.coflow_completion.tolist(), sorted(run.flow_completion.tolist()), run.num_events
    ([6.0], [1.0, 1.0, 2.0, 2.0, 4.0, 6.0], 4)
    """

    name: ClassVar[str] = "pfp"

    def __init__(
        self,
        instance: Instance,
        *,
        tol: float = TOL,
        tie_break: TieBreak = "fifo",
        exact: bool = True,
    ) -> None:
        why = self.unsupported(instance)
        if why is not None:
            raise InvalidScheduleError(f"PFPClassEngine: {why}")
        PerFlowPriority(tie_break=tie_break, exact=exact)  # validates the arguments
        super().__init__(instance, tol)
        self.tie_break: TieBreak = tie_break
        self.exact = bool(exact)

    @staticmethod
    def unsupported(instance: Instance) -> str | None:
        """Why the engine cannot replay ``instance``, or ``None`` if it can."""
        why = dependencies_unsupported(instance)
        if why is not None:
            return why
        fab = instance.fabric
        m = instance.num_ports
        cap_in = np.broadcast_to(fab.ingress_capacity, (m,))
        caps = np.concatenate((cap_in, np.broadcast_to(fab.egress_capacity, (m,)))).astype(float)
        if not (np.isfinite(caps[0]) and caps[0] > 0 and (caps == caps[0]).all()):
            return "port capacities must all be equal, positive and finite (the matching kernel)"
        return None

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
        event's worth of records is twice the number of ports; ``progress`` is also called at
        least every ``PROGRESS_EVENTS`` events."""
        from ._event_loop_jit import drive

        inst = self.instance
        nf = inst.num_flows
        # the policy's own state, set up exactly as the per-flow path sets it up
        policy = PerFlowPriority(tie_break=self.tie_break, exact=self.exact)
        policy.reset(instance_view(inst, clairvoyant=True))
        if not policy._matching:  # pragma: no cover - unsupported() rules it out
            raise InvalidScheduleError("PFPClassEngine: the policy does not use its matching")
        match_args = policy._match_args
        # an event changes the rates of at most the flows holding a port before or after it
        room = 2 * inst.num_ports
        run = FlowRunState(inst, self.tol, chunk=chunk, room=room, max_events=max_events)
        fl, buf = run.flows, run.buf
        flow_release = np.ascontiguousarray(inst.flow_release, dtype=np.float64)
        tb2_sign = -1.0 if self.tie_break == "lifo" else 1.0
        state_f = np.array([self._rel_time[0] if nf else np.inf])
        state_i = np.zeros(5, dtype=np.int64)
        kernel = _kernels()["run"]

        def step(pause: int) -> tuple[int, int]:
            # of the errors only MAX_EVENTS can come: positive capacities always serve (no
            # STALL), and BAD_RATES or OVERFLOW would be a kernel bug
            return kernel(
                self._rel_flow, self._rel_time, flow_release, tb2_sign, self.tol,
                run.limit, pause, room, fl.rows, fl.alive, fl.tree, fl.off, fl.flow_coflow,
                run.coflow_left, run.coflow_sent_done, run.flow_done, run.coflow_done,
                run.arrived, run.completed, state_f, state_i, buf.t, buf.c, buf.r, buf.pos,
                *match_args,
            )  # fmt: skip

        return drive(
            step, run, sink, state_f, state_i, name=self.name, max_events=max_events,
            progress=progress, pause_every=PROGRESS_EVENTS,
        )  # fmt: skip
