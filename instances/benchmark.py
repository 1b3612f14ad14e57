"""The public coflow-benchmark trace format (``coflow/coflow-benchmark``, read by CoflowSim).

One coflow per line, whitespace-separated, after a header line::

    <num_ports> <num_coflows>
    <id> <arrival_ms> <M> <map_loc_1> .. <map_loc_M> <R> <red_loc_1>:<MB_1> .. <red_loc_R>:<MB_R>

Each coflow is a shuffle: every one of its ``M`` mappers sends ``MB_r / M`` to reducer ``r``.
The ports are racks. The only real trace in this format is ``FB2010-1Hr-150-0.txt``
(526 coflows on 150 ports; see :func:`find_fb_trace`).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from coflowlab.constants import MAX_VALUE, MIN_VALUE
from coflowlab.exceptions import InvalidInstanceError, TraceFormatError
from coflowlab.instance import Fabric, Instance, Units

from .io import (
    PathLike,
    _check_capacity,
    _check_writable,
    _content_lines,
    _Line,
    _read_text,
    atomic_write_text,
    check_num_ports,
    trace_header,
    trace_instance_error,
)

__all__ = [
    "COFLOWSIM_CAPACITY",
    "FB_TRACE_NAME",
    "data_folders",
    "find_data_file",
    "find_fb_trace",
    "format_benchmark",
    "parse_benchmark",
    "read_benchmark",
    "write_benchmark",
]

COFLOWSIM_CAPACITY: float = 0.125
"""CoflowSim's port rate in MB per ms: 1 MiB per 8 ms quantum (128 MiB/s), reading the
trace's MB as MiB (docs/coflowsim-model.md#units)."""

FB_TRACE_NAME = "FB2010-1Hr-150-0.txt"
"""File name of the public Facebook coflow trace."""

_REPO_ROOT = Path(__file__).resolve().parents[1]


def _coflow(line: _Line, num_ports: int) -> tuple[int, int, list[int], list[int], list[float]]:
    """Parses one coflow line: ``(id, arrival, mappers, reducers, MB per reducer)``."""
    coflow_id = line.integer(0, "coflow_id")
    arrival = line.integer(1, "arrival_ms", maximum=MAX_VALUE)
    m = line.integer(2, "num_mappers", minimum=1)
    if len(line.tokens) < 4 + m:
        raise line.error(
            "num_mappers",
            f"M = {m} mappers need at least 4 + M = {4 + m} tokens, the line has "
            f"{len(line.tokens)}",
        )
    r = line.integer(3 + m, "num_reducers", minimum=1)
    if len(line.tokens) != 4 + m + r:
        raise line.error(
            "num_reducers",
            f"the line has {len(line.tokens)} tokens, but M = {m} and R = {r} need "
            f"4 + M + R = {4 + m + r}",
        )
    mappers: list[int] = []
    seen: dict[int, int] = {}
    for j in range(m):
        field = f"map_loc_{j + 1}"
        port = line.port(line.tokens[3 + j], field, num_ports)
        if port in seen:
            raise line.error(field, f"port {port} repeats map_loc_{seen[port]}")
        seen[port] = j + 1
        mappers.append(port)
    reducers: list[int] = []
    megabytes: list[float] = []
    seen.clear()
    for j in range(r):
        field = f"red_loc_{j + 1}"
        token = line.tokens[4 + m + j]
        loc, colon, mb = token.partition(":")
        if not colon or ":" in mb:
            raise line.error(field, f"expected '<red_loc>:<MB>', got {token!r}")
        port = line.port(loc, field, num_ports)
        if port in seen:
            raise line.error(field, f"port {port} repeats red_loc_{seen[port]}")
        seen[port] = j + 1
        reducers.append(port)
        megabytes.append(line.megabytes(mb, f"MB_{j + 1}"))
        if megabytes[-1] / m < MIN_VALUE:
            raise line.error(
                f"MB_{j + 1}",
                f"MB is {mb}: split among M = {m} mappers, each flow gets {megabytes[-1] / m:g} "
                f"MB, below the supported minimum {MIN_VALUE:g} (coflowlab.constants)",
            )
    return coflow_id, arrival, mappers, reducers, megabytes


