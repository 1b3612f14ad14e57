"""The coflow instance on a big-switch fabric.

An :class:`Instance` is the one input of every algorithm in coflowlab. It models the
non-blocking ("big switch") fabric of the coflow literature (docs/theory.md#model;
Chowdhury's thesis §2, Fig. 2.2): ``m`` ingress and ``m`` egress ports, each with a capacity,
and nothing else that constrains. A coflow is a set of flows; flow ``e`` goes from ingress port
``src[e]`` to egress port ``dst[e]`` and carries ``size[e]`` units of data.

Data is held as flat, read-only NumPy arrays (one entry per flow, one per coflow), validated
once in the constructor; every error names the coflow, flow and field.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import numpy.typing as npt

from .constants import MAX_PORTS, MAX_TIME_RATIO, MAX_VALUE, MB_PER_UNIT, MIN_VALUE
from .exceptions import InvalidInstanceError

__all__ = ["JSON_FORMAT", "Coflow", "Fabric", "Instance", "Units"]

JSON_FORMAT = "coflowlab-instance"
"""The ``format`` tag of coflowlab's own JSON instance files (version 1)."""

_JSON_VERSION = 1


@dataclass(frozen=True)
class Units:
    """Units that travel with an instance.

    Parameters
    ----------
    size
        Unit of flow sizes, e.g. ``"MB"`` or ``"B"``; ``"unit"`` for dimensionless data.
    time
        Unit of times (releases, deadlines, completion times), e.g. ``"ms"`` or ``"s"``.

    Port capacities are in ``size`` per ``time``.
    """

    size: str = "unit"
    time: str = "unit"

    def mb_per_size_unit(self) -> float | None:
        """Megabytes per size unit, or ``None`` when the size unit is not a byte unit."""
        return MB_PER_UNIT.get(self.size)


@dataclass(frozen=True, eq=False)
class Fabric:
    """A big-switch fabric: ``num_ports`` ingress and ``num_ports`` egress ports.

    Parameters
    ----------
    num_ports
        Number ``m`` of ingress ports (and of egress ports).
    ingress_capacity
        Capacity of each ingress port, in size units per time unit; a scalar applies to all.
    egress_capacity
        Capacity of each egress port; a scalar applies to all.

    Examples
    --------
    >>> Fabric(3).ingress_capacity
    array([1., 1., 1.])
    """

    num_ports: int
    ingress_capacity: npt.NDArray[np.float64] | float = 1.0
    egress_capacity: npt.NDArray[np.float64] | float = 1.0

    def __post_init__(self) -> None:
        m = self.num_ports
        if isinstance(m, bool) or not isinstance(m, int | np.integer) or m < 1:
            raise InvalidInstanceError(
                f"fabric: num_ports must be a positive integer, got {m!r}", field="num_ports"
            )
        if m > MAX_PORTS:
            raise InvalidInstanceError(
                f"fabric: num_ports is {m}, beyond the supported {MAX_PORTS} "
                "(coflowlab.constants.MAX_PORTS)",
                field="num_ports",
            )
        object.__setattr__(self, "num_ports", int(m))
        for side in ("ingress", "egress"):
            raw = getattr(self, f"{side}_capacity")
            cap = (
                np.array(np.broadcast_to(np.asarray(raw, dtype=float), (m,)))
                if np.ndim(raw) == 0
                else np.array(raw, dtype=float)
            )
            if cap.shape != (m,):
                raise InvalidInstanceError(
                    f"fabric: {side}_capacity has shape {cap.shape}, expected ({m},)"
                )
            bad = np.flatnonzero(~(np.isfinite(cap) & (cap > 0)))
            if bad.size:
                p = int(bad[0])
                raise InvalidInstanceError(
                    f"fabric: {side} port {p}: capacity is {_fmt(cap[p])} (must be positive "
                    "and finite)",
                    field=f"{side}_capacity",
                    index=p,
                )
            bad = np.flatnonzero((cap < MIN_VALUE) | (cap > MAX_VALUE))
            if bad.size:
                p = int(bad[0])
                raise InvalidInstanceError(
                    f"fabric: {side} port {p}: capacity is {_fmt(cap[p])}, {_RANGE}",
                    field=f"{side}_capacity",
                    index=p,
                )
            cap.setflags(write=False)
            object.__setattr__(self, f"{side}_capacity", cap)

    @property
    def port_capacity(self) -> npt.NDArray[np.float64]:
        """Capacities of the ``2m`` ports: ingress ``0..m-1`` then egress ``m..2m-1``."""
        return np.concatenate(
            [np.asarray(self.ingress_capacity), np.asarray(self.egress_capacity)]
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Fabric):
            return NotImplemented
        return (
            self.num_ports == other.num_ports
            and np.array_equal(self.ingress_capacity, other.ingress_capacity)
            and np.array_equal(self.egress_capacity, other.egress_capacity)
        )

    __hash__ = None  # type: ignore[assignment]


@dataclass(frozen=True)
class Coflow:
    """One coflow, for building instances by hand with :meth:`Instance.from_coflows`.

    Parameters
    ----------
    flows
        ``(src, dst, size)`` triples, or ``(src, dst, size, release)`` quadruples.
    release
        Release (arrival) time of the coflow. Default 0.
    weight
        Weight in the objective ``sum_j w_j C_j``. Default 1.
    deadline
        Largest allowed CCT (measured from the release), or ``None`` for no deadline.
    label
        Name of the coflow, e.g. its id in a trace. Default: its index.
    """

    flows: Sequence[Sequence[float]]
    release: float = 0.0
    weight: float = 1.0
    deadline: float | None = None
    label: str | None = None


_RANGE = (
    f"outside the supported range [{MIN_VALUE:g}, {MAX_VALUE:g}] (coflowlab.constants; "
    "rescale the units)"
)


def _fmt(x: float) -> str:
    if isinstance(x, float | np.floating) and math.isnan(x):
        return "NaN"
    return repr(float(x)) if isinstance(x, float | np.floating) else repr(x)


def _readonly(a: npt.ArrayLike, dtype: Any) -> np.ndarray:
    arr = np.array(a, dtype=dtype, copy=True)
    arr.setflags(write=False)
    return arr


