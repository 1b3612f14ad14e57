"""Turns CoflowSim's per-quantum byte accounting into a verifiable fluid schedule.

CoflowSim gives every flow a rate (bit/s) at its events and, in each 8 ms quantum, moves
``min(rate / 1024, bytes left)``. The recorder writes those rates as rate-change records in
MB (MiB) per ms. The last quantum of a flow carries only what was left, so it is written at
``left / 8 ms`` and the flow completes at the quantum's end, as CoflowSim counts it.

Rates are written rounded down to a fine grid (see :func:`_on_grid`). The verifier counts a
flow as complete once it is within its byte tolerance of its size and has stopped sending
(rates above its rate tolerance, ``tol`` times the port capacity, count as sending). Two
details make it read the completion quantum CoflowSim reports:

- each last quantum carries what the flow's earlier records leave of its size, and at least
  :data:`MIN_LAST_BYTES` (or what the flow's rate allows in it, if less): the bytes it lacks
  are taken from the flow's latest earlier quanta, going back over as many rate segments as
  needed. Only the flow's own rates go down, so ports stay within capacity;
- a flow whose rate in its last quantum is itself tiny (deadline mode sizes rates by bytes
  left, and flows can crawl at a few millionths of a byte per quantum) would not read as
  sending, so the tolerance to verify with, :attr:`Recorder.tol`, is lowered until every last
  quantum's rate is at least twice the rate tolerance, but not below :data:`MIN_TOL`. The
  few flows still slower than that (a ten-millionth of a byte per quantum, and less) are
  listed in :attr:`Recorder.crawling`.

CoflowSim ends a flow when its reducer's running byte count runs out, which can drift from
the flow's own count by a few thousandths of a byte; such a flow's last quantum carries only
what its rate allows, and the verifier's byte tolerance covers the rest.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from coflowlab.constants import TOL
from coflowlab.schedules import FluidSchedule

__all__ = ["BYTES_PER_MB", "MIN_LAST_BYTES", "MIN_TOL", "Recorder"]

BYTES_PER_MB = 1048576.0
"""The CoflowSim view measures sizes in MiB, written MB."""

MIN_LAST_BYTES = 8192.0
"""Smallest last quantum written (1/128 MiB, some ten times the verifier's byte tolerance on
the public trace), taken from earlier quanta when needed."""

RECENT = 3
"""How many of each flow's latest rate records the recorder remembers for :meth:`schedule`."""

MIN_TOL = 1e-12
"""The smallest verification tolerance :meth:`Recorder.schedule` asks for: below it, the
rounding of rates to the grid could add up to more than the byte tolerance."""

_QMS = 8.0
_CAP_MB_PER_MS = 0.125


_GRID = 2.0**44


def _on_grid(rate: np.ndarray) -> np.ndarray:
    """Rates rounded down to multiples of ``2**-44`` MB/ms (a relative ``4e-13`` of a port).

    Sums of such rates are exact in doubles, so the verifier's running port loads carry no
    rounding error, and a port CoflowSim fills to the last bit is not read as overfull.
    """
    return np.floor(rate * _GRID) / _GRID


