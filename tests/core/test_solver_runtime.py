"""Tests of the solver layer's run-time behaviour: nothing on standard output (logs on
standard error), starting solutions, graceful interrupts (status ``interrupted``, exit 130
in a CLI-like script) and progress reports.

Subprocess tests run a fresh interpreter (HiGHS prints its banner once per process) and are
bounded: every child is killed after :data:`LIMIT` seconds whatever happens.
"""

from __future__ import annotations

import importlib.machinery
import inspect
import json
import math
import os
import selectors
import signal
import subprocess
import sys
import textwrap
import time
import types
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from coflowlab.exceptions import SolverError
from coflowlab.formulations.time_indexed import solve_exact_slotted
from coflowlab.instances import uniform
from coflowlab.schedules import SlottedSchedule
from coflowlab.solvers import (
    LinearModel,
    ModelBuilder,
    SolveProgress,
    SolverOptions,
    SolveStatus,
    interrupt_requested,
    interruptible,
    request_interrupt,
    solve,
    stderr_progress,
)
from coflowlab.solvers import gurobi_backend as grb
from coflowlab.verifier import verify

REPO = Path(__file__).resolve().parents[2]
LIMIT = 60.0  # seconds after which a child process is killed, whatever its state
FEAS_TOL = 1e-6


# ----------------------------------------------------------------------------- models


def toy_mip() -> LinearModel:
    """max x0 + x1, x0 + 2 x1 ≤ 3.5, integers in [0, 10]: optimum -3 at (3, 0)."""
    b = ModelBuilder("toy-mip")
    b.add_variables("x", 2, cost=[-1.0, -1.0], upper=10.0, integer=True)
    b.add_rows("cap", sp.csr_matrix([[1.0, 2.0]]), upper=[3.5])
    return b.build()


def market_split(rows: int, cols: int, seed: int = 0) -> tuple[LinearModel, np.ndarray]:
    """Equality knapsacks with a planted 0/1 solution (Cornuéjols–Dawande): feasible, and
    far too hard to finish in seconds. Returns the model and the planted point."""
    rng = np.random.default_rng(seed)
    A = rng.integers(0, 100, (rows, cols)).astype(float)
    plant = rng.integers(0, 2, cols).astype(float)
    b = ModelBuilder("market-split")
    b.add_variables("x", cols, cost=rng.integers(1, 50, cols), upper=1.0, integer=True)
    b.add_rows("split", sp.csr_matrix(A), lower=A @ plant, upper=A @ plant)
    return b.build(), plant


MARKET_SPLIT = (
    "import numpy as np\nimport scipy.sparse as sp\n"
    "from coflowlab.solvers import LinearModel, ModelBuilder\n" + inspect.getsource(market_split)
)
"""The same generator, as source for the child processes."""


def run_child(script: str, *, interrupt_after: float | None = None) -> tuple[int, str, str]:
    """Runs ``script`` in a fresh interpreter; returns (exit code, stdout, stderr). With
    ``interrupt_after``, sends SIGINT that many seconds after the child writes the line
    ``solving`` on stderr. The child is killed after :data:`LIMIT` seconds in any case."""
    proc = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(script)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + LIMIT
    try:
        head = b""
        if interrupt_after is not None:
            assert proc.stderr is not None
            sel = selectors.DefaultSelector()
            sel.register(proc.stderr, selectors.EVENT_READ)
            while b"solving\n" not in head and time.monotonic() < deadline:
                if sel.select(timeout=0.5):
                    chunk = os.read(proc.stderr.fileno(), 4096)
                    if not chunk:
                        break
                    head += chunk
            assert b"solving\n" in head, head.decode(errors="replace")
            time.sleep(interrupt_after)
            proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=max(1.0, deadline - time.monotonic()))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return proc.returncode, out.decode(), (head + err).decode(errors="replace")


# ----------------------------------------------------------------------------- silence


