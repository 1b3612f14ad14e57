"""Reading and writing instance files in every supported format.

Four formats are supported (:data:`FORMATS`):

- ``"json"``: coflowlab's own lossless document (:meth:`Instance.to_dict`);
- ``"benchmark"``: the public coflow-benchmark trace format read by CoflowSim
  (:mod:`coflowlab.instances.benchmark`);
- ``"weighted-benchmark"``: YosemiteSim's variant of it, with each coflow's weight as the
  second field of its line (:func:`parse_weighted_benchmark`; docs/formats.md);
- ``"sincronia"``: the flow-level format of Sincronia's generator and offline simulator
  (:mod:`coflowlab.instances.sincronia`).

:func:`read_instance` and :func:`write_instance` pick the format (see :func:`detect_format`).
Every writer is atomic: the text is built in memory, written to a temporary file in the target's
folder and moved over the target with :func:`os.replace`, so a failed write leaves nothing
behind and an existing file is either fully replaced or untouched.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from coflowlab.constants import MAX_PORTS, MAX_VALUE, MIN_VALUE
from coflowlab.exceptions import InvalidInstanceError, TraceFormatError
from coflowlab.instance import Instance

__all__ = [
    "FORMATS",
    "atomic_write_text",
    "detect_format",
    "format_weighted_benchmark",
    "parse_weighted_benchmark",
    "read_instance",
    "read_json",
    "write_instance",
    "write_json",
]

FORMATS: tuple[str, ...] = ("json", "benchmark", "sincronia", "weighted-benchmark")
"""Names of the supported file formats."""

PathLike = str | os.PathLike[str]

_UINT = re.compile(r"[0-9]+")
_INT = re.compile(r"-?[0-9]+")
_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_WRITABLE_SIZE_UNITS = ("MB", "unit")
_WRITABLE_TIME_UNITS = ("ms", "unit")
_USE_FORMAT = f"use --format FORMAT to choose one of {', '.join(FORMATS)}"


# ---------------------------------------------------------------------- shared helpers
class _Line:
    """One line's tokens; its errors name the path, the 1-based line and the field."""

    def __init__(self, tokens: list[str], source: str | None, lineno: int) -> None:
        self.tokens = tokens
        self.source = source
        self.lineno = lineno

    def error(self, field: str, reason: str) -> TraceFormatError:
        return TraceFormatError(reason, path=self.source, line=self.lineno, field=field)

    def integer(
        self, index: int, field: str, minimum: int = 0, maximum: float | None = None
    ) -> int:
        """Token ``index`` as an integer ``>= minimum`` (and ``<= maximum`` if given)."""
        if index >= len(self.tokens):
            raise self.error(field, f"the line ends after {len(self.tokens)} tokens")
        token = self.tokens[index]
        if not _INT.fullmatch(token):
            raise self.error(field, f"{token!r} is not an integer")
        value = int(token)
        if value < minimum:
            raise self.error(
                field,
                f"{value} is negative"
                if minimum == 0
                else f"must be at least {minimum}, got {value}",
            )
        if maximum is not None and value > maximum:
            raise self.error(
                field, f"{token} is beyond the supported maximum {maximum:g} (coflowlab.constants)"
            )
        return value

    def port(self, token: str, field: str, num_ports: int) -> int:
        """``token`` as a port index in ``0..num_ports-1``."""
        if not _INT.fullmatch(token):
            raise self.error(field, f"port {token!r} is not an integer")
        port = int(token)
        if not 0 <= port < num_ports:
            raise self.error(field, _out_of_range(port, num_ports))
        return port

    def megabytes(self, token: str, field: str) -> float:
        """``token`` as a positive, finite number of MB."""
        if not _NUMBER.fullmatch(token):
            try:
                value = float(token)  # accepts nan and inf, reported below
            except ValueError:
                raise self.error(field, f"{token!r} is not a number") from None
        else:
            value = float(token)
        if math.isnan(value):
            raise self.error(field, f"MB is NaN ({token!r})")
        if not math.isfinite(value):
            raise self.error(field, f"MB is infinite ({token!r})")
        if value <= 0:
            what = "zero" if value == 0 else "negative"
            raise self.error(field, f"MB is {what} ({token!r}); it must be positive")
        if not MIN_VALUE <= value <= MAX_VALUE:
            raise self.error(field, f"MB is {token}, {_RANGE}")
        return value

    def weight(self, index: int, field: str = "weight") -> float:
        """Token ``index`` as a finite, non-negative real weight."""
        if index >= len(self.tokens):
            raise self.error(field, f"the line ends after {len(self.tokens)} tokens")
        token = self.tokens[index]
        if not _NUMBER.fullmatch(token):
            raise self.error(field, f"{token!r} is not a number")
        value = float(token)
        if value < 0:
            raise self.error(field, f"weight {token} is negative")
        if value > MAX_VALUE:
            raise self.error(field, f"weight {token} is {_RANGE}")
        return value