class Recorder:
    """Collects rate records of ``num_flows`` flows, given in bytes per quantum.

    Parameters
    ----------
    sizes_bytes
        Each flow's size in bytes.
    src, dst, num_ports
        The flows' ports; with them, :meth:`set_rates` keeps every port within capacity.

    Examples
    --------
    One 3 MiB flow at full rate for two quanta, then half rate until its last byte:

    >>> rec = Recorder(np.array([3 * BYTES_PER_MB]))
    >>> rec.set_rates(0, np.array([0]), np.array([BYTES_PER_MB]))
    >>> rec.set_rates(2, np.array([0]), np.array([BYTES_PER_MB / 2]))
    >>> rec.finish(np.array([0]), np.array([3]))
    >>> sched = rec.schedule(1)
    >>> from coflowlab import verify
    >>> from coflowlab.heuristics.coflowsim import coflowsim_instance
    >>> from coflowlab.instances import parse_benchmark
    >>> inst = coflowsim_instance(parse_benchmark("2 1\\n1 0 1 0 1 1:3\\n"))
    >>> verify(inst, sched, tol=rec.tol).coflow_completion.tolist()
    [32.0]
    """

    def __init__(
        self,
        sizes_bytes: npt.NDArray[np.float64],
        src: npt.NDArray[np.int64] | None = None,
        dst: npt.NDArray[np.int64] | None = None,
        num_ports: int = 0,
    ) -> None:
        n = len(sizes_bytes)
        self.size = sizes_bytes
        self.src = src
        self.dst = dst
        self.num_ports = num_ports
        self.rate = np.zeros(n)  # bytes per quantum, as last set
        self.tol = TOL
        """The tolerance :meth:`schedule` made its schedule for (verify with it)."""
        self.crawling = np.zeros(0, dtype=np.int64)
        """Flows whose last quantum moves too little for the verifier to read at
        :attr:`tol` (set by :meth:`schedule`): it may complete them quanta earlier."""
        self._written = np.zeros(n)  # MB per ms, as last written
        self._since = np.zeros(n)  # ms, when it was written
        self._sent = np.zeros(n)  # MB the records wrote before that
        self._recent = np.full((n, RECENT), -1, dtype=np.int64)  # latest records, newest first
        self._last_q: list[np.ndarray] = []
        self._last_f: list[np.ndarray] = []
        self._last_cap: list[np.ndarray] = []
        self._last_left: list[np.ndarray] = []
        self._t: list[np.ndarray] = []
        self._f: list[np.ndarray] = []
        self._r: list[np.ndarray] = []
        self._adopted: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None
        self.num_records = 0

    def _emit(self, q: npt.ArrayLike, flows: np.ndarray, per_quantum: npt.ArrayLike) -> None:
        """Writes records: from quantum ``q`` on, ``flows`` send ``per_quantum`` bytes per
        quantum."""
        flows = np.asarray(flows, dtype=np.int64)
        if not flows.size:
            return
        t = np.array(np.broadcast_to(np.asarray(q, dtype=np.float64) * _QMS, flows.shape))
        r = _on_grid(
            np.broadcast_to(np.asarray(per_quantum, dtype=np.float64), flows.shape)
            / (_QMS * BYTES_PER_MB)
        )
        self._t.append(t)
        self._f.append(flows.copy())
        self._r.append(r)
        self.num_records += flows.size

    def set_rates(self, q: int, flows: np.ndarray, per_quantum: np.ndarray) -> None:
        """From quantum ``q`` on, ``flows`` send ``per_quantum`` bytes per quantum (flows whose
        rate is unchanged are skipped). With ports given to the constructor, ``flows`` must
        list every flow that has a rate, and rates that overfill a port are scaled down
        (:meth:`_within_capacity`)."""
        if self.src is not None and flows.size:
            per_quantum = self._within_capacity(flows, per_quantum)
        changed = per_quantum != self.rate[flows]
        flows, per_quantum = flows[changed], per_quantum[changed]
        if not flows.size:
            return
        self.rate[flows] = per_quantum
        t = q * _QMS
        self._sent[flows] += self._written[flows] * (t - self._since[flows])
        self._since[flows] = t
        self._recent[flows, 1:] = self._recent[flows, :-1]
        self._recent[flows, 0] = np.arange(self.num_records, self.num_records + flows.size)
        self._emit(q, flows, per_quantum)
        self._written[flows] = self._r[-1]

    def _within_capacity(self, flows: np.ndarray, per_quantum: np.ndarray) -> np.ndarray:
        """CoflowSim can overfill a port by a few parts per billion (it sizes rates from a
        reducer's running byte count, which drifts from the sum over its flows). The rates of
        the flows of such a port, scaled down to exactly its capacity; the bytes they miss
        are made up in their last quantum (see :meth:`schedule`)."""
        assert self.src is not None and self.dst is not None
        m = self.num_ports
        src, dst = self.src[flows], self.dst[flows]
        load_s = np.bincount(src, weights=per_quantum, minlength=m)
        load_r = np.bincount(dst, weights=per_quantum, minlength=m)
        cap = BYTES_PER_MB  # 1 MiB per quantum
        over_s, over_r = load_s > cap, load_r > cap
        if not (over_s.any() or over_r.any()):
            return per_quantum
        fs = np.divide(cap, load_s[src], out=np.ones(len(src)), where=over_s[src])
        fr = np.divide(cap, load_r[dst], out=np.ones(len(dst)), where=over_r[dst])
        factor = np.minimum(fs, fr)
        return np.where(factor < 1.0, per_quantum * factor * (1.0 - 1e-12), per_quantum)

    def finish(self, flows: np.ndarray, last_q: npt.ArrayLike) -> None:
        """``flows`` send their last bytes in quantum ``last_q``, at their current rate."""
        if not flows.size:
            return
        start = np.asarray(last_q, dtype=np.float64) * _QMS
        sent = self._sent[flows] + self._written[flows] * (start - self._since[flows])
        left = (self.size[flows] / BYTES_PER_MB - sent) * BYTES_PER_MB
        self._add_last(last_q, flows, self.rate[flows], left)
        self.rate[flows] = 0.0
        self._written[flows] = 0.0

    def add_raw(self, q: npt.ArrayLike, flows: npt.ArrayLike, per_quantum: npt.ArrayLike) -> None:
        """Adds records as they are: from quantum ``q[i]`` on, flow ``flows[i]`` sends
        ``per_quantum[i]`` bytes per quantum. For engines that keep their own segments (and
        give each flow's last quantum to :meth:`add_last`)."""
        self._emit(np.asarray(q, dtype=np.int64), np.asarray(flows, dtype=np.int64), per_quantum)

    def add_last(
        self,
        last_q: npt.ArrayLike,
        flows: npt.ArrayLike,
        nbytes: npt.ArrayLike,
        most: npt.ArrayLike | None = None,
    ) -> None:
        """``flows`` send their last ``nbytes`` bytes in quantum ``last_q``, where their rate
        allows ``most`` bytes (default ``nbytes``); for flows whose earlier records came from
        :meth:`add_raw`."""
        b = np.asarray(nbytes, dtype=np.float64)
        self._add_last(last_q, flows, b if most is None else np.asarray(most, float), b)

    def adopt(
        self,
        time: npt.NDArray[np.float64],
        flows: npt.NDArray[np.int64],
        rate: npt.NDArray[np.float64],
        last_at: npt.NDArray[np.int64],
        last_q: npt.NDArray[np.int64],
        last_flows: npt.NDArray[np.int64],
        nbytes: npt.NDArray[np.float64],
        most: npt.NDArray[np.float64],
    ) -> None:
        """Takes over a whole schedule's records, written by an engine in the form and order
        :meth:`schedule` gives them (times in ms, rates in MB per ms on the grid of
        :func:`_on_grid`, sorted by time as the stable sort of :meth:`schedule` sorts the
        records of :meth:`add_raw` and :meth:`add_last`), instead of copying and sorting
        them. Flow ``last_flows[i]`` sends its last ``nbytes[i]`` bytes in quantum
        ``last_q[i]``, where its rate allows ``most[i]`` (as for :meth:`add_last`); its record
        there is ``last_at[i]``, whose rate :meth:`schedule` writes. The schedule holds the
        arrays' memory (through read-only views) after changing rates in place; no other
        records may be added. :attr:`num_records` counts every record, the last-quantum ones
        included.
        """
        if self._t or self._last_f or self._adopted is not None:
            raise ValueError("Recorder.adopt: the recorder already holds records")
        self._adopted = (time, flows, rate, np.asarray(last_at, dtype=np.int64))
        self.num_records = len(flows)
        b = np.asarray(nbytes, dtype=np.float64)
        self._add_last(last_q, last_flows, np.asarray(most, dtype=np.float64), b, emit=False)

    def _add_last(
        self,
        last_q: npt.ArrayLike,
        flows: npt.ArrayLike,
        most: np.ndarray,
        left: np.ndarray,
        *,
        emit: bool = True,
    ) -> None:
        if self._adopted is not None and emit:
            raise ValueError("Recorder: no records can be added to adopted ones")
        f = np.asarray(flows, dtype=np.int64)
        lq = np.broadcast_to(np.asarray(last_q, dtype=np.int64), f.shape).copy()
        self._last_q.append(lq)
        self._last_f.append(f.copy())
        self._last_cap.append(np.broadcast_to(most, f.shape).astype(np.float64))
        self._last_left.append(np.broadcast_to(left, f.shape).astype(np.float64))
        if emit:
            self._emit(lq + 1, f, 0.0)

    def schedule(self, num_flows: int, *, tol: float = TOL) -> FluidSchedule:
        """The fluid schedule of every record (sorted by time; later records win ties).

        Each finished flow's last quantum carries what its earlier records left of its size,
        made at least :data:`MIN_LAST_BYTES` (or the most it may carry) by
        :meth:`_shift_tails`. :attr:`tol` becomes ``tol``, or less if a last quantum's rate
        is below twice the verifier's rate tolerance at ``tol`` (see the module docstring).
        """
        self.tol = tol
        adopted = self._adopted
        if self._last_f:
            lq = np.concatenate(self._last_q)
            lf = np.concatenate(self._last_f)
            cap = np.concatenate(self._last_cap) / BYTES_PER_MB
            left = np.concatenate(self._last_left) / BYTES_PER_MB
            self._last_q, self._last_f, self._last_cap, self._last_left = [], [], [], []
            need = np.minimum(cap, MIN_LAST_BYTES / BYTES_PER_MB) - left
            short = np.flatnonzero(need > 0)
            if short.size:
                if adopted is None:
                    t = np.concatenate(self._t)
                    f = np.concatenate(self._f)
                    r = np.concatenate(self._r)
                    self._t, self._f, self._r = [t], [f], [r]
                else:  # a flow's own records keep their order, so the shifts are the same
                    t, f, r, _ = adopted
                freed = _shift_recent(lq[short] * _QMS, self._recent[lf[short]], need[short], t, r)
                left[short] += freed
                more = freed < need[short] * (1.0 - 1e-9)
                if more.any():  # more than the remembered records hold: look at all of them
                    rest = short[more]
                    left[rest] += _shift_tails(
                        lq[rest], lf[rest], need[rest] - freed[more], t, f, r
                    )
            rate = _on_grid(np.clip(left, 0.0, cap) / _QMS)
            # the verifier reads a flow as sending while its rate exceeds tol * capacity
            slowest = float(np.min(rate[rate > 0.0], initial=np.inf)) / _CAP_MB_PER_MS
            self.tol = max(min(tol, slowest / 2.0), MIN_TOL)
            self.crawling = np.unique(lf[rate < 2.0 * self.tol * _CAP_MB_PER_MS])
            if adopted is None:
                self._t.append(lq.astype(np.float64) * _QMS)
                self._f.append(lf)
                self._r.append(rate)
            else:
                adopted[2][adopted[3]] = rate
        if adopted is not None:
            return FluidSchedule._adopt(num_flows, adopted[0], adopted[1], adopted[2])
        if not self._t:
            return FluidSchedule(num_flows, [], np.zeros(0, dtype=np.int64), [])
        return FluidSchedule(
            num_flows, np.concatenate(self._t), np.concatenate(self._f), np.concatenate(self._r)
        )