SILENT_SCRIPT = """
import json, sys
import numpy as np, scipy.sparse as sp
from coflowlab.formulations.lp_ov import solve_lp_ov
from coflowlab.formulations.time_indexed import solve_exact_slotted
from coflowlab.instances import uniform
from coflowlab.solvers import ModelBuilder, SolverOptions, solve

log = sys.argv[1] == "log"
b = ModelBuilder("toy")
b.add_variables("x", 2, cost=[-1.0, -1.0], upper=10.0, integer=True)
b.add_rows("cap", sp.csr_matrix([[1.0, 2.0]]), upper=[3.5])
mip = solve(b.build(), SolverOptions(log=log))
lp = solve(b.build().relaxed(), SolverOptions(log=log))
inst = uniform(3, 3, seed=2)
slotted = solve_exact_slotted(inst, SolverOptions(log=log))
relaxation = solve_lp_ov(inst, SolverOptions(log=log))
print(json.dumps({"mip": mip.objective, "lp": lp.objective, "slotted": slotted.objective,
                  "lp_ov": relaxation.objective}))
"""


@pytest.mark.parametrize("log", [False, True], ids=["quiet", "log"])
def test_highs_writes_nothing_on_stdout(log):
    """Tests, in a fresh process (HiGHS prints its banner at the first Highs() of a
    process), that a MIP, an LP and two formulations solved by HiGHS leave standard output
    to the script: it is exactly the JSON line printed. Quiet, standard error is empty;
    with ``log``, HiGHS's banner and log are there instead."""
    script = SILENT_SCRIPT.replace("sys.argv[1]", repr("log" if log else "quiet"))
    code, out, err = run_child(script)
    assert code == 0, err
    data = json.loads(out)  # the whole of stdout is one JSON object
    assert out.count("\n") == 1
    assert data["mip"] == pytest.approx(-3.0) and data["lp"] == pytest.approx(-3.5)
    if log:
        assert "Running HiGHS" in err and "Model status" in err
    else:
        assert "HiGHS" not in err, err


