"""Tests of the gap table, the wins, and the CSV and JSON files.

Expected values are derived by hand from ``conftest.hand_records`` (reference ``opt``):
i1 measures against the proven 100, i2 against the exact bound 190, i3 has no reference.
"""

from __future__ import annotations

import dataclasses
import json
import os

import numpy as np
import pytest
from numpy.testing import assert_allclose

from coflowlab.constants import TOL
from coflowlab.reports import (
    RESULT_COLUMNS,
    SUMMARY_COLUMNS,
    TaskRecord,
    attach_reference,
    format_gap_table,
    gap_table,
    gap_table_json,
    read_results_csv,
    reference_counts,
    reference_description,
    wins,
    write_results_csv,
    write_summary_csv,
)


def rows_by_name(rated):
    return {row.algorithm: row for row in gap_table(rated)}


def test_gap_table_values_by_hand(hand):
    """Tests every column of the gap table against values derived by hand."""
    rows = rows_by_name(attach_reference(hand, "opt"))
    ex = rows["exact-fluid"]
    # Ratios 1 and 210/190: mean = median = 20/19; p95 = 1 + 0.95 * (2/19) = 1.1.
    assert (ex.runs, ex.failed, ex.rated, ex.wins, ex.proven_optimal) == (2, 0, 2, 0, 1)
    assert_allclose([ex.mean_ratio, ex.median_ratio], [20 / 19, 20 / 19], rtol=1e-15)
    assert_allclose(ex.p95_ratio, 1.1, rtol=1e-15)
    assert_allclose(ex.max_ratio, 21 / 19, rtol=1e-15)
    assert ex.mean_runtime == 32.0  # (4 + 60) / 2
    lp = rows["lp-ov"]
    assert (lp.runs, lp.failed, lp.rated, lp.wins, lp.proven_optimal) == (3, 0, 2, 0, 0)
    assert_allclose(lp.max_ratio, 18 / 19, rtol=1e-15)
    fifo = rows["fifo"]
    # One ratio (1.1 on i1): every statistic is 1.1; one failure (i2).
    assert (fifo.runs, fifo.failed, fifo.rated) == (3, 1, 1)
    assert_allclose(
        [fifo.mean_ratio, fifo.median_ratio, fifo.p95_ratio, fifo.max_ratio], [1.1] * 4
    )
    assert_allclose(fifo.mean_runtime, 0.875 / 3, rtol=1e-15)
    varys = rows["varys"]
    assert_allclose(varys.mean_ratio, (1.1 + 23 / 19) / 2, rtol=1e-15)
    assert varys.family == "online" and varys.time_model == "exact"
    assert [row.algorithm for row in gap_table(attach_reference(hand, "opt"))] == [
        "exact-fluid",
        "lp-ov",
        "sincronia",
        "fifo",
        "varys",
    ]


def test_median_and_p95_use_linear_percentiles():
    """Tests median and p95 on ratios 1.0, 1.2, 1.4, 2.0: median (1.2+1.4)/2 = 1.3; p95 at
    rank 0.95 * 3 = 2.85, i.e. 1.4 + 0.85 * 0.6 = 1.91."""
    recs = []
    for i, obj in enumerate([10.0, 12.0, 14.0, 20.0]):
        recs.append(
            TaskRecord(f"i{i}", None, "base", "online", "exact", "feasible", 10.0, None, 1)
        )
        recs.append(TaskRecord(f"i{i}", None, "alg", "online", "exact", "feasible", obj, None, 1))
    row = rows_by_name(attach_reference(recs, "base"))["alg"]
    assert_allclose(
        [row.mean_ratio, row.median_ratio, row.p95_ratio, row.max_ratio],
        [1.4, 1.3, 1.91, 2.0],
        rtol=1e-14,
    )


def test_wins_with_ties_shared(hand):
    """Tests wins under ``opt``: exact methods and bounds do not compete; on i1 varys and
    fifo tie at 110 and both win; sincronia wins i2 (220 < 230); varys wins i3 (55)."""
    assert wins(attach_reference(hand, "opt")) == {
        "exact-fluid": 0,
        "fifo": 1,
        "lp-ov": 0,
        "sincronia": 1,
        "varys": 2,
    }


def test_wins_under_bound_and_named_references(hand):
    """Tests that under ``bound`` the exact method competes (it wins i1 with 100 and i2 with
    210 < 220), and that a named reference does not compete against itself."""
    assert wins(attach_reference(hand, "bound"))["exact-fluid"] == 2
    assert wins(attach_reference(hand, "bound"))["varys"] == 1
    named = wins(attach_reference(hand, "fifo"))
    assert named["fifo"] == 0
    assert named["exact-fluid"] == 2 and named["varys"] == 1


def test_tie_tolerance():
    """Tests that objectives within a relative TOL tie and ones further apart do not."""

    def run(name, obj):
        return TaskRecord("a", None, name, "online", "exact", "feasible", obj, None, 0.1)

    close = [run("p", 110.0), run("q", 110.0 * (1 + TOL / 10)), run("r", 110.0 * (1 + 1e-6))]
    assert wins(attach_reference(close, "opt")) == {"p": 1, "q": 1, "r": 0}


def test_rejected_schedule_does_not_win():
    """Tests that a schedule the verifier rejected cannot win, however cheap."""
    recs = [
        TaskRecord("a", None, "bad", "online", "exact", "feasible", 1.0, None, 0.1, False),
        TaskRecord("a", None, "good", "online", "exact", "feasible", 5.0, None, 0.1, True),
    ]
    assert wins(attach_reference(recs, "opt")) == {"bad": 0, "good": 1}


