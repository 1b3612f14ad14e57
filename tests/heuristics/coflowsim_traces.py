"""Small random traces in the coflow-benchmark format, for the CoflowSim-model engine tests
(compiled loops against their references)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from coflowlab.instance import Instance
from coflowlab.instances import parse_benchmark


def random_trace(rng: np.random.Generator, sizes: Sequence[float]) -> Instance:
    """A trace of 2-7 racks and 1-24 coflows arriving over a few epochs (or all at once),
    distinct mappers and reducers per coflow, reducer sizes (MB) drawn from the short list
    ``sizes`` so that flows tie and end together."""
    racks = int(rng.integers(2, 8))
    n = int(rng.integers(1, 25))
    horizon = int(rng.choice([1, 10240, 40000]))
    arrivals = np.sort(rng.integers(0, horizon, size=n))
    lines = [f"{racks} {n}"]
    for k in range(n):
        mappers = rng.choice(racks, size=int(rng.integers(1, racks + 1)), replace=False)
        reducers = rng.choice(racks, size=int(rng.integers(1, racks + 1)), replace=False)
        drawn = rng.choice(np.asarray(sizes, dtype=float), size=reducers.size)
        red = " ".join(f"{r}:{s:g}" for r, s in zip(reducers, drawn, strict=True))
        mp = " ".join(str(m) for m in mappers)
        lines.append(f"{k + 1} {arrivals[k]} {mappers.size} {mp} {reducers.size} {red}")
    return parse_benchmark("\n".join(lines) + "\n")
