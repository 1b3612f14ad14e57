"""Round trips: an instance survives JSON and pickle exactly (any valid instance), the two
trace formats within what each can represent (documented per property), and schedules survive
their JSON document. Each trace property is reusable by the bug-injection test at the end."""

from __future__ import annotations

import json
import pickle

import algorithms
import numpy as np
import pytest
import summary
from hypothesis import given
from hypothesis import strategies as st
from profiles import examples
from strategies import benchmark_instances, instances, matrix_instances, sincronia_instances

import coflowlab as cl
from coflowlab import instances as ins
from coflowlab.cli import schedule_from_dict, schedule_to_dict


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


# ---------------------------------------------------------------------- trace formats
@given(benchmark_instances(integral_mb=True))
def test_benchmark_round_trip_is_exact_for_whole_mb(inst):
    """Invariant (``write_benchmark`` docstring): the coflow-benchmark format holds full
    M × R shuffles with one MB per reducer, integer ids, whole-ms releases, weight 1 and one
    capacity; on such instances with whole MB, ``parse_benchmark(format_benchmark(inst),
    capacity=c) == inst`` exactly, and formatting again gives the same text."""
    cap = float(inst.fabric.ingress_capacity[0])
    text = ins.format_benchmark(inst)
    back = ins.parse_benchmark(text, capacity=cap)
    assert back == inst
    assert ins.format_benchmark(back) == text
    summary.observe("round trip: benchmark", algorithm="benchmark")


@given(benchmark_instances(integral_mb=False))
def test_benchmark_round_trip_preserves_real_mb_to_the_last_bit(inst):
    """Invariant: with real MB the writer stores ``size · M``, so a size may come back one
    rounding away (relative 1e-15); everything else is exact, and a second trip is a fixed
    point (the text is canonical)."""
    cap = float(inst.fabric.ingress_capacity[0])
    text = ins.format_benchmark(inst)
    back = ins.parse_benchmark(text, capacity=cap)
    np.testing.assert_allclose(back.flow_size, inst.flow_size, rtol=1e-15, atol=0)
    assert back.replace(flow_size=inst.flow_size) == inst
    assert ins.format_benchmark(ins.parse_benchmark(ins.format_benchmark(back))) == (
        ins.format_benchmark(back)
    )


@given(sincronia_instances())
def test_sincronia_round_trip_is_exact(inst):
    """Invariant (``write_sincronia`` docstring): Sincronia's format holds whole-MB flows
    (any port pairs), integer ids, whole-ms releases, weight 1; the round trip is exact."""
    cap = float(inst.fabric.ingress_capacity[0])
    text = ins.format_sincronia(inst)
    back = ins.parse_sincronia(text, capacity=cap)
    assert back == inst
    assert ins.format_sincronia(back) == text
    summary.observe("round trip: sincronia", algorithm="sincronia")


@given(st.sampled_from(["json", "benchmark", "sincronia", "weighted-benchmark"]), st.data())
def test_file_round_trip_through_read_and_write_instance(tmp_path_factory, fmt, data):
    """Invariant (``read_instance`` / ``write_instance``): writing then reading a file (with
    the format detected from the content) returns the instance, for every format."""
    strat = {
        "json": instances(deadlines=True, capacities=True),
        "benchmark": benchmark_instances(),
        "weighted-benchmark": benchmark_instances(),
        "sincronia": sincronia_instances(),
    }[fmt]
    inst = data.draw(strat)
    if fmt == "weighted-benchmark":  # any finite weight >= 0, whole or not
        weight = st.one_of(
            st.integers(0, 10).map(float),
            st.floats(0, 1e3, allow_nan=False, allow_subnormal=False),
        )
        ws = data.draw(st.lists(weight, min_size=inst.num_coflows, max_size=inst.num_coflows))
        inst = inst.replace(coflow_weight=np.array(ws))
    path = tmp_path_factory.mktemp("rt") / ("i.json" if fmt == "json" else "i.txt")
    ins.write_instance(inst, path, format=fmt)
    kw = {} if fmt == "json" else {"capacity": float(inst.fabric.ingress_capacity[0])}
    assert ins.read_instance(path, **kw) == inst


# ---------------------------------------------------------------------- schedules
_SCHEDULERS = [a for a in algorithms.schedulers() if a.name in ("primal-dual", "qsz", "varys")]


def check_schedule_round_trip(schedule, inst) -> None:
    """The schedule's JSON document rebuilds a schedule with the same columns, claimed
    completions, and verification."""
    doc = json.loads(json.dumps(schedule_to_dict(schedule), allow_nan=False))
    back = schedule_from_dict(doc)
    assert type(back) is type(schedule) and back.num_flows == schedule.num_flows
    cols = ("time", "flow", "rate") if hasattr(schedule, "rate") else ("slot", "flow", "amount")
    for col in cols:
        assert np.array_equal(getattr(back, col), getattr(schedule, col)), col
    if schedule.completion is None:
        assert back.completion is None
    else:
        assert np.array_equal(back.completion, schedule.completion, equal_nan=True)
    a, b = cl.verify(inst, schedule), cl.verify(inst, back)
    assert a.feasible == b.feasible
    assert np.array_equal(a.coflow_completion, b.coflow_completion, equal_nan=True)


@pytest.mark.parametrize("alg", _SCHEDULERS, ids=str)
@examples(ci=10, thorough=300)
@given(inst=matrix_instances(max_ports=3, max_coflows=4, releases=True))
def test_schedule_json_round_trip(alg, inst):
    """Invariant (``coflowlab.cli.schedule_to_dict`` / ``schedule_from_dict``): a fluid or
    slotted schedule survives its JSON document exactly (floats bit-exact)."""
    try:
        result = alg.run(inst)
    except algorithms.DECLINED:
        summary.declined("round trip: schedule JSON", alg.name)
        return
    check_schedule_round_trip(result.schedule, inst)
    summary.observe("round trip: schedule JSON", algorithm=alg.name)


def test_injected_bug_writer_drops_release_is_caught(monkeypatch):
    """Bug injection: a Sincronia writer that writes every arrival as 0 (a dropped field)
    fails the round trip."""
    from coflowlab.instances import sincronia as sinc

    inst = cl.Instance.from_coflows(
        [cl.Coflow([(0, 1, 2.0)], release=3.0), cl.Coflow([(1, 0, 3.0)])],
        2,
        units=cl.Units("MB", "ms"),
    )
    assert ins.parse_sincronia(ins.format_sincronia(inst)) == inst
    real = sinc.format_sincronia
    monkeypatch.setattr(
        ins, "format_sincronia", lambda i: real(i.replace(coflow_release=np.zeros(i.num_coflows)))
    )
    with pytest.raises(AssertionError):
        test_sincronia_round_trip_is_exact.hypothesis.inner_test(inst)
