"""Tests of the Instance data model: validation, derived values, transformations, I/O."""

from __future__ import annotations

import json
import pickle

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_equal

import coflowlab as cl
from coflowlab import Coflow, Fabric, Instance, InvalidInstanceError, Units


def base_kwargs() -> dict:
    """Two coflows on 3 ports: coflow 0 has flows 0, 1; coflow 1 has flows 2, 3."""
    return {
        "fabric": 3,
        "flow_coflow": [0, 0, 1, 1],
        "flow_src": [0, 1, 2, 0],
        "flow_dst": [1, 1, 0, 2],
        "flow_size": [1.0, 2.0, 3.0, 4.0],
    }


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"flow_size": [1.0, np.nan, 3.0, 4.0]}, "coflow 0, flow 1: size is NaN"),
        ({"flow_size": [1.0, 2.0, -3.0, 4.0]}, "coflow 1, flow 2: size is -3.0"),
        ({"flow_size": [1.0, 2.0, 3.0, 0.0]}, "coflow 1, flow 3: size is 0.0"),
        ({"flow_size": [np.inf, 2.0, 3.0, 4.0]}, "coflow 0, flow 0: size is inf"),
        ({"flow_src": [0, 1, 3, 0]}, "coflow 1, flow 2: ingress port 3 is unknown"),
        ({"flow_dst": [1, -1, 0, 2]}, "coflow 0, flow 1: egress port -1 is unknown"),
        ({"flow_src": [0, 1.5, 2, 0]}, "flow 1: ingress port 1.5 is not an integer"),
        ({"flow_coflow": [0, 0, 2, 2]}, "coflow 1: has no flows"),
        ({"flow_coflow": [0, 0, 1, 7], "num_coflows": 2}, "flow 3: coflow index 7"),
        ({"fabric": lambda: Fabric(3, [1, 0, 1])}, "ingress port 1: capacity is 0"),
        ({"fabric": lambda: Fabric(3, 1, [1, 1, -2])}, "egress port 2: capacity is -2"),
        ({"fabric": lambda: Fabric(3, 1, [1, np.nan, 1])}, "egress port 1: capacity is NaN"),
        ({"fabric": 0}, "num_ports must be a positive integer"),
        ({"coflow_release": [0, -1]}, "coflow 1: release is -1.0"),
        ({"coflow_release": [np.nan, 0]}, "coflow 0: release is NaN"),
        ({"coflow_weight": [1, -2]}, "coflow 1: weight is -2.0"),
        ({"coflow_deadline": [0, 5]}, "coflow 0: deadline is 0.0"),
        ({"coflow_deadline": [np.nan, 5]}, "coflow 0: deadline is NaN"),
        (
            {"coflow_release": [0, 5], "flow_release": [0, 0, 4, 5]},
            "coflow 1, flow 2: release 4.0 is before its coflow's release 5.0",
        ),
        ({"flow_release": [0, np.inf, 0, 0]}, "coflow 0, flow 1: release is inf"),
        ({"coflow_label": ["a", "a"]}, "coflow 1: label 'a' repeats the label of coflow 0"),
        ({"coflow_label": ["a"]}, "coflow_label: has 1 entries, expected 2"),
        ({"dependencies": [(0, 1), (1, 0)]}, "dependencies: form a cycle"),
        ({"dependencies": [(0, 0)]}, "dependency 0: coflow 0 depends on itself"),
        ({"dependencies": [(0, 4)]}, "dependency 0: coflow 4 is not a coflow index"),
        ({"flow_size": [1.0, 2.0]}, "coflow index: has shape"),
    ],
)
def test_invalid_input_raises_with_precise_message(change, message):
    """Tests that each kind of invalid value raises an error naming coflow, flow and field."""
    kwargs = base_kwargs() | change
    with pytest.raises(InvalidInstanceError) as info:
        Instance(**{k: v() if callable(v) else v for k, v in kwargs.items()})
    assert message in str(info.value)


def test_derived_values_match_hand_computation():
    """Tests loads, bottleneck, width, length, size and skew on instance I1
    (docs/theory.md#instances)."""
    inst = Instance.from_matrices([[[1, 2], [3, 0]], [[0, 5], [0, 0]]])
    assert_allclose(inst.ingress_load, [[3, 3], [5, 0]])
    assert_allclose(inst.egress_load, [[4, 2], [0, 5]])
    assert_allclose(inst.bottleneck, [4.0, 5.0])  # I1: rho = 4 on egress 0
    assert_equal(inst.bottleneck_port, [2, 0])
    assert_equal(inst.width, [3, 1])
    assert_allclose(inst.length, [3.0, 5.0])
    assert_allclose(inst.total_size, [6.0, 5.0])
    assert_allclose(inst.skew, [3.0, 1.0])
    assert_allclose(inst.port_load_sparse().toarray(), inst.port_load)