def _shift_recent(
    end: np.ndarray, recent: np.ndarray, need: np.ndarray, t_all: np.ndarray, r_all: np.ndarray
) -> np.ndarray:
    """:func:`_shift_tails` over the remembered records only: ``recent[i]`` holds the
    positions of flow ``i``'s latest records, newest first (-1: none), the newest starting
    before ``end[i]``. Returns the MB freed per flow."""
    freed = np.zeros(len(end))
    seg_end = end.copy()
    for k in range(recent.shape[1]):
        pos = recent[:, k]
        ok = np.flatnonzero((pos >= 0) & (freed < need * (1.0 - 1e-9)))
        if not ok.size:
            break
        p = pos[ok]
        length = seg_end[ok] - t_all[p]
        seg_end[ok] = t_all[p]
        nbytes = r_all[p] * length
        take = np.minimum(need[ok] - freed[ok], nbytes)
        hit = take > 0
        new = _on_grid(np.maximum(r_all[p[hit]] - take[hit] / length[hit], 0.0))
        freed[ok[hit]] += (r_all[p[hit]] - new) * length[hit]
        r_all[p[hit]] = new
    return freed


def _shift_tails(
    last_q: np.ndarray,
    flows: np.ndarray,
    need: np.ndarray,
    t_all: np.ndarray,
    f_all: np.ndarray,
    r_all: np.ndarray,
    *,
    compiled: bool = True,
) -> np.ndarray:
    """Lowers (in place) the rates ``r_all`` of the latest segments of each of ``flows``
    before its last quantum (records ``(t_all, f_all, r_all)``) until ``need`` MB are freed,
    or the flow has none left; returns the MB freed per flow.

    A flow's later segments give up their bytes first. Records in time order per flow (every
    engine writes them so) go through the compiled pass :func:`.kernels.shift_tails`, which
    computes the same doubles without sorting every record; the NumPy code below is the
    definition, and is used for records out of time order."""
    nf = int(max(f_all.max(initial=-1), flows.max(initial=-1))) + 1
    end = np.full(nf, -np.inf)
    end[flows] = last_q * _QMS
    want = np.zeros(nf)
    want[flows] = need
    if compiled:
        from . import kernels

        ok, freed = kernels.shift_tails(end, want, t_all, f_all, r_all, _GRID)
        if ok:
            return np.asarray(freed[flows], dtype=np.float64)
    idx = np.flatnonzero(t_all < end[f_all])
    idx = idx[np.argsort(f_all[idx], kind="stable")]
    f, t = f_all[idx], t_all[idx]
    if np.any((t[1:] < t[:-1]) & (f[1:] == f[:-1])):  # records not written in time order
        idx = idx[np.lexsort((idx, t, f))]
        f, t = f_all[idx], t_all[idx]
    wins = np.ones(len(idx), dtype=bool)  # of records at one time, the last one counts
    wins[:-1] = (f[1:] != f[:-1]) | (t[1:] != t[:-1])
    idx, f, t = idx[wins], f[wins], t[wins]
    tail = np.ones(len(idx), dtype=bool)
    tail[:-1] = f[1:] != f[:-1]
    length = np.where(tail, end[f], np.roll(t, -1)) - t
    nbytes = r_all[idx] * length
    # bytes of the same flow's later segments, then what each segment gives up
    suffix = np.concatenate([np.cumsum(nbytes[::-1])[::-1], [0.0]])
    flow_end = np.flatnonzero(tail) + 1
    after = suffix[np.repeat(flow_end, np.diff(np.concatenate([[0], flow_end])))]
    take = np.clip(want[f] - (suffix[:-1] - nbytes - after), 0.0, nbytes)
    hit = np.flatnonzero(take > 0)
    freed = np.zeros(nf)
    if hit.size:
        new = _on_grid(np.maximum(r_all[idx[hit]] - take[hit] / length[hit], 0.0))
        freed = np.bincount(
            f[hit], weights=(r_all[idx[hit]] - new) * length[hit], minlength=nf
        ).astype(np.float64)
        r_all[idx[hit]] = new
    return freed[flows]
