"""Speed and memory of the verifier on large fluid schedules.

Builds an instance shaped like the public trace (150 ports, ~700k flows) and a feasible
schedule in which every flow's rate changes several times, then times ``verify``. Prints
figures; asserts nothing about time.
"""

from __future__ import annotations

import time
import tracemalloc

import numpy as np

import coflowlab as cl


def workload(num_flows: int, changes_per_flow: int, seed: int = 0):
    """Flows on 150 ports; each flow sends its size in ``changes_per_flow`` equal pieces at
    rate 1/(num_flows) of the port, so no port is ever over capacity."""
    rng = np.random.default_rng(seed)
    m = 150
    src = rng.integers(0, m, num_flows)
    dst = rng.integers(0, m, num_flows)
    coflow = np.sort(rng.integers(0, 500, num_flows))
    coflow = np.unique(coflow, return_inverse=True)[1]
    size = rng.integers(1, 100, num_flows).astype(float)
    inst = cl.Instance(cl.Fabric(m), coflow, src, dst, size)
    # rate r = 1 / (max flows on any port): always feasible
    r = 1.0 / max(np.bincount(src).max(), np.bincount(dst).max())
    piece = size / changes_per_flow
    k = np.arange(changes_per_flow + 1)
    # alternate rates r and 2r/2 ... keep it simple: constant r, but re-announced each piece
    times = (k[None, :] * (piece / r)[:, None]).ravel()
    flows = np.repeat(np.arange(num_flows), changes_per_flow + 1)
    rates = np.tile(np.r_[np.full(changes_per_flow, r), 0.0], num_flows)
    return inst, cl.FluidSchedule(num_flows, times, flows, rates)


def main() -> None:
    for num_flows, changes in ((100_000, 4), (700_000, 4)):
        inst, sched = workload(num_flows, changes)
        tracemalloc.start()
        t0 = time.perf_counter()
        report = cl.verify(inst, sched)
        wall = time.perf_counter() - t0
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        print(
            f"verify: {num_flows:>9,} flows  {sched.num_records:>10,} records  "
            f"{wall:6.2f} s  peak {peak / 2**20:7.1f} MiB  feasible={report.feasible}"
        )


if __name__ == "__main__":
    main()
