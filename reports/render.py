"""``report.md``, the self-contained ``report.html`` and the whole output folder of
``coflowlab compare``.

The HTML embeds every figure as a ``data:image/png;base64`` URI and its style inline, so it
opens offline and can be mailed as one file; it loads nothing from the network. Both reports
state what each ratio is measured against, list the skipped figures with their reasons, and
list every task that failed or has no ratio, with its message.

Layout of the folder written by :func:`write_comparison`::

    results.csv   summary.csv   report.md   report.html
    figures/NAME.png   figures/NAME.pdf
"""

from __future__ import annotations

import base64
import html
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from coflowlab.instances.io import atomic_write_text

from .plots import FigureSet, figures
from .records import RatedRecord
from .tables import (
    GAP_HEADERS,
    gap_cells,
    gap_table,
    reference_description,
    write_results_csv,
    write_summary_csv,
)

__all__ = ["ComparisonFiles", "write_comparison", "write_report"]

_CSS = """
body { font-family: sans-serif; max-width: 70em; margin: 2em auto; padding: 0 1em;
       color: #222; line-height: 1.4; }
table { border-collapse: collapse; margin: 1em 0; font-size: 0.9em; }
th, td { border: 1px solid #bbb; padding: 0.25em 0.6em; }
th { background: #eee; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
pre { background: #f5f5f5; padding: 0.6em; overflow-x: auto; }
figure { margin: 1.5em 0; }
figure img { max-width: 100%; height: auto; border: 1px solid #ddd; }
figcaption { font-size: 0.9em; color: #444; }
""".strip()

_NUMERIC = {"runs", "fail", "rated", "mean", "median", "p95", "max", "wins", "proven", "time (s)"}


def _md_cell(text: str) -> str:
    """A Markdown table cell: no line breaks, pipes escaped."""
    return " ".join(str(text).split()).replace("|", "\\|")


def _md_table(header: Sequence[str], rows: Sequence[Sequence[str]], right: set[int]) -> str:
    align = ["---:" if i in right else "---" for i in range(len(header))]
    lines = ["| " + " | ".join(_md_cell(h) for h in header) + " |", "|" + "|".join(align) + "|"]
    lines += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _html_table(header: Sequence[str], rows: Sequence[Sequence[str]], right: set[int]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = []
    for row in rows:
        cells = "".join(
            f'<td class="num">{html.escape(c)}</td>'
            if i in right
            else f"<td>{html.escape(c)}</td>"
            for i, c in enumerate(row)
        )
        body.append(f"<tr>{cells}</tr>")
    return f"<table>\n<tr>{head}</tr>\n" + "\n".join(body) + "\n</table>"


def _instance_label(r: RatedRecord) -> str:
    rec = r.record
    return rec.instance if rec.seed is None else f"{rec.instance} (seed {rec.seed})"


def _problem_rows(rated: Sequence[RatedRecord]) -> tuple[list[list[str]], list[list[str]]]:
    """Tasks without an objective (failures), and tasks with an objective but no ratio or
    with a warning about it."""
    failures = [
        [_instance_label(r), r.record.algorithm, r.record.status, r.record.message or "-"]
        for r in rated
        if r.record.objective is None
    ]
    notes = [
        [_instance_label(r), r.record.algorithm, r.note]
        for r in rated
        if r.record.objective is not None and r.note
    ]
    return failures, notes


@dataclass(frozen=True)
class _Content:
    """Everything both reports show, computed once."""

    title: str
    command_line: str
    reference_text: str
    gap_header: list[str]
    gap_rows: list[list[str]]
    figures: FigureSet
    failures: list[list[str]]
    notes: list[list[str]]


def _markdown(c: _Content, figdir_name: str) -> str:
    right = {i for i, h in enumerate(c.gap_header) if h in _NUMERIC}
    out = [f"# {c.title}", "", "Command:", "", "```", c.command_line, "```", ""]
    out += ["## Reference", "", c.reference_text, ""]
    out += ["## Gap table", "", _md_table(c.gap_header, c.gap_rows, right), ""]
    out += [
        "Ratios are objective / reference; *wins*: instances with the best objective among "
        "the schedules measured (ties shared); *proven*: instances proven optimal.",
        "",
        "## Figures",
        "",
    ]
    for f in c.figures.written:
        out += [
            f"### {f.name}",
            "",
            f"![{f.name}]({figdir_name}/{f.png.name})",
            "",
            f"{f.caption} PDF: `{figdir_name}/{f.pdf.name}`.",
            "",
        ]
    if c.figures.skipped:
        out += ["Not drawn:", ""]
        out += [f"- {name}: {reason}." for name, reason in c.figures.skipped.items()]
        out += [""]
    out += ["## Failures", ""]
    if c.failures:
        header = ["instance", "algorithm", "status", "message"]
        out += [_md_table(header, c.failures, set()), ""]
    else:
        out += ["Every task produced a value.", ""]
    if c.notes:
        out += ["## Ratios left empty or flagged", ""]
        out += [_md_table(["instance", "algorithm", "note"], c.notes, set()), ""]
    return "\n".join(out)


def _html(c: _Content) -> str:
    right = {i for i, h in enumerate(c.gap_header) if h in _NUMERIC}
    e = html.escape
    out = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        f"<title>{e(c.title)}</title>",
        f"<style>\n{_CSS}\n</style>",
        "</head>",
        "<body>",
        f"<h1>{e(c.title)}</h1>",
        f"<p>Command:</p>\n<pre>{e(c.command_line)}</pre>",
        f"<h2>Reference</h2>\n<p>{e(c.reference_text)}</p>",
        "<h2>Gap table</h2>",
        _html_table(c.gap_header, c.gap_rows, right),
        "<p>Ratios are objective / reference; <em>wins</em>: instances with the best "
        "objective among the schedules measured (ties shared); <em>proven</em>: instances "
        "proven optimal.</p>",
        "<h2>Figures</h2>",
    ]
    for f in c.figures.written:
        data = base64.b64encode(f.png.read_bytes()).decode("ascii")
        out.append(
            f'<figure id="{e(f.name)}">\n<img src="data:image/png;base64,{data}" '
            f'alt="{e(f.name)}">\n<figcaption>{e(f.caption)} (PDF: figures/{e(f.pdf.name)})'
            "</figcaption>\n</figure>"
        )
    if c.figures.skipped:
        items = "".join(
            f"<li>{e(name)}: {e(reason)}.</li>" for name, reason in c.figures.skipped.items()
        )
        out.append(f"<p>Not drawn:</p>\n<ul>{items}</ul>")
    out.append("<h2>Failures</h2>")
    if c.failures:
        out.append(_html_table(["instance", "algorithm", "status", "message"], c.failures, set()))
    else:
        out.append("<p>Every task produced a value.</p>")
    if c.notes:
        out.append("<h2>Ratios left empty or flagged</h2>")
        out.append(_html_table(["instance", "algorithm", "note"], c.notes, set()))
    out += ["</body>", "</html>", ""]
    return "\n".join(out)


