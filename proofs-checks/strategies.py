"""Hypothesis strategies for coflowlab instances, built through the public constructors.

Generated instances are valid by construction; shrinking works on the small integers and
floats they are drawn from, so a minimal counterexample prints (``repr``) as the Python that
rebuilds it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from hypothesis import strategies as st

import coflowlab as cl
from coflowlab.exceptions import InvalidInstanceError, TraceFormatError


@st.composite
def instances(
    draw: st.DrawFn,
    *,
    max_ports: int = 4,
    max_coflows: int = 5,
    max_flows_per_coflow: int = 6,
    integral: bool = False,
    releases: bool = True,
    weights: bool = True,
    deadlines: bool = False,
    capacities: bool = False,
) -> cl.Instance:
    """Valid instances with up to the given numbers of ports, coflows and flows."""
    m = draw(st.integers(1, max_ports))
    n = draw(st.integers(1, max_coflows))
    size = (
        st.integers(1, 9).map(float)
        if integral
        else st.floats(0.01, 100.0, allow_nan=False, allow_infinity=False)
    )
    coflows = []
    for _ in range(n):
        k = draw(st.integers(1, max_flows_per_coflow))
        flows = [
            (draw(st.integers(0, m - 1)), draw(st.integers(0, m - 1)), draw(size))
            for _ in range(k)
        ]
        coflows.append(
            cl.Coflow(
                flows,
                release=draw(st.integers(0, 10).map(float)) if releases else 0.0,
                weight=draw(st.integers(0, 5).map(float)) if weights else 1.0,
                deadline=draw(st.one_of(st.none(), st.floats(1.0, 50.0))) if deadlines else None,
            )
        )
    fabric: cl.Fabric | int = m
    if capacities:
        cap = st.sampled_from([0.5, 1.0, 2.0])
        fabric = cl.Fabric(m, [draw(cap) for _ in range(m)], [draw(cap) for _ in range(m)])
    return cl.Instance.from_coflows(coflows, fabric)


def sequential_schedule(inst: cl.Instance, order: np.ndarray) -> cl.FluidSchedule:
    """A trivially feasible schedule: the flows one after another at full rate, after the
    last release. Completion times follow from the order alone."""
    builder = cl.FluidScheduleBuilder(inst.num_flows)
    t = float(inst.flow_release.max())
    cap_in, cap_out = inst.fabric.ingress_capacity, inst.fabric.egress_capacity
    for e in order:
        rate = float(min(cap_in[inst.flow_src[e]], cap_out[inst.flow_dst[e]]))
        builder.set_rates(t, [e], [rate])
        t += float(inst.flow_size[e]) / rate
        builder.set_rates(t, [e], [0.0])
    return builder.build()


# ---------------------------------------------------------------------- more valid instances
def _flow_present(draw: st.DrawFn, density: float) -> bool:
    """A Bernoulli(density) draw that shrinks towards *absent* (fewer flows)."""
    if density >= 1.0:
        return True
    return draw(st.integers(0, 99)) >= round(100 * (1.0 - density))


@st.composite
def matrix_instances(
    draw: st.DrawFn,
    *,
    min_ports: int = 1,
    max_ports: int = 4,
    min_coflows: int = 1,
    max_coflows: int = 5,
    density: float = 0.4,
    integral: bool = True,
    max_size: int = 9,
    releases: bool = False,
    weights: bool = True,
    deadlines: bool = False,
    dependencies: bool = False,
    diagonal: bool = False,
    capacities: bool = False,
) -> cl.Instance:
    """Valid instances drawn matrix by matrix, through :meth:`Instance.from_coflows`.

    Parameters
    ----------
    min_ports, max_ports, min_coflows, max_coflows
        Ranges of the number of ports ``m`` and coflows ``n`` (``max_ports=1``: one port,
        the problem ``1||Σ w C`` of docs/theory.md#f2).
    density
        Probability that an entry of a coflow's ``m × m`` demand matrix is a flow (each entry
        independently; a coflow that draws none gets one entry drawn uniformly).
    integral, max_size
        Sizes are integers ``1..max_size`` or reals in ``[0.01, max_size]``.
    releases, weights, deadlines
        Release dates in ``0..5`` (else 0), weights in ``0..4`` (else 1), deadlines in
        ``[1, 20]`` or none (else none).
    dependencies
        A DAG among the coflows: each drawn pair ``(a, b)`` with ``a < b`` means ``b`` waits
        for ``a`` (``Instance(dependencies=...)``); so the DAG is topologically ordered by
        index, which loses no generality for the properties checked (they permute coflows
        explicitly where the order matters).
    diagonal
        Only flows ``i → i``: the concurrent open shop on ``m`` machines (docs/theory.md#cos).
    capacities
        Per-port capacities drawn from ``{0.5, 1, 2}`` instead of 1.

    Shrinking removes flows and moves sizes, releases and weights towards small integers.
    """
    m = draw(st.integers(min_ports, max_ports))
    n = draw(st.integers(min_coflows, max_coflows))
    size = (
        st.integers(1, max_size).map(float)
        if integral
        else st.floats(0.01, float(max_size), allow_nan=False, allow_infinity=False)
    )
    cells = (
        [(i, i) for i in range(m)] if diagonal else [(i, o) for i in range(m) for o in range(m)]
    )
    coflows = []
    for _ in range(n):
        flows = [(i, o, draw(size)) for i, o in cells if _flow_present(draw, density)]
        if not flows:
            i, o = cells[draw(st.integers(0, len(cells) - 1))]
            flows = [(i, o, draw(size))]
        coflows.append(
            cl.Coflow(
                flows,
                release=draw(st.integers(0, 5).map(float)) if releases else 0.0,
                weight=draw(st.integers(0, 4).map(float)) if weights else 1.0,
                deadline=draw(st.one_of(st.none(), st.floats(1.0, 20.0))) if deadlines else None,
            )
        )
    deps: list[tuple[int, int]] = []
    if dependencies and n > 1:
        pairs = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=n))
        deps = sorted({(min(a, b), max(a, b)) for a, b in pairs if a != b})
    fabric: cl.Fabric | int = m
    if capacities:
        cap = st.sampled_from([0.5, 1.0, 2.0])
        fabric = cl.Fabric(m, [draw(cap) for _ in range(m)], [draw(cap) for _ in range(m)])
    return cl.Instance.from_coflows(coflows, fabric, dependencies=deps)


SMALL_LIMITS = {"max_ports": 3, "max_coflows": 4, "max_flows": 8}
"""Limits of :func:`small_instances`: at most 3 ports, 4 coflows and 8 flows in all, so that
``exact-fluid`` takes well under a second on this machine (measured ~0.1 s for 3 ports and 4
coflows). ``exact-slotted`` is far slower (~90 s on 3 ports × 4 coflows): give it single
coflows or ``max_coflows=2`` only."""


def small_instances(**overrides: object) -> st.SearchStrategy[cl.Instance]:
    """Instances for which the exact fluid solver is fast (:data:`SMALL_LIMITS`): at most 3
    ports, 4 coflows, density 0.3, integral sizes ``1..9`` by default, at most 8 flows in all
    (larger draws are filtered out, rarely). Keyword arguments override those of
    :func:`matrix_instances` (keep them within the limits)."""
    params: dict[str, object] = {"max_ports": 3, "max_coflows": 4, "density": 0.3}
    params.update(overrides)
    return matrix_instances(**params).filter(  # type: ignore[arg-type]
        lambda inst: inst.num_flows <= SMALL_LIMITS["max_flows"]
    )


# ---------------------------------------------------------------------- trace-format instances
@st.composite
def benchmark_instances(
    draw: st.DrawFn,
    *,
    max_ports: int = 5,
    max_coflows: int = 4,
    integral_mb: bool = True,
    capacity: float = 0.125,
) -> cl.Instance:
    """Instances the coflow-benchmark format can hold: every coflow a full ``M × R`` shuffle
    on distinct mapper and reducer ports, each reducer receiving ``MB_r`` split equally among
    the mappers (flow size ``MB_r / M``), integer ids as labels, whole-ms releases, weight 1,
    no deadline, one capacity, units MB and ms. Built the way the reader builds them
    (mapper-major flows), so ``parse_benchmark(format_benchmark(inst)) == inst`` is the exact
    round trip when ``MB_r`` are whole numbers (``integral_mb``); for real ``MB_r`` the writer
    stores ``size · M``, which can differ from ``MB_r`` in the last bit."""
    m = draw(st.integers(1, max_ports))
    n = draw(st.integers(1, max_coflows))
    ids = draw(st.lists(st.integers(0, 10**6), min_size=n, max_size=n, unique=True))
    mb = (
        st.integers(1, 5000).map(float)
        if integral_mb
        # at least 0.1: with releases up to 1e5 ms the transfer time of the smallest flow
        # stays within MAX_TIME_RATIO of the time span (coflowlab.constants)
        else st.floats(0.1, 1e4, allow_nan=False, allow_infinity=False)
    )
    coflows = []
    for k in range(n):
        ports = st.lists(st.integers(0, m - 1), min_size=1, max_size=m, unique=True)
        mappers, reducers = draw(ports), draw(ports)
        megabytes = [draw(mb) for _ in reducers]
        flows = [
            (i, o, float(np.float64(x) / len(mappers)))
            for i in mappers
            for o, x in zip(reducers, megabytes, strict=True)
        ]
        coflows.append(
            cl.Coflow(flows, release=float(draw(st.integers(0, 10**5))), label=str(ids[k]))
        )
    return cl.Instance.from_coflows(
        coflows, cl.Fabric(m, capacity, capacity), units=cl.Units("MB", "ms")
    )


@st.composite
def sincronia_instances(
    draw: st.DrawFn, *, max_ports: int = 5, max_coflows: int = 4, capacity: float = 1.0
) -> cl.Instance:
    """Instances Sincronia's format can hold: whole-MB sizes (int32), integer ids as labels,
    whole-ms releases, weight 1, no deadline, one capacity, units MB and ms; any flows (a
    port pair may repeat inside a coflow)."""
    m = draw(st.integers(1, max_ports))
    n = draw(st.integers(1, max_coflows))
    ids = draw(st.lists(st.integers(0, 10**6), min_size=n, max_size=n, unique=True))
    # sizes span at most six decimal orders (MAX_TIME_RATIO in coflowlab.constants), from a
    # drawn magnitude up to int32
    low = draw(st.sampled_from([1, 2**12, 2**25]))
    high = min(low * 10**6, 2**31 - 1)
    coflows = []
    for k in range(n):
        flows = draw(
            st.lists(
                st.tuples(
                    st.integers(0, m - 1), st.integers(0, m - 1), st.integers(low, high)
                ).map(lambda t: (t[0], t[1], float(t[2]))),
                min_size=1,
                max_size=6,
            )
        )
        coflows.append(
            cl.Coflow(flows, release=float(draw(st.integers(0, 10**5))), label=str(ids[k]))
        )
    return cl.Instance.from_coflows(
        coflows, cl.Fabric(m, capacity, capacity), units=cl.Units("MB", "ms")
    )


# ---------------------------------------------------------------------- invalid inputs
@dataclass(frozen=True)
class InvalidCase:
    """One invalid input and what must happen to it.

    ``build()`` must raise ``error`` with a message matching ``match`` (a regular expression
    naming the field and index); for trace text, ``line`` and ``field`` are what the
    :class:`~coflowlab.TraceFormatError` must carry. The repr shows the corruption, so a
    counterexample reads as what was broken where.
    """

    what: str
    build: Callable[[], object] = field(repr=False)
    error: type[Exception]
    match: str
    line: int | None = None
    field: str | None = None


# 1e300 and 1e-9 are finite but outside coflowlab.constants' [MIN_VALUE, MAX_VALUE]
_BAD_SIZES = [-1.0, 0.0, -0.5, math.nan, math.inf, -math.inf, 1e300, 1e-9]
_BAD_TIMES = [-1.0, -0.25, math.nan, math.inf]  # releases and weights must be finite and >= 0
_BAD_DEADLINES = [0.0, -1.0, math.nan]  # inf means "no deadline" and is valid
_BAD_CAPACITIES = [0.0, -1.0, math.nan, math.inf, 1e13, 1e-7]


def _size_msg(x: float) -> str:
    if math.isnan(x):
        return "is NaN"
    if math.isfinite(x) and x > 0:
        return r"is .*, outside the supported range"
    return r"is .* \(must be positive and finite\)"


@st.composite
def invalid_instances(draw: st.DrawFn) -> InvalidCase:
    """An invalid instance built from a valid one by breaking exactly one field, through the
    public constructors (``Instance.replace``, ``Fabric``, ``Instance``); the case says which
    :class:`~coflowlab.InvalidInstanceError` message (field and index) must result.

    Kinds: a size that is negative, zero, NaN, ±inf or outside [1e-6, 1e12]; an unknown port
    (``m`` or beyond, or negative); a capacity that is zero, negative, NaN or inf; a coflow
    release or weight that is negative, NaN or inf; a deadline that is zero, negative or NaN;
    a flow released before its coflow; a dependency on itself, on an unknown coflow, or a
    cycle. (Deadlines below ρ are *valid* instances: no constructor rejects them; the
    deadline methods report such coflows as missed, so they are not invalid inputs.)
    """
    inst = draw(matrix_instances(max_ports=3, max_coflows=4, releases=True))
    m, n, nf = inst.num_ports, inst.num_coflows, inst.num_flows
    kind = draw(
        st.sampled_from(
            [
                "size",
                "port",
                "capacity",
                "release",
                "weight",
                "deadline",
                "flow_release",
                "dependency",
            ]
        )
    )
    if kind == "size":
        e = draw(st.integers(0, nf - 1))
        bad = draw(st.sampled_from(_BAD_SIZES))
        sizes = inst.flow_size.copy()
        sizes[e] = bad
        k = int(inst.flow_coflow[e])
        return InvalidCase(
            f"flow {e} size = {bad!r}",
            lambda: inst.replace(flow_size=sizes),
            InvalidInstanceError,
            rf"coflow {k}, flow {e}: size {_size_msg(bad)}",
        )
    if kind == "port":
        e = draw(st.integers(0, nf - 1))
        side = draw(st.sampled_from(["src", "dst"]))
        bad = draw(st.one_of(st.integers(m, m + 3), st.integers(-3, -1)))
        ports = getattr(inst, f"flow_{side}").copy()
        ports[e] = bad
        k = int(inst.flow_coflow[e])
        word = "ingress" if side == "src" else "egress"
        # a src error is found before any dst error; only flow e is broken
        return InvalidCase(
            f"flow {e} {side} = {bad}",
            lambda: inst.replace(**{f"flow_{side}": ports}),
            InvalidInstanceError,
            rf"coflow {k}, flow {e}: {word} port {bad} is unknown",
        )
    if kind == "capacity":
        p = draw(st.integers(0, m - 1))
        side = draw(st.sampled_from(["ingress", "egress"]))
        bad = draw(st.sampled_from(_BAD_CAPACITIES))
        caps = np.ones(m)
        caps[p] = bad
        kwargs = {f"{side}_capacity": caps}
        return InvalidCase(
            f"{side} port {p} capacity = {bad!r}",
            lambda: cl.Fabric(m, **kwargs),
            InvalidInstanceError,
            rf"fabric: {side} port {p}: capacity is \S+"
            r"( \(must be positive and finite\)|, outside the supported range)",
        )
    if kind in ("release", "weight", "deadline"):
        k = draw(st.integers(0, n - 1))
        bad = draw(st.sampled_from(_BAD_DEADLINES if kind == "deadline" else _BAD_TIMES))
        values = getattr(inst, f"coflow_{kind}").copy()
        values[k] = bad
        # a bad coflow release is reported before its flows' releases are compared
        extra = {"flow_release": np.zeros(nf)} if kind == "release" else {}
        return InvalidCase(
            f"coflow {k} {kind} = {bad!r}",
            lambda: cl.Instance(
                inst.fabric,
                inst.flow_coflow,
                inst.flow_src,
                inst.flow_dst,
                inst.flow_size,
                coflow_release=values if kind == "release" else inst.coflow_release,
                coflow_weight=values if kind == "weight" else inst.coflow_weight,
                coflow_deadline=values if kind == "deadline" else inst.coflow_deadline,
                **extra,
            ),
            InvalidInstanceError,
            rf"coflow {k}: {kind} is ",
        )
    if kind == "flow_release":
        e = draw(st.integers(0, nf - 1))
        k = int(inst.flow_coflow[e])
        early = draw(st.sampled_from([0.5, 1.0, 3.0]))
        rel_c = inst.coflow_release.copy()
        rel_c[k] = rel_c[k] + early + 1.0
        rel_f = rel_c[inst.flow_coflow].copy()
        rel_f[e] -= early
        return InvalidCase(
            f"flow {e} released {early} before its coflow",
            lambda: inst.replace(coflow_release=rel_c, flow_release=rel_f),
            InvalidInstanceError,
            rf"coflow {k}, flow {e}: release .* is before its coflow's release",
        )
    # dependencies
    sub = draw(st.sampled_from(["self", "unknown", "cycle"]))
    if sub == "self" or n == 1:
        a = draw(st.integers(0, n - 1))
        deps, match = [(a, a)], rf"dependency 0: coflow {a} depends on itself"
    elif sub == "unknown":
        a = draw(st.integers(0, n - 1))
        bad = draw(st.sampled_from([n, n + 2, -1]))
        deps, match = [(a, bad)], rf"dependency 0: coflow {bad} is not a coflow index"
    else:
        cycle = draw(st.permutations(range(n)))[: draw(st.integers(2, n))]
        deps = [(cycle[i], cycle[(i + 1) % len(cycle)]) for i in range(len(cycle))]
        match = r"dependencies: form a cycle"
    return InvalidCase(
        f"dependencies = {deps}",
        lambda: inst.replace(dependencies=deps),
        InvalidInstanceError,
        match,
    )


def _corrupt_token(text: str, line: int, index: int, token: str) -> str:
    lines = text.split("\n")
    tokens = lines[line - 1].split()
    tokens[index] = token
    lines[line - 1] = " ".join(tokens)
    return "\n".join(lines)


@st.composite
def malformed_benchmark(draw: st.DrawFn) -> InvalidCase:
    """A valid coflow-benchmark text (:func:`benchmark_instances` through ``format_benchmark``)
    with one token broken on a drawn coflow line; ``parse_benchmark`` must raise
    :class:`~coflowlab.TraceFormatError` with that line (1-based) and field. Kinds: negative
    or non-integer arrival, zero mappers, a mapper or reducer port out of range, an MB that is
    zero, negative, NaN, inf or not a number, a reducer token without ``:``, a repeated id,
    and a wrong coflow count in the header (line 1, field ``num_coflows``)."""
    from coflowlab.instances import format_benchmark, parse_benchmark

    inst = draw(benchmark_instances(max_coflows=3))
    text = format_benchmark(inst)
    n, m = inst.num_coflows, inst.num_ports
    k = draw(st.integers(0, n - 1))
    line = k + 2
    tokens = text.split("\n")[line - 1].split()
    n_map = int(tokens[2])
    first_red = 4 + n_map
    kind = draw(
        st.sampled_from(
            ["arrival", "mappers", "map_port", "red_port", "mb", "colon", "dup_id", "count"]
        )
    )
    if kind == "arrival":
        bad, fld = draw(st.sampled_from(["-3", "1.5", "x", str(10**13)])), "arrival_ms"
        new, idx = bad, 1
    elif kind == "mappers":
        new, idx, fld = "0", 2, "num_mappers"
    elif kind == "map_port":
        j = draw(st.integers(0, n_map - 1))
        new, idx, fld = str(draw(st.sampled_from([m, m + 5, -1]))), 3 + j, f"map_loc_{j + 1}"
    elif kind in ("red_port", "mb", "colon"):
        j = draw(st.integers(0, len(tokens) - first_red - 1))
        loc, _, mb = tokens[first_red + j].partition(":")
        idx = first_red + j
        if kind == "red_port":
            new, fld = f"{draw(st.sampled_from([m, m + 5, -1]))}:{mb}", f"red_loc_{j + 1}"
        elif kind == "mb":
            new, fld = (
                f"{loc}:{draw(st.sampled_from(['0', '-2.5', 'nan', 'inf', 'ab', '1e300']))}",
                (f"MB_{j + 1}"),
            )
        else:
            new, fld = f"{loc}{mb}", f"red_loc_{j + 1}"
    elif kind == "dup_id" and n > 1:
        other = draw(st.integers(0, n - 1).filter(lambda x: x != k))
        other_id = text.split("\n")[min(k, other) + 1].split()[0]
        # the later of the two lines repeats the earlier one's id
        line = max(k, other) + 2
        new, idx, fld = other_id, 0, "coflow_id"
    else:  # header count
        bad_text = _corrupt_token(text, 1, 1, str(n + draw(st.integers(1, 3))))
        return InvalidCase(
            "header num_coflows too large",
            lambda: parse_benchmark(bad_text),
            TraceFormatError,
            r"line 1, field num_coflows",
            line=1,
            field="num_coflows",
        )
    bad_text = _corrupt_token(text, line, idx, new)
    return InvalidCase(
        f"line {line} token {idx} = {new!r}",
        lambda: parse_benchmark(bad_text),
        TraceFormatError,
        rf"line {line}, field {fld}: ",
        line=line,
        field=fld,
    )


@st.composite
def malformed_sincronia(draw: st.DrawFn) -> InvalidCase:
    """A valid Sincronia text (:func:`sincronia_instances` through ``format_sincronia``) with
    one token broken on a drawn coflow line; ``parse_sincronia`` must raise
    :class:`~coflowlab.TraceFormatError` naming that line and field. Kinds: a negative arrival,
    zero flows, a source or destination port out of range or not an integer, a size that is
    zero, negative, fractional or beyond int32, a wrong ``nsrc`` count, a repeated id."""
    from coflowlab.instances import format_sincronia, parse_sincronia

    inst = draw(sincronia_instances(max_coflows=3))
    text = format_sincronia(inst)
    n, m = inst.num_coflows, inst.num_ports
    k = draw(st.integers(0, n - 1))
    line = k + 2
    tokens = text.split("\n")[line - 1].split()
    nflows = int(tokens[2])
    kind = draw(st.sampled_from(["arrival", "nflows", "src", "dst", "size", "nsrc", "dup_id"]))
    j = draw(st.integers(0, nflows - 1))
    if kind == "arrival":  # negative, or beyond coflowlab.constants.MAX_VALUE
        new, idx, fld = draw(st.sampled_from(["-4", str(10**13)])), 1, "arrival_ms"
    elif kind == "nflows":
        new, idx, fld = "0", 2, "num_flows"
    elif kind in ("src", "dst"):
        new = draw(st.sampled_from([str(m), str(m + 7), "-1", "1.5"]))
        idx, fld = 5 + 3 * j + (0 if kind == "src" else 1), f"{kind}_{j + 1}"
    elif kind == "size":
        new = draw(st.sampled_from(["0", "-3", "2.5", str(2**31)]))
        idx, fld = 5 + 3 * j + 2, f"size_{j + 1}"
    elif kind == "nsrc":
        new, idx, fld = str(int(tokens[3]) + draw(st.integers(1, 3))), 3, "num_sources"
    elif n > 1:
        other = draw(st.integers(0, n - 1).filter(lambda x: x != k))
        other_id = text.split("\n")[min(k, other) + 1].split()[0]
        line = max(k, other) + 2
        new, idx, fld = other_id, 0, "coflow_id"
    else:
        new, idx, fld = "-4", 1, "arrival_ms"
    bad_text = _corrupt_token(text, line, idx, new)
    return InvalidCase(
        f"line {line} token {idx} = {new!r}",
        lambda: parse_sincronia(bad_text),
        TraceFormatError,
        rf"line {line}, field {fld}: ",
        line=line,
        field=fld,
    )
