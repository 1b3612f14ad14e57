"""The interface between the event-driven simulator and an online scheduling policy.

At every event the simulator hands the policy a *state* and the policy returns a
:class:`Decision`: new rates for the active flows (or ``None`` to keep the current ones) and,
optionally, the next time it wants to be woken up.

Two kinds of state enforce what a policy may know:

- :class:`ClairvoyantState` exposes flow sizes and remaining bytes (Varys, Sincronia, ...).
- :class:`ObservedState` exposes only what a non-clairvoyant scheduler can observe: bytes sent
  so far, ports, coflow membership and arrival times (Aalo, per-flow fairness, ...). It has no
  attribute that holds or derives a size, so a non-clairvoyant policy cannot read one by
  accident; the :class:`InstanceView` it gets at the start has no sizes either.

A policy declares which it is with the class attribute ``clairvoyant``.

**Hidden labels.** The simulator can also hide which coflow each flow belongs to
(``simulate(..., hide_labels=True)``, or a policy class with ``label_blind = True`` such as
CODA): the view and the states then describe every flow as a coflow of its own (flow ``i`` is
pseudo-coflow ``i``: ``flow_coflow`` is the identity, weights 1, no deadlines, labels and
dependencies withheld), so a policy sees only flows (ports, start times, bytes sent) and
whatever groups it identifies itself. The metrics still use the true coflows.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

__all__ = [
    "ClairvoyantState",
    "Decision",
    "InstanceView",
    "ObservedState",
    "Policy",
    "SimState",
]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True, eq=False)
class InstanceView:
    """What every policy may know about the instance before anything happens.

    Attributes
    ----------
    num_ports, num_coflows, num_flows
        Sizes of the instance.
    cap_in, cap_out
        Port capacities.
    flow_coflow, flow_src, flow_dst
        Per flow: coflow index, ingress port, egress port.
    coflow_weight, coflow_deadline, coflow_label
        Per coflow: weight, deadline (``inf`` for none; measured from the release) and label.
    dependencies
        ``(a, b)`` pairs: coflow ``b`` starts after coflow ``a`` completes.
    flow_size, coflow_size
        Sizes; ``None`` in a non-clairvoyant view.
    labels_hidden
        Whether coflow membership is hidden: then every flow is its own pseudo-coflow
        (``num_coflows == num_flows``, ``flow_coflow`` the identity; see the module notes).
    """

    num_ports: int
    num_coflows: int
    num_flows: int
    cap_in: FloatArray
    cap_out: FloatArray
    flow_coflow: IntArray
    flow_src: IntArray
    flow_dst: IntArray
    coflow_weight: FloatArray
    coflow_deadline: FloatArray
    coflow_label: tuple[str, ...]
    dependencies: IntArray
    flow_size: FloatArray | None = None
    coflow_size: FloatArray | None = None
    labels_hidden: bool = False


def _readonly(a: np.ndarray) -> np.ndarray:
    v = a.view()
    v.flags.writeable = False
    return v


def state_columns(
    instance: Any, clairvoyant: bool, flow_group: IntArray | None = None
) -> dict[str, Any]:
    """The per-flow columns a state may gather for its active flows (see
    :class:`ObservedState`): sizes only when ``clairvoyant``; ``flow_group`` replaces the
    coflow column when labels are hidden."""
    columns = {
        "src": instance.flow_src,
        "dst": instance.flow_dst,
        "coflow": instance.flow_coflow if flow_group is None else flow_group,
        "arrival": instance.flow_release,
    }
    if clairvoyant:
        columns["size"] = instance.flow_size
    return columns


class ObservedState:
    """What a non-clairvoyant policy sees at an event.

    Per-flow arrays are aligned with ``flows``, the indices of the *active* flows (released
    and not complete), in no meaningful order (use ``arrival`` or ``coflow_arrival`` to order
    them). Arrays are read-only and computed on first access; a state is valid only during
    the ``decide`` call it is passed to.

    Attributes
    ----------
    time
        The current time.
    flows
        Indices of the active flows, in increasing order.
    src, dst, coflow
        Their ingress ports, egress ports and coflow indices.
    sent
        Bytes each active flow has sent so far.
    rate
        Each active flow's current rate (before this decision).
    arrival
        Each active flow's release time.
    coflow_sent
        ``(n,)`` bytes sent so far by each coflow, over all its flows (finished ones too).
    coflow_sent_done
        ``(n,)`` bytes sent by each coflow's completed flows (the part of ``coflow_sent``
        that no longer changes; cheaper to read at a few coflows than ``coflow_sent``).
    coflow_arrival
        ``(n,)`` arrival time of each coflow (``inf`` if it has not arrived).
    arrived, completed
        Flow indices that arrived / completed since the policy was last asked (at this event,
        unless the fabric went idle in between: the policy is not asked while nothing is
        active).
    completed_at
        When each flow of ``completed`` completed (an observed event, so non-clairvoyant
        policies may read it): a policy that integrates its own rates needs it to stop a flow
        that finished before an idle gap.
    completed_coflows
        Coflow indices that completed at this event.
    woken
        Whether this event is a wake-up the policy asked for.

    Notes
    -----
    With hidden labels (see the module notes) ``coflow`` is each flow's own index and the
    per-coflow arrays (``coflow_sent``, ``coflow_sent_done``, ``coflow_arrival``,
    ``completed_coflows``) are per flow.
    """

    __slots__ = (
        "_cache",
        "_coflow_sent_done",
        "_columns",
        "_flows",
        "_rate",
        "_sent_of",
        "arrived",
        "coflow_arrival",
        "completed",
        "completed_at",
        "completed_coflows",
        "time",
        "woken",
    )

    def __init__(
        self,
        instance: Any,
        clairvoyant: bool,
        *,
        time: float,
        flows: IntArray | Callable[[], IntArray],
        rate: FloatArray,
        sent_of: Callable[[IntArray, float], FloatArray],
        coflow_sent_done: FloatArray,
        coflow_arrival: FloatArray,
        arrived: IntArray,
        completed: IntArray,
        completed_coflows: IntArray,
        woken: bool,
        completed_at: FloatArray | None = None,
        flow_group: IntArray | None = None,
        columns: dict[str, Any] | None = None,
    ) -> None:
        # the per-flow columns this kind of state may read; sizes only when clairvoyant;
        # flow_group replaces the coflow column when labels are hidden (the identity). The
        # simulator builds them once per run (state_columns) rather than at every event.
        self._columns = (
            state_columns(instance, clairvoyant, flow_group) if columns is None else columns
        )
        self.time = time
        # listed on first use: a policy that never reads it never pays for it
        self._flows = flows if callable(flows) else _readonly(flows)
        # a view made read-only once (by the simulator) need not be wrapped again
        self.coflow_arrival = (
            _readonly(coflow_arrival) if coflow_arrival.flags.writeable else coflow_arrival
        )
        self.arrived = arrived
        self.completed = completed
        self.completed_coflows = completed_coflows
        self.completed_at = (
            np.full(len(completed), float(time)) if completed_at is None else completed_at
        )
        self.woken = woken
        self._rate = rate
        self._sent_of = sent_of  # (flows, time) -> bytes sent, computed by the simulator
        self._coflow_sent_done = coflow_sent_done
        self._cache: dict[str, Any] = {}

    @property
    def flows(self) -> IntArray:
        """Indices of the active flows, in increasing order."""
        value = self._flows
        if callable(value):
            value = self._flows = _readonly(value())
        return value

    def _lookup(self, name: str) -> Any:
        value = self._cache.get(name)
        if value is None:
            value = self._cache[name] = _readonly(self._columns[name][self.flows])
        return value

    @property
    def src(self) -> IntArray:
        """Ingress port of each active flow."""
        return self._lookup("src")

    @property
    def dst(self) -> IntArray:
        """Egress port of each active flow."""
        return self._lookup("dst")

    @property
    def coflow(self) -> IntArray:
        """Coflow index of each active flow."""
        return self._lookup("coflow")

    @property
    def arrival(self) -> FloatArray:
        """Release time of each active flow."""
        return self._lookup("arrival")

    @property
    def rate(self) -> FloatArray:
        """Each active flow's current rate (before this decision)."""
        value = self._cache.get("rate")
        if value is None:
            value = self._cache["rate"] = _readonly(self._rate[self.flows])
        return value

    @property
    def sent(self) -> FloatArray:
        """Bytes each active flow has sent so far."""
        value = self._cache.get("sent")
        if value is None:
            value = self._cache["sent"] = _readonly(self._sent_of(self.flows, self.time))
        return value

    @property
    def coflow_sent(self) -> FloatArray:
        """``(n,)`` bytes sent so far by each coflow, over all its flows."""
        value = self._cache.get("coflow_sent")
        if value is None:
            done = self._coflow_sent_done
            active = np.bincount(self.coflow, weights=self.sent, minlength=len(done))
            value = self._cache["coflow_sent"] = _readonly(done + active)
        return value

    @property
    def coflow_sent_done(self) -> FloatArray:
        """``(n,)`` bytes sent by each coflow's completed flows."""
        return _readonly(self._coflow_sent_done)

    @property
    def num_active(self) -> int:
        """Number of active flows."""
        return len(self.flows)

    @property
    def changed(self) -> bool:
        """Whether a flow arrived or completed at this event."""
        return bool(len(self.arrived) or len(self.completed))


