"""Tests of the coflow-benchmark reader and writer (``coflowlab.instances.benchmark``)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_equal

from coflowlab import Coflow, Fabric, Instance, InvalidInstanceError, TraceFormatError, Units
from coflowlab.instances import benchmark
from coflowlab.instances.benchmark import (
    COFLOWSIM_CAPACITY,
    FB_TRACE_NAME,
    find_fb_trace,
    format_benchmark,
    parse_benchmark,
    read_benchmark,
    write_benchmark,
)

DATA = Path(__file__).resolve().parents[1] / "data"


def test_read_small_file_expands_each_coflow_mapper_major():
    """Tests that each mapper-reducer pair becomes one flow of MB_r / M, in mapper-major
    order, with the file's ids, arrivals, ports and units."""
    inst = read_benchmark(DATA / "benchmark_small.txt")
    assert_equal(inst.num_ports, 12)
    assert_equal(inst.num_coflows, 5)
    assert_equal(inst.num_flows, 1 + 4 + 6 + 6 + 11)
    assert_equal(inst.coflow_label, ("1", "2", "3", "4", "5"))
    assert_equal(inst.coflow_release, [0, 5000, 10240, 20000, 20480])
    assert_equal(inst.coflow_weight, np.ones(5))
    assert_equal(inst.units, Units(size="MB", time="ms"))
    assert_equal(inst.fabric.ingress_capacity, np.full(12, 0.125))
    assert_equal(inst.fabric.egress_capacity, np.full(12, 0.125))

    # coflow "2": mappers 0 2, reducers 3:4.0 1:2.0
    flows = inst.coflow_flows(1)
    assert_equal(inst.flow_src[flows], [0, 0, 2, 2])
    assert_equal(inst.flow_dst[flows], [3, 1, 3, 1])
    assert_equal(inst.flow_size[flows], [2.0, 1.0, 2.0, 1.0])
    # coflow "4": mappers 3 0 (file order, not sorted), reducers 4:6.0 3:8.0 2:1.5
    flows = inst.coflow_flows(3)
    assert_equal(inst.flow_src[flows], [3, 3, 3, 0, 0, 0])
    assert_equal(inst.flow_dst[flows], [4, 3, 2, 4, 3, 2])
    assert_equal(inst.flow_size[flows], [3.0, 4.0, 0.75, 3.0, 4.0, 0.75])
    # coflow "3": 10 MB over 3 mappers is not whole; the size is the float division
    assert_equal(inst.flow_size[inst.coflow_flows(2)][0], 10.0 / 3)
    assert_equal(inst.flow_size[inst.coflow_flows(4)], np.full(11, 15.0 / 11))


def test_micro_trace_bottlenecks_are_coflowsim_times():
    """Tests that at the default 0.125 MB/ms (CoflowSim's 1 MiB per 8 ms) the bottlenecks of
    the micro-trace of docs/coflowsim-model.md are CoflowSim's isolated times in ms."""
    inst = read_benchmark(DATA / "coflowsim_micro.txt")
    assert_equal(COFLOWSIM_CAPACITY, 0.125)
    assert_equal(inst.coflow_release, [0, 5000, 10240])
    # 1 MB alone: 8 ms; 4 MB into port 3: 32 ms; 10 MB from port 3: 80 ms
    assert_allclose(inst.bottleneck, [8.0, 32.0, 80.0])


def test_capacity_parameter_sets_every_port():
    """Tests that ``capacity`` sets both sides of every port."""
    inst = read_benchmark(DATA / "coflowsim_micro.txt", capacity=1.0)
    assert_equal(inst.fabric.ingress_capacity, np.ones(4))
    assert_equal(inst.fabric.egress_capacity, np.ones(4))
    assert_allclose(inst.bottleneck, [1.0, 4.0, 10.0])


@pytest.mark.parametrize("capacity", [0, -1.0, float("nan"), float("inf")])
def test_invalid_capacity_is_an_argument_error(capacity):
    """Tests that a bad ``capacity`` raises ValueError, not a file error."""
    with pytest.raises(ValueError, match="capacity must be positive") as info:
        read_benchmark(DATA / "coflowsim_micro.txt", capacity=capacity)
    assert not isinstance(info.value, TraceFormatError)


