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
from typing import Protocol

import numpy as np
import numpy.typing as npt

from .instance import Instance

__all__ = ["ClassEngine", "ClassRun", "RecordBuffer", "class_engine_of"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
Sink = Callable[[FloatArray, IntArray, FloatArray], None]

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
        progress: Callable[[int, float], None] | None = ...,
    ) -> ClassRun:
        """Replays the instance, calling ``sink(time, cls, speed)`` with chunks of whole time
        groups in time order."""
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


def class_engine_of(
    policy: object, instance: Instance, tol: float, *, reason: list[str]
) -> ClassEngine | None:
    """The policy's class engine for ``instance``, or ``None`` (why, appended to ``reason``)."""
    make = getattr(policy, "class_engine", None)
    if make is None:
        reason.append(f"policy {getattr(policy, 'name', '?')!r} has no class engine")
        return None
    if len(instance.dependencies):
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
    progress: Callable[[int, float], None] | None,
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
