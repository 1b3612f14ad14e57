"""Sincronia online (``sincronia-online``, greedy allocation) replayed in one compiled event
loop, on singleton classes.

``simulate(inst, SincroniaOnline())`` runs a Python loop that calls
:meth:`SincroniaOnline.decide` at every event (358,313 on the Facebook trace), although at
almost every one the decision is two compiled calls (:func:`update_flows` and
:func:`greedy_fill` of :mod:`coflowlab.heuristics._sincronia_online_jit`): the order of the
coflows stands between epoch starts and arrivals. :class:`SincroniaOnlineClassEngine` runs
the simulator's loop in compiled code (:mod:`coflowlab.heuristics._sincronia_online_class_jit`)
with the simulator's own flow bookkeeping (:mod:`coflowlab._flow_state_jit`) and those
kernels on the policy's own state arrays, and returns to Python only for the events where
``decide`` does more: an epoch start (the admission LP, :mod:`coflowlab.formulations.
sincronia_admission`, the BSSI order of the admitted coflows and the slowdown-ordered tail;
Agarwal et al., *Sincronia: Near-Optimal Network Design for Coflows*, SIGCOMM 2018, with the
doubling epochs of Hall, Schulz, Shmoys and Wein, Math. Oper. Res. 22(3), 1997), an event
near the cached epoch's end, and an arrival (the tail may be re-sorted). There it calls the
policy's ``decide`` itself, on a :class:`~coflowlab.policy.ClairvoyantState` built as the
simulator builds it, so the epoch logic, the orders and :attr:`SincroniaOnline.log` are the
policy's own; the decision's rate changes go back to the loop, which resumes. The state
also sums the candidates' remaining bytes per port itself (:meth:`_LoopState.port_loads`,
read by :meth:`SincroniaOnline._remaining_time`), over the candidates' flows only, where the
per-flow path gathers every active flow's columns; the sums are the same floats.

On the Facebook trace about 16,000 of the 358,313 events go to Python (15,787 epoch starts,
15,728 with an admission LP, 50 of which still go to HiGHS; docs/sincronia-online.md#epoch-starts
and #fill-and-lp); the compiled loop (the greedy fill, the simulator's bookkeeping) and the
Python side of the epoch starts are most of what remains of the time.

The records go out as class records (:mod:`coflowlab.class_simulation`,
``docs/rate-classes.md``) with one class per flow (``flow_class = arange(F)``): a record
``(t, f, r)`` is the per-flow record the simulator writes when flow ``f``'s rate changes. The
per-flow path also writes a rate-0 record when a flow completes; under class semantics a flow
leaves its class when its bytes reach its size, so that record is not needed (nor written).

Only the default allocation (``"greedy"``) of an unsubclassed :class:`SincroniaOnline` on an
instance without coflow dependencies is covered; :meth:`SincroniaOnline.class_engine` returns
``None`` otherwise, so :func:`coflowlab.simulate` runs the per-flow loop.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import cache
from typing import Any, ClassVar

import numpy as np

from coflowlab.class_simulation import (
    ClassRun,
    FloatArray,
    FlowRunState,
    IntArray,
    Progress,
    SingletonClassEngine,
    Sink,
    dependencies_unsupported,
)
from coflowlab.constants import TOL
from coflowlab.exceptions import InvalidScheduleError
from coflowlab.flow_state import FlowState
from coflowlab.instance import Instance
from coflowlab.policy import ClairvoyantState, Decision, state_columns
from coflowlab.simulator import SimulationError, instance_view

from .sincronia_online import SincroniaOnline

__all__ = ["SincroniaOnlineClassEngine"]

PROGRESS_EVENTS = 1 << 17
"""With a ``progress`` callback, the compiled loop returns to report it at least this often
(in events)."""

_NO_TIMES = np.zeros(0)


@cache
def _kernels() -> dict[str, Any]:
    from . import _sincronia_online_class_jit as k

    return {"run": k.run, "loads": k.active_port_loads}


class _LoopState(ClairvoyantState):
    """The state the engine shows ``decide``: the simulator's, plus :meth:`port_loads`, which
    :meth:`SincroniaOnline._remaining_time` uses instead of gathering every active flow's
    columns (the same sums, in the same order)."""

    __slots__ = ("_loads",)
    _loads: Callable[[IntArray, int, int], FloatArray]

    def port_loads(self, row: IntArray, m: int, k: int) -> FloatArray:
        """``(k, 2m)`` remaining bytes per port of the coflows with ``row[c] >= 0``."""
        loads: FloatArray = self._loads(row, m, k)
        return loads


class _LoadCells:
    """The candidates' loads by cell, for :func:`~._sincronia_online_class_jit.active_port_loads`:
    cell ``c · 2m + l`` holds coflow ``c``'s flows through port ``l`` (ingress ports first),
    increasing; ``sums`` its last sum, ``stale`` whether it may have changed since."""

    def __init__(self, inst: Instance) -> None:
        n, width = inst.num_coflows, 2 * inst.num_ports
        coflow = np.asarray(inst.flow_coflow, dtype=np.int64)
        self.of_src = coflow * width + np.asarray(inst.flow_src, dtype=np.int64)
        self.of_dst = coflow * width + inst.num_ports + np.asarray(inst.flow_dst, dtype=np.int64)
        cell = np.concatenate([self.of_src, self.of_dst])
        flow = np.tile(np.arange(inst.num_flows, dtype=np.int64), 2)
        # by cell, then flow: each flow once per port it uses
        self.flows = np.ascontiguousarray(flow[np.lexsort((flow, cell))])
        self.ptr = np.zeros(n * width + 1, dtype=np.int64)
        np.cumsum(np.bincount(cell, minlength=n * width), out=self.ptr[1:])
        self.left = np.diff(self.ptr)  # the first left[cell] flows: those not completed
        self.sums = np.zeros((n, width))
        self.stale = np.ones(n * width, dtype=np.bool_)


class SincroniaOnlineClassEngine(SingletonClassEngine):
    """Sincronia online (greedy allocation) in one compiled event loop, one class per flow.

    Gives the events of ``simulate(instance, policy)`` and its rates, writing each rate change
    as a class record ``(time, flow, rate)`` (class ``f`` is flow ``f``: the attributes of
    :class:`~coflowlab.class_simulation.SingletonClassEngine`); completion times agree within
    the tolerance (the verifier's are reported). Each :meth:`run` resets ``policy`` and
    drives it: afterwards its :attr:`~SincroniaOnline.log` is the per-flow run's.

    Parameters
    ----------
    policy
        The policy (``allocation="greedy"``, not a subclass); its parameters are used as set.
    instance
        The instance, without coflow dependencies.
    tol
        Relative tolerance (:mod:`coflowlab.constants`), as in :func:`coflowlab.simulate`.

    Raises
    ------
    InvalidScheduleError
        If the policy or instance is not supported (:meth:`unsupported` gives the reason).

    Examples
    --------
    The policy's own example (docs/sincronia-online.md#example): coflow 0 fits the first
    epoch, coflow 2 is admitted at 3 and finishes at 10, coflow 1 at 30.

    >>> import coflowlab as cl
    >>> inst = cl.Instance.from_coflows(
    ...     [cl.Coflow([(0, 0, 1.0)]), cl.Coflow([(1, 1, 20.0)]), cl.Coflow([(1, 1, 10.0)])], 2
    ... )
    >>> policy = SincroniaOnline()
    >>> run = SincroniaOnlineClassEngine(policy, inst).run(lambda t, c, r: None)
    >>> run.coflow_completion.tolist(), run.num_events
    ([1.0, 30.0, 10.0], 6)
    >>> [(r.epoch.start, r.admitted, r.tail) for r in policy.log[:3]]
    [(0.0, (0,), (2, 1)), (1.0, (), (2, 1)), (3.0, (2,), (1,))]
    """

    name: ClassVar[str] = "sincronia-online"

    def __init__(self, policy: SincroniaOnline, instance: Instance, *, tol: float = TOL) -> None:
        why = self.unsupported(policy, instance)
        if why is not None:
            raise InvalidScheduleError(f"SincroniaOnlineClassEngine: {why}")
        super().__init__(instance, tol)
        self.policy = policy

    @staticmethod
    def unsupported(policy: object, instance: Instance) -> str | None:
        """Why the engine cannot replay ``policy`` on ``instance``, or ``None`` if it can."""
        if type(policy) is not SincroniaOnline:
            return (
                f"the policy must be a SincroniaOnline (not a subclass, whose decisions the "
                f"engine would not see), got {type(policy).__name__}"
            )
        if policy.allocation != "greedy":
            return f"only allocation='greedy' is compiled, got {policy.allocation!r}"
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
        event's worth of records is four times the number of ports; ``progress`` is also
        called at least every ``PROGRESS_EVENTS`` events. Also raises
        :class:`coflowlab.SolverError` if an admission LP fails (raised by the policy)."""
        from . import _sincronia_online_class_jit as j
        from ._event_loop_jit import drive

        inst = self.instance
        nf, n = inst.num_flows, inst.num_coflows
        policy = self.policy
        policy.reset(instance_view(inst, clairvoyant=True))  # as simulate() resets it
        greedy = policy._greedy
        if greedy is None:  # pragma: no cover - unsupported() rules it out
            raise InvalidScheduleError("SincroniaOnlineClassEngine: the policy is not greedy")
        # an event changes the rates of at most the flows holding a port before or after it
        room = 4 * inst.num_ports
        run = FlowRunState(inst, self.tol, chunk=chunk, room=room, max_events=max_events)
        fl, buf = run.flows, run.buf
        coflow_arrival = np.full(n, np.inf)
        seen_arrival = coflow_arrival.view()
        seen_arrival.flags.writeable = False  # what the state shows (the simulator's too)
        columns = state_columns(inst, True)
        done_coflows = np.empty(n, dtype=np.int64)
        state_f = np.array([self._rel_time[0] if nf else np.inf, np.inf, -np.inf, np.inf])
        state_i = np.zeros(11, dtype=np.int64)
        no_f, no_r = np.zeros(0, dtype=np.int64), np.zeros(0)
        cells = _LoadCells(inst)
        greedy_args = (
            policy._active_count, greedy.pair_of, greedy.ptr, greedy.count, greedy.slot,
            greedy.pos, greedy.rate, greedy.head, greedy.head_key, greedy.heads, greedy.keys,
            greedy.ports, greedy.pending, greedy.pair_ports, greedy.meta, policy._rank,
            greedy.flow_coflow, greedy.cap_in, greedy.cap_out, greedy.sending, greedy.sent_kp,
            greedy.stamp, cells.stale, cells.of_src, cells.of_dst,
        )  # fmt: skip
        kernel = _kernels()["run"]

        def active_flows() -> IntArray:
            # the active flows, increasing, from the window the loop keeps (as FlowState does)
            lo, hi = int(state_i[j.LO]), int(state_i[j.HI])
            flows = np.flatnonzero(fl.alive[lo:hi]) + lo
            if len(flows):
                state_i[j.LO] = flows[0]
            return flows

        loads_kernel = _kernels()["loads"]

        def loads(row: IntArray, m: int, k: int) -> FloatArray:
            # the active flows' remaining bytes per port, at the event the loop stopped at
            out_loads: FloatArray = loads_kernel(
                row, float(state_f[j.T_NOW]), fl.alive, fl.rows, run.flow_done, cells.flows,
                cells.ptr, cells.left, cells.sums, cells.stale, k,
            )  # fmt: skip
            return out_loads

        pending = (no_f, no_r)  # the rate changes of the last Python decision

        def step(pause: int) -> tuple[int, int]:
            nonlocal pending
            pend_f, pend_r = pending
            pending = (no_f, no_r)
            # of the errors only MAX_EVENTS can come: positive capacities always serve (no
            # STALL), and BAD_RATES or OVERFLOW would be a kernel bug
            return kernel(
                self._rel_flow, self._rel_time, self.tol, run.limit, pause, room,
                fl.rows, fl.alive, fl.tree, fl.off, fl.flow_coflow, run.coflow_left,
                run.coflow_sent_done, run.flow_done, run.coflow_done, coflow_arrival,
                run.arrived, run.completed, done_coflows, state_f, state_i, pend_f, pend_r,
                buf.t, buf.c, buf.r, buf.pos, *greedy_args,
            )  # fmt: skip

        def decide(status: int, t: float) -> bool:
            # an event that starts an epoch or brings an arrival: the policy's own decide
            nonlocal pending
            if status != j.DECIDE:
                return False
            pending = self._decide(
                t, state_f, state_i, run.arrived, run.completed, done_coflows,
                run.flow_done, fl, active_flows, loads, run.coflow_sent_done, seen_arrival,
                columns,
            )  # fmt: skip
            if len(pending[0]) > room:  # pragma: no cover - greedy changes at most 4m rates
                raise SimulationError(
                    f"policy {self.name!r} changed {len(pending[0])} rates at t={t!r}, more "
                    f"than the {room} an event can"
                )
            if buf.pos + room > len(buf.t):
                buf.hand_over(sink, t)
            return True

        return drive(
            step, run, sink, state_f, state_i, name=self.name, max_events=max_events,
            progress=progress, pause_every=PROGRESS_EVENTS, decide=decide,
        )  # fmt: skip

    def _decide(
        self,
        t: float,
        state_f: FloatArray,
        state_i: IntArray,
        arrived: IntArray,
        completed: IntArray,
        done_coflows: IntArray,
        flow_done: FloatArray,
        fl: FlowState,
        active_flows: Callable[[], IntArray],
        loads: Callable[[IntArray, int, int], FloatArray],
        coflow_sent_done: FloatArray,
        seen_arrival: FloatArray,
        columns: dict[str, Any],
    ) -> tuple[IntArray, FloatArray]:
        """The policy's own ``decide`` at the event the loop stopped at, on the state the
        simulator would show it; returns the rate changes (the loop's wake-up and cached
        epoch are updated in place)."""
        from . import _sincronia_online_class_jit as j

        policy = self.policy
        na, nc, nd = (int(state_i[k]) for k in (j.NUM_ARRIVED, j.NUM_COMPLETED, j.NUM_DONE))
        done = completed[:nc].copy()
        state = _LoopState(
            self.instance,
            True,
            time=t,
            flows=active_flows,
            rate=fl.rate,
            sent_of=fl.sent,
            coflow_sent_done=coflow_sent_done,
            coflow_arrival=seen_arrival,
            arrived=arrived[:na].copy(),
            completed=done,
            completed_at=flow_done[done] if nc else _NO_TIMES,
            completed_coflows=done_coflows[:nd].copy(),
            woken=bool(state_i[j.WOKEN]),
            columns=columns,
        )
        state._loads = loads
        decision = policy.decide(state)
        if not isinstance(decision, Decision) or decision.update is None:  # pragma: no cover
            raise SimulationError(
                f"policy {self.name!r} did not return a greedy update at t={t!r}"
            )
        assert policy._epoch is not None
        state_f[j.WAKEUP] = math.inf if decision.wakeup is None else float(decision.wakeup)
        state_f[j.EPOCH_UNTIL] = policy._epoch_until
        state_f[j.EPOCH_END] = policy._epoch.end
        flows = np.ascontiguousarray(decision.update[0], dtype=np.int64)
        rates = np.ascontiguousarray(decision.update[1], dtype=np.float64)
        return flows, rates