def test_cli_solve_json_is_parseable(tmp_path):
    """Tests the reported command: ``coflowlab solve FILE --method lp-ov --json`` prints
    one JSON object on standard output and nothing else (the HiGHS banner was first)."""
    inst = tmp_path / "u8.json"
    gen = subprocess.run(
        [sys.executable, "-m", "coflowlab", "generate", "uniform", "--ports", "4",
         "--coflows", "8", "--seed", "1", "-o", str(inst)],
        cwd=REPO, capture_output=True, text=True, timeout=LIMIT,
    )  # fmt: skip
    assert gen.returncode == 0, gen.stderr
    res = subprocess.run(
        [sys.executable, "-m", "coflowlab", "solve", str(inst), "--method", "lp-ov", "--json"],
        cwd=REPO, capture_output=True, text=True, timeout=LIMIT,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["status"] == "optimal"
    assert "HiGHS" not in res.stdout


@pytest.mark.parametrize("log", [False, True], ids=["quiet", "log"])
def test_backends_write_nothing_on_stdout(solver_backend, log, capfd):
    """Tests every installed backend in this process, at the file-descriptor level (CBC is
    a child process): nothing on stdout; the log on stderr exactly when asked for."""
    res = solve(toy_mip(), SolverOptions(solver=solver_backend, log=log))
    assert res.status is SolveStatus.OPTIMAL
    out, err = capfd.readouterr()
    assert out == ""
    if log:
        assert err.strip(), "log=True wrote no log on stderr"
    else:
        assert err == ""


# ----------------------------------------------------------------------------- starts


def test_start_is_checked():
    """Tests that a start of the wrong length or with an infinite value is refused with a
    message naming the model and the index."""
    with pytest.raises(SolverError, match=r"'toy-mip': start has shape \(3,\), expected \(2,\)"):
        solve(toy_mip(), start=[1.0, 0.0, 0.0])
    with pytest.raises(SolverError, match=r"'toy-mip': start\[1\] is inf"):
        solve(toy_mip(), start=[1.0, math.inf])


@pytest.mark.parametrize("partial", [False, True], ids=["full", "partial"])
def test_start_does_not_change_the_optimum(solver_backend, partial):
    """Tests that a feasible start (x = (1, 1), value -2; partial: x0 = 1 only) leaves the
    optimum -3 at (3, 0) found and proven."""
    start = [1.0, math.nan] if partial else [1.0, 1.0]
    res = solve(toy_mip(), SolverOptions(solver=solver_backend), start=start)
    assert res.status is SolveStatus.OPTIMAL
    assert res.objective == pytest.approx(-3.0) and res.bound == pytest.approx(-3.0)


def test_start_is_an_incumbent_at_a_tiny_time_limit(solver_backend):
    """Tests a market-split MIP (far too hard for 0.05 s) with its planted solution as the
    start: the time limit returns an incumbent (status time_limit, never
    time_limit_no_solution), feasible, no worse than the start, above its bound."""
    model, plant = market_split(6, 60)
    res = solve(model, SolverOptions(solver=solver_backend, time_limit=0.05), start=plant)
    assert res.status in (SolveStatus.TIME_LIMIT, SolveStatus.OPTIMAL), res.message
    assert res.x is not None and model.violation(res.x) <= FEAS_TOL
    assert res.objective <= model.value(plant) + 1e-9
    assert res.objective == pytest.approx(model.value(res.x), rel=1e-9)
    assert res.bound <= res.objective + 1e-9


def test_model_violation_measures_rows_bounds_and_integrality():
    """Tests LinearModel.violation on hand-computed points of the toy MIP
    (x0 + 2 x1 ≤ 3.5, 0 ≤ x ≤ 10, integral)."""
    m = toy_mip()
    assert m.violation([3.0, 0.0]) == 0.0
    assert m.violation([2.0, 1.0]) == pytest.approx(0.5)  # row: 4 > 3.5
    assert m.violation([11.0, 0.0]) == pytest.approx(7.5)  # row 11 > 3.5 beats bound 1
    assert m.violation([0.25, 0.0]) == pytest.approx(0.25)  # integrality
    assert m.violation([0.0, -2.0]) == pytest.approx(2.0)  # lower bound
    assert m.violation([math.nan, 0.0]) == math.inf


def _slotted_model(instance):
    """The exact-slotted model, grid and start the formulation builds (captured from its
    call to ``solve``, which is replaced by one that returns no solution)."""
    import coflowlab.formulations.time_indexed as ti

    seen = {}
    real_model = ti._time_indexed_model

    def capture_model(*args, **kwargs):
        model, grid = real_model(*args, **kwargs)
        seen["grid"] = grid
        return model, grid

    def capture_solve(model, options=None, **kwargs):
        seen["model"], seen["start"] = model, kwargs.get("start")
        return solve(model, SolverOptions(time_limit=1e-3, solver="highs"))

    mp = pytest.MonkeyPatch()
    mp.setattr(ti, "_time_indexed_model", capture_model)
    mp.setattr(ti, "solve", capture_solve)
    try:
        sol = ti.solve_exact_slotted(instance)
    finally:
        mp.undo()
    return seen["model"], seen["grid"], seen["start"], sol


@pytest.mark.parametrize(
    "make",
    [
        lambda: uniform(4, 8, seed=1),
        lambda: uniform(3, 6, seed=5, release_rate=0.5),
        lambda: uniform(3, 5, seed=7, weights=(1, 5)),
    ],
    ids=["u8", "releases", "weights"],
)
def test_slotted_start_is_a_feasible_list_schedule(make):
    """Tests the exact-slotted MIP's start on instances with and without releases and
    weights: it satisfies every row, bound and integrality of the model; its value is the
    verified Σ w C of the slotted schedule its z values describe (decoded here, checked by
    the independent verifier) and the start cost recorded in details."""
    instance = make()
    model, grid, start, sol = _slotted_model(instance)
    assert start is not None
    assert model.violation(start) <= 1e-9
    amount = start[model.blocks["z"]]
    sent = amount > 0.5
    schedule = SlottedSchedule(
        instance.num_flows, grid.slot[sent], grid.flow[sent], np.rint(amount[sent])
    )
    report = verify(instance, schedule)
    assert report.feasible, report.summary(limit=3)
    cost = float(np.dot(instance.coflow_weight, report.coflow_completion))
    assert model.value(start) == pytest.approx(cost, rel=1e-12)
    assert sol.details["start_objective"] == pytest.approx(cost, rel=1e-12)


def test_exact_slotted_returns_a_schedule_at_a_tiny_time_limit():
    """Tests the reported case, uniform(4, 8, seed=1): even with a 0.01 s time limit the
    MIP returns a verified schedule (status time_limit, not time_limit_no_solution) no
    worse than its start; the fluid optimum 479 (README) is a lower bound on it."""
    sol = solve_exact_slotted(uniform(4, 8, seed=1), SolverOptions(time_limit=0.01))
    assert sol.status is SolveStatus.TIME_LIMIT, sol.message
    assert sol.report is not None and sol.report.feasible
    assert 479 - 1e-6 <= sol.objective <= sol.details["start_objective"] + 1e-9


# ----------------------------------------------------------------------------- interrupts


def test_interrupt_flag_outside_and_inside_a_block():
    """Tests the flag's scope: off outside any block (request_interrupt then does nothing),
    set by request_interrupt inside one, kept by the control after the block, and cleared
    for the next block."""
    assert not interrupt_requested() and request_interrupt() is False
    with interruptible() as control:
        assert not interrupt_requested()
        assert request_interrupt() is True
        assert interrupt_requested()
    assert control.interrupted and not interrupt_requested()
    with interruptible() as again:
        assert not again.interrupted


def test_first_sigint_sets_the_flag_second_raises():
    """Tests the handler: the first SIGINT only sets the flag (no KeyboardInterrupt), the
    second raises KeyboardInterrupt; the previous handler is back after the block."""
    before = signal.getsignal(signal.SIGINT)
    with pytest.raises(KeyboardInterrupt), interruptible() as control:
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.01)  # let the handler run
        assert control.interrupted and control.sigints == 1
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(1.0)  # the handler raises here
    assert signal.getsignal(signal.SIGINT) is before


