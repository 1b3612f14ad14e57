"""Tests of format detection, dispatch and JSON files (``coflowlab.instances.io``)."""

from __future__ import annotations

import errno
import json
import os
import re
from pathlib import Path

import pytest
from numpy.testing import assert_equal

from coflowlab import Coflow, Fabric, Instance, TraceFormatError, Units
from coflowlab.instances.benchmark import read_benchmark
from coflowlab.instances.io import (
    FORMATS,
    atomic_write_text,
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


def test_formats_lists_the_four_formats():
    """Tests that FORMATS names exactly the supported formats."""
    assert_equal(FORMATS, ("json", "benchmark", "sincronia", "weighted-benchmark"))


def test_cli_offers_the_readers_formats():
    """Tests that the command line's --format choices are the readers' formats (the CLI spells
    them out to keep its start-up light)."""
    from coflowlab.cli import FILE_FORMATS

    assert_equal(FILE_FORMATS, FORMATS)


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
    ("text", "line", "field", "reason", "closest"),
    [
        # neither structure: the closest format's precise error, line and field
        ("hello world, this is text\n", 1, "header", "expected '<num_ports>", "sincronia"),
        # benchmark-like ('loc:MB'), but M = 2 and one mapper
        ("4 1\n1 0 2 0 1 3:4.0\n", 2, "num_reducers", "'3:4.0' is not an integer", "benchmark"),
        # Sincronia-like, but nflows = 2 and one triple
        ("4 1\n1 0 2 1 1 0 1 4\n", 2, "num_flows", "nflows = 2 needs 5 \\+ 3", "sincronia"),
    ],
)
def test_undetected_format_gives_the_closest_formats_error(
    text, line, field, reason, closest, tmp_path
):
    """Tests that when neither structure matches, the error is the closest format's precise
    one (path, line, field), says which format that is and how to choose one, in
    command-line words (no Python keyword such as ``format=``)."""
    path = tmp_path / "x.txt"
    path.write_text(text)
    for call in (read_instance, detect_format):
        with pytest.raises(TraceFormatError, match=reason) as info:
            call(path)
        assert_equal(
            (info.value.path, info.value.line, info.value.field), (str(path), line, field)
        )
        message = str(info.value)
        assert f"read as {closest}, the closest format" in message
        assert message.endswith(
            "; use --format FORMAT to choose one of json, benchmark, sincronia, "
            "weighted-benchmark)"
        )
        assert not re.search(r"\w=", message), message  # no Python keyword such as format=


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("3 0\n", "line 1, field num_coflows: the header declares 0 coflows; an instance"),
        ("3 2\n\n", "line 1, field num_coflows: the header declares 2 coflows, but the file"),
        ("x 2\n", "line 1, field num_ports: 'x' is not an integer"),
        ("\n \n", "line 1, field header: the file is empty"),
    ],
)
def test_header_only_file_is_explained(text, message, tmp_path):
    """Tests that a file with a header and no coflow line names the header's fields (a
    header ``3 0`` declares no coflow; it is not a missing line 2)."""
    path = tmp_path / "h.txt"
    path.write_text(text)
    with pytest.raises(TraceFormatError, match=message):
        read_instance(path)


def test_headerless_sincronia_file_needs_ports(tmp_path):
    """Tests that a Sincronia file without its header is refused with the hint ``--ports N``
    and reads with ``num_ports`` as the file with the header does."""
    with_header = DATA / "sincronia_small.txt"
    path = tmp_path / "s.txt"
    path.write_text(with_header.read_text().split("\n", 1)[1])
    with pytest.raises(TraceFormatError, match=r"pass --ports N$") as info:
        read_instance(path)
    assert_equal((info.value.line, info.value.field), (1, "header"))
    m = read_sincronia(with_header).num_ports
    assert_equal(read_instance(path, num_ports=m), read_sincronia(with_header))
    assert_equal(read_sincronia(path, num_ports=m), read_sincronia(with_header))
    with pytest.raises(TraceFormatError, match=f"declares {m} ports, but --ports {m + 1}"):
        read_instance(with_header, num_ports=m + 1)


def test_num_ports_is_checked_against_a_json_fabric(tmp_path):
    """Tests that ``num_ports`` (``--ports``) given for a JSON file must equal its fabric's."""
    path = tmp_path / "i.json"
    write_json(rich_instance(), path)
    assert_equal(read_instance(path, num_ports=3), rich_instance())
    with pytest.raises(TraceFormatError, match="fabric has 3 ports, but --ports 4 was given"):
        read_instance(path, num_ports=4)


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


def _set(doc: dict, path: str, index: int | None, value: object) -> None:
    """Sets ``doc[a][b]`` (path ``"a.b"``) or its entry ``index`` to ``value``."""
    *outer, last = path.split(".")
    for key in outer:
        doc = doc[key]
    if index is None:
        doc[last] = value
    else:
        doc[last][index] = value


