"""CoflowSim's coflow-level simulator (FIFO, SCF, NCF, LCF, SEBF, deadlines) and DARK.

The time model is CoflowSim's (docs/coflowsim-model.md#epochs): coflows are admitted at epoch
starts,
time advances in 8 ms quanta, and rates are recomputed only

- at an epoch start that admitted at least one coflow, and
- after a quantum in which a coflow finished.

Between two such events every rate is constant, so the engine jumps from event to event. It
keeps each flow's bytes left exactly as CoflowSim's Java doubles hold them
(:func:`~.drain.drain`), so a flow ends in the same quantum as in CoflowSim; a flow's end alone
triggers nothing (its bandwidth stays idle until the next event, as in CoflowSim).

Allocation (``updateRatesDynamicAlpha``): coflows in order, each flow of a coflow gets
``bytes_left * 8 / Γ`` (MADD) where ``Γ`` is the coflow's bottleneck time under the capacity
still free; a coflow that needs a full port is skipped. The skipped coflows then share what is
left (each flow ``min(free_src / n_src, free_dst / n_dst)``), and finally every coflow, in
order of ``(int)(start + deadline - now)`` (stable), lets each flow take ``min(free_src,
free_dst)``. DARK has ten FIFO queues of strict priority instead, and each coflow's flows split
the free capacity of their ports among themselves.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from . import kernels
from .drain import drain
from .kernels import MIN_VALUE, ZERO
from .recorder import Recorder
from .rounding import QUANTUM_MS, CoflowSimView

__all__ = ["BIG", "CoflowEngine", "finish_steps"]

C_BPS = 1024.0 * 1048576.0
"""Port capacity in bit/s (CoflowSim's unit of rates)."""

BIG = np.int64(1) << np.int64(61)
"""A quantum index meaning "never" (a flow without rate)."""

NUM_QUEUES = 10
QUEUE_LIMIT = 1048576.0 * 10
QUEUE_MULT = 10.0


def finish_steps(rem: np.ndarray, per_quantum: np.ndarray) -> np.ndarray:
    """Quanta until each flow finishes (1 = in the next quantum), exactly as CoflowSim counts
    them; :data:`BIG` for flows that never finish.

    A real-arithmetic estimate settles almost every flow; flows whose last quantum is within
    rounding of CoflowSim's ``1e-3`` threshold are replayed exactly (as :func:`.drain.drain`).

    Examples
    --------
    >>> finish_steps(np.array([3 * 1048576.0, 5.0]), np.array([1048576.0, 0.0])).tolist()
    [3, 2305843009213693952]
    """
    out = np.empty(rem.shape, dtype=np.int64)
    kernels.finish_steps(
        np.ascontiguousarray(rem, dtype=np.float64),
        np.ascontiguousarray(per_quantum, dtype=np.float64),
        BIG,
        out,
    )
    return out


class CoflowEngine:
    """Event loop of CoflowSim's ``CoflowSimulator`` (and ``CoflowSimulatorDark``).

    Parameters
    ----------
    view
        CoflowSim's view of the instance.
    order
        ``"fifo"``, ``"scf"``, ``"ncf"``, ``"lcf"``, ``"sebf"``, ``"deadline"``, ``"dark"``,
        or ``"yosemite"`` (YosemiteSim's order, which needs ``weight``).
    epoch_ms
        Admission epoch (10,240 ms, or CoflowSim's whole day for the offline mode).
    weight
        Per coflow, its weight: YosemiteSim keeps the coflows sorted by ``weight / alpha``
        (``alpha``: the static bottleneck bytes of SEBF), largest first; SEBF's rates and
        work conservation are unchanged (docs/yosemite.md#yosemitesim).

    Examples
    --------
    CoflowSim's micro-trace (docs/coflowsim-model.md#micro-trace) under SEBF; finish times are ms
    from the epoch start:

    >>> from coflowlab.instances.examples import coflowsim_micro
    >>> engine = CoflowEngine(CoflowSimView.from_instance(coflowsim_micro()), "sebf", 10240)
    >>> engine.run()
    >>> engine.finish.tolist(), engine.num_events
    ([8.0, 32.0, 104.0], 4)
    """

    def __init__(
        self,
        view: CoflowSimView,
        order: str,
        epoch_ms: int,
        *,
        weight: np.ndarray | None = None,
    ) -> None:
        self.view = view
        self.order = order
        # YosemiteSim's order only: weight / alpha (static), largest first
        self.yosemite_key = (
            None if weight is None else np.asarray(weight, dtype=float) / view.alpha
        )
        self.dark = order == "dark"
        self.deadline_mode = order == "deadline"
        self.epoch_q = epoch_ms // QUANTUM_MS
        self.epoch_ms = epoch_ms
        v = view
        n, nf = v.num_jobs, v.num_flows
        self.m = v.num_ports
        self.rem = v.flow_bytes.copy()
        self.bps = np.zeros(nf)
        self.d = np.zeros(nf)  # bytes per quantum = bps / 1024
        self.alive = np.ones(nf, dtype=bool)
        self.fin_q = np.full(nf, BIG, dtype=np.int64)
        self.S = v.red_bytes.copy()
        self.red_left = v.red_count.copy()  # unfinished flows per reducer
        self.job_left = np.bincount(v.flow_job, minlength=n).astype(np.int64)  # ... per coflow
        self.red_fin = np.full(len(v.red_bytes), -1, dtype=np.int64)
        self.red_done = np.zeros(len(v.red_bytes), dtype=bool)
        self.frozen = np.zeros(nf, dtype=bool)  # alive, but laid out no more (never moves)
        self.rec_closed = np.zeros(nf, dtype=bool)  # finished for the recorder already
        self.lcf_left = v.lcf_bytes.copy()
        self.sent = np.zeros(n)
        self.start = np.full(n, np.nan)
        self.finish = np.full(n, np.nan)
        self.admitted = np.zeros(n, dtype=bool)
        self.rejected = np.zeros(n, dtype=bool)
        self.active: list[int] = []  # admitted, unfinished (activeJobs)
        self.sorted: list[int] = []  # CoflowSimulator.sortedJobs
        self.queues: list[list[int]] = [[] for _ in range(NUM_QUEUES)]
        self.queue_of = np.zeros(n, dtype=np.int64)
        self.num_events = 0
        self.rec = Recorder(v.flow_bytes, v.flow_src, v.flow_dst, v.num_ports)
        self.job_red = [
            np.arange(v.job_first_red[j], v.job_first_red[j] + v.num_reducers[j]) for j in range(n)
        ]
        self.job_end = np.append(v.job_first_flow[1:], nf).astype(np.int64)
        self.job_flows = [np.arange(v.job_first_flow[j], self.job_end[j]) for j in range(n)]

    # ------------------------------------------------------------------ helpers
    def _alive_flows(self, j: int) -> np.ndarray:
        f = self.job_flows[j]
        return f[self.alive[f]]

    def _moving(self) -> np.ndarray:
        if not self.active:
            return np.zeros(0, dtype=np.int64)
        f = np.concatenate([self.job_flows[j] for j in self.active])
        return f[self.alive[f]]

    def _alpha_online(
        self, j: int, flows: np.ndarray, s_free: np.ndarray, r_free: np.ndarray
    ) -> float | None:
        """``calcAlphaOnline``: the coflow's bottleneck time (s) on the free capacity, or
        ``None`` if a port it needs is full."""
        v, m = self.view, self.m
        send = np.bincount(v.flow_src[flows], weights=self.rem[flows], minlength=m)
        recv = np.zeros(m)
        reds = self.job_red[j]
        recv[v.red_port[reds]] = self.S[reds]
        if np.any((send > 0) & (s_free <= ZERO)) or np.any((recv > 0) & (r_free <= ZERO)):
            return None
        # the maximum over every port (a reducer ended by its byte count can hold a negative
        # count, which counts where the port is overfilled)
        s_used = send > 0
        r_used = recv != 0
        best = MIN_VALUE
        if s_used.any():
            best = max(best, float(np.max(send[s_used] * 8 / s_free[s_used])))
        if r_used.any():
            with np.errstate(divide="ignore", invalid="ignore"):
                x = recv[r_used] * 8 / r_free[r_used]
            x = x[x > best]
            if x.size:
                best = float(np.max(x))
        return best

    # ------------------------------------------------------------------ MADD family
    def _segments(self, jobs: list[int]) -> tuple[np.ndarray, np.ndarray]:
        """The alive flows of ``jobs``, concatenated in that order (CoflowSim's order within
        a coflow: reducer by reducer, mapper by mapper), and each job's slice bounds."""
        v = self.view
        js = np.asarray(jobs, dtype=np.int64)
        lo = v.job_first_flow[js]
        lens = self.job_end[js] - lo
        total = int(lens.sum())
        base = np.repeat(lo - (np.cumsum(lens) - lens), lens)
        idx = base + np.arange(total, dtype=np.int64)
        keep = self.alive[idx]
        counts = np.bincount(np.repeat(np.arange(len(js)), lens)[keep], minlength=len(js))
        seg = np.zeros(len(js) + 1, dtype=np.int64)
        np.cumsum(counts, out=seg[1:])
        return seg, idx[keep]

    def _update_madd(self, now_ms: int, trial: bool) -> tuple[np.ndarray, np.ndarray]:
        """``updateRatesDynamicAlpha``; returns the free capacity it leaves (for trials)."""
        v = self.view
        s_free = np.full(self.m, C_BPS)
        r_free = np.full(self.m, C_BPS)
        jobs = self.sorted
        seg, flows = self._segments(jobs)
        tau = v.deadline[jobs] / 1000 if self.deadline_mode else np.zeros(len(jobs))
        skipped = np.zeros(len(jobs), dtype=bool)
        src, dst = v.flow_src, v.flow_dst
        js = np.asarray(jobs, dtype=np.int64)
        red_lo = v.job_first_red[js].astype(np.int64)
        kernels.madd(
            seg,
            flows,
            src,
            dst,
            v.flow_red,
            self.rem,
            self.S,
            red_lo,
            red_lo + v.num_reducers[js],
            v.red_port,
            tau,
            s_free,
            r_free,
            self.bps,
            skipped,
            trial,
        )
        if trial:
            return s_free, r_free
        # work conservation, first: the skipped coflows share what is left
        if skipped.any():
            group = np.where(skipped, 0, -1)
            kernels.share(seg, flows, src, dst, s_free, r_free, self.bps, group, 1)
        # then: every coflow, by (int)(start + deadline - now), takes what its ports have left
        keys = [_java_int(self.start[j] + v.deadline[j] - float(now_ms)) for j in jobs]
        order = np.array(sorted(range(len(jobs)), key=keys.__getitem__), dtype=np.int64)
        kernels.backfill(seg, order, flows, src, dst, s_free, r_free, self.bps)
        return s_free, r_free

    def _insert_sorted(self, j: int) -> None:
        """``addToSortedJobs``: after the last coflow whose key is not larger."""
        v = self.view
        if self.deadline_mode or self.order == "fifo":
            self.sorted.append(j)
            return
        less: Callable[[int, int], bool]
        if self.order == "scf":
            key = v.max_reducer_bytes / v.num_mappers

            def less(a: int, b: int) -> bool:
                return bool(key[a] < key[b])

        elif self.order == "ncf":
            width = np.minimum(v.num_mappers, v.num_reducers)

            def less(a: int, b: int) -> bool:
                return bool(width[a] < width[b])

        elif self.order == "lcf":
            new_left = self._lcf_key(j)

            def less(a: int, b: int) -> bool:
                return new_left < self._lcf_key(b)

        elif self.order == "yosemite":
            # YosemiteSim: weight / static alpha, descending; the new coflow goes before the
            # first one whose key is strictly smaller (ties keep admission order)
            if self.yosemite_key is None:
                raise ValueError("the yosemite order needs the coflow weights")
            ratio = self.yosemite_key

            def less(a: int, b: int) -> bool:
                return bool(ratio[a] > ratio[b])

        else:  # sebf

            def less(a: int, b: int) -> bool:
                return bool(v.alpha[a] < v.alpha[b])

        index = len(self.sorted)
        for pos, other in enumerate(self.sorted):
            if less(j, other):
                index = pos
                break
        self.sorted.insert(index, j)

    def _lcf_key(self, j: int) -> float:
        total = 0.0
        for x in self.lcf_left[self.job_red[j]].tolist():
            total += x
        return total

    # ------------------------------------------------------------------ DARK
    def _update_dark(self) -> None:
        """``CoflowSimulatorDark.updateRates``: queue by queue, coflow by coflow, each flow
        gets ``min(free_src / n_src, free_dst / n_dst)``, counting the coflow's own flows."""
        v = self.view
        jobs = [j for queue in self.queues for j in queue]
        seg, flows = self._segments(jobs)
        self.bps[flows] = 0.0
        s_free = np.full(self.m, C_BPS)
        r_free = np.full(self.m, C_BPS)
        group = np.arange(len(jobs), dtype=np.int64)
        kernels.share(
            seg, flows, v.flow_src, v.flow_dst, s_free, r_free, self.bps, group, len(jobs)
        )

    def _dark_reorder(self) -> None:
        """``updateJobOrder``: a coflow that has sent more than its queue allows moves one
        queue down, and is looked at again there (so it can fall several queues at once)."""
        for i in range(NUM_QUEUES):
            moving = []
            for j in self.queues[i]:
                size = self.sent[j]
                target = 0
                k = QUEUE_LIMIT
                while k < size:
                    target += 1
                    k *= QUEUE_MULT
                if self.queue_of[j] < target:
                    self.queue_of[j] += 1
                    moving.append(j)
            if i + 1 < NUM_QUEUES and moving:
                gone = set(moving)
                self.queues[i] = [j for j in self.queues[i] if j not in gone]
                self.queues[i + 1].extend(moving)

    # ------------------------------------------------------------------ events
    def _reallocate(self, now_ms: int, q: int, *, admission: bool) -> None:
        self.num_events += 1
        if admission:
            # the flows are laid out again, without the reducers already ended: a flow left
            # in an ended reducer keeps its place in the allocation but moves no more
            flows = self._moving()
            self.frozen[flows[self.red_done[self.view.flow_red[flows]]]] = True
        if self.dark:
            self._dark_reorder()
            self._update_dark()
        else:
            self._update_madd(now_ms, trial=False)
        self._set_rates(q)

    def _set_rates(self, q: int) -> None:
        flows = self._moving()
        self.d[flows] = np.where(self.frozen[flows], 0.0, self.bps[flows] / 1024.0)
        open_ = flows[~self.rec_closed[flows]]
        self.rec.set_rates(q, open_, self.d[open_])
        self.fin_q[flows] = q - 1 + finish_steps(self.rem[flows], self.d[flows])
        self.fin_q[flows] = np.minimum(self.fin_q[flows], BIG)

    def _admit(self, j: int, now_ms: int) -> None:
        self.admitted[j] = True
        self.start[j] = float(now_ms)
        self.active.append(j)
        if self.dark:
            self.queues[0].append(j)
            self.queue_of[j] = 0
        else:
            self._insert_sorted(j)

    def _deadline_ok(self, j: int) -> bool:
        """Deadline admission: the coflow's Γ on what the admitted coflows leave free (a
        trial allocation, which also zeroes every rate, as CoflowSim's does) must not exceed
        its deadline."""
        s_free, r_free = self._update_madd(-1, trial=True)
        self._zeroed = True
        flows = self._alive_flows(j)
        alpha = self._alpha_online(j, flows, s_free, r_free)
        return alpha is not None and not alpha > self.view.deadline[j] / 1000.0

    def _advance(self, q: int, stop: int) -> int | None:
        """Runs quanta ``q .. stop-1`` at the current rates.

        A reducer ends in the first quantum at whose end its running byte count is at most
        ``1e-3`` or its last flow has ended (docs/coflowsim-model.md#epochs). The count
        drifts from the sum over its flows, so it can run out while a flow still has a few
        bytes left. If that ends a coflow before quantum ``stop - 1``, nothing is run and
        that quantum is returned (run again up to it); otherwise returns the quantum in which
        such an early end ended a coflow, if any, else ``None``."""
        v = self.view
        flows = self._moving()
        flows = flows[self.d[flows] > 0]
        if not flows.size:
            return None
        d = self.d[flows]
        fin = np.minimum(self.fin_q[flows], stop)  # stop: still sending afterwards
        ending = fin < stop
        # the full quanta; an ending flow then moves what it has left, at most d
        rem, _ = drain(self.rem[flows], d, fin - q)
        last_add = np.where(ending, np.minimum(d, rem), 0.0)
        early: dict[int, int] = {}
        cut: int | None = None
        if self.dark:
            owners = v.flow_job[flows]
            self._exact_sums(self.sent, owners, self.job_left, 1.0, d, fin, last_add, q, stop)
        else:
            owners = v.flow_red[flows]
            left = self.S.copy()
            early = self._reducer_sums(left, owners, d, fin, last_add, q, stop)
            if early:
                cut = self._early_departure(early, flows, fin, stop)
                if cut is not None and cut < stop - 1:
                    return cut
            self.S = left
        rem = rem - last_add
        if self.order == "lcf":
            # LCF's remaining bytes (per reducer, floored at 0; summed, not bit-exact)
            moved = self.rem[flows] - rem
            per_red = np.bincount(v.flow_red[flows], weights=moved, minlength=len(self.S))
            self.lcf_left = np.maximum(self.lcf_left - per_red, 0.0)
        self.rem[flows] = rem
        for r, t in early.items():
            # ended by its byte count: the count restarts at 0 after quantum t, and the
            # flows still in it go on moving (and counting) until they end or the next
            # lay-out; the recorder closes them with the reducer
            self.red_done[r] = True
            self.red_fin[r] = t
            rows = np.flatnonzero(owners == r)
            self.S[r] = 0.0
            if t + 1 < stop:
                one = np.zeros(1, dtype=np.int64)
                kernels.owner_sums(
                    self.S,
                    np.array([r], dtype=np.int64),
                    one,
                    np.array([rows.size], dtype=np.int64),
                    -d[rows],
                    -last_add[rows],
                    fin[rows].astype(np.int64),
                    int(t + 1),
                    int(stop),
                    np.zeros(1, dtype=np.bool_),
                    one.copy(),
                )
            f = self._red_alive(r)
            f = f[~self.rec_closed[f]]
            self.rec.finish(f, np.full(f.size, t, dtype=np.int64))
            self.rec_closed[f] = True
        if ending.any():
            done = flows[ending]
            last_q = self.fin_q[done]
            self.alive[done] = False
            open_ = ~self.rec_closed[done]
            self.rec.finish(done[open_], last_q[open_])
            self.rec_closed[done] = True
            reds = v.flow_red[done]
            np.subtract.at(self.red_left, reds, 1)
            np.subtract.at(self.job_left, v.flow_job[done], 1)
            live = ~self.red_done[reds]
            np.maximum.at(self.red_fin, reds[live], last_q[live])
            emptied = np.unique(reds[live & (self.red_left[reds] == 0)])
            self.S[emptied] = 0.0  # cleanupTask
            self.red_done[emptied] = True
            self.fin_q[done] = BIG
        return cut

    def _red_alive(self, r: int) -> np.ndarray:
        v = self.view
        f = np.arange(v.red_first[r], v.red_first[r] + v.red_count[r])
        return f[self.alive[f]]

    def _reducer_sums(
        self,
        left: np.ndarray,
        owners: np.ndarray,
        d: np.ndarray,
        fin: np.ndarray,
        last_add: np.ndarray,
        q: int,
        stop: int,
    ) -> dict[int, int]:
        """Runs the reducers' byte counts ``left`` over quanta ``q .. stop-1`` (as
        :meth:`_exact_sums`, every reducer, since an ended reducer's count is still read) and
        returns the reducers whose count runs out before their last flow ends, with the
        quantum in which it does."""
        cut = np.flatnonzero(owners[1:] != owners[:-1]) + 1
        starts = np.concatenate([[0], cut]).astype(np.int64)
        ends = np.concatenate([cut, [owners.size]]).astype(np.int64)
        keys = owners[starts]
        watch = ~self.red_done[keys]
        first = np.full(keys.size, -1, dtype=np.int64)
        kernels.owner_sums(
            left,
            keys,
            starts,
            ends,
            -d,
            -last_add,
            fin.astype(np.int64),
            int(q),
            int(stop),
            watch,
            first,
        )
        early: dict[int, int] = {}
        for i in np.flatnonzero(first >= 0).tolist():
            r = int(keys[i])
            rows = slice(int(starts[i]), int(ends[i]))
            n_end = int(np.count_nonzero(fin[rows] < stop))
            if n_end == self.red_left[r] and int(first[i]) >= int(fin[rows].max()):
                continue  # it ends with its last flow anyway
            early[r] = int(first[i])
        return early

    def _early_departure(
        self, early: dict[int, int], flows: np.ndarray, fin: np.ndarray, stop: int
    ) -> int | None:
        """The first quantum in which a coflow ends, given reducers ``early`` ending by their
        byte counts, if one of them ends it; else ``None``."""
        v = self.view
        end_of = {}  # reducer -> quantum its last flow ends in, for reducers ending here
        reds = v.flow_red[flows]
        for r in np.unique(reds[fin < stop]).tolist():
            sel = reds == r
            if np.count_nonzero(fin[sel] < stop) == self.red_left[r]:
                end_of[r] = int(fin[sel].max())
        best: int | None = None
        for j in {int(v.red_job[r]) for r in early}:
            latest = -1
            for r in self.job_red[j].tolist():
                if self.red_done[r]:
                    continue
                t = early.get(r, end_of.get(r))
                if t is None:
                    latest = -2
                    break
                latest = max(latest, t)
            if latest >= 0 and (best is None or latest < best):
                best = latest
        return best

    def _exact_sums(
        self,
        sums: np.ndarray,
        owners: np.ndarray,
        alive: np.ndarray,
        sign: float,
        d: np.ndarray,
        fin: np.ndarray,
        last_add: np.ndarray,
        q: int,
        stop: int,
    ) -> None:
        """Runs CoflowSim's per-quantum running sums over quanta ``q .. stop-1``: each moving
        flow adds ``sign * d`` to ``sums[owner]`` in every quantum before ``fin``, in Java's
        order, and ``sign * last_add`` in quantum ``fin`` if ``fin < stop``. The last bits of
        these sums matter (DARK compares bytes sent with thresholds; Γ divides a reducer's
        bytes left). An owner's flows are contiguous (flows are listed coflow by coflow,
        reducer by reducer); ``alive`` counts each owner's unfinished flows."""
        # a sum whose every unfinished flow ends in these quanta is never read again (its
        # reducer or coflow ends with them): skip it
        ends_all = np.bincount(owners[fin < stop], minlength=len(sums)) == alive
        keep = ~ends_all[owners]
        if not keep.all():
            owners, d, fin, last_add = owners[keep], d[keep], fin[keep], last_add[keep]
        if not owners.size:
            return
        cut = np.flatnonzero(owners[1:] != owners[:-1]) + 1
        starts = np.concatenate([[0], cut]).astype(np.int64)
        ends = np.concatenate([cut, [owners.size]]).astype(np.int64)
        kernels.owner_sums(
            sums,
            owners[starts],
            starts,
            ends,
            sign * d,
            sign * last_add,
            fin.astype(np.int64),
            int(q),
            int(stop),
            np.zeros(starts.size, dtype=np.bool_),
            np.empty(starts.size, dtype=np.int64),
        )

    def _next_departure(self) -> int:
        best = int(BIG)
        for j in self.active:
            f = self._alive_flows(j)
            f = f[~self.red_done[self.view.flow_red[f]]]
            if not f.size:
                continue
            best = min(best, int(self.fin_q[f].max()))
        return best

    def run(self) -> None:
        """Simulates until every coflow is admitted (or rejected) and finished."""
        v = self.view
        order = v.java_order.tolist()
        n = len(order)
        nxt = 0
        epoch_ms, epoch_q = self.epoch_ms, self.epoch_q
        end_ms = 86400 * 1024
        t_ms = 0
        q = 0
        while t_ms < end_ms and (nxt < n or self.active):
            if not self.active and nxt < n:
                first = float(v.arrival[order[nxt]])
                skip = max(0, math.ceil(first / epoch_ms) - 1)
                t_ms = max(t_ms, skip * epoch_ms)
            q = t_ms // QUANTUM_MS
            added = 0
            self._zeroed = False
            while nxt < n and v.arrival[order[nxt]] <= t_ms + epoch_ms:
                j = order[nxt]
                nxt += 1
                if self.deadline_mode and not self._deadline_ok(j):
                    self.rejected[j] = True
                    continue
                self._admit(j, t_ms)
                added += 1
            if added:
                self._reallocate(t_ms, q, admission=True)
            elif self._zeroed:
                self._set_rates(q)  # the trials left every rate at zero
            end_q = q + epoch_q
            while q < end_q and self.active:
                qc = self._next_departure()
                stop = min(qc + 1, end_q)
                early = self._advance(q, stop)
                if early is not None and early < stop - 1:
                    stop = early + 1
                    early = self._advance(q, stop)
                if early is not None:
                    qc = early
                q = stop
                if qc < end_q:
                    self._depart(qc)
            t_ms += epoch_ms

    def _depart(self, qc: int) -> None:
        v = self.view
        gone = []
        for j in self.active:
            if np.all(self.red_done[self.job_red[j]]):
                gone.append(j)
        if not gone:
            raise AssertionError(f"no coflow finished in quantum {qc}")
        for j in gone:
            fin = int(self.red_fin[self.job_red[j]].max())
            if fin != qc:
                raise AssertionError(f"coflow {j} finished at quantum {fin}, expected {qc}")
            self.finish[j] = float((qc + 1) * QUANTUM_MS)
            self.S[self.job_red[j]] = 0.0
            self.active.remove(j)
            if self.dark:
                for queue in self.queues:
                    if j in queue:
                        queue.remove(j)
                        break
            else:
                self.sorted.remove(j)
        del v
        self._reallocate(qc * QUANTUM_MS, qc + 1, admission=False)


def _java_int(x: float) -> int:
    """Java's ``(int)`` cast of a double: truncation toward zero, saturating."""
    if math.isnan(x):
        return 0
    if x >= 2147483647.0:
        return 2147483647
    if x <= -2147483648.0:
        return -2147483648
    return math.trunc(x)