_RANGE = f"outside the supported range [{MIN_VALUE:g}, {MAX_VALUE:g}] (coflowlab.constants)"


def _out_of_range(port: int, num_ports: int) -> str:
    return f"port {port} is out of range (the fabric has {num_ports} ports: 0..{num_ports - 1})"


def _content_lines(text: str, source: str | None) -> tuple[list[str], int]:
    """The text's lines and how many come before the trailing blank lines (allowed)."""
    lines = text.split("\n")  # line numbers count "\n" only; split() drops any "\r"
    end = len(lines)
    while end and not lines[end - 1].strip():
        end -= 1
    if end == 0:
        raise TraceFormatError("the file is empty", path=source, line=1, field="header")
    return lines, end


def _read_text(path: PathLike) -> str:
    """Returns the file's text, raising :class:`TraceFormatError` if it is not UTF-8."""
    data = Path(path).read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise TraceFormatError(
            f"byte {exc.start} is not UTF-8 text ({exc.reason})",
            path=str(path),
            line=data.count(b"\n", 0, exc.start) + 1,
            field="text",
        ) from None


def atomic_write_text(path: PathLike, text: str) -> None:
    """Writes ``text`` to ``path`` through a temporary file in the same folder, so that a
    failure leaves nothing half-written.

    Raises
    ------
    OSError
        If the file cannot be written; the message names the target (never the temporary
        file) and, when the folder is missing, that folder. The exception keeps the class of
        the original (``FileNotFoundError``, ``PermissionError``, ...).
    UnicodeEncodeError
        If ``text`` cannot be encoded as UTF-8; nothing is written.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     atomic_write_text(Path(d) / "a.txt", "x")
    ...     atomic_write_text(Path(d) / "missing" / "a.txt", "x")
    Traceback (most recent call last):
    ...
    FileNotFoundError: cannot write .../missing/a.txt: the folder .../missing does not exist
    """
    target = Path(path)
    folder = target.parent
    if not folder.is_dir():
        what = "is not a folder" if folder.exists() else "does not exist"
        error = NotADirectoryError if folder.exists() else FileNotFoundError
        raise error(f"cannot write {target}: the folder {folder} {what}")
    try:
        mode = target.stat().st_mode & 0o777 if target.exists() else 0o644
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{target.name}.", suffix=".tmp")
    except OSError as exc:
        raise _write_error(exc, target) from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException as exc:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise _write_error(exc, target) from None
        raise


def _write_error(exc: OSError, target: Path) -> OSError:
    """``exc`` reworded to name the target instead of the temporary file; same class."""
    reason = exc.strerror or str(exc)  # strerror has no file name in it
    if target.is_dir():
        reason = "it is a folder"
    new = type(exc)(f"cannot write {target}: {reason}")
    new.errno = exc.errno
    return new


def _check_capacity(capacity: float) -> float:
    """Validates a reader's ``capacity`` argument (an argument error, not a file error)."""
    if isinstance(capacity, bool) or not isinstance(capacity, int | float | np.number):
        raise TypeError(f"capacity must be a number, got {type(capacity).__name__}")
    cap = float(capacity)
    if not (np.isfinite(cap) and cap > 0):
        raise ValueError(f"capacity must be positive and finite, got {capacity!r}")
    if not MIN_VALUE <= cap <= MAX_VALUE:
        raise ValueError(f"capacity {capacity!r} is {_RANGE}")
    return cap