@pytest.mark.parametrize("name", ["benchmark_small.txt", "coflowsim_micro.txt"])
def test_round_trip_is_byte_exact(name, tmp_path):
    """Tests that writing what was read reproduces the file byte for byte."""
    original = DATA / name
    out = tmp_path / name
    write_benchmark(read_benchmark(original), out)
    assert_equal(out.read_bytes(), original.read_bytes())


def test_writer_prefers_whole_megabytes():
    """Tests that a reducer read as 15.0 MB over 11 mappers is written back as 15.0 although
    (15 / 11) * 11 is not 15.0 in floating point."""
    assert (15.0 / 11) * 11 != 15.0  # else this test would check nothing
    inst = parse_benchmark("12 1\n5 0 11 0 1 2 3 4 5 6 7 8 9 10 1 11:15.0\n")
    assert_equal(format_benchmark(inst).splitlines()[1], "5 0 11 0 1 2 3 4 5 6 7 8 9 10 1 11:15.0")


def test_writer_orders_ports_by_first_appearance():
    """Tests that mappers and reducers are written in order of first appearance among the
    coflow's flows, and arrivals as integers."""
    inst = Instance.from_coflows(
        [Coflow([(2, 1, 1.0), (2, 0, 3.0), (0, 1, 1.0), (0, 0, 3.0)], release=7.0, label="4")], 3
    )
    assert_equal(format_benchmark(inst), "3 1\n4 7 2 2 0 2 1:2.0 0:6.0\n")


def test_windows_line_ends_and_trailing_blank_lines_read_the_same():
    """Tests that CRLF line ends and trailing blank lines do not change what is read."""
    text = (DATA / "coflowsim_micro.txt").read_text()
    expected = parse_benchmark(text)
    assert_equal(parse_benchmark(text.replace("\n", "\r\n")), expected)
    assert_equal(parse_benchmark(text + "\n  \n"), expected)


def test_headerless_file_needs_num_ports():
    """Tests that a file without the header reads only with ``num_ports=``, and then equals
    the file with the header; the error says so in command-line words (``--ports N``)."""
    headerless = DATA / "benchmark_headerless.txt"
    with pytest.raises(TraceFormatError, match=r"pass --ports N$") as info:
        read_benchmark(headerless)
    assert_equal((info.value.line, info.value.field), (1, "header"))
    assert_equal(
        read_benchmark(headerless, num_ports=12), read_benchmark(DATA / "benchmark_small.txt")
    )


def test_num_ports_must_match_a_present_header():
    """Tests that ``num_ports=`` on a file with a header must agree with it."""
    small = DATA / "benchmark_small.txt"
    assert_equal(read_benchmark(small, num_ports=12).num_ports, 12)
    with pytest.raises(TraceFormatError, match="declares 12 ports, but --ports 13") as info:
        read_benchmark(small, num_ports=13)
    assert_equal((info.value.line, info.value.field), (1, "num_ports"))
    for bad in (0, True, 1.5, 2**20 + 1):
        with pytest.raises(ValueError, match=r"number of ports \(--ports\) must be an integer"):
            read_benchmark(small, num_ports=bad)