def test_bottleneck_divides_by_capacity():
    """Tests that ρ is load over capacity, per port."""
    fab = Fabric(2, ingress_capacity=[2.0, 1.0], egress_capacity=[4.0, 4.0])
    inst = Instance(fab, [0, 0], [0, 1], [0, 0], [4.0, 1.0])
    # ingress 0: 4/2 = 2; ingress 1: 1/1; egress 0: 5/4
    assert_allclose(inst.bottleneck, [2.0])


def test_coflow_flows_keep_instance_order():
    """Tests that a coflow's flows come in instance order even when interleaved."""
    inst = Instance(2, [1, 0, 1, 0], [0, 0, 1, 1], [0, 1, 0, 1], [1, 2, 3, 4])
    assert_equal(inst.coflow_flows(0), [1, 3])
    assert_equal(inst.coflow_flows(1), [0, 2])


def test_instance_is_immutable():
    """Tests that neither the arrays nor the attributes can be changed."""
    inst = Instance(**base_kwargs())
    with pytest.raises(ValueError, match="read-only"):
        inst.flow_size[0] = 5.0
    with pytest.raises(AttributeError, match="immutable"):
        inst.flow_size = np.ones(4)  # type: ignore[misc]
    with pytest.raises(ValueError, match="read-only"):
        inst.bottleneck[0] = 1.0


def test_inputs_are_copied():
    """Tests that changing the caller's arrays afterwards does not change the instance."""
    sizes = np.array([1.0, 2.0, 3.0, 4.0])
    inst = Instance(**(base_kwargs() | {"flow_size": sizes}))
    sizes[0] = 100.0
    assert inst.flow_size[0] == 1.0


def test_replace_validates_and_moves_flow_releases():
    """Tests that replace() revalidates and shifts flow releases with their coflow's."""
    inst = Instance(**base_kwargs())
    moved = inst.replace(coflow_release=[1.0, 2.0])
    assert_allclose(moved.flow_release, [1.0, 1.0, 2.0, 2.0])
    with pytest.raises(InvalidInstanceError, match="size is NaN"):
        inst.replace(flow_size=[np.nan, 1, 1, 1])
    with pytest.raises(TypeError, match="unknown fields"):
        inst.replace(colour="blue")


def test_subset_reindexes_and_keeps_dependencies():
    """Tests that subset() keeps the chosen coflows, in order, with their dependencies."""
    inst = Instance.from_coflows(
        [
            Coflow([(0, 0, 1.0)], label="a"),
            Coflow([(1, 1, 2.0)], label="b"),
            Coflow([(0, 1, 3.0)], label="c", weight=2.0),
        ],
        2,
        dependencies=[(0, 2), (1, 2)],
    )
    sub = inst.subset([2, 0])
    assert sub.coflow_label == ("c", "a")
    assert_allclose(sub.coflow_weight, [2.0, 1.0])
    assert_allclose(sub.flow_size, [3.0, 1.0])
    assert_equal(sub.dependencies, [[1, 0]])
    with pytest.raises(InvalidInstanceError, match="distinct"):
        inst.subset([0, 0])


def test_scaling_sizes_and_time():
    """Tests that scale_sizes scales loads and scale_time stretches releases and ρ."""
    inst = Instance(
        **(base_kwargs() | {"coflow_release": [0.0, 2.0], "coflow_deadline": [np.inf, 10.0]})
    )
    assert_allclose(inst.scale_sizes(3.0).bottleneck, 3.0 * inst.bottleneck)
    slow = inst.scale_time(2.0)
    assert_allclose(slow.bottleneck, 2.0 * inst.bottleneck)
    assert_allclose(slow.coflow_release, [0.0, 4.0])
    assert_allclose(slow.coflow_deadline, [np.inf, 20.0])
    with pytest.raises(InvalidInstanceError, match="factor"):
        inst.scale_sizes(0.0)


