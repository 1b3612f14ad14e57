"""Metrics computed from verified completion times.

Every function here takes the instance and the completion times of a
:class:`~coflowlab.verify.VerificationReport`, never an algorithm's own numbers.

The four Varys bins (Chowdhury's PhD thesis, UC Berkeley 2015, §5.7.1; docs/varys.md#bins) split
coflows by *length* (largest flow; "short" if < 5 MB) and *width* (number of flows; "narrow" if ≤
50): SN, LN, SW, LW.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from .instance import Instance

__all__ = [
    "BINS",
    "CctSummary",
    "bin_table",
    "cct",
    "deadlines_met",
    "summarize",
    "varys_bins",
    "weighted_cct",
    "weighted_completion_time",
]

BINS = ("SN", "LN", "SW", "LW")
"""Varys' bins: short/long × narrow/wide."""

SHORT_MB = 5.0
"""Varys' "short" threshold on a coflow's longest flow, in MB (thesis §5.7.1)."""

NARROW_WIDTH = 50
"""Varys' "narrow" threshold on a coflow's number of flows (thesis §5.7.1)."""


def weighted_completion_time(instance: Instance, completion: npt.ArrayLike) -> float:
    """``Σ_j w_j C_j``, the objective of docs/theory.md#model.

    Examples
    --------
    >>> from coflowlab import Instance
    >>> inst = Instance.from_matrices([[[1.0]], [[2.0]]], weight=[1, 3])
    >>> weighted_completion_time(inst, [3.0, 2.0])
    9.0
    """
    return float(np.dot(instance.coflow_weight, np.asarray(completion, dtype=float)))


def weighted_cct(instance: Instance, completion: npt.ArrayLike) -> tuple[float, float]:
    """``(Σ_j w_j (C_j - r_j), its average over the coflows)``: the weighted coflow
    completion time that Yosemite minimizes (its Eq. (1) with release dates; the "avg cwct"
    of its Eq. (6) is the average).

    Coflows without a completion time (``nan``: rejected or unfinished) are left out of the
    sum and of the count.

    Examples
    --------
    >>> from coflowlab import Instance
    >>> inst = Instance.from_matrices([[[1.0]], [[2.0]]], weight=[1, 3], release=[0, 1])
    >>> weighted_cct(inst, [3.0, 2.0])
    (6.0, 3.0)
    """
    c = cct(instance, completion)
    done = ~np.isnan(c)
    total = float(np.dot(instance.coflow_weight[done], c[done]))
    count = int(done.sum())
    return total, (total / count if count else float("nan"))


def cct(instance: Instance, completion: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """Coflow completion times measured from each coflow's release: ``C_j - r_j``."""
    return np.asarray(completion, dtype=float) - instance.coflow_release


def varys_bins(
    instance: Instance, *, short: float | None = None, narrow: int = NARROW_WIDTH
) -> npt.NDArray[np.str_]:
    """The Varys bin of each coflow: ``"SN"``, ``"LN"``, ``"SW"`` or ``"LW"``.

    Parameters
    ----------
    instance
        The instance.
    short
        Length threshold in the instance's size unit; default 5 MB converted from the
        instance's unit. Required when the size unit is not a byte unit.
    narrow
        Width threshold (number of flows). Default 50.

    Examples
    --------
    >>> from coflowlab import Instance, Units
    >>> inst = Instance.from_matrices([[[1.0]], [[9.0]]], units=Units("MB", "ms"))
    >>> varys_bins(inst).tolist()
    ['SN', 'LN']
    """
    if short is None:
        per_unit = instance.units.mb_per_size_unit()
        if per_unit is None:
            raise ValueError(
                f"varys_bins: size unit {instance.units.size!r} is not a byte unit; pass the "
                "'short' threshold explicitly"
            )
        short = SHORT_MB / per_unit
    is_long = instance.length >= short
    is_wide = instance.width > narrow
    return np.asarray(BINS)[is_long.astype(int) + 2 * is_wide.astype(int)]


def deadlines_met(
    instance: Instance, completion: npt.ArrayLike, tol: float = 0.0
) -> npt.NDArray[np.bool_]:
    """Whether each coflow with a deadline met it (``C_j - r_j <= D_j + tol``); coflows
    without a deadline count as met."""
    return cct(instance, completion) <= instance.coflow_deadline + tol


@dataclass(frozen=True)
class CctSummary:
    """Average and percentile CCT of a group of coflows."""

    count: int
    average: float
    p50: float
    p95: float
    p99: float
    maximum: float


def summarize(values: npt.ArrayLike) -> CctSummary:
    """Count, average, median, 95th and 99th percentile and maximum of some CCTs.

    Percentiles use NumPy's default linear interpolation. An empty group gives ``nan``.

    Examples
    --------
    >>> summarize([1.0, 2.0, 3.0, 4.0]).average
    2.5
    """
    v = np.asarray(values, dtype=float)
    if v.size == 0:
        nan = float("nan")
        return CctSummary(0, nan, nan, nan, nan, nan)
    p50, p95, p99 = np.percentile(v, [50, 95, 99])
    return CctSummary(
        int(v.size), float(v.mean()), float(p50), float(p95), float(p99), float(v.max())
    )


def bin_table(
    instance: Instance, completion: npt.ArrayLike, **bin_kwargs: float
) -> dict[str, CctSummary]:
    """CCT summary per Varys bin and for all coflows (key ``"all"``)."""
    c = cct(instance, completion)
    bins = varys_bins(instance, **bin_kwargs)  # type: ignore[arg-type]
    table = {b: summarize(c[bins == b]) for b in BINS}
    table["all"] = summarize(c)
    return table
