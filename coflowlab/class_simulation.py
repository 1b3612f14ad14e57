"""Simulation on rate classes: a policy's compiled engine writes one record per class.

Under some policies whole sets of flows always share one rate: under per-flow fair sharing,
every flow of one (ingress, egress) port pair. A *rate class* is such a fixed set, and a
*class record* ``(t, c, speed)`` sets the rate of every active flow of class ``c`` at once
(each flow sends at ``speed * flow_weight[f]``); a flow joins its class at its release and
leaves it when its bytes reach its size, without a record of its own. The semantics, and why
they are checked as strictly as per-flow records, are in ``docs/rate-classes.md``.

A policy offers this path by a method ``class_engine(instance, tol)`` returning an object that
follows :class:`ClassEngine` (or ``None`` when it cannot serve that instance). The engine runs
the whole replay in compiled code and streams its class records to the independent
:class:`~coflowlab.class_verifier.ClassVerifier`, whose completion times are the ones reported,
as for per-flow records. :func:`coflowlab.simulate` takes this path by default when the policy
offers it and nothing needs per-flow records (``engine="auto"``); ``engine="flows"`` keeps the
per-flow event loop, which stays the reference.
"""

from __future__ import annotations

import time as _time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import numpy as np
import numpy.typing as npt

from .instance import Instance

if TYPE_CHECKING:
    from .flow_state import FlowState

__all__ = [
    "ClassEngine",
    "ClassRun",
    "FlowRunState",
    "RecordBuffer",
    "RunState",
    "SingletonClassEngine",
    "class_engine_of",
    "dependencies_unsupported",
    "release_order",
]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
Sink = Callable[[FloatArray, IntArray, FloatArray], None]
Progress = Callable[[int, float], None]

ENGINES = ("auto", "flows", "classes")
"""``simulate(..., engine=)``: the class path when available (``auto``), always per flow
(``flows``, the reference), or the class path or an error (``classes``)."""


@dataclass(frozen=True)
class ClassRun:
    """What a class engine reports about its own run (its claims, checked by the verifier).

    Attributes
    ----------
    flow_completion, coflow_completion
        The engine's completion times, ``(F,)`` and ``(n,)``.
    num_events
        Events, counted as the per-flow simulator counts them.
    num_records
        Class records written.
    """

    flow_completion: FloatArray
    coflow_completion: FloatArray
    num_events: int
    num_records: int


class ClassEngine(Protocol):
    """A compiled replay of one policy on rate classes.

    ``per_flow_records``: the engine writes one class per flow and every rate change of the
    per-flow simulator, including the rate-0 record of each completion, so that its records
    are per-flow records; they are then checked by the per-flow
    :class:`~coflowlab.verifier.FluidVerifier` (a flow sends at its last rate until its next
    record), which is cheaper per record than the class verifier. An engine that claimed it
    and left out a completion record would be caught there (bytes beyond a flow's size).
    """

    name: str
    num_classes: int
    flow_class: IntArray
    flow_weight: FloatArray | None
    per_flow_records: bool

    def run(
        self,
        sink: Sink,
        *,
        chunk: int = ...,
        max_events: int | None = ...,
        progress: Progress | None = ...,
    ) -> ClassRun:
        """Replays the instance, handing the class records to ``sink``.

        The engines' own ``run`` refer here and add only what is theirs: the least ``chunk``
        (one event's worth of records), how often ``progress`` is called, other errors.

        Parameters
        ----------
        sink
            Called as ``sink(time, cls, speed)`` with chunks of at most about ``chunk``
            records (at least one event's worth), in time order; the records of one time are
            never split between two calls. The arrays are views of a buffer reused after the
            call returns.
        chunk
            Records buffered before they are handed over.
        max_events
            Stop with :class:`~coflowlab.simulator.SimulationError` after this many events.
        progress
            Called as ``progress(events, time)`` after each chunk.

        Returns
        -------
        ClassRun

        Raises
        ------
        SimulationError
            After ``max_events`` events, with the wording of :func:`coflowlab.simulate`.
        """
        ...