def full_instance() -> Instance:
    """An instance with every feature: releases, weights, deadlines, labels, deps, units."""
    return Instance(
        Fabric(3, [1.0, 0.5, 2.0], 0.125),
        [0, 1, 1, 2],
        [0, 1, 2, 0],
        [1, 1, 0, 2],
        [0.1, 2.0, 1 / 3, 4e4],
        [0.0, 1.5, 1.25, 3.0],
        coflow_release=[0.0, 1.0, 2.0],
        coflow_weight=[1.0, 2.5, 0.0],
        coflow_deadline=[np.inf, 7.0, 3.0],
        coflow_label=["J1", "J2", "J9"],
        dependencies=[(0, 2)],
        units=Units("MB", "ms"),
    )


def test_json_round_trip_is_exact():
    """Tests that an instance with every feature survives JSON exactly."""
    inst = full_instance()
    text = inst.to_json()
    back = Instance.from_json(text)
    assert back == inst
    assert back.flow_size[2] == 1 / 3  # bit-exact float
    assert json.loads(text)["coflows"]["deadline"][0] is None


def test_pickle_round_trip_keeps_arrays_read_only():
    """Tests that pickling gives an equal, still immutable instance."""
    back = pickle.loads(pickle.dumps(full_instance()))
    assert back == full_instance()
    assert not back.flow_size.flags.writeable


def test_equality_sees_every_field():
    """Tests that instances differing in one field only are unequal."""
    inst = full_instance()
    assert inst == full_instance()
    assert inst != inst.replace(coflow_weight=[1.0, 2.5, 1.0])
    assert inst != inst.replace(units=Units("B", "ms"))
    assert inst != inst.replace(coflow_label=["a", "b", "c"])
    assert inst != inst.replace(dependencies=[])


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d.pop("flows"), "missing key 'flows'"),
        (lambda d: d["flows"].pop("size"), "missing key 'flows.size'"),
        (lambda d: d.update(format="other"), "'format' must be"),
        (lambda d: d.update(version=99), "unsupported version 99"),
        (lambda d: d["flows"]["size"].__setitem__(0, -1.0), "coflow 0, flow 0: size is -1.0"),
    ],
)
def test_bad_json_document_raises(mutate, message):
    """Tests that a damaged JSON document raises an error naming the key or field."""
    doc = full_instance().to_dict()
    mutate(doc)
    with pytest.raises(InvalidInstanceError, match=message.replace("(", r"\(")):
        Instance.from_dict(doc)


def test_invalid_json_text_raises():
    """Tests that text that is not JSON raises InvalidInstanceError."""
    with pytest.raises(InvalidInstanceError, match="not valid JSON"):
        Instance.from_json("{not json")


def test_repr_is_python_that_rebuilds_the_instance():
    """Tests that a small instance prints as the Python that rebuilds it."""
    inst = full_instance().replace(flow_size=[0.1, 2.0, 1 / 3, 4.0])
    rebuilt = eval(
        repr(inst), {"Instance": Instance, "Coflow": Coflow, "Fabric": Fabric, "Units": Units}
    )
    assert rebuilt == inst


def test_from_matrices_rejects_bad_matrices():
    """Tests that negative entries and ragged shapes are refused with their position."""
    with pytest.raises(InvalidInstanceError, match=r"coflow 1: demand\[0\]\[1\] is -1.0"):
        Instance.from_matrices([[[1, 0], [0, 1]], [[0, -1], [0, 0]]])
    with pytest.raises(InvalidInstanceError, match="shape"):
        Instance.from_matrices([[[1, 0], [0, 1]], [[1]]])
    with pytest.raises(InvalidInstanceError, match="coflow 0: has no flows"):
        Instance.from_matrices([[[0, 0], [0, 0]]])