BROKEN = [
    ("benchmark_bad_empty.txt", 1, "header"),
    ("benchmark_bad_header.txt", 1, "num_coflows"),
    ("benchmark_bad_header_tokens.txt", 1, "header"),
    ("benchmark_bad_missing_header.txt", 1, "header"),
    ("benchmark_bad_count.txt", 1, "num_coflows"),
    ("benchmark_bad_too_few_tokens.txt", 3, "num_reducers"),
    ("benchmark_bad_too_many_tokens.txt", 3, "num_reducers"),
    ("benchmark_bad_truncated_mappers.txt", 3, "num_mappers"),
    ("benchmark_bad_num_mappers.txt", 3, "num_mappers"),
    ("benchmark_bad_num_reducers.txt", 3, "num_reducers"),
    ("benchmark_bad_id.txt", 3, "coflow_id"),
    ("benchmark_bad_arrival.txt", 3, "arrival_ms"),
    ("benchmark_bad_negative_arrival.txt", 2, "arrival_ms"),
    ("benchmark_bad_port.txt", 2, "map_loc_1"),
    ("benchmark_bad_negative_port.txt", 3, "red_loc_2"),
    ("benchmark_bad_port_token.txt", 3, "map_loc_2"),
    ("benchmark_bad_repeated_mapper.txt", 3, "map_loc_2"),
    ("benchmark_bad_repeated_reducer.txt", 3, "red_loc_2"),
    ("benchmark_bad_reducer_token.txt", 2, "red_loc_1"),
    ("benchmark_bad_mb_token.txt", 3, "MB_2"),
    ("benchmark_bad_mb_nan.txt", 2, "MB_1"),
    ("benchmark_bad_mb_inf.txt", 3, "MB_1"),
    ("benchmark_bad_mb_negative.txt", 2, "MB_1"),
    ("benchmark_bad_mb_zero.txt", 3, "MB_2"),
    ("benchmark_bad_duplicate_id.txt", 4, "coflow_id"),
    ("benchmark_bad_blank_line.txt", 3, "coflow_id"),
    ("benchmark_bad_not_utf8.txt", 2, "text"),
]


@pytest.mark.parametrize(("name", "line", "field"), BROKEN)
def test_raises_invalid_file(name, line, field):
    """Tests that a broken file raises TraceFormatError naming its path, line and field."""
    path = DATA / name
    with pytest.raises(TraceFormatError) as info:
        read_benchmark(path)
    err = info.value
    assert_equal((err.path, err.line, err.field), (str(path), line, field))
    message = str(err)
    assert str(path) in message
    assert f"line {line}" in message
    assert f"field {field}" in message


def test_every_broken_file_is_tested():
    """Tests that each ``benchmark_bad_*`` file in tests/data is in the parametrized list."""
    on_disk = {p.name for p in DATA.glob("benchmark_bad_*")}
    assert_equal(on_disk, {name for name, _, _ in BROKEN})


def test_text_errors_name_text_source():
    """Tests that parsing in-memory text names ``<text>`` in errors."""
    with pytest.raises(TraceFormatError, match=r"^<text>, line 2, field MB_1: MB is NaN"):
        parse_benchmark("4 1\n1 0 1 0 1 1:nan\n")


def test_invalid_instance_becomes_trace_format_error(monkeypatch):
    """Tests that an InvalidInstanceError from building the instance is re-raised as a
    TraceFormatError naming the file and keeping the original message."""

    def reject(*args, **kwargs):
        raise InvalidInstanceError("coflow 0, flow 0: size is NaN")

    monkeypatch.setattr(benchmark, "Instance", reject)
    path = DATA / "coflowsim_micro.txt"
    with pytest.raises(TraceFormatError) as info:
        read_benchmark(path)
    assert_equal(info.value.path, str(path))
    assert "coflow 0, flow 0: size is NaN" in str(info.value)


def shuffle_instance(**changes) -> Instance:
    """A 2x2 shuffle with 1 MB into port 0 and 2 MB into port 1 per mapper."""
    inst = Instance.from_coflows(
        [Coflow([(0, 0, 1.0), (0, 1, 2.0), (1, 0, 1.0), (1, 1, 2.0)], label="1")], 2
    )
    return inst.replace(**changes) if changes else inst


@pytest.mark.parametrize(
    ("flows", "match"),
    [
        ([(0, 0, 1.0), (0, 1, 1.0), (1, 0, 1.0)], "not a full 2 x 2 shuffle"),
        ([(0, 0, 1.0), (0, 0, 1.0)], "not a full 1 x 1 shuffle"),
        ([(0, 0, 1.0), (1, 0, 2.0)], "into reducer port 0 have different sizes"),
    ],
)
def test_write_rejects_coflows_that_are_not_uniform_shuffles(flows, match, tmp_path):
    """Tests that a coflow that is not a full shuffle with equal flows per reducer cannot be
    written, and that the error names the coflow."""
    inst = Instance.from_coflows([Coflow([(0, 0, 1.0)], label="1"), Coflow(flows, label="2")], 2)
    with pytest.raises(InvalidInstanceError, match=match) as info:
        write_benchmark(inst, tmp_path / "out.txt")
    assert "coflow 1 (label '2')" in str(info.value)
    assert_equal(list(tmp_path.iterdir()), [])


