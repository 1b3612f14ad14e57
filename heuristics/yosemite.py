"""Yosemite: weighted coflow scheduling (*Yosemite: Efficient Scheduling of Weighted Coflows in
Data Centers*; the copy we read is an anonymous submission; docs/yosemite.md).

Policies (registry names in brackets; both clairvoyant):

- :class:`Yosemite` (``yosemite``): the online order of Algorithm 2 (§IV-B): coflows by weight
  over their largest *remaining* per-port load (load over the port's capacity, so the paper's
  unit-capacity ``l^(k)``), largest ratio first; rates by Algorithm 3 (MADD in that order
  against the capacity the coflows before left, Eq. (5)); then the bandwidth left over is
  split fairly among the active flows (Algorithm 4 line 4, §V-B).
- :class:`YosemiteOffline` (``yosemite-offline``): the same allocation in the order of
  Algorithm 1 (§IV-A), the greedy primal-dual 2-approximation ordering of Mastrolilli et al.
  for concurrent open shop, computed once from the original sizes by
  :func:`coflowlab.approximations.primal_dual.primal_dual_order` (the same code Sincronia's
  BSSI uses).

How a reschedule works
----------------------
At every coflow arrival and every coflow completion (``reschedule_on="coflow"``) the active
flows are grouped by coflow (:mod:`coflowlab.heuristics.varys`' grouping), ordered, and given

1. MADD rates in order (:func:`coflowlab.allocation.madd`): each coflow gets ``remaining / g``
   per flow, where ``g`` (Eq. (5)) is its largest remaining port load over the capacity the
   coflows before it left; a coflow that needs a port with nothing left is *skipped*
   (``g = ∞``);
2. what the skipped coflows get: nothing (``skipped="wait"``, default: Algorithm 3 read
   literally, rate ``f / ∞ = 0``) or CoflowSim's equal per-port split
   (``skipped="share"``, :func:`coflowlab.allocation.madd_share`);
3. the leftover (``leftover``): ``"fair"`` (default) raises every active flow by equal
   increments until one of its two ports is full (max-min fairness on the capacity left,
   :func:`coflowlab.allocation.max_min_fair`): "allocate the remaining bandwidth fair to the
   corresponding flows" (§V-B) and "to flows equally" (§VI-B), with a flow limited by the
   tighter of its two ports; ``"greedy"``, Varys' backfill in priority order
   (:func:`coflowlab.allocation.backfill`); ``"none"``.

Between reschedules the rates are kept; a flow that ends leaves its bandwidth idle until the
next coflow event (as Varys does), unless ``reschedule_on="flow"``.

Readings of the paper (each a parameter; docs/yosemite.md)
---------------------------------------------------------
- ``sort``: Algorithm 2 sorts the keys "in non-decreasing order" and serves the first one
  first, which puts the *smallest* weight per unit of load first. That contradicts the prose
  of §IV-B ("the lowest priority to the coflow which has maximum per-port load"), the
  offline Algorithm 1 (which places the smallest residual ratio *last*) and the paper's goal.
  ``"intended"`` (default) serves the largest ``w / l`` first (Smith's ratio rule);
  ``"literal"`` serves the smallest first. Ties go to the lower coflow index; a coflow with
  weight 0 is last (intended) or first (literal).
- Triggers: Algorithm 2 is said to run when a coflow starts (§IV-B); we also reschedule when a
  coflow completes, or a coflow that started at rate 0 could never run (docs/yosemite.md).
- Algorithm 3 uses the *remaining* sizes (the online order does too).
- Algorithm 1 with release dates: the order is computed once over all coflows (the paper's
  offline setting releases all at 0); at each reschedule the active coflows are served in it.

Examples
--------
Our instance Y-I1 (docs/examples.md#yosemite-y-i1): the intended order finishes C2 at 1, C1 at 3
and C3 at 4 (Σ w C = 17); the literal order C1 at 2, C2 at 3, C3 at 4 (Σ w C = 20).

>>> from coflowlab import simulate
>>> from coflowlab.instances.examples import yosemite_y_i1
>>> simulate(yosemite_y_i1(), Yosemite()).coflow_completion.tolist()
[3.0, 1.0, 4.0]
>>> simulate(yosemite_y_i1(), Yosemite(sort="literal")).coflow_completion.tolist()
[2.0, 3.0, 4.0]
"""

from __future__ import annotations

from typing import ClassVar, Literal, cast

import numpy as np
import numpy.typing as npt