def check_num_ports(num_ports: int | None) -> int | None:
    """Validates a reader's ``num_ports`` argument (the command line's ``--ports``)."""
    if num_ports is not None and (
        isinstance(num_ports, bool)
        or not isinstance(num_ports, int | np.integer)
        or not 1 <= num_ports <= MAX_PORTS
    ):
        raise ValueError(
            f"the number of ports (--ports) must be an integer in 1..{MAX_PORTS}, got "
            f"{num_ports!r}"
        )
    return None if num_ports is None else int(num_ports)


def _check_writable(instance: Instance, fmt: str) -> None:
    """Raises :class:`InvalidInstanceError` if the trace formats cannot hold ``instance``.

    Both trace formats store, per coflow, an integer id, an integer arrival in ms and flows in
    MB; nothing else. Anything they cannot hold is an error rather than silently dropped.
    """
    units = instance.units
    if units.size not in _WRITABLE_SIZE_UNITS or units.time not in _WRITABLE_TIME_UNITS:
        raise InvalidInstanceError(
            f"{fmt} format: sizes are MB and times ms, but the instance uses {units.size} and "
            f"{units.time}; convert its units first"
        )
    for side in ("ingress", "egress"):
        cap = np.asarray(getattr(instance.fabric, f"{side}_capacity"))
        if not np.all(cap == cap[0]):
            raise InvalidInstanceError(
                f"{fmt} format: stores no capacities and reads one capacity for every port, "
                f"but the {side} capacities differ"
            )
    if instance.dependencies.size:
        raise InvalidInstanceError(
            f"{fmt} format: cannot hold coflow dependencies (the instance has "
            f"{len(instance.dependencies)})"
        )
    labels: dict[int, int] = {}
    for k in range(instance.num_coflows):
        label = instance.coflow_label[k]
        where = f"{fmt} format: coflow {k} (label {label!r})"
        if not _UINT.fullmatch(label):
            raise InvalidInstanceError(
                f"{where}: the label is the coflow id and must be a non-negative integer; "
                "relabel the coflows first"
            )
        if int(label) in labels:
            raise InvalidInstanceError(
                f"{where}: the id {int(label)} repeats that of coflow {labels[int(label)]}"
            )
        labels[int(label)] = k
        if instance.coflow_weight[k] != 1:
            raise InvalidInstanceError(
                f"{where}: weight is {float(instance.coflow_weight[k])!r}, but the format has "
                "no weights (all are 1); set every weight to 1 first"
            )
        if np.isfinite(instance.coflow_deadline[k]):
            raise InvalidInstanceError(f"{where}: the format cannot hold a deadline")
        release = float(instance.coflow_release[k])
        if release != int(release):
            raise InvalidInstanceError(
                f"{where}: release {release!r} is not a whole number of ms, which the format "
                "needs; round the releases first"
            )
    late = np.flatnonzero(instance.flow_release != instance.coflow_release[instance.flow_coflow])
    if late.size:
        e = int(late[0])
        raise InvalidInstanceError(
            f"{fmt} format: coflow {int(instance.flow_coflow[e])}, flow {e}: released after its "
            "coflow, but the format has no per-flow releases"
        )


# ---------------------------------------------------------------------- JSON
def _parse_json(text: str, source: str | None = None) -> Instance:
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise TraceFormatError(
            f"not valid JSON: {exc.msg} (column {exc.colno})",
            path=source,
            line=exc.lineno,
            field="json",
        ) from None
    try:
        return Instance.from_dict(doc)
    except InvalidInstanceError as exc:
        # the message starts with the JSON path, which the error shows as its field
        field = exc.field or "json"
        reason = str(exc).removeprefix(f"{field}: ")
        raise TraceFormatError(reason, path=source, field=field) from None


