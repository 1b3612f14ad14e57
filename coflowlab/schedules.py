"""Schedules: what an algorithm decided, stored compactly and checked by :func:`verify`.

A :class:`FluidSchedule` stores piecewise-constant rates as *rate-change records*
``(time, flow, rate)``: from ``time`` on, ``flow`` sends at ``rate`` until its next record.
Before its first record a flow's rate is 0. Memory grows with the number of changes, not with
segments × flows, so a replay of a full trace (about a million events, up to 10⁵ active flows)
fits in memory.

A :class:`SlottedSchedule` stores what each flow sends in each unit slot ``s = 1, 2, ...``
(slot ``s`` covers ``[s - 1, s)``), as ``(slot, flow, amount)`` triples.

Schedules may carry the completion times the algorithm *claims*; the verifier recomputes the
true ones from the records and reports any mismatch. Nothing downstream trusts the claim.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from .exceptions import InvalidScheduleError
from .time_models import TimeModel

__all__ = ["FluidSchedule", "FluidScheduleBuilder", "Schedule", "SlottedSchedule"]


def _frozen(a: npt.ArrayLike, dtype: Any, *, copy: bool = True) -> np.ndarray:
    """``a`` as a read-only array; ``copy=False`` for an array no one else holds."""
    arr = np.array(a, dtype=dtype, copy=True) if copy else np.asarray(a, dtype=dtype)
    arr.setflags(write=False)
    return arr


def _check_columns(num_flows: int, flow: np.ndarray, columns: dict[str, np.ndarray]) -> None:
    n = len(flow)
    for name, col in columns.items():
        if col.shape != (n,):
            raise InvalidScheduleError(f"{name}: has shape {col.shape}, expected ({n},)")
        bad = np.flatnonzero(~np.isfinite(col))
        if bad.size:
            i = int(bad[0])
            raise InvalidScheduleError(f"record {i}: {name} is {float(col[i])!r} (must be finite)")
    bad = np.flatnonzero((flow < 0) | (flow >= num_flows))
    if bad.size:
        i = int(bad[0])
        raise InvalidScheduleError(
            f"record {i}: flow {int(flow[i])} is not a flow of the instance (0..{num_flows - 1})"
        )


def _claimed(completion: npt.ArrayLike | None) -> np.ndarray | None:
    if completion is None:
        return None
    arr = np.asarray(completion, dtype=float)
    if arr.ndim != 1:
        raise InvalidScheduleError(f"completion: must be one-dimensional, got {arr.shape}")
    return _frozen(arr, np.float64)


class FluidSchedule:
    """Piecewise-constant flow rates, stored as rate-change records.

    Parameters
    ----------
    num_flows
        Number of flows of the instance the schedule is for.
    time, flow, rate
        The records: from ``time[i]`` on, flow ``flow[i]`` sends at ``rate[i]``. Records are
        sorted by time (stably); of several records for one flow at one time, the last wins.
    completion
        Optional per-coflow completion times the algorithm claims; checked by the verifier.

    Raises
    ------
    InvalidScheduleError
        If columns differ in length, hold non-finite values, or name unknown flows.

    Examples
    --------
    >>> s = FluidSchedule(2, time=[0, 0, 2], flow=[0, 1, 0], rate=[1.0, 0.5, 0.0])
    >>> s.num_records, s.horizon
    (3, 2.0)
    """

    model = TimeModel.FLUID

    def __init__(
        self,
        num_flows: int,
        time: npt.ArrayLike,
        flow: npt.ArrayLike,
        rate: npt.ArrayLike,
        *,
        completion: npt.ArrayLike | None = None,
    ) -> None:
        t = np.asarray(time, dtype=float).ravel()
        f = np.asarray(flow).ravel()
        r = np.asarray(rate, dtype=float).ravel()
        if f.size and f.dtype.kind not in "iu":
            raise InvalidScheduleError(f"flow: must be integer indices, got dtype {f.dtype}")
        f = f.astype(np.int64)
        if len(t) != len(f):
            raise InvalidScheduleError(f"time has {len(t)} records but flow has {len(f)}")
        _check_columns(num_flows, f, {"time": t, "rate": r})
        # records already in time order (a simulator writes them so) need no sort; columns
        # gathered in sorted order are new arrays, frozen without another copy
        fresh = not np.all(t[1:] >= t[:-1])
        if fresh:
            order = np.argsort(t, kind="stable")
            t, f, r = t[order], f[order], r[order]
        self.num_flows = int(num_flows)
        self.time = _frozen(t, np.float64, copy=not fresh)
        self.flow = _frozen(f, np.int64, copy=False)  # astype made it
        self.rate = _frozen(r, np.float64, copy=not fresh)
        self.completion = _claimed(completion)

    @classmethod
    def _adopt(
        cls, num_flows: int, time: np.ndarray, flow: np.ndarray, rate: np.ndarray
    ) -> FluidSchedule:
        """A schedule over the given arrays themselves, not copies of them: for a simulator
        whose records fill hundreds of MB and that hands them over. They are checked as the
        constructor checks its input and made read-only. Arrays of other dtypes than
        float64, int64, float64, or not sorted by time, go to the constructor instead.

        Examples
        --------
        >>> t, f, r = np.array([0.0, 2.0]), np.array([0, 0]), np.array([1.0, 0.0])
        >>> s = FluidSchedule._adopt(1, t, f, r)
        >>> s.time is t, t.flags.writeable
        (True, False)
        """
        t, f, r = np.asarray(time), np.asarray(flow), np.asarray(rate)
        plain = (t.dtype, f.dtype, r.dtype) == (np.float64, np.int64, np.float64)
        if not (plain and t.ndim == f.ndim == r.ndim == 1 and np.all(t[1:] >= t[:-1])):
            return cls(num_flows, time, flow, rate)
        if len(t) != len(f):
            raise InvalidScheduleError(f"time has {len(t)} records but flow has {len(f)}")
        _check_columns(num_flows, f, {"time": t, "rate": r})
        sched = cls.__new__(cls)
        sched.num_flows = int(num_flows)
        sched.time = _frozen(t, np.float64, copy=False)
        sched.flow = _frozen(f, np.int64, copy=False)
        sched.rate = _frozen(r, np.float64, copy=False)
        sched.completion = None
        return sched

    @classmethod
    def from_segments(
        cls,
        num_flows: int,
        flow: npt.ArrayLike,
        start: npt.ArrayLike,
        end: npt.ArrayLike,
        rate: npt.ArrayLike,
        *,
        completion: npt.ArrayLike | None = None,
    ) -> FluidSchedule:
        """Builds a schedule from constant-rate segments ``[start, end)``.

        Overlapping segments of one flow add up. This is the natural output of interval LPs,
        where each flow sends a constant rate within each interval.

        Examples
        --------
        >>> s = FluidSchedule.from_segments(1, [0, 0], [0, 1], [1, 3], [1.0, 0.5])
        >>> s.time.tolist(), s.rate.tolist()
        ([0.0, 1.0, 3.0], [1.0, 0.5, 0.0])
        """
        f = np.asarray(flow, dtype=np.int64).ravel()
        s = np.asarray(start, dtype=float).ravel()
        e = np.asarray(end, dtype=float).ravel()
        r = np.asarray(rate, dtype=float).ravel()
        if not (len(f) == len(s) == len(e) == len(r)):
            raise InvalidScheduleError("flow, start, end and rate must have equal lengths")
        _check_columns(num_flows, f, {"start": s, "end": e, "rate": r})
        bad = np.flatnonzero(e < s)
        if bad.size:
            i = int(bad[0])
            raise InvalidScheduleError(
                f"segment {i}: end {float(e[i])!r} is before start {float(s[i])!r}"
            )
        keep = (e > s) & (r != 0)
        f, s, e, r = f[keep], s[keep], e[keep], r[keep]
        # rate deltas at segment ends, summed per (flow, time), then a running sum per flow
        ff = np.concatenate([f, f])
        tt = np.concatenate([s, e])
        dd = np.concatenate([r, -r])
        order = np.lexsort((tt, ff))
        ff, tt, dd = ff[order], tt[order], dd[order]
        if ff.size == 0:
            return cls(num_flows, [], np.zeros(0, dtype=np.int64), [], completion=completion)
        new_key = np.ones(len(ff), dtype=bool)
        new_key[1:] = (ff[1:] != ff[:-1]) | (tt[1:] != tt[:-1])
        starts = np.flatnonzero(new_key)
        delta = np.add.reduceat(dd, starts)
        kf, kt = ff[starts], tt[starts]
        csum = np.cumsum(delta)
        first_of_flow = np.ones(len(kf), dtype=bool)
        first_of_flow[1:] = kf[1:] != kf[:-1]
        base = np.maximum.accumulate(np.where(first_of_flow, np.arange(len(kf)), 0))
        before = np.concatenate([[0.0], csum])[base]
        level = csum - before
        # a flow's level returns to zero at its last breakpoint: clean rounding noise there
        last_of_flow = np.ones(len(kf), dtype=bool)
        last_of_flow[:-1] = kf[1:] != kf[:-1]
        level[last_of_flow] = 0.0
        return cls(num_flows, kt, kf, level, completion=completion)

    @property
    def num_records(self) -> int:
        """Number of rate-change records."""
        return len(self.time)

    @property
    def horizon(self) -> float:
        """Time of the last record (0 for an empty schedule)."""
        return float(self.time[-1]) if len(self.time) else 0.0

    def rates_at(self, t: float) -> npt.NDArray[np.float64]:
        """The rate of every flow at time ``t`` (right-continuous: records at ``t`` apply).

        Examples
        --------
        >>> s = FluidSchedule(2, time=[0, 0, 2], flow=[0, 1, 0], rate=[1.0, 0.5, 0.0])
        >>> s.rates_at(1.0).tolist(), s.rates_at(2.0).tolist()
        ([1.0, 0.5], [0.0, 0.5])
        """
        upto = int(np.searchsorted(self.time, t, side="right"))
        rates = np.zeros(self.num_flows)
        rates[self.flow[:upto]] = self.rate[:upto]  # later records overwrite earlier ones
        return rates

    def __repr__(self) -> str:
        return (
            f"<FluidSchedule: {self.num_records} records for {self.num_flows} flows, "
            f"horizon {self.horizon:g}>"
        )


class FluidScheduleBuilder:
    """Collects rate changes event by event, cheaply, then builds a :class:`FluidSchedule`.

    Simulators call :meth:`set_rates` once per event with the flows whose rate changed.
    Records go into NumPy buffers that grow by doubling, never into per-record Python objects,
    so a million events cost little more than the records themselves.

    Examples
    --------
    >>> b = FluidScheduleBuilder(2)
    >>> b.set_rates(0.0, [0, 1], [0.5, 0.5])
    >>> b.set_rates(2.0, [0, 1], [0.0, 0.0])
    >>> b.build().num_records
    4
    """

    def __init__(self, num_flows: int, capacity: int = 1024) -> None:
        self.num_flows = int(num_flows)
        self._time = np.empty(capacity)
        self._flow = np.empty(capacity, dtype=np.int64)
        self._rate = np.empty(capacity)
        self._size = 0
        self._last_time = -np.inf

    def __len__(self) -> int:
        return self._size

    def set_rates(self, time: float, flows: npt.ArrayLike, rates: npt.ArrayLike) -> None:
        """Records that from ``time`` on, each of ``flows`` sends at its ``rates`` entry."""
        f = np.asarray(flows, dtype=np.int64).ravel()
        k = f.size
        if not k:
            return
        t = float(time)
        if not t >= self._last_time:
            raise InvalidScheduleError(
                f"set_rates: time {t!r} is before the previous event {self._last_time!r}"
            )
        self._last_time = t
        end = self._reserve(k)
        self._time[self._size : end] = t
        self._flow[self._size : end] = f
        self._rate[self._size : end] = rates
        self._size = end

    def _reserve(self, k: int) -> int:
        """Makes room for ``k`` more records; returns the new end."""
        end = self._size + k
        if end > len(self._time):
            grow = max(end, 2 * len(self._time))
            for name in ("_time", "_flow", "_rate"):
                old = getattr(self, name)
                new = np.empty(grow, dtype=old.dtype)
                new[: self._size] = old[: self._size]
                setattr(self, name, new)
        return end

    def extend(self, times: npt.ArrayLike, flows: npt.ArrayLike, rates: npt.ArrayLike) -> None:
        """Records several events at once: from ``times[i]`` on, ``flows[i]`` sends at
        ``rates[i]``; ``times`` must not decrease, nor start before the previous event."""
        time = np.asarray(times, dtype=np.float64).ravel()
        f = np.asarray(flows, dtype=np.int64).ravel()
        k = f.size
        if not k:
            return
        if time[0] >= self._last_time and not np.any(time[1:] < time[:-1]):
            back = np.zeros(0, dtype=np.int64)
        else:
            prev = np.concatenate(([self._last_time], time[:-1]))
            back = np.flatnonzero(time < prev)
        if back.size:
            i = int(back[0])
            raise InvalidScheduleError(
                f"set_rates: time {float(time[i])!r} is before the previous event "
                f"{float(prev[i])!r}"
            )
        self._last_time = float(time[-1])
        end = self._reserve(k)
        self._time[self._size : end] = time
        self._flow[self._size : end] = f
        self._rate[self._size : end] = rates
        self._size = end

    def records(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Views of the records so far: times, flows and rates (not copies)."""
        n = self._size
        return self._time[:n], self._flow[:n], self._rate[:n]

    def clear(self) -> None:
        """Forgets the records so far (after a streaming consumer has taken them)."""
        self._size = 0

    def build(self, *, completion: npt.ArrayLike | None = None) -> FluidSchedule:
        """Returns the schedule of every recorded change."""
        t, f, r = self.records()
        return FluidSchedule(self.num_flows, t, f, r, completion=completion)


