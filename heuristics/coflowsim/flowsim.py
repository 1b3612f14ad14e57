"""CoflowSim's flow-level simulator: PFP and FAIR.

Both admit coflows at epoch starts like the coflow-level simulator, but decide per quantum and
per flow (docs/coflowsim-model.md#flow-policies):

PFP
    Each reducer port keeps its flows in ascending order of size, fixed when a flow arrives (a
    new flow is compared with the bytes *left* of the flows already there). Every quantum the
    ports are visited in index order and each sends, at full rate, its first flow whose mapper
    is not yet sending. Sizes are whole MiB and full rate is 1 MiB per quantum, so the
    arithmetic is exact; the matching changes only when a flow ends or flows arrive. The loop
    runs compiled (:func:`._pfp_jit.pfp`); :meth:`FlowEngine._run_pfp` is its Python
    reference.
FAIR
    Every flow gets ``min(C / n_dst, C / n_src)`` per quantum, where ``n`` counts the flows at
    its ports (not max-min). A flow's rate depends only on those counts, so it changes only
    when a flow at one of its two ports ends or arrives; the compiled loop
    (:func:`.kernels.fair`) jumps from one such event to the next, keeping each flow's bytes
    left exactly as CoflowSim's doubles hold them, and writes the schedule's records in
    their final form and order (some 62 million on the public trace), which the recorder
    takes over without a copy or a sort (:meth:`.Recorder.adopt`).
"""

from __future__ import annotations

import heapq
from bisect import bisect_right

import numpy as np
import numpy.typing as npt

from . import kernels
from .engine import BIG
from .recorder import _GRID, Recorder
from .rounding import QUANTUM_MS, CoflowSimView

__all__ = ["FlowEngine"]

IntArray = npt.NDArray[np.int64]

MIB = 1048576


