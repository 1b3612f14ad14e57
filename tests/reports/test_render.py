"""Tests of the figures and of report.md / report.html.

The figures themselves were inspected by eye on ``synthetic_records()``; these tests check
what can be checked mechanically: which figures are drawn or skipped and why, the numbers
behind the Varys-bin figure, self-containment of the HTML, determinism and atomic writes.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from numpy.testing import assert_allclose

from coflowlab.reports import (
    FIGURE_NAMES,
    TaskRecord,
    attach_reference,
    default_baseline,
    figures,
    normalized_cct_by_bin,
    write_comparison,
    write_report,
)

COMMAND = "coflowlab compare fb-like-*.json --reference opt -o out"


@pytest.fixture(scope="module")
def comparison(synthetic, tmp_path_factory):
    """The whole output folder for the synthetic set, written once."""
    out = tmp_path_factory.mktemp("compare")
    rated = attach_reference(synthetic, "opt")
    files = write_comparison(rated, out, title="Synthetic <comparison>", command_line=COMMAND)
    return out, files


def test_every_figure_is_drawn_as_png_and_pdf(comparison):
    """Tests that the synthetic set (sizes vary, online runs, bins) draws all five figures,
    each as a PNG and a PDF."""
    out, files = comparison
    names = sorted(p.name for p in (out / "figures").iterdir())
    assert names == sorted(f"{n}.{ext}" for n in FIGURE_NAMES for ext in ("png", "pdf"))
    assert sorted(files.figures) == sorted((out / "figures").iterdir())
    for p in files.figures:
        magic = b"\x89PNG" if p.suffix == ".png" else b"%PDF"
        assert p.read_bytes().startswith(magic)
        assert p.stat().st_size > 5000  # a real drawing, not an empty canvas


def test_html_is_self_contained(comparison):
    """Tests that report.html embeds one PNG data URI per figure, loads nothing from the
    network, shows the gap table as an HTML table and states the reference."""
    _, files = comparison
    page = files.report_html.read_text()
    assert page.count('<img src="data:image/png;base64,') == len(FIGURE_NAMES)
    assert "http://" not in page and "https://" not in page
    assert "<script" not in page and "<link" not in page and "@import" not in page
    assert "<td>sincronia</td>" in page
    assert "the proven optimum of an exact method on 6 instances" in page
    assert "<title>Synthetic &lt;comparison&gt;</title>" in page
    assert "SimulationError: stalled at t=12.5" in page  # the failed task is listed


def test_markdown_report(comparison):
    """Tests that report.md has the command, the reference, the gap table, a link to every
    figure and its PDF, and the failed tasks with their messages."""
    _, files = comparison
    md = files.report_md.read_text()
    assert COMMAND in md
    assert 'Ratios are objective / reference (reference "opt")' in md
    assert "| sincronia | approximation | fluid | 10 | 0 | 10 |" in md
    for name in FIGURE_NAMES:
        assert f"(figures/{name}.png)" in md and f"`figures/{name}.pdf`" in md
    assert "| fb-like-03.json | aalo | error | SimulationError: stalled at t=12.5 |" in md
    assert "| fb-like-09.json | exact-fluid | time_limit_no_solution |" in md


def test_outputs_are_deterministic(small_synthetic, tmp_path):
    """Tests that the same records give byte-identical CSV, Markdown, HTML, PNG and PDF
    files (no dates, no version tags), whatever order the tasks come in."""
    outs = []
    for k, recs in enumerate([small_synthetic, small_synthetic[::-1]]):
        files = write_comparison(
            attach_reference(recs, "opt"), tmp_path / str(k), title="T", command_line="c"
        )
        outs.append(files)
    a, b = outs
    for pa, pb in [
        (a.results_csv, b.results_csv),
        (a.summary_csv, b.summary_csv),
        (a.report_md, b.report_md),
        (a.report_html, b.report_html),
        *zip(a.figures, b.figures, strict=True),
    ]:
        assert pa.read_bytes() == pb.read_bytes(), pa.name
    assert b"CreationDate" not in a.figures[1].read_bytes()


def test_figures_without_data_are_skipped_and_said_so(tmp_path):
    """Tests that one instance size and no online runs skip the size and arrival figures,
    that report.md says why, and that stale files of a skipped figure are removed."""
    recs = [
        TaskRecord("a", None, "exact-fluid", "exact", "fluid", "optimal", 10.0, None, 1.0),
        TaskRecord("a", None, "sincronia", "approximation", "fluid", "feasible", 12.0, 4.0,
                   0.1, release=[0.0, 1.0], completion=[5.0, 7.0], bin=("SN", "LW")),
    ]  # fmt: skip
    (tmp_path / "figures").mkdir()
    (tmp_path / "figures" / "ratio_vs_size.png").write_bytes(b"stale")
    md, page = write_report(attach_reference(recs, "opt"), tmp_path, title="T", command_line="c")
    text = md.read_text()
    assert "- ratio_vs_size: every instance has the same size." in text
    assert "- cct_over_arrival: no online run reported per-coflow times." in text
    assert "- varys_bins: no other algorithm has per-coflow times" in text
    assert not (tmp_path / "figures" / "ratio_vs_size.png").exists()
    assert page.read_text().count('<img src="data:image/png;base64,') == 2


def test_no_tasks_draws_nothing(tmp_path):
    """Tests that an empty comparison writes reports that say nothing was drawn."""
    out = figures([], tmp_path)
    assert out.written == [] and set(out.skipped) == set(FIGURE_NAMES)


def test_normalized_cct_is_a_ratio_of_averages():
    """Tests the Varys normalization on two instances: SN sums 3 + 3 over 1 + 3 give 1.5
    (the mean of the per-instance ratios would be 2); LW 4 / 2 = 2; all (3+3+4) / (1+3+2)."""

    def run(inst, name, cct, bins):
        n = len(cct)
        return TaskRecord(inst, None, name, "online", "exact", "feasible", float(sum(cct)),
                          None, 0.1, release=[0.0] * n, completion=cct, bin=bins)  # fmt: skip

    recs = [
        run("a", "varys", [1.0], ("SN",)),
        run("a", "fair", [3.0], ("SN",)),
        run("b", "varys", [3.0, 2.0], ("SN", "LW")),
        run("b", "fair", [3.0, 4.0], ("SN", "LW")),
    ]
    cmp = normalized_cct_by_bin(attach_reference(recs, "opt"), "varys")
    assert cmp.coflows == {"SN": 2, "LN": 0, "SW": 0, "LW": 1, "all": 3}
    assert list(cmp.normalized) == ["fair"]
    assert_allclose(cmp.normalized["fair"]["SN"], 1.5)
    assert_allclose(cmp.normalized["fair"]["LW"], 2.0)
    assert_allclose(cmp.normalized["fair"]["all"], 10 / 6)
    assert "LN" not in cmp.normalized["fair"]
    with pytest.raises(ValueError, match="baseline 'fifo' has no per-coflow times"):
        normalized_cct_by_bin(attach_reference(recs, "opt"), "fifo")


def test_baseline(synthetic, tmp_path):
    """Tests that the default baseline is varys and that an unknown one is refused."""
    rated = attach_reference(synthetic, "opt")
    assert default_baseline(rated) == "varys"
    with pytest.raises(ValueError, match="baseline 'varsy' is not an algorithm that ran"):
        figures(rated, tmp_path, baseline="varsy")


def test_figure_write_is_atomic(small_synthetic, tmp_path, monkeypatch):
    """Tests that a figure write failing at the last step leaves no partial file."""
    import importlib

    plots = importlib.import_module("coflowlab.reports.plots")

    def fail(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(plots.os, "replace", fail)
    with pytest.raises(OSError, match="disk full"):
        figures(attach_reference(small_synthetic, "opt"), tmp_path)
    assert os.listdir(tmp_path) == []


def test_import_does_not_load_matplotlib():
    """Tests that importing the reports leaves matplotlib unloaded until a figure is drawn."""
    code = "import sys, coflowlab.reports; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