def test_interrupted_mip_returns_its_start_and_bound():
    """Tests an interrupt requested before a HiGHS MIP (market split, planted start): the
    solve stops at once with status interrupted, a feasible incumbent no worse than the
    start, and a bound below it."""
    model, plant = market_split(6, 60)
    with interruptible() as control:
        control.request_interrupt()
        t0 = time.perf_counter()
        res = solve(model, SolverOptions(time_limit=30), start=plant)
    assert time.perf_counter() - t0 < 20
    assert res.status is SolveStatus.INTERRUPTED and res.has_solution
    assert model.violation(res.x) <= FEAS_TOL
    assert res.objective <= model.value(plant) + 1e-9 and res.bound <= res.objective + 1e-9


def test_uninterruptible_solve_ignores_the_flag():
    """Tests ``interruptible=False``: an interrupted block still solves the toy MIP to
    optimality (the re-evaluation case)."""
    with interruptible() as control:
        control.request_interrupt()
        res = solve(toy_mip(), interruptible=False)
    assert res.status is SolveStatus.OPTIMAL and res.objective == pytest.approx(-3.0)


def test_exact_fluid_branch_and_bound_stops_on_the_flag():
    """Tests the Python branch and bound of exact-fluid on uniform(4, 6, seed=12), whose
    heuristic (223: its chain order (2, 1, 3, 4, 5, 0), one LP in the brute-force reference
    of proofs-checks/brute_force.py) is not optimal (222: that reference's fluid OPT, every
    one of the 720 orders): interrupted at its first progress report, it returns status
    interrupted with its incumbent, a verified schedule, and a bound between the root bound
    and the incumbent."""
    from coflowlab.formulations.exact_fluid import solve_exact_fluid

    seen = []

    def hook(record: SolveProgress) -> None:
        seen.append(record)
        request_interrupt()

    with interruptible(progress=hook, progress_interval=0.0) as control:
        sol = solve_exact_fluid(uniform(4, 6, seed=12))
    assert control.interrupted and seen and seen[0].source == "exact-fluid"
    assert sol.status is SolveStatus.INTERRUPTED, sol.message
    assert sol.report is not None and sol.report.feasible
    assert sol.details["root_bound"] - 1e-9 <= sol.bound <= sol.objective + 1e-9
    assert sol.objective >= 222 - 1e-6


