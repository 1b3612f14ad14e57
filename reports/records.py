"""The data contract between the ``coflowlab compare`` runner and its reports.

The runner turns every (instance, algorithm) task into one :class:`TaskRecord`, including the
tasks that failed or timed out (they keep their status and message and are never dropped).
:func:`attach_reference` then measures every record against a reference value on its instance
and returns :class:`RatedRecord` objects, which the tables (:mod:`coflowlab.reports.tables`),
figures (:mod:`coflowlab.reports.plots`) and reports (:mod:`coflowlab.reports.render`) read.

Conventions
-----------
- An *instance* is identified by the pair ``(instance, seed)``: ``seed`` is the seed that
  generated it (``None`` for a file). An algorithm's own seed belongs in its full spelling
  (``"qsz-random:seed=3"``), so each (instance, seed, algorithm) occurs at most once.
- ``objective`` is ``Σ_j w_j C_j`` of the verified schedule; for a relaxation or a bound it is
  the lower bound's value (no schedule). ``bound`` is a proven lower bound on the optimum that
  the method reports besides (an exact solver's dual bound; ``None`` otherwise).
- Per-coflow arrays (``release``, ``completion``, ``weight``, ``bin``) are present only when the
  algorithm produced a schedule, in the instance's time unit ``time_unit``.
- ``proven_optimal`` and ``is_lower_bound`` are derived from ``family`` and ``status``, so they
  cannot contradict them.

Examples
--------
>>> from coflowlab.reports import TaskRecord, attach_reference
>>> recs = [
...     TaskRecord("a", None, "exact-fluid", "exact", "fluid", "optimal", 10.0, None, 0.5),
...     TaskRecord("a", None, "sincronia", "approximation", "fluid", "feasible", 12.0, None, 0.1),
... ]
>>> [(r.record.algorithm, r.ratio) for r in attach_reference(recs, "opt")]
[('exact-fluid', 1.0), ('sincronia', 1.2)]
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from coflowlab.constants import TOL

__all__ = [
    "BIN_NAMES",
    "FAMILIES",
    "LOWER_BOUND_FAMILIES",
    "REFERENCE_KINDS",
    "STATUSES",
    "RatedRecord",
    "TaskRecord",
    "attach_reference",
    "instance_key",
]

FAMILIES = ("exact", "relaxation", "bound", "approximation", "online")
"""The algorithm families: the registries' families, ``online`` for simulated heuristics."""

LOWER_BOUND_FAMILIES = ("relaxation", "bound")
"""Families whose ``objective`` is a lower bound on the optimum, not a schedule's cost."""

STATUSES = (
    "optimal",
    "time_limit",
    "time_limit_no_solution",
    "interrupted",
    "infeasible",
    "unbounded",
    "error",
    "feasible",
)
"""The values of :class:`coflowlab.solvers.SolveStatus` (``error`` also marks a task that
raised); listed here so that importing the reports does not import the solvers (a test keeps
the two in step)."""

BIN_NAMES = ("SN", "LN", "SW", "LW")
"""Varys' bins, short/long × narrow/wide (Chowdhury, Zhong & Stoica, "Efficient Coflow
Scheduling with Varys", SIGCOMM 2014, §7): short means a longest flow under 5 MB, narrow at
most 50 flows (:func:`coflowlab.metrics.varys_bins`)."""

REFERENCE_KINDS = ("opt", "bound (opt not proven)", "bound", "algorithm")
"""What a ratio's denominator is: a proven optimum; the best bound of an exact method that did
not prove optimality; the best relaxation or bound; a named algorithm's objective."""


def _check_number(value: object, name: str, where: str, *, optional: bool) -> float | None:
    """Returns ``value`` as a finite float (or ``None`` when allowed), else raises naming it."""
    if value is None:
        if optional:
            return None
        raise ValueError(f"{where}: {name} is required")
    if isinstance(value, bool) or not isinstance(value, int | float | np.number):
        raise TypeError(f"{where}: {name} must be a number, got {type(value).__name__}")
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"{where}: {name} must be finite, got {value!r} (use None for none)")
    return number


def _frozen_array(
    value: npt.ArrayLike | None, name: str, where: str
) -> npt.NDArray[np.float64] | None:
    """Copies a per-coflow array into a read-only 1-D float array, checking its values."""
    if value is None:
        return None
    arr = np.array(value, dtype=float)
    if arr.ndim != 1:
        raise ValueError(f"{where}: {name} must be one-dimensional, got shape {arr.shape}")
    bad = np.flatnonzero(~np.isfinite(arr))
    if bad.size:
        raise ValueError(f"{where}: {name}[{bad[0]}] is {arr[bad[0]]}, not a finite number")
    arr.setflags(write=False)
    return arr


