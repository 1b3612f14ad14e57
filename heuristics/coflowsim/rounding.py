"""How CoflowSim sees an instance: MiB rounding, shuffles, static keys and epoch releases.

CoflowSim reads a coflow as mappers and reducers (docs/coflowsim-model.md#units):

- a reducer's bytes are ``MB * 2**20``, truncated to whole bytes and rounded **up** to whole
  MiB; reducers on one port are merged, and so are mappers;
- each reducer's bytes are then rounded up to a multiple of ``M`` MiB (``M`` = number of mapper
  ports), and every mapper sends ``bytes / M`` to it, at least 1 MiB;
- a coflow is admitted, and released, at the start of the 10,240 ms epoch before its arrival:
  ``release = 10240 * max(0, ceil(arrival / 10240) - 1)``.

A coflowlab instance is read the way the coflow-benchmark format stores it: the mappers of a
coflow are the ingress ports of its flows, and a reducer's MB is the total size of the flows
into its egress port. Every flow is ``(mapper, reducer)`` of that full shuffle, so a coflow that
is not a full shuffle gains the missing pairs, as it would after a round trip through the
format.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from coflowlab.constants import MS_PER_UNIT
from coflowlab.exceptions import InvalidInstanceError
from coflowlab.instance import Fabric, Instance, Units

from .javarandom import JavaRandom

__all__ = [
    "CAPACITY_MB_PER_MS",
    "EPOCH_MS",
    "MIB",
    "OFFLINE_EPOCH_MS",
    "QUANTUM_MS",
    "CoflowSimView",
    "coflowsim_instance",
    "epoch_release",
]

MIB = 1048576.0
"""Bytes per MiB, CoflowSim's "MB"."""

QUANTUM_MS = 8
"""CoflowSim's time step: 1024 ms / (128 MiB/s / 1 MiB)."""

EPOCH_MS = 10240
"""CoflowSim's admission epoch: ten simulated seconds of 1024 ms."""

OFFLINE_EPOCH_MS = 86400 * 1024
"""The epoch of the offline mode (CoflowSim's end of simulation): every coflow starts at 0."""

CAPACITY_MB_PER_MS = 0.125
"""Port rate of the CoflowSim view in MB (MiB) per ms: 1 MiB per 8 ms quantum."""

RACK_BITS_PER_SEC = 1024.0 * 1048576.0
"""CoflowSim's port capacity in bit/s, the unit of its rates."""

RACK_BYTES_PER_SEC = RACK_BITS_PER_SEC / 8.0

# times without a unit are read as ms, as sizes without a unit are read as MB
_TIME_MS = {**MS_PER_UNIT, "unit": 1.0}


def epoch_release(arrival: npt.ArrayLike, epoch: float = EPOCH_MS) -> npt.NDArray[np.float64]:
    """The time at which CoflowSim admits (and starts) a coflow of the given arrival.

    CoflowSim admits at each epoch start ``T`` every coflow with ``arrival <= T + epoch``, so
    the start is ``epoch * max(0, ceil(arrival / epoch) - 1)``.

    Examples
    --------
    >>> epoch_release([0, 5000, 10240, 20000]).tolist()
    [0.0, 0.0, 0.0, 10240.0]
    """
    a = np.asarray(arrival, dtype=float)
    return epoch * np.maximum(0.0, np.ceil(a / epoch) - 1.0)


def _round_up_bytes(nbytes: float, multiple: int) -> float:
    """Java's ``roundToNearestNMB``: truncate to whole bytes, round up to ``multiple`` MiB."""
    whole = int(nbytes)  # Java's (long) cast truncates toward zero
    mult = multiple * 1048576
    count = whole // mult + (1 if whole % mult > 0 else 0)
    return float(mult * count)


