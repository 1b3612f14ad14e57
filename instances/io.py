"""Reading and writing instance files in every supported format.

Three formats are supported (:data:`FORMATS`):

- ``"json"``: coflowlab's own lossless document (:meth:`Instance.to_dict`);
- ``"benchmark"``: the public coflow-benchmark trace format read by CoflowSim
  (:mod:`coflowlab.instances.benchmark`);
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
from pathlib import Path
from typing import Any

import numpy as np

from coflowlab.exceptions import InvalidInstanceError, TraceFormatError
from coflowlab.instance import Instance

__all__ = [
    "FORMATS",
    "atomic_write_text",
    "detect_format",
    "read_instance",
    "read_json",
    "write_instance",
    "write_json",
]

FORMATS: tuple[str, ...] = ("json", "benchmark", "sincronia")
"""Names of the supported file formats."""

PathLike = str | os.PathLike[str]

_UINT = re.compile(r"[0-9]+")
_INT = re.compile(r"-?[0-9]+")
_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_WRITABLE_SIZE_UNITS = ("MB", "unit")
_WRITABLE_TIME_UNITS = ("ms", "unit")


# ---------------------------------------------------------------------- shared helpers
class _Line:
    """One line's tokens; its errors name the path, the 1-based line and the field."""

    def __init__(self, tokens: list[str], source: str | None, lineno: int) -> None:
        self.tokens = tokens
        self.source = source
        self.lineno = lineno

    def error(self, field: str, reason: str) -> TraceFormatError:
        return TraceFormatError(reason, path=self.source, line=self.lineno, field=field)

    def integer(self, index: int, field: str, minimum: int = 0) -> int:
        """Token ``index`` as an integer ``>= minimum``."""
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
        return value


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
    failure leaves nothing half-written."""
    target = Path(path)
    mode = target.stat().st_mode & 0o777 if target.exists() else 0o644
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _check_capacity(capacity: float) -> float:
    """Validates a reader's ``capacity`` argument (an argument error, not a file error)."""
    if isinstance(capacity, bool) or not isinstance(capacity, int | float | np.number):
        raise TypeError(f"capacity must be a number, got {type(capacity).__name__}")
    cap = float(capacity)
    if not (np.isfinite(cap) and cap > 0):
        raise ValueError(f"capacity must be positive and finite, got {capacity!r}")
    return cap


def _check_writable(instance: Instance, fmt: str) -> None:
    """Raises :class:`InvalidInstanceError` if the trace formats cannot hold ``instance``.

    Both trace formats store, per coflow, an integer id, an integer arrival in ms and flows in
    MB; nothing else. Anything they cannot hold is an error rather than silently dropped.
    """
    units = instance.units
    if units.size not in _WRITABLE_SIZE_UNITS or units.time not in _WRITABLE_TIME_UNITS:
        raise InvalidInstanceError(
            f"{fmt} format: sizes are MB and times ms, but the instance uses {units.size} and "
            f"{units.time}; convert it first (scale_sizes / scale_time)"
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
                "relabel with instance.replace(coflow_label=...)"
            )
        if int(label) in labels:
            raise InvalidInstanceError(
                f"{where}: the id {int(label)} repeats that of coflow {labels[int(label)]}"
            )
        labels[int(label)] = k
        if instance.coflow_weight[k] != 1:
            raise InvalidInstanceError(
                f"{where}: weight is {float(instance.coflow_weight[k])!r}, but the format has "
                "no weights (all are 1); use instance.replace(coflow_weight=1) to drop them"
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
    except (InvalidInstanceError, TypeError, ValueError, KeyError, AttributeError) as exc:
        raise TraceFormatError(
            f"not a valid coflowlab instance: {exc}", path=source, field="json"
        ) from None


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


def _looks_like_sincronia(tokens: list[str]) -> bool:
    """``id arrival nflows nsrc ndst (src dst size)*nflows``, all integers."""
    return (
        len(tokens) >= 5
        and all(_UINT.fullmatch(t) for t in tokens[:5])
        and len(tokens) == 5 + 3 * int(tokens[2])
        and all(":" not in t for t in tokens)
    )


def _detect(text: str, source: str | None) -> str:
    if text.lstrip()[:1] == "{":
        return "json"
    lines = text.split("\n")  # line numbers count "\n" only; split() drops any "\r"
    first = lines[0].split() if lines else []
    index = 1 if len(first) == 2 else 0  # a 2-token first line is a header
    if index >= len(lines) or not lines[index].split():
        raise TraceFormatError(
            "cannot detect the format: no coflow line found",
            path=source,
            line=index + 1,
            field="format",
        )
    tokens = lines[index].split()
    checks = (("benchmark", _looks_like_benchmark), ("sincronia", _looks_like_sincronia))
    found = [name for name, matches in checks if matches(tokens)]
    if len(found) != 1:
        why = "matches both" if found else "matches neither"
        raise TraceFormatError(
            f"cannot detect the format: the first coflow line {why} the benchmark structure "
            "'id arrival M map*M R loc:MB*R' and the Sincronia structure "
            "'id arrival nflows nsrc ndst (src dst size)*nflows'; pass format=",
            path=source,
            line=index + 1,
            field="format",
        )
    return found[0]


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

    The two structures exclude each other (a benchmark line always has a ``loc:MB`` token, a
    Sincronia line never does), so detection only fails when neither matches. Only the first
    coflow line is examined; the reader then validates the whole file.

    Parameters
    ----------
    path
        The file to examine.

    Raises
    ------
    TraceFormatError
        If the format cannot be detected; pass ``format=`` to :func:`read_instance` then.

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
        raise ValueError(f"unknown format {format!r}; expected one of {FORMATS}")
    return format


def read_instance(path: PathLike, format: str | None = None, **kw: Any) -> Instance:
    """Reads an instance file in any format of :data:`FORMATS`.

    Parameters
    ----------
    path
        The file to read.
    format
        One of :data:`FORMATS`, or ``None`` to detect it with the rule of
        :func:`detect_format`.
    **kw
        Passed to the format's reader: ``capacity`` and ``num_ports`` for
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
    fmt = _detect(text, source) if format is None else _check_format(format)
    if fmt == "json":
        if kw:
            raise TypeError(f"read_json() takes no keyword arguments, got {sorted(kw)}")
        return _parse_json(text, source)
    if fmt == "benchmark":
        return parse_benchmark(text, source=source, **kw)
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
                f"cannot infer the format of {str(path)!r} from its suffix; pass format= "
                f"(one of {FORMATS})"
            )
        format = "json"
    fmt = _check_format(format)
    if fmt == "json":
        write_json(instance, path)
    elif fmt == "benchmark":
        write_benchmark(instance, path)
    else:
        write_sincronia(instance, path)
