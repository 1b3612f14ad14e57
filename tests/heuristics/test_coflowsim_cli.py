"""Tests of ``coflowlab simulate FILE --policy NAME --time-model coflowsim``: every policy of the
CoflowSim time model end to end (text, CSV and JSON output) and its errors."""

from __future__ import annotations

import csv
import json

import pytest

from coflowlab.cli import main
from coflowlab.heuristics.coflowsim import POLICIES

# CoflowSim's CCTs (ms) on its micro-trace (docs/coflowsim-model.md#micro-trace), per coflowlab
# name; the deadline mode admits job 1 only. Every job is released at 0 (epoch admission).
MICRO = {
    "fair": {"1": 32.0, "2": 40.0, "3": 104.0},
    "pfp": {"1": 8.0, "2": 32.0, "3": 104.0},
    "fifo": {"1": 8.0, "2": 32.0, "3": 104.0},
    "scf": {"1": 8.0, "2": 32.0, "3": 104.0},
    "ncf": {"1": 8.0, "2": 104.0, "3": 88.0},
    "tcf": {"1": 8.0, "2": 32.0, "3": 104.0},
    "varys": {"1": 8.0, "2": 32.0, "3": 104.0},
    "aalo": {"1": 8.0, "2": 40.0, "3": 120.0},
    "varys-deadline": {"1": 8.0},
    # YosemiteSim's key is weight over SEBF's static bottleneck, largest first: with the
    # micro-trace's equal weights it is SEBF's order, hence SEBF's CCTs (docs/yosemite.md)
    "yosemite": {"1": 8.0, "2": 32.0, "3": 104.0},
}


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def simulate(capsys, data_dir, policy: str, *extra: str) -> tuple[int, str, str]:
    trace = str(data_dir / "coflowsim_micro.txt")
    return run(capsys, "simulate", trace, "--policy", policy, "--time-model", "coflowsim", *extra)


def test_every_supported_policy_is_tested():
    """Tests that the table of expected CCTs covers every name the time model supports."""
    assert set(MICRO) == set(POLICIES)


@pytest.mark.parametrize("policy", list(MICRO))
def test_csv_has_coflowsim_ccts(capsys, data_dir, tmp_path, policy):
    """Tests that -o writes CoflowSim's CCT of every coflow it finished
    (docs/coflowsim-model.md#micro-trace)."""
    path = tmp_path / "out.csv"
    code, _, err = simulate(capsys, data_dir, policy, "-o", str(path))
    assert code == 0, err
    with path.open() as fh:
        rows = list(csv.DictReader(fh))
    assert {r["coflow"]: float(r["cct"]) for r in rows} == MICRO[policy]
    assert all(float(r["release"]) == 0.0 for r in rows)
    assert all(float(r["completion"]) == float(r["cct"]) for r in rows)


@pytest.mark.parametrize("policy", list(MICRO))
def test_json_summary(capsys, data_dir, policy):
    """Tests that --json prints one object with the CoflowSim averages, events and the
    verified flag."""
    code, out, err = simulate(capsys, data_dir, policy, "--json")
    assert code == 0, err
    doc = json.loads(out)
    ccts = list(MICRO[policy].values())
    assert doc["time_model"] == "coflowsim" and doc["policy"] == policy
    assert doc["verified"] is True
    assert doc["finished"] == len(ccts)
    assert doc["avg_cct"] == pytest.approx(sum(ccts) / len(ccts))
    assert doc["total_cct"] == sum(ccts)
    assert doc["events"] > 0
    assert doc["rejected"] == 3 - len(ccts)


def test_text_summary_prints_the_bin_table(capsys, data_dir):
    """Tests the text output: heading, verification, averages and the Varys bin table."""
    code, out, err = simulate(capsys, data_dir, "varys")
    assert code == 0, err
    assert "varys (coflowsim model)" in out
    assert "3 of 3 coflows finished" in out and "schedule verified" in out
    assert "average CCT 48.00 ms" in out  # (8 + 32 + 104) / 3
    rows = {line.split()[0]: line.split()[1:] for line in out.splitlines() if line[:3] == "SN "}
    assert rows["SN"][0] == "2"  # jobs 1 and 2 carry under 5 MB per flow


def test_deadline_mode_reports_rejections(capsys, data_dir):
    """Tests that the deadline mode says how many coflows admission control rejected."""
    code, out, err = simulate(capsys, data_dir, "varys-deadline")
    assert code == 0, err
    assert "1 of 1 coflows finished" in out
    assert "rejected by admission control: 2" in out


def test_coflowsim_names_are_accepted(capsys, data_dir):
    """Tests that CoflowSim's own policy names work too (SEBF is coflowlab's varys)."""
    code, out, err = simulate(capsys, data_dir, "SEBF", "--json")
    assert code == 0, err
    assert json.loads(out)["avg_cct"] == pytest.approx(48.0)


@pytest.mark.parametrize("policy", ["fifo-lm", "aalo-uncoordinated", "sincronia"])
def test_unsupported_policy_is_one_clear_line(capsys, data_dir, policy):
    """Tests that a policy without a CoflowSim counterpart fails with exit status 1 and one
    line that names it and lists the supported names."""
    code, out, err = simulate(capsys, data_dir, policy)
    assert code == 1 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1
    assert repr(policy) in lines[0]
    assert all(name in lines[0] for name in POLICIES)


def test_parameters_are_refused(capsys, data_dir):
    """Tests that --param is refused: CoflowSim's policies have no parameters."""
    code, _, err = simulate(capsys, data_dir, "varys", "--param", "starvation=false")
    assert code == 1 and "takes no --param" in err


def test_list_under_the_coflowsim_model_names_coflowsim_variants(capsys):
    """Tests that --list with --time-model coflowsim lists the supported names and CoflowSim's
    variant for each, and nothing CoflowSim lacks."""
    code = main(["simulate", "--list", "--time-model", "coflowsim"])
    out = capsys.readouterr().out
    rows = dict(line.split(None, 1) for line in out.splitlines())
    assert code == 0 and set(rows) == set(POLICIES)
    assert rows["varys"] == "CoflowSim's SEBF" and rows["aalo"] == "CoflowSim's DARK"
    assert rows["tcf"] == "CoflowSim's LCF"