@dataclass(frozen=True, eq=False)
class CoflowSimView:
    """The coflows, reducers and flows of CoflowSim's model of an instance, in CoflowSim order.

    Coflow ``k`` is coflow ``k`` of the instance. Its reducers are listed by port, and each
    reducer's flows by mapper port (CoflowSim's task order); flows of a coflow are contiguous.
    All sizes are bytes, all times ms, as in CoflowSim (docs/coflowsim-model.md#units).

    Examples
    --------
    Job 2 of CoflowSim's micro-trace: 2 mappers, reducers of 4.0 and 2.0 MB, two flows each:

    >>> from coflowlab.instances.examples import coflowsim_micro
    >>> view = CoflowSimView.from_instance(coflowsim_micro())
    >>> view.num_mappers.tolist(), (view.red_bytes / MIB).tolist(), view.release.tolist()
    ([1, 2, 1], [1.0, 2.0, 4.0, 10.0], [0.0, 0.0, 0.0])

    Attributes
    ----------
    arrival, release
        Per coflow: the arrival time and CoflowSim's start (an epoch start).
    num_mappers, num_reducers
        Per coflow: ``M`` and ``R`` after merging ports.
    total_bytes, max_reducer_bytes
        Per coflow, after rounding to multiples of ``M`` MiB.
    lcf_bytes
        Per reducer: its bytes rounded to whole MiB only (CoflowSim's remaining-size
        counters, used by LCF, start from these).
    alpha
        Per coflow: CoflowSim's static bottleneck in bytes (SEBF's key).
    deadline_mult, deadline
        Per coflow: ``1 + U[0, 1) * factor`` from ``java.util.Random(17)``, and the deadline
        (isolated bottleneck time times the multiplier) in ms.
    java_order
        Coflow indices in CoflowSim's admission order (stable sort by arrival).
    red_job, red_port, red_bytes, red_first, red_count
        Per reducer: its coflow, egress port, bytes, first flow and number of flows (``M``).
    flow_job, flow_red, flow_src, flow_dst, flow_bytes
        Per flow: coflow, reducer, mapper port, reducer port and bytes.
    """

    num_ports: int
    arrival: npt.NDArray[np.float64]
    release: npt.NDArray[np.float64]
    num_mappers: npt.NDArray[np.int64]
    num_reducers: npt.NDArray[np.int64]
    total_bytes: npt.NDArray[np.float64]
    max_reducer_bytes: npt.NDArray[np.float64]
    alpha: npt.NDArray[np.float64]
    deadline_mult: npt.NDArray[np.float64]
    deadline: npt.NDArray[np.float64]
    java_order: npt.NDArray[np.int64]
    job_first_red: npt.NDArray[np.int64]
    job_first_flow: npt.NDArray[np.int64]
    red_job: npt.NDArray[np.int64]
    red_port: npt.NDArray[np.int64]
    red_bytes: npt.NDArray[np.float64]
    lcf_bytes: npt.NDArray[np.float64]
    red_first: npt.NDArray[np.int64]
    red_count: npt.NDArray[np.int64]
    flow_job: npt.NDArray[np.int64]
    flow_red: npt.NDArray[np.int64]
    flow_src: npt.NDArray[np.int64]
    flow_dst: npt.NDArray[np.int64]
    flow_bytes: npt.NDArray[np.float64]

    @property
    def num_jobs(self) -> int:
        """Number of coflows."""
        return len(self.arrival)

    @property
    def num_flows(self) -> int:
        """Number of flows."""
        return len(self.flow_bytes)

    @classmethod
    def from_instance(
        cls, instance: Instance, *, epoch: float = EPOCH_MS, deadline_factor: float = 1.0
    ) -> CoflowSimView:
        """Builds CoflowSim's view of ``instance`` (see the module docstring).

        Raises
        ------
        InvalidInstanceError
            If the instance's units cannot be read as MB and ms, or a reducer has less than
            one byte (CoflowSim would round it to nothing).
        """
        mb_per_unit = instance.units.mb_per_size_unit()
        size_to_mb = 1.0 if mb_per_unit is None else mb_per_unit
        if instance.units.time not in _TIME_MS:
            raise InvalidInstanceError(
                f"coflowsim: time unit {instance.units.time!r} is not supported (use one of "
                f"{', '.join(MS_PER_UNIT)})"
            )
        to_ms = _TIME_MS[instance.units.time]
        n, m = instance.num_coflows, instance.num_ports
        arrival = np.asarray(instance.coflow_release, dtype=float) * to_ms

        red_job: list[int] = []
        red_port: list[int] = []
        red_bytes: list[float] = []
        lcf_bytes: list[float] = []
        flow_src: list[np.ndarray] = []
        flow_dst: list[np.ndarray] = []
        flow_bytes: list[np.ndarray] = []
        num_mappers = np.zeros(n, dtype=np.int64)
        num_reducers = np.zeros(n, dtype=np.int64)
        total = np.zeros(n)
        biggest = np.zeros(n)
        alpha = np.zeros(n)
        for k in range(n):
            flows = instance.coflow_flows(k)
            src = instance.flow_src[flows]
            dst = instance.flow_dst[flows]
            size = instance.flow_size[flows] * size_to_mb
            mappers = np.unique(src)
            reducers = np.unique(dst)
            big_m = len(mappers)
            num_mappers[k], num_reducers[k] = big_m, len(reducers)
            job_total = 0.0
            job_max = 0.0
            per_red: list[float] = []
            for r in reducers.tolist():
                megabytes = math.fsum(size[dst == r].tolist())
                one_mib = _round_up_bytes(megabytes * MIB, 1)
                if one_mib <= 0.0:
                    raise InvalidInstanceError(
                        f"coflow {k}: the flows into egress port {r} carry less than one byte, "
                        "which CoflowSim rounds to nothing"
                    )
                rounded = _round_up_bytes(one_mib, big_m)
                red_job.append(k)
                red_port.append(r)
                red_bytes.append(rounded)
                lcf_bytes.append(one_mib)
                per_red.append(rounded)
                job_total += rounded
                job_max = max(job_max, rounded)
                flow_src.append(mappers)
                flow_dst.append(np.full(big_m, r, dtype=np.int64))
                flow_bytes.append(np.full(big_m, max(rounded / big_m, MIB)))
            total[k], biggest[k] = job_total, job_max
            # static bottleneck: every mapper sends total / M, every reducer receives its bytes
            per_mapper = job_total / big_m
            alpha[k] = max(per_mapper, max(per_red))

        java_order = np.argsort(arrival, kind="stable").astype(np.int64)
        mult = np.ones(n)
        rng = JavaRandom(17)
        for k in java_order.tolist():
            mult[k] = 1.0 + rng.next_double() * deadline_factor
        deadline = np.array(
            [alpha[k] / RACK_BYTES_PER_SEC * mult[k] * 1000 for k in range(n)], dtype=float
        )

        counts = np.full(len(red_job), 0, dtype=np.int64)
        r_job = np.asarray(red_job, dtype=np.int64)
        counts[:] = num_mappers[r_job]
        red_first = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
        job_first_red = np.searchsorted(r_job, np.arange(n)).astype(np.int64)
        f_red = np.repeat(np.arange(len(red_job), dtype=np.int64), counts)
        f_job = r_job[f_red]
        job_first_flow = np.searchsorted(f_job, np.arange(n)).astype(np.int64)
        del m
        return cls(
            num_ports=instance.num_ports,
            arrival=arrival,
            release=epoch_release(arrival, epoch),
            num_mappers=num_mappers,
            num_reducers=num_reducers,
            total_bytes=total,
            max_reducer_bytes=biggest,
            alpha=alpha,
            deadline_mult=mult,
            deadline=deadline,
            java_order=java_order,
            job_first_red=job_first_red,
            job_first_flow=job_first_flow,
            red_job=r_job,
            red_port=np.asarray(red_port, dtype=np.int64),
            red_bytes=np.asarray(red_bytes),
            lcf_bytes=np.asarray(lcf_bytes),
            red_first=red_first,
            red_count=counts,
            flow_job=f_job,
            flow_red=f_red,
            flow_src=np.concatenate(flow_src).astype(np.int64),
            flow_dst=np.concatenate(flow_dst).astype(np.int64),
            flow_bytes=np.concatenate(flow_bytes),
        )

    def to_instance(self, source: Instance, *, offline: bool = False) -> Instance:
        """The CoflowSim view as a coflowlab instance: sizes in MiB (written MB), times in ms,
        capacity :data:`CAPACITY_MB_PER_MS`, releases at the epoch starts (0 offline).

        Labels and weights are those of ``source``; dependencies and deadlines are dropped
        (CoflowSim has neither).
        """
        release = np.zeros(self.num_jobs) if offline else self.release
        return Instance(
            Fabric(self.num_ports, CAPACITY_MB_PER_MS, CAPACITY_MB_PER_MS),
            self.flow_job,
            self.flow_src,
            self.flow_dst,
            self.flow_bytes / MIB,
            coflow_release=release,
            coflow_weight=source.coflow_weight,
            coflow_label=source.coflow_label,
            num_coflows=self.num_jobs,
            units=Units("MB", "ms"),
        )