def test_reference_counts_and_description(hand):
    """Tests that the reference kinds are counted per instance and described."""
    rated = attach_reference(hand, "opt")
    assert reference_counts(rated) == {"opt": 1, "bound (opt not proven)": 1, "missing": 1}
    text = reference_description(rated)
    assert "proven optimum of an exact method on 1 instance;" in text
    assert "did not prove optimality on 1 instance;" in text
    assert "no reference on 1 instance" in text


def test_format_gap_table_is_aligned(hand):
    """Tests that the text table has one header and one line per algorithm, with every
    column starting at the same offset, and a dash for empty statistics."""
    recs = [*hand, TaskRecord("i3", None, "x", "online", "exact", "error", None, None, 1.0)]
    lines = format_gap_table(gap_table(attach_reference(recs, "opt"))).splitlines()
    assert len(lines) == 1 + 6
    assert lines[0].split()[:3] == ["algorithm", "family", "model"]
    col = lines[0].index("mean")
    for line in lines[1:]:
        assert line[col - 2 : col] == "  "  # the gap before the mean column is blank
    x_line = next(line for line in lines if line.startswith("x "))
    assert x_line.split()[6:10] == ["-", "-", "-", "-"]
    ex_line = next(line for line in lines if line.startswith("exact-fluid"))
    assert ex_line.split()[6:10] == ["1.0526", "1.0526", "1.1000", "1.1053"]


def test_results_csv_round_trip(hand, tmp_path):
    """Tests that results.csv reads back field for field (floats exactly), messages with
    commas, quotes, pipes and line breaks included, and that failures are rows too."""
    hand[9] = dataclasses.replace(hand[9], message='line 1, "quoted"\nline 2 | <b>')
    rated = attach_reference(hand, "opt")
    path = write_results_csv(rated, tmp_path / "results.csv")
    assert path.read_text().splitlines()[0] == ",".join(RESULT_COLUMNS)
    back = read_results_csv(path)
    assert len(back) == len(rated) == 14
    for a, b in zip(rated, back, strict=True):
        for f in ("reference", "reference_value", "reference_kind", "reference_source"):
            assert getattr(a, f) == getattr(b, f)
        assert (a.ratio, a.note) == (b.ratio, b.note)
        for f in dataclasses.fields(TaskRecord):
            if f.name not in ("release", "completion", "weight", "bin"):
                assert getattr(a.record, f.name) == getattr(b.record, f.name), f.name
    failed = [b for b in back if b.record.status == "error"]
    assert [b.record.message for b in failed] == ['line 1, "quoted"\nline 2 | <b>']


def test_results_csv_is_byte_identical_for_shuffled_input(hand, tmp_path):
    """Tests that the file does not depend on the order in which tasks finished."""
    shuffled = [hand[i] for i in np.random.default_rng(3).permutation(len(hand))]
    a = write_results_csv(attach_reference(hand, "opt"), tmp_path / "a.csv").read_bytes()
    b = write_results_csv(attach_reference(shuffled, "opt"), tmp_path / "b.csv").read_bytes()
    assert a == b


def test_read_results_csv_names_line_and_column(hand, tmp_path):
    """Tests that an unreadable cell is reported with the file, line and column."""
    path = write_results_csv(attach_reference(hand, "opt"), tmp_path / "results.csv")
    lines = path.read_text().splitlines()
    lines[1] = lines[1].replace(",true,", ",maybe,", 1)  # i1 exact-fluid: verified
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError, match=r"results\.csv, line 2, column verified: .*'maybe'"):
        read_results_csv(path)
    path.write_text("instance,seed\n")
    with pytest.raises(ValueError, match="missing column"):
        read_results_csv(path)


def test_summary_csv(hand, tmp_path):
    """Tests that summary.csv has the reference and every SummaryRow field, full precision."""
    rows = gap_table(attach_reference(hand, "opt"))
    path = write_summary_csv(rows, tmp_path / "summary.csv", "opt")
    lines = path.read_text().splitlines()
    assert lines[0] == ",".join(SUMMARY_COLUMNS)
    assert lines[1].startswith("opt,exact-fluid,exact,fluid,2,0,2,")
    assert repr(21 / 19) in lines[1]
    assert len(lines) == 1 + len(rows)


def test_gap_table_json_parses(hand):
    """Tests that the JSON is one object with the reference, counts and rows; empty
    statistics are null."""
    recs = [*hand, TaskRecord("i3", None, "x", "online", "exact", "error", None, None, 1.0)]
    obj = json.loads(gap_table_json(attach_reference(recs, "opt")))
    assert obj["reference"] == "opt"
    assert obj["reference_counts"] == {"opt": 1, "bound (opt not proven)": 1, "missing": 1}
    assert (obj["instances"], obj["tasks"], obj["failed"]) == (3, 15, 2)
    rows = {row["algorithm"]: row for row in obj["rows"]}
    assert rows["x"]["mean_ratio"] is None
    assert rows["varys"]["wins"] == 2
    assert_allclose(rows["exact-fluid"]["p95_ratio"], 1.1, rtol=1e-15)


def test_csv_write_is_atomic(hand, tmp_path, monkeypatch):
    """Tests that a write failing at the last step leaves the old file whole and no
    temporary file behind."""
    import coflowlab.instances.io as io_module

    path = tmp_path / "results.csv"
    path.write_text("old\n")

    def fail(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(io_module.os, "replace", fail)
    with pytest.raises(OSError, match="disk full"):
        write_results_csv(attach_reference(hand, "opt"), path)
    assert path.read_text() == "old\n"
    assert os.listdir(tmp_path) == ["results.csv"]
