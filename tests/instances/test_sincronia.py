"""Tests of the Sincronia flow-format reader and writer (``coflowlab.instances.sincronia``)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_equal

from coflowlab import Coflow, Instance, InvalidInstanceError, TraceFormatError, Units
from coflowlab.instances import sincronia
from coflowlab.instances.benchmark import read_benchmark
from coflowlab.instances.sincronia import (
    SINCRONIA_CAPACITY,
    format_sincronia,
    parse_sincronia,
    read_sincronia,
    write_sincronia,
)

DATA = Path(__file__).resolve().parents[1] / "data"


def test_read_small_file_keeps_flows_in_file_order():
    """Tests that flows are read in file order with the file's ids, arrivals, ports, weight 1,
    MB and ms, and Sincronia's 1 MB per time unit; repeated (src, dst) pairs stay apart."""
    inst = read_sincronia(DATA / "sincronia_small.txt")
    assert_equal(inst.num_ports, 5)
    assert_equal(inst.num_coflows, 4)
    assert_equal(inst.coflow_label, ("0", "1", "2", "3"))
    assert_equal(inst.coflow_release, [8, 10, 22, 30])
    assert_equal(inst.coflow_weight, np.ones(4))
    assert_equal(inst.units, Units(size="MB", time="ms"))
    assert_equal(SINCRONIA_CAPACITY, 1.0)
    assert_equal(inst.fabric.ingress_capacity, np.ones(5))
    assert_equal(inst.flow_coflow, [0, 0, 0, 0, 1, 2, 2, 2, 3, 3])
    assert_equal(inst.flow_src, [0, 1, 3, 4, 1, 3, 4, 3, 2, 2])
    assert_equal(inst.flow_dst, [1, 1, 1, 1, 4, 0, 0, 2, 3, 3])
    assert_equal(inst.flow_size, [1, 2, 1, 1, 7, 21, 21, 5, 4, 6])
    # coflow 0: 5 MB into port 1; coflow 3: 10 MB out of port 2
    assert_allclose(inst.bottleneck, [5.0, 7.0, 42.0, 10.0])


def test_capacity_parameter_sets_every_port():
    """Tests that ``capacity`` sets every port, e.g. CoflowSim's 0.125 MB/ms."""
    inst = read_sincronia(DATA / "sincronia_small.txt", capacity=0.125)
    assert_equal(inst.fabric.egress_capacity, np.full(5, 0.125))
    assert_allclose(inst.bottleneck, [40.0, 56.0, 336.0, 80.0])
    with pytest.raises(ValueError, match="capacity must be positive"):
        read_sincronia(DATA / "sincronia_small.txt", capacity=0.0)


def test_round_trip_is_byte_exact(tmp_path):
    """Tests that writing what was read reproduces the file byte for byte."""
    out = tmp_path / "s.txt"
    write_sincronia(read_sincronia(DATA / "sincronia_small.txt"), out)
    assert_equal(out.read_bytes(), (DATA / "sincronia_small.txt").read_bytes())


def test_benchmark_converts_to_sincronia_and_back(tmp_path):
    """Tests that the CoflowSim micro-trace converts to Sincronia's format (flow m -> r of
    MB_r / M) and reads back to the same instance at the same capacity."""
    inst = read_benchmark(DATA / "coflowsim_micro.txt")
    out = tmp_path / "micro_sinc.txt"
    write_sincronia(inst, out)
    assert_equal(
        out.read_text(),
        "4 3\n1 0 1 1 1 0 1 1\n2 5000 4 2 2 0 3 2 0 1 1 2 3 2 2 1 1\n3 10240 1 1 1 3 1 10\n",
    )
    assert_equal(read_sincronia(out, capacity=0.125), inst)


def test_declared_counts_can_be_ignored():
    """Tests that ``check_counts=False`` reads a file whose nsrc/ndst are not the distinct
    counts, and that writing it back gives the true counts."""
    path = DATA / "sincronia_bad_counts.txt"
    inst = read_sincronia(path, check_counts=False)
    assert_equal(inst.flow_dst[inst.coflow_flows(0)], [1, 2])
    assert_equal(format_sincronia(inst).splitlines()[1], "0 8 2 2 2 0 1 1 1 2 1")


def test_unusual_whitespace_reads_through_the_slow_path():
    """Tests that tokens split by non-ASCII whitespace still parse (the checked slow path)."""
    inst = parse_sincronia("5 1\n0 8 2 2 1 0\u00a01 1 3 1 2\n")
    assert_equal(inst.flow_src, [0, 3])
    assert_equal(inst.flow_size, [1.0, 2.0])


BROKEN = [
    ("sincronia_bad_empty.txt", 1, "header"),
    ("sincronia_bad_header.txt", 1, "header"),
    ("sincronia_bad_count.txt", 1, "num_coflows"),
    ("sincronia_bad_id.txt", 3, "coflow_id"),
    ("sincronia_bad_arrival.txt", 2, "arrival_ms"),
    ("sincronia_bad_num_flows.txt", 2, "num_flows"),
    ("sincronia_bad_num_sources.txt", 2, "num_sources"),
    ("sincronia_bad_tokens.txt", 3, "num_flows"),
    ("sincronia_bad_port.txt", 3, "dst_1"),
    ("sincronia_bad_negative_port.txt", 2, "src_2"),
    ("sincronia_bad_port_token.txt", 2, "src_1"),
    ("sincronia_bad_size_float.txt", 2, "size_1"),
    ("sincronia_bad_size_zero.txt", 2, "size_1"),
    ("sincronia_bad_size_negative.txt", 3, "size_2"),
    ("sincronia_bad_size_huge.txt", 2, "size_1"),
    ("sincronia_bad_counts.txt", 2, "num_destinations"),
    ("sincronia_bad_duplicate_id.txt", 3, "coflow_id"),
    ("sincronia_bad_blank_line.txt", 3, "coflow_id"),
]


