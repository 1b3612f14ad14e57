"""Tests that solver settings travel as one :class:`~coflowlab.solvers.SolverOptions`: every
registered offline method that solves an LP or MIP takes ``options`` and hands it to every one
of its solves; the methods that solve nothing take no solver settings at all (issue 13)."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import coflowlab as cl
from coflowlab.instances.examples import theory_i3
from coflowlab.registry import REGISTRY, AlgorithmEntry
from coflowlab.solvers import SolverOptions
from coflowlab.solvers import api as solver_api

# Which methods solve an LP or MIP, from what each algorithm is (the papers and
# docs/theory.md), not from the code: the exact methods and relaxations are LP/MIP models;
# LP-OV list scheduling, QSZ and α-point round an LP; the bounds, the primal-dual/Sincronia
# order and the plain orderings are combinatorial.
SOLVING = {
    "exact-fluid", "exact-slotted", "deadline-fluid", "deadline-slotted", "lp-ov",
    "lp-ov-binary", "interval-lp", "parallel-lp", "time-indexed-lp", "lp-ov-ls", "qsz",
    "qsz-random", "alpha-point", "alpha-point-derandomized",
}  # fmt: skip
COMBINATORIAL = {
    "bound-release-rho", "bound-smith", "primal-dual", "sincronia", "order-fifo", "order-scf",
    "order-ncf", "order-tcf", "order-sebf", "order-smith",
}  # fmt: skip
OLD_KEYWORDS = ("solver", "time_limit", "mip_gap", "threads", "log")

# settings no method would pick by itself, so that each can be recognised at the backend
OPTIONS = SolverOptions(time_limit=300.0, mip_gap=0.001, threads=1)


def offline() -> dict[str, AlgorithmEntry]:
    return {name: e for name, e in REGISTRY.items() if not e.online}


def instance_for(name: str) -> cl.Instance:
    """Instance I3 (docs/theory.md#instances), integral; with deadlines ``r + ⌈1.5 ρ⌉`` for the
    deadline methods, the only ones that read them."""
    inst = theory_i3()
    if name.startswith("deadline-"):
        inst = inst.replace(coflow_deadline=inst.coflow_release + np.ceil(1.5 * inst.bottleneck))
    return inst


def test_the_registry_splits_into_solving_and_combinatorial_methods():
    """Tests that every registered offline method is one of the two kinds above, and that
    takes_options() (what the runner and the CLI go by) says which."""
    entries = offline()
    assert set(entries) == SOLVING | COMBINATORIAL
    assert {name for name, e in entries.items() if e.takes_options()} == SOLVING


@pytest.mark.parametrize("name", sorted(SOLVING))
def test_solving_methods_take_options_and_no_loose_settings(name):
    """Tests the signature of each LP/MIP method: ``options`` with default ``None`` (the
    defaults of SolverOptions), and none of the five former keywords; passing one is a
    TypeError, not a silently ignored setting."""
    func = REGISTRY[name].load()
    params = inspect.signature(func).parameters
    assert params["options"].default is None
    assert not set(OLD_KEYWORDS) & set(params)
    assert not any(p.kind is p.VAR_KEYWORD for p in params.values())
    with pytest.raises(TypeError, match="time_limit"):
        func(instance_for(name), time_limit=5.0)


@pytest.mark.parametrize("name", sorted(COMBINATORIAL))
def test_combinatorial_methods_refuse_solver_settings(name):
    """Tests that a method that solves nothing takes neither ``options`` nor a solver
    keyword (TypeError), and that coflowlab.run refuses options for it."""
    func = REGISTRY[name].load()
    inst = instance_for(name)
    for keyword in ("options", *OLD_KEYWORDS):
        with pytest.raises(TypeError, match=keyword):
            func(inst, **{keyword: None})
    with pytest.raises(ValueError, match=f"method {name!r} solves no LP or MIP"):
        cl.run(name, inst, OPTIONS)
    assert cl.run(name, inst).status in ("optimal", "feasible")  # and runs without them


@pytest.fixture
def backend_calls(monkeypatch):
    """The keyword arguments of every backend call (the solver layer's ``_backend`` wrapped
    by a recorder that still solves)."""
    calls: list[dict] = []
    real = solver_api._backend

    def recording(solver: str):
        backend = real(solver)

        def run(model, **kwargs):
            calls.append({"solver": solver, **kwargs})
            return backend(model, **kwargs)

        return run

    monkeypatch.setattr(solver_api, "_backend", recording)
    return calls


@pytest.mark.parametrize("name", sorted(SOLVING))
def test_options_reach_every_solve(name, backend_calls):
    """Tests, through coflowlab.run, that the options reach each of the method's solves: the
    backend, thread count and MIP gap unchanged; a time limit that is the given one or what
    is left of it (methods with several solves), or none for a solve that must finish."""
    res = cl.run(name, instance_for(name), OPTIONS)
    assert res.status in ("optimal", "feasible"), res.message
    assert backend_calls, f"{name} ran no solve"
    for call in backend_calls:
        assert call["solver"] == "highs" and call["threads"] == 1, call
        assert call["mip_gap"] == OPTIONS.mip_gap, call
        assert call["time_limit"] is None or 0 < call["time_limit"] <= 300.0, call
        assert call["log"] is False
    assert any(call["time_limit"] is not None for call in backend_calls)


def test_no_options_means_the_defaults(backend_calls):
    """Tests that ``options=None`` is SolverOptions(): HiGHS, no time limit, the default gap,
    the backend's own thread count."""
    cl.run("exact-slotted", theory_i3())
    default = SolverOptions()
    assert backend_calls == [
        {
            "solver": "highs", "time_limit": None, "mip_gap": default.mip_gap, "threads": None,
            "log": False, "start": backend_calls[0]["start"], "interruptible": True,
        }
    ]  # fmt: skip