class ClairvoyantState(ObservedState):
    """What a clairvoyant policy sees: the observed state plus sizes.

    Attributes
    ----------
    size
        Each active flow's size.
    remaining
        Each active flow's remaining bytes.
    """

    __slots__ = ()

    @property
    def size(self) -> FloatArray:
        """Each active flow's size."""
        return self._lookup("size")

    @property
    def remaining(self) -> FloatArray:
        """Each active flow's remaining bytes."""
        value = self._cache.get("remaining")
        if value is None:
            value = self._cache["remaining"] = _readonly(self.size - self.sent)
        return value


SimState = ObservedState | ClairvoyantState


@dataclass(frozen=True)
class Decision:
    """A policy's answer at an event.

    Attributes
    ----------
    rates
        New rates of the active flows, aligned with ``state.flows``; ``None`` keeps the
        current rates (completed flows stop on their own).
    wakeup
        The next time the policy wants an event even if nothing happens (``None``: none).
    reject
        Coflows to reject now (deadline admission control). They must not have been served;
        their flows leave the system and they are reported as rejected.
    update
        Instead of ``rates``: ``(flows, rates)``, new rates for some active flows (global flow
        indices); all others keep theirs. Lets a policy that knows what changed avoid
        touching every active flow.
    notify
        Which completions wake the policy until its next decision: ``"flow"`` (default), every
        flow completion; ``"coflow"``, only those that complete a coflow. Flows finishing in
        between simply stop (the others keep their rates), and the policy sees them in
        ``completed`` at its next decision. For policies that reallocate only at coflow events
        (Varys); the simulator then runs those completions in compiled code.
    """

    rates: FloatArray | None = None
    wakeup: float | None = None
    reject: IntArray | None = None
    update: tuple[IntArray, FloatArray] | None = None
    notify: Literal["flow", "coflow"] = "flow"

    def __post_init__(self) -> None:
        if self.notify not in ("flow", "coflow"):
            raise ValueError(f"Decision.notify must be 'flow' or 'coflow', not {self.notify!r}")


@runtime_checkable
class Policy(Protocol):
    """An online scheduling policy for :func:`coflowlab.simulate`.

    Attributes
    ----------
    name
        The policy's registry name.
    clairvoyant
        ``True`` if the policy needs sizes (it then receives :class:`ClairvoyantState`).

    Notes
    -----
    ``reset`` is called once before the simulation with the instance view; ``decide`` at every
    event. A policy may keep state between calls, so one object serves one simulation at a
    time.
    """

    name: ClassVar[str]
    clairvoyant: ClassVar[bool]

    def reset(self, view: InstanceView) -> None:
        """Prepares for a new simulation."""
        ...

    def decide(self, state: ObservedState) -> Decision:
        """Returns the rates from now until the next event."""
        ...