def read_json(path: PathLike) -> Instance:
    """Reads an instance written by :func:`write_json` (coflowlab's JSON document).

    Parameters
    ----------
    path
        The file to read.

    Returns
    -------
    Instance
        The validated instance; the round trip through :func:`write_json` is exact.

    Raises
    ------
    TraceFormatError
        If the file is not JSON (the error gives the line) or not a valid instance document
        (the message carries the original :class:`InvalidInstanceError` message).

    Examples
    --------
    >>> import tempfile
    >>> inst = Instance.from_matrices([[[1, 2], [0, 3]]])
    >>> with tempfile.TemporaryDirectory() as d:
    ...     write_json(inst, Path(d) / "inst.json")
    ...     read_json(Path(d) / "inst.json") == inst
    True
    """
    return _parse_json(_read_text(path), str(path))


def write_json(instance: Instance, path: PathLike) -> None:
    """Writes ``instance`` as coflowlab's JSON document (lossless), atomically.

    Parameters
    ----------
    instance
        The instance to write.
    path
        The target file; replaced if it exists.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     write_json(Instance.from_matrices([[[1]]]), Path(d) / "one.json")
    ...     json.loads((Path(d) / "one.json").read_text())["flows"]["size"]
    [1.0]
    """
    atomic_write_text(path, instance.to_json() + "\n")


# ---------------------------------------------------------------------- dispatch
def _looks_like_benchmark(tokens: list[str]) -> bool:
    """``id arrival M map*M R (loc:MB)*R``, with a ``:`` in exactly the last R tokens."""
    if len(tokens) < 4 or not all(_UINT.fullmatch(t) for t in tokens[:3]):
        return False
    m = int(tokens[2])
    if len(tokens) < 4 + m or not _UINT.fullmatch(tokens[3 + m]):
        return False
    r = int(tokens[3 + m])
    return (
        len(tokens) == 4 + m + r
        and all(":" not in t for t in tokens[: 4 + m])
        and all(":" in t for t in tokens[4 + m :])
    )


def _looks_like_weighted(tokens: list[str]) -> bool:
    """``id weight arrival M map*M R (loc:MB)*R`` with ``M, R >= 1``: a benchmark line once the
    second token (a non-negative number) is removed."""
    return (
        len(tokens) >= 7  # id, weight, arrival, M, a mapper, R, a reducer
        and _NUMBER.fullmatch(tokens[1]) is not None
        and not tokens[1].startswith("-")
        and _UINT.fullmatch(tokens[3]) is not None
        and int(tokens[3]) >= 1
        and _looks_like_benchmark(tokens[:1] + tokens[2:])
        and ":" in tokens[-1]  # R >= 1
    )


def _benchmark_variant(lines: list[str], start: int, end: int, source: str | None) -> str:
    """``"benchmark"`` or ``"weighted-benchmark"`` for a coflow-benchmark-like file: the
    first coflow line that reads as exactly one of the two decides; a later line that reads
    only as the other is an error naming both lines, and a file whose lines all read as both
    is an error naming its first coflow line. Lines that read as neither are left to the
    reader (which names what is wrong)."""
    first: dict[str, int] = {}
    for i in range(start, end):
        tokens = lines[i].split()
        plain, weighted = _looks_like_benchmark(tokens), _looks_like_weighted(tokens)
        if plain != weighted:
            name = "benchmark" if plain else "weighted-benchmark"
            first.setdefault(name, i + 1)
            if len(first) == 2:
                decided = min(first, key=first.__getitem__)
                raise TraceFormatError(
                    f"inconsistent coflow lines: line {first[decided]} reads only as {decided} "
                    f"(id arrival M ...{' with the weight second' if plain else ''}), but line "
                    f"{i + 1} only as {name}; {_USE_FORMAT}",
                    path=source,
                    line=i + 1,
                    field="weight",
                )
    # every line reads both ways: the plain format (CoflowSim's), so that a benchmark file
    # reads back as written; the weighted writer never leaves a file in this state
    return next(iter(first)) if first else "benchmark"


def _looks_like_sincronia(tokens: list[str]) -> bool:
    """``id arrival nflows nsrc ndst (src dst size)*nflows``, all integers."""
    return (
        len(tokens) >= 5
        and all(_UINT.fullmatch(t) for t in tokens[:5])
        and len(tokens) == 5 + 3 * int(tokens[2])
        and all(":" not in t for t in tokens)
    )


