"""Philae: non-clairvoyant coflow scheduling that learns sizes by sampling pilot flows.

Jajoo, Hu, Lin, "Your Coflow has Many Flows: Sampling them for Fun and Speed", USENIX ATC 2019
(Philae). A coflow's size is unknown when it arrives; Philae schedules a few *pilot* flows
first, estimates the size as the mean pilot size times the number of flows, and places the
coflow in Aalo-style priority queues by a contention-aware metric. Our reading of what the
paper leaves open (its Table 2 of policies is missing): docs/philae-coda.md#philae.

- :class:`Philae` (``philae``): pilot sampling, policies A–D, thin-coflow bypass; sizes are
  learned only when the simulator reveals them (a pilot's size when it completes).
- :class:`PhilaeOracle` (``philae-oracle``): the same scheduler handed the true sizes (no
  pilots), the paper's upper reference (Aalo-Oracle-like placement, §8).
- The rules as functions: :func:`pilot_count`, :func:`choose_pilots`, :func:`estimate_size`,
  :func:`contention`, :func:`queue_metric`.

Rates at every event, in three tiers:

1. pilot flows and the flows of thin coflows (width ``<= thin_limit``), strict priority over
   everything else, FIFO by coflow arrival, each at full rate on its two ports (greedy);
2. coflows whose size is estimated: queues by their metric (``Q_0^hi = first_threshold``,
   ``×factor``; weights falling ``×weight_factor`` per queue, or strict), FIFO inside a queue,
   max-min fair inside a coflow (:func:`~coflowlab.heuristics.aalo.dclas_allocation` on what
   tier 1 left);
3. (``work_conserving``) the held flows of coflows still sampling, on ports that would otherwise
   idle, FIFO by coflow arrival (greedy).

Examples
--------
Our P-5 case: a two-flow coflow is thin, so both flows start at once (CCT 1); without the
bypass and without work conservation the non-pilot flow waits for the pilot (CCT 2):

>>> from coflowlab import simulate
>>> from coflowlab.instances.examples import philae_thin_bypass
>>> inst = philae_thin_bypass()
>>> simulate(inst, Philae()).cct.tolist()
[1.0]
>>> simulate(inst, Philae(thin_limit=0, work_conserving=False)).cct.tolist()
[2.0]
"""

from __future__ import annotations

import math
from functools import cache
from typing import Any, ClassVar, Literal

import numpy as np
import numpy.typing as npt
from scipy.sparse import csr_matrix

from coflowlab.allocation import backfill
from coflowlab.policy import ClairvoyantState, Decision, InstanceView, ObservedState

from .aalo import MAX_ROUNDS, _queue_bounds, _queue_of, dclas_allocation

__all__ = [
    "Philae",
    "PhilaeOracle",
    "choose_pilots",
    "contention",
    "estimate_size",
    "pilot_count",
    "queue_metric",
]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
PolicyName = Literal["A", "B", "C", "D"]
Rounding = Literal["floor", "round", "ceil"]

_SAMPLING, _ESTIMATED, _THIN = 1, 2, 3  # the same codes as in ._philae_jit


@cache
def _kernels() -> dict[str, Any]:
    """Compiles the numba kernels of the compiled path on first use (cached on disk)."""
    from . import _philae_jit as k

    return {
        "relist": k.relist,
        "presence": k.presence,
        "contention": k.contention_of,
        "tiers": k.tiers,
    }


def pilot_count(senders: int, fraction: float = 0.05, rounding: Rounding = "floor") -> int:
    """Number of pilot flows of a wide coflow: ``max(1, fraction · senders)`` rounded as given
    (Philae §8 defaults: 5% of the senders; the rounding is not stated, our P-3 table).

    Examples
    --------
    >>> [pilot_count(s) for s in (1, 19, 21, 40, 150)]
    [1, 1, 1, 2, 7]
    >>> pilot_count(150, rounding="ceil")
    8
    """
    if isinstance(senders, bool) or not isinstance(senders, int | np.integer) or senders < 1:
        raise ValueError(f"senders must be an integer >= 1, got {senders!r}")
    if not (0 < fraction <= 1):
        raise ValueError(f"pilot_fraction must be in (0, 1], got {fraction!r}")
    x = fraction * int(senders)
    if rounding == "floor":
        k = math.floor(x + 1e-12)
    elif rounding == "round":
        k = math.floor(x + 0.5)
    elif rounding == "ceil":
        k = math.ceil(x - 1e-12)
    else:
        raise ValueError(f"rounding must be 'floor', 'round' or 'ceil', got {rounding!r}")
    return int(min(max(1, k), senders))