def _as_index_array(values: npt.ArrayLike, what: str, n_flows: int) -> np.ndarray:
    """Converts port or coflow indices to int64, rejecting non-integral values."""
    arr = np.asarray(values)
    if arr.shape != (n_flows,):
        raise InvalidInstanceError(f"{what}: has shape {arr.shape}, expected ({n_flows},)")
    if arr.dtype.kind in "iu":
        return arr.astype(np.int64)
    if arr.dtype.kind == "b" or arr.dtype.kind not in "f":
        raise InvalidInstanceError(f"{what}: must be integers, got dtype {arr.dtype}")
    bad = np.flatnonzero(~np.isfinite(arr) | (arr != np.round(arr)))
    if bad.size:
        e = int(bad[0])
        raise InvalidInstanceError(f"flow {e}: {what} {_fmt(arr[e])} is not an integer")
    return arr.astype(np.int64)


class Instance:
    """An immutable, validated coflow instance.

    Parameters
    ----------
    fabric
        The fabric, or an integer ``m`` for ``m`` ports of capacity 1.
    flow_coflow, flow_src, flow_dst, flow_size
        Per flow: the index of its coflow, its ingress port, its egress port and its size.
    flow_release
        Per flow: its release time, at least its coflow's. Default: its coflow's release.
    coflow_release
        Per coflow: release (arrival) time, ``>= 0``. Default 0.
    coflow_weight
        Per coflow: weight ``>= 0``. Default 1.
    coflow_deadline
        Per coflow: largest allowed CCT (from the release), ``> 0``; ``inf`` or ``None``
        for none. Default: no deadlines.
    coflow_label
        Per coflow: a unique label, e.g. its id in the file it came from. Default ``"0"``,
        ``"1"``, ...
    num_coflows
        Number of coflows; default: the length of a per-coflow array, else
        ``max(flow_coflow) + 1``. Every coflow must have at least one flow.
    dependencies
        ``(a, b)`` pairs meaning coflow ``b`` may send only after coflow ``a`` completes
        (multi-stage jobs). They must form a DAG.
    units
        Units of sizes and times.

    Raises
    ------
    InvalidInstanceError
        If any value is invalid. The message names the coflow, flow and field, e.g.
        ``"coflow 3, flow 17: size is NaN"``.

    Notes
    -----
    Port loads and the bottleneck follow docs/theory.md#model: ``L[j, v]`` is the data of
    coflow ``j`` through port ``v``, and ``rho[j] = max_v L[j, v] / c_v`` is the time coflow
    ``j`` needs alone on an empty fabric (``Γ_empty`` in Chowdhury's thesis, Eq. 4.1).

    Examples
    --------
    >>> inst = Instance.from_matrices([[[1, 2], [3, 0]]])
    >>> inst.num_coflows, inst.num_flows, inst.bottleneck
    (1, 3, array([4.]))
    """

    __slots__ = (
        "__dict__",
        "coflow_deadline",
        "coflow_label",
        "coflow_release",
        "coflow_weight",
        "dependencies",
        "fabric",
        "flow_coflow",
        "flow_dst",
        "flow_release",
        "flow_size",
        "flow_src",
        "units",
    )

    fabric: Fabric
    flow_coflow: npt.NDArray[np.int64]
    flow_src: npt.NDArray[np.int64]
    flow_dst: npt.NDArray[np.int64]
    flow_size: npt.NDArray[np.float64]
    flow_release: npt.NDArray[np.float64]
    coflow_release: npt.NDArray[np.float64]
    coflow_weight: npt.NDArray[np.float64]
    coflow_deadline: npt.NDArray[np.float64]
    coflow_label: tuple[str, ...]
    dependencies: npt.NDArray[np.int64]
    units: Units

    def __init__(
        self,
        fabric: Fabric | int,
        flow_coflow: npt.ArrayLike,
        flow_src: npt.ArrayLike,
        flow_dst: npt.ArrayLike,
        flow_size: npt.ArrayLike,
        flow_release: npt.ArrayLike | None = None,
        *,
        coflow_release: npt.ArrayLike | None = None,
        coflow_weight: npt.ArrayLike | None = None,
        coflow_deadline: npt.ArrayLike | None = None,
        coflow_label: Iterable[Any] | None = None,
        num_coflows: int | None = None,
        dependencies: Iterable[tuple[int, int]] | npt.ArrayLike = (),
        units: Units | None = None,
    ) -> None:
        if not isinstance(fabric, Fabric):
            fabric = Fabric(fabric)
        sizes = np.asarray(flow_size)
        if sizes.ndim != 1:
            raise InvalidInstanceError(f"flow_size: must be one-dimensional, got {sizes.shape}")
        if sizes.dtype.kind not in "iuf":
            raise InvalidInstanceError(f"flow_size: must be numbers, got dtype {sizes.dtype}")
        nf = sizes.shape[0]
        coflow = _as_index_array(flow_coflow, "coflow index", nf)
        src = _as_index_array(flow_src, "ingress port", nf)
        dst = _as_index_array(flow_dst, "egress port", nf)

        labels = None if coflow_label is None else [str(x) for x in coflow_label]
        if num_coflows is None:
            # the largest count any argument implies; mismatches are then reported by field
            lengths = [
                len(arr)  # type: ignore[arg-type]
                for arr in (coflow_release, coflow_weight, coflow_deadline, labels)
                if arr is not None and np.ndim(arr) == 1
            ]
            num_coflows = max([int(coflow.max()) + 1 if nf else 0, *lengths])
        n = int(num_coflows)
        if n < 1:
            raise InvalidInstanceError("an instance needs at least one coflow with one flow")

        self.fabric = fabric
        self.units = units if units is not None else Units()
        self.flow_coflow = _readonly(coflow, np.int64)
        self.flow_src = _readonly(src, np.int64)
        self.flow_dst = _readonly(dst, np.int64)
        self.flow_size = _readonly(sizes, np.float64)
        self.coflow_release = self._per_coflow(coflow_release, n, 0.0, "release")
        self.coflow_weight = self._per_coflow(coflow_weight, n, 1.0, "weight")
        deadline: Any = coflow_deadline
        if deadline is not None and np.ndim(deadline) == 1:
            deadline = [np.inf if d is None else d for d in deadline]  # None means no deadline
        self.coflow_deadline = self._per_coflow(deadline, n, np.inf, "deadline")
        if labels is None:
            labels = [str(k) for k in range(n)]
        if len(labels) != n:
            raise InvalidInstanceError(f"coflow_label: has {len(labels)} entries, expected {n}")
        self.coflow_label = tuple(labels)
        if flow_release is None:
            self._validate_coflows_and_indices(n)
            self.flow_release = _readonly(self.coflow_release[self.flow_coflow], np.float64)
        else:
            rel = np.asarray(flow_release, dtype=float)
            if rel.shape != (nf,):
                raise InvalidInstanceError(
                    f"flow_release: has shape {rel.shape}, expected ({nf},)"
                )
            self._validate_coflows_and_indices(n)
            self.flow_release = _readonly(rel, np.float64)
        dep_arg: Any = dependencies
        deps = np.asarray(
            dep_arg if isinstance(dep_arg, np.ndarray) else list(dep_arg), dtype=float
        ).reshape(-1, 2)
        self.dependencies = (
            _readonly(deps, np.int64) if deps.size else _readonly(np.zeros((0, 2)), np.int64)
        )
        self._validate(deps)

    # ------------------------------------------------------------------ validation
    @staticmethod
    def _per_coflow(values: Any, n: int, default: float, field: str) -> np.ndarray:
        if values is None:
            return _readonly(np.full(n, default), np.float64)
        try:
            arr = np.asarray(values, dtype=float)
        except (TypeError, ValueError) as exc:
            raise InvalidInstanceError(f"coflow_{field}: must be numbers ({exc})") from None
        if arr.ndim == 0:
            arr = np.full(n, float(arr))
        if arr.shape != (n,):
            raise InvalidInstanceError(f"coflow_{field}: has shape {arr.shape}, expected ({n},)")
        return _readonly(arr, np.float64)

    def _validate_coflows_and_indices(self, n: int) -> None:
        coflow, m = self.flow_coflow, self.fabric.num_ports
        bad = np.flatnonzero((coflow < 0) | (coflow >= n))
        if bad.size:
            e = int(bad[0])
            raise InvalidInstanceError(
                f"flow {e}: coflow index {int(coflow[e])} is out of range (instance has "
                f"{n} coflows)",
                field="flow_coflow",
                index=e,
            )
        counts = np.bincount(coflow, minlength=n)
        empty = np.flatnonzero(counts == 0)
        if empty.size:
            k = int(empty[0])
            raise InvalidInstanceError(f"coflow {k}: has no flows", field="coflow_label", index=k)
        for arr, side in ((self.flow_src, "ingress"), (self.flow_dst, "egress")):
            bad = np.flatnonzero((arr < 0) | (arr >= m))
            if bad.size:
                e = int(bad[0])
                raise InvalidInstanceError(
                    f"coflow {int(coflow[e])}, flow {e}: {side} port {int(arr[e])} is unknown "
                    f"(fabric has {m} ports: 0..{m - 1})",
                    field="flow_src" if side == "ingress" else "flow_dst",
                    index=e,
                )

    def _validate(self, deps: np.ndarray) -> None:
        coflow = self.flow_coflow
        size = self.flow_size
        bad = np.flatnonzero(~(np.isfinite(size) & (size > 0)))
        if bad.size:
            e = int(bad[0])
            what = (
                "is NaN"
                if np.isnan(size[e])
                else f"is {_fmt(size[e])} (must be positive and finite)"
            )
            raise InvalidInstanceError(
                f"coflow {int(coflow[e])}, flow {e}: size {what}", field="flow_size", index=e
            )
        bad = np.flatnonzero((size < MIN_VALUE) | (size > MAX_VALUE))
        if bad.size:
            e = int(bad[0])
            raise InvalidInstanceError(
                f"coflow {int(coflow[e])}, flow {e}: size is {_fmt(size[e])}, {_RANGE}",
                field="flow_size",
                index=e,
            )
        for arr, field, ok in (
            (self.coflow_release, "release", lambda a: np.isfinite(a) & (a >= 0)),
            (self.coflow_weight, "weight", lambda a: np.isfinite(a) & (a >= 0)),
            (self.coflow_deadline, "deadline", lambda a: ~np.isnan(a) & (a > 0)),
        ):
            bad = np.flatnonzero(~ok(arr))
            if bad.size:
                k = int(bad[0])
                rule = (
                    "must be positive, or inf for none"
                    if field == "deadline"
                    else ("must be finite and >= 0")
                )
                raise InvalidInstanceError(
                    f"coflow {k}: {field} is {_fmt(arr[k])} ({rule})",
                    field=f"coflow_{field}",
                    index=k,
                )
            # zero releases and weights are fine; a deadline is a duration like a size
            low = MIN_VALUE if field == "deadline" else 0.0
            bad = np.flatnonzero(((arr < low) | (arr > MAX_VALUE)) & np.isfinite(arr))
            if bad.size:
                k = int(bad[0])
                raise InvalidInstanceError(
                    f"coflow {k}: {field} is {_fmt(arr[k])}, outside the supported range "
                    f"[{low:g}, {MAX_VALUE:g}] (coflowlab.constants; rescale the units)",
                    field=f"coflow_{field}",
                    index=k,
                )
        rel = self.flow_release
        bad = np.flatnonzero(~np.isfinite(rel))
        if bad.size:
            e = int(bad[0])
            raise InvalidInstanceError(
                f"coflow {int(coflow[e])}, flow {e}: release is {_fmt(rel[e])} (must be finite)",
                field="flow_release",
                index=e,
            )
        bad = np.flatnonzero(rel < self.coflow_release[coflow])
        if bad.size:
            e = int(bad[0])
            k = int(coflow[e])
            raise InvalidInstanceError(
                f"coflow {k}, flow {e}: release {_fmt(rel[e])} is before its coflow's release "
                f"{_fmt(self.coflow_release[k])}",
                field="flow_release",
                index=e,
            )
        self._validate_times()
        seen: dict[str, int] = {}
        for k, lab in enumerate(self.coflow_label):
            if lab in seen:
                raise InvalidInstanceError(
                    f"coflow {k}: label {lab!r} repeats the label of coflow {seen[lab]}",
                    field="coflow_label",
                    index=k,
                )
            seen[lab] = k
        if deps.size:
            self._validate_dependencies(deps)

    def _validate_times(self) -> None:
        """Refuses flows whose earliest end is beyond :data:`~coflowlab.constants.MAX_VALUE`
        or whose transfer is too short for the tolerances next to the instance's time span
        (:data:`~coflowlab.constants.MAX_TIME_RATIO`; the reasoning is in constants.py)."""
        if not self.num_flows:
            return
        fab = self.fabric
        cap = np.minimum(
            np.asarray(fab.ingress_capacity)[self.flow_src],
            np.asarray(fab.egress_capacity)[self.flow_dst],
        )
        duration = self.flow_size / cap
        end = self.flow_release + duration
        last = int(np.argmax(end))
        coflow = self.flow_coflow

        def where(e: int) -> str:
            return (
                f"coflow {int(coflow[e])}, flow {e} (size {_fmt(self.flow_size[e])}, capacity "
                f"{_fmt(cap[e])}, release {_fmt(self.flow_release[e])})"
            )

        if not end[last] <= MAX_VALUE:
            raise InvalidInstanceError(
                f"{where(last)}: cannot end before time {end[last]:.6g}, beyond the supported "
                f"{MAX_VALUE:g} (coflowlab.constants; rescale the units)",
                field="flow_size",
                index=last,
            )
        short = int(np.argmin(duration))
        span = max(1.0, float(end[last]))
        if span > MAX_TIME_RATIO * duration[short]:
            raise InvalidInstanceError(
                f"{where(short)}: takes {duration[short]:.6g} time units, but {where(last)} "
                f"cannot end before {span:.6g}: a ratio of {span / duration[short]:.3g}, "
                f"above the {MAX_TIME_RATIO:g} the tolerances support (coflowlab.constants "
                "MAX_TIME_RATIO)",
                field="flow_size",
                index=short,
            )

    def _validate_dependencies(self, deps: np.ndarray) -> None:
        n = self.num_coflows
        for i, (a, b) in enumerate(deps):
            for x in (a, b):
                if not (np.isfinite(x) and x == int(x) and 0 <= x < n):
                    shown = int(x) if np.isfinite(x) and x == int(x) else _fmt(x)
                    raise InvalidInstanceError(
                        f"dependency {i}: coflow {shown} is not a coflow index (0..{n - 1})",
                        field="dependencies",
                        index=i,
                    )
            if a == b:
                raise InvalidInstanceError(
                    f"dependency {i}: coflow {int(a)} depends on itself",
                    field="dependencies",
                    index=i,
                )
        import networkx as nx  # lazy: keeps `import coflowlab` fast

        graph = nx.DiGraph()
        graph.add_edges_from((int(a), int(b)) for a, b in deps)
        try:
            cycle = nx.find_cycle(graph)
        except nx.NetworkXNoCycle:
            return
        path = " -> ".join(str(u) for u, _ in cycle) + f" -> {cycle[0][0]}"
        raise InvalidInstanceError(f"dependencies: form a cycle {path}", field="dependencies")

    # ------------------------------------------------------------------ builders
    @classmethod
    def from_coflows(
        cls,
        coflows: Sequence[Coflow],
        fabric: Fabric | int,
        *,
        dependencies: Iterable[tuple[int, int]] = (),
        units: Units | None = None,
    ) -> Instance:
        """Builds an instance from :class:`Coflow` objects.

        Examples
        --------
        >>> inst = Instance.from_coflows(
        ...     [Coflow([(0, 1, 3.0)], release=1.0), Coflow([(1, 0, 2.0)], weight=2.0)], 2
        ... )
        >>> inst.coflow_weight
        array([1., 2.])
        """
        rows: list[tuple[int, int, int, float, float]] = []
        for k, c in enumerate(coflows):
            for spec in c.flows:
                if len(spec) not in (3, 4):
                    raise InvalidInstanceError(
                        f"coflow {k}: a flow must be (src, dst, size[, release]), got {spec!r}"
                    )
                rel = spec[3] if len(spec) == 4 else c.release
                rows.append((k, spec[0], spec[1], spec[2], rel))  # type: ignore[arg-type]
        cols: list[Any] = list(zip(*rows, strict=True)) if rows else [[], [], [], [], []]
        return cls(
            fabric,
            np.asarray(cols[0], dtype=np.int64),
            np.asarray(cols[1]),
            np.asarray(cols[2]),
            np.asarray(cols[3], dtype=float),
            np.asarray(cols[4], dtype=float),
            coflow_release=[c.release for c in coflows],
            coflow_weight=[c.weight for c in coflows],
            coflow_deadline=[np.inf if c.deadline is None else c.deadline for c in coflows],
            coflow_label=[str(k) if c.label is None else c.label for k, c in enumerate(coflows)],
            num_coflows=len(coflows),
            dependencies=dependencies,
            units=units,
        )

    @classmethod
    def from_matrices(
        cls,
        demands: Sequence[npt.ArrayLike],
        *,
        release: npt.ArrayLike | None = None,
        weight: npt.ArrayLike | None = None,
        deadline: npt.ArrayLike | None = None,
        labels: Iterable[Any] | None = None,
        capacity: float = 1.0,
        units: Units | None = None,
    ) -> Instance:
        """Builds an instance from one ``m × m`` demand matrix per coflow.

        Entry ``D[i][o] > 0`` becomes a flow from ingress ``i`` to egress ``o`` (rows are
        ingress ports, as in docs/theory.md#instances). Flows are ordered row-major.

        Examples
        --------
        >>> Instance.from_matrices([[[1, 2], [3, 0]]]).flow_size
        array([1., 2., 3.])
        """
        mats = [np.asarray(d, dtype=float) for d in demands]
        if not mats:
            raise InvalidInstanceError("an instance needs at least one coflow with one flow")
        m = mats[0].shape[0] if mats[0].ndim == 2 else -1
        cols: list[list[Any]] = [[], [], [], []]
        for k, d in enumerate(mats):
            if d.ndim != 2 or d.shape != (m, m):
                raise InvalidInstanceError(
                    f"coflow {k}: demand matrix has shape {d.shape}, expected ({m}, {m})"
                )
            if np.isnan(d).any() or (d < 0).any():
                i, o = np.argwhere(np.isnan(d) | (d < 0))[0]
                raise InvalidInstanceError(
                    f"coflow {k}: demand[{i}][{o}] is {_fmt(d[i, o])} (must be >= 0)"
                )
            ii, oo = np.nonzero(d)
            cols[0].extend([k] * len(ii))
            cols[1].extend(ii.tolist())
            cols[2].extend(oo.tolist())
            cols[3].extend(d[ii, oo].tolist())
        return cls(
            Fabric(m, capacity, capacity),
            np.asarray(cols[0], dtype=np.int64),
            np.asarray(cols[1], dtype=np.int64),
            np.asarray(cols[2], dtype=np.int64),
            np.asarray(cols[3], dtype=float),
            coflow_release=release,
            coflow_weight=weight,
            coflow_deadline=deadline,
            coflow_label=labels,
            num_coflows=len(mats),
            units=units,
        )

    # ------------------------------------------------------------------ sizes
    @property
    def num_ports(self) -> int:
        """Number ``m`` of ingress (and of egress) ports."""
        return self.fabric.num_ports

    @property
    def num_coflows(self) -> int:
        """Number ``n`` of coflows."""
        return len(self.coflow_release)

    @property
    def num_flows(self) -> int:
        """Number of flows."""
        return len(self.flow_size)

    @property
    def has_deadlines(self) -> bool:
        """Whether any coflow has a finite deadline."""
        return bool(np.isfinite(self.coflow_deadline).any())

    @property
    def has_releases(self) -> bool:
        """Whether any coflow or flow is released after time 0."""
        return bool((self.flow_release > 0).any())

    # ------------------------------------------------------------------ derived values
    @cached_property
    def flow_order(self) -> npt.NDArray[np.int64]:
        """Flow indices grouped by coflow (stable: instance order within a coflow)."""
        return _readonly(np.argsort(self.flow_coflow, kind="stable"), np.int64)

    @cached_property
    def coflow_flow_ptr(self) -> npt.NDArray[np.int64]:
        """CSR pointer: ``flow_order[ptr[k]:ptr[k+1]]`` are coflow ``k``'s flows."""
        counts = np.bincount(self.flow_coflow, minlength=self.num_coflows)
        return _readonly(np.concatenate([[0], np.cumsum(counts)]), np.int64)

    def coflow_flows(self, k: int) -> npt.NDArray[np.int64]:
        """The flow indices of coflow ``k``, in instance order."""
        ptr = self.coflow_flow_ptr
        return self.flow_order[ptr[k] : ptr[k + 1]]

    def _load(self, ports: np.ndarray) -> np.ndarray:
        m = self.num_ports
        flat = np.bincount(
            self.flow_coflow * m + ports, weights=self.flow_size, minlength=self.num_coflows * m
        )
        return _readonly(flat.reshape(self.num_coflows, m), np.float64)

    @cached_property
    def ingress_load(self) -> npt.NDArray[np.float64]:
        """``(n, m)`` data of each coflow through each ingress port (row sums of ``D``)."""
        return self._load(self.flow_src)

    @cached_property
    def egress_load(self) -> npt.NDArray[np.float64]:
        """``(n, m)`` data of each coflow through each egress port (column sums of ``D``)."""
        return self._load(self.flow_dst)

    @cached_property
    def port_load(self) -> npt.NDArray[np.float64]:
        """``(n, 2m)`` loads on the ``2m`` ports, ingress first: the concurrent-open-shop
        processing times of docs/theory.md#cos (before dividing by capacity)."""
        return _readonly(np.hstack([self.ingress_load, self.egress_load]), np.float64)

    @cached_property
    def port_time(self) -> npt.NDArray[np.float64]:
        """``(n, 2m)`` time each coflow needs on each port alone: load / capacity."""
        return _readonly(self.port_load / self.fabric.port_capacity, np.float64)

    def port_load_sparse(self) -> Any:
        """``(n, 2m)`` port loads as a ``scipy.sparse.csr_array`` (for large instances)."""
        from scipy import sparse  # lazy

        m, n = self.num_ports, self.num_coflows
        rows = np.concatenate([self.flow_coflow, self.flow_coflow])
        cols = np.concatenate([self.flow_src, self.flow_dst + m])
        vals = np.concatenate([self.flow_size, self.flow_size])
        return sparse.csr_array((vals, (rows, cols)), shape=(n, 2 * m))

    @cached_property
    def bottleneck(self) -> npt.NDArray[np.float64]:
        """``(n,)`` bottleneck ρ of each coflow: its completion time alone on an empty fabric
        (``Γ_empty`` in Chowdhury's thesis, Eq. 4.1; ``ρ_j`` in docs/theory.md#model)."""
        return _readonly(self.port_time.max(axis=1), np.float64)

    @cached_property
    def bottleneck_port(self) -> npt.NDArray[np.int64]:
        """``(n,)`` the port (``0..2m-1``, ingress first) attaining ρ; lowest index on ties."""
        return _readonly(self.port_time.argmax(axis=1), np.int64)

    @cached_property
    def width(self) -> npt.NDArray[np.int64]:
        """``(n,)`` number of flows of each coflow (Varys' width)."""
        return _readonly(np.bincount(self.flow_coflow, minlength=self.num_coflows), np.int64)

    @cached_property
    def length(self) -> npt.NDArray[np.float64]:
        """``(n,)`` size of each coflow's largest flow (Varys' length)."""
        out = np.zeros(self.num_coflows)
        np.maximum.at(out, self.flow_coflow, self.flow_size)
        return _readonly(out, np.float64)

    @cached_property
    def total_size(self) -> npt.NDArray[np.float64]:
        """``(n,)`` total data of each coflow (Varys' size)."""
        return _readonly(
            np.bincount(self.flow_coflow, weights=self.flow_size, minlength=self.num_coflows),
            np.float64,
        )

    @cached_property
    def skew(self) -> npt.NDArray[np.float64]:
        """``(n,)`` largest over smallest flow size of each coflow (Philae's skew, ≥ 1)."""
        smallest = np.full(self.num_coflows, np.inf)
        np.minimum.at(smallest, self.flow_coflow, self.flow_size)
        return _readonly(self.length / smallest, np.float64)

    # ------------------------------------------------------------------ transformations
    def _fields(self) -> dict[str, Any]:
        return {
            "fabric": self.fabric,
            "flow_coflow": self.flow_coflow,
            "flow_src": self.flow_src,
            "flow_dst": self.flow_dst,
            "flow_size": self.flow_size,
            "flow_release": self.flow_release,
            "coflow_release": self.coflow_release,
            "coflow_weight": self.coflow_weight,
            "coflow_deadline": self.coflow_deadline,
            "coflow_label": self.coflow_label,
            "dependencies": self.dependencies,
            "units": self.units,
        }

    def replace(self, **changes: Any) -> Instance:
        """Returns a validated copy with the given constructor arguments replaced.

        Changing a coflow's release without giving ``flow_release`` moves its flows' releases
        to the new coflow release.

        Examples
        --------
        >>> inst = Instance.from_matrices([[[1]], [[2]]])
        >>> inst.replace(coflow_weight=[3, 1]).coflow_weight
        array([3., 1.])
        """
        unknown = set(changes) - set(self._fields())
        if unknown:
            raise TypeError(f"replace() got unknown fields: {sorted(unknown)}")
        fields = self._fields()
        if "coflow_release" in changes and "flow_release" not in changes:
            new_rel = np.asarray(changes["coflow_release"], dtype=float)
            if new_rel.shape == self.coflow_release.shape:
                offset = self.flow_release - self.coflow_release[self.flow_coflow]
                fields["flow_release"] = new_rel[self.flow_coflow] + offset
            else:
                fields["flow_release"] = None
        fields.update(changes)
        return Instance(**fields)

    def subset(self, coflows: Iterable[int]) -> Instance:
        """Returns the instance restricted to the given coflows, re-indexed in the given order.

        Dependencies between kept coflows are kept; others are dropped.

        Examples
        --------
        >>> inst = Instance.from_matrices([[[1]], [[2]], [[3]]])
        >>> inst.subset([2, 0]).coflow_label
        ('2', '0')
        """
        keep = np.asarray(list(coflows), dtype=np.int64)
        n = self.num_coflows
        if keep.size == 0:
            raise InvalidInstanceError("subset: needs at least one coflow")
        if ((keep < 0) | (keep >= n)).any() or len(np.unique(keep)) != keep.size:
            raise InvalidInstanceError(
                f"subset: coflow indices must be distinct and in 0..{n - 1}, got {keep.tolist()}"
            )
        new_index = np.full(n, -1, dtype=np.int64)
        new_index[keep] = np.arange(keep.size)
        flows = np.concatenate([self.coflow_flows(int(k)) for k in keep])
        deps = [
            (int(new_index[a]), int(new_index[b]))
            for a, b in self.dependencies
            if new_index[a] >= 0 and new_index[b] >= 0
        ]
        return Instance(
            self.fabric,
            new_index[self.flow_coflow[flows]],
            self.flow_src[flows],
            self.flow_dst[flows],
            self.flow_size[flows],
            self.flow_release[flows],
            coflow_release=self.coflow_release[keep],
            coflow_weight=self.coflow_weight[keep],
            coflow_deadline=self.coflow_deadline[keep],
            coflow_label=[self.coflow_label[k] for k in keep],
            dependencies=deps,
            units=self.units,
        )

    def scale_sizes(self, factor: float) -> Instance:
        """Returns a copy with every flow size multiplied by ``factor`` (capacities unchanged),
        so every completion time of an order-based schedule on a zero-release instance scales
        by ``factor``."""
        if not (math.isfinite(factor) and factor > 0):
            raise InvalidInstanceError(f"scale_sizes: factor must be positive, got {factor!r}")
        return self.replace(flow_size=self.flow_size * factor)

    def scale_time(self, factor: float) -> Instance:
        """Returns a copy whose time axis is stretched by ``factor``: releases and deadlines
        are multiplied by it and capacities divided by it. Every schedule maps to one with
        times multiplied by ``factor``."""
        if not (math.isfinite(factor) and factor > 0):
            raise InvalidInstanceError(f"scale_time: factor must be positive, got {factor!r}")
        fab = self.fabric
        return self.replace(
            fabric=Fabric(
                fab.num_ports,
                np.asarray(fab.ingress_capacity) / factor,
                np.asarray(fab.egress_capacity) / factor,
            ),
            flow_release=self.flow_release * factor,
            coflow_release=self.coflow_release * factor,
            coflow_deadline=self.coflow_deadline * factor,
        )

    # ------------------------------------------------------------------ equality, pickle
    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Instance):
            return NotImplemented
        mine, theirs = self._fields(), other._fields()
        for key, value in mine.items():
            if isinstance(value, np.ndarray):
                if not np.array_equal(value, theirs[key]):
                    return False
            elif value != theirs[key]:
                return False
        return True

    __hash__ = None  # type: ignore[assignment]

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (self.to_dict(),))

    def __setattr__(self, name: str, value: Any) -> None:
        if name in Instance.__slots__ and hasattr(self, name) and name != "__dict__":
            raise AttributeError(f"Instance is immutable; use replace() to change {name!r}")
        object.__setattr__(self, name, value)

    # ------------------------------------------------------------------ JSON
    def to_dict(self) -> dict[str, Any]:
        """Returns coflowlab's JSON document for this instance (columns of plain numbers).

        Floats survive a JSON round trip exactly (Python writes the shortest repr). An absent
        deadline is written as ``null``.
        """
        fab = self.fabric
        return {
            "format": JSON_FORMAT,
            "version": _JSON_VERSION,
            "units": {"size": self.units.size, "time": self.units.time},
            "fabric": {
                "num_ports": fab.num_ports,
                "ingress_capacity": np.asarray(fab.ingress_capacity).tolist(),
                "egress_capacity": np.asarray(fab.egress_capacity).tolist(),
            },
            "coflows": {
                "label": list(self.coflow_label),
                "release": self.coflow_release.tolist(),
                "weight": self.coflow_weight.tolist(),
                "deadline": [None if math.isinf(d) else d for d in self.coflow_deadline.tolist()],
            },
            "flows": {
                "coflow": self.flow_coflow.tolist(),
                "src": self.flow_src.tolist(),
                "dst": self.flow_dst.tolist(),
                "size": self.flow_size.tolist(),
                "release": self.flow_release.tolist(),
            },
            "dependencies": self.dependencies.tolist(),
        }

    def to_json(self, indent: int | None = None) -> str:
        """Returns :meth:`to_dict` as a JSON string."""
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False)

    @classmethod
    def from_dict(cls, doc: dict[str, Any]) -> Instance:
        """Rebuilds an instance from :meth:`to_dict`'s document, validating it strictly.

        Indices, ports and ``num_ports`` must be JSON integers (not ``true``, ``1.5`` or
        ``"1"``), sizes, times, weights and capacities JSON numbers, deadlines numbers or
        ``null``, labels strings; every column must have one entry per flow (or coflow, or
        port).

        Raises
        ------
        InvalidInstanceError
            If the document lacks a key or holds an invalid value. The message starts with the
            JSON path of the value (``flows.size[5]``, ``fabric.num_ports``) and shows it;
            the exception's ``field`` is that path and ``index`` the entry.

        Examples
        --------
        >>> doc = Instance.from_matrices([[[1, 2], [0, 3]]]).to_dict()
        >>> doc["flows"]["src"][1] = 1.5
        >>> Instance.from_dict(doc)
        Traceback (most recent call last):
        ...
        coflowlab.exceptions.InvalidInstanceError: flows.src[1]: must be an integer, got 1.5
        """
        if not isinstance(doc, dict):
            raise InvalidInstanceError(
                f"instance document: must be a JSON object, got {_show(doc)}", field="json"
            )
        if doc.get("format") != JSON_FORMAT:
            raise InvalidInstanceError(
                f"format: 'format' must be {JSON_FORMAT!r}, got {_show(doc.get('format'))}",
                field="format",
            )
        version = doc.get("version")
        if type(version) is not int or version != _JSON_VERSION:
            raise InvalidInstanceError(
                f"version: unsupported version {_show(version)} (expected {_JSON_VERSION})",
                field="version",
            )
        fab, cof, flo = (_json_object(doc, key, key) for key in ("fabric", "coflows", "flows"))
        m = _json_int(_json_key(fab, "num_ports", "fabric."), "fabric.num_ports")
        if m < 1:
            raise InvalidInstanceError(
                f"fabric.num_ports: num_ports must be a positive integer, got {m}",
                field="fabric.num_ports",
            )
        caps = [
            _json_numbers(fab, f"{side}_capacity", "fabric.", m, scalar=True)
            for side in ("ingress", "egress")
        ]
        labels = _json_key(cof, "label", "coflows.")
        if not isinstance(labels, list):
            raise InvalidInstanceError(
                f"coflows.label: must be a list of strings, got {_show(labels)}",
                field="coflows.label",
            )
        for k, lab in enumerate(labels):
            if not isinstance(lab, str):
                raise InvalidInstanceError(
                    f"coflows.label[{k}]: must be a string, got {_show(lab)}",
                    field=f"coflows.label[{k}]",
                    index=k,
                )
        n = len(labels)
        coflow = _json_ints(flo, "coflow", "flows.", None)
        nf = len(coflow)
        deps = doc.get("dependencies", [])
        if not isinstance(deps, list):
            raise InvalidInstanceError(
                f"dependencies: must be a list of [a, b] pairs, got {_show(deps)}",
                field="dependencies",
            )
        for i, pair in enumerate(deps):
            if not (isinstance(pair, list) and len(pair) == 2):
                raise InvalidInstanceError(
                    f"dependencies[{i}]: must be a pair [a, b] of coflow indices, got "
                    f"{_show(pair)}",
                    field=f"dependencies[{i}]",
                    index=i,
                )
            for j in (0, 1):
                _json_int(pair[j], f"dependencies[{i}][{j}]", index=i)
        units = doc.get("units", {})
        if not isinstance(units, dict) or not all(
            isinstance(units.get(key, ""), str) for key in ("size", "time")
        ):
            raise InvalidInstanceError(
                f"units: must be an object with string 'size' and 'time', got {_show(units)}",
                field="units",
            )
        try:
            return cls(
                Fabric(m, np.asarray(caps[0], dtype=float), np.asarray(caps[1], dtype=float)),
                np.asarray(coflow, dtype=np.int64),
                np.asarray(_json_ints(flo, "src", "flows.", nf), dtype=np.int64),
                np.asarray(_json_ints(flo, "dst", "flows.", nf), dtype=np.int64),
                np.asarray(_json_numbers(flo, "size", "flows.", nf), dtype=float),
                np.asarray(_json_numbers(flo, "release", "flows.", nf), dtype=float),
                coflow_release=np.asarray(_json_numbers(cof, "release", "coflows.", n)),
                coflow_weight=np.asarray(_json_numbers(cof, "weight", "coflows.", n)),
                coflow_deadline=np.asarray(
                    _json_numbers(cof, "deadline", "coflows.", n, null=math.inf), dtype=float
                ),
                coflow_label=labels,
                num_coflows=n,
                dependencies=np.asarray(deps, dtype=np.int64).reshape(-1, 2),
                units=Units(units.get("size", "unit"), units.get("time", "unit")),
            )
        except InvalidInstanceError as exc:
            path = _JSON_PATHS.get(exc.field or "")
            if path is None:
                raise
            where = path if exc.index is None else f"{path}[{exc.index}]"
            raise InvalidInstanceError(f"{where}: {exc}", field=where, index=exc.index) from None

    @classmethod
    def from_json(cls, text: str) -> Instance:
        """Rebuilds an instance from :meth:`to_json`'s string."""
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InvalidInstanceError(f"instance document: not valid JSON ({exc})") from None
        return cls.from_dict(doc)

    # ------------------------------------------------------------------ printing
    def to_python(self) -> str:
        """Returns Python source that rebuilds this instance (used for counterexamples)."""
        lines = ["Instance.from_coflows(", "    ["]
        for k in range(self.num_coflows):
            flows = ", ".join(
                f"({int(self.flow_src[e])}, {int(self.flow_dst[e])}, {float(self.flow_size[e])!r}"
                + (
                    f", {float(self.flow_release[e])!r})"
                    if self.flow_release[e] != self.coflow_release[k]
                    else ")"
                )
                for e in self.coflow_flows(k)
            )
            extra = ""
            if self.coflow_release[k] != 0:
                extra += f", release={float(self.coflow_release[k])!r}"
            if self.coflow_weight[k] != 1:
                extra += f", weight={float(self.coflow_weight[k])!r}"
            if math.isfinite(self.coflow_deadline[k]):
                extra += f", deadline={float(self.coflow_deadline[k])!r}"
            if self.coflow_label[k] != str(k):
                extra += f", label={self.coflow_label[k]!r}"
            lines.append(f"        Coflow([{flows}]{extra}),")
        fab = self.fabric
        if np.all(fab.ingress_capacity == 1) and np.all(fab.egress_capacity == 1):
            fabric = str(fab.num_ports)
        else:
            fabric = (
                f"Fabric({fab.num_ports}, {np.asarray(fab.ingress_capacity).tolist()!r}, "
                f"{np.asarray(fab.egress_capacity).tolist()!r})"
            )
        lines.append(f"    ], {fabric},")
        if self.dependencies.size:
            lines.append(f"    dependencies={[tuple(p) for p in self.dependencies.tolist()]!r},")
        if self.units != Units():
            lines.append(f"    units={self.units!r},")
        lines.append(")")
        return "\n".join(lines)

    def __repr__(self) -> str:
        if self.num_flows <= 40:
            return self.to_python()
        return (
            f"<Instance: {self.num_coflows} coflows, {self.num_flows} flows, "
            f"{self.num_ports} ports, sizes in {self.units.size}, times in {self.units.time}>"
        )