def parse_benchmark(
    text: str,
    *,
    capacity: float = COFLOWSIM_CAPACITY,
    num_ports: int | None = None,
    source: str | None = None,
) -> Instance:
    """Parses coflow-benchmark text; :func:`read_benchmark` does the same for a file.

    Parameters
    ----------
    text
        The whole file's text.
    capacity, num_ports
        As for :func:`read_benchmark`.
    source
        Name of the text's origin for error messages (the path); ``None`` for ``<text>``.

    Returns
    -------
    Instance
        See :func:`read_benchmark`.

    Examples
    --------
    >>> inst = parse_benchmark("4 1\\n7 5000 2 0 2 2 3:4.0 1:2.0\\n")
    >>> inst.flow_src, inst.flow_dst, inst.flow_size
    (array([0, 0, 2, 2]), array([3, 1, 3, 1]), array([2., 1., 2., 1.]))
    >>> inst.coflow_label, inst.coflow_release, inst.bottleneck
    (('7',), array([5000.]), array([32.]))
    """
    cap = _check_capacity(capacity)
    num_ports = check_num_ports(num_ports)
    lines, end = _content_lines(text, source)  # trailing blank lines are allowed
    m, n, start = trace_header(lines, num_ports, source)
    if n is not None and end - start != n:
        raise TraceFormatError(
            f"the header declares {n} coflows, but the file has {end - start} coflow lines",
            path=source,
            line=1,
            field="num_coflows",
        )

    labels: list[str] = []
    arrivals: list[int] = []
    srcs: list[np.ndarray] = []
    dsts: list[np.ndarray] = []
    sizes: list[np.ndarray] = []
    widths: list[int] = []
    num_mappers: list[int] = []
    first_line: dict[int, int] = {}
    for i in range(start, end):
        line = _Line(lines[i].split(), source, i + 1)
        if not line.tokens:
            raise line.error("coflow_id", "blank line (expected a coflow)")
        coflow_id, arrival, mappers, reducers, megabytes = _coflow(line, m)
        if coflow_id in first_line:
            raise line.error(
                "coflow_id",
                f"coflow id {coflow_id} repeats the id on line {first_line[coflow_id]}",
            )
        first_line[coflow_id] = i + 1
        labels.append(line.tokens[0])
        arrivals.append(arrival)
        n_map, n_red = len(mappers), len(reducers)
        srcs.append(np.repeat(np.asarray(mappers, dtype=np.int64), n_red))
        dsts.append(np.tile(np.asarray(reducers, dtype=np.int64), n_map))
        sizes.append(np.tile(np.asarray(megabytes) / n_map, n_map))
        widths.append(n_map * n_red)
        num_mappers.append(n_map)

    try:
        return Instance(
            Fabric(m, cap, cap),
            np.repeat(np.arange(len(widths), dtype=np.int64), widths),
            np.concatenate(srcs),
            np.concatenate(dsts),
            np.concatenate(sizes),
            coflow_release=np.asarray(arrivals, dtype=float),
            coflow_label=labels,
            num_coflows=len(labels),
            units=Units(size="MB", time="ms"),
        )
    except InvalidInstanceError as exc:
        # the i-th flow of coflow k (mapper-major) goes to its reducer i % R, R = width / M
        def reducer(k: int, i: int) -> str:
            return f"MB_{i % (widths[k] // num_mappers[k]) + 1}"

        coflow = np.repeat(np.arange(len(widths), dtype=np.int64), widths)
        raise trace_instance_error(exc, source, start, coflow, reducer) from None


