"""Numerical policy shared by every comparison in coflowlab.

The fluid model is real-valued, so feasibility and optimality checks compare floating-point
numbers. They all use one documented relative tolerance, ``TOL``, scaled as follows
(see :func:`coflowlab.verify`):

- rates against port capacity: ``usage <= capacity * (1 + tol)``;
- times (completion, release, dependency): absolute ``time_tol = tol * max(1, horizon)``,
  where the horizon is the largest time in the schedule;
- bytes of a flow: ``|sent - size| <= tol * size + min(cap_in, cap_out) * time_tol``, i.e. the
  bytes the flow's ports could move within the time tolerance.
"""

from __future__ import annotations

__all__ = [
    "MAX_PORTS",
    "MAX_TIME_RATIO",
    "MAX_VALUE",
    "MB_PER_UNIT",
    "MIN_VALUE",
    "MS_PER_UNIT",
    "OPTIMALITY_TOL",
    "TOL",
]

TOL: float = 1e-9
"""Default relative tolerance of every floating-point comparison."""

# ---------------------------------------------------------------------- supported range
# Every instance is validated against the range below (coflowlab.Instance), so every reader and
# generator refuses what the numerics cannot handle instead of hanging, returning NaN or
# reporting a solver "error" status. The reasoning, all in the instance's own units:
#
# - MIN_VALUE = 1e-6: sizes, capacities and deadlines at least 1e-6. HiGHS drops constraint
#   coefficients below its small_matrix_value (1e-9), so an LP would read a size or capacity
#   of 1e-10 as 0; 1e-6 keeps three decimal orders above that, and a flow of 1e-6 at capacity
#   1 takes 1e-6 time units, 1000 times the absolute time tolerance TOL * max(1, horizon) of a
#   horizon up to 1.
# - MAX_VALUE = 1e12: sizes, capacities, weights, releases, deadlines, and the time
#   ``release + size / min(port capacities)`` at which each flow can end at the earliest, at
#   most 1e12. HiGHS refuses matrix values above its large_matrix_value (1e15) and reads bounds
#   and costs of 1e20 or more as infinite, so a flow of 1e300 made the exact method end with
#   status "error" and Sincronia's dual bound infinite; 1e12 keeps three orders below the
#   first limit and leaves sums over up to 1e7 coflows below the second. The exact solvers were
#   checked to give the same relative optimum on an instance scaled from 1e-6 to 1e11.
# - MAX_TIME_RATIO = 1e7: the verifier's time tolerance is TOL * max(1, horizon), so a flow
#   whose transfer takes less than that cannot be told finished from not started: next to a
#   1e9-unit flow a 1-unit flow's completion time came out NaN (ratio 1e9 = 1/TOL), while 1e8
#   was still exact. Every schedule lasts at least max(1, max_e(release_e + d_e)), with d_e =
#   size_e / min(capacity of its two ports), so that over min_e d_e must stay at most
#   MAX_TIME_RATIO = 0.01 / TOL: the verifier's slack is then at most 1% of the shortest flow
#   on the shortest possible horizon. The Facebook trace has 4.5e5 by this measure and
#   fb_like(5260) 1.4e6.

MIN_VALUE: float = 1e-6
"""Smallest flow size, port capacity or deadline accepted (see the reasoning above)."""

MAX_VALUE: float = 1e12
"""Largest size, capacity, weight, release, deadline or earliest flow end accepted."""

MAX_TIME_RATIO: float = 1e7
"""Largest ratio ``max(1, max_e(release_e + d_e)) / min_e d_e`` accepted (``d_e``: flow ``e``'s
transfer time alone at its ports' capacity), 0.01 / :data:`TOL`."""

MAX_PORTS: int = 2**20
"""Largest port count accepted: a fabric holds dense arrays of ``2m`` capacities and an
instance ``n x 2m`` port loads, so a count beyond a million ports is a typo (a header
``15052600000 1``) that would exhaust memory, not a fabric."""

OPTIMALITY_TOL: float = 1e-6
"""Relative tolerance of an optimality claim (the default ``mip_gap`` of every exact method).

A method may report status ``optimal`` only if the verified objective ``V`` of the schedule it
returns equals its proven bound ``B`` within ``|V - B| <= (max(OPTIMALITY_TOL, mip_gap) +
OBJECTIVE_RTOL) * max(1, |V|)``: relative to the objective (absolute below 1, so objectives
near 0 are not held to a vanishing tolerance), widened to the ``mip_gap`` the caller asked
for, plus the 1e-6 by which a solver's objective may differ from the verified one
(:data:`coflowlab.solution.OBJECTIVE_RTOL`). :func:`coflowlab.solution.schedule_solution`
enforces it and raises :class:`coflowlab.SolverError` otherwise."""

MB_PER_UNIT: dict[str, float] = {
    "B": 1e-6,
    "KB": 1e-3,
    "MB": 1.0,
    "GB": 1e3,
    "KiB": 1024 / 1e6,
    "MiB": 1024**2 / 1e6,
    "GiB": 1024**3 / 1e6,
}
"""Megabytes per size unit, for thresholds stated in MB (such as Varys' 5 MB "short" bin)."""

MS_PER_UNIT: dict[str, float] = {"us": 1e-3, "ms": 1.0, "s": 1e3, "min": 6e4}
"""Milliseconds per time unit, for parameters stated in ms (such as Varys' δ = 200 ms)."""