_JSON_PATHS = {
    "flow_coflow": "flows.coflow",
    "flow_src": "flows.src",
    "flow_dst": "flows.dst",
    "flow_size": "flows.size",
    "flow_release": "flows.release",
    "coflow_release": "coflows.release",
    "coflow_weight": "coflows.weight",
    "coflow_deadline": "coflows.deadline",
    "coflow_label": "coflows.label",
    "ingress_capacity": "fabric.ingress_capacity",
    "egress_capacity": "fabric.egress_capacity",
    "dependencies": "dependencies",
}
"""JSON path of each :class:`Instance` argument in :meth:`Instance.to_dict`'s document."""


def _show(value: Any) -> str:
    """A JSON value as the file shows it (``true``, ``"abc"``, ``1.5``), shortened."""
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _json_key(d: dict[str, Any], key: str, where: str) -> Any:
    if key not in d:
        raise InvalidInstanceError(
            f"{where}{key}: missing key '{where}{key}'", field=f"{where}{key}"
        )
    return d[key]


def _json_object(d: dict[str, Any], key: str, path: str) -> dict[str, Any]:
    value = _json_key(d, key, "")
    if not isinstance(value, dict):
        raise InvalidInstanceError(
            f"{path}: must be a JSON object, got {_show(value)}", field=path
        )
    return value


