"""Round trips: an instance survives JSON and pickle exactly (any valid instance)."""

from __future__ import annotations

import pickle

from hypothesis import given
from strategies import instances

import coflowlab as cl


@given(instances(deadlines=True, capacities=True))
def test_json_round_trip_is_exact(inst):
    """Invariant: ``Instance.from_json(inst.to_json()) == inst`` (bit-exact floats)."""
    assert cl.Instance.from_json(inst.to_json()) == inst


@given(instances(deadlines=True))
def test_pickle_round_trip_is_exact(inst):
    """Invariant: pickling preserves the instance (needed to ship it to worker processes)."""
    assert pickle.loads(pickle.dumps(inst)) == inst


@given(instances())
def test_python_repr_rebuilds_the_instance(inst):
    """Invariant: a counterexample prints as Python that rebuilds it."""
    namespace = {
        "Instance": cl.Instance,
        "Coflow": cl.Coflow,
        "Fabric": cl.Fabric,
        "Units": cl.Units,
    }
    assert eval(repr(inst), namespace) == inst