def read_header(line: _Line) -> tuple[int, int]:
    """``(num_ports, num_coflows)`` of a trace header line ``<num_ports> <num_coflows>``."""
    if len(line.tokens) != 2:
        shown = " ".join(line.tokens)
        raise line.error("header", f"expected '<num_ports> <num_coflows>', got {shown!r}")
    m = line.integer(0, "num_ports", minimum=1, maximum=MAX_PORTS)
    n = line.integer(1, "num_coflows")
    if n == 0:
        raise line.error(
            "num_coflows", "the header declares 0 coflows; an instance needs at least one"
        )
    return m, n


def trace_header(
    lines: list[str], num_ports: int | None, source: str | None
) -> tuple[int, int | None, int]:
    """``(num_ports, num_coflows or None, index of the first coflow line)`` of a trace file
    whose first line is the header ``<num_ports> <num_coflows>`` or, when ``num_ports`` is
    given (``--ports``), may be the first coflow line."""
    first = _Line(lines[0].split(), source, 1)
    if len(first.tokens) == 2:
        m, n = read_header(first)
        if num_ports is not None and num_ports != m:
            raise first.error(
                "num_ports", f"the header declares {m} ports, but --ports {num_ports} was given"
            )
        return m, n, 1
    if len(first.tokens) > 2 and all(_INT.fullmatch(t) for t in first.tokens[:2]):
        if num_ports is not None:
            return num_ports, None, 0
        raise first.error(
            "header",
            "no header line '<num_ports> <num_coflows>' (the line looks like a coflow); a "
            "header-less file, such as Sincronia's copy of the trace, needs the number of "
            "ports: pass --ports N",
        )
    return (*read_header(first), 1)  # one token: read_header says what is wrong


def trace_instance_error(
    exc: InvalidInstanceError,
    source: str | None,
    start: int,
    flow_coflow: np.ndarray,
    flow_field: Callable[[int, int], str],
) -> TraceFormatError:
    """``exc``, raised while building a trace's instance, as a file error naming the line and
    field: coflow ``k`` is on line ``start + k + 1``, and flow ``e`` (the ``i``-th of its
    coflow) is the field ``flow_field(k, i)``."""
    if exc.index is not None and exc.field in ("flow_size", "flow_release"):
        e = exc.index
        k = int(flow_coflow[e])
        i = e - int(np.searchsorted(flow_coflow, k))  # the reader's flows are grouped by coflow
        field = flow_field(k, i) if exc.field == "flow_size" else "arrival_ms"
    elif exc.index is not None and exc.field in ("coflow_release", "coflow_label"):
        k = exc.index
        field = "arrival_ms" if exc.field == "coflow_release" else "coflow_id"
    else:
        return TraceFormatError(f"invalid instance: {exc}", path=source)
    return TraceFormatError(str(exc), path=source, line=start + k + 1, field=field)


def _detect(text: str, source: str | None, **kw: Any) -> str:
    if text.lstrip()[:1] == "{":
        return "json"
    lines, end = _content_lines(text, source)
    first = lines[0].split()
    index = 1 if len(first) == 2 else 0  # a 2-token first line is a header
    if index >= end:  # a header and nothing after it
        _, n = read_header(_Line(first, source, 1))
        raise TraceFormatError(
            f"the header declares {n} coflows, but the file has no coflow line",
            path=source,
            line=1,
            field="num_coflows",
        )
    tokens = lines[index].split()
    if _looks_like_benchmark(tokens) or _looks_like_weighted(tokens):
        return _benchmark_variant(lines, index, end, source)
    if _looks_like_sincronia(tokens):
        return "sincronia"
    # Neither structure matches: the closest format is the one whose reader explains best
    # what is wrong. A benchmark line always has a 'loc:MB' token and a Sincronia line never
    # does, so that token decides; its reader's error (line, field) is then the precise one.
    closest, why = (
        ("benchmark", "a 'loc:MB' token")
        if any(":" in t for t in tokens)
        else ("sincronia", "no 'loc:MB' token")
    )
    if closest == "benchmark":  # the other lines may tell the weighted variant
        with contextlib.suppress(TraceFormatError):
            closest = _benchmark_variant(lines, index, end, source)
    from .benchmark import parse_benchmark
    from .sincronia import parse_sincronia

    parse: Callable[..., Instance] = {
        "benchmark": parse_benchmark,
        "weighted-benchmark": parse_weighted_benchmark,
        "sincronia": parse_sincronia,
    }[closest]
    try:
        parse(text, source=source, **_reader_keywords(closest, kw))
    except TraceFormatError as exc:
        raise TraceFormatError(
            f"{exc.reason} (the format is not recognized; read as {closest}, the closest "
            f"format: line {index + 1} has {why}; {_USE_FORMAT})",
            path=source,
            line=exc.line,
            field=exc.field,
        ) from None
    return closest


