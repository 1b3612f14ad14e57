"""simulate()'s choice between the per-flow event loop and a policy's rate-class engine
(coflowlab.class_simulation, docs/rate-classes.md), and what the class path reports."""

from __future__ import annotations

import numpy as np
import pytest

from coflowlab import Coflow, Fabric, Instance, SimulationError, simulate
from coflowlab.heuristics import FairSharing, make_policy
from coflowlab.instances import fb_like, uniform


def _instances():
    yield uniform(5, 10, seed=3, release_rate=0.5)
    yield fb_like(40, seed=2)
    yield Instance.from_matrices([[[1.0, 2.0], [0, 0]], [[0, 0], [3.0, 1.0]]])


@pytest.mark.parametrize("inst", list(_instances()), ids=["uniform", "fb_like", "two"])
def test_auto_takes_the_class_engine_and_agrees_with_the_flow_loop(inst):
    """Tests that fair sharing with record=False runs on classes, verified, with the events
    and (within the time tolerance) the completion times of the per-flow loop."""
    classes = simulate(inst, FairSharing(), record=False)
    flows = simulate(inst, FairSharing(), record=False, engine="flows")
    assert (classes.engine, flows.engine) == ("classes", "flows")
    assert classes.verified and classes.schedule is None
    assert classes.num_events == flows.num_events
    tol = classes.report.time_tol
    np.testing.assert_allclose(classes.flow_completion, flows.flow_completion, rtol=0, atol=tol)
    np.testing.assert_allclose(
        classes.coflow_completion, flows.coflow_completion, rtol=0, atol=tol
    )
    # fewer records: one per port pair and change, not one per flow
    assert classes.num_records <= flows.num_records


def test_per_flow_needs_keep_the_flow_loop():
    """Tests that record=True, fairness=True and hidden labels use the per-flow loop under
    engine='auto', and that engine='classes' refuses them, saying why."""
    inst = uniform(3, 4, seed=1)
    assert simulate(inst, FairSharing()).engine == "flows"  # record=True is the default
    assert simulate(inst, FairSharing(), record=False, fairness=True).engine == "flows"
    assert simulate(inst, FairSharing(), record=False, hide_labels=True).engine == "flows"
    for kw, word in (
        ({"record": True}, "record=True"),
        ({"record": False, "fairness": True}, "fairness"),
        ({"record": False, "hide_labels": True}, "hidden labels"),
    ):
        with pytest.raises(SimulationError, match=word):
            simulate(inst, FairSharing(), engine="classes", **kw)


def test_policies_without_a_class_engine_and_dependencies_fall_back():
    """Tests that a policy without a class engine, or an instance with dependencies, runs per
    flow under 'auto' and is refused under 'classes'."""
    inst = uniform(3, 4, seed=1)
    assert simulate(inst, make_policy("varys", inst), record=False).engine == "flows"
    with pytest.raises(SimulationError, match="no class engine"):
        simulate(inst, make_policy("varys", inst), record=False, engine="classes")
    dep = Instance.from_coflows(
        [Coflow([(0, 0, 1.0)]), Coflow([(0, 1, 1.0)])], Fabric(2), dependencies=[(0, 1)]
    )
    res = simulate(dep, FairSharing(), record=False)
    assert res.engine == "flows" and res.coflow_completion.tolist() == [1.0, 2.0]
    with pytest.raises(SimulationError, match="dependencies"):
        simulate(dep, FairSharing(), record=False, engine="classes")
    with pytest.raises(ValueError, match="engine must be one of"):
        simulate(inst, FairSharing(), engine="fast")


def test_without_verification_the_engine_claims_are_reported_unverified():
    """Tests that verify_schedule=False reports the engine's own completion times, labelled
    unverified."""
    inst = fb_like(20, seed=4)
    res = simulate(inst, FairSharing(), record=False, verify_schedule=False)
    ref = simulate(inst, FairSharing(), record=False)
    assert res.engine == "classes" and not res.verified and res.report is None
    np.testing.assert_allclose(
        res.coflow_completion, ref.coflow_completion, rtol=0, atol=ref.report.time_tol
    )