@dataclass(frozen=True, eq=False)
class TaskRecord:
    """One algorithm run on one instance, as the ``compare`` runner reports it.

    Parameters
    ----------
    instance
        The instance's name (its file name, or the generator and its parameters).
    seed
        The seed that generated the instance; ``None`` for an instance read from a file.
    algorithm
        The algorithm's full spelling, parameters included, e.g. ``"varys:starvation=false"``.
    family
        One of :data:`FAMILIES`.
    time_model
        The time model the algorithm ran in, e.g. ``"fluid"``, ``"slotted"``, ``"exact"`` (the
        exact event-driven simulator) or ``"coflowsim"``.
    status
        One of :data:`STATUSES`.
    objective
        ``Σ_j w_j C_j`` of the verified schedule; a relaxation's or bound's value; ``None``
        when the task ended without one.
    avg_cct
        Average coflow completion time ``mean(C_j − r_j)``; ``None`` without a schedule.
    runtime
        Wall seconds of the task (also for a failed task: the time until it failed).
    verified
        ``True`` if the independent verifier accepted the schedule, ``False`` if it rejected
        it, ``None`` if nothing was checked (no schedule, or verification switched off).
    message
        Why a task failed or timed out (the exception or the solver's text); may be empty.
    num_coflows, num_flows
        The instance's size.
    time_unit
        The instance's time unit, e.g. ``"ms"``; ``"unit"`` when dimensionless.
    bound
        A proven lower bound on the optimum reported by the method besides its objective
        (an exact solver's best bound); ``None`` when there is none.
    release, completion, weight
        Per coflow, when the algorithm produced a schedule: release time, verified completion
        time (both in ``time_unit``) and weight.
    bin
        Per coflow, its Varys bin (one of :data:`BIN_NAMES`), when known.

    Raises
    ------
    ValueError
        An unknown family or status, a non-finite number, or per-coflow arrays of different
        lengths; the message names the record and the field.

    Examples
    --------
    >>> r = TaskRecord("u8.json", None, "exact-fluid", "exact", "fluid", "optimal", 479.0,
    ...                59.875, 2.5, verified=True)
    >>> r.proven_optimal, r.is_lower_bound, r.has_schedule
    (True, False, False)
    """

    instance: str
    seed: int | None
    algorithm: str
    family: str
    time_model: str
    status: str
    objective: float | None
    avg_cct: float | None
    runtime: float
    verified: bool | None = None
    message: str = ""
    num_coflows: int = 0
    num_flows: int = 0
    time_unit: str = "unit"
    bound: float | None = None
    release: npt.NDArray[np.float64] | None = field(default=None, repr=False)
    completion: npt.NDArray[np.float64] | None = field(default=None, repr=False)
    weight: npt.NDArray[np.float64] | None = field(default=None, repr=False)
    bin: tuple[str, ...] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        where = f"record {self.algorithm!r} on instance {self.instance!r}"
        for name in ("instance", "algorithm", "time_model", "time_unit"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value:
                raise ValueError(f"{where}: {name} must be a non-empty string, got {value!r}")
        if self.seed is not None and (
            isinstance(self.seed, bool) or not isinstance(self.seed, int)
        ):
            raise TypeError(f"{where}: seed must be an int or None, got {self.seed!r}")
        if self.family not in FAMILIES:
            raise ValueError(f"{where}: family {self.family!r} is not one of {FAMILIES}")
        if self.status not in STATUSES:
            raise ValueError(f"{where}: status {self.status!r} is not one of {STATUSES}")
        if self.verified not in (True, False, None):
            raise TypeError(f"{where}: verified must be True, False or None")
        for name in ("objective", "avg_cct", "bound"):
            value = _check_number(getattr(self, name), name, where, optional=True)
            object.__setattr__(self, name, value)
        runtime = _check_number(self.runtime, "runtime", where, optional=False)
        if runtime is not None and runtime < 0:
            raise ValueError(f"{where}: runtime must be >= 0, got {runtime}")
        object.__setattr__(self, "runtime", runtime)
        for name in ("num_coflows", "num_flows"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 0:
                raise ValueError(f"{where}: {name} must be a non-negative int, got {value!r}")
            object.__setattr__(self, name, int(value))
        lengths = {}
        for name in ("release", "completion", "weight"):
            arr = _frozen_array(getattr(self, name), name, where)
            object.__setattr__(self, name, arr)
            if arr is not None:
                lengths[name] = arr.size
        if self.bin is not None:
            bins = tuple(str(b) for b in self.bin)
            for j, b in enumerate(bins):
                if b not in BIN_NAMES:
                    raise ValueError(f"{where}: bin[{j}] is {b!r}, not one of {BIN_NAMES}")
            object.__setattr__(self, "bin", bins)
            lengths["bin"] = len(bins)
        if len(set(lengths.values())) > 1:
            raise ValueError(f"{where}: per-coflow fields have different lengths {lengths}")
        if (self.release is None) != (self.completion is None):
            raise ValueError(f"{where}: release and completion must be given together")
        if lengths and self.num_coflows and next(iter(lengths.values())) != self.num_coflows:
            raise ValueError(
                f"{where}: per-coflow fields have {next(iter(lengths.values()))} entries but "
                f"num_coflows is {self.num_coflows}"
            )

    @property
    def key(self) -> tuple[str, int | None]:
        """The instance this record ran on: ``(instance, seed)``."""
        return (self.instance, self.seed)

    @property
    def is_lower_bound(self) -> bool:
        """Whether ``objective`` is a lower bound (relaxations and bounds), not a cost."""
        return self.family in LOWER_BOUND_FAMILIES

    @property
    def proven_optimal(self) -> bool:
        """Whether an exact method proved ``objective`` optimal."""
        return self.family == "exact" and self.status == "optimal" and self.objective is not None

    @property
    def has_schedule(self) -> bool:
        """Whether per-coflow release and completion times are present."""
        return self.completion is not None

    @property
    def cct(self) -> npt.NDArray[np.float64] | None:
        """Per-coflow completion times measured from release, ``C_j − r_j``."""
        if self.completion is None or self.release is None:
            return None
        return self.completion - self.release

    @property
    def best_lower_bound(self) -> float | None:
        """The best lower bound on the optimum this record proves: the objective of a
        relaxation, bound or proven optimum, else ``bound``."""
        candidates = [self.bound]
        if self.is_lower_bound or self.proven_optimal:
            candidates.append(self.objective)
        values = [v for v in candidates if v is not None]
        return max(values) if values else None


def instance_key(record: TaskRecord) -> tuple[str, bool, int]:
    """A sort key for ``record.key`` that orders a file (seed ``None``) before its seeds."""
    return (record.instance, record.seed is not None, record.seed or 0)


@dataclass(frozen=True, eq=False)
class RatedRecord:
    """A :class:`TaskRecord` measured against a reference on its instance.

    Attributes
    ----------
    record
        The task.
    reference
        The reference that was asked for: ``"opt"``, ``"bound"`` or an algorithm's name.
    reference_value
        The denominator, or ``None`` when the reference is missing on this instance.
    reference_kind
        One of :data:`REFERENCE_KINDS`, or ``""`` when missing.
    reference_source
        The algorithm that supplied the reference value (``""`` when missing).
    ratio
        ``objective / reference_value``; ``None`` when either is missing (``note`` says why).
    note
        Why ``ratio`` is empty, or a warning about it; ``""`` otherwise.
    """

    record: TaskRecord
    reference: str
    reference_value: float | None
    reference_kind: str
    reference_source: str
    ratio: float | None
    note: str = ""


@dataclass(frozen=True)
class _Reference:
    value: float | None
    kind: str
    source: str
    reason: str  # why the reference is missing, when value is None


def _opt_reference(records: Sequence[TaskRecord]) -> _Reference:
    """The proven optimum of the instance's exact records, else their best proven bound."""
    exact = [r for r in records if r.family == "exact"]
    if not exact:
        return _Reference(None, "", "", "no exact method ran on this instance")
    proven = [r for r in exact if r.proven_optimal]
    if proven:
        # Several exact models (fluid, slotted) may prove optima; the smallest is a lower
        # bound on every schedule, since a slotted schedule is also a fluid one.
        best = min(proven, key=lambda r: (r.objective, r.algorithm))
        return _Reference(best.objective, "opt", best.algorithm, "")
    bounded = [r for r in exact if r.bound is not None]
    if bounded:
        best = max(bounded, key=lambda r: (r.bound, r.algorithm))
        return _Reference(best.bound, "bound (opt not proven)", best.algorithm, "")
    states = ", ".join(f"{r.algorithm}: {r.status}" for r in exact)
    return _Reference(None, "", "", f"no exact method proved a value or bound ({states})")


def _bound_reference(records: Sequence[TaskRecord]) -> _Reference:
    """The largest lower bound among the instance's relaxation and bound records."""
    lower = [r for r in records if r.is_lower_bound and r.objective is not None]
    if not lower:
        return _Reference(None, "", "", "no relaxation or bound has a value on this instance")
    best = max(lower, key=lambda r: (r.objective, r.algorithm))
    return _Reference(best.objective, "bound", best.algorithm, "")


def _named_reference(records: Sequence[TaskRecord], name: str) -> _Reference:
    """The named algorithm's objective on the instance."""
    for r in records:
        if r.algorithm == name:
            if r.objective is None:
                return _Reference(
                    None, "", "", f"reference {name!r} has no value here (status {r.status})"
                )
            return _Reference(r.objective, "algorithm", name, "")
    return _Reference(None, "", "", f"reference {name!r} did not run on this instance")


def attach_reference(records: Sequence[TaskRecord], reference: str) -> list[RatedRecord]:
    """Measures every record against a reference value on its own instance.

    Parameters
    ----------
    records
        The tasks, in any order; each (instance, seed, algorithm) at most once.
    reference
        ``"opt"``: the exact methods' proven optimum on the instance (the smallest, if several
        time models proved one); when none is proven, their best proven bound, labelled
        ``"bound (opt not proven)"``. ``"bound"``: the largest lower bound among the
        instance's relaxation and bound records. Any other string: that algorithm's
        objective on the instance (full spelling).

    Returns
    -------
    list[RatedRecord]
        One per record, sorted by instance then algorithm (so outputs do not depend on the
        order in which tasks finished). ``ratio = objective / reference_value``; a
        relaxation's ratio is at most 1 against a proven optimum. A reference missing on an
        instance, a task without an objective, or a schedule the verifier rejected leaves
        ``ratio`` empty with the reason in ``note``.

    Raises
    ------
    ValueError
        Two records for the same (instance, seed, algorithm), or a named reference that ran
        on no instance at all (most likely a misspelling; the message lists the names).

    Examples
    --------
    The exact method did not prove optimality, so its bound is the reference:

    >>> recs = [
    ...     TaskRecord("b", 1, "exact-slotted", "exact", "slotted", "time_limit", 30.0, None,
    ...                60.0, bound=24.0),
    ...     TaskRecord("b", 1, "lp-ov", "relaxation", "fluid", "optimal", 20.0, None, 0.2),
    ... ]
    >>> [(r.record.algorithm, r.reference_kind, r.ratio) for r in attach_reference(recs, "opt")]
    [('exact-slotted', 'bound (opt not proven)', 1.25), ('lp-ov', 'bound (opt not proven)',
    0.8333333333333334)]
    >>> attach_reference(recs, "sincronia")
    Traceback (most recent call last):
    ...
    ValueError: reference 'sincronia' is not 'opt', 'bound' or the name of an algorithm ...
    """
    if not isinstance(reference, str) or not reference:
        raise ValueError(
            f"reference must be 'opt', 'bound' or an algorithm name, got {reference!r}"
        )
    by_instance: dict[tuple[str, int | None], list[TaskRecord]] = {}
    seen: dict[tuple[str, int | None, str], int] = {}
    for i, r in enumerate(records):
        if not isinstance(r, TaskRecord):
            raise TypeError(f"records[{i}] is a {type(r).__name__}, not a TaskRecord")
        triple = (r.instance, r.seed, r.algorithm)
        if triple in seen:
            raise ValueError(
                f"records[{seen[triple]}] and records[{i}] are both {r.algorithm!r} on "
                f"instance {r.instance!r} (seed {r.seed}); put an algorithm's own seed in its "
                "name, e.g. 'qsz-random:seed=3'"
            )
        seen[triple] = i
        by_instance.setdefault(r.key, []).append(r)
    if reference not in ("opt", "bound"):
        names = sorted({r.algorithm for r in records})
        if reference not in names:
            raise ValueError(
                f"reference {reference!r} is not 'opt', 'bound' or the name of an algorithm "
                f"that ran; the algorithms are: {', '.join(names)}"
            )

    rated: list[RatedRecord] = []
    for key in sorted(by_instance, key=lambda k: (k[0], k[1] is not None, k[1] or 0)):
        group = by_instance[key]
        if reference == "opt":
            ref = _opt_reference(group)
        elif reference == "bound":
            ref = _bound_reference(group)
        else:
            ref = _named_reference(group, reference)
        for r in sorted(group, key=lambda r: r.algorithm):
            rated.append(_rate(r, reference, ref))
    return rated


def _rate(r: TaskRecord, reference: str, ref: _Reference) -> RatedRecord:
    """Divides one record's objective by the reference, or says why it cannot."""
    ratio: float | None = None
    note = ""
    if r.objective is None:
        note = f"no objective (status {r.status})"
    elif r.verified is False:
        note = "the verifier rejected the schedule"
    elif ref.value is None:
        note = ref.reason
    elif ref.value <= 0:
        note = f"reference value {ref.value} is not positive"
    else:
        ratio = r.objective / ref.value
        # A schedule cheaper than a proven optimum means a bug somewhere: keep it visible.
        if ref.kind == "opt" and not r.is_lower_bound and ratio < 1 - TOL:
            note = "objective below the proven optimum: check the models"
    return RatedRecord(
        record=r,
        reference=reference,
        reference_value=ref.value,
        reference_kind=ref.kind if ref.value is not None else "",
        reference_source=ref.source if ref.value is not None else "",
        ratio=ratio,
        note=note,
    )
