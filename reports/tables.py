"""The gap table and the CSV and JSON files of ``coflowlab compare``.

``results.csv`` has one row per task (:data:`RESULT_COLUMNS`), failures included;
``summary.csv`` and the printed gap table one row per algorithm (:class:`SummaryRow`). Rows are
sorted, floats written in their shortest round-trip form, so the same records give
byte-identical files. Percentiles are NumPy's default (linear interpolation).

Examples
--------
>>> from coflowlab.reports import TaskRecord, attach_reference, gap_table, format_gap_table
>>> recs = [
...     TaskRecord("a", None, "exact-fluid", "exact", "fluid", "optimal", 10.0, None, 2.0),
...     TaskRecord("a", None, "fifo", "online", "exact", "feasible", 15.0, None, 0.5),
...     TaskRecord("b", None, "exact-fluid", "exact", "fluid", "optimal", 20.0, None, 4.0),
...     TaskRecord("b", None, "fifo", "online", "exact", "feasible", 20.0, None, 0.5),
... ]
>>> rows = gap_table(attach_reference(recs, "opt"))
>>> rows[1].algorithm, rows[1].mean_ratio, rows[1].max_ratio, rows[1].wins
('fifo', 1.25, 1.5, 2)
>>> print(format_gap_table(rows))
algorithm    family  model  runs  fail  rated  mean    median  p95     max     wins  proven  time (s)
exact-fluid  exact   fluid     2     0      2  1.0000  1.0000  1.0000  1.0000     0       2     3.000
fifo         online  exact     2     0      2  1.2500  1.2500  1.4750  1.5000     2       0     0.500
"""  # noqa: E501

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np

from coflowlab.constants import TOL
from coflowlab.instances.io import atomic_write_text

from .records import FAMILIES, RatedRecord, TaskRecord

__all__ = [
    "RESULT_COLUMNS",
    "SummaryRow",
    "format_gap_table",
    "gap_table",
    "gap_table_json",
    "read_results_csv",
    "reference_counts",
    "reference_description",
    "summary_csv_text",
    "wins",
    "write_results_csv",
    "write_summary_csv",
]

RESULT_COLUMNS = (
    "instance",
    "seed",
    "algorithm",
    "family",
    "time_model",
    "status",
    "objective",
    "avg_cct",
    "time_unit",
    "reference",
    "reference_kind",
    "reference_source",
    "reference_value",
    "ratio",
    "runtime",
    "verified",
    "bound",
    "proven_optimal",
    "num_coflows",
    "num_flows",
    "message",
    "note",
)
"""Columns of ``results.csv``: the :class:`~coflowlab.reports.TaskRecord` fields, the
reference (what was asked for, its kind, which algorithm supplied it, its value), the ratio and
``note`` (why the ratio is empty). Times are in ``time_unit``, ``runtime`` in wall seconds."""


@dataclass(frozen=True)
class SummaryRow:
    """One algorithm's line of the gap table.

    Attributes
    ----------
    algorithm, family, time_model
        The algorithm (full spelling), its family and time model(s), ``/``-joined if several.
    runs
        Tasks of this algorithm (one per instance).
    failed
        Tasks that ended without an objective (errors, time limits without a solution).
    rated
        Tasks with a ratio; the ratio statistics are over these.
    mean_ratio, median_ratio, p95_ratio, max_ratio
        Statistics of ``objective / reference``; ``None`` when nothing was rated.
    wins
        Instances on which it had the best objective among the schedules measured (see
        :func:`wins`); ties give each tied algorithm the win.
    proven_optimal
        Instances on which it proved its objective optimal (exact methods).
    mean_runtime
        Mean wall seconds over all its tasks, failed ones included.
    """

    algorithm: str
    family: str
    time_model: str
    runs: int
    failed: int
    rated: int
    mean_ratio: float | None
    median_ratio: float | None
    p95_ratio: float | None
    max_ratio: float | None
    wins: int
    proven_optimal: int
    mean_runtime: float


def _competes(rated: RatedRecord) -> bool:
    """Whether a task competes for a win: a verified-or-unchecked schedule that did not
    supply the reference (the exact methods under ``opt``, the named reference itself)."""
    r = rated.record
    if r.objective is None or r.is_lower_bound or r.verified is False:
        return False
    if rated.reference == "opt":
        return r.family != "exact"
    return r.algorithm != rated.reference


