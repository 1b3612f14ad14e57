"""Shared by the Aalo lockstep suites (``test_aalo_sparse.py``, the coordinated sparse step;
``test_aalo_uncoordinated_fast.py``, the incremental uncoordinated step; on pytest's
``pythonpath``): small queues, bit views of floats, and random small instances."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import strategies as st

from coflowlab import Coflow, Instance

SMALL = {"num_queues": 4, "first_threshold": 5.0, "factor": 3.0}
"""Queues [0, 5), [5, 15), [15, 45), [45, ∞): demotions happen on small instances."""


def bits(x: Any) -> np.ndarray:
    """The float64 values as integers: equal arrays are equal to the last bit."""
    return np.asarray(x, dtype=np.float64).view(np.int64)


@st.composite
def small_instances(
    draw: Any, *, repeated_pairs: bool = False, releases: tuple[float, ...] = (0.0, 0.5, 1.0, 4.0)
) -> Instance:
    """Up to 6 coflows on up to 4 ports, flows listed in any order and released up to 2.5
    after their coflow; ``repeated_pairs``: several flows of a coflow may share a port pair;
    coflow releases drawn from ``releases`` (0 twice as often)."""
    m = draw(st.integers(1, 4))
    coflows = []
    for _ in range(draw(st.integers(1, 6))):
        pairs = draw(
            st.lists(
                st.tuples(st.integers(0, m - 1), st.integers(0, m - 1)),
                min_size=1,
                max_size=(2 if repeated_pairs else 1) * m * m,
                unique=not repeated_pairs,
            )
        )
        n = len(pairs)
        sizes = draw(
            st.lists(st.sampled_from([0.5, 1.0, 2.0, 3.0, 7.5, 20.0]), min_size=n, max_size=n)
        )
        starts = draw(st.lists(st.sampled_from([0.0, 0.0, 1.0, 2.5]), min_size=n, max_size=n))
        release = draw(st.sampled_from((0.0, *releases)))
        coflows.append(
            Coflow(
                [
                    (i, o, s, release + r)
                    for (i, o), s, r in zip(pairs, sizes, starts, strict=True)
                ],
                release=release,
            )
        )
    return Instance.from_coflows(coflows, m)