# rich_instance(): flows (coflow, src, dst, size) = (0, 0, 1, 1.5), (0, 1, 0, 2.0), (1, 2, 2, 0.1)
@pytest.mark.parametrize(
    ("path", "index", "value", "field", "reason"),
    [
        ("flows.src", 0, 1.5, "flows.src[0]", "must be an integer, got 1.5"),
        ("flows.coflow", 1, True, "flows.coflow[1]", "must be an integer, got true"),
        ("flows.dst", 2, "1", "flows.dst[2]", 'must be an integer, got "1"'),
        ("flows.size", 0, True, "flows.size[0]", "must be a number, got true"),
        ("flows.size", 2, "abc", "flows.size[2]", 'must be a number, got "abc"'),
        ("flows.size", 1, 1e300, "flows.size[1]", "coflow 0, flow 1: size is 1e\\+300, outside"),
        ("flows.size", 0, -1.0, "flows.size[0]", "coflow 0, flow 0: size is -1.0"),
        ("flows.size", 0, 10**400, "flows.size[0]", "1000.* is too large"),
        ("flows.release", 1, None, "flows.release[1]", "must be a number, got null"),
        ("flows.src", 0, 7, "flows.src[0]", "coflow 0, flow 0: ingress port 7 is unknown"),
        ("coflows.weight", 1, "2", "coflows.weight[1]", 'must be a number, got "2"'),
        ("coflows.deadline", 1, False, "coflows.deadline[1]", "a number or null, got false"),
        ("coflows.label", 0, 7, "coflows.label[0]", "must be a string, got 7"),
        ("fabric.num_ports", None, 3.0, "fabric.num_ports", "must be an integer, got 3.0"),
        ("fabric.num_ports", None, 0, "fabric.num_ports", "num_ports must be a positive"),
        ("fabric.egress_capacity", None, [4.0, 4.0], "fabric.egress_capacity", "2 entries"),
        ("fabric.ingress_capacity", 1, 1e13, "fabric.ingress_capacity[1]", "outside the"),
        ("dependencies", 0, [1, 0.5], "dependencies[0][1]", "must be an integer, got 0.5"),
        ("dependencies", 0, [1, 1], "dependencies[0]", "coflow 1 depends on itself"),
        ("units", None, 3, "units", "must be an object with string 'size' and 'time', got 3"),
        ("format", None, "other", "format", "'format' must be"),
        ("version", None, True, "version", "unsupported version true"),
        ("flows", None, [1], "flows", "must be a JSON object, got \\[1\\]"),
    ],
)
def test_invalid_instance_document_names_path_field_and_value(
    path, index, value, field, reason, tmp_path
):
    """Tests that a JSON value of the wrong type (a bool, a string or 1.5 where an integer
    belongs, a bool or string where a number belongs) or out of range is refused, naming the
    file, the JSON path as the field, and the value as the file shows it."""
    doc = rich_instance().to_dict()
    _set(doc, path, index, value)
    file = tmp_path / "doc.json"
    file.write_text(json.dumps(doc))
    with pytest.raises(TraceFormatError, match=f"{re.escape(str(file))}, field ") as info:
        read_instance(file)
    assert_equal(info.value.field, field)
    assert re.search(reason, info.value.reason), info.value.reason
    assert str(info.value) == f"{file}, field {field}: {info.value.reason}"


def test_missing_json_keys_are_named(tmp_path):
    """Tests that a missing key is named by its full path."""
    for outer, key in (("", "flows"), ("flows.", "size"), ("fabric.", "num_ports")):
        doc = rich_instance().to_dict()
        (doc[outer[:-1]] if outer else doc).pop(key)
        file = tmp_path / "doc.json"
        file.write_text(json.dumps(doc))
        with pytest.raises(TraceFormatError, match=f"missing key '{outer}{key}'") as info:
            read_instance(file)
        assert_equal(info.value.field, f"{outer}{key}")


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


@pytest.mark.parametrize("writer", ["json", "benchmark", "sincronia", "text"])
def test_write_to_a_missing_folder_names_target_and_folder(writer, tmp_path):
    """Tests that writing into a folder that does not exist fails naming the target file and
    the missing folder (never a temporary file), and creates nothing."""
    target = tmp_path / "nonexistent" / "dir" / "s.json"
    inst = read_benchmark(DATA / "coflowsim_micro.txt")
    with pytest.raises(FileNotFoundError) as info:
        if writer == "text":
            atomic_write_text(target, "x\n")
        else:
            write_instance(inst, target, format=writer)
    assert_equal(
        str(info.value),
        f"cannot write {target}: the folder {target.parent} does not exist",
    )
    assert_equal(list(tmp_path.iterdir()), [])


def test_write_below_a_file_or_onto_a_folder_is_explained(tmp_path):
    """Tests that a target whose folder is a file, or that is itself a folder, fails naming
    the target, and leaves nothing behind."""
    (tmp_path / "f").write_text("a file")
    with pytest.raises(NotADirectoryError, match=f"the folder {re.escape(str(tmp_path))}/f is"):
        atomic_write_text(tmp_path / "f" / "s.json", "x")
    (tmp_path / "d").mkdir()
    with pytest.raises(OSError, match=f"cannot write {re.escape(str(tmp_path))}/d: it is a"):
        atomic_write_text(tmp_path / "d", "x")
    assert_equal(sorted(p.name for p in tmp_path.iterdir()), ["d", "f"])
    assert_equal(list((tmp_path / "d").iterdir()), [])


def test_failed_write_names_the_target_not_the_temporary_file(tmp_path, monkeypatch):
    """Tests that an OS error while writing (here: the disk is full at the rename) is
    reported with the target's name and the reason, keeps its class, leaves no temporary
    file and keeps an existing target."""
    path = tmp_path / "s.json"
    path.write_text("old")

    def full(src, dst):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), src)

    monkeypatch.setattr(os, "replace", full)
    with pytest.raises(OSError) as info:
        write_json(rich_instance(), path)
    assert_equal(str(info.value), f"cannot write {path}: {os.strerror(errno.ENOSPC)}")
    assert_equal(info.value.errno, errno.ENOSPC)
    assert ".tmp" not in str(info.value)
    assert_equal(path.read_text(), "old")
    assert_equal([p.name for p in tmp_path.iterdir()], ["s.json"])
