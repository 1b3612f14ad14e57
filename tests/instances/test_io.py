"""Tests of format detection, dispatch and JSON files (``coflowlab.instances.io``)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from numpy.testing import assert_equal

from coflowlab import Coflow, Fabric, Instance, TraceFormatError, Units
from coflowlab.instances.benchmark import read_benchmark
from coflowlab.instances.io import (
    FORMATS,
    detect_format,
    read_instance,
    read_json,
    write_instance,
    write_json,
)
from coflowlab.instances.sincronia import read_sincronia

DATA = Path(__file__).resolve().parents[1] / "data"


def rich_instance() -> Instance:
    """Two coflows using everything JSON must keep: capacities, weights, deadlines, a
    per-flow release, a dependency, labels and units."""
    return Instance.from_coflows(
        [
            Coflow([(0, 1, 1.5), (1, 0, 2.0, 3.25)], release=1.0, weight=2.0, label="a"),
            Coflow([(2, 2, 0.1)], deadline=7.5, label="b"),
        ],
        Fabric(3, [1.0, 2.0, 0.5], 4.0),
        dependencies=[(1, 0)],
        units=Units(size="GB", time="s"),
    )


def test_formats_lists_the_three_formats():
    """Tests that FORMATS names exactly the supported formats."""
    assert_equal(FORMATS, ("json", "benchmark", "sincronia"))


def test_json_round_trip_is_exact(tmp_path):
    """Tests that write_json then read_json gives back an equal instance, every field."""
    inst = rich_instance()
    path = tmp_path / "inst.json"
    write_json(inst, path)
    assert_equal(read_json(path), inst)
    assert_equal(read_instance(path), inst)
    assert_equal(json.loads(path.read_text())["coflows"]["deadline"], [None, 7.5])


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("benchmark_small.txt", "benchmark"),
        ("benchmark_headerless.txt", "benchmark"),
        ("coflowsim_micro.txt", "benchmark"),
        ("sincronia_small.txt", "sincronia"),
        ("sincronia_bad_counts.txt", "sincronia"),
    ],
)
def test_detect_format_of_trace_files(name, expected):
    """Tests that the first coflow line's structure tells benchmark from Sincronia files."""
    assert_equal(detect_format(DATA / name), expected)


def test_detect_format_of_json_with_leading_space(tmp_path):
    """Tests that a file whose first non-space character is '{' is JSON."""
    path = tmp_path / "x.data"
    path.write_text("\n  " + rich_instance().to_json())
    assert_equal(detect_format(path), "json")
    assert_equal(read_instance(path), rich_instance())


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("4 0\n", 2),  # a header and no coflow line
        ("hello world, this is text\n", 1),
        ("4 1\n1 0 2 0 1 3:4.0\n", 2),  # benchmark-like, but M = 2 and one mapper
        ("4 1\n1 0 2 1 1 0 1 4\n", 2),  # Sincronia-like, but nflows = 2 and one triple
    ],
)
def test_detect_format_fails_when_neither_structure_matches(text, line, tmp_path):
    """Tests that an undetectable file raises TraceFormatError naming path, line and field."""
    path = tmp_path / "x.txt"
    path.write_text(text)
    with pytest.raises(TraceFormatError, match="cannot detect the format") as info:
        read_instance(path)
    assert_equal((info.value.path, info.value.line, info.value.field), (str(path), line, "format"))


def test_read_instance_dispatches_and_passes_keywords():
    """Tests that read_instance gives what the format's reader gives, keywords included."""
    small = DATA / "benchmark_small.txt"
    assert_equal(read_instance(small), read_benchmark(small))
    assert_equal(read_instance(small, capacity=2.0), read_benchmark(small, capacity=2.0))
    assert_equal(
        read_instance(DATA / "benchmark_headerless.txt", num_ports=12), read_benchmark(small)
    )
    sinc = DATA / "sincronia_small.txt"
    assert_equal(read_instance(sinc), read_sincronia(sinc))
    assert_equal(read_instance(sinc, format="sincronia"), read_sincronia(sinc))


