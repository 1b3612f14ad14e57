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
    code, out, err = run(capsys, "info", str(data_dir / "coflowsim_micro.txt"), "--top", "all")
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


def test_simulate_prints_bins_and_writes_csv(capsys, data_dir, tmp_path):
    """Tests simulate on the CoflowSim micro-trace under fair sharing: exact CCTs (jobs run
    alone or share egress 1), the bin table, the CSV rows and the verified flag."""
    out_csv = tmp_path / "r.csv"
    code, out, err = run(
        capsys,
        "simulate",
        str(data_dir / "coflowsim_micro.txt"),
        "--policy",
        "fair",
        "-o",
        str(out_csv),
    )
    assert code == 0, err
    assert "schedule verified" in out and "3 of 3 coflows finished" in out
    rows = out_csv.read_text().splitlines()
    assert rows[0] == "coflow,release,completion,cct,bin"
    # at 0.125 MB/ms, each job alone: job 1 moves 1 MB (8 ms); job 2's egress 3 receives
    # 4 MB (32 ms, fair sharing is optimal here); job 3 moves 10 MB (80 ms)
    assert rows[1:] == ["1,0.0,8.0,8.0,SN", "2,5000.0,5032.0,32.0,SN", "3,10240.0,10320.0,80.0,LN"]


def test_simulate_json_and_list_and_errors(capsys, data_dir):
    """Tests simulate --json, --list, a bad parameter and the unavailable time model."""
    code, out, _ = run(
        capsys, "simulate", str(data_dir / "coflowsim_micro.txt"), "--policy", "varys", "--json"
    )
    doc = json.loads(out)
    assert code == 0 and doc["avg_cct"] == pytest.approx(40.0) and doc["verified"]
    code, out, _ = run(capsys, "simulate", "--list")
    assert code == 0 and "varys-deadline" in out and "aalo-uncoordinated" in out
    code, _, err = run(
        capsys,
        "simulate",
        str(data_dir / "coflowsim_micro.txt"),
        "--policy",
        "varys",
        "--param",
        "colour=red",
    )
    assert code == 1 and "no parameter 'colour'" in err
    code, _, err = run(
        capsys,
        "simulate",
        str(data_dir / "coflowsim_micro.txt"),
        "--policy",
        "varys",
        "--param",
        "T",
    )
    assert code == 1 and "KEY=VALUE" in err


def test_simulate_engine_choice(capsys, data_dir):
    """Tests that simulate runs fair sharing on rate classes by default and per flow with
    --engine flows (same CCTs), and that --engine classes names why it cannot run."""
    trace = str(data_dir / "coflowsim_micro.txt")
    docs = {}
    for engine in ("auto", "flows"):
        code, out, _ = run(
            capsys, "simulate", trace, "--policy", "fair", "--engine", engine, "--json"
        )
        assert code == 0
        docs[engine] = json.loads(out)
    assert (docs["auto"]["engine"], docs["flows"]["engine"]) == ("classes", "flows")
    assert docs["auto"]["avg_cct"] == pytest.approx(docs["flows"]["avg_cct"], rel=1e-9)
    assert docs["auto"]["verified"] and docs["auto"]["events"] == docs["flows"]["events"]
    code, _, err = run(capsys, "simulate", trace, "--policy", "varys", "--engine", "classes")
    assert code == 1 and "no class engine" in err


def test_simulate_deadlines_with_admission_control(capsys, tmp_path):
    """Tests simulate --deadlines: tight Varys deadlines on a loaded fabric make varys-deadline
    reject some coflows; the admitted ones' schedule is verified (records kept for that) and
    the share of deadlines met is reported; the coflowsim model refuses the option."""
    from coflowlab.instances import fb_like, write_instance

    path = tmp_path / "fb.json"
    write_instance(fb_like(60, num_ports=8, seed=4), path)
    argv = ["simulate", str(path), "--policy", "varys-deadline", "--deadlines", "0.1", "--json"]
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    doc = json.loads(out)
    assert doc["verified"] and doc["rejected"] > 0
    assert doc["finished"] == 60 - doc["rejected"]
    assert doc["deadlines"] == 60 and 0 < doc["deadlines_met_pct"] <= 100
    code, _, err = run(capsys, *argv[:4], "--deadlines", "1", "--time-model", "coflowsim")
    assert code == 1 and "--deadlines is for the exact model" in err


def test_an_interrupt_inside_a_compiled_kernel_is_still_an_interrupt(monkeypatch, capsys):
    """Tests the CLI's reading of Ctrl-C that lands while numba loads a kernel's constants:
    numba raises SystemError caused by the KeyboardInterrupt (seen in
    test_ctrl_c_during_simulate_exits_130_without_traceback); that is exit 130 with one
    line, while a SystemError without an interrupt behind it still propagates."""
    import coflowlab.cli as cli

    def interrupted(args):
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as exc:
            raise SystemError("returned a result with an exception set") from exc

    def broken(args):
        raise SystemError("something else")

    import argparse

    class Parser:
        def __init__(self, run):
            self.run = run

        def parse_args(self, argv):
            return argparse.Namespace(run=self.run, command="simulate")

    for run in (interrupted, broken):
        monkeypatch.setattr(cli, "build_parser", lambda run=run: Parser(run))
        if run is broken:
            with pytest.raises(SystemError, match="something else"):
                cli.main([])
        else:
            assert cli.main([]) == cli.EXIT_INTERRUPTED
            assert capsys.readouterr().err == "coflowlab: interrupted\n"
