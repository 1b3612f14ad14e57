"""Tests of the one registry and the one runner: every algorithm has one entry type, loads,
lists its parameters, and runs through :func:`coflowlab.run` with values from the verifier."""

from __future__ import annotations

import inspect
import math

import numpy as np
import pytest

import coflowlab as cl
from coflowlab import registry
from coflowlab.instances.examples import fig_3_2, theory_i2
from coflowlab.registry import REGISTRY, AlgorithmEntry, Family, get_entry, select
from coflowlab.runner import run
from coflowlab.solvers.options import SolverOptions


@pytest.mark.parametrize("name", list(REGISTRY))
def test_every_entry_loads_and_describes_itself(name):
    """Tests that each entry's target imports, its family and model are set, its parameters
    exist in the target's signature, and an online entry's clairvoyance is its class's."""
    entry = REGISTRY[name]
    assert isinstance(entry, AlgorithmEntry) and entry.name == name
    target = entry.load()
    assert callable(target) and entry.summary
    signature = inspect.signature(target)
    for p in entry.parameters():
        assert p.name in signature.parameters
        assert p.unit in (None, "ms", "MB")
    if entry.online:
        assert entry.clairvoyant is bool(target.clairvoyant)
    else:
        assert entry.clairvoyant


def test_families_partition_the_registry_in_listing_order():
    """Tests that the family selectors cover every name exactly once, offline first."""
    names = [n for f in Family for n in select(f.value)]
    assert sorted(names) == sorted(REGISTRY) and len(names) == len(set(names))
    assert select("all") == list(REGISTRY)
    online = select("online")
    assert list(REGISTRY)[-len(online) :] == online
    assert {"exact-fluid", "lp-ov", "sincronia", "varys", "aalo", "fair"} <= set(REGISTRY)


def test_unknown_name_lists_the_known_ones():
    """Tests that an unknown name is a ValueError naming it and listing the registry."""
    with pytest.raises(ValueError, match=r"unknown algorithm 'nope'; known: exact-fluid, "):
        get_entry("nope")


def test_a_name_registered_twice_is_refused(monkeypatch):
    """Tests that merging refuses a duplicate name, naming the module."""
    import types

    fake = types.ModuleType("fake_family")
    fake.ENTRIES = (REGISTRY["fair"],)
    monkeypatch.setitem(__import__("sys").modules, "fake_family", fake)
    monkeypatch.setattr(registry, "_FAMILY_MODULES", (*registry._FAMILY_MODULES, "fake_family"))
    with pytest.raises(ValueError, match=r"'fair' is registered twice \(in fake_family"):
        registry._collect()


def test_papers_are_cited_with_authors_venue_and_year():
    """Tests that the published algorithms carry their paper."""
    assert get_entry("varys").paper.year == 2014
    assert "Sincronia" in get_entry("sincronia").paper.title
    assert str(get_entry("aalo").paper).startswith("Chowdhury, Stoica, ")


# --------------------------------------------------------------------------- the runner
# theory_i2: one port, sizes p = (3, 1, 2), weights w = (3, 1, 1), all released at 0.
# Smith's rule (w/p = 1, 1, 0.5) runs 0, 1, 2: completions 3, 4, 6 and Σ w C = 9 + 4 + 6 = 19.
# Per-flow fairness shares the port: all at rate 1/3 until flow 1 ends at 3; flows 2 and 0
# then at 1/2 until flow 2 ends at 5; flow 0 alone until 6: Σ w C = 3·6 + 1·3 + 1·5 = 26.
SMITH_OPT = 19.0
FAIR_VALUE = 26.0


@pytest.mark.parametrize(
    ("name", "expected", "family"),
    [
        ("exact-fluid", SMITH_OPT, Family.EXACT),
        ("order-smith", SMITH_OPT, Family.APPROXIMATION),
        ("bound-smith", SMITH_OPT, Family.BOUND),
        ("fair", FAIR_VALUE, Family.ONLINE),
    ],
)
def test_run_gives_one_result_type_for_every_family(name, expected, family):
    """Tests the runner on a single-port instance with hand-computed values: the objective,
    family, and (for schedules) verified per-coflow completion times."""
    res = run(name, theory_i2())
    assert res.family is family
    assert res.objective == pytest.approx(expected, rel=1e-9)
    if family is Family.BOUND:
        assert res.is_lower_bound and res.completion is None and res.verified is None
    else:
        assert res.verified is True
        assert float(np.dot(res.instance.coflow_weight, res.completion)) == pytest.approx(
            expected, rel=1e-9
        )
    assert res.proven_optimal is (name == "exact-fluid")


def test_run_online_on_release_dates_and_average_cct():
    """Tests an online policy's result: Fig. 3.2's shuffle under Varys (MADD: all flows end
    at Γ = 4), CCT measured from the release."""
    res = run("varys", fig_3_2())
    assert res.time_model == "exact" and res.status == "feasible"
    assert res.completion.tolist() == pytest.approx([4.0])
    assert res.average_cct == pytest.approx(4.0)


def test_run_converts_text_parameters_and_refuses_unknown_ones():
    """Tests that parameters as text are converted with the target's annotations, and that an
    unknown one is an error naming it."""
    res = run("varys", fig_3_2(), starvation="false")
    assert res.params == {"starvation": False}
    with pytest.raises(ValueError, match="policy 'varys' has no parameter 'colour'"):
        run("varys", fig_3_2(), colour="red")
    with pytest.raises(ValueError, match="method 'sincronia' has no parameter 'colour'"):
        run("sincronia", fig_3_2(), colour="red")


def test_solver_options_are_validated_on_construction():
    """Tests that SolverOptions refuses values outside their ranges, naming the field."""
    with pytest.raises(ValueError, match=r"SolverOptions\.time_limit"):
        SolverOptions(time_limit=-1)
    with pytest.raises(ValueError, match=r"SolverOptions\.mip_gap"):
        SolverOptions(mip_gap=1.0)
    with pytest.raises(ValueError, match=r"SolverOptions\.threads"):
        SolverOptions(threads=0)
    assert SolverOptions(time_limit=5).to_dict()["time_limit"] == 5


def test_run_refuses_a_time_model_for_offline_methods():
    """Tests that time_model is an online-only option."""
    with pytest.raises(ValueError, match="time_model is for online policies"):
        run("sincronia", fig_3_2(), time_model="coflowsim")


def test_run_marks_rejections_incomplete():
    """Tests that an online policy that rejects coflows gives status incomplete and no
    objective (Σ w C over a subset is not comparable)."""
    inst = cl.Instance.from_coflows(
        [cl.Coflow([(0, 0, 10.0)], deadline=1.0), cl.Coflow([(0, 0, 1.0)], deadline=5.0)], 1
    )
    res = run("varys-deadline", inst)
    assert res.status == "incomplete" and math.isnan(res.objective)
    assert "rejected" in res.message