def _reader_keywords(fmt: str, kw: dict[str, Any]) -> dict[str, Any]:
    """The keywords of ``kw`` that ``fmt``'s reader takes (all: sincronia, benchmark)."""
    if fmt in ("benchmark", "weighted-benchmark"):
        return {k: v for k, v in kw.items() if k != "check_counts"}
    return dict(kw)


def detect_format(path: PathLike) -> str:
    """Returns the format of an instance file: one of :data:`FORMATS`.

    The rule:

    1. If the first non-whitespace character is ``{``, the file is ``"json"``.
    2. Otherwise a first line of exactly two tokens is a header (``num_ports num_coflows``,
       both trace formats) and the first coflow line is line 2; else the file is header-less
       and the first coflow line is line 1.
    3. That line is ``"benchmark"`` if it has the structure ``id arrival M map_1..map_M R
       loc_1:MB_1..loc_R:MB_R`` (integers up to ``R``, token count ``4 + M + R``, a ``:`` in
       exactly the last ``R`` tokens), and ``"sincronia"`` if it has the structure ``id
       arrival nflows nsrc ndst`` then ``nflows`` triples ``src dst size`` (no ``:``, token
       count ``5 + 3 nflows``).
    4. A benchmark-like file is ``"weighted-benchmark"`` (YosemiteSim's variant) when its lines
       read as ``id weight arrival M ...`` (the benchmark structure once the second token, a
       non-negative number, is removed). A line can read both ways (when its third token is
       its fourth plus one); the first coflow line that reads only one way decides, a later
       line that reads only the other way is an error naming both lines, and a file whose
       lines all read both ways is an error naming its first coflow line (choose with
       ``--format``).

    Benchmark and Sincronia lines exclude each other (a benchmark line always has a ``loc:MB``
    token, a Sincronia line never does), so detection only fails when neither matches. Only
    the first coflow line is examined (every line for the weighted variant); the reader then
    validates the whole file. When neither matches,
    the file is read as the closest format (benchmark if that line has a ``loc:MB`` token,
    else Sincronia) and that reader's precise error is raised, with a hint to choose the format
    with ``--format``.

    Parameters
    ----------
    path
        The file to examine.

    Raises
    ------
    TraceFormatError
        If the format cannot be detected: the error of the closest format's reader (its line
        and field), saying that the format was not recognized.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     _ = (Path(d) / "a.txt").write_text("4 1\\n1 0 2 0 2 1 3:4.0\\n")
    ...     _ = (Path(d) / "b.txt").write_text("4 1\\n7 0 2 2 1 0 3 2 2 3 2\\n")
    ...     detect_format(Path(d) / "a.txt"), detect_format(Path(d) / "b.txt")
    ('benchmark', 'sincronia')
    """
    return _detect(_read_text(path), str(path))


def _check_format(format: str) -> str:
    if format not in FORMATS:
        raise ValueError(f"unknown format {format!r}; expected one of {', '.join(FORMATS)}")
    return format