from coflowlab import orderings
from coflowlab.allocation import backfill as greedy_backfill
from coflowlab.allocation import full_port_threshold, madd, madd_share, max_min_fair
from coflowlab.policy import ClairvoyantState, Decision, InstanceView, ObservedState

from .varys import _check, _clairvoyant, _Groups, _prioritized, _Tracker

__all__ = [
    "LEFTOVERS",
    "SORTS",
    "Yosemite",
    "YosemiteOffline",
    "yosemite_allocation",
    "yosemite_order",
]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

Sort = Literal["intended", "literal"]
Leftover = Literal["fair", "greedy", "none"]
Skipped = Literal["wait", "share"]
Reschedule = Literal["coflow", "flow"]

SORTS: tuple[str, ...] = ("intended", "literal")
"""Readings of Algorithm 2's sort: largest ``w / l`` first (intended) or smallest (literal)."""
LEFTOVERS: tuple[str, ...] = ("fair", "greedy", "none")
"""What the bandwidth left after MADD goes to (Algorithm 4 line 4)."""


# ============================================================================ the pieces
def yosemite_order(
    remaining: npt.ArrayLike,
    src: npt.ArrayLike,
    dst: npt.ArrayLike,
    coflow: npt.ArrayLike,
    weight: npt.ArrayLike,
    cap_in: npt.ArrayLike,
    cap_out: npt.ArrayLike,
    *,
    sort: Sort = "intended",
) -> IntArray:
    """Algorithm 2's order of the coflows that have flows in ``coflow``.

    The key of coflow ``k`` is ``w_k / l_k`` with ``l_k`` the largest remaining load of ``k``
    on one port, over that port's capacity (the paper's ports all have capacity 1). The
    intended reading serves the largest key first; the literal one the smallest.

    Parameters
    ----------
    remaining, src, dst, coflow
        Per flow: remaining size, ingress port, egress port, coflow index.
    weight
        Weight of every coflow (indexed by coflow).
    cap_in, cap_out
        Port capacities.
    sort
        ``"intended"`` (default) or ``"literal"`` (see the module docstring).

    Returns
    -------
    numpy.ndarray
        The coflow indices present in ``coflow``, first served first; ties go to the lower
        index.

    Examples
    --------
    Y-I1 (TC-Y-2): keys C1 = 1/2, C2 = 2, C3 = 1.

    >>> args = ([2, 1, 1, 3], [0, 0, 1, 1], [1, 0, 1, 0], [0, 1, 1, 2], [1, 2, 3], [1, 1], [1, 1])
    >>> yosemite_order(*args).tolist(), yosemite_order(*args, sort="literal").tolist()
    ([1, 2, 0], [0, 2, 1])
    """
    _check("sort", sort, SORTS)
    c = np.asarray(coflow, dtype=np.int64)
    ids, dense = np.unique(c, return_inverse=True)
    gamma = orderings.bottleneck_key(remaining, src, dst, dense, cap_in, cap_out, len(ids))
    w = np.asarray(weight, dtype=np.float64)[ids]
    key = orderings.smith_key(gamma, w)  # l / w: ascending = largest w / l first
    if sort == "literal":
        with np.errstate(divide="ignore", invalid="ignore"):
            key = np.where(gamma > 0, w / gamma, np.inf)  # w / l ascending
    return ids[orderings.order_by(key)]


