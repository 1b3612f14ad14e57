"""Tests of ``coflowlab solve``: the method list, human and JSON output, the schedule file,
and one-line errors.

Besides the registered methods, some tests register a test double (``serial``: a fixed,
hand-checked schedule of instance I3 (docs/theory.md#instances)) so that the command's own
behaviour is tested whatever state the formulations are in.
"""

from __future__ import annotations

import json
import math
import sys
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from coflowlab import FluidSchedule, verify
from coflowlab.cli import (
    EXIT_NO_SOLUTION,
    main,
    schedule_from_dict,
    schedule_to_dict,
    solve_methods,
)
from coflowlab.exceptions import (
    InvalidInstanceError,
    InvalidScheduleError,
    ModelTooLargeError,
    SolverNotAvailableError,
)
from coflowlab.instances import write_json
from coflowlab.instances.examples import theory_i2, theory_i3, theory_i4
from coflowlab.registry import REGISTRY, AlgorithmEntry, Family
from coflowlab.solution import Solution, SolutionKind, schedule_solution
from coflowlab.solvers import SolverOptions, SolveStatus
from coflowlab.time_models import TimeModel


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def one_error_line(err: str) -> str:
    """The single line an error prints (no traceback)."""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("coflowlab: error: "), err
    return lines[0]


@dataclass
class Double:
    """A registry entry for a test double."""

    func: Any
    kind: SolutionKind = SolutionKind.EXACT
    model: TimeModel = TimeModel.FLUID
    summary: str = "test double"


def serial(instance, options=None, **params):
    """I3's optimum by hand: A (flow 0) and B (flow 1) in [0, 1), C (flows 2, 3) in [1, 2);
    Σ C_j = 1 + 1 + 2 = 4."""
    schedule = FluidSchedule.from_segments(
        instance.num_flows, flow=[0, 1, 2, 3], start=[0, 0, 1, 1], end=[1, 1, 2, 2], rate=[1.0] * 4
    )
    return schedule_solution(
        "serial", SolutionKind.EXACT, instance, schedule, None, runtime=0.0, order=(0, 1, 2)
    )


def no_schedule(instance, **kwargs):
    """Stopped before any schedule was found."""
    return Solution(
        "stuck", SolutionKind.EXACT, SolveStatus.TIME_LIMIT_NO_SOLUTION, math.nan, 2.5,
        math.nan, 0.01, instance, solver="highs",
    )  # fmt: skip


def raising(exc: Exception):
    def run_method(instance, **kwargs):
        raise exc

    return run_method


@pytest.fixture
def register(monkeypatch):
    """Registers a test double for the test's duration (removed afterwards)."""

    def add(name: str, double: Double) -> None:
        entry = AlgorithmEntry(
            name, Family(double.kind.value), double.func, double.model, double.summary
        )
        monkeypatch.setitem(REGISTRY.entries(), name, entry)

    return add


@pytest.fixture
def i3_file(tmp_path):
    path = tmp_path / "i3.json"
    write_json(theory_i3(), path)
    return path


def method_or_skip(name: str) -> None:
    try:
        solve_methods()[name].load()
    except (ImportError, AttributeError) as exc:
        pytest.skip(f"{name} is not written yet: {exc}")


# ----------------------------------------------------------------------------- --list


def test_list_has_one_line_per_method(capsys, register):
    """Tests that --list prints each registered method once: name, kind, model, summary
    (a method registered later shows up too)."""
    register("serial", Double(serial, summary="hand-made schedule of I3"))
    code, out, err = run(capsys, "solve", "--list")
    assert code == 0, err
    lines = out.strip().splitlines()
    methods = solve_methods()
    assert len(lines) == len(methods) and "serial" in methods
    for line, (name, entry) in zip(lines, methods.items(), strict=True):
        assert line.split()[:3] == [name, entry.family.value, entry.model.value]
        assert line.endswith(entry.summary)


# ----------------------------------------------------------------------------- output


def test_human_output_of_a_schedule(capsys, register, i3_file):
    """Tests the text output: method, status, objective (Σ w C of the verified schedule),
    bound, gap, runtime, order by labels, and one completion time per coflow label."""
    register("serial", Double(serial))
    code, out, err = run(capsys, "solve", str(i3_file), "--method", "serial")
    assert code == 0, err
    rows = dict(line.split(None, 1) for line in out.splitlines()[1:] if line.strip())
    assert out.splitlines()[0].startswith(f"{i3_file}: serial (exact, fluid model)")
    assert rows["status"] == "optimal"
    assert rows["objective"].split()[0] == "4"
    assert rows["order"] == "A, B, C"
    assert rows["runtime"].endswith(" s")
    table = out.split("coflow  completion")[1].split()
    assert table == ["A", "1", "B", "1", "C", "2"]