def coflowsim_instance(instance: Instance, *, offline: bool = False) -> Instance:
    """Returns ``instance`` as CoflowSim sees it.

    Each coflow becomes the full shuffle of its mapper (ingress) and reducer (egress) ports.
    A reducer's MB is the total size of the flows into it; it is rounded up to whole MiB and
    then up to a multiple of ``M`` MiB, and each of the ``M`` flows into it carries a share
    (at least 1 MiB). Releases move to the start of the epoch before the arrival (all to 0
    with ``offline=True``). Sizes are MiB, written as MB; times are ms; every port moves
    1 MiB per 8 ms quantum (0.125 MB/ms). Labels and weights are kept.

    Parameters
    ----------
    instance
        The instance. Sizes are read as MB (``"unit"`` sizes too) and times as ms.
    offline
        Release every coflow at 0, as CoflowSim's offline mode does.

    Returns
    -------
    Instance
        A valid instance with the same coflows (same labels, same order). Flows are listed
        per coflow, reducer by reducer (by port), mapper by mapper (by port).

    Examples
    --------
    Two mappers and a 3.0 MB reducer give 4 MiB, two flows of 2 MiB; 0.5 MB gives 1 MiB:

    >>> from coflowlab.instances import parse_benchmark
    >>> inst = parse_benchmark("4 2\\n1 5000 2 0 1 1 2:3.0\\n2 20000 1 3 1 2:0.5\\n")
    >>> view = coflowsim_instance(inst)
    >>> view.flow_size.tolist(), view.coflow_release.tolist()
    ([2.0, 2.0, 1.0], [0.0, 10240.0])
    """
    view = CoflowSimView.from_instance(instance)
    return view.to_instance(instance, offline=offline)