@pytest.mark.parametrize(
    ("changes", "match"),
    [
        ({"coflow_weight": [2.0]}, "weight is 2.0"),
        ({"coflow_deadline": [5.0]}, "cannot hold a deadline"),
        ({"coflow_release": [1.5]}, "release 1.5 is not a whole number"),
        ({"coflow_label": ["a"]}, "must be a non-negative integer"),
        ({"flow_release": [0.0, 1.0, 0.0, 0.0]}, "no per-flow releases"),
        ({"units": Units(size="GB", time="ms")}, "uses GB and ms"),
        ({"fabric": Fabric(2, [1.0, 2.0], 1.0)}, "ingress capacities differ"),
    ],
)
def test_write_rejects_what_the_format_cannot_hold(changes, match, tmp_path):
    """Tests that data the format cannot store raises InvalidInstanceError, not silently
    dropped, and that nothing is written."""
    with pytest.raises(InvalidInstanceError, match=match):
        write_benchmark(shuffle_instance(**changes), tmp_path / "out.txt")
    assert_equal(list(tmp_path.iterdir()), [])


def test_write_rejects_dependencies_and_clashing_ids():
    """Tests that dependencies and ids equal as integers ("1" and "01") are rejected."""
    two = Instance.from_coflows(
        [Coflow([(0, 0, 1.0)], label="1"), Coflow([(1, 1, 1.0)], label="2")], 2
    )
    with pytest.raises(InvalidInstanceError, match="dependencies"):
        format_benchmark(two.replace(dependencies=[(0, 1)]))
    with pytest.raises(InvalidInstanceError, match="repeats that of coflow 0"):
        format_benchmark(two.replace(coflow_label=["1", "01"]))


def test_write_replaces_atomically_and_keeps_old_file_on_error(tmp_path, monkeypatch):
    """Tests that a failed write leaves an existing file untouched and no temporary file, and
    a successful write replaces it completely."""
    out = tmp_path / "trace.txt"
    out.write_text("old\n")
    with pytest.raises(InvalidInstanceError):
        write_benchmark(shuffle_instance(coflow_weight=[3.0]), out)
    assert_equal(out.read_text(), "old\n")

    def fail(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError, match="disk full"):
        write_benchmark(shuffle_instance(), out)
    assert_equal(out.read_text(), "old\n")
    assert_equal(sorted(p.name for p in tmp_path.iterdir()), ["trace.txt"])

    monkeypatch.undo()
    write_benchmark(shuffle_instance(), out)
    assert_equal(out.read_text(), "2 1\n1 0 2 0 1 2 0:2.0 1:4.0\n")
    assert_equal(sorted(p.name for p in tmp_path.iterdir()), ["trace.txt"])


def test_find_fb_trace_search_order(tmp_path, monkeypatch):
    """Tests that find_fb_trace looks in $COFLOWLAB_DATA, then beside the repository, then
    ./shared/data and ../shared/data of the working directory, and returns None otherwise."""
    root = tmp_path / "work"
    repo, cwd, env_dir = root / "repo", root / "cwd", root / "env"
    for d in (repo, cwd, env_dir):
        d.mkdir(parents=True)
    elsewhere = tmp_path / "elsewhere" / "repo"  # a repository with no shared/ beside it
    monkeypatch.setattr(benchmark, "_REPO_ROOT", elsewhere)
    monkeypatch.chdir(cwd)
    monkeypatch.setenv("COFLOWLAB_DATA", str(env_dir))
    assert find_fb_trace() is None

    def place(folder: Path) -> Path:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / FB_TRACE_NAME).write_text("150 0\n")
        return folder / FB_TRACE_NAME

    beside = place(root / "shared" / "data")  # ../shared/data of cwd; beside repo/ too
    assert_equal(find_fb_trace(), beside)
    local = place(cwd / "shared" / "data")
    assert_equal(find_fb_trace(), local)  # ./shared/data before ../shared/data
    monkeypatch.setattr(benchmark, "_REPO_ROOT", repo)
    assert_equal(find_fb_trace(), beside)  # beside the repository before the working directory
    env = place(env_dir)
    assert_equal(find_fb_trace(), env)  # $COFLOWLAB_DATA first
    monkeypatch.delenv("COFLOWLAB_DATA")
    assert_equal(find_fb_trace(), beside)