INTERRUPT_SCRIPT = """
import json, math, sys
from coflowlab.solvers import SolverOptions, interruptible
{setup}
announced = []

def announce(record=None):  # "solving": the parent's cue to send SIGINT
    if not announced:
        announced.append(True)
        print("solving", file=sys.stderr, flush=True)

hook = announce if {at_progress} else None
notice = "interrupted: stopping the solver"
with interruptible(hook, progress_interval=0.2, notice=notice) as control:
    if hook is None:
        announce()
    {run}
print(json.dumps(out))
sys.exit(130 if control.interrupted else 0)
"""


def _interrupt(
    setup: str, run: str, after: float, *, at_progress: bool = False
) -> tuple[int, dict, str]:
    """Runs a CLI-like script (exit 130 when interrupted) and interrupts it ``after``
    seconds after it starts solving (``at_progress``: after its first progress report)."""
    script = INTERRUPT_SCRIPT.format(
        setup=textwrap.dedent(setup), run=run, at_progress=at_progress
    )
    t0 = time.monotonic()
    code, out, err = run_child(script, interrupt_after=after)
    assert time.monotonic() - t0 < LIMIT
    assert "Traceback" not in err, err
    return code, json.loads(out), err


def test_sigint_stops_a_highs_mip_with_its_incumbent():
    """Tests Ctrl-C (SIGINT) one second into a HiGHS MIP that would run 60 s: the script
    exits 130, its stdout holds the result, status interrupted, with a feasible incumbent
    no worse than the start and a bound below it; the notice is on stderr."""
    setup = MARKET_SPLIT + "model, plant = market_split(6, 60)\n"
    run = (
        "res = solve(model, SolverOptions(time_limit=60), start=plant); "
        "out = {'status': res.status.value, 'objective': res.objective, 'bound': res.bound, "
        "'start': model.value(plant), 'violation': model.violation(res.x), 'runtime': res.runtime}"
    )
    setup += "from coflowlab.solvers import solve\n"
    code, out, err = _interrupt(setup, run, after=1.0)
    assert code == 130 and out["status"] == "interrupted"
    assert out["violation"] <= FEAS_TOL and out["objective"] <= out["start"] + 1e-9
    assert out["bound"] <= out["objective"] + 1e-9 and out["runtime"] < 30
    assert "interrupted: stopping the solver" in err


SOLUTION_OUT = (
    "d = sol.to_dict(); out = {'status': d['status'], 'objective': d['objective'], "
    "'bound': d['bound'], 'feasible': sol.report is not None and sol.report.feasible, "
    "'runtime': sol.runtime, 'details': sol.details}"
)


@pytest.mark.slow  # 8 s; the flag-level test above covers the search in the default run
def test_sigint_stops_exact_fluid_with_its_incumbent():
    """Tests Ctrl-C in the branch and bound of exact-fluid on uniform(4, 30, seed=1) (it
    runs to any time limit), half a second after its first progress report: exit 130,
    status interrupted, a verified schedule and a bound at most its cost, long before the
    120 s limit."""
    setup = """
    from coflowlab.formulations.exact_fluid import solve_exact_fluid
    from coflowlab.instances import uniform
    inst = uniform(4, 30, seed=1)
    """
    run = "sol = solve_exact_fluid(inst, SolverOptions(time_limit=120)); " + SOLUTION_OUT
    code, out, _ = _interrupt(setup, run, after=0.5, at_progress=True)
    assert code == 130 and out["status"] == "interrupted" and out["feasible"]
    assert out["bound"] <= out["objective"] + 1e-9 and out["runtime"] < 60