def read_instance(
    path: PathLike, format: str | None = None, *, num_ports: int | None = None, **kw: Any
) -> Instance:
    """Reads an instance file in any format of :data:`FORMATS`.

    Parameters
    ----------
    path
        The file to read.
    format
        One of :data:`FORMATS`, or ``None`` to detect it with the rule of
        :func:`detect_format`.
    num_ports
        The number of ports, needed for a trace file without a header line (the command
        line's ``--ports``). For a file that states it (a trace header, a JSON fabric), it
        must agree.
    **kw
        Passed to the format's reader: ``capacity`` for
        :func:`~coflowlab.instances.benchmark.read_benchmark`, ``capacity`` and
        ``check_counts`` for :func:`~coflowlab.instances.sincronia.read_sincronia`; none for
        JSON (a keyword there raises :class:`TypeError`).

    Returns
    -------
    Instance
        The validated instance.

    Raises
    ------
    TraceFormatError
        If the format cannot be detected or the file is malformed.
    ValueError
        If ``format`` is not one of :data:`FORMATS`.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     _ = (Path(d) / "micro.txt").write_text("4 1\\n1 0 2 0 2 1 3:4.0\\n")
    ...     read_instance(Path(d) / "micro.txt").flow_size
    array([2., 2.])
    """
    # imported here: the format modules import this module's helpers
    from .benchmark import parse_benchmark
    from .sincronia import parse_sincronia

    text = _read_text(path)
    source = str(path)
    if num_ports is not None:
        kw["num_ports"] = num_ports
    fmt = _detect(text, source, **kw) if format is None else _check_format(format)
    if fmt == "json":
        kw.pop("num_ports", None)
        if kw:
            raise TypeError(f"read_json() takes no keyword arguments, got {sorted(kw)}")
        inst = _parse_json(text, source)
        if num_ports is not None and num_ports != inst.num_ports:
            raise TraceFormatError(
                f"the file's fabric has {inst.num_ports} ports, but --ports {num_ports} was given",
                path=source,
                field="fabric.num_ports",
            )
        return inst
    if fmt == "benchmark":
        return parse_benchmark(text, source=source, **_reader_keywords(fmt, kw))
    if fmt == "weighted-benchmark":
        return parse_weighted_benchmark(text, source=source, **_reader_keywords(fmt, kw))
    return parse_sincronia(text, source=source, **kw)


def write_instance(instance: Instance, path: PathLike, format: str | None = None) -> None:
    """Writes ``instance`` in one of :data:`FORMATS`, atomically.

    Parameters
    ----------
    instance
        The instance to write.
    path
        The target file; replaced if it exists.
    format
        One of :data:`FORMATS`. ``None`` is allowed only for a ``.json`` suffix, which means
        JSON; the two trace formats share the ``.txt`` suffix, so they must be named.

    Raises
    ------
    ValueError
        If the format is unknown or cannot be inferred from the suffix.
    InvalidInstanceError
        If the chosen trace format cannot hold the instance (the message says why).

    Examples
    --------
    >>> import tempfile
    >>> inst = Instance.from_matrices([[[0, 4], [4, 0]]])
    >>> with tempfile.TemporaryDirectory() as d:
    ...     write_instance(inst, Path(d) / "x.txt", format="sincronia")
    ...     print((Path(d) / "x.txt").read_text(), end="")
    2 1
    0 0 2 2 2 0 1 4 1 0 4
    """
    from .benchmark import write_benchmark
    from .sincronia import write_sincronia

    if format is None:
        if Path(path).suffix.lower() != ".json":
            raise ValueError(
                f"cannot infer the format of {str(path)!r} from its suffix (only .json means "
                f"JSON); {_USE_FORMAT}"
            )
        format = "json"
    fmt = _check_format(format)
    if fmt == "json":
        write_json(instance, path)
    elif fmt == "benchmark":
        write_benchmark(instance, path)
    elif fmt == "weighted-benchmark":
        atomic_write_text(path, format_weighted_benchmark(instance))
    else:
        write_sincronia(instance, path)