def read_benchmark(
    path: PathLike, *, capacity: float = COFLOWSIM_CAPACITY, num_ports: int | None = None
) -> Instance:
    """Reads a coflow-benchmark trace file, such as the public Facebook trace.

    Parameters
    ----------
    path
        The trace file.
    capacity
        Capacity of every ingress and egress port, in MB per ms. Default
        :data:`COFLOWSIM_CAPACITY` = 0.125: CoflowSim moves 1 MiB per 8 ms quantum on each
        port (128 MiB/s) and the trace's MB are read as MiB, so a coflow's
        :attr:`~coflowlab.Instance.bottleneck` is its CoflowSim time alone on the fabric,
        in ms (before CoflowSim's rounding up to whole MiB and 8 ms quanta).
    num_ports
        Number of ports of a file *without* the header line (Sincronia's copy of the trace is
        one; the command line's ``--ports``). A missing header is an error unless this is
        given; if the file has a header, its port count must equal ``num_ports``.

    Returns
    -------
    Instance
        One coflow per line, in file order, labelled with the file's coflow ids. Mapper
        ``i`` sends ``MB_r / M`` to reducer ``r``; flows are in mapper-major order (for each
        mapper in file order, for each reducer in file order). The arrival is the coflow's
        release; every weight is 1. Units are MB and ms; the fabric has the header's ports.

    Raises
    ------
    TraceFormatError
        If the file is malformed. The error names the path, the 1-based line, the field
        (``num_ports``, ``num_coflows``, ``coflow_id``, ``arrival_ms``, ``num_mappers``,
        ``map_loc_<j>``, ``num_reducers``, ``red_loc_<j>``, ``MB_<j>``) and the reason.
        Nothing is returned unless the whole file is valid.
    OSError
        If the file cannot be read.

    Notes
    -----
    Stricter than CoflowSim, which merges repeated mapper or reducer racks of a coflow and
    ignores lines beyond the header's count: both are errors here. Trailing blank lines are
    allowed; blank lines between coflows are not. CoflowSim also rounds each reducer up to
    a multiple of ``M`` whole MiB (docs/coflowsim-model.md#units); this reader
    keeps the exact ``MB_r / M``, which the Facebook trace makes whole numbers anyway.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     _ = (Path(d) / "micro.txt").write_text("4 1\\n1 0 2 0 2 1 3:4.0\\n")
    ...     inst = read_benchmark(Path(d) / "micro.txt")
    >>> inst.num_coflows, inst.num_flows, inst.units
    (1, 2, Units(size='MB', time='ms'))
    """
    return parse_benchmark(
        _read_text(path), capacity=capacity, num_ports=num_ports, source=str(path)
    )


def _coflow_line(instance: Instance, k: int) -> str:
    """The benchmark line of coflow ``k``; raises if it is not a uniform full shuffle."""
    flows = instance.coflow_flows(k)
    src, dst = instance.flow_src[flows], instance.flow_dst[flows]
    size = instance.flow_size[flows]
    where = f"benchmark format: coflow {k} (label {instance.coflow_label[k]!r})"
    map_ports, map_first = np.unique(src, return_index=True)
    mappers = map_ports[np.argsort(map_first)]
    red_ports, red_first, red_index = np.unique(dst, return_index=True, return_inverse=True)
    n_map, n_red = len(mappers), len(red_ports)
    pairs = len(np.unique(src * instance.num_ports + dst))
    if len(flows) != n_map * n_red or pairs != len(flows):
        raise InvalidInstanceError(
            f"{where}: its {len(flows)} flows are not a full {n_map} x {n_red} shuffle (every "
            "mapper sending once to every reducer), the only shape the format can hold"
        )
    low = np.full(n_red, np.inf)
    high = np.full(n_red, -np.inf)
    np.minimum.at(low, red_index, size)
    np.maximum.at(high, red_index, size)
    uneven = np.flatnonzero(low != high)
    if uneven.size:
        r = int(uneven[0])
        raise InvalidInstanceError(
            f"{where}: the flows into reducer port {int(red_ports[r])} have different sizes "
            f"({float(low[r])!r} to {float(high[r])!r}); the format stores one MB per reducer, "
            "split equally among the mappers"
        )
    order = np.argsort(red_first)
    reducers, per_flow = red_ports[order], low[order]
    megabytes = per_flow * n_map
    # prefer the whole number of MB when it reads back to the same flow size (exact round trip)
    whole = np.round(megabytes)
    megabytes = np.where((whole != megabytes) & (whole / n_map == per_flow), whole, megabytes)
    red = " ".join(
        f"{p}:{mb!r}" for p, mb in zip(reducers.tolist(), megabytes.tolist(), strict=True)
    )
    maps = " ".join(map(str, mappers.tolist()))
    arrival = int(instance.coflow_release[k])
    return f"{instance.coflow_label[k]} {arrival} {n_map} {maps} {n_red} {red}\n"


