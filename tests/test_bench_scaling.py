"""The scaling figures of ``benchmarks/bench_simulate.py --scaling``: the fitted exponent and the
plot (the timings themselves are printed by the benchmark, never asserted)."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_simulate.py"


@pytest.fixture(scope="module")
def bench():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("bench_simulate", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("k", [0.5, 1.0, 1.26, 2.0])
def test_fit_exponent_recovers_a_power_law(bench, k: float) -> None:  # type: ignore[no-untyped-def]
    x = [1e5, 2e5, 5e5, 1e6]
    y = [3.0 * v**k for v in x]
    assert bench.fit_exponent(x, y) == pytest.approx(k, rel=1e-9)


def test_fit_exponent_needs_two_distinct_sizes(bench) -> None:  # type: ignore[no-untyped-def]
    assert math.isnan(bench.fit_exponent([1e5], [2.0]))
    assert math.isnan(bench.fit_exponent([1e5, 1e5], [2.0, 3.0]))


def test_plot_scaling_writes_a_png(bench, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    runs = [{"flows": f, "events": f // 5, "cpu": f / 1e5} for f in (100_000, 200_000, 500_000)]
    path = tmp_path / "scaling.png"
    bench.plot_scaling({"varys": runs, "fair": runs[:2]}, str(path))
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
