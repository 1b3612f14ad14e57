"""YosemiteSim's weighted coflow-benchmark format (``weighted-benchmark``; docs/formats.md):
reading, writing, detection from the content, and errors that name the file, line and field."""

from __future__ import annotations

import json

import numpy as np
import pytest
from numpy.testing import assert_array_equal

from coflowlab import Instance, TraceFormatError
from coflowlab.cli import main
from coflowlab.exceptions import InvalidInstanceError
from coflowlab.instances import fb_like, read_instance, write_instance
from coflowlab.instances.benchmark import find_data_file, find_fb_trace
from coflowlab.instances.io import (
    detect_format,
    format_weighted_benchmark,
    parse_weighted_benchmark,
)

# the CoflowSim micro-trace (docs/coflowsim-model.md#micro-trace) with weights 1, 2.5, 4
MICRO = "4 3\n1 1 0 1 0 1 1:1.0\n2 2.5 5000 2 0 2 2 3:4.0 1:2.0\n3 4 10240 1 3 1 1:10.0\n"
# "7 0 2 1 4 1 3:4.0" reads both ways: id 7, arrival 0, mappers 1 and 4 / id 7, weight 0,
# arrival 2, mapper 4 (its third token is its fourth plus one)
AMBIGUOUS = "7 0 2 1 4 1 3:4.0"


