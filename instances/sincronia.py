"""Sincronia's flow-level coflow format (its workload generator and offline simulator).

A header line, then one coflow per line, whitespace-separated::

    <num_ports> <num_coflows>
    <id> <arrival_ms> <nflows> <nsrc> <ndst> <src_1> <dst_1> <size_1> ... <src_n> <dst_n> <size_n>

``nsrc`` and ``ndst`` are the numbers of distinct sources and destinations of the coflow's flows
(Sincronia's simulator uses ``min(nsrc, ndst)`` as the width for its NCF ordering). Sizes are
whole MB: the simulator reads every field with ``fscanf("%d")``. There are no weights (all 1).
"""

from __future__ import annotations

import numpy as np

from coflowlab.constants import MAX_VALUE
from coflowlab.exceptions import InvalidInstanceError, TraceFormatError
from coflowlab.instance import Fabric, Instance, Units

from .io import (
    _INT,
    PathLike,
    _check_capacity,
    _check_writable,
    _content_lines,
    _Line,
    _out_of_range,
    _read_text,
    atomic_write_text,
    check_num_ports,
    trace_header,
    trace_instance_error,
)

__all__ = [
    "SINCRONIA_CAPACITY",
    "format_sincronia",
    "parse_sincronia",
    "read_sincronia",
    "write_sincronia",
]

SINCRONIA_CAPACITY: float = 1.0
"""Sincronia's port rate: 1 MB per simulator time unit (read here as 1 MB per ms)."""

_INT32_MAX = 2**31 - 1
_FLOW_FIELDS = ("src", "dst", "size")


def _flow_values(line: _Line, raw: str) -> np.ndarray:
    """The ``(nflows, 3)`` integers ``src dst size`` after the 5 leading fields."""
    body = line.tokens[5:]
    if raw.isascii() and "_" not in raw and "+" not in raw:  # int() accepts only -?[0-9]+ then
        try:
            return np.fromiter(map(int, body), dtype=np.int64, count=len(body)).reshape(-1, 3)
        except (ValueError, OverflowError):
            pass
    for j, token in enumerate(body):  # slow path: find the offending token
        field = f"{_FLOW_FIELDS[j % 3]}_{j // 3 + 1}"
        if not _INT.fullmatch(token):
            if j % 3 == 2:
                raise line.error(
                    field,
                    f"size {token!r} is not a whole number of MB (the format's sizes are "
                    "integers)",
                )
            raise line.error(field, f"port {token!r} is not an integer")
        if abs(int(token)) > _INT32_MAX:
            raise line.error(field, f"{token} is too large (the format's fields are int32)")
    return np.array([int(t) for t in body], dtype=np.int64).reshape(-1, 3)


def _coflow(line: _Line, raw: str, num_ports: int, check_counts: bool) -> np.ndarray:
    """Parses one coflow line after its 5 leading fields; returns ``(nflows, 3)`` values."""
    nflows = line.integer(2, "num_flows", minimum=1)
    nsrc = line.integer(3, "num_sources", minimum=1)
    ndst = line.integer(4, "num_destinations", minimum=1)
    if len(line.tokens) != 5 + 3 * nflows:
        raise line.error(
            "num_flows",
            f"the line has {len(line.tokens)} tokens, but nflows = {nflows} needs "
            f"5 + 3 * nflows = {5 + 3 * nflows}",
        )
    flows = _flow_values(line, raw)
    for col in (0, 1):
        bad = np.flatnonzero((flows[:, col] < 0) | (flows[:, col] >= num_ports))
        if bad.size:
            e = int(bad[0])
            raise line.error(
                f"{_FLOW_FIELDS[col]}_{e + 1}", _out_of_range(int(flows[e, col]), num_ports)
            )
    bad = np.flatnonzero((flows[:, 2] <= 0) | (flows[:, 2] > _INT32_MAX))
    if bad.size:
        e = int(bad[0])
        size = int(flows[e, 2])
        what = "zero" if size == 0 else "negative" if size < 0 else "too large (int32)"
        raise line.error(f"size_{e + 1}", f"size {size} is {what}; it must be in 1..{_INT32_MAX}")
    if check_counts:
        for declared, col, field in ((nsrc, 0, "num_sources"), (ndst, 1, "num_destinations")):
            actual = len(np.unique(flows[:, col]))
            if declared != actual:
                side = "sources" if col == 0 else "destinations"
                raise line.error(
                    field,
                    f"declares {declared} {side}, but the flows have {actual} distinct ones "
                    "(use --ignore-counts to read the file anyway)",
                )
    return flows