def _json_int(value: Any, path: str, index: int | None = None) -> int:
    # bool is a subclass of int in Python; JSON true/false are not integers
    if type(value) is not int:
        raise InvalidInstanceError(
            f"{path}: must be an integer, got {_show(value)}", field=path, index=index
        )
    return value


def _json_list(d: dict[str, Any], key: str, where: str, length: int | None) -> list[Any]:
    values = _json_key(d, key, where)
    if not isinstance(values, list):
        raise InvalidInstanceError(
            f"{where}{key}: must be a list, got {_show(values)}", field=f"{where}{key}"
        )
    if length is not None and len(values) != length:
        raise InvalidInstanceError(
            f"{where}{key}: has {len(values)} entries, expected {length}", field=f"{where}{key}"
        )
    return values


def _json_ints(d: dict[str, Any], key: str, where: str, length: int | None) -> list[int]:
    values = _json_list(d, key, where, length)
    if not all(type(v) is int for v in values):  # fast path first: one pass in C
        for i, v in enumerate(values):
            _json_int(v, f"{where}{key}[{i}]", index=i)
    return values


def _json_numbers(
    d: dict[str, Any],
    key: str,
    where: str,
    length: int,
    null: float | None = None,
    scalar: bool = False,
) -> list[float]:
    """A list of ``length`` JSON numbers; ``null`` entries read as ``null`` when it is given,
    and with ``scalar`` one number stands for the whole column (capacities)."""
    values = _json_key(d, key, where)
    if scalar and type(values) in (int, float):
        values = [values] * length
    if not isinstance(values, list):
        raise InvalidInstanceError(
            f"{where}{key}: must be a list, got {_show(values)}", field=f"{where}{key}"
        )
    if len(values) != length:
        raise InvalidInstanceError(
            f"{where}{key}: has {len(values)} entries, expected {length}", field=f"{where}{key}"
        )
    out: list[float] = []
    for i, v in enumerate(values):
        if v is None and null is not None:
            out.append(null)
        elif type(v) is float:
            out.append(v)
        elif type(v) is int:
            try:
                out.append(float(v))
            except OverflowError:  # a JSON integer of hundreds of digits
                raise InvalidInstanceError(
                    f"{where}{key}[{i}]: {_show(v)} is too large",
                    field=f"{where}{key}[{i}]",
                    index=i,
                ) from None
        else:
            what = "a number or null" if null is not None else "a number"
            raise InvalidInstanceError(
                f"{where}{key}[{i}]: must be {what}, got {_show(v)}",
                field=f"{where}{key}[{i}]",
                index=i,
            )
    return out


def _rebuild(doc: dict[str, Any]) -> Instance:
    return Instance.from_dict(doc)