def wins(rated: Sequence[RatedRecord]) -> dict[str, int]:
    """Counts, per algorithm, the instances on which its objective was the best.

    Only schedules compete: lower bounds, rejected schedules and the reference's own source
    (the exact methods for ``"opt"``, the named algorithm for a name) do not. An objective
    within a relative ``TOL`` (:mod:`coflowlab.constants`) of the best is a tie, and every
    tied algorithm gets the win.

    Examples
    --------
    >>> from coflowlab.reports import TaskRecord, attach_reference
    >>> recs = [TaskRecord("a", None, n, "online", "exact", "feasible", v, None, 0.1)
    ...         for n, v in [("fair", 7.0), ("fifo", 5.0), ("varys", 5.0)]]
    >>> wins(attach_reference(recs, "fair"))
    {'fair': 0, 'fifo': 1, 'varys': 1}
    """
    counts = {r.record.algorithm: 0 for r in rated}
    groups: dict[tuple[str, int | None], list[RatedRecord]] = {}
    for r in rated:
        if _competes(r):
            groups.setdefault(r.record.key, []).append(r)
    for group in groups.values():
        best = min(r.record.objective for r in group if r.record.objective is not None)
        for r in group:
            assert r.record.objective is not None  # _competes checked it
            if r.record.objective <= best + TOL * abs(best):
                counts[r.record.algorithm] += 1
    return counts


def _stat(values: list[float], fn: str) -> float | None:
    """A ratio statistic, ``None`` for no values."""
    if not values:
        return None
    arr = np.asarray(values, dtype=float)
    if fn == "mean":
        return float(arr.mean())
    if fn == "median":
        return float(np.percentile(arr, 50))
    if fn == "p95":
        return float(np.percentile(arr, 95))
    return float(arr.max())


def _family_rank(family: str) -> int:
    return FAMILIES.index(family) if family in FAMILIES else len(FAMILIES)


def gap_table(rated: Sequence[RatedRecord]) -> list[SummaryRow]:
    """Summarizes the rated tasks per algorithm: the gap table.

    Rows are ordered by family (exact, relaxation, bound, approximation, online), then name.

    Examples
    --------
    >>> from coflowlab.reports import TaskRecord, attach_reference
    >>> recs = [TaskRecord("a", None, "lp-ov", "relaxation", "fluid", "optimal", 9.0, None, 1.0),
    ...         TaskRecord("a", None, "exact-fluid", "exact", "fluid", "error", None, None, 3.0,
    ...                    message="solver crashed")]
    >>> rows = gap_table(attach_reference(recs, "opt"))
    >>> [(row.algorithm, row.failed, row.rated) for row in rows]
    [('exact-fluid', 1, 0), ('lp-ov', 0, 0)]
    """
    by_algorithm: dict[str, list[RatedRecord]] = {}
    for r in rated:
        by_algorithm.setdefault(r.record.algorithm, []).append(r)
    win_counts = wins(rated)
    rows = []
    for name, group in by_algorithm.items():
        ratios = [r.ratio for r in group if r.ratio is not None]
        families = sorted({r.record.family for r in group}, key=_family_rank)
        rows.append(
            SummaryRow(
                algorithm=name,
                family="/".join(families),
                time_model="/".join(sorted({r.record.time_model for r in group})),
                runs=len(group),
                failed=sum(r.record.objective is None for r in group),
                rated=len(ratios),
                mean_ratio=_stat(ratios, "mean"),
                median_ratio=_stat(ratios, "median"),
                p95_ratio=_stat(ratios, "p95"),
                max_ratio=_stat(ratios, "max"),
                wins=win_counts[name],
                proven_optimal=sum(r.record.proven_optimal for r in group),
                mean_runtime=float(np.mean([r.record.runtime for r in group])),
            )
        )
    rows.sort(key=lambda row: (_family_rank(row.family.split("/")[0]), row.algorithm))
    return rows


GAP_HEADERS = (
    ("algorithm", "algorithm"),
    ("family", "family"),
    ("model", "time_model"),
    ("runs", "runs"),
    ("fail", "failed"),
    ("rated", "rated"),
    ("mean", "mean_ratio"),
    ("median", "median_ratio"),
    ("p95", "p95_ratio"),
    ("max", "max_ratio"),
    ("wins", "wins"),
    ("proven", "proven_optimal"),
    ("time (s)", "mean_runtime"),
)
"""The gap table's column headers and the :class:`SummaryRow` field each shows."""


def gap_cells(row: SummaryRow) -> list[str]:
    """One row of the gap table as display strings (ratios to 4 decimals, ``-`` if none)."""
    cells = []
    for _, name in GAP_HEADERS:
        value = getattr(row, name)
        if value is None:
            cells.append("-")
        elif name.endswith("_ratio"):
            cells.append(f"{value:.4f}")
        elif name == "mean_runtime":
            cells.append(f"{value:,.3f}")
        else:
            cells.append(str(value))
    return cells


