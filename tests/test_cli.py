"""Tests of the command line: each subcommand's output and its errors."""

from __future__ import annotations

import json

import pytest

from coflowlab.cli import main
from coflowlab.instances import read_instance


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_info_prints_counts_bins_and_ports(capsys, data_dir):
    """Tests that info summarizes the CoflowSim micro-trace: counts, bins and busiest port."""
    code, out, err = run(capsys, "info", str(data_dir / "coflowsim_micro.txt"), "--ports", "all")
    assert code == 0, err
    assert "3 coflows, 6 flows, 4 ports" in out  # job 2 is 2 mappers x 2 reducers
    rows = {
        line.split()[0]: line.split()[1]
        for line in out.splitlines()
        if line[:3] in ("SN ", "LN ", "SW ", "LW ")
    }
    assert rows == {"SN": "2", "LN": "1", "SW": "0", "LW": "0"}  # job 3 carries 10 MB
    # egress 1 receives 1 + 2 + 10 MB = 13 MB (104 ms at 1 MiB per 8 ms): the busiest port
    ports = out.split("load per port")[1].splitlines()[1:]
    assert ports[0].split() == ["egress", "1", "13", "104"]
    assert len(ports) == 8


def test_info_json_is_one_object(capsys, data_dir):
    """Tests that info --json prints one JSON object with the summary's keys."""
    code, out, _ = run(capsys, "info", str(data_dir / "coflowsim_micro.txt"), "--json")
    assert code == 0
    doc = json.loads(out)
    assert (doc["num_coflows"], doc["num_flows"], doc["num_ports"]) == (3, 6, 4)
    assert doc["bins"]["SN"][0] == 2


@pytest.mark.parametrize(
    ("kind", "extra", "expected_ports"),
    [
        ("uniform", ["--ports", "3", "--coflows", "5"], 3),
        ("fb-like", ["--coflows", "20"], 150),
        ("cos", ["--ports", "2", "--coflows", "4"], 2),
        ("single-port", ["--coflows", "6", "--weights", "1", "3"], 1),
    ],
)
def test_generate_writes_a_readable_instance(capsys, tmp_path, kind, extra, expected_ports):
    """Tests that every generator kind writes a file that reads back with its sizes."""
    path = tmp_path / "out.json"
    code, out, err = run(capsys, "generate", kind, "-o", str(path), "--seed", "4", *extra)
    assert code == 0, err
    inst = read_instance(path)
    assert inst.num_ports == expected_ports
    assert f"{inst.num_coflows} coflows" in out


def test_generate_is_deterministic(capsys, tmp_path):
    """Tests that the same seed writes the same file twice."""
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    for path in (a, b):
        run(capsys, "generate", "uniform", "-o", str(path), "--seed", "9", "--deadlines", "1")
    assert a.read_bytes() == b.read_bytes()


def test_errors_are_one_line_with_status_1(capsys, data_dir, tmp_path):
    """Tests that a bad file and a bad parameter give one error line each, no traceback."""
    code, out, err = run(capsys, "info", str(data_dir / "benchmark_bad_port.txt"))
    assert code == 1 and out == ""
    assert len(err.strip().splitlines()) == 1
    assert "benchmark_bad_port.txt, line" in err
    code, _, err = run(
        capsys, "generate", "uniform", "-o", str(tmp_path / "x.json"), "--density", "0"
    )
    assert code == 1 and "density" in err
    assert not (tmp_path / "x.json").exists()


def test_usage_errors_exit_2(capsys):
    """Tests that an unknown subcommand is a usage error (status 2)."""
    with pytest.raises(SystemExit) as info:
        main(["frobnicate"])
    assert info.value.code == 2


def test_demo_summarizes_each_generated_instance(capsys):
    """Tests that demo prints a summary for each of its built-in instances."""
    code, out, _ = run(capsys, "demo")
    assert code == 0
    assert out.count("coflows,") == 4
    assert "FB-like, 200 coflows on 150 ports: 200 coflows" in out
