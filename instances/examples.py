"""Worked examples of the papers, as named instances with their expected values.

Every function returns an :class:`~coflowlab.instance.Instance`; its docstring states the source
(paper, section and figure; for reconstructions and our own instances ``docs/examples.md``), the
instance, and the expected values. The same values are in :data:`EXPECTED`, machine-readable, so
that simulator, solver and bound tests can assert against them; :data:`EXAMPLES` maps each name to
a zero-argument builder (parametrised families are registered at their default parameters).
Test-case labels used below (R-5.1, R-B1, AAL-n, HUG-n, TC-CX-n, Y-I1, TC-Y-n, P-n, C-n) are
defined in docs/test-cases.md.

Conventions
-----------
- **Ports are 0-indexed.** The thesis numbers ports from 1; its ingress ``i`` is ingress
  ``i - 1`` here, likewise for egress. A fabric of ``m``
  ports is used when a figure has ``a`` senders and ``b`` receivers with ``m = max(a, b)``.
- Coflow labels are the papers' names (``"C1"``, ``"A"``, ``"App-1"``); coflow ``k`` of
  :data:`EXPECTED` lists is the ``k``-th coflow of the instance (0-based), and per-flow lists
  follow the instance's flow order.
- Capacities are 1 unless stated; units are dimensionless unless stated (MB and ms for the
  CoflowSim micro-trace, MB for the Aalo and Philae examples).
- **CCT is measured from the coflow's release** (thesis §3.1.1). ``docs/theory.md`` states
  objectives as ``Σ w_j C_j`` with *absolute* completion times ``C_j``; those are under
  ``"opt_sum_wc"`` and ``"completion"``.
- Values the papers do not state are marked "derived here" and are only elementary facts: the
  optimum of a single-link instance released at 0 (serving coflows in increasing total size,
  1||ΣC_j), and ``Σ ρ_j`` when no two coflows overlap in time.

Keys of :data:`EXPECTED`
------------------------
Every entry has ``"source"`` (where the values come from), ``"labels"``, ``"num_ports"`` and
``"rho"`` (ρ_j = ``Instance.bottleneck``, Γ_empty of the thesis); most also have ``"width"``
(flows), ``"length"`` (largest flow) and ``"total_size"``. Optional keys:

- ``"cct"``: ``{policy: [CCT of each coflow]}``; ``"avg_cct"``: ``{policy: mean CCT}``;
  ``"cct_sorted"``: CCTs sorted ascending when the paper does not say which coflow is which.
- ``"fct"``: ``{policy: [FCT of each flow]}``; ``"avg_fct"``: ``{policy: mean FCT}``;
  ``"fct_sorted"``: sorted FCTs.
- ``"makespan"``: ``{policy: last completion time}``.
- ``"completion"``: ``{policy: [absolute completion time C_j]}``.
- ``"opt_sum_cct"``: optimal ``Σ_j CCT_j`` (unit weights) in the fluid model.
- ``"opt_sum_wc"``: ``{"fluid" | "slotted": optimal Σ_j w_j C_j}`` (absolute times).
- ``"order"``: ``{name: [coflow indices, first served first]}``; ``"order_sum_wc"``:
  ``{name: Σ w_j C_j}`` of the concurrent-open-shop (permutation) schedule of that order.
- ``"notes"``: caveats, e.g. which values are reconstructions or thesis formulas.
- Example-specific keys are documented in the example's docstring.

Policy names: ``"madd"`` (MADD on one coflow), ``"fair"`` (per-flow max-min fairness),
``"sff"`` (per-flow smallest-flow-first), ``"wss"`` (weighted shuffle scheduling: weighted
max-min with weight = flow size), ``"varys"`` (SEBF + MADD + backfilling), ``"sebf"``, ``"scf"``,
``"ncf"``, ``"tcf"``, ``"fifo"`` (coflow orderings), ``"opt"`` (an optimal schedule),
``"order_X_Y"`` (strict coflow priority X > Y > ...), and paper-specific ones documented where
used.

Skipped (inputs missing or not a coflow instance)
-------------------------------------------------
- Thesis Fig. 1.5 and Fig. 4.13 (images only, no instance in the text).
- Aalo Fig. 6.1 (AAL-15; docs/test-cases.md#aal-15): only the outputs survive, not the coflows
  or arrivals (thesis §6.3.2). The D-CLAS queue rules of §6.5 are not instances.
- HUG's examples (thesis Ch. 7, Appendix D): allocations of correlation vectors on
  abstract links with no flow sizes; HUG-1..4 are Coflex's Fig. 2 with the links swapped, which
  :func:`coflex_fig2` covers.
- Coflex: the testbed micro-benchmark (flow sizes unspecified, §V-B) and the misreport
  experiment (demand range unspecified, §IV-C). TC-CX-1..3, 5..7 are on :func:`coflex_fig2`
  (misreports are listed in its expected values), TC-CX-4 is :func:`coflex_theorem2`, TC-CX-8 is
  :func:`coflex_single_link`.
- Yosemite TC-Y-6 (arithmetic of a ratio, no instance).
- Philae P-1..P-4 and P-7 (estimator and queue rules; P-1/P-2 give flow sizes but not ports),
  CODA C-2..C-7 (clustering and metrics, no coflow instance).

Examples
--------
>>> from coflowlab.instances.examples import EXAMPLES, EXPECTED
>>> inst = EXAMPLES["fig_3_2"]()
>>> inst.bottleneck.tolist() == EXPECTED["fig_3_2"]["rho"]
True
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any, Literal

from coflowlab.instance import Coflow, Fabric, Instance, Units

__all__ = [
    "EXAMPLES",
    "EXPECTED",
    "aalo_identical",
    "aalo_theorem_c11",
    "anti_diagonal",
    "coda_pioneer_straggler",
    "coflex_fig2",
    "coflex_single_link",
    "coflex_theorem2",
    "coflowsim_micro",
    "fig_1_1",
    "fig_2_2",
    "fig_2_3",
    "fig_3_2",
    "fig_4_6",
    "fig_5_1",
    "fig_5_3",
    "fig_b1",
    "fig_b2",
    "philae_contention",
    "philae_misordering",
    "philae_quantized_scf",
    "philae_queue_transit",
    "philae_same_queue",
    "philae_thin_bypass",
    "slotted_gap_capacity_two",
    "slotted_gap_unit_capacity",
    "theory_i1",
    "theory_i2",
    "theory_i3",
    "theory_i4",
    "theory_r1",
    "yosemite_partial_capacity",
    "yosemite_single_port",
    "yosemite_y_i1",
]

_VARYS = "Chowdhury, PhD thesis, UC Berkeley 2015,"
_THEORY = "docs/theory.md#instances"
_AALO = _VARYS
_COFLEX = "Wang, Ma, Li & Li, Coflex, IEEE INFOCOM 2017,"
_YOSEMITE = "Yosemite: Efficient Scheduling of Weighted Coflows in Data Centers,"
_PHILAE = "Philae (Jajoo, Hu & Lin); our instance, docs/examples.md#"
_COFLOWSIM_SOURCE = "CoflowSim (Chowdhury, github coflow/coflowsim); docs/coflowsim-model.md"
_MB = Units("MB", "unit")


def _count(name: str, value: Any, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return value


# ====================================================================== thesis, Ch. 1-5
def fig_1_1(delta: float = 0.1) -> Instance:
    """Thesis Fig. 1.1: one link, per-flow vs per-application sharing.

    Source: Chowdhury, PhD thesis, UC Berkeley 2015, Ch. 1, Fig. 1.1 (docs/examples.md#fig-1-1).

    Instance: a 1×1 fabric (one link); ``"App-1"`` has flows of size ``1 - δ`` and ``1 + δ``,
    ``"App-2"`` one flow of size 1, all released at 0.

    Expected (our arithmetic): per-flow fairness finishes App-2 at ``3 - δ`` and App-1 at 3;
    smallest-flow-first finishes App-2 at ``2 - δ`` and App-1 at 3, with average FCT
    ``2 - 2δ/3``; the application-optimal schedule (App-2 first) finishes App-2 at 1 and App-1
    at 3, average CCT 2 ("application-2 completes in 2 time units instead of the optimal 1").

    Parameters
    ----------
    delta
        ``δ``, in ``[0, 1)``.

    Examples
    --------
    >>> from coflowlab.instances.examples import fig_1_1
    >>> fig_1_1(0.1).flow_size.tolist()
    [0.9, 1.1, 1.0]
    """
    if not (isinstance(delta, int | float) and 0 <= delta < 1):
        raise ValueError(f"delta must be in [0, 1), got {delta!r}")
    return Instance.from_coflows(
        [
            Coflow([(0, 0, 1 - delta), (0, 0, 1 + delta)], label="App-1"),
            Coflow([(0, 0, 1.0)], label="App-2"),
        ],
        1,
    )


def _fig_1_1_expected(delta: float) -> dict[str, Any]:
    return {
        "source": f"{_VARYS} Ch. 1, Fig. 1.1",
        "labels": ["App-1", "App-2"],
        "num_ports": 1,
        "rho": [2.0, 1.0],
        "width": [2, 1],
        "length": [1 + delta, 1.0],
        "total_size": [2.0, 1.0],
        "cct": {"fair": [3.0, 3 - delta], "sff": [3.0, 2 - delta], "opt": [3.0, 1.0]},
        "avg_cct": {"opt": 2.0},
        "avg_fct": {"sff": 2 - 2 * delta / 3},
        "opt_sum_cct": 4.0,
    }


def fig_2_2() -> Instance:
    """Thesis Fig. 2.2: the trivial instance on a 3×3 fabric, as one coflow.

    Source: Chowdhury, PhD thesis, UC Berkeley 2015, §2.2.3, Fig. 2.2.

    Instance: one coflow ``"C"``: machine 1 → machine 2, 3 units, and machine 2 → machine 3,
    4 units; 0-indexed flows ``(0 → 1, 3)`` and ``(1 → 2, 4)``.

    Expected: no shared port, so any sane policy gives FCTs 3 and 4; as one coflow Γ = 4 and
    MADD sets rates 3/4 and 1, so both flows finish at 4.

    Examples
    --------
    >>> from coflowlab.instances.examples import fig_2_2
    >>> fig_2_2().bottleneck
    array([4.])
    """
    return Instance.from_coflows([Coflow([(0, 1, 3.0), (1, 2, 4.0)], label="C")], 3)


def fig_2_3() -> Instance:
    """Thesis Fig. 2.3: one link with deadlines.

    Source: Chowdhury, PhD thesis, UC Berkeley 2015, §2.3.4, Fig. 2.3.

    Instance: a 1×1 fabric; ``"App-1"`` has three flows and ``"App-2"`` one, every flow 1 unit,
    all released at 0; every flow has deadline 1, so each coflow has deadline 1.

    Expected [verbatim]: fair sharing gives average FCT 4, no flow meets its deadline, average
    application completion 4; SFF/EDF (the figure's schedule puts App-2's flow second) gives
    average FCT 2.5, one flow meets its deadline, average application completion 3; the optimal
    schedule (App-2 first) meets App-2's deadline, average application completion 2.5. At most
    one flow can meet its deadline.

    Extra keys: ``"flows_meeting_deadline"`` (``{policy: count}``; ``"max"`` over all
    schedules) and ``"coflows_meeting_deadline"`` (``{policy: [labels]}``).

    Examples
    --------
    >>> from coflowlab.instances.examples import fig_2_3
    >>> fig_2_3().coflow_deadline
    array([1., 1.])
    """
    return Instance.from_coflows(
        [
            Coflow([(0, 0, 1.0)] * 3, deadline=1.0, label="App-1"),
            Coflow([(0, 0, 1.0)], deadline=1.0, label="App-2"),
        ],
        1,
    )


def fig_3_2() -> Instance:
    """Thesis Fig. 3.2: one 3×2 shuffle; MADD vs fairness vs prioritisation.

    Source: Chowdhury, PhD thesis, UC Berkeley 2015, §3.2, Fig. 3.2.

    Instance: senders s1, s2, s3 = ingress 0, 1, 2; receivers r1, r2 = egress 0, 1 (egress 2
    unused); one coflow ``"C"`` with ``D = [[1, 1], [1, 1], [2, 2]]``, released at 0.

    Expected [verbatim]: Γ = 4. Optimal = MADD: CCT 4, average FCT 4 (rates 1/4 from s1, s2
    and 1/2 from s3). Per-flow fairness: CCT 5, average FCT 3.67 (1/3 each until t = 3, then s3
    is the bottleneck for 2 more). Per-flow prioritisation (SFF): CCT 6, average FCT 2.67, FCTs
    {1, 1, 2, 2, 4, 6}. WSS = MADD here (CCT 4).

    Examples
    --------
    >>> from coflowlab.instances.examples import fig_3_2
    >>> fig_3_2().bottleneck
    array([4.])
    """
    flows = [
        (i, o, float(d))
        for i, row in enumerate([[1, 1], [1, 1], [2, 2]])
        for o, d in enumerate(row)
    ]
    return Instance.from_coflows([Coflow(flows, label="C")], 3)


def fig_4_6(n: int = 100) -> Instance:
    """Thesis Fig. 4.6 family: the MADD-vs-fairness gap approaches 1.5.

    Source: Chowdhury, PhD thesis, UC Berkeley 2015, §4.5.2-§4.5.3, Fig. 4.6 (caption corrected:
    docs/varys.md#errata).

    Instance(N): ``2N + 1`` senders and 2 receivers (a fabric of ``2N + 1`` ports). Senders s1..sN
    (ingress ``0..N-1``) send 1 unit to r1 (egress 0); s(N+1)..s(2N) (ingress ``N..2N-1``) send 1
    unit to r2 (egress 1); the big sender s(2N+1) (ingress ``2N``) sends N units to *each* receiver
    (the caption's "s(N+1)" is a typo, docs/varys.md#errata). One coflow ``"C"``.

    Expected (our arithmetic): Γ = 2N, so MADD's CCT is 2N; per-flow max-min fairness
    gives ``3N - 1`` (all N+1 flows at a receiver get 1/(N+1) until t = N+1, then the big
    sender splits 1/2 per flow). Ratio ``(3N - 1)/(2N)``: 1.495 for N = 100 (thesis §4.5.3),
    1.0 for N = 1; N = 2, 3, 4 give Table 4.2's 25%, 33%, 38% theoretical speedups.

    Parameters
    ----------
    n
        ``N >= 1``.

    Examples
    --------
    >>> from coflowlab.instances.examples import fig_4_6
    >>> inst = fig_4_6(2)
    >>> inst.num_ports, inst.bottleneck.tolist()
    (5, [4.0])
    """
    n = _count("n", n)
    flows = [(s, 0, 1.0) for s in range(n)] + [(n + s, 1, 1.0) for s in range(n)]
    flows += [(2 * n, 0, float(n)), (2 * n, 1, float(n))]
    return Instance.from_coflows([Coflow(flows, label="C")], 2 * n + 1)


def _fig_4_6_expected(n: int) -> dict[str, Any]:
    return {
        "source": f"{_VARYS} §4.5.3, Fig. 4.6; docs/varys.md#errata",
        "labels": ["C"],
        "num_ports": 2 * n + 1,
        "rho": [2.0 * n],
        "width": [2 * n + 2],
        "length": [float(n)],
        "total_size": [4.0 * n],
        "cct": {"madd": [2.0 * n], "fair": [3.0 * n - 1]},
        "fair_over_madd": (3 * n - 1) / (2 * n),
        "opt_sum_cct": 2.0 * n,
    }


def fig_5_1(deadline: bool = False) -> Instance:
    """Thesis Fig. 5.1, reconstruction R-5.1: two coflows on a 3×3 fabric, five policies.

    Source: Chowdhury, PhD thesis, UC Berkeley 2015, §5.3, Fig. 5.1. The figure's instance is not
    in the text; this is our reconstruction R-5.1 (docs/examples.md#fig-5-1): consistent with every
    number of the text, not necessarily the figure's instance.

    Instance (0-indexed; both released at 0):

    - ``"C1"``: in0 → out1 **4**, in1 → out2 **2**, in2 → out0 **1** (Γ1 = 4);
    - ``"C2"``: in1 → out2 **2**, in2 → out0 **2** (Γ2 = 2).

    C1 and C2 share the port pairs (1, 2) and (2, 0). With ``deadline=True`` both coflows have
    deadline 2 (thesis §5.3).

    Expected (docs/examples.md#fig-5-1; FCTs in flow order C1: 4u, 2u, 1u; C2: 2u@in1, 2u@in2):

    ===============================  ========  =======  ===============  =======
    policy                           CCTs      avg CCT  FCTs             avg FCT
    ===============================  ========  =======  ===============  =======
    per-flow max-min fairness        4, 4      4        4, 4, 2; 4, 3    3.4
    per-flow SFF, tie on in1 → C2    4, 3      3.5      4, 4, 1; 2, 3    2.8
    per-flow SFF, tie on in1 → C1    4, 4      4.0      4, 2, 1; 4, 3    2.8
    WSS (weighted max-min by size)   4, 4      4        4, 4, 3; 4, 3    3.6
    optimal = Varys (SEBF + MADD)    4, 2      3        4, 4, 3; 2, 2    3.0
    ===============================  ========  =======  ===============  =======

    Deadline variant [verbatim]: fairness and WSS miss both deadlines; EDF across flows (random
    ties per port) lets C2 meet its deadline 25% of the time; Varys (Pseudocode 2) rejects C1
    (Γ1 = 4 > 2) and admits C2 with rate 1 on both flows, so C2 finishes at 2. Extra key
    ``"deadline"`` holds these.

    Parameters
    ----------
    deadline
        Give both coflows deadline 2.

    Examples
    --------
    >>> from coflowlab.instances.examples import fig_5_1
    >>> fig_5_1().bottleneck.tolist(), fig_5_1(deadline=True).coflow_deadline.tolist()
    ([4.0, 2.0], [2.0, 2.0])
    """
    d = 2.0 if deadline else None
    return Instance.from_coflows(
        [
            Coflow([(0, 1, 4.0), (1, 2, 2.0), (2, 0, 1.0)], deadline=d, label="C1"),
            Coflow([(1, 2, 2.0), (2, 0, 2.0)], deadline=d, label="C2"),
        ],
        3,
    )


def fig_5_3() -> Instance:
    """Thesis Fig. 5.3, reconstruction R-5.3: SEBF vs SCF/NCF/TCF.

    Source: Chowdhury, PhD thesis, UC Berkeley 2015, §5.5.3, Fig. 5.3; our reconstruction
    (docs/examples.md#fig-5-3), consistent with the text's numbers, not necessarily the figure's
    instance.

    Instance (3×3, both released at 0): ``"C1"``: in0 → out0 2, in1 → out0 2 (length 2, width
    2, size 4, Γ1 = 4 on out0); ``"C2"``: in0 → out0 3, in1 → out1 3, in2 → out2 3 (length 3,
    width 3, size 9, Γ2 = 3).

    Expected: SCF, NCF and TCF all serve C1 first: CCTs (4, 7), average 5.5; SEBF serves C2
    first: CCTs (7, 3), average 5.0 = the MILP optimum.

    Examples
    --------
    >>> from coflowlab.instances.examples import fig_5_3
    >>> fig_5_3().bottleneck.tolist()
    [4.0, 3.0]
    """
    return Instance.from_coflows(
        [
            Coflow([(0, 0, 2.0), (1, 0, 2.0)], label="C1"),
            Coflow([(0, 0, 3.0), (1, 1, 3.0), (2, 2, 3.0)], label="C2"),
        ],
        3,
    )


def fig_b1() -> Instance:
    """Thesis Fig. B.1, reconstruction R-B1: work conservation vs CCT.

    Source: Chowdhury, PhD thesis, UC Berkeley 2015, Appendix B.2, Fig. B.1; our reconstruction of
    the placement, the only structure reproducing both panels (docs/examples.md#fig-b-1).

    Instance (2×2): ``"C1"``: in0 → out0, 1 unit (t = 0); ``"C2"``: in0 → out1 and in1 → out0,
    1 unit each (t = 0); ``"C3"``: in1 → out1, 0.5 unit, released at t = 1.

    Expected: per-flow fairness (every flow at 0.5): CCTs (2, 2, 1), average 5/3, makespan 2
    (matches B.1b). Strict priority C1 > C2 > C3: CCTs (1, 2, 1.5), average 1.5, makespan 2.5
    (matches every number of B.1c, the thesis's "optimal"). The **true** preemptive fluid
    optimum serves C2 first: CCTs (2, 1, 0.5), average 7/6, makespan 2. SEBF + MADD + greedy
    backfill with the tie broken towards C1: CCTs (1, 2.5, 0.5), average 4/3. Do not treat the
    thesis's "OPT = 1.5" as ground truth (docs/examples.md#fig-b-1).

    Examples
    --------
    >>> from coflowlab.instances.examples import fig_b1
    >>> fig_b1().coflow_release.tolist()
    [0.0, 0.0, 1.0]
    """
    return Instance.from_coflows(
        [
            Coflow([(0, 0, 1.0)], label="C1"),
            Coflow([(0, 1, 1.0), (1, 0, 1.0)], label="C2"),
            Coflow([(1, 1, 0.5)], release=1.0, label="C3"),
        ],
        2,
    )


def fig_b2() -> Instance:
    """Thesis Fig. B.2, reconstruction R-B2: permutation schedules are suboptimal.

    Source: Chowdhury, PhD thesis, UC Berkeley 2015, Appendix B.3 (Theorem B.3.1, Remark B.3.2,
    Fig. B.2); our reconstruction (docs/examples.md#fig-b-2), built to satisfy every textual
    property, not necessarily the figure's instance.

    Instance (2×2, both at 0): ``"C1"``: in0 → out0 1 and in0 → out1 1 (Γ1 = 2 on in0);
    ``"C2"``: in1 → out0 2 (Γ2 = 2, a tie).

    Expected: permutation C1 → C2: CCTs (2, 4), average 3.0; C2 → C1: (4, 2), average 3.0.
    SEBF (tie → C1) + iterative MADD: C1's flows at 0.5, C2 at 0.5 on [0, 2] (out0
    interleaved), then 1: CCTs (2, 3), average 2.5 = the MILP optimum.

    Examples
    --------
    >>> from coflowlab.instances.examples import fig_b2
    >>> fig_b2().bottleneck.tolist()
    [2.0, 2.0]
    """
    return Instance.from_coflows(
        [Coflow([(0, 0, 1.0), (0, 1, 1.0)], label="C1"), Coflow([(1, 0, 2.0)], label="C2")],
        2,
    )


def anti_diagonal(a: Sequence[float] = (1, 0, 2), b: Sequence[float] = (0, 3, 3)) -> Instance:
    """The NP-hardness reduction of thesis Theorem B.1.1: anti-diagonal coflows on 2 ports.

    Source: Chowdhury, PhD thesis, UC Berkeley 2015, Appendix B.1, proof of Theorem B.1.1
    (docs/varys.md#errata).

    Instance: 2×2 fabric, coflow ``"Ck"`` (k = 1..n) has ``D^k = [[0, a_k], [b_k, 0]]``, i.e.
    flows in0 → out1 of size ``a_k`` and in1 → out0 of size ``b_k`` (a zero entry is no flow),
    all released at 0. The two flows of a coflow use disjoint ports, so the instance is
    concurrent open shop on two machines.

    Expected (our computation, checked by MILP): the exact optimum of the thesis's (B.1)-(B.4)
    equals the best concurrent-open-shop permutation: ``a = (1, 0, 2), b = (0, 3, 3)`` gives
    Σ CCT 10; ``a = (3, 3, 1), b = (0, 3, 0)`` gives 12.

    Parameters
    ----------
    a, b
        Sizes ``d_12^k`` and ``d_21^k``, ``>= 0``, same length, ``a_k + b_k > 0``.

    Examples
    --------
    >>> from coflowlab.instances.examples import anti_diagonal
    >>> anti_diagonal().bottleneck.tolist()
    [1.0, 3.0, 3.0]
    """
    if len(a) != len(b) or not a:
        raise ValueError(f"a and b must be non-empty and of equal length, got {a!r}, {b!r}")
    coflows = []
    for k, (x, y) in enumerate(zip(a, b, strict=True)):
        if x < 0 or y < 0 or x + y <= 0:
            raise ValueError(f"a[{k}], b[{k}] must be >= 0 and not both 0, got {x!r}, {y!r}")
        flows = [(0, 1, float(x))] * (x > 0) + [(1, 0, float(y))] * (y > 0)
        coflows.append(Coflow(flows, label=f"C{k + 1}"))
    return Instance.from_coflows(coflows, 2)


# ====================================================================== docs/theory.md
def theory_i1() -> Instance:
    """Instance I1 of docs/theory.md: one coflow, ``D = [[1, 2], [3, 0]]``, w = 1.

    Source: our instance, docs/theory.md#instances (zero-indexed ports, rows = ingress).

    Expected (our computation): OPT = 4 (= ρ, column 0) in the fluid and slotted models (TI = 4);
    all LP bounds equal 4 (F1: a single coflow's optimum is ``w ρ``).

    Examples
    --------
    >>> from coflowlab.instances.examples import theory_i1
    >>> theory_i1().bottleneck
    array([4.])
    """
    return Instance.from_matrices([[[1, 2], [3, 0]]])


def theory_i2() -> Instance:
    """Instance I2 of docs/theory.md: single port, ``p = (3, 1, 2)``, ``w = (3, 1, 1)``.

    Source: our instance, docs/theory.md#instances and #f2 (``1||Σ w_j C_j``, Smith 1956).

    Instance: ``m = 1``; coflow ``j`` is one flow ``0 → 0`` of size ``p_j`` with weight ``w_j``.

    Expected (our computation): OPT = 19 (Smith's rule; ratios tie 1/1), TI = 19; the primal-dual
    order ``[1, 0, 2]`` gives 19.

    Examples
    --------
    >>> from coflowlab.instances.examples import theory_i2
    >>> theory_i2().coflow_weight.tolist()
    [3.0, 1.0, 1.0]
    """
    return Instance.from_matrices([[[3]], [[1]], [[2]]], weight=[3, 1, 1])


def theory_i3() -> Instance:
    """Instance I3 of docs/theory.md: concurrent open shop, 2×2 diagonal.

    Source: our instance, docs/theory.md#instances.

    Instance: ``"A" = diag(1, 0)``, ``"B" = diag(0, 1)``, ``"C" = diag(1, 1)``, w = 1.

    Expected (our computation): OPT = 4 (A and B complete at 1, C at 2), TI = 4; every LP bound is
    4; the primal-dual order B, C, A gives 5 (B = 1, C = 2, A = 2): PD is not optimal (ratio 1.25).

    Examples
    --------
    >>> from coflowlab.instances.examples import theory_i3
    >>> theory_i3().coflow_label
    ('A', 'B', 'C')
    """
    return Instance.from_matrices(
        [[[1, 0], [0, 0]], [[0, 0], [0, 1]], [[1, 0], [0, 1]]], labels="ABC"
    )


def theory_i4() -> Instance:
    """Instance I4 of docs/theory.md: coupling matters.

    Source: our instance, docs/theory.md#instances.

    Instance: ``"A" = [[1, 0], [0, 1]]``, ``"B" = [[0, 1], [0, 0]]``, ``"C" = [[0, 0], [1, 0]]``,
    w = 1.

    Expected (our computation): OPT = 4 (B and C complete at 1, A at 2), TI = 4; serving A first
    gives 5.

    Examples
    --------
    >>> from coflowlab.instances.examples import theory_i4
    >>> theory_i4().bottleneck.tolist()
    [1.0, 1.0, 1.0]
    """
    return Instance.from_matrices(
        [[[1, 0], [0, 1]], [[0, 1], [0, 0]], [[0, 0], [1, 0]]], labels="ABC"
    )


def theory_r1() -> Instance:
    """Instance R1 of docs/theory.md: slotted model with a release date; preemption is needed.

    Source: our instance, docs/theory.md#instances.

    Instance: ``D0 = [[2, 0], [0, 0]]``, r = 0, w = 1; ``D1 = [[1, 0], [0, 1]]``, r = 1, w = 3.

    Expected (our computation): slotted OPT Σ w_j C_j = 9 (time-indexed MIP, T = 8 and 12): C0
    sends in slots 1 and 3, C1 in slot 2, so ``C = (3, 2)``. In the slotted model "r = 1" means the
    first slot a coflow may use is slot 2.

    Examples
    --------
    >>> from coflowlab.instances.examples import theory_r1
    >>> inst = theory_r1()
    >>> inst.coflow_release.tolist(), inst.coflow_weight.tolist()
    ([0.0, 1.0], [1.0, 3.0])
    """
    return Instance.from_matrices(
        [[[2, 0], [0, 0]], [[1, 0], [0, 1]]], release=[0, 1], weight=[1, 3]
    )


def slotted_gap_capacity_two() -> Instance:
    """An integral instance without release dates whose fluid optimum is below its slotted
    optimum: the observation "fluid OPT = slotted OPT on integral instances without release
    dates" needs unit port capacities.

    Source: our instance (issue 19's scan of random integral instances with both exact
    methods, ``tests/formulations/test_exact_fluid_vs_slotted.py``).

    Instance: one port pair of capacity 2; one coflow, one flow of 1 unit, w = 1.

    Expected (by hand): fluid OPT = 0.5 (the flow runs at rate 2); slotted OPT = 1 (a unit
    moves in a whole slot).

    Examples
    --------
    >>> inst = slotted_gap_capacity_two()
    >>> inst.bottleneck.tolist(), inst.fabric.ingress_capacity.tolist()
    ([0.5], [2.0])
    """
    return Instance.from_matrices([[[1]]], capacity=2.0)


def slotted_gap_unit_capacity() -> Instance:
    """A counterexample with unit capacities and no release dates to the observation
    "fluid OPT = slotted OPT on integral instances": fluid OPT 6.5, slotted OPT 7.

    Source: our instance (issue 19: found by a scan of random integral instances with both
    exact methods and shrunk; both optima confirmed by brute force in
    ``tests/formulations/test_exact_fluid_vs_slotted.py``).

    Instance: 4 ports, capacity 1, weights 1. A: flows 2→2 (2 units), 1→0 (1), 0→1 (2);
    B: flows 3→0 (2), 3→1 (1), 3→2 (1). ρ_A = 2, ρ_B = 4 (ingress 3).

    Expected (by hand): both models need ``C_B ≥ 4`` and ``C_A ≥ 2``, and ``C_A = 2`` keeps
    egress 1 and 2 busy until 2 and egress 0 for one unit, so B moves at most one unit by
    then and ends at 5 or later: ``C_A + C_B ≥ 6.5`` is met in the fluid model by ``C_A =
    2.5``, ``C_B = 4`` (until 2.5, B uses the egress time A leaves: 1.5 on egress 0, 0.5 on
    egress 1 and 2). With whole slots the sum is a whole number above 6: ``C = (3, 4)``, 7.

    Examples
    --------
    >>> inst = slotted_gap_unit_capacity()
    >>> inst.bottleneck.tolist()
    [2.0, 4.0]
    """
    return Instance.from_coflows(
        [
            Coflow([(2, 2, 2.0), (1, 0, 1.0), (0, 1, 2.0)], label="A"),
            Coflow([(3, 0, 2.0), (3, 1, 1.0), (3, 2, 1.0)], label="B"),
        ],
        4,
    )


# ====================================================================== CoflowSim micro-trace
def coflowsim_micro(releases: Literal["file", "coflowsim"] = "file") -> Instance:
    """CoflowSim's micro-trace: 4 ports, 3 coflows, in MB and ms.

    Source: CoflowSim (Chowdhury, github coflow/coflowsim), run by us on this trace;
    docs/coflowsim-model.md#micro-trace. The trace, in the coflow-benchmark format::

        4 3
        1 0 1 0 1 1:1.0
        2 5000 2 0 2 2 3:4.0 1:2.0
        3 10240 1 3 1 1:10.0

    Instance: capacity 0.125 MB/ms (CoflowSim's 1 MiB per 8 ms, read as MB), labels
    ``"1"``, ``"2"``, ``"3"`` (the trace ids). Coflow 1: 0 → 1, 1 MB. Coflow 2: mappers 0 and 2,
    each reducer's MB split equally over the mappers: 0 → 3 2 MB, 0 → 1 1 MB, 2 → 3 2 MB,
    2 → 1 1 MB. Coflow 3: 3 → 1, 10 MB. Releases: ``"file"`` uses the trace's arrivals (0,
    5000, 10240 ms); ``"coflowsim"`` releases all three at 0, as CoflowSim's 10,240 ms epochs
    do (release = 10240·max(0, ceil(arrival/10240) − 1)).

    Expected [CoflowSim's output; every coflow released at 0 and CCT measured from 0]:
    FIFO 8, 32, 104 (sum 144); SEBF the same; FAIR 32, 40, 104 (176); PFP 8, 32, 104 (144);
    DARK 8, 40, 120 (168). These are under ``"coflowsim"`` (CoflowSim quantises time into 8 ms
    steps and its FAIR is not max-min). With the file's releases the coflows never overlap, so
    each one alone takes ρ = (8, 32, 80) ms and the optimum Σ CCT is 120 [derived here].

    Parameters
    ----------
    releases
        ``"file"`` or ``"coflowsim"``.

    Examples
    --------
    >>> from coflowlab.instances.examples import coflowsim_micro
    >>> coflowsim_micro().bottleneck.tolist()
    [8.0, 32.0, 80.0]
    """
    if releases not in ("file", "coflowsim"):
        raise ValueError(f"releases must be 'file' or 'coflowsim', got {releases!r}")
    rel = (0.0, 5000.0, 10240.0) if releases == "file" else (0.0, 0.0, 0.0)
    return Instance.from_coflows(
        [
            Coflow([(0, 1, 1.0)], release=rel[0], label="1"),
            Coflow(
                [(0, 3, 2.0), (0, 1, 1.0), (2, 3, 2.0), (2, 1, 1.0)], release=rel[1], label="2"
            ),
            Coflow([(3, 1, 10.0)], release=rel[2], label="3"),
        ],
        Fabric(4, 0.125, 0.125),
        units=Units("MB", "ms"),
    )


_COFLOWSIM_CCT = {
    "fifo": [8.0, 32.0, 104.0],
    "sebf": [8.0, 32.0, 104.0],
    "fair": [32.0, 40.0, 104.0],
    "pfp": [8.0, 32.0, 104.0],
    "dark": [8.0, 40.0, 120.0],
}


# ====================================================================== Aalo / D-CLAS
def aalo_theorem_c11(n: int = 4, m: int = 2) -> Instance:
    """Thesis Theorem C.1.1's instance: uncoordinated schedulers are Ω(√n) from optimal.

    Source: Chowdhury, PhD thesis, UC Berkeley 2015, Appendix C.1, Theorem C.1.1
    (docs/examples.md#theorem-c11).

    Instance: ``m`` ports, ``n >= m`` coflows ``"C1".."Cn"``, all released at 0. Narrow coflow
    k (1 <= k <= m): one unit flow input k → output ``m − k + 1`` (0-indexed
    ``k − 1 → m − k``). Wide coflow k (m < k <= n): one unit flow on *every* pair
    ``(i, m − i + 1)``. Every flow uses the matching ``i → m − i + 1``, so the fabric splits into
    ``m`` independent unit "facilities".

    Expected (our arithmetic): the coordinated optimum runs the narrow coflows first (all
    at 1), then the wide ones one after another (at 2..n−m+1): Σ CCT = ``m + Σ_{j=2}^{n−m+1} j``;
    serving the wide coflows first costs ``(m − 1)(n − m)`` more. (n, m) = (4, 2): 7 vs 9;
    (9, 3): 30 vs 42; (16, 4): 94 vs 130; (100, 10): 4195 vs 5005.

    Parameters
    ----------
    n
        Number of coflows, ``>= m``.
    m
        Number of ports, ``>= 1``.

    Examples
    --------
    >>> from coflowlab.instances.examples import aalo_theorem_c11
    >>> aalo_theorem_c11(4, 2).width.tolist()
    [1, 1, 2, 2]
    """
    m = _count("m", m)
    n = _count("n", n, minimum=m)
    narrow = [Coflow([(k, m - 1 - k, 1.0)], label=f"C{k + 1}") for k in range(m)]
    matching = [(i, m - 1 - i, 1.0) for i in range(m)]
    wide = [Coflow(matching, label=f"C{k + 1}") for k in range(m, n)]
    return Instance.from_coflows(narrow + wide, m, units=_MB)


def _aalo_c11_expected(n: int, m: int) -> dict[str, Any]:
    opt = m + sum(range(2, n - m + 2))
    return {
        "source": f"{_AALO} App. C.1, Theorem C.1.1",
        "labels": [f"C{k + 1}" for k in range(n)],
        "num_ports": m,
        "rho": [1.0] * n,
        "width": [1] * m + [m] * (n - m),
        "length": [1.0] * n,
        "total_size": [1.0] * m + [float(m)] * (n - m),
        "cct_sorted": {"opt": [1.0] * m + [float(j) for j in range(2, n - m + 2)]},
        "opt_sum_cct": float(opt),
        "wide_first_sum_cct": float(opt + (m - 1) * (n - m)),
    }


def _queue_low(size: float, first: float = 10.0, factor: float = 10.0) -> float:
    """Lower threshold of the D-CLAS queue ``[lo, hi)`` holding ``size`` (10 MB, ×10)."""
    if size < first:
        return 0.0
    return first * factor ** math.floor(math.log(size / first, factor) + 1e-12)


def aalo_identical(num_coflows: int = 10, size: float = 50.0) -> Instance:
    """Thesis App. C.2: N identical coflows, continuous vs discretised prioritisation.

    Source: Chowdhury, PhD thesis, UC Berkeley 2015, Appendix C.2 (docs/examples.md#identical).

    Instance: a 1×1 fabric of capacity 1 MB per time unit (so a coflow of S MB takes
    ``f(S) = S`` alone); ``num_coflows`` coflows ``"C1".."CN"``, each one flow of ``size`` MB,
    all released at 0.

    Expected (totals of CCTs, thesis formulas with D-CLAS's default queues ``Q_1^hi`` = 10 MB,
    ``E`` = 10, half-open ``[lo, hi)``): continuous CLAS is round robin, every coflow finishes
    at ``N·S``: ``T_cont = N² S``; D-CLAS with all coflows in queue ``[lo, hi)``:
    ``T_disc = N² lo + N(N + 1)(S − lo)/2`` (fair sharing up to ``lo``, then FIFO). The
    table (lo = 10): (N, S) = (2, 20): 80 vs 70; (10, 10): 1000 vs 1000; (10, 50): 5000 vs 3200;
    (10, 100): 10000 vs 5950 (S = 100 is the limit of queue [10, 100)); (100, 100): 1,000,000 vs
    554,500. ``T_disc`` is reached exactly by strict priority across queues with FIFO inside a
    queue (each coflow reaches ``lo`` one after another by ``N·lo``); Aalo's *weighted* sharing
    across queues gives a different value, so it is stored as ``"sum_cct_formula"``. The
    optimum Σ CCT is ``S·N(N + 1)/2`` (one coflow after another) [derived here].

    Parameters
    ----------
    num_coflows
        N >= 1.
    size
        S > 0, in MB.

    Examples
    --------
    >>> from coflowlab.instances.examples import aalo_identical
    >>> aalo_identical(3, 20.0).bottleneck.tolist()
    [20.0, 20.0, 20.0]
    """
    n = _count("num_coflows", num_coflows)
    if not (isinstance(size, int | float) and math.isfinite(size) and size > 0):
        raise ValueError(f"size must be positive and finite, got {size!r}")
    return Instance.from_coflows(
        [Coflow([(0, 0, float(size))], label=f"C{k + 1}") for k in range(n)], 1, units=_MB
    )


def _aalo_identical_expected(n: int, size: float) -> dict[str, Any]:
    lo = _queue_low(size)
    return {
        "source": f"{_AALO} App. C.2; docs/examples.md#identical",
        "labels": [f"C{k + 1}" for k in range(n)],
        "num_ports": 1,
        "rho": [float(size)] * n,
        "width": [1] * n,
        "length": [float(size)] * n,
        "total_size": [float(size)] * n,
        "cct": {"clas": [n * float(size)] * n},
        "sum_cct_formula": {
            "clas": n * n * float(size),
            "dclas": n * n * lo + n * (n + 1) * (size - lo) / 2,
        },
        "queue_low": lo,
        "opt_sum_cct": float(size) * n * (n + 1) / 2,
        "notes": "dclas: thesis formula, exact for strict priority across queues and FIFO in a "
        "queue; not for Aalo's weighted sharing across queues",
    }


# ====================================================================== Coflex
def coflex_fig2() -> Instance:
    """Coflex Fig. 2 (TC-CX-1..3, 5..7): two coflows on two links, with sizes.

    Source: Wang, Ma, Li & Li, Coflex, IEEE INFOCOM 2017, Fig. 2-3, §II-C, §IV-B; the sizes
    and stage values are ours (docs/examples.md#coflex-fig2).

    The paper's two links are abstract. They are embedded here as **ingress ports 0 and 1**
    (link 1, link 2), every flow going to its own egress port (0..3), which carries only that
    flow and so never binds: egress loads equal the flows' sizes and the correlation vectors on
    the links, ρ and P* are unchanged.

    Instance (both released at 0): ``"A"``: link 1 (in0 → out0) 1, link 2 (in1 → out1) 1/2;
    ``S_A = ⟨1, 1/2⟩``, Γ_A = 1, ``d_A = ⟨1, 1/2⟩``. ``"B"``: link 1 (in0 → out2) 1/3, link 2
    (in1 → out3) 2; ``S_B = ⟨1/3, 2⟩``, Γ_B = 2, ``d_B = ⟨1/6, 1⟩``.

    Expected (allocations are fractions of link capacity on ⟨link 1, link 2⟩):

    - TC-CX-1: P* = 2/3 [TEXT]; HUG stage 1: a_A = ⟨2/3, 1/3⟩, a_B = ⟨1/9, 2/3⟩ (link 2 full,
      2/9 spare on link 1); stage 2 under the cap 2/3 gives B the spare: a_B = ⟨1/3, 2/3⟩;
      P_A = P_B = 2/3.
    - TC-CX-6: NaiveTradeoff(1/2): stage 1 a_A = ⟨1/3, 1/6⟩, a_B = ⟨1/18, 1/3⟩;
      P_A = P_B = 1/3.
    - TC-CX-7 (stage 2 = S2-MADD in SEBF order, recomputed only at arrivals and departures, no
      backfill): Coflex(1): a as HUG stage 1, progress (2/3, 2/3); Coflex(1/2):
      a_A = ⟨17/18, 17/36⟩, a_B = ⟨1/18, 1/3⟩, progress (17/18, 1/3); Coflex(0): a_A = ⟨1, 1/2⟩,
      a_B = 0. CCTs: HUG (3/2, 5/2); Coflex(1) (3/2, 5/2); Coflex(1/2) (18/17, 46/17), average
      32/17; Coflex(0) (1, 3). Backfilling the 7/36 left on link 2 at α = 1/2 gives CCT_B = 5/2,
      average 121/68.
    - Misreports (TC-CX-2, 3, 5) are under ``"misreports"``: reported vectors on the links,
      P* from the reports and the resulting *true* progress.

    Extra keys: ``"correlation"``, ``"p_star"``, ``"allocation"``, ``"progress"``,
    ``"misreports"``.

    Examples
    --------
    >>> from coflowlab.instances.examples import coflex_fig2
    >>> coflex_fig2().bottleneck.tolist()
    [1.0, 2.0]
    """
    return Instance.from_coflows(
        [
            Coflow([(0, 0, 1.0), (1, 1, 0.5)], label="A"),
            Coflow([(0, 2, 1 / 3), (1, 3, 2.0)], label="B"),
        ],
        4,
    )


def coflex_theorem2(n: int = 3) -> Instance:
    """Coflex Theorem 2's instance (TC-CX-4): HUG's cap can waste almost all capacity.

    Source: Coflex (IEEE INFOCOM 2017), §III-B, Theorem 2 (docs/examples.md#coflex-theorem2).

    Links 1..n are embedded as **ingress ports 0..n−1**, every flow going to its own egress
    port (see :func:`coflex_fig2`), so the fabric has ``3n − 2`` ports. Sizes equal the
    correlation vectors, so every Γ is 1. Coflows ``"C1".."C{n+1}"``, all at 0:

    - ``"Ck"``, k < n: link 1 size 1 and link k+1 size 1/2;
    - ``"Cn"``: link 1 size 1;
    - ``"C{n+1}"``: size 1 on each of links 2..n.

    Expected: P* = 1/n; NaiveTradeoff(α = 1) (= HUG's progress) gives every coflow progress
    1/n; link 1 is full and links 2..n each carry 2/n; utilisation (mean over the n links)
    ``1/n + 2(n − 1)/n²``: n = 2 → 1, 3 → 7/9, 4 → 5/8, 10 → 7/25, 100 → 149/5000.

    Parameters
    ----------
    n
        Number of links, ``>= 2``.

    Examples
    --------
    >>> from coflowlab.instances.examples import coflex_theorem2
    >>> inst = coflex_theorem2(3)
    >>> inst.num_ports, inst.num_coflows
    (7, 4)
    """
    n = _count("n", n, minimum=2)
    egress = iter(range(3 * n - 2))
    coflows = [
        Coflow([(0, next(egress), 1.0), (k, next(egress), 0.5)], label=f"C{k}")
        for k in range(1, n)
    ]
    coflows.append(Coflow([(0, next(egress), 1.0)], label=f"C{n}"))
    coflows.append(Coflow([(i, next(egress), 1.0) for i in range(1, n)], label=f"C{n + 1}"))
    return Instance.from_coflows(coflows, 3 * n - 2)


def _coflex_theorem2_expected(n: int) -> dict[str, Any]:
    return {
        "source": f"{_COFLEX} §III-B, Theorem 2",
        "labels": [f"C{k}" for k in range(1, n + 2)],
        "num_ports": 3 * n - 2,
        "rho": [1.0] * (n + 1),
        "width": [2] * (n - 1) + [1, n - 1],
        "length": [1.0] * (n + 1),
        "total_size": [1.5] * (n - 1) + [1.0, float(n - 1)],
        "p_star": 1 / n,
        "progress": {"naive_1": [1 / n] * (n + 1)},
        "link_usage": {"naive_1": [1.0] + [2 / n] * (n - 1)},
        "utilization": {"naive_1": 1 / n + 2 * (n - 1) / n**2},
    }


def coflex_single_link(n: int = 3) -> Instance:
    """Coflex TC-CX-8: n coflows on one link; HUG reduces to max-min fairness.

    Source: our instance after Coflex (IEEE INFOCOM 2017) §II-B
    (docs/examples.md#coflex-single-link).

    Instance: a 1×1 fabric; coflow ``"Ck"`` (k = 1..n) is one flow of size k (the sizes are
    this module's choice, distinct so that the smallest Γ is unique), all released at 0.

    Expected: P* = 1/n; HUG and Coflex(α = 1) give each coflow rate 1/n (max-min fair);
    Coflex(α) gives α/n to each, then the remaining 1 − α to the smallest Γ (C1). The key
    ``"rate"`` lists rates for HUG, Coflex(1) and Coflex(1/2). The optimum Σ CCT is
    ``Σ_k k(n − k + 1)`` (smallest first) [derived here].

    Parameters
    ----------
    n
        Number of coflows, ``>= 1``.

    Examples
    --------
    >>> from coflowlab.instances.examples import coflex_single_link
    >>> coflex_single_link(3).bottleneck.tolist()
    [1.0, 2.0, 3.0]
    """
    n = _count("n", n)
    return Instance.from_coflows(
        [Coflow([(0, 0, float(k))], label=f"C{k}") for k in range(1, n + 1)], 1
    )


def _coflex_single_link_expected(n: int) -> dict[str, Any]:
    half = [0.5 / n] * n
    half[0] += 0.5
    return {
        "source": "docs/examples.md#coflex-single-link",
        "labels": [f"C{k}" for k in range(1, n + 1)],
        "num_ports": 1,
        "rho": [float(k) for k in range(1, n + 1)],
        "width": [1] * n,
        "length": [float(k) for k in range(1, n + 1)],
        "total_size": [float(k) for k in range(1, n + 1)],
        "p_star": 1 / n,
        "rate": {"hug": [1 / n] * n, "coflex_1": [1 / n] * n, "coflex_0.5": half},
        "opt_sum_cct": float(sum(k * (n - k + 1) for k in range(1, n + 1))),
    }


# ====================================================================== Yosemite
def yosemite_y_i1() -> Instance:
    """Yosemite's shared instance Y-I1 (TC-Y-1..3): weighted coflows on 2 hosts.

    Source: our instance for Yosemite's Algorithms 1-3 (§IV-A, §IV-B, §V-A); the paper has no
    numeric example (docs/examples.md#yosemite-y-i1).

    Instance (2×2, all at 0): ``"C1"``: in0 → out1 2, w = 1; ``"C2"``: in0 → out0 1 and
    in1 → out1 1, w = 2; ``"C3"``: in1 → out0 3, w = 3. Port loads (in0, in1, out0, out1):
    C1 (2, 0, 0, 2), C2 (1, 1, 1, 1), C3 (0, 3, 3, 0).

    Expected: Algorithm 1 (primal-dual) order C2, C1, C3 with concurrent-open-shop cost 17,
    optimal over all six orders (costs: (1,2,3) 20, (1,3,2) 19, (2,1,3) 17, (2,3,1) 17,
    (3,1,2) 19, (3,2,1) 20). Algorithm 2, intended (non-increasing w/l) order C2, C3, C1, cost
    17; literal (non-decreasing) order C1, C3, C2, cost 19. Simulated (Alg. 3, re-sorting at
    every departure): intended order completes C2 at 1, C1 at 3, C3 at 4, Σ w C = 17; literal
    order C1 at 2, C2 at 3, C3 at 4, Σ w C = 20. Since the open-shop optimum (17) is a lower
    bound on the coflow optimum and the simulated schedule attains it, the fluid optimum is 17.

    Examples
    --------
    >>> from coflowlab.instances.examples import yosemite_y_i1
    >>> yosemite_y_i1().port_load.tolist()
    [[2.0, 0.0, 0.0, 2.0], [1.0, 1.0, 1.0, 1.0], [0.0, 3.0, 3.0, 0.0]]
    """
    return Instance.from_coflows(
        [
            Coflow([(0, 1, 2.0)], weight=1.0, label="C1"),
            Coflow([(0, 0, 1.0), (1, 1, 1.0)], weight=2.0, label="C2"),
            Coflow([(1, 0, 3.0)], weight=3.0, label="C3"),
        ],
        2,
    )


def yosemite_partial_capacity() -> Instance:
    """Yosemite TC-Y-4: Algorithm 3 (MADD on remaining capacity) with partial capacity.

    Source: our instance for Yosemite's Algorithm 3 (§V-A) (docs/examples.md#yosemite-partial).

    Instance (2×2, both at 0): ``"X"``: in0 → out0 2 and in0 → out1 1 (loads in0 3, out0 2,
    out1 1); ``"Y"``: in1 → out1 1.

    Expected in the order X, Y: ``g_X = 3``, rates 2/3 and 1/3, leaving in0 0, out0 1/3, out1
    2/3; ``g_Y = max(1/1, 1/(2/3)) = 3/2``, rate 2/3. The 1/3 left on in1 and out0 cannot be
    used (no flow in1 → out0). Key ``"rate"``: per-flow rates in flow order; ``"g"``: per
    coflow.

    Examples
    --------
    >>> from coflowlab.instances.examples import yosemite_partial_capacity
    >>> yosemite_partial_capacity().bottleneck.tolist()
    [3.0, 1.0]
    """
    return Instance.from_coflows(
        [Coflow([(0, 0, 2.0), (0, 1, 1.0)], label="X"), Coflow([(1, 1, 1.0)], label="Y")], 2
    )


def yosemite_single_port() -> Instance:
    """Yosemite TC-Y-5: Algorithm 1 on one port reduces to Smith's rule.

    Source: our instance for Yosemite's Algorithm 1 (§IV-A)
    (docs/examples.md#yosemite-single-port).

    Instance: ``m = 1``; ``"C1".."C3"`` with loads ``p = (3, 1, 2)`` and weights
    ``w = (1, 1, 4)``, all at 0.

    Expected: Algorithm 1 order C3, C2, C1 (Smith's order, w/p = 2, 1, 1/3), cost
    ``4·2 + 1·3 + 1·6 = 17``, the optimum over all six orders; the next best is 19.

    Examples
    --------
    >>> from coflowlab.instances.examples import yosemite_single_port
    >>> yosemite_single_port().coflow_weight.tolist()
    [1.0, 1.0, 4.0]
    """
    return Instance.from_matrices(
        [[[3]], [[1]], [[2]]], weight=[1, 1, 4], labels=["C1", "C2", "C3"]
    )


# ====================================================================== Philae / CODA
def philae_thin_bypass() -> Instance:
    """Philae P-5: thin bypass vs pilot serialisation vs work conservation.

    Source: our instance for Philae's thin-coflow bypass (docs/examples.md#philae-thin-bypass).

    Instance (2×2, MB, 1 MB per time unit): ``"X"``: in0 → out0 1 MB and in1 → out1 1 MB, at 0.

    Expected CCT: (a) thin bypass (T = 7): 1; (b) bypass disabled (T = 0), work conservation off:
    the pilot x1 runs first and x2 waits until 1, CCT 2; (c) bypass disabled, work conservation
    on: 1. The optimum is 1 = ρ [derived here].

    Examples
    --------
    >>> from coflowlab.instances.examples import philae_thin_bypass
    >>> philae_thin_bypass().bottleneck.tolist()
    [1.0]
    """
    return Instance.from_coflows([Coflow([(0, 0, 1.0), (1, 1, 1.0)], label="X")], 2, units=_MB)


def philae_misordering() -> Instance:
    """Philae P-6: the cost of misordering two coflows on one port pair.

    Source: our instance for Philae's misordering analysis (docs/examples.md#philae-misordering).

    Instance (1×1, MB): ``"C1"``: 10 flows of 1 MB; ``"C2"``: 20 flows of 1 MB; both at 0.

    Expected (coflow-serial): right order CCTs (10, 30), sum 40; wrong order (20 for C2, 30 for
    C1), sum 50; relative gap 10/40 = 0.25. On one link shortest-coflow-first is optimal, so the
    optimum Σ CCT is 40 [derived here].

    Examples
    --------
    >>> from coflowlab.instances.examples import philae_misordering
    >>> philae_misordering().width.tolist()
    [10, 20]
    """
    return Instance.from_coflows(
        [Coflow([(0, 0, 1.0)] * 10, label="C1"), Coflow([(0, 0, 1.0)] * 20, label="C2")],
        1,
        units=_MB,
    )


def philae_queue_transit() -> Instance:
    """Philae P-8: Aalo's queue transit ("try and miss") vs oracle placement.

    Source: our instance for Philae's critique of Aalo (docs/examples.md#philae-queue-transit).

    Instance (1×1, MB, 1 MB per time unit): ``"A"`` and ``"B"``, one 30 MB flow each, both at
    0, A first in FIFO order. Aalo thresholds 10 MB, E = 10.

    Expected: Aalo: A is demoted at 10, B at 20 (strict priority) or 21 (10:1 weighting); in
    Q1 A runs first: A finishes at 40, B at 60, average 50 under both cross-queue rules.
    Aalo-Oracle (or Philae with exact sizes, policy A): both start in Q1, FIFO: A at 30, B at 60,
    average 45; 50/45 = 1.11 is queue-transit overhead. Optimum Σ CCT 90 [derived here].

    Examples
    --------
    >>> from coflowlab.instances.examples import philae_queue_transit
    >>> philae_queue_transit().total_size.tolist()
    [30.0, 30.0]
    """
    return Instance.from_coflows(
        [Coflow([(0, 0, 30.0)], label="A"), Coflow([(0, 0, 30.0)], label="B")], 1, units=_MB
    )


def philae_quantized_scf() -> Instance:
    """Philae P-9(a): queue-quantised SCF across two queues.

    Source: our instance (docs/examples.md#philae-quantized-scf).

    Instance (1×1, MB, 1 MB per time unit): ``"C1"`` 5 MB (Q0) and ``"C2"`` 50 MB (Q1), both
    at 0.

    Expected: strict priority: C1 at 5, C2 at 55, average 30 (this is SCF); fluid 10:1
    weighting: C1 gets 10/11 of the rate and finishes at 5.5, C2 still at 55, average 30.25.
    Optimum Σ CCT 60 [derived here].

    Examples
    --------
    >>> from coflowlab.instances.examples import philae_quantized_scf
    >>> philae_quantized_scf().bottleneck.tolist()
    [5.0, 50.0]
    """
    return Instance.from_coflows(
        [Coflow([(0, 0, 5.0)], label="C1"), Coflow([(0, 0, 50.0)], label="C2")], 1, units=_MB
    )


def philae_same_queue() -> Instance:
    """Philae P-9(b): two coflows in the same queue; FIFO is not SCF.

    Source: our instance (docs/examples.md#philae-quantized-scf).

    Instance (1×1, MB, 1 MB per time unit): ``"C3"`` 60 MB and ``"C4"`` 20 MB, both in Q1. The
    example has C3 arrive "just before" C4; here both are released at 0 and C3 comes first in
    instance order, which is FIFO's tie-break.

    Expected: FIFO: C3 at 60, C4 at 80, average 70; SCF: C4 at 20, C3 at 80, average 50 (the
    optimum on one link, derived here).

    Examples
    --------
    >>> from coflowlab.instances.examples import philae_same_queue
    >>> philae_same_queue().coflow_label
    ('C3', 'C4')
    """
    return Instance.from_coflows(
        [Coflow([(0, 0, 60.0)], label="C3"), Coflow([(0, 0, 20.0)], label="C4")], 1, units=_MB
    )


def philae_contention() -> Instance:
    """Philae P-10: contention counting.

    Source: our instance for Philae's contention count (docs/examples.md#philae-contention).

    Instance (3×3, all at 0; sizes 1 MB, this module's choice):
    ``"A" = {s1 → r1}``, ``"B" = {s1 → r2, s3 → r2}``, ``"C" = {s2 → r2}``, i.e. 0-indexed
    A: 0 → 0; B: 0 → 1, 2 → 1; C: 1 → 1.

    Expected: contention (number of other coflows sharing a port) c(A) = 1, c(B) = 2,
    c(C) = 1 (B shares s1 with A and r2 with C). Key ``"contention"``.

    Examples
    --------
    >>> from coflowlab.instances.examples import philae_contention
    >>> philae_contention().width.tolist()
    [1, 2, 1]
    """
    return Instance.from_coflows(
        [
            Coflow([(0, 0, 1.0)], label="A"),
            Coflow([(0, 1, 1.0), (2, 1, 1.0)], label="B"),
            Coflow([(1, 1, 1.0)], label="C"),
        ],
        3,
        units=_MB,
    )


def coda_pioneer_straggler() -> Instance:
    """CODA Fig. 3 (C-1): the cost of pioneers and stragglers.

    Source: Zhang et al., CODA, SIGCOMM 2016, §4.1, Fig. 3 (docs/examples.md#coda-fig3).

    Instance (1×1, all at 0): ``"C1"`` and ``"C2"``, each 10 flows of 0.1 time units on the
    one bottleneck; C1 has priority.

    Expected: no identification error: CCTs (1, 2), average 1.5. One C2 flow misidentified into
    C1 (pioneer): CCTs (1.1, 2), average 1.55 (×1.03; C1 ×1.1). One C1 flow misidentified into
    C2 (straggler, MADD or fair inside a coflow): CCTs (2, 2), average 2 (×1.33; C1 ×2).
    Straggler with intra-coflow prioritisation: expected average 1.75. The misidentified
    scenarios are under ``"identification_errors"`` (the instance holds the true coflows).
    Optimum Σ CCT 3 [derived here].

    Examples
    --------
    >>> from coflowlab.instances.examples import coda_pioneer_straggler
    >>> coda_pioneer_straggler().width.tolist()
    [10, 10]
    """
    return Instance.from_coflows(
        [Coflow([(0, 0, 0.1)] * 10, label="C1"), Coflow([(0, 0, 0.1)] * 10, label="C2")], 1
    )


# ====================================================================== registry
EXAMPLES: dict[str, Callable[[], Instance]] = {
    "fig_1_1": fig_1_1,
    "fig_2_2": fig_2_2,
    "fig_2_3": fig_2_3,
    "fig_3_2": fig_3_2,
    "fig_4_6": fig_4_6,
    "fig_5_1": fig_5_1,
    "fig_5_1_deadline": partial(fig_5_1, deadline=True),
    "fig_5_3": fig_5_3,
    "fig_b1": fig_b1,
    "fig_b2": fig_b2,
    "anti_diagonal_1": anti_diagonal,
    "anti_diagonal_2": partial(anti_diagonal, (3, 3, 1), (0, 3, 0)),
    "theory_i1": theory_i1,
    "theory_i2": theory_i2,
    "theory_i3": theory_i3,
    "theory_i4": theory_i4,
    "theory_r1": theory_r1,
    "slotted_gap_capacity_two": slotted_gap_capacity_two,
    "slotted_gap_unit_capacity": slotted_gap_unit_capacity,
    "coflowsim_micro": coflowsim_micro,
    "coflowsim_micro_coflowsim": partial(coflowsim_micro, "coflowsim"),
    "aalo_theorem_c11": aalo_theorem_c11,
    "aalo_identical": aalo_identical,
    "coflex_fig2": coflex_fig2,
    "coflex_theorem2": coflex_theorem2,
    "coflex_single_link": coflex_single_link,
    "yosemite_y_i1": yosemite_y_i1,
    "yosemite_partial_capacity": yosemite_partial_capacity,
    "yosemite_single_port": yosemite_single_port,
    "philae_thin_bypass": philae_thin_bypass,
    "philae_misordering": philae_misordering,
    "philae_queue_transit": philae_queue_transit,
    "philae_quantized_scf": philae_quantized_scf,
    "philae_same_queue": philae_same_queue,
    "philae_contention": philae_contention,
    "coda_pioneer_straggler": coda_pioneer_straggler,
}
"""Every example by name, as a zero-argument builder (families at their default parameters)."""

_R51 = {
    "labels": ["C1", "C2"],
    "num_ports": 3,
    "rho": [4.0, 2.0],
    "width": [3, 2],
    "length": [4.0, 2.0],
    "total_size": [7.0, 4.0],
}

EXPECTED: dict[str, dict[str, Any]] = {
    "fig_1_1": _fig_1_1_expected(0.1),
    "fig_2_2": {
        "source": f"{_VARYS} §2.2.3, Fig. 2.2",
        "labels": ["C"],
        "num_ports": 3,
        "rho": [4.0],
        "width": [2],
        "length": [4.0],
        "total_size": [7.0],
        "cct": {"madd": [4.0]},
        "fct": {"madd": [4.0, 4.0], "fair": [3.0, 4.0], "sff": [3.0, 4.0]},
        "opt_sum_cct": 4.0,
    },
    "fig_2_3": {
        "source": f"{_VARYS} §2.3.4, Fig. 2.3",
        "labels": ["App-1", "App-2"],
        "num_ports": 1,
        "rho": [3.0, 1.0],
        "width": [3, 1],
        "length": [1.0, 1.0],
        "total_size": [3.0, 1.0],
        "cct": {"fair": [4.0, 4.0], "sff": [4.0, 2.0], "opt": [4.0, 1.0]},
        "avg_cct": {"fair": 4.0, "sff": 3.0, "opt": 2.5},
        "fct": {"fair": [4.0, 4.0, 4.0, 4.0]},
        "avg_fct": {"fair": 4.0, "sff": 2.5, "edf": 2.5},
        "flows_meeting_deadline": {"fair": 0, "sff": 1, "edf": 1, "max": 1},
        "coflows_meeting_deadline": {"fair": [], "opt": ["App-2"]},
        "opt_sum_cct": 5.0,
    },
    "fig_3_2": {
        "source": f"{_VARYS} §3.2, Fig. 3.2",
        "labels": ["C"],
        "num_ports": 3,
        "rho": [4.0],
        "width": [6],
        "length": [2.0],
        "total_size": [8.0],
        "cct": {"madd": [4.0], "fair": [5.0], "sff": [6.0], "wss": [4.0]},
        "fct": {"madd": [4.0] * 6, "fair": [3.0, 3.0, 3.0, 3.0, 5.0, 5.0]},
        "fct_sorted": {"sff": [1.0, 1.0, 2.0, 2.0, 4.0, 6.0]},
        "avg_fct": {"madd": 4.0, "fair": 11 / 3, "sff": 8 / 3, "wss": 4.0},
        "opt_sum_cct": 4.0,
    },
    "fig_4_6": _fig_4_6_expected(100),
    "fig_5_1": {
        "source": f"{_VARYS} §5.3, Fig. 5.1; reconstruction, docs/examples.md#fig-5-1",
        **_R51,
        "cct": {
            "fair": [4.0, 4.0],
            "sff": [4.0, 3.0],
            "sff_tie_c1": [4.0, 4.0],
            "wss": [4.0, 4.0],
            "varys": [4.0, 2.0],
            "opt": [4.0, 2.0],
        },
        "avg_cct": {"fair": 4.0, "sff": 3.5, "sff_tie_c1": 4.0, "wss": 4.0, "varys": 3.0},
        "fct": {
            "fair": [4.0, 4.0, 2.0, 4.0, 3.0],
            "sff": [4.0, 4.0, 1.0, 2.0, 3.0],
            "sff_tie_c1": [4.0, 2.0, 1.0, 4.0, 3.0],
            "wss": [4.0, 4.0, 3.0, 4.0, 3.0],
            "varys": [4.0, 4.0, 3.0, 2.0, 2.0],
        },
        "avg_fct": {"fair": 3.4, "sff": 2.8, "sff_tie_c1": 2.8, "wss": 3.6, "varys": 3.0},
        "opt_sum_cct": 6.0,
        "notes": "sff breaks the tie on in1 towards C2 (needed for the thesis's 3.5)",
    },
    "fig_5_1_deadline": {
        "source": f"{_VARYS} §5.3, Fig. 5.1 with deadlines; docs/examples.md#fig-5-1",
        **_R51,
        "deadline": {
            "fair_met": [],
            "wss_met": [],
            "edf_probability_met": {"C1": 0.0, "C2": 0.25},
            "varys_admitted": ["C2"],
            "varys_rejected": ["C1"],
            "varys_cct": {"C2": 2.0},
        },
    },
    "fig_5_3": {
        "source": f"{_VARYS} §5.5.3, Fig. 5.3; reconstruction, docs/examples.md#fig-5-3",
        "labels": ["C1", "C2"],
        "num_ports": 3,
        "rho": [4.0, 3.0],
        "width": [2, 3],
        "length": [2.0, 3.0],
        "total_size": [4.0, 9.0],
        "cct": {
            "scf": [4.0, 7.0],
            "ncf": [4.0, 7.0],
            "tcf": [4.0, 7.0],
            "sebf": [7.0, 3.0],
            "opt": [7.0, 3.0],
        },
        "avg_cct": {"scf": 5.5, "ncf": 5.5, "tcf": 5.5, "sebf": 5.0},
        "opt_sum_cct": 10.0,
    },
    "fig_b1": {
        "source": f"{_VARYS} App. B.2, Fig. B.1; reconstruction, docs/examples.md#fig-b-1",
        "labels": ["C1", "C2", "C3"],
        "num_ports": 2,
        "rho": [1.0, 1.0, 0.5],
        "width": [1, 2, 1],
        "length": [1.0, 1.0, 0.5],
        "total_size": [1.0, 2.0, 0.5],
        "cct": {
            "fair": [2.0, 2.0, 1.0],
            "order_C1_C2_C3": [1.0, 2.0, 1.5],
            "opt": [2.0, 1.0, 0.5],
            "varys": [1.0, 2.5, 0.5],
        },
        "avg_cct": {"fair": 5 / 3, "order_C1_C2_C3": 1.5, "opt": 7 / 6, "varys": 4 / 3},
        "makespan": {"fair": 2.0, "order_C1_C2_C3": 2.5, "opt": 2.0},
        "opt_sum_cct": 3.5,
        "notes": "the thesis calls C1>C2>C3 (avg 1.5) optimal; the fluid optimum is 7/6 (§6.3); "
        "varys breaks the SEBF tie towards C1 and uses greedy backfill",
    },
    "fig_b2": {
        "source": f"{_VARYS} App. B.3, Fig. B.2; reconstruction, docs/examples.md#fig-b-2",
        "labels": ["C1", "C2"],
        "num_ports": 2,
        "rho": [2.0, 2.0],
        "width": [2, 1],
        "length": [1.0, 2.0],
        "total_size": [2.0, 2.0],
        "cct": {
            "order_C1_C2": [2.0, 4.0],
            "order_C2_C1": [4.0, 2.0],
            "varys": [2.0, 3.0],
            "opt": [2.0, 3.0],
        },
        "avg_cct": {"order_C1_C2": 3.0, "order_C2_C1": 3.0, "varys": 2.5},
        "opt_sum_cct": 5.0,
        "notes": "varys breaks the SEBF tie towards C1",
    },
    "anti_diagonal_1": {
        "source": f"{_VARYS} App. B.1, reduction in the proof of Theorem B.1.1",
        "labels": ["C1", "C2", "C3"],
        "num_ports": 2,
        "rho": [1.0, 3.0, 3.0],
        "width": [1, 1, 2],
        "length": [1.0, 3.0, 3.0],
        "total_size": [1.0, 3.0, 5.0],
        "opt_sum_cct": 10.0,
    },
    "anti_diagonal_2": {
        "source": f"{_VARYS} App. B.1, reduction in the proof of Theorem B.1.1",
        "labels": ["C1", "C2", "C3"],
        "num_ports": 2,
        "rho": [3.0, 3.0, 1.0],
        "width": [1, 2, 1],
        "length": [3.0, 3.0, 1.0],
        "total_size": [3.0, 6.0, 1.0],
        "opt_sum_cct": 12.0,
    },
    "theory_i1": {
        "source": f"{_THEORY} (theory_i1)",
        "labels": ["0"],
        "num_ports": 2,
        "rho": [4.0],
        "width": [3],
        "length": [3.0],
        "total_size": [6.0],
        "opt_sum_wc": {"fluid": 4.0, "slotted": 4.0},
        "lp_bounds": 4.0,
    },
    "theory_i2": {
        "source": f"{_THEORY} (theory_i2)",
        "labels": ["0", "1", "2"],
        "num_ports": 1,
        "rho": [3.0, 1.0, 2.0],
        "width": [1, 1, 1],
        "length": [3.0, 1.0, 2.0],
        "total_size": [3.0, 1.0, 2.0],
        "opt_sum_wc": {"fluid": 19.0, "slotted": 19.0},
        "order": {"pd": [1, 0, 2]},
        "order_sum_wc": {"pd": 19.0},
    },
    "theory_i3": {
        "source": f"{_THEORY} (theory_i3)",
        "labels": ["A", "B", "C"],
        "num_ports": 2,
        "rho": [1.0, 1.0, 1.0],
        "width": [1, 1, 2],
        "length": [1.0, 1.0, 1.0],
        "total_size": [1.0, 1.0, 2.0],
        "opt_sum_wc": {"fluid": 4.0, "slotted": 4.0},
        "completion": {"opt": [1.0, 1.0, 2.0], "pd": [2.0, 1.0, 2.0]},
        "lp_bounds": 4.0,
        "order": {"pd": [1, 2, 0]},
        "order_sum_wc": {"pd": 5.0},
    },
    "theory_i4": {
        "source": f"{_THEORY} (theory_i4)",
        "labels": ["A", "B", "C"],
        "num_ports": 2,
        "rho": [1.0, 1.0, 1.0],
        "width": [2, 1, 1],
        "length": [1.0, 1.0, 1.0],
        "total_size": [2.0, 1.0, 1.0],
        "opt_sum_wc": {"fluid": 4.0, "slotted": 4.0},
        "completion": {"opt": [2.0, 1.0, 1.0]},
        "order": {"a_first": [0, 1, 2]},
        "order_sum_wc": {"a_first": 5.0},
    },
    "theory_r1": {
        "source": f"{_THEORY} (theory_r1)",
        "labels": ["0", "1"],
        "num_ports": 2,
        "rho": [2.0, 1.0],
        "width": [1, 2],
        "length": [2.0, 1.0],
        "total_size": [2.0, 2.0],
        "opt_sum_wc": {"slotted": 9.0},
        "completion": {"opt_slotted": [3.0, 2.0]},
    },
    "slotted_gap_capacity_two": {
        "source": "our instance (issue 19: fluid against slotted optima)",
        "labels": ["0"],
        "num_ports": 1,
        "rho": [0.5],
        "width": [1],
        "length": [1.0],
        "total_size": [1.0],
        "opt_sum_wc": {"fluid": 0.5, "slotted": 1.0},
        "completion": {"opt": [0.5], "opt_slotted": [1.0]},
    },
    "slotted_gap_unit_capacity": {
        "source": "our instance (issue 19: fluid against slotted optima)",
        "labels": ["A", "B"],
        "num_ports": 4,
        "rho": [2.0, 4.0],
        "width": [3, 3],
        "length": [2.0, 2.0],
        "total_size": [5.0, 4.0],
        "opt_sum_wc": {"fluid": 6.5, "slotted": 7.0},
        "completion": {"opt": [2.5, 4.0], "opt_slotted": [3.0, 4.0]},
    },
    "coflowsim_micro": {
        "source": _COFLOWSIM_SOURCE,
        "labels": ["1", "2", "3"],
        "num_ports": 4,
        "rho": [8.0, 32.0, 80.0],
        "width": [1, 4, 1],
        "length": [1.0, 2.0, 10.0],
        "total_size": [1.0, 6.0, 10.0],
        "coflowsim": _COFLOWSIM_CCT,
        "opt_sum_cct": 120.0,
        "notes": "the coflowsim CCTs are CoflowSim's output, which releases all three coflows "
        "at 0 (see coflowsim_micro_coflowsim); with the file's releases nothing overlaps",
    },
    "coflowsim_micro_coflowsim": {
        "source": _COFLOWSIM_SOURCE,
        "labels": ["1", "2", "3"],
        "num_ports": 4,
        "rho": [8.0, 32.0, 80.0],
        "width": [1, 4, 1],
        "length": [1.0, 2.0, 10.0],
        "total_size": [1.0, 6.0, 10.0],
        "coflowsim": _COFLOWSIM_CCT,
        "coflowsim_sum_cct": {
            "fifo": 144.0,
            "sebf": 144.0,
            "fair": 176.0,
            "pfp": 144.0,
            "dark": 168.0,
        },
        "notes": "CoflowSim output (8 ms quanta; its FAIR is not max-min)",
    },
    "aalo_theorem_c11": _aalo_c11_expected(4, 2),
    "aalo_identical": _aalo_identical_expected(10, 50.0),
    "coflex_fig2": {
        "source": f"{_COFLEX} Fig. 2-3, §II-C, §IV-B; docs/examples.md#coflex-fig2",
        "labels": ["A", "B"],
        "num_ports": 4,
        "rho": [1.0, 2.0],
        "width": [2, 2],
        "length": [1.0, 2.0],
        "total_size": [1.5, 7 / 3],
        "correlation": {"A": [1.0, 0.5], "B": [1 / 6, 1.0]},
        "p_star": 2 / 3,
        "allocation": {
            "hug_stage1": {"A": [2 / 3, 1 / 3], "B": [1 / 9, 2 / 3]},
            "hug": {"A": [2 / 3, 1 / 3], "B": [1 / 3, 2 / 3]},
            "naive_0.5_stage1": {"A": [1 / 3, 1 / 6], "B": [1 / 18, 1 / 3]},
            "coflex_1": {"A": [2 / 3, 1 / 3], "B": [1 / 9, 2 / 3]},
            "coflex_0.5": {"A": [17 / 18, 17 / 36], "B": [1 / 18, 1 / 3]},
            "coflex_0": {"A": [1.0, 0.5], "B": [0.0, 0.0]},
        },
        "progress": {
            "hug": [2 / 3, 2 / 3],
            "naive_0.5": [1 / 3, 1 / 3],
            "coflex_1": [2 / 3, 2 / 3],
            "coflex_0.5": [17 / 18, 1 / 3],
            "coflex_0": [1.0, 0.0],
        },
        "cct": {
            "hug": [1.5, 2.5],
            "coflex_1": [1.5, 2.5],
            "coflex_0.5": [18 / 17, 46 / 17],
            "coflex_0": [1.0, 3.0],
            "coflex_0.5_backfill": [18 / 17, 2.5],
        },
        "avg_cct": {
            "hug": 2.0,
            "coflex_0.5": 32 / 17,
            "coflex_0": 2.0,
            "coflex_0.5_backfill": 121 / 68,
        },
        "misreports": [
            {
                "case": "TC-CX-2",
                "reports": {"B": [1.0, 1.0]},
                "mechanism": "coflex_1",
                "p_star": 0.5,
                "true_progress": {"A": 0.5, "B": 0.75},
            },
            {
                "case": "TC-CX-2",
                "reports": {"B": [1.0, 1.0]},
                "mechanism": "hug",
                "p_star": 0.5,
                "true_progress": {"B": 0.5},
            },
            {
                "case": "TC-CX-3",
                "reports": {"A": [1.0, 1.0], "B": [1.0, 1.0]},
                "mechanism": "hug",
                "p_star": 0.5,
                "true_progress": {"A": 0.5, "B": 0.5},
            },
            {
                "case": "TC-CX-5",
                "reports": {"A": [1.0, 1.0]},
                "mechanism": "coflex_1",
                "p_star": 0.5,
                "true_progress": {"A": 0.5},
            },
        ],
        "notes": "links 1 and 2 are ingress ports 0 and 1; CCTs recompute only at arrivals and "
        "departures with S2-MADD stage 2 (TC-CX-7); TC-CX-1's prose conflicts with its cap",
    },
    "coflex_theorem2": _coflex_theorem2_expected(3),
    "coflex_single_link": _coflex_single_link_expected(3),
    "yosemite_y_i1": {
        "source": f"{_YOSEMITE} Alg. 1-3; our instance, docs/examples.md#yosemite-y-i1",
        "labels": ["C1", "C2", "C3"],
        "num_ports": 2,
        "rho": [2.0, 1.0, 3.0],
        "width": [1, 2, 1],
        "length": [2.0, 1.0, 3.0],
        "total_size": [2.0, 2.0, 3.0],
        "order": {
            "yosemite_alg1": [1, 0, 2],
            "yosemite_alg2": [1, 2, 0],
            "yosemite_alg2_literal": [0, 2, 1],
        },
        "order_sum_wc": {
            "yosemite_alg1": 17.0,
            "yosemite_alg2": 17.0,
            "yosemite_alg2_literal": 19.0,
        },
        "cos_sum_wc_by_order": {
            "0,1,2": 20.0,
            "0,2,1": 19.0,
            "1,0,2": 17.0,
            "1,2,0": 17.0,
            "2,0,1": 19.0,
            "2,1,0": 20.0,
        },
        "completion": {"yosemite": [3.0, 1.0, 4.0], "yosemite_literal": [2.0, 3.0, 4.0]},
        "sum_wc": {"yosemite": 17.0, "yosemite_literal": 20.0},
        "opt_sum_wc": {"fluid": 17.0},
    },
    "yosemite_partial_capacity": {
        "source": f"{_YOSEMITE} Alg. 3; our instance, docs/examples.md#yosemite-partial",
        "labels": ["X", "Y"],
        "num_ports": 2,
        "rho": [3.0, 1.0],
        "width": [2, 1],
        "length": [2.0, 1.0],
        "total_size": [3.0, 1.0],
        "g": [3.0, 1.5],
        "rate": [2 / 3, 1 / 3, 2 / 3],
    },
    "yosemite_single_port": {
        "source": f"{_YOSEMITE} Alg. 1; our instance, docs/examples.md#yosemite-single-port",
        "labels": ["C1", "C2", "C3"],
        "num_ports": 1,
        "rho": [3.0, 1.0, 2.0],
        "width": [1, 1, 1],
        "length": [3.0, 1.0, 2.0],
        "total_size": [3.0, 1.0, 2.0],
        "order": {"yosemite_alg1": [2, 1, 0]},
        "order_sum_wc": {"yosemite_alg1": 17.0},
        "opt_sum_wc": {"fluid": 17.0, "slotted": 17.0},
        "second_best_sum_wc": 19.0,
    },
    "philae_thin_bypass": {
        "source": f"{_PHILAE}philae-thin-bypass",
        "labels": ["X"],
        "num_ports": 2,
        "rho": [1.0],
        "width": [2],
        "length": [1.0],
        "total_size": [2.0],
        "cct": {
            "philae_bypass": [1.0],
            "philae_no_bypass_no_wc": [2.0],
            "philae_no_bypass_wc": [1.0],
        },
        "opt_sum_cct": 1.0,
    },
    "philae_misordering": {
        "source": f"{_PHILAE}philae-misordering",
        "labels": ["C1", "C2"],
        "num_ports": 1,
        "rho": [10.0, 20.0],
        "width": [10, 20],
        "length": [1.0, 1.0],
        "total_size": [10.0, 20.0],
        "cct": {"order_C1_C2": [10.0, 30.0], "order_C2_C1": [30.0, 20.0]},
        "relative_gap": 0.25,
        "opt_sum_cct": 40.0,
    },
    "philae_queue_transit": {
        "source": f"{_PHILAE}philae-queue-transit",
        "labels": ["A", "B"],
        "num_ports": 1,
        "rho": [30.0, 30.0],
        "width": [1, 1],
        "length": [30.0, 30.0],
        "total_size": [30.0, 30.0],
        "cct": {"aalo": [40.0, 60.0], "aalo_oracle": [30.0, 60.0]},
        "avg_cct": {"aalo": 50.0, "aalo_oracle": 45.0},
        "opt_sum_cct": 90.0,
    },
    "philae_quantized_scf": {
        "source": f"{_PHILAE}philae-quantized-scf",
        "labels": ["C1", "C2"],
        "num_ports": 1,
        "rho": [5.0, 50.0],
        "width": [1, 1],
        "length": [5.0, 50.0],
        "total_size": [5.0, 50.0],
        "cct": {"strict_priority": [5.0, 55.0], "weighted_10_1": [5.5, 55.0]},
        "avg_cct": {"strict_priority": 30.0, "weighted_10_1": 30.25},
        "opt_sum_cct": 60.0,
    },
    "philae_same_queue": {
        "source": f"{_PHILAE}philae-quantized-scf",
        "labels": ["C3", "C4"],
        "num_ports": 1,
        "rho": [60.0, 20.0],
        "width": [1, 1],
        "length": [60.0, 20.0],
        "total_size": [60.0, 20.0],
        "cct": {"fifo": [60.0, 80.0], "scf": [80.0, 20.0]},
        "avg_cct": {"fifo": 70.0, "scf": 50.0},
        "opt_sum_cct": 100.0,
    },
    "philae_contention": {
        "source": f"{_PHILAE}philae-contention",
        "labels": ["A", "B", "C"],
        "num_ports": 3,
        "rho": [1.0, 2.0, 1.0],
        "width": [1, 2, 1],
        "length": [1.0, 1.0, 1.0],
        "total_size": [1.0, 2.0, 1.0],
        "contention": [1, 2, 1],
    },
    "coda_pioneer_straggler": {
        "source": "Zhang et al., CODA, SIGCOMM 2016, §4.1, Fig. 3",
        "labels": ["C1", "C2"],
        "num_ports": 1,
        "rho": [1.0, 1.0],
        "width": [10, 10],
        "length": [0.1, 0.1],
        "total_size": [1.0, 1.0],
        "cct": {"order_C1_C2": [1.0, 2.0]},
        "avg_cct": {"order_C1_C2": 1.5},
        "identification_errors": {
            "pioneer": {"cct": [1.1, 2.0], "avg_cct": 1.55},
            "straggler": {"cct": [2.0, 2.0], "avg_cct": 2.0},
            "straggler_intra_priority": {"avg_cct": 1.75},
        },
        "opt_sum_cct": 3.0,
    },
}
"""Expected values of every example in :data:`EXAMPLES` (same keys); see the module docstring
for the schema. Families are given at their registered default parameters."""