def yosemite_allocation(
    coflow_ptr: npt.ArrayLike,
    flows: npt.ArrayLike,
    remaining: npt.ArrayLike,
    src: npt.ArrayLike,
    dst: npt.ArrayLike,
    cap_in: npt.ArrayLike,
    cap_out: npt.ArrayLike,
    *,
    skipped: Skipped = "wait",
    leftover: Leftover = "fair",
) -> tuple[FloatArray, FloatArray]:
    """Algorithms 3 and 4: MADD in order, then the leftover bandwidth.

    Parameters
    ----------
    coflow_ptr, flows
        The coflows in priority order, as for :func:`coflowlab.allocation.madd`:
        ``flows[coflow_ptr[c]:coflow_ptr[c + 1]]`` are the flows of the ``c``-th coflow.
    remaining, src, dst
        Per flow: remaining size, ingress and egress port.
    cap_in, cap_out
        Port capacities.
    skipped
        ``"wait"`` (default): a coflow with ``g = ∞`` gets nothing from MADD;
        ``"share"``: the skipped coflows split what MADD left equally per port.
    leftover
        ``"fair"`` (default): max-min fair increments for every listed flow on what is left;
        ``"greedy"``: each listed flow in priority order takes the smaller of its two residual
        capacities; ``"none"``.

    Returns
    -------
    rates, g
        The rate of every flow (flows not listed get 0), and each coflow's ``g`` of Eq. (5)
        (``inf`` when skipped).

    Examples
    --------
    TC-Y-4: X (in0 → out0 of 2, in0 → out1 of 1) then Y (in1 → out1 of 1): ``g_X = 3`` with
    rates 2/3 and 1/3, then ``g_Y = 3/2`` with rate 2/3; the 1/3 left on in1 and out0 has no
    flow that can use both, so the fair step adds nothing.

    >>> rates, g = yosemite_allocation([0, 2, 3], [0, 1, 2], [2, 1, 1], [0, 0, 1], [0, 1, 1],
    ...                                [1.0, 1.0], [1.0, 1.0])
    >>> (3 * rates).round(12).tolist(), g.round(12).tolist()
    ([2.0, 1.0, 2.0], [3.0, 1.5])
    """
    _check("skipped", skipped, ("wait", "share"))
    _check("leftover", leftover, LEFTOVERS)
    ptr = np.ascontiguousarray(coflow_ptr, dtype=np.int64)
    f = np.ascontiguousarray(flows, dtype=np.int64)
    s = np.ascontiguousarray(src, dtype=np.int64)
    d = np.ascontiguousarray(dst, dtype=np.int64)
    cin = np.atleast_1d(np.asarray(cap_in, dtype=np.float64))
    cout = np.atleast_1d(np.asarray(cap_out, dtype=np.float64))
    full = full_port_threshold(cin, cout)
    if skipped == "share":
        rates, g = madd_share(ptr, f, remaining, s, d, cin, cout, full_below=full)
    else:
        rates, g = madd(ptr, f, remaining, s, d, cin, cout, full_below=full)
    if leftover == "greedy":
        rates = greedy_backfill(rates, f, s, d, cin, cout)
    elif leftover == "fair" and len(f):
        used_in = np.bincount(s, weights=rates, minlength=len(cin))[: len(cin)]
        used_out = np.bincount(d, weights=rates, minlength=len(cout))[: len(cout)]
        res_in = np.maximum(cin - used_in, 0.0)
        res_out = np.maximum(cout - used_out, 0.0)
        res_in[res_in <= full] = 0.0  # crumbs left by rounding are not handed out
        res_out[res_out <= full] = 0.0
        rates[f] += max_min_fair(s[f], d[f], res_in, res_out)
    return rates, g


# ============================================================================ policies
class Yosemite:
    """Yosemite's online scheduler: Algorithm 2's order, Algorithm 3's MADD, Algorithm 4's
    fair split of the leftover.

    Parameters
    ----------
    sort
        ``"intended"`` (default): largest weight per unit of remaining bottleneck load first;
        ``"literal"``: Algorithm 2's "non-decreasing" taken at its word (smallest first).
    leftover
        ``"fair"`` (default), ``"greedy"`` or ``"none"`` (see the module docstring).
    skipped
        ``"wait"`` (default) or ``"share"`` (see :func:`yosemite_allocation`).
    reschedule_on
        ``"coflow"`` (default): at coflow arrivals and completions; ``"flow"``: also at every
        flow completion.

    Notes
    -----
    Weights only change the order: with equal weights the order is Varys' SEBF on remaining
    bytes (``l`` is Γ on the full capacities). A reschedule costs O(F log F + coflows ×
    ports) for F active flows.

    Examples
    --------
    >>> from coflowlab import simulate
    >>> from coflowlab.instances.examples import yosemite_y_i1
    >>> res = simulate(yosemite_y_i1(), Yosemite())
    >>> float(res.instance.coflow_weight @ res.coflow_completion)
    17.0
    """

    name: ClassVar[str] = "yosemite"
    clairvoyant: ClassVar[bool] = True

    def __init__(
        self,
        *,
        sort: Sort = "intended",
        leftover: Leftover = "fair",
        skipped: Skipped = "wait",
        reschedule_on: Reschedule = "coflow",
    ) -> None:
        _check("sort", sort, SORTS)
        _check("leftover", leftover, LEFTOVERS)
        _check("skipped", skipped, ("wait", "share"))
        _check("reschedule_on", reschedule_on, ("coflow", "flow"))
        self.sort = sort
        self.leftover = leftover
        self.skipped = skipped
        self.reschedule_on = reschedule_on

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(sort={self.sort!r}, leftover={self.leftover!r}, "
            f"skipped={self.skipped!r}, reschedule_on={self.reschedule_on!r})"
        )

    def reset(self, view: InstanceView) -> None:
        """Prepares for a simulation."""
        _clairvoyant(view, type(self).__name__)
        self._cap_in = np.array(view.cap_in, dtype=np.float64)
        self._cap_out = np.array(view.cap_out, dtype=np.float64)
        self._weight = np.array(view.coflow_weight, dtype=np.float64)
        self._track = _Tracker(view)

    def decide(self, state: ObservedState) -> Decision:
        """Reallocates at coflow arrivals and completions; keeps the rates otherwise."""
        st = cast(ClairvoyantState, state)
        self._track.update(st)
        change = bool(len(st.arrived) or len(st.completed_coflows))
        if self.reschedule_on == "flow" and len(st.completed):
            change = True
        rates = self._allocate(st) if change else None
        return Decision(rates, notify=self.reschedule_on)

    def _order(self, st: ClairvoyantState, groups: _Groups, rem: FloatArray) -> IntArray:
        """Group positions, first served first."""
        weight = self._weight[groups.ids]
        cap_in, cap_out = self._cap_in, self._cap_out
        return yosemite_order(
            rem, st.src, st.dst, groups.gidx, weight, cap_in, cap_out, sort=self.sort
        )

    def _allocate(self, st: ClairvoyantState) -> FloatArray:
        rem = np.asarray(st.remaining, dtype=np.float64)
        src = np.asarray(st.src, dtype=np.int64)
        dst = np.asarray(st.dst, dtype=np.int64)
        groups = self._track.groups(st)
        ptr, flows = _prioritized(groups, self._order(st, groups, rem))
        skipped, leftover = self.skipped, self.leftover
        cap_in, cap_out = self._cap_in, self._cap_out
        rates, _ = yosemite_allocation(
            ptr, flows, rem, src, dst, cap_in, cap_out, skipped=skipped, leftover=leftover
        )
        self._track.decided(st, groups, rates)
        return rates


