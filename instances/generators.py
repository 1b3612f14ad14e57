"""Random instance generators: uniform, Facebook-like, concurrent open shop, single port.

Every generator takes ``seed`` (an ``int``, a :class:`numpy.random.Generator` or ``None``),
normalises it once with :func:`numpy.random.default_rng` and draws everything from that one
generator; there is no global random state. The same integer seed always gives the same
instance (``None`` draws fresh entropy, so it is not reproducible). Passing a ``Generator``
advances it, which lets one generator drive a whole experiment.

Invalid parameters raise :class:`ValueError` naming the parameter (``TypeError`` for a seed of
the wrong type).

Generators
----------
- :func:`uniform`: random demand matrices with a given density and size range.
- :func:`fb_like`: a synthetic workload calibrated to the public Facebook trace's marginals
  (Varys' four short/long × narrow/wide bins, heavy-tailed sizes, Poisson arrivals at a given
  load); every coflow is an M×R shuffle, so it can be written in the coflow-benchmark format.
- :func:`concurrent_open_shop`: diagonal coflows (flows ``i → i`` only), which are exactly
  concurrent-open-shop instances (docs/theory.md#cos).
- :func:`single_port`: ``m = 1`` and one flow per coflow, i.e. ``1||Σ w_j C_j``
  (docs/theory.md#basic-facts, F2).

Transformations
---------------
- :func:`assign_weights`: random weights in a range (YosemiteSim uses ``{1, 2, 3, 4}``).
- :func:`assign_deadlines`: Varys' deadlines ``D = Γ_empty · (1 + U(0, x))``, at least 200 ms.
- :func:`poisson_releases`: arrival times of a Poisson process.
- :func:`spread_flow_starts`: per-flow start offsets inside each coflow and compressed coflow
  arrivals, so coflows interleave (CODA's identification workloads).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy import special

from coflowlab.instance import Fabric, Instance, Units

__all__ = [
    "FB_BIN_FRACTIONS",
    "SeedLike",
    "assign_deadlines",
    "assign_weights",
    "concurrent_open_shop",
    "fb_like",
    "poisson_releases",
    "single_port",
    "spread_flow_starts",
    "uniform",
]

SeedLike = int | np.random.Generator | None
"""What every ``seed`` argument accepts."""

FB_BIN_FRACTIONS: dict[str, float] = {"SN": 0.52, "LN": 0.16, "SW": 0.15, "LW": 0.17}
"""Share of coflows per Varys bin (short/long × narrow/wide) in Chowdhury's thesis, Table 5.3
(§5.7.1; docs/varys.md#bins). Short: longest flow < 5 MB. Narrow: at most 50 flows."""

# ---------------------------------------------------------------- fb_like calibration
# Thresholds of the bins (thesis §5.7.1): "short" = longest flow < 5 MB, "narrow" = <= 50 flows.
_SHORT_MB = 5
_NARROW_FLOWS = 50
# Length (longest flow, whole MB) of a short coflow: 1..4 MB with the frequencies of the public
# trace's short coflows (294, 32, 28, 14 of 368 coflows have length 1, 2, 3, 4 MB).
_SHORT_LENGTH_P = np.array([0.80, 0.09, 0.07, 0.04])
# Length of a long coflow: ceil(X), X lognormal truncated to X > 4, so the length is >= 5 MB.
# The trace's long coflows have log-length mean 3.70 and sd 1.37; this truncated lognormal has
# mean 3.74 and sd 1.30.
_LONG_LOG_MU = 3.5
_LONG_LOG_SIGMA = 1.5
# Skew inside a coflow: reducer r's flows carry ceil(length * exp(-|N(0, s)|)) MB (and one
# reducer carries exactly the length). The trace's long coflows have mean log(size / length)
# of -1.44 over their reducers; |N(0, 1.8)| has mean 1.44.
_SKEW_SIGMA = 1.8
# Narrow shuffles: M = floor(51^(U^1.5)); R = 1 with probability 0.6, else floor(51^V) (log-
# uniform on 1..50); pairs with M*R > 50 are drawn again. This gives median M 3, median width 5
# and mean width 11 (the trace's narrow coflows: median M 2-3, mostly R = 1, mean width 10).
_NARROW_M_POWER = 1.5
_NARROW_R1 = 0.6
# Wide shuffles: M = ceil(m * U^p), R = ceil(m * V^p), pairs with M*R <= 50 drawn again. With
# m = 150, p = 1.4 gives about 4,150 flows per wide coflow, so the mean number of flows per
# coflow matches the trace's 1,343 (706,397 flows / 526 coflows).
_WIDE_POWER = 1.4
_MIN_FB_PORTS = 8  # a wide coflow needs M*R > 50 with M, R <= num_ports


# ---------------------------------------------------------------- helpers
def _rng(seed: SeedLike) -> np.random.Generator:
    """Normalises a seed to a :class:`numpy.random.Generator` (the only RNG used)."""
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is None or (isinstance(seed, int | np.integer) and not isinstance(seed, bool)):
        return np.random.default_rng(seed)
    raise TypeError(
        f"seed must be an int, a numpy.random.Generator or None, got {type(seed).__name__}"
    )


def _count(name: str, value: Any, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def _positive(name: str, value: Any, *, allow_zero: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | np.number):
        raise ValueError(f"{name} must be a number, got {value!r}")
    x = float(value)
    if not math.isfinite(x) or x < 0 or (x == 0 and not allow_zero):
        rule = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{name} must be finite and {rule}, got {value!r}")
    return x


def _probability(name: str, value: Any) -> float:
    p = _positive(name, value)
    if p > 1:
        raise ValueError(f"{name} must be in (0, 1], got {value!r}")
    return p


def _range(
    name: str, bounds: Any, *, integral: bool, allow_zero: bool = False
) -> tuple[float, float]:
    """Validates a ``(low, high)`` range: finite, ``0 < low <= high`` (or ``0 <= low``)."""
    if not isinstance(bounds, Sequence) or isinstance(bounds, str) or len(bounds) != 2:
        raise ValueError(f"{name} must be a (low, high) pair, got {bounds!r}")
    low = _positive(f"{name}[0]", bounds[0], allow_zero=allow_zero)
    high = _positive(f"{name}[1]", bounds[1], allow_zero=allow_zero)
    if low > high:
        raise ValueError(f"{name} must have low <= high, got {bounds!r}")
    if integral and (low != int(low) or high != int(high)):
        raise ValueError(f"{name} must have integer bounds when integral=True, got {bounds!r}")
    return low, high


def _draw(
    rng: np.random.Generator, bounds: tuple[float, float], size: int, integral: bool
) -> npt.NDArray[np.float64]:
    """Uniform draws in the closed range ``bounds``; whole numbers when ``integral``."""
    low, high = bounds
    if integral:
        return rng.integers(int(low), int(high), size=size, endpoint=True).astype(float)
    return rng.uniform(low, high, size=size)


def poisson_releases(num: int, rate: float, seed: SeedLike = None) -> npt.NDArray[np.float64]:
    """Returns ``num`` arrival times of a Poisson process of the given rate, the first at 0.

    The ``num - 1`` gaps are independent exponentials with mean ``1 / rate``. The process is
    shifted so that the first arrival is at time 0, as in the public Facebook trace.

    Parameters
    ----------
    num
        Number of arrivals, at least 1.
    rate
        Arrivals per time unit, positive.
    seed
        Seed or generator.

    Returns
    -------
    numpy.ndarray
        Non-decreasing arrival times, ``out[0] == 0``.

    Examples
    --------
    >>> from coflowlab.instances.generators import poisson_releases
    >>> t = poisson_releases(4, rate=2.0, seed=1)
    >>> float(t[0]), bool((t[1:] >= t[:-1]).all())
    (0.0, True)
    """
    n = _count("num", num)
    lam = _positive("rate", rate)
    gaps = _rng(seed).exponential(1.0 / lam, size=n - 1)
    return np.concatenate([[0.0], np.cumsum(gaps)])


# ---------------------------------------------------------------- uniform
def uniform(
    num_ports: int,
    num_coflows: int,
    *,
    density: float = 0.5,
    sizes: tuple[float, float] = (1, 10),
    integral: bool = True,
    release_rate: float | None = None,
    weights: tuple[float, float] | None = None,
    seed: SeedLike = None,
) -> Instance:
    """Returns coflows with random demand matrices on ``num_ports`` unit-capacity ports.

    Each entry ``(i, o)`` of each coflow's ``m × m`` demand matrix is a flow with probability
    ``density``, independently; a coflow that draws no entry gets one uniformly random entry,
    so every coflow has at least one flow.

    Parameters
    ----------
    num_ports
        Number ``m`` of ingress (and egress) ports, capacity 1 each.
    num_coflows
        Number of coflows.
    density
        Probability that an entry of a demand matrix is a flow, in ``(0, 1]``.
    sizes
        Closed range ``(low, high)`` of flow sizes, ``0 < low <= high``; sizes are uniform in
        it (whole numbers when ``integral``).
    integral
        Draw whole-number sizes (and weights). Then the bounds must be integers.
    release_rate
        Coflow arrival rate of a Poisson process (see :func:`poisson_releases`; the first
        coflow arrives at 0); ``None`` releases every coflow at 0.
    weights
        ``None`` for unit weights, or a closed range ``(low, high)``, ``0 <= low``, drawn like
        the sizes.
    seed
        Seed or generator.

    Returns
    -------
    Instance
        Dimensionless units. Flows are ordered by coflow, then row-major.

    Raises
    ------
    ValueError
        If a parameter is invalid; the message names it.

    Examples
    --------
    >>> from coflowlab.instances.generators import uniform
    >>> inst = uniform(3, 5, density=0.4, seed=7)
    >>> inst.num_coflows, inst.num_ports, bool((inst.width >= 1).all())
    (5, 3, True)
    >>> inst == uniform(3, 5, density=0.4, seed=7)
    True
    """
    m = _count("num_ports", num_ports)
    n = _count("num_coflows", num_coflows)
    dens = _probability("density", density)
    size_range = _range("sizes", sizes, integral=integral)
    weight_range = (
        None if weights is None else _range("weights", weights, integral=integral, allow_zero=True)
    )
    rate = None if release_rate is None else _positive("release_rate", release_rate)
    rng = _rng(seed)

    mask = (rng.random((n, m * m)) < dens) if dens < 1 else np.ones((n, m * m), dtype=bool)
    empty = np.flatnonzero(~mask.any(axis=1))
    if empty.size:
        mask[empty, rng.integers(0, m * m, size=empty.size)] = True
    coflow, cell = np.nonzero(mask)
    flow_size = _draw(rng, size_range, coflow.size, integral)
    release = None if rate is None else poisson_releases(n, rate, rng)
    weight = None if weight_range is None else _draw(rng, weight_range, n, integral)
    return Instance(
        Fabric(m),
        coflow,
        cell // m,
        cell % m,
        flow_size,
        coflow_release=release,
        coflow_weight=weight,
        num_coflows=n,
    )


# ---------------------------------------------------------------- concurrent open shop
def concurrent_open_shop(
    num_machines: int,
    num_jobs: int,
    *,
    sizes: tuple[float, float] = (1, 10),
    integral: bool = True,
    density: float = 1.0,
    weights: tuple[float, float] | None = None,
    seed: SeedLike = None,
) -> Instance:
    """Returns a concurrent-open-shop instance as diagonal coflows (flows ``i → i`` only).

    Job ``j`` has an operation on machine ``i`` with probability ``density`` (at least one
    operation per job); the operation is the flow ``i → i``, which loads ingress ``i`` and
    egress ``i`` equally, so ports pair up into ``num_machines`` machines and the coflow problem
    *is* the concurrent-open-shop problem (docs/theory.md#cos).

    Parameters
    ----------
    num_machines
        Number of machines (= ports ``m``).
    num_jobs
        Number of jobs (= coflows).
    sizes
        Closed range of processing times, drawn as in :func:`uniform`.
    integral
        Whole-number processing times (and weights).
    density
        Probability that a job has an operation on a machine, in ``(0, 1]``.
    weights
        ``None`` for unit weights, or a closed range ``(low, high)``.
    seed
        Seed or generator.

    Returns
    -------
    Instance
        Every flow has ``src == dst``.

    Examples
    --------
    >>> from coflowlab.instances.generators import concurrent_open_shop
    >>> inst = concurrent_open_shop(3, 4, seed=0)
    >>> bool((inst.flow_src == inst.flow_dst).all()), inst.num_flows
    (True, 12)
    """
    m = _count("num_machines", num_machines)
    n = _count("num_jobs", num_jobs)
    dens = _probability("density", density)
    size_range = _range("sizes", sizes, integral=integral)
    weight_range = (
        None if weights is None else _range("weights", weights, integral=integral, allow_zero=True)
    )
    rng = _rng(seed)
    mask = (rng.random((n, m)) < dens) if dens < 1 else np.ones((n, m), dtype=bool)
    empty = np.flatnonzero(~mask.any(axis=1))
    if empty.size:
        mask[empty, rng.integers(0, m, size=empty.size)] = True
    job, machine = np.nonzero(mask)
    flow_size = _draw(rng, size_range, job.size, integral)
    weight = None if weight_range is None else _draw(rng, weight_range, n, integral)
    return Instance(
        Fabric(m), job, machine, machine, flow_size, coflow_weight=weight, num_coflows=n
    )


# ---------------------------------------------------------------- single port
def single_port(
    num_jobs: int,
    *,
    sizes: tuple[float, float] = (1, 10),
    weights: tuple[float, float] | None = (1, 5),
    integral: bool = True,
    seed: SeedLike = None,
) -> Instance:
    """Returns ``1||Σ w_j C_j``: one port (``m = 1``) and one flow ``0 → 0`` per coflow.

    On this instance Smith's rule (non-increasing ``w_j / p_j``) is optimal
    (docs/theory.md#basic-facts, F2).

    Parameters
    ----------
    num_jobs
        Number of jobs (= coflows).
    sizes
        Closed range of processing times (= flow sizes).
    weights
        Closed range of weights, or ``None`` for unit weights.
    integral
        Whole-number sizes and weights.
    seed
        Seed or generator.

    Returns
    -------
    Instance
        ``num_ports == 1`` and ``num_flows == num_jobs``.

    Examples
    --------
    >>> from coflowlab.instances.generators import single_port
    >>> inst = single_port(4, seed=3)
    >>> inst.num_ports, inst.num_flows
    (1, 4)
    """
    n = _count("num_jobs", num_jobs)
    size_range = _range("sizes", sizes, integral=integral)
    weight_range = (
        None if weights is None else _range("weights", weights, integral=integral, allow_zero=True)
    )
    rng = _rng(seed)
    flow_size = _draw(rng, size_range, n, integral)
    weight = None if weight_range is None else _draw(rng, weight_range, n, integral)
    zeros = np.zeros(n, dtype=np.int64)
    return Instance(Fabric(1), np.arange(n), zeros, zeros, flow_size, coflow_weight=weight)


# ---------------------------------------------------------------- FB-like
def _apportion(n: int, fractions: npt.NDArray[np.float64]) -> npt.NDArray[np.int64]:
    """Largest-remainder apportionment of ``n`` items to the given fractions (sum 1)."""
    exact = n * fractions
    counts = np.floor(exact).astype(np.int64)
    short = n - int(counts.sum())
    order = np.argsort(-(exact - counts), kind="stable")
    counts[order[:short]] += 1
    return counts


def _shuffle_shapes(
    rng: np.random.Generator, wide: npt.NDArray[np.bool_], m: int
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Mapper and reducer counts ``(M, R)``: ``M*R <= 50`` when narrow, ``> 50`` when wide."""
    n = wide.size
    mappers = np.zeros(n, dtype=np.int64)
    reducers = np.zeros(n, dtype=np.int64)
    todo = np.arange(n)
    log_top = math.log(_NARROW_FLOWS + 1)
    while todo.size:
        k = todo.size
        is_wide = wide[todo]
        # narrow proposals: M = floor(51^(U^1.5)); R = 1 or log-uniform on 1..50
        nm = np.floor(np.exp(log_top * rng.random(k) ** _NARROW_M_POWER)).astype(np.int64)
        nr = np.floor(np.exp(rng.uniform(0.0, log_top, size=k))).astype(np.int64)
        nr[rng.random(k) < _NARROW_R1] = 1
        # wide proposals: ceil(m * U^p)
        wm = np.ceil(m * rng.random(k) ** _WIDE_POWER).astype(np.int64)
        wr = np.ceil(m * rng.random(k) ** _WIDE_POWER).astype(np.int64)
        mm = np.clip(np.where(is_wide, wm, nm), 1, m)
        rr = np.clip(np.where(is_wide, wr, nr), 1, m)
        ok = np.where(is_wide, mm * rr > _NARROW_FLOWS, mm * rr <= _NARROW_FLOWS)
        mappers[todo[ok]] = mm[ok]
        reducers[todo[ok]] = rr[ok]
        todo = todo[~ok]
    return mappers, reducers


def _lengths(rng: np.random.Generator, long: npt.NDArray[np.bool_]) -> npt.NDArray[np.int64]:
    """Longest flow of each coflow in whole MB: 1..4 when short, >= 5 (heavy tail) when long."""
    n = long.size
    short_len = rng.choice(np.arange(1, _SHORT_MB), size=n, p=_SHORT_LENGTH_P)
    # inverse-CDF sampling of log X ~ N(mu, sigma) truncated to X > SHORT_MB - 1
    lo = special.ndtr((math.log(_SHORT_MB - 1) - _LONG_LOG_MU) / _LONG_LOG_SIGMA)
    u = rng.uniform(lo, 1.0, size=n)
    x = np.exp(_LONG_LOG_MU + _LONG_LOG_SIGMA * special.ndtri(u))
    long_len = np.maximum(np.ceil(x), _SHORT_MB).astype(np.int64)
    return np.where(long, long_len, short_len)


def fb_like(
    num_coflows: int,
    *,
    num_ports: int = 150,
    load: float = 0.9,
    capacity: float = 0.125,
    weights: tuple[float, float] | None = None,
    seed: SeedLike = None,
) -> Instance:
    """Returns a synthetic FB-like workload of M×R shuffles, in MB and ms.

    The generator is calibrated to the published marginals of the public Facebook coflow trace
    (``FB2010-1Hr-150-0``; the ``coflow/coflow-benchmark`` README) and of Chowdhury's thesis
    (PhD thesis, UC Berkeley 2015: Table 5.3, §5.7.1, and Appendix A). It does not read the trace.

    **Bins.** Coflows are split by largest-remainder apportionment into Varys' four bins at
    the shares of :data:`FB_BIN_FRACTIONS` (SN 52%, LN 16%, SW 15%, LW 17%), then shuffled.
    "Short" means the longest flow is < 5 MB, "narrow" means at most 50 flows. The bin is
    guaranteed by construction: the sampled shape and length respect its thresholds.

    **Shape.** Coflow ``k`` is an ``M_k × R_k`` shuffle on ``M_k`` distinct mapper ports and
    ``R_k`` distinct reducer ports chosen uniformly (a port may be both a mapper and a reducer,
    as in the trace). Narrow: ``M = floor(51^(U^1.5))``, ``R = 1`` with probability 0.6 else
    log-uniform on 1..50, redrawn until ``M·R <= 50`` (median width 5, mean 11). Wide:
    ``M, R = ceil(m · U^1.4)``, redrawn until ``M·R > 50``; at ``m = 150`` this gives about
    4,150 flows per wide coflow, so the mean number of flows per coflow matches the trace's
    1,343 and ``fb_like(5260)`` (10× the trace) has about 7 million flows.

    **Sizes** (whole MB, as in the trace). The length ``ℓ`` (largest flow) is 1, 2, 3 or 4 MB
    with probabilities 0.80/0.09/0.07/0.04 when short (the trace's short coflows), and
    ``ceil(X)`` with ``log X ~ N(3.5, 1.5)`` truncated to ``X > 4`` when long (heavy-tailed,
    matching the trace's log-length mean 3.7 and sd 1.4). Reducer ``r`` receives
    ``s_r = ceil(ℓ · exp(-|N(0, 1.8)|))`` MB from *each* mapper (one random reducer gets exactly
    ``ℓ``), so every flow to a reducer has the same size and the coflow can be written in the
    coflow-benchmark format (reducer total ``M · s_r``).

    **Arrivals and load.** Coflows arrive as a Poisson process (:func:`poisson_releases`, first
    at 0), rounded to whole ms. The rate ``λ`` is set from the sampled sizes so that the
    *busiest port* is offered ``load`` of its capacity over the expected arrival span:
    with ``L_v`` the total data of all coflows through port ``v`` (over all ``2m`` ingress and
    egress ports) and ``c`` the capacity,

    ``load = max_v L_v / (c · n / λ)``, i.e. ``λ = load · n · c / max_v L_v``.

    By this definition the public trace itself has load about 0.97 (busiest port 440,422 MB,
    3,523 s at 0.125 MB/ms, over a 3,629 s span).

    Parameters
    ----------
    num_coflows
        Number ``n`` of coflows (526 in the trace).
    num_ports
        Number ``m`` of ports (racks), at least 8 so that wide coflows fit.
    load
        Offered load of the busiest port, as defined above; positive.
    capacity
        Capacity of every port in MB per ms; 0.125 is CoflowSim's 1 MiB per 8 ms
        (docs/coflowsim-model.md#units), read as 1 MB per 8 ms.
    weights
        ``None`` for unit weights, or a closed range ``(low, high)`` of whole numbers,
        ``0 <= low <= high``, drawn uniformly after everything else (so the same seed gives
        the same coflows with or without weights); ``(1, 4)`` is YosemiteSim's weight column.
    seed
        Seed or generator.

    Returns
    -------
    Instance
        Units MB and ms; flows ordered by coflow, then mapper, then reducer.

    Raises
    ------
    ValueError
        If a parameter is invalid; the message names it.

    Notes
    -----
    What is *not* reproduced: the trace's bursty, non-Poisson arrivals; correlation between
    width and skew; per-mapper skew (absent from the trace too); the thesis's byte shares per
    bin (0.01/0.67/0.22/99.10%) hold only roughly (long-wide coflows carry almost all bytes).

    Examples
    --------
    >>> import numpy as np
    >>> from coflowlab.instances.generators import fb_like
    >>> inst = fb_like(50, seed=1)
    >>> inst.units.size, inst.units.time, inst.num_ports
    ('MB', 'ms', 150)
    >>> bool((inst.flow_size == np.round(inst.flow_size)).all())
    True
    """
    n = _count("num_coflows", num_coflows)
    m = _count("num_ports", num_ports, minimum=_MIN_FB_PORTS)
    rho = _positive("load", load)
    cap = _positive("capacity", capacity)
    weight_range = (
        None if weights is None else _range("weights", weights, integral=True, allow_zero=True)
    )
    rng = _rng(seed)

    # bins: 0 SN, 1 LN, 2 SW, 3 LW (exact shares, random order)
    fractions = np.array(list(FB_BIN_FRACTIONS.values()))
    bins = rng.permutation(np.repeat(np.arange(4), _apportion(n, fractions)))
    long = (bins == 1) | (bins == 3)
    wide = bins >= 2
    mappers, reducers = _shuffle_shapes(rng, wide, m)
    length = _lengths(rng, long)

    # reducer sizes (MB per flow), flat over all reducers of all coflows
    red_ptr = np.concatenate([[0], np.cumsum(reducers)])
    red_coflow = np.repeat(np.arange(n), reducers)
    ratio = np.exp(-np.abs(rng.normal(0.0, _SKEW_SIGMA, size=red_coflow.size)))
    red_len = length[red_coflow]
    red_size = np.clip(np.ceil(red_len * ratio), 1, red_len)
    red_size[red_ptr[:-1] + rng.integers(0, reducers)] = length  # the longest reducer

    # port placement: the first M (R) entries of a random permutation of the ports
    map_ports = np.argsort(rng.random((n, m)), axis=1)
    red_ports = np.argsort(rng.random((n, m)), axis=1)

    # flows: coflow-major, then mapper, then reducer
    width = mappers * reducers
    flow_ptr = np.concatenate([[0], np.cumsum(width)])
    flow_coflow = np.repeat(np.arange(n), width)
    local = np.arange(int(flow_ptr[-1]), dtype=np.int64) - flow_ptr[flow_coflow]
    r_count = reducers[flow_coflow]
    mapper_idx = local // r_count
    reducer_idx = local - mapper_idx * r_count
    del local, r_count
    flow_src = map_ports[flow_coflow, mapper_idx]
    flow_dst = red_ports[flow_coflow, reducer_idx]
    flow_size = red_size[red_ptr[flow_coflow] + reducer_idx]
    del mapper_idx, reducer_idx

    # arrivals: rate from the busiest port's load
    busiest = max(
        float(np.bincount(flow_src, weights=flow_size, minlength=m).max()),
        float(np.bincount(flow_dst, weights=flow_size, minlength=m).max()),
    )
    rate = rho * n * cap / busiest
    release = np.round(poisson_releases(n, rate, rng))
    # drawn last, so that asking for weights leaves every other draw (and seed) unchanged
    weight = None if weight_range is None else _draw(rng, weight_range, n, True)
    return Instance(
        Fabric(m, cap, cap),
        flow_coflow,
        flow_src,
        flow_dst,
        flow_size,
        coflow_release=release,
        coflow_weight=weight,
        num_coflows=n,
        units=Units("MB", "ms"),
    )


# ---------------------------------------------------------------- weights and deadlines
def assign_weights(
    instance: Instance,
    low: float = 1,
    high: float = 4,
    *,
    integral: bool = True,
    seed: SeedLike = None,
) -> Instance:
    """Returns a copy of ``instance`` with random coflow weights in ``[low, high]``.

    The default ``{1, 2, 3, 4}`` is the weight column of YosemiteSim's weighted copy of the
    Facebook trace (``shared/data/README.md``).

    Parameters
    ----------
    instance
        The instance; nothing else changes.
    low, high
        Closed range of weights, ``0 <= low <= high``.
    integral
        Whole-number weights (uniform on ``low..high``); otherwise uniform reals.
    seed
        Seed or generator.

    Returns
    -------
    Instance
        The re-weighted copy.

    Examples
    --------
    >>> import numpy as np
    >>> from coflowlab.instances.generators import assign_weights, single_port
    >>> w = assign_weights(single_port(6, weights=None, seed=0), seed=1).coflow_weight
    >>> bool(((w >= 1) & (w <= 4) & (w == np.round(w))).all())
    True
    """
    bounds = _range("weights (low, high)", (low, high), integral=integral, allow_zero=True)
    weight = _draw(_rng(seed), bounds, instance.num_coflows, integral)
    return instance.replace(coflow_weight=weight)


_DEFAULT_MIN_DEADLINE = {"s": 0.2, "ms": 200.0, "us": 200_000.0}
"""Varys' 200 ms minimum deadline in the time units it can be converted to."""


def assign_deadlines(
    instance: Instance,
    x: float = 1.0,
    *,
    minimum: float | None = None,
    seed: SeedLike = None,
) -> Instance:
    """Returns a copy of ``instance`` with Varys' random deadlines.

    Following Chowdhury's thesis (§5.7.1, §5.7.3; docs/varys.md#deadlines), coflow
    ``k`` gets the deadline (relative to its release)

    ``D_k = max(Γ_k · (1 + U_k), minimum)``, with ``U_k ~ U(0, x)`` independent,

    where ``Γ_k`` is its minimum completion time on an empty fabric,
    :attr:`Instance.bottleneck`. The thesis's default is ``x = 1``, varied from 0.1 to 10, and
    "the minimum deadline is 200 milliseconds".

    Parameters
    ----------
    instance
        The instance; nothing else changes.
    x
        Spread of the slack, ``>= 0``.
    minimum
        Smallest deadline, in the instance's time unit, ``>= 0``. Default: 200 ms converted to
        the instance's time unit when it is ``"ms"``, ``"s"`` or ``"us"``, else 0 (dimensionless
        instances have no natural minimum).
    seed
        Seed or generator.

    Returns
    -------
    Instance
        The copy with deadlines.

    Examples
    --------
    >>> from coflowlab.instance import Instance
    >>> from coflowlab.instances.generators import assign_deadlines
    >>> inst = assign_deadlines(Instance.from_matrices([[[2]], [[5]]]), x=1.0, seed=0)
    >>> d = inst.coflow_deadline
    >>> bool((d >= [2, 5]).all() and (d <= [4, 10]).all())
    True
    """
    spread = _positive("x", x, allow_zero=True)
    if minimum is None:
        floor = _DEFAULT_MIN_DEADLINE.get(instance.units.time, 0.0)
    else:
        floor = _positive("minimum", minimum, allow_zero=True)
    gamma = instance.bottleneck
    deadline = gamma * (1.0 + _rng(seed).uniform(0.0, spread, size=gamma.size))
    return instance.replace(coflow_deadline=np.maximum(deadline, floor))


def spread_flow_starts(
    instance: Instance,
    spread: float,
    *,
    exp_mean: float = 0.0,
    arrival_scale: float = 1.0,
    seed: SeedLike = None,
) -> Instance:
    """Returns a copy of ``instance`` whose flows start at different times inside each coflow.

    Flow ``f`` of coflow ``k`` starts at ``arrival_scale · r_k + U_f + E_f`` with
    ``U_f ~ U(0, spread)`` and ``E_f ~ Exp(exp_mean)`` (0 when ``exp_mean = 0``), all
    independent; the coflow's release becomes its earliest flow start (so its CCT is measured
    from its first flow, as Philae and CODA define it). CODA's workloads (Zhang et al.,
    SIGCOMM 2016, §6.1 and §6.3): Spark-like ``spread = 100`` ms; Hadoop-like ``spread = 1000``
    ms and ``exp_mean = 100`` ms; "stretched" ``spread = 5000`` ms (Hadoop also ``exp_mean =
    1000`` ms). ``arrival_scale < 1`` squeezes the coflow arrivals together, so that more of
    them overlap (interleave); the two knobs set how hard identification is.

    Parameters
    ----------
    instance
        The instance; sizes, ports and weights are kept, deadlines stay relative to the new
        releases. Dependencies are kept (the simulator still enforces starts-after).
    spread
        Width of the uniform start offset, ``>= 0``, in the instance's time unit.
    exp_mean
        Mean of the extra exponential delay, ``>= 0``.
    arrival_scale
        Factor on the coflow releases, ``>= 0`` (0: every coflow at time 0).
    seed
        Seed or generator.

    Returns
    -------
    Instance
        The copy with per-flow release times.

    Examples
    --------
    >>> from coflowlab.instance import Coflow, Instance
    >>> from coflowlab.instances.generators import spread_flow_starts
    >>> inst = Instance.from_coflows([Coflow([(0, 0, 1.0)] * 3, release=100.0)], 1)
    >>> out = spread_flow_starts(inst, 50.0, seed=1)
    >>> bool(((out.flow_release >= 100) & (out.flow_release <= 150)).all())
    True
    >>> out.coflow_release.tolist() == [out.flow_release.min()]
    True
    """
    width = _positive("spread", spread, allow_zero=True)
    mean = _positive("exp_mean", exp_mean, allow_zero=True)
    scale = _positive("arrival_scale", arrival_scale, allow_zero=True)
    rng = _rng(seed)
    nf = instance.num_flows
    offset = rng.uniform(0.0, width, size=nf) if width > 0 else np.zeros(nf)
    if mean > 0:
        offset = offset + rng.exponential(mean, size=nf)
    start = scale * instance.coflow_release[instance.flow_coflow] + offset
    first = np.full(instance.num_coflows, np.inf)
    np.minimum.at(first, instance.flow_coflow, start)
    return instance.replace(coflow_release=first, flow_release=start)