def parse_sincronia(
    text: str,
    *,
    capacity: float = SINCRONIA_CAPACITY,
    check_counts: bool = True,
    num_ports: int | None = None,
    source: str | None = None,
) -> Instance:
    """Parses Sincronia-format text; :func:`read_sincronia` does the same for a file.

    Parameters
    ----------
    text
        The whole file's text.
    capacity, check_counts, num_ports
        As for :func:`read_sincronia`.
    source
        Name of the text's origin for error messages (the path); ``None`` for ``<text>``.

    Returns
    -------
    Instance
        See :func:`read_sincronia`.

    Examples
    --------
    >>> inst = parse_sincronia("4 1\\n7 5000 3 2 2 0 3 2 2 3 2 0 1 1\\n")
    >>> inst.flow_src, inst.flow_dst, inst.flow_size
    (array([0, 2, 0]), array([3, 3, 1]), array([2., 2., 1.]))
    >>> inst.coflow_label, inst.coflow_release, inst.bottleneck
    (('7',), array([5000.]), array([4.]))
    """
    cap = _check_capacity(capacity)
    num_ports = check_num_ports(num_ports)
    lines, end = _content_lines(text, source)
    m, declared, start = trace_header(lines, num_ports, source)
    if declared is not None and end - start != declared:
        raise TraceFormatError(
            f"the header declares {declared} coflows, but the file has {end - start} coflow lines",
            path=source,
            line=1,
            field="num_coflows",
        )
    n = end - start

    labels: list[str] = []
    arrivals: list[int] = []
    blocks: list[np.ndarray] = []
    first_line: dict[int, int] = {}
    for i in range(start, end):
        line = _Line(lines[i].split(), source, i + 1)
        if not line.tokens:
            raise line.error("coflow_id", "blank line (expected a coflow)")
        coflow_id = line.integer(0, "coflow_id")
        arrival = line.integer(1, "arrival_ms", maximum=MAX_VALUE)
        blocks.append(_coflow(line, lines[i], m, check_counts))
        if coflow_id in first_line:
            raise line.error(
                "coflow_id",
                f"coflow id {coflow_id} repeats the id on line {first_line[coflow_id]}",
            )
        first_line[coflow_id] = i + 1
        labels.append(line.tokens[0])
        arrivals.append(arrival)

    flows = np.concatenate(blocks)
    coflow = np.repeat(np.arange(n, dtype=np.int64), [len(b) for b in blocks])
    try:
        return Instance(
            Fabric(m, cap, cap),
            coflow,
            flows[:, 0],
            flows[:, 1],
            flows[:, 2].astype(float),
            coflow_release=np.asarray(arrivals, dtype=float),
            coflow_label=labels,
            num_coflows=n,
            units=Units(size="MB", time="ms"),
        )
    except InvalidInstanceError as exc:
        raise trace_instance_error(
            exc, source, start, coflow, lambda k, i: f"size_{i + 1}"
        ) from None


def read_sincronia(
    path: PathLike,
    *,
    capacity: float = SINCRONIA_CAPACITY,
    check_counts: bool = True,
    num_ports: int | None = None,
) -> Instance:
    """Reads a file in Sincronia's flow-level format.

    Parameters
    ----------
    path
        The file to read.
    capacity
        Capacity of every ingress and egress port, in MB per ms. Default
        :data:`SINCRONIA_CAPACITY` = 1.0: Sincronia's offline simulator moves 1 MB per time
        unit on each port, and the unit is read here as the trace's ms. Its simulator also
        releases every coflow at 0 (it reads and ignores arrivals); use
        ``instance.replace(coflow_release=0)`` to reproduce that. For CoflowSim's rate pass
        ``capacity=0.125`` (one Sincronia unit is then 8 ms).
    check_counts
        Whether ``nsrc`` and ``ndst`` must equal the numbers of distinct sources and
        destinations of the coflow's flows (the generator writes them so). Some published
        traces break this; ``False`` ignores the declared counts (:func:`write_sincronia`
        then writes the true ones).
    num_ports
        Number of ports of a file *without* the header line (the command line's ``--ports``);
        a missing header is an error unless this is given. If the file has a header, its port
        count must equal ``num_ports``.

    Returns
    -------
    Instance
        One coflow per line, in file order, labelled with the file's ids, released at its
        arrival, with its flows in file order. Weights are 1; units are MB and ms.

    Raises
    ------
    TraceFormatError
        If the file is malformed. The error names the path, the 1-based line, the field
        (``num_ports``, ``num_coflows``, ``coflow_id``, ``arrival_ms``, ``num_flows``,
        ``num_sources``, ``num_destinations``, ``src_<j>``, ``dst_<j>``, ``size_<j>``) and the
        reason. Sizes must be positive integers; ports in ``0..num_ports-1``; ids unique.
    OSError
        If the file cannot be read.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> with tempfile.TemporaryDirectory() as d:
    ...     _ = (Path(d) / "s.txt").write_text("4 1\\n0 0 2 1 2 0 1 4 0 2 4\\n")
    ...     inst = read_sincronia(Path(d) / "s.txt")
    >>> inst.num_flows, inst.bottleneck
    (2, array([8.]))
    """
    return parse_sincronia(
        _read_text(path),
        capacity=capacity,
        check_counts=check_counts,
        num_ports=num_ports,
        source=str(path),
    )


