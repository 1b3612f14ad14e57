"""Baraat's FIFO with limited multiplexing (``fifo-lm``), a per-flow baseline, decentralised
as Chowdhury's thesis simulates it (§6.3.1, §6.8.2; Dogar et al., Baraat, SIGCOMM 2014; our
reading: docs/aalo.md#fifo-lm).
Non-clairvoyant.

The allocation is :func:`~.aalo.dclas_allocation` with one queue: group 0 (the multiplexed
class), then each coflow's remaining flows in FIFO order, each group taking max-min fair rates
from what the groups before it left. Recomputing it over every active flow at every event is
what made the policy too slow for the Facebook trace, so the default (per-port byte counts)
keeps its state between events (:class:`_Groups`):

- per flow: active, in group 0 or not, its last rate; per (coflow, port) *pair*: bytes sent
  through the port, active flows, flows outside group 0, and whether the coflow is served
  there; per port: group 0's flows;
- per group: the residual capacity at its ports before and after it. A group whose flows did
  not change and whose ports have the same residual as at its last computation would get the
  same rates and leave the same residual, so it is skipped; so are the groups after it unless
  a change reaches their ports. An event thus pays for the groups it changed;
- the flows with a positive rate and a light pair (one that has sent less than the
  threshold), in index order: the bytes sent and the next threshold crossing are summed over
  them in the same order as the computation from scratch. Only light pairs' sums are ever
  read (a pair that is heavy stays heavy), and a flow heavy at both its pairs, most of the
  positive flows on the trace, is left out of these passes;
- per (ingress, egress) port pair: alive flows, so that whether a flow could still grow
  (both its ports above the saturation tolerance) is asked of port pairs, not flows.

Group 0 holds most active flows on the Facebook trace and changes at almost every event, so
with ``fast`` (the default) it is kept as flow counts per (ingress, egress) port pair, and its
progressive filling runs per pair (``g0_fill``): the same operations in the same order, at a
cost in ports rather than flows; only the flows of a pair whose rate changed (each pair's
flows of group 0 are kept first in its list), and those that joined the group, are compared
and emitted. The per-pair rate sums of the crossing search are then also kept between events,
redone only for light pairs whose flows changed rate or stopped.

The group step is ``allocate``'s (:mod:`.dclas_kernels`), so the rates are the same bits as
:func:`~.aalo.dclas_allocation`'s, which runs more rounds only if some flow could still grow
after the first; the policy then calls it (it never happens on the Facebook trace).
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from coflowlab.instance import Instance
from coflowlab.policy import Decision, InstanceView, ObservedState

from ._dclas_jit import G0
from .aalo import CROSS_TOL, _first_crossing, _LocalBytes, dclas_allocation
from .dclas_kernels import kernels

__all__ = ["FifoLM"]


class FifoLM:
    """Baraat's FIFO with limited multiplexing (``fifo-lm``), decentralised; non-clairvoyant.

    Coflows are served in arrival order (ties by index), but at every port a coflow that has sent
    ``threshold`` bytes or more *through that port* is **heavy**, and a heavy coflow no longer
    blocks the ones behind it: each port serves the FIFO prefix of its coflows up to and including
    the first light one, and these share the port by per-flow max-min fairness ("fair-shares among
    heavy coflows", thesis §6.8.2; "dynamically changing the level of multiplexing", the Yosemite
    paper's summary of Baraat, §II). A flow is in this multiplexed class when its coflow is served
    at both of its ports; every other flow gets, coflow by coflow in FIFO order, max-min fair rates
    from what is left (strict priority, work conserving).

    Parameters
    ----------
    threshold
        Bytes a coflow must send through a port to be heavy there, in the instance's size unit.
        The default, 1000, is about the 80th percentile of coflow size in the Facebook trace
        (1,160 MB), the thesis's best setting (§6.8.2); :meth:`calibrated` sets it from an
        instance. ``inf`` gives per-port FIFO, ``0`` per-flow fair sharing.
    local
        Count the bytes per port (decentralised, Baraat's switches; default) or per coflow over
        the whole fabric (``False``).
    fast
        With ``local``: keep the multiplexed class as flow counts per port pair and compute
        its rates per pair (default), or per flow (``False``, the reference); the rates are
        the same bits (see :class:`_Groups`).

    Notes
    -----
    Baraat is known here only through the thesis's description (§6.3.1, §6.8.2; §5.9): FIFO,
    decentralised, fair sharing among heavy coflows, threshold at a percentile of coflow size. That
    the heavy coflows and the first light one share per flow, and that everything else is FIFO with
    work conservation, is this implementation's reading. A port learns of a crossing at once
    (wake-up at the exact time).

    Examples
    --------
    One link: coflow 0 (20 units) blocks coflow 1 until it has sent 5, then they share.

    >>> from coflowlab import Coflow, Instance, simulate
    >>> inst = Instance.from_coflows([Coflow([(0, 0, 20.0)]), Coflow([(0, 0, 4.0)])], 1)
    >>> simulate(inst, FifoLM(threshold=5.0)).coflow_completion.tolist()
    [24.0, 13.0]
    """

    name: ClassVar[str] = "fifo-lm"
    clairvoyant: ClassVar[bool] = False

    def __init__(
        self, *, threshold: float = 1000.0, local: bool = True, fast: bool = True
    ) -> None:
        if math.isnan(threshold) or threshold < 0:
            raise ValueError(f"threshold must be >= 0, got {threshold!r}")
        self.threshold = float(threshold)
        self.local = bool(local)
        self.fast = bool(fast)

    @classmethod
    def calibrated(cls, instance: Instance, percentile: float = 80.0, **kwargs: Any) -> FifoLM:
        """A FIFO-LM whose threshold is a percentile of the instance's coflow sizes.

        This is how the thesis set it (offline, from the size distribution; §6.8.2); the
        policy itself stays non-clairvoyant.

        Examples
        --------
        >>> from coflowlab.instances.examples import fig_5_1
        >>> FifoLM.calibrated(fig_5_1(), 50).threshold
        5.5
        """
        return cls(threshold=float(np.percentile(instance.total_size, percentile)), **kwargs)

    def reset(self, view: InstanceView) -> None:
        """Prepares for a new simulation of the instance ``view`` describes."""
        self.cap_in = np.asarray(view.cap_in, dtype=float)
        self.cap_out = np.asarray(view.cap_out, dtype=float)
        self.m = view.num_ports
        self.n = view.num_coflows
        self._bytes = _LocalBytes(view) if self.local else None
        self._groups = _Groups(view, self.fast) if self.local else None

    def _heavy_bound(self) -> float:
        return self.threshold * (1 - CROSS_TOL)

    def decide(self, state: ObservedState) -> Decision:
        """Multiplexed heavy coflows plus the first light one per port; FIFO for the rest."""
        g = self._groups
        if g is None:
            return self._decide_flat(state)
        flows, rates, soonest = g.decide(
            state, self._heavy_bound(), self.threshold, self.cap_in, self.cap_out
        )
        return Decision(update=(flows, rates), wakeup=None if math.isinf(soonest) else soonest)

    def _decide_flat(self, state: ObservedState) -> Decision:
        """The same decision computed from scratch over the active flows (``local=False``)."""
        t = float(state.time)
        coflow = np.asarray(state.coflow)
        src = np.ascontiguousarray(state.src, dtype=np.int64)
        dst = np.ascontiguousarray(state.dst, dtype=np.int64)
        n, m = self.n, self.m
        bound = self._heavy_bound()
        local = self._bytes
        if local is not None:
            pin, pout = local.advance(t, state)
            heavy_in = local.bytes[pin] >= bound
            heavy_out = local.bytes[pout] >= bound
        else:
            sent = np.asarray(state.coflow_sent)
            heavy_in = heavy_out = sent[coflow] >= bound
        active = np.flatnonzero(np.bincount(coflow, minlength=n))
        arrival = np.asarray(state.coflow_arrival)
        order = active[np.lexsort((active, arrival[active]))]
        rank = np.empty(n, dtype=np.int64)
        rank[order] = np.arange(len(order))
        r = rank[coflow]
        served = np.ones(len(coflow), dtype=bool)
        for port, heavy in ((src, heavy_in), (dst, heavy_out)):
            first_light = np.full(m, len(order), dtype=np.int64)
            np.minimum.at(first_light, port[~heavy], r[~heavy])
            served &= r <= first_light[port]
        group = np.where(served, 0, r + 1)
        rates = dclas_allocation(src, dst, group, self.cap_in, self.cap_out)
        if math.isinf(self.threshold):
            return Decision(rates)
        if local is not None:
            local.set_rates(np.asarray(state.flows), rates)
            rin, rout = local.pair_rates(pin, pout, rates)
            light_in, light_out = ~heavy_in, ~heavy_out
            soonest = min(
                _first_crossing(
                    t,
                    local.bytes[pin][light_in],
                    rin[light_in],
                    np.full(int(light_in.sum()), self.threshold),
                ),
                _first_crossing(
                    t,
                    local.bytes[pout][light_out],
                    rout[light_out],
                    np.full(int(light_out.sum()), self.threshold),
                ),
            )
        else:
            rate_c = np.bincount(coflow, weights=rates, minlength=n).astype(float)[active]
            light = sent[active] < bound
            soonest = _first_crossing(
                t, sent[active][light], rate_c[light], np.full(int(light.sum()), self.threshold)
            )
        return Decision(rates, wakeup=None if math.isinf(soonest) else soonest)


class _Groups:
    """FIFO-LM's state between events (per-port byte counts); see the module docstring."""

    def __init__(self, view: InstanceView, fast: bool = True) -> None:
        n, nf, m = view.num_coflows, view.num_flows, view.num_ports
        np2 = 2 * m
        self.n = n
        c = self.coflow = np.ascontiguousarray(view.flow_coflow, dtype=np.int64)
        self.pa = np.ascontiguousarray(view.flow_src, dtype=np.int64)
        self.pb = m + np.ascontiguousarray(view.flow_dst, dtype=np.int64)
        # pairs sorted by (coflow, port): a coflow's pairs are contiguous
        keys, inverse = np.unique(np.concatenate([c * np2 + self.pa, c * np2 + self.pb]),
                                  return_inverse=True)  # fmt: skip
        self.pin = inverse[:nf].astype(np.int64)
        self.pout = inverse[nf:].astype(np.int64)
        npairs = len(keys)
        self.pair_port = (keys % np2).astype(np.int64)
        self.cp_ptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(keys // np2, minlength=n), out=self.cp_ptr[1:])
        # each coflow's and each pair's flows, in index order
        self.c_flows = np.argsort(c, kind="stable").astype(np.int64)
        self.c_ptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(c, minlength=n), out=self.c_ptr[1:])
        both = np.concatenate([self.pin, self.pout])
        self.pf_flows = (np.argsort(both, kind="stable") % nf).astype(np.int64)
        self.pf_ptr = np.zeros(npairs + 1, dtype=np.int64)
        np.cumsum(np.bincount(both, minlength=npairs), out=self.pf_ptr[1:])
        self.alive = np.zeros(nf, dtype=np.bool_)
        self.served = np.zeros(nf, dtype=np.bool_)  # in group 0
        self.rate = np.zeros(nf)  # the rate last given
        self.stop = np.full(nf, np.inf)  # observed completion time of each flow
        self.new = np.zeros(nf)
        self.pair_alive = np.zeros(npairs, dtype=np.int64)
        self.pair_unserved = np.zeros(npairs, dtype=np.int64)
        self.served_at = np.zeros(npairs, dtype=np.bool_)
        self.sent = np.zeros(npairs)  # bytes sent through the port
        self.before_pair = np.zeros(npairs)
        self.after_pair = np.zeros(npairs)
        self.pr = np.zeros(npairs)
        self.port_served = np.zeros(np2, dtype=np.int64)
        self.before0 = np.zeros(np2)
        self.after0 = np.zeros(np2)
        self.c_alive = np.zeros(n, dtype=np.int64)
        self.link_alive = np.zeros((m, m), dtype=np.int64)  # alive flows per (ingress, egress)
        self.c_unserved = np.zeros(n, dtype=np.int64)
        self.dirty = np.zeros(n + 1, dtype=np.bool_)  # group's flows changed; [n]: group 0
        self.rank = np.zeros(n, dtype=np.int64)
        self.order: npt.NDArray[np.int64] = np.zeros(0, dtype=np.int64)
        self.pos: npt.NDArray[np.int64] = np.zeros(0, dtype=np.int64)
        self.full = False  # compare every flow's rate at the next event
        self.t_last = 0.0
        self.g0 = _group0(self.pa, self.pb, m, fast and m * m <= _MAX_PAIRS)

    def decide(
        self,
        state: ObservedState,
        bound: float,
        threshold: float,
        cap_in: npt.NDArray[np.float64],
        cap_out: npt.NDArray[np.float64],
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64], float]:
        """The flows whose rate changes, their rates, and the next crossing (``inf``)."""
        k = kernels()
        t = float(state.time)
        track = not math.isinf(threshold)
        arrived = np.asarray(state.arrived, dtype=np.int64)
        completed = np.asarray(state.completed, dtype=np.int64)
        if track:
            self.stop[completed] = state.completed_at
            k["fifo_advance"](t, self.t_last, self.pos, len(self.pos), self.rate, self.pin,
                              self.pout, self.sent, self.stop)  # fmt: skip
        self.t_last = t
        if k["fifo_update"](
            arrived, completed, self.coflow, self.pin, self.pout, self.pa, self.pb, self.alive,
            self.served, self.pair_alive, self.pair_unserved, self.port_served, self.c_alive,
            self.c_unserved, self.dirty, self.g0, self.link_alive,
        ):  # fmt: skip
            active = np.flatnonzero(self.c_alive)
            arrival = np.asarray(state.coflow_arrival)
            self.order = active[np.lexsort((active, arrival[active]))]
        cap = np.concatenate([cap_in, cap_out])
        flows, rates, self.pos, soonest, more = k["fifo_step"](
            self.order, arrived, self.full, bound, threshold, track, t, self.coflow, self.pin,
            self.pout, self.pa, self.pb, self.c_ptr, self.c_flows, self.cp_ptr, self.pair_port,
            self.pf_ptr, self.pf_flows, self.alive, self.served, self.pair_alive,
            self.pair_unserved, self.port_served, self.c_alive, self.c_unserved, self.dirty,
            self.served_at, self.sent, self.rate, self.before_pair, self.after_pair,
            self.before0, self.after0, self.new, self.rank, self.pr, cap, 1e-12 * cap,
            self.pos, len(self.pos), self.g0, self.link_alive,
        )  # fmt: skip
        self.full = bool(more)
        if more:
            flows, rates, soonest = self._from_scratch(t, bound, threshold, track, cap_in, cap_out)
        return flows, rates, float(soonest)

    def _from_scratch(
        self,
        t: float,
        bound: float,
        threshold: float,
        track: bool,
        cap_in: npt.NDArray[np.float64],
        cap_out: npt.NDArray[np.float64],
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64], float]:
        """The full :func:`dclas_allocation` (more rounds than the first); the next event
        compares every flow's rate again (``full``), the kept group state being round one's."""
        flows = np.flatnonzero(self.alive)
        self.rank[self.order] = np.arange(len(self.order))
        group = np.where(self.served[flows], 0, self.rank[self.coflow[flows]] + 1)
        m = len(cap_in)
        rates = dclas_allocation(self.pa[flows], self.pb[flows] - m, group, cap_in, cap_out)
        self.rate[flows] = rates
        self.pos = flows[rates > 0]
        soonest = math.inf
        if track:
            pr = self.pr
            pos = self.pos
            pr[:] = 0.0
            np.add.at(pr, self.pin[pos], self.rate[pos])
            np.add.at(pr, self.pout[pos], self.rate[pos])
            pairs = np.concatenate([self.pin[flows], self.pout[flows]])
            light = ~(self.sent[pairs] >= bound)
            soonest = _first_crossing(
                t, self.sent[pairs][light], pr[pairs][light], np.full(int(light.sum()), threshold)
            )
            if not self.g0.on:
                pr[:] = 0.0  # the per-flow step sums from zero; the fast one keeps the sums
        # every active flow: the step already overwrote the rates last given with round one's
        return flows, rates, soonest