@pytest.mark.trace
def test_fb_trace_statistics(fb_trace):
    """Tests that the Facebook trace reads to 526 coflows on 150 ports with 706,397 flows and
    35,533,534 MB in total (shared/data/README.md)."""
    inst = read_benchmark(fb_trace)
    assert_equal(inst.num_coflows, 526)
    assert_equal(inst.num_ports, 150)
    assert_equal(inst.num_flows, 706_397)
    assert_equal(inst.flow_size.sum(), 35_533_534.0)
    assert_equal(sorted(int(x) for x in inst.coflow_label), list(range(1, 527)))
    assert_equal(inst.coflow_release.max(), 3_629_235.0)
    assert_equal(inst.width.max(), 21_170)
    assert_equal(int((inst.width == 1).sum()), 123)
    assert np.all(inst.flow_size == np.round(inst.flow_size))  # MB_r divisible by M


@pytest.mark.trace
def test_fb_trace_round_trip_is_byte_exact(fb_trace, tmp_path):
    """Tests that writing the read Facebook trace reproduces the file byte for byte."""
    out = tmp_path / FB_TRACE_NAME
    write_benchmark(read_benchmark(fb_trace), out)
    assert_equal(out.read_bytes(), fb_trace.read_bytes())


@pytest.mark.parametrize(
    ("text", "line", "field", "message"),
    [
        ("4 1\n1 0 1 0 1 1:1e300\n", 2, "MB_1", r"MB is 1e300, outside the supported range"),
        ("4 1\n1 0 1 0 1 1:1e-7\n", 2, "MB_1", r"MB is 1e-7, outside the supported range"),
        # 2e-6 MB split among 3 mappers: flows of 6.7e-7 MB, below 1e-6
        ("4 1\n1 0 3 0 1 2 1 3:2e-6\n", 2, "MB_1", r"M = 3 mappers, each flow gets 6.66667e-07"),
        ("4 1\n1 10000000000000 1 0 1 1:1\n", 2, "arrival_ms", "beyond the supported maximum"),
        # 1e9 MB at 0.125 MB/ms takes 8e9 ms, 1 MB 8 ms: a ratio of 1e9 > 1e7; the short flow
        # is named, on its line
        ("4 2\n1 0 1 0 1 1:1e9\n2 0 1 2 1 3:1.0\n", 3, "MB_1", r"a ratio of 1e\+09"),
        # the second reducer's flow of the second mapper is the short one: MB_2
        ("4 2\n1 0 1 0 1 1:1e8\n2 0 2 2 3 2 0:8 1:0.2\n", 3, "MB_2", r"a ratio of 1e\+09"),
    ],
)
def test_values_outside_the_supported_range_name_line_and_field(text, line, field, message):
    """Tests that sizes, arrivals and size ratios outside coflowlab.constants' range are
    refused naming the line and field (the short flow's reducer for a ratio)."""
    with pytest.raises(TraceFormatError, match=message) as info:
        parse_benchmark(text)
    assert_equal((info.value.line, info.value.field), (line, field))


def test_single_huge_flow_within_range_is_read():
    """Tests that one flow of 1e9 MB alone is inside the range (8e9 ms at 0.125 MB/ms)."""
    assert_equal(parse_benchmark("4 1\n1 0 1 0 1 1:1e9\n").bottleneck, [8e9])