def test_sigint_stops_exact_slotted_in_its_root_lp():
    """Tests Ctrl-C one second into exact-slotted on uniform(4, 8, seed=1), whose root LP
    alone outlasts 20 s and polls no callback: after the grace period the solve returns its
    start (the best list schedule) as a verified schedule; exit 130."""
    setup = """
    from coflowlab.formulations.time_indexed import solve_exact_slotted
    from coflowlab.instances import uniform
    inst = uniform(4, 8, seed=1)
    """
    run = "sol = solve_exact_slotted(inst, SolverOptions(time_limit=120)); " + SOLUTION_OUT
    code, out, _ = _interrupt(setup, run, after=1.0)
    assert code == 130 and out["status"] == "interrupted" and out["feasible"]
    assert out["objective"] <= out["details"]["start_objective"] + 1e-9
    assert out["runtime"] < 60


def test_a_process_that_abandoned_highs_ends_cleanly():
    """Tests the exit past an abandoned solve (HiGHS still in its root LP on a background
    thread): C++'s exit-time teardown used to abort such a process now and then (status
    134, "terminate called without an active exception"; once in the CI run of this file).
    Five scripts that interrupt the solve and then call sys.exit(0) all end cleanly, their
    output complete, in seconds: with status 130 (coflowlab.solvers.highs.ABANDONED_EXIT_STATUS)
    when HiGHS still runs at exit, or 0 when it stopped first (on a quiet machine the root LP
    can end within the interrupt's grace period, and then nothing is abandoned)."""
    script = """
    import json, sys
    from coflowlab.solvers import SolverOptions, interruptible
    from coflowlab.formulations.time_indexed import solve_exact_slotted
    from coflowlab.instances import uniform
    with interruptible() as control:
        control.request_interrupt()  # before the solve: HiGHS's root LP polls no callback
        sol = solve_exact_slotted(uniform(4, 8, seed=1), SolverOptions(time_limit=120))
    print(json.dumps({"status": sol.status.value}))
    sys.exit(0)
    """
    for _ in range(5):
        t0 = time.monotonic()
        code, out, err = run_child(script)
        assert code in (0, 130) and json.loads(out) == {"status": "interrupted"}, (code, err)
        assert "terminate called" not in err and time.monotonic() - t0 < 30


# ----------------------------------------------------------------------------- progress


def test_progress_reports_a_running_mip(capsys):
    """Tests progress from a HiGHS MIP (market split, 3 s limit, 0.2 s interval): reports
    arrive, from "highs" with the model's name, elapsed times at least one interval and
    increasing, and the printed lines go to stderr only."""
    model, plant = market_split(6, 60)
    seen: list[SolveProgress] = []
    printer = stderr_progress()

    def hook(record: SolveProgress) -> None:
        seen.append(record)
        printer(record)

    with interruptible(progress=hook, progress_interval=0.2):
        res = solve(model, SolverOptions(time_limit=3.0), start=plant)
    assert res.status in (SolveStatus.TIME_LIMIT, SolveStatus.OPTIMAL)
    assert len(seen) >= 2
    assert all(r.source == "highs" and r.name == "market-split" for r in seen)
    times = [r.elapsed for r in seen]
    assert times[0] >= 0.2 and times == sorted(times)
    out, err = capsys.readouterr()
    assert out == "" and err.count("highs market-split:") == len(seen)


