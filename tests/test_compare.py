"""Tests of the main job: ``coflow.compare`` (instances, algorithm specifications, parallel
tasks, failures kept as rows) and ``coflowlab compare`` / ``coflowlab demo``."""

from __future__ import annotations

import csv
import json

import pytest

from coflowlab.cli import main
from coflowlab.compare import (
    compare,
    generated_instances,
    instance_files,
    parse_algorithms,
    reference_algorithms,
)
from coflowlab.instances import uniform, write_json
from coflowlab.registry import select


def test_parse_algorithms_keeps_parameters_with_their_algorithm():
    """Tests names, family selectors and name:key=value,key=value spellings."""
    specs = parse_algorithms("lp-ov,varys:starvation=false,T=1000,online,fair")
    labels = [s.label for s in specs]
    assert labels[:2] == ["lp-ov", "varys:starvation=false,T=1000"]
    assert specs[1].name == "varys" and dict(specs[1].params) == {
        "starvation": "false",
        "T": "1000",
    }
    assert labels[2:] == select("online")  # fair appears once: duplicates dropped
    with pytest.raises(ValueError, match="unknown algorithm 'nope'"):
        parse_algorithms("nope")
    with pytest.raises(ValueError, match="follows no algorithm"):
        parse_algorithms("T=1000,varys")


def test_reference_algorithms_adds_what_the_reference_needs():
    """Tests that opt adds the fluid optimum (the slotted one only for slotted-only runs),
    bound adds a bound when none is listed, and a named reference adds itself."""
    names = lambda specs: [s.label for s in specs]  # noqa: E731
    assert names(reference_algorithms(parse_algorithms("varys,qsz"), "opt")) == ["exact-fluid"]
    assert names(reference_algorithms(parse_algorithms("qsz"), "opt")) == ["exact-slotted"]
    assert names(reference_algorithms(parse_algorithms("exact-fluid,varys"), "opt")) == []
    assert names(reference_algorithms(parse_algorithms("varys"), "bound")) == ["bound-release-rho"]
    assert names(reference_algorithms(parse_algorithms("varys"), "fair")) == ["fair"]


def test_generated_instances_are_reproducible_and_named():
    """Tests that a generated spec loads the same instance as the generator with that seed."""
    specs = generated_instances("uniform", {"ports": "3", "coflows": "5"}, [4, 7])
    assert [s.seed for s in specs] == [4, 7]
    again = uniform(3, 5, seed=7)
    inst = specs[1].load()
    assert inst.flow_size.tolist() == again.flow_size.tolist()
    with pytest.raises(ValueError, match="unknown generator 'grid'"):
        generated_instances("grid", {}, [0])
    with pytest.raises(ValueError, match="generator 'uniform' has no parameter 'colour'"):
        generated_instances("uniform", {"colour": "red"}, [0])


def test_results_do_not_depend_on_the_number_of_processes():
    """Tests that jobs=1 and jobs=2 give the same records, in the same order."""
    insts = generated_instances("uniform", {"ports": "3", "coflows": "4"}, range(3))
    algos = parse_algorithms("exact-fluid,sincronia,varys,fair")
    one = compare(insts, algos, jobs=1)
    two = compare(insts, algos, jobs=2)
    key = lambda r: (r.instance, r.algorithm, r.status, r.objective)  # noqa: E731
    assert [key(r) for r in one] == [key(r) for r in two]
    assert len(one) == 12


def test_a_failing_task_is_a_row_not_a_crash():
    """Tests that an algorithm that refuses an instance (exact-slotted needs integral sizes)
    gives an error row with its message, and the other tasks still run."""
    insts = generated_instances(
        "uniform", {"ports": "2", "coflows": "3", "integral": "false"}, [0]
    )
    recs = compare(insts, parse_algorithms("exact-slotted,order-smith"))
    by = {r.algorithm: r for r in recs}
    assert by["exact-slotted"].status == "error" and by["exact-slotted"].objective is None
    assert "not a whole number" in by["exact-slotted"].message
    assert by["order-smith"].status == "feasible" and by["order-smith"].verified is True


def test_instance_files_expand_globs_and_refuse_missing(tmp_path):
    """Tests that globs expand in sorted order and a pattern matching nothing is named."""
    for k in (2, 1):
        write_json(uniform(2, 2, seed=k), tmp_path / f"i{k}.json")
    specs = instance_files([str(tmp_path / "i*.json")])
    assert [s.name for s in specs] == ["i1.json", "i2.json"]
    with pytest.raises(FileNotFoundError, match="nothing"):
        instance_files([str(tmp_path / "nothing*.json")])


def test_compare_command_of_the_issue(capsys, tmp_path):
    """Tests the command the issue names: the output folder's files, ratios ≥ 1 against a
    proven optimum for schedules, ≤ 1 for the relaxation, and the printed gap table."""
    out = tmp_path / "out"
    code = main(
        [
            "compare",
            "--generate", "uniform", "--param", "ports=3", "--param", "coflows=5",
            "--seeds", "0:10",
            "--algorithms", "exact-fluid,lp-ov,primal-dual,sincronia,lp-ov-ls,varys,aalo,fair",
            "--reference", "opt",
            "-o", str(out),
        ]
    )  # fmt: skip
    printed = capsys.readouterr().out
    assert code == 0
    for name in ("results.csv", "summary.csv", "report.md", "report.html"):
        assert (out / name).is_file()
    assert list((out / "figures").glob("*.png")) and list((out / "figures").glob("*.pdf"))
    rows = list(csv.DictReader((out / "results.csv").open()))
    assert len(rows) == 10 * 8
    for row in rows:
        assert row["reference_kind"] == "opt" and row["verified"] != "false"
        ratio = float(row["ratio"])
        if row["family"] == "relaxation":
            assert ratio <= 1 + 1e-9
        else:
            assert ratio >= 1 - 1e-9, row
    assert "exact-fluid" in printed and "mean" in printed and "wrote" in printed
    html = (out / "report.html").read_text()
    assert html.count('<img src="data:image/png;base64,') >= 3


def test_compare_json_prints_one_object(capsys, tmp_path):
    """Tests that --json prints the gap table as one JSON object with provenance."""
    code = main(
        [
            "compare", "--generate", "single-port", "--param", "coflows=4", "--seeds", "0:2",
            "--algorithms", "order-smith,fair", "--reference", "opt", "-o", str(tmp_path / "o"),
            "--json",
        ]
    )  # fmt: skip
    assert code == 0
    doc = json.loads(capsys.readouterr().out)
    rows = {r["algorithm"]: r for r in doc["rows"]}
    # Smith's rule is optimal on one port: every ratio is exactly 1
    assert rows["order-smith"]["max_ratio"] == pytest.approx(1.0)
    assert rows["fair"]["mean_ratio"] >= 1.0
    assert doc["provenance"]["command"] == "compare"


def test_demo_runs_the_main_job(capsys, tmp_path):
    """Tests that demo compares every family against proven optima and prints the table."""
    code = main(["demo", "--instances", "2", "--jobs", "1", "-o", str(tmp_path / "demo")])
    out = capsys.readouterr().out
    assert code == 0
    families = {line.split()[1] for line in out.splitlines()[3:] if len(line.split()) > 3}
    assert {"exact", "relaxation", "bound", "approximation", "online"} <= families
    assert (tmp_path / "demo" / "report.html").is_file()
