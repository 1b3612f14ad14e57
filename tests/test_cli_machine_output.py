"""Tests that the command line behaves as a Unix tool: standard output carries only the result
(``--json`` is one parseable object, with provenance), errors are one line in the CLI's words,
``| head`` and Ctrl-C end quietly with the documented exit codes, and bare file names are found
in ``$COFLOWLAB_DATA``."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from coflowlab import Coflow, Instance, __version__
from coflowlab.cli import EXIT_BROKEN_PIPE, EXIT_INTERRUPTED, main, solve_methods
from coflowlab.instances import fb_like, write_json
from coflowlab.provenance import file_sha256

REPO = Path(__file__).resolve().parents[1]


def cli(*argv: str, timeout: float = 300, **kw) -> subprocess.CompletedProcess:
    """Runs ``python -m coflowlab`` in a new process (so output written by compiled solvers
    to file descriptor 1 is seen, as a user would see it)."""
    return subprocess.run(
        [sys.executable, "-m", "coflowlab", *argv],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=kw.pop("cwd", REPO),
        **kw,
    )


@pytest.fixture
def small_file(tmp_path) -> Path:
    """Three coflows on two ports with integer sizes, releases, weights and one deadline: every
    registered method accepts it."""
    inst = Instance.from_coflows(
        [
            Coflow([(0, 0, 2.0), (1, 1, 1.0)], weight=2.0, deadline=4.0),
            Coflow([(0, 1, 1.0)], release=1.0),
            Coflow([(1, 0, 3.0), (0, 0, 1.0)]),
        ],
        2,
    )
    path = tmp_path / "small.json"
    write_json(inst, path)
    return path


def test_highs_method_prints_pure_json_in_a_subprocess(small_file):
    """Tests that a HiGHS-backed method's --json stdout is exactly one JSON object (no solver
    banner) and carries provenance: input hash, method, solver and versions."""
    proc = cli("solve", str(small_file), "--method", "lp-ov", "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["status"] == "optimal"
    prov = doc["provenance"]
    assert prov["input"] == {"path": str(small_file), "sha256": file_sha256(small_file)}
    assert prov["algorithm"] == "lp-ov" and prov["command"] == "solve"
    assert prov["solver"]["name"] == "highs" and prov["solver"]["version"]
    assert prov["coflowlab_version"] == __version__


def test_text_output_has_no_solver_banner(small_file):
    """Tests that the human-readable output of a HiGHS method starts with the file's name,
    not with a solver's banner."""
    proc = cli("solve", str(small_file), "--method", "exact-slotted")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"{small_file}: exact-slotted"), proc.stdout[:200]
    assert "HiGHS" not in proc.stdout


@pytest.mark.parametrize("method", sorted(solve_methods()))
def test_every_method_json_parses(capfd, small_file, method):
    """Tests that --json of every registered method is one strict-JSON object on stdout
    (captured at the file-descriptor level, so compiled code's output would show)."""
    # a time limit only for the methods that solve an LP or MIP (the others refuse one)
    limit = ["--time-limit", "60"] if solve_methods()[method].takes_options() else []
    code = main(["solve", str(small_file), "--method", method, "--json", *limit])
    out, err = capfd.readouterr()
    assert code == 0, err
    doc = json.loads(out, parse_constant=lambda c: pytest.fail(f"non-JSON constant {c}"))
    assert doc["method"] == method
    assert doc["provenance"]["algorithm"] == method


def test_simulate_json_keys_agree_between_time_models(capsys, tmp_path):
    """Tests that the exact and CoflowSim models print the same summary keys."""
    path = tmp_path / "fb.json"
    write_json(fb_like(6, num_ports=8, seed=2), path)
    keys = []
    for model in ("exact", "coflowsim"):
        assert (
            main(["simulate", str(path), "--policy", "varys", "--time-model", model, "--json"])
            == 0
        )
        doc = json.loads(capsys.readouterr().out)
        assert doc["provenance"]["time_model"] == model
        assert doc["wall_time"] >= 0 and doc["total_cct"] > 0
        keys.append(set(doc))
    assert keys[0] == keys[1]