@pytest.mark.parametrize(("name", "line", "field"), BROKEN)
def test_raises_invalid_file(name, line, field):
    """Tests that a broken file raises TraceFormatError naming its path, line and field."""
    path = DATA / name
    with pytest.raises(TraceFormatError) as info:
        read_sincronia(path)
    err = info.value
    assert_equal((err.path, err.line, err.field), (str(path), line, field))
    message = str(err)
    assert str(path) in message
    assert f"line {line}" in message
    assert f"field {field}" in message


def test_every_broken_file_is_tested():
    """Tests that each ``sincronia_bad_*`` file in tests/data is in the parametrized list."""
    on_disk = {p.name for p in DATA.glob("sincronia_bad_*")}
    assert_equal(on_disk, {name for name, _, _ in BROKEN})


def test_invalid_instance_becomes_trace_format_error(monkeypatch):
    """Tests that an InvalidInstanceError from building the instance is re-raised as a
    TraceFormatError naming the file and keeping the original message."""

    def reject(*args, **kwargs):
        raise InvalidInstanceError("coflow 1: label '1' repeats the label of coflow 0")

    monkeypatch.setattr(sincronia, "Instance", reject)
    path = DATA / "sincronia_small.txt"
    with pytest.raises(TraceFormatError) as info:
        read_sincronia(path)
    assert_equal(info.value.path, str(path))
    assert "repeats the label of coflow 0" in str(info.value)


@pytest.mark.parametrize(
    ("size", "match"),
    [(1.5, "size 1.5 is not a whole number"), (2.0**31, "is not a whole number of MB up to")],
)
def test_write_rejects_sizes_sincronia_cannot_read(size, match, tmp_path):
    """Tests that fractional or int32-overflowing sizes cannot be written, naming the flow."""
    inst = Instance.from_coflows([Coflow([(0, 1, 1000.0)]), Coflow([(1, 0, size)])], 2)
    with pytest.raises(InvalidInstanceError, match=match) as info:
        write_sincronia(inst, tmp_path / "out.txt")
    assert "coflow 1, flow 1" in str(info.value)
    assert_equal(list(tmp_path.iterdir()), [])


@pytest.mark.parametrize(
    ("changes", "match"),
    [
        ({"coflow_weight": [1.0, 2.0]}, "weight is 2.0"),
        ({"coflow_release": [0.0, 0.5]}, "release 0.5 is not a whole number"),
        ({"coflow_label": ["x", "1"]}, "must be a non-negative integer"),
        ({"units": Units(size="B", time="s")}, "uses B and s"),
    ],
)
def test_write_rejects_what_the_format_cannot_hold(changes, match):
    """Tests that weights, fractional releases, non-integer ids and foreign units raise."""
    inst = Instance.from_coflows([Coflow([(0, 1, 1.0)]), Coflow([(1, 0, 2.0)])], 2)
    with pytest.raises(InvalidInstanceError, match=match):
        format_sincronia(inst.replace(**changes))


def test_failed_write_keeps_the_old_file(tmp_path, monkeypatch):
    """Tests that a write failing at the final rename leaves the old file and no temporary."""
    out = tmp_path / "s.txt"
    out.write_text("old\n")

    def fail(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError, match="disk full"):
        write_sincronia(read_sincronia(DATA / "sincronia_small.txt"), out)
    assert_equal(out.read_text(), "old\n")
    assert_equal([p.name for p in tmp_path.iterdir()], ["s.txt"])


@pytest.mark.trace
def test_fb_trace_converts_to_sincronia_and_back(fb_trace, tmp_path):
    """Tests that the Facebook trace's whole-MB flows convert to Sincronia's format and read
    back to the same instance (at CoflowSim's capacity)."""
    inst = read_benchmark(fb_trace)
    out = tmp_path / "fb_sinc.txt"
    write_sincronia(inst, out)
    back = read_sincronia(out, capacity=0.125)
    assert_equal(back.num_flows, 706_397)
    assert_equal(back, inst)


@pytest.mark.parametrize(
    ("text", "line", "field", "message"),
    [
        ("4 1\n1 10000000000000 1 1 1 0 1 4\n", 2, "arrival_ms", "beyond the supported maximum"),
        # 2e9 MB at 1 MB/ms next to 1 MB: a ratio of 2e9 > 1e7, the short flow named
        ("4 2\n1 0 1 1 1 0 1 2000000000\n2 0 2 1 2 1 2 5 1 3 1\n", 3, "size_2", "a ratio of 2e"),
    ],
)
def test_values_outside_the_supported_range_name_line_and_field(text, line, field, message):
    """Tests that arrivals and size ratios outside coflowlab.constants' range are refused
    naming the line and field."""
    with pytest.raises(TraceFormatError, match=message) as info:
        parse_sincronia(text)
    assert_equal((info.value.line, info.value.field), (line, field))