def write_report(
    rated: Sequence[RatedRecord],
    outdir: str | Path,
    *,
    title: str,
    command_line: str,
    baseline: str | None = None,
) -> tuple[Path, Path]:
    """Draws the figures into ``outdir/figures`` and writes ``report.md`` and the
    self-contained ``report.html`` into ``outdir`` (created if needed), atomically.

    Parameters
    ----------
    rated
        Output of :func:`coflowlab.reports.attach_reference` (which fixes the reference).
    outdir
        The output folder.
    title
        The reports' heading.
    command_line
        The command that produced the results, shown verbatim.
    baseline
        The Varys-bin figure's baseline (see :func:`coflowlab.reports.figures`).

    Returns
    -------
    tuple[Path, Path]
        The Markdown and the HTML report.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from coflowlab.reports import TaskRecord, attach_reference
    >>> recs = [TaskRecord("a", None, "fifo", "online", "exact", "feasible", 2.0, 2.0, 0.1)]
    >>> with tempfile.TemporaryDirectory() as d:
    ...     md, page = write_report(attach_reference(recs, "fifo"), d, title="T",
    ...                             command_line="coflowlab compare a --reference fifo")
    ...     print(page.read_text().count('<img src="data:image/png;base64,'))
    1
    """
    md_path, html_path, _ = _write_report(rated, Path(outdir), title, command_line, baseline)
    return md_path, html_path


def _write_report(
    rated: Sequence[RatedRecord],
    outdir: Path,
    title: str,
    command_line: str,
    baseline: str | None,
) -> tuple[Path, Path, FigureSet]:
    outdir.mkdir(parents=True, exist_ok=True)
    figset = figures(rated, outdir / "figures", baseline=baseline)
    rows = gap_table(rated)
    failures, notes = _problem_rows(rated)
    content = _Content(
        title=title,
        command_line=command_line,
        reference_text=reference_description(rated),
        gap_header=[h for h, _ in GAP_HEADERS],
        gap_rows=[gap_cells(row) for row in rows],
        figures=figset,
        failures=failures,
        notes=notes,
    )
    md_path, html_path = outdir / "report.md", outdir / "report.html"
    atomic_write_text(md_path, _markdown(content, "figures"))
    atomic_write_text(html_path, _html(content))
    return md_path, html_path, figset


@dataclass(frozen=True)
class ComparisonFiles:
    """The files :func:`write_comparison` wrote."""

    results_csv: Path
    summary_csv: Path
    report_md: Path
    report_html: Path
    figures: list[Path]


def write_comparison(
    rated: Sequence[RatedRecord],
    outdir: str | Path,
    *,
    title: str,
    command_line: str,
    baseline: str | None = None,
) -> ComparisonFiles:
    """Writes the whole output folder of ``coflowlab compare``: ``results.csv``,
    ``summary.csv``, ``report.md``, ``report.html`` and ``figures/*.png|pdf``.

    Same arguments as :func:`write_report`. Every file is written atomically, so an
    interrupted run leaves complete files or none.
    """
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    results = write_results_csv(rated, outdir / "results.csv")
    reference = rated[0].reference if rated else ""
    summary = write_summary_csv(gap_table(rated), outdir / "summary.csv", reference)
    md, page, figset = _write_report(rated, outdir, title, command_line, baseline)
    return ComparisonFiles(results, summary, md, page, figset.paths)