def test_human_output_labels_a_bound_as_lower_bound(capsys, tmp_path):
    """Tests that a bound's value is labelled 'lower bound' (I2: Smith's bound is OPT, 19)."""
    path = tmp_path / "i2.json"
    write_json(theory_i2(), path)
    code, out, err = run(capsys, "solve", str(path), "--method", "bound-smith")
    assert code == 0, err
    line = next(ln for ln in out.splitlines() if ln.startswith("lower bound"))
    assert line.split()[2] == "19"
    assert not any(ln.startswith("objective") for ln in out.splitlines())


def test_json_output_is_one_object_with_the_keys(capsys, register, i3_file):
    """Tests --json: exactly one JSON object with status, objective, bound, gap, runtime,
    completion times by label and the order by label."""
    register("serial", Double(serial))
    code, out, err = run(capsys, "solve", str(i3_file), "--method", "serial", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert isinstance(doc, dict) and out.strip().count("\n") == 0
    assert {"status", "objective", "bound", "gap", "runtime", "completion_times", "order"} <= set(
        doc
    )
    assert doc["status"] == "optimal" and doc["objective"] == 4.0
    assert doc["completion_times"] == {"A": 1.0, "B": 1.0, "C": 2.0}
    assert doc["order"] == ["A", "B", "C"]


def test_json_without_solution_is_strict_json(capsys, register, i3_file):
    """Tests that nan values print as null (strict JSON), the status says why, and a solve
    without a solution exits with EXIT_NO_SOLUTION and one line on stderr."""
    register("stuck", Double(no_schedule))
    code, out, err = run(capsys, "solve", str(i3_file), "--method", "stuck", "--json")
    assert code == EXIT_NO_SOLUTION == 3
    assert "time_limit_no_solution" in err and len(err.strip().splitlines()) == 1
    doc = json.loads(out, parse_constant=lambda c: pytest.fail(f"non-JSON constant {c}"))
    assert doc["status"] == "time_limit_no_solution"
    assert doc["objective"] is None and doc["bound"] == 2.5
    assert doc["completion_times"] is None


@pytest.mark.parametrize("data", ["sincronia_small.txt", "benchmark_small.txt"])
def test_reads_every_instance_format(capsys, data_dir, data):
    """Tests that FILE may be a Sincronia or coflow-benchmark trace, like the other
    commands; the bound printed is the one the method computes on the parsed instance."""
    from coflowlab.formulations import solve_method
    from coflowlab.instances import read_instance

    path = data_dir / data
    code, out, err = run(capsys, "solve", str(path), "--method", "bound-release-rho", "--json")
    assert code == 0, err
    expected = solve_method(read_instance(path), "bound-release-rho").objective
    assert json.loads(out)["objective"] == pytest.approx(expected)


# ----------------------------------------------------------------------------- -o


def test_schedule_file_round_trips_and_verifies(capsys, register, i3_file, tmp_path):
    """Tests that -o writes the verified schedule: read back, it verifies with the same
    completion times the command printed."""
    register("serial", Double(serial))
    target = tmp_path / "schedule.json"
    code, out, err = run(capsys, "solve", str(i3_file), "--method", "serial", "--json", "-o",
                         str(target))  # fmt: skip
    assert code == 0, err
    schedule = schedule_from_dict(json.loads(target.read_text()))
    report = verify(theory_i3(), schedule)
    assert report.feasible
    printed = json.loads(out)["completion_times"]
    assert report.coflow_completion.tolist() == [printed[k] for k in "ABC"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["i3.json", "schedule.json"]


@pytest.mark.parametrize(
    ("method", "instance", "optimum"),
    [("exact-fluid", theory_i4, 4.0), ("exact-slotted", theory_i3, 4.0)],
)
def test_registered_exact_methods_write_verifiable_schedules(
    capsys, tmp_path, method, instance, optimum
):
    """Tests -o with the real exact methods (docs/theory.md#instances: OPT 4 on I3 and I4): the
    file holds a schedule of the method's time model whose verified cost is the optimum."""
    method_or_skip(method)
    inst = instance()
    source, target = tmp_path / "inst.json", tmp_path / "out.json"
    write_json(inst, source)
    code, _, err = run(capsys, "solve", str(source), "--method", method, "-o", str(target))
    assert code == 0, err
    doc = json.loads(target.read_text())
    assert doc["model"] == solve_methods()[method].model.value
    report = verify(inst, schedule_from_dict(doc))
    assert report.feasible
    assert float(np.dot(inst.coflow_weight, report.coflow_completion)) == pytest.approx(optimum)


def test_schedule_document_rejects_foreign_documents():
    """Tests that schedule_from_dict refuses what schedule_to_dict did not write."""
    doc = schedule_to_dict(FluidSchedule(1, time=[0], flow=[0], rate=[1.0]))
    assert schedule_from_dict(doc).rate.tolist() == [1.0]
    for bad, match in (
        ({**doc, "format": "other"}, "not a coflowlab-schedule"),
        ({**doc, "version": 2}, "unsupported schedule version"),
        ({**doc, "model": "quantum"}, "unknown schedule model"),
        ({k: v for k, v in doc.items() if k != "rate"}, "lacks 'rate'"),
    ):
        with pytest.raises(InvalidScheduleError, match=match):
            schedule_from_dict(bad)


def test_output_for_a_bound_is_refused_before_solving(capsys, i3_file, tmp_path):
    """Tests that -o with a bound method is an error and writes nothing."""
    target = tmp_path / "s.json"
    code, _, err = run(capsys, "solve", str(i3_file), "--method", "bound-smith", "-o",
                       str(target))  # fmt: skip
    assert code == 1 and "lower bound, not a schedule" in one_error_line(err)
    assert not target.exists()


def test_output_without_schedule_prints_then_fails(capsys, register, i3_file, tmp_path):
    """Tests that a solve without a schedule prints its result, then fails on -o, leaving an
    existing file untouched."""
    register("stuck", Double(no_schedule))
    target = tmp_path / "s.json"
    target.write_text("previous")
    code, out, err = run(capsys, "solve", str(i3_file), "--method", "stuck", "-o", str(target))
    assert code == EXIT_NO_SOLUTION
    assert "time_limit_no_solution" in out
    assert "no schedule to write" in one_error_line(err)
    assert target.read_text() == "previous"


# ----------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("exc", "needle"),
    [
        (ModelTooLargeError("serial: needs 10^9 variables, limit 10^7; use exact-fluid"),
         "needs 10^9 variables"),
        (InvalidInstanceError("deadline-fluid: no coflow has a deadline"), "no coflow has"),
        (SolverNotAvailableError("Gurobi licence is size-limited; use --solver highs"),
         "size-limited"),
    ],
    ids=["too-large", "invalid-instance", "licence"],
)  # fmt: skip
def test_method_errors_are_one_line(capsys, register, i3_file, tmp_path, exc, needle):
    """Tests that the errors a method raises print one line and exit 1, writing nothing."""
    register("failing", Double(raising(exc)))
    target = tmp_path / "s.json"
    code, out, err = run(capsys, "solve", str(i3_file), "--method", "failing", "-o",
                         str(target))  # fmt: skip
    assert code == 1 and out == ""
    assert needle in one_error_line(err)
    assert not target.exists()


def test_unknown_method(capsys, i3_file):
    """Tests that an unknown method names the choices."""
    code, _, err = run(capsys, "solve", str(i3_file), "--method", "nope")
    assert code == 1
    line = one_error_line(err)
    assert "unknown method 'nope'" in line and "bound-smith" in line and "--list" in line


def test_missing_file(capsys, tmp_path):
    """Tests that a missing instance file is one error line."""
    code, _, err = run(capsys, "solve", str(tmp_path / "absent.json"), "--method", "bound-smith")
    assert code == 1 and "absent.json" in one_error_line(err)


def test_malformed_file(capsys, data_dir):
    """Tests that a malformed trace is one error line naming the file."""
    path = data_dir / "sincronia_bad_port.txt"
    code, _, err = run(capsys, "solve", str(path), "--method", "bound-smith")
    assert code == 1 and "sincronia_bad_port.txt" in one_error_line(err)


def test_missing_solver(capsys, i3_file, monkeypatch):
    """Tests that a backend that is not installed is an error (checked before solving),
    saying what to install."""
    monkeypatch.setitem(sys.modules, "gurobipy", None)
    code, _, err = run(capsys, "solve", str(i3_file), "--method", "lp-ov", "--solver",
                       "gurobi")  # fmt: skip
    assert code == 1
    line = one_error_line(err)
    assert "gurobipy" in line and "--solver highs" in line


@pytest.mark.parametrize(
    ("method", "argv", "flags"),
    [
        ("bound-smith", ["--time-limit", "5"], "--time-limit does not apply"),
        ("bound-release-rho", ["--log"], "--log does not apply"),
        ("primal-dual", ["--solver", "cbc"], "--solver does not apply"),
        ("order-sebf", ["--mip-gap", "0.1", "--threads", "2"], "--mip-gap, --threads do not"),
    ],
)
def test_solver_settings_for_a_method_that_solves_nothing(capsys, i3_file, method, argv, flags):
    """Tests that a solver setting given to a method that solves no LP or MIP is a one-line
    error naming the method and the options, before anything runs (never silently ignored)."""
    code, out, err = run(capsys, "solve", str(i3_file), "--method", method, *argv)
    assert code == 1 and out == ""
    line = one_error_line(err)
    assert f"method {method!r} solves no LP or MIP; {flags}" in line


def test_log_reaches_the_solver_through_the_options(capfd, i3_file):
    """Tests that --log, now one field of the SolverOptions the command builds, still turns
    the solver's log on: on standard error, with standard output one JSON object (LP-OV on
    I3 is 4, docs/theory.md#instances)."""
    for log, expect_log in ((["--log"], True), ([], False)):
        code = main(["solve", str(i3_file), "--method", "lp-ov", "--json", *log])
        out, err = capfd.readouterr()
        assert code == 0, err
        assert json.loads(out)["objective"] == pytest.approx(4.0)
        assert bool(err.strip()) is expect_log, err


def test_default_solver_settings_are_no_error_for_a_bound(capsys, tmp_path):
    """Tests that spelling out the defaults (--solver highs, --mip-gap 1e-6) is not a
    setting the bound would ignore: I2's Smith bound, 19, is printed as usual."""
    path = tmp_path / "i2.json"
    write_json(theory_i2(), path)
    code, out, err = run(capsys, "solve", str(path), "--method", "bound-smith", "--solver",
                         "highs", "--mip-gap", "1e-6", "--json")  # fmt: skip
    assert code == 0, err
    assert json.loads(out)["objective"] == 19.0


def test_needs_file_and_method(capsys, i3_file):
    """Tests that solve without FILE or --method (and without --list) is an error."""
    code, _, err = run(capsys, "solve", str(i3_file))
    assert code == 1 and "solve needs FILE and --method" in one_error_line(err)


@pytest.mark.parametrize(
    "argv",
    [
        ["--time-limit", "0"],
        ["--time-limit", "abc"],
        ["--mip-gap", "1"],
        ["--threads", "0"],
        ["--solver", "cplex"],
    ],
)
def test_bad_options_are_usage_errors(capsys, i3_file, argv):
    """Tests that invalid option values are argparse usage errors (exit 2)."""
    with pytest.raises(SystemExit) as exc:
        main(["solve", str(i3_file), "--method", "bound-smith", *argv])
    assert exc.value.code == 2
    assert "usage:" in capsys.readouterr().err


# ----------------------------------------------------------------------------- --param


def test_params_reach_the_method_converted(capsys, register, i3_file):
    """Tests that --param values reach the method, converted by its annotations (or read
    as literals when it takes **params), and that the solver options arrive as one
    SolverOptions built from --time-limit, --mip-gap and --threads."""
    seen: dict[str, Any] = {}

    def typed(instance, options=None, *, rounds: int = 1, ratio: float = 1.0,
              exact: bool = False, **params):  # fmt: skip
        seen.update(rounds=rounds, ratio=ratio, exact=exact, options=options, **params)
        return serial(instance)

    register("typed", Double(typed))
    code, _, err = run(
        capsys, "solve", str(i3_file), "--method", "typed", "--param", "rounds=3",
        "--param", "ratio=2", "--param", "exact=true", "--param", "name=x1",
        "--param", "flag=false", "--time-limit", "5", "--mip-gap", "0.01", "--threads", "2",
    )  # fmt: skip
    assert code == 0, err
    assert seen == {
        "rounds": 3, "ratio": 2.0, "exact": True, "name": "x1", "flag": False,
        "options": SolverOptions(solver="highs", time_limit=5.0, mip_gap=0.01, threads=2),
    }  # fmt: skip
    assert isinstance(seen["ratio"], float)


def test_bad_params_are_one_line(capsys, register, i3_file):
    """Tests --param errors: a value that does not convert, a solver option given as a
    parameter, a parameter the method does not take."""

    def strict(instance, options=None, *, rounds: int = 1):
        return serial(instance)

    register("strict", Double(strict))
    for param, needle in (
        ("rounds=many", "'many' is not an integer"),
        ("mip_gap=0.1", "use the option --mip-gap"),
        ("options=x", "solver settings have options of their own"),
        ("colour=red", "has no parameter 'colour'; it takes: rounds"),
        ("rounds", "expects KEY=VALUE"),
    ):
        code, _, err = run(capsys, "solve", str(i3_file), "--method", "strict", "--param", param)
        assert code == 1 and needle in one_error_line(err), (param, err)


@pytest.mark.parametrize("method", ["lp-ov", "interval-lp", "parallel-lp", "exact-fluid"])
def test_registered_methods_reject_a_misspelt_param(capsys, i3_file, method):
    """Tests that a registered method refuses a parameter it does not take (a typo is not
    silently ignored)."""
    code, _, err = run(capsys, "solve", str(i3_file), "--method", method, "--param", "bogus=1")
    assert code == 1 and "has no parameter 'bogus'" in one_error_line(err)


# ----------------------------------------------------------------------------- approximations
def test_approximations_are_listed_after_the_formulations(capsys):
    """Tests that the approximation registry joins ``solve --list`` (issue: every algorithm
    runs through ``coflowlab solve``)."""
    code, out, _ = run(capsys, "solve", "--list")
    names = [line.split()[0] for line in out.strip().splitlines()]
    assert code == 0
    for name in ("primal-dual", "sincronia", "lp-ov-ls", "order-fifo", "order-smith"):
        assert name in names
    assert names.index("primal-dual") > names.index("bound-smith")


def test_approximation_json_carries_bound_guarantee_and_ratio(capsys, i3_file):
    """Tests the JSON of an approximation: the verified objective (I3's PD order costs 5), the
    certified bound and its source, the guarantee and the ratio objective / bound."""
    code, out, err = run(capsys, "solve", str(i3_file), "--method", "primal-dual", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["kind"] == "approximation" and doc["status"] == "feasible"
    assert doc["objective"] == 5.0 and doc["order"] == ["B", "C", "A"]
    assert doc["bound_source"] == "dual" and doc["guarantee"]["factor"] == 4.0
    assert doc["ratio"] == pytest.approx(doc["objective"] / doc["bound"])
    assert doc["bound"] <= 4.0 + 1e-9  # I3's OPT


def test_approximation_human_output_and_schedule_file(capsys, i3_file, tmp_path):
    """Tests the text output (ratio and guarantee rows) and that -o writes a schedule the
    verifier accepts, for Sincronia with MADD."""
    out_file = tmp_path / "s.json"
    code, out, err = run(
        capsys, "solve", str(i3_file), "--method", "sincronia", "--param", "allocation=madd",
        "-o", str(out_file),
    )  # fmt: skip
    assert code == 0, err
    assert "certified lower bound: dual" in out and "ratio" in out and "Sincronia" in out
    schedule = schedule_from_dict(json.loads(out_file.read_text()))
    assert verify(theory_i3(), schedule).feasible


@pytest.mark.parametrize("method", ["primal-dual", "sincronia", "lp-ov-ls", "order-tcf"])
def test_approximations_reject_a_misspelt_param(capsys, i3_file, method):
    """Tests that approximation methods refuse parameters they do not take."""
    code, _, err = run(capsys, "solve", str(i3_file), "--method", method, "--param", "bogus=1")
    assert code == 1 and "has no parameter 'bogus'" in one_error_line(err)


def test_approximation_bad_param_value_is_one_line(capsys, i3_file):
    """Tests that an unknown allocation is a one-line error naming the choices."""
    code, _, err = run(
        capsys, "solve", str(i3_file), "--method", "sincronia", "--param", "allocation=fair"
    )
    assert (
        code == 1
        and "parameter allocation: 'fair' is not one of greedy, madd" in one_error_line(err)
    )


def test_seed_param_is_converted_and_reproducible(capsys, i3_file):
    """Tests that ``--param seed=N`` reaches a randomized method as an integer (its annotation
    is a union) and that the same seed gives the same result."""
    outs = []
    for _ in range(2):
        code, out, err = run(
            capsys, "solve", str(i3_file), "--method", "qsz-random", "--param", "seed=5", "--json"
        )
        assert code == 0, err
        outs.append(json.loads(out))
    assert outs[0]["objective"] == outs[1]["objective"]
    assert outs[0]["details"]["offset"] == outs[1]["details"]["offset"]
    code, _, err = run(
        capsys, "solve", str(i3_file), "--method", "qsz-random", "--param", "seed=x"
    )
    assert code == 1 and "'x' is not an integer" in one_error_line(err)