def choose_pilots(
    src: npt.ArrayLike,
    dst: npt.ArrayLike,
    k: int,
    busy_in: npt.ArrayLike,
    busy_out: npt.ArrayLike,
) -> IntArray:
    """Philae's least-busy-first pilot selection (§4.3): ``k`` pilots on distinct senders.

    Repeatedly takes the unused sender with the fewest pilots of other coflows (``busy_in``),
    tries its receivers from the least busy (``busy_out``) and picks the first existing flow;
    then counts the pilot at both ports. Ties go to the lower port index, then the lower flow.

    Parameters
    ----------
    src, dst
        Ingress and egress port of each flow of the coflow.
    k
        Number of pilots (at most the number of senders).
    busy_in, busy_out
        Pilot flows of other coflows at each ingress and egress port (not modified).

    Returns
    -------
    numpy.ndarray
        Indices (into ``src``) of the pilot flows, in the order chosen.

    Examples
    --------
    Our P-4 case (0-indexed): senders 0-2, receivers 0-2, no flow 1 → 1:

    >>> src = [0, 0, 0, 1, 1, 2, 2, 2]
    >>> dst = [0, 1, 2, 0, 2, 0, 1, 2]
    >>> choose_pilots(src, dst, 2, [2, 0, 1], [1, 0, 3]).tolist()
    [3, 6]
    """
    s = np.asarray(src, dtype=np.int64)
    d = np.asarray(dst, dtype=np.int64)
    bi = np.array(busy_in, dtype=np.int64)
    bo = np.array(busy_out, dtype=np.int64)
    chosen: list[int] = []
    used: set[int] = set()
    for _ in range(int(k)):
        senders = sorted({int(x) for x in s} - used, key=lambda p: (bi[p], p))
        if not senders:
            break
        sender = senders[0]
        mine = np.flatnonzero(s == sender)
        # receivers ascending by busy count: the first one this sender has a flow to
        best = mine[np.lexsort((mine, d[mine], bo[d[mine]]))[0]]
        chosen.append(int(best))
        used.add(sender)
        bi[sender] += 1
        bo[d[best]] += 1
    return np.asarray(chosen, dtype=np.int64)


def estimate_size(pilot_sizes: npt.ArrayLike, num_flows: int) -> float:
    """Philae's size estimate (§4.2): the mean pilot size times the number of flows.

    Examples
    --------
    Our P-1 case: 8 flows, one pilot of 20 MB:

    >>> estimate_size([20.0], 8)
    160.0
    """
    p = np.asarray(pilot_sizes, dtype=float)
    if not len(p):
        raise ValueError("pilot_sizes: need at least one pilot")
    return float(p.mean() * num_flows)