class _Doubled:
    """A class engine that writes every speed doubled (a wrong engine)."""

    def __init__(self, engine):
        self.engine = engine
        self.name, self.num_classes = engine.name, engine.num_classes
        self.flow_class, self.flow_weight = engine.flow_class, engine.flow_weight
        self.per_flow_records = engine.per_flow_records

    def run(self, sink, **kw):
        return self.engine.run(lambda t, c, r: sink(t, c, 2 * r), **kw)


class _NoCompletionRecords(_Doubled):
    """A per-flow-record engine that leaves out the rate-0 record of each completion."""

    def run(self, sink, **kw):
        def keep(t, c, r):
            sent = r != 0.0
            if sent.any():
                sink(t[sent], c[sent], r[sent])

        return self.engine.run(keep, **kw)


def test_a_wrong_class_engine_is_caught_by_the_verifier(monkeypatch):
    """Tests that the class path's schedule goes through the verifier: an engine writing
    doubled speeds is reported infeasible (capacity and its claimed completion times)."""
    inst = uniform(4, 6, seed=5)
    real = FairSharing.class_engine
    monkeypatch.setattr(
        FairSharing, "class_engine", lambda self, i, tol: _Doubled(real(self, i, tol))
    )
    with pytest.raises(SimulationError, match="infeasible") as err:
        simulate(inst, FairSharing(), record=False)
    assert "capacity" in str(err.value)


def test_per_flow_records_go_to_the_per_flow_verifier(monkeypatch):
    """Tests that an engine with per_flow_records is checked under per-flow semantics (a flow
    sends at its last rate until its next record): HUG's engine is verified feasible with the
    per-flow path's completion times bit for bit, and the same engine without its completion
    records is caught (its flows would send beyond their sizes)."""
    from coflowlab.heuristics.hug import HUG

    inst = uniform(4, 6, seed=5)
    res = simulate(inst, HUG(), record=False, engine="classes")
    ref = simulate(inst, HUG(), record=False, engine="flows")
    assert res.verified and res.report.feasible
    assert np.array_equal(res.flow_completion, ref.flow_completion)
    real = HUG.class_engine
    monkeypatch.setattr(
        HUG, "class_engine", lambda self, i, tol: _NoCompletionRecords(real(self, i, tol))
    )
    with pytest.raises(SimulationError, match="infeasible"):
        simulate(inst, HUG(), record=False, engine="classes")


def test_every_engine_refuses_dependencies_with_one_message():
    """Tests the refusal of coflow dependencies (class_simulation.dependencies_unsupported):
    its text, each engine's error with its name in front, and class_engine_of's reason."""
    from coflowlab.class_simulation import class_engine_of, dependencies_unsupported
    from coflowlab.exceptions import InvalidScheduleError
    from coflowlab.heuristics.fair_classes import FairClassEngine
    from coflowlab.heuristics.hug import HUG
    from coflowlab.heuristics.hug_classes import HUGClassEngine
    from coflowlab.heuristics.pfp_classes import PFPClassEngine
    from coflowlab.heuristics.sincronia_online import SincroniaOnline
    from coflowlab.heuristics.sincronia_online_classes import SincroniaOnlineClassEngine

    plain = uniform(3, 4, density=0.5, seed=1)
    inst = plain.replace(dependencies=[(0, 1), (1, 2)])
    why = (
        "coflow dependencies (starts-after) are not supported by class records; the instance has 2"
    )
    assert dependencies_unsupported(plain) is None
    assert dependencies_unsupported(inst) == why
    engines = {
        "FairClassEngine": lambda: FairClassEngine(inst),
        "PFPClassEngine": lambda: PFPClassEngine(inst),
        "HUGClassEngine": lambda: HUGClassEngine(HUG(), inst),
        "SincroniaOnlineClassEngine": lambda: SincroniaOnlineClassEngine(SincroniaOnline(), inst),
    }
    for name, make in engines.items():
        with pytest.raises(InvalidScheduleError) as err:
            make()
        assert str(err.value) == f"{name}: {why}"
    reason: list[str] = []
    assert class_engine_of(FairSharing(), inst, 1e-9, reason=reason) is None
    assert reason == ["class records do not support coflow dependencies"]