def test_progress_is_quiet_without_a_hook_and_for_short_solves(capsys):
    """Tests quiet defaults: no block, or a block without a hook, prints nothing; a hook
    with a 10 s interval receives nothing from a solve that takes milliseconds."""
    seen: list[SolveProgress] = []
    solve(toy_mip())
    with interruptible():
        solve(toy_mip())
    with interruptible(progress=seen.append, progress_interval=10.0):
        solve(toy_mip())
    assert seen == [] and capsys.readouterr() == ("", "")


# ----------------------------------------------------------------------------- Gurobi (fake)


def fake_gurobipy(*, status: int, incumbent: list[float] | None, bound: float = -5.0):
    """A stand-in for gurobipy that records parameters and attributes, sends two log lines
    through the optimize callback (as Gurobi's MESSAGE callback does) and ends with
    ``status`` (and ``incumbent``, if given)."""
    record: dict = {"env": {}, "model": {}, "attrs": {}, "callback": None}
    MESSAGE, MIP = 6, 3
    GRB = types.SimpleNamespace(
        INFINITY=1e100, UNDEFINED=1e101, OPTIMAL=2, INFEASIBLE=3, INF_OR_UNBD=4, UNBOUNDED=5,
        TIME_LIMIT=9, INTERRUPTED=11, INTEGER="I", CONTINUOUS="C", EQUAL="=",
        LESS_EQUAL="<", GREATER_EQUAL=">",
        Callback=types.SimpleNamespace(
            MESSAGE=MESSAGE, MSG_STRING="msg", MIP=MIP, MIPSOL=4, SIMPLEX=2,
            MIP_OBJBST="objbst", MIP_OBJBND="objbnd", MIP_NODCNT="nodcnt",
            MIPSOL_OBJBST="solbst", MIPSOL_OBJBND="solbnd", SPX_ITRCNT="itr",
        ),
    )  # fmt: skip

    class Env:
        def __init__(self, empty: bool = False) -> None:
            pass

        def setParam(self, key, value) -> None:
            record["env"][key] = value

        def start(self) -> None:
            pass

        def dispose(self) -> None:
            pass

    class Var:
        def __init__(self, n: int) -> None:
            self.n = n

        def setAttr(self, key, value) -> None:
            record["attrs"][key] = np.asarray(value, dtype=float)

        def getAttr(self, key):
            assert key == "X"
            return np.asarray(incumbent, dtype=float)

    class Model:
        def __init__(self, name: str, env=None) -> None:
            self.message = ""

        def setParam(self, key, value) -> None:
            record["model"][key] = value

        def setAttr(self, key, value) -> None:
            record["model"][key] = value

        def addMVar(self, count, **kwargs):
            return Var(count)

        def addMConstr(self, A, x, sense, rhs) -> None:
            pass

        def cbGet(self, what):
            return {"msg": self.message, "objbst": 1e100, "objbnd": bound, "nodcnt": 3}[what]

        def terminate(self) -> None:
            record["terminated"] = True

        def optimize(self, callback=None) -> None:
            record["callback"] = callback
            if callback is not None:
                for line in ("Gurobi Optimizer\n", "Explored 3 nodes\n"):
                    self.message = line
                    callback(self, MESSAGE)
                callback(self, MIP)

        def getAttr(self, key):
            values = {"Status": status, "SolCount": 0 if incumbent is None else 1}
            values.update(ObjVal=-2.0, ObjBound=bound)
            return values[key]

        def dispose(self) -> None:
            pass

    module = types.ModuleType("gurobipy")
    module.__spec__ = importlib.machinery.ModuleSpec("gurobipy", None)
    module.Env, module.Model, module.GRB = Env, Model, GRB
    module.GurobiError = type("GurobiError", (Exception,), {})
    return module, record


@pytest.fixture
def fake_gurobi(monkeypatch):
    def install(**kwargs):
        module, record = fake_gurobipy(**kwargs)
        monkeypatch.setitem(sys.modules, "gurobipy", module)
        monkeypatch.setattr(grb, "_size_limited", None)
        return record

    return install


