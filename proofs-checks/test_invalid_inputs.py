"""Invalid inputs: every malformed instance, trace line or write is refused with the documented
error class, a message that names the field and index (or file line), and nothing half-written.

The invariants are coflowlab's validation contract (``coflowlab/exceptions.py``: "messages
always name the offending object"; the readers' docstrings in
``coflowlab.instances``), not a paper's theorem. Each property is a plain check function that
the ``@given`` test calls, so the bug-injection tests at the end reuse it with a validation
disabled and show that it then fails.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import summary
from hypothesis import given
from hypothesis import strategies as st
from strategies import (
    InvalidCase,
    benchmark_instances,
    invalid_instances,
    malformed_benchmark,
    malformed_sincronia,
    sincronia_instances,
)

import coflowlab as cl
from coflowlab import instances as ins
from coflowlab.exceptions import InvalidInstanceError, TraceFormatError


# ---------------------------------------------------------------------- checks
def check_refused(case: InvalidCase) -> None:
    """``case.build()`` raises ``case.error`` whose message matches ``case.match`` (field and
    index); for trace errors, the exception's ``line`` and ``field`` attributes are the
    corrupted ones."""
    try:
        built = case.build()
    except case.error as exc:
        message = str(exc)
        assert re.search(case.match, message), (
            f"{case.what}: message {message!r} lacks {case.match!r}"
        )
        if isinstance(exc, TraceFormatError):
            assert exc.line == case.line, f"{case.what}: line {exc.line}, expected {case.line}"
            assert exc.field == case.field, (
                f"{case.what}: field {exc.field}, expected {case.field}"
            )
        return
    raise AssertionError(f"{case.what}: accepted, built {built!r}")


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def check_failed_write_leaves_nothing(writer, inst: cl.Instance, folder: Path) -> None:
    """A writer that refuses ``inst`` raises :class:`InvalidInstanceError` and leaves the
    folder as it was: no target file, no temporary file; an existing target is untouched."""
    target = folder / "out.txt"
    before = _leftovers(folder)
    with pytest.raises(InvalidInstanceError):
        writer(inst, target)
    assert _leftovers(folder) == before, f"left behind: {_leftovers(folder)}"
    target.write_text("old contents\n")
    with pytest.raises(InvalidInstanceError):
        writer(inst, target)
    assert target.read_text() == "old contents\n"
    assert _leftovers(folder) == sorted([*before, "out.txt"])
    target.unlink()


# ---------------------------------------------------------------------- properties
@given(invalid_instances())
def test_invalid_instance_is_refused_naming_the_field(case):
    """Invariant (InvalidInstanceError contract, ``coflowlab/instance.py``): a size that is
    not positive and finite, an unknown port, a capacity that is not positive and finite, a
    negative / NaN / infinite release or weight, a deadline ≤ 0 or NaN, a flow released before
    its coflow, a self-, unknown or cyclic dependency is refused, and the message names the
    coflow, flow, port or dependency index and the field."""
    check_refused(case)
    summary.observe("invalid: instance fields refused", bound="InvalidInstanceError")


@given(malformed_benchmark())
def test_malformed_benchmark_line_is_refused_with_line_and_field(case):
    """Invariant (``read_benchmark`` docstring): a malformed coflow-benchmark file raises
    TraceFormatError naming the 1-based line and the field (``arrival_ms``, ``num_mappers``,
    ``map_loc_j``, ``red_loc_j``, ``MB_j``, ``coflow_id``, ``num_coflows``)."""
    check_refused(case)
    summary.observe("invalid: benchmark lines refused", bound="TraceFormatError(line, field)")


@given(malformed_sincronia())
def test_malformed_sincronia_line_is_refused_with_line_and_field(case):
    """Invariant (``read_sincronia`` docstring): a malformed Sincronia file raises
    TraceFormatError naming the 1-based line and the field (``arrival_ms``, ``num_flows``,
    ``num_sources``, ``src_j``, ``dst_j``, ``size_j``, ``coflow_id``)."""
    check_refused(case)
    summary.observe("invalid: sincronia lines refused", bound="TraceFormatError(line, field)")


@st.composite
def _unwritable(draw):
    """An instance one trace format cannot hold, and that format's writer: a weight other than
    1, a deadline, a fractional release, dependencies, a non-integer label, differing
    capacities (both formats); a fractional size (Sincronia only)."""
    fmt = draw(st.sampled_from(["benchmark", "sincronia"]))
    inst = draw(benchmark_instances() if fmt == "benchmark" else sincronia_instances())
    n = inst.num_coflows
    k = draw(st.integers(0, n - 1))
    kind = draw(
        st.sampled_from(["weight", "deadline", "release", "deps", "label", "capacity", "size"])
    )
    if kind == "weight":
        w = inst.coflow_weight.copy()
        w[k] = draw(st.sampled_from([0.0, 2.0, 0.5]))
        bad = inst.replace(coflow_weight=w)
    elif kind == "deadline":
        d = inst.coflow_deadline.copy()
        d[k] = 5.0
        bad = inst.replace(coflow_deadline=d)
    elif kind == "release":
        r = inst.coflow_release.copy()
        r[k] += 0.5
        bad = inst.replace(coflow_release=r)
    elif kind == "deps" and n > 1:
        bad = inst.replace(dependencies=[(0, 1)])
    elif kind == "label":
        labels = list(inst.coflow_label)
        labels[k] = draw(st.sampled_from(["a", "-1", "1.0", "x7"]))
        bad = inst.replace(coflow_label=labels)
    elif kind == "size" and fmt == "sincronia":
        s = inst.flow_size.copy()
        s[inst.coflow_flows(k)[0]] += 0.5
        bad = inst.replace(flow_size=s)
    else:
        m = inst.num_ports
        caps = np.full(m, 0.125)
        caps[draw(st.integers(0, m - 1))] = 0.25
        if m == 1:  # one port: differing ingress and egress capacities are still one each
            w = inst.coflow_weight.copy()
            w[k] = 3.0
            bad = inst.replace(coflow_weight=w)
        else:
            bad = inst.replace(fabric=cl.Fabric(m, caps, 0.125))
    writer = ins.write_benchmark if fmt == "benchmark" else ins.write_sincronia
    return fmt, kind, bad, writer


@given(_unwritable())
def test_writer_refusal_leaves_nothing_half_written(tmp_path_factory, drawn):
    """Invariant (``coflowlab.instances.io``: writers are atomic): a trace writer that cannot
    hold an instance raises InvalidInstanceError and leaves no file, no temporary file, and an
    existing target untouched."""
    fmt, _kind, bad, writer = drawn
    folder = tmp_path_factory.mktemp("w")
    check_failed_write_leaves_nothing(writer, bad, folder)
    summary.observe("invalid: refused writes leave nothing", algorithm=fmt)


@given(st.text(min_size=0, max_size=30), st.sampled_from(["\ud800", "\udfff"]))
def test_atomic_write_failing_mid_write_leaves_nothing(tmp_path_factory, prefix, surrogate):
    """Invariant (``atomic_write_text``): if writing fails part way (here: text that cannot
    be encoded as UTF-8 after a valid prefix), nothing remains at the path and no temporary
    file is left; an existing file keeps its contents."""
    folder = tmp_path_factory.mktemp("a")
    target = folder / "t.txt"
    with pytest.raises(UnicodeEncodeError):
        ins.atomic_write_text(target, prefix + surrogate)
    assert _leftovers(folder) == []
    target.write_text("kept")
    with pytest.raises(UnicodeEncodeError):
        ins.atomic_write_text(target, prefix + surrogate)
    assert target.read_text() == "kept" and _leftovers(folder) == ["t.txt"]


# ---------------------------------------------------------------------- bug injection
def test_injected_bug_disabled_size_validation_is_caught(monkeypatch):
    """Bug injection: with the instance's size validation disabled (sizes coerced to 1 before
    the check), :func:`check_refused` fails on a NaN / negative size."""
    from coflowlab import instance as inst_mod

    original = inst_mod.Instance._validate

    def lenient(self, deps):
        object.__setattr__(
            self,
            "flow_size",
            np.where(np.isfinite(self.flow_size) & (self.flow_size > 0), self.flow_size, 1.0),
        )
        original(self, deps)

    valid = cl.Instance.from_coflows([cl.Coflow([(0, 1, 2.0), (1, 0, 3.0)])], 2)
    sizes = np.array([2.0, np.nan])
    case = InvalidCase(
        "flow 1 size = nan",
        lambda: valid.replace(flow_size=sizes),
        InvalidInstanceError,
        r"coflow 0, flow 1: size is NaN",
    )
    check_refused(case)  # the real code refuses it
    monkeypatch.setattr(inst_mod.Instance, "_validate", lenient)
    with pytest.raises(AssertionError, match="accepted"):
        check_refused(case)


def test_injected_bug_writer_not_atomic_is_caught(tmp_path):
    """Bug injection: a Sincronia writer that opens the target and writes line by line, failing
    on an unrepresentable coflow, leaves a half-written file: the check fails."""
    from coflowlab.instances import sincronia as sinc

    def broken_write(instance, path):
        with open(path, "w") as fh:
            fh.write(f"{instance.num_ports} {instance.num_coflows}\n")
            fh.write(sinc.format_sincronia(instance))

    inst = cl.Instance.from_coflows(
        [cl.Coflow([(0, 1, 2.0)]), cl.Coflow([(1, 0, 3.0)], weight=2.0)], 2
    )
    check_failed_write_leaves_nothing(ins.write_sincronia, inst, tmp_path)
    with pytest.raises(AssertionError, match="left behind"):
        check_failed_write_leaves_nothing(broken_write, inst, tmp_path)


def test_injected_bug_reader_loses_line_number_is_caught(monkeypatch):
    """Bug injection: a benchmark reader whose errors lose the line number (as if the line
    were not tracked) fails :func:`check_refused` on a malformed MB token."""
    from coflowlab.instances import io as io_mod

    text = "3 2\n1 0 1 0 1 2:4.0\n2 5 1 1 1 0:-3\n"
    case = InvalidCase(
        "line 3 MB = -3",
        lambda: ins.parse_benchmark(text),
        TraceFormatError,
        r"line 3, field MB_1: ",
        line=3,
        field="MB_1",
    )
    check_refused(case)
    original = io_mod._Line.error

    def no_line(self, fld, reason):
        return TraceFormatError(reason, path=self.source, line=None, field=fld)

    monkeypatch.setattr(io_mod._Line, "error", no_line)
    with pytest.raises(AssertionError):
        check_refused(case)
    monkeypatch.setattr(io_mod._Line, "error", original)