class FlowEngine:
    """Event loop of CoflowSim's ``FlowSimulator`` (``"pfp"`` or ``"fair"``).

    Parameters
    ----------
    view
        CoflowSim's view of the instance.
    policy
        ``"pfp"`` or ``"fair"``.
    epoch_ms
        Admission epoch (10,240 ms, or CoflowSim's whole day for the offline mode).
    reference
        Run the reference implementations instead of the fast ones: for PFP the Python loop
        that :func:`._pfp_jit.pfp` was translated from, for FAIR the records passed through
        :meth:`.Recorder.add_raw` and sorted into the schedule, instead of written by the
        compiled loop in their final form and order (:meth:`.Recorder.adopt`). Both give the
        same schedule, bit for bit (``tests/heuristics/test_coflowsim_pfp.py`` and
        ``test_coflowsim_fair.py``).

    Examples
    --------
    CoflowSim's micro-trace (docs/coflowsim-model.md#micro-trace) under FAIR; finish times are ms
    from the epoch start:

    >>> from coflowlab.instances.examples import coflowsim_micro
    >>> engine = FlowEngine(CoflowSimView.from_instance(coflowsim_micro()), "fair", 10240)
    >>> engine.run()
    >>> engine.finish.tolist()
    [32.0, 40.0, 104.0]
    """

    def __init__(
        self, view: CoflowSimView, policy: str, epoch_ms: int, *, reference: bool = False
    ) -> None:
        if policy not in ("pfp", "fair"):
            raise ValueError(f"FlowEngine: unknown policy {policy!r}")
        self.view = view
        self.reference = reference
        self.policy = policy
        self.epoch_ms = epoch_ms
        self.epoch_q = epoch_ms // QUANTUM_MS
        n, nf = view.num_jobs, view.num_flows
        self.start = np.full(n, np.nan)
        self.finish = np.full(n, np.nan)
        self.admitted = np.zeros(n, dtype=bool)
        self.num_events = 0
        self.rec = Recorder(view.flow_bytes)
        self.red_left = view.red_count.astype(np.int64).tolist()
        self.red_fin = [-1] * len(view.red_bytes)
        self.job_left = view.num_reducers.astype(np.int64).tolist()
        self.job_fin = [-1] * n
        self.active = 0
        ends = np.append(view.job_first_flow[1:], nf)
        self.job_range = list(zip(view.job_first_flow.tolist(), ends.tolist(), strict=True))
        self.src = view.flow_src.tolist()
        self.dst = view.flow_dst.tolist()
        self.red = view.flow_red.tolist()
        self.job = view.flow_job.tolist()

    # ------------------------------------------------------------------ shared
    def _flow_done(self, f: int, last_q: int) -> bool:
        """Bookkeeping of a flow that sent its last byte in quantum ``last_q``; whether its
        coflow finished with it."""
        r = self.red[f]
        self.red_left[r] -= 1
        if last_q > self.red_fin[r]:
            self.red_fin[r] = last_q
        if self.red_left[r] == 0:
            j = self.job[f]
            self.job_left[j] -= 1
            if self.red_fin[r] > self.job_fin[j]:
                self.job_fin[j] = self.red_fin[r]
            if self.job_left[j] == 0:
                self.finish[j] = float((self.job_fin[j] + 1) * QUANTUM_MS)
                self.active -= 1
                return True
        return False

    def run(self) -> None:
        """Simulates until every coflow is admitted and finished."""
        if self.policy == "pfp" and not self.reference:
            self._run_pfp_compiled()
        elif self.policy == "pfp":
            self._run_pfp()
        else:
            self._run_fair()

    def _arrivals(self) -> list[tuple[int, list[int]]]:
        """``(epoch start in quanta, coflows admitted there)`` in admission order."""
        v = self.view
        out: list[tuple[int, list[int]]] = []
        for j in v.java_order.tolist():
            qt = int(v.release[j]) // QUANTUM_MS
            if out and out[-1][0] == qt:
                out[-1][1].append(j)
            else:
                out.append((qt, [j]))
        return out

    def _admit_all(self) -> tuple[IntArray, IntArray, IntArray]:
        """Admits every coflow at its epoch, for the compiled loops: the epochs in quanta, and
        the flows admitted at epoch ``i``, ``flows[ptr[i]:ptr[i + 1]]``."""
        adm_q: list[int] = []
        adm_flows: list[int] = []
        adm_ptr = [0]
        for qt, jobs in self._arrivals():
            adm_q.append(qt)
            for j in jobs:
                self.admitted[j] = True
                self.start[j] = float(qt * QUANTUM_MS)
                lo, hi = self.job_range[j]
                adm_flows.extend(range(lo, hi))
            adm_ptr.append(len(adm_flows))
        as_int = [np.asarray(a, dtype=np.int64) for a in (adm_q, adm_ptr, adm_flows)]
        return as_int[0], as_int[1], as_int[2]

    # ------------------------------------------------------------------ PFP
    def _run_pfp_compiled(self) -> None:
        """:meth:`_run_pfp` compiled (:func:`._pfp_jit.pfp`): the same records, in the same
        order."""
        from . import _pfp_jit

        v = self.view
        adm_q, adm_ptr, adm_flows = self._admit_all()
        src = v.flow_src.astype(np.int64)
        dst = v.flow_dst.astype(np.int64)
        pairs = _pfp_jit.pair_tables(src, dst, v.num_ports)
        raw_q, raw_f, raw_r, fin_q, fin_f, job_fin, job_done, events = _pfp_jit.pfp(
            adm_q,
            adm_ptr,
            adm_flows,
            src,
            dst,
            (v.flow_bytes / MIB).astype(np.int64),
            v.flow_red.astype(np.int64),
            v.flow_job.astype(np.int64),
            v.red_count.astype(np.int64),
            v.num_reducers.astype(np.int64),
            v.num_ports,
            *pairs,
            BIG,
        )
        self.num_events = int(events)
        self.finish[job_done] = (job_fin[job_done] + 1) * float(QUANTUM_MS)
        self.active = int(np.count_nonzero(self.admitted & ~job_done))
        self.rec.add_raw(raw_q, raw_f, raw_r)
        self.rec.add_last(fin_q, fin_f, np.full(len(fin_f), float(MIB)))

    def _run_pfp(self) -> None:
        """The Python loop of PFP: the reference for :meth:`_run_pfp_compiled`."""
        v = self.view
        nports = v.num_ports
        size_mib = (v.flow_bytes / MIB).astype(np.int64).tolist()
        rem = list(size_mib)  # MiB left at serve_q0 (exact: whole MiB per quantum)
        serve_q0 = [0] * v.num_flows
        alive = bytearray(v.num_flows)
        lists: list[list[int]] = [[] for _ in range(nports)]
        dead_in: list[int] = [0] * nports
        serving = [-1] * nports
        head = [0] * nports  # lists[r][:head[r]] are dead flows
        heap: list[tuple[int, int, int]] = []
        src = self.src
        raw_q: list[int] = []
        raw_f: list[int] = []
        raw_r: list[float] = []
        fin_f: list[int] = []
        fin_q: list[int] = []
        arrivals = self._arrivals()
        ai = 0
        q = 0

        def valid(end: int, r: int, f: int) -> bool:
            return serving[r] == f and alive[f] == 1 and end == serve_q0[f] + rem[f] - 1

        def left_now(f: int, at: int) -> int:
            return rem[f] - (at - serve_q0[f])

        served_by = [-1] * nports  # sender -> receiver sending from it (-1: idle)
        pos = [0] * v.num_flows  # position of a flow in its receiver's list
        by_sender: list[dict[int, list[int]]] = [{} for _ in range(nports)]
        first_idx: list[dict[int, int]] = [{} for _ in range(nports)]
        recv_with: list[set[int]] = [set() for _ in range(nports)]

        def rebuild(r: int) -> None:
            """Positions and per-sender indexes of list ``r`` (after it changed)."""
            lst = lists[r]
            groups: dict[int, list[int]] = {}
            for i, f in enumerate(lst):
                pos[f] = i
                groups.setdefault(src[f], []).append(i)
            by_sender[r] = groups
            first_idx[r] = dict.fromkeys(groups, 0)
            for s_ in groups:
                recv_with[s_].add(r)
            head[r] = 0

        def first_alive(r: int, s_: int) -> int:
            """Position of the first alive flow of sender ``s_`` in list ``r`` (or a large
            number)."""
            plist = by_sender[r].get(s_)
            if plist is None:
                return int(BIG)
            i = first_idx[r][s_]
            lst = lists[r]
            while i < len(plist) and not alive[lst[plist[i]]]:
                i += 1
            first_idx[r][s_] = i
            return int(plist[i]) if i < len(plist) else int(BIG)

        def rematch(changed: list[int], at: int) -> None:
            """Recomputes the greedy matching where it can have changed: the given receivers,
            and later ones that lose their sender or may now want a freed one."""
            todo = sorted(set(changed))
            heapq.heapify(todo)
            seen = set(todo)
            waiting: dict[int, list[int]] = {}

            def wake(y: int, after: int) -> None:
                """Sender ``y`` is free from receiver ``after`` on: revisit the first later
                receiver that prefers one of its flows to its current match."""
                for r2 in sorted(recv_with[y]):
                    if r2 <= after:
                        continue
                    cur = serving[r2]
                    limit = pos[cur] if cur >= 0 else BIG
                    if first_alive(r2, y) < limit:
                        waiting.setdefault(r2, []).append(y)
                        if r2 not in seen:
                            heapq.heappush(todo, r2)
                            seen.add(r2)
                        return

            while todo:
                r = heapq.heappop(todo)
                seen.discard(r)
                old = serving[r]
                lst = lists[r]
                h = head[r]
                end = len(lst)
                while h < end and not alive[lst[h]]:
                    h += 1
                head[r] = h
                new = -1
                while h < end:
                    f = lst[h]
                    if alive[f]:
                        owner = served_by[src[f]]
                        if owner < 0 or owner >= r:
                            new = f
                            break
                    h += 1
                for y in waiting.pop(r, ()):
                    if served_by[y] < 0 and (new < 0 or src[new] != y):
                        wake(y, r)
                if new == old:
                    continue
                if old >= 0 and alive[old]:
                    rem[old] = left_now(old, at)
                    raw_q.append(at)
                    raw_f.append(old)
                    raw_r.append(0.0)
                if new >= 0:
                    serve_q0[new] = at
                    raw_q.append(at)
                    raw_f.append(new)
                    raw_r.append(float(MIB))
                    heapq.heappush(heap, (at + rem[new] - 1, r, new))
                serving[r] = new
                s_old = src[old] if old >= 0 else -1
                s_new = src[new] if new >= 0 else -1
                if s_old == s_new:
                    continue
                if s_old >= 0 and served_by[s_old] == r:
                    served_by[s_old] = -1
                if s_new >= 0:
                    loser = served_by[s_new]
                    served_by[s_new] = r
                    if loser > r and loser not in seen:
                        heapq.heappush(todo, loser)
                        seen.add(loser)
                if s_old >= 0:
                    wake(s_old, r)

        pending: list[int] = []
        while True:
            while heap and not valid(*heap[0]):
                heapq.heappop(heap)
            next_end = heap[0][0] if heap else BIG
            next_epoch = arrivals[ai][0] if ai < len(arrivals) else BIG
            if next_end >= BIG and next_epoch >= BIG:
                break  # everything admitted has finished
            if next_end < next_epoch:
                qf = int(next_end)
                departed = False
                while heap and heap[0][0] == qf:
                    entry = heapq.heappop(heap)
                    if not valid(*entry):
                        continue
                    _, r, f = entry
                    alive[f] = 0  # serving[r] keeps it until the rematch (its sender was busy)
                    dead_in[r] += 1
                    fin_f.append(f)
                    fin_q.append(qf)
                    pending.append(r)
                    departed |= self._flow_done(f, qf)
                if departed:
                    self.num_events += 1
                q = qf + 1
                if next_epoch == q:
                    continue  # the admission at this quantum rematches
                rematch(pending, q)
                pending = []
            else:
                q = int(next_epoch)
                _, jobs = arrivals[ai]
                ai += 1
                t_ms = q * QUANTUM_MS
                inserts: dict[int, list[int]] = {}
                for j in jobs:
                    self.admitted[j] = True
                    self.start[j] = float(t_ms)
                    self.active += 1
                    lo, hi = self.job_range[j]
                    for f in range(lo, hi):
                        inserts.setdefault(self.dst[f], []).append(f)
                for r, new in inserts.items():
                    existing = [f for f in lists[r] if alive[f]]
                    dead_in[r] = 0
                    cur = [left_now(f, q) if serving[r] == f else rem[f] for f in existing]
                    peak = []
                    top = -1
                    for x in cur:
                        top = max(top, x)
                        peak.append(top)
                    gaps: dict[int, list[int]] = {}
                    for f in new:
                        gaps.setdefault(bisect_right(peak, size_mib[f]), []).append(f)
                    merged: list[int] = []
                    prev = 0
                    for g in sorted(gaps):
                        merged.extend(existing[prev:g])
                        merged.extend(sorted(gaps[g], key=lambda f: size_mib[f]))
                        prev = g
                    merged.extend(existing[prev:])
                    lists[r] = merged
                    for f in new:
                        alive[f] = 1
                    rebuild(r)
                self.num_events += 1
                rematch(sorted(set(inserts) | set(pending)), q)
                pending = []
        self.rec.add_raw(raw_q, raw_f, np.asarray(raw_r))
        self.rec.add_last(fin_q, fin_f, np.full(len(fin_f), float(MIB)))

    # ------------------------------------------------------------------ FAIR
    def _run_fair(self) -> None:
        v = self.view
        adm_q, adm_ptr, adm_flows = self._admit_all()
        final = not self.reference
        rec_t, rec_f, rec_r, last_at, last_q, last_bytes, last_d, job_fin, events = kernels.fair(
            adm_q,
            adm_ptr,
            adm_flows,
            v.flow_src,
            v.flow_dst,
            v.flow_bytes,
            v.flow_red,
            v.flow_job,
            v.red_count.astype(np.int64),
            v.num_reducers.astype(np.int64),
            v.num_ports,
            BIG,
            final,
            _GRID,
        )
        self.num_events = int(events)
        done = job_fin >= 0
        self.finish[done] = (job_fin[done] + 1) * float(QUANTUM_MS)
        ended = np.flatnonzero(last_q >= 0)
        if final:
            self.rec.adopt(
                rec_t, rec_f, rec_r, last_at[ended], last_q[ended], ended, last_bytes[ended],
                last_d[ended],
            )  # fmt: skip
        else:
            self.rec.add_raw(rec_t.astype(np.int64), rec_f, rec_r)
            self.rec.add_last(last_q[ended], ended, last_bytes[ended], last_d[ended])