def test_fake_gurobi_is_quiet_and_logs_to_stderr(fake_gurobi, capfd):
    """Tests (with a fake gurobipy) the output settings: quiet, OutputFlag 0 and no
    callback at all; with log, OutputFlag 1, LogToConsole 0 and the MESSAGE callback's
    lines written to stderr, never stdout."""
    record = fake_gurobi(status=2, incumbent=[3.0, 0.0], bound=-3.0)
    grb.solve_gurobi(toy_mip())
    assert record["env"] == {"OutputFlag": 0} and record["callback"] is None
    record = fake_gurobi(status=2, incumbent=[3.0, 0.0], bound=-3.0)
    grb.solve_gurobi(toy_mip(), log=True)
    assert record["env"] == {"OutputFlag": 1, "LogToConsole": 0}
    out, err = capfd.readouterr()
    assert out == "" and err == "Gurobi Optimizer\nExplored 3 nodes\n"


def test_fake_gurobi_start_and_interrupt(fake_gurobi):
    """Tests (with a fake gurobipy) that a partial start becomes the Start attribute with
    GRB.UNDEFINED for nan, and that inside an interrupted block the callback terminates the
    solve and status 11 (INTERRUPTED) maps to interrupted with incumbent and bound; without
    an incumbent, interrupted with no values and the start taken as the incumbent."""
    record = fake_gurobi(status=11, incumbent=[2.0, 0.0], bound=-3.0)
    with interruptible() as control:
        control.request_interrupt()
        res = grb.solve_gurobi(toy_mip(), start=np.array([2.0, np.nan]))
    assert record["attrs"]["Start"].tolist() == [2.0, 1e101]
    assert record.get("terminated") is True
    assert res.status is SolveStatus.INTERRUPTED and res.x.tolist() == [2.0, 0.0]
    assert (res.objective, res.bound) == (-2.0, -3.0)
    fake_gurobi(status=11, incumbent=None, bound=-3.0)
    with interruptible():
        bare = grb.solve_gurobi(toy_mip())
        started = solve(toy_mip(), SolverOptions(solver="gurobi"), start=[1.0, 1.0])
    assert bare.status is SolveStatus.INTERRUPTED and bare.x is None
    assert started.status is SolveStatus.INTERRUPTED and started.x.tolist() == [1.0, 1.0]
    assert started.objective == -2.0 and started.bound == -3.0


# ----------------------------------------------------------------------------- CBC


def test_cbc_ctrl_c_is_read_as_interrupted():
    """Tests CBC's ending on Ctrl-C, as CBC 2.10 writes it (solution file "Stopped on
    iterations", log "Exiting on user event" / "User ctrl-c"): status interrupted with the
    bound from "best possible", with or without an incumbent."""
    from coflowlab.solvers.pulp_backend import _interpret

    log = (
        "Cbc0010I After 1000 nodes, 45 on tree, -2 best solution, best possible -3.4 (2.7 s)\n"
        "Cbc0027I Exiting on user event\nCbc0005I Partial search - best objective -2 "
        "(best possible -3.25), took 10 iterations and 1000 nodes (3.57 seconds)\n"
        "Result - User ctrl-cuser ctrl-c\n"
    )
    model = toy_mip()
    res = _interpret(model, "Stopped on iterations - objective value -2", log,
                     np.array([2.0, 0.0]), 0.1, None)  # fmt: skip
    assert res.status is SolveStatus.INTERRUPTED and res.objective == -2.0
    assert res.bound == pytest.approx(-3.25 - 0.005)
    none = _interpret(
        model,
        "Stopped on iterations (no integer solution - continuous used) - objective value -3.5",
        log.replace("best objective -2", "best objective 1e+50"),
        np.array([1.5, 1.0]),
        0.1,
        None,
    )
    assert none.status is SolveStatus.INTERRUPTED and none.x is None
    plain = _interpret(model, "Stopped on iterations - objective value 1", "", np.zeros(2), 0.1,
                       None)  # fmt: skip
    assert plain.status is SolveStatus.ERROR