class YosemiteOffline(Yosemite):
    """Yosemite's allocation in the order of Algorithm 1 (the primal-dual 2-approximation
    ordering of Mastrolilli, Queyranne, Schulz, Svensson and Uhan, ORL 2010).

    The order is computed once, at the start, over every coflow with its original sizes and
    weights (:func:`coflowlab.approximations.primal_dual.primal_dual_order`); at each
    reschedule the active coflows are served in it. Same parameters as :class:`Yosemite`
    except ``sort``.

    Examples
    --------
    Y-I1 (TC-Y-1): Algorithm 1 orders C2, C1, C3; simulated, C2 finishes at 1, C1 at 3 and C3
    at 4.

    >>> from coflowlab import simulate
    >>> from coflowlab.instances.examples import yosemite_y_i1
    >>> simulate(yosemite_y_i1(), YosemiteOffline()).coflow_completion.tolist()
    [3.0, 1.0, 4.0]
    """

    name: ClassVar[str] = "yosemite-offline"

    def __init__(
        self,
        *,
        leftover: Leftover = "fair",
        skipped: Skipped = "wait",
        reschedule_on: Reschedule = "coflow",
    ) -> None:
        super().__init__(leftover=leftover, skipped=skipped, reschedule_on=reschedule_on)

    def __repr__(self) -> str:
        return (
            f"YosemiteOffline(leftover={self.leftover!r}, skipped={self.skipped!r}, "
            f"reschedule_on={self.reschedule_on!r})"
        )

    def reset(self, view: InstanceView) -> None:
        """Prepares for a simulation: Algorithm 1's order of all the coflows."""
        super().reset(view)
        self._rank = _primal_dual_rank(view)

    def _order(self, st: ClairvoyantState, groups: _Groups, rem: FloatArray) -> IntArray:
        return orderings.order_by(self._rank[groups.ids])


def _primal_dual_rank(view: InstanceView) -> IntArray:
    """Position of every coflow in the primal-dual order of the whole instance."""
    from coflowlab.approximations.primal_dual import primal_dual_order
    from coflowlab.instance import Fabric, Instance

    size = _clairvoyant(view, "YosemiteOffline")
    inst = Instance(
        Fabric(view.num_ports, view.cap_in, view.cap_out),
        view.flow_coflow,
        view.flow_src,
        view.flow_dst,
        size,
        coflow_weight=view.coflow_weight,
        num_coflows=view.num_coflows,
    )
    order = primal_dual_order(inst).order
    rank = np.empty(view.num_coflows, dtype=np.int64)
    rank[order] = np.arange(len(order), dtype=np.int64)
    return rank