_MAX_PAIRS = 1 << 20
"""Group 0 is kept per port pair (:func:`_group0`, 24 bytes a pair) when the fabric has at
most this many (ingress, egress) pairs (1,024 ports); beyond, per flow."""


def _group0(pa: npt.NDArray[np.int64], pb: npt.NDArray[np.int64], m: int, on: bool) -> G0:
    """Group 0's state per port pair (``fifo_step``'s ``g0``) for flows with ingress ports
    ``pa`` and egress ports ``pb`` (``m`` + egress); empty arrays when ``on`` is false."""
    nf = len(pa)
    if not on:
        z = np.zeros(0, dtype=np.int64)
        return G0(False, m, z, z, z, z, z, z, z, z, np.zeros(0), z,
                  np.zeros(2, dtype=np.int64), np.zeros(0, dtype=np.bool_))  # fmt: skip
    ports = np.concatenate([pa, pb])
    by_port = np.argsort(ports, kind="stable")
    pfl_ptr = np.zeros(2 * m + 1, dtype=np.int64)
    np.cumsum(np.bincount(ports, minlength=2 * m), out=pfl_ptr[1:])
    pfl_pos = np.empty(2 * nf, dtype=np.int64)
    pfl_pos[by_port] = np.arange(2 * nf)
    key = pa * m + pb - m
    cls_ptr = np.zeros(m * m + 1, dtype=np.int64)
    np.cumsum(np.bincount(key, minlength=m * m), out=cls_ptr[1:])
    cls_flows = np.argsort(key, kind="stable").astype(np.int64)
    cls_pos = np.empty(nf, dtype=np.int64)
    cls_pos[cls_flows] = np.arange(nf)
    return G0(
        True,
        m,
        np.zeros(m * m, dtype=np.int64),
        np.full(2 * m, nf, dtype=np.int64),
        pfl_ptr,
        (by_port % nf).astype(np.int64),
        pfl_pos,
        cls_ptr,
        cls_flows,
        cls_pos,
        np.zeros(m * m),
        np.zeros(2 * nf, dtype=np.int64),
        np.zeros(2, dtype=np.int64),
        np.zeros(nf, dtype=np.bool_),
    )
