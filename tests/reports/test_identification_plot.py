"""The CCT-against-identification-error sweep (reports/identification_plot.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import coflowlab as cl
from coflowlab.heuristics import make_policy
from coflowlab.heuristics.coda import Coda, identification_accuracy
from coflowlab.instances import fb_like, spread_flow_starts
from coflowlab.reports.identification_plot import main, sweep


def test_sweep_rows_match_direct_runs() -> None:
    inst = fb_like(8, num_ports=10, seed=0)
    rows = sweep([inst], [0.0, 400.0], arrival_scale=0.5)
    assert [r["spread"] for r in rows] == [0.0, 400.0]
    # the 400 ms row recomputed by hand from its own simulations
    spread = spread_flow_starts(inst, 400.0, arrival_scale=0.5, seed=0)
    coda = Coda()
    c = float(np.mean(cl.simulate(spread, coda, record=False).cct))
    acc = identification_accuracy(spread, coda.groups)
    aalo = float(np.mean(cl.simulate(spread, make_policy("aalo", spread), record=False).cct))
    assert rows[1]["precision"] == pytest.approx(acc.precision)
    assert rows[1]["recall"] == pytest.approx(acc.recall)
    assert rows[1]["coda"] == pytest.approx(c / aalo)
    # all flows of a coflow start together: every coflow is found whole (recall 1)
    assert rows[0]["recall"] == 1.0


def test_main_writes_the_figure(tmp_path: Path) -> None:
    out = tmp_path / "ident.png"
    main(
        ["--coflows", "5", "--ports", "10", "--seeds", "0:1", "--spreads", "0,200", "-o", str(out)]
    )
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