def write(tmp_path, text: str, name: str = "t.txt"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_reads_the_micro_trace_with_its_weights(tmp_path):
    """Tests that every field of a weighted line lands where the format says."""
    inst = read_instance(write(tmp_path, MICRO))
    assert_array_equal(inst.coflow_weight, [1.0, 2.5, 4.0])
    assert_array_equal(inst.coflow_release, [0.0, 5000.0, 10240.0])
    assert inst.coflow_label == ("1", "2", "3")
    # coflow 2: mappers 0, 2; reducers 3 (4 MB) and 1 (2 MB), split over M = 2
    flows = inst.coflow_flows(1)
    assert inst.flow_src[flows].tolist() == [0, 0, 2, 2]
    assert inst.flow_dst[flows].tolist() == [3, 1, 3, 1]
    assert inst.flow_size[flows].tolist() == [2.0, 1.0, 2.0, 1.0]


def test_write_then_read_is_exact(tmp_path):
    """Tests the round trip of a generated instance with whole and real weights."""
    inst = fb_like(40, seed=5, weights=(1, 4))
    inst = inst.replace(coflow_weight=inst.coflow_weight * np.r_[[0.5] * 5, [1.0] * 35])
    path = tmp_path / "w.txt"
    write_instance(inst, path, format="weighted-benchmark")
    assert detect_format(path) == "weighted-benchmark"
    back = read_instance(path)
    assert back == inst
    assert format_weighted_benchmark(back) == path.read_text()


def test_whole_weights_are_written_as_integers():
    """Tests the writer's weight token: ``2`` for 2.0 and ``0.5`` for 0.5."""
    inst = Instance.from_matrices([[[1, 0], [0, 0]], [[0, 0], [0, 1]]], weight=[2.0, 0.5])
    lines = format_weighted_benchmark(inst).splitlines()
    assert [ln.split()[1] for ln in lines[1:]] == ["2", "0.5"]


def test_the_yosemitesim_trace_round_trips_byte_for_byte():
    """Tests FB2010-weight0.txt: detected, read with the weight counts its README states
    (132, 131, 134, 129 coflows of weight 1..4), the same coflows as the plain trace, and
    written back byte for byte."""
    path, plain = find_data_file("FB2010-weight0.txt"), find_fb_trace()
    if path is None or plain is None:
        pytest.skip("the Facebook traces are not present")
    assert detect_format(path) == "weighted-benchmark"
    inst = read_instance(path)
    assert np.bincount(inst.coflow_weight.astype(int)).tolist() == [0, 132, 131, 134, 129]
    ref = read_instance(plain)
    assert inst.replace(coflow_weight=np.ones(526)) == ref
    assert format_weighted_benchmark(inst) == path.read_text()


def test_detection_is_decided_by_the_first_unambiguous_line(tmp_path):
    """Tests that an ambiguous first line is resolved by the next lines, either way."""
    plain = write(tmp_path, f"5 2\n{AMBIGUOUS}\n8 10 1 0 1 1:1.0\n", "p.txt")
    weighted = write(tmp_path, f"5 2\n{AMBIGUOUS}\n8 3 10 1 0 1 1:1.0\n", "w.txt")
    assert detect_format(plain) == "benchmark"
    assert detect_format(weighted) == "weighted-benchmark"
    assert read_instance(weighted).coflow_weight.tolist() == [0.0, 3.0]
    assert read_instance(plain).coflow_weight.tolist() == [1.0, 1.0]


def test_a_file_of_only_ambiguous_lines_reads_as_plain_benchmark(tmp_path):
    """Tests that a file whose every line reads both ways is the plain format (so a
    benchmark file coflowlab writes reads back as written; the proofs' round trip found a
    two-port, one-coflow file that was refused before), and that --format settles it."""
    path = write(tmp_path, f"5 1\n{AMBIGUOUS}\n")
    assert detect_format(path) == "benchmark"
    assert read_instance(path).coflow_weight.tolist() == [1.0]
    assert read_instance(path, format="benchmark").num_flows == 2
    assert read_instance(path, format="weighted-benchmark").coflow_weight.tolist() == [0.0]


def test_the_writer_keeps_a_weighted_file_detectable(tmp_path):
    """Tests the writer's side of that rule: an instance whose line would read both ways
    (weight 0, arrival 2, mapper 4: the AMBIGUOUS line) is written with its weight as a
    float (0.0), which no plain line can have as its arrival, so detection reads it back as
    weighted, exactly; an unambiguous file keeps integer weights."""
    inst = read_instance(write(tmp_path, f"5 1\n{AMBIGUOUS}\n"), format="weighted-benchmark")
    text = format_weighted_benchmark(inst)
    assert text.split("\n")[1].split()[1] == "0.0"
    back = write(tmp_path, text, "back.txt")
    assert detect_format(back) == "weighted-benchmark" and read_instance(back) == inst
    clear = read_instance(write(tmp_path, "4 1\n1 3 10 1 2 1 3:2.0\n", "c.txt"))
    assert format_weighted_benchmark(clear).split("\n")[1].split()[1] == "3"


def test_inconsistent_lines_are_an_error_naming_both(tmp_path):
    """Tests a file whose line 2 reads only as plain and line 3 only as weighted."""
    path = write(tmp_path, "4 2\n1 0 1 0 1 1:1.0\n2 3 10 1 2 1 3:2.0\n")
    with pytest.raises(TraceFormatError, match="line 2 reads only as benchmark") as info:
        read_instance(path)
    assert info.value.line == 3


@pytest.mark.parametrize(
    ("line", "field", "message"),
    [
        ("1 x 0 1 0 1 1:1.0", "weight", "'x' is not a number"),
        ("1 -2 0 1 0 1 1:1.0", "weight", "negative"),
        ("1 nan 0 1 0 1 1:1.0", "weight", "not a number"),
        ("1", "weight", "the line ends after 1 tokens"),
        ("1 2 0 1 9 1 1:1.0", "map_loc_1", "out of range"),
        ("1 2 0 2 0 1 1:1.0", "num_reducers", "leave out the weight"),
    ],
)
def test_bad_lines_name_file_line_and_field(tmp_path, line, field, message):
    """Tests the reader's errors, one bad field at a time."""
    path = write(tmp_path, f"4 2\n1 1 0 1 0 1 1:1.0\n{line}\n")
    with pytest.raises(TraceFormatError, match=message) as info:
        read_instance(path, format="weighted-benchmark")
    assert (info.value.path, info.value.line, info.value.field) == (str(path), 3, field)


def test_writer_refuses_what_the_format_cannot_hold():
    """Tests that a deadline is refused, naming the weighted format."""
    inst = Instance.from_matrices([[[1.0]]], weight=[2.0]).replace(coflow_deadline=[5.0])
    with pytest.raises(InvalidInstanceError, match="weighted-benchmark format"):
        format_weighted_benchmark(inst)


def test_parse_text_directly():
    """Tests the text parser with and without a header."""
    inst = parse_weighted_benchmark("1 3 0 1 0 1 1:1.0\n", num_ports=2)
    assert inst.num_ports == 2 and inst.coflow_weight.tolist() == [3.0]


def test_cli_simulate_reports_weighted_cct(tmp_path, capsys):
    """Tests ``simulate --format weighted-benchmark --json`` on the weighted micro-trace.

    By hand, in the exact model: the coflows never overlap (coflow 1 ends at 8 ms, coflow 2
    takes 32 ms from 5000, coflow 3 80 ms from 10240), so the CCTs are 8, 32 and 80 ms and
    Σ w CCT = 1·8 + 2.5·32 + 4·80 = 408 ms, average 136 ms."""
    path = write(tmp_path, MICRO)
    code = main(["simulate", str(path), "--format", "weighted-benchmark", "--policy", "yosemite",
                 "--json"])  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0, err
    doc = json.loads(out)
    assert doc["total_weighted_cct"] == pytest.approx(408.0)
    assert doc["avg_weighted_cct"] == pytest.approx(136.0)
