"""Small generated instances of every kind the policy test suites replay (release times,
weights, deadlines, one port, dependencies, real-valued sizes), one seed each.

Shared by the policy test modules (on pytest's ``pythonpath``); each adds its own kinds.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from coflowlab import Fabric, Instance
from coflowlab.instances import assign_deadlines, single_port, uniform


def with_dependencies(seed: int) -> Instance:
    """A uniform instance whose coflows form a small starts-after DAG."""
    base = uniform(3, 6, density=0.5, release_rate=1.0, seed=seed)
    return base.replace(dependencies=[(0, 2), (1, 2), (2, 4), (3, 5)])


def unequal_capacities() -> Instance:
    """Three ports whose ingress and egress capacities all differ, five flows, staggered
    releases: rates must respect each port's own capacity."""
    return Instance(
        Fabric(3, np.array([1.0, 0.5, 2.0]), np.array([0.7, 1.0, 1.5])),
        [0, 0, 1, 1, 2],
        [0, 1, 2, 0, 1],
        [0, 2, 1, 1, 0],
        [12.0, 8.0, 20.0, 6.0, 9.0],
        coflow_release=[0.0, 1.0, 2.0],
    )


GENERATED: dict[str, Callable[[], Instance]] = {
    "uniform": lambda: uniform(4, 8, density=0.4, seed=1),
    "uniform-online": lambda: uniform(5, 10, density=0.3, release_rate=0.5, seed=2),
    "weights": lambda: uniform(4, 8, density=0.4, release_rate=0.5, weights=(1, 4), seed=3),
    "deadlines": lambda: assign_deadlines(uniform(4, 8, density=0.4, seed=4), seed=4),
    "single_port": lambda: single_port(8, seed=5),
    "dependencies": lambda: with_dependencies(6),
    "real_sizes": lambda: uniform(
        3, 6, sizes=(0.5, 30.0), integral=False, release_rate=0.3, seed=7
    ),
}