def test_list_into_a_closed_pipe_ends_quietly():
    """Tests that `coflowlab solve --list | head -1` ends without an error message: the
    reader has gone before the command writes, and the exit status is 128 + SIGPIPE."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "coflowlab", "solve", "--list"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=REPO,
    )
    proc.stdout.close()  # the reader goes away at once, like `head` after its line
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == EXIT_BROKEN_PIPE, err
    assert err == b""


def test_version(capsys):
    """Tests that --version prints the package version and exits 0."""
    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0
    assert capsys.readouterr().out.strip() == f"coflowlab {__version__}"


def test_ctrl_c_during_simulate_exits_130_without_traceback(tmp_path):
    """Tests that SIGINT during a long simulation ends it with status 130 and one line on
    stderr, no traceback."""
    path = tmp_path / "fb.json"
    write_json(fb_like(400, seed=1), path)
    # the child says when the package has loaded and its kernels are compiled (a run on the
    # first coflow), so that the interrupt reaches neither the imports (a fixed sleep raced
    # them on a loaded machine) nor numba's first compilation: there the interrupt can be
    # raised inside a ctypes callback of llvmlite (ExecutionEngine._raw_object_cache_notify),
    # where Python reports it as "Exception ignored" and drops it, and the child runs on
    # (about 1 run in 20 with the fair kernel's numba cache deleted); 5 s more into the
    # simulation, which runs for several seconds more
    script = (
        "import sys; from coflowlab.cli import main; from coflowlab import simulate; "
        "from coflowlab.heuristics import make_policy; from coflowlab.instances import "
        "read_instance; i = read_instance(sys.argv[2]).subset([0]); "
        "simulate(i, make_policy('fair', i), record=False); "
        "print('loaded', file=sys.stderr, flush=True); sys.exit(main(sys.argv[1:]))"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", script, "simulate", str(path), "--policy", "fair"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
    )
    assert proc.stderr is not None
    assert proc.stderr.readline().strip() == "loaded"
    time.sleep(5.0)
    if proc.poll() is not None:
        pytest.fail(f"the simulation ended before the interrupt: {proc.returncode}")
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=120)
    assert proc.returncode == EXIT_INTERRUPTED, err
    assert "Traceback" not in err
    assert err.strip().splitlines() == ["coflowlab: interrupted"]


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["info", "{f}", "--ports", "abc"], "argument --ports: 'abc' is not an integer"),
        (["info", "{f}", "--top", "x"], "argument --top: 'x' is not an integer"),
        (
            ["simulate", "{f}", "--policy", "varys", "--deadlines", "-1"],
            "argument --deadlines: must be finite and at least 0",
        ),
    ],
)
def test_usage_errors_speak_in_option_names(capsys, small_file, argv, needle):
    """Tests that bad option values are reported by option name, with status 2."""
    with pytest.raises(SystemExit) as stop:
        main([a.format(f=small_file) for a in argv])
    assert stop.value.code == 2
    assert needle in capsys.readouterr().err


def test_param_on_a_policy_without_parameters(capsys, small_file):
    """Tests that --param on a policy that takes none says so, instead of an empty list."""
    code = main(["simulate", str(small_file), "--policy", "fair", "--param", "x=1"])
    err = capsys.readouterr().err
    assert code == 1
    assert "it takes no parameters" in err and "it takes: " not in err


def test_deadline_policy_without_deadlines_warns(capsys, tmp_path):
    """Tests that varys-deadline on an instance without deadlines warns on stderr."""
    path = tmp_path / "nodl.json"
    write_json(fb_like(5, num_ports=8, seed=0), path)
    assert main(["simulate", str(path), "--policy", "varys-deadline"]) == 0
    err = capsys.readouterr().err
    assert err.startswith("coflowlab: warning: no coflow") and "--deadlines" in err


def test_bare_name_is_found_in_coflowlab_data(capsys, tmp_path, monkeypatch, small_file):
    """Tests that a bare file name missing from the working directory is read from
    $COFLOWLAB_DATA, and that a name found nowhere is one error line naming the folders."""
    data = tmp_path / "data"
    data.mkdir()
    (data / "mine.json").write_bytes(small_file.read_bytes())
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    monkeypatch.setenv("COFLOWLAB_DATA", str(data))
    assert main(["info", "mine.json"]) == 0
    assert capsys.readouterr().out.startswith(f"{data / 'mine.json'}: 3 coflows")
    assert main(["info", "absent.json"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("coflowlab: error: absent.json: no such file") and str(data) in err


def test_unitless_bins_are_not_labelled_megabytes(capsys, small_file):
    """Tests that the bin rule printed for an instance without units does not claim MB."""
    assert main(["simulate", str(small_file), "--policy", "fair"]) == 0
    out = capsys.readouterr().out
    assert "longest flow < 5 size units" in out and "< 5 MB" not in out


def test_verify_command_reads_a_solve_schedule_back(capsys, small_file, tmp_path):
    """Tests that `verify` accepts the schedule `solve -o` wrote, with the same objective,
    and rejects a tampered one with status 3 and the violation named."""
    sched = tmp_path / "s.json"
    assert (
        main(["solve", str(small_file), "--method", "order-smith", "-o", str(sched), "--json"])
        == 0
    )
    solved = json.loads(capsys.readouterr().out)
    assert main(["verify", str(small_file), str(sched), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["feasible"] is True
    assert report["objective"] == pytest.approx(solved["objective"], rel=1e-12)
    doc = json.loads(sched.read_text())
    doc["rate"] = [2 * r for r in doc["rate"]]  # twice the rates: ports over capacity
    sched.write_text(json.dumps(doc))
    assert main(["verify", str(small_file), str(sched)]) == 3
    out = capsys.readouterr().out
    assert "infeasible" in out and "capacity" in out


def test_verify_names_a_broken_schedule_file(capsys, small_file, tmp_path):
    """Tests that a schedule file that is not JSON is one error line naming it and the line."""
    sched = tmp_path / "bad.json"
    sched.write_text("{\n  oops")
    assert main(["verify", str(small_file), str(sched)]) == 1
    err = capsys.readouterr().err
    assert f"{sched}: line 2" in err and "Traceback" not in err


def test_ctrl_c_during_solve_prints_the_incumbent_and_exits_130(tmp_path):
    """Tests that SIGINT during a long MIP stops it: stdout is the JSON result with status
    interrupted and a schedule (the MIP starts from a list schedule), and the exit is 130."""
    from coflowlab.instances import uniform

    path = tmp_path / "u8.json"
    write_json(uniform(4, 8, seed=1), path)  # its slotted MIP runs for minutes
    proc = subprocess.Popen(
        [sys.executable, "-m", "coflowlab", "solve", str(path), "--method", "exact-slotted",
         "--json", "--log"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
    )  # fmt: skip
    # interrupt once HiGHS runs (its banner is the log's first line; the list-schedule
    # incumbent is built before): a fixed sleep raced the start-up on a loaded machine
    assert proc.stderr is not None
    first = proc.stderr.readline()
    assert "HiGHS" in first, first
    time.sleep(0.5)
    if proc.poll() is not None:
        pytest.fail(f"the solve ended before the interrupt: {proc.returncode}")
    proc.send_signal(signal.SIGINT)
    try:
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == EXIT_INTERRUPTED, err
    doc = json.loads(out)
    assert doc["status"] == "interrupted" and doc["objective"] > 0
    assert "Traceback" not in err


def test_simulate_fairness_flag_prints_and_returns_the_metrics(capsys, tmp_path):
    """Tests --fairness on Fig. 3.2's lone shuffle: MADD gives the coflow its whole
    bottleneck, so its progress, hence the isolation guarantee, is 1 throughout; per-flow
    fairness does not (its bottleneck link is shared by flows of unequal size)."""
    from coflowlab.instances.examples import fig_3_2

    path = tmp_path / "f.json"
    write_json(fig_3_2(), path)
    assert main(["simulate", str(path), "--policy", "varys", "--fairness", "--json"]) == 0
    fair = json.loads(capsys.readouterr().out)["fairness"]
    assert fair["min_isolation_guarantee"] == pytest.approx(1.0)
    assert fair["jain_index"] == pytest.approx(1.0)
    # per-flow fairness: ingress 2 carries 4 of the coflow's bottleneck 4 (normalized demand
    # 1) but its two flows get 1/3 each at the start (each egress is split three ways)
    assert main(["simulate", str(path), "--policy", "fair", "--fairness", "--json"]) == 0
    fair = json.loads(capsys.readouterr().out)["fairness"]
    assert fair["min_isolation_guarantee"] == pytest.approx(2 / 3)
    assert main(["simulate", str(path), "--policy", "fair", "--fairness"]) == 0
    out = capsys.readouterr().out
    assert "isolation guarantee  min 0.6667" in out and "Jain index" in out


def test_coda_reports_its_identification(capsys, tmp_path):
    """Tests that a policy that identifies coflows (CODA) gets its precision and recall
    printed: two coflows on disjoint ports released 1000 time units apart are told apart
    exactly (precision = recall = 1)."""
    inst = Instance.from_coflows(
        [
            Coflow([(0, 0, 2.0), (1, 1, 3.0)]),
            Coflow([(2, 2, 1.0), (3, 3, 2.0)], release=1000.0),
        ],
        4,
    )
    path = tmp_path / "two.json"
    write_json(inst, path)
    assert main(["simulate", str(path), "--policy", "coda", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["identification"] == {"precision": 1.0, "recall": 1.0}
    assert main(["simulate", str(path), "--policy", "coda"]) == 0
    assert "coflow identification: precision 1.000, recall 1.000" in capsys.readouterr().out
    argv = ["simulate", str(path), "--policy", "fair", "--hide-labels", "--time-model"]
    assert main([*argv, "coflowsim"]) == 1  # CoflowSim's model always sees the coflows
    assert "cannot hide coflow labels" in capsys.readouterr().err