# ---------------------------------------------------------------------- weighted benchmark
def parse_weighted_benchmark(
    text: str,
    *,
    capacity: float | None = None,
    num_ports: int | None = None,
    source: str | None = None,
) -> Instance:
    """Parses YosemiteSim's weighted coflow-benchmark text.

    Each coflow line is ``<id> <weight> <arrival_ms> <M> <map_loc>... <R> <red_loc>:<MB>...``:
    the coflow-benchmark line (:func:`~coflowlab.instances.benchmark.parse_benchmark`) with
    the coflow's weight, a finite non-negative real number, inserted as the second field. The
    header (``<num_ports> <num_coflows>``) is the same.

    Parameters
    ----------
    text
        The whole file's text.
    capacity
        Port capacity in MB per ms (default: the benchmark reader's, CoflowSim's 0.125).
    num_ports
        For a file without a header line, as for the benchmark reader.
    source
        Name of the text's origin for error messages (the path).

    Returns
    -------
    Instance
        As the benchmark reader returns, with the weights of the file.

    Raises
    ------
    TraceFormatError
        Naming the path, the line and the field (``weight``, or the benchmark reader's fields;
        its token counts then leave out the weight).

    Examples
    --------
    >>> inst = parse_weighted_benchmark("4 2\\n1 3 0 1 0 1 1:1.0\\n2 0.5 10 1 2 1 3:2.0\\n")
    >>> inst.coflow_weight.tolist(), inst.coflow_release.tolist(), inst.flow_size.tolist()
    ([3.0, 0.5], [0.0, 10.0], [1.0, 2.0])
    """
    from .benchmark import COFLOWSIM_CAPACITY, parse_benchmark

    lines, end = _content_lines(text, source)
    start = 1 if len(lines[0].split()) == 2 else 0
    weights: list[float] = []
    plain = lines[:start]
    for i in range(start, end):
        line = _Line(lines[i].split(), source, i + 1)
        if not line.tokens:
            raise line.error("coflow_id", "blank line (expected a coflow)")
        weights.append(line.weight(1))
        plain.append(" ".join(line.tokens[:1] + line.tokens[2:]))
    try:
        inst = parse_benchmark(
            "\n".join(plain) + "\n",
            capacity=COFLOWSIM_CAPACITY if capacity is None else capacity,
            num_ports=num_ports,
            source=source,
        )
    except TraceFormatError as exc:
        raise TraceFormatError(
            f"{exc.reason} (weighted-benchmark format: token counts leave out the weight)",
            path=exc.path,
            line=exc.line,
            field=exc.field,
        ) from None
    return inst.replace(coflow_weight=np.asarray(weights, dtype=np.float64))


def _weight_token(w: float) -> str:
    return str(int(w)) if float(w).is_integer() and abs(w) < 2**53 else repr(float(w))


def format_weighted_benchmark(instance: Instance) -> str:
    """The weighted coflow-benchmark text of ``instance`` (see
    :func:`parse_weighted_benchmark`); whole weights are written as integers, others as
    Python floats (exact round trip), and every weight as a float (``1.0``) when the file
    would otherwise read as a plain benchmark file too (all arrivals small), so that format
    detection reads it back as weighted.

    Raises
    ------
    InvalidInstanceError
        If the benchmark format cannot hold the instance apart from its weights.

    Examples
    --------
    >>> inst = Instance.from_matrices([[[0, 2], [0, 2]]], labels=["9"], weight=[2.5])
    >>> format_weighted_benchmark(inst)
    '2 1\\n9 2.5 0 2 0 1 1 1:4.0\\n'
    """
    from .benchmark import format_benchmark

    try:
        text = format_benchmark(instance.replace(coflow_weight=np.ones(instance.num_coflows)))
    except InvalidInstanceError as exc:
        raise InvalidInstanceError(
            str(exc).replace("benchmark format", "weighted-benchmark format")
        ) from None
    plain = text.split("\n")
    weights = [float(w) for w in instance.coflow_weight]

    def with_weights(token: Callable[[float], str]) -> list[str]:
        lines = list(plain)
        for k, w in enumerate(weights):
            head, _, rest = lines[k + 1].partition(" ")
            lines[k + 1] = f"{head} {token(w)} {rest}"
        return lines

    lines = with_weights(_weight_token)
    if _benchmark_variant(lines, 1, 1 + len(weights), None) == "benchmark":
        # every line also reads as a plain one (small arrivals): a weight written as a float
        # (``1.0``) cannot be a plain line's arrival, so detection reads the file back right
        lines = with_weights(lambda w: repr(w))
    return "\n".join(lines)