class RecordBuffer:
    """The class records a compiled loop writes, handed to a sink in whole time groups.

    A class engine's kernel writes records into ``t``, ``c``, ``r`` from ``pos`` on and
    returns when fewer than ``room`` places are left (the most one event writes) or when it
    pauses; :meth:`hand_over` then passes the finished time groups on, keeps the last one if
    the next event may add to it (the verifiers refuse a time group split across chunks),
    and makes room again.
    """

    def __init__(self, size: int, room: int) -> None:
        n = max(int(size), int(room), 1)
        self.room = int(room)
        self.t: FloatArray = np.empty(n)
        self.c: IntArray = np.empty(n, dtype=np.int64)
        self.r: FloatArray = np.empty(n)
        self.pos = 0

    def hand_over(self, sink: Sink, now: float) -> None:
        """Passes every time group before ``now`` (and the one at ``now`` if it is over) to
        ``sink``, moves the rest to the front and grows the arrays if ``room`` more records
        would not fit."""
        t, c, r, pos = self.t, self.c, self.r, self.pos
        cut = pos
        if pos and now <= t[pos - 1]:
            cut = int(np.searchsorted(t[:pos], t[pos - 1], side="left"))
        if cut:
            sink(t[:cut], c[:cut], r[:cut])
            rest = pos - cut
            t[:rest] = t[cut:pos]
            c[:rest] = c[cut:pos]
            r[:rest] = r[cut:pos]
            self.pos = rest
        if self.pos + self.room > len(t):  # one time group fills the buffer: grow it
            grow = len(t)
            self.t = np.concatenate((t, np.empty(grow)))
            self.c = np.concatenate((c, np.empty(grow, dtype=np.int64)))
            self.r = np.concatenate((r, np.empty(grow)))

    def finish(self, sink: Sink) -> None:
        """Passes what is left (the run is over)."""
        if self.pos:
            sink(self.t[: self.pos], self.c[: self.pos], self.r[: self.pos])
            self.pos = 0


class RunState:
    """What one run of a compiled class loop writes, set up alike by every engine: the
    completion times (``nan`` until set), each coflow's flows not yet complete, the
    :class:`RecordBuffer` (``chunk`` records, ``room`` for one event's) and ``max_events``
    as the kernels take it (``limit``, -1 for none). A fresh one per run, so that an engine
    can run twice."""

    def __init__(
        self, instance: Instance, *, chunk: int, room: int, max_events: int | None
    ) -> None:
        self.flow_done: FloatArray = np.full(instance.num_flows, np.nan)
        self.coflow_done: FloatArray = np.full(instance.num_coflows, np.nan)
        self.coflow_left: IntArray = np.ascontiguousarray(instance.width, dtype=np.int64).copy()
        self.buf = RecordBuffer(chunk, room)
        self.limit = -1 if max_events is None else int(max_events)


class FlowRunState(RunState):
    """A :class:`RunState` with the per-flow simulator's own bookkeeping, for the loops that
    replay a per-flow policy on one class per flow (``pfp``, ``hug``, ``sincronia-online``;
    their steps in :mod:`coflowlab.heuristics._event_loop_jit`): the
    :class:`~coflowlab.flow_state.FlowState` (``flows``), the bytes of completed flows per
    coflow, and room for the flows each event releases and completes."""

    def __init__(
        self,
        instance: Instance,
        tol: float,
        *,
        chunk: int,
        room: int,
        max_events: int | None,
    ) -> None:
        from .flow_state import FlowState

        super().__init__(instance, chunk=chunk, room=room, max_events=max_events)
        nf = instance.num_flows
        self.flows: FlowState = FlowState(instance, tol)  # rows, tree, active set
        self.coflow_sent_done: FloatArray = np.zeros(instance.num_coflows)
        self.arrived: IntArray = np.empty(nf, dtype=np.int64)
        self.completed: IntArray = np.empty(nf, dtype=np.int64)


def release_order(instance: Instance) -> tuple[IntArray, FloatArray]:
    """The flows in the per-flow simulator's release order (``coflowlab.simulator._Arrivals``:
    by release time, not before 0, then coflow, then flow index) and their release times in
    that order, as the engines with one class per flow replay them.

    Examples
    --------
    >>> inst = Instance(2, [0, 1, 1], [0, 1, 0], [0, 1, 1], [1.0, 1.0, 2.0], [2.0, 1.0, 1.0])
    >>> order, times = release_order(inst)
    >>> order.tolist(), times.tolist()
    ([1, 2, 0], [1.0, 1.0, 2.0])
    """
    nf = instance.num_flows
    release = np.maximum(np.asarray(instance.flow_release, dtype=np.float64), 0.0)
    order = np.lexsort((np.arange(nf), instance.flow_coflow, release))
    return np.ascontiguousarray(order, dtype=np.int64), np.ascontiguousarray(release[order])