def format_benchmark(instance: Instance) -> str:
    """Returns the coflow-benchmark text of ``instance``; see :func:`write_benchmark`.

    Examples
    --------
    >>> inst = Instance.from_matrices([[[0, 2], [0, 2]]], labels=["9"])
    >>> format_benchmark(inst)
    '2 1\\n9 0 2 0 1 1 1:4.0\\n'
    """
    _check_writable(instance, "benchmark")
    lines = [f"{instance.num_ports} {instance.num_coflows}\n"]
    lines.extend(_coflow_line(instance, k) for k in range(instance.num_coflows))
    return "".join(lines)


def write_benchmark(instance: Instance, path: PathLike) -> None:
    """Writes ``instance`` as a coflow-benchmark trace, atomically.

    The inverse of :func:`read_benchmark`: ``write_benchmark(read_benchmark(p), q)`` makes
    ``q`` byte-identical to a canonical ``p`` (single spaces, ``\\n`` line ends, MB written as
    Python floats such as ``648.0``), the Facebook trace included.

    Parameters
    ----------
    instance
        The instance. Each coflow must be a full shuffle: its flows are every pair of a set of
        mappers and a set of reducers, once each, and all flows into one reducer have the same
        size. Mappers are written in order of first appearance of their port among the
        coflow's flows, and reducers likewise; ``MB_r`` is the flow size times ``M``. The
        header gets the fabric's port count; capacities are not stored.
    path
        The target file; replaced if it exists. On error nothing is written.

    Raises
    ------
    InvalidInstanceError
        If the format cannot hold the instance, naming the coflow and why: not a uniform full
        shuffle, a label that is not a non-negative integer id (or repeats one), a release
        that is not a whole number of ms, a weight other than 1, a deadline, per-flow
        releases, dependencies, port capacities that differ, or units other than MB and ms
        (``"unit"`` is written as is).

    Examples
    --------
    >>> import tempfile
    >>> inst = parse_benchmark("4 1\\n1 0 2 0 2 1 3:4.0\\n")
    >>> with tempfile.TemporaryDirectory() as d:
    ...     write_benchmark(inst, Path(d) / "out.txt")
    ...     print((Path(d) / "out.txt").read_text(), end="")
    4 1
    1 0 2 0 2 1 3:4.0
    """
    atomic_write_text(path, format_benchmark(instance))


def find_fb_trace() -> Path | None:
    """Returns the path of the public Facebook trace ``FB2010-1Hr-150-0.txt``, or ``None``.

    The folders searched, in order:

    1. ``$COFLOWLAB_DATA``, if the variable is set;
    2. ``../shared/data`` relative to the repository root (the folder holding ``coflowlab/``
       and ``instances/``), i.e. a ``shared/`` folder beside the repository;
    3. ``./shared/data`` and ``../shared/data`` relative to the working directory.

    Examples
    --------
    >>> path = find_fb_trace()
    >>> path is None or path.name == FB_TRACE_NAME
    True
    """
    return find_data_file(FB_TRACE_NAME)


def data_folders() -> list[Path]:
    """The folders searched for data files such as the Facebook trace, in order (see
    :func:`find_fb_trace`)."""
    folders: list[Path] = []
    env = os.environ.get("COFLOWLAB_DATA")
    if env:
        folders.append(Path(env))
    folders.append(_REPO_ROOT.parent / "shared" / "data")
    folders.extend([Path.cwd() / "shared" / "data", Path.cwd().parent / "shared" / "data"])
    return folders


def find_data_file(name: str) -> Path | None:
    """The first file called ``name`` in :func:`data_folders`, or ``None``.

    Examples
    --------
    >>> find_data_file("no-such-trace.txt") is None
    True
    """
    for folder in data_folders():
        candidate = folder / name
        if candidate.is_file():
            return candidate
    return None
