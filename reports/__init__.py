"""Tables, figures and reports of algorithm comparisons (``coflowlab compare``).

The runner describes every task as a :class:`TaskRecord` (failures included);
:func:`attach_reference` measures each against a reference on its instance; the rest reads the
resulting :class:`RatedRecord` list:

>>> from coflowlab.reports import TaskRecord, attach_reference, gap_table, format_gap_table
>>> recs = [TaskRecord("a", None, "exact-fluid", "exact", "fluid", "optimal", 8.0, None, 1.0),
...         TaskRecord("a", None, "sincronia", "approximation", "fluid", "feasible", 10.0, None,
...                    0.1)]
>>> rated = attach_reference(recs, "opt")
>>> [row.mean_ratio for row in gap_table(rated)]
[1.0, 1.25]

:func:`write_comparison` writes the whole output folder (``results.csv``, ``summary.csv``,
``report.md``, ``report.html``, ``figures/``); matplotlib is imported only when figures are
drawn.
"""

from .plots import (
    FIGURE_NAMES,
    BinComparison,
    FigureFile,
    FigureSet,
    default_baseline,
    figures,
    normalized_cct_by_bin,
)
from .records import (
    BIN_NAMES,
    FAMILIES,
    LOWER_BOUND_FAMILIES,
    REFERENCE_KINDS,
    STATUSES,
    RatedRecord,
    TaskRecord,
    attach_reference,
)
from .render import ComparisonFiles, write_comparison, write_report
from .tables import (
    RESULT_COLUMNS,
    SUMMARY_COLUMNS,
    SummaryRow,
    format_gap_table,
    gap_table,
    gap_table_json,
    read_results_csv,
    reference_counts,
    reference_description,
    results_csv_text,
    summary_csv_text,
    wins,
    write_results_csv,
    write_summary_csv,
)

__all__ = [
    "BIN_NAMES",
    "FAMILIES",
    "FIGURE_NAMES",
    "LOWER_BOUND_FAMILIES",
    "REFERENCE_KINDS",
    "RESULT_COLUMNS",
    "STATUSES",
    "SUMMARY_COLUMNS",
    "BinComparison",
    "ComparisonFiles",
    "FigureFile",
    "FigureSet",
    "RatedRecord",
    "SummaryRow",
    "TaskRecord",
    "attach_reference",
    "default_baseline",
    "figures",
    "format_gap_table",
    "gap_table",
    "gap_table_json",
    "normalized_cct_by_bin",
    "read_results_csv",
    "reference_counts",
    "reference_description",
    "results_csv_text",
    "summary_csv_text",
    "wins",
    "write_comparison",
    "write_report",
    "write_results_csv",
    "write_summary_csv",
]