class SingletonClassEngine:
    """What the engines with one class per flow share (``pfp``, ``hug``,
    ``sincronia-online``): the :class:`ClassEngine` attributes of that layout (class ``f`` is
    flow ``f``, weight 1) and the flows in the simulator's release order (:func:`release_order`),
    which their loops release from. A subclass checks what it supports, calls this
    ``__init__`` and adds the policy's parameters; one whose records are the per-flow path's,
    completions included, sets ``per_flow_records``.

    Attributes
    ----------
    num_classes
        The number of flows: every flow is its own class.
    flow_class
        ``arange(F)``.
    flow_weight
        ``None``: a flow sends at its class's speed.
    per_flow_records
        ``False`` unless a subclass says otherwise (:class:`ClassEngine`).
    """

    per_flow_records: bool = False

    def __init__(self, instance: Instance, tol: float) -> None:
        self.instance = instance
        self.tol = float(tol)
        nf = instance.num_flows
        self.num_classes: int = nf
        self.flow_class: IntArray = np.arange(nf, dtype=np.int64)
        self.flow_weight: None = None
        self._rel_flow, self._rel_time = release_order(instance)


def dependencies_unsupported(instance: Instance) -> str | None:
    """Why no class engine replays ``instance``: its coflow dependencies (a coflow that starts
    after others complete), which class records, a rate per class from each flow's release
    on, cannot express (``docs/rate-classes.md``); ``None`` without. Every engine refuses
    with this text after its name (``"FairClassEngine: ..."``).

    Examples
    --------
    >>> from coflowlab.instances import uniform
    >>> inst = uniform(3, 4, density=0.5, seed=1)
    >>> dependencies_unsupported(inst) is None
    True
    >>> dependencies_unsupported(inst.replace(dependencies=[(0, 1)]))
    'coflow dependencies (starts-after) are not supported by class records; the instance has 1'
    """
    if len(instance.dependencies):
        return (
            "coflow dependencies (starts-after) are not supported by class records; the "
            f"instance has {len(instance.dependencies)}"
        )
    return None


def class_engine_of(
    policy: object, instance: Instance, tol: float, *, reason: list[str]
) -> ClassEngine | None:
    """The policy's class engine for ``instance``, or ``None`` (why, appended to ``reason``)."""
    make = getattr(policy, "class_engine", None)
    if make is None:
        reason.append(f"policy {getattr(policy, 'name', '?')!r} has no class engine")
        return None
    if dependencies_unsupported(instance) is not None:
        reason.append("class records do not support coflow dependencies")
        return None
    engine: ClassEngine | None = make(instance, tol)
    if engine is None:
        reason.append(f"policy {getattr(policy, 'name', '?')!r} has no class engine here")
    return engine


def run_classes(
    instance: Instance,
    engine: ClassEngine,
    *,
    verify_schedule: bool,
    tol: float,
    max_events: int | None,
    progress: Progress | None,
) -> tuple[ClassRun, object, float]:
    """Runs ``engine``, streaming its records to a :class:`ClassVerifier` (when verifying;
    a :class:`FluidVerifier` for an engine with ``per_flow_records``); returns the engine's
    run, the verification report (or ``None``) and the wall time."""
    from .class_verifier import ClassVerifier
    from .verifier import FluidVerifier

    started = _time.perf_counter()
    checker: ClassVerifier | FluidVerifier | None = None
    if verify_schedule and engine.per_flow_records:
        checker = FluidVerifier(instance, tol=tol, horizon=None)
    elif verify_schedule:
        checker = ClassVerifier(
            instance,
            engine.flow_class,
            engine.num_classes,
            flow_weight=engine.flow_weight,
            tol=tol,
            horizon=None,
        )

    def sink(t: FloatArray, c: IntArray, r: FloatArray) -> None:
        if checker is not None:
            checker.feed(t, c, r)

    run = engine.run(sink, max_events=max_events, progress=progress)
    wall = _time.perf_counter() - started
    report = checker.finish(run.coflow_completion) if checker is not None else None
    return run, report, wall