def format_gap_table(rows: Sequence[SummaryRow]) -> str:
    """The gap table as aligned text: names left-aligned, numbers right-aligned.

    See the module example.
    """
    header = [h for h, _ in GAP_HEADERS]
    body = [gap_cells(row) for row in rows]
    widths = [max(len(line[i]) for line in [header, *body]) for i in range(len(header))]
    left = 3  # algorithm, family, model
    lines = []
    for line in [header, *body]:
        cells = [
            c.ljust(w) if i < left or line is header else c.rjust(w)
            for i, (c, w) in enumerate(zip(line, widths, strict=True))
        ]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


def reference_counts(rated: Sequence[RatedRecord]) -> dict[str, int]:
    """How many instances each reference kind measured (``"missing"``: no reference).

    Examples
    --------
    >>> from coflowlab.reports import TaskRecord, attach_reference
    >>> recs = [TaskRecord("a", None, "exact-fluid", "exact", "fluid", "optimal", 5.0, None, 1.0),
    ...         TaskRecord("b", None, "fifo", "online", "exact", "feasible", 5.0, None, 1.0)]
    >>> reference_counts(attach_reference(recs, "opt"))
    {'opt': 1, 'missing': 1}
    """
    per_instance: dict[tuple[str, int | None], str] = {}
    for r in rated:
        per_instance[r.record.key] = r.reference_kind or "missing"
    counts: dict[str, int] = {}
    for kind in per_instance.values():
        counts[kind] = counts.get(kind, 0) + 1
    return counts


_KIND_TEXT = {
    "opt": "the proven optimum of an exact method",
    "bound (opt not proven)": "the best bound of an exact method that did not prove optimality",
    "bound": "the largest lower bound among the relaxations and bounds",
}


def reference_description(rated: Sequence[RatedRecord]) -> str:
    """One sentence saying what every ratio is measured against, with instance counts.

    Examples
    --------
    >>> from coflowlab.reports import TaskRecord, attach_reference
    >>> recs = [TaskRecord("a", None, "exact-fluid", "exact", "fluid", "optimal", 5.0, None, 1.0)]
    >>> reference_description(attach_reference(recs, "opt"))
    'Ratios are objective / reference (reference "opt"): the proven optimum of an exact method on 1 instance.'
    """  # noqa: E501
    if not rated:
        return "No tasks ran."
    reference = rated[0].reference
    parts = []
    for kind, n in reference_counts(rated).items():
        plural = "instance" if n == 1 else "instances"
        if kind == "missing":
            parts.append(f"no reference on {n} {plural} (their ratios are empty)")
        else:
            text = _KIND_TEXT.get(kind, f"the objective of {reference}")
            parts.append(f"{text} on {n} {plural}")
    return f'Ratios are objective / reference (reference "{reference}"): ' + "; ".join(parts) + "."


