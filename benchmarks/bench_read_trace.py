"""Times reading the public Facebook coflow trace with ``read_benchmark``.

Prints the best wall time of 3 reads, the instance's counts and the peak memory of one read
(measured with :mod:`tracemalloc`, which covers NumPy's allocations). Exits with 0 and a
message when the trace is not present. Run: ``python benchmarks/bench_read_trace.py``.
"""

from __future__ import annotations

import sys
import time
import tracemalloc

from coflowlab.instances.benchmark import FB_TRACE_NAME, find_fb_trace, read_benchmark

REPEATS = 3


def main() -> int:
    """Runs the benchmark and prints a few aligned lines; returns the exit code."""
    path = find_fb_trace()
    if path is None:
        print(f"skipped: {FB_TRACE_NAME} not found ($COFLOWLAB_DATA or ../shared/data)")
        return 0
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        inst = read_benchmark(path)
        times.append(time.perf_counter() - start)
    tracemalloc.start()
    read_benchmark(path)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rows = [
        ("trace", str(path)),
        ("read_benchmark", f"{min(times):.3f} s (best of {REPEATS})"),
        ("coflows / ports", f"{inst.num_coflows:,} / {inst.num_ports:,}"),
        ("flows", f"{inst.num_flows:,}"),
        ("total size", f"{inst.flow_size.sum():,.0f} MB"),
        ("peak memory", f"{peak / 2**20:.1f} MiB (tracemalloc, one read)"),
    ]
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