def contention(
    coflow: npt.ArrayLike, src: npt.ArrayLike, dst: npt.ArrayLike, num_ports: int
) -> tuple[IntArray, FloatArray]:
    """Contention among coflows (Philae §4.5): for each coflow, the number of *other* coflows
    that share a port with it (over the flows given, i.e. the unfinished ones), and for each
    of its flows the per-port counts ``c_p`` of other coflows at its ingress and egress.

    Parameters
    ----------
    coflow, src, dst
        Coflow (``0..n-1``), ingress and egress port of each unfinished flow.
    num_ports
        Ports per side.

    Returns
    -------
    c, port_sum
        ``c[k]``: other coflows sharing a port with coflow ``k`` (0 for coflows with no
        flow); ``port_sum[k]``: ``Σ c_p`` over the distinct ports coflow ``k`` uses.

    Examples
    --------
    Our P-10 case: A = {0 → 0}, B = {0 → 1, 2 → 1}, C = {1 → 1}:

    >>> c, ps = contention([0, 1, 1, 2], [0, 0, 2, 1], [0, 1, 1, 1], 3)
    >>> c.tolist(), ps.tolist()
    ([1, 2, 1], [1.0, 2.0, 1.0])
    """
    k = np.asarray(coflow, dtype=np.int64)
    s = np.asarray(src, dtype=np.int64)
    d = np.asarray(dst, dtype=np.int64) + int(num_ports)
    n = int(k.max()) + 1 if len(k) else 0
    ports = np.concatenate([s, d])
    owners = np.concatenate([k, k])
    inc = csr_matrix(
        (np.ones(len(ports)), (owners, ports)), shape=(n, 2 * int(num_ports))
    )  # duplicates summed
    inc.data[:] = 1.0
    share = (inc @ inc.T).tocsr()
    share.data[:] = 1.0
    c = np.asarray(share.sum(axis=1)).ravel() - (np.asarray(inc.sum(axis=1)).ravel() > 0)
    per_port = np.asarray(inc.sum(axis=0)).ravel()  # coflows at each port
    port_sum = inc @ (per_port - 1.0)
    return c.astype(np.int64), np.asarray(port_sum, dtype=float)


def queue_metric(
    policy: PolicyName,
    size: FloatArray,
    sent: FloatArray,
    c: IntArray,
    port_sum: FloatArray,
    mean_flow: FloatArray,
) -> FloatArray:
    """The metric each Philae policy places a coflow by (our reading of §4.5, Table 2 missing):

    - ``"A"`` smallest job first: the estimated size ``Ŝ = l̂ · n``;
    - ``"B"`` shortest remaining first: ``max(Ŝ − d, 0)`` with ``d`` the bytes sent;
    - ``"C"`` least contention first: ``c``, the number of other coflows sharing a port;
    - ``"D"`` (default) least length-weighted port contention: ``Σ_p l̂ · c_p`` over the
      coflow's ports with unfinished flows.

    Examples
    --------
    Our P-10 case with ``l̂`` = (1, 2, 10) under D:

    >>> queue_metric("D", np.zeros(3), np.zeros(3), np.array([1, 2, 1]),
    ...              np.array([1.0, 2.0, 1.0]), np.array([1.0, 2.0, 10.0])).tolist()
    [1.0, 4.0, 10.0]
    """
    if policy == "A":
        return np.asarray(size, dtype=float)
    if policy == "B":
        return np.maximum(size - sent, 0.0)
    if policy == "C":
        return np.asarray(c, dtype=float)
    if policy == "D":
        return mean_flow * port_sum
    raise ValueError(f"policy must be 'A', 'B', 'C' or 'D', got {policy!r}")