def _fmt(value: object) -> str:
    """A CSV cell: shortest round-trip float, ``true``/``false``, empty for ``None``."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def _result_row(r: RatedRecord) -> list[str]:
    rec = r.record
    values = {
        "reference": r.reference,
        "reference_kind": r.reference_kind,
        "reference_source": r.reference_source,
        "reference_value": r.reference_value,
        "ratio": r.ratio,
        "note": r.note,
        "proven_optimal": rec.proven_optimal,
    }
    return [_fmt(values[c] if c in values else getattr(rec, c)) for c in RESULT_COLUMNS]


def _csv_text(header: Iterable[str], rows: Iterable[list[str]]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return buf.getvalue()


def results_csv_text(rated: Sequence[RatedRecord]) -> str:
    """The text of ``results.csv`` (see :data:`RESULT_COLUMNS`)."""
    return _csv_text(RESULT_COLUMNS, (_result_row(r) for r in rated))


def write_results_csv(rated: Sequence[RatedRecord], path: str | Path) -> Path:
    """Writes ``results.csv``, one row per task (failures included), atomically.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from coflowlab.reports import TaskRecord, attach_reference
    >>> recs = [TaskRecord("a", 3, "fifo", "online", "exact", "error", None, None, 0.5,
    ...                    message="boom")]
    >>> with tempfile.TemporaryDirectory() as d:
    ...     p = write_results_csv(attach_reference(recs, "opt"), pathlib.Path(d) / "r.csv")
    ...     print(p.read_text().splitlines()[1])
    a,3,fifo,online,exact,error,,,unit,opt,,,,,0.5,,,false,0,0,boom,no objective (status error)
    """
    path = Path(path)
    atomic_write_text(path, results_csv_text(rated))
    return path


def _optional_float(text: str) -> float | None:
    return None if text == "" else float(text)


def _optional_int(text: str) -> int | None:
    return None if text == "" else int(text)


def _optional_bool(text: str) -> bool | None:
    if text in ("true", "false", ""):
        return None if text == "" else text == "true"
    raise ValueError(f"expected true, false or empty, got {text!r}")


_PARSERS: dict[str, Callable[[str], Any]] = {
    "seed": _optional_int,
    "objective": _optional_float,
    "avg_cct": _optional_float,
    "runtime": float,
    "verified": _optional_bool,
    "num_coflows": int,
    "num_flows": int,
    "bound": _optional_float,
    "reference_value": _optional_float,
    "ratio": _optional_float,
}
"""How each non-text column of ``results.csv`` is read back."""


def read_results_csv(path: str | Path) -> list[RatedRecord]:
    """Reads ``results.csv`` back (per-coflow arrays are not in it, so they are ``None``).

    Raises
    ------
    ValueError
        A missing column, an unreadable cell or an invalid record; the message names the
        file, the line and (for a cell) the column.
    """
    path = Path(path)
    with path.open(encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh)
        missing = [c for c in RESULT_COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise ValueError(f"{path}: missing column(s) {', '.join(missing)}")
        out = []
        for row in reader:
            where = f"{path}, line {reader.line_num}"
            values: dict[str, Any] = {}
            for column in RESULT_COLUMNS:
                try:
                    values[column] = _PARSERS.get(column, str)(row[column])
                except ValueError as exc:
                    raise ValueError(f"{where}, column {column}: {exc}") from exc
            record_fields = {f.name for f in fields(TaskRecord)}
            try:
                rec = TaskRecord(**{k: v for k, v in values.items() if k in record_fields})
            except (ValueError, TypeError) as exc:
                raise ValueError(f"{where}: {exc}") from exc
            out.append(
                RatedRecord(
                    record=rec,
                    reference=str(values["reference"]),
                    reference_value=values["reference_value"],
                    reference_kind=str(values["reference_kind"]),
                    reference_source=str(values["reference_source"]),
                    ratio=values["ratio"],
                    note=str(values["note"]),
                )
            )
    return out


SUMMARY_COLUMNS = ("reference", *(f.name for f in fields(SummaryRow)))
"""Columns of ``summary.csv``: the reference asked for, then the :class:`SummaryRow` fields."""


def summary_csv_text(rows: Sequence[SummaryRow], reference: str) -> str:
    """The text of ``summary.csv``."""
    body = ([reference] + [_fmt(v) for v in asdict(row).values()] for row in rows)
    return _csv_text(SUMMARY_COLUMNS, body)


def write_summary_csv(rows: Sequence[SummaryRow], path: str | Path, reference: str) -> Path:
    """Writes ``summary.csv`` (the gap table, full precision) atomically."""
    path = Path(path)
    atomic_write_text(path, summary_csv_text(rows, reference))
    return path


def gap_table_json(rated: Sequence[RatedRecord]) -> str:
    """The gap table as one JSON object (what ``coflowlab compare --json`` prints).

    Keys: ``reference`` (what was asked for), ``reference_description``,
    ``reference_counts`` (instances per reference kind), ``instances``, ``tasks``,
    ``failed`` (tasks without an objective) and ``rows`` (the :class:`SummaryRow` fields;
    empty statistics are ``null``).

    Examples
    --------
    >>> import json
    >>> from coflowlab.reports import TaskRecord, attach_reference
    >>> recs = [TaskRecord("a", None, "fifo", "online", "exact", "feasible", 5.0, None, 1.0)]
    >>> obj = json.loads(gap_table_json(attach_reference(recs, "fifo")))
    >>> obj["reference"], obj["rows"][0]["mean_ratio"], obj["rows"][0]["wins"]
    ('fifo', 1.0, 0)
    """
    rows = gap_table(rated)
    obj = {
        "reference": rated[0].reference if rated else None,
        "reference_description": reference_description(rated),
        "reference_counts": reference_counts(rated),
        "instances": len({r.record.key for r in rated}),
        "tasks": len(rated),
        "failed": sum(r.record.objective is None for r in rated),
        "rows": [asdict(row) for row in rows],
    }
    # Statistics are finite by construction (records reject nan/inf); allow_nan=False keeps
    # the output strict JSON should that ever change.
    return json.dumps(obj, indent=2, allow_nan=False)
