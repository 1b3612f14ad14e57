"""α-point stretching of the fluid time-indexed LP (Chowdhury, Khuller, Purohit, Yang, You,
"Near optimal coflow scheduling in networks", SPAA 2019; docs/theory.md#alpha-point and
property P14).

The paper's technique (time-indexed LP, α with density 2α, schedule stretched by 1/α) is
summarized in docs/theory.md; the derivation below is ours, for the big switch (a star
network) in the fluid model.

The LP schedule
---------------
Solve the fluid time-indexed LP (:func:`coflowlab.formulations.time_indexed.
solve_time_indexed_lp_values`): slots of length ``δ``, ``z[e, t]`` the amount flow ``e``
sends in slot ``t`` (covering ``[(t-1)δ, tδ)``), ``Σ_{e ∋ v} z[e, t] ≤ c_v δ``, and
``y[j, t] ≤ S[e, t] / d_e`` for the flows of ``j`` (``S`` the cumulative amount). Read it as a
fluid schedule: flow ``e`` sends ``z[e, t] / δ`` uniformly during slot ``t``; ``F_e(s)`` is
its cumulative amount, ``h_e = F_e / d_e`` and ``g_j(s) = min_{e ∈ j} h_e(s)`` (all
continuous, piecewise linear, non-decreasing, from 0 to 1 by ``Tδ``). Port rates are
``Σ z / δ ≤ c_v``. Let ``C_e(α) = min{s : h_e(s) ≥ α}`` and ``C_j(α) = max_{e ∈ j} C_e(α)
= min{s : g_j(s) ≥ α}``.

The stretch
-----------
For ``α ∈ (0, 1]`` flow ``e`` sends at time ``τ`` at the LP rate of time ``ατ`` until it has
sent ``d_e``: its cumulative amount is ``G_e(τ) = min(d_e, F_e(ατ) / α)``. Its rate at ``τ``
is ``F_e'(ατ)``, so every port carries at time ``τ`` what it carries in the LP schedule at
``ατ``: capacities hold. ``G_e`` reaches ``d_e`` exactly when ``F_e(ατ) = α d_e``, i.e. at
``τ = C_e(α) / α``, so coflow ``j`` completes at ``C_j(α) / α`` (:func:`alpha_stretch`).

Release times
-------------
The LP lets a flow use the slot containing its release (``tδ > r_e``), so reading slot ``t``
uniformly may send from ``(t-1)δ < r_e``. The stretch alone does not repair this: it is the
identity at ``α = 1``, and a flow released in ``(0, δ)`` may use slot 1, which starts at 0
for every ``α``. We therefore **solve the LP on a slot grid aligned with the releases**: every
``r_e`` a multiple of ``δ`` (:func:`release_slot_length`). Then a flow's first usable slot
starts exactly at its release, the LP schedule sends nothing before ``r_e``, and the stretched
one sends at ``τ`` only if the LP sends at ``ατ ≥ r_e``, so ``τ ≥ ατ ≥ r_e``. Such a grid is
as valid a bound as the default one (the LP's docstring: any ``δ ≤ min_e d_e/κ_e`` gives a
lower bound on the fluid optimum). If the releases are rationals with common grid ``g``
(their gcd), the aligned slot lengths are exactly ``g/k``, ``k = 1, 2, ...``; we take the
longest one not above the default ``δ``. Releases that are not (close to) rationals with a
denominator at most :data:`MAX_DENOMINATOR`, and values from a non-aligned LP, are refused
with an error naming the flow and its release.

Guarantee: ``E[Σ w C] ≤ 2·TI-LP`` (our derivation)
-------------------------------------------------
Draw ``α`` with density ``2α`` on ``(0, 1]`` (``α = sqrt(U)``). Then
``E[C_j(α)/α] = ∫_0^1 2α C_j(α)/α dα = 2 ∫_0^1 C_j(α) dα``, and by the layer-cake formula
(``C_j(α) > s`` exactly when ``g_j(s) < α``) ``∫_0^1 C_j(α) dα = ∫_0^∞ (1 - g_j(s)) ds``.
``g_j`` is non-decreasing, so on slot ``t`` it is at least its value at the slot's start,
``min_e S[e, t-1]/d_e ≥ y[j, t-1]``; hence ``∫_0^∞ (1 - g_j) ≤ δ Σ_{t=0}^{T-1} (1 - y[j, t])``,
the LP's completion of ``j``. Weighting and summing, ``E[Σ_j w_j C_j(α)/α] ≤ 2·TI-LP
≤ 2·OPT_fluid``. (This holds for any feasible LP solution, hence also with ``strengthen``.)

Derandomization and the exact expectation
-----------------------------------------
``g_j`` is piecewise linear with kinks at slot ends and where the minimizing flow changes
inside a slot (the lower envelope of the flows' lines, computed exactly). Its inverse
``C_j(α)`` is piecewise linear in ``α`` between the values of ``g_j`` at those kinks (the
*breakpoints*), non-decreasing and left-continuous. Between two consecutive breakpoints of
all coflows, ``C_j(α) = p_j + q_j α`` for every ``j``, so the cost
``Φ(α) = Σ_j w_j C_j(α)/α = P/α + Q`` is monotone there, and its infimum over the closed
piece is at an end: at the right end it is attained (left-continuity); the right-limit at the
left end is at least ``Φ`` there (``C_j`` non-decreasing). Below the first breakpoint every
``C_j`` is on its first rising piece, ``p_j = `` its start time ``≥ 0``, so ``Φ`` decreases
towards the first breakpoint. Hence ``min_{α ∈ (0,1]} Φ`` is attained at a breakpoint, and
scanning them finds it; being at most the mean, it is ``≤ 2·TI-LP`` deterministically. The
exact expectation ``2 Σ_j w_j ∫ (1 - g_j)`` is the trapezoid rule on the kinks of ``g_j``
(exact for piecewise-linear functions), reported as ``details["expected_cost"]``.

Solver precision
----------------
The LP's values are feasible to the solver's tolerance only. Before stretching they are made
exact: amounts below ``1e-8 d_e`` are dropped (solver noise; kept, a trickle far below the
verifier's rate tolerance would end a flow long after its bytes are essentially sent), each
flow's amounts are scaled to sum to ``d_e``, and if a port then carries more than ``c_v δ`` in
a slot by a relative ``η`` (about the solver's tolerance), the LP schedule is read with slots
of length ``δ(1 + η)``. Every time, hence the cost, grows by the factor ``1 + η``
(``details["dilation"]``); the tests compare with ``2·TI-LP`` within a relative ``1e-6``.

Dependencies between coflows are not supported (the stretched schedule would not respect
them).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from functools import reduce
from typing import Any

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from coflowlab.exceptions import InvalidInstanceError, ModelTooLargeError, SolverError
from coflowlab.formulations.time_indexed import (
    MAX_LP_SIZE,
    TimeIndexedLPValues,
    default_slot_length,
    solve_time_indexed_lp_values,
)
from coflowlab.instance import Instance
from coflowlab.schedules import FluidSchedule
from coflowlab.solution import Guarantee, Solution, approximation_solution
from coflowlab.solvers import SolverOptions, SolveStatus

__all__ = [
    "ALPHA_POINT_DERANDOMIZED_GUARANTEE",
    "ALPHA_POINT_GUARANTEE",
    "MAX_DENOMINATOR",
    "AlphaProfile",
    "alpha_profile",
    "alpha_stretch",
    "release_slot_length",
    "sample_alpha",
    "solve_alpha_point",
    "solve_alpha_point_derandomized",
]

_SOURCE = (
    "Chowdhury, Khuller, Purohit, Yang, You, Near optimal coflow scheduling in networks, "
    "SPAA 2019 (α-point stretching); derivation for the big switch in "
    "coflowlab.approximations.alpha_point; docs/theory.md#alpha-point"
)
ALPHA_POINT_GUARANTEE = Guarantee(
    2.0,
    "time-indexed-lp",
    "E[Σ w C] ≤ 2·TI-LP (α with density 2α on (0, 1]; fluid model)",
    _SOURCE,
    in_expectation=True,
)
ALPHA_POINT_DERANDOMIZED_GUARANTEE = Guarantee(
    2.0,
    "time-indexed-lp",
    "Σ w C ≤ 2·TI-LP (the best α over the breakpoints is at most the mean; fluid model)",
    _SOURCE,
)

MAX_DENOMINATOR = 10**6
"""Largest denominator with which release times are read as rationals to align the slot grid
(:func:`release_slot_length`)."""

_NOISE = 1e-8  # LP amounts below this fraction of the flow's size are solver noise
_RATIONAL_RTOL = 1e-14  # a release is that rational up to float rounding
_ALIGN_RTOL = 1e-9  # relative slack on "a release is on the grid" (as the LP's own test)


# ---------------------------------------------------------------- the slot grid
def _flow_named(instance: Instance, e: int) -> str:
    return f"coflow {int(instance.flow_coflow[e])}, flow {e}"


def release_slot_length(instance: Instance, slot_length: float | None = None) -> float:
    """A slot length ``δ`` that divides every release time (module docstring, *Release
    times*), at most ``slot_length`` (default :func:`~coflowlab.formulations.time_indexed.
    default_slot_length`).

    With releases ``r_e = p_e/q_e`` (denominators ``≤`` :data:`MAX_DENOMINATOR`), the grids
    containing every release are exactly ``g/k`` for integers ``k``, ``g`` the releases' gcd
    (Bézout: ``g`` is an integer combination of them); this returns the longest one not above
    the limit. Given ``slot_length`` is only checked when it already divides every release.

    Raises
    ------
    InvalidInstanceError
        A release is not a rational with a small denominator, or ``slot_length`` does not
        divide it (the flow and release are named).

    Examples
    --------
    >>> from coflowlab import Instance
    >>> inst = Instance.from_matrices([[[2]], [[3]]], release=[0.0, 1.5])
    >>> release_slot_length(inst), release_slot_length(inst.replace(coflow_release=[0, 0.6]))
    (0.75, 0.6)
    """
    release = instance.flow_release
    limit = default_slot_length(instance) if slot_length is None else float(slot_length)
    late = np.flatnonzero(release > 0)
    if slot_length is not None:
        rel = release[late] / limit
        off = np.abs(rel - np.round(rel)) > _ALIGN_RTOL * np.maximum(rel, 1.0)
        if off.any():
            e = int(late[np.argmax(off)])
            raise InvalidInstanceError(
                f"alpha-point: {_flow_named(instance, e)}: release {release[e]:.10g} is not a "
                f"multiple of slot_length={limit:.10g}; the stretched schedule would send "
                "before it (leave slot_length unset to get an aligned grid)"
            )
        return limit
    if not late.size:
        return limit
    fracs = []
    for e in late.tolist():
        r = float(release[e])
        f = Fraction(r).limit_denominator(MAX_DENOMINATOR)
        if abs(float(f) - r) > _RATIONAL_RTOL * max(r, 1.0):
            raise InvalidInstanceError(
                f"alpha-point: {_flow_named(instance, e)}: release {r!r} is not a rational "
                f"with denominator at most {MAX_DENOMINATOR}, so no slot grid contains every "
                "release and the stretched schedule could send before it; round the "
                "release times (e.g. to a multiple of 0.01)"
            )
        fracs.append(f)
    den = reduce(math.lcm, (f.denominator for f in fracs))
    g = Fraction(reduce(math.gcd, (f.numerator * (den // f.denominator) for f in fracs)), den)
    k = max(1, math.ceil(g / Fraction(limit)))
    return float(g / k)


# ---------------------------------------------------------------- the LP schedule
@dataclass(frozen=True, eq=False)
class _FluidLP:
    """The LP read as an exactly feasible fluid schedule (module docstring, *Solver
    precision*): ``done[e, t] = F_e(t·slot)/d_e`` at slot ends, ``done[:, 0] = 0`` and
    ``done[:, T] = 1`` exactly."""

    done: npt.NDArray[np.float64]  # (F, T + 1)
    slot: float  # δ(1 + η)
    lp_slot: float  # δ
    dilation: float  # η


def _no_dependencies(instance: Instance) -> None:
    if instance.dependencies.size:
        a, b = (int(x) for x in instance.dependencies[0])
        raise InvalidInstanceError(
            f"alpha-point: coflow {b} depends on coflow {a}; the α-stretched schedule does not "
            "respect dependencies"
        )


def _fluid_lp(instance: Instance, values: TimeIndexedLPValues) -> _FluidLP:
    """Reads the LP values as an exactly feasible fluid schedule (module docstring, *Solver
    precision*), after checking that no flow is sent in a slot starting before its release."""
    _no_dependencies(instance)
    nf, T, delta = instance.num_flows, values.horizon, values.slot_length
    size = instance.flow_size
    amount = np.zeros((nf, T))
    amount[values.flow, values.slot - 1] = values.amount
    amount[amount < _NOISE * size[:, None]] = 0.0
    # releases: a flow sends only in slots starting at or after its release
    release = instance.flow_release
    first = np.argmax(amount > 0, axis=1)  # first slot with an amount (0-based)
    early = (first * delta < release - _ALIGN_RTOL * np.maximum(release, 1.0)) & (
        amount.sum(axis=1) > 0
    )
    if early.any():
        e = int(np.argmax(early))
        raise InvalidInstanceError(
            f"alpha-point: {_flow_named(instance, e)} is released at {release[e]:.10g} but the "
            f"LP sends it in slot {first[e] + 1}, which starts at {first[e] * delta:.10g} "
            f"(slot length {delta:.10g} is not aligned with the release); no stretch repairs "
            "this near α = 1: solve the LP with slot_length=release_slot_length(instance)"
        )
    total = amount.sum(axis=1)
    missing = np.flatnonzero(total <= 0)
    if missing.size:
        e = int(missing[0])
        raise SolverError(f"alpha-point: the LP values send nothing of {_flow_named(instance, e)}")
    done = np.zeros((nf, T + 1))
    done[:, 1:] = np.minimum(np.cumsum(amount, axis=1) / total[:, None], 1.0)
    # exactly 1 from the end of each flow's last sending slot (the cumulative sum may round
    # to just below 1 there, which would move the flow's α = 1 point to the horizon)
    last = T - np.argmax(amount[:, ::-1] > 0, axis=1)
    done[np.arange(T + 1)[None, :] >= last[:, None]] = 1.0
    # port load per slot after normalization; stretch the slots by the largest relative excess
    m = instance.num_ports
    ports = np.concatenate([instance.flow_src, instance.flow_dst + m])
    incidence = sp.csr_matrix(
        (np.ones(2 * nf), (ports, np.tile(np.arange(nf), 2))), shape=(2 * m, nf)
    )
    load = incidence @ (size[:, None] * np.diff(done, axis=1))
    cap = instance.fabric.port_capacity
    eta = max(0.0, float((load / (cap[:, None] * delta)).max(initial=0.0)) - 1.0)
    return _FluidLP(done, delta * (1.0 + eta), delta, eta)


def _check_alpha(alpha: float) -> float:
    a = float(alpha)
    if not (0.0 < a <= 1.0):
        raise ValueError(f"alpha-point: alpha must be in (0, 1], got {alpha!r}")
    return a


def _stretch(
    instance: Instance, done: npt.NDArray[np.float64], slot: float, alpha: float
) -> FluidSchedule:
    """The stretched schedule: slot ``t`` of the LP runs during ``[(t-1)δ, tδ)/α`` at the LP's
    rates, and each flow stops at ``C_e(α)/α`` inside its α-slot, having sent exactly
    ``d_e``."""
    T = done.shape[1] - 1
    size = instance.flow_size
    t_alpha = np.argmax(done[:, 1:] >= alpha, axis=1)  # 0-based slot where h_e reaches α
    rows = np.arange(len(size))
    lo, hi = done[rows, t_alpha], done[rows, t_alpha + 1]
    finish = (t_alpha + (alpha - lo) / (hi - lo)) * slot  # C_e(α), hi > lo as lo < α ≤ hi
    amount = size[:, None] * np.diff(done, axis=1)
    use = (np.arange(T)[None, :] <= t_alpha[:, None]) & (amount > 0)
    e, t = np.nonzero(use)
    start = t * slot / alpha
    end = np.where(t == t_alpha[e], finish[e], (t + 1) * slot) / alpha
    claim = np.zeros(instance.num_coflows)
    np.maximum.at(claim, instance.flow_coflow, finish / alpha)
    return FluidSchedule.from_segments(
        len(size), e, start, end, amount[e, t] / slot, completion=claim
    )


def alpha_stretch(
    instance: Instance, lp_values: TimeIndexedLPValues, alpha: float
) -> FluidSchedule:
    """The LP schedule stretched by ``1/α``: at time ``τ`` every flow sends at the LP's rate of
    time ``ατ`` until it has sent its size (module docstring). Coflow ``j`` completes at
    ``C_j(α)/α`` (the schedule claims these completion times; the verifier checks them).

    Parameters
    ----------
    instance
        The instance the LP was solved for (no dependencies).
    lp_values
        :func:`~coflowlab.formulations.time_indexed.solve_time_indexed_lp_values`, solved on a
        grid aligned with the releases (:func:`release_slot_length`).
    alpha
        In ``(0, 1]``.

    Raises
    ------
    InvalidInstanceError
        The LP sends a flow in a slot that starts before its release (the flow is named), or
        the instance has dependencies.

    Examples
    --------
    One flow of size 2: the LP sends one unit per slot, so ``C(α) = 2α`` and every stretch
    completes at ``2α/α = 2`` (at rate 1, as the LP).

    >>> from coflowlab import Instance, verify
    >>> from coflowlab.formulations.time_indexed import solve_time_indexed_lp_values
    >>> inst = Instance.from_matrices([[[2]]])
    >>> schedule = alpha_stretch(inst, solve_time_indexed_lp_values(inst), 0.5)
    >>> verify(inst, schedule).coflow_completion.round(9).tolist()
    [2.0]
    """
    lp = _fluid_lp(instance, lp_values)
    return _stretch(instance, lp.done, lp.slot, _check_alpha(alpha))


# ---------------------------------------------------------------- the cost as a function of α
def _envelope(done: npt.NDArray[np.float64]) -> tuple[npt.NDArray[Any], npt.NDArray[Any]]:
    """The kinks of ``g(x) = min_e done_e(x)`` strictly inside slots, for one coflow.

    ``done`` is ``(k, T + 1)``; inside slot ``t`` flow ``e`` is the line ``base + slope·x``,
    ``x ∈ [0, 1]``. Walk the lower envelope in every slot at once: start with the lowest line
    at ``x = 0`` (ties: the smallest slope), move to the first crossing of a line with a
    smaller slope (ties: the smallest slope). Slopes strictly decrease, so at most ``k - 1``
    steps. Returns the kinks' positions ``t + x`` (in slots) and values.
    """
    base, slope = done[:, :-1].T, np.diff(done, axis=1).T  # (T, k)
    T = base.shape[0]
    slots = np.arange(T)
    low = base <= base.min(axis=1, keepdims=True)
    cur = np.argmin(np.where(low, slope, np.inf), axis=1)
    x = np.zeros(T)
    where_: list[npt.NDArray[Any]] = []
    value: list[npt.NDArray[Any]] = []
    for _ in range(base.shape[1] - 1):
        ac, bc = base[slots, cur][:, None], slope[slots, cur][:, None]
        below = slope < bc
        with np.errstate(divide="ignore", invalid="ignore"):
            cross = np.where(below, (base - ac) / (bc - slope), np.inf)
        cross = np.maximum(cross, x[:, None])
        nxt_x = cross.min(axis=1)
        kink = nxt_x < 1.0
        if not kink.any():
            break
        nxt = np.argmin(np.where(cross <= nxt_x[:, None], slope, np.inf), axis=1)
        where_.append(slots[kink] + nxt_x[kink])
        value.append(ac[kink, 0] + bc[kink, 0] * nxt_x[kink])
        cur = np.where(kink, nxt, cur)
        x = np.where(kink, nxt_x, 1.0)
    if not where_:
        return np.zeros(0), np.zeros(0)
    return np.concatenate(where_), np.concatenate(value)


@dataclass(frozen=True, eq=False)
class AlphaProfile:
    """Everything the α-point method needs about an LP solution: ``g_j`` (the fraction of
    coflow ``j`` the LP schedule has completed by time ``s``) as exact piecewise-linear
    functions, hence ``C_j(α)``, the cost ``Φ(α)`` of every stretch, its exact expectation and
    its minimum (module docstring).

    Attributes
    ----------
    instance
        The instance.
    slot_length
        The LP's slot length ``δ``.
    dilation
        ``η``: slots are read with length ``δ(1 + η)`` to absorb the solver's tolerance.
    time_slot
        ``δ(1 + η)``, the slot length of the LP schedule as read.
    flow_done
        ``(F, T + 1)`` ``h_e`` at the slot ends ``t·time_slot`` (exactly 0 at the start and 1
        at the end; amounts below the noise level dropped, see the module docstring).
    point_time, point_done, point_ptr
        Coflow ``j``'s kinks of ``g_j`` are ``point_time[ptr[j]:ptr[j+1]]`` (non-decreasing
        times from 0 to the horizon) with values ``point_done`` (non-decreasing, 0 to 1).
    lp_completion
        ``(n,)`` ``δ(1+η) Σ_t (1 - g_j(t δ(1+η)))``: the LP's completion of each coflow with
        the tightest ``y`` its amounts allow (at most the LP's own, up to ``η`` and the
        solver's tolerance).
    """

    instance: Instance
    slot_length: float
    dilation: float
    time_slot: float
    flow_done: npt.NDArray[np.float64]
    point_time: npt.NDArray[np.float64]
    point_done: npt.NDArray[np.float64]
    point_ptr: npt.NDArray[np.int64]
    lp_completion: npt.NDArray[np.float64]

    def _coflow(self, j: int) -> tuple[npt.NDArray[Any], npt.NDArray[Any]]:
        a, b = self.point_ptr[j], self.point_ptr[j + 1]
        return self.point_time[a:b], self.point_done[a:b]

    def completion(self, alpha: npt.ArrayLike) -> npt.NDArray[np.float64]:
        """``C_j(α) = min{s : g_j(s) ≥ α}`` for every coflow: shape ``(n,)`` for a scalar
        ``α``, ``(n, k)`` for ``k`` values; each ``α`` in ``(0, 1]``."""
        a = np.asarray(alpha, dtype=float)
        flat = np.atleast_1d(a)
        if flat.size and not ((flat > 0) & (flat <= 1)).all():
            raise ValueError("alpha-point: every alpha must be in (0, 1]")
        out = np.empty((self.instance.num_coflows, flat.size))
        for j in range(self.instance.num_coflows):
            s, g = self._coflow(j)
            i = np.searchsorted(g, flat, side="left")  # first point with g ≥ α (i ≥ 1: g0 = 0)
            out[j] = s[i - 1] + (flat - g[i - 1]) / (g[i] - g[i - 1]) * (s[i] - s[i - 1])
        return out[:, 0] if a.ndim == 0 else out

    def cost(self, alpha: npt.ArrayLike) -> npt.NDArray[np.float64] | float:
        """``Φ(α) = Σ_j w_j C_j(α)/α``, the cost of the stretch by ``1/α`` (scalar or array)."""
        a = np.asarray(alpha, dtype=float)
        value = self.instance.coflow_weight @ self.completion(a) / a
        return float(value) if a.ndim == 0 else np.asarray(value)

    def expected_cost(self) -> float:
        """``E[Φ(α)]`` for ``α`` of density ``2α``: ``2 Σ_j w_j ∫ (1 - g_j)``, exactly (the
        trapezoid rule on the kinks of the piecewise-linear ``g_j``)."""
        n = self.instance.num_coflows
        area = np.array(
            [np.trapezoid(1.0 - self._coflow(j)[1], self._coflow(j)[0]) for j in range(n)]
        )
        return 2.0 * float(self.instance.coflow_weight @ area)

    def breakpoints(self) -> npt.NDArray[np.float64]:
        """The values of every ``g_j`` at its kinks in ``(0, 1]``, sorted: ``Φ`` is
        ``P/α + Q`` between consecutive ones, so its minimum is at one of them."""
        g = self.point_done
        return np.unique(g[g > 0])

    def best_alpha(self) -> tuple[float, float]:
        """``(α, Φ(α))`` minimizing the cost over ``(0, 1]`` (ties: the largest ``α``)."""
        alphas = self.breakpoints()
        costs = np.empty(len(alphas))
        for k in range(0, len(alphas), 4096):  # bounded memory: (n, 4096) at a time
            costs[k : k + 4096] = self.cost(alphas[k : k + 4096])
        best = len(costs) - 1 - int(np.argmin(costs[::-1]))
        return float(alphas[best]), float(costs[best])


def alpha_profile(instance: Instance, lp_values: TimeIndexedLPValues) -> AlphaProfile:
    """The :class:`AlphaProfile` of an LP solution (``lp_values`` as in :func:`alpha_stretch`).

    Examples
    --------
    One flow of size 3 released at 1: the LP sends one unit per slot from time 1, so
    ``C(α) = 1 + 3α`` and ``Φ(α) = 1/α + 3``; ``E = 2 ∫ (1 + 3α) dα = 5``, the best ``α`` is
    1 (cost 4), and the LP's completion is ``1 + 1 + 2/3 + 1/3 = 3``.

    >>> from coflowlab import Instance
    >>> from coflowlab.formulations.time_indexed import solve_time_indexed_lp_values
    >>> inst = Instance.from_matrices([[[3]]], release=[1.0])
    >>> p = alpha_profile(inst, solve_time_indexed_lp_values(inst))
    >>> round(p.expected_cost(), 9), p.best_alpha(), p.lp_completion.round(9).tolist()
    (5.0, (1.0, 4.0), [3.0])
    """
    lp = _fluid_lp(instance, lp_values)
    T = lp.done.shape[1] - 1
    n = instance.num_coflows
    times: list[npt.NDArray[Any]] = []
    dones: list[npt.NDArray[Any]] = []
    lp_completion = np.empty(n)
    order = np.argsort(instance.flow_coflow, kind="stable")
    bounds = np.searchsorted(instance.flow_coflow[order], np.arange(n + 1))
    for j in range(n):
        done = lp.done[order[bounds[j] : bounds[j + 1]]]
        ends = done.min(axis=0)  # g_j at the slot ends
        lp_completion[j] = lp.slot * float((1.0 - ends[:-1]).sum())
        at, val = _envelope(done)
        s = np.concatenate([np.arange(T + 1, dtype=float), at]) * lp.slot
        g = np.concatenate([ends, val])
        pos = np.argsort(s, kind="stable")
        # clean rounding: g is non-decreasing in [0, 1] by construction
        times.append(s[pos])
        dones.append(np.clip(np.maximum.accumulate(g[pos]), 0.0, 1.0))
    ptr = np.concatenate([[0], np.cumsum([len(s) for s in times])]).astype(np.int64)
    return AlphaProfile(
        instance,
        lp.lp_slot,
        lp.dilation,
        lp.slot,
        lp.done,
        np.concatenate(times),
        np.concatenate(dones),
        ptr,
        lp_completion,
    )


def sample_alpha(seed: int | np.random.Generator | None = 0) -> float:
    """``α`` with density ``2α`` on ``(0, 1]``: ``sqrt(1 - U)`` for ``U`` uniform in
    ``[0, 1)`` from ``numpy.random.default_rng(seed)`` (reproducible for an integer seed).

    Examples
    --------
    >>> sample_alpha(7) == sample_alpha(7), 0 < sample_alpha(7) <= 1
    (True, True)
    """
    return float(np.sqrt(1.0 - np.random.default_rng(seed).random()))


# ---------------------------------------------------------------- the methods
def _lp_profile(
    method: str,
    instance: Instance,
    options: SolverOptions | None,
    *,
    slot_length: float | None,
    strengthen: bool,
    max_size: int,
) -> tuple[TimeIndexedLPValues, AlphaProfile]:
    _no_dependencies(instance)
    delta = release_slot_length(instance, slot_length)
    if slot_length is None and delta < default_slot_length(instance):
        span = float(instance.flow_release.max() + instance.bottleneck.sum())
        size = instance.num_flows * max(1, math.ceil(span / delta))
        if size > max_size:
            raise ModelTooLargeError(
                f"{method}: the release times need slots of length {delta:.6g} (a common "
                f"divisor of every release), so the LP has |E|·T = {size} flow-slot variables, "
                f"above the limit {max_size} (max_size=); round the releases to a coarser grid"
            )
    values = solve_time_indexed_lp_values(
        instance,
        options,
        slot_length=delta,
        strengthen=strengthen,
        max_size=max_size,
    )
    if values.solution.status is not SolveStatus.OPTIMAL:
        raise SolverError(
            f"{method}: the time-indexed LP ended with status {values.solution.status.value} "
            f"({values.solution.message or 'no message'}); without its optimum there is no "
            "certified bound"
        )
    return values, alpha_profile(instance, values)


def _solution(
    method: str,
    instance: Instance,
    values: TimeIndexedLPValues,
    profile: AlphaProfile,
    alpha: float,
    guarantee: Guarantee,
    start: float,
    extra: dict[str, Any],
) -> Solution:
    schedule = _stretch(instance, profile.flow_done, profile.time_slot, alpha)
    completion = profile.completion(alpha) / alpha
    order = tuple(int(k) for k in np.lexsort((np.arange(len(completion)), completion)))
    return approximation_solution(
        method,
        instance,
        schedule,
        bound=values.solution.objective,
        bound_source="time-indexed-lp",
        guarantee=guarantee,
        runtime=time.perf_counter() - start,
        order=order,
        solver=values.solution.solver,
        details={
            "alpha": alpha,
            **extra,
            "alpha_cost": profile.cost(alpha),
            "expected_cost": profile.expected_cost(),
            "breakpoints": len(profile.breakpoints()),
            "slot_length": values.slot_length,
            "horizon": values.horizon,
            "dilation": profile.dilation,
            "lp_value": values.solution.objective,
            "lp_seconds": values.solution.runtime,
        },
    )


def solve_alpha_point(
    instance: Instance,
    options: SolverOptions | None = None,
    *,
    seed: int | None = 0,
    slot_length: float | None = None,
    strengthen: bool = False,
    max_size: int = MAX_LP_SIZE,
) -> Solution:
    """Randomized α-point: the fluid time-indexed LP stretched by ``1/α``, ``α`` of density
    ``2α`` (:func:`sample_alpha`); ``E[Σ w C] ≤ 2·TI-LP`` (module docstring).

    Parameters
    ----------
    instance
        Any instance without dependencies; releases must lie on a rational grid
        (:func:`release_slot_length`).
    options
        Solver settings for the LP, see :class:`~coflowlab.solvers.SolverOptions`.
    seed
        Seed of ``α`` (the same seed, the same ``α``).
    slot_length
        ``δ``; default the longest slot that divides every release and is at most
        :func:`~coflowlab.formulations.time_indexed.default_slot_length`. A given one must
        divide every release.
    strengthen, max_size
        As :func:`~coflowlab.formulations.time_indexed.solve_time_indexed_lp`.

    Returns
    -------
    Solution
        Kind ``approximation``, ``bound`` the TI-LP value, guarantee ``2`` in expectation.
        ``details``: ``alpha``, ``seed``, ``alpha_cost`` (``Φ(α)`` computed from the LP;
        the objective is the verifier's), ``expected_cost`` (the exact ``E[Φ]``),
        ``breakpoints`` (their number), ``slot_length``, ``horizon``, ``dilation``.

    Raises
    ------
    InvalidInstanceError
        Dependencies, or releases off every rational grid (the flow is named).
    SolverError
        The LP was not solved to optimality.
    ModelTooLargeError
        The LP (``|E|·T``) exceeds ``max_size``.

    Examples
    --------
    Instance I1 (docs/theory.md#instances) (one coflow, OPT 4, TI-LP 2.5).

    >>> from coflowlab.instances.examples import theory_i1
    >>> sol = solve_alpha_point(theory_i1(), seed=1)
    >>> sol.report.feasible, 4 - 1e-9 <= sol.objective, sol.details["expected_cost"] <= 5 + 1e-6
    (True, True, True)
    """
    lp = dict(slot_length=slot_length, strengthen=strengthen, max_size=max_size)
    return _stretched("alpha-point", instance, options, lp, lambda _: sample_alpha(seed),
                      ALPHA_POINT_GUARANTEE, {"seed": seed})  # fmt: skip


def solve_alpha_point_derandomized(
    instance: Instance,
    options: SolverOptions | None = None,
    *,
    slot_length: float | None = None,
    strengthen: bool = False,
    max_size: int = MAX_LP_SIZE,
) -> Solution:
    """Derandomized α-point: the stretch with the best ``α`` over all breakpoints
    (:meth:`AlphaProfile.best_alpha`), ``Σ w C ≤ E[Φ] ≤ 2·TI-LP`` (module docstring).

    Parameters and results are those of :func:`solve_alpha_point` (no ``seed``).

    Examples -------- Instance I1 (docs/theory.md#instances) (one coflow, OPT 4, TI-LP 2.5): the
    best stretch is at most the mean.

    >>> from coflowlab.instances.examples import theory_i1
    >>> sol = solve_alpha_point_derandomized(theory_i1())
    >>> sol.objective <= sol.details["expected_cost"] + 1e-9 <= 2 * sol.bound + 1e-6
    True
    """
    lp = dict(slot_length=slot_length, strengthen=strengthen, max_size=max_size)
    return _stretched("alpha-point-derandomized", instance, options, lp,
                      lambda profile: profile.best_alpha()[0],
                      ALPHA_POINT_DERANDOMIZED_GUARANTEE, {})  # fmt: skip


def _stretched(
    method: str,
    instance: Instance,
    options: SolverOptions | None,
    lp: dict[str, Any],
    pick: Callable[[AlphaProfile], float],
    guarantee: Guarantee,
    extra: dict[str, Any],
) -> Solution:
    """Solves the LP, picks ``α`` from its profile and wraps the stretched schedule."""
    start = time.perf_counter()
    values, profile = _lp_profile(method, instance, options, **lp)
    return _solution(method, instance, values, profile, pick(profile), guarantee, start, extra)