def test_import_is_lazy():
    """Tests that importing coflowlab loads no solver, scipy, networkx, matplotlib or numba."""
    import subprocess
    import sys

    code = (
        "import sys, coflowlab; "
        "heavy = ('scipy', 'networkx', 'matplotlib', 'highspy', 'pulp', 'numba'); "
        "print(','.join(m for m in heavy if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_time_models_are_explicit():
    """Tests that the two time models are distinct named values."""
    assert cl.FLUID is cl.TimeModel.FLUID
    assert str(cl.SLOTTED) == "slotted"
    assert cl.FluidSchedule.model is cl.FLUID
    assert cl.SlottedSchedule.model is cl.SLOTTED


# ---------------------------------------------------------------------- supported range
# The limits are coflowlab.constants.MIN_VALUE = 1e-6, MAX_VALUE = 1e12, MAX_TIME_RATIO = 1e7;
# each case below is on one side of one limit by at least a factor 10 (or is the limit itself).
@pytest.mark.parametrize(
    ("change", "field", "index", "message"),
    [
        ({"flow_size": [1.0, 1e300, 3.0, 4.0]}, "flow_size", 1, r"size is 1e\+300, outside"),
        ({"flow_size": [1e-7, 2.0, 3.0, 4.0]}, "flow_size", 0, r"size is 1e-07, outside"),
        ({"flow_size": [1.0, 2.0, np.inf, 4.0]}, "flow_size", 2, "size is inf"),
        ({"flow_size": [1.0, 2.0, 3.0, -np.inf]}, "flow_size", 3, "size is -inf"),
        ({"fabric": (3, 1e-7)}, "ingress_capacity", 0, r"capacity is 1e-07, outside"),
        (
            {"fabric": (3, 1.0, [1.0, 1e13, 1.0])},
            "egress_capacity",
            1,
            "is 10000000000000.0, outside",
        ),
        (
            {"coflow_release": [0.0, 1e13]},
            "coflow_release",
            1,
            r"release is 10000000000000\.0, outside",
        ),
        (
            {"coflow_weight": [1e13, 1.0]},
            "coflow_weight",
            0,
            r"weight is 10000000000000\.0, outside",
        ),
        ({"coflow_deadline": [1e-7, np.inf]}, "coflow_deadline", 0, r"deadline is 1e-07"),
        (
            {"coflow_deadline": [np.inf, 1e13]},
            "coflow_deadline",
            1,
            r"deadline is 10000000000000\.0",
        ),
        # each flow alone ends at release + size / capacity: 1e12 / 0.1 = 1e13 > 1e12
        (
            {"fabric": (3, 0.1), "flow_size": [1.0, 2.0, 3.0, 1e12]},
            "flow_size",
            3,
            "1e\\+13",
        ),
        # flow 0 takes 1 time unit, flow 3 at least 1e9: a ratio of 1e9 > 1e7
        (
            {"flow_size": [1.0, 2.0, 3.0, 1e9]},
            "flow_size",
            0,
            "a ratio of 1e\\+09, above the 1e\\+07",
        ),
        # flow 0 takes 1e-6, the span is at least max(1, 4) = 4: a ratio of 4e6 is fine, but
        # a release of 100 makes it (100 + 4) / 1e-6 = 1.04e8
        ({"flow_size": [1e-6, 2, 3, 4], "coflow_release": [0, 100]}, "flow_size", 0, "1.04e\\+08"),
    ],
)
def test_values_outside_the_supported_range_are_refused(change, field, index, message):
    """Tests that sizes, capacities, releases, weights, deadlines, earliest flow ends and the
    ratio of the time span to the shortest transfer outside coflowlab.constants' range are
    refused, the error naming the coflow or port, the field and the value."""
    kwargs = base_kwargs() | change
    with pytest.raises(InvalidInstanceError, match=message) as info:
        if isinstance(kwargs["fabric"], tuple):  # built here: Fabric validates capacities
            kwargs["fabric"] = Fabric(*kwargs["fabric"])
        Instance(**kwargs)
    assert_equal((info.value.field, info.value.index), (field, index))


def test_values_at_the_limits_are_accepted():
    """Tests that the limits themselves are inside the range: sizes 1e-6 and 1e12 (not in the
    same instance: their ratio is 1e18), capacities 1e-6 and 1e12, a ratio of exactly 1e7."""
    from coflowlab.constants import MAX_TIME_RATIO, MAX_VALUE, MIN_VALUE

    assert_equal((MIN_VALUE, MAX_VALUE, MAX_TIME_RATIO), (1e-6, 1e12, 1e7))
    assert Instance(1, [0], [0], [0], [1e-6]).bottleneck[0] == 1e-6
    assert Instance(1, [0], [0], [0], [1e12]).bottleneck[0] == 1e12
    assert Instance(Fabric(1, 1e12, 1e12), [0], [0], [0], [1e12]).bottleneck[0] == 1.0
    assert Instance(Fabric(1, 1e-6, 1e-6), [0], [0], [0], [1e-6]).bottleneck[0] == 1.0
    inst = Instance(2, [0, 1], [0, 1], [0, 1], [1.0, 1e7])  # span 1e7 / shortest 1
    assert_equal(inst.flow_size, [1.0, 1e7])
    with pytest.raises(InvalidInstanceError, match="ratio"):
        Instance(2, [0, 1], [0, 1], [0, 1], [1.0, 1.1e7])


def test_too_many_ports_are_refused_before_allocating():
    """Tests that a port count beyond MAX_PORTS (a typo in a header) is refused at once."""
    with pytest.raises(InvalidInstanceError, match="num_ports is 15052600000, beyond"):
        Fabric(15052600000)
