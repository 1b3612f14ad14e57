"""Test helpers for class records: a plain-Python reference that turns class records into the
per-flow records :class:`coflowlab.FluidVerifier` understands, and random record streams.

The reference is written independently of :mod:`coflowlab._class_verifier_jit`: it keeps
each active flow's bytes sent and steps event by event (next record time, next release, next
completion), with simple loops and no heaps or virtual times.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

import coflowlab as cl


def expand(
    inst: cl.Instance,
    flow_class: np.ndarray,
    flow_weight: np.ndarray | None,
    time: np.ndarray,
    cls: np.ndarray,
    rate: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The per-flow records ``(time, flow, rate)`` equivalent to the class records.

    At each record time every active flow of the class gets the class's speed times its
    weight; at each release the flow gets its class's current speed; at each completion
    (the first time its bytes reach its size) the flow gets rate 0. At one time, completions
    come first, then releases, then records. After the last record, the classes at positive
    speed run their flows to completion.
    """
    nf = inst.num_flows
    fc = [int(x) for x in flow_class]
    w = [1.0] * nf if flow_weight is None else [float(x) for x in flow_weight]
    size = [float(x) for x in inst.flow_size]
    release = [float(x) for x in inst.flow_release]
    num_classes = max(fc, default=-1) + 1
    num_classes = max(num_classes, max((int(c) + 1 for c in cls), default=0))
    speed = [0.0] * num_classes
    sent = [0.0] * nf
    state = [0] * nf  # 0 not released, 1 active, 2 complete
    out_t: list[float] = []
    out_f: list[int] = []
    out_r: list[float] = []

    def emit(t: float, f: int, x: float) -> None:
        out_t.append(t)
        out_f.append(f)
        out_r.append(x)

    recs = [(float(a), int(b), float(c)) for a, b, c in zip(time, cls, rate, strict=True)]
    i = 0
    now = 0.0
    while True:
        # the next event: record, release or completion
        nxt = recs[i][0] if i < len(recs) else math.inf
        for f in range(nf):
            if state[f] == 0:
                nxt = min(nxt, release[f])
        finish = [math.inf] * nf
        for f in range(nf):
            x = speed[fc[f]]
            if state[f] == 1 and x > 0:
                finish[f] = now + (size[f] - sent[f]) / (x * w[f])
                nxt = min(nxt, finish[f])
        if nxt == math.inf:
            break
        nxt = max(nxt, now)
        for f in range(nf):  # bytes sent over [now, nxt)
            if state[f] == 1:
                sent[f] += speed[fc[f]] * w[f] * (nxt - now)
        now = nxt
        for f in range(nf):  # 1. completions
            if state[f] == 1 and finish[f] <= now:
                state[f] = 2
                sent[f] = size[f]
                emit(now, f, 0.0)
        for f in range(nf):  # 2. releases
            if state[f] == 0 and release[f] <= now:
                state[f] = 1
                emit(now, f, speed[fc[f]] * w[f])
        while i < len(recs) and recs[i][0] == now:  # 3. records
            _, c, x = recs[i]
            i += 1
            speed[c] = x
            for f in range(nf):
                if state[f] == 1 and fc[f] == c:
                    emit(now, f, x * w[f])
    order = np.argsort(np.asarray(out_t), kind="stable")
    return (
        np.asarray(out_t, dtype=float)[order],
        np.asarray(out_f, dtype=np.int64)[order],
        np.asarray(out_r, dtype=float)[order],
    )


def random_case(
    rng: np.random.Generator,
    *,
    max_ports: int = 4,
    max_flows: int = 12,
) -> tuple[cl.Instance, np.ndarray, int, np.ndarray | None, np.ndarray, np.ndarray, np.ndarray]:
    """A random instance, partition into classes, weights and class record stream.

    Returns ``(inst, flow_class, num_classes, flow_weight, time, cls, rate)``. The classes
    are the port pairs or a random partition; weights all 1 (``None``) or random; sizes,
    releases, record times and speeds on a grid of quarters (so that events coincide) or
    continuous; speeds include 0 and overload the ports; some classes get several records
    at one time; with some probability every class ends at speed 0 (flows left short).
    """
    m = int(rng.integers(1, max_ports + 1))
    nf = int(rng.integers(1, max_flows + 1))
    grid = bool(rng.random() < 0.5)
    n_coflows = int(rng.integers(1, nf + 1))
    coflow = np.unique(rng.integers(0, n_coflows, nf), return_inverse=True)[1]
    src = rng.integers(0, m, nf)
    dst = rng.integers(0, m, nf)
    if grid:
        size = rng.integers(1, 13, nf) / 4.0
        release = rng.integers(0, 9, nf) / 4.0 * (rng.random(nf) < 0.6)
    else:
        size = rng.uniform(0.2, 3.0, nf)
        release = rng.uniform(0.0, 2.0, nf) * (rng.random(nf) < 0.6)
    if rng.random() < 0.5:
        fabric = cl.Fabric(m)
    else:
        fabric = cl.Fabric(m, rng.uniform(0.5, 2.0, m), rng.uniform(0.5, 2.0, m))
    inst = cl.Instance(fabric, coflow, src, dst, size, release)
    if rng.random() < 0.5:
        num_classes = m * m
        flow_class = src * m + dst
    else:
        num_classes = int(rng.integers(1, 5))
        flow_class = rng.integers(0, num_classes, nf)
    weight = None if rng.random() < 0.5 else rng.uniform(0.5, 2.0, nf)
    n_times = int(rng.integers(1, 8))
    if grid:
        times = np.unique(rng.integers(0, 24, n_times) / 4.0)
        speeds = np.array([0.0, 0.25, 0.5, 1.0, 1.5, 2.0])
    else:
        times = np.unique(rng.uniform(0.0, 5.0, n_times))
        speeds = np.concatenate([[0.0], rng.uniform(0.1, 2.0, 5)])
    t_out, c_out, r_out = [], [], []
    for t in times:
        k = int(rng.integers(1, num_classes + 2))
        for c in rng.integers(0, num_classes, k):  # may repeat a class at one time
            t_out.append(float(t))
            c_out.append(int(c))
            r_out.append(float(rng.choice(speeds)))
    if rng.random() < 0.3:
        end = float(times[-1]) + 1.0
        for c in range(num_classes):
            t_out.append(end)
            c_out.append(c)
            r_out.append(0.0)
    return (
        inst,
        np.asarray(flow_class, dtype=np.int64),
        num_classes,
        weight,
        np.asarray(t_out),
        np.asarray(c_out, dtype=np.int64),
        np.asarray(r_out),
    )


def time_groups(time: np.ndarray, rng: np.random.Generator) -> list[tuple[int, int]]:
    """Random chunks ``[lo, hi)`` of the records, each made of whole time groups."""
    starts = np.flatnonzero(np.r_[True, time[1:] != time[:-1]])
    bounds = [int(s) for s in starts if rng.random() < 0.5] + [len(time)]
    bounds = sorted({0, *bounds})
    return list(itertools.pairwise(bounds))