def test_read_instance_with_wrong_or_unknown_format():
    """Tests that an explicit wrong format fails as a format error and an unknown one as
    ValueError."""
    with pytest.raises(TraceFormatError, match=r"benchmark_small\.txt, line 2, field num_sources"):
        read_instance(DATA / "benchmark_small.txt", format="sincronia")
    with pytest.raises(ValueError, match="unknown format 'csv'"):
        read_instance(DATA / "benchmark_small.txt", format="csv")


def test_json_reader_takes_no_keywords(tmp_path):
    """Tests that reader keywords given for a JSON file raise TypeError."""
    path = tmp_path / "i.json"
    write_json(rich_instance(), path)
    with pytest.raises(TypeError, match="capacity"):
        read_instance(path, capacity=1.0)


def test_invalid_json_names_path_and_line(tmp_path):
    """Tests that malformed JSON raises TraceFormatError with the path and the line."""
    path = tmp_path / "bad.json"
    path.write_text('{\n  "format": "coflowlab-instance",\n  oops\n}\n')
    with pytest.raises(TraceFormatError, match="not valid JSON") as info:
        read_json(path)
    assert_equal((info.value.path, info.value.line), (str(path), 3))
    assert f"{path}, line 3" in str(info.value)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d["flows"]["size"].__setitem__(0, -1.0), "coflow 0, flow 0: size is -1.0"),
        (lambda d: d.pop("flows"), "missing key 'flows'"),
        (lambda d: d.__setitem__("format", "other"), "'format' must be"),
        (lambda d: d["fabric"].__setitem__("num_ports", 0), "num_ports must be a positive"),
        (lambda d: d.__setitem__("units", 3), "not a valid coflowlab instance"),
    ],
)
def test_invalid_instance_document_names_path_and_reason(edit, message, tmp_path):
    """Tests that a JSON document that is not a valid instance raises TraceFormatError
    naming the path and carrying the original message."""
    doc = rich_instance().to_dict()
    edit(doc)
    path = tmp_path / "doc.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(TraceFormatError, match=message) as info:
        read_instance(path)
    assert_equal(info.value.path, str(path))
    assert str(path) in str(info.value)


def test_write_instance_picks_format_from_suffix_or_argument(tmp_path):
    """Tests that '.json' means JSON, other suffixes need format=, and unknown formats fail."""
    inst = read_benchmark(DATA / "coflowsim_micro.txt")
    write_instance(inst, tmp_path / "a.JSON")
    assert_equal(read_json(tmp_path / "a.JSON"), inst)
    with pytest.raises(ValueError, match="cannot infer the format"):
        write_instance(inst, tmp_path / "a.txt")
    with pytest.raises(ValueError, match="unknown format"):
        write_instance(inst, tmp_path / "a.txt", format="csv")
    assert not (tmp_path / "a.txt").exists()
    write_instance(inst, tmp_path / "b.txt", format="benchmark")
    assert_equal((tmp_path / "b.txt").read_bytes(), (DATA / "coflowsim_micro.txt").read_bytes())
    write_instance(inst, tmp_path / "c.txt", format="sincronia")
    assert_equal(read_instance(tmp_path / "c.txt", capacity=0.125), inst)
    write_instance(inst, tmp_path / "d.json", format="json")
    assert_equal(read_instance(tmp_path / "d.json"), inst)


def test_write_json_is_atomic(tmp_path, monkeypatch):
    """Tests that a JSON write failing at the rename keeps the old file and leaves no
    temporary, and that a successful write keeps an existing file's permissions."""
    path = tmp_path / "i.json"
    path.write_text("old")
    path.chmod(0o640)

    def fail(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError, match="disk full"):
        write_json(rich_instance(), path)
    assert_equal(path.read_text(), "old")
    assert_equal([p.name for p in tmp_path.iterdir()], ["i.json"])
    monkeypatch.undo()
    write_json(rich_instance(), path)
    assert_equal(read_json(path), rich_instance())
    assert_equal(path.stat().st_mode & 0o777, 0o640)
    assert_equal([p.name for p in tmp_path.iterdir()], ["i.json"])