def format_sincronia(instance: Instance) -> str:
    """Returns the Sincronia-format text of ``instance``; see :func:`write_sincronia`.

    Examples
    --------
    >>> format_sincronia(Instance.from_matrices([[[0, 2], [3, 0]]], labels=["5"]))
    '2 1\\n5 0 2 2 2 0 1 2 1 0 3\\n'
    """
    _check_writable(instance, "sincronia")
    sizes = instance.flow_size
    bad = np.flatnonzero((sizes != np.round(sizes)) | (sizes > _INT32_MAX))
    if bad.size:
        e = int(bad[0])
        raise InvalidInstanceError(
            f"sincronia format: coflow {int(instance.flow_coflow[e])}, flow {e}: size "
            f"{float(sizes[e])!r} is not a whole number of MB up to {_INT32_MAX} (Sincronia "
            "reads sizes with fscanf %d)"
        )
    late = np.flatnonzero(instance.coflow_release > _INT32_MAX)
    if late.size:
        raise InvalidInstanceError(
            f"sincronia format: coflow {int(late[0])}: release exceeds {_INT32_MAX} ms"
        )
    lines = [f"{instance.num_ports} {instance.num_coflows}\n"]
    for k in range(instance.num_coflows):
        flows = instance.coflow_flows(k)
        src, dst = instance.flow_src[flows], instance.flow_dst[flows]
        values = np.column_stack([src, dst, sizes[flows].astype(np.int64)]).ravel()
        lines.append(
            f"{instance.coflow_label[k]} {int(instance.coflow_release[k])} {len(flows)} "
            f"{len(np.unique(src))} {len(np.unique(dst))} {' '.join(map(str, values.tolist()))}\n"
        )
    return "".join(lines)


def write_sincronia(instance: Instance, path: PathLike) -> None:
    """Writes ``instance`` in Sincronia's flow-level format, atomically.

    The inverse of :func:`read_sincronia` (byte for byte on a canonical file: single spaces,
    ``\\n`` line ends, true ``nsrc`` and ``ndst``). Flows are written per coflow in instance
    order; ``nsrc`` and ``ndst`` are the coflow's numbers of distinct sources and
    destinations; the header gets the fabric's port count. Capacities are not stored.

    Parameters
    ----------
    instance
        The instance. Sizes must be whole MB.
    path
        The target file; replaced if it exists. On error nothing is written.

    Raises
    ------
    InvalidInstanceError
        If the format cannot hold the instance, naming the coflow and why: a size that is not
        a whole number of MB (or exceeds int32), a label that is not a non-negative integer id
        (or repeats one), a release that is not a whole number of ms, a weight other than 1,
        a deadline, per-flow releases, dependencies, port capacities that differ, or units
        other than MB and ms (``"unit"`` is written as is).

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> inst = parse_sincronia("4 1\\n0 0 2 1 2 0 1 4 0 2 4\\n")
    >>> with tempfile.TemporaryDirectory() as d:
    ...     write_sincronia(inst, Path(d) / "s.txt")
    ...     print((Path(d) / "s.txt").read_text(), end="")
    4 1
    0 0 2 1 2 0 1 4 0 2 4
    """
    atomic_write_text(path, format_sincronia(instance))