class Philae:
    """Philae (``philae``): pilot-flow sampling and contention-aware queues (Jajoo et al.,
    USENIX ATC 2019). Non-clairvoyant.

    Parameters
    ----------
    policy
        Queue metric, ``"A"``–``"D"`` (:func:`queue_metric`; default ``"D"``, the paper's).
    thin_limit
        Coflows of at most this many flows skip sampling and run at pilot priority (T = 7).
    pilot_fraction, rounding
        Pilots per wide coflow: ``max(1, pilot_fraction · senders)`` (:func:`pilot_count`).
    pilot_selection
        ``"least-busy"`` (the paper's, :func:`choose_pilots`) or ``"random"`` (uniform over the
        coflow's flows, seeded; for the unbiasedness check).
    seed
        Seed of the random pilot selection.
    work_conserving
        Let held flows of sampling coflows use ports that would otherwise idle (§4.8).
    num_queues, first_threshold, factor
        Queues (K = 10, ``Q_0^hi`` = 10 MB, E = 10; §8). Policy C compares a count of
        coflows, so its thresholds start at 1 coflow (our choice).
    weight_factor
        Queue ``q`` has weight ``weight_factor^-q`` (×10 per level, §8).
    strict
        Strict priority across queues instead of weighted sharing.
    compiled
        Decide with the compiled kernels on state kept between events (default); ``False``
        runs the reference path, which recomputes everything from the state at every event.
        Both give the same rates (the same floating-point operations in the same order, see
        :mod:`._philae_jit`) except for the pilot sizes, which the compiled path integrates
        from its own rates instead of reading the bytes sent at every event (equal to
        rounding). Instances whose flows are not grouped by coflow use the reference path.

    Attributes
    ----------
    estimate
        After a simulation: each coflow's estimated size (``nan`` for thin coflows).
    pilots
        Each flow: whether it was a pilot.

    Examples
    --------
    See the module docstring.
    """

    name: ClassVar[str] = "philae"
    clairvoyant: ClassVar[bool] = False

    def __init__(
        self,
        *,
        policy: PolicyName = "D",
        thin_limit: int = 7,
        pilot_fraction: float = 0.05,
        rounding: Rounding = "floor",
        pilot_selection: Literal["least-busy", "random"] = "least-busy",
        seed: int = 0,
        work_conserving: bool = True,
        num_queues: int = 10,
        first_threshold: float = 10.0,
        factor: float = 10.0,
        weight_factor: float = 10.0,
        strict: bool = False,
        compiled: bool = True,
    ) -> None:
        if policy not in ("A", "B", "C", "D"):
            raise ValueError(f"policy must be 'A', 'B', 'C' or 'D', got {policy!r}")
        if isinstance(thin_limit, bool) or not isinstance(thin_limit, int) or thin_limit < 0:
            raise ValueError(f"thin_limit must be an integer >= 0, got {thin_limit!r}")
        if pilot_selection not in ("least-busy", "random"):
            raise ValueError(
                f"pilot_selection must be 'least-busy' or 'random', got {pilot_selection!r}"
            )
        if isinstance(num_queues, bool) or not isinstance(num_queues, int) or num_queues < 1:
            raise ValueError(f"num_queues must be an integer >= 1, got {num_queues!r}")
        if not (math.isfinite(weight_factor) and weight_factor >= 1):
            raise ValueError(f"weight_factor must be finite and >= 1, got {weight_factor!r}")
        pilot_count(1, pilot_fraction, rounding)  # validates both
        self.policy: PolicyName = policy
        self.thin_limit = thin_limit
        self.pilot_fraction = float(pilot_fraction)
        self.rounding: Rounding = rounding
        self.pilot_selection = pilot_selection
        self.seed = int(seed)
        self.work_conserving = bool(work_conserving)
        self.strict = bool(strict)
        self.compiled = bool(compiled)
        first = 1.0 if policy == "C" else first_threshold
        self.bounds = _queue_bounds(num_queues, first, factor, None)
        self.queue_weights = float(weight_factor) ** -np.arange(num_queues, dtype=float)
        self.estimate: FloatArray = np.zeros(0)
        self.pilots: npt.NDArray[np.bool_] = np.zeros(0, dtype=bool)

    # ------------------------------------------------------------------ set-up
    def reset(self, view: InstanceView) -> None:
        """Prepares for a new simulation of the instance ``view`` describes."""
        n, nf = view.num_coflows, view.num_flows
        self._m = view.num_ports
        self._cap_in = np.asarray(view.cap_in, dtype=float)
        self._cap_out = np.asarray(view.cap_out, dtype=float)
        self._src = np.asarray(view.flow_src, dtype=np.int64)
        self._dst = np.asarray(view.flow_dst, dtype=np.int64)
        self._coflow = np.asarray(view.flow_coflow, dtype=np.int64)
        self._width = np.bincount(self._coflow, minlength=n)
        self._status = np.zeros(n, dtype=np.int64)
        self._pilots_left = np.zeros(n, dtype=np.int64)
        self._pilot_bytes = np.zeros(n)
        self._pilot_n = np.zeros(n, dtype=np.int64)
        self.estimate = np.full(n, np.nan)
        self.pilots = np.zeros(nf, dtype=bool)
        self._done = np.zeros(nf, dtype=bool)
        self._last_sent = np.zeros(nf)
        self._last_rate = np.zeros(nf)
        self._t_last = 0.0
        self._rng = np.random.default_rng(self.seed)
        self._true_size: FloatArray | None = None
        # the compiled path needs each coflow's flows to be one index range
        self._fast = self.compiled and bool(np.all(np.diff(self._coflow) >= 0))
        if self._fast:
            self._reset_fast(view)

    def _reset_fast(self, view: InstanceView) -> None:
        """State kept between events by the compiled path: each coflow's active flows, the
        (coflow, port) presence counts of the contention metric, the live pilots per port,
        and each pilot's bytes sent as integrated from our own rates."""
        n, nf, m = view.num_coflows, view.num_flows, self._m
        self._ptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(self._width, out=self._ptr[1:])
        self._alive = np.zeros(nf, dtype=bool)
        self._live = np.zeros(nf, dtype=np.int64)
        self._nlive = np.zeros(n, dtype=np.int64)
        self._rate = np.zeros(nf)
        self._last_rate_c = np.zeros(nf)
        keys = np.concatenate(
            [self._coflow * (2 * m) + self._src, self._coflow * (2 * m) + m + self._dst]
        )
        pairs, inverse = np.unique(keys, return_inverse=True)
        self._pin = inverse[:nf].astype(np.int64)
        self._pout = inverse[nf:].astype(np.int64)
        self._pair_coflow = (pairs // (2 * m)).astype(np.int64)
        self._pair_port = (pairs % (2 * m)).astype(np.int64)
        self._pair_ptr = np.searchsorted(self._pair_coflow, np.arange(n + 1)).astype(np.int64)
        self._port_pairs = np.argsort(self._pair_port, kind="stable").astype(np.int64)
        self._port_ptr = np.searchsorted(
            self._pair_port[self._port_pairs], np.arange(2 * m + 1)
        ).astype(np.int64)
        self._pair_cnt = np.zeros(len(pairs), dtype=np.int64)
        self._port_ncof = np.zeros(2 * m, dtype=np.int64)
        self._mark = np.zeros(n, dtype=np.int64)
        self._busy_in = np.zeros(m, dtype=np.int64)
        self._busy_out = np.zeros(m, dtype=np.int64)
        self._p_sent = np.zeros(nf)
        self._p_t = np.zeros(nf)
        self._p_rate = np.zeros(nf)

    # ------------------------------------------------------------------ learning
    def _learn(self, state: ObservedState) -> None:
        """Sizes of the flows that completed (bytes sent at completion, from our own rates),
        and the estimate of each coflow whose last pilot just completed."""
        done = np.asarray(state.completed, dtype=np.int64)
        if not len(done):
            return
        size = self._last_sent[done] + self._last_rate[done] * (
            np.asarray(state.completed_at) - self._t_last
        )
        self._done[done] = True
        piloted = done[self.pilots[done]]
        if not len(piloted):
            return
        cof = self._coflow[piloted]
        np.add.at(self._pilot_bytes, cof, size[self.pilots[done]])
        np.add.at(self._pilot_n, cof, 1)
        np.subtract.at(self._pilots_left, cof, 1)
        for c in np.unique(cof[self._pilots_left[cof] == 0]):
            mean = self._pilot_bytes[c] / self._pilot_n[c]
            self.estimate[c] = estimate_size(np.array([mean]), int(self._width[c]))
            self._status[c] = _ESTIMATED

    def _admit(self, state: ObservedState, flows: IntArray, coflow: IntArray) -> None:
        """New coflows: thin ones bypass sampling, wide ones get their pilots."""
        arrived = np.asarray(state.arrived, dtype=np.int64)
        new = np.unique(self._coflow[arrived])
        new = new[self._status[new] == 0]
        if not len(new):
            return
        arrival = np.asarray(state.coflow_arrival)
        for c in new[np.lexsort((new, arrival[new]))]:
            c = int(c)
            if self._without_pilots(c):
                continue
            busy = None
            if self.pilot_selection != "random":
                live = flows[self.pilots[flows]]
                busy = (
                    np.bincount(self._src[live], minlength=self._m),
                    np.bincount(self._dst[live], minlength=self._m),
                )
            self._sample(c, flows[coflow == c], busy)

    def _without_pilots(self, c: int) -> bool:
        """Settles new coflow ``c`` if it needs no pilots (thin, or sized by the oracle)."""
        if self._width[c] <= self.thin_limit:
            self._status[c] = _THIN
            return True
        if self._true_size is not None:  # the oracle knows the size
            self.estimate[c] = self._true_size[c]
            self._status[c] = _ESTIMATED
            return True
        return False

    def _sample(self, c: int, mine: IntArray, busy: tuple[IntArray, IntArray] | None) -> IntArray:
        """Chooses coflow ``c``'s pilots among its flows ``mine`` (``busy``: live pilots per
        ingress and egress port, for the least-busy rule) and starts sampling."""
        k = pilot_count(len(np.unique(self._src[mine])), self.pilot_fraction, self.rounding)
        if busy is None:
            pick = mine[self._rng.choice(len(mine), size=min(k, len(mine)), replace=False)]
        else:
            pick = mine[choose_pilots(self._src[mine], self._dst[mine], k, *busy)]
        self.pilots[pick] = True
        self._pilots_left[c] = len(pick)
        self._status[c] = _SAMPLING
        return pick

    # ------------------------------------------------------------------ decisions
    def decide(self, state: ObservedState) -> Decision:
        """Learns from completions, admits new coflows, and allocates the three tiers."""
        if self._fast:
            return self._decide_fast(state)
        t = float(state.time)
        self._learn(state)
        flows = np.asarray(state.flows, dtype=np.int64)
        coflow = self._coflow[flows]
        self._admit(state, flows, coflow)
        src, dst = self._src[flows], self._dst[flows]
        status = self._status[coflow]
        arrival = np.asarray(state.coflow_arrival)[coflow]
        fifo = np.lexsort((flows, coflow, arrival))  # flows by coflow arrival
        rates = np.zeros(len(flows))
        # tier 1: pilots and thin coflows, strict priority, full rate, FIFO
        first = self.pilots[flows] | (status == _THIN)
        order1 = fifo[first[fifo]]
        if len(order1):
            rates = backfill(rates, order1, src, dst, self._cap_in, self._cap_out)
        # tier 2: estimated coflows in queues by their metric
        est = np.flatnonzero(status == _ESTIMATED)
        if len(est):
            rates[est] = self._queued(state, flows, coflow, est, rates)
        # tier 3: held flows of sampling coflows, on ports left idle
        if self.work_conserving:
            held = (status == _SAMPLING) & ~self.pilots[flows]
            order3 = fifo[held[fifo]]
            if len(order3):
                rates = backfill(rates, order3, src, dst, self._cap_in, self._cap_out)
        self._last_sent[flows] = np.asarray(state.sent)
        self._last_rate[flows] = rates
        self._t_last = t
        return Decision(rates)

    # ------------------------------------------------------------------ compiled path
    def _decide_fast(self, state: ObservedState) -> Decision:
        """The compiled path: the same decision as the reference path, from state kept
        between events; names only the flows whose rate changed."""
        k = _kernels()
        t = float(state.time)
        arrived = np.asarray(state.arrived, dtype=np.int64)
        completed = np.asarray(state.completed, dtype=np.int64)
        if len(completed):
            self._learn_fast(completed, np.asarray(state.completed_at, dtype=float))
            self._alive[completed] = False
            k["presence"](completed, -1, self._pin, self._pout, self._pair_port,
                          self._pair_cnt, self._port_ncof)  # fmt: skip
        if len(arrived):
            self._alive[arrived] = True
            k["presence"](arrived, 1, self._pin, self._pout, self._pair_port,
                          self._pair_cnt, self._port_ncof)  # fmt: skip
        touched = np.unique(self._coflow[np.concatenate([arrived, completed])])
        k["relist"](touched, self._ptr, self._alive, self._live, self._nlive)
        arrival = np.asarray(state.coflow_arrival)
        by_index = np.flatnonzero(self._nlive > 0)
        fifo = by_index[np.lexsort((by_index, arrival[by_index]))]
        if len(arrived):
            self._admit_fast(np.unique(self._coflow[arrived]), arrival)
        est = fifo[self._status[fifo] == _ESTIMATED]
        queue = np.zeros(len(est), dtype=np.int64)
        if len(est):
            port_sum, share = k["contention"](
                est, self._pair_ptr, self._pair_port, self._pair_cnt, self._port_ncof,
                self._port_ptr, self._port_pairs, self._pair_coflow, self._mark,
            )  # fmt: skip
            size = self.estimate[est]
            sent = np.asarray(state.coflow_sent)[est] if self.policy == "B" else size
            metric = queue_metric(
                self.policy, size, sent, share, port_sum, size / self._width[est]
            )
            queue = _queue_of(metric, self.bounds)
            if self.strict:
                rank = np.lexsort((est, arrival[est], queue))
                est, queue = est[rank], queue[rank]
        weights = np.ones(len(self.bounds)) if self.strict else self.queue_weights
        changed, new = k["tiers"](
            fifo, by_index, est, queue, self._status, self._ptr, self._live, self._nlive,
            self.pilots, self._src, self._dst, self._cap_in, self._cap_out, weights,
            self.strict, self.work_conserving, MAX_ROUNDS, self._rate, self._last_rate_c,
        )  # fmt: skip
        moved = changed[self.pilots[changed]]
        if len(moved):  # bytes sent by the pilots whose rate changes now
            self._p_sent[moved] += self._p_rate[moved] * (t - self._p_t[moved])
            self._p_t[moved] = t
            self._p_rate[moved] = self._rate[moved]
        return Decision(update=(changed, new))

    def _learn_fast(self, done: IntArray, done_at: FloatArray) -> None:
        """As :meth:`_learn`, with the pilots' bytes sent integrated from our own rates."""
        piloted = self.pilots[done]
        if not piloted.any():
            return
        flows, at = done[piloted], done_at[piloted]
        size = self._p_sent[flows] + self._p_rate[flows] * (at - self._p_t[flows])
        np.subtract.at(self._busy_in, self._src[flows], 1)
        np.subtract.at(self._busy_out, self._dst[flows], 1)
        cof = self._coflow[flows]
        np.add.at(self._pilot_bytes, cof, size)
        np.add.at(self._pilot_n, cof, 1)
        np.subtract.at(self._pilots_left, cof, 1)
        for c in np.unique(cof[self._pilots_left[cof] == 0]):
            mean = self._pilot_bytes[c] / self._pilot_n[c]
            self.estimate[c] = estimate_size(np.array([mean]), int(self._width[c]))
            self._status[c] = _ESTIMATED

    def _admit_fast(self, touched: IntArray, arrival: FloatArray) -> None:
        """As :meth:`_admit`, on the kept lists of active flows and live pilots per port."""
        new = touched[self._status[touched] == 0]
        for c in new[np.lexsort((new, arrival[new]))]:
            c = int(c)
            if self._without_pilots(c):
                continue
            mine = self._live[self._ptr[c] : self._ptr[c] + self._nlive[c]]
            busy = None if self.pilot_selection == "random" else (self._busy_in, self._busy_out)
            pick = self._sample(c, mine, busy)
            np.add.at(self._busy_in, self._src[pick], 1)
            np.add.at(self._busy_out, self._dst[pick], 1)

    # ------------------------------------------------------------------ reference path
    def _queued(
        self,
        state: ObservedState,
        flows: IntArray,
        coflow: IntArray,
        est: IntArray,
        rates: FloatArray,
    ) -> FloatArray:
        """Rates of the estimated coflows' flows ``est`` (positions in ``flows``) on the
        capacity the first tier left."""
        m = self._m
        used_in = np.bincount(self._src[flows], weights=rates, minlength=m)
        used_out = np.bincount(self._dst[flows], weights=rates, minlength=m)
        res_in = np.maximum(self._cap_in - used_in, 0.0)
        res_out = np.maximum(self._cap_out - used_out, 0.0)
        cofs, local = np.unique(coflow, return_inverse=True)
        c, port_sum = contention(local.ravel(), self._src[flows], self._dst[flows], m)
        mine = np.unique(local.ravel()[est])
        k = cofs[mine]
        size = self.estimate[k]
        metric = queue_metric(
            self.policy,
            size,
            np.asarray(state.coflow_sent)[k],
            c[mine],
            port_sum[mine],
            size / self._width[k],
        )
        queue = _queue_of(metric, self.bounds)
        arrival = np.asarray(state.coflow_arrival)[k]
        pos = np.empty(len(cofs), dtype=np.int64)
        pos[mine] = np.argsort(np.lexsort((k, arrival)))  # FIFO rank among these coflows
        qpos = np.zeros(len(cofs), dtype=np.int64)
        qpos[mine] = queue
        if self.strict:
            rank = np.lexsort((k, arrival, queue))
            pos[mine[rank]] = np.arange(len(mine))
        e_local = local.ravel()[est]
        return dclas_allocation(
            self._src[flows[est]],
            self._dst[flows[est]],
            pos[e_local],
            res_in,
            res_out,
            queue_in=qpos[e_local],
            weights=np.ones(len(self.bounds)) if self.strict else self.queue_weights,
            strict=self.strict,
        )


class PhilaeOracle(Philae):
    """Philae handed the true coflow sizes (``philae-oracle``): no pilots, every wide coflow
    is placed by its exact size from arrival (the paper's upper reference; Aalo-Oracle-like).
    Clairvoyant.

    Parameters
    ----------
    policy, thin_limit, work_conserving, num_queues, first_threshold, factor, weight_factor, strict
    compiled
        As for :class:`Philae` (``policy`` defaults to ``"A"``, pure size).

    Examples
    --------
    Our P-9(a) case without the thin bypass: C1 (5 MB, Q0) and C2 (50 MB, Q1) share the link
    10:1, so C1 finishes at 5.5:

    >>> from coflowlab import simulate
    >>> from coflowlab.instances.examples import philae_quantized_scf
    >>> simulate(philae_quantized_scf(), PhilaeOracle(thin_limit=0)).cct.tolist()
    [5.5, 55.0]
    """

    name: ClassVar[str] = "philae-oracle"
    clairvoyant: ClassVar[bool] = True

    def __init__(
        self,
        *,
        policy: PolicyName = "A",
        thin_limit: int = 7,
        work_conserving: bool = True,
        num_queues: int = 10,
        first_threshold: float = 10.0,
        factor: float = 10.0,
        weight_factor: float = 10.0,
        strict: bool = False,
        compiled: bool = True,
    ) -> None:
        super().__init__(
            policy=policy,
            thin_limit=thin_limit,
            work_conserving=work_conserving,
            num_queues=num_queues,
            first_threshold=first_threshold,
            factor=factor,
            weight_factor=weight_factor,
            strict=strict,
            compiled=compiled,
        )

    def reset(self, view: InstanceView) -> None:
        """Prepares for a new simulation; the view must carry the sizes."""
        super().reset(view)
        if view.coflow_size is None:
            raise ValueError("philae-oracle is clairvoyant: the view must carry sizes")
        self._true_size = np.asarray(view.coflow_size, dtype=float)

    def decide(self, state: ObservedState) -> Decision:
        """As :meth:`Philae.decide`, with every wide coflow's size known at arrival."""
        if not isinstance(state, ClairvoyantState):
            raise TypeError("PhilaeOracle needs a ClairvoyantState")
        return super().decide(state)
