"""The fairness–efficiency frontier script (reports/fairness_frontier.py)."""

from __future__ import annotations

import pytest

from coflowlab.instances import uniform
from coflowlab.reports.fairness_frontier import frontier, main


def test_frontier_normalizes_to_coflex_one_and_orders_the_extremes():
    """Tests the sweep on two small instances: Coflex(1)'s CCT is the unit, every label asked
    for is there, and Coflex(1) (HUG-like, progress ≥ P* throughout) has an isolation
    guarantee at least Coflex(0)'s (Varys-like)."""
    insts = [uniform(4, 6, density=0.5, release_rate=0.3, seed=s) for s in range(2)]
    seen = []
    res = frontier(
        insts, alphas=[0.0, 1.0], points=["hug", "varys"], log=lambda k, s: seen.append(k)
    )
    assert set(res) == {"coflex α=0.0", "coflex α=1.0", "hug", "varys"}
    assert res["coflex α=1.0"]["cct"] == pytest.approx(1.0, abs=1e-12)
    assert res["coflex α=1.0"]["ig"] >= res["coflex α=0.0"]["ig"] - 1e-12
    assert len(seen) == 2 * 4


def test_frontier_needs_alpha_one():
    with pytest.raises(ValueError, match=r"include 1\.0"):
        frontier([uniform(3, 3, seed=0)], alphas=[0.5], points=[])


def test_main_draws_the_figure(tmp_path, capsys):
    out = tmp_path / "f.png"
    main(["--generator", "uniform", "--coflows", "5", "--ports", "3", "--seeds", "0:1",
          "--alphas", "0,1", "--points", "fair", "-o", str(out)])  # fmt: skip
    assert out.stat().st_size > 1000
    text = capsys.readouterr().out
    assert "coflex α=0.0" in text and "fair" in text
