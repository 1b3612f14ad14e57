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

__all__ = ["MB_PER_UNIT", "TOL"]

TOL: float = 1e-9
"""Default relative tolerance of every floating-point comparison."""

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