class SlottedSchedule:
    """What each flow sends in each unit slot of the slotted model.

    Parameters
    ----------
    num_flows
        Number of flows of the instance.
    slot, flow, amount
        Triples: flow ``flow[i]`` sends ``amount[i]`` units in slot ``slot[i]`` (``>= 1``;
        slot ``s`` covers ``[s - 1, s)``, so a flow sending last in slot ``s`` completes
        at time ``s``). Repeated ``(slot, flow)`` pairs add up.
    completion
        Optional per-coflow completion times the algorithm claims.

    Examples
    --------
    >>> s = SlottedSchedule(2, slot=[1, 2], flow=[0, 1], amount=[1, 1])
    >>> s.horizon
    2
    """

    model = TimeModel.SLOTTED

    def __init__(
        self,
        num_flows: int,
        slot: npt.ArrayLike,
        flow: npt.ArrayLike,
        amount: npt.ArrayLike,
        *,
        completion: npt.ArrayLike | None = None,
    ) -> None:
        s = np.asarray(slot).ravel()
        f = np.asarray(flow).ravel()
        a = np.asarray(amount, dtype=float).ravel()
        for name, arr in (("slot", s), ("flow", f)):
            if arr.size and arr.dtype.kind not in "iu":
                raise InvalidScheduleError(f"{name}: must be integers, got dtype {arr.dtype}")
        s, f = s.astype(np.int64), f.astype(np.int64)
        if not (len(s) == len(f) == len(a)):
            raise InvalidScheduleError("slot, flow and amount must have equal lengths")
        _check_columns(num_flows, f, {"amount": a})
        bad = np.flatnonzero(s < 1)
        if bad.size:
            i = int(bad[0])
            raise InvalidScheduleError(f"record {i}: slot {int(s[i])} (slots start at 1)")
        order = np.lexsort((f, s))
        self.num_flows = int(num_flows)
        self.slot = _frozen(s[order], np.int64)
        self.flow = _frozen(f[order], np.int64)
        self.amount = _frozen(a[order], np.float64)
        self.completion = _claimed(completion)

    @classmethod
    def from_matchings(
        cls, num_flows: int, matchings: Sequence[Sequence[int]], *, first_slot: int = 1
    ) -> SlottedSchedule:
        """Builds a unit-capacity schedule: in slot ``first_slot + i`` every flow of
        ``matchings[i]`` sends one unit."""
        slots = [first_slot + i for i, mt in enumerate(matchings) for _ in mt]
        flows = [e for mt in matchings for e in mt]
        return cls(
            num_flows,
            np.asarray(slots, dtype=np.int64),
            np.asarray(flows, dtype=np.int64),
            np.ones(len(flows)),
        )

    @property
    def num_records(self) -> int:
        """Number of (slot, flow, amount) triples."""
        return len(self.slot)

    @property
    def horizon(self) -> int:
        """The last slot used (0 for an empty schedule)."""
        return int(self.slot[-1]) if len(self.slot) else 0

    def __repr__(self) -> str:
        return (
            f"<SlottedSchedule: {self.num_records} records for {self.num_flows} flows, "
            f"{self.horizon} slots>"
        )


Schedule = FluidSchedule | SlottedSchedule
"""Either kind of schedule."""
